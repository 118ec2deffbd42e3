//! Findings → bytes: table, CSV, JSON, NDJSON and the summary; plus the two
//! report-side decisions of a run: which requests are reported (`Filter`) and
//! whether `--fail-on` matched. Takes typed `verdict::Findings`; owns every
//! word and the wire contract (`wire`, made by `to_wire`). The only csv and serde_json user
//! besides `compare`; never reads captures. The output choices live here with
//! their command-line names written once (`Choice`: `Format`, `FailOn`; the
//! time style in `when`; the columns in `table`), the lowest module that
//! takes them.

pub mod client_address;
pub mod consistency;
pub mod csv;
pub mod csv_columns;
pub mod endpoint;
pub mod explain;
pub mod flowid;
pub mod html;
pub mod icmp;
pub mod json;
#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(not(feature = "parquet"))]
#[path = "parquet_off.rs"]
pub mod parquet;
pub mod summary;
pub mod table;
pub mod terminal;
pub mod to_wire;
pub mod when;
pub mod wire;
pub mod words;

#[cfg(test)]
pub(crate) mod fixtures;

use crate::verdict::{Findings, OutcomeKind, ReplyPath, Request, Strength};
use std::io::{self, Write};
use wire::WireName;

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

/// Which requests are reported (matching always uses every packet).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Filter {
    pub hosts: Vec<std::net::IpAddr>,
    pub nets: Vec<(std::net::IpAddr, u8)>,
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
        crate::time::parse_rfc3339(text).map(TimeBound::UnixNs)
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

/// How to write a report.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportOptions {
    pub format: Format,
    /// Only the summary (`--summary`): the text summary, whatever the format.
    pub summary_only: bool,
    /// Colour the table and summary with ANSI codes.
    pub color: bool,
    /// Names, zone, columns and width: how the report speaks to its reader.
    pub view: View,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions { format: Format::Table, summary_only: false, color: false, view: View::default() }
    }
}

/// The reader's terms (issue 17): none of it changes a verdict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// `--names`: names beside addresses; None = none looked up.
    pub names: Option<crate::names::Names>,
    /// `--tz` and `--time-format`; None = RFC 3339 UTC.
    pub time: Option<when::TimeStyle>,
    /// `--columns` of the table; None = [`table::DEFAULT_COLUMNS`].
    pub columns: Option<Vec<table::Column>>,
    /// The terminal's width: the table shortens cells to fit it.
    pub width: Option<usize>,
    /// `--columns` was given: on a terminal the table keeps those columns
    /// (only shortening cells) instead of choosing compact ones ([`terminal`]).
    pub columns_given: bool,
    /// `--clocks-from REPORT` as given: the summary says the clocks came from it.
    pub clocks_from: Option<String>,
    /// `--rules`, `--conntrack`, `--masq-agent`: what the post-pass found.
    pub why: Option<std::sync::Arc<crate::why::attach::Explained>>,
}

impl View {
    /// The words of these findings in the reader's terms.
    pub fn words<'a>(&'a self, findings: &'a Findings) -> words::Words<'a> {
        words::Words {
            clocks_from: self.clocks_from.as_deref(),
            why: self.why.as_deref(),
            ..words::Words::with(findings, self.names.as_ref(), self.time.as_ref())
        }
    }
}

/// Writes the findings in the chosen format.
pub fn write(findings: &Findings, options: &ReportOptions, out: &mut (dyn Write + Send)) -> io::Result<()> {
    write_with_ladder(findings, None, options, out)
}

/// [`write`], with the ladder data the HTML page draws.
pub fn write_with_ladder(
    findings: &Findings,
    ladder: Option<&crate::ladder::Ladder>,
    options: &ReportOptions,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let view = &options.view;
    let w = view.words(findings);
    if options.summary_only {
        return write_summary_fitted(&w, findings, options, out);
    }
    match options.format {
        Format::Json => json::write_json_with(&w, findings, out),
        Format::Ndjson => json::write_ndjson_with(&w, findings, out),
        Format::Csv => csv::write_csv_with(&w, findings, out),
        Format::Html => html::write_html_with(&w, findings, ladder, out),
        Format::Parquet => parquet::write_parquet_with(&w, findings, out),
        Format::Table => {
            match view.width {
                Some(width) if !view.columns_given => {
                    // without --columns, a --tz table shows the time
                    let with_time = view.columns.as_deref().is_some_and(|c| c.contains(&table::Column::Time));
                    terminal::write_fitted(&w, findings, with_time, width, options.color, out)?;
                }
                _ => {
                    let columns = view.columns.as_deref().unwrap_or(&table::DEFAULT_COLUMNS);
                    match view.width {
                        // every address whole, names shortened or left out, columns moved below their request
                        Some(width) => {
                            let columns = table::expand(columns, &w.labels);
                            terminal::write_columns(&w, findings, &columns, width, options.color, out)?;
                        }
                        None => table::write_table_with(&w, findings, columns, options.color, out)?,
                    }
                }
            }
            writeln!(out)?;
            write_summary_fitted(&w, findings, options, out)
        }
    }
}

/// The summary; on a terminal (`view.width`) its long lines wrapped to the width.
fn write_summary_fitted(
    w: &words::Words<'_>,
    findings: &Findings,
    options: &ReportOptions,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    match options.view.width {
        None => summary::write_summary_with(w, findings, options.color, out),
        Some(width) => {
            let mut text = Vec::new();
            summary::write_summary_with(w, findings, options.color, &mut text)?;
            out.write_all(terminal::wrap_lines(&String::from_utf8_lossy(&text), width).as_bytes())
        }
    }
}

/// `--stream`'s report, written window by window: CSV and NDJSON rows as
/// each window comes; the JSON report's requests put aside in a spill file
/// (the report opens with the run's totals, known only at the end) and
/// written after them; Parquet row groups appended, the run's totals written
/// as the file's metadata when it is closed.
pub struct StreamReport<'o> {
    options: ReportOptions,
    sink: StreamSink<'o>,
    /// `--follow` with CSV or NDJSON: each window flushed as written, and the
    /// run's summary (patterns with counts) written on standard error at the end.
    live: Option<summary::RequestTally>,
}

enum StreamSink<'o> {
    Rows {
        out: &'o mut (dyn Write + Send),
        header: bool,
    },
    /// The table (None with `--summary`) and the summary's tally of the requests.
    Table {
        out: &'o mut (dyn Write + Send),
        table: Option<table::TableSpill>,
        tally: summary::RequestTally,
    },
    Json {
        out: &'o mut (dyn Write + Send),
        spill: crate::output::Spill,
        any: bool,
    },
    Parquet(Box<parquet::ParquetStream<'o>>),
    /// `--follow --format table`: rows at fixed widths as they come.
    LiveTable {
        out: &'o mut (dyn Write + Send),
        header: bool,
        width: usize,
    },
}

/// The width of a live table written to a pipe or a file (on a terminal: the terminal's).
pub const LIVE_TABLE_WIDTH: usize = 120;

impl<'o> StreamReport<'o> {
    /// A report in `options.format` to `out`; a JSON report's spill file is
    /// made in `spill_dir` (and removed at once: only its handle holds it).
    pub fn new(
        options: &ReportOptions,
        out: &'o mut (dyn Write + Send),
        spill_dir: &std::path::Path,
    ) -> io::Result<Self> {
        let sink = match options.format {
            _ if options.summary_only => StreamSink::Table { out, table: None, tally: Default::default() },
            Format::Table => {
                let columns = options.view.columns.as_deref().unwrap_or(&table::DEFAULT_COLUMNS);
                let table = table::TableSpill::new(columns, crate::output::Spill::new(spill_dir)?);
                StreamSink::Table { out, table: Some(table), tally: Default::default() }
            }
            Format::Csv | Format::Ndjson => StreamSink::Rows { out, header: true },
            Format::Json => {
                StreamSink::Json { out, spill: crate::output::Spill::new(spill_dir)?, any: false }
            }
            Format::Parquet => StreamSink::Parquet(Box::new(parquet::ParquetStream::new(out))),
            // every format named: a new one must say how it is streamed
            other @ Format::Html => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{other:?} is not written window by window"),
                ))
            }
        };
        Ok(StreamReport { options: options.clone(), sink, live: None })
    }

    /// A live report (`--follow`): CSV or NDJSON rows, or a table at fixed
    /// widths (the terminal's, else [`LIVE_TABLE_WIDTH`]), each window flushed
    /// as written; the run's summary at the end (on standard error for CSV and
    /// NDJSON, after the table for the table).
    pub fn new_live(options: &ReportOptions, out: &'o mut (dyn Write + Send)) -> io::Result<Self> {
        let sink = match options.format {
            Format::Csv | Format::Ndjson => StreamSink::Rows { out, header: true },
            Format::Table => StreamSink::LiveTable {
                out,
                header: true,
                width: options.view.width.unwrap_or(LIVE_TABLE_WIDTH),
            },
            other @ (Format::Json | Format::Html | Format::Parquet) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{other:?} is not written request by request"),
                ))
            }
        };
        Ok(StreamReport { options: options.clone(), sink, live: Some(summary::RequestTally::default()) })
    }

    /// Writes (or puts aside) one window's requests.
    pub fn window(&mut self, findings: &Findings) -> io::Result<()> {
        let w = self.options.view.words(findings);
        if let Some(tally) = &mut self.live {
            tally.add(&w, findings);
        }
        match &mut self.sink {
            StreamSink::Rows { out, header } => {
                if self.options.format == Format::Csv {
                    if *header {
                        csv::write_csv_header(&w, *out)?;
                    }
                    csv::write_csv_rows(&w, findings, *out)?;
                } else {
                    json::write_ndjson_with(&w, findings, *out)?;
                }
                *header = false;
                if self.live.is_some() {
                    out.flush()?;
                }
                Ok(())
            }
            StreamSink::Json { spill, any, .. } => {
                let first = !*any;
                *any |= !findings.requests.is_empty();
                json::write_json_requests(&w, findings, first, spill)
            }
            StreamSink::Parquet(p) => p.window(&w, &findings.requests),
            StreamSink::LiveTable { out, header, width } => {
                if findings.requests.is_empty() {
                    return Ok(());
                }
                terminal::write_live(&w, findings, *width, *header, self.options.color, *out)?;
                *header = false;
                out.flush()
            }
            StreamSink::Table { table, tally, .. } => {
                tally.add(&w, findings);
                table.as_mut().map_or(Ok(()), |t| t.add(&w, findings))
            }
        }
    }

    /// Ends the report with the run's totals (`run`: its findings without requests).
    pub fn finish(self, run: &Findings) -> io::Result<()> {
        let w = self.options.view.words(run);
        match self.sink {
            StreamSink::Rows { out, header } => {
                if header && self.options.format == Format::Csv {
                    csv::write_csv_header(&w, out)?;
                }
                if let Some(tally) = self.live {
                    out.flush()?;
                    let mut err = io::stderr().lock();
                    summary::write_summary_tallied(&w, run, &tally, false, &mut err)?;
                }
                Ok(())
            }
            StreamSink::Json { out, spill, any } => {
                let mut requests = spill.read_back()?;
                json::write_json_around(run, w.why, any, out, |out| io::copy(&mut requests, out).map(|_| ()))
            }
            StreamSink::Parquet(p) => p.finish(&w, run),
            StreamSink::LiveTable { out, header, width } => {
                if header {
                    terminal::write_live(&w, run, width, true, self.options.color, out)?;
                }
                writeln!(out)?;
                let tally = self.live.unwrap_or_default();
                summary::write_summary_tallied(&w, run, &tally, self.options.color, out)
            }
            StreamSink::Table { out, table, tally } => {
                if let Some(table) = table {
                    table.finish(&w, run, self.options.color, out)?;
                    writeln!(out)?;
                }
                summary::write_summary_tallied(&w, run, &tally, self.options.color, out)
            }
        }
    }
}

/// Requests rendered per round: the buffers of two rounds (one being written,
/// the next being rendered) are all that is held besides the findings (bounds
/// memory on large runs: ~13 MB a round of JSON).
const ROUND: usize = 4096;
/// Requests per rayon task within a round.
const TASK: usize = 128;

/// Renders `items` across cores into byte buffers, `TASK` items per buffer,
/// and writes the buffers in order: the same bytes as rendering one by one.
///
/// The calling thread writes one round while the pool renders the next, so a
/// write that sleeps (the kernel throttling a writer under dirty-page
/// pressure) stalls no renderer. Written buffers are rendered into again:
/// after the first two rounds no buffer grows and no fresh page is touched.
/// (Writing each buffer from the worker that rendered it, while still in its
/// cache, measured 1-3 % faster on JSON, not worth a renderer sleeping in
/// `write`.)
pub(crate) fn write_parallel<T: Sync>(
    items: &[T],
    out: &mut (dyn Write + Send),
    render: impl Fn(&[T], &mut Vec<u8>) -> io::Result<()> + Sync,
) -> io::Result<()> {
    use rayon::prelude::*;
    let spare: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
    let reuse = || spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let render_round = |round: &[T]| -> Vec<io::Result<Vec<u8>>> {
        round
            .par_chunks(TASK)
            .map(|task| {
                let mut buf = reuse().unwrap_or_else(|| Vec::with_capacity(task.len() * 512));
                render(task, &mut buf).map(|()| buf)
            })
            .collect()
    };
    let write = |out: &mut (dyn Write + Send), buffers: Vec<io::Result<Vec<u8>>>| -> io::Result<()> {
        for buf in buffers {
            let mut buf = buf?;
            out.write_all(&buf)?;
            buf.clear();
            spare.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
        }
        Ok(())
    };
    let mut rounds = items.chunks(ROUND);
    let mut ready = rounds.next().map(render_round);
    while let Some(buffers) = ready.take() {
        let next = rounds.next();
        let mut rendered = None;
        let written = rayon::in_place_scope(|s| {
            if let Some(round) = next {
                s.spawn(|_| rendered = Some(render_round(round)));
            }
            write(out, buffers)
        });
        written?;
        ready = rendered;
    }
    Ok(())
}

/// True when the request has the `--fail-on` problem `kind`.
pub fn has_problem(kind: FailOn, r: &Request) -> bool {
    match kind {
        FailOn::NoReply => r.reply.path == ReplyPath::NoReply || r.outcome.kind == OutcomeKind::NoReply,
        FailOn::ReplyLost => r.reply.path == ReplyPath::ReplyLost,
        FailOn::Bypassed => r.reply.path == ReplyPath::Bypassed,
        FailOn::Reset => r.outcome.kind == OutcomeKind::Reset,
        FailOn::IcmpError => r.outcome.kind == OutcomeKind::IcmpError,
        FailOn::Ambiguous => r.matches.iter().any(|m| m.strength == Strength::Ambiguous),
    }
}

/// True when any reported request has any of the `--fail-on` problems.
pub fn fail_on_matches(findings: &Findings, fail_on: &[FailOn]) -> bool {
    findings.requests.iter().any(|r| fail_on.iter().any(|k| has_problem(*k, r)))
}

/// The requests `--fail-on` matched, for the line that says so on stderr: the
/// first [`FailOnHits::SHOWN`] with their problems, and how many in all
/// (added to window by window in a stream).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailOnHits {
    pub first: Vec<(u64, Vec<FailOn>)>,
    pub count: u64,
}

impl FailOnHits {
    /// How many requests the line names before it only counts.
    pub const SHOWN: usize = 10;

    /// Adds the reported requests of `findings` that have any of the problems.
    pub fn add(&mut self, findings: &Findings, fail_on: &[FailOn]) {
        for r in &findings.requests {
            let problems: Vec<FailOn> = fail_on.iter().copied().filter(|k| has_problem(*k, r)).collect();
            if problems.is_empty() {
                continue;
            }
            self.count += 1;
            if self.first.len() < Self::SHOWN {
                self.first.push((r.request, problems));
            }
        }
    }

    /// True when any request matched.
    pub fn matched(&self) -> bool {
        self.count > 0
    }

    /// `--fail-on no-reply,reset: 2 requests matched: request 3 (no-reply), request 5 (reset)`,
    /// then `, and N more` past the first [`FailOnHits::SHOWN`].
    pub fn message(&self, fail_on: &[FailOn]) -> String {
        let name = |k: &FailOn| FailOn::NAMES.iter().find(|(_, v)| v == k).map_or("?", |(n, _)| n);
        let option: Vec<&str> = fail_on.iter().map(name).collect();
        let listed: Vec<String> = (self.first.iter())
            .map(|(n, ks)| format!("request {n} ({})", ks.iter().map(name).collect::<Vec<_>>().join(", ")))
            .collect();
        let more = self.count.saturating_sub(self.first.len() as u64);
        let more = if more > 0 { format!(", and {more} more") } else { String::new() };
        let requests = if self.count == 1 { "request" } else { "requests" };
        format!(
            "--fail-on {}: {} {requests} matched: {}{more}",
            option.join(","),
            self.count,
            listed.join(", ")
        )
    }
}

/// Time of the request at capture 1 (ns since the Unix epoch on capture 1's
/// clock): when the client's first packet was seen there.
pub fn request_time_ns(r: &Request) -> Option<i64> {
    r.captures.first()?.start_ns
}

/// Keeps the requests the filters select; request numbers are kept as they
/// were, so a filtered report still names requests like the full one.
///
/// Each given filter must match (hosts, nets, ports, protocols, time window);
/// several values of one filter match when any does. Addresses and ports count
/// when seen at any capture, as client or server. `--since` (inclusive) and
/// `--until` (exclusive) apply to the time at capture 1; seconds count from the
/// earliest request. A request without a time at capture 1 fails a time filter.
pub fn filter_requests(findings: &mut Findings, filter: &Filter) {
    let start_ns = findings.requests.iter().filter_map(request_time_ns).min().unwrap_or(0);
    let since = filter.since.map(|b| b.resolve(start_ns));
    let until = filter.until.map(|b| b.resolve(start_ns));
    findings.requests.retain(|r| keep(r, filter, since, until));
}

fn keep(r: &Request, filter: &Filter, since: Option<i64>, until: Option<i64>) -> bool {
    if !filter.protos.is_empty() && !filter.protos.iter().any(|p| p.eq_ignore_ascii_case(r.proto.wire())) {
        return false;
    }
    let mut endpoints = r.captures.iter().filter(|h| h.seen).flat_map(|h| [h.client, h.server]).flatten();
    if !filter.hosts.is_empty() && !endpoints.clone().any(|e| filter.hosts.contains(&e.addr)) {
        return false;
    }
    if !filter.nets.is_empty()
        && !endpoints
            .clone()
            .any(|e| filter.nets.iter().any(|(n, len)| endpoint::net_contains(*n, *len, e.addr)))
    {
        return false;
    }
    if !filter.ports.is_empty() && !endpoints.any(|e| e.port.is_some_and(|p| filter.ports.contains(&p))) {
        return false;
    }
    if since.is_some() || until.is_some() {
        let Some(t) = request_time_ns(r) else { return false };
        if since.is_some_and(|s| t < s) || until.is_some_and(|u| t >= u) {
            return false;
        }
    }
    true
}

/// Names read from `names` (the `--names` file format) and the Europe/Berlin
/// zone (`--tz`): the options that add `*_name` and `time_local` fields (tests).
#[cfg(test)]
pub(crate) fn names_and_zone(names: &str) -> (crate::names::Names, when::TimeStyle) {
    let mut n = crate::names::Names::default();
    n.extend(crate::names::parse(names).unwrap().1);
    let zone = when::Zone::parse("Europe/Berlin").unwrap();
    (n, when::TimeStyle { zone, ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_are_absolute_or_from_the_start() {
        assert_eq!(TimeBound::parse("1.5"), Some(TimeBound::FromStartNs(1_500_000_000)));
        assert_eq!(TimeBound::parse("-1"), None);
        assert_eq!(TimeBound::parse("1970-01-01T00:00:01Z"), Some(TimeBound::UnixNs(1_000_000_000)));
        assert_eq!(TimeBound::FromStartNs(5).resolve(10), 15);
        assert_eq!(TimeBound::UnixNs(5).resolve(10), 5);
    }
    use crate::report::fixtures::{findings, T0_NS};

    #[test]
    fn parallel_rendering_writes_every_round_in_order() {
        // Three and a half rounds, on more workers than cores: buffers finish
        // out of order and are written in order.
        let items: Vec<u32> = (0..(3 * ROUND + ROUND / 2) as u32).collect();
        let want: String = items.iter().map(|i| format!("{i}\n")).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        for _ in 0..3 {
            let mut out = Vec::new();
            pool.install(|| {
                write_parallel(&items, &mut out, |task, buf| {
                    task.iter().try_for_each(|i| writeln!(buf, "{i}"))
                })
            })
            .unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        // A failing render stops the report with its error; what was written
        // is the report up to that buffer, nothing after it.
        let bad = 2 * ROUND as u32 + 5;
        let mut out = Vec::new();
        let failed = pool.install(|| {
            write_parallel(&items, &mut out, |task, buf| {
                if task.contains(&bad) {
                    return Err(io::Error::other("render failed"));
                }
                task.iter().try_for_each(|i| writeln!(buf, "{i}"))
            })
        });
        assert_eq!(failed.unwrap_err().to_string(), "render failed");
        let task_start = bad as usize / TASK * TASK;
        let before: String = items[..task_start].iter().map(|i| format!("{i}\n")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), before);
    }

    /// Takes `room` bytes, then fails every write.
    struct Full {
        room: usize,
        taken: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::other("disk full"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.taken.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_write_stops_the_report_with_its_error() {
        let items: Vec<u32> = (0..(2 * ROUND) as u32).collect();
        let mut out = Full { room: 10_000, taken: Vec::new() };
        let failed =
            write_parallel(&items, &mut out, |task, buf| task.iter().try_for_each(|i| writeln!(buf, "{i}")));
        assert_eq!(failed.unwrap_err().to_string(), "disk full");
        let want: String = items.iter().map(|i| format!("{i}\n")).collect();
        assert_eq!(out.taken, want.as_bytes()[..10_000], "the report's first bytes, in order");
    }

    fn kept(filter: Filter) -> Vec<u64> {
        let mut f = findings();
        filter_requests(&mut f, &filter);
        f.requests.iter().map(|r| r.request).collect()
    }

    #[test]
    fn host_matches_an_address_seen_at_any_capture() {
        // 198.19.3.17 appears only at backend (after the snat).
        assert_eq!(kept(Filter { hosts: vec!["198.19.3.17".parse().unwrap()], ..Filter::default() }), [1, 2]);
        assert_eq!(kept(Filter { hosts: vec!["2001:db8::1".parse().unwrap()], ..Filter::default() }), [5]);
    }

    #[test]
    fn filters_of_different_kinds_must_all_match() {
        let f = Filter {
            nets: vec![("198.18.0.0".parse().unwrap(), 15)],
            ports: vec![80, 53],
            protos: vec!["tcp".into()],
            ..Filter::default()
        };
        assert_eq!(kept(f), [1, 2]);
        assert_eq!(kept(Filter { ports: vec![40112], ..Filter::default() }), [1]);
        assert_eq!(kept(Filter { protos: vec!["icmp".into(), "udp".into()], ..Filter::default() }), [3, 5]);
    }

    #[test]
    fn time_window_uses_capture_one_and_counts_seconds_from_the_first_request() {
        let f = Filter {
            since: Some(TimeBound::FromStartNs(1_000_000_000)),
            until: Some(TimeBound::UnixNs(T0_NS + 3_000_000_000)),
            ..Filter::default()
        };
        assert_eq!(kept(f), [2, 3]);
    }

    #[test]
    fn fail_on_hits_name_the_first_requests_and_their_problems_then_count_the_rest() {
        let f = fixtures::findings();
        let mut hits = FailOnHits::default();
        hits.add(&f, &[FailOn::ReplyLost, FailOn::NoReply, FailOn::Reset]);
        assert!(hits.matched());
        let m = hits.message(&[FailOn::ReplyLost, FailOn::NoReply, FailOn::Reset]);
        assert!(m.starts_with("--fail-on reply-lost,no-reply,reset: "), "{m}");
        assert!(m.contains(" matched: request "), "{m}");
        let mut many = FailOnHits::default();
        for _ in 0..12 {
            many.add(&f, &[FailOn::ReplyLost]);
        }
        assert_eq!(many.first.len(), FailOnHits::SHOWN);
        let per_run = hits.first.iter().filter(|(_, k)| k.contains(&FailOn::ReplyLost)).count() as u64;
        assert_eq!(many.count, 12 * per_run);
        assert!(many.message(&[FailOn::ReplyLost]).ends_with(&format!(", and {} more", 12 * per_run - 10)));
        let mut none = FailOnHits::default();
        none.add(&f, &[FailOn::Bypassed]);
        assert!(!none.matched());
    }

    #[test]
    fn fail_on_matches_exactly_the_named_problems() {
        let f = findings();
        assert!(fail_on_matches(&f, &[FailOn::ReplyLost]));
        assert!(fail_on_matches(&f, &[FailOn::IcmpError]));
        assert!(fail_on_matches(&f, &[FailOn::Ambiguous]));
        assert!(fail_on_matches(&f, &[FailOn::NoReply])); // request 2's outcome
        assert!(!fail_on_matches(&f, &[FailOn::Reset, FailOn::Bypassed]));
        assert!(!fail_on_matches(&f, &[]));
    }

    #[test]
    fn summary_only_writes_just_the_summary() {
        let f = findings();
        let mut out = Vec::new();
        let options = ReportOptions { summary_only: true, ..ReportOptions::default() };
        write(&f, &options, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("5 requests across"));
        assert!(!text.contains("same-path  "));
    }
}
