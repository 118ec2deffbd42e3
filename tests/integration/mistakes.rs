//! Mistakes users make (issue 10): impossible `--since`/`--until` times, the
//! same capture given twice, a wrong `--offset`, `--summary` with a machine
//! format. Runs the built binary on the lab's captures.

use std::process::Output;

fn run(args: &[&str]) -> Output {
    let lab = crate::util::testdata("lab");
    std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab)
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
