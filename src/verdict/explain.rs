//! One sentence per request that a person can paste into a ticket: what changed
//! where, how the reply travelled, how it ended, naming boundaries by their
//! labels and adding the usual reading when the labels are the conventional
//! `decap`, `egress`, `backend`.

use super::model::{ChangeKind, OutcomeKind, ReplyPath, Request, Strength};
use super::Ctx;
use crate::correlate::Chain;

/// The usual reading of a boundary with conventional labels.
fn reading(between: &str) -> Option<&'static str> {
    match between {
        "decap->egress" => Some("the pod itself translates"),
        "egress->backend" => Some("downstream of the pod"),
        "decap->backend" => Some("in the pod or downstream of it"),
        _ => None,
    }
}

fn words(between: &str) -> String {
    between.replace("->", " and ")
}

fn with_reading(between: &str) -> String {
    match reading(between) {
        Some(r) => format!("between {} ({r})", words(between)),
        None => format!("between {}", words(between)),
    }
}

pub(crate) fn explain(ctx: &Ctx<'_>, r: &Request, seq_shift: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in &r.source.changed {
        parts.push(match c.kind {
            ChangeKind::Proxy => format!(
                "a proxy opened a new connection {}: client {} became {}",
                with_reading(&c.between),
                c.before,
                c.after
            ),
            _ => format!("source {} -> {} {}", c.before, c.after, with_reading(&c.between)),
        });
    }
    for c in &r.destination.changed {
        parts.push(format!("destination {} -> {} {}", c.before, c.after, with_reading(&c.between)));
    }
    if parts.is_empty() {
        let seen: Vec<&str> = r.captures.iter().filter(|h| h.seen).map(|h| h.label.as_str()).collect();
        let client = r.captures.iter().find_map(|h| h.client.clone()).unwrap_or_default();
        if seen.len() > 1 {
            parts.push(format!("source {client} unchanged through {}", seen.join(", ")));
        } else {
            let next = ctx.labels.get(1).copied().unwrap_or("the next capture");
            parts.push(format!("request from {client} seen only at {}, not at {next}", seen.join(", ")));
        }
    }
    if seq_shift {
        parts.push("sequence numbers shifted by a middlebox".into());
    }
    parts.push(match r.reply.path {
        ReplyPath::SamePath => "reply returned on the same path".to_string(),
        ReplyPath::ReplyLost => {
            let b = r.reply.lost_between.as_deref().unwrap_or("");
            let (near, far) = b.split_once("->").unwrap_or((b, b));
            let why = if b == "decap->egress" {
                ": lost inside the pod (return route or reverse-path filter in the pod)".to_string()
            } else if b == "egress->backend" {
                ": return route or reverse-path filter".to_string()
            } else {
                String::new()
            };
            format!("reply seen at {far} but not at {near}{why}")
        }
        ReplyPath::Bypassed => format!(
            "reply bypassed {} (replies on both sides of it): asymmetric return route",
            r.reply.bypassed.as_deref().unwrap_or("")
        ),
        ReplyPath::NoReply => {
            format!(
                "no reply at any capture; the request got as far as {}",
                r.reply.reached.as_deref().unwrap_or("?")
            )
        }
    });
    let by = r.outcome.by.as_deref().unwrap_or("?");
    let origin = r.outcome.origin.as_deref().unwrap_or("?");
    let entered = if origin.contains("->") {
        format!("entering {}", with_reading(origin))
    } else {
        format!("first seen at {origin}")
    };
    match r.outcome.kind {
        OutcomeKind::Reset => {
            let forged = if origin.contains("->") {
                ": forged in between (e.g. REJECT --reject-with tcp-reset)"
            } else {
                ""
            };
            parts.push(format!("reset by {by}, {entered}{forged}"));
        }
        OutcomeKind::IcmpError => {
            let icmp = r.outcome.icmp.as_deref().unwrap_or("?");
            let name = match (
                icmp,
                r.captures.iter().find_map(|h| h.client.as_deref()).is_some_and(|c| c.starts_with('[')),
            ) {
                ("3/13", false) | ("1/1", true) => "ICMP admin-prohibited".to_string(),
                ("3/3", false) | ("1/4", true) => "ICMP port unreachable".to_string(),
                ("3/1", false) | ("1/3", true) => "ICMP host unreachable".to_string(),
                ("3/10", false) => "ICMP host prohibited".to_string(),
                _ => format!("ICMP {icmp}"),
            };
            parts.push(format!("rejected by {name} from {by}, {entered}: policy, not path"));
        }
        OutcomeKind::HandshakeOnly => parts.push("handshake completed but the server sent nothing".into()),
        OutcomeKind::Midstream => parts.push("connection began before the capture (midstream)".into()),
        OutcomeKind::Completed | OutcomeKind::NoReply => {}
    }
    let ambiguous: Vec<&str> =
        r.matches.iter().filter(|m| m.strength == Strength::Ambiguous).map(|m| m.between.as_str()).collect();
    if !ambiguous.is_empty() {
        parts.push(format!("match at {} is ambiguous (identical requests)", ambiguous.join(", ")));
    }
    let weak: Vec<&str> =
        r.matches.iter().filter(|m| m.strength == Strength::Weak).map(|m| m.between.as_str()).collect();
    if !weak.is_empty() {
        parts.push(format!("match at {} is weak (time only)", weak.join(", ")));
    }
    parts.join("; ")
}

/// A SYN lost between two captures, its retransmission seen at both: "the first
/// SYN was not seen at egress; the retransmission at +1.0 s was".
pub(crate) fn syn_missed(ctx: &Ctx<'_>, chain: &Chain) -> Option<String> {
    let (link, (k, after_ns)) = chain.links.iter().find_map(|l| l.syn_missed.map(|m| (l, m)))?;
    let first = if k == 1 { "the first SYN was".to_string() } else { format!("the first {k} SYNs were") };
    Some(format!(
        "{first} not seen at {}; the retransmission at +{:.1} s was",
        ctx.labels[link.to],
        after_ns as f64 / 1e9
    ))
}
