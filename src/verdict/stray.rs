//! Replies from elsewhere (docs/output.md "Verdicts", normative): a reply-direction
//! packet addressed to the request's client endpoint at a capture, from another
//! address or port than the request's server endpoint there, within the
//! request's time. The client rejects it (an un-translated or asymmetric
//! reply), so it is looked for only where the request saw no reply.
//! Takes a chain's flows per capture and each capture's flows; gives a typed
//! `UnexpectedSource`. Never formats text.

use super::model::{StrayPacket, UnexpectedSource};
use super::{endpoint, Ctx};
use crate::flows::{Endpoint, Flow, FlowProto};
use rustc_hash::FxHashMap;

/// How long after the request's last packet a stray reply still belongs to it
/// (a client that got no reply retransmits its first SYN after 1 s, then 3 s).
pub(crate) const STRAY_AFTER_NS: i64 = 3_000_000_000;

/// A capture's flows by the receiver of their first packet: one index per
/// capture, built the first time a request there needs it. A hash of each
/// receiver's last flow and a link from every flow to the one before it with
/// the same receiver (no list per receiver, no sort).
pub(crate) struct ByReceiver {
    last: FxHashMap<Receiver, u32>,
    before: Vec<u32>,
}

/// No flow before this one has its receiver.
const NONE: u32 = u32::MAX;

/// A first packet's protocol and receiver as plain integers (address bits,
/// family, protocol, port): hashed as numbers, not as an `IpAddr` enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Receiver(u128, bool, FlowProto, u16);

impl Receiver {
    fn new(proto: FlowProto, e: Endpoint) -> Receiver {
        let (bits, v6) = match e.addr {
            std::net::IpAddr::V4(a) => (u128::from(u32::from(a)), false),
            std::net::IpAddr::V6(a) => (u128::from(a), true),
        };
        Receiver(bits, v6, proto, e.port)
    }
}

impl ByReceiver {
    /// The flows whose first packet went to `r`, last flow first.
    fn flows_to(&self, r: Receiver) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.last.get(&r).copied(), |&i| {
            Some(self.before[i as usize]).filter(|&b| b != NONE)
        })
    }
}

/// Receiver and sender of a flow's first packet.
fn first_packet(g: &Flow) -> (Endpoint, Endpoint) {
    if g.first_server_ns.get() == Some(g.first_ns) && g.first_client_ns.get() != Some(g.first_ns) {
        (g.client, g.server)
    } else {
        (g.server, g.client)
    }
}

pub(crate) fn by_receiver(flows: &[Flow]) -> ByReceiver {
    let mut last: FxHashMap<Receiver, u32> = FxHashMap::default();
    last.reserve(flows.len());
    let mut before = vec![NONE; flows.len()];
    for (i, g) in flows.iter().enumerate() {
        if let Some(b) = last.insert(Receiver::new(g.proto, first_packet(g).0), i as u32) {
            before[i] = b;
        }
    }
    ByReceiver { last, before }
}

/// What the stray packet (the flow's first) was, from its flow's summary.
fn packet(g: &Flow) -> StrayPacket {
    let to_client = first_packet(g).0 == g.client;
    match g.proto {
        FlowProto::Udp => StrayPacket::Datagram,
        FlowProto::Icmp => StrayPacket::EchoReply,
        FlowProto::Tcp if g.synack_ns.is_some() => StrayPacket::SynAck,
        FlowProto::Tcp => {
            let rst = if to_client {
                g.rst_to_client.as_deref().copied()
            } else {
                g.rst_to_server.as_deref().copied()
            };
            if rst.is_some_and(|r| r.ts_ns == g.first_ns) {
                StrayPacket::Rst
            } else {
                StrayPacket::Data
            }
        }
    }
}

/// The first stray reply at the capture nearest the client that saw one.
pub(crate) fn unexpected_source(ctx: &Ctx<'_>, chain: usize) -> Option<UnexpectedSource> {
    stray_flow(ctx, chain).map(|(c, i)| {
        let g = ctx.flow(c, i);
        let from = first_packet(g).1;
        UnexpectedSource { from: endpoint(g, &from), seen_at: c, packet: packet(g) }
    })
}

/// The flow of the first stray reply (capture, flow) that `chain` claims, at
/// the capture nearest the client (see [`claims`]).
pub(crate) fn stray_flow(ctx: &Ctx<'_>, chain: usize) -> Option<(usize, usize)> {
    ctx.claims().get(&(chain as u32)).map(|&(c, i)| (c as usize, i as usize))
}

/// Per chain, the stray flow it claims (capture, flow) at the capture nearest
/// the client. A flow is claimed by one request only: of the requests whose
/// candidate it is at that capture, the one that began last before it (then
/// the lower chain). Each candidate is looked for once, for the whole run.
pub(crate) fn claims(ctx: &Ctx<'_>) -> FxHashMap<u32, (u32, u32)> {
    use std::collections::hash_map::Entry;
    let mut best: FxHashMap<(u32, u32), (i64, u32)> = FxHashMap::default();
    // Chains in order: on a tie the lower chain, claiming first, keeps it.
    for (k, chain) in ctx.corr.chains.iter().enumerate() {
        for (c, hop) in chain.hops.iter().enumerate() {
            let Some(f) = hop.map(|i| ctx.flow(c, i)) else { continue };
            let Some(i) = candidate(ctx, k, c, f) else { continue };
            match best.entry((c as u32, i as u32)) {
                Entry::Vacant(v) => {
                    v.insert((f.first_ns, k as u32));
                }
                // The request that began last before the stray flow.
                Entry::Occupied(mut o) => {
                    if f.first_ns > o.get().0 {
                        o.insert((f.first_ns, k as u32));
                    }
                }
            }
        }
    }
    let mut by_chain: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
    for ((c, i), (_, k)) in best {
        by_chain.entry(k).and_modify(|nearest| *nearest = (*nearest).min((c, i))).or_insert((c, i));
    }
    by_chain
}

/// Whether an address reaches a group: IPv4 multicast or the limited
/// broadcast, IPv6 multicast. Answers to a group come from each responder's
/// own address: they are no stray replies.
fn group(a: std::net::IpAddr) -> bool {
    match a {
        std::net::IpAddr::V4(a) => a.is_multicast() || a.is_broadcast(),
        std::net::IpAddr::V6(a) => a.is_multicast(),
    }
}

/// Whether `from` answers a query sent to a subnet's broadcast address `to`:
/// an IPv4 address ending in .255 answered from another address of its /24
/// (a NetBIOS name query to 192.168.1.255 answered by 192.168.1.20). Any
/// host that heard it may answer, from its own address. An address ending in
/// .255 answered from elsewhere (a service address of a larger range, its
/// reply not translated back) is not taken for a broadcast.
fn answers_broadcast(to: std::net::IpAddr, from: std::net::IpAddr) -> bool {
    match (to, from) {
        (std::net::IpAddr::V4(to), std::net::IpAddr::V4(from)) => {
            let (t, f) = (to.octets(), from.octets());
            t[3] == 255 && t[..3] == f[..3]
        }
        _ => false,
    }
}

/// The flow at capture `c` that request `chain` (its flow `f` there, with no
/// reply) would name as its stray reply: the earliest flow whose first packet
/// went to the request's client endpoint from another endpoint than its
/// server, within the request's time, that is not a conversation of its own
/// (the client sent it no payload: only a rejection, a RST or an ICMP error,
/// or nothing). A request sent to a group names none, nor one sent to a
/// subnet's broadcast address the answers of its hosts.
fn candidate(ctx: &Ctx<'_>, chain: usize, c: usize, f: &Flow) -> Option<usize> {
    if f.reply_seen() || group(f.server.addr) {
        return None;
    }
    let own = ctx.corr.chains[chain].hops[c].map(|i| i as u32);
    let until = f.last_ns.saturating_add(STRAY_AFTER_NS);
    ctx.by_receiver(c)
        .flows_to(Receiver::new(f.proto, f.client))
        .filter(|&i| Some(i) != own)
        .map(|i| (i as usize, ctx.flow(c, i as usize)))
        .filter(|(_, g)| g.first_ns >= f.first_ns && g.first_ns <= until && first_packet(g).1 != f.server)
        .filter(|(_, g)| !answers_broadcast(f.server.addr, first_packet(g).1.addr))
        .filter(|(_, g)| !answered_by_receiver(g))
        .min_by_key(|&(i, g)| (g.first_ns, i))
        .map(|(i, _)| i)
}

/// Whether the receiver of a flow's first packet sent payload back in it
/// (TCP data, any UDP datagram or echo): a conversation, not a stray packet.
fn answered_by_receiver(g: &Flow) -> bool {
    let receiver_is_client = first_packet(g).0 == g.client;
    match g.proto {
        FlowProto::Tcp if receiver_is_client => g.client_data_ns.is_some(),
        FlowProto::Tcp => g.server_data_ns.is_some(),
        _ if receiver_is_client => g.packets_to_server > 0,
        _ => g.packets_to_client > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::Ns;
    use crate::flows::TcpEvent;

    /// A TCP flow whose first packet came from the server side at 5 ns (what
    /// a stray reply looks like), with nothing else seen.
    fn from_server() -> Flow {
        let mut g = Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:80", 5, 1);
        (g.first_client_ns, g.first_server_ns, g.synack_ns) = (Ns::NONE, Ns::at(5), Ns::NONE);
        g
    }

    fn rst(ts_ns: i64) -> Option<Box<TcpEvent>> {
        Some(Box::new(TcpEvent { ts_ns, to_client: true, sender: "198.19.96.10".parse().unwrap(), ttl: 64 }))
    }

    #[test]
    fn the_first_packet_is_the_clients_unless_only_the_server_sent_at_that_instant() {
        let g = from_server();
        assert_eq!(first_packet(&g), (g.client, g.server), "the server's packet came first");
        let mut both = from_server();
        both.first_client_ns = Ns::at(5);
        assert_eq!(first_packet(&both), (both.server, both.client), "a tie is the client's packet");
        let mut client = from_server();
        (client.first_client_ns, client.first_server_ns) = (Ns::at(5), Ns::at(9));
        assert_eq!(first_packet(&client), (client.server, client.client));
    }

    #[test]
    fn flows_are_indexed_by_protocol_family_address_and_port_of_their_first_receiver() {
        let ep = |s: &str| -> Endpoint {
            let a: std::net::SocketAddr = s.parse().unwrap();
            Endpoint { addr: a.ip(), port: a.port() }
        };
        let mut flows = vec![
            Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:80", 5, 1),
            from_server(),
            Flow::test_tcp("198.18.90.42:40002", "198.19.96.10:80", 7, 1),
            Flow::test_tcp("[2001:db8::1]:40001", "[2001:db8::2]:80", 9, 1),
            Flow::test_tcp("198.18.90.41:40001", "198.19.96.10:80", 11, 1),
        ];
        flows.push(Flow { proto: FlowProto::Udp, ..from_server() });
        let index = by_receiver(&flows);
        let of = |proto, e: &str| -> Vec<u32> { index.flows_to(Receiver::new(proto, ep(e))).collect() };
        assert_eq!(
            of(FlowProto::Tcp, "198.19.96.10:80"),
            vec![4, 2, 0],
            "every flow of one receiver, last first"
        );
        assert_eq!(of(FlowProto::Tcp, "198.18.90.42:40001"), vec![1]);
        assert_eq!(of(FlowProto::Udp, "198.18.90.42:40001"), vec![5]);
        assert_eq!(of(FlowProto::Tcp, "[2001:db8::2]:80"), vec![3]);
        // ::1 and 0.0.0.1 have the same address bits: the family keeps them apart.
        assert_ne!(
            Receiver::new(FlowProto::Tcp, ep("0.0.0.1:80")),
            Receiver::new(FlowProto::Tcp, ep("[::1]:80"))
        );
        assert_ne!(
            Receiver::new(FlowProto::Tcp, ep("0.0.0.1:80")),
            Receiver::new(FlowProto::Tcp, ep("0.0.0.1:81"))
        );
        assert_eq!(of(FlowProto::Icmp, "198.19.96.10:80"), Vec::<u32>::new());
    }

    /// A UDP flow from `from` to `to` at `t`, nothing back.
    fn datagram(from: &str, to: &str, t: i64) -> Flow {
        let mut f = Flow::test_tcp(from, to, t, 1);
        (f.proto, f.client_isn, f.server_isn, f.syn_count, f.seq_pair) =
            (FlowProto::Udp, None, None, 0, None);
        (f.first_server_ns, f.synack_ns, f.packets_to_client, f.bytes_to_client) = (Ns::NONE, Ns::NONE, 0, 0);
        (f.packets_to_server, f.last_ns) = (1, t);
        f
    }

    /// The stray flows the requests (every flow is a chain of one capture) name.
    fn named(flows: Vec<Flow>) -> Vec<Option<usize>> {
        use crate::correlate::{Chain, ClockEstimate, Correlation, OffsetMethodKind};
        let chains = (0..flows.len())
            .map(|i| Chain { hops: vec![Some(i)], links: Vec::new(), attempts: Vec::new() })
            .collect();
        let clock =
            ClockEstimate { offset_ns: 0, spread_ns: 0, samples: 0, method: OffsetMethodKind::Reference };
        let corr = Correlation {
            clocks: vec![clock],
            delays_ns: Vec::new(),
            chains,
            unmatched: vec![Vec::new()],
            estimated: None,
        };
        let captures = [crate::flows::Flows { flows, stats: Default::default() }];
        let ctx = Ctx::new(1, &captures, &corr);
        (0..captures[0].flows.len())
            .map(|k| {
                stray_flow(&ctx, k).map(|(c, i)| {
                    assert_eq!(c, 0);
                    i
                })
            })
            .collect()
    }

    #[test]
    fn a_datagram_from_another_address_to_the_client_is_named_but_never_for_a_group() {
        // Sent to 198.19.96.11, answered from 198.19.96.10: a stray reply.
        let flows = vec![
            datagram("198.18.90.42:5353", "198.19.96.11:9000", 10),
            datagram("198.19.96.10:9000", "198.18.90.42:5353", 20),
        ];
        assert_eq!(named(flows), [Some(1), None]);
        // Sent to a multicast group or the broadcast address: an answer comes
        // from the responder's own address, no stray reply.
        for group in ["224.0.0.251:5353", "255.255.255.255:67", "[ff02::fb]:5353"] {
            let client = if group.starts_with('[') { "[2001:db8::42]:5353" } else { "198.18.90.42:5353" };
            let responder = if group.starts_with('[') { "[2001:db8::7]:5353" } else { "198.18.90.7:5353" };
            let flows = vec![datagram(client, group, 10), datagram(responder, client, 20)];
            assert_eq!(named(flows), [None, None], "{group}");
        }
        // A NetBIOS name query to the subnet's broadcast address, answered by
        // a host of that subnet: its own flow. From another /24, an address
        // ending in .255 is a host (a service address) whose reply came back
        // untranslated: a stray reply.
        let flows = vec![
            datagram("198.18.90.42:137", "198.18.90.255:137", 10),
            datagram("198.18.90.20:137", "198.18.90.42:137", 20),
        ];
        assert_eq!(named(flows), [None, None]);
        let flows = vec![
            datagram("198.18.90.42:53", "198.19.1.255:53", 10),
            datagram("198.19.96.10:53", "198.18.90.42:53", 20),
        ];
        assert_eq!(named(flows), [Some(1), None]);
    }

    #[test]
    fn a_stray_flow_is_named_by_one_request_the_last_before_it() {
        // Two datagrams from one client endpoint to two peers, unanswered, then
        // one from a third peer: the later request names it, the earlier none.
        let flows = vec![
            datagram("198.18.90.42:4000", "198.19.0.1:4000", 10),
            datagram("198.18.90.42:4000", "198.19.0.2:4000", 12),
            datagram("198.19.0.3:4000", "198.18.90.42:4000", 20),
        ];
        assert_eq!(named(flows), [None, Some(2), None]);
        // At the same instant: the lower chain.
        let flows = vec![
            datagram("198.18.90.42:4000", "198.19.0.1:4000", 10),
            datagram("198.18.90.42:4000", "198.19.0.2:4000", 10),
            datagram("198.19.0.3:4000", "198.18.90.42:4000", 20),
        ];
        assert_eq!(named(flows), [Some(2), None, None]);
    }

    #[test]
    fn a_flow_the_client_answered_with_payload_is_a_conversation_not_a_stray() {
        let mut media = datagram("198.19.0.3:4000", "198.18.90.42:4000", 20);
        media.packets_to_client = 36; // the client sent it datagrams back
        let flows = vec![datagram("198.18.90.42:4000", "198.19.0.1:4000", 10), media];
        assert_eq!(named(flows), [None, None]);
        // TCP: a SYN-ACK the client answered with data is its own connection;
        // one it reset is a stray.
        let request = || {
            let mut f = Flow::test_tcp("198.18.90.42:40001", "198.19.200.10:80", 10, 1);
            (f.first_server_ns, f.synack_ns, f.packets_to_client, f.server_isn) =
                (Ns::NONE, Ns::NONE, 0, None);
            f
        };
        let mut synack = Flow::test_tcp("198.18.90.42:40001", "198.19.96.10:8080", 20, 1);
        (synack.first_client_ns, synack.first_server_ns) = (Ns::NONE, Ns::at(20));
        assert_eq!(named(vec![request(), synack.clone()]), [Some(1), None]);
        synack.client_data_ns = Ns::at(30);
        assert_eq!(named(vec![request(), synack]), [None, None]);
        // TCP whose first packet came from the stray's sender as its client:
        // the receiver (its server) sending data back makes it a conversation.
        let mut pushed = Flow::test_tcp("198.19.0.3:4000", "198.18.90.42:40001", 20, 9);
        (pushed.synack_ns, pushed.first_server_ns, pushed.packets_to_client) = (Ns::NONE, Ns::NONE, 1);
        (pushed.client_data_ns, pushed.server_data_ns) = (Ns::at(20), Ns::NONE);
        assert_eq!(named(vec![request(), pushed.clone()]), [Some(1), None]);
        pushed.server_data_ns = Ns::at(25);
        assert_eq!(named(vec![request(), pushed]), [None, None]);
        // UDP the other way round: the stray's receiver is its flow's client.
        let mut back = datagram("198.18.90.42:4000", "198.19.0.3:4000", 20);
        (back.first_client_ns, back.first_server_ns, back.packets_to_client) = (Ns::NONE, Ns::at(20), 1);
        back.packets_to_server = 0;
        let first = || datagram("198.18.90.42:4000", "198.19.0.1:4000", 10);
        assert_eq!(named(vec![first(), back.clone()]), [Some(1), None]);
        back.packets_to_server = 1;
        assert_eq!(named(vec![first(), back]), [None, None]);
    }

    #[test]
    fn a_stray_tcp_packet_is_a_syn_ack_a_rst_or_data() {
        let mut g = from_server();
        g.synack_ns = Ns::at(5);
        assert_eq!(packet(&g), StrayPacket::SynAck);
        let mut g = from_server();
        g.rst_to_client = rst(5);
        assert_eq!(packet(&g), StrayPacket::Rst, "a RST to the client as the first packet");
        g.rst_to_client = rst(7);
        assert_eq!(packet(&g), StrayPacket::Data, "a RST after other packets");
        let mut g = from_server();
        g.rst_to_server = rst(5);
        assert_eq!(packet(&g), StrayPacket::Data, "a RST the other way is not this packet");
        assert_eq!(packet(&from_server()), StrayPacket::Data);
    }
}
