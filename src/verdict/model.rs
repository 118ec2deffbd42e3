//! The findings of a run as data: endpoints as addresses and ports, times in ns,
//! captures and boundaries as capture indices, every verdict an enum.
//! Takes nothing; gives the types the verdict stage fills and the report layer
//! reads. Never holds a word meant for people and never knows the wire names:
//! `report::wire` owns the serde contract and `report::*` every sentence.

pub use crate::correlate::{Evidence, Evidences, Strength};
use std::net::IpAddr;

/// Everything a report shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Findings {
    /// Version of the tuplecorr that produced it.
    pub tuplecorr: String,
    /// One per capture, in path order; every index in the findings points here.
    pub captures: Vec<CaptureSummary>,
    /// One per pair of neighbouring captures.
    pub boundaries: Vec<Boundary>,
    pub requests: Vec<Request>,
    /// One per capture after the first.
    pub unmatched: Vec<Unmatched>,
    pub warnings: Vec<WarningOut>,
}

impl Findings {
    /// Label of capture `index` (`?` when out of range, e.g. a damaged report read back).
    pub fn label(&self, index: usize) -> &str {
        self.captures.get(index).map_or("?", |c| c.label.as_str())
    }
}

/// Two captures that saw a request one after the other, `from` nearer the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Between {
    pub from: usize,
    pub to: usize,
}

/// An address with its port; ICMP endpoints have no port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub port: Option<u16>,
}

/// What one capture was and how its clock relates to capture 1's.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureSummary {
    pub label: String,
    pub file: String,
    pub format: String,
    pub link_types: Vec<String>,
    pub packets: u64,
    /// Overlays peeled off this point's packets (kind and VNI/key, packets), by
    /// kind then id; empty when none was.
    pub overlays: Vec<(crate::decode::Overlay, u64)>,
    pub flows: u64,
    /// Positive: this capture's clock runs ahead of capture 1's.
    pub clock_offset_ns: i64,
    pub offset_spread_ns: i64,
    pub offset_samples: u64,
    pub offset_method: OffsetMethod,
    /// First packet of its earliest flow and last packet of its latest, as
    /// this capture recorded them; None when it holds no flow.
    pub recorded: Option<(i64, i64)>,
}

/// How a capture's clock offset was found (the correlate stage's own enum, not a copy).
pub use crate::correlate::OffsetMethodKind as OffsetMethod;

/// Whether a field (ports, ICMP id) survived a boundary, over all its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// No request crossed the boundary with this field.
    Unknown,
    Kept,
    Changed,
    Mixed,
}

/// Traits of one boundary between neighbouring captures, over all its requests.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    pub between: Between,
    pub delay_ns: Option<i64>,
    pub ttl_decrement: Option<i64>,
    /// The TTL every request arrived with when a middlebox sets it rather
    /// than routers decrementing it (see `rewrite::ttl_set`).
    pub ttl_set_to: Option<u8>,
    /// The TTL change per protocol and direction (requests, replies), in
    /// that order: where one protocol or the replies fared otherwise than the
    /// boundary's median says.
    pub ttl_by: Vec<TtlBy>,
    /// The client's port (TCP, UDP).
    pub ports: Kept,
    /// The server's port (TCP, UDP): a DNAT to another port changes it.
    pub server_ports: Kept,
    pub icmp_id: Kept,
    pub mss_clamped: bool,
    pub seq_shift: bool,
    /// How far the client's sequence numbers moved, when every shifted
    /// request there moved by this one amount (a constant shift).
    pub seq_shift_by: Option<i32>,
    /// The TOS byte / traffic class (DSCP, ECN) of the client's first packet,
    /// and its one change when every request that changed agrees.
    pub tos: Kept,
    pub tos_change: Option<(u8, u8)>,
    /// The outermost VLAN tag of the client's first packet (None: untagged),
    /// and its one change likewise.
    pub vlan: Kept,
    pub vlan_change: Option<(Option<u16>, Option<u16>)>,
    /// The smallest MTU asked for by path-MTU messages sent from beyond `from`
    /// (seen at `from`, not at `to`), with its sender.
    pub smallest_mtu: Option<(u32, IpAddr)>,
    /// Smallest MSS on the client's SYNs at `from` and at `to` (clamping shows).
    pub syn_mss: Option<(u16, u16)>,
    /// Largest segment (IP bytes, either way) seen on both sides.
    pub largest_segment: Option<u32>,
    /// Only when requests crossed it with fragmented datagrams (filled after
    /// the verdicts by `crate::fragments`; not in `--stream` reports).
    pub fragmentation: Option<BoundaryFragments>,
}

/// What fragmented datagrams did at one boundary, over its requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoundaryFragments {
    /// Fragmented datagrams that arrived at the side they came from (A for
    /// requests, B for replies) with every fragment.
    pub datagrams: u64,
    /// Of those, the ones missing fragments on the other side.
    pub incomplete: u64,
    /// Fragments lost: where they went fewer arrived than left (sum of the
    /// differences).
    pub fragments_lost: u64,
    /// The largest fragment (IP bytes) seen on both sides.
    pub largest_fragment: Option<u32>,
}

/// Fragment counts of one flow at one capture (the flow stage's own types, not copies).
pub use crate::flows::{FragDir, FragFlow};

/// A request's fragmented datagrams (filled after the verdicts by `crate::fragments`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fragments {
    /// Per capture in path order: the request's fragment counts there each
    /// way; None where it was not seen or nothing arrived fragmented.
    pub captures: Vec<Option<FragFlow>>,
    /// Boundaries where datagrams whole on one side arrived incomplete on the
    /// other, in path order (the request's datagrams, then the reply's).
    pub lost: Vec<FragLoss>,
}

/// Datagrams whose every fragment was seen where they came from, and not
/// every fragment where they went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragLoss {
    pub between: Between,
    /// The request's datagrams (client → server); false: the reply's.
    pub to_server: bool,
    /// The counts where they came from (A for requests, B for replies).
    pub sent: FragDir,
    /// The counts where they went.
    pub arrived: FragDir,
}

/// Transport of a request (the flow stage's own enum, not a copy).
pub use crate::flows::FlowProto as Proto;

/// One request: a chain of flows, at most one per capture.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// 1-based, in order of the time at capture 1; kept when filters drop others.
    pub request: u64,
    pub proto: Proto,
    /// One entry per capture, in path order (index = capture index).
    pub captures: Vec<Hop>,
    /// One entry per boundary where both sides were seen, in path order.
    pub matches: Vec<Match>,
    pub source: Vec<Change>,
    pub destination: Vec<Change>,
    pub reply: Reply,
    pub outcome: Outcome,
    /// Links where a middlebox shifted sequence numbers, in path order.
    pub seq_shift: Vec<SeqShift>,
    /// The first SYN(s) were lost before a capture that saw a retransmission.
    pub syn_missed: Option<SynMissed>,
    /// Earlier attempts of the TCP connection (the same client ISN on another
    /// tuple before the chained flow, e.g. a SYN retried on a new NAT port), in
    /// path then time order.
    pub attempts: Vec<Attempt>,
    /// TCP with payload or path-MTU messages: how far the data got (boxed:
    /// a request stays small for UDP and ICMP and for a report read back).
    pub data: Option<Box<DataPath>>,
    /// Only when some capture saw an identity carrier (PROXY protocol or a
    /// forwarding header) in the request: who the backend thinks the client is.
    pub identity: Option<Box<Identity>>,
    /// Captures that recorded no flow while this request lived at capture 1
    /// (empty, or begun after it, or stopped before it): their silence about
    /// it is no evidence. In path order.
    pub blind: Vec<usize>,
    /// Captures holding a flow tied to this request's flow at the capture
    /// before by evidence without time (ISN, first datagram, echo or sequence
    /// numbers) that the matching kept apart by time: the clocks disagree for it there, so that
    /// capture's silence about it is no evidence. In path order.
    pub apart: Vec<usize>,
    /// Captures where the request was not seen that hold a flow matching left
    /// unmatched with its endpoints as the capture before saw them (either way
    /// round: a capture that saw only the answer holds it from the server), the same
    /// protocol, at the same time (lives overlapping on capture 1's clock,
    /// within `verdict::SAME_TIME_NS`): "not seen there" would be too sure. In path order.
    pub same_tuple: Vec<usize>,
    /// Only when some capture saw a datagram of it arrive as IP fragments.
    pub fragments: Option<Box<Fragments>>,
    /// Only when the first bytes of its flow at some capture were recognised
    /// (HTTP, TLS ClientHello, DNS): what they say, and where.
    pub app: Option<App>,
    /// Only when some capture read the request's connection as HTTP/1.x
    /// exchanges that say more than `app`: more than one, one unanswered, or
    /// bytes that could not be read (boxed: most requests carry none).
    pub exchanges: Option<Box<Exchanges>>,
}

/// One HTTP/1.x exchange (the flow stage's own type; times on capture 1's clock).
pub use crate::flows::exchange::Exchange;

/// The HTTP/1.x exchanges inside a request's connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchanges {
    /// The capture (path order) nearest the client whose flow was read as
    /// more than one answered exchange (or one unanswered, or not every
    /// byte): `list`, `worst_status` and `slowest` are what it saw.
    pub at: usize,
    /// Every capture whose flow of this request was read as exchanges, in path order.
    pub counts: Vec<ExchangeCount>,
    /// The first exchanges at `at` (bounded), in order: exchange n is `list[n - 1]`.
    pub list: Vec<Exchange>,
    pub worst_status: Option<u16>,
    /// The exchange (1-based) answered longest after its request at `at`, and how long (ns).
    pub slowest: Option<(u32, i64)>,
    /// The first exchange at `at` that got no response there (only when
    /// `at` read the connection completely), and where it got.
    pub unanswered: Option<Unanswered>,
}

/// The exchanges one capture read in the request's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeCount {
    pub capture: usize,
    pub requests: u32,
    pub responses: u32,
    /// Every byte seen each way was read: the counts are exact (else lower bounds).
    pub complete: bool,
}

/// The first exchange without a response where the client is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered {
    /// 1-based.
    pub n: u32,
    /// The last capture (path order) that read its request.
    pub request_reached: usize,
    /// The captures that read its response (path order): a response lost
    /// on its way back was read nearer the server only.
    pub response_seen: Vec<usize>,
    /// The capture that read the exchanges (`Exchanges::at`) saw no FIN from
    /// the server and no RST either way: the server's side was still open
    /// where that capture's record of the connection ends, so a response
    /// may have come after it stopped recording.
    pub open: bool,
}

/// Application facts (the flow stage's own types, not copies).
pub use crate::flows::{facts::Field as AppField, AppFacts, AppProto};

/// What a request's first bytes say, from the first capture (path order)
/// whose flow had any recognised.
#[derive(Clone, Debug, PartialEq)]
pub struct App {
    pub at: usize,
    pub facts: AppFacts,
}

/// Kind of an identity carrier (the flow stage's own enum, not a copy).
pub use crate::flows::CarrierKind;

/// Who the backend thinks the client is, and who put it there.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    /// The last capture (path order) that saw the request: the backend side.
    pub at: usize,
    /// The source endpoint there: the peer the backend's socket sees.
    pub peer: Endpoint,
    /// The carrier the backend reads there (PROXY first, then `Forwarded`,
    /// `X-Forwarded-For`, `X-Real-IP`); None when no carrier reached it.
    pub carried: Option<CarriedAddress>,
    /// Where that carrier (kind and address) first appears.
    pub added: Option<Added>,
    /// The identity the backend sees (the carried address, else the peer's)
    /// is the client's address at capture 1.
    pub preserved: bool,
    /// An address of the carrier at the backend that was already in the
    /// request at capture 1 (set by the client side: not to be trusted) — the
    /// carried address itself, or the first element of a list a proxy appended to.
    pub client_set: Option<IpAddr>,
}

/// An address carried in a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CarriedAddress {
    pub kind: CarrierKind,
    /// None: `unknown`, obfuscated, PROXY `UNKNOWN` / v2 `LOCAL`.
    pub addr: Option<IpAddr>,
    pub port: Option<u16>,
}

/// Where a carrier came into the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Added {
    /// Already at capture 1: set by the client side.
    ClientSide,
    /// Absent at `from`, present at `to`: a proxy between them added it.
    Between(Between),
}

/// How far a TCP request's payload got each way (by sequence range, so
/// re-segmentation does not matter), and the path-MTU messages about it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DataPath {
    /// The last capture (path order) that saw client payload.
    pub reached: Option<usize>,
    /// Client payload seen at `from` and not (or less of it) at `to`, the next
    /// capture that saw the connection.
    pub stopped: Option<Between>,
    /// The largest client segments at `stopped.from`.
    pub stopped_segment: Option<Segment>,
    /// The capture nearest the client that saw server payload.
    pub server_reached: Option<usize>,
    /// Server payload seen at `to` and not (or less of it) at `from`.
    pub server_stopped: Option<Between>,
    /// The largest server segments at `server_stopped.to`.
    pub server_stopped_segment: Option<Segment>,
    /// Client packets that all crossed a boundary, each cut shorter (a
    /// truncation: the data did not stop), the first boundary where they were.
    pub cut: Option<Cut>,
    /// Server packets likewise, on their way to the client.
    pub server_cut: Option<Cut>,
    /// Boxed: rare, and every TCP request with payload holds a `DataPath`.
    pub mtu: Option<Box<PathMtu>>,
}

/// Packets truncated at a boundary: every one crossed, the largest shorter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub between: Between,
    /// The largest segments before the boundary and after it.
    pub before: Segment,
    pub after: Segment,
}

/// Path-MTU messages (IPv4 3/4, ICMPv6 2/0) quoting the request's packets.
#[derive(Clone, Debug, PartialEq)]
pub struct PathMtu {
    /// The smallest MTU asked for, and its sender.
    pub mtu: u32,
    pub sender: IpAddr,
    /// ICMPv6 packet-too-big (else IPv4 fragmentation-needed).
    pub v6: bool,
    /// Most messages seen at one capture.
    pub messages: u32,
    /// Captures that saw them, in path order.
    pub seen_at: Vec<usize>,
    /// Seen at `to`, not at `from` (the capture before it towards the client):
    /// lost in between — the black hole's location.
    pub lost: Option<Between>,
}

/// The largest segment with payload one way at one capture, and how many of that size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// IP bytes (header + payload).
    pub bytes: u32,
    pub count: u32,
}

/// The first `syns` SYN(s) of a connection were not seen at capture `at`; the
/// retransmission sent `after_ns` after the first SYN was (a finding: SYNs lost
/// on the way, e.g. a filter or a full queue between two points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynMissed {
    pub at: usize,
    pub syns: u32,
    pub after_ns: i64,
}

impl Boundary {
    /// The protocols and directions whose TTL fared otherwise than the
    /// boundary's `ttl_decrement` and `ttl_set_to` say (a middlebox that sets
    /// one protocol's TTL, replies routed another way).
    pub fn ttl_otherwise(&self) -> impl Iterator<Item = &TtlBy> {
        (self.ttl_by.iter()).filter(|t| (t.decrement, t.set_to) != (self.ttl_decrement, self.ttl_set_to))
    }
}

/// The TTL (hop limit) change of one protocol's packets in one direction on
/// a boundary: its lower median over the requests, and the one value they all
/// arrived with when a middlebox sets it (as [`Boundary::ttl_set_to`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtlBy {
    pub proto: Proto,
    /// The server's packets towards the client (they cross the boundary the other way).
    pub reply: bool,
    pub decrement: Option<i64>,
    pub set_to: Option<u8>,
    /// The requests it is measured on.
    pub requests: u64,
}

/// A constant shift of TCP sequence numbers on one link (a SYN proxy, a load
/// balancer, `tcprewrite --tcp-sequence`): how far the client's and the
/// server's sequence numbers moved from `between.from` to `between.to`, mod
/// 2^32 as a signed shift (None: that side's ISN and first ACK were seen at
/// one of the two captures only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqShift {
    pub between: Between,
    pub client: Option<i32>,
    pub server: Option<i32>,
}

/// A request as seen (or not) at one capture.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Hop {
    pub seen: bool,
    /// First packet, ns since the Unix epoch on capture 1's clock.
    pub time_ns: Option<i64>,
    /// First packet as this capture recorded it.
    pub raw_time_ns: Option<i64>,
    /// The client's first packet (else the first) on capture 1's clock: what time filters use.
    pub start_ns: Option<i64>,
    pub client: Option<Endpoint>,
    pub server: Option<Endpoint>,
    pub reply_seen: bool,
    pub rtt_ns: Option<i64>,
    pub packets_to_server: Option<u64>,
    pub packets_to_client: Option<u64>,
    pub bytes_to_server: Option<u64>,
    pub bytes_to_client: Option<u64>,
    /// ICMP echo only: the identifier at this capture (NAT may rewrite it).
    pub icmp_id: Option<u16>,
    /// ICMP echo only: first and last sequence number seen.
    pub icmp_seqs: Option<(u16, u16)>,
    /// TCP: largest segment with payload each way (IP bytes).
    pub largest_to_server: Option<u32>,
    pub largest_to_client: Option<u32>,
    /// Where a point has branches (a split capture's interfaces, several
    /// hosts): the one the request took; boxed, as most points have none.
    pub branch: Option<Box<Branch>>,
}

/// The branch of a point a request took (see [`Hop::branch`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Branch {
    /// At a side of a split capture (`node(in)`, `node(out)`): the interface
    /// the request was seen on there.
    pub iface: Option<String>,
    /// There too: the interface its reply was seen on, when another than
    /// `iface` (the reply left or came by another branch).
    pub reply_iface: Option<String>,
    /// At a point captured on several hosts: the files of the host that
    /// recorded the request there.
    pub host: Option<String>,
}

impl Branch {
    /// The branch, or None when it names nothing.
    pub fn of(
        iface: Option<String>,
        reply_iface: Option<String>,
        host: Option<String>,
    ) -> Option<Box<Branch>> {
        (iface.is_some() || reply_iface.is_some() || host.is_some())
            .then(|| Box::new(Branch { iface, reply_iface, host }))
    }
}

impl Hop {
    /// [`Branch::iface`].
    pub fn iface(&self) -> Option<&str> {
        self.branch.as_ref()?.iface.as_deref()
    }

    /// [`Branch::reply_iface`].
    pub fn reply_iface(&self) -> Option<&str> {
        self.branch.as_ref()?.reply_iface.as_deref()
    }

    /// [`Branch::host`].
    pub fn host(&self) -> Option<&str> {
        self.branch.as_ref()?.host.as_deref()
    }

    /// A capture where the request was not seen (and no reply either).
    pub fn unseen() -> Hop {
        Hop::default()
    }
}

/// How the flows of two neighbouring captures (those where the request was
/// seen) were paired.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    pub between: Between,
    pub strength: Strength,
    pub evidence: Evidences,
    /// `ambiguous` only: the competing flows at `between.to`.
    pub candidates: Vec<Candidate>,
}

/// An earlier attempt of a request's connection at one capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub capture: usize,
    pub client: Endpoint,
    pub server: Endpoint,
    /// First packet on capture 1's clock.
    pub time_ns: i64,
    pub ending: AttemptEnd,
}

/// How an earlier attempt ended, as the capture saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptEnd {
    /// Nothing came back.
    NoAnswer,
    /// The server side answered the SYN with a RST.
    Rst,
    /// The server side answered with a bare ACK, no SYN-ACK (a port it still
    /// holds in TIME_WAIT answers so: the challenge ACK).
    BareAck,
    /// It got a SYN-ACK and carried nothing.
    HandshakeOnly,
}

/// A flow that competed for an ambiguous match.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub capture: usize,
    pub client: Endpoint,
    pub server: Endpoint,
    /// First packet on capture 1's clock.
    pub time_ns: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    Snat,
    Dnat,
    PortOnly,
    Proxy,
}

/// An endpoint that differs between two neighbouring captures.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub between: Between,
    pub kind: ChangeKind,
    pub before: Endpoint,
    pub after: Endpoint,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplyPath {
    SamePath,
    ReplyLost,
    Bypassed,
    NoReply,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub path: ReplyPath,
    pub lost_between: Option<Between>,
    /// The capture the replies went around.
    pub bypassed: Option<usize>,
    /// The last capture (in path order) the request got to.
    pub reached: Option<usize>,
    /// An ICMP error quoting the server's reply (or a later server packet): why
    /// a reply was lost, e.g. a node with no route back answering with 3/0.
    pub lost_cause: Option<LostCause>,
    /// A reply-direction packet to the client from another endpoint than the
    /// server it sent to: the client rejects it.
    pub unexpected_source: Option<UnexpectedSource>,
}

/// A reply from elsewhere: addressed to the request's client endpoint at
/// `seen_at`, from `from`, which is not the request's server endpoint there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnexpectedSource {
    pub from: Endpoint,
    /// The capture nearest the client (path order) that saw one.
    pub seen_at: usize,
    pub packet: StrayPacket,
}

/// What a reply from elsewhere was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrayPacket {
    SynAck,
    Data,
    Rst,
    Datagram,
    EchoReply,
}

/// An ICMP error about the request's reply direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostCause {
    pub icmp: IcmpCode,
    /// Sender address of the ICMP error.
    pub by: IpAddr,
    /// The capture nearest the client (path order) that saw such an error.
    pub seen_at: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutcomeKind {
    Completed,
    HandshakeOnly,
    Reset,
    IcmpError,
    NoReply,
    Midstream,
    /// Handshake completed, the client's data stopped before a capture that
    /// saw the connection, and the server sent nothing.
    DataStopped,
}

/// Where a RST or ICMP error came into the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Seen at the last capture: sent from beyond it.
    Capture(usize),
    /// Seen up to `from` but not at `to`: injected in between.
    Between(Between),
}

/// Type and code of an ICMP error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IcmpCode {
    pub ty: u8,
    pub code: u8,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub kind: OutcomeKind,
    /// Sender address of the RST / ICMP error.
    pub by: Option<IpAddr>,
    pub origin: Option<Origin>,
    pub icmp: Option<IcmpCode>,
}

impl Outcome {
    /// An outcome with nobody to blame.
    pub fn plain(kind: OutcomeKind) -> Outcome {
        Outcome { kind, by: None, origin: None, icmp: None }
    }
}

/// Flows of a later capture that matched no request.
#[derive(Clone, Debug, PartialEq)]
pub struct Unmatched {
    pub capture: usize,
    pub count: u64,
    /// Filled only with `--all`.
    pub flows: Vec<UnmatchedFlow>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnmatchedFlow {
    pub proto: Proto,
    pub client: Endpoint,
    pub server: Endpoint,
    /// First packet on capture 1's clock.
    pub time_ns: i64,
    pub packets: u64,
}

/// A non-fatal input problem as reports show it (the read stage wrote the message).
#[derive(Clone, Debug, PartialEq)]
pub struct WarningOut {
    pub label: String,
    pub record: Option<u64>,
    pub byte_offset: Option<u64>,
    pub message: String,
}

impl From<&crate::warning::Warning> for WarningOut {
    fn from(w: &crate::warning::Warning) -> WarningOut {
        WarningOut {
            label: w.label.clone(),
            record: w.record,
            byte_offset: w.byte_offset,
            message: w.message(),
        }
    }
}
