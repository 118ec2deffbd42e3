//! Decode stage on real captures from the corpus (`TUPLECORR_CORPUS`: other
//! projects' test suites). Takes record bytes through pcap-file, not our read stage, so decode
//! is tested on its own; gives assertions on decoded fields whose expected
//! values were read with `tshark -T fields` / `tcpdump -nr -vv`. Never writes.

use crate::util::{corpus_dir, require_corpus};
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use std::fs::File;
use std::io::{BufReader, Read};
use std::net::IpAddr;
use tuplecorr::decode::{decode, DecodeError, Fragment, IcmpMessage, Packet, Transport, UdpInfo};
use tuplecorr::read::{LinkType, RawRecord};

/// One record as pcap-file gave it.
struct Rec {
    link_type: LinkType,
    interface: u32,
    data: Vec<u8>,
    orig_len: u32,
}

/// Every record pcap-file can read from `name`, and whether it stopped on an error.
fn read_records(path: &std::path::Path) -> (Vec<Rec>, bool) {
    let mut magic = [0u8; 4];
    let ok = File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok();
    if !ok {
        return (Vec::new(), true);
    }
    let file = BufReader::new(File::open(path).unwrap());
    let mut out = Vec::new();
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let Ok(mut reader) = PcapNgReader::new(file) else { return (out, true) };
        // Interfaces counted across sections, in file order.
        let mut section_base = 0usize;
        let mut links: Vec<LinkType> = Vec::new();
        while let Some(block) = reader.next_block() {
            let Ok(block) = block else { return (out, true) };
            let (iface, data, orig_len) = match block {
                Block::SectionHeader(_) => {
                    section_base = links.len();
                    continue;
                }
                Block::InterfaceDescription(idb) => {
                    links.push(LinkType::from_u32(u32::from(idb.linktype)));
                    continue;
                }
                Block::EnhancedPacket(epb) => {
                    (epb.interface_id as usize, epb.data.into_owned(), epb.original_len)
                }
                Block::SimplePacket(spb) => (0, spb.data.into_owned(), spb.original_len),
                Block::Packet(pb) => (usize::from(pb.interface_id), pb.data.into_owned(), pb.original_len),
                _ => continue,
            };
            let index = section_base + iface;
            let Some(&link_type) = links.get(index) else { return (out, true) };
            out.push(Rec { link_type, interface: index as u32, data, orig_len });
        }
        (out, false)
    } else {
        let Ok(mut reader) = PcapReader::new(file) else { return (out, true) };
        let link_type = LinkType::from_u32(u32::from(reader.header().datalink));
        // next_raw_packet: next_packet rejects records longer than the snaplen.
        while let Some(packet) = reader.next_raw_packet() {
            let Ok(packet) = packet else { return (out, true) };
            out.push(Rec {
                link_type,
                interface: 0,
                orig_len: packet.orig_len,
                data: packet.data.into_owned(),
            });
        }
        (out, false)
    }
}

/// Decodes every record of corpus file `name` (which must read cleanly).
fn decode_file(name: &str) -> Vec<Result<Packet, DecodeError>> {
    let (records, stopped) = read_records(&corpus_dir().join(name));
    assert!(!stopped, "{name}: pcap-file could not read every record");
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            decode(&RawRecord {
                ts_ns: 0,
                interface: r.interface,
                link_type: r.link_type,
                data: &r.data,
                orig_len: r.orig_len,
                record: i as u64 + 1,
                byte_offset: 0,
            })
        })
        .collect()
}

fn ok_all(name: &str) -> Vec<Packet> {
    decode_file(name)
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|e| panic!("{name} record {}: {e}", i + 1)))
        .collect()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// (src port, dst port, seq, ack, flags) of a TCP packet.
fn tcp(p: &Packet) -> (u16, u16, u32, u32, u8) {
    match &p.transport {
        Transport::Tcp(t) => (t.src_port, t.dst_port, t.seq, t.ack, t.flags),
        other => panic!("record {} is not TCP: {other:?}", p.record),
    }
}

fn mss(p: &Packet) -> Option<u16> {
    match &p.transport {
        Transport::Tcp(t) => t.mss,
        _ => None,
    }
}

fn icmp(p: &Packet) -> (bool, u8, u8, IcmpMessage) {
    match &p.transport {
        Transport::Icmp(i) => (i.v6, i.icmp_type, i.code, i.message.clone()),
        other => panic!("record {} is not ICMP: {other:?}", p.record),
    }
}

#[test]
fn sll2_tcp_gives_ifindex_packet_type_and_seq() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__sll2.pcap");
    assert_eq!(p.len(), 3);
    // tcpdump: "In ifindex 20 ... 116.63.66.108.443 > 7.249.151.114.57292: Flags [P.],
    // seq 2865673674:2865673705, ack 2813042623, length 31", id 34604, ttl 44, DF.
    assert_eq!((p[0].sll_ifindex, p[0].sll_packet_type, p[0].interface), (Some(20), Some(0), 0));
    assert_eq!((p[0].src, p[0].dst), (ip("116.63.66.108"), ip("7.249.151.114")));
    assert_eq!(tcp(&p[0]), (443, 57292, 2_865_673_674, 2_813_042_623, 0x18));
    assert_eq!((p[0].ip_id, p[0].ttl, p[0].dont_fragment, p[0].ip_len), (Some(34604), 44, true, 71));
    assert_eq!((p[0].payload_len, p[0].payload_captured, p[0].truncated), (31, 31, false));
    // Then two FIN-ACKs, seq 2865673705 (the second a retransmission).
    assert_eq!(tcp(&p[1]), (443, 57292, 2_865_673_705, 2_813_042_623, 0x11));
    assert_eq!(tcp(&p[2]), tcp(&p[1]));
    assert_eq!((p[1].ip_id, p[2].ip_id), (Some(34605), Some(34606)));
}

#[test]
fn sll2_icmp_and_icmpv6_echo_then_arp() {
    require_corpus!();
    let r = decode_file("zeek__linux_dlt_sll2.pcap");
    assert_eq!(r.len(), 6);
    let p: Vec<&Packet> = r[..4].iter().map(|x| x.as_ref().unwrap()).collect();
    // 192.0.2.1 > 192.0.2.1: ICMP echo request/reply, id 8, seq 1, length 64 on lo (ifindex 1).
    assert_eq!((p[0].src, p[0].sll_ifindex), (ip("192.0.2.1"), Some(1)));
    assert_eq!(icmp(p[0]), (false, 8, 0, IcmpMessage::EchoRequest { id: 8, seq: 1 }));
    assert_eq!(icmp(p[1]), (false, 0, 0, IcmpMessage::EchoReply { id: 8, seq: 1 }));
    // Echo payload is after the 8-byte echo header: 84 - 20 - 8.
    assert_eq!((p[0].payload_len, p[0].payload_captured), (56, 56));
    // fe80::8c36:6ff:fe44:acaf, ICMP6 echo request/reply id 9 seq 1, hlim 64.
    assert_eq!(p[2].src, ip("fe80::8c36:6ff:fe44:acaf"));
    assert_eq!(icmp(p[2]), (true, 128, 0, IcmpMessage::EchoRequest { id: 9, seq: 1 }));
    assert_eq!(icmp(p[3]), (true, 129, 0, IcmpMessage::EchoReply { id: 9, seq: 1 }));
    assert_eq!((p[2].ttl, p[2].ip_len, p[2].payload_len), (64, 104, 56));
    // ARP and Reverse ARP (outgoing, ifindex 26).
    assert_eq!(r[4], Err(DecodeError::NotIp { ethertype: 0x0806 }));
    assert_eq!(r[5], Err(DecodeError::NotIp { ethertype: 0x8035 }));
}

#[test]
fn null_loopback_ipv6_tcp() {
    require_corpus!();
    let p = ok_all("gopacket__pcap__test_loopback.pcap");
    assert_eq!(p.len(), 24);
    // Every record: family 30 (AF_INET6, macOS), ::1 <-> ::1 TCP 58799/58806 <-> 8080.
    assert!(p.iter().all(|x| x.src == ip("::1") && x.dst == ip("::1")));
    // Record 1: 58799 > 8080 [P.] seq 144119398, 484 bytes.
    assert_eq!(tcp(&p[0]), (58799, 8080, 144_119_398, tcp(&p[0]).3, 0x18));
    assert_eq!(p[0].payload_len, 484);
    // Record 17: the SYN 58806 > 8080, seq 1742949520, MSS 16324, hlim 64, payload length 44.
    assert_eq!(tcp(&p[16]).0, 58806);
    assert_eq!((tcp(&p[16]).2, tcp(&p[16]).4, mss(&p[16])), (1_742_949_520, 0x02, Some(16324)));
    assert_eq!((p[16].ttl, p[16].ip_len), (64, 84));
    let syns = p.iter().filter(|x| tcp(x).4 == 0x02).count();
    assert_eq!(syns, 1);
}

#[test]
fn null_loopback_both_families_and_an_ethertype_header() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__null_loopback.pcap");
    // AF_INET6 (30): ::1.49888 > ::1.81 [P.] seq 1482536582, 403 bytes.
    assert_eq!(tcp(&p[0]), (49888, 81, 1_482_536_582, 1_634_461_540, 0x18));
    assert_eq!(p[0].payload_len, 403);
    // AF_INET (2): 172.16.1.117.55369 > 172.16.1.255.8612 UDP, 16 bytes.
    assert_eq!(p[1].src, ip("172.16.1.117"));
    assert_eq!(p[1].transport, Transport::Udp(UdpInfo { src_port: 55369, dst_port: 8612 }));
    assert_eq!(p[1].payload_len, 16);
    // Header `0f 00 08 00`: tcpdump says family 251660288, Wireshark ethertype IPv4:
    // 10.0.0.138.53 > 10.0.0.1 (a DNS answer).
    assert_eq!((p[2].src, p[2].dst), (ip("10.0.0.138"), ip("10.0.0.1")));
    assert!(matches!(p[2].transport, Transport::Udp(UdpInfo { src_port: 53, .. })));
}

#[test]
fn raw_ip_mixes_ipv4_and_ipv6() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__raw_ip.pcap");
    // tshark: 100 records: 50 IPv6 TCP, 42 IPv4 TCP, 8 IPv4 UDP.
    assert_eq!(p.len(), 100);
    let v6_tcp = p.iter().filter(|x| x.src.is_ipv6() && matches!(x.transport, Transport::Tcp(_))).count();
    let v4_tcp = p.iter().filter(|x| x.src.is_ipv4() && matches!(x.transport, Transport::Tcp(_))).count();
    let v4_udp = p.iter().filter(|x| x.src.is_ipv4() && matches!(x.transport, Transport::Udp(_))).count();
    assert_eq!((v6_tcp, v4_tcp, v4_udp), (50, 42, 8));
    // Record 1: 2001:618:400::5199:cc70.35995 > 2001:618:1:8000::5.80 SYN seq 1793525558, mss 1420.
    assert_eq!(tcp(&p[0]), (35995, 80, 1_793_525_558, 0, 0x02));
    assert_eq!(mss(&p[0]), Some(1420));
    // Record 51: 10.0.0.1.55145 > 10.0.0.138.53 UDP, IP ID 0x21c0, TTL 128.
    assert_eq!((p[50].src, p[50].ip_id, p[50].ttl), (ip("10.0.0.1"), Some(0x21c0), 128));
    assert_eq!(p[50].transport, Transport::Udp(UdpInfo { src_port: 55145, dst_port: 53 }));
    // Record 53: 10.0.0.1.55469 > 82.102.152.19.80 SYN seq 4059498775, IP ID 0x4434.
    assert_eq!(tcp(&p[52]), (55469, 80, 4_059_498_775, 0, 0x02));
    assert_eq!(p[52].ip_id, Some(0x4434));
}

#[test]
fn dlt_12_raw_ipv6_http_streams() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__four_ipv6_http_streams.pcap");
    // tshark: 81 IPv6 TCP records: 4 SYN, 4 SYN-ACK, 49 ACK, 24 PSH-ACK; 46 to port 80.
    assert_eq!(p.len(), 81);
    let flags = |f: u8| p.iter().filter(|x| tcp(x).4 == f).count();
    assert_eq!((flags(0x02), flags(0x12), flags(0x10), flags(0x18)), (4, 4, 49, 24));
    assert_eq!(p.iter().filter(|x| tcp(x).1 == 80).count(), 46);
    assert_eq!((p[0].src, p[0].dst), (ip("2001:618:400::5199:cc70"), ip("2001:618:1:8000::5")));
    assert_eq!((tcp(&p[0]), mss(&p[0]), p[0].ttl), ((35995, 80, 1_793_525_558, 0, 0x02), Some(1420), 64));
}

#[test]
fn linktype_ipv4_and_ipv6() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__linktype_ipv4.pcap");
    // 10.0.0.1.58121 > 10.0.0.138.53, ttl 128, id 8655, length 60; reply ttl 64, id 0, DF, length 150.
    assert_eq!(
        (p[0].src, p[0].dst, p[0].ttl, p[0].ip_id, p[0].ip_len),
        (ip("10.0.0.1"), ip("10.0.0.138"), 128, Some(8655), 60)
    );
    assert_eq!(p[0].transport, Transport::Udp(UdpInfo { src_port: 58121, dst_port: 53 }));
    assert_eq!((p[0].payload_len, p[1].ip_id, p[1].dont_fragment, p[1].ip_len), (32, Some(0), true, 150));
    let p = ok_all("pcpp__Pcap++Test__linktype_ipv6.pcap");
    // 2001:618:400::5199:cc70.35995 > 2001:618:1:8000::5.80 SYN seq 1793525558, mss 1420.
    assert_eq!((tcp(&p[0]), mss(&p[0]), p[0].ip_len), ((35995, 80, 1_793_525_558, 0, 0x02), Some(1420), 80));
}

#[test]
fn linktype_ipv4_carrying_ipv6_trusts_the_version_nibble() {
    require_corpus!();
    let p = ok_all("tcpdump__LINKTYPE_IPV4_invalid.pcap");
    // 2001:db8::1.12345 > 2620:fe::9.53 UDP, hlim 64, UDP length 37.
    assert_eq!((p[0].src, p[0].dst, p[0].ttl), (ip("2001:db8::1"), ip("2620:fe::9"), 64));
    assert_eq!(p[0].transport, Transport::Udp(UdpInfo { src_port: 12345, dst_port: 53 }));
    assert_eq!(p[0].payload_len, 29);
}

#[test]
fn qinq_arp_is_not_ip() {
    require_corpus!();
    // 802.1ad vlan 200, 802.1Q vlan 2001, ARP request and reply.
    let r = decode_file("tcpdump__802.1ad_QinQ.pcap");
    assert_eq!(r, vec![Err(DecodeError::NotIp { ethertype: 0x0806 }); 2]);
}

#[test]
fn double_tagged_icmp_and_cdp() {
    require_corpus!();
    let r = decode_file("pcpp__Pcap++Test__VlanPackets.pcap");
    assert_eq!(r.len(), 26);
    // 20 ICMP echo packets behind two 802.1Q tags (118/10 and 209/20).
    let ok: Vec<&Packet> = r.iter().filter_map(|x| x.as_ref().ok()).collect();
    assert_eq!(ok.len(), 20);
    assert_eq!((ok[0].src, ok[0].dst), (ip("10.118.10.1"), ip("10.118.10.2")));
    assert_eq!(icmp(ok[0]), (false, 8, 0, IcmpMessage::EchoRequest { id: 3, seq: 0 }));
    assert_eq!(icmp(ok[1]).3, IcmpMessage::EchoReply { id: 3, seq: 0 });
    assert_eq!(ok.iter().filter(|x| x.src == ip("10.209.20.3")).count(), 5);
    // 6 CDP frames (802.3 length field, some VLAN-tagged): not IP.
    assert_eq!(r.iter().filter(|x| matches!(x, Err(DecodeError::NotIp { .. }))).count(), 6);
}

#[test]
fn ipv4_fragments_first_carries_ports_later_counted() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__ip4_fragments.pcap");
    // tshark (no reassembly): 53 UDP records: 9 first fragments (from port 789),
    // 41 later ones, 3 unfragmented (from port 2049).
    assert_eq!(p.len(), 53);
    let count = |f: Fragment| p.iter().filter(|x| x.fragment == f).count();
    assert_eq!((count(Fragment::First), count(Fragment::Later), count(Fragment::None)), (9, 41, 3));
    // Record 1: id 0x1ea0, 10.118.213.212.789 > 10.118.213.211.2049, MF, offset 0, length 1500.
    assert_eq!((p[0].fragment, p[0].ip_id, p[0].ip_len), (Fragment::First, Some(0x1ea0), 1500));
    assert_eq!(p[0].transport, Transport::Udp(UdpInfo { src_port: 789, dst_port: 2049 }));
    assert_eq!(p[0].payload_len, 1472);
    // Record 2: offset 185 of the same datagram.
    assert_eq!((p[1].fragment, p[1].transport.clone()), (Fragment::Later, Transport::Other { protocol: 17 }));
    assert_eq!(p[1].payload_len, 1480);
    // Record 6: the last fragment (offset 925, no MF), length 940.
    assert_eq!((p[5].fragment, p[5].ip_len), (Fragment::Later, 940));
}

#[test]
fn ipv6_fragments_first_carries_ports_later_counted() {
    require_corpus!();
    let p = ok_all("pcpp__Pcap++Test__ip6_fragments.pcap");
    // tcpdump: 36 records, all fragments; 4 at offset 0: two mDNS 5353 > 5353
    // from fe80::21f:f3ff:fecd:f617 to ff02::fb, two WS-Discovery 60245 > 3702.
    assert_eq!(p.len(), 36);
    let first: Vec<&Packet> = p.iter().filter(|x| x.fragment == Fragment::First).collect();
    assert_eq!((first.len(), p.iter().filter(|x| x.fragment == Fragment::Later).count()), (4, 32));
    assert_eq!((first[0].src, first[0].dst), (ip("fe80::21f:f3ff:fecd:f617"), ip("ff02::fb")));
    assert_eq!(first[0].transport, Transport::Udp(UdpInfo { src_port: 5353, dst_port: 5353 }));
    assert_eq!(first[2].transport, Transport::Udp(UdpInfo { src_port: 60245, dst_port: 3702 }));
    assert!(p
        .iter()
        .all(|x| x.fragment != Fragment::Later || x.transport == Transport::Other { protocol: 17 }));
}

#[test]
fn sll_handshake_seq_and_ack() {
    require_corpus!();
    let p = ok_all("tcpdump__tcp-handshake-nano.pcap");
    // 131.155.215.69.46656 > 137.116.81.94.80 [S] seq 797190859, mss 1360, win 27200, Out (4).
    assert_eq!(tcp(&p[0]), (46656, 80, 797_190_859, 0, 0x02));
    assert_eq!(
        (mss(&p[0]), p[0].sll_packet_type, p[0].ip_id, p[0].ttl),
        (Some(1360), Some(4), Some(10665), 64)
    );
    // [S.] seq 3078856592 ack 797190860, mss 1440, ttl 117, In (0).
    assert_eq!(tcp(&p[1]), (80, 46656, 3_078_856_592, 797_190_860, 0x12));
    assert_eq!((mss(&p[1]), p[1].sll_packet_type, p[1].ttl), (Some(1440), Some(0), 117));
    // [.] seq 797190860 ack 3078856593.
    assert_eq!(tcp(&p[2]), (46656, 80, 797_190_860, 3_078_856_593, 0x10));
    assert_eq!((p[2].ip_len, p[2].payload_offset, p[2].payload_len), (52, 16 + 52, 0));
}

#[test]
fn tcp_header_longer_than_the_segment_keeps_ports() {
    require_corpus!();
    let p = ok_all("pcpp__Packet++Test__tcp-malformed.pcap");
    // tcpdump: 172.19.42.74.49671 > 87.240.131.240.25014 [.] "bad hdr length 28 - too long, > 20".
    for x in &p {
        let (sport, dport, _, _, flags) = tcp(x);
        assert_eq!((sport, dport, flags & 0x10), (49671, 25014, 0x10));
        assert_eq!((x.payload_len, x.payload_captured, x.truncated), (0, 0, true));
    }
}

#[test]
fn ip_header_cut_by_snaplen_is_an_error() {
    require_corpus!();
    // 20 bytes captured of 46: Ethernet + 6 bytes of IPv4 ("[|ip]").
    let r = decode_file("zeek__trunc__ip4-trunc.pcap");
    assert_eq!(r, vec![Err(DecodeError::Truncated { layer: "ip", needed: 20, available: 6 })]);
}

#[test]
fn ipv6_fragment_with_zero_payload_length() {
    require_corpus!();
    let p = ok_all("tcpdump__ipv6_frag6_negative_len.pcap");
    // Payload length 0, 70 bytes captured: IPv6 + fragment header (next header 2,
    // offset 1280 bytes) + 8 bytes. A later fragment; lengths from the capture.
    assert_eq!((p[0].fragment, p[0].transport.clone()), (Fragment::Later, Transport::Other { protocol: 2 }));
    assert_eq!((p[0].ttl, p[0].ip_len, p[0].payload_offset, p[0].payload_len), (28, 56, 62, 8));
}

#[test]
fn every_corpus_record_decodes_without_panic() {
    require_corpus!();
    let mut files = 0;
    let mut decoded = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) {
            continue;
        }
        files += 1;
        // pcap-file stops at the first damage; what it read before is decoded.
        let (records, _) = read_records(&path);
        for (i, r) in records.iter().enumerate() {
            let result = decode(&RawRecord {
                ts_ns: 0,
                interface: r.interface,
                link_type: r.link_type,
                data: &r.data,
                orig_len: r.orig_len,
                record: i as u64 + 1,
                byte_offset: 0,
            });
            if let Ok(p) = result {
                assert!(p.payload_captured <= p.payload_len, "{name} record {}: {p:?}", i + 1);
                assert!(p.payload(&r.data).len() == p.payload_captured as usize, "{name} record {}", i + 1);
                decoded += 1;
            }
        }
    }
    eprintln!("corpus: {files} files, {decoded} records decoded");
    assert!(files >= 50, "only {files} capture files in the corpus");
    assert!(decoded > 1000, "only {decoded} records decoded");
}
