//! Flow keys: the canonical 5-tuple a packet is looked up by, the key an ICMP
//! error's quoted header names, and midstream orientation.

use super::{Endpoint, FlowProto};
use crate::decode::Quoted;

/// Canonical key: the interface a packet was seen on, protocol and the two
/// endpoints in sorted order. The interface keeps the copies of one packet seen
/// on two interfaces of one capture (`tcpdump -i any` on a host that forwards
/// without NAT) apart: each interface is an observation point of its own.
/// Without interface index (SLL v1) the `side` does it: see [`side_of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct FlowKey {
    pub(super) interface: u32,
    pub(super) side: bool,
    pub(super) proto: FlowProto,
    pub(super) lo: Endpoint,
    pub(super) hi: Endpoint,
}

impl FlowKey {
    pub(super) fn new(interface: u32, proto: FlowProto, a: Endpoint, b: Endpoint) -> FlowKey {
        if a <= b {
            FlowKey { interface, side: false, proto, lo: a, hi: b }
        } else {
            FlowKey { interface, side: false, proto, lo: b, hi: a }
        }
    }

    /// The key of packet `p` going from `src` to `dst`.
    pub(super) fn of(p: &crate::decode::Packet, proto: FlowProto, src: Endpoint, dst: Endpoint) -> FlowKey {
        FlowKey { side: side_of(p, src, dst, false), ..FlowKey::new(interface_of(p), proto, src, dst) }
    }
}

/// SLL packet type of a packet sent by the capturing host.
const OUTGOING: u8 = 4;

/// Which side of the capturing host a packet from `src` to `dst` was seen on,
/// when the link layer says only its direction (SLL v1: `tcpdump -i any -y
/// LINUX_SLL`, tcpdump 4.99's default for `any`); false for every other link
/// layer. A host that forwards without NAT sees each packet twice with one
/// tuple: received, then sent. A request received and its reply sent are on
/// the side towards the client; the request sent and the reply received on the
/// other: the side is (src sorts before dst) xor (sent). A flow the host itself
/// ends (it sends the request, receives the reply) stays on one side.
/// `reverse`: the packet travelled the other way (the header an ICMP error quotes).
pub fn side_of(p: &crate::decode::Packet, src: Endpoint, dst: Endpoint, reverse: bool) -> bool {
    match (p.sll_ifindex, p.sll_packet_type) {
        (None, Some(t)) => (src <= dst) != ((t == OUTGOING) != reverse),
        _ => false,
    }
}

/// The interface a packet was seen on: the SLL2 interface index when the link
/// layer carries one (`tcpdump -i any`), else the capture's interface number.
pub fn interface_of(p: &crate::decode::Packet) -> u32 {
    p.sll_ifindex.unwrap_or(p.interface)
}

/// Midstream orientation: the lower well-known port is the server.
pub(super) fn src_is_server(src_port: u16, dst_port: u16) -> bool {
    match (src_port < 1024, dst_port < 1024) {
        (true, false) => true,
        (false, true) => false,
        _ => src_port < dst_port,
    }
}

/// The flow key an ICMP error `p`'s quoted header names, and the quoted sender.
pub(super) fn quoted_key(p: &crate::decode::Packet, q: &Quoted) -> Option<(FlowKey, Endpoint)> {
    use crate::decode::ip_proto;
    let (proto, sport, dport) = match q.protocol {
        ip_proto::TCP => (FlowProto::Tcp, q.src_port?, q.dst_port?),
        ip_proto::UDP => (FlowProto::Udp, q.src_port?, q.dst_port?),
        ip_proto::ICMP | ip_proto::ICMPV6 => {
            let (id, _) = q.echo?;
            (FlowProto::Icmp, id, id)
        }
        _ => return None,
    };
    let src = Endpoint { addr: q.src, port: sport };
    let dst = Endpoint { addr: q.dst, port: dport };
    let key = FlowKey::new(interface_of(p), proto, src, dst);
    Some((FlowKey { side: side_of(p, src, dst, true), ..key }, src))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_the_same_both_ways_and_midstream_servers_have_the_lower_port() {
        let a = Endpoint { addr: "198.18.0.1".parse().unwrap(), port: 40000 };
        let b = Endpoint { addr: "198.19.0.1".parse().unwrap(), port: 443 };
        assert_eq!(FlowKey::new(0, FlowProto::Tcp, a, b), FlowKey::new(0, FlowProto::Tcp, b, a));
        assert_ne!(FlowKey::new(0, FlowProto::Tcp, a, b), FlowKey::new(3, FlowProto::Tcp, a, b));
        assert_ne!(FlowKey::new(0, FlowProto::Tcp, a, b), FlowKey::new(0, FlowProto::Udp, a, b));
        assert!(src_is_server(443, 40000));
        assert!(!src_is_server(40000, 443));
        assert!(src_is_server(8080, 40000), "neither well known: the lower port");
    }
}
