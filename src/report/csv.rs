//! Findings → CSV: one row per request, columns exactly as DESIGN.md "Output
//! contract" says (`request, proto, first_seen, client, service`, then
//! `L_client, L_server, L_reply` per capture label L, then the verdict columns).
//! Takes `Findings`; gives bytes. Several values in one cell join with `;` in
//! path order; match evidence tokens join with `+`. Never reads captures.

use crate::verdict::{Findings, Hop, Request};
use std::io::{self, Write};

/// Columns before the per-capture ones.
pub const LEADING_COLUMNS: [&str; 5] = ["request", "proto", "first_seen", "client", "service"];

/// Columns after the per-capture ones.
pub const TRAILING_COLUMNS: [&str; 15] = [
    "source_changed_at",
    "source_before",
    "source_after",
    "destination_changed_at",
    "destination_before",
    "destination_after",
    "reply_path",
    "reply_lost_between",
    "outcome",
    "outcome_by",
    "outcome_origin",
    "outcome_icmp",
    "match_strength",
    "match_evidence",
    "explanation",
];

/// Suffixes of the three columns each capture label gets.
pub const HOP_SUFFIXES: [&str; 3] = ["_client", "_server", "_reply"];

/// The header row for these capture labels.
pub fn header(labels: &[&str]) -> Vec<String> {
    let mut cols: Vec<String> = LEADING_COLUMNS.iter().map(|c| c.to_string()).collect();
    for label in labels {
        cols.extend(HOP_SUFFIXES.iter().map(|s| format!("{label}{s}")));
    }
    cols.extend(TRAILING_COLUMNS.iter().map(|c| c.to_string()));
    cols
}

/// The request's hop at capture `index` labelled `label` (by position, else by label).
pub fn hop_at<'a>(request: &'a Request, index: usize, label: &str) -> Option<&'a Hop> {
    match request.captures.get(index) {
        Some(h) if h.label == label => Some(h),
        _ => request.captures.iter().find(|h| h.label == label),
    }
}

/// `yes`, `no`, or empty where the request was not seen and no reply either.
pub fn reply_cell(hop: Option<&Hop>) -> &'static str {
    match hop {
        Some(h) if h.reply_seen => "yes",
        Some(h) if h.seen => "no",
        _ => "",
    }
}

fn join<'a>(values: impl Iterator<Item = &'a str>) -> String {
    values.collect::<Vec<_>>().join(";")
}

/// One row, in the order of [`header`].
pub fn row(request: &Request, labels: &[&str]) -> Vec<String> {
    let first = request.captures.iter().find(|h| h.seen);
    let text = |v: Option<&String>| v.cloned().unwrap_or_default();
    let mut cells = vec![
        request.request.to_string(),
        request.proto.name().to_string(),
        text(first.and_then(|h| h.time.as_ref())),
        text(first.and_then(|h| h.client.as_ref())),
        text(first.and_then(|h| h.server.as_ref())),
    ];
    for (i, label) in labels.iter().enumerate() {
        let hop = hop_at(request, i, label);
        let seen = hop.filter(|h| h.seen);
        cells.push(text(seen.and_then(|h| h.client.as_ref())));
        cells.push(text(seen.and_then(|h| h.server.as_ref())));
        cells.push(reply_cell(hop).to_string());
    }
    for changes in [&request.source.changed, &request.destination.changed] {
        cells.push(join(changes.iter().map(|c| c.between.as_str())));
        cells.push(join(changes.iter().map(|c| c.before.as_str())));
        cells.push(join(changes.iter().map(|c| c.after.as_str())));
    }
    let reply = &request.reply;
    let outcome = &request.outcome;
    cells.push(reply.path.name().to_string());
    cells.push(text(reply.lost_between.as_ref()));
    cells.push(outcome.kind.name().to_string());
    cells.push(text(outcome.by.as_ref()));
    cells.push(text(outcome.origin.as_ref()));
    cells.push(text(outcome.icmp.as_ref()));
    cells.push(join(request.matches.iter().map(|m| m.strength.name())));
    cells.push(
        request
            .matches
            .iter()
            .map(|m| m.evidence.iter().map(|e| e.name()).collect::<Vec<_>>().join("+"))
            .collect::<Vec<_>>()
            .join(";"),
    );
    cells.push(request.explanation.clone());
    cells
}

/// `--format csv`: header, then one row per request.
pub fn write_csv(findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
    let labels: Vec<&str> = findings.captures.iter().map(|c| c.label.as_str()).collect();
    let mut w = csv::Writer::from_writer(out);
    w.write_record(header(&labels))?;
    for r in &findings.requests {
        w.write_record(row(r, &labels))?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn rows() -> Vec<csv::StringRecord> {
        let mut out = Vec::new();
        write_csv(&findings(), &mut out).unwrap();
        csv::Reader::from_reader(out.as_slice()).records().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn header_has_three_columns_per_label_between_fixed_ones() {
        let h = header(&["a", "b"]);
        assert_eq!(h.len(), 5 + 6 + 15);
        assert_eq!(&h[5..11], ["a_client", "a_server", "a_reply", "b_client", "b_server", "b_reply"]);
        assert_eq!(h[11], "source_changed_at");
        assert_eq!(h.last().unwrap(), "explanation");
    }

    #[test]
    fn snat_row_names_boundary_and_both_endpoints() {
        let r = &rows()[0];
        assert_eq!(&r[0], "1");
        assert_eq!(&r[1], "tcp");
        assert_eq!(&r[2], "2026-11-29T23:40:38.123456789Z");
        assert_eq!(&r[3], "198.18.90.42:51514");
        assert_eq!(&r[4], "198.19.96.10:80");
        assert_eq!(&r[11], "198.19.3.17:40112"); // backend_client
        assert_eq!(&r[14], "egress->backend");
        assert_eq!(&r[15], "198.18.90.42:51514");
        assert_eq!(&r[16], "198.19.3.17:40112");
        assert_eq!(&r[26], "strong;strong");
        assert_eq!(&r[27], "isn+client-fingerprint+ip-id;isn");
    }

    #[test]
    fn unseen_hop_leaves_endpoint_and_reply_cells_empty() {
        let r = &rows()[2]; // request 3, not seen at backend
        assert_eq!((&r[11], &r[12], &r[13]), ("", "", ""));
        assert_eq!(&r[10], "yes"); // egress saw the ICMP error
        assert_eq!((&r[22], &r[23], &r[24], &r[25]), ("icmp-error", "198.19.3.1", "egress->backend", "3/13"));
    }

    #[test]
    fn lost_reply_row_says_no_before_the_boundary() {
        let r = &rows()[1];
        assert_eq!((&r[7], &r[10], &r[13]), ("no", "no", "yes"));
        assert_eq!((&r[20], &r[21]), ("reply-lost", "egress->backend"));
        assert_eq!(&r[22], "no-reply");
    }

    #[test]
    fn strengths_join_per_boundary_in_path_order() {
        let r = &rows()[3];
        assert_eq!(&r[26], "ambiguous;weak");
        assert_eq!(&r[27], "client-fingerprint+time;ports+time");
    }
}
