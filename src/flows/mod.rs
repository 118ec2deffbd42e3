//! Packets of ONE capture → flow summaries: TCP connections (a new SYN with a new
//! ISN on a reused 5-tuple starts a new flow; SYN retransmissions are counted),
//! UDP exchanges (split by an idle gap), ICMP echo sequences (one identifier).
//! Each flow keeps a fixed-size summary — times, ISNs, IP ID and TTL of the first
//! client packet, counts, RSTs, FINs, the ICMP errors that quote it and stream
//! fingerprints — so memory grows with flows, never with packets.
//! Knows nothing of other captures. Its settings: `FlowConfig`.

pub mod carrier;
mod copies;
mod datagram;
pub mod exchange;
pub mod facts;
pub mod fingerprint;
mod key;
pub mod points;
pub mod reassembly;
mod table;
mod tcp;

pub use carrier::{Carried, CarrierKind, Carriers, RequestId, RequestIdKind, CARRIER_PREFIX};
pub use facts::{AppFacts, AppProto};
pub use fingerprint::{datagram_key, Fingerprint, StreamPrefix, PREFIX_LENGTHS, STRONG_PREFIX};
pub use key::{interface_of, side_of};
pub use table::FlowTable;

/// Settings of the flow stage.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    /// A UDP exchange silent for longer than this is split (ns).
    pub udp_idle_ns: i64,
    /// Bytes of each direction's stream that are fingerprinted.
    pub fingerprint_len: usize,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig { udp_idle_ns: 10_000_000_000, fingerprint_len: 128 }
    }
}

impl FlowConfig {
    /// Bytes of each packet's payload the flow stage reads: the fingerprint and
    /// the client stream's carriers (PROXY header, HTTP request headers).
    pub fn payload_limit(&self) -> usize {
        self.fingerprint_len.max(CARRIER_PREFIX)
    }
}

use std::net::IpAddr;

/// Transport of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlowProto {
    Tcp,
    Udp,
    /// ICMP or ICMPv6 echo.
    Icmp,
}

/// One side of a flow. For ICMP echo, `port` is the echo identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub port: u16,
}

/// How the client side was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// The client sent the SYN seen here.
    Syn,
    /// Only the SYN-ACK was seen: the client is its receiver.
    SynAck,
    /// UDP / ICMP: the sender of the first datagram or echo request.
    FirstPacket,
    /// UDP whose first datagram went from a system port (below 1024) to an
    /// ephemeral one (32768 and up): an answer (DNS, NTP, SNMP, Kerberos) of
    /// an exchange whose query this capture missed; its receiver is the client.
    Reply,
    /// TCP without handshake: the server is the lower (well-known) port.
    Midstream,
}

/// A RST or FIN seen in a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpEvent {
    pub ts_ns: i64,
    /// Sent towards the client (from the server side).
    pub to_client: bool,
    /// Source address as captured.
    pub sender: IpAddr,
    pub ttl: u8,
}

/// An ICMP error that quotes a packet of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpError {
    pub ts_ns: i64,
    pub sender: IpAddr,
    pub v6: bool,
    pub icmp_type: u8,
    pub code: u8,
    pub ttl: u8,
    /// The quoted packet went from client to server (the usual case).
    pub about_request: bool,
}

/// A time in ns that may be unknown, in 8 bytes where `Option<i64>` takes 16
/// (a flow summary holds eight): unknown is `i64::MIN` ns, a time no record
/// has (readers clamp times before 1677 to `read::EARLIEST_NS`, one ns later).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ns(i64);

impl Ns {
    pub const NONE: Ns = Ns(i64::MIN);

    /// The known time `t`; `i64::MIN`, which no reader gives, is kept one ns
    /// later, so a known time never reads back as unknown.
    pub fn at(t: i64) -> Ns {
        Ns(t.max(crate::read::EARLIEST_NS))
    }

    pub fn get(self) -> Option<i64> {
        (self != Ns::NONE).then_some(self.0)
    }

    pub fn is_some(self) -> bool {
        self != Ns::NONE
    }

    pub fn is_none(self) -> bool {
        self == Ns::NONE
    }
}

impl From<Option<i64>> for Ns {
    fn from(t: Option<i64>) -> Ns {
        t.map_or(Ns::NONE, Ns::at)
    }
}

impl std::fmt::Debug for Ns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// The ICMP errors quoting a flow: a list one pointer wide in the summary
/// (boxed when there is one: most flows have none).
/// (`Box<Vec>` on purpose: one thin pointer, where a `Vec` takes three words
/// and a boxed slice two.)
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IcmpErrors(Option<Box<Vec<IcmpError>>>);

impl IcmpErrors {
    pub fn push(&mut self, e: IcmpError) {
        self.0.get_or_insert_with(Box::default).push(e);
    }

    pub fn clear(&mut self) {
        self.0 = None;
    }
}

impl std::ops::Deref for IcmpErrors {
    type Target = [IcmpError];

    fn deref(&self) -> &[IcmpError] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a IcmpErrors {
    type Item = &'a IcmpError;
    type IntoIter = std::slice::Iter<'a, IcmpError>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Extend<IcmpError> for IcmpErrors {
    fn extend<I: IntoIterator<Item = IcmpError>>(&mut self, iter: I) {
        for e in iter {
            self.push(e);
        }
    }
}

/// Path-MTU messages (IPv4 3/4 "fragmentation needed", ICMPv6 2/0 "packet too
/// big") quoting the client's packets: a few numbers however many arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtuSignal {
    /// The smallest MTU asked for, and who asked for it.
    pub mtu: u32,
    pub sender: IpAddr,
    pub v6: bool,
    /// How many such messages were seen (saturating).
    pub count: u32,
    pub first_ns: i64,
}

/// The largest IP packet carrying payload in one direction, and how many of that size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxSegment {
    /// IP bytes (header + payload); 0 = no payload seen.
    pub bytes: u32,
    pub count: u32,
}

impl MaxSegment {
    pub(crate) fn add(&mut self, bytes: u32) {
        if bytes > self.bytes {
            *self = MaxSegment { bytes, count: 1 };
        } else if bytes == self.bytes {
            self.count = self.count.saturating_add(1);
        }
    }
}

/// The fragmented datagrams of one direction of a flow at one capture point
/// (each reassembled into one packet of the flow).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragDir {
    /// Fragments that arrived (duplicates not counted).
    pub fragments: u32,
    /// Datagrams that arrived as fragments (whole or not).
    pub datagrams: u32,
    /// Of those, the ones that ended with fragments missing (or spoiled by a
    /// malformed or overlapping one).
    pub incomplete: u32,
    /// The largest fragment (IP bytes).
    pub largest_fragment: u32,
    /// The largest datagram reassembled whole (IP bytes; 0: none).
    pub largest_datagram: u32,
}

impl FragDir {
    pub(crate) fn add(&mut self, r: &reassembly::Reassembled) {
        self.fragments = self.fragments.saturating_add(r.fragments);
        self.datagrams = self.datagrams.saturating_add(1);
        self.incomplete = self.incomplete.saturating_add(u32::from(!r.whole));
        self.largest_fragment = self.largest_fragment.max(r.largest_fragment);
        if r.whole {
            self.largest_datagram = self.largest_datagram.max(r.packet.ip_len);
        }
    }
}

/// A flow's fragmented datagrams each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragFlow {
    pub to_server: FragDir,
    pub to_client: FragDir,
}

/// How many client datagrams after the first a UDP flow keeps keys of.
pub const LATER_DATAGRAMS: usize = 3;

/// Keys ([`datagram_key`]) of a UDP flow's second to fourth client
/// datagrams: a capture that missed the first datagrams of an exchange (lost
/// there, or sent before it started) meets the flow on the first one it saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaterDatagrams {
    /// (key, when the datagram was seen).
    keys: [(u64, i64); LATER_DATAGRAMS],
    len: u8,
}

impl LaterDatagrams {
    /// The keys and times, in the order the datagrams were seen.
    pub fn keys(&self) -> &[(u64, i64)] {
        &self.keys[..usize::from(self.len)]
    }

    /// Adds the key of the next datagram; false when all places are taken.
    pub fn push(&mut self, key: u64, ts_ns: i64) -> bool {
        let Some(slot) = self.keys.get_mut(usize::from(self.len)) else { return false };
        *slot = (key, ts_ns);
        self.len += 1;
        true
    }

    fn shift(&mut self, by: impl Fn(i64) -> i64) {
        self.keys.iter_mut().for_each(|(_, t)| *t = by(*t));
    }
}

/// ICMP echo details of an echo flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EchoSummary {
    pub first_seq: u16,
    pub last_seq: u16,
    pub requests: u32,
    pub replies: u32,
    /// xxh3 of the first echo request's captured payload, with its length.
    pub payload: Option<(u32, u64)>,
}

/// Summary of one flow at one capture.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub proto: FlowProto,
    pub v6: bool,
    pub client: Endpoint,
    pub server: Endpoint,
    pub orientation: Orientation,
    pub first_ns: i64,
    pub last_ns: i64,
    /// First client → server packet (the SYN for TCP).
    pub first_client_ns: Ns,
    /// First server → client packet of any kind (SYN-ACK, data, FIN, RST).
    pub first_server_ns: Ns,
    pub client_isn: Option<u32>,
    /// The newest: a server that answers the client's SYN again before the
    /// handshake completes with another ISN (it dropped its first answer on an
    /// ICMP error for it) goes on with that one, in the same flow. A capture
    /// nearer the client saw only answers that got that far: the newest too.
    pub server_isn: Option<u32>,
    /// SYNs with the client ISN (1 = no retransmission).
    pub syn_count: u32,
    /// When the last SYN retransmission was sent after the first SYN (µs,
    /// saturating; 0 without retransmission). Four bytes: a flow summary stays
    /// small (earlier retransmissions follow Linux's schedule, see correlate).
    pub last_syn_after_us: u32,
    /// Sequence numbers of the first packet with ACK set, as (client side, server
    /// side): NAT never touches them, so they pair midstream flows.
    pub seq_pair: Option<(u32, u32)>,
    pub synack_ns: Ns,
    /// The client's first packet after the SYN-ACK (its handshake ACK or data).
    pub handshake_done_ns: Ns,
    /// MSS option of the client's SYN.
    pub syn_mss: Option<u16>,
    /// MSS option of the server's SYN-ACK.
    pub synack_mss: Option<u16>,
    /// IP ID of the first client packet (IPv4 only).
    pub client_ip_id: Option<u16>,
    pub client_ttl: u8,
    /// TOS byte / traffic class (DSCP and ECN) of the first client packet.
    pub client_tos: u8,
    /// Outermost VLAN ID of the first client packet ([`Flow::NO_VLAN`]: untagged).
    pub client_vlan: u16,
    pub server_ttl: Option<u8>,
    pub packets_to_server: u64,
    pub packets_to_client: u64,
    /// IP bytes (header + payload).
    pub bytes_to_server: u64,
    pub bytes_to_client: u64,
    pub client_data_ns: Ns,
    pub server_data_ns: Ns,
    pub client_fin_ns: Ns,
    pub server_fin_ns: Ns,
    /// First RST each way (to the client, to the server); boxed: most flows
    /// end without one, and a flow summary stays small.
    pub rst_to_client: Option<Box<TcpEvent>>,
    pub rst_to_server: Option<Box<TcpEvent>>,
    /// ICMP errors quoting this flow (at most a few).
    pub icmp_errors: IcmpErrors,
    /// TCP payload seen each way as stream offsets `[start, end)` from ISN + 1
    /// (midstream: from the first sequence number seen), so GRO/TSO
    /// re-segmentation and retransmissions do not matter.
    pub client_payload: Option<(u32, u32)>,
    pub server_payload: Option<(u32, u32)>,
    /// Largest segment with payload each way (TCP).
    pub max_to_server: MaxSegment,
    pub max_to_client: MaxSegment,
    /// Path-MTU messages quoting the client's packets (boxed: rare, and a flow
    /// summary stays small).
    pub mtu_signal: Option<Box<MtuSignal>>,
    pub client_fp: Fingerprint,
    pub server_fp: Fingerprint,
    /// TCP: PROXY protocol and HTTP forwarding / request-id headers at the start
    /// of the client stream (boxed: most flows carry none).
    pub carriers: Option<Box<Carriers>>,
    /// Application facts from the first bytes each way: an HTTP request and
    /// its status, a TLS ClientHello's SNI and ALPN, a DNS question and its
    /// response code (boxed: most fields absent, most flows without).
    pub app: Option<Box<AppFacts>>,
    /// TCP: the HTTP/1.x request/response exchanges read in the connection
    /// (keep-alive, pipelining), when its client stream began with a request
    /// (boxed: most flows carry none or are not HTTP).
    /// Only when it says more than `app` does: more than one exchange, one
    /// unanswered, or bytes that could not be read.
    pub exchanges: Option<Box<exchange::Exchanges>>,
    /// TCP: the connection carried exactly one HTTP/1.x exchange, answered,
    /// every byte read (the usual case: a flag, not a boxed `exchanges`).
    pub one_exchange: bool,
    /// ICMP echo flows only (boxed: a flow summary stays small).
    pub echo: Option<Box<EchoSummary>>,
    /// UDP flows with more than one client datagram only (boxed: most have one).
    pub later: Option<Box<LaterDatagrams>>,
    /// Datagrams that arrived as IP fragments (boxed: most flows have none).
    pub frags: Option<Box<FragFlow>>,
    /// Interface of the first packet (pcapng interface or SLL2 ifindex) and SLL
    /// packet type, to tell `-i any` copies apart.
    pub first_interface: u32,
    pub first_packet_type: Option<u8>,
    /// Which host of its point recorded it: files given under one label that
    /// overlap in time are captures of several hosts (a pool's nodes), in
    /// the order of their first packet; 0 for a point of one host.
    pub host: u16,
    /// Other copies of this flow in the same capture (`-i any` before/after
    /// NAT; two bytes, beside `host`, so the summary keeps its size).
    pub copies: u16,
    /// The interface its other direction was seen on, when not `first_interface`
    /// (else [`Flow::NO_INTERFACE`]; four bytes, not eight): a multi-homed end
    /// host answered by another interface than it was asked on (see
    /// `FlowTable::reply_elsewhere` and [`Flow::other_interface`]).
    pub answered_on: u32,
}

impl IcmpError {
    /// A path-MTU message (IPv4 3/4, ICMPv6 2/0): a request to send smaller
    /// segments, not the end of a TCP connection.
    pub fn is_path_mtu(&self) -> bool {
        matches!((self.v6, self.icmp_type, self.code), (false, 3, 4) | (true, 2, 0))
    }
}

impl Flow {
    /// Moves every time the flow holds by `delta_ns` (a clock step corrected:
    /// `steps`); counts, sequence numbers and durations stay as they are.
    pub fn shift_times(&mut self, delta_ns: i64) {
        let by = |t: i64| t.saturating_add(delta_ns);
        let ns = |t: &mut Ns| *t = Ns::from(t.get().map(by));
        (self.first_ns, self.last_ns) = (by(self.first_ns), by(self.last_ns));
        for t in [
            &mut self.first_client_ns,
            &mut self.first_server_ns,
            &mut self.synack_ns,
            &mut self.handshake_done_ns,
            &mut self.client_data_ns,
            &mut self.server_data_ns,
            &mut self.client_fin_ns,
            &mut self.server_fin_ns,
        ] {
            ns(t);
        }
        for e in [&mut self.rst_to_client, &mut self.rst_to_server].into_iter().flatten() {
            e.ts_ns = by(e.ts_ns);
        }
        if let Some(errors) = self.icmp_errors.0.as_deref_mut() {
            errors.iter_mut().for_each(|e| e.ts_ns = by(e.ts_ns));
        }
        if let Some(m) = self.mtu_signal.as_deref_mut() {
            m.first_ns = by(m.first_ns);
        }
        if let Some(l) = self.later.as_deref_mut() {
            l.shift(by);
        }
        if let Some(x) = self.exchanges.as_deref_mut() {
            x.shift(by);
        }
    }

    /// `answered_on` when the flow was answered on its own interface.
    pub const NO_INTERFACE: u32 = u32::MAX;

    /// `client_vlan` of an untagged frame (VLAN IDs have 12 bits).
    pub const NO_VLAN: u16 = u16::MAX;

    /// The outermost VLAN ID of the first client packet, when tagged.
    pub fn vlan(&self) -> Option<u16> {
        (self.client_vlan != Flow::NO_VLAN).then_some(self.client_vlan)
    }

    /// The interface its other direction was seen on, when not its first one.
    pub fn other_interface(&self) -> Option<u32> {
        (self.answered_on != Flow::NO_INTERFACE).then_some(self.answered_on)
    }

    /// Any packet came back: from the server side, or an ICMP error quoting the
    /// client's packet (an error about the server's own reply, sent back to the
    /// server, is no reply to the client).
    pub fn reply_seen(&self) -> bool {
        self.packets_to_client > 0 || self.request_errors().next().is_some()
    }

    /// ICMP errors that quote a client → server packet.
    pub fn request_errors(&self) -> impl Iterator<Item = &IcmpError> {
        self.icmp_errors.iter().filter(|e| e.about_request)
    }

    /// Time of the first reply of any kind (server packet or ICMP error).
    pub fn first_reply_ns(&self) -> Option<i64> {
        let icmp = self.request_errors().map(|e| e.ts_ns).min();
        match (self.first_server_ns.get(), icmp) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Counts of what the flow stage saw but did not make into flows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    pub packets: u64,
    /// Later IP fragments (no transport header): reassembled with their
    /// first fragment (see `reassembly`).
    pub fragments: u64,
    /// The fragment reassembly's counts.
    pub reassembly: Box<reassembly::FragStats>,
    /// Other IP protocols, ICMP other than echo and errors.
    pub other: u64,
    /// ICMP errors quoting no flow of this capture.
    pub icmp_unattributed: u64,
    /// Flows dropped as copies of another (`tcpdump -i any`).
    pub duplicate_flows: u64,
    /// Flows whose other direction was seen on another interface of the
    /// capture, with no packet on both (a multi-homed end host).
    pub return_elsewhere: u64,
}

/// The flows of one capture, in order of their first packet.
#[derive(Clone, Debug, Default)]
pub struct Flows {
    pub flows: Vec<Flow>,
    pub stats: FlowStats,
}

impl Endpoint {
    /// `ip:port`, `[v6]:port`, or the bare address (`icmp`).
    pub fn display(&self, icmp: bool) -> String {
        match (self.addr, icmp) {
            (a, true) => a.to_string(),
            (IpAddr::V4(a), false) => format!("{a}:{}", self.port),
            (IpAddr::V6(a), false) => format!("[{a}]:{}", self.port),
        }
    }
}

impl Flow {
    /// `client -> server` as in reports.
    pub fn describe(&self) -> String {
        let icmp = self.proto == FlowProto::Icmp;
        format!("{} -> {}", self.client.display(icmp), self.server.display(icmp))
    }
}

impl Flow {
    /// A flow that has seen nothing yet but its first packet's time: every
    /// count zero, every optional fact absent.
    pub(crate) fn new(
        proto: FlowProto,
        v6: bool,
        client: Endpoint,
        server: Endpoint,
        orientation: Orientation,
        first_ns: i64,
    ) -> Flow {
        Flow {
            proto,
            v6,
            client,
            server,
            orientation,
            first_ns,
            last_ns: first_ns,
            first_client_ns: Ns::NONE,
            first_server_ns: Ns::NONE,
            client_isn: None,
            server_isn: None,
            syn_count: 0,
            last_syn_after_us: 0,
            seq_pair: None,
            synack_ns: Ns::NONE,
            handshake_done_ns: Ns::NONE,
            syn_mss: None,
            synack_mss: None,
            client_ip_id: None,
            client_ttl: 0,
            client_tos: 0,
            client_vlan: Flow::NO_VLAN,
            server_ttl: None,
            packets_to_server: 0,
            packets_to_client: 0,
            bytes_to_server: 0,
            bytes_to_client: 0,
            client_data_ns: Ns::NONE,
            server_data_ns: Ns::NONE,
            client_fin_ns: Ns::NONE,
            server_fin_ns: Ns::NONE,
            rst_to_client: None,
            rst_to_server: None,
            icmp_errors: IcmpErrors::default(),
            client_payload: None,
            server_payload: None,
            max_to_server: MaxSegment::default(),
            max_to_client: MaxSegment::default(),
            mtu_signal: None,
            client_fp: Fingerprint::default(),
            server_fp: Fingerprint::default(),
            carriers: None,
            app: None,
            echo: None,
            later: None,
            frags: None,
            exchanges: None,
            one_exchange: false,
            first_interface: 0,
            first_packet_type: None,
            host: 0,
            copies: 0,
            answered_on: Flow::NO_INTERFACE,
        }
    }
}

impl Flow {
    /// A UDP flow this capture saw only from its answering side (every
    /// datagram went one way, the first of them the answer another capture
    /// saw: `correlate::turn_answers`) turned round: the receiver is the
    /// client, the orientation [`Orientation::Reply`], as for an answer from a
    /// system port. What the client's first packet would tell (TTL, IP ID,
    /// TOS, VLAN) is unknown, as no client packet was seen; ICMP errors that
    /// quoted the answers quote the server's packets now.
    pub fn turn_answer(&mut self) {
        debug_assert!(self.proto == FlowProto::Udp && self.packets_to_client == 0);
        let fresh =
            Flow::new(self.proto, self.v6, self.server, self.client, Orientation::Reply, self.first_ns);
        std::mem::swap(&mut self.client, &mut self.server);
        self.orientation = Orientation::Reply;
        (self.packets_to_client, self.packets_to_server) = (self.packets_to_server, 0);
        (self.bytes_to_client, self.bytes_to_server) = (self.bytes_to_server, 0);
        (self.first_server_ns, self.first_client_ns) = (self.first_client_ns, Ns::NONE);
        (self.server_data_ns, self.client_data_ns) = (self.client_data_ns, Ns::NONE);
        self.server_ttl = Some(self.client_ttl);
        (self.client_ttl, self.client_ip_id, self.client_tos, self.client_vlan) =
            (fresh.client_ttl, fresh.client_ip_id, fresh.client_tos, fresh.client_vlan);
        self.server_fp = std::mem::take(&mut self.client_fp);
        if let Some(errors) = self.icmp_errors.0.as_deref_mut() {
            errors.iter_mut().for_each(|e| e.about_request = !e.about_request);
        }
        // a path-MTU message quoted the answers: not the client's packets
        self.mtu_signal = None;
        if let Some(f) = self.frags.as_deref_mut() {
            std::mem::swap(&mut f.to_server, &mut f.to_client);
        }
        // facts read as a question from what was an answer, keys of answers
        self.app = None;
        self.later = None;
    }
}

impl Flow {
    /// A TCP flow seen without its handshake, turned round: its sides were
    /// guessed by port (the higher one the client's), and another capture's
    /// sequence numbers show the guess was wrong (a NAT moved the server's
    /// port above the client's: `correlate::turn_midstream`). Every count,
    /// time, sequence number, byte range and fingerprint changes side. What
    /// was read as the first client packet (IP ID, TOS, VLAN) was the
    /// server's: unknown now, as no first client packet is known; its TTL is
    /// the server's. Carriers and application facts were read from the other
    /// side's bytes: dropped.
    pub fn turn_midstream(&mut self) {
        debug_assert!(self.proto == FlowProto::Tcp && self.orientation == Orientation::Midstream);
        let fresh =
            Flow::new(self.proto, self.v6, self.server, self.client, Orientation::Midstream, self.first_ns);
        std::mem::swap(&mut self.client, &mut self.server);
        self.seq_pair = self.seq_pair.map(|(c, s)| (s, c));
        std::mem::swap(&mut self.first_client_ns, &mut self.first_server_ns);
        std::mem::swap(&mut self.packets_to_server, &mut self.packets_to_client);
        std::mem::swap(&mut self.bytes_to_server, &mut self.bytes_to_client);
        std::mem::swap(&mut self.client_data_ns, &mut self.server_data_ns);
        std::mem::swap(&mut self.client_fin_ns, &mut self.server_fin_ns);
        std::mem::swap(&mut self.rst_to_client, &mut self.rst_to_server);
        for e in [&mut self.rst_to_client, &mut self.rst_to_server].into_iter().flatten() {
            e.to_client = !e.to_client;
        }
        std::mem::swap(&mut self.client_payload, &mut self.server_payload);
        std::mem::swap(&mut self.max_to_server, &mut self.max_to_client);
        std::mem::swap(&mut self.client_fp, &mut self.server_fp);
        let server_ttl = self.server_ttl.replace(self.client_ttl);
        self.client_ttl = server_ttl.unwrap_or(fresh.client_ttl);
        (self.client_ip_id, self.client_tos, self.client_vlan) =
            (fresh.client_ip_id, fresh.client_tos, fresh.client_vlan);
        if let Some(errors) = self.icmp_errors.0.as_deref_mut() {
            errors.iter_mut().for_each(|e| e.about_request = !e.about_request);
        }
        // a path-MTU message quoted the other side's packets
        self.mtu_signal = None;
        if let Some(f) = self.frags.as_deref_mut() {
            std::mem::swap(&mut f.to_server, &mut f.to_client);
        }
        (self.carriers, self.app) = (None, None);
    }
}

#[cfg(test)]
impl Flow {
    /// A TCP flow with a handshake seen, for unit tests of later stages.
    pub(crate) fn test_tcp(client: &str, server: &str, first_ns: i64, isn: u32) -> Flow {
        let ep = |s: &str| -> Endpoint {
            let a: std::net::SocketAddr = s.parse().expect("test endpoint");
            Endpoint { addr: a.ip(), port: a.port() }
        };
        let mut f = Flow::new(FlowProto::Tcp, false, ep(client), ep(server), Orientation::Syn, first_ns);
        f.last_ns = first_ns + 1_000_000;
        (f.first_client_ns, f.first_server_ns, f.synack_ns) =
            (Ns::at(first_ns), Ns::at(first_ns + 100_000), Ns::at(first_ns + 100_000));
        (f.client_isn, f.server_isn, f.syn_count) = (Some(isn), Some(isn ^ 0xffff), 1);
        f.seq_pair = Some((isn.wrapping_add(1), isn ^ 0xffff));
        (f.client_ttl, f.server_ttl) = (64, Some(64));
        (f.packets_to_server, f.packets_to_client, f.bytes_to_server, f.bytes_to_client) = (3, 2, 120, 80);
        f
    }
}

#[cfg(test)]
mod tests {
    /// Memory grows with flows: every flow of every capture is one `Flow` (and
    /// its stream state while it is read). Rare parts are boxed; a field that
    /// grows the summary past this budget should be boxed or packed too.
    /// (408: 400, and one pointer for the boxed fragment counts, issue 32; 424:
    /// one more for the boxed application facts; 432: one for the later
    /// datagram keys, issue 30; 440: one for the HTTP exchanges, issue 32.)
    #[test]
    fn a_flow_summary_stays_within_its_budget() {
        assert!(
            // 400, then the interface a multi-homed end host answered on, the
            // TOS byte and VLAN tag, the pointer to a fragmented flow's counts,
            // the pointer to its application facts (issue 32), and the one to a
            // UDP flow's later datagram keys (issue 30), and the one to a
            // connection's HTTP exchanges (issue 32).
            std::mem::size_of::<super::Flow>() <= 440,
            "Flow is {} bytes",
            std::mem::size_of::<super::Flow>()
        );
        assert_eq!(std::mem::size_of::<super::Fingerprint>(), 48);
        assert_eq!(std::mem::size_of::<super::Ns>(), 8);
        assert_eq!(std::mem::size_of::<super::IcmpErrors>(), 8);
        assert!(std::mem::size_of::<super::table::Streams>() <= 96, "Streams");
    }

    #[test]
    fn a_midstream_flow_turned_twice_is_itself_but_for_what_only_one_side_told() {
        use super::{Ns, Orientation, TcpEvent};
        let mut f = super::Flow::test_tcp("198.19.96.10:50080", "198.19.3.17:40001", 1_000, 7);
        (f.orientation, f.client_isn, f.server_isn, f.syn_count) = (Orientation::Midstream, None, None, 0);
        (f.client_data_ns, f.server_data_ns, f.client_fin_ns) = (Ns::at(4_000), Ns::at(5_000), Ns::at(6_000));
        (f.client_payload, f.server_payload) = (Some((0, 900)), Some((0, 80)));
        (f.packets_to_server, f.packets_to_client, f.bytes_to_server, f.bytes_to_client) = (7, 3, 9_000, 200);
        let sender = "198.19.3.17".parse().unwrap();
        f.rst_to_server = Some(Box::new(TcpEvent { ts_ns: 8_000, to_client: false, sender, ttl: 63 }));
        (f.client_ttl, f.server_ttl, f.client_ip_id) = (64, Some(63), Some(9));
        let mut t = f.clone();
        t.turn_midstream();
        assert_eq!((t.client, t.server), (f.server, f.client));
        assert_eq!(t.seq_pair, f.seq_pair.map(|(c, s)| (s, c)));
        assert_eq!((t.packets_to_server, t.bytes_to_client), (3, 9_000));
        assert_eq!((t.client_data_ns, t.server_fin_ns), (Ns::at(5_000), Ns::at(6_000)));
        assert_eq!((t.client_payload, t.server_payload), (Some((0, 80)), Some((0, 900))));
        let rst = t.rst_to_client.as_deref().expect("the reset went to the side now the client");
        assert!(rst.to_client && t.rst_to_server.is_none());
        assert_eq!((t.client_ttl, t.server_ttl, t.client_ip_id), (63, Some(64), None));
        t.turn_midstream();
        f.client_ip_id = None; // the first packet's, of a side no longer first
        assert_eq!(t, f);
    }

    #[test]
    fn shifting_a_flow_moves_every_time_it_holds_and_nothing_else() {
        use super::{IcmpError, MtuSignal, Ns, TcpEvent};
        let mut f = super::Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", 1_000, 7);
        let sender = "198.19.0.1".parse().unwrap();
        let event = |ts_ns| Some(Box::new(TcpEvent { ts_ns, to_client: true, sender, ttl: 64 }));
        (f.first_client_ns, f.first_server_ns, f.synack_ns, f.handshake_done_ns) =
            (Ns::at(1_000), Ns::at(2_000), Ns::at(2_000), Ns::at(3_000));
        (f.client_data_ns, f.server_data_ns, f.client_fin_ns, f.server_fin_ns) =
            (Ns::at(4_000), Ns::at(5_000), Ns::NONE, Ns::at(6_000));
        (f.rst_to_client, f.rst_to_server, f.last_ns) = (event(7_000), event(8_000), 9_000);
        f.icmp_errors.push(IcmpError {
            ts_ns: 10_000,
            sender,
            v6: false,
            icmp_type: 3,
            code: 3,
            ttl: 64,
            about_request: true,
        });
        f.mtu_signal = Some(Box::new(MtuSignal { mtu: 1400, sender, v6: false, count: 1, first_ns: 11_000 }));
        let before = f.clone();
        f.shift_times(-500);
        let times = |f: &super::Flow| {
            vec![
                Some(f.first_ns),
                Some(f.last_ns),
                f.first_client_ns.get(),
                f.first_server_ns.get(),
                f.synack_ns.get(),
                f.handshake_done_ns.get(),
                f.client_data_ns.get(),
                f.server_data_ns.get(),
                f.client_fin_ns.get(),
                f.server_fin_ns.get(),
                f.rst_to_client.as_ref().map(|e| e.ts_ns),
                f.rst_to_server.as_ref().map(|e| e.ts_ns),
                f.icmp_errors.first().map(|e| e.ts_ns),
                f.mtu_signal.as_ref().map(|m| m.first_ns),
            ]
        };
        let moved: Vec<Option<i64>> = times(&before).into_iter().map(|t| t.map(|t| t - 500)).collect();
        assert_eq!(times(&f), moved, "every time moved, an unknown one stays unknown");
        f.shift_times(500);
        assert_eq!(f, before, "and nothing else changed");
    }

    #[test]
    fn an_unknown_time_is_never_a_known_one() {
        use super::Ns;
        assert_eq!(Ns::NONE.get(), None);
        assert!(Ns::NONE.is_none() && !Ns::NONE.is_some());
        assert_eq!(Ns::at(0).get(), Some(0));
        assert_eq!(Ns::at(-5).get(), Some(-5));
        assert_eq!(Ns::at(i64::MAX).get(), Some(i64::MAX));
        // The one value that stands for unknown is kept as the earliest time.
        assert_eq!(Ns::at(i64::MIN).get(), Some(crate::read::EARLIEST_NS));
        assert_eq!(Ns::from(None), Ns::NONE);
        assert_eq!(Ns::from(Some(7)), Ns::at(7));
        assert_eq!(format!("{:?}", Ns::at(7)), "Some(7)");
    }

    #[test]
    fn icmp_errors_are_kept_in_order_and_cleared() {
        let e = |ts_ns| super::IcmpError {
            ts_ns,
            sender: "198.19.0.1".parse().unwrap(),
            v6: false,
            icmp_type: 3,
            code: 3,
            ttl: 64,
            about_request: true,
        };
        let mut errors = super::IcmpErrors::default();
        assert!(errors.is_empty());
        errors.push(e(2));
        errors.extend([e(1), e(3)]);
        assert_eq!(errors.iter().map(|x| x.ts_ns).collect::<Vec<_>>(), [2, 1, 3]);
        assert_eq!((&errors).into_iter().count(), 3);
        errors.clear();
        assert_eq!(errors, super::IcmpErrors::default());
    }
}
