//! One sentence per request that a person can paste into a ticket: what changed
//! where, how the reply travelled, how it ended, naming boundaries by their
//! labels and adding the usual reading when the labels are the conventional
//! `decap`, `egress`, `backend`. Takes a typed request and the run's labels;
//! gives the `explanation` text of CSV and JSON. Never decides a verdict.

use crate::report::icmp::IcmpCause;
use crate::report::words::Words;
use crate::verdict::{
    Added, AttemptEnd, Between, CarrierKind, ChangeKind, DataPath, Evidence, FragLoss, Identity, LostCause,
    Origin, OutcomeKind, ReplyPath, Request, Segment, StrayPacket, Strength, UnexpectedSource,
};

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

/// `with_reading(&w.between(b))`, written straight from the two labels (it
/// is part of most requests' explanation): `between A and B (reading)`.
fn between_read(w: &Words<'_>, b: Between) -> String {
    let mut text = String::with_capacity(64);
    push_between_read(w, &mut text, b);
    text
}

/// Appends [`between_read`]'s text to `out`.
fn push_between_read(w: &Words<'_>, out: &mut String, b: Between) {
    let (from, to) = (w.label(b.from), w.label(b.to));
    // A label holding `->` (a pattern search costs more than these short labels).
    let arrow = |l: &str| l.as_bytes().windows(2).any(|p| p == b"->");
    if arrow(from) || arrow(to) {
        out.push_str(&with_reading(&w.between(b)));
        return;
    }
    let reading = match (from, to) {
        ("decap", "egress") => Some("the pod itself translates"),
        ("egress", "backend") => Some("downstream of the pod"),
        ("decap", "backend") => Some("in the pod or downstream of it"),
        _ => None,
    };
    for part in ["between ", from, " and ", to] {
        out.push_str(part);
    }
    if let Some(r) = reading {
        for part in [" (", r, ")"] {
            out.push_str(part);
        }
    }
}

/// The WHERE of the host files for what lies between capture `c` and the
/// next: the host of a split capture (`node` between `node(in)` and
/// `node(out)`), else the boundary `A->B`.
fn place(w: &Words<'_>, c: usize) -> String {
    let (a, b) = (w.label(c), w.label(c + 1));
    match (a.strip_suffix("(in)"), b.strip_suffix("(out)")) {
        (Some(x), Some(y)) if x == y => x.to_string(),
        _ => format!("{a}->{b}"),
    }
}

/// An ICMP error quoting the reply, said by what its code can mean: net
/// unreachable (IPv4 3/0, ICMPv6 1/0) names a box without a route back to
/// the reply's receiver; host (address) unreachable (IPv4 3/1, ICMPv6 1/3)
/// is either no route or a next hop that did not answer its neighbour
/// resolution — which of the two, only the box's routes and neighbours say.
fn lost_cause_words(w: &Words<'_>, r: &Request, l: LostCause) -> String {
    let by = w.addr(l.by);
    let (ty, code) = (l.icmp.ty, l.icmp.code);
    // The reply goes to the client endpoint as that capture saw it.
    let to = r.captures.get(l.seen_at).and_then(|h| h.client);
    let (net, host) = if l.by.is_ipv6() {
        (ty == 1 && code == 0, ty == 1 && code == 3)
    } else {
        (ty == 3 && code == 0, ty == 3 && code == 1)
    };
    match to {
        Some(to) if net => format!(
            "{by} has no route back to {}: it answered the backend's reply with ICMP {ty}/{code}",
            w.addr(to.addr)
        ),
        Some(to) if host => format!(
            "{by} could not deliver the reply to {}: it answered the backend's reply with ICMP {ty}/{code} \
             (host unreachable: no route, or the next hop did not answer)",
            w.addr(to.addr)
        ),
        _ => format!(
            "{by} answered the backend's reply with ICMP {ty}/{code} (seen at {})",
            w.label(l.seen_at)
        ),
    }
}

/// A reply from elsewhere: what the client does with it, and the two usual causes.
fn unexpected_source_words(w: &Words<'_>, r: &Request, u: UnexpectedSource) -> String {
    let (does, what) = match u.packet {
        StrayPacket::SynAck => ("rejects", "a SYN-ACK"),
        StrayPacket::Data => ("rejects", "data"),
        StrayPacket::Rst => ("ignores", "a RST"),
        StrayPacket::Datagram => ("ignores", "a datagram"),
        StrayPacket::EchoReply => ("ignores", "an echo reply"),
    };
    let sent_to =
        r.captures.get(u.seen_at).and_then(|h| h.server).map_or_else(|| "?".to_string(), |e| w.endpoint(e));
    format!(
        "the client {does} {what} from {}: it sent to {sent_to} — reply not translated back, or answered from \
         another address (seen at {})",
        w.endpoint(u.from),
        w.label(u.seen_at)
    )
}

/// Fragments lost at a boundary: how many of how many, of what, where, and
/// the largest fragment that still passed (issue 32).
fn fragment_words(w: &Words<'_>, l: &FragLoss, parts: &mut Vec<String>) {
    let (s, a) = (l.sent, l.arrived);
    let kind = if l.to_server { "" } else { "reply " };
    let what = if s.datagrams == 1 {
        format!("a {kind}datagram of {} bytes", s.largest_datagram)
    } else {
        format!("{} {kind}datagrams of up to {} bytes", s.datagrams, s.largest_datagram)
    };
    // The counts compare only while every datagram reached both sides.
    parts.push(if a.fragments < s.fragments && a.datagrams == s.datagrams {
        format!(
            "{} of {} fragments of {what} lost {}",
            s.fragments - a.fragments,
            s.fragments,
            between_read(w, l.between)
        )
    } else {
        let (from, to) =
            if l.to_server { (l.between.from, l.between.to) } else { (l.between.to, l.between.from) };
        format!(
            "{} of {} fragmented {kind}datagrams arrived incomplete at {}, whole at {}",
            a.incomplete,
            a.datagrams,
            w.label(to),
            w.label(from)
        )
    });
    parts.push(format!("the largest fragment that passed was {} bytes", a.largest_fragment));
}

/// How a carrier is called: `PROXY v1`, `X-Forwarded-For`, ...
pub fn carrier_name(k: CarrierKind) -> &'static str {
    match k {
        CarrierKind::ProxyV1 => "PROXY v1",
        CarrierKind::ProxyV2 => "PROXY v2",
        CarrierKind::Forwarded => "Forwarded",
        CarrierKind::XForwardedFor => "X-Forwarded-For",
        CarrierKind::XRealIp => "X-Real-IP",
    }
}

/// Who the backend thinks the client is, who put it there, and whether to trust it.
pub fn identity_words(w: &Words<'_>, r: &Request, i: &Identity) -> String {
    let client = r.captures.first().and_then(|h| h.client);
    let client_addr = client.map_or_else(|| "?".to_string(), |c| w.addr(c.addr));
    let Some(c) = i.carried else {
        return if i.preserved {
            format!(
                "no identity carrier reached {}: the backend sees the client {}",
                w.label(i.at),
                w.endpoint(i.peer)
            )
        } else {
            format!(
                "no identity carrier reached {}: the backend sees {} as the client, not {client_addr}",
                w.label(i.at),
                w.endpoint(i.peer)
            )
        };
    };
    let name = carrier_name(c.kind);
    let carried = c.addr.map_or_else(
        || "an unknown address".to_string(),
        |addr| w.endpoint(crate::verdict::Endpoint { addr, port: c.port }),
    );
    let mut text = match i.added {
        Some(Added::ClientSide) => format!(
            "{name} {carried} arrived from the client side at {}: the backend must not trust it",
            w.label(0)
        ),
        Some(Added::Between(b)) => {
            let through = match r.source.iter().map(|s| s.kind).find(|k| *k != ChangeKind::PortOnly) {
                // every kind named: a new one must choose its words here
                Some(ChangeKind::Proxy) => " through the proxy",
                Some(ChangeKind::Snat) => " through SNAT",
                Some(ChangeKind::Dnat) => " through DNAT",
                Some(ChangeKind::PortOnly) | None => "",
            };
            let verdict = match (i.preserved, c.addr) {
                (true, _) => format!(" = the client: identity preserved{through}"),
                (false, None) => ": the backend cannot tell who the client is".to_string(),
                (false, Some(_)) => {
                    format!(", not the client {client_addr}: the backend sees the wrong client")
                }
            };
            format!("{name} added between {} carries {carried}{verdict}", w.between_words(b))
        }
        None => format!("{name} carries {carried} at {}", w.label(i.at)),
    };
    if let (Some(set), Some(Added::Between(_))) = (i.client_set, i.added) {
        text.push_str(&format!(
            "; its first element {} was set by the client side: the backend must not trust it",
            w.addr(set)
        ));
    }
    text
}

/// A capture that saw the exchange but none of the client's datagrams.
/// "fewer datagrams to the server at B (6) than at A (7)": a capture that
/// saw some of a UDP request's datagrams, fewer than the capture before it
/// that saw the request (lost between them, or sent before it started).
fn fewer_datagrams(w: &Words<'_>, r: &Request) -> Vec<String> {
    let mut out = Vec::new();
    let mut before: Option<(usize, u64)> = None;
    for (c, h) in r.captures.iter().enumerate() {
        let Some(n) = h.packets_to_server.filter(|_| h.seen) else { continue };
        if let Some((b, m)) = before.filter(|&(_, m)| n > 0 && n < m) {
            out.push(format!(
                "fewer datagrams to the server at {} ({n}) than at {} ({m})",
                w.label(c),
                w.label(b)
            ));
        }
        before = Some((c, n));
    }
    out
}

/// What a weak match rests on besides time: a request line or TLS server
/// name, else nothing.
pub fn weak_basis(evidence: &[Evidence]) -> Option<Evidence> {
    evidence.iter().copied().find(|e| matches!(e, Evidence::RequestLine | Evidence::Sni))
}

fn answer_only(h: &crate::verdict::Hop) -> bool {
    h.seen && h.packets_to_server == Some(0) && h.packets_to_client.is_some_and(|n| n > 0)
}

/// `b` or `b and c`, or `b, c and d`: the labels of blind captures.
/// The boundary a reset or ICMP error came in through (`outcome.origin`)
/// when no capture past its near side saw the request: then every reply on
/// the path came from that boundary, not from the server.
pub fn answered_in_between(r: &Request) -> Option<Between> {
    let Some(Origin::Between(b)) = r.outcome.origin else { return None };
    let answer = matches!(r.outcome.kind, OutcomeKind::Reset | OutcomeKind::IcmpError);
    let stopped = r.captures.iter().rposition(|h| h.seen) == Some(b.from);
    (answer && stopped).then_some(b)
}

pub fn blind_labels(w: &Words<'_>, blind: &[usize]) -> String {
    let labels: Vec<&str> = blind.iter().map(|&c| w.label(c)).collect();
    match labels.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// `5 HTTP exchanges at decap, 4 answered, worst status 500, slowest:
/// exchange 3 after 2.0 s, exchange 5 (GET /x) got no response at decap: its
/// request reached backend, its response was read at backend and not at
/// egress`: the exchanges inside a connection that carried more than one
/// (or whose bytes could not all be read), from the capture nearest the
/// client that read them (see `verdict::Exchanges`).
pub fn exchanges_words(w: &Words<'_>, x: &crate::verdict::Exchanges) -> Option<String> {
    let c = x.counts.iter().find(|c| c.capture == x.at)?;
    if c.requests < 2 && c.complete {
        return None;
    }
    let at = w.label(x.at);
    let mut text = if c.complete {
        format!("{} HTTP exchanges at {at}", c.requests)
    } else {
        format!("at least {} HTTP exchanges at {at} (bytes after that could not be read)", c.requests)
    };
    // A lower bound of requests says nothing of the ones not read: never "all".
    if !c.complete {
        text.push_str(&format!(", at least {} answered", c.responses));
    } else if c.responses == c.requests {
        text.push_str(", all answered");
    } else {
        text.push_str(&format!(", {} answered", c.responses));
    }
    if let Some(s) = x.worst_status {
        text.push_str(&format!(", worst status {s}"));
    }
    if let (Some((n, took)), true) = (x.slowest, c.requests >= 2) {
        text.push_str(&format!(", slowest: exchange {n} after {:.1} s", took as f64 / 1e9));
    }
    if let Some(u) = &x.unanswered {
        text.push_str(&format!(", exchange {}", u.n));
        if let Some(e) = x.list.get(u.n as usize - 1) {
            let text_of = |b: &[u8]| crate::flows::facts::escape(b, usize::MAX, b"");
            text.push_str(&format!(" ({} {})", text_of(e.method()), text_of(e.target())));
        }
        text.push_str(&format!(" got no response at {at}"));
        if u.open {
            // Not "never answered": the capture may have stopped first.
            text.push_str(" (which saw no FIN from the server and no RST: the capture may have ended before a response)");
        }
        text.push_str(&format!(": its request reached {}, ", w.label(u.request_reached)));
        let read: Vec<usize> = x.counts.iter().map(|c| c.capture).collect();
        if u.response_seen.is_empty() {
            text.push_str(&format!(
                "no capture read a response to it ({} read the connection)",
                blind_labels(w, &read)
            ));
        } else {
            let missing: Vec<usize> =
                (x.counts.iter()).filter(|c| c.complete && c.responses < u.n).map(|c| c.capture).collect();
            text.push_str(&format!("its response was read at {}", blind_labels(w, &u.response_seen)));
            if !missing.is_empty() {
                text.push_str(&format!(" and not at {}", blind_labels(w, &missing)));
            }
        }
    }
    Some(text)
}

/// `backend holds a flow tied to it …`: the captures of `apart` (see
/// `Request::apart`), which hold a flow tied to it that matching by time
/// left apart (a clock step the usual suspect: the warning says so).
pub fn apart_words(w: &Words<'_>, apart: &[usize]) -> String {
    format!(
        "{} {} a flow tied to it without time (ISN, first datagram, echo or sequence numbers) that matching \
         by time left apart",
        blind_labels(w, apart),
        if apart.len() == 1 { "holds" } else { "hold" }
    )
}

/// `egress holds a flow with the same endpoints …`: the captures of
/// `same_tuple` (see `Request::same_tuple`), whose unmatched flow of the same
/// endpoints and time matching did not tie to the request.
pub fn same_tuple_words(w: &Words<'_>, at: &[usize]) -> String {
    format!(
        "{} {} a flow with the same endpoints at the same time that matching did not tie to it",
        blind_labels(w, at),
        if at.len() == 1 { "holds" } else { "hold" }
    )
}

/// `reply seen at backend but not at egress: a return route, the
/// reverse-path filter or a filter rule between them (--routes, --sysctl,
/// --rules 'egress->backend=…' decide which)`: a reply lost between `b`'s
/// captures and what can drop it there, unless the hosts' files given said
/// why (`loss`) or the reply left a host by another interface (said apart).
pub(crate) fn reply_lost_words(w: &Words<'_>, r: &Request, b: crate::verdict::Between) -> String {
    let decided = w.why.and_then(|x| x.loss(r.request)).is_some() || reply_left_by(w, r, b.to).is_some();
    let why = if decided {
        String::new()
    } else {
        format!(
            ": a return route, the reverse-path filter or a filter rule between them \
             (--routes, --sysctl, --rules '{}=…' decide which)",
            place(w, b.from)
        )
    };
    format!("reply seen at {} but not at {}{why}", w.label(b.to), w.label(b.from))
}

/// `, by `-A POSTROUTING … -j MASQUERADE` (nat.rules:41)` when `--rules`
/// named the change's rule (its `rule` field; for a proxy's change, the
/// `-j REDIRECT` that sent the client's connection to it); else nothing.
pub(crate) fn by_rule(
    w: &Words<'_>,
    r: &Request,
    side: crate::why::attach::Side,
    c: &crate::verdict::Change,
) -> String {
    let found = w.why.and_then(|x| x.of(r.request, side, c.between)).and_then(|y| y.rule.as_ref());
    match found {
        Some(crate::why::eval::Found::Rule { rule, .. }) => {
            format!(", by `{}` ({}:{})", crate::why::eval::short_rule(&rule.text), rule.file, rule.line)
        }
        _ => String::new(),
    }
}

/// `source kept at egress->backend: no rule translates it: `…` (f:18) came
/// first, before `…` (line 19)` for each host whose `--rules` say why a side
/// crossed it unchanged (its `kept` field, up to the first deciding rule).
fn kept_words(w: &Words<'_>, r: &Request) -> Vec<String> {
    use crate::why::attach::{kept_clause, Side};
    let Some(why) = w.why else { return Vec::new() };
    let mut out = Vec::new();
    for (side, name) in [(Side::Source, "source"), (Side::Destination, "destination")] {
        for (at, f) in why.kept(r.request, side) {
            if let Some(clause) = kept_clause(f) {
                out.push(format!("{name} kept at {at}: {clause}"));
            }
        }
    }
    out
}

/// The host of a split capture whose in-side is capture `c` (`node` of
/// `node(in)`) when the request was seen entering it there and never at its
/// out-side, which recorded while the request ran: dropped inside the host.
pub(crate) fn dropped_inside<'w>(w: &Words<'w>, r: &Request, c: usize) -> Option<&'w str> {
    let host = w.label(c).strip_suffix("(in)")?;
    let out = r.captures.get(c + 1)?;
    let dropped = w.label(c + 1).strip_suffix("(out)") == Some(host)
        && r.captures[c].seen
        && !out.seen
        && !r.blind.contains(&(c + 1));
    dropped.then_some(host)
}

/// The host of a split capture whose in-side is capture `c`, and the
/// interfaces the reply left it by and the request came in by, when they differ.
pub(crate) fn reply_left_by<'a, 'w>(
    w: &Words<'w>,
    r: &'a Request,
    c: usize,
) -> Option<(&'w str, &'a str, &'a str)> {
    let host = w.label(c).strip_suffix("(in)")?;
    let h = r.captures.get(c)?;
    Some((host, h.reply_iface()?, h.iface()?))
}

/// What the sides of a split capture (a forwarding host, `node(in)` and
/// `node(out)`) say of the request: that it entered the host and was never
/// seen leaving it, and that its reply left the host by another interface
/// than the request came in by. Read back by `consistency` from the hops'
/// `seen`, `iface` and `reply_iface`.
fn fork_words(w: &Words<'_>, r: &Request) -> Vec<String> {
    let mut out = Vec::new();
    for c in 0..r.captures.len() {
        if let Some(host) = dropped_inside(w, r, c) {
            let by = r.captures[c].iface().map_or(String::new(), |i| format!(" by {i}"));
            out.push(format!("dropped inside {host}: seen entering it{by}, never seen leaving it"));
        }
        if let Some((host, answered, asked)) = reply_left_by(w, r, c) {
            out.push(format!(
                "the reply left {host} by {answered}, not by {asked} where the request came in: {host}'s route back to the client"
            ));
        }
    }
    out
}

pub fn explain(w: &Words<'_>, r: &Request) -> String {
    let mut parts: Vec<String> = Vec::new();
    // `source A -> B between X and Y (reading), by `rule``: the usual first
    // clause, pushed piece by piece (no format machinery, one allocation).
    let moved = |what: &str, c: &crate::verdict::Change, side| {
        let mut s = String::with_capacity(128);
        s.push_str(what);
        w.push_endpoint(&mut s, c.before);
        s.push_str(" -> ");
        w.push_endpoint(&mut s, c.after);
        s.push(' ');
        push_between_read(w, &mut s, c.between);
        s.push_str(&by_rule(w, r, side, c));
        s
    };
    for c in &r.source {
        parts.push(match c.kind {
            ChangeKind::Proxy => {
                format!(
                    "a proxy opened a new connection {}: client {} became {}{}",
                    between_read(w, c.between),
                    w.endpoint(c.before),
                    w.endpoint(c.after),
                    by_rule(w, r, crate::why::attach::Side::Source, c)
                )
            }
            _ => moved("source ", c, crate::why::attach::Side::Source),
        });
    }
    for c in &r.destination {
        parts.push(moved("destination ", c, crate::why::attach::Side::Destination));
    }
    if parts.is_empty() {
        let seen: Vec<&str> =
            (0..r.captures.len()).filter(|&i| r.captures[i].seen).map(|i| w.label(i)).collect();
        let client = r.captures.iter().find_map(|h| h.client).map_or_else(String::new, |c| w.endpoint(c));
        if seen.len() > 1 {
            parts.push(format!("source {client} unchanged through {}", seen.join(", ")));
        } else {
            let next = w.labels.get(1).copied().unwrap_or("the next capture");
            if r.blind.contains(&1) {
                parts.push(format!(
                    "request from {client} seen only at {}; {next} recorded nothing while it ran",
                    seen.join(", ")
                ));
            } else if r.apart.contains(&1) {
                parts.push(format!(
                    "request from {client} seen only at {}; {}",
                    seen.join(", "),
                    apart_words(w, &[1])
                ));
            } else if r.same_tuple.contains(&1) {
                // said below, with any other capture holding such a flow
                parts.push(format!("request from {client} seen only at {}", seen.join(", ")));
            } else {
                parts.push(format!("request from {client} seen only at {}, not at {next}", seen.join(", ")));
            }
        }
    }
    if !r.same_tuple.is_empty() {
        parts.push(same_tuple_words(w, &r.same_tuple));
    }
    // A capture holding the request's flow apart (its clock): what happened
    // there is unknown, said once — here unless the reply or the origin of a
    // RST or ICMP error says it below.
    let later = |c: usize| match () {
        _ if r.reply.path == ReplyPath::NoReply => r.reply.reached.is_some_and(|at| c > at),
        _ => {
            matches!(r.outcome.kind, OutcomeKind::Reset | OutcomeKind::IcmpError)
                && r.outcome.origin.is_none()
                && r.blind.is_empty()
        }
    };
    let one_seen = r.captures.iter().filter(|h| h.seen).count() == 1;
    let apart: Vec<usize> =
        (r.apart.iter().copied()).filter(|&c| !(later(c) || (one_seen && c == 1))).collect();
    if !apart.is_empty() {
        parts.push(format!("{}: what it became there is unknown", apart_words(w, &apart)));
    }
    parts.extend(kept_words(w, r));
    if let Some(i) = r.identity.as_deref() {
        parts.push(identity_words(w, r, i));
    }
    // UDP seen from its answer only (the query lost before that capture, or
    // not captured there): the change there is read off the answer.
    if r.proto == crate::verdict::Proto::Udp {
        let answer_only: Vec<usize> =
            (0..r.captures.len()).filter(|&c| answer_only(&r.captures[c])).collect();
        if !answer_only.is_empty() {
            parts.push(format!(
                "the query was not seen at {}, only its answer",
                blind_labels(w, &answer_only)
            ));
        }
        parts.extend(fewer_datagrams(w, r));
    }
    for x in &r.seq_shift {
        let moved: Vec<String> = [("client", x.client), ("server", x.server)]
            .iter()
            .filter_map(|&(side, by)| by.map(|n| format!("{side} {n:+}")))
            .collect();
        let by = if moved.is_empty() { String::new() } else { format!(" ({})", moved.join(", ")) };
        parts.push(format!(
            "sequence numbers shifted by a middlebox between {}{by}",
            w.between_words(x.between)
        ));
    }
    let only_at = match r.captures.iter().filter(|h| h.seen).count() {
        1 => r.captures.iter().position(|h| h.seen),
        _ => None,
    };
    parts.push(match r.reply.path {
        // Seen at one capture only: a reply there, no path to speak of.
        ReplyPath::SamePath => match (only_at, answered_in_between(r)) {
            (Some(c), _) => format!("reply seen at {}", w.label(c)),
            // The request stopped where the reset or ICMP error came in: what
            // came back is that, not the server's reply.
            (None, Some(b)) => format!(
                "the request went no further than {}, and what returned on the same path came from between {}",
                w.label(b.from),
                w.between_words(b)
            ),
            (None, None) => "reply returned on the same path".to_string(),
        },
        ReplyPath::ReplyLost => match r.reply.lost_between {
            Some(b) => reply_lost_words(w, r, b),
            None => "reply seen at  but not at ".to_string(),
        },
        ReplyPath::Bypassed => format!(
            "reply bypassed {} (replies on both sides of it): asymmetric return route",
            r.reply.bypassed.map_or("", |c| w.label(c))
        ),
        ReplyPath::NoReply => {
            let mut text = format!(
                "no reply at any capture; the request got as far as {}",
                r.reply.reached.map_or("?", |c| w.label(c))
            );
            let after: Vec<usize> =
                (r.blind.iter().copied()).filter(|&b| r.reply.reached.is_some_and(|c| b > c)).collect();
            if !after.is_empty() {
                text.push_str(&format!(
                    ", and whether it went further is unknown: {} recorded nothing while it ran",
                    blind_labels(w, &after)
                ));
            }
            let apart: Vec<usize> =
                (r.apart.iter().copied()).filter(|&b| r.reply.reached.is_some_and(|c| b > c)).collect();
            if !apart.is_empty() {
                let and = if after.is_empty() { ", and whether it went further is unknown: " } else { "; " };
                text.push_str(&format!("{and}{}", apart_words(w, &apart)));
            }
            // stopped before the next capture, which recorded while it ran:
            // the files that decide why, unless given and said (`loss`)
            let decided = w.why.and_then(|x| x.loss(r.request)).is_some();
            if let Some(c) = r.reply.reached.filter(|&c| c + 1 < r.captures.len() && after.is_empty() && apart.is_empty() && !decided) {
                text.push_str(&format!(", not beyond: --routes, --sysctl, --rules '{}=…' decide why", place(w, c)));
            }
            text
        }
    });
    parts.extend(fork_words(w, r));
    if let Some(l) = w.why.and_then(|x| x.loss(r.request)) {
        parts.push(format!("lost at {}: {}", l.at, crate::why::lost::note(l)));
    }
    if let Some(p) = w.why.and_then(|x| x.predicted.get(&r.request)) {
        parts.push(match p.after {
            Some(a) if a != p.today => {
                format!("after the change at {}: source {} instead of {} ({})", p.at, a, p.today, p.reason)
            }
            Some(_) => format!("after the change at {}: source {} as today ({})", p.at, p.today, p.reason),
            None => format!("after the change at {}: source {}", p.at, p.reason),
        });
    }
    if let Some(l) = r.reply.lost_cause {
        parts.push(lost_cause_words(w, r, l));
    }
    if let Some(u) = r.reply.unexpected_source {
        parts.push(unexpected_source_words(w, r, u));
    }
    if let Some(d) = &r.data {
        data_words(w, r, d, &mut parts);
    }
    for l in r.fragments.iter().flat_map(|f| &f.lost) {
        fragment_words(w, l, &mut parts);
    }
    if let Some(x) = r.exchanges.as_deref() {
        parts.extend(exchanges_words(w, x));
    }
    // Who sent a RST or ICMP error and where it came in (words for those two only).
    let by = || r.outcome.by.map_or_else(|| "?".to_string(), |a| w.addr(a));
    let (entered, injected) = (
        || match r.outcome.origin {
            Some(Origin::Between(b)) => format!("entering {}", between_read(w, b)),
            Some(Origin::Capture(c)) => format!("first seen at {}", w.label(c)),
            None if !r.blind.is_empty() => format!(
                "where it entered the path is unknown: {} recorded nothing while this request ran",
                blind_labels(w, &r.blind)
            ),
            None if !r.apart.is_empty() => {
                format!("where it entered the path is unknown: {}", apart_words(w, &r.apart))
            }
            None => "first seen at ?".to_string(),
        },
        matches!(r.outcome.origin, Some(Origin::Between(_))),
    );
    match r.outcome.kind {
        OutcomeKind::Reset => {
            let (by, entered) = (by(), entered());
            let forged =
                if injected { ": forged in between (e.g. REJECT --reject-with tcp-reset)" } else { "" };
            parts.push(format!("reset by {by}, {entered}{forged}"));
        }
        OutcomeKind::IcmpError => {
            // The name, the lead and the closing words come from the typed cause
            // (type/code, sender, origin, the request's server), never from text.
            let (by, entered) = (by(), entered());
            parts.push(match crate::report::icmp::IcmpFacts::of(r) {
                Some(f) => {
                    let (name, cause) = (f.name(), f.cause());
                    let lead = if cause == IcmpCause::Policy { "rejected by" } else { "answered with" };
                    let mut text = match cause.words() {
                        Some(why) => format!("{lead} {name} from {by}, {entered}: {why}"),
                        None => format!("{lead} {name} from {by}, {entered}"),
                    };
                    if let (true, Some(Origin::Between(b))) = (f.in_servers_name(), r.outcome.origin) {
                        text.push_str(&format!(
                            "; {by} is the address the client sent to, yet {} never saw the error: a box \
                             between {} sent it in that name, not the server (a DNAT sends its own errors from \
                             the address it rewrote)",
                            w.label(b.to),
                            w.between_words(b)
                        ));
                    }
                    text
                }
                None => format!("answered with ICMP ? from {by}, {entered}"),
            });
        }
        OutcomeKind::HandshakeOnly => parts.push("handshake completed but the server sent nothing".into()),
        OutcomeKind::Midstream => parts.push("connection began before the capture (midstream)".into()),
        OutcomeKind::Completed | OutcomeKind::NoReply | OutcomeKind::DataStopped => {}
    }
    let at = |s: Strength| -> Vec<String> {
        r.matches.iter().filter(|m| m.strength == s).map(|m| w.between(m.between)).collect()
    };
    let ambiguous = at(Strength::Ambiguous);
    if !ambiguous.is_empty() {
        parts.push(format!("match at {} is ambiguous (identical requests)", ambiguous.join(", ")));
    }
    // weak matches by what they rest on: timing alone, or a request a
    // proxy passed on and the time it did
    for (basis, what) in [
        (Some(Evidence::RequestLine), "the same request line and timing only"),
        (Some(Evidence::Sni), "the same TLS server name and timing only"),
        (None, "time only"),
    ] {
        let weak: Vec<String> = r
            .matches
            .iter()
            .filter(|m| m.strength == Strength::Weak && weak_basis(&m.evidence) == basis)
            .map(|m| w.between(m.between))
            .collect();
        if !weak.is_empty() {
            parts.push(format!("match at {} is weak ({what})", weak.join(", ")));
        }
    }
    if let Some(m) = r.syn_missed {
        let first = if m.syns == 1 {
            "the first SYN was".to_string()
        } else {
            format!("the first {} SYNs were", m.syns)
        };
        parts.push(format!(
            "{first} not seen at {}; the retransmission at +{:.1} s was",
            w.label(m.at),
            m.after_ns as f64 / 1e9
        ));
    }
    if !r.attempts.is_empty() {
        parts.push(attempts_words(w, r));
    }
    parts.join("; ")
}

/// `earlier attempt at backend from 198.19.3.17:40000 to 198.19.96.10:80 (a
/// bare ACK came back, no SYN-ACK: the port was still in TIME_WAIT there?);
/// the connection got through from 198.19.3.17:40001`: the earlier attempts
/// in one sentence.
fn attempts_words(w: &Words<'_>, r: &Request) -> String {
    let tries: Vec<String> = (r.attempts.iter())
        .map(|a| {
            let ending = match a.ending {
                AttemptEnd::NoAnswer => "nothing came back",
                AttemptEnd::Rst => "reset",
                AttemptEnd::BareAck => {
                    "a bare ACK came back, no SYN-ACK: the port was still in TIME_WAIT there?"
                }
                AttemptEnd::HandshakeOnly => "handshake, no data",
            };
            format!("at {} from {} to {} ({ending})", w.label(a.capture), a.client, a.server)
        })
        .collect();
    let then = (r.attempts.last())
        .and_then(|a| r.captures.get(a.capture))
        .and_then(|h| h.client)
        .map_or_else(String::new, |c| format!("; the connection got through from {c}"));
    let what = match r.attempts.len() {
        1 => "earlier attempt".to_string(),
        n => format!("{n} earlier attempts"),
    };
    format!("{what} {}{then}", tries.join(", "))
}

/// `(5 × 1207 bytes)`: the largest segments at a capture.
fn sizes(s: Option<Segment>) -> String {
    s.map_or_else(String::new, |s| format!(" ({} × {} bytes)", s.count, s.bytes))
}

/// Where the data stopped each way, and the path-MTU messages about it.
fn data_words(w: &Words<'_>, r: &Request, d: &DataPath, parts: &mut Vec<String>) {
    let stopped = |b: Between| format!("stopped between {}", w.between_words(b));
    if let Some(b) = d.stopped {
        let seg = sizes(d.stopped_segment);
        parts.push(format!("the client's data{seg} {}", stopped(b)));
    }
    // A lost reply already says where the server's packets stopped.
    if let Some(b) = d.server_stopped.filter(|&b| r.reply.lost_between != Some(b)) {
        let seg = sizes(d.server_stopped_segment);
        parts.push(format!("the server's data{seg} {}", stopped(b)));
    }
    for (who, cut) in [("client", d.cut), ("server", d.server_cut)] {
        if let Some(c) = cut {
            parts.push(format!(
                "every {who} packet crossed between {}, cut to at most {} bytes (up to {} before): truncated, not stopped",
                w.between_words(c.between),
                c.after.bytes,
                c.before.bytes
            ));
        }
    }
    let Some(m) = &d.mtu else { return };
    let icmp = if m.v6 { "ICMPv6 2/0" } else { "ICMP 3/4" };
    let seen: Vec<&str> = m.seen_at.iter().map(|&c| w.label(c)).collect();
    let seen = seen.join(", ");
    let stuck = d.stopped.is_some() || d.server_stopped.is_some();
    let text = match (m.lost, stuck) {
        (Some(b), true) => format!(
            "{} asked for MTU {} ({icmp} ×{}, seen at {seen}, never at {}): path-MTU black hole between {} \
             — clamp the MSS on the tunnel or let {icmp} through",
            m.sender,
            m.mtu,
            m.messages,
            w.label(b.from),
            w.between_words(b)
        ),
        (None, true) => {
            format!("{} asked for MTU {} ({icmp} ×{}, seen at {seen})", m.sender, m.mtu, m.messages)
        }
        (lost, false) => {
            let lost = lost.map_or_else(String::new, |b| format!("; lost between {}", w.between_words(b)));
            format!("path MTU {} ({icmp} ×{} from {}, seen at {seen}{lost})", m.mtu, m.messages, m.sender)
        }
    };
    parts.push(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchanges(complete: bool, counts: [(u32, u32); 3]) -> crate::verdict::Exchanges {
        use crate::verdict::{Exchange, ExchangeCount, Exchanges, Unanswered};
        let mut list = vec![Exchange::new(b"GET", b"/a", 0), Exchange::new(b"GET", b"/drop", 1_000)];
        list[0].status = Some(200);
        let counts: Vec<ExchangeCount> = (counts.iter().enumerate())
            .map(|(capture, &(requests, responses))| ExchangeCount { capture, requests, responses, complete })
            .collect();
        let unanswered =
            complete.then(|| Unanswered { n: 2, request_reached: 2, response_seen: vec![2], open: false });
        Exchanges { at: 0, counts, list, worst_status: Some(200), slowest: Some((1, 5_000_000)), unanswered }
    }

    #[test]
    fn exchanges_say_where_an_unanswered_one_stopped_and_a_lower_bound_never_says_all() {
        let mut f = findings();
        f.requests[0].exchanges = Some(Box::new(exchanges(true, [(2, 1), (2, 1), (2, 2)])));
        assert_eq!(
            exchanges_words(&Words::new(&f), f.requests[0].exchanges.as_deref().unwrap()).unwrap(),
            "2 HTTP exchanges at decap, 1 answered, worst status 200, slowest: exchange 1 after 0.0 s, exchange 2 \
             (GET /drop) got no response at decap: its request reached backend, its response was read at backend \
             and not at decap and egress"
        );
        f.requests[0].exchanges = Some(Box::new(exchanges(false, [(2, 2), (2, 2), (2, 2)])));
        let text = exchanges_words(&Words::new(&f), f.requests[0].exchanges.as_deref().unwrap()).unwrap();
        assert!(
            text.starts_with("at least 2 HTTP exchanges at decap (bytes after that could not be read), at least 2 answered,"),
            "{text}"
        );
        // It reads back true against its own JSON fields (the checker runs in `to_wire`'s debug builds).
        let q = crate::report::to_wire::findings(&f);
        assert!(q.requests[0].explanation.contains(&text), "{}", q.requests[0].explanation);
    }

    #[test]
    fn an_unanswered_exchange_where_the_server_side_never_closed_says_the_capture_may_have_ended_first() {
        let mut f = findings();
        let mut x = exchanges(true, [(2, 1), (2, 1), (2, 2)]);
        x.unanswered.as_mut().unwrap().open = true;
        f.requests[0].exchanges = Some(Box::new(x));
        let text = exchanges_words(&Words::new(&f), f.requests[0].exchanges.as_deref().unwrap()).unwrap();
        assert!(
            text.contains(
                "exchange 2 (GET /drop) got no response at decap (which saw no FIN from the server and no RST: the \
                 capture may have ended before a response): its request reached backend,"
            ),
            "{text}"
        );
        // The checker holds the words to `open`, both ways.
        let mut q = crate::report::to_wire::findings(&f);
        assert!(q.requests[0].explanation.contains(&text), "{}", q.requests[0].explanation);
        let u = q.requests[0].exchanges.as_mut().and_then(|x| x.unanswered.as_mut()).unwrap();
        assert!(u.open);
        u.open = false;
        let said = crate::report::consistency::contradictions(&q.requests[0]);
        assert!(said.iter().any(|s| s.contains("unanswered.open is false")), "{said:?}");
    }

    #[test]
    fn lost_fragments_say_how_many_of_what_where_and_the_largest_that_passed() {
        let mut f = findings();
        f.requests[0].fragments = Some(Box::new(crate::report::fixtures::fragments_lost()));
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.contains(
                "; 3 of 6 fragments of a datagram of 8028 bytes lost between egress and backend (downstream of the \
                 pod); the largest fragment that passed was 1396 bytes"
            ),
            "{text}"
        );
        // The reply's, and counts that do not compare (the datagrams were cut otherwise there).
        let l = &mut f.requests[0].fragments.as_mut().unwrap().lost[0];
        l.to_server = false;
        (l.sent.datagrams, l.sent.fragments, l.arrived.datagrams, l.arrived.fragments) = (2, 12, 2, 14);
        let w = Words::new(&f);
        let text = explain(&w, &f.requests[0]);
        assert!(
            text.contains(
                "; 1 of 2 fragmented reply datagrams arrived incomplete at egress, whole at backend; the largest \
                 fragment that passed was 1396 bytes"
            ),
            "{text}"
        );
        // Every clause is borne out by the fields.
        let q = crate::report::to_wire::request(&w, &f.requests[0]);
        assert!(crate::report::consistency::contradictions(&q).is_empty());
    }

    #[test]
    fn a_boundary_reads_as_its_labels_with_the_usual_reading() {
        let mut f = crate::report::fixtures::findings();
        for labels in [
            ["decap", "egress", "backend"],
            ["pod", "node", "svc"],
            ["a->b", "c", "d-"],
            ["x-", ">y", "decap"],
        ] {
            for (c, l) in f.captures.iter_mut().zip(labels) {
                c.label = l.to_string();
            }
            let w = Words::new(&f);
            for (from, to) in [(0, 1), (1, 2), (0, 2), (2, 0)] {
                let b = Between { from, to };
                assert_eq!(between_read(&w, b), with_reading(&w.between(b)), "{labels:?} {from}->{to}");
            }
        }
        f.captures[0].label = "decap".into();
        f.captures[1].label = "egress".into();
        let w = Words::new(&f);
        assert_eq!(
            between_read(&w, Between { from: 0, to: 1 }),
            "between decap and egress (the pod itself translates)"
        );
    }
    use crate::report::fixtures::{black_hole, findings};
    use crate::verdict::Outcome;

    #[test]
    fn a_black_hole_names_where_the_data_stopped_the_mtu_its_sender_and_where_the_icmp_was_lost() {
        let f = black_hole();
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.contains("the client's data (5 × 1207 bytes) stopped between egress and backend"),
            "{text}"
        );
        assert!(
            text.contains(
                "198.19.1.1 asked for MTU 1100 (ICMP 3/4 ×51, seen at egress, never at decap): \
                 path-MTU black hole between decap and egress — clamp the MSS on the tunnel or let ICMP 3/4 through"
            ),
            "{text}"
        );
        assert!(!text.contains("the server sent nothing"), "{text}");
    }

    #[test]
    fn an_icmp_error_about_the_reply_names_the_box_without_a_route_back() {
        let mut f = findings();
        let text = explain(&Words::new(&f), &f.requests[1]);
        assert!(
            text.contains(
                "reply seen at backend but not at egress: a return route, the reverse-path filter or a filter \
                 rule between them (--routes, --sysctl, --rules 'egress->backend=…' decide which); \
                 198.19.3.1 could not deliver the reply to 198.19.3.17: it answered the backend's reply with \
                 ICMP 3/1 (host unreachable: no route, or the next hop did not answer)"
            ),
            "{text}"
        );
        // net unreachable: no route, and only that
        f.requests[1].reply.lost_cause.as_mut().unwrap().icmp.code = 0;
        let text = explain(&Words::new(&f), &f.requests[1]);
        assert!(
            text.contains(
                "198.19.3.1 has no route back to 198.19.3.17: it answered the backend's reply with ICMP 3/0"
            ),
            "{text}"
        );
        assert!(!explain(&Words::new(&f), &f.requests[0]).contains("answered the backend's reply"));
        // not an unreachable route: said as it is
        f.requests[1].reply.lost_cause.as_mut().unwrap().icmp.code = 13;
        let text = explain(&Words::new(&f), &f.requests[1]);
        assert!(
            text.contains("198.19.3.1 answered the backend's reply with ICMP 3/13 (seen at backend)"),
            "{text}"
        );
        assert!(!text.contains("no route back"), "{text}");
    }

    #[test]
    fn a_reply_from_elsewhere_says_what_the_client_does_with_it() {
        let mut f = findings();
        f.requests[1].reply.unexpected_source = Some(UnexpectedSource {
            from: crate::report::wire::endpoint_of("198.19.96.11:80").unwrap(),
            seen_at: 0,
            packet: StrayPacket::SynAck,
        });
        let text = explain(&Words::new(&f), &f.requests[1]);
        assert!(
            text.contains(
                "the client rejects a SYN-ACK from 198.19.96.11:80: it sent to 198.19.96.10:80 — reply not \
                 translated back, or answered from another address (seen at decap)"
            ),
            "{text}"
        );
        f.requests[1].reply.unexpected_source.as_mut().unwrap().packet = StrayPacket::Datagram;
        let text = explain(&Words::new(&f), &f.requests[1]);
        assert!(text.contains("the client ignores a datagram from 198.19.96.11:80"), "{text}");
        assert!(!explain(&Words::new(&f), &f.requests[0]).contains("reply not translated back"));
    }

    #[test]
    fn earlier_attempts_get_one_sentence_naming_the_tuple_the_ending_and_the_retry() {
        let f = findings();
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.ends_with(
                "earlier attempt at backend from 198.19.3.17:40111 to 198.19.96.10:80 (a bare ACK came \
                 back, no SYN-ACK: the port was still in TIME_WAIT there?); the connection got through from \
                 198.19.3.17:40112"
            ),
            "{text}"
        );
        assert!(!explain(&Words::new(&f), &f.requests[1]).contains("earlier attempt"));
    }

    #[test]
    fn identity_says_who_added_the_carrier_and_whether_to_trust_it() {
        use crate::report::fixtures::{proxied_identity, spoofed_identity};
        let mut f = findings();
        f.requests[0].identity = Some(Box::new(proxied_identity()));
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.contains(
                "PROXY v1 added between egress and backend carries 198.18.90.42:51514 = the client: \
                 identity preserved through SNAT"
            ),
            "{text}"
        );
        f.requests[0].identity = Some(Box::new(spoofed_identity()));
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.contains(
                "X-Forwarded-For 203.0.113.9 arrived from the client side at decap: the backend must not trust it"
            ),
            "{text}"
        );
        // Added by a proxy, but not the client: flagged; a client-set first element named.
        let mut wrong = proxied_identity();
        wrong.carried.as_mut().unwrap().addr = Some("198.18.90.43".parse().unwrap());
        (wrong.preserved, wrong.client_set) = (false, Some("203.0.113.9".parse().unwrap()));
        f.requests[0].identity = Some(Box::new(wrong));
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.contains(
                "carries 198.18.90.43:51514, not the client 198.18.90.42: the backend sees the wrong client; \
                 its first element 203.0.113.9 was set by the client side"
            ),
            "{text}"
        );
        let mut lost = proxied_identity();
        (lost.carried, lost.added, lost.preserved) = (None, None, false);
        f.requests[0].identity = Some(Box::new(lost));
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.contains(
                "no identity carrier reached backend: the backend sees 198.19.3.17:40112 as the client, not 198.18.90.42"
            ),
            "{text}"
        );
        assert!(!explain(&Words::new(&f), &f.requests[1]).contains("carrier"));
    }

    #[test]
    fn a_path_mtu_that_worked_is_a_trait_of_a_completed_request() {
        let mut f = black_hole();
        let r = &mut f.requests[0];
        r.outcome = Outcome::plain(OutcomeKind::Completed);
        let d = r.data.as_mut().unwrap();
        (d.stopped, d.stopped_segment, d.reached) = (None, None, Some(2));
        let m = d.mtu.as_mut().unwrap();
        (m.seen_at, m.lost, m.v6, m.messages) = (vec![0, 1], None, true, 2);
        let text = explain(&Words::new(&f), &f.requests[0]);
        assert!(
            text.ends_with("path MTU 1100 (ICMPv6 2/0 ×2 from 198.19.1.1, seen at decap, egress)"),
            "{text}"
        );
        assert!(!text.contains("stopped") && !text.contains("black hole"), "{text}");
    }
}

#[cfg(test)]
mod icmp_tests {
    use super::*;
    use crate::report::fixtures::findings;
    use crate::verdict::{IcmpCode, Outcome};

    /// The fixtures' request 3 (UDP 198.18.90.43:5353 → 198.19.96.11:53, seen
    /// at decap and egress) ended by this ICMP error; its explanation's last part.
    fn ending(by: &str, origin: Origin, ty: u8, code: u8) -> String {
        let mut f = findings();
        let r = f.requests.iter_mut().find(|r| r.request == 3).unwrap();
        r.outcome = Outcome {
            kind: OutcomeKind::IcmpError,
            by: Some(by.parse().unwrap()),
            origin: Some(origin),
            icmp: Some(IcmpCode { ty, code }),
        };
        let text = explain(&Words::new(&f), &f.requests[2]);
        // from the ICMP error's words on
        let at = ["rejected by ", "answered with "].iter().filter_map(|lead| text.rfind(lead)).max().unwrap();
        text[at..].to_string()
    }

    #[test]
    fn an_answer_from_where_the_request_stopped_is_not_called_the_servers_reply() {
        let reply = |edit: &dyn Fn(&mut crate::verdict::Request)| {
            let mut f = findings();
            edit(&mut f.requests[2]);
            let text = explain(&Words::new(&f), &f.requests[2]);
            text.split("; ").find(|p| p.contains("returned on the same path")).unwrap().to_string()
        };
        let stopped =
            "the request went no further than egress, and what returned on the same path came from \
                       between egress and backend";
        assert_eq!(reply(&|_| {}), stopped);
        assert_eq!(reply(&|r| r.outcome.kind = OutcomeKind::Reset), stopped);
        // The request seen past that boundary, the answer from a capture, or
        // not a reset or ICMP error: the path's reply.
        let edits: [&dyn Fn(&mut crate::verdict::Request); 3] =
            [&|r| r.captures[2].seen = true, &|r| r.outcome.origin = Some(Origin::Capture(1)), &|r| {
                r.outcome.kind = OutcomeKind::Completed
            }];
        for edit in edits {
            assert_eq!(reply(edit), "reply returned on the same path");
        }
    }

    #[test]
    fn each_icmp_cause_has_its_sentence_and_only_policy_says_policy() {
        let eb = Origin::Between(Between { from: 1, to: 2 });
        let last = Origin::Capture(2);
        let entering = "entering between egress and backend (downstream of the pod)";
        let in_name =
            "198.19.96.11 is the address the client sent to, yet backend never saw the error: a box \
                       between egress and backend sent it in that name, not the server (a DNAT sends its own \
                       errors from the address it rewrote)";
        for (by, origin, ty, code, want) in [
            ("198.19.3.1", eb, 3, 13, format!("rejected by ICMP admin-prohibited from 198.19.3.1, {entering}: policy, not path")),
            ("198.19.3.1", eb, 3, 10, format!("rejected by ICMP host prohibited from 198.19.3.1, {entering}: policy, not path")),
            ("198.19.3.1", eb, 3, 9, format!("rejected by ICMP net prohibited from 198.19.3.1, {entering}: policy, not path")),
            // the server's own address from beyond the last capture: a closed
            // port, not a policy; entering in between, a box in its name
            ("198.19.96.11", last, 3, 3, "answered with ICMP port unreachable from 198.19.96.11, first seen at backend: nothing listening on that port".to_string()),
            ("198.19.96.11", eb, 3, 3, format!("answered with ICMP port unreachable from 198.19.96.11, {entering}: sent by a host other than the server (a filter answering in its place); {in_name}")),
            ("198.19.3.9", last, 3, 3, "answered with ICMP port unreachable from 198.19.3.9, first seen at backend: nothing listening on that port".to_string()),
            ("198.19.3.1", eb, 3, 3, format!("answered with ICMP port unreachable from 198.19.3.1, {entering}: sent by a host other than the server (a filter answering in its place)")),
            ("198.19.3.1", eb, 3, 0, format!("answered with ICMP net unreachable from 198.19.3.1, {entering}: path: no route")),
            ("198.19.3.1", eb, 3, 1, format!("answered with ICMP host unreachable from 198.19.3.1, {entering}: path: no route")),
            ("198.19.96.11", last, 3, 2, "answered with ICMP protocol unreachable from 198.19.96.11, first seen at backend: protocol not supported by the server".to_string()),
            ("198.19.96.11", eb, 3, 2, format!("answered with ICMP protocol unreachable from 198.19.96.11, {entering}; {in_name}")),
            ("198.19.3.1", eb, 11, 0, format!("answered with ICMP TTL exceeded from 198.19.3.1, {entering}: path: TTL exceeded (a routing loop, or a TTL too small)")),
            // no rule: the type/code named, no cause
            ("198.19.3.1", eb, 3, 5, format!("answered with ICMP 3/5 from 198.19.3.1, {entering}")),
            ("198.19.96.11", eb, 3, 1, format!("answered with ICMP host unreachable from 198.19.96.11, {entering}; {in_name}")),
            // ICMPv6 numbers for an IPv6 sender
            ("2001:db8::1", eb, 1, 1, format!("rejected by ICMPv6 admin-prohibited from 2001:db8::1, {entering}: policy, not path")),
            ("2001:db8::1", eb, 1, 5, format!("rejected by ICMPv6 source address failed policy from 2001:db8::1, {entering}: policy, not path")),
            ("2001:db8::1", eb, 1, 6, format!("rejected by ICMPv6 reject route from 2001:db8::1, {entering}: policy, not path")),
            ("2001:db8::1", last, 1, 4, "answered with ICMPv6 port unreachable from 2001:db8::1, first seen at backend: nothing listening on that port".to_string()),
            ("2001:db8::1", eb, 1, 0, format!("answered with ICMPv6 no route from 2001:db8::1, {entering}: path: no route")),
            ("2001:db8::1", eb, 3, 0, format!("answered with ICMPv6 hop limit exceeded from 2001:db8::1, {entering}: path: TTL exceeded (a routing loop, or a TTL too small)")),
        ] {
            assert_eq!(ending(by, origin, ty, code), want, "{ty}/{code} from {by}");
        }
    }
}
