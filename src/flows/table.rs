//! The per-capture flow table: finds a packet's flow by its canonical 5-tuple
//! (FxHash map into a Vec, so flow order is packet order and output is
//! deterministic), applies the TCP / UDP / ICMP lifecycle rules, and updates the
//! flow's fixed-size summary.

use super::fingerprint::StreamPrefix;
use super::{EchoSummary, Endpoint, Flow, FlowProto, FlowStats, Flows, IcmpError, Orientation, TcpEvent};
use crate::config::FlowConfig;
use crate::decode::{tcp_flags, Fragment, IcmpMessage, Packet, Quoted, Transport};
use rustc_hash::FxHashMap;

/// Canonical key: protocol and the two endpoints in sorted order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct FlowKey {
    proto: FlowProto,
    lo: Endpoint,
    hi: Endpoint,
}

impl FlowKey {
    fn new(proto: FlowProto, a: Endpoint, b: Endpoint) -> FlowKey {
        if a <= b {
            FlowKey { proto, lo: a, hi: b }
        } else {
            FlowKey { proto, lo: b, hi: a }
        }
    }
}

/// The stream reassembly state of a flow being built, kept beside its summary
/// (`FlowTable::flows[i]` and `streams[i]`), so `finish` can drop it and keep the
/// summaries' vector as it is: no second copy of every flow at the peak.
struct Streams {
    client_stream: StreamPrefix,
    server_stream: StreamPrefix,
    /// Stream offset 0 of each direction: ISN + 1, or the first seq seen (midstream).
    client_base: Option<u32>,
    server_base: Option<u32>,
}

/// Most ICMP errors kept per flow.
const MAX_ICMP_ERRORS: usize = 4;
/// `-i any` copies: first packets at most this far apart (ns).
const COPY_WINDOW_NS: i64 = 1_000_000_000;

/// Builds the flows of one capture from its packets in capture order.
pub struct FlowTable {
    config: FlowConfig,
    flows: Vec<Flow>,
    streams: Vec<Streams>,
    index: FxHashMap<FlowKey, u32>,
    stats: FlowStats,
}

impl FlowTable {
    pub fn new(config: &FlowConfig) -> FlowTable {
        FlowTable {
            config: config.clone(),
            flows: Vec::new(),
            streams: Vec::new(),
            index: FxHashMap::default(),
            stats: FlowStats::default(),
        }
    }

    /// Flows so far.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Adds one packet; `payload` is its captured transport payload
    /// (`packet.payload(record.data)`). Only its first `fingerprint_len` bytes
    /// are ever used, so callers may pass just those.
    pub fn insert(&mut self, p: &Packet, payload: &[u8]) {
        self.stats.packets += 1;
        if p.fragment == Fragment::Later {
            self.stats.fragments += 1;
            return;
        }
        match &p.transport {
            Transport::Tcp(_) => self.insert_tcp(p, payload),
            Transport::Udp(_) => self.insert_udp(p, payload),
            Transport::Icmp(icmp) => match &icmp.message {
                IcmpMessage::EchoRequest { id, seq } => self.insert_echo(p, payload, *id, *seq, true),
                IcmpMessage::EchoReply { id, seq } => self.insert_echo(p, payload, *id, *seq, false),
                IcmpMessage::Error(q) => self.insert_icmp_error(p, icmp.v6, icmp.icmp_type, icmp.code, q),
                IcmpMessage::Other => self.stats.other += 1,
            },
            Transport::Other { .. } => self.stats.other += 1,
        }
    }

    fn new_flow(
        &mut self,
        key: FlowKey,
        p: &Packet,
        proto: FlowProto,
        client: Endpoint,
        server: Endpoint,
        orientation: Orientation,
    ) -> usize {
        let flow = Flow {
            proto,
            v6: p.src.is_ipv6(),
            client,
            server,
            orientation,
            first_ns: p.ts_ns,
            last_ns: p.ts_ns,
            first_client_ns: None,
            first_server_ns: None,
            client_isn: None,
            server_isn: None,
            syn_count: 0,
            synack_ns: None,
            handshake_done_ns: None,
            syn_mss: None,
            synack_mss: None,
            client_ip_id: None,
            client_ttl: 0,
            server_ttl: None,
            packets_to_server: 0,
            packets_to_client: 0,
            bytes_to_server: 0,
            bytes_to_client: 0,
            client_data_ns: None,
            server_data_ns: None,
            client_fin_ns: None,
            server_fin_ns: None,
            rst_to_client: None,
            rst_to_server: None,
            icmp_errors: Vec::new(),
            client_fp: Default::default(),
            server_fp: Default::default(),
            echo: None,
            first_interface: p.sll_ifindex.unwrap_or(p.interface),
            first_packet_type: p.sll_packet_type,
            copies: 0,
        };
        let limit = self.config.fingerprint_len;
        let idx = self.flows.len();
        self.flows.push(flow);
        self.streams.push(Streams {
            client_stream: StreamPrefix::new(limit),
            server_stream: StreamPrefix::new(limit),
            client_base: None,
            server_base: None,
        });
        self.index.insert(key, idx as u32);
        idx
    }

    /// Counts the packet in its direction (`to_server`: client → server).
    fn account(f: &mut Flow, p: &Packet, to_server: bool) -> bool {
        f.first_ns = f.first_ns.min(p.ts_ns);
        f.last_ns = f.last_ns.max(p.ts_ns);
        if to_server {
            f.packets_to_server += 1;
            f.bytes_to_server += u64::from(p.ip_len);
            if f.first_client_ns.is_none() {
                f.first_client_ns = Some(p.ts_ns);
                f.client_ip_id = p.ip_id.filter(|&id| id != 0);
                f.client_ttl = p.ttl;
            }
        } else {
            f.packets_to_client += 1;
            f.bytes_to_client += u64::from(p.ip_len);
            if f.first_server_ns.is_none() {
                f.first_server_ns = Some(p.ts_ns);
                f.server_ttl = Some(p.ttl);
            }
        }
        to_server
    }

    fn insert_tcp(&mut self, p: &Packet, payload: &[u8]) {
        let Transport::Tcp(t) = &p.transport else { return };
        let src = Endpoint { addr: p.src, port: t.src_port };
        let dst = Endpoint { addr: p.dst, port: t.dst_port };
        let key = FlowKey::new(FlowProto::Tcp, src, dst);
        let syn = t.flags & tcp_flags::SYN != 0;
        let ack = t.flags & tcp_flags::ACK != 0;
        let existing = self.index.get(&key).map(|&i| i as usize);

        let idx = match existing {
            Some(i) if syn && !ack => {
                let f = &self.flows[i];
                if f.client == src && f.client_isn == Some(t.seq) {
                    i // SYN retransmission
                } else {
                    self.new_flow(key, p, FlowProto::Tcp, src, dst, Orientation::Syn)
                }
            }
            Some(i) if syn && ack => {
                let f = &self.flows[i];
                let fits = f.server == src && (f.server_isn.is_none() || f.server_isn == Some(t.seq));
                if fits {
                    i
                } else {
                    self.new_flow(key, p, FlowProto::Tcp, dst, src, Orientation::SynAck)
                }
            }
            Some(i) => i,
            None if syn && !ack => self.new_flow(key, p, FlowProto::Tcp, src, dst, Orientation::Syn),
            None if syn && ack => self.new_flow(key, p, FlowProto::Tcp, dst, src, Orientation::SynAck),
            None => {
                let (client, server) =
                    if src_is_server(t.src_port, t.dst_port) { (dst, src) } else { (src, dst) };
                self.new_flow(key, p, FlowProto::Tcp, client, server, Orientation::Midstream)
            }
        };

        let (f, s) = (&mut self.flows[idx], &mut self.streams[idx]);
        let to_server = Self::account(f, p, src == f.client);
        let payload_len = p.payload_len;
        if to_server {
            if syn && !ack {
                if f.client_isn.is_none() {
                    f.client_isn = Some(t.seq);
                    f.syn_mss = t.mss;
                    s.client_base = Some(t.seq.wrapping_add(1));
                }
                f.syn_count += 1;
            } else if f.synack_ns.is_some() && f.handshake_done_ns.is_none() {
                f.handshake_done_ns = Some(p.ts_ns);
            }
            if payload_len > 0 && f.client_data_ns.is_none() {
                f.client_data_ns = Some(p.ts_ns);
            }
            if t.flags & tcp_flags::FIN != 0 && f.client_fin_ns.is_none() {
                f.client_fin_ns = Some(p.ts_ns);
            }
            if t.flags & tcp_flags::RST != 0 && f.rst_to_server.is_none() {
                f.rst_to_server =
                    Some(TcpEvent { ts_ns: p.ts_ns, to_client: false, sender: p.src, ttl: p.ttl });
            }
            if !syn && s.client_base.is_none() && t.flags & tcp_flags::RST == 0 {
                s.client_base = Some(t.seq); // midstream: offsets from the first seq seen
            }
            stream_add(&mut s.client_stream, s.client_base, t.seq, payload, payload_len, t.flags);
        } else {
            if syn && ack && f.server_isn.is_none() {
                f.server_isn = Some(t.seq);
                f.synack_mss = t.mss;
                f.synack_ns = Some(p.ts_ns);
                s.server_base = Some(t.seq.wrapping_add(1));
                if f.client_isn.is_none() {
                    f.client_isn = Some(t.ack.wrapping_sub(1));
                    s.client_base = Some(t.ack);
                }
            }
            if payload_len > 0 && f.server_data_ns.is_none() {
                f.server_data_ns = Some(p.ts_ns);
            }
            if t.flags & tcp_flags::FIN != 0 && f.server_fin_ns.is_none() {
                f.server_fin_ns = Some(p.ts_ns);
            }
            if t.flags & tcp_flags::RST != 0 && f.rst_to_client.is_none() {
                f.rst_to_client =
                    Some(TcpEvent { ts_ns: p.ts_ns, to_client: true, sender: p.src, ttl: p.ttl });
            }
            if !syn && s.server_base.is_none() && t.flags & tcp_flags::RST == 0 {
                s.server_base = Some(t.seq);
            }
            stream_add(&mut s.server_stream, s.server_base, t.seq, payload, payload_len, t.flags);
        }
    }

    fn insert_udp(&mut self, p: &Packet, payload: &[u8]) {
        let Transport::Udp(u) = &p.transport else { return };
        let src = Endpoint { addr: p.src, port: u.src_port };
        let dst = Endpoint { addr: p.dst, port: u.dst_port };
        let key = FlowKey::new(FlowProto::Udp, src, dst);
        let idle = self.config.udp_idle_ns;
        let idx = match self.index.get(&key).map(|&i| i as usize) {
            Some(i) if p.ts_ns.saturating_sub(self.flows[i].last_ns) <= idle => i,
            _ => self.new_flow(key, p, FlowProto::Udp, src, dst, Orientation::FirstPacket),
        };
        let (f, s) = (&mut self.flows[idx], &mut self.streams[idx]);
        let to_server = Self::account(f, p, src == f.client);
        let (stream, seen) = if to_server {
            (&mut s.client_stream, f.packets_to_server > 1)
        } else {
            (&mut s.server_stream, f.packets_to_client > 1)
        };
        if !seen {
            // The first datagram of each direction is its fingerprint.
            stream.add(0, payload);
            stream.set_end(u64::from(p.payload_len));
        }
        if to_server {
            if p.payload_len > 0 && f.client_data_ns.is_none() {
                f.client_data_ns = Some(p.ts_ns);
            }
        } else if f.server_data_ns.is_none() {
            f.server_data_ns = Some(p.ts_ns);
        }
    }

    fn insert_echo(&mut self, p: &Packet, payload: &[u8], id: u16, seq: u16, request: bool) {
        let limit = self.config.fingerprint_len;
        let src = Endpoint { addr: p.src, port: id };
        let dst = Endpoint { addr: p.dst, port: id };
        let key = FlowKey::new(FlowProto::Icmp, src, dst);
        let idle = self.config.udp_idle_ns;
        let idx = match self.index.get(&key).map(|&i| i as usize) {
            Some(i) if p.ts_ns.saturating_sub(self.flows[i].last_ns) <= idle => i,
            _ => {
                let (client, server) = if request { (src, dst) } else { (dst, src) };
                self.new_flow(key, p, FlowProto::Icmp, client, server, Orientation::FirstPacket)
            }
        };
        let f = &mut self.flows[idx];
        let to_server = Self::account(f, p, request);
        let echo = f.echo.get_or_insert(EchoSummary {
            first_seq: seq,
            last_seq: seq,
            requests: 0,
            replies: 0,
            payload: None,
        });
        if to_server {
            if echo.requests == 0 {
                echo.first_seq = seq;
                // Only the first `fingerprint_len` bytes count, like stream fingerprints.
                let n = payload.len().min(limit);
                echo.payload = Some((p.payload_len, xxhash_rust::xxh3::xxh3_64(&payload[..n])));
            }
            echo.requests += 1;
            echo.last_seq = seq;
            if f.client_data_ns.is_none() {
                f.client_data_ns = Some(p.ts_ns);
            }
        } else {
            echo.replies += 1;
            if f.server_data_ns.is_none() {
                f.server_data_ns = Some(p.ts_ns);
            }
        }
    }

    fn insert_icmp_error(&mut self, p: &Packet, v6: bool, icmp_type: u8, code: u8, q: &Quoted) {
        let Some((key, quoted_src)) = quoted_key(q) else {
            self.stats.icmp_unattributed += 1;
            return;
        };
        let Some(&i) = self.index.get(&key) else {
            self.stats.icmp_unattributed += 1;
            return;
        };
        let f = &mut self.flows[i as usize];
        f.last_ns = f.last_ns.max(p.ts_ns);
        if f.icmp_errors.len() < MAX_ICMP_ERRORS {
            f.icmp_errors.push(IcmpError {
                ts_ns: p.ts_ns,
                sender: p.src,
                v6,
                icmp_type,
                code,
                ttl: p.ttl,
                about_request: quoted_src == f.client,
            });
        }
    }

    /// Finishes the table: fingerprints hashed, `-i any` copies folded.
    pub fn finish(self) -> Flows {
        let FlowTable { mut flows, streams, index, mut stats, .. } = self;
        drop(index);
        for (f, s) in flows.iter_mut().zip(&streams) {
            f.client_fp = s.client_stream.fingerprint();
            f.server_fp = s.server_stream.fingerprint();
        }
        drop(streams);
        let before = flows.len();
        fold_copies(&mut flows);
        stats.duplicate_flows = (before - flows.len()) as u64;
        Flows { flows, stats }
    }
}

/// Adds a TCP segment's payload at its stream offset; a FIN marks the end.
fn stream_add(
    stream: &mut StreamPrefix,
    base: Option<u32>,
    seq: u32,
    payload: &[u8],
    payload_len: u32,
    flags: u8,
) {
    let Some(base) = base else { return };
    let off = seq.wrapping_sub(base);
    if off >= 1 << 31 {
        return; // before the stream start (or far out of window)
    }
    stream.add(u64::from(off), payload);
    if flags & tcp_flags::FIN != 0 {
        stream.set_end(u64::from(off) + u64::from(payload_len));
    }
}

/// Midstream orientation: the lower well-known port is the server.
fn src_is_server(src_port: u16, dst_port: u16) -> bool {
    match (src_port < 1024, dst_port < 1024) {
        (true, false) => true,
        (false, true) => false,
        _ => src_port < dst_port,
    }
}

/// The flow key an ICMP error's quoted header names, and the quoted sender.
fn quoted_key(q: &Quoted) -> Option<(FlowKey, Endpoint)> {
    use crate::decode::ip_proto;
    let (proto, sport, dport) = match q.protocol {
        ip_proto::TCP => (FlowProto::Tcp, q.src_port?, q.dst_port?),
        ip_proto::UDP => (FlowProto::Udp, q.src_port?, q.dst_port?),
        ip_proto::ICMP | ip_proto::ICMPV6 => {
            let (id, _) = q.echo?;
            (FlowProto::Icmp, id, id)
        }
        _ => return None,
    };
    let src = Endpoint { addr: q.src, port: sport };
    let dst = Endpoint { addr: q.dst, port: dport };
    Some((FlowKey::new(proto, src, dst), src))
}

/// `tcpdump -i any` on a NAT host sees each packet before and after translation:
/// flows sharing their client ISN (TCP), or their first datagram and time on
/// different interfaces (UDP, ICMP), are copies of one request. Keeps the copy
/// nearest the client — the earliest, then the highest TTL — and counts the rest.
fn fold_copies(flows: &mut Vec<Flow>) {
    // (protocol, signature, index), sorted: each run of one signature is a group
    // with its indices ascending. A sort rather than a map of vectors: 16 bytes
    // per flow at the peak of a million-flow capture instead of ~100.
    let mut sigs: Vec<(u8, u64, u32)> = flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| copy_signature(f).map(|sig| (f.proto as u8, sig, i as u32)))
        .collect();
    sigs.sort_unstable();
    let mut drop = vec![false; flows.len()];
    for run in sigs.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)).filter(|g| g.len() > 1) {
        let group: Vec<usize> = run.iter().map(|&(_, _, i)| i as usize).collect();
        // Within a group, cluster copies whose first packets are close in time.
        for (n, &i) in group.iter().enumerate() {
            if drop[i] {
                continue;
            }
            for &j in &group[n + 1..] {
                if drop[j] || !are_copies(&flows[i], &flows[j]) {
                    continue;
                }
                let keep_j = nearer_client(&flows[j], &flows[i]);
                let (keep, gone) = if keep_j { (j, i) } else { (i, j) };
                drop[gone] = true;
                flows[keep].copies += 1 + flows[gone].copies;
                if keep_j {
                    break;
                }
            }
        }
    }
    let mut k = 0;
    flows.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
}

fn copy_signature(f: &Flow) -> Option<u64> {
    match f.proto {
        FlowProto::Tcp => f.client_isn.filter(|_| f.orientation != Orientation::Midstream).map(u64::from),
        FlowProto::Udp => f.client_fp.join_key(),
        FlowProto::Icmp => f.echo.as_ref().and_then(|e| e.payload).map(|(len, h)| h ^ u64::from(len)),
    }
}

fn are_copies(a: &Flow, b: &Flow) -> bool {
    // abs_diff: the two times may sit at opposite i64 limits (a clamped pcapng timestamp).
    if a.first_ns.abs_diff(b.first_ns) > COPY_WINDOW_NS.unsigned_abs()
        || (a.client == b.client && a.server == b.server)
    {
        return false;
    }
    match a.proto {
        FlowProto::Tcp => a.server_isn.is_none() || b.server_isn.is_none() || a.server_isn == b.server_isn,
        // Identical datagrams are only copies when seen on different interfaces.
        FlowProto::Udp | FlowProto::Icmp => {
            (a.first_interface, a.first_packet_type) != (b.first_interface, b.first_packet_type)
                && a.first_ns.abs_diff(b.first_ns) <= 1_000_000
        }
    }
}

fn nearer_client(a: &Flow, b: &Flow) -> bool {
    (a.first_ns, std::cmp::Reverse(a.client_ttl)) < (b.first_ns, std::cmp::Reverse(b.client_ttl))
}
