//! The CSV cells of the wire view (the output contract, docs/output.md
//! "CSV"): every column after the per-capture ones, by name, its cell
//! written from a wire `schema::Request`, and a row's cells read back into one
//! ([`read_trailing`]). With `schema` this is the whole contract of a request:
//! `csv.rs` only lays rows out, and `compare` reads a CSV report back through
//! here and then `schema`'s own wire → typed step, the same as a JSON one.
//! Several values in one cell join with `;` in path order; match evidence
//! tokens join with `+`. Takes and gives wire values only.

use crate::report::schema::{
    AppOut, Attempt, Change, Changes, IdentityOut, LostCause, Match, Request, UnexpectedSource, WireName,
};
use crate::verdict::{
    AppProto, AttemptEnd, CarrierKind, ChangeKind, Evidence, OutcomeKind, ReplyPath, StrayPacket, Strength,
};
use std::fmt::Write as _;

/// One column after the per-capture ones: its name and how its cell is written.
pub struct Column {
    pub name: &'static str,
    pub write: fn(&Request, &mut String),
}

/// Writes `items` into `cell` separated by `sep`.
fn join<'a, T: 'a>(
    cell: &mut String,
    items: impl IntoIterator<Item = &'a T>,
    sep: &str,
    mut each: impl FnMut(&mut String, &'a T),
) {
    for (i, x) in items.into_iter().enumerate() {
        if i > 0 {
            cell.push_str(sep);
        }
        each(cell, x);
    }
}

fn text(cell: &mut String, value: Option<&String>) {
    if let Some(v) = value {
        cell.push_str(v);
    }
}

fn changed(cell: &mut String, c: &Changes, field: fn(&Change) -> &str) {
    join(cell, &c.changed, ";", |cell, x| cell.push_str(field(x)));
}

fn labels(cell: &mut String, l: &[String]) {
    join(cell, l, ";", |cell, x| cell.push_str(x));
}

/// The `identity` cell: `carrier carried added boundary`, or `none` (no
/// carrier reached the backend).
pub fn identity_cell(cell: &mut String, i: &IdentityOut) {
    match (i.carrier, &i.carried) {
        (Some(kind), Some(carried)) => {
            let _ = write!(cell, "{} {carried}", kind.wire());
            if let Some(added) = &i.added {
                let _ = write!(cell, " added {added}");
            }
        }
        _ => cell.push_str("none"),
    }
}

/// The columns after the per-capture ones, in order. The first fifteen are
/// the first of docs/output.md "CSV" (through `explanation`); the rest were
/// appended so a CSV report reads back losslessly (`compare`), each after the
/// ones before it.
pub const TRAILING: [Column; 38] = [
    Column { name: "source_changed_at", write: |q, c| changed(c, &q.source, |x| &x.between) },
    Column { name: "source_before", write: |q, c| changed(c, &q.source, |x| &x.before) },
    Column { name: "source_after", write: |q, c| changed(c, &q.source, |x| &x.after) },
    Column { name: "destination_changed_at", write: |q, c| changed(c, &q.destination, |x| &x.between) },
    Column { name: "destination_before", write: |q, c| changed(c, &q.destination, |x| &x.before) },
    Column { name: "destination_after", write: |q, c| changed(c, &q.destination, |x| &x.after) },
    Column { name: "reply_path", write: |q, c| c.push_str(q.reply.path.wire()) },
    Column { name: "reply_lost_between", write: |q, c| text(c, q.reply.lost_between.as_ref()) },
    Column { name: "outcome", write: |q, c| c.push_str(q.outcome.kind.wire()) },
    Column { name: "outcome_by", write: |q, c| text(c, q.outcome.by.as_ref()) },
    Column { name: "outcome_origin", write: |q, c| text(c, q.outcome.origin.as_ref()) },
    Column { name: "outcome_icmp", write: |q, c| text(c, q.outcome.icmp.as_ref()) },
    Column {
        name: "match_strength",
        write: |q, c| join(c, &q.matches, ";", |c, m| c.push_str(m.strength.wire())),
    },
    Column {
        name: "match_evidence",
        write: |q, c| join(c, &q.matches, ";", |c, m| join(c, &m.evidence, "+", |c, e| c.push_str(e.wire()))),
    },
    Column { name: "explanation", write: |q, c| c.push_str(&q.explanation) },
    Column { name: "source_change_kind", write: |q, c| changed(c, &q.source, |x| x.kind.wire()) },
    Column { name: "destination_change_kind", write: |q, c| changed(c, &q.destination, |x| x.kind.wire()) },
    Column { name: "reply_bypassed", write: |q, c| text(c, q.reply.bypassed.as_ref()) },
    Column { name: "reply_reached", write: |q, c| text(c, q.reply.reached.as_ref()) },
    Column { name: "data_stopped", write: |q, c| text(c, q.data.as_ref().and_then(|d| d.stopped.as_ref())) },
    Column {
        name: "path_mtu",
        write: |q, c| {
            if let Some(m) = q.data.as_ref().and_then(|d| d.mtu.as_ref()) {
                let _ = write!(c, "{}", m.mtu);
            }
        },
    },
    // `3/0 by 198.19.3.17 at egress`: an ICMP error quoting the reply.
    Column {
        name: "reply_lost_cause",
        write: |q, c| {
            if let Some(l) = &q.reply.lost_cause {
                let _ = write!(c, "{} by {} at {}", l.icmp, l.by, l.seen_at);
            }
        },
    },
    // `198.19.2.2:80 syn-ack at decap`: a reply from elsewhere.
    Column {
        name: "reply_unexpected_source",
        write: |q, c| {
            if let Some(u) = &q.reply.unexpected_source {
                let _ = write!(c, "{} {} at {}", u.from, u.packet.wire(), u.seen_at);
            }
        },
    },
    // `198.19.3.17:40000->198.19.96.10:80 @TIME bare-ack at backend;…`: the
    // connection's earlier attempts.
    Column {
        name: "earlier_attempts",
        write: |q, c| {
            join(c, &q.attempts, ";", |c, a| {
                let _ = write!(c, "{}->{} @{} {} at {}", a.client, a.server, a.time, a.ending.wire(), a.at);
            })
        },
    },
    // `proxy-v1 198.18.90.42:40001 added egress->backend` (`none`: no carrier
    // reached the backend), whether that identity is the client, and an
    // address the client side set in the carrier itself.
    Column {
        name: "identity",
        write: |q, c| {
            if let Some(i) = &q.identity {
                identity_cell(c, i)
            }
        },
    },
    Column {
        name: "identity_preserved",
        write: |q, c| c.push_str(q.identity.as_ref().map_or("", |i| if i.preserved { "yes" } else { "no" })),
    },
    Column {
        name: "identity_client_set",
        write: |q, c| text(c, q.identity.as_ref().and_then(|i| i.client_set.as_ref())),
    },
    // `egress;backend`: the captures that recorded no flow while the request
    // lived (their silence about it is no evidence).
    Column { name: "blind", write: |q, c| labels(c, &q.blind) },
    // `backend`: the captures holding a flow tied to the request without time
    // that matching by time left apart (their silence is no evidence).
    Column { name: "apart", write: |q, c| labels(c, &q.apart) },
    // What the first bytes said: `http`, `tls` or `dns`, where, the name
    // (Host, SNI, query name), the detail (`GET /x`, the ALPN list joined
    // with `,`, the query type) and the status (HTTP status, DNS rcode).
    Column { name: "app", write: |q, c| c.push_str(q.app.as_ref().map_or("", |a| a.protocol.wire())) },
    Column { name: "app_at", write: |q, c| text(c, q.app.as_ref().map(|a| &a.at)) },
    Column { name: "app_host", write: |q, c| defused(c, q.app.as_ref().and_then(app_host)) },
    Column {
        name: "app_detail",
        write: |q, c| {
            let Some(a) = &q.app else { return };
            let from = c.len();
            match a.protocol {
                AppProto::Http => {
                    if let (Some(m), Some(t)) = (&a.method, &a.target) {
                        for part in [m, " ", t] {
                            c.push_str(part);
                        }
                    }
                }
                AppProto::Tls => join(c, &a.alpn, ",", |d, p| d.push_str(p)),
                AppProto::Dns => text(c, a.qtype.as_ref()),
            }
            defuse_from(c, from);
        },
    },
    Column {
        name: "app_status",
        write: |q, c| match &q.app {
            Some(AppOut { status: Some(s), .. }) => c.push_str(itoa::Buffer::new().format(*s)),
            Some(a) => text(c, a.rcode.as_ref()),
            None => {}
        },
    },
    // The HTTP/1.x exchanges in the connection where the client is: their
    // count (`2+`: a lower bound, bytes after that could not be read), the
    // first one without a response (`5 GET /x`), the highest status, the
    // slowest (`3 2001.534 ms`). Not read back: `compare` reads the JSON's.
    Column {
        name: "exchanges",
        write: |q, c| {
            if let Some(x) = &q.exchanges {
                let _ = write!(c, "{}{}", x.count, if x.complete { "" } else { "+" });
            }
        },
    },
    Column {
        name: "exchange_unanswered",
        write: |q, c| {
            let Some((x, u)) = q.exchanges.as_ref().and_then(|x| Some((x, x.unanswered.as_ref()?))) else {
                return;
            };
            let _ = write!(c, "{}", u.n);
            if let Some(e) = x.list.get(u.n as usize - 1) {
                let _ = write!(c, " {} {}", e.method, e.target); // after a digit: no formula
            }
        },
    },
    Column {
        name: "exchange_worst_status",
        write: |q, c| {
            if let Some(s) = q.exchanges.as_ref().and_then(|x| x.worst_status) {
                let _ = write!(c, "{s}");
            }
        },
    },
    Column {
        name: "exchange_slowest",
        write: |q, c| {
            if let Some(s) = q.exchanges.as_ref().and_then(|x| x.slowest.as_ref()) {
                let _ = write!(c, "{} {} ms", s.n, s.after_ms);
            }
        },
    },
];

/// The name an application gave: the HTTP Host, the TLS SNI, the DNS query name.
fn app_host(a: &AppOut) -> Option<&String> {
    match a.protocol {
        AppProto::Http => a.host.as_ref(),
        AppProto::Tls => a.sni.as_ref(),
        AppProto::Dns => a.qname.as_ref(),
    }
}

/// Text read from a capture into a cell: a first character a spreadsheet
/// would read as a formula (`=`, `+`, `-`, `@`) is written `\xHH`, as every
/// `\` of such text is (so it reads back exactly: [`undefused`]).
fn defused(cell: &mut String, value: Option<&String>) {
    let Some(v) = value else { return };
    match v.chars().next() {
        Some(first @ ('=' | '+' | '-' | '@')) => {
            let _ = write!(cell, "\\x{:02x}{}", first as u32, &v[1..]);
        }
        _ => cell.push_str(v),
    }
}

/// [`defused`] on what was written into `cell` from `from` on.
fn defuse_from(cell: &mut String, from: usize) {
    if let Some(first @ ('=' | '+' | '-' | '@')) = cell[from..].chars().next() {
        cell.replace_range(from..from + 1, &format!("\\x{:02x}", first as u32));
    }
}

/// The text [`defused`] wrote.
fn undefused(cell: &str) -> String {
    for first in ['=', '+', '-', '@'] {
        if let Some(rest) = cell.strip_prefix(&format!("\\x{:02x}", first as u32)) {
            return format!("{first}{rest}");
        }
    }
    cell.to_string()
}

/// The `app*` cells → the wire value (None when `app` is empty).
fn app_of<'c>(cell: &dyn Fn(&str) -> &'c str) -> Result<Option<AppOut>, String> {
    let protocol = cell("app");
    if protocol.is_empty() {
        return Ok(None);
    }
    let protocol = AppProto::from_wire(protocol).ok_or_else(|| format!("unknown app {protocol:?}"))?;
    let (name, detail, status) =
        (some(&undefused(cell("app_host"))), undefused(cell("app_detail")), cell("app_status"));
    let mut a = AppOut::new(protocol, cell("app_at").to_string());
    match protocol {
        AppProto::Http => {
            a.host = name;
            if let Some((m, t)) = detail.split_once(' ') {
                (a.method, a.target) = (Some(m.to_string()), Some(t.to_string()));
            }
            a.status = opt_parse(status)?;
        }
        AppProto::Tls => {
            a.sni = name;
            a.alpn = split_on(&detail, ',');
        }
        AppProto::Dns => {
            a.qname = name;
            a.qtype = some(&detail);
            a.rcode = some(status);
        }
    }
    Ok(Some(a))
}

fn split_on(cell: &str, sep: char) -> Vec<String> {
    if cell.is_empty() {
        Vec::new()
    } else {
        cell.split(sep).map(String::from).collect()
    }
}

fn opt_parse(cell: &str) -> Result<Option<u16>, String> {
    some(cell).map(|s| s.parse().map_err(|_| format!("{s:?} is not an HTTP status"))).transpose()
}

/// The names of [`TRAILING`], in order.
pub fn trailing_names() -> impl Iterator<Item = &'static str> {
    TRAILING.iter().map(|c| c.name)
}

/// Per change, `file:line chain` of its nat rule (or why none is named):
/// the `source_rule` and `destination_rule` cells of `--rules`.
pub fn rule_cell(cell: &mut String, c: &Changes) {
    join(cell, &c.changed, ";", |cell, x| match (&x.rule, &x.rule_note) {
        (Some(r), _) => {
            let _ = write!(cell, "{}:{} {}", r.file, r.line, r.chain);
        }
        (None, Some(note)) => cell.push_str(note),
        (None, None) => {}
    });
}

/// Per change, `file:line` of its conntrack entry (`disagrees` when its reply
/// tuple is another): the `*_conntrack` cells.
pub fn conntrack_cell(cell: &mut String, c: &Changes) {
    join(cell, &c.changed, ";", |cell, x| {
        if let Some(e) = &x.conntrack {
            let _ = write!(cell, "{}:{}{}", e.file, e.line, if e.confirmed { "" } else { " disagrees" });
        }
    });
}

/// `a;b` → its values (none for an empty cell).
fn split(cell: &str) -> Vec<&str> {
    if cell.is_empty() {
        Vec::new()
    } else {
        cell.split(';').collect()
    }
}

fn some(cell: &str) -> Option<String> {
    (!cell.is_empty()).then(|| cell.to_string())
}

/// The changes of the four `;`-joined cells (boundary, before, after, kind).
fn changes_of(at: &str, before: &str, after: &str, kind: &str) -> Result<Changes, String> {
    let (before, after, kind) = (split(before), split(after), split(kind));
    let changed = (split(at).into_iter().enumerate())
        .map(|(i, between)| {
            let k = kind.get(i).copied().unwrap_or_default();
            Ok(Change {
                between: between.to_string(),
                kind: ChangeKind::from_wire(k).ok_or_else(|| format!("unknown change kind {k:?}"))?,
                before: before.get(i).copied().unwrap_or_default().to_string(),
                after: after.get(i).copied().unwrap_or_default().to_string(),
                before_name: None,
                after_name: None,
                rule: None,
                rule_note: None,
                conntrack: None,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Changes { changed, kept: Vec::new() })
}

/// `3/0 by 198.19.3.17 at egress` → its three wire values.
fn lost_cause_of(text: &str) -> Result<LostCause, String> {
    let bad = || format!("{text:?} is not `type/code by address at label`");
    let (icmp, rest) = text.split_once(" by ").ok_or_else(bad)?;
    let (by, at) = rest.split_once(" at ").ok_or_else(bad)?;
    Ok(LostCause { icmp: icmp.to_string(), by: by.to_string(), seen_at: at.to_string() })
}

/// `198.19.2.2:80 syn-ack at decap` → its three wire values.
fn unexpected_source_of(text: &str) -> Result<UnexpectedSource, String> {
    let bad = || format!("{text:?} is not `endpoint packet at label`");
    let (what, at) = text.split_once(" at ").ok_or_else(bad)?;
    let (from, packet) = what.split_once(' ').ok_or_else(bad)?;
    let packet = StrayPacket::from_wire(packet).ok_or_else(bad)?;
    Ok(UnexpectedSource { from: from.to_string(), seen_at: at.to_string(), packet })
}

/// `C->S @TIME ENDING at LABEL;…` → the earlier attempts.
fn attempts_of(text: &str) -> Result<Vec<Attempt>, String> {
    (text.split(';').filter(|a| !a.is_empty()))
        .map(|a| {
            let bad = || format!("{a:?} is not `client->server @time ending at label`");
            let (what, at) = a.split_once(" at ").ok_or_else(bad)?;
            let mut parts = what.split(' ');
            let (Some(tuple), Some(time), Some(ending), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(bad());
            };
            let (client, server) = tuple.split_once("->").ok_or_else(bad)?;
            Ok(Attempt {
                at: at.to_string(),
                client: client.to_string(),
                server: server.to_string(),
                time: time.strip_prefix('@').ok_or_else(bad)?.to_string(),
                ending: AttemptEnd::from_wire(ending).ok_or_else(bad)?,
            })
        })
        .collect()
}

/// The identity cells → its wire value; the backend side (`at`, `peer`) is
/// the last capture whose hop has a client.
fn identity_of(q: &Request, [text, preserved, client_set]: [&str; 3]) -> Result<Option<IdentityOut>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    let bad = || format!("{text:?} is not `carrier address added boundary` or `none`");
    let (at, peer) = (q.captures.iter().rev())
        .find_map(|h| h.client.as_ref().filter(|_| h.seen).map(|c| (h.label.clone(), c.clone())))
        .ok_or_else(|| "an identity for a request seen nowhere".to_string())?;
    let (carrier, carried, added) = if text == "none" {
        (None, None, None)
    } else {
        let mut words = text.split(' ');
        let kind = words.next().and_then(CarrierKind::from_wire).ok_or_else(bad)?;
        let carried = words.next().ok_or_else(bad)?;
        let added = match (words.next(), words.next(), words.next()) {
            (None, _, _) => None,
            (Some("added"), Some(b), None) => Some(b.to_string()),
            _ => return Err(bad()),
        };
        (Some(kind), Some(carried.to_string()), added)
    };
    Ok(Some(IdentityOut {
        at,
        peer,
        carrier,
        carried,
        added,
        preserved: preserved == "yes",
        client_set: some(client_set),
    }))
}

/// Reads one row's cells after the per-capture ones into `q`, whose hops are
/// read already (`cell`: a column of [`TRAILING`] by name, empty when the
/// report has none: a report of an earlier version). `data_stopped`,
/// `path_mtu` and the `exchange*` cells are not read back: a data path and
/// the exchanges need the JSON's fields.
pub fn read_trailing<'c>(q: &mut Request, cell: &dyn Fn(&str) -> &'c str) -> Result<(), String> {
    let seen: Vec<&str> = q.captures.iter().filter(|h| h.seen).map(|h| h.label.as_str()).collect();
    // A boundary past the seen captures (a row edited by hand) is the first capture's.
    let first = q.captures.first().map_or("", |h| h.label.as_str());
    let evidences = split(cell("match_evidence"));
    q.matches = (split(cell("match_strength")).into_iter().enumerate())
        .map(|(i, s)| Match {
            between: match seen.get(i..i + 2) {
                Some(w) => format!("{}->{}", w[0], w[1]),
                None => format!("{first}->{first}"),
            },
            strength: Strength::from_wire(s).unwrap_or(Strength::Weak),
            evidence: (evidences.get(i))
                .map(|e| e.split('+').filter_map(Evidence::from_wire).collect())
                .unwrap_or_default(),
            candidates: Vec::new(),
        })
        .collect();
    q.source = changes_of(
        cell("source_changed_at"),
        cell("source_before"),
        cell("source_after"),
        cell("source_change_kind"),
    )?;
    q.destination = changes_of(
        cell("destination_changed_at"),
        cell("destination_before"),
        cell("destination_after"),
        cell("destination_change_kind"),
    )?;
    let path = cell("reply_path");
    q.reply.path = ReplyPath::from_wire(path).ok_or_else(|| format!("unknown reply_path {path:?}"))?;
    q.reply.lost_between = some(cell("reply_lost_between"));
    q.reply.bypassed = some(cell("reply_bypassed"));
    q.reply.reached = some(cell("reply_reached"));
    q.reply.lost_cause = some(cell("reply_lost_cause")).map(|c| lost_cause_of(&c)).transpose()?;
    q.reply.unexpected_source =
        some(cell("reply_unexpected_source")).map(|c| unexpected_source_of(&c)).transpose()?;
    let outcome = cell("outcome");
    q.outcome.kind = OutcomeKind::from_wire(outcome).ok_or_else(|| format!("unknown outcome {outcome:?}"))?;
    q.outcome.by = some(cell("outcome_by"));
    q.outcome.origin = some(cell("outcome_origin"));
    q.outcome.icmp = some(cell("outcome_icmp"));
    q.attempts = attempts_of(cell("earlier_attempts"))?;
    q.identity = identity_of(q, [cell("identity"), cell("identity_preserved"), cell("identity_client_set")])?;
    q.blind = split(cell("blind")).into_iter().map(String::from).collect();
    q.apart = split(cell("apart")).into_iter().map(String::from).collect();
    q.app = app_of(cell)?;
    q.explanation = cell("explanation").to_string();
    Ok(())
}
