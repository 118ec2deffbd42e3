//! `--names FILE`: addresses and networks → the names people use for them
//! (pods, nodes, services, hosts). Takes the text of a names file; gives a
//! lookup table the report layer asks for each address it prints. Reads, by
//! their content (never by the file name):
//!
//! - `/etc/hosts` lines: `ADDRESS[/PREFIX] NAME [ALIAS...]  # comment`;
//! - a two-column CSV `address,name` (header optional);
//! - `kubectl get pods -A -o wide`, `kubectl get nodes -o wide`,
//!   `kubectl get svc -A` text, found by its header (NAME with IP, INTERNAL-IP
//!   or CLUSTER-IP; NAMESPACE makes names `namespace/name`);
//! - the same objects as `kubectl get ... -o json` (a `List` of Pods, Nodes,
//!   Services, or one such object).
//!
//! - `ip -o link` (or plain `ip link`) and `ip -j link` output, found by its
//!   content: interface indexes → names, for the interfaces requests took at
//!   the sides of a `tcpdump -i any` capture whose link type (LINUX_SLL2)
//!   carries the interface index (`iface` `eth0` instead of `if2`; a pcapng
//!   `if_name` stays preferred; LINUX_SLL carries no index, so names cannot
//!   apply there).
//!
//! Names are untrusted text: control and bidirectional-override characters
//! become `?` when read, and a name is cut at [`MAX_NAME_CHARS`]; the report
//! writers escape for their own format (CSV formula prefixes, HTML as text).
//! When two entries give the same address, hosts and CSV lines win over nodes,
//! nodes over services, services over pods (a hostNetwork pod has its node's
//! address), and within one rank the first given wins.

use std::collections::HashMap;
use std::io::Read;
use std::net::IpAddr;
use std::path::Path;

/// Longest name kept (a DNS name's longest form); longer ones are cut.
pub const MAX_NAME_CHARS: usize = 253;

/// Largest names file read (bytes).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The formats read, for the refusal message.
pub const FORMATS: &str = "/etc/hosts lines (ADDRESS NAME), a two-column CSV address,name, \
or the output of `kubectl get pods -A -o wide`, `kubectl get nodes -o wide`, `kubectl get svc -A` \
(text, or the same with -o json), or of `ip -o link` / `ip -j link` (interface names)";

/// Where an entry came from: decides which wins when two give one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rank {
    /// A hosts or CSV line: the user said it.
    Explicit,
    Node,
    Service,
    Pod,
}

/// The format a names file was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamesFormat {
    Hosts,
    Csv,
    KubectlText,
    KubectlJson,
    /// `ip -o link` / `ip link`: interface indexes, no addresses.
    IpLinkText,
    /// `ip -j link`.
    IpLinkJson,
}

/// Interface index and name, in the order given.
pub type Links = Vec<(u32, String)>;

/// Longest interface name kept (Linux allows 15 bytes; more is not a name).
pub const MAX_LINK_NAME_CHARS: usize = 32;

/// One address or network with its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub addr: IpAddr,
    pub prefix: u8,
    pub name: String,
    pub rank: Rank,
}

/// Every name given, looked up by address (exact first, then the longest network).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    exact: HashMap<IpAddr, (Rank, String)>,
    /// Networks, longest prefix first.
    nets: Vec<Entry>,
    /// Interface index → name, from `ip link` output (the first given wins).
    links: std::collections::BTreeMap<u32, String>,
}

/// A `--names` file that could not be read: which, and why. `Display` is
/// the whole sentence.
#[derive(Debug)]
pub enum NamesError {
    /// It could not be opened or read.
    Unreadable { path: std::path::PathBuf, error: std::io::Error },
    /// It is larger than [`MAX_FILE_BYTES`].
    TooLarge { path: std::path::PathBuf },
    /// A line is neither a names line nor an `ip link` line (`why` names it).
    Malformed { path: std::path::PathBuf, why: String },
}

impl std::fmt::Display for NamesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NamesError::Unreadable { path, error } => write!(f, "--names {}: {error}", path.display()),
            NamesError::TooLarge { path } => {
                write!(
                    f,
                    "--names {}: larger than {} MiB; not a names file",
                    path.display(),
                    MAX_FILE_BYTES >> 20
                )
            }
            NamesError::Malformed { path, why } => write!(f, "--names {}: {why}", path.display()),
        }
    }
}

impl std::error::Error for NamesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NamesError::Unreadable { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl Names {
    /// Reads every file in order (`--names` is repeatable).
    pub fn load(paths: &[std::path::PathBuf]) -> Result<Names, NamesError> {
        let mut names = Names::default();
        for path in paths {
            let text = read_text(path)?;
            let failed = |why: String| NamesError::Malformed { path: path.clone(), why };
            match parse_links(&text) {
                Some(links) => names.add_links(links.map_err(failed)?.1),
                None => names.extend(parse(&text).map_err(failed)?.1),
            }
        }
        Ok(names)
    }

    /// Adds interface names; an index already named keeps its name.
    pub fn add_links(&mut self, links: impl IntoIterator<Item = (u32, String)>) {
        for (index, name) in links {
            self.links.entry(index).or_insert(name);
        }
    }

    /// The interface names given (`ip link` output), by index.
    pub fn links(&self) -> &std::collections::BTreeMap<u32, String> {
        &self.links
    }

    /// Adds entries; an address already named keeps its name unless the new
    /// entry ranks higher.
    pub fn extend(&mut self, entries: impl IntoIterator<Item = Entry>) {
        for e in entries {
            let full = if e.addr.is_ipv4() { 32 } else { 128 };
            if e.prefix >= full {
                match self.exact.get(&e.addr) {
                    Some((rank, _)) if *rank <= e.rank => {}
                    _ => {
                        self.exact.insert(e.addr, (e.rank, e.name));
                    }
                }
            } else if !self.nets.iter().any(|n| n.addr == e.addr && n.prefix == e.prefix && n.rank <= e.rank)
            {
                self.nets.retain(|n| !(n.addr == e.addr && n.prefix == e.prefix));
                self.nets.push(e);
                self.nets.sort_by_key(|n| std::cmp::Reverse(n.prefix));
            }
        }
    }

    /// The name of `addr`: its own, else the longest network's holding it.
    pub fn lookup(&self, addr: IpAddr) -> Option<&str> {
        let addr = canonical(addr);
        if let Some((_, name)) = self.exact.get(&addr) {
            return Some(name);
        }
        self.nets.iter().find(|n| net_contains(n.addr, n.prefix, addr)).map(|n| n.name.as_str())
    }

    /// Addresses and networks named.
    pub fn len(&self) -> usize {
        self.exact.len() + self.nets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0 && self.links.is_empty()
    }

    /// Some address or network is named (interface names aside).
    pub fn names_addresses(&self) -> bool {
        !self.exact.is_empty() || !self.nets.is_empty()
    }
}

/// An interface name as a request's `iface` shows it: without control
/// characters, blanks and parentheses, at most [`MAX_LINK_NAME_CHARS`]; None when empty.
pub fn link_name(raw: &str) -> Option<String> {
    let n: String = raw
        .chars()
        .filter(|c| {
            let bidi =
                matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            !c.is_control() && !c.is_whitespace() && !bidi && !matches!(c, '(' | ')')
        })
        .take(MAX_LINK_NAME_CHARS)
        .collect();
    (!n.is_empty()).then_some(n)
}

/// `ip -o link`, `ip link` or `ip -j link` output as interface index → name;
/// None when the text is none of them (then it is read as names of addresses).
pub fn parse_links(text: &str) -> Option<Result<(NamesFormat, Links), String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('[') {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        let items = value.as_array()?;
        // `ip -j link`: objects with an ifindex; an empty list names nothing
        if !items.iter().any(|i| i.get("ifindex").is_some()) {
            return None;
        }
        return Some(ip_link_json(items).map(|l| (NamesFormat::IpLinkJson, l)));
    }
    let (_, first) = significant(text).next()?;
    ip_link_line(first)?;
    Some(ip_link_text(text).map(|l| (NamesFormat::IpLinkText, l)))
}

/// `2: eth0@if7: <BROADCAST,...> mtu 1500 ...` → (2, `eth0`); None when the
/// line is not an `ip link` line.
fn ip_link_line(line: &str) -> Option<(u32, Option<String>)> {
    let (index, rest) = line.split_once(": ")?;
    let index: u32 = index.trim().parse().ok()?;
    let (name, rest) = rest.split_once(": ")?;
    if !rest.starts_with('<') {
        return None;
    }
    // `eth0@if7`, `vlan10@eth0`: the name before `@`
    let name = name.split('@').next().unwrap_or(name);
    Some((index, link_name(name)))
}

fn ip_link_text(text: &str) -> Result<Vec<(u32, String)>, String> {
    let mut out = Vec::new();
    for (n, line) in significant(text) {
        // `ip link` without -o: the link's second line is indented
        if line.starts_with([' ', '\t']) {
            continue;
        }
        match ip_link_line(line) {
            Some((index, Some(name))) => out.push((index, name)),
            Some((_, None)) => return Err(format!("line {n}: an interface without a name")),
            None => {
                let shown: String = clean_name(line).chars().take(60).collect();
                return Err(format!(
                    "line {n}: {shown:?} is not an `ip -o link` line (INDEX: NAME: <FLAGS> ...); save the output of \
                     `ip -o link` (or `ip -j link`) unchanged"
                ));
            }
        }
    }
    Ok(out)
}

fn ip_link_json(items: &[serde_json::Value]) -> Result<Vec<(u32, String)>, String> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let index = item.get("ifindex").and_then(|x| x.as_u64()).and_then(|x| u32::try_from(x).ok());
        let name = item.get("ifname").and_then(|x| x.as_str()).and_then(link_name);
        match (index, name) {
            (Some(index), Some(name)) => out.push((index, name)),
            _ => {
                return Err(format!(
                    "item {} of the `ip -j link` list has no interface index (ifindex, a number) and name (ifname)",
                    i + 1
                ))
            }
        }
    }
    Ok(out)
}

/// `::ffff:a.b.c.d` → `a.b.c.d`.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

fn read_text(path: &Path) -> Result<String, NamesError> {
    let unreadable = |error| NamesError::Unreadable { path: path.to_path_buf(), error };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(NamesError::TooLarge { path: path.to_path_buf() });
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A name as kept: control and bidirectional-override characters as `?`,
/// surrounding white space trimmed, at most [`MAX_NAME_CHARS`] characters.
pub fn clean_name(raw: &str) -> String {
    let bidi =
        |c: char| matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    raw.trim().chars().take(MAX_NAME_CHARS).map(|c| if c.is_control() || bidi(c) { '?' } else { c }).collect()
}

/// `ADDR` or `ADDR/PREFIX` → (address, prefix).
fn addr_or_net(text: &str) -> Option<(IpAddr, u8)> {
    let text = text.trim();
    match text.split_once('/') {
        Some((a, l)) => {
            let addr: IpAddr = a.parse().ok()?;
            let len: u8 = l.parse().ok()?;
            (len <= if addr.is_ipv4() { 32 } else { 128 }).then_some((canonical(addr), len))
        }
        None => {
            let addr = canonical(text.parse().ok()?);
            Some((addr, if addr.is_ipv4() { 32 } else { 128 }))
        }
    }
}

fn entry(addr: (IpAddr, u8), name: &str, rank: Rank) -> Option<Entry> {
    let name = clean_name(name);
    (!name.is_empty()).then_some(Entry { addr: addr.0, prefix: addr.1, name, rank })
}

/// Lines that carry something: not blank, not a `#` comment.
fn significant(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    })
}

/// Reads a names file's text in whichever format it is.
pub fn parse(text: &str) -> Result<(NamesFormat, Vec<Entry>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('{') {
        return kubectl_json(text).map(|e| (NamesFormat::KubectlJson, e));
    }
    let Some((_, first)) = significant(text).next() else {
        return Err(format!("no names in it; expected {FORMATS}"));
    };
    let first_field = first.split(',').next().unwrap_or("").trim().trim_matches('"');
    if first.contains(',')
        && (addr_or_net(first_field).is_some() || first_field.eq_ignore_ascii_case("address"))
    {
        return csv_names(text).map(|e| (NamesFormat::Csv, e));
    }
    if let Some(header) = KubectlHeader::of(first) {
        return Ok((NamesFormat::KubectlText, header.entries(text)));
    }
    if first.split_whitespace().next().and_then(addr_or_net).is_some() {
        return hosts(text).map(|e| (NamesFormat::Hosts, e));
    }
    let shown: String = clean_name(first).chars().take(60).collect();
    Err(format!("not a names file I read (it begins {shown:?}); expected {FORMATS}"))
}

fn hosts(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (n, line) in significant(text) {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        let addr = addr_or_net(first)
            .ok_or_else(|| format!("line {n}: {:?} is not an address", clean_name(first)))?;
        let name = words.next().ok_or_else(|| format!("line {n}: an address without a name"))?;
        out.extend(entry(addr, name, Rank::Explicit));
    }
    Ok(out)
}

fn csv_names(text: &str) -> Result<Vec<Entry>, String> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| format!("row {}: {e}", i + 1))?;
        let (Some(a), Some(name)) = (rec.get(0), rec.get(1)) else {
            return Err(format!("row {}: expected two columns address,name", i + 1));
        };
        if a.trim().is_empty() || a.trim().starts_with('#') {
            continue;
        }
        if rec.len() != 2 {
            return Err(format!("row {}: expected two columns address,name, got {}", i + 1, rec.len()));
        }
        match addr_or_net(a) {
            Some(addr) => out.extend(entry(addr, name, Rank::Explicit)),
            None if i == 0 && a.trim().eq_ignore_ascii_case("address") => {}
            None => return Err(format!("row {}: {:?} is not an address", i + 1, clean_name(a))),
        }
    }
    Ok(out)
}

/// The columns of a `kubectl get` table that name an address.
struct KubectlHeader {
    /// Start of each column (byte offset) and its title.
    columns: Vec<(usize, String)>,
    namespace: Option<usize>,
    name: usize,
    /// Address columns and the rank their entries get.
    addresses: Vec<usize>,
    rank: Rank,
}

impl KubectlHeader {
    /// A header line: titles separated by two spaces or more (`NOMINATED NODE`
    /// is one title), NAME and an address column among them.
    fn of(line: &str) -> Option<KubectlHeader> {
        let mut columns: Vec<(usize, String)> = Vec::new();
        let mut start = None;
        let mut spaces = 0;
        for (i, c) in line.char_indices() {
            if c == ' ' || c == '\t' {
                spaces += 1;
                if spaces >= 2 || c == '\t' {
                    if let Some(s) = start.take() {
                        columns.push((s, line[s..i + 1 - spaces].trim().to_string()));
                    }
                }
            } else {
                if start.is_none() {
                    start = Some(i);
                }
                spaces = 0;
            }
        }
        if let Some(s) = start {
            columns.push((s, line[s..].trim().to_string()));
        }
        if !columns.iter().all(|(_, t)| t.chars().all(|c| c.is_ascii_uppercase() || " -()".contains(c))) {
            return None;
        }
        let find = |title: &str| columns.iter().position(|(_, t)| t == title);
        let name = find("NAME")?;
        let namespace = find("NAMESPACE");
        let (addresses, rank) = if let Some(ip) = find("IP") {
            (vec![ip], Rank::Pod)
        } else if let Some(internal) = find("INTERNAL-IP") {
            (std::iter::once(internal).chain(find("EXTERNAL-IP")).collect(), Rank::Node)
        } else if let Some(cluster) = find("CLUSTER-IP") {
            (std::iter::once(cluster).chain(find("EXTERNAL-IP")).collect(), Rank::Service)
        } else {
            return None;
        };
        Some(KubectlHeader { columns, namespace, name, addresses, rank })
    }

    /// The cell of column `c` in `line`: from the column's start to the next
    /// one's, its first word (names and addresses hold no spaces).
    fn cell<'t>(&self, line: &'t str, c: usize) -> &'t str {
        let start = self.columns[c].0;
        let end = self.columns.get(c + 1).map_or(line.len(), |n| n.0);
        let text = line.get(start..end.min(line.len())).or_else(|| line.get(start..)).unwrap_or("");
        text.split_whitespace().next().unwrap_or("")
    }

    fn entries(&self, text: &str) -> Vec<Entry> {
        let mut out = Vec::new();
        // every header line (several `kubectl get` outputs may be concatenated)
        let mut header: Option<KubectlHeader> = None;
        for (_, line) in significant(text) {
            if let Some(h) = KubectlHeader::of(line) {
                header = Some(h);
                continue;
            }
            let h = header.as_ref().unwrap_or(self);
            let name = h.cell(line, h.name);
            let full = match h.namespace.map(|n| h.cell(line, n)) {
                Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
                _ => name.to_string(),
            };
            for &a in &h.addresses {
                // EXTERNAL-IP may list several, comma-separated; `<none>`, `<pending>` name nothing
                for addr in h.cell(line, a).split(',').filter_map(addr_or_net) {
                    out.extend(entry(addr, &full, h.rank));
                }
            }
        }
        out
    }
}

/// The string field `k` of an object, if any.
fn field<'v>(v: Option<&'v serde_json::Value>, k: &str) -> Option<&'v str> {
    v.and_then(|m| m.get(k)).and_then(|x| x.as_str())
}

fn kubectl_json(text: &str) -> Result<Vec<Entry>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON ({e}); expected {FORMATS}"))?;
    let items: Vec<&serde_json::Value> = match value.get("items").and_then(|i| i.as_array()) {
        Some(items) => items.iter().collect(),
        None => vec![&value],
    };
    let mut out = Vec::new();
    for item in items {
        let kind = item.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        let meta = item.get("metadata");
        let name = field(meta, "name").unwrap_or("");
        let full = match field(meta, "namespace") {
            Some(ns) if !ns.is_empty() && kind != "Node" => format!("{ns}/{name}"),
            _ => name.to_string(),
        };
        let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
            v.and_then(|a| a.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().or_else(|| x.get("ip").and_then(|i| i.as_str())))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (addresses, rank) = match kind {
            "Pod" => {
                let status = item.get("status");
                let mut a = strings(status.and_then(|s| s.get("podIPs")));
                a.extend(field(status, "podIP").map(str::to_string));
                (a, Rank::Pod)
            }
            "Node" => {
                let list = item.get("status").and_then(|s| s.get("addresses")).and_then(|a| a.as_array());
                let a = list
                    .into_iter()
                    .flatten()
                    .filter(|x| matches!(field(Some(x), "type"), Some("InternalIP" | "ExternalIP")))
                    .filter_map(|x| field(Some(x), "address").map(str::to_string))
                    .collect();
                (a, Rank::Node)
            }
            "Service" => {
                let spec = item.get("spec");
                let mut a = strings(spec.and_then(|s| s.get("clusterIPs")));
                a.extend(field(spec, "clusterIP").map(str::to_string));
                a.extend(strings(spec.and_then(|s| s.get("externalIPs"))));
                (a, Rank::Service)
            }
            other => {
                return Err(format!(
                    "a JSON object of kind {:?}; read are Pods, Nodes and Services (a List of them), as {FORMATS}",
                    clean_name(other)
                ))
            }
        };
        for a in addresses.iter().filter_map(|a| addr_or_net(a)) {
            out.extend(entry(a, &full, rank));
        }
    }
    Ok(out)
}

/// True when `addr` lies in `net`/`prefix_len` (same address family only).
pub fn net_contains(net: IpAddr, prefix_len: u8, addr: IpAddr) -> bool {
    match (net, addr) {
        (IpAddr::V4(n), IpAddr::V4(a)) => {
            let len = u32::from(prefix_len.min(32));
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            u32::from(n) & mask == u32::from(a) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(a)) => {
            let len = u32::from(prefix_len.min(128));
            let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
            u128::from(n) & mask == u128::from(a) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_names_file_that_cannot_be_read_says_which_and_why() {
        let dir = std::env::temp_dir().join(format!("tc-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.txt");
        let e = Names::load(std::slice::from_ref(&missing)).unwrap_err();
        assert!(matches!(&e, NamesError::Unreadable { path, .. } if *path == missing), "{e:?}");
        assert!(std::error::Error::source(&e).is_some());
        let big = dir.join("big.txt");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_FILE_BYTES + 1).unwrap();
        let e = Names::load(std::slice::from_ref(&big)).unwrap_err();
        assert!(matches!(&e, NamesError::TooLarge { path } if *path == big), "{e:?}");
        assert_eq!(e.to_string(), format!("--names {}: larger than 64 MiB; not a names file", big.display()));
        let bad = dir.join("bad.txt");
        std::fs::write(&bad, "198.18.0.1 ok\nnot-an-address name\n").unwrap();
        let e = Names::load(std::slice::from_ref(&bad)).unwrap_err();
        assert!(matches!(&e, NamesError::Malformed { path, .. } if *path == bad), "{e:?}");
        assert!(e.to_string().starts_with(&format!("--names {}: ", bad.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn names(text: &str) -> (NamesFormat, Names) {
        let (format, entries) = parse(text).unwrap();
        let mut n = Names::default();
        n.extend(entries);
        (format, n)
    }

    #[test]
    fn hosts_lines_with_comments_aliases_and_networks() {
        let (f, n) = names(
            "# lab\n127.0.0.1 localhost\n198.18.90.42   backend-vpn-0 vpn0 # the VPN pod\n\n\
             2001:db8::1\tv6-host\n198.19.0.0/16 onprem\n",
        );
        assert_eq!(f, NamesFormat::Hosts);
        assert_eq!(n.lookup(ip("198.18.90.42")), Some("backend-vpn-0"));
        assert_eq!(n.lookup(ip("::ffff:198.18.90.42")), Some("backend-vpn-0"));
        assert_eq!(n.lookup(ip("2001:db8::1")), Some("v6-host"));
        assert_eq!(n.lookup(ip("198.19.3.9")), Some("onprem"));
        assert_eq!(n.lookup(ip("::ffff:198.19.3.9")), Some("onprem"));
        assert_eq!(n.lookup(ip("203.0.113.1")), None);
        assert!(parse("198.18.0.1 a\nnot-an-address b\n").unwrap_err().contains("line 2"));
    }

    #[test]
    fn two_column_csv_with_or_without_header() {
        let (f, n) = names("address,name\n198.19.3.9,backend-7d9f\n\"198.19.3.1\",\"node-a\"\n");
        assert_eq!(f, NamesFormat::Csv);
        assert_eq!(n.lookup(ip("198.19.3.9")), Some("backend-7d9f"));
        assert_eq!(n.lookup(ip("198.19.3.1")), Some("node-a"));
        let (_, n) = names("198.19.3.9,=cmd|'/c calc'!A1\n");
        assert_eq!(n.lookup(ip("198.19.3.9")), Some("=cmd|'/c calc'!A1"), "kept; the CSV writer defuses it");
        assert!(parse("198.19.3.9,a,b\n").unwrap_err().contains("two columns"));
    }

    // Column layouts as kubectl prints them (printers of pods, nodes and services).
    const PODS: &str = "\
NAMESPACE     NAME                          READY   STATUS    RESTARTS      AGE   IP             NODE     NOMINATED NODE   READINESS GATES
default       backend-7d9f                  1/1     Running   0             3d    198.19.3.9     node-a   <none>           <none>
vpn           backend-vpn-0                 1/1     Running   2 (5d ago)    9d    198.18.90.42   node-b   <none>           <none>
kube-system   kube-proxy-x2x                1/1     Running   0             9d    198.19.3.1     node-a   <none>           <none>
default       pending-1                     0/1     Pending   0             1m    <none>         <none>   <none>           <none>
";
    const NODES: &str = "\
NAME     STATUS   ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP    OS-IMAGE             KERNEL-VERSION      CONTAINER-RUNTIME
node-a   Ready    control-plane   9d    v1.30.2   198.19.3.1    198.18.200.1   Ubuntu 22.04.4 LTS   5.15.0-113-generic  containerd://1.7.18
node-b   Ready    <none>          9d    v1.30.2   198.19.3.2    <none>         Ubuntu 22.04.4 LTS   5.15.0-113-generic  containerd://1.7.18
";
    const SVC: &str = "\
NAMESPACE     NAME         TYPE           CLUSTER-IP      EXTERNAL-IP     PORT(S)         AGE
default       kubernetes   ClusterIP      198.19.96.1     <none>          443/TCP         9d
default       backend      LoadBalancer   198.19.96.10    198.18.250.7    80:31380/TCP    3d
default       headless     ClusterIP      None            <none>          8080/TCP        3d
";

    #[test]
    fn kubectl_pods_wide_give_namespace_slash_name() {
        let (f, n) = names(PODS);
        assert_eq!(f, NamesFormat::KubectlText);
        assert_eq!(n.lookup(ip("198.19.3.9")), Some("default/backend-7d9f"));
        // RESTARTS "2 (5d ago)" holds spaces: columns go by the header's positions
        assert_eq!(n.lookup(ip("198.18.90.42")), Some("vpn/backend-vpn-0"));
        assert_eq!(n.len(), 3, "the pending pod has no address");
        // without -A there is no NAMESPACE column
        let (_, n) = names("NAME    READY   STATUS    RESTARTS   AGE   IP           NODE\nweb-1   1/1     Running   0          3d    198.19.3.9   node-a\n");
        assert_eq!(n.lookup(ip("198.19.3.9")), Some("web-1"));
    }

    #[test]
    fn kubectl_nodes_and_services_and_their_precedence_over_host_network_pods() {
        let (_, n) = names(NODES);
        assert_eq!(n.lookup(ip("198.19.3.1")), Some("node-a"));
        assert_eq!(n.lookup(ip("198.18.200.1")), Some("node-a"));
        assert_eq!(n.lookup(ip("198.19.3.2")), Some("node-b"));
        let (_, n) = names(SVC);
        assert_eq!(n.lookup(ip("198.19.96.10")), Some("default/backend"));
        assert_eq!(n.lookup(ip("198.18.250.7")), Some("default/backend"));
        assert_eq!(n.len(), 3, "None and <none> name nothing");
        // pods first, nodes second: the node still names its own address
        let mut all = Names::default();
        all.extend(parse(PODS).unwrap().1);
        all.extend(parse(NODES).unwrap().1);
        assert_eq!(all.lookup(ip("198.19.3.1")), Some("node-a"));
        // concatenated outputs, each with its header
        let (_, n) = names(&format!("{NODES}{SVC}"));
        assert_eq!(
            (n.lookup(ip("198.19.3.2")), n.lookup(ip("198.19.96.1"))),
            (Some("node-b"), Some("default/kubernetes"))
        );
    }

    #[test]
    fn kubectl_json_lists_of_pods_nodes_services() {
        let json = r#"{"apiVersion":"v1","kind":"List","items":[
          {"kind":"Pod","metadata":{"name":"backend-7d9f","namespace":"default"},
           "status":{"podIP":"198.19.3.9","podIPs":[{"ip":"198.19.3.9"},{"ip":"2001:db8::9"}]}},
          {"kind":"Node","metadata":{"name":"node-a"},"status":{"addresses":[
             {"type":"InternalIP","address":"198.19.3.1"},{"type":"Hostname","address":"node-a"}]}},
          {"kind":"Service","metadata":{"name":"backend","namespace":"default"},
           "spec":{"clusterIP":"198.19.96.10","clusterIPs":["198.19.96.10","2001:db8::a"]}},
          {"kind":"Service","metadata":{"name":"headless","namespace":"default"},"spec":{"clusterIP":"None"}}
        ]}"#;
        let (f, n) = names(json);
        assert_eq!(f, NamesFormat::KubectlJson);
        assert_eq!(n.lookup(ip("2001:db8::9")), Some("default/backend-7d9f"));
        assert_eq!(n.lookup(ip("198.19.3.1")), Some("node-a"));
        assert_eq!(n.lookup(ip("2001:db8::a")), Some("default/backend"));
        assert_eq!(n.len(), 5);
        assert!(parse(r#"{"kind":"ConfigMap"}"#).unwrap_err().contains("Pods, Nodes and Services"));
    }

    #[test]
    fn unknown_formats_are_refused_naming_the_formats_read() {
        for text in ["hello world\n", "", "{not json", "NAME STATUS\nx y\n"] {
            let e = parse(text).unwrap_err();
            assert!(e.contains("kubectl get pods -A -o wide") && e.contains("address,name"), "{text:?}: {e}");
        }
    }

    #[test]
    fn names_lose_control_characters_and_length() {
        let (_, n) = names("198.18.0.1,\"evil\x1b[31m\u{202e}x\"\n");
        assert_eq!(n.lookup(ip("198.18.0.1")), Some("evil?[31m?x"));
        let long = "a".repeat(1000);
        let (_, n) = names(&format!("198.18.0.1 {long}\n"));
        assert_eq!(n.lookup(ip("198.18.0.1")).unwrap().len(), MAX_NAME_CHARS);
    }

    #[test]
    fn ip_link_output_names_interface_indexes() {
        // real `ip -o link` and `ip -j link` of the lab's node namespace (scripts/lab.sh)
        let text = include_str!("../testdata/names/any-node-ip-o-link.txt");
        let (f, links) = parse_links(text).unwrap().unwrap();
        assert_eq!(f, NamesFormat::IpLinkText);
        assert_eq!(links, [(1, "lo".to_string()), (2, "pod0".into()), (3, "be0".into())]);
        let json = include_str!("../testdata/names/any-node-ip-j-link.json");
        let (f, links) = parse_links(json).unwrap().unwrap();
        assert_eq!(f, NamesFormat::IpLinkJson);
        assert_eq!(links, [(1, "lo".to_string()), (2, "pod0".into()), (3, "be0".into())]);
        // `ip link` without -o: every second line indented
        let plain = "1: lo: <LOOPBACK,UP> mtu 65536 qdisc noqueue\n    link/loopback 00:00:00:00:00:00\n7: vin0@eth0: <UP> mtu 1500\n    link/ether 02:00:00:00:00:07\n";
        assert_eq!(parse_links(plain).unwrap().unwrap().1, [(1, "lo".to_string()), (7, "vin0".into())]);
        // hosts files, kubectl and CSV are not link lists
        for other in ["198.18.0.1 a\n", "address,name\n", PODS, "{\"kind\":\"List\"}", "[1,2]"] {
            assert!(parse_links(other).is_none(), "{other:?}");
        }
        let mut n = Names::default();
        n.add_links(links);
        n.add_links([(2, "other".to_string())]);
        assert_eq!(n.links().get(&2).map(String::as_str), Some("pod0"), "the first given wins");
        assert!(!n.is_empty());
    }

    #[test]
    fn hostile_or_broken_ip_link_output_is_refused_with_its_line() {
        let e = parse_links("1: lo: <LOOPBACK> mtu 1\n2: eth0 <UP>\n").unwrap().unwrap_err();
        assert!(e.starts_with("line 2: ") && e.contains("ip -o link"), "{e}");
        let e = parse_links("1: lo: <LOOPBACK> mtu 1\n\n99999999999: x: <UP>\n").unwrap().unwrap_err();
        assert!(e.starts_with("line 3: "), "{e}");
        let e = parse_links("1: lo: <UP>\n2: (\u{1b}\u{202e}): <UP>\n").unwrap().unwrap_err();
        assert!(e.starts_with("line 2: an interface without a name"), "{e}");
        let e =
            parse_links(r#"[{"ifindex":1,"ifname":"lo"},{"ifindex":-3,"ifname":"x"}]"#).unwrap().unwrap_err();
        assert!(e.starts_with("item 2 "), "{e}");
        let e = parse_links(r#"[{"ifindex":1},{"ifindex":2,"ifname":"x"}]"#).unwrap().unwrap_err();
        assert!(e.starts_with("item 1 "), "{e}");
        // names lose control and bidirectional characters, blanks and parentheses, and length
        let (_, l) = parse_links("4: e\u{7}t(h)0\u{202e}: <UP>\n").unwrap().unwrap();
        assert_eq!(l, [(4, "eth0".to_string())]);
        let long = format!("5: {}: <UP>\n", "x".repeat(300));
        assert_eq!(parse_links(&long).unwrap().unwrap().1[0].1.len(), MAX_LINK_NAME_CHARS);
    }

    #[test]
    fn longest_network_wins_and_exact_beats_networks() {
        let (_, n) = names("198.18.0.0/15 lab\n198.18.90.0/24 vpn-net\n198.18.90.42 vpn-0\n");
        assert_eq!(n.lookup(ip("198.18.90.42")), Some("vpn-0"));
        assert_eq!(n.lookup(ip("198.18.90.7")), Some("vpn-net"));
        assert_eq!(n.lookup(ip("198.19.1.1")), Some("lab"));
    }
}
