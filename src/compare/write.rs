//! Comparison → bytes in the main command's formats: table (a grid of source
//! addresses per service, then its statement), CSV (one row per service), JSON
//! (one object), NDJSON (one service a line). Takes a `Comparison`; gives bytes.
//! Never changes a statement or reads files.

use super::diff::{Comparison, ServiceChange, SideSummary};
use crate::report::schema::WireName;
use crate::report::Format;
use std::io::{self, Write};

/// Writes the comparison in the chosen format.
pub fn write(c: &Comparison, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Table => write_table(c, out),
        Format::Csv => write_csv(c, out),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, c)?;
            writeln!(out)
        }
        Format::Ndjson => {
            for s in &c.services {
                serde_json::to_writer(&mut *out, s)?;
                writeln!(out)?;
            }
            Ok(())
        }
        Format::Html => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "compare writes table, csv, json or ndjson, not html",
        )),
    }
}

/// Every capture label of either run, before's path order first.
pub fn all_labels(c: &Comparison) -> Vec<String> {
    let mut labels = c.before_labels.clone();
    labels.extend(c.after_labels.iter().filter(|l| !c.before_labels.contains(l)).cloned());
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

/// Table: per service a heading, a grid (rows before/after, one column per
/// capture) of source addresses, and the statement.
pub fn write_table(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let labels = all_labels(c);
    for (i, s) in c.services.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let count = |side: Option<&SideSummary>| side.map_or(0, |x| x.requests);
        writeln!(
            out,
            "{} {}: {} before, {} after",
            s.proto.wire(),
            s.service,
            count(s.before.as_ref()),
            count(s.after.as_ref())
        )?;
        let mut grid: Vec<Vec<String>> =
            vec![std::iter::once("source at".to_string()).chain(labels.clone()).collect()];
        for (name, side) in [("before", s.before.as_ref()), ("after", s.after.as_ref())] {
            let mut row = vec![name.to_string()];
            if side.is_none() {
                row.push("not requested".to_string());
                row.extend(labels.iter().skip(1).map(|_| String::new()));
                grid.push(row);
                continue;
            }
            row.extend(labels.iter().map(|l| match sources_cell(side, l) {
                cell if cell.is_empty() => "not captured".to_string(),
                cell => cell.replace(';', "/"),
            }));
            grid.push(row);
        }
        let widths: Vec<usize> = (0..grid[0].len())
            .map(|c| grid.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        for row in &grid {
            let cells: Vec<String> =
                row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}", w = *w)).collect();
            writeln!(out, "  {}", cells.join("  ").trim_end())?;
        }
        writeln!(
            out,
            "  reply path {}, outcome {}",
            if s.reply_path_changed { "changed" } else { "unchanged" },
            if s.outcome_changed { "changed" } else { "unchanged" }
        )?;
        writeln!(out, "  {}", s.statement)?;
    }
    Ok(())
}

/// The CSV header for these labels.
pub fn csv_header(labels: &[String]) -> Vec<String> {
    let mut h: Vec<String> =
        ["proto", "service", "requests_before", "requests_after"].iter().map(|s| s.to_string()).collect();
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
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

/// One CSV row of a service.
pub fn csv_row(s: &ServiceChange, labels: &[String]) -> Vec<String> {
    let (b, a) = (s.before.as_ref(), s.after.as_ref());
    let count = |side: Option<&SideSummary>| side.map_or(0, |x| x.requests).to_string();
    let mut row = vec![s.proto.wire().to_string(), s.service.clone(), count(b), count(a)];
    for l in labels {
        row.push(sources_cell(b, l));
        row.push(sources_cell(a, l));
    }
    row.push(yes_no(s.source_changed).to_string());
    row.push(joined(b, |x| &x.reply_paths));
    row.push(joined(a, |x| &x.reply_paths));
    row.push(yes_no(s.reply_path_changed).to_string());
    row.push(joined(b, |x| &x.outcomes));
    row.push(joined(a, |x| &x.outcomes));
    row.push(yes_no(s.outcome_changed).to_string());
    row.push(s.statement.clone());
    row
}

/// CSV: one row per service; `-` where a capture did not see the service,
/// empty where the run had no such capture.
pub fn write_csv(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let labels = all_labels(c);
    let mut w = csv::Writer::from_writer(out);
    w.write_record(csv_header(&labels))?;
    for s in &c.services {
        w.write_record(csv_row(s, &labels))?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn table(c: &Comparison) -> String {
        let mut out = Vec::new();
        write_table(c, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn table_grid_shows_sources_per_capture_and_missing_sides() {
        let before = findings();
        let mut after = before.clone();
        after.requests.retain(|r| r.request != 5);
        let text = table(&super::super::compare(&before, &after));
        assert!(text.contains("  source at  decap         egress        backend\n"), "{text}");
        assert!(text.contains("  before     198.18.90.42  198.18.90.42  198.19.3.17\n"), "{text}");
        assert!(text.contains("  before     198.18.90.43  198.18.90.43  -\n"), "{text}");
        assert!(text.contains("icmp 2001:db8:ffff::99: 1 before, 0 after\n"), "{text}");
        assert!(text.contains("  after      not requested\n"), "{text}");
    }

    #[test]
    fn ndjson_is_one_service_a_line() {
        let c = super::super::compare(&findings(), &findings());
        let mut out = Vec::new();
        write(&c, Format::Ndjson, &mut out).unwrap();
        let lines: Vec<ServiceChange> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), c.services.len());
        assert_eq!(lines[0], c.services[0]);
    }
}
