//! One request of the JSON report written by hand, in serde_json's pretty
//! layout: the same bytes as serializing `schema::Request` with serde_json
//! (tested on every fixture, on hostile labels and names, and by the lab
//! scenarios' golden reports). Takes the wire view `schema` made; gives bytes.
//! Never decides a word or a field: `schema` owns both (names, order, what is
//! skipped); this file only lays them out, ~3× faster than serde's generic
//! path (keys are constants, text tuplecorr formats itself is not scanned for
//! escapes). The rare parts (a missed SYN, attempts, data, identity, fragments) go
//! through serde_json at their depth.

use crate::report::schema::{self, Change, Changes, Hop, Match, Reply, Request, WireName};
use serde::Serialize;
use std::io::{self, Write};

/// Indentation: two spaces a level.
const SPACES: &[u8; 64] = b"                                                                ";

/// Writes `q` as serde_json's pretty printer does, its opening brace at the
/// current position and its closing brace at `depth`.
pub fn request(buf: &mut Vec<u8>, depth: usize, q: &Request) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("request");
    o.num(q.request);
    o.key("proto");
    o.word(q.proto.wire());
    o.key("captures");
    o.array(&q.captures, hop)?;
    o.key("matches");
    o.array(&q.matches, matched)?;
    o.key("source");
    changes(o.buf, o.depth + 1, &q.source)?;
    o.key("destination");
    changes(o.buf, o.depth + 1, &q.destination)?;
    o.key("reply");
    reply(o.buf, o.depth + 1, &q.reply)?;
    o.key("outcome");
    outcome(o.buf, o.depth + 1, &q.outcome)?;
    if let Some(m) = &q.syn_missed {
        o.key("syn_missed");
        o.serde(m)?;
    }
    if !q.attempts.is_empty() {
        o.key("attempts");
        o.serde(&q.attempts)?;
    }
    if let Some(d) = &q.data {
        o.key("data");
        o.serde(d)?;
    }
    if let Some(i) = &q.identity {
        o.key("identity");
        o.serde(i)?;
    }
    if !q.blind.is_empty() {
        o.key("blind");
        o.serde(&q.blind)?;
    }
    if !q.apart.is_empty() {
        o.key("apart");
        o.serde(&q.apart)?;
    }
    if let Some(f) = &q.fragments {
        o.key("fragments");
        o.serde(f)?;
    }
    o.key("explanation");
    o.text(&q.explanation)?;
    o.close();
    Ok(())
}

fn hop(buf: &mut Vec<u8>, depth: usize, h: &Hop) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("label");
    o.text(&h.label)?;
    o.key("seen");
    o.bool(h.seen);
    o.some_plain("time", &h.time);
    o.some_plain("raw_time", &h.raw_time);
    o.some_plain("client", &h.client);
    o.some_plain("server", &h.server);
    o.some_text("client_name", &h.client_name)?;
    o.some_text("server_name", &h.server_name)?;
    o.some_plain("time_local", &h.time_local);
    o.key("reply_seen");
    o.bool(h.reply_seen);
    if let Some(ms) = h.rtt_ms {
        o.key("rtt_ms");
        o.serde(&schema::round_ms(ms))?;
    }
    o.some_num("packets_to_server", h.packets_to_server);
    o.some_num("packets_to_client", h.packets_to_client);
    o.some_num("bytes_to_server", h.bytes_to_server);
    o.some_num("bytes_to_client", h.bytes_to_client);
    o.some_plain("community_id", &h.community_id);
    o.some_plain("wireshark_filter", &h.wireshark_filter);
    o.some_num("icmp_id", h.icmp_id.map(u64::from));
    o.some_plain("icmp_seqs", &h.icmp_seqs);
    o.some_num("largest_to_server", h.largest_to_server.map(u64::from));
    o.some_num("largest_to_client", h.largest_to_client.map(u64::from));
    o.close();
    Ok(())
}

fn matched(buf: &mut Vec<u8>, depth: usize, m: &Match) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("between");
    o.text(&m.between)?;
    o.key("strength");
    o.word(m.strength.wire());
    o.key("evidence");
    o.array(&m.evidence, |buf, _, e| {
        word(buf, e.wire());
        Ok(())
    })?;
    if !m.candidates.is_empty() {
        o.key("candidates");
        o.serde(&m.candidates)?;
    }
    o.close();
    Ok(())
}

fn changes(buf: &mut Vec<u8>, depth: usize, c: &Changes) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("changed");
    o.array(&c.changed, change)?;
    if !c.kept.is_empty() {
        o.key("kept");
        o.serde(&c.kept)?;
    }
    o.close();
    Ok(())
}

fn change(buf: &mut Vec<u8>, depth: usize, c: &Change) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("between");
    o.text(&c.between)?;
    o.key("kind");
    o.word(c.kind.wire());
    o.key("before");
    o.plain(&c.before);
    o.key("after");
    o.plain(&c.after);
    o.some_text("before_name", &c.before_name)?;
    o.some_text("after_name", &c.after_name)?;
    if let Some(r) = &c.rule {
        o.key("rule");
        o.serde(r)?;
    }
    o.some_text("rule_note", &c.rule_note)?;
    if let Some(x) = &c.conntrack {
        o.key("conntrack");
        o.serde(x)?;
    }
    o.close();
    Ok(())
}

fn reply(buf: &mut Vec<u8>, depth: usize, r: &Reply) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("path");
    o.word(r.path.wire());
    o.key("lost_between");
    o.text_or_null(&r.lost_between)?;
    o.key("bypassed");
    o.text_or_null(&r.bypassed)?;
    o.key("reached");
    o.text_or_null(&r.reached)?;
    o.key("lost_cause");
    o.serde(&r.lost_cause)?;
    o.key("unexpected_source");
    o.serde(&r.unexpected_source)?;
    o.close();
    Ok(())
}

fn outcome(buf: &mut Vec<u8>, depth: usize, r: &schema::Outcome) -> io::Result<()> {
    let mut o = Object::open(buf, depth);
    o.key("kind");
    o.word(r.kind.wire());
    o.key("by");
    match &r.by {
        Some(by) => o.plain(by),
        None => o.null(),
    }
    o.some_text("by_name", &r.by_name)?;
    o.key("origin");
    o.text_or_null(&r.origin)?;
    o.key("icmp");
    match &r.icmp {
        Some(icmp) => o.plain(icmp),
        None => o.null(),
    }
    if let Some(cause) = r.icmp_cause {
        o.key("icmp_cause");
        o.word(cause.wire());
    }
    o.close();
    Ok(())
}

/// A wire word (an enum's name): letters and dashes.
fn word(buf: &mut Vec<u8>, w: &str) {
    buf.push(b'"');
    buf.extend_from_slice(w.as_bytes());
    buf.push(b'"');
}

/// An object being written: its brace at `depth`, its keys one level in.
struct Object<'b> {
    buf: &'b mut Vec<u8>,
    depth: usize,
    first: bool,
}

impl<'b> Object<'b> {
    fn open(buf: &'b mut Vec<u8>, depth: usize) -> Object<'b> {
        buf.push(b'{');
        Object { buf, depth, first: true }
    }

    fn close(self) {
        if !self.first {
            closing(self.buf, self.depth);
        }
        self.buf.push(b'}');
    }

    fn key(&mut self, name: &str) {
        line(self.buf, self.depth + 1, self.first);
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\": ");
    }

    fn num(&mut self, n: u64) {
        self.buf.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    fn bool(&mut self, b: bool) {
        self.buf.extend_from_slice(if b { b"true" } else { b"false" });
    }

    fn null(&mut self) {
        self.buf.extend_from_slice(b"null");
    }

    fn word(&mut self, w: &str) {
        word(self.buf, w);
    }

    /// Text tuplecorr formatted itself (times, endpoints, addresses, Community
    /// IDs, filters, ICMP codes): never a quote, backslash or control character.
    fn plain(&mut self, s: &str) {
        debug_assert!(!s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\'), "{s:?} needs escapes");
        word(self.buf, s);
    }

    /// Text that may hold anything (labels, names, sentences): escaped.
    fn text(&mut self, s: &str) -> io::Result<()> {
        self.serde(s)
    }

    fn text_or_null(&mut self, s: &Option<String>) -> io::Result<()> {
        match s {
            Some(s) => self.text(s),
            None => {
                self.null();
                Ok(())
            }
        }
    }

    fn some_plain(&mut self, name: &str, s: &Option<String>) {
        if let Some(s) = s {
            self.key(name);
            self.plain(s);
        }
    }

    fn some_text(&mut self, name: &str, s: &Option<String>) -> io::Result<()> {
        if let Some(s) = s {
            self.key(name);
            self.text(s)?;
        }
        Ok(())
    }

    fn some_num(&mut self, name: &str, n: Option<u64>) {
        if let Some(n) = n {
            self.key(name);
            self.num(n);
        }
    }

    /// A value through serde_json, laid out one level in.
    fn serde<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let mut ser = serde_json::Serializer::with_formatter(&mut *self.buf, Indented::at(self.depth + 1));
        value.serialize(&mut ser).map_err(io::Error::from)
    }

    /// An array one level in, each item written by `item` at the level after.
    fn array<T>(
        &mut self,
        items: &[T],
        mut item: impl FnMut(&mut Vec<u8>, usize, &T) -> io::Result<()>,
    ) -> io::Result<()> {
        if items.is_empty() {
            self.buf.extend_from_slice(b"[]");
            return Ok(());
        }
        self.buf.push(b'[');
        for (i, x) in items.iter().enumerate() {
            line(self.buf, self.depth + 2, i == 0);
            item(self.buf, self.depth + 2, x)?;
        }
        closing(self.buf, self.depth + 1);
        self.buf.push(b']');
        Ok(())
    }
}

/// Before a key or an item at `depth`: a comma unless `first`, a newline, the indentation.
fn line(buf: &mut Vec<u8>, depth: usize, first: bool) {
    if !first {
        buf.push(b',');
    }
    buf.push(b'\n');
    indent(buf, depth);
}

/// Before a closing bracket at `depth`: a newline and the indentation.
fn closing(buf: &mut Vec<u8>, depth: usize) {
    buf.push(b'\n');
    indent(buf, depth);
}

fn indent(buf: &mut Vec<u8>, depth: usize) {
    let mut left = 2 * depth;
    while left > 0 {
        let n = left.min(SPACES.len());
        buf.extend_from_slice(&SPACES[..n]);
        left -= n;
    }
}

/// serde_json's pretty layout (two spaces a level) starting `depth` levels in,
/// so a request printed alone lines up inside the report's request array.
pub(crate) struct Indented {
    depth: usize,
    has_value: bool,
}

impl Indented {
    pub(crate) fn at(depth: usize) -> Indented {
        Indented { depth, has_value: false }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        // The comma, the newline and the usual indentation in one write (a
        // request has ~120 keys and values).
        const LINE: &[u8; 2 + 32] = b",\n                                ";
        let at = usize::from(first);
        match LINE.get(at..2 + 2 * self.depth) {
            Some(line) => w.write_all(line),
            None => {
                w.write_all(&LINE[at..2])?;
                self.indent(w)
            }
        }
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        // One write for the usual depths (a request goes 5 levels deep).
        const SPACES: &[u8; 32] = b"                                ";
        let mut left = 2 * self.depth;
        while left > 0 {
            let n = left.min(SPACES.len());
            w.write_all(&SPACES[..n])?;
            left -= n;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Indented {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.newline(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.newline(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
