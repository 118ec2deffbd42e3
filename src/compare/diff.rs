//! Two runs' findings → a comparison per service (protocol + server endpoint at
//! capture 1): the source address at every capture before and after, whether the
//! reply path or outcome changed, and one statement for the change record.
//! Takes two `Findings`; gives a `Comparison` (plain data, serialisable).
//! Never reads files.

use crate::report::endpoint::address_text;
use crate::report::summary::boundary_words;
use crate::verdict::{Findings, Proto, ReplyPath, Request};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The comparison of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Capture labels of the before run, in path order.
    pub before_labels: Vec<String>,
    /// Capture labels of the after run, in path order.
    pub after_labels: Vec<String>,
    /// One entry per service, ordered by protocol, then service text.
    pub services: Vec<ServiceChange>,
}

/// One service in both runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceChange {
    pub proto: Proto,
    /// Server endpoint at capture 1.
    pub service: String,
    /// None when the service was not requested in the before run.
    pub before: Option<SideSummary>,
    pub after: Option<SideSummary>,
    pub source_changed: bool,
    pub reply_path_changed: bool,
    pub outcome_changed: bool,
    /// One line for the change record.
    pub statement: String,
}

/// One service in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    pub requests: u64,
    /// Per capture label (path order): source addresses seen there, without ports.
    pub sources: Vec<LabelSources>,
    /// Distinct reply paths, e.g. `same-path`, `reply-lost egress->backend`.
    pub reply_paths: Vec<String>,
    /// Distinct outcomes, e.g. `completed`, `icmp-error 3/13`.
    pub outcomes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelSources {
    pub label: String,
    /// Empty: the service's requests were not seen at this capture.
    pub sources: Vec<String>,
}

impl SideSummary {
    /// Source addresses at `label` (None when the run has no such capture).
    pub fn sources_at(&self, label: &str) -> Option<&[String]> {
        self.sources.iter().find(|s| s.label == label).map(|s| s.sources.as_slice())
    }
}

/// The service key of a request: protocol and server endpoint at capture 1.
pub fn service_of(r: &Request) -> (Proto, String) {
    let server = r.captures.iter().find(|h| h.seen).and_then(|h| h.server.clone()).unwrap_or_default();
    (r.proto, server)
}

fn reply_path_text(r: &Request) -> String {
    match r.reply.path {
        ReplyPath::ReplyLost => match &r.reply.lost_between {
            Some(b) => format!("reply-lost {b}"),
            None => "reply-lost".to_string(),
        },
        ReplyPath::Bypassed => match &r.reply.bypassed {
            Some(l) => format!("bypassed {l}"),
            None => "bypassed".to_string(),
        },
        p => p.name().to_string(),
    }
}

fn summarize(requests: &[&Request], labels: &[String]) -> SideSummary {
    let sources = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let set: BTreeSet<String> = requests
                .iter()
                .filter_map(|r| crate::report::csv::hop_at(r, i, label))
                .filter(|h| h.seen)
                .filter_map(|h| h.client.as_deref().map(address_text))
                .collect();
            LabelSources { label: label.clone(), sources: set.into_iter().collect() }
        })
        .collect();
    let distinct = |f: fn(&Request) -> String| -> Vec<String> {
        requests.iter().map(|r| f(r)).collect::<BTreeSet<_>>().into_iter().collect()
    };
    SideSummary {
        requests: requests.len() as u64,
        sources,
        reply_paths: distinct(reply_path_text),
        outcomes: distinct(crate::report::table::outcome_sender_text),
    }
}

fn labels_of(f: &Findings) -> Vec<String> {
    if !f.captures.is_empty() {
        return f.captures.iter().map(|c| c.label.clone()).collect();
    }
    f.requests.first().map(|r| r.captures.iter().map(|h| h.label.clone()).collect()).unwrap_or_default()
}

fn group(f: &Findings) -> BTreeMap<(Proto, String), Vec<&Request>> {
    let mut map: BTreeMap<(Proto, String), Vec<&Request>> = BTreeMap::new();
    for r in &f.requests {
        map.entry(service_of(r)).or_default().push(r);
    }
    map
}

fn reply_words(path: &str) -> String {
    let (kind, place) = path.split_once(' ').unwrap_or((path, ""));
    match kind {
        "same-path" => "replies on the same path".to_string(),
        "reply-lost" if !place.is_empty() => format!("reply lost between {}", boundary_words(place)),
        "reply-lost" => "reply lost".to_string(),
        "bypassed" if !place.is_empty() => format!("replies bypassed {place}"),
        "bypassed" => "replies bypassed a capture".to_string(),
        "no-reply" => "no reply".to_string(),
        other => other.to_string(),
    }
}

fn either(values: &[String], words: impl Fn(&str) -> String) -> String {
    values.iter().map(|v| words(v)).collect::<Vec<_>>().join(" or ")
}

fn addresses(list: &[String]) -> String {
    if list.is_empty() {
        "not seen".to_string()
    } else {
        list.join("/")
    }
}

/// Compares two runs service by service.
pub fn compare(before: &Findings, after: &Findings) -> Comparison {
    let before_labels = labels_of(before);
    let after_labels = labels_of(after);
    let mut labels = before_labels.clone();
    labels.extend(after_labels.iter().filter(|l| !before_labels.contains(l)).cloned());
    let (b_groups, a_groups) = (group(before), group(after));
    let keys: BTreeSet<&(Proto, String)> = b_groups.keys().chain(a_groups.keys()).collect();
    let services = keys
        .into_iter()
        .map(|key| {
            let b = b_groups.get(key).map(|rs| summarize(rs, &before_labels));
            let a = a_groups.get(key).map(|rs| summarize(rs, &after_labels));
            service_change(key, b, a, &labels)
        })
        .collect();
    Comparison { before_labels, after_labels, services }
}

fn service_change(
    (proto, service): &(Proto, String),
    before: Option<SideSummary>,
    after: Option<SideSummary>,
    labels: &[String],
) -> ServiceChange {
    let head = format!("request to {service}");
    let (b, a) = match (&before, &after) {
        (Some(b), Some(a)) => (b, a),
        (one, _) => {
            let (when, n) = match (one, &after) {
                (Some(b), _) => ("before", b.requests),
                (None, Some(a)) => ("after", a.requests),
                (None, None) => ("in neither run", 0),
            };
            let noun = if n == 1 { "request" } else { "requests" };
            return ServiceChange {
                proto: *proto,
                service: service.clone(),
                statement: format!("{head}: requested only {when} ({n} {noun})"),
                before,
                after,
                source_changed: false,
                reply_path_changed: false,
                outcome_changed: false,
            };
        }
    };
    let mut source_parts = Vec::new();
    for label in labels {
        match (b.sources_at(label), a.sources_at(label)) {
            (Some(x), Some(y)) if x != y => source_parts.push(format!(
                "source at {label} was {} before, {} after",
                addresses(x),
                addresses(y)
            )),
            (Some(_), None) => source_parts.push(format!("{label} not captured after")),
            (None, Some(_)) => source_parts.push(format!("{label} not captured before")),
            _ => {}
        }
    }
    let source_changed =
        labels.iter().any(|l| matches!((b.sources_at(l), a.sources_at(l)), (Some(x), Some(y)) if x != y));
    let reply_path_changed = b.reply_paths != a.reply_paths;
    let outcome_changed = b.outcomes != a.outcomes;
    let mut parts = Vec::new();
    if source_parts.is_empty() {
        parts.push("source unchanged at every capture".to_string());
    } else {
        parts.push(source_parts.join(", "));
    }
    if reply_path_changed {
        parts.push(format!(
            "{} before, {} after",
            either(&b.reply_paths, reply_words),
            either(&a.reply_paths, reply_words)
        ));
    } else {
        parts.push(format!("{} before and after", either(&b.reply_paths, reply_words)));
    }
    if outcome_changed {
        parts.push(format!(
            "outcome {} before, {} after",
            either(&b.outcomes, str::to_string),
            either(&a.outcomes, str::to_string)
        ));
    }
    ServiceChange {
        proto: *proto,
        service: service.clone(),
        statement: format!("{head}: {}", parts.join("; ")),
        before,
        after,
        source_changed,
        reply_path_changed,
        outcome_changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;

    #[test]
    fn identical_runs_change_nothing() {
        let c = compare(&findings(), &findings());
        assert_eq!(c.services.len(), 4); // requests 1 and 2 share 198.19.96.10:80
        assert!(c.services.iter().all(|s| !s.source_changed && !s.reply_path_changed && !s.outcome_changed));
        let s = c.services.iter().find(|s| s.service == "198.19.96.10:80").unwrap();
        assert_eq!(s.before.as_ref().unwrap().requests, 2);
        assert_eq!(
            s.statement,
            "request to 198.19.96.10:80: source unchanged at every capture; reply lost between egress and backend or replies on the same path before and after"
        );
    }

    #[test]
    fn services_pair_by_protocol_and_server_at_capture_one() {
        let before = findings();
        let mut after = findings();
        after.requests.retain(|r| r.request != 3);
        let c = compare(&before, &after);
        let s = c.services.iter().find(|s| s.proto == Proto::Udp).unwrap();
        assert!(s.after.is_none());
        assert_eq!(s.statement, "request to 198.19.96.11:53: requested only before (1 request)");
    }

    #[test]
    fn removed_masquerade_reads_as_one_statement() {
        let mut before = findings();
        before.requests.truncate(1);
        let mut after = before.clone();
        let backend = &mut after.requests[0].captures[2];
        backend.client = Some("198.18.90.42:51514".into());
        after.requests[0].source.changed.clear();
        let c = compare(&before, &after);
        assert_eq!(c.services.len(), 1);
        let s = &c.services[0];
        assert!(s.source_changed && !s.reply_path_changed && !s.outcome_changed);
        assert_eq!(s.before.as_ref().unwrap().sources_at("backend").unwrap(), ["198.19.3.17"]);
        assert_eq!(s.after.as_ref().unwrap().sources_at("backend").unwrap(), ["198.18.90.42"]);
        assert_eq!(
            s.statement,
            "request to 198.19.96.10:80: source at backend was 198.19.3.17 before, 198.18.90.42 after; replies on the same path before and after"
        );
    }
}
