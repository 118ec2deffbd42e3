//! Findings → the terminal table: one line per request with the capture points
//! side by side (`#  proto  decap  →  egress  →  backend  reply  outcome  match`).
//! Takes `Findings` and whether to colour; gives text lines. Each hop cell shows
//! the source seen there, plus `→ destination` where the destination differs
//! from capture 1's. Never reads captures; the summary is in `summary.rs`.
//! Its setting, the columns (`--columns`), is `Column`.

use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Findings, OutcomeKind, ReplyPath, Request, Strength};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Longest endpoint shown in a cell before it is shortened in the middle.
pub const MAX_ENDPOINT_CHARS: usize = 28;

/// ANSI styles used by the table and summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Bold,
    Good,
    Warn,
    Bad,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Plain => "",
            Style::Bold => "\x1b[1m",
            Style::Good => "\x1b[32m",
            Style::Warn => "\x1b[33m",
            Style::Bad => "\x1b[31m",
        }
    }
}

/// `text` wrapped in the style's ANSI codes when `color` (and the style has one).
pub fn paint(text: &str, style: Style, color: bool) -> String {
    if !color || style == Style::Plain || text.is_empty() {
        text.to_string()
    } else {
        format!("{}{text}\x1b[0m", style.code())
    }
}

/// Appends `text` wrapped in the style's ANSI codes when `color` (as [`paint`]).
fn push_painted(line: &mut String, text: &str, style: Style, color: bool) {
    if !color || style == Style::Plain || text.is_empty() {
        line.push_str(text);
    } else {
        line.push_str(style.code());
        line.push_str(text);
        line.push_str("\x1b[0m");
    }
}

/// `text` shortened to `max` characters with `…` in the middle.
pub fn middle_ellipsis(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max || max < 3 {
        return text.to_string();
    }
    let head = (max - 1).div_ceil(2);
    let tail = max - 1 - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// An endpoint shortened to `max` characters, keeping its port: for
/// `[2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]:443` only the address part shrinks.
pub fn shorten_endpoint(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    if let Some(rest) = text.strip_prefix('[') {
        if let Some((addr, port)) = rest.split_once("]:") {
            let keep = max.saturating_sub(port.chars().count() + 3);
            return format!("[{}]:{port}", middle_ellipsis(addr, keep.max(3)));
        }
    }
    middle_ellipsis(text, max)
}

/// The reply column: path plus where it went wrong.
pub fn reply_text(w: &Words<'_>, r: &Request) -> String {
    let reply = &r.reply;
    match reply.path {
        ReplyPath::SamePath => "same-path".to_string(),
        ReplyPath::ReplyLost => match reply.lost_between {
            Some(b) => format!("lost {}", w.between(b)),
            None => "reply-lost".to_string(),
        },
        ReplyPath::Bypassed => match reply.bypassed {
            Some(l) => format!("bypassed {}", w.label(l)),
            None => "bypassed".to_string(),
        },
        ReplyPath::NoReply => match reply.reached {
            Some(l) => format!("none, reached {}", w.label(l)),
            None => "none".to_string(),
        },
    }
}

/// The outcome column: kind, ICMP type/code, sender and where it came in.
pub fn outcome_text(w: &Words<'_>, r: &Request) -> String {
    let mut text = outcome_sender_text(r);
    if let Some(name) = r.outcome.by.and_then(|a| w.name_of(a)) {
        let _ = write!(text, " ({name})");
    }
    if let Some(origin) = r.outcome.origin {
        let _ = write!(text, " at {}", w.origin(origin));
    }
    text
}

/// Kind, ICMP type/code and sender of the outcome, e.g. `icmp-error 3/13 by 198.18.10.1`.
pub fn outcome_sender_text(r: &Request) -> String {
    let o = &r.outcome;
    let mut text = o.kind.wire().to_string();
    if let Some(icmp) = o.icmp {
        let _ = write!(text, " {}/{}", icmp.ty, icmp.code);
    }
    if let Some(by) = o.by {
        let _ = write!(text, " by {by}");
    }
    text
}

/// The weakest match strength of the request (None when no boundary matched).
pub fn weakest_match(r: &Request) -> Option<Strength> {
    let rank = |s: Strength| match s {
        Strength::Strong => 0,
        Strength::Weak => 1,
        Strength::Ambiguous => 2,
    };
    r.matches.iter().map(|m| m.strength).max_by_key(|s| rank(*s))
}

/// The weakest match strength of the request (`-` when no boundary matched).
pub fn match_text(r: &Request) -> &'static str {
    weakest_match(r).map_or("-", |s| s.wire())
}

pub(crate) fn reply_style(r: &Request) -> Style {
    match r.reply.path {
        ReplyPath::SamePath => Style::Good,
        ReplyPath::Bypassed => Style::Warn,
        ReplyPath::ReplyLost | ReplyPath::NoReply => Style::Bad,
    }
}

pub(crate) fn outcome_style(r: &Request) -> Style {
    match r.outcome.kind {
        OutcomeKind::Completed => Style::Good,
        OutcomeKind::HandshakeOnly | OutcomeKind::Midstream => Style::Warn,
        OutcomeKind::Reset | OutcomeKind::IcmpError | OutcomeKind::NoReply | OutcomeKind::DataStopped => {
            Style::Bad
        }
    }
}

pub(crate) fn match_style(r: &Request) -> Style {
    match weakest_match(r) {
        Some(Strength::Ambiguous) => Style::Bad,
        Some(Strength::Weak) => Style::Warn,
        _ => Style::Plain,
    }
}

/// The identity the backend sees, as the CSV writes it; a carrier set by the
/// client side or naming another address than the client is a warning.
pub(crate) fn identity_cell(w: &Words<'_>, r: &Request) -> (String, Style) {
    match r.identity.as_deref() {
        None => ("-".to_string(), Style::Plain),
        Some(i) => {
            let style = if i.preserved { Style::Good } else { Style::Warn };
            {
                let mut cell = String::new();
                super::csv_columns::identity_cell(&mut cell, &super::wire::identity(w, i));
                (cell, style)
            }
        }
    }
}

/// A column of the table (`--columns`, as `ps -o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Request,
    Proto,
    /// Protocol and server endpoint at capture 1, with its name.
    Service,
    /// Time at capture 1 in the `--tz` zone.
    Time,
    /// Every capture point, in path order.
    Hops,
    /// Where the source changed, before → after (and where the destination
    /// did, marked `dst`); `-` when neither did.
    Source,
    /// One capture point (by its position in the run).
    Hop(usize),
    /// The points a name of `--columns` stands for, known once the captures
    /// are read: one point (`node(out)`), or every side of a capture
    /// split into several (`node`). Expanded to [`Column::Hop`]s before use.
    Label(&'static str),
    Reply,
    Outcome,
    Match,
    /// Who the backend thinks the client is: the identity carrier and where
    /// it was added (`-` without one).
    Identity,
}

/// The columns `--columns` names, besides capture labels and `all`.
pub const COLUMN_NAMES: [&str; 10] =
    ["request", "proto", "service", "time", "hops", "source", "reply", "outcome", "match", "identity"];

/// `--columns all`: every column, in the order of [`COLUMN_NAMES`].
pub const ALL_COLUMNS: [Column; 10] = [
    Column::Request,
    Column::Proto,
    Column::Service,
    Column::Time,
    Column::Hops,
    Column::Source,
    Column::Reply,
    Column::Outcome,
    Column::Match,
    Column::Identity,
];

/// The default columns.
pub const DEFAULT_COLUMNS: [Column; 6] =
    [Column::Request, Column::Service, Column::Hops, Column::Reply, Column::Outcome, Column::Match];

/// The default columns when `--tz` is given: the time in that zone after the number.
pub const DEFAULT_COLUMNS_WITH_TIME: [Column; 7] = [
    Column::Request,
    Column::Time,
    Column::Service,
    Column::Hops,
    Column::Reply,
    Column::Outcome,
    Column::Match,
];

impl Column {
    /// `--columns request,service,hops,...` (a capture label names its own
    /// column, or its sub-points' columns when it is split into several; a
    /// side's label, `node(out)`, names that one; `#` is `request`);
    /// says which names are read otherwise. `labels`: the captures' labels.
    pub fn parse_list(text: &str, labels: &[&str]) -> Result<Vec<Column>, String> {
        let mut out = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name.eq_ignore_ascii_case("all") {
                out.extend(ALL_COLUMNS);
                continue;
            }
            let column = match COLUMN_NAMES.iter().position(|c| c.eq_ignore_ascii_case(name)) {
                Some(i) => ALL_COLUMNS[i],
                None if name == "#" => Column::Request,
                // Parsed once per run: the few names live as long as the process.
                None if crate::read::names_a_capture(name, labels) => {
                    Column::Label(Box::leak(name.to_string().into_boxed_str()))
                }
                None => {
                    return Err(format!(
                    "--columns: no column {name:?}; columns are {} (all: every one), a capture label ({}) or \
                         a side's label such as {}(out)",
                    COLUMN_NAMES.join(", "),
                    labels.join(", "),
                    labels.last().unwrap_or(&"node")
                ))
                }
            };
            out.push(column);
        }
        if out.is_empty() {
            return Err(format!("--columns: give at least one of {}", COLUMN_NAMES.join(", ")));
        }
        Ok(out)
    }
}

/// How long names and endpoints may be in cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fit {
    /// IPv6 endpoints longer than this are shortened in the middle (only the
    /// piped table's [`FULL`]; on a terminal an address is never cut).
    endpoint: Option<usize>,
    /// Names longer than this are shortened in the middle; 0: no name.
    pub(crate) name: usize,
}

/// The piped table's cells (and `--stream`'s), as they always were: names up
/// to 32 characters, IPv6 endpoints up to [`MAX_ENDPOINT_CHARS`].
pub(crate) const FULL: Fit = Fit { endpoint: Some(MAX_ENDPOINT_CHARS), name: 32 };

/// The fits of a table on a terminal, from roomy to tight: only names are
/// shortened (then left out: they stay in CSV, JSON and HTML); every address
/// and port is shown whole in every fit.
pub(crate) const FITS: [Fit; 5] = [
    Fit { endpoint: None, name: 32 },
    Fit { endpoint: None, name: 20 },
    Fit { endpoint: None, name: 14 },
    Fit { endpoint: None, name: 8 },
    Fit { endpoint: None, name: 0 },
];

/// An endpoint with its name (shortened to fit): `name (ip:port)`.
pub(crate) fn endpoint_cell(w: &Words<'_>, e: crate::verdict::Endpoint, fit: Fit) -> String {
    let text = match fit.endpoint {
        Some(max) if e.addr.is_ipv6() => shorten_endpoint(&super::endpoint::endpoint_text(e), max),
        _ => super::endpoint::endpoint_text(e),
    };
    match w.name_of(e.addr).filter(|_| fit.name > 0) {
        Some(name) => format!("{} ({text})", middle_ellipsis(name, fit.name)),
        None => text,
    }
}

/// The hop cells of one request, one per capture.
pub(crate) fn hop_cells<'r>(
    w: &'r Words<'_>,
    r: &'r Request,
    captures: usize,
    fit: Fit,
) -> impl Iterator<Item = (String, Style)> + 'r {
    let first = r.captures.iter().find(|h| h.seen);
    let first_server = first.and_then(|h| h.server);
    let first_client = first.and_then(|h| h.client);
    (0..captures).map(move |i| {
        let hop = match r.captures.get(i) {
            Some(h) if h.seen => h,
            _ => return ("-".to_string(), Style::Plain),
        };
        let mut cell = match hop.client {
            Some(c) => endpoint_cell(w, c, fit),
            None => "?".to_string(),
        };
        // At a side of a split capture: the branch (interface) it took there.
        if let Some(iface) = hop.iface() {
            cell.push_str(" via ");
            cell.push_str(iface);
        }
        if let Some(server) = hop.server.filter(|s| Some(*s) != first_server) {
            cell.push_str(" → ");
            cell.push_str(&endpoint_cell(w, server, fit));
        }
        let moved = hop.client.map(|c| c.addr) != first_client.map(|c| c.addr) || hop.server != first_server;
        (cell, if moved { Style::Warn } else { Style::Plain })
    })
}

/// The service cell: protocol and server endpoint at capture 1 (the first
/// capture that saw the request), with its name.
/// Without a `--names` name for the server, the name its request asked for
/// (HTTP `Host`, TLS SNI) is shown the same way: `tcp backend (198.19.96.10:80)`.
pub(crate) fn service_cell(w: &Words<'_>, r: &Request, fit: Fit) -> String {
    let server = r.captures.iter().find(|h| h.seen).and_then(|h| h.server);
    match server {
        Some(s) => match asked_name(r).filter(|_| w.name_of(s.addr).is_none() && fit.name > 0) {
            Some(name) => {
                let plain = Fit { name: 0, ..fit };
                format!(
                    "{} {} ({})",
                    r.proto.wire(),
                    middle_ellipsis(&name, fit.name),
                    endpoint_cell(w, s, plain)
                )
            }
            None => {
                let (proto, endpoint) = (r.proto.wire(), endpoint_cell(w, s, fit));
                let mut cell = String::with_capacity(proto.len() + 1 + endpoint.len());
                for part in [proto, " ", &endpoint] {
                    cell.push_str(part);
                }
                cell
            }
        },
        None => r.proto.wire().to_string(),
    }
}

/// The service name a request's first bytes asked for: HTTP `Host` (without
/// its port), else the TLS server name.
fn asked_name(r: &Request) -> Option<String> {
    use crate::verdict::AppField;
    let app = &r.app.as_ref()?.facts;
    // Host when asked for (even empty), else the SNI; Host without its port.
    let field = if app.raw(AppField::Host).is_some() { AppField::Host } else { AppField::Sni };
    let name_len = |h: &str| -> usize {
        match h.rsplit_once(':') {
            Some((name, port))
                if field == AppField::Host
                    && (!name.contains(':') || name.ends_with(']'))
                    && port.bytes().all(|b| b.is_ascii_digit()) =>
            {
                name.len()
            }
            _ => h.len(),
        }
    };
    // an address is no name (the cell shows the address already)
    let address =
        |n: &str| n.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok();
    // Told from the bytes before any text is made (most hosts asked for are
    // an address): an address is printable ASCII, which the text keeps as it is.
    if let Ok(raw) = std::str::from_utf8(app.raw(field)?) {
        let name = &raw[..name_len(raw)];
        if name.is_empty() || address(name) {
            return None;
        }
    }
    let mut name = app.text(field)?;
    name.truncate(name_len(&name));
    Some(name).filter(|n| !n.is_empty() && !address(n))
}

/// Each change of the source (then of the destination, marked `dst`) as
/// `A->B before → after` (`A->B proxy before → after` for a new connection).
pub(crate) fn change_lines(w: &Words<'_>, r: &Request, fit: Fit) -> Vec<String> {
    let source = r.source.iter().map(|c| (c, ""));
    let destination = r.destination.iter().map(|c| (c, "dst "));
    source
        .chain(destination)
        .map(|(c, side)| {
            let kind = if c.kind == crate::verdict::ChangeKind::Proxy { "proxy " } else { "" };
            format!(
                "{} {side}{kind}{} → {}",
                w.between(c.between),
                endpoint_cell(w, c.before, fit),
                endpoint_cell(w, c.after, fit)
            )
        })
        .collect()
}

/// The source cell: [`change_lines`] joined by `; `, `-` when none.
fn source_cell(w: &Words<'_>, r: &Request, fit: Fit) -> (String, Style) {
    let lines = change_lines(w, r, fit);
    if lines.is_empty() {
        ("-".to_string(), Style::Plain)
    } else {
        (lines.join("; "), Style::Warn)
    }
}

/// The time cell: `YYYY-MM-DD HH:MM:SS.ffffff` at capture 1 in the `--tz` zone.
pub(crate) fn time_cell(w: &Words<'_>, r: &Request) -> String {
    let default = crate::report::when::TimeStyle::default();
    let style = w.time.unwrap_or(&default);
    r.captures
        .iter()
        .find(|h| h.seen)
        .and_then(|h| h.time_ns)
        .map_or_else(|| "-".into(), |t| style.spreadsheet(t))
}

/// The columns expanded for the run's points (`labels`): `Hops` becomes one
/// hop per point, a name the points it stands for.
pub(crate) fn expand(columns: &[Column], labels: &[&str]) -> Vec<Column> {
    let captures = labels.len();
    columns
        .iter()
        .flat_map(|c| match c {
            Column::Hops => (0..captures).map(Column::Hop).collect::<Vec<_>>(),
            Column::Hop(i) if *i >= captures => Vec::new(),
            Column::Label(name) => {
                crate::read::points_named(name, labels).into_iter().map(Column::Hop).collect()
            }
            other => vec![*other],
        })
        .collect()
}

/// The first name of `columns` that stands for no point of the run
/// (`labels`), as a usage error's message.
pub fn unknown_point(columns: &[Column], labels: &[&str]) -> Option<String> {
    columns.iter().find_map(|c| match c {
        Column::Label(name) if crate::read::points_named(name, labels).is_empty() => Some(format!(
            "--columns: no capture point is labelled {name} (the points: {})",
            labels.join(", ")
        )),
        _ => None,
    })
}

/// A column's title in the header.
pub(crate) fn title<'w>(w: &'w Words<'_>, c: Column) -> &'w str {
    match c {
        Column::Request => "#",
        Column::Proto => "proto",
        Column::Service => "service",
        Column::Time => "time",
        Column::Hop(i) => w.label(i),
        Column::Source => "source",
        Column::Reply => "reply",
        Column::Outcome => "outcome",
        Column::Match | Column::Hops => "match",
        Column::Label(name) => name,
        Column::Identity => "identity",
    }
}

/// The table's cells, header first.
fn cells(findings: &Findings, w: &Words<'_>, columns: &[Column], fit: Fit) -> Vec<Vec<(String, Style)>> {
    let header: Vec<(String, Style)> =
        columns.iter().map(|c| (title(w, *c).to_string(), Style::Bold)).collect();
    let captures = w.labels.len();
    let mut rows = vec![header];
    rows.par_extend(findings.requests.par_iter().map(|r| {
        let hops: Vec<(String, Style)> = if columns.iter().any(|c| matches!(c, Column::Hop(_))) {
            hop_cells(w, r, captures, fit).collect()
        } else {
            Vec::new()
        };
        columns
            .iter()
            .map(|c| match c {
                Column::Request => (r.request.to_string(), Style::Plain),
                Column::Proto => (r.proto.wire().to_string(), Style::Plain),
                Column::Service => (service_cell(w, r, fit), Style::Plain),
                Column::Time => (time_cell(w, r), Style::Plain),
                Column::Hop(i) => hops.get(*i).cloned().unwrap_or_else(|| ("-".into(), Style::Plain)),
                // expanded before (`expand`): never a cell of its own
                Column::Label(_) => ("-".into(), Style::Plain),
                Column::Source => source_cell(w, r, fit),
                Column::Reply => (reply_text(w, r), reply_style(r)),
                Column::Outcome => (outcome_text(w, r), outcome_style(r)),
                Column::Match | Column::Hops => (match_text(r).to_string(), match_style(r)),
                Column::Identity => identity_cell(w, r),
            })
            .collect()
    }));
    rows
}

/// Column widths (characters) of the cells.
fn widths(rows: &[Vec<(String, Style)>]) -> Vec<usize> {
    let columns = rows.first().map_or(0, Vec::len);
    (0..columns).map(|c| rows.iter().map(|row| row[c].0.chars().count()).max().unwrap_or(0)).collect()
}

/// True when columns `a` and `b` are consecutive capture points (an arrow between them).
pub(crate) fn arrow_between(a: Column, b: Column) -> bool {
    matches!((a, b), (Column::Hop(x), Column::Hop(y)) if y == x + 1)
}

/// `--format table` without the summary: a header line and one line per request.
pub fn write_table(findings: &Findings, color: bool, out: &mut (dyn Write + Send)) -> io::Result<()> {
    write_table_with(&Words::new(findings), findings, &DEFAULT_COLUMNS, color, out)
}

/// [`write_table`] with names and zone (`w`) and the chosen columns: the
/// full table, as piped output and files get it (a terminal's is fitted by
/// `terminal::write_columns`).
pub fn write_table_with(
    w: &Words<'_>,
    findings: &Findings,
    columns: &[Column],
    color: bool,
    out: &mut (dyn Write + Send),
) -> io::Result<()> {
    let columns = expand(columns, &w.labels);
    let rows = cells(findings, w, &columns, FULL);
    let widths = widths(&rows);
    // Lines are padded across cores, written in order.
    crate::report::write_parallel(&rows, out, |rows, buf| {
        let mut text = String::new();
        for row in rows {
            padded_line(&mut text, row, &columns, &widths, color);
        }
        buf.extend_from_slice(text.as_bytes());
        Ok(())
    })
}

/// `--stream --format table`: the rows of each window put aside in a spill
/// file (a column is as wide as its widest cell of the whole run), laid out
/// when the run ends. Not fitted to the terminal's width (that would need
/// every row at every fit).
pub struct TableSpill {
    /// As given; expanded (a hop column per capture point) by the first window.
    given: Vec<Column>,
    columns: Option<Vec<Column>>,
    widths: Vec<usize>,
    spill: crate::output::Spill,
    rows: u64,
}

impl TableSpill {
    /// Rows of `columns` (as `--columns` gives them), put aside in `spill`.
    pub fn new(columns: &[Column], spill: crate::output::Spill) -> TableSpill {
        TableSpill { given: columns.to_vec(), columns: None, widths: Vec::new(), spill, rows: 0 }
    }

    /// The columns for these words' capture points (the first window's).
    fn columns(&mut self, w: &Words<'_>) -> &[Column] {
        let given = &self.given;
        let columns = self.columns.get_or_insert_with(|| expand(given, &w.labels));
        self.widths.resize(columns.len(), 0);
        columns
    }

    /// Puts one window's rows aside.
    pub fn add(&mut self, w: &Words<'_>, findings: &Findings) -> io::Result<()> {
        let rows = cells(findings, w, self.columns(w), FULL);
        for row in rows.iter().skip(1) {
            for ((text, style), width) in row.iter().zip(&mut self.widths) {
                *width = (*width).max(text.chars().count());
                let len = u32::try_from(text.len()).map_err(io::Error::other)?;
                self.spill.write_all(&[*style as u8])?;
                self.spill.write_all(&len.to_le_bytes())?;
                self.spill.write_all(text.as_bytes())?;
            }
            self.rows += 1;
        }
        Ok(())
    }

    /// Writes the header and every row put aside, padded (`run`: the run's
    /// findings, for the header's labels).
    pub fn finish(
        mut self,
        w: &Words<'_>,
        run: &Findings,
        color: bool,
        out: &mut (dyn Write + Send),
    ) -> io::Result<()> {
        self.columns(w);
        let TableSpill { columns, mut widths, spill, rows, .. } = self;
        let columns = columns.unwrap_or_default();
        let header = cells(run, w, &columns, FULL).swap_remove(0);
        for ((text, _), width) in header.iter().zip(&mut widths) {
            *width = (*width).max(text.chars().count());
        }
        use std::io::Read;
        let mut spill = spill.read_back()?;
        let mut line = String::new();
        padded_line(&mut line, &header, &columns, &widths, color);
        let mut row = Vec::with_capacity(columns.len());
        for _ in 0..rows {
            row.clear();
            for _ in 0..columns.len() {
                let mut head = [0u8; 5];
                spill.read_exact(&mut head)?;
                let style = match head[0] {
                    0 => Style::Plain,
                    1 => Style::Bold,
                    2 => Style::Good,
                    3 => Style::Warn,
                    _ => Style::Bad,
                };
                let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
                let mut text = vec![0u8; len];
                spill.read_exact(&mut text)?;
                row.push((String::from_utf8(text).map_err(io::Error::other)?, style));
            }
            padded_line(&mut line, &row, &columns, &widths, color);
            if line.len() >= 1 << 16 {
                out.write_all(line.as_bytes())?;
                line.clear();
            }
        }
        out.write_all(line.as_bytes())
    }
}

/// One row as a line: cells padded to the column widths (`#` right-aligned,
/// the last column not padded), arrows between consecutive capture points.
fn padded_line(
    line: &mut String,
    row: &[(String, Style)],
    columns: &[Column],
    widths: &[usize],
    color: bool,
) {
    // Padding pushed a slice at a time, not a char at a time.
    const SPACES: &str = "                                                                ";
    let spaces = |line: &mut String, mut n: usize| {
        while n > 0 {
            let k = n.min(SPACES.len());
            line.push_str(&SPACES[..k]);
            n -= k;
        }
    };
    for (c, (text, style)) in row.iter().enumerate() {
        if c > 0 {
            line.push_str(if arrow_between(columns[c - 1], columns[c]) { "  →  " } else { "  " });
        }
        let pad = widths[c] - text.chars().count();
        let last = c + 1 == columns.len();
        if columns[c] == Column::Request {
            spaces(line, pad);
            push_painted(line, text, *style, color);
        } else {
            push_painted(line, text, *style, color);
            if !last {
                spaces(line, pad);
            }
        }
    }
    line.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn table(color: bool) -> String {
        let mut out = Vec::new();
        write_table(&findings(), color, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_padded_across_cores_are_the_lines_padded_one_by_one() {
        // Past several parallel tasks (128 rows each), with widths set by a late row.
        let mut f = findings();
        let one = f.requests.clone();
        for k in 0..70 {
            f.requests.extend(one.iter().cloned().map(|mut r| {
                r.request += 5 * (k + 1);
                r
            }));
        }
        for color in [false, true] {
            let mut out = Vec::new();
            write_table(&f, color, &mut out).unwrap();
            let w = Words::new(&f);
            let columns = expand(&DEFAULT_COLUMNS, &w.labels);
            let rows = cells(&f, &w, &columns, FULL);
            let widths = widths(&rows);
            let mut want = String::new();
            for row in &rows {
                padded_line(&mut want, row, &columns, &widths, color);
            }
            assert_eq!(String::from_utf8(out).unwrap(), want);
            assert_eq!(want.lines().count(), 1 + f.requests.len());
            assert!(want.lines().last().unwrap().starts_with(&format!("{:>3}", f.requests.len())));
        }
    }

    #[test]
    fn long_ipv6_is_shortened_in_the_middle_keeping_the_port() {
        let s = shorten_endpoint("[2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]:443", 28);
        assert_eq!(s.chars().count(), 28);
        assert!(s.starts_with("[2001:db8:") && s.ends_with(":1]:443") && s.contains('…'), "{s}");
        assert_eq!(middle_ellipsis("abcdefghij", 5), "ab…ij");
        assert_eq!(shorten_endpoint("198.18.90.42:51514", 28), "198.18.90.42:51514");
    }

    #[test]
    fn one_line_per_request_with_hops_side_by_side() {
        let t = table(false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 1 + 5);
        assert!(
            lines[0].contains("decap") && lines[0].contains("→  egress") && lines[0].contains("→  backend")
        );
        assert!(lines[1].contains("198.18.90.42:51514") && lines[1].contains("198.19.3.17:40112"));
        assert!(lines[1].contains("same-path") && lines[1].contains("completed"));
        assert!(lines[2].contains("lost egress->backend"));
        assert!(lines[3].contains("icmp-error 3/13 by 198.19.3.1 at egress->backend"));
        assert!(lines[4].trim_end().ends_with("ambiguous"));
        assert!(lines[5].contains("2001:db8::1 → 2001:db8:aa"), "{}", lines[5]);
        assert!(!t.contains('\x1b'));
    }

    #[test]
    fn colour_marks_problems_red_and_success_green() {
        let t = table(true);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].contains("\x1b[32msame-path\x1b[0m"));
        assert!(lines[2].contains("\x1b[31mlost egress->backend\x1b[0m"));
        assert!(lines[3].contains("\x1b[31micmp-error"));
    }

    /// The piped table of the fixture findings (a terminal's is fit's: its tests).
    fn table_in(columns: &[Column], names: Option<&crate::names::Names>) -> String {
        let f = findings();
        let w = Words { names, ..Words::new(&f) };
        let mut out = Vec::new();
        write_table_with(&w, &f, columns, false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn source_column_names_where_and_before_after_of_each_change() {
        let t = table_in(&[Column::Request, Column::Source], None);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "#  source");
        assert_eq!(lines[1], "1  egress->backend 198.18.90.42:51514 → 198.19.3.17:40112");
        assert!(t.lines().any(|l| l.ends_with("  -")), "a request without a change: {t}");
        assert_eq!(Column::parse_list("all", &["a", "b"]).unwrap(), ALL_COLUMNS);
    }

    #[test]
    fn service_column_is_protocol_and_server_at_capture_one() {
        let t = table(false);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("#  service"), "{}", lines[0]);
        assert!(lines[1].contains("tcp 198.19.96.10:80"), "{}", lines[1]);
        assert!(
            lines[3].contains("icmp ") || lines[3].contains("udp ") || lines[3].contains("tcp "),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn the_service_is_named_by_what_its_request_asked_for_when_names_have_none() {
        use crate::verdict::{AppFacts, AppField, AppProto};
        let mut r = findings().requests[0].clone();
        let asked = |host: Option<&str>, sni: Option<&str>| {
            let mut facts = AppFacts::new(if sni.is_some() { AppProto::Tls } else { AppProto::Http });
            host.into_iter().for_each(|h| facts.set(AppField::Host, h.as_bytes()));
            sni.into_iter().for_each(|n| facts.set(AppField::Sni, n.as_bytes()));
            Some(crate::verdict::App { at: 0, facts })
        };
        for (app, want) in [
            (asked(Some("shop.example:8080"), None), Some("shop.example")),
            (asked(Some("shop.example"), None), Some("shop.example")),
            (asked(None, Some("api.example")), Some("api.example")),
            // an address is no name, with or without its port
            (asked(Some("198.19.96.10:80"), None), None),
            (asked(Some("[2001:db8::10]:443"), None), None),
            (asked(Some("2001:db8::10"), None), None),
            (asked(None, None), None),
            // bytes the text escapes: never an address, named as escaped
            (asked(Some("198.19.96.10\t"), None), Some("198.19.96.10\\x09")),
            (asked(Some("h\u{7}st:8080"), None), Some("h\\x07st")),
            // a Host asked for, if empty, is what the name is (no fallback to the SNI)
            (asked(Some(""), Some("api.example")), None),
            (asked(Some(":80"), Some("api.example")), None),
        ] {
            r.app = app;
            assert_eq!(asked_name(&r).as_deref(), want);
        }
        r.app = asked(Some("shop.example"), None);
        let fit = FULL;
        let f = findings();
        let words = Words::new(&f);
        assert_eq!(service_cell(&words, &r, fit), "tcp shop.example (198.19.96.10:80)");
        // a --names name for the address comes first
        let mut names = crate::names::Names::default();
        names.extend(crate::names::parse("198.19.96.10 backend-pool\n").unwrap().1);
        let named = Words::with(&f, Some(&names), None);
        assert_eq!(service_cell(&named, &r, fit), "tcp backend-pool (198.19.96.10:80)");
    }

    #[test]
    fn columns_parse_by_name_and_label_and_refuse_others() {
        let labels = ["decap", "egress", "backend"];
        assert_eq!(
            Column::parse_list("#,time,backend,hops", &labels).unwrap(),
            [Column::Request, Column::Time, Column::Label("backend"), Column::Hops]
        );
        let e = Column::parse_list("request,bogus", &labels).unwrap_err();
        assert!(e.contains("\"bogus\"") && e.contains("decap, egress, backend"), "{e}");
        assert!(Column::parse_list(" , ", &labels).is_err());
        // a sub-point's label parses; which points there are is known once the captures are read
        let c = Column::parse_list("egress(out if3),egress", &labels).unwrap();
        let points = ["decap", "egress(in if2)", "egress(out if3)", "backend"];
        assert_eq!(expand(&c, &points), [Column::Hop(2), Column::Hop(1), Column::Hop(2)]);
        assert_eq!(expand(&[Column::Label("backend")], &points), [Column::Hop(3)]);
        assert_eq!(unknown_point(&c, &points), None);
        let e = unknown_point(&[Column::Label("egress(x)")], &points).unwrap();
        assert!(e.starts_with("--columns: no capture point is labelled egress(x)"), "{e}");
    }

    #[test]
    fn unseen_hop_is_a_dash() {
        let t = table(false);
        let line = t.lines().nth(3).unwrap();
        assert!(line.contains("→  -"), "{line}");
    }
}
