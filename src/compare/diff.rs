//! Two runs' findings → a comparison per service and client: requests pair by
//! service (protocol + server endpoint at capture 1) and by client (its address
//! at capture 1, not the ephemeral port), so a client on one side only is
//! "only before" / "only after", never a change. Per pairing: the source
//! address at every capture before and after, whether the reply path or outcome
//! changed, and one statement for the change record. Takes two typed
//! `Findings`; gives a `Comparison` (plain data, serialisable). Never reads
//! files and never parses text.

use super::model::reply_path_texts;
pub use super::model::{
    pair_key, reply_path_name, CaptureRef, Comparison, LabelSources, PairKey, Pairing, RunCaptures,
    SideSummary, Sides,
};
use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Findings, Proto, Request};
use std::collections::{BTreeMap, BTreeSet};

/// A request's identity as the comparison names it (addresses without ports).
pub fn identity_name(w: &Words<'_>, i: &crate::verdict::Identity) -> String {
    use crate::verdict::Added;
    let who = if i.preserved { "the client" } else { "not the client" };
    let Some(c) = i.carried else { return format!("no carrier ({who})") };
    let addr = c.addr.map_or_else(|| crate::report::wire::CARRIED_UNKNOWN.to_string(), |a| a.to_string());
    let added = match i.added {
        Some(Added::ClientSide) => format!(" added {}", crate::report::wire::ADDED_CLIENT_SIDE),
        Some(Added::Between(b)) => format!(" added {}", w.between(b)),
        None => String::new(),
    };
    format!("{} {addr}{added} ({who})", c.kind.wire())
}

/// One pairing in one run, and its reply paths in words (for the statement).
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
        requests: requests.iter().map(|r| r.request).collect(),
        sources,
        reply_paths: paths.keys().cloned().collect(),
        outcomes: outcomes.into_iter().collect(),
        identities: requests
            .iter()
            .filter_map(|r| r.identity.as_deref().map(|i| identity_name(w, i)))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    (summary, paths.into_values().collect())
}

/// The captures of a run and the span of its request times.
fn run_captures(f: &Findings) -> RunCaptures {
    let times = f.requests.iter().filter_map(|r| r.captures.iter().find(|h| h.seen).and_then(|h| h.time_ns));
    let (first, last) = times.fold((None, None), |(lo, hi): (Option<i64>, Option<i64>), t| {
        (Some(lo.map_or(t, |x| x.min(t))), Some(hi.map_or(t, |x| x.max(t))))
    });
    RunCaptures {
        first_request: first.map(crate::time::rfc3339),
        last_request: last.map(crate::time::rfc3339),
        captures: f
            .captures
            .iter()
            .map(|c| CaptureRef {
                label: c.label.clone(),
                file: c.file.clone(),
                clock_offset_ms: crate::report::wire::round_ms(crate::report::wire::ms(c.clock_offset_ns)),
            })
            .collect(),
    }
}

fn group(f: &Findings) -> BTreeMap<PairKey, Vec<&Request>> {
    let mut map: BTreeMap<PairKey, Vec<&Request>> = BTreeMap::new();
    for r in &f.requests {
        map.entry(pair_key(r)).or_default().push(r);
    }
    map
}

fn either(values: &[String]) -> String {
    values.join(" or ")
}

fn requests_noun(n: usize) -> String {
    format!("{n} {}", if n == 1 { "request" } else { "requests" })
}

/// Compares two runs service by service and client by client (no expectations).
pub fn compare(before: &Findings, after: &Findings) -> Comparison {
    let (b_info, a_info) = (run_captures(before), run_captures(after));
    let mut labels: Vec<String> = b_info.captures.iter().map(|c| c.label.clone()).collect();
    let after_only: Vec<String> =
        a_info.captures.iter().map(|c| c.label.clone()).filter(|l| !labels.contains(l)).collect();
    labels.extend(after_only);
    let (b_words, a_words) = (Words::new(before), Words::new(after));
    let (b_groups, a_groups) = (group(before), group(after));
    let services = |g: &BTreeMap<PairKey, Vec<&Request>>| -> BTreeSet<(Proto, String)> {
        g.keys().map(|(p, s, _)| (*p, s.clone())).collect()
    };
    let (b_services, a_services) = (services(&b_groups), services(&a_groups));
    let keys: BTreeSet<&PairKey> = b_groups.keys().chain(a_groups.keys()).collect();
    let mut regressions = Vec::new();
    let pairings = keys
        .into_iter()
        .map(|key| {
            let service = (key.0, key.1.clone());
            let in_both = b_services.contains(&service) && a_services.contains(&service);
            let (b_reqs, a_reqs) = (b_groups.get(key), a_groups.get(key));
            let b = b_reqs.map(|rs| summarize(&b_words, rs));
            let a = a_reqs.map(|rs| summarize(&a_words, rs));
            let mut p = pairing(key, in_both, b, a, &labels);
            if let (Some(b), Some(a)) = (b_reqs, a_reqs) {
                if let Some(r) = super::regress::regression(key, (&b_words, b), (&a_words, a)) {
                    p.statement.push_str(&format!(
                        "; a regression: {} worse after",
                        super::regress::worse_words(&r.worse)
                    ));
                    p.regressed = r.worse.clone();
                    regressions.push(r);
                }
            }
            p
        })
        .collect();
    Comparison {
        before: b_info,
        after: a_info,
        pairings,
        expectations: Vec::new(),
        regressions,
        regressions_allowed: false,
        intent_before: Vec::new(),
        intent_after: Vec::new(),
    }
}

fn pairing(
    (proto, service, client): &PairKey,
    service_in_both: bool,
    before: Option<(SideSummary, Vec<String>)>,
    after: Option<(SideSummary, Vec<String>)>,
    labels: &[String],
) -> Pairing {
    let (before, b_words) = before.map_or((None, Vec::new()), |(s, w)| (Some(s), w));
    let (after, a_words) = after.map_or((None, Vec::new()), |(s, w)| (Some(s), w));
    let head = if client.is_empty() {
        format!("request to {service}")
    } else {
        format!("request to {service} from {client}")
    };
    let one_side = |sides: Sides, when: &str, n: usize| {
        let other = if when == "before" { "after" } else { "before" };
        let tail =
            if service_in_both { String::new() } else { format!("; the service was not requested {other}") };
        Pairing {
            proto: *proto,
            service: service.clone(),
            client: client.clone(),
            sides,
            service_in_both,
            statement: format!("{head}: requested only {when} ({}){tail}", requests_noun(n)),
            before: before.clone(),
            after: after.clone(),
            source_changed: false,
            reply_path_changed: false,
            outcome_changed: false,
            identity_changed: false,
            regressed: Vec::new(),
            expectations_broken: Vec::new(),
        }
    };
    let (b, a) = match (&before, &after) {
        (Some(b), Some(a)) => (b, a),
        (Some(b), None) => return one_side(Sides::OnlyBefore, "before", b.requests.len()),
        (None, Some(a)) => return one_side(Sides::OnlyAfter, "after", a.requests.len()),
        (None, None) => return one_side(Sides::OnlyBefore, "before", 0),
    };
    // A source change: addresses seen at a capture on both sides, and different.
    // Requests that stop reaching a capture are said so, not called a change.
    let mut source_parts = Vec::new();
    let (mut lost, mut gained) = (Vec::new(), Vec::new());
    let mut source_changed = false;
    for label in labels {
        match (b.sources_at(label), a.sources_at(label)) {
            (Some(x), Some(y)) if x.is_empty() && !y.is_empty() => gained.push(label.as_str()),
            (Some(x), Some(y)) if !x.is_empty() && y.is_empty() => lost.push(label.as_str()),
            (Some(x), Some(y)) if x != y => {
                source_changed = true;
                source_parts.push(format!(
                    "source at {label} was {} before, {} after",
                    x.join("/"),
                    y.join("/")
                ));
            }
            (Some(_), None) => source_parts.push(format!("{label} not captured after")),
            (None, Some(_)) => source_parts.push(format!("{label} not captured before")),
            _ => {}
        }
    }
    if !lost.is_empty() {
        source_parts.push(format!("not seen at {} after", lost.join(", ")));
    }
    if !gained.is_empty() {
        source_parts.push(format!("seen at {} only after", gained.join(", ")));
    }
    if !source_changed && source_parts.is_empty() {
        source_parts.push("source unchanged at every capture".to_string());
    }
    let reply_path_changed = b.reply_paths != a.reply_paths;
    let outcome_changed = b.outcomes != a.outcomes;
    let mut parts = vec![source_parts.join(", ")];
    if reply_path_changed {
        parts.push(format!("{} before, {} after", either(&b_words), either(&a_words)));
    } else {
        parts.push(format!("{} before and after", either(&b_words)));
    }
    if outcome_changed {
        parts.push(format!("outcome {} before, {} after", either(&b.outcomes), either(&a.outcomes)));
    }
    let identity_changed = b.identities != a.identities;
    let none = |v: &[String]| if v.is_empty() { "no carrier".to_string() } else { either(v) };
    if identity_changed {
        parts.push(format!("identity {} before, {} after", none(&b.identities), none(&a.identities)));
    } else if !b.identities.is_empty() {
        parts.push(format!("identity {} before and after", either(&b.identities)));
    }
    Pairing {
        proto: *proto,
        service: service.clone(),
        client: client.clone(),
        sides: Sides::Both,
        service_in_both,
        statement: format!("{head}: {}", parts.join("; ")),
        before,
        after,
        source_changed,
        reply_path_changed,
        outcome_changed,
        identity_changed,
        regressed: Vec::new(),
        expectations_broken: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::findings;
    use crate::report::wire::endpoint_of;

    fn find<'a>(c: &'a Comparison, service: &str, client: &str) -> &'a Pairing {
        c.pairings.iter().find(|p| p.service == service && p.client == client).unwrap()
    }

    #[test]
    fn identical_runs_change_nothing() {
        let c = compare(&findings(), &findings());
        assert_eq!(c.pairings.len(), 4); // requests 1 and 2: the same service and client
        assert!(c.pairings.iter().all(|p| p.sides == Sides::Both
            && !p.source_changed
            && !p.reply_path_changed
            && !p.outcome_changed));
        let p = find(&c, "198.19.96.10:80", "198.18.90.42");
        assert_eq!(p.before.as_ref().unwrap().requests, [1, 2]);
        assert_eq!(
            p.statement,
            "request to 198.19.96.10:80 from 198.18.90.42: source unchanged at every capture; reply lost between egress and backend or replies on the same path before and after"
        );
        assert_eq!(
            c.before.captures.iter().map(|x| x.label.as_str()).collect::<Vec<_>>(),
            ["decap", "egress", "backend"]
        );
        assert!(c.before.first_request.as_deref().unwrap() < c.before.last_request.as_deref().unwrap());
    }

    #[test]
    fn a_service_on_one_side_says_so() {
        let before = findings();
        let mut after = findings();
        after.requests.retain(|r| r.request != 3);
        let c = compare(&before, &after);
        let p = c.pairings.iter().find(|p| p.proto == Proto::Udp).unwrap();
        assert!(p.after.is_none() && p.sides == Sides::OnlyBefore && !p.service_in_both);
        assert!(!p.source_changed && !p.reply_path_changed && !p.outcome_changed);
        assert_eq!(
            p.statement,
            "request to 198.19.96.11:53 from 198.18.90.43: requested only before (1 request); the service was not requested after"
        );
    }

    #[test]
    fn a_second_client_only_after_is_not_a_source_change() {
        let mut before = findings();
        before.requests.truncate(1);
        let mut after = before.clone();
        let mut second = after.requests[0].clone();
        second.request = 2;
        for h in &mut second.captures[..2] {
            h.client = Some(endpoint_of("198.18.90.43:51999").unwrap());
        }
        after.requests.push(second);
        let c = compare(&before, &after);
        assert_eq!(c.pairings.len(), 2);
        let old = find(&c, "198.19.96.10:80", "198.18.90.42");
        assert!(old.sides == Sides::Both && !old.source_changed, "{old:?}");
        let new = find(&c, "198.19.96.10:80", "198.18.90.43");
        assert!(new.sides == Sides::OnlyAfter && new.service_in_both && !new.source_changed);
        assert_eq!(
            new.statement,
            "request to 198.19.96.10:80 from 198.18.90.43: requested only after (1 request)"
        );
    }

    #[test]
    fn a_masquerade_that_keeps_identity_by_proxy_protocol_is_another_change_than_one_that_loses_it() {
        use crate::report::fixtures::proxied_identity;
        // Before: no masquerade, the backend sees the client itself.
        let mut before = findings();
        before.requests.truncate(1);
        before.requests[0].captures[2].client = Some(endpoint_of("198.18.90.42:51514").unwrap());
        before.requests[0].source.clear();
        // After: masquerade; one run with a PROXY v1 line added at egress->backend, one without.
        let mut lost = findings();
        lost.requests.truncate(1);
        let mut kept = lost.clone();
        kept.requests[0].identity = Some(Box::new(proxied_identity()));
        let (k, l) = (compare(&before, &kept), compare(&before, &lost));
        let (k, l) = (&k.pairings[0], &l.pairings[0]);
        assert!(k.source_changed && l.source_changed);
        assert!(k.identity_changed && !l.identity_changed);
        assert_ne!(k.statement, l.statement);
        assert!(
            k.statement.ends_with(
                "; identity no carrier before, proxy-v1 198.18.90.42 added egress->backend (the client) after"
            ),
            "{}",
            k.statement
        );
        assert_eq!(
            k.after.as_ref().unwrap().identities,
            ["proxy-v1 198.18.90.42 added egress->backend (the client)"]
        );
        let json = serde_json::to_string(&l).unwrap();
        assert!(!json.contains("identit"), "nothing written without a carrier: {json}");
        // The same identity on both sides is said once.
        let same = compare(&kept, &kept);
        assert!(!same.pairings[0].identity_changed);
        assert!(same.pairings[0]
            .statement
            .ends_with("identity proxy-v1 198.18.90.42 added egress->backend (the client) before and after"));
    }

    #[test]
    fn removed_masquerade_reads_as_one_statement() {
        let mut before = findings();
        before.requests.truncate(1);
        let mut after = before.clone();
        let backend = &mut after.requests[0].captures[2];
        backend.client = Some(endpoint_of("198.18.90.42:51514").unwrap());
        after.requests[0].source.clear();
        let c = compare(&before, &after);
        assert_eq!(c.pairings.len(), 1);
        let p = &c.pairings[0];
        assert!(p.source_changed && !p.reply_path_changed && !p.outcome_changed);
        assert_eq!(p.before.as_ref().unwrap().sources_at("backend").unwrap(), ["198.19.3.17"]);
        assert_eq!(p.after.as_ref().unwrap().sources_at("backend").unwrap(), ["198.18.90.42"]);
        assert_eq!(
            p.statement,
            "request to 198.19.96.10:80 from 198.18.90.42: source at backend was 198.19.3.17 before, 198.18.90.42 after; replies on the same path before and after"
        );
    }
}
