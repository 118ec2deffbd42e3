//! Stream fingerprints: the first K bytes of one direction of a flow, reassembled
//! by position in the stream (TCP: sequence number relative to the ISN), hashed
//! with xxh3 at prefix lengths 16/32/64/128. Re-segmentation between capture
//! points (GRO, TSO, MTU) changes nothing; a short snaplen only shortens what is
//! known. Takes payload bytes with their stream position; gives `Fingerprint`.

use xxhash_rust::xxh3::xxh3_64;

/// The prefix lengths at which streams are compared.
pub const PREFIX_LENGTHS: [usize; 4] = [16, 32, 64, 128];

/// Shortest common prefix that makes a fingerprint match strong evidence.
pub const STRONG_PREFIX: usize = 32;

/// What is known of the first bytes of one direction of a stream. Packed
/// (48 bytes, not 88 as options would take): every flow carries two.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// xxh3 of the first 16/32/64/128 bytes, for each length fully known (0 when not).
    hashes: [u64; 4],
    /// xxh3 of the whole stream, when known (0 when not).
    whole_hash: u64,
    whole_len: u16,
    /// Bit i: `hashes[i]` is known; bit 4: the whole stream is.
    known: u8,
}

/// Bits of `known`: the four prefixes, the whole stream.
const PREFIXES: u8 = 0x0f;
const WHOLE: u8 = 1 << 4;

impl Fingerprint {
    /// xxh3 of the first `PREFIX_LENGTHS[i]` bytes, when all of them are known.
    pub fn prefix(&self, i: usize) -> Option<u64> {
        (i < self.hashes.len() && self.known & (1 << i) != 0).then(|| self.hashes[i])
    }

    /// The whole stream when it was shorter than the longest prefix and its end
    /// is known (a FIN, or a datagram): (length, xxh3 of all of it).
    pub fn whole(&self) -> Option<(u16, u64)> {
        (self.known & WHOLE != 0).then_some((self.whole_len, self.whole_hash))
    }

    pub(crate) fn set_prefix(&mut self, i: usize, hash: u64) {
        self.hashes[i] = hash;
        self.known |= 1 << i;
    }

    pub(crate) fn set_whole(&mut self, len: u16, hash: u64) {
        (self.whole_len, self.whole_hash) = (len, hash);
        self.known |= WHOLE;
    }

    /// No bytes known.
    pub fn is_empty(&self) -> bool {
        self.prefix(0).is_none() && self.whole().is_none()
    }

    /// The key used to find candidates: the 16-byte prefix hash, or the whole
    /// (short) stream's hash.
    pub fn join_key(&self) -> Option<u64> {
        self.prefix(0).or(self.whole().map(|(len, h)| h ^ u64::from(len).rotate_left(48)))
    }

    /// The key of the datagram this fingerprint was taken from, as
    /// [`datagram_key`] gives it for a later datagram: its 32-byte prefix hash,
    /// or the hash of all of a shorter one. None when fewer bytes are known.
    pub fn datagram_key(&self) -> Option<u64> {
        self.prefix(1).or_else(|| {
            self.whole()
                .filter(|&(len, _)| usize::from(len) < STRONG_PREFIX)
                .map(|(len, h)| whole_key(len, h))
        })
    }

    /// True when both know some common length, so `agreement` is a real comparison.
    pub fn agreement_known(&self, other: &Fingerprint) -> bool {
        (self.whole().is_some() && other.whole().is_some()) || self.known & other.known & PREFIXES != 0
    }

    /// Compares two fingerprints at the longest length both know. Returns the
    /// number of bytes compared when they agree, None when they differ or share
    /// nothing.
    pub fn agreement(&self, other: &Fingerprint) -> Option<usize> {
        if let (Some(a), Some(b)) = (self.whole(), other.whole()) {
            return (a == b).then_some(a.0 as usize);
        }
        // One side knows the whole short stream: the other must know at least its
        // prefixes up to that length and agree there.
        for i in (0..PREFIX_LENGTHS.len()).rev() {
            if let (Some(a), Some(b)) = (self.prefix(i), other.prefix(i)) {
                return (a == b).then_some(PREFIX_LENGTHS[i]);
            }
        }
        None
    }
}

/// The key of a datagram of `len` bytes whose first bytes (`captured`, as
/// far as the capture kept them) are known: xxh3 of its first 32 bytes
/// (`STRONG_PREFIX`), or of all of a shorter one mixed with its length — the
/// same value [`Fingerprint::datagram_key`] gives for a flow's first datagram.
/// None when the capture cut it shorter than that, or it is empty.
pub fn datagram_key(captured: &[u8], len: u64) -> Option<u64> {
    if len >= STRONG_PREFIX as u64 {
        captured.get(..STRONG_PREFIX).map(xxh3_64)
    } else {
        let n = usize::try_from(len).ok().filter(|&n| n > 0)?;
        captured.get(..n).map(|b| whole_key(n as u16, xxh3_64(b)))
    }
}

/// A whole short datagram's hash mixed with its length.
fn whole_key(len: u16, hash: u64) -> u64 {
    hash ^ u64::from(len).rotate_left(48)
}

/// The bytes of a stream's prefix kept for a `limit` asked for (1 to 128).
fn prefix_len(limit: usize) -> usize {
    limit.clamp(1, 128)
}

/// Collects the first `limit` (≤ 128) bytes of a stream from segments in any order.
#[derive(Clone, Debug)]
pub struct StreamPrefix {
    bytes: [u8; 128],
    /// Bit i set: byte i is known.
    known: u128,
    limit: u8,
    /// Stream length when the end of the stream is known.
    end: Option<u32>,
}

impl StreamPrefix {
    pub fn new(limit: usize) -> StreamPrefix {
        StreamPrefix { bytes: [0; 128], known: 0, limit: prefix_len(limit) as u8, end: None }
    }

    /// Number of leading bytes known without a gap.
    pub fn contiguous(&self) -> usize {
        (self.known.trailing_ones() as usize).min(self.limit as usize)
    }

    /// True when nothing more can be learned.
    pub fn is_full(&self) -> bool {
        let c = self.contiguous();
        c >= self.limit as usize || self.end.is_some_and(|e| c >= e as usize)
    }

    /// Records `data` found at stream offset `pos` (0 = first byte after the SYN).
    pub fn add(&mut self, pos: u64, data: &[u8]) {
        let limit = self.limit as u64;
        if pos >= limit || data.is_empty() {
            return;
        }
        let start = pos as usize;
        let n = data.len().min(limit as usize - start);
        self.bytes[start..start + n].copy_from_slice(&data[..n]);
        let mask = if n >= 128 { u128::MAX } else { ((1u128 << n) - 1) << start };
        self.known |= mask;
    }

    /// The stream ends at `len` bytes (FIN position, or a datagram's length).
    pub fn set_end(&mut self, len: u64) {
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        self.end = Some(self.end.map_or(len, |e| e.min(len)));
    }

    /// Hashes what is known.
    pub fn fingerprint(&self) -> Fingerprint {
        fingerprint_of(&self.bytes[..self.contiguous()], self.end)
    }
}

/// The fingerprint of a stream whose first `known.len()` bytes are `known`
/// (no gap) and whose length is `end` when its end is known.
fn fingerprint_of(known: &[u8], end: Option<u32>) -> Fingerprint {
    let c = known.len();
    let mut fp = Fingerprint::default();
    for (i, &len) in PREFIX_LENGTHS.iter().enumerate() {
        if c >= len {
            fp.set_prefix(i, xxh3_64(&known[..len]));
        }
    }
    if let Some(end) = end {
        let end = end as usize;
        if end > 0 && end <= c && end < PREFIX_LENGTHS[PREFIX_LENGTHS.len() - 1] {
            fp.set_whole(end as u16, xxh3_64(&known[..end]));
        }
    }
    fp
}

/// One direction's prefix while the flow table learns it: nothing yet, its
/// bytes so far (boxed, so a flow without payload pays 8 bytes for it), or
/// done: nothing more can be learned (`StreamPrefix::is_full`), its
/// fingerprint was given to the flow and the bytes are freed. So the table
/// holds 128-byte buffers only for streams still being learned, not for every
/// flow of the capture. Once done, later segments change nothing: a
/// retransmission that rewrites bytes already known, or a FIN below them,
/// no longer alters a fingerprint (both are impossible in a sound stream).
#[derive(Debug, Default)]
pub enum Learning {
    #[default]
    Nothing,
    Bytes(Box<StreamPrefix>),
    Done,
}

impl Learning {
    /// [`StreamPrefix::add`] (a prefix of `limit` bytes); gives the fingerprint
    /// when the prefix has just become final.
    pub fn add(&mut self, limit: usize, pos: u64, data: &[u8]) -> Option<Fingerprint> {
        if data.is_empty() || pos >= limit as u64 {
            return None; // nothing to learn: no buffer for it
        }
        // A first segment that holds the whole prefix (most responses, any
        // bulk stream): final at once, so no buffer is made for it.
        let whole = prefix_len(limit);
        if pos == 0 && data.len() >= whole && matches!(self, Learning::Nothing) {
            *self = Learning::Done;
            return Some(fingerprint_of(&data[..whole], None));
        }
        self.learn(limit, |p| p.add(pos, data))
    }

    /// [`StreamPrefix::set_end`]; gives the fingerprint when the prefix has just
    /// become final.
    pub fn set_end(&mut self, limit: usize, len: u64) -> Option<Fingerprint> {
        self.learn(limit, |p| p.set_end(len))
    }

    fn learn(&mut self, limit: usize, step: impl FnOnce(&mut StreamPrefix)) -> Option<Fingerprint> {
        if matches!(self, Learning::Done) {
            return None;
        }
        if matches!(self, Learning::Nothing) {
            *self = Learning::Bytes(Box::new(StreamPrefix::new(limit)));
        }
        let Learning::Bytes(p) = self else { return None };
        step(p);
        if !p.is_full() {
            return None;
        }
        let fp = p.fingerprint();
        *self = Learning::Done;
        Some(fp)
    }

    /// The fingerprint of a prefix still being learned when the capture ends;
    /// None when nothing was learned or it was already given.
    pub fn finish(self) -> Option<Fingerprint> {
        match self {
            Learning::Bytes(p) => Some(p.fingerprint()),
            Learning::Nothing | Learning::Done => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 198.19.96.10\r\nUser-Agent: lab\r\nAccept: */*\r\nX-Marker: TCMARK-0001\r\n\r\n";

    #[test]
    fn resegmented_stream_gives_the_same_fingerprint() {
        let mut one = StreamPrefix::new(128);
        one.add(0, REQUEST);
        let mut pieces = StreamPrefix::new(128);
        // Out of order, overlapping, MSS-sized pieces.
        pieces.add(40, &REQUEST[40..80]);
        pieces.add(0, &REQUEST[..30]);
        pieces.add(25, &REQUEST[25..50]);
        pieces.add(80, &REQUEST[80..]);
        assert_eq!(one.fingerprint(), pieces.fingerprint());
        assert!(one.fingerprint().prefix(2).is_some());
    }

    #[test]
    fn learning_holds_no_buffer_until_there_are_bytes_to_learn() {
        let mut l = Learning::default();
        assert_eq!(l.add(128, 0, b""), None);
        assert_eq!(l.add(128, 128, b"past the prefix"), None);
        assert!(matches!(l, Learning::Nothing));
        assert_eq!(l.finish(), None);
    }

    #[test]
    fn learning_gives_the_fingerprint_once_when_final_and_frees_the_bytes() {
        let mut whole = StreamPrefix::new(64);
        whole.add(0, REQUEST);
        let mut l = Learning::default();
        assert_eq!(l.add(64, 30, &REQUEST[30..]), None, "a gap: not final");
        assert!(matches!(l, Learning::Bytes(_)));
        assert_eq!(l.add(64, 0, &REQUEST[..30]), Some(whole.fingerprint()));
        assert!(matches!(l, Learning::Done));
        // Done: later segments (even rewriting known bytes) change nothing.
        assert_eq!(l.add(64, 0, b"XXXXXXXXXXXXXXXX"), None);
        assert_eq!(l.set_end(64, 10), None);
        assert_eq!(l.finish(), None);
    }

    #[test]
    fn a_first_segment_holding_the_whole_prefix_gives_the_buffered_fingerprint_without_a_buffer() {
        let segment = REQUEST.repeat(3); // 294 bytes
        for limit in [1, 16, 64, 100, 128, 200] {
            let mut buffered = StreamPrefix::new(limit);
            buffered.add(0, &segment);
            let mut l = Learning::default();
            assert_eq!(l.add(limit, 0, &segment), Some(buffered.fingerprint()), "limit {limit}");
            assert!(matches!(l, Learning::Done));
            // A first segment one byte short of the prefix is buffered, and
            // its last byte makes the same fingerprint.
            let whole = limit.min(128);
            if whole > 1 {
                let mut short = Learning::default();
                assert_eq!(short.add(limit, 0, &segment[..whole - 1]), None);
                assert!(matches!(short, Learning::Bytes(_)));
                assert_eq!(
                    short.add(limit, whole as u64 - 1, &segment[whole - 1..]),
                    Some(buffered.fingerprint())
                );
            }
        }
    }

    #[test]
    fn learning_a_short_stream_ends_with_its_fin_even_when_the_fin_comes_first() {
        let mut want = StreamPrefix::new(128);
        want.add(0, b"ping\n");
        want.set_end(5);
        let mut l = Learning::default();
        assert_eq!(l.add(128, 3, b"g\n"), None);
        assert_eq!(l.set_end(128, 5), None, "bytes 0..3 still missing");
        let fp = l.add(128, 0, b"pin").expect("final once bytes reach the end");
        assert_eq!(fp, want.fingerprint());
        assert!(fp.whole().is_some());
    }

    #[test]
    fn learning_unfinished_at_the_end_gives_what_is_known() {
        let mut want = StreamPrefix::new(128);
        want.add(0, &REQUEST[..40]);
        let mut l = Learning::default();
        assert_eq!(l.add(128, 0, &REQUEST[..40]), None);
        assert_eq!(l.finish(), Some(want.fingerprint()));
    }

    #[test]
    fn a_gap_stops_the_prefix() {
        let mut s = StreamPrefix::new(128);
        s.add(0, &REQUEST[..20]);
        s.add(40, &REQUEST[40..]);
        assert_eq!(s.contiguous(), 20);
        let fp = s.fingerprint();
        assert!(fp.prefix(0).is_some() && fp.prefix(1).is_none());
    }

    #[test]
    fn short_snaplen_side_agrees_at_the_common_length() {
        let mut full = StreamPrefix::new(128);
        full.add(0, REQUEST);
        let mut cut = StreamPrefix::new(128);
        cut.add(0, &REQUEST[..40]); // snaplen 96 leaves ~40 payload bytes
        assert_eq!(full.fingerprint().agreement(&cut.fingerprint()), Some(32));
        let mut other = StreamPrefix::new(128);
        other.add(0, b"GET /healthy HTTP/1.1\r\nHost: 198.19.96.10\r\n");
        assert_eq!(full.fingerprint().agreement(&other.fingerprint()), None);
    }

    #[test]
    fn short_whole_streams_compare_by_length_and_bytes() {
        let mut a = StreamPrefix::new(128);
        a.add(0, b"ping\n");
        a.set_end(5);
        let mut b = StreamPrefix::new(128);
        b.add(0, b"ping\n");
        b.set_end(5);
        let mut c = StreamPrefix::new(128);
        c.add(0, b"pong\n");
        c.set_end(5);
        assert_eq!(a.fingerprint().agreement(&b.fingerprint()), Some(5));
        assert_eq!(a.fingerprint().agreement(&c.fingerprint()), None);
        assert!(a.fingerprint().join_key().is_some());
    }
}
