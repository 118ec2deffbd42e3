//! `nft list ruleset` text → [`Ruleset`]: every table's chains (nat base
//! chains with their hook and priority, and the regular chains they jump to),
//! named sets and maps resolved into the rules that use them, anonymous sets,
//! verdict maps, `dnat to … map`, `numgen random`. A line it cannot read is
//! noted by number; an expression it does not know becomes a condition "not
//! evaluated", never dropped.

use super::model::*;
use super::text::{self, Notes};
use std::collections::HashMap;

/// A token and whether it was quoted.
#[derive(Clone, Debug, PartialEq)]
struct Tok {
    s: String,
    quoted: bool,
}

/// Tokens of one line: blanks separate; `{ } , ;` stand alone; `"…"` quotes;
/// `#` outside quotes begins a comment. None for an open quote.
fn tokens(line: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<Tok>| {
        if !cur.is_empty() {
            out.push(Tok { s: std::mem::take(cur), quoted: false });
        }
    };
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                flush(&mut cur, &mut out);
                let mut q = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => q.push(chars.next()?),
                        x => q.push(x),
                    }
                }
                out.push(Tok { s: q, quoted: true });
            }
            '#' => break,
            '{' | '}' | ',' | ';' => {
                flush(&mut cur, &mut out);
                out.push(Tok { s: c.to_string(), quoted: false });
            }
            c if c.is_whitespace() => flush(&mut cur, &mut out),
            c => cur.push(c),
        }
    }
    flush(&mut cur, &mut out);
    Some(out)
}

/// A named set or map: its elements, each split at ` . ` (and ` : ` for a map).
#[derive(Clone, Debug, Default)]
struct Named {
    /// Keys (components), and for a map the value's tokens.
    elements: Vec<(Vec<String>, Vec<Tok>)>,
}

/// Where the parser is.
enum Block {
    Top,
    Table,
    Chain,
    Set(String),
    /// A block this version does not read (flowtable, ct helper, counter, quota …).
    Skip(u32),
}

/// Parses `nft list ruleset` text.
pub fn parse(file: &str, input: &str) -> (Ruleset, Notes) {
    let mut notes = Notes::new(file);
    let mut set = Ruleset { file: file.to_string(), format: "nft", ..Ruleset::default() };
    let mut block = Block::Top;
    let mut table: Option<Table> = None;
    let mut chain: Option<Chain> = None;
    let mut named: HashMap<String, Named> = HashMap::new();
    // base chains of other types (filter, route): (table index, chain)
    let mut other_bases: Vec<(usize, String)> = Vec::new();
    // a statement spread over lines (`elements = { a,\n b }`): its first line and tokens
    let mut pending: Option<(u32, String, Vec<Tok>)> = None;
    for (n, line) in text::lines(input, &mut notes) {
        let Some(toks) = tokens(line) else {
            notes.line(n, "an unterminated quote");
            continue;
        };
        let (n, raw, toks) = match pending.take() {
            Some((first, mut raw, mut acc)) => {
                acc.extend(toks);
                raw.push(' ');
                raw.push_str(line.trim());
                (first, raw, acc)
            }
            None => (n, line.trim().to_string(), toks),
        };
        if toks.is_empty() {
            continue;
        }
        let opens = toks.iter().filter(|t| !t.quoted && t.s == "{").count();
        let closes = toks.iter().filter(|t| !t.quoted && t.s == "}").count();
        let header = toks.last().is_some_and(|t| t.s == "{" && !t.quoted) && opens == closes + 1;
        if !header && opens > closes {
            if raw.len() > text::MAX_LINE * 4 {
                notes.line(n, "a statement spread over too many lines");
                continue;
            }
            pending = Some((n, raw, toks));
            continue;
        }
        let w: Vec<&str> = toks.iter().map(|t| t.s.as_str()).collect();
        match &mut block {
            Block::Skip(depth) => {
                *depth = (*depth + opens as u32).saturating_sub(closes as u32);
                if *depth == 0 {
                    block = Block::Table;
                }
            }
            Block::Top => match (w.as_slice(), header) {
                (["table", fam, name, "{"], true) => {
                    let family = match *fam {
                        "ip" => Family::V4,
                        "ip6" => Family::V6,
                        "inet" => Family::Inet,
                        _ => {
                            notes.line(n, format!("table family {fam} holds no IP nat rules: skipped"));
                            block = Block::Skip(1);
                            continue;
                        }
                    };
                    table = Some(Table::new(file, format!("{fam} {name}"), family));
                    named.clear();
                    block = Block::Table;
                }
                _ => notes.line(n, "not a table (`table FAMILY NAME {`)"),
            },
            Block::Table => match (w.as_slice(), header) {
                (["chain", name, "{"], true) => {
                    chain = Some(Chain::named(name));
                    block = Block::Chain;
                }
                (["set" | "map", name, "{"], true) => {
                    named.insert(name.to_string(), Named::default());
                    block = Block::Set(name.to_string());
                }
                ([_, .., "{"], true) => block = Block::Skip(1),
                (["comment" | "flags", ..], false) => {}
                (["}"], _) => {
                    if let Some(t) = table.take() {
                        set.tables.push(t);
                    }
                    block = Block::Top;
                }
                _ => notes.line(n, "not a chain, set, map or `}` in a table"),
            },
            Block::Set(name) => match w.as_slice() {
                ["}"] => block = Block::Table,
                ["elements", "=", "{", ..] => match elements(&toks[3..]) {
                    Some(e) => named.entry(name.clone()).or_default().elements = e,
                    None => notes.line(n, "elements not read"),
                },
                ["type" | "typeof" | "flags" | "timeout" | "gc-interval" | "size" | "policy"
                | "auto-merge" | "counter" | "comment", ..] => {}
                _ => notes.line(n, "not a set's type, flags or elements"),
            },
            Block::Chain => {
                let Some(c) = chain.as_mut() else { continue };
                match w.as_slice() {
                    ["}"] => {
                        if let (Some(t), Some(c)) = (table.as_mut(), chain.take()) {
                            let name = c.name.clone();
                            if !t.add(c) {
                                notes.line(n, format!("chain {name} defined twice: the second not used"));
                            }
                        }
                        block = Block::Table;
                    }
                    ["type", kind, "hook", hook, "priority", ..] => {
                        let prio = priority(&w[5..]);
                        let hook = match *hook {
                            "prerouting" => Some(Hook::Prerouting),
                            "postrouting" => Some(Hook::Postrouting),
                            "output" => Some(Hook::Output),
                            "input" => Some(Hook::Input),
                            "forward" => Some(Hook::Forward),
                            _ => None,
                        };
                        if w.windows(2).any(|p| p == ["policy", "drop"]) {
                            c.policy_drop = Some(n);
                        }
                        match (prio, *kind) {
                            (Some(p), "nat") => c.hook = hook.filter(|h| *h != Hook::Forward).map(|h| (h, p)),
                            (Some(p), "filter") => {
                                c.filter = hook
                                    .filter(|h| matches!(h, Hook::Input | Hook::Forward | Hook::Output))
                                    .map(|h| (h, p));
                                other_bases.push((table_index(&set, &table), c.name.clone()))
                            }
                            (Some(_), _) => other_bases.push((table_index(&set, &table), c.name.clone())),
                            (None, _) => {
                                notes.line(n, "a chain's priority not read: the chain is not walked")
                            }
                        }
                    }
                    ["policy", "drop", ..] => c.policy_drop = Some(n),
                    ["policy", ..] => {}
                    _ => {
                        let tab = table.as_ref().map_or(Family::Inet, |t| t.family);
                        match rule(&toks, &named, tab) {
                            Ok((conds, action)) => {
                                c.rules.push(Rule { line: n, text: raw, conds, action });
                            }
                            Err(e) => notes.line(n, e),
                        }
                    }
                }
            }
        }
    }
    if pending.is_some() || !matches!(block, Block::Top) {
        notes.line(0, "the file ends inside a block: what was read is used");
        if let (Some(t), Some(c)) = (table.as_mut(), chain.take()) {
            t.add(c);
        }
        set.tables.extend(table.take());
    }
    // jumps to chains never defined become "not evaluated" in the walk
    set.mark_set_elsewhere = mark_outside_nat(&set, &other_bases);
    (set, notes)
}

/// The table index the table being read will have.
fn table_index(set: &Ruleset, _t: &Option<Table>) -> usize {
    set.tables.len()
}

/// The first line that sets a mark in a chain reachable from a base chain
/// that is not nat (a filter or route chain): nat alone then does not tell
/// a packet's mark.
pub(super) fn mark_outside_nat(set: &Ruleset, bases: &[(usize, String)]) -> Option<u32> {
    let mut seen: std::collections::HashSet<(usize, &str)> = std::collections::HashSet::new();
    let mut todo: Vec<(usize, &str)> = bases.iter().map(|(t, c)| (*t, c.as_str())).collect();
    let mut first: Option<u32> = None;
    while let Some((t, name)) = todo.pop() {
        if !seen.insert((t, name)) {
            continue;
        }
        let Some(chain) = set.tables.get(t).and_then(|tab| tab.chain(name)) else { continue };
        for r in &chain.rules {
            let mut actions = vec![&r.action];
            if let Action::Vmap { entries, .. } = &r.action {
                actions.extend(entries.iter().map(|(_, a)| a));
            }
            for a in actions {
                match a {
                    Action::SetMark { .. } => first = Some(first.map_or(r.line, |f| f.min(r.line))),
                    Action::Jump(c) | Action::Goto(c) => todo.push((t, c.as_str())),
                    _ => {}
                }
            }
        }
    }
    first
}

/// `srcnat`, `dstnat + 10`, `-100`.
fn priority(w: &[&str]) -> Option<i32> {
    let base = |s: &str| -> Option<i32> {
        match s {
            "raw" => Some(-300),
            "mangle" => Some(-150),
            "dstnat" => Some(-100),
            "filter" => Some(0),
            "security" => Some(50),
            "srcnat" => Some(100),
            n => n.parse().ok(),
        }
    };
    let p = base(w.first()?.trim_end_matches(';'))?;
    match w.get(1..3) {
        Some(["+", k]) => p.checked_add(k.trim_end_matches(';').parse().ok()?),
        Some(["-", k]) => p.checked_sub(k.trim_end_matches(';').parse().ok()?),
        _ => Some(p),
    }
}

/// The elements of `{ a . b, c . d : v }` from after the `{`; None when
/// the braces do not close.
fn elements(toks: &[Tok]) -> Option<Vec<(Vec<String>, Vec<Tok>)>> {
    let mut out = Vec::new();
    let mut cur: Vec<Tok> = Vec::new();
    let mut depth = 0u32;
    for t in toks {
        match t.s.as_str() {
            "{" if !t.quoted => {
                depth += 1;
                cur.push(t.clone());
            }
            "}" if !t.quoted && depth == 0 => {
                if !cur.is_empty() {
                    out.push(split_element(&cur));
                }
                return Some(out);
            }
            "}" if !t.quoted => {
                depth -= 1;
                cur.push(t.clone());
            }
            "," if !t.quoted && depth == 0 => out.push(split_element(&std::mem::take(&mut cur))),
            _ => cur.push(t.clone()),
        }
    }
    None
}

/// `a . b : v w` → (["a", "b"], [v, w]).
fn split_element(t: &[Tok]) -> (Vec<String>, Vec<Tok>) {
    let colon = t.iter().position(|x| x.s == ":" && !x.quoted).unwrap_or(t.len());
    let key = t[..colon].iter().filter(|x| x.s != "." || x.quoted).map(|x| x.s.clone()).collect();
    let val = t.get(colon + 1..).unwrap_or(&[]).to_vec();
    (key, val)
}

/// Words that begin a known expression or statement.
const KNOWN: &[&str] = &[
    "ip",
    "ip6",
    "icmp",
    "icmpv6",
    "tcp",
    "udp",
    "th",
    "meta",
    "ct",
    "iifname",
    "oifname",
    "iif",
    "oif",
    "fib",
    "counter",
    "comment",
    "log",
    "accept",
    "drop",
    "reject",
    "return",
    "jump",
    "goto",
    "continue",
    "masquerade",
    "snat",
    "dnat",
    "redirect",
    "numgen",
    "mark",
    "l4proto",
];

/// A selector's field and the words it took (`ip daddr` → Daddr, 2).
fn selector(w: &[&str]) -> Option<(Field, usize, Option<u8>)> {
    Some(match w {
        ["ip" | "ip6", "saddr", ..] => (Field::Saddr, 2, None),
        ["ip" | "ip6", "daddr", ..] => (Field::Daddr, 2, None),
        ["ip", "protocol", ..] | ["ip6", "nexthdr", ..] | ["meta", "l4proto", ..] => (Field::Proto, 2, None),
        ["l4proto", ..] => (Field::Proto, 1, None),
        ["tcp", "dport", ..] => (Field::Dport, 2, Some(6)),
        ["tcp", "sport", ..] => (Field::Sport, 2, Some(6)),
        ["udp", "dport", ..] => (Field::Dport, 2, Some(17)),
        ["udp", "sport", ..] => (Field::Sport, 2, Some(17)),
        ["th", "dport", ..] => (Field::Dport, 2, None),
        ["th", "sport", ..] => (Field::Sport, 2, None),
        ["iifname" | "iif", ..] | ["meta", "iifname" | "iif", ..] => {
            (Field::Iif, if w[0] == "meta" { 2 } else { 1 }, None)
        }
        ["oifname" | "oif", ..] | ["meta", "oifname" | "oif", ..] => {
            (Field::Oif, if w[0] == "meta" { 2 } else { 1 }, None)
        }
        ["meta", "mark", ..] => (Field::Mark, 2, None),
        ["mark", ..] => (Field::Mark, 1, None),
        ["ct", "state", ..] => (Field::CtState, 2, None),
        ["ct", "status", ..] => (Field::CtStatus, 2, None),
        ["icmp", "type", ..] => (Field::IcmpType, 2, Some(1)),
        ["icmpv6", "type", ..] => (Field::Icmp6Type, 2, Some(58)),
        ["fib", "daddr", "type", ..] => (Field::DaddrType, 3, None),
        ["fib", "saddr", "type", ..] => (Field::SaddrType, 3, None),
        _ => return None,
    })
}

/// One value of `field` (`10.0.0.0/8`, `1-5`, `"eth*"`, `tcp`, `0x4000`, `new`).
pub(super) fn value(field: Field, s: &str) -> Option<Value> {
    match field {
        Field::Saddr | Field::Daddr => match s.split_once('-') {
            Some((a, b)) if !s.contains('/') => {
                Some(Value::Range(AddrRange { first: a.parse().ok()?, last: b.parse().ok()? }))
            }
            _ => Cidr::parse(s).map(Value::Prefix),
        },
        Field::Sport | Field::Dport => port_range(s).map(|(a, b)| Value::Ports(a, b)),
        Field::Proto => proto_number(s).map(Value::Proto),
        Field::Iif | Field::Oif => Some(Value::Iface(s.to_string())),
        Field::Mark => super::ipt::number(s).map(|v| Value::Mark(v, u32::MAX)),
        Field::CtState | Field::CtStatus | Field::DaddrType | Field::SaddrType => {
            Some(Value::Word(s.to_string()))
        }
        Field::IcmpType | Field::Icmp6Type => icmp_type(s, field == Field::Icmp6Type),
        Field::Ports => None,
    }
}

/// The conditions and action of one rule's tokens.
fn rule(toks: &[Tok], named: &HashMap<String, Named>, family: Family) -> Result<(Vec<Cond>, Action), String> {
    let w: Vec<&str> = toks.iter().map(|t| t.s.as_str()).collect();
    let mut conds = Vec::new();
    let mut action = Action::Continue;
    let mut i = 0;
    let _ = family;
    while i < w.len() {
        let rest = &w[i..];
        // statements
        match rest {
            ["counter", ..] => {
                i += 1;
                while matches!(w.get(i), Some(&"packets" | &"bytes")) {
                    i += 2;
                }
                continue;
            }
            ["comment", ..] | ["log", "prefix", ..] => {
                i += if rest[0] == "log" { 3 } else { 2 };
                continue;
            }
            ["log", ..] => {
                i += 1;
                continue;
            }
            ["accept", ..] => (action, i) = (Action::Accept, i + 1),
            ["drop", ..] => (action, i) = (Action::Drop, i + 1),
            ["reject", ..] => (action, i) = (Action::Reject, w.len()),
            ["return", ..] => (action, i) = (Action::Return, i + 1),
            ["continue", ..] => i += 1,
            ["jump", c, ..] => (action, i) = (Action::Jump(c.to_string()), i + 2),
            ["goto", c, ..] => (action, i) = (Action::Goto(c.to_string()), i + 2),
            ["masquerade", ..] => {
                let (ports, flags, used) = nat_args(&w[i + 1..], true)?;
                action = Action::Masquerade { ports: ports.and_then(|p| p.ports), random: flags };
                i += 1 + used;
            }
            ["redirect", ..] => {
                let (ports, _, used) = nat_args(&w[i + 1..], true)?;
                action = Action::Redirect { ports: ports.and_then(|p| p.ports) };
                i += 1 + used;
            }
            ["snat" | "dnat", ..] => {
                let is_dnat = rest[0] == "dnat";
                let mut k = i + 1;
                if matches!(w.get(k), Some(&"ip" | &"ip6")) {
                    k += 1;
                }
                // `dnat ip addr . port to KEY map { … }`
                let concat = matches!(w.get(k..k + 3), Some(["addr", ".", "port"]));
                if concat {
                    k += 3;
                }
                if w.get(k) != Some(&"to") {
                    return Err(format!("{} without `to`", rest[0]));
                }
                k += 1;
                if let Some(m) = (k..w.len()).find(|&j| w[j] == "map") {
                    if !is_dnat {
                        return Ok((conds, Action::Unknown(w[i..].join(" "))));
                    }
                    let (key, chance) = map_key(&w[k..m])?;
                    let entries = map_entries(&toks[m + 1..], named, &key, |v| {
                        let t: Vec<&str> = v.iter().map(|t| t.s.as_str()).collect();
                        let text = match t.as_slice() {
                            [a, ".", p] => format!("{a}:{p}"),
                            [a] => a.to_string(),
                            _ => return None,
                        };
                        NatTo::parse(&text)
                    })?;
                    action = Action::DnatMap { key, chance, entries };
                    i = w.len();
                } else {
                    let (to, flags, used) = nat_args(&w[k..], false)?;
                    let to = to.ok_or_else(|| format!("{} to without an address", rest[0]))?;
                    action = if is_dnat {
                        Action::Dnat { to, random: flags }
                    } else {
                        Action::Snat { to, random: flags }
                    };
                    i = k + used;
                }
            }
            ["meta", "mark", "set", ..] | ["mark", "set", ..] => {
                let k = i + if rest[0] == "meta" { 3 } else { 2 };
                action = match &w[k..] {
                    // `mark or 0x4000` as written, `meta mark | 0x00004000` as listed
                    // (`xor`: iptables-nft's `--set-xmark V/0`; `and`: a bit cleared)
                    ["mark", op @ ("or" | "|" | "xor" | "^" | "and" | "&"), v, ..]
                    | ["meta", "mark", op @ ("or" | "|" | "xor" | "^" | "and" | "&"), v, ..] => {
                        let v = super::ipt::number(v).ok_or("meta mark set: not a number")?;
                        i = k + if w[k] == "meta" { 4 } else { 3 };
                        mark_op(op, v)
                    }
                    [v, ..] if super::ipt::number(v).is_some() => {
                        i = k + 1;
                        Action::SetMark { value: super::ipt::number(v).unwrap_or(0), mask: u32::MAX }
                    }
                    _ => return Ok((conds, Action::Unknown(w[i..].join(" ")))),
                };
            }
            ["numgen", "random", "mod", _, "vmap", ..] => {
                let entries = map_entries(&toks[i + 5..], named, &[], verdict)?;
                action = Action::Vmap { key: Vec::new(), chance: true, entries };
                i = w.len();
            }
            _ => {
                // a match: SELECTOR [. SELECTOR …] [OP] VALUE | { set } | @set | vmap …
                let mut fields = Vec::new();
                let mut k = i;
                while let Some((f, used, proto)) = selector(&w[k..]) {
                    if let Some(p) = proto {
                        conds.push(Cond::Is { field: Field::Proto, neg: false, any: vec![Value::Proto(p)] });
                    }
                    fields.push(f);
                    k += used;
                    if w.get(k) != Some(&".") {
                        break;
                    }
                    k += 1;
                }
                if fields.is_empty() {
                    // not known: the words up to the next known one, not evaluated
                    let end = (i + 1..w.len()).find(|&j| KNOWN.contains(&w[j])).unwrap_or(w.len());
                    conds.push(Cond::Unknown(w[i..end].join(" ")));
                    i = end;
                    continue;
                }
                // `meta mark & 0x4000 == 0x4000`
                let mut mask = u32::MAX;
                if fields == [Field::Mark] && w.get(k) == Some(&"&") {
                    mask = w
                        .get(k + 1)
                        .and_then(|m| super::ipt::number(m))
                        .ok_or("meta mark & without a mask")?;
                    k += 2;
                }
                let mut neg = false;
                match w.get(k) {
                    Some(&"!=") => (neg, k) = (true, k + 1),
                    Some(&"==") => k += 1,
                    _ => {}
                }
                match w.get(k) {
                    Some(&"vmap") => {
                        let entries = map_entries(&toks[k + 1..], named, &fields, verdict)?;
                        action = Action::Vmap { key: fields, chance: false, entries };
                        i = w.len();
                        continue;
                    }
                    Some(&"{") => {
                        let close = (k..w.len()).find(|&j| w[j] == "}").ok_or("a set without `}`")?;
                        let el = elements(&toks[k + 1..=close]).ok_or("a set not read")?;
                        let els = typed_elements(&el, &fields, mask)?;
                        conds.push(cond(fields, neg, els));
                        i = close + 1;
                    }
                    Some(s) if s.starts_with('@') => {
                        let n = named
                            .get(&s[1..])
                            .ok_or_else(|| format!("set {s} not defined before its use"))?;
                        let els = typed_elements(&n.elements, &fields, mask)?;
                        conds.push(cond(fields, neg, els));
                        i = k + 1;
                    }
                    Some(_) if fields.len() == 1 => {
                        // one value, or a comma list `ct state established,related`
                        let mut any = vec![typed_value(fields[0], w[k], mask)?];
                        k += 1;
                        while w.get(k) == Some(&",") && k + 1 < w.len() {
                            any.push(typed_value(fields[0], w[k + 1], mask)?);
                            k += 2;
                        }
                        conds.push(Cond::Is { field: fields[0], neg, any });
                        i = k;
                    }
                    _ => return Err(format!("a match on {} not read", w[i..k].join(" "))),
                }
            }
        }
    }
    Ok((conds, action))
}

fn cond(fields: Vec<Field>, neg: bool, els: Vec<Vec<Value>>) -> Cond {
    if fields.len() == 1 {
        Cond::Is { field: fields[0], neg, any: els.into_iter().flatten().collect() }
    } else {
        Cond::InSet { fields, neg, elements: els }
    }
}

fn typed_value(f: Field, s: &str, mask: u32) -> Result<Value, String> {
    match value(f, s) {
        Some(Value::Mark(v, _)) => Ok(Value::Mark(v, mask)),
        Some(v) => Ok(v),
        None => Err(format!("{s:?} is not a value of {f:?}")),
    }
}

fn typed_elements(
    el: &[(Vec<String>, Vec<Tok>)],
    fields: &[Field],
    mask: u32,
) -> Result<Vec<Vec<Value>>, String> {
    el.iter()
        .map(|(k, _)| {
            if k.len() != fields.len() {
                return Err(format!("an element of {} parts for a key of {}", k.len(), fields.len()));
            }
            k.iter().zip(fields).map(|(s, f)| typed_value(*f, s, mask)).collect()
        })
        .collect()
}

/// `numgen random mod N` (chance) or selectors as a map's key.
fn map_key(w: &[&str]) -> Result<(Vec<Field>, bool), String> {
    if let ["numgen", "random", "mod", _] = w {
        return Ok((Vec::new(), true));
    }
    let mut fields = Vec::new();
    let mut k = 0;
    while k < w.len() {
        let (f, used, _) = selector(&w[k..]).ok_or_else(|| format!("map key {} not read", w.join(" ")))?;
        fields.push(f);
        k += used;
        if w.get(k) == Some(&".") {
            k += 1;
        }
    }
    Ok((fields, false))
}

/// Entries of `{ k : v, … }` or `@map`, keys typed by `key` (numbers when empty).
fn map_entries<T>(
    toks: &[Tok],
    named: &HashMap<String, Named>,
    key: &[Field],
    val: impl Fn(&[Tok]) -> Option<T>,
) -> Result<Vec<(Vec<Value>, T)>, String> {
    let els = match toks.first().map(|t| t.s.as_str()) {
        Some("{") => elements(&toks[1..]).ok_or("a map without `}`")?,
        Some(s) if s.starts_with('@') => {
            named.get(&s[1..]).ok_or_else(|| format!("map {s} not defined before its use"))?.elements.clone()
        }
        _ => return Err("a map not read".into()),
    };
    els.iter()
        .map(|(k, v)| {
            let keys = if key.is_empty() {
                k.iter()
                    .map(|x| {
                        x.parse::<u32>()
                            .map(|_| Value::Word(x.clone()))
                            .map_err(|_| format!("{x:?} is not a number"))
                    })
                    .collect::<Result<Vec<_>, _>>()?
            } else {
                if k.len() != key.len() {
                    return Err(format!("a map key of {} parts for {}", k.len(), key.len()));
                }
                k.iter().zip(key).map(|(s, f)| typed_value(*f, s, u32::MAX)).collect::<Result<_, _>>()?
            };
            let t = val(v).ok_or_else(|| {
                format!(
                    "map value {:?} not read",
                    v.iter().map(|t| t.s.as_str()).collect::<Vec<_>>().join(" ")
                )
            })?;
            Ok((keys, t))
        })
        .collect()
}

/// `mark OP v` as the mark update `mark = (mark & !mask) ^ value`.
pub(super) fn mark_op(op: &str, v: u32) -> Action {
    match op {
        "or" | "|" => Action::SetMark { value: v, mask: v },
        "xor" | "^" => Action::SetMark { value: v, mask: 0 },
        // and: the bits outside v cleared
        _ => Action::SetMark { value: 0, mask: !v },
    }
}

/// A verdict map's value.
fn verdict(v: &[Tok]) -> Option<Action> {
    let w: Vec<&str> = v.iter().map(|t| t.s.as_str()).collect();
    Some(match w.as_slice() {
        ["accept"] => Action::Accept,
        ["drop"] => Action::Drop,
        ["return"] => Action::Return,
        ["continue"] => Action::Continue,
        ["jump", c] => Action::Jump(c.to_string()),
        ["goto", c] => Action::Goto(c.to_string()),
        _ => return None,
    })
}

/// `[to] [ADDR][:PORTS] [flags…]` after masquerade/redirect (`ports_only`) or
/// after `snat to`/`dnat to`: the target, whether random, the words used.
fn nat_args(w: &[&str], ports_only: bool) -> Result<(Option<NatTo>, bool, usize), String> {
    let mut k = 0;
    let mut to = None;
    if ports_only && w.first() == Some(&"to") {
        k = 1;
    }
    if let Some(t) = w.get(k).filter(|t| !KNOWN.contains(t) && !is_flag(t)) {
        to = Some(NatTo::parse(t).ok_or_else(|| format!("{t:?} is not an address[:port] range"))?);
        k += 1;
    }
    let mut random = false;
    while let Some(f) = w.get(k).filter(|t| is_flag(t)) {
        random |= f.contains("random");
        k += 1;
    }
    Ok((to, random, k))
}

fn is_flag(t: &str) -> bool {
    t.split(',').all(|f| matches!(f, "random" | "fully-random" | "persistent"))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::why::eval::{evaluate, Found, Observed};

    const NFT: &str = include_str!("testdata/nat.nft");

    #[test]
    fn an_nft_ruleset_with_sets_and_verdict_maps_reads_with_hooks_and_lines() {
        let (set, notes) = parse("nat.nft", NFT);
        assert_eq!(notes.messages(), Vec::<String>::new());
        let t = set.tables.iter().find(|t| t.name == "ip kube-proxy").unwrap();
        let pre = t.chain("nat-prerouting").unwrap();
        assert_eq!(pre.hook, Some((Hook::Prerouting, -100)));
        assert!(matches!(&pre.rules[0].action, Action::Jump(c) if c == "services"));
        let svcs = t.chain("services").unwrap();
        let Action::Vmap { key, chance: false, entries } = &svcs.rules[0].action else { panic!() };
        assert_eq!(key, &[Field::Daddr, Field::Proto, Field::Dport]);
        assert_eq!(entries.len(), 2);
        let post = t.chain("nat-postrouting").unwrap();
        assert_eq!(post.hook, Some((Hook::Postrouting, 100)));
        let masq = set.tables.iter().find(|t| t.name == "ip masq").unwrap();
        let r = &masq.chain("postrouting").unwrap().rules[0];
        assert_eq!(NFT.lines().nth(r.line as usize - 1).unwrap().trim(), r.text);
        assert!(matches!(&r.conds[0], Cond::Is { field: Field::Oif, neg: false, .. }));
        assert!(matches!(&r.conds[1], Cond::Is { field: Field::Daddr, neg: true, any } if any.len() == 3));
        assert_eq!(r.action, Action::Masquerade { ports: None, random: true });
        let fwd = &set.tables.iter().find(|t| t.name == "inet filter").unwrap().chains[0];
        assert_eq!(fwd.hook, None, "a filter chain is never walked for nat");
        let states = vec![Value::Word("established".into()), Value::Word("related".into())];
        assert_eq!(fwd.rules[0].conds, [Cond::Is { field: Field::CtState, neg: false, any: states }]);
        assert_eq!(set.mark_set_elsewhere, None, "marks are set only in chains nat reaches");
    }

    /// A TCP packet `b` before the host and `a` after it (address, port, address, port).
    pub(in crate::why) fn obs(b: [&str; 4], a: [&str; 4], oif: Option<&str>) -> Observed {
        let e = |x: [&str; 4]| {
            (
                x[0].parse().unwrap(),
                Some(x[1].parse().unwrap()),
                x[2].parse().unwrap(),
                Some(x[3].parse().unwrap()),
            )
        };
        Observed { proto: 6, before: e(b), after: e(a), iif: None, oif: oif.map(str::to_string) }
    }

    #[test]
    fn nft_verdict_maps_numgen_and_named_sets_name_the_rule_of_each_side() {
        let set = parse("nat.nft", NFT).0;
        let line = |f: &Found| match f {
            Found::Rule { rule, .. } => (rule.line, rule.chain.clone()),
            other => panic!("{other:?}"),
        };
        // service 198.19.200.10:80 -> endpoint 2 of 2, masqueraded by the mark
        let o = obs(
            ["198.18.90.42", "40001", "198.19.200.10", "80"],
            ["198.19.3.17", "51234", "198.19.96.11", "8080"],
            Some("be0"),
        );
        let e = evaluate(&set, &o);
        let (l, c) = line(&e.destination);
        assert_eq!(c, "endpoint-b");
        assert!(NFT.lines().nth(l as usize - 1).unwrap().contains("dnat to 198.19.96.11:8080"));
        let (l, c) = line(&e.source);
        assert_eq!(c, "nat-postrouting");
        assert!(NFT.lines().nth(l as usize - 1).unwrap().contains("masquerade fully-random"));
        // plain egress to 203.0.113.9 on be0: the masq table's rule (named set passed)
        let o = obs(
            ["198.18.90.42", "40002", "203.0.113.9", "443"],
            ["198.19.3.17", "40002", "203.0.113.9", "443"],
            Some("be0"),
        );
        let (l, c) = line(&evaluate(&set, &o).source);
        assert_eq!(c, "postrouting");
        assert!(NFT.lines().nth(l as usize - 1).unwrap().contains("@nomasq"));
        // to 10.1.2.3 (in @nomasq): not translated
        let o = obs(
            ["198.18.90.42", "40003", "10.1.2.3", "443"],
            ["198.18.90.42", "40003", "10.1.2.3", "443"],
            Some("be0"),
        );
        let Found::NoRule { deciding } = evaluate(&set, &o).source else { panic!() };
        assert!(
            deciding.iter().any(|d| d.contains("ip daddr != @nomasq") && d.contains("did not match")),
            "{deciding:?}"
        );
        // the map's dnat: 198.19.200.20:53 by ip daddr . th dport map
        let o = obs(
            ["198.18.90.42", "40004", "198.19.200.20", "53"],
            ["198.18.90.42", "40004", "198.19.96.12", "5353"],
            Some("eth1"),
        );
        let e = evaluate(&set, &o);
        assert_eq!(line(&e.destination).1, "dns");
    }

    #[test]
    fn broken_nft_lines_are_named_and_the_rest_read() {
        let text =
            "table ip t {\n\tchain c {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n\
            \t\toifname \"x masquerade\n\t\tip saddr 10.0.0.0/99 masquerade\n\t\tip daddr @nope masquerade\n\
            \t\tfoo bar masquerade\n\t}\n}\nbogus\n";
        let (set, notes) = parse("t.nft", text);
        let lines: Vec<u32> = notes.list.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [4, 5, 6, 10], "{:?}", notes.messages());
        let r = &set.tables[0].chains[0].rules;
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].conds, [Cond::Unknown("foo bar".into())]);
        assert_eq!(priority(&["srcnat", "+", "10;"]), Some(110));
        assert_eq!(priority(&["-100;"]), Some(-100));
    }

    #[test]
    fn icmp_types_and_ct_status_read_as_their_own_fields() {
        let text = "table ip t {\n\tchain c {\n\t\ttype nat hook postrouting priority srcnat;\n\
            \t\ticmp type echo-request ct status != seen-reply masquerade\n\t}\n}\n";
        let (set, notes) = parse("t.nft", text);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        // iptables-nft's --set-xmark 0x4000/0x0 as nft lists it; a bit cleared
        let set_mark =
            |t: &str| parse("m.nft", &format!("table ip t {{\n\tchain c {{\n\t\t{t}\n\t}}\n}}\n")).0;
        let action = |t: &str| set_mark(t).tables[0].chains[0].rules[0].action.clone();
        assert_eq!(action("meta mark set mark xor 0x4000"), Action::SetMark { value: 0x4000, mask: 0 });
        assert_eq!(action("meta mark set mark and 0xffffbfff"), Action::SetMark { value: 0, mask: 0x4000 });
        assert_eq!(action("meta mark set mark or 0x4000"), Action::SetMark { value: 0x4000, mask: 0x4000 });
        assert_eq!(
            set.tables[0].chains[0].rules[0].conds,
            [
                Cond::Is { field: Field::Proto, neg: false, any: vec![Value::Proto(1)] },
                Cond::Is { field: Field::IcmpType, neg: false, any: vec![Value::Icmp(Some(8), None)] },
                Cond::Is { field: Field::CtStatus, neg: true, any: vec![Value::Word("seen-reply".into())] },
            ]
        );
    }
}
