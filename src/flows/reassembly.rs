//! IPv4 and IPv6 fragment reassembly for one capture point, in bounded memory.
//! A datagram is keyed by the interface (and SLL packet type) it was seen on,
//! its addresses, protocol and identification, so the copies of one datagram
//! that `tcpdump -i any` sees on two interfaces are reassembled apart. Fragments
//! may come in any order (the first one last too).
//!
//! Nothing of a datagram is kept but what matching reads: the first fragment's
//! decoded headers (its `Packet`), the first [`HELD`] bytes of the datagram's
//! payload (the transport header and the prefix a flow fingerprint hashes), the
//! byte ranges received (at most [`MAX_PIECES`] disjoint ones) and counts. The
//! rest of each fragment is counted, never stored. At most
//! [`Limits::max_datagrams`] datagrams are in progress; a new one beyond that
//! ends the one nearest its timeout as incomplete (counted in `evicted`). A datagram not
//! complete [`Limits::timeout_v4_ns`] (30 s, Linux's `ipfrag_time`) or
//! [`Limits::timeout_v6_ns`] (60 s, Linux's `ip6frag_time`) after its first
//! fragment arrived ends incomplete, as the kernel drops it.
//!
//! Overlap policy (RFC 5722, and Linux since 4.19 for IPv4 too): a fragment
//! whose bytes were all received already is a duplicate — counted and
//! ignored; one that overlaps received bytes only in part spoils its datagram,
//! which then ends incomplete (the receiver drops it). So do malformed
//! fragments: no data, a non-last fragment whose length is not a multiple of
//! 8, data past 65535 bytes, a second end or data past the end, more than
//! [`MAX_PIECES`] disjoint pieces. Each is counted (`malformed`), and the first
//! of each file is named for a warning.

use crate::decode::{FragPos, Fragment, Packet};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Bytes of a datagram's payload kept: the longest TCP header (60) and the
/// longest fingerprint prefix (128).
pub const HELD: usize = 60 + 128;

/// Most disjoint byte ranges of one datagram tracked while its fragments
/// arrive (in order, they merge into one).
pub const MAX_PIECES: usize = 16;

/// Largest IP datagram (the 16-bit length fields).
const MAX_IP_LEN: u32 = 65535;

/// The reassembly's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Datagrams in progress at once (per capture point).
    pub max_datagrams: usize,
    /// An IPv4 datagram still incomplete this long after its first fragment
    /// arrived ends incomplete (ns).
    pub timeout_v4_ns: i64,
    /// The same for IPv6 (ns).
    pub timeout_v6_ns: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_datagrams: 4096, timeout_v4_ns: 30_000_000_000, timeout_v6_ns: 60_000_000_000 }
    }
}

/// Why a fragment spoiled its datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// It overlaps bytes already received, in part.
    Overlap,
    /// It carries no data.
    Empty,
    /// A fragment with more to follow whose length is not a multiple of 8.
    Unaligned,
    /// Its data ends past the largest IP datagram (65535 bytes).
    TooLong,
    /// A second last fragment with another end, or data past the end.
    PastEnd,
    /// More disjoint pieces than are tracked.
    TooManyPieces,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fault::Overlap => "it overlaps bytes of its datagram already received",
            Fault::Empty => "it carries no data",
            Fault::Unaligned => "more fragments follow it but its length is not a multiple of 8",
            Fault::TooLong => "its data ends past 65535 bytes",
            Fault::PastEnd => "its data ends past (or sets another) end of its datagram",
            Fault::TooManyPieces => "its datagram arrived in more than 16 separate pieces",
        })
    }
}

/// What the reassembly of one capture point counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FragStats {
    /// Fragments seen (first and later ones, duplicates included).
    pub fragments: u64,
    /// Datagrams reassembled whole.
    pub whole: u64,
    /// Datagrams that ended incomplete (timeout, end of capture, eviction, a
    /// fault) with their first fragment: they count in their flow.
    pub incomplete: u64,
    /// Datagrams that ended incomplete without their first fragment: no
    /// ports, no flow.
    pub orphaned: u64,
    /// Fragments whose bytes had all been received (ignored).
    pub duplicates: u64,
    /// Fragments that spoiled their datagram (see [`Fault`]).
    pub malformed: u64,
    /// Datagrams ended early to keep within `max_datagrams`.
    pub evicted: u64,
    /// Most datagrams in progress at once.
    pub most_held: u64,
}

/// A datagram the reassembly ended, with its first fragment: one packet for
/// the flow stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reassembled {
    /// The first fragment's packet as the whole datagram: `ip_len` its full
    /// size (incomplete: the header and the bytes that arrived), `payload_len`
    /// its transport payload, `fragment` None, `ts_ns` its earliest fragment's.
    pub packet: Packet,
    /// The first bytes of its transport payload known without a gap (at most
    /// [`HELD`] less the transport header).
    pub payload: Vec<u8>,
    /// Every fragment arrived and none spoiled it.
    pub whole: bool,
    /// Its payload bytes (after the IP header and extension headers) that
    /// arrived: whole, the datagram's payload length.
    pub data_len: u32,
    /// Fragments that arrived (duplicates not counted).
    pub fragments: u32,
    /// The largest of them (IP bytes).
    pub largest_fragment: u32,
}

/// Problems to warn about, since they were last taken (one file's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FragNotes {
    pub malformed: u64,
    /// The first malformed fragment: its record number and fault.
    pub first_malformed: Option<(u64, Fault)>,
    pub evicted: u64,
    /// The record that made the first eviction.
    pub first_evicted: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    interface: u32,
    packet_type: Option<u8>,
    src: IpAddr,
    dst: IpAddr,
    protocol: u8,
    id: u32,
}

/// One datagram in progress: a fixed size, whatever its fragments hold.
struct Datagram {
    first: Option<Packet>,
    first_ts: i64,
    /// Its place in `Reassembler::order`.
    order: (i64, u64),
    /// Disjoint received ranges `[start, end)` of the payload, sorted.
    pieces: [(u32, u32); MAX_PIECES],
    n_pieces: usize,
    /// Payload length, once the last fragment came.
    end: Option<u32>,
    held: [u8; HELD],
    /// Bit i: `held[i]` is known (or, before the transport payload, covered
    /// by the first fragment).
    held_known: [u64; 3],
    fragments: u32,
    largest: u32,
    fault: Option<Fault>,
}

impl Datagram {
    fn new(ts: i64, order: (i64, u64)) -> Datagram {
        Datagram {
            first: None,
            first_ts: ts,
            order,
            pieces: [(0, 0); MAX_PIECES],
            n_pieces: 0,
            end: None,
            held: [0; HELD],
            held_known: [0; 3],
            fragments: 0,
            largest: 0,
            fault: None,
        }
    }

    fn pieces(&self) -> &[(u32, u32)] {
        &self.pieces[..self.n_pieces]
    }

    fn complete(&self) -> bool {
        self.fault.is_none() && self.end.is_some_and(|e| self.pieces() == [(0, e)])
    }

    /// Marks `held[from..to]` known, writing `bytes` (at most that long) there.
    fn hold(&mut self, from: usize, to: usize, bytes: &[u8]) {
        let to = to.min(HELD);
        if from >= to {
            return;
        }
        let n = bytes.len().min(to - from);
        self.held[from..from + n].copy_from_slice(&bytes[..n]);
        // Only bytes present are known; a range without bytes (the transport
        // header of the first fragment) is marked by the caller through `to`.
        for i in from..to {
            self.held_known[i / 64] |= 1 << (i % 64);
        }
    }

    /// The number of known bytes from `from` on, without a gap.
    fn known_from(&self, from: usize) -> usize {
        (from..HELD).take_while(|&i| self.held_known[i / 64] & (1 << (i % 64)) != 0).count()
    }

    /// Adds the range `[start, end)`: Ok(false) for a duplicate.
    fn add_piece(&mut self, start: u32, end: u32) -> Result<bool, Fault> {
        let mut at = self.n_pieces;
        for (i, &(a, b)) in self.pieces().iter().enumerate() {
            if start >= a && end <= b {
                return Ok(false);
            }
            if start < b && end > a {
                return Err(Fault::Overlap);
            }
            if end <= a {
                at = at.min(i);
            }
        }
        let touch_before = at > 0 && self.pieces[at - 1].1 == start;
        let touch_after = at < self.n_pieces && self.pieces[at].0 == end;
        match (touch_before, touch_after) {
            (true, true) => {
                self.pieces[at - 1].1 = self.pieces[at].1;
                self.pieces.copy_within(at + 1..self.n_pieces, at);
                self.n_pieces -= 1;
            }
            (true, false) => self.pieces[at - 1].1 = end,
            (false, true) => self.pieces[at].0 = start,
            (false, false) => {
                if self.n_pieces == MAX_PIECES {
                    return Err(Fault::TooManyPieces);
                }
                self.pieces.copy_within(at..self.n_pieces, at + 1);
                self.pieces[at] = (start, end);
                self.n_pieces += 1;
            }
        }
        Ok(true)
    }
}

/// The reassembly of one capture point.
pub struct Reassembler {
    limits: Limits,
    map: FxHashMap<Key, Datagram>,
    /// Datagrams by (deadline, arrival): the next to time out first.
    order: BTreeMap<(i64, u64), Key>,
    serial: u64,
    stats: FragStats,
    notes: FragNotes,
}

impl Default for Reassembler {
    fn default() -> Self {
        Reassembler::new(Limits::default())
    }
}

impl Reassembler {
    pub fn new(limits: Limits) -> Reassembler {
        Reassembler {
            limits: Limits { max_datagrams: limits.max_datagrams.max(1), ..limits },
            map: FxHashMap::default(),
            order: BTreeMap::new(),
            serial: 0,
            stats: FragStats::default(),
            notes: FragNotes::default(),
        }
    }

    /// No datagram in progress.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Datagrams in progress.
    pub fn held(&self) -> usize {
        self.map.len()
    }

    /// Bytes held for the datagrams in progress (each a fixed size).
    pub fn held_bytes(&self) -> usize {
        self.map.len() * std::mem::size_of::<Datagram>()
    }

    pub fn stats(&self) -> &FragStats {
        &self.stats
    }

    /// The problems noted since the last call.
    pub fn take_notes(&mut self) -> FragNotes {
        std::mem::take(&mut self.notes)
    }

    /// Ends the datagrams whose time ran out before `now_ns` (into `out`).
    pub fn expire(&mut self, now_ns: i64, out: &mut Vec<Reassembled>) {
        while let Some((&(deadline, _), &key)) = self.order.first_key_value() {
            if deadline >= now_ns {
                break;
            }
            self.order.pop_first();
            if let Some(d) = self.map.remove(&key) {
                self.end(d, out);
            }
        }
    }

    /// Ends every datagram in progress (the capture ended).
    pub fn flush(&mut self, out: &mut Vec<Reassembled>) {
        while let Some((_, key)) = self.order.pop_first() {
            if let Some(d) = self.map.remove(&key) {
                self.end(d, out);
            }
        }
    }

    /// Adds fragment `p` (`payload`: its captured transport payload, or for a
    /// later fragment its data); a datagram it completes goes to `out`.
    pub fn add(&mut self, p: &Packet, payload: &[u8], out: &mut Vec<Reassembled>) {
        self.stats.fragments += 1;
        let f = p.frag;
        let key = Key {
            interface: super::key::interface_of(p),
            packet_type: p.sll_packet_type,
            src: p.src,
            dst: p.dst,
            protocol: p.protocol(),
            id: f.id,
        };
        if !self.map.contains_key(&key) {
            if self.map.len() >= self.limits.max_datagrams {
                self.evict_oldest(p.record, out);
            }
            let timeout = if p.src.is_ipv6() { self.limits.timeout_v6_ns } else { self.limits.timeout_v4_ns };
            self.serial += 1;
            let order = (p.ts_ns.saturating_add(timeout), self.serial);
            self.order.insert(order, key);
            self.map.insert(key, Datagram::new(p.ts_ns, order));
            self.stats.most_held = self.stats.most_held.max(self.map.len() as u64);
        }
        let Some(d) = self.map.get_mut(&key) else { return };
        d.first_ts = d.first_ts.min(p.ts_ns);
        if d.fault.is_some() {
            // A spoiled datagram absorbs the rest of its fragments until it ends
            // (its first fragment still names its flow).
            d.fragments = d.fragments.saturating_add(1);
            d.largest = d.largest.max(p.ip_len);
            if p.fragment == Fragment::First && d.first.is_none() {
                d.first = Some(p.clone());
            }
            return;
        }
        match place(d, p, f, payload) {
            Ok(false) => self.stats.duplicates += 1,
            Ok(true) => {
                if d.complete() {
                    if let Some(d) = self.map.remove(&key) {
                        self.order.remove(&d.order);
                        self.end(d, out);
                    }
                }
            }
            Err(fault) => {
                d.fault = Some(fault);
                d.fragments = d.fragments.saturating_add(1);
                d.largest = d.largest.max(p.ip_len);
                if p.fragment == Fragment::First && d.first.is_none() {
                    d.first = Some(p.clone());
                }
                self.stats.malformed += 1;
                self.notes.malformed += 1;
                self.notes.first_malformed.get_or_insert((p.record, fault));
            }
        }
    }

    fn evict_oldest(&mut self, record: u64, out: &mut Vec<Reassembled>) {
        // The one nearest its timeout (of one IP version: the oldest).
        let oldest = self.order.pop_first().map(|(_, k)| k);
        if let Some(d) = oldest.and_then(|k| self.map.remove(&k)) {
            self.stats.evicted += 1;
            self.notes.evicted += 1;
            self.notes.first_evicted.get_or_insert(record);
            self.end(d, out);
        }
    }

    /// Ends datagram `d`: whole or not, with its first fragment it is a packet.
    fn end(&mut self, d: Datagram, out: &mut Vec<Reassembled>) {
        let whole = d.complete();
        let Some(first) = d.first.as_ref() else {
            self.stats.orphaned += 1;
            return;
        };
        if whole {
            self.stats.whole += 1;
        } else {
            self.stats.incomplete += 1;
        }
        let header = first.ip_len.saturating_sub(first.frag.len);
        let transport = first.frag.len.saturating_sub(first.payload_len);
        let received: u32 = d.pieces().iter().map(|&(a, b)| b - a).sum();
        let reach = d.pieces().last().map_or(0, |p| p.1);
        let (data, payload_end) = match d.end {
            Some(e) if whole => (e, e),
            _ => (received, reach),
        };
        let at = (transport as usize).min(HELD);
        let known = d.known_from(at);
        let payload = d.held[at..at + known].to_vec();
        let mut packet = first.clone();
        packet.ts_ns = d.first_ts;
        packet.fragment = Fragment::None;
        packet.ip_len = header.saturating_add(data);
        packet.payload_len = payload_end.saturating_sub(transport);
        packet.payload_captured = (payload.len() as u32).min(packet.payload_len);
        out.push(Reassembled {
            packet,
            payload,
            whole,
            data_len: data,
            fragments: d.fragments,
            largest_fragment: d.largest,
        });
    }
}

/// Places fragment `p` in `d`: Ok(true) when it added bytes, Ok(false) for a
/// duplicate, Err when it spoils the datagram.
fn place(d: &mut Datagram, p: &Packet, f: FragPos, payload: &[u8]) -> Result<bool, Fault> {
    if f.len == 0 {
        return Err(Fault::Empty);
    }
    if f.more && !f.len.is_multiple_of(8) {
        return Err(Fault::Unaligned);
    }
    let end = f.offset.saturating_add(f.len);
    let header = if p.src.is_ipv6() { 0 } else { p.ip_len.saturating_sub(f.len) };
    if end.saturating_add(header) > MAX_IP_LEN {
        return Err(Fault::TooLong);
    }
    let reach = d.pieces().last().map_or(0, |p| p.1);
    match (d.end, f.more) {
        (Some(e), _) if end > e => return Err(Fault::PastEnd),
        (Some(e), false) if end != e => return Err(Fault::PastEnd),
        (None, false) if reach > end => return Err(Fault::PastEnd),
        _ => {}
    }
    if !d.add_piece(f.offset, end)? {
        return Ok(false);
    }
    if !f.more {
        d.end = Some(end);
    }
    d.fragments = d.fragments.saturating_add(1);
    d.largest = d.largest.max(p.ip_len);
    let start = f.offset as usize;
    if p.fragment == Fragment::First {
        // Its transport header is decoded in its packet; its payload follows it.
        let transport = f.len.saturating_sub(p.payload_len) as usize;
        d.hold(0, transport, &[]);
        d.hold(transport, transport.saturating_add(payload.len()), payload);
        d.first = Some(p.clone());
    } else {
        d.hold(start, start.saturating_add(payload.len()), payload);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Transport, UdpInfo};
    use crate::read::{LinkType, RawRecord};

    /// A UDP datagram 198.18.0.1:4000 -> 198.18.0.2:5000 of `len` payload
    /// bytes (byte i = i % 251): its header and payload.
    fn udp_data(len: usize) -> Vec<u8> {
        let mut data = Vec::with_capacity(8 + len);
        data.extend_from_slice(&4000u16.to_be_bytes());
        data.extend_from_slice(&5000u16.to_be_bytes());
        data.extend_from_slice(&u16::try_from(8 + len).unwrap().to_be_bytes());
        data.extend_from_slice(&[0, 0]);
        data.extend((0..len).map(|i| (i % 251) as u8));
        data
    }

    /// `data` cut into fragments of `size` bytes (a multiple of 8), each made
    /// by `piece(offset, more, chunk)`.
    fn cut(data: &[u8], size: usize, piece: impl Fn(usize, bool, &[u8]) -> Vec<u8>) -> Vec<Vec<u8>> {
        (data.chunks(size).enumerate())
            .map(|(k, chunk)| piece(k * size, k * size + chunk.len() < data.len(), chunk))
            .collect()
    }

    /// The datagram of `udp_data(len)` as IPv4 fragments, in order.
    fn v4_fragments(id: u16, len: usize, size: usize) -> Vec<Vec<u8>> {
        cut(&udp_data(len), size, |offset, more, chunk| v4_piece(id, offset, more, chunk))
    }

    fn v4_piece(id: u16, offset: usize, more: bool, chunk: &[u8]) -> Vec<u8> {
        let total = u16::try_from(20 + chunk.len()).unwrap().to_be_bytes();
        let field = (u16::try_from(offset / 8).unwrap() | if more { 0x2000 } else { 0 }).to_be_bytes();
        let idb = id.to_be_bytes();
        let mut b = vec![0x45, 0, total[0], total[1], idb[0], idb[1], field[0], field[1], 64, 17, 0, 0];
        b.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
        b.extend_from_slice(chunk);
        b
    }

    /// The same datagram as IPv6 fragments (fragment header, id `id`).
    fn v6_fragments(id: u32, len: usize, size: usize) -> Vec<Vec<u8>> {
        cut(&udp_data(len), size, |offset, more, chunk| {
            let plen = u16::try_from(8 + chunk.len()).unwrap().to_be_bytes();
            let mut b = vec![0x60, 0, 0, 0, plen[0], plen[1], 44, 64];
            b.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            b.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            let field = (u16::try_from(offset / 8).unwrap() << 3 | u16::from(more)).to_be_bytes();
            b.extend_from_slice(&[17, 0, field[0], field[1]]);
            b.extend_from_slice(&id.to_be_bytes());
            b.extend_from_slice(chunk);
            b
        })
    }

    fn packet(bytes: &[u8], ts_ns: i64, record: u64) -> (Packet, Vec<u8>) {
        let rec = RawRecord {
            ts_ns,
            interface: 0,
            link_type: LinkType::RawIp,
            data: bytes,
            orig_len: bytes.len() as u32,
            record,
            byte_offset: 0,
        };
        let p = decode(&rec).unwrap();
        let payload = p.payload(bytes).to_vec();
        (p, payload)
    }

    /// Feeds `frags` (in the given order, 1 ms apart) and gives what ended.
    fn feed(r: &mut Reassembler, frags: &[Vec<u8>]) -> Vec<Reassembled> {
        let mut out = Vec::new();
        for (i, b) in frags.iter().enumerate() {
            let (p, payload) = packet(b, 1_000_000 * i as i64, i as u64 + 1);
            r.expire(p.ts_ns, &mut out);
            r.add(&p, &payload, &mut out);
        }
        out
    }

    fn expected_prefix(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn in_order_fragments_make_one_whole_datagram() {
        let frags = v4_fragments(7, 5000, 1480);
        assert_eq!(frags.len(), 4);
        let mut r = Reassembler::default();
        let out = feed(&mut r, &frags);
        assert_eq!(out.len(), 1);
        let d = &out[0];
        assert!(d.whole);
        assert_eq!((d.fragments, d.largest_fragment), (4, 1500));
        assert_eq!((d.packet.ip_len, d.packet.payload_len, d.packet.fragment), (5028, 5000, Fragment::None));
        assert_eq!(d.packet.transport, Transport::Udp(UdpInfo { src_port: 4000, dst_port: 5000 }));
        assert_eq!(d.payload, expected_prefix(HELD - 8));
        assert_eq!(d.packet.payload_captured as usize, HELD - 8);
        assert!(r.is_empty());
        assert_eq!((r.stats().fragments, r.stats().whole, r.stats().incomplete), (4, 1, 0));
    }

    #[test]
    fn out_of_order_with_the_first_fragment_last() {
        let mut frags = v4_fragments(7, 5000, 1480);
        frags.reverse();
        let mut r = Reassembler::default();
        let out = feed(&mut r, &frags);
        assert_eq!(out.len(), 1);
        assert!(out[0].whole);
        assert_eq!((out[0].packet.ip_len, out[0].fragments), (5028, 4));
        // Earliest fragment's time, though the first fragment came last.
        assert_eq!(out[0].packet.ts_ns, 0);
        // Tiny fragments: the payload prefix comes from later fragments.
        let mut tiny = v4_fragments(8, 300, 16);
        tiny.swap(0, 5);
        tiny.swap(1, 9);
        let out = feed(&mut r, &tiny);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].packet.ip_len, out[0].fragments), (328, 20));
        assert_eq!(out[0].payload, expected_prefix(HELD - 8));
    }

    #[test]
    fn duplicates_are_counted_and_ignored() {
        let frags = v4_fragments(7, 3000, 1480);
        let twice =
            [frags[0].clone(), frags[1].clone(), frags[1].clone(), frags[0].clone(), frags[2].clone()];
        let mut r = Reassembler::default();
        let out = feed(&mut r, &twice);
        assert_eq!(out.len(), 1);
        assert!(out[0].whole);
        assert_eq!((out[0].fragments, out[0].packet.ip_len), (3, 3028));
        assert_eq!(r.stats().duplicates, 2);
    }

    #[test]
    fn a_partial_overlap_spoils_the_datagram() {
        let frags = v4_fragments(7, 3000, 1480);
        // A fragment at offset 1480 - 8 overlapping the first by 8 bytes.
        let overlapping = v4_piece(7, 1472, true, &[0xaa; 16]);
        let mut r = Reassembler::default();
        let mut all = vec![frags[0].clone(), overlapping];
        all.extend(frags[1..].iter().cloned());
        let mut out = feed(&mut r, &all);
        assert!(out.is_empty(), "never whole");
        r.flush(&mut out);
        assert_eq!(out.len(), 1);
        assert!(!out[0].whole);
        assert_eq!(out[0].fragments, 4, "every fragment counted");
        assert_eq!((r.stats().malformed, r.stats().incomplete), (1, 1));
        assert_eq!(r.take_notes().first_malformed, Some((2, Fault::Overlap)));
        assert_eq!(r.take_notes(), FragNotes::default(), "taken");
    }

    #[test]
    fn a_missing_fragment_ends_incomplete_with_what_arrived() {
        let frags = v4_fragments(7, 8000, 1376);
        assert_eq!(frags.len(), 6);
        let some: Vec<Vec<u8>> = [0, 1, 3, 5].iter().map(|&i| frags[i].clone()).collect();
        let mut r = Reassembler::default();
        let mut out = feed(&mut r, &some);
        assert!(out.is_empty());
        assert_eq!(r.held(), 1);
        r.flush(&mut out);
        assert_eq!(out.len(), 1);
        let d = &out[0];
        assert!(!d.whole);
        assert_eq!(d.fragments, 4);
        // Header + the bytes that arrived: 3 × 1376 + the last (8008 - 5 × 1376 = 1128).
        assert_eq!(d.packet.ip_len, 20 + 3 * 1376 + 1128);
        assert_eq!(d.payload, expected_prefix(HELD - 8), "the prefix is there");
        assert_eq!((r.stats().incomplete, r.stats().whole), (1, 0));
        // Without its first fragment: no packet, counted as orphaned.
        let later: Vec<Vec<u8>> = frags[1..].to_vec();
        let mut out = feed(&mut r, &later);
        r.flush(&mut out);
        assert!(out.is_empty());
        assert_eq!(r.stats().orphaned, 1);
    }

    #[test]
    fn a_datagram_times_out_after_30_seconds() {
        let frags = v4_fragments(7, 3000, 1480);
        let mut r = Reassembler::default();
        let mut out = Vec::new();
        let (p0, pl0) = packet(&frags[0], 0, 1);
        r.add(&p0, &pl0, &mut out);
        let (p1, pl1) = packet(&frags[1], 30_000_000_000, 2);
        r.expire(p1.ts_ns, &mut out);
        r.add(&p1, &pl1, &mut out);
        assert!(out.is_empty(), "30 s exactly: still in time");
        let (p2, pl2) = packet(&frags[2], 30_000_000_001, 3);
        r.expire(p2.ts_ns, &mut out);
        assert_eq!(out.len(), 1, "timed out before the last fragment");
        assert!(!out[0].whole);
        r.add(&p2, &pl2, &mut out);
        r.flush(&mut out);
        assert_eq!((r.stats().incomplete, r.stats().orphaned, r.stats().whole), (1, 1, 0));
        // IPv6 waits 60 s.
        let v6 = v6_fragments(9, 3000, 1448);
        let mut r = Reassembler::default();
        let mut out = Vec::new();
        let (p, pl) = packet(&v6[0], 0, 1);
        r.add(&p, &pl, &mut out);
        r.expire(59_000_000_000, &mut out);
        assert!(out.is_empty());
        r.expire(60_000_000_001, &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn the_cap_on_datagrams_evicts_the_oldest() {
        let limits = Limits { max_datagrams: 3, ..Limits::default() };
        let mut r = Reassembler::new(limits);
        let mut out = Vec::new();
        for id in 0..10u16 {
            let frags = v4_fragments(id, 3000, 1480);
            let (p, pl) = packet(&frags[0], i64::from(id), u64::from(id) + 1);
            r.add(&p, &pl, &mut out);
            assert!(r.held() <= 3);
        }
        assert_eq!(out.len(), 7, "7 evicted, each with its first fragment");
        assert_eq!(out[0].packet.frag.id, 0, "the oldest first");
        assert_eq!((r.stats().evicted, r.stats().most_held), (7, 3));
        let notes = r.take_notes();
        assert_eq!((notes.evicted, notes.first_evicted), (7, Some(4)));
        // A datagram's own bytes are bounded whatever it carries.
        assert!(r.held_bytes() <= 3 * std::mem::size_of::<Datagram>());
        assert!(std::mem::size_of::<Datagram>() < 1024, "{}", std::mem::size_of::<Datagram>());
    }

    #[test]
    fn ipv6_fragments_reassemble_with_their_32_bit_id() {
        let mut frags = v6_fragments(0xdead_beef, 4000, 1448);
        assert_eq!(frags.len(), 3);
        frags.swap(0, 2);
        let mut r = Reassembler::default();
        let out = feed(&mut r, &frags);
        assert_eq!(out.len(), 1);
        let d = &out[0];
        assert!(d.whole);
        // 40-byte header + 8-byte fragment header (kept from the first) + 4008.
        assert_eq!((d.packet.ip_len, d.packet.payload_len, d.fragments), (40 + 8 + 4008, 4000, 3));
        assert_eq!(d.packet.frag.id, 0xdead_beef);
        assert_eq!(d.payload, expected_prefix(HELD - 8));
        // Another id is another datagram.
        let other = v6_fragments(1, 4000, 1448);
        let mut out = feed(&mut r, &other[..2]);
        r.flush(&mut out);
        assert_eq!((out.len(), out[0].whole), (1, false));
    }

    #[test]
    fn malformed_fragments_spoil_their_datagram_without_panic() {
        let mut r = Reassembler::default();
        let cases: [(Vec<u8>, Fault); 4] = [
            (v4_piece(1, 0, true, &[0; 12]), Fault::Unaligned),
            (v4_piece(2, 65528, false, &[0; 16]), Fault::TooLong),
            (v4_piece(3, 8, true, &[]), Fault::Empty),
            (v4_piece(4, 8, true, &[0; 16]), Fault::PastEnd),
        ];
        let mut out = Vec::new();
        // Datagram 4 first gets its end at 16, then data past it.
        let (p, pl) = packet(&v4_piece(4, 8, false, &[0; 8]), 0, 1);
        r.add(&p, &pl, &mut out);
        for (i, (b, fault)) in cases.iter().enumerate() {
            let (p, pl) = packet(b, 1, i as u64 + 2);
            r.add(&p, &pl, &mut out);
            assert_eq!(r.take_notes().first_malformed, Some((i as u64 + 2, *fault)), "case {i}");
        }
        assert_eq!(r.stats().malformed, 4);
        // The unaligned one was a first fragment: its datagram ends incomplete, in its flow.
        r.flush(&mut out);
        let first: Vec<&Reassembled> = out.iter().filter(|d| d.packet.frag.id == 1).collect();
        assert_eq!((first.len(), first[0].whole, first[0].fragments), (1, false, 1));
        // Too many disjoint pieces.
        let mut r = Reassembler::default();
        for k in 0..=MAX_PIECES {
            let (p, pl) = packet(&v4_piece(9, 16 + k * 32, true, &[0; 8]), 0, k as u64);
            r.add(&p, &pl, &mut out);
        }
        assert_eq!(r.take_notes().first_malformed.map(|m| m.1), Some(Fault::TooManyPieces));
    }

    #[test]
    fn a_fragment_flood_stays_within_the_caps() {
        // xorshift64: deterministic, no dev-dependency.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let limits = Limits { max_datagrams: 64, timeout_v4_ns: 1_000_000, timeout_v6_ns: 2_000_000 };
        let mut r = Reassembler::new(limits);
        let mut out = Vec::new();
        let mut ts = 0i64;
        for round in 0..50_000u64 {
            let id = (next() % 512) as u16;
            let offset = (next() % 8200) as usize * 8;
            let len = (next() % 200) as usize;
            let more = next() % 4 != 0;
            let b = if round % 7 == 0 {
                v6_fragments(u32::from(id), 300 + len, 64).swap_remove((next() % 5) as usize)
            } else {
                v4_piece(id, offset, more, &vec![0x5a; len])
            };
            ts += (next() % 50_000) as i64;
            let (p, pl) = packet(&b, ts, round);
            if p.fragment == Fragment::None {
                continue;
            }
            r.expire(ts, &mut out);
            r.add(&p, &pl, &mut out);
            assert!(r.held() <= 64, "round {round}: {}", r.held());
            assert!(r.held_bytes() <= 64 * std::mem::size_of::<Datagram>());
            for d in out.drain(..) {
                assert!(d.payload.len() <= HELD);
                assert!(d.packet.payload_captured <= d.packet.payload_len);
            }
        }
        r.flush(&mut out);
        assert!(r.is_empty());
        let s = r.stats();
        assert!(s.most_held <= 64);
        assert_eq!(s.whole + s.incomplete + s.orphaned, r.serial, "every datagram ended once");
    }
}
