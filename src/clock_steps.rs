//! Clock steps inside a capture. A host whose clock NTP corrects in the middle
//! of a capture (a drifting VM, a host that just got its time) records the
//! flows after the correction with times shifted by the step: one offset for
//! the whole capture then fits only one side, and the flows on the other side
//! miss their matches by the step (or worse, meet another connection that sent
//! the same first bytes).
//!
//! The same pairs that give the clock estimate show it, and need no time: the
//! flows holding one TCP ISN, one first datagram or one echo, each unique on
//! both sides (`correlate::unique_pairs`). Their offsets (NTP when both
//! captures saw the reply, else first packet to first packet) form two groups
//! apart by far more than their spread, one wholly before the other in time:
//! a step. The flows of the later capture from the first pair after the step
//! on have their times moved by minus the step, so the run reads the capture
//! on one clock; the warning says where the step is and by how much.
//!
//! Only two captures at a time are compared, so which of the two clocks
//! stepped is unknown; the captures are taken in path order, each against the
//! one before it already corrected, so every time ends on capture 1's clock.

use crate::correlate::clock::samples_of;
use crate::correlate::Correlation;
use crate::flows::{Flow, FlowProto, Flows, Orientation};
use crate::warning::Warning;

/// Fewest pairs on each side of a step (two must agree within
/// [`STEP_MIN_NS`] / [`STEP_SPREAD_FACTOR`] of each other: see `spread`).
pub const STEP_SIDE_SAMPLES: usize = 2;

/// Smallest step found (ns): below it the offset's own spread (path delay,
/// scheduling) is not told from a step.
pub const STEP_MIN_NS: i64 = 20_000_000;

/// A step must exceed this many times the spread (MAD) of its two sides.
const STEP_SPREAD_FACTOR: i64 = 8;

/// Most steps corrected per capture.
const MAX_STEPS: usize = 4;

/// One step of a capture's clock relative to the capture before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The capture (its first point) and the point it was compared with.
    pub point: usize,
    pub against: usize,
    /// Recorded times (on the capture's own clock) of the last pair before the
    /// step and the first after it: the step happened in between.
    pub last_before_ns: i64,
    pub first_after_ns: i64,
    /// The place of the first flow after the step in the sampled point's flows.
    pub first_after: usize,
    /// The offset's change (after − before); flows from `first_after_ns` on
    /// were moved by minus this.
    pub step_ns: i64,
    pub samples_before: usize,
    pub samples_after: usize,
    /// Flows whose times were moved.
    pub moved: usize,
}

/// A pair's sample: where the later capture saw it (the flow's place in the
/// capture, which is record order: a clock stepped back makes times go
/// backwards, never the order), when, and the offset it shows.
#[derive(Clone, Copy, Debug)]
struct Sample {
    order: usize,
    at_ns: i64,
    offset_ns: i64,
}

/// Finds and corrects clock steps, point by point in path order. `clock_of`
/// gives each point's capture (points of one capture are adjacent and share
/// one clock: a step moves all of them).
/// Gives the steps corrected.
pub fn correct(points: &mut [Flows], clock_of: &[usize]) -> Vec<Step> {
    let clock = |j: usize| clock_of.get(j).copied().unwrap_or(j);
    let mut steps = Vec::new();
    let mut j = 1;
    while j < points.len() {
        let last = (j..points.len()).take_while(|&i| clock(i) == clock(j)).last().unwrap_or(j);
        if clock(j - 1) != clock(j) {
            // Against the nearest point before that has another clock (the one before).
            let against = j - 1;
            // The samples of the first of its points that shares pairs with
            // it: one point's flows are in record order.
            let first = (j..=last)
                .map(|m| (m, samples(&points[against].flows, &points[m].flows)))
                .find(|(_, s)| !s.is_empty());
            let Some((m, mut current)) = first else {
                j = last + 1;
                continue;
            };
            for _ in 0..MAX_STEPS {
                let Some(mut step) = find(current.clone()) else { break };
                // The samples as the corrected flows give them.
                for s in current.iter_mut().filter(|s| s.order >= step.first_after) {
                    (s.at_ns, s.offset_ns) = (s.at_ns - step.step_ns, s.offset_ns - step.step_ns);
                }
                (step.point, step.against) = (j, against);
                for (p, flows) in points[j..=last].iter_mut().enumerate() {
                    for (i, f) in flows.flows.iter_mut().enumerate() {
                        // The sampled point by record order, its siblings by time.
                        let after = if j + p == m {
                            i >= step.first_after
                        } else {
                            f.first_ns >= step.first_after_ns
                        };
                        if after {
                            f.shift_times(-step.step_ns);
                            step.moved += 1;
                        }
                    }
                }
                steps.push(step);
            }
        }
        j = last + 1;
    }
    steps
}

/// Pairs matched without time that the matching did not link: a flow of
/// one capture holding the ISN (and, where both saw it, the server's ISN),
/// the first datagram or the echo of a request's flow at the capture before,
/// unique in both, yet not that request's flow there. Whatever the reason (a
/// step too thin to find, packets held past the time gate), that request's
/// verdict rests on a clock the evidence contradicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unbridged {
    pub point: usize,
    pub against: usize,
    pub pairs: usize,
    /// Recorded time (at `point`) of the first such pair.
    pub first_at_ns: i64,
    /// The largest distance from the clocks' offset (of the first server
    /// packets where both captures saw one, else of the first client packets;
    /// of the last packets where one capture missed the start).
    pub largest_ns: i64,
    /// The chains (requests) whose flow at `against` was kept apart from its
    /// flow at `point`, in chain order.
    pub chains: Vec<usize>,
}

/// The [`Unbridged`] pairs of each neighbour boundary between two clocks.
pub fn unlinked(points: &[Flows], correlation: &Correlation, clock_of: &[usize]) -> Vec<Unbridged> {
    let clock = |j: usize| clock_of.get(j).copied().unwrap_or(j);
    let mut out = Vec::new();
    for j in 1..points.len() {
        if clock(j - 1) == clock(j) {
            continue; // one clock: nothing for it to keep apart
        }
        let (a, b) = (&points[j - 1].flows, &points[j].flows);
        // The chain of each flow at j-1.
        let mut chain_of = vec![None; a.len()];
        for (c, chain) in correlation.chains.iter().enumerate() {
            if let Some(Some(ia)) = chain.hops.get(j - 1) {
                if let Some(slot) = chain_of.get_mut(*ia) {
                    *slot = Some(c);
                }
            }
        }
        let offset = |k: usize| correlation.clocks.get(k).map_or(0, |c| c.offset_ns);
        let (off_a, off_b) = (offset(j - 1), offset(j));
        let mut far: Vec<(usize, i64, usize)> = Vec::new();
        for (ia, ib) in time_free_pairs(a, b) {
            let (fa, fb) = (&a[ia], &b[ib]);
            if let (Some(x), Some(y)) = (fa.server_isn, fb.server_isn) {
                if x != y {
                    continue; // one ISN alike by chance, not one connection
                }
            }
            let Some((c, chain)) = chain_of[ia].and_then(|c| Some((c, correlation.chains.get(c)?))) else {
                continue;
            };
            if chain.hops.get(j) == Some(&Some(ib)) || chain.attempts.contains(&(j, ib)) {
                continue;
            }
            // one packet seen at both: where one capture missed the start, the
            // last; else the first server packet (a retransmitted SYN may be the
            // first client packet at one only), else the first client packet
            let both_answered = fa.first_server_ns.get().is_some() && fb.first_server_ns.get().is_some();
            let at = |f: &Flow| match () {
                _ if fa.orientation != fb.orientation => Some(f.last_ns),
                _ if both_answered => f.first_server_ns.get(),
                _ => f.first_client_ns.get(),
            };
            let (Some(ta), Some(tb)) = (at(fa), at(fb)) else { continue };
            let off = tb.saturating_sub(off_b).saturating_sub(ta.saturating_sub(off_a));
            far.push((ib, off.saturating_abs(), c));
        }
        let Some(&(first, _, _)) = far.iter().min_by_key(|(ib, _, _)| *ib) else { continue };
        let mut chains: Vec<usize> = far.iter().map(|f| f.2).collect();
        chains.sort_unstable();
        out.push(Unbridged {
            point: j,
            against: j - 1,
            pairs: far.len(),
            first_at_ns: b[first].first_ns,
            largest_ns: far.iter().map(|f| f.1).max().unwrap_or(0),
            chains,
        });
    }
    out
}

/// The flows that hold one ISN, first datagram or echo, unique on both sides
/// (`unique_pairs`: the clock's samples); where one is held by several flows
/// (the same query from several ports), those it is unique to with their
/// ports; and TCP flows one capture saw without their SYN, unique with their
/// ports on both sides, whose client sequence numbers overlap.
fn time_free_pairs(a: &[Flow], b: &[Flow]) -> Vec<(usize, usize)> {
    let mut pairs = crate::correlate::unique_pairs_with_ports(a, b);
    let ports = |f: &Flow| (f.proto == FlowProto::Tcp).then_some((f.proto, 0, f.client.port, f.server.port));
    crate::correlate::join_unpaired(a, b, &mut pairs, ports, |x, y| match (client_seqs(x), client_seqs(y)) {
        (Some((lo_x, len_x)), Some((lo_y, len_y))) => {
            // wrapping distance of the starts within the longer stream
            let d = lo_y.wrapping_sub(lo_x) as i32;
            i64::from(d).unsigned_abs() <= u64::from(len_x.max(len_y)) + 1
        }
        _ => false,
    });
    pairs.sort_unstable();
    pairs
}

/// The client's sequence numbers a TCP flow saw: from its first (ISN + 1, or
/// the first with ACK set when the SYN was missed), and how many after it.
fn client_seqs(f: &Flow) -> Option<(u32, u32)> {
    let lo = match f.orientation {
        Orientation::Midstream => f.seq_pair?.0,
        _ => f.client_isn?.wrapping_add(1),
    };
    Some((lo, f.client_payload.map_or(0, |p| p.1)))
}

/// The warning for pairs no step explains: the premise "one clock per
/// capture" fails for them, and the run cannot bridge it.
/// `numbers[chain]`: the request number of each chain (0: no request of its
/// own, a stray reply's).
pub fn unbridged_warning(u: &Unbridged, labels: &[String], files: &[String], numbers: &[u64]) -> Warning {
    let label = labels.get(u.point).map_or("?", String::as_str);
    let mut requests: Vec<u64> =
        (u.chains.iter()).filter_map(|&c| numbers.get(c).copied()).filter(|&n| n > 0).collect();
    requests.sort_unstable();
    requests.dedup();
    let which = match requests.len() {
        0 => String::new(),
        n if n <= 8 => {
            let list: Vec<String> = requests.iter().map(u64::to_string).collect();
            format!(" ({})", list.join(", "))
        }
        n => {
            let list: Vec<String> = requests[..8].iter().map(u64::to_string).collect();
            format!(" ({} and {} more)", list.join(", "), n - 8)
        }
    };
    let against = labels.get(u.against).map_or("?", String::as_str);
    Warning {
        label: label.to_string(),
        file: files.get(u.point).cloned().unwrap_or_default(),
        record: None,
        byte_offset: None,
        problem: format!(
            "{} pairs matched without time (one ISN, first datagram or echo, with the ports where it is not unique; \
             the ports and client sequence numbers where a capture missed the SYN) between {against} and \
             {label} were not matched by time, up to {:.3} ms off the clocks' offset, the first at {} ({label}'s \
             recorded time): a clock step with too few pairs on one side to correct, or packets held that long",
            u.pairs,
            u.largest_ns as f64 / 1e6,
            crate::time::rfc3339(u.first_at_ns),
        ),
        consequence: format!(
            "their requests{which} read as not seen at {label}, or as stopped before it, and {label}'s silence \
             in them is no evidence: check {label}'s clock there before blaming the path"
        ),
    }
}

/// The offsets of `b` relative to `a` shown by the pairs unique on both sides
/// (the clock estimate's samples, any offset): NTP offsets when most pairs
/// have both replies, else first packets.
fn samples(a: &[Flow], b: &[Flow]) -> Vec<Sample> {
    // The pairs the warning about pairs kept apart counts, but for those of
    // a missed SYN (their first packets are not one packet): a port scan's
    // probes share one ISN, and their ports make each one unique.
    let pairs = samples_of(a, b, crate::correlate::unique_pairs_with_ports(a, b), i64::MAX);
    let ntp: Vec<Sample> = (pairs.iter())
        .filter_map(|p| p.ntp.map(|(offset_ns, _)| Sample { order: p.ib, at_ns: p.b1, offset_ns }))
        .collect();
    // One kind only: first-packet offsets hold the path delay, NTP ones do not.
    if ntp.len() * 2 >= pairs.len() {
        ntp
    } else {
        pairs.iter().map(|p| Sample { order: p.ib, at_ns: p.b1, offset_ns: p.one_way }).collect()
    }
}

/// The step among `samples`, if they fall into two groups of offsets at least
/// [`STEP_MIN_NS`] and [`STEP_SPREAD_FACTOR`] times their spreads apart, each
/// of [`STEP_SIDE_SAMPLES`] or more, one wholly before the other in time.
fn find(mut samples: Vec<Sample>) -> Option<Step> {
    let n = samples.len();
    if n < 2 * STEP_SIDE_SAMPLES {
        return None;
    }
    samples.sort_unstable_by_key(|s| s.offset_ns);
    // The widest gap between neighbouring offsets with enough on each side.
    let cut = (STEP_SIDE_SAMPLES..=n - STEP_SIDE_SAMPLES)
        .max_by_key(|&i| samples[i].offset_ns.saturating_sub(samples[i - 1].offset_ns))?;
    let (low, high) = samples.split_at(cut);
    let gap = high[0].offset_ns.saturating_sub(low[low.len() - 1].offset_ns);
    let spread = spread(low).saturating_add(spread(high));
    if gap < STEP_MIN_NS || gap < spread.saturating_mul(STEP_SPREAD_FACTOR) {
        return None;
    }
    // In record order: the first and last sample of each group.
    let span = |g: &[Sample]| {
        let first = g.iter().min_by_key(|s| s.order).copied();
        let last = g.iter().max_by_key(|s| s.order).copied();
        first.zip(last)
    };
    let ((low_first, low_last), (high_first, high_last)) = (span(low)?, span(high)?);
    let (before, after, last_before, first_after) = if low_last.order < high_first.order {
        (low, high, low_last, high_first)
    } else if high_last.order < low_first.order {
        (high, low, high_last, low_first)
    } else {
        return None; // the groups interleave: two paths or wrong pairs, not a step
    };
    Some(Step {
        point: 0,
        against: 0,
        last_before_ns: last_before.at_ns,
        first_after_ns: first_after.at_ns,
        first_after: first_after.order,
        step_ns: median(after).saturating_sub(median(before)),
        samples_before: before.len(),
        samples_after: after.len(),
        moved: 0,
    })
}

fn median(g: &[Sample]) -> i64 {
    let mut v: Vec<i64> = g.iter().map(|s| s.offset_ns).collect();
    crate::correlate::clock::median_mad(&mut v).0
}

/// How far a group's offsets spread: their MAD, or with fewer than three
/// (whose MAD is one of them) half their range.
fn spread(g: &[Sample]) -> i64 {
    let mut v: Vec<i64> = g.iter().map(|s| s.offset_ns).collect();
    if v.len() < 3 {
        let (lo, hi) = (v.iter().min().copied().unwrap_or(0), v.iter().max().copied().unwrap_or(0));
        return hi.saturating_sub(lo) / 2;
    }
    crate::correlate::clock::median_mad(&mut v).1
}

/// The warning for one step: where, by how much, what was done.
pub fn warning(step: &Step, labels: &[String], files: &[String]) -> Warning {
    let label = labels.get(step.point).map_or("?", String::as_str);
    let against = labels.get(step.against).map_or("?", String::as_str);
    let ms = |ns: i64| ns as f64 / 1e6;
    Warning {
        label: label.to_string(),
        file: files.get(step.point).cloned().unwrap_or_default(),
        record: None,
        byte_offset: None,
        problem: format!(
            "the clocks of {against} and {label} disagree by a step of {:+.3} ms between {} and {} ({label}'s \
             recorded times of the last pair before and the first after; {} pairs before, {} after, matched \
             without time by ISN, first datagram or echo): one of the two clocks stepped during the capture (as NTP does \
             correcting a drifting host)",
            ms(step.step_ns),
            crate::time::rfc3339(step.last_before_ns),
            crate::time::rfc3339(step.first_after_ns),
            step.samples_before,
            step.samples_after,
        ),
        consequence: format!(
            "{label}'s {} flows from that pair on are read {:.3} ms {} than recorded, on its clock before the \
             step, and its offset is the one before the step; a merged pcapng (--pcapng) keeps the recorded times",
            step.moved,
            ms(step.step_ns.saturating_abs()),
            if step.step_ns > 0 { "earlier" } else { "later" },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(at_ms: i64, offset_ms: f64) -> Sample {
        let order = at_ms as usize;
        Sample { order, at_ns: at_ms * 1_000_000, offset_ns: (offset_ms * 1e6) as i64 }
    }

    #[test]
    fn a_step_is_two_groups_of_offsets_one_after_the_other() {
        let mut v: Vec<Sample> = (0..7).map(|i| s(i * 200, 0.02 + 0.001 * i as f64)).collect();
        v.extend((7..15).map(|i| s(i * 200, 400.03 - 0.001 * i as f64)));
        let step = find(v).expect("a step");
        assert_eq!((step.last_before_ns, step.first_after_ns), (1_200_000_000, 1_400_000_000));
        assert!((step.step_ns - 400_010_000).abs() < 20_000, "{}", step.step_ns);
        assert_eq!((step.samples_before, step.samples_after), (7, 8));
        // Backwards: the later group has the lower offsets.
        let mut v: Vec<Sample> = (0..5).map(|i| s(i * 100, 300.0)).collect();
        v.extend((5..9).map(|i| s(i * 100, 0.0)));
        let step = find(v).expect("a step back");
        assert_eq!(step.step_ns, -300_000_000);
        assert_eq!(step.first_after_ns, 500_000_000);
    }

    #[test]
    fn a_clock_stepped_back_is_found_by_record_order_though_its_times_overlap() {
        // Records 0..6 at 0..500 ms; after the step back by 400 ms, records
        // 6..10 carry times 200..500 ms again.
        let mut v: Vec<Sample> =
            (0..6).map(|i| Sample { order: i, at_ns: i as i64 * 100_000_000, offset_ns: 0 }).collect();
        v.extend((6..10).map(|i| Sample {
            order: i,
            at_ns: (i as i64 - 4) * 100_000_000,
            offset_ns: -400_000_000 + i as i64,
        }));
        let step = find(v).expect("a step back");
        assert_eq!((step.first_after, step.samples_before, step.samples_after), (6, 6, 4));
        assert_eq!((step.last_before_ns, step.first_after_ns), (500_000_000, 200_000_000));
        assert_eq!(step.step_ns, -400_000_000 + 7);
        // Two on a side suffice when they agree.
        let mut v: Vec<Sample> = (0..2).map(|i| s(i * 100, 0.0)).collect();
        v.extend((2..4).map(|i| s(i * 100, 400.0 + i as f64 * 0.01)));
        assert_eq!(find(v).map(|s| (s.samples_before, s.samples_after, s.first_after)), Some((2, 2, 200)));
    }

    /// Two captures of requests 1 s apart, each with its own ISN; the second
    /// capture's clock reads `late_ms` later from its fourth request on (the
    /// offset estimated is the first three's).
    fn two_captures(late_ms: i64) -> Vec<Flows> {
        let flows = |late: i64| {
            let flows = (0..5u16)
                .map(|i| {
                    let t = i64::from(i) * 1_000_000_000 + if i >= 3 { late } else { 0 };
                    Flow::test_tcp(
                        &format!("198.18.0.1:{}", 40000 + i),
                        "198.19.0.1:80",
                        t,
                        1000 + u32::from(i),
                    )
                })
                .collect();
            Flows { flows, stats: Default::default() }
        };
        vec![flows(0), flows(late_ms * 1_000_000)]
    }

    #[test]
    fn pairs_matched_without_time_that_the_matching_kept_apart_are_counted() {
        let config = crate::correlate::CorrelateConfig::default();
        let points = two_captures(0);
        let c = crate::correlate::correlate(&points, &config);
        assert_eq!(unlinked(&points, &c, &[0, 1]), []);
        // 400 ms late from the fourth on: two requests not seen at 1.
        let points = two_captures(400);
        let c = crate::correlate::correlate(&points, &config);
        let u = unlinked(&points, &c, &[0, 1]);
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!((u[0].point, u[0].against, u[0].pairs), (1, 0, 2));
        assert_eq!(u[0].first_at_ns, 3_400_000_000);
        assert_eq!(u[0].largest_ns, 400_000_000);
        // One clock (points of one capture): never.
        assert_eq!(unlinked(&points, &c, &[0, 0]), []);
        // The server's ISN differs: one client ISN alike by chance, not one connection.
        let mut points = two_captures(400);
        for f in &mut points[1].flows {
            f.server_isn = f.server_isn.map(|i| i ^ 1);
        }
        let c = crate::correlate::correlate(&points, &config);
        assert_eq!(unlinked(&points, &c, &[0, 1]), []);
    }

    #[test]
    fn a_port_scan_sharing_one_isn_shows_a_step_by_its_ports() {
        // Eight probes, one ISN (as a scanner sends them), one port each; the
        // second capture's clock 400 ms late from the fifth on.
        let scan = |late: i64| {
            let flows = (0..8u16)
                .map(|i| {
                    let t = i64::from(i) * 100_000_000 + if i >= 4 { late } else { 0 };
                    Flow::test_tcp("198.18.0.1:40000", &format!("198.19.0.1:{}", 20 + i), t, 7)
                })
                .collect();
            Flows { flows, stats: Default::default() }
        };
        let mut points = vec![scan(0), scan(400_000_000)];
        let steps = correct(&mut points, &[0, 1]);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!((steps[0].samples_before, steps[0].samples_after, steps[0].moved), (4, 4, 4));
        assert_eq!(steps[0].step_ns, 400_000_000);
        assert_eq!(points[1].flows[4].first_ns, 400_000_000, "read on the clock before the step");
    }

    #[test]
    fn interleaved_small_or_thin_groups_are_no_step() {
        // Two groups that alternate in time: two paths, not a step.
        let v: Vec<Sample> = (0..12).map(|i| s(i * 100, if i % 2 == 0 { 0.0 } else { 400.0 })).collect();
        assert_eq!(find(v), None);
        // 10 ms apart: within what delays do.
        let mut v: Vec<Sample> = (0..6).map(|i| s(i * 100, 0.0)).collect();
        v.extend((6..12).map(|i| s(i * 100, 10.0)));
        assert_eq!(find(v), None);
        // A lone outlier after the group: fewer than STEP_SIDE_SAMPLES on a side.
        let mut v: Vec<Sample> = (0..10).map(|i| s(i * 100, 0.0)).collect();
        v.push(s(1000, 500.0));
        assert_eq!(find(v), None);
        // Two after it that disagree by more than the gap allows.
        let mut v: Vec<Sample> = (0..10).map(|i| s(i * 100, 0.0)).collect();
        v.extend([s(1000, 300.0), s(1100, 500.0)]);
        assert_eq!(find(v), None);
        // Spread as wide as the gap.
        let mut v: Vec<Sample> = (0..6).map(|i| s(i * 100, (i as f64) * 15.0)).collect();
        v.extend((6..12).map(|i| s(i * 100, 120.0 + (i as f64) * 15.0)));
        assert_eq!(find(v), None);
        assert_eq!(find(Vec::new()), None);
    }
}

/// One host's clock at a point captured on several hosts (files of one label
/// overlapping in time: `Flow::host`): each host has its own clock, not one
/// clock that stepped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostClock {
    /// The point (the first of its capture's) and the point compared with.
    pub point: usize,
    pub against: usize,
    /// The host whose times were moved, and the host whose clock they were moved onto.
    pub host: u16,
    pub base: u16,
    /// The host's clock minus the base host's (ns): its flows were moved by minus this.
    pub offset_ns: i64,
    /// Pairs matched without time behind each of the two offsets.
    pub samples: usize,
    pub base_samples: usize,
    /// Flows whose times were moved.
    pub moved: usize,
}

/// Puts the hosts of each point captured on several hosts (`hosts`: per
/// point, how many; `clock_of` as in [`correct`]) on one clock, before steps
/// are looked for: each host's offset against the nearest point with another
/// clock (before it, else after it) is the median of its pairs matched
/// without time (NTP where both saw the reply: [`samples`]); a host whose
/// offset differs from the first host's with pairs by a step (at least
/// [`STEP_MIN_NS`] and [`STEP_SPREAD_FACTOR`] times both spreads) has its
/// flows moved onto that host's clock. Hosts without pairs are left as they
/// are. Gives what was moved.
pub fn correct_hosts(points: &mut [Flows], clock_of: &[usize], hosts: &[usize]) -> Vec<HostClock> {
    let clock = |j: usize| clock_of.get(j).copied().unwrap_or(j);
    let mut out = Vec::new();
    let mut j = 0;
    while j < points.len() {
        let last = (j..points.len()).take_while(|&i| clock(i) == clock(j)).last().unwrap_or(j);
        let n = hosts.get(j).copied().unwrap_or(0).min(usize::from(u16::MAX));
        let against =
            (0..j).rev().find(|&i| clock(i) != clock(j)).or((last + 1 < points.len()).then_some(last + 1));
        if let (true, Some(r)) = (n > 1, against) {
            // Per host: (median offset against r, its spread, pairs), from the
            // first of the capture's points that pairs with r.
            let offsets: Vec<Option<(i64, i64, usize)>> = (0..n)
                .map(|h| {
                    (j..=last).find_map(|m| {
                        let mine: Vec<Flow> =
                            points[m].flows.iter().filter(|f| usize::from(f.host) == h).cloned().collect();
                        let mut s = if r < j {
                            samples(&points[r].flows, &mine)
                        } else {
                            samples(&mine, &points[r].flows)
                        };
                        if r > j {
                            s.iter_mut().for_each(|x| x.offset_ns = -x.offset_ns);
                        }
                        (!s.is_empty()).then(|| (median(&s), spread(&s), s.len()))
                    })
                })
                .collect();
            if let Some(base) = offsets.iter().position(Option::is_some) {
                let (b_off, b_spread, b_n) = offsets[base].unwrap_or_default();
                for (h, o) in offsets.iter().enumerate().skip(base + 1) {
                    let Some((off, spread, count)) = *o else { continue };
                    let d = off.saturating_sub(b_off);
                    let apart = d.saturating_abs();
                    if apart < STEP_MIN_NS
                        || apart < spread.saturating_add(b_spread).saturating_mul(STEP_SPREAD_FACTOR)
                    {
                        continue;
                    }
                    let mut moved = 0;
                    for p in &mut points[j..=last] {
                        for f in p.flows.iter_mut().filter(|f| usize::from(f.host) == h) {
                            f.shift_times(-d);
                            moved += 1;
                        }
                    }
                    out.push(HostClock {
                        point: j,
                        against: r,
                        host: h as u16,
                        base: base as u16,
                        offset_ns: d,
                        samples: count,
                        base_samples: b_n,
                        moved,
                    });
                }
            }
        }
        j = last + 1;
    }
    out
}

/// The warning for one host's clock: which hosts, by how much, what was done.
/// `hosts`: per point, its hosts' files (`CaptureResult::hosts`).
pub fn host_warning(h: &HostClock, labels: &[String], hosts: &[Vec<String>]) -> Warning {
    let label = labels.get(h.point).map_or("?", String::as_str);
    let against = labels.get(h.against).map_or("?", String::as_str);
    let names = hosts.get(h.point);
    let name = |i: u16| names.and_then(|n| n.get(usize::from(i))).map_or("?", String::as_str);
    let (host, base) = (name(h.host), name(h.base));
    Warning {
        label: label.to_string(),
        file: host.to_string(),
        record: None,
        byte_offset: None,
        problem: format!(
            "{label} was captured on {} hosts ({}), each with its own clock: {host}'s runs {:+.3} ms from \
             {base}'s (against {against}, from {} pairs of {host}'s and {} of {base}'s matched without time by ISN, \
             first datagram or echo)",
            names.map_or(0, Vec::len),
            names.map_or(String::new(), |n| n.join("; ")),
            h.offset_ns as f64 / 1e6,
            h.samples,
            h.base_samples,
        ),
        consequence: format!("the times of {host}'s {} flows were moved onto {base}'s clock", h.moved),
    }
}
