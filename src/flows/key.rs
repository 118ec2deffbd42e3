//! Flow keys: the canonical 5-tuple a packet is looked up by, the key an ICMP
//! error's quoted header names, and midstream orientation.

use super::{Endpoint, FlowProto};
use crate::decode::Quoted;

/// Canonical key: protocol and the two endpoints in sorted order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct FlowKey {
    pub(super) proto: FlowProto,
    pub(super) lo: Endpoint,
    pub(super) hi: Endpoint,
}

impl FlowKey {
    pub(super) fn new(proto: FlowProto, a: Endpoint, b: Endpoint) -> FlowKey {
        if a <= b {
            FlowKey { proto, lo: a, hi: b }
        } else {
            FlowKey { proto, lo: b, hi: a }
        }
    }
}

/// Midstream orientation: the lower well-known port is the server.
pub(super) fn src_is_server(src_port: u16, dst_port: u16) -> bool {
    match (src_port < 1024, dst_port < 1024) {
        (true, false) => true,
        (false, true) => false,
        _ => src_port < dst_port,
    }
}

/// The flow key an ICMP error's quoted header names, and the quoted sender.
pub(super) fn quoted_key(q: &Quoted) -> Option<(FlowKey, Endpoint)> {
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
    Some((FlowKey::new(proto, src, dst), src))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_the_same_both_ways_and_midstream_servers_have_the_lower_port() {
        let a = Endpoint { addr: "198.18.0.1".parse().unwrap(), port: 40000 };
        let b = Endpoint { addr: "198.19.0.1".parse().unwrap(), port: 443 };
        assert_eq!(FlowKey::new(FlowProto::Tcp, a, b), FlowKey::new(FlowProto::Tcp, b, a));
        assert_ne!(FlowKey::new(FlowProto::Tcp, a, b), FlowKey::new(FlowProto::Udp, a, b));
        assert!(src_is_server(443, 40000));
        assert!(!src_is_server(40000, 443));
        assert!(src_is_server(8080, 40000), "neither well known: the lower port");
    }
}
