//! The findings of a run: exactly the JSON output contract of DESIGN.md (one type
//! per JSON object, snake_case keys, kebab-case enum values). The report layer
//! serialises these; `compare` reads them back. Plain data, no behaviour.

pub use crate::correlate::{Evidence, Strength};
use serde::{Deserialize, Serialize, Serializer};

/// Decimals kept in `*_ms` values: 3 = microseconds, below any capture's clock precision.
pub const MS_DECIMALS: i32 = 3;

/// Rounds a millisecond value to [`MS_DECIMALS`] decimals (and `-0` to `0`), so
/// reports do not print float noise such as `0.30999999999999994`.
pub fn round_ms(ms: f64) -> f64 {
    if !ms.is_finite() {
        return ms;
    }
    let scale = 10f64.powi(MS_DECIMALS);
    let rounded = (ms * scale).round() / scale;
    if rounded == 0.0 {
        0.0
    } else {
        rounded
    }
}

/// Serializes an ms value rounded (whatever the findings hold).
fn ser_ms<S: Serializer>(ms: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round_ms(*ms))
}

/// Serializes an optional ms value rounded.
fn ser_opt_ms<S: Serializer>(ms: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match ms {
        Some(v) => s.serialize_some(&round_ms(*v)),
        None => s.serialize_none(),
    }
}

/// Everything a report shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Findings {
    /// Version of the tuplecorr that wrote it.
    pub tuplecorr: String,
    pub captures: Vec<CaptureSummary>,
    pub boundaries: Vec<Boundary>,
    pub requests: Vec<Request>,
    pub unmatched: Vec<Unmatched>,
    pub warnings: Vec<WarningOut>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureSummary {
    pub label: String,
    pub file: String,
    pub format: String,
    pub link_types: Vec<String>,
    pub packets: u64,
    pub flows: u64,
    /// Positive: this capture's clock runs ahead of capture 1's.
    #[serde(serialize_with = "ser_ms")]
    pub clock_offset_ms: f64,
    #[serde(serialize_with = "ser_ms")]
    pub offset_spread_ms: f64,
    pub offset_samples: u64,
    pub offset_method: OffsetMethod,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OffsetMethod {
    /// Capture 1: the reference clock.
    Reference,
    /// NTP-style from request/reply pairs.
    RequestReply,
    /// Median of one-way differences (no replies seen): offset includes the delay.
    OneWay,
    /// `--offset` given by the user.
    Manual,
    /// Nothing to estimate from.
    None,
}

/// Traits of one boundary between neighbouring captures, over all its requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Boundary {
    /// `A->B`, A nearer the client.
    pub between: String,
    #[serde(serialize_with = "ser_opt_ms")]
    pub delay_ms: Option<f64>,
    pub ttl_decrement: Option<i64>,
    /// `kept`, `remapped`, `mixed` or `unknown`.
    pub ports: String,
    /// `kept`, `rewritten`, `mixed` or `unknown`.
    pub icmp_id: String,
    pub mss_clamped: bool,
    pub seq_shift: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proto {
    Tcp,
    Udp,
    Icmp,
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
            Proto::Icmp => "icmp",
        }
    }
}

/// One request: a chain of flows, at most one per capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub request: u64,
    pub proto: Proto,
    /// One entry per capture, in path order.
    pub captures: Vec<Hop>,
    /// One entry per boundary where both sides were seen, in path order.
    pub matches: Vec<Match>,
    pub source: Changes,
    pub destination: Changes,
    pub reply: Reply,
    pub outcome: Outcome,
    pub explanation: String,
}

/// A request as seen (or not) at one capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hop {
    pub label: String,
    pub seen: bool,
    /// RFC 3339 UTC with nanoseconds, on capture 1's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// What this capture recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub reply_seen: bool,
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "ser_opt_ms")]
    pub rtt_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_to_server: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_to_client: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_to_server: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_to_client: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub community_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wireshark_filter: Option<String>,
    /// ICMP echo only: the identifier at this capture (NAT may rewrite it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icmp_id: Option<u16>,
    /// ICMP echo only: the sequence numbers seen, e.g. `1-5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icmp_seqs: Option<String>,
    /// Capture time in ns on capture 1's clock (not serialised; for filters and tables).
    #[serde(skip)]
    pub time_ns: Option<i64>,
}

impl Hop {
    /// A capture where the request was not seen (and no reply either).
    pub fn unseen(label: String) -> Hop {
        Hop {
            label,
            seen: false,
            time: None,
            raw_time: None,
            client: None,
            server: None,
            reply_seen: false,
            rtt_ms: None,
            packets_to_server: None,
            packets_to_client: None,
            bytes_to_server: None,
            bytes_to_client: None,
            community_id: None,
            wireshark_filter: None,
            icmp_id: None,
            icmp_seqs: None,
            time_ns: None,
        }
    }
}

/// How the flows of two neighbouring captures (those where the request was seen)
/// were paired.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Match {
    pub between: String,
    pub strength: Strength,
    pub evidence: Vec<Evidence>,
    /// `ambiguous` only: the competing flows, as `label client->server @time`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Changes {
    pub changed: Vec<Change>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    Snat,
    Dnat,
    PortOnly,
    Proxy,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Snat => "snat",
            ChangeKind::Dnat => "dnat",
            ChangeKind::PortOnly => "port-only",
            ChangeKind::Proxy => "proxy",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub between: String,
    pub kind: ChangeKind,
    pub before: String,
    pub after: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplyPath {
    SamePath,
    ReplyLost,
    Bypassed,
    NoReply,
}

impl ReplyPath {
    pub fn name(self) -> &'static str {
        match self {
            ReplyPath::SamePath => "same-path",
            ReplyPath::ReplyLost => "reply-lost",
            ReplyPath::Bypassed => "bypassed",
            ReplyPath::NoReply => "no-reply",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub path: ReplyPath,
    pub lost_between: Option<String>,
    pub bypassed: Option<String>,
    /// The last capture (in path order) the request got to.
    pub reached: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeKind {
    Completed,
    HandshakeOnly,
    Reset,
    IcmpError,
    NoReply,
    Midstream,
}

impl OutcomeKind {
    pub fn name(self) -> &'static str {
        match self {
            OutcomeKind::Completed => "completed",
            OutcomeKind::HandshakeOnly => "handshake-only",
            OutcomeKind::Reset => "reset",
            OutcomeKind::IcmpError => "icmp-error",
            OutcomeKind::NoReply => "no-reply",
            OutcomeKind::Midstream => "midstream",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub kind: OutcomeKind,
    /// Sender address of the RST / ICMP error.
    pub by: Option<String>,
    /// Where it came into the path: a capture label, or a boundary `A->B`.
    pub origin: Option<String>,
    /// `type/code` of the ICMP error.
    pub icmp: Option<String>,
}

/// Flows of a later capture that matched no request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unmatched {
    pub label: String,
    pub count: u64,
    /// Filled only with `--all`.
    pub flows: Vec<UnmatchedFlow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnmatchedFlow {
    pub proto: Proto,
    pub client: String,
    pub server: String,
    pub time: String,
    pub packets: u64,
}

/// A warning as it appears in reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WarningOut {
    pub label: String,
    pub record: Option<u64>,
    pub byte_offset: Option<u64>,
    pub message: String,
}
