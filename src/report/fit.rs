//! The table on a terminal: columns chosen to fit its width (issue 35).
//! Takes `Findings`, the words and the width; gives text lines no wider than
//! the width when the findings allow it. Used only when standard output is a
//! terminal (or `TUPLECORR_TERM_WIDTH` says to act as one) and `--columns` was
//! not given; piped output is the full table of `table.rs`.
//!
//! The compact columns: `#`, (the time with `--tz`), `service`, `source`
//! (where the source changed, before → after; destination changes too,
//! marked `dst`), `reply`, `outcome`. To fit, in this order:
//!
//! 1. endpoints are shortened as the table's fits do (names, then IPv6
//!    addresses, then IPv4 addresses lose their middle: `198.1…0.42:41010`;
//!    an address keeps at least its first and last characters and its port
//!    is never cut);
//! 2. the `source` cell puts each change on a line of its own and wraps a
//!    change between its words (boundary, before, `→ after`), never inside one;
//! 3. the `outcome` wraps within its column between words; an outcome whose
//!    words do not fit its column is moved onto the lines below the request,
//!    indented, as `outcome: …`.

use crate::report::table::{
    change_lines, outcome_text, paint, reply_text, service_cell, time_cell, Fit, Style, FITS, READABLE_FITS,
};
use crate::report::words::Words;
use crate::verdict::{Findings, Request};
use std::io::{self, Write};

/// Gap between columns.
const GAP: usize = 2;

/// Fewest characters the outcome column keeps (`completed`) before every
/// outcome moves below its request.
const MIN_OUTCOME: usize = 9;

/// What begins an outcome moved below its request.
const OUTCOME_LEAD: &str = "outcome: ";

/// A cell: paragraphs (forced line breaks) of words (never broken).
#[derive(Clone, Debug)]
struct Cell {
    paragraphs: Vec<Vec<String>>,
    style: Style,
}

impl Cell {
    fn one(text: String, style: Style) -> Cell {
        Cell { paragraphs: vec![vec![text]], style }
    }

    /// Text split into words at spaces; `→` stays with the word after it.
    fn words(lines: &[String], style: Style) -> Cell {
        let paragraphs = lines
            .iter()
            .map(|l| {
                let mut words: Vec<String> = Vec::new();
                let mut glue = false;
                for word in l.split(' ').filter(|w| !w.is_empty()) {
                    match words.last_mut() {
                        Some(last) if glue => {
                            last.push(' ');
                            last.push_str(word);
                        }
                        _ => words.push(word.to_string()),
                    }
                    glue = word == "→";
                }
                words
            })
            .collect();
        Cell { paragraphs, style }
    }

    /// Its widest paragraph on one line.
    fn natural(&self) -> usize {
        self.paragraphs.iter().map(|p| joined_width(p)).max().unwrap_or(0)
    }

    /// Its widest word.
    fn longest_word(&self) -> usize {
        self.paragraphs.iter().flatten().map(|w| w.chars().count()).max().unwrap_or(0)
    }

    /// Its lines wrapped at `width` (a word wider than it stands alone).
    fn lines(&self, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.paragraphs {
            let mut line = String::new();
            for word in p {
                let n = word.chars().count();
                if !line.is_empty() && line.chars().count() + 1 + n > width {
                    out.push(std::mem::take(&mut line));
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            out.push(line);
        }
        out
    }
}

fn joined_width(words: &[String]) -> usize {
    words.iter().map(|w| w.chars().count()).sum::<usize>() + words.len().saturating_sub(1)
}

/// What a compact column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compact {
    Request,
    Time,
    Service,
    Source,
    Reply,
    Outcome,
}

impl Compact {
    fn title(self) -> &'static str {
        match self {
            Compact::Request => "#",
            Compact::Time => "time",
            Compact::Service => "service",
            Compact::Source => "source",
            Compact::Reply => "reply",
            Compact::Outcome => "outcome",
        }
    }
}

fn cells(w: &Words<'_>, r: &Request, columns: &[Compact], fit: Fit) -> Vec<Cell> {
    columns
        .iter()
        .map(|c| match c {
            Compact::Request => Cell::one(r.request.to_string(), Style::Plain),
            Compact::Time => Cell::one(time_cell(w, r), Style::Plain),
            Compact::Service => Cell::one(service_cell(w, r, fit), Style::Plain),
            Compact::Source => {
                let lines = change_lines(w, r, fit);
                if lines.is_empty() {
                    Cell::one("-".into(), Style::Plain)
                } else {
                    Cell::words(&lines, Style::Warn)
                }
            }
            Compact::Reply => Cell::one(reply_text(w, r), crate::report::table::reply_style(r)),
            Compact::Outcome => Cell::words(&[outcome_text(w, r)], crate::report::table::outcome_style(r)),
        })
        .collect()
}

/// The widths chosen for one fit: every column's, the outcome's (0: every
/// outcome below its request) and the indent of outcomes moved below.
struct Layout {
    widths: Vec<usize>,
    outcome: usize,
    indent: usize,
}

/// A layout of `rows` within `width`, if there is one; `wrap`: the source
/// column may wrap its changes (else each change keeps its line).
fn layout(rows: &[Vec<Cell>], columns: &[Compact], width: usize, wrap: bool) -> Option<Layout> {
    let col = |c: Compact| columns.iter().position(|x| *x == c).expect("compact column");
    let (source, outcome) = (col(Compact::Source), col(Compact::Outcome));
    let natural: Vec<usize> = (0..columns.len())
        .map(|i| rows.iter().map(|r| r[i].natural()).max().unwrap_or(0).max(columns[i].title().len()))
        .collect();
    let fixed: usize = (0..columns.len()).filter(|i| *i != source && *i != outcome).map(|i| natural[i]).sum();
    let gaps = GAP * (columns.len() - 1);
    let indent = natural[col(Compact::Request)] + GAP;
    let below_min = rows.iter().map(|r| r[outcome].longest_word()).max().unwrap_or(0) + OUTCOME_LEAD.len();
    // room for the source and the outcome (with the outcome's gap: all of it
    // when every outcome moves below)
    let avail = (width + GAP).checked_sub(fixed + gaps)?;
    let source_min = if wrap {
        rows.iter().map(|r| r[source].longest_word()).max().unwrap_or(0).max("source".len())
    } else {
        natural[source]
    };
    let mut widths = natural.clone();
    if natural[source] + GAP + natural[outcome] <= avail {
        return Some(Layout { widths, outcome: natural[outcome], indent });
    }
    // the source as wide as it wants while the outcome keeps its least
    let source_width = natural[source].min(avail.saturating_sub(GAP + MIN_OUTCOME)).max(source_min);
    if source_width > avail {
        return None;
    }
    let rest = avail - source_width;
    let outcome_width = if rest >= GAP + MIN_OUTCOME { (rest - GAP).min(natural[outcome]) } else { 0 };
    let some_below = rows.iter().any(|r| r[outcome].longest_word() > outcome_width);
    if some_below && below_min + indent > width {
        return None;
    }
    widths[source] = source_width;
    widths[outcome] = outcome_width;
    Some(Layout { widths, outcome: outcome_width, indent })
}

/// Lines the requests take in layout `l`.
fn height(rows: &[Vec<Cell>], columns: &[Compact], l: &Layout) -> usize {
    rows.iter()
        .map(|row| {
            let mut below = 0;
            let mut tall = 1;
            for (i, (cell, c)) in row.iter().zip(columns).enumerate() {
                match c {
                    Compact::Outcome if l.outcome == 0 || cell.longest_word() > l.outcome => {
                        below = cell.lines(usize::MAX).len().max(1)
                    }
                    Compact::Outcome => tall = tall.max(cell.lines(l.outcome).len()),
                    Compact::Source => tall = tall.max(cell.lines(l.widths[i]).len()),
                    _ => {}
                }
            }
            tall + below
        })
        .sum()
}

/// The table in its compact columns, fitted to `width` (see the module's
/// documentation); `with_time`: the time column after the number (`--tz`).
pub fn write_fitted(
    w: &Words<'_>,
    findings: &Findings,
    with_time: bool,
    width: usize,
    color: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let columns: Vec<Compact> = [
        Some(Compact::Request),
        with_time.then_some(Compact::Time),
        Some(Compact::Service),
        Some(Compact::Source),
        Some(Compact::Reply),
        Some(Compact::Outcome),
    ]
    .into_iter()
    .flatten()
    .collect();
    // each change on one line at the roomiest readable fit that allows it,
    // else wrapped between its words, and only then the narrowest fit
    let rows_at = |fit: Fit| -> Vec<Vec<Cell>> {
        findings.requests.iter().map(|r| cells(w, r, &columns, fit)).collect()
    };
    let mut chosen = FITS[..READABLE_FITS].iter().find_map(|&fit| {
        let rows = rows_at(fit);
        layout(&rows, &columns, width, false).map(|l| (rows, l))
    });
    if chosen.is_none() {
        // wrapped: the readable fit that needs the fewest lines (the roomiest of equals)
        for &fit in &FITS[..READABLE_FITS] {
            let rows = rows_at(fit);
            if let Some(l) = layout(&rows, &columns, width, true) {
                let lines = height(&rows, &columns, &l);
                if chosen.as_ref().is_none_or(|(r, c)| lines < height(r, &columns, c)) {
                    chosen = Some((rows, l));
                }
            }
        }
    }
    if chosen.is_none() {
        let rows = rows_at(FITS[FITS.len() - 1]);
        chosen = layout(&rows, &columns, width, true).map(|l| (rows, l));
    }
    let (rows, l) = match chosen {
        Some(c) => c,
        // nothing fits (a very narrow terminal): the tightest fit, outcomes below
        None => {
            let fit = FITS[FITS.len() - 1];
            let rows: Vec<Vec<Cell>> = findings.requests.iter().map(|r| cells(w, r, &columns, fit)).collect();
            let mut widths: Vec<usize> = (0..columns.len())
                .map(|i| rows.iter().map(|r| r[i].natural()).max().unwrap_or(0).max(columns[i].title().len()))
                .collect();
            let outcome = columns.len() - 1;
            widths[outcome] = 0;
            let indent = widths[0] + GAP;
            (rows, Layout { widths, outcome: 0, indent })
        }
    };
    out.write_all(render(&rows, &columns, &l, width, color, true).as_bytes())
}

/// The lines of `rows` in layout `l` (the header first when `header`).
fn render(
    rows: &[Vec<Cell>],
    columns: &[Compact],
    l: &Layout,
    width: usize,
    color: bool,
    header: bool,
) -> String {
    let mut text = String::new();
    let shown = if l.outcome == 0 { columns.len() - 1 } else { columns.len() };
    let header_cells: Vec<(String, Style)> =
        columns[..shown].iter().map(|c| (c.title().to_string(), Style::Bold)).collect();
    if header {
        line(&mut text, &header_cells, columns, &l.widths, color);
    }
    for row in rows {
        let mut below = Vec::new();
        let wrapped: Vec<Vec<String>> = row
            .iter()
            .zip(columns)
            .enumerate()
            .map(|(i, (cell, c))| match c {
                Compact::Outcome if l.outcome == 0 || cell.longest_word() > l.outcome => {
                    below = cell.lines(width.saturating_sub(l.indent + OUTCOME_LEAD.len()).max(1));
                    Vec::new()
                }
                Compact::Outcome => cell.lines(l.outcome),
                Compact::Source => cell.lines(l.widths[i]),
                _ => cell.lines(usize::MAX),
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let cells: Vec<(String, Style)> =
                (0..shown).map(|i| (wrapped[i].get(k).cloned().unwrap_or_default(), row[i].style)).collect();
            line(&mut text, &cells, columns, &l.widths, color);
        }
        let style = row[columns.len() - 1].style;
        for (k, b) in below.iter().enumerate() {
            text.extend(std::iter::repeat_n(' ', l.indent));
            if k == 0 {
                text.push_str(OUTCOME_LEAD);
            } else {
                text.extend(std::iter::repeat_n(' ', OUTCOME_LEAD.len()));
            }
            text.push_str(&paint(b, style, color));
            text.push('\n');
        }
    }
    text
}

/// The compact columns of a live table (`--follow --format table`).
const LIVE_COLUMNS: [Compact; 5] =
    [Compact::Request, Compact::Service, Compact::Source, Compact::Reply, Compact::Outcome];

/// Widths of a live table's `#`, `service` and `reply` columns.
const LIVE_FIXED: [usize; 3] = [5, 26, 10];

/// A live table's rows (`--follow --format table`): the compact columns at
/// widths fixed for `width` (a request is written as its window settles, so
/// no width can wait for the requests after it), the header first when
/// `header`. Each request takes the roomiest fit whose service and changes
/// fit their columns; the source and the outcome wrap as on a terminal, and
/// an outcome too long for its column goes below its request.
pub fn write_live(
    w: &Words<'_>,
    findings: &Findings,
    width: usize,
    header: bool,
    color: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let [number, service, reply] = LIVE_FIXED;
    let rest = width.saturating_sub(number + service + reply + GAP * 4);
    // the outcome gets half of the rest while the source keeps 24
    let outcome = (rest / 2).max(MIN_OUTCOME);
    let (source, outcome) = if rest >= outcome + 24 { (rest - outcome, outcome) } else { (rest.max(24), 0) };
    let l = Layout { widths: vec![number, service, source, reply, outcome], outcome, indent: number + GAP };
    let rows: Vec<Vec<Cell>> = (findings.requests.iter())
        .map(|r| {
            let fits = |cells: &Vec<Cell>| cells[1].natural() <= service && cells[2].longest_word() <= source;
            FITS.iter()
                .map(|&fit| cells(w, r, &LIVE_COLUMNS, fit))
                .find(fits)
                .unwrap_or_else(|| cells(w, r, &LIVE_COLUMNS, FITS[FITS.len() - 1]))
        })
        .collect();
    out.write_all(render(&rows, &LIVE_COLUMNS, &l, width, color, header).as_bytes())
}

/// Characters of `text` a terminal shows (ANSI colour codes take none).
fn visible_width(text: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for c in text.chars() {
        match c {
            '\x1b' => escape = true,
            'm' if escape => escape = false,
            _ if escape => {}
            _ => n += 1,
        }
    }
    n
}

/// Text (the summary) with each line wider than `width` wrapped between
/// words, its continuation lines indented 4 more than the line; a word wider
/// than the room stays whole (an endpoint or port is never cut).
pub fn wrap_lines(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if visible_width(body) <= width {
            out.push_str(line);
            continue;
        }
        let lead = body.len() - body.trim_start_matches(' ').len();
        let indent = lead + 4;
        let mut used = 0;
        let mut first = true;
        // each word with the blanks before it (kept inside a line: aligned columns stay aligned)
        let mut rest = body;
        while !rest.is_empty() {
            let spaces = rest.len() - rest.trim_start_matches(' ').len();
            let after = &rest[spaces..];
            let end = after.find(' ').unwrap_or(after.len());
            let word = &after[..end];
            rest = &after[end..];
            if word.is_empty() {
                break;
            }
            let n = visible_width(word);
            if !first && used + spaces + n > width {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
                used = indent;
            } else {
                out.extend(std::iter::repeat_n(' ', spaces));
                used += spaces;
            }
            out.push_str(word);
            used += n;
            first = false;
        }
        out.push_str(end);
    }
    out
}

/// One line: cells padded to their widths (`#` right-aligned), the last
/// cell and trailing blanks not padded.
fn line(text: &mut String, cells: &[(String, Style)], columns: &[Compact], widths: &[usize], color: bool) {
    let last = cells.iter().rposition(|(t, _)| !t.is_empty()).unwrap_or(0);
    for (i, (cell, style)) in cells.iter().enumerate().take(last + 1) {
        if i > 0 {
            text.extend(std::iter::repeat_n(' ', GAP));
        }
        let pad = widths[i].saturating_sub(cell.chars().count());
        if columns[i] == Compact::Request {
            text.extend(std::iter::repeat_n(' ', pad));
            text.push_str(&paint(cell, *style, color));
        } else {
            text.push_str(&paint(cell, *style, color));
            if i < last {
                text.extend(std::iter::repeat_n(' ', pad));
            }
        }
    }
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn fitted(width: usize, names: Option<&crate::names::Names>) -> String {
        let f = findings();
        let w = Words { names, ..Words::new(&f) };
        let mut out = Vec::new();
        write_fitted(&w, &f, false, width, false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn widest(t: &str) -> usize {
        t.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn summary_lines_wrap_between_words_with_a_hanging_indent() {
        let text = "head\n  2 requests: source 198.18.90.42 → 198.19.3.17 between egress and backend\n";
        let t = wrap_lines(text, 40);
        assert_eq!(
            t,
            "head\n  2 requests: source 198.18.90.42 →\n      198.19.3.17 between egress and\n      backend\n"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 40), "{t}");
        // colour codes take no room; a word wider than the room stays whole
        assert_eq!(wrap_lines("\x1b[31mred\x1b[0m ok\n", 6), "\x1b[31mred\x1b[0m ok\n");
        assert_eq!(wrap_lines("a 198.18.90.42:41010\n", 8), "a\n    198.18.90.42:41010\n");
        // blanks inside a line are kept
        assert_eq!(wrap_lines("  a->b    delay 1 ms, TTL -1\n", 18), "  a->b    delay 1\n      ms, TTL -1\n");
    }

    #[test]
    fn words_keep_the_arrow_with_what_follows_and_wrap_between_words() {
        let c = Cell::words(&["a->b 198.18.90.42:1 → 198.19.3.17:2".to_string()], Style::Plain);
        assert_eq!(c.paragraphs[0], ["a->b", "198.18.90.42:1", "→ 198.19.3.17:2"]);
        assert_eq!(c.longest_word(), 15);
        assert_eq!(c.lines(20), ["a->b 198.18.90.42:1", "→ 198.19.3.17:2"]);
        assert_eq!(c.lines(100), ["a->b 198.18.90.42:1 → 198.19.3.17:2"]);
    }

    #[test]
    fn compact_columns_at_wide_and_narrow_widths() {
        let wide = fitted(200, None);
        let first: Vec<&str> = wide.lines().collect();
        assert_eq!(
            first[0].split_whitespace().collect::<Vec<_>>(),
            ["#", "service", "source", "reply", "outcome"]
        );
        assert!(first[1].contains("egress->backend 198.18.90.42:51514 → 198.19.3.17:40112"), "{wide}");
        for width in [120, 80, 60] {
            let t = fitted(width, None);
            assert!(widest(&t) <= width, "{width}: {}\n{t}", widest(&t));
            // every port of the fixture whole, wherever its address was cut
            for port in [":51514", ":40112", ":80"] {
                assert!(t.contains(port), "{width} {port}\n{t}");
            }
            assert!(t.contains("icmp-error") && t.contains("3/13"), "{t}");
        }
        // at 80 the ICMP outcome wraps or moves below, its words whole
        let t = fitted(80, None);
        assert!(t.contains("egress->backend"), "{t}");
    }
}
