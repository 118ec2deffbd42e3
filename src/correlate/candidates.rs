//! Candidate pairs between the flows of two captures, found by hash joins on each
//! evidence key (client ISN, client and server stream fingerprints, ICMP echo
//! sequence + payload), each with the evidence it carries, and the time gate.

use super::estimate::ClockEstimate;
use super::evidence::{Evidence, Evidences};
use super::CorrelateConfig;
use super::LinkKind;
use crate::flows::{Fingerprint, Flow, FlowProto, Orientation, STRONG_PREFIX};
use rustc_hash::FxHashMap;

/// Default tolerance floor: 1 ms.
const TOLERANCE_FLOOR_NS: i64 = 1_000_000;
/// Default tolerance cap: 200 ms.
pub const TOLERANCE_CAP_NS: i64 = 200_000_000;

/// The corrected-time gate between captures `from` and `to`.
#[derive(Clone, Copy, Debug)]
pub struct Gate {
    /// Offset of `to` minus offset of `from` (ns).
    pub rel_offset_ns: i64,
    /// Expected one-way delay from `from` to `to` (ns).
    pub delay_ns: i64,
    pub tolerance_ns: i64,
}

impl Gate {
    pub fn new(
        clocks: &[ClockEstimate],
        delays: &[Option<i64>],
        from: usize,
        to: usize,
        config: &CorrelateConfig,
    ) -> Gate {
        let rel = clocks[to].offset_ns.saturating_sub(clocks[from].offset_ns);
        let delay: i64 =
            (from..to).map(|i| delays.get(i).copied().flatten().unwrap_or(0)).fold(0, i64::saturating_add);
        let spread = clocks[to].spread_ns.max(0).saturating_add(clocks[from].spread_ns.max(0));
        let tolerance = config
            .tolerance_ns
            .unwrap_or_else(|| {
                spread.saturating_mul(5).saturating_add(TOLERANCE_FLOOR_NS).min(TOLERANCE_CAP_NS)
            })
            .max(0);
        Gate { rel_offset_ns: rel, delay_ns: delay, tolerance_ns: tolerance }
    }

    /// How far `b` starts from where `a` predicts, on corrected clocks (ns),
    /// with SYN retransmissions aligned (see `syn_alignment`).
    pub fn distance(&self, a: &Flow, b: &Flow) -> i64 {
        let (ta, tb) = match syn_alignment(a, b) {
            Some(al) => (al.a_ns, al.b_ns),
            None => (start(a), start(b)),
        };
        tb.saturating_sub(self.rel_offset_ns)
            .saturating_sub(ta)
            .saturating_sub(self.delay_ns)
            .saturating_abs()
    }

    /// Packet-for-packet correspondence: starts within the tolerance.
    pub fn tight(&self, a: &Flow, b: &Flow) -> bool {
        self.within(self.distance(a, b))
    }

    /// A [`Gate::distance`] inside the tolerance.
    fn within(&self, distance: i64) -> bool {
        distance <= self.tolerance_ns
    }

    /// The corrected lifetimes overlap within the tolerance (so one's first
    /// packet falls inside the other's lifetime).
    pub fn overlap(&self, a: &Flow, b: &Flow) -> bool {
        let shift = self.rel_offset_ns.saturating_add(self.delay_ns);
        let b0 = b.first_ns.saturating_sub(shift);
        let b1 = b.last_ns.saturating_sub(shift);
        b0 <= a.last_ns.saturating_add(self.tolerance_ns)
            && a.first_ns <= b1.saturating_add(self.tolerance_ns)
    }

    /// A proxy's new connection starts while the client's connection is alive.
    pub fn during(&self, a: &Flow, b: &Flow) -> bool {
        let tb = b.first_ns.saturating_sub(self.rel_offset_ns);
        tb.saturating_add(self.tolerance_ns) >= a.first_ns
            && tb <= a.last_ns.saturating_add(self.tolerance_ns).saturating_add(self.delay_ns.max(0))
    }
}

/// Score of starting together (within the tolerance): among candidates that
/// only overlap, the one that lines up packet for packet wins.
const TIGHT_BONUS: i64 = 5;

/// Evidence for one candidate pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub source: usize,
    pub target: usize,
    pub evidence: Evidences,
    pub kind: LinkKind,
    pub score: i64,
    /// [`Gate::distance`] of the pair (what `tight` was told from): the
    /// tie-break after the score.
    pub distance: i64,
}

/// One sorted index over one capture's flows: every join key (client ISN,
/// fingerprints, ICMP echo) hashed into one `u64`, with the flow's start on the
/// earlier capture's corrected clock. Sorted by (key, time), a lookup is a
/// binary search plus a scan of the flows inside the time window, so identical
/// bytes (health checks, the same HTTP status line in every response) never
/// turn a join into an all-pairs scan, and building it allocates once.
/// Keys only find candidates; `evidence` then compares the flows for real.
pub struct Index {
    entries: Vec<(u64, i64, u32)>,
    /// Radix directory over the (uniformly hashed) keys: the entries whose key
    /// starts with the top `bits` bits `p` are `entries[dir[p]..dir[p + 1]]`, so
    /// a lookup binary-searches a few entries instead of the whole index (the
    /// search over all of it missed the cache at every step).
    dir: Vec<u32>,
    bits: u32,
    /// Some flow is indexed by its sequence numbers (one without a handshake).
    has_seq: bool,
}

/// Kinds of join key, mixed into the hash.
const K_ISN: u64 = 1;
const K_CLIENT_FP: u64 = 2;
const K_SERVER_FP: u64 = 3;
const K_ECHO: u64 = 4;
const K_SEQ: u64 = 5;
const K_REQUEST_ID: u64 = 6;
const K_DATAGRAM: u64 = 7;

/// Keys and times of a UDP flow's later client datagrams (none for other flows).
fn later_keys(f: &Flow) -> &[(u64, i64)] {
    f.later.as_deref().map_or(&[], |l| l.keys())
}

/// One UDP flow's first client datagram is a later one of the other's: the
/// capture that holds fewer missed the first datagrams of the exchange.
fn later_datagram(a: &Flow, b: &Flow) -> bool {
    let first_of = |x: &Flow, y: &Flow| {
        x.client_fp.datagram_key().is_some_and(|k| later_keys(y).iter().any(|&(l, _)| l == k))
    };
    a.proto == FlowProto::Udp && (first_of(a, b) || first_of(b, a))
}

/// Hash of the request id at the start of the client stream.
fn request_id(f: &Flow) -> Option<u64> {
    f.carriers.as_deref().and_then(|c| c.request_id).map(|r| r.hash)
}

fn key(kind: u64, proto: FlowProto, len: u8, value: u64) -> u64 {
    let tag = (kind << 16) | ((proto as u64) << 8) | u64::from(len);
    xxhash_rust::xxh3::xxh3_64_with_seed(&value.to_le_bytes(), tag)
}

fn echo_key(f: &Flow) -> Option<(u16, u64)> {
    let e = f.echo.as_ref()?;
    let (len, h) = e.payload?;
    Some((e.first_seq, h ^ u64::from(len)))
}

/// Index keys of a fingerprint: the whole short stream, and one prefix — 32
/// bytes, or 16 when only 16 are known (a short snaplen).
fn fp_index_keys(fp: &Fingerprint) -> [Option<(u8, u64)>; 2] {
    let whole = fp.whole().map(|(len, h)| (255u8, h ^ u64::from(len).rotate_left(48)));
    let prefix = fp.prefix(1).map(|h| (32u8, h)).or(fp.prefix(0).map(|h| (16u8, h)));
    [whole, prefix]
}

/// Lookup keys of a fingerprint: those it is indexed under, plus its 16-byte
/// prefix (to meet flows whose snaplen left only 16 bytes).
fn fp_lookup_keys(fp: &Fingerprint) -> [Option<(u8, u64)>; 3] {
    let [whole, prefix] = fp_index_keys(fp);
    let short = if fp.prefix(1).is_some() { fp.prefix(0).map(|h| (16u8, h)) } else { None };
    [whole, prefix, short]
}

fn start(f: &Flow) -> i64 {
    f.first_client_ns.get().unwrap_or(f.first_ns)
}

/// The SYN both captures saw, when one of them missed the first SYNs of a
/// connection (the SYN was lost between them and a retransmission got through).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynAlignment {
    /// The SYN of `a` and of `b` that are the same packet.
    pub a_ns: i64,
    pub b_ns: i64,
    /// SYNs the later capture (`b`) did not see, and how long after the first
    /// SYN the retransmission it saw was sent (None: `a` missed them instead).
    pub b_missed: Option<(u32, i64)>,
}

/// Linux retransmits a SYN after 1 s, doubling: the k-th retransmission leaves
/// (2^k − 1) s after the first SYN. Used when its time was not kept.
fn schedule_ns(k: u32) -> i64 {
    ((1i64 << k.min(20)) - 1).saturating_mul(1_000_000_000)
}

/// Aligns the SYNs of two flows with one ISN whose SYN counts differ: the one
/// with fewer SYNs saw the last ones (earlier SYNs were lost before it).
pub fn syn_alignment(a: &Flow, b: &Flow) -> Option<SynAlignment> {
    if a.proto != FlowProto::Tcp || a.client_isn.is_none() || a.client_isn != b.client_isn {
        return None;
    }
    // The k-th SYN of a flow: the last one's time is kept, earlier ones follow the schedule.
    let syn_at = |f: &Flow, k: u32| -> Option<i64> {
        let first = f.first_client_ns.get()?;
        // (k >= 1: the SYN counts differ; the first SYN, k = 0, is `first`.)
        Some(if k + 1 == f.syn_count && f.last_syn_after_us > 0 {
            first.saturating_add(i64::from(f.last_syn_after_us) * 1000)
        } else {
            first.saturating_add(schedule_ns(k))
        })
    };
    let (ta0, tb0) = (a.first_client_ns.get()?, b.first_client_ns.get()?);
    if a.syn_count > b.syn_count && b.syn_count > 0 && b.orientation == Orientation::Syn {
        let k = a.syn_count - b.syn_count;
        let ta = syn_at(a, k)?;
        Some(SynAlignment { a_ns: ta, b_ns: tb0, b_missed: Some((k, ta.saturating_sub(ta0))) })
    } else if b.syn_count > a.syn_count && a.syn_count > 0 && a.orientation == Orientation::Syn {
        let k = b.syn_count - a.syn_count;
        Some(SynAlignment { a_ns: ta0, b_ns: syn_at(b, k)?, b_missed: None })
    } else {
        None
    }
}

/// Sequence numbers drift apart by at most this much between the first packets
/// two captures saw of one connection (packets lost at one of them).
pub(super) const SEQ_WINDOW: u32 = 1 << 22;

/// The first seen (client, server) sequence numbers of two flows are one
/// connection's, aligned by relative offset: both moved forward by less than
/// `SEQ_WINDOW` in the same direction (the later first packet).
pub fn seq_aligned(a: &Flow, b: &Flow) -> bool {
    let (Some(x), Some(y)) = (a.seq_pair, b.seq_pair) else { return false };
    pairs_aligned(x, y)
}

/// [`seq_aligned`] of two (client, server) sequence number pairs.
pub fn pairs_aligned((ac, as_): (u32, u32), (bc, bs): (u32, u32)) -> bool {
    let fwd = bc.wrapping_sub(ac) < SEQ_WINDOW && bs.wrapping_sub(as_) < SEQ_WINDOW;
    let back = ac.wrapping_sub(bc) < SEQ_WINDOW && as_.wrapping_sub(bs) < SEQ_WINDOW;
    fwd || back
}

/// The index bucket of a client sequence number: aligned pairs fall in the same
/// or a neighbouring bucket.
fn seq_bucket(seq: u32) -> u64 {
    u64::from(seq / SEQ_WINDOW)
}

/// How far back a flow that missed its own beginning looks for its partner's
/// start (ISN and sequence keys only): the partner may have started a SYN
/// retransmission schedule or a connection's lifetime earlier.
const LEAD_NS: i64 = 64_000_000_000;

/// How far back a UDP flow seen from its answer looks for the flow that
/// started with the query: the default UDP idle time (a later answer starts
/// another flow).
const ANSWER_LEAD_NS: i64 = 10_000_000_000;

/// A flow whose capture missed its beginning: TCP without its SYN, UDP seen
/// from its answer.
fn incomplete(f: &Flow) -> bool {
    (f.proto == FlowProto::Tcp && f.orientation != Orientation::Syn) || f.orientation == Orientation::Reply
}

impl Index {
    /// Indexes the flows for which `include` is true; times are moved onto the
    /// earlier capture's clock with `gate`. Flows without a handshake are indexed
    /// by their sequence numbers; with `seq_all` (some source has no handshake)
    /// every TCP flow is.
    pub fn build(flows: &[Flow], gate: &Gate, seq_all: bool, include: impl Fn(usize) -> bool) -> Index {
        let mut entries = Vec::with_capacity(flows.len() * 3);
        let mut has_seq = false;
        for (i, f) in flows.iter().enumerate().filter(|(i, _)| include(*i)) {
            let t = start(f).saturating_sub(gate.rel_offset_ns);
            let i = i as u32;
            if let Some(isn) = f.client_isn {
                entries.push((key(K_ISN, f.proto, 0, u64::from(isn)), t, i));
                // and at its last SYN: a capture that missed the first SYNs
                // (they were lost before it, or it lost them) starts there
                if let (true, Some(first)) = (f.last_syn_after_us > 0, f.first_client_ns.get()) {
                    let last = first.saturating_add(i64::from(f.last_syn_after_us) * 1000);
                    entries.push((
                        key(K_ISN, f.proto, 0, u64::from(isn)),
                        last.saturating_sub(gate.rel_offset_ns),
                        i,
                    ));
                }
            }
            if let Some((c, _)) = f.seq_pair.filter(|_| seq_all || f.client_isn.is_none()) {
                entries.push((key(K_SEQ, f.proto, 0, seq_bucket(c)), t, i));
                has_seq = true;
            }
            for (kind, fp) in [(K_CLIENT_FP, &f.client_fp), (K_SERVER_FP, &f.server_fp)] {
                for (len, h) in fp_index_keys(fp).into_iter().flatten() {
                    entries.push((key(kind, f.proto, len, h), t, i));
                }
            }
            // (at the time each was seen: the flow that meets one on its first
            // datagram started then)
            for &(k, at) in later_keys(f) {
                entries.push((key(K_DATAGRAM, f.proto, 0, k), at.saturating_sub(gate.rel_offset_ns), i));
            }
            if let Some((seq, h)) = echo_key(f) {
                entries.push((key(K_ECHO, f.proto, 0, h ^ u64::from(seq)), t, i));
            }
            if let Some(id) = request_id(f) {
                entries.push((key(K_REQUEST_ID, f.proto, 0, id), t, i));
            }
        }
        let (entries, dir, bits) = sorted_with_directory(entries);
        Index { entries, dir, bits, has_seq }
    }

    /// The entries of key `k` and the ones sharing its directory slot.
    fn slot(&self, k: u64) -> &[(u64, i64, u32)] {
        let p = if self.bits == 0 { 0 } else { (k >> (64 - self.bits)) as usize };
        &self.entries[self.dir[p] as usize..self.dir[p + 1] as usize]
    }

    /// Flows sharing at least one join key with `f` and starting inside the
    /// widest window any gate allows, ascending, without repeats.
    pub fn lookup(&self, f: &Flow, gate: &Gate, out: &mut Vec<usize>) {
        out.clear();
        // Saturating: a damaged capture can hold timestamps near the i64 limits.
        let lo =
            f.first_ns.min(start(f)).saturating_sub(gate.tolerance_ns).saturating_add(gate.delay_ns.min(0));
        let hi = f.last_ns.saturating_add(gate.tolerance_ns).saturating_add(gate.delay_ns.max(0));
        // A flow that missed its beginning meets partners that started earlier.
        let lead = if incomplete(f) { LEAD_NS } else { 0 };
        let mut window = |k: u64, lead: i64| {
            let lo = lo.saturating_sub(lead);
            let slot = self.slot(k);
            let from = slot.partition_point(|&(ek, t, _)| (ek, t) < (k, lo));
            out.extend(
                slot[from..]
                    .iter()
                    .take_while(|&&(ek, t, _)| ek == k && t <= hi)
                    .map(|&(_, _, i)| i as usize),
            );
        };
        if let Some(isn) = f.client_isn {
            window(key(K_ISN, f.proto, 0, u64::from(isn)), lead);
        }
        if let (true, Some((c, _))) = (self.has_seq, f.seq_pair) {
            let b = seq_bucket(c);
            let last = seq_bucket(u32::MAX);
            for bucket in [if b == 0 { last } else { b - 1 }, b, if b == last { 0 } else { b + 1 }] {
                window(key(K_SEQ, f.proto, 0, bucket), lead);
            }
        }
        // A UDP flow seen from its answer meets the partner that started with
        // the query, up to a UDP flow's idle time earlier.
        let answer_lead = if f.orientation == Orientation::Reply { ANSWER_LEAD_NS } else { 0 };
        for (kind, fp) in [(K_CLIENT_FP, &f.client_fp), (K_SERVER_FP, &f.server_fp)] {
            for (len, h) in fp_lookup_keys(fp).into_iter().flatten() {
                window(key(kind, f.proto, len, h), answer_lead);
            }
        }
        // A later datagram of one is the first the other saw, either way
        // round: its first datagram among the indexed flows' later ones, its
        // later ones among their first (a first datagram's key is its 32-byte
        // prefix hash or its whole hash, as `datagram_key` gives it).
        if f.proto == FlowProto::Udp {
            if let Some(k) = f.client_fp.datagram_key() {
                window(key(K_DATAGRAM, f.proto, 0, k), 0);
            }
            for &(k, _) in later_keys(f) {
                window(key(K_CLIENT_FP, f.proto, 32, k), 0);
                window(key(K_CLIENT_FP, f.proto, 255, k), 0);
            }
        }
        if let Some((seq, h)) = echo_key(f) {
            window(key(K_ECHO, f.proto, 0, h ^ u64::from(seq)), 0);
        }
        if let Some(id) = request_id(f) {
            window(key(K_REQUEST_ID, f.proto, 0, id), 0);
        }
        out.sort_unstable();
        out.dedup();
    }
}

/// Top bits of a key that name its directory slot, for `n` entries: a slot
/// per 2–4 entries (at most 2^22 slots; 4 bytes each, so the directory adds
/// ~1/10 to the index).
fn slot_bits(n: usize) -> u32 {
    (usize::BITS - n.leading_zeros()).saturating_sub(2).min(22)
}

/// `entries` sorted, and [`directory`]'s slots of them, in one counting pass:
/// keys are hashes, so their top bits (the slot) spread them evenly; each
/// entry goes to its slot's range, then each range (a few entries) is
/// sorted. Entries are distinct tuples: the one order `sort_unstable` gives,
/// in linear time instead of a comparison sort of the whole list.
fn sorted_with_directory(entries: Vec<(u64, i64, u32)>) -> (Vec<(u64, i64, u32)>, Vec<u32>, u32) {
    let bits = slot_bits(entries.len());
    if bits == 0 {
        let mut entries = entries;
        entries.sort_unstable();
        let dir = vec![0, entries.len() as u32];
        return (entries, dir, 0);
    }
    let slot = |k: u64| (k >> (64 - bits)) as usize;
    let slots = 1usize << bits;
    let mut dir = vec![0u32; slots + 1];
    for e in &entries {
        dir[slot(e.0) + 1] += 1;
    }
    for p in 0..slots {
        dir[p + 1] += dir[p];
    }
    let mut next = dir[..slots].to_vec();
    let mut sorted = vec![(0u64, 0i64, 0u32); entries.len()];
    for e in entries {
        let at = &mut next[slot(e.0)];
        sorted[*at as usize] = e;
        *at += 1;
    }
    for p in 0..slots {
        sorted[dir[p] as usize..dir[p + 1] as usize].sort_unstable();
    }
    (sorted, dir, bits)
}

/// The radix directory of sorted `entries`, `dir[p]` the first entry whose
/// key's top bits are ≥ `p`: what [`sorted_with_directory`] builds, kept as
/// the tests' reference.
#[cfg(test)]
fn directory(entries: &[(u64, i64, u32)]) -> (Vec<u32>, u32) {
    let bits = slot_bits(entries.len());
    let slots = 1usize << bits;
    let mut dir = Vec::with_capacity(slots + 1);
    let mut at = 0usize;
    for p in 0..slots {
        while at < entries.len() && bits > 0 && ((entries[at].0 >> (64 - bits)) as usize) < p {
            at += 1;
        }
        dir.push(at as u32);
    }
    dir.push(entries.len() as u32);
    (dir, bits)
}

/// The evidence that `a` (earlier capture) and `b` (later capture) are one
/// request, or None when they cannot be (different protocol, contradicting bytes).
pub fn evidence(a: &Flow, b: &Flow, gate: &Gate) -> Option<Scored> {
    if a.proto != b.proto || a.v6 != b.v6 {
        return None;
    }
    let mut ev = Evidences::new();
    let mut score = 0i64;
    let client_agree = a.client_fp.agreement(&b.client_fp);
    let server_agree = a.server_fp.agreement(&b.server_fp);
    // The same request id both sides: one request, whatever a terminating
    // proxy rewrote around it.
    let same_id = request_id(a).is_some() && request_id(a) == request_id(b);
    // Bytes that both sides know and that differ rule the pair out (NAT never
    // edits payload, except conntrack helpers such as FTP/SIP) — unless the
    // request ids agree (a proxy that rewrites the request).
    let later = client_agree.is_none() && later_datagram(a, b);
    if a.client_fp.agreement_known(&b.client_fp) && client_agree.is_none() && !same_id && !later {
        return None;
    }
    let strong_bytes =
        |agree: Option<usize>, whole: bool| agree.is_some_and(|n| n >= STRONG_PREFIX || (whole && n > 0));
    let client_strong =
        strong_bytes(client_agree, a.client_fp.whole().is_some() && b.client_fp.whole().is_some());
    let server_strong =
        strong_bytes(server_agree, a.server_fp.whole().is_some() && b.server_fp.whole().is_some());
    let ip_id = a.client_ip_id.is_some() && a.client_ip_id == b.client_ip_id;
    let mut kind = LinkKind::Forwarded;
    match a.proto {
        FlowProto::Tcp => {
            let isn_equal = a.client_isn.is_some() && a.client_isn == b.client_isn;
            let server_isn_conflict =
                a.server_isn.is_some() && b.server_isn.is_some() && a.server_isn != b.server_isn;
            if isn_equal && !server_isn_conflict {
                ev.push(Evidence::Isn);
                score += 1000;
            } else if (a.client_isn.is_none() || b.client_isn.is_none()) && seq_aligned(a, b) {
                // No handshake on one side: the sequence spaces still agree.
                ev.push(Evidence::SeqAck);
                score += 1000;
            } else if a.client_isn.is_some() && b.client_isn.is_some() && !isn_equal {
                // A new sequence space: an ISN-randomizing middlebox keeps the
                // packets (IP ID, timing, and it routes them — TTL − 1 — or
                // keeps both ports: a SYN proxy, a load balancer, a rewriter on
                // the wire); a terminating proxy opens its own connection.
                if !(client_strong || server_strong || same_id) {
                    return None;
                }
                let ttl_routed = b.client_ttl < a.client_ttl;
                let ports_kept = a.client.port == b.client.port && a.server.port == b.server.port;
                // both endpoints whole on both sides: the same connection with
                // its sequence numbers moved, whatever the IP ID says — a
                // proxy's own connection leaves from its own address or port
                let endpoints_kept = a.client == b.client && a.server == b.server;
                if ((ip_id && (ttl_routed || ports_kept)) || endpoints_kept) && gate.tight(a, b) {
                    kind = LinkKind::SeqShift;
                    ev.push(Evidence::SeqShift);
                    score += 800;
                } else {
                    kind = LinkKind::Proxy;
                }
            }
            if client_strong {
                ev.push(Evidence::ClientFingerprint);
                score += 1000 + client_agree.unwrap_or(0) as i64;
            }
            if server_strong {
                ev.push(Evidence::ServerFingerprint);
                score += 1000 + server_agree.unwrap_or(0) as i64;
            }
            if same_id {
                ev.push(Evidence::RequestId);
                score += 1000;
            }
        }
        FlowProto::Udp => {
            if client_strong || server_strong {
                ev.push(Evidence::UdpPayload);
                score += 1000 + client_agree.unwrap_or(0) as i64 + server_agree.unwrap_or(0) as i64;
            } else if later {
                // Below any pair whose first datagrams agree.
                ev.push(Evidence::UdpPayload);
                score += 1000;
            }
        }
        FlowProto::Icmp => {
            if echo_key(a).is_some() && echo_key(a) == echo_key(b) {
                ev.push(Evidence::IcmpEcho);
                score += 1000;
            }
        }
    }
    if ev.is_empty() {
        return None;
    }
    let distance = gate.distance(a, b);
    let tight = gate.within(distance);
    // Lifetimes that overlap are enough where start times cannot line up: a
    // capture that missed the beginning, or one sequence space (a SYN lost
    // between the captures, retransmitted later), or a UDP flow whose first
    // datagram is the same bytes (a datagram lost between the captures, or
    // sent before one started, and sent again: an SNMP or DNS retry).
    let same_space = ev.first().is_some_and(|e| matches!(e, Evidence::Isn | Evidence::SeqAck));
    let resent = a.proto == FlowProto::Udp && (client_strong || later);
    let gated = match kind {
        LinkKind::Proxy => gate.during(a, b),
        LinkKind::SeqShift => tight,
        LinkKind::Forwarded => {
            tight || ((same_space || resent || incomplete(a) || incomplete(b)) && gate.overlap(a, b))
        }
    };
    if !gated {
        return None;
    }
    if tight {
        score += TIGHT_BONUS;
    }
    if ip_id && kind != LinkKind::Proxy {
        ev.push(Evidence::IpId);
        score += 50;
    }
    let ports = unchanged_endpoints(a, b);
    if ports > 0 {
        ev.push(Evidence::Ports);
        score += ports;
    }
    Some(Scored { source: 0, target: 0, evidence: ev, kind, score, distance })
}

/// Tie-breaker weight of endpoints that crossed the boundary unchanged: the
/// server's (port, else address; both weigh a little more, so a scanner's probes
/// of one host are told apart by port), and the client's whole endpoint. A hint,
/// never a key: NAT and `--random-fully` change them.
fn unchanged_endpoints(a: &Flow, b: &Flow) -> i64 {
    let icmp = a.proto == FlowProto::Icmp;
    let port = !icmp && a.server.port == b.server.port;
    let addr = a.server.addr == b.server.addr;
    let mut w = 0;
    if port || addr {
        w += 10;
    }
    if port && addr {
        w += 2;
    }
    if a.client.addr == b.client.addr && (icmp || a.client.port == b.client.port) {
        w += 20;
    }
    w
}

/// Evidence for a weak match (no strong key): only the tie-breakers and time.
pub fn weak_evidence(a: &Flow, b: &Flow, gate: &Gate) -> Option<Evidences> {
    if a.proto != b.proto || a.v6 != b.v6 || !gate.tight(a, b) {
        return None;
    }
    // Known bytes or sequence spaces that disagree rule the pair out.
    if a.client_fp.agreement_known(&b.client_fp) && a.client_fp.agreement(&b.client_fp).is_none() {
        return None;
    }
    if a.server_fp.agreement_known(&b.server_fp) && a.server_fp.agreement(&b.server_fp).is_none() {
        return None;
    }
    // Another ISN rules the pair out, unless it is the one shift bytes cannot
    // show: a connection that carried no payload either way at both captures,
    // its first packet's IP ID and both ports kept (a SYN proxy, a load
    // balancer, a rewriter on the wire that shifts sequence numbers).
    let shifted = a.client_isn.is_some() && b.client_isn.is_some() && a.client_isn != b.client_isn;
    if shifted && !empty_shift(a, b) {
        return None;
    }
    if a.client_ip_id.is_some() && b.client_ip_id.is_some() && a.client_ip_id != b.client_ip_id {
        return None;
    }
    if let (Some(x), Some(y)) = (&a.echo, &b.echo) {
        if x.first_seq != y.first_seq {
            return None;
        }
    }
    let mut ev = Evidences::new();
    if shifted {
        ev.push(Evidence::SeqShift);
    }
    if a.client_ip_id.is_some() && a.client_ip_id == b.client_ip_id {
        ev.push(Evidence::IpId);
    }
    if unchanged_endpoints(a, b) > 0 {
        ev.push(Evidence::Ports);
    }
    ev.push(Evidence::Time);
    Some(ev)
}

/// Two TCP flows with no payload either way, the same IP ID on their first
/// client packet and both ports kept: the same packets, their sequence numbers
/// shifted.
fn empty_shift(a: &Flow, b: &Flow) -> bool {
    let empty = |f: &Flow| f.max_to_server.bytes == 0 && f.max_to_client.bytes == 0;
    empty(a)
        && empty(b)
        && a.client_ip_id.is_some()
        && a.client_ip_id == b.client_ip_id
        && a.client.port == b.client.port
        && a.server.port == b.server.port
}

/// The flows that hold one ISN, first datagram or echo, unique on both sides
/// (`unique_pairs`), and where one is held by several flows (the same query
/// from several ports, a scanner's probes), those it is unique to with their
/// ports. In `a`'s order. Only the flows of a key held more than once on a
/// side are looked at again: a run without such keys costs no more than
/// [`unique_pairs`].
pub fn unique_pairs_with_ports(a: &[Flow], b: &[Flow]) -> Vec<(usize, usize)> {
    let (mut pairs, count_a, count_b) = counted_pairs(a, b);
    let repeated = |c: &KeyCounts| c.values().any(|&(_, n)| n > 1);
    if !repeated(&count_a) && !repeated(&count_b) {
        return pairs;
    }
    // keys on both sides, held by several flows on one of them (TCP and UDP)
    let shared: rustc_hash::FxHashSet<(FlowProto, u64)> = (count_a.iter())
        .filter(|(k, &(_, n))| k.0 != FlowProto::Icmp && count_b.get(k).is_some_and(|&(_, m)| n > 1 || m > 1))
        .map(|(k, _)| *k)
        .collect();
    if shared.is_empty() {
        return pairs;
    }
    let with_ports = |f: &Flow| {
        let k = pair_key(f).filter(|k| shared.contains(k))?;
        Some((k, f.client.port, f.server.port))
    };
    join_unpaired(a, b, &mut pairs, with_ports, |_, _| true);
    pairs.sort_unstable();
    pairs
}

/// Adds to `pairs` the flows of `a` and `b` not yet in it whose `key` is
/// unique on both sides and that `agree`.
pub fn join_unpaired<K: std::hash::Hash + Eq>(
    a: &[Flow],
    b: &[Flow],
    pairs: &mut Vec<(usize, usize)>,
    key: impl Fn(&Flow) -> Option<K>,
    agree: impl Fn(&Flow, &Flow) -> bool,
) {
    let (mut in_a, mut in_b) = (vec![false; a.len()], vec![false; b.len()]);
    for &(ia, ib) in pairs.iter() {
        (in_a[ia], in_b[ib]) = (true, true);
    }
    let count = |flows: &[Flow], paired: &[bool]| {
        let mut count: rustc_hash::FxHashMap<K, (usize, usize)> = Default::default();
        for (i, f) in flows.iter().enumerate().filter(|(i, _)| !paired[*i]) {
            if let Some(k) = key(f) {
                count.entry(k).or_insert((i, 0)).1 += 1;
            }
        }
        count
    };
    let count_b = count(b, &in_b);
    for (k, (ia, n)) in count(a, &in_a) {
        if let Some(&(ib, 1)) = count_b.get(&k).filter(|_| n == 1) {
            if agree(&a[ia], &b[ib]) {
                pairs.push((ia, ib));
            }
        }
    }
}

/// Pairs that share a packet-for-packet strong key (client ISN, first UDP
/// datagram, ICMP echo) that is unique on both sides: the clock samples.
pub fn unique_pairs(a: &[Flow], b: &[Flow]) -> Vec<(usize, usize)> {
    counted_pairs(a, b).0
}

/// The key a flow pairs by without time: its ISN (TCP with a handshake), its
/// first datagram (UDP), its echo (ICMP).
fn pair_key(f: &Flow) -> Option<(FlowProto, u64)> {
    match f.proto {
        FlowProto::Tcp if f.orientation != crate::flows::Orientation::Midstream => {
            f.client_isn.map(|i| (FlowProto::Tcp, u64::from(i)))
        }
        FlowProto::Udp => f
            .client_fp
            .join_key()
            .filter(|_| f.client_fp.prefix(1).is_some() || f.client_fp.whole().is_some())
            .map(|k| (FlowProto::Udp, k)),
        FlowProto::Icmp => echo_key(f).map(|(s, h)| (FlowProto::Icmp, h ^ u64::from(s))),
        FlowProto::Tcp => None,
    }
}

/// Per side, each key's first flow and how many hold it.
type KeyCounts = FxHashMap<(FlowProto, u64), (usize, usize)>;

/// [`unique_pairs`] with each side's key counts.
fn counted_pairs(a: &[Flow], b: &[Flow]) -> (Vec<(usize, usize)>, KeyCounts, KeyCounts) {
    // Per key: the first flow holding it and how many do (both sides at once).
    let count = |flows: &[Flow]| {
        // Sized once: most flows have a key (growing it rehashed ~8 % of this step).
        let mut count: KeyCounts = FxHashMap::with_capacity_and_hasher(flows.len(), Default::default());
        for (i, f) in flows.iter().enumerate() {
            if let Some(k) = pair_key(f) {
                count.entry(k).or_insert((i, 0)).1 += 1;
            }
        }
        count
    };
    let (count_a, count_b) = rayon::join(|| count(a), || count(b));
    // A flow has one key, so each `ia` pairs at most once: placed by `ia`,
    // the pairs come out in order without a sort.
    let mut partner: Vec<Option<usize>> = vec![None; a.len()];
    for (k, &(ia, n)) in &count_a {
        if let Some(&(ib, 1)) = count_b.get(k).filter(|_| n == 1) {
            partner[ia] = Some(ib);
        }
    }
    let pairs = partner.into_iter().enumerate().filter_map(|(ia, ib)| Some((ia, ib?))).collect();
    (pairs, count_a, count_b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::Ns;

    fn gate() -> Gate {
        Gate { rel_offset_ns: 0, delay_ns: 50_000, tolerance_ns: 1_000_000 }
    }

    #[test]
    fn a_lost_first_syn_aligns_with_its_retransmission() {
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 9);
        a.syn_count = 2;
        a.last_syn_after_us = 1_000_000;
        let b = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_050_000, 9);
        let al = syn_alignment(&a, &b).expect("aligned");
        assert_eq!((al.a_ns, al.b_ns, al.b_missed), (1_000_000_000, 1_000_050_000, Some((1, 1_000_000_000))));
        assert!(gate().tight(&a, &b));
        let s = evidence(&a, &b, &gate()).expect("one connection");
        assert_eq!(s.evidence[0], Evidence::Isn);
        // Without the kept time, the schedule says where the retransmission was.
        a.last_syn_after_us = 0;
        assert_eq!(syn_alignment(&a, &b).unwrap().a_ns, 1_000_000_000);
        let other = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_050_000, 10);
        assert_eq!(syn_alignment(&a, &other), None, "another ISN");
    }

    /// A flow whose client stream starts with `request` (fingerprint and carriers).
    fn sent(mut f: Flow, request: &[u8]) -> Flow {
        let mut s = crate::flows::StreamPrefix::new(128);
        s.add(0, request);
        f.client_fp = s.fingerprint();
        let c = crate::flows::carrier::parse(request);
        f.carriers = (!c.is_empty()).then(|| Box::new(c));
        f
    }

    #[test]
    fn a_proxy_that_rewrites_all_but_the_request_id_still_matches_strongly() {
        let a = sent(
            Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:80", 0, 9),
            b"GET /api/v1/items?page=2 HTTP/1.1\r\nHost: shop\r\nX-Request-ID: 7f3a9c1e-0001\r\n\r\n",
        );
        let b = sent(
            Flow::test_tcp("198.19.0.5:51000", "198.19.200.7:8080", 300_000, 77),
            b"GET /items?page=2&tenant=a HTTP/1.0\r\nX-Forwarded-For: 198.18.90.42\r\nX-Request-ID: 7f3a9c1e-0001\r\n\r\n",
        );
        let s = evidence(&a, &b, &gate()).expect("one request");
        assert_eq!(s.evidence[..], [Evidence::RequestId]);
        assert_eq!(s.kind, LinkKind::Proxy);
        assert_eq!(s.score, 1000 + TIGHT_BONUS, "strong weight, started within the tolerance");
        // The index finds it by the id alone.
        let index = Index::build(std::slice::from_ref(&b), &gate(), false, |_| true);
        let mut out = Vec::new();
        index.lookup(&a, &gate(), &mut out);
        assert_eq!(out, [0]);
        // Another id, or none: the rewritten bytes rule it out.
        let other = sent(b.clone(), b"GET /items HTTP/1.0\r\nX-Request-ID: 7f3a9c1e-0002\r\n\r\n");
        assert_eq!(evidence(&a, &other, &gate()), None);
        index.lookup(
            &sent(a.clone(), b"GET / HTTP/1.1\r\nX-Request-ID: 7f3a9c1e-0002\r\n\r\n"),
            &gate(),
            &mut out,
        );
        assert!(out.is_empty());
        let mut bare = b.clone();
        bare.carriers = None;
        assert_eq!(evidence(&a, &bare, &gate()), None);
        // Outside the proxy's time gate: the client's connection was over.
        let mut late = b.clone();
        (late.first_ns, late.last_ns) = (a.last_ns + 10_000_000, a.last_ns + 11_000_000);
        assert_eq!(evidence(&a, &late, &gate()), None);
        // Beside an ISN it is listed too.
        let c = sent(Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:80", 50_000, 9), b"X");
        let c = Flow { carriers: b.carriers.clone(), client_fp: a.client_fp.clone(), ..c };
        assert_eq!(
            evidence(&a, &c, &gate()).unwrap().evidence[..2],
            [Evidence::Isn, Evidence::ClientFingerprint]
        );
        assert!(evidence(&a, &c, &gate()).unwrap().evidence.contains(&Evidence::RequestId));
    }

    #[test]
    fn unique_pairs_are_the_keys_held_once_each_side_in_the_earlier_captures_order() {
        let tcp = |isn: u32| Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:80", 1_000, isn);
        let a = [tcp(5), tcp(7), tcp(9), tcp(7), tcp(11), tcp(13)];
        let b = [tcp(9), tcp(5), tcp(11), tcp(11), tcp(7), tcp(13), tcp(17)];
        // 7 twice at a, 11 twice at b: neither pairs; 17 is at b only.
        assert_eq!(unique_pairs(&a, &b), vec![(0, 1), (2, 0), (5, 5)]);
        assert_eq!(unique_pairs(&b, &a), vec![(0, 2), (1, 0), (5, 5)]);
        assert_eq!(unique_pairs(&a, &[]), vec![]);
    }

    #[test]
    fn the_directory_slot_of_a_key_holds_every_entry_of_that_key() {
        // Keys spread over the whole u64 range, with repeats and the extremes.
        let mut entries: Vec<(u64, i64, u32)> = (0..5000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 7), (i % 3) as i64, i as u32))
            .chain([(0, 0, 1), (u64::MAX, 0, 2), (u64::MAX, 1, 3)])
            .collect();
        entries.sort_unstable();
        let (dir, bits) = directory(&entries);
        assert_eq!((dir.len(), bits), ((1 << 11) + 1, 11));
        let index = Index { entries: entries.clone(), dir, bits, has_seq: false };
        for &(k, _, _) in entries.iter().step_by(7).chain(&[(0, 0, 0), (u64::MAX, 0, 0)]) {
            let want: Vec<_> = entries.iter().filter(|e| e.0 == k).collect();
            let got: Vec<_> = index.slot(k).iter().filter(|e| e.0 == k).collect();
            assert_eq!(got, want, "key {k:#x}");
        }
        let empty = directory(&[]);
        assert_eq!(empty, (vec![0, 0], 0));
        // The counting pass gives the comparison sort's order and the same slots,
        // at every size (no slots below 4 entries; a key repeated thousands of times).
        for n in [0usize, 1, 3, 4, 7, 100, 5003] {
            let mut list: Vec<(u64, i64, u32)> = entries.iter().copied().take(n).collect();
            list.extend((0..n as u32 / 2).map(|i| (42, -i64::from(i), i)));
            list.reverse();
            let mut want = list.clone();
            want.sort_unstable();
            let (dir, bits) = directory(&want);
            assert_eq!(sorted_with_directory(list), (want, dir, bits), "{n} entries");
        }
        let (dir, bits) = directory(&[(7, 0, 0)]);
        let one = Index { entries: vec![(7, 0, 0)], dir, bits, has_seq: false };
        assert_eq!(one.slot(7), &[(7, 0, 0)]);
    }

    #[test]
    fn the_earlier_capture_that_missed_the_first_syn_aligns_too() {
        // a saw only the retransmission (1 s after the first SYN); b saw both
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_000_000, 9);
        a.syn_count = 1;
        let mut b = Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:80", 50_000, 9);
        (b.syn_count, b.last_syn_after_us) = (2, 1_000_000);
        let al = syn_alignment(&a, &b).expect("aligned");
        assert_eq!((al.a_ns, al.b_ns, al.b_missed), (1_000_000_000, 1_000_050_000, None));
        // the same SYN counts: nothing to align
        b.syn_count = 1;
        assert_eq!(syn_alignment(&a, &b), None);
    }

    #[test]
    fn echo_keys_differ_with_the_payload_and_its_length() {
        let echo = |len: u32, h: u64| {
            let mut f = Flow::test_tcp("198.18.0.1:1", "198.19.0.1:1", 0, 0);
            f.proto = FlowProto::Icmp;
            f.echo = Some(Box::new(crate::flows::EchoSummary {
                first_seq: 1,
                last_seq: 1,
                requests: 1,
                replies: 1,
                payload: Some((len, h)),
            }));
            echo_key(&f)
        };
        // pairs that one lossy way of mixing in the length would make equal
        assert_ne!(echo(8, 0x100), echo(8, 0x108));
        assert_ne!(echo(8, 0x100), echo(8, 0x200));
        assert_ne!(echo(8, 0x100), echo(16, 0x100));
        assert_eq!(echo(8, 0x100), echo(8, 0x100));
    }

    #[test]
    fn sequence_lookups_reach_the_neighbouring_buckets_across_the_wrap_and_no_further() {
        let midstream = |seq: u32| {
            let mut f = Flow::test_tcp("198.19.3.17:50000", "198.19.0.1:5432", 1_000_000, 0);
            (f.client_isn, f.server_isn) = (None, None);
            f.orientation = Orientation::Midstream;
            f.seq_pair = Some((seq, 0));
            f
        };
        let w = SEQ_WINDOW;
        for (probe, partner) in [
            (2 * w - 1, 2 * w + 5), // the next bucket up
            (2 * w + 5, 2 * w - 1), // the next bucket down
            (3, u32::MAX - 3),      // below bucket 0: the last one
            (u32::MAX - 3, 3),      // above the last bucket: bucket 0
        ] {
            let index = Index::build(
                &[midstream(partner), midstream(partner.wrapping_add(5 * w))],
                &gate(),
                false,
                |_| true,
            );
            let mut out = Vec::new();
            index.lookup(&midstream(probe), &gate(), &mut out);
            assert_eq!(
                out,
                vec![0],
                "probe {probe}, partner {partner}: the one five buckets on is not a candidate"
            );
        }
    }

    /// The fingerprint of a stream that starts with `bytes`.
    fn fp(bytes: &[u8]) -> Fingerprint {
        let mut s = crate::flows::StreamPrefix::new(128);
        s.add(0, bytes);
        s.fingerprint()
    }

    #[test]
    fn each_piece_of_evidence_adds_its_weight_to_the_score() {
        let g = gate();
        // one connection before and after NAT, 50 µs apart (the gate's delay): tight
        let pair = || {
            let a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 9);
            let b = Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:80", 50_000, 9);
            (a, b)
        };
        let score = |a: &Flow, b: &Flow| evidence(a, b, &g).map(|s| (s.evidence, s.kind, s.score));
        let (a, b) = pair();
        let ports = unchanged_endpoints(&a, &b);
        assert_eq!(
            score(&a, &b),
            Some((
                Evidences::from([Evidence::Isn, Evidence::Ports]),
                LinkKind::Forwarded,
                1000 + TIGHT_BONUS + ports
            ))
        );
        // longer than a strong prefix (a stream still open has no whole hash)
        let request =
            b"GET /api/v1/items?page=2 HTTP/1.1\r\nHost: shop.example\r\nAccept: */*\r\n\r\n".as_slice();
        let response =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".as_slice();
        let (mut a, mut b) = pair();
        (a.client_fp, b.client_fp) = (fp(request), fp(request));
        let c = a.client_fp.agreement(&b.client_fp).unwrap() as i64;
        assert_eq!(
            score(&a, &b).unwrap().2,
            2000 + c + TIGHT_BONUS + ports,
            "client bytes: 1000 + agreeing bytes"
        );
        (a.server_fp, b.server_fp) = (fp(response), fp(response));
        let s = a.server_fp.agreement(&b.server_fp).unwrap() as i64;
        assert_eq!(score(&a, &b).unwrap().2, 3000 + c + s + TIGHT_BONUS + ports, "server bytes too");
        let (mut a, mut b) = pair();
        (a.client_ip_id, b.client_ip_id) = (Some(7), Some(7));
        assert_eq!(score(&a, &b).unwrap().2, 1000 + 50 + TIGHT_BONUS + ports, "the IP ID");
        // an ISN-randomizing middlebox: another ISN, the same IP ID and bytes, TTL - 1
        let (mut a, mut b) = pair();
        b.client_isn = Some(10);
        (a.client_fp, b.client_fp) = (fp(request), fp(request));
        (a.client_ip_id, b.client_ip_id, b.client_ttl) = (Some(7), Some(7), 63);
        let (ev, kind, sc) = score(&a, &b).unwrap();
        assert_eq!((ev[0], kind), (Evidence::SeqShift, LinkKind::SeqShift));
        assert_eq!(sc, 800 + 1000 + c + TIGHT_BONUS + 50 + ports);
        // ... or one on the wire that keeps the TTL and both ports (a SYN proxy,
        // tcprewrite --tcp-sequence): the same packets, shifted.
        b.client_ttl = a.client_ttl;
        assert_eq!(score(&a, &b).unwrap().1, LinkKind::SeqShift, "ports kept, TTL kept");
        // ... also when the IP ID differs (a rewriter that renumbers it): both
        // endpoints are the same, so no proxy's own connection
        let (mut a2, mut b2) = (a.clone(), b.clone());
        (a2.client_ip_id, b2.client_ip_id) = (Some(7), Some(9));
        assert_eq!(score(&a2, &b2).map(|s| s.1), Some(LinkKind::Proxy), "a NATed client, IP ID not kept");
        b2.client = a2.client;
        assert_eq!(score(&a2, &b2).map(|s| s.1), Some(LinkKind::SeqShift), "endpoints kept, IP ID not");
        // The TTL kept and a port moved: a proxy's own connection (which IP ID
        // the proxy's kernel gave its SYN says nothing then).
        for (client, server) in [(1, 0), (0, 1)] {
            let (mut c2, mut d2) = (a.clone(), b.clone());
            d2.client.port += client;
            d2.server.port += server;
            c2.client_ttl = d2.client_ttl;
            assert_eq!(score(&c2, &d2).map(|s| s.1), Some(LinkKind::Proxy), "port moved {client} {server}");
            // Routed (TTL − 1) by a box that also remaps the port: still a shift.
            d2.client_ttl = c2.client_ttl - 1;
            assert_eq!(score(&c2, &d2).map(|s| s.1), Some(LinkKind::SeqShift), "routed {client} {server}");
        }
        // no handshake at one side, the same sequence space
        let (mut a, b) = pair();
        (a.client_isn, a.server_isn) = (None, None);
        a.orientation = Orientation::Midstream;
        let (ev, _, sc) = score(&a, &b).unwrap();
        assert_eq!((ev[0], sc), (Evidence::SeqAck, 1000 + TIGHT_BONUS + ports));
        // a datagram: 1000 + the agreeing bytes both ways
        let (mut a, mut b) = pair();
        for f in [&mut a, &mut b] {
            (f.proto, f.client_isn, f.server_isn, f.seq_pair) = (FlowProto::Udp, None, None, None);
            (f.client_fp, f.server_fp) = (fp(request), fp(response));
        }
        let (ev, _, sc) = score(&a, &b).unwrap();
        assert_eq!(
            (ev[0], sc),
            (Evidence::UdpPayload, 1000 + c + s + TIGHT_BONUS + unchanged_endpoints(&a, &b))
        );
        // an echo: 1000 when the echo keys agree, nothing when only one side's is known or they differ
        let echo = |payload: Option<(u32, u64)>| {
            let mut f = Flow::test_tcp("198.18.0.1:0", "198.19.0.1:0", 0, 0);
            (f.proto, f.client_isn, f.server_isn, f.seq_pair) = (FlowProto::Icmp, None, None, None);
            f.echo = Some(Box::new(crate::flows::EchoSummary {
                first_seq: 1,
                last_seq: 1,
                requests: 1,
                replies: 1,
                payload,
            }));
            f
        };
        let (a, mut b) = (echo(Some((56, 7))), echo(Some((56, 7))));
        b.first_client_ns = Ns::at(50_000);
        let (ev, _, sc) = score(&a, &b).unwrap();
        assert_eq!((ev[0], sc), (Evidence::IcmpEcho, 1000 + TIGHT_BONUS + unchanged_endpoints(&a, &b)));
        b.echo.as_mut().unwrap().payload = Some((56, 8));
        assert_eq!(score(&a, &b), None, "another payload");
        // one ISN, not starting together but alive together (a SYN lost between
        // the captures, retransmitted later): the same sequence space still pairs
        let (mut a, mut b) = pair();
        a.last_ns = 2_000_000_000;
        (b.first_ns, b.first_client_ns) = (300_000_000, Ns::at(300_000_000));
        let (ev, kind, sc) = score(&a, &b).unwrap();
        assert_eq!((ev[0], kind, sc), (Evidence::Isn, LinkKind::Forwarded, 1000 + ports));
        // other protocols or address families never pair
        let (a, mut b) = pair();
        b.proto = FlowProto::Udp;
        assert_eq!(score(&a, &b), None);
        let (a, mut b) = pair();
        b.v6 = true;
        assert_eq!(score(&a, &b), None);
    }

    #[test]
    fn a_weak_pair_is_ruled_out_by_anything_known_that_disagrees_and_only_by_that() {
        let g = gate();
        // two flows without a strong key, starting together, every endpoint changed
        let pair = || {
            let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 0);
            let mut b = Flow::test_tcp("198.19.3.17:50000", "198.19.9.9:8080", 50_000, 0);
            for f in [&mut a, &mut b] {
                (f.client_isn, f.server_isn, f.seq_pair) = (None, None, None);
                f.orientation = Orientation::Midstream;
            }
            (a, b)
        };
        let (a, b) = pair();
        assert_eq!(
            weak_evidence(&a, &b, &g),
            Some(Evidences::from([Evidence::Time])),
            "no endpoint kept: time alone"
        );
        type Edit = fn(&mut Flow, &mut Flow);
        let ruled_out: [(&str, Edit); 8] = [
            ("client bytes differ", |a, b| {
                (a.client_fp, b.client_fp) = (fp(b"GET /a HTTP/1.1\r\n"), fp(b"GET /b HTTP/1.1\r\n"))
            }),
            ("server bytes differ", |a, b| {
                (a.server_fp, b.server_fp) = (fp(b"HTTP/1.1 200 OK\r\n"), fp(b"HTTP/1.1 404 No\r\n"))
            }),
            ("ISNs differ", |a, b| (a.client_isn, b.client_isn) = (Some(1), Some(2))),
            ("IP IDs differ", |a, b| (a.client_ip_id, b.client_ip_id) = (Some(1), Some(2))),
            ("echo sequences differ", |a, b| {
                let e = |first_seq| {
                    Box::new(crate::flows::EchoSummary {
                        first_seq,
                        last_seq: first_seq,
                        requests: 1,
                        replies: 1,
                        payload: None,
                    })
                };
                (a.echo, b.echo) = (Some(e(1)), Some(e(2)));
            }),
            ("another protocol", |_, b| b.proto = FlowProto::Udp),
            ("another address family", |_, b| b.v6 = true),
            ("not together", |_, b| (b.first_ns, b.first_client_ns) = (900_000_000, Ns::at(900_000_000))),
        ];
        for (what, edit) in ruled_out {
            let (mut a, mut b) = pair();
            edit(&mut a, &mut b);
            assert_eq!(weak_evidence(&a, &b, &g), None, "{what}");
        }
        // known at one side only: no contradiction
        let one_side: [(&str, Edit); 4] = [
            ("client bytes", |a, _| a.client_fp = fp(b"GET /a HTTP/1.1\r\n")),
            ("server bytes", |_, b| b.server_fp = fp(b"HTTP/1.1 200 OK\r\n")),
            ("ISN", |a, _| a.client_isn = Some(1)),
            ("IP ID", |_, b| b.client_ip_id = Some(2)),
        ];
        for (what, edit) in one_side {
            let (mut a, mut b) = pair();
            edit(&mut a, &mut b);
            assert_eq!(
                weak_evidence(&a, &b, &g),
                Some(Evidences::from([Evidence::Time])),
                "{what} at one side"
            );
        }
        let (mut a, mut b) = pair();
        (a.client_ip_id, b.client_ip_id, b.server) = (Some(5), Some(5), a.server);
        assert_eq!(
            weak_evidence(&a, &b, &g),
            Some(Evidences::from([Evidence::IpId, Evidence::Ports, Evidence::Time]))
        );
        // Another ISN on a connection that carried no payload either way at
        // both captures, its IP ID and both ports kept: the same packets,
        // shifted (a SYN proxy in front of a health check), said so.
        let shifted = || {
            let (mut a, mut b) = pair();
            (b.client.port, b.server.port) = (a.client.port, a.server.port);
            (a.client_isn, b.client_isn, a.client_ip_id, b.client_ip_id) =
                (Some(1), Some(2), Some(5), Some(5));
            (a, b)
        };
        let (a, b) = shifted();
        assert_eq!(
            weak_evidence(&a, &b, &g),
            Some(Evidences::from([Evidence::SeqShift, Evidence::IpId, Evidence::Ports, Evidence::Time]))
        );
        let not_shifted: [(&str, Edit); 7] = [
            ("payload to the server before", |a, _| a.max_to_server.bytes = 10),
            ("payload to the client before", |a, _| a.max_to_client.bytes = 10),
            ("payload to the server after", |_, b| b.max_to_server.bytes = 10),
            ("payload to the client after", |_, b| b.max_to_client.bytes = 10),
            ("client port moved", |_, b| b.client.port += 1),
            ("server port moved", |_, b| b.server.port += 1),
            ("IP ID unknown", |a, b| (a.client_ip_id, b.client_ip_id) = (None, None)),
        ];
        for (what, edit) in not_shifted {
            let (mut a, mut b) = shifted();
            edit(&mut a, &mut b);
            assert_eq!(weak_evidence(&a, &b, &g), None, "{what}");
        }
    }

    #[test]
    fn short_bytes_are_strong_only_when_both_sides_saw_the_whole_stream() {
        let g = gate();
        let short = b"GET /healthz HTTP/1.0\r\n".as_slice(); // 23 bytes: a 16-byte prefix, not a strong one
        let whole = || {
            let mut s = crate::flows::StreamPrefix::new(128);
            s.add(0, short);
            s.set_end(short.len() as u64);
            s.fingerprint()
        };
        // The same rule for each direction: the request's bytes, the reply's.
        for (server, want) in [(false, Evidence::ClientFingerprint), (true, Evidence::ServerFingerprint)] {
            let pair = |wa: bool, wb: bool| {
                let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:6379", 0, 9);
                let mut b = Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:6379", 50_000, 9);
                let (fa, fb) = if server {
                    (&mut a.server_fp, &mut b.server_fp)
                } else {
                    (&mut a.client_fp, &mut b.client_fp)
                };
                *fa = if wa { whole() } else { fp(short) };
                *fb = if wb { whole() } else { fp(short) };
                evidence(&a, &b, &g).unwrap().evidence
            };
            assert!(pair(true, true).contains(&want), "both saw it end: the whole stream ({want:?})");
            for (wa, wb) in [(true, false), (false, true), (false, false)] {
                assert!(!pair(wa, wb).contains(&want), "{want:?}: whole at {wa}/{wb} only");
            }
        }
    }

    #[test]
    fn one_client_isn_with_another_server_isn_is_no_new_sequence_space() {
        // The same client ISN but a server ISN that disagrees (another
        // connection's SYN-ACK): the ISN is no evidence, the bytes still are,
        // and the pair is not taken for a proxy or an ISN-rewriting middlebox.
        let request =
            b"GET /api/v1/items?page=2 HTTP/1.1\r\nHost: shop.example\r\nAccept: */*\r\n\r\n".as_slice();
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 9);
        let mut b = Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:80", 50_000, 9);
        b.server_isn = Some(12345);
        (a.client_fp, b.client_fp) = (fp(request), fp(request));
        (a.client_ip_id, b.client_ip_id, b.client_ttl) = (Some(7), Some(7), 63);
        let s = evidence(&a, &b, &gate()).unwrap();
        assert_eq!(s.kind, LinkKind::Forwarded);
        assert_eq!(s.evidence[0], Evidence::ClientFingerprint);
    }

    #[test]
    fn a_lookup_finds_only_the_flows_that_share_a_join_key() {
        // Five connections at the same instant, each with its own ISN and no
        // bytes: only the one with the same ISN is a candidate, never the rest
        // of the window (the index must not turn into an all-pairs scan).
        let flows: Vec<Flow> = (0..5)
            .map(|i| Flow::test_tcp("198.19.3.17:50000", "198.19.0.1:80", 1_000_000, 100 + i))
            .collect();
        let index = Index::build(&flows, &gate(), false, |_| true);
        let mut out = Vec::new();
        index.lookup(&Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_000, 102), &gate(), &mut out);
        assert_eq!(out, vec![2]);
        index.lookup(&Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_000, 7), &gate(), &mut out);
        assert_eq!(out, Vec::<usize>::new(), "no shared key, no candidate");
    }

    #[test]
    fn keys_of_different_kinds_or_protocols_never_meet() {
        // An ISN equal to another flow's sequence bucket, and the same client
        // bytes over TCP and UDP: each is a different key.
        let isn = 7;
        let by_isn = Flow::test_tcp("198.19.3.17:50000", "198.19.0.1:80", 1_000_000, isn);
        let mut by_seq = Flow::test_tcp("198.19.3.17:50001", "198.19.0.1:80", 1_000_000, 0);
        (by_seq.client_isn, by_seq.server_isn) = (None, None);
        by_seq.orientation = Orientation::Midstream;
        by_seq.seq_pair = Some((isn * SEQ_WINDOW, 1));
        let index = Index::build(&[by_isn, by_seq], &gate(), false, |_| true);
        let mut probe = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_000, isn);
        probe.seq_pair = None;
        let mut out = Vec::new();
        index.lookup(&probe, &gate(), &mut out);
        assert_eq!(out, vec![0], "the ISN key finds the ISN, not a sequence bucket of the same number");

        let bytes = b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n";
        let tcp = sent(Flow::test_tcp("198.19.3.17:50000", "198.19.0.1:80", 1_000_000, 1), bytes);
        let mut udp = sent(Flow::test_tcp("198.19.3.17:50002", "198.19.0.1:80", 1_000_000, 2), bytes);
        udp.proto = FlowProto::Udp;
        (udp.client_isn, udp.server_isn, udp.seq_pair) = (None, None, None);
        let index = Index::build(&[tcp, udp], &gate(), false, |_| true);
        index.lookup(
            &sent(Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000_000, 3), bytes),
            &gate(),
            &mut out,
        );
        assert_eq!(out, vec![0], "TCP bytes find TCP, not the same bytes over UDP");
    }

    #[test]
    fn a_proxy_connection_must_start_while_the_client_connection_is_alive() {
        // The client's connection lives [10 ms, 11 ms]; the proxy's new one may
        // start from a tolerance before it to a tolerance (plus delay) after it.
        let g = Gate { rel_offset_ns: 0, delay_ns: 50_000, tolerance_ns: 1_000_000 };
        let a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 10_000_000, 1);
        let at = |t: i64| Flow::test_tcp("198.18.10.2:50000", "198.19.0.1:80", t, 2);
        assert!(g.during(&a, &at(10_500_000)), "inside its lifetime");
        assert!(g.during(&a, &at(9_000_000)) && !g.during(&a, &at(8_999_999)), "the lower edge");
        assert!(g.during(&a, &at(12_050_000)) && !g.during(&a, &at(12_050_001)), "the upper edge");
        // On the later capture's clock: a 5 s offset moves the window with it.
        let shifted = Gate { rel_offset_ns: 5_000_000_000, ..g };
        assert!(shifted.during(&a, &at(5_010_500_000)) && !shifted.during(&a, &at(10_500_000)));
    }

    #[test]
    fn the_lookup_window_includes_both_of_its_edges() {
        // Partners starting exactly at the window's first and last instant are
        // candidates; one nanosecond outside either edge they are not.
        let g = gate();
        let f = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 10_000_000_000, 7);
        let (lo, hi) = (f.first_ns - g.tolerance_ns, f.last_ns + g.tolerance_ns + g.delay_ns);
        let at = |t: i64| Flow::test_tcp("198.19.3.17:50000", "198.19.0.1:80", t, 7);
        let flows = vec![at(lo - 1), at(lo), at(hi), at(hi + 1)];
        let index = Index::build(&flows, &g, false, |_| true);
        let mut out = Vec::new();
        index.lookup(&f, &g, &mut out);
        assert_eq!(out, vec![1, 2]);
    }

    #[test]
    fn sequence_numbers_align_forward_or_back_and_across_the_wrap() {
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 1);
        let mut b = a.clone();
        a.seq_pair = Some((u32::MAX - 10, 500));
        b.seq_pair = Some((20, 1500));
        assert!(seq_aligned(&a, &b) && seq_aligned(&b, &a));
        b.seq_pair = Some((20, 100)); // client forward, server back: not one packet order
        assert!(!seq_aligned(&a, &b));
        b.seq_pair = Some((SEQ_WINDOW, 1500));
        assert!(!seq_aligned(&a, &b), "too far apart");
        // the window's edge: SEQ_WINDOW apart is already too far, one less is not
        a.seq_pair = Some((0, 0));
        b.seq_pair = Some((SEQ_WINDOW, 0));
        assert!(!seq_aligned(&a, &b) && !seq_aligned(&b, &a));
        b.seq_pair = Some((SEQ_WINDOW - 1, 0));
        assert!(seq_aligned(&a, &b) && seq_aligned(&b, &a));
        // the server's numbers have the same edge, both ways
        b.seq_pair = Some((0, SEQ_WINDOW));
        assert!(!seq_aligned(&a, &b) && !seq_aligned(&b, &a));
        b.seq_pair = Some((0, SEQ_WINDOW - 1));
        assert!(seq_aligned(&a, &b) && seq_aligned(&b, &a));
    }

    #[test]
    fn a_udp_resend_of_the_same_first_datagram_meets_by_overlap_and_only_udp_does() {
        const S: i64 = 1_000_000_000;
        // a: the question at 0 s and again at 6 s; b holds only the second sending
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:9000", 0, 1);
        (a.proto, a.client_isn, a.server_isn, a.syn_count, a.seq_pair) =
            (FlowProto::Udp, None, None, 0, None);
        (a.orientation, a.last_ns) = (Orientation::FirstPacket, 6 * S + 1_000_000);
        a.client_fp = fp(b"get sysUpTime.0 community public");
        let mut b = a.clone();
        (b.first_ns, b.first_client_ns, b.last_ns) = (6 * S, Ns::at(6 * S), 6 * S + 1_000_000);
        assert!(!gate().tight(&a, &b) && gate().overlap(&a, &b));
        let s = evidence(&a, &b, &gate()).expect("the same question, sent again inside a's life");
        assert_eq!(s.evidence.first(), Some(&Evidence::UdpPayload));
        // other first bytes: nothing to meet by
        let mut other = b.clone();
        other.client_fp = fp(b"get sysName.0 community public!!");
        assert!(evidence(&a, &other, &gate()).is_none());
        // lives apart: no overlap, no pair
        let mut later = b.clone();
        (later.first_ns, later.first_client_ns, later.last_ns) = (9 * S, Ns::at(9 * S), 9 * S + 1);
        assert!(evidence(&a, &later, &gate()).is_none());
        // TCP with its client ISN equal but the server's not (no one sequence
        // space) and the same bytes: starts must line up, overlap is not enough
        let mut t = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 7);
        (t.last_ns, t.client_fp) = (6 * S + 1_000_000, fp(b"GET /health HTTP/1.1\r\nHost: a\r\n\r\n"));
        let mut u = t.clone();
        (u.first_ns, u.first_client_ns, u.server_isn) = (6 * S, Ns::at(6 * S), Some(12345));
        assert!(!gate().tight(&t, &u) && gate().overlap(&t, &u));
        assert!(evidence(&t, &u, &gate()).is_none());
        u.first_ns = 0;
        u.first_client_ns = Ns::at(0);
        assert!(evidence(&t, &u, &gate()).is_some(), "together, the bytes pair them");
    }

    /// A UDP flow of three datagrams to the server (0, 1 and 2 s), at `t0`.
    fn conversation(t0: i64, datagrams: &[&[u8]]) -> Flow {
        const S: i64 = 1_000_000_000;
        let mut f = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:9000", t0, 1);
        (f.proto, f.client_isn, f.server_isn, f.syn_count, f.seq_pair) =
            (FlowProto::Udp, None, None, 0, None);
        f.orientation = Orientation::FirstPacket;
        let mut first = crate::flows::StreamPrefix::new(128);
        first.add(0, datagrams[0]);
        first.set_end(datagrams[0].len() as u64);
        f.client_fp = first.fingerprint();
        for (k, d) in datagrams.iter().enumerate().skip(1) {
            let key = crate::flows::datagram_key(d, d.len() as u64).unwrap();
            f.later.get_or_insert_with(Default::default).push(key, t0 + k as i64 * S);
        }
        f.last_ns = t0 + (datagrams.len() as i64 - 1) * S + 1_000_000;
        f
    }

    #[test]
    fn a_udp_flow_that_missed_its_first_datagrams_meets_on_the_next_and_the_index_finds_it() {
        const S: i64 = 1_000_000_000;
        let (q1, q2, q3): (&[u8], &[u8], &[u8]) =
            (b"query one: sysUpTime.0 community public", b"query two", b"query three: sysName.0 community!");
        let whole = conversation(0, &[q1, q2, q3]);
        // b missed the first query (short, under 32 bytes: its whole hash),
        // c the first two (c's first is 32 bytes or more: its prefix hash)
        let b = conversation(S, &[q2, q3]);
        let c = conversation(2 * S, &[q3]);
        for (x, name) in [(&b, "b"), (&c, "c")] {
            for (from, to) in [(&whole, x), (x, &whole)] {
                let s = evidence(from, to, &gate()).unwrap_or_else(|| panic!("{name}: one conversation"));
                assert_eq!(s.evidence.first(), Some(&Evidence::UdpPayload), "{name}");
                let mut hits = Vec::new();
                Index::build(std::slice::from_ref(to), &gate(), false, |_| true).lookup(
                    from,
                    &gate(),
                    &mut hits,
                );
                assert_eq!(hits, vec![0], "{name}: the index finds it");
            }
        }
        // its weight: that of one datagram's bytes, plus the tie-breakers
        let s = evidence(&whole, &b, &gate()).unwrap();
        assert_eq!(s.score, 1000 + unchanged_endpoints(&whole, &b));
        // below a pair whose first datagrams agree
        let same = conversation(0, &[q1, q2, q3]);
        assert!(
            evidence(&whole, &same, &gate()).unwrap().score > evidence(&whole, &b, &gate()).unwrap().score
        );
        // a first datagram that is none of the other's: nothing
        let other = conversation(S, &[b"query four: ifDescr.1 community public", q3]);
        assert!(evidence(&whole, &other, &gate()).is_none());
        // the datagram seen outside the other's life: nothing either
        let late = conversation(9 * S, &[q2]);
        assert!(evidence(&whole, &late, &gate()).is_none());
        // TCP never meets this way
        let (mut t, mut u) = (whole.clone(), b.clone());
        (t.proto, u.proto) = (FlowProto::Tcp, FlowProto::Tcp);
        assert!(!later_datagram(&t, &u));
    }

    #[test]
    fn a_flow_seen_from_its_answer_finds_the_partner_that_started_with_the_query() {
        // b: the query at 0, the answer 20 ms later; a saw only the answer
        let mut b = conversation(0, &[b"what is the time, please? (a question)"]);
        b.server_fp = fp(b"it is twelve o'clock, thank you for asking");
        (b.first_server_ns, b.last_ns) = (Ns::at(20_000_000), 20_000_000);
        let mut a = b.clone();
        (a.orientation, a.client_fp, a.later) = (Orientation::Reply, Fingerprint::default(), None);
        (a.first_ns, a.first_client_ns, a.last_ns) = (20_000_000, Ns::NONE, 20_000_000);
        let mut hits = Vec::new();
        Index::build(std::slice::from_ref(&b), &gate(), false, |_| true).lookup(&a, &gate(), &mut hits);
        assert_eq!(hits, vec![0], "the answer's key, looking back to the query");
        assert!(evidence(&a, &b, &gate()).is_some());
    }

    #[test]
    fn midstream_pair_is_strong_by_seq_ack_and_meets_by_overlap() {
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:5432", 0, 1);
        a.orientation = Orientation::Midstream;
        (a.client_isn, a.server_isn, a.last_ns) = (None, None, 10_000_000_000);
        let mut b = a.clone();
        b.client.addr = "198.19.3.17".parse().unwrap();
        // b's first packet is 3 s into a's lifetime (earlier packets lost at b).
        b.first_ns = 3_000_000_000;
        b.first_client_ns = Ns::at(3_000_000_000);
        b.seq_pair = a.seq_pair.map(|(c, s)| (c.wrapping_add(1200), s.wrapping_add(800)));
        assert!(!gate().tight(&a, &b) && gate().overlap(&a, &b));
        let s = evidence(&a, &b, &gate()).expect("one connection");
        assert!(s.evidence.contains(&Evidence::SeqAck));
        // The sorted index finds it both ways (b missed the beginning: it looks back).
        let mut hits = Vec::new();
        Index::build(std::slice::from_ref(&b), &gate(), false, |_| true).lookup(&a, &gate(), &mut hits);
        assert_eq!(hits, vec![0]);
        Index::build(std::slice::from_ref(&a), &gate(), false, |_| true).lookup(&b, &gate(), &mut hits);
        assert_eq!(hits, vec![0]);
        // A partner with a handshake is indexed by its sequence numbers only when
        // some source needs them.
        let mut c = a.clone();
        (c.client_isn, c.orientation) = (Some(c.seq_pair.unwrap().0.wrapping_sub(1)), Orientation::Syn);
        Index::build(std::slice::from_ref(&c), &gate(), false, |_| true).lookup(&b, &gate(), &mut hits);
        assert!(hits.is_empty());
        Index::build(std::slice::from_ref(&c), &gate(), true, |_| true).lookup(&b, &gate(), &mut hits);
        assert_eq!(hits, vec![0]);
    }

    #[test]
    fn overlap_alone_joins_only_one_sequence_space() {
        let mut a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 1);
        a.last_ns = 10_000_000_000;
        let mut b = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 3_000_000_000, 2);
        b.client_isn = Some(2);
        // A different ISN and no shared bytes: nothing joins them.
        assert_eq!(evidence(&a, &b, &gate()), None);
        (a.client_isn, a.server_isn) = (b.client_isn, b.server_isn);
        assert!(evidence(&a, &b, &gate()).is_some(), "one ISN, lifetimes overlap");
        let mut far = b.clone();
        far.first_ns = 20_000_000_000;
        far.last_ns = 21_000_000_000;
        far.first_client_ns = Ns::at(far.first_ns);
        assert_eq!(evidence(&a, &far, &gate()), None, "after a ended");
    }
}
