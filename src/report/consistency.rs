//! The consistency checker (issue 30): reads a finished request as the JSON
//! shows it and lists every clause of its explanation that its own fields do
//! not bear out. Tests run it over every report they produce (goldens, lab
//! scenarios, premise checks); an empty list is the only right answer. Each
//! rule names the clause it reads and the fields it checks.

use crate::report::icmp::IcmpCause;
use crate::report::wire::Request;
use crate::verdict::{Evidence, OutcomeKind, ReplyPath, Strength};

/// `A->B` as the explanation reads it: `between A and B`, or the arrow form.
fn read_between(part: &str, between: &str) -> bool {
    match between.split_once("->") {
        Some((a, b)) => part.contains(&format!("between {a} and {b}")) || part.contains(between),
        None => false,
    }
}

/// A change's clause names a rule (`, by `…` (file:line)`) only when the
/// change's `rule` field is that rule, and it names one whenever the field is set.
fn names_its_rule(part: &str, c: &crate::report::wire::Change) -> bool {
    match (&c.rule, part.split_once(", by `")) {
        (Some(rule), Some((_, said))) => {
            said.ends_with(&format!("` ({}:{})", rule.file, rule.line))
                && said.starts_with(&crate::why::eval::short_rule(&rule.text))
        }
        (None, None) => true,
        _ => false,
    }
}

/// The labels of `a, b and c` (as `explain::blind_labels` writes them).
fn labels_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(", ").flat_map(|p| p.split(" and "))
}

/// "dropped inside H: seen entering it[ by I], never seen leaving it": seen at
/// `H(in)` (on I), not at `H(out)`, which was not blind. "the reply left H by
/// X, not by Y where the request came in…": `H(in)`'s `reply_iface` X and
/// `iface` Y. (`explain::fork_words`.)
fn fork_contradictions(r: &Request, part: &str) -> Vec<String> {
    let hop = |label: &str| r.captures.iter().find(|h| h.label == label);
    let mut out = Vec::new();
    if let Some((host, rest)) =
        part.strip_prefix("dropped inside ").and_then(|p| p.split_once(": seen entering it"))
    {
        let (inside, outside) = (hop(&format!("{host}(in)")), format!("{host}(out)"));
        let by = rest.strip_suffix(", never seen leaving it").and_then(|b| b.strip_prefix(" by "));
        if !inside.is_some_and(|h| h.seen && h.iface.as_deref() == by) {
            out.push(format!("{host}(in) did not see it, or not on that interface"));
        }
        if hop(&outside).is_none_or(|h| h.seen) || r.blind.contains(&outside) {
            out.push(format!("{outside} saw it, was blind, or is no point"));
        }
    }
    // "after the change at AT: source A instead of B (R)", "… source B as
    // today (R)", "… source R": the request's `predicted` says so
    if let Some((at, rest)) =
        part.strip_prefix("after the change at ").and_then(|p| p.split_once(": source "))
    {
        let borne = r.predicted.as_ref().is_some_and(|p| {
            let reason = format!(" ({})", p.reason);
            p.at == at
                && match (&p.source_after, rest.split_once(" instead of ")) {
                    (Some(a), Some((x, y))) => {
                        p.changes && *a == x && format!("{}{reason}", p.source_today) == y
                    }
                    (Some(a), None) => {
                        !p.changes && *a == p.source_today && rest == format!("{a} as today{reason}")
                    }
                    (None, _) => rest == p.reason,
                }
        });
        if !borne {
            out.push("predicted says otherwise".to_string());
        }
    }
    // "lost at AT: NOTE" (`--rules`): the request's loss says so, and no capture
    // after the last that saw it did
    if let Some((at, note)) = part.strip_prefix("lost at ").and_then(|p| p.split_once(": ")) {
        if !r.loss.as_ref().is_some_and(|l| l.at == at && l.note == note) {
            out.push("loss says otherwise".to_string());
        }
        let request = r.loss.as_ref().is_some_and(|l| l.packet == "request");
        if request && r.captures.last().is_none_or(|h| h.seen) {
            out.push("the last capture saw it".to_string());
        }
        // a reply lost: seen entering a host and not leaving it, or never sent
        // by the host a capture was taken on (AT is that capture: it saw the
        // request and no reply)
        let end_host = r.captures.iter().any(|h| h.label == at && h.seen && !h.reply_seen);
        if !request && !end_host && r.captures.iter().all(|h| !h.reply_seen) {
            out.push("no capture saw its reply".to_string());
        }
    }
    if let Some((host, rest)) = part.strip_prefix("the reply left ").and_then(|p| p.split_once(" by ")) {
        let inside = hop(&format!("{host}(in)"));
        let (answered, rest) = rest.split_once(", not by ").unwrap_or_default();
        let asked = rest.split(' ').next().unwrap_or_default();
        if !inside
            .is_some_and(|h| h.reply_iface.as_deref() == Some(answered) && h.iface.as_deref() == Some(asked))
        {
            out.push(format!("{host}(in)'s reply_iface/iface say otherwise"));
        }
    }
    out
}

/// An endpoint's address: `198.19.96.10:80`, `[2001:db8::1]:80` or a bare address.
fn addr_part(e: &str) -> &str {
    match e.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None if e.matches(':').count() == 1 => e.split(':').next().unwrap_or(e),
        None => e,
    }
}

/// Every disagreement between the explanation of `r` and its fields.
pub fn contradictions(r: &Request) -> Vec<String> {
    let mut out = Vec::new();
    let mut say = |part: &str, why: &str| out.push(format!("request {}: \"{part}\": {why}", r.request));
    let seen: Vec<&str> = r.captures.iter().filter(|h| h.seen).map(|h| h.label.as_str()).collect();
    let no_reply_anywhere = r.captures.iter().all(|h| !h.reply_seen);
    let origin = r.outcome.origin.as_deref();
    for part in r.explanation.split("; ") {
        if part.contains(" HTTP exchanges at ") {
            for why in exchanges_contradictions(r, part) {
                say(part, &why);
            }
        }
        // "X recorded nothing while it ran": X blind; "Y holds a flow tied to
        // it …": Y apart. X and Y follow the clause's last ": ", or begin it
        // (where a RST or ICMP error entered is checked below, with origin).
        for (tail, list, field) in [
            (" recorded nothing while it ran", &r.blind, "blind"),
            (" a flow tied to it without time", &r.apart, "apart"),
        ] {
            if let Some((head, _)) = part.split_once(tail) {
                let named = head.rsplit(": ").next().unwrap_or(head);
                let named = named.strip_suffix(" holds").or(named.strip_suffix(" hold")).unwrap_or(named);
                if !labels_of(named).all(|l| list.iter().any(|b| b == l)) {
                    say(part, &format!("{field} does not list {named}"));
                }
            }
        }
        if let Some((head, _)) = part
            .split_once(" a flow with the same endpoints at the same time that matching did not tie to it")
        {
            let named = head.strip_suffix(" holds").or(head.strip_suffix(" hold")).unwrap_or(head);
            let unseen = |l: &str| r.captures.iter().any(|h| h.label == l && !h.seen);
            if !labels_of(named).all(|l| r.same_tuple.iter().any(|s| s == l) && unseen(l)) {
                say(part, &format!("same_tuple does not list {named}, or it saw the request"));
            }
        }
        for why in fork_contradictions(r, part) {
            say(part, &why);
        }
        if let Some(at) = part.strip_prefix("the request got as far as ") {
            let at = at.split(',').next().unwrap_or_default();
            if r.reply.reached.as_deref() != Some(at) {
                say(part, "reply.reached says otherwise");
            }
        }
        if let Some((name, rest)) =
            (part.split_once(" kept at ")).filter(|(name, _)| *name == "source" || *name == "destination")
        {
            // "SIDE kept at AT: NOTE": SIDE's kept has AT, and NOTE begins its rule_note
            let kept = if name == "source" { &r.source.kept } else { &r.destination.kept };
            let borne = kept.iter().any(|k| {
                rest.strip_prefix(k.at.as_str())
                    .and_then(|t| t.strip_prefix(": "))
                    .is_some_and(|t| !t.is_empty() && k.rule_note.starts_with(t))
            });
            if !borne {
                say(part, &format!("{name}.kept has no such host and rule_note"));
            }
            let changed = if name == "source" { &r.source.changed } else { &r.destination.changed };
            if kept.iter().any(|k| changed.iter().any(|c| c.between == k.at)) {
                say(part, &format!("{name} changed at that host"));
            }
        } else if part.starts_with("source ") && part.contains(" unchanged through ") {
            if !r.source.changed.is_empty() || !r.destination.changed.is_empty() {
                say(part, "an address changed");
            }
            let listed = part.split(" unchanged through ").nth(1).unwrap_or_default();
            if listed != seen.join(", ") {
                say(part, &format!("the captures that saw it are {}", seen.join(", ")));
            }
        } else if part.starts_with("source ") && part.contains(" -> ") {
            let found = r.source.changed.iter().any(|c| {
                read_between(part, &c.between)
                    && part.contains(&c.before)
                    && part.contains(&c.after)
                    && names_its_rule(part, c)
            });
            if !found {
                say(part, "no such source change (or not by that rule)");
            }
        } else if part.starts_with("destination ") && part.contains(" -> ") {
            let found = r.destination.changed.iter().any(|c| {
                read_between(part, &c.between)
                    && part.contains(&c.before)
                    && part.contains(&c.after)
                    && names_its_rule(part, c)
            });
            if !found {
                say(part, "no such destination change (or not by that rule)");
            }
        } else if part.starts_with("a proxy opened a new connection") {
            if !r.source.changed.iter().any(|c| {
                c.kind == crate::verdict::ChangeKind::Proxy
                    && read_between(part, &c.between)
                    && names_its_rule(part, c)
            }) {
                say(part, "no proxy change there (or not by that rule)");
            }
        } else if let Some(at) =
            part.strip_prefix("the query was not seen at ").and_then(|p| p.strip_suffix(", only its answer"))
        {
            // each capture named saw the flow with no datagram to the server
            let answer_only = |l: &str| {
                r.captures.iter().any(|h| {
                    h.label == l && h.seen && h.packets_to_server == Some(0) && h.packets_to_client > Some(0)
                })
            };
            if r.proto != crate::verdict::Proto::Udp || !labels_of(at).all(answer_only) {
                say(part, "the hops there show datagrams to the server, or none back");
            }
        } else if let Some(rest) = part.strip_prefix("fewer datagrams to the server at ") {
            // "B (n) than at A (m)": A is the capture before B that saw the
            // request, and both counts are theirs.
            let count = |l: &str| r.captures.iter().find(|h| h.label == l && h.seen)?.packets_to_server;
            let read = |x: &str| -> Option<(String, u64)> {
                let (label, n) = x.strip_suffix(')')?.rsplit_once(" (")?;
                Some((label.to_string(), n.parse().ok()?))
            };
            let holds = rest
                .split_once(" than at ")
                .and_then(|(b, a)| Some((read(b)?, read(a)?)))
                .is_some_and(|((b, n), (a, m))| {
                    let at = |l: &str| r.captures.iter().position(|h| h.label == l);
                    let between = match (at(&a), at(&b)) {
                        (Some(i), Some(j)) if i < j => r.captures[i + 1..j].iter().all(|h| !h.seen),
                        _ => false,
                    };
                    r.proto == crate::verdict::Proto::Udp
                        && between
                        && count(&b) == Some(n)
                        && count(&a) == Some(m)
                        && 0 < n
                        && n < m
                });
            if !holds {
                say(part, "the hops' datagram counts say otherwise");
            }
        } else if part.starts_with("sequence numbers shifted by a middlebox") {
            // "… between A and B (client +N, server +M)": a seq_shift entry
            // there, each amount said its own and none said that is unknown.
            let found = r.seq_shift.iter().any(|x| {
                let side = |name: &str, by: Option<i32>| match by {
                    Some(n) => part.contains(&format!("{name} {n:+}")),
                    None => !part.contains(&format!("{name} ")),
                };
                read_between(part, &x.between) && side("client", x.client) && side("server", x.server)
            });
            if !found {
                say(part, "seq_shift says otherwise");
            }
        } else if part.starts_with("request from ") && part.contains(" seen only at ") {
            if seen.len() != 1 || !part.contains(&format!(" seen only at {}", seen[0])) {
                say(part, &format!("seen at {}", seen.join(", ")));
            }
            if let Some(next) = part.split(", not at ").nth(1) {
                let holds = |list: &[String]| list.iter().any(|b| b == next);
                if r.captures.iter().any(|h| h.label == next && h.seen)
                    || holds(&r.blind)
                    || holds(&r.same_tuple)
                {
                    say(
                        part,
                        "the next capture saw it, recorded nothing then or holds a flow of its endpoints",
                    );
                }
            }
        } else if part.contains(" fragments of ") && part.contains(" lost between ") {
            let lost = r.fragments.iter().flat_map(|f| &f.lost);
            if !lost.clone().any(|l| {
                let head = format!(
                    "{} of {} fragments of ",
                    l.fragments_sent.saturating_sub(l.fragments_arrived),
                    l.fragments_sent
                );
                part.starts_with(&head)
                    && read_between(part, &l.between)
                    && part.contains(&format!(" {} bytes", l.datagram_bytes))
                    && part.contains(" reply ") == (l.direction == "reply")
            }) {
                say(part, "no such fragment loss in fragments.lost");
            }
        } else if part.contains(" arrived incomplete at ") && part.contains("fragmented") {
            let lost = r.fragments.iter().flat_map(|f| &f.lost);
            if !lost.clone().any(|l| {
                part.starts_with(&format!("{} of {} fragmented ", l.incomplete, l.datagrams_arrived))
            }) {
                say(part, "no such incomplete datagrams in fragments.lost");
            }
        } else if let Some(n) = part.strip_prefix("the largest fragment that passed was ") {
            let lost = r.fragments.iter().flat_map(|f| &f.lost);
            if !lost.clone().any(|l| n == format!("{} bytes", l.largest_passed)) {
                say(part, "no fragment loss with that largest fragment");
            }
        } else if let Some(rest) = part.strip_prefix("the request went no further than ") {
            // The reset or ICMP error's boundary, past the last capture that saw the request.
            let (at, from) =
                rest.split_once(", and what returned on the same path came from between ").unzip();
            let came = from.and_then(|f| f.split_once(" and ")).map(|(a, b)| format!("{a}->{b}"));
            let answer = matches!(r.outcome.kind, OutcomeKind::Reset | OutcomeKind::IcmpError);
            if r.reply.path != ReplyPath::SamePath || !answer || came.as_deref() != origin {
                say(part, "reply.path, outcome.kind or outcome.origin say otherwise");
            }
            if seen.last().copied() != at
                || came.is_none_or(|c| !c.starts_with(&format!("{}->", at.unwrap_or(""))))
            {
                say(part, "not the last capture that saw the request, or not where the answer came in");
            }
        } else if part == "reply returned on the same path" {
            if r.reply.path != ReplyPath::SamePath {
                say(part, "reply.path is not same-path");
            }
            if seen.len() < 2 {
                say(part, "only one capture saw the request: there is no path to speak of");
            }
        } else if let Some(rest) = part.strip_prefix("reply seen at ") {
            if let Some((at, rest)) = rest.split_once(" but not at ") {
                let before = rest.split(':').next().unwrap_or_default();
                let lost = format!("{before}->{at}");
                if r.reply.path != ReplyPath::ReplyLost
                    || r.reply.lost_between.as_deref() != Some(lost.as_str())
                {
                    say(part, "reply.path/lost_between say otherwise");
                }
            } else if seen.len() != 1 || !rest.starts_with(seen[0]) || no_reply_anywhere {
                say(part, "not the one capture that saw the request and a reply");
            }
        } else if let Some(rest) = part.strip_prefix("reply bypassed ") {
            let at = rest.split(' ').next().unwrap_or_default();
            if r.reply.path != ReplyPath::Bypassed || r.reply.bypassed.as_deref() != Some(at) {
                say(part, "reply.path/bypassed say otherwise");
            }
        } else if let Some(rest) = part.strip_prefix("no reply at any capture") {
            if !no_reply_anywhere || r.reply.path != ReplyPath::NoReply {
                say(part, "a capture saw a reply");
            }
            if let Some(at) = rest.strip_prefix(", the request got as far as ") {
                let at = at.split(',').next().unwrap_or_default();
                if r.reply.reached.as_deref() != Some(at) {
                    say(part, "reply.reached says otherwise");
                }
            }
        }
        for (who, cut, to) in [
            ("client", &r.data.as_ref().and_then(|d| d.cut.clone()), r.data.as_ref().and_then(|d| d.cut_to)),
            (
                "server",
                &r.data.as_ref().and_then(|d| d.server_cut.clone()),
                r.data.as_ref().and_then(|d| d.server_cut_to),
            ),
        ] {
            if let Some(rest) = part.strip_prefix(&format!("every {who} packet crossed ")) {
                let said = rest.split(", cut to at most ").nth(1).and_then(|t| t.split(' ').next());
                let right = cut.as_deref().is_some_and(|b| read_between(rest, b))
                    && said.and_then(|t| t.parse::<u32>().ok()) == to.map(|s| s.bytes);
                if !right {
                    say(
                        part,
                        &format!("data.{}cut says otherwise", if who == "client" { "" } else { "server_" }),
                    );
                }
            }
        }
        // Where a RST or an ICMP error entered, in whichever clause says it.
        if part.contains("forged in between") || part.contains(", entering ") {
            match origin {
                Some(o) if o.contains("->") && read_between(part, o) => {}
                _ => say(part, "outcome.origin is no boundary named here"),
            }
        }
        if let Some(rest) = part.split(", first seen at ").nth(1) {
            let at = rest.split([':', ',']).next().unwrap_or_default();
            if origin != Some(at) {
                say(part, "outcome.origin says otherwise");
            }
        }
        if let Some(rest) = part.split("where it entered the path is unknown: ").nth(1) {
            // the captures named: those blind to it, else those that kept it apart
            let named = if r.blind.is_empty() { &r.apart } else { &r.blind };
            let all = named.iter().all(|b| rest.contains(b.as_str()));
            if origin.is_some() || named.is_empty() || !all {
                say(part, "outcome.origin is known, or blind and apart say otherwise");
            }
        }
        // "the first SYN was not seen at X; the retransmission at +T s was":
        // syn_missed names X, and X's own time is the retransmission's, not
        // the first SYN's (more than half of T after the first capture's)
        if let Some(rest) = part.split(" not seen at ").nth(1).filter(|_| part.starts_with("the first ")) {
            let at = rest.split(';').next().unwrap_or_default();
            match &r.syn_missed {
                Some(m) if m.at == at => {
                    let time = |l: &str| {
                        let h = r.captures.iter().find(|h| h.label == l && h.seen)?;
                        crate::time::parse_rfc3339(h.time.as_deref()?)
                    };
                    let first = r.captures.iter().find(|h| h.seen).map(|h| h.label.as_str());
                    if let (Some(t0), Some(t)) = (first.and_then(time), time(at)) {
                        if ((t - t0) as f64) < m.retransmission_after_ms * 1e6 / 2.0 {
                            say(part, &format!("{at}'s time is the first SYN's, not the retransmission's"));
                        }
                    }
                }
                _ => say(part, "syn_missed does not name it"),
            }
        }
        // "X is the address the client sent to, yet Y never saw the error":
        // the ICMP error's sender is the server there, and it entered before Y
        if let Some((by, rest)) = part.split_once(" is the address the client sent to, yet ") {
            let to = rest.split(" never saw the error").next().unwrap_or_default();
            let server = r.captures.iter().rev().find(|h| h.seen).and_then(|h| h.server.as_deref());
            let entered = origin.is_some_and(|o| o.ends_with(&format!("->{to}")));
            if r.outcome.by.as_deref() != Some(by) || server.map(addr_part) != Some(by) || !entered {
                say(
                    part,
                    "outcome.by is not the server's address, or the error did not enter before that capture",
                );
            }
        }
        if part.starts_with("reset by ") && r.outcome.kind != OutcomeKind::Reset {
            say(part, "outcome.kind is not reset");
        }
        if part.ends_with(": policy, not path") && r.outcome.icmp_cause != Some(IcmpCause::Policy) {
            say(part, "outcome.icmp_cause is not policy");
        }
        for (word, strength) in [(" is weak", Strength::Weak), (" is ambiguous", Strength::Ambiguous)] {
            if let Some(at) = part
                .strip_prefix("match at ")
                .and_then(|p| p.split(word).next())
                .filter(|_| part.contains(word))
            {
                // a weak match's basis as said: a request line, a server name, or time only
                let basis = [
                    ("(the same request line", Some(Evidence::RequestLine)),
                    ("(the same TLS server name", Some(Evidence::Sni)),
                    ("(time only)", None),
                ]
                .into_iter()
                .find(|(said, _)| part.contains(said))
                .map(|(_, e)| e);
                for b in at.split(", ") {
                    let fits = |m: &&crate::report::wire::Match| {
                        m.between == b
                            && m.strength == strength
                            && (strength != Strength::Weak
                                || basis == Some(crate::report::explain::weak_basis(&m.evidence)))
                    };
                    if !r.matches.iter().any(|m| fits(&m)) {
                        say(part, &format!("no{word} match at {b} (on that basis)"));
                    }
                }
            }
        }
    }
    out
}

/// The exchanges clause (`explain::exchanges_words`) read back against
/// `exchanges`: each number and label it states.
fn exchanges_contradictions(r: &Request, part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(x) = &r.exchanges else { return vec!["no exchanges field".into()] };
    let (count, rest) = part.split_once(" HTTP exchanges at ").unwrap_or_default();
    let (lower, count) = match count.strip_prefix("at least ") {
        Some(n) => (true, n),
        None => (false, count),
    };
    if count.parse() != Ok(x.count) || lower == x.complete {
        out.push(format!("exchanges.count is {} (complete: {})", x.count, x.complete));
    }
    let at = rest.split([',', ' ']).next().unwrap_or_default();
    if at != x.at {
        out.push(format!("exchanges.at is {}", x.at));
    }
    let answered = if x.complete {
        rest.contains(", all answered") && x.answered == x.count
            || rest.contains(&format!(", {} answered", x.answered))
    } else {
        rest.contains(&format!(", at least {} answered", x.answered))
    };
    if !answered {
        out.push(format!("exchanges.answered is {}", x.answered));
    }
    if let Some(s) = rest.split(", worst status ").nth(1) {
        if s.split(',').next().and_then(|s| s.parse().ok()) != x.worst_status {
            out.push("exchanges.worst_status says otherwise".into());
        }
    }
    if let Some(s) = rest.split(", slowest: exchange ").nth(1) {
        let (n, secs) = s.split_once(" after ").unwrap_or_default();
        let secs: Option<f64> = secs.split(" s").next().and_then(|t| t.parse().ok());
        let borne = x.slowest.as_ref().is_some_and(|sl| {
            n.parse() == Ok(sl.n) && secs.is_some_and(|t| (t - sl.after_ms / 1000.0).abs() <= 0.051)
        });
        if !borne {
            out.push("exchanges.slowest says otherwise".into());
        }
    }
    if let Some((head, tail)) = rest.split_once(" got no response at ") {
        let n = head.rsplit(", exchange ").next().and_then(|t| t.split(' ').next());
        let Some(u) = x.unanswered.as_ref().filter(|u| n.and_then(|n| n.parse().ok()) == Some(u.n)) else {
            out.push("exchanges.unanswered is not that exchange".into());
            return out;
        };
        // "AT (which saw no FIN …): its request reached R, WHERE ITS RESPONSE WENT"
        let (at_words, after) = tail.split_once(": its request reached ").unwrap_or((tail, ""));
        if after.split(',').next() != Some(u.request_reached.as_str()) {
            out.push(format!("unanswered.request_reached is {}", u.request_reached));
        }
        if at_words.contains("saw no FIN") != u.open {
            out.push(format!("unanswered.open is {}", u.open));
        }
        if after.contains("no capture read a response to it") {
            let read = after.split(" (").nth(1).and_then(|t| t.strip_suffix(" read the connection)"));
            let seen: Vec<&str> = x.seen.iter().map(|c| c.at.as_str()).collect();
            if !u.response_seen.is_empty() || read.map(|t| labels_of(t).collect::<Vec<_>>()) != Some(seen) {
                out.push("unanswered.response_seen or exchanges.seen say otherwise".into());
            }
        } else if let Some(said) = after.split_once("its response was read at ").map(|(_, t)| t) {
            let (at, not) = said.split_once(" and not at ").unwrap_or((said, ""));
            if labels_of(at).collect::<Vec<_>>() != u.response_seen {
                out.push("unanswered.response_seen says otherwise".into());
            }
            let lacks = |l: &str| x.seen.iter().any(|c| c.at == l && c.complete && c.responses < u.n);
            if !not.is_empty() && !labels_of(not).all(lacks) {
                out.push("a capture named read that response, or not completely".into());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;
    use crate::report::to_wire;

    fn wire() -> Vec<Request> {
        to_wire::findings(&findings()).requests
    }

    #[test]
    fn a_flow_of_the_same_endpoints_where_the_request_was_not_seen_is_said_not_not_at() {
        // Request 3 seen at decap only; egress holds an unmatched flow of its endpoints then.
        let mut f = findings();
        let r = &mut f.requests[2];
        r.captures[1] = crate::verdict::Hop::unseen();
        r.same_tuple = vec![1];
        let words = crate::report::words::Words::new(&f);
        let q = to_wire::request(&words, &f.requests[2]);
        assert!(
            q.explanation.starts_with(
                "request from 198.18.90.43:5353 seen only at decap; egress holds a flow with the same endpoints at \
                 the same time that matching did not tie to it;"
            ),
            "{}",
            q.explanation
        );
        assert_eq!(q.same_tuple, ["egress"]);
        // Said of a capture the field does not list, or one that saw it: found.
        let mut moved = q.clone();
        moved.same_tuple = vec!["backend".into()];
        assert!(contradictions(&moved).iter().any(|c| c.contains("same_tuple does not list egress")));
        let mut moved = q.clone();
        moved.captures[1].seen = true;
        assert!(!contradictions(&moved).is_empty());
        // Without it: "not at egress".
        let mut r = f.requests[2].clone();
        r.same_tuple.clear();
        let q = to_wire::request(&words, &r);
        assert!(q
            .explanation
            .starts_with("request from 198.18.90.43:5353 seen only at decap, not at egress;"));
        let mut moved = q.clone();
        moved.same_tuple = vec!["egress".into()];
        assert!(contradictions(&moved).iter().any(|c| c.contains("holds a flow of its endpoints")));
    }

    #[test]
    fn the_fixtures_explanations_agree_with_their_fields() {
        let requests = wire();
        assert!(requests.len() >= 5);
        for r in &requests {
            assert_eq!(contradictions(r), Vec::<String>::new(), "{}", r.explanation);
        }
    }

    #[test]
    fn a_syn_said_missed_where_that_capture_s_time_is_the_first_syn_s_is_found() {
        let mut r = wire().into_iter().find(|r| r.captures.iter().filter(|h| h.seen).count() >= 2).unwrap();
        let (first, at) = {
            let mut seen = r.captures.iter().filter(|h| h.seen);
            (seen.next().unwrap().clone(), seen.next().unwrap().label.clone())
        };
        r.explanation = format!("the first SYN was not seen at {at}; the retransmission at +1.0 s was");
        r.syn_missed = None;
        assert!(contradictions(&r).iter().any(|c| c.contains("syn_missed does not name it")), "{r:?}");
        r.syn_missed =
            Some(crate::report::wire::SynMissed { at: at.clone(), syns: 1, retransmission_after_ms: 1000.0 });
        // the fixture's captures saw it microseconds apart: the first SYN's time
        assert!(contradictions(&r).iter().any(|c| c.contains("time is the first SYN's")), "{r:?}");
        let t0 = crate::time::parse_rfc3339(first.time.as_deref().unwrap()).unwrap();
        let h = r.captures.iter_mut().find(|h| h.label == at).unwrap();
        h.time = Some(crate::time::rfc3339(t0 + 1_000_200_000));
        assert_eq!(contradictions(&r), Vec::<String>::new());
    }

    #[test]
    fn an_error_said_sent_in_the_server_s_name_is_borne_out_by_its_sender_and_origin() {
        let mut r = wire().into_iter().find(|r| r.outcome.icmp.is_some()).unwrap();
        let server = r.captures.iter().rev().find(|h| h.seen).and_then(|h| h.server.clone()).unwrap();
        let addr = addr_part(&server).to_string();
        let origin = r.outcome.origin.clone().unwrap();
        let to = origin.split("->").nth(1).unwrap().to_string();
        r.explanation =
            format!("{addr} is the address the client sent to, yet {to} never saw the error: a box");
        assert!(r.outcome.by.as_deref() != Some(addr.as_str()), "the fixture's sender is another host");
        assert_eq!(contradictions(&r).len(), 1, "{r:?}");
        r.outcome.by = Some(addr.clone());
        assert_eq!(contradictions(&r), Vec::<String>::new());
        r.outcome.origin = None;
        assert_eq!(contradictions(&r).len(), 1, "{r:?}");
        assert_eq!(
            (addr_part("[2001:db8::1]:80"), addr_part("2001:db8::1"), addr_part("198.19.0.1")),
            ("2001:db8::1", "2001:db8::1", "198.19.0.1")
        );
    }

    #[test]
    fn a_field_changed_under_its_sentence_is_found() {
        let requests = wire();
        let with = |pick: &dyn Fn(&Request) -> bool| requests.iter().find(|r| pick(r)).cloned().unwrap();
        // "reply returned on the same path" with another path.
        let mut r = with(&|r| r.explanation.contains("reply returned on the same path"));
        r.reply.path = ReplyPath::NoReply;
        assert_eq!(contradictions(&r).len(), 1, "{r:?}");
        // The answer's boundary past the last capture that saw the request
        // (an ICMP error rejecting it between egress and backend), said
        // instead of "reply returned on the same path"; moved, it is found.
        let r = with(&|r| r.request == 3);
        assert!(
            r.explanation.contains(
                "the request went no further than egress, and what returned on the same path came from \
                 between egress and backend"
            ),
            "{}",
            r.explanation
        );
        for edit in [
            |r: &mut Request| r.outcome.origin = Some("decap->egress".into()),
            |r: &mut Request| r.captures[2].seen = true,
            |r: &mut Request| r.reply.path = ReplyPath::ReplyLost,
        ] {
            let mut moved = r.clone();
            edit(&mut moved);
            assert!(
                contradictions(&moved).iter().any(|c| c.contains("went no further")),
                "{:?}",
                contradictions(&moved)
            );
        }
        // A source change the fields do not hold.
        let mut r = with(&|r| {
            !r.source.changed.is_empty() && r.source.changed[0].kind != crate::verdict::ChangeKind::Proxy
        });
        r.source.changed[0].between = "decap->egress".into();
        assert!(contradictions(&r)[0].contains("no such source change"), "{:?}", contradictions(&r));
        // A blamed boundary the origin does not name.
        let mut r = with(&|r| r.explanation.contains(", entering between"));
        r.outcome.origin = None;
        assert!(contradictions(&r).iter().any(|c| c.contains("outcome.origin")), "{r:?}");
        // "reply seen at B but not at A" without the lost reply.
        let mut r = with(&|r| r.explanation.contains("but not at"));
        r.reply.lost_between = Some("decap->egress".into());
        assert!(contradictions(&r).iter().any(|c| c.contains("lost_between")), "{r:?}");
        // "unchanged through" when an address changed, or other captures saw it.
        let mut r = with(&|r| r.explanation.contains(" unchanged through "));
        r.captures.iter_mut().for_each(|h| h.seen = false);
        r.captures[0].seen = true;
        assert!(!contradictions(&r).is_empty(), "{r:?}");
        // "where it entered the path is unknown" with an origin known.
        let mut r =
            with(&|r| r.outcome.kind == OutcomeKind::Reset || r.outcome.kind == OutcomeKind::IcmpError);
        r.explanation =
            "reset by 198.19.96.10, where it entered the path is unknown: backend recorded nothing while \
                         this request ran"
                .into();
        r.outcome.kind = OutcomeKind::Reset;
        r.blind = vec!["backend".into()];
        r.outcome.origin = Some("egress->backend".into());
        assert!(contradictions(&r).iter().any(|c| c.contains("known")), "{r:?}");
        r.outcome.origin = None;
        assert_eq!(contradictions(&r), Vec::<String>::new());
        r.blind.clear();
        assert_eq!(contradictions(&r).len(), 1);
        // "whether it went further is unknown" names captures blind or apart.
        let mut r = requests[0].clone();
        (r.reply.path, r.reply.reached) = (ReplyPath::NoReply, Some("decap".into()));
        let at = "decap";
        r.explanation = format!(
            "source unchanged; no reply at any capture; the request got as far as {at}, and whether it went \
             further is unknown: backend recorded nothing while it ran; egress and backend hold a flow tied to \
             it without time (ISN, first datagram, echo or sequence numbers) that matching by time left apart"
        );
        let said =
            |r: &Request| contradictions(r).into_iter().filter(|c| c.contains("does not list")).count();
        assert_eq!(said(&r), 2, "{:?}", contradictions(&r));
        (r.blind, r.apart) = (vec!["backend".into()], vec!["egress".into(), "backend".into()]);
        assert_eq!(said(&r), 0, "{:?}", contradictions(&r));
        r.apart.pop();
        assert_eq!(said(&r), 1, "{:?}", contradictions(&r));
        // "sequence numbers shifted …" against seq_shift, made by the typed
        // request's own words, then each field moved under them.
        let mut typed = findings();
        typed.requests[0].seq_shift = vec![crate::verdict::SeqShift {
            between: crate::verdict::Between { from: 1, to: 2 },
            client: Some(12345),
            server: None,
        }];
        let r = to_wire::findings(&typed).requests.remove(0);
        assert!(r.explanation.contains("shifted by a middlebox between egress and backend (client +12345)"));
        assert_eq!(contradictions(&r), Vec::<String>::new());
        for tamper in [
            |x: &mut crate::report::wire::SeqShiftOut| x.client = Some(-12345),
            |x: &mut crate::report::wire::SeqShiftOut| x.server = Some(1),
            |x: &mut crate::report::wire::SeqShiftOut| x.between = "decap->egress".into(),
        ] {
            let mut r = r.clone();
            tamper(&mut r.seq_shift[0]);
            assert!(contradictions(&r).iter().any(|c| c.contains("seq_shift")), "{r:?}");
        }
        // "the query was not seen at X, only its answer" against X's counts.
        let mut typed = findings();
        let q = &mut typed.requests[0];
        q.proto = crate::verdict::Proto::Udp;
        (q.captures[1].packets_to_server, q.captures[1].packets_to_client) = (Some(0), Some(1));
        let r = to_wire::findings(&typed).requests.remove(0);
        assert!(
            r.explanation.contains("the query was not seen at egress, only its answer"),
            "{}",
            r.explanation
        );
        assert_eq!(contradictions(&r), Vec::<String>::new());
        let mut sent = r.clone();
        sent.captures[1].packets_to_server = Some(1);
        assert!(contradictions(&sent).iter().any(|c| c.contains("datagrams to the server")), "{sent:?}");
        let mut tcp = r.clone();
        tcp.proto = crate::verdict::Proto::Tcp;
        assert!(!contradictions(&tcp).is_empty());
        // "every client packet crossed … cut to at most N bytes" against data.cut.
        let mut r = requests[0].clone();
        let seg = |bytes| Some(crate::report::wire::Segment { bytes, count: 1 });
        let data = r.data.get_or_insert(crate::report::wire::Data {
            reached: None,
            stopped: None,
            stopped_segment: None,
            server_reached: None,
            server_stopped: None,
            server_stopped_segment: None,
            cut: None,
            cut_from: None,
            cut_to: None,
            server_cut: None,
            server_cut_from: None,
            server_cut_to: None,
            mtu: None,
        });
        (data.cut, data.cut_from, data.cut_to) = (Some("egress->backend".into()), seg(130), seg(80));
        r.explanation =
            "every client packet crossed between egress and backend, cut to at most 80 bytes (up to \
                         130 before): truncated, not stopped"
                .into();
        assert_eq!(contradictions(&r), Vec::<String>::new());
        r.data.as_mut().unwrap().cut_to = seg(90);
        assert!(contradictions(&r)[0].contains("data.cut says otherwise"), "{:?}", contradictions(&r));
        r.data.as_mut().unwrap().cut = None;
        assert_eq!(contradictions(&r).len(), 1);
        r.explanation = r.explanation.replace("client", "server");
        r.data.as_mut().unwrap().server_cut = Some("egress->backend".into());
        assert!(contradictions(&r)[0].contains("data.server_cut"), "{:?}", contradictions(&r));
        r.data.as_mut().unwrap().server_cut_to = seg(80);
        assert_eq!(contradictions(&r), Vec::<String>::new());
    }

    #[test]
    fn a_proxy_clause_names_a_rule_only_when_its_change_has_that_rule() {
        let mut r = wire().into_iter().next().unwrap();
        let rule = crate::report::wire::RuleOut {
            file: "rules-pod.txt".into(),
            line: 15,
            table: "nat".into(),
            chain: "PREROUTING".into(),
            text: "-A PREROUTING -i tun0 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 3128".into(),
            decided: vec![],
        };
        r.source.changed = vec![crate::report::wire::Change {
            between: "decap->egress".into(),
            kind: crate::verdict::ChangeKind::Proxy,
            before: "198.18.90.42:40001".into(),
            after: "198.18.10.2:56984".into(),
            before_name: None,
            after_name: None,
            rule: Some(rule),
            rule_note: None,
            conntrack: None,
        }];
        let by = ", by `-A PREROUTING … -j REDIRECT --to-ports 3128` (rules-pod.txt:15)";
        r.explanation = format!(
            "a proxy opened a new connection between decap and egress: client 198.18.90.42:40001 became \
             198.18.10.2:56984{by}"
        );
        assert_eq!(contradictions(&r), Vec::<String>::new());
        let mut other = r.clone();
        other.explanation = other.explanation.replace(":15)", ":16)");
        assert!(contradictions(&other)[0].contains("not by that rule"), "{:?}", contradictions(&other));
        let mut other = r.clone();
        other.explanation = other.explanation.replace(by, "");
        assert_eq!(contradictions(&other).len(), 1, "the rule field set, the clause silent");
        other.source.changed[0].rule = None;
        assert_eq!(contradictions(&other), Vec::<String>::new());
    }

    #[test]
    fn a_kept_clause_is_borne_out_only_by_its_side_s_kept_host_and_rule_note() {
        let mut r = wire().into_iter().find(|r| r.explanation.contains(" unchanged through ")).unwrap();
        let note = "no rule translates it: `-A X -d 10.0.0.0/8 -j RETURN` (r:3) came first, before `-A X -j \
                    MASQUERADE` (line 4), `-A POSTROUTING -o be0 -j MASQUERADE` (r:9): -o be0 did not match: it \
                    left on eth1";
        r.source.kept =
            vec![crate::report::wire::Kept { at: "egress->backend".into(), rule_note: note.into() }];
        let clause = "source kept at egress->backend: no rule translates it: `-A X -d 10.0.0.0/8 -j RETURN` \
                      (r:3) came first, before `-A X -j MASQUERADE` (line 4)";
        r.explanation = r.explanation.replacen("; ", &format!("; {clause}; "), 1);
        assert_eq!(contradictions(&r), Vec::<String>::new(), "{}", r.explanation);
        // another host, another note, the other side: each is found
        let mut other = r.clone();
        other.source.kept[0].at = "decap->egress".into();
        assert!(
            contradictions(&other)[0].contains("source.kept has no such host"),
            "{:?}",
            contradictions(&other)
        );
        let mut other = r.clone();
        other.source.kept[0].rule_note = "no rule translates it: `-A Y -j RETURN` (r:3)".into();
        assert_eq!(contradictions(&other).len(), 1);
        let mut other = r.clone();
        other.destination.kept = std::mem::take(&mut other.source.kept);
        assert_eq!(contradictions(&other).len(), 1);
        let mut other = r.clone();
        other.explanation = other.explanation.replace("source kept at", "destination kept at");
        assert_eq!(contradictions(&other).len(), 1);
    }

    #[test]
    fn a_request_seen_at_one_capture_with_a_reply_there_names_that_capture_not_a_path() {
        let mut f = findings();
        let r = &mut f.requests[0];
        for h in r.captures.iter_mut().skip(1) {
            *h = crate::verdict::Hop::unseen();
        }
        (r.source, r.destination, r.matches) = (Vec::new(), Vec::new(), Vec::new());
        r.reply.path = ReplyPath::SamePath;
        r.identity = None;
        r.data = None;
        let wire = to_wire::findings(&f).requests.remove(0);
        assert!(wire.explanation.contains("; reply seen at decap"), "{}", wire.explanation);
        assert!(!wire.explanation.contains("same path"), "{}", wire.explanation);
        assert_eq!(contradictions(&wire), Vec::<String>::new(), "{}", wire.explanation);
    }
}
