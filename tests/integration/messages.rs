//! Messages that help (issue 7): every read failure and warning names the file,
//! what was expected, what was found, the record and byte offset, and what
//! tuplecorr does next — asserted as whole strings on the binary's stderr and
//! on `Warning`s. Also: input oddities that are counted, never fatal (timestamps
//! going backwards, duplicate packets, zero-length records, records longer than
//! the snaplen).

use crate::adversarial::ip;
use crate::util::{read_mem, testdata};
use crate::writer::{self, Packet};
use std::process::Command;
use tuplecorr::drive::pipeline::analyze_bytes;
use tuplecorr::drive::Config;
use tuplecorr::verdict::Findings;
use tuplecorr_synth::{self as synth, Hop, Path, Point, Tcp, Udp};

/// Runs the binary in `testdata/edge/` (short file names in messages); gives
/// its exit code and stderr.
fn run_in_edge(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(testdata("edge"))
        .arg("--quiet")
        .args(args)
        .output()
        .expect("tuplecorr runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn truncated_last_record_names_file_record_offset_and_what_is_kept() {
    let (code, err) = run_in_edge(&["truncated-last-record.pcap", "eth-ipv4-tcp.pcap"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "tuplecorr: warning: truncated-last-record.pcap: record 3 at byte 172: record is cut short: its header \
         says 83 bytes, the file ends after 63 (tcpdump stopped mid-write?); dropped it, kept the 2 records \
         before it\n"
    );
}

#[test]
fn a_label_is_shown_beside_the_file_it_names() {
    let (code, err) = run_in_edge(&["egress=pcapng-truncated.pcapng", "eth-ipv4-tcp.pcap"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "tuplecorr: warning: pcapng-truncated.pcapng (egress): record 2 at byte 140: record is cut short: its \
         header says 92 bytes, the file ends after 72 (tcpdump stopped mid-write?); dropped it, kept the 1 \
         record before it\n"
    );
}

#[test]
fn garbage_record_length_names_the_cap_and_stops_that_capture_only() {
    let (code, err) = run_in_edge(&["garbage-length.pcap", "eth-ipv4-tcp.pcap"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "tuplecorr: warning: garbage-length.pcap: record 3 at byte 172: captured length 3221225472 exceeds \
         the 262144-byte cap (garbage length?); stopped reading this capture, kept the 2 records before it\n"
    );
}

#[test]
fn unusable_files_are_errors_saying_expected_found_and_next() {
    let cases = [
        (
            "not-a-capture.txt",
            "tuplecorr: error: not-a-capture.txt: not a pcap, pcapng or gzip file: expected a capture's magic \
             number at byte 0, found 23 20 74 75; stopped, no report written (every capture point is needed)\n",
        ),
        (
            "empty.pcap",
            "tuplecorr: error: empty.pcap: the file is empty (0 bytes); expected a pcap, pcapng or gzip \
             capture; stopped, no report written (every capture point is needed)\n",
        ),
        (
            "header-cut.pcap",
            "tuplecorr: error: header-cut.pcap: pcap file header is cut short: 20 of 24 bytes; stopped, no \
             report written (every capture point is needed)\n",
        ),
        (
            "pcap-version-1.pcap",
            "tuplecorr: error: pcap-version-1.pcap: pcap version 1.4 is not supported (only 2.x is); stopped, \
             no report written (every capture point is needed)\n",
        ),
    ];
    for (file, expected) in cases {
        let (code, err) = run_in_edge(&["eth-ipv4-tcp.pcap", file]);
        assert_eq!((code, err.as_str()), (2, expected));
    }
}

/// A raw-IP pcap of `(seconds, data)` records (µs resolution).
fn raw_pcap(snaplen: u32, records: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let packets: Vec<Packet> = records
        .iter()
        .map(|(s, d)| Packet {
            interface: 0,
            ts_units: s * 1_000_000,
            data: d.clone(),
            orig_len: d.len() as u32,
        })
        .collect();
    writer::pcap(false, false, 101, snaplen, &packets).bytes
}

/// One TCP request through two points (the pod forwards), as raw IP packets.
fn two_point_tcp() -> synth::Captures {
    let points = vec![Point::default(), Point::default()];
    let mut p = Path::new(points, vec![Hop { delay_ns: 40_000, routed: true, ..Hop::default() }]);
    p.tcp(&Tcp::new((ip("198.18.90.42"), 51514), (ip("198.19.96.10"), 80), 1_795_995_638_000_000_000, 7));
    p.udp(&Udp {
        client: (ip("198.18.90.42"), 40001),
        server: (ip("198.19.96.10"), 53),
        start_ns: 1_795_995_638_100_000_000,
        request: b"query".to_vec(),
        response: Some(b"answer".to_vec()),
        ip_id: 4242,
    });
    p.finish()
}

/// Writes each point as a raw-IP pcap and runs the pipeline in memory.
fn analyze_points(points: &[Vec<(i64, Vec<u8>, u32)>]) -> Findings {
    let files: Vec<Vec<u8>> = points
        .iter()
        .map(|pkts| {
            let mut out = Vec::new();
            synth::write_pcap(&mut out, 65535, pkts).expect("in memory");
            out
        })
        .collect();
    analyze_bytes(&Config::default(), &[("decap", &files[0]), ("egress", &files[1])]).expect("reads")
}

#[test]
fn timestamps_going_backwards_are_one_summary_warning_per_capture() {
    let syn = two_point_tcp().points[0][0].1.clone();
    let bytes = raw_pcap(65535, &[(10, syn.clone()), (8, syn.clone()), (9, syn.clone()), (5, syn)]);
    let (recs, info) = read_mem("back.pcap", &bytes).unwrap();
    assert_eq!(recs.len(), 4);
    let messages: Vec<String> = info.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        messages,
        ["back.pcap: record 2 at byte 84: 2 records have a timestamp earlier than the record before them (this \
          is the first, 2000 ms back); kept them; flows use each packet's own time"]
    );
}

#[test]
fn a_pcapng_s_interfaces_interleave_without_a_warning_and_each_is_checked_on_its_own() {
    // dumpcap -i a -i b: each interface in time order, the two interleaved
    let iface = writer::Iface { link_type: 101, snaplen: 65535, tsresol: None };
    let syn = two_point_tcp().points[0][0].1.clone();
    let p = |interface, secs: u64| Packet {
        interface,
        ts_units: secs * 1_000_000,
        data: syn.clone(),
        orig_len: 60,
    };
    let ifaces = [iface.clone(), iface];
    let bytes = writer::pcapng(false, 1, &ifaces, &[p(0, 10), p(1, 5), p(0, 11), p(1, 6), p(1, 7)]).bytes;
    let (recs, info) = read_mem("two.pcapng", &bytes).unwrap();
    assert_eq!(recs.len(), 5);
    assert!(info.warnings.is_empty(), "{:?}", info.warnings);
    // a step back on one interface is still counted, and said to be on its interface
    let bytes = writer::pcapng(false, 1, &ifaces, &[p(0, 10), p(1, 5), p(0, 11), p(1, 4), p(0, 12)]).bytes;
    let (_, info) = read_mem("two.pcapng", &bytes).unwrap();
    let messages: Vec<String> = info.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        messages,
        ["two.pcapng: record 4 at byte 296: 1 record has a timestamp earlier than the record before it on its \
          interface (1000 ms back); kept it; flows use each packet's own time"]
    );
}

#[test]
fn a_pcapng_cut_short_before_its_byte_order_magic_says_where_the_file_ends() {
    for (bytes, found) in [
        (
            &[0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c][..],
            "found only 4d 3c (2 of its 4 bytes), then the end of the file",
        ),
        (&[0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0], "found the end of the file"),
    ] {
        let e = read_mem("short.pcapng", bytes).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "short.pcapng: section header block has no byte-order magic: expected 1a2b3c4d or 4d3c2b1a, {found}"
            )
        );
    }
}

#[test]
fn zero_length_records_are_counted_and_skipped_not_fatal() {
    let mut caps = two_point_tcp();
    let first = caps.points[0][0].0;
    caps.points[0].insert(1, (first + 1, Vec::new(), 60));
    caps.points[0].insert(2, (first + 2, Vec::new(), 0));
    let f = analyze_points(&caps.points);
    assert_eq!(f.requests.len(), 2);
    assert_eq!(f.captures[0].packets, caps.points[0].len() as u64);
    let w: Vec<String> =
        f.warnings.iter().map(|w| format!("{:?} {:?} {}", w.record, w.byte_offset, w.message)).collect();
    assert_eq!(
        w,
        ["Some(2) Some(84) 2 records hold no usable IP header (this is the first: ip header cut short: needs 1 \
          bytes, 0 captured); counted and skipped them"]
    );
}

#[test]
fn duplicate_packets_leave_every_verdict_unchanged() {
    let caps = two_point_tcp();
    let clean = analyze_points(&caps.points);
    let doubled: Vec<Vec<(i64, Vec<u8>, u32)>> =
        caps.points.iter().map(|pkts| pkts.iter().flat_map(|p| [p.clone(), p.clone()]).collect()).collect();
    let twice = analyze_points(&doubled);
    assert_eq!(twice.captures[1].packets, 2 * clean.captures[1].packets);
    assert_eq!(twice.requests.len(), clean.requests.len());
    for (a, b) in clean.requests.iter().zip(&twice.requests) {
        assert_eq!(
            (&a.source, &a.destination, &a.reply, &a.outcome),
            (&b.source, &b.destination, &b.reply, &b.outcome)
        );
        assert_eq!(a.matches, b.matches);
    }
    assert!(twice.warnings.is_empty(), "{:?}", twice.warnings);
}

#[test]
fn records_longer_than_the_snaplen_are_read_whole_and_counted() {
    let caps = two_point_tcp();
    let records: Vec<(u64, Vec<u8>)> = caps.points[0].iter().map(|(_, d, _)| (1, d.clone())).collect();
    let longer = records.iter().filter(|(_, d)| d.len() > 40).count();
    let first = records.iter().position(|(_, d)| d.len() > 40).unwrap() + 1;
    let bytes = raw_pcap(40, &records);
    let (recs, info) = read_mem("snap.pcap", &bytes).unwrap();
    assert_eq!(recs.len(), records.len());
    assert!(recs.iter().zip(&records).all(|(r, (_, d))| &r.data == d));
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
    assert_eq!(info.warnings[0].record, Some(first as u64));
    assert!(
        info.warnings[0]
            .message()
            .starts_with(&format!("{longer} records are longer than the interface's snaplen")),
        "{}",
        info.warnings[0].message()
    );
    let f = analyze_bytes(&Config::default(), &[("decap", &bytes), ("egress", &bytes)]).unwrap();
    assert_eq!(f.requests.len(), 2);
}

#[test]
fn a_read_warning_says_where_even_without_a_record() {
    let w = tuplecorr::warning::Warning {
        label: "egress".into(),
        file: "egress.pcap".into(),
        record: None,
        byte_offset: Some(4096),
        problem: "reading failed: Input/output error".into(),
        consequence: "stopped reading this capture, kept the 9 records before it".into(),
    };
    assert_eq!(
        w.to_string(),
        "egress.pcap: byte 4096: reading failed: Input/output error; stopped reading this capture, kept the 9 \
         records before it"
    );
}

#[test]
fn pcapng_framing_problems_say_expected_and_found() {
    let iface = writer::Iface { link_type: 101, snaplen: 65535, tsresol: None };
    let syn = two_point_tcp().points[0][0].1.clone();
    let p = Packet { interface: 0, ts_units: 1, data: syn, orig_len: 60 };
    let mut bytes = writer::pcapng(false, 1, &[iface], &[p]).bytes;
    let at = bytes.len();
    // a second section header whose byte-order magic is garbage
    bytes.extend_from_slice(&[0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef]);
    bytes.extend_from_slice(&[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0]);
    let (recs, info) = read_mem("bad-shb.pcapng", &bytes).unwrap();
    assert_eq!(recs.len(), 1);
    let messages: Vec<String> = info.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        messages,
        [format!(
            "bad-shb.pcapng: byte {at}: section header block has no byte-order magic: expected 1a2b3c4d or \
             4d3c2b1a, found de ad be ef; stopped reading this capture, kept the 1 record before it"
        )]
    );
}

#[test]
fn many_bad_records_list_twenty_then_count_the_rest() {
    let iface = writer::Iface { link_type: 101, snaplen: 65535, tsresol: None };
    let packets: Vec<Packet> =
        (0..25).map(|i| Packet { interface: 3, ts_units: i, data: vec![0x45; 20], orig_len: 20 }).collect();
    let (recs, info) =
        read_mem("bad-if.pcapng", &writer::pcapng(false, 1, &[iface], &packets).bytes).unwrap();
    assert!(recs.is_empty());
    assert_eq!(info.warnings.len(), 21);
    assert_eq!(
        info.warnings[0].to_string(),
        "bad-if.pcapng: record 1 at byte 48: packet refers to interface 3, but its section describes 1; skipped \
         this record"
    );
    assert_eq!(
        info.warnings[20].to_string(),
        "bad-if.pcapng: 5 more records had problems like those above (only the first 20 are listed); skipped them"
    );
}
