//! The change record's prediction, then its proof (issue 49): a run with a
//! proposed state (`--masq-agent-after`, `--rules-after`) writes what it
//! predicts per service and client as an expectations file
//! (`--expectations FILE`); `compare BEFORE AFTER --expectations FILE`
//! checks the after run against it, or, with `--rollback`, against today's
//! sources (the same file proves the rollback). The host's WHERE is placed
//! among the after run's captures as `preview` places it (`why::span_of`),
//! and the source leaving it is read as `preview` reads today's
//! (`why::preview::source_leaving`). Takes findings and the predictions, or a
//! file's text; gives the file, or one `ExpectationResult` per entry.

use super::model::{pair_key, Breach, Comparison, ExpectationResult, PairKey};
pub use super::model::{PredictedCheck, Status};
use crate::verdict::{Findings, Proto, Request};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The version of the file's format: its `tuplecorr_expectations` key.
pub const VERSION: u32 = 1;

/// The most entries a file may hold (a hostile file is refused, not held).
const MAX_ENTRIES: usize = 1_000_000;

/// An expectations file: what a change will do, per service and client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectationsFile {
    /// The format's version ([`VERSION`]).
    pub tuplecorr_expectations: u32,
    /// The tuplecorr that wrote it.
    #[serde(default)]
    pub tuplecorr: String,
    /// The run's capture labels, in path order.
    #[serde(default)]
    pub captures: Vec<String>,
    pub entries: Vec<Entry>,
}

/// What one service and client's requests will leave one host with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub proto: Proto,
    /// The server endpoint where the requests were first seen (as compare pairs them).
    pub service: String,
    /// The client's address where they were first seen.
    pub client: String,
    /// The host (WHERE of `--masq-agent-after` / `--rules-after`).
    pub at: String,
    /// The source leaving the host today; null when its requests leave with several.
    pub source_today: Option<IpAddr>,
    /// The source leaving it after the change; null when unknown (`reason` says why).
    pub source_after: Option<IpAddr>,
    /// The ConfigMap line or rule that decides it, or why it is unknown.
    pub reason: String,
    /// The requests of the run it was predicted from.
    #[serde(default)]
    pub requests: Vec<u64>,
}

impl Entry {
    fn key(&self) -> PairKey {
        (self.proto, self.service.clone(), self.client.clone())
    }
}

/// The file of a run's predictions (`predicted`: by request number), one
/// entry per service, client and host, in that order. Requests of one entry
/// predicted different sources make it unknown, saying which.
pub fn build(
    findings: &Findings,
    predicted: &BTreeMap<u64, crate::why::preview::Predicted>,
) -> ExpectationsFile {
    type Group<'p> = Vec<(u64, &'p crate::why::preview::Predicted)>;
    let mut groups: BTreeMap<(PairKey, String), Group<'_>> = BTreeMap::new();
    for r in &findings.requests {
        if let Some(p) = predicted.get(&r.request) {
            groups.entry((pair_key(r), p.at.clone())).or_default().push((r.request, p));
        }
    }
    let entries = (groups.into_iter())
        .map(|(((proto, service, client), at), list)| {
            let distinct = |f: &dyn Fn(&crate::why::preview::Predicted) -> Option<IpAddr>| {
                let mut out: Vec<(Option<IpAddr>, Vec<u64>)> = Vec::new();
                for (n, p) in &list {
                    match out.iter_mut().find(|(v, _)| *v == f(p)) {
                        Some((_, ids)) => ids.push(*n),
                        None => out.push((f(p), vec![*n])),
                    }
                }
                out
            };
            let words = |values: &[(Option<IpAddr>, Vec<u64>)]| {
                (values.iter())
                    .map(|(v, ids)| {
                        let v = v.map_or_else(|| "unknown".to_string(), |a| a.to_string());
                        let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
                        let noun = if ids.len() == 1 { "request" } else { "requests" };
                        format!("{v} ({noun} {})", ids.join(" "))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let afters = distinct(&|p| p.after);
            let todays = distinct(&|p| Some(p.today));
            let first = list[0].1;
            let unknown = list.iter().find(|(_, p)| p.after.is_none()).map(|(_, p)| p);
            let (source_after, mut reason) = match (unknown, afters.as_slice()) {
                (Some(p), _) => (None, p.reason.clone()),
                (None, [(one, _)]) => (*one, first.reason.clone()),
                (None, several) => (
                    None,
                    format!(
                        "unknown, because its requests are predicted different sources: {}",
                        words(several)
                    ),
                ),
            };
            let source_today = match todays.as_slice() {
                [(one, _)] => *one,
                several => {
                    reason.push_str(&format!(
                        ", and its requests leave with different sources today: {}",
                        words(several)
                    ));
                    None
                }
            };
            Entry {
                proto,
                service,
                client,
                at,
                source_today,
                source_after,
                reason,
                requests: list.iter().map(|(n, _)| *n).collect(),
            }
        })
        .collect();
    ExpectationsFile {
        tuplecorr_expectations: VERSION,
        tuplecorr: env!("CARGO_PKG_VERSION").to_string(),
        captures: findings.captures.iter().map(|c| c.label.clone()).collect(),
        entries,
    }
}

/// The file as written (pretty JSON, one newline at the end).
pub fn to_bytes(file: &ExpectationsFile) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(file).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Reads an expectations file's text (`name`: the file, for the message):
/// the version key first, then every entry; what is wrong is said with the file.
pub fn parse(name: &str, text: &str) -> Result<ExpectationsFile, String> {
    let bad = |why: String| format!("--expectations {name}: {why}");
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "not JSON ({e}); write it with --expectations on a run with --masq-agent-after or --rules-after"
        ))
    })?;
    match value.get("tuplecorr_expectations") {
        None => {
            return Err(bad(
                "not a tuplecorr expectations file (no \"tuplecorr_expectations\" key); write it with \
                 --expectations on a run with --masq-agent-after or --rules-after"
                    .into(),
            ))
        }
        Some(v) if v.as_u64() != Some(u64::from(VERSION)) => {
            return Err(bad(format!("version {v} of the format; this tuplecorr reads version {VERSION}")))
        }
        Some(_) => {}
    }
    let mut value = value;
    let list = match value.get_mut("entries").map(serde_json::Value::take) {
        Some(serde_json::Value::Array(list)) => list,
        _ => return Err(bad("no \"entries\" list".into())),
    };
    if list.len() > MAX_ENTRIES {
        return Err(bad(format!("more than {MAX_ENTRIES} entries")));
    }
    let mut entries = Vec::with_capacity(list.len());
    for (i, v) in list.into_iter().enumerate() {
        let e: Entry = serde_json::from_value(v).map_err(|e| bad(format!("entry {}: {e}", i + 1)))?;
        if e.at.is_empty() || e.service.is_empty() {
            return Err(bad(format!("entry {}: an empty \"at\" or \"service\"", i + 1)));
        }
        entries.push(e);
    }
    value["entries"] = serde_json::Value::Array(Vec::new());
    let mut file: ExpectationsFile = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    file.entries = entries;
    Ok(file)
}

/// The requests of `f` of an entry's service and client that the host of
/// `at` explains (`WHERE@FILE`: those its host recorded around WHERE), and
/// the span WHERE is placed at among `f`'s captures (Err: why it is not).
fn requests_of<'f>(f: &'f Findings, e: &Entry) -> Result<(Vec<&'f Request>, (usize, usize)), String> {
    let labels: Vec<&str> = f.captures.iter().map(|c| c.label.as_str()).collect();
    let (place, on) = match e.at.rsplit_once('@') {
        Some((p, file)) => (p, Some(file)),
        None => (e.at.as_str(), None),
    };
    let Some(span) = crate::why::span_of(place, &labels) else {
        return Err(format!(
            "{place} is no boundary, split capture or capture of the run (it has {})",
            labels.join(", ")
        ));
    };
    if span.0 == span.1 {
        return Err(format!("{place} is one capture: the source leaving it is not seen"));
    }
    let names = |h: &str| {
        on.is_none_or(|file| {
            h.split(", ").any(|x| {
                x == file || std::path::Path::new(x).file_name().is_some_and(|n| n.to_string_lossy() == file)
            })
        })
    };
    let held = |r: &&Request| {
        on.is_none() || (span.0..=span.1).any(|i| r.captures.get(i).and_then(|h| h.host()).is_some_and(names))
    };
    let key = e.key();
    Ok((f.requests.iter().filter(|r| pair_key(r) == key).filter(held).collect(), span))
}

/// The distinct sources these requests leave the span with.
fn leaving(requests: &[&Request], span: (usize, usize)) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in requests {
        if let Some(a) = crate::why::preview::source_leaving(r, span) {
            if !out.contains(&a.to_string()) {
                out.push(a.to_string());
            }
        }
    }
    out
}

/// Checks every entry of `file` (named `name`) on the after run (`--rollback`:
/// today's source is expected); one `ExpectationResult` per entry, each
/// breach also marked on its pairing.
pub fn check(
    c: &mut Comparison,
    (before, after): (&Findings, &Findings),
    file: &ExpectationsFile,
    name: &str,
    rollback: bool,
) {
    for e in &file.entries {
        let want = if rollback { e.source_today } else { e.source_after };
        let shown = want.map_or_else(|| "unknown".to_string(), |a| a.to_string());
        let whose = format!(
            "{} {} from {}",
            e.proto_wire(),
            e.service,
            if e.client.is_empty() { "?" } else { &e.client }
        );
        let text = format!(
            "{whose}: source leaving {} is {shown}, {}",
            e.at,
            if rollback { "as before the change (--rollback)" } else { "as predicted" }
        );
        let before_sources = requests_of(before, e).map(|(rs, span)| leaving(&rs, span)).unwrap_or_default();
        let mut check = PredictedCheck {
            file: name.to_string(),
            rollback,
            proto: e.proto,
            service: e.service.clone(),
            client: e.client.clone(),
            at: e.at.clone(),
            status: Status::Unknown,
            before: before_sources,
            predicted: want.map(|a| a.to_string()),
            observed: Vec::new(),
            reason: e.reason.clone(),
            unknown: None,
        };
        let mut broken_by = Vec::new();
        let mut checked = 0;
        match (want, requests_of(after, e)) {
            (None, _) => {
                let what = if rollback { "today's source" } else { "the source after the change" };
                check.unknown = Some(format!("{what} was not predicted: {}", e.reason));
            }
            (Some(_), Err(why)) => check.unknown = Some(why),
            (Some(_), Ok((rs, _))) if rs.is_empty() => check.status = Status::NotExercised,
            (Some(want), Ok((rs, span))) => {
                checked = rs.len() as u64;
                check.observed = leaving(&rs, span);
                for r in rs {
                    let found = match crate::why::preview::source_leaving(r, span) {
                        Some(a) if a == want => continue,
                        Some(a) => format!("source leaving {} {a}, not {want}", e.at),
                        None => format!("not seen leaving {}", e.at),
                    };
                    let (proto, service, client) = pair_key(r);
                    broken_by.push(Breach {
                        run: "after".into(),
                        requests: vec![r.request],
                        proto,
                        service,
                        client,
                        found,
                    });
                }
                check.status = if broken_by.is_empty() { Status::Held } else { Status::Broken };
            }
        }
        if !broken_by.is_empty() {
            for p in c.pairings.iter_mut() {
                if (p.proto, &p.service, &p.client) == (e.proto, &e.service, &e.client)
                    && !p.expectations_broken.contains(&text)
                {
                    p.expectations_broken.push(text.clone());
                }
            }
        }
        c.expectations.push(ExpectationResult {
            expectation: text,
            holds: check.status == Status::Held,
            checked,
            broken_by,
            predicted: Some(Box::new(check)),
        });
    }
    // Nothing to check is not a pass: a file none of whose entries the after
    // run exercised (or could place) proves nothing, and says so.
    let entries = &c.expectations[c.expectations.len() - file.entries.len()..];
    if !entries
        .iter()
        .any(|e| e.predicted.as_ref().is_some_and(|p| matches!(p.status, Status::Held | Status::Broken)))
    {
        c.expectations.push(ExpectationResult {
            expectation: format!("--expectations {name}: at least one entry checked on the after run"),
            holds: false,
            checked: 0,
            broken_by: Vec::new(),
            predicted: None,
        });
    }
}

impl Entry {
    fn proto_wire(&self) -> &'static str {
        use crate::report::wire::WireName;
        self.proto.wire()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::report::fixtures::findings;
    use crate::why::preview::Predicted;

    fn addr(a: &str) -> IpAddr {
        a.parse().unwrap()
    }

    /// The fixture's requests that cross egress->backend: those of request
    /// 1's service and client are predicted to keep the pod's source, the
    /// others to be masqueraded to 198.19.3.99.
    fn predictions(f: &Findings) -> BTreeMap<u64, Predicted> {
        let mut out = BTreeMap::new();
        for r in f.requests.iter().filter(|r| crate::why::preview::around_span(r, (1, 2)).is_some()) {
            let today = crate::why::preview::source_leaving(r, (1, 2)).unwrap();
            let before = r.captures[1].client.unwrap().addr;
            out.insert(
                r.request,
                Predicted {
                    at: "egress->backend".into(),
                    before,
                    today,
                    after: Some(if pair_key(r) == pair_key(&f.requests[0]) {
                        before
                    } else {
                        addr("198.19.3.99")
                    }),
                    reason: format!("reason {}", r.request),
                },
            );
        }
        out
    }

    #[test]
    fn the_file_round_trips_and_groups_by_service_and_client() {
        let f = findings();
        let p = predictions(&f);
        let file = build(&f, &p);
        assert_eq!(file.tuplecorr_expectations, VERSION);
        assert_eq!(file.captures, ["decap", "egress", "backend"]);
        let n: usize = file.entries.iter().map(|e| e.requests.len()).sum();
        assert_eq!(n, p.len());
        let e1 = file.entries.iter().find(|e| e.requests.contains(&1)).unwrap();
        let r1 = &f.requests[0];
        assert_eq!((e1.proto, e1.service.clone(), e1.client.clone()), pair_key(r1));
        assert_eq!(e1.source_after, Some(p[&1].before));
        assert_eq!(e1.source_today, Some(p[&1].today));
        let text = String::from_utf8(to_bytes(&file)).unwrap();
        assert!(text.starts_with("{\n  \"tuplecorr_expectations\": 1,"), "{text}");
        assert_eq!(parse("x.json", &text).unwrap(), file);
    }

    #[test]
    fn an_unknown_or_disagreeing_prediction_is_written_without_a_source_after() {
        let f = findings();
        let mut p = predictions(&f);
        // the same service and client, predicted two sources
        let mut f2 = f.clone();
        let mut twin = f2.requests[0].clone();
        twin.request = 99;
        f2.requests.push(twin);
        let mut q = p[&1].clone();
        q.after = Some(addr("203.0.113.1"));
        p.insert(99, q);
        let e = build(&f2, &p).entries.into_iter().find(|e| e.requests.contains(&99)).unwrap();
        assert_eq!(e.source_after, None);
        assert!(
            e.reason.contains("different sources") && e.reason.contains("203.0.113.1 (request 99)"),
            "{}",
            e.reason
        );
        p.get_mut(&99).unwrap().after = None;
        p.get_mut(&99).unwrap().reason = "unknown, because X".into();
        let e = build(&f2, &p).entries.into_iter().find(|e| e.requests.contains(&99)).unwrap();
        assert_eq!((e.source_after, e.reason.as_str()), (None, "unknown, because X"));
    }

    #[test]
    fn a_malformed_file_is_refused_naming_it_and_what_is_wrong() {
        let err = |t: &str| parse("exp.json", t).unwrap_err();
        assert!(err("nope").starts_with("--expectations exp.json: not JSON"), "{}", err("nope"));
        assert!(err("{}").contains("no \"tuplecorr_expectations\" key"), "{}", err("{}"));
        assert!(err("{\"tuplecorr_expectations\": 7, \"entries\": []}").contains("version 7"));
        let e = err("{\"tuplecorr_expectations\": 1, \"entries\": [{\"proto\": \"sctp\"}]}");
        assert!(e.starts_with("--expectations exp.json: entry 1: ") && e.contains("sctp"), "{e}");
        assert!(err("{\"tuplecorr_expectations\": 1}").ends_with("no \"entries\" list"));
        let e =
            err("{\"tuplecorr_expectations\": 1, \"entries\": [{\"proto\": \"tcp\", \"service\": \"s\", \
                     \"client\": \"c\", \"at\": \"a\", \"source_today\": \"not-an-address\", \
                     \"source_after\": null, \"reason\": \"r\"}]}");
        assert!(e.contains("invalid IP address"), "{e}");
        assert!(err("[1, 2]").contains("no \"tuplecorr_expectations\""));
    }

    fn run(after: &Findings, file: &ExpectationsFile, rollback: bool) -> Vec<ExpectationResult> {
        let f = findings();
        let mut c = compare(&f, after);
        check(&mut c, (&f, after), file, "exp.json", rollback);
        c.expectations
    }

    #[test]
    fn the_after_run_is_checked_at_the_host_and_rollback_expects_today() {
        let f = findings();
        let file = build(&f, &predictions(&f));
        // the after run is the before run: request 1 (kept) is today's source only if it was not masqueraded
        let results = run(&f, &file, false);
        assert_eq!(results.len(), file.entries.len());
        for (r, e) in results.iter().zip(&file.entries) {
            let p = r.predicted.as_ref().unwrap();
            let changes = e.source_after != e.source_today;
            assert_eq!(p.status, if changes { Status::Broken } else { Status::Held }, "{r:?}");
            assert_eq!(r.holds, !changes);
            if changes {
                let ids: Vec<u64> = r.broken_by.iter().flat_map(|b| b.requests.clone()).collect();
                assert_eq!(ids, e.requests);
                let b = &r.broken_by[0];
                assert_eq!(
                    b.found,
                    format!(
                        "source leaving egress->backend {}, not {}",
                        e.source_today.unwrap(),
                        e.source_after.unwrap()
                    )
                );
                assert!(r.expectation.ends_with(&format!("is {}, as predicted", e.source_after.unwrap())));
            }
            assert_eq!(p.before, p.observed);
        }
        assert!(results.iter().any(|r| !r.holds), "the fixture's request 2 changes");
        // --rollback: today's sources, which the same run has
        let results = run(&f, &file, true);
        assert!(results.iter().all(|r| r.holds && r.predicted.as_ref().unwrap().rollback), "{results:?}");
        // not exercised, unknown, unplaceable
        let mut other = file.clone();
        other.entries[0].client = "192.0.2.1".into();
        other.entries[0].source_after = Some(addr("192.0.2.1"));
        let r = &run(&f, &other, false)[0];
        assert_eq!(
            (r.predicted.as_ref().unwrap().status, r.holds, r.broken_by.len()),
            (Status::NotExercised, false, 0)
        );
        other.entries[0] = file.entries[0].clone();
        other.entries[0].source_after = None;
        let r = &run(&f, &other, false)[0];
        let p = r.predicted.as_ref().unwrap();
        assert_eq!(p.status, Status::Unknown);
        assert!(p.unknown.as_deref().unwrap().ends_with(&file.entries[0].reason), "{p:?}");
        other.entries[0] = file.entries[0].clone();
        other.entries[0].at = "egress->nowhere".into();
        let p = run(&f, &other, false)[0].predicted.clone().unwrap();
        assert_eq!(
            (p.status, p.unknown.as_deref()),
            (
                Status::Unknown,
                Some("egress->nowhere is no boundary, split capture or capture of the run (it has decap, egress, backend)")
            )
        );
        other.entries[0].at = "backend".into();
        let p = run(&f, &other, false)[0].predicted.clone().unwrap();
        assert_eq!(p.status, Status::Unknown);
    }

    #[test]
    fn a_file_no_entry_of_which_is_checked_proves_nothing_and_fails() {
        let f = findings();
        let file = build(&f, &predictions(&f));
        // every entry checked: no extra result
        assert_eq!(run(&f, &file, true).len(), file.entries.len());
        // none exercised (an after run of other clients): one failing result says so
        let mut after = f.clone();
        after.requests.clear();
        let results = run(&after, &file, false);
        assert_eq!(results.len(), file.entries.len() + 1);
        assert!(results[..file.entries.len()].iter().all(|r| !r.fails()), "{results:?}");
        let last = results.last().unwrap();
        assert!(last.fails() && last.predicted.is_none());
        assert_eq!(last.expectation, "--expectations exp.json: at least one entry checked on the after run");
        // one exercised entry is enough
        let mut one = file.clone();
        one.entries.truncate(1);
        one.entries.push(Entry { client: "192.0.2.1".into(), ..file.entries[0].clone() });
        assert_eq!(run(&f, &one, true).len(), 2);
    }

    #[test]
    fn a_request_not_seen_leaving_the_host_breaks_it() {
        let f = findings();
        let file = build(&f, &predictions(&f));
        let mut after = f.clone();
        let n = file.entries[0].requests[0];
        let r = after.requests.iter_mut().find(|r| r.request == n).unwrap();
        r.captures[2].seen = false;
        r.captures[2].client = None;
        let results = run(&after, &file, false);
        let b = results[0].broken_by.iter().find(|b| b.requests == [n]).unwrap();
        assert_eq!(b.found, "not seen leaving egress->backend");
    }
}
