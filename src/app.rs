//! What the binary does for each form of the command line: settings → pipeline →
//! report → exit status. Exit statuses live here, in one place.

use crate::cli::{ColorArg, CompareArgs, CorrelateArgs, FailOn, InspectArgs, InspectFormat, UsageError};
use crate::compare::Side;
use crate::config::Config;
use crate::progress::Bars;
use crate::report::{self, FailOnKind, Format, ReportOptions};
use crate::verdict::Findings;
use std::error::Error;
use std::ffi::OsStr;
use std::io::{self, IsTerminal};

/// Report written (warnings allowed).
pub const EXIT_OK: u8 = 0;
/// `--fail-on` matched.
pub const EXIT_FAIL_ON: u8 = 1;
/// Usage error, or a capture that cannot be opened or is not a capture.
pub const EXIT_ERROR: u8 = 2;

pub type AppError = Box<dyn Error + Send + Sync>;

/// True for a write error caused by a closed pipe (`tuplecorr ... | head`).
pub fn is_broken_pipe(err: &AppError) -> bool {
    crate::output::is_broken_pipe(err.as_ref())
}

/// `tuplecorr: warning: FILE (LABEL): record R at byte B: problem; consequence`
/// (the label only when the file name does not start with it).
fn print_warnings(warnings: &[crate::verdict::WarningOut], captures: &[crate::config::CaptureSpec]) {
    for w in warnings {
        let mut place = String::new();
        if let Some(r) = w.record {
            place.push_str(&format!("record {r} "));
        }
        if let Some(o) = w.byte_offset {
            place.push_str(&format!("at byte {o} "));
        }
        let place = if place.is_empty() { String::new() } else { format!("{}: ", place.trim_end()) };
        let file = captures.iter().find(|c| c.label == w.label).map(|c| c.display_name());
        let who = match file {
            // the label only when the file name does not already say it
            Some(f) if !file_name_of(&f).starts_with(&w.label) => format!("{f} ({})", w.label),
            Some(f) => f,
            _ => w.label.clone(),
        };
        eprintln!("tuplecorr: warning: {who}: {place}{}", w.message);
    }
}

/// The last component of a path as given (for messages).
fn file_name_of(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// A capture that cannot be read stops the main form and `compare`: every
/// capture point is needed for the verdicts.
fn stopped(e: crate::read::ReadError) -> AppError {
    format!("{e}; stopped, no report written (every capture point is needed)").into()
}

/// The main form: correlate the captures and write the report.
pub fn correlate(args: &CorrelateArgs) -> Result<u8, AppError> {
    let config = args.to_config()?;
    if args.summary && args.report_format() != Format::Table {
        return Err(UsageError(
            "--summary is the table's summary only; leave it out for CSV, JSON, NDJSON or HTML".into(),
        )
        .into());
    }
    let target =
        crate::output::target(args.output.as_deref(), &crate::output::capture_inputs(&config.captures))?;
    let bars = Bars::new(config.captures.len(), !config.quiet);
    let inputs = crate::output::capture_inputs(&config.captures);
    let pcapng_target =
        args.pcapng.as_deref().map(|p| crate::output::target(Some(p), &inputs)).transpose()?;
    let format = args.report_format();
    let want_ladder = (format == Format::Html && !args.summary) || args.pcapng.is_some();
    let (mut findings, ladder) =
        with_threads(config.threads, || crate::pipeline::analyze_full(&config, &bars, want_ladder))?
            .map_err(stopped)?;
    findings.warnings.extend(crate::checks::all(&config, &findings));
    print_warnings(&findings.warnings, &config.captures);
    report::filter_requests(&mut findings, &config.filter);
    if !args.all {
        for u in &mut findings.unmatched {
            u.flows.clear();
        }
    }
    let to_terminal = args.output.is_none() && io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR");
    let options = ReportOptions {
        format,
        summary_only: args.summary,
        color: color_enabled(args.color.unwrap_or(ColorArg::Auto), to_terminal, no_color.as_deref()),
    };
    crate::output::write_to(&target, |out| {
        report::write_with_ladder(&findings, ladder.as_ref(), &options, out)
    })?;
    if let (Some(pcapng), Some(path), Some(ladder)) = (&pcapng_target, &args.pcapng, &ladder) {
        let merge = crate::merge::MergeOptions { only_requests: args.pcapng_only_requests };
        let reported: Vec<u64> = findings.requests.iter().map(|r| r.request).collect();
        crate::output::write_to(pcapng, |out| {
            let stats =
                crate::merge::write_merged(&config.captures, ladder, &findings, &reported, &merge, out)?;
            for w in stats.warnings() {
                eprintln!("tuplecorr: warning: {}: {w}", path.display());
            }
            Ok(())
        })?;
    }
    let fail_on: Vec<FailOnKind> = args.fail_on.iter().map(|f| fail_on_kind(*f)).collect();
    let code = if report::fail_on_matches(&findings, &fail_on) { EXIT_FAIL_ON } else { EXIT_OK };
    // The process ends right after this: freeing every request's strings one by
    // one measured 5-9% of a run (scripts/BENCH.md), for memory the OS reclaims anyway.
    std::mem::forget(findings);
    Ok(code)
}

/// `--color`: `always`, `never`, or (auto) only on a terminal and when
/// `NO_COLOR` is unset or empty (no-color.org).
pub fn color_enabled(choice: ColorArg, to_terminal: bool, no_color: Option<&OsStr>) -> bool {
    match choice {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => to_terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// The clap value of `--fail-on` as the report layer's kind.
pub fn fail_on_kind(f: FailOn) -> FailOnKind {
    match f {
        FailOn::NoReply => FailOnKind::NoReply,
        FailOn::ReplyLost => FailOnKind::ReplyLost,
        FailOn::Bypassed => FailOnKind::Bypassed,
        FailOn::Reset => FailOnKind::Reset,
        FailOn::IcmpError => FailOnKind::IcmpError,
        FailOn::Ambiguous => FailOnKind::Ambiguous,
    }
}

/// `tuplecorr inspect`: every capture is read (each by its own rayon task) and
/// described. A capture that cannot be opened or is no capture at all gets
/// `tuplecorr: error: FILE: ...` on stderr and is left out of the report (as
/// capinfos does); the others are still reported (JSON: the array holds only the
/// captures that were read) and the exit status is 2. Warnings are printed on
/// stderr like the main form's, and also appear in the report.
pub fn inspect(args: &InspectArgs) -> Result<u8, AppError> {
    let specs = crate::cli::capture_specs(&args.captures)?;
    let bars = Bars::new(specs.len(), !args.quiet);
    let results = crate::inspect::inspect_all(&specs, &crate::config::FlowConfig::default(), &bars);
    let mut read = Vec::with_capacity(results.len());
    let mut failed = false;
    for result in results {
        match result {
            Ok(i) => read.push(i),
            Err(e) => {
                eprintln!("tuplecorr: error: {e}; skipped it");
                failed = true;
            }
        }
    }
    let warnings: Vec<crate::verdict::WarningOut> = (read.iter().flat_map(|i| &i.warnings))
        .map(|w| crate::verdict::WarningOut {
            label: w.label.clone(),
            record: w.record,
            byte_offset: w.byte_offset,
            message: w.message.clone(),
        })
        .collect();
    print_warnings(&warnings, &specs);
    crate::output::write_to(&crate::output::Target::Stdout, |out| match args.format {
        InspectFormat::Table => crate::inspect::write_table(&read, out),
        InspectFormat::Json => crate::inspect::write_json(&read, out),
    })?;
    Ok(if failed { EXIT_ERROR } else { EXIT_OK })
}

/// `tuplecorr compare`: load or analyse each side, compare, write.
pub fn compare(args: &CompareArgs) -> Result<u8, AppError> {
    let inputs = crate::output::compare_inputs(&[&args.before, &args.after]);
    let target = crate::output::target(args.output.as_deref(), &inputs)?;
    let before = compare_side(&args.before, args.quiet)?;
    let after = compare_side(&args.after, args.quiet)?;
    let comparison = crate::compare::compare(&before, &after);
    let format = args
        .format
        .map(Format::from)
        .or_else(|| crate::cli::format_from_path(args.output.as_deref()))
        .unwrap_or(Format::Table);
    if format == Format::Html {
        return Err(UsageError(
            "compare writes table, csv, json or ndjson; html is for the main form".into(),
        )
        .into());
    }
    crate::output::write_to(&target, |out| crate::compare::write(&comparison, format, out))?;
    Ok(EXIT_OK)
}

/// One side of `compare`: a report read back, or captures run through the pipeline.
pub fn compare_side(arg: &str, quiet: bool) -> Result<Findings, AppError> {
    match crate::compare::side_of(arg) {
        Side::Report(path) => Ok(crate::compare::load_report(&path)?),
        Side::Captures(list) => {
            if list.len() < 2 || list.len() > 8 {
                return Err(UsageError(format!(
                    "{arg}: give 2 to 8 comma-separated captures in path order (got {})",
                    list.len()
                ))
                .into());
            }
            let config = Config { captures: crate::cli::capture_specs(&list)?, quiet, ..Config::default() };
            let bars = Bars::new(config.captures.len(), !quiet);
            let findings = crate::pipeline::analyze(&config, &bars).map_err(stopped)?;
            print_warnings(&findings.warnings, &config.captures);
            Ok(findings)
        }
    }
}

/// Runs `f` on a rayon pool of `threads` threads (the global pool when None).
pub fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, AppError> {
    match threads {
        None => Ok(f()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build()?;
            Ok(pool.install(f))
        }
    }
}
