//! Identity carriers and request ids at the start of a client stream: a PROXY
//! protocol v1 line or v2 header, and in a plaintext HTTP/1.x request the
//! `Forwarded` (RFC 7239), `X-Forwarded-For`, `X-Real-IP`, `X-Request-ID`,
//! `X-Correlation-ID` and `traceparent` headers. Pure functions over the first
//! bytes of a stream (at most [`CARRIER_PREFIX`]); hostile input gives `None`
//! or less, never a panic, and nothing is allocated by a length read from it.

use super::exchange::{Head, HeadLines};
use super::facts::{self, AppFacts};
use super::fingerprint::{Fingerprint, StreamPrefix, PREFIX_LENGTHS};
use std::net::IpAddr;

/// Most bytes of a client stream kept and parsed for carriers.
pub const CARRIER_PREFIX: usize = 1024;

/// Kind of a carrier of the client's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CarrierKind {
    ProxyV1,
    ProxyV2,
    Forwarded,
    XForwardedFor,
    XRealIp,
}

/// A client address carried in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Carried {
    pub kind: CarrierKind,
    /// None: present, but `unknown`, obfuscated (`_hidden`) or not an address
    /// (PROXY `UNKNOWN`, v2 `LOCAL`).
    pub addr: Option<IpAddr>,
    pub port: Option<u16>,
    /// Several elements (`X-Forwarded-For: a, b`, `Forwarded: for=a, for=b`):
    /// the first one (set nearest the client); `addr` is the last one, the
    /// element the nearest proxy added.
    pub first: Option<IpAddr>,
    /// Number of elements (1 for PROXY and `X-Real-IP`).
    pub elements: u16,
}

/// Kind of a request-id header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestIdKind {
    XRequestId,
    XCorrelationId,
    /// W3C `traceparent`: only its trace-id counts (each hop may change the parent id).
    TraceParent,
}

/// A request id: its header and a hash of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RequestId {
    pub kind: RequestIdKind,
    pub hash: u64,
}

/// What the first bytes of a client stream carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Carriers {
    /// PROXY protocol header (v1 or v2), at the very start.
    pub proxy: Option<Carried>,
    /// HTTP headers, in the order `Forwarded`, `X-Forwarded-For`, `X-Real-IP`.
    pub headers: Vec<Carried>,
    pub request_id: Option<RequestId>,
    /// With a PROXY header: the fingerprint of the stream after it (what the
    /// proxy forwarded), so the flow compares with the client's own stream.
    pub payload_fp: Option<Fingerprint>,
}

impl Carriers {
    pub fn is_empty(&self) -> bool {
        self.proxy.is_none() && self.headers.is_empty() && self.request_id.is_none()
    }

    /// The carrier a backend reads first: PROXY (connection level), then
    /// `Forwarded`, `X-Forwarded-For`, `X-Real-IP`.
    pub fn main(&self) -> Option<&Carried> {
        self.proxy.as_ref().or(self.headers.first())
    }

    /// The carrier of `kind`, if present.
    pub fn of(&self, kind: CarrierKind) -> Option<&Carried> {
        self.proxy.iter().chain(&self.headers).find(|c| c.kind == kind)
    }
}

/// True when a stream starting with `head` may hold a carrier (PROXY or an
/// HTTP/1.x request): worth keeping more of its first bytes.
pub fn may_carry(head: &[u8]) -> bool {
    let n = head.len().min(12);
    if head.starts_with(b"PROXY ") || (n > 0 && head[..n] == V2_SIGNATURE[..n]) {
        return true;
    }
    // An HTTP method: 3-7 upper-case letters then a space.
    let n = head.iter().take(8).take_while(|b| b.is_ascii_uppercase()).count();
    (3..=7).contains(&n) && head.get(n) == Some(&b' ')
}

/// Parses the first bytes of a client stream.
pub fn parse(head: &[u8]) -> Carriers {
    parse_with_proxy_len(head).0
}

/// [`parse`], how many bytes of `head` a PROXY header took (0 without one),
/// the application facts, and the HTTP head read whole at the start of
/// `head` (none after a PROXY header).
fn parse_with_proxy_len(head: &[u8]) -> (Carriers, usize, Option<AppFacts>, Option<Head<'_>>) {
    let head = &head[..head.len().min(CARRIER_PREFIX)];
    let mut out = Carriers::default();
    let mut used = 0;
    if let Some((c, n)) = proxy_v1(head).or_else(|| proxy_v2(head)) {
        out.proxy = Some(c);
        used = n;
    }
    let (app, read) = http(&head[used..], &mut out);
    (out, used, app, read.filter(|_| used == 0))
}

const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// A PROXY v1 line: the carrier and the bytes it took (with its CRLF).
pub fn proxy_v1(head: &[u8]) -> Option<(Carried, usize)> {
    if !head.starts_with(b"PROXY ") {
        return None;
    }
    // At most 107 bytes with the CRLF (the spec's limit).
    let window = &head[..head.len().min(107)];
    let end = window.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&window[6..end]).ok()?;
    let mut f = line.split(' ');
    let fam = f.next()?;
    let carried = |addr, port| Carried { kind: CarrierKind::ProxyV1, addr, port, first: None, elements: 1 };
    if fam == "UNKNOWN" {
        return Some((carried(None, None), end + 2));
    }
    let (src, dst, sport, dport) = (f.next()?, f.next()?, f.next()?, f.next()?);
    if f.next().is_some() {
        return None;
    }
    let src: IpAddr = src.parse().ok()?;
    let _dst: IpAddr = dst.parse().ok()?;
    let _dport: u16 = dport.parse().ok()?;
    match (fam, src) {
        ("TCP4", IpAddr::V4(_)) | ("TCP6", IpAddr::V6(_)) => {}
        _ => return None,
    }
    Some((carried(Some(src), Some(sport.parse().ok()?)), end + 2))
}

/// A PROXY v2 header: the carrier and the bytes it took (TLVs included).
pub fn proxy_v2(head: &[u8]) -> Option<(Carried, usize)> {
    if head.len() < 16 || head[..12] != V2_SIGNATURE {
        return None;
    }
    let (ver_cmd, fam) = (head[12], head[13]);
    if ver_cmd >> 4 != 2 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([head[14], head[15]]));
    let body = head.get(16..16 + len)?;
    let carried = |addr, port| Carried { kind: CarrierKind::ProxyV2, addr, port, first: None, elements: 1 };
    let c = match (ver_cmd & 0x0f, fam >> 4) {
        (0, _) => carried(None, None), // LOCAL: the proxy's own connection
        (1, 1) => {
            let b: &[u8; 12] = body.get(..12)?.try_into().ok()?;
            let src = IpAddr::from([b[0], b[1], b[2], b[3]]);
            carried(Some(src), Some(u16::from_be_bytes([b[8], b[9]])))
        }
        (1, 2) => {
            let b = body.get(..36)?;
            let src: [u8; 16] = b[..16].try_into().ok()?;
            carried(Some(IpAddr::from(src)), Some(u16::from_be_bytes([b[32], b[33]])))
        }
        (1, _) => carried(None, None), // AF_UNSPEC / AF_UNIX
        _ => return None,
    };
    Some((c, 16 + len))
}

/// Headers of an HTTP/1.x request at the start of `head` (request line, then
/// headers up to the blank line or the end of what is known), and in the same
/// pass its application facts: what [`facts::http_request`] reads (a unit
/// test holds the two equal), without reading the head a second time; and
/// the head as [`HeadLines`] reads it, when read whole (the exchanges'
/// reader takes it instead of reading it again).
fn http<'a>(head: &'a [u8], out: &mut Carriers) -> (Option<AppFacts>, Option<Head<'a>>) {
    let mut at = 0;
    // Each line, whether its line feed was seen (a line cut by the end of the
    // bytes is read for carriers, not for facts), and where it ends.
    let mut lines = std::iter::from_fn(|| {
        let rest = head.get(at..).filter(|r| !r.is_empty())?;
        let (end, whole) = facts::newline(rest).map_or((rest.len(), false), |e| (e, true));
        at += end + 1;
        Some((&rest[..end], whole, at))
    });
    let Some((first, first_whole, first_end)) = lines.next() else { return (None, None) };
    let Some((method, target)) = facts::request_line(first) else { return (None, None) };
    // The facts read the lines read whole, until they want no more.
    let mut app = first_whole.then(|| facts::RequestFacts::start(method, target));
    let mut want = app.is_some();
    let mut head_lines = first_whole.then(|| HeadLines::start(&head[..first_end], Some((method, target))));
    let mut read = None;
    let mut fields: [Option<Carried>; 3] = [None, None, None];
    for (line, whole, end) in lines {
        if let Some(h) = head_lines.as_mut().filter(|_| whole) {
            read = h.line(line, end);
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            break;
        }
        if let (true, true, Some(app)) = (want, whole, app.as_mut()) {
            want = app.header(line);
        }
        // Every name looked for starts with f, t or x: other lines are skipped unread.
        if !matches!(line.first(), Some(b'f' | b'F' | b't' | b'T' | b'x' | b'X')) {
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        // Only these lengths can name a carrier or a request id (forwarded,
        // x-real-ip; traceparent; x-request-id; x-forwarded-for; x-correlation-id).
        if !matches!(colon, 9 | 11 | 12 | 15 | 16) {
            continue;
        }
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        let Ok(value) = std::str::from_utf8(value) else { continue };
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if is("forwarded") {
            merge(&mut fields[0], forwarded(value));
        } else if is("x-forwarded-for") {
            merge(&mut fields[1], list(CarrierKind::XForwardedFor, value.split(',')));
        } else if is("x-real-ip") {
            fields[2].get_or_insert(list(CarrierKind::XRealIp, std::iter::once(value)));
        } else if out.request_id.is_none() {
            out.request_id = request_id(&is, value);
        }
    }
    out.headers.extend(fields.into_iter().flatten());
    (app.map(facts::RequestFacts::finish), read)
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !c.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

/// A header repeated: its elements continue the first one's list.
fn merge(slot: &mut Option<Carried>, next: Carried) {
    match slot {
        None => *slot = Some(next),
        Some(c) => {
            c.elements = c.elements.saturating_add(next.elements);
            (c.addr, c.port) = (next.addr, next.port);
        }
    }
}

/// A list of node names (`X-Forwarded-For`, `Forwarded` for= values): first and last.
fn list<'a>(kind: CarrierKind, items: impl Iterator<Item = &'a str>) -> Carried {
    let mut c = Carried { kind, addr: None, port: None, first: None, elements: 0 };
    for (i, item) in items.enumerate() {
        let (addr, port) = node(item.trim());
        if i == 0 {
            c.first = addr;
        }
        (c.addr, c.port) = (addr, port);
        c.elements = c.elements.saturating_add(1);
    }
    c
}

/// `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::1]:443"`: its for= values.
fn forwarded(value: &str) -> Carried {
    let fors = value.split(',').filter_map(|element| {
        element.split(';').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            k.trim().eq_ignore_ascii_case("for").then_some(v)
        })
    });
    list(CarrierKind::Forwarded, fors)
}

/// A node: `1.2.3.4`, `1.2.3.4:80`, `2001:db8::1`, `[2001:db8::1]:443`, quoted
/// or not; `unknown` and `_obfuscated` give no address.
fn node(text: &str) -> (Option<IpAddr>, Option<u16>) {
    let t = text.trim().trim_matches('"');
    if let Ok(a) = t.parse::<IpAddr>() {
        return (Some(a), None);
    }
    if let Ok(sa) = t.parse::<std::net::SocketAddr>() {
        return (Some(sa.ip()), Some(sa.port()));
    }
    // `[v6]` without a port, or `[v6]:_obf`.
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
        if let Ok(a) = inner.parse::<std::net::Ipv6Addr>() {
            return (Some(IpAddr::V6(a)), None);
        }
    }
    // `v4:_obf`
    if let Some((a, _)) = t.split_once(':') {
        if let Ok(a) = a.parse::<std::net::Ipv4Addr>() {
            return (Some(IpAddr::V4(a)), None);
        }
    }
    (None, None)
}

fn request_id(is: &dyn Fn(&str) -> bool, value: &str) -> Option<RequestId> {
    let (kind, v) = if is("x-request-id") {
        (RequestIdKind::XRequestId, value)
    } else if is("x-correlation-id") {
        (RequestIdKind::XCorrelationId, value)
    } else if is("traceparent") {
        // version-traceid-parentid-flags: the trace id (32 hex digits).
        let trace = value.split('-').nth(1)?;
        (RequestIdKind::TraceParent, trace)
    } else {
        return None;
    };
    // Too short to tell requests apart: no evidence.
    (v.len() >= 8 && !v.bytes().all(|b| b == b'0'))
        .then(|| RequestId { kind, hash: xxhash_rust::xxh3::xxh3_64(v.as_bytes()) })
}

/// The blank line that ends an HTTP head is known: searched after a PROXY v2
/// header (whose signature starts with a blank line and whose addresses may
/// hold one).
/// Only a blank line ending at or after `new` (where the latest bytes begin) is looked for.
fn headers_end(v: &[u8], new: usize) -> bool {
    let n = v.len().min(V2_SIGNATURE.len());
    let from = if n > 0 && v[..n] == V2_SIGNATURE[..n] {
        if v.len() < 16 {
            return false;
        }
        16 + usize::from(u16::from_be_bytes([v[14], v[15]]))
    } else {
        0
    };
    let from = from.max(new.saturating_sub(3));
    // A request without a body ends with the blank line: no search.
    (v.len() >= from + 4 && v.ends_with(b"\r\n\r\n"))
        || v.get(from..).is_some_and(|rest| memchr::memmem::find(rest, b"\r\n\r\n").is_some())
}

/// The first bytes of a client stream while its flow is built: kept in order
/// while they may hold carriers, parsed (and dropped) once the request's
/// headers are complete or [`CARRIER_PREFIX`] bytes are known.
#[derive(Clone, Debug, Default)]
pub enum StreamHead {
    /// Nothing seen at offset 0 yet.
    #[default]
    Empty,
    /// Starts with something that carries nothing (TLS, SSH, ...).
    Refused,
    Collecting(Vec<u8>),
    /// Parsed: the carriers, and the application facts (an HTTP request
    /// line and `Host`, a TLS ClientHello's SNI and ALPN).
    Done(Option<Box<Carriers>>, Option<Box<AppFacts>>),
}

/// The head of a client stream is complete: all [`CARRIER_PREFIX`] bytes, the
/// whole first record of a TLS handshake, or the blank line ending an HTTP
/// head (only at or after `new`, where the latest bytes begin).
fn head_complete(v: &[u8], new: usize) -> bool {
    if v.len() >= CARRIER_PREFIX {
        return true;
    }
    if facts::may_be_client_hello(v) {
        return facts::tls_record_end(v).is_some_and(|end| v.len() >= end);
    }
    headers_end(v, new)
}

impl StreamHead {
    /// Records `data` found at stream offset `pos`; only bytes that continue
    /// what is known are kept (a gap ends the head). When `data` held a whole
    /// HTTP head at offset 0, parsed where it lies: that head as read
    /// ([`HeadLines`], for the exchanges' reader).
    pub(super) fn add<'a>(&mut self, pos: u64, data: &'a [u8]) -> Option<Head<'a>> {
        match self {
            StreamHead::Empty if pos == 0 && !data.is_empty() => {
                if !may_carry(data) && !facts::may_be_client_hello(data) {
                    *self = StreamHead::Refused;
                } else if head_complete(data, 0) {
                    // The whole head in the first segment (the usual request):
                    // parsed where it lies, nothing kept.
                    let (c, app, read) = Self::parsed(&data[..data.len().min(CARRIER_PREFIX)]);
                    *self = StreamHead::Done(c, app);
                    return read;
                } else {
                    *self = StreamHead::Collecting(Vec::with_capacity(data.len()));
                    self.add(0, data);
                }
            }
            StreamHead::Collecting(v) => {
                let have = v.len() as u64;
                if pos > have {
                    return None;
                }
                let skip = (have - pos) as usize;
                let new = data.get(skip..)?;
                let take = new.len().min(CARRIER_PREFIX - v.len());
                v.extend_from_slice(&new[..take]);
                // Only the new bytes (and the three before them) can complete the blank line.
                if head_complete(v, v.len() - take) {
                    self.finish();
                }
            }
            _ => {}
        }
        None
    }

    /// Parses what is known (a stream that ended early, or the end of the capture).
    pub fn finish(&mut self) {
        if let StreamHead::Collecting(v) = self {
            let (c, app, _) = Self::parsed(v);
            *self = StreamHead::Done(c, app);
        }
    }

    /// The carriers of a complete head (None: it carries nothing), and its
    /// application facts (None: none recognised).
    fn parsed(v: &[u8]) -> (Option<Box<Carriers>>, Option<Box<AppFacts>>, Option<Head<'_>>) {
        // The PROXY header is read once: its length says where the client's own bytes begin.
        let (mut c, n, http, read) = parse_with_proxy_len(v);
        if c.proxy.is_some() {
            let mut rest = StreamPrefix::new(PREFIX_LENGTHS[PREFIX_LENGTHS.len() - 1]);
            rest.add(0, &v[n..]);
            c.payload_fp = Some(rest.fingerprint()).filter(|fp| !fp.is_empty());
        }
        let app = http.or_else(|| facts::client_hello(&v[n..]));
        ((!c.is_empty()).then(|| Box::new(c)), app.map(Box::new), read)
    }

    /// The carriers and application facts found, once finished.
    pub fn take(&mut self) -> (Option<Box<Carriers>>, Option<Box<AppFacts>>) {
        self.finish();
        match std::mem::take(self) {
            StreamHead::Done(c, app) => (c, app),
            _ => (None, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts read in the carriers' pass, and those `facts::http_request`
    /// reads after the PROXY header, for the same bytes.
    fn both(v: &[u8]) -> (Option<AppFacts>, Option<AppFacts>) {
        let (_, n, app, _) = parse_with_proxy_len(v);
        let v = &v[..v.len().min(CARRIER_PREFIX)];
        (app, facts::http_request(&v[n..]))
    }

    #[test]
    fn the_carriers_pass_reads_the_facts_http_request_reads_at_every_cut() {
        let heads: [&[u8]; 9] = [
            b"GET /a HTTP/1.1\r\nHost: one.example\r\nX-Request-ID: abcdef123456\r\n\r\n",
            b"GET /a HTTP/1.1\r\nUser-Agent: x\r\nhOsT:\t two.example \r\nHost: second\r\n\r\n",
            b"POST /b?c=d HTTP/1.0\nhost:\nHost: after-an-empty-one\n\n",
            b"GET / HTTP/1.1\r\nHost-Name: not-host\r\nHost: h\r\n\r\nHost: body\r\n",
            b"GET / HTTP/1.1\r\n\r\nHost: after the head\r\n",
            b"GET / HTTP/1.1\r\nHost:  \r\nX-Forwarded-For: 198.18.0.1\r\n\r\n",
            b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80\r\nGET /p HTTP/1.1\r\nHost: behind.proxy\r\n\r\n",
            b"GET /nohost HTTP/1.1\r\nAccept: */*\r\n",
            b"NOTHTTP / HTTP/1.1\r\nHost: x\r\n\r\n",
        ];
        for head in heads {
            for cut in 0..=head.len() {
                let (ours, theirs) = both(&head[..cut]);
                assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&head[..cut]));
            }
        }
        // Past the prefix the carriers keep: the facts read what they read.
        let mut long = b"GET /long HTTP/1.1\r\n".to_vec();
        long.extend(std::iter::repeat_n(b"X-Pad: 0123456789\r\n".as_slice(), CARRIER_PREFIX / 19).flatten());
        long.extend(b"Host: too.late\r\n\r\n");
        let (ours, theirs) = both(&long);
        assert_eq!(ours, theirs);
        assert_eq!(ours.expect("a request").raw(facts::Field::Host), None);
    }

    /// The exchanges' reader given the head the carriers' pass read, and
    /// the same reader reading it itself, after the same segments: their
    /// whole state (as printed).
    fn handed_and_read(first: &[u8], kept: usize, then: &[(bool, &[u8])]) -> (String, String) {
        use super::super::exchange::Tracker;
        let (mut handed, mut read) = (Tracker::new(), Tracker::new());
        let data = &first[..first.len().min(kept)];
        let head = StreamHead::default().add(0, first);
        handed.add_read(true, 0, data, first.len() as u32, 0, head);
        read.add(true, 0, data, first.len() as u32, 0);
        let mut off = [first.len() as u64, 0];
        for (i, &(to_server, b)) in then.iter().enumerate() {
            for t in [&mut handed, &mut read] {
                t.add(to_server, off[usize::from(!to_server)], b, b.len() as u32, 1 + i as i64);
            }
            off[usize::from(!to_server)] += b.len() as u64;
        }
        (format!("{handed:?}"), format!("{read:?}"))
    }

    #[test]
    fn the_exchanges_reader_takes_the_head_the_carriers_pass_read_as_it_would_read_it() {
        const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No\r\n\r\n";
        let heads: [&[u8]; 9] = [
            b"GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
            b"POST /b HTTP/1.1\r\nContent-Length: 3\r\nHost: h\r\n\r\nabcGET /c HTTP/1.1\r\n\r\n",
            b"POST /c HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            // A bare line feed ends the carriers' reading, not the head.
            b"GET /d HTTP/1.1\r\nHost: h\n\r\nContent-Length: 1\r\n\r\nxGET /e HTTP/1.1\r\n\r\n",
            b"GET /f HTTP/1.0\nHost: h\n\nGET /g HTTP/1.1\r\n\r\n",
            b"GET /h HTTP/1.1\r\n\r\n",
            b"PROXY TCP4 198.18.0.1 198.18.0.2 40000 80\r\nGET /p HTTP/1.1\r\n\r\n",
            b"GET /i HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            b"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
        ];
        for head in heads {
            for kept in [0, 10, 20, 30, 45, 60, usize::MAX] {
                let (handed, read) = handed_and_read(head, kept, &[(false, OK), (false, OK)]);
                assert_eq!(handed, read, "{:?} kept {kept}", String::from_utf8_lossy(head));
            }
        }
        // The usual request is handed over (and read as when read again).
        let read = StreamHead::default().add(0, heads[0]).expect("read whole");
        assert_eq!(format!("{read:?}").matches("used: 28").count(), 1, "{read:?}");
        // Not a head read whole: nothing handed over.
        assert!(StreamHead::default().add(0, &heads[0][..20]).is_none());
        assert!(StreamHead::default().add(0, heads[3]).is_none());
        assert!(StreamHead::default().add(0, heads[6]).is_none());
    }

    proptest::proptest! {
        #[test]
        fn any_head_gives_the_facts_http_request_gives(
            lines in proptest::collection::vec(
                "(GET|POST|PUT) /[a-z0-9/?=]{0,20} HTTP/1\\.[01]|[Hh][Oo][Ss][Tt]:[ \t]{0,2}[a-z0-9.\\-]{0,12}[ \t]?|[A-Za-z\\-]{1,16}: [ -~]{0,20}|",
                1..8),
            crlf in proptest::bool::ANY,
            cut in 0usize..400,
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let text: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
            let b = &text.as_bytes()[..cut.min(text.len())];
            let (ours, theirs) = both(b);
            proptest::prop_assert_eq!(ours, theirs);
        }

        #[test]
        fn any_head_handed_over_reads_as_the_head_read_again(
            lines in proptest::collection::vec(
                "(GET|HEAD|POST) /[a-z]{0,4} HTTP/1\\.[01]|[Cc]ontent-[Ll]ength: ?[0-9]{1,3}|[Tt]ransfer-[Ee]ncoding: (gzip, )?[Cc]hunked|Host: h|[a-z]{1,3}|0|",
                1..10),
            ends in proptest::collection::vec(0usize..3, 10),
            kept in 0usize..300,
        ) {
            let text: Vec<u8> = lines.iter().zip(&ends).flat_map(|(l, &e)| [l.as_bytes(), [&b"\r\n"[..], b"\n", b"\r"][e]].concat()).collect();
            let (handed, read) = handed_and_read(&text, kept, &[(false, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")]);
            proptest::prop_assert_eq!(handed, read);
        }
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn proxy_v1_tcp4_tcp6_and_unknown() {
        let line = b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80\r\nGET / HTTP/1.1\r\n\r\n";
        let c = parse(line);
        let p = c.proxy.expect("v1");
        assert_eq!((p.kind, p.addr, p.port), (CarrierKind::ProxyV1, ip("198.18.90.42"), Some(40001)));
        assert_eq!(proxy_v1(line).map(|(_, n)| n), Some(47));
        let v6 = b"PROXY TCP6 2001:db8::1 2001:db8::2 4000 443\r\n";
        assert_eq!(proxy_v1(v6).map(|(c, _)| (c.addr, c.port)), Some((ip("2001:db8::1"), Some(4000))));
        let unknown = b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n";
        assert_eq!(proxy_v1(unknown).map(|(c, _)| c.addr), Some(None));
    }

    #[test]
    fn proxy_v1_refuses_malformed_lines() {
        for bad in [
            &b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80"[..], // no CRLF
            b"PROXY TCP4 2001:db8::1 198.19.96.10 40001 80\r\n",   // family mismatch
            b"PROXY TCP4 198.18.90.42 198.19.96.10 70000 80\r\n",  // port
            b"PROXY TCP4 198.18.90.42 198.19.96.10 1 80 extra\r\n",
            b"PROXY TCP5 198.18.90.42 198.19.96.10 1 80\r\n",
            b"PROXY TCP4 \xff\xfe 198.19.96.10 1 80\r\n",
        ] {
            assert_eq!(proxy_v1(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        // CRLF beyond 107 bytes: not a v1 line.
        let mut long = b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80".to_vec();
        long.extend(std::iter::repeat_n(b' ', 80));
        long.extend(b"\r\n");
        assert_eq!(proxy_v1(&long), None);
    }

    fn v2(cmd: u8, fam: u8, body: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.extend([0x20 | cmd, fam]);
        h.extend((body.len() as u16).to_be_bytes());
        h.extend(body);
        h
    }

    #[test]
    fn proxy_v2_ipv4_ipv6_local_and_tlvs() {
        let mut body = vec![198, 18, 90, 42, 198, 19, 96, 10, 0x9c, 0x41, 0, 80];
        body.extend([0x04, 0, 3, b'a', b'b', b'c']); // a TLV, skipped within the length
        let mut h = v2(1, 0x11, &body);
        h.extend(b"GET / HTTP/1.1\r\nX-Request-ID: abcdef123456\r\n\r\n");
        let c = parse(&h);
        let p = c.proxy.expect("v2");
        assert_eq!((p.kind, p.addr, p.port), (CarrierKind::ProxyV2, ip("198.18.90.42"), Some(40001)));
        assert_eq!(proxy_v2(&h).map(|(_, n)| n), Some(16 + body.len()));
        assert!(c.request_id.is_some(), "the request after the header is parsed too");

        let mut b6 = vec![0u8; 36];
        b6[..16].copy_from_slice(&"2001:db8::7".parse::<std::net::Ipv6Addr>().unwrap().octets());
        b6[32..34].copy_from_slice(&443u16.to_be_bytes());
        assert_eq!(
            proxy_v2(&v2(1, 0x21, &b6)).map(|(c, _)| (c.addr, c.port)),
            Some((ip("2001:db8::7"), Some(443)))
        );
        assert_eq!(proxy_v2(&v2(0, 0x00, &[])).map(|(c, _)| c.addr), Some(None));
    }

    #[test]
    fn proxy_v2_strict_bounds() {
        let body = [198, 18, 90, 42, 198, 19, 96, 10, 0x9c, 0x41, 0, 80];
        let h = v2(1, 0x11, &body);
        for cut in 0..h.len() {
            assert_eq!(proxy_v2(&h[..cut]), None, "cut at {cut}");
        }
        // A length too short for the family's addresses.
        assert_eq!(proxy_v2(&v2(1, 0x11, &body[..8])), None);
        assert_eq!(proxy_v2(&v2(1, 0x21, &[0; 20])), None);
        // Version 1 in the v2 frame, an unknown command.
        let mut bad = h.clone();
        bad[12] = 0x11;
        assert_eq!(proxy_v2(&bad), None);
        bad[12] = 0x2f;
        assert_eq!(proxy_v2(&bad), None);
        // A huge declared length is just "not known": no allocation, no panic.
        let mut huge = h.clone();
        huge[14..16].copy_from_slice(&[0xff, 0xff]);
        assert_eq!(proxy_v2(&huge), None);
    }

    const REQ: &[u8] = b"GET /x HTTP/1.1\r\nHost: h\r\n\
        X-Forwarded-For: 203.0.113.9, 198.18.90.42\r\n\
        X-Real-IP: 198.18.90.42\r\n\
        Forwarded: for=192.0.2.60;proto=http, for=\"[2001:db8::1]:443\"\r\n\
        traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n\
        X-Forwarded-For: 192.0.2.99\r\n";

    #[test]
    fn forwarding_headers_in_order_of_trust() {
        let c = parse(REQ);
        assert_eq!(c.proxy, None);
        let kinds: Vec<_> = c.headers.iter().map(|h| h.kind).collect();
        assert_eq!(kinds, [CarrierKind::Forwarded, CarrierKind::XForwardedFor, CarrierKind::XRealIp]);
        let xff = c.of(CarrierKind::XForwardedFor).unwrap();
        assert_eq!((xff.first, xff.addr, xff.elements), (ip("203.0.113.9"), ip("198.18.90.42"), 2));
        let fwd = c.of(CarrierKind::Forwarded).unwrap();
        assert_eq!((fwd.first, fwd.addr, fwd.port), (ip("192.0.2.60"), ip("2001:db8::1"), Some(443)));
        assert_eq!(c.main().map(|m| m.kind), Some(CarrierKind::Forwarded));
        let id = c.request_id.unwrap();
        assert_eq!(id.kind, RequestIdKind::TraceParent);
        // Only the trace id counts: another parent id is the same request.
        let other = parse(
            b"GET / HTTP/1.1\r\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01\r\n\r\n",
        );
        assert_eq!(other.request_id, Some(id));
    }

    #[test]
    fn obfuscated_unknown_and_repeated_values() {
        let c = parse(b"POST / HTTP/1.0\r\nforwarded: for=unknown\r\nx-forwarded-for: 198.18.0.1\r\nX-Forwarded-For: 198.18.0.2:555\r\n\r\n");
        assert_eq!(c.of(CarrierKind::Forwarded).map(|f| (f.addr, f.elements)), Some((None, 1)));
        let x = c.of(CarrierKind::XForwardedFor).unwrap();
        assert_eq!((x.first, x.addr, x.port, x.elements), (ip("198.18.0.1"), ip("198.18.0.2"), Some(555), 2));
        let c = parse(b"GET / HTTP/1.1\r\nForwarded: for=_hidden, for=\"198.18.0.3:_p\"\r\n\r\n");
        let f = c.of(CarrierKind::Forwarded).unwrap();
        assert_eq!((f.first, f.addr), (None, ip("198.18.0.3")));
    }

    #[test]
    fn request_ids_and_their_limits() {
        let a = parse(b"GET / HTTP/1.1\r\nX-Request-ID: 7f3a9c1e-0001\r\n\r\n").request_id.unwrap();
        let b = parse(b"GET / HTTP/1.1\r\nx-request-id:7f3a9c1e-0001 \r\n\r\n").request_id.unwrap();
        let c = parse(b"GET / HTTP/1.1\r\nX-Correlation-ID: 7f3a9c1e-0001\r\n\r\n").request_id.unwrap();
        assert_eq!(a, b);
        assert_eq!((a.kind, c.kind), (RequestIdKind::XRequestId, RequestIdKind::XCorrelationId));
        let d = parse(b"GET / HTTP/1.1\r\nX-Request-ID: 7f3a9c1e-0002\r\n\r\n").request_id.unwrap();
        assert_ne!(a.hash, d.hash);
        assert_eq!(parse(b"GET / HTTP/1.1\r\nX-Request-ID: 42\r\n\r\n").request_id, None, "too short");
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\ntraceparent: 00-00000000000000000000000000000000-1-01\r\n\r\n")
                .request_id,
            None
        );
    }

    #[test]
    fn stream_head_keeps_in_order_bytes_and_parses_once_complete() {
        let mut h = StreamHead::default();
        h.add(0, &REQ[..20]);
        h.add(40, &REQ[40..60]); // a gap: not kept
        assert!(matches!(&h, StreamHead::Collecting(v) if v.len() == 20));
        h.add(10, &REQ[10..45]); // overlapping retransmission continues it
        assert!(matches!(&h, StreamHead::Collecting(v) if v.len() == 45));
        h.add(45, &REQ[45..]);
        assert!(matches!(h, StreamHead::Done(Some(_), Some(_))), "blank line seen: parsed, bytes dropped");
        let (c, app) = h.take();
        let c = c.expect("carriers");
        assert_eq!(
            app.and_then(|a| a.text(super::facts::Field::Host)),
            Some("h".to_string()),
            "and the request's own facts"
        );
        assert_eq!(c.of(CarrierKind::XForwardedFor).map(|x| x.elements), Some(2));
        assert_eq!(c.payload_fp, None, "no PROXY header: the stream's own fingerprint stands");

        // After a PROXY header: the fingerprint of what follows it.
        let mut p = StreamHead::default();
        p.add(0, b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80\r\n");
        p.add(47, REQ);
        let mut own = StreamPrefix::new(128);
        own.add(0, REQ);
        let (c, app) = p.take();
        assert_eq!(c.and_then(|c| c.payload_fp), Some(own.fingerprint()));
        assert_eq!(
            app.and_then(|a| a.text(super::facts::Field::Target)),
            Some("/x".to_string()),
            "the request after the PROXY line"
        );

        // A TLS record that is no handshake (application data): nothing kept.
        let mut tls = StreamHead::default();
        tls.add(0, b"\x17\x03\x03\x00\x10");
        tls.add(5, REQ);
        assert!(matches!(tls, StreamHead::Refused));
        assert_eq!(tls.take(), (None, None));
        // A handshake record: kept up to its end, then parsed.
        let mut hello = StreamHead::default();
        hello.add(0, b"\x16\x03\x01\x00\x10\x01");
        assert!(matches!(hello, StreamHead::Collecting(_)));
        hello.add(6, &[0; 15]);
        assert!(matches!(hello, StreamHead::Done(None, Some(_))), "its 21 bytes are all there");

        // A v2 header whose addresses hold a blank line (13.10.13.10): the head
        // goes on to the request's own blank line.
        let mut h2 = v2(1, 0x11, &[13, 10, 13, 10, 198, 19, 96, 10, 0x9c, 0x41, 0, 80]);
        let mut s = StreamHead::default();
        s.add(0, &h2[..10]);
        assert!(matches!(s, StreamHead::Collecting(_)), "a partial signature waits");
        s.add(10, &h2[10..]);
        assert!(matches!(s, StreamHead::Collecting(_)), "header only: the request is still to come");
        let at = h2.len() as u64;
        h2.extend(b"GET / HTTP/1.1\r\nX-Real-IP: 198.18.0.7\r\n\r\n");
        s.add(at, &h2[at as usize..]);
        assert!(matches!(s, StreamHead::Done(Some(_), Some(_))));
        let c = s.take().0.unwrap();
        assert_eq!(c.proxy.and_then(|p| p.addr), ip("13.10.13.10"));
        assert_eq!(c.of(CarrierKind::XRealIp).and_then(|x| x.addr), ip("198.18.0.7"));

        // Never more than the cap, whatever arrives.
        let mut big = StreamHead::default();
        big.add(0, b"GET / HTTP/1.1\r\nX-A: ");
        big.add(21, &[b'a'; 4000]);
        assert!(matches!(big, StreamHead::Done(None, Some(_))));
        let mut open = StreamHead::default();
        open.add(0, b"GET / HTTP/1.1\r\nX-Real-IP: 198.18.0.9\r\n");
        assert_eq!(
            open.take().0.and_then(|c| c.main().and_then(|m| m.addr)),
            ip("198.18.0.9"),
            "parsed at the end"
        );
    }

    #[test]
    fn not_http_not_parsed_and_hostile_input_is_harmless() {
        assert!(parse(b"SSH-2.0-OpenSSH\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n").is_empty());
        assert!(parse(b"\x16\x03\x01\x02\x00").is_empty());
        assert!(parse(b"").is_empty());
        assert!(may_carry(b"GET / HTTP/1.1") && may_carry(b"PROXY ") && may_carry(&V2_SIGNATURE[..3]));
        assert!(!may_carry(b"\x16\x03\x01") && !may_carry(b"get / HTTP/1.1") && !may_carry(b""));
        // The request line ends with its HTTP/1.x version (with or without the CR).
        let request_line = |line: &[u8]| crate::flows::facts::request_line(line).is_some();
        assert!(request_line(b"GET /x HTTP/1.1\r") && request_line(b"GET / HTTP/1.0"));
        for line in [
            &b"GET /x HTTP/2"[..],
            b"GET /HTTP/1.1",
            b"GET HTTP/1.1",
            b"GET /x HTTP/1.1 extra",
            b"GET /x HTTP/1.",
        ] {
            assert!(!request_line(line), "{:?}", String::from_utf8_lossy(line));
        }
        // Truncated at every length, non-UTF-8 bytes, an overlong header: no panic.
        let mut hostile = REQ.to_vec();
        hostile.extend(b"X-Forwarded-For: \xff\xfe\r\n");
        hostile.extend(std::iter::repeat_n(b'A', 5000));
        for cut in 0..hostile.len().min(CARRIER_PREFIX + 10) {
            let _ = parse(&hostile[..cut]);
        }
        let c = parse(b"GET / HTTP/1.1\r\nX-Forwarded-For: \xff\xfe\r\nX-Real-IP: 1.2.3.4\r\n\r\n");
        assert_eq!(c.headers.iter().map(|h| h.kind).collect::<Vec<_>>(), [CarrierKind::XRealIp]);
        // Beyond the prefix nothing is read.
        let mut long = b"GET / HTTP/1.1\r\nX-Pad: ".to_vec();
        long.extend(std::iter::repeat_n(b'a', CARRIER_PREFIX));
        long.extend(b"\r\nX-Real-IP: 1.2.3.4\r\n\r\n");
        assert!(parse(&long).headers.is_empty());
    }
}
