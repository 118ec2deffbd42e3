//! Reads a tuplecorr report back into typed `Findings`: JSON and NDJSON through
//! the wire types of `report::wire`, CSV through its cells (`report::csv_columns`)
//! and Parquet through its rows (`compare::parquet`) into the same wire types,
//! then `wire`'s one wire → typed step for all. Takes a file; gives `Findings` or a
//! sentence saying why not. Never runs the pipeline.

use crate::report::csv::{HOP_SUFFIXES, LEADING_COLUMNS};
use crate::report::csv_columns;
use crate::report::wire::{self, WireName};
use crate::verdict::*;
use std::collections::HashMap;
use std::path::Path;

/// The columns after the per-capture ones that every tuplecorr CSV report has
/// had (the ones added later may be missing: read as empty).
const REQUIRED_COLUMNS: [&str; 3] = ["reply_path", "outcome", "match_strength"];

/// A side of `compare` (or `--clocks-from`) that could not be read: which
/// file, and why. `Display` is the whole sentence.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be opened or read.
    Unreadable { file: String, error: std::io::Error },
    /// The file is a pcap or pcapng capture.
    Capture { file: String },
    /// The file is not UTF-8 text.
    NotText { file: String },
    /// Neither a JSON object, NDJSON request lines nor our CSV header.
    Unrecognised { file: String },
    /// A report of that kind whose content is not ours (`line`: the line or
    /// CSV row it failed at, when known).
    Malformed { file: String, kind: ReportKind, line: Option<usize>, why: String },
    /// `--clocks-from`: not a JSON report holding the clocks.
    NoClocks { file: String, why: String },
    /// A Parquet report, and a build without Parquet.
    ParquetOff { file: String },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Unreadable { file, error } => write!(f, "{file}: cannot read it: {error}"),
            LoadError::Capture { file } => write!(
                f,
                "{file}: is a capture, not a report; give a tuplecorr report or a comma-separated list of captures in path order"
            ),
            LoadError::NotText { file } => write!(f, "{file}: not a tuplecorr report (not UTF-8 text)"),
            LoadError::Unrecognised { file } => write!(
                f,
                "{file}: not a tuplecorr report (neither a JSON object, NDJSON request lines nor a CSV starting with `{}`)",
                LEADING_COLUMNS.join(",")
            ),
            LoadError::Malformed { file, kind: ReportKind::Json, why, .. } => {
                write!(f, "{file}: not a tuplecorr JSON report: {why}")
            }
            LoadError::Malformed { file, kind: ReportKind::Ndjson, line: Some(n), why } => {
                write!(f, "{file}: line {n}: not a tuplecorr NDJSON request: {why}")
            }
            LoadError::Malformed { file, kind: ReportKind::Ndjson, line: None, why } => {
                write!(f, "{file}: not a tuplecorr NDJSON report: {why}")
            }
            LoadError::Malformed { file, kind: ReportKind::Csv, line: Some(n), why } => {
                write!(f, "{file}: row {n}: {why}")
            }
            LoadError::Malformed { file, kind: ReportKind::Csv, line: None, why } => write!(f, "{file}: {why}"),
            LoadError::Malformed { file, kind: ReportKind::Parquet, line: Some(n), why } => {
                write!(f, "{file}: request row {n}: not a tuplecorr request: {why}")
            }
            LoadError::Malformed { file, kind: ReportKind::Parquet, line: None, why } => {
                write!(f, "{file}: not a tuplecorr Parquet report: {why}")
            }
            LoadError::ParquetOff { file } => write!(
                f,
                "{file}: a Parquet file, and this build reads no Parquet (built without the `parquet` feature): \
                 give the run's JSON, NDJSON or CSV report, or use a build with it \
                 (`cargo install --path . --features parquet`, or the .deb)"
            ),
            LoadError::NoClocks { file, why } => write!(
                f,
                "--clocks-from {file}: not a tuplecorr JSON report (--format json, the only one that holds the clocks): {why}"
            ),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Unreadable { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// What a file holds, judged from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    Json,
    /// One request object a line (`--format ndjson`).
    Ndjson,
    Csv,
    /// `--format parquet`: the JSON's requests as rows.
    Parquet,
}

/// JSON when the text starts with `{` (NDJSON when its first line is a whole
/// request object), CSV when its header starts like ours.
pub fn detect(text: &str) -> Option<ReportKind> {
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with('{') {
        let first = text.lines().next().unwrap_or_default();
        match serde_json::from_str::<serde_json::Value>(first) {
            Ok(v) if v.get("request").is_some() => Some(ReportKind::Ndjson),
            _ => Some(ReportKind::Json),
        }
    } else if text.starts_with(&LEADING_COLUMNS.join(",")) {
        Some(ReportKind::Csv)
    } else {
        None
    }
}

/// Loads a tuplecorr report (JSON, NDJSON, CSV or Parquet, detected).
pub fn load_report(path: &Path) -> Result<Findings, LoadError> {
    let file = path.display().to_string();
    let bytes = match read_unless_parquet(path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return findings_from_parquet(path, file),
        Err(error) => return Err(LoadError::Unreadable { file, error }),
    };
    if crate::read::looks_like_capture(&bytes) {
        return Err(LoadError::Capture { file });
    }
    let Ok(text) = String::from_utf8(bytes) else { return Err(LoadError::NotText { file }) };
    match detect(&text) {
        Some(ReportKind::Json) => serde_json::from_str::<wire::Findings>(&text)
            .map_err(|e| e.to_string())
            .and_then(wire::Findings::into_typed)
            .map_err(|why| LoadError::Malformed { file, kind: ReportKind::Json, line: None, why }),
        Some(ReportKind::Ndjson) => findings_from_ndjson(&text, &file),
        Some(ReportKind::Csv) => findings_from_csv(&text, &file),
        // Parquet is told by its first bytes, never from text.
        Some(ReportKind::Parquet) | None => Err(LoadError::Unrecognised { file }),
    }
}

/// The bytes of the file at `path`, or None when it is a Parquet file (its
/// first bytes `PAR1`), which is read by its own reader, never whole.
fn read_unless_parquet(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    (&mut f).take(4).read_to_end(&mut bytes)?;
    if bytes == b"PAR1" {
        return Ok(None);
    }
    f.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Reads a Parquet report (`compare::parquet`) into typed findings.
fn findings_from_parquet(path: &Path, file: String) -> Result<Findings, LoadError> {
    #[cfg(feature = "parquet")]
    {
        let opened =
            std::fs::File::open(path).map_err(|error| LoadError::Unreadable { file: file.clone(), error })?;
        let bad = |(line, why): (Option<usize>, String)| LoadError::Malformed {
            file: file.clone(),
            kind: ReportKind::Parquet,
            line,
            why,
        };
        super::parquet::wire_findings(opened).map_err(bad)?.into_typed().map_err(|why| bad((None, why)))
    }
    #[cfg(not(feature = "parquet"))]
    {
        let _ = path;
        Err(LoadError::ParquetOff { file })
    }
}

/// The clocks of a tuplecorr JSON report (`--clocks-from`): each capture's
/// offset and spread, each boundary's delay. Only JSON carries them. Read as a
/// stream into just these fields (the requests are skipped, never held: a
/// day's report is large and every shard reads it).
pub fn pinned_clocks(path: &Path) -> Result<crate::correlate::PinnedClocks, LoadError> {
    #[derive(serde::Deserialize)]
    struct Clock {
        label: String,
        clock_offset_ms: f64,
        offset_spread_ms: f64,
    }
    #[derive(serde::Deserialize)]
    struct Delay {
        between: String,
        delay_ms: Option<f64>,
    }
    #[derive(serde::Deserialize)]
    struct Clocks {
        tuplecorr: String,
        captures: Vec<Clock>,
        boundaries: Vec<Delay>,
    }
    let name = path.display();
    let not_json = |why: String| LoadError::NoClocks { file: name.to_string(), why };
    let file =
        std::fs::File::open(path).map_err(|error| LoadError::Unreadable { file: name.to_string(), error })?;
    let r: Clocks =
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| not_json(e.to_string()))?;
    if r.tuplecorr.is_empty() || r.captures.is_empty() {
        return Err(not_json("it names no capture".into()));
    }
    let ns = |ms: f64| (ms * 1e6).round() as i64;
    Ok(crate::correlate::PinnedClocks {
        source: name.to_string(),
        clocks: r
            .captures
            .into_iter()
            .map(|c| (c.label, ns(c.clock_offset_ms), ns(c.offset_spread_ms)))
            .collect(),
        delays: r.boundaries.into_iter().map(|b| (b.between, b.delay_ms.map(ns))).collect(),
    })
}

/// Parses a tuplecorr NDJSON report (one request a line; labels from the
/// first request's captures, files unknown: the captures name the report).
pub fn findings_from_ndjson(text: &str, name: &str) -> Result<Findings, LoadError> {
    let mut requests = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: wire::Request = serde_json::from_str(line).map_err(|e| LoadError::Malformed {
            file: name.to_string(),
            kind: ReportKind::Ndjson,
            line: Some(n + 1),
            why: e.to_string(),
        })?;
        requests.push(r);
    }
    let wire = wire::Findings {
        tuplecorr: String::new(),
        captures: Vec::new(),
        boundaries: Vec::new(),
        requests,
        unmatched: Vec::new(),
        warnings: Vec::new(),
        intent: Vec::new(),
        blast_radius: Vec::new(),
    };
    let mut findings = wire.into_typed().map_err(|why| LoadError::Malformed {
        file: name.to_string(),
        kind: ReportKind::Ndjson,
        line: None,
        why,
    })?;
    for c in &mut findings.captures {
        c.file = name.to_string();
        c.format = "tuplecorr-ndjson".to_string();
    }
    Ok(findings)
}

/// Parses a tuplecorr CSV report back into findings (as far as its columns go).
pub fn findings_from_csv(text: &str, name: &str) -> Result<Findings, LoadError> {
    let bad =
        |why: String| LoadError::Malformed { file: name.to_string(), kind: ReportKind::Csv, line: None, why };
    let bad_row = |line: usize, why: String| LoadError::Malformed {
        file: name.to_string(),
        kind: ReportKind::Csv,
        line: Some(line),
        why,
    };
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(format!("cannot read the CSV header: {e}")))?
        .iter()
        .map(String::from)
        .collect();
    // Every column after the per-capture ones is found by its name: columns a
    // later version appends (or `--names`, `--rules` add) are passed over, and
    // a report of an earlier version reads its missing columns as empty.
    let first_trailing = header.iter().position(|c| c == csv_columns::TRAILING[0].name);
    let labels: Vec<String> = match first_trailing {
        Some(end)
            if header.get(..LEADING_COLUMNS.len()) == Some(&LEADING_COLUMNS.map(String::from)[..])
                && end.checked_sub(LEADING_COLUMNS.len()).is_some_and(|n| n.is_multiple_of(3))
                && REQUIRED_COLUMNS.iter().all(|c| header[end..].iter().any(|h| h == c)) =>
        {
            header[LEADING_COLUMNS.len()..end]
                .chunks(3)
                .map(|c| c[0].strip_suffix(HOP_SUFFIXES[0]).unwrap_or(&c[0]).to_string())
                .collect()
        }
        _ => return Err(bad("the CSV header is not a tuplecorr report's".to_string())),
    };
    let end = first_trailing.unwrap_or(header.len());
    let columns: HashMap<&str, usize> = csv_columns::trailing_names()
        .filter_map(|name| header[end..].iter().position(|h| h == name).map(|i| (name, end + i)))
        .collect();
    let mut requests = Vec::new();
    for (n, record) in reader.records().enumerate() {
        let line = n + 2;
        let rec = record.map_err(|e| bad_row(line, e.to_string()))?;
        let request = csv_request(&rec, &labels, &columns, n).map_err(|e| bad_row(line, e))?;
        requests.push(request);
    }
    let captures = labels.iter().map(|label| wire::placeholder_capture(label, name)).collect();
    Ok(Findings {
        tuplecorr: String::new(),
        captures,
        boundaries: Vec::new(),
        requests,
        unmatched: Vec::new(),
        warnings: Vec::new(),
    })
}

/// One CSV row → a request (`n`: its position among the rows; `columns`:
/// where each column of `csv_columns::TRAILING` this report has stands): its cells
/// into the wire view, then the wire view into the typed request.
fn csv_request(
    rec: &csv::StringRecord,
    labels: &[String],
    columns: &HashMap<&str, usize>,
    n: usize,
) -> Result<Request, String> {
    let cell = |i: usize| rec.get(i).unwrap_or_default();
    let some = |text: &str| (!text.is_empty()).then(|| text.to_string());
    let proto = Proto::from_wire(cell(1)).ok_or_else(|| format!("unknown proto {:?}", cell(1)))?;
    let mut captures = Vec::with_capacity(labels.len());
    for (i, label) in labels.iter().enumerate() {
        let base = LEADING_COLUMNS.len() + 3 * i;
        let (client, server, reply) = (cell(base), cell(base + 1), cell(base + 2));
        captures.push(wire::Hop {
            label: label.clone(),
            seen: !client.is_empty() || !server.is_empty(),
            client: some(client),
            server: some(server),
            reply_seen: reply == "yes",
            ..wire::Hop::default()
        });
    }
    // `first_seen` (in any `--time-format` a parser reads) is capture 1's time.
    if let Some(first) = captures.first_mut() {
        first.time = crate::time::parse_rfc3339(cell(2)).map(crate::time::rfc3339);
    }
    let mut q = wire::Request::read_back(cell(0).parse().unwrap_or(n as u64 + 1), proto, captures);
    csv_columns::read_trailing(&mut q, &|name| {
        debug_assert!(csv_columns::trailing_names().any(|c| c == name), "{name} is no column");
        columns.get(name).map_or("", |&i| cell(i))
    })?;
    q.into_typed(labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn csv_text() -> String {
        let mut out = Vec::new();
        crate::report::csv::write_csv(&findings(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn detects_json_and_csv_reports() {
        assert_eq!(detect("  {\"tuplecorr\": \"0.1.0\"}"), Some(ReportKind::Json));
        assert_eq!(detect(&csv_text()), Some(ReportKind::Csv));
        assert_eq!(detect("hello"), None);
    }

    #[test]
    fn csv_reads_back_the_fields_compare_needs() {
        let f = findings_from_csv(&csv_text(), "r.csv").unwrap();
        let want = findings();
        assert_eq!(
            f.captures.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
            ["decap", "egress", "backend"]
        );
        assert_eq!(f.requests.len(), want.requests.len());
        for (got, want) in f.requests.iter().zip(&want.requests) {
            assert_eq!(got.request, want.request);
            assert_eq!(got.proto, want.proto);
            assert_eq!(got.reply.path, want.reply.path);
            assert_eq!(got.reply.lost_between, want.reply.lost_between);
            assert_eq!(got.reply.lost_cause, want.reply.lost_cause);
            assert_eq!(got.reply.unexpected_source, want.reply.unexpected_source);
            assert_eq!(got.attempts, want.attempts);
            assert_eq!(got.outcome, want.outcome);
            assert_eq!(got.source, want.source);
            assert_eq!(got.destination, want.destination);
            for (g, w) in got.captures.iter().zip(&want.captures) {
                assert_eq!((g.seen, &g.client, &g.server), (w.seen, &w.client, &w.server));
                assert_eq!(g.reply_seen, w.reply_seen);
            }
            assert_eq!(
                got.matches.iter().map(|m| m.strength).collect::<Vec<_>>(),
                want.matches.iter().map(|m| m.strength).collect::<Vec<_>>()
            );
            assert_eq!(
                got.matches.iter().map(|m| &m.evidence).collect::<Vec<_>>(),
                want.matches.iter().map(|m| &m.evidence).collect::<Vec<_>>()
            );
        }
        assert_eq!(f.requests[0].captures[0].time_ns, want.requests[0].captures[0].time_ns);
        assert_eq!(f.requests[0].matches[1].between, Between { from: 1, to: 2 });
    }

    /// The report without its last `k` columns (as an earlier version wrote it).
    fn without_last_columns(text: &str, k: usize) -> String {
        text.lines()
            .map(|l| {
                let mut rec: Vec<String> = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(l.as_bytes())
                    .records()
                    .next()
                    .unwrap()
                    .unwrap()
                    .iter()
                    .map(String::from)
                    .collect();
                rec.truncate(rec.len() - k);
                let mut w = csv::Writer::from_writer(Vec::new());
                w.write_record(&rec).unwrap();
                String::from_utf8(w.into_inner().unwrap()).unwrap()
            })
            .collect()
    }

    /// The columns after `apart`: `app`, `app_at`, `app_host`, `app_detail`,
    /// `app_status`, and the four `exchange*` ones after them.
    const APP_COLUMNS: usize = 5 + EXCHANGE_COLUMNS;
    /// `exchanges`, `exchange_unanswered`, `exchange_worst_status`, `exchange_slowest`.
    const EXCHANGE_COLUMNS: usize = 4;

    #[test]
    fn csv_blind_captures_read_back_and_a_csv_before_them_reads_none() {
        let mut typed = findings();
        typed.requests[2].blind = vec![1, 2];
        let mut out = Vec::new();
        crate::report::csv::write_csv(&typed, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let f = findings_from_csv(&text, "blind.csv").unwrap();
        assert_eq!(f.requests[2].blind, [1, 2]);
        assert!(f.requests[0].blind.is_empty());
        let old = without_last_columns(&text, 2 + APP_COLUMNS);
        assert!(!old.contains("blind") && old.contains("identity_client_set"));
        let f = findings_from_csv(&old, "old.csv").unwrap();
        assert!(f.requests.iter().all(|r| r.blind.is_empty()));
        assert_eq!(f.requests[2].outcome, typed.requests[2].outcome);
    }

    #[test]
    fn csv_of_the_version_before_the_identity_columns_reads_back() {
        let old = without_last_columns(&csv_text(), 5 + APP_COLUMNS);
        assert!(!old.contains("identity") && old.contains("reply_unexpected_source"));
        let f = findings_from_csv(&old, "old.csv").unwrap();
        assert!(f.requests.iter().all(|r| r.identity.is_none()));
        assert_eq!(f.requests[1].reply.lost_cause, findings().requests[1].reply.lost_cause);
    }

    #[test]
    fn csv_of_an_earlier_version_without_reply_lost_cause_reads_back() {
        // the last columns: reply_lost_cause, reply_unexpected_source,
        // earlier_attempts, the identity ones, blind, apart (and the app ones)
        let old = without_last_columns(&csv_text(), 8 + APP_COLUMNS);
        assert!(!old.contains("reply_lost_cause") && old.lines().nth(2).unwrap().contains("reply-lost"));
        let f = findings_from_csv(&old, "old.csv").unwrap();
        assert_eq!(f.requests.len(), findings().requests.len());
        assert!(f.requests.iter().all(|r| r.reply.lost_cause.is_none()
            && r.reply.unexpected_source.is_none()
            && r.attempts.is_empty()));
        assert_eq!(f.requests[1].reply.path, ReplyPath::ReplyLost);
    }

    #[test]
    fn csv_app_cells_are_defused_and_read_back() {
        let mut want = findings();
        for (r, a) in want.requests.iter_mut().zip(crate::report::fixtures::apps()) {
            r.app = Some(a);
        }
        let mut out = Vec::new();
        crate::report::csv::write_csv(&want, &mut out).unwrap();
        let text = std::str::from_utf8(&out).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        let cells = |row: usize| -> Vec<&str> {
            ["app", "app_at", "app_host", "app_detail", "app_status"]
                .map(|c| &rows[row][header.iter().position(|h| h == c).unwrap()])
                .to_vec()
        };
        // No cell a spreadsheet would run: a leading = + - @ is written as \\xHH.
        assert_eq!(cells(0), ["http", "decap", "\\x2dcmd|x", "GET /a?b=1\\x20c", "503"]);
        assert_eq!(cells(1), ["tls", "egress", "\\x3dapp.example", "\\x2dh2,http/1.1,a\\x2cb", ""]);
        assert_eq!(cells(2), ["dns", "decap", "nx.app.example", "HTTPS", "NXDOMAIN"]);
        assert_eq!(cells(3), ["http", "decap", "", "", "400"]);
        let got = findings_from_csv(text, "r.csv").unwrap();
        for (g, w) in got.requests.iter().zip(&want.requests) {
            assert_eq!(g.app, w.app, "request {}", w.request);
        }
        // A CSV of the version before the exchange columns reads the same app.
        let old = without_last_columns(text, EXCHANGE_COLUMNS);
        assert!(!old.contains("exchange") && old.contains("app_status"));
        let got = findings_from_csv(&old, "old.csv").unwrap();
        assert!(got.requests.iter().zip(&want.requests).all(|(g, w)| g.app == w.app));
        // A CSV of the version before the app columns reads none.
        let old = without_last_columns(text, APP_COLUMNS);
        assert!(!old.contains("app_") && old.contains("apart"));
        assert!(findings_from_csv(&old, "old.csv").unwrap().requests.iter().all(|r| r.app.is_none()));
    }

    #[test]
    fn csv_identity_cells_read_back() {
        use crate::report::fixtures::{proxied_identity, spoofed_identity};
        let mut want = findings();
        let mut lost = proxied_identity();
        (lost.carried, lost.added) = (None, None);
        for (r, mut i) in want.requests.iter_mut().zip([proxied_identity(), spoofed_identity(), lost]) {
            // The backend side as CSV has it: the last capture that saw the request.
            (i.at, i.peer) =
                r.captures.iter().enumerate().rev().find_map(|(c, h)| h.client.map(|e| (c, e))).unwrap();
            r.identity = Some(Box::new(i));
        }
        let mut out = Vec::new();
        crate::report::csv::write_csv(&want, &mut out).unwrap();
        let got = findings_from_csv(std::str::from_utf8(&out).unwrap(), "r.csv").unwrap();
        for (g, w) in got.requests.iter().zip(&want.requests) {
            assert_eq!(g.identity, w.identity, "request {}", w.request);
        }
        // One row of captures a (not seen) and b, with the identity cells given.
        let identity = |cells: &str| {
            let text = format!(
                "request,proto,first_seen,client,service,a_client,a_server,a_reply,b_client,b_server,b_reply,\
                 source_changed_at,reply_path,outcome,match_strength,identity,identity_preserved\n\
                 1,tcp,,,,,,,198.18.0.1:9,198.19.0.1:80,yes,,same-path,completed,,{cells}\n"
            );
            findings_from_csv(&text, "r.csv").map(|mut f| f.requests.remove(0).identity)
        };
        assert!(identity("proxy-v1 198.18.0.2 added x->b,yes").is_err());
        assert!(identity("smtp 198.18.0.2,yes").is_err());
        let spoof = identity("x-real-ip unknown added client-side,no").unwrap().unwrap();
        assert_eq!((spoof.at, spoof.added, spoof.carried.unwrap().addr), (1, Some(Added::ClientSide), None));
    }

    #[test]
    fn csv_columns_are_read_by_name_in_any_order_past_unknown_ones() {
        let text = csv_text();
        let rows: Vec<Vec<String>> = (text.lines())
            .map(|l| {
                let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(l.as_bytes());
                r.records().next().unwrap().unwrap().iter().map(String::from).collect()
            })
            .collect();
        // outcome and reply_path swapped, a column of a later version between them
        let (a, b) = (
            rows[0].iter().position(|c| c == "reply_path").unwrap(),
            rows[0].iter().position(|c| c == "outcome").unwrap(),
        );
        let mut w = csv::Writer::from_writer(Vec::new());
        for (i, row) in rows.iter().enumerate() {
            let mut row = row.clone();
            row.swap(a, b);
            row.insert(a + 1, if i == 0 { "a_later_column".into() } else { "completed".into() });
            w.write_record(&row).unwrap();
        }
        let moved = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let (got, want) =
            (findings_from_csv(&moved, "m.csv").unwrap(), findings_from_csv(&text, "r.csv").unwrap());
        assert_eq!(got.requests, want.requests);
        assert!(want.requests.iter().any(|r| r.outcome.kind != OutcomeKind::Completed));
    }

    #[test]
    fn foreign_csv_is_refused_with_a_sentence() {
        let err = findings_from_csv("request,proto,first_seen,client,service,x\n", "r.csv").unwrap_err();
        assert!(err.to_string().starts_with("r.csv: the CSV header"), "{err}");
    }

    #[test]
    fn a_load_error_names_the_file_and_carries_what_failed() {
        let dir = std::env::temp_dir().join(format!("tc-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        match load_report(&missing) {
            Err(e @ LoadError::Unreadable { .. }) => {
                assert!(std::error::Error::source(&e).is_some());
                assert!(
                    e.to_string().starts_with(&format!("{}: cannot read it: ", missing.display())),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
        let binary = dir.join("b.json");
        std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x7b]).unwrap();
        assert!(
            matches!(load_report(&binary), Err(LoadError::NotText { file }) if file == binary.display().to_string())
        );
        let other = dir.join("o.txt");
        std::fs::write(&other, "hello\n").unwrap();
        assert!(matches!(load_report(&other), Err(LoadError::Unrecognised { .. })));
        // A row that is not ours: its row number (the header is row 1).
        let mut text = csv_text();
        text.push_str("9,sctp\n");
        let rows = text.lines().count();
        match findings_from_csv(&text, "r.csv") {
            Err(e @ LoadError::Malformed { kind: ReportKind::Csv, line: Some(n), .. }) => {
                assert_eq!(n, rows);
                assert!(e.to_string().starts_with(&format!("r.csv: row {rows}: ")), "{e}");
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
