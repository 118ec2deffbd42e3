//! Regressions: a service and client whose outcome or reply path got worse
//! from the before run to the after run. The order "worse" is explicit and
//! typed: an outcome is good (`completed`), failed (`no-reply`, `reset`,
//! `icmp-error`, `handshake-only`, `data-stopped`) or not ranked (`midstream`:
//! the capture began inside the connection); a reply path is good
//! (`same-path`) or failed (`reply-lost`, `no-reply`, `bypassed`). Takes the
//! requests of one pairing in both runs; gives which of the two got worse and
//! the after requests that did. Never formats a report.

use super::model::{reply_path_name, PairKey};
pub use super::model::{Regression, Worse};
use crate::report::table::outcome_sender_text;
use crate::report::words::Words;
use crate::verdict::{OutcomeKind, ReplyPath, Request};
use std::collections::HashSet;
use std::hash::Hash;

/// Where a verdict stands in the order "worse".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The request did what it was sent for.
    Good,
    /// It did not.
    Failed,
    /// Neither: nothing to rank it by.
    Unranked,
}

/// `completed` is good; `midstream` is not ranked; every other outcome failed.
pub fn outcome_standing(k: OutcomeKind) -> Standing {
    match k {
        OutcomeKind::Completed => Standing::Good,
        OutcomeKind::Midstream => Standing::Unranked,
        OutcomeKind::HandshakeOnly
        | OutcomeKind::Reset
        | OutcomeKind::IcmpError
        | OutcomeKind::NoReply
        | OutcomeKind::DataStopped => Standing::Failed,
    }
}

/// `same-path` is good; every other reply path failed.
pub fn reply_standing(p: ReplyPath) -> Standing {
    match p {
        ReplyPath::SamePath => Standing::Good,
        ReplyPath::ReplyLost | ReplyPath::NoReply | ReplyPath::Bypassed => Standing::Failed,
    }
}

/// One verdict of a request, typed, and its standing.
pub trait Ranked: Copy + Eq + Hash {
    fn standing(self) -> Standing;
}

impl Ranked for OutcomeKind {
    fn standing(self) -> Standing {
        outcome_standing(self)
    }
}

impl Ranked for ReplyPath {
    fn standing(self) -> Standing {
        reply_standing(self)
    }
}

/// Whether one verdict got worse: a request before was good, a request after
/// failed, and either that failure is new (no request before ended that way)
/// or no request after was good any more. So a failure already there before
/// (a flaky check) repeated after is not a regression, and neither is
/// `midstream`.
pub fn got_worse<T: Ranked>(before: &[T], after: &[T]) -> bool {
    let good = |v: &[T]| v.iter().any(|x| x.standing() == Standing::Good);
    let failed =
        |v: &[T]| -> HashSet<T> { v.iter().copied().filter(|x| x.standing() == Standing::Failed).collect() };
    let (failed_before, failed_after) = (failed(before), failed(after));
    good(before) && !failed_after.is_empty() && (!failed_after.is_subset(&failed_before) || !good(after))
}

/// Distinct texts, sorted.
fn distinct(texts: impl Iterator<Item = String>) -> Vec<String> {
    texts.collect::<std::collections::BTreeSet<_>>().into_iter().collect()
}

/// The regression of one service and client (its requests in each run), or
/// None when neither its outcome nor its reply path got worse.
pub fn regression(
    (proto, service, client): &PairKey,
    (b_words, before): (&Words<'_>, &[&Request]),
    (a_words, after): (&Words<'_>, &[&Request]),
) -> Option<Regression> {
    let kinds = |rs: &[&Request]| rs.iter().map(|r| r.outcome.kind).collect::<Vec<_>>();
    let paths = |rs: &[&Request]| rs.iter().map(|r| r.reply.path).collect::<Vec<_>>();
    let mut worse = Vec::new();
    if got_worse(&kinds(before), &kinds(after)) {
        worse.push(Worse::Outcome);
    }
    if got_worse(&paths(before), &paths(after)) {
        worse.push(Worse::ReplyPath);
    }
    if worse.is_empty() {
        return None;
    }
    let stands = |r: &Request, s: Standing| {
        worse.iter().any(|w| match w {
            Worse::Outcome => outcome_standing(r.outcome.kind) == s,
            Worse::ReplyPath => reply_standing(r.reply.path) == s,
        })
    };
    Some(Regression {
        proto: *proto,
        service: service.clone(),
        client: client.clone(),
        requests_before: before.iter().filter(|r| stands(r, Standing::Good)).map(|r| r.request).collect(),
        requests_after: after.iter().filter(|r| stands(r, Standing::Failed)).map(|r| r.request).collect(),
        outcome_before: distinct(before.iter().map(|r| outcome_sender_text(r))),
        outcome_after: distinct(after.iter().map(|r| outcome_sender_text(r))),
        reply_path_before: distinct(before.iter().map(|r| reply_path_name(b_words, r))),
        reply_path_after: distinct(after.iter().map(|r| reply_path_name(a_words, r))),
        worse,
    })
}

/// `outcome and reply path`, `outcome` or `reply path`.
pub fn worse_words(worse: &[Worse]) -> String {
    let words: Vec<&str> = worse
        .iter()
        .map(|w| match w {
            Worse::Outcome => "outcome",
            Worse::ReplyPath => "reply path",
        })
        .collect();
    words.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::passes;
    use crate::report::fixtures::findings;
    use crate::verdict::Proto;
    use OutcomeKind::*;

    #[test]
    fn standing_of_every_outcome_and_reply_path() {
        assert_eq!(outcome_standing(Completed), Standing::Good);
        assert_eq!(outcome_standing(Midstream), Standing::Unranked);
        for k in [HandshakeOnly, Reset, IcmpError, NoReply, DataStopped] {
            assert_eq!(outcome_standing(k), Standing::Failed, "{k:?}");
        }
        assert_eq!(reply_standing(ReplyPath::SamePath), Standing::Good);
        for p in [ReplyPath::ReplyLost, ReplyPath::NoReply, ReplyPath::Bypassed] {
            assert_eq!(reply_standing(p), Standing::Failed, "{p:?}");
        }
    }

    #[test]
    fn worse_is_good_before_and_a_new_failure_or_nothing_good_after() {
        for k in [HandshakeOnly, Reset, IcmpError, NoReply, DataStopped] {
            assert!(got_worse(&[Completed], &[k]), "completed → {k:?}");
            assert!(got_worse(&[Completed, Completed], &[Completed, k]), "one of two → {k:?}");
            assert!(!got_worse(&[k], &[Completed]), "{k:?} → completed is better");
            assert!(!got_worse(&[k], &[k]), "{k:?} both times");
        }
        assert!(!got_worse(&[Completed], &[Completed]));
        // a failure already there before (a flaky check) repeated after, with a success: not worse
        assert!(!got_worse(&[Completed, Reset], &[Completed, Reset]));
        assert!(!got_worse(&[Completed, Reset], &[Reset, Completed, Completed]));
        // ... but nothing succeeds any more: worse
        assert!(got_worse(&[Completed, Reset], &[Reset]));
        // another failure than before: worse
        assert!(got_worse(&[Completed, Reset], &[Completed, NoReply]));
        // failure to failure, midstream either side: not ranked
        assert!(!got_worse(&[HandshakeOnly], &[NoReply]));
        assert!(!got_worse(&[Midstream], &[NoReply]));
        assert!(!got_worse(&[Completed], &[Midstream]));
        assert!(!got_worse::<OutcomeKind>(&[], &[NoReply]));
        assert!(!got_worse(&[Completed], &[]));
        for p in [ReplyPath::ReplyLost, ReplyPath::NoReply, ReplyPath::Bypassed] {
            assert!(got_worse(&[ReplyPath::SamePath], &[p]), "same-path → {p:?}");
            assert!(!got_worse(&[p], &[ReplyPath::SamePath]), "{p:?} → same-path");
        }
        assert!(!got_worse(&[ReplyPath::SamePath], &[ReplyPath::SamePath]));
    }

    #[test]
    fn a_regression_names_the_good_requests_before_and_the_failed_ones_after() {
        let f = findings();
        let words = Words::new(&f);
        let one = |n: u64| f.requests.iter().find(|r| r.request == n).unwrap();
        let key: PairKey = (Proto::Tcp, "198.19.96.10:80".into(), "198.18.90.42".into());
        // request 1 completed on the same path; request 2's reply was lost between egress and backend
        assert_eq!((one(1).outcome.kind, one(1).reply.path), (Completed, ReplyPath::SamePath));
        assert_eq!(one(2).reply.path, ReplyPath::ReplyLost);
        let r = regression(&key, (&words, &[one(1)]), (&words, &[one(1), one(2)])).unwrap();
        assert_eq!(r.worse, [Worse::Outcome, Worse::ReplyPath], "{r:?}");
        assert_eq!(
            (r.outcome_before.as_slice(), r.outcome_after.as_slice()),
            (&["completed".to_string()][..], &["completed".to_string(), "no-reply".to_string()][..])
        );
        assert_eq!((r.requests_before.as_slice(), r.requests_after.as_slice()), (&[1][..], &[2][..]));
        assert_eq!(r.reply_path_before, ["same-path"]);
        assert_eq!(r.reply_path_after, ["reply-lost egress->backend", "same-path"]);
        assert_eq!(
            (r.proto, r.service.as_str(), r.client.as_str()),
            (Proto::Tcp, "198.19.96.10:80", "198.18.90.42")
        );
        // the other way round is better, and the same requests are no change
        assert_eq!(regression(&key, (&words, &[one(1), one(2)]), (&words, &[one(1)])), None);
        assert_eq!(regression(&key, (&words, &[one(1)]), (&words, &[one(1)])), None);
    }

    #[test]
    fn the_comparison_passes_only_without_regression_unless_allowed() {
        let f = findings();
        let mut after = f.clone();
        for r in &mut after.requests {
            r.outcome = crate::verdict::Outcome::plain(NoReply);
            r.reply.path = ReplyPath::NoReply;
        }
        let mut c = super::super::compare(&f, &after);
        assert!(!c.regressions.is_empty());
        assert!(!passes(&c));
        c.regressions_allowed = true;
        assert!(passes(&c));
        let same = super::super::compare(&f, &f);
        assert!(same.regressions.is_empty() && passes(&same));
        assert_eq!(worse_words(&[Worse::Outcome]), "outcome");
        assert_eq!(worse_words(&[Worse::Outcome, Worse::ReplyPath]), "outcome and reply path");
        assert_eq!((Worse::Outcome.wire(), Worse::ReplyPath.wire()), ("outcome", "reply-path"));
    }
}
