//! Folding `tcpdump -i any` copies: one request seen before and after NAT on
//! one host shows up as two flows of one capture.

use super::{Flow, FlowProto, Orientation};

/// `-i any` copies: first packets at most this far apart (ns), or the later
/// copy's first packet this near one of the earlier copy's SYN retransmissions
/// (the host dropped the first SYN after capturing it).
const COPY_WINDOW_NS: i64 = 1_000_000;

/// `tcpdump -i any` on a NAT host sees each packet before and after translation:
/// flows sharing their client ISN (TCP) or their first datagram (UDP, ICMP),
/// seen on different interfaces or directions at nearly the same time, are copies
/// of one request. One interface never holds copies (a port scanner sends every
/// probe with one ISN), and successive flows with one ISN are attempts. Keeps the copy
/// nearest the client — the earliest, then the highest TTL — and counts the rest.
pub(super) fn fold_copies(flows: &mut Vec<Flow>) {
    let mut drop = vec![false; flows.len()];
    for group in copy_groups(flows) {
        // Within a group, cluster copies whose first packets are close in time.
        for (n, &i) in group.iter().enumerate() {
            if drop[i] {
                continue;
            }
            for &j in &group[n + 1..] {
                if drop[j] || !are_copies(&flows[i], &flows[j]) {
                    continue;
                }
                let keep_j = nearer_client(&flows[j], &flows[i]);
                let (keep, gone) = if keep_j { (j, i) } else { (i, j) };
                drop[gone] = true;
                flows[keep].copies = flows[keep].copies.saturating_add(1).saturating_add(flows[gone].copies);
                if keep_j {
                    break;
                }
            }
        }
    }
    let mut k = 0;
    flows.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
}

/// Every group of two or more flows sharing their copy signature (client ISN,
/// first datagram or echo payload), indices ascending.
pub(super) fn copy_groups(flows: &[Flow]) -> Vec<Vec<usize>> {
    // (protocol, signature, index), sorted: each run of one signature is a group
    // with its indices ascending. A sort rather than a map of vectors: 16 bytes
    // per flow at the peak of a million-flow capture instead of ~100.
    let mut sigs: Vec<(u8, u64, u32)> = flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| copy_signature(f).map(|sig| (f.proto as u8, sig, i as u32)))
        .collect();
    sigs.sort_unstable();
    (sigs.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)).filter(|g| g.len() > 1))
        .map(|run| run.iter().map(|&(_, _, i)| i as usize).collect())
        .collect()
}

fn copy_signature(f: &Flow) -> Option<u64> {
    match f.proto {
        FlowProto::Tcp => f.client_isn.filter(|_| f.orientation != Orientation::Midstream).map(u64::from),
        FlowProto::Udp => f.client_fp.join_key(),
        FlowProto::Icmp => f.echo.as_ref().and_then(|e| e.payload).map(|(len, h)| h ^ u64::from(len)),
    }
}

/// Two flows of one capture are copies of one request: seen on different
/// interfaces or directions at nearly the same time. (One tuple on one
/// interface is one flow; on two interfaces, or on the two sides of an SLL v1
/// host, it is forwarding without NAT.)
pub(super) fn are_copies(a: &Flow, b: &Flow) -> bool {
    if (a.first_interface, a.first_packet_type) == (b.first_interface, b.first_packet_type) {
        return false;
    }
    let (early, late) = if a.first_ns <= b.first_ns { (a, b) } else { (b, a) };
    let near = |t: i64| late.first_ns.saturating_sub(t).saturating_abs() <= COPY_WINDOW_NS;
    match a.proto {
        FlowProto::Tcp => {
            let last_syn = early
                .first_client_ns
                .get()
                .map(|t| t.saturating_add(i64::from(early.last_syn_after_us) * 1000));
            (near(early.first_ns) || (early.last_syn_after_us > 0 && last_syn.is_some_and(near)))
                && (a.server_isn.is_none() || b.server_isn.is_none() || a.server_isn == b.server_isn)
        }
        FlowProto::Udp | FlowProto::Icmp => near(early.first_ns),
    }
}

/// `a` was seen before `b` (earlier, then higher TTL): nearer the client.
pub(super) fn nearer_client(a: &Flow, b: &Flow) -> bool {
    (a.first_ns, std::cmp::Reverse(a.client_ttl)) < (b.first_ns, std::cmp::Reverse(b.client_ttl))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(second_ns: i64, iface: u32) -> Vec<Flow> {
        let a = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 0, 7);
        let mut b = Flow::test_tcp("198.19.9.9:40000", "198.19.0.1:80", second_ns, 7);
        b.first_interface = iface;
        vec![a, b]
    }

    #[test]
    fn one_interface_never_holds_copies() {
        let mut flows = two(20_000, 0);
        fold_copies(&mut flows);
        assert_eq!(flows.len(), 2);
    }

    #[test]
    fn two_interfaces_at_nearly_the_same_time_are_copies() {
        let mut flows = two(20_000, 3);
        fold_copies(&mut flows);
        assert_eq!(flows.len(), 1);
        assert_eq!((flows[0].first_ns, flows[0].copies), (0, 1));
    }

    #[test]
    fn a_copy_may_start_at_a_syn_retransmission_and_successive_flows_are_attempts() {
        let mut flows = two(1_000_300_000, 3);
        flows[0].last_syn_after_us = 1_000_000;
        flows[0].syn_count = 2;
        fold_copies(&mut flows);
        assert_eq!(flows.len(), 1, "the host dropped the first SYN after capturing it");
        let mut flows = two(5_000_000_000, 3);
        fold_copies(&mut flows);
        assert_eq!(flows.len(), 2, "one ISN five seconds later: another attempt");
    }
}
