//! What the binary does for each form of the command line: a plain
//! `run::Run` → pipeline → report → exit status. Takes a `Run` (never a clap
//! type); gives an exit status or one `Error` that `main` prints once. Exit
//! statuses live here, in one place.

use crate::cli::UsageError;
use crate::drive::Config;
use crate::progress::Bars;
use crate::report::Format;
use crate::report::{self, ReportOptions};
use crate::run::CompareSide;
use crate::run::{ColorChoice, InspectFormat};
use crate::run::{CompareRun, CorrelateRun, InspectRun, Run};
use crate::verdict::Findings;
use std::ffi::OsStr;
use std::fmt;
use std::io::{self, IsTerminal};

/// Report written (warnings allowed).
pub const EXIT_OK: u8 = 0;
/// `--fail-on` matched, or an expectation of `compare` did not hold or a regression was found.
pub const EXIT_FAIL_ON: u8 = 1;
/// Usage error, or a capture that cannot be opened or is not a capture.
pub const EXIT_ERROR: u8 = 2;

/// Why a run stopped. Its `Display` is the whole message (main adds only the
/// `tuplecorr: error: ` prefix); `source()` gives the underlying error.
#[derive(Debug)]
pub enum Error {
    /// The command line parsed but makes no sense.
    Usage(crate::cli::UsageError),
    /// A capture of the main form or of `compare` could not be read.
    Read(crate::read::ReadError),
    /// A `compare` side is not a tuplecorr report.
    Load(crate::compare::LoadError),
    /// A `--names` file could not be read (before any capture: a usage error).
    Names(crate::names::NamesError),
    /// The report (or the merged pcapng) could not be written.
    Write(crate::output::OutputError),
    /// `--threads`: the pool could not be built.
    Threads(rayon::ThreadPoolBuildError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(e) => write!(f, "{e}"),
            // Every capture point is needed for the verdicts.
            Error::Read(e) => write!(f, "{e}; stopped, no report written (every capture point is needed)"),
            Error::Load(e) => write!(f, "{e}"),
            Error::Names(e) => write!(f, "{e}"),
            Error::Write(e) => write!(f, "{e}"),
            Error::Threads(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Usage(e) => Some(e),
            Error::Read(e) => Some(e),
            Error::Load(e) => Some(e),
            Error::Names(e) => Some(e),
            Error::Write(e) => Some(e),
            Error::Threads(e) => Some(e),
        }
    }
}

impl From<crate::cli::UsageError> for Error {
    fn from(e: crate::cli::UsageError) -> Error {
        Error::Usage(e)
    }
}

impl From<crate::read::ReadError> for Error {
    fn from(e: crate::read::ReadError) -> Error {
        Error::Read(e)
    }
}

impl From<crate::compare::LoadError> for Error {
    fn from(e: crate::compare::LoadError) -> Error {
        Error::Load(e)
    }
}

impl From<crate::output::OutputError> for Error {
    fn from(e: crate::output::OutputError) -> Error {
        Error::Write(e)
    }
}

impl Error {
    /// True for a write that failed on a closed pipe (`tuplecorr ... | head`),
    /// anywhere in the source chain: not an error.
    pub fn is_broken_pipe(&self) -> bool {
        crate::output::is_broken_pipe(self)
    }
}

/// Runs what the command line asked for.
pub fn run(run: Run) -> Result<u8, Error> {
    match run {
        Run::Correlate(r) => correlate(&r),
        Run::Inspect(r) => inspect(&r),
        Run::Compare(r) => compare(&r),
        Run::Generate(what) => {
            crate::output::write_to(&crate::output::Target::Stdout, |out| crate::cli::generate(what, out))?;
            Ok(EXIT_OK)
        }
    }
}

/// The terminal's width: `COLUMNS` when set, else what the terminal says,
/// else 80.
fn terminal_width() -> usize {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok());
    from_env
        .or_else(|| console::Term::stdout().size_checked().map(|(_, cols)| usize::from(cols)))
        .filter(|w| *w > 0)
        .unwrap_or(80)
}

/// `TUPLECORR_TERM_WIDTH=N` (N > 0): the table is laid out as on a terminal N
/// columns wide, whatever standard output is (tests, `watch`, a pager that
/// keeps the width). Colour still follows the real terminal.
pub const TERM_WIDTH_VAR: &str = "TUPLECORR_TERM_WIDTH";

/// The width the table fits: on a terminal (or as [`TERM_WIDTH_VAR`] says)
/// and without `-o`; None for piped output, which is never fitted.
fn table_width(to_file: bool, to_terminal: bool) -> Option<usize> {
    let forced = std::env::var(TERM_WIDTH_VAR).ok().and_then(|v| v.trim().parse::<usize>().ok());
    match forced.filter(|w| *w > 0) {
        _ if to_file => None,
        Some(width) => Some(width),
        None => to_terminal.then(terminal_width),
    }
}

/// `tuplecorr: warning: FILE (LABEL): record R at byte B: problem; consequence`
/// (the label only when the file name does not start with it).
fn print_warnings(warnings: &[crate::verdict::WarningOut], captures: &[crate::read::CaptureSpec]) {
    for line in warning_lines(warnings, captures) {
        eprintln!("tuplecorr: warning: {line}");
    }
}

/// `--warnings-to FILE`: a CSV `file,label,record,byte_offset,message` when
/// FILE ends in `.csv`, else the lines printed on stderr. Written even when
/// there is no warning, so its absence of lines says so.
pub fn write_warnings(
    warnings: &[crate::verdict::WarningOut],
    captures: &[crate::read::CaptureSpec],
    path: &std::path::Path,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if !csv {
        for line in warning_lines(warnings, captures) {
            writeln!(out, "tuplecorr: warning: {line}")?;
        }
        return Ok(());
    }
    let mut w = ::csv::Writer::from_writer(out);
    w.write_record(["file", "label", "record", "byte_offset", "message"])?;
    for x in warnings {
        let file = files_of(captures, &x.label).unwrap_or_default();
        let num = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
        w.write_record([
            crate::report::csv::defuse(&file),
            crate::report::csv::defuse(&x.label),
            num(x.record),
            num(x.byte_offset),
            x.message.clone(),
        ])?;
    }
    w.flush()
}

/// The files of `label` (several for rotated files of one point), comma-separated.
fn files_of(captures: &[crate::read::CaptureSpec], label: &str) -> Option<String> {
    let files: Vec<String> = captures.iter().filter(|c| c.label == label).map(|c| c.display_name()).collect();
    (!files.is_empty()).then(|| files.join(", "))
}

/// Each warning as `FILE (LABEL): record R at byte B: message`.
fn warning_lines(
    warnings: &[crate::verdict::WarningOut],
    captures: &[crate::read::CaptureSpec],
) -> Vec<String> {
    let mut lines = Vec::with_capacity(warnings.len());
    for w in warnings {
        let mut place = String::new();
        if let Some(r) = w.record {
            place.push_str(&format!("record {r} "));
        }
        if let Some(o) = w.byte_offset {
            place.push_str(&format!("at byte {o} "));
        }
        let place = if place.is_empty() { String::new() } else { format!("{}: ", place.trim_end()) };
        let file = files_of(captures, &w.label);
        let who = match file {
            // the label only when the file name does not already say it
            Some(f) if !file_name_of(&f).starts_with(&w.label) => format!("{f} ({})", w.label),
            Some(f) => f,
            _ => w.label.clone(),
        };
        lines.push(format!("{who}: {place}{}", w.message));
    }
    lines
}

/// The last component of a path as given (for messages).
fn file_name_of(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The main form: correlate the captures and write the report.
pub fn correlate(run: &CorrelateRun) -> Result<u8, Error> {
    let (target, pcapng_target, warnings_target, expectations_target) = output_targets(run)?;
    // `--clocks-from` is read before any capture: a wrong report is a usage error at once.
    let pinned;
    let config = match &run.clocks_from {
        Some(path) => {
            let clocks = crate::compare::load::pinned_clocks(path)?;
            let labels: Vec<&str> = clocks.clocks.iter().map(|(l, _, _)| l.as_str()).collect();
            // A capture split into its sides (`node(in)`, `node(out)`) is named by them.
            let named =
                |label: &str| labels.iter().any(|l| *l == label || l.starts_with(&format!("{label}(")));
            if let Some(c) = run.config.captures.iter().find(|c| !named(&c.label)) {
                return Err(Error::Usage(UsageError(format!(
                    "--clocks-from {}: the report has no capture labelled {} (it has {})",
                    path.display(),
                    c.label,
                    labels.join(", ")
                ))));
            }
            pinned = crate::drive::Config { clocks_from: Some(clocks), ..run.config.clone() };
            &pinned
        }
        None => &run.config,
    };
    // Names are read before any capture: a wrong file is a usage error at once.
    let names = if run.names.is_empty() {
        None
    } else {
        Some(crate::names::Names::load(&run.names).map_err(Error::Names)?)
    };
    // `--rules`, `--conntrack`, `--masq-agent` are read before any capture too
    let why = if run.why.is_empty() { None } else { Some(crate::why::load(&run.why).map_err(UsageError)?) };
    // `ip -o link` output among them names the interfaces of an SLL2 capture
    let linked;
    let config = match names.as_ref().filter(|n| !n.links().is_empty()) {
        Some(n) => {
            linked = crate::drive::Config { link_names: n.links().clone(), ..config.clone() };
            &linked
        }
        None => config,
    };
    // A live run writes its requests as they come: no progress bars between them.
    let live = config.stream.is_some_and(|s| s.follow.is_some());
    let bars = Bars::new(config.captures.len(), !config.quiet && !live);
    let one_point = crate::read::point_files(&config.captures).len() < 2;
    if one_point && config.stream.is_some() {
        return Err(UsageError(
            "--stream needs 2 to 8 capture points: a single capture that holds several observation points (tcpdump -i \
             any on a forwarding host) is read without --stream"
                .into(),
        )
        .into());
    }
    if let Some(stream) = config.stream {
        let options = report_options(run, names);
        return correlate_stream(run, config, stream, &target, warnings_target.as_ref(), &options, &bars);
    }
    let want_ladder = (run.output.format == Format::Html && !run.summary_only) || run.pcapng.is_some();
    let (findings, ladder) =
        with_threads(config.threads, || crate::drive::pipeline::analyze_full(config, &bars, want_ladder))??;
    if findings.captures.len() < 2 {
        let label = findings.captures.first().map_or("the capture", |c| c.label.as_str());
        return Err(UsageError(format!(
            "{label} holds one observation point (one interface, one direction): give 2 to 8 capture points in path \
             order, client side first; a single capture is enough only when it holds several interfaces or both \
             directions of forwarded traffic (tcpdump -i any on a forwarding host){}",
            match config.captures.len() {
                1 => String::new(),
                n => format!(" (got 1 from {n} files: the files of one LABEL= are one point)"),
            }
        ))
        .into());
    }
    // Verdicts are never printed from an order the run itself doubts: read
    // again the other way round, or stop (docs/guide/reading-the-report.md).
    let turned: Config;
    let (config, mut findings, ladder) = match crate::checks::path_order(&findings) {
        crate::checks::PathOrder::Right => (config, findings, ladder),
        crate::checks::PathOrder::Doubtful(why) => return Err(UsageError(why).into()),
        crate::checks::PathOrder::Reversed(why) => {
            if !config.correlate.offsets_ns.is_empty()
                || config.clocks_from.is_some()
                || config.shard.is_some()
            {
                return Err(UsageError(format!(
                    "the captures look given in reverse path order at every boundary between two of them ({why}); \
                     with --offset, --clocks-from or a shard their clocks are read against the first capture: \
                     give the captures in path order, client side first"
                ))
                .into());
            }
            turned = Config { captures: config.captures.iter().rev().cloned().collect(), ..config.clone() };
            let (mut again, ladder) = with_threads(turned.threads, || {
                crate::drive::pipeline::analyze_full(&turned, &bars, want_ladder)
            })??;
            if let crate::checks::PathOrder::Doubtful(w) | crate::checks::PathOrder::Reversed(w) =
                crate::checks::path_order(&again)
            {
                return Err(UsageError(format!(
                    "the captures look given in reverse path order ({why}), and read the other way round they do \
                     not go the right way either ({w}): give them in path order, client side first"
                ))
                .into());
            }
            let order: Vec<&str> = again.captures.iter().map(|c| c.label.as_str()).collect();
            let w = crate::checks::reordered_warning(&order, &why);
            again.warnings.push(w);
            (&turned, again, ladder)
        }
    };
    findings.warnings.extend(crate::checks::all(
        &config.captures,
        config.correlate.tolerance_ns,
        config.clocks_from.as_ref(),
        config.shard.is_some(),
        &findings,
    ));
    let explained = match &why {
        Some(loaded) => Some(std::sync::Arc::new(explain_why(loaded, &mut findings)?)),
        None => None,
    };
    print_warnings(&findings.warnings, &config.captures);
    if let (Some(target), Some(path)) = (&warnings_target, &run.warnings_to) {
        crate::output::write_to(target, |out| {
            write_warnings(&findings.warnings, &config.captures, path, out)
        })?;
    }
    report::filter_requests(&mut findings, &config.filter);
    if let Some(shard) = &config.shard {
        crate::drive::shard::keep_requests(&mut findings, shard);
    }
    if !config.list_unmatched {
        for u in &mut findings.unmatched {
            u.flows.clear();
        }
    }
    if let (Some(columns), Format::Table) = (&run.columns, run.output.format) {
        let labels: Vec<&str> = findings.captures.iter().map(|c| c.label.as_str()).collect();
        if let Some(e) = report::table::unknown_point(columns, &labels) {
            return Err(Error::Usage(UsageError(e)));
        }
    }
    if let (Some(target), Some(explained)) = (&expectations_target, &explained) {
        let file = crate::compare::predicted::build(&findings, &explained.predicted);
        crate::output::write_to(target, |out| out.write_all(&crate::compare::predicted::to_bytes(&file)))?;
    }
    let mut options = report_options(run, names);
    options.view.why = explained;
    crate::output::write_to(&target, |out| {
        report::write_with_ladder(&findings, ladder.as_ref(), &options, out)
    })?;
    if let (Some(pcapng), Some(path), Some(ladder)) = (&pcapng_target, &run.pcapng, &ladder) {
        let merge = crate::merge::MergeOptions { only_requests: run.pcapng_only_requests };
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
    let mut hits = report::FailOnHits::default();
    hits.add(&findings, &run.fail_on);
    let code = fail_on_exit(&hits, &run.fail_on);
    // The process ends right after this: freeing every request one by one
    // measured 5-9% of a run (scripts/BENCH.md), for memory the OS reclaims anyway.
    std::mem::forget(findings);
    Ok(code)
}

/// The targets of `-o`, `--pcapng` and `--warnings-to`, checked before
/// anything is read: against every input (the captures, `--clocks-from`,
/// `--names`) and against each other.
type Targets = (
    crate::output::Target,
    Option<crate::output::Target>,
    Option<crate::output::Target>,
    Option<crate::output::Target>,
);

fn output_targets(run: &CorrelateRun) -> Result<Targets, UsageError> {
    use crate::output::{Input, Out};
    let mut inputs = capture_inputs(&run.config.captures);
    let other = |option: &str, path: &std::path::PathBuf| Input { label: option.into(), path: path.clone() };
    inputs.extend(run.clocks_from.iter().map(|p| other("--clocks-from", p)));
    inputs.extend(run.names.iter().map(|p| other("--names", p)));
    let mut outs = vec![Out::report(run.output.path.as_deref())];
    if let Some(p) = &run.pcapng {
        outs.push(Out { option: "--pcapng", holds: "the merged pcapng", path: Some(p) });
    }
    if let Some(p) = &run.warnings_to {
        outs.push(Out { option: "--warnings-to", holds: "the warnings", path: Some(p) });
    }
    if let Some(p) = &run.expectations {
        outs.push(Out { option: "--expectations", holds: "the expectations", path: Some(p) });
    }
    let mut targets = crate::output::targets(&outs, &inputs)?.into_iter();
    let report = targets.next().expect("the report has a target");
    let pcapng = run.pcapng.as_ref().and_then(|_| targets.next());
    let warnings = run.warnings_to.as_ref().and_then(|_| targets.next());
    let expectations = run.expectations.as_ref().and_then(|_| targets.next());
    Ok((report, pcapng, warnings, expectations))
}

/// The post-pass of `--rules`, `--conntrack`, `--masq-agent`: each WHERE
/// checked against the run's capture labels (an unknown one is a usage error
/// naming the valid ones), the lines not read and the changes without a
/// confirming conntrack entry added to the run's warnings.
fn explain_why(
    loaded: &crate::why::Loaded,
    findings: &mut crate::verdict::Findings,
) -> Result<crate::why::attach::Explained, UsageError> {
    let labels: Vec<&str> = findings.captures.iter().map(|c| c.label.as_str()).collect();
    // the hosts each point was captured on, as its requests name them
    let mut captured_on: Vec<Vec<String>> = vec![Vec::new(); labels.len()];
    for r in &findings.requests {
        for (i, h) in r.captures.iter().enumerate() {
            if let (Some(host), Some(list)) = (h.host(), captured_on.get_mut(i)) {
                if !list.iter().any(|x| x == host) {
                    list.push(host.to_string());
                }
            }
        }
    }
    let hosts = crate::why::hosts(loaded, &labels, &captured_on).map_err(UsageError)?;
    let explained = crate::why::attach::explain(findings, &hosts);
    let warning = |(label, message): &(String, String)| crate::verdict::WarningOut {
        label: label.clone(),
        record: None,
        byte_offset: None,
        message: message.clone(),
    };
    findings.warnings.extend(loaded.notes.iter().map(warning));
    findings.warnings.extend(explained.warnings.iter().map(warning));
    Ok(explained)
}

/// How the main form writes its report.
fn report_options(run: &CorrelateRun, names: Option<crate::names::Names>) -> ReportOptions {
    let to_terminal = run.output.path.is_none() && io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR");
    ReportOptions {
        format: run.output.format,
        summary_only: run.summary_only,
        color: color_enabled(run.color, to_terminal, no_color.as_deref()),
        view: report::View {
            // only names of addresses speak in the report (interface names are point labels)
            names: names.filter(crate::names::Names::names_addresses),
            time: run.time.clone(),
            columns: run.columns.clone(),
            width: table_width(run.output.path.is_some(), to_terminal),
            columns_given: run.columns_given,
            clocks_from: run.clocks_from.as_ref().map(|p| p.display().to_string()),
            why: None,
        },
    }
}

/// The main form with `--stream`: each window's requests written as the
/// stream gives them (or put aside, for the formats that open with the run's
/// totals), its new warnings printed then (each once), and the run's own
/// warnings and totals at the end. A capture that cannot be read stops the
/// run (a report file is then not written; standard output holds the windows
/// before).
fn correlate_stream(
    run: &CorrelateRun,
    config: &Config,
    stream: crate::drive::stream::StreamConfig,
    target: &crate::output::Target,
    warnings_target: Option<&crate::output::Target>,
    options: &ReportOptions,
    bars: &Bars,
) -> Result<u8, Error> {
    let mut seen = std::collections::HashSet::new();
    let mut note = |new: Vec<crate::verdict::WarningOut>, all: &mut Vec<crate::verdict::WarningOut>| {
        let new: Vec<_> =
            new.into_iter().filter(|w| seen.insert((w.label.clone(), w.message.clone()))).collect();
        print_warnings(&new, &config.captures);
        all.extend(new);
    };
    let mut checks = Vec::new();
    let live = stream.follow.is_some();
    note(crate::checks::same_captures(&config.captures, live), &mut checks);
    let mut windows = Vec::new();
    let mut hits = report::FailOnHits::default();
    let mut stopped: Option<crate::read::ReadError> = None;
    let (mut checked_columns, mut bad_columns) = (false, None);
    // `--since`/`--until` in seconds count from the run's first request.
    let mut start_ns: Option<i64> = None;
    let spill_dir = crate::output::spill_dir(target);
    let mut report_warnings = Vec::new();
    crate::output::write_to(target, |out| {
        let mut report = if live {
            report::StreamReport::new_live(options, out)?
        } else {
            report::StreamReport::new(options, out, &spill_dir)?
        };
        if live {
            // Ctrl-C or SIGTERM ends every input at once; the run then writes
            // the windows still open and the summary. A second one exits.
            let handler = ctrlc::set_handler(|| {
                if crate::drive::stream::STOP.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    std::process::exit(130);
                }
            });
            if let Err(e) = handler {
                eprintln!(
                    "tuplecorr: warning: cannot catch Ctrl-C ({e}): it will end the run without the summary"
                );
            }
        }
        let mut emit = |mut findings: Findings| -> io::Result<()> {
            // --columns names points known from the first window on
            if let (Some(columns), Format::Table, false) = (&run.columns, run.output.format, checked_columns)
            {
                checked_columns = true;
                let labels: Vec<&str> = findings.captures.iter().map(|c| c.label.as_str()).collect();
                if let Some(e) = report::table::unknown_point(columns, &labels) {
                    bad_columns = Some(UsageError(e));
                    return Err(io::Error::other("--columns names no point of the run"));
                }
            }
            // The clock-mistake checks need the whole run's counts (a window's
            // margins hold flows whose partners lie outside it): not run here.
            note(std::mem::take(&mut findings.warnings), &mut windows);
            start_ns =
                start_ns.or_else(|| findings.requests.iter().filter_map(report::request_time_ns).min());
            let filter = config.filter.resolved(start_ns.unwrap_or(0));
            report::filter_requests(&mut findings, &filter);
            hits.add(&findings, &run.fail_on);
            if live && hits.matched() {
                // --follow --fail-on: the first request that matches ends the run
                // (every input ends at once; what was read is still written).
                crate::drive::stream::FAILED_ON.store(true, std::sync::atomic::Ordering::SeqCst);
                crate::drive::stream::STOP.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            report.window(&findings)
        };
        let finished =
            match with_threads(config.threads, || crate::drive::stream::run(config, stream, bars, &mut emit))
            {
                Ok(Ok(finished)) => finished,
                Ok(Err(crate::drive::stream::StreamError::Emit(e))) => return Err(e),
                Ok(Err(crate::drive::stream::StreamError::Read(e))) => {
                    stopped = Some(e);
                    return Err(io::Error::other("a capture could not be read"));
                }
                Err(e) => return Err(io::Error::other(e.to_string())),
            };
        let mut reading = Vec::new();
        note(finished.warnings.iter().map(crate::verdict::WarningOut::from).collect(), &mut reading);
        let mut totals = finished.findings;
        // The premises of whole captures (empty, no time in common, order), on the run's totals.
        let part = if live { crate::checks::Part::Live } else { crate::checks::Part::Window };
        note(crate::checks::premises(&totals, part), &mut checks);
        // As the run without --stream orders them: reading, correlation, checks.
        report_warnings = [reading, std::mem::take(&mut windows), std::mem::take(&mut checks)].concat();
        totals.warnings = report_warnings.clone();
        if !config.list_unmatched {
            for u in &mut totals.unmatched {
                u.flows.clear();
            }
        }
        report.finish(&totals)
    })
    .map_err(|e| match (stopped.take(), bad_columns.take()) {
        (Some(read), _) => Error::Read(read),
        (None, Some(usage)) => Error::Usage(usage),
        (None, None) => Error::Write(e),
    })?;
    if let (Some(target), Some(path)) = (warnings_target, &run.warnings_to) {
        crate::output::write_to(target, |out| write_warnings(&report_warnings, &config.captures, path, out))?;
    }
    Ok(fail_on_exit(&hits, &run.fail_on))
}

/// The exit status `--fail-on` gives; when it matched, which requests and why
/// are said on stderr (`tuplecorr: --fail-on ...: 2 requests matched: ...`).
fn fail_on_exit(hits: &report::FailOnHits, fail_on: &[crate::report::FailOn]) -> u8 {
    if !hits.matched() {
        return EXIT_OK;
    }
    eprintln!("tuplecorr: {}", hits.message(fail_on));
    EXIT_FAIL_ON
}

/// `--color`: `always`, `never`, or (auto) only on a terminal and when
/// `NO_COLOR` is unset or empty (no-color.org).
pub fn color_enabled(choice: ColorChoice, to_terminal: bool, no_color: Option<&OsStr>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => to_terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// `tuplecorr inspect`: every capture is read (each by its own rayon task) and
/// described. A capture that cannot be opened or is no capture at all gets
/// `tuplecorr: error: FILE: ...` on stderr and is left out of the report (as
/// capinfos does); the others are still reported (JSON: the array holds only the
/// captures that were read) and the exit status is 2. Warnings are printed on
/// stderr like the main form's, and also appear in the report.
pub fn inspect(args: &InspectRun) -> Result<u8, Error> {
    let specs = &args.captures;
    let bars = Bars::new(specs.len(), !args.quiet);
    let results = crate::inspect::inspect_all(specs, &crate::flows::FlowConfig::default(), &bars);
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
    print_warnings(&warnings, specs);
    crate::output::write_to(&crate::output::Target::Stdout, |out| match args.format {
        InspectFormat::Table => crate::inspect::write_table(&read, out),
        InspectFormat::Json => crate::inspect::write_json(&read, out),
    })?;
    Ok(if failed { EXIT_ERROR } else { EXIT_OK })
}

/// `tuplecorr compare`: load or analyse each side, compare, check the
/// expectations, write; exit status 1 when one does not hold or a service and
/// client got worse (unless `--allow-regressions`).
pub fn compare(run: &CompareRun) -> Result<u8, Error> {
    let mut inputs = compare_inputs(&[&run.before, &run.after]);
    inputs.extend(
        (run.expectations_file.iter())
            .map(|p| crate::output::Input { label: "--expectations".into(), path: p.clone() }),
    );
    let target = crate::output::target(run.path.as_deref(), &inputs).map_err(UsageError::from)?;
    // the expectations file is read before either side: a wrong one is a usage error at once
    let predicted = match &run.expectations_file {
        Some(path) => {
            let name = path.display().to_string();
            let text = crate::why::text::read(path).map_err(|e| UsageError(format!("--expectations {e}")))?;
            Some((crate::compare::predicted::parse(&name, &text).map_err(UsageError)?, name))
        }
        None => None,
    };
    let before = compare_side(&run.before, run.quiet)?;
    let after = compare_side(&run.after, run.quiet)?;
    let mut comparison = crate::compare::compare(&before, &after);
    let why = |side: &CompareSide| match side {
        // a JSON report's rules and intent findings (read again, only those fields)
        CompareSide::Report(path) => {
            std::fs::read_to_string(path).map(|t| crate::compare::why::from_report(&t)).unwrap_or_default()
        }
        CompareSide::Captures(_) => Default::default(),
    };
    crate::compare::why::carry(&mut comparison, (&before, &after), (&why(&run.before), &why(&run.after)));
    comparison.regressions_allowed = run.allow_regressions;
    crate::compare::expect::check(&mut comparison, &after, &run.expectations)
        .map_err(|e| Error::Usage(UsageError(e.0)))?;
    if let Some((file, name)) = &predicted {
        crate::compare::predicted::check(&mut comparison, (&before, &after), file, name, run.rollback);
    }
    crate::output::write_to(&target, |out| crate::compare::write(&comparison, run.format, out))?;
    for e in comparison.expectations.iter().filter(|e| !e.holds) {
        if let Some(p) = &e.predicted {
            use crate::compare::predicted::Status;
            match p.status {
                Status::NotExercised => {
                    eprintln!(
                        "tuplecorr: note: not exercised: {}: no request of it in the after run",
                        e.expectation
                    )
                }
                Status::Unknown => eprintln!(
                    "tuplecorr: note: not checkable: {}: {}",
                    e.expectation,
                    p.unknown.as_deref().unwrap_or_default()
                ),
                Status::Held | Status::Broken => {
                    let list: Vec<String> = (e.broken_by.iter())
                        .map(|b| {
                            let ids: Vec<String> = b.requests.iter().map(u64::to_string).collect();
                            format!("request {} ({})", ids.join(", "), b.found)
                        })
                        .collect();
                    eprintln!(
                        "tuplecorr: expectation not met: {}: broken by {}",
                        e.expectation,
                        list.join(", ")
                    );
                }
            }
            continue;
        }
        let requests: Vec<String> =
            e.broken_by.iter().flat_map(|b| b.requests.iter().map(u64::to_string)).collect();
        let which = if requests.is_empty() {
            "no request to check".to_string()
        } else {
            format!(
                "broken by {} {}",
                if requests.len() == 1 { "request" } else { "requests" },
                requests.join(", ")
            )
        };
        eprintln!("tuplecorr: expectation not met: {}: {which}", e.expectation);
    }
    let head = if comparison.regressions_allowed { "note: regression (allowed)" } else { "regression" };
    let listed = crate::compare::write::REGRESSIONS_LISTED;
    for r in comparison.regressions.iter().take(listed) {
        eprintln!("tuplecorr: {head}: {}", crate::compare::write::regression_text(r));
    }
    if comparison.regressions.len() > listed {
        eprintln!("tuplecorr: {head}: and {} more", comparison.regressions.len() - listed);
    }
    Ok(if crate::compare::passes(&comparison) { EXIT_OK } else { EXIT_FAIL_ON })
}

/// One side of `compare`: a report read back, or captures run through the pipeline.
pub fn compare_side(side: &CompareSide, quiet: bool) -> Result<Findings, Error> {
    match side {
        CompareSide::Report(path) => Ok(crate::compare::load_report(path)?),
        CompareSide::Captures(specs) => {
            let config = Config { captures: specs.clone(), quiet, ..Config::default() };
            let bars = Bars::new(config.captures.len(), !quiet);
            let findings = crate::drive::pipeline::analyze(&config, &bars)?;
            print_warnings(&findings.warnings, &config.captures);
            Ok(findings)
        }
    }
}

/// Runs `f` on a rayon pool of `threads` threads (the global pool when None).
pub fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, Error> {
    match threads {
        None => Ok(f()),
        Some(n) => {
            let pool =
                rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build().map_err(Error::Threads)?;
            Ok(pool.install(f))
        }
    }
}

/// The captures read from files, as inputs not to write over.
fn capture_inputs(specs: &[crate::read::CaptureSpec]) -> Vec<crate::output::Input> {
    (specs.iter())
        .filter_map(|c| match &c.source {
            crate::read::Source::Path(p) => {
                Some(crate::output::Input { label: c.label.clone(), path: p.clone() })
            }
            crate::read::Source::Stdin => None,
        })
        .collect()
}

/// Both sides of `compare`: report files, or the captures of a list.
fn compare_inputs(sides: &[&CompareSide]) -> Vec<crate::output::Input> {
    let mut inputs = Vec::new();
    for side in sides {
        match side {
            CompareSide::Report(path) => {
                inputs.push(crate::output::Input { label: "report".into(), path: path.clone() })
            }
            CompareSide::Captures(specs) => inputs.extend(capture_inputs(specs)),
        }
    }
    inputs
}
