//! Answers seen without their question. A UDP flow between two ports above
//! 1023 is oriented by its first datagram; a capture that lost an exchange's
//! first datagram but kept its answer holds the flow the wrong way round, and
//! no key of the other captures meets it. Before matching, such a flow is
//! turned ([`Flow::turn_answer`]) when another capture shows that its first
//! datagram is an answer: a flow there whose first answer is the same bytes,
//! from the same server port, and whose question is other bytes (an echo
//! service answers with the question). Only flows that hold datagrams one way
//! only are turned: nothing they saw is then read from the wrong side. Takes
//! every capture's flows; turns them in place.

use super::candidates::{pairs_aligned, SEQ_WINDOW as SEQ_BUCKET};
use crate::flows::{Fingerprint, Flow, FlowProto, Flows, Orientation};
use rustc_hash::{FxHashMap, FxHashSet};

/// Bytes a datagram must hold for its hash to name it among others.
const MIN_BYTES: u16 = 8;

/// A datagram's bytes as one key: the whole datagram (its length and hash),
/// else its 32-byte prefix (length 0).
fn datagram_key(fp: &Fingerprint) -> Option<(u16, u64)> {
    match fp.whole() {
        Some((len, h)) => (len >= MIN_BYTES).then_some((len, h)),
        None => fp.prefix(1).map(|h| (0, h)),
    }
}

/// A UDP flow oriented by its first datagram: that datagram may be an answer.
/// (One that holds datagrams both ways is never turned: its own first
/// datagram counts as a question from its port.)
fn by_first_datagram(f: &Flow) -> bool {
    f.proto == FlowProto::Udp && f.orientation == Orientation::FirstPacket
}

/// Turns every flow that holds only answers another capture shows as such;
/// returns how many.
pub fn turn_answers(captures: &mut [Flows]) -> usize {
    // (first answer's bytes, the server port it came from) of the UDP flows
    // that hold both ways, and their questions the same way; an echo's answer
    // (the question's bytes) is no answer to tell by
    type Key = ((u16, u64), u16);
    let mut answers: FxHashSet<Key> = FxHashSet::default();
    let mut questions: FxHashSet<Key> = FxHashSet::default();
    for f in captures.iter().flat_map(|c| &c.flows) {
        if f.proto != FlowProto::Udp || f.packets_to_server == 0 || f.packets_to_client == 0 {
            continue;
        }
        let (q, a) = (datagram_key(&f.client_fp), datagram_key(&f.server_fp));
        if let Some(a) = a.filter(|a| Some(*a) != q) {
            answers.insert((a, f.server.port));
        }
        if let Some(q) = q {
            questions.insert((q, f.client.port));
        }
    }
    if answers.is_empty() {
        return 0;
    }
    let mut turned = 0;
    for f in captures.iter_mut().flat_map(|c| c.flows.iter_mut()) {
        if !by_first_datagram(f) {
            continue;
        }
        let Some(k) = datagram_key(&f.client_fp) else { continue };
        // its first datagram: an answer from its sender's port, and never a question from it
        if answers.contains(&(k, f.client.port)) && !questions.contains(&(k, f.client.port)) {
            f.turn_answer();
            turned += 1;
        }
    }
    turned
}

/// Connections by their (client, server) sequence numbers, bucketed so that
/// aligned pairs share a bucket or sit in neighbouring ones.
#[derive(Default)]
struct BySeq(FxHashMap<(u32, u32), Vec<(u32, u32)>>);

impl BySeq {
    fn add(&mut self, (c, s): (u32, u32)) {
        self.0.entry((c / SEQ_BUCKET, s / SEQ_BUCKET)).or_default().push((c, s));
    }

    /// Some connection held has these sequence numbers, within the window.
    fn holds(&self, (c, s): (u32, u32)) -> bool {
        let near = |x: u32| {
            let (b, last) = (x / SEQ_BUCKET, u32::MAX / SEQ_BUCKET);
            [if b == 0 { last } else { b - 1 }, b, if b == last { 0 } else { b + 1 }]
        };
        near(c).iter().any(|&bc| {
            near(s).iter().any(|&bs| {
                self.0.get(&(bc, bs)).is_some_and(|v| v.iter().any(|&pair| pairs_aligned((c, s), pair)))
            })
        })
    }
}

/// A TCP flow seen without its handshake, its sides guessed by port.
fn midstream(f: &Flow) -> bool {
    f.proto == FlowProto::Tcp && f.orientation == Orientation::Midstream && f.seq_pair.is_some()
}

/// Turns every TCP flow seen without its handshake whose sides another
/// capture shows the other way round: its (client, server) sequence numbers
/// are a connection's (server, client) there, and never its (client,
/// server). A connection whose handshake some capture saw settles its sides;
/// else the earlier capture's guess stands (captures are taken in order, each
/// one's flows then the reference for the later ones). Returns how many.
pub fn turn_midstream(captures: &mut [Flows]) -> usize {
    if !captures.iter().flat_map(|c| &c.flows).any(midstream) {
        return 0;
    }
    let mut known = BySeq::default();
    for f in captures.iter().flat_map(|c| &c.flows) {
        // sides a handshake settled: the SYN's sender, or a SYN-ACK's receiver
        if f.proto == FlowProto::Tcp && matches!(f.orientation, Orientation::Syn | Orientation::SynAck) {
            f.seq_pair.into_iter().for_each(|p| known.add(p));
        }
    }
    let mut turned = 0;
    for c in captures.iter_mut() {
        for f in c.flows.iter_mut().filter(|f| midstream(f)) {
            let Some((cs, ss)) = f.seq_pair else { continue };
            if known.holds((ss, cs)) && !known.holds((cs, ss)) {
                f.turn_midstream();
                turned += 1;
            }
        }
        for f in c.flows.iter().filter(|f| midstream(f)) {
            f.seq_pair.into_iter().for_each(|p| known.add(p));
        }
    }
    turned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(bytes: &[u8]) -> Fingerprint {
        // a datagram: its end known
        let mut s = crate::flows::StreamPrefix::new(128);
        s.add(0, bytes);
        s.set_end(bytes.len() as u64);
        s.fingerprint()
    }

    /// A UDP flow `client` → `server` with `q` asked and `a` answered (None: not seen).
    fn udp(client: &str, server: &str, q: Option<&[u8]>, a: Option<&[u8]>) -> Flow {
        let mut f = Flow::test_tcp(client, server, 1_000, 1);
        (f.proto, f.client_isn, f.server_isn, f.syn_count, f.seq_pair) =
            (FlowProto::Udp, None, None, 0, None);
        f.orientation = Orientation::FirstPacket;
        (f.packets_to_server, f.packets_to_client) = (u64::from(q.is_some()), u64::from(a.is_some()));
        f.client_fp = q.map(fp).unwrap_or_default();
        f.server_fp = a.map(fp).unwrap_or_default();
        f
    }

    const Q: &[u8] = b"tclab-r004 udp-request\n";
    const A: &[u8] = b"echo tclab-r004 udp-request\n";

    #[test]
    fn a_flow_of_answers_only_is_turned_when_another_capture_shows_them_as_answers() {
        let decap = udp("198.18.90.42:40004", "198.19.96.10:9000", Some(Q), Some(A));
        // egress lost the question: its flow runs from the server, its first datagram the answer
        let egress = udp("198.19.96.10:9000", "198.18.90.42:40004", Some(A), None);
        let mut captures = vec![Flows { flows: vec![decap.clone()], ..Default::default() }];
        captures.push(Flows { flows: vec![egress], ..Default::default() });
        assert_eq!(turn_answers(&mut captures), 1);
        let f = &captures[1].flows[0];
        assert_eq!((f.client, f.server), (decap.client, decap.server));
        assert_eq!(f.orientation, Orientation::Reply);
        assert_eq!((f.packets_to_server, f.packets_to_client), (0, 1));
        assert_eq!((f.first_client_ns, f.first_server_ns.get()), (crate::flows::Ns::NONE, Some(1_000)));
        assert!(f.client_fp.whole().is_none() && f.server_fp.agreement(&decap.server_fp).is_some());
        assert_eq!((f.client_ip_id, f.server_ttl), (None, Some(64)));
        assert_eq!(captures[0].flows[0], decap, "the flow that holds both ways is left as it is");
    }

    #[test]
    fn nothing_is_turned_without_an_answer_of_those_bytes_from_that_port_or_for_an_echo() {
        let run = |seen: Flow, other: Flow| {
            let mut captures = vec![Flows { flows: vec![seen], ..Default::default() }];
            captures.push(Flows { flows: vec![other], ..Default::default() });
            turn_answers(&mut captures)
        };
        let decap = udp("198.18.90.42:40004", "198.19.96.10:9000", Some(Q), Some(A));
        // another server port
        assert_eq!(run(decap.clone(), udp("198.19.96.10:9001", "198.18.90.42:40004", Some(A), None)), 0);
        // other bytes
        assert_eq!(run(decap.clone(), udp("198.19.96.10:9000", "198.18.90.42:40004", Some(Q), None)), 0);
        // an echo service: the answer is the question's bytes, so the first datagram may be either
        let echo = udp("198.18.90.42:40004", "198.19.96.10:7", Some(Q), Some(Q));
        assert_eq!(run(echo, udp("198.19.96.10:7", "198.18.90.42:40004", Some(Q), None)), 0);
        // a flow that holds datagrams both ways is oriented by what it saw
        let both = udp("198.19.96.10:9000", "198.18.90.42:40004", Some(A), Some(Q));
        assert_eq!(run(decap.clone(), both), 0);
        // other bytes of the answer's very length
        let same_len = b"echo tclab-r004 udp-requesT\n";
        assert_eq!(same_len.len(), A.len());
        assert_eq!(
            run(decap.clone(), udp("198.19.96.10:9000", "198.18.90.42:40004", Some(same_len), None)),
            0
        );
        // only a UDP flow oriented by its first datagram is turned
        let mut icmp = udp("198.19.96.10:9000", "198.18.90.42:40004", Some(A), None);
        icmp.proto = FlowProto::Icmp;
        assert_eq!(run(decap.clone(), icmp), 0);
        let mut reply = udp("198.19.96.10:9000", "198.18.90.42:40004", Some(A), None);
        reply.orientation = Orientation::Reply;
        assert_eq!(run(decap.clone(), reply), 0);
        // a TCP connection's answer of those bytes shows nothing of a UDP flow
        let mut tcp = decap.clone();
        (tcp.proto, tcp.orientation) = (FlowProto::Tcp, Orientation::Syn);
        assert_eq!(run(tcp, udp("198.19.96.10:9000", "198.18.90.42:40004", Some(A), None)), 0);
        // the same bytes also sent as a question from that port elsewhere: not turned
        let asked = udp("198.19.96.10:9000", "198.18.90.50:1234", Some(A), Some(Q));
        let mut captures = vec![Flows { flows: vec![decap, asked], ..Default::default() }];
        captures.push(Flows {
            flows: vec![udp("198.19.96.10:9000", "198.18.90.42:40004", Some(A), None)],
            ..Default::default()
        });
        assert_eq!(turn_answers(&mut captures), 0);
    }
}

#[cfg(test)]
mod midstream_tests {
    use super::*;

    fn caps(flows: Vec<Vec<Flow>>) -> Vec<Flows> {
        flows.into_iter().map(|flows| Flows { flows, ..Default::default() }).collect()
    }

    /// A connection's flow as a capture that missed its handshake holds it,
    /// with the sides guessed `client` → `server`, its first seen sequence
    /// numbers `(client, server)`.
    fn mid(client: &str, server: &str, seqs: (u32, u32)) -> Flow {
        let mut f = Flow::test_tcp(client, server, 1_000, 1);
        (f.orientation, f.client_isn, f.server_isn, f.syn_count, f.seq_pair) =
            (Orientation::Midstream, None, None, 0, Some(seqs));
        f
    }

    const SEQS: (u32, u32) = (1_000_000, 3_000_000_000);

    #[test]
    fn a_midstream_flow_the_other_way_round_of_a_handshake_elsewhere_is_turned() {
        // egress saw the handshake; the backend's NAT moved port 80 to 50080
        let mut syn = Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:80", 1_000, SEQS.0 - 1);
        syn.seq_pair = Some(SEQS);
        let guessed = mid("198.19.96.10:50080", "198.19.3.17:40001", (SEQS.1 + 700, SEQS.0 + 130));
        let mut c = caps(vec![vec![syn.clone()], vec![guessed]]);
        assert_eq!(turn_midstream(&mut c), 1);
        let f = &c[1].flows[0];
        assert_eq!(
            (f.client.port, f.server.port, f.seq_pair),
            (40001, 50080, Some((SEQS.0 + 130, SEQS.1 + 700)))
        );
        // the right way round already, or numbers of another connection: left
        for other in [
            mid("198.19.3.17:40001", "198.19.96.10:50080", (SEQS.0 + 130, SEQS.1 + 700)),
            mid("198.19.96.10:50080", "198.19.3.17:40001", (SEQS.1 + (1 << 23), SEQS.0)),
            mid("198.19.96.10:50080", "198.19.3.17:40001", (SEQS.1, SEQS.0.wrapping_sub(1 << 23))),
        ] {
            let mut c = caps(vec![vec![syn.clone()], vec![other.clone()]]);
            assert_eq!(turn_midstream(&mut c), 0, "{other:?}");
            assert_eq!(c[1].flows[0], other);
        }
        // nothing seen midstream: nothing to do
        let mut c = caps(vec![vec![syn.clone()], vec![syn]]);
        assert_eq!(turn_midstream(&mut c), 0);
    }

    #[test]
    fn with_no_handshake_anywhere_the_earlier_captures_guess_stands() {
        let egress = mid("198.18.90.42:40001", "198.19.96.10:80", SEQS);
        let backend = mid("198.19.96.10:50080", "198.19.3.17:40001", (SEQS.1, SEQS.0));
        let mut c = caps(vec![vec![egress.clone()], vec![backend.clone()]]);
        assert_eq!(turn_midstream(&mut c), 1);
        assert_eq!((c[0].flows[0].client, c[1].flows[0].client.port), (egress.client, 40001));
        // in the other order, the backend's guess is the earlier one
        let mut c = caps(vec![vec![backend.clone()], vec![egress]]);
        assert_eq!(turn_midstream(&mut c), 1);
        assert_eq!((c[0].flows[0].client, c[1].flows[0].client.port), (backend.client, 80));
        // the numbers straddle a bucket edge (the window is not a bucket)
        let edge = (SEQ_BUCKET - 10, SEQ_BUCKET * 5 - 1);
        let a = mid("198.18.90.42:40001", "198.19.96.10:80", edge);
        let b = mid("198.19.96.10:50080", "198.19.3.17:40001", (edge.1 + 20, edge.0 + 20));
        let mut c = caps(vec![vec![a], vec![b]]);
        assert_eq!(turn_midstream(&mut c), 1);
        // ... the other way (the later capture's numbers the lower ones), and
        // across the wrap of the sequence space either way
        let wrap = |x: u32, by: u32| x.wrapping_add(by);
        for (earlier, later) in [
            ((SEQ_BUCKET + 10, SEQ_BUCKET * 5 + 19), (SEQ_BUCKET - 10, SEQ_BUCKET * 5 - 1)),
            ((5, 1 << 31), (wrap(5, 0u32.wrapping_sub(9)), (1 << 31) - 9)),
            ((u32::MAX - 3, 1 << 30), (wrap(u32::MAX - 3, 9), (1 << 30) + 9)),
        ] {
            let a = mid("198.18.90.42:40001", "198.19.96.10:80", earlier);
            let b = mid("198.19.96.10:50080", "198.19.3.17:40001", (later.1, later.0));
            let mut c = caps(vec![vec![a], vec![b]]);
            assert_eq!(turn_midstream(&mut c), 1, "{earlier:?} {later:?}");
        }
    }
}
