//! Raw record → owned `Packet` summary (addresses, ports, TCP seq/ack/flags, IP ID,
//! TTL, payload position, ICMP type/code and the header an ICMP error quotes).
//! `link` finds the IP header (by hand: etherparse has no SLL2 or null/loopback);
//! `ip` reads it with etherparse's lax slicer; `transport` and `icmp` read TCP,
//! UDP and ICMP by hand, so a header cut by the snaplen, or the first IPv4
//! fragment, still gives ports. The only etherparse user. Never allocates per
//! packet beyond the `Packet` itself; never keeps the record; never panics.
//! `overlay` peels VXLAN, Geneve, GRE and IP-in-IP (at most `MAX_OVERLAY_DEPTH`
//! layers): the `Packet` then describes the inner packet and names the
//! outermost overlay; a damaged overlay keeps the outer packet (`overlay_damage`
//! says why); encrypted tunnels (WireGuard, ESP, OpenVPN) are recognised by shape.
//!
//! What a `Packet` means (for the flow stage):
//! - `payload_*` is the transport payload: after the TCP header (data offset),
//!   the UDP header, or the 8-byte ICMP header (echo data; for ICMP errors the
//!   quoted packet). `payload_len` comes from the IP lengths, `payload_captured`
//!   is what the record holds (never Ethernet padding).
//! - `truncated` means the record ended before the headers said, or a TCP data
//!   offset was impossible (then `payload_len` is 0). TCP fields past a cut
//!   read 0 (`seq`, `ack`, `flags`, `window`); fewer than 4 transport bytes give
//!   `Transport::Other` with the protocol number.
//! - Later fragments are `Fragment::Later` with `Transport::Other`; the first
//!   fragment has its transport decoded. An ICMP error whose quote holds no
//!   whole IP header is `IcmpMessage::Other` with `truncated`.

mod be;
mod icmp;
mod ip;
pub mod link;
pub mod overlay;
pub mod packet;
mod transport;

#[cfg(test)]
mod overlay_tests;

pub use overlay::{Encrypted, Overlay, OverlayDamage, OverlayKind};
pub use packet::*;

use crate::read::RawRecord;
use std::fmt;

/// Why a record gave no usable IP packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The link type is not one we decode.
    UnsupportedLinkType,
    /// The link layer carries something other than IPv4/IPv6 (ARP, LLDP, ...).
    NotIp { ethertype: u16 },
    /// A header was cut short.
    Truncated { layer: &'static str, needed: usize, available: usize },
    /// A header is malformed (bad version, bad header length, ...).
    Malformed { layer: &'static str, what: String },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnsupportedLinkType => f.write_str("link type not supported"),
            DecodeError::NotIp { ethertype } => write!(f, "not IP (ethertype 0x{ethertype:04x})"),
            DecodeError::Truncated { layer, needed, available } => {
                write!(f, "{layer} header cut short: needs {needed} bytes, {available} captured")
            }
            DecodeError::Malformed { layer, what } => write!(f, "malformed {layer} header: {what}"),
        }
    }
}

/// Most overlay layers peeled off one packet (VXLAN in GRE in IP-in-IP, say).
pub const MAX_OVERLAY_DEPTH: usize = 3;

/// One IP layer of a record: where it starts and what it says.
struct Layer<'a> {
    at: usize,
    ip: ip::IpLayer<'a>,
    t: transport::TransportLayer,
}

/// Reads the IP layer at `at` of `data` (already bounded by any outer IP length).
fn layer(data: &[u8], at: usize) -> Result<Layer<'_>, DecodeError> {
    let ip = ip::parse(data.get(at..).unwrap_or(&[]))?;
    let t = transport::parse(ip.protocol, ip.fragment, ip.payload, ip.payload_len);
    Ok(Layer { at, ip, t })
}

/// Why peeling stopped short of an inner IP packet.
enum Stop {
    /// The overlay header or its inner packet is damaged: keep the outer packet.
    Damaged(OverlayDamage),
    /// The overlay carries a link-layer protocol (ARP, ...), not IP: the record
    /// is not an IP packet, like an ARP frame on the wire.
    NotIp(u16),
}

/// Link-layer protocols that an overlay carries besides IP (ARP, RARP, LLDP):
/// with one of these inside, the frame is the overlay's own traffic.
const LINK_ONLY: [u16; 3] = [0x0806, 0x8035, 0x88cc];

/// The next layer inside `outer`, when it is an overlay we peel: Ok(None) when
/// it is not one.
fn peel<'a>(data: &'a [u8], outer: &Layer<'a>) -> Result<Option<(Overlay, Layer<'a>)>, Stop> {
    if outer.ip.fragment != Fragment::None {
        return Ok(None);
    }
    let start = outer.at.saturating_add(outer.ip.header_len);
    let end = start.saturating_add(outer.ip.payload.len()).min(data.len());
    let bounded = &data[..end];
    let (overlay, inner) = match overlay::peel(outer.ip.protocol, outer.ip.src.is_ipv6(), outer.ip.payload) {
        overlay::Peel::No => return Ok(None),
        overlay::Peel::Malformed(d) => return Err(Stop::Damaged(d)),
        overlay::Peel::Inner(o, inner) => (o, inner),
    };
    let damage = |what| Stop::Damaged(OverlayDamage { kind: overlay.kind, what });
    let ip_at = match inner {
        overlay::Inner::Ip(at) => start.saturating_add(at),
        overlay::Inner::Ethernet(at) => {
            let frame_at = start.saturating_add(at);
            let frame = bounded.get(frame_at..).unwrap_or(&[]);
            match link::locate_ip(crate::read::LinkType::Ethernet, frame) {
                Ok(l) => frame_at.saturating_add(l.ip_offset),
                // ARP, LLDP, ... inside the overlay: not an IP packet. Through
                // a UDP port, only well-known link protocols say it was the
                // overlay; any other "ethertype" may be an application's
                // datagram to that port, which stays as it is.
                Err(DecodeError::NotIp { ethertype }) => {
                    if overlay.kind == OverlayKind::GreEthernet || LINK_ONLY.contains(&ethertype) {
                        return Err(Stop::NotIp(ethertype));
                    }
                    return Ok(None);
                }
                Err(_) => return Err(damage(overlay::Damage::InnerEthernet)),
            }
        }
    };
    match layer(bounded, ip_at) {
        Ok(l) => Ok(Some((overlay, l))),
        Err(_) => Err(damage(overlay::Damage::InnerIp)),
    }
}

/// Decodes one record. A record cut short after the IP header still gives a
/// `Packet` (with `truncated: true`); only a record with no usable IP header is
/// an error. Overlays are peeled (at most `MAX_OVERLAY_DEPTH` layers): the
/// `Packet` describes the innermost packet and names the outermost overlay.
pub fn decode(record: &RawRecord<'_>) -> Result<Packet, DecodeError> {
    let data = record.data;
    let link = link::locate_ip(record.link_type, data)?;
    let ip = ip::parse(data.get(link.ip_offset..).unwrap_or(&[]))?;
    let t = transport::parse(ip.protocol, ip.fragment, ip.payload, ip.payload_len);
    if overlay::may_carry(ip.protocol, &t.transport) {
        return decode_overlay(record, &link, Layer { at: link.ip_offset, ip, t });
    }
    Ok(packet(record, &link, link.ip_offset, &ip, t, Tunnel::default()))
}

/// The overlays peeled off one packet.
#[derive(Default)]
struct Tunnel {
    outermost: Option<Overlay>,
    depth: u8,
    damage: Option<OverlayDamage>,
}

/// `decode` for a packet that may carry an overlay (kept out of the common path).
#[cold]
fn decode_overlay<'a>(
    record: &RawRecord<'a>,
    link: &link::LinkInfo,
    mut cur: Layer<'a>,
) -> Result<Packet, DecodeError> {
    let mut tunnel = Tunnel::default();
    while usize::from(tunnel.depth) < MAX_OVERLAY_DEPTH
        && overlay::may_carry(cur.ip.protocol, &cur.t.transport)
    {
        match peel(record.data, &cur) {
            Ok(Some((o, inner))) => {
                tunnel.outermost.get_or_insert(o);
                tunnel.depth += 1;
                cur = inner;
            }
            Ok(None) => break,
            Err(Stop::Damaged(d)) => {
                tunnel.damage = Some(d);
                break;
            }
            Err(Stop::NotIp(ethertype)) => return Err(DecodeError::NotIp { ethertype }),
        }
    }
    Ok(packet(record, link, cur.at, &cur.ip, cur.t, tunnel))
}

/// The `Packet` of the IP layer `ip` at offset `at` with transport `t`.
#[inline(always)]
fn packet(
    record: &RawRecord<'_>,
    link: &link::LinkInfo,
    at: usize,
    ip: &ip::IpLayer<'_>,
    t: transport::TransportLayer,
    tunnel: Tunnel,
) -> Packet {
    let payload_offset = at.saturating_add(ip.header_len).saturating_add(t.header_len);
    let header_len = u32::try_from(t.header_len).unwrap_or(u32::MAX);
    let (payload_len, payload_captured) = if t.no_payload {
        (0, 0)
    } else {
        let declared = ip.payload_len.saturating_sub(header_len);
        let present = u32::try_from(ip.payload.len().saturating_sub(t.header_len)).unwrap_or(u32::MAX);
        (declared, present.min(declared))
    };
    let encrypted = match &t.transport {
        Transport::Tcp(x) if x.src_port == overlay::port::OPENVPN || x.dst_port == overlay::port::OPENVPN => {
            let payload = ip.payload.get(t.header_len..).unwrap_or(&[]);
            overlay::encrypted(ip.protocol, Some((x.src_port, x.dst_port)), true, payload)
        }
        Transport::Tcp(_) | Transport::Icmp(_) => None,
        Transport::Udp(x) => {
            let payload = ip.payload.get(t.header_len..).unwrap_or(&[]);
            overlay::encrypted(ip.protocol, Some((x.src_port, x.dst_port)), false, payload)
        }
        _ if ip.fragment == Fragment::Later => None,
        _ => overlay::encrypted(ip.protocol, None, false, &[]),
    };
    Packet {
        ts_ns: record.ts_ns,
        record: record.record,
        interface: record.interface,
        sll_packet_type: link.sll_packet_type,
        sll_ifindex: link.sll_ifindex,
        src: ip.src,
        dst: ip.dst,
        ttl: ip.ttl,
        tos: ip.tos,
        vlan: link.vlan,
        ip_id: ip.ip_id,
        dont_fragment: ip.dont_fragment,
        ip_len: ip.ip_len,
        fragment: ip.fragment,
        frag: ip.frag,
        transport: t.transport,
        payload_offset: u32::try_from(payload_offset).unwrap_or(u32::MAX),
        payload_len,
        payload_captured,
        truncated: ip.truncated || t.truncated,
        // A label stack lies outside any tunnel the packet carries.
        overlay: link
            .mpls
            .map(|label| Overlay { kind: OverlayKind::Mpls, id: Some(label) })
            .or(tunnel.outermost),
        overlay_depth: tunnel.depth,
        overlay_damage: tunnel.damage,
        encrypted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::LinkType;
    use std::net::IpAddr;

    fn rec(link_type: LinkType, data: &[u8]) -> RawRecord<'_> {
        RawRecord {
            ts_ns: 1_700_000_000_123_456_789,
            interface: 3,
            link_type,
            data,
            orig_len: u32::try_from(data.len()).unwrap(),
            record: 42,
            byte_offset: 4096,
        }
    }

    fn addr(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn tcp(p: &Packet) -> &TcpInfo {
        match &p.transport {
            Transport::Tcp(t) => t,
            other => panic!("not TCP: {other:?}"),
        }
    }

    fn icmp(p: &Packet) -> &IcmpInfo {
        match &p.transport {
            Transport::Icmp(i) => i,
            other => panic!("not ICMP: {other:?}"),
        }
    }

    // Ethernet + IPv4 TCP SYN 198.18.0.2:51514 -> 198.19.0.10:80, ID 0x1c46, DF,
    // TTL 64, seq 0x12345678, window 64240, options MSS 1460, NOP, NOP, SACK-perm,
    // NOP, wscale 7 (TCP header 32 bytes, total length 52). Hand-made.
    const ETH_V4_SYN: &[u8] = &[
        0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, // Ethernet
        0x45, 0x00, 0x00, 0x34, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, 198, 18, 0, 2, 198, 19, 0,
        10, // IPv4
        0xc9, 0x3a, 0x00, 0x50, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 0x80, 0x02, 0xfa, 0xf0, 0, 0, 0,
        0, // TCP
        2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7, // options
    ];

    #[test]
    fn ipv4_tcp_syn_over_ethernet() {
        let p = decode(&rec(LinkType::Ethernet, ETH_V4_SYN)).unwrap();
        assert_eq!((p.ts_ns, p.record, p.interface), (1_700_000_000_123_456_789, 42, 3));
        assert_eq!((p.sll_packet_type, p.sll_ifindex), (None, None));
        assert_eq!((p.src, p.dst), (addr("198.18.0.2"), addr("198.19.0.10")));
        assert_eq!((p.ttl, p.ip_id, p.dont_fragment, p.ip_len), (64, Some(0x1c46), true, 52));
        assert_eq!(p.fragment, Fragment::None);
        let t = tcp(&p);
        assert_eq!((t.src_port, t.dst_port, t.seq, t.ack), (51514, 80, 0x1234_5678, 0));
        assert_eq!((t.flags, t.window, t.mss), (tcp_flags::SYN, 64240, Some(1460)));
        assert_eq!((p.payload_offset, p.payload_len, p.payload_captured, p.truncated), (66, 0, 0, false));
        assert_eq!(p.protocol(), ip_proto::TCP);
        assert_eq!(p.tos, 0);
        let mut ef = ETH_V4_SYN.to_vec();
        ef[15] = 0xb9; // DSCP 46, ECN 1 (the checksum is not checked)
        assert_eq!(decode(&rec(LinkType::Ethernet, &ef)).unwrap().tos, 0xb9);
    }

    #[test]
    fn ipv4_syn_behind_vlan_and_qinq_tags() {
        // The same SYN with an 802.1ad tag (VID 100) and an 802.1Q tag (VID 200).
        let mut bytes = ETH_V4_SYN[..12].to_vec();
        bytes.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0xc8]);
        bytes.extend_from_slice(&ETH_V4_SYN[12..]);
        let p = decode(&rec(LinkType::Ethernet, &bytes)).unwrap();
        assert_eq!((tcp(&p).seq, tcp(&p).mss, p.payload_offset), (0x1234_5678, Some(1460), 74));
        assert_eq!(p.vlan, Some(100), "the outermost tag");
        // One 802.1Q tag only, with priority 5 and DEI set around VID 200.
        let mut bytes = ETH_V4_SYN[..12].to_vec();
        bytes.extend_from_slice(&[0x81, 0x00, 0xb0, 0xc8]);
        bytes.extend_from_slice(&ETH_V4_SYN[12..]);
        assert_eq!(decode(&rec(LinkType::Ethernet, &bytes)).unwrap().vlan, Some(200));
        assert_eq!(decode(&rec(LinkType::Ethernet, ETH_V4_SYN)).unwrap().vlan, None, "untagged");
        // One 802.1Q tag only.
        let mut bytes = ETH_V4_SYN[..12].to_vec();
        bytes.extend_from_slice(&[0x81, 0x00, 0x00, 0xc8]);
        bytes.extend_from_slice(&ETH_V4_SYN[12..]);
        let p = decode(&rec(LinkType::Ethernet, &bytes)).unwrap();
        assert_eq!((p.src, tcp(&p).dst_port), (addr("198.18.0.2"), 80));
    }

    // Raw IPv6 TCP SYN [2001:db8::1]:40000 -> [2001:db8::2]:443, hop limit 63,
    // seq 1, window 65535, option MSS 1440 (TCP header 24 bytes).
    const RAW_V6_SYN: &[u8] = &[
        0x60, 0, 0, 0, 0x00, 0x18, 6, 63, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        0x9c, 0x40, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0, 0x60, 0x02, 0xff, 0xff, 0, 0, 0, 0, //
        2, 4, 0x05, 0xa0,
    ];

    #[test]
    fn ipv6_tcp_syn_raw() {
        let p = decode(&rec(LinkType::RawIp, RAW_V6_SYN)).unwrap();
        assert_eq!((p.src, p.dst), (addr("2001:db8::1"), addr("2001:db8::2")));
        assert_eq!(p.tos, 0);
        // Traffic class 0xb8 (DSCP 46, EF) spans the first two bytes.
        let mut ef = RAW_V6_SYN.to_vec();
        (ef[0], ef[1]) = (0x6b, 0x80);
        assert_eq!(decode(&rec(LinkType::RawIp, &ef)).unwrap().tos, 0xb8);
        assert_eq!((p.ttl, p.ip_id, p.dont_fragment, p.ip_len), (63, None, false, 64));
        let t = tcp(&p);
        assert_eq!(
            (t.src_port, t.dst_port, t.seq, t.flags, t.mss),
            (40000, 443, 1, tcp_flags::SYN, Some(1440))
        );
        assert_eq!((p.payload_offset, p.payload_len, p.truncated), (64, 0, false));
    }

    #[test]
    fn version_nibble_beats_link_type() {
        // IPv6 bytes under LINKTYPE_IPV4 (as in tcpdump's LINKTYPE_IPV4_invalid.pcap).
        let p = decode(&rec(LinkType::Ipv4, RAW_V6_SYN)).unwrap();
        assert_eq!(p.src, addr("2001:db8::1"));
    }

    #[test]
    fn bad_ip_version_is_malformed() {
        let mut bytes = RAW_V6_SYN.to_vec();
        bytes[0] = 0x50;
        assert_eq!(
            decode(&rec(LinkType::RawIp, &bytes)),
            Err(DecodeError::Malformed { layer: "ip", what: "IP version 5".into() })
        );
    }

    // SLL (packet type 0, host) + IPv4 UDP 198.18.0.1:5353 -> 198.18.0.255:5353,
    // TTL 255, 4 payload bytes "abcd".
    const SLL_V4_UDP: &[u8] = &[
        0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x02, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00, // SLL
        0x45, 0x00, 0x00, 0x20, 0x00, 0x07, 0x00, 0x00, 0xff, 0x11, 0x00, 0x00, 198, 18, 0, 1, 198, 18, 0,
        255, // IPv4
        0x14, 0xe9, 0x14, 0xe9, 0x00, 0x0c, 0x00, 0x00, b'a', b'b', b'c', b'd', // UDP
    ];

    #[test]
    fn udp_over_sll() {
        let r = rec(LinkType::LinuxSll, SLL_V4_UDP);
        let p = decode(&r).unwrap();
        assert_eq!((p.sll_packet_type, p.sll_ifindex, p.interface), (Some(0), None, 3));
        assert_eq!(p.transport, Transport::Udp(UdpInfo { src_port: 5353, dst_port: 5353 }));
        assert_eq!((p.ip_id, p.dont_fragment, p.ttl, p.ip_len), (Some(7), false, 255, 32));
        assert_eq!((p.payload_offset, p.payload_len, p.payload_captured), (44, 4, 4));
        assert_eq!(p.payload(r.data), b"abcd");
    }

    #[test]
    fn udp_payload_cut_by_snaplen() {
        let r = rec(LinkType::LinuxSll, &SLL_V4_UDP[..46]);
        let p = decode(&r).unwrap();
        assert_eq!((p.ip_len, p.payload_len, p.payload_captured, p.truncated), (32, 4, 2, true));
        assert_eq!(p.payload(r.data), b"ab");
    }

    // SLL2 (protocol IPv4, ifindex 5, packet type 4 outgoing) + ICMP echo request
    // 198.18.0.2 -> 198.19.0.10, id 0x1234 seq 1, payload "ping".
    const SLL2_V4_ECHO: &[u8] = &[
        0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 0x04, 0x06, 0x02, 0, 0, 0, 0, 2, 0,
        0, // SLL2
        0x45, 0x00, 0x00, 0x20, 0xab, 0xcd, 0x40, 0x00, 0x40, 0x01, 0x00, 0x00, 198, 18, 0, 2, 198, 19, 0,
        10, // IPv4
        8, 0, 0, 0, 0x12, 0x34, 0x00, 0x01, b'p', b'i', b'n', b'g', // ICMP
    ];

    #[test]
    fn icmp_echo_request_over_sll2() {
        let r = rec(LinkType::LinuxSll2, SLL2_V4_ECHO);
        let p = decode(&r).unwrap();
        // `interface` stays the record's; the SLL2 ifindex has its own field.
        assert_eq!((p.interface, p.sll_ifindex, p.sll_packet_type), (3, Some(5), Some(4)));
        let i = icmp(&p);
        assert_eq!((i.v6, i.icmp_type, i.code), (false, 8, 0));
        assert_eq!(i.message, IcmpMessage::EchoRequest { id: 0x1234, seq: 1 });
        assert_eq!((p.payload_offset, p.payload_len), (48, 4));
        assert_eq!(p.payload(r.data), b"ping");
        assert_eq!(p.protocol(), ip_proto::ICMP);
    }

    // Null (AF_INET6 = 30, little-endian, macOS) + ICMPv6 echo reply
    // 2001:db8::2 -> 2001:db8::1, id 7 seq 9, no payload.
    const NULL_V6_ECHO_REPLY: &[u8] = &[
        30, 0, 0, 0, // family
        0x60, 0, 0, 0, 0x00, 0x08, 58, 64, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        129, 0, 0, 0, 0x00, 0x07, 0x00, 0x09,
    ];

    #[test]
    fn icmpv6_echo_reply_over_null() {
        let p = decode(&rec(LinkType::Null, NULL_V6_ECHO_REPLY)).unwrap();
        let i = icmp(&p);
        assert_eq!(
            (i.v6, i.icmp_type, i.message.clone()),
            (true, 129, IcmpMessage::EchoReply { id: 7, seq: 9 })
        );
        assert_eq!((p.payload_offset, p.payload_len, p.ip_len), (52, 0, 48));
        assert_eq!(p.protocol(), ip_proto::ICMPV6);
        // The same packet behind OpenBSD loop (big-endian AF_INET6 = 24).
        let mut bytes = NULL_V6_ECHO_REPLY.to_vec();
        bytes[..4].copy_from_slice(&[0, 0, 0, 24]);
        assert_eq!(decode(&rec(LinkType::Loop, &bytes)).unwrap().transport, p.transport);
    }

    // Raw IPv4 ICMP type 3 code 13 from 198.19.0.1 to 198.18.0.2, quoting the TCP
    // SYN 198.18.0.2:51514 -> 198.19.0.10:80 (IP ID 0x1c46, seq 0x12345678).
    const RAW_V4_ADMIN_PROHIBITED: &[u8] = &[
        0x45, 0xc0, 0x00, 0x38, 0x00, 0x01, 0x00, 0x00, 0x40, 0x01, 0x00, 0x00, 198, 19, 0, 1, 198, 18, 0,
        2, // IPv4
        3, 13, 0, 0, 0, 0, 0, 0, // ICMP
        0x45, 0x00, 0x00, 0x34, 0x1c, 0x46, 0x40, 0x00, 0x3f, 0x06, 0x00, 0x00, 198, 18, 0, 2, 198, 19, 0,
        10, // quoted IPv4
        0xc9, 0x3a, 0x00, 0x50, 0x12, 0x34, 0x56, 0x78, // quoted TCP, first 8 bytes
    ];

    #[test]
    fn admin_prohibited_is_attributed_to_the_quoted_syn() {
        let p = decode(&rec(LinkType::RawIp, RAW_V4_ADMIN_PROHIBITED)).unwrap();
        assert_eq!((p.src, p.dst, p.truncated), (addr("198.19.0.1"), addr("198.18.0.2"), false));
        let i = icmp(&p);
        assert_eq!((i.icmp_type, i.code), (3, 13));
        let IcmpMessage::Error(q) = &i.message else { panic!("{i:?}") };
        assert_eq!((q.src, q.dst, q.protocol), (addr("198.18.0.2"), addr("198.19.0.10"), 6));
        assert_eq!(
            (q.src_port, q.dst_port, q.tcp_seq, q.ip_id),
            (Some(51514), Some(80), Some(0x1234_5678), Some(0x1c46))
        );
        // The quote is the ICMP payload.
        assert_eq!((p.payload_offset, p.payload_len), (28, 28));
    }

    #[test]
    fn path_mtu_messages_give_their_mtu() {
        let mut frag = RAW_V4_ADMIN_PROHIBITED.to_vec();
        frag[21] = 4; // code 4: fragmentation needed
        frag[26..28].copy_from_slice(&1100u16.to_be_bytes());
        let p = decode(&rec(LinkType::RawIp, &frag)).unwrap();
        assert_eq!((icmp(&p).code, icmp(&p).mtu), (4, Some(1100)));
        assert!(matches!(icmp(&p).message, IcmpMessage::Error(_)), "still attributed by its quote");
        assert_eq!(icmp(&decode(&rec(LinkType::RawIp, RAW_V4_ADMIN_PROHIBITED)).unwrap()).mtu, None);
        let mut too_big = RAW_V6_PORT_UNREACHABLE.to_vec();
        too_big[40] = 2; // packet too big
        too_big[41] = 0;
        too_big[44..48].copy_from_slice(&1280u32.to_be_bytes());
        let p = decode(&rec(LinkType::RawIp, &too_big)).unwrap();
        assert_eq!((icmp(&p).icmp_type, icmp(&p).mtu), (2, Some(1280)));
        // Cut before the MTU field: none, never a panic.
        let p = decode(&rec(LinkType::RawIp, &frag[..24])).unwrap();
        assert_eq!(icmp(&p).mtu, None);
    }

    // Raw IPv6 ICMPv6 type 1 code 4 (port unreachable) 2001:db8::2 -> 2001:db8::1,
    // quoting UDP [2001:db8::1]:33434 -> [2001:db8::2]:53.
    const RAW_V6_PORT_UNREACHABLE: &[u8] = &[
        0x60, 0, 0, 0, 0x00, 0x38, 58, 64, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        1, 4, 0, 0, 0, 0, 0, 0, // ICMPv6
        0x60, 0, 0, 0, 0x00, 0x10, 17, 64, // quoted IPv6, payload length 16
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        0x82, 0x9a, 0x00, 0x35, 0x00, 0x10, 0x00, 0x00, // quoted UDP
    ];

    #[test]
    fn icmpv6_unreachable_quotes_udp() {
        let p = decode(&rec(LinkType::RawIp, RAW_V6_PORT_UNREACHABLE)).unwrap();
        let i = icmp(&p);
        assert_eq!((i.v6, i.icmp_type, i.code), (true, 1, 4));
        let IcmpMessage::Error(q) = &i.message else { panic!("{i:?}") };
        assert_eq!((q.src, q.dst, q.protocol), (addr("2001:db8::1"), addr("2001:db8::2"), 17));
        assert_eq!((q.src_port, q.dst_port, q.tcp_seq, q.ip_id), (Some(33434), Some(53), None, None));
    }

    // Raw IPv4 first fragment (MF, offset 0) of a UDP datagram 198.18.0.1:4000 ->
    // 198.18.0.2:5000, ID 0x0101, total length 36 of a 1008-byte datagram.
    const RAW_V4_FIRST_FRAGMENT: &[u8] = &[
        0x45, 0x00, 0x00, 0x24, 0x01, 0x01, 0x20, 0x00, 0x40, 0x11, 0x00, 0x00, 198, 18, 0, 1, 198, 18, 0,
        2, // IPv4, MF
        0x0f, 0xa0, 0x13, 0x88, 0x03, 0xf0, 0x00, 0x00, // UDP header, length 1008
        1, 2, 3, 4, 5, 6, 7, 8,
    ];

    #[test]
    fn first_ipv4_fragment_carries_udp_ports() {
        let p = decode(&rec(LinkType::RawIp, RAW_V4_FIRST_FRAGMENT)).unwrap();
        assert_eq!(p.fragment, Fragment::First);
        assert_eq!(p.transport, Transport::Udp(UdpInfo { src_port: 4000, dst_port: 5000 }));
        // Payload length is this fragment's, from the IP header.
        assert_eq!((p.ip_len, p.payload_offset, p.payload_len, p.truncated), (36, 28, 8, false));
    }

    #[test]
    fn later_ipv4_fragment_is_counted_not_parsed() {
        // The same datagram's fragment at offset 16 (×8 bytes), last one.
        let mut bytes = RAW_V4_FIRST_FRAGMENT.to_vec();
        bytes[6..8].copy_from_slice(&[0x00, 0x10]);
        let p = decode(&rec(LinkType::RawIp, &bytes)).unwrap();
        assert_eq!((p.fragment, p.transport.clone()), (Fragment::Later, Transport::Other { protocol: 17 }));
        assert_eq!((p.ip_id, p.payload_offset, p.payload_len), (Some(0x0101), 20, 16));
    }

    // Raw IPv6 with a fragment header (next 17, offset 0, M=1, id 0xdeadbeef)
    // then UDP [2001:db8::1]:4000 -> [2001:db8::2]:5000.
    const RAW_V6_FIRST_FRAGMENT: &[u8] = &[
        0x60, 0, 0, 0, 0x00, 0x18, 44, 64, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        17, 0, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, // fragment header
        0x0f, 0xa0, 0x13, 0x88, 0x05, 0xd0, 0x00, 0x00, // UDP
        1, 2, 3, 4, 5, 6, 7, 8,
    ];

    #[test]
    fn ipv6_fragment_header() {
        let p = decode(&rec(LinkType::RawIp, RAW_V6_FIRST_FRAGMENT)).unwrap();
        assert_eq!(p.fragment, Fragment::First);
        assert_eq!(p.transport, Transport::Udp(UdpInfo { src_port: 4000, dst_port: 5000 }));
        assert_eq!((p.ip_len, p.payload_offset, p.payload_len), (64, 56, 8));
        // Offset 2 (×8), last fragment: later, next header from the fragment header.
        let mut bytes = RAW_V6_FIRST_FRAGMENT.to_vec();
        bytes[42..44].copy_from_slice(&[0x00, 0x10]);
        let p = decode(&rec(LinkType::RawIp, &bytes)).unwrap();
        assert_eq!((p.fragment, p.transport.clone()), (Fragment::Later, Transport::Other { protocol: 17 }));
        assert_eq!((p.payload_offset, p.payload_len), (48, 16));
    }

    #[test]
    fn tcp_header_cut_short_still_gives_ports() {
        // The Ethernet SYN cut 8 bytes into TCP (snaplen 42).
        let p = decode(&rec(LinkType::Ethernet, &ETH_V4_SYN[..42])).unwrap();
        let t = tcp(&p);
        assert_eq!((t.src_port, t.dst_port, t.seq, t.mss), (51514, 80, 0x1234_5678, None));
        assert_eq!((p.truncated, p.ip_len, p.payload_captured), (true, 52, 0));
        // Cut inside the IP header: nothing usable.
        assert!(matches!(
            decode(&rec(LinkType::Ethernet, &ETH_V4_SYN[..30])),
            Err(DecodeError::Truncated { layer: "ip", .. })
        ));
    }

    #[test]
    fn ipv4_total_length_zero_uses_captured_length() {
        // TSO/GRO: the SYN with total length 0 and 100 payload bytes.
        let mut bytes = ETH_V4_SYN.to_vec();
        bytes[16..18].copy_from_slice(&[0, 0]);
        bytes.extend_from_slice(&[0x55; 100]);
        let p = decode(&rec(LinkType::Ethernet, &bytes)).unwrap();
        assert_eq!((p.ip_len, p.payload_len, p.payload_captured, p.truncated), (152, 100, 100, false));
    }

    #[test]
    fn tcp_bad_data_offset_keeps_ports_without_payload() {
        let mut bytes = ETH_V4_SYN.to_vec();
        bytes[46] = 0x20; // data offset 2 words
        let p = decode(&rec(LinkType::Ethernet, &bytes)).unwrap();
        let t = tcp(&p);
        assert_eq!((t.src_port, t.seq, t.mss), (51514, 0x1234_5678, None));
        assert_eq!((p.payload_len, p.payload_captured, p.truncated), (0, 0, true));
    }

    #[test]
    fn arp_is_not_ip_and_unknown_link_unsupported() {
        let arp = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1];
        assert_eq!(decode(&rec(LinkType::Ethernet, &arp)), Err(DecodeError::NotIp { ethertype: 0x0806 }));
        assert_eq!(decode(&rec(LinkType::Unknown(147), ETH_V4_SYN)), Err(DecodeError::UnsupportedLinkType));
    }

    #[test]
    fn every_prefix_of_every_sample_decodes_without_panic() {
        let samples: [(LinkType, &[u8]); 9] = [
            (LinkType::Ethernet, ETH_V4_SYN),
            (LinkType::RawIp, RAW_V6_SYN),
            (LinkType::LinuxSll, SLL_V4_UDP),
            (LinkType::LinuxSll2, SLL2_V4_ECHO),
            (LinkType::Null, NULL_V6_ECHO_REPLY),
            (LinkType::RawIp, RAW_V4_ADMIN_PROHIBITED),
            (LinkType::RawIp, RAW_V6_PORT_UNREACHABLE),
            (LinkType::RawIp, RAW_V4_FIRST_FRAGMENT),
            (LinkType::RawIp, RAW_V6_FIRST_FRAGMENT),
        ];
        for (lt, bytes) in samples {
            for end in 0..=bytes.len() {
                if let Ok(p) = decode(&rec(lt, &bytes[..end])) {
                    assert!(p.payload_captured <= p.payload_len, "{lt:?} cut at {end}: {p:?}");
                    assert!(p.truncated || end == bytes.len(), "{lt:?} cut at {end} not flagged: {p:?}");
                }
            }
        }
    }

    #[test]
    fn random_mutations_never_panic() {
        // xorshift64: deterministic, no dev-dependency.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let samples: [&[u8]; 6] = [
            ETH_V4_SYN,
            RAW_V6_SYN,
            SLL_V4_UDP,
            RAW_V4_ADMIN_PROHIBITED,
            RAW_V6_PORT_UNREACHABLE,
            RAW_V6_FIRST_FRAGMENT,
        ];
        let links = [
            LinkType::Ethernet,
            LinkType::RawIp,
            LinkType::LinuxSll,
            LinkType::LinuxSll2,
            LinkType::Null,
            LinkType::Loop,
            LinkType::Ppp,
            LinkType::PppHdlc,
            LinkType::CiscoHdlc,
            LinkType::Nflog,
        ];
        let mut buf = Vec::with_capacity(128);
        for round in 0..20_000u64 {
            let sample = samples[(round % 6) as usize];
            buf.clear();
            buf.extend_from_slice(sample);
            for _ in 0..(next() % 6) {
                let at = (next() as usize) % buf.len();
                buf[at] = next() as u8;
            }
            let end = (next() as usize) % (buf.len() + 1);
            let lt = links[(next() % links.len() as u64) as usize];
            if let Ok(p) = decode(&rec(lt, &buf[..end])) {
                assert!(p.payload_captured <= p.payload_len, "{lt:?} {:02x?}: {p:?}", &buf[..end]);
            }
        }
    }
}
