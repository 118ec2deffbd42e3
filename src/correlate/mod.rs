//! Pairs flows of neighbouring captures by evidence that survives NAT (ISN,
//! stream fingerprints, UDP payload, ICMP echo sequence and payload, IP ID)
//! behind a clock-offset-corrected time gate, then chains the pairs into requests
//! rooted at capture 1. Hash joins on each key, never an all-pairs scan; ties
//! that no evidence separates are `ambiguous`, never guessed.
//! Takes one `Flows` per capture; gives a `Correlation`. Never formats text,
//! never reads captures. Its settings: `CorrelateConfig`, with the clocks
//! `--clocks-from` pins (`Pinned` per point; `PinnedClocks` by label, as an
//! earlier report gives them).

mod assign;
mod attempts;
mod candidates;
pub mod clock;
mod estimate;
pub mod evidence;
mod turn;
pub use turn::{turn_answers, turn_midstream};

pub use candidates::{join_unpaired, unique_pairs, unique_pairs_with_ports, TOLERANCE_CAP_NS};
pub use clock::{ClockEstimate, OffsetMethodKind};
pub use evidence::{Evidence, Evidences, Strength};

use crate::flows::Flows;

/// Settings of the correlate stage.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CorrelateConfig {
    /// `--offset LABEL=SECONDS`, as capture index → offset in ns (positive: that
    /// capture's clock runs ahead of capture 1's).
    pub offsets_ns: Vec<(usize, i64)>,
    /// `--max-offset` in ns (default 60 s).
    pub max_offset_ns: Option<i64>,
    /// `--tolerance` in ns; None = 5 × offset spread + 1 ms, capped at 200 ms.
    pub tolerance_ns: Option<i64>,
    /// Per observation point, the capture (file) whose clock it reads: the
    /// sub-points of one split capture share one clock. Empty: every point is
    /// its own capture.
    pub clock_of: Vec<usize>,
    /// `--clocks-from`, per observation point: the pinned clock (offset,
    /// spread) and per neighbour boundary the pinned delay; None: estimated.
    pub pinned: Option<Pinned>,
}

/// Clocks pinned per observation point (see [`PinnedClocks`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pinned {
    /// Per point: (offset, spread) in ns, or None to estimate that point's.
    pub clocks: Vec<Option<(i64, i64)>>,
    /// Per neighbour boundary: Some(delay) when pinned (the delay may be unknown).
    pub delays: Vec<Option<Option<i64>>>,
}

/// Clocks taken from an earlier report (`--clocks-from`), by label, so that
/// every shard of a run corrects time exactly as that run did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PinnedClocks {
    /// The report, for messages.
    pub source: String,
    /// Per capture point of the report: label, clock offset and its spread (ns).
    pub clocks: Vec<(String, i64, i64)>,
    /// Per boundary of the report: `A->B` and its one-way delay (ns), when known.
    pub delays: Vec<(String, Option<i64>)>,
}

/// What kind of box sits between the two flows of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    /// Same connection (addresses and ports may be translated).
    Forwarded,
    /// Same packets, every sequence number shifted by one constant.
    SeqShift,
    /// A new connection carrying the same bytes (terminating proxy).
    Proxy,
}

/// The pairing of one request's flows at two captures (`from` < `to`, not
/// necessarily neighbours when the request was missed in between).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    pub strength: Strength,
    pub evidence: Evidences,
    pub kind: LinkKind,
    /// `ambiguous`: the flows at `to` that tied (the chosen one included).
    pub candidates: Vec<usize>,
    /// The first SYN(s) were not seen at `to`: how many, and when the
    /// retransmission it saw was sent after the first SYN (ns, at `from`).
    pub syn_missed: Option<(u32, i64)>,
}

/// One request: its flow at each capture (index into that capture's flows).
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub hops: Vec<Option<usize>>,
    /// In path order.
    pub links: Vec<Link>,
    /// Earlier attempts of the connection (capture, flow), in path then time
    /// order: the same client ISN on another tuple, before the chained flow.
    pub attempts: Vec<(usize, usize)>,
}

/// The result of matching.
#[derive(Clone, Debug, PartialEq)]
pub struct Correlation {
    /// Per capture: its clock relative to capture 1.
    pub clocks: Vec<ClockEstimate>,
    /// Per neighbour boundary (i, i+1): estimated one-way delay in ns.
    pub delays_ns: Vec<Option<i64>>,
    /// One chain per flow of capture 1, in that capture's flow order.
    pub chains: Vec<Chain>,
    /// Per capture: flows that belong to no chain (always empty for capture 1).
    pub unmatched: Vec<Vec<usize>>,
    /// With pinned clocks (`--clocks-from`): what these flows alone would
    /// have estimated, to say when it disagrees with the pinned clocks.
    pub estimated: Option<Vec<ClockEstimate>>,
}

/// Matches the flows of captures given in path order.
pub fn correlate(captures: &[Flows], config: &CorrelateConfig) -> Correlation {
    let n = captures.len();
    let (mut clocks, mut delays_ns) = clock::estimate(captures, config);
    let estimated = config.pinned.as_ref().map(|p| {
        let estimated = clocks.clone();
        clock::pin(&mut clocks, &mut delays_ns, p);
        estimated
    });
    let mut chains: Vec<Chain> = match captures.first() {
        Some(first) => (0..first.flows.len())
            .map(|i| {
                let mut hops = vec![None; n];
                hops[0] = Some(i);
                Chain { hops, links: Vec::new(), attempts: Vec::new() }
            })
            .collect(),
        None => Vec::new(),
    };
    let mut taken: Vec<Vec<bool>> = captures.iter().map(|c| vec![false; c.flows.len()]).collect();
    if let Some(t) = taken.first_mut() {
        t.iter_mut().for_each(|x| *x = true);
    }
    for to in 1..n {
        // Neighbour first, then captures further back for requests missed in between.
        for from in (0..to).rev() {
            let frontier: Vec<usize> = chains
                .iter()
                .enumerate()
                .filter(|(_, c)| c.hops[to].is_none() && last_seen(c, to) == Some(from))
                .map(|(i, _)| i)
                .collect();
            if frontier.is_empty() {
                continue;
            }
            // Chains that share a flow (a collision) share its onward link: each
            // flow is assigned once.
            let mut sources: Vec<usize> = Vec::with_capacity(frontier.len());
            // Per flow at `from`: its position in `sources` (u32::MAX: none yet).
            let mut first_pos: Vec<u32> = vec![u32::MAX; captures[from].flows.len()];
            let slot: Vec<u32> = frontier
                .iter()
                .map(|&c| {
                    let flow = chains[c].hops[from].unwrap_or(0);
                    if first_pos[flow] == u32::MAX {
                        first_pos[flow] = sources.len() as u32;
                        sources.push(flow);
                    }
                    first_pos[flow]
                })
                .collect();
            drop(first_pos);
            let gate = candidates::Gate::new(&clocks, &delays_ns, from, to, config);
            let links =
                assign::assign(&captures[from].flows, &sources, &captures[to].flows, &taken[to], &gate);
            // Per position in `sources`: its link's index in `links` (u32::MAX: none).
            let mut by_pos: Vec<u32> = vec![u32::MAX; sources.len()];
            for (i, (pos, _)) in links.iter().enumerate() {
                by_pos[*pos] = i as u32;
            }
            // Chains that share a source flow each take a copy of its link.
            for (k, &pos) in slot.iter().enumerate() {
                let Some((_, link)) = links.get(by_pos[pos as usize] as usize) else { continue };
                let link = link.clone();
                let chain = &mut chains[frontier[k]];
                taken[to][link.target] = true;
                chain.hops[to] = Some(link.target);
                // A chain links each capture after the first at most once:
                // its links sized once (a growing Vec would hold four).
                if chain.links.capacity() == 0 {
                    chain.links.reserve_exact(n - 1);
                }
                chain.links.push(Link {
                    from,
                    to,
                    strength: link.strength,
                    evidence: link.evidence,
                    kind: link.kind,
                    candidates: link.candidates,
                    syn_missed: link.syn_missed,
                });
            }
        }
        attempts::resolve(captures, &mut chains, to, &mut taken[to]);
    }
    let unmatched = taken
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if i == 0 {
                Vec::new()
            } else {
                t.iter().enumerate().filter(|(_, &x)| !x).map(|(f, _)| f).collect()
            }
        })
        .collect();
    Correlation { clocks, delays_ns, chains, unmatched, estimated }
}

/// The last capture before `before` where the chain has a flow.
fn last_seen(chain: &Chain, before: usize) -> Option<usize> {
    (0..before).rev().find(|&i| chain.hops[i].is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::Ns;
    use crate::flows::{Flow, Flows};

    fn capture(flows: Vec<Flow>) -> Flows {
        Flows { flows, stats: Default::default() }
    }

    #[test]
    fn chains_that_share_a_flow_share_its_onward_link() {
        let p1 = capture(
            (0..2)
                .map(|i| Flow::test_tcp(&format!("198.18.0.{}:5353", i + 1), "198.19.0.1:80", i * 10_000, 5))
                .collect(),
        );
        let p2 = capture(vec![Flow::test_tcp("198.19.3.17:5353", "198.19.0.1:80", 5_000, 5)]);
        let p3 = capture(vec![Flow::test_tcp("198.19.3.17:5353", "198.19.0.9:80", 8_000, 5)]);
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        let c = correlate(&[p1, p2, p3], &config);
        assert_eq!(c.chains.len(), 2);
        for chain in &c.chains {
            assert_eq!(&chain.hops[1..], &[Some(0), Some(0)]);
            assert_eq!(chain.links.len(), 2);
            assert_eq!(chain.links[0].strength, Strength::Ambiguous);
            assert_eq!(chain.links[1].strength, Strength::Strong, "the onward link is the shared flow's");
            // Sized once for a link per capture after the first, not grown
            // (a grown Vec holds four: memory kept per request).
            assert_eq!(chain.links.capacity(), 2);
        }
        assert!(c.unmatched.iter().all(Vec::is_empty));
    }

    #[test]
    fn a_middle_capture_that_missed_the_syn_stays_in_the_chain() {
        // The connection lasts 40 ms; the middle capture saw it from the SYN-ACK on.
        let mut first = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 42);
        first.last_ns = 40_000_000;
        let p1 = capture(vec![first]);
        let mut mid = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 10_000_000, 42);
        mid.orientation = crate::flows::Orientation::SynAck;
        mid.syn_count = 0;
        mid.first_client_ns = Ns::at(20_000_000);
        mid.last_ns = 30_000_000;
        let mut last = Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:80", 100_000, 42);
        last.last_ns = 40_100_000;
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        let c = correlate(&[p1, capture(vec![mid]), capture(vec![last])], &config);
        assert_eq!(c.chains[0].hops, vec![Some(0), Some(0), Some(0)]);
        assert_eq!((c.chains[0].links[1].from, c.chains[0].links[1].to), (1, 2));
    }
}
