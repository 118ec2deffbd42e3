//! Timestamps at the i64 limits through the whole pipeline (issue 10): pcapng
//! clamps a time beyond 1677-2262 to i64::MIN + 1 or i64::MAX, so two flows of one
//! capture, or of two captures, can sit at opposite limits. Every subtraction
//! of two timestamps must saturate or widen: no panic in debug builds, no
//! wrapped (negative) RTT or delay in release. Property-tested with pcapng
//! files whose interfaces carry extreme `if_tsoffset` values.

use proptest::prelude::*;
use tuplecorr::drive::pipeline::analyze_bytes;
use tuplecorr::drive::Config;
use tuplecorr::report::{self, Format, ReportOptions};

/// Packets as the generator gives them: (true time ns, raw IP bytes, original length).
type Packets = [(i64, Vec<u8>, u32)];

/// One interface: `if_tsoffset` (s), base units, its packets.
type Iface<'a> = (i64, u64, &'a Packets);

/// Little-endian pcapng: one section, one raw-IP interface (ns resolution,
/// `if_tsoffset` in seconds) per entry of `ifaces`, then every packet as an EPB
/// on its interface with `base + (t - t0)` ns units.
fn pcapng(ifaces: &[Iface<'_>], t0: i64) -> Vec<u8> {
    fn block(out: &mut Vec<u8>, btype: u32, body: &[u8]) {
        let len = (12 + body.len().div_ceil(4) * 4) as u32;
        out.extend(btype.to_le_bytes());
        out.extend(len.to_le_bytes());
        out.extend(body);
        out.resize(out.len() + (4 - body.len() % 4) % 4, 0);
        out.extend(len.to_le_bytes());
    }
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend(0x1A2B_3C4Du32.to_le_bytes());
    shb.extend(1u16.to_le_bytes());
    shb.extend(0u16.to_le_bytes());
    shb.extend((-1i64).to_le_bytes());
    block(&mut out, 0x0A0D_0D0A, &shb);
    for (tsoffset, _, _) in ifaces {
        let mut idb = Vec::new();
        idb.extend(101u16.to_le_bytes()); // raw IP
        idb.extend(0u16.to_le_bytes());
        idb.extend(65_535u32.to_le_bytes());
        idb.extend([9, 0, 1, 0, 9, 0, 0, 0]); // if_tsresol = 9 (ns)
        idb.extend([14, 0, 8, 0]); // if_tsoffset
        idb.extend(tsoffset.to_le_bytes());
        idb.extend([0, 0, 0, 0]);
        block(&mut out, 1, &idb);
    }
    for (k, (_, base, packets)) in ifaces.iter().enumerate() {
        for (t, data, orig) in packets.iter() {
            let units = base.saturating_add(t.saturating_sub(t0) as u64);
            let mut epb = Vec::new();
            epb.extend((k as u32).to_le_bytes());
            epb.extend(((units >> 32) as u32).to_le_bytes());
            epb.extend((units as u32).to_le_bytes());
            epb.extend((data.len() as u32).to_le_bytes());
            epb.extend(orig.to_le_bytes());
            epb.extend(data);
            block(&mut out, 6, &epb);
        }
    }
    out
}

/// if_tsoffset values (seconds) that push times to, past and near the limits.
fn offset_s() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(-9_223_372_037),
        Just(9_223_372_036),
        Just(-9_223_372_036),
        Just(0),
        any::<i64>(),
    ]
}

fn base_units() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(u64::MAX), Just(u64::MAX / 2), any::<u64>()]
}

/// Runs the two captures through the pipeline and every report format, and
/// checks what must hold whatever the clocks say.
fn check(decap: &[u8], node: &[u8]) -> Result<(), TestCaseError> {
    let f = analyze_bytes(&Config::default(), &[("decap", decap), ("node", node)]).expect("reads");
    prop_assert!(!f.requests.is_empty());
    for r in &f.requests {
        for h in &r.captures {
            if let Some(rtt) = h.rtt_ns {
                prop_assert!(rtt >= 0, "request {} rtt {rtt}", r.request);
            }
        }
    }
    for b in &f.boundaries {
        if let Some(d) = b.delay_ns {
            // saturated at the i64 limits means the arithmetic wrapped nowhere
            prop_assert!(d > i64::MIN && d < i64::MAX, "{:?} delay {d}", b.between);
        }
    }
    for format in [Format::Table, Format::Csv, Format::Json, Format::Ndjson] {
        for summary_only in [false, true] {
            let mut out = Vec::new();
            report::write(&f, &ReportOptions { format, summary_only, ..ReportOptions::default() }, &mut out)
                .expect("writes");
            prop_assert!(!out.is_empty());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `decap` on one interface; `node` (a `tcpdump -i any` on the NAT node)
    /// sees each request before (egress) and after (backend) translation on two
    /// interfaces whose clocks sit anywhere, opposite limits included.
    #[test]
    fn timestamps_at_the_i64_limits_never_panic_or_wrap(
        conns in 1u32..4,
        (o_decap, o_egress, o_backend) in (offset_s(), offset_s(), offset_s()),
        (b_decap, b_egress, b_backend) in (base_units(), base_units(), base_units()),
    ) {
        let mut points: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
        for c in 0..conns {
            let (captures, _) = tuplecorr_synth::mix_connection(c, 7, 500);
            for (k, pkts) in captures.points.into_iter().enumerate() {
                points[k].extend(pkts);
            }
        }
        let t0 = tuplecorr_synth::MIX_T0;
        let decap = pcapng(&[(o_decap, b_decap, &points[0])], t0);
        let node = pcapng(&[(o_egress, b_egress, &points[1]), (o_backend, b_backend, &points[2])], t0);
        check(&decap, &node)?;
    }
}
