//! What a masquerade change will do, before it is made: the ip-masq-agent
//! ConfigMap proposed for a host (`--masq-agent-after WHERE=FILE`), or its
//! nat rules as edited (`--rules-after WHERE=FILE`, walked like today's:
//! see `eval::forecast`), against each request that crossed that host in
//! the captures. The agent's rule is
//! read as it writes its chain: a destination in `nonMasqueradeCIDRs` (or
//! link-local, per `masqLinkLocal`) keeps the pod's source, any other is
//! masqueraded to the node's address on the way out. That address is taken
//! from the captures — the one source the host's masqueraded requests leave
//! with today (by the same interface at a split capture) — or said unknown.
//! A change applies to new connections: one open when the agent rewrites
//! its chain keeps today's translation (conntrack) until it ends.
//! Takes the run's typed findings and the hosts' files; gives per request a
//! [`Predicted`] source and, per destination whose source would change, a
//! [`Blast`] line.

use super::host::{numbered, Host};
use super::masq::{Intent, MasqConfig};
use crate::verdict::{Findings, Request};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// A request's source leaving the host, today and after the change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicted {
    /// The host (WHERE).
    pub at: String,
    /// The source entering the host (the pod's).
    pub before: IpAddr,
    /// The source leaving it today, as the captures show it.
    pub today: IpAddr,
    /// The source leaving it after the change; None when the captures do not
    /// tell the node's address for it (`reason` says why).
    pub after: Option<IpAddr>,
    /// The ConfigMap line or rule that decides it, or why it is unknown. Never a `;`.
    pub reason: String,
}

impl Predicted {
    /// The source will differ from today's (unknown counts as no).
    pub fn changes(&self) -> bool {
        self.after.is_some_and(|a| a != self.today)
    }
}

/// One destination whose requests' source the change would change: who will
/// see another sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blast {
    pub at: String,
    pub destination: IpAddr,
    pub requests: u64,
    /// The first of them.
    pub first: u64,
    pub today: IpAddr,
    pub after: IpAddr,
    pub reason: String,
}

/// The predictions of every request crossing a host given a proposed
/// ConfigMap, and the blast radius, most requests first.
pub fn predict(findings: &Findings, hosts: &[Host]) -> (BTreeMap<u64, Predicted>, Vec<Blast>) {
    let mut out = BTreeMap::new();
    // (host, destination, today, after) -> (requests, first, reason)
    type Key = (String, IpAddr, IpAddr, IpAddr);
    let mut blast: BTreeMap<Key, (u64, u64, String)> = BTreeMap::new();
    for host in hosts {
        if host.masq_after.is_none() && host.rules_after.is_none() {
            continue;
        }
        let masq = masquerade_addresses(findings, host);
        for r in findings.requests.iter().filter(|r| host.holds(r)) {
            if out.contains_key(&r.request) {
                continue;
            }
            let p = match (&host.rules_after, &host.masq_after) {
                (Some(set), _) => by_rules(r, host, set, &masq),
                (None, Some(after)) => one(r, host, after, &masq),
                (None, None) => None,
            };
            let Some(p) = p else { continue };
            if let (true, Some(a), Some(dst)) = (p.changes(), p.after, destination(r, host)) {
                let e = blast.entry((host.at.clone(), dst, p.today, a)).or_insert((
                    0,
                    r.request,
                    p.reason.clone(),
                ));
                e.0 += 1;
            }
            out.insert(r.request, p);
        }
    }
    let mut lines: Vec<Blast> = (blast.into_iter())
        .map(|((at, destination, today, after), (requests, first, reason))| Blast {
            at,
            destination,
            requests,
            first,
            today,
            after,
            reason,
        })
        .collect();
    lines.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.first.cmp(&b.first)));
    (out, lines)
}

/// The captures around `host` that saw `r`: the first and the last.
fn around(r: &Request, host: &Host) -> Option<(usize, usize)> {
    around_span(r, host.span)
}

/// The captures of `span` (see [`super::span_of`]) that saw `r`: the first
/// and the last, when they are two.
pub fn around_span(r: &Request, span: (usize, usize)) -> Option<(usize, usize)> {
    let mut seen = (span.0..=span.1).filter(|&i| r.captures.get(i).is_some_and(|h| h.seen));
    let a = seen.next()?;
    let b = seen.next_back()?;
    (a < b).then_some((a, b))
}

/// The source `r` leaves the host of `span` with, read as [`Predicted::today`]
/// is: its client at the last capture of the span that saw it, when an
/// earlier one of the span saw it too; None otherwise.
pub fn source_leaving(r: &Request, span: (usize, usize)) -> Option<IpAddr> {
    let (_, b) = around_span(r, span)?;
    Some(r.captures[b].client?.addr)
}

/// The request's destination leaving the host (after any DNAT there).
fn destination(r: &Request, host: &Host) -> Option<IpAddr> {
    let (_, b) = around(r, host)?;
    Some(r.captures[b].server?.addr)
}

/// The interface the request left the host by, at a split capture.
fn out_iface<'r>(r: &'r Request, host: &Host) -> Option<&'r str> {
    let (_, b) = around(r, host)?;
    host.sides.then(|| r.captures[b].iface()).flatten()
}

/// The sources the host's masqueraded requests leave with today, by the
/// interface they leave by (None: not known): the node's addresses.
fn masquerade_addresses(findings: &Findings, host: &Host) -> BTreeMap<Option<String>, Vec<IpAddr>> {
    let mut out: BTreeMap<Option<String>, Vec<IpAddr>> = BTreeMap::new();
    for r in findings.requests.iter().filter(|r| host.holds(r)) {
        let Some((a, b)) = around(r, host) else { continue };
        let (Some(x), Some(y)) = (r.captures[a].client, r.captures[b].client) else { continue };
        if x.addr != y.addr {
            let list = out.entry(out_iface(r, host).map(str::to_string)).or_default();
            if !list.contains(&y.addr) {
                list.push(y.addr);
            }
        }
    }
    out
}

/// A request's source under an edited ruleset: the POSTROUTING rule its
/// first packet would meet (destination as it leaves the host today).
fn by_rules(
    r: &Request,
    host: &Host,
    set: &super::model::Ruleset,
    masq: &BTreeMap<Option<String>, Vec<IpAddr>>,
) -> Option<Predicted> {
    use super::eval::{self, Forecast};
    let (a, b) = around(r, host)?;
    let (c0, s0) = (r.captures[a].client?, r.captures[a].server?);
    let (c1, s1) = (r.captures[b].client?, r.captures[b].server?);
    let (before, today) = (c0.addr, c1.addr);
    let icmp = r.proto == crate::verdict::Proto::Icmp;
    let port = |p: Option<u16>| if icmp { None } else { p };
    let proto = super::host::proto_number(r.proto, before);
    let observed = eval::Observed {
        proto,
        before: (c0.addr, port(c0.port), s0.addr, port(s0.port)),
        after: (c1.addr, port(c1.port), s1.addr, port(s1.port)),
        iif: None,
        oif: None,
    };
    let oif = (out_iface(r, host).filter(|i| !numbered(i)).map(str::to_string))
        .or_else(|| host.oif.clone())
        // the way out today's translation proves: today's rules, else the new ones
        .or_else(|| host.rules.as_ref().and_then(|today| taken_oif(today, &observed)))
        .or_else(|| taken_oif(set, &observed));
    let dnat_done = (s0.addr, s0.port) != (s1.addr, s1.port);
    let quote =
        |rule: &eval::RuleRef| format!("`{}` ({}:{})", eval::short_rule(&rule.text), rule.file, rule.line);
    let (after, reason) =
        match eval::forecast(set, proto, (before, port(c0.port)), (s1.addr, port(s1.port)), oif, dnat_done) {
            Forecast::Kept { deciding } => {
                let why = deciding.first().map_or_else(String::new, |d| format!(": {d}"));
                (Some(before), format!("no nat rule of {} translates it{why}", set.file))
            }
            Forecast::Snat { rule, to: Some(to) } => (Some(to), format!("by {}", quote(&rule))),
            Forecast::Snat { rule, to: None } => {
                (None, format!("by {}: unknown, because it maps to a range", quote(&rule)))
            }
            Forecast::Masquerade { rule } => {
                if today != before {
                    (Some(today), format!("by {}", quote(&rule)))
                } else {
                    match masq_address(r, host, masq) {
                        Ok(addr) => (
                            Some(addr),
                            format!(
                            "by {}, to {addr}, the source the node's masqueraded requests leave with today",
                            quote(&rule)
                        ),
                        ),
                        Err(why) => (None, format!("by {}: unknown, because {why}", quote(&rule))),
                    }
                }
            }
            Forecast::Undecided { conditions } => (
                None,
                format!(
                    "unknown, because the rules of {} depend on what the captures do not show: {}",
                    set.file,
                    conditions.join(", ")
                ),
            ),
        };
    Some(Predicted { at: host.at.clone(), before, today, after, reason: reason.replace(';', ",") })
}

/// The output interface the captures decided for `obs` under `set`: the
/// `-o NAME` (nft `oifname`) condition the only way to today's translation took.
fn taken_oif(set: &super::model::Ruleset, obs: &super::eval::Observed) -> Option<String> {
    let super::eval::Found::Rule { decided, .. } = super::eval::evaluate(set, obs).source else {
        return None;
    };
    decided.iter().filter(|d| d.ends_with(")") && d.contains("(matched")).find_map(|d| {
        let name = d.strip_prefix("-o ").or_else(|| d.strip_prefix("oifname "))?;
        let name = name.split_whitespace().next()?.trim_matches('"');
        (!name.is_empty() && !name.ends_with('+') && !name.ends_with('*')).then(|| name.to_string())
    })
}

/// The node's address a request not masqueraded today would be masqueraded
/// to: the one its masqueraded requests leave with today (by the same
/// interface at a split capture); else why it is not known.
fn masq_address(
    r: &Request,
    host: &Host,
    masq: &BTreeMap<Option<String>, Vec<IpAddr>>,
) -> Result<IpAddr, String> {
    let iface = out_iface(r, host).map(str::to_string);
    let candidates = masq.get(&iface).or_else(|| (masq.len() == 1).then(|| masq.values().next()).flatten());
    match candidates.map(Vec::as_slice) {
        Some([one]) => Ok(*one),
        Some(several) if !several.is_empty() => Err(format!(
            "the node's masqueraded requests leave with several addresses today ({}): which one depends on its route",
            several.iter().map(IpAddr::to_string).collect::<Vec<_>>().join(", ")
        )),
        _ => Err("no request left the node masqueraded today, so the captures do not show its address".to_string()),
    }
}

fn one(
    r: &Request,
    host: &Host,
    after: &MasqConfig,
    masq: &BTreeMap<Option<String>, Vec<IpAddr>>,
) -> Option<Predicted> {
    let (a, b) = around(r, host)?;
    let before = r.captures[a].client?.addr;
    let today = r.captures[b].client?.addr;
    let dst = r.captures[b].server?.addr;
    let line = |c: &super::model::Cidr| {
        (after.non_masquerade.iter().flatten())
            .find(|(x, _)| x == c)
            .map_or_else(|| after.file.clone(), |(_, l)| format!("{}:{l}", after.file))
    };
    let (after_addr, reason) = match after.intent(dst) {
        None => (
            None,
            format!(
                "unknown, because {} has no nonMasqueradeCIDRs: the agent's defaults depend on its version",
                after.file
            ),
        ),
        Some(Intent::Keep(c)) => (Some(before), format!("{dst} in {c}: kept ({})", line(&c))),
        Some(Intent::Masquerade) => {
            let not_listed = format!("{dst} in no nonMasqueradeCIDRs of {}: masqueraded", after.file);
            if today != before {
                // masqueraded today: the same address, by the same way out
                (Some(today), not_listed)
            } else {
                match masq_address(r, host, masq) {
                    Ok(addr) => (
                        Some(addr),
                        format!("{not_listed} to {addr}, the source the node's masqueraded requests leave with today"),
                    ),
                    Err(why) => (None, format!("{not_listed}: unknown, because {why}")),
                }
            }
        }
    };
    Some(Predicted {
        at: host.at.clone(),
        before,
        today,
        after: after_addr,
        reason: reason.replace(';', ","),
    })
}
