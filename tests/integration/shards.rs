//! Time shards (issue 16 item 2): for any shard boundaries, the union of the
//! shards' requests equals the whole run's, field by field, joined on the
//! documented key (protocol, client endpoint and first packet time at capture 1);
//! request numbers are each run's own. Lab scenarios (one file per point, so a
//! shard reads everything and only reports less), a generated set rotated into
//! several files per point (so shards skip files, with the clocks pinned by
//! `--clocks-from`), argument errors and an empty shard.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tuplecorr::drive::shard::Shard;
use tuplecorr::drive::Config;
use tuplecorr::read::NoProgress;
use tuplecorr::read::{CaptureSpec, Source};
use tuplecorr::report::to_wire;

/// The join key of a request across shards.
type Key = (String, String, String);

/// A report's requests by join key, each without its number (every run numbers its own).
fn keyed(report: &Value) -> BTreeMap<Key, Value> {
    let mut out = BTreeMap::new();
    for r in report["requests"].as_array().expect("requests") {
        let c1 = &r["captures"][0];
        let key = (
            r["proto"].as_str().unwrap().to_string(),
            c1["client"].as_str().unwrap_or("").to_string(),
            c1["raw_time"].as_str().unwrap().to_string(),
        );
        let mut r = r.clone();
        r.as_object_mut().unwrap().remove("request");
        assert!(out.insert(key.clone(), r).is_none(), "join key {key:?} is not unique");
    }
    out
}

/// The union of several shards' requests; a request in two shards is a failure.
fn union(shards: &[Value]) -> BTreeMap<Key, Value> {
    let mut all = BTreeMap::new();
    for s in shards {
        for (k, r) in keyed(s) {
            assert!(all.insert(k.clone(), r).is_none(), "request {k:?} reported by two shards");
        }
    }
    all
}

/// Asserts two keyed request sets are equal, naming the first difference.
fn assert_same(got: &BTreeMap<Key, Value>, want: &BTreeMap<Key, Value>, what: &str) {
    let missing: Vec<&Key> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<&Key> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "{what}: missing {missing:?}, extra {extra:?}");
    for (k, w) in want {
        assert_eq!(&got[k], w, "{what}: request {k:?} differs");
    }
}

fn ns_of(rfc3339: &str) -> i64 {
    tuplecorr::time::parse_rfc3339(rfc3339).unwrap()
}

/// Request start times at capture 1 (ns), sorted, from a report.
fn starts(report: &Value) -> Vec<i64> {
    let mut t: Vec<i64> = (report["requests"].as_array().unwrap().iter())
        .map(|r| ns_of(r["captures"][0]["raw_time"].as_str().unwrap()))
        .collect();
    t.sort_unstable();
    t
}

/// Boundary sets for requests starting at `t` (sorted): one boundary exactly on
/// a request's first packet; boundaries inside the busiest stretch (between two
/// requests 1 ns apart from one of them); uneven shards; one shard per request.
fn boundary_sets(t: &[i64]) -> Vec<Vec<i64>> {
    let (lo, hi) = (t[0] - 1_000_000_000, t[t.len() - 1] + 1_000_000_000);
    let mid = t[t.len() / 2];
    let mut sets =
        vec![vec![lo, hi], vec![lo, mid, hi], vec![lo, mid + 1, hi], vec![lo, t[0] + 1, mid - 1, hi]];
    // The narrowest gap between two requests: cut it in the middle and next to both.
    if t.len() > 2 {
        let i = (1..t.len()).min_by_key(|&i| t[i] - t[i - 1]).unwrap();
        let gap_mid = t[i - 1] + (t[i] - t[i - 1]) / 2;
        sets.push(vec![lo, t[i - 1], gap_mid.max(t[i - 1] + 1), t[i].max(gap_mid + 1), hi]);
    }
    // One request per shard (boundaries exactly on each first packet).
    let mut each: Vec<i64> = vec![lo];
    each.extend(t.iter().skip(1).copied());
    each.push(hi);
    sets.push(each);
    for s in &mut sets {
        s.dedup();
        assert!(s.windows(2).all(|w| w[0] < w[1]), "boundaries ascend: {s:?}");
    }
    sets
}

fn lab_config(name: &str, files: &[String], shard: Option<Shard>) -> Config {
    let dir = Path::new("testdata/lab").join(name);
    let captures = (files.iter())
        .map(|f| CaptureSpec {
            source: Source::Path(dir.join(f)),
            label: f.split('.').next().unwrap().to_string(),
        })
        .collect();
    Config { captures, quiet: true, shard, ..Config::default() }
}

/// The JSON report of a run as the binary writes it (shard filter included).
fn report_of(config: &Config) -> Value {
    let mut findings = tuplecorr::drive::pipeline::analyze(config, &NoProgress).expect("lab captures read");
    if let Some(shard) = &config.shard {
        tuplecorr::drive::shard::keep_requests(&mut findings, shard);
    }
    serde_json::to_value(to_wire::findings(&findings)).unwrap()
}

#[test]
fn lab_shards_union_to_the_whole_run_for_every_boundary_set() {
    let mut checked = 0;
    for (name, files) in crate::util::lab_scenarios() {
        let whole = report_of(&lab_config(&name, &files, None));
        let want = keyed(&whole);
        let t = starts(&whole);
        if t.is_empty() {
            continue;
        }
        for bounds in boundary_sets(&t) {
            let shards: Vec<Value> = (bounds.windows(2))
                .map(|w| {
                    let shard = Shard { start_ns: w[0], end_ns: w[1], margin_ns: 140_000_000_000 };
                    let r = report_of(&lab_config(&name, &files, Some(shard)));
                    for s in starts(&r) {
                        assert!(s >= w[0] && s < w[1], "{name}: a request outside its shard");
                    }
                    r
                })
                .collect();
            assert_same(&union(&shards), &want, &format!("{name} shards {bounds:?}"));
            checked += 1;
        }
        // Clocks pinned from the whole run's own report (split captures too: by point label).
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("clocks.json");
        std::fs::write(&report, serde_json::to_vec(&whole).unwrap()).unwrap();
        let pinned = tuplecorr::compare::load::pinned_clocks(&report).unwrap();
        let config = |shard| Config { clocks_from: Some(pinned.clone()), ..lab_config(&name, &files, shard) };
        let pinned_whole = report_of(&config(None));
        let said = pinned_whole["warnings"].to_string();
        assert!(!said.contains("--clocks-from"), "{name}: its own clocks are all found and agree: {said}");
        let mid = t[t.len() / 2];
        let shards: Vec<Value> = [(t[0] - 1, mid), (mid, t[t.len() - 1] + 1)]
            .iter()
            .map(|&(a, b)| {
                report_of(&config(Some(Shard { start_ns: a, end_ns: b, margin_ns: 140_000_000_000 })))
            })
            .collect();
        assert_same(&union(&shards), &keyed(&pinned_whole), &format!("{name} pinned shards"));
        assert_eq!(keyed_untimed(&pinned_whole), keyed_untimed(&whole), "{name}: pinning its own clocks");
    }
    assert!(checked >= 150, "only {checked} boundary sets checked");
}

// ---- the binary: rotated files, pinned clocks, errors ----

fn tuplecorr(args: &[String]) -> (Value, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(args).arg("-q").output().expect("runs");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (json, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap_or(-1))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Splits a little-endian pcap (µs or ns) into files of consecutive records,
/// a new file starting at each of `cuts` (record times, ns): as `tcpdump -G`
/// rotates. Gives the files in time order.
fn rotate(path: &Path, cuts: &[i64], dir: &Path, stem: &str) -> Vec<PathBuf> {
    let bytes = std::fs::read(path).unwrap();
    let scale = match &bytes[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] => 1_000,
        [0x4d, 0x3c, 0xb2, 0xa1] => 1,
        m => panic!("not a little-endian pcap: {m:?}"),
    };
    let u32_at = |at: usize| i64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()));
    let mut pieces: Vec<Vec<u8>> = vec![bytes[..24].to_vec()];
    let mut next = 0;
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let ts = u32_at(at) * 1_000_000_000 + u32_at(at + 4) * scale;
        let len = u32_at(at + 8) as usize;
        while next < cuts.len() && ts >= cuts[next] {
            pieces.push(bytes[..24].to_vec());
            next += 1;
        }
        pieces.last_mut().unwrap().extend_from_slice(&bytes[at..at + 16 + len]);
        at += 16 + len;
    }
    (pieces.into_iter().enumerate())
        .filter(|(_, p)| p.len() > 24)
        .map(|(i, p)| {
            let f = dir.join(format!("{stem}-{i}.pcap"));
            std::fs::write(&f, p).unwrap();
            f
        })
        .collect()
}

fn rfc(ns: i64) -> String {
    tuplecorr::time::rfc3339(ns)
}

/// Runs the shards of `bounds` over `captures` with extra `args`; gives each
/// shard's report and stderr.
fn run_shards(captures: &[String], bounds: &[i64], args: &[String]) -> Vec<(Value, String)> {
    (bounds.windows(2))
        .map(|w| {
            let mut a = captures.to_vec();
            a.extend(args.iter().cloned());
            a.extend(strings(&["--format", "json", "--shard-start", &rfc(w[0]), "--shard-end", &rfc(w[1])]));
            let (json, err, code) = tuplecorr(&a);
            assert_eq!(code, 0, "{err}");
            (json, err)
        })
        .collect()
}

/// A report's requests by join key without each capture's corrected `time`:
/// what a run with its own clocks pinned (rounded to the µs, as reports write
/// them) must still agree on with the run that estimated them.
fn keyed_untimed(report: &Value) -> BTreeMap<Key, Value> {
    let mut out = keyed(report);
    for r in out.values_mut() {
        for c in r["captures"].as_array_mut().unwrap() {
            c.as_object_mut().unwrap().remove("time");
        }
    }
    out
}

/// One pass over `captures` gives the clocks (written into `dir`); gives the
/// `--clocks-from` arguments and the whole run with them pinned, which must
/// agree with the first pass on every match, verdict and count.
fn whole_run_pinned(captures: &[String], dir: &Path) -> (Vec<String>, Value) {
    let mut args = captures.to_vec();
    args.extend(strings(&["--format", "json"]));
    let (first, err, code) = tuplecorr(&args);
    assert_eq!(code, 0, "{err}");
    let clocks = dir.join("clocks.json");
    std::fs::write(&clocks, serde_json::to_vec(&first).unwrap()).unwrap();
    let pin = strings(&["--clocks-from", clocks.to_str().unwrap()]);
    args.extend(pin.iter().cloned());
    let (whole, err, code) = tuplecorr(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(keyed_untimed(&first), keyed_untimed(&whole), "whole run with its own clocks pinned");
    (pin, whole)
}

/// The generated benchmark mix spread out (1500 connections, one every 400 ms:
/// 10 minutes), each point rotated into 60 s files, run whole and in shards
/// with clocks pinned from one run's report and the default 140 s margin, so
/// shards skip files.
#[test]
fn generated_rotated_shards_skip_files_and_union_to_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let spacing = 400_000_000;
    let files = crate::util::write_spread_mix_set(dir.path(), 1500, spacing - 200_000);
    let t0 = tuplecorr_synth::MIX_T0;
    let offsets = [0i64, 2_750_000_000, -1_300_000_000];
    let mut captures = Vec::new();
    for (f, off) in files.iter().zip(offsets) {
        let label = f.trim_end_matches(".pcap");
        let cuts: Vec<i64> = (1..10).map(|k| t0 + off + k * 60_000_000_000).collect();
        let pieces = rotate(&dir.path().join(f), &cuts, dir.path(), label);
        assert_eq!(pieces.len(), 10);
        captures.extend(pieces.iter().map(|p| format!("{label}={}", p.display())));
    }
    let (pin, whole) = whole_run_pinned(&captures, dir.path());
    let want = keyed(&whole);
    assert_eq!(want.len(), 1500);
    let t = starts(&whole);
    let sets = [
        // Four shards of 150 s, the boundaries 1 µs after a request.
        (0..=4).map(|k| t0 + k * 150_000_000_000 + if k == 0 { -1 } else { 1_000 }).collect::<Vec<i64>>(),
        // Uneven: a boundary exactly on request 700's first packet, one 1 ns after request 1100's.
        vec![t[0], t[700], t[1100] + 1, t[1499] + 1],
    ];
    let mut skipped = 0;
    for bounds in &sets {
        let shards = run_shards(&captures, bounds, &pin);
        for (_, err) in &shards {
            assert!(!err.contains("may go on in a later file"), "{err}");
            assert!(!err.contains("may have begun before what the shard read"), "{err}");
            assert!(!err.contains("estimate this capture's clock"), "{err}");
            skipped += err.matches("lie wholly outside the shard").count();
        }
        let reports: Vec<Value> = shards.into_iter().map(|(j, _)| j).collect();
        assert_same(&union(&reports), &want, &format!("generated shards {bounds:?}"));
    }
    assert!(skipped >= 12, "shards skipped files at only {skipped} points");
}

/// The same spread-out mix with one file per point: a shard keeps only the
/// records of its widened window (and later ones of flows begun in it), so it
/// holds a fraction of the run's flows, and the shards still union to the
/// whole run (clocks pinned, default margin).
#[test]
fn single_file_shards_hold_only_their_windows_flows_and_union_to_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let spacing = 400_000_000;
    let files = crate::util::write_spread_mix_set(dir.path(), 1500, spacing - 200_000);
    let t0 = tuplecorr_synth::MIX_T0;
    let captures: Vec<String> = (files.iter())
        .map(|f| format!("{}={}", f.trim_end_matches(".pcap"), dir.path().join(f).display()))
        .collect();
    let (pin, whole) = whole_run_pinned(&captures, dir.path());
    let want = keyed(&whole);
    assert_eq!(want.len(), 1500);
    let flows = |report: &Value| -> Vec<u64> {
        (report["captures"].as_array().unwrap().iter()).map(|c| c["flows"].as_u64().unwrap()).collect()
    };
    let all = flows(&whole);
    // Five shards of 120 s: each reads its 120 s plus 140 s on either side of
    // the 600 s run, so at most 400 s of it (the first and last, 260 s).
    let bounds: Vec<i64> =
        (0..=5).map(|k| t0 + k * 120_000_000_000 + if k == 0 { -1 } else { 1_000 }).collect();
    let shards = run_shards(&captures, &bounds, &pin);
    for (n, (report, err)) in shards.iter().enumerate() {
        assert!(!err.contains("may have begun before what the shard read"), "shard {n}: {err}");
        assert!(!err.contains("may go on in a later file"), "shard {n}: {err}");
        for (c, (got, of)) in flows(report).iter().zip(&all).enumerate() {
            let share = if n == 0 || n == 4 { 0.45 } else { 0.7 };
            assert!(
                (*got as f64) < share * *of as f64 && *got > 0,
                "shard {n}, capture {c}: {got} of the run's {of} flows held"
            );
        }
    }
    let reports: Vec<Value> = shards.into_iter().map(|(j, _)| j).collect();
    assert_same(&union(&reports), &want, "single-file shards");
}

/// A lab capture rotated into files (each point cut at the same instants),
/// given as several files per point: a shard away from the first files skips
/// them and says which; a shard holding a connection still open at its last
/// planned file reads on (request 5 of `preserved` is reset 2 s after its
/// handshake, in a later file); the shards still report what the whole run does.
#[test]
fn rotated_lab_files_outside_the_shard_are_skipped_and_long_flows_read_on() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Path::new("testdata/lab/preserved");
    let whole_args: Vec<String> =
        ["decap", "egress", "backend"].iter().map(|l| format!("{}/{l}.pcap", lab.display())).collect();
    let mut a = whole_args.clone();
    a.extend(strings(&["--format", "json"]));
    let (whole, err, code) = tuplecorr(&a);
    assert_eq!(code, 0, "{err}");
    let t = starts(&whole);
    assert_eq!(t.len(), 5);
    assert!(t[3] - t[0] > 1_000_000, "{t:?}");
    let last = &whole["requests"][4];
    assert_eq!(last["outcome"]["kind"], "handshake-only", "request 5 ends with the client's RST 2 s later");
    // Cut every point just before requests 2 and 4 start, and 1 ms after request 5 starts.
    let cuts = [t[1] - 200_000, t[3] - 200_000, t[4] + 1_000_000];
    let mut captures = Vec::new();
    for l in ["decap", "egress", "backend"] {
        let pieces = rotate(&lab.join(format!("{l}.pcap")), &cuts, dir.path(), l);
        assert_eq!(pieces.len(), 4);
        captures.extend(pieces.iter().map(|p| format!("{l}={}", p.display())));
    }
    let clocks = dir.path().join("clocks.json");
    std::fs::write(&clocks, serde_json::to_vec(&whole).unwrap()).unwrap();
    let mut rotated = captures.clone();
    rotated.extend(strings(&["--format", "json", "--clocks-from", clocks.to_str().unwrap()]));
    let (rot_whole, err, code) = tuplecorr(&rotated);
    assert_eq!(code, 0, "{err}");
    let want = keyed(&rot_whole);
    assert_eq!(keyed_untimed(&rot_whole), keyed_untimed(&whole), "rotated, pinned, against one file each");
    // A 0.1 ms margin; the last shard holds request 5 alone.
    let args = strings(&["--clocks-from", clocks.to_str().unwrap(), "--shard-margin", "0.0001"]);
    let bounds = [t[0] - 1, t[3], t[4], t[4] + 1_000];
    let shards = run_shards(&captures, &bounds, &args);
    // Each point's first file ended before request 2 (its second file starts
    // there): skipped and named by the later shards; the file holding request
    // 5's reset lies past the last shard and its margin, yet is read.
    for (n, (_, err)) in shards.iter().enumerate().skip(1) {
        for l in ["decap", "egress", "backend"] {
            let line = (err.lines())
                .find(|x| x.contains("lie wholly outside the shard") && x.contains(&format!("{l}-0.pcap")))
                .unwrap_or_else(|| panic!("shard {n}, {l}: no skipped-file warning: {err}"));
            let skipped = line.rsplit(": ").next().unwrap();
            assert!(!skipped.contains(&format!("{l}-3.pcap")), "shard {n}: {line}");
        }
        assert!(!err.contains("may go on in a later file"), "shard {n}: {err}");
    }
    let r5 = &shards[2].0["requests"][0];
    assert_eq!(r5["outcome"]["kind"], "handshake-only");
    assert_eq!(
        r5["captures"][0]["packets_to_server"], last["captures"][0]["packets_to_server"],
        "the RST counted"
    );
    let reports: Vec<Value> = shards.into_iter().map(|(j, _)| j).collect();
    assert_same(&union(&reports), &want, "rotated lab shards");
    // Without --clocks-from a shard that skipped files says its clocks are its own.
    let unpinned = run_shards(&captures, &bounds[2..], &strings(&["--shard-margin", "0.0001"]));
    assert!(unpinned[0].1.contains("estimated the clocks from the files it read"), "{}", unpinned[0].1);
    // A pinned offset 5 ms off what the shard's own flows say is used, and said.
    let mut wrong = whole.clone();
    let egress = wrong["captures"][1]["clock_offset_ms"].as_f64().unwrap();
    wrong["captures"][1]["clock_offset_ms"] = serde_json::json!(egress + 5.0);
    let wrong_path = dir.path().join("wrong.json");
    std::fs::write(&wrong_path, serde_json::to_vec(&wrong).unwrap()).unwrap();
    let off = run_shards(&captures, &bounds[2..], &strings(&["--clocks-from", wrong_path.to_str().unwrap()]));
    let (report, err) = &off[0];
    assert!(err.contains("estimate this capture's clock offset at"), "{err}");
    assert_eq!(report["captures"][1]["offset_method"], "manual");
    let used = report["captures"][1]["clock_offset_ms"].as_f64().unwrap();
    assert!((used - egress - 5.0).abs() < 1e-6, "the given offset is used: {used} vs {egress} + 5");
}

#[test]
fn a_shard_with_no_request_is_an_empty_valid_report() {
    let lab = "testdata/lab/masquerade-node";
    let mut a: Vec<String> =
        ["decap", "egress", "backend"].iter().map(|l| format!("{lab}/{l}.pcap")).collect();
    a.extend(strings(&[
        "--format",
        "json",
        "--shard-start",
        "2001-01-01T00:00:00Z",
        "--shard-end",
        "978307201",
    ]));
    let (json, err, code) = tuplecorr(&a);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json["requests"].as_array().map(Vec::len), Some(0));
    // ... and says why: capture 1 has no packet in it (the shard is before the captures)
    let why = "tuplecorr: warning: testdata/lab/masquerade-node/decap.pcap: shard 2001-01-01T00:00:00.000000000Z \
               to 2001-01-01T00:00:01.000000000Z: no packet of this capture (capture 1) lies in it: the shard ends \
               before its first packet read (2026-";
    assert!(err.contains(why), "{err}");
    assert!(
        err.contains("the shard has no request; check --shard-start/--shard-end against the captures' times")
    );
    let warned = json["warnings"].as_array().unwrap().iter().any(|w| {
        w["label"] == "decap"
            && w["message"].as_str().is_some_and(|m| m.contains("no packet of this capture"))
    });
    assert!(warned, "{}", json["warnings"]);
    assert_eq!(json["captures"].as_array().map(Vec::len), Some(3), "captures are still described");
    // The same empty shard as CSV: the header only.
    let csv_args: Vec<String> =
        a.iter().map(|s| if s == "json" { "csv".to_string() } else { s.clone() }).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(&csv_args).arg("-q").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

#[test]
fn shard_argument_errors_exit_2_and_say_what_is_wrong() {
    let lab = "testdata/lab/masquerade-node";
    let base: Vec<String> =
        ["decap", "egress", "backend"].iter().map(|l| format!("{lab}/{l}.pcap")).collect();
    let cases: [(&[&str], &str); 6] = [
        (&["--shard-start", "1795995638"], "--shard-end"),
        (&["--shard-end", "1795995638"], "--shard-start"),
        (&["--shard-start", "1795995638", "--shard-end", "1795995638"], "is not after --shard-start"),
        (&["--shard-start", "1795995639", "--shard-end", "1795995638.5"], "is not after"),
        (&["--shard-start", "noon", "--shard-end", "1795995638"], "--shard-start noon: expected an RFC 3339"),
        (&["--shard-start", "1", "--shard-end", "2026-02-31T00:00:00Z"], "--shard-end 2026-02-31T00:00:00Z"),
    ];
    for (extra, says) in cases {
        let mut a = base.clone();
        a.extend(strings(extra));
        let (_, err, code) = tuplecorr(&a);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    let mut a = base.clone();
    a.extend(strings(&["--clocks-from", &format!("{lab}/decap.pcap")]));
    let (_, err, code) = tuplecorr(&a);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a tuplecorr JSON report"), "{err}");
}

/// The first packet time a shard plans files by (read from the head of each
/// file and stopped at the first record) is the first record's, in every format
/// the lab holds (pcap, pcapng, gzip), and also past a first block larger than
/// the first read step (a pcapng section header with 100 kB of comment).
#[test]
fn a_files_first_timestamp_is_its_first_records() {
    for f in ["preserved/decap.pcap", "masquerade-pod/egress.pcapng", "udp-icmp/backend.pcap.gz"] {
        let path = crate::util::testdata(&format!("lab/{f}"));
        let (recs, _) = crate::util::read_file(&path).unwrap();
        let first = tuplecorr::read::first_timestamp(&crate::util::spec(&path));
        assert_eq!(first, Some(recs[0].ts_ns), "{f}");
    }
    // A pcapng whose section header carries a 100 000-byte comment.
    let src = std::fs::read(crate::util::testdata("lab/masquerade-pod/egress.pcapng")).unwrap();
    let shb_len = u32::from_le_bytes(src[4..8].try_into().unwrap()) as usize;
    assert_eq!(&src[8..12], &[0x4d, 0x3c, 0x2b, 0x1a], "a little-endian section");
    // The fixed part (type, length, byte-order magic, version, section length),
    // two 50 000-byte comments (an option holds at most 65 535), end of options.
    let mut shb = src[..24].to_vec();
    for _ in 0..2 {
        shb.extend_from_slice(&1u16.to_le_bytes()); // opt_comment
        shb.extend_from_slice(&50_000u16.to_le_bytes());
        shb.extend(std::iter::repeat_n(b'x', 50_000));
    }
    shb.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
    let total = (shb.len() + 4) as u32;
    shb[4..8].copy_from_slice(&total.to_le_bytes());
    shb.extend_from_slice(&total.to_le_bytes());
    let mut big = shb;
    big.extend_from_slice(&src[shb_len..]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big-header.pcapng");
    std::fs::write(&path, &big).unwrap();
    let (recs, _) = crate::util::read_file(&path).unwrap();
    assert_eq!(tuplecorr::read::first_timestamp(&crate::util::spec(&path)), Some(recs[0].ts_ns));
}

#[test]
fn a_split_capture_is_split_as_the_clocks_from_report_in_every_shard_also_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    for (scenario, middle) in [
        ("any-node", "node"),
        ("any-node-sll", "node"),
        ("any-router", "router"),
        ("any-router-sll", "router"),
    ] {
        let caps: Vec<String> = ["decap", "egress", middle, "backend"]
            .iter()
            .map(|l| format!("testdata/lab/{scenario}/{l}.pcap"))
            .collect();
        let report = dir.path().join(format!("{scenario}.json")).to_string_lossy().into_owned();
        let with = |args: &[&str]| [&caps[..], &strings(args)[..]].concat();
        let (_, err, code) = tuplecorr(&with(&["-o", &report]));
        assert_eq!(code, 0, "{err}");
        let csv_header = |args: &[&str]| {
            let out =
                Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(with(args)).arg("-q").output().unwrap();
            String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().to_string()
        };
        // an empty shard's CSV header is the whole run's (it named the capture, not its sub-points)
        let whole = csv_header(&["--format", "csv"]);
        assert!(whole.contains(&format!(",{middle}(out")), "{whole}");
        let empty = csv_header(&[
            "--format",
            "csv",
            "--clocks-from",
            &report,
            "--shard-start",
            "0",
            "--shard-end",
            "1",
        ]);
        assert_eq!(empty, whole, "{scenario}");
        // a shard of everything is the whole run, point by point
        let (pinned, err, _) = tuplecorr(&with(&["--format", "json", "--clocks-from", &report]));
        let (shard, _, code) = tuplecorr(&with(&[
            "--format",
            "json",
            "--clocks-from",
            &report,
            "--shard-start",
            "0",
            "--shard-end",
            "2000000000",
        ]));
        assert_eq!(code, 0, "{err}");
        assert_eq!(shard["captures"].as_array().map(Vec::len), Some(5), "{scenario}");
        assert_eq!(shard["requests"], pinned["requests"], "{scenario}");
    }
}
