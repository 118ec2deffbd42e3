//! `iptables-save` / `ip6tables-save` text → [`Ruleset`]: the nat table's
//! chains and rules (line and text kept), strictly; other tables are read
//! only for rules that set a packet mark. A line it cannot read is noted by
//! number and left out; a match it does not know becomes a condition
//! "not evaluated", never dropped.

use super::model::*;
use super::text::{self, Notes};

/// Options of the rule grammar that end an unknown module's options.
const TOP: &[&str] = &[
    "-s",
    "--source",
    "-d",
    "--destination",
    "-p",
    "--protocol",
    "-i",
    "--in-interface",
    "-o",
    "--out-interface",
    "-m",
    "--match",
    "-j",
    "--jump",
    "-g",
    "--goto",
    "-f",
    "--fragment",
];

/// Parses `iptables-save` (or `ip6tables-save`) text; `v6` when it came
/// from `ip6tables-save` (known by its addresses when not told).
pub fn parse(file: &str, input: &str) -> (Ruleset, Notes) {
    let mut notes = Notes::new(file);
    let mut set = Ruleset { file: file.to_string(), format: "iptables-save", ..Ruleset::default() };
    let mut table: Option<String> = None;
    let mut nat: Option<Table> = None;
    let mut v6 = None;
    let lines = text::lines(input, &mut notes);
    for (n, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(t) = line.strip_prefix('*') {
            if table.is_some() {
                notes.line(n, "a table begins before the previous one's COMMIT");
            }
            table = Some(t.to_string());
            if t == "nat" {
                nat = Some(Table {
                    file: file.into(),
                    name: "nat".into(),
                    family: Family::V4,
                    chains: Vec::new(),
                });
            }
            continue;
        }
        let Some(t) = table.as_deref() else {
            notes.line(n, "outside a table (no `*nat` line before it)");
            continue;
        };
        if line == "COMMIT" {
            if t == "nat" {
                if let Some(done) = nat.take() {
                    set.tables.push(done);
                }
            }
            table = None;
            continue;
        }
        if t != "nat" {
            let sets_mark = line.starts_with("-A")
                && [" MARK ", " CONNMARK "].iter().any(|m| format!("{line} ").contains(m));
            if sets_mark && set.mark_set_elsewhere.is_none() {
                set.mark_set_elsewhere = Some(n);
            }
            continue;
        }
        let Some(tab) = nat.as_mut() else { continue };
        if let Some(decl) = line.strip_prefix(':') {
            let Some(name) = decl.split_whitespace().next() else {
                notes.line(n, "a chain declaration without a name");
                continue;
            };
            if tab.chain(name).is_some() {
                notes.line(n, format!("chain {name} declared twice"));
                continue;
            }
            tab.chains.push(Chain { name: name.to_string(), hook: builtin(name), rules: Vec::new() });
            continue;
        }
        // `-c` counters: `[packets:bytes] -A …`
        let body = match line.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or(line, |(_, r)| r.trim_start()),
            None => line,
        };
        let Some(words) = text::words(body) else {
            notes.line(n, "an unterminated quote");
            continue;
        };
        if words.first().map(String::as_str) != Some("-A") || words.len() < 2 {
            notes.line(n, "not a rule (`-A CHAIN …`), a chain (`:CHAIN`), `*table` or `COMMIT`");
            continue;
        }
        let chain = words[1].clone();
        match rule(&words[2..], tab) {
            Ok((conds, action)) => {
                if conds.iter().any(addr_is_v6) {
                    v6 = Some(true);
                } else if conds.iter().any(addr_is_v4) {
                    v6.get_or_insert(false);
                }
                let r = Rule { line: n, text: line.to_string(), conds, action };
                match tab.chains.iter_mut().find(|c| c.name == chain) {
                    Some(c) => c.rules.push(r),
                    None => notes.line(n, format!("a rule of chain {chain}, never declared")),
                }
            }
            Err(e) => notes.line(n, e),
        }
    }
    if table.is_some() {
        notes.line(0, "the last table has no COMMIT: its rules are used as read");
        if let Some(done) = nat.take() {
            set.tables.push(done);
        }
    }
    if v6 == Some(true) {
        set.tables.iter_mut().for_each(|t| t.family = Family::V6);
    } else if v6.is_none() {
        // no address in any rule: the file alone does not tell; both are possible
        set.tables.iter_mut().for_each(|t| t.family = Family::Inet);
    }
    (set, notes)
}

fn addr_is_v6(c: &Cond) -> bool {
    matches!(c, Cond::Is { any, .. } if any.iter().any(|v| matches!(v, Value::Prefix(p) if p.addr.is_ipv6())))
}

fn addr_is_v4(c: &Cond) -> bool {
    matches!(c, Cond::Is { any, .. } if any.iter().any(|v| matches!(v, Value::Prefix(p) if p.addr.is_ipv4())))
}

/// The hook and priority of a built-in nat chain (iptables' NF_IP_PRI_NAT_*).
fn builtin(name: &str) -> Option<(Hook, i32)> {
    match name {
        "PREROUTING" => Some((Hook::Prerouting, -100)),
        "OUTPUT" => Some((Hook::Output, -100)),
        "INPUT" => Some((Hook::Input, 100)),
        "POSTROUTING" => Some((Hook::Postrouting, 100)),
        _ => None,
    }
}

/// One rule's conditions and action, from the words after `-A CHAIN`.
fn rule(w: &[String], table: &Table) -> Result<(Vec<Cond>, Action), String> {
    let mut conds = Vec::new();
    let mut action = Action::Continue;
    let mut i = 0;
    let mut neg = false;
    let arg = |i: usize| w.get(i + 1).map(String::as_str).ok_or_else(|| format!("{} without a value", w[i]));
    while i < w.len() {
        let opt = w[i].as_str();
        match opt {
            "!" => {
                neg = true;
                i += 1;
                continue;
            }
            "-s" | "--source" | "-d" | "--destination" => {
                let field =
                    if opt.starts_with("-s") || opt == "--source" { Field::Saddr } else { Field::Daddr };
                let any = (arg(i)?.split(','))
                    .map(|a| {
                        Cidr::parse(a).map(Value::Prefix).ok_or_else(|| format!("{a:?} is not an address"))
                    })
                    .collect::<Result<_, _>>()?;
                conds.push(Cond::Is { field, neg, any });
                i += 2;
            }
            "-p" | "--protocol" => {
                let p = arg(i)?;
                if p != "all" {
                    let n = proto_number(p).ok_or_else(|| format!("unknown protocol {p:?}"))?;
                    conds.push(Cond::Is { field: Field::Proto, neg, any: vec![Value::Proto(n)] });
                }
                i += 2;
            }
            "-i" | "--in-interface" | "-o" | "--out-interface" => {
                let field =
                    if opt.starts_with("-i") || opt == "--in-interface" { Field::Iif } else { Field::Oif };
                conds.push(Cond::Is { field, neg, any: vec![Value::Iface(arg(i)?.to_string())] });
                i += 2;
            }
            "-m" | "--match" => {
                let module = arg(i)?;
                i += 2;
                let end = (i..w.len()).find(|&k| ends_module(w, k)).unwrap_or(w.len());
                module_conds(module, &w[i..end], &mut conds)?;
                i = end;
            }
            "-j" | "--jump" => {
                action = target(arg(i)?, &w[i + 2..], table)?;
                i = w.len();
            }
            "-g" | "--goto" => {
                let c = arg(i)?;
                action = if table.chain(c).is_some() {
                    Action::Goto(c.to_string())
                } else {
                    Action::Unknown(format!("-g {c} (no such chain)"))
                };
                i += 2;
            }
            "-f" | "--fragment" => {
                conds.push(Cond::Unknown(format!("{}-f", if neg { "! " } else { "" })));
                i += 1;
            }
            "-c" | "--set-counters" => i += 3,
            other => return Err(format!("unknown option {other:?}")),
        }
        neg = false;
    }
    Ok((conds, action))
}

/// True when word `k` begins the next top-level option (so a module's options end before it).
fn ends_module(w: &[String], k: usize) -> bool {
    let is_top = |s: &str| TOP.contains(&s);
    is_top(&w[k]) || (w[k] == "!" && w.get(k + 1).is_some_and(|n| is_top(n)))
}

/// The conditions of `-m MODULE OPTIONS…`; a module or option this version
/// does not evaluate becomes one "not evaluated" condition with its text.
fn module_conds(module: &str, w: &[String], conds: &mut Vec<Cond>) -> Result<(), String> {
    let unknown = || Cond::Unknown(format!("-m {module} {}", w.join(" ")).trim_end().to_string());
    match module {
        "comment" | "tcp" | "udp" | "multiport" | "addrtype" | "mark" | "conntrack" | "state"
        | "statistic" => {}
        _ => {
            conds.push(unknown());
            return Ok(());
        }
    }
    if module == "statistic" {
        conds.push(Cond::Chance(format!("-m statistic {}", w.join(" "))));
        return Ok(());
    }
    let mut i = 0;
    let mut neg = false;
    while i < w.len() {
        let o = w[i].as_str();
        let val = w.get(i + 1).map(String::as_str).ok_or_else(|| format!("{o} without a value"));
        let mut step = 2;
        match (module, o) {
            (_, "!") => {
                neg = true;
                i += 1;
                continue;
            }
            ("comment", "--comment") => {}
            ("tcp" | "udp", "--dport" | "--destination-port" | "--sport" | "--source-port")
            | ("multiport", "--dports" | "--destination-ports" | "--sports" | "--source-ports") => {
                let field = if o.contains("-d") { Field::Dport } else { Field::Sport };
                conds.push(Cond::Is { field, neg, any: ports(val?)? });
            }
            ("multiport", "--ports") => {
                conds.push(Cond::Unknown(format!("-m multiport {}--ports {}", bang(neg), val?)));
            }
            ("tcp", "--syn") => {
                conds.push(Cond::TcpFlags { neg, mask: 0x17, comp: 0x02 });
                step = 1;
            }
            ("tcp", "--tcp-flags") => {
                let comp = w.get(i + 2).ok_or("--tcp-flags without flags")?;
                conds.push(Cond::TcpFlags { neg, mask: flags(val?)?, comp: flags(comp)? });
                step = 3;
            }
            ("addrtype", "--dst-type" | "--src-type") => {
                let field = if o == "--dst-type" { Field::DaddrType } else { Field::SaddrType };
                let any = val?.split(',').map(|t| Value::Word(t.to_ascii_lowercase())).collect();
                conds.push(Cond::Is { field, neg, any });
            }
            ("mark", "--mark") => conds.push(Cond::Is { field: Field::Mark, neg, any: vec![mark(val?)?] }),
            ("conntrack", "--ctstate") | ("state", "--state") => {
                let any = val?.split(',').map(|t| Value::Word(t.to_ascii_lowercase())).collect();
                conds.push(Cond::Is { field: Field::CtState, neg, any });
            }
            _ => {
                // an option this version does not evaluate: the rest of the module with it
                conds.push(Cond::Unknown(format!("-m {module} {}{}", bang(neg), w[i..].join(" "))));
                return Ok(());
            }
        }
        neg = false;
        i += step;
    }
    Ok(())
}

fn bang(neg: bool) -> &'static str {
    if neg {
        "! "
    } else {
        ""
    }
}

/// `80`, `80:90`, `80,443,8000:8080`.
fn ports(text: &str) -> Result<Vec<Value>, String> {
    (text.split(','))
        .map(|p| port_range(p).map(|(a, b)| Value::Ports(a, b)).ok_or_else(|| format!("{p:?} is not a port")))
        .collect()
}

/// `SYN,ACK`, `ALL`, `NONE` → flag bits.
fn flags(text: &str) -> Result<u8, String> {
    let mut bits = 0u8;
    for f in text.split(',') {
        bits |= match f {
            "FIN" => 0x01,
            "SYN" => 0x02,
            "RST" => 0x04,
            "PSH" => 0x08,
            "ACK" => 0x10,
            "URG" => 0x20,
            "ALL" => 0x3f,
            "NONE" => 0,
            other => return Err(format!("unknown TCP flag {other:?}")),
        };
    }
    Ok(bits)
}

/// `0x4000/0x4000`, `0x1`, `16`.
pub(super) fn number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => text.parse().ok(),
    }
}

fn mark(text: &str) -> Result<Value, String> {
    let bad = || format!("{text:?} is not a mark");
    let (v, m) = text.split_once('/').unwrap_or((text, "0xffffffff"));
    Ok(Value::Mark(number(v).ok_or_else(bad)?, number(m).ok_or_else(bad)?))
}

/// The action of `-j TARGET OPTIONS…`.
fn target(name: &str, w: &[String], table: &Table) -> Result<Action, String> {
    let opt = |o: &str| w.iter().position(|x| x == o).and_then(|k| w.get(k + 1)).map(String::as_str);
    let has = |o: &str| w.iter().any(|x| x == o);
    let random = has("--random") || has("--random-fully");
    let to_ports = || -> Result<Option<(u16, u16)>, String> {
        opt("--to-ports")
            .map(|p| port_range(p).ok_or_else(|| format!("{p:?} is not a port range")))
            .transpose()
    };
    let nat_to = |o: &str| -> Result<NatTo, String> {
        let t = opt(o).ok_or_else(|| format!("{name} without {o}"))?;
        if w.iter().filter(|x| *x == o).count() > 1 {
            return Err(format!("{name} with several {o} (kernels before 2.6.11 only)"));
        }
        NatTo::parse(t).ok_or_else(|| format!("{t:?} is not an address[:port] range"))
    };
    Ok(match name {
        "RETURN" => Action::Return,
        "ACCEPT" => Action::Accept,
        "DROP" | "REJECT" => Action::Drop,
        "MASQUERADE" => Action::Masquerade { ports: to_ports()?, random },
        "SNAT" => Action::Snat { to: nat_to("--to-source")?, random },
        "DNAT" => Action::Dnat { to: nat_to("--to-destination")?, random },
        "REDIRECT" => Action::Redirect { ports: to_ports()? },
        "LOG" | "NFLOG" | "TRACE" => Action::Continue,
        "MARK" => {
            // the kernel's xt_mark: mark = (mark & !mask) ^ value
            let pair = |t: &str| match mark(t)? {
                Value::Mark(v, m) => Ok::<_, String>((v, m)),
                _ => Err(format!("{t:?} is not a mark")),
            };
            if let Some(t) = opt("--set-xmark") {
                let (value, mask) = pair(t)?;
                Action::SetMark { value, mask }
            } else if let Some(t) = opt("--set-mark") {
                let (value, mask) = pair(t)?;
                Action::SetMark { value, mask: mask | value }
            } else if let Some(t) = opt("--or-mark") {
                let (value, _) = pair(t)?;
                Action::SetMark { value, mask: value }
            } else {
                Action::Unknown(format!("-j MARK {}", w.join(" ")))
            }
        }
        chain if table.chain(chain).is_some() => Action::Jump(chain.to_string()),
        other => Action::Unknown(format!("-j {other} {}", w.join(" ")).trim_end().to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBE: &str = include_str!("testdata/kube-nat.rules");

    #[test]
    fn a_kube_proxy_and_ip_masq_agent_nat_table_reads_rule_by_rule_with_lines() {
        let (set, notes) = parse("nat.rules", KUBE);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        assert_eq!(set.tables.len(), 1);
        let t = &set.tables[0];
        assert_eq!(t.family, Family::V4);
        let post = t.chain("POSTROUTING").unwrap();
        assert_eq!(post.hook, Some((Hook::Postrouting, 100)));
        let masq = t.chain("IP-MASQ-AGENT").unwrap();
        let last = masq.rules.last().unwrap();
        assert_eq!(last.action, Action::Masquerade { ports: None, random: false });
        assert!(KUBE.lines().nth(last.line as usize - 1).unwrap().ends_with("-j MASQUERADE"));
        let ret = &masq.rules[1];
        assert_eq!(ret.action, Action::Return);
        assert_eq!(
            ret.conds,
            [Cond::Is {
                field: Field::Daddr,
                neg: false,
                any: vec![Value::Prefix(Cidr::parse("10.0.0.0/8").unwrap())]
            }]
        );
        let kpost = t.chain("KUBE-POSTROUTING").unwrap();
        assert_eq!(
            kpost.rules[0].conds,
            [Cond::Is { field: Field::Mark, neg: true, any: vec![Value::Mark(0x4000, 0x4000)] }]
        );
        assert_eq!(kpost.rules[1].action, Action::SetMark { value: 0x4000, mask: 0 });
        assert_eq!(kpost.rules[2].action, Action::Masquerade { ports: None, random: true });
        let sep = t.chain("KUBE-SEP-AAAA").unwrap();
        assert_eq!(
            sep.rules[1].action,
            Action::Dnat { to: NatTo::parse("10.8.1.5:8080").unwrap(), random: false }
        );
        let svc = t.chain("KUBE-SVC-WEB").unwrap();
        assert!(matches!(svc.rules[1].conds[..], [Cond::Chance(_)]));
        assert_eq!(set.mark_set_elsewhere, None);
    }

    #[test]
    fn unreadable_lines_are_named_and_unknown_matches_kept_as_not_evaluated() {
        let text = "*nat\n:POSTROUTING ACCEPT [0:0]\n:X - [0:0]\n\
            -A POSTROUTING -m set --match-set pods src -j MASQUERADE\n\
            -A POSTROUTING -s 10.0.0.0/33 -j MASQUERADE\n\
            -A NOPE -j RETURN\n\
            -A POSTROUTING -m comment --comment \"open -j X\n\
            -A POSTROUTING -p tcp -m tcp ! --dport 80 -j X\n\
            garbage\n\
            COMMIT\n\
            *mangle\n-A PREROUTING -j MARK --set-xmark 0x1/0xffffffff\nCOMMIT\n";
        let (set, notes) = parse("r", text);
        let lines: Vec<u32> = notes.list.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [5, 6, 7, 9], "{:?}", notes.messages());
        let post = set.tables[0].chain("POSTROUTING").unwrap();
        assert_eq!(post.rules.len(), 2);
        assert_eq!(post.rules[0].conds, [Cond::Unknown("-m set --match-set pods src".into())]);
        assert_eq!(
            post.rules[1].conds[1],
            Cond::Is { field: Field::Dport, neg: true, any: vec![Value::Ports(80, 80)] }
        );
        assert_eq!(post.rules[1].action, Action::Jump("X".into()));
        assert_eq!(set.mark_set_elsewhere, Some(12));
    }
}
