//! What a change record says the change did, checked against the after run:
//! `--expect-source ADDR|CIDR|preserved [--at LABEL]`, `--expect-unchanged`,
//! `--expect-reply PATH`, `--expect-outcome KIND`. Takes the expectations, the
//! after run's findings and the comparison; gives one `ExpectationResult` per expectation
//! with the requests (or pairings) that break it. Never formats a report.

use super::model::{pair_key, reply_path_name, Comparison, Pairing, Sides};
pub use super::model::{Breach, ExpectationResult};
use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Findings, OutcomeKind, ReplyPath, Request};
use std::net::IpAddr;

/// What the source seen at a capture must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceWant {
    /// An address in this network (a single address is a /32 or /128).
    Net(IpAddr, u8),
    /// The client's own address (its address at capture 1).
    Preserved,
}

/// One expectation of `compare`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// Every request of the after run has this source at capture `at` (None: the last).
    Source { want: SourceWant, at: Option<String> },
    /// Every service and client has the same source, reply path and outcome before and after.
    Unchanged,
    /// Every request of the after run has this reply path.
    Reply(ReplyPath),
    /// Every request of the after run ends this way.
    Outcome(OutcomeKind),
}

impl Expectation {
    /// The expectation in words, with `at` resolved to a label.
    fn text(&self, at: &str) -> String {
        match self {
            Expectation::Source { want: SourceWant::Preserved, .. } => {
                format!("source at {at} preserved (the client's own address)")
            }
            Expectation::Source { want: SourceWant::Net(a, len), .. } => {
                let host = if a.is_ipv4() { 32 } else { 128 };
                if *len == host {
                    format!("source at {at} is {a}")
                } else {
                    format!("source at {at} in {a}/{len}")
                }
            }
            Expectation::Unchanged => {
                "unchanged: the same source, reply path and outcome for every service and client".into()
            }
            Expectation::Reply(p) => format!("reply path {}", p.wire()),
            Expectation::Outcome(k) => format!("outcome {}", k.wire()),
        }
    }
}

/// A label `--at` names that the after run does not have.
#[derive(Debug, PartialEq, Eq)]
pub struct UnknownLabel(pub String);

fn breach(run: &str, r: &Request, found: String) -> Breach {
    let (proto, service, client) = pair_key(r);
    Breach { run: run.to_string(), requests: vec![r.request], proto, service, client, found }
}

/// Checks every expectation; records each on the comparison and on the
/// pairings its breaches belong to. Errs when `--at` names no capture of the after run.
pub fn check(c: &mut Comparison, after: &Findings, expectations: &[Expectation]) -> Result<(), UnknownLabel> {
    let words = Words::new(after);
    let labels: Vec<&str> = after.captures.iter().map(|c| c.label.as_str()).collect();
    for e in expectations {
        let mut at_label = labels.last().copied().unwrap_or("?").to_string();
        let mut checked = after.requests.len() as u64;
        let broken_by: Vec<Breach> = match e {
            Expectation::Source { want, at } => {
                let i = match at {
                    None => labels.len().saturating_sub(1),
                    // a point's label, or a capture's that is one point
                    Some(l) => match crate::read::points_named(l, &labels)[..] {
                        [i] => i,
                        [] => {
                            return Err(UnknownLabel(format!(
                                "--at {l}: the after run has no capture {l} (it has {})",
                                labels.join(", ")
                            )))
                        }
                        ref several => {
                            let names: Vec<&str> = several.iter().map(|&i| labels[i]).collect();
                            return Err(UnknownLabel(format!(
                                "--at {l}: {l} is split into {} in the after run; name one of them",
                                names.join(", ")
                            )));
                        }
                    },
                };
                at_label = labels.get(i).copied().unwrap_or("?").to_string();
                after.requests.iter().filter_map(|r| source_breach(r, i, &at_label, *want)).collect()
            }
            Expectation::Reply(p) => after
                .requests
                .iter()
                .filter(|r| r.reply.path != *p)
                .map(|r| breach("after", r, format!("reply path {}", reply_path_name(&words, r))))
                .collect(),
            Expectation::Outcome(k) => after
                .requests
                .iter()
                .filter(|r| r.outcome.kind != *k)
                .map(|r| {
                    breach("after", r, format!("outcome {}", crate::report::table::outcome_sender_text(r)))
                })
                .collect(),
            Expectation::Unchanged => {
                checked = c.pairings.len() as u64;
                c.pairings.iter().filter_map(unchanged_breach).collect()
            }
        };
        let text = e.text(&at_label);
        // An expectation on the after run's requests holds for none when there are none.
        let holds = broken_by.is_empty() && checked > 0;
        for b in &broken_by {
            for p in c.pairings.iter_mut() {
                if (p.proto, &p.service, &p.client) == (b.proto, &b.service, &b.client)
                    && !p.expectations_broken.contains(&text)
                {
                    p.expectations_broken.push(text.clone());
                }
            }
        }
        c.expectations.push(ExpectationResult {
            expectation: text,
            holds,
            checked,
            broken_by,
            predicted: None,
        });
    }
    Ok(())
}

fn source_breach(r: &Request, at: usize, label: &str, want: SourceWant) -> Option<Breach> {
    let hop = r.captures.get(at).filter(|h| h.seen);
    let Some(source) = hop.and_then(|h| h.client).map(|e| e.addr) else {
        return Some(breach("after", r, format!("not seen at {label}")));
    };
    let ok = match want {
        SourceWant::Net(net, len) => crate::report::endpoint::net_contains(net, len, source),
        SourceWant::Preserved => pair_key(r).2 == source.to_string(),
    };
    (!ok).then(|| breach("after", r, format!("source at {label} {source}")))
}

fn unchanged_breach(p: &Pairing) -> Option<Breach> {
    let (run, side) = match p.sides {
        Sides::OnlyBefore => ("before", p.before.as_ref()),
        Sides::OnlyAfter => ("after", p.after.as_ref()),
        Sides::Both => ("after", p.after.as_ref()),
    };
    let mut what = Vec::new();
    match p.sides {
        Sides::OnlyBefore => what.push("requested only before".to_string()),
        Sides::OnlyAfter => what.push("requested only after".to_string()),
        Sides::Both => {
            if p.source_changed {
                what.push("source changed".to_string());
            }
            if p.reply_path_changed {
                what.push("reply path changed".to_string());
            }
            if p.outcome_changed {
                what.push("outcome changed".to_string());
            }
        }
    }
    (!what.is_empty()).then(|| Breach {
        run: run.to_string(),
        requests: side.map(|s| s.requests.clone()).unwrap_or_default(),
        proto: p.proto,
        service: p.service.clone(),
        client: p.client.clone(),
        found: what.join(", "),
    })
}

/// True when every expectation held (also when none was given); an entry of
/// an expectations file not exercised or not checkable fails nothing.
pub fn all_hold(c: &Comparison) -> bool {
    !c.expectations.iter().any(ExpectationResult::fails)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::report::fixtures::findings;

    fn run(before: &Findings, after: &Findings, e: Expectation) -> ExpectationResult {
        let mut c = compare(before, after);
        check(&mut c, after, &[e]).unwrap();
        c.expectations.remove(0)
    }

    fn broken(r: &ExpectationResult) -> Vec<u64> {
        r.broken_by.iter().flat_map(|b| b.requests.clone()).collect()
    }

    #[test]
    fn source_address_network_and_preserved_at_a_capture() {
        let f = findings();
        let addr = |a: &str, len| SourceWant::Net(a.parse().unwrap(), len);
        let r = run(&f, &f, Expectation::Source { want: addr("198.19.3.17", 32), at: None });
        assert_eq!(r.expectation, "source at backend is 198.19.3.17");
        assert!(!r.holds);
        assert_eq!(broken(&r), [3, 4, 5]); // 3 not seen at backend, 4 and 5 keep their source
        assert_eq!(r.broken_by[0].found, "not seen at backend");
        assert_eq!(r.broken_by[1].found, "source at backend 198.18.90.44");
        let r = run(&f, &f, Expectation::Source { want: addr("198.18.0.0", 15), at: Some("decap".into()) });
        assert_eq!(r.expectation, "source at decap in 198.18.0.0/15");
        assert_eq!(broken(&r), [5]); // the IPv6 client
        let r = run(&f, &f, Expectation::Source { want: SourceWant::Preserved, at: Some("egress".into()) });
        assert!(r.holds && r.checked == 5, "{r:?}");
        let mut c = compare(&f, &f);
        let err = check(
            &mut c,
            &f,
            &[Expectation::Source { want: SourceWant::Preserved, at: Some("node".into()) }],
        );
        assert_eq!(
            err.unwrap_err().0,
            "--at node: the after run has no capture node (it has decap, egress, backend)"
        );
    }

    #[test]
    fn reply_outcome_and_unchanged() {
        let f = findings();
        let r = run(&f, &f, Expectation::Reply(ReplyPath::SamePath));
        assert!(!r.holds);
        assert_eq!(broken(&r), [2]); // request 2: reply lost between egress and backend
        let r = run(&f, &f, Expectation::Outcome(OutcomeKind::Completed));
        assert_eq!(r.holds, broken(&r).is_empty());
        assert!(run(&f, &f, Expectation::Unchanged).holds);
        let mut after = f.clone();
        after.requests.retain(|r| r.request != 4);
        let r = run(&f, &after, Expectation::Unchanged);
        assert!(!r.holds);
        assert_eq!(r.broken_by.len(), 1);
        assert_eq!(
            (r.broken_by[0].run.as_str(), r.broken_by[0].found.as_str()),
            ("before", "requested only before")
        );
        // nothing to check is not a pass
        let mut empty = f.clone();
        empty.requests.clear();
        assert!(!run(&f, &empty, Expectation::Reply(ReplyPath::SamePath)).holds);
    }

    #[test]
    fn a_broken_expectation_marks_its_pairings() {
        let f = findings();
        let mut c = compare(&f, &f);
        check(&mut c, &f, &[Expectation::Reply(ReplyPath::SamePath)]).unwrap();
        let marked: Vec<&str> = c
            .pairings
            .iter()
            .filter(|p| !p.expectations_broken.is_empty())
            .map(|p| p.service.as_str())
            .collect();
        assert_eq!(marked, ["198.19.96.10:80"]);
        assert!(!all_hold(&c));
    }
}
