//! Comparison → bytes: the change-record block as text (default) or Markdown
//! (the captures of both runs, one line per service and client, the
//! expectations with ✔/✘), CSV (one row per service and client), JSON (one
//! object), NDJSON (one pairing a line). Takes a `Comparison`; gives bytes.
//! The format is `--format`'s `CompareFormat`.

use super::diff::{Comparison, Pairing, RunCaptures, SideSummary, Sides};
use super::regress::{Regression, Worse};
use crate::report::wire::WireName;
use crate::report::Choice;
use std::io::{self, Write};

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

/// Writes the comparison in the chosen format.
pub fn write(c: &Comparison, format: CompareFormat, out: &mut dyn Write) -> io::Result<()> {
    match format {
        CompareFormat::Table => write_block(c, false, out),
        CompareFormat::Markdown => write_block(c, true, out),
        CompareFormat::Csv => write_csv(c, out),
        CompareFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, c)?;
            writeln!(out)
        }
        CompareFormat::Ndjson => {
            for p in &c.pairings {
                serde_json::to_writer(&mut *out, p)?;
                writeln!(out)?;
            }
            Ok(())
        }
    }
}

/// Every capture label of either run, before's path order first.
pub fn all_labels(c: &Comparison) -> Vec<String> {
    let mut labels: Vec<String> = c.before.captures.iter().map(|x| x.label.clone()).collect();
    let more: Vec<String> =
        c.after.captures.iter().map(|x| x.label.clone()).filter(|l| !labels.contains(l)).collect();
    labels.extend(more);
    labels
}

fn sources_cell(side: Option<&SideSummary>, label: &str) -> String {
    match side.and_then(|s| s.sources_at(label)) {
        Some([]) => "-".to_string(),
        Some(list) => list.join(";"),
        None => String::new(),
    }
}

fn joined(side: Option<&SideSummary>, f: fn(&SideSummary) -> &Vec<String>) -> String {
    side.map(|s| f(s).join(";")).unwrap_or_default()
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// `decap.pcap (decap, clock +0 ms)` per capture, and the span of request times.
fn run_line(name: &str, run: &RunCaptures, md: bool) -> String {
    let code = |t: &str| if md { format!("`{t}`") } else { t.to_string() };
    let captures: Vec<String> = run
        .captures
        .iter()
        .map(|c| format!("{} {} (clock {:+} ms)", c.label, code(&c.file), c.clock_offset_ms))
        .collect();
    let when = match (&run.first_request, &run.last_request) {
        (Some(a), Some(b)) if a == b => format!("request at {a}"),
        (Some(a), Some(b)) => format!("requests from {a} to {b}"),
        _ => "no request".to_string(),
    };
    let name = if md { format!("**{name}**") } else { name.to_string() };
    format!("{name}: {}; {when}", captures.join(", "))
}

/// `before → after` of one value, or the value alone when only one side has it
/// (the line then says "only before" / "only after").
fn arrow(before: Option<String>, after: Option<String>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => format!("{b} → {a}"),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => String::new(),
    }
}

/// One line per service and client: the source at each capture before → after,
/// reply path and outcome.
fn pairing_line(p: &Pairing, labels: &[String], md: bool) -> String {
    let (b, a) = (p.before.as_ref(), p.after.as_ref());
    let count = |s: Option<&SideSummary>| s.map_or(0, |x| x.requests.len());
    let cell = |s: Option<&SideSummary>, l: &str| {
        s.map(|s| match sources_cell(Some(s), l) {
            x if x.is_empty() => "not captured".to_string(),
            x => x.replace(';', "/"),
        })
    };
    let sources: Vec<String> =
        labels.iter().map(|l| format!("{l} {}", arrow(cell(b, l), cell(a, l)))).collect();
    let list = |s: Option<&SideSummary>, f: fn(&SideSummary) -> &Vec<String>| s.map(|x| f(x).join(" or "));
    let sides = match p.sides {
        Sides::Both => String::new(),
        Sides::OnlyBefore => " — only before".to_string(),
        Sides::OnlyAfter => " — only after".to_string(),
    };
    let client = if p.client.is_empty() { "?" } else { &p.client };
    let head = format!("{} {} from {client}", p.proto.wire(), p.service);
    let head = if md { format!("`{head}`") } else { head };
    format!(
        "- {head} ({} before, {} after){sides}: source {}; reply path {}; outcome {}",
        count(b),
        count(a),
        sources.join(", "),
        arrow(list(b, |x| &x.reply_paths), list(a, |x| &x.reply_paths)),
        arrow(list(b, |x| &x.outcomes), list(a, |x| &x.outcomes)),
    )
}

/// The change-record block: captures of both runs, one line per service and
/// client, the statements, the expectations with ✔/✘ and what breaks them.
pub fn write_block(c: &Comparison, md: bool, out: &mut dyn Write) -> io::Result<()> {
    let labels = all_labels(c);
    let heading = |t: &str| if md { format!("#### {t}") } else { t.to_string() };
    writeln!(out, "{}", heading("Change record (tuplecorr compare)"))?;
    writeln!(out)?;
    writeln!(out, "{}", run_line("Before", &c.before, md))?;
    if md {
        writeln!(out)?;
    }
    writeln!(out, "{}", run_line("After", &c.after, md))?;
    writeln!(out)?;
    writeln!(out, "{}", heading("Per service and client"))?;
    writeln!(out)?;
    for p in &c.pairings {
        writeln!(out, "{}", pairing_line(p, &labels, md))?;
    }
    writeln!(out)?;
    writeln!(out, "{}", heading("Statements"))?;
    writeln!(out)?;
    for p in &c.pairings {
        writeln!(out, "- {}", p.statement)?;
    }
    if !c.intent_before.is_empty() || !c.intent_after.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", heading("Intent (ip-masq-agent)"))?;
        writeln!(out)?;
        for (when, list) in [("before", &c.intent_before), ("after", &c.intent_after)] {
            if list.is_empty() {
                writeln!(out, "- {when}: no intent finding")?;
            }
            for m in list {
                writeln!(out, "- {when}: {m}")?;
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", heading("Regressions"))?;
    writeln!(out)?;
    for line in regression_lines(c) {
        writeln!(out, "{line}")?;
    }
    if c.expectations.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "{}", heading("Expectations"))?;
    writeln!(out)?;
    for e in &c.expectations {
        if let Some(p) = &e.predicted {
            for line in predicted_lines(e, p) {
                writeln!(out, "{line}")?;
            }
            continue;
        }
        let mark = if e.holds { "✔" } else { "✘" };
        let noun = if e.expectation.starts_with("unchanged") { "service/client" } else { "request" };
        let n = e.checked;
        let checked = format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
        writeln!(out, "- {mark} {} ({checked} checked, {} broken)", e.expectation, e.broken_by.len())?;
        for b in &e.broken_by {
            let ids: Vec<String> = b.requests.iter().map(|r| r.to_string()).collect();
            let what = if ids.len() == 1 { "request" } else { "requests" };
            writeln!(
                out,
                "  - {what} {} {} ({} {} from {}): {}",
                ids.join(", "),
                b.run,
                b.proto.wire(),
                b.service,
                b.client,
                b.found
            )?;
        }
    }
    Ok(())
}

/// The lines of one entry of an expectations file: ✔/✘ (or "not exercised",
/// "not checkable") with the entry, then `before → predicted → observed` at
/// its host and the reason, then the requests that break it.
pub fn predicted_lines(e: &super::model::ExpectationResult, p: &super::model::PredictedCheck) -> Vec<String> {
    use super::model::Status;
    let n = e.checked;
    let checked =
        format!("{n} request{} checked, {} broken", if n == 1 { "" } else { "s" }, e.broken_by.len());
    let mut lines = vec![match p.status {
        Status::Held => format!("- ✔ {} ({checked})", e.expectation),
        Status::Broken => format!("- ✘ {} ({checked})", e.expectation),
        Status::NotExercised => {
            format!("- not exercised: {} (no request of it in the after run)", e.expectation)
        }
        Status::Unknown => {
            format!("- not checkable: {}: {}", e.expectation, p.unknown.as_deref().unwrap_or_default())
        }
    }];
    let seen =
        |list: &[String], none: &str| if list.is_empty() { none.to_string() } else { list.join(" or ") };
    if matches!(p.status, Status::Held | Status::Broken) {
        lines.push(format!(
            "  - {} → {} → {} (before → predicted → observed, at {}; {})",
            seen(&p.before, "not seen before"),
            p.predicted.as_deref().unwrap_or("unknown"),
            seen(&p.observed, "not seen leaving"),
            p.at,
            p.reason
        ));
    }
    for b in &e.broken_by {
        let ids: Vec<String> = b.requests.iter().map(|r| r.to_string()).collect();
        let what = if ids.len() == 1 { "request" } else { "requests" };
        lines.push(format!("  - {what} {} {}: {}", ids.join(", "), b.run, b.found));
    }
    lines
}

/// At most this many regressions are listed in the block (and on stderr); JSON
/// and CSV carry every one.
pub const REGRESSIONS_LISTED: usize = 20;
/// At most this many request numbers are listed per regression in the block.
const REQUESTS_LISTED: usize = 10;

/// `1, 2, 3` or `1, 2, ..., 10 and 5 more`.
fn bounded_ids(ids: &[u64]) -> String {
    let shown: Vec<String> = ids.iter().take(REQUESTS_LISTED).map(u64::to_string).collect();
    match ids.len().saturating_sub(REQUESTS_LISTED) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// One regression in words: `tcp 198.19.96.10:80 from 198.18.90.42 (requests 1, 2 after):
/// outcome completed → no-reply; reply path same-path → reply-lost egress->backend`.
pub fn regression_text(r: &Regression) -> String {
    let what = if r.requests_after.len() == 1 { "request" } else { "requests" };
    let mut parts = Vec::new();
    if r.worse.contains(&Worse::Outcome) {
        parts.push(format!("outcome {} → {}", r.outcome_before.join(" or "), r.outcome_after.join(" or ")));
    }
    if r.worse.contains(&Worse::ReplyPath) {
        parts.push(format!(
            "reply path {} → {}",
            r.reply_path_before.join(" or "),
            r.reply_path_after.join(" or ")
        ));
    }
    format!(
        "{} {} from {} ({what} {} after): {}",
        r.proto.wire(),
        r.service,
        r.client,
        bounded_ids(&r.requests_after),
        parts.join("; ")
    )
}

/// The block's regression lines: ✘ per regression (`note:` when allowed), at
/// most `REGRESSIONS_LISTED`, or ✔ when no pairing in both runs got worse.
pub fn regression_lines(c: &Comparison) -> Vec<String> {
    let both = c.pairings.iter().filter(|p| p.sides == Sides::Both).count();
    let noun = if both == 1 { "service/client" } else { "services/clients" };
    if c.regressions.is_empty() {
        return vec![format!("- ✔ nothing got worse ({both} {noun} in both runs checked)")];
    }
    let n = c.regressions.len();
    let mark = if c.regressions_allowed { "note:" } else { "✘" };
    let mut lines = vec![format!(
        "- {mark} {n} of {both} {noun} in both runs got worse{}",
        if c.regressions_allowed {
            " (allowed by --allow-regressions: the exit status ignores them)"
        } else {
            ""
        }
    )];
    for r in c.regressions.iter().take(REGRESSIONS_LISTED) {
        lines.push(format!("  - {mark} {}", regression_text(r)));
    }
    if n > REGRESSIONS_LISTED {
        lines
            .push(format!("  - and {} more (every one is in --format json and csv)", n - REGRESSIONS_LISTED));
    }
    lines
}

/// The CSV header for these labels.
pub fn csv_header(labels: &[String]) -> Vec<String> {
    let mut h: Vec<String> = ["proto", "service", "client", "sides", "requests_before", "requests_after"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for l in labels {
        h.push(format!("{l}_source_before"));
        h.push(format!("{l}_source_after"));
    }
    h.extend(
        [
            "source_changed",
            "reply_path_before",
            "reply_path_after",
            "reply_path_changed",
            "outcome_before",
            "outcome_after",
            "outcome_changed",
            "statement",
            "expectations_broken",
            "regressed",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

/// One CSV row of a service and client.
pub fn csv_row(p: &Pairing, labels: &[String]) -> Vec<String> {
    let (b, a) = (p.before.as_ref(), p.after.as_ref());
    let ids = |side: Option<&SideSummary>| {
        side.map(|x| x.requests.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(";"))
            .unwrap_or_default()
    };
    let mut row = vec![
        p.proto.wire().to_string(),
        p.service.clone(),
        p.client.clone(),
        p.sides.wire().to_string(),
        ids(b),
        ids(a),
    ];
    for l in labels {
        row.push(sources_cell(b, l));
        row.push(sources_cell(a, l));
    }
    row.push(yes_no(p.source_changed).to_string());
    row.push(joined(b, |x| &x.reply_paths));
    row.push(joined(a, |x| &x.reply_paths));
    row.push(yes_no(p.reply_path_changed).to_string());
    row.push(joined(b, |x| &x.outcomes));
    row.push(joined(a, |x| &x.outcomes));
    row.push(yes_no(p.outcome_changed).to_string());
    row.push(p.statement.clone());
    row.push(p.expectations_broken.join(";"));
    row.push(p.regressed.iter().map(|w| w.wire()).collect::<Vec<_>>().join(";"));
    row
}

/// CSV: one row per service and client; `-` where a capture did not see the
/// requests, empty where the run had no such capture or no such request.
pub fn write_csv(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let labels = all_labels(c);
    let mut w = csv::Writer::from_writer(out);
    w.write_record(csv_header(&labels))?;
    for p in &c.pairings {
        w.write_record(csv_row(p, &labels))?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::expect::{check, Expectation, SourceWant};
    use crate::report::fixtures::findings;

    fn text(c: &Comparison, format: CompareFormat) -> String {
        let mut out = Vec::new();
        write(c, format, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn block_has_captures_one_line_per_pairing_and_marked_expectations() {
        let before = findings();
        let mut after = before.clone();
        after.requests.retain(|r| r.request != 5);
        let mut c = super::super::compare(&before, &after);
        let expect = [
            Expectation::Source { want: SourceWant::Net("198.19.3.17".parse().unwrap(), 32), at: None },
            Expectation::Unchanged,
        ];
        check(&mut c, &after, &expect).unwrap();
        let md = text(&c, CompareFormat::Markdown);
        assert!(md.starts_with("#### Change record (tuplecorr compare)\n"), "{md}");
        assert!(md.contains("**Before**: decap `decap.pcap` (clock +0 ms), egress `egress.pcap` (clock +0.012 ms), backend `backend.pcap` (clock +2750.012 ms)"), "{md}");
        assert!(md.contains("- `tcp 198.19.96.10:80 from 198.18.90.42` (2 before, 2 after): source decap 198.18.90.42 → 198.18.90.42, egress 198.18.90.42 → 198.18.90.42, backend 198.19.3.17 → 198.19.3.17;"), "{md}");
        assert!(md.contains("- `icmp 2001:db8:ffff::99 from 2001:db8::1` (1 before, 0 after) — only before: source decap 2001:db8::1,"), "{md}");
        assert!(md.contains("- ✘ source at backend is 198.19.3.17 (4 requests checked, 2 broken)\n"), "{md}");
        assert!(
            md.contains("  - request 3 after (udp 198.19.96.11:53 from 198.18.90.43): not seen at backend\n"),
            "{md}"
        );
        assert!(md.contains("- ✘ unchanged: "), "{md}");
        assert!(
            md.contains(
                "  - request 5 before (icmp 2001:db8:ffff::99 from 2001:db8::1): requested only before\n"
            ),
            "{md}"
        );
        let plain = text(&c, CompareFormat::Table);
        assert!(
            plain.starts_with("Change record (tuplecorr compare)\n\nBefore: decap decap.pcap (clock +0 ms)"),
            "{plain}"
        );
        assert!(!plain.contains('`') && !plain.contains("**"), "{plain}");
    }

    #[test]
    fn csv_rows_carry_the_pairing_and_its_broken_expectations() {
        let before = findings();
        let mut after = before.clone();
        after.requests.retain(|r| r.request != 5);
        let mut c = super::super::compare(&before, &after);
        check(&mut c, &after, &[Expectation::Unchanged]).unwrap();
        let csv = text(&c, CompareFormat::Csv);
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header[..6], ["proto", "service", "client", "sides", "requests_before", "requests_after"]);
        assert_eq!(header[header.len() - 2..], ["expectations_broken", "regressed"]);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), c.pairings.len());
        let icmp = rows.iter().find(|r| &r[0] == "icmp").unwrap();
        assert_eq!((&icmp[3], &icmp[4], &icmp[5]), ("only-before", "5", ""));
        assert!(icmp[header.len() - 2].starts_with("unchanged"), "{icmp:?}");
        let tcp = rows.iter().find(|r| &r[1] == "198.19.96.10:80").unwrap();
        assert_eq!((&tcp[3], &tcp[4], &tcp[header.len() - 2]), ("both", "1;2", ""));
    }

    #[test]
    fn regressions_are_listed_bounded_with_their_requests_bounded() {
        use crate::compare::regress::{Regression, Worse};
        use crate::verdict::Proto;
        let mut c = super::super::compare(&findings(), &findings());
        let regression = |i: usize| Regression {
            proto: Proto::Udp,
            service: format!("198.19.96.{i}:53"),
            client: "198.18.90.42".into(),
            worse: vec![Worse::Outcome],
            requests_before: vec![1],
            requests_after: (1..=12).collect(),
            outcome_before: vec!["completed".into()],
            outcome_after: vec!["icmp-error 3/3 by 198.19.96.9".into(), "no-reply".into()],
            reply_path_before: vec!["same-path".into()],
            reply_path_after: vec!["same-path".into()],
        };
        c.regressions = (0..REGRESSIONS_LISTED + 3).map(regression).collect();
        let lines = regression_lines(&c);
        assert_eq!(lines.len(), 1 + REGRESSIONS_LISTED + 1);
        assert_eq!(lines[0], "- ✘ 23 of 4 services/clients in both runs got worse");
        assert_eq!(
            lines[1],
            "  - ✘ udp 198.19.96.0:53 from 198.18.90.42 (requests 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more after): \
             outcome completed → icmp-error 3/3 by 198.19.96.9 or no-reply"
        );
        assert_eq!(lines.last().unwrap(), "  - and 3 more (every one is in --format json and csv)");
        c.regressions.truncate(1);
        c.regressions[0].requests_after = vec![7];
        c.regressions[0].worse = vec![Worse::ReplyPath];
        c.regressions_allowed = true;
        assert_eq!(
            regression_lines(&c),
            [
                "- note: 1 of 4 services/clients in both runs got worse (allowed by --allow-regressions: the exit status ignores them)",
                "  - note: udp 198.19.96.0:53 from 198.18.90.42 (request 7 after): reply path same-path → same-path",
            ]
        );
        c.regressions.clear();
        assert_eq!(regression_lines(&c), ["- ✔ nothing got worse (4 services/clients in both runs checked)"]);
        let md = text(&c, CompareFormat::Markdown);
        assert!(md.contains("\n#### Regressions\n\n- ✔ nothing got worse"), "{md}");
    }

    #[test]
    fn ndjson_is_one_pairing_a_line() {
        let c = super::super::compare(&findings(), &findings());
        let lines: Vec<Pairing> =
            text(&c, CompareFormat::Ndjson).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), c.pairings.len());
        assert_eq!(lines[0], c.pairings[0]);
    }
}
