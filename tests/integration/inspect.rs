//! `tuplecorr inspect` (issue 2) on real captures: every file of the corpus
//! inspected without panic and counted like capinfos; protocol counts, interfaces
//! and time ranges checked against tshark / tcpdump output written down below; a
//! truncated edge capture's warning; and the built binary's JSON and exit status.
//! Takes the corpus (`TUPLECORR_CORPUS`) and `testdata/edge/`; never writes files.

use crate::util::{corpus_dir, require_corpus, spec, testdata};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use tuplecorr::flows::FlowConfig;
use tuplecorr::inspect::{self, Inspection, Protocols};
use tuplecorr::read::NoProgress;

fn inspect_path(path: &Path) -> Inspection {
    inspect::inspect_capture(&spec(path), 0, &FlowConfig::default(), &NoProgress)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn corpus(name: &str) -> Inspection {
    inspect_path(&corpus_dir().join(name))
}

/// (file, packets_capinfos) of every row of the corpus index.
fn corpus_counts() -> Vec<(String, Option<u64>)> {
    let text = std::fs::read_to_string(corpus_dir().join("index.tsv")).expect("index.tsv readable");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("index.tsv has a header").split('\t').collect();
    let col =
        |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (file, packets) = (col("file"), col("packets_capinfos"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[file].to_string(), f.get(packets).and_then(|p| p.parse().ok()))
        })
        .collect()
}

/// Corpus files whose file header is unusable: inspect gives a `ReadError`
/// (tests/integration/read.rs says why for each).
const BAD_HEADER: &[&str] = &[
    "libpcap__pcap-invalid-version-1.pcap",
    "libpcap__pcapng-invalid-vers-1.pcapng",
    "libpcap__shb-option-too-long.pcapng",
];

/// Facts that hold for every inspection, whatever the file.
fn assert_consistent(name: &str, i: &Inspection) {
    let p = &i.protocols;
    assert_eq!(
        p.tcp + p.udp + p.icmp + p.icmpv6 + p.other_ip + p.fragments + i.undecodable,
        i.packets,
        "{name}: protocol counts plus undecodable must cover every packet: {i:#?}"
    );
    assert_eq!(p.ipv4 + p.ipv6 + i.undecodable, i.packets, "{name}: IP versions");
    assert!(p.non_ip <= i.undecodable, "{name}");
    let by_kind: u64 = i.undecodable_by_kind.iter().map(|k| k.packets).sum();
    assert_eq!(by_kind, i.undecodable, "{name}: undecodable by kind");
    let per_interface: u64 = i.interfaces.iter().map(|f| f.packets).sum();
    assert_eq!(per_interface, i.packets, "{name}: interface packets");
    assert!(i.truncated <= i.packets - i.undecodable, "{name}");
    assert_eq!(i.first_time.is_some(), i.packets > 0, "{name}");
    if let (Some(a), Some(b)) = (&i.first_time, &i.last_time) {
        assert!(a <= b, "{name}: {a} after {b}");
    }
    assert!(i.top_flows.len() <= inspect::TOP_FLOWS && i.top_flows.len() as u64 <= i.flows, "{name}");
    assert!(i.top_flows.windows(2).all(|w| w[0].packets >= w[1].packets), "{name}: busiest first");
    for w in &i.warnings {
        assert!(!w.message.is_empty(), "{name}");
    }
}

#[test]
fn every_corpus_file_is_inspected_and_counted_like_capinfos() {
    require_corpus!();
    let rows = corpus_counts();
    assert!(rows.len() >= 50, "corpus index has only {} rows", rows.len());
    let mut compared = 0;
    for (file, capinfos) in &rows {
        let path = corpus_dir().join(file);
        assert!(path.is_file(), "{} is listed in index.tsv but missing", path.display());
        let result = inspect::inspect_capture(&spec(&path), 0, &FlowConfig::default(), &NoProgress);
        if BAD_HEADER.contains(&file.as_str()) {
            assert!(result.is_err(), "{file}: wanted an error");
            continue;
        }
        let i = result.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_consistent(file, &i);
        if let Some(n) = capinfos {
            assert_eq!(i.packets, *n, "{file}: packets vs capinfos");
            compared += 1;
        }
        // The JSON form of every capture serialises.
        let mut out = Vec::new();
        inspect::write_json(std::slice::from_ref(&i), &mut out).unwrap();
        let back: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(back[0]["packets"], i.packets, "{file}");
    }
    assert!(compared >= 45, "only {compared} files had a capinfos count");
}

#[test]
fn many_protocols_counts_match_tshark_protocol_hierarchy() {
    require_corpus!();
    // tshark -r pcpp__ExamplesTest__many-protocols.pcap -qz io,phs:
    //   eth 4709; ip 4663 (+20 under vlan/vlan); ipv6 16; tcp 4321; udp 253 + 16 (ipv6);
    //   icmp 89 + 20 (under vlan/vlan); not IP: vlan/llc/cdp 4 + llc/cdp 2 + arp 4.
    let i = corpus("pcpp__ExamplesTest__many-protocols.pcap");
    assert_eq!(i.packets, 4709);
    assert_eq!(
        i.protocols,
        Protocols {
            tcp: 4321,
            udp: 269,
            icmp: 109,
            icmpv6: 0,
            other_ip: 0,
            fragments: 0,
            non_ip: 10,
            ipv4: 4683,
            ipv6: 16
        }
    );
    assert_eq!(i.undecodable, 10);
    assert_eq!(i.undecodable_by_kind.len(), 1);
    assert_eq!((i.undecodable_by_kind[0].kind.as_str(), i.undecodable_by_kind[0].packets), ("not-ip", 10));
    // tcpdump -nr ... | grep -c '10.0.0.1.55291 > 54.192.94.30.80\|54.192.94.30.80 > 10.0.0.1.55291': 566
    assert_eq!(i.top_flows[0].flow, "10.0.0.1:55291 -> 54.192.94.30:80");
    assert_eq!(i.top_flows[0].packets, 566);
    assert_eq!(i.top_flows.len(), 10);
}

#[test]
fn ipv4_fragments_count_later_fragments_apart_from_udp() {
    require_corpus!();
    // tshark -o ip.defragment:FALSE -r pcpp__Pcap++Test__ip4_fragments.pcap -qz io,phs:
    //   ip 53; udp 12 (9 of them first fragments of NFS datagrams); data 41.
    // tshark -Y "ip.frag_offset>0" | wc -l: 41 later fragments.
    let i = corpus("pcpp__Pcap++Test__ip4_fragments.pcap");
    assert_eq!(i.packets, 53);
    assert_eq!(i.protocols, Protocols { udp: 12, fragments: 41, ipv4: 53, ..Protocols::default() });
    assert_eq!(i.undecodable, 0);
}

#[test]
fn pcapng_example_has_ethernet_ns_and_sll_us_interfaces() {
    require_corpus!();
    // capinfos / tshark: interface 0 LINKTYPE_ETHERNET, if_tsresol 9 (ns), snaplen
    // 262144, name "lo", 59 packets; interface 1 LINUX_SLL, µs, snaplen 0, 100
    // packets. tshark -qz io,phs: tcp 59 + 96 (ip) + 4 (ipv6) = 159.
    // tshark -Y "frame.cap_len < frame.len" | wc -l: 39 cut by the snaplen.
    let i = corpus("pcpp__Pcap++Test__pcapng-example.pcapng");
    assert_eq!((i.format.as_str(), i.byte_order.as_str(), i.gzip), ("pcapng", "little-endian", false));
    assert_eq!(i.interfaces.len(), 2);
    let (a, b) = (&i.interfaces[0], &i.interfaces[1]);
    assert_eq!(
        (a.link_type.as_str(), a.link_type_number, a.snaplen, a.ts_resolution.as_str(), a.packets),
        ("ethernet", 1, 262144, "ns", 59)
    );
    assert_eq!(a.name.as_deref(), Some("lo"));
    assert_eq!(
        (b.link_type.as_str(), b.link_type_number, b.snaplen, b.ts_resolution.as_str(), b.packets),
        ("sll", 113, 0, "us", 100)
    );
    assert_eq!(i.ts_resolution.as_deref(), Some("ns, us"));
    assert_eq!(i.packets, 159);
    assert_eq!((i.protocols.tcp, i.protocols.ipv4, i.protocols.ipv6), (159, 155, 4));
    assert_eq!(i.truncated, 39);
    assert_eq!(i.first_time.as_deref(), Some("2015-01-29T10:39:58.578402281Z"));
}

#[test]
fn zeek_multi_interface_has_two_ethernet_interfaces_with_ns_and_us() {
    require_corpus!();
    // tshark -T fields -e frame.interface_id -e frame.time_epoch -e frame.protocols:
    //   0 1767663089.500330493 ... 0 1767663089.514291940 (ns), then 1 1767663437.111897000
    //   ... 1 1767663437.140942000 (µs); every frame eth:ethertype:ip:udp:dns.
    let i = corpus("zeek__pcapng-multi-interface.pcapng");
    let got: Vec<(&str, u32, &str, u64)> = i
        .interfaces
        .iter()
        .map(|f| (f.link_type.as_str(), f.snaplen, f.ts_resolution.as_str(), f.packets))
        .collect();
    assert_eq!(got, [("ethernet", 262144, "ns", 2), ("ethernet", 262144, "us", 4)]);
    // tshark -T fields -e frame.interface_name: eth0 (2), \Device\NPF_{5AE6...} (4).
    assert_eq!(i.interfaces[0].name.as_deref(), Some("eth0"));
    assert_eq!(i.interfaces[1].name.as_deref(), Some("\\Device\\NPF_{5AE6EDB4-EFF9-46B3-A3C2-EE50C688A9E6}"));
    assert_eq!(i.protocols, Protocols { udp: 6, ipv4: 6, ..Protocols::default() });
    assert_eq!(i.first_time.as_deref(), Some("2026-01-06T01:31:29.500330493Z"));
    assert_eq!(i.last_time.as_deref(), Some("2026-01-06T01:37:17.140942000Z"));
}

#[test]
fn tcp_handshake_nano_time_range_to_the_nanosecond() {
    require_corpus!();
    // tshark -T fields -e frame.time_epoch: 1418145369.924505488, 1418145370.052027262,
    // 1418145370.052115157 (date -u -d @1418145369: 2014-12-09T17:16:09).
    let i = corpus("tcpdump__tcp-handshake-nano.pcap");
    assert_eq!(i.packets, 3);
    assert_eq!(i.first_time.as_deref(), Some("2014-12-09T17:16:09.924505488Z"));
    assert_eq!(i.last_time.as_deref(), Some("2014-12-09T17:16:10.052115157Z"));
    assert_eq!(i.duration_s, Some(0.127609669));
    assert_eq!(i.ts_resolution.as_deref(), Some("ns"));
    assert_eq!(i.interfaces[0].link_type, "sll");
    assert_eq!(i.protocols, Protocols { tcp: 3, ipv4: 3, ..Protocols::default() });
    assert_eq!((i.flows, i.top_flows[0].packets), (1, 3));
}

#[test]
fn truncated_last_record_is_warned_with_record_and_byte_offset() {
    // testdata/edge/index.tsv: last record cut 20 bytes short (tcpdump killed mid-write).
    let i = inspect_path(&testdata("edge/truncated-last-record.pcap"));
    assert_eq!(i.packets, 2);
    assert_eq!(i.warnings.len(), 1);
    let w = &i.warnings[0];
    assert_eq!((w.record, w.byte_offset), (Some(3), Some(172)));
    assert_eq!(
        w.message,
        "record is cut short: its header says 83 bytes, the file ends after 63 (tcpdump stopped mid-write?); \
         dropped it, kept the 2 records before it"
    );
    assert_eq!(w.label, "truncated-last-record.pcap");
    let mut out = Vec::new();
    inspect::write_table(&[i], &mut out).unwrap();
    let table = String::from_utf8(out).unwrap();
    assert!(
        table.contains("             record 3 at byte 172: record is cut short: its header says 83 bytes"),
        "{table}"
    );
}

#[test]
fn gzip_capture_is_described_like_the_plain_file() {
    let plain = inspect_path(&testdata("edge/eth-ipv4-tcp.pcap"));
    let gz = inspect_path(&testdata("edge/eth-ipv4-tcp.pcap.gz"));
    assert!(gz.gzip && !plain.gzip);
    assert_eq!(
        (gz.packets, &gz.protocols, &gz.top_flows),
        (plain.packets, &plain.protocols, &plain.top_flows)
    );
    assert_eq!((gz.first_time, gz.last_time), (plain.first_time, plain.last_time));
}

// ---------------------------------------------------------------------------
// The built binary.

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(args).output().expect("the tuplecorr binary runs")
}

fn path_str(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}

#[test]
fn binary_json_parses_back_with_every_contract_field() {
    require_corpus!();
    let a = path_str(&corpus_dir().join("pcpp__Pcap++Test__pcapng-example.pcapng"));
    let b = path_str(&testdata("edge/truncated-last-record.pcap"));
    let out = run(&["inspect", "--quiet", "--format", "json", &a, &format!("cut={b}")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "warnings still exit 0; stderr: {stderr}");
    assert!(
        stderr.contains(&format!("tuplecorr: warning: {b} (cut): record 3 at byte 172: record is cut short")),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let arr = v.as_array().expect("an array");
    assert_eq!(arr.len(), 2);
    for c in arr {
        for key in [
            "label",
            "file",
            "format",
            "byte_order",
            "gzip",
            "packets",
            "interfaces",
            "first_time",
            "last_time",
            "protocols",
            "truncated",
            "undecodable",
            "undecodable_by_kind",
            "flows",
            "top_flows",
            "warnings",
        ] {
            assert!(c.get(key).is_some(), "missing {key} in {c}");
        }
    }
    let e = &arr[0];
    assert_eq!((e["file"].as_str(), e["format"].as_str()), (Some(a.as_str()), Some("pcapng")));
    assert_eq!((e["byte_order"].as_str(), e["packets"].as_u64()), (Some("little-endian"), Some(159)));
    assert_eq!(e["interfaces"][1]["link_type"], "sll");
    assert_eq!(e["interfaces"][1]["ts_resolution"], "us");
    assert_eq!(e["interfaces"][1]["snaplen"], 0);
    assert_eq!(e["interfaces"][0]["packets"], 59);
    assert_eq!(e["protocols"]["tcp"], 159);
    assert_eq!(e["truncated"], 39);
    assert_eq!(e["undecodable"], 0);
    assert_eq!(e["top_flows"][0]["flow"], "127.0.0.1:40304 -> 127.0.0.1:3306");
    assert_eq!(e["top_flows"][0]["packets"], 59);
    let cut = &arr[1];
    assert_eq!(cut["label"], "cut");
    assert_eq!(cut["first_time"], "2026-11-29T23:40:38.000000000Z");
    let w = &cut["warnings"][0];
    assert_eq!(
        (w["label"].as_str(), w["record"].as_u64(), w["byte_offset"].as_u64()),
        (Some("cut"), Some(3), Some(172))
    );
    assert!(w["message"].as_str().unwrap().starts_with("record is cut short"), "{w}");
}

#[test]
fn binary_not_a_capture_exits_2_and_still_reports_the_others() {
    let good = path_str(&testdata("edge/eth-ipv4-tcp.pcap"));
    let bad = path_str(&testdata("edge/not-a-capture.txt"));
    let out = run(&["inspect", "-q", "--format", "json", &bad, &good]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "tuplecorr: error: {bad}: not a pcap, pcapng or gzip file: expected a capture's magic number at \
             byte 0, found 23 20 74 75; skipped it"
        )),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(v.as_array().map(Vec::len), Some(1), "only the readable capture: {v}");
    assert_eq!(v[0]["file"].as_str(), Some(good.as_str()));
    assert_eq!(v[0]["packets"], 3);

    // Table form: the same exit status, the good capture still described.
    let out = run(&["inspect", "-q", &good, &bad]);
    assert_eq!(out.status.code(), Some(2));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("eth-ipv4-tcp\nfile         "), "{table}");
    assert!(table.contains("198.18.90.42:51514 -> 198.19.96.10:80"), "{table}");
}

#[test]
fn binary_missing_file_and_empty_file_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = path_str(&dir.path().join("nope.pcap"));
    let out = run(&["inspect", "-q", &missing]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("tuplecorr: error: {missing}: cannot read")), "{stderr}");
    let empty = path_str(&testdata("edge/empty.pcap"));
    let out = run(&["inspect", "-q", "--format", "json", &empty]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), serde_json::json!([]));
}

#[test]
fn binary_table_lists_interfaces_protocols_and_flows_aligned() {
    require_corpus!();
    let f = path_str(&corpus_dir().join("zeek__pcapng-multi-interface.pcapng"));
    let out = run(&["inspect", "--quiet", &f]);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "zeek__pcapng-multi-interface");
    assert_eq!(lines[2], "format       pcapng, little-endian, timestamps in ns, us");
    let at = lines.iter().position(|l| l.starts_with("interfaces")).expect("interfaces block");
    assert_eq!(lines[at], "interfaces   if  link type     snaplen  ts  packets  name");
    assert_eq!(lines[at + 1], "              0  ethernet (1)   262144  ns        2  eth0");
    assert_eq!(
        lines[at + 2],
        "              1  ethernet (1)   262144  us        4  \\Device\\NPF_{5AE6EDB4-EFF9-46B3-A3C2-EE50C688A9E6}"
    );
    assert!(table.contains("\nwarnings     none\n"), "{table}");
}

/// `inspect` reads through the pipeline's ingest path: read in small chunks
/// (decoded in parallel, handed over in file order) it counts exactly what a
/// sequential read counts.
#[test]
fn inspect_in_parallel_chunks_equals_the_sequential_read() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let chunked = tuplecorr::read::ReadConfig { chunk_bytes: 512, force_chunks: true };
    for name in ["decap.pcap", "backend.pcap"] {
        let path = testdata("lab/concurrent").join(name);
        let whole = inspect_path(&path);
        let split = pool
            .install(|| {
                inspect::inspect_with(&spec(&path), 0, 1, &chunked, &FlowConfig::default(), &NoProgress)
            })
            .unwrap();
        assert!(whole.packets > 0);
        assert_eq!(split, whole, "{name}");
    }
}
