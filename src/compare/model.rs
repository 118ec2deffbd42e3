//! The comparison as data: what `compare` gives (`Comparison`, its pairings,
//! expectation results and regressions), the key requests pair by, and the
//! reply path as the comparison names it. The bottom of the room: `diff`,
//! `expect` and `regress` build on it, it names none of them.

use crate::report::wire::WireName;
use crate::report::words::Words;
use crate::verdict::{Proto, ReplyPath, Request};
use serde::{Deserialize, Serialize};

/// The comparison of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The before run's captures, in path order.
    pub before: RunCaptures,
    /// The after run's captures, in path order.
    pub after: RunCaptures,
    /// One entry per service and client, ordered by protocol, service text, client.
    pub pairings: Vec<Pairing>,
    /// One entry per expectation given, in command-line order.
    pub expectations: Vec<ExpectationResult>,
    /// Services and clients whose outcome or reply path got worse, in pairing order.
    #[serde(default)]
    pub regressions: Vec<Regression>,
    /// `--allow-regressions`: regressions are reported but do not fail the comparison.
    #[serde(default)]
    pub regressions_allowed: bool,
    /// Each run's ip-masq-agent intent findings (`at WHERE: message`), from
    /// a JSON report made with `--masq-agent` (see `compare::why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intent_before: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intent_after: Vec<String>,
}

/// The captures of one run, and when its requests were seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCaptures {
    /// Time of the first request at the first capture that saw it (RFC 3339, capture 1's clock).
    pub first_request: Option<String>,
    /// Time of the last request, the same way.
    pub last_request: Option<String>,
    pub captures: Vec<CaptureRef>,
}

/// One capture of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureRef {
    pub label: String,
    /// The capture file (or, for a run read from a CSV/NDJSON report, that report).
    pub file: String,
    /// Positive: this capture's clock runs ahead of capture 1's.
    pub clock_offset_ms: f64,
}

/// Which runs a pairing of service and client has requests in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sides {
    Both,
    OnlyBefore,
    OnlyAfter,
}

impl Sides {
    pub fn wire(self) -> &'static str {
        match self {
            Sides::Both => "both",
            Sides::OnlyBefore => "only-before",
            Sides::OnlyAfter => "only-after",
        }
    }
}

/// One service and client in both runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    pub proto: Proto,
    /// Server endpoint at capture 1.
    pub service: String,
    /// Client address at capture 1 (no port).
    pub client: String,
    pub sides: Sides,
    /// False when the service (any client) has no request in the other run.
    pub service_in_both: bool,
    /// None when this client did not request the service in the before run.
    pub before: Option<SideSummary>,
    pub after: Option<SideSummary>,
    pub source_changed: bool,
    pub reply_path_changed: bool,
    pub outcome_changed: bool,
    /// The identities the backend saw differ (written only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identity_changed: bool,
    /// What got worse (`outcome`, `reply-path`): empty unless the pairing regressed.
    #[serde(default)]
    pub regressed: Vec<Worse>,
    /// One line for the change record.
    pub statement: String,
    /// Expectations (their text) that a request of this pairing breaks.
    pub expectations_broken: Vec<String>,
}

/// One service and client in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    /// Request numbers in that run's report.
    pub requests: Vec<u64>,
    /// Per capture label (path order): source addresses seen there, without ports.
    pub sources: Vec<LabelSources>,
    /// Distinct reply paths, e.g. `same-path`, `reply-lost egress->backend`.
    pub reply_paths: Vec<String>,
    /// Distinct outcomes, e.g. `completed`, `icmp-error 3/13`.
    pub outcomes: Vec<String>,
    /// Distinct identities the backend saw, only for requests where a carrier
    /// was seen, e.g. `proxy-v1 198.18.90.42 added egress->backend (the client)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identities: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelSources {
    pub label: String,
    /// Empty: the requests were not seen at this capture.
    pub sources: Vec<String>,
}

impl SideSummary {
    /// Source addresses at `label` (None when the run has no such capture).
    pub fn sources_at(&self, label: &str) -> Option<&[String]> {
        self.sources.iter().find(|s| s.label == label).map(|s| s.sources.as_slice())
    }
}

/// The pairing key of a request: protocol, server endpoint and client address at capture 1.
pub type PairKey = (Proto, String, String);

/// The service and client of a request: protocol, server endpoint and client
/// address where it was first seen.
pub fn pair_key(r: &Request) -> PairKey {
    let first = r.captures.iter().find(|h| h.seen);
    let server = first.and_then(|h| h.server).map(|e| e.to_string()).unwrap_or_default();
    let client = first.and_then(|h| h.client).map(|e| e.addr.to_string()).unwrap_or_default();
    (r.proto, server, client)
}

/// A reply path as the comparison names it, and in words.
pub(crate) fn reply_path_texts(w: &Words<'_>, r: &Request) -> (String, String) {
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

/// The name of a request's reply path, e.g. `reply-lost egress->backend`.
pub fn reply_path_name(w: &Words<'_>, r: &Request) -> String {
    reply_path_texts(w, r).0
}

/// One request (or, for `unchanged`, one pairing) that breaks an expectation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Breach {
    /// `before` or `after`: the run whose requests are listed.
    pub run: String,
    /// Request numbers in that run's report.
    pub requests: Vec<u64>,
    pub proto: Proto,
    pub service: String,
    pub client: String,
    /// What was found instead, e.g. `source at backend 198.18.90.42`.
    pub found: String,
}

/// Whether one expectation held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectationResult {
    /// The expectation in words, e.g. `source at backend is 198.19.3.17`.
    pub expectation: String,
    pub holds: bool,
    /// Requests (pairings for `unchanged`) it was checked on.
    pub checked: u64,
    pub broken_by: Vec<Breach>,
    /// `--expectations FILE`: the entry of the file this checks (see `compare::predicted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Box<PredictedCheck>>,
}

impl ExpectationResult {
    /// It makes the comparison fail: it did not hold, and it is no entry of
    /// an expectations file that was not exercised or cannot be checked.
    pub fn fails(&self) -> bool {
        !self.holds
            && !self
                .predicted
                .as_ref()
                .is_some_and(|p| matches!(p.status, Status::NotExercised | Status::Unknown))
    }
}

/// How one entry fared against the after run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Every request of the service and client left the host with the source predicted.
    Held,
    /// One did not (the breaches name them).
    Broken,
    /// No request of the service and client in the after run: not a breach.
    NotExercised,
    /// The entry cannot be checked (`unknown` says why): not a breach, never a pass.
    Unknown,
}

impl Status {
    pub fn wire(self) -> &'static str {
        match self {
            Status::Held => "held",
            Status::Broken => "broken",
            Status::NotExercised => "not-exercised",
            Status::Unknown => "unknown",
        }
    }
}

/// One entry of an expectations file, checked: on its `ExpectationResult`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictedCheck {
    /// The expectations file.
    pub file: String,
    /// `--rollback`: today's source was expected, not the one after the change.
    pub rollback: bool,
    pub proto: Proto,
    pub service: String,
    pub client: String,
    pub at: String,
    pub status: Status,
    /// The sources the before run's requests of it left the host with (empty: none seen).
    pub before: Vec<String>,
    /// The source expected leaving the host (null: unknown).
    pub predicted: Option<String>,
    /// The sources the after run's requests left the host with (empty: none seen).
    pub observed: Vec<String>,
    /// The entry's reason (the ConfigMap line or rule that decides it).
    pub reason: String,
    /// Why it could not be checked (status `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

/// Which verdict of a pairing got worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Worse {
    Outcome,
    ReplyPath,
}

impl Worse {
    pub fn wire(self) -> &'static str {
        match self {
            Worse::Outcome => "outcome",
            Worse::ReplyPath => "reply-path",
        }
    }
}

/// One service and client that got worse.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    pub proto: Proto,
    /// Server endpoint at capture 1.
    pub service: String,
    /// Client address at capture 1 (no port).
    pub client: String,
    /// What got worse: `outcome`, `reply-path` or both.
    pub worse: Vec<Worse>,
    /// The before run's requests of this pairing that were good in what got worse.
    pub requests_before: Vec<u64>,
    /// The after run's requests of this pairing that failed in what got worse.
    pub requests_after: Vec<u64>,
    /// Distinct outcomes of the pairing's requests before, e.g. `completed`.
    pub outcome_before: Vec<String>,
    /// Distinct outcomes after, e.g. `no-reply`, `icmp-error 3/13 by 198.19.3.1`.
    pub outcome_after: Vec<String>,
    /// Distinct reply paths before, e.g. `same-path`.
    pub reply_path_before: Vec<String>,
    /// Distinct reply paths after, e.g. `reply-lost egress->backend`.
    pub reply_path_after: Vec<String>,
}
