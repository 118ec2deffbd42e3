//! Findings → the summary printed after the table (or alone with `--summary`):
//! request patterns with counts, clock offsets, boundary traits, unmatched flows,
//! the client's address at the backend (`report::client_address`), warnings. Takes `Findings`; gives text lines, ordered by count (descending)
//! then text, so the same findings always print the same summary. Requests are
//! grouped by what their pattern reads (across cores) and each group is put into
//! words once. Never reads captures.

use crate::report::table::{paint, Style};
use crate::report::wire::{kept_word, round_ms};
use crate::report::wire::{WireName, ICMP_ID_CHANGED, PORTS_CHANGED, TOS_CHANGED, VLAN_CHANGED};
use crate::report::words::Words;
use crate::verdict::Kept;
use crate::verdict::{
    Added, Between, CarrierKind, Change, ChangeKind, Findings, IcmpCode, OffsetMethod, Origin, OutcomeKind,
    ReplyPath, Request,
};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::net::IpAddr;

/// One change as words, addresses without ports (ports are usually random).
pub fn change_phrase(w: &Words<'_>, side: &str, c: &Change) -> String {
    let (before, after) = (c.before.addr, c.after.addr);
    let at = w.between_words(c.between);
    match c.kind {
        ChangeKind::PortOnly => format!("{side} port remapped between {at}"),
        ChangeKind::Proxy => format!("new connection from {} between {at} (proxy)", w.addr(after)),
        ChangeKind::Snat | ChangeKind::Dnat if before == after => {
            format!("{side} port remapped between {at}")
        }
        ChangeKind::Snat | ChangeKind::Dnat => {
            format!("{side} {} → {} between {at}", w.addr(before), w.addr(after))
        }
    }
}

/// What happened to the replies, in words.
pub fn reply_phrase(w: &Words<'_>, r: &Request) -> String {
    let reply = &r.reply;
    match reply.path {
        // What came back came in where the request stopped (explain's reading).
        ReplyPath::SamePath => match crate::report::explain::answered_in_between(r) {
            Some(b) => format!("request went no further than {}", w.label(b.from)),
            None => "replies on the same path".to_string(),
        },
        ReplyPath::ReplyLost => match reply.lost_between {
            Some(b) => {
                let mut text = format!("reply seen at {}, lost before {}", w.label(b.to), w.label(b.from));
                if let Some((host, answered, _)) = crate::report::explain::reply_left_by(w, r, b.to) {
                    text.push_str(&format!(" (it left {host} by {answered})"));
                }
                text
            }
            None => "reply lost on the way back".to_string(),
        },
        ReplyPath::Bypassed => match reply.bypassed {
            Some(l) => format!("replies bypassed {}", w.label(l)),
            None => "replies bypassed a capture point".to_string(),
        },
        ReplyPath::NoReply => match reply.reached {
            Some(l) => match crate::report::explain::dropped_inside(w, r, l) {
                Some(host) => {
                    format!("no reply at any capture (request reached {}, dropped inside {host})", w.label(l))
                }
                None => format!("no reply at any capture (request reached {})", w.label(l)),
            },
            None => "no reply at any capture".to_string(),
        },
    }
}

/// How the request ended, in words; None for `completed` (the usual case) and
/// for `no-reply` when the reply phrase already says it.
pub fn outcome_phrase(w: &Words<'_>, r: &Request) -> Option<String> {
    let o = &r.outcome;
    let from = |what: String| {
        let mut s = what;
        if let Some(by) = o.by {
            s.push_str(&format!(" from {}", w.addr(by)));
        }
        match o.origin {
            Some(Origin::Between(b)) => s.push_str(&format!(", injected between {}", w.between_words(b))),
            Some(Origin::Capture(c)) => s.push_str(&format!(", sent at {}", w.label(c))),
            None if !r.blind.is_empty() => s.push_str(&format!(
                ", where it entered unknown ({} recorded nothing then)",
                crate::report::explain::blind_labels(w, &r.blind)
            )),
            None if !r.apart.is_empty() => s.push_str(&format!(
                ", where it entered unknown ({} left apart by time)",
                crate::report::explain::blind_labels(w, &r.apart)
            )),
            None => {}
        }
        s
    };
    match o.kind {
        OutcomeKind::Completed => None,
        OutcomeKind::NoReply if r.reply.path == ReplyPath::NoReply => None,
        OutcomeKind::NoReply => Some("no reply reached the client side".to_string()),
        OutcomeKind::HandshakeOnly => Some("handshake only, no data from the server".to_string()),
        OutcomeKind::Midstream => Some("midstream (no handshake captured)".to_string()),
        OutcomeKind::Reset => Some(from("reset".to_string())),
        OutcomeKind::DataStopped => Some(match r.data.as_ref().and_then(|d| d.stopped) {
            Some(b) => format!("client data stopped between {}", w.between_words(b)),
            None => "client data stopped".to_string(),
        }),
        OutcomeKind::IcmpError => {
            let mut s = from(match o.icmp {
                Some(i) => format!("ICMP error {}/{}", i.ty, i.code),
                None => "ICMP error ?".to_string(),
            });
            if let Some(why) = crate::report::icmp::icmp_cause(r).and_then(|c| c.words()) {
                s.push_str(": ");
                s.push_str(why);
            }
            Some(s)
        }
    }
}

/// Who the backend thinks the client is, for a pattern (no client address, so
/// requests of many clients share it).
pub fn identity_phrase(w: &Words<'_>, i: &crate::verdict::Identity) -> String {
    use crate::report::explain::carrier_name;
    use crate::verdict::Added;
    let Some(c) = i.carried else {
        return if i.preserved {
            "the backend sees the client (no identity carrier)".to_string()
        } else {
            format!("identity lost: no carrier reached {}", w.label(i.at))
        };
    };
    let name = carrier_name(c.kind);
    match (i.added, i.preserved) {
        (Some(Added::ClientSide), _) => format!("{name} set by the client side (not to be trusted)"),
        (Some(Added::Between(b)), true) => {
            format!("identity kept by {name} added between {}", w.between_words(b))
        }
        (Some(Added::Between(b)), false) => format!(
            "{name} added between {} carries {}, not the client",
            w.between_words(b),
            c.addr.map_or_else(|| "an unknown address".to_string(), |a| w.addr(a))
        ),
        (None, _) => format!("{name} at {}", w.label(i.at)),
    }
}

/// The pattern a request belongs to: source and destination changes (addresses
/// without ports), who the backend thinks the client is (only when a carrier
/// was seen), reply path and outcome, as one phrase.
pub fn pattern(w: &Words<'_>, r: &Request) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(r.source.iter().map(|c| change_phrase(w, "source", c)));
    parts.extend(r.destination.iter().map(|c| change_phrase(w, "destination", c)));
    let seen: Vec<usize> = (0..r.captures.len()).filter(|&i| r.captures[i].seen).collect();
    if parts.is_empty() && seen.len() == 1 && r.captures.len() > 1 {
        parts.push(format!("seen only at {}", w.label(seen[0])));
    } else if let (true, false, Some(&last)) = (parts.is_empty(), r.apart.is_empty(), seen.last()) {
        parts.push(format!("addresses unchanged as far as {}", w.label(last)));
    } else if parts.is_empty() {
        parts.push("addresses unchanged".to_string());
    }
    if !r.apart.is_empty() {
        let at: Vec<&str> = r.apart.iter().map(|&c| w.label(c)).collect();
        parts.push(format!(
            "unknown at {} (it holds a flow tied to it that matching by time left apart)",
            at.join(", ")
        ));
    }
    parts.extend(r.identity.as_deref().map(|i| identity_phrase(w, i)));
    parts.push(reply_phrase(w, r));
    parts.extend(outcome_phrase(w, r));
    parts.join(", ")
}

/// Stands for the client's address in a pattern's shape.
const CLIENT: &str = "\u{1}client\u{1}";

/// Patterns with their request counts: count descending, then text. Requests
/// that differ only by the client's own address share one pattern ("source of
/// 250 clients → 198.19.3.17 …"), so many clients behind one NAT read as one line.
pub fn patterns(findings: &Findings) -> Vec<(usize, String)> {
    let w = Words::new(findings);
    styled_patterns(&w, findings).into_iter().map(|(n, text, _)| (n, text)).collect()
}

/// What [`identity_phrase`] reads: at, carrier kind and address, added, preserved.
type IdentityKey = (usize, Option<(CarrierKind, Option<IpAddr>)>, Option<Added>, bool);

/// Everything [`pattern`] reads from a request, except the client's own address
/// when the pattern stands for it (the first source change, an address
/// translation that moved it). Requests with equal keys have one pattern up to
/// that address, so each key is put into words once, not once per request.
#[derive(PartialEq, Eq, Hash)]
struct PatternKey {
    /// Between, kind, before (None: the client, left out), after.
    source: Vec<(Between, ChangeKind, Option<IpAddr>, IpAddr)>,
    destination: Vec<(Between, ChangeKind, IpAddr, IpAddr)>,
    seen: Vec<bool>,
    apart: Vec<usize>,
    identity: Option<IdentityKey>,
    reply: (ReplyPath, Option<Between>, Option<usize>, Option<usize>),
    outcome: (OutcomeKind, Option<IpAddr>, Option<Origin>, Option<IcmpCode>, Option<Between>),
    /// Why the ICMP error came back: it depends on the server, which the key has not.
    icmp_cause: Option<crate::report::icmp::IcmpCause>,
}

/// The first source change's address when the pattern stands for it: a
/// translation (not a proxy, not a port) that moved the client's address.
fn client_of(r: &Request) -> Option<IpAddr> {
    r.source.first().and_then(|c| {
        let moved = matches!(c.kind, ChangeKind::Snat | ChangeKind::Dnat) && c.before.addr != c.after.addr;
        moved.then_some(c.before.addr)
    })
}

impl PatternKey {
    fn of(r: &Request) -> PatternKey {
        let client = client_of(r);
        let change = |c: &Change| (c.between, c.kind, c.before.addr, c.after.addr);
        let source = r
            .source
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (c.between, c.kind, (i > 0 || client.is_none()).then_some(c.before.addr), c.after.addr)
            })
            .collect();
        PatternKey {
            source,
            destination: r.destination.iter().map(change).collect(),
            seen: r.captures.iter().map(|h| h.seen).collect(),
            apart: r.apart.clone(),
            identity: r
                .identity
                .as_deref()
                .map(|i| (i.at, i.carried.map(|c| (c.kind, c.addr)), i.added, i.preserved)),
            reply: (r.reply.path, r.reply.lost_between, r.reply.bypassed, r.reply.reached),
            outcome: (
                r.outcome.kind,
                r.outcome.by,
                r.outcome.origin,
                r.outcome.icmp,
                r.data.as_ref().and_then(|d| d.stopped),
            ),
            icmp_cause: crate::report::icmp::icmp_cause(r),
        }
    }
}

/// A pattern being counted: its requests, the clients it stands for, its first
/// request's number and that request's style.
struct Shape {
    requests: usize,
    clients: BTreeSet<String>,
    first: u64,
    style: Style,
}

/// What the summary says of the requests (their count per protocol, the
/// time span, the patterns), counted so that the tallies of a stream's
/// windows merge into the run's.
#[derive(Default)]
pub struct RequestTally {
    requests: usize,
    by_proto: BTreeMap<&'static str, usize>,
    /// First and last request's time at capture 1.
    span: Option<(i64, i64)>,
    /// Pattern text, the client's address left out where it stands for it.
    shapes: BTreeMap<String, Shape>,
    /// What the "Client address at the backend" section says.
    client: crate::report::client_address::ClientTally,
}

impl RequestTally {
    /// The tally of these findings' requests.
    pub fn of(w: &Words<'_>, findings: &Findings) -> RequestTally {
        let mut t = RequestTally::default();
        t.add(w, findings);
        t
    }

    /// Adds the requests of `findings` (numbered after those added before).
    /// Requests are grouped by [`PatternKey`] across cores; one request of
    /// each group is put into words; groups whose words differ only by the
    /// client's address are one shape ("source of 250 clients").
    pub fn add(&mut self, w: &Words<'_>, findings: &Findings) {
        use rayon::prelude::*;
        self.requests += findings.requests.len();
        for r in &findings.requests {
            *self.by_proto.entry(r.proto.wire()).or_default() += 1;
        }
        for t in findings.requests.iter().filter_map(crate::report::request_time_ns) {
            let (lo, hi) = self.span.get_or_insert((t, t));
            (*lo, *hi) = ((*lo).min(t), (*hi).max(t));
        }
        self.client.add(w, findings);
        let keys: Vec<PatternKey> = findings.requests.par_iter().map(PatternKey::of).collect();
        // Key → (first request, request count, the clients it stands for), in request order.
        let mut groups: FxHashMap<&PatternKey, usize> = FxHashMap::default();
        let mut firsts: Vec<(usize, usize, BTreeSet<IpAddr>)> = Vec::new();
        for (i, (key, r)) in keys.iter().zip(&findings.requests).enumerate() {
            let g = *groups.entry(key).or_insert_with(|| {
                firsts.push((i, 0, BTreeSet::new()));
                firsts.len() - 1
            });
            firsts[g].1 += 1;
            firsts[g].2.extend(client_of(r));
        }
        let texts: Vec<String> =
            firsts.par_iter().map(|&(i, _, _)| pattern(w, &findings.requests[i])).collect();
        for ((first, n, clients), text) in firsts.into_iter().zip(texts) {
            let r = &findings.requests[first];
            let shape = match client_of(r) {
                Some(before) => {
                    text.replacen(&format!("source {} → ", w.addr(before)), &format!("source {CLIENT} → "), 1)
                }
                None => text,
            };
            let e = self.shapes.entry(shape).or_insert_with(|| Shape {
                requests: 0,
                clients: BTreeSet::new(),
                first: r.request,
                style: pattern_style(r),
            });
            e.requests += n;
            e.clients.extend(clients.into_iter().map(|a| w.addr(a)));
        }
    }

    /// Patterns with their counts and styles, ordered as [`patterns`]. A
    /// pattern's style is its first request's.
    fn patterns(&self) -> Vec<(usize, String, Style)> {
        self.patterns_with_first().into_iter().map(|(n, text, style, _)| (n, text, style)).collect()
    }

    /// [`RequestTally::patterns`] with the number of each pattern's first request.
    fn patterns_with_first(&self) -> Vec<(usize, String, Style, u64)> {
        let mut counts: BTreeMap<String, (usize, u64, Style)> = BTreeMap::new();
        for (shape, s) in &self.shapes {
            let text = match s.clients.len() {
                0 => shape.clone(),
                1 => shape.replacen(CLIENT, s.clients.first().map(String::as_str).unwrap_or(""), 1),
                k => shape.replacen(&format!("source {CLIENT}"), &format!("source of {k} clients"), 1),
            };
            let e = counts.entry(text).or_insert((0, s.first, s.style));
            e.0 += s.requests;
            if s.first < e.1 {
                (e.1, e.2) = (s.first, s.style);
            }
        }
        let mut list: Vec<(usize, String, Style, u64)> =
            counts.into_iter().map(|(text, (n, first, style))| (n, text, style, first)).collect();
        list.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        list
    }
}

/// The summary's first block as data (the HTML page's overview): the
/// headline, the time span line (with `--tz`), and each pattern with its
/// count, tone (`good`, `warn`, `bad`) and first request.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Overview {
    pub headline: String,
    pub span: Option<String>,
    pub patterns: Vec<OverviewPattern>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OverviewPattern {
    pub requests: usize,
    pub text: String,
    pub tone: &'static str,
    pub first: u64,
}

/// [`Overview`] of these findings, in the words of the text summary.
pub fn overview(w: &Words<'_>, findings: &Findings) -> Overview {
    let tally = RequestTally::of(w, findings);
    let patterns = (tally.patterns_with_first().into_iter())
        .map(|(requests, text, style, first)| OverviewPattern {
            requests,
            text,
            tone: match style {
                Style::Bad => "bad",
                Style::Warn => "warn",
                _ => "good",
            },
            first,
        })
        .collect();
    Overview {
        headline: headline(w, &tally),
        span: time_span(w, tally.span).map(|s| s.trim().to_string()),
        patterns,
    }
}

/// `5 requests across decap → egress → backend (tcp 3, udp 2)`.
fn headline(w: &Words<'_>, tally: &RequestTally) -> String {
    let protos: Vec<String> = tally.by_proto.iter().map(|(p, n)| format!("{p} {n}")).collect();
    let mut head = format!("{} across {}", plural(tally.requests, "request"), w.labels.join(" → "));
    if !protos.is_empty() {
        head.push_str(&format!(" ({})", protos.join(", ")));
    }
    head
}

/// Patterns with their counts and styles, ordered as [`patterns`].
fn styled_patterns(w: &Words<'_>, findings: &Findings) -> Vec<(usize, String, Style)> {
    RequestTally::of(w, findings).patterns()
}

/// `1 sample`, `2 samples`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn pattern_style(r: &Request) -> Style {
    match (r.reply.path, r.outcome.kind) {
        (ReplyPath::ReplyLost | ReplyPath::NoReply, _) => Style::Bad,
        (
            _,
            OutcomeKind::Reset | OutcomeKind::IcmpError | OutcomeKind::NoReply | OutcomeKind::DataStopped,
        ) => Style::Bad,
        (ReplyPath::Bypassed, _) | (_, OutcomeKind::HandshakeOnly | OutcomeKind::Midstream) => Style::Warn,
        _ => Style::Good,
    }
}

/// Signed ms with 3 decimals, e.g. `+2750.012 ms`.
fn signed_ms(ms: f64) -> String {
    format!("{:+.3} ms", round_ms(ms))
}

/// The clock offset line of one capture; `clocks_from`: the report of
/// `--clocks-from`, where an offset not estimated then came from.
pub fn offset_text(c: &crate::verdict::CaptureSummary, clocks_from: Option<&str>) -> String {
    let spread = crate::report::wire::ms(c.offset_spread_ns);
    let offset = crate::report::wire::ms(c.clock_offset_ns);
    let samples = plural(c.offset_samples as usize, "sample");
    // one sample has no spread: its `± 0.000 ms` would read as certainty
    let pm = |spread: f64| if c.offset_samples == 1 { String::new() } else { format!(" ± {spread:.3} ms") };
    let counted = if c.offset_samples == 1 { "1 sample, so no spread".to_string() } else { samples.clone() };
    match c.offset_method {
        OffsetMethod::Reference => "reference clock".to_string(),
        OffsetMethod::RequestReply => {
            format!("{}{} (request-reply, {counted})", signed_ms(offset), pm(spread))
        }
        OffsetMethod::OneWay => {
            format!("{}{} (one-way, includes the path delay; {counted})", signed_ms(offset), pm(spread))
        }
        OffsetMethod::Manual => match clocks_from {
            Some(report) => format!("{} ± {spread:.3} ms (from --clocks-from {report})", signed_ms(offset)),
            None => format!("{} (set with --offset)", signed_ms(offset)),
        },
        OffsetMethod::SameCapture => {
            format!("{} (same capture as the point before: one clock)", signed_ms(offset))
        }
        OffsetMethod::TimeFree => format!(
            "{} ± {spread:.3} ms (beyond --max-offset, from {samples} paired without time: the same ISN or first bytes)",
            signed_ms(offset)
        ),
        OffsetMethod::None => "not estimated (no match here gives a clock sample)".to_string(),
    }
}

/// `VXLAN vni 42`, `GRE key 7`, `IP-in-IP`: how the text report and `inspect` name an overlay.
pub fn overlay_name(o: &crate::decode::Overlay) -> String {
    use crate::decode::OverlayKind as K;
    let kind = match o.kind {
        K::Vxlan => "VXLAN",
        K::Geneve => "Geneve",
        K::Gre => "GRE",
        K::GreEthernet => "GRE (Ethernet)",
        K::Ip4In4 => "IPv4-in-IPv4",
        K::Ip6In4 => "IPv6-in-IPv4 (6in4)",
        K::Ip4In6 => "IPv4-in-IPv6",
        K::Ip6In6 => "IPv6-in-IPv6",
        K::Mpls => "MPLS",
    };
    match (o.kind.id_name(), o.id) {
        (Some(name), Some(id)) => format!("{kind} {name} {id}"),
        _ => kind.to_string(),
    }
}

/// The overlays peeled off one capture's packets, e.g. `VXLAN vni 42: 1234 packets`.
pub fn overlays_text(overlays: &[(crate::decode::Overlay, u64)]) -> String {
    let parts: Vec<String> = (overlays.iter())
        .map(|(o, n)| format!("{}: {}", overlay_name(o), plural(*n as usize, "packet")))
        .collect();
    parts.join(", ")
}

/// The traits of one boundary, e.g. `delay 0.080 ms, TTL -1, ports kept, ICMP id kept`.
pub fn boundary_text(b: &crate::verdict::Boundary) -> String {
    let mut parts = Vec::new();
    if let Some(d) = b.delay_ns {
        parts.push(format!("delay {:.3} ms", crate::report::wire::ms(d)));
    }
    let ttl = |set_to: Option<u8>, decrement: Option<i64>| match (set_to, decrement) {
        (Some(n), _) => Some(format!("set to {n}")),
        (None, Some(0)) => Some("kept".to_string()),
        (None, Some(t @ 1..)) => Some(format!("-{t}")),
        (None, Some(t)) => Some(format!("+{}", t.unsigned_abs())),
        (None, None) => None,
    };
    if let Some(change) = ttl(b.ttl_set_to, b.ttl_decrement) {
        // "TTL -1", "TTL kept", "TTL set to 58"; then each protocol or
        // direction that fared otherwise: "(tcp set to 122, udp replies kept)".
        let mut text = format!("TTL {change}");
        let otherwise: Vec<String> = (b.ttl_otherwise())
            .filter_map(|t| {
                let change = ttl(t.set_to, t.decrement)?;
                Some(format!("{}{} {change}", t.proto.wire(), if t.reply { " replies" } else { "" }))
            })
            .collect();
        if !otherwise.is_empty() {
            text.push_str(&format!(" ({})", otherwise.join(", ")));
        }
        parts.push(text);
    }
    // One word when client and server ports fared alike, else each.
    if b.ports == b.server_ports {
        parts.push(format!("ports {}", kept_word(b.ports, PORTS_CHANGED)));
    } else {
        parts.push(format!(
            "client ports {}, server ports {}",
            kept_word(b.ports, PORTS_CHANGED),
            kept_word(b.server_ports, PORTS_CHANGED)
        ));
    }
    parts.push(format!("ICMP id {}", kept_word(b.icmp_id, ICMP_ID_CHANGED)));
    if b.mss_clamped {
        parts.push("MSS clamped".to_string());
    }
    if b.seq_shift {
        parts.push(match b.seq_shift_by {
            Some(n) => format!("sequence numbers shifted by {n:+}"),
            None => "sequence numbers shifted".to_string(),
        });
    }
    // Said only where they changed: most paths keep both.
    match (b.tos, b.tos_change) {
        (Kept::Changed, Some((x, y))) => {
            let mut what = Vec::new();
            if x >> 2 != y >> 2 {
                what.push(format!("DSCP {} -> {}", x >> 2, y >> 2));
            }
            if x & 3 != y & 3 {
                what.push(format!("ECN {} -> {}", x & 3, y & 3));
            }
            parts.push(what.join(", "));
        }
        (Kept::Changed | Kept::Mixed, _) => parts.push(format!("TOS {}", kept_word(b.tos, TOS_CHANGED))),
        _ => {}
    }
    let tag = |v: Option<u16>| v.map_or("untagged".to_string(), |v| format!("VLAN {v}"));
    match (b.vlan, b.vlan_change) {
        (Kept::Changed, Some((x, y))) => parts.push(format!("{} -> {}", tag(x), tag(y))),
        (Kept::Changed | Kept::Mixed, _) => {
            parts.push(format!("VLAN tags {}", kept_word(b.vlan, VLAN_CHANGED)))
        }
        _ => {}
    }
    if let Some((x, y)) = b.syn_mss.filter(|(x, y)| x != y) {
        parts.push(format!("SYN MSS {x} -> {y}"));
    }
    if let Some(s) = b.largest_segment {
        parts.push(format!("largest segment {s} bytes"));
    }
    if let Some((m, by)) = b.smallest_mtu {
        let icmp = if by.is_ipv6() { "ICMPv6 2/0" } else { "ICMP 3/4" };
        parts.push(format!("path MTU {m} ({icmp} from {by})"));
    }
    parts.join(", ")
}

fn aligned(rows: &[(String, String)]) -> Vec<String> {
    let width = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    rows.iter().map(|(k, v)| format!("  {k}{}  {v}", " ".repeat(width - k.chars().count()))).collect()
}

/// With `--tz`: when the first and the last request began at capture 1, in
/// that zone (`  first request 2026-11-30T05:29:32.155211000+01:00, last ...
/// (Europe/Berlin)`); None without `--tz` or without requests.
fn time_span(w: &Words<'_>, span: Option<(i64, i64)>) -> Option<String> {
    let style =
        w.time.filter(|t| t.zone != crate::report::when::Zone::Utc || t.format != Default::default())?;
    let (first, last) = span?;
    Some(format!(
        "  first request {}, last {} ({})",
        style.rfc3339(first),
        style.rfc3339(last),
        style.zone_name(first)
    ))
}

/// The summary: patterns, clock offsets, boundaries, unmatched flows, warnings.
pub fn write_summary(findings: &Findings, color: bool, out: &mut dyn Write) -> io::Result<()> {
    write_summary_with(&Words::new(findings), findings, color, out)
}

/// [`write_summary`] with names and zone.
pub fn write_summary_with(
    w: &Words<'_>,
    findings: &Findings,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    write_summary_tallied(w, findings, &RequestTally::of(w, findings), color, out)
}

/// The summary of a run whose requests `tally` counted (`findings`: the rest
/// of the run; its requests are not read): what `--stream` writes at the end.
pub fn write_summary_tallied(
    w: &Words<'_>,
    findings: &Findings,
    tally: &RequestTally,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let labels = &w.labels;
    writeln!(out, "{}", paint(&headline(w, tally), Style::Bold, color))?;
    if let Some(line) = time_span(w, tally.span) {
        writeln!(out, "{line}")?;
    }
    let list = tally.patterns();
    let width = list.first().map_or(1, |(n, _, _)| n.to_string().len());
    for (n, text, style) in &list {
        let word = if *n == 1 { "request" } else { "requests" };
        let style = *style;
        writeln!(out, "  {n:>width$} {word}: {}", paint(text, style, color))?;
    }

    if let Some(first) = labels.first() {
        writeln!(out)?;
        writeln!(out, "{}", paint(&format!("Clock offsets (relative to {first}):"), Style::Bold, color))?;
        let rows: Vec<(String, String)> =
            findings.captures.iter().map(|c| (c.label.clone(), offset_text(c, w.clocks_from))).collect();
        for line in aligned(&rows) {
            writeln!(out, "{line}")?;
        }
    }

    let overlays: Vec<(String, String)> = (findings.captures.iter())
        .filter(|c| !c.overlays.is_empty())
        .map(|c| (c.label.clone(), overlays_text(&c.overlays)))
        .collect();
    if !overlays.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            paint("Overlays peeled (requests matched on the inner packets):", Style::Bold, color)
        )?;
        for line in aligned(&overlays) {
            writeln!(out, "{line}")?;
        }
    }

    if !findings.boundaries.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", paint("Boundaries:", Style::Bold, color))?;
        let rows: Vec<(String, String)> =
            findings.boundaries.iter().map(|b| (w.between(b.between), boundary_text(b))).collect();
        for line in aligned(&rows) {
            writeln!(out, "{line}")?;
        }
    }

    if !findings.unmatched.is_empty() {
        writeln!(out)?;
        let counts: Vec<String> =
            findings.unmatched.iter().map(|u| format!("{} {}", w.label(u.capture), u.count)).collect();
        writeln!(out, "{} {}", paint("Unmatched flows:", Style::Bold, color), counts.join(", "))?;
        for u in &findings.unmatched {
            for f in &u.flows {
                writeln!(
                    out,
                    "  {}  {} {} → {} at {} ({})",
                    w.label(u.capture),
                    f.proto.wire(),
                    w.endpoint(f.client),
                    w.endpoint(f.server),
                    w.time(f.time_ns),
                    plural(f.packets as usize, "packet")
                )?;
            }
        }
    }

    // per service: does the backend see the client's address, do the
    // requests that keep it get replies, is there a proxy (issue 49)
    let client = tally.client.lines(w);
    if !client.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            paint(
                "Client address at the backend (per service, from the requests' fields):",
                Style::Bold,
                color
            )
        )?;
        for line in &client {
            writeln!(out, "{line}")?;
        }
    }

    // why requests were lost inside hosts given files: each distinct note,
    // with how many requests and the first of them, most requests first
    if let Some(x) = w.why {
        let mut losses: Vec<(String, usize, u64)> = Vec::new();
        for r in &findings.requests {
            let Some(l) = x.loss(r.request) else { continue };
            let text = format!("lost at {}: {}", l.at, crate::why::lost::note(l));
            match losses.iter_mut().find(|(t, _, _)| *t == text) {
                Some(e) => e.1 += 1,
                None => losses.push((text, 1, r.request)),
            }
        }
        if !losses.is_empty() {
            losses.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
            writeln!(out)?;
            writeln!(out, "{}", paint("Why requests were lost (the hosts' files):", Style::Bold, color))?;
            for (text, n, first) in &losses {
                let first =
                    if *n == 1 { format!("request {first}") } else { format!("first: request {first}") };
                writeln!(out, "  {} ({first}): {}", plural(*n, "request"), paint(text, Style::Warn, color))?;
            }
        }
    }

    // `--masq-agent-after`: who would see another sender
    if let Some(x) = w.why.filter(|x| !x.predicted.is_empty()) {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            paint(
                "Change preview (--masq-agent-after; new connections: an open one keeps today's translation until it ends):",
                Style::Bold,
                color
            )
        )?;
        let unknown = x.predicted.values().filter(|p| p.after.is_none()).count();
        if x.blast.is_empty() {
            writeln!(out, "  no request's source would change")?;
        }
        for b in &x.blast {
            let first = if b.requests == 1 {
                format!("request {}", b.first)
            } else {
                format!("first: request {}", b.first)
            };
            writeln!(
                out,
                "  {} ({first}) to {} at {}: source {} instead of {} ({})",
                plural(b.requests as usize, "request"),
                w.addr(b.destination),
                b.at,
                b.after,
                b.today,
                paint(&b.reason, Style::Warn, color)
            )?;
        }
        if unknown > 0 {
            writeln!(
                out,
                "  {} whose source after the change is unknown (see each request's predicted.reason)",
                plural(unknown, "request")
            )?;
        }
    }

    if let Some(x) = w.why.filter(|x| !x.intent.is_empty()) {
        writeln!(out)?;
        writeln!(out, "{}", paint("Intent (ip-masq-agent ConfigMap against the node):", Style::Bold, color))?;
        for i in &x.intent {
            writeln!(out, "  {}: {}", i.at, paint(&i.message, Style::Warn, color))?;
        }
    }

    if !findings.warnings.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", paint("Warnings:", Style::Bold, color))?;
        for w in &findings.warnings {
            let mut place = String::new();
            if let Some(r) = w.record {
                place.push_str(&format!(" record {r}"));
            }
            if let Some(o) = w.byte_offset {
                place.push_str(&format!(" at byte {o}"));
            }
            let place = if place.is_empty() { String::new() } else { format!("{}:", place) };
            writeln!(out, "  {}:{place} {}", w.label, paint(&w.message, Style::Warn, color))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    fn summary() -> String {
        let mut out = Vec::new();
        write_summary(&findings(), false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_ttl_set_by_a_middlebox_is_said_instead_of_a_drop() {
        let mut b = findings().boundaries[1].clone();
        b.ttl_set_to = Some(58);
        b.ttl_decrement = Some(197);
        assert!(boundary_text(&b).contains(", TTL set to 58,"), "{}", boundary_text(&b));
        assert!(!boundary_text(&b).contains("197"));
    }

    #[test]
    fn a_protocol_or_direction_whose_ttl_fared_otherwise_is_said_after_the_median() {
        use crate::verdict::{Proto, TtlBy};
        let mut b = findings().boundaries[1].clone();
        let by = |proto, reply, decrement, set_to| TtlBy { proto, reply, decrement, set_to, requests: 2 };
        b.ttl_by = vec![
            by(Proto::Tcp, false, Some(-58), Some(122)),
            by(Proto::Tcp, true, Some(0), None),
            by(Proto::Udp, false, Some(1), None),
            by(Proto::Udp, true, Some(-3), None),
        ];
        let text = boundary_text(&b);
        assert!(text.contains(", TTL -1 (tcp set to 122, tcp replies kept, udp replies +3),"), "{text}");
        let wire = crate::report::to_wire::boundary(&crate::report::words::Words::new(&findings()), &b);
        assert_eq!(wire.ttl_by.len(), 3);
        assert_eq!(
            (wire.ttl_by[0].direction.as_str(), wire.ttl_by[0].ttl_set_to, wire.ttl_by[2].ttl_decrement),
            ("requests", Some(122), Some(-3))
        );
        b.ttl_by.retain(|t| t.proto == Proto::Udp && !t.reply);
        assert!(boundary_text(&b).contains(", TTL -1,"), "{}", boundary_text(&b));
    }

    #[test]
    fn client_and_server_ports_are_one_word_when_alike_else_each_is_said() {
        use crate::verdict::Kept;
        let mut b = findings().boundaries[1].clone();
        (b.ports, b.server_ports) = (Kept::Kept, Kept::Kept);
        assert!(boundary_text(&b).contains(", ports kept,"), "{}", boundary_text(&b));
        (b.ports, b.server_ports) = (Kept::Kept, Kept::Changed);
        assert!(
            boundary_text(&b).contains(", client ports kept, server ports remapped,"),
            "{}",
            boundary_text(&b)
        );
        (b.ports, b.server_ports) = (Kept::Mixed, Kept::Unknown);
        assert!(
            boundary_text(&b).contains("client ports mixed, server ports unknown"),
            "{}",
            boundary_text(&b)
        );
    }

    #[test]
    fn tz_adds_the_time_span_in_that_zone_and_names_show_in_patterns() {
        let f = findings();
        let style = crate::report::when::TimeStyle {
            zone: crate::report::when::Zone::parse("Europe/Berlin").unwrap(),
            ..Default::default()
        };
        let mut names = crate::names::Names::default();
        names.extend(crate::names::parse("198.19.3.17 node-a\n").unwrap().1);
        let w = Words::with(&f, Some(&names), Some(&style));
        let mut out = Vec::new();
        write_summary_with(&w, &f, false, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        let second = s.lines().nth(1).unwrap();
        assert_eq!(
            second,
            "  first request 2026-11-30T00:40:38.123456789+01:00, last 2026-11-30T00:40:42.123456789+01:00 (Europe/Berlin)"
        );
        assert!(s.contains("source 198.18.90.42 → node-a (198.19.3.17) between egress and backend"), "{s}");
        // without --tz the summary is as it was
        assert!(!summary().contains("first request"));
    }

    #[test]
    fn identity_joins_the_pattern_and_tells_kept_from_lost() {
        use crate::report::fixtures::{proxied_identity, spoofed_identity};
        let mut f = findings();
        let w = Words::new(&f);
        let plain = pattern(&w, &f.requests[0]);
        let mut r = f.requests[0].clone();
        r.identity = Some(Box::new(proxied_identity()));
        assert_eq!(
            pattern(&w, &r),
            plain.replacen(
                ", replies",
                ", identity kept by PROXY v1 added between egress and backend, replies",
                1
            )
        );
        r.identity = Some(Box::new(spoofed_identity()));
        assert!(pattern(&w, &r).contains("X-Forwarded-For set by the client side (not to be trusted)"));
        let mut lost = proxied_identity();
        (lost.carried, lost.added, lost.preserved) = (None, None, false);
        r.identity = Some(Box::new(lost));
        assert!(pattern(&w, &r).contains("identity lost: no carrier reached backend"));
        let mut wrong = proxied_identity();
        wrong.preserved = false;
        r.identity = Some(Box::new(wrong));
        assert!(pattern(&w, &r).contains("carries 198.18.90.42, not the client"));
        // Kept and lost identities are different lines of the summary.
        f.requests[1] = r.clone();
        f.requests[0].identity = Some(Box::new(proxied_identity()));
        let lines = patterns(&f);
        assert!(lines.iter().any(|(_, t)| t.contains("identity kept")));
        assert!(lines.iter().any(|(_, t)| t.contains("not the client")));
    }

    #[test]
    fn patterns_group_by_addresses_without_ports() {
        let mut f = findings();
        // A second snat request from another client port falls into request 1's pattern.
        let mut extra = f.requests[0].clone();
        extra.request = 6;
        extra.source[0].before = crate::report::fixtures::ep("198.18.90.42:60000");
        extra.source[0].after = crate::report::fixtures::ep("198.19.3.17:33333");
        f.requests.push(extra);
        let list = patterns(&f);
        assert_eq!(
            list[0],
            (
                2,
                "source 198.18.90.42 → 198.19.3.17 between egress and backend, replies on the same path"
                    .to_string()
            )
        );
        assert_eq!(list.iter().map(|(n, _)| n).sum::<usize>(), 6);
        // Ties are ordered by text.
        let rest: Vec<&String> = list[1..].iter().map(|(_, t)| t).collect();
        let mut sorted = rest.clone();
        sorted.sort();
        assert_eq!(rest, sorted);
    }

    /// The patterns as they were counted before grouping: every request put
    /// into words, its client's address cut out of the words.
    fn patterns_one_by_one(f: &Findings) -> Vec<(usize, String)> {
        let w = Words::new(f);
        let mut shapes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for r in &f.requests {
            let text = pattern(&w, r);
            let (shape, client) = match r.source.first() {
                Some(c) if !matches!(c.kind, ChangeKind::Proxy | ChangeKind::PortOnly) => {
                    let before = w.addr(c.before.addr);
                    (
                        text.replacen(&format!("source {before} → "), &format!("source {CLIENT} → "), 1),
                        Some(before),
                    )
                }
                _ => (text, None),
            };
            *counts.entry(shape.clone()).or_default() += 1;
            shapes.entry(shape).or_default().extend(client);
        }
        let mut out: BTreeMap<String, usize> = BTreeMap::new();
        for (shape, n) in counts {
            let clients = &shapes[&shape];
            let text = match clients.len() {
                0 => shape,
                1 => shape.replacen(CLIENT, clients.first().unwrap(), 1),
                k => shape.replacen(&format!("source {CLIENT}"), &format!("source of {k} clients"), 1),
            };
            *out.entry(text).or_default() += n;
        }
        let mut list: Vec<(usize, String)> = out.into_iter().map(|(t, n)| (n, t)).collect();
        list.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        list
    }

    #[test]
    fn grouped_patterns_equal_every_request_put_into_words() {
        use crate::report::fixtures::ep;
        let mut f = findings();
        let base = f.requests.clone();
        // Clients behind one NAT (moved, lost reply, reset), a port-only remap
        // with the address kept, a second source change, a named group.
        for (k, client) in ["198.18.90.43:1000", "198.18.90.44:1001", "198.18.90.43:1002"].iter().enumerate()
        {
            for r in &base {
                let mut r = r.clone();
                r.request = 100 + k as u64;
                if let Some(c) = r.source.first_mut() {
                    c.before = ep(client);
                }
                f.requests.push(r);
            }
        }
        let mut same = base[0].clone();
        same.source[0].after = ep(&format!("{}:4444", same.source[0].before.addr));
        f.requests.push(same.clone());
        same.source[0].before = ep("198.18.90.77:5");
        same.source[0].after = ep("198.18.90.77:6");
        f.requests.push(same);
        let mut two = base[0].clone();
        two.source.push(crate::verdict::Change { between: two.source[0].between, ..two.source[0].clone() });
        f.requests.push(two);
        assert_eq!(patterns(&f), patterns_one_by_one(&f));
        assert!(
            patterns(&f).iter().any(|(n, t)| *n == 4 && t.starts_with("source of 3 clients → ")),
            "{:?}",
            patterns(&f)
        );
    }

    #[test]
    fn a_pattern_of_many_clients_is_painted_as_its_first_request() {
        let mut f = findings();
        let mut other = f.requests[1].clone();
        other.source[0].before = crate::report::fixtures::ep("198.18.90.43:1000");
        f.requests.push(other);
        let w = Words::new(&f);
        let list = styled_patterns(&w, &f);
        let lost =
            list.iter().find(|(_, t, _)| t.contains("of 2 clients") && t.contains("lost before")).unwrap();
        assert_eq!(lost.2, Style::Bad, "{list:?}");
        let kept = list.iter().find(|(_, t, _)| t.contains("replies on the same path")).unwrap();
        assert_eq!(kept.2, pattern_style(&f.requests[0]));
    }

    #[test]
    fn lost_reply_and_icmp_error_read_as_sentences() {
        let f = findings();
        let w = Words::new(&f);
        assert_eq!(
            pattern(&w, &f.requests[1]),
            "source 198.18.90.42 → 198.19.3.17 between egress and backend, reply seen at backend, lost before egress, no reply reached the client side"
        );
        assert_eq!(
            pattern(&w, &f.requests[2]),
            "addresses unchanged, request went no further than egress, ICMP error 3/13 from 198.19.3.1, injected between egress and backend: policy, not path"
        );
    }

    #[test]
    fn a_port_unreachable_reads_by_who_sent_it_and_splits_patterns_by_cause() {
        // One sender (198.19.96.11), two services: it is the server of the first
        // (a closed port: from beyond the last capture), another host for the
        // second (a filter answering); and the first's own address, injected in
        // between, is a box in its name, not the server.
        let mut f = findings();
        let r3 = f.requests.iter_mut().find(|r| r.request == 3).unwrap();
        r3.outcome.by = Some("198.19.96.11".parse().unwrap());
        r3.outcome.icmp = Some(IcmpCode { ty: 3, code: 3 });
        let mut other = r3.clone();
        other.request = 6;
        for h in other.captures.iter_mut().filter(|h| h.seen) {
            h.server = Some(crate::report::fixtures::ep("198.19.96.12:53"));
        }
        let in_name = r3.clone();
        r3.captures[2] =
            crate::report::fixtures::seen(3_000_000_000, "198.18.90.43:5353", "198.19.96.11:53", true);
        r3.outcome.origin = Some(crate::verdict::Origin::Capture(2));
        f.requests.push(other);
        let w = Words::new(&f);
        let closed = "addresses unchanged, replies on the same path, ICMP error 3/3 from 198.19.96.11, sent at backend: nothing listening on that port";
        let filter = "addresses unchanged, request went no further than egress, ICMP error 3/3 from 198.19.96.11, injected between egress and backend: sent by a host other than the server (a filter answering in its place)";
        assert_eq!(pattern(&w, &f.requests[2]), closed);
        assert_eq!(pattern(&w, &f.requests[5]), filter);
        assert_eq!(pattern(&w, &in_name), filter, "its own server's address, injected in between");
        let texts: Vec<String> = patterns(&f).into_iter().map(|(_, t)| t).collect();
        assert!(texts.iter().any(|t| t.ends_with("nothing listening on that port")), "{texts:?}");
        assert!(texts.iter().any(|t| t.ends_with("(a filter answering in its place)")), "{texts:?}");
        // a type/code without a rule is named without a cause
        f.requests[5].outcome.icmp = Some(IcmpCode { ty: 3, code: 5 });
        assert_eq!(
            pattern(&Words::new(&f), &f.requests[5]),
            "addresses unchanged, request went no further than egress, ICMP error 3/5 from 198.19.96.11, injected between egress and backend"
        );
    }

    #[test]
    fn summary_lists_offsets_boundaries_unmatched_and_warnings() {
        let s = summary();
        assert!(s.starts_with("5 requests across decap → egress → backend (icmp 1, tcp 3, udp 1)\n"), "{s}");
        assert!(s.contains("  decap    reference clock\n"), "{s}");
        assert!(s.contains("  backend  +2750.012 ms ± 0.004 ms (request-reply, 24 samples)\n"), "{s}");
        assert!(
            s.contains("  egress->backend  delay 0.080 ms, TTL -1, client ports remapped, server ports kept, ICMP id kept\n"),
            "{s}"
        );
        assert!(s.contains("Unmatched flows: egress 0, backend 3\n"));
        assert!(s.contains("  egress: record 18412 at byte 9437112: record cut short"));
    }
}
