//! What the binary is asked to do, one variant per form of the command line:
//! built by `cli`, carried out by `app`. Each form's settings hold the stage
//! settings (`drive::Config`) and what that form writes (`compare`'s
//! expectations and sides among them), so they stand above every stage and
//! driver: nothing below names them. The choices only a form takes are here
//! too: `Output`, `ColorChoice`, `InspectFormat`, `CompareSide`.

use crate::compare::CompareFormat;
use crate::drive::Config;
use crate::read::CaptureSpec;
use crate::report::table::Column;
use crate::report::when;
use crate::report::{Choice, FailOn, Format};
use crate::why::Given;
use std::path::PathBuf;

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    /// Only on a terminal and when `NO_COLOR` is unset or empty (no-color.org).
    Auto,
    Always,
    Never,
}

impl Choice for ColorChoice {
    const NAMES: &'static [(&'static str, Self)] =
        &[("auto", ColorChoice::Auto), ("always", ColorChoice::Always), ("never", ColorChoice::Never)];
}

/// Output format of `tuplecorr inspect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InspectFormat {
    Table,
    Json,
}

impl Choice for InspectFormat {
    const NAMES: &'static [(&'static str, Self)] =
        &[("table", InspectFormat::Table), ("json", InspectFormat::Json)];
}

/// Where and how a report is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// `-o FILE` (written atomically); None = standard output.
    pub path: Option<PathBuf>,
    pub format: Format,
}

/// One side of `tuplecorr compare`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompareSide {
    /// A tuplecorr report file (JSON or CSV).
    Report(PathBuf),
    /// Captures in path order, to be analysed.
    Captures(Vec<CaptureSpec>),
}

/// What the binary is asked to do: one variant per form of the command line.
#[derive(Clone, Debug, PartialEq)]
pub enum Run {
    Correlate(Box<CorrelateRun>),
    Inspect(InspectRun),
    Compare(CompareRun),
    /// `tuplecorr generate WHAT`: the man page or a completion script to standard output.
    Generate(Generate),
}

/// What `tuplecorr generate` writes: the man page (roff) or a shell's completion script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generate {
    Man,
    Bash,
    Zsh,
    Fish,
    /// The script that collects a host's files for `--host`.
    Collect,
}

impl Choice for Generate {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("man", Generate::Man),
        ("bash", Generate::Bash),
        ("zsh", Generate::Zsh),
        ("fish", Generate::Fish),
        ("collect", Generate::Collect),
    ];
}

/// The main form: correlate captures and write a report.
#[derive(Clone, Debug, PartialEq)]
pub struct CorrelateRun {
    pub config: Config,
    pub output: Output,
    /// `--pcapng FILE`: also write every capture merged into one annotated pcapng.
    pub pcapng: Option<PathBuf>,
    /// `--pcapng-only-requests`: leave out packets of no reported request.
    pub pcapng_only_requests: bool,
    /// `--summary`: only the text summary (the table format only).
    pub summary_only: bool,
    pub color: ColorChoice,
    pub fail_on: Vec<FailOn>,
    /// `--names FILE`, in the order given.
    pub names: Vec<PathBuf>,
    /// `--rules`, `--conntrack`, `--masq-agent WHERE=FILE`, in the order given per option.
    pub why: Vec<Given>,
    /// `--tz` and `--time-format`; None = RFC 3339 UTC.
    pub time: Option<when::TimeStyle>,
    /// `--columns` of the table (with `--tz` alone, the default with the time).
    pub columns: Option<Vec<Column>>,
    /// `--columns` was given (a terminal's table then keeps them).
    pub columns_given: bool,
    /// `--warnings-to FILE`.
    pub warnings_to: Option<PathBuf>,
    /// `--clocks-from REPORT`: read before the captures into `config.clocks_from`.
    pub clocks_from: Option<PathBuf>,
    /// `--expectations FILE` (with a proposed state): the predictions per
    /// service and client, for `compare --expectations`.
    pub expectations: Option<PathBuf>,
}

/// `tuplecorr inspect`.
#[derive(Clone, Debug, PartialEq)]
pub struct InspectRun {
    pub captures: Vec<CaptureSpec>,
    pub format: InspectFormat,
    pub quiet: bool,
}

/// `tuplecorr compare`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRun {
    pub before: CompareSide,
    pub after: CompareSide,
    /// `-o FILE` (written atomically); None = standard output.
    pub path: Option<PathBuf>,
    pub format: CompareFormat,
    pub quiet: bool,
    /// `--expect-*`, in command-line order: exit status 1 when one does not hold.
    pub expectations: Vec<crate::compare::Expectation>,
    /// `--allow-regressions`: a service and client that got worse is reported
    /// as a note and does not make the exit status 1.
    pub allow_regressions: bool,
    /// `--expectations FILE`: the predictions of a preview to check on the after run.
    pub expectations_file: Option<PathBuf>,
    /// `--rollback`: check today's sources of that file instead.
    pub rollback: bool,
}
