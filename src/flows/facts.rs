//! Application facts read from the first bytes of a flow the table already
//! keeps: an HTTP/1.x request line and `Host` header (client stream) and the
//! response's status code (the first bytes of the server stream), a TLS
//! ClientHello's SNI and ALPN list (client stream), and a DNS message's first
//! question and response code (port 53 or 5353: the first datagram each way
//! over UDP, the first message each way over TCP). Pure functions over at most [`super::CARRIER_PREFIX`] bytes (a UDP
//! datagram: what the capture kept of it); hostile input gives `None` or
//! less, never a panic, and nothing is allocated by a length read from it:
//! every length is checked against the bytes at hand, every text is cut to a
//! bound. Text read here is untrusted: bytes outside printable ASCII, and
//! `\`, are written `\xHH`, so it reaches a terminal or a cell as plain text.

/// Most bytes of an HTTP request target kept (the rest is cut).
pub const TARGET_BOUND: usize = 128;
/// Most bytes of a name kept (Host, SNI, DNS name: 253 in DNS, 255 on the wire).
pub const NAME_BOUND: usize = 255;
/// Most ALPN protocols kept, and bytes of each.
pub const ALPN_BOUND: usize = 8;
pub const ALPN_ID_BOUND: usize = 32;

/// The application protocol recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppProto {
    Http,
    Tls,
    Dns,
}

/// A text field of [`AppFacts`], kept as the raw bytes read (bounded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// HTTP request method, target (at most [`TARGET_BOUND`] bytes), `Host`.
    Method,
    Target,
    Host,
    /// TLS ClientHello: the first `host_name` of `server_name`.
    Sni,
    /// One ALPN protocol offered (several, in order; at most [`ALPN_BOUND`]).
    Alpn,
    /// DNS: the first question's name, as its labels on the wire (each a
    /// length byte and its bytes, no root label).
    Qname,
}

/// Bytes of text fields kept in the summary itself (the usual `GET /path` and
/// `Host`, an SNI, a name): a flow's facts are then one allocation.
const INLINE: usize = 46;

/// The text fields, each `[field][length][bytes]`: inline while short, else
/// all of them on the heap.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Text {
    len: u8,
    inline: [u8; INLINE],
    heap: Option<Box<[u8]>>,
}

impl Text {
    fn bytes(&self) -> &[u8] {
        match &self.heap {
            Some(h) => h,
            None => &self.inline[..usize::from(self.len)],
        }
    }

    fn push(&mut self, field: Field, raw: &[u8]) {
        let raw = &raw[..raw.len().min(255)];
        let entry = [&[field as u8, raw.len() as u8][..], raw];
        let len = usize::from(self.len) + 2 + raw.len();
        if self.heap.is_none() && len <= INLINE {
            let at = usize::from(self.len);
            self.inline[at..at + 2].copy_from_slice(entry[0]);
            self.inline[at + 2..len].copy_from_slice(raw);
            self.len = len as u8;
        } else {
            let mut all = Vec::with_capacity(self.bytes().len() + 2 + raw.len());
            all.extend_from_slice(self.bytes());
            entry.iter().for_each(|e| all.extend_from_slice(e));
            self.heap = Some(all.into_boxed_slice());
        }
    }

    /// Every `(field, bytes)` in the order pushed.
    fn entries(&self) -> impl Iterator<Item = (u8, &[u8])> {
        let b = self.bytes();
        let mut at = 0;
        std::iter::from_fn(move || {
            let (&tag, &len) = (b.get(at)?, b.get(at + 1)?);
            let raw = b.get(at + 2..at + 2 + usize::from(len))?;
            at += 2 + usize::from(len);
            Some((tag, raw))
        })
    }
}

/// What the first bytes of a flow say about its application (boxed in a
/// flow: most flows have none). Text is kept as the bytes read, bounded;
/// [`AppFacts::text`] escapes it when a report asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppFacts {
    pub proto: AppProto,
    /// HTTP: the response's status code.
    pub status: Option<u16>,
    /// DNS: the first question's type, and the response code (the header's 4 bits).
    pub qtype: Option<u16>,
    pub rcode: Option<u8>,
    text: Text,
    /// The fields set, a bit each (`1 << field`): a field set once is
    /// known without walking the text.
    has: u8,
}

impl AppFacts {
    pub fn new(proto: AppProto) -> AppFacts {
        AppFacts {
            proto,
            status: None,
            qtype: None,
            rcode: None,
            text: Text { len: 0, inline: [0; INLINE], heap: None },
            has: 0,
        }
    }

    /// Sets a text field from the bytes read (a field already set is kept;
    /// [`Field::Alpn`] adds a protocol, at most [`ALPN_BOUND`]).
    pub fn set(&mut self, field: Field, raw: &[u8]) {
        let bound = match field {
            Field::Method => 8,
            Field::Target => TARGET_BOUND,
            Field::Alpn => ALPN_ID_BOUND,
            Field::Host | Field::Sni | Field::Qname => NAME_BOUND,
        };
        let bit = 1u8 << field as u8;
        let room = self.has & bit == 0
            || (field == Field::Alpn
                && self.text.entries().filter(|(t, _)| *t == field as u8).count() < ALPN_BOUND);
        if room {
            self.has |= bit;
            self.text.push(field, &raw[..raw.len().min(bound)]);
        }
    }

    /// The bytes read for `field` (the first ALPN protocol for [`Field::Alpn`]).
    pub fn raw(&self, field: Field) -> Option<&[u8]> {
        if self.has & (1u8 << field as u8) == 0 {
            return None;
        }
        self.text.entries().find(|(t, _)| *t == field as u8).map(|(_, r)| r)
    }

    /// The ALPN protocols offered, as read.
    pub fn alpn_raw(&self) -> impl Iterator<Item = &[u8]> {
        self.text.entries().filter(|(t, _)| *t == Field::Alpn as u8).map(|(_, r)| r)
    }

    /// `field` as report text into `out` (false, nothing written, when
    /// absent): bytes outside printable ASCII and `\\` as `\\xHH`; a DNS
    /// name dotted (a `.` inside a label `\\x2e`; the root `.`), a `,` inside
    /// an ALPN protocol `\\x2c`.
    pub fn text_into(&self, field: Field, out: &mut String) -> bool {
        let Some(raw) = self.raw(field) else { return false };
        if field == Field::Qname {
            qname_text(raw, out);
        } else {
            escape_into(out, raw, if field == Field::Alpn { b"," } else { b"" });
        }
        true
    }

    /// `field` as report text (see [`AppFacts::text_into`]).
    pub fn text(&self, field: Field) -> Option<String> {
        let mut s = String::new();
        self.text_into(field, &mut s).then_some(s)
    }

    /// The ALPN protocols as report text.
    pub fn alpn_text(&self) -> impl Iterator<Item = String> + '_ {
        self.alpn_raw().map(|p| {
            let mut s = String::new();
            escape_into(&mut s, p, b",");
            s
        })
    }

    /// Adds what `other` (the same protocol, e.g. the DNS answer to a query)
    /// knows and this does not.
    pub fn merge(&mut self, other: AppFacts) {
        if other.proto != self.proto {
            return;
        }
        // DNS: an answer to another question (a capture that began between
        // a query and its answer, or TCP answers out of order, RFC 7766 6.2.1.1)
        // says nothing of this one's rcode.
        let differ = |f: Field| matches!((self.raw(f), other.raw(f)), (Some(x), Some(y)) if !x.eq_ignore_ascii_case(y));
        if self.proto == AppProto::Dns
            && (differ(Field::Qname) || matches!((self.qtype, other.qtype), (Some(x), Some(y)) if x != y))
        {
            return;
        }
        self.status = self.status.or(other.status);
        self.qtype = self.qtype.or(other.qtype);
        self.rcode = self.rcode.or(other.rcode);
        let had_alpn = self.alpn_raw().next().is_some();
        for (tag, raw) in other.text.entries() {
            let Some(field) = FIELDS.iter().copied().find(|f| *f as u8 == tag) else { continue };
            if field != Field::Alpn || !had_alpn {
                self.set(field, raw);
            }
        }
    }
}

const FIELDS: [Field; 6] = [Field::Method, Field::Target, Field::Host, Field::Sni, Field::Alpn, Field::Qname];

/// Untrusted bytes as text: printable ASCII but `\\` as it is, any other byte
/// (and those in `also`) as `\\xHH`; at most `bound` bytes of `b` are read.
pub fn escape(b: &[u8], bound: usize, also: &[u8]) -> String {
    let mut s = String::with_capacity(b.len().min(bound));
    escape_into(&mut s, &b[..b.len().min(bound)], also);
    s
}

/// [`escape`] appended to `out`.
pub fn escape_into(out: &mut String, b: &[u8], also: &[u8]) {
    let plain = |c: u8| (0x21..=0x7e).contains(&c) && c != b'\\' && !also.contains(&c);
    // The usual text (a path, a host name) has nothing to escape: copied whole.
    let n = b.iter().position(|&c| !plain(c)).unwrap_or(b.len());
    out.push_str(std::str::from_utf8(&b[..n]).unwrap_or_default());
    for &c in &b[n..] {
        if plain(c) {
            out.push(c as char);
        } else {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\x");
            out.push(HEX[usize::from(c >> 4)] as char);
            out.push(HEX[usize::from(c & 15)] as char);
        }
    }
}

/// The text [`escape`] wrote, as bytes (a `\\xHH` that is not one stays as written).
pub fn unescape(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b.get(i + 2..i + 4).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (b[i], b.get(i + 1), hex) {
            (b'\\', Some(b'x'), Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Wire labels → `a.example` (escaped; `.` for the root).
fn qname_text(mut wire: &[u8], out: &mut String) {
    let start = out.len();
    while let Some((&len, rest)) = wire.split_first() {
        let label = &rest[..rest.len().min(usize::from(len))];
        if out.len() > start {
            out.push('.');
        }
        escape_into(out, label, b".");
        wire = &rest[label.len()..];
    }
    if out.len() == start {
        out.push('.');
    }
}

/// `a.example` as report text → its wire labels (for a report read back).
pub fn qname_wire(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    if text == "." {
        return out;
    }
    for label in text.split('.') {
        let raw = unescape(label);
        let raw = &raw[..raw.len().min(63)];
        out.push(raw.len() as u8);
        out.extend_from_slice(raw);
    }
    out
}

// ---- HTTP ----

/// An HTTP/1.x request at the start of `head`: method, target, `Host`.
pub fn http_request(head: &[u8]) -> Option<AppFacts> {
    let end = newline(head)?;
    let (method, target) = request_line(&head[..end])?;
    let mut facts = RequestFacts::start(method, target);
    // Headers up to the blank line (or the end of what is known); a line
    // cut by the end of the bytes is not read.
    let mut at = end + 1;
    while let Some(nl) = head.get(at..).and_then(newline) {
        let line = &head[at..at + nl];
        at += nl + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() || !facts.header(line) {
            break;
        }
    }
    Some(facts.finish())
}

/// A request's facts read line by line: what [`http_request`] and the
/// carriers' pass over a head (which reads the lines once for both) share.
pub(super) struct RequestFacts {
    app: AppFacts,
    want_host: bool,
}

impl RequestFacts {
    /// From the request line's method and target (a line read whole).
    pub(super) fn start(method: &[u8], target: &[u8]) -> RequestFacts {
        let mut app = AppFacts::new(AppProto::Http);
        app.set(Field::Method, method);
        app.set(Field::Target, target);
        RequestFacts { app, want_host: true }
    }

    /// One header line read whole, without its line end; false once the
    /// facts want no more lines (the first `Host:` line was read, even empty).
    pub(super) fn header(&mut self, line: &[u8]) -> bool {
        if self.want_host && line.len() > 5 && line[..5].eq_ignore_ascii_case(b"host:") {
            let v = trim(&line[5..]);
            if !v.is_empty() {
                self.app.set(Field::Host, v);
            }
            self.want_host = false;
        }
        self.want_host
    }

    pub(super) fn finish(self) -> AppFacts {
        self.app
    }
}

/// An HTTP/1.x request line (`METHOD SP target SP HTTP/1.x`, a CR at its
/// end or not): its method and target.
pub fn request_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let n = line.iter().take(8).take_while(|b| b.is_ascii_uppercase()).count();
    if !(3..=7).contains(&n) || line.get(n) != Some(&b' ') || line.len() < n + 10 {
        return None;
    }
    let (method, rest) = (&line[..n], &line[n + 1..]);
    let version = &rest[rest.len() - 9..];
    if !version.starts_with(b" HTTP/1.") || !version[8].is_ascii_digit() {
        return None;
    }
    let target = &rest[..rest.len() - 9];
    (!target.is_empty() && !target.contains(&b' ')).then_some((method, target))
}

/// The status code of an HTTP/1.x response at the start of a server stream
/// (`HTTP/1.1 200 OK`): three digits, 100 to 999.
pub fn http_status(head: &[u8]) -> Option<u16> {
    let h = head.get(..13)?;
    if !h.starts_with(b"HTTP/1.") || !h[7].is_ascii_digit() || h[8] != b' ' {
        return None;
    }
    let d = &h[9..12];
    if !d.iter().all(u8::is_ascii_digit) || !matches!(h[12], b' ' | b'\r' | b'\n') {
        return None;
    }
    let code = d.iter().fold(0u16, |n, &c| n * 10 + u16::from(c - b'0'));
    (code >= 100).then_some(code)
}

/// The first line feed in `b`: eight bytes a step (a `\n` makes `x = word
/// ^ 0x0a..` hold a zero byte; `(x - 0x01..) & !x & 0x80..` flags it, and
/// its lowest flag is exact), memchr's SIMD search past the first 64 bytes.
/// A header line is a few dozen bytes: a word test costs less there than
/// memchr's setup, which the heads' parsers paid on every line.
#[inline]
pub(super) fn newline(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    while let Some(w) = b.get(at..at + 8) {
        if at == 64 {
            return memchr::memchr(b'\n', &b[at..]).map(|i| at + i);
        }
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]) ^ (ONES * 0x0a);
        let zero = x.wrapping_sub(ONES) & !x & HIGH;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    b[at..].iter().position(|&c| c == b'\n').map(|i| at + i)
}

/// `b` without the optional whitespace (SP, HTAB) around a header value.
pub(super) fn trim(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !matches!(c, b' ' | b'\t')).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !matches!(c, b' ' | b'\t')).map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

// ---- TLS ----

/// True when `head` may begin a TLS handshake record holding a ClientHello
/// (content type 22, version 3.x, and where known handshake type 1).
pub fn may_be_client_hello(head: &[u8]) -> bool {
    head.first() == Some(&0x16)
        && head.get(1).is_none_or(|&v| v == 3)
        && head.get(2).is_none_or(|&v| v <= 4)
        && head.get(5).is_none_or(|&t| t == 1)
}

/// Bytes of the first TLS record (header included), once its header is known.
pub fn tls_record_end(head: &[u8]) -> Option<usize> {
    let h = head.get(..5)?;
    Some(5 + usize::from(u16::from_be_bytes([h[3], h[4]])))
}

/// Reads big-endian fields off a slice; every read is bounds-checked.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(b: &'a [u8]) -> Cursor<'a> {
        Cursor { b, at: 0 }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|s| u16::from_be_bytes([s[0], s[1]]))
    }
    /// A vector with a `width`-byte length (1 or 2).
    fn vec(&mut self, width: usize) -> Option<&'a [u8]> {
        let len = if width == 1 { usize::from(self.u8()?) } else { usize::from(self.u16()?) };
        self.take(len)
    }
    fn rest(&self) -> &'a [u8] {
        self.b.get(self.at..).unwrap_or_default()
    }
}

/// SNI and ALPN of a TLS ClientHello at the start of `head` (the first record
/// only, as far as `head` holds it). An extension cut by the end of the bytes
/// is not read: what lies past them is not guessed.
pub fn client_hello(head: &[u8]) -> Option<AppFacts> {
    if !may_be_client_hello(head) || head.len() < 9 {
        return None;
    }
    let record = &head[..head.len().min(tls_record_end(head)?)];
    let mut c = Cursor::new(&record[5..]);
    if c.u8()? != 1 {
        return None;
    }
    let len = c.take(3)?;
    let hello_len = (usize::from(len[0]) << 16) | (usize::from(len[1]) << 8) | usize::from(len[2]);
    let body = c.rest();
    let mut c = Cursor::new(&body[..body.len().min(hello_len)]);
    let mut facts = AppFacts::new(AppProto::Tls);
    // A hello that parses this far is a ClientHello: say so even when the
    // extensions were not kept.
    let fixed = (|| {
        c.take(2 + 32)?; // legacy_version, random
        c.vec(1)?; // legacy_session_id
        c.vec(2)?; // cipher_suites
        c.vec(1)?; // legacy_compression_methods
        c.u16() // the extensions' length: each extension is checked on its own
    })();
    if fixed.is_none() {
        return Some(facts);
    }
    while let (Some(ty), Some(data)) = (c.u16(), c.vec(2)) {
        match ty {
            0 => {
                if let Some(name) = sni(data) {
                    facts.set(Field::Sni, name);
                }
            }
            16 => alpn(data, &mut facts),
            _ => {}
        }
    }
    Some(facts)
}

/// The first `host_name` of a `server_name` extension.
fn sni(data: &[u8]) -> Option<&[u8]> {
    let mut c = Cursor::new(data);
    let mut list = Cursor::new(c.vec(2)?);
    while let Some(kind) = list.u8() {
        let name = list.vec(2)?;
        if kind == 0 && !name.is_empty() {
            return Some(name);
        }
    }
    None
}

/// The protocols of an ALPN extension, at most [`ALPN_BOUND`].
fn alpn(data: &[u8], facts: &mut AppFacts) {
    let mut c = Cursor::new(data);
    let Some(list) = c.vec(2) else { return };
    let mut list = Cursor::new(list);
    while let Some(p) = list.vec(1) {
        facts.set(Field::Alpn, p);
    }
}

// ---- DNS ----

/// True for a flow (UDP, or TCP) whose server (or client) port is DNS's or mDNS's.
pub fn dns_port(a: u16, b: u16) -> bool {
    matches!(a, 53 | 5353) || matches!(b, 53 | 5353)
}

/// DNS over TCP (RFC 1035 4.2.2: each message after its 2-byte length): the
/// stream's first message where a segment at stream offset `off` begins it —
/// after the length when the segment holds both (offset 0, a length of at
/// least a header's 12 bytes), the segment itself when the length came alone
/// (offset 2). Later messages (pipelined queries) are not read.
pub fn dns_tcp_message(off: u32, payload: &[u8]) -> Option<&[u8]> {
    match (off, payload) {
        (0, [hi, lo, msg @ ..]) if u16::from_be_bytes([*hi, *lo]) >= 12 && !msg.is_empty() => Some(msg),
        (2, msg) if !msg.is_empty() => Some(msg),
        _ => None,
    }
}

/// DNS over TCP on a DNS port: what the segment at stream offset `off` of
/// either direction adds to a flow's facts ([`dns_tcp_message`], [`add_dns`]).
pub(super) fn add_dns_tcp(app: &mut Option<Box<AppFacts>>, ports: (u16, u16), off: u32, payload: &[u8]) {
    if off <= 2 && dns_port(ports.0, ports.1) {
        if let Some(msg) = dns_tcp_message(off, payload) {
            add_dns(app, msg);
        }
    }
}

/// Adds what the DNS message `msg` says to a flow's facts (the query's
/// question, the answer's response code: whichever comes first sets them).
pub(super) fn add_dns(app: &mut Option<Box<AppFacts>>, msg: &[u8]) {
    if let Some(d) = dns(msg) {
        match app {
            Some(a) => a.merge(d),
            None => *app = Some(Box::new(d)),
        }
    }
}

/// The first question (name and type) of a DNS message, and its response code
/// when it is a response (QR set).
pub fn dns(msg: &[u8]) -> Option<AppFacts> {
    let mut c = Cursor::new(msg);
    c.take(2)?; // id
    let flags = c.u16()?;
    let qdcount = c.u16()?;
    c.take(6)?; // an, ns, ar counts
    if (flags >> 11) & 0xf > 2 {
        return None; // an opcode DNS does not use (not QUERY, IQUERY, STATUS): not DNS
    }
    let mut facts = AppFacts::new(AppProto::Dns);
    if flags & 0x8000 != 0 {
        facts.rcode = Some((flags & 0xf) as u8);
    }
    if qdcount > 0 {
        if let Some((wire, end)) = name(msg, c.at) {
            facts.set(Field::Qname, &wire);
            c.at = end;
            facts.qtype = c.u16();
        }
    }
    Some(facts)
}

/// The name at `at` of a DNS message as its labels (each a length byte and
/// its bytes, no root label), and where it ends. Compression pointers are
/// followed backwards only (each to before the last), so a loop cannot be
/// made; at most [`NAME_BOUND`] bytes of labels are read.
fn name(msg: &[u8], mut at: usize) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut end = None;
    let mut floor = at;
    loop {
        let len = *msg.get(at)?;
        match len >> 6 {
            0 if len == 0 => return Some((out, end.unwrap_or(at + 1))),
            0 => {
                let label = msg.get(at..at + 1 + usize::from(len))?;
                if out.len() + label.len() > NAME_BOUND {
                    return None;
                }
                out.extend_from_slice(label);
                at += label.len();
            }
            3 => {
                let lo = *msg.get(at + 1)?;
                let to = (usize::from(len & 0x3f) << 8) | usize::from(lo);
                if to >= floor {
                    return None; // forwards or to itself: a loop, or not DNS
                }
                end.get_or_insert(at + 2);
                floor = to;
                at = to;
            }
            _ => return None, // extended label types (RFC 6891 obsoleted them)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(h: &str) -> Vec<u8> {
        (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect()
    }

    /// A real ClientHello: `openssl s_client -connect 127.0.0.1:8443 -servername
    /// app.example -alpn h2,http/1.1` (OpenSSL 3.0.19) into `openssl s_server`,
    /// captured with tcpdump on lo; tshark reads SNI `app.example`, ALPN `h2,http/1.1`.
    const HELLO: &str = concat!(
        "160301014a010001460303d790eed2a317135d162c37d7bcad7519ea84fb5281b194cade1af323d4f69b69203cc07c17",
        "24050712e8c85b634e6b45c3ca7a69695b438f49ac62429d6cca26bc003e130213031301c02cc030009fcca9cca8ccaa",
        "c02bc02f009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff010000bf",
        "00000010000e00000b6170702e6578616d706c65000b000403000102000a00160014001d0017001e0019001801000101",
        "010201030104002300000010000e000c02683208687474702f312e310016000000170000000d002a0028040305030603",
        "080708080809080a080b080408050806040105010601030303010302040205020602002b000908030403030302030100",
        "2d00020101003300260024001d002071c7a19eaae8a97a82ad19d76a012920e9de949530fd69f6481a05608bae2b23",
    );

    /// curl 7.88.1's request to `python3 -m http.server` (captured on lo), and
    /// the first segment of its answer.
    const REQUEST: &[u8] =
        b"GET /nothing-here?q=1 HTTP/1.1\r\nHost: app.example\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n";
    const RESPONSE: &[u8] = b"HTTP/1.0 404 File not found\r\nServer: SimpleHTTP/0.6 Python/3.11.2\r\n";

    /// A query as dig sends it (RD, AD, an EDNS OPT record) for
    /// `nx.app.example A`, and its NXDOMAIN answer with an SOA whose names are
    /// compression pointers; tshark reads `nx.app.example`, type 1, rcode 3
    /// and the SOA names `app.example`, `hostmaster.app.example`.
    const DNS_QUERY: &str =
        "1a2b01200001000000000001026e7803617070076578616d706c6500000100010000291000000000000000";
    const DNS_NXDOMAIN: &str = concat!(
        "1a2b81830001000000010000026e7803617070076578616d706c650000010001c00f000600010000012c0023",
        "c00f0a686f73746d6173746572c00f0000000100000e1000000258000151800000012c"
    );

    #[test]
    fn text_fields_are_kept_inline_when_short_and_on_the_heap_when_long() {
        let mut f = AppFacts::new(AppProto::Http);
        f.set(Field::Method, b"GET");
        f.set(Field::Host, b"a.example");
        assert!(f.text.heap.is_none(), "the usual request: one allocation, the facts' own");
        f.set(Field::Host, b"b.example");
        assert_eq!(f.text(Field::Host).as_deref(), Some("a.example"), "a field set once stays");
        let long = [b'/'; 300];
        f.set(Field::Target, &long);
        assert!(f.text.heap.is_some());
        assert_eq!(f.raw(Field::Target).map(<[u8]>::len), Some(TARGET_BOUND), "cut to its bound");
        assert_eq!(
            (f.text(Field::Method).as_deref(), f.text(Field::Host).as_deref()),
            (Some("GET"), Some("a.example"))
        );
        // Merged facts add only what was missing; ALPN lists are not mixed.
        let mut g = AppFacts::new(AppProto::Http);
        g.set(Field::Host, b"other");
        g.status = Some(200);
        f.merge(g);
        assert_eq!((f.text(Field::Host).as_deref(), f.status), (Some("a.example"), Some(200)));
        let mut t = AppFacts::new(AppProto::Tls);
        (0..12).for_each(|i| t.set(Field::Alpn, format!("p{i}").as_bytes()));
        assert_eq!(t.alpn_raw().count(), ALPN_BOUND);
        let mut u = AppFacts::new(AppProto::Tls);
        u.set(Field::Alpn, b"h2");
        u.set(Field::Sni, b"s");
        t.merge(u);
        assert_eq!((t.alpn_raw().count(), t.text(Field::Sni).as_deref()), (ALPN_BOUND, Some("s")));
        // Text read back from a report gives the same bytes.
        assert_eq!(unescape("a\\x20b\\x5c\\xzz"), b"a b\\\\xzz");
        assert_eq!(qname_wire("a\\x2eb.example"), b"\x03a.b\x07example");
        assert_eq!(qname_wire("."), b"");
    }

    #[test]
    fn a_real_client_hello_gives_its_sni_and_alpn() {
        let hello = unhex(HELLO);
        let f = client_hello(&hello).expect("a ClientHello");
        assert_eq!(f.proto, AppProto::Tls);
        assert_eq!(f.text(Field::Sni).as_deref(), Some("app.example"));
        assert_eq!(f.alpn_text().collect::<Vec<_>>(), ["h2", "http/1.1"]);
        assert_eq!((f.raw(Field::Method), f.raw(Field::Host), f.status), (None, None, None));
        assert_eq!(tls_record_end(&hello), Some(hello.len()), "one record, all of it kept");
    }

    #[test]
    fn a_client_hello_cut_anywhere_says_nothing_past_the_cut() {
        let hello = unhex(HELLO);
        for cut in 0..hello.len() {
            let f = client_hello(&hello[..cut]);
            // Never a guess: the whole SNI, or none.
            let sni = f.as_ref().and_then(|f| f.text(Field::Sni));
            let sni = sni.as_deref();
            assert!(sni.is_none() || sni == Some("app.example"), "cut {cut}: {sni:?}");
            for p in f.iter().flat_map(|f| f.alpn_text()) {
                assert!(["h2", "http/1.1"].contains(&p.as_str()), "cut {cut}: {p}");
            }
            if cut >= 9 {
                assert!(f.is_some(), "cut {cut}: still a ClientHello");
            }
        }
        // A record length larger than the bytes, a huge handshake length:
        // read as far as the bytes go, nothing allocated by them.
        let mut big = hello.clone();
        big[3..5].copy_from_slice(&[0xff, 0xff]);
        big[6..9].copy_from_slice(&[0xff, 0xff, 0xff]);
        assert_eq!(client_hello(&big).and_then(|f| f.text(Field::Sni)).as_deref(), Some("app.example"));
        // Not a ClientHello: a ServerHello (type 2), application data, HTTP.
        let mut server = hello.clone();
        server[5] = 2;
        assert_eq!(client_hello(&server), None);
        assert_eq!(client_hello(b"\x17\x03\x03\x00\x10"), None);
        assert_eq!(client_hello(REQUEST), None);
    }

    #[test]
    fn hostile_sni_and_alpn_bytes_are_escaped_and_bounded() {
        // A minimal hello: version, random, no session, one suite, null compression.
        let mut body = vec![3, 3];
        body.extend([0; 32]);
        body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        let mut exts = Vec::new();
        let name = b"evil\x1b[2J\\name";
        let mut sni_ext = vec![0u8];
        sni_ext.extend((name.len() as u16).to_be_bytes());
        sni_ext.extend(name);
        let list = [&(sni_ext.len() as u16).to_be_bytes()[..], &sni_ext].concat();
        exts.extend([0, 0]);
        exts.extend((list.len() as u16).to_be_bytes());
        exts.extend(&list);
        let mut protos = Vec::new();
        for p in [&b"a,b"[..], &[b'x'; 200][..], b"h2", b"3", b"4", b"5", b"6", b"7", b"8", b"9"] {
            protos.push(p.len() as u8);
            protos.extend(p);
        }
        let alpn_list = [&(protos.len() as u16).to_be_bytes()[..], &protos].concat();
        exts.extend([0, 16]);
        exts.extend((alpn_list.len() as u16).to_be_bytes());
        exts.extend(&alpn_list);
        body.extend((exts.len() as u16).to_be_bytes());
        body.extend(&exts);
        let mut hs = vec![1, 0];
        hs.extend((body.len() as u16).to_be_bytes());
        hs.extend(&body);
        let mut rec = vec![0x16, 3, 1];
        rec.extend((hs.len() as u16).to_be_bytes());
        rec.extend(&hs);
        let f = client_hello(&rec).unwrap();
        assert_eq!(f.text(Field::Sni).as_deref(), Some("evil\\x1b[2J\\x5cname"));
        assert_eq!(f.alpn_text().collect::<Vec<_>>().len(), ALPN_BOUND);
        assert_eq!(f.alpn_text().collect::<Vec<_>>()[0], "a\\x2cb");
        assert_eq!(f.alpn_text().collect::<Vec<_>>()[1], "x".repeat(ALPN_ID_BOUND));
        assert_eq!(f.alpn_text().collect::<Vec<_>>()[2], "h2");
    }

    #[test]
    fn a_real_http_request_and_its_status() {
        let f = http_request(REQUEST).expect("a request");
        assert_eq!(f.proto, AppProto::Http);
        assert_eq!(f.text(Field::Method).as_deref(), Some("GET"));
        assert_eq!(f.text(Field::Target).as_deref(), Some("/nothing-here?q=1"));
        assert_eq!(f.text(Field::Host).as_deref(), Some("app.example"));
        assert_eq!(http_status(RESPONSE), Some(404));
        assert_eq!(http_status(b"HTTP/1.1 200 OK\r\n"), Some(200));
        assert_eq!(http_status(b"HTTP/1.1 204\r\n"), Some(204));
        for bad in [
            &b"HTTP/1.1 20"[..],
            b"HTTP/2 200 OK\r\n",
            b"HTTP/1.1 2x0 OK\r\n",
            b"HTTP/1.1 099 x\r\n",
            b"SSH-2.0-x\r\n",
        ] {
            assert_eq!(http_status(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn an_http_request_is_cut_to_its_bounds_and_escaped() {
        let long = format!("GET /{} HTTP/1.1\r\nhost:  a.example \r\n\r\n", "a".repeat(500));
        let f = http_request(long.as_bytes()).unwrap();
        assert_eq!(f.raw(Field::Target).map(<[u8]>::len), Some(TARGET_BOUND));
        assert_eq!(f.text(Field::Host).as_deref(), Some("a.example"), "any case, blanks trimmed");
        let f = http_request(b"POST /a\xff\x07b HTTP/1.0\r\nHost: =cmd|x\r\n\r\n").unwrap();
        assert_eq!(f.text(Field::Target).as_deref(), Some("/a\\xff\\x07b"));
        assert_eq!(f.text(Field::Host).as_deref(), Some("=cmd|x"), "escaped for terminals; cells defuse it");
        // The Host header after the blank line is the body's, not the request's.
        let f = http_request(b"GET / HTTP/1.1\r\n\r\nHost: body\r\n").unwrap();
        assert_eq!(f.raw(Field::Host), None);
        // Cut before the end of the request line: no request.
        for cut in 0..REQUEST.len() {
            let f = http_request(&REQUEST[..cut]);
            if cut < 32 {
                assert_eq!(f, None, "cut {cut}");
            } else {
                let f = f.unwrap();
                assert_eq!(f.text(Field::Target).as_deref(), Some("/nothing-here?q=1"));
                assert!(
                    f.text(Field::Host).is_none() || f.text(Field::Host).as_deref() == Some("app.example"),
                    "cut {cut}"
                );
            }
        }
        for bad in
            [&b"get / HTTP/1.1\r\n"[..], b"GET / HTTP/2\r\n", b"GET  HTTP/1.1\r\n", b"GET /a b HTTP/1.1\r\n"]
        {
            assert_eq!(http_request(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_dns_query_and_its_nxdomain_answer() {
        let q = dns(&unhex(DNS_QUERY)).expect("a query");
        assert_eq!(
            (q.proto, q.text(Field::Qname).as_deref(), q.qtype, q.rcode),
            (AppProto::Dns, Some("nx.app.example"), Some(1), None)
        );
        let r = dns(&unhex(DNS_NXDOMAIN)).expect("an answer");
        assert_eq!(
            (r.text(Field::Qname).as_deref(), r.qtype, r.rcode),
            (Some("nx.app.example"), Some(1), Some(3))
        );
        let mut both = q.clone();
        both.merge(r);
        assert_eq!(both.rcode, Some(3));
        // The SOA's names are pointers: followed backwards.
        let a = unhex(DNS_NXDOMAIN);
        let text = |at| {
            let mut s = String::new();
            qname_text(&name(&a, at)?.0, &mut s);
            Some(s)
        };
        assert_eq!(text(44).as_deref(), Some("app.example"));
        assert_eq!(text(46).as_deref(), Some("hostmaster.app.example"));
        assert!(dns_port(40000, 53) && dns_port(5353, 5353) && !dns_port(40000, 80));
    }

    #[test]
    fn hostile_dns_names_end_without_a_loop_or_a_panic() {
        let header = |qd: u16| [&[0x12, 0x34, 0x01, 0x00][..], &qd.to_be_bytes(), &[0; 6]].concat();
        // A pointer to itself, a pointer forwards, a pointer cycle, a label past the end.
        let selfloop = [header(1), vec![0xc0, 12, 0, 1, 0, 1]].concat();
        assert_eq!(dns(&selfloop).unwrap().text(Field::Qname), None);
        let forward = [header(1), vec![0xc0, 14, 0, 0, 1, 0, 1]].concat();
        assert_eq!(dns(&forward).unwrap().text(Field::Qname), None);
        let cycle = [header(1), vec![1, b'a', 0xc0, 12, 0, 1, 0, 1]].concat();
        assert_eq!(dns(&cycle).unwrap().text(Field::Qname), None);
        let past = [header(1), vec![40, b'a', b'b']].concat();
        assert_eq!(dns(&past).unwrap().text(Field::Qname), None);
        // Too long (over 255 bytes of labels), escaped labels, the root.
        let mut long = header(1);
        for _ in 0..5 {
            long.push(63);
            long.extend([b'a'; 63]);
        }
        long.push(0);
        assert_eq!(dns(&long).unwrap().text(Field::Qname), None);
        let odd = [header(1), vec![3, b'a', b'.', 0x1b, 0, 0, 16, 0, 1]].concat();
        let f = dns(&odd).unwrap();
        assert_eq!((f.text(Field::Qname).as_deref(), f.qtype), (Some("a\\x2e\\x1b"), Some(16)));
        let root = [header(1), vec![0, 0, 2, 0, 1]].concat();
        assert_eq!(dns(&root).unwrap().text(Field::Qname).as_deref(), Some("."));
        // No question; an unknown opcode; a header cut short.
        assert_eq!(dns(&header(0)).unwrap().text(Field::Qname), None);
        let mut op = header(1);
        op[2] = 0x78;
        assert_eq!(dns(&op), None);
        let real = unhex(DNS_NXDOMAIN);
        for cut in 0..real.len() {
            let f = dns(&real[..cut]);
            assert_eq!(f.is_some(), cut >= 12, "cut {cut}");
            let n = f.and_then(|f| f.text(Field::Qname));
            assert!(n.is_none() || n.as_deref() == Some("nx.app.example"), "cut {cut}: {n:?}");
        }
    }

    #[test]
    fn newline_finds_the_first_line_feed_at_every_place_and_none_where_there_is_none() {
        for len in 0..200 {
            // A line feed's high-bit and borrow neighbours (0x0b, 0x8a, 0x09) around it.
            let mut b: Vec<u8> = (0..len).map(|i| [b'a', 0x0b, 0x8a, 0x09, 0xff, 0][i % 6]).collect();
            assert_eq!(newline(&b), None, "{len}");
            for at in (0..len).rev() {
                b[at] = b'\n';
                assert_eq!(newline(&b), Some(at), "{len} {at}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn newline_finds_what_memchr_finds(
            b in proptest::collection::vec(proptest::prop_oneof![9 => proptest::num::u8::ANY, 1 => proptest::strategy::Just(b'\n')], 0..200),
            from in 0usize..200,
        ) {
            let b = &b[from.min(b.len())..];
            proptest::prop_assert_eq!(newline(b), memchr::memchr(b'\n', b));
        }
    }

    #[test]
    fn a_dns_message_over_tcp_begins_after_its_length_or_where_the_length_ended() {
        let msg = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01a\x00\x00\x01\x00\x01";
        let framed = [&[0, msg.len() as u8][..], msg].concat();
        assert_eq!(dns_tcp_message(0, &framed), Some(&msg[..]), "length and message in one segment");
        assert_eq!(dns_tcp_message(0, &framed[..2]), None, "the length alone");
        assert_eq!(dns_tcp_message(2, msg), Some(&msg[..]), "the message after a length sent alone");
        assert_eq!(dns_tcp_message(2, b""), None);
        // A length shorter than a header is no DNS message; 12 is the least.
        assert_eq!(dns_tcp_message(0, &[0, 11, 1, 2, 3]), None);
        assert_eq!(dns_tcp_message(0, &[0, 12, 1, 2, 3]), Some(&[1, 2, 3][..]));
        assert_eq!(dns_tcp_message(0, &[1, 0, 1]), Some(&[1][..]), "a length's high byte counts");
        for off in [1, 3, 4, framed.len() as u32, 1 << 20] {
            assert_eq!(dns_tcp_message(off, &framed), None, "offset {off}: not a first message's start");
        }
        let mut app = None;
        add_dns(&mut app, dns_tcp_message(0, &framed).unwrap());
        let answer = [&msg[..2], b"\x81\x83", &msg[4..]].concat();
        add_dns(&mut app, &answer);
        let app = app.expect("facts");
        assert_eq!((app.text(Field::Qname).as_deref(), app.qtype, app.rcode), (Some("a"), Some(1), Some(3)));
    }

    #[test]
    fn an_answer_to_another_question_gives_no_rcode() {
        let q = |name: &[u8], qtype: u8| {
            [
                &b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01"[..],
                name,
                b"\x00\x00",
                &[qtype],
                b"\x00\x01",
            ]
            .concat()
        };
        let answer = |m: &[u8]| [&m[..2], b"\x81\x83", &m[4..]].concat();
        let rcode = |query: &[u8], ans: &[u8]| {
            let mut app = None;
            add_dns(&mut app, query);
            add_dns(&mut app, ans);
            app.and_then(|a| a.rcode)
        };
        assert_eq!(rcode(&q(b"a", 1), &answer(&q(b"a", 1))), Some(3));
        assert_eq!(rcode(&q(b"a", 1), &answer(&q(b"A", 1))), Some(3), "names in any case");
        assert_eq!(rcode(&q(b"a", 1), &answer(&q(b"b", 1))), None, "another name");
        assert_eq!(rcode(&q(b"a", 1), &answer(&q(b"a", 15))), None, "another type");
    }

    #[test]
    fn escape_keeps_printable_ascii_and_writes_the_rest_as_hex() {
        assert_eq!(escape(b"/a?b=1", 128, &[]), "/a?b=1");
        assert_eq!(escape(b"a b\\c\x1b[31m\xff", 128, &[]), "a\\x20b\\x5cc\\x1b[31m\\xff");
        assert_eq!(escape(b"h2,x", 128, b","), "h2\\x2cx");
        assert_eq!(escape(b"abcdef", 3, &[]), "abc");
    }
}
