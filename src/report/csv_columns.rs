//! The CSV cells of the wire view (the output contract, docs/output.md
//! "CSV"): every column after the per-capture ones, by name, its cell
//! written from a wire `wire::Request`, and a row's cells read back into one
//! ([`read_trailing`]). With `wire` this is the whole contract of a request:
//! `csv.rs` only lays rows out, and `compare` reads a CSV report back through
//! here and then `wire`'s own wire → typed step, the same as a JSON one.
//! Several values in one cell join with `;` in path order; match evidence
//! tokens join with `+`. Takes and gives wire values only.

use crate::report::wire::{
    AppOut, Attempt, Change, Changes, IdentityOut, LostCause, Match, Request, UnexpectedSource, WireName,
};
use crate::verdict::{
    AppProto, AttemptEnd, CarrierKind, ChangeKind, Evidence, OutcomeKind, ReplyPath, StrayPacket, Strength,
};
use std::fmt::Write as _;

/// One column after the per-capture ones: the whole of its contract — its
/// name, its line in docs/output.md "CSV" (a test holds the two to each
/// other), how its cell is written and how `compare` reads it back.
pub struct Column {
    pub name: &'static str,
    /// What the cell holds, in one line: the docs' "meaning".
    pub doc: &'static str,
    pub write: fn(&Request, &mut String),
    pub back: Back,
}

/// A row's cells by column name: empty for a column the report has not (a
/// report of an earlier version).
pub type Cells<'c> = dyn Fn(&str) -> &'c str + 'c;

/// How `compare` reads a column back into a request whose leading and
/// per-capture cells are read.
pub enum Back {
    /// By this reader, which may take the cells of the columns that name it
    /// in [`Back::With`] too.
    Read(for<'c> fn(&mut Request, &Cells<'c>) -> Result<(), String>),
    /// By the reader of the column named (one value in several cells).
    With(&'static str),
    /// Not read back, and why.
    Not(&'static str),
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
    Column {
        name: "source_changed_at",
        doc: "JSON `source.changed[].between`: the boundaries where the source changed, joined with `;`",
        write: |q, c| changed(c, &q.source, |x| &x.between),
        back: Back::Read(|q, c| {
            q.source = changes_of(
                c("source_changed_at"),
                c("source_before"),
                c("source_after"),
                c("source_change_kind"),
            )?;
            Ok(())
        }),
    },
    Column {
        name: "source_before",
        doc: "the source before each change (`endpoint`), in the order of `source_changed_at`",
        write: |q, c| changed(c, &q.source, |x| &x.before),
        back: Back::With("source_changed_at"),
    },
    Column {
        name: "source_after",
        doc: "the source after each change, in the same order",
        write: |q, c| changed(c, &q.source, |x| &x.after),
        back: Back::With("source_changed_at"),
    },
    Column {
        name: "destination_changed_at",
        doc: "JSON `destination.changed[].between`: the boundaries where the destination changed",
        write: |q, c| changed(c, &q.destination, |x| &x.between),
        back: Back::Read(|q, c| {
            q.destination = changes_of(
                c("destination_changed_at"),
                c("destination_before"),
                c("destination_after"),
                c("destination_change_kind"),
            )?;
            Ok(())
        }),
    },
    Column {
        name: "destination_before",
        doc: "the destination before each change, in the order of `destination_changed_at`",
        write: |q, c| changed(c, &q.destination, |x| &x.before),
        back: Back::With("destination_changed_at"),
    },
    Column {
        name: "destination_after",
        doc: "the destination after each change, in the same order",
        write: |q, c| changed(c, &q.destination, |x| &x.after),
        back: Back::With("destination_changed_at"),
    },
    Column {
        name: "reply_path",
        doc: "JSON `reply.path`",
        write: |q, c| c.push_str(q.reply.path.wire()),
        back: Back::Read(|q, c| {
            let path = c("reply_path");
            q.reply.path = ReplyPath::from_wire(path).ok_or_else(|| format!("unknown reply_path {path:?}"))?;
            Ok(())
        }),
    },
    Column {
        name: "reply_lost_between",
        doc: "JSON `reply.lost_between` (`A->B`)",
        write: |q, c| text(c, q.reply.lost_between.as_ref()),
        back: Back::Read(|q, c| set(&mut q.reply.lost_between, some(c("reply_lost_between")))),
    },
    Column {
        name: "outcome",
        doc: "JSON `outcome.kind`",
        write: |q, c| c.push_str(q.outcome.kind.wire()),
        back: Back::Read(|q, c| {
            let outcome = c("outcome");
            q.outcome.kind =
                OutcomeKind::from_wire(outcome).ok_or_else(|| format!("unknown outcome {outcome:?}"))?;
            Ok(())
        }),
    },
    Column {
        name: "outcome_by",
        doc: "JSON `outcome.by`",
        write: |q, c| text(c, q.outcome.by.as_ref()),
        back: Back::Read(|q, c| set(&mut q.outcome.by, some(c("outcome_by")))),
    },
    Column {
        name: "outcome_origin",
        doc: "JSON `outcome.origin`",
        write: |q, c| text(c, q.outcome.origin.as_ref()),
        back: Back::Read(|q, c| set(&mut q.outcome.origin, some(c("outcome_origin")))),
    },
    Column {
        name: "outcome_icmp",
        doc: "JSON `outcome.icmp`",
        write: |q, c| text(c, q.outcome.icmp.as_ref()),
        back: Back::Read(|q, c| set(&mut q.outcome.icmp, some(c("outcome_icmp")))),
    },
    Column {
        name: "match_strength",
        doc: "JSON `matches[].strength` per boundary crossed, joined with `;` (`strong;weak`)",
        write: |q, c| join(c, &q.matches, ";", |c, m| c.push_str(m.strength.wire())),
        back: Back::Read(read_matches),
    },
    Column {
        name: "match_evidence",
        doc: "JSON `matches[].evidence` per boundary, tokens joined with `+` (`isn+client-fingerprint;isn`)",
        write: |q, c| join(c, &q.matches, ";", |c, m| join(c, &m.evidence, "+", |c, e| c.push_str(e.wire()))),
        back: Back::With("match_strength"),
    },
    Column {
        name: "explanation",
        doc: "the ticket sentence (JSON `explanation`)",
        write: |q, c| c.push_str(&q.explanation),
        back: Back::Read(|q, c| set(&mut q.explanation, c("explanation").to_string())),
    },
    Column {
        name: "source_change_kind",
        doc: "the kind of each source change (`snat`, `dnat`, `port-only`, `proxy`), in the order of `source_changed_at`",
        write: |q, c| changed(c, &q.source, |x| x.kind.wire()),
        back: Back::With("source_changed_at"),
    },
    Column {
        name: "destination_change_kind",
        doc: "the kind of each destination change, in the order of `destination_changed_at`",
        write: |q, c| changed(c, &q.destination, |x| x.kind.wire()),
        back: Back::With("destination_changed_at"),
    },
    Column {
        name: "reply_bypassed",
        doc: "JSON `reply.bypassed` (a label)",
        write: |q, c| text(c, q.reply.bypassed.as_ref()),
        back: Back::Read(|q, c| set(&mut q.reply.bypassed, some(c("reply_bypassed")))),
    },
    Column {
        name: "reply_reached",
        doc: "JSON `reply.reached` (a label)",
        write: |q, c| text(c, q.reply.reached.as_ref()),
        back: Back::Read(|q, c| set(&mut q.reply.reached, some(c("reply_reached")))),
    },
    Column {
        name: "data_stopped",
        doc: "JSON `data.stopped` (`A->B`), empty when the client's data did not stop",
        write: |q, c| text(c, q.data.as_ref().and_then(|d| d.stopped.as_ref())),
        back: Back::Not("a data path needs the JSON's `data`"),
    },
    Column {
        name: "path_mtu",
        doc: "JSON `data.mtu.mtu`, empty without path-MTU messages",
        write: |q, c| {
            if let Some(m) = q.data.as_ref().and_then(|d| d.mtu.as_ref()) {
                let _ = write!(c, "{}", m.mtu);
            }
        },
        back: Back::Not("a data path needs the JSON's `data`"),
    },
    Column {
        name: "reply_lost_cause",
        doc: "JSON `reply.lost_cause` as `3/0 by 198.19.3.17 at backend` (type/code, sender, label)",
        write: |q, c| {
            if let Some(l) = &q.reply.lost_cause {
                let _ = write!(c, "{} by {} at {}", l.icmp, l.by, l.seen_at);
            }
        },
        back: Back::Read(|q, c| {
            q.reply.lost_cause = some(c("reply_lost_cause")).map(|c| lost_cause_of(&c)).transpose()?;
            Ok(())
        }),
    },
    Column {
        name: "reply_unexpected_source",
        doc: "JSON `reply.unexpected_source` as `198.19.96.10:8080 syn-ack at decap` (endpoint, packet, label)",
        write: |q, c| {
            if let Some(u) = &q.reply.unexpected_source {
                let _ = write!(c, "{} {} at {}", u.from, u.packet.wire(), u.seen_at);
            }
        },
        back: Back::Read(|q, c| {
            q.reply.unexpected_source =
                some(c("reply_unexpected_source")).map(|c| unexpected_source_of(&c)).transpose()?;
            Ok(())
        }),
    },
    Column {
        name: "earlier_attempts",
        doc: "JSON `attempts`, each as `198.19.3.17:40000->198.19.96.10:80 @2026-11-30T04:29:31.155211000Z bare-ack at backend` (tuple, `@` first packet, ending, label), joined with `;`",
        write: |q, c| {
            join(c, &q.attempts, ";", |c, a| {
                let _ = write!(c, "{}->{} @{} {} at {}", a.client, a.server, a.time, a.ending.wire(), a.at);
            })
        },
        back: Back::Read(|q, c| set(&mut q.attempts, attempts_of(c("earlier_attempts"))?)),
    },
    Column {
        name: "identity",
        doc: "JSON `identity` as `proxy-v1 198.18.90.42:40001 added egress->backend` (carrier, carried address or `unknown`, `added` and where: `client-side` or `A->B`); `none` when no carrier reached the backend",
        write: |q, c| {
            if let Some(i) = &q.identity {
                identity_cell(c, i)
            }
        },
        back: Back::Read(|q, c| {
            q.identity = identity_of(q, [c("identity"), c("identity_preserved"), c("identity_client_set")])?;
            Ok(())
        }),
    },
    Column {
        name: "identity_preserved",
        doc: "JSON `identity.preserved` as `yes`/`no`",
        write: |q, c| c.push_str(q.identity.as_ref().map_or("", |i| if i.preserved { "yes" } else { "no" })),
        back: Back::With("identity"),
    },
    Column {
        name: "identity_client_set",
        doc: "JSON `identity.client_set`",
        write: |q, c| text(c, q.identity.as_ref().and_then(|i| i.client_set.as_ref())),
        back: Back::With("identity"),
    },
    Column {
        name: "blind",
        doc: "JSON `blind`: the captures that recorded no flow while the request lived, joined with `;`",
        write: |q, c| labels(c, &q.blind),
        back: Back::Read(|q, c| set(&mut q.blind, split(c("blind")).into_iter().map(String::from).collect())),
    },
    Column {
        name: "apart",
        doc: "JSON `apart`: the captures holding a flow tied to the request that matching by time left apart, joined with `;`",
        write: |q, c| labels(c, &q.apart),
        back: Back::Read(|q, c| set(&mut q.apart, split(c("apart")).into_iter().map(String::from).collect())),
    },
    Column {
        name: "app",
        doc: "JSON `app.protocol` (`http`, `tls`, `dns`)",
        write: |q, c| c.push_str(q.app.as_ref().map_or("", |a| a.protocol.wire())),
        back: Back::Read(|q, c| set(&mut q.app, app_of(c)?)),
    },
    Column {
        name: "app_at",
        doc: "JSON `app.at`: where the first bytes were read",
        write: |q, c| text(c, q.app.as_ref().map(|a| &a.at)),
        back: Back::With("app"),
    },
    Column {
        name: "app_host",
        doc: "the name the application gave: HTTP `host`, TLS `sni`, DNS `qname`",
        write: |q, c| defused(c, q.app.as_ref().and_then(app_host)),
        back: Back::With("app"),
    },
    Column {
        name: "app_detail",
        doc: "HTTP `method` and `target` (`GET /x`), TLS `alpn` joined with `,`, DNS `qtype`",
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
        back: Back::With("app"),
    },
    Column {
        name: "app_status",
        doc: "HTTP `status`, DNS `rcode`",
        write: |q, c| match &q.app {
            Some(AppOut { status: Some(s), .. }) => c.push_str(itoa::Buffer::new().format(*s)),
            Some(a) => text(c, a.rcode.as_ref()),
            None => {}
        },
        back: Back::With("app"),
    },
    // The HTTP/1.x exchanges in the connection where the client is.
    Column {
        name: "exchanges",
        doc: "JSON `exchanges.count`, with `+` when `complete` is false (a lower bound); empty without `exchanges` (not HTTP, or one answered exchange read whole: see `app_status`)",
        write: |q, c| {
            if let Some(x) = &q.exchanges {
                let _ = write!(c, "{}{}", x.count, if x.complete { "" } else { "+" });
            }
        },
        back: Back::Not(EXCHANGES_IN_JSON),
    },
    Column {
        name: "exchange_unanswered",
        doc: "JSON `exchanges.unanswered.n` and that exchange's method and target (`3 GET /hang`)",
        write: |q, c| {
            let Some((x, u)) = q.exchanges.as_ref().and_then(|x| Some((x, x.unanswered.as_ref()?))) else {
                return;
            };
            let _ = write!(c, "{}", u.n);
            if let Some(e) = x.list.get(u.n as usize - 1) {
                let _ = write!(c, " {} {}", e.method, e.target); // after a digit: no formula
            }
        },
        back: Back::Not(EXCHANGES_IN_JSON),
    },
    Column {
        name: "exchange_worst_status",
        doc: "JSON `exchanges.worst_status`",
        write: |q, c| {
            if let Some(s) = q.exchanges.as_ref().and_then(|x| x.worst_status) {
                let _ = write!(c, "{s}");
            }
        },
        back: Back::Not(EXCHANGES_IN_JSON),
    },
    Column {
        name: "exchange_slowest",
        doc: "JSON `exchanges.slowest` as `N AFTER_MS ms` (`3 2001.534 ms`)",
        write: |q, c| {
            if let Some(s) = q.exchanges.as_ref().and_then(|x| x.slowest.as_ref()) {
                let _ = write!(c, "{} {} ms", s.n, s.after_ms);
            }
        },
        back: Back::Not(EXCHANGES_IN_JSON),
    },
];

const EXCHANGES_IN_JSON: &str = "`compare` reads the JSON's `exchanges`";

/// The columns appended after all the others but a split capture's
/// interfaces, only when a host's files are given (`--rules`, `--conntrack`,
/// `--masq-agent`, `--routes`, `--sysctl`, `--neigh`, `--host-dir`, the
/// `*-after` options), so a report without them keeps its columns: what
/// those files say of the request.
pub const WHY: [Column; 10] = [
    Column {
        name: "source_rule",
        doc: "per source change, `FILE:LINE CHAIN` of its nat rule (or its `rule_note`), `;`-joined in the order of `source_changed_at`",
        write: |q, c| rule_cell(c, &q.source),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "source_conntrack",
        doc: "per source change, `FILE:LINE` of its conntrack entry (` disagrees` appended when not confirmed)",
        write: |q, c| conntrack_cell(c, &q.source),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "destination_rule",
        doc: "the same as `source_rule` for the destination changes",
        write: |q, c| rule_cell(c, &q.destination),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "destination_conntrack",
        doc: "the same as `source_conntrack` for the destination changes",
        write: |q, c| conntrack_cell(c, &q.destination),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "lost_at",
        doc: "JSON `loss.at`: the host the request or its reply was lost inside; empty when no loss is decided",
        write: |q, c| text(c, q.loss.as_ref().map(|l| &l.at)),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "lost_packet",
        doc: "JSON `loss.packet`: `request` or `reply`",
        write: |q, c| text(c, q.loss.as_ref().map(|l| &l.packet)),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "lost_cause",
        doc: "JSON `loss.cause` (`filter`, `policy`, `route`, `rp_filter`, `neighbour`, `forwarding`, `undecided`, `none`)",
        write: |q, c| text(c, q.loss.as_ref().map(|l| &l.cause)),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "lost_rule",
        doc: "JSON `loss.rule` as `FILE:LINE CHAIN`: the filter rule that dropped it",
        write: |q, c| {
            if let Some(r) = q.loss.as_ref().and_then(|l| l.rule.as_ref()) {
                let _ = write!(c, "{}:{} {}", r.file, r.line, r.chain);
            }
        },
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "predicted_at",
        doc: "JSON `predicted.at`: the host a proposed change (`--masq-agent-after`, `--rules-after`) is predicted at",
        write: |q, c| text(c, q.predicted.as_ref().map(|p| &p.at)),
        back: Back::Not(HOST_FILES),
    },
    Column {
        name: "predicted_source",
        doc: "JSON `predicted.source_after`: the source leaving that host after the change; empty when unknown (see the explanation)",
        write: |q, c| text(c, q.predicted.as_ref().and_then(|p| p.source_after.as_ref())),
        back: Back::Not(HOST_FILES),
    },
];

const HOST_FILES: &str = "`compare` reads no host file";

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
fn rule_cell(cell: &mut String, c: &Changes) {
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
fn conntrack_cell(cell: &mut String, c: &Changes) {
    join(cell, &c.changed, ";", |cell, x| {
        if let Some(e) = &x.conntrack {
            let _ = write!(cell, "{}:{}{}", e.file, e.line, if e.confirmed { "" } else { " disagrees" });
        }
    });
}

/// Sets a field read back from a cell.
fn set<T>(field: &mut T, value: T) -> Result<(), String> {
    *field = value;
    Ok(())
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

/// `match_strength` and `match_evidence` → the matches, one per boundary
/// between the captures that saw the request.
fn read_matches<'c>(q: &mut Request, cell: &Cells<'c>) -> Result<(), String> {
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
    Ok(())
}

/// Reads one row's cells after the per-capture ones into `q`, whose hops are
/// read already: each column of [`TRAILING`] by its [`Back`], in order
/// (`cell`: a column by name, empty when the report has none).
pub fn read_trailing<'c>(q: &mut Request, cell: &Cells<'c>) -> Result<(), String> {
    for column in &TRAILING {
        if let Back::Read(read) = column.back {
            read(q, cell)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column's row in docs/output.md "CSV".
    fn doc_row(c: &Column) -> String {
        match c.back {
            Back::Not(why) => format!("| `{}` | {}; not read back: {why} |", c.name, c.doc),
            _ => format!("| `{}` | {} |", c.name, c.doc),
        }
    }

    #[test]
    fn the_docs_list_every_column_in_order_with_its_line() {
        let docs = include_str!("../../docs/output.md");
        for (table, which) in [(&TRAILING[..], "after the per-capture ones"), (&WHY[..], "of a host's files")]
        {
            let rows: Vec<String> = table.iter().map(doc_row).collect();
            let block = rows.join("\n");
            assert!(
                docs.contains(&format!("\n{block}\n")),
                "docs/output.md \"CSV\" must list the columns {which} as:\n{block}"
            );
        }
    }

    #[test]
    fn every_column_is_read_back_by_a_reader_or_says_why_not() {
        let names: Vec<&str> = TRAILING.iter().chain(&WHY).map(|c| c.name).collect();
        for (i, c) in TRAILING.iter().chain(&WHY).enumerate() {
            assert!(!names[..i].contains(&c.name), "{} named twice", c.name);
            assert!(!c.doc.contains('|') && !c.doc.contains('\n'), "{}: one line, no `|`", c.name);
            if let Back::With(by) = c.back {
                let reader = TRAILING.iter().find(|r| r.name == by);
                assert!(
                    matches!(reader.map(|r| &r.back), Some(Back::Read(_))),
                    "{}: read with {by}, which has no reader",
                    c.name
                );
            }
        }
    }
}
