//! What a masquerade change will do, before it is made: the ip-masq-agent
//! ConfigMap proposed for a host (`--masq-agent-after WHERE=FILE`) against
//! each request that crossed that host in the captures. The agent's rule is
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

use super::host::Host;
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
        let Some(after) = &host.masq_after else { continue };
        let masq = masquerade_addresses(findings, host);
        for r in findings.requests.iter().filter(|r| host.holds(r)) {
            if out.contains_key(&r.request) {
                continue;
            }
            let Some(p) = one(r, host, after, &masq) else { continue };
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
    let mut seen = (host.span.0..=host.span.1).filter(|&i| r.captures.get(i).is_some_and(|h| h.seen));
    let a = seen.next()?;
    let b = seen.next_back()?;
    (a < b).then_some((a, b))
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
                let iface = out_iface(r, host).map(str::to_string);
                let candidates =
                    masq.get(&iface).or_else(|| (masq.len() == 1).then(|| masq.values().next()).flatten());
                match candidates.map(Vec::as_slice) {
                    Some([one]) => (
                        Some(*one),
                        format!("{not_listed} to {one}, the source the node's masqueraded requests leave with today"),
                    ),
                    Some(several) if !several.is_empty() => (
                        None,
                        format!(
                            "{not_listed}, to one of {} (the node's addresses its masqueraded requests leave with \
                             today): unknown, because which one depends on the node's route to {dst}",
                            several.iter().map(IpAddr::to_string).collect::<Vec<_>>().join(", ")
                        ),
                    ),
                    _ => (
                        None,
                        format!(
                            "{not_listed}: unknown, because no request left the node masqueraded today, so the \
                             captures do not show the node's address"
                        ),
                    ),
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
