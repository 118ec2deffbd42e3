//! Flow keys: the canonical 5-tuple a packet is looked up by, the key an ICMP
//! error's quoted header names, and midstream orientation.

use super::{Endpoint, FlowProto};
use crate::decode::Quoted;

/// Canonical key: the interface a packet was seen on, protocol and the two
/// endpoints in sorted order. The interface keeps the copies of one packet seen
/// on two interfaces of one capture (`tcpdump -i any` on a host that forwards
/// without NAT) apart: each interface is an observation point of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct FlowKey {
    pub(super) interface: u32,
    pub(super) proto: FlowProto,
    pub(super) lo: Endpoint,
    pub(super) hi: Endpoint,
}

impl FlowKey {
    pub(super) fn new(interface: u32, proto: FlowProto, a: Endpoint, b: Endpoint) -> FlowKey {
        if a <= b {
            FlowKey { interface, proto, lo: a, hi: b }
        } else {
            FlowKey { interface, proto, lo: b, hi: a }
        }
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

/// The flow key an ICMP error's quoted header names on `interface`, and the quoted sender.
pub(super) fn quoted_key(interface: u32, q: &Quoted) -> Option<(FlowKey, Endpoint)> {
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
    Some((FlowKey::new(interface, proto, src, dst), src))
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
