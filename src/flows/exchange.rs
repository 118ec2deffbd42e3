//! HTTP/1.x exchanges inside one TCP connection, as one capture saw them:
//! keep-alive and pipelined requests and their responses, paired in order
//! (HTTP/1.x answers in the order asked). Each direction is read as a
//! sequence of messages by stream offset: a head is parsed where it begins,
//! a body is skipped by its `Content-Length` or its chunk sizes without
//! being stored, so a lost or uncaptured segment inside a body does not
//! matter, and memory per connection is a bounded head buffer and a bounded
//! list. Where the next message's first bytes were not seen (a gap in the
//! capture, a head beyond the bytes kept of a segment) the direction waits
//! there; if bytes after that point were seen, the counts are lower bounds
//! ([`Exchanges::complete`] is false), never a guess.
//!
//! Bodies: a request has one by `Transfer-Encoding: chunked` or
//! `Content-Length`; a response to `HEAD`, a 1xx, 204 or 304 has none; any
//! other response without either is delimited by the connection's close
//! (nothing more is read). A 101 or a 2xx to `CONNECT` ends HTTP on the
//! connection. Other request/response protocols (DNS over TCP) can follow
//! the same shape: a reader per direction, a queue of pending requests.

use super::facts::{http_status, newline, request_line, trim};
use super::Ns;
use std::borrow::Cow;
use std::collections::VecDeque;

/// Exchanges kept per connection and capture (the counts go on).
pub const EXCHANGES_KEPT: usize = 16;
/// Most bytes of an exchange's target kept.
pub const EXCHANGE_TARGET_BOUND: usize = 64;
/// Most bytes of a message head (or chunk line, or trailer) collected across
/// segments; a longer one ends the reading.
const HEAD_BOUND: usize = 16 * 1024;
/// Most requests awaiting their response tracked (pipelining depth).
const PENDING_BOUND: usize = 64;

/// Most bytes of an exchange's method, space and target.
const LINE_BOUND: usize = 8 + 1 + EXCHANGE_TARGET_BOUND;

/// One request and its response, as one capture saw them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The request's method, a space and its target (cut to
    /// [`EXCHANGE_TARGET_BOUND`] bytes), as read: `GET /x` (inline: no
    /// allocation per exchange); `line_len` bytes of it.
    line: [u8; LINE_BOUND],
    line_len: u8,
    /// When the request's first byte was seen.
    pub request_ns: i64,
    /// When the response's status line was seen (None: no response).
    pub response_ns: Ns,
    pub status: Option<u16>,
}

impl Exchange {
    /// The method, a space and the target, as read (cut).
    pub fn line(&self) -> &[u8] {
        &self.line[..usize::from(self.line_len)]
    }

    /// The method as read.
    pub fn method(&self) -> &[u8] {
        let line = self.line();
        let n = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
        &line[..n]
    }

    /// The target as read (cut).
    pub fn target(&self) -> &[u8] {
        self.line().get(self.method().len() + 1..).unwrap_or(&[])
    }

    /// Builds an exchange from its method and target (cut as the reader cuts).
    pub fn new(method: &[u8], target: &[u8], request_ns: i64) -> Exchange {
        let method = &method[..method.len().min(8)];
        let target = &target[..target.len().min(EXCHANGE_TARGET_BOUND)];
        let mut line = [0u8; LINE_BOUND];
        line[..method.len()].copy_from_slice(method);
        line[method.len()] = b' ';
        let len = method.len() + 1 + target.len();
        line[method.len() + 1..len].copy_from_slice(target);
        Exchange { line, line_len: len as u8, request_ns, response_ns: Ns::NONE, status: None }
    }
}

/// The HTTP/1.x exchanges of one connection at one capture.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Exchanges {
    /// Requests read, and the responses paired with them (in order).
    pub requests: u32,
    pub responses: u32,
    /// The first [`EXCHANGES_KEPT`] exchanges.
    pub kept: Vec<Exchange>,
    /// The highest status of any response (the worst: 5xx above 4xx ...).
    pub worst_status: Option<u16>,
    /// The exchange (1-based) whose response came longest after its
    /// request, and how long (ns, at this capture).
    pub slowest: Option<(u32, i64)>,
    /// Every byte seen each way was read as messages (or came after the
    /// end of HTTP on the connection). False: bytes after some point could
    /// not be read, and `requests` / `responses` are lower bounds.
    pub complete: bool,
}

impl Exchanges {
    /// Moves every time by `by` (a clock step corrected).
    pub fn shift(&mut self, by: impl Fn(i64) -> i64) {
        for e in &mut self.kept {
            e.request_ns = by(e.request_ns);
            e.response_ns = Ns::from(e.response_ns.get().map(&by));
        }
    }
}

/// What a direction awaits at its `next` offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Head,
    ChunkLine,
    Trailer,
    /// Nothing more is read: HTTP ended on the connection (a body delimited
    /// by the close, an upgrade or tunnel) — the rest is not HTTP messages.
    Ended,
    /// Reading stopped on bytes that are not what HTTP/1.x allows there (or
    /// beyond a bound): what follows is unknown.
    Lost,
}

/// One direction's reader.
#[derive(Clone, Debug)]
struct Reader {
    /// Stream offset of what is awaited.
    next: u64,
    want: Want,
    /// The awaited element's first bytes and when they were seen, when it
    /// began in an earlier segment (boxed: rare).
    buf: Option<Box<(Vec<u8>, i64)>>,
    /// The end of the furthest segment seen (stream offset).
    seen_end: u64,
    /// The stream ended (FIN) where reading rests, every byte before it read.
    closed: bool,
}

impl Reader {
    fn new() -> Reader {
        Reader { next: 0, want: Want::Head, buf: None, seen_end: 0, closed: false }
    }

    /// Bytes were seen after the point where reading waits (or stopped on
    /// bytes it could not read).
    fn unread(&self) -> bool {
        match self.want {
            Want::Ended => false,
            Want::Lost => true,
            _ => self.seen_end > self.next,
        }
    }
}

/// A request awaiting its response.
#[derive(Clone, Copy, Debug)]
struct Pending {
    request_ns: i64,
    /// Its response has no body (`HEAD`).
    head: bool,
    connect: bool,
}

/// The exchanges of a connection being read (one per HTTP connection while
/// the flow table is built). Small: one may live until the capture is read,
/// so what only pipelining or keep-alive needs is in [`More`], boxed.
#[derive(Clone, Debug)]
pub struct Tracker {
    client: Reader,
    server: Reader,
    /// The oldest request awaiting its response (the others are in `more`).
    pending: Option<Pending>,
    /// The first exchange (the others kept are in `more`).
    first: Option<Exchange>,
    requests: u32,
    responses: u32,
    worst_status: Option<u16>,
    slowest: Option<(u32, i64)>,
    more: Option<Box<More>>,
}

/// What a connection with more than one exchange needs.
#[derive(Clone, Debug, Default)]
struct More {
    /// Requests awaiting their response after `Tracker::pending`.
    pending: VecDeque<Pending>,
    /// The exchanges kept after the first.
    kept: Vec<Exchange>,
}

/// An element parsed at a reader's `next`.
enum Parsed {
    /// Needs more bytes than those at hand.
    More,
    /// `used` bytes from `next`, and what follows.
    Done { used: usize, then: Then },
    /// Not HTTP/1.x there.
    Bad,
}

enum Then {
    Head,
    /// Skip `n` body bytes, then a head.
    Body(u64),
    Chunks,
    /// Skip `n` bytes of chunk data and its CRLF, then a chunk line.
    Chunk(u64),
    Trailer,
    Ended,
}

/// The first bytes of a client stream look like an HTTP/1.x request: a
/// method token (3 to 7 capitals) and a space.
pub fn may_be_request(data: &[u8]) -> bool {
    let n = data.iter().take(8).take_while(|b| b.is_ascii_uppercase()).count();
    (3..=7).contains(&n) && data.get(n) == Some(&b' ')
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker::new()
    }
}

impl Tracker {
    pub fn new() -> Tracker {
        Tracker {
            client: Reader::new(),
            server: Reader::new(),
            pending: None,
            first: None,
            requests: 0,
            responses: 0,
            worst_status: None,
            slowest: None,
            more: None,
        }
    }

    /// One segment of the client (`to_server`) or server stream: `data` the
    /// bytes captured of it (maybe fewer than `len`, its payload length) at
    /// stream offset `off`, seen at `ts_ns`.
    pub fn add(&mut self, to_server: bool, off: u64, data: &[u8], len: u32, ts_ns: i64) {
        self.add_read(to_server, off, data, len, ts_ns, None);
    }

    /// [`Tracker::add`], with `read` the head at the start of `data` as the
    /// carriers' pass read it ([`HeadLines`]): taken instead of reading it
    /// again where the client stream's first head is awaited.
    pub(super) fn add_read(
        &mut self,
        to_server: bool,
        off: u64,
        data: &[u8],
        len: u32,
        ts_ns: i64,
        read: Option<Head<'_>>,
    ) {
        let data = &data[..data.len().min(len as usize)];
        let mut read = read.filter(|h| to_server && off == 0 && h.used <= data.len());
        let r = self.reader(to_server);
        if off + u64::from(len) > r.seen_end {
            r.seen_end = off + u64::from(len);
            r.closed = false; // bytes past a FIN: not ended after all
        }
        loop {
            let r = self.reader(to_server);
            if matches!(r.want, Want::Ended | Want::Lost) {
                return;
            }
            // The awaited element's bytes: those kept from earlier segments
            // continued by this one, or this segment's from `next` on.
            let (bytes, at_ns) = if let Some(buf) = &mut r.buf {
                let have = r.next + buf.0.len() as u64;
                if off > have || off + data.len() as u64 <= have {
                    return;
                }
                let from = (have - off) as usize;
                let take = (data.len() - from).min(HEAD_BOUND.saturating_sub(buf.0.len()));
                buf.0.extend_from_slice(&data[from..from + take]);
                let (bytes, ns) = *r.buf.take().expect("buffered");
                (Cow::Owned(bytes), ns)
            } else if r.next >= off && r.next < off + data.len() as u64 {
                (Cow::Borrowed(&data[(r.next - off) as usize..]), ts_ns)
            } else {
                return; // not here (a gap, or not captured): wait for it
            };
            let parsed = match read.take() {
                Some(head)
                    if self.client.next == 0
                        && self.client.want == Want::Head
                        && matches!(bytes, Cow::Borrowed(_)) =>
                {
                    self.request(head, at_ns)
                }
                _ => self.parse(to_server, &bytes, at_ns),
            };
            let r = self.reader(to_server);
            let (used, then) = match parsed {
                Parsed::More if bytes.len() >= HEAD_BOUND => {
                    r.want = Want::Lost;
                    return;
                }
                Parsed::More => {
                    r.buf = Some(Box::new((bytes.into_owned(), at_ns)));
                    return;
                }
                Parsed::Bad => {
                    r.want = Want::Lost;
                    return;
                }
                Parsed::Done { used, then } => (used, then),
            };
            r.next += used as u64;
            r.want = match then {
                Then::Head => Want::Head,
                Then::Body(n) => {
                    r.next = r.next.saturating_add(n);
                    Want::Head
                }
                Then::Chunks => Want::ChunkLine,
                Then::Chunk(n) => {
                    r.next = r.next.saturating_add(n).saturating_add(2);
                    Want::ChunkLine
                }
                Then::Trailer => Want::Trailer,
                Then::Ended => Want::Ended,
            };
        }
    }

    fn reader(&mut self, to_server: bool) -> &mut Reader {
        if to_server {
            &mut self.client
        } else {
            &mut self.server
        }
    }

    /// The element a reader awaits, at the start of `b`.
    fn parse(&mut self, to_server: bool, b: &[u8], ts_ns: i64) -> Parsed {
        let want = self.reader(to_server).want;
        match want {
            Want::Head => {
                if b.starts_with(b"\r\n") {
                    return Parsed::Done { used: 2, then: Then::Head }; // an empty line between messages
                }
                if b.len() < 2 {
                    return Parsed::More;
                }
                let Some(head) = scan_head(b) else {
                    // Not a message start at all: stop now, not after a bound's worth.
                    let first = memchr::memchr(b'\n', b).map_or(b, |nl| &b[..nl]);
                    let plausible = if to_server {
                        may_be_request(b) || b.len() < 8
                    } else {
                        b"HTTP/1.".starts_with(&b[..b.len().min(7)])
                    };
                    let line_ok =
                        if to_server { request_line(first).is_some() } else { http_status(first).is_some() };
                    if !plausible || (first.len() < b.len() && !line_ok) {
                        return Parsed::Bad;
                    }
                    return Parsed::More;
                };
                if to_server {
                    self.request(head, ts_ns)
                } else {
                    self.response(head, ts_ns)
                }
            }
            Want::ChunkLine => {
                let Some(nl) = memchr::memchr(b'\n', b) else {
                    return if b.len() > 256 { Parsed::Bad } else { Parsed::More };
                };
                let line = b[..nl].strip_suffix(b"\r").unwrap_or(&b[..nl]);
                let digits = line.iter().take_while(|c| c.is_ascii_hexdigit()).count();
                if digits == 0 || digits > 15 {
                    return Parsed::Bad;
                }
                let size = (line[..digits].iter())
                    .fold(0u64, |n, &c| n * 16 + u64::from((c as char).to_digit(16).unwrap_or(0)));
                let then = if size == 0 { Then::Trailer } else { Then::Chunk(size) };
                Parsed::Done { used: nl + 1, then }
            }
            Want::Trailer => {
                if b.starts_with(b"\r\n") {
                    return Parsed::Done { used: 2, then: Then::Head };
                }
                match memchr::memmem::find(b, b"\r\n\r\n") {
                    Some(end) => Parsed::Done { used: end + 4, then: Then::Head },
                    None => Parsed::More,
                }
            }
            Want::Ended | Want::Lost => Parsed::Bad,
        }
    }

    /// A request head.
    fn request(&mut self, head: Head<'_>, ts_ns: i64) -> Parsed {
        let Head { first_line, request, used, length, chunked } = head;
        let Some((method, target)) = request.or_else(|| request_line(&first_line[..first_line.len() - 1]))
        else {
            return Parsed::Bad;
        };
        let connect = method == b"CONNECT";
        self.requests = self.requests.saturating_add(1);
        if self.first.is_none() {
            self.first = Some(Exchange::new(method, target, ts_ns));
        } else {
            let kept = &mut self.more.get_or_insert_with(Box::default).kept;
            if kept.len() + 1 < EXCHANGES_KEPT {
                kept.push(Exchange::new(method, target, ts_ns));
            }
        }
        let p = Pending { request_ns: ts_ns, head: method == b"HEAD", connect };
        if self.pending.is_none() {
            self.pending = Some(p);
        } else {
            let more = self.more.get_or_insert_with(Box::default);
            if more.pending.len() + 1 >= PENDING_BOUND {
                self.client.want = Want::Lost; // deeper than tracked: responses could pair wrongly
                return Parsed::Bad;
            }
            more.pending.push_back(p);
        }
        let then = if connect {
            Then::Ended // a tunnel once answered (or the connection's end)
        } else if chunked {
            Then::Chunks
        } else {
            length.map_or(Then::Head, Then::Body)
        };
        Parsed::Done { used, then }
    }

    /// A response head, paired with the oldest request awaiting one.
    fn response(&mut self, head: Head<'_>, ts_ns: i64) -> Parsed {
        let Head { first_line, used, length, chunked, .. } = head;
        let Some(status) = http_status(first_line) else { return Parsed::Bad };
        if (100..200).contains(&status) && status != 101 {
            return Parsed::Done { used, then: Then::Head }; // interim: the final response follows
        }
        let next = self.more.as_mut().and_then(|m| m.pending.pop_front());
        let asked = std::mem::replace(&mut self.pending, next);
        self.responses = self.responses.saturating_add(1);
        let n = self.responses;
        let e = match n {
            1 => self.first.as_mut(),
            _ => self.more.as_mut().and_then(|m| m.kept.get_mut(n as usize - 2)),
        };
        if let Some(e) = e.filter(|_| asked.is_some()) {
            e.response_ns = Ns::at(ts_ns);
            e.status = Some(status);
        }
        self.worst_status = self.worst_status.max(Some(status));
        if let Some(p) = asked {
            let took = ts_ns.saturating_sub(p.request_ns);
            if self.slowest.is_none_or(|(_, t)| took > t) {
                self.slowest = Some((n, took));
            }
        }
        let then = if status == 101 || (asked.is_some_and(|p| p.connect) && (200..300).contains(&status)) {
            self.client.want = Want::Ended;
            Then::Ended
        } else if asked.is_some_and(|p| p.head) || status == 204 || status == 304 {
            Then::Head
        } else if chunked {
            Then::Chunks
        } else if let Some(n) = length {
            Then::Body(n)
        } else {
            Then::Ended // delimited by the close
        };
        Parsed::Done { used, then }
    }

    /// The client (`to_server`) or server stream ended with a FIN at stream
    /// offset `end` (after that segment's bytes were added).
    pub fn closed(&mut self, to_server: bool, end: u64) {
        let r = self.reader(to_server);
        r.closed = r.want == Want::Head && r.buf.is_none() && r.next == end && r.seen_end == end;
    }

    /// Both streams ended where reading rests, after exactly one answered
    /// exchange: no byte can follow, and the connection is
    /// [`Tracker::one_whole`] for good (the table need not keep the tracker).
    pub fn settled(&self) -> bool {
        self.client.closed && self.server.closed && self.one_whole()
    }

    /// Exactly one exchange was read, answered, and every byte each way
    /// with it (what most connections carry: [`Tracker::finish`]'s list
    /// would say no more than the flow's own facts).
    pub fn one_whole(&self) -> bool {
        self.requests == 1 && self.responses == 1 && self.read_whole()
    }

    /// Every byte seen each way was read as messages.
    fn read_whole(&self) -> bool {
        !self.client.unread() && !self.server.unread()
    }

    /// The exchanges read (None: no request was).
    pub fn finish(self) -> Option<Exchanges> {
        if self.requests == 0 {
            return None;
        }
        let complete = self.read_whole();
        let mut kept = Vec::with_capacity(1 + self.more.as_ref().map_or(0, |m| m.kept.len()));
        kept.extend(self.first);
        kept.extend(self.more.into_iter().flat_map(|m| m.kept));
        Some(Exchanges {
            requests: self.requests,
            responses: self.responses,
            kept,
            worst_status: self.worst_status,
            slowest: self.slowest,
            complete,
        })
    }
}

/// A message head read whole at the start of some bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Head<'a> {
    /// Its first line, with its line end.
    first_line: &'a [u8],
    /// A request line's method and target, when already read from it.
    request: Option<(&'a [u8], &'a [u8])>,
    /// Its bytes, to the end of the blank line that ends it.
    used: usize,
    /// Its `Content-Length`, and whether its `Transfer-Encoding` ends with
    /// `chunked`.
    length: Option<u64>,
    chunked: bool,
}

/// A head read a line at a time: where it ends, and the two headers that
/// delimit a body. The one rule for both readers of a head: [`scan_head`],
/// and the carriers' pass over a client stream's first head, which hands
/// what it read to [`Tracker::add`] so that head is not read twice.
pub(super) struct HeadLines<'a> {
    head: Head<'a>,
    /// The line before ended with CR LF (a blank line must follow one).
    crlf: bool,
}

impl<'a> HeadLines<'a> {
    /// From the first line, with its line feed, and a request line's method
    /// and target when already read from it.
    #[inline]
    pub(super) fn start(first_line: &'a [u8], request: Option<(&'a [u8], &'a [u8])>) -> HeadLines<'a> {
        let crlf = first_line.ends_with(b"\r\n");
        HeadLines { head: Head { first_line, request, used: 0, length: None, chunked: false }, crlf }
    }

    /// The next line, without its line feed, which is at `end - 1`: the
    /// whole head when this blank line (CR LF after a line ending in CR LF)
    /// ended it.
    #[inline(always)]
    pub(super) fn line(&mut self, line: &[u8], end: usize) -> Option<Head<'a>> {
        if line == b"\r" && self.crlf {
            return Some(Head { used: end, ..self.head });
        }
        self.crlf = line.last() == Some(&b'\r');
        body_header(&mut self.head, line.strip_suffix(b"\r").unwrap_or(line));
        None
    }
}

/// The head at the start of `b`, when its blank line (CRLF CRLF) is in `b`:
/// one pass over its lines, reading the two headers that delimit a body.
fn scan_head(b: &[u8]) -> Option<Head<'_>> {
    let first = newline(b)?;
    let mut lines = HeadLines::start(&b[..=first], None);
    let mut at = first + 1;
    loop {
        let nl = at + newline(&b[at..])?;
        if let Some(head) = lines.line(&b[at..nl], nl + 1) {
            return Some(head);
        }
        at = nl + 1;
    }
}

/// `Content-Length` or `Transfer-Encoding` from one header line (names
/// are told apart by length and first letter before they are compared:
/// other lines cost two tests).
#[inline(always)]
fn body_header(head: &mut Head<'_>, line: &[u8]) {
    let named = match line.first() {
        Some(b'c' | b'C') => line.get(LENGTH.len()) == Some(&b':'),
        Some(b't' | b'T') => line.get(ENCODING.len()) == Some(&b':'),
        _ => false,
    };
    if named {
        body_value(head, line);
    }
}

/// `name` is `lower` (lowercase letters and other bytes) in any case: what
/// `eq_ignore_ascii_case` says, without a branch per byte.
fn is_name(name: &[u8], lower: &[u8]) -> bool {
    let case = |l: u8| if l.is_ascii_lowercase() { 0x20 } else { 0 };
    name.len() == lower.len() && name.iter().zip(lower).fold(0, |d, (&a, &l)| d | ((a | case(l)) ^ l)) == 0
}

const LENGTH: &[u8] = b"content-length";
const ENCODING: &[u8] = b"transfer-encoding";

/// [`body_header`] for a line whose name may be one of the two.
fn body_value(head: &mut Head<'_>, line: &[u8]) {
    let n = if line[0] | 0x20 == b'c' { LENGTH.len() } else { ENCODING.len() };
    let (name, value) = (&line[..n], trim(&line[n + 1..]));
    if is_name(name, LENGTH) {
        if value.is_empty() || value.len() > 18 || !value.iter().all(u8::is_ascii_digit) {
            return;
        }
        head.length = Some(value.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')));
    } else if is_name(name, ENCODING) {
        let last = value.rsplit(|&b| b == b',').next().map(trim).unwrap_or(&[]);
        head.chunked = last.eq_ignore_ascii_case(b"chunked");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `segments` (direction, bytes) as contiguous streams, one ms apart.
    fn read(segments: &[(bool, &[u8])]) -> Exchanges {
        let mut t = Tracker::new();
        let (mut c, mut s) = (0u64, 0u64);
        for (i, (to_server, b)) in segments.iter().enumerate() {
            let off = if *to_server { &mut c } else { &mut s };
            t.add(*to_server, *off, b, b.len() as u32, i as i64 * 1_000_000);
            *off += b.len() as u64;
        }
        t.finish().expect("requests")
    }

    fn lines(x: &Exchanges) -> Vec<(String, Option<u16>)> {
        x.kept.iter().map(|e| (String::from_utf8_lossy(e.line()).into_owned(), e.status)).collect()
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

    #[test]
    fn keep_alive_exchanges_pair_in_order_with_their_statuses_and_times() {
        let x = read(&[
            (true, b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
            (false, OK),
            (true, b"GET /b HTTP/1.1\r\n\r\n"),
            (false, b"HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno"),
            (true, b"GET /c HTTP/1.1\r\n\r\n"),
        ]);
        assert_eq!((x.requests, x.responses, x.complete), (3, 2, true));
        assert_eq!(
            lines(&x),
            [("GET /a".into(), Some(200)), ("GET /b".into(), Some(500)), ("GET /c".into(), None)]
        );
        assert_eq!(x.worst_status, Some(500));
        assert_eq!(x.kept[1].request_ns, 2_000_000);
        assert_eq!(x.kept[1].response_ns.get(), Some(3_000_000));
        assert_eq!(x.slowest, Some((1, 1_000_000)));
    }

    #[test]
    fn pipelined_requests_in_one_segment_and_responses_in_one_segment() {
        let reqs =
            b"GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\nHEAD /3 HTTP/1.1\r\n\r\nGET /4 HTTP/1.1\r\n\r\n";
        let mut resp = Vec::new();
        resp.extend_from_slice(OK);
        resp.extend_from_slice(b"HTTP/1.1 204 No Content\r\n\r\n");
        resp.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n"); // HEAD: no body
        resp.extend_from_slice(b"HTTP/1.1 404 NF\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
        let x = read(&[(true, reqs), (false, &resp)]);
        assert_eq!((x.requests, x.responses, x.complete), (4, 4, true));
        assert_eq!(
            lines(&x).into_iter().map(|(_, s)| s).collect::<Vec<_>>(),
            [Some(200), Some(204), Some(200), Some(404)]
        );
    }

    #[test]
    fn a_tracker_stays_small_one_lives_per_http_connection_until_the_capture_is_read() {
        let size = std::mem::size_of::<Tracker>();
        assert!(size <= 224, "Tracker is {size} bytes: move what keep-alive needs into More");
    }

    #[test]
    fn a_connection_is_settled_only_when_both_streams_end_where_one_answered_exchange_left_reading() {
        let req: &[u8] = b"GET /a HTTP/1.1\r\n\r\n";
        let one = |closes: &[(bool, u64)]| {
            let mut t = Tracker::new();
            t.add(true, 0, req, req.len() as u32, 0);
            t.add(false, 0, OK, OK.len() as u32, 1);
            for &(to_server, end) in closes {
                t.closed(to_server, end);
            }
            t
        };
        let (c, s) = (req.len() as u64, OK.len() as u64);
        assert!(one(&[(true, c), (false, s)]).settled());
        assert!(!one(&[(true, c)]).settled(), "the server has not closed");
        assert!(!one(&[(true, c + 5), (false, s)]).settled(), "client bytes before its FIN were not seen");
        // Bytes past a FIN undo it.
        let mut t = one(&[(true, c), (false, s)]);
        t.add(true, c, req, req.len() as u32, 2);
        assert!(!t.settled());
        // A second request: never settled as one.
        let mut t = Tracker::new();
        t.add(true, 0, &[req, req].concat(), 2 * req.len() as u32, 0);
        t.add(false, 0, &[OK, OK].concat(), 2 * OK.len() as u32, 1);
        t.closed(true, 2 * c);
        t.closed(false, 2 * s);
        assert!(!t.settled() && t.finish().is_some_and(|x| x.requests == 2 && x.complete));
    }

    #[test]
    fn a_head_handed_over_is_taken_only_where_the_client_streams_first_head_is_awaited() {
        // A head read elsewhere (another target, another length): whether the
        // reader took it shows in the exchange it records and where it reads on.
        const REQ: &[u8] = b"GET /own HTTP/1.1\r\n\r\n";
        let other = b"GET /handed HTTP/1.1\r\nContent-Length: 1\r\n\r\n";
        let handed = || scan_head(other).map(|h| Head { request: Some((b"GET", b"/handed")), ..h });
        let first = |t: &Tracker| t.first.as_ref().map(|e| String::from_utf8_lossy(e.line()).into_owned());
        let own = b"GET /own123 HTTP/1.1\r\nContent-Length: 1\r\n\r\nx";
        let mut t = Tracker::new();
        t.add_read(true, 0, own, 44, 0, handed());
        assert_eq!(
            (first(&t).as_deref(), t.client.next, t.client.want),
            (Some("GET /handed"), 44, Want::Head)
        );
        // Not taken: fewer bytes than the head, another offset, the server's
        // stream, or a head already read.
        let mut t = Tracker::new();
        t.add_read(true, 0, REQ, REQ.len() as u32, 0, handed());
        assert_eq!((first(&t).as_deref(), t.client.next), (Some("GET /own"), 21));
        let mut t = Tracker::new();
        t.add_read(true, 5, own, 44, 0, handed());
        assert_eq!((first(&t), t.requests), (None, 0));
        let mut t = Tracker::new();
        t.add_read(false, 0, own, 44, 1, handed());
        assert_eq!((first(&t), t.requests, t.server.want), (None, 0, Want::Lost));
        let mut t = Tracker::new();
        t.add(true, 0, REQ, REQ.len() as u32, 0);
        t.add_read(true, 0, own, 44, 1, handed());
        assert_eq!((first(&t).as_deref(), t.requests), (Some("GET /own"), 1));
    }

    #[test]
    fn a_name_is_told_in_any_case_as_eq_ignore_ascii_case_tells_it() {
        for lower in [LENGTH, ENCODING] {
            assert!(is_name(&lower.to_ascii_uppercase(), lower) && !is_name(&lower[1..], lower));
            for at in 0..lower.len() {
                for b in 0..=255u8 {
                    let mut name = lower.to_vec();
                    name[at] = b;
                    assert_eq!(is_name(&name, lower), name.eq_ignore_ascii_case(lower), "{name:?}");
                }
            }
        }
    }

    #[test]
    fn header_names_in_any_case_a_status_without_reason_and_look_alike_names() {
        let req: &[u8] = b"POST /a HTTP/1.1\r\nContent-Length-Extra: 9\r\ncontent-LENGTH:  4 \r\n\r\nbodyGET /b HTTP/1.1\r\nTRANSFER-ENCODING: Chunked\r\n\r\n0\r\n\r\n";
        let resp: &[u8] =
            b"HTTP/1.1 200\r\nX-Content-Length: 99\r\nCONTENT-LENGTH: 2\r\n\r\nokHTTP/1.1 204\r\n\r\n";
        let x = read(&[(true, req), (false, resp)]);
        assert_eq!((x.requests, x.responses, x.complete), (2, 2, true));
        assert_eq!(lines(&x), [("POST /a".into(), Some(200)), ("GET /b".into(), Some(204))]);
        // A bare LF before the blank line is not the end of a head.
        let mut t = Tracker::new();
        t.add(true, 0, b"GET /c HTTP/1.1\nHost: h\n\r\n", 26, 0);
        assert!(t.finish().is_none(), "no head read");
    }

    #[test]
    fn heads_and_chunk_lines_split_across_segments_and_bodies_skipped_by_length() {
        let body = vec![b'x'; 3000];
        let mut post = b"POST /up HTTP/1.1\r\nContent-Length: 3000\r\n\r\n".to_vec();
        post.extend_from_slice(&body);
        post.extend_from_slice(b"GET /after HTTP/1.1\r\n\r\n");
        let resp: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nA\r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        let mut segs: Vec<(bool, &[u8])> = post.chunks(7).map(|c| (true, c)).collect();
        segs.extend(resp.chunks(5).map(|c| (false, c)));
        let x = read(&segs);
        assert_eq!((x.requests, x.responses, x.complete), (2, 2, true));
        assert_eq!(lines(&x), [("POST /up".into(), Some(201)), ("GET /after".into(), Some(200))]);
    }

    #[test]
    fn a_lost_body_segment_does_not_matter_a_lost_head_makes_the_counts_lower_bounds() {
        let mut t = Tracker::new();
        let req = b"GET /a HTTP/1.1\r\n\r\n";
        t.add(true, 0, req, req.len() as u32, 0);
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
        t.add(false, 0, head, head.len() as u32, 1);
        // body bytes 0..50 lost, 50..100 seen; then the next exchange
        let h = head.len() as u64;
        t.add(false, h + 50, &[b'x'; 50], 50, 2);
        t.add(true, req.len() as u64, b"GET /b HTTP/1.1\r\n\r\n", 19, 3);
        t.add(false, h + 100, OK, OK.len() as u32, 4);
        let x = t.clone().finish().unwrap();
        assert_eq!((x.requests, x.responses, x.complete), (2, 2, true));
        // The third request's head is missing from the capture; a fourth is seen after it.
        let off = req.len() as u64 + 19;
        t.add(true, off + 19, b"GET /d HTTP/1.1\r\n\r\n", 19, 5);
        let x = t.finish().unwrap();
        assert_eq!((x.requests, x.complete), (2, false));
    }

    #[test]
    fn bytes_not_captured_of_a_segment_leave_the_counts_lower_bounds() {
        let mut t = Tracker::new();
        let two = b"GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n";
        t.add(true, 0, &two[..25], two.len() as u32, 0); // cut by the snap length
        let x = t.finish().unwrap();
        assert_eq!((x.requests, x.complete), (1, false));
    }

    #[test]
    fn a_response_delimited_by_the_close_and_an_upgrade_end_the_reading_completely() {
        let x = read(&[
            (true, b"GET /a HTTP/1.0\r\n\r\n"),
            (false, b"HTTP/1.0 200 OK\r\n\r\nanything at all, then the close"),
        ]);
        assert_eq!((x.requests, x.responses, x.complete), (1, 1, true));
        let x = read(&[
            (true, b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"),
            (false, b"HTTP/1.1 101 Switching\r\n\r\n\x81\x05hello"),
            (true, b"\x81\x85abcd12345"),
        ]);
        assert_eq!((x.requests, x.responses, x.complete, x.worst_status), (1, 1, true, Some(101)));
    }

    #[test]
    fn not_http_or_beyond_the_bounds_stops_reading_without_a_panic() {
        let x = read(&[(true, b"GET /a HTTP/1.1\r\n\r\n"), (false, b"SSH-2.0-OpenSSH\r\n")]);
        assert_eq!((x.requests, x.responses, x.complete), (1, 0, false));
        // A head that never ends: bounded.
        let mut t = Tracker::new();
        t.add(true, 0, b"GET /a HTTP/1.1\r\n", 17, 0);
        let line = [b'a'; 1000];
        for k in 0..40u64 {
            t.add(true, 17 + k * 1000, &line, 1000, 1);
        }
        assert!(t.client.buf.as_ref().map_or(0, |b| b.0.len()) <= HEAD_BOUND);
        assert_eq!(t.finish(), None);
        // Chunk sizes past any body, a Content-Length past u64: no overflow.
        let x = read(&[
            (true, b"GET /a HTTP/1.1\r\n\r\n"),
            (false, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n"),
        ]);
        assert_eq!((x.responses, x.complete), (1, true));
        let x = read(&[(true, b"POST /a HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\n")]);
        assert_eq!((x.requests, x.complete), (1, true));
    }

    #[test]
    fn more_than_kept_exchanges_are_counted_and_the_kept_list_stays_bounded() {
        let mut segs: Vec<(bool, &[u8])> = Vec::new();
        for _ in 0..40 {
            segs.push((true, b"GET /x HTTP/1.1\r\n\r\n"));
            segs.push((false, OK));
        }
        let x = read(&segs);
        assert_eq!((x.requests, x.responses, x.kept.len()), (40, 40, EXCHANGES_KEPT));
    }
}
