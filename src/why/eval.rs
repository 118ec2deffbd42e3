//! Which nat rule translated a packet: the nat chains walked in kernel order
//! (PREROUTING/OUTPUT for DNAT, then POSTROUTING for SNAT/MASQUERADE, base
//! chains by priority, jumps, gotos, RETURN, verdict maps), for the packet as
//! seen before the host. A condition this version cannot evaluate (an
//! interface not known, `-m set`, a random choice) forks the walk: both ways
//! are followed, and only the ways that give what the captures show are kept.
//! When they all name one rule, that rule made the change (with the
//! conditions the captures decided); when they disagree, the result is "not
//! evaluated" with those conditions — never a guess.
//! Takes a [`Ruleset`] and an [`Observed`] packet; gives a [`Found`] per side.

use super::model::*;
use std::net::IpAddr;

/// Ways followed in one evaluation; past it, "not evaluated".
pub const MAX_WORLDS: usize = 256;
/// Rules visited in one evaluation; past it, "not evaluated".
pub const MAX_STEPS: usize = 200_000;
/// Nested jumps; past it, "not evaluated" (the kernel refuses loops at load).
pub const MAX_DEPTH: usize = 64;

/// A request's packet at one host: before the host and after it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Observed {
    /// Layer-4 protocol number.
    pub proto: u8,
    pub before: Tuple4,
    pub after: Tuple4,
    /// Input and output interface, when a capture names them.
    pub iif: Option<String>,
    pub oif: Option<String>,
}

/// A rule found, as reports name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleRef {
    pub file: String,
    pub line: u32,
    pub table: String,
    pub chain: String,
    pub text: String,
}

/// What the rules say about one side (source or destination) of a packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// This rule made the change; `decided`: conditions not evaluated that the
    /// captures decided (only this way gives what they show).
    Rule { rule: RuleRef, decided: Vec<String> },
    /// No rule translates this side; `deciding`: the nat rules passed and the
    /// condition of each that did not match (first few).
    NoRule { deciding: Vec<String> },
    /// The ways that give what the captures show disagree on the rule.
    NotEvaluated { conditions: Vec<String> },
    /// No way through the rules gives what the captures show.
    Disagrees { why: String },
}

/// The result for both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    pub source: Found,
    pub destination: Found,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Truth {
    Yes,
    No,
    Unknown,
}

/// A NAT action taken, with where.
#[derive(Clone, Debug)]
struct Nat<'r> {
    at: Place<'r>,
    kind: NatKind,
}

#[derive(Clone, Copy, Debug)]
struct Place<'r> {
    table: &'r Table,
    chain: &'r str,
    rule: &'r Rule,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NatKind {
    Masquerade {
        ports: Option<(u16, u16)>,
    },
    Snat(NatTo),
    Dnat(NatTo),
    Redirect {
        ports: Option<(u16, u16)>,
    },
    /// NETMAP: 1:1 into this prefix.
    Netmap(Cidr),
}

/// How a walk of one chain ended.
#[derive(Clone, Debug)]
enum End<'r> {
    Return,
    Accept,
    /// Dropped (`true`: rejected) by this rule.
    Drop(Place<'r>, bool),
    Nat(Nat<'r>),
    Stop(String),
}

/// One way through the rules.
#[derive(Clone, Debug, Default)]
struct World {
    /// None: not known (set outside nat).
    mark: Option<u32>,
    dnat_done: bool,
    /// Conditions not evaluated and the way taken (`-o be0` matched / did not).
    forks: Vec<String>,
    /// NAT rules passed on each hook: `text: condition did not match`; the
    /// first [`MAX_MISSES`] per hook, repeats in a row kept once (all that
    /// reports show; a chain jumped to thousands of times would otherwise
    /// grow every way by a line per visit).
    misses: Vec<(Hook, String)>,
}

/// NAT rules passed that a way keeps per hook.
const MAX_MISSES: usize = 5;

impl World {
    /// Notes a NAT rule passed on `hook`; `text` is only made when kept.
    fn miss(&mut self, hook: Hook, text: impl FnOnce() -> String) {
        let mut on_hook = self.misses.iter().filter(|(h, _)| *h == hook);
        if on_hook.clone().count() >= MAX_MISSES {
            return;
        }
        let text = text();
        if on_hook.next_back().is_some_and(|(_, last)| *last == text) {
            return;
        }
        self.misses.push((hook, text));
    }
}

/// Rule visits and ways of one whole evaluation (every hook, every way).
#[derive(Default)]
struct Budget {
    steps: usize,
    worlds: usize,
}

struct Walker<'r> {
    set: &'r Ruleset,
    table: &'r Table,
    pkt: Pkt,
    steps: usize,
    worlds: usize,
}

/// The packet as a hook sees it.
#[derive(Clone, Debug)]
struct Pkt {
    proto: u8,
    saddr: IpAddr,
    sport: Option<u16>,
    daddr: IpAddr,
    dport: Option<u16>,
    iif: Option<String>,
    oif: Option<String>,
    hook: Hook,
    /// Some(false): the address is not the host's (the host forwarded the packet).
    daddr_local: Option<bool>,
    saddr_local: Option<bool>,
    /// A reply of a connection the host's conntrack saw begin (its state
    /// `established`), not a connection's first packet.
    reply: bool,
}

/// Evaluates the nat rules of `set` for `obs`: which rule changed the
/// destination (PREROUTING) and which the source (POSTROUTING).
pub fn evaluate(set: &Ruleset, obs: &Observed) -> Evaluation {
    let (bs, bsp, bd, bdp) = obs.before;
    let (as_, asp, ad, adp) = obs.after;
    let dst_changed = (bd, bdp) != (ad, adp);
    let src_changed = (bs, bsp) != (as_, asp);
    // a packet to one of the host's own addresses is delivered, not
    // forwarded: unchanged and seen beyond the host, it was not local
    let first = arriving(obs.proto, obs.before, obs.iif.clone(), (!dst_changed).then_some(false));
    let start = start_world(set);
    let mut pre = Vec::new();
    let mut notes = Vec::new();
    let mut budget = Budget::default();
    for (ends, t) in hook_walks(set, &first, start.clone(), &mut budget) {
        match ends {
            Err(stop) => notes.push(stop),
            Ok(list) => pre.extend(list.into_iter().map(|(e, w)| (e, w, t))),
        }
    }
    if pre.is_empty() {
        pre.push((None, start, None));
    }
    // every way through PREROUTING, then POSTROUTING with its destination
    let mut ways: Vec<Way<'_>> = Vec::new();
    for (dnat, mut w, _) in pre {
        let dnat_ok = match &dnat {
            Some(n) => consistent(n.kind, obs, false),
            None => !dst_changed,
        };
        if !dnat_ok {
            continue;
        }
        w.dnat_done = dnat.is_some();
        let second = Pkt {
            hook: Hook::Postrouting,
            daddr: ad,
            dport: adp,
            oif: obs.oif.clone(),
            iif: None,
            daddr_local: Some(false),
            ..first.clone()
        };
        let mut any = false;
        for (ends, _) in hook_walks(set, &second, w.clone(), &mut budget) {
            match ends {
                Err(stop) => notes.push(stop),
                Ok(list) => {
                    for (snat, w2) in list {
                        any = true;
                        ways.push((dnat.clone(), snat, w2));
                    }
                }
            }
        }
        if !any {
            ways.push((dnat.clone(), None, w));
        }
    }
    let fits: Vec<_> = (ways.iter())
        .filter(|(_, s, _)| match s {
            Some(n) => consistent(n.kind, obs, true),
            None => !src_changed,
        })
        .collect();
    Evaluation {
        source: side(&notes, &ways, &fits, |w| w.1.as_ref().map(|n| n.at), Hook::Postrouting, src_changed),
        destination: side(
            &notes,
            &ways,
            &fits,
            |w| w.0.as_ref().map(|n| n.at),
            Hook::Prerouting,
            dst_changed,
        ),
    }
}

/// Which nat rule sent a connection to a proxy on the host (a `REDIRECT`, or
/// a `DNAT` to an address the captures beyond the host never show): the
/// PREROUTING chains walked for the packet `before` the host. Only ways that
/// end in such a rule fit. When none does, no nat rule redirected it (a
/// transparent proxy by other means, or a client that addressed the proxy):
/// [`Found::NoRule`] with the rules passed; when the fitting ways name other
/// rules, [`Found::NotEvaluated`].
pub fn intercepted(set: &Ruleset, proto: u8, before: Tuple4, iif: Option<String>) -> Found {
    // delivered to the host's proxy: its destination may be local
    let first = arriving(proto, before, iif, None);
    let start = start_world(set);
    let mut notes = Vec::new();
    let mut ways: Vec<Way<'_>> = Vec::new();
    for (ends, _) in hook_walks(set, &first, start, &mut Budget::default()) {
        match ends {
            Err(stop) => notes.push(stop),
            Ok(list) => ways.extend(list.into_iter().map(|(dnat, w)| (dnat, None, w))),
        }
    }
    let redirects = |w: &&Way<'_>| {
        matches!(w.0.as_ref().map(|n| n.kind), Some(NatKind::Redirect { .. } | NatKind::Dnat(_)))
    };
    let fits: Vec<&Way<'_>> = ways.iter().filter(redirects).collect();
    if notes.is_empty() && fits.is_empty() {
        let deciding = (ways.first().map_or(&[][..], |w| &w.2.misses[..]).iter())
            .filter(|(h, _)| *h == Hook::Prerouting)
            .map(|(_, m)| m.clone())
            .collect();
        return Found::NoRule { deciding };
    }
    side(&notes, &ways, &fits, |w| w.0.as_ref().map(|n| n.at), Hook::Prerouting, true)
}

/// What the filter table does with a connection's first packet at a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filtered {
    /// This rule drops it (`reject`: and answers with an error); `decided`:
    /// conditions not evaluated that every dropping way took.
    Dropped { rule: RuleRef, reject: bool, decided: Vec<String> },
    /// No rule accepted or dropped it: the base chain's policy drops it.
    Policy { file: String, table: String, chain: String, line: u32, decided: Vec<String> },
    /// Every way through the filter chains lets it through.
    Passes { file: String },
    /// Some ways drop it (by `rules`), others let it through or drop it by
    /// another rule: `conditions` are the ones not evaluated that decide.
    Undecided { conditions: Vec<String>, rules: Vec<RuleRef> },
    /// The rules hold no filter chain on the hook the packet takes.
    NoFilter,
}

/// How one way through the filter chains ended: let through (`Ok(None)`),
/// dropped by a rule (`true`: rejected), or by a base chain's policy.
type FilterEnd<'r> = Result<Option<(Place<'r>, bool)>, (&'r Table, &'r Chain)>;

/// The filter table's verdict on a connection's first packet (`before`,
/// the tuple seen entering the host, by `iif` when known) that the host was
/// to forward: PREROUTING's nat rules first (a DNAT changes the destination
/// the filter sees), then every filter base chain on FORWARD (INPUT after a
/// REDIRECT) in priority order; an ACCEPT ends one base chain, a DROP or
/// REJECT the packet, a base chain's end its policy. The output interface is
/// `oif` when known, else each `-o` condition forks the walk (see the module).
pub fn filtered(
    set: &Ruleset,
    proto: u8,
    before: Tuple4,
    iif: Option<String>,
    oif: Option<String>,
) -> Filtered {
    filtered_seen(set, proto, before, iif, oif, false)
}

/// What the decided conditions of a rule add when the captures saw the error
/// (or reset) it answers with.
pub const ERROR_SEEN: &str = "its error was seen";

/// [`filtered`] of a packet the captures saw answered in between by an
/// error or a reset (`rejected`): only the ways that end at a REJECT give
/// what they show, so where the others would pass or drop it in silence,
/// those ways decide (their conditions taken say [`ERROR_SEEN`]).
pub fn filtered_seen(
    set: &Ruleset,
    proto: u8,
    before: Tuple4,
    iif: Option<String>,
    oif: Option<String>,
    rejected: bool,
) -> Filtered {
    let mut budget = Budget::default();
    let first = arriving(proto, before, iif, Some(false));
    let start = start_world(set);
    let mut pre = Vec::new();
    for (ends, _) in hook_walks(set, &first, start.clone(), &mut budget) {
        match ends {
            Err(stop) => return Filtered::Undecided { conditions: vec![stop], rules: Vec::new() },
            Ok(list) => pre.extend(list),
        }
    }
    if pre.is_empty() {
        pre.push((None, start));
    }
    filter_walk(set, pre, &first, oif, &mut budget, rejected)
}

/// Where a connection's first packet (`before`, by `iif` when known) goes
/// after PREROUTING's nat rules: the address the host routes it to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Routed {
    /// No way through PREROUTING translates its destination.
    Unchanged,
    /// Every way DNATs it to this one address.
    To(IpAddr),
    /// The ways differ (a DNAT only under a condition the rules cannot
    /// decide, a range, a random endpoint, a REDIRECT): why.
    Unknown(String),
}

/// [`Routed`] for a connection's first packet.
pub fn routed_to(set: &Ruleset, proto: u8, before: Tuple4, iif: Option<String>) -> Routed {
    let mut budget = Budget::default();
    let first = arriving(proto, before, iif, Some(false));
    let mut to: Vec<Option<IpAddr>> = Vec::new();
    for (ends, _) in hook_walks(set, &first, start_world(set), &mut budget) {
        match ends {
            Err(stop) => return Routed::Unknown(stop),
            Ok(list) => {
                for (nat, _) in list {
                    match nat.map(|n| n.kind) {
                        None => to.push(None),
                        Some(NatKind::Dnat(t)) => match t.addr {
                            Some(r) if r.first == r.last => to.push(Some(r.first)),
                            None => to.push(None),
                            Some(r) => {
                                return Routed::Unknown(format!("DNAT to a range {}-{}", r.first, r.last))
                            }
                        },
                        Some(_) => return Routed::Unknown("a REDIRECT or NETMAP in PREROUTING".to_string()),
                    }
                }
            }
        }
    }
    to.sort();
    to.dedup();
    match to.as_slice() {
        [] | [None] => Routed::Unchanged,
        [Some(a)] => Routed::To(*a),
        _ => Routed::Unknown("the DNAT depends on conditions the rules cannot decide".to_string()),
    }
}

/// The filter table's verdict on a reply the host was to forward, as the
/// FORWARD hook sees it after conntrack undid the translations (`tuple`:
/// the server's endpoint as it sent the reply, to the client's endpoint as
/// the client sent the request): every filter base chain on FORWARD in
/// priority order, the connection `established` (the host saw its first
/// packet), no nat chain (replies take none). `iif`: the interface the
/// reply came in by, `oif` the one it leaves by, when known.
pub fn filtered_reply(
    set: &Ruleset,
    proto: u8,
    tuple: Tuple4,
    iif: Option<String>,
    oif: Option<String>,
) -> Filtered {
    let first = Pkt { reply: true, daddr_local: Some(false), ..arriving(proto, tuple, iif, Some(false)) };
    filter_walk(set, vec![(None, start_world(set))], &first, oif, &mut Budget::default(), false)
}

/// The filter base chains walked for each way `pre` left (its DNAT, if
/// any, and its world) by the packet `first`, leaving by `oif` when known.
fn filter_walk<'r>(
    set: &'r Ruleset,
    pre: Vec<(Option<Nat<'r>>, World)>,
    first: &Pkt,
    oif: Option<String>,
    budget: &mut Budget,
    rejected: bool,
) -> Filtered {
    let file = set.file.clone();
    // each way's end: None lets it through, Some((place, reject)) drops it,
    // Err(chain) is a base chain's policy
    let mut ends: Vec<(FilterEnd<'_>, World)> = Vec::new();
    let mut any_chain = false;
    for (dnat, mut w) in pre {
        w.dnat_done = dnat.is_some();
        let mut pkt = Pkt { hook: Hook::Forward, oif: oif.clone(), ..first.clone() };
        match dnat.map(|n| n.kind) {
            None => {}
            Some(NatKind::Dnat(to)) => {
                match to.addr {
                    Some(r) if r.first == r.last => pkt.daddr = r.first,
                    Some(r) => {
                        let why = format!(
                            "DNAT to a range {}-{}: the destination the filter sees is not known",
                            r.first, r.last
                        );
                        return Filtered::Undecided { conditions: vec![why], rules: Vec::new() };
                    }
                    None => {}
                }
                if let Some((a, b)) = to.ports {
                    if a == b {
                        pkt.dport = Some(a);
                    } else {
                        pkt.dport = None;
                    }
                }
                pkt.daddr_local = Some(false);
            }
            Some(NatKind::Redirect { ports }) => {
                // delivered to the host itself
                pkt.hook = Hook::Input;
                pkt.oif = None;
                pkt.daddr_local = Some(true);
                if let Some((a, b)) = ports {
                    pkt.dport = (a == b).then_some(a);
                }
            }
            Some(NatKind::Netmap(to)) => {
                if let Some(d) = to.map(pkt.daddr) {
                    pkt.daddr = d;
                }
                pkt.daddr_local = Some(false);
            }
            Some(NatKind::Masquerade { .. } | NatKind::Snat(_)) => {}
        }
        let mut bases: Vec<(&Table, &Chain, i32)> = (set.tables.iter())
            .filter(|t| t.family.sees(pkt.saddr))
            .flat_map(|t| t.chains.iter().map(move |c| (t, c)))
            .filter_map(|(t, c)| c.filter.filter(|(h, _)| *h == pkt.hook).map(|(_, p)| (t, c, p)))
            .collect();
        bases.sort_by_key(|b| b.2);
        any_chain |= !bases.is_empty();
        let mut going = vec![w];
        for (t, c, _) in bases {
            let mut walker =
                Walker { set, table: t, pkt: pkt.clone(), steps: budget.steps, worlds: budget.worlds };
            let mut next = Vec::new();
            for w in going {
                for (end, w) in walker.run(c, 0, w, 0) {
                    match end {
                        End::Accept => next.push(w),
                        End::Return if c.policy_drop.is_some() => ends.push((Err((t, c)), w)),
                        End::Return => next.push(w),
                        End::Drop(p, reject) => ends.push((Ok(Some((p, reject))), w)),
                        End::Nat(_) => {
                            let why = format!("a nat action in filter chain {}", c.name);
                            return Filtered::Undecided { conditions: vec![why], rules: Vec::new() };
                        }
                        End::Stop(why) => {
                            return Filtered::Undecided { conditions: vec![why], rules: Vec::new() }
                        }
                    }
                }
            }
            (budget.steps, budget.worlds) = (walker.steps, walker.worlds);
            going = next;
        }
        ends.extend(going.into_iter().map(|w| (Ok(None), w)));
    }
    if !any_chain {
        return Filtered::NoFilter;
    }
    // An error seen in answer: the ways that reject, when some do and others not.
    if rejected && ends.iter().any(|e| matches!(e.0, Ok(Some((_, true))))) {
        let some_not = ends.iter().any(|e| !matches!(e.0, Ok(Some((_, true)))));
        ends.retain(|e| matches!(e.0, Ok(Some((_, true)))));
        if some_not {
            for (_, w) in &mut ends {
                for f in &mut w.forks {
                    if let Some(head) = f.strip_suffix(')') {
                        *f = format!("{head}; {ERROR_SEEN})");
                    }
                }
            }
        }
    }
    let decided = |ws: &mut dyn Iterator<Item = &World>| -> Vec<String> {
        let mut f: Vec<String> = ws.flat_map(|w| w.forks.iter().cloned()).collect();
        f.sort();
        f.dedup();
        f
    };
    let same = |a: &FilterEnd<'_>, b: &FilterEnd<'_>| match (a, b) {
        (Ok(None), Ok(None)) => true,
        (Ok(Some((x, _))), Ok(Some((y, _)))) => std::ptr::eq(x.rule, y.rule),
        (Err((_, x)), Err((_, y))) => std::ptr::eq(*x, *y),
        _ => false,
    };
    if ends.windows(2).all(|p| same(&p[0].0, &p[1].0)) {
        // a condition taken both ways that ends alike decided nothing
        let mut forks = decided(&mut ends.iter().map(|e| &e.1));
        let cond = |f: &str| f.split(" (").next().unwrap_or(f).to_string();
        let both: Vec<String> = forks
            .iter()
            .filter(|f| f.contains(" (did not match"))
            .map(|f| cond(f))
            .filter(|c| forks.iter().any(|g| g.contains(" (matched") && cond(g) == *c))
            .collect();
        forks.retain(|f| !both.contains(&cond(f)));
        return match ends.first().map(|e| &e.0) {
            None | Some(Ok(None)) => Filtered::Passes { file },
            Some(Ok(Some((p, reject)))) => {
                Filtered::Dropped { rule: rule_ref(*p), reject: *reject, decided: forks }
            }
            Some(Err((t, c))) => Filtered::Policy {
                file: t.file.clone(),
                table: t.name.clone(),
                chain: c.name.clone(),
                line: c.policy_drop.unwrap_or(0),
                decided: forks,
            },
        };
    }
    let mut conditions: Vec<String> = decided(&mut ends.iter().map(|e| &e.1))
        .iter()
        .map(|f| f.split(" (").next().unwrap_or(f).to_string())
        .collect();
    conditions.dedup();
    let mut rules: Vec<RuleRef> = Vec::new();
    for (e, _) in &ends {
        if let Ok(Some((p, _))) = e {
            let r = rule_ref(*p);
            if !rules.contains(&r) {
                rules.push(r);
            }
        }
    }
    Filtered::Undecided { conditions, rules }
}

/// What a nat ruleset will do to a packet's source, predicted: the
/// POSTROUTING chains walked for a connection's first packet from `src` to
/// `dst` (its destination after PREROUTING, as the captures show it leaving
/// the host today), leaving by `oif` when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forecast {
    /// No rule translates its source; `deciding`: the nat rules passed.
    Kept { deciding: Vec<String> },
    /// This MASQUERADE: the address of the interface it leaves by.
    Masquerade { rule: RuleRef },
    /// This SNAT, to `to` when the rule names one address.
    Snat { rule: RuleRef, to: Option<IpAddr> },
    /// The ways through the rules disagree on conditions the captures do not
    /// decide (an output interface not known, a set, a random choice).
    Undecided { conditions: Vec<String> },
}

/// [`Forecast`] of `set` for a packet of protocol `proto` from `src` to
/// `dst` (`dnat_done`: a DNAT came first, as `--ctstate DNAT` reads it).
pub fn forecast(
    set: &Ruleset,
    proto: u8,
    src: (IpAddr, Option<u16>),
    dst: (IpAddr, Option<u16>),
    oif: Option<String>,
    dnat_done: bool,
) -> Forecast {
    let pkt = Pkt {
        proto,
        saddr: src.0,
        sport: src.1,
        daddr: dst.0,
        dport: dst.1,
        iif: None,
        oif,
        hook: Hook::Postrouting,
        daddr_local: Some(false),
        saddr_local: Some(false),
        reply: false,
    };
    let mut start = start_world(set);
    start.dnat_done = dnat_done;
    let mut ways: Vec<(Option<Nat<'_>>, World)> = Vec::new();
    for (ends, _) in hook_walks(set, &pkt, start, &mut Budget::default()) {
        match ends {
            Err(stop) => return Forecast::Undecided { conditions: vec![stop] },
            Ok(list) => ways.extend(list),
        }
    }
    let same = ways.windows(2).all(|w| match (&w[0].0, &w[1].0) {
        (None, None) => true,
        (Some(x), Some(y)) => std::ptr::eq(x.at.rule, y.at.rule),
        _ => false,
    });
    if !same {
        let mut conds: Vec<String> = (ways.iter())
            .flat_map(|w| w.1.forks.iter())
            .map(|f| f.split(" (").next().unwrap_or(f).to_string())
            .collect();
        conds.sort();
        conds.dedup();
        return Forecast::Undecided { conditions: conds };
    }
    match ways.first() {
        None => Forecast::Kept { deciding: Vec::new() },
        Some((None, w)) => Forecast::Kept {
            deciding: w
                .misses
                .iter()
                .filter(|(h, _)| *h == Hook::Postrouting)
                .map(|(_, m)| m.clone())
                .collect(),
        },
        Some((Some(n), _)) => match n.kind {
            NatKind::Netmap(to) => Forecast::Snat { rule: rule_ref(n.at), to: to.map(src.0) },
            NatKind::Snat(to) => Forecast::Snat {
                rule: rule_ref(n.at),
                to: to.addr.filter(|r| r.first == r.last).map(|r| r.first),
            },
            _ => Forecast::Masquerade { rule: rule_ref(n.at) },
        },
    }
}

/// A packet's `(source, source port, destination, destination port)`.
pub type Tuple4 = (IpAddr, Option<u16>, IpAddr, Option<u16>);

/// The packet `before` the host as PREROUTING sees it (`daddr_local`: whether
/// its destination is the host's, when known).
fn arriving(proto: u8, before: Tuple4, iif: Option<String>, daddr_local: Option<bool>) -> Pkt {
    let (saddr, sport, daddr, dport) = before;
    Pkt {
        proto,
        saddr,
        sport,
        daddr,
        dport,
        iif,
        oif: None,
        hook: Hook::Prerouting,
        daddr_local,
        saddr_local: Some(false),
        reply: false,
    }
}

/// A condition taken one way where the rules alone could not decide it:
/// `-o be0 (matched, line 3: output interface not known)` — the condition,
/// how it was taken, the rule's line, and why it was not known.
fn fork_text(cond: &str, how: &str, line: u32) -> String {
    match cond.split_once(" (") {
        Some((head, why)) if why.ends_with(')') => {
            format!("{head} ({how}, line {line}: {})", &why[..why.len() - 1])
        }
        _ => format!("{cond} ({how}, line {line})"),
    }
}

/// A walk's first way: the mark 0 unless a chain outside nat may set one.
fn start_world(set: &Ruleset) -> World {
    World { mark: set.mark_set_elsewhere.is_none().then_some(0), ..World::default() }
}

/// One way through the hooks: its DNAT, its SNAT, and how it went.
type Way<'r> = (Option<Nat<'r>>, Option<Nat<'r>>, World);

/// What the ways that fit the captures say of one side.
fn side<'r>(
    notes: &[String],
    ways: &[Way<'r>],
    fits: &[&Way<'r>],
    pick: impl Fn(&Way<'r>) -> Option<Place<'r>>,
    hook: Hook,
    changed: bool,
) -> Found {
    if let Some(stop) = notes.first() {
        return Found::NotEvaluated { conditions: vec![stop.clone()] };
    }
    if fits.is_empty() {
        let why = if ways.is_empty() {
            "no way through the nat chains".to_string()
        } else if changed {
            "no nat rule gives the observed translation".to_string()
        } else {
            "every way through the nat chains translates it, but the captures show it unchanged".to_string()
        };
        return Found::Disagrees { why };
    }
    let places: Vec<Option<Place<'_>>> = fits.iter().map(|w| pick(w)).collect();
    let same = places.windows(2).all(|p| same_place(p[0], p[1]));
    let mut forks: Vec<String> = fits.iter().flat_map(|w| w.2.forks.iter().cloned()).collect();
    forks.sort();
    forks.dedup();
    if !same {
        let mut conds: Vec<String> =
            forks.iter().map(|f| f.split(" (").next().unwrap_or(f).to_string()).collect();
        conds.dedup();
        return Found::NotEvaluated { conditions: conds };
    }
    match places[0] {
        Some(p) => Found::Rule { rule: rule_ref(p), decided: forks },
        None => {
            let deciding: Vec<String> =
                fits[0].2.misses.iter().filter(|(h, _)| *h == hook).map(|(_, m)| m.clone()).collect();
            Found::NoRule { deciding }
        }
    }
}

/// Puts what an action left on the walk's stack so that it is taken in
/// order: `Next` ways go on at rule `next` of the same chain.
fn push_then<'r>(stack: &mut Vec<(usize, Then<'r>)>, next: usize, thens: Vec<Then<'r>>) {
    stack.extend(thens.into_iter().rev().map(|then| (next, then)));
}

fn same_place(a: Option<Place<'_>>, b: Option<Place<'_>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => std::ptr::eq(x.rule, y.rule),
        _ => false,
    }
}

fn rule_ref(p: Place<'_>) -> RuleRef {
    RuleRef {
        file: p.table.file.clone(),
        line: p.rule.line,
        table: p.table.name.clone(),
        chain: p.chain.to_string(),
        text: p.rule.text.clone(),
    }
}

/// True when a NAT action can give the observed after-side (`source`: the client's side).
fn consistent(kind: NatKind, obs: &Observed, source: bool) -> bool {
    let (b, bp, a, ap) = if source {
        (obs.before.0, obs.before.1, obs.after.0, obs.after.1)
    } else {
        (obs.before.2, obs.before.3, obs.after.2, obs.after.3)
    };
    let port_in = |r: Option<(u16, u16)>| match (r, ap) {
        (Some((x, y)), Some(p)) => (x..=y).contains(&p),
        _ => true,
    };
    let _ = bp;
    match kind {
        // the interface's (the host's) address: never the forwarded packet's own
        NatKind::Masquerade { ports } | NatKind::Redirect { ports } => a != b && port_in(ports),
        // the same port, the address mapped 1:1
        NatKind::Netmap(to) => to.map(b) == Some(a) && (bp.is_none() || ap == bp),
        NatKind::Snat(to) | NatKind::Dnat(to) => {
            let addr_ok = match to.addr {
                Some(r) => r.contains(a),
                None => a == b,
            };
            addr_ok && port_in(to.ports)
        }
    }
}

/// The walks of every nat base chain on `pkt.hook`, table by table in
/// priority order: the first that translates ends the hook.
#[allow(clippy::type_complexity)]
fn hook_walks<'r>(
    set: &'r Ruleset,
    pkt: &Pkt,
    start: World,
    budget: &mut Budget,
) -> Vec<(Result<Vec<(Option<Nat<'r>>, World)>, String>, Option<&'r Table>)> {
    let hooks: &[Hook] = match pkt.hook {
        Hook::Prerouting => &[Hook::Prerouting],
        _ => &[Hook::Postrouting],
    };
    let mut bases: Vec<(&Table, &Chain, i32)> = (set.tables.iter())
        .filter(|t| t.family.sees(pkt.saddr))
        .flat_map(|t| t.chains.iter().map(move |c| (t, c)))
        .filter_map(|(t, c)| c.hook.filter(|(h, _)| hooks.contains(h)).map(|(_, p)| (t, c, p)))
        .collect();
    bases.sort_by_key(|b| b.2);
    // ways still going, through the base chains in order
    let mut going = vec![start];
    let mut done: Vec<(Option<Nat<'r>>, World)> = Vec::new();
    for (t, c, _) in bases {
        let mut walker =
            Walker { set, table: t, pkt: pkt.clone(), steps: budget.steps, worlds: budget.worlds };
        let mut next = Vec::new();
        for w in going {
            let ends = walker.run(c, 0, w, 0);
            (budget.steps, budget.worlds) = (walker.steps, walker.worlds);
            for (end, w) in ends {
                match end {
                    End::Return | End::Accept => next.push(w),
                    End::Drop(..) => {}
                    End::Nat(n) => done.push((Some(n), w)),
                    End::Stop(why) => return vec![(Err(why), Some(t))],
                }
            }
        }
        going = next;
    }
    done.extend(going.into_iter().map(|w| (None, w)));
    vec![(Ok(done), None)]
}

/// What an action leaves: a way that ended, or one that goes on with the
/// next rule of the same chain.
enum Then<'r> {
    End(End<'r>, World),
    Next(World),
}

impl<'r> Walker<'r> {
    /// The ways through `chain` from rule `from`, in depth-first order (a
    /// way that matched a condition not evaluated before the way that did
    /// not). The ways going on in the same chain wait on a stack, not in
    /// nested calls: a chain of thousands of jumps or marks costs no stack;
    /// only nested jumps do, at most [`MAX_DEPTH`].
    fn run(&mut self, chain: &'r Chain, from: usize, w: World, depth: usize) -> Vec<(End<'r>, World)> {
        let mut out = Vec::new();
        if depth > MAX_DEPTH {
            out.push((End::Stop(format!("jumps nested deeper than {MAX_DEPTH}")), w));
            return out;
        }
        // (the rule a `Next` way goes on at, the way)
        let mut stack = vec![(from, Then::Next(w))];
        'ways: while let Some((from, then)) = stack.pop() {
            let mut w = match then {
                Then::End(end, w) => {
                    out.push((end, w));
                    continue;
                }
                Then::Next(w) => w,
            };
            for (i, rule) in chain.rules.iter().enumerate().skip(from) {
                self.steps += 1;
                if self.steps > MAX_STEPS || self.worlds > MAX_WORLDS {
                    out.push((
                        End::Stop(format!("more than {MAX_STEPS} rule visits or {MAX_WORLDS} ways")),
                        w,
                    ));
                    continue 'ways;
                }
                let (truth, cond, unknown) = self.test(rule, &w);
                match truth {
                    Truth::Yes => {
                        let thens = self.act(chain, i, rule, &rule.action, w, depth);
                        push_then(&mut stack, i + 1, thens);
                        continue 'ways;
                    }
                    Truth::No => {
                        if is_nat(&rule.action) {
                            w.miss(self.pkt.hook, || self.passed(rule, &cond));
                        }
                    }
                    Truth::Unknown => {
                        self.worlds += 1;
                        let mut yes = w.clone();
                        // several conditions: the rule matched when all did
                        let (yes_how, no_how) = match unknown {
                            1 => ("matched", "did not match"),
                            _ => ("all matched", "not all matched"),
                        };
                        yes.forks.push(fork_text(&cond, yes_how, rule.line));
                        w.forks.push(fork_text(&cond, no_how, rule.line));
                        // the way that did not match goes on after the one that did
                        stack.push((i + 1, Then::Next(w)));
                        let thens = self.act(chain, i, rule, &rule.action, yes, depth);
                        push_then(&mut stack, i + 1, thens);
                        continue 'ways;
                    }
                }
            }
            out.push((End::Return, w));
        }
        out
    }

    /// The ways on after `rule` (at `i` of `chain`) does `action`.
    fn act(
        &mut self,
        chain: &'r Chain,
        i: usize,
        rule: &'r Rule,
        action: &'r Action,
        mut w: World,
        depth: usize,
    ) -> Vec<Then<'r>> {
        let place = Place { table: self.table, chain: &chain.name, rule };
        let nat = |kind| vec![Then::End(End::Nat(Nat { at: place, kind }), w.clone())];
        let stop = |why: String, w: World| vec![Then::End(End::Stop(why), w)];
        match action {
            Action::Continue => vec![Then::Next(w)],
            Action::SetMark { value, mask } => {
                w.mark = w.mark.map(|m| (m & !mask) ^ value);
                vec![Then::Next(w)]
            }
            Action::Return | Action::Accept => {
                // a RETURN or ACCEPT that passes the chain's later NAT rules decides too
                if let Some(later) = chain.rules[i + 1..].iter().find(|r| is_nat(&r.action)) {
                    w.miss(self.pkt.hook, || {
                        format!(
                            "`{}` ({}:{}) came first, before `{}` (line {})",
                            uncommented(&rule.text),
                            self.set.file,
                            rule.line,
                            uncommented(&later.text),
                            later.line
                        )
                    });
                }
                let end = if matches!(action, Action::Return) { End::Return } else { End::Accept };
                vec![Then::End(end, w)]
            }
            Action::Drop => vec![Then::End(End::Drop(place, false), w)],
            Action::Reject => vec![Then::End(End::Drop(place, true), w)],
            Action::Jump(c) | Action::Goto(c) => {
                let Some(target) = self.table.chain(c) else {
                    return stop(format!("jump to {c}, not in {}", self.set.file), w);
                };
                (self.run(target, 0, w, depth + 1).into_iter())
                    .map(|(end, w2)| match end {
                        End::Return if matches!(action, Action::Jump(_)) => Then::Next(w2),
                        other => Then::End(other, w2),
                    })
                    .collect()
            }
            Action::Masquerade { ports, .. } if self.pkt.hook == Hook::Postrouting => {
                nat(NatKind::Masquerade { ports: *ports })
            }
            Action::Snat { to, .. } if self.pkt.hook == Hook::Postrouting => nat(NatKind::Snat(*to)),
            Action::Dnat { to, .. } if self.pkt.hook == Hook::Prerouting => nat(NatKind::Dnat(*to)),
            Action::Netmap { to } => nat(NatKind::Netmap(*to)),
            Action::Redirect { ports } if self.pkt.hook == Hook::Prerouting => {
                nat(NatKind::Redirect { ports: *ports })
            }
            Action::Masquerade { .. }
            | Action::Snat { .. }
            | Action::Dnat { .. }
            | Action::Redirect { .. } => stop(format!("`{}` in a chain of the wrong hook", rule.text), w),
            Action::DnatMap { key, chance, entries } => {
                let mut out = Vec::new();
                for (k, to) in entries {
                    let t = if *chance { Truth::Unknown } else { self.key_matches(key, k) };
                    match t {
                        Truth::No => continue,
                        Truth::Yes => {
                            out.push(Then::End(End::Nat(Nat { at: place, kind: NatKind::Dnat(*to) }), w));
                            return out;
                        }
                        Truth::Unknown => {
                            self.worlds += 1;
                            let mut yes = w.clone();
                            yes.forks.push(format!("map key {} (chosen, line {})", values(k), rule.line));
                            out.push(Then::End(End::Nat(Nat { at: place, kind: NatKind::Dnat(*to) }), yes));
                        }
                    }
                }
                if !*chance {
                    // no entry: the lookup breaks the rule (NFT_BREAK) and the
                    // chain goes on with the next one, as for a condition not met
                    let mut w = w;
                    w.miss(self.pkt.hook, || {
                        self.passed(rule, "the packet's key is in no element of the map")
                    });
                    out.push(Then::Next(w));
                }
                out
            }
            Action::Vmap { key, chance, entries } => {
                let mut out = Vec::new();
                for (k, verdict) in entries {
                    let t = if *chance { Truth::Unknown } else { self.key_matches(key, k) };
                    match t {
                        Truth::No => continue,
                        Truth::Yes => {
                            out.extend(self.act(chain, i, rule, verdict, w, depth));
                            return out;
                        }
                        Truth::Unknown => {
                            self.worlds += 1;
                            let mut yes = w.clone();
                            yes.forks.push(format!("vmap key {} (matched, line {})", values(k), rule.line));
                            out.extend(self.act(chain, i, rule, verdict, yes, depth));
                            w.forks.push(format!(
                                "vmap key {} (did not match, line {})",
                                values(k),
                                rule.line
                            ));
                        }
                    }
                }
                if !*chance {
                    out.push(Then::Next(w));
                }
                out
            }
            Action::Unknown(t) => stop(t.clone(), w),
        }
    }

    /// A NAT rule passed, as reports name it: `` `RULE` (FILE:LINE): WHY``.
    fn passed(&self, rule: &Rule, why: &str) -> String {
        format!("`{}` ({}:{}): {why}", uncommented(&rule.text), self.set.file, rule.line)
    }

    /// Whether `rule` matches on way `w`, with the words for it: the
    /// condition that did not match, or every condition the rules alone
    /// cannot decide (`-o be0 and -m set --match-set pods src (output
    /// interface not known)`: the rule matches when all of them do).
    fn test(&self, rule: &Rule, w: &World) -> (Truth, String, usize) {
        let (mut heads, mut whys) = (Vec::new(), Vec::new());
        for c in &rule.conds {
            match self.cond(c, w) {
                Truth::Yes => {}
                Truth::No => {
                    return (Truth::No, format!("{} did not match{}", cond_text(c), self.why_no(c)), 0)
                }
                Truth::Unknown => {
                    heads.push(cond_text(c));
                    let why = self.why_unknown(c, w);
                    let why = why.trim_start().strip_prefix('(').and_then(|x| x.strip_suffix(')'));
                    whys.extend(why.map(str::to_string));
                }
            }
        }
        match (heads.len(), whys.is_empty()) {
            (0, _) => (Truth::Yes, String::new(), 0),
            (n, true) => (Truth::Unknown, heads.join(" and "), n),
            (n, false) => (Truth::Unknown, format!("{} ({})", heads.join(" and "), whys.join("; ")), n),
        }
    }

    /// What the packet had instead, when a condition on an interface did
    /// not match (`-o eth0` did not match: the packet left on eth1).
    fn why_no(&self, c: &Cond) -> String {
        match (c, &self.pkt.iif, &self.pkt.oif) {
            (Cond::Is { field: Field::Iif, neg: false, .. }, Some(i), _) => format!(": it came in on {i}"),
            (Cond::Is { field: Field::Oif, neg: false, .. }, _, Some(o)) => format!(": it left on {o}"),
            _ => String::new(),
        }
    }

    fn why_unknown(&self, c: &Cond, w: &World) -> String {
        match c {
            Cond::Is { field: Field::Iif, .. } => " (input interface not known)".into(),
            Cond::Is { field: Field::Oif, .. } => " (output interface not known)".into(),
            Cond::Is { field: Field::Mark, .. } if w.mark.is_none() => {
                format!(
                    " (the mark is set outside nat, {} line {})",
                    self.set.file,
                    self.set.mark_set_elsewhere.unwrap_or(0)
                )
            }
            Cond::Chance(_) => " (chosen at random per connection)".into(),
            _ => String::new(),
        }
    }

    fn key_matches(&self, key: &[Field], values: &[Value]) -> Truth {
        if key.len() != values.len() {
            return Truth::No;
        }
        let mut t = Truth::Yes;
        for (f, v) in key.iter().zip(values) {
            match self.field(*f, v, &World::default()) {
                Truth::No => return Truth::No,
                Truth::Unknown => t = Truth::Unknown,
                Truth::Yes => {}
            }
        }
        t
    }

    fn cond(&self, c: &Cond, w: &World) -> Truth {
        match c {
            Cond::Is { field, neg, any } => {
                negate(any_of(any.iter().map(|v| self.field(*field, v, w))), *neg)
            }
            Cond::TcpFlags { neg, mask, comp } => {
                // a connection's first packet: a SYN
                let t = if self.pkt.proto != 6 {
                    Truth::No
                } else if 0x02 & mask == *comp {
                    Truth::Yes
                } else {
                    Truth::No
                };
                negate(t, *neg)
            }
            Cond::InSet { fields, neg, elements } => {
                negate(any_of(elements.iter().map(|e| self.key_matches(fields, e))), *neg)
            }
            Cond::Chance(_) | Cond::Unknown(_) => Truth::Unknown,
        }
    }

    /// One field of the packet against one value.
    fn field(&self, f: Field, v: &Value, w: &World) -> Truth {
        let p = &self.pkt;
        let yes = |b: bool| if b { Truth::Yes } else { Truth::No };
        match (f, v) {
            (Field::Saddr, Value::Prefix(c)) => yes(c.contains(p.saddr)),
            (Field::Daddr, Value::Prefix(c)) => yes(c.contains(p.daddr)),
            (Field::Saddr, Value::Range(r)) => yes(r.contains(p.saddr)),
            (Field::Daddr, Value::Range(r)) => yes(r.contains(p.daddr)),
            (Field::Sport, Value::Ports(a, b)) => yes(p.sport.is_some_and(|x| (*a..=*b).contains(&x))),
            (Field::Dport, Value::Ports(a, b)) => yes(p.dport.is_some_and(|x| (*a..=*b).contains(&x))),
            (Field::Proto, Value::Proto(n)) => yes(p.proto == *n),
            (Field::Iif, Value::Iface(name)) => {
                p.iif.as_deref().map_or(Truth::Unknown, |i| yes(iface_is(i, name)))
            }
            (Field::Oif, Value::Iface(name)) => {
                p.oif.as_deref().map_or(Truth::Unknown, |i| yes(iface_is(i, name)))
            }
            (Field::Mark, Value::Mark(value, mask)) => {
                w.mark.map_or(Truth::Unknown, |m| yes(m & mask == *value))
            }
            // a reply: of a connection the host saw begin; its translations
            // (snat, dnat) are not known here
            (Field::CtState, Value::Word(s)) if p.reply => match s.as_str() {
                "established" => Truth::Yes,
                "new" | "related" | "invalid" | "untracked" => Truth::No,
                _ => Truth::Unknown,
            },
            (Field::CtState, Value::Word(s)) => match s.as_str() {
                "new" => Truth::Yes,
                "established" | "related" | "invalid" | "untracked" | "snat" => Truth::No,
                "dnat" => yes(w.dnat_done),
                _ => Truth::Unknown,
            },
            (Field::CtStatus, Value::Word(s)) if p.reply => match s.as_str() {
                "seen_reply" | "seen-reply" | "confirmed" => Truth::Yes,
                _ => Truth::Unknown,
            },
            // the nat chains see a connection's first packet, before it is
            // confirmed and before any reply; expected (related) not known
            (Field::CtStatus, Value::Word(s)) => match s.as_str() {
                "seen_reply" | "seen-reply" | "assured" | "confirmed" | "snat" => Truth::No,
                "dnat" => yes(w.dnat_done),
                _ => Truth::Unknown,
            },
            (Field::Ports, Value::Ports(a, b)) => {
                yes([p.sport, p.dport].iter().any(|x| x.is_some_and(|x| (*a..=*b).contains(&x))))
            }
            // an ICMP request is an echo flow: its first packet an echo request, code 0
            (Field::IcmpType | Field::Icmp6Type, Value::Icmp(t, c)) => {
                let (proto, echo) = if f == Field::IcmpType { (1, 8) } else { (58, 128) };
                yes(p.proto == proto && t.is_none_or(|t| t == echo) && c.is_none_or(|c| c == 0))
            }
            (Field::DaddrType, Value::Word(t)) => addr_type(p.daddr, p.daddr_local, t),
            (Field::SaddrType, Value::Word(t)) => addr_type(p.saddr, p.saddr_local, t),
            _ => Truth::Unknown,
        }
    }
}

fn is_nat(a: &Action) -> bool {
    matches!(
        a,
        Action::Masquerade { .. }
            | Action::Snat { .. }
            | Action::Dnat { .. }
            | Action::Redirect { .. }
            | Action::DnatMap { .. }
            | Action::Netmap { .. }
    )
}

/// Yes when any is (the first Yes ends it), else Unknown when any is, else No.
fn any_of(ts: impl Iterator<Item = Truth>) -> Truth {
    let mut t = Truth::No;
    for x in ts {
        match x {
            Truth::Yes => return Truth::Yes,
            Truth::Unknown => t = Truth::Unknown,
            Truth::No => {}
        }
    }
    t
}

fn negate(t: Truth, neg: bool) -> Truth {
    match (t, neg) {
        (Truth::Yes, true) => Truth::No,
        (Truth::No, true) => Truth::Yes,
        (t, _) => t,
    }
}

/// `eth+` (iptables) and `eth*` (nft) match every name that begins `eth`.
fn iface_is(name: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('+').or_else(|| pattern.strip_suffix('*')) {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// An address's type (`local`, `unicast`, `multicast`, `broadcast`) when known.
fn addr_type(a: IpAddr, local: Option<bool>, t: &str) -> Truth {
    let multicast = a.is_multicast();
    let broadcast = a == IpAddr::V4(std::net::Ipv4Addr::BROADCAST);
    let yes = |b: bool| if b { Truth::Yes } else { Truth::No };
    match (t, local) {
        ("multicast", _) => yes(multicast),
        ("local", Some(l)) => yes(l),
        ("unicast", Some(l)) => yes(!l && !multicast && !broadcast),
        ("broadcast", Some(false)) if !broadcast => Truth::Unknown,
        _ => Truth::Unknown,
    }
}

fn values(k: &[Value]) -> String {
    k.iter().map(value_text).collect::<Vec<_>>().join(" . ")
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Prefix(c) if c.len == if c.addr.is_ipv4() { 32 } else { 128 } => c.addr.to_string(),
        Value::Prefix(c) => c.to_string(),
        Value::Range(r) => format!("{}-{}", r.first, r.last),
        Value::Ports(a, b) if a == b => a.to_string(),
        Value::Ports(a, b) => format!("{a}-{b}"),
        Value::Proto(n) => n.to_string(),
        Value::Iface(s) | Value::Word(s) => s.clone(),
        Value::Icmp(None, _) => "any".into(),
        Value::Icmp(Some(t), None) => t.to_string(),
        Value::Icmp(Some(t), Some(c)) => format!("{t}/{c}"),
        Value::Mark(v, m) => format!("{v:#x}/{m:#x}"),
    }
}

/// A rule's text without its comments (`-m comment --comment "…"`, nft
/// `comment "…"`): a comment never decides, and the rules passed are
/// quoted whole otherwise. Never a `;` (it separates a sentence's parts).
pub fn uncommented(text: &str) -> String {
    // `iptables-save -c` puts the counters first: `[16:944] -A …`
    let text = match text.strip_prefix('[') {
        Some(rest) => rest.split_once("] ").map_or(text, |(_, body)| body.trim_start()),
        None => text,
    };
    let mut out = text.to_string();
    let marker = if text.starts_with("-A ") { "-m comment --comment " } else { "comment " };
    let mut from = 0;
    while let Some(k) = out[from..].find(marker).map(|k| k + from) {
        // only a whole word: not `--comment ` inside the first marker
        if k > 0 && !out[..k].ends_with(' ') {
            from = k + marker.len();
            continue;
        }
        let rest = &out[k + marker.len()..];
        let len = match rest.strip_prefix('"') {
            Some(q) => {
                let mut esc = false;
                let end = q.char_indices().find(|&(_, c)| {
                    let close = c == '"' && !esc;
                    esc = c == '\\' && !esc;
                    close
                });
                match end {
                    Some((e, _)) => e + 2,
                    // an open quote (the readers refuse it): quoted as it is
                    None => return text.replace(';', ","),
                }
            }
            None => rest.find(' ').unwrap_or(rest.len()),
        };
        let end = (k + marker.len() + len).min(out.len());
        let end = if out[end..].starts_with(' ') { end + 1 } else { end };
        out.replace_range(k..end, "");
        from = k;
    }
    out.trim_end().replace(';', ",")
}

/// A rule as a sentence quotes it: `-A CHAIN … -j TARGET …` (iptables), the
/// NAT statement on (nft); never a `;` (it separates the sentence's parts).
pub fn short_rule(text: &str) -> String {
    let text = match text.strip_prefix('[') {
        Some(rest) => rest.split_once("] ").map_or(text, |(_, body)| body.trim_start()),
        None => text,
    };
    let short = if let Some(rest) = text.strip_prefix("-A ") {
        let chain = rest.split_whitespace().next().unwrap_or_default();
        match rest.find(" -j ") {
            Some(j) if rest[..j].trim() != chain => format!("-A {chain} …{}", &rest[j..]),
            _ => text.to_string(),
        }
    } else {
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.iter().position(|w| matches!(*w, "masquerade" | "snat" | "dnat" | "redirect")) {
            Some(0) | None => text.to_string(),
            Some(k) => format!("… {}", words[k..].join(" ")),
        }
    };
    short.replace(';', ",")
}

/// A filter rule as a lost request's sentence quotes it: whole (its
/// conditions say whom it drops), without comments, counters (`[3:180]`,
/// nft `counter packets 3 bytes 180`) or nft's `# handle N`; past 160
/// characters cut at a word with `…`. Never a `;`.
pub fn filter_rule_text(text: &str) -> String {
    let plain = uncommented(text);
    let plain = plain.split(" # handle ").next().unwrap_or(&plain);
    let words: Vec<&str> = plain.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match words[i..] {
            ["counter", "packets", _, "bytes", _, ..] => i += 5,
            [w, ..] if i == 0 && w.starts_with('[') && w.ends_with(']') => i += 1,
            [w, ..] => {
                kept.push(w);
                i += 1;
            }
            [] => break,
        }
    }
    let mut out = String::new();
    for w in kept {
        if out.len() + w.len() > 160 {
            out.push_str(" …");
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out.replace(';', ",")
}

/// A condition as the iptables user reads it.
pub fn cond_text(c: &Cond) -> String {
    match c {
        Cond::Is { field, neg, any } => {
            let bang = if *neg { "! " } else { "" };
            let list = any.iter().map(value_text).collect::<Vec<_>>().join(",");
            let opt = match field {
                Field::Saddr => "-s",
                Field::Daddr => "-d",
                Field::Sport => "--sport",
                Field::Dport => "--dport",
                Field::Proto => "-p",
                Field::Iif => "-i",
                Field::Oif => "-o",
                Field::Mark => "--mark",
                Field::CtState => "--ctstate",
                Field::CtStatus => "--ctstatus",
                Field::Ports => "--ports",
                Field::IcmpType => "--icmp-type",
                Field::Icmp6Type => "--icmpv6-type",
                Field::DaddrType => "--dst-type",
                Field::SaddrType => "--src-type",
            };
            format!("{bang}{opt} {list}")
        }
        Cond::TcpFlags { neg, .. } => format!("{}--tcp-flags", if *neg { "! " } else { "" }),
        Cond::InSet { neg, elements, .. } => {
            format!("{}in a set of {} elements", if *neg { "! " } else { "" }, elements.len())
        }
        Cond::Chance(t) | Cond::Unknown(t) => t.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(before: &str, after: &str) -> Observed {
        let ends = |t: &str| {
            let (c, s) = t.split_once(" > ").unwrap();
            let e = |x: &str| {
                let (a, p) = x.rsplit_once(':').unwrap();
                (a.parse::<IpAddr>().unwrap(), Some(p.parse::<u16>().unwrap()))
            };
            let (ca, cp) = e(c);
            let (sa, sp) = e(s);
            (ca, cp, sa, sp)
        };
        Observed { proto: 6, before: ends(before), after: ends(after), iif: None, oif: None }
    }

    fn kube() -> Ruleset {
        super::super::ipt::parse("nat.rules", include_str!("testdata/kube-nat.rules")).0
    }

    fn rule_line(f: &Found) -> u32 {
        match f {
            Found::Rule { rule, .. } => rule.line,
            other => panic!("no rule: {other:?}"),
        }
    }

    #[test]
    fn a_pod_to_the_internet_is_masqueraded_by_ip_masq_agent_s_last_rule() {
        let e =
            evaluate(&kube(), &obs("10.4.1.7:40000 > 203.0.113.9:443", "10.128.0.7:40000 > 203.0.113.9:443"));
        assert_eq!(rule_line(&e.source), 27);
        let Found::Rule { rule, decided } = &e.source else { unreachable!() };
        assert_eq!((rule.table.as_str(), rule.chain.as_str()), ("nat", "IP-MASQ-AGENT"));
        assert!(rule.text.ends_with("-j MASQUERADE"));
        assert!(decided.is_empty(), "{decided:?}");
        assert_eq!(e.destination, Found::NoRule { deciding: vec![] });
    }

    #[test]
    fn a_pod_to_a_non_masquerade_cidr_is_not_translated_and_the_return_decides() {
        let e =
            evaluate(&kube(), &obs("10.4.1.7:40000 > 10.20.30.40:443", "10.4.1.7:40000 > 10.20.30.40:443"));
        let Found::NoRule { deciding } = &e.source else { panic!("{e:?}") };
        assert_eq!(deciding.len(), 2, "KUBE-POSTROUTING's RETURN, then IP-MASQ-AGENT's: {deciding:?}");
        assert!(deciding[1].contains("(nat.rules:25) came first"), "{deciding:?}");
        // translated while the rules return for it: the captures and the rules disagree
        let e =
            evaluate(&kube(), &obs("10.4.1.7:40000 > 10.20.30.40:443", "10.128.0.7:40000 > 10.20.30.40:443"));
        assert!(matches!(e.source, Found::Disagrees { .. }), "{e:?}");
    }

    #[test]
    fn a_cluster_ip_is_dnated_by_the_endpoint_the_captures_show_and_masqueraded_by_its_mark() {
        // from outside the pod CIDR: KUBE-MARK-MASQ, then one of two endpoints at random
        let o = obs("192.0.2.5:5555 > 10.96.0.10:80", "10.128.0.7:61000 > 10.8.2.9:8080");
        let e = evaluate(&kube(), &o);
        assert_eq!(rule_line(&e.destination), 36);
        let Found::Rule { decided, .. } = &e.destination else { unreachable!() };
        assert!(
            decided.iter().any(|d| d.contains("statistic") && d.contains("did not match")),
            "{decided:?}"
        );
        assert_eq!(rule_line(&e.source), 32);
        let o = obs("192.0.2.5:5555 > 10.96.0.10:80", "10.128.0.7:61000 > 10.8.1.5:8080");
        assert_eq!(rule_line(&evaluate(&kube(), &o).destination), 34);
        // from a pod: no mark, so KUBE-POSTROUTING returns; the destination is in 10/8: no SNAT
        let o = obs("10.4.1.7:5555 > 10.96.0.10:80", "10.4.1.7:5555 > 10.8.1.5:8080");
        let e = evaluate(&kube(), &o);
        assert_eq!(rule_line(&e.destination), 34);
        let Found::NoRule { deciding } = &e.source else { panic!("{e:?}") };
        assert!(deciding[1].starts_with("`-A IP-MASQ-AGENT -d 10.0.0.0/8"), "{deciding:?}");
        assert!(deciding[1].contains("(nat.rules:25) came first, before `-A IP-MASQ-AGENT"), "{deciding:?}");
    }

    #[test]
    fn a_connection_sent_to_a_local_proxy_names_the_redirect_and_only_a_redirect() {
        let text = "*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n\
            -A PREROUTING -i tun0 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 3128\n\
            -A PREROUTING -p tcp -m tcp --dport 443 -j DNAT --to-destination 127.0.0.1:3129\n\
            -A PREROUTING -p tcp -m tcp --dport 8443 -j MARK --set-mark 1\n\
            -A POSTROUTING -o eth0 -j MASQUERADE\nCOMMIT\n";
        let set = super::super::ipt::parse("pod.rules", text).0;
        let at = |t: &str, iif: Option<&str>| intercepted(&set, 6, obs(t, t).before, iif.map(str::to_string));
        let Found::Rule { rule, decided } = at("198.18.90.42:40001 > 198.19.96.10:80", Some("tun0")) else {
            panic!()
        };
        assert_eq!((rule.line, rule.chain.as_str(), decided.len()), (4, "PREROUTING", 0));
        // the interface not known: only the way that took the REDIRECT fits, and says so
        let Found::Rule { rule, decided } = at("198.18.90.42:40001 > 198.19.96.10:80", None) else {
            panic!()
        };
        assert_eq!(rule.line, 4);
        assert_eq!(decided, ["-i tun0 (matched, line 4: input interface not known)"]);
        assert_eq!(rule_line(&at("198.18.90.42:40001 > 198.19.96.10:443", None)), 5);
        // came in elsewhere, or another port: no nat rule sent it to the proxy, and the rules passed say why
        let Found::NoRule { deciding } = at("198.18.90.42:40001 > 198.19.96.10:80", Some("eth1")) else {
            panic!()
        };
        assert_eq!(deciding.len(), 2, "{deciding:?}");
        assert!(deciding[0].contains("(pod.rules:4): -i tun0 did not match"), "{deciding:?}");
        assert!(matches!(at("198.18.90.42:40001 > 198.19.96.10:8443", None), Found::NoRule { .. }));
    }

    #[test]
    fn a_key_in_no_element_of_a_dnat_map_goes_on_to_the_next_rule_and_says_why() {
        let text = "table ip k {\n\
            \tmap services {\n\t\ttype ipv4_addr . inet_service : ipv4_addr . inet_service\n\
            \t\telements = { 198.19.200.10 . 80 : 198.19.96.10 . 8080 }\n\t}\n\
            \tchain prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\
            \t\tdnat ip to ip daddr . tcp dport map @services\n\
            \t\ttcp dport 9090 dnat ip to 198.19.96.11:9090\n\t}\n}\n";
        let set = super::super::nft::parse("nft.txt", text).0;
        let e =
            evaluate(&set, &obs("198.18.90.42:1 > 198.19.200.10:80", "198.18.90.42:1 > 198.19.96.10:8080"));
        assert_eq!(rule_line(&e.destination), 8);
        // the kernel's lookup miss breaks the rule; the next one still sees the packet
        let e =
            evaluate(&set, &obs("198.18.90.42:1 > 198.19.200.10:9090", "198.18.90.42:1 > 198.19.96.11:9090"));
        assert_eq!(rule_line(&e.destination), 9);
        let e = evaluate(&set, &obs("198.18.90.42:1 > 198.19.96.10:80", "198.18.90.42:1 > 198.19.96.10:80"));
        let Found::NoRule { deciding } = &e.destination else { panic!("{e:?}") };
        assert_eq!(
            deciding[0],
            "`dnat ip to ip daddr . tcp dport map @services` (nft.txt:8): the packet's key is in no element of the map"
        );
    }

    #[test]
    fn an_unknown_interface_is_decided_by_the_captures_or_left_not_evaluated() {
        let text = "*nat\n:POSTROUTING ACCEPT [0:0]\n\
            -A POSTROUTING -o be0 -j MASQUERADE\n\
            -A POSTROUTING -o be1 -j SNAT --to-source 198.19.3.99\nCOMMIT\n";
        let set = super::super::ipt::parse("n", text).0;
        let e = evaluate(&set, &obs("198.18.90.42:1 > 198.19.96.10:80", "198.19.3.17:1 > 198.19.96.10:80"));
        // SNAT --to-source 198.19.3.99 cannot give 198.19.3.17: only MASQUERADE can
        let Found::Rule { rule, decided } = e.source else { panic!() };
        assert_eq!(rule.line, 3);
        assert_eq!(decided, ["-o be0 (matched, line 3: output interface not known)"]);
        let e = evaluate(&set, &obs("198.18.90.42:1 > 198.19.96.10:80", "198.19.3.99:1 > 198.19.96.10:80"));
        assert_eq!(
            e.source,
            Found::NotEvaluated { conditions: vec!["-o be0".into(), "-o be1".into()] },
            "MASQUERADE could give .99 too"
        );
        let mut known = obs("198.18.90.42:1 > 198.19.96.10:80", "198.19.3.99:1 > 198.19.96.10:80");
        known.oif = Some("be1".into());
        let e = evaluate(&set, &known);
        assert_eq!(rule_line(&e.source), 4);
        known.after = known.before;
        let e = evaluate(&set, &known);
        assert!(matches!(e.source, Found::Disagrees { .. }));
        known.oif = Some("eth9".into());
        let Found::NoRule { deciding } = evaluate(&set, &known).source else { panic!() };
        assert_eq!(
            deciding[0],
            "`-A POSTROUTING -o be0 -j MASQUERADE` (n:3): -o be0 did not match: it left on eth9"
        );
    }

    #[test]
    fn an_ipset_match_on_the_deciding_rule_is_not_evaluated() {
        let text = "*nat\n:POSTROUTING ACCEPT [0:0]\n\
            -A POSTROUTING -m set --match-set nomasq dst -j RETURN\n\
            -A POSTROUTING -j MASQUERADE\nCOMMIT\n";
        let set = super::super::ipt::parse("n", text).0;
        // masqueraded: only the way where the set did not match gives it
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.1.1.1:1 > 10.9.9.9:80"));
        assert_eq!(rule_line(&e.source), 4);
        // unchanged: only the way where the set matched
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.0.0.1:1 > 10.9.9.9:80"));
        assert!(matches!(e.source, Found::NoRule { .. }));
        let text = "*nat\n:POSTROUTING ACCEPT [0:0]\n\
            -A POSTROUTING -m bpf --bytecode \"1,6 0 0 0\" -j MASQUERADE\n\
            -A POSTROUTING -j MASQUERADE\nCOMMIT\n";
        let set = super::super::ipt::parse("n", text).0;
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.1.1.1:1 > 10.9.9.9:80"));
        assert_eq!(e.source, Found::NotEvaluated { conditions: vec!["-m bpf --bytecode 1,6 0 0 0".into()] });
    }

    #[test]
    fn every_condition_the_captures_decided_is_named() {
        // Calico-style: masquerade from the pool's set to anywhere but the set.
        let text = "*nat\n:POSTROUTING ACCEPT [0:0]\n\
            -A POSTROUTING -m set --match-set pools src -m set ! --match-set all-pools dst -j MASQUERADE\n\
            COMMIT\n";
        let set = super::super::ipt::parse("n", text).0;
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.1.1.1:1 > 10.9.9.9:80"));
        let Found::Rule { rule, decided } = &e.source else { panic!("{e:?}") };
        assert_eq!(rule.line, 3);
        assert_eq!(
            decided,
            &["-m set --match-set pools src and -m set ! --match-set all-pools dst (all matched, line 3)"]
        );
        // unchanged: the way where not all of them matched
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.0.0.1:1 > 10.9.9.9:80"));
        assert!(matches!(e.source, Found::NoRule { .. }), "{e:?}");
    }

    #[test]
    fn ways_that_multiply_stop_at_the_budget_quickly() {
        let mut text =
            String::from("*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:A - [0:0]\n");
        for i in 0..30 {
            text.push_str(&format!("-A PREROUTING -i x{i} -j A\n-A POSTROUTING -o y{i} -j A\n"));
            text.push_str(&format!("-A A -m set --match-set s{i} src -j MARK --set-xmark 0x{i:x}/0xff\n"));
        }
        text.push_str("-A POSTROUTING -j MASQUERADE\nCOMMIT\n");
        let set = super::super::ipt::parse("n", &text).0;
        let t = std::time::Instant::now();
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.1.1.1:1 > 10.9.9.9:80"));
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(matches!(&e.source, Found::NotEvaluated { .. } | Found::Rule { .. }), "{e:?}");
    }

    #[test]
    fn a_way_keeps_the_first_nat_rules_passed_per_hook_repeats_in_a_row_once() {
        let mut w = World::default();
        for i in [1, 1, 2, 3, 3, 4, 5, 6, 7] {
            w.miss(Hook::Postrouting, || format!("r{i}"));
            w.miss(Hook::Prerouting, || "p".into());
        }
        let on = |h| w.misses.iter().filter(|(x, _)| *x == h).map(|(_, m)| m.as_str()).collect::<Vec<_>>();
        assert_eq!(on(Hook::Postrouting), ["r1", "r2", "r3", "r4", "r5"]);
        assert_eq!(on(Hook::Prerouting), ["p"]);
    }

    #[test]
    fn a_chain_jumped_to_thousands_of_times_keeps_a_few_lines_not_one_per_visit() {
        // found by fuzzing: each visit of a long NAT rule that did not match
        // was kept, in every way, until the budget (out of memory at 512 MiB)
        let long = "x".repeat(4000);
        let mut text = format!(
            "*nat\n:POSTROUTING ACCEPT [0:0]\n:A - [0:0]\n-A A -s 10.7.0.0/16 -m comment --comment {long} -j MASQUERADE\n\
             -A A -s 10.8.0.0/16 -m comment --comment {long} -j MASQUERADE\n"
        );
        for _ in 0..20_000 {
            text.push_str("-A POSTROUTING -j A\n");
        }
        text.push_str("COMMIT\n");
        let set = super::super::ipt::parse("n", &text).0;
        let t = std::time::Instant::now();
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.0.0.1:1 > 10.9.9.9:80"));
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "{:?}", t.elapsed());
        let Found::NoRule { deciding } = &e.source else { panic!("{e:?}") };
        assert_eq!(deciding.len(), MAX_MISSES, "{deciding:?}");
        assert!(deciding[0].contains("10.7.0.0/16") && deciding[1].contains("10.8.0.0/16"), "{deciding:?}");
    }

    #[test]
    fn a_jump_loop_or_a_huge_chain_ends_not_evaluated_not_hung() {
        let text = "*nat\n:POSTROUTING ACCEPT [0:0]\n:A - [0:0]\n-A POSTROUTING -j A\n-A A -j A\nCOMMIT\n";
        let set = super::super::ipt::parse("n", text).0;
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.0.0.1:1 > 10.9.9.9:80"));
        assert!(
            matches!(&e.source, Found::NotEvaluated { conditions } if conditions[0].contains("deeper")),
            "{e:?}"
        );
        let mut text = String::from("*nat\n:POSTROUTING ACCEPT [0:0]\n");
        for _ in 0..40 {
            text.push_str("-A POSTROUTING -o x -j RETURN\n");
        }
        text.push_str("COMMIT\n");
        let set = super::super::ipt::parse("n", &text).0;
        let e = evaluate(&set, &obs("10.0.0.1:1 > 10.9.9.9:80", "10.0.0.1:1 > 10.9.9.9:80"));
        assert!(matches!(&e.source, Found::NotEvaluated { .. } | Found::NoRule { .. }), "{e:?}");
    }

    #[test]
    fn the_rules_passed_are_quoted_without_their_comments() {
        assert_eq!(
            uncommented(
                r#"-A IP-MASQ-AGENT -d 10.0.0.0/8 -m comment --comment "ip-masq-agent: \"a\" b" -j RETURN"#
            ),
            "-A IP-MASQ-AGENT -d 10.0.0.0/8 -j RETURN"
        );
        assert_eq!(uncommented("-A X -m comment --comment word -j MASQUERADE"), "-A X -j MASQUERADE");
        assert_eq!(uncommented(r#"ip daddr 10.0.0.0/8 return comment "a; b""#), "ip daddr 10.0.0.0/8 return");
        assert_eq!(
            uncommented(r#"-A X -m comment --comment "open -j X"#),
            r#"-A X -m comment --comment "open -j X"#
        );
        assert_eq!(uncommented("-A X -j SNAT --to-source 1.2.3.4"), "-A X -j SNAT --to-source 1.2.3.4");
        assert_eq!(
            uncommented("-A X -m set --match-set comment src -j RETURN"),
            "-A X -m set --match-set comment src -j RETURN"
        );
    }

    /// The filter table's verdict on a first packet, for each way a ruleset
    /// can end it: a rule, a REJECT, a chain's policy, a rule that only an
    /// interface the captures don't show decides, a DNAT before FORWARD,
    /// and rules that let it through.
    #[test]
    fn the_filter_table_names_what_drops_a_first_packet_and_what_it_cannot_decide() {
        let ipt = |body: &str| super::super::ipt::parse("f.rules", body).0;
        let t = |s: &str| -> Tuple4 {
            let (c, d) = s.split_once(" > ").unwrap();
            let e = |x: &str| {
                let (a, p) = x.rsplit_once(':').unwrap();
                (a.parse::<IpAddr>().unwrap(), Some(p.parse::<u16>().unwrap()))
            };
            let ((ca, cp), (da, dp)) = (e(c), e(d));
            (ca, cp, da, dp)
        };
        let pkt = t("198.18.90.43:40005 > 198.19.97.10:9000");
        let line = |f: &Filtered| match f {
            Filtered::Dropped { rule, .. } => rule.line,
            other => panic!("not dropped by a rule: {other:?}"),
        };
        // established traffic accepted first, then the DROP of this client
        let set = ipt("*filter\n:FORWARD ACCEPT [0:0]\n\
            -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n\
            -A FORWARD -s 198.18.90.43/32 -p udp -j DROP\nCOMMIT\n");
        let f = filtered(&set, 17, pkt, None, None);
        assert_eq!(line(&f), 4);
        assert!(
            matches!(&f, Filtered::Dropped { reject: false, decided, .. } if decided.is_empty()),
            "{f:?}"
        );
        assert_eq!(filtered(&set, 6, pkt, None, None), Filtered::Passes { file: "f.rules".into() });
        // a REJECT says so
        let set = ipt("*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -p udp -j REJECT --reject-with icmp-port-unreachable\nCOMMIT\n");
        assert!(matches!(filtered(&set, 17, pkt, None, None), Filtered::Dropped { reject: true, .. }));
        // the policy: nothing accepted it
        let set = ipt("*filter\n:FORWARD DROP [0:0]\n-A FORWARD -d 198.19.96.0/24 -j ACCEPT\nCOMMIT\n");
        assert_eq!(
            filtered(&set, 17, pkt, None, None),
            Filtered::Policy {
                file: "f.rules".into(),
                table: "filter".into(),
                chain: "FORWARD".into(),
                line: 2,
                decided: vec![]
            }
        );
        // `-o` not known: either way is possible, and it is said
        let set = ipt("*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -o be1 -j DROP\nCOMMIT\n");
        match filtered(&set, 17, pkt, None, None) {
            Filtered::Undecided { conditions, rules } => {
                assert_eq!(conditions, vec!["-o be1".to_string()]);
                assert_eq!(rules.iter().map(|r| r.line).collect::<Vec<_>>(), vec![3]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(line(&filtered(&set, 17, pkt, None, Some("be1".into()))), 3);
        assert!(matches!(filtered(&set, 17, pkt, None, Some("be0".into())), Filtered::Passes { .. }));
        // FORWARD sees the destination after PREROUTING's DNAT
        let set = ipt("*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -d 198.19.97.10/32 -p udp -j DNAT --to-destination 198.19.96.20:53\nCOMMIT\n\
            *filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -d 198.19.97.10/32 -j ACCEPT\n-A FORWARD -d 198.19.96.20/32 -p udp -m udp --dport 53 -j DROP\nCOMMIT\n");
        assert_eq!(line(&filtered(&set, 17, pkt, None, None)), 8);
        // no filter chain: nothing to say
        assert_eq!(
            filtered(&ipt("*nat\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n"), 17, pkt, None, None),
            Filtered::NoFilter
        );
        // nft: `policy drop` on the base chain, `reject`
        let (set, notes) = super::super::nft::parse(
            "f.nft",
            "table inet filter {\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy drop;\n\
             \t\tct state established,related accept\n\t\tip daddr 198.19.96.0/24 accept\n\t}\n}\n",
        );
        assert!(notes.messages().is_empty(), "{:?}", notes.messages());
        assert!(matches!(filtered(&set, 17, pkt, None, None), Filtered::Policy { line: 3, .. }));
        let set = super::super::nft::parse(
            "f.nft",
            "table ip t {\n\tchain fw {\n\t\ttype filter hook forward priority 0; policy accept;\n\t\tudp dport 9000 reject\n\t}\n}\n",
        )
        .0;
        assert!(matches!(filtered(&set, 17, pkt, None, None), Filtered::Dropped { reject: true, .. }));
    }

    #[test]
    fn a_reply_is_established_and_takes_no_nat_chain() {
        let ipt = |body: &str| super::super::ipt::parse("f.rules", body).0;
        let a = |x: &str| x.parse::<IpAddr>().unwrap();
        // the server's reply to the client, as FORWARD sees it
        let reply = (a("198.19.96.10"), Some(80), a("198.18.90.42"), Some(40001));
        let passes = Filtered::Passes { file: "f.rules".into() };
        // the usual chain: established accepted first, so the later DROP of
        // the server's address is never reached; a first packet from the
        // server would be dropped
        let set = ipt("*filter\n:FORWARD ACCEPT [0:0]\n\
            -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n\
            -A FORWARD -s 198.19.96.10/32 -j DROP\nCOMMIT\n");
        assert_eq!(filtered_reply(&set, 6, reply, None, None), passes);
        assert!(matches!(filtered(&set, 6, reply, None, None), Filtered::Dropped { .. }));
        // without it the DROP takes the reply; INVALID and NEW drops do not
        let set = ipt("*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -s 198.19.96.10/32 -j DROP\nCOMMIT\n");
        match filtered_reply(&set, 6, reply, None, None) {
            Filtered::Dropped { rule, reject: false, .. } => assert_eq!(rule.line, 3),
            other => panic!("{other:?}"),
        }
        let set = ipt("*filter\n:FORWARD ACCEPT [0:0]\n\
            -A FORWARD -m conntrack --ctstate INVALID -j DROP\n\
            -A FORWARD -m conntrack --ctstate NEW -s 198.19.96.10/32 -j DROP\nCOMMIT\n");
        assert_eq!(filtered_reply(&set, 6, reply, None, None), passes);
        // a policy DROP that accepts only new connections loses the reply
        let set =
            ipt("*filter\n:FORWARD DROP [0:0]\n-A FORWARD -m conntrack --ctstate NEW -j ACCEPT\nCOMMIT\n");
        assert!(matches!(filtered_reply(&set, 6, reply, None, None), Filtered::Policy { line: 2, .. }));
        // the nat table's DNAT is not walked for a reply
        let set = ipt("*nat\n:PREROUTING ACCEPT [0:0]\n\
            -A PREROUTING -s 198.19.96.10/32 -j DNAT --to-destination 198.19.99.9\nCOMMIT\n\
            *filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -d 198.19.99.9/32 -j DROP\nCOMMIT\n");
        assert_eq!(filtered_reply(&set, 6, reply, None, None), passes);
    }

    #[test]
    fn a_filter_rule_is_quoted_whole_without_counters_comments_or_handles() {
        assert_eq!(
            filter_rule_text("[3:180] -A FORWARD -s 198.18.90.43/32 -m comment --comment \"no\" -j DROP"),
            "-A FORWARD -s 198.18.90.43/32 -j DROP"
        );
        assert_eq!(
            filter_rule_text("ip saddr 198.18.90.43 counter packets 1 bytes 65 drop # handle 3"),
            "ip saddr 198.18.90.43 drop"
        );
        let long = format!("-A FORWARD {} -j DROP", "-s 198.18.90.43/32 ".repeat(20));
        assert!(filter_rule_text(&long).ends_with(" …") && filter_rule_text(&long).len() < 170);
        // `iptables-save -c`: the counters are no part of the rule
        assert_eq!(
            short_rule("[16:944] -A POSTROUTING -o be1 -j MASQUERADE"),
            "-A POSTROUTING … -j MASQUERADE"
        );
        assert_eq!(uncommented("[16:944] -A X -m comment --comment \"a b\" -j RETURN"), "-A X -j RETURN");
    }

    #[test]
    fn a_forecast_names_the_rule_a_packet_will_meet_or_what_it_cannot_decide() {
        let ipt = |body: &str| super::super::ipt::parse("r", body).0;
        let a = |s: &str| s.parse::<IpAddr>().unwrap();
        let (src, dst) = ((a("10.4.1.7"), Some(40000)), (a("203.0.113.9"), Some(443)));
        let set = ipt("*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -d 10.0.0.0/8 -j RETURN\n\
            -A POSTROUTING -d 203.0.113.0/24 -j SNAT --to-source 198.19.3.1\n-A POSTROUTING -o eth0 -j MASQUERADE\nCOMMIT\n");
        match forecast(&set, 6, src, dst, None, false) {
            Forecast::Snat { rule, to } => assert_eq!((rule.line, to), (4, Some(a("198.19.3.1")))),
            other => panic!("{other:?}"),
        }
        let inside = (a("10.9.9.9"), Some(80));
        assert!(matches!(forecast(&set, 6, src, inside, None, false), Forecast::Kept { .. }));
        let other = (a("198.51.100.1"), Some(80));
        assert_eq!(
            forecast(&set, 6, src, other, None, false),
            Forecast::Undecided { conditions: vec!["-o eth0".into()] }
        );
        match forecast(&set, 6, src, other, Some("eth0".into()), false) {
            Forecast::Masquerade { rule } => assert_eq!(rule.line, 5),
            f => panic!("{f:?}"),
        }
        assert!(matches!(forecast(&set, 6, src, other, Some("eth1".into()), false), Forecast::Kept { .. }));
    }

    #[test]
    fn netmap_maps_the_prefix_one_to_one_and_is_named() {
        let set = super::super::ipt::parse(
            "r",
            "*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n\
             -A PREROUTING -d 198.19.200.0/24 -j NETMAP --to 198.19.96.0/24\n\
             -A POSTROUTING -s 198.18.90.0/24 -j NETMAP --to 198.19.77.0/24\nCOMMIT\n",
        )
        .0;
        let e = evaluate(
            &set,
            &obs("198.18.90.42:40000 > 198.19.200.10:80", "198.19.77.42:40000 > 198.19.96.10:80"),
        );
        assert_eq!((rule_line(&e.source), rule_line(&e.destination)), (5, 4));
        // another host part is no NETMAP of that address
        let e = evaluate(
            &set,
            &obs("198.18.90.42:40000 > 198.19.200.10:80", "198.19.77.43:40000 > 198.19.96.10:80"),
        );
        assert!(matches!(e.source, Found::Disagrees { .. }), "{:?}", e.source);
        let a = |s: &str| s.parse::<IpAddr>().unwrap();
        match forecast(&set, 6, (a("198.18.90.7"), Some(1)), (a("198.19.96.10"), Some(80)), None, true) {
            Forecast::Snat { rule, to } => assert_eq!((rule.line, to), (5, Some(a("198.19.77.7")))),
            f => panic!("{f:?}"),
        }
    }
}
