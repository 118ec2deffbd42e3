//! `nft -j list ruleset` (libnftables JSON, schema version 1) → the same
//! [`Ruleset`] the text reader ([`super::nft`]) gives: tables, nat base chains
//! with hook and priority, the chains they jump to, named sets and maps
//! resolved into the rules that use them, anonymous sets, verdict maps,
//! `dnat to … map`, `numgen random`, `meta mark set`. A rule's `line` is its
//! place in the `nftables` array, counted from 1 (`jq '.nftables[LINE-1]'`
//! shows it; the file is one line), and its `text` the rule as `nft -a list
//! ruleset` prints it, ending `# handle N`. A match this version cannot read
//! becomes a condition "not evaluated" (its JSON, shortened), a statement it
//! cannot read an action "not evaluated": never dropped, never guessed. An
//! element not read is noted by its place in the array (the note's line is 0:
//! the file has one line).
//!
//! Bounded: the array is read one element at a time (the whole document is
//! never held), serde_json refuses nesting deeper than 128, the walks of an
//! element below are bounded by that depth, and every text made is at most
//! [`text::MAX_LINE`] bytes.

use super::model::*;
use super::text::{self, Notes};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value as J;
use std::collections::HashMap;
use std::fmt;

/// Bytes of a condition or statement quoted as JSON (the rest is `…`).
const MAX_QUOTE: usize = 200;

/// What the reader keeps between elements.
struct Reader {
    set: Ruleset,
    notes: Notes,
    /// (family, table name) → index in `set.tables`.
    tables: HashMap<(String, String), usize>,
    /// (family, table, set or map name) → its elements, as read.
    named: HashMap<(String, String, String), Vec<J>>,
    /// Base chains not of type nat: (table index, chain).
    other_bases: Vec<(usize, String)>,
    /// Elements read so far (the next one's place is this + 1).
    index: u32,
    /// Whether a `nftables` array was seen.
    seen: bool,
    /// Rules holding an iptables-nft extension (`xt`) other than a comment.
    xt: u32,
}

/// Parses `nft -j list ruleset` output.
pub fn parse(file: &str, input: &str) -> (Ruleset, Notes) {
    let mut r = Reader {
        set: Ruleset { file: file.to_string(), format: "nft-json", ..Ruleset::default() },
        notes: Notes::new(file),
        tables: HashMap::new(),
        named: HashMap::new(),
        other_bases: Vec::new(),
        index: 0,
        seen: false,
        xt: 0,
    };
    let mut de = serde_json::Deserializer::from_str(input);
    let read = DeserializeSeed::deserialize(Top(&mut r), &mut de).and_then(|()| de.end());
    if let Err(e) = read {
        let at = if r.index > 0 { format!(" after element {}", r.index) } else { String::new() };
        r.notes.line(0, format!("not nft JSON{at} (line {} column {}): {e}", e.line(), e.column()));
    }
    if r.xt > 0 {
        r.notes.line(
            0,
            format!(
                "{} rules hold iptables-nft extensions (`xt`) whose arguments `nft -j` does not show: those \
                 matches and targets are not evaluated (`iptables-save` and `nft list ruleset` text show them)",
                r.xt
            ),
        );
    }
    if !r.seen && r.notes.list.is_empty() {
        r.notes.line(0, "no `nftables` array: no rule read");
    }
    let mut set = r.set;
    set.mark_set_elsewhere = super::nft::mark_outside_nat(&set, &r.other_bases);
    (set, r.notes)
}

/// The document: `{"nftables": [ … ]}`, other keys ignored.
struct Top<'a>(&'a mut Reader);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with an `nftables` array")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "nftables" {
                self.0.seen = true;
                map.next_value_seed(Items(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The array, one element at a time.
struct Items<'a>(&'a mut Reader);

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of nft objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<J>()? {
            self.0.index = self.0.index.saturating_add(1);
            self.0.element(&v);
        }
        Ok(())
    }
}

/// The only key of an object (`{"rule": {…}}` → ("rule", {…})).
fn only(v: &J) -> Option<(&str, &J)> {
    let o = v.as_object()?;
    let mut it = o.iter();
    let (k, x) = it.next()?;
    it.next().is_none().then_some((k.as_str(), x))
}

fn str_of<'v>(v: &'v J, key: &str) -> Option<&'v str> {
    v.get(key)?.as_str()
}

impl Reader {
    fn note(&mut self, what: &str, why: impl fmt::Display) {
        let n = self.index;
        self.notes.line(0, format!("element {n} ({what}): {why}; element not used"));
    }

    fn element(&mut self, v: &J) {
        let Some((kind, body)) = only(v) else {
            self.note("not one object", "not `{\"KIND\": {…}}`");
            return;
        };
        let (fam, table) = (str_of(body, "family").unwrap_or(""), str_of(body, "table").unwrap_or(""));
        let key = |name: &str| (fam.to_string(), table.to_string(), name.to_string());
        match kind {
            "metainfo" => {
                if let Some(s) = body.get("json_schema_version").and_then(J::as_u64).filter(|s| *s != 1) {
                    self.notes.line(0, format!("json_schema_version {s}: read as version 1"));
                }
            }
            "table" => {
                let (Some(fam), Some(name)) = (str_of(body, "family"), str_of(body, "name")) else {
                    self.note("a table", "no family or name");
                    return;
                };
                let family = match fam {
                    "ip" => Family::V4,
                    "ip6" => Family::V6,
                    "inet" => Family::Inet,
                    _ => {
                        self.notes.line(
                            0,
                            format!(
                                "element {}: table family {fam} holds no IP nat rules: skipped",
                                self.index
                            ),
                        );
                        return;
                    }
                };
                let k = (fam.to_string(), name.to_string());
                if self.tables.contains_key(&k) {
                    self.note("a table", format!("table {fam} {name} listed twice"));
                    return;
                }
                self.tables.insert(k, self.set.tables.len());
                self.set.tables.push(Table::new(&self.set.file.clone(), format!("{fam} {name}"), family));
            }
            "set" | "map" => {
                let Some(name) = str_of(body, "name") else {
                    self.note(kind, "no name");
                    return;
                };
                let elems = match body.get("elem") {
                    None => Vec::new(),
                    Some(J::Array(a)) => a.clone(),
                    Some(_) => {
                        self.note(kind, format!("{name}: `elem` is not an array"));
                        return;
                    }
                };
                self.named.insert(key(name), elems);
            }
            "chain" => self.chain(fam, table, body),
            "rule" => self.rule(fam, table, body),
            // objects that hold no nat rule
            "flowtable" | "counter" | "quota" | "ct helper" | "ct timeout" | "ct expectation" | "limit"
            | "secmark" | "synproxy" | "element" => {}
            other => self.note(other, "not a table, chain, rule, set or map"),
        }
    }

    fn table_of(&self, fam: &str, table: &str) -> Option<usize> {
        self.tables.get(&(fam.to_string(), table.to_string())).copied()
    }

    fn chain(&mut self, fam: &str, table: &str, body: &J) {
        let Some(name) = str_of(body, "name") else {
            self.note("a chain", "no name");
            return;
        };
        let Some(t) = self.table_of(fam, table) else {
            if matches!(fam, "ip" | "ip6" | "inet") {
                self.note("a chain", format!("{name}: table {fam} {table} not listed before it"));
            }
            return;
        };
        let mut chain = Chain::named(name);
        if let Some(kind) = str_of(body, "type") {
            let hook = match str_of(body, "hook") {
                Some("prerouting") => Some(Hook::Prerouting),
                Some("postrouting") => Some(Hook::Postrouting),
                Some("output") => Some(Hook::Output),
                Some("input") => Some(Hook::Input),
                Some("forward") => Some(Hook::Forward),
                _ => None,
            };
            let prio = body.get("prio").and_then(J::as_i64).and_then(|p| i32::try_from(p).ok());
            if str_of(body, "policy") == Some("drop") {
                chain.policy_drop = Some(self.index);
            }
            match (prio, kind) {
                (Some(p), "nat") => chain.hook = hook.filter(|h| *h != Hook::Forward).map(|h| (h, p)),
                (Some(p), "filter") => {
                    chain.filter = hook
                        .filter(|h| matches!(h, Hook::Input | Hook::Forward | Hook::Output))
                        .map(|h| (h, p));
                    self.other_bases.push((t, name.to_string()));
                }
                (Some(_), _) => self.other_bases.push((t, name.to_string())),
                (None, _) => {
                    self.note("a chain", format!("{name}: its priority not read: the chain is not walked"))
                }
            }
        }
        if !self.set.tables[t].add(chain) {
            self.note("a chain", format!("chain {name} listed twice: the second not used"));
        }
    }

    fn rule(&mut self, fam: &str, table: &str, body: &J) {
        let chain = str_of(body, "chain").unwrap_or("");
        let Some(t) = self.table_of(fam, table) else {
            if matches!(fam, "ip" | "ip6" | "inet") {
                self.note("a rule", format!("table {fam} {table} not listed before it"));
            }
            return;
        };
        let Some(exprs) = body.get("expr").and_then(J::as_array) else {
            self.note("a rule", format!("of chain {chain}: no `expr` array"));
            return;
        };
        let (conds, action) = self.statements(fam, table, exprs);
        let opaque = |e: &J| {
            e.get("xt")
                .is_some_and(|x| !matches!(str_of(x, "name"), Some("comment" | "MASQUERADE" | "REDIRECT")))
        };
        // a filter or mangle base chain is never walked: only a mark it may set matters
        let walked = !self.other_bases.iter().any(|(x, name)| *x == t && name == chain);
        let marks =
            |e: &J| e.get("xt").is_some_and(|x| matches!(str_of(x, "name"), Some("MARK" | "CONNMARK")));
        if exprs.iter().any(|e| if walked { opaque(e) } else { marks(e) }) {
            self.xt += 1;
        }
        let mut text = exprs.iter().map(show).collect::<Vec<_>>().join(" ");
        if let Some(c) = str_of(body, "comment") {
            text.push_str(&format!(" comment {}", quote(c)));
        }
        if let Some(h) = body.get("handle").and_then(J::as_u64) {
            text.push_str(&format!(" # handle {h}"));
        }
        let text = cap(text.trim().to_string(), text::MAX_LINE);
        let line = self.index;
        match self.set.tables[t].chain_mut(chain) {
            Some(c) => c.rules.push(Rule { line, text, conds, action }),
            None => self.note("a rule", format!("chain {chain} not listed before it")),
        }
    }

    /// The conditions and action of a rule's `expr`.
    fn statements(&self, fam: &str, table: &str, exprs: &[J]) -> (Vec<Cond>, Action) {
        let mut conds = Vec::new();
        let mut action = Action::Continue;
        for e in exprs {
            let Some((k, b)) = only(e) else {
                conds.push(Cond::Unknown(quote_json(e)));
                continue;
            };
            match k {
                "counter" | "log" => {}
                "match" => match self.matched(fam, table, b) {
                    Some(c) => conds.extend(c),
                    None => conds.push(Cond::Unknown(unknown(e))),
                },
                "accept" => action = Action::Accept,
                "drop" => action = Action::Drop,
                "reject" => action = Action::Reject,
                "return" => action = Action::Return,
                "continue" => action = Action::Continue,
                "jump" | "goto" => {
                    action = match b.get("target").and_then(J::as_str) {
                        Some(c) if k == "jump" => Action::Jump(c.to_string()),
                        Some(c) => Action::Goto(c.to_string()),
                        None => Action::Unknown(show(e)),
                    }
                }
                "masquerade" | "redirect" => {
                    action = match (nat_ports(b), random(b)) {
                        (Some(ports), Some(random)) if k == "masquerade" => {
                            Action::Masquerade { ports, random }
                        }
                        (Some(ports), Some(_)) => Action::Redirect { ports },
                        _ => Action::Unknown(show(e)),
                    }
                }
                "snat" | "dnat" | "vmap" => {
                    let read = if k == "vmap" {
                        self.vmap(fam, table, b)
                    } else {
                        self.nat(fam, table, k == "dnat", b)
                    };
                    action = match read {
                        // a `tcp dport` key: nft matches the protocol first
                        Some((a, protos)) => {
                            conds.extend(protos.into_iter().map(proto));
                            a
                        }
                        None => Action::Unknown(show(e)),
                    }
                }
                "mangle" => action = set_mark(b).unwrap_or(Action::Unknown(show(e))),
                // iptables-nft's extensions: nft -j names them without their arguments
                "xt" => match (str_of(b, "type"), str_of(b, "name")) {
                    // a comment never decides
                    (Some("match"), Some("comment")) => {}
                    // the interface's address, whatever its port options (not checked)
                    (Some("target"), Some("MASQUERADE")) => {
                        action = Action::Masquerade { ports: None, random: false }
                    }
                    // the host's own address, whatever port it sends to (not checked)
                    (Some("target"), Some("REDIRECT")) => action = Action::Redirect { ports: None },
                    (Some("target"), _) => {
                        action = Action::Unknown(format!("{} (arguments not shown)", show(e)))
                    }
                    _ => conds.push(Cond::Unknown(format!("{} (arguments not shown)", unknown(e)))),
                },
                // a match or statement not known: not evaluated, as the text reader does
                _ => conds.push(Cond::Unknown(unknown(e))),
            }
        }
        (conds, action)
    }

    /// A `match` as conditions; None when not read (then not evaluated).
    fn matched(&self, fam: &str, table: &str, m: &J) -> Option<Vec<Cond>> {
        let (left, right) = (m.get("left")?, m.get("right")?);
        let (fields, mask, protos) = selector(left)?;
        let mut out: Vec<Cond> = protos.into_iter().map(proto).collect();
        let op = m.get("op")?.as_str()?;
        let neg = match op {
            "==" | "in" => false,
            "!=" => true,
            "<" | "<=" | ">" | ">=" => {
                // a port compared: a range
                let ([f @ (Field::Sport | Field::Dport)], Some(n)) = (fields.as_slice(), right.as_u64())
                else {
                    return None;
                };
                let n = u16::try_from(n).ok()?;
                let (a, b) = match op {
                    "<" => (0, n.checked_sub(1)?),
                    "<=" => (0, n),
                    ">" => (n.checked_add(1)?, u16::MAX),
                    _ => (n, u16::MAX),
                };
                out.push(Cond::Is { field: *f, neg: false, any: vec![Value::Ports(a, b)] });
                return Some(out);
            }
            _ => return None,
        };
        let elements: Vec<Vec<Value>> = match right {
            J::String(s) if s.starts_with('@') => {
                let els = self.named.get(&(fam.to_string(), table.to_string(), s[1..].to_string()))?;
                els.iter().map(|e| element(&fields, e, mask)).collect::<Option<_>>()?
            }
            J::Object(o) if o.contains_key("set") => {
                let els = right.get("set")?.as_array()?;
                els.iter().map(|e| element(&fields, e, mask)).collect::<Option<_>>()?
            }
            // flags listed: `ct state established,related`
            J::Array(a) if fields.len() == 1 => {
                a.iter().map(|e| typed(fields[0], e, mask).map(|v| vec![v])).collect::<Option<_>>()?
            }
            _ => vec![element(&fields, right, mask)?],
        };
        out.push(if fields.len() == 1 {
            Cond::Is { field: fields[0], neg, any: elements.into_iter().flatten().collect() }
        } else {
            Cond::InSet { fields, neg, elements }
        });
        Some(out)
    }

    /// `snat`/`dnat`: to an address and port, or (dnat) by a map.
    fn nat(&self, fam: &str, table: &str, dnat: bool, b: &J) -> Option<(Action, Vec<u8>)> {
        let random = random(b)?;
        if let Some(map) = b.get("addr").and_then(|a| a.get("map")) {
            if !dnat || b.get("port").is_some() {
                return None;
            }
            let (key, chance, protos) = map_key(map.get("key")?)?;
            let entries = self.entries(fam, table, map.get("data")?)?;
            let entries = (entries.iter())
                .map(|(k, v)| Some((map_keys(&key, k)?, nat_to(Some(v), None)?)))
                .collect::<Option<Vec<_>>>()?;
            return Some((Action::DnatMap { key, chance, entries }, protos));
        }
        let to = nat_to(b.get("addr"), b.get("port"))?;
        to.addr?;
        Some((if dnat { Action::Dnat { to, random } } else { Action::Snat { to, random } }, Vec::new()))
    }

    /// `KEY vmap { k : verdict, … }` or `vmap @map`.
    fn vmap(&self, fam: &str, table: &str, b: &J) -> Option<(Action, Vec<u8>)> {
        let (key, chance, protos) = map_key(b.get("key")?)?;
        let entries = self.entries(fam, table, b.get("data")?)?;
        let entries = (entries.iter())
            .map(|(k, v)| Some((map_keys(&key, k)?, verdict(v)?)))
            .collect::<Option<Vec<_>>>()?;
        Some((Action::Vmap { key, chance, entries }, protos))
    }

    /// A map's `[key, value]` pairs: anonymous (`{"set": […]}`) or named (`"@m"`).
    fn entries<'v>(&'v self, fam: &str, table: &str, data: &'v J) -> Option<Vec<(&'v J, &'v J)>> {
        let list = match data {
            J::String(s) if s.starts_with('@') => {
                self.named.get(&(fam.to_string(), table.to_string(), s[1..].to_string()))?
            }
            _ => data.get("set")?.as_array()?,
        };
        list.iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([k, v]) => Some((unwrap_elem(k), v)),
                _ => None,
            })
            .collect()
    }
}

/// `{"elem": {"val": x, "timeout": …}}` → x.
fn unwrap_elem(v: &J) -> &J {
    match v.get("elem").and_then(|e| e.get("val")) {
        Some(x) => x,
        None => v,
    }
}

/// The fields a match's left side reads, the mark mask, and the protocols a
/// `tcp`/`udp` field implies.
fn selector(v: &J) -> Option<(Vec<Field>, u32, Vec<u8>)> {
    let (k, b) = only(v)?;
    match k {
        "concat" => {
            let mut fields = Vec::new();
            let mut protos = Vec::new();
            for part in b.as_array()? {
                let (f, mask, p) = selector(part)?;
                if mask != u32::MAX || f.len() != 1 {
                    return None;
                }
                fields.extend(f);
                protos.extend(p);
            }
            Some((fields, u32::MAX, protos))
        }
        "&" => match b.as_array()?.as_slice() {
            [inner, m] if selector(inner)?.0 == [Field::Mark] => {
                Some((vec![Field::Mark], u32::try_from(m.as_u64()?).ok()?, Vec::new()))
            }
            _ => None,
        },
        _ => {
            let (f, p) = field(k, b)?;
            Some((vec![f], u32::MAX, p.into_iter().collect()))
        }
    }
}

/// One packet field (`{"payload": {"protocol": "ip", "field": "daddr"}}` → Daddr).
fn field(kind: &str, b: &J) -> Option<(Field, Option<u8>)> {
    Some(match kind {
        "payload" => match (str_of(b, "protocol")?, str_of(b, "field")?) {
            ("ip" | "ip6", "saddr") => (Field::Saddr, None),
            ("ip" | "ip6", "daddr") => (Field::Daddr, None),
            ("ip", "protocol") | ("ip6", "nexthdr") => (Field::Proto, None),
            ("tcp", "sport") => (Field::Sport, Some(6)),
            ("tcp", "dport") => (Field::Dport, Some(6)),
            ("udp", "sport") => (Field::Sport, Some(17)),
            ("udp", "dport") => (Field::Dport, Some(17)),
            ("th", "sport") => (Field::Sport, None),
            ("th", "dport") => (Field::Dport, None),
            ("icmp", "type") => (Field::IcmpType, Some(1)),
            ("icmpv6", "type") => (Field::Icmp6Type, Some(58)),
            _ => return None,
        },
        "meta" => match str_of(b, "key")? {
            "l4proto" => (Field::Proto, None),
            "iifname" | "iif" => (Field::Iif, None),
            "oifname" | "oif" => (Field::Oif, None),
            "mark" => (Field::Mark, None),
            _ => return None,
        },
        "ct" if b.get("dir").is_none() => match str_of(b, "key")? {
            "state" => (Field::CtState, None),
            "status" => (Field::CtStatus, None),
            _ => return None,
        },
        "fib" if str_of(b, "result")? == "type" => {
            let flags: Vec<&str> = match b.get("flags")? {
                J::String(s) => vec![s.as_str()],
                J::Array(a) => a.iter().map(J::as_str).collect::<Option<_>>()?,
                _ => return None,
            };
            match flags.as_slice() {
                ["daddr"] => (Field::DaddrType, None),
                ["saddr"] => (Field::SaddrType, None),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// One element of a set for `fields`: a value, or a concatenation of as many.
fn element(fields: &[Field], e: &J, mask: u32) -> Option<Vec<Value>> {
    let e = unwrap_elem(e);
    match (fields, e.get("concat")) {
        ([f], None) => Some(vec![typed(*f, e, mask)?]),
        (_, Some(parts)) => {
            let parts = parts.as_array()?;
            if parts.len() != fields.len() {
                return None;
            }
            parts.iter().zip(fields).map(|(p, f)| typed(*f, p, mask)).collect()
        }
        _ => None,
    }
}

/// A JSON value as a value of `f`.
fn typed(f: Field, v: &J, mask: u32) -> Option<Value> {
    let v = unwrap_elem(v);
    let addr = matches!(f, Field::Saddr | Field::Daddr);
    let port = matches!(f, Field::Sport | Field::Dport);
    match v {
        J::String(s) => match f {
            // `\*` is a literal star in nft JSON: not read
            Field::Iif | Field::Oif if s.contains('\\') || s.is_empty() => None,
            Field::Mark => Some(Value::Mark(super::ipt::number(s)?, mask)),
            _ if addr && !s.contains('/') && s.contains('-') => None,
            _ => super::nft::value(f, s),
        },
        J::Number(n) => {
            let n = n.as_u64()?;
            match f {
                _ if port => {
                    let p = u16::try_from(n).ok()?;
                    Some(Value::Ports(p, p))
                }
                Field::Proto => Some(Value::Proto(u8::try_from(n).ok()?)),
                Field::Mark => Some(Value::Mark(u32::try_from(n).ok()?, mask)),
                Field::IcmpType | Field::Icmp6Type => Some(Value::Icmp(Some(u8::try_from(n).ok()?), None)),
                _ => None,
            }
        }
        J::Object(_) => {
            if let Some(p) = v.get("prefix").filter(|_| addr) {
                let c = Cidr::parse(&format!("{}/{}", str_of(p, "addr")?, p.get("len")?.as_u64()?))?;
                return Some(Value::Prefix(c));
            }
            match v.get("range")?.as_array()?.as_slice() {
                [a, b] if addr => Some(Value::Range(AddrRange {
                    first: a.as_str()?.parse().ok()?,
                    last: b.as_str()?.parse().ok()?,
                })),
                [a, b] if port => {
                    let (a, b) = (u16::try_from(a.as_u64()?).ok()?, u16::try_from(b.as_u64()?).ok()?);
                    (a <= b).then_some(Value::Ports(a, b))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A map's key: `numgen random mod N` (chance) or fields (and the
/// protocols a `tcp`/`udp` field implies).
fn map_key(k: &J) -> Option<(Vec<Field>, bool, Vec<u8>)> {
    if let Some(n) = k.get("numgen") {
        return (str_of(n, "mode")? == "random").then(|| (Vec::new(), true, Vec::new()));
    }
    let (fields, mask, protos) = selector(k)?;
    (mask == u32::MAX).then_some((fields, false, protos))
}

/// The condition a `tcp`/`udp` field implies.
fn proto(p: u8) -> Cond {
    Cond::Is { field: Field::Proto, neg: false, any: vec![Value::Proto(p)] }
}

/// A map entry's key typed by `key` (numbers for `numgen`, as the text reader keeps them).
fn map_keys(key: &[Field], k: &J) -> Option<Vec<Value>> {
    if key.is_empty() {
        return Some(vec![Value::Word(k.as_u64()?.to_string())]);
    }
    element(key, k, u32::MAX)
}

/// A verdict: `{"goto": {"target": "c"}}`, `{"accept": null}`, …
fn verdict(v: &J) -> Option<Action> {
    let (k, b) = only(v)?;
    Some(match k {
        "accept" => Action::Accept,
        "drop" => Action::Drop,
        "return" => Action::Return,
        "continue" => Action::Continue,
        "jump" => Action::Jump(b.get("target")?.as_str()?.to_string()),
        "goto" => Action::Goto(b.get("target")?.as_str()?.to_string()),
        _ => return None,
    })
}

/// A port or port range (`8080`, `{"range": [a, b]}`).
fn ports(v: &J) -> Option<(u16, u16)> {
    if let Some(n) = v.as_u64() {
        let p = u16::try_from(n).ok()?;
        return Some((p, p));
    }
    match v.get("range")?.as_array()?.as_slice() {
        [a, b] => {
            let (a, b) = (u16::try_from(a.as_u64()?).ok()?, u16::try_from(b.as_u64()?).ok()?);
            (a <= b).then_some((a, b))
        }
        _ => None,
    }
}

/// `masquerade`/`redirect`'s port: Some(None) without one; None when not read.
fn nat_ports(b: &J) -> Option<Option<(u16, u16)>> {
    match b.get("port") {
        None => Some(None),
        Some(p) => Some(Some(ports(p)?)),
    }
}

/// Whether a NAT statement's flags ask for a random port; None when not read.
fn random(b: &J) -> Option<bool> {
    let flags: Vec<&str> = match b.get("flags") {
        None => Vec::new(),
        Some(J::String(s)) => vec![s.as_str()],
        Some(J::Array(a)) => a.iter().map(J::as_str).collect::<Option<_>>()?,
        Some(_) => return None,
    };
    flags
        .iter()
        .all(|f| matches!(*f, "random" | "fully-random" | "persistent"))
        .then(|| flags.iter().any(|f| f.contains("random")))
}

/// A NAT target: address (`"a"`, `{"range": [a, b]}`, `{"concat": [a, p]}`) and port.
fn nat_to(addr: Option<&J>, port: Option<&J>) -> Option<NatTo> {
    let mut to = NatTo { addr: None, ports: None };
    match addr {
        None => {}
        Some(J::String(s)) => {
            let a = s.parse().ok()?;
            to.addr = Some(AddrRange { first: a, last: a });
        }
        Some(a) => {
            if let Some(parts) = a.get("concat") {
                let [x, p] = parts.as_array()?.as_slice() else { return None };
                let inner = nat_to(Some(x), None)?;
                to.addr = inner.addr;
                to.ports = Some(ports(p)?);
            } else {
                let [f, l] = a.get("range")?.as_array()?.as_slice() else { return None };
                to.addr =
                    Some(AddrRange { first: f.as_str()?.parse().ok()?, last: l.as_str()?.parse().ok()? });
            }
        }
    }
    if let Some(p) = port {
        if to.ports.is_some() {
            return None;
        }
        to.ports = Some(ports(p)?);
    }
    Some(to)
}

/// `meta mark set V` and `meta mark set meta mark | V`.
fn set_mark(b: &J) -> Option<Action> {
    if field(only(b.get("key")?)?.0, only(b.get("key")?)?.1)?.0 != Field::Mark {
        return None;
    }
    let v = b.get("value")?;
    if let Some(n) = v.as_u64() {
        return Some(Action::SetMark { value: u32::try_from(n).ok()?, mask: u32::MAX });
    }
    let (op, args) = only(v)?;
    if !matches!(op, "|" | "^" | "&") {
        return None;
    }
    match args.as_array()?.as_slice() {
        [m, n] if selector(m)?.0 == [Field::Mark] => {
            Some(super::nft::mark_op(op, u32::try_from(n.as_u64()?).ok()?))
        }
        _ => None,
    }
}

/// `s` shortened to at most `max` bytes (on a character boundary), `…` when cut.
fn cap(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// A match or statement not evaluated, as a condition names it.
fn unknown(e: &J) -> String {
    cap(show(e), MAX_QUOTE)
}

/// A JSON value as compact JSON, shortened.
fn quote_json(v: &J) -> String {
    cap(v.to_string(), MAX_QUOTE)
}

/// A string as nft quotes it.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// An expression or statement in nft's own words, as `nft list ruleset`
/// prints it (numbers decimal); what it does not know as compact JSON.
fn show(v: &J) -> String {
    let s = match v {
        J::Null => String::new(),
        J::Bool(b) => b.to_string(),
        J::Number(n) => n.to_string(),
        J::String(s) if s.is_empty() || s.contains(|c: char| c.is_whitespace() || c == '"' || c == ';') => {
            quote(s)
        }
        J::String(s) => s.clone(),
        J::Array(a) => a.iter().map(show).collect::<Vec<_>>().join(","),
        J::Object(_) => match only(v) {
            Some((k, b)) => show_kind(k, b).unwrap_or_else(|| quote_json(v)),
            None => quote_json(v),
        },
    };
    cap(s, text::MAX_LINE)
}

fn show_kind(k: &str, b: &J) -> Option<String> {
    Some(match k {
        "match" => {
            let (l, r) = (show(b.get("left")?), b.get("right")?);
            let r = match (
                b.get("left").and_then(only).map(|x| x.0),
                b.get("left").and_then(|l| l.get("meta")),
            ) {
                (Some("meta"), Some(m)) if matches!(str_of(m, "key"), Some("iifname" | "oifname")) => match r
                {
                    J::String(s) => quote(s),
                    _ => show(r),
                },
                _ => show(r),
            };
            match b.get("op")?.as_str()? {
                "==" | "in" => format!("{l} {r}"),
                op => format!("{l} {op} {r}"),
            }
        }
        "payload" => match (str_of(b, "protocol"), str_of(b, "field")) {
            (Some(p), Some(f)) => format!("{p} {f}"),
            _ => return None,
        },
        "meta" => match str_of(b, "key")? {
            k @ ("iifname" | "oifname" | "iif" | "oif") => k.to_string(),
            k => format!("meta {k}"),
        },
        "ct" => match str_of(b, "dir") {
            Some(d) => format!("ct {d} {}", str_of(b, "key")?),
            None => format!("ct {}", str_of(b, "key")?),
        },
        "fib" => {
            let flags = match b.get("flags")? {
                J::String(s) => s.clone(),
                J::Array(a) => a.iter().map(|f| f.as_str().unwrap_or("?")).collect::<Vec<_>>().join(" . "),
                _ => return None,
            };
            format!("fib {flags} {}", str_of(b, "result")?)
        }
        "prefix" => format!("{}/{}", str_of(b, "addr")?, b.get("len")?),
        "range" => match b.as_array()?.as_slice() {
            [a, z] => format!("{}-{}", show(a), show(z)),
            _ => return None,
        },
        "set" => {
            let items: Vec<String> = (b.as_array()?.iter())
                .map(|e| match e.as_array().map(Vec::as_slice) {
                    Some([k, v]) => format!("{} : {}", show(k), show(v)),
                    _ => show(e),
                })
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        "elem" => show(b.get("val")?),
        "concat" => b.as_array()?.iter().map(show).collect::<Vec<_>>().join(" . "),
        "map" => format!("{} map {}", show(b.get("key")?), show(b.get("data")?)),
        "vmap" => format!("{} vmap {}", show(b.get("key")?), show(b.get("data")?)),
        "numgen" => {
            let off = b.get("offset").and_then(J::as_u64).filter(|o| *o != 0);
            let off = off.map_or(String::new(), |o| format!(" offset {o}"));
            format!("numgen {} mod {}{off}", str_of(b, "mode")?, b.get("mod")?)
        }
        "&" | "|" | "^" | "<<" | ">>" => match b.as_array()?.as_slice() {
            [x, y] => format!("{} {k} {}", show(x), show(y)),
            _ => return None,
        },
        "counter" => match (b.get("packets"), b.get("bytes")) {
            (Some(p), Some(n)) => format!("counter packets {p} bytes {n}"),
            _ => "counter".into(),
        },
        "log" => match b.get("prefix").and_then(J::as_str) {
            Some(p) => format!("log prefix {}", quote(p)),
            None => "log".into(),
        },
        "accept" | "drop" | "return" | "continue" | "reject" => k.to_string(),
        "jump" | "goto" => format!("{k} {}", str_of(b, "target")?),
        "masquerade" | "redirect" | "snat" | "dnat" => {
            let mut out = k.to_string();
            if let Some(f) = str_of(b, "family") {
                out.push_str(&format!(" {f}"));
            }
            let addr = b.get("addr").map(show);
            let port = b.get("port").map(show);
            match (addr, port) {
                (Some(a), Some(p)) => out.push_str(&format!(" to {a}:{p}")),
                (Some(a), None) => out.push_str(&format!(" to {a}")),
                (None, Some(p)) => out.push_str(&format!(" to :{p}")),
                (None, None) => {}
            }
            match b.get("flags") {
                Some(J::String(f)) => out.push_str(&format!(" {f}")),
                Some(a @ J::Array(_)) => out.push_str(&format!(" {}", show(a))),
                _ => {}
            }
            out
        }
        "mangle" => format!("{} set {}", show(b.get("key")?), show(b.get("value")?)),
        "xt" => format!("xt {} {}", str_of(b, "type").unwrap_or("?"), str_of(b, "name").unwrap_or("?")),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::nft::tests::obs;
    use super::*;
    use crate::why::eval::{evaluate, Found, Observed};

    const NFT: &str = include_str!("testdata/nat.nft");
    /// `nft -j list ruleset` of a namespace loaded with `nft -f nat.nft` (nft 1.0.6).
    const JSON: &str = include_str!("testdata/nat.json");

    /// A rule's action with its map entries in one order (nft lists a
    /// named map's elements in its own order).
    fn sorted(a: &Action) -> String {
        match a {
            Action::Vmap { key, chance, entries } => {
                let mut e: Vec<String> = entries.iter().map(|x| format!("{x:?}")).collect();
                e.sort();
                format!("vmap {key:?} {chance} {e:?}")
            }
            Action::DnatMap { key, chance, entries } => {
                let mut e: Vec<String> = entries.iter().map(|x| format!("{x:?}")).collect();
                e.sort();
                format!("dnatmap {key:?} {chance} {e:?}")
            }
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn the_json_of_a_ruleset_reads_into_the_model_the_text_gives() {
        let (text, tn) = super::super::nft::parse("nat.nft", NFT);
        let (json, jn) = parse("nat.json", JSON);
        assert_eq!((tn.messages(), jn.messages()), (vec![], vec![]));
        assert_eq!(json.format, "nft-json");
        let names = |s: &Ruleset| s.tables.iter().map(|t| (t.name.clone(), t.family)).collect::<Vec<_>>();
        assert_eq!(names(&json), names(&text));
        for (t, j) in text.tables.iter().zip(&json.tables) {
            assert_eq!(t.chains.len(), j.chains.len(), "{}", t.name);
            for tc in &t.chains {
                let jc = j.chain(&tc.name).unwrap();
                assert_eq!(jc.hook, tc.hook, "{}", tc.name);
                assert_eq!(jc.rules.len(), tc.rules.len(), "{}", tc.name);
                for (tr, jr) in tc.rules.iter().zip(&jc.rules) {
                    assert_eq!(jr.conds, tr.conds, "{}: {} / {}", tc.name, tr.text, jr.text);
                    assert_eq!(sorted(&jr.action), sorted(&tr.action), "{}: {}", tc.name, tr.text);
                    // the line is the element's place in the array, the text nft's own
                    let v: J = serde_json::from_str(JSON).unwrap();
                    let el = &v["nftables"][jr.line as usize - 1]["rule"];
                    assert_eq!(el["chain"], tc.name.as_str());
                    let handle = el["handle"].as_u64().unwrap();
                    assert!(jr.text.ends_with(&format!(" # handle {handle}")), "{}", jr.text);
                }
            }
        }
        assert_eq!(json.mark_set_elsewhere, text.mark_set_elsewhere);
        let masq = json.tables.iter().find(|t| t.name == "ip masq").unwrap();
        assert_eq!(
            masq.chains[0].rules[0].text,
            "oifname \"be*\" ip daddr != @nomasq counter packets 12 bytes 720 masquerade random # handle 3"
        );
    }

    /// (table, chain, place in the chain) of the rule found, or what was found instead.
    fn place(set: &Ruleset, f: &Found) -> String {
        match f {
            Found::Rule { rule, decided } => {
                let t = set.tables.iter().find(|t| t.name == rule.table).unwrap();
                let k = t.chain(&rule.chain).unwrap().rules.iter().position(|r| r.line == rule.line).unwrap();
                // the forks name the rule's line: its place in the file, not compared
                let decided: Vec<&str> = decided.iter().map(|d| d.split(", line").next().unwrap()).collect();
                format!("{} {} #{k} {decided:?}", rule.table, rule.chain)
            }
            Found::NoRule { deciding } => format!("no rule, {} deciding", deciding.len()),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn json_and_text_name_the_same_rule_for_every_packet() {
        let text = super::super::nft::parse("nat.nft", NFT).0;
        let json = parse("nat.json", JSON).0;
        let cases = [
            (
                ["198.18.90.42", "40001", "198.19.200.10", "80"],
                ["198.19.3.17", "51234", "198.19.96.11", "8080"],
                "be0",
            ),
            (
                ["198.18.90.42", "40001", "198.19.200.10", "80"],
                ["198.19.3.17", "51234", "198.19.96.10", "8080"],
                "be0",
            ),
            (
                ["198.18.90.42", "40002", "203.0.113.9", "443"],
                ["198.19.3.17", "40002", "203.0.113.9", "443"],
                "be0",
            ),
            (
                ["198.18.90.42", "40003", "10.1.2.3", "443"],
                ["198.18.90.42", "40003", "10.1.2.3", "443"],
                "be0",
            ),
            (
                ["198.18.90.42", "40004", "198.19.200.20", "53"],
                ["198.18.90.42", "40004", "198.19.96.12", "5353"],
                "eth1",
            ),
            (
                ["198.18.90.42", "40005", "203.0.113.9", "443"],
                ["198.18.90.42", "40005", "203.0.113.9", "443"],
                "eth1",
            ),
        ];
        let mut rules = 0;
        for (b, a, oif) in cases {
            let o = obs(b, a, Some(oif));
            let (t, j) = (evaluate(&text, &o), evaluate(&json, &o));
            for (tf, jf) in [(&t.source, &j.source), (&t.destination, &j.destination)] {
                assert_eq!(place(&json, jf), place(&text, tf), "{b:?} -> {a:?}");
                rules += usize::from(matches!(jf, Found::Rule { .. }));
            }
        }
        assert_eq!(rules, 6, "two dnat + masquerade, one masquerade, one map dnat");
        // the deciding rule of the untranslated packet is quoted from the JSON
        let o = obs(
            ["198.18.90.42", "40003", "10.1.2.3", "443"],
            ["198.18.90.42", "40003", "10.1.2.3", "443"],
            Some("be0"),
        );
        let Found::NoRule { deciding } = evaluate(&json, &o).source else { panic!() };
        assert!(
            deciding.iter().any(|d| d.contains("ip daddr != @nomasq") && d.contains("(nat.json:26)")),
            "{deciding:?}"
        );
    }

    #[test]
    fn what_json_cannot_say_is_not_evaluated_and_broken_elements_are_named() {
        let doc = r#"{"nftables": [
            {"metainfo": {"json_schema_version": 1}},
            {"table": {"family": "ip", "name": "t", "handle": 1}},
            {"table": {"family": "bridge", "name": "b", "handle": 2}},
            {"chain": {"family": "ip", "table": "t", "name": "post", "handle": 1, "type": "nat", "hook": "postrouting", "prio": 100, "policy": "accept"}},
            {"rule": {"family": "ip", "table": "t", "chain": "post", "handle": 2, "expr": [
                {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "dscp"}}, "right": "cs1"}},
                {"match": {"op": "<", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": 1024}},
                {"limit": {"rate": 10, "per": "second"}},
                {"masquerade": {"port": {"range": [1024, 2048]}, "flags": ["random", "persistent"]}}]}},
            {"rule": {"family": "ip", "table": "t", "chain": "post", "handle": 3, "expr": [
                {"match": {"op": "==", "left": {"meta": {"key": "oifname"}}, "right": "be0"}},
                {"snat": {"addr": {"map": {"key": {"payload": {"protocol": "ip", "field": "saddr"}}, "data": "@m"}}}}]}},
            {"rule": {"family": "ip", "table": "t", "chain": "nope", "expr": []}},
            {"rule": {"family": "ip", "table": "t", "chain": "post"}},
            ["not", "an", "object"]
        ]}"#;
        let (set, notes) = parse("x.json", doc);
        let m = notes.messages();
        assert_eq!(m.len(), 4, "{m:?}");
        assert!(m[0].starts_with("x.json: element 3: table family bridge"), "{m:?}");
        assert!(
            m[1].contains("element 7 (a rule): chain nope not listed before it; element not used"),
            "{m:?}"
        );
        assert!(m[2].contains("element 8 (a rule): of chain post: no `expr` array"), "{m:?}");
        assert!(m[3].contains("element 9 (not one object)"), "{m:?}");
        let rules = &set.tables[0].chain("post").unwrap().rules;
        assert_eq!(rules[0].line, 5);
        assert_eq!(
            rules[0].conds,
            [
                Cond::Unknown("ip dscp cs1".into()),
                Cond::Is { field: Field::Proto, neg: false, any: vec![Value::Proto(6)] },
                Cond::Is { field: Field::Dport, neg: false, any: vec![Value::Ports(0, 1023)] },
                Cond::Unknown("{\"limit\":{\"per\":\"second\",\"rate\":10}}".into()),
            ]
        );
        assert_eq!(rules[0].action, Action::Masquerade { ports: Some((1024, 2048)), random: true });
        assert!(
            matches!(&rules[1].action, Action::Unknown(t) if t.starts_with("snat to ip saddr map @m")),
            "{:?}",
            rules[1].action
        );
        // not JSON, or not nft's: said once, nothing read
        let (set, notes) = parse("y.json", "{\"nftables\": [ {\"table\": ");
        assert!(set.tables.is_empty());
        assert!(
            notes.messages()[0].starts_with("y.json: not nft JSON (line 1 column"),
            "{:?}",
            notes.messages()
        );
        let (_, notes) = parse("z.json", "{\"other\": 1}");
        assert_eq!(notes.messages(), ["z.json: no `nftables` array: no rule read"]);
        let deep = format!("{{\"nftables\": [{}{}]}}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse("d.json", &deep).1.messages()[0].contains("recursion limit"), "nesting is bounded");
    }

    /// `nft -j list ruleset` of a namespace where `iptables-restore` (nft
    /// backend, 1.8.9) loaded kube-nat.rules: comments, addrtype, statistic,
    /// tcp, MARK, DNAT and MASQUERADE are `xt` extensions without arguments.
    const XT: &str = include_str!("testdata/kube-nat-xt.json");

    #[test]
    fn an_extension_in_a_filter_base_chain_is_no_warning_but_a_mark_set_there_is() {
        let dump = |target: &str| {
            format!(
                r#"{{"nftables": [{{"table": {{"family": "ip", "name": "filter", "handle": 1}}}},
                {{"chain": {{"family": "ip", "table": "filter", "name": "FORWARD", "handle": 1, "type": "filter", "hook": "forward", "prio": 0, "policy": "accept"}}}},
                {{"rule": {{"family": "ip", "table": "filter", "chain": "FORWARD", "handle": 2, "expr": [{{"xt": {{"type": "{target}"}}}}]}}}},
                {{"table": {{"family": "ip", "name": "nat", "handle": 2}}}},
                {{"chain": {{"family": "ip", "table": "nat", "name": "POSTROUTING", "handle": 1, "type": "nat", "hook": "postrouting", "prio": 100, "policy": "accept"}}}},
                {{"rule": {{"family": "ip", "table": "nat", "chain": "POSTROUTING", "handle": 3, "expr": [{{"xt": {{"type": "match", "name": "addrtype"}}}}, {{"masquerade": null}}]}}}}]}}"#
            )
        };
        let warned = |target: &str| parse("n.json", &dump(target)).1.messages();
        // the lab's `-A FORWARD -m conntrack --ctstate NEW`: never walked, nothing said of it
        let only_nat = warned(r#"match", "name": "conntrack"#);
        assert_eq!(only_nat.len(), 1);
        assert!(only_nat[0].starts_with("n.json: 1 rules hold"), "{only_nat:?}");
        assert!(warned(r#"target", "name": "MARK"#)[0].starts_with("n.json: 2 rules hold"));
        // iptables-nft's REDIRECT is read as a redirect to the host, whatever its port
        let (set, _) = parse(
            "n.json",
            &dump("x").replace(
                "{\"masquerade\": null}",
                "{\"xt\": {\"type\": \"target\", \"name\": \"REDIRECT\"}}",
            ),
        );
        let rules =
            &set.tables.iter().find(|t| t.name.ends_with("nat")).unwrap().chain("POSTROUTING").unwrap().rules;
        assert_eq!(rules[0].action, Action::Redirect { ports: None });
    }

    #[test]
    fn iptables_nft_extensions_are_not_evaluated_but_comments_and_masquerade_are_read() {
        let (set, notes) = parse("kube.json", XT);
        assert_eq!(
            notes.messages(),
            // mangle POSTROUTING's TCPMSS is never walked: not counted
            ["kube.json: 7 rules hold iptables-nft extensions (`xt`) whose arguments `nft -j` does not show: \
              those matches and targets are not evaluated (`iptables-save` and `nft list ruleset` text show them)"]
        );
        let text = super::super::ipt::parse("kube-nat.rules", include_str!("testdata/kube-nat.rules")).0;
        let a = |s: &str| s.parse().unwrap();
        let obs = |b: (&str, &str), after: (&str, &str)| Observed {
            proto: 6,
            before: (a(b.0), Some(40000), a(b.1), Some(443)),
            after: (a(after.0), Some(40000), a(after.1), Some(443)),
            iif: None,
            oif: None,
        };
        // a pod to the internet: the same rule (the fourth of IP-MASQ-AGENT),
        // the addrtype match decided by the captures
        let o = obs(("10.4.1.7", "203.0.113.9"), ("10.128.0.7", "203.0.113.9"));
        let (t, j) = (evaluate(&text, &o), evaluate(&set, &o));
        let (Found::Rule { rule: tr, .. }, Found::Rule { rule: jr, decided }) = (&t.source, &j.source) else {
            panic!("{t:?} {j:?}")
        };
        assert_eq!((jr.chain.as_str(), tr.chain.as_str()), ("IP-MASQ-AGENT", "IP-MASQ-AGENT"));
        let place = |s: &Ruleset, r: &crate::why::eval::RuleRef| {
            let c = s.tables.iter().find(|t| t.name == r.table).unwrap().chain(&r.chain).unwrap();
            c.rules.iter().position(|x| x.line == r.line)
        };
        assert_eq!(place(&set, jr), place(&text, tr));
        assert_eq!(place(&set, jr), Some(3));
        // the jump to IP-MASQ-AGENT's addrtype matched (only that way masquerades);
        // KUBE-SERVICES' addrtype to KUBE-NODEPORTS either way
        assert!(decided.contains(&"xt match addrtype (matched, line 22: arguments not shown)".to_string()));
        assert!(!decided.iter().any(|d| d.contains("(did not match, line 22)")), "{decided:?}");
        // kept: to 10/8 no rule either way
        let o = obs(("10.4.1.7", "10.20.30.40"), ("10.4.1.7", "10.20.30.40"));
        assert!(matches!(evaluate(&set, &o).source, Found::NoRule { .. }));
        // a cluster IP: KUBE-MARK-MASQ's MARK is not shown: not evaluated, not guessed
        let o = obs(("192.0.2.5", "10.96.0.10"), ("10.128.0.7", "10.8.2.9"));
        let mut o = o;
        (o.before.3, o.after.3) = (Some(80), Some(8080));
        let Found::NotEvaluated { conditions } = evaluate(&set, &o).destination else { panic!() };
        assert!(conditions[0].contains("xt target MARK (arguments not shown)"), "{conditions:?}");
    }
}
