//! The binary's glue without captures: `-o` written atomically (and nothing left
//! behind on failure), `--color` and `NO_COLOR`, `--fail-on` mapping, and
//! `compare` end to end on report files.

use crate::fixtures::findings;
use clap::Parser;
use tuplecorr::cli::Args;
use tuplecorr::compare::CompareFormat;
use tuplecorr::report::{self, Format, ReportOptions};
use tuplecorr::report::{Choice, FailOn};
use tuplecorr::run::ColorChoice;
use tuplecorr::run::CompareSide;
use tuplecorr::run::{CompareRun, Run};
use tuplecorr::{app, output};

fn table(color: bool) -> String {
    let mut out = Vec::new();
    report::write(&findings(), &ReportOptions { color, ..ReportOptions::default() }, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn output_into_a_file_used_as_folder_fails_cleanly_leaving_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let target = file.join("report.csv"); // ENOTDIR
    let f = findings();
    let options = ReportOptions { format: Format::Csv, ..ReportOptions::default() };
    let err = output::write_output(Some(&target), &[], |out| report::write(&f, &options, out)).unwrap_err();
    assert!(err.to_string().contains("cannot write the report"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["plain-file"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn output_file_is_complete_and_no_temporary_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.json");
    let f = findings();
    let options = ReportOptions { format: Format::Json, ..ReportOptions::default() };
    output::write_output(Some(&target), &[], |out| report::write(&f, &options, out)).unwrap();
    let back: tuplecorr::report::wire::Findings =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(back.requests.len(), 5);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn failed_write_removes_the_temporary_and_keeps_the_old_report() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.csv");
    std::fs::write(&target, "old").unwrap();
    let err = output::write_output(Some(&target), &[], |out| {
        out.write_all(b"partial")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert!(err.to_string().contains("disk full"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn color_always_colours_and_never_or_no_color_does_not() {
    assert!(table(true).contains("\x1b[32m"));
    assert!(!table(false).contains('\x1b'));
    use std::ffi::OsStr;
    assert!(app::color_enabled(ColorChoice::Always, false, Some(OsStr::new("1"))));
    assert!(!app::color_enabled(ColorChoice::Never, true, None));
    assert!(app::color_enabled(ColorChoice::Auto, true, None));
    assert!(app::color_enabled(ColorChoice::Auto, true, Some(OsStr::new(""))));
    assert!(!app::color_enabled(ColorChoice::Auto, true, Some(OsStr::new("1"))));
    assert!(!app::color_enabled(ColorChoice::Auto, false, None));
}

#[test]
fn fail_on_list_parses_into_the_run_and_matches_the_named_problems() {
    let run = Args::try_parse_from(["tuplecorr", "a.pcap", "b.pcap", "--fail-on", "reply-lost,icmp-error"])
        .unwrap()
        .into_run()
        .unwrap();
    let Run::Correlate(run) = run else { panic!("the main form correlates") };
    assert_eq!(run.fail_on, [FailOn::ReplyLost, FailOn::IcmpError]);
    let all: Vec<FailOn> = FailOn::NAMES.iter().map(|(_, k)| *k).collect();
    assert_eq!(FailOn::from_name("no-reply"), Some(FailOn::NoReply));
    let f = findings();
    assert!(report::fail_on_matches(&f, &[FailOn::ReplyLost]));
    assert!(!report::fail_on_matches(&f, &[FailOn::Reset, FailOn::Bypassed]));
    let mut quiet = f.clone();
    quiet.requests.retain(|r| r.request == 1);
    assert!(!report::fail_on_matches(&quiet, &all));
}

#[test]
fn compare_writes_the_change_statement_for_two_report_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut before = findings();
    before.requests.truncate(1);
    let mut after = before.clone();
    after.requests[0].captures[2].client = Some(crate::fixtures::ep("198.18.90.42:51514"));
    after.requests[0].source.clear();
    let write = |name: &str, f: &tuplecorr::verdict::Findings| {
        let path = dir.path().join(name);
        let options = ReportOptions { format: Format::Json, ..ReportOptions::default() };
        output::write_output(Some(&path), &[], |out| report::write(f, &options, out)).unwrap();
        path.to_str().unwrap().to_string()
    };
    let out = dir.path().join("change.txt");
    let args = CompareRun {
        before: CompareSide::Report(write("before.json", &before).into()),
        after: CompareSide::Report(write("after.json", &after).into()),
        path: Some(out.clone()),
        format: CompareFormat::Table,
        quiet: true,
        expectations: Vec::new(),
        allow_regressions: false,
        expectations_file: None,
        rollback: false,
    };
    assert_eq!(app::compare(&args).unwrap(), app::EXIT_OK);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("Change record (tuplecorr compare)\n"), "{text}");
    assert!(text.contains("\n- tcp 198.19.96.10:80 from 198.18.90.42 (1 before, 1 after): "), "{text}");
    assert!(text.contains("source at backend was 198.19.3.17 before, 198.18.90.42 after"), "{text}");
}

#[test]
fn compare_with_a_missing_report_is_an_error_naming_it() {
    let args = CompareRun {
        before: CompareSide::Report("/nonexistent/before.json".into()),
        after: CompareSide::Report("/nonexistent/after.json".into()),
        path: None,
        format: CompareFormat::Table,
        quiet: true,
        expectations: Vec::new(),
        allow_regressions: false,
        expectations_file: None,
        rollback: false,
    };
    let err = app::compare(&args).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/before.json"), "{err}");
}
