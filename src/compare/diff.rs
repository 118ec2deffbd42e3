//! Two runs' findings → a comparison per service (protocol + server endpoint at
//! capture 1): the source address at every capture before and after, whether the
//! reply path or outcome changed, and one statement for the change record.
//! Takes two typed `Findings`; gives a `Comparison` (plain data, serialisable).
//! Never reads files and never parses text.

use crate::report::schema::WireName;
use crate::report::words::Words;
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
    let server =
        r.captures.iter().find(|h| h.seen).and_then(|h| h.server).map(|e| e.to_string()).unwrap_or_default();
    (r.proto, server)
}

/// A reply path as the comparison names it, and in words.
fn reply_path_texts(w: &Words<'_>, r: &Request) -> (String, String) {
    let reply = &r.reply;
    match reply.path {
        ReplyPath::ReplyLost => match reply.lost_between {
            Some(b) => {
                (format!("reply-lost {}", w.between(b)), format!("reply lost between {}", w.between_words(b)))
            }
            None => ("reply-lost".to_string(), "reply lost".to_string()),
        },
        ReplyPath::Bypassed => match reply.bypassed {
            Some(l) => (format!("bypassed {}", w.label(l)), format!("replies bypassed {}", w.label(l))),
            None => ("bypassed".to_string(), "replies bypassed a capture".to_string()),
        },
        ReplyPath::SamePath => (reply.path.wire().to_string(), "replies on the same path".to_string()),
        ReplyPath::NoReply => (reply.path.wire().to_string(), "no reply".to_string()),
    }
}

/// One service in one run, and its reply paths in words (for the statement).
fn summarize(w: &Words<'_>, requests: &[&Request]) -> (SideSummary, Vec<String>) {
    let sources = (0..w.labels.len())
        .map(|i| {
            let set: BTreeSet<String> = requests
                .iter()
                .filter_map(|r| r.captures.get(i))
                .filter(|h| h.seen)
                .filter_map(|h| h.client.map(|c| c.addr.to_string()))
                .collect();
            LabelSources { label: w.label(i).to_string(), sources: set.into_iter().collect() }
        })
        .collect();
    let paths: BTreeMap<String, String> = requests.iter().map(|r| reply_path_texts(w, r)).collect();
    let outcomes: BTreeSet<String> =
        requests.iter().map(|r| crate::report::table::outcome_sender_text(r)).collect();
    let summary = SideSummary {
        requests: requests.len() as u64,
        sources,
        reply_paths: paths.keys().cloned().collect(),
        outcomes: outcomes.into_iter().collect(),
    };
    (summary, paths.into_values().collect())
}

fn labels_of(f: &Findings) -> Vec<String> {
    f.captures.iter().map(|c| c.label.clone()).collect()
}

fn group(f: &Findings) -> BTreeMap<(Proto, String), Vec<&Request>> {
    let mut map: BTreeMap<(Proto, String), Vec<&Request>> = BTreeMap::new();
    for r in &f.requests {
        map.entry(service_of(r)).or_default().push(r);
    }
    map
}

fn either(values: &[String]) -> String {
    values.join(" or ")
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
    let (b_words, a_words) = (Words::new(before), Words::new(after));
    let (b_groups, a_groups) = (group(before), group(after));
    let keys: BTreeSet<&(Proto, String)> = b_groups.keys().chain(a_groups.keys()).collect();
    let services = keys
        .into_iter()
        .map(|key| {
            let b = b_groups.get(key).map(|rs| summarize(&b_words, rs));
            let a = a_groups.get(key).map(|rs| summarize(&a_words, rs));
            service_change(key, b, a, &labels)
        })
        .collect();
    Comparison { before_labels, after_labels, services }
}

fn service_change(
    (proto, service): &(Proto, String),
    before: Option<(SideSummary, Vec<String>)>,
    after: Option<(SideSummary, Vec<String>)>,
    labels: &[String],
) -> ServiceChange {
    let (before, b_words) = before.map_or((None, Vec::new()), |(s, w)| (Some(s), w));
    let (after, a_words) = after.map_or((None, Vec::new()), |(s, w)| (Some(s), w));
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
        parts.push(format!("{} before, {} after", either(&b_words), either(&a_words)));
    } else {
        parts.push(format!("{} before and after", either(&b_words)));
    }
    if outcome_changed {
        parts.push(format!("outcome {} before, {} after", either(&b.outcomes), either(&a.outcomes)));
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
        backend.client = Some(crate::report::schema::endpoint_of("198.18.90.42:51514").unwrap());
        after.requests[0].source.clear();
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
