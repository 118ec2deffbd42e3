//! Why a request or its reply was lost inside a host: the host's state
//! (`--routes`, `--sysctl`, `--neigh`, the filter table of `--rules`) asked
//! what the kernel does with the packet, in the kernel's order — forwarding
//! on, the route lookup (no route, a blackhole, unreachable or prohibit
//! route), the reverse-path filter, the filter table, the next hop's
//! neighbour entry — and the first that drops it named with FILE:LINE.
//! Where the files given cannot decide (an interface the captures do not
//! name, a policy rule on a mark not known), that is said, with what would
//! decide it; where none drops it, that is said too. Never a guess.
//! Takes a request and one [`Host`]; gives a [`Loss`].

use super::eval::{self, Filtered, Observed};
use super::host::{numbered, proto_number, Host};
use super::kernel::{self, Lookup, NeighState, RpCheck, RpDrop};
use crate::verdict::{Origin, OutcomeKind, Proto, Request};
use std::net::IpAddr;

/// Which packet of the request was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packet {
    Request,
    Reply,
}

/// What the host's state says of a lost packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Forwarding is off (`net.ipv4.ip_forward = 0`).
    NotForwarding { file: String, line: u32 },
    /// The route lookup finds no route to `dst` (the tables consulted).
    NoRoute { file: String, dst: IpAddr, tables: Vec<String> },
    /// The route lookup ends in a blackhole, unreachable or prohibit route (or rule).
    Refused { file: String, line: u32, kind: String, dst: IpAddr },
    /// The reverse-path filter on `iif` drops it.
    RpFilter {
        sysctl: String,
        sysctl_lines: Vec<u32>,
        mode: u8,
        iif: String,
        src: IpAddr,
        routes: String,
        route: Option<u32>,
        leaves_by: Option<String>,
        reason: RpDrop,
        /// What the files could not decide and the loss did: the interface
        /// the reply came in by, when only one of those possible explains it.
        taking: Option<String>,
    },
    /// The filter table (see [`eval::filtered`]).
    Filter(Filtered),
    /// The next hop's neighbour entry failed: the kernel drops what waits for it.
    Neighbour { file: String, line: u32, addr: IpAddr, state: NeighState, route: u32, routes: String },
    /// The files given cannot decide: what each step said.
    Undecided { why: Vec<String> },
    /// Every step the files allow passes it: what was checked.
    Passes { checked: Vec<String>, missing: Vec<&'static str> },
}

/// Why one packet of a request was lost inside a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    /// The host (WHERE).
    pub at: String,
    pub packet: Packet,
    pub cause: Cause,
}

impl Loss {
    /// The cause as a word of the output contract (`loss.cause`).
    pub fn cause_word(&self) -> &'static str {
        match &self.cause {
            Cause::NotForwarding { .. } => "forwarding",
            Cause::NoRoute { .. } | Cause::Refused { .. } => "route",
            Cause::RpFilter { .. } => "rp_filter",
            Cause::Filter(Filtered::Dropped { .. }) => "filter",
            Cause::Filter(Filtered::Policy { .. }) => "policy",
            Cause::Filter(_) | Cause::Undecided { .. } => "undecided",
            Cause::Neighbour { .. } => "neighbour",
            Cause::Passes { .. } => "none",
        }
    }
}

/// The loss of request `r` inside `host`, when one of its packets stopped
/// there: the request seen entering it (at `span.0`) and at no capture
/// after; or its reply seen entering it (at `span.1`) and not leaving it
/// (not at `span.0`, which saw the request). The capture that would have
/// seen it must have recorded while it ran (not blind). None when the host
/// has no file that says anything of that packet.
pub fn lost(r: &Request, host: &Host) -> Option<Loss> {
    let (a, b) = host.span;
    let at = |i: usize| r.captures.get(i);
    let entered = at(a)?;
    let request_stopped = entered.seen
        && r.captures.len() > a + 1
        && !r.captures.iter().skip(a + 1).any(|c| c.seen)
        && !r.blind.contains(&(a + 1));
    let reply_stopped = !request_stopped
        && entered.seen
        && at(b).is_some_and(|h| h.seen && h.reply_seen)
        && !entered.reply_seen
        && !r.blind.contains(&a);
    // the host a capture was taken on (`backend`): the request reached it, and
    // no reply left it
    // (only where the request went no further: a capture mid-path is no end)
    let end = a == b
        && !host.sides
        && entered.seen
        && !entered.reply_seen
        && !r.captures.iter().skip(a + 1).any(|c| c.seen);
    if end {
        return Some(Loss { at: host.at.clone(), packet: Packet::Reply, cause: end_cause(r, host)? });
    }
    let packet = match (request_stopped, reply_stopped) {
        (true, _) => Packet::Request,
        (_, true) => Packet::Reply,
        _ => return None,
    };
    let cause = match packet {
        Packet::Request => request_cause(r, host)?,
        Packet::Reply => reply_cause(r, host)?,
    };
    Some(Loss { at: host.at.clone(), packet, cause })
}

/// A split capture's interface name at capture `c` (not `ifN`, which names none).
fn named(name: Option<&str>) -> Option<String> {
    let name = name?;
    (!numbered(name) && !name.is_empty()).then(|| name.to_string())
}

/// The mark the host's routing sees: 0 when the rules given show no rule
/// setting one, else not known.
fn mark(host: &Host) -> Option<u32> {
    host.rules.as_ref().filter(|s| s.mark_set_elsewhere.is_none()).map(|_| 0)
}

/// Whether the captures saw request `r` answered by an ICMP error or a
/// reset that entered at `host` (between its two captures): something there
/// rejected it, rather than letting it through or dropping it in silence.
fn rejected_here(r: &Request, host: &Host) -> bool {
    let at_host = matches!(r.outcome.origin, Some(Origin::Between(b)) if (b.from, b.to) == host.span);
    at_host && matches!(r.outcome.kind, OutcomeKind::IcmpError | OutcomeKind::Reset)
}

/// A request seen entering the host and nowhere after: forwarding, the
/// route to its destination (after PREROUTING's DNAT), the reverse-path
/// filter on the interface it came in by, the filter table, the next hop.
fn request_cause(r: &Request, host: &Host) -> Option<Cause> {
    let h = r.captures.get(host.span.0)?;
    let (c, s) = (h.client?, h.server?);
    let proto = proto_number(r.proto, c.addr);
    let icmp = r.proto == Proto::Icmp;
    let port = |p: Option<u16>| if icmp { None } else { p };
    let iif = if host.sides { named(h.iface()) } else { None }.or_else(|| host.iif.clone());
    let mut why: Vec<String> = Vec::new();
    let mut checked: Vec<String> = Vec::new();
    if let Some(sys) = &host.sysctl {
        match sys.ip_forward() {
            Some((false, line)) if c.addr.is_ipv4() => {
                return Some(Cause::NotForwarding { file: sys.file.clone(), line })
            }
            Some(_) => checked.push(format!("forwarding on ({})", sys.file)),
            None => {}
        }
    }
    let mut oif = host.oif.clone();
    // the route out, whose next hop is checked last (after the filter table),
    // is the one to the destination after PREROUTING's DNAT: with the rules,
    // the DNAT they make; without, a destination with no route at all may be
    // one a DNAT rewrites first (a Service address), which only they tell
    let routed = host.rules.as_ref().map(|set| {
        let before = (c.addr, port(c.port), s.addr, port(s.port));
        eval::routed_to(set, proto, before, iif.clone())
    });
    let dst = match &routed {
        Some(eval::Routed::To(a)) => *a,
        _ => s.addr,
    };
    let mut route_out: Option<&kernel::Route> = None;
    if let (Some(_), Some(eval::Routed::Unknown(w))) = (&host.routes, &routed) {
        why.push(format!("the route: the destination after DNAT is not known ({w})"));
    } else if let Some(routes) = &host.routes {
        let mark = mark(host);
        let s = crate::verdict::Endpoint { addr: dst, ..s };
        match routes.lookup(s.addr, Some(c.addr), iif.as_deref().or(Some("unknown")), mark.unwrap_or(0)) {
            l if !l.unsure().is_empty() || (mark.is_none() && marks_decide(routes, s.addr)) => {
                why.push(format!(
                    "the route to {} depends on a policy rule the files cannot decide ({}: {})",
                    s.addr,
                    routes.file,
                    lines(if l.unsure().is_empty() {
                        mark_rules(routes, s.addr)
                    } else {
                        l.unsure().to_vec()
                    })
                ));
            }
            Lookup::NoRoute { .. } if routed.is_none() => why.push(format!(
                "no route to {} ({}), unless a DNAT on the host rewrites it first: --rules tells",
                s.addr, routes.file
            )),
            l @ (Lookup::NoRoute { .. } | Lookup::Refused { .. }) => return refused(routes, &l, s.addr),
            Lookup::Route { route, .. } => {
                checked.push(format!("a route to {} ({}:{})", s.addr, routes.file, route.line));
                if oif.is_none() && route.devs().len() == 1 {
                    oif = route.dev.clone();
                }
                route_out = Some(route);
            }
        }
        if let Some(sys) = &host.sysctl {
            match iif.as_deref() {
                Some(i) => match kernel::reverse_path(routes, sys, c.addr, s.addr, i, mark.unwrap_or(0)) {
                    RpCheck::Drop { mode, reason, sysctl_lines, route, leaves_by } => {
                        return Some(Cause::RpFilter {
                            sysctl: sys.file.clone(),
                            sysctl_lines,
                            mode,
                            iif: i.to_string(),
                            src: c.addr,
                            routes: routes.file.clone(),
                            route,
                            leaves_by,
                            reason,
                            taking: None,
                        })
                    }
                    RpCheck::Unknown { why: w } => why.push(format!("the reverse-path filter: {w}")),
                    RpCheck::Pass { .. } | RpCheck::NotApplicable => {
                        checked.push(format!("the reverse-path filter on {i} ({})", sys.file))
                    }
                },
                None => match rp_any_iface(routes, sys, c.addr, s.addr) {
                    Some(w) => why.push(w),
                    None => {
                        checked.push(format!("the reverse-path filter on every interface ({})", sys.file))
                    }
                },
            }
        }
    }
    if let Some(set) = &host.rules {
        let before = (c.addr, port(c.port), s.addr, port(s.port));
        let obs = Observed { proto, before, after: before, iif: iif.clone(), oif: oif.clone() };
        match eval::filtered_seen(set, obs.proto, obs.before, obs.iif, obs.oif, rejected_here(r, host)) {
            f @ (Filtered::Dropped { .. } | Filtered::Policy { .. }) => return Some(Cause::Filter(f)),
            Filtered::Passes { file } => checked.push(format!("no filter rule drops it ({file})")),
            Filtered::NoFilter => {}
            f @ Filtered::Undecided { .. } if why.is_empty() && host.routes.is_none() => {
                return Some(Cause::Filter(f));
            }
            f @ Filtered::Undecided { .. } => why.push(filter_note(&f)),
        }
    }
    if let (Some(routes), Some(route)) = (&host.routes, route_out) {
        if let Some(cause) = next_hop(host, routes, route, dst, &mut checked) {
            return Some(cause);
        }
    }
    finish(host, why, checked)
}

/// A reply seen entering the host (at its out-side, or the capture after
/// it) and not leaving it: the route back to the client, the reverse-path
/// filter on the interface it came in by. That interface is the split
/// capture's when it names one, else the one the request left by: the
/// route to the server for each mark the host's policy rules select on
/// (the mark is not known without `--rules`). When several are possible
/// and only one of them explains the loss, that one is taken, and said.
fn reply_cause(r: &Request, host: &Host) -> Option<Cause> {
    let (a, b) = host.span;
    let (before, after) = (r.captures.get(a)?, r.captures.get(b)?);
    // routed after conntrack undid the SNAT: to the client as seen before the host
    let client = before.client?.addr;
    let server = after.server?.addr;
    let Some(routes) = host.routes.as_ref() else {
        // the filter table alone (the rules given, not the routes)
        let (mut why, mut checked) = (Vec::new(), Vec::new());
        if let Some(cause) = reply_filtered(r, host, &mut why, &mut checked) {
            return Some(cause);
        }
        return (host.rules.is_some()).then(|| finish(host, why, checked)).flatten();
    };
    let iif = if host.sides { named(after.reply_iface()).or_else(|| named(after.iface())) } else { None }
        .or_else(|| host.oif.clone());
    let marks: Vec<u32> = match mark(host) {
        Some(m) => vec![m],
        None => candidate_marks(routes, client),
    };
    let mut why: Vec<String> = Vec::new();
    let mut checked: Vec<String> = Vec::new();
    let mut route_back = None;
    // the route back to the client, for each possible mark
    let backs: Vec<Lookup<'_>> = (marks.iter())
        .map(|&m| routes.lookup(client, Some(server), iif.as_deref().or(Some("unknown")), m))
        .collect();
    let unsure: Vec<u32> = backs.iter().flat_map(|l| l.unsure().to_vec()).collect();
    let same = backs.windows(2).all(|w| same_lookup(&w[0], &w[1]));
    match backs.first() {
        _ if !unsure.is_empty() || !same => why.push(format!(
            "the route back to {client} depends on a policy rule the files cannot decide ({}: {})",
            routes.file,
            lines(if unsure.is_empty() { mark_rules(routes, client) } else { unsure })
        )),
        Some(l @ (Lookup::NoRoute { .. } | Lookup::Refused { .. })) => return refused(routes, l, client),
        Some(Lookup::Route { route, .. }) => {
            checked.push(format!("a route back to {client} ({}:{})", routes.file, route.line));
            route_back = Some(*route);
        }
        None => {}
    }
    // in the kernel's order: the routing decision (its reverse-path filter),
    // FORWARD, then the next hop's neighbour entry on the way out
    if let Some(sys) = &host.sysctl {
        if let Some(cause) = reply_rp(host, sys, &iif, &marks, (server, client), &mut why, &mut checked) {
            return Some(cause);
        }
    }
    if why.is_empty() {
        if let Some(cause) = reply_filtered(r, host, &mut why, &mut checked) {
            return Some(cause);
        }
    }
    if let Some(route) = route_back {
        if let Some(cause) = next_hop(host, routes, route, client, &mut checked) {
            return Some(cause);
        }
    }
    finish(host, why, checked)
}

/// The reverse-path filter on the interface a reply came in by (`iif`), or
/// on each the request may have left by (one per mark the policy rules
/// select on): a drop it alone explains, or what it could not decide.
fn reply_rp(
    host: &Host,
    sys: &kernel::Sysctl,
    iif: &Option<String>,
    marks: &[u32],
    (server, client): (IpAddr, IpAddr),
    why: &mut Vec<String>,
    checked: &mut Vec<String>,
) -> Option<Cause> {
    let routes = host.routes.as_ref()?;
    // the interfaces the reply may have come in by, with how the request left by it
    let mut ins: Vec<(String, Option<String>)> = Vec::new();
    match iif {
        Some(i) => ins.push((i.clone(), None)),
        None => {
            for &m in marks {
                if let Lookup::Route { route, rule, .. } = routes.lookup(server, Some(client), None, m) {
                    for d in route.devs() {
                        let how = match (m, rule) {
                            (0, _) => format!("by {d} ({}:{})", routes.file, route.line),
                            (m, Some(rl)) => format!(
                                "by {d}, marked {m:#x} (the rule at {}:{rl}, the route at line {})",
                                routes.file, route.line
                            ),
                            (m, None) => format!("by {d}, marked {m:#x} ({}:{})", routes.file, route.line),
                        };
                        if !ins.iter().any(|(x, _)| x == d) {
                            ins.push((d.to_string(), Some(how)));
                        }
                    }
                }
            }
        }
    }
    if ins.is_empty() {
        why.push("the reverse-path filter: the interface it came in by is not known".into());
        return None;
    }
    let several = ins.len() > 1;
    let mut drops: Vec<Cause> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (i, how) in &ins {
        match kernel::reverse_path(routes, sys, server, client, i, marks[0]) {
            RpCheck::Drop { mode, reason, sysctl_lines, route, leaves_by } => drops.push(Cause::RpFilter {
                sysctl: sys.file.clone(),
                sysctl_lines,
                mode,
                iif: i.clone(),
                src: server,
                routes: routes.file.clone(),
                route,
                leaves_by,
                reason,
                taking: how.as_ref().filter(|_| several).map(|h| format!("the request having left {h}")),
            }),
            RpCheck::Unknown { why: w } => unknown.push(w),
            RpCheck::Pass { .. } | RpCheck::NotApplicable => {
                checked.push(format!("the reverse-path filter on {i} ({})", sys.file))
            }
        }
    }
    if drops.len() == 1 && unknown.is_empty() && why.is_empty() {
        return drops.pop();
    }
    why.extend(unknown.into_iter().map(|w| format!("the reverse-path filter: {w}")));
    if !drops.is_empty() {
        let each: Vec<String> = (drops.iter())
            .map(|d| note(&Loss { at: String::new(), packet: Packet::Request, cause: d.clone() }))
            .collect();
        why.push(format!("possible: {}", each.join(" or ")));
    }
    None
}

/// The filter table (`--rules`) on a reply the host was to forward back: the
/// FORWARD chains as they see it once conntrack undid the translations —
/// from the server's endpoint as it sent the reply to the client's as it
/// sent the request, the connection established — coming in by the
/// interface the request left by and leaving by the one it came in by, where
/// a split capture names them.
fn reply_filtered(
    r: &Request,
    host: &Host,
    why: &mut Vec<String>,
    checked: &mut Vec<String>,
) -> Option<Cause> {
    let set = host.rules.as_ref()?;
    let (a, b) = host.span;
    let (before, after) = (r.captures.get(a)?, r.captures.get(b)?);
    let (c, s) = (before.client?, after.server?);
    let proto = proto_number(r.proto, c.addr);
    let port = |p: Option<u16>| if r.proto == Proto::Icmp { None } else { p };
    let tuple = (s.addr, port(s.port), c.addr, port(c.port));
    let (iif, oif) = if host.sides {
        (named(after.reply_iface()).or_else(|| named(after.iface())), named(before.iface()))
    } else {
        (host.oif.clone(), host.iif.clone())
    };
    match eval::filtered_reply(set, proto, tuple, iif, oif) {
        f @ (Filtered::Dropped { .. } | Filtered::Policy { .. }) => return Some(Cause::Filter(f)),
        Filtered::Passes { file } => checked.push(format!("no filter rule drops the reply ({file})")),
        Filtered::NoFilter => {}
        f @ Filtered::Undecided { .. } => why.push(filter_note(&f)),
    }
    None
}

/// A request that reached the host a capture was taken on (the backend)
/// and got no reply from it: the route its reply would take back to the
/// client as that capture saw it (sent by the host itself: no reverse-path
/// filter, no forwarding), then the next hop's neighbour entry.
fn end_cause(r: &Request, host: &Host) -> Option<Cause> {
    let h = r.captures.get(host.span.0)?;
    let (client, server) = (h.client?.addr, h.server?.addr);
    let routes = host.routes.as_ref()?;
    let mut checked = Vec::new();
    match routes.lookup(client, Some(server), None, 0) {
        l if !l.unsure().is_empty() => {
            return Some(Cause::Undecided {
                why: vec![format!(
                    "the route back to {client} depends on a policy rule the files cannot decide ({}: {})",
                    routes.file,
                    lines(l.unsure().to_vec())
                )],
            })
        }
        l @ (Lookup::NoRoute { .. } | Lookup::Refused { .. }) => return refused(routes, &l, client),
        Lookup::Route { route, .. } => {
            checked.push(format!("a route back to {client} ({}:{})", routes.file, route.line));
            if let Some(cause) = next_hop(host, routes, route, client, &mut checked) {
                return Some(cause);
            }
        }
    }
    checked.push("the server may not have answered".to_string());
    finish(host, Vec::new(), checked)
}

/// The cause a lookup to `dst` that found no route, or a refusing one, gives;
/// None for a route.
fn refused(routes: &kernel::Routes, l: &Lookup<'_>, dst: IpAddr) -> Option<Cause> {
    match l {
        Lookup::NoRoute { tables, .. } => Some(Cause::NoRoute {
            file: routes.file.clone(),
            dst,
            tables: tables.iter().map(|t| t.to_string()).collect(),
        }),
        Lookup::Refused { kind, line, .. } => Some(Cause::Refused {
            file: routes.file.clone(),
            line: *line,
            kind: kind_word(*kind).to_string(),
            dst,
        }),
        Lookup::Route { .. } => None,
    }
}

/// The next hop of `route` towards `dst` (its gateway, or `dst` on-link)
/// in the host's neighbours: a FAILED or INCOMPLETE entry is the cause; else
/// what was checked is noted.
fn next_hop(
    host: &Host,
    routes: &kernel::Routes,
    route: &kernel::Route,
    dst: IpAddr,
    checked: &mut Vec<String>,
) -> Option<Cause> {
    let neigh = host.neigh.as_ref()?;
    let addr = route.via.unwrap_or(dst);
    match neigh.state(addr, route.dev.as_deref()) {
        Some((state @ (NeighState::Failed | NeighState::Incomplete), line)) => {
            return Some(Cause::Neighbour {
                file: neigh.file.clone(),
                line,
                addr,
                state,
                route: route.line,
                routes: routes.file.clone(),
            })
        }
        Some(_) => checked.push(format!("the next hop {addr} answers ({})", neigh.file)),
        None => checked.push(format!("no entry for the next hop {addr} ({})", neigh.file)),
    }
    None
}

/// The reverse-path filter when the interface a packet came in by is not
/// known: each interface the routes name, checked; None when it passes on
/// every one (rp_filter off, or the route back leaves by each), else what
/// the interfaces on which it drops, or cannot be checked, are.
fn rp_any_iface(routes: &kernel::Routes, sys: &kernel::Sysctl, src: IpAddr, dst: IpAddr) -> Option<String> {
    let mut devs: Vec<&str> = routes.routes.iter().flat_map(|r| r.devs()).filter(|d| *d != "lo").collect();
    devs.sort_unstable();
    devs.dedup();
    let mut drops = Vec::new();
    let mut unknown = Vec::new();
    for d in devs {
        match kernel::reverse_path(routes, sys, src, dst, d, 0) {
            RpCheck::Drop { mode, .. } => drops.push(format!("{d} (rp_filter={mode})")),
            RpCheck::Unknown { .. } => unknown.push(d.to_string()),
            RpCheck::Pass { .. } | RpCheck::NotApplicable => {}
        }
    }
    if drops.is_empty() && unknown.is_empty() {
        return None;
    }
    let mut out = String::from("the reverse-path filter: the interface it came in by is not known");
    if !drops.is_empty() {
        out.push_str(&format!(", and it would drop it on {}", drops.join(", ")));
    }
    if !unknown.is_empty() {
        out.push_str(&format!(", and the files do not say for {}", unknown.join(", ")));
    }
    Some(out)
}

/// The marks a host's policy rules select on (and 0), for when the mark is not known.
fn candidate_marks(routes: &kernel::Routes, dst: IpAddr) -> Vec<u32> {
    let rules = if dst.is_ipv6() { &routes.rules_v6 } else { &routes.rules_v4 };
    let mut out = vec![0];
    for r in rules {
        if let Some((v, _)) = r.fwmark {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Two lookups that end alike (the same route, refusal or none).
fn same_lookup(a: &Lookup<'_>, b: &Lookup<'_>) -> bool {
    match (a, b) {
        (Lookup::Route { route: x, .. }, Lookup::Route { route: y, .. }) => std::ptr::eq(*x, *y),
        (Lookup::Refused { line: x, .. }, Lookup::Refused { line: y, .. }) => x == y,
        (Lookup::NoRoute { .. }, Lookup::NoRoute { .. }) => true,
        _ => false,
    }
}

/// No step dropped it: undecided with what the files could not decide, or
/// passes with what was checked and the files not given.
fn finish(host: &Host, why: Vec<String>, checked: Vec<String>) -> Option<Cause> {
    if !why.is_empty() {
        return Some(Cause::Undecided { why });
    }
    let mut missing = Vec::new();
    if host.routes.is_none() {
        missing.push("--routes");
    }
    if host.sysctl.is_none() {
        missing.push("--sysctl");
    }
    if host.neigh.is_none() {
        missing.push("--neigh");
    }
    if host.rules.is_none() {
        missing.push("--rules");
    }
    (!checked.is_empty()).then_some(Cause::Passes { checked, missing })
}

/// True when a policy rule with a `fwmark` selector could send `dst`
/// elsewhere than mark 0 does.
fn marks_decide(routes: &kernel::Routes, dst: IpAddr) -> bool {
    !mark_rules(routes, dst).is_empty()
}

fn mark_rules(routes: &kernel::Routes, dst: IpAddr) -> Vec<u32> {
    let rules = if dst.is_ipv6() { &routes.rules_v6 } else { &routes.rules_v4 };
    rules.iter().filter(|r| r.fwmark.is_some_and(|(v, _)| v != 0) && r.line > 0).map(|r| r.line).collect()
}

fn lines(l: Vec<u32>) -> String {
    l.iter().map(|n| format!("line {n}")).collect::<Vec<_>>().join(", ")
}

/// What a loss says, as JSON `loss.note` and the explanation's "lost at
/// AT: NOTE" carry it. Never a `;`.
pub fn note(l: &Loss) -> String {
    let what = match l.packet {
        Packet::Request => "",
        Packet::Reply => "reply ",
    };
    let text = match &l.cause {
        Cause::NotForwarding { file, line } => {
            format!("{what}not forwarded: net.ipv4.ip_forward = 0 ({file}:{line})")
        }
        Cause::NoRoute { file, dst, tables } => format!(
            "{what}has no route: no route to {dst} in table {} ({file})",
            tables.join(", ")
        ),
        Cause::Refused { file, line, kind, dst } => {
            format!("{what}refused by the route to {dst}: a {kind} route ({file}:{line})")
        }
        Cause::RpFilter { sysctl, sysctl_lines, mode, iif, src, routes, route, leaves_by, reason, taking } => {
            let back = match (route, leaves_by) {
                (Some(l), Some(by)) if *reason == RpDrop::WrongInterface => {
                    format!("the route back to {src} leaves by {by} ({routes}:{l})")
                }
                (Some(l), _) => format!("the route back to {src} is {routes}:{l}"),
                (None, _) => format!("no route back to {src} ({routes})"),
            };
            let taking = taking.as_ref().map_or(String::new(), |t| {
                format!(", taking {t}: the only way the files explain the loss")
            });
            format!(
                "{what}dropped by rp_filter={mode} on {iif} ({sysctl}:{}): {back}{taking}",
                sysctl_lines.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            )
        }
        Cause::Filter(f) => format!("{what}{}", filter_note(f)),
        Cause::Neighbour { file, line, addr, state, route, routes } => format!(
            "{what}stopped at the next hop: {addr} is {} ({file}:{line}), the route to it is {routes}:{route}",
            state_word(*state)
        ),
        Cause::Undecided { why } => {
            let which = if l.packet == Packet::Reply { "the reply" } else { "the request" };
            format!("why {which} was lost is not decided: {}", why.join(", "))
        }
        Cause::Passes { checked, missing } => {
            let more = if missing.is_empty() {
                String::new()
            } else {
                format!(" ({} not given)", missing.join(", "))
            };
            let which = if l.packet == Packet::Reply { "the reply" } else { "the request" };
            format!("nothing in the host's files drops {which}: {}{more}", checked.join(", "))
        }
    };
    text.replace(';', ",")
}

fn kind_word(k: kernel::RouteKind) -> &'static str {
    use kernel::RouteKind as K;
    match k {
        K::Unicast => "unicast",
        K::Local => "local",
        K::Broadcast => "broadcast",
        K::Anycast => "anycast",
        K::Multicast => "multicast",
        K::Blackhole => "blackhole",
        K::Unreachable => "unreachable",
        K::Prohibit => "prohibit",
        K::Throw => "throw",
    }
}

fn state_word(s: NeighState) -> &'static str {
    match s {
        NeighState::Incomplete => "INCOMPLETE (resolution sent, no answer)",
        NeighState::Failed => "FAILED (it did not answer)",
        NeighState::Reachable => "REACHABLE",
        NeighState::Stale => "STALE",
        NeighState::Delay => "DELAY",
        NeighState::Probe => "PROBE",
        NeighState::Noarp => "NOARP",
        NeighState::Permanent => "PERMANENT",
        NeighState::Unset => "NONE",
    }
}

/// What the filter table says of a lost packet (part of `loss.note`). Never a `;`.
pub fn filter_note(f: &Filtered) -> String {
    let taking = |d: &[String]| {
        if d.is_empty() {
            String::new()
        } else {
            let conds: Vec<&str> = d.iter().map(|x| x.split(" (").next().unwrap_or(x)).collect();
            let seen = d.iter().any(|x| x.contains(eval::ERROR_SEEN));
            let why = if seen { " (the only way that answers with the error seen)" } else { "" };
            format!(", taking {}{why}", conds.join(", "))
        }
    };
    let note = match f {
        Filtered::Dropped { rule, reject, decided } => format!(
            "{} by `{}` ({}:{}){}",
            if *reject { "rejected" } else { "dropped" },
            eval::filter_rule_text(&rule.text),
            rule.file,
            rule.line,
            taking(decided)
        ),
        Filtered::Policy { file, chain, line, decided, .. } => format!(
            "dropped by chain {chain}'s policy ({file}:{line}): no rule accepted it first{}",
            taking(decided)
        ),
        Filtered::Passes { file } => format!(
            "no filter rule in {file} drops it: the route, the reverse-path filter or a neighbour decide, \
             which the rules do not show"
        ),
        Filtered::Undecided { conditions, rules } if rules.is_empty() => {
            format!("the filter rules not evaluated: {}", conditions.join(", "))
        }
        Filtered::Undecided { conditions, rules } => format!(
            "dropped by {} only if {}",
            (rules.iter())
                .map(|r| format!("`{}` ({}:{})", eval::filter_rule_text(&r.text), r.file, r.line))
                .collect::<Vec<_>>()
                .join(" or "),
            conditions.join(", ")
        ),
        Filtered::NoFilter => String::new(),
    };
    note.replace(';', ",")
}
