//! Plain run settings, built by `cli` from the command line (or by tests
//! directly): one `Run` per form of the command, each with its stage settings
//! and output settings, and the choices (`Format`, `FailOn`, ...) with their
//! command-line names written once. Takes nothing; gives plain data. No clap
//! here: every stage takes its own small settings struct.

use std::net::IpAddr;
use std::path::PathBuf;

pub mod columns;
pub mod when;

pub use columns::Column;

/// Where a capture's bytes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Path(PathBuf),
    Stdin,
}

/// One capture point as given on the command line: `LABEL=PATH`, `PATH` or `-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSpec {
    pub label: String,
    pub source: Source,
}

impl CaptureSpec {
    /// The file as the user named it (`-` for standard input), for messages.
    pub fn display_name(&self) -> String {
        match &self.source {
            Source::Path(p) => p.display().to_string(),
            Source::Stdin => "-".to_string(),
        }
    }

    /// True when the capture can be opened and read more than once: a regular
    /// file. Standard input, a named pipe (FIFO), a process substitution
    /// (`/dev/fd/N`) or a character device gives its bytes once: the reader
    /// that opens it must be the only one, from the first byte (a peek that
    /// opens and closes a FIFO loses what the writer put in the pipe and kills
    /// the writer with SIGPIPE; the next open then waits for a writer forever).
    /// Checked with `stat`, which never opens the file.
    pub fn readable_again(&self) -> bool {
        match &self.source {
            Source::Path(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Source::Stdin => false,
        }
    }
}

/// The observation points `captures` form: for each, the indices of its files
/// (one label; a label given more than once holds several files), points in
/// the order their labels first appear.
pub fn point_files(captures: &[CaptureSpec]) -> Vec<Vec<usize>> {
    let mut points: Vec<Vec<usize>> = Vec::new();
    for (i, c) in captures.iter().enumerate() {
        match points.iter_mut().find(|p| captures[p[0]].label == c.label) {
            Some(p) => p.push(i),
            None => points.push(vec![i]),
        }
    }
    points
}

/// Settings of the read stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadConfig {
    /// Uncompressed seekable files larger than this are split into chunks of
    /// about this size, decoded in parallel, when there are more threads than
    /// captures (bytes).
    pub chunk_bytes: u64,
    /// Split every splittable file, whatever its size and the thread count
    /// (tests: small lab captures really split).
    pub force_chunks: bool,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig { chunk_bytes: 16 << 20, force_chunks: false }
    }
}

/// Settings of the flow stage.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    /// A UDP exchange silent for longer than this is split (ns).
    pub udp_idle_ns: i64,
    /// Bytes of each direction's stream that are fingerprinted.
    pub fingerprint_len: usize,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig { udp_idle_ns: 10_000_000_000, fingerprint_len: 128 }
    }
}

/// Settings of the correlate stage.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CorrelateConfig {
    /// `--offset LABEL=SECONDS`, as capture index → offset in ns (positive: that
    /// capture's clock runs ahead of capture 1's).
    pub offsets_ns: Vec<(usize, i64)>,
    /// `--max-offset` in ns (default 60 s).
    pub max_offset_ns: Option<i64>,
    /// `--tolerance` in ns; None = 5 × offset spread + 1 ms, capped at 200 ms.
    pub tolerance_ns: Option<i64>,
    /// Per observation point, the capture (file) whose clock it reads: the
    /// sub-points of one split capture share one clock. Empty: every point is
    /// its own capture.
    pub clock_of: Vec<usize>,
    /// `--clocks-from`, per observation point: the pinned clock (offset,
    /// spread) and per neighbour boundary the pinned delay; None: estimated.
    pub pinned: Option<Pinned>,
}

/// Clocks pinned per observation point (see [`PinnedClocks`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pinned {
    /// Per point: (offset, spread) in ns, or None to estimate that point's.
    pub clocks: Vec<Option<(i64, i64)>>,
    /// Per neighbour boundary: Some(delay) when pinned (the delay may be unknown).
    pub delays: Vec<Option<Option<i64>>>,
}

/// Which requests are reported (matching always uses every packet).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Filter {
    pub hosts: Vec<IpAddr>,
    pub nets: Vec<(IpAddr, u8)>,
    pub ports: Vec<u16>,
    pub protos: Vec<String>,
    /// `--since`: requests whose time at capture 1 is at or after this.
    pub since: Option<TimeBound>,
    /// `--until`: requests whose time at capture 1 is before this.
    pub until: Option<TimeBound>,
}

/// A `--since` / `--until` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBound {
    /// An instant, ns since the Unix epoch, on capture 1's clock (RFC 3339 given).
    UnixNs(i64),
    /// ns after the first request's first packet at capture 1 (seconds given).
    FromStartNs(i64),
}

impl TimeBound {
    /// RFC 3339 (`2026-11-29T23:40:38.5Z`, `...+01:00`) or seconds from the start (`30`, `1.5`).
    pub fn parse(text: &str) -> Option<TimeBound> {
        let text = text.trim();
        if let Ok(secs) = text.parse::<f64>() {
            return (secs.is_finite() && secs >= 0.0)
                .then(|| TimeBound::FromStartNs((secs * 1e9).round() as i64));
        }
        parse_rfc3339_ns(text).map(TimeBound::UnixNs)
    }

    /// The instant in ns since the Unix epoch, given the start (ns) for relative bounds.
    pub fn resolve(self, start_ns: i64) -> i64 {
        match self {
            TimeBound::UnixNs(t) => t,
            TimeBound::FromStartNs(d) => start_ns.saturating_add(d),
        }
    }
}

impl Filter {
    /// The filter with `--since`/`--until` given in seconds made instants,
    /// counting from `start_ns` (the run's first request).
    pub fn resolved(&self, start_ns: i64) -> Filter {
        let at = |b: Option<TimeBound>| b.map(|b| TimeBound::UnixNs(b.resolve(start_ns)));
        Filter { since: at(self.since), until: at(self.until), ..self.clone() }
    }
}

/// RFC 3339 (`Z` or `±hh:mm`, optional fraction) → ns since the epoch.
pub fn parse_rfc3339_ns(text: &str) -> Option<i64> {
    crate::time::parse_rfc3339(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_with_nanoseconds_and_offsets() {
        assert_eq!(parse_rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339_ns("2026-11-29T23:40:38.123456789Z"), Some(1_795_995_638_123_456_789));
        assert_eq!(parse_rfc3339_ns("2026-11-30T00:40:38.5+01:00"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_rfc3339_ns("2000-02-29 12:00:00z"), Some(951_825_600_000_000_000));
        assert_eq!(parse_rfc3339_ns("2026-11-29T23:40:38"), None);
        assert_eq!(parse_rfc3339_ns("2026-13-29T23:40:38Z"), None);
        assert_eq!(parse_rfc3339_ns("yesterday"), None);
    }

    #[test]
    fn shard_instants_are_rfc3339_or_exact_epoch_seconds() {
        assert_eq!(parse_instant_ns("1795995638"), Some(1_795_995_638_000_000_000));
        assert_eq!(parse_instant_ns("1795995638.123456789"), Some(1_795_995_638_123_456_789));
        assert_eq!(parse_instant_ns("1795995638.5"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_instant_ns("2026-11-29T23:40:38.5Z"), Some(1_795_995_638_500_000_000));
        assert_eq!(parse_instant_ns("2026-11-30T00:40:38.5+01:00"), Some(1_795_995_638_500_000_000));
        for bad in ["", "1.", ".5", "-1", "1e9", "1.0000000001", "12:00", "noon", "99999999999999999999"] {
            assert_eq!(parse_instant_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn time_bounds_are_absolute_or_from_the_start() {
        assert_eq!(TimeBound::parse("1.5"), Some(TimeBound::FromStartNs(1_500_000_000)));
        assert_eq!(TimeBound::parse("-1"), None);
        assert_eq!(TimeBound::parse("1970-01-01T00:00:01Z"), Some(TimeBound::UnixNs(1_000_000_000)));
        assert_eq!(TimeBound::FromStartNs(5).resolve(10), 15);
        assert_eq!(TimeBound::UnixNs(5).resolve(10), 5);
    }
}

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

/// One side of `tuplecorr compare`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompareSide {
    /// A tuplecorr report file (JSON or CSV).
    Report(PathBuf),
    /// Captures in path order, to be analysed.
    Captures(Vec<CaptureSpec>),
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

/// Everything `drive::pipeline::analyze` needs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Config {
    pub captures: Vec<CaptureSpec>,
    pub read: ReadConfig,
    pub flows: FlowConfig,
    pub correlate: CorrelateConfig,
    pub filter: Filter,
    /// Rayon threads; None = rayon's default.
    pub threads: Option<usize>,
    pub quiet: bool,
    /// List flows that matched no request (`--all`).
    pub list_unmatched: bool,
    /// `--shard-start` / `--shard-end`: report only the requests that begin in
    /// this window, reading only the files it needs.
    pub shard: Option<Shard>,
    /// `--clocks-from REPORT`: the clocks and delays to use instead of estimates.
    pub clocks_from: Option<PinnedClocks>,
    /// `--stream`: correlate window by window of capture 1's time, reading
    /// each capture once (`stream`).
    pub stream: Option<StreamConfig>,
    /// Interface names by index (`--names` with `ip -o link` output): they
    /// name the interfaces requests took at the sides of a LINUX_SLL2 capture
    /// (`iface` `eth0`).
    pub link_names: std::collections::BTreeMap<u32, String>,
    /// Per capture point, the time (its own clock) its live input is known to
    /// have stopped recording at (set by a live run per window; empty else).
    pub stopped: Vec<Option<i64>>,
}

/// How a streaming run (`--stream`) cuts and waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// `--stream-window`: ns of capture 1's time per window.
    pub window_ns: i64,
    /// `--stream-hold`: how long past its reach a window waits for a
    /// connection still open before it is correlated with what was seen.
    pub hold_ns: i64,
    /// `--follow`: the captures are live (see `Follow`).
    pub follow: Option<Follow>,
}

/// How a live run (`--follow`) reads and settles: each input read as it
/// grows, a point's clock taken to run on with the wall clock while it is
/// silent, and windows settled with a short margin and linger so a request
/// is written seconds after it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Follow {
    /// `--follow-idle`: an input that gives no byte this long is stopped.
    pub idle_ns: i64,
    /// The shard margin of a live window (the batch run's is 140 s).
    pub margin_ns: i64,
    /// How long a window past its reach waits for its flows to fall silent
    /// (the batch stream's linger is 60 s).
    pub linger_ns: i64,
}

/// Default `--follow-idle`: a minute.
pub const DEFAULT_FOLLOW_IDLE_NS: i64 = 60_000_000_000;
/// A live window's margin: the time gate of one matching step (tolerance and
/// delay) with room; an earlier attempt further back is not looked for live.
pub const FOLLOW_MARGIN_NS: i64 = 5_000_000_000;
/// A live window's linger: a final ACK or FIN retransmission comes within it.
pub const FOLLOW_LINGER_NS: i64 = 2_000_000_000;
/// Default `--stream-window` with `--follow`: one second.
pub const FOLLOW_WINDOW_NS: i64 = 1_000_000_000;
/// Default `--stream-hold` with `--follow`: a connection still open 10 s past
/// its window's reach is written as seen so far.
pub const FOLLOW_HOLD_NS: i64 = 10_000_000_000;

/// Clocks taken from an earlier report (`--clocks-from`), by label, so that
/// every shard of a run corrects time exactly as that run did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PinnedClocks {
    /// The report, for messages.
    pub source: String,
    /// Per capture point of the report: label, clock offset and its spread (ns).
    pub clocks: Vec<(String, i64, i64)>,
    /// Per boundary of the report: `A->B` and its one-way delay (ns), when known.
    pub delays: Vec<(String, Option<i64>)>,
}

/// A time shard: the requests whose first packet at capture 1 (on that
/// capture's own clock) lies in `[start_ns, end_ns)`. Files of a point that lie
/// wholly more than `margin_ns` (plus the clock offset allowance) outside the
/// window are not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub start_ns: i64,
    pub end_ns: i64,
    pub margin_ns: i64,
}

/// Default `--shard-margin`: 140 s, the longest reach of one matching step
/// (an earlier attempt up to 130 s before its connection, see
/// `correlate::attempts`) plus 10 s for the time gate (tolerance, delay).
pub const DEFAULT_SHARD_MARGIN_NS: i64 = 140_000_000_000;

/// A shard boundary: RFC 3339 (`2026-11-30T10:00:00Z`, fraction and offset
/// allowed) or seconds since the Unix epoch with an optional fraction
/// (`1795995638.25`), read exactly (no floating point).
pub fn parse_instant_ns(text: &str) -> Option<i64> {
    let t = text.trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if digits(whole) && (frac.is_empty() && !t.ends_with('.') || digits(frac) && frac.len() <= 9) {
        let secs: i64 = whole.parse().ok()?;
        let mut ns: i64 = 0;
        for b in frac.bytes().chain(std::iter::repeat(b'0')).take(9) {
            ns = ns * 10 + i64::from(b - b'0');
        }
        return secs.checked_mul(1_000_000_000)?.checked_add(ns);
    }
    parse_rfc3339_ns(t)
}

/// The capture a point's name belongs to: `node` for `node(out if3)` (a
/// sub-point of a `tcpdump -i any` capture), the name itself otherwise.
pub fn capture_of_point(name: &str) -> &str {
    match name.find('(') {
        Some(i) if i > 0 && name.ends_with(')') => &name[..i],
        _ => name,
    }
}

/// Whether a name given on the command line can stand for points of a run of
/// these captures (`capture_labels`): a capture label, or one with a sub-point
/// in parentheses (`node(out if3)`; which sub-points there are is known only
/// once the capture is read).
pub fn names_a_capture(name: &str, capture_labels: &[&str]) -> bool {
    capture_labels.contains(&name) || capture_labels.contains(&capture_of_point(name))
}

/// The points of a run (`point_labels`, in path order) a name stands for: the
/// point so labelled, else every sub-point of the capture so labelled (`node`
/// for `node(in if2)` and `node(out if3)`); empty when none.
pub fn points_named(name: &str, point_labels: &[&str]) -> Vec<usize> {
    if let Some(i) = point_labels.iter().position(|l| *l == name) {
        return vec![i];
    }
    (0..point_labels.len()).filter(|&i| capture_of_point(point_labels[i]) == name).collect()
}

#[cfg(test)]
mod point_name_tests {
    use super::*;

    #[test]
    fn a_name_stands_for_its_point_or_every_sub_point_of_its_capture() {
        let points = ["decap", "node(in if2)", "node(out if3)", "backend"];
        assert_eq!(points_named("node(out if3)", &points), [2]);
        assert_eq!(points_named("node", &points), [1, 2]);
        assert_eq!(points_named("backend", &points), [3]);
        assert!(points_named("node(out if9)", &points).is_empty());
        assert!(points_named("nod", &points).is_empty());
        let captures = ["decap", "node", "backend"];
        assert!(names_a_capture("node(out if3)", &captures) && names_a_capture("node", &captures));
        assert!(!names_a_capture("vpn(out if3)", &captures) && !names_a_capture("(x)", &captures));
    }
}

/// Which option gave a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// `--rules`: iptables-save, ip6tables-save or nft list ruleset.
    Rules,
    /// `--conntrack`: conntrack -L or -E.
    Conntrack,
    /// `--masq-agent`: the ip-masq-agent ConfigMap or its config.
    MasqAgent,
    /// `--routes`: ip rule / ip route show table all.
    Routes,
    /// `--sysctl`: sysctl -a (rp_filter, src_valid_mark, ip_forward).
    Sysctl,
    /// `--neigh`: ip neigh.
    Neigh,
    /// `--masq-agent-after`: the ip-masq-agent ConfigMap proposed (change preview).
    MasqAgentAfter,
    /// `--rules-after`: the host's nat ruleset as edited (change preview).
    RulesAfter,
}

impl InputKind {
    pub fn option(self) -> &'static str {
        match self {
            InputKind::Rules => "--rules",
            InputKind::Conntrack => "--conntrack",
            InputKind::MasqAgent => "--masq-agent",
            InputKind::Routes => "--routes",
            InputKind::Sysctl => "--sysctl",
            InputKind::Neigh => "--neigh",
            InputKind::MasqAgentAfter => "--masq-agent-after",
            InputKind::RulesAfter => "--rules-after",
        }
    }
}

/// One `--rules/--conntrack/--masq-agent/--routes/--sysctl/--neigh WHERE=FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    pub kind: InputKind,
    pub at: String,
    pub path: std::path::PathBuf,
}

impl Given {
    /// `WHERE=FILE`; the error says what is missing. WHERE may hold `=`-free
    /// labels only (`egress->backend`, `node`), so the first `=` splits.
    pub fn parse(kind: InputKind, text: &str) -> Result<Given, String> {
        match text.split_once('=') {
            Some((at, path)) if !at.is_empty() && !path.is_empty() => {
                Ok(Given { kind, at: at.to_string(), path: std::path::PathBuf::from(path) })
            }
            _ => Err(format!(
                "{} {text:?}: expected WHERE=FILE (WHERE: a boundary such as egress->backend, or the label of a split capture)",
                kind.option()
            )),
        }
    }
}
