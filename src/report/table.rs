//! Findings → the terminal table: one line per request with the capture points
//! side by side (`#  proto  decap  →  egress  →  backend  reply  outcome  match`).
//! Takes `Findings` and whether to colour; gives text lines. Each hop cell shows
//! the source seen there, plus `→ destination` where the destination differs
//! from capture 1's. Never reads captures; the summary is in `summary.rs`.

use crate::report::schema::WireName;
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

fn reply_style(r: &Request) -> Style {
    match r.reply.path {
        ReplyPath::SamePath => Style::Good,
        ReplyPath::Bypassed => Style::Warn,
        ReplyPath::ReplyLost | ReplyPath::NoReply => Style::Bad,
    }
}

fn outcome_style(r: &Request) -> Style {
    match r.outcome.kind {
        OutcomeKind::Completed => Style::Good,
        OutcomeKind::HandshakeOnly | OutcomeKind::Midstream => Style::Warn,
        OutcomeKind::Reset | OutcomeKind::IcmpError | OutcomeKind::NoReply | OutcomeKind::DataStopped => {
            Style::Bad
        }
    }
}

fn match_style(r: &Request) -> Style {
    match weakest_match(r) {
        Some(Strength::Ambiguous) => Style::Bad,
        Some(Strength::Weak) => Style::Warn,
        _ => Style::Plain,
    }
}

/// The hop cells of one request, one per capture.
fn hop_cells(r: &Request, captures: usize) -> impl Iterator<Item = (String, Style)> + '_ {
    let first = r.captures.iter().find(|h| h.seen);
    let first_server = first.and_then(|h| h.server);
    let first_client = first.and_then(|h| h.client);
    (0..captures).map(move |i| {
        let hop = match r.captures.get(i) {
            Some(h) if h.seen => h,
            _ => return ("-".to_string(), Style::Plain),
        };
        let mut cell = match hop.client {
            Some(c) => shorten_endpoint(&c.to_string(), MAX_ENDPOINT_CHARS),
            None => "?".to_string(),
        };
        if let Some(server) = hop.server.filter(|s| Some(*s) != first_server) {
            cell.push_str(" → ");
            cell.push_str(&shorten_endpoint(&server.to_string(), MAX_ENDPOINT_CHARS));
        }
        let moved = hop.client.map(|c| c.addr) != first_client.map(|c| c.addr) || hop.server != first_server;
        (cell, if moved { Style::Warn } else { Style::Plain })
    })
}

/// `--format table` without the summary: a header line and one line per request.
pub fn write_table(findings: &Findings, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let w = Words::new(findings);
    let labels = &w.labels;
    // Columns: #, proto, hops (with arrows between), reply, outcome, match.
    let mut header: Vec<(String, Style)> = vec![("#".into(), Style::Bold), ("proto".into(), Style::Bold)];
    header.extend(labels.iter().map(|l| (l.to_string(), Style::Bold)));
    header.extend(["reply", "outcome", "match"].iter().map(|h| (h.to_string(), Style::Bold)));
    let mut rows = vec![header];
    rows.par_extend(findings.requests.par_iter().map(|r| {
        let mut row = vec![(r.request.to_string(), Style::Plain), (r.proto.wire().to_string(), Style::Plain)];
        row.extend(hop_cells(r, labels.len()));
        row.push((reply_text(&w, r), reply_style(r)));
        row.push((outcome_text(&w, r), outcome_style(r)));
        row.push((match_text(r).to_string(), match_style(r)));
        row
    }));
    let columns = rows[0].len();
    let widths: Vec<usize> =
        (0..columns).map(|c| rows.iter().map(|row| row[c].0.chars().count()).max().unwrap_or(0)).collect();
    let hop_range = 2..2 + labels.len();
    let mut line = String::new();
    let spaces = |line: &mut String, n: usize| line.extend(std::iter::repeat_n(' ', n));
    for row in &rows {
        line.clear();
        for (c, (text, style)) in row.iter().enumerate() {
            if c > 0 {
                let arrow = hop_range.contains(&c) && c > hop_range.start;
                line.push_str(if arrow { "  →  " } else { "  " });
            }
            let pad = widths[c] - text.chars().count();
            let last = c + 1 == columns;
            if c == 0 {
                spaces(&mut line, pad);
                push_painted(&mut line, text, *style, color);
            } else {
                push_painted(&mut line, text, *style, color);
                if !last {
                    spaces(&mut line, pad);
                }
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
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

    #[test]
    fn unseen_hop_is_a_dash() {
        let t = table(false);
        let line = t.lines().nth(3).unwrap();
        assert!(line.contains("→  -"), "{line}");
    }
}
