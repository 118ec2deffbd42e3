//! A nat ruleset as data, whichever tool wrote it (`iptables-save`,
//! `ip6tables-save`, `nft list ruleset`): tables of chains of rules, each rule
//! its conditions and its action, with the file line and text it came from.
//! Takes nothing; gives the types the parsers fill and the evaluator walks.

use std::net::IpAddr;

/// An address prefix, `10.0.0.0/8`; a bare address is a /32 (/128).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    pub addr: IpAddr,
    pub len: u8,
}

impl Cidr {
    /// `a.b.c.d[/n]`, `x::y[/n]`; None for anything else (a host name, a bad length).
    pub fn parse(text: &str) -> Option<Cidr> {
        let (a, l) = match text.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (text, None),
        };
        let addr: IpAddr = a.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = match l {
            None => max,
            // iptables-save writes netmasks as lengths; a dotted mask is read too.
            Some(l) => match l.parse::<u8>() {
                Ok(n) if n <= max => n,
                Ok(_) => return None,
                Err(_) => mask_len(l.parse().ok()?)?,
            },
        };
        Some(Cidr { addr, len })
    }

    /// True when `a` lies in the prefix (never across families).
    pub fn contains(&self, a: IpAddr) -> bool {
        match (self.addr, a) {
            (IpAddr::V4(n), IpAddr::V4(x)) => {
                let m = if self.len == 0 { 0 } else { u32::MAX << (32 - u32::from(self.len)) };
                u32::from(n) & m == u32::from(x) & m
            }
            (IpAddr::V6(n), IpAddr::V6(x)) => {
                let m = if self.len == 0 { 0 } else { u128::MAX << (128 - u32::from(self.len)) };
                u128::from(n) & m == u128::from(x) & m
            }
            _ => false,
        }
    }

    /// The same prefix with the host bits cleared (`10.1.2.3/8` → `10.0.0.0/8`).
    /// `a` mapped into this prefix, 1:1: its network bits replaced by the
    /// prefix's, its host bits kept (NETMAP); None across families.
    pub fn map(&self, a: IpAddr) -> Option<IpAddr> {
        match (self.addr, a) {
            (IpAddr::V4(n), IpAddr::V4(x)) => {
                let m = if self.len == 0 { 0 } else { u32::MAX << (32 - u32::from(self.len)) };
                Some(IpAddr::V4(((u32::from(n) & m) | (u32::from(x) & !m)).into()))
            }
            (IpAddr::V6(n), IpAddr::V6(x)) => {
                let m = if self.len == 0 { 0 } else { u128::MAX << (128 - u32::from(self.len)) };
                Some(IpAddr::V6(((u128::from(n) & m) | (u128::from(x) & !m)).into()))
            }
            _ => None,
        }
    }

    pub fn network(&self) -> Cidr {
        let mut n = *self;
        n.addr = match self.addr {
            IpAddr::V4(a) => {
                let m = if self.len == 0 { 0 } else { u32::MAX << (32 - u32::from(self.len)) };
                IpAddr::V4((u32::from(a) & m).into())
            }
            IpAddr::V6(a) => {
                let m = if self.len == 0 { 0 } else { u128::MAX << (128 - u32::from(self.len)) };
                IpAddr::V6((u128::from(a) & m).into())
            }
        };
        n
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// The prefix length of a contiguous dotted netmask.
fn mask_len(mask: std::net::Ipv4Addr) -> Option<u8> {
    let m = u32::from(mask);
    let len = m.leading_ones();
    (m.checked_shl(len).unwrap_or(0) == 0).then_some(len as u8)
}

/// An inclusive address range (`--to-source 10.0.0.1-10.0.0.5`, nft `10.0.0.1-10.0.0.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrRange {
    pub first: IpAddr,
    pub last: IpAddr,
}

impl AddrRange {
    pub fn contains(&self, a: IpAddr) -> bool {
        match (self.first, self.last, a) {
            (IpAddr::V4(f), IpAddr::V4(l), IpAddr::V4(x)) => (f..=l).contains(&x),
            (IpAddr::V6(f), IpAddr::V6(l), IpAddr::V6(x)) => (f..=l).contains(&x),
            _ => false,
        }
    }
}

/// Where a NAT rule maps to: an address range (None: the interface's address,
/// or unchanged) and a port range (None: kept, or chosen by the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NatTo {
    pub addr: Option<AddrRange>,
    pub ports: Option<(u16, u16)>,
}

impl NatTo {
    /// `a[-b][:p[-q]]` (iptables `--to-*`, nft `to …`; IPv6 as `[x::y]:p`).
    pub fn parse(text: &str) -> Option<NatTo> {
        let (addr_text, port_text) = if let Some(rest) = text.strip_prefix('[') {
            let (a, after) = rest.split_once(']')?;
            (a, after.strip_prefix(':'))
        } else if text.matches(':').count() > 1 {
            (text, None) // a bare IPv6 address
        } else {
            match text.split_once(':') {
                Some((a, p)) => (a, Some(p)),
                None => (text, None),
            }
        };
        let addr = if addr_text.is_empty() {
            None
        } else {
            let (f, l) = addr_text.split_once('-').unwrap_or((addr_text, addr_text));
            Some(AddrRange { first: f.parse().ok()?, last: l.parse().ok()? })
        };
        let ports = match port_text {
            None => None,
            Some(p) => Some(port_range(p)?),
        };
        Some(NatTo { addr, ports })
    }
}

/// `p`, `p-q` or `p:q`.
pub fn port_range(text: &str) -> Option<(u16, u16)> {
    let (a, b) = text.split_once(['-', ':']).unwrap_or((text, text));
    let (a, b): (u16, u16) = (a.parse().ok()?, b.parse().ok()?);
    (a <= b).then_some((a, b))
}

/// A packet field a condition reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Saddr,
    Daddr,
    Sport,
    Dport,
    /// Layer-4 protocol number.
    Proto,
    Iif,
    Oif,
    Mark,
    /// Connection state (`ct state`, `--ctstate`).
    CtState,
    /// Connection status bits (`ct status`, `--ctstatus`).
    CtStatus,
    /// Either port (`-m multiport --ports`).
    Ports,
    /// The ICMP (ICMPv6) message type and code (`--icmp-type`, `icmp type`).
    IcmpType,
    Icmp6Type,
    /// `fib daddr type`, `-m addrtype --dst-type`.
    DaddrType,
    SaddrType,
}

/// A value a field is compared with.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Prefix(Cidr),
    Range(AddrRange),
    Ports(u16, u16),
    Proto(u8),
    /// An interface name; `eth+` (iptables) and `eth*` (nft) are prefixes.
    Iface(String),
    /// `value/mask` (mask all ones without one).
    Mark(u32, u32),
    /// Connection states and statuses, lower case (`new`, `dnat`).
    Word(String),
    /// An ICMP type (None: `any`) and code (None: any).
    Icmp(Option<u8>, Option<u8>),
}

/// One condition of a rule: a field against values (any matches), maybe negated;
/// or a match this version cannot evaluate, kept as its text.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    Is {
        field: Field,
        neg: bool,
        any: Vec<Value>,
    },
    /// `-m tcp --tcp-flags MASK COMP`, `--syn`: the flags of a connection's first packet.
    TcpFlags {
        neg: bool,
        mask: u8,
        comp: u8,
    },
    /// A concatenation looked up in a named or anonymous set (nft `ip daddr . th dport @s`).
    InSet {
        fields: Vec<Field>,
        neg: bool,
        elements: Vec<Vec<Value>>,
    },
    /// Chosen by chance per connection (`-m statistic --mode random`, `nth`):
    /// either way is possible.
    Chance(String),
    /// Not evaluated: ipset, bpf, an unknown module or expression.
    Unknown(String),
}

/// What a rule does when its conditions hold.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Nothing that changes the walk (no target, LOG, counter, comment).
    Continue,
    Jump(String),
    Goto(String),
    Return,
    Accept,
    Drop,
    /// `-j REJECT`, nft `reject`: dropped, and an ICMP error (or a TCP reset) sent back.
    Reject,
    Masquerade {
        ports: Option<(u16, u16)>,
        random: bool,
    },
    Snat {
        to: NatTo,
        random: bool,
    },
    Dnat {
        to: NatTo,
        random: bool,
    },
    Redirect {
        ports: Option<(u16, u16)>,
    },
    /// `-j NETMAP --to PREFIX`: the address's network bits replaced by the
    /// prefix's, its host bits kept (destination in PREROUTING/OUTPUT, source
    /// in POSTROUTING/INPUT).
    Netmap {
        to: Cidr,
    },
    /// `dnat to KEY map { k : target, … }` (nft), `numgen random mod N` keys are chance.
    DnatMap {
        key: Vec<Field>,
        chance: bool,
        entries: Vec<(Vec<Value>, NatTo)>,
    },
    /// `KEY vmap { k : verdict, … }`: the first entry whose key matches
    /// decides; `numgen random mod N vmap` (`chance`): any entry may.
    Vmap {
        key: Vec<Field>,
        chance: bool,
        entries: Vec<(Vec<Value>, Action)>,
    },
    /// `MARK --set-xmark v/m`, `meta mark set v`: mark = (mark & !m) ^ v.
    SetMark {
        value: u32,
        mask: u32,
    },
    /// A target or statement this version cannot evaluate (kept as text).
    Unknown(String),
}

/// One rule: where it was read, its text, its conditions (all must hold) and action.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub line: u32,
    pub text: String,
    pub conds: Vec<Cond>,
    pub action: Action,
}

/// The netfilter hooks a base chain can be attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    Prerouting,
    Input,
    /// Filter only: what the host forwards.
    Forward,
    Output,
    Postrouting,
}

/// A chain: its rules in order; a base chain has a hook and priority.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub name: String,
    /// A nat base chain's hook and priority (the nat evaluator walks these).
    pub hook: Option<(Hook, i32)>,
    /// A filter base chain's hook and priority (`*filter` `FORWARD`, nft
    /// `type filter hook forward`): the filter evaluator walks these.
    pub filter: Option<(Hook, i32)>,
    /// A base chain whose policy drops: the line that says so.
    pub policy_drop: Option<u32>,
    pub rules: Vec<Rule>,
}

impl Chain {
    /// A chain of `name` with no hook, no policy and no rule yet.
    pub fn named(name: &str) -> Chain {
        Chain { name: name.to_string(), hook: None, filter: None, policy_drop: None, rules: Vec::new() }
    }
}

/// Which addresses a table sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
    /// nft `inet`: both.
    Inet,
}

impl Family {
    pub fn sees(self, a: IpAddr) -> bool {
        match self {
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
            Family::Inet => true,
        }
    }
}

/// A nat or filter table (`*nat`, `*filter` of iptables-save; an nft table
/// holding nat or filter chains).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The file it was read from.
    pub file: String,
    /// `nat`, `filter` (iptables), or nft's `ip tclab`.
    pub name: String,
    pub family: Family,
    /// In the order read; add them with [`Table::add`] (it keeps the index).
    pub chains: Vec<Chain>,
    /// Chain name → index in `chains` (a node holds thousands of KUBE-* chains).
    by_name: std::collections::HashMap<String, usize>,
}

impl Table {
    pub fn new(file: &str, name: String, family: Family) -> Table {
        Table { file: file.to_string(), name, family, chains: Vec::new(), by_name: Default::default() }
    }

    pub fn chain(&self, name: &str) -> Option<&Chain> {
        self.by_name.get(name).map(|&i| &self.chains[i])
    }

    pub fn chain_mut(&mut self, name: &str) -> Option<&mut Chain> {
        self.by_name.get(name).map(|&i| &mut self.chains[i])
    }

    /// Adds a chain; false (and not added) when one of that name is there.
    pub fn add(&mut self, c: Chain) -> bool {
        if self.by_name.contains_key(&c.name) {
            return false;
        }
        self.by_name.insert(c.name.clone(), self.chains.len());
        self.chains.push(c);
        true
    }
}

/// What one rules file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ruleset {
    pub file: String,
    /// `iptables-save`, `nft`, `nft-json`.
    pub format: &'static str,
    pub tables: Vec<Table>,
    /// Lines of other tables that set a packet mark (mangle, raw): a mark
    /// match in nat then cannot be evaluated from nat alone.
    pub mark_set_elsewhere: Option<u32>,
}

/// `8`, `3/4`, `any`, `echo-request` (ICMPv6 names with `v6`) as an ICMP
/// type and code; None for a name not known.
pub fn icmp_type(text: &str, v6: bool) -> Option<Value> {
    let named = |n: &str| -> Option<u8> {
        Some(match (n, v6) {
            ("echo-reply" | "pong", false) => 0,
            ("destination-unreachable", false) => 3,
            ("redirect", false) => 5,
            ("echo-request" | "ping", false) => 8,
            ("time-exceeded", false) => 11,
            ("parameter-problem", false) => 12,
            ("destination-unreachable", true) => 1,
            ("packet-too-big", true) => 2,
            ("time-exceeded", true) => 3,
            ("parameter-problem", true) => 4,
            ("echo-request", true) => 128,
            ("echo-reply", true) => 129,
            _ => n.parse().ok()?,
        })
    };
    if text == "any" {
        return Some(Value::Icmp(None, None));
    }
    match text.split_once('/') {
        Some((t, c)) => Some(Value::Icmp(Some(t.parse().ok()?), Some(c.parse().ok()?))),
        None => Some(Value::Icmp(Some(named(text)?), None)),
    }
}

/// Protocol numbers by name (`-p tcp`, `meta l4proto udp`).
pub fn proto_number(name: &str) -> Option<u8> {
    match name {
        "tcp" => Some(6),
        "udp" => Some(17),
        "icmp" => Some(1),
        "icmpv6" | "ipv6-icmp" => Some(58),
        "sctp" => Some(132),
        "udplite" => Some(136),
        "gre" => Some(47),
        "esp" => Some(50),
        n => n.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_ranges_and_nat_targets_read_as_the_kernel_means_them() {
        let c = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(c.contains("10.20.30.40".parse().unwrap()));
        assert!(!c.contains("11.0.0.1".parse().unwrap()));
        assert!(!c.contains("::1".parse().unwrap()));
        assert_eq!(Cidr::parse("198.18.0.0/255.254.0.0").unwrap().len, 15);
        assert!(Cidr::parse("198.18.0.0/255.0.255.0").is_none());
        assert!(Cidr::parse("10.0.0.0/33").is_none());
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains("1.2.3.4".parse().unwrap()));
        assert_eq!(Cidr::parse("10.1.2.3/8").unwrap().network().to_string(), "10.0.0.0/8");
        let n = NatTo::parse("10.0.0.1-10.0.0.5:1000-2000").unwrap();
        assert!(n.addr.unwrap().contains("10.0.0.3".parse().unwrap()));
        assert_eq!(n.ports, Some((1000, 2000)));
        assert_eq!(NatTo::parse("[2001:db8::1]:80").unwrap().ports, Some((80, 80)));
        assert_eq!(NatTo::parse("2001:db8::1").unwrap().ports, None);
        assert_eq!(NatTo::parse(":8080").unwrap(), NatTo { addr: None, ports: Some((8080, 8080)) });
        assert!(NatTo::parse("10.0.0.1:99999").is_none());
        assert_eq!(port_range("30000:32767"), Some((30000, 32767)));
        assert_eq!(port_range("9-1"), None);
    }
}
