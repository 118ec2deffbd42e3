//! Every option checked at parse time (issue 29): numbers in range, outputs
//! that cannot collide, messages that say which option and why. Runs the built
//! binary on the lab's captures.

use crate::util::{run_in_lab as run, stderr_of as stderr};
use std::process::Output;

const MASQ: [&str; 2] = ["masquerade-node/decap.pcap", "masquerade-node/backend.pcap"];

/// `args` after `--quiet` and the two captures.
fn masq(args: &[&str]) -> Output {
    run(&[&["--quiet"][..], &MASQ[..], args].concat())
}

#[test]
fn numbers_out_of_range_nan_and_infinities_are_usage_errors_naming_option_value_and_range() {
    for (args, says) in [
        (&["--threads", "0"][..], "tuplecorr: error: --threads 0: expected 1 to 1024 worker threads"),
        (&["--threads", "100000"], "tuplecorr: error: --threads 100000: expected 1 to 1024 worker threads"),
        (&["--tolerance", "1e9"], "tuplecorr: error: --tolerance 1000000000: expected milliseconds, 0 to 60000"),
        (&["--tolerance", "NaN"], "tuplecorr: error: --tolerance NaN: expected milliseconds, 0 to 60000"),
        (&["--max-offset", "inf"], "tuplecorr: error: --max-offset inf: expected seconds, 0 to 31536000"),
        (&["--max-offset", "-5"], "tuplecorr: error: --max-offset -5: expected seconds, 0 to 31536000"),
        (&["--udp-idle", "inf"], "tuplecorr: error: --udp-idle inf: expected seconds, more than 0, at most 31536000"),
        (
            &["--offset", "backend=1e12"],
            "tuplecorr: error: --offset backend=1e12: expected a clock offset in seconds within ±315360000 (10 years)",
        ),
        (&["--offset", "backend=inf"], "tuplecorr: error: --offset backend=inf: expected a clock offset"),
        (&["--offset", "backend=NaN"], "tuplecorr: error: --offset backend=NaN: expected a clock offset"),
        (
            &["--shard-start", "0", "--shard-end", "1", "--shard-margin", "-10"],
            "tuplecorr: error: --shard-margin -10: expected seconds, 0 to 31536000",
        ),
        (&["--stream", "--stream-hold", "-1"], "tuplecorr: error: --stream-hold -1: expected seconds, 0 to 31536000"),
        (&["--stream", "--stream-window", "NaN"], "tuplecorr: error: --stream-window NaN: expected seconds, 1 to"),
    ] {
        let o = masq(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // the ends of the ranges are accepted
    let o = masq(&["--format", "csv", "--threads", "1", "--tolerance", "60000", "--offset", "backend=-0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = masq(&["--format", "csv", "--shard-start", "0", "--shard-end", "1", "--shard-margin", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn outputs_are_checked_against_each_other_and_every_input_before_any_work_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let (x, w) = (path("x"), path("w.txt"));
    for (args, says) in [
        (
            vec!["--pcapng", &x, "-o", &x],
            format!("tuplecorr: error: --pcapng {x}: -o {x} already writes the report there; give the merged pcapng a file of its own"),
        ),
        (
            vec!["--format", "csv", "--pcapng", "-"],
            "tuplecorr: error: --pcapng -: standard output already takes the report (-o (left out)); give the merged pcapng a file of its own".to_string(),
        ),
        (
            vec!["-o", "-", "--warnings-to", "/dev/stdout"],
            "tuplecorr: error: --warnings-to /dev/stdout: standard output already takes the report (-o -)".to_string(),
        ),
        (
            vec!["-o", &w, "--pcapng", &x, "--warnings-to", &x],
            format!("tuplecorr: error: --warnings-to {x}: --pcapng {x} already writes the merged pcapng there"),
        ),
        (
            vec!["--pcapng", "masquerade-node/decap.pcap"],
            "tuplecorr: error: --pcapng masquerade-node/decap.pcap: is the input decap (masquerade-node/decap.pcap); refusing to write the merged pcapng over it".to_string(),
        ),
        (
            vec!["-o", &w, "--warnings-to", "masquerade-node/../masquerade-node/backend.pcap"],
            "tuplecorr: error: --warnings-to masquerade-node/../masquerade-node/backend.pcap: is the input backend".to_string(),
        ),
    ] {
        let o = masq(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&says), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "{args:?} wrote a file");
    }
    // --names and --clocks-from are inputs too
    let names = path("hosts");
    std::fs::write(&names, "198.18.90.42 client\n").unwrap();
    let o = masq(&["--names", &names, "-o", &names]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("-o {names}: is the input --names ({names})")), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&names).unwrap(), "198.18.90.42 client\n");
    std::fs::remove_file(&names).unwrap();
    // a capture on standard input cannot be read again for --pcapng: refused before the report
    let report = path("r.csv");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(crate::util::testdata("lab"))
        .args(["--quiet", "-", "masquerade-node/backend.pcap", "-o", &report, "--pcapng", &x])
        .stdin(std::fs::File::open(crate::util::testdata("lab/masquerade-node/decap.pcap")).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "tuplecorr: error: --pcapng {x}: the merged pcapng reads every capture again, and stdin (-) is \
             standard input, a pipe or a FIFO, which cannot be read twice; give that capture as a file\n"
        )),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "the report was written");
    // /dev/null takes any number of outputs; distinct files are fine
    let o = masq(&["-o", "/dev/null", "--pcapng", "/dev/null", "--warnings-to", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = masq(&["-o", &report, "--pcapng", &x, "--warnings-to", &w]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&report).unwrap().starts_with("request,proto,"));
}

#[test]
fn fail_on_says_which_requests_matched_and_why() {
    let reject = ["reject/decap.pcap", "reject/egress.pcap", "reject/backend.pcap"];
    let want = "tuplecorr: --fail-on no-reply,reset,icmp-error: 3 requests matched: request 2 (icmp-error), \
                request 3 (reset), request 4 (icmp-error)\n";
    for stream in [&[][..], &["--stream"][..]] {
        let o = run(&[
            &["--quiet", "--format", "csv", "--fail-on", "no-reply,reset,icmp-error"][..],
            stream,
            &reject[..],
        ]
        .concat());
        assert_eq!(o.status.code(), Some(1), "{stream:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), want, "{stream:?}");
        assert!(!o.stdout.is_empty(), "the report is still written");
    }
    // nothing matched: exit 0 and nothing said
    let o = run(&[&["--quiet", "--format", "csv", "--fail-on", "bypassed"][..], &reject[..]].concat());
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

#[test]
fn clocks_from_a_report_are_said_to_come_from_it_not_from_offset() {
    let shift = ["clock-shift/decap.pcap", "clock-shift/egress.pcap", "clock-shift/backend.pcap"];
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json").to_string_lossy().into_owned();
    let o = run(&[&["--quiet", "-o", &report][..], &shift[..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o =
        run(&[&["--quiet", "--summary", "--color", "never", "--clocks-from", &report][..], &shift[..]]
            .concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("  egress   +2750.002 ms ± 0.000 ms (from --clocks-from {report})\n")),
        "{text}"
    );
    assert!(!text.contains("--offset"), "{text}");
    // an --offset still says so
    let o =
        run(&[&["--quiet", "--summary", "--color", "never", "--offset", "egress=2.75"][..], &shift[..]]
            .concat());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("  egress   +2750.000 ms (set with --offset)\n"), "{text}");
}

#[test]
fn help_says_what_stream_writes_and_a_filter_that_finds_one_request_only() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = String::from_utf8_lossy(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Every format but HTML"), "{help}");
    assert!(!help.contains("CSV or NDJSON only"), "{help}");
    assert!(help.contains(r#"`frame.comment contains "request 17 at "`"#), "{help}");
    assert!(!help.contains(r#""request 17")"#), "{help}");
    // the bounds of the numbers are said where the options are
    for bound in ["Worker threads, 1 to 1024", "within ±315360000 seconds (10 years)", "0 to 60000"] {
        assert!(help.contains(bound), "{bound}: {help}");
    }
}

#[test]
fn a_split_capture_s_points_are_named_alike_by_columns_offset_and_compare_at() {
    let any = ["any-node/decap.pcap", "any-node/egress.pcap", "any-node/node.pcap", "any-node/backend.pcap"];
    let table = |args: &[&str]| {
        let o = run(&[&["--quiet", "--color", "never"][..], args, &any[..]].concat());
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o))
    };
    // a sub-point's label names its column; the capture's label every sub-point's;
    // a label after a split capture names its own point (it showed node(out) under "backend")
    let (code, out, err) = table(&["--columns", "request,node(out),backend"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with(
            "#  node(out)                  →  backend\n1  198.19.3.17:40001 via if3  →  198.19.3.17:40001\n"
        ),
        "{out}"
    );
    let (code, out, err) = table(&["--columns", "request,node,backend"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("#  node(in)                    →  node(out)                  →  backend\n"),
        "{out}"
    );
    let (code, _, err) = table(&["--columns", "request,node(up0)"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--columns: no capture point is labelled node(up0) (the points: decap, egress, node(in), node(out), backend)"),
        "{err}"
    );
    // also in a stream, whose points are known from its first window
    let (code, out, err) = table(&["--stream", "--columns", "request,node(out),backend"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with(
            "#  node(out)                  →  backend\n1  198.19.3.17:40001 via if3  →  198.19.3.17:40001\n"
        ),
        "{out}"
    );
    let (code, out, err) = table(&["--stream", "--columns", "request,node(up0)"]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert!(err.contains("--columns: no capture point is labelled node(up0) (the points: "), "{err}");
    let (code, _, err) = table(&["--columns", "request,vpn(out)"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--columns: no column \"vpn(out)\""), "{err}");
    // --offset: a sub-point stands for its capture (one clock), as the bare label does
    for label in ["node(out)", "node"] {
        let (code, out, err) = table(&["--summary", "--offset", &format!("{label}=0.001")]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("  node(in)   +1.000 ms (set with --offset)\n"), "{label}: {out}");
    }
    // compare --at: a sub-point's label, or a capture's when it is one point
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("any.json").to_string_lossy().into_owned();
    assert_eq!(run(&[&["--quiet", "-o", &report][..], &any[..]].concat()).status.code(), Some(0));
    let at = |label: &str| {
        let o = run(&["compare", "-q", &report, &report, "--expect-source", "198.19.3.17", "--at", label]);
        (o.status.code(), stderr(&o))
    };
    assert_eq!(at("node(out)"), (Some(0), String::new()));
    assert_eq!(at("backend"), (Some(0), String::new()));
    let (code, err) = at("node");
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--at node: node is split into node(in), node(out) in the after run; name one of them"),
        "{err}"
    );
}
