//! `--follow` (issue "Live"): captures still being written — FIFOs fed in
//! real time, as `tcpdump -U -w FIFO` feeds them, and a regular file that
//! grows — are correlated as their packets come: rows appear while the
//! captures are still being written, equal to the batch run's rows over the
//! same packets; the run ends at the first input's end, after --follow-idle
//! on a silent file, or on SIGINT with the summary on stderr.

use crate::util::write_spread_mix_set;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Writes the classic pcap `file` into `to` (a FIFO: the open waits for the
/// reader; or a regular file, appended to) as tcpdump -U would: each record
/// at its time after the first (real time), then keeps it open `hold`
/// longer. Runs detached.
fn replay(file: PathBuf, to: PathBuf, hold: Duration) {
    replay_until(file, to, hold, None)
}

/// The records of a classic pcap: each one's time after the first and its
/// bytes (header included).
fn records(bytes: &[u8]) -> Vec<(Duration, std::ops::Range<usize>)> {
    let (le, ns) = match bytes[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] => (true, false),
        [0x4d, 0x3c, 0xb2, 0xa1] => (true, true),
        [0xa1, 0xb2, 0xc3, 0xd4] => (false, false),
        [0xa1, 0xb2, 0x3c, 0x4d] => (false, true),
        _ => panic!("not a classic pcap"),
    };
    let u32_at = |at: usize| {
        let b: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
        if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let (mut out, mut first, mut at) = (Vec::new(), None, 24);
    while at + 16 <= bytes.len() {
        let frac = u64::from(u32_at(at + 4));
        let t = u64::from(u32_at(at)) * 1_000_000_000 + if ns { frac } else { frac * 1000 };
        let len = u32_at(at + 8) as usize;
        out.push((Duration::from_nanos(t - *first.get_or_insert(t)), at..at + 16 + len));
        at += 16 + len;
    }
    out
}

/// Waits until `due` after `start`.
fn sleep_until(start: Instant, due: Duration) {
    if let Some(wait) = due.checked_sub(start.elapsed()) {
        std::thread::sleep(wait);
    }
}

/// [`replay`] of the records within `until` of the first only (None: all).
fn replay_until(file: PathBuf, to: PathBuf, hold: Duration, until: Option<Duration>) {
    std::thread::spawn(move || {
        let bytes = std::fs::read(&file).unwrap();
        let Ok(mut out) = std::fs::OpenOptions::new().append(true).open(&to) else { return };
        if out.write_all(&bytes[..24]).is_err() {
            return;
        }
        let start = Instant::now();
        for (due, range) in records(&bytes) {
            if until.is_some_and(|u| due > u) {
                break;
            }
            sleep_until(start, due);
            if out.write_all(&bytes[range]).is_err() {
                return;
            }
        }
        std::thread::sleep(hold);
    });
}

/// A live run that ended well and wrote the batch run's rows, byte for byte.
fn assert_same_rows(run: &Timed, batch: &str) {
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let live: String = run.lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    assert!(
        live == batch,
        "the live rows differ from the batch run's:\n{}\n{}",
        first_difference(&live, batch),
        run.stderr
    );
}

/// The first line where two reports differ, both ways.
fn first_difference(a: &str, b: &str) -> String {
    let (mut la, mut lb) = (a.lines(), b.lines());
    for n in 1.. {
        match (la.next(), lb.next()) {
            (None, None) => return "no difference".into(),
            (x, y) if x != y => return format!("line {n}:\n live:  {x:?}\n batch: {y:?}"),
            _ => {}
        }
    }
    unreachable!()
}

/// `LABEL=FIFO` arguments for the three points, each FIFO fed with its file
/// in real time by [`replay`], kept open `hold` after its last record.
fn fifos_replaying(dir: &Path, files: &[PathBuf], hold: Duration) -> Vec<String> {
    let labels = ["decap", "egress", "backend"];
    let mut args = Vec::new();
    for (label, file) in labels.iter().zip(files) {
        let fifo = dir.join(format!("{label}.fifo"));
        mkfifo(&fifo);
        replay(file.clone(), fifo.clone(), hold);
        args.push(format!("{label}={}", fifo.display()));
    }
    args
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success(), "mkfifo {}", path.display());
}

/// A run of tuplecorr whose stdout lines are timed as they come.
struct Timed {
    lines: Vec<(Duration, String)>,
    stderr: String,
    status: Option<i32>,
}

fn run_timed(args: &[String], dir: &Path, limit: Duration, interrupt_after: Option<Duration>) -> Timed {
    let start = Instant::now();
    let mut child = crate::util::spawn_tuplecorr(dir, args);
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send((start.elapsed(), line));
        }
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    });
    let mut interrupted = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if interrupt_after.is_some_and(|after| !interrupted && start.elapsed() > after) {
            interrupted = true;
            assert!(crate::util::signal(pid, "INT"));
        }
        if start.elapsed() > limit {
            crate::util::signal(pid, "KILL");
            let _ = child.wait();
            panic!("tuplecorr --follow still running after {limit:?}: {}", err.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = err.join().unwrap();
    let lines = rx.try_iter().collect();
    Timed { lines, stderr, status }
}

/// 120 requests, one every 100 ms (12 s), at three points whose clocks are
/// seconds apart (the mix's offsets), written as classic pcap files.
fn spread_set(dir: &Path) -> Vec<PathBuf> {
    let names = write_spread_mix_set(dir, 120, 100_000_000 - 200_000);
    names.iter().map(|n| dir.join(n)).collect()
}

fn batch_csv(files: &[PathBuf], dir: &Path) -> String {
    let labels = ["decap", "egress", "backend"];
    let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(dir)
        .arg("--format")
        .arg("csv")
        .args(labels.iter().zip(files).map(|(l, f)| format!("{l}={}", f.display())))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn rows_come_while_the_fifos_are_written_and_equal_the_batch_run() {
    let dir = tempfile::tempdir().unwrap();
    let files = spread_set(dir.path());
    let batch = batch_csv(&files, dir.path());
    assert_eq!(batch.lines().count(), 121, "{batch}");
    let mut args = vec!["--follow".to_string(), "--format".into(), "csv".into()];
    args.extend(fifos_replaying(dir.path(), &files, Duration::from_secs(3)));
    let run = run_timed(&args, dir.path(), Duration::from_secs(90), None);
    assert_same_rows(&run, &batch);
    // Live: the first request (at 0 s) is written about 8 s after its window,
    // well before the writers end (12 s of packets, then 3 s open).
    let at = |n: usize| run.lines[n].0;
    assert!(at(1) < Duration::from_secs(12), "request 1 written at {:?}", at(1));
    let before_end = run.lines.iter().filter(|(t, _)| *t < Duration::from_secs(12)).count();
    assert!(before_end >= 20, "only {before_end} rows before the captures ended");
    assert!(run.stderr.contains("120 requests across decap → egress → backend"), "{}", run.stderr);
    assert!(!run.stderr.contains("came more than"), "late packets: {}", run.stderr);
}

#[test]
fn a_growing_file_is_followed_until_it_is_silent_for_follow_idle() {
    let dir = tempfile::tempdir().unwrap();
    let files = spread_set(dir.path());
    let batch = batch_csv(&files, dir.path());
    // Each point's file is written as tcpdump -U -w FILE writes it: empty
    // when the run starts, each packet appended at its time.
    let labels = ["decap", "egress", "backend"];
    let mut args =
        vec!["--follow".to_string(), "--follow-idle".into(), "3".into(), "--format".into(), "csv".into()];
    for (label, file) in labels.iter().zip(&files) {
        let growing = dir.path().join(format!("{label}-growing.pcap"));
        std::fs::write(&growing, b"").unwrap();
        replay(file.clone(), growing.clone(), Duration::ZERO);
        args.push(format!("{label}={}", growing.display()));
    }
    let run = run_timed(&args, dir.path(), Duration::from_secs(90), None);
    assert_same_rows(&run, &batch);
    assert!(run.lines[1].0 < Duration::from_secs(12), "request 1 written at {:?}", run.lines[1].0);
    assert!(run.stderr.contains("no byte came for 3 s (--follow-idle)"), "{}", run.stderr);
}

#[test]
fn sigint_ends_a_live_run_with_what_was_read_and_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let files = spread_set(dir.path());
    let mut args = vec!["--follow".to_string(), "--format".into(), "ndjson".into()];
    // The writers stay open long after their packets: only the signal ends the run.
    args.extend(fifos_replaying(dir.path(), &files, Duration::from_secs(120)));
    let run = run_timed(&args, dir.path(), Duration::from_secs(60), Some(Duration::from_secs(16)));
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let requests: Vec<serde_json::Value> =
        run.lines.iter().map(|(_, l)| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(requests.len(), 120, "every request was read before the signal");
    let ends = run.lines.iter().map(|(t, _)| *t).max().unwrap();
    assert!(ends < Duration::from_secs(20), "the last line came {ends:?} after the start");
    assert!(run.stderr.contains("the run was stopped (SIGINT or SIGTERM)"), "{}", run.stderr);
    assert!(run.stderr.contains("120 requests across decap → egress → backend"), "{}", run.stderr);
}

#[test]
fn a_point_that_ends_is_blind_after_its_last_packet_and_the_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let files = spread_set(dir.path());
    let labels = ["decap", "egress", "backend"];
    let mut args = vec!["--follow".to_string(), "--format".into(), "csv".into()];
    for (i, (label, file)) in labels.iter().zip(&files).enumerate() {
        let fifo = dir.path().join(format!("{label}.fifo"));
        mkfifo(&fifo);
        // The backend's tcpdump dies 6 s in (its pipe closes); the others go on.
        let until = (i == 2).then_some(Duration::from_secs(6));
        replay_until(file.clone(), fifo.clone(), Duration::from_secs(1), until);
        args.push(format!("{label}={}", fifo.display()));
    }
    let run = run_timed(&args, dir.path(), Duration::from_secs(60), None);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let text: String = run.lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 120, "every request is written: {}", run.stderr);
    let blind: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[col("blind")] == "backend").collect();
    // About the last 6 s of requests began after the backend's last packet.
    assert!((40..=75).contains(&blind.len()), "{} requests blind at backend", blind.len());
    for r in &blind {
        // Nothing is blamed on the silent backend: no loss or origin at its boundary.
        for field in ["reply_lost_between", "outcome_origin"] {
            assert!(!r[col(field)].contains("backend"), "{field}: {r:?}");
        }
        assert_eq!(&r[col("backend_client")], "", "{r:?}");
    }
    // Before it stopped, the backend is no blind spot.
    assert!(rows[..40].iter().all(|r| r[col("blind")].is_empty()));
    assert!(
        run.stderr.contains(&format!(
            "{} requests that began after it list it as blind: its silence is no evidence",
            blind.len()
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn fail_on_ends_a_live_run_at_the_first_matching_request() {
    let dir = tempfile::tempdir().unwrap();
    let files = spread_set(dir.path());
    let mut args = vec![
        "--follow".to_string(),
        "--format".into(),
        "csv".into(),
        "--fail-on".into(),
        "reply-lost".into(),
    ];
    // The writers stay open for minutes: only the match ends the run.
    args.extend(fifos_replaying(dir.path(), &files, Duration::from_secs(300)));
    let run = run_timed(&args, dir.path(), Duration::from_secs(60), None);
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    let ends = run.lines.iter().map(|(t, _)| *t).max().unwrap();
    assert!(ends < Duration::from_secs(30), "the last line came {ends:?} after the start");
    let text: String = run.lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let lost = rows.headers().unwrap().iter().position(|h| h == "reply_path").unwrap();
    let first = rows.records().map(Result::unwrap).position(|r| &r[lost] == "reply-lost");
    assert!(first.is_some(), "the matching request is written");
    assert!(run.stderr.contains("tuplecorr: --fail-on reply-lost: "), "{}", run.stderr);
    assert!(run.stderr.contains("the run was ended by --fail-on (a request matched)"), "{}", run.stderr);
}

#[test]
fn a_live_table_has_fixed_widths_one_header_and_the_summary_after() {
    let lab = crate::util::testdata("lab/reject");
    let labels = ["decap", "egress", "backend"];
    let files: Vec<PathBuf> = labels.iter().map(|l| lab.join(format!("{l}.pcap"))).collect();
    for width in [80usize, 120] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["--follow".to_string(), "--color".into(), "never".into()];
        for (label, file) in labels.iter().zip(&files) {
            let fifo = dir.path().join(format!("{label}.fifo"));
            mkfifo(&fifo);
            replay(file.clone(), fifo.clone(), Duration::ZERO);
            args.push(format!("{label}={}", fifo.display()));
        }
        // laid out as on a terminal `width` columns wide
        let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(dir.path())
            .env("TUPLECORR_TERM_WIDTH", width.to_string())
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let (table, summary) = text.split_once("\n\n").expect("the summary after the table");
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].trim_start().starts_with("#  client  "), "{text}");
        assert!(lines[0].contains("  service  "), "{text}");
        assert_eq!(lines.iter().filter(|l| l.contains("service")).count(), 1, "one header: {text}");
        for l in &lines {
            assert!(l.chars().count() <= width, "{} > {width}: {l}", l.chars().count());
        }
        let numbers: Vec<&str> = lines[1..]
            .iter()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.parse::<u32>().is_ok())
            .collect();
        assert_eq!(numbers, ["1", "2", "3", "4", "5"], "{text}");
        assert!(table.contains("reset by 198.19.96.10"), "{text}");
        // every client whole on its request's line (the rejected 198.18.90.43 too)
        for (n, client) in (1..).zip(["198.18.90.42:40001", "198.18.90.43:40002", "198.18.90.42:40003"]) {
            assert!(lines.iter().any(|l| l.trim_start().starts_with(&format!("{n}  {client}  "))), "{text}");
        }
        assert!(summary.starts_with("5 requests across decap → egress → backend"), "{summary}");
    }
}

/// Writes the classic pcap `file` as `tcpdump -U -C` would: its records in
/// real time into `DIR/LABEL.pcap`, then from record `at` on into a new file
/// `DIR/LABEL.pcap1` with the same header. Runs detached.
fn replay_rotated(file: PathBuf, dir: PathBuf, label: String, at: usize) {
    std::thread::spawn(move || {
        let bytes = std::fs::read(&file).unwrap();
        let open = |name: String| {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(dir.join(name)).unwrap();
            f.write_all(&bytes[..24]).unwrap();
            f
        };
        let mut out = open(format!("{label}.pcap"));
        let start = Instant::now();
        for (n, (due, range)) in records(&bytes).into_iter().enumerate() {
            if n == at {
                std::thread::sleep(Duration::from_millis(300));
                out = open(format!("{label}.pcap1"));
            }
            sleep_until(start, due);
            out.write_all(&bytes[range]).unwrap();
        }
    });
}

#[test]
fn a_rotation_pattern_is_followed_from_file_to_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = spread_set(dir.path());
    let batch = batch_csv(&files, dir.path());
    let live = dir.path().join("live");
    std::fs::create_dir(&live).unwrap();
    let labels = ["decap", "egress", "backend"];
    let mut args =
        vec!["--follow".to_string(), "--follow-idle".into(), "3".into(), "--format".into(), "csv".into()];
    for (label, file) in labels.iter().zip(&files) {
        // tcpdump -C: a new file after 400 records (a few seconds in)
        replay_rotated(file.clone(), live.clone(), label.to_string(), 400);
        args.push(format!("{label}={}/{label}.pcap*", live.display()));
    }
    let run = run_timed(&args, dir.path(), Duration::from_secs(90), None);
    assert_same_rows(&run, &batch);
    for label in labels {
        assert!(live.join(format!("{label}.pcap1")).exists(), "{label} was rotated");
    }
}

#[test]
fn follow_refuses_what_it_cannot_write_live() {
    let lab = crate::util::testdata("lab/reject");
    let caps: Vec<String> = ["decap", "egress", "backend"]
        .iter()
        .map(|l| lab.join(format!("{l}.pcap")).display().to_string())
        .collect();
    for (extra, message) in [
        (
            &["--format", "json"][..],
            "--follow writes each request as soon as it is settled: it needs --format table, csv or ndjson",
        ),
        (&["--format", "csv", "--stream"][..], "it needs no --stream"),
        (&["--format", "csv", "--pcapng", "x.pcapng"][..], "it needs no --pcapng"),
        (&["--summary"][..], "it needs no --summary"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .arg("--follow")
            .args(extra)
            .args(&caps)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(message),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .args(["--follow", "--format", "csv"])
        .arg(format!("decap={}", caps[0]))
        .arg(format!("decap={}", caps[1]))
        .arg(format!("backend={}", caps[2]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--follow reads one input per capture point: decap is given 2 files"));
}
