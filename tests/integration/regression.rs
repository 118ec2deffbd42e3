//! Regression tests for inputs that once crashed tuplecorr (found by the fuzz
//! targets in `fuzz/`). Each input lives in `testdata/regress/`; each test is
//! named after what it exercises and runs the input through every stage that
//! crashed on it (read, decode, and the whole pipeline).

use crate::util::{read_mem, testdata};
use tuplecorr::decode::decode;
use tuplecorr::drive::pipeline::analyze_bytes;
use tuplecorr::drive::Config;
use tuplecorr::read::{read_bytes, LinkType, RawRecord};

/// Reads `testdata/regress/<name>`, decodes every record and runs the pipeline
/// on it twice (as two capture points); returns the records decoded.
fn survive(name: &str) -> usize {
    let bytes = std::fs::read(testdata(&format!("regress/{name}"))).expect("regression input readable");
    let mut decoded = 0;
    let _ = read_bytes(name, &bytes, &mut |rec| {
        if let Ok(p) = decode(rec) {
            decoded += 1;
            assert!(p.payload(rec.data).len() <= rec.data.len());
        }
    });
    let _ = analyze_bytes(&Config::default(), &[("decap", &bytes), ("egress", &bytes)]);
    decoded
}

/// etherparse 0.21's IPv6 extension iterator read past the validated headers
/// when a hop-by-hop header named another hop-by-hop header (the slicer stops
/// there with "hop-by-hop not at start"): out-of-bounds `get_unchecked`, caught
/// by debug assertions. Decode now walks the extension headers itself.
#[test]
fn ipv6_extension_header_the_slicer_rejected_is_not_walked() {
    survive("ipv6-ext-header-cut-after-valid-one.pcap");
    let (recs, info) =
        read_mem("r", &std::fs::read(testdata("regress/ipv6-ext-header-cut-after-valid-one.pcap")).unwrap())
            .unwrap();
    assert_eq!(recs.len(), 9);
    let p = decode(&tuplecorr::read::RawRecord {
        ts_ns: recs[8].ts_ns,
        interface: 0,
        link_type: recs[8].link_type,
        data: &recs[8].data,
        orig_len: recs[8].orig_len,
        record: 9,
        byte_offset: recs[8].byte_offset,
    });
    let p = p.expect("the IPv6 header itself is fine");
    assert_eq!(p.transport, tuplecorr::decode::Transport::Other { protocol: 0 });
    assert_eq!(p.fragment, tuplecorr::decode::Fragment::None);
    assert!(info.warnings.iter().any(|w| w.record == Some(10)), "{:?}", info.warnings);
}

/// Splits a `pipeline` fuzz input as the target does: a 2-byte little-endian
/// length of the first capture, then both captures.
fn split_pipeline_input(bytes: &[u8]) -> (&[u8], &[u8]) {
    let (len, rest) = bytes.split_at(2);
    let split = usize::from(u16::from_le_bytes([len[0], len[1]])).min(rest.len());
    rest.split_at(split)
}

/// Two pcapng captures whose timestamps sit near the i64 limits (a huge
/// `if_tsoffset` / unit count, clamped by the reader): the correlator's time
/// window `last_ns + tolerance` overflowed. Time arithmetic in correlate and
/// verdict now saturates.
#[test]
fn timestamps_near_the_i64_limits_do_not_overflow_the_time_gates() {
    let bytes = std::fs::read(testdata("regress/pipeline-timestamps-near-i64-limits.bin")).unwrap();
    let (a, b) = split_pipeline_input(&bytes);
    let _ = analyze_bytes(&Config::default(), &[("decap", a), ("egress", b)]);
    let mut times = Vec::new();
    for capture in [a, b] {
        let _ = read_bytes("t", capture, &mut |rec| times.push(rec.ts_ns));
    }
    assert!(times.iter().any(|&t| !(i64::MIN / 2..=i64::MAX / 2).contains(&t)), "{times:?}");
}

/// The committed fuzz seeds (`fuzz/seeds/<target>/`) replayed the way each fuzz
/// target runs them, so `cargo test` keeps them green without cargo-fuzz.
#[test]
fn fuzz_seeds_replay_through_their_targets() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let files = |target: &str| -> Vec<Vec<u8>> {
        let mut paths: Vec<_> = std::fs::read_dir(seeds.join(target))
            .unwrap_or_else(|e| panic!("fuzz/seeds/{target}: {e}"))
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
    };
    let mut decoded = 0usize;
    for bytes in files("read_capture") {
        let _ = read_bytes("seed", &bytes, &mut |rec| decoded += usize::from(decode(rec).is_ok()));
    }
    assert!(decoded > 100, "{decoded}");
    for bytes in files("decode_packet") {
        let Some((&pick, rest)) = bytes.split_first() else { continue };
        let link_type = match pick % 10 {
            0 | 9 => LinkType::Ethernet,
            1 => LinkType::RawIp,
            2 => LinkType::Ipv4,
            3 => LinkType::Ipv6,
            4 => LinkType::LinuxSll,
            5 => LinkType::LinuxSll2,
            6 => LinkType::Null,
            7 => LinkType::Loop,
            _ => LinkType::Unknown(147),
        };
        let rec = RawRecord {
            ts_ns: 0,
            interface: 0,
            link_type,
            data: rest,
            orig_len: 0,
            record: 1,
            byte_offset: 0,
        };
        let _ = decode(&rec);
    }
    let pipeline = files("pipeline");
    assert!(pipeline.len() > 10);
    for bytes in pipeline.iter().filter(|b| b.len() >= 2) {
        let (a, b) = split_pipeline_input(bytes);
        let _ = analyze_bytes(&Config::default(), &[("decap", a), ("egress", b)]);
    }
    let why = files("why_inputs");
    assert!(why.len() >= 8);
    for bytes in why {
        let Some((&pick, rest)) = bytes.split_first() else { continue };
        tuplecorr::why::exercise(pick, &String::from_utf8_lossy(rest));
    }
}
