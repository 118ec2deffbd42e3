//! Property tests (proptest) of the read stage: captures written by the test
//! writer (`writer.rs`) from arbitrary packets read back field for field; any
//! truncation keeps the records before the cut and names the cut record and its
//! byte offset; arbitrary byte flips never panic anywhere in the pipeline.
//! Case counts stay modest so `cargo test` stays fast.

use crate::util::{read_mem, testdata, Rec};
use crate::writer::{self, Iface, Packet, Written};
use proptest::prelude::*;
use tuplecorr::drive::Config;
use tuplecorr::read::LinkType;

/// Link types written into generated captures (decodable ones and one unknown).
const LINK_TYPES: [u16; 6] = [1, 101, 113, 276, 0, 147];
/// pcapng `if_tsresol` values: absent (µs), ms, ns, 10^-10 s, 2^-20 s, 2^-30 s.
const TSRESOLS: [Option<u8>; 6] = [None, Some(3), Some(9), Some(10), Some(0x80 | 20), Some(0x80 | 30)];
/// Latest timestamp generated (2096), so every resolution fits an i64 of ns.
const MAX_TS_NS: u64 = 4_000_000_000_000_000_000;

fn data() -> impl Strategy<Value = Vec<u8>> {
    (0usize..2000, any::<u8>())
        .prop_map(|(len, seed)| (0..len).map(|i| (i as u8).wrapping_mul(seed)).collect())
}

/// A pcap capture: (big-endian, nanoseconds, link type, packets, expected records).
fn pcap_capture() -> impl Strategy<Value = (Written, Vec<Rec>)> {
    let packet = (any::<u32>(), 0u32..1_000_000_000, data(), 0u32..100);
    (any::<bool>(), any::<bool>(), 0usize..LINK_TYPES.len(), prop::collection::vec(packet, 0..12)).prop_map(
        |(big, nanos, lt, pkts)| {
            let link = u32::from(LINK_TYPES[lt]);
            let per_s: u64 = if nanos { 1_000_000_000 } else { 1_000_000 };
            let packets: Vec<Packet> = pkts
                .iter()
                .map(|(s, f, d, extra)| Packet {
                    interface: 0,
                    ts_units: u64::from(*s) * per_s + u64::from(*f) % per_s,
                    orig_len: d.len() as u32 + extra,
                    data: d.clone(),
                })
                .collect();
            let w = writer::pcap(big, nanos, link, 65535, &packets);
            let unit_ns = 1_000_000_000 / per_s as i64;
            let expected = packets
                .iter()
                .zip(&w.records)
                .enumerate()
                .map(|(i, (p, &(start, _)))| Rec {
                    ts_ns: (p.ts_units / per_s) as i64 * 1_000_000_000
                        + (p.ts_units % per_s) as i64 * unit_ns,
                    interface: 0,
                    link_type: LinkType::from_u32(link),
                    data: p.data.clone(),
                    orig_len: p.orig_len,
                    record: i as u64 + 1,
                    byte_offset: start as u64,
                })
                .collect();
            (w, expected)
        },
    )
}

/// A pcapng capture of 1–3 sections, 1–4 interfaces each, either byte order.
fn pcapng_capture(max_sections: usize) -> impl Strategy<Value = (Written, Vec<Rec>)> {
    let iface = (0usize..LINK_TYPES.len(), 0usize..TSRESOLS.len());
    let packet = (any::<u8>(), 0u64..MAX_TS_NS, data(), 0u32..100);
    (
        any::<bool>(),
        1usize..=max_sections,
        prop::collection::vec(iface, 1..5),
        prop::collection::vec(packet, 0..12),
    )
        .prop_map(|(big, sections, ifs, pkts)| {
            let ifaces: Vec<Iface> = ifs
                .iter()
                .map(|&(lt, r)| Iface { link_type: LINK_TYPES[lt], snaplen: 262_144, tsresol: TSRESOLS[r] })
                .collect();
            let packets: Vec<Packet> = pkts
                .iter()
                .map(|(i, ts_ns, d, extra)| {
                    let interface = u32::from(*i) % ifaces.len() as u32;
                    let r = ifaces[interface as usize].tsresol.unwrap_or(6);
                    Packet {
                        interface,
                        ts_units: ns_to_units(*ts_ns, r),
                        orig_len: d.len() as u32 + extra,
                        data: d.clone(),
                    }
                })
                .collect();
            let w = writer::pcapng(big, sections, &ifaces, &packets);
            let n = packets.len();
            let expected = packets
                .iter()
                .zip(&w.records)
                .enumerate()
                .map(|(i, (p, &(start, _)))| {
                    let section = (0..sections).find(|s| i < (s + 1) * n / sections).unwrap_or(0);
                    let iface = &ifaces[p.interface as usize];
                    Rec {
                        ts_ns: writer::units_to_ns(p.ts_units, iface.tsresol.unwrap_or(6)),
                        interface: (section * ifaces.len()) as u32 + p.interface,
                        link_type: LinkType::from_u32(u32::from(iface.link_type)),
                        data: p.data.clone(),
                        orig_len: p.orig_len,
                        record: i as u64 + 1,
                        byte_offset: start as u64,
                    }
                })
                .collect();
            (w, expected)
        })
}

/// `ns` in units of `if_tsresol` (rounded down).
fn ns_to_units(ns: u64, tsresol: u8) -> u64 {
    let v = u32::from(tsresol & 0x7f);
    let u = if tsresol & 0x80 != 0 {
        (u128::from(ns) << v) / 1_000_000_000
    } else if v <= 9 {
        u128::from(ns) / 10u128.pow(9 - v)
    } else {
        u128::from(ns) * 10u128.pow(v - 9)
    };
    u64::try_from(u).unwrap_or(u64::MAX)
}

/// Either format.
fn any_capture() -> impl Strategy<Value = (Written, Vec<Rec>)> {
    prop_oneof![pcap_capture(), pcapng_capture(1)]
}

/// The end-of-capture summary warnings random packets may earn (link types not
/// decoded, timestamps that go backwards), not tied to damage.
fn is_summary(w: &tuplecorr::warning::Warning) -> bool {
    w.problem.ends_with(", not decoded") || w.problem.contains("earlier than the record before")
}

/// Checks what a capture cut at `cut` reads as.
fn check_truncation(w: &Written, expected: &[Rec], cut: usize) -> Result<(), TestCaseError> {
    let (recs, mut info) =
        read_mem("cut", &w.bytes[..cut]).map_err(|e| TestCaseError::fail(e.to_string()))?;
    info.warnings.retain(|w| !is_summary(w));
    let kept = w.records.iter().take_while(|&&(_, end)| end <= cut).count();
    prop_assert_eq!(&recs[..], &expected[..kept]);
    match w.records.get(kept) {
        Some(&(start, _)) if start < cut => {
            prop_assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
            let warning = &info.warnings[0];
            // pcapng: a cut inside a block's type field cannot tell a packet block.
            let type_cut = cut - start < 4 && w.bytes.first() == Some(&0x0a);
            let record = if type_cut { None } else { Some(kept as u64 + 1) };
            prop_assert_eq!(warning.record, record);
            prop_assert_eq!(warning.byte_offset, Some(start as u64));
            prop_assert!(warning.problem.contains("is cut short"), "{}", warning.problem);
            let s = if kept == 1 { "" } else { "s" };
            prop_assert_eq!(
                &warning.consequence,
                &format!("dropped it, kept the {kept} record{s} before it")
            );
        }
        _ => prop_assert!(info.warnings.is_empty(), "{:?}", info.warnings),
    }
    Ok(())
}

/// Small valid captures from testdata/edge/ to damage (realistic packet bytes).
fn edge_captures() -> Vec<Vec<u8>> {
    [
        "eth-ipv4-tcp.pcap",
        "sll2-ipv6-tcp.pcap",
        "pcapng-two-sections.pcapng",
        "eth-ipv4-tcp.pcap.gz",
        "null-be.pcap",
    ]
    .iter()
    .map(|f| std::fs::read(testdata(&format!("edge/{f}"))).expect("edge capture readable"))
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pcap_reads_back_field_for_field((w, expected) in pcap_capture()) {
        let (recs, info) = read_mem("p", &w.bytes).expect("reads");
        prop_assert_eq!(recs, expected);
        prop_assert!(info.warnings.iter().all(is_summary), "{:?}", info.warnings);
    }

    #[test]
    fn pcapng_reads_back_field_for_field((w, expected) in pcapng_capture(3)) {
        let (recs, info) = read_mem("p", &w.bytes).expect("reads");
        prop_assert_eq!(recs, expected);
        prop_assert!(info.warnings.iter().all(is_summary), "{:?}", info.warnings);
    }

    #[test]
    fn truncation_keeps_the_records_before_it_and_names_the_cut_one(
        (w, expected) in any_capture(),
        at in any::<prop::sample::Index>(),
    ) {
        let cut = w.header_end + at.index(w.bytes.len() - w.header_end + 1);
        check_truncation(&w, &expected, cut)?;
    }

    #[test]
    fn truncated_gzip_keeps_a_prefix_of_the_records_and_says_so(
        (w, expected) in any_capture(),
        at in any::<prop::sample::Index>(),
    ) {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&w.bytes).unwrap();
        let gz = gz.finish().unwrap();
        let cut = 2 + at.index(gz.len() - 1); // past the gzip magic: still sniffed as gzip
        match read_mem("cut.gz", &gz[..cut]) {
            Ok((recs, mut info)) => {
                prop_assert!(info.gzip);
                prop_assert_eq!(&recs[..], &expected[..recs.len()]);
                info.warnings.retain(|w| !is_summary(w));
                if cut < gz.len() {
                    // the decompressor reports the cut (or the capture ends inside a record)
                    prop_assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
                    let kept = format!("kept the {} record", recs.len());
                    prop_assert!(info.warnings[0].consequence.contains(&kept), "{:?}", info.warnings);
                } else {
                    prop_assert_eq!(recs.len(), expected.len());
                }
            }
            // cut inside the compressed file header: nothing decompresses
            Err(e) => prop_assert!(e.to_string().contains("cut.gz"), "{}", e),
        }
    }

    #[test]
    fn byte_flips_never_panic(
        (w, _) in any_capture(),
        pick in 0usize..6,
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..8),
    ) {
        let mut bytes = match pick {
            0 => w.bytes.clone(),
            n => edge_captures().swap_remove(n - 1),
        };
        let original = bytes.clone();
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        let _ = tuplecorr::read::read_bytes("flipped", &bytes, &mut |rec| {
            if let Ok(p) = tuplecorr::decode::decode(rec) {
                let _ = p.payload(rec.data);
            }
        });
        let _ = tuplecorr::drive::pipeline::analyze_bytes(
            &Config::default(),
            &[("decap", &original), ("egress", &bytes)],
        );
    }
}
