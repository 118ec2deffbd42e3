//! What `--rules`/`--masq-agent` found in each run, carried into the change
//! record: per service and client, the nat rules that made its requests'
//! changes (`rules-node.txt:19 IP-MASQ-AGENT`, as the CSV names them), and
//! the run's ip-masq-agent intent findings. Read from a JSON report (the
//! fields `rule`, `rule_note` of each change and `intent[]`, nothing else
//! held); a run analysed here, or a CSV/NDJSON report, carries none. Takes a
//! report's text and a `Comparison`; gives statements' words.

use super::diff::{pair_key, Comparison};
use crate::verdict::Findings;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// One run's findings: the rule phrases of each request (by request
/// number), and the intent findings' messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WhyRun {
    pub rules: HashMap<u64, Vec<String>>,
    pub intent: Vec<String>,
}

#[derive(Deserialize)]
struct Lite {
    #[serde(default)]
    requests: Vec<LiteRequest>,
    #[serde(default)]
    intent: Vec<LiteIntent>,
}

#[derive(Deserialize)]
struct LiteRequest {
    request: u64,
    source: LiteChanges,
    destination: LiteChanges,
}

#[derive(Deserialize)]
struct LiteChanges {
    changed: Vec<LiteChange>,
}

#[derive(Deserialize)]
struct LiteChange {
    between: String,
    #[serde(default)]
    rule: Option<LiteRule>,
    #[serde(default)]
    rule_note: Option<String>,
}

#[derive(Deserialize)]
struct LiteRule {
    file: String,
    line: u32,
    chain: String,
}

#[derive(Deserialize)]
struct LiteIntent {
    at: String,
    message: String,
}

/// The findings of a JSON report's text; none for any other text (or one
/// without them: a run given no `--rules`).
pub fn from_report(text: &str) -> WhyRun {
    if !(text.contains("\"rule\"") || text.contains("\"rule_note\"") || text.contains("\"intent\"")) {
        return WhyRun::default();
    }
    let Ok(lite) = serde_json::from_str::<Lite>(text) else { return WhyRun::default() };
    let mut out = WhyRun::default();
    for r in lite.requests {
        let sides = [("source", r.source), ("destination", r.destination)];
        let phrases: Vec<String> = (sides.into_iter())
            .flat_map(|(side, c)| c.changed.into_iter().map(move |c| (side, c)))
            .filter_map(|(side, c)| match (c.rule, c.rule_note) {
                (Some(r), _) => Some(format!("{side} at {} by {}:{} {}", c.between, r.file, r.line, r.chain)),
                (None, Some(note)) => Some(format!("{side} at {}: {note}", c.between)),
                (None, None) => None,
            })
            .collect();
        if !phrases.is_empty() {
            out.rules.insert(r.request, phrases);
        }
    }
    out.intent = lite.intent.into_iter().map(|i| format!("at {}: {}", i.at, i.message)).collect();
    out
}

/// `3 requests source at egress->backend by rules-node.txt:19 IP-MASQ-AGENT`,
/// phrases counted over the requests of one pairing, in phrase order.
fn counted(run: &WhyRun, requests: &[u64]) -> Vec<String> {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for r in requests {
        for p in run.rules.get(r).into_iter().flatten() {
            *n.entry(p.as_str()).or_default() += 1;
        }
    }
    (n.into_iter()).map(|(p, k)| format!("{k} {} {p}", if k == 1 { "request" } else { "requests" })).collect()
}

/// Adds to each pairing's statement the rules named for its requests in
/// either run (`; rules before: …, after: …`), and to the comparison the
/// runs' intent findings. Nothing when neither run names any.
pub fn carry(c: &mut Comparison, runs: (&Findings, &Findings), why: (&WhyRun, &WhyRun)) {
    let numbers = |f: &Findings| {
        let mut m: BTreeMap<super::diff::PairKey, Vec<u64>> = BTreeMap::new();
        for r in &f.requests {
            m.entry(pair_key(r)).or_default().push(r.request);
        }
        m
    };
    let (b, a) = (numbers(runs.0), numbers(runs.1));
    for p in &mut c.pairings {
        let key = (p.proto, p.service.clone(), p.client.clone());
        let said = |m: &BTreeMap<super::diff::PairKey, Vec<u64>>, run: &WhyRun| {
            counted(run, m.get(&key).map_or(&[][..], |v| v))
        };
        let (before, after) = (said(&b, why.0), said(&a, why.1));
        if before.is_empty() && after.is_empty() {
            continue;
        }
        let words = |v: &[String]| if v.is_empty() { "no rule named".to_string() } else { v.join(", ") };
        p.statement.push_str(&format!("; rules before: {}, after: {}", words(&before), words(&after)));
    }
    c.intent_before = why.0.intent.clone();
    c.intent_after = why.1.intent.clone();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_report_s_rules_and_intent_are_read_and_nothing_else() {
        let text = r#"{"requests": [
            {"request": 1, "source": {"changed": [{"between": "egress->backend", "kind": "snat",
              "rule": {"file": "r.txt", "line": 19, "table": "nat", "chain": "IP-MASQ-AGENT", "text": "-A …"}}]},
             "destination": {"changed": []}},
            {"request": 2, "source": {"changed": [{"between": "egress->backend", "kind": "snat",
              "rule_note": "not evaluated: -o be0"}]}, "destination": {"changed": []}},
            {"request": 3, "source": {"changed": []}, "destination": {"changed": []}}],
          "intent": [{"at": "egress->backend", "kind": "chain", "message": "ConfigMap keeps 10.0.0.0/8 …"}]}"#;
        let w = from_report(text);
        assert_eq!(w.rules[&1], ["source at egress->backend by r.txt:19 IP-MASQ-AGENT"]);
        assert_eq!(w.rules[&2], ["source at egress->backend: not evaluated: -o be0"]);
        assert!(!w.rules.contains_key(&3));
        assert_eq!(w.intent, ["at egress->backend: ConfigMap keeps 10.0.0.0/8 …"]);
        assert_eq!(counted(&w, &[1, 2, 1]).len(), 2);
        assert_eq!(counted(&w, &[1, 1])[0], "2 requests source at egress->backend by r.txt:19 IP-MASQ-AGENT");
        assert_eq!(from_report("proto,service\n"), WhyRun::default());
        assert_eq!(from_report("{\"requests\": 5, \"intent\": []}"), WhyRun::default(), "not a report");
    }
}
