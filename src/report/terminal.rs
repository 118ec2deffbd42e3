//! The table on a terminal, fitted to its width (issues 35 and 55). Takes
//! `Findings`, the words, the columns and the width; gives text lines no
//! wider than the width when the findings allow it. Used only when standard
//! output is a terminal (or `TUPLECORR_TERM_WIDTH` says to act as one);
//! piped output is the full table of `table.rs`.
//!
//! Without `--columns` the columns are compact: `#`, (the time with `--tz`),
//! `client` (the client's endpoint at the first point that saw the request,
//! the CSV's `client`), `service`, `source` (where the source changed,
//! before → after; destination changes too, marked `dst`), `reply`,
//! `outcome`. With `--columns` they are the columns asked for.
//!
//! **An address is never cut**, nor a port: an endpoint is a word, and a
//! word is never broken. To fit, in this order:
//!
//! 1. names (`--names`, or the name a request asked for) are shortened in
//!    the middle, then left out, and a line under the table says so;
//! 2. a cell wraps between its words (a change between its boundary, its
//!    before and its `→ after`; each change on a line of its own);
//! 3. whole columns move onto the lines below each request, indented, as
//!    `outcome: …` (compact: the outcome, then the reply, the time, the
//!    source, the service; with `--columns`: the outcome, the identity, the
//!    source, the match, the reply, the time, the protocol, the service,
//!    then the later points, the last first). The number and the client (with
//!    `--columns`, the first point's column) never move.
//!
//! Of the layouts these steps give, the one with the fewest lines is written
//! (then the one that moves the fewest columns, then the roomiest names).

use crate::report::table::{
    arrow_between, change_lines, endpoint_cell, hop_cells, identity_cell, match_style, match_text,
    outcome_style, outcome_text, paint, reply_style, reply_text, service_cell, time_cell, title, Column, Fit,
    Style, FITS,
};
use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Findings, Request};
use std::io::{self, Write};

/// Gap between columns.
const GAP: usize = 2;

/// Between consecutive capture points on a request's first line (and the header).
const ARROW: &str = "  →  ";

/// Fewest characters the outcome column of a live table keeps (`completed`)
/// before every outcome moves below its request.
const MIN_OUTCOME: usize = 9;

/// What separates a column's title from its text below a request.
const LEAD: &str = ": ";

/// A cell: paragraphs (forced line breaks) of words (never broken).
#[derive(Clone, Debug, PartialEq, Eq)]
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

    /// Its widest word.
    fn longest_word(&self) -> usize {
        self.paragraphs.iter().flatten().map(|w| w.chars().count()).max().unwrap_or(0)
    }

    /// Its lines wrapped at `width` (a word wider than it stands alone).
    fn lines(&self, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.paragraphs {
            let mut line = String::new();
            let mut used = 0;
            for word in p {
                let n = word.chars().count();
                if used > 0 && used + 1 + n > width {
                    out.push(std::mem::take(&mut line));
                    used = 0;
                }
                if used > 0 {
                    line.push(' ');
                    used += 1;
                }
                line.push_str(word);
                used += n;
            }
            out.push(line);
        }
        out
    }
}

/// What a column of a fitted table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    /// A column of the table (`--columns`; the compact columns are some of them).
    Column(Column),
    /// The client's endpoint at the first point that saw the request (the CSV's `client`).
    Client,
}

/// A column of a fitted table.
#[derive(Clone, Debug)]
struct Spec {
    field: Field,
    title: String,
    /// When it moves below its request (lower first); None: never.
    yields: Option<u8>,
}

impl Spec {
    fn is(&self, c: Column) -> bool {
        self.field == Field::Column(c)
    }
}

/// The compact columns (without `--columns`); `with_time`: the time after the number (`--tz`).
fn compact(with_time: bool) -> Vec<Spec> {
    let spec =
        |field: Field, title: &str, yields: Option<u8>| Spec { field, title: title.to_string(), yields };
    [
        Some(spec(Field::Column(Column::Request), "#", None)),
        with_time.then(|| spec(Field::Column(Column::Time), "time", Some(2))),
        Some(spec(Field::Client, "client", None)),
        Some(spec(Field::Column(Column::Service), "service", Some(4))),
        Some(spec(Field::Column(Column::Source), "source", Some(3))),
        Some(spec(Field::Column(Column::Reply), "reply", Some(1))),
        Some(spec(Field::Column(Column::Outcome), "outcome", Some(0))),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The columns of `--columns` (expanded: a column per point); the first
/// point's column shows the client and never moves. A list without a point
/// gets the client after the number (the client is always shown).
fn asked(w: &Words<'_>, columns: &[Column]) -> Vec<Spec> {
    let first_point = columns.iter().position(|c| matches!(c, Column::Hop(_)));
    let mut specs: Vec<Spec> = (columns.iter().enumerate())
        .map(|(i, &c)| Spec {
            field: Field::Column(c),
            title: title(w, c).to_string(),
            yields: match c {
                Column::Request => None,
                Column::Hop(_) if Some(i) == first_point => None,
                Column::Outcome => Some(0),
                Column::Identity => Some(1),
                Column::Source => Some(2),
                Column::Match => Some(3),
                Column::Reply => Some(4),
                Column::Time => Some(5),
                Column::Proto => Some(6),
                Column::Service => Some(7),
                Column::Hop(_) | Column::Hops | Column::Label(_) => Some(8),
            },
        })
        .collect();
    if first_point.is_none() {
        let at = columns.iter().position(|c| *c == Column::Request).map_or(0, |i| i + 1);
        specs.insert(at, Spec { field: Field::Client, title: "client".to_string(), yields: None });
    }
    specs
}

/// One request's cells at fit `fit`.
fn cells(w: &Words<'_>, r: &Request, specs: &[Spec], fit: Fit) -> Vec<Cell> {
    let hops: Vec<(String, Style)> = if specs.iter().any(|s| matches!(s.field, Field::Column(Column::Hop(_))))
    {
        hop_cells(w, r, w.labels.len(), fit).collect()
    } else {
        Vec::new()
    };
    let text = |text: String, style: Style| Cell::words(&[text], style);
    specs
        .iter()
        .map(|s| match s.field {
            Field::Client => {
                let first = r.captures.iter().find(|h| h.seen);
                let client = match first.map(|h| h.client) {
                    Some(Some(c)) => endpoint_cell(w, c, fit),
                    Some(None) => "?".to_string(),
                    None => "-".to_string(),
                };
                text(client, Style::Plain)
            }
            Field::Column(c) => match c {
                Column::Request => Cell::one(r.request.to_string(), Style::Plain),
                Column::Proto => Cell::one(r.proto.wire().to_string(), Style::Plain),
                Column::Service => text(service_cell(w, r, fit), Style::Plain),
                Column::Time => text(time_cell(w, r), Style::Plain),
                Column::Hop(i) => {
                    let (cell, style) = hops.get(i).cloned().unwrap_or_else(|| ("-".into(), Style::Plain));
                    text(cell, style)
                }
                Column::Source => {
                    let lines = change_lines(w, r, fit);
                    if lines.is_empty() {
                        Cell::one("-".into(), Style::Plain)
                    } else {
                        Cell::words(&lines, Style::Warn)
                    }
                }
                Column::Reply => text(reply_text(w, r), reply_style(r)),
                Column::Outcome => text(outcome_text(w, r), outcome_style(r)),
                Column::Match | Column::Hops => Cell::one(match_text(r).to_string(), match_style(r)),
                Column::Identity => {
                    let (cell, style) = identity_cell(w, r);
                    text(cell, style)
                }
                // expanded before (`expand`): never a cell of its own
                Column::Label(_) => Cell::one("-".into(), Style::Plain),
            },
        })
        .collect()
}

/// The widths chosen for one fit: each column's, 0 for a column below its
/// request on every row.
#[derive(Clone, Debug)]
struct Layout {
    widths: Vec<usize>,
}

impl Layout {
    /// The columns on the requests' lines, in order.
    fn inline(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.widths.len()).filter(|i| self.widths[*i] > 0)
    }

    /// Where the lines below a request begin: under the column after the number.
    fn indent(&self, specs: &[Spec]) -> usize {
        match self.inline().next() {
            Some(i) if specs[i].is(Column::Request) => self.widths[i] + GAP,
            _ => 2 * GAP,
        }
    }
}

/// Characters between columns `a` and `b` on a line.
fn separator(specs: &[Spec], a: usize, b: usize) -> usize {
    match (specs[a].field, specs[b].field) {
        (Field::Column(x), Field::Column(y)) if arrow_between(x, y) => ARROW.chars().count(),
        _ => GAP,
    }
}

/// A cell as a layout sees it: its paragraphs' word widths.
type Widths = Vec<Vec<usize>>;

/// Distinct rows as a layout sees them (each cell's [`Widths`]), with how
/// many requests have each: a run's requests mostly look alike.
struct Shapes {
    rows: Vec<(Vec<Widths>, usize)>,
}

impl Shapes {
    fn of(rows: &[Vec<Cell>]) -> Shapes {
        let mut seen: std::collections::HashMap<Vec<Widths>, usize> = std::collections::HashMap::new();
        for row in rows {
            let shape = row
                .iter()
                .map(|c| c.paragraphs.iter().map(|p| p.iter().map(|w| w.chars().count()).collect()).collect())
                .collect();
            *seen.entry(shape).or_default() += 1;
        }
        let mut rows: Vec<(Vec<Widths>, usize)> = seen.into_iter().collect();
        // an order that does not depend on the hash
        rows.sort_unstable();
        Shapes { rows }
    }
}

/// Lines of a cell wrapped at `width` (a word wider than it stands alone).
fn line_count(cell: &Widths, width: usize) -> usize {
    let mut count = 0;
    for p in cell {
        let mut used = 0;
        for &n in p {
            if used > 0 && used + 1 + n > width {
                count += 1;
                used = 0;
            }
            used += n + usize::from(used > 0);
        }
        count += 1;
    }
    count
}

/// The least width above `width` at which the cell's lines change, if any.
fn next_break(cell: &Widths, width: usize) -> Option<usize> {
    let mut next: Option<usize> = None;
    for p in cell {
        let mut used = 0;
        for &n in p {
            if used > 0 && used + 1 + n > width {
                let at = used + 1 + n;
                next = Some(next.map_or(at, |x| x.min(at)));
                used = 0;
            }
            used += n + usize::from(used > 0);
        }
    }
    next
}

fn cell_natural(cell: &Widths) -> usize {
    cell.iter().map(|p| p.iter().sum::<usize>() + p.len().saturating_sub(1)).max().unwrap_or(0)
}

fn cell_longest(cell: &Widths) -> usize {
    cell.iter().flatten().copied().max().unwrap_or(0)
}

/// Each column's width on one line (`natural`: its widest paragraph) and its
/// least (its widest word), at least its title's.
fn measure(shapes: &Shapes, specs: &[Spec]) -> (Vec<usize>, Vec<usize>) {
    let title = |i: usize| specs[i].title.chars().count();
    let over = |i: usize, f: fn(&Widths) -> usize| {
        shapes.rows.iter().map(|(r, _)| f(&r[i])).fold(title(i), usize::max)
    };
    let natural = (0..specs.len()).map(|i| over(i, cell_natural)).collect();
    let least = (0..specs.len()).map(|i| over(i, cell_longest)).collect();
    (natural, least)
}

/// The columns that may move below their request, in the order they do.
fn give_way(specs: &[Spec]) -> Vec<usize> {
    // one column stays on the line whatever it is
    let stays = (0..specs.len()).find(|i| specs[*i].yields.is_none()).unwrap_or(0);
    let mut order: Vec<usize> =
        (0..specs.len()).filter(|i| *i != stays && specs[*i].yields.is_some()).collect();
    // the same rank: the rightmost first (the later points)
    order.sort_by_key(|i| (specs[*i].yields, std::cmp::Reverse(*i)));
    order
}

/// Characters the columns not `below` need on a line, each as wide as its widest word.
fn need(least: &[usize], specs: &[Spec], below: &[usize]) -> usize {
    let inline: Vec<usize> = (0..specs.len()).filter(|i| !below.contains(i)).collect();
    let gaps: usize = inline.windows(2).map(|p| separator(specs, p[0], p[1])).sum();
    inline.iter().map(|i| least[*i]).sum::<usize>() + gaps
}

/// The layout with the columns `below` moved below every request: each
/// column on the line as wide as its widest word, then, while there is room,
/// the column whose widening saves the most lines per character widened
/// (the leftmost of equals), up to its widest paragraph.
fn layout(
    shapes: &Shapes,
    (natural, least): (&[usize], &[usize]),
    specs: &[Spec],
    below: &[usize],
    width: usize,
) -> Layout {
    let mut widths = vec![0; specs.len()];
    for i in (0..specs.len()).filter(|i| !below.contains(i)) {
        widths[i] = least[i];
    }
    let mut room = width.saturating_sub(need(least, specs, below));
    let mut l = Layout { widths };
    // lines taken, and lines of every cell on the requests' lines (to break ties)
    let cost = |l: &Layout| -> (usize, usize) {
        let mut cells = 0;
        let h = shapes
            .rows
            .iter()
            .map(|(row, n)| {
                let mut tall = 1;
                for (i, cell) in row.iter().enumerate().filter(|(i, _)| l.widths[*i] > 0) {
                    let c = line_count(cell, l.widths[i]);
                    cells += c * n;
                    tall = tall.max(c);
                }
                tall * n
            })
            .sum();
        (h, cells)
    };
    let mut now = cost(&l);
    while room > 0 {
        let mut best: Option<Widen> = None;
        for i in l.inline().filter(|i| l.widths[*i] < natural[*i]).collect::<Vec<_>>() {
            let limit = natural[i].min(l.widths[i] + room);
            // the next width at which the column's lines change
            let Some(to) = (shapes.rows.iter())
                .filter_map(|(row, _)| next_break(&row[i], l.widths[i]))
                .min()
                .map(|w| w.min(natural[i]))
                .filter(|w| *w <= limit)
            else {
                continue;
            };
            let mut wider = l.clone();
            wider.widths[i] = to;
            let then = cost(&wider);
            let step = Widen {
                column: i,
                to,
                spent: to - l.widths[i],
                saved: (now.0.saturating_sub(then.0), now.1.saturating_sub(then.1)),
                then,
            };
            if best.as_ref().is_none_or(|b| step.better_than(b)) {
                best = Some(step);
            }
        }
        let Some(step) = best else { break };
        room -= step.spent;
        l.widths[step.column] = step.to;
        now = step.then;
    }
    l
}

/// One column widened to its next break (see [`layout`]).
struct Widen {
    column: usize,
    to: usize,
    /// Characters it takes.
    spent: usize,
    /// Lines it saves: of the requests, of their cells.
    saved: (usize, usize),
    /// Lines after it: of the requests, of their cells.
    then: (usize, usize),
}

impl Widen {
    /// Saves more lines per character (of the requests, then of their cells).
    fn better_than(&self, other: &Widen) -> bool {
        let per = |a: usize, b: usize| (a * other.spent).cmp(&(b * self.spent));
        per(self.saved.0, other.saved.0).then(per(self.saved.1, other.saved.1)).is_gt()
    }
}

/// True when a cell of column `i` goes below its request in layout `l`
/// (`longest`: its widest word): its column is below, or a word of it is
/// wider than its column (a live table's fixed widths). The number never
/// goes below.
fn is_below(specs: &[Spec], l: &Layout, i: usize, longest: usize) -> bool {
    l.widths[i] == 0 || (longest > l.widths[i] && !specs[i].is(Column::Request))
}

/// Room for the text of a column below a request.
fn below_room(specs: &[Spec], l: &Layout, i: usize, width: usize) -> usize {
    let lead = specs[i].title.chars().count() + LEAD.len();
    width.saturating_sub(l.indent(specs) + lead).max(1)
}

/// Lines the requests take in layout `l`.
fn height(shapes: &Shapes, specs: &[Spec], l: &Layout, width: usize) -> usize {
    (shapes.rows.iter())
        .map(|(row, n)| {
            let (mut tall, mut below) = (1, 0);
            for (i, cell) in row.iter().enumerate() {
                if is_below(specs, l, i, cell_longest(cell)) {
                    below += line_count(cell, below_room(specs, l, i, width));
                } else {
                    tall = tall.max(line_count(cell, l.widths[i]));
                }
            }
            (tall + below) * n
        })
        .sum()
}

/// The requests' rows at the fit and layout with the fewest lines (see the
/// module's documentation), and the fit when it shortened or left out names.
fn choose(
    w: &Words<'_>,
    findings: &Findings,
    specs: &[Spec],
    width: usize,
) -> (Vec<Vec<Cell>>, Layout, Option<Fit>) {
    let order = give_way(specs);
    // the rows at the roomiest fit, at the fit before, and the best so far
    let mut first: Option<Vec<Vec<Cell>>> = None;
    let mut previous: Option<Vec<Vec<Cell>>> = None;
    let mut best: Option<Chosen> = None;
    for (f, &fit) in FITS.iter().enumerate() {
        let rows: Vec<Vec<Cell>> = findings.requests.iter().map(|r| cells(w, r, specs, fit)).collect();
        if previous.as_ref().is_some_and(|p| *p == rows) {
            // no name shortened more than at the fit before
            continue;
        }
        let shapes = Shapes::of(&rows);
        let (natural, least) = measure(&shapes, specs);
        let fewest =
            (0..=order.len()).find(|k| need(&least, specs, &order[..*k]) <= width).unwrap_or(order.len());
        // moving one or two columns more may take fewer lines (an outcome wrapped in a narrow column)
        for k in fewest..=(fewest + 2).min(order.len()) {
            let layout = layout(&shapes, (&natural, &least), specs, &order[..k], width);
            let key = (height(&shapes, specs, &layout, width), k, f);
            if best.as_ref().is_none_or(|b| key < b.key) {
                best = Some(Chosen { key, layout, rows: rows.clone() });
            }
        }
        if f == 0 {
            first = Some(rows.clone());
        }
        previous = Some(rows);
        // one line per request, no column below: nothing fits better
        if best.as_ref().is_some_and(|b| b.key.0 == findings.requests.len() && b.key.1 == 0) {
            break;
        }
    }
    let Chosen { key, layout, rows } = best.expect("a layout at the first fit");
    let cut = (key.2 > 0 && first.is_some_and(|r| r != rows)).then_some(FITS[key.2]);
    (rows, layout, cut)
}

/// A layout [`choose`] keeps: its key (lines, columns below, fit), its
/// widths and the rows at its fit.
struct Chosen {
    key: (usize, usize, usize),
    layout: Layout,
    rows: Vec<Vec<Cell>>,
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
    write_specs(w, findings, &compact(with_time), width, color, out)
}

/// The columns of `--columns` (expanded: a column per point), fitted to
/// `width` as the compact ones are.
pub fn write_columns(
    w: &Words<'_>,
    findings: &Findings,
    columns: &[Column],
    width: usize,
    color: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    write_specs(w, findings, &asked(w, columns), width, color, out)
}

fn write_specs(
    w: &Words<'_>,
    findings: &Findings,
    specs: &[Spec],
    width: usize,
    color: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let (rows, l, cut) = choose(w, findings, specs, width);
    let mut text = render(&rows, specs, &l, width, color, true);
    if let Some(fit) = cut {
        let what = if fit.name == 0 { "left out" } else { "shortened" };
        let note = format!("(names {what} to fit {width} columns; CSV, JSON and piped output have them)\n");
        text.push_str(&wrap_lines(&note, width));
    }
    out.write_all(text.as_bytes())
}

/// The lines of `rows` in layout `l` (the header first when `header`).
fn render(rows: &[Vec<Cell>], specs: &[Spec], l: &Layout, width: usize, color: bool, header: bool) -> String {
    let mut text = String::new();
    let inline: Vec<usize> = l.inline().collect();
    if header {
        let cells: Vec<(String, Style)> =
            inline.iter().map(|i| (specs[*i].title.clone(), Style::Bold)).collect();
        line(&mut text, &cells, specs, &inline, &l.widths, color, true);
    }
    let indent = l.indent(specs);
    for row in rows {
        let mut below: Vec<usize> = Vec::new();
        let wrapped: Vec<Vec<String>> = inline
            .iter()
            .map(|&i| {
                if is_below(specs, l, i, row[i].longest_word()) {
                    below.push(i);
                    Vec::new()
                } else {
                    row[i].lines(l.widths[i])
                }
            })
            .collect();
        let tall = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for k in 0..tall {
            let cells: Vec<(String, Style)> = (inline.iter().zip(&wrapped))
                .map(|(i, lines)| (lines.get(k).cloned().unwrap_or_default(), row[*i].style))
                .collect();
            line(&mut text, &cells, specs, &inline, &l.widths, color, k == 0);
        }
        // below the request, in the columns' order
        for i in (0..specs.len()).filter(|i| l.widths[*i] == 0 || below.contains(i)) {
            let lead = format!("{}{LEAD}", specs[i].title);
            for (k, b) in row[i].lines(below_room(specs, l, i, width)).iter().enumerate() {
                text.extend(std::iter::repeat_n(' ', indent));
                if k == 0 {
                    text.push_str(&lead);
                } else {
                    text.extend(std::iter::repeat_n(' ', lead.chars().count()));
                }
                text.push_str(&paint(b, row[i].style, color));
                text.push('\n');
            }
        }
    }
    text
}

/// Widths of a live table's `#`, `client`, `service` and `reply` columns.
const LIVE_FIXED: [usize; 4] = [5, 23, 22, 10];

/// A live table's rows (`--follow --format table`): the compact columns at
/// widths fixed for `width` (a request is written as its window settles, so
/// no width can wait for the requests after it), the header first when
/// `header`. Each request takes the roomiest fit whose cells fit their
/// columns; a cell wraps as on a terminal, and a cell with a word wider than
/// its column (a long address) goes below its request, whole.
pub fn write_live(
    w: &Words<'_>,
    findings: &Findings,
    width: usize,
    header: bool,
    color: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let specs = compact(false);
    let [number, client, service, reply] = LIVE_FIXED;
    let rest = width.saturating_sub(number + client + service + reply + GAP * 5);
    // the outcome gets half of the rest while the source keeps 24; else it goes below
    let outcome = (rest / 2).max(MIN_OUTCOME);
    let (source, outcome) = if rest >= outcome + 24 { (rest - outcome, outcome) } else { (rest + GAP, 0) };
    let l = Layout { widths: vec![number, client, service, source, reply, outcome] };
    let rows: Vec<Vec<Cell>> = (findings.requests.iter())
        .map(|r| {
            // the service on one line, every word within its column
            let fits = |cells: &Vec<Cell>| {
                cells[2].lines(service).len() == 1
                    && cells.iter().zip(&l.widths).all(|(c, w)| *w == 0 || c.longest_word() <= *w)
            };
            FITS.iter()
                .map(|&fit| cells(w, r, &specs, fit))
                .find(fits)
                .unwrap_or_else(|| cells(w, r, &specs, FITS[FITS.len() - 1]))
        })
        .collect();
    out.write_all(render(&rows, &specs, &l, width, color, header).as_bytes())
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

/// One line of the columns `inline`: cells padded to their widths (`#`
/// right-aligned), the last cell and trailing blanks not padded; `arrows`:
/// an arrow between consecutive points (a request's first line, the header),
/// else blanks as wide.
fn line(
    text: &mut String,
    cells: &[(String, Style)],
    specs: &[Spec],
    inline: &[usize],
    widths: &[usize],
    color: bool,
    arrows: bool,
) {
    let last = cells.iter().rposition(|(t, _)| !t.is_empty()).unwrap_or(0);
    for (k, (cell, style)) in cells.iter().enumerate().take(last + 1) {
        let i = inline[k];
        if k > 0 {
            let gap = separator(specs, inline[k - 1], i);
            if arrows && gap > GAP {
                text.push_str(ARROW);
            } else {
                text.extend(std::iter::repeat_n(' ', gap));
            }
        }
        let pad = widths[i].saturating_sub(cell.chars().count());
        if specs[i].is(Column::Request) {
            text.extend(std::iter::repeat_n(' ', pad));
            text.push_str(&paint(cell, *style, color));
        } else {
            text.push_str(&paint(cell, *style, color));
            if k < last {
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
    use crate::report::table::DEFAULT_COLUMNS;

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

    /// Every endpoint and address a request's cells show, as text.
    fn addresses(f: &Findings) -> Vec<String> {
        use crate::report::endpoint::endpoint_text;
        let mut out = Vec::new();
        for r in &f.requests {
            for h in r.captures.iter().filter(|h| h.seen) {
                out.extend(h.client.into_iter().chain(h.server).map(endpoint_text));
            }
            for c in r.source.iter().chain(&r.destination) {
                out.extend([c.before, c.after].map(endpoint_text));
            }
            out.extend(r.outcome.by.map(|a| a.to_string()));
        }
        out
    }

    /// The client's endpoint of each request (the CSV's `client`).
    fn clients(f: &Findings) -> Vec<String> {
        (f.requests.iter())
            .filter_map(|r| r.captures.iter().find(|h| h.seen).and_then(|h| h.client))
            .map(crate::report::endpoint::endpoint_text)
            .collect()
    }

    /// No `…` touches an address: the characters beside it are no digit,
    /// `.`, `:` or bracket (names are shortened, addresses never).
    fn no_cut_address(t: &str) {
        let chars: Vec<char> = t.chars().collect();
        for (i, c) in chars.iter().enumerate().filter(|(_, c)| **c == '…') {
            for n in [i.checked_sub(1).map(|j| chars[j]), chars.get(i + 1).copied()].into_iter().flatten() {
                assert!(
                    !(n.is_ascii_digit() || matches!(n, '.' | ':' | '[' | ']')),
                    "{c} beside {n:?}:\n{t}"
                );
            }
        }
    }

    fn long_names() -> crate::names::Names {
        let mut names = crate::names::Names::default();
        let text =
            "2001:db8::/32 a-rather-long-ipv6-network-name\n198.18.90.42 backend-vpn-0-in-a-namespace\n";
        names.extend(crate::names::parse(text).unwrap().1);
        names
    }

    #[test]
    fn every_address_is_whole_at_every_width_and_the_client_always_shown() {
        let f = findings();
        let names = long_names();
        for names in [None, Some(&names)] {
            let wide = fitted(300, names);
            let header: Vec<&str> = wide.lines().next().unwrap().split_whitespace().collect();
            assert_eq!(header, ["#", "client", "service", "source", "reply", "outcome"], "{wide}");
            for width in [300, 200, 120, 100, 80, 60, 40] {
                let t = fitted(width, names);
                if width >= 80 {
                    assert!(widest(&t) <= width, "{width}: {}\n{t}", widest(&t));
                }
                for a in addresses(&f) {
                    assert!(t.contains(&a), "{width}: {a} cut or missing\n{t}");
                }
                // each client on its request's first line
                for (r, client) in f.requests.iter().zip(clients(&f)) {
                    let first =
                        t.lines().find(|l| l.split_whitespace().next() == Some(&r.request.to_string()));
                    assert!(first.is_some_and(|l| l.contains(&client)), "{width}: {client}\n{t}");
                }
                no_cut_address(&t);
                if names.is_none() {
                    assert!(!t.contains('…'), "{width}:\n{t}");
                }
                assert!(t.contains("icmp-error") && t.contains("3/13"), "{t}");
            }
        }
    }

    #[test]
    fn columns_give_way_below_the_request_and_names_are_left_out_with_a_note() {
        // at 80 the outcome, then the reply, then the source move below, whole
        let t = fitted(80, None);
        assert!(t.lines().any(|l| l.trim_start().starts_with("outcome: ")), "{t}");
        assert!(
            t.contains("[2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]")
                || t.contains("2001:db8:aaaa:bbbb:cccc:dddd:eeee:1")
        );
        // names go before any column moves: none left at 80, and a line says so
        let names = long_names();
        let t = fitted(80, Some(&names));
        assert!(
            t.ends_with("(names left out to fit 80 columns; CSV, JSON and piped output have them)\n"),
            "{t}"
        );
        let roomy = fitted(400, Some(&names));
        assert!(roomy.contains("backend-vpn-0-in-a-namespace (198.18.90.42:51514)"), "{roomy}");
        assert!(!roomy.contains("(names"), "{roomy}");
    }

    #[test]
    fn with_columns_every_address_is_whole_and_later_points_give_way() {
        use crate::report::table::{expand, ALL_COLUMNS};
        let f = findings();
        let names = long_names();
        let table = |width: usize, columns: &[Column], names: Option<&crate::names::Names>| {
            let w = Words { names, ..Words::new(&f) };
            let mut out = Vec::new();
            write_columns(&w, &f, &expand(columns, &w.labels), width, false, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let points = [Column::Request, Column::Hops, Column::Reply, Column::Outcome];
        let no_point = [Column::Request, Column::Service, Column::Outcome];
        for columns in [&ALL_COLUMNS[..], &points[..], &no_point[..]] {
            for width in [200, 120, 100, 80] {
                for names in [None, Some(&names)] {
                    let t = table(width, columns, names);
                    assert!(widest(&t) <= width, "{width}: {}\n{t}", widest(&t));
                    for client in clients(&f) {
                        assert!(t.contains(&client), "{width} {columns:?}: {client}\n{t}");
                    }
                    no_cut_address(&t);
                }
            }
        }
        // the points side by side while they fit; the last moves below first
        let t = table(80, &points, None);
        assert!(t.lines().next().unwrap().starts_with("#  decap"), "{t}");
        assert!(t.lines().any(|l| l.trim_start().starts_with("backend: ")), "{t}");
        assert!(
            t.contains("[2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]")
                || t.contains("2001:db8:aaaa:bbbb:cccc:dddd:eeee:1"),
            "{t}"
        );
        // without a point the client is added after the number
        let t = table(120, &no_point, None);
        let header: Vec<&str> = t.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(header[..3], ["#", "client", "service"], "{t}");
    }

    #[test]
    fn a_live_table_shows_each_client_whole_at_fixed_widths() {
        let f = findings();
        for width in [80, 120] {
            let w = Words::new(&f);
            let mut out = Vec::new();
            write_live(&w, &f, width, true, false, &mut out).unwrap();
            let t = String::from_utf8(out).unwrap();
            assert!(t.lines().next().unwrap().trim_start().starts_with("#  client"), "{t}");
            assert!(widest(&t) <= width, "{width}: {}\n{t}", widest(&t));
            for a in addresses(&f) {
                assert!(t.contains(&a), "{width}: {a} cut or missing\n{t}");
            }
            assert!(!t.contains('…'), "{t}");
        }
    }

    /// The table of the fixture findings as a terminal `width` wide (or piped,
    /// without one) would show it, with `columns` and `names`.
    fn table_in(width: Option<usize>, columns: &[Column], names: Option<&crate::names::Names>) -> String {
        let f = crate::report::fixtures::findings();
        let w = Words { names, ..Words::new(&f) };
        let mut out = Vec::new();
        match width {
            Some(width) => write_columns(
                &w,
                &f,
                &crate::report::table::expand(columns, &w.labels),
                width,
                false,
                &mut out,
            ),
            None => crate::report::table::write_table_with(&w, &f, columns, false, &mut out),
        }
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_fit_the_terminal_keeping_every_address_whole_and_shortening_names() {
        let mut names = crate::names::Names::default();
        let text = "2001:db8::/32 a-rather-long-ipv6-network-name\n198.18.90.42 backend-vpn-0\n";
        names.extend(crate::names::parse(text).unwrap().1);
        let roomy = table_in(None, &DEFAULT_COLUMNS, Some(&names));
        assert!(widest(&roomy) > 200, "{roomy}");
        let no_outcome = [Column::Request, Column::Hops, Column::Reply, Column::Match];
        let two_points = [Column::Request, Column::Hop(0), Column::Hop(1), Column::Reply];
        for (limit, columns, names) in [(120, &no_outcome[..], None), (80, &two_points[..], Some(&names))] {
            let t = table_in(Some(limit), columns, names);
            assert!(widest(&t) <= limit, "{limit} {}:\n{t}", widest(&t));
            // every endpoint whole, IPv6 too
            assert!(t.contains("198.18.90.42:51514") && t.contains("2001:db8::1"), "{limit}:\n{t}");
        }
        let plain = table_in(None, &DEFAULT_COLUMNS, None);
        assert!(widest(&plain) > 190, "{plain}");
        // 200 columns keep the names, shortened in the middle
        let named = table_in(Some(200), &[Column::Request, Column::Hop(0), Column::Reply], Some(&names));
        assert!(named.contains("backend-vpn-0 (198.18.90.42:51514)"), "{named}");
        let t = table_in(Some(190), &DEFAULT_COLUMNS, None);
        assert!(widest(&t) <= 190, "{t}");
        // the piped table shortens a long IPv6 endpoint as it always did; a terminal never
        assert!(plain.contains("2001:db8:aaaa:…"), "{plain}");
        assert!(t.contains("198.18.90.42:51514") && t.contains("2001:db8:aaaa:bbbb:cccc:dddd:eeee:1"), "{t}");
        assert!(!t.contains('…'), "{t}");
    }
}
