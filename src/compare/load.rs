//! Reads a tuplecorr report back into `Findings`: JSON as written (the whole
//! model), CSV as far as its columns go (proto, endpoints and reply per capture,
//! changes, reply path, outcome, matches, explanation). Takes a file; gives
//! `Findings` or a sentence saying why not. Never runs the pipeline.

use crate::report::csv::{HOP_SUFFIXES, LEADING_COLUMNS, TRAILING_COLUMNS};
use crate::report::endpoint::address_text;
use crate::verdict::*;
use std::path::Path;

/// A side of `compare` that could not be read.
#[derive(Debug, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// What a file holds, judged from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    Json,
    Csv,
}

/// JSON when the text starts with `{`, CSV when its header starts like ours.
pub fn detect(text: &str) -> Option<ReportKind> {
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with('{') {
        Some(ReportKind::Json)
    } else if text.starts_with(&LEADING_COLUMNS.join(",")) {
        Some(ReportKind::Csv)
    } else {
        None
    }
}

/// Loads a tuplecorr report (JSON or CSV, detected).
pub fn load_report(path: &Path) -> Result<Findings, LoadError> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| LoadError(format!("{name}: cannot read it: {e}")))?;
    if bytes.starts_with(&[0xd4, 0xc3, 0xb2, 0xa1])
        || bytes.starts_with(&[0xa1, 0xb2, 0xc3, 0xd4])
        || bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a])
        || bytes.starts_with(&[0x1f, 0x8b])
    {
        return Err(LoadError(format!(
            "{name}: is a capture, not a report; give a tuplecorr report or a comma-separated list of captures in path order"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| LoadError(format!("{name}: not a tuplecorr report (not UTF-8 text)")))?;
    match detect(&text) {
        Some(ReportKind::Json) => serde_json::from_str(&text)
            .map_err(|e| LoadError(format!("{name}: not a tuplecorr JSON report: {e}"))),
        Some(ReportKind::Csv) => findings_from_csv(&text, &name.to_string()),
        None => Err(LoadError(format!(
            "{name}: not a tuplecorr report (neither a JSON object nor a CSV starting with `{}`)",
            LEADING_COLUMNS.join(",")
        ))),
    }
}

fn by_name<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, text: &str) -> Option<T> {
    all.iter().copied().find(|v| name(*v) == text)
}

fn proto(text: &str) -> Option<Proto> {
    by_name(&[Proto::Tcp, Proto::Udp, Proto::Icmp], Proto::name, text)
}

fn reply_path(text: &str) -> Option<ReplyPath> {
    use ReplyPath::*;
    by_name(&[SamePath, ReplyLost, Bypassed, NoReply], ReplyPath::name, text)
}

fn outcome_kind(text: &str) -> Option<OutcomeKind> {
    use OutcomeKind::*;
    by_name(&[Completed, HandshakeOnly, Reset, IcmpError, NoReply, Midstream], OutcomeKind::name, text)
}

fn strength(text: &str) -> Option<Strength> {
    by_name(&[Strength::Strong, Strength::Weak, Strength::Ambiguous], Strength::name, text)
}

fn evidence(text: &str) -> Option<Evidence> {
    use Evidence::*;
    by_name(
        &[Isn, ClientFingerprint, ServerFingerprint, UdpPayload, IcmpEcho, SeqShift, IpId, Ports, Time],
        Evidence::name,
        text,
    )
}

fn split(cell: &str) -> Vec<&str> {
    if cell.is_empty() {
        Vec::new()
    } else {
        cell.split(';').collect()
    }
}

fn opt(cell: &str) -> Option<String> {
    (!cell.is_empty()).then(|| cell.to_string())
}

/// Changes from the three `;`-joined columns. The CSV has no kind column: an
/// address that changed reads as `snat`/`dnat`, else `port-only` (a proxy
/// boundary reads as `snat`).
fn changes(at: &str, before: &str, after: &str, address_kind: ChangeKind) -> Changes {
    let (at, before, after) = (split(at), split(before), split(after));
    let changed = at
        .iter()
        .enumerate()
        .map(|(i, between)| {
            let b = before.get(i).copied().unwrap_or_default();
            let a = after.get(i).copied().unwrap_or_default();
            let kind = if address_text(b) == address_text(a) { ChangeKind::PortOnly } else { address_kind };
            Change { between: between.to_string(), kind, before: b.to_string(), after: a.to_string() }
        })
        .collect();
    Changes { changed }
}

/// Parses a tuplecorr CSV report back into findings (as far as its columns go).
pub fn findings_from_csv(text: &str, name: &str) -> Result<Findings, LoadError> {
    let bad = |what: String| LoadError(format!("{name}: {what}"));
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(format!("cannot read the CSV header: {e}")))?
        .iter()
        .map(String::from)
        .collect();
    let hop_columns = header.len().checked_sub(LEADING_COLUMNS.len() + TRAILING_COLUMNS.len());
    let labels: Vec<String> = match hop_columns {
        Some(n) if n % 3 == 0 && header[header.len() - TRAILING_COLUMNS.len()..] == TRAILING_COLUMNS => {
            header[LEADING_COLUMNS.len()..LEADING_COLUMNS.len() + n]
                .chunks(3)
                .map(|c| c[0].strip_suffix(HOP_SUFFIXES[0]).unwrap_or(&c[0]).to_string())
                .collect()
        }
        _ => return Err(bad("the CSV header is not a tuplecorr report's".to_string())),
    };
    let trailing = LEADING_COLUMNS.len() + 3 * labels.len();
    let mut requests = Vec::new();
    for (n, record) in reader.records().enumerate() {
        let line = n + 2;
        let rec = record.map_err(|e| bad(format!("row {line}: {e}")))?;
        let cell = |i: usize| rec.get(i).unwrap_or_default();
        let t = |i: usize| cell(trailing + i);
        let proto = proto(cell(1)).ok_or_else(|| bad(format!("row {line}: unknown proto {:?}", cell(1))))?;
        let mut hops: Vec<Hop> = labels
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let base = LEADING_COLUMNS.len() + 3 * i;
                let (client, server, reply) = (cell(base), cell(base + 1), cell(base + 2));
                Hop {
                    seen: !client.is_empty() || !server.is_empty(),
                    client: opt(client),
                    server: opt(server),
                    reply_seen: reply == "yes",
                    ..Hop::unseen(label.clone())
                }
            })
            .collect();
        if let Some(first) = hops.first_mut() {
            first.time = opt(cell(2));
            first.time_ns = crate::config::parse_rfc3339_ns(cell(2));
        }
        let seen: Vec<&str> = hops.iter().filter(|h| h.seen).map(|h| h.label.as_str()).collect();
        let boundaries: Vec<String> = seen.windows(2).map(|w| format!("{}->{}", w[0], w[1])).collect();
        let strengths = split(t(12));
        let evidences = split(t(13));
        let matches = strengths
            .iter()
            .enumerate()
            .map(|(i, s)| Match {
                between: boundaries.get(i).cloned().unwrap_or_default(),
                strength: strength(s).unwrap_or(Strength::Weak),
                evidence: evidences
                    .get(i)
                    .map(|e| e.split('+').filter_map(evidence).collect())
                    .unwrap_or_default(),
                candidates: Vec::new(),
            })
            .collect();
        let path =
            reply_path(t(6)).ok_or_else(|| bad(format!("row {line}: unknown reply_path {:?}", t(6))))?;
        let kind =
            outcome_kind(t(8)).ok_or_else(|| bad(format!("row {line}: unknown outcome {:?}", t(8))))?;
        requests.push(Request {
            request: cell(0).parse().unwrap_or(n as u64 + 1),
            proto,
            matches,
            source: changes(t(0), t(1), t(2), ChangeKind::Snat),
            destination: changes(t(3), t(4), t(5), ChangeKind::Dnat),
            reply: Reply {
                path,
                lost_between: opt(t(7)),
                bypassed: None,
                reached: seen.last().map(|l| l.to_string()),
            },
            outcome: Outcome { kind, by: opt(t(9)), origin: opt(t(10)), icmp: opt(t(11)) },
            explanation: t(14).to_string(),
            captures: std::mem::take(&mut hops),
        });
    }
    let captures = labels
        .iter()
        .map(|label| CaptureSummary {
            label: label.clone(),
            file: name.to_string(),
            format: "tuplecorr-csv".to_string(),
            link_types: Vec::new(),
            packets: 0,
            flows: 0,
            clock_offset_ms: 0.0,
            offset_spread_ms: 0.0,
            offset_samples: 0,
            offset_method: OffsetMethod::None,
        })
        .collect();
    Ok(Findings {
        tuplecorr: String::new(),
        captures,
        boundaries: Vec::new(),
        requests,
        unmatched: Vec::new(),
        warnings: Vec::new(),
    })
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
            assert_eq!(got.outcome, want.outcome);
            assert_eq!(got.source, want.source);
            assert_eq!(got.destination, want.destination);
            assert_eq!(got.explanation, want.explanation);
            for (g, w) in got.captures.iter().zip(&want.captures) {
                assert_eq!(
                    (&g.label, g.seen, &g.client, &g.server),
                    (&w.label, w.seen, &w.client, &w.server)
                );
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
        assert_eq!(f.requests[0].matches[1].between, "egress->backend");
    }

    #[test]
    fn foreign_csv_is_refused_with_a_sentence() {
        let err = findings_from_csv("request,proto,first_seen,client,service,x\n", "r.csv").unwrap_err();
        assert!(err.0.starts_with("r.csv: the CSV header"), "{err}");
    }
}
