//! The post-pass: for every source/destination change at a host the user gave
//! files for, the nat rule that made it and the conntrack entry that records
//! it (for a proxy's new connection: the rule and entry that sent the
//! client's connection to the proxy); per host, what the ip-masq-agent ConfigMap intended against the
//! node's chain and the packets. Takes the run's typed findings and the
//! loaded [`Host`]s; gives an [`Explained`] the report layer reads (never a
//! changed verdict).

use super::conntrack::{self, Record};
use super::eval::{self, Evaluation, Found, Observed, RuleRef};
pub use super::host::Host;
use super::host::{numbered, proto_number};
use super::kernel;
use super::masq::{Intent, MasqConfig};
use super::model::{Action, Cidr, Cond, Family, Field, Ruleset, Value};
use crate::verdict::{Between, Change, ChangeKind, Findings, Proto, Request};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

/// Evaluations kept per run (one per distinct tuple at a host); past it, each is evaluated anew.
const CACHE: usize = 1 << 16;
/// Findings of one kind kept per host (warnings, intent destinations); the rest counted.
const MAX_FINDINGS: usize = 20;

/// Which side of a request changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    Source,
    Destination,
}

/// The kernel's record of one change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtRef {
    pub file: String,
    pub line: u32,
    /// The entry's reply tuple is the capture's after-side.
    pub confirmed: bool,
    /// `-o timestamp`: when the kernel reported it.
    pub time_ns: Option<i64>,
    /// Not confirmed: the entry's reply tuple, `src -> dst`.
    pub reply: Option<String>,
}

/// What the post-pass found for one change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeWhy {
    /// None when no rules file was given for the host.
    pub rule: Option<Found>,
    /// None when no conntrack file was given, or no entry was found.
    pub conntrack: Option<CtRef>,
}

/// One intent finding (ip-masq-agent): the ConfigMap against the chain or the packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntentFinding {
    pub at: String,
    /// `chain` (the ConfigMap against the node's rules) or `packets`.
    pub kind: &'static str,
    pub cidr: Option<String>,
    pub destination: Option<IpAddr>,
    pub requests: Option<u64>,
    /// Masqueraded packets: the source they left with.
    pub translated_to: Option<IpAddr>,
    pub rule: Option<RuleRef>,
    pub message: String,
}

/// The post-pass's findings for a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Explained {
    /// Per request: why it (or its reply) stopped inside a host given files (the first such host).
    losses: HashMap<u64, super::lost::Loss>,
    changes: HashMap<(u64, Side, Between), ChangeWhy>,
    /// Why a side that crossed a host unchanged was kept: `(WHERE, what the
    /// rules say)`, only when they say something (nat rules passed, a
    /// disagreement, conditions not evaluated).
    kept: HashMap<(u64, Side), Vec<(String, Found)>>,
    pub intent: Vec<IntentFinding>,
    /// `--masq-agent-after`: each request's source after the change, by request.
    pub predicted: std::collections::BTreeMap<u64, super::preview::Predicted>,
    /// `--masq-agent-after`: the destinations that would see another sender.
    pub blast: Vec<super::preview::Blast>,
    /// `(host, message)`: a translation without a conntrack entry, an entry that disagrees.
    pub warnings: Vec<(String, String)>,
}

impl Explained {
    /// What was found for a change of request `request`.
    pub fn of(&self, request: u64, side: Side, between: Between) -> Option<&ChangeWhy> {
        self.changes.get(&(request, side, between))
    }

    /// Why request `request` stopped inside a host, when its rules were given.
    pub fn loss(&self, request: u64) -> Option<&super::lost::Loss> {
        self.losses.get(&request)
    }

    /// Why request `request`'s `side` was kept unchanged, per host that says.
    pub fn kept(&self, request: u64, side: Side) -> &[(String, Found)] {
        self.kept.get(&(request, side)).map_or(&[], Vec::as_slice)
    }
}

/// What the rules say of a side kept unchanged (JSON `kept[].rule_note`): the
/// nat rules passed and the condition of each that did not match, or a
/// disagreement, or the conditions not evaluated; None when there is
/// nothing to say (no nat rule on the hook). Never a `;` (the explanation's
/// separator).
pub fn kept_note(f: &Found) -> Option<String> {
    let note = match f {
        Found::Rule { .. } => return None,
        Found::NoRule { deciding } if deciding.is_empty() => return None,
        Found::NoRule { deciding } => format!("no rule translates it: {}", deciding.join(", ")),
        Found::NotEvaluated { conditions } => format!("not evaluated: {}", conditions.join(", ")),
        Found::Disagrees { why } => format!("the rules disagree with the captures: {why}"),
    };
    Some(note.replace(';', ","))
}

/// The explanation's words for a kept side: [`kept_note`] up to its first
/// deciding rule (the JSON has them all); a prefix of it.
pub fn kept_clause(f: &Found) -> Option<String> {
    match f {
        Found::NoRule { deciding } => {
            Some(format!("no rule translates it: {}", deciding.first()?).replace(';', ","))
        }
        other => kept_note(other),
    }
}

/// The packet before and after a host, from the captures on its two sides;
/// at a split capture's host, the interfaces the request took at its in-side
/// and out-side (named ones: an `ifN` names no interface a rule could).
fn observed(r: &Request, host: &Host, b: Between) -> Option<Observed> {
    let (x, y) = (r.captures.get(b.from)?, r.captures.get(b.to)?);
    let (c0, s0, c1, s1) = (x.client?, x.server?, y.client?, y.server?);
    let side = |c: usize| {
        let name = r.captures.get(c).filter(|_| host.sides)?.iface()?;
        (!numbered(name)).then(|| name.to_string())
    };
    Some(Observed {
        proto: proto_number(r.proto, c0.addr),
        before: (c0.addr, c0.port, s0.addr, s0.port),
        after: (c1.addr, c1.port, s1.addr, s1.port),
        iif: side(host.span.0).or_else(|| host.iif.clone()),
        oif: side(host.span.1).or_else(|| host.oif.clone()),
    })
}

/// The run's post-pass.
pub fn explain(findings: &Findings, hosts: &[Host]) -> Explained {
    let mut out = Explained::default();
    let mut cache: HashMap<(usize, Observed), Evaluation> = HashMap::new();
    let mut cache_in: HashMap<(usize, Observed), Found> = HashMap::new();
    for (h, host) in hosts.iter().enumerate() {
        let mut warned = 0u64;
        // intent per destination: (dst, masqueraded to) -> (count, first request)
        let mut seen: BTreeMap<(IpAddr, Option<IpAddr>), (u64, u64)> = BTreeMap::new();
        for r in findings.requests.iter().filter(|r| host.holds(r)) {
            let inside = |c: &&Change| c.between.from >= host.span.0 && c.between.to <= host.span.1;
            let changes: Vec<(Side, &Change)> = (r.source.iter().filter(inside).map(|c| (Side::Source, c)))
                .chain(r.destination.iter().filter(inside).map(|c| (Side::Destination, c)))
                .collect();
            if let Some(set) = &host.rules {
                kept(&mut out, &mut cache, (h, host, set), r, &changes);
            }
            if let std::collections::hash_map::Entry::Vacant(e) = out.losses.entry(r.request) {
                if let Some(loss) = super::lost::lost(r, host) {
                    e.insert(loss);
                }
            }
            for &(side, c) in &changes {
                let Some(obs) = observed(r, host, c.between) else { continue };
                let proxy = c.kind == ChangeKind::Proxy;
                let rule = host.rules.as_ref().map(|set| match side {
                    // the client's connection ended at a proxy on the host: what sent it there
                    _ if proxy => redirect(&mut cache_in, h, set, &obs),
                    Side::Source => match evaluated(&mut cache, h, set, &obs).source {
                        // an output interface the captures do not show, settled by
                        // the host's own address the source became (MASQUERADE
                        // takes the address of the interface it leaves by)
                        Found::NotEvaluated { conditions } if obs.oif.is_none() => {
                            by_own_address(&mut cache, h, host, set, &obs)
                                .unwrap_or(Found::NotEvaluated { conditions })
                        }
                        found => found,
                    },
                    Side::Destination => evaluated(&mut cache, h, set, &obs).destination,
                });
                let ct = record(r, host, c, &obs);
                if !host.conntrack.is_empty() {
                    let problem = match &ct {
                        None => Some("no conntrack entry has its original tuple".to_string()),
                        Some(x) if !x.confirmed => Some(format!(
                            "the conntrack entry ({}:{}) replies {}, {}",
                            x.file,
                            x.line,
                            x.reply.as_deref().unwrap_or("?"),
                            if proxy { "not from a proxy on the host" } else { "not as the captures show" }
                        )),
                        Some(_) => None,
                    };
                    if let Some(p) = problem {
                        warned += 1;
                        if out.warnings.len() < MAX_FINDINGS * hosts.len() && warned <= MAX_FINDINGS as u64 {
                            let what = if side == Side::Source { "source" } else { "destination" };
                            out.warnings.push((
                                host.at.clone(),
                                format!("request {}: {what} {} -> {}: {p}", r.request, c.before, c.after),
                            ));
                        }
                    }
                }
                out.changes.insert((r.request, side, c.between), ChangeWhy { rule, conntrack: ct });
            }
            if host.masq.is_some() {
                let (Some(a), Some(b)) = (first_seen(r, host.span, true), first_seen(r, host.span, false))
                else {
                    continue;
                };
                let (Some(dst), Some(before), Some(after)) = (
                    r.captures[b].server.map(|s| s.addr),
                    r.captures[a].client.map(|c| c.addr),
                    r.captures[b].client.map(|c| c.addr),
                ) else {
                    continue;
                };
                let to = (before != after).then_some(after);
                let e = seen.entry((dst, to)).or_insert((0, r.request));
                e.0 += 1;
            }
        }
        if warned > MAX_FINDINGS as u64 {
            out.warnings.push((
                host.at.clone(),
                format!("{} more changes without a confirming conntrack entry", warned - MAX_FINDINGS as u64),
            ));
        }
        if let Some(m) = &host.masq {
            intent(&mut out, host, m, &seen, findings);
        }
    }
    (out.predicted, out.blast) = super::preview::predict(findings, hosts);
    out
}

/// The rules of host `h` evaluated for `obs`, remembered for the next
/// request alike.
fn evaluated(
    cache: &mut HashMap<(usize, Observed), Evaluation>,
    h: usize,
    set: &Ruleset,
    obs: &Observed,
) -> Evaluation {
    remembered(cache, (h, obs.clone()), || eval::evaluate(set, obs))
}

/// The source change of `obs` evaluated again with the output interface
/// that holds the translated address (table local of `--routes`): when that
/// names one rule, it is the rule, and the inference is said in `decided`.
fn by_own_address(
    cache: &mut HashMap<(usize, Observed), Evaluation>,
    h: usize,
    host: &Host,
    set: &Ruleset,
    obs: &Observed,
) -> Option<Found> {
    let routes = host.routes.as_ref()?;
    let addr = obs.after.0;
    let local = (routes.routes.iter()).find(|r| {
        r.table == kernel::TableId::Local
            && r.kind == kernel::RouteKind::Local
            && r.dst.len == if addr.is_ipv4() { 32 } else { 128 }
            && r.dst.contains(addr)
    })?;
    let dev = local.dev.clone()?;
    let with = Observed { oif: Some(dev.clone()), ..obs.clone() };
    match evaluated(cache, h, set, &with).source {
        Found::Rule { rule, mut decided } => {
            decided.push(format!("-o {dev} (the interface holding {addr}, {}:{})", routes.file, local.line));
            Some(Found::Rule { rule, decided })
        }
        _ => None,
    }
}

/// The rule of host `h` that sent the connection `obs.before` to a proxy on
/// the host ([`eval::intercepted`]), remembered like [`evaluated`].
fn redirect(cache: &mut HashMap<(usize, Observed), Found>, h: usize, set: &Ruleset, obs: &Observed) -> Found {
    let key = (h, Observed { after: obs.before, ..obs.clone() });
    remembered(cache, key, || eval::intercepted(set, obs.proto, obs.before, obs.iif.clone()))
}

/// `make()`'s value for `key`, kept for the next lookup (at most `CACHE` kept).
fn remembered<T: Clone>(
    cache: &mut HashMap<(usize, Observed), T>,
    key: (usize, Observed),
    make: impl FnOnce() -> T,
) -> T {
    if let Some(v) = cache.get(&key) {
        return v.clone();
    }
    let v = make();
    if cache.len() < CACHE {
        cache.insert(key, v.clone());
    }
    v
}

/// Why a side that crossed `host` unchanged was kept: the rules evaluated
/// for the packet as the first and last captures around the host saw it.
/// Not for a request a proxy carried through the host (no nat packet).
fn kept(
    out: &mut Explained,
    cache: &mut HashMap<(usize, Observed), Evaluation>,
    (h, host, set): (usize, &Host, &Ruleset),
    r: &Request,
    changes: &[(Side, &Change)],
) {
    let proxied = (r.source.iter())
        .any(|c| c.kind == ChangeKind::Proxy && c.between.from >= host.span.0 && c.between.to <= host.span.1);
    let (Some(a), Some(b)) = (first_seen(r, host.span, true), first_seen(r, host.span, false)) else {
        return;
    };
    if proxied || a >= b {
        return;
    }
    let Some(obs) = observed(r, host, Between { from: a, to: b }) else { return };
    let src_kept = (obs.before.0, obs.before.1) == (obs.after.0, obs.after.1);
    let dst_kept = (obs.before.2, obs.before.3) == (obs.after.2, obs.after.3);
    // a side changed and changed back inside the host is no kept side
    let changed = |s: Side| changes.iter().any(|(x, _)| *x == s);
    let sides = [(Side::Source, src_kept), (Side::Destination, dst_kept)];
    if !sides.iter().any(|&(s, k)| k && !changed(s)) {
        return;
    }
    let e = evaluated(cache, h, set, &obs);
    for (side, k) in sides {
        if !k || changed(side) {
            continue;
        }
        let found = if side == Side::Source { &e.source } else { &e.destination };
        if kept_note(found).is_some() {
            out.kept.entry((r.request, side)).or_default().push((host.at.clone(), found.clone()));
        }
    }
}

/// The first (`first`) or last capture in `span` that saw the request.
fn first_seen(r: &Request, span: (usize, usize), first: bool) -> Option<usize> {
    let mut seen = (span.0..=span.1).filter(|&i| r.captures.get(i).is_some_and(|h| h.seen));
    if first {
        seen.next()
    } else {
        seen.next_back()
    }
}

/// The conntrack entry whose original tuple is the packet before the host
/// (for a proxy's change: the client's connection, which the host redirected).
fn record(r: &Request, host: &Host, c: &Change, obs: &Observed) -> Option<CtRef> {
    let icmp = r.proto == Proto::Icmp;
    let id = |i: usize| r.captures.get(i).and_then(|h| h.icmp_id);
    let port = |p: Option<u16>, i: usize| if icmp { id(i) } else { p };
    let (cs, csp, ss, ssp) = obs.before;
    let (ca, cap, sa, sap) = obs.after;
    let orig = conntrack::Tuple {
        src: cs,
        dst: ss,
        sport: port(csp, c.between.from),
        dport: port(ssp, c.between.from),
    };
    let reply =
        conntrack::Tuple { src: sa, dst: ca, sport: port(sap, c.between.to), dport: port(cap, c.between.to) };
    for t in &host.conntrack {
        // a proxy's client connection ends at the host: its reply tuple is the proxy's, not in the captures
        let found = match c.kind {
            ChangeKind::Proxy => t.redirected(obs.proto, orig),
            _ => t.find(obs.proto, orig, reply),
        };
        match found {
            Record::Confirms(e) => {
                return Some(CtRef {
                    file: t.file.clone(),
                    line: e.line,
                    confirmed: true,
                    time_ns: e.time_ns,
                    reply: None,
                })
            }
            Record::Disagrees(e) => {
                let ep =
                    |a: IpAddr, p: Option<u16>| crate::verdict::Endpoint { addr: a, port: p }.to_string();
                return Some(CtRef {
                    file: t.file.clone(),
                    line: e.line,
                    confirmed: false,
                    time_ns: e.time_ns,
                    reply: Some(format!(
                        "{} -> {}",
                        ep(e.reply.src, e.reply.sport),
                        ep(e.reply.dst, e.reply.dport)
                    )),
                });
            }
            Record::None => {}
        }
    }
    None
}

/// The RETURN rules of the IP-MASQ-AGENT chain, by destination CIDR.
/// The agent's chain as the node has it: RETURNs by CIDR (with lines),
/// whether POSTROUTING jumps to it, its table's family and file.
type AgentChain = (Vec<(Cidr, u32)>, bool, Family, String);

fn chain_returns(set: &Ruleset) -> Option<AgentChain> {
    let t = set.tables.iter().find(|t| t.chain("IP-MASQ-AGENT").is_some())?;
    let chain = t.chain("IP-MASQ-AGENT")?;
    let mut returns = Vec::new();
    for r in &chain.rules {
        if r.action != Action::Return {
            continue;
        }
        for c in &r.conds {
            if let Cond::Is { field: Field::Daddr, neg: false, any } = c {
                returns.extend(any.iter().filter_map(|v| match v {
                    Value::Prefix(p) => Some((p.network(), r.line)),
                    _ => None,
                }));
            }
        }
    }
    let jumped = (t.chains.iter().filter(|c| c.name == "POSTROUTING"))
        .flat_map(|c| &c.rules)
        .any(|r| r.action == Action::Jump("IP-MASQ-AGENT".into()));
    Some((returns, jumped, t.family, t.file.clone()))
}

/// The ConfigMap against the node's chain and against the packets.
fn intent(
    out: &mut Explained,
    host: &Host,
    m: &MasqConfig,
    seen: &BTreeMap<(IpAddr, Option<IpAddr>), (u64, u64)>,
    findings: &Findings,
) {
    let mut chain_missing: Vec<Cidr> = Vec::new();
    let finding = |kind, cidr: Option<Cidr>, message: String| IntentFinding {
        at: host.at.clone(),
        kind,
        cidr: cidr.map(|c| c.to_string()),
        destination: None,
        requests: None,
        translated_to: None,
        rule: None,
        message,
    };
    let mut chain_findings = Vec::new();
    if let (Some(set), Some(list)) = (&host.rules, &m.non_masquerade) {
        match chain_returns(set) {
            None => chain_findings.push(finding(
                "chain",
                None,
                format!(
                    "ConfigMap {} is given, but the node's rules ({}) have no IP-MASQ-AGENT chain",
                    m.file, set.file
                ),
            )),
            Some((returns, jumped, family, file)) => {
                if !jumped {
                    chain_findings.push(finding(
                        "chain",
                        None,
                        format!("the node's POSTROUTING ({file}) has no jump to IP-MASQ-AGENT: the agent's chain is never walked"),
                    ));
                }
                let fits = |c: &Cidr| family.sees(c.addr);
                for (c, line) in list.iter().filter(|(c, _)| fits(c)) {
                    if !returns.iter().any(|(r, _)| r == c) {
                        chain_missing.push(*c);
                        chain_findings.push(finding(
                            "chain",
                            Some(*c),
                            format!(
                                "ConfigMap keeps {c} unmasqueraded ({}:{line}), but the node's IP-MASQ-AGENT chain ({file}) has no RETURN for it: the chain does not carry the ConfigMap",
                                m.file
                            ),
                        ));
                    }
                }
                let ll = Cidr::parse("169.254.0.0/16");
                for (r, line) in &returns {
                    let listed = list.iter().any(|(c, _)| c == r);
                    let link_local = Some(*r) == ll && !m.masq_link_local;
                    if !listed && !link_local {
                        chain_findings.push(finding(
                            "chain",
                            Some(*r),
                            format!(
                                "the node's IP-MASQ-AGENT chain returns for {r} ({file}:{line}), which ConfigMap {} does not list: the chain does not carry the ConfigMap",
                                m.file
                            ),
                        ));
                    }
                }
            }
        }
    }
    // the packets
    let mut packets = Vec::new();
    for (&(dst, to), &(count, first)) in seen {
        let Some(want) = m.intent(dst) else { continue };
        let requests = if count == 1 { "1 request".to_string() } else { format!("{count} requests") };
        let rule = || {
            let r = findings.requests.iter().find(|r| r.request == first)?;
            let (a, b) = (first_seen(r, host.span, true)?, first_seen(r, host.span, false)?);
            let set = host.rules.as_ref()?;
            let e = eval::evaluate(set, &observed(r, host, Between { from: a, to: b })?);
            Some(e.source)
        };
        let (message, cidr, found) = match (want, to) {
            (Intent::Keep(c), Some(after)) => {
                let found = rule();
                let by = match &found {
                    Some(Found::Rule { rule, .. }) => {
                        format!(", by `{}` ({}:{})", rule.text, rule.file, rule.line)
                    }
                    _ => String::new(),
                };
                (format!("ConfigMap keeps {c} unmasqueraded, but {requests} to {dst} were masqueraded to {after} at {}{by}", host.at), Some(c), found)
            }
            (Intent::Masquerade, None) => {
                let found = rule();
                let why = match &found {
                    Some(Found::NoRule { deciding }) if !deciding.is_empty() => {
                        format!(": {}", deciding.join("; "))
                    }
                    _ => String::new(),
                };
                (format!("ConfigMap masquerades {dst} (in no nonMasqueradeCIDRs of {}), but {requests} to it kept their source at {}{why}", m.file, host.at), None, found)
            }
            _ => continue,
        };
        packets.push(IntentFinding {
            at: host.at.clone(),
            kind: "packets",
            cidr: cidr.map(|c| c.to_string()),
            destination: Some(dst),
            requests: Some(count),
            translated_to: to,
            rule: match found {
                Some(Found::Rule { rule, .. }) => Some(rule),
                _ => None,
            },
            message,
        });
    }
    let more = packets.len().saturating_sub(MAX_FINDINGS);
    packets.truncate(MAX_FINDINGS);
    out.intent.extend(chain_findings);
    out.intent.extend(packets);
    if more > 0 {
        out.intent.push(finding(
            "packets",
            None,
            format!("{more} more destinations where the packets disagree with ConfigMap {}", m.file),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(rules: &str) -> Host {
        Host {
            at: "egress->backend".into(),
            span: (1, 2),
            iif: None,
            oif: None,
            sides: false,
            rules: Some(super::super::ipt::parse("nat.rules", rules).0),
            only: None,
            conntrack: Vec::new(),
            masq: None,
            routes: None,
            sysctl: None,
            neigh: None,
            masq_after: None,
            rules_after: None,
        }
    }

    fn messages(h: &Host, cm: &str) -> Vec<String> {
        let m = super::super::masq::parse("cm.yaml", cm).0.unwrap();
        let findings = Findings {
            tuplecorr: String::new(),
            captures: Vec::new(),
            boundaries: Vec::new(),
            requests: Vec::new(),
            unmatched: Vec::new(),
            warnings: Vec::new(),
        };
        let mut out = Explained::default();
        intent(&mut out, h, &m, &BTreeMap::new(), &findings);
        out.intent.into_iter().map(|i| i.message).collect()
    }

    #[test]
    fn a_node_without_the_agent_s_chain_or_its_jump_is_an_intent_finding() {
        let cm = "nonMasqueradeCIDRs:\n  - 10.0.0.0/8\n";
        let none = host("*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -j MASQUERADE\nCOMMIT\n");
        assert_eq!(
            messages(&none, cm),
            ["ConfigMap cm.yaml is given, but the node's rules (nat.rules) have no IP-MASQ-AGENT chain"]
        );
        let unjumped = host(
            "*nat\n:POSTROUTING ACCEPT [0:0]\n:IP-MASQ-AGENT - [0:0]\n-A IP-MASQ-AGENT -d 169.254.0.0/16 -j RETURN\n\
             -A IP-MASQ-AGENT -d 10.0.0.0/8 -j RETURN\n-A IP-MASQ-AGENT -j MASQUERADE\nCOMMIT\n",
        );
        assert_eq!(
            messages(&unjumped, cm),
            ["the node's POSTROUTING (nat.rules) has no jump to IP-MASQ-AGENT: the agent's chain is never walked"]
        );
        // masqLinkLocal: true — the link-local RETURN is then one the ConfigMap does not ask for
        let ll = messages(&unjumped, "nonMasqueradeCIDRs:\n  - 10.0.0.0/8\nmasqLinkLocal: true\n");
        assert!(ll.iter().any(|m| m.contains("returns for 169.254.0.0/16 (nat.rules:4)")), "{ll:?}");
    }
}
