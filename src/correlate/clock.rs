//! Clock offsets between captures, estimated the NTP way from unambiguous strong
//! matches: with request times a1, b1 and reply times b2, a2 at captures A and B,
//! offset = ((b1 − a1) − (a2 − b2)) / 2 and one-way delay = ((b1 − a1) + (a2 − b2)) / 2;
//! the median over requests with its spread (MAD). Without replies the median of
//! (b1 − a1), which then includes the delay. Positive: that capture's clock runs
//! ahead of capture 1's; corrected time = recorded time − offset.

use super::candidates::unique_pairs;
pub use super::estimate::{ClockEstimate, OffsetMethodKind};
use super::CorrelateConfig;
use crate::flows::{Flow, FlowProto, Flows};
use rayon::prelude::*;

/// Pairs needed for an estimate beyond `--max-offset`.
pub const FAR_SAMPLES: usize = 2;

/// Largest spread (MAD) of an estimate beyond `--max-offset`.
pub const FAR_SPREAD_NS: i64 = 100_000_000;

/// Default `--max-offset`: 60 s.
pub const DEFAULT_MAX_OFFSET_NS: i64 = 60_000_000_000;

/// Estimates every capture's clock and each neighbour boundary's one-way delay.
pub fn estimate(captures: &[Flows], config: &CorrelateConfig) -> (Vec<ClockEstimate>, Vec<Option<i64>>) {
    let n = captures.len();
    let max_offset = config.max_offset_ns.unwrap_or(DEFAULT_MAX_OFFSET_NS);
    let mut clocks =
        vec![ClockEstimate { offset_ns: 0, spread_ns: 0, samples: 0, method: OffsetMethodKind::None }; n];
    if n == 0 {
        return (clocks, Vec::new());
    }
    clocks[0].method = OffsetMethodKind::Reference;
    // Pairwise estimates, B relative to A, between neighbours (or the nearest
    // earlier capture that shares requests when the neighbour shares none).
    let mut delays = vec![None; n.saturating_sub(1)];
    // An offset given for capture 1 names the clock the given offsets are
    // relative to: move them onto capture 1's (estimates already are).
    let given = |c: usize| config.offsets_ns.iter().rev().find(|(i, _)| *i == c).map(|(_, o)| *o);
    let base = given(0).unwrap_or(0);
    // The neighbours' estimates (nearly always the ones used), across cores.
    let neighbours: Vec<PairEstimate> = (1..n)
        .into_par_iter()
        .map(|j| pair_estimate(&captures[j - 1].flows, &captures[j].flows, max_offset))
        .collect();
    // The capture whose clock each point reads (points of one capture are adjacent).
    let clock_of = |j: usize| config.clock_of.get(j).copied().unwrap_or(j);
    for j in 1..n {
        if clock_of(j - 1) == clock_of(j) {
            // A later sub-point of a split capture: its capture's clock. The
            // boundary's delay is read on that one clock.
            clocks[j] = ClockEstimate { samples: 0, method: OffsetMethodKind::SameCapture, ..clocks[j - 1] };
            delays[j - 1] = neighbours[j - 1].one_way_median;
            continue;
        }
        let manual = given(j).map(|o| o.saturating_sub(base));
        // One estimate per capture: against the points before it, from its first
        // sub-point that shares requests with them.
        let last = (j..n).take_while(|&i| clock_of(i) == clock_of(j)).last().unwrap_or(j);
        let mut found = None;
        'points: for m in j..=last {
            for k in (0..j).rev() {
                let est = if k + 1 == m {
                    neighbours[k]
                } else {
                    pair_estimate(&captures[k].flows, &captures[m].flows, max_offset)
                };
                if est.samples > 0 {
                    found = Some((k, m, est));
                    break 'points;
                }
            }
        }
        // Nothing within --max-offset: pairs found without time may still
        // show a clock off by minutes or days (a host without NTP, a capture
        // from another run), when several agree.
        if found.is_none() && manual.is_none() {
            found = (j..=last)
                .flat_map(|m| (0..j).rev().map(move |k| (k, m)))
                .find_map(|(k, m)| far_estimate(&captures[k].flows, &captures[m].flows).map(|e| (k, m, e)));
        }
        match (manual, found) {
            (Some(offset), est) => {
                clocks[j] = ClockEstimate {
                    offset_ns: offset,
                    spread_ns: 0,
                    samples: 0,
                    method: OffsetMethodKind::Manual,
                };
                if let Some((k, m, est)) = est {
                    // Delay measured on the corrected clocks.
                    if k + 1 == j && m == j {
                        let rel = offset.saturating_sub(clocks[k].offset_ns);
                        delays[j - 1] = est.one_way_median.map(|d| d.saturating_sub(rel));
                    }
                    clocks[j].samples = est.samples;
                }
            }
            (None, Some((k, m, est))) => {
                clocks[j] = ClockEstimate {
                    offset_ns: clocks[k].offset_ns.saturating_add(est.offset_ns),
                    spread_ns: clocks[k].spread_ns.saturating_add(est.spread_ns),
                    samples: est.samples,
                    method: est.method,
                };
                if k + 1 == j && m == j {
                    delays[j - 1] = est.delay_ns;
                }
            }
            (None, None) => {
                clocks[j] = ClockEstimate {
                    offset_ns: clocks[j - 1].offset_ns,
                    spread_ns: clocks[j - 1].spread_ns,
                    samples: 0,
                    method: OffsetMethodKind::None,
                };
            }
        }
    }
    (clocks, delays)
}

/// Replaces the estimates with the pinned clocks and delays (`--clocks-from`):
/// a pinned point reads as `manual` (capture 1 stays the reference) and keeps
/// the estimate's sample count; points and boundaries not pinned keep theirs.
pub fn pin(clocks: &mut [ClockEstimate], delays: &mut [Option<i64>], pinned: &super::Pinned) {
    for (j, c) in clocks.iter_mut().enumerate() {
        if let Some(Some((offset_ns, spread_ns))) = pinned.clocks.get(j) {
            let method = if j == 0 { OffsetMethodKind::Reference } else { OffsetMethodKind::Manual };
            *c = ClockEstimate { offset_ns: *offset_ns, spread_ns: *spread_ns, method, ..*c };
        }
    }
    for (b, d) in delays.iter_mut().enumerate() {
        if let Some(Some(delay)) = pinned.delays.get(b) {
            *d = *delay;
        }
    }
}

/// One boundary's estimate from its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairEstimate {
    pub offset_ns: i64,
    pub spread_ns: i64,
    pub samples: usize,
    pub method: OffsetMethodKind,
    /// NTP one-way delay (None for the one-way method).
    pub delay_ns: Option<i64>,
    /// Median of b1 − a1.
    pub one_way_median: Option<i64>,
}

/// One pair's clock sample: where B holds its flow, when B saw its first
/// client packet, `b1 − a1`, and the NTP offset and delay when both captures
/// saw a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairSample {
    pub ib: usize,
    pub b1: i64,
    pub one_way: i64,
    pub ntp: Option<(i64, i64)>,
}

/// The samples of the flows that pair unambiguously (`unique_pairs`) and
/// whose first packets are comparable, within `max_offset_ns` either way.
pub fn pair_samples(a: &[Flow], b: &[Flow], max_offset_ns: i64) -> Vec<PairSample> {
    samples_of(a, b, unique_pairs(a, b), max_offset_ns)
}

/// [`pair_samples`] of the pairs `pairs` (indices into `a` and `b`).
pub fn samples_of(a: &[Flow], b: &[Flow], pairs: Vec<(usize, usize)>, max_offset_ns: i64) -> Vec<PairSample> {
    let mut samples = Vec::new();
    for (ia, ib) in pairs {
        let (fa, fb) = (&a[ia], &b[ib]);
        let (Some(a1), Some(b1)) = (fa.first_client_ns.get(), fb.first_client_ns.get()) else { continue };
        let d1 = b1.saturating_sub(a1);
        if d1.saturating_abs() > max_offset_ns {
            continue;
        }
        if fa.syn_count > 1 || fb.syn_count > 1 {
            continue; // which SYN crossed is unknown
        }
        if fa.orientation != fb.orientation {
            continue; // one capture missed the SYN: its first client packet is a later one
        }
        if fa.proto == FlowProto::Udp && fa.packets_to_server != fb.packets_to_server {
            // one capture holds datagrams the other does not: its first may be a
            // later one (a retry of the same bytes), which no time can tell
            continue;
        }
        let mut ntp = None;
        if let (Some(a2), Some(b2)) = (fa.first_server_ns.get(), fb.first_server_ns.get()) {
            let d2 = a2.saturating_sub(b2);
            if d2.saturating_abs() <= max_offset_ns && a2 >= a1 {
                ntp = Some((d1.saturating_sub(d2) / 2, d1.saturating_add(d2) / 2));
            }
        }
        samples.push(PairSample { ib, b1, one_way: d1, ntp });
    }
    samples
}

/// Estimates B's clock relative to A's from flows that pair unambiguously.
pub fn pair_estimate(a: &[Flow], b: &[Flow], max_offset_ns: i64) -> PairEstimate {
    let samples = pair_samples(a, b, max_offset_ns);
    let mut one_way: Vec<i64> = samples.iter().map(|s| s.one_way).collect();
    let (mut ntp_offsets, mut ntp_delays): (Vec<i64>, Vec<i64>) =
        samples.iter().filter_map(|s| s.ntp).unzip();
    if !ntp_offsets.is_empty() {
        let (offset, spread) = median_mad(&mut ntp_offsets);
        let (delay, _) = median_mad(&mut ntp_delays);
        let ow = median_mad(&mut one_way).0;
        PairEstimate {
            offset_ns: offset,
            spread_ns: spread,
            samples: ntp_offsets.len(),
            method: OffsetMethodKind::RequestReply,
            delay_ns: Some(delay),
            one_way_median: Some(ow),
        }
    } else if !one_way.is_empty() {
        let (offset, spread) = median_mad(&mut one_way);
        PairEstimate {
            offset_ns: offset,
            spread_ns: spread,
            samples: one_way.len(),
            method: OffsetMethodKind::OneWay,
            delay_ns: None,
            one_way_median: Some(offset),
        }
    } else {
        PairEstimate {
            offset_ns: 0,
            spread_ns: 0,
            samples: 0,
            method: OffsetMethodKind::None,
            delay_ns: None,
            one_way_median: None,
        }
    }
}

/// [`pair_estimate`] with no bound on the offset, kept only when at least
/// [`FAR_SAMPLES`] pairs agree within [`FAR_SPREAD_NS`]: then `time-free`.
pub fn far_estimate(a: &[Flow], b: &[Flow]) -> Option<PairEstimate> {
    let est = pair_estimate(a, b, i64::MAX);
    (est.samples >= FAR_SAMPLES && est.spread_ns <= FAR_SPREAD_NS)
        .then_some(PairEstimate { method: OffsetMethodKind::TimeFree, ..est })
}

/// Median and median absolute deviation (lower median for even counts, so the
/// result is one of the samples and deterministic).
pub fn median_mad(v: &mut [i64]) -> (i64, i64) {
    if v.is_empty() {
        return (0, 0);
    }
    v.sort_unstable();
    let med = v[(v.len() - 1) / 2];
    let mut dev: Vec<i64> = v.iter().map(|x| x.saturating_sub(med).saturating_abs()).collect();
    dev.sort_unstable();
    (med, dev[(dev.len() - 1) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::Ns;

    #[test]
    fn median_and_mad_of_odd_and_even_sets() {
        assert_eq!(median_mad(&mut [5, 1, 3]), (3, 2));
        assert_eq!(median_mad(&mut [4, 1, 3, 2]), (2, 1));
        assert_eq!(median_mad(&mut []), (0, 0));
    }

    /// Flows of one request at a point whose clock reads `offset` ns ahead and
    /// where the request arrives `at` ns after it left the client.
    fn seen(at: i64, offset: i64) -> Flows {
        let mut f = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", at + offset, 5);
        f.first_server_ns = Ns::at(1_000_000 - at + offset);
        Flows { flows: vec![f], stats: Default::default() }
    }

    #[test]
    fn the_sub_points_of_one_capture_share_one_estimate() {
        // a, then a capture split into two points (3 µs apart inside the host) whose clock runs 2 s ahead
        let points = [seen(0, 0), seen(10_000, 2_000_000_000), seen(13_000, 2_000_000_000)];
        let config = CorrelateConfig { clock_of: vec![0, 1, 1], ..CorrelateConfig::default() };
        let (clocks, delays) = estimate(&points, &config);
        assert_eq!(clocks[1].method, OffsetMethodKind::RequestReply);
        assert_eq!(clocks[2].method, OffsetMethodKind::SameCapture);
        assert_eq!(clocks[2].offset_ns, clocks[1].offset_ns);
        assert_eq!(delays[1], Some(3_000), "the host's delay, read on its one clock");
        // Each point its own capture: the second point gets an estimate of its own.
        let (own, _) = estimate(&points, &CorrelateConfig::default());
        assert_eq!(own[2].method, OffsetMethodKind::RequestReply);
    }

    #[test]
    fn a_capture_is_estimated_from_its_first_point_that_shares_requests() {
        let mut points = [seen(0, 0), seen(10_000, 500_000_000), seen(13_000, 500_000_000)];
        points[1].flows[0].client_isn = Some(99); // nothing of point 0 there
        assert_eq!(pair_estimate(&points[0].flows, &points[1].flows, DEFAULT_MAX_OFFSET_NS).samples, 0);
        let config = CorrelateConfig { clock_of: vec![0, 1, 1], ..CorrelateConfig::default() };
        let (clocks, _) = estimate(&points, &config);
        assert!((clocks[1].offset_ns - 500_000_000).abs() < 10_000, "{clocks:?}");
        assert_eq!(clocks[2].offset_ns, clocks[1].offset_ns);
    }

    #[test]
    fn pinned_clocks_replace_the_estimates_they_name_and_keep_the_rest() {
        let est = |o: i64, m| ClockEstimate { offset_ns: o, spread_ns: 7, samples: 3, method: m };
        let mut clocks = vec![
            est(0, OffsetMethodKind::Reference),
            est(5, OffsetMethodKind::RequestReply),
            est(9, OffsetMethodKind::OneWay),
        ];
        let mut delays = vec![Some(40), Some(90)];
        let pinned = crate::correlate::Pinned {
            clocks: vec![Some((0, 0)), Some((2_750, 11)), None],
            delays: vec![Some(None), None],
        };
        pin(&mut clocks, &mut delays, &pinned);
        assert_eq!(clocks[0].method, OffsetMethodKind::Reference);
        assert_eq!(
            clocks[1],
            ClockEstimate { offset_ns: 2_750, spread_ns: 11, samples: 3, method: OffsetMethodKind::Manual }
        );
        assert_eq!(clocks[2], est(9, OffsetMethodKind::OneWay), "not pinned: estimated");
        assert_eq!(delays, vec![None, Some(90)], "a pinned unknown delay is unknown");
    }

    /// `n` requests (ISNs 1..=n, 1 s apart) at a point whose clock reads
    /// `offset` ns ahead, arriving `at` ns after they left, each reply `at`
    /// ns back; `jitter(i)` ns more on request i's arrival.
    fn requests(n: u32, at: i64, offset: i64, jitter: impl Fn(u32) -> i64) -> Flows {
        let flows = (1..=n)
            .map(|i| {
                let t = i64::from(i) * 1_000_000_000;
                let client = format!("198.18.0.1:{}", 40000 + i);
                let mut f = Flow::test_tcp(&client, "198.19.0.1:80", t + at + offset + jitter(i), i);
                f.first_server_ns = Ns::at(t + 1_000_000 - at + offset);
                f
            })
            .collect();
        Flows { flows, stats: Default::default() }
    }

    #[test]
    fn a_clock_beyond_max_offset_is_found_from_two_pairs_that_agree() {
        let hours = 9 * 3_600_000_000_000;
        let points = [requests(2, 0, 0, |_| 0), requests(2, 10_000, hours, |_| 0)];
        let (clocks, delays) = estimate(&points, &CorrelateConfig::default());
        assert_eq!(clocks[1].method, OffsetMethodKind::TimeFree);
        assert_eq!((clocks[1].offset_ns, clocks[1].samples), (hours, 2));
        assert_eq!(delays[0], Some(10_000), "the hop's delay, on the found clock");
        // One pair alone: not estimated.
        let one = [requests(1, 0, 0, |_| 0), requests(1, 10_000, hours, |_| 0)];
        let (clocks, delays) = estimate(&one, &CorrelateConfig::default());
        assert_eq!((clocks[1].method, clocks[1].samples), (OffsetMethodKind::None, 0));
        assert_eq!(delays[0], None);
        // Within --max-offset the time-based estimate is used, as before.
        let near = [requests(2, 0, 0, |_| 0), requests(2, 10_000, 5_000_000_000, |_| 0)];
        assert_eq!(estimate(&near, &CorrelateConfig::default()).0[1].method, OffsetMethodKind::RequestReply);
    }

    #[test]
    fn a_time_free_estimate_needs_its_pairs_to_agree_within_the_spread() {
        let far = 3_600_000_000_000;
        // Three pairs, one of them off by 2 × the spread (NTP halves it): the MAD
        // is that spread, accepted at FAR_SPREAD_NS and refused 2 ns beyond.
        for (extra, found) in [(2 * FAR_SPREAD_NS, true), (2 * FAR_SPREAD_NS + 4, false)] {
            let a = requests(3, 0, 0, |_| 0);
            let b = requests(3, 10_000, far, |i| {
                if i == 3 {
                    extra
                } else if i == 2 {
                    -extra
                } else {
                    0
                }
            });
            let est = far_estimate(&a.flows, &b.flows);
            assert_eq!(est.is_some(), found, "{extra}: {est:?}");
            if let Some(e) = est {
                assert_eq!((e.method, e.samples, e.spread_ns), (OffsetMethodKind::TimeFree, 3, extra / 2));
            }
        }
    }

    #[test]
    fn a_given_offset_is_not_replaced_by_a_time_free_estimate() {
        let hours = 9 * 3_600_000_000_000;
        let points = [requests(2, 0, 0, |_| 0), requests(2, 10_000, hours, |_| 0)];
        let config = CorrelateConfig { offsets_ns: vec![(1, 1_000)], ..CorrelateConfig::default() };
        let (clocks, delays) = estimate(&points, &config);
        assert_eq!(
            clocks[1],
            ClockEstimate { offset_ns: 1_000, spread_ns: 0, samples: 0, method: OffsetMethodKind::Manual }
        );
        assert_eq!(delays[0], None);
    }

    #[test]
    fn a_udp_flow_one_capture_holds_more_datagrams_of_gives_no_clock_sample() {
        // the same first bytes: B's first datagram may be a retry of A's, 6 s later
        let udp = |at: i64| {
            let mut f = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:9000", at, 1);
            (f.proto, f.client_isn, f.server_isn, f.syn_count, f.seq_pair) =
                (FlowProto::Udp, None, None, 0, None);
            f.orientation = crate::flows::Orientation::FirstPacket;
            let mut s = crate::flows::StreamPrefix::new(128);
            s.add(0, b"get sysUpTime.0 community public");
            f.client_fp = s.fingerprint();
            f
        };
        let (mut a, mut b) = (vec![udp(0)], vec![udp(6_000_000_000)]);
        (a[0].packets_to_server, b[0].packets_to_server) = (2, 2);
        assert_eq!(pair_estimate(&a, &b, i64::MAX).samples, 1);
        b[0].packets_to_server = 1;
        assert_eq!(pair_estimate(&a, &b, i64::MAX).samples, 0);
    }

    #[test]
    fn a_flow_that_missed_its_syn_gives_no_clock_sample() {
        let a = vec![Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 5)];
        let mut b = vec![Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 2_000_000, 5)];
        assert_eq!(pair_estimate(&a, &b, DEFAULT_MAX_OFFSET_NS).samples, 1);
        // Its first client packet is the handshake's ACK, a round trip later.
        b[0].orientation = crate::flows::Orientation::SynAck;
        assert_eq!(pair_estimate(&a, &b, DEFAULT_MAX_OFFSET_NS).samples, 0);
    }
}
