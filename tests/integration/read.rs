//! The read stage against real captures (the corpus, `TUPLECORR_CORPUS`, written by other
//! projects) and the hand-made edge captures in `testdata/edge/`. Asserts record
//! counts, timestamps, interfaces, link types, warnings and error kinds.

use crate::util::{corpus_dir, read_file, read_mem, require_corpus, spec, testdata, Rec};
use tuplecorr::read::{self, ByteOrder, CaptureInfo, Format, LinkType, NoProgress, Progress, ReadErrorKind};

/// One row of the corpus index.
struct CorpusFile {
    file: String,
    packets_capinfos: Option<u64>,
    malformed: String,
}

fn corpus_index() -> Vec<CorpusFile> {
    let text = std::fs::read_to_string(corpus_dir().join("index.tsv")).expect("index.tsv readable");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (file, packets, malformed) = (col("file"), col("packets_capinfos"), col("malformed_or_truncated"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            CorpusFile {
                file: f[file].to_string(),
                packets_capinfos: f.get(packets).and_then(|p| p.parse().ok()),
                malformed: f.get(malformed).unwrap_or(&"").to_string(),
            }
        })
        .collect()
}

/// Files whose file header is unusable: reading them must give a `ReadError`.
const BAD_HEADER: &[&str] = &[
    "libpcap__pcap-invalid-version-1.pcap",  // pcap version 1.4
    "libpcap__pcapng-invalid-vers-1.pcapng", // SHB version 0.1
    "libpcap__shb-option-too-long.pcapng",   // SHB trailer length disagrees with its header
];

/// Files where capinfos gives no count; the count we give and why.
const NO_CAPINFOS_COUNT: &[(&str, u64)] = &[
    // Three sections; the second has pcapng version 2.0 and is skipped with a
    // warning (the spec says a reader must not read a section of a version it does
    // not know; the sections around it are fine): one packet each from 1 and 3.
    ("gopacket__pcapgo__tests__le__test901.pcapng", 2),
    // A pcap file header only (link-type field 0x00300000: reserved bits set).
    ("libpcap__linktype-reserved-field-not-zero.pcap", 0),
    // Only an SHB: no interfaces, no packets.
    ("gopacket__pcapgo__tests__le__test002.pcapng", 0),
];

#[test]
fn every_corpus_file_reads_and_counts_like_capinfos() {
    require_corpus!();
    let index = corpus_index();
    assert!(index.len() >= 50, "corpus index has only {} rows", index.len());
    let mut failures = Vec::new();
    for row in &index {
        let path = corpus_dir().join(&row.file);
        let result = read_file(&path);
        if BAD_HEADER.contains(&row.file.as_str()) {
            match result {
                Err(e) => assert!(matches!(e.kind, ReadErrorKind::BadHeader { .. }), "{}: {e}", row.file),
                Ok((recs, _)) => {
                    failures.push(format!("{}: read {} records, wanted an error", row.file, recs.len()))
                }
            }
            continue;
        }
        let (recs, info) = match result {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: {e} ({})", row.file, row.malformed));
                continue;
            }
        };
        let want = match (row.packets_capinfos, NO_CAPINFOS_COUNT.iter().find(|(f, _)| *f == row.file)) {
            (_, Some((_, n))) => *n,
            (Some(n), None) => n,
            (None, None) => {
                failures.push(format!("{}: no capinfos count and no expectation written here", row.file));
                continue;
            }
        };
        if recs.len() as u64 != want || info.packets != want {
            failures.push(format!(
                "{}: {} records (info {}), capinfos {want}",
                row.file,
                recs.len(),
                info.packets
            ));
        }
        // Record numbers are 1-based and increasing; per-interface counts add up.
        assert!(recs.windows(2).all(|w| w[0].record < w[1].record), "{}", row.file);
        assert_eq!(info.interfaces.iter().map(|i| i.packets).sum::<u64>(), info.packets, "{}", row.file);
    }
    assert!(failures.is_empty(), "corpus mismatches:\n{}", failures.join("\n"));
}

#[test]
fn corpus_big_endian_nanosecond_pcap() {
    require_corpus!();
    let (recs, info) = read_file(&corpus_dir().join("pcpp__Pcap++Test__nanosecs_big_endian.pcap")).unwrap();
    assert_eq!(info.format, Format::Pcap);
    assert_eq!(info.byte_order, ByteOrder::Big);
    assert_eq!(info.interfaces[0].ts_resolution, "ns");
    assert_eq!(recs.len(), 10);
    assert_eq!(recs[0].byte_offset, 24);
}

#[test]
fn corpus_test901_skips_the_version_2_section_with_a_warning() {
    require_corpus!();
    let (recs, info) = read_file(&corpus_dir().join("gopacket__pcapgo__tests__le__test901.pcapng")).unwrap();
    assert_eq!(info.interfaces.len(), 2);
    assert_eq!(recs.iter().map(|r| r.interface).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(recs.iter().map(|r| r.record).collect::<Vec<_>>(), vec![1, 3]);
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
    assert_eq!(info.warnings[0].byte_offset, Some(0x1e0));
    assert_eq!(
        info.warnings[0].message(),
        "this section has pcapng version 2.0; only version 1 sections can be read; skipped its blocks up to \
         the next section header"
    );
}

#[test]
fn corpus_link_type_not_decoded_gets_one_warning_with_its_registry_name() {
    require_corpus!();
    // NETLINK (253), 13 packets
    let (recs, info) = read_file(&corpus_dir().join("pcpp__Pcap++Test__microsecs_big_endian.pcap")).unwrap();
    assert_eq!(recs.len(), 13);
    assert!(recs.iter().all(|r| r.link_type == LinkType::Unknown(253)));
    assert_eq!(info.warnings.len(), 1);
    assert_eq!(info.warnings[0].problem, "interface 0 has link type NETLINK (253), not decoded");
    assert_eq!(info.warnings[0].consequence, "its 13 packets are skipped");
}

#[test]
fn corpus_invalid_nanosecond_fraction_is_accepted_and_warned_once() {
    require_corpus!();
    let (recs, info) = read_file(&corpus_dir().join("tcpdump__timestamp_invalid_nano.pcap")).unwrap();
    assert_eq!(recs.len(), 3);
    // first record: 1418145369 s + 999999999 ns (in range; a later one is not)
    assert_eq!(recs[0].ts_ns, 1_418_145_369 * 1_000_000_000 + 0x3b9a_c9ff);
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
}

#[test]
fn corpus_file_and_memory_reads_agree() {
    require_corpus!();
    for name in ["pcpp__Pcap++Test__pcapng-example.pcapng", "pcpp__Pcap++Test__sll.pcap"] {
        let path = corpus_dir().join(name);
        let (a, ia) = read_file(&path).unwrap();
        let (b, ib) = read_mem(name, &std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(a, b, "{name}");
        assert_eq!(ia.interfaces, ib.interfaces);
    }
}

// ---------------------------------------------------------------------------
// Hand-made edge captures (testdata/edge/, written by scripts/make-edge.py; its
// index.tsv lists the addresses and ports of every packet).

/// 2026-11-29T23:40:38Z, the base time of every edge capture, in ns.
const T0_NS: i64 = 1_795_995_638 * 1_000_000_000;

fn edge(name: &str) -> (Vec<Rec>, CaptureInfo) {
    read_file(&testdata(&format!("edge/{name}"))).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn edge_err(name: &str) -> ReadErrorKind {
    match read_file(&testdata(&format!("edge/{name}"))) {
        Ok((recs, _)) => panic!("{name}: read {} records, wanted an error", recs.len()),
        Err(e) => e.kind,
    }
}

#[test]
fn edge_link_types_reach_the_ip_header() {
    // (file, link type, records, link-layer header length)
    let cases: &[(&str, LinkType, usize, usize)] = &[
        ("eth-ipv4-tcp.pcap", LinkType::Ethernet, 3, 14),
        ("eth-vlan-ipv6-udp.pcap", LinkType::Ethernet, 2, 18),
        ("eth-qinq-ipv4-udp.pcap", LinkType::Ethernet, 2, 22),
        ("raw101-mixed.pcap", LinkType::RawIp, 2, 0),
        ("raw12-mixed.pcap", LinkType::RawIp, 2, 0),
        ("raw14-mixed.pcap", LinkType::RawIp, 2, 0),
        ("raw228-ipv4.pcap", LinkType::Ipv4, 3, 0),
        ("raw229-ipv6.pcap", LinkType::Ipv6, 2, 0),
        ("sll-ipv4-tcp.pcap", LinkType::LinuxSll, 3, 16),
        ("sll2-ipv6-tcp.pcap", LinkType::LinuxSll2, 2, 20),
        ("null-le.pcap", LinkType::Null, 5, 4),
        ("null-be.pcap", LinkType::Null, 5, 4),
        ("loop108.pcap", LinkType::Loop, 2, 4),
        ("linktype-fcs-bits.pcap", LinkType::Ethernet, 1, 14),
    ];
    for &(name, link, count, hdr) in cases {
        let (recs, info) = edge(name);
        assert_eq!(recs.len(), count, "{name}");
        assert_eq!(info.interfaces[0].link_type, link, "{name}");
        assert!(info.warnings.is_empty(), "{name}: {:?}", info.warnings);
        for r in &recs {
            assert_eq!(r.link_type, link, "{name}");
            assert_eq!(r.interface, 0);
            let version = r.data.get(hdr).map(|b| b >> 4);
            assert!(matches!(version, Some(4 | 6)), "{name} record {}: byte {hdr} is no IP header", r.record);
            assert_eq!(r.orig_len as usize, r.data.len());
        }
    }
}

#[test]
fn edge_null_family_fields_keep_the_writers_byte_order() {
    let families = |name: &str, big: bool| -> Vec<u32> {
        edge(name)
            .0
            .iter()
            .map(|r| {
                let b: [u8; 4] = r.data[..4].try_into().unwrap();
                if big {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                }
            })
            .collect()
    };
    assert_eq!(families("null-le.pcap", false), vec![2, 10, 24, 28, 30]);
    assert_eq!(families("null-be.pcap", true), vec![2, 10, 24, 28, 30]);
    assert_eq!(families("loop108.pcap", true), vec![2, 24]);
    assert_eq!(edge("null-be.pcap").1.byte_order, ByteOrder::Big);
}

#[test]
fn edge_little_endian_microsecond_pcap_gives_times_offsets_and_lengths() {
    let (recs, info) = edge("eth-ipv4-tcp.pcap");
    assert_eq!((info.format, info.byte_order, info.gzip), (Format::Pcap, ByteOrder::Little, false));
    assert_eq!(info.interfaces[0].ts_resolution, "us");
    assert_eq!(info.interfaces[0].packets, 3);
    assert_eq!(
        recs.iter().map(|r| r.ts_ns).collect::<Vec<_>>(),
        vec![T0_NS, T0_NS + 1_000_000, T0_NS + 2_000_000]
    );
    assert_eq!(recs.iter().map(|r| r.record).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(recs.iter().map(|r| r.byte_offset).collect::<Vec<_>>(), vec![24, 98, 172]);
    assert_eq!(recs.iter().map(|r| r.data.len()).collect::<Vec<_>>(), vec![58, 58, 83]);
    assert_eq!(info.bytes, 271);
}

#[test]
fn edge_big_endian_and_nanosecond_pcaps() {
    let (recs, info) = edge("be-us.pcap");
    assert_eq!(info.byte_order, ByteOrder::Big);
    assert_eq!(
        recs.iter().map(|r| r.ts_ns - T0_NS).collect::<Vec<_>>(),
        vec![250_000_000, 250_001_000, 250_002_000]
    );
    assert_eq!(recs[2].data, edge("eth-ipv4-tcp.pcap").0[2].data);

    let (recs, info) = edge("le-ns.pcap");
    assert_eq!(info.interfaces[0].ts_resolution, "ns");
    assert_eq!(
        recs.iter().map(|r| r.ts_ns - T0_NS).collect::<Vec<_>>(),
        vec![123_456_789, 123_456_790, 123_456_791]
    );

    let (recs, info) = edge("be-ns.pcap");
    assert_eq!((info.byte_order, info.interfaces[0].ts_resolution.as_str()), (ByteOrder::Big, "ns"));
    assert_eq!(recs[0].ts_ns, T0_NS + 999_999_999);
}

#[test]
fn edge_modified_pcap_in_both_byte_orders() {
    let plain = edge("eth-ipv4-tcp.pcap").0;
    for name in ["modified.pcap", "modified-be.pcap"] {
        let (recs, info) = edge(name);
        assert_eq!(info.format, Format::PcapModified, "{name}");
        assert_eq!(recs.iter().map(|r| r.byte_offset).collect::<Vec<_>>(), vec![24, 106, 188], "{name}");
        let data: Vec<&Vec<u8>> = recs.iter().map(|r| &r.data).collect();
        assert_eq!(data, plain.iter().map(|r| &r.data).collect::<Vec<_>>(), "{name}");
        assert_eq!(recs[1].ts_ns, T0_NS + 1_000, "{name}");
    }
}

#[test]
fn edge_caplen_above_snaplen_is_accepted() {
    let (recs, info) = edge("snaplen-exceeded.pcap");
    assert_eq!(info.interfaces[0].snaplen, 64);
    assert_eq!(recs.iter().map(|r| r.data.len()).collect::<Vec<_>>(), vec![58, 58, 83]);
    let messages: Vec<String> = info.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        messages,
        vec![format!(
            "{}: record 3 at byte 172: 1 record is longer than the interface's snaplen (83 bytes, \
             snaplen 64); read it whole (up to the 262144-byte cap)",
            testdata("edge/snaplen-exceeded.pcap").display()
        )]
    );
}

#[test]
fn edge_nanosecond_fraction_overflow_is_carried_and_warned_once() {
    let (recs, info) = edge("ns-fraction-overflow.pcap");
    assert_eq!(recs.iter().map(|r| r.ts_ns - T0_NS).collect::<Vec<_>>(), vec![1_500_000_000, 1_000_000_000]);
    assert_eq!(info.warnings.len(), 2, "{:?}", info.warnings);
    let w = &info.warnings[0];
    assert_eq!((w.record, w.byte_offset), (Some(1), Some(24)));
    assert!(w.problem.contains("1500000000 ns") && w.problem.contains("2 such records"), "{}", w.problem);
    // 1.5 s carried, then 1.0 s: the second record goes back in time
    assert_eq!(
        info.warnings[1].message(),
        "1 record has a timestamp earlier than the record before it (500 ms back); kept it; \
          flows use each packet's own time"
    );
    assert_eq!((info.warnings[1].record, info.warnings[1].byte_offset), (Some(2), Some(98)));
}

#[test]
fn edge_pcapng_interfaces_with_different_resolutions_and_offset() {
    let (recs, info) = edge("pcapng-two-if-tsresol.pcapng");
    assert_eq!(info.format, Format::Pcapng);
    let ifs: Vec<(LinkType, &str, i64, Option<&str>, u64)> = info
        .interfaces
        .iter()
        .map(|i| (i.link_type, i.ts_resolution.as_str(), i.ts_offset_s, i.name.as_deref(), i.packets))
        .collect();
    assert_eq!(
        ifs,
        vec![
            (LinkType::Ethernet, "us", 0, Some("eth0"), 2),
            (LinkType::RawIp, "2^-10 s", 3600, Some("tun0"), 1),
        ]
    );
    let got: Vec<(i64, u32, LinkType, usize)> =
        recs.iter().map(|r| (r.ts_ns - T0_NS, r.interface, r.link_type, r.data.len())).collect();
    assert_eq!(
        got,
        vec![
            (1_000, 0, LinkType::Ethernet, 58),
            (500_000_000, 1, LinkType::RawIp, 44),
            (3_000, 0, LinkType::Ethernet, 83)
        ]
    );
    // SHB 28 + IDB 40 + IDB 52 bytes before the first EPB
    assert_eq!(recs[0].byte_offset, 120);
}

#[test]
fn edge_pcapng_sections_of_both_byte_orders_renumber_interfaces() {
    let (recs, info) = edge("pcapng-two-sections.pcapng");
    assert_eq!(info.byte_order, ByteOrder::Little);
    assert_eq!(info.interfaces.len(), 2);
    assert_eq!(info.interfaces[1].ts_resolution, "ns");
    let got: Vec<(i64, u32, LinkType, u64)> =
        recs.iter().map(|r| (r.ts_ns - T0_NS, r.interface, r.link_type, r.record)).collect();
    assert_eq!(
        got,
        vec![
            (10_000, 0, LinkType::Ethernet, 1),
            (11_000, 0, LinkType::Ethernet, 2),
            (7, 1, LinkType::RawIp, 3),
            (8, 1, LinkType::RawIp, 4),
        ]
    );
    assert_eq!(recs[2].data[0] >> 4, 6);
}

#[test]
fn edge_pcapng_simple_and_obsolete_packet_blocks() {
    let (recs, info) = edge("pcapng-spb-pb.pcapng");
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    let got: Vec<(i64, usize, u32)> =
        recs.iter().map(|r| (r.ts_ns - T0_NS, r.data.len(), r.orig_len)).collect();
    // the SPB takes the EPB's time and is cut to the snaplen (96) of its 194 bytes
    assert_eq!(got, vec![(20_000, 58, 58), (20_000, 96, 194), (22_000, 58, 58)]);
    assert_eq!(info.interfaces[0].packets, 3);
}

#[test]
fn edge_pcapng_unknown_blocks_are_skipped() {
    // Wireshark lists the custom and unknown blocks as frames too (4 frames);
    // we number packet records only.
    let (recs, info) = edge("pcapng-unknown-block.pcapng");
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    assert_eq!(
        recs.iter().map(|r| (r.record, r.ts_ns - T0_NS)).collect::<Vec<_>>(),
        vec![(1, 30_000), (2, 31_000)]
    );
}

#[test]
fn edge_pcapng_unknown_link_type_is_yielded_with_one_warning() {
    let (recs, info) = edge("pcapng-unknown-linktype.pcapng");
    assert_eq!(
        recs.iter().map(|r| (r.link_type, r.data.len())).collect::<Vec<_>>(),
        vec![(LinkType::Ethernet, 58), (LinkType::Unknown(147), 4), (LinkType::Unknown(147), 2)]
    );
    assert_eq!(info.warnings.len(), 1);
    assert_eq!(
        info.warnings[0].message(),
        "interface 1 has link type USER0 (147), not decoded; its 2 packets are skipped"
    );
}

#[test]
fn edge_pcapng_missing_interface_skips_the_record() {
    let (recs, info) = edge("pcapng-bad-interface.pcapng");
    assert_eq!(recs.iter().map(|r| r.record).collect::<Vec<_>>(), vec![1, 3]);
    assert_eq!(info.packets, 2);
    assert_eq!(info.warnings.len(), 1);
    let w = &info.warnings[0];
    // SHB 28 + IDB 20 + EPB 92
    assert_eq!((w.record, w.byte_offset), (Some(2), Some(140)));
    assert_eq!(w.message(), "packet refers to interface 7, but its section describes 1; skipped this record");
}

#[test]
fn edge_pcapng_truncated_last_block_is_a_warning() {
    let (recs, info) = edge("pcapng-truncated.pcapng");
    assert_eq!(recs.len(), 1);
    let w = &info.warnings[0];
    assert_eq!((w.record, w.byte_offset), (Some(2), Some(140)));
    assert_eq!(
        w.message(),
        "record is cut short: its header says 92 bytes, the file ends after 72 (tcpdump stopped mid-write?); \
         dropped it, kept the 1 record before it"
    );
}

#[test]
fn edge_gzip_reads_like_the_plain_file() {
    for (gz, plain) in [
        ("eth-ipv4-tcp.pcap.gz", "eth-ipv4-tcp.pcap"),
        ("pcapng-two-sections.pcapng.gz", "pcapng-two-sections.pcapng"),
    ] {
        let (a, ia) = edge(gz);
        let (b, ib) = edge(plain);
        assert!(ia.gzip && !ib.gzip);
        assert_eq!(a, b, "{gz}");
        assert_eq!((ia.interfaces, ia.packets, ia.bytes), (ib.interfaces, ib.packets, ib.bytes));
    }
}

#[test]
fn edge_truncated_last_record_keeps_the_records_before_it() {
    let (recs, info) = edge("truncated-last-record.pcap");
    assert_eq!(recs.len(), 2);
    assert_eq!(info.warnings.len(), 1);
    let w = &info.warnings[0];
    assert_eq!((w.record, w.byte_offset), (Some(3), Some(172)));
    assert_eq!(
        w.problem,
        "record is cut short: its header says 83 bytes, the file ends after 63 (tcpdump stopped mid-write?)"
    );
    assert_eq!(w.consequence, "dropped it, kept the 2 records before it");
    assert!(w.to_string().contains("truncated-last-record.pcap: record 3 at byte 172: "), "{w}");
}

#[test]
fn edge_garbage_record_length_stops_reading() {
    let (recs, info) = edge("garbage-length.pcap");
    assert_eq!(recs.len(), 2);
    let w = &info.warnings[0];
    assert_eq!((w.record, w.byte_offset), (Some(3), Some(172)));
    assert!(w.problem.contains("captured length 3221225472 exceeds the 262144-byte cap"), "{}", w.problem);
    assert_eq!(w.consequence, "stopped reading this capture, kept the 2 records before it");
}

#[test]
fn edge_header_only_pcap_has_no_records() {
    let (recs, info) = edge("header-only.pcap");
    assert!(recs.is_empty() && info.warnings.is_empty());
    assert_eq!(info.interfaces.len(), 1);
}

#[test]
fn edge_unusable_files_are_errors_of_the_right_kind() {
    assert!(matches!(edge_err("empty.pcap"), ReadErrorKind::Empty));
    match edge_err("not-a-capture.txt") {
        ReadErrorKind::NotACapture { first_bytes } => assert_eq!(first_bytes, b"# tu"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(edge_err("header-cut.pcap"), ReadErrorKind::BadHeader { .. }));
    assert!(matches!(edge_err("pcap-version-1.pcap"), ReadErrorKind::BadHeader { .. }));
    assert!(matches!(edge_err("pcapng-version-2.pcapng"), ReadErrorKind::BadHeader { .. }));
    assert!(matches!(edge_err("no-such-file.pcap"), ReadErrorKind::Io(_)));
    // ENOTDIR: a file used as a folder (chmod does not stop root)
    assert!(matches!(edge_err("empty.pcap/x.pcap"), ReadErrorKind::Io(_)));
    // a folder opens but cannot be read
    assert!(matches!(edge_err(""), ReadErrorKind::Io(_)));
    let err = read_file(&testdata("edge/not-a-capture.txt")).unwrap_err();
    assert!(err.to_string().ends_with(
        "not-a-capture.txt: not a pcap, pcapng or gzip file: expected a capture's magic number at byte 0, \
             found 23 20 74 75"
    ));
}

#[test]
fn edge_files_read_the_same_from_memory() {
    let text = std::fs::read_to_string(testdata("edge/index.tsv")).unwrap();
    let mut checked = 0;
    for name in text.lines().skip(1).filter_map(|l| l.split('\t').next()) {
        let path = testdata(&format!("edge/{name}"));
        let bytes = std::fs::read(&path).unwrap();
        match (read_file(&path), read_mem(name, &bytes)) {
            (Ok((a, ia)), Ok((b, ib))) => {
                assert_eq!(a, b, "{name}");
                assert_eq!(ia.warnings.len(), ib.warnings.len(), "{name}");
                checked += 1;
            }
            (Err(a), Err(b)) => assert_eq!(format!("{:?}", a.kind), format!("{:?}", b.kind), "{name}"),
            (a, b) => panic!("{name}: file {:?} vs memory {:?}", a.is_ok(), b.is_ok()),
        }
    }
    assert!(checked >= 30, "only {checked} edge files read");
}

#[test]
fn edge_every_prefix_of_a_capture_reads_without_panic() {
    for name in
        ["pcapng-two-if-tsresol.pcapng", "modified.pcap", "eth-ipv4-tcp.pcap.gz", "pcapng-spb-pb.pcapng"]
    {
        let bytes = std::fs::read(testdata(&format!("edge/{name}"))).unwrap();
        for n in 0..bytes.len() {
            let _ = read_mem(name, &bytes[..n]);
        }
    }
}

#[test]
fn edge_mutated_captures_read_without_panic() {
    // Deterministic xorshift: overwrite 1-4 random bytes (often with 0xff, which
    // makes lengths huge) of each small capture, many times.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for name in [
        "eth-ipv4-tcp.pcap",
        "modified.pcap",
        "pcapng-two-if-tsresol.pcapng",
        "pcapng-two-sections.pcapng",
        "pcapng-spb-pb.pcapng",
        "pcapng-unknown-block.pcapng",
        "eth-ipv4-tcp.pcap.gz",
    ] {
        let bytes = std::fs::read(testdata(&format!("edge/{name}"))).unwrap();
        for _ in 0..500 {
            let mut m = bytes.clone();
            for _ in 0..=(next() % 4) {
                let at = (next() % m.len() as u64) as usize;
                m[at] = if next() % 2 == 0 { 0xff } else { next() as u8 };
            }
            if let Ok((recs, info)) = read_mem(name, &m) {
                assert_eq!(recs.len() as u64, info.packets, "{name}");
                assert!(recs.iter().all(|r| r.data.len() <= 256 * 1024));
            }
        }
    }
}

/// Records what the reader reports.
#[derive(Default)]
struct Recorder {
    log: std::sync::Mutex<Vec<(String, u64)>>,
}

impl Progress for Recorder {
    fn start(&self, capture: usize, label: &str, total: u64) {
        self.log.lock().unwrap().push((format!("start {capture} {label}"), total));
    }
    fn bytes_read(&self, _: usize, bytes: u64) {
        self.log.lock().unwrap().push(("bytes".into(), bytes));
    }
    fn finish(&self, capture: usize) {
        self.log.lock().unwrap().push((format!("finish {capture}"), 0));
    }
}

#[test]
fn edge_progress_counts_bytes_on_disk() {
    for name in ["eth-ipv4-tcp.pcap", "eth-ipv4-tcp.pcap.gz"] {
        let path = testdata(&format!("edge/{name}"));
        let size = std::fs::metadata(&path).unwrap().len();
        let rec = Recorder::default();
        read::read_capture(&spec(&path), 4, &rec, &mut |_| {}).unwrap();
        let log = rec.log.into_inner().unwrap();
        assert_eq!(log.first(), Some(&(format!("start 4 {name}"), size)));
        assert_eq!(log.last(), Some(&("finish 4".to_string(), 0)));
        let bytes: u64 = log.iter().filter(|(k, _)| k == "bytes").map(|(_, n)| n).sum();
        assert_eq!(bytes, size, "{name}");
    }
}

// ---------------------------------------------------------------------------
// Chunked reading of large uncompressed files.

/// Reads `path` in chunks of `chunk_bytes` (as the pipeline's ingest path does)
/// and concatenates the chunks' records.
fn read_chunked(path: &std::path::Path, chunk_bytes: u64) -> (Vec<Rec>, CaptureInfo, usize) {
    let spec = spec(path);
    let plan = read::plan_chunks(&spec, chunk_bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut records = Vec::new();
    for chunk in &plan.chunks {
        read::read_chunk(&spec, 0, chunk, &NoProgress, &mut |r| records.push(crate::util::own(r)))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    (records, plan.info, plan.chunks.len())
}

#[test]
fn chunked_reads_equal_sequential_reads() {
    let files: Vec<std::path::PathBuf> = [
        "pcapng-two-sections.pcapng",
        "pcapng-two-if-tsresol.pcapng",
        "pcapng-spb-pb.pcapng",
        "pcapng-bad-interface.pcapng",
        "truncated-last-record.pcap",
        "garbage-length.pcap",
        "modified-be.pcap",
        "ns-fraction-overflow.pcap",
    ]
    .iter()
    .map(|n| testdata(&format!("edge/{n}")))
    .collect();
    assert_chunked_reads_equal(&files);
}

#[test]
fn corpus_chunked_reads_equal_sequential_reads() {
    require_corpus!();
    let files: Vec<std::path::PathBuf> = [
        "pcpp__Pcap++Test__many_interfaces-1.pcapng",
        "pcpp__Pcap++Test__sll.pcap",
        "gopacket__pcapgo__tests__le__test901.pcapng",
    ]
    .iter()
    .map(|n| corpus_dir().join(n))
    .collect();
    assert_chunked_reads_equal(&files);
}

/// Every file read in chunks of 1, 100, 4096 bytes and 1 GiB gives the records
/// and summary of the sequential read.
fn assert_chunked_reads_equal(files: &[std::path::PathBuf]) {
    for path in files {
        let (want, want_info) = read_file(path).unwrap();
        for chunk_bytes in [1, 100, 4096, 1 << 30] {
            let (got, info, parts) = read_chunked(path, chunk_bytes);
            assert_eq!(got, want, "{} in chunks of {chunk_bytes}", path.display());
            assert_eq!(info, want_info, "{}", path.display());
            if chunk_bytes == 1 {
                assert!(parts >= want.len(), "{}: {parts} chunks for {} records", path.display(), want.len());
            }
        }
    }
}

#[test]
fn only_uncompressed_files_are_splittable() {
    assert!(read::is_splittable(&spec(&testdata("edge/eth-ipv4-tcp.pcap"))));
    assert!(!read::is_splittable(&spec(&testdata("edge/eth-ipv4-tcp.pcap.gz"))));
    assert!(!read::is_splittable(&spec(&testdata("edge"))));
    assert!(!read::is_splittable(&spec(&testdata("edge/no-such-file.pcap"))));
    let stdin =
        tuplecorr::read::CaptureSpec { label: "stdin".into(), source: tuplecorr::read::Source::Stdin };
    assert!(!read::is_splittable(&stdin));
    assert!(read::plan_chunks(&spec(&testdata("edge/eth-ipv4-tcp.pcap.gz")), 100).is_err());
}

#[test]
fn corpus_timestamp_beyond_year_2262_is_clamped_with_one_warning() {
    require_corpus!();
    // Interface 1 (LINUX_SLL, µs) of this file carries timestamps Wireshark reads
    // as ~1.8e13 s: more than i64 nanoseconds hold.
    let (recs, info) = read_file(&corpus_dir().join("pcpp__Pcap++Test__pcapng-example.pcapng")).unwrap();
    assert_eq!(recs.len(), 159);
    let w: Vec<_> = info.warnings.iter().filter(|w| w.problem.contains("2262")).collect();
    assert_eq!(w.len(), 1, "{:?}", info.warnings);
    assert_eq!(w[0].record, Some(60));
    assert!(recs.iter().filter(|r| r.interface == 1).all(|r| r.ts_ns == i64::MAX));
    // Interface 0 (Ethernet, ns) is fine; tshark agrees to the nanosecond
    // (its record 2 really says 2061).
    assert_eq!(recs[0].ts_ns, 1_422_527_998_578_402_281);
    assert_eq!(recs[1].ts_ns, 2_894_531_997_938_836_488);
    assert!(recs.iter().filter(|r| r.interface == 0).all(|r| r.ts_ns < i64::MAX));
}
