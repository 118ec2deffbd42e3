//! One-to-one assignment between the flows of two captures: strong candidates by
//! score, best first; candidates whose best scores tie (nothing separates them
//! inside the time tolerance) are `ambiguous` and say who competed; then a weak
//! pass pairs leftovers only where exactly one candidate lies in the tolerance,
//! seen from both sides.

use super::candidates::{evidence, syn_alignment, weak_evidence, Gate, Index, Scored};
use super::evidence::{Evidence, Evidences, Strength};
use super::LinkKind;
use crate::flows::Flow;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Sources looked up per rayon task.
const LOOKUP_BLOCK: usize = 1024;

/// A chosen pair: the source's position in `sources` and the target flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Assigned {
    pub target: usize,
    pub strength: Strength,
    pub evidence: Evidences,
    pub kind: LinkKind,
    pub candidates: Vec<usize>,
    /// SYNs of the connection the later capture did not see, and when the
    /// retransmission it saw was sent after the first SYN (ns).
    pub syn_missed: Option<(u32, i64)>,
}

/// Pairs `sources` (flow indices in `a`) with free flows of `b`.
/// Returns (position in `sources`, assignment), in `sources` order.
pub fn assign(
    a: &[Flow],
    sources: &[usize],
    b: &[Flow],
    taken: &[bool],
    gate: &Gate,
) -> Vec<(usize, Assigned)> {
    let seq_all = sources.iter().any(|&i| a[i].client_isn.is_none() && a[i].seq_pair.is_some());
    let index = Index::build(b, gate, seq_all, |i| !taken[i]);
    // Candidates of each source, looked up across cores in blocks of sources;
    // blocks are joined in `sources` order (the same list as one loop gives).
    let mut cands: Vec<Scored> = sources
        .par_chunks(LOOKUP_BLOCK)
        .enumerate()
        .flat_map_iter(|(block, chunk)| {
            let mut cands = Vec::new();
            let mut hits = Vec::new();
            for (k, &ia) in chunk.iter().enumerate() {
                index.lookup(&a[ia], gate, &mut hits);
                for &ib in &hits {
                    if let Some(mut s) = evidence(&a[ia], &b[ib], gate) {
                        s.source = block * LOOKUP_BLOCK + k;
                        s.target = ib;
                        cands.push(s);
                    }
                }
            }
            cands
        })
        .collect();
    // The index is done with: its memory serves what follows (a transient
    // left on top of the heap would be handed back to the system and faulted
    // in again by the next allocations).
    drop(index);
    // Best score per source and per target, and how many candidates reach it.
    let mut best_src: Vec<(i64, u32)> = vec![(i64::MIN, 0); sources.len()];
    let mut best_tgt: Vec<(i64, u32)> = vec![(i64::MIN, 0); b.len()];
    for c in &cands {
        for (best, at) in [(&mut best_src, c.source), (&mut best_tgt, c.target)] {
            let e = &mut best[at];
            if c.score > e.0 {
                *e = (c.score, 1);
            } else if c.score == e.0 {
                e.1 += 1;
            }
        }
    }
    // The tied best targets of each source that has a tie (rare: identical
    // requests inside the tolerance); candidates are still grouped by source here.
    let mut ties: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for c in &cands {
        if best_src[c.source].1 > 1 && best_src[c.source].0 == c.score {
            ties.entry(c.source).or_default().push(c.target);
        }
    }
    // Best first; among equals, the nearer in corrected time, then by index.
    // Keys are distinct (one candidate per source and target): one order
    // whatever the threads, and sorting in place needs no stable sort.
    cands.par_sort_unstable_by_key(|c| (std::cmp::Reverse(c.score), c.distance, c.source, c.target));
    let mut src_done = vec![false; sources.len()];
    let mut tgt_done = vec![false; b.len()];
    // Score of the pair chosen for each target (where `tgt_done`), to spot
    // the sources that lost it on a tie.
    let mut won: Vec<i64> = vec![0; b.len()];
    // At most one assignment per source.
    let mut out: Vec<(usize, Assigned)> = Vec::with_capacity(sources.len());
    for c in &cands {
        if src_done[c.source] || tgt_done[c.target] {
            continue;
        }
        let tied_src = best_src[c.source].0 == c.score && best_src[c.source].1 > 1;
        let tied_tgt = best_tgt[c.target].0 == c.score && best_tgt[c.target].1 > 1;
        let ambiguous = tied_src || tied_tgt;
        src_done[c.source] = true;
        tgt_done[c.target] = true;
        won[c.target] = c.score;
        let mut candidates = Vec::new();
        if ambiguous {
            candidates =
                if tied_src { ties.get(&c.source).cloned().unwrap_or_default() } else { vec![c.target] };
            candidates.sort_unstable();
            candidates.dedup();
        }
        out.push((c.source, link(a, sources, b, c, ambiguous, candidates)));
    }
    // Collisions: several sources whose best match is one target (many clients
    // onto one NAT tuple). The chosen one is chained above; every other is
    // reported on the shared flow as `ambiguous`, never dropped.
    for c in &cands {
        if !src_done[c.source]
            && best_src[c.source].0 == c.score
            && tgt_done[c.target]
            && won[c.target] == c.score
        {
            src_done[c.source] = true;
            out.push((c.source, link(a, sources, b, c, true, vec![c.target])));
        }
    }
    let mut left = Leftovers {
        a,
        sources,
        b,
        gate,
        source_free: src_done.iter().map(|done| !done).collect(),
        target_free: (0..b.len()).map(|i| !taken[i] && !tgt_done[i]).collect(),
    };
    weak_pass(&left, &mut out);
    left.claim(&out);
    request_pass(&left, &mut out);
    out.sort_by_key(|(pos, _)| *pos);
    out
}

/// What the strong pass left for the weak passes: the sources and the
/// flows of `b` still free.
struct Leftovers<'x> {
    a: &'x [Flow],
    sources: &'x [usize],
    b: &'x [Flow],
    gate: &'x Gate,
    /// Per position in `sources`: not paired yet.
    source_free: Vec<bool>,
    /// Per flow of `b`: neither taken before this assignment nor paired in it.
    target_free: Vec<bool>,
}

impl Leftovers<'_> {
    /// Takes the sources and targets of `paired` out.
    fn claim(&mut self, paired: &[(usize, Assigned)]) {
        for (pos, x) in paired {
            (self.source_free[*pos], self.target_free[x.target]) = (false, false);
        }
    }
}

/// What a terminating proxy passes on of a request when it rewrites every
/// byte key: the HTTP/1.x request line (method and target, not the version)
/// or the TLS server name, hashed.
fn request_key(f: &Flow) -> Option<(Evidence, u64)> {
    use crate::flows::facts::Field;
    use crate::flows::AppProto;
    let app = f.app.as_deref().filter(|_| f.proto == crate::flows::FlowProto::Tcp)?;
    let hash = |parts: &[&[u8]]| {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for p in parts {
            h.update(&(p.len() as u64).to_le_bytes());
            h.update(p);
        }
        h.digest()
    };
    match app.proto {
        AppProto::Http => {
            let (m, t) = (app.raw(Field::Method)?, app.raw(Field::Target)?);
            Some((Evidence::RequestLine, hash(&[m, t])))
        }
        AppProto::Tls => Some((Evidence::Sni, hash(&[app.raw(Field::Sni)?]))),
        AppProto::Dns => None,
    }
}

/// Pairs leftovers that only their request ties: the same request line or
/// TLS server name ([`request_key`]), the later flow opened while the
/// earlier one was open (a proxy's new connection for it), and exactly one
/// such candidate seen from both sides. Weak, kind proxy; nothing is paired
/// where two candidates compete (health checks: the same line every few
/// seconds). Candidates come from a hash of the free flows' keys.
fn request_pass(l: &Leftovers<'_>, out: &mut Vec<(usize, Assigned)>) {
    let (a, sources, b, gate) = (l.a, l.sources, l.b, l.gate);
    let mut free_b: FxHashMap<(Evidence, u64), Vec<usize>> = FxHashMap::default();
    for (ib, f) in b.iter().enumerate().filter(|&(i, _)| l.target_free[i]) {
        if let Some(k) = request_key(f) {
            free_b.entry(k).or_default().push(ib);
        }
    }
    if free_b.is_empty() {
        return;
    }
    let mut found: Vec<(usize, usize, Evidence)> = Vec::new();
    let mut claims: FxHashMap<usize, usize> = FxHashMap::default();
    for (pos, &ia) in sources.iter().enumerate().filter(|&(pos, _)| l.source_free[pos]) {
        let Some(k) = request_key(&a[ia]) else { continue };
        let Some(list) = free_b.get(&k) else { continue };
        // a new connection: another ISN, and no known bytes in common (one
        // connection the strong pass kept apart by time is no proxy's)
        let new_connection = |f: &Flow| {
            let fa = &a[ia];
            (fa.client_isn.is_none() || fa.client_isn != f.client_isn)
                && fa.client_fp.agreement(&f.client_fp).is_none()
        };
        let mut during = list.iter().filter(|&&ib| gate.during(&a[ia], &b[ib]) && new_connection(&b[ib]));
        let (Some(&ib), None) = (during.next(), during.next()) else {
            // none, or two that nothing tells apart: claimed by every source that sees them
            for &ib in list.iter().filter(|&&ib| gate.during(&a[ia], &b[ib]) && new_connection(&b[ib])) {
                *claims.entry(ib).or_insert(0) += 2;
            }
            continue;
        };
        *claims.entry(ib).or_insert(0) += 1;
        found.push((pos, ib, k.0));
    }
    for (pos, ib, token) in found {
        if claims.get(&ib) != Some(&1) {
            continue; // another source's candidate too
        }
        out.push((
            pos,
            Assigned {
                target: ib,
                strength: Strength::Weak,
                kind: LinkKind::Proxy,
                evidence: [token, Evidence::Time].into(),
                candidates: Vec::new(),
                syn_missed: None,
            },
        ));
    }
}

/// The assignment of candidate `c`.
fn link(
    a: &[Flow],
    sources: &[usize],
    b: &[Flow],
    c: &Scored,
    ambiguous: bool,
    candidates: Vec<usize>,
) -> Assigned {
    Assigned {
        target: c.target,
        strength: if ambiguous { Strength::Ambiguous } else { Strength::Strong },
        evidence: c.evidence,
        kind: c.kind,
        candidates,
        syn_missed: syn_alignment(&a[sources[c.source]], &b[c.target]).and_then(|al| al.b_missed),
    }
}

/// Pairs leftovers with no strong key when exactly one candidate lies inside
/// the tolerance, from both sides. Candidates come from a time-sorted sweep of
/// `b` (no all-pairs scan).
fn weak_pass(l: &Leftovers<'_>, out: &mut Vec<(usize, Assigned)>) {
    let (a, sources, b, gate) = (l.a, l.sources, l.b, l.gate);
    let start = |f: &Flow| f.first_client_ns.get().unwrap_or(f.first_ns);
    let mut free_b: Vec<(i64, usize)> = (0..b.len())
        .filter(|&i| l.target_free[i])
        .map(|i| (start(&b[i]).saturating_sub(gate.rel_offset_ns).saturating_sub(gate.delay_ns), i))
        .collect();
    if free_b.is_empty() {
        return;
    }
    free_b.sort_unstable();
    let tol = gate.tolerance_ns;
    let mut per_source: Vec<(usize, usize, Evidences)> = Vec::new();
    let mut target_count: FxHashMap<usize, usize> = FxHashMap::default();
    for (pos, &ia) in sources.iter().enumerate() {
        if !l.source_free[pos] {
            continue;
        }
        let t = start(&a[ia]);
        let lo = free_b.partition_point(|&(tb, _)| tb < t.saturating_sub(tol));
        let mut found: Option<(usize, Evidences)> = None;
        let mut count = 0;
        for &(tb, ib) in &free_b[lo..] {
            if tb > t.saturating_add(tol) {
                break;
            }
            if let Some(ev) = weak_evidence(&a[ia], &b[ib], gate) {
                count += 1;
                *target_count.entry(ib).or_insert(0) += 1;
                found = Some((ib, ev));
            }
        }
        if count == 1 {
            if let Some((ib, ev)) = found {
                per_source.push((pos, ib, ev));
            }
        }
    }
    // Sources whose one candidate is the same flow, and nobody else's candidate
    // either: a collision (many clients onto one NAT tuple), reported on it as
    // `ambiguous` rather than dropped.
    let mut claims: FxHashMap<usize, usize> = FxHashMap::default();
    for &(_, ib, _) in &per_source {
        *claims.entry(ib).or_insert(0) += 1;
    }
    for (pos, ib, ev) in per_source {
        let (count, claimed) = (target_count.get(&ib).copied(), claims.get(&ib).copied());
        let strength = match (count, claimed) {
            (Some(1), _) => Strength::Weak,
            (Some(n), Some(c)) if n == c => Strength::Ambiguous,
            _ => continue,
        };
        let candidates = if strength == Strength::Ambiguous { vec![ib] } else { Vec::new() };
        out.push((
            pos,
            Assigned {
                target: ib,
                strength,
                kind: if ev.contains(&Evidence::SeqShift) { LinkKind::SeqShift } else { LinkKind::Forwarded },
                evidence: ev,
                candidates,
                syn_missed: None,
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Gate {
        Gate { rel_offset_ns: 0, delay_ns: 0, tolerance_ns: 1_000_000 }
    }

    /// A flow with no strong key: midstream, no ISN, no sequence pair.
    fn weak(client: &str, t: i64) -> Flow {
        let mut f = Flow::test_tcp(client, "198.19.0.1:80", t, 0);
        (f.client_isn, f.server_isn, f.seq_pair) = (None, None, None);
        f.orientation = crate::flows::Orientation::Midstream;
        f
    }

    #[test]
    fn sources_beyond_the_first_lookup_block_keep_their_own_partners() {
        // More sources than one lookup block: positions in later blocks must
        // still point at their own source (each pair shares only its ISN).
        let n = LOOKUP_BLOCK * 2 + 7;
        let client = |i: usize| format!("198.18.{}.{}:{}", i / 250, i % 250 + 1, 10_000 + i);
        let a: Vec<Flow> = (0..n)
            .map(|i| Flow::test_tcp(&client(i), "198.19.0.1:80", i as i64 * 2_000_000, 1_000 + i as u32))
            .collect();
        // The NAT-ed side in reverse order, so a wrong position cannot line up by accident.
        let b: Vec<Flow> = (0..n)
            .rev()
            .map(|i| {
                Flow::test_tcp(
                    "198.19.3.17:40000",
                    "198.19.0.1:80",
                    i as i64 * 2_000_000 + 50_000,
                    1_000 + i as u32,
                )
            })
            .collect();
        let sources: Vec<usize> = (0..n).collect();
        let out = assign(&a, &sources, &b, &vec![false; n], &gate());
        assert_eq!(out.len(), n);
        for (pos, l) in &out {
            assert_eq!(l.target, n - 1 - pos, "source {pos}");
            assert_eq!(l.strength, Strength::Strong, "source {pos}");
        }
    }

    #[test]
    fn several_sources_tied_on_one_target_are_all_reported_on_it() {
        // Three clients, one ISN each shared with the single NAT-ed flow (a
        // collision): the first is chained, the others ambiguous on the same flow.
        let a: Vec<Flow> = (0..3)
            .map(|i| Flow::test_tcp(&format!("198.18.0.{}:5353", i + 1), "198.19.0.1:80", i * 10_000, 5))
            .collect();
        let b = vec![Flow::test_tcp("198.19.3.17:5353", "198.19.0.1:80", 5_000, 5)];
        let out = assign(&a, &[0, 1, 2], &b, &[false], &gate());
        assert_eq!(out.len(), 3);
        for (pos, l) in &out {
            assert_eq!(l.target, 0, "source {pos}");
            assert_eq!(l.strength, Strength::Ambiguous);
            assert_eq!(l.candidates, vec![0]);
        }
    }

    #[test]
    fn a_weak_candidate_another_source_also_holds_links_nobody() {
        // No strong key anywhere. The first client's only candidate is T; the
        // second's are T and U: T is wanted by a source that has a choice, so
        // pairing the first with it (even as ambiguous) would be a guess.
        let a = vec![weak("198.18.0.1:5000", 0), weak("198.18.0.2:5000", 1_800_000)];
        let b = vec![weak("198.19.3.17:5000", 900_000), weak("198.19.3.17:5001", 2_700_000)];
        let out = assign(&a, &[0, 1], &b, &[false, false], &gate());
        let got: Vec<(usize, usize, Strength)> =
            out.iter().map(|(p, l)| (*p, l.target, l.strength)).collect();
        assert_eq!(got, vec![], "no link without a unique candidate on both sides");
    }

    #[test]
    fn sources_whose_one_weak_candidate_is_one_flow_are_ambiguous_on_it() {
        // No strong key anywhere (midstream, no sequence pair): two clients inside
        // the tolerance of one flow, which has no other candidate.
        let a = vec![weak("198.18.0.1:5000", 0), weak("198.18.0.2:5000", 200_000)];
        let b = vec![weak("198.19.3.17:5000", 100_000)];
        let out = assign(&a, &[0, 1], &b, &[false], &gate());
        let got: Vec<(usize, usize, Strength)> =
            out.iter().map(|(p, l)| (*p, l.target, l.strength)).collect();
        assert_eq!(got, vec![(0, 0, Strength::Ambiguous), (1, 0, Strength::Ambiguous)]);
        assert!(out.iter().all(|(_, l)| l.candidates == vec![0]));
        // Alone, the same pair is weak.
        let out = assign(&a, &[0], &b, &[false], &gate());
        assert_eq!((out[0].1.strength, out[0].1.kind), (Strength::Weak, LinkKind::Forwarded));
    }

    #[test]
    fn an_empty_connection_shifted_on_the_wire_is_a_weak_sequence_shift() {
        // A health check through a SYN proxy: handshake and FIN, no payload;
        // another ISN, the same IP ID and ports.
        let mut a = vec![Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 1)];
        let mut b = vec![Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 100_000, 9)];
        (a[0].client_ip_id, b[0].client_ip_id) = (Some(7), Some(7));
        let out = assign(&a, &[0], &b, &[false], &gate());
        assert_eq!(out.len(), 1);
        let l = &out[0].1;
        assert_eq!((l.target, l.strength, l.kind), (0, Strength::Weak, LinkKind::SeqShift));
        assert_eq!(l.evidence[0], Evidence::SeqShift);
    }

    #[test]
    fn a_better_evidenced_source_wins_and_distinct_targets_stay_strong() {
        let a = vec![
            Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 1),
            Flow::test_tcp("198.18.0.1:40001", "198.19.0.1:81", 500_000, 1),
        ];
        // Same ISN (a scanner): the server port tells the probes apart.
        let b = vec![
            Flow::test_tcp("198.19.3.17:40001", "198.19.0.1:81", 550_000, 1),
            Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:80", 50_000, 1),
        ];
        let out = assign(&a, &[0, 1], &b, &[false, false], &gate());
        let got: Vec<(usize, usize, Strength)> =
            out.iter().map(|(p, l)| (*p, l.target, l.strength)).collect();
        assert_eq!(got, vec![(0, 1, Strength::Strong), (1, 0, Strength::Strong)]);
    }

    /// `request_pass` on its own (nothing assigned before it).
    fn request_pass_alone(a: &[Flow], b: &[Flow]) -> Vec<(usize, Assigned)> {
        let sources: Vec<usize> = (0..a.len()).collect();
        let g = gate();
        let (source_free, target_free) = (vec![true; a.len()], vec![true; b.len()]);
        let mut out = Vec::new();
        request_pass(&Leftovers { a, sources: &sources, b, gate: &g, source_free, target_free }, &mut out);
        out
    }

    /// A connection carrying `request` (an HTTP request line's method and
    /// target, or with `tls` a ClientHello's server name), open 0–10 ms
    /// after `t`, with its own ISN.
    fn asking(client: &str, server: &str, t: i64, isn: u32, request: (&str, &str), tls: bool) -> Flow {
        use crate::flows::facts::Field;
        use crate::flows::{AppFacts, AppProto};
        let mut f = Flow::test_tcp(client, server, t, isn);
        f.last_ns = t + 10_000_000;
        let mut app = AppFacts::new(if tls { AppProto::Tls } else { AppProto::Http });
        if tls {
            app.set(Field::Sni, request.1.as_bytes());
        } else {
            app.set(Field::Method, request.0.as_bytes());
            app.set(Field::Target, request.1.as_bytes());
        }
        f.app = Some(Box::new(app));
        f
    }

    #[test]
    fn a_request_line_or_server_name_alone_pairs_one_proxy_connection_weakly_and_never_a_contest() {
        let get = ("GET", "/api/items?page=2");
        let client = |t, isn| asking("198.18.90.42:40001", "198.19.96.10:80", t, isn, get, false);
        // the proxy's connection, opened 2 ms into the client's
        let upstream = |t, isn| asking("198.19.3.17:51000", "198.19.96.10:8080", t, isn, get, false);
        let pair = |a: &[Flow], b: &[Flow]| {
            let sources: Vec<usize> = (0..a.len()).collect();
            assign(a, &sources, b, &vec![false; b.len()], &gate())
        };
        let out = pair(&[client(0, 1)], &[upstream(2_000_000, 2)]);
        assert_eq!(out.len(), 1);
        let x = &out[0].1;
        assert_eq!((x.target, x.strength, x.kind), (0, Strength::Weak, LinkKind::Proxy));
        assert_eq!(&x.evidence[..], &[Evidence::RequestLine, Evidence::Time]);
        // a TLS server name the same way
        let hello = |c, s, t, isn| asking(c, s, t, isn, ("", "api.example.test"), true);
        let out = pair(
            &[hello("198.18.90.42:40001", "198.19.96.10:443", 0, 1)],
            &[hello("198.19.3.17:51000", "198.19.96.10:8443", 2_000_000, 2)],
        );
        assert_eq!(&out[0].1.evidence[..], &[Evidence::Sni, Evidence::Time]);
        // two upstream connections inside the client's: nothing tells them apart
        assert!(pair(&[client(0, 1)], &[upstream(2_000_000, 2), upstream(5_000_000, 3)]).is_empty());
        // two clients open while one upstream connection starts: neither has it
        assert!(pair(&[client(0, 1), client(1_000_000, 4)], &[upstream(2_000_000, 2)]).is_empty());
        // but each its own, where their lives keep them apart
        let out =
            pair(&[client(0, 1), client(50_000_000, 4)], &[upstream(52_000_000, 3), upstream(2_000_000, 2)]);
        assert_eq!(out.iter().map(|(p, x)| (*p, x.target)).collect::<Vec<_>>(), [(0, 1), (1, 0)]);
        // opened after the client's connection closed, another target, or the
        // same target of another method: nothing
        for other in [
            upstream(30_000_000, 2),
            asking(
                "198.19.3.17:51000",
                "198.19.96.10:8080",
                2_000_000,
                2,
                ("GET", "/api/items?page=3"),
                false,
            ),
            asking(
                "198.19.3.17:51000",
                "198.19.96.10:8080",
                2_000_000,
                2,
                ("HEAD", "/api/items?page=2"),
                false,
            ),
        ] {
            assert!(pair(&[client(0, 1)], &[other]).is_empty());
        }
        // a flow an earlier assignment took is nobody's here
        assert!(assign(&[client(0, 1)], &[0], &[upstream(2_000_000, 2)], &[true], &gate()).is_empty());
        // a client that sees two candidates contests both: a later client
        // that sees only one of them does not get it ...
        let late = |t| asking("198.18.90.43:40002", "198.19.96.10:80", t, 5, get, false);
        let b = [upstream(2_000_000, 2), upstream(5_000_000, 3)];
        assert!(request_pass_alone(&[client(0, 1), late(4_000_000)], &b).is_empty());
        // ... but one that is no candidate of the first client's is not contested
        let far = [upstream(30_000_000, 3)];
        let out = request_pass_alone(&[client(0, 1), late(25_000_000)], &far);
        assert_eq!(out.iter().map(|(p, x)| (*p, x.target)).collect::<Vec<_>>(), [(1, 0)]);
        // one connection (its ISN) the strong pass left apart: no proxy's
        let mut same = upstream(2_000_000, 1);
        same.server_isn = Some(77);
        assert!(request_pass_alone(&[client(0, 1)], &[same]).is_empty());
        // the same bytes both sides: the strong pass has it first
        let mut a = client(0, 1);
        let mut b = upstream(2_000_000, 2);
        let mut s = crate::flows::StreamPrefix::new(128);
        s.add(0, b"GET /api/items?page=2 HTTP/1.1\r\nHost: shop\r\nAccept: */*\r\n\r\n");
        (a.client_fp, b.client_fp) = (s.fingerprint(), s.fingerprint());
        assert_eq!(pair(&[a], &[b])[0].1.strength, Strength::Strong);
    }
}
