//! Findings → CSV: one row per request, columns exactly as docs/output.md
//! "CSV" says (`request, proto, first_seen, client, service`, then
//! `L_client, L_server, L_reply` per capture label L, then the verdict columns).
//! Takes `Findings`; gives bytes. Several values in one cell join with `;` in
//! path order; match evidence tokens join with `+`. Never reads captures.

use crate::report::csv_columns;
use crate::report::to_wire;
use crate::report::wire::{self, WireName};
use crate::report::words::Words;
use crate::verdict::{Findings, Request};
use std::io::{self, Write};

/// Columns before the per-capture ones.
pub const LEADING_COLUMNS: [&str; 5] = ["request", "proto", "first_seen", "client", "service"];

/// Suffixes of the three columns each capture label gets.
pub const HOP_SUFFIXES: [&str; 3] = ["_client", "_server", "_reply"];

/// The header row for these capture labels.
pub fn header(labels: &[&str]) -> Vec<String> {
    let mut cols: Vec<String> = LEADING_COLUMNS.iter().map(|c| c.to_string()).collect();
    for label in labels {
        cols.extend(HOP_SUFFIXES.iter().map(|s| format!("{label}{s}")));
    }
    cols.extend(csv_columns::trailing_names().map(String::from));
    cols
}

/// Name columns, appended after [`csv_columns::TRAILING`] only with `--names`
/// (per capture label L: `L_client_name`, `L_server_name` between these).
pub const NAME_COLUMNS: [&str; 3] = ["client_name", "service_name", "outcome_by_name"];

/// Whether capture label `label` is a side of a split capture (`node(in)`,
/// `node(out)`): it gets an `L_iface` column, last of all.
pub fn is_side(label: &str) -> bool {
    label.ends_with("(in)") || label.ends_with("(out)")
}

/// The `L_iface` columns, one per side of a split capture, in path order:
/// the interface each request took there. Last, so that every other column
/// keeps its place.
pub fn iface_columns<'a>(labels: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    labels.iter().filter(|l| is_side(l)).map(|l| format!("{l}_iface"))
}

/// The header row with the name columns of `--names` after the others.
pub fn header_with_names(labels: &[&str]) -> Vec<String> {
    let mut cols = header(labels);
    cols.extend(NAME_COLUMNS[..2].iter().map(|c| c.to_string()));
    for label in labels {
        cols.extend(["_client_name", "_server_name"].iter().map(|s| format!("{label}{s}")));
    }
    cols.push(NAME_COLUMNS[2].to_string());
    cols
}

/// A name for a CSV cell: one that a spreadsheet would read as a formula
/// (starting with `=`, `+`, `-` or `@`) gets a leading `'`.
pub fn defuse(name: &str) -> String {
    if name.starts_with(['=', '+', '-', '@']) {
        format!("'{name}")
    } else {
        name.to_string()
    }
}

/// `yes`, `no`, or empty where the request was not seen and no reply either.
pub fn reply_cell(hop: Option<&wire::Hop>) -> &'static str {
    match hop {
        Some(h) if h.reply_seen => "yes",
        Some(h) if h.seen => "no",
        _ => "",
    }
}

fn endpoint_into(cell: &mut String, e: Option<&String>) {
    if let Some(e) = e {
        cell.push_str(e);
    }
}

/// One row, in the order of [`header`], from the request's wire view `q`
/// (made from `request` by `to_wire`): cells written into reused strings.
/// `first_seen` is the one cell taken from the typed request: its time is
/// written in the style of `--tz`/`--time-format`.
pub fn row_into(w: &Words<'_>, request: &Request, q: &wire::Request, cells: &mut Vec<String>) {
    let names = if w.names.is_some() { NAME_COLUMNS.len() + 2 * w.labels.len() } else { 0 };
    let why = if w.why.is_some() { csv_columns::WHY.len() } else { 0 };
    let sides = w.labels.iter().filter(|l| is_side(l)).count();
    let columns =
        LEADING_COLUMNS.len() + 3 * w.labels.len() + csv_columns::TRAILING.len() + names + why + sides;
    cells.resize_with(columns, String::new);
    cells.iter_mut().for_each(String::clear);
    let mut cell = cells.iter_mut();
    let mut next = || cell.next().expect("cells sized to the header");
    let first = q.captures.iter().find(|h| h.seen);
    next().push_str(itoa::Buffer::new().format(q.request));
    next().push_str(q.proto.wire());
    let time = request.captures.iter().find(|h| h.seen).and_then(|h| h.time_ns);
    match (time, w.time) {
        (Some(t), Some(style)) => next().push_str(&style.format(t)),
        (Some(t), None) => crate::time::push_rfc3339(next(), t),
        (None, _) => {
            next();
        }
    }
    endpoint_into(next(), first.and_then(|h| h.client.as_ref()));
    endpoint_into(next(), first.and_then(|h| h.server.as_ref()));
    for i in 0..w.labels.len() {
        let hop = q.captures.get(i);
        let seen = hop.filter(|h| h.seen);
        endpoint_into(next(), seen.and_then(|h| h.client.as_ref()));
        endpoint_into(next(), seen.and_then(|h| h.server.as_ref()));
        next().push_str(reply_cell(hop));
    }
    for column in &csv_columns::TRAILING {
        (column.write)(q, next());
    }
    if w.names.is_some() {
        let name = |cell: &mut String, n: Option<&String>| {
            if let Some(n) = n {
                cell.push_str(&defuse(n));
            }
        };
        name(next(), first.and_then(|h| h.client_name.as_ref()));
        name(next(), first.and_then(|h| h.server_name.as_ref()));
        for i in 0..w.labels.len() {
            let seen = q.captures.get(i).filter(|h| h.seen);
            name(next(), seen.and_then(|h| h.client_name.as_ref()));
            name(next(), seen.and_then(|h| h.server_name.as_ref()));
        }
        name(next(), q.outcome.by_name.as_ref());
    }
    if w.why.is_some() {
        for column in &csv_columns::WHY {
            (column.write)(q, next());
        }
    }
    for (i, _) in w.labels.iter().enumerate().filter(|(_, l)| is_side(l)) {
        if let Some(iface) = q.captures.get(i).filter(|h| h.seen).and_then(|h| h.iface.as_deref()) {
            next().push_str(&defuse(iface));
        } else {
            next();
        }
    }
}

/// One row, in the order of [`header`].
pub fn row(w: &Words<'_>, request: &Request) -> Vec<String> {
    let mut cells = Vec::new();
    row_into(w, request, &to_wire::request(w, request), &mut cells);
    cells
}

/// `--format csv`: header, then one row per request.
pub fn write_csv(findings: &Findings, out: &mut (dyn Write + Send)) -> io::Result<()> {
    write_csv_with(&Words::new(findings), findings, out)
}

/// [`write_csv`] with `--names` (name columns after the others) and
/// `--tz`/`--time-format` (`first_seen`).
pub fn write_csv_with(
    words: &Words<'_>,
    findings: &Findings,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    write_csv_header(words, out)?;
    write_csv_rows(words, findings, out)
}

/// The header line of [`write_csv_with`].
pub fn write_csv_header(words: &Words<'_>, out: &mut (dyn Write + Send)) -> io::Result<()> {
    let mut header =
        if words.names.is_some() { header_with_names(&words.labels) } else { header(&words.labels) };
    if words.why.is_some() {
        header.extend(csv_columns::WHY.iter().map(|c| c.name.to_string()));
    }
    header.extend(iface_columns(&words.labels));
    let mut line = Vec::new();
    record_into(&mut line, &header);
    out.write_all(&line)
}

/// One record appended to `out`, byte for byte what `csv::Writer` with its
/// defaults writes (`QuoteStyle::Necessary`: a field holding `,`, `"`, `\r`
/// or `\n` is quoted and its `"` doubled; `\n` ends a record; a record of
/// one empty field is written `""`), without its per-field state machine
/// and second buffer: the rows are most of a CSV report's time.
pub fn record_into<S: AsRef<str>>(out: &mut Vec<u8>, cells: &[S]) {
    // Room for the row unquoted, once (most rows need no more).
    out.reserve(cells.iter().map(|c| c.as_ref().len()).sum::<usize>() + cells.len() + 2);
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let field = cell.as_ref().as_bytes();
        if !field.is_empty() {
            field_into(out, field);
        }
    }
    if let [only] = cells {
        if only.as_ref().is_empty() {
            out.extend_from_slice(b"\"\"");
        }
    }
    out.push(b'\n');
}

/// The field holds `,`, `"`, `\r` or `\n`: eight bytes a step (a byte
/// equal to `b` makes `x = word ^ b` have a zero byte, which
/// `(x - 0x01..) & !x & 0x80..` detects exactly), the rest one by one.
fn quoted(field: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has = |w: u64, b: u8| {
        let x = w ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let mut words = field.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if has(w, b',') | has(w, b'"') | has(w, b'\r') | has(w, b'\n') != 0 {
            return true;
        }
    }
    words.remainder().iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

/// One field, quoted when it holds a byte that needs it.
#[inline]
fn field_into(out: &mut Vec<u8>, field: &[u8]) {
    if !quoted(field) {
        out.extend_from_slice(field);
        return;
    }
    out.push(b'"');
    for (j, part) in field.split(|&b| b == b'"').enumerate() {
        if j > 0 {
            out.extend_from_slice(b"\"\"");
        }
        out.extend_from_slice(part);
    }
    out.push(b'"');
}

/// The rows of [`write_csv_with`], one a request.
pub fn write_csv_rows(
    words: &Words<'_>,
    findings: &Findings,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    // Rows are independent: each task appends its rows to its own buffer.
    crate::report::write_parallel(&findings.requests, out, |requests, buf| {
        let mut cells = Vec::new();
        let mut wire: Option<wire::Request> = None;
        for r in requests {
            let q = match &mut wire {
                Some(q) => {
                    to_wire::request_cells_into(words, r, q);
                    q
                }
                None => wire.insert(to_wire::request(words, r)),
            };
            row_into(words, r, q, &mut cells);
            record_into(buf, &cells);
        }
        Ok(())
    })
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
        assert_eq!(h.len(), 5 + 6 + 38);
        assert_eq!(&h[5..11], ["a_client", "a_server", "a_reply", "b_client", "b_server", "b_reply"]);
        assert_eq!(h[11], "source_changed_at");
        assert_eq!(h[25], "explanation");
        assert_eq!(
            &h[26..],
            [
                "source_change_kind",
                "destination_change_kind",
                "reply_bypassed",
                "reply_reached",
                "data_stopped",
                "path_mtu",
                "reply_lost_cause",
                "reply_unexpected_source",
                "earlier_attempts",
                "identity",
                "identity_preserved",
                "identity_client_set",
                "blind",
                "apart",
                "app",
                "app_at",
                "app_host",
                "app_detail",
                "app_status",
                "exchanges",
                "exchange_unanswered",
                "exchange_worst_status",
                "exchange_slowest"
            ]
        );
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
        assert_eq!((&r[29], &r[30], &r[31], &r[32]), ("snat", "", "", "backend")); // kinds, bypassed, reached
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
        assert_eq!(&r[35], "3/1 by 198.19.3.1 at backend", "the ICMP error about the reply, last column");
        assert_eq!(&rows()[0][35], "", "empty without one");
        assert_eq!(&r[36], "198.19.96.10:8080 syn-ack at decap", "a reply from elsewhere");
        assert_eq!(&rows()[0][36], "");
        assert_eq!(&r[37], "", "no earlier attempt: empty");
    }

    #[test]
    fn earlier_attempts_follow_the_reply_cells() {
        let r = &rows()[0];
        assert_eq!(r.len(), 52);
        assert_eq!(
            &r[37],
            "198.19.3.17:40111->198.19.96.10:80 @2026-11-29T23:40:37.123656789Z bare-ack at backend"
        );
    }

    #[test]
    fn blind_captures_are_the_last_fixed_column_in_path_order() {
        assert_eq!(&rows()[0][41], "", "every capture recorded: empty");
        let mut f = findings();
        f.requests[2].blind = vec![1, 2];
        let mut out = Vec::new();
        write_csv(&f, &mut out).unwrap();
        let rows: Vec<csv::StringRecord> =
            csv::Reader::from_reader(out.as_slice()).records().map(|r| r.unwrap()).collect();
        assert_eq!(&rows[2][41], "egress;backend");
    }

    #[test]
    fn identity_cells_are_the_last_fixed_columns_and_empty_without_a_carrier() {
        use crate::report::fixtures::{proxied_identity, spoofed_identity};
        assert_eq!((&rows()[0][38], &rows()[0][39], &rows()[0][40]), ("", "", ""));
        let mut f = findings();
        f.requests[0].identity = Some(Box::new(proxied_identity()));
        f.requests[1].identity = Some(Box::new(spoofed_identity()));
        let mut lost = proxied_identity();
        (lost.carried, lost.added, lost.preserved) = (None, None, false);
        f.requests[2].identity = Some(Box::new(lost));
        let mut out = Vec::new();
        write_csv(&f, &mut out).unwrap();
        let rows: Vec<_> = csv::Reader::from_reader(out.as_slice()).records().map(|r| r.unwrap()).collect();
        assert_eq!(
            (&rows[0][38], &rows[0][39], &rows[0][40]),
            ("proxy-v1 198.18.90.42:51514 added egress->backend", "yes", "")
        );
        assert_eq!(
            (&rows[1][38], &rows[1][39], &rows[1][40]),
            ("x-forwarded-for 203.0.113.9 added client-side", "no", "203.0.113.9")
        );
        assert_eq!((&rows[2][38], &rows[2][39]), ("none", "no"));
    }

    #[test]
    fn strengths_join_per_boundary_in_path_order() {
        let r = &rows()[3];
        assert_eq!(&r[26], "ambiguous;weak");
        assert_eq!(&r[27], "client-fingerprint+time;ports+time");
    }

    #[test]
    fn data_stopped_and_path_mtu_follow_the_reached_cell() {
        let mut out = Vec::new();
        write_csv(&crate::report::fixtures::black_hole(), &mut out).unwrap();
        let rows: Vec<_> = csv::Reader::from_reader(out.as_slice()).records().map(|r| r.unwrap()).collect();
        assert_eq!((&rows[0][22], &rows[0][33], &rows[0][34]), ("data-stopped", "egress->backend", "1100"));
        assert_eq!((&rows[1][33], &rows[1][34]), ("", ""), "nothing to say without data findings");
    }

    /// What `csv::Writer` with its defaults writes for these records.
    fn by_the_csv_crate(records: &[Vec<String>]) -> Vec<u8> {
        let mut w = csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
        records.iter().for_each(|r| w.write_record(r).unwrap());
        w.into_inner().unwrap()
    }

    #[test]
    fn records_are_written_byte_for_byte_as_the_csv_crate_writes_them() {
        let cells = [
            "",
            "a",
            ",",
            "\"",
            "a\"b",
            "\"\"",
            "x\ry",
            "x\ny",
            "\r\n",
            " lead",
            "tail ",
            "'=1",
            "é;+",
            "a,b\"c\nd",
        ];
        let mut records: Vec<Vec<String>> = vec![vec![String::new()], vec![String::new(), String::new()]];
        records.extend(cells.iter().map(|c| vec![c.to_string()]));
        for (i, a) in cells.iter().enumerate() {
            for b in &cells[i..] {
                records.push(vec![a.to_string(), b.to_string(), String::new()]);
            }
        }
        let mut ours = Vec::new();
        records.iter().for_each(|r| record_into(&mut ours, r));
        assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(by_the_csv_crate(&records)).unwrap());
    }

    proptest::proptest! {
        #[test]
        fn any_record_is_written_as_the_csv_crate_writes_it(
            records in proptest::collection::vec(
                proptest::collection::vec("[a-c,\"\r\n ;é]{0,6}|[a-z0-9.:;>-]{0,30}[,\"\r\n]?[a-z0-9 ]{0,12}", 1..5), 1..6)
        ) {
            let mut ours = Vec::new();
            records.iter().for_each(|r| record_into(&mut ours, r));
            proptest::prop_assert_eq!(ours, by_the_csv_crate(&records));
        }
    }
}
