//! Endpoint text of the output contract (`ip:port`, `[v6]:port`, a bare address
//! for ICMP) back to addresses and ports. Takes strings; gives `IpAddr`s and
//! ports. Never formats an endpoint (the verdict stage does).

use std::net::IpAddr;

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

/// The address of an endpoint, without port or brackets; the text itself when
/// it is not an endpoint.
pub fn address_text(text: &str) -> String {
    match parse_endpoint(text) {
        Some((addr, _)) => addr.to_string(),
        None => text.to_string(),
    }
}

/// True when `addr` lies in `net`/`prefix_len` (same address family only).
pub fn net_contains(net: IpAddr, prefix_len: u8, addr: IpAddr) -> bool {
    match (net, addr) {
        (IpAddr::V4(n), IpAddr::V4(a)) => {
            let len = u32::from(prefix_len.min(32));
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            u32::from(n) & mask == u32::from(a) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(a)) => {
            let len = u32::from(prefix_len.min(128));
            let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
            u128::from(n) & mask == u128::from(a) & mask
        }
        _ => false,
    }
}

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
    fn address_text_drops_port_and_brackets() {
        assert_eq!(address_text("[2001:db8::1]:80"), "2001:db8::1");
        assert_eq!(address_text("198.19.3.17:40112"), "198.19.3.17");
        assert_eq!(address_text("?"), "?");
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
