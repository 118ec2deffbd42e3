//! Endpoints in the words of the output contract: `ip:port`, `[v6]:port`, a
//! bare address for ICMP; their Community ID and Wireshark filter; and the same
//! text read back (only `compare` loading a report does that). Takes typed
//! endpoints or report text; gives text or addresses and ports. Never reads captures.

use crate::verdict::{Endpoint, Hop, Proto};
use std::fmt::{self, Write};
use std::net::IpAddr;

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.addr, self.port) {
            (a, None) => write!(f, "{a}"),
            // The common case, printed for every hop: digits on the stack, one write.
            (IpAddr::V4(a), Some(p)) => f.write_str(v4_endpoint(a, p).as_str()),
            (IpAddr::V6(a), Some(p)) => write!(f, "[{a}]:{p}"),
        }
    }
}

/// An address as text, written into a buffer sized once (the report writes
/// several per request; `to_string` grows its buffer piece by piece).
pub fn addr_text(addr: IpAddr) -> String {
    let mut text = String::with_capacity(40);
    // Writing into a String cannot fail.
    let _ = match addr {
        IpAddr::V4(a) => crate::report::flowid::write_ipv4(&mut text, a),
        IpAddr::V6(a) => write!(text, "{a}"),
    };
    text
}

/// An endpoint as text (`ip:port`, `[v6]:port`), into a buffer sized once.
pub fn endpoint_text(e: Endpoint) -> String {
    let mut text = String::with_capacity(48);
    push_endpoint(&mut text, e);
    text
}

/// Appends `e` as its `Display` writes it; an IPv4 endpoint with a port (the
/// common case: a dozen per CSV row) without going through `fmt`.
pub fn push_endpoint(out: &mut String, e: Endpoint) {
    match (e.addr, e.port) {
        (IpAddr::V4(a), Some(p)) => out.push_str(v4_endpoint(a, p).as_str()),
        // Writing into a String cannot fail.
        _ => {
            let _ = write!(out, "{e}");
        }
    }
}

/// `a.b.c.d:port` on the stack.
fn v4_endpoint(a: std::net::Ipv4Addr, port: u16) -> crate::report::flowid::V4Text {
    let mut text = crate::report::flowid::V4Text::new();
    text.ipv4(a);
    text.port(port);
    text
}

/// IP protocol number of a request's flow at a hop (ICMPv6 for IPv6 echo).
fn ip_proto_number(proto: Proto, v6: bool) -> u8 {
    match (proto, v6) {
        (Proto::Tcp, _) => 6,
        (Proto::Udp, _) => 17,
        (Proto::Icmp, false) => 1,
        (Proto::Icmp, true) => 58,
    }
}

/// Appends the Community ID v1 of the hop's tuple (ICMP: echo request
/// type/code) to `out`; false (nothing appended) when unseen.
pub fn push_community_id(out: &mut String, proto: Proto, hop: &Hop) -> bool {
    let (Some(c), Some(s)) = (hop.client, hop.server) else { return false };
    let v6 = c.addr.is_ipv6();
    let number = ip_proto_number(proto, v6);
    let (cp, sp) = match proto {
        Proto::Icmp => (if v6 { 128 } else { 8 }, 0),
        _ => (c.port.unwrap_or(0), s.port.unwrap_or(0)),
    };
    crate::report::flowid::push_community_id_seeded(out, 0, number, c.addr, cp, s.addr, sp);
    true
}

/// Appends the Wireshark display filter of the hop's flow to `out`; false
/// (nothing appended) when unseen.
pub fn push_wireshark_filter(out: &mut String, proto: Proto, hop: &Hop) -> bool {
    let (Some(c), Some(s)) = (hop.client, hop.server) else { return false };
    let number = ip_proto_number(proto, c.addr.is_ipv6());
    let client_port = c.port.or(hop.icmp_id).unwrap_or(0);
    let server_port = s.port.unwrap_or(0);
    crate::report::flowid::push_wireshark_filter(
        out,
        number,
        c.addr,
        client_port,
        s.addr,
        server_port,
        hop.icmp_id,
    );
    true
}

/// `198.18.90.42:51514`, `[2001:db8::1]:80` or a bare address → (address, port).
pub fn parse_endpoint(text: &str) -> Option<(IpAddr, Option<u16>)> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<IpAddr>() {
        return Some((addr, None));
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (addr, tail) = rest.split_once(']')?;
        let addr = addr.parse::<IpAddr>().ok()?;
        return match tail.strip_prefix(':') {
            Some(port) => Some((addr, Some(port.parse().ok()?))),
            None if tail.is_empty() => Some((addr, None)),
            None => None,
        };
    }
    let (addr, port) = text.rsplit_once(':')?;
    Some((addr.parse().ok()?, Some(port.parse().ok()?)))
}

pub use crate::names::net_contains;

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn endpoints_of_every_contract_shape_parse() {
        assert_eq!(parse_endpoint("198.18.90.42:51514"), Some((ip("198.18.90.42"), Some(51514))));
        assert_eq!(parse_endpoint("[2001:db8::1]:80"), Some((ip("2001:db8::1"), Some(80))));
        assert_eq!(parse_endpoint("2001:db8::1"), Some((ip("2001:db8::1"), None)));
        assert_eq!(parse_endpoint("198.19.0.9"), Some((ip("198.19.0.9"), None)));
        assert_eq!(parse_endpoint("not-an-endpoint"), None);
        assert_eq!(parse_endpoint("198.18.90.42:99999"), None);
    }

    #[test]
    fn endpoints_print_as_the_contract_says() {
        let e = |a: &str, port| Endpoint { addr: ip(a), port };
        assert_eq!(e("198.19.3.17", Some(40112)).to_string(), "198.19.3.17:40112");
        assert_eq!(e("2001:db8::1", Some(80)).to_string(), "[2001:db8::1]:80");
        assert_eq!(e("2001:db8::1", None).to_string(), "2001:db8::1");
        for text in
            ["198.19.3.17:40112", "0.0.0.0:0", "255.255.255.255:65535", "[2001:db8::1]:80", "2001:db8::1"]
        {
            let (addr, port) = parse_endpoint(text).unwrap();
            assert_eq!(endpoint_text(Endpoint { addr, port }), text);
            assert_eq!(addr_text(addr), addr.to_string());
        }
    }

    #[test]
    fn ipv4_endpoints_print_as_std_prints_a_socket_address() {
        for (n, port) in (0..=u32::MAX).step_by(7_777_777).zip((0..=u16::MAX).cycle().step_by(97)) {
            let a = std::net::Ipv4Addr::from(n);
            let e = Endpoint { addr: IpAddr::V4(a), port: Some(port) };
            let std = std::net::SocketAddrV4::new(a, port).to_string();
            assert_eq!((e.to_string(), endpoint_text(e)), (std.clone(), std.clone()));
            let mut pushed = "x".to_string();
            push_endpoint(&mut pushed, e);
            assert_eq!(pushed, format!("x{std}"));
        }
        let e = Endpoint { addr: ip("255.255.255.255"), port: Some(65535) };
        assert_eq!(format!("<{e}>"), "<255.255.255.255:65535>");
    }

    #[test]
    fn net_contains_respects_prefix_and_family() {
        assert!(net_contains(ip("198.18.0.0"), 15, ip("198.19.3.17")));
        assert!(!net_contains(ip("198.18.0.0"), 16, ip("198.19.3.17")));
        assert!(net_contains(ip("0.0.0.0"), 0, ip("203.0.113.1")));
        assert!(net_contains(ip("2001:db8::"), 32, ip("2001:db8:1::5")));
        assert!(!net_contains(ip("2001:db8::"), 32, ip("198.19.3.17")));
    }
}
