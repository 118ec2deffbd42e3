//! The output choices (`Format`, `FailOn`, ...) with their command-line names
//! written once, where a report is written (`Output`) and `UsageError`.
//! Takes nothing; gives plain data. No clap here. Each stage's settings live
//! with the stage.

use std::path::PathBuf;

pub mod when;

/// A choice of a fixed set, with the names the command line gives its values
/// (written once; `cli` builds its value parsers from them).
pub trait Choice: Copy + Send + Sync + 'static {
    const NAMES: &'static [(&'static str, Self)];

    /// The value a name stands for.
    fn from_name(name: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

/// What a build without the `parquet` cargo feature (the slim static binary)
/// says when Parquet is asked for.
pub const PARQUET_MISSING: &str = "--format parquet: this tuplecorr was built without Parquet (the slim \
static build); use the full build (the .deb package), or build one with `cargo install --path . --features parquet`";

/// Output format of the main command and `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
    Ndjson,
    /// One self-contained page: summary, filterable table, a ladder per request.
    Html,
    /// One Parquet file, a row per request (to a file only: `-o FILE`).
    Parquet,
}

impl Choice for Format {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("table", Format::Table),
        ("csv", Format::Csv),
        ("json", Format::Json),
        ("ndjson", Format::Ndjson),
        ("html", Format::Html),
        ("parquet", Format::Parquet),
    ];
}

impl Format {
    /// `.csv`, `.json`, `.ndjson`/`.jsonl`, `.html`/`.htm`, `.parquet`, `.txt` → their format.
    pub fn from_path(path: Option<&std::path::Path>) -> Option<Format> {
        let ext = path?.extension()?.to_string_lossy().to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "ndjson" | "jsonl" => Some(Format::Ndjson),
            "html" | "htm" => Some(Format::Html),
            "parquet" => Some(Format::Parquet),
            "txt" => Some(Format::Table),
            _ => None,
        }
    }
}

/// Output format of `tuplecorr compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    /// The change-record block as plain text (the default).
    Table,
    /// The change-record block as Markdown, to paste into a change record.
    Markdown,
    Csv,
    Json,
    Ndjson,
}

impl Choice for CompareFormat {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("table", CompareFormat::Table),
        ("markdown", CompareFormat::Markdown),
        ("csv", CompareFormat::Csv),
        ("json", CompareFormat::Json),
        ("ndjson", CompareFormat::Ndjson),
    ];
}

impl CompareFormat {
    /// `.md`/`.markdown`, `.csv`, `.json`, `.ndjson`/`.jsonl`, `.txt` → their format.
    pub fn from_path(path: Option<&std::path::Path>) -> Option<CompareFormat> {
        let ext = path?.extension()?.to_string_lossy().to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(CompareFormat::Markdown),
            "csv" => Some(CompareFormat::Csv),
            "json" => Some(CompareFormat::Json),
            "ndjson" | "jsonl" => Some(CompareFormat::Ndjson),
            "txt" => Some(CompareFormat::Table),
            _ => None,
        }
    }
}

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

/// What `--fail-on` can ask for (exit status 1 when any reported request has it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailOn {
    /// No capture saw a reply, or no reply reached capture 1.
    NoReply,
    ReplyLost,
    Bypassed,
    Reset,
    IcmpError,
    /// A boundary's match is ambiguous.
    Ambiguous,
}

impl Choice for FailOn {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("no-reply", FailOn::NoReply),
        ("reply-lost", FailOn::ReplyLost),
        ("bypassed", FailOn::Bypassed),
        ("reset", FailOn::Reset),
        ("icmp-error", FailOn::IcmpError),
        ("ambiguous", FailOn::Ambiguous),
    ];
}

/// Where and how a report is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// `-o FILE` (written atomically); None = standard output.
    pub path: Option<PathBuf>,
    pub format: Format,
}

/// A command line that parsed but makes no sense (exit status 2).
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}
