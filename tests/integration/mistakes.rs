//! Mistakes users make (issue 10): impossible `--since`/`--until` times, the
//! same capture given twice, a wrong `--offset`, `--summary` with a machine
//! format. Runs the built binary on the lab's captures.

use crate::util::{run_in_lab as run, stderr_of as stderr};

const REJECT: [&str; 3] = ["reject/decap.pcap", "reject/egress.pcap", "reject/backend.pcap"];

#[test]
fn impossible_dates_and_zones_are_usage_errors() {
    for (option, value, says) in [
        ("--since", "2026-02-31T00:00:00Z", "2026-02 has no day 31"),
        ("--until", "2026-11-29T23:40:38+01x00", "zone \"+01x00\""),
        ("--since", "2026-11-29T25:00:00Z", "not a time of day"),
    ] {
        let o = run(&[&["--quiet", option, value][..], &REJECT[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{option} {value}");
        let e = stderr(&o);
        assert!(e.contains(&format!("{option} {value}: not an RFC 3339 time")) && e.contains(says), "{e}");
        assert!(o.stdout.is_empty());
    }
    // a real date still works
    let o =
        run(&[&["--quiet", "--format", "csv", "--since", "2026-02-28T00:00:00+01:00"][..], &REJECT[..]]
            .concat());
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_same_capture_twice_is_a_warning_naming_both_labels() {
    let o = run(&[
        "--quiet",
        "decap=reject/decap.pcap",
        "egress=reject/../reject/decap.pcap",
        "reject/backend.pcap",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("decap and egress are the same file"), "{}", stderr(&o));
    // identical bytes under two names
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.pcap");
    std::fs::copy(crate::util::testdata("lab/reject/egress.pcap"), &copy).unwrap();
    let o = run(&[
        "--quiet",
        "--format",
        "json",
        "reject/decap.pcap",
        "reject/egress.pcap",
        copy.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &json["warnings"][0];
    assert_eq!(w["label"], "copy");
    assert!(w["message"].as_str().unwrap().starts_with("egress and copy are identical bytes"), "{w}");
}

#[test]
fn a_wrong_offset_is_named_with_the_likely_value() {
    let shift = ["clock-shift/decap.pcap", "clock-shift/egress.pcap", "clock-shift/backend.pcap"];
    // egress runs 2.75 s ahead; given the other way round
    let o = run(&[&["--quiet", "--offset", "egress=-2.75"][..], &shift[..]].concat());
    assert!(o.status.success());
    let e = stderr(&o);
    assert!(e.contains("egress.pcap: requests take 5500.0"), "{e}");
    assert!(e.contains("try --offset egress=2.750 (the sign of --offset looks reversed)"), "{e}");
    // too far the other way: a negative delay
    let o = run(&[&["--quiet", "--offset", "backend=1.3"][..], &shift[..]].concat());
    let e = stderr(&o);
    assert!(e.contains("backend.pcap: requests appear here 2599.9"), "{e}");
    assert!(e.contains("try --offset backend=-1.300 (the sign of --offset looks reversed)"), "{e}");
    // the estimate needs no warning
    let o = run(&[&["--quiet"][..], &shift[..]].concat());
    assert_eq!(stderr(&o), "");
}

#[test]
fn a_kept_ttl_says_kept() {
    let any = ["any-node/decap.pcap", "any-node/egress.pcap", "any-node/node.pcap", "any-node/backend.pcap"];
    let o = run(&[&["--quiet", "--summary", "--color", "never"][..], &any[..]].concat());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("egress->node(in)     delay 0.001 ms, TTL kept, ") && !text.contains("TTL -0"),
        "{text}"
    );
}

#[test]
fn summary_with_a_machine_format_is_refused() {
    for format in ["csv", "json", "ndjson"] {
        let o = run(&[&["--quiet", "--summary", "--format", format][..], &REJECT[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert!(stderr(&o).contains("--summary is the table's summary only"), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    let o = run(&[&["--quiet", "--summary", "--format", "table"][..], &REJECT[..]].concat());
    assert!(o.status.success());
}
