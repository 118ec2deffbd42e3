//! Streaming correlation (`--stream`, issue 16 item 1): the same bytes as the
//! run without it — requests, numbers, fields — for windows much shorter than
//! the captures (so requests are correlated window by window, with clocks
//! pinned from the first window) and for every lab scenario; what it refuses;
//! a capture that cannot be read; `--fail-on`; relative `--since` across
//! windows.

use crate::util;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tuplecorr")).arg("-q").args(args).output().expect("runs")
}

/// Stdout of a run that must succeed.
fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The warning lines of a run, sorted (a stream prints them as windows end).
fn warnings_of(out: &Output) -> Vec<String> {
    let mut w: Vec<String> = String::from_utf8_lossy(&out.stderr).lines().map(str::to_string).collect();
    w.sort();
    w
}

/// Asserts two reports are the same bytes, naming the first differing line.
fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
        let at = g.lines().zip(w.lines()).position(|(a, b)| a != b);
        panic!(
            "{what}: {} lines, want {}; first difference at line {at:?}:\n got {:?}\nwant {:?}",
            g.lines().count(),
            w.lines().count(),
            at.and_then(|i| g.lines().nth(i)),
            at.and_then(|i| w.lines().nth(i)),
        );
    }
}

/// 1500 connections, one every 400 ms: ten minutes, with the mix's clock
/// offsets (egress 2.75 s ahead, backend 1.3 s behind) to be estimated; the
/// files' paths.
fn write_ten_minutes(dir: &Path) -> Vec<String> {
    let files = util::write_spread_mix_set(dir, 1500, 400_000_000 - 200_000);
    files.iter().map(|f| dir.join(f).display().to_string()).collect()
}

#[test]
fn a_stream_of_short_windows_writes_the_whole_runs_requests_over_a_generated_ten_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_ten_minutes(dir.path());
    let caps: Vec<&str> = files.iter().map(String::as_str).collect();
    // `--since`/`--until` in seconds count from the run's first request, not the window's.
    for (format, extra) in
        [("ndjson", &[][..]), ("csv", &[][..]), ("ndjson", &["--since", "100", "--until", "400.5"][..])]
    {
        let whole_args: Vec<&str> = [&["--format", format][..], extra, &caps].concat();
        let whole = run(&whole_args);
        assert_eq!(whole.status.code(), Some(0));
        let lines = String::from_utf8_lossy(&whole.stdout).lines().count();
        assert!(lines >= if extra.is_empty() { 1500 } else { 700 }, "{format} {extra:?}: {lines} lines");
        // 30 s windows: each request's partners lie in a margin that reaches
        // several windows back and on; 300 s: the default; 7 s: odd boundaries.
        for window in ["30", "300", "7"] {
            let args: Vec<&str> =
                [&["--stream", "--stream-window", window, "--format", format][..], extra, &caps].concat();
            let streamed = run(&args);
            assert_eq!(streamed.status.code(), Some(0), "{}", String::from_utf8_lossy(&streamed.stderr));
            assert_same_bytes(&streamed.stdout, &whole.stdout, &format!("{format}, {window} s windows"));
            assert_eq!(warnings_of(&streamed), warnings_of(&whole), "{format}, {window} s windows");
        }
    }
}

/// Scenario name and its capture files' paths in path order (testdata/lab/index.tsv).
fn lab_scenarios() -> Vec<(String, Vec<String>)> {
    (util::lab_scenarios().into_iter())
        .map(|(name, files)| {
            let paths =
                files.iter().map(|f| Path::new("testdata/lab").join(&name).join(f).display().to_string());
            let paths = paths.collect();
            (name, paths)
        })
        .collect()
}

#[test]
fn every_lab_scenario_streamed_in_one_second_windows_is_the_run_without_stream() {
    let scenarios = lab_scenarios();
    assert!(scenarios.len() >= 30, "{} scenarios", scenarios.len());
    for (name, files) in scenarios {
        let caps: Vec<&str> = files.iter().map(String::as_str).collect();
        // NDJSON: the requests; JSON: also the run's captures (packets, flows,
        // clocks), boundaries' traits, unmatched flows (listed) and warnings,
        // summed over the windows; the table: its columns as wide as the run's
        // widest cells; the summary: patterns counted over the windows. Each
        // window of a lab scenario reads all of it, so even the clocks are the run's.
        let formats: [&[&str]; 4] = [
            &["--format", "ndjson"],
            &["--format", "json", "--all"],
            &["--color", "always"],
            &["--summary", "--tz", "Europe/Berlin"],
        ];
        for format in formats {
            let whole = stdout_of(&[format, &caps].concat());
            assert!(whole.len() > 100, "{name}: no request");
            let streamed = stdout_of(&[&["--stream", "--stream-window", "1"][..], format, &caps].concat());
            assert_same_bytes(&streamed, &whole, &format!("{name} {format:?}"));
        }
    }
}

/// Asserts two JSON values are equal, naming the first path where they differ.
fn assert_same_json(got: &serde_json::Value, want: &serde_json::Value, what: &str) {
    fn first_difference(g: &serde_json::Value, w: &serde_json::Value, at: String) -> Option<String> {
        use serde_json::Value::{Array, Object};
        match (g, w) {
            (Object(a), Object(b)) => (b.keys().chain(a.keys())).find_map(|k| match (a.get(k), b.get(k)) {
                (Some(x), Some(y)) => first_difference(x, y, format!("{at}.{k}")),
                (x, y) => Some(format!("{at}.{k}: {x:?} against {y:?}")),
            }),
            (Array(a), Array(b)) if a.len() == b.len() => a
                .iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y, format!("{at}[{i}]"))),
            (Array(a), Array(b)) => Some(format!("{at}: {} elements against {}", a.len(), b.len())),
            _ if g == w => None,
            _ => Some(format!("{at}: {g} against {w}")),
        }
    }
    if let Some(d) = first_difference(got, want, String::new()) {
        panic!("{what}: first difference at {d}");
    }
}

/// A table report with the clocks' sample counts (`, 1380 samples)`) left out.
fn without_said_samples(table: &[u8]) -> String {
    let text = String::from_utf8_lossy(table);
    let lines = text.lines().map(|l| match (l.rfind(", "), l.ends_with(" samples)")) {
        (Some(at), true) => format!("{})", &l[..at]),
        _ => l.to_string(),
    });
    let lines: Vec<String> = lines.collect();
    assert!(lines.iter().filter(|l| l.contains("(request-reply)")).count() >= 2, "no clock lines: {text}");
    lines.join("\n")
}

/// A JSON report with each capture's `offset_samples` taken out (a stream
/// estimates the clocks from one window's samples, pinned for the rest).
fn without_samples(report: &[u8]) -> (serde_json::Value, Vec<u64>) {
    let mut v: serde_json::Value = serde_json::from_slice(report).unwrap();
    let mut samples = Vec::new();
    for c in v["captures"].as_array_mut().unwrap() {
        samples.push(c["offset_samples"].as_u64().unwrap());
        c["offset_samples"] = serde_json::Value::Null;
    }
    (v, samples)
}

#[test]
fn a_streamed_json_report_is_the_runs_but_for_the_clocks_sample_counts() {
    let dir = tempfile::tempdir().unwrap();
    // Twenty minutes, one connection every 800 ms, and capture 1 silent from
    // 400 s to 1000 s (a tcpdump stopped there): the requests of that time are
    // unmatched flows of the later captures, in windows capture 1 has no part of.
    let silent = |point: usize, t: i64| point != 0 || !(400_000_000_000..1_000_000_000_000).contains(&t);
    let files = util::write_spread_mix_set_keeping(dir.path(), 1500, 800_000_000 - 200_000, 0, 0, &silent);
    let files: Vec<String> = files.iter().map(|f| dir.path().join(f).display().to_string()).collect();
    let caps: Vec<&str> = files.iter().map(String::as_str).collect();
    let whole = stdout_of(&[&["--format", "json", "--all"][..], &caps].concat());
    let (whole, whole_samples) = without_samples(&whole);
    let unmatched = whole["unmatched"][0]["count"].as_u64().unwrap();
    assert!(unmatched > 600, "{unmatched} unmatched at egress: the silence's requests");
    assert_eq!(whole["unmatched"][0]["flows"].as_array().unwrap().len() as u64, unmatched);
    // The table and its summary, but for the clocks' sample counts.
    let whole_table = without_said_samples(&stdout_of(&[&["--all"][..], &caps].concat()));
    for window in ["30", "300"] {
        let streamed = stdout_of(
            &[&["--stream", "--stream-window", window, "--format", "json", "--all"][..], &caps].concat(),
        );
        let (streamed, samples) = without_samples(&streamed);
        assert_same_json(&streamed, &whole, &format!("{window} s windows"));
        let table = stdout_of(&[&["--stream", "--stream-window", window, "--all"][..], &caps].concat());
        let table = without_said_samples(&table);
        assert_same_bytes(
            table.as_bytes(),
            whole_table.as_bytes(),
            &format!("the table, {window} s windows"),
        );
        // Estimated from one window's requests, at least the 20 a pin needs.
        for (got, all) in samples.iter().zip(&whole_samples).skip(1) {
            assert!(*got >= 20 && got < all, "{window} s windows: {got} of {all} samples");
        }
    }
}

#[cfg(feature = "parquet")]
#[test]
fn a_streamed_parquet_file_holds_the_runs_rows_and_totals_and_duckdb_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_ten_minutes(dir.path());
    let caps: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = |name: &str| dir.path().join(name).display().to_string();
    let (whole, streamed, streamed_json) = (out("whole.parquet"), out("stream.parquet"), out("stream.json"));
    stdout_of(&[&["-o", &whole][..], &caps].concat());
    stdout_of(&[&["--stream", "--stream-window", "30", "-o", &streamed][..], &caps].concat());
    stdout_of(&[&["--stream", "--stream-window", "30", "-o", &streamed_json][..], &caps].concat());
    let read = |f: &str| crate::parquet::read_parquet(std::fs::read(f).unwrap());
    let ((rows, kv), (want_rows, want_kv)) = (read(&streamed), read(&whole));
    assert!(rows.len() > 1400, "{} rows", rows.len());
    assert_same_json(
        &serde_json::json!(rows),
        &serde_json::json!(want_rows),
        "the rows of the run without --stream",
    );
    let totals = |kv: &[(String, Option<String>)]| {
        let run = kv.iter().find(|(k, _)| k == tuplecorr::report::parquet::METADATA_KEY).unwrap();
        without_samples(run.1.as_deref().unwrap().as_bytes()).0
    };
    assert_same_json(&totals(&kv), &totals(&want_kv), "the run's totals, as the file's metadata");
    // DuckDB reads the streamed file as the streamed JSON report says.
    if crate::parquet::duckdb_available() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/parquet_check.py");
        let out = Command::new("python3").arg(script).args([&streamed, &streamed_json]).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && said.contains(&format!(": {} requests", rows.len())), "{said}");
    }
}

#[test]
fn a_stream_refuses_what_it_cannot_write_window_by_window() {
    let caps = ["testdata/lab/preserved/decap.pcap", "testdata/lab/preserved/egress.pcap"];
    let cases: [(&[&str], &str); 4] = [
        (&["--format", "html", "-o", "x.html"], "another --format than html"),
        (&["-o", "x.html"], "another --format than html"),
        (&["--format", "csv", "--shard-start", "0", "--shard-end", "1"], "no --shard-start"),
        (&["--format", "csv", "--pcapng", "x.pcapng"], "no --pcapng"),
    ];
    for (extra, needs) in cases {
        let out = run(&[&["--stream"][..], extra, &caps].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(needs), "{extra:?}: {err}");
    }
    let out = run(&[&["--stream", "--stream-window", "0.5", "--format", "csv"][..], &caps].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--stream-window 0.5: expected seconds, 1 to 31536000")
    );
    // The window needs the stream.
    let out = run(&[&["--stream-window", "60", "--format", "csv"][..], &caps].concat());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_capture_that_cannot_be_read_stops_the_stream_and_writes_no_report_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("egress.pcap");
    std::fs::write(&bad, b"this is no capture at all, just text").unwrap();
    let report = dir.path().join("report.csv");
    let out = run(&[
        "--stream",
        "-o",
        report.to_str().unwrap(),
        "testdata/lab/preserved/decap.pcap",
        bad.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("egress.pcap") && err.contains("stopped, no report written"), "{err}");
    assert!(!report.exists(), "a half report was left behind");
}

#[test]
fn fail_on_holds_in_a_stream() {
    let caps: Vec<String> = (lab_scenarios().into_iter())
        .find(|(n, _)| n == "reject")
        .map(|(_, f)| f)
        .expect("the reject scenario");
    let caps: Vec<&str> = caps.iter().map(String::as_str).collect();
    // The scenario's requests lie within 3 ms: 2 ms after the first, a reset is left.
    for extra in [&["--fail-on", "reset,icmp-error"][..], &["--since", "0.002", "--fail-on", "reset"][..]] {
        let whole = run(&[&["--format", "ndjson"][..], extra, &caps].concat());
        let streamed =
            run(&[&["--stream", "--stream-window", "1", "--format", "ndjson"][..], extra, &caps].concat());
        assert_eq!(whole.status.code(), Some(1), "{extra:?}: the scenario holds a reset and a rejection");
        assert_eq!(streamed.status.code(), whole.status.code(), "{extra:?}");
        assert_same_bytes(&streamed.stdout, &whole.stdout, &format!("{extra:?}"));
    }
}

/// 1500 connections over 20 minutes (one every 800 ms) and one connection
/// open over all of it, a response segment every 10 s, from its first second.
fn write_set_with_a_long_connection(dir: &Path) -> Vec<String> {
    let files = util::write_spread_mix_set_with_long(dir, 1500, 800_000_000 - 200_000, 1, 10_000_000_000);
    files.iter().map(|f| dir.join(f).display().to_string()).collect()
}

/// The long connection's client at capture 1 (`mix_long_connection(0, ..)`).
const LONG_CLIENT: &str = "198.18.250.2:30000";

#[test]
fn a_connection_open_past_the_hold_is_reported_as_seen_by_then_and_said_so_the_rest_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_set_with_a_long_connection(dir.path());
    let caps: Vec<&str> = files.iter().map(String::as_str).collect();
    let whole = run(&[&["--format", "ndjson"][..], &caps].concat());
    assert_eq!(whole.status.code(), Some(0));
    let stream_args = |hold: &'static str| -> Vec<&str> {
        [&["--stream", "--stream-window", "30", "--stream-hold", hold, "--format", "ndjson"][..], &caps]
            .concat()
    };
    let held = run(&stream_args("60"));
    assert_eq!(held.status.code(), Some(0), "{}", String::from_utf8_lossy(&held.stderr));
    let (whole_lines, held_lines) =
        (String::from_utf8_lossy(&whole.stdout), String::from_utf8_lossy(&held.stdout));
    let (whole_lines, held_lines): (Vec<&str>, Vec<&str>) =
        (whole_lines.lines().collect(), held_lines.lines().collect());
    assert_eq!(held_lines.len(), whole_lines.len());
    assert!(whole_lines.len() > 1400, "{} requests", whole_lines.len());
    let mut long = 0;
    for (h, w) in held_lines.iter().zip(&whole_lines) {
        let (h, w): (serde_json::Value, serde_json::Value) =
            (serde_json::from_str(h).unwrap(), serde_json::from_str(w).unwrap());
        if w["captures"][0]["client"] != LONG_CLIENT {
            assert_eq!(h, w, "every other request is the run's without --stream");
            continue;
        }
        long += 1;
        // The same request, matched and judged alike from what was seen in time...
        for key in ["request", "matches", "source", "destination", "reply", "outcome"] {
            assert_eq!(h[key], w[key], "{key}");
        }
        assert_eq!(w["outcome"]["kind"], "completed");
        // ... but its later packets are not counted, at any capture.
        for (hc, wc) in h["captures"].as_array().unwrap().iter().zip(w["captures"].as_array().unwrap()) {
            let (got, all) =
                (hc["packets_to_client"].as_u64().unwrap(), wc["packets_to_client"].as_u64().unwrap());
            assert!(got > 3 && got * 4 < all, "{}: {got} of {all} packets counted", wc["label"]);
        }
    }
    assert_eq!(long, 1, "the long connection is one request");
    let err = String::from_utf8_lossy(&held.stderr);
    for label in ["decap", "egress", "backend"] {
        let line =
            err.lines().find(|l| l.contains(&format!("{label}.pcap: 1 requests of this stream's window")));
        let line = line.unwrap_or_else(|| panic!("no hold warning at {label}: {err}"));
        assert!(
            line.contains("still open") && line.contains("60 s") && line.contains("--stream-hold"),
            "{line}"
        );
    }
    assert!(!String::from_utf8_lossy(&whole.stderr).contains("--stream-hold"));
    // Waiting longer than the connection lasts: the run's bytes again, no warning.
    let waited = run(&stream_args("100000"));
    assert_same_bytes(&waited.stdout, &whole.stdout, "--stream-hold past the connection's end");
    assert_eq!(warnings_of(&waited), warnings_of(&whole));
}

#[test]
fn the_hold_bounds_the_windows_a_long_connection_keeps_in_memory() {
    use tuplecorr::drive::stream::StreamConfig;
    use tuplecorr::drive::Config;
    use tuplecorr::read::{CaptureSpec, Source};
    let dir = tempfile::tempdir().unwrap();
    let files = write_set_with_a_long_connection(dir.path());
    let captures = (files.iter().zip(["decap", "egress", "backend"]))
        .map(|(f, l)| CaptureSpec { label: l.into(), source: Source::Path(f.into()) })
        .collect();
    let config = Config { captures, quiet: true, ..Config::default() };
    let w = 30_000_000_000;
    let most_held = |hold_ns: i64| {
        let stream = StreamConfig { window_ns: w, hold_ns, follow: None };
        let config = Config { stream: Some(stream), ..config.clone() };
        let mut requests = 0;
        let mut emit = |f: tuplecorr::verdict::Findings| {
            requests += f.requests.len();
            Ok(())
        };
        let finished =
            tuplecorr::drive::stream::run(&config, stream, &tuplecorr::read::NoProgress, &mut emit).unwrap();
        (finished.most_held.into_iter().max().unwrap(), requests)
    };
    // A window is open over its reach (the window and 200 s each side at the
    // later captures), then waits at most the hold: about (30 + 400 + 60) / 30
    // windows at once, whatever the long connection does.
    let (bounded, requests) = most_held(60_000_000_000);
    assert!(bounded <= 18, "{bounded} windows held at once with a 60 s hold");
    assert!(requests > 1400, "{requests} requests");
    // Without the hold it keeps its first window, so every window after it, to
    // its end: the whole twenty minutes (40 windows) and more.
    let (unbounded, all) = most_held(i64::MAX / 4);
    eprintln!("windows held at once: {bounded} with a 60 s hold, {unbounded} without");
    assert!(unbounded >= 40, "{unbounded} windows held at once waiting for the connection");
    assert_eq!(all, requests);
}

/// A pcap (ns) of `linktype` with the given records (time, bytes).
fn write_pcap_linktype(path: &Path, linktype: u32, records: &[(i64, Vec<u8>)]) {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_3c4d_u32.to_le_bytes());
    out.extend_from_slice(&[2, 0, 4, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&262_144_u32.to_le_bytes());
    out.extend_from_slice(&linktype.to_le_bytes());
    for (t, data) in records {
        out.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
    }
    std::fs::write(path, out).unwrap();
}

/// A Linux cooked v2 header (`tcpdump -i any`) in front of an IPv4 packet.
fn sll2(ifindex: u32, outgoing: bool, ip: &[u8]) -> Vec<u8> {
    let mut h = vec![0x08, 0x00, 0, 0];
    h.extend_from_slice(&ifindex.to_be_bytes());
    h.extend_from_slice(&[0, 1, if outgoing { 4 } else { 0 }, 6]);
    h.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0, 0]);
    h.extend_from_slice(ip);
    h
}

/// decap, node (`tcpdump -i any` on the NAT node: pod0 ifindex 2 before NAT,
/// be0 ifindex 3 after it) and backend: 200 requests over the first 200 s,
/// then from 400 s to 1000 s only node-local flows on be0 (a health check
/// of the backend), none of them at decap. Files' paths.
fn write_any_node_set(dir: &Path) -> Vec<String> {
    use std::net::{IpAddr, Ipv4Addr};
    use tuplecorr_synth::{Hop, Path as Route, Point, Tcp};
    let ip = |c: u8, d: u8| IpAddr::V4(Ipv4Addr::new(198, 18, c, d));
    let (masq, backend) =
        (IpAddr::V4(Ipv4Addr::new(198, 19, 3, 17)), IpAddr::V4(Ipv4Addr::new(198, 19, 96, 10)));
    let node_clock = 2_000_000_000;
    let points = vec![
        Point::default(),
        Point { clock_offset_ns: node_clock, ..Point::default() },
        Point { clock_offset_ns: node_clock, ..Point::default() },
        Point { clock_offset_ns: -700_000_000, ..Point::default() },
    ];
    let hops = vec![
        Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
        Hop { delay_ns: 8_000, routed: true, snat: Some(masq), snat_port: None, ..Hop::default() },
        Hop { delay_ns: 50_000, ..Hop::default() },
    ];
    let mut route = Route::new(points, hops);
    let t0 = tuplecorr_synth::MIX_T0;
    let s = 1_000_000_000;
    for c in 0..200u32 {
        let client = (ip(90, (c % 200 + 2) as u8), 20_000 + c as u16);
        route.tcp(&Tcp::new(client, (backend, 80), t0 + i64::from(c) * s, c));
    }
    for c in 0..300u32 {
        let check = Tcp::new(
            (masq, 40_000 + c as u16),
            (backend, 8080),
            t0 + 400 * s + i64::from(c) * 2 * s,
            100_000 + c,
        );
        route.background_tcp(2, &check);
    }
    let caps = route.finish().points;
    let raw = |p: &[(i64, Vec<u8>, u32)]| p.iter().map(|(t, d, _)| (*t, d.clone())).collect::<Vec<_>>();
    let mut node: Vec<(i64, Vec<u8>)> = (caps[1].iter().map(|(t, d, _)| (*t, sll2(2, false, d))))
        .chain(caps[2].iter().map(|(t, d, _)| (*t, sll2(3, true, d))))
        .collect();
    node.sort_by_key(|(t, _)| *t);
    let files =
        [("decap.pcap", 101, raw(&caps[0])), ("node.pcap", 276, node), ("backend.pcap", 101, raw(&caps[3]))];
    (files.iter())
        .map(|(name, linktype, records)| {
            let path = dir.join(name);
            write_pcap_linktype(&path, *linktype, records);
            path.display().to_string()
        })
        .collect()
}

#[test]
fn a_stream_splits_an_any_capture_as_its_first_window_did_also_where_one_interface_is_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_any_node_set(dir.path());
    let caps: Vec<&str> = files.iter().map(String::as_str).collect();
    let whole = stdout_of(&[&["--format", "json", "--all"][..], &caps].concat());
    let (whole, _) = without_samples(&whole);
    let labels: Vec<&str> =
        whole["captures"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["decap", "node(in)", "node(out)", "backend"]);
    assert_eq!(whole["requests"].as_array().unwrap().len(), 200);
    // The node-local checks are unmatched at the node's second point.
    assert!(whole["unmatched"][1]["count"].as_u64().unwrap() >= 300, "{}", whole["unmatched"]);
    for window in ["30", "300"] {
        let args =
            [&["--stream", "--stream-window", window, "--format", "json", "--all"][..], &caps].concat();
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{window} s: {}", String::from_utf8_lossy(&out.stderr));
        let (streamed, _) = without_samples(&out.stdout);
        assert_same_json(&streamed, &whole, &format!("{window} s windows"));
        // The CSV's columns: the first window's points, in every row.
        let csv =
            stdout_of(&[&["--stream", "--stream-window", window, "--format", "csv"][..], &caps].concat());
        let csv = String::from_utf8(csv).unwrap();
        let widths: std::collections::BTreeSet<usize> = csv.lines().map(|l| l.split(',').count()).collect();
        assert_eq!(widths.len(), 1, "{window} s: rows of {widths:?} cells");
    }
}
