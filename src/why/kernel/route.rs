//! `ip rule`, `ip -6 rule`, `ip route show table all` and `ip -6 route show
//! table all` (in one file, in any order; `ip -d route` and plain `ip route`
//! too) → the host's policy rules per family and its routes, each with its
//! line; and the kernel's fib lookup over them: which rule, which table,
//! which route, or which refusal.
//!
//! Which family a rule line belongs to (`ip rule` and `ip -6 rule` both
//! print `from all lookup local`):
//! 1. the family of its own `from`/`to` prefix, when it has one;
//! 2. else the family its section's header names: a line starting with `#`
//!    or `$` that runs `ip … rule` (`# ip -6 rule`: IPv6, else IPv4);
//! 3. else the family of the addressed rules of its listing, when they agree
//!    (a listing ends where the preference goes down: `ip rule` prints in
//!    ascending order);
//! 4. else IPv4 for the first of several listings, IPv6 for one that follows
//!    an IPv4 one (the `ip rule; ip -6 rule` order), and both families for
//!    the only listing of the file.
//!
//! A family with no rule line at all gets the kernel's defaults (IPv4: 0
//! local, 32766 main, 32767 default; IPv6: 0 local, 32766 main), with line 0.
//! A `default` route takes the family of its gateway or source; with
//! neither, IPv6 when the line prints `pref` (every IPv6 route does) or its
//! section's header says `-6`, else IPv4.

use crate::why::model::Cidr;
use crate::why::text::{self, Notes};
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A routing table: `local` (255), `main` (254), `default` (253), a number,
/// or a name from the host's `rt_tables` this reader does not know.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TableId {
    Local,
    Main,
    Default,
    Id(u32),
    Named(String),
}

impl TableId {
    /// `local`, `main`, `default`, `unspec` (0), a number, else the name as is.
    pub fn parse(word: &str) -> TableId {
        match word {
            "local" => TableId::Local,
            "main" => TableId::Main,
            "default" => TableId::Default,
            "unspec" => TableId::Id(0),
            w => match w.parse::<u32>() {
                Ok(255) => TableId::Local,
                Ok(254) => TableId::Main,
                Ok(253) => TableId::Default,
                Ok(n) => TableId::Id(n),
                Err(_) => TableId::Named(w.to_string()),
            },
        }
    }

    /// The table's number; None for a name.
    pub fn number(&self) -> Option<u32> {
        match self {
            TableId::Local => Some(255),
            TableId::Main => Some(254),
            TableId::Default => Some(253),
            TableId::Id(n) => Some(*n),
            TableId::Named(_) => None,
        }
    }
}

impl std::fmt::Display for TableId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableId::Local => f.write_str("local"),
            TableId::Main => f.write_str("main"),
            TableId::Default => f.write_str("default"),
            TableId::Id(n) => write!(f, "{n}"),
            TableId::Named(s) => f.write_str(s),
        }
    }
}

/// A route's type, the word `ip route` prints before the prefix (none: unicast).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteKind {
    Unicast,
    /// The destination is one of the host's own addresses (table local).
    Local,
    Broadcast,
    Anycast,
    Multicast,
    /// Dropped silently (the sender sees EINVAL).
    Blackhole,
    /// Dropped with ICMP host unreachable.
    Unreachable,
    /// Dropped with ICMP administratively prohibited.
    Prohibit,
    /// Not in this table: the lookup goes on with the next policy rule.
    Throw,
}

impl RouteKind {
    fn parse(word: &str) -> Option<RouteKind> {
        Some(match word {
            "unicast" => RouteKind::Unicast,
            "local" => RouteKind::Local,
            "broadcast" => RouteKind::Broadcast,
            "anycast" => RouteKind::Anycast,
            "multicast" => RouteKind::Multicast,
            "blackhole" => RouteKind::Blackhole,
            "unreachable" => RouteKind::Unreachable,
            "prohibit" => RouteKind::Prohibit,
            "throw" => RouteKind::Throw,
            _ => return None,
        })
    }

    /// Blackhole, unreachable, prohibit: the lookup ends with an error.
    pub fn refuses(self) -> bool {
        matches!(self, RouteKind::Blackhole | RouteKind::Unreachable | RouteKind::Prohibit)
    }
}

/// One route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub line: u32,
    /// `main` unless the line names another.
    pub table: TableId,
    pub kind: RouteKind,
    /// `default` is 0.0.0.0/0 or ::/0.
    pub dst: Cidr,
    /// IPv6 source-specific routes (`2001:db8::/48 from 2001:db8:90::/48 …`):
    /// only packets from this prefix take it.
    pub from: Option<Cidr>,
    pub via: Option<IpAddr>,
    pub dev: Option<String>,
    /// The preferred source address (`src`).
    pub src: Option<IpAddr>,
    /// 0 when not printed (IPv4's default).
    pub metric: u32,
    /// Multipath: the `nexthop via … dev …` lines under the route (nexthops
    /// marked `dead` are left out).
    pub nexthops: Vec<(Option<IpAddr>, Option<String>)>,
    /// Marked `dead` (or every nexthop is): the kernel does not use it.
    pub dead: bool,
}

impl Route {
    /// The interfaces the route leaves by: its `dev`, or its nexthops'.
    pub fn devs(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.dev.iter().map(String::as_str).collect();
        for d in self.nexthops.iter().filter_map(|(_, d)| d.as_deref()) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }

    /// True when the route or one of its nexthops leaves by `dev` (the
    /// kernel's `fib_info_nh_uses_dev`).
    pub fn uses_dev(&self, dev: &str) -> bool {
        self.devs().contains(&dev)
    }
}

/// What a policy rule does when it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleAction {
    Lookup(TableId),
    Blackhole,
    Unreachable,
    Prohibit,
    /// Jumps to the first rule of this preference (after this one); none:
    /// `[unresolved]`, the rule is passed over.
    Goto(u32),
    Nop,
}

/// One `ip rule` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRule {
    /// 0 for the kernel's default rules (no rule line in the file).
    pub line: u32,
    pub pref: u32,
    /// `not`: the rule matches when its selectors, taken together, do not.
    pub not: bool,
    pub from: Option<Cidr>,
    pub to: Option<Cidr>,
    /// `fwmark VALUE/MASK` (no mask: all ones).
    pub fwmark: Option<(u32, u32)>,
    pub iif: Option<String>,
    pub oif: Option<String>,
    /// `iif`/`oif` of an interface that does not exist (`[detached]`): never matches.
    pub detached: bool,
    /// `suppress_prefixlength N`: a route found with a prefix this short or
    /// shorter is ignored and the lookup goes on.
    pub suppress_prefixlength: Option<u8>,
    /// Selectors a lookup cannot evaluate (`uidrange`, `ipproto`, `sport`,
    /// `dport`, `tos`, `dsfield`, `l3mdev`, `tun_id`, `suppress_ifgroup`):
    /// the rule is passed over and named in [`Lookup`]'s `unsure`.
    pub unsure: Vec<String>,
    pub action: RuleAction,
}

impl PolicyRule {
    fn default_rule(pref: u32, table: TableId) -> PolicyRule {
        PolicyRule {
            line: 0,
            pref,
            not: false,
            from: None,
            to: None,
            fwmark: None,
            iif: None,
            oif: None,
            detached: false,
            suppress_prefixlength: None,
            unsure: Vec::new(),
            action: RuleAction::Lookup(table),
        }
    }

    /// The selectors this reader evaluates, all together (before `not`).
    /// Lookups have no output interface: an `oif` selector never holds.
    fn selectors_hold(&self, dst: IpAddr, src: IpAddr, iif: &str, mark: u32) -> bool {
        self.from.is_none_or(|c| c.contains(src))
            && self.to.is_none_or(|c| c.contains(dst))
            && self.fwmark.is_none_or(|(v, m)| (mark ^ v) & m == 0)
            && self.iif.as_deref().is_none_or(|i| i == iif && !self.detached)
            && self.oif.is_none()
    }
}

/// What one routes file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Routes {
    pub file: String,
    /// In file order.
    pub routes: Vec<Route>,
    /// By ascending preference (file order within one).
    pub rules_v4: Vec<PolicyRule>,
    pub rules_v6: Vec<PolicyRule>,
    /// The file held rule lines; false: both families have the kernel's defaults.
    pub rules_given: bool,
    /// The file holds routes of table local: the host's own addresses are
    /// known. False (plain `ip route`): [`Routes::is_local`] knows none.
    pub has_local: bool,
    /// The tables routes were read for, in order of first appearance.
    pub tables: Vec<TableId>,
}

/// The result of a fib lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// A route (unicast, local, broadcast, multicast, anycast), found by the
    /// policy rule at line `rule` (None: a kernel default rule).
    Route { route: &'a Route, rule: Option<u32>, unsure: Vec<u32> },
    /// A blackhole, unreachable or prohibit route (`line` is the route's) or
    /// rule action (`line` is the rule's, as is `rule`).
    Refused { kind: RouteKind, line: u32, rule: Option<u32>, unsure: Vec<u32> },
    /// No rule led to a route; the tables consulted, in order.
    NoRoute { tables: Vec<TableId>, unsure: Vec<u32> },
}

impl Lookup<'_> {
    /// Lines of rules passed over because their selectors could not be
    /// evaluated: had one matched, the result could be another.
    pub fn unsure(&self) -> &[u32] {
        match self {
            Lookup::Route { unsure, .. }
            | Lookup::Refused { unsure, .. }
            | Lookup::NoRoute { unsure, .. } => unsure,
        }
    }
}

impl Routes {
    /// The kernel's fib lookup of a packet to `dst` from `src` (None: not
    /// chosen yet, 0.0.0.0 or ::, as for an unbound local socket) arriving on
    /// `iif` (None: sent by the host itself, which the kernel looks up as
    /// arriving on `lo`) with firewall mark `mark`. Policy rules by ascending
    /// preference; a `lookup` rule takes the table's longest matching prefix
    /// (IPv6: then the longest `from`), then the lowest metric, then the first
    /// printed; a `throw` route, an empty table or a route suppressed by
    /// `suppress_prefixlength` goes on with the next rule; a blackhole,
    /// unreachable or prohibit route or rule ends it.
    pub fn lookup(&self, dst: IpAddr, src: Option<IpAddr>, iif: Option<&str>, mark: u32) -> Lookup<'_> {
        let v6 = dst.is_ipv6();
        let rules = if v6 { &self.rules_v6 } else { &self.rules_v4 };
        let unspecified =
            if v6 { IpAddr::V6(Ipv6Addr::UNSPECIFIED) } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) };
        let src = src.filter(|s| s.is_ipv6() == v6).unwrap_or(unspecified);
        let iif = iif.unwrap_or("lo");
        let best = self.best_per_table(dst, src);
        let mut tables: Vec<TableId> = Vec::new();
        let mut unsure: Vec<u32> = Vec::new();
        let mut i = 0;
        while let Some(r) = rules.get(i) {
            i += 1;
            let known = r.selectors_hold(dst, src, iif, mark);
            // a known selector that fails decides (no match; with `not`, a match);
            // when they all hold, the selectors not evaluated would decide
            if known && !r.unsure.is_empty() {
                unsure.push(r.line);
                continue;
            }
            if known == r.not {
                continue;
            }
            let rule = Some(r.line).filter(|l| *l > 0);
            match &r.action {
                RuleAction::Nop => {}
                RuleAction::Goto(pref) => {
                    // the first rule of that preference; only forward (the kernel
                    // refuses a goto to a lower preference)
                    let j = rules.partition_point(|x| x.pref < *pref);
                    if *pref > r.pref && rules.get(j).is_some_and(|x| x.pref == *pref) {
                        i = j;
                    }
                }
                RuleAction::Blackhole => {
                    return Lookup::Refused { kind: RouteKind::Blackhole, line: r.line, rule, unsure }
                }
                RuleAction::Unreachable => {
                    return Lookup::Refused { kind: RouteKind::Unreachable, line: r.line, rule, unsure }
                }
                RuleAction::Prohibit => {
                    return Lookup::Refused { kind: RouteKind::Prohibit, line: r.line, rule, unsure }
                }
                RuleAction::Lookup(t) => {
                    tables.push(t.clone());
                    let Some(&route) = best.get(t) else { continue };
                    if route.kind == RouteKind::Throw {
                        continue;
                    }
                    if route.kind.refuses() {
                        return Lookup::Refused { kind: route.kind, line: route.line, rule, unsure };
                    }
                    if r.suppress_prefixlength.is_some_and(|s| route.dst.len <= s) {
                        continue;
                    }
                    return Lookup::Route { route, rule, unsure };
                }
            }
        }
        Lookup::NoRoute { tables, unsure }
    }

    /// The best route of each table for `dst` from `src`, in one pass (a
    /// file may hold many tables and many rules).
    fn best_per_table(&self, dst: IpAddr, src: IpAddr) -> HashMap<&TableId, &Route> {
        let key = |r: &Route| (r.dst.len, r.from.map_or(0, |f| f.len), std::cmp::Reverse(r.metric));
        let mut best: HashMap<&TableId, &Route> = HashMap::new();
        for r in &self.routes {
            if r.dead || !r.dst.contains(dst) || !r.from.is_none_or(|f| f.contains(src)) {
                continue;
            }
            let b = best.entry(&r.table).or_insert(r);
            if key(r) > key(b) {
                *b = r;
            }
        }
        best
    }

    /// The line of the table-local `local` route holding `addr`: the
    /// address is the host's own. None when no such route (or no table
    /// local in the file: see [`Routes::has_local`]).
    pub fn is_local(&self, addr: IpAddr) -> Option<u32> {
        (self.routes.iter())
            .find(|r| r.table == TableId::Local && r.kind == RouteKind::Local && r.dst.contains(addr))
            .map(|r| r.line)
    }

    /// True when table local holds an address of `dev` (of IPv6 when `v6`).
    pub fn has_address(&self, dev: &str, v6: bool) -> bool {
        self.routes.iter().any(|r| {
            r.table == TableId::Local
                && r.kind == RouteKind::Local
                && r.dst.addr.is_ipv6() == v6
                && r.dev.as_deref() == Some(dev)
        })
    }

    /// True when table local holds addresses of this family.
    pub fn has_local_of(&self, v6: bool) -> bool {
        (self.routes.iter())
            .any(|r| r.table == TableId::Local && r.kind == RouteKind::Local && r.dst.addr.is_ipv6() == v6)
    }
}

/// Address families a rule line may belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fam {
    V4,
    V6,
    Both,
}

/// A rule read, before its family is settled.
struct RawRule {
    rule: PolicyRule,
    /// From its own `from`/`to`.
    own: Option<Fam>,
    block: usize,
}

/// Parses `ip rule`/`ip route` output (see the module's documentation).
pub fn parse_routes(file: &str, input: &str) -> (Routes, Notes) {
    let mut notes = Notes::new(file);
    let mut out = Routes { file: file.to_string(), ..Routes::default() };
    let mut raw: Vec<RawRule> = Vec::new();
    // per rule listing: the header's family
    let mut blocks: Vec<Option<Fam>> = Vec::new();
    let mut header_rules: Option<Fam> = None;
    let mut header_routes_v6: Option<bool> = None;
    let mut new_block = true;
    let mut last_pref: Option<u32> = None;
    // the route nexthop lines attach to
    let mut open_route: Option<usize> = None;
    let mut tables: HashSet<TableId> = HashSet::new();
    for (n, line) in text::lines(input, &mut notes) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('#') || t.starts_with('$') {
            open_route = None;
            if let Some((rules, v6)) = header(t) {
                if rules {
                    header_rules = Some(if v6 == Some(true) { Fam::V6 } else { Fam::V4 });
                    new_block = true;
                } else {
                    header_routes_v6 = v6;
                    header_rules = None;
                }
            }
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        if first == "nexthop" {
            let Some(k) = open_route else {
                notes.line(n, "a nexthop line under no route");
                continue;
            };
            match nexthop(t.split_whitespace().skip(1)) {
                Ok((via, dev, dead)) => {
                    let r = &mut out.routes[k];
                    if r.dst.addr.is_ipv6() && via.is_some_and(|v| v.is_ipv4()) {
                        notes.line(n, format!("an IPv4 gateway for {}", r.dst));
                        continue;
                    }
                    if !dead {
                        r.nexthops.push((via, dev));
                    }
                    r.dead = r.nexthops.is_empty();
                }
                Err(why) => notes.line(n, why),
            }
            continue;
        }
        open_route = None;
        if let Some(pref) =
            first.strip_suffix(':').filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            let Ok(pref) = pref.parse::<u32>() else {
                notes.line(n, format!("rule preference {pref} is larger than 4294967295"));
                continue;
            };
            match rule(n, pref, t[first.len()..].split_whitespace()) {
                Ok(r) => {
                    if new_block || last_pref.is_some_and(|p| pref < p) {
                        blocks.push(header_rules);
                        new_block = false;
                    }
                    last_pref = Some(pref);
                    let own = [r.from, r.to].iter().flatten().next().map(|c| fam_of(c.addr));
                    raw.push(RawRule { rule: r, own, block: blocks.len() - 1 });
                }
                Err(why) => notes.line(n, why),
            }
            continue;
        }
        match route(n, t, header_routes_v6) {
            Ok(r) => {
                if tables.insert(r.table.clone()) {
                    out.tables.push(r.table.clone());
                }
                out.has_local |= r.table == TableId::Local;
                open_route = Some(out.routes.len());
                out.routes.push(r);
            }
            Err(why) => notes.line(n, why),
        }
    }
    out.rules_given = !raw.is_empty();
    let fams = block_families(&blocks, &raw);
    for r in raw {
        let fam = r.own.unwrap_or(fams[r.block]);
        if fam != Fam::V6 {
            out.rules_v4.push(r.rule.clone());
        }
        if fam != Fam::V4 {
            out.rules_v6.push(r.rule);
        }
    }
    if out.rules_v4.is_empty() {
        out.rules_v4 = vec![
            PolicyRule::default_rule(0, TableId::Local),
            PolicyRule::default_rule(32766, TableId::Main),
            PolicyRule::default_rule(32767, TableId::Default),
        ];
    }
    if out.rules_v6.is_empty() {
        out.rules_v6 =
            vec![PolicyRule::default_rule(0, TableId::Local), PolicyRule::default_rule(32766, TableId::Main)];
    }
    out.rules_v4.sort_by_key(|r| r.pref);
    out.rules_v6.sort_by_key(|r| r.pref);
    (out, notes)
}

fn fam_of(a: IpAddr) -> Fam {
    if a.is_ipv6() {
        Fam::V6
    } else {
        Fam::V4
    }
}

/// The family of each rule listing, as the module's documentation says.
fn block_families(blocks: &[Option<Fam>], raw: &[RawRule]) -> Vec<Fam> {
    // per listing: the family its addressed rules agree on (Both: they disagree)
    let mut seen: Vec<Option<Fam>> = vec![None; blocks.len()];
    for r in raw {
        if let (Some(own), Some(s)) = (r.own, seen.get_mut(r.block)) {
            *s = Some(if s.is_none_or(|f| f == own) { own } else { Fam::Both });
        }
    }
    let mut out: Vec<Fam> = Vec::with_capacity(blocks.len());
    for (header, seen) in blocks.iter().zip(seen) {
        let evidence = seen.filter(|f| *f != Fam::Both);
        let fam = match (header, evidence) {
            (Some(h), _) => *h,
            (None, Some(f)) => f,
            (None, None) if blocks.len() == 1 => Fam::Both,
            (None, None) => match out.last() {
                None => Fam::V4,
                Some(Fam::V4) => Fam::V6,
                Some(_) => Fam::Both,
            },
        };
        out.push(fam);
    }
    out
}

/// A header line (`# ip -6 rule`, `$ ip route show table all`): (names
/// rules, Some(v6) when it names a family); None for another comment.
fn header(t: &str) -> Option<(bool, Option<bool>)> {
    let words: Vec<&str> = t.trim_start_matches(['#', '$']).split_whitespace().collect();
    // the last `ip` (`ip netns exec ns ip -6 rule`)
    let ip = words.iter().rposition(|w| *w == "ip" || w.ends_with("/ip"))?;
    let mut rest = words[ip + 1..].iter();
    let mut v6 = None;
    let object = loop {
        let w = *rest.next()?;
        match w {
            "-6" => v6 = Some(true),
            "-4" => v6 = Some(false),
            "-f" | "-family" => v6 = rest.next().map(|f| *f == "inet6"),
            "-n" | "-netns" | "-b" | "-batch" | "-rc" | "-rcvbuf" => {
                rest.next();
            }
            w if w.starts_with('-') => {}
            w => break w,
        }
    };
    if "rule".starts_with(object) && object.len() >= 2 {
        Some((true, v6))
    } else if "route".starts_with(object) {
        Some((false, v6))
    } else {
        None
    }
}

/// The words of a rule after `PREF:`.
fn rule<'a>(n: u32, pref: u32, mut w: impl Iterator<Item = &'a str>) -> Result<PolicyRule, String> {
    let mut r = PolicyRule::default_rule(pref, TableId::Main);
    r.line = n;
    let mut action = None;
    fn value<'a>(w: &mut impl Iterator<Item = &'a str>, key: &str) -> Result<&'a str, String> {
        w.next().ok_or_else(|| format!("{key} without a value"))
    }
    while let Some(word) = w.next() {
        match word {
            "not" => r.not = true,
            "from" | "to" => {
                let v = value(&mut w, word)?;
                let c = if v == "all" {
                    None
                } else {
                    Some(Cidr::parse(v).ok_or_else(|| format!("{word} {v}: not a prefix"))?)
                };
                if word == "from" {
                    r.from = c;
                } else {
                    r.to = c;
                }
            }
            "fwmark" => {
                let v = value(&mut w, word)?;
                let (m, mask) = v.split_once('/').unwrap_or((v, "0xffffffff"));
                r.fwmark = Some((
                    number(m).ok_or_else(|| format!("fwmark {v}: not a mark"))?,
                    number(mask).ok_or_else(|| format!("fwmark {v}: not a mask"))?,
                ));
            }
            "iif" | "oif" => {
                let v = value(&mut w, word)?.to_string();
                if word == "iif" {
                    r.iif = Some(v);
                } else {
                    r.oif = Some(v);
                }
            }
            "[detached]" => r.detached = true,
            "lookup" | "table" => {
                let v = value(&mut w, word)?;
                if v.starts_with('[') {
                    r.unsure.push(format!("{word} {v}"));
                }
                action = Some(RuleAction::Lookup(TableId::parse(v)));
            }
            "goto" => {
                let v = value(&mut w, word)?;
                action =
                    Some(RuleAction::Goto(v.parse().map_err(|_| format!("goto {v}: not a preference"))?));
            }
            "[unresolved]" => {}
            "nop" => action = Some(RuleAction::Nop),
            "blackhole" => action = Some(RuleAction::Blackhole),
            "unreachable" => action = Some(RuleAction::Unreachable),
            "prohibit" => action = Some(RuleAction::Prohibit),
            "suppress_prefixlength" => {
                let v = value(&mut w, word)?;
                // -1 (or larger than any prefix) suppresses nothing
                r.suppress_prefixlength = v.parse::<u8>().ok().filter(|l| *l <= 128);
            }
            "l3mdev" => r.unsure.push(word.to_string()),
            "uidrange" | "ipproto" | "sport" | "dport" | "tos" | "dsfield" | "dscp" | "tun_id"
            | "suppress_ifgroup" | "map-to" | "flowlabel" => {
                let v = value(&mut w, word)?;
                r.unsure.push(format!("{word} {v}"));
            }
            "proto" | "protocol" | "realms" | "pref" | "priority" => {
                value(&mut w, word)?;
            }
            _ => {} // a word of a later iproute2: skipped
        }
    }
    r.action =
        action.ok_or("a rule without an action (lookup, goto, nop, blackhole, unreachable, prohibit)")?;
    Ok(r)
}

/// `0x1f` or `31`.
fn number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Keywords of a route line whose value is not used (`mtu lock 1400` too).
const VALUED: &[&str] = &[
    "proto",
    "scope",
    "pref",
    "mtu",
    "advmss",
    "hoplimit",
    "realm",
    "realms",
    "expires",
    "nhid",
    "weight",
    "rtt",
    "rttvar",
    "ssthresh",
    "cwnd",
    "initcwnd",
    "initrwnd",
    "window",
    "quickack",
    "congctl",
    "features",
    "reordering",
    "fastopen_no_cookie",
    "error",
    "tos",
    "dsfield",
    "rto_min",
    "age",
    "users",
    "used",
    "ttl-propagate",
];

/// One route line.
fn route(n: u32, t: &str, section_v6: Option<bool>) -> Result<Route, String> {
    let mut w = t.split_whitespace().peekable();
    let first = w.next().ok_or("an empty line")?;
    let (kind, prefix) = match RouteKind::parse(first) {
        Some(k) => (k, w.next().ok_or_else(|| format!("{first} without a prefix"))?),
        None => (RouteKind::Unicast, first),
    };
    let dst = match prefix {
        "default" | "all" | "any" => None,
        p => Some(Cidr::parse(p).ok_or_else(|| format!("{p}: not a route type or prefix"))?),
    };
    let mut r = Route {
        line: n,
        table: TableId::Main,
        kind,
        dst: dst.unwrap_or(Cidr { addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED), len: 0 }),
        from: None,
        via: None,
        dev: None,
        src: None,
        metric: 0,
        nexthops: Vec::new(),
        dead: false,
    };
    let mut saw_pref = false;
    // the nexthop being read on the route's own line (`nexthop via … dev …`)
    let mut inline: Option<(Option<IpAddr>, Option<String>)> = None;
    while let Some(word) = w.next() {
        let mut value = || w.next().ok_or_else(|| format!("{word} without a value"));
        match word {
            "via" => {
                let mut v = value()?;
                if v == "inet" || v == "inet6" {
                    v = w.next().ok_or("via without an address")?;
                }
                let a: IpAddr = v.parse().map_err(|_| format!("via {v}: not an address"))?;
                match &mut inline {
                    Some(nh) => nh.0 = Some(a),
                    None => r.via = Some(a),
                }
            }
            "dev" | "oif" => {
                let d = value()?.to_string();
                match &mut inline {
                    Some(nh) => nh.1 = Some(d),
                    None => r.dev = Some(d),
                }
            }
            "src" => {
                let v = value()?;
                r.src = Some(v.parse().map_err(|_| format!("src {v}: not an address"))?);
            }
            "from" => {
                let v = value()?;
                r.from = Some(Cidr::parse(v).ok_or_else(|| format!("from {v}: not a prefix"))?);
            }
            "metric" | "priority" | "preference" => {
                let v = value()?;
                r.metric = v.parse().map_err(|_| format!("metric {v}: not a number"))?;
            }
            "table" => r.table = TableId::parse(value()?),
            "nexthop" => {
                if let Some(nh) = inline.take() {
                    r.nexthops.push(nh);
                }
                inline = Some((None, None));
            }
            "dead" => r.dead = true,
            "encap" => {
                // its own words (`encap ip id 1 src … dst …`) up to the next route keyword
                while w
                    .peek()
                    .is_some_and(|x| !matches!(*x, "via" | "dev" | "table" | "proto" | "scope" | "metric"))
                {
                    w.next();
                }
            }
            k if VALUED.contains(&k) => {
                saw_pref |= k == "pref";
                if value()? == "lock" {
                    w.next();
                }
            }
            _ => {} // a flag (onlink, linkdown, offload) or a keyword of a later iproute2
        }
    }
    if let Some(nh) = inline {
        r.nexthops.push(nh);
    }
    if dst.is_none() {
        // `default`: the family of the line's addresses; IPv6 routes print `pref`
        let seen = [r.via, r.src, r.from.map(|f| f.addr)].into_iter().flatten().next();
        let v6 = match seen {
            Some(a) => a.is_ipv6(),
            None => saw_pref || section_v6 == Some(true),
        };
        if v6 {
            r.dst = Cidr { addr: IpAddr::V6(Ipv6Addr::UNSPECIFIED), len: 0 };
        }
    }
    let v6 = r.dst.addr.is_ipv6();
    if r.src.is_some_and(|s| s.is_ipv6() != v6) {
        return Err(format!("src of the other family than {}", r.dst));
    }
    if r.from.is_some_and(|s| s.addr.is_ipv6() != v6) {
        return Err(format!("from of the other family than {}", r.dst));
    }
    if v6 && r.via.is_some_and(|a| a.is_ipv4()) {
        return Err(format!("an IPv4 gateway for {}", r.dst));
    }
    Ok(r)
}

/// The words of a `nexthop` line: (via, dev, dead).
fn nexthop<'a>(
    mut w: impl Iterator<Item = &'a str>,
) -> Result<(Option<IpAddr>, Option<String>, bool), String> {
    let (mut via, mut dev, mut dead) = (None, None, false);
    while let Some(word) = w.next() {
        match word {
            "via" => {
                let mut v = w.next().ok_or("via without an address")?;
                if v == "inet" || v == "inet6" {
                    v = w.next().ok_or("via without an address")?;
                }
                via = Some(v.parse().map_err(|_| format!("via {v}: not an address"))?);
            }
            "dev" => dev = Some(w.next().ok_or("dev without a name")?.to_string()),
            "dead" => dead = true,
            "weight" | "realms" | "realm" => {
                w.next();
            }
            _ => {}
        }
    }
    Ok((via, dev, dead))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip -n NS rule; ip -n NS -6 rule; ip -n NS route show table all; ip -n NS
    /// -6 route show table all`, each under a `# …` header, of the lab in
    /// `kernel-lab.sh` (iproute2 6.1, Linux 6.18).
    const ROUTES: &str = include_str!("../testdata/kernel-routes.txt");
    /// `ip -n NS route` (table main only).
    const MAIN: &str = include_str!("../testdata/kernel-routes-main.txt");
    /// `ip -n NS -d route show table all`.
    const DETAIL: &str = include_str!("../testdata/kernel-routes-detail.txt");
    /// `ip -n NS rule; ip -n NS -6 rule` without headers.
    const BARE: &str = include_str!("../testdata/kernel-rules-bare.txt");

    fn a(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn routes(text: &str) -> Routes {
        let (r, notes) = parse_routes("routes.txt", text);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        r
    }

    /// (route line, rule line) of a lookup that finds a route.
    fn found(l: Lookup<'_>) -> (u32, Option<u32>) {
        match l {
            Lookup::Route { route, rule, unsure } => {
                assert!(unsure.is_empty());
                (route.line, rule)
            }
            other => panic!("no route: {other:?}"),
        }
    }

    #[test]
    fn the_lab_dump_reads_whole_with_rules_per_family_and_multipath_nexthops() {
        let r = routes(ROUTES);
        assert!(r.rules_given && r.has_local);
        let prefs = |rules: &[PolicyRule]| rules.iter().map(|x| (x.pref, x.line)).collect::<Vec<_>>();
        assert_eq!(
            prefs(&r.rules_v4),
            [
                (0, 2),
                (100, 3),
                (150, 4),
                (200, 5),
                (300, 6),
                (400, 7),
                (500, 8),
                (600, 9),
                (700, 10),
                (750, 11),
                (800, 12),
                (900, 13),
                (32766, 14),
                (32767, 15)
            ]
        );
        assert_eq!(prefs(&r.rules_v6), [(0, 17), (100, 18), (200, 19), (300, 20), (32766, 21)]);
        let fw = &r.rules_v4[1];
        assert_eq!((fw.fwmark, &fw.action), (Some((1, 1)), &RuleAction::Lookup(TableId::Id(100))));
        let wg = &r.rules_v4[11];
        assert_eq!(
            (wg.not, wg.fwmark, &wg.action),
            (true, Some((0xca6c, u32::MAX)), &RuleAction::Lookup(TableId::Id(51820)))
        );
        assert_eq!(r.rules_v4[10].suppress_prefixlength, Some(0));
        assert_eq!(
            (r.rules_v4[2].iif.as_deref(), &r.rules_v4[2].action),
            (Some("eth1"), &RuleAction::Blackhole)
        );
        assert_eq!(r.rules_v4[8].action, RuleAction::Goto(32766));
        assert_eq!(r.rules_v4[7].action, RuleAction::Nop);
        // `ip route show table all` prints IPv6 routes too: the file holds them twice
        assert_eq!(r.routes.len(), 27 * 3);
        assert_eq!(
            r.tables,
            [TableId::Id(100), TableId::Id(51820), TableId::Id(200), TableId::Main, TableId::Local]
        );
        let mp = r.routes.iter().find(|x| x.line == 39).unwrap();
        assert_eq!((mp.dev.as_deref(), mp.dead), (None, false));
        assert_eq!(
            mp.nexthops,
            [
                (Some(a("198.18.10.254")), Some("eth0".into())),
                (Some(a("198.18.20.254")), Some("eth1".into()))
            ]
        );
        assert_eq!(mp.devs(), ["eth0", "eth1"]);
        let bh = r.routes.iter().find(|x| x.line == 27).unwrap();
        assert_eq!(
            (bh.kind, bh.dst, &bh.table),
            (RouteKind::Blackhole, Cidr::parse("0.0.0.0/0").unwrap(), &TableId::Id(200))
        );
        let v6 = r.routes.iter().find(|x| x.line == 62).unwrap();
        assert_eq!((v6.from, v6.metric), (Cidr::parse("2001:db8:90::/48"), 1024));
        let v6_default = r.routes.iter().find(|x| x.line == 66).unwrap();
        assert_eq!(v6_default.dst, Cidr::parse("::/0").unwrap());
        let src = r.routes.iter().find(|x| x.line == 38).unwrap();
        assert_eq!((src.src, src.dev.as_deref()), (Some(a("198.18.20.1")), Some("eth1")));
    }

    #[test]
    fn longest_prefix_then_lowest_metric_then_the_first_printed() {
        let r = routes(ROUTES);
        let from = Some(a("198.18.10.5"));
        // the /24 via eth1 over the /16s
        assert_eq!(found(r.lookup(a("198.19.96.7"), from, Some("eth0"), 0)), (42, Some(12)));
        // of the two /16s, metric 50 (eth0) over metric 100 (eth1)
        let (line, _) = found(r.lookup(a("198.19.5.5"), from, Some("eth0"), 0));
        assert_eq!(line, 33);
        // printed the other way round, metric still decides
        let swapped = MAIN.replace(
            "198.19.0.0/16 via 198.18.10.254 dev eth0 metric 50 \n198.19.0.0/16 via 198.18.20.254 dev eth1 metric 100 \n",
            "198.19.0.0/16 via 198.18.20.254 dev eth1 metric 100 \n198.19.0.0/16 via 198.18.10.254 dev eth0 metric 50 \n",
        );
        assert_ne!(swapped, MAIN);
        assert_eq!(found(routes(&swapped).lookup(a("198.19.5.5"), from, None, 0)), (6, None));
        // IPv6: metric 100 via eth1 over 200 via eth0; the first of the two copies
        let (line, rule) = found(r.lookup(a("2001:db8:96::5"), Some(a("2001:db8:10::1")), None, 0));
        assert_eq!((line, rule), (60, Some(21)));
        // a source-specific IPv6 route only for its sources
        assert_eq!(found(r.lookup(a("2001:db8:300::1"), Some(a("2001:db8:90::5")), None, 0)).0, 62);
        assert_eq!(found(r.lookup(a("2001:db8:300::1"), Some(a("2001:db8:10::1")), None, 0)).0, 66);
    }

    #[test]
    fn policy_rules_fwmark_throw_goto_not_and_suppress_prefixlength() {
        let r = routes(ROUTES);
        let from = Some(a("198.18.10.5"));
        // fwmark 0x1/0x1 (line 3) → table 100: its default via eth1 (line 23)
        assert_eq!(found(r.lookup(a("198.19.5.5"), from, Some("eth0"), 0x1)), (23, Some(3)));
        assert_eq!(found(r.lookup(a("198.19.5.5"), from, Some("eth0"), 0x3)), (23, Some(3)));
        assert_eq!(found(r.lookup(a("198.19.5.5"), from, Some("eth0"), 0x2)).0, 33);
        // table 100 throws 198.19.96.0/24 (line 25): main's /24 through the next rules
        assert_eq!(found(r.lookup(a("198.19.96.7"), from, None, 0x1)), (42, Some(12)));
        // goto 32766 (line 10) jumps over 750 (which would take table 100) and 800
        assert_eq!(found(r.lookup(a("198.19.202.9"), from, None, 0)), (33, Some(14)));
        // main's default is suppressed at 800 (prefix 0 ≤ 0); `not fwmark 0xca6c` takes table 51820
        assert_eq!(found(r.lookup(a("198.18.77.7"), from, None, 0)), (26, Some(13)));
        // marked 0xca6c: 900 does not match, main's default at 32766
        assert_eq!(found(r.lookup(a("198.18.77.7"), from, None, 0xca6c)), (29, Some(14)));
        // `not from 198.18.0.0/15` (line 5): an unbound source (0.0.0.0) goes to table 200, a blackhole default
        assert_eq!(
            r.lookup(a("198.18.10.77"), None, None, 0),
            Lookup::Refused { kind: RouteKind::Blackhole, line: 27, rule: Some(5), unsure: vec![] }
        );
        assert_eq!(found(r.lookup(a("198.18.10.77"), from, None, 0)), (30, Some(12)));
        // from 198.18.90.0/24 (line 6) → table 200
        assert_eq!(found(r.lookup(a("198.18.90.9"), Some(a("198.18.90.42")), None, 0)), (28, Some(6)));
        // the host's own address: table local at rule 0
        assert_eq!(found(r.lookup(a("198.18.20.1"), from, Some("eth1"), 0)), (48, Some(2)));
        // IPv6: `not from 2001:db8::/32 unreachable` (line 19) for an unbound source
        assert_eq!(
            r.lookup(a("2001:db8:96::5"), None, None, 0),
            Lookup::Refused { kind: RouteKind::Unreachable, line: 19, rule: Some(19), unsure: vec![] }
        );
        // IPv6 fwmark → table 100, whose throw goes on to main
        assert_eq!(found(r.lookup(a("2001:db8:96::5"), Some(a("2001:db8:10::1")), None, 1)), (60, Some(21)));
        assert_eq!(found(r.lookup(a("2001:db8:77::5"), Some(a("2001:db8:10::1")), None, 1)), (53, Some(18)));
    }

    #[test]
    fn blackholes_and_refusing_rules_end_the_lookup() {
        let r = routes(ROUTES);
        let from = Some(a("198.18.10.5"));
        let refused = |dst: &str, iif: Option<&str>| match r.lookup(a(dst), from, iif, 0) {
            Lookup::Refused { kind, line, rule, .. } => (kind, line, rule),
            other => panic!("{other:?}"),
        };
        assert_eq!(refused("198.19.66.1", None), (RouteKind::Blackhole, 35, Some(12)));
        assert_eq!(refused("198.19.67.1", None), (RouteKind::Unreachable, 36, Some(12)));
        assert_eq!(refused("198.19.68.1", None), (RouteKind::Prohibit, 37, Some(12)));
        assert_eq!(refused("198.19.201.1", None), (RouteKind::Unreachable, 8, Some(8)));
        // `iif eth1 to 198.19.50.0/24 blackhole` (line 4): only arriving on eth1
        assert_eq!(refused("198.19.50.7", Some("eth1")), (RouteKind::Blackhole, 4, Some(4)));
        assert_eq!(found(r.lookup(a("198.19.50.7"), from, Some("eth0"), 0)).0, 33);
        // `oif eth0.100` (line 7) never holds: lookups have no output interface
        assert_eq!(found(r.lookup(a("198.19.5.5"), from, Some("eth0.100"), 0)).0, 33);
        assert_eq!(
            r.lookup(a("2001:db8:66::1"), Some(a("2001:db8:10::1")), None, 0),
            Lookup::Refused { kind: RouteKind::Blackhole, line: 56, rule: Some(21), unsure: vec![] }
        );
    }

    #[test]
    fn local_addresses_come_from_table_local() {
        let r = routes(ROUTES);
        assert_eq!(r.is_local(a("198.18.20.1")), Some(48));
        assert_eq!(r.is_local(a("127.0.0.9")), Some(43));
        assert_eq!(r.is_local(a("2001:db8:20::1")), Some(71));
        assert_eq!(r.is_local(a("198.18.20.2")), None);
        assert_eq!(r.is_local(a("198.18.20.255")), None); // broadcast, not local
        assert!(r.has_address("eth0.100", false) && !r.has_address("peer0", false));
        // plain `ip route`: main only, the kernel's default rules, no local addresses known
        let m = routes(MAIN);
        assert!(!m.rules_given && !m.has_local);
        assert_eq!(
            m.rules_v4.iter().map(|x| (x.pref, x.line)).collect::<Vec<_>>(),
            [(0, 0), (32766, 0), (32767, 0)]
        );
        assert_eq!(m.rules_v6.len(), 2);
        assert_eq!(m.is_local(a("198.18.20.1")), None);
        assert_eq!(found(m.lookup(a("198.19.5.5"), None, None, 0)), (5, None));
        assert_eq!(
            m.lookup(a("198.18.77.7"), None, None, 0x1),
            Lookup::Route { route: &m.routes[0], rule: None, unsure: vec![] }
        );
        match m.lookup(a("2001:db8::1"), None, None, 0) {
            Lookup::NoRoute { tables, .. } => assert_eq!(tables, [TableId::Local, TableId::Main]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ip_d_route_prints_unicast_and_table_main() {
        let d = routes(DETAIL);
        let full = routes(ROUTES);
        assert_eq!(d.routes.len(), 27 * 2);
        assert!(d.routes.iter().all(|r| r.nexthops.is_empty() || r.dev.is_none()));
        let pick = |r: &Routes, line| r.routes.iter().find(|x| x.line == line).cloned().unwrap();
        let (a1, b1) = (pick(&d, 11), pick(&full, 33));
        assert_eq!(
            (a1.kind, a1.dst, a1.via, a1.dev, a1.metric),
            (b1.kind, b1.dst, b1.via, b1.dev, b1.metric)
        );
        assert_eq!(pick(&d, 3).kind, RouteKind::Throw);
        assert_eq!(
            (pick(&d, 5).kind, pick(&d, 5).dst),
            (RouteKind::Blackhole, Cidr::parse("0.0.0.0/0").unwrap())
        );
        // the same lookups give the same routes
        let from = Some(a("198.18.10.5"));
        let line_of = |r: &Routes, dst: &str| {
            let (l, _) = found(r.lookup(a(dst), from, None, 0));
            let x = pick(r, l);
            (x.dst, x.dev)
        };
        for dst in ["198.19.5.5", "198.19.96.7", "198.18.30.9", "198.18.10.1"] {
            assert_eq!(line_of(&d, dst), line_of(&full, dst), "{dst}");
        }
    }

    #[test]
    fn rule_families_without_headers_follow_addresses_then_the_order_of_listings() {
        let b = routes(BARE);
        assert_eq!(b.rules_v4.len(), 14);
        assert_eq!(b.rules_v6.iter().map(|r| r.line).collect::<Vec<_>>(), [15, 16, 17, 18, 19]);
        let defaults =
            "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n";
        let two = format!("{defaults}0:\tfrom all lookup local\n32766:\tfrom all lookup main\n");
        let t = routes(&two);
        assert_eq!((t.rules_v4.len(), t.rules_v6.len()), (3, 2));
        // one listing, nothing to tell: both families
        let one = routes(defaults);
        assert_eq!((one.rules_v4.len(), one.rules_v6.len()), (3, 3));
        // a header decides, even against the order
        let headed = format!("# ip -6 rule\n{defaults}$ ip -n ns1 rule\n0:\tfrom all lookup local\n");
        let h = routes(&headed);
        assert_eq!((h.rules_v4.len(), h.rules_v6.len()), (1, 3));
        assert_eq!(h.rules_v4[0].line, 6);
    }

    #[test]
    fn unreadable_lines_are_noted_by_number_and_unknown_words_skipped() {
        let text = "\
hello world
198.18.0.0/99 dev eth0
2001:db8::/129 dev eth0
\tnexthop via 198.18.10.254 dev eth0
198.18.5.0/24 dev eth0 frobnicate 7 metric 9 onlink
abc: from all lookup main
100:\tfrom all
101:\tfrom 198.18.0.0/99 lookup main
102:\tfrom all fwmark 0xzz lookup 7
103:\tfrom all uidrange 0-0 lookup 7
4294967296:\tfrom all lookup main
default via 2001:db8::1 dev eth0 src 198.18.0.1
198.19.0.0/16 metric many
";
        let (r, notes) = parse_routes("r.txt", text);
        let lines: Vec<u32> = notes.list.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13], "{:?}", notes.messages());
        assert_eq!(notes.messages()[1], "r.txt:2: 198.18.0.0/99: not a route type or prefix; line not used");
        assert_eq!(r.routes.len(), 1);
        assert_eq!((r.routes[0].line, r.routes[0].metric), (5, 9));
        assert_eq!(r.rules_v4.len(), 1);
        assert_eq!(r.rules_v4[0].unsure, ["uidrange 0-0"]);
        // a rule whose selectors cannot be evaluated is passed over and named
        let l = r.lookup(a("198.18.5.1"), None, None, 0);
        assert_eq!(l.unsure(), [10]);
        assert!(matches!(l, Lookup::NoRoute { .. }));
    }
}
