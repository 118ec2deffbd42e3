//! The JSON output contract (docs/output.md), as types: one serde type per
//! JSON object, snake_case keys, kebab-case enum values, written here once,
//! and a report read back by `compare` into typed findings again. Every wire
//! name of a verdict enum lives in the `wire_names!` table below. `to_wire`
//! makes these values from typed findings (`into_typed` here goes back); this file names nothing above it.
//! Never reads captures.

use crate::report::endpoint::parse_endpoint;
use crate::verdict as v;
use crate::verdict::{Evidence, Strength};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// ns → ms as reports show it (rounded to the microsecond).
pub fn ms(ns: i64) -> f64 {
    round_ms(ns as f64 / 1e6)
}

/// ms read back from a report → ns.
fn ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

/// The wire name of an enum value and back.
pub trait WireName: Sized + Copy + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];
    fn wire(self) -> &'static str;
    fn from_wire(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.wire() == text)
    }
}

/// Writes each enum's wire names once and derives `WireName`, `Serialize` and
/// `Deserialize` from them.
macro_rules! wire_names {
    ($($ty:ty { $($variant:ident => $name:literal),+ $(,)? })+) => {$(
        impl WireName for $ty {
            const ALL: &'static [Self] = &[$(<$ty>::$variant),+];
            fn wire(self) -> &'static str {
                match self { $(<$ty>::$variant => $name),+ }
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.wire())
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
                <$ty>::from_wire(&text).ok_or_else(|| {
                    serde::de::Error::unknown_variant(&text, &[$($name),+])
                })
            }
        }
    )+};
}

wire_names! {
    v::Proto { Tcp => "tcp", Udp => "udp", Icmp => "icmp" }
    v::OffsetMethod {
        Reference => "reference", RequestReply => "request-reply", OneWay => "one-way",
        Manual => "manual", SameCapture => "same-capture", TimeFree => "time-free", None => "none",
    }
    v::ChangeKind { Snat => "snat", Dnat => "dnat", PortOnly => "port-only", Proxy => "proxy" }
    v::CarrierKind {
        ProxyV1 => "proxy-v1", ProxyV2 => "proxy-v2", Forwarded => "forwarded",
        XForwardedFor => "x-forwarded-for", XRealIp => "x-real-ip",
    }
    v::StrayPacket {
        SynAck => "syn-ack", Data => "data", Rst => "rst", Datagram => "datagram", EchoReply => "echo-reply",
    }
    v::AppProto { Http => "http", Tls => "tls", Dns => "dns" }
    v::ReplyPath { SamePath => "same-path", ReplyLost => "reply-lost", Bypassed => "bypassed", NoReply => "no-reply" }
    v::AttemptEnd { NoAnswer => "no-answer", Rst => "rst", BareAck => "bare-ack", HandshakeOnly => "handshake-only" }
    v::OutcomeKind {
        Completed => "completed", HandshakeOnly => "handshake-only", Reset => "reset",
        IcmpError => "icmp-error", NoReply => "no-reply", Midstream => "midstream",
        DataStopped => "data-stopped",
    }
    crate::report::icmp::IcmpCause {
        Policy => "policy", PortClosed => "port-closed", OtherHost => "other-host", NoRoute => "no-route",
        ProtocolUnsupported => "protocol-unsupported", TtlExceeded => "ttl-exceeded",
        Unclassified => "unclassified",
    }
}

// `Strength` and `Evidence` come from `correlate` with their serde names; the
// table lists them so the report layer can name and parse them like the others.
impl WireName for Strength {
    const ALL: &'static [Self] = &[Strength::Strong, Strength::Weak, Strength::Ambiguous];
    fn wire(self) -> &'static str {
        self.name()
    }
}

impl WireName for Evidence {
    const ALL: &'static [Self] = &Evidence::ALL;
    fn wire(self) -> &'static str {
        self.name()
    }
}

/// The word of a boundary trait: `kept`, `changed` (e.g. `remapped`), `mixed`, `unknown`.
pub fn kept_word(k: v::Kept, changed: &'static str) -> &'static str {
    match k {
        v::Kept::Unknown => "unknown",
        v::Kept::Kept => "kept",
        v::Kept::Changed => changed,
        v::Kept::Mixed => "mixed",
    }
}

/// Word for a changed port mapping.
pub const PORTS_CHANGED: &str = "remapped";
/// Word for a changed ICMP identifier.
pub const ICMP_ID_CHANGED: &str = "rewritten";
/// Word for a changed TOS byte (DSCP, ECN).
pub const TOS_CHANGED: &str = "rewritten";
/// Word for a VLAN tag added, removed or changed.
pub const VLAN_CHANGED: &str = "changed";

/// Serializes an ms value rounded.
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

/// A whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Findings {
    /// Version of the tuplecorr that wrote it.
    pub tuplecorr: String,
    pub captures: Vec<CaptureSummary>,
    pub boundaries: Vec<Boundary>,
    pub requests: Vec<Request>,
    pub unmatched: Vec<Unmatched>,
    pub warnings: Vec<WarningOut>,
    /// `--masq-agent` only: the ConfigMap against the node's chain and the packets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intent: Vec<IntentOut>,
    /// `--masq-agent-after` only: per destination whose requests would leave
    /// the host with another source after the change, most requests first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blast_radius: Vec<BlastOut>,
}

/// `{"at", "destination", "requests", "first_request", "source_today", "source_after", "reason"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlastOut {
    pub at: String,
    pub destination: String,
    pub requests: u64,
    pub first_request: u64,
    pub source_today: String,
    pub source_after: String,
    pub reason: String,
}

impl BlastOut {
    pub fn of(b: &crate::why::preview::Blast) -> BlastOut {
        BlastOut {
            at: b.at.clone(),
            destination: b.destination.to_string(),
            requests: b.requests,
            first_request: b.first,
            source_today: b.today.to_string(),
            source_after: b.after.to_string(),
            reason: b.reason.clone(),
        }
    }
}

/// `{"at", "source_today", "source_after", "changes", "reason"}`: a request's
/// source leaving the host today and after the change (`source_after` null:
/// unknown, `reason` says why).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictedOut {
    pub at: String,
    pub source_today: String,
    pub source_after: Option<String>,
    pub changes: bool,
    pub reason: String,
}

impl PredictedOut {
    pub fn of(p: &crate::why::preview::Predicted) -> PredictedOut {
        PredictedOut {
            at: p.at.clone(),
            source_today: p.today.to_string(),
            source_after: p.after.map(|a| a.to_string()),
            changes: p.changes(),
            reason: p.reason.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureSummary {
    pub label: String,
    pub file: String,
    pub format: String,
    pub link_types: Vec<String>,
    pub packets: u64,
    /// Overlays peeled off this point's packets; absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<OverlayOut>,
    pub flows: u64,
    /// Positive: this capture's clock runs ahead of capture 1's.
    #[serde(serialize_with = "ser_ms")]
    pub clock_offset_ms: f64,
    #[serde(serialize_with = "ser_ms")]
    pub offset_spread_ms: f64,
    pub offset_samples: u64,
    pub offset_method: v::OffsetMethod,
    /// The first packet of its earliest flow and the last packet of its
    /// latest, as this capture recorded them (RFC 3339, its own clock); absent
    /// when it holds no flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_to: Option<String>,
}

/// One overlay peeled off a point's packets: `overlay` (`vxlan`, `geneve`,
/// `gre`, `gre-ethernet`, `ipip`, `6in4`, `4in6`, `ip6ip6`), its `vni`
/// (VXLAN, Geneve) or `key` (GRE) when the header carries one, and `packets`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlayOut {
    pub overlay: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vni: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<u32>,
    /// MPLS: the outermost label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<u32>,
    pub packets: u64,
}

impl OverlayOut {
    pub(crate) fn of(o: &crate::decode::Overlay, packets: u64) -> OverlayOut {
        let (vni, key, label) = match o.kind.id_name() {
            Some("vni") => (o.id, None, None),
            Some("label") => (None, None, o.id),
            Some(_) => (None, o.id, None),
            None => (None, None, None),
        };
        OverlayOut { overlay: o.kind.wire().to_string(), vni, key, label, packets }
    }

    /// Back to the model; None for an overlay this version does not know.
    pub(crate) fn typed(&self) -> Option<(crate::decode::Overlay, u64)> {
        let kind = crate::decode::OverlayKind::from_wire(&self.overlay)?;
        Some((crate::decode::Overlay { kind, id: self.vni.or(self.key).or(self.label) }, self.packets))
    }
}

/// `{"proto": "tcp", "direction": "replies", "ttl_decrement": -58,
/// "ttl_set_to": 122, "requests": 6}`: one protocol and direction's TTL change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TtlByOut {
    pub proto: v::Proto,
    /// `requests` (client to server) or `replies`.
    pub direction: String,
    pub ttl_decrement: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_set_to: Option<u8>,
    pub requests: u64,
}

/// Traits of one boundary between neighbouring captures, over all its requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Boundary {
    /// `A->B`, A nearer the client.
    pub between: String,
    #[serde(serialize_with = "ser_opt_ms")]
    pub delay_ms: Option<f64>,
    pub ttl_decrement: Option<i64>,
    /// Only when a middlebox set the TTL: the value every request arrived with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_set_to: Option<u8>,
    /// Only where a protocol's packets, or the replies, fared otherwise than
    /// `ttl_decrement` and `ttl_set_to` say: each such protocol and direction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ttl_by: Vec<TtlByOut>,
    /// `kept`, `remapped`, `mixed` or `unknown`.
    pub ports: String,
    /// The server's port: `kept`, `remapped`, `mixed` or `unknown`.
    #[serde(default)]
    pub server_ports: String,
    /// `kept`, `rewritten`, `mixed` or `unknown`.
    pub icmp_id: String,
    pub mss_clamped: bool,
    pub seq_shift: bool,
    /// How far the client's sequence numbers moved, when every shifted request
    /// there moved by this one amount (mod 2^32, signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_shift_by: Option<i32>,
    /// The client's first packet's TOS byte (DSCP and ECN): `kept`, `rewritten`,
    /// `mixed` or `unknown`; with `tos_change` when every rewrite agrees.
    #[serde(default)]
    pub tos: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos_change: Option<TosChange>,
    /// The client's first packet's outermost VLAN tag, likewise; `vlan_change`
    /// with null for an untagged side.
    #[serde(default)]
    pub vlan: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlan_change: Option<VlanChange>,
    /// Smallest MTU asked for by path-MTU messages from beyond A (seen at A, not at B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest_mtu: Option<u32>,
    /// Who asked for `smallest_mtu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu_sender: Option<String>,
    /// Smallest MSS on the client's SYNs at A and at B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_mss_before: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_mss_after: Option<u16>,
    /// Largest segment (IP bytes, either way) seen on both sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_segment: Option<u32>,
    /// Only when requests crossed it with fragmented datagrams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragmentation: Option<BoundaryFragmentsOut>,
}

/// A TOS byte rewritten at a boundary: before and after, with DSCP and ECN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TosChange {
    pub before: u8,
    pub after: u8,
    pub dscp_before: u8,
    pub dscp_after: u8,
    pub ecn_before: u8,
    pub ecn_after: u8,
}

/// A VLAN tag added, removed or changed at a boundary (null: untagged).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VlanChange {
    pub before: Option<u16>,
    pub after: Option<u16>,
}

/// One request: a chain of flows, at most one per capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub request: u64,
    pub proto: v::Proto,
    /// One entry per capture, in path order.
    pub captures: Vec<Hop>,
    /// One entry per boundary where both sides were seen, in path order.
    pub matches: Vec<Match>,
    pub source: Changes,
    pub destination: Changes,
    pub reply: Reply,
    pub outcome: Outcome,
    /// Only when the first SYN(s) were lost before a capture that saw a retransmission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_missed: Option<SynMissed>,
    /// Only where a middlebox shifted TCP sequence numbers: one entry per such
    /// boundary, in path order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seq_shift: Vec<SeqShiftOut>,
    /// Only when the connection had earlier attempts (the same client ISN on
    /// another tuple before the chained flow): one entry each, path then time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// TCP with payload or path-MTU messages only: how far the data got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Data>,
    /// Only when some capture saw an identity carrier: who the backend thinks the client is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityOut>,
    /// Only when some capture recorded no flow while the request lived at
    /// capture 1 (empty, begun after it, stopped before it): their labels, in
    /// path order. Their silence about the request is no evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blind: Vec<String>,
    /// Only when some capture holds a flow tied to the request's flow at the
    /// capture before by evidence without time (ISN, first datagram, echo or
    /// sequence numbers) that the matching kept apart by time: their labels, in path order.
    /// The clocks disagree for the request there: their silence about it is
    /// no evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apart: Vec<String>,
    /// Only when some capture that did not see the request holds a flow left
    /// unmatched with its endpoints (as the capture before saw them) and
    /// protocol, at the same time (within a second, on capture 1's clock):
    /// their labels, in path order. "Not seen there" would be too sure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_tuple: Vec<String>,
    /// Only when some capture saw a datagram of it arrive as IP fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments: Option<FragmentsOut>,
    /// Only when the first bytes of the request's flow were recognised: what
    /// the application said (HTTP, TLS ClientHello, DNS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppOut>,
    /// Only when some capture read the request's connection as HTTP/1.x
    /// request/response exchanges (keep-alive, pipelining).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchanges: Option<ExchangesOut>,
    /// With `--rules` only: why the request stopped inside a host given rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossOut>,
    /// With `--masq-agent-after` only: its source leaving the host after the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<PredictedOut>,
    pub explanation: String,
}

/// `{"at": "node", "packet": "request", "cause": "filter", "rule": {…}, "note": "dropped by `…` (rules-node.txt:7)"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossOut {
    /// The host (WHERE of `--rules`, `--routes`, …).
    pub at: String,
    /// `request` or `reply`: the packet lost inside it.
    pub packet: String,
    /// `filter`, `policy`, `route`, `rp_filter`, `neighbour`, `forwarding`,
    /// `undecided` or `none` (see docs/output.md).
    pub cause: String,
    /// `filter`: the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleOut>,
    /// The sentence the explanation says after "lost at AT: "
    /// (`crate::why::lost::note`).
    pub note: String,
}

impl LossOut {
    pub fn of(l: &crate::why::lost::Loss) -> LossOut {
        use crate::why::{eval::Filtered, lost::Cause};
        let rule = match &l.cause {
            Cause::Filter(Filtered::Dropped { rule, decided, .. }) => Some(RuleOut::of(rule, decided)),
            _ => None,
        };
        let packet = match l.packet {
            crate::why::lost::Packet::Request => "request",
            crate::why::lost::Packet::Reply => "reply",
        };
        LossOut {
            at: l.at.clone(),
            packet: packet.to_string(),
            cause: l.cause_word().to_string(),
            rule,
            note: crate::why::lost::note(l),
        }
    }
}

/// `{"protocol": "http", "at": "decap", "count": 5, "answered": 4,
/// "complete": true, "worst_status": 500, "slowest": {"n": 3, "after_ms":
/// 2001.5}, "unanswered": {"n": 5, "request_reached": "backend",
/// "response_seen": ["backend"]}, "seen": [{"at": "decap", "requests": 5,
/// "responses": 4, "complete": true}, …], "list": [{"n": 1, "method": "GET",
/// "target": "/a", "time": "…Z", "status": 200, "after_ms": 1.2}, …]}`: the
/// HTTP/1.x exchanges inside the request's connection. `count`, `answered`,
/// `complete`, `worst_status`, `slowest` and `list` are what `at` (the
/// capture nearest the client that read them) saw; `complete: false` makes
/// the counts lower bounds (bytes seen that could not be read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangesOut {
    pub protocol: v::AppProto,
    pub at: String,
    pub count: u32,
    pub answered: u32,
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest: Option<SlowestOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<UnansweredOut>,
    /// Every capture that read the connection's exchanges, in path order.
    pub seen: Vec<ExchangeCountOut>,
    /// The first exchanges at `at` (at most `flows::exchange::EXCHANGES_KEPT`).
    pub list: Vec<ExchangeOut>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlowestOut {
    pub n: u32,
    #[serde(serialize_with = "ser_ms")]
    pub after_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnansweredOut {
    pub n: u32,
    pub request_reached: String,
    pub response_seen: Vec<String>,
    /// `at` saw no FIN from the server and no RST (see
    /// `verdict::Unanswered::open`).
    #[serde(default)]
    pub open: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeCountOut {
    pub at: String,
    pub requests: u32,
    pub responses: u32,
    pub complete: bool,
}

/// One exchange: the request's method and target (text read from the
/// capture, escaped as `app`'s), when it was seen (RFC 3339 UTC on capture
/// 1's clock), and its response's status and delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeOut {
    pub n: u32,
    pub method: String,
    pub target: String,
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "ser_opt_ms")]
    pub after_ms: Option<f64>,
}

impl ExchangesOut {
    pub(crate) fn of(w: &crate::report::words::Words<'_>, x: &v::Exchanges) -> ExchangesOut {
        use crate::flows::facts::escape;
        let label = |c: usize| w.label(c).to_string();
        let first = x.counts.iter().find(|c| c.capture == x.at);
        ExchangesOut {
            protocol: v::AppProto::Http,
            at: label(x.at),
            count: first.map_or(0, |c| c.requests),
            answered: first.map_or(0, |c| c.responses),
            complete: first.is_some_and(|c| c.complete),
            worst_status: x.worst_status,
            slowest: x.slowest.map(|(n, t)| SlowestOut { n, after_ms: ms(t) }),
            unanswered: x.unanswered.as_ref().map(|u| UnansweredOut {
                n: u.n,
                request_reached: label(u.request_reached),
                response_seen: u.response_seen.iter().map(|&c| label(c)).collect(),
                open: u.open,
            }),
            seen: (x.counts.iter())
                .map(|c| ExchangeCountOut {
                    at: label(c.capture),
                    requests: c.requests,
                    responses: c.responses,
                    complete: c.complete,
                })
                .collect(),
            list: (x.list.iter().enumerate())
                .map(|(i, e)| ExchangeOut {
                    n: i as u32 + 1,
                    method: escape(e.method(), usize::MAX, b""),
                    target: escape(e.target(), usize::MAX, b""),
                    time: crate::time::rfc3339(e.request_ns),
                    status: e.status,
                    after_ms: e.response_ns.get().map(|t| ms(t.saturating_sub(e.request_ns))),
                })
                .collect(),
        }
    }

    pub(crate) fn into_typed(self, labels: &[String]) -> Result<v::Exchanges, String> {
        use crate::flows::facts::unescape;
        let counts = (self.seen.iter())
            .map(|c| {
                Ok(v::ExchangeCount {
                    capture: index_of(labels, &c.at)?,
                    requests: c.requests,
                    responses: c.responses,
                    complete: c.complete,
                })
            })
            .collect::<Result<_, String>>()?;
        let list = (self.list.iter())
            .map(|e| {
                let t = crate::time::parse_rfc3339(&e.time)
                    .ok_or_else(|| format!("{:?} is not RFC 3339", e.time))?;
                let mut x = v::Exchange::new(&unescape(&e.method), &unescape(&e.target), t);
                x.status = e.status;
                x.response_ns = e.after_ms.map(|a| t.saturating_add(ns(a))).into();
                Ok(x)
            })
            .collect::<Result<_, String>>()?;
        Ok(v::Exchanges {
            at: index_of(labels, &self.at)?,
            counts,
            list,
            worst_status: self.worst_status,
            slowest: self.slowest.map(|s| (s.n, ns(s.after_ms))),
            unanswered: self
                .unanswered
                .map(|u| -> Result<v::Unanswered, String> {
                    Ok(v::Unanswered {
                        n: u.n,
                        request_reached: index_of(labels, &u.request_reached)?,
                        response_seen: u
                            .response_seen
                            .iter()
                            .map(|l| index_of(labels, l))
                            .collect::<Result<_, _>>()?,
                        open: u.open,
                    })
                })
                .transpose()?,
        })
    }
}

/// `{"protocol": "http", "at": "decap", "method": "GET", "target": "/x",
/// "host": "a.example", "status": 200}`, `{"protocol": "tls", "at": "decap",
/// "sni": "a.example", "alpn": ["h2", "http/1.1"]}`, `{"protocol": "dns",
/// "at": "decap", "qname": "a.example", "qtype": "A", "rcode": "NXDOMAIN"}`:
/// text read from the capture, bytes outside printable ASCII (and `\`) as `\xHH`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppOut {
    pub protocol: v::AppProto,
    /// The first capture (path order) whose flow's first bytes said so.
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sni: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alpn: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcode: Option<String>,
}

/// The name of a DNS query type (`A`, `AAAA`, ...), `TYPE` and its number
/// otherwise (RFC 3597).
const QTYPES: [(u16, &str); 22] = [
    (1, "A"),
    (2, "NS"),
    (5, "CNAME"),
    (6, "SOA"),
    (12, "PTR"),
    (13, "HINFO"),
    (15, "MX"),
    (16, "TXT"),
    (28, "AAAA"),
    (33, "SRV"),
    (35, "NAPTR"),
    (39, "DNAME"),
    (41, "OPT"),
    (43, "DS"),
    (46, "RRSIG"),
    (48, "DNSKEY"),
    (64, "SVCB"),
    (65, "HTTPS"),
    (252, "AXFR"),
    (255, "ANY"),
    (257, "CAA"),
    (251, "IXFR"),
];

/// The response codes of the DNS header (RFC 1035, 2136), `RCODE` and its number otherwise.
const RCODES: [(u8, &str); 11] = [
    (0, "NOERROR"),
    (1, "FORMERR"),
    (2, "SERVFAIL"),
    (3, "NXDOMAIN"),
    (4, "NOTIMP"),
    (5, "REFUSED"),
    (6, "YXDOMAIN"),
    (7, "YXRRSET"),
    (8, "NXRRSET"),
    (9, "NOTAUTH"),
    (10, "NOTZONE"),
];

/// `A`, `AAAA`, … or `TYPE65534`.
pub fn qtype_name(t: u16) -> String {
    let mut s = String::new();
    push_qtype(&mut s, t);
    s
}

/// [`qtype_name`] appended to `s`.
pub fn push_qtype(s: &mut String, t: u16) {
    match QTYPES.iter().find(|(n, _)| *n == t) {
        Some((_, name)) => s.push_str(name),
        None => {
            use std::fmt::Write as _;
            let _ = write!(s, "TYPE{t}");
        }
    }
}

/// `NOERROR`, `NXDOMAIN`, … or `RCODE12`.
pub fn rcode_name(r: u8) -> String {
    let mut s = String::new();
    push_rcode(&mut s, r);
    s
}

/// [`rcode_name`] appended to `s`.
pub fn push_rcode(s: &mut String, r: u8) {
    match RCODES.iter().find(|(n, _)| *n == r) {
        Some((_, name)) => s.push_str(name),
        None => {
            use std::fmt::Write as _;
            let _ = write!(s, "RCODE{r}");
        }
    }
}

pub(crate) fn qtype_of(text: &str) -> Result<u16, String> {
    (QTYPES.iter().find(|(_, name)| *name == text).map(|(n, _)| *n))
        .or_else(|| text.strip_prefix("TYPE")?.parse().ok())
        .ok_or_else(|| format!("unknown DNS type {text:?}"))
}

pub(crate) fn rcode_of(text: &str) -> Result<u8, String> {
    (RCODES.iter().find(|(_, name)| *name == text).map(|(n, _)| *n))
        .or_else(|| text.strip_prefix("RCODE")?.parse().ok())
        .ok_or_else(|| format!("unknown DNS rcode {text:?}"))
}

impl AppOut {
    /// The facts of `protocol` seen first `at`, none known yet.
    pub fn new(protocol: v::AppProto, at: String) -> AppOut {
        AppOut {
            protocol,
            at,
            method: None,
            target: None,
            host: None,
            status: None,
            sni: None,
            alpn: Vec::new(),
            qname: None,
            qtype: None,
            rcode: None,
        }
    }

    pub(crate) fn into_typed(self, labels: &[String]) -> Result<v::App, String> {
        use crate::flows::facts::{qname_wire, unescape, Field};
        let mut facts = v::AppFacts::new(self.protocol);
        for (field, text) in
            [(Field::Method, &self.method), (Field::Target, &self.target), (Field::Host, &self.host)]
                .into_iter()
                .chain([(Field::Sni, &self.sni)])
        {
            if let Some(t) = text {
                facts.set(field, &unescape(t));
            }
        }
        for p in &self.alpn {
            facts.set(Field::Alpn, &unescape(p));
        }
        if let Some(q) = &self.qname {
            facts.set(Field::Qname, &qname_wire(q));
        }
        facts.status = self.status;
        facts.qtype = opt(self.qtype.as_deref(), qtype_of)?;
        facts.rcode = opt(self.rcode.as_deref(), rcode_of)?;
        Ok(v::App { at: index_of(labels, &self.at)?, facts })
    }
}

/// One direction's fragmented datagrams at one capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FragDirOut {
    pub fragments: u32,
    pub datagrams: u32,
    pub incomplete: u32,
    pub largest_fragment: u32,
    /// The largest datagram reassembled whole (IP bytes); absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_datagram: Option<u32>,
}

/// A request's fragmented datagrams at one capture.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FragHopOut {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_server: Option<FragDirOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_client: Option<FragDirOut>,
}

/// Datagrams whole where they came from, incomplete where they went.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FragLossOut {
    pub between: String,
    /// `request` (client → server) or `reply`.
    pub direction: String,
    /// Fragments and datagrams where they came from (every fragment there).
    pub fragments_sent: u32,
    pub datagrams: u32,
    /// The largest of those datagrams (IP bytes).
    pub datagram_bytes: u32,
    /// Fragments and datagrams where they went, and how many arrived incomplete.
    pub fragments_arrived: u32,
    pub datagrams_arrived: u32,
    pub incomplete: u32,
    /// The largest fragment that arrived (IP bytes).
    pub largest_passed: u32,
}

/// A request's fragmented datagrams: per capture, and where fragments were lost.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FragmentsOut {
    pub captures: Vec<FragHopOut>,
    pub lost: Vec<FragLossOut>,
}

/// What fragmented datagrams did at one boundary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundaryFragmentsOut {
    pub datagrams: u64,
    pub incomplete: u64,
    pub fragments_lost: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_fragment: Option<u32>,
}

impl FragDirOut {
    fn of(d: &crate::flows::FragDir) -> Option<FragDirOut> {
        (d.datagrams > 0).then(|| FragDirOut {
            fragments: d.fragments,
            datagrams: d.datagrams,
            incomplete: d.incomplete,
            largest_fragment: d.largest_fragment,
            largest_datagram: (d.largest_datagram > 0).then_some(d.largest_datagram),
        })
    }

    fn typed(&self) -> crate::flows::FragDir {
        crate::flows::FragDir {
            fragments: self.fragments,
            datagrams: self.datagrams,
            incomplete: self.incomplete,
            largest_fragment: self.largest_fragment,
            largest_datagram: self.largest_datagram.unwrap_or(0),
        }
    }
}

impl FragmentsOut {
    pub(crate) fn of(w: &crate::report::words::Words<'_>, f: &v::Fragments) -> FragmentsOut {
        let captures = (f.captures.iter().enumerate())
            .filter_map(|(c, x)| {
                let x = x.as_ref()?;
                Some(FragHopOut {
                    label: w.label(c).to_string(),
                    to_server: FragDirOut::of(&x.to_server),
                    to_client: FragDirOut::of(&x.to_client),
                })
            })
            .collect();
        let lost = (f.lost.iter())
            .map(|l| FragLossOut {
                between: w.between(l.between),
                direction: if l.to_server { "request" } else { "reply" }.to_string(),
                fragments_sent: l.sent.fragments,
                datagrams: l.sent.datagrams,
                datagram_bytes: l.sent.largest_datagram,
                fragments_arrived: l.arrived.fragments,
                datagrams_arrived: l.arrived.datagrams,
                incomplete: l.arrived.incomplete,
                largest_passed: l.arrived.largest_fragment,
            })
            .collect();
        FragmentsOut { captures, lost }
    }

    /// Back to the model (`n` captures; `labels` name them).
    fn typed(&self, labels: &[String]) -> Result<v::Fragments, String> {
        let mut captures = vec![None; labels.len()];
        for h in &self.captures {
            let c = index_of(labels, &h.label)?;
            captures[c] = Some(crate::flows::FragFlow {
                to_server: h.to_server.map(|d| d.typed()).unwrap_or_default(),
                to_client: h.to_client.map(|d| d.typed()).unwrap_or_default(),
            });
        }
        let lost = (self.lost.iter())
            .map(|l| -> Result<v::FragLoss, String> {
                let to_server = match l.direction.as_str() {
                    "request" => true,
                    "reply" => false,
                    other => return Err(format!("unknown fragment direction {other:?}")),
                };
                let sent = crate::flows::FragDir {
                    fragments: l.fragments_sent,
                    datagrams: l.datagrams,
                    largest_datagram: l.datagram_bytes,
                    ..Default::default()
                };
                let arrived = crate::flows::FragDir {
                    fragments: l.fragments_arrived,
                    datagrams: l.datagrams_arrived,
                    incomplete: l.incomplete,
                    largest_fragment: l.largest_passed,
                    ..Default::default()
                };
                Ok(v::FragLoss { between: between_of(labels, &l.between)?, to_server, sent, arrived })
            })
            .collect::<Result<_, _>>()?;
        Ok(v::Fragments { captures, lost })
    }
}

/// `{"at": "backend", "peer": "198.19.0.5:51000", "carrier": "proxy-v1",
/// "carried": "198.18.90.42:40001", "added": "egress->backend", "preserved": true}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdentityOut {
    /// Label of the last capture that saw the request (the backend side).
    pub at: String,
    /// The source endpoint there: the peer the backend's socket sees.
    pub peer: String,
    /// The carrier the backend reads there; absent when none reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<v::CarrierKind>,
    /// The carried address (`ip`, `ip:port`), or `unknown` (obfuscated, PROXY UNKNOWN/LOCAL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<String>,
    /// Where the carrier first appears: `client-side` (already at capture 1) or `A->B`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<String>,
    /// The identity the backend sees (carried address, else the peer's) is the client's address at capture 1.
    pub preserved: bool,
    /// An address of that carrier already in the request at capture 1 (set by the client side).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_set: Option<String>,
}

/// Wire word of a carrier added at capture 1.
pub const ADDED_CLIENT_SIDE: &str = "client-side";
/// Wire word of a carried address that is not one.
pub const CARRIED_UNKNOWN: &str = "unknown";

/// A carried address as the wire shows it.
pub fn carried_text(c: v::CarriedAddress) -> String {
    c.addr.map_or_else(|| CARRIED_UNKNOWN.to_string(), |addr| v::Endpoint { addr, port: c.port }.to_string())
}

/// The wire view of an identity.
pub(crate) fn identity(w: &crate::report::words::Words<'_>, i: &v::Identity) -> IdentityOut {
    IdentityOut {
        at: w.label(i.at).to_string(),
        peer: i.peer.to_string(),
        carrier: i.carried.map(|c| c.kind),
        carried: i.carried.map(carried_text),
        added: i.added.map(|a| match a {
            v::Added::ClientSide => ADDED_CLIENT_SIDE.to_string(),
            v::Added::Between(b) => w.between(b),
        }),
        preserved: i.preserved,
        client_set: i.client_set.map(|a| a.to_string()),
    }
}

impl IdentityOut {
    pub(crate) fn into_typed(self, labels: &[String]) -> Result<v::Identity, String> {
        let carried = match (self.carrier, self.carried.as_deref()) {
            (Some(kind), Some(CARRIED_UNKNOWN) | None) => {
                Some(v::CarriedAddress { kind, addr: None, port: None })
            }
            (Some(kind), Some(t)) => {
                let e = endpoint_of(t)?;
                Some(v::CarriedAddress { kind, addr: Some(e.addr), port: e.port })
            }
            (None, Some(t)) => return Err(format!("carried {t:?} without a carrier")),
            (None, None) => None,
        };
        Ok(v::Identity {
            at: index_of(labels, &self.at)?,
            peer: endpoint_of(&self.peer)?,
            carried,
            added: opt(self.added.as_deref(), |a| {
                if a == ADDED_CLIENT_SIDE {
                    Ok(v::Added::ClientSide)
                } else {
                    between_of(labels, a).map(v::Added::Between)
                }
            })?,
            preserved: self.preserved,
            client_set: opt(self.client_set.as_deref(), |a| {
                a.parse().map_err(|_| format!("{a:?} is not an address"))
            })?,
        })
    }
}

/// `{"reached": "egress", "stopped": "egress->backend", "mtu": {...}}`: how far
/// the payload got each way, by sequence range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Data {
    /// The last capture that saw client payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<String>,
    /// `A->B`: client payload seen at A, not (or less of it) at B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The largest client segments at A, e.g. `{"bytes": 1207, "count": 5}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_segment: Option<Segment>,
    /// The capture nearest the client that saw server payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_reached: Option<String>,
    /// `A->B`: server payload seen at B, not (or less of it) at A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stopped: Option<String>,
    /// The largest server segments at B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stopped_segment: Option<Segment>,
    /// `A->B`: every client packet seen at A crossed to B, each cut shorter:
    /// truncated, not stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// The largest client segments at A (before the cut) and at B (after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_from: Option<Segment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_to: Option<Segment>,
    /// `A->B`: every server packet seen at B crossed to A, each cut shorter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cut: Option<String>,
    /// The largest server segments at B (before the cut) and at A (after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cut_from: Option<Segment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cut_to: Option<Segment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<Mtu>,
}

/// Path-MTU messages (ICMP 3/4, ICMPv6 2/0) quoting the request's packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mtu {
    /// The smallest MTU asked for.
    pub mtu: u32,
    pub sender: String,
    /// `3/4` or `2/0` (ICMPv6).
    pub icmp: String,
    /// Most messages seen at one capture.
    pub messages: u32,
    pub seen_at: Vec<String>,
    /// `A->B`: seen at B, not at A (towards the client): lost in between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// `{"bytes": 1207, "count": 5}`: the largest segments one way at one capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// IP bytes (header + payload).
    pub bytes: u32,
    /// Segments of that size (retransmissions included).
    pub count: u32,
}

/// `{"at": "backend", "client": "198.19.3.17:40000", "server": "198.19.96.10:80",
/// "time": "…Z", "ending": "bare-ack"}`: an earlier attempt of the connection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub at: String,
    pub client: String,
    pub server: String,
    /// Its first packet, RFC 3339 UTC on capture 1's clock.
    pub time: String,
    pub ending: v::AttemptEnd,
}

impl Attempt {
    fn into_typed(self, labels: &[String]) -> Result<v::Attempt, String> {
        Ok(v::Attempt {
            capture: index_of(labels, &self.at)?,
            client: endpoint_of(&self.client)?,
            server: endpoint_of(&self.server)?,
            time_ns: crate::time::parse_rfc3339(&self.time)
                .ok_or_else(|| format!("{:?} is not RFC 3339", self.time))?,
            ending: self.ending,
        })
    }
}

/// `{"at": "egress", "syns": 1, "retransmission_after_ms": 1000.0}`.
/// `{"between": "egress->backend", "client": 12345, "server": 12345}`: how
/// far each side's sequence numbers moved on that boundary (mod 2^32, signed;
/// absent where that side was not seen at both captures).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqShiftOut {
    pub between: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<i32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynMissed {
    /// The capture that did not see the first SYN(s).
    pub at: String,
    /// How many SYNs it missed.
    pub syns: u32,
    /// When the retransmission it saw was sent, after the first SYN.
    #[serde(serialize_with = "ser_ms")]
    pub retransmission_after_ms: f64,
}

/// A request as seen (or not) at one capture.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// `--names` only: the name of the client's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// `--names` only: the name of the server's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// `--tz` only (a zone other than UTC): `time` in that zone, RFC 3339 with its offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_local: Option<String>,
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
    /// TCP: the largest segment with payload each way (IP bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_to_server: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_to_client: Option<u32>,
    /// At a side of a split capture (`node(in)`, `node(out)`): the interface
    /// the request was seen on there (the branch it took).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iface: Option<String>,
    /// There too: the interface its reply was seen on, when another than `iface`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_iface: Option<String>,
    /// At a point captured on several hosts: the files of the host that recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// How the flows of two neighbouring captures were paired.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Match {
    pub between: String,
    pub strength: Strength,
    pub evidence: Vec<Evidence>,
    /// `ambiguous` only: the competing flows, as `label client -> server @time`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Changes {
    pub changed: Vec<Change>,
    /// `--rules` only: why this side crossed a host unchanged, per host
    /// whose rules say something (absent when none does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<Kept>,
}

/// `{"at": "egress->backend", "rule_note": "no rule translates it: `…` (rules.txt:18) came first, …"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// The host (WHERE of `--rules`).
    pub at: String,
    /// The nat rules passed and the condition of each that did not match, a
    /// disagreement, or the conditions not evaluated (`crate::why::attach::kept_note`).
    pub rule_note: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub between: String,
    pub kind: v::ChangeKind,
    pub before: String,
    pub after: String,
    /// `--names` only: the name of `before`'s address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_name: Option<String>,
    /// `--names` only: the name of `after`'s address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_name: Option<String>,
    /// `--rules` only: the nat rule that made this change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleOut>,
    /// `--rules` only, when no rule is named: why (`not evaluated: -o be0`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_note: Option<String>,
    /// `--conntrack` only: the kernel's entry for this translation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conntrack: Option<ConntrackOut>,
}

/// `{"file": "rules-node.txt", "line": 12, "table": "nat", "chain":
/// "POSTROUTING", "text": "-A POSTROUTING -o be0 -j MASQUERADE"}`: a nat rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleOut {
    pub file: String,
    pub line: u32,
    pub table: String,
    pub chain: String,
    pub text: String,
    /// Conditions not evaluated from the rules alone that the captures
    /// decided (only that way gives the change they show).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decided: Vec<String>,
}

impl RuleOut {
    pub fn of(r: &crate::why::eval::RuleRef, decided: &[String]) -> RuleOut {
        RuleOut {
            file: r.file.clone(),
            line: r.line,
            table: r.table.clone(),
            chain: r.chain.clone(),
            text: r.text.clone(),
            decided: decided.to_vec(),
        }
    }
}

/// `{"file": "conntrack.log", "line": 3, "confirmed": true}`: the conntrack
/// entry whose original tuple is the request before the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConntrackOut {
    pub file: String,
    pub line: u32,
    /// Its reply tuple is the request after the host, as the captures show it.
    pub confirmed: bool,
    /// `conntrack -E -o timestamp`: when the kernel reported it (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Not confirmed: the entry's reply tuple, `src -> dst`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

/// An ip-masq-agent intent finding: the ConfigMap against the node's
/// IP-MASQ-AGENT chain (`kind: chain`) or against the packets (`packets`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentOut {
    /// The host (WHERE of `--masq-agent`).
    pub at: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translated_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleOut>,
    pub message: String,
}

impl IntentOut {
    pub fn of(i: &crate::why::attach::IntentFinding) -> IntentOut {
        IntentOut {
            at: i.at.clone(),
            kind: i.kind.to_string(),
            cidr: i.cidr.clone(),
            destination: i.destination.map(|a| a.to_string()),
            requests: i.requests,
            translated_to: i.translated_to.map(|a| a.to_string()),
            rule: i.rule.as_ref().map(|r| RuleOut::of(r, &[])),
            message: i.message.clone(),
        }
    }
}

/// The words of a rule result that names no rule.
pub fn rule_note(f: &crate::why::eval::Found) -> Option<String> {
    use crate::why::eval::Found;
    match f {
        Found::Rule { .. } => None,
        Found::NoRule { deciding } if deciding.is_empty() => Some("no rule translates it".into()),
        Found::NoRule { deciding } => Some(format!("no rule translates it: {}", deciding.join(", "))),
        Found::NotEvaluated { conditions } => Some(format!("not evaluated: {}", conditions.join(", "))),
        Found::Disagrees { why } => Some(format!("the rules disagree with the captures: {why}")),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub path: v::ReplyPath,
    pub lost_between: Option<String>,
    pub bypassed: Option<String>,
    /// The last capture (in path order) the request got to.
    pub reached: Option<String>,
    /// An ICMP error quoting the server's reply: why a reply was lost
    /// (absent in reports of earlier versions: read as none).
    #[serde(default)]
    pub lost_cause: Option<LostCause>,
    /// A reply from another endpoint than the server the client sent to
    /// (absent in reports of earlier versions: read as none).
    #[serde(default)]
    pub unexpected_source: Option<UnexpectedSource>,
}

/// A reply from elsewhere, as the wire shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnexpectedSource {
    /// The endpoint it came from.
    pub from: String,
    /// Label of the capture nearest the client that saw one.
    pub seen_at: String,
    /// `syn-ack`, `data`, `rst`, `datagram` or `echo-reply`.
    pub packet: v::StrayPacket,
}

/// An ICMP error about the reply direction, as the wire shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LostCause {
    /// `type/code`.
    pub icmp: String,
    /// Sender address of the ICMP error.
    pub by: String,
    /// Label of the capture nearest the client that saw it.
    pub seen_at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub kind: v::OutcomeKind,
    /// Sender address of the RST / ICMP error.
    pub by: Option<String>,
    /// `--names` only: the name of `by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_name: Option<String>,
    /// Where it came into the path: a capture label, or a boundary `A->B`.
    pub origin: Option<String>,
    /// `type/code` of the ICMP error.
    pub icmp: Option<String>,
    /// Why the ICMP error came back (only for `icmp-error`): derived from
    /// `icmp`, `by`, `origin` and the server, so never read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icmp_cause: Option<crate::report::icmp::IcmpCause>,
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
    pub proto: v::Proto,
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

// ---- wire → typed (a report read back by `compare`) ----

/// Capture index of a label of a report read back.
pub(crate) fn index_of(labels: &[String], label: &str) -> Result<usize, String> {
    labels.iter().position(|l| l == label).ok_or_else(|| format!("unknown capture label {label:?}"))
}

/// `A->B` of a report read back → capture indices.
pub(crate) fn between_of(labels: &[String], text: &str) -> Result<v::Between, String> {
    let (a, b) = text.split_once("->").ok_or_else(|| format!("{text:?} is not a boundary `A->B`"))?;
    Ok(v::Between { from: index_of(labels, a)?, to: index_of(labels, b)? })
}

/// An endpoint of a report read back.
pub(crate) fn endpoint_of(text: &str) -> Result<v::Endpoint, String> {
    parse_endpoint(text)
        .map(|(addr, port)| v::Endpoint { addr, port })
        .ok_or_else(|| format!("{text:?} is not an endpoint"))
}

/// An origin (`label` or `A->B`) of a report read back.
pub(crate) fn origin_of(labels: &[String], text: &str) -> Result<v::Origin, String> {
    if text.contains("->") {
        between_of(labels, text).map(v::Origin::Between)
    } else {
        index_of(labels, text).map(v::Origin::Capture)
    }
}

impl LostCause {
    fn into_typed(self, labels: &[String]) -> Result<v::LostCause, String> {
        Ok(v::LostCause {
            icmp: icmp_of(&self.icmp)?,
            by: self.by.parse().map_err(|_| format!("{:?} is not an address", self.by))?,
            seen_at: index_of(labels, &self.seen_at)?,
        })
    }
}

/// `type/code` of a report read back.
pub(crate) fn icmp_of(text: &str) -> Result<v::IcmpCode, String> {
    let bad = || format!("{text:?} is not an ICMP type/code");
    let (t, c) = text.split_once('/').ok_or_else(bad)?;
    Ok(v::IcmpCode { ty: t.parse().map_err(|_| bad())?, code: c.parse().map_err(|_| bad())? })
}

fn opt<T>(x: Option<&str>, f: impl Fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    x.map(f).transpose()
}

impl Findings {
    /// The typed findings of a report read back; the error says which value is not ours.
    pub fn into_typed(self) -> Result<v::Findings, String> {
        let labels: Vec<String> = if self.captures.is_empty() {
            self.requests
                .first()
                .map(|r| r.captures.iter().map(|h| h.label.clone()).collect())
                .unwrap_or_default()
        } else {
            self.captures.iter().map(|c| c.label.clone()).collect()
        };
        let captures = if self.captures.is_empty() {
            labels.iter().map(|l| placeholder_capture(l, "")).collect()
        } else {
            self.captures
                .into_iter()
                .map(|c| v::CaptureSummary {
                    label: c.label,
                    file: c.file,
                    format: c.format,
                    link_types: c.link_types,
                    packets: c.packets,
                    overlays: c.overlays.iter().filter_map(OverlayOut::typed).collect(),
                    flows: c.flows,
                    clock_offset_ns: ns(c.clock_offset_ms),
                    offset_spread_ns: ns(c.offset_spread_ms),
                    offset_samples: c.offset_samples,
                    offset_method: c.offset_method,
                    recorded: c
                        .recorded_from
                        .as_deref()
                        .and_then(crate::time::parse_rfc3339)
                        .zip(c.recorded_to.as_deref().and_then(crate::time::parse_rfc3339)),
                })
                .collect()
        };
        let requests = self.requests.into_iter().map(|r| r.into_typed(&labels)).collect::<Result<_, _>>()?;
        Ok(v::Findings {
            tuplecorr: self.tuplecorr,
            captures,
            // Compare reads requests only; boundaries and unmatched flows stay behind.
            boundaries: Vec::new(),
            requests,
            unmatched: Vec::new(),
            warnings: self
                .warnings
                .into_iter()
                .map(|w| v::WarningOut {
                    label: w.label,
                    record: w.record,
                    byte_offset: w.byte_offset,
                    message: w.message,
                })
                .collect(),
        })
    }
}

/// `3` or `1-3` (as written by `request`) → first and last sequence number.
fn icmp_seqs_of(text: &str) -> Option<(u16, u16)> {
    match text.split_once('-') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => text.parse().ok().map(|a| (a, a)),
    }
}

/// A capture known only by its label (a CSV report, or a JSON one without captures).
pub(crate) fn placeholder_capture(label: &str, file: &str) -> v::CaptureSummary {
    v::CaptureSummary {
        label: label.to_string(),
        file: file.to_string(),
        format: "tuplecorr-csv".to_string(),
        link_types: Vec::new(),
        packets: 0,
        overlays: Vec::new(),
        flows: 0,
        clock_offset_ns: 0,
        offset_spread_ns: 0,
        offset_samples: 0,
        offset_method: v::OffsetMethod::None,
        recorded: None,
    }
}

impl Request {
    /// A request being read back from cells (`report::csv_columns`), or to be filled
    /// by `schema` from typed findings, with its hops:
    /// no match, change or carrier yet, no reply and no outcome until its
    /// cells say otherwise.
    pub(crate) fn read_back(request: u64, proto: v::Proto, captures: Vec<Hop>) -> Request {
        Request {
            request,
            proto,
            captures,
            matches: Vec::new(),
            source: Changes::default(),
            destination: Changes::default(),
            reply: Reply {
                path: v::ReplyPath::NoReply,
                lost_between: None,
                bypassed: None,
                reached: None,
                lost_cause: None,
                unexpected_source: None,
            },
            outcome: Outcome {
                kind: v::OutcomeKind::NoReply,
                by: None,
                by_name: None,
                origin: None,
                icmp: None,
                icmp_cause: None,
            },
            syn_missed: None,
            seq_shift: Vec::new(),
            attempts: Vec::new(),
            data: None,
            identity: None,
            blind: Vec::new(),
            apart: Vec::new(),
            same_tuple: Vec::new(),
            fragments: None,
            app: None,
            exchanges: None,
            loss: None,
            predicted: None,
            explanation: String::new(),
        }
    }

    pub(crate) fn into_typed(self, labels: &[String]) -> Result<v::Request, String> {
        let mut captures = vec![v::Hop::unseen(); labels.len()];
        for h in self.captures {
            let i = index_of(labels, &h.label)?;
            let time_ns = opt(h.time.as_deref(), |t| {
                crate::time::parse_rfc3339(t).ok_or_else(|| format!("{t:?} is not RFC 3339"))
            })?;
            captures[i] = v::Hop {
                seen: h.seen,
                time_ns,
                raw_time_ns: h.raw_time.as_deref().and_then(crate::time::parse_rfc3339),
                start_ns: time_ns,
                client: opt(h.client.as_deref(), endpoint_of)?,
                server: opt(h.server.as_deref(), endpoint_of)?,
                reply_seen: h.reply_seen,
                rtt_ns: h.rtt_ms.map(ns),
                packets_to_server: h.packets_to_server,
                packets_to_client: h.packets_to_client,
                bytes_to_server: h.bytes_to_server,
                bytes_to_client: h.bytes_to_client,
                icmp_id: h.icmp_id,
                icmp_seqs: h.icmp_seqs.as_deref().and_then(icmp_seqs_of),
                largest_to_server: h.largest_to_server,
                largest_to_client: h.largest_to_client,
                branch: v::Branch::of(h.iface, h.reply_iface, h.host),
            };
        }
        let change = |c: Change| -> Result<v::Change, String> {
            Ok(v::Change {
                between: between_of(labels, &c.between)?,
                kind: c.kind,
                before: endpoint_of(&c.before)?,
                after: endpoint_of(&c.after)?,
            })
        };
        Ok(v::Request {
            request: self.request,
            proto: self.proto,
            captures,
            matches: self
                .matches
                .into_iter()
                .map(|m| {
                    Ok(v::Match {
                        between: between_of(labels, &m.between)?,
                        strength: m.strength,
                        evidence: m.evidence.into_iter().collect(),
                        candidates: Vec::new(),
                    })
                })
                .collect::<Result<_, String>>()?,
            source: self.source.changed.into_iter().map(change).collect::<Result<_, _>>()?,
            destination: self.destination.changed.into_iter().map(change).collect::<Result<_, _>>()?,
            reply: v::Reply {
                path: self.reply.path,
                lost_between: opt(self.reply.lost_between.as_deref(), |b| between_of(labels, b))?,
                bypassed: opt(self.reply.bypassed.as_deref(), |l| index_of(labels, l))?,
                reached: opt(self.reply.reached.as_deref(), |l| index_of(labels, l))?,
                lost_cause: self.reply.lost_cause.map(|l| l.into_typed(labels)).transpose()?,
                unexpected_source: self
                    .reply
                    .unexpected_source
                    .map(|u| -> Result<v::UnexpectedSource, String> {
                        Ok(v::UnexpectedSource {
                            from: endpoint_of(&u.from)?,
                            seen_at: index_of(labels, &u.seen_at)?,
                            packet: u.packet,
                        })
                    })
                    .transpose()?,
            },
            outcome: v::Outcome {
                kind: self.outcome.kind,
                by: opt(self.outcome.by.as_deref(), |a| {
                    a.parse().map_err(|_| format!("{a:?} is not an address"))
                })?,
                origin: opt(self.outcome.origin.as_deref(), |o| origin_of(labels, o))?,
                icmp: opt(self.outcome.icmp.as_deref(), icmp_of)?,
            },
            seq_shift: (self.seq_shift.iter())
                .map(|x| {
                    Ok(v::SeqShift {
                        between: between_of(labels, &x.between)?,
                        client: x.client,
                        server: x.server,
                    })
                })
                .collect::<Result<_, String>>()?,
            syn_missed: self
                .syn_missed
                .map(|m| -> Result<v::SynMissed, String> {
                    Ok(v::SynMissed {
                        at: index_of(labels, &m.at)?,
                        syns: m.syns,
                        after_ns: ns(m.retransmission_after_ms),
                    })
                })
                .transpose()?,
            attempts: self.attempts.into_iter().map(|a| a.into_typed(labels)).collect::<Result<_, _>>()?,
            data: self.data.map(|d| d.into_typed(labels).map(Box::new)).transpose()?,
            identity: self.identity.map(|i| i.into_typed(labels).map(Box::new)).transpose()?,
            blind: self.blind.iter().map(|l| index_of(labels, l)).collect::<Result<_, _>>()?,
            apart: self.apart.iter().map(|l| index_of(labels, l)).collect::<Result<_, _>>()?,
            same_tuple: self.same_tuple.iter().map(|l| index_of(labels, l)).collect::<Result<_, _>>()?,
            fragments: self.fragments.as_ref().map(|f| f.typed(labels).map(Box::new)).transpose()?,
            app: self.app.map(|a| a.into_typed(labels)).transpose()?,
            exchanges: self.exchanges.map(|x| x.into_typed(labels).map(Box::new)).transpose()?,
        })
    }
}

/// A cut as the typed findings hold it, from its three JSON fields.
fn typed_cut(
    labels: &[String],
    between: Option<&str>,
    before: Option<Segment>,
    after: Option<Segment>,
) -> Result<Option<v::Cut>, String> {
    let Some(b) = between else { return Ok(None) };
    let seg = |s: Option<Segment>| {
        s.map(|s| v::Segment { bytes: s.bytes, count: s.count })
            .ok_or_else(|| format!("cut {b} without its segments"))
    };
    Ok(Some(v::Cut { between: between_of(labels, b)?, before: seg(before)?, after: seg(after)? }))
}

impl Data {
    fn into_typed(self, labels: &[String]) -> Result<v::DataPath, String> {
        let between = |b: &str| between_of(labels, b);
        let index = |l: &str| index_of(labels, l);
        Ok(v::DataPath {
            reached: opt(self.reached.as_deref(), index)?,
            stopped: opt(self.stopped.as_deref(), between)?,
            stopped_segment: self.stopped_segment.map(|s| v::Segment { bytes: s.bytes, count: s.count }),
            server_reached: opt(self.server_reached.as_deref(), index)?,
            server_stopped: opt(self.server_stopped.as_deref(), between)?,
            server_stopped_segment: self
                .server_stopped_segment
                .map(|s| v::Segment { bytes: s.bytes, count: s.count }),
            cut: typed_cut(labels, self.cut.as_deref(), self.cut_from, self.cut_to)?,
            server_cut: typed_cut(
                labels,
                self.server_cut.as_deref(),
                self.server_cut_from,
                self.server_cut_to,
            )?,
            mtu: self
                .mtu
                .map(|m| -> Result<Box<v::PathMtu>, String> {
                    Ok(Box::new(v::PathMtu {
                        mtu: m.mtu,
                        sender: m.sender.parse().map_err(|_| format!("{:?} is not an address", m.sender))?,
                        v6: m.icmp == "2/0",
                        messages: m.messages,
                        seen_at: m.seen_at.iter().map(|l| index(l)).collect::<Result<_, _>>()?,
                        lost: opt(m.lost.as_deref(), between)?,
                    }))
                })
                .transpose()?,
        })
    }
}
