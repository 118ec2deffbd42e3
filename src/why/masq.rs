//! The ip-masq-agent's configuration: a ConfigMap as `kubectl get cm -n
//! kube-system ip-masq-agent -o yaml` (or `-o json`) prints it, or its
//! `config` key alone (YAML or JSON). A small strict reader of just this shape
//! (no YAML crate: the maintained ones pull in a whole YAML 1.2 engine for four
//! keys, and a strict reader can name each line it refuses). Gives the
//! intended behaviour per destination: masquerade unless in
//! `nonMasqueradeCIDRs`; link-local per `masqLinkLocal`(`IPv6`).

use super::model::Cidr;
use super::text::{self, Notes};
use std::net::IpAddr;

/// What the ConfigMap asks of the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasqConfig {
    pub file: String,
    /// Each CIDR with the line it was read from; None: the key is absent
    /// (the agent's defaults, which depend on its version: not evaluated).
    pub non_masquerade: Option<Vec<(Cidr, u32)>>,
    pub masq_link_local: bool,
    pub masq_link_local_v6: bool,
    pub resync_interval: Option<String>,
}

/// The agent's intent for one destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    Masquerade,
    /// Kept unmasqueraded: in this CIDR (or link-local).
    Keep(Cidr),
}

impl MasqConfig {
    /// The intent for `dst`; None when the CIDRs are the agent's defaults.
    pub fn intent(&self, dst: IpAddr) -> Option<Intent> {
        let ll4 = Cidr::parse("169.254.0.0/16")?;
        let ll6 = Cidr::parse("fe80::/10")?;
        if ll4.contains(dst) && !self.masq_link_local {
            return Some(Intent::Keep(ll4));
        }
        if ll6.contains(dst) && !self.masq_link_local_v6 {
            return Some(Intent::Keep(ll6));
        }
        let list = self.non_masquerade.as_ref()?;
        Some(match list.iter().find(|(c, _)| c.contains(dst)) {
            Some((c, _)) => Intent::Keep(*c),
            None => Intent::Masquerade,
        })
    }
}

/// Reads a ConfigMap (YAML or JSON) or its `config` alone.
pub fn parse(file: &str, input: &str) -> (Option<MasqConfig>, Notes) {
    let mut notes = Notes::new(file);
    let lines = text::lines(input, &mut notes);
    let first = lines.iter().map(|(_, l)| l.trim()).find(|l| !l.is_empty() && !l.starts_with('#'));
    if first.is_some_and(|l| l.starts_with('{')) {
        return (json(file, input, &mut notes), notes);
    }
    // a ConfigMap: `data:` at the top, `config:` under it
    let is_map = lines.iter().any(|(_, l)| l.starts_with("data:") || l.starts_with("kind: ConfigMap"));
    let config_lines: Vec<(u32, String)> = if is_map {
        match config_key(&lines, &mut notes) {
            Some(c) => c,
            None => return (None, notes),
        }
    } else {
        lines.iter().map(|(n, l)| (*n, l.to_string())).collect()
    };
    if config_lines.iter().map(|(_, l)| l.trim()).find(|l| !l.is_empty()).is_some_and(|l| l.starts_with('{'))
    {
        let text: String = config_lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
        return (json(file, &text, &mut notes), notes);
    }
    (Some(config(file, &config_lines, &mut notes)), notes)
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

/// The lines of `data.config` (a block scalar `|`, or a quoted one-line value).
fn config_key(lines: &[(u32, &str)], notes: &mut Notes) -> Option<Vec<(u32, String)>> {
    let data = lines.iter().position(|(_, l)| l.trim_end() == "data:");
    let Some(data) = data else {
        notes.line(0, "a ConfigMap without `data:`: no config read");
        return None;
    };
    let mut k = data + 1;
    while k < lines.len() {
        let (n, l) = lines[k];
        if !l.trim().is_empty() && indent(l) == 0 {
            break;
        }
        let t = l.trim();
        if let Some(v) = t.strip_prefix("config:") {
            let v = v.trim();
            let ind = indent(l);
            if v.starts_with('|') || v.starts_with('>') {
                if v.starts_with('>') {
                    notes.line(n, "a folded scalar (>) is read as lines");
                }
                let mut out = Vec::new();
                for &(m, x) in &lines[k + 1..] {
                    if !x.trim().is_empty() && indent(x) <= ind {
                        break;
                    }
                    out.push((m, x.to_string()));
                }
                return Some(out);
            }
            if let Some(q) = v.strip_prefix('"') {
                // a JSON-compatible double-quoted string
                return match serde_json::from_str::<String>(&format!("\"{q}")) {
                    Ok(s) => Some(s.lines().map(|x| (n, x.to_string())).collect()),
                    Err(_) => {
                        notes.line(n, "config: a quoted value not read");
                        None
                    }
                };
            }
            if let Some(q) = v.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')) {
                return Some(vec![(n, q.replace("''", "'"))]);
            }
            return Some(vec![(n, v.to_string())]);
        }
        k += 1;
    }
    notes.line(0, "no `config:` key under `data:`: no config read");
    None
}

/// The config's YAML: four keys, a block or flow list for the CIDRs.
fn config(file: &str, lines: &[(u32, String)], notes: &mut Notes) -> MasqConfig {
    let mut c = MasqConfig {
        file: file.to_string(),
        non_masquerade: None,
        masq_link_local: false,
        masq_link_local_v6: false,
        resync_interval: None,
    };
    let base = lines.iter().map(|(_, l)| l).find(|l| !l.trim().is_empty()).map_or(0, |l| indent(l));
    let mut in_list = false;
    for (n, raw) in lines {
        let l = raw.split(" #").next().unwrap_or("").trim_end();
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if in_list && indent(l) >= base {
            if let Some(item) = t.strip_prefix("- ").or(t.strip_prefix('-')) {
                push_cidr(&mut c, unquote(item.trim()), *n, notes);
                continue;
            }
        }
        in_list = false;
        if indent(l) != base {
            notes.line(*n, "indented unlike the config's keys");
            continue;
        }
        let Some((key, value)) = t.split_once(':') else {
            notes.line(*n, "not `key: value`");
            continue;
        };
        let value = value.trim();
        match key {
            "nonMasqueradeCIDRs" => {
                c.non_masquerade = Some(Vec::new());
                if value.is_empty() {
                    in_list = true;
                } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                    for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                        push_cidr(&mut c, unquote(item), *n, notes);
                    }
                } else {
                    notes.line(*n, "nonMasqueradeCIDRs is neither a list nor [ … ]");
                }
            }
            "masqLinkLocal" | "masqLinkLocalIPv6" => match unquote(value) {
                "true" => set_bool(&mut c, key, true),
                "false" => set_bool(&mut c, key, false),
                other => notes.line(*n, format!("{key}: {other:?} is not true or false")),
            },
            "resyncInterval" => c.resync_interval = Some(unquote(value).to_string()),
            other => notes.line(*n, format!("unknown key {other:?}")),
        }
    }
    c
}

fn set_bool(c: &mut MasqConfig, key: &str, v: bool) {
    if key == "masqLinkLocal" {
        c.masq_link_local = v;
    } else {
        c.masq_link_local_v6 = v;
    }
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        .unwrap_or(s)
}

fn push_cidr(c: &mut MasqConfig, item: &str, n: u32, notes: &mut Notes) {
    match Cidr::parse(item).filter(|_| item.contains('/')) {
        Some(cidr) => c.non_masquerade.get_or_insert_with(Vec::new).push((cidr.network(), n)),
        None => notes.line(n, format!("{item:?} is not a CIDR")),
    }
}

/// A ConfigMap or config as JSON.
fn json(file: &str, input: &str, notes: &mut Notes) -> Option<MasqConfig> {
    let v: serde_json::Value = match serde_json::from_str(input) {
        Ok(v) => v,
        Err(e) => {
            let last = u32::try_from(input.lines().count()).unwrap_or(u32::MAX);
            notes.line(u32::try_from(e.line()).unwrap_or(0).min(last), format!("not JSON: {e}"));
            return None;
        }
    };
    let v = match v.pointer("/data/config").and_then(|c| c.as_str()) {
        Some(inner) => {
            let (c, inner_notes) = parse(file, inner);
            for (_, m) in inner_notes.list {
                notes.line(0, format!("data.config: {m}"));
            }
            return c;
        }
        None => v,
    };
    let mut c = MasqConfig {
        file: file.to_string(),
        non_masquerade: None,
        masq_link_local: v.get("masqLinkLocal").and_then(|b| b.as_bool()).unwrap_or(false),
        masq_link_local_v6: v.get("masqLinkLocalIPv6").and_then(|b| b.as_bool()).unwrap_or(false),
        resync_interval: v.get("resyncInterval").and_then(|s| s.as_str()).map(str::to_string),
    };
    if let Some(list) = v.get("nonMasqueradeCIDRs").and_then(|l| l.as_array()) {
        c.non_masquerade = Some(Vec::new());
        for item in list {
            match item.as_str() {
                Some(s) => push_cidr(&mut c, s, 0, notes),
                None => notes.line(0, format!("nonMasqueradeCIDRs: {item} is not a string")),
            }
        }
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CM: &str = "apiVersion: v1\ndata:\n  config: |\n    nonMasqueradeCIDRs:\n      - 10.0.0.0/8\n      - \"198.18.0.0/15\"\n    masqLinkLocal: false\n    resyncInterval: 60s\nkind: ConfigMap\nmetadata:\n  name: ip-masq-agent\n  namespace: kube-system\n";

    #[test]
    fn a_configmap_as_kubectl_prints_it_gives_the_cidrs_with_their_lines() {
        let (c, notes) = parse("cm.yaml", CM);
        assert!(notes.list.is_empty(), "{:?}", notes.messages());
        let c = c.unwrap();
        let cidrs: Vec<(String, u32)> =
            c.non_masquerade.clone().unwrap().iter().map(|(c, n)| (c.to_string(), *n)).collect();
        assert_eq!(cidrs, [("10.0.0.0/8".to_string(), 5), ("198.18.0.0/15".to_string(), 6)]);
        assert_eq!(c.resync_interval.as_deref(), Some("60s"));
        assert_eq!(
            c.intent("10.20.30.40".parse().unwrap()),
            Some(Intent::Keep(Cidr::parse("10.0.0.0/8").unwrap()))
        );
        assert_eq!(c.intent("203.0.113.9".parse().unwrap()), Some(Intent::Masquerade));
        assert!(matches!(c.intent("169.254.169.254".parse().unwrap()), Some(Intent::Keep(_))));
    }

    #[test]
    fn the_config_alone_json_and_flow_lists_read_the_same() {
        let alone = "nonMasqueradeCIDRs: [10.0.0.0/8, 198.18.0.0/15]\nmasqLinkLocal: true\n";
        let json = r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"config":"nonMasqueradeCIDRs:\n  - 10.0.0.0/8\n  - 198.18.0.0/15\nmasqLinkLocal: true\n"}}"#;
        let raw = r#"{"nonMasqueradeCIDRs": ["10.0.0.0/8", "198.18.0.0/15"], "masqLinkLocal": true}"#;
        let quoted = "data:\n  config: \"nonMasqueradeCIDRs:\\n  - 10.0.0.0/8\\n  - 198.18.0.0/15\\nmasqLinkLocal: true\\n\"\n";
        for text in [alone, json, raw, quoted] {
            let (c, notes) = parse("c", text);
            assert!(notes.list.is_empty(), "{text}: {:?}", notes.messages());
            let c = c.unwrap();
            let cidrs: Vec<String> = c.non_masquerade.unwrap().iter().map(|(c, _)| c.to_string()).collect();
            assert_eq!(cidrs, ["10.0.0.0/8", "198.18.0.0/15"], "{text}");
            assert!(c.masq_link_local, "{text}");
        }
    }

    #[test]
    fn bad_lines_are_named_and_absent_cidrs_leave_the_intent_not_evaluated() {
        let text = "nonMasqueradeCIDRs:\n  - 10.0.0.0/8\n  - 10.0.0.1\n  - banana\nmasqLinkLocal: maybe\nfoo: 1\n  odd: 2\n";
        let (c, notes) = parse("c", text);
        let lines: Vec<u32> = notes.list.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [3, 4, 5, 6, 7], "{:?}", notes.messages());
        assert_eq!(c.unwrap().non_masquerade.unwrap().len(), 1);
        let (c, _) = parse("c", "masqLinkLocal: false\n");
        assert_eq!(c.unwrap().intent("203.0.113.9".parse().unwrap()), None);
        let (c, notes) = parse("c", "kind: ConfigMap\nmetadata:\n  name: x\n");
        assert!(c.is_none());
        assert_eq!(notes.messages(), ["c: a ConfigMap without `data:`: no config read"]);
        assert!(parse("c", "{not json").0.is_none());
    }
}
