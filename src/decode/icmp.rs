//! ICMPv4 / ICMPv6 messages. Takes the ICMP bytes present in a record; gives
//! type, code, echo identifier/sequence, and for errors the original packet's
//! header they quote (addresses, protocol, ports, TCP seq, echo id/seq, IPv4 ID),
//! as far as the quote was captured. Never reads past the record; a quote cut
//! short still gives what it holds.

use super::be::{be16, be32};
use super::ip;
use super::{ip_proto, Fragment, IcmpInfo, IcmpMessage, Quoted};

/// ICMP header fields (both versions), smoltcp style.
mod field {
    use std::ops::Range;
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    /// Echo identifier and sequence number.
    pub const ECHO_ID: Range<usize> = 4..6;
    pub const ECHO_SEQ: Range<usize> = 6..8;
    /// IPv4 3/4 next-hop MTU (RFC 1191) and ICMPv6 2/0 MTU (RFC 4443).
    pub const V4_NEXT_HOP_MTU: Range<usize> = 6..8;
    pub const V6_MTU: Range<usize> = 4..8;
    /// Type, code, checksum and the 4-byte "rest of header".
    pub const HEADER_LEN: usize = 8;
}

/// The first 8 bytes of the quoted transport header.
mod quoted {
    use std::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const TCP_SEQ: Range<usize> = 4..8;
}

/// ICMP type numbers.
mod ty {
    pub const V4_ECHO_REPLY: u8 = 0;
    pub const V4_UNREACHABLE: u8 = 3;
    pub const V4_SOURCE_QUENCH: u8 = 4;
    pub const V4_REDIRECT: u8 = 5;
    pub const V4_ECHO_REQUEST: u8 = 8;
    pub const V4_TIME_EXCEEDED: u8 = 11;
    pub const V4_PARAMETER_PROBLEM: u8 = 12;
    pub const V6_UNREACHABLE: u8 = 1;
    pub const V6_PACKET_TOO_BIG: u8 = 2;
    pub const V6_TIME_EXCEEDED: u8 = 3;
    pub const V6_PARAMETER_PROBLEM: u8 = 4;
    pub const V6_ECHO_REQUEST: u8 = 128;
    pub const V6_ECHO_REPLY: u8 = 129;
}

/// IPv4 destination-unreachable code "fragmentation needed and DF set".
const CODE_FRAG_NEEDED: u8 = 4;

/// Header length of every ICMP message we read (payload starts after it).
pub const HEADER_LEN: usize = field::HEADER_LEN;

/// Parses an ICMP message. `None` when not even type and code were captured;
/// otherwise the info and whether the message was cut short.
pub fn parse(v6: bool, bytes: &[u8]) -> Option<(IcmpInfo, bool)> {
    let icmp_type = *bytes.get(field::TYPE)?;
    let code = *bytes.get(field::CODE)?;
    let echo = || Some((be16(bytes, field::ECHO_ID)?, be16(bytes, field::ECHO_SEQ)?));
    let mut truncated = bytes.len() < field::HEADER_LEN;
    let message = match (v6, icmp_type) {
        (false, ty::V4_ECHO_REQUEST) | (true, ty::V6_ECHO_REQUEST) => {
            echo().map_or(IcmpMessage::Other, |(id, seq)| IcmpMessage::EchoRequest { id, seq })
        }
        (false, ty::V4_ECHO_REPLY) | (true, ty::V6_ECHO_REPLY) => {
            echo().map_or(IcmpMessage::Other, |(id, seq)| IcmpMessage::EchoReply { id, seq })
        }
        (false, ty::V4_UNREACHABLE)
        | (false, ty::V4_SOURCE_QUENCH)
        | (false, ty::V4_REDIRECT)
        | (false, ty::V4_TIME_EXCEEDED)
        | (false, ty::V4_PARAMETER_PROBLEM)
        | (true, ty::V6_UNREACHABLE)
        | (true, ty::V6_PACKET_TOO_BIG)
        | (true, ty::V6_TIME_EXCEEDED)
        | (true, ty::V6_PARAMETER_PROBLEM) => {
            match bytes.get(field::HEADER_LEN..).and_then(parse_quote) {
                Some(q) => IcmpMessage::Error(q),
                None => {
                    // An error without a readable quote was cut short (or is damaged).
                    truncated = true;
                    IcmpMessage::Other
                }
            }
        }
        _ => IcmpMessage::Other,
    };
    let mtu = match (v6, icmp_type, code) {
        (false, ty::V4_UNREACHABLE, CODE_FRAG_NEEDED) => be16(bytes, field::V4_NEXT_HOP_MTU).map(u32::from),
        (true, ty::V6_PACKET_TOO_BIG, 0) => be32(bytes, field::V6_MTU),
        _ => None,
    };
    Some((IcmpInfo { v6, icmp_type, code, message, mtu }, truncated))
}

/// The original packet quoted after an ICMP error header: at least its IP
/// header must be there; ports, seq and echo fields are filled when present.
pub fn parse_quote(bytes: &[u8]) -> Option<Quoted> {
    let ip = ip::parse(bytes).ok()?;
    let mut q = Quoted {
        src: ip.src,
        dst: ip.dst,
        protocol: ip.protocol,
        src_port: None,
        dst_port: None,
        tcp_seq: None,
        echo: None,
        ip_id: ip.ip_id,
    };
    if ip.fragment == Fragment::Later {
        return Some(q);
    }
    let t = ip.payload;
    match ip.protocol {
        ip_proto::TCP | ip_proto::UDP => {
            q.src_port = be16(t, quoted::SRC_PORT);
            q.dst_port = be16(t, quoted::DST_PORT);
            if ip.protocol == ip_proto::TCP {
                q.tcp_seq = be32(t, quoted::TCP_SEQ);
            }
        }
        ip_proto::ICMP | ip_proto::ICMPV6 => {
            let echo_type = if ip.protocol == ip_proto::ICMP {
                [ty::V4_ECHO_REQUEST, ty::V4_ECHO_REPLY]
            } else {
                [ty::V6_ECHO_REQUEST, ty::V6_ECHO_REPLY]
            };
            if t.get(field::TYPE).is_some_and(|ty| echo_type.contains(ty)) {
                q.echo = be16(t, field::ECHO_ID).zip(be16(t, field::ECHO_SEQ));
            }
        }
        _ => {}
    }
    Some(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    // ICMPv4 type 3 code 13 (communication administratively prohibited) quoting
    // a TCP SYN 198.18.0.2:51514 -> 198.19.0.10:80, IP ID 0xbeef, seq 0x12345678.
    const ADMIN_PROHIBITED: &[u8] = &[
        3, 13, 0, 0, 0, 0, 0, 0, // type, code, checksum, unused
        0x45, 0, 0, 0x3c, 0xbe, 0xef, 0x40, 0, 63, 6, 0, 0, 198, 18, 0, 2, 198, 19, 0,
        10, // quoted IPv4
        0xc9, 0x3a, 0x00, 0x50, 0x12, 0x34, 0x56, 0x78, // ports 51514 -> 80, seq
    ];

    #[test]
    fn admin_prohibited_quotes_tcp_syn() {
        let (info, truncated) = parse(false, ADMIN_PROHIBITED).unwrap();
        assert!(!truncated);
        assert_eq!((info.icmp_type, info.code, info.v6), (3, 13, false));
        let IcmpMessage::Error(q) = info.message else { panic!("not an error: {info:?}") };
        assert_eq!(q.src, "198.18.0.2".parse::<IpAddr>().unwrap());
        assert_eq!(q.dst, "198.19.0.10".parse::<IpAddr>().unwrap());
        assert_eq!((q.protocol, q.src_port, q.dst_port), (6, Some(51514), Some(80)));
        assert_eq!((q.tcp_seq, q.ip_id, q.echo), (Some(0x1234_5678), Some(0xbeef), None));
    }

    #[test]
    fn quote_cut_after_ports_keeps_ports() {
        let (info, _) = parse(false, &ADMIN_PROHIBITED[..32]).unwrap();
        let IcmpMessage::Error(q) = info.message else { panic!("not an error: {info:?}") };
        assert_eq!((q.src_port, q.dst_port, q.tcp_seq), (Some(51514), Some(80), None));
        // Cut before the ports: addresses and protocol only.
        let (info, _) = parse(false, &ADMIN_PROHIBITED[..29]).unwrap();
        let IcmpMessage::Error(q) = info.message else { panic!("not an error: {info:?}") };
        assert_eq!((q.protocol, q.src_port, q.dst_port), (6, None, None));
    }

    #[test]
    fn quote_without_ip_header_is_other_and_truncated() {
        let (info, truncated) = parse(false, &ADMIN_PROHIBITED[..20]).unwrap();
        assert_eq!((info.message, truncated), (IcmpMessage::Other, true));
    }

    // ICMPv4 time exceeded quoting an echo request 198.18.0.2 -> 198.19.0.10,
    // id 0x0042 seq 7.
    const TIME_EXCEEDED_ECHO: &[u8] = &[
        11, 0, 0, 0, 0, 0, 0, 0, //
        0x45, 0, 0, 0x54, 0, 1, 0x40, 0, 1, 1, 0, 0, 198, 18, 0, 2, 198, 19, 0, 10, //
        8, 0, 0, 0, 0x00, 0x42, 0x00, 0x07,
    ];

    #[test]
    fn time_exceeded_quotes_echo_id_and_seq() {
        let (info, _) = parse(false, TIME_EXCEEDED_ECHO).unwrap();
        let IcmpMessage::Error(q) = info.message else { panic!("not an error: {info:?}") };
        assert_eq!((q.protocol, q.echo, q.src_port), (1, Some((0x42, 7)), None));
    }

    #[test]
    fn echo_too_short_for_id_is_other() {
        let (info, truncated) = parse(false, &[8, 0, 0, 0, 0]).unwrap();
        assert_eq!((info.icmp_type, info.message, truncated), (8, IcmpMessage::Other, true));
        assert!(parse(false, &[8]).is_none());
    }
}
