//! Overlays and encrypted tunnels through `decode`, on hand-made packets.

use super::*;
use crate::read::{LinkType, RawRecord};
use std::net::IpAddr;

const OUTER_A: [u8; 4] = [198, 18, 1, 1];
const OUTER_B: [u8; 4] = [198, 18, 1, 2];
const CLIENT: [u8; 4] = [198, 18, 90, 42];
const SERVER: [u8; 4] = [198, 19, 96, 10];
const V6_A: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const V6_B: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn v4(protocol: u8, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let total = u16::try_from(20 + payload.len()).unwrap().to_be_bytes();
    let mut b = vec![0x45, 0, total[0], total[1], 0x12, 0x34, 0x40, 0, 64, protocol, 0, 0];
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    b.extend_from_slice(payload);
    b
}

fn v6(next: u8, src: [u8; 16], dst: [u8; 16], payload: &[u8]) -> Vec<u8> {
    let len = u16::try_from(payload.len()).unwrap().to_be_bytes();
    let mut b = vec![0x60, 0, 0, 0, len[0], len[1], next, 64];
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    b.extend_from_slice(payload);
    b
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut b = sport.to_be_bytes().to_vec();
    b.extend_from_slice(&dport.to_be_bytes());
    b.extend_from_slice(&u16::try_from(8 + payload.len()).unwrap().to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(payload);
    b
}

/// A TCP PSH-ACK 40001 -> 80, seq 0x01020304, carrying `data`.
fn tcp(data: &[u8]) -> Vec<u8> {
    let mut b = vec![0x9c, 0x41, 0, 80, 1, 2, 3, 4, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0];
    b.extend_from_slice(data);
    b
}

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    b.extend_from_slice(&ethertype.to_be_bytes());
    b.extend_from_slice(payload);
    b
}

fn vxlan(flags: u8, vni: u32, frame: &[u8]) -> Vec<u8> {
    let v = vni.to_be_bytes();
    let mut b = vec![flags, 0, 0, 0, v[1], v[2], v[3], 0];
    b.extend_from_slice(frame);
    b
}

fn geneve(version: u8, options: &[u8], protocol: u16, vni: u32, payload: &[u8]) -> Vec<u8> {
    let v = vni.to_be_bytes();
    let words = u8::try_from(options.len() / 4).unwrap();
    let p = protocol.to_be_bytes();
    let mut b = vec![(version << 6) | words, 0, p[0], p[1], v[1], v[2], v[3], 0];
    b.extend_from_slice(options);
    b.extend_from_slice(payload);
    b
}

fn gre(flags: u16, protocol: u16, key: Option<u32>, payload: &[u8]) -> Vec<u8> {
    let mut b = flags.to_be_bytes().to_vec();
    b.extend_from_slice(&protocol.to_be_bytes());
    if flags & 0x8000 != 0 {
        b.extend_from_slice(&[0xab, 0xcd, 0, 0]);
    }
    if let Some(k) = key {
        b.extend_from_slice(&k.to_be_bytes());
    }
    if flags & 0x1000 != 0 {
        b.extend_from_slice(&7u32.to_be_bytes());
    }
    b.extend_from_slice(payload);
    b
}

fn decode_eth(bytes: &[u8]) -> Packet {
    decode(&RawRecord {
        ts_ns: 1,
        interface: 0,
        link_type: LinkType::Ethernet,
        data: bytes,
        orig_len: u32::try_from(bytes.len()).unwrap(),
        record: 7,
        byte_offset: 24,
    })
    .unwrap()
}

/// The inner request: TCP 198.18.90.42:40001 -> 198.19.96.10:80 with "hello".
fn inner_v4() -> Vec<u8> {
    v4(6, CLIENT, SERVER, &tcp(b"hello"))
}

fn assert_inner(p: &Packet, bytes: &[u8], kind: OverlayKind, id: Option<u32>) {
    assert_eq!((p.src, p.dst), (IpAddr::from(CLIENT), IpAddr::from(SERVER)));
    match &p.transport {
        Transport::Tcp(t) => assert_eq!((t.src_port, t.dst_port, t.seq), (40001, 80, 0x0102_0304)),
        other => panic!("not TCP: {other:?}"),
    }
    assert_eq!(p.payload(bytes), b"hello");
    assert_eq!((p.payload_len, p.ip_len, p.truncated), (5, 45, false));
    assert_eq!(p.overlay, Some(Overlay { kind, id }));
    assert_eq!((p.overlay_depth, p.overlay_damage, p.encrypted), (1, None, None));
}

fn assert_outer_udp(p: &Packet, dport: u16) {
    assert_eq!((p.src, p.overlay, p.overlay_depth), (IpAddr::from(OUTER_A), None, 0));
    assert!(matches!(&p.transport, Transport::Udp(u) if u.dst_port == dport), "{:?}", p.transport);
}

#[test]
fn vxlan_on_both_ports_is_peeled_to_the_inner_flow() {
    for port in [4789, 8472] {
        let frame = eth(0x0800, &inner_v4());
        let mut bytes = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, port, &vxlan(0x08, 42, &frame))));
        // Ethernet padding after the outer packet is never inner payload.
        bytes.extend_from_slice(&[0; 6]);
        let p = decode_eth(&bytes);
        assert_inner(&p, &bytes, OverlayKind::Vxlan, Some(42));
    }
}

#[test]
fn udp_to_the_vxlan_port_that_is_not_vxlan_stays_as_it_is() {
    // No I flag: an application's own datagram on 4789.
    let frame = eth(0x0800, &inner_v4());
    let bytes = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, &vxlan(0x00, 42, &frame))));
    let p = decode_eth(&bytes);
    assert_outer_udp(&p, 4789);
    assert_eq!(p.overlay_damage, None);
    // Too short to be VXLAN.
    let bytes = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, b"hi")));
    assert_outer_udp(&decode_eth(&bytes), 4789);
    // I flag set, but what follows is no Ethernet frame we know: kept.
    let bytes =
        eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, &vxlan(0x08, 42, &eth(0x1234, &[0; 28])))));
    let p = decode_eth(&bytes);
    assert_outer_udp(&p, 4789);
    assert_eq!(p.overlay_damage, None);
}

#[test]
fn an_overlay_carrying_arp_is_not_an_ip_packet() {
    let record = |bytes: &[u8]| {
        decode(&RawRecord {
            ts_ns: 1,
            interface: 0,
            link_type: LinkType::Ethernet,
            data: bytes,
            orig_len: 0,
            record: 1,
            byte_offset: 0,
        })
    };
    let arp = eth(0x0806, &[0; 28]);
    let bytes = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, &vxlan(0x08, 42, &arp))));
    assert_eq!(record(&bytes), Err(DecodeError::NotIp { ethertype: 0x0806 }));
    let bytes = eth(0x0800, &v4(47, OUTER_A, OUTER_B, &gre(0x2000, 0x6558, Some(1), &eth(0x9000, &[0; 28]))));
    assert_eq!(record(&bytes), Err(DecodeError::NotIp { ethertype: 0x9000 }));
}

#[test]
fn vxlan_whose_inner_ip_header_is_cut_keeps_the_outer_packet_and_says_why() {
    let frame = eth(0x0800, &inner_v4()[..12]);
    let bytes = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, &vxlan(0x08, 42, &frame))));
    let p = decode_eth(&bytes);
    assert_outer_udp(&p, 4789);
    assert_eq!(p.overlay_damage.map(|d| d.kind), Some(OverlayKind::Vxlan));
}

#[test]
fn geneve_with_options_carrying_ethernet_or_ip() {
    let opts = [0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef];
    let bytes = eth(
        0x0800,
        &v4(17, OUTER_A, OUTER_B, &udp(51000, 6081, &geneve(0, &opts, 0x6558, 7, &eth(0x0800, &inner_v4())))),
    );
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Geneve, Some(7));
    let bytes =
        eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 6081, &geneve(0, &[], 0x0800, 9, &inner_v4()))));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Geneve, Some(9));
    // Version 1 is not Geneve as we know it: kept.
    let bytes =
        eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 6081, &geneve(1, &[], 0x0800, 9, &inner_v4()))));
    assert_outer_udp(&decode_eth(&bytes), 6081);
    // Options longer than the datagram: damaged.
    let bytes = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 6081, &[0x3f, 0, 0x08, 0, 0, 0, 9, 0])));
    let p = decode_eth(&bytes);
    assert_outer_udp(&p, 6081);
    assert_eq!(p.overlay_damage.map(|d| d.kind), Some(OverlayKind::Geneve));
}

#[test]
fn gre_plain_with_options_and_ethernet_bridging() {
    let bytes = eth(0x0800, &v4(47, OUTER_A, OUTER_B, &gre(0, 0x0800, None, &inner_v4())));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Gre, None);
    let bytes = eth(0x0800, &v4(47, OUTER_A, OUTER_B, &gre(0xb000, 0x0800, Some(0x0102_0304), &inner_v4())));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Gre, Some(0x0102_0304));
    let bytes =
        eth(0x0800, &v4(47, OUTER_A, OUTER_B, &gre(0x2000, 0x6558, Some(5), &eth(0x0800, &inner_v4()))));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::GreEthernet, Some(5));
    // GRE over IPv6 carrying the IPv4 request.
    let bytes = eth(0x86dd, &v6(47, V6_A, V6_B, &gre(0, 0x0800, None, &inner_v4())));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Gre, None);
}

#[test]
fn gre_that_is_not_peeled_or_damaged() {
    // PPTP's enhanced GRE (version 1) stays GRE.
    let bytes = eth(0x0800, &v4(47, OUTER_A, OUTER_B, &gre(0x3001, 0x880b, Some(0), &[0xff, 3, 0, 0x21])));
    let p = decode_eth(&bytes);
    assert_eq!((p.src, p.overlay, p.overlay_damage), (IpAddr::from(OUTER_A), None, None));
    assert_eq!(p.transport, Transport::Other { protocol: 47 });
    // Key flag set, header cut before the key.
    let bytes = eth(0x0800, &v4(47, OUTER_A, OUTER_B, &[0x20, 0, 0x08, 0, 0]));
    let p = decode_eth(&bytes);
    assert_eq!((p.src, p.overlay), (IpAddr::from(OUTER_A), None));
    assert_eq!(p.overlay_damage.map(|d| d.kind), Some(OverlayKind::Gre));
}

#[test]
fn ip_in_ip_all_four_combinations() {
    let bytes = eth(0x0800, &v4(4, OUTER_A, OUTER_B, &inner_v4()));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Ip4In4, None);
    let bytes = eth(0x86dd, &v6(4, V6_A, V6_B, &inner_v4()));
    assert_inner(&decode_eth(&bytes), &bytes, OverlayKind::Ip4In6, None);
    let inner6 = v6(17, V6_B, V6_A, &udp(5353, 53, b"q"));
    for (bytes, kind) in [
        (eth(0x0800, &v4(41, OUTER_A, OUTER_B, &inner6)), OverlayKind::Ip6In4),
        (eth(0x86dd, &v6(41, V6_A, V6_B, &inner6)), OverlayKind::Ip6In6),
    ] {
        let p = decode_eth(&bytes);
        assert_eq!((p.src, p.overlay.map(|o| o.kind)), (IpAddr::from(V6_B), Some(kind)));
        assert!(matches!(&p.transport, Transport::Udp(u) if u.dst_port == 53));
        assert_eq!(p.payload(&bytes), b"q");
    }
    // Protocol 4 carrying an IPv6 header: damaged, the outer packet stays.
    let bytes = eth(0x0800, &v4(4, OUTER_A, OUTER_B, &inner6));
    let p = decode_eth(&bytes);
    assert_eq!((p.src, p.overlay), (IpAddr::from(OUTER_A), None));
    assert_eq!(p.overlay_damage.map(|d| d.kind), Some(OverlayKind::Ip4In4));
}

#[test]
fn nesting_stops_after_three_layers_and_names_the_outermost() {
    let mut packet = inner_v4();
    for _ in 0..4 {
        packet = v4(4, OUTER_A, OUTER_B, &packet);
    }
    let vx =
        eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, &vxlan(0x08, 3, &eth(0x0800, &packet)))));
    let p = decode_eth(&vx);
    assert_eq!(p.overlay, Some(Overlay { kind: OverlayKind::Vxlan, id: Some(3) }));
    assert_eq!(p.overlay_depth, MAX_OVERLAY_DEPTH as u8);
    // Three layers peeled: VXLAN and two IP-in-IP; two IP-in-IP headers remain.
    assert_eq!((p.src, p.transport.clone()), (IpAddr::from(OUTER_A), Transport::Other { protocol: 4 }));
}

#[test]
fn every_cut_of_an_overlay_packet_decodes_without_panic() {
    let frame = eth(0x8100, &[0, 5, 0x08, 0x00].iter().copied().chain(inner_v4()).collect::<Vec<u8>>());
    let vx = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(51000, 4789, &vxlan(0x08, 42, &frame))));
    let gr = eth(0x0800, &v4(47, OUTER_A, OUTER_B, &gre(0xb000, 0x6558, Some(1), &frame)));
    let ge = eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(1, 6081, &geneve(0, &[0; 12], 0x6558, 1, &frame))));
    for bytes in [vx, gr, ge] {
        for cut in 0..=bytes.len() {
            let data = &bytes[..cut];
            let r = decode(&RawRecord {
                ts_ns: 1,
                interface: 0,
                link_type: LinkType::Ethernet,
                data,
                orig_len: u32::try_from(bytes.len()).unwrap(),
                record: 1,
                byte_offset: 0,
            });
            if let Ok(p) = r {
                // Peeled only when the whole inner IP header is there.
                if p.overlay.is_some() {
                    assert_eq!(p.src, IpAddr::from(CLIENT), "cut {cut}");
                    assert!(p.payload(data).len() <= 5);
                } else {
                    assert_eq!(p.src, IpAddr::from(OUTER_A), "cut {cut}");
                }
                // The whole packet is peeled.
                if cut == bytes.len() {
                    assert_eq!(p.payload(data), b"hello");
                }
            }
        }
    }
}

#[test]
fn encrypted_tunnels_are_recognised_by_shape() {
    let wg_data = [&[4u8, 0, 0, 0][..], &[0x11; 44]].concat();
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(40000, 51820, &wg_data))));
    assert_eq!(p.encrypted, Some(Encrypted::WireGuard));
    // WireGuard on another port, a handshake initiation (148 bytes).
    let init = [&[1u8, 0, 0, 0][..], &[0x22; 144]].concat();
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(40000, 443, &init))));
    assert_eq!(p.encrypted, Some(Encrypted::WireGuard));
    // Same first bytes, wrong length: not WireGuard (a DNS-like datagram).
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(40000, 443, &init[..100]))));
    assert_eq!(p.encrypted, None);
    let p = decode_eth(&eth(0x0800, &v4(50, OUTER_A, OUTER_B, &[0, 0, 1, 0, 0, 0, 0, 1, 0xaa, 0xbb])));
    assert_eq!(p.encrypted, Some(Encrypted::IpsecEsp));
    let esp = [0u8, 0, 1, 0, 0, 0, 0, 1, 0xaa, 0xbb, 0xcc, 0xdd];
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(4500, 4500, &esp))));
    assert_eq!(p.encrypted, Some(Encrypted::IpsecEsp));
    // SPI zero on 4500 is IKE: not ESP.
    let ike = [0u8, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66];
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(4500, 4500, &ike))));
    assert_eq!(p.encrypted, None);
    // OpenVPN P_DATA_V2 (opcode 9) on UDP 1194; opcode 0 is not one.
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(40000, 1194, &[0x48, 0, 0, 1, 9, 9]))));
    assert_eq!(p.encrypted, Some(Encrypted::OpenVpn));
    let p = decode_eth(&eth(0x0800, &v4(17, OUTER_A, OUTER_B, &udp(40000, 1194, &[0x00, 0, 0, 1, 9, 9]))));
    assert_eq!(p.encrypted, None);
    // A plaintext request is not encrypted.
    assert_eq!(decode_eth(&eth(0x0800, &inner_v4())).encrypted, None);
}
