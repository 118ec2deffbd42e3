//! Attempts of one connection at one capture: the same client ISN on another
//! tuple, one after the other (a SYN retried on a new NAT port after the first
//! mapping met a port the destination still held). Copies (the same packets on
//! two interfaces at once) were folded by the flow stage; what is left with one
//! ISN at a capture are successive attempts. The chain takes the attempt that
//! carried the request (data, else a SYN-ACK) and lists the earlier ones.

use super::candidates::syn_alignment;
use super::{Chain, Strength};
use crate::flows::{Flow, FlowProto, Flows, Orientation};
use rustc_hash::FxHashSet;

/// Attempts of one connection are at most this far apart (ns): Linux's six SYN
/// retries span 127 s.
const ATTEMPT_WINDOW_NS: i64 = 130_000_000_000;

/// The client ISN of a TCP flow that began with the client's SYN.
fn isn(f: &Flow) -> Option<u32> {
    (f.proto == FlowProto::Tcp && f.orientation == Orientation::Syn).then_some(f.client_isn).flatten()
}

/// When a flow's last SYN was sent (its first packet when it saw none).
fn last_syn_ns(f: &Flow) -> i64 {
    f.first_client_ns.get().map_or(f.first_ns, |t| t.saturating_add(i64::from(f.last_syn_after_us) * 1000))
}

/// How far an attempt got: it carried client data, else it got a SYN-ACK.
fn progress(f: &Flow) -> u8 {
    if f.client_data_ns.is_some() || f.bytes_to_server > 0 {
        2
    } else if f.synack_ns.is_some() {
        1
    } else {
        0
    }
}

/// Resolves the attempts at capture `to` of every chain that reached it:
/// among the chained flow and the free flows of `to` with its client ISN on
/// another tuple within [`ATTEMPT_WINDOW_NS`], the one that got furthest
/// (data, else a SYN-ACK; on a tie the chained one, then the later) is
/// chained; those that began before it become the chain's attempts and are
/// taken; a flow the chain no longer holds is free again. A link that tied
/// only between attempts of one connection is strong.
pub fn resolve(captures: &[Flows], chains: &mut [Chain], to: usize, taken: &mut [bool]) {
    let flows = &captures[to].flows[..];
    let wanted: FxHashSet<u32> =
        (chains.iter()).filter_map(|c| c.hops[to].and_then(|h| isn(&flows[h]))).collect();
    if wanted.is_empty() {
        return;
    }
    // (client ISN, flow) of the chained ISNs, sorted: one ISN's flows are one
    // run, in flow order (one list, not one per ISN).
    let mut by_isn: Vec<(u32, usize)> = (flows.iter().enumerate())
        .filter_map(|(i, f)| isn(f).filter(|x| wanted.contains(x)).map(|x| (x, i)))
        .collect();
    by_isn.sort_unstable();
    // One buffer for every chain's set of attempts (most chains have none).
    let mut set: Vec<usize> = Vec::new();
    for chain in chains.iter_mut() {
        let Some(h) = chain.hops[to] else { continue };
        let Some(x) = isn(&flows[h]) else { continue };
        let from = by_isn.partition_point(|e| e.0 < x);
        let group = (by_isn[from..].iter()).take_while(|e| e.0 == x).map(|e| e.1);
        let near = |j: usize| {
            let (a, b) = (&flows[h], &flows[j]);
            (a.client, a.server) != (b.client, b.server)
                && b.first_ns.saturating_sub(a.first_ns).saturating_abs() <= ATTEMPT_WINDOW_NS
        };
        set.clear();
        set.extend(group.filter(|&j| j == h || (!taken[j] && near(j))));
        if set.len() < 2 {
            continue;
        }
        set.sort_by_key(|&j| flows[j].first_ns);
        // The furthest attempt; the chained one when it got as far.
        let best = (set.iter().copied())
            .max_by_key(|&j| (progress(&flows[j]), j == h, flows[j].first_ns))
            .unwrap_or(h);
        // Earlier: begun before the chained flow's last SYN, the one that got
        // through (a retry may come back to the first port once the RST of a
        // later attempt freed it: one flow holds the first and last SYN).
        let got_through = last_syn_ns(&flows[best]);
        let earlier: Vec<usize> =
            set.iter().copied().filter(|&j| j != best && flows[j].first_ns < got_through).collect();
        if best == h && earlier.is_empty() {
            continue;
        }
        chain.hops[to] = Some(best);
        taken[best] = true;
        for &e in &earlier {
            taken[e] = true;
            chain.attempts.push((to, e));
        }
        if let Some(link) = chain.links.iter_mut().find(|l| l.to == to) {
            if link.strength == Strength::Ambiguous && link.candidates.iter().all(|c| set.contains(c)) {
                link.strength = Strength::Strong;
                link.candidates.clear();
            }
            // The first SYNs were seen here, on the earlier attempts.
            let source = chain.hops[link.from].map(|f| &captures[link.from].flows[f]);
            link.syn_missed = match source {
                Some(a) if earlier.is_empty() => syn_alignment(a, &flows[best]).and_then(|al| al.b_missed),
                _ => None,
            };
        }
    }
    // a flow left free again by a swap goes back to the unmatched
    let held: FxHashSet<usize> = (chains.iter())
        .flat_map(|c| c.hops[to].into_iter().chain(c.attempts.iter().filter(|a| a.0 == to).map(|a| a.1)))
        .collect();
    for &(_, i) in &by_isn {
        if !held.contains(&i) {
            taken[i] = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::correlate::{correlate, CorrelateConfig, Correlation, Strength};
    use crate::flows::Ns;
    use crate::flows::{Flow, Flows};

    fn capture(flows: Vec<Flow>) -> Flows {
        Flows { flows, stats: Default::default() }
    }

    /// The client's flow: its first SYN at 0, retransmitted 1 s later, then data.
    fn client() -> Flow {
        let mut f = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 7);
        (f.syn_count, f.last_syn_after_us) = (2, 1_000_000);
        f.client_data_ns = Ns::at(1_000_400_000);
        f.last_ns = 1_002_000_000;
        f
    }

    /// The first SYN behind the NAT on port 40000: answered by a bare ACK, then reset by the client.
    fn dead(first_ns: i64) -> Flow {
        let mut f = Flow::test_tcp("198.19.3.17:40000", "198.19.0.1:80", first_ns, 7);
        (f.synack_ns, f.server_isn, f.seq_pair, f.first_server_ns) =
            (Ns::NONE, None, None, Ns::at(first_ns + 100_000));
        (f.packets_to_server, f.packets_to_client, f.bytes_to_server, f.bytes_to_client) = (2, 1, 0, 0);
        f
    }

    /// The retransmitted SYN on a new port, which carried the request.
    fn live(first_ns: i64) -> Flow {
        let mut f = Flow::test_tcp("198.19.3.17:40001", "198.19.0.1:80", first_ns, 7);
        f.client_data_ns = Ns::at(first_ns + 400_000);
        f
    }

    fn run(behind: Vec<Flow>) -> Correlation {
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        correlate(&[capture(vec![client()]), capture(behind)], &config)
    }

    #[test]
    fn the_attempt_that_carried_the_data_is_chained_and_the_earlier_one_listed() {
        for behind in [vec![dead(50_000), live(1_000_050_000)], vec![live(1_000_050_000), dead(50_000)]] {
            let live_ix = behind.iter().position(|f| f.client.port == 40001).unwrap();
            let c = run(behind);
            let chain = &c.chains[0];
            assert_eq!(chain.hops[1], Some(live_ix));
            assert_eq!(chain.attempts, [(1, 1 - live_ix)]);
            assert!(c.unmatched[1].is_empty(), "the dead attempt belongs to the request");
            assert_eq!(chain.links[0].strength, Strength::Strong);
            assert_eq!(chain.links[0].syn_missed, None, "the first SYN was seen, on the earlier attempt");
        }
    }

    #[test]
    fn attempts_after_the_chained_one_far_apart_or_on_one_tuple_are_not_listed() {
        // a later dead flow with the same ISN is no earlier attempt: it stays unmatched
        let c = run(vec![live(50_000), dead(2_000_000_000)]);
        assert_eq!((c.chains[0].hops[1], &c.chains[0].attempts[..]), (Some(0), &[][..]));
        assert_eq!(c.unmatched[1], [1]);
        // the same ISN 200 s earlier is another connection
        let c = run(vec![dead(-200_000_000_000), live(1_000_050_000)]);
        assert_eq!((c.chains[0].hops[1], c.chains[0].attempts.len()), (Some(1), 0));
        assert_eq!(c.unmatched[1], [0]);
        // a lone dead attempt is simply the chained flow
        let c = run(vec![dead(50_000)]);
        assert_eq!((c.chains[0].hops[1], c.chains[0].attempts.len()), (Some(0), 0));
    }

    /// What a real kernel did (MASQUERADE --to-ports 40000-40001 --random-fully,
    /// the backend holding both ports in TIME_WAIT): the SYN left on 40000 and
    /// met a bare ACK, the client reset; the retry 10 ms later left on 40001 and
    /// met the same; the RSTs ended both TIME_WAITs, and the SYN 1 s later left on
    /// 40000 again and got through. Port 40000's flow holds the first and the
    /// last SYN; the attempt on 40001 lies in between.
    #[test]
    fn an_attempt_between_the_first_and_the_last_syn_of_the_chained_flow_is_listed() {
        let mut back = live(50_000);
        (back.client.port, back.syn_count, back.last_syn_after_us) = (40000, 2, 1_020_000);
        let mut between = dead(12_000_000);
        between.client.port = 40001;
        let mut c = client();
        (c.syn_count, c.last_syn_after_us) = (3, 1_020_000);
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        let c = correlate(&[capture(vec![c]), capture(vec![back, between])], &config);
        assert_eq!((c.chains[0].hops[1], &c.chains[0].attempts[..]), (Some(0), &[(1, 1)][..]));
        assert_eq!(c.chains[0].links[0].syn_missed, None);
        assert!(c.unmatched[1].is_empty());
    }

    #[test]
    fn a_match_tied_only_between_attempts_of_one_connection_is_strong() {
        // both attempts got the same SYN-ACK, both within the tolerance of the
        // client's SYN: nothing but their fate tells them apart
        let mut first = live(50_000);
        (first.client.port, first.client_data_ns, first.bytes_to_server) = (40000, Ns::NONE, 0);
        let c = run(vec![first, live(600_000)]);
        let link = &c.chains[0].links[0];
        assert_eq!((link.strength, &link.candidates[..]), (Strength::Strong, &[][..]));
        assert_eq!((c.chains[0].hops[1], &c.chains[0].attempts[..]), (Some(1), &[(1, 0)][..]));
    }

    #[test]
    fn a_flow_the_chain_gives_up_for_an_earlier_attempt_is_unmatched_again() {
        // a later flow with the ISN, aligned with the client's SYN retransmission
        let mut later = live(1_000_050_000);
        (later.client.port, later.client_data_ns, later.bytes_to_server) = (40001, Ns::NONE, 0);
        let mut first = live(50_000);
        first.client.port = 40000;
        let c = run(vec![later, first]);
        assert_eq!((c.chains[0].hops[1], c.chains[0].attempts.len()), (Some(1), 0));
        assert_eq!(c.unmatched[1], [0]);
    }

    #[test]
    fn two_earlier_attempts_are_both_listed() {
        // SYN on 40000 (bare ACK, reset), its retry 1 s later on 40002 (the
        // same), the third SYN 2 s in on 40001 gets through
        let mut c = client();
        (c.syn_count, c.last_syn_after_us, c.client_data_ns) = (3, 2_000_000, Ns::at(2_000_400_000));
        let mut second = dead(1_000_050_000);
        second.client.port = 40002;
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        let c =
            correlate(&[capture(vec![c]), capture(vec![dead(50_000), second, live(2_000_050_000)])], &config);
        let mut attempts = c.chains[0].attempts.clone();
        attempts.sort_unstable();
        assert_eq!((c.chains[0].hops[1], &attempts[..]), (Some(2), &[(1, 0), (1, 1)][..]));
        assert!(c.unmatched[1].is_empty());
    }

    #[test]
    fn a_flow_seen_from_its_syn_ack_is_no_attempt() {
        // the same client ISN on another tuple, but its capture began at the
        // SYN-ACK: it did not begin with the client's SYN there
        let mut half = dead(50_000);
        half.orientation = crate::flows::Orientation::SynAck;
        let c = run(vec![half, live(1_000_050_000)]);
        // the matcher's choice (the flow at the first SYN's time) is kept as it is
        assert_eq!((c.chains[0].hops[1], c.chains[0].attempts.len()), (Some(0), 0));
        assert_eq!(c.unmatched[1], [1]);
    }

    #[test]
    fn a_flow_that_begins_at_the_chained_flows_last_syn_is_not_earlier() {
        // the chained flow's SYN at 50 µs, retransmitted 1 s later; another
        // flow with the ISN begins exactly then: not before it, so no attempt
        let mut chained = live(50_000);
        (chained.syn_count, chained.last_syn_after_us) = (2, 1_000_000);
        let c = run(vec![chained, dead(1_000_050_000)]);
        assert_eq!((c.chains[0].hops[1], c.chains[0].attempts.len()), (Some(0), 0));
        assert_eq!(c.unmatched[1], [1]);
    }

    #[test]
    fn a_weak_match_stays_weak_when_its_attempts_are_resolved() {
        // capture 1 missed the handshake (no ISN, no sequence pair): the match
        // is by time alone, weak, and listing an attempt does not make it strong
        let mut c = client();
        (c.client_isn, c.server_isn, c.seq_pair) = (None, None, None);
        c.orientation = crate::flows::Orientation::Midstream;
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        let c = correlate(&[capture(vec![c]), capture(vec![dead(50_000), live(1_000_050_000)])], &config);
        assert_eq!((c.chains[0].hops[1], &c.chains[0].attempts[..]), (Some(1), &[(1, 0)][..]));
        assert_eq!(c.chains[0].links[0].strength, Strength::Weak);
    }

    #[test]
    fn the_chain_moved_to_a_flow_that_missed_the_first_syn_says_so() {
        // The client's SYNs at 0, 1 s and 3 s. Behind the NAT the first died
        // unseen; the one at 1 s got through with the data; a flow with the same
        // ISN begins at the 3 s SYN and gets nothing more than a SYN-ACK.
        let mut c = client();
        (c.syn_count, c.last_syn_after_us) = (3, 3_000_000);
        let got_through = live(1_000_050_000);
        let mut later = live(3_000_050_000);
        (later.client.port, later.client_data_ns, later.bytes_to_server) = (40002, Ns::NONE, 0);
        let config = CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() };
        let c = correlate(&[capture(vec![c]), capture(vec![later, got_through])], &config);
        assert_eq!((c.chains[0].hops[1], c.chains[0].attempts.len()), (Some(1), 0));
        // SYNs of the client never seen there (how many depends on which SYN
        // the alignment takes the seen one for: the last, so 2 here)
        let missed = c.chains[0].links[0].syn_missed;
        assert!(missed.is_some_and(|m| m.0 >= 1), "{missed:?}");
    }

    #[test]
    fn progress_is_data_either_way_else_a_syn_ack() {
        let mut f = dead(0);
        assert_eq!(super::progress(&f), 0);
        f.synack_ns = Ns::at(1);
        assert_eq!(super::progress(&f), 1);
        f.bytes_to_server = 10;
        assert_eq!(super::progress(&f), 2);
        (f.bytes_to_server, f.client_data_ns) = (0, Ns::at(2));
        assert_eq!(super::progress(&f), 2);
    }

    #[test]
    fn an_attempt_that_got_a_syn_ack_wins_over_one_that_did_not() {
        let mut answered = live(1_000_050_000);
        (answered.client_data_ns, answered.bytes_to_server) = (Ns::NONE, 0);
        let c = run(vec![dead(50_000), answered]);
        assert_eq!((c.chains[0].hops[1], &c.chains[0].attempts[..]), (Some(1), &[(1, 0)][..]));
    }
}
