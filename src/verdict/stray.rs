//! Replies from elsewhere (DESIGN.md step 5, normative): a reply-direction
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
pub(crate) fn unexpected_source(
    ctx: &Ctx<'_>,
    chain: usize,
    flows: &[Option<&Flow>],
) -> Option<UnexpectedSource> {
    stray_flow(ctx, chain, flows).map(|(c, i)| {
        let g = ctx.flow(c, i);
        let from = first_packet(g).1;
        UnexpectedSource { from: endpoint(g, &from), seen_at: c, packet: packet(g) }
    })
}

/// The flow of the first stray reply (capture, flow) at the capture nearest
/// the client that saw one.
pub(crate) fn stray_flow(ctx: &Ctx<'_>, chain: usize, flows: &[Option<&Flow>]) -> Option<(usize, usize)> {
    flows.iter().enumerate().find_map(|(c, f)| {
        let f = (*f).filter(|f| !f.reply_seen())?;
        let own = ctx.corr.chains[chain].hops[c].map(|i| i as u32);
        let index = ctx.by_receiver(c);
        let until = f.last_ns.saturating_add(STRAY_AFTER_NS);
        index
            .flows_to(Receiver::new(f.proto, f.client))
            .filter(|&i| Some(i) != own)
            .map(|i| (i as usize, ctx.flow(c, i as usize)))
            .filter(|(_, g)| g.first_ns >= f.first_ns && g.first_ns <= until && first_packet(g).1 != f.server)
            .min_by_key(|&(i, g)| (g.first_ns, i))
            .map(|(i, _)| (c, i))
    })
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
