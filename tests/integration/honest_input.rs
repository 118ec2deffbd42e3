//! Issue 10 item 5, on the edge captures of `testdata/edge/` (`scripts/make-edge.py`,
//! and `nflog-tcpdump.pcap` from a real `tcpdump -i nflog:5`): link types that
//! carry plain IP (PPP, PPP in HDLC framing, Cisco HDLC, NFLOG) decode to the
//! addresses and ports tshark shows for the same files; a link type not decoded
//! is named by its registry name; odd versions and captured lengths above the
//! original length are warned about once; idle interfaces are not.

use crate::util::{read_file, testdata, Rec};
use tuplecorr::decode::{decode, DecodeError, Packet, Transport};
use tuplecorr::flows::FlowConfig;
use tuplecorr::inspect::{self, Inspection};
use tuplecorr::read::{CaptureInfo, LinkType, RawRecord};

fn edge(name: &str) -> (Vec<Rec>, CaptureInfo) {
    read_file(&testdata("edge").join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn decoded(name: &str) -> Vec<Result<Packet, DecodeError>> {
    let (recs, _) = edge(name);
    recs.iter()
        .map(|r| {
            decode(&RawRecord {
                ts_ns: r.ts_ns,
                interface: r.interface,
                link_type: r.link_type,
                data: &r.data,
                orig_len: r.orig_len,
                record: r.record,
                byte_offset: r.byte_offset,
            })
        })
        .collect()
}

/// "src:port > dst:port" of a TCP or UDP packet, as tshark's ip/ipv6 and
/// tcp/udp fields give it (plus the raw TCP sequence number).
fn tuple(p: &Packet) -> String {
    match &p.transport {
        Transport::Tcp(t) => format!("tcp {}:{} > {}:{} seq {}", p.src, t.src_port, p.dst, t.dst_port, t.seq),
        Transport::Udp(u) => format!("udp {}:{} > {}:{}", p.src, u.src_port, p.dst, u.dst_port),
        other => format!("{other:?}"),
    }
}

fn tuples(name: &str) -> Vec<String> {
    decoded(name)
        .iter()
        .map(|r| match r {
            Ok(p) => tuple(p),
            Err(e) => format!("error: {e}"),
        })
        .collect()
}

fn messages(info: &CaptureInfo) -> Vec<String> {
    info.warnings.iter().map(|w| w.message()).collect()
}

fn inspect_edge(name: &str) -> Inspection {
    let bytes = std::fs::read(testdata("edge").join(name)).unwrap();
    inspect::inspect_bytes(name, &bytes, &FlowConfig::default()).unwrap()
}

// Expected tuples below: `tshark -r testdata/edge/FILE -T fields -e ip.src
// -e ip.dst -e ipv6.src -e ipv6.dst -e tcp.srcport -e tcp.dstport -e tcp.seq_raw
// -e udp.srcport -e udp.dstport` (tshark 4.x).

#[test]
fn ppp_with_and_without_hdlc_address_and_with_a_compressed_protocol() {
    let (recs, info) = edge("ppp9.pcap");
    assert!(recs.iter().all(|r| r.link_type == LinkType::Ppp));
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    assert_eq!(
        tuples("ppp9.pcap"),
        [
            "tcp 198.18.90.42:51514 > 198.19.96.10:80 seq 305419896",
            "tcp 2001:db8::42:51517 > 2001:db8:1::10:443 seq 3000",
            "tcp 198.19.96.10:80 > 198.18.90.42:51514 seq 2596069104",
            "error: not IP (ethertype 0xc021)", // LCP
        ]
    );
}

#[test]
fn ppp_in_hdlc_framing() {
    assert_eq!(
        tuples("ppp-hdlc50.pcap"),
        [
            "tcp 198.18.90.42:51514 > 198.19.96.10:80 seq 305419896",
            "tcp 2001:db8::42:51517 > 2001:db8:1::10:443 seq 3000",
        ]
    );
    assert_eq!(edge("ppp-hdlc50.pcap").1.interfaces[0].link_type, LinkType::PppHdlc);
}

#[test]
fn cisco_hdlc_ipv4_ipv6_and_slarp() {
    assert_eq!(
        tuples("chdlc104.pcap"),
        [
            "tcp 198.18.90.42:51514 > 198.19.96.10:80 seq 305419896",
            "tcp 2001:db8::42:51517 > 2001:db8:1::10:443 seq 3000",
            "error: not IP (ethertype 0x8035)",
        ]
    );
}

#[test]
fn nflog_from_a_big_endian_host() {
    assert_eq!(
        tuples("nflog239-be.pcap"),
        [
            "tcp 198.18.90.42:51514 > 198.19.96.10:80 seq 305419896",
            "udp 2001:db8::42:40002 > 2001:db8:1::10:53"
        ]
    );
}

#[test]
fn nflog_as_tcpdump_writes_it() {
    let (recs, info) = edge("nflog-tcpdump.pcap");
    assert_eq!(recs.len(), 6);
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    let tcp = |seq: u32| format!("tcp 198.18.77.1:60390 > 198.18.77.1:8080 seq {seq}");
    assert_eq!(
        tuples("nflog-tcpdump.pcap"),
        [
            tcp(2371810987),
            tcp(2371810988),
            tcp(2371810988),
            tcp(2371811006),
            "udp 2001:db8:77::1:40573 > 2001:db8:77::1:5353".to_string(),
            tcp(2371811007),
        ]
    );
    let i = inspect_edge("nflog-tcpdump.pcap");
    assert_eq!((i.protocols.tcp, i.protocols.udp, i.undecodable, i.flows), (5, 1, 0, 2));
    assert_eq!((i.interfaces[0].link_type.as_str(), i.interfaces[0].link_type_number), ("nflog", 239));
}

#[test]
fn a_link_type_not_decoded_is_named_by_the_registry() {
    let (_, info) = edge("fddi10.pcap");
    assert_eq!(
        messages(&info),
        ["interface 0 has link type FDDI (10), not decoded; its 2 packets are skipped"]
    );
    let i = inspect_edge("fddi10.pcap");
    assert_eq!(
        (i.interfaces[0].link_type.as_str(), i.interfaces[0].link_type_number, i.interfaces[0].decoded),
        ("fddi", 10, false)
    );
    let mut table = Vec::new();
    inspect::write_table(std::slice::from_ref(&i), &mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains("  0  fddi (10), not decoded  "), "{table}");
    let mut json = Vec::new();
    inspect::write_json(&[i], &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v[0]["interfaces"][0]["link_type"], "fddi");
    assert_eq!(v[0]["interfaces"][0]["decoded"], false);
}

#[test]
fn interfaces_without_packets_are_not_warned_about() {
    let (recs, info) = edge("pcapng-idle-interfaces.pcapng");
    assert_eq!(recs.len(), 1);
    let links: Vec<String> = info.interfaces.iter().map(|i| i.link_type.name()).collect();
    assert_eq!(links, ["ethernet", "fddi", "ieee802_11"]);
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
}

#[test]
fn pcapng_minor_versions_are_read_with_one_warning() {
    let (recs, info) = edge("pcapng-version-1-1.pcapng");
    assert_eq!(recs.iter().map(|r| r.record).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(
        messages(&info),
        ["this section has pcapng version 1.1; the format defines only 1.0; read it, and any later such \
          section, as version 1.0"]
    );
    assert_eq!((info.warnings[0].record, info.warnings[0].byte_offset), (None, Some(0)));
}

#[test]
fn pcap_version_2_5_is_read_with_one_warning() {
    let (recs, info) = edge("pcap-version-2-5.pcap");
    assert_eq!(recs.len(), 2);
    assert_eq!(
        messages(&info),
        ["the file header says pcap version 2.5; tcpdump and libpcap write 2.4; read it as version 2.4"]
    );
    assert_eq!(info.warnings[0].byte_offset, Some(0));
}

#[test]
fn captured_longer_than_original_is_one_warning_at_the_first() {
    let (recs, info) = edge("caplen-over-orig.pcap");
    assert_eq!(
        recs.iter().map(|r| (r.data.len(), r.orig_len)).collect::<Vec<_>>(),
        [(58, 58), (58, 40), (83, 60)]
    );
    assert_eq!(
        messages(&info),
        ["2 records have more bytes captured than their original length (this is the first: 58 captured, \
          40 on the wire); read them as captured"]
    );
    // file header 24 + record header 16 + 58 bytes
    assert_eq!((info.warnings[0].record, info.warnings[0].byte_offset), (Some(2), Some(98)));

    let (recs, info) = edge("pcapng-caplen-over-orig.pcapng");
    assert_eq!(recs.len(), 1);
    assert_eq!(
        messages(&info),
        ["1 record has more bytes captured than its original length (58 captured, 14 on the wire); read it \
          as captured"]
    );
    // SHB 28 + IDB 20
    assert_eq!((info.warnings[0].record, info.warnings[0].byte_offset), (Some(1), Some(48)));
}

#[test]
fn a_later_section_of_another_major_version_is_skipped_in_plain_words() {
    let (recs, info) = edge("pcapng-later-version-2.pcapng");
    assert_eq!(recs.iter().map(|r| r.record).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(
        messages(&info),
        ["this section has pcapng version 2.0; only version 1 sections can be read; skipped its blocks up to \
          the next section header"]
    );
    // SHB 28 + IDB 20 + EPB 92 (58 data bytes padded to 60)
    assert_eq!(info.warnings[0].byte_offset, Some(140));
    assert!(info.warnings[0].to_string().ends_with(
        "pcapng-later-version-2.pcapng: byte 140: this section has pcapng version 2.0; only version 1 \
         sections can be read; skipped its blocks up to the next section header"
    ));
}
