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

#[test]
fn a_stream_of_short_windows_writes_the_whole_runs_requests_over_a_generated_ten_minutes() {
    let dir = tempfile::tempdir().unwrap();
    // 1500 connections, one every 400 ms: ten minutes, with the mix's clock
    // offsets (egress 2.75 s ahead, backend 1.3 s behind) estimated, not given.
    let files = util::write_spread_mix_set(dir.path(), 1500, 400_000_000 - 200_000);
    let files: Vec<String> = files.iter().map(|f| dir.path().join(f).display().to_string()).collect();
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
        let whole = stdout_of(&[&["--format", "ndjson"][..], &caps].concat());
        assert!(!whole.is_empty(), "{name}: no request");
        let streamed =
            stdout_of(&[&["--stream", "--stream-window", "1", "--format", "ndjson"][..], &caps].concat());
        assert_same_bytes(&streamed, &whole, &name);
    }
}

#[test]
fn a_stream_refuses_what_it_cannot_write_window_by_window() {
    let caps = ["testdata/lab/preserved/decap.pcap", "testdata/lab/preserved/egress.pcap"];
    let cases: [(&[&str], &str); 5] = [
        (&["--format", "json"], "--format csv or ndjson"),
        (&["--format", "table"], "--format csv or ndjson"),
        (&["-o", "x.parquet"], "--format csv or ndjson"),
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("--stream-window 0.5: expected seconds, 1 or more"));
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
