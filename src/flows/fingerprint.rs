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

/// What is known of the first bytes of one direction of a stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// xxh3 of the first 16/32/64/128 bytes, for each length fully known.
    pub prefix: [Option<u64>; 4],
    /// The whole stream when it was shorter than the longest prefix and its end
    /// is known (a FIN, or a datagram): (length, xxh3 of all of it).
    pub whole: Option<(u16, u64)>,
}

impl Fingerprint {
    /// No bytes known.
    pub fn is_empty(&self) -> bool {
        self.prefix[0].is_none() && self.whole.is_none()
    }

    /// The key used to find candidates: the 16-byte prefix hash, or the whole
    /// (short) stream's hash.
    pub fn join_key(&self) -> Option<u64> {
        self.prefix[0].or(self.whole.map(|(len, h)| h ^ u64::from(len).rotate_left(48)))
    }

    /// True when both know some common length, so `agreement` is a real comparison.
    pub fn agreement_known(&self, other: &Fingerprint) -> bool {
        (self.whole.is_some() && other.whole.is_some())
            || self.prefix.iter().zip(other.prefix.iter()).any(|(a, b)| a.is_some() && b.is_some())
    }

    /// Compares two fingerprints at the longest length both know. Returns the
    /// number of bytes compared when they agree, None when they differ or share
    /// nothing.
    pub fn agreement(&self, other: &Fingerprint) -> Option<usize> {
        if let (Some(a), Some(b)) = (self.whole, other.whole) {
            return (a == b).then_some(a.0 as usize);
        }
        // One side knows the whole short stream: the other must know at least its
        // prefixes up to that length and agree there.
        for i in (0..PREFIX_LENGTHS.len()).rev() {
            if let (Some(a), Some(b)) = (self.prefix[i], other.prefix[i]) {
                return (a == b).then_some(PREFIX_LENGTHS[i]);
            }
        }
        None
    }
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
        StreamPrefix { bytes: [0; 128], known: 0, limit: limit.clamp(1, 128) as u8, end: None }
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
        let c = self.contiguous();
        let mut fp = Fingerprint::default();
        for (i, &len) in PREFIX_LENGTHS.iter().enumerate() {
            if c >= len {
                fp.prefix[i] = Some(xxh3_64(&self.bytes[..len]));
            }
        }
        if let Some(end) = self.end {
            let end = end as usize;
            if end > 0 && end <= c && end < PREFIX_LENGTHS[PREFIX_LENGTHS.len() - 1] {
                fp.whole = Some((end as u16, xxh3_64(&self.bytes[..end])));
            }
        }
        fp
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
        assert!(one.fingerprint().prefix[2].is_some());
    }

    #[test]
    fn a_gap_stops_the_prefix() {
        let mut s = StreamPrefix::new(128);
        s.add(0, &REQUEST[..20]);
        s.add(40, &REQUEST[40..]);
        assert_eq!(s.contiguous(), 20);
        let fp = s.fingerprint();
        assert!(fp.prefix[0].is_some() && fp.prefix[1].is_none());
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
