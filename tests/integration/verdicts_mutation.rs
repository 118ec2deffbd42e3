//! Verdicts a wrong matcher or verdict rule would change, one behaviour per test
//! (issue 20: the mutants of `correlate/` and `verdict/` that no test caught).
//! Each test generates captures with `tuplecorr_synth`, edits packets where the
//! generator has no knob (TTL, MSS, dropped or cut packets), writes them to a
//! temporary folder, runs the binary with `--format json` and asserts on the JSON,
//! which is the output contract.

use serde_json::Value;
use std::net::IpAddr;
use std::process::Command;
use tuplecorr_synth::{self as synth, Captures, Echo, Hop, Path, Point, Tcp, Udp};

const T0: i64 = 1_795_995_638_000_000_000;
const HOP_NS: i64 = 100_000;
const LABELS: [&str; 4] = ["a", "b", "c", "d"];

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

fn client() -> (IpAddr, u16) {
    (ip("198.18.90.42"), 40_001)
}

fn server() -> (IpAddr, u16) {
    (ip("198.19.96.10"), 80)
}

/// `n` points with these clock offsets, joined by routed hops of `HOP_NS`.
fn path(offsets_ns: &[i64], hop: Hop) -> Path {
    let points = offsets_ns.iter().map(|&o| Point { clock_offset_ns: o, ..Point::default() }).collect();
    let delay_ns = if hop.delay_ns == 0 { HOP_NS } else { hop.delay_ns };
    let hops = vec![Hop { delay_ns, routed: true, ..hop }; offsets_ns.len() - 1];
    Path::new(points, hops)
}

/// Writes every point as `<label>.pcap` and runs `tuplecorr --format json`.
fn run(caps: &Captures, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args: Vec<String> = vec!["--format".into(), "json".into(), "-q".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    for (k, pkts) in caps.points.iter().enumerate() {
        let file = dir.path().join(format!("{}.pcap", LABELS[k]));
        let mut out = Vec::new();
        synth::write_pcap(&mut out, 65535, pkts).expect("in memory");
        std::fs::write(&file, out).expect("write capture");
        args.push(format!("{}={}", LABELS[k], file.display()));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(&args).output().expect("runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

fn requests(v: &Value) -> &Vec<Value> {
    v["requests"].as_array().expect("requests")
}

/// The only request of a run.
fn only(v: &Value) -> &Value {
    let r = requests(v);
    assert_eq!(r.len(), 1, "{v:#}");
    &r[0]
}

fn seen(req: &Value) -> Vec<bool> {
    req["captures"].as_array().unwrap().iter().map(|h| h["seen"].as_bool().unwrap()).collect()
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

// ---- raw IPv4 packet edits (synth writes raw IP) ----

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;

fn ihl(p: &[u8]) -> usize {
    usize::from(p[0] & 0x0f) * 4
}

fn proto(p: &[u8]) -> u8 {
    p[9]
}

fn src_port(p: &[u8]) -> u16 {
    let t = ihl(p);
    u16::from_be_bytes([p[t], p[t + 1]])
}

fn dst_port(p: &[u8]) -> u16 {
    let t = ihl(p);
    u16::from_be_bytes([p[t + 2], p[t + 3]])
}

fn tcp_flags(p: &[u8]) -> u8 {
    p[ihl(p) + 13]
}

fn tcp_payload_len(p: &[u8]) -> usize {
    let t = ihl(p);
    p.len() - t - usize::from(p[t + 12] >> 4) * 4
}

/// A server → client packet of the test's server (port 80 / 53 as source).
fn from_server(p: &[u8]) -> bool {
    matches!(proto(p), 6 | 17) && matches!(src_port(p), 80 | 53 | 8080)
}

/// Applies `edit` to every packet of point `k`, then fixes checksums.
fn edit(caps: &mut Captures, k: usize, mut edit: impl FnMut(&mut Vec<u8>)) {
    for (_, pkt, orig) in &mut caps.points[k] {
        edit(pkt);
        synth::fix_ipv4_checksums(pkt);
        *orig = pkt.len() as u32;
    }
}

// ---- how a TCP request ended (outcome.rs) ----

fn one_tcp(n: usize) -> Captures {
    let mut p = path(&vec![0; n], Hop::default());
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    p.finish()
}

fn outcome_kind(v: &Value) -> &str {
    str_of(&only(v)["outcome"]["kind"])
}

#[test]
fn server_data_without_any_fin_is_completed() {
    let mut caps = one_tcp(2);
    for pts in &mut caps.points {
        pts.retain(|(_, p, _)| tcp_flags(p) & FIN == 0);
    }
    let v = run(&caps, &[]);
    assert_eq!(outcome_kind(&v), "completed", "{v:#}");
    assert!(only(&v)["outcome"]["by"].is_null());
}

#[test]
fn a_reset_after_server_data_is_completed_not_reset() {
    let mut caps = one_tcp(2);
    for k in 0..2 {
        edit(&mut caps, k, |p| {
            if from_server(p) && tcp_flags(p) & FIN != 0 {
                let at = ihl(p) + 13;
                p[at] = RST | ACK;
            }
        });
    }
    let v = run(&caps, &[]);
    assert_eq!(outcome_kind(&v), "completed", "{v:#}");
}

#[test]
fn a_reset_before_any_server_data_is_reset_by_the_server() {
    let mut p = path(&[0, 0], Hop::default());
    let mut t = Tcp::new(client(), server(), T0, 7);
    t.reset = true;
    p.tcp(&t);
    let v = run(&p.finish(), &[]);
    let o = &only(&v)["outcome"];
    assert_eq!(str_of(&o["kind"]), "reset", "{v:#}");
    assert_eq!(str_of(&o["by"]), "198.19.96.10");
    assert_eq!(str_of(&o["origin"]), "b");
}

#[test]
fn a_capture_cut_in_the_middle_of_the_response_is_completed() {
    let mut caps = one_tcp(2);
    for pts in &mut caps.points {
        let first_data = pts
            .iter()
            .position(|(_, p, _)| from_server(p) && tcp_payload_len(p) > 0)
            .expect("the response starts");
        pts.truncate(first_data + 1);
    }
    let v = run(&caps, &[]);
    assert_eq!(outcome_kind(&v), "completed", "{v:#}");
}

#[test]
fn a_handshake_without_data_or_fin_is_handshake_only() {
    let mut caps = one_tcp(2);
    for pts in &mut caps.points {
        pts.retain(|(_, p, _)| !from_server(p) || tcp_flags(p) & SYN != 0);
    }
    let v = run(&caps, &[]);
    assert_eq!(outcome_kind(&v), "handshake-only", "{v:#}");
}

// ---- the reply path (reply.rs) ----

/// One TCP request through `replied.len()` points, its replies kept only where true.
fn reply_path(replied: &[bool]) -> Value {
    let mut caps = one_tcp(replied.len());
    for (k, &keep) in replied.iter().enumerate() {
        if !keep {
            caps.points[k].retain(|(_, p, _)| !from_server(p));
        }
    }
    let v = run(&caps, &[]);
    assert_eq!(seen(only(&v)), vec![true; replied.len()], "{v:#}");
    only(&v)["reply"].clone()
}

#[test]
fn replies_seen_at_some_captures_of_three_or_more_give_the_path_where_they_stopped() {
    // (replies seen per capture, path, lost_between, bypassed)
    type Case<'a> = (&'a [bool], &'a str, Option<&'a str>, Option<&'a str>);
    let cases: [Case; 9] = [
        (&[true, false, false], "same-path", None, None),
        (&[true, true, false], "same-path", None, None),
        (&[true, true, true], "same-path", None, None),
        (&[false, true, true], "reply-lost", Some("a->b"), None),
        (&[false, false, true], "reply-lost", Some("b->c"), None),
        (&[true, false, true], "bypassed", None, Some("b")),
        (&[true, false, false, true], "bypassed", None, Some("b")),
        (&[true, true, false, true], "bypassed", None, Some("c")),
        (&[false, false, false], "no-reply", None, None),
    ];
    for (replied, path, lost, bypassed) in cases {
        let r = reply_path(replied);
        assert_eq!(str_of(&r["path"]), path, "{replied:?}: {r}");
        assert_eq!(r["lost_between"].as_str(), lost, "{replied:?}: {r}");
        assert_eq!(r["bypassed"].as_str(), bypassed, "{replied:?}: {r}");
        assert_eq!(str_of(&r["reached"]), LABELS[replied.len() - 1]);
    }
}

// ---- one-to-one assignment (assign.rs) ----

/// Copies the request's packets at point `k` as another connection from client
/// port `port`, `lag_ns` later, both sequence spaces moved by `shift` (a new ISN
/// each way, so not a copy of the same connection): the same bytes and IP IDs.
fn copy_as_new_connection(caps: &mut Captures, k: usize, port: u16, lag_ns: i64, shift: u32) {
    let mut copies = Vec::new();
    for (t, p, _) in &caps.points[k] {
        if proto(p) != 6 {
            continue;
        }
        let mut q = p.clone();
        let h = ihl(&q);
        let at = if from_server(&q) { h + 2 } else { h };
        q[at..at + 2].copy_from_slice(&port.to_be_bytes());
        let seq = u32::from_be_bytes(q[h + 4..h + 8].try_into().unwrap()).wrapping_add(shift);
        q[h + 4..h + 8].copy_from_slice(&seq.to_be_bytes());
        if tcp_flags(&q) & ACK != 0 {
            let ack = u32::from_be_bytes(q[h + 8..h + 12].try_into().unwrap()).wrapping_add(shift);
            q[h + 8..h + 12].copy_from_slice(&ack.to_be_bytes());
        }
        synth::fix_ipv4_checksums(&mut q);
        let len = q.len() as u32;
        copies.push((t + lag_ns, q, len));
    }
    caps.points[k].extend(copies);
    caps.points[k].sort_by_key(|(t, _, _)| *t);
}

#[test]
fn an_uneven_tie_two_equal_targets_for_one_request_is_ambiguous_with_both_named() {
    // Behind a terminating proxy two new connections at b carry the request's
    // bytes while it is alive and score the same against it; each has no other
    // candidate (the tie is on the source side only). Nothing separates them: no guess.
    let mut p = path(&[0, 0], Hop { proxy: Some((ip("198.19.3.17"), 50_000)), ..Hop::default() });
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    let mut caps = p.finish();
    copy_as_new_connection(&mut caps, 1, 50_002, 30_000, 0x1000_0000);
    let v = run(&caps, &[]);
    let m = &only(&v)["matches"][0];
    assert_eq!(str_of(&m["strength"]), "ambiguous", "{v:#}");
    let cands = m["candidates"].as_array().expect("the tied candidates are named");
    assert_eq!(cands.len(), 2, "{v:#}");
    assert!(cands.iter().any(|c| str_of(c).contains(":50000")), "{cands:?}");
    assert!(cands.iter().any(|c| str_of(c).contains(":50002")), "{cands:?}");
}

#[test]
fn a_second_connection_carrying_the_same_bytes_does_not_take_the_matched_request() {
    // At b, besides the request itself (same ISN), another connection from
    // another port sends the same bytes while it is alive: it may compete, but
    // a request is assigned once, to its best candidate; the other stays unmatched.
    let mut p = path(&[0, 0], Hop::default());
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    let mut other = Tcp::new((client().0, 40_900), server(), T0 + 60_000, 7);
    other.client_isn ^= 0x0101_0101;
    other.server_isn ^= 0x0101_0101;
    other.ip_id ^= 0x5555;
    p.background_tcp(1, &other);
    let caps = p.finish();
    let v = run(&caps, &["--all"]);
    let r = only(&v);
    assert_eq!(str_of(&r["matches"][0]["strength"]), "strong", "{v:#}");
    assert_eq!(str_of(&r["captures"][1]["client"]), "198.18.90.42:40001", "{v:#}");
    let unmatched = &v["unmatched"][0];
    assert_eq!(unmatched["count"], 1, "{v:#}");
    assert_eq!(str_of(&unmatched["flows"][0]["client"]), "198.18.90.42:40900", "{v:#}");
    // Its packets both ways, as written at b.
    let written = caps.points[1]
        .iter()
        .filter(|(_, p, _)| proto(p) == 6 && (src_port(p) == 40_900 || dst_port(p) == 40_900))
        .count();
    assert_eq!(unmatched["flows"][0]["packets"], written as u64, "{v:#}");
}

/// Empty UDP datagrams (no bytes to compare, no ISN): only time can pair them.
fn empty_udp(p: &mut Path, port: u16, at_ns: i64) {
    p.udp(&Udp {
        client: (client().0, port),
        server: (server().0, 53),
        start_ns: at_ns,
        request: Vec::new(),
        response: None,
        ip_id: 0, // no IP ID either
    });
}

#[test]
fn a_lone_request_without_strong_evidence_is_matched_weak_by_time() {
    let mut p = path(&[0, 0], Hop::default());
    empty_udp(&mut p, 5000, T0);
    let v = run(&p.finish(), &[]);
    let r = only(&v);
    assert_eq!(seen(r), vec![true, true], "{v:#}");
    let m = &r["matches"][0];
    assert_eq!(str_of(&m["strength"]), "weak", "{v:#}");
    let ev: Vec<&str> = m["evidence"].as_array().unwrap().iter().map(str_of).collect();
    assert!(ev.contains(&"time"), "{ev:?}");
    assert_eq!(v["unmatched"][0]["count"], 0);
}

#[test]
fn weak_matches_need_exactly_one_candidate_inside_the_tolerance_from_both_sides() {
    // Two empty datagrams 300 µs apart, both through a SNAT.
    let mut p = path(&[0, 0], Hop { snat: Some(ip("198.19.3.17")), ..Hop::default() });
    empty_udp(&mut p, 5000, T0);
    empty_udp(&mut p, 5001, T0 + 300_000);
    let caps = p.finish();
    // 1 ms tolerance: each sees both → neither is paired.
    let v = run(&caps, &["--tolerance", "1"]);
    assert_eq!(requests(&v).len(), 2);
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, false], "{v:#}");
    }
    assert_eq!(v["unmatched"][0]["count"], 2);
    // 0.1 ms tolerance: each sees only its own → both paired, weak.
    let v = run(&caps, &["--tolerance", "0.1"]);
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, true], "{v:#}");
        assert_eq!(str_of(&r["matches"][0]["strength"]), "weak");
    }
    // One datagram lost before b: both sources see the one left. Nothing says
    // whose it is, so neither is guessed weak: both are reported with it as
    // `ambiguous`, naming it (a collision, never "seen only at a").
    let mut caps = caps;
    let lost = caps.points[1].iter().position(|(_, p, _)| src_port(p) == 5001).unwrap();
    caps.points[1].remove(lost);
    let v = run(&caps, &["--tolerance", "1"]);
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, true], "{v:#}");
        assert_eq!(str_of(&r["matches"][0]["strength"]), "ambiguous", "{v:#}");
        assert_eq!(r["matches"][0]["candidates"].as_array().unwrap().len(), 1, "{v:#}");
    }
    assert_eq!(v["unmatched"][0]["count"], 0);
}

#[test]
fn a_weak_candidate_outside_the_tolerance_is_not_paired() {
    let mut p = path(&[0, 0], Hop { delay_ns: 3_000_000, ..Hop::default() });
    empty_udp(&mut p, 5000, T0);
    let caps = p.finish();
    let v = run(&caps, &["--tolerance", "1"]);
    assert_eq!(seen(only(&v)), vec![true, false], "{v:#}");
    let v = run(&caps, &["--tolerance", "5"]);
    assert_eq!(seen(only(&v)), vec![true, true], "{v:#}");
}

// ---- clocks (clock.rs) ----

fn capture(v: &Value, k: usize) -> &Value {
    &v["captures"][k]
}

fn offset_ms(v: &Value, k: usize) -> f64 {
    capture(v, k)["clock_offset_ms"].as_f64().unwrap()
}

fn method(v: &Value, k: usize) -> &str {
    str_of(&capture(v, k)["offset_method"])
}

/// `n` TCP requests `gap_ns` apart from consecutive client ports, each with
/// its own ISNs and bytes, shaped by `shape(i, request)`.
fn tcp_requests(p: &mut Path, n: u16, gap_ns: i64, shape: impl Fn(u16, &mut Tcp)) {
    for i in 0..n {
        let mut t =
            Tcp::new((client().0, 40_001 + i), server(), T0 + i64::from(i) * gap_ns, 7 + u32::from(i));
        shape(i, &mut t);
        p.tcp(&t);
    }
}

/// Three requests 1 s apart through points with these clock offsets.
fn three_requests(offsets_ns: &[i64]) -> Captures {
    let mut p = path(offsets_ns, Hop::default());
    tcp_requests(&mut p, 3, 1_000_000_000, |_, _| {});
    p.finish()
}

/// Every request seen everywhere, each hop's corrected start one hop after the previous.
fn assert_corrected_path(v: &Value) {
    for r in requests(v) {
        let hops = r["captures"].as_array().unwrap();
        assert!(hops.iter().all(|h| h["seen"] == true), "{r:#}");
        let times: Vec<&str> = hops.iter().map(|h| str_of(&h["time"])).collect();
        let raw: Vec<&str> = hops.iter().map(|h| str_of(&h["raw_time"])).collect();
        assert_eq!(times[0], raw[0]);
        for m in r["matches"].as_array().unwrap() {
            assert_eq!(str_of(&m["strength"]), "strong", "{r:#}");
        }
        // Corrected times are 100 µs apart: same second, increasing.
        let ns = |s: &str| -> i64 {
            let frac = s.rsplit('.').next().unwrap().trim_end_matches('Z');
            frac.parse::<i64>().unwrap()
        };
        for w in times.windows(2) {
            assert_eq!(ns(w[1]) - ns(w[0]), HOP_NS, "{times:?}");
        }
    }
}

#[test]
fn manual_offsets_at_every_later_capture_and_of_both_signs_correct_the_times() {
    let truth = [0, 2_500_000_000, -1_250_000_000, 750_000_000];
    let caps = three_requests(&truth);
    let v = run(&caps, &["--offset", "b=2.5", "--offset", "c=-1.25", "--offset", "d=0.75"]);
    for (k, t) in truth.iter().enumerate().skip(1) {
        assert_eq!(method(&v, k), "manual", "{v:#}");
        assert_eq!(offset_ms(&v, k), *t as f64 / 1e6);
    }
    assert_corrected_path(&v);
    // One-way delay on the corrected clocks.
    for b in v["boundaries"].as_array().unwrap() {
        assert_eq!(b["delay_ms"].as_f64(), Some(0.1), "{b}");
    }
    // Each manual value is used as given, with its sign and at its capture: a
    // wrong sign moves that capture's corrected times by twice the offset and
    // shows up as the one-way delay of the boundaries on either side of it.
    for (k, wrong) in [(1, "b=-2.5"), (2, "c=1.25"), (3, "d=-0.75")] {
        let mut args = vec!["--offset", "b=2.5", "--offset", "c=-1.25", "--offset", "d=0.75"];
        args[2 * k - 1] = wrong;
        let v = run(&caps, &args);
        let error_ms = -2.0 * truth[k] as f64 / 1e6; // given − true
        assert_eq!(offset_ms(&v, k), -truth[k] as f64 / 1e6, "{wrong}");
        let delays: Vec<f64> =
            v["boundaries"].as_array().unwrap().iter().map(|b| b["delay_ms"].as_f64().unwrap()).collect();
        for (i, d) in delays.iter().enumerate() {
            let want = if i + 1 == k {
                0.1 - error_ms
            } else if i == k {
                0.1 + error_ms
            } else {
                0.1
            };
            assert!((d - want).abs() < 1e-6, "{wrong}: boundary {i}: {d} ms, expected {want}");
        }
    }
}

#[test]
fn an_offset_for_the_first_capture_sets_the_reference_of_the_given_offsets() {
    // Capture a's clock runs 1 s ahead of b's and c's; the user gives offsets
    // against one reference clock. Estimates stay relative to capture 1, given
    // offsets are moved onto it, and every request is still followed.
    let caps = three_requests(&[1_000_000_000, 0, 0]);
    for (args, methods) in [
        (vec!["--offset", "a=1"], ["request-reply", "request-reply"]),
        (vec!["--offset", "a=1", "--offset", "b=0"], ["manual", "request-reply"]),
        (vec!["--offset", "a=1", "--offset", "c=0"], ["request-reply", "manual"]),
        (vec!["--offset", "a=1", "--offset", "b=0", "--offset", "c=0"], ["manual", "manual"]),
    ] {
        let v = run(&caps, &args);
        assert_eq!(method(&v, 0), "reference", "{args:?}");
        assert_eq!(offset_ms(&v, 0), 0.0, "{args:?}");
        for k in 1..3 {
            assert_eq!(method(&v, k), methods[k - 1], "{args:?}: {v:#}");
            assert_eq!(offset_ms(&v, k), -1000.0, "{args:?}: {v:#}");
        }
        assert_corrected_path(&v);
    }
    // The other sign.
    let caps = three_requests(&[-1_000_000_000, 0, 0]);
    let v = run(&caps, &["--offset", "a=-1", "--offset", "b=0"]);
    assert_eq!(offset_ms(&v, 1), 1000.0, "{v:#}");
    assert_eq!(offset_ms(&v, 2), 1000.0, "{v:#}");
    assert_corrected_path(&v);
}

#[test]
fn a_manual_offset_for_one_capture_leaves_the_others_estimated() {
    let truth = [0, 2_500_000_000, -1_250_000_000];
    let caps = three_requests(&truth);
    for (arg, manual) in [("b=2.5", 1), ("c=-1.25", 2)] {
        let v = run(&caps, &["--offset", arg]);
        let estimated = 3 - manual;
        assert_eq!(method(&v, manual), "manual", "{v:#}");
        assert_eq!(method(&v, estimated), "request-reply", "{v:#}");
        assert_eq!(offset_ms(&v, estimated), truth[estimated] as f64 / 1e6, "{arg}: {v:#}");
        assert_eq!(offset_ms(&v, manual), truth[manual] as f64 / 1e6);
        assert_corrected_path(&v);
    }
}

#[test]
fn estimated_offsets_of_both_signs_follow_the_path() {
    let truth = [0, -2_500_000_000, 1_250_000_000];
    let v = run(&three_requests(&truth), &[]);
    assert_eq!(method(&v, 0), "reference");
    for (k, t) in truth.iter().enumerate().skip(1) {
        assert_eq!(method(&v, k), "request-reply", "{v:#}");
        assert_eq!(offset_ms(&v, k), *t as f64 / 1e6, "{v:#}");
        assert_eq!(capture(&v, k)["offset_samples"], 3);
    }
    assert_corrected_path(&v);
}

#[test]
fn without_replies_the_offset_is_one_way_and_includes_the_delay() {
    let mut p = path(&[0, 700_000_000], Hop::default());
    tcp_requests(&mut p, 3, 1_000_000_000, |_, t| t.unanswered = true);
    let v = run(&p.finish(), &[]);
    assert_eq!(method(&v, 1), "one-way", "{v:#}");
    assert_eq!(offset_ms(&v, 1), 700.1);
    assert_eq!(capture(&v, 1)["offset_samples"], 3);
    assert!(v["boundaries"][0]["delay_ms"].is_null(), "{v:#}");
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, true]);
        assert_eq!(str_of(&r["outcome"]["kind"]), "no-reply");
    }
}

#[test]
fn a_manual_offset_with_one_way_samples_has_no_ntp_delay() {
    let mut p = path(&[0, 700_000_000], Hop::default());
    let mut t = Tcp::new(client(), server(), T0, 7);
    t.unanswered = true;
    p.tcp(&t);
    let v = run(&p.finish(), &["--offset", "b=0.7"]);
    assert_eq!(method(&v, 1), "manual");
    assert_eq!(offset_ms(&v, 1), 700.0);
    assert_eq!(v["boundaries"][0]["delay_ms"].as_f64(), Some(0.1), "{v:#}");
}

#[test]
fn requests_whose_first_syn_was_lost_between_captures_are_not_clock_samples() {
    // Two clean requests, three whose first SYN never reached b (b saw the
    // retransmission 1 s later): as samples they would move the median by 0.5 s.
    let truth = 400_000_000;
    let mut p = path(&[0, truth], Hop::default());
    tcp_requests(&mut p, 5, 3_000_000_000, |i, t| t.syn_retries = u32::from(i >= 2));
    let mut caps = p.finish();
    // Drop, at b, the first SYN of each retried connection.
    let mut dropped = std::collections::HashSet::new();
    caps.points[1].retain(|(_, p, _)| {
        let syn = proto(p) == 6 && tcp_flags(p) == SYN;
        let port = src_port(p);
        !(syn && (40_003..=40_005).contains(&port) && dropped.insert(port))
    });
    let v = run(&caps, &[]);
    assert_eq!(capture(&v, 1)["offset_samples"], 2, "{v:#}");
    assert_eq!(offset_ms(&v, 1), truth as f64 / 1e6, "{v:#}");
}

#[test]
fn samples_beyond_max_offset_are_not_used() {
    let caps = three_requests(&[0, 5_000_000_000]);
    let v = run(&caps, &[]);
    assert_eq!(offset_ms(&v, 1), 5000.0);
    assert_corrected_path(&v);
    // Beyond --max-offset the time-based estimate has no sample; the three
    // requests' ISNs pair them without time (issue 29): the same clock.
    let v = run(&caps, &["--max-offset", "2"]);
    assert_eq!(method(&v, 1), "time-free", "{v:#}");
    assert_eq!(capture(&v, 1)["offset_samples"], 3);
    assert_eq!(offset_ms(&v, 1), 5000.0);
    assert_corrected_path(&v);
    // One request alone is no time-free estimate: nothing is matched at b.
    let mut p = path(&[0, 5_000_000_000], Hop::default());
    tcp_requests(&mut p, 1, 1_000_000_000, |_, _| {});
    let v = run(&p.finish(), &["--max-offset", "2"]);
    assert_eq!(method(&v, 1), "none", "{v:#}");
    assert_eq!(capture(&v, 1)["offset_samples"], 0);
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, false], "{r:#}");
    }
}

// ---- rewrites and boundary traits (rewrite.rs) ----

#[test]
fn mss_clamped_on_one_boundary_only() {
    let mut caps = one_tcp(3);
    edit(&mut caps, 2, |p| {
        if proto(p) == 6 && tcp_flags(p) == SYN {
            let at = ihl(p) + 22; // MSS is the SYN's first option
            p[at..at + 2].copy_from_slice(&1400u16.to_be_bytes());
        }
    });
    let v = run(&caps, &[]);
    let b = v["boundaries"].as_array().unwrap();
    assert_eq!(b[0]["mss_clamped"], false, "{v:#}");
    assert_eq!(b[1]["mss_clamped"], true, "{v:#}");
}

#[test]
fn ttl_decrements_of_two_and_more_are_reported_per_boundary() {
    let mut caps = one_tcp(3);
    for (k, ttl) in [(0, 64u8), (1, 62), (2, 59)] {
        edit(&mut caps, k, |p| {
            if !from_server(p) {
                p[8] = ttl;
            }
        });
    }
    let v = run(&caps, &[]);
    let b = v["boundaries"].as_array().unwrap();
    assert_eq!(b[0]["ttl_decrement"], 2, "{v:#}");
    assert_eq!(b[1]["ttl_decrement"], 3, "{v:#}");
}

fn change(side: &Value) -> (String, String, String) {
    let c = side["changed"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{side}");
    (str_of(&c[0]["kind"]).into(), str_of(&c[0]["before"]).into(), str_of(&c[0]["after"]).into())
}

#[test]
fn dnat_and_snat_change_the_address_port_only_changes_keep_it() {
    let s = |kind: &str, before: &str, after: &str| (kind.to_string(), before.to_string(), after.to_string());
    // Destination: a new address (same port) is dnat; a new port only is port-only.
    for (dnat, want) in [
        ((ip("198.19.5.5"), 80), s("dnat", "198.19.96.10:80", "198.19.5.5:80")),
        ((server().0, 8080), s("port-only", "198.19.96.10:80", "198.19.96.10:8080")),
    ] {
        let mut p = path(&[0, 0], Hop { dnat: Some(dnat), ..Hop::default() });
        p.tcp(&Tcp::new(client(), server(), T0, 7));
        let v = run(&p.finish(), &[]);
        assert_eq!(change(&only(&v)["destination"]), want, "{v:#}");
        assert!(only(&v)["source"]["changed"].as_array().unwrap().is_empty());
        assert_eq!(v["boundaries"][0]["ports"], "kept");
    }
    // Source: a new address is snat; a new port only is port-only.
    for (hop, want, ports) in [
        (
            Hop { snat: Some(ip("198.19.3.17")), ..Hop::default() },
            s("snat", "198.18.90.42:40001", "198.19.3.17:40001"),
            "kept",
        ),
        (
            Hop { snat_port: Some(61_000), ..Hop::default() },
            s("port-only", "198.18.90.42:40001", "198.18.90.42:61000"),
            "remapped",
        ),
    ] {
        let mut p = path(&[0, 0], hop);
        p.tcp(&Tcp::new(client(), server(), T0, 7));
        let v = run(&p.finish(), &[]);
        assert_eq!(change(&only(&v)["source"]), want, "{v:#}");
        assert!(only(&v)["destination"]["changed"].as_array().unwrap().is_empty());
        assert_eq!(v["boundaries"][0]["ports"], ports);
    }
}

// ---- numbering, Community ID, Wireshark filter (verdict/mod.rs) ----

#[test]
fn requests_are_numbered_from_one_in_time_order() {
    let v = run(&three_requests(&[0, 0]), &[]);
    let numbers: Vec<u64> = requests(&v).iter().map(|r| r["request"].as_u64().unwrap()).collect();
    assert_eq!(numbers, vec![1, 2, 3]);
    let clients: Vec<&str> = requests(&v).iter().map(|r| str_of(&r["captures"][0]["client"])).collect();
    assert_eq!(clients, vec!["198.18.90.42:40001", "198.18.90.42:40002", "198.18.90.42:40003"]);
}

/// Community ID v1 (seed 0), from the spec: SHA-1 over seed, the ordered
/// endpoints, protocol, a zero pad and ports (ICMP: type and its counterpart
/// code), base64.
pub(crate) fn community_id(proto: u8, a: IpAddr, pa: u16, b: IpAddr, pb: u16) -> String {
    let bytes = |x: IpAddr| match x {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    };
    let (mut a, mut pa, mut b, mut pb) = (bytes(a), pa, bytes(b), pb);
    // ICMP: the "ports" are the type and its counterpart (echo 8↔0, 128↔129).
    match (proto, pa) {
        (1, 8) => pb = 0,
        (58, 128) => pb = 129,
        _ => {}
    }
    if (&a, pa) > (&b, pb) {
        std::mem::swap(&mut a, &mut b);
        std::mem::swap(&mut pa, &mut pb);
    }
    let mut h = sha1_smol::Sha1::new();
    h.update(&[0, 0]);
    h.update(&a);
    h.update(&b);
    h.update(&[proto, 0]);
    h.update(&pa.to_be_bytes());
    h.update(&pb.to_be_bytes());
    format!("1:{}", base64(&h.digest().bytes()))
}

fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[test]
fn community_ids_and_wireshark_filters_carry_each_protocol_number() {
    let c = client().0;
    let c6 = ip("2001:db8::42");
    let s6 = ip("2001:db8:1::10");
    let mut p = path(&[0, 0], Hop::default());
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    p.udp(&Udp {
        client: (c, 40_053),
        server: (server().0, 53),
        start_ns: T0 + 1_000_000_000,
        request: b"a query long enough to fingerprint, forty bytes".to_vec(),
        response: Some(b"answer".to_vec()),
        ip_id: 99,
    });
    let echo = |client, server, at| Echo {
        client,
        server,
        start_ns: at,
        id: 777,
        count: 1,
        payload: b"ping payload".to_vec(),
        answered: true,
    };
    p.echo(&echo(c, server().0, T0 + 2_000_000_000));
    p.echo(&echo(c6, s6, T0 + 3_000_000_000));
    let v = run(&p.finish(), &[]);
    let r = requests(&v);
    assert_eq!(r.len(), 4, "{v:#}");
    let want = [
        (
            "tcp",
            community_id(6, c, 40_001, server().0, 80),
            "ip.addr==198.18.90.42 && ip.addr==198.19.96.10 && tcp.port==40001 && tcp.port==80".to_string(),
        ),
        (
            "udp",
            community_id(17, c, 40_053, server().0, 53),
            "ip.addr==198.18.90.42 && ip.addr==198.19.96.10 && udp.port==40053 && udp.port==53".to_string(),
        ),
        (
            "icmp",
            community_id(1, c, 8, server().0, 0),
            "ip.addr==198.18.90.42 && ip.addr==198.19.96.10 && icmp.ident==777".to_string(),
        ),
        (
            "icmp",
            community_id(58, c6, 128, s6, 0),
            "ipv6.addr==2001:db8::42 && ipv6.addr==2001:db8:1::10 && icmpv6.echo.identifier==777".to_string(),
        ),
    ];
    for (req, (proto, cid, filter)) in r.iter().zip(want) {
        assert_eq!(str_of(&req["proto"]), proto);
        for hop in req["captures"].as_array().unwrap() {
            assert_eq!(str_of(&hop["community_id"]), cid, "{req:#}");
            assert_eq!(str_of(&hop["wireshark_filter"]), filter, "{req:#}");
        }
    }
}

#[test]
fn udp_and_echo_are_completed_only_when_something_came_back() {
    let mut p = path(&[0, 0], Hop::default());
    for (i, answered) in [(0u16, true), (1, false)] {
        p.udp(&Udp {
            client: (client().0, 41_000 + i),
            server: (server().0, 53),
            start_ns: T0 + i64::from(i) * 1_000_000_000,
            request: format!("a query long enough to fingerprint, number {i}").into_bytes(),
            response: answered.then(|| b"answer".to_vec()),
            ip_id: 100 + i,
        });
        p.echo(&Echo {
            client: client().0,
            server: server().0,
            start_ns: T0 + 5_000_000_000 + i64::from(i) * 1_000_000_000,
            id: 700 + i,
            count: 1,
            payload: format!("ping payload {i}").into_bytes(),
            answered,
        });
    }
    let v = run(&p.finish(), &[]);
    let kinds: Vec<(&str, &str)> =
        requests(&v).iter().map(|r| (str_of(&r["proto"]), str_of(&r["outcome"]["kind"]))).collect();
    assert_eq!(
        kinds,
        vec![("udp", "completed"), ("udp", "no-reply"), ("icmp", "completed"), ("icmp", "no-reply")],
        "{v:#}"
    );
}

#[test]
fn an_unmatched_echo_is_listed_by_address_with_its_packets() {
    let mut p = path(&[0, 0], Hop::default());
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    let mut caps = p.finish();
    let mut only_b = Path::new(vec![Point::default()], Vec::new());
    only_b.echo(&Echo {
        client: ip("198.18.7.7"),
        server: server().0,
        start_ns: T0 + 500_000,
        id: 4242,
        count: 2,
        payload: b"seen at b only".to_vec(),
        answered: true,
    });
    caps.points[1].extend(only_b.finish().points.remove(0));
    caps.points[1].sort_by_key(|(t, _, _)| *t);
    let v = run(&caps, &["--all"]);
    let u = &v["unmatched"][0];
    assert_eq!(u["count"], 1, "{v:#}");
    assert_eq!(str_of(&u["flows"][0]["proto"]), "icmp");
    assert_eq!(str_of(&u["flows"][0]["client"]), "198.18.7.7", "{v:#}");
    assert_eq!(str_of(&u["flows"][0]["server"]), "198.19.96.10", "{v:#}");
    assert_eq!(u["flows"][0]["packets"], 4, "{v:#}");
}

#[test]
fn a_shifted_sequence_space_is_matched_and_explained() {
    for (shift, shifted) in [(0x0bad_cafe, true), (0, false)] {
        let mut p = path(&[0, 0], Hop { seq_shift: shift, ..Hop::default() });
        p.tcp(&Tcp::new(client(), server(), T0, 7));
        let v = run(&p.finish(), &[]);
        let r = only(&v);
        assert_eq!(seen(r), vec![true, true], "{v:#}");
        let ev: Vec<&str> = r["matches"][0]["evidence"].as_array().unwrap().iter().map(str_of).collect();
        assert_eq!(ev.contains(&"seq-shift"), shifted, "{ev:?}");
        assert_eq!(v["boundaries"][0]["seq_shift"], shifted);
        assert_eq!(str_of(&r["explanation"]).contains("sequence numbers shifted"), shifted, "{r:#}");
    }
}

#[test]
fn a_capture_that_missed_the_syn_has_no_rtt_for_that_request() {
    let mut caps = one_tcp(2);
    caps.points[1].retain(|(_, p, _)| tcp_flags(p) != SYN);
    let v = run(&caps, &[]);
    let r = only(&v);
    assert_eq!(seen(r), vec![true, true], "{v:#}");
    assert!(r["captures"][0]["rtt_ms"].as_f64().is_some_and(|x| x > 0.0), "{r:#}");
    assert!(r["captures"][1]["rtt_ms"].is_null(), "{r:#}");
}

#[test]
fn a_capture_that_saw_only_the_server_side_gives_no_ttl_decrement() {
    let mut caps = one_tcp(2);
    caps.points[1].retain(|(_, p, _)| from_server(p));
    let v = run(&caps, &[]);
    let r = only(&v);
    assert_eq!(seen(r), vec![true, true], "{v:#}");
    assert!(v["boundaries"][0]["ttl_decrement"].is_null(), "{v:#}");
}

#[test]
fn an_offset_is_estimated_from_an_earlier_capture_when_the_neighbour_shares_nothing() {
    // b (clock +1 s) sees none of the requests; c (clock +3 s) is estimated
    // against a, and no one-way delay is claimed for a boundary not measured.
    let truth = [0, 1_000_000_000, 3_000_000_000];
    let mut p = path(&truth, Hop::default());
    tcp_requests(&mut p, 3, 1_000_000_000, |_, t| t.only_at = Some(vec![0, 2]));
    let caps = p.finish();
    let v = run(&caps, &[]);
    assert_eq!(method(&v, 1), "none", "{v:#}");
    assert_eq!(method(&v, 2), "request-reply", "{v:#}");
    assert_eq!(offset_ms(&v, 2), 3000.0, "{v:#}");
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, false, true], "{r:#}");
    }
    for b in v["boundaries"].as_array().unwrap() {
        assert!(b["delay_ms"].is_null(), "{b}");
    }
    // The same with c's offset given: still no delay for b->c.
    let v = run(&caps, &["--offset", "c=3"]);
    assert_eq!(method(&v, 2), "manual");
    assert!(v["boundaries"][1]["delay_ms"].is_null(), "{v:#}");
    for r in requests(&v) {
        assert_eq!(seen(r), vec![true, false, true], "{r:#}");
    }
}

#[test]
fn a_capture_with_no_clock_samples_keeps_its_neighbours_offset() {
    // a and b share TCP requests (clock samples); c sees only an empty UDP
    // datagram (no key for a sample): c is assumed on b's clock, and that
    // lets the datagram be followed to c.
    let truth = [0, 2_000_000_000, 2_000_000_000];
    let mut p = path(&truth, Hop::default());
    tcp_requests(&mut p, 3, 1_000_000_000, |_, t| t.only_at = Some(vec![0, 1]));
    empty_udp(&mut p, 5000, T0 + 5_000_000_000);
    let mut caps = p.finish();
    // Requests 2 and 3 recorded 20 and 60 µs late at b: samples o, o+20, o+60
    // µs, so b's offset is o + 20 µs with a spread (MAD) of 20 µs.
    for (t, pkt, _) in &mut caps.points[1] {
        if proto(pkt) == 6 {
            let port = if from_server(pkt) { dst_port(pkt) } else { src_port(pkt) };
            *t += match port {
                40_002 => 20_000,
                40_003 => 60_000,
                _ => 0,
            };
        }
    }
    let v = run(&caps, &[]);
    assert_eq!(offset_ms(&v, 1), 2000.02, "{v:#}");
    assert_eq!(capture(&v, 1)["offset_spread_ms"], 0.02, "{v:#}");
    assert_eq!(method(&v, 2), "none", "{v:#}");
    assert_eq!(offset_ms(&v, 2), 2000.02, "{v:#}");
    assert_eq!(capture(&v, 2)["offset_spread_ms"], 0.02, "{v:#}");
    let udp: Vec<&Value> = requests(&v).iter().filter(|r| r["proto"] == "udp").collect();
    assert_eq!(udp.len(), 1);
    assert_eq!(seen(udp[0]), vec![true, true, true], "{v:#}");
}

#[test]
fn a_tie_on_the_target_side_is_ambiguous_for_every_request_that_shares_the_flow() {
    // Two connections at a carry the same bytes (another port, other ISNs);
    // behind a terminating proxy the one new connection at b scores the same
    // against both. Nothing tells them apart, so neither is guessed: both
    // requests are reported with b's one connection, both `ambiguous`, each
    // naming it (never one silently "seen only at a").
    let mut p = path(&[0, 0], Hop { proxy: Some((ip("198.19.3.17"), 50_000)), ..Hop::default() });
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    let mut caps = p.finish();
    copy_as_new_connection(&mut caps, 0, 40_002, 30_000, 0x1000_0000);
    let v = run(&caps, &[]);
    let r = requests(&v);
    assert_eq!(r.len(), 2, "{v:#}");
    for q in r {
        assert_eq!(seen(q), vec![true, true], "{v:#}");
        assert_eq!(str_of(&q["captures"][1]["client"]), "198.19.3.17:50000", "{v:#}");
        let m = &q["matches"][0];
        assert_eq!(str_of(&m["strength"]), "ambiguous", "{v:#}");
        let cands: Vec<&str> = m["candidates"].as_array().unwrap().iter().map(str_of).collect();
        assert_eq!(cands.len(), 1, "{v:#}");
        assert!(cands[0].starts_with("b 198.19.3.17:50000 -> "), "{cands:?}");
    }
}

#[test]
fn a_weaker_third_candidate_is_not_named_among_the_tied_ones() {
    // As the uneven tie, plus a third connection at b carrying the request's
    // bytes but another response: it competes with a lower score.
    let mut p = path(&[0, 0], Hop { proxy: Some((ip("198.19.3.17"), 50_000)), ..Hop::default() });
    p.tcp(&Tcp::new(client(), server(), T0, 7));
    let mut weaker = Tcp::new((ip("198.19.3.17"), 50_009), server(), T0 + 20_000, 7);
    weaker.client_isn ^= 0x0202_0202;
    weaker.server_isn ^= 0x0202_0202;
    weaker.response = synth::response_body(99, 3000);
    p.background_tcp(1, &weaker);
    let mut caps = p.finish();
    copy_as_new_connection(&mut caps, 1, 50_002, 30_000, 0x1000_0000);
    let v = run(&caps, &[]);
    let m = &only(&v)["matches"][0];
    assert_eq!(str_of(&m["strength"]), "ambiguous", "{v:#}");
    let cands: Vec<&str> = m["candidates"].as_array().unwrap().iter().map(str_of).collect();
    assert_eq!(cands.len(), 2, "{cands:?}");
    assert!(cands.iter().all(|c| !c.contains(":50009")), "{cands:?}");
}

#[test]
fn a_flow_already_matched_strongly_is_not_offered_to_the_weak_pass() {
    // An empty datagram (nothing to compare, so it would pair with any UDP
    // flow in time) lost before b, next to a query that b saw: the query's
    // flow at b is taken by the query and must not be given to the empty one.
    let mut p = path(&[0, 0], Hop::default());
    empty_udp(&mut p, 5000, T0);
    p.udp(&Udp {
        client: (client().0, 5001),
        server: (server().0, 53),
        start_ns: T0 + 200_000,
        request: b"a query long enough to fingerprint, forty bytes".to_vec(),
        response: Some(b"answer".to_vec()),
        ip_id: 0,
    });
    let mut caps = p.finish();
    caps.points[1].retain(|(_, p, _)| src_port(p) != 5000);
    let v = run(&caps, &[]);
    let by_port = |port: &str| {
        requests(&v).iter().find(|r| str_of(&r["captures"][0]["client"]).ends_with(port)).unwrap()
    };
    assert_eq!(seen(by_port(":5001")), vec![true, true], "{v:#}");
    assert_eq!(seen(by_port(":5000")), vec![true, false], "{v:#}");
}

#[test]
fn the_weak_time_window_includes_both_of_its_edges() {
    // A lone empty datagram seen at b exactly 1 ms early (b's clock runs
    // 1.1 ms behind, the hop takes 0.1 ms) or exactly 1 ms late: paired with a
    // 1 ms tolerance, not with 0.999 ms.
    for (offsets, hop_ns) in [([0, -1_100_000], HOP_NS), ([0, 0], 1_000_000)] {
        let mut p = path(&offsets, Hop { delay_ns: hop_ns, ..Hop::default() });
        empty_udp(&mut p, 5000, T0);
        let caps = p.finish();
        let v = run(&caps, &["--tolerance", "1"]);
        assert_eq!(seen(only(&v)), vec![true, true], "{offsets:?} {hop_ns}: {v:#}");
        assert_eq!(str_of(&only(&v)["matches"][0]["strength"]), "weak");
        let v = run(&caps, &["--tolerance", "0.999"]);
        assert_eq!(seen(only(&v)), vec![true, false], "{offsets:?} {hop_ns}: {v:#}");
    }
}

#[test]
fn a_sample_exactly_at_max_offset_is_used() {
    // b's clock runs 1.9999 s ahead and the hop takes 0.1 ms: b1 − a1 is 2 s exactly.
    let caps = three_requests(&[0, 1_999_900_000]);
    let v = run(&caps, &["--max-offset", "2"]);
    assert_eq!(method(&v, 1), "request-reply", "{v:#}");
    assert_eq!(offset_ms(&v, 1), 1999.9, "{v:#}");
    assert_corrected_path(&v);
    // Just beyond it: no time-based sample; the ISNs pair them without time.
    let v = run(&caps, &["--max-offset", "1.999999999"]);
    assert_eq!(method(&v, 1), "time-free", "{v:#}");
}

#[test]
fn a_reply_sample_beyond_max_offset_is_not_used_even_when_the_request_sample_is_within() {
    // b missed the SYN-ACK of requests 2 and 3: its first reply packet is the
    // response, ~0.4 ms later, so a2 − b2 lies beyond a 0.2 ms --max-offset
    // while b1 − a1 (0.1 ms) does not; only request 1 is an NTP sample.
    let mut caps = three_requests(&[0, 0]);
    caps.points[1].retain(|(_, p, _)| {
        !(from_server(p) && tcp_flags(p) == SYN | ACK && matches!(dst_port(p), 40_002 | 40_003))
    });
    let v = run(&caps, &["--max-offset", "0.0002"]);
    assert_eq!(method(&v, 1), "request-reply", "{v:#}");
    assert_eq!(capture(&v, 1)["offset_samples"], 1, "{v:#}");
    assert_eq!(offset_ms(&v, 1), 0.0, "{v:#}");
}

// ---- replies from elsewhere (stray.rs, issue 12 item 4) ----

/// Rewrites the source of every server → client packet at point `k` to `from`.
fn replies_from(caps: &mut Captures, k: usize, from: (IpAddr, u16)) {
    let IpAddr::V4(a) = from.0 else { unreachable!("IPv4 test") };
    edit(caps, k, |p| {
        if from_server(p) {
            p[12..16].copy_from_slice(&a.octets());
            let t = ihl(p);
            p[t..t + 2].copy_from_slice(&from.1.to_be_bytes());
        }
    });
}

/// The request whose client at capture 1 is the test client.
fn the_request(v: &Value) -> &Value {
    let c = format!("{}:{}", client().0, client().1);
    requests(v).iter().find(|r| r["captures"][0]["client"] == c.as_str()).unwrap_or_else(|| panic!("{v:#}"))
}

#[test]
fn a_reply_that_skips_the_un_dnat_is_linked_to_the_request_as_an_unexpected_source() {
    // a -> b is a DNAT 198.19.200.10:80 -> 198.19.96.10:8080; at a the replies
    // still come from the backend's own endpoint (not translated back)
    let hop = Hop { dnat: Some((ip("198.19.96.10"), 8080)), ..Hop::default() };
    let mut p = path(&[0, 0], hop);
    p.tcp(&Tcp::new(client(), (ip("198.19.200.10"), 80), T0, 7));
    let mut caps = p.finish();
    replies_from(&mut caps, 0, (ip("198.19.96.10"), 8080));
    // what a client does with it: no handshake, only SYN retransmissions and SYN-ACKs
    for pts in &mut caps.points {
        pts.retain(|(_, p, _)| tcp_flags(p) & SYN != 0);
    }
    let v = run(&caps, &[]);
    let r = the_request(&v);
    let u = &r["reply"]["unexpected_source"];
    assert_eq!(
        (str_of(&u["from"]), str_of(&u["seen_at"]), str_of(&u["packet"])),
        ("198.19.96.10:8080", "a", "syn-ack"),
        "{r:#}"
    );
    assert_eq!(str_of(&r["reply"]["path"]), "reply-lost", "{v:#}");
    assert_eq!(
        requests(&v).len(),
        1,
        "the stray SYN-ACK at a is reported on the request, not as its own: {v:#}"
    );
    let text = str_of(&r["explanation"]);
    assert!(
        text.contains("the client rejects a SYN-ACK from 198.19.96.10:8080: it sent to 198.19.200.10:80 — reply not translated back"),
        "{text}"
    );
    // untouched, the same request has none
    let mut p = path(&[0, 0], Hop { dnat: Some((ip("198.19.96.10"), 8080)), ..Hop::default() });
    p.tcp(&Tcp::new(client(), (ip("198.19.200.10"), 80), T0, 7));
    let v = run(&p.finish(), &[]);
    assert!(only(&v)["reply"]["unexpected_source"].is_null(), "{v:#}");
}

#[test]
fn a_reply_only_flow_at_capture_1_that_no_request_names_stays_a_request() {
    // capture a saw only the server's packets of a connection (its SYN went another way)
    let mut p = path(&[0, 0], Hop::default());
    p.tcp(&Tcp::new(client(), (ip("198.19.96.10"), 80), T0, 7));
    let mut caps = p.finish();
    caps.points[0].retain(|(_, p, _)| from_server(p));
    // … and b saw none of it: a chain of one reply-only flow
    caps.points[1].clear();
    let v = run(&caps, &[]);
    assert_eq!(requests(&v).len(), 1, "{v:#}");
    assert_eq!(requests(&v)[0]["captures"][0]["client"], "198.18.90.42:40001", "{v:#}");
}

#[test]
fn a_datagram_answered_from_another_address_is_an_unexpected_source_at_every_point_first_one_named() {
    let mut p = path(&[0, 0], Hop::default());
    let server = (ip("198.19.96.10"), 53);
    p.udp(&Udp {
        client: client(),
        server,
        start_ns: T0,
        request: b"query".to_vec(),
        response: Some(b"answer".to_vec()),
        ip_id: 9,
    });
    let mut caps = p.finish();
    for k in 0..2 {
        replies_from(&mut caps, k, (ip("198.19.96.11"), 53));
    }
    let v = run(&caps, &[]);
    let r = the_request(&v);
    let u = &r["reply"]["unexpected_source"];
    assert_eq!(
        (str_of(&u["from"]), str_of(&u["seen_at"]), str_of(&u["packet"])),
        ("198.19.96.11:53", "a", "datagram"),
        "{r:#}"
    );
    assert_eq!(str_of(&r["reply"]["path"]), "no-reply");
    assert!(str_of(&r["explanation"])
        .contains("the client ignores a datagram from 198.19.96.11:53: it sent to 198.19.96.10:53"));
    // a reply from the right address but later than the request's time plus the slack is not linked
    let mut p = path(&[0, 0], Hop::default());
    p.udp(&Udp { client: client(), server, start_ns: T0, request: b"q".to_vec(), response: None, ip_id: 9 });
    p.udp(&Udp {
        client: (ip("198.19.96.11"), 53),
        server: client(),
        start_ns: T0 + 10_000_000_000,
        request: b"late".to_vec(),
        response: None,
        ip_id: 10,
    });
    let v = run(&p.finish(), &[]);
    assert!(the_request(&v)["reply"]["unexpected_source"].is_null(), "{v:#}");
}
