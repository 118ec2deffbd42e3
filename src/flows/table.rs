//! The per-capture flow table: finds a packet's flow by its canonical 5-tuple
//! (FxHash map into a Vec, so flow order is packet order and output is
//! deterministic), applies the TCP / UDP / ICMP lifecycle rules, and updates the
//! flow's fixed-size summary. The rules live beside it: `tcp` (connections),
//! `datagram` (UDP, ICMP echo and errors), `copies` (`-i any` folding), `key`.

use super::carrier::StreamHead;
use super::copies::fold_copies;
use super::fingerprint::Learning;
use super::key::FlowKey;
use super::reassembly::{FragNotes, Reassembled, Reassembler};
use super::FlowConfig;
use super::Ns;
use super::{AppFacts, AppProto, Endpoint, Flow, FlowProto, FlowStats, Flows, Orientation};
use crate::decode::{Fragment, IcmpMessage, Packet, Transport};
use rustc_hash::FxHashMap;

/// The stream reassembly state of a flow being built, kept beside its summary
/// (`FlowTable::flows[i]` and `streams[i]`), so `finish` can drop it and keep the
/// summaries' vector as it is: no second copy of every flow at the peak.
pub(super) struct Streams {
    pub(super) client_stream: Learning,
    pub(super) server_stream: Learning,
    /// The client stream's first bytes while they may hold carriers.
    pub(super) client_head: StreamHead,
    /// Stream offset 0 of each direction: ISN + 1, or the first seq seen (midstream).
    pub(super) client_base: Option<u32>,
    pub(super) server_base: Option<u32>,
    /// The HTTP status at the start of the server stream, once seen (joined
    /// to the client head's facts when the table finishes).
    pub(super) server_status: Option<u16>,
    /// The HTTP/1.x exchanges being read, once the client stream began
    /// with a request (boxed: most flows are not HTTP).
    pub(super) http: Option<Box<super::exchange::Tracker>>,
}

/// Most interfaces a capture's flows are looked up on for a reply that left by
/// another interface than its request came in by.
const MAX_INTERFACES: usize = 16;

/// Most ICMP errors kept per flow.
pub(super) const MAX_ICMP_ERRORS: usize = 4;

/// Builds the flows of one capture from its packets in capture order.
pub struct FlowTable {
    pub(super) config: FlowConfig,
    pub(super) flows: Vec<Flow>,
    pub(super) streams: Vec<Streams>,
    pub(super) index: FxHashMap<FlowKey, u32>,
    pub(super) stats: FlowStats,
    /// The interfaces flows began on so far (at most [`MAX_INTERFACES`]): where
    /// a reply may find its request's flow (see [`FlowTable::reply_elsewhere`]).
    pub(super) interfaces: Vec<u32>,
    /// No new flows: a packet that would begin one is dropped (a time shard's
    /// records after its window, which only carry on flows begun in it).
    pub(super) closed: bool,
    /// IP fragments being reassembled, and the datagrams just ended.
    frags: Reassembler,
    ended: Vec<Reassembled>,
    /// HTTP readers of connections settled at their FIN, emptied, for the
    /// next connections (at most [`SPARE_READERS`]): one allocation reused,
    /// not one made and freed per connection.
    #[allow(clippy::vec_box)] // the boxes themselves are what is reused
    pub(super) spare_readers: Vec<Box<super::exchange::Tracker>>,
}

/// Most emptied HTTP readers a table keeps for reuse.
pub(super) const SPARE_READERS: usize = 16;

impl FlowTable {
    pub fn new(config: &FlowConfig) -> FlowTable {
        FlowTable {
            config: config.clone(),
            flows: Vec::new(),
            streams: Vec::new(),
            index: FxHashMap::default(),
            stats: FlowStats::default(),
            interfaces: Vec::new(),
            closed: false,
            frags: Reassembler::default(),
            ended: Vec::new(),
            spare_readers: Vec::new(),
        }
    }

    /// Flows so far.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// The flows so far, as the packets inserted have built them.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Marks the flows begun since the `from`-th as recorded by `host` (the
    /// file just read is that host's: see [`Flow::host`]).
    pub fn set_host(&mut self, from: usize, host: u16) {
        for f in self.flows.iter_mut().skip(from) {
            f.host = host;
        }
    }

    /// While `closed`, packets only carry on the flows already in the table;
    /// one that would begin a new flow is dropped, and so are the packets of
    /// that flow after it. The flows then are exactly those an open table
    /// builds that began before the close.
    pub fn set_closed(&mut self, closed: bool) {
        self.closed = closed;
    }

    /// Adds one packet; `payload` is its captured transport payload
    /// (`packet.payload(record.data)`). Only its first `payload_limit()` bytes
    /// are ever used, so callers may pass just those.
    pub fn insert(&mut self, p: &Packet, payload: &[u8]) {
        self.stats.packets += 1;
        if !self.frags.is_empty() {
            self.frags.expire(p.ts_ns, &mut self.ended);
            self.add_ended();
        }
        if p.fragment != Fragment::None {
            self.stats.fragments += u64::from(p.fragment == Fragment::Later);
            self.frags.add(p, payload, &mut self.ended);
            self.add_ended();
            return;
        }
        self.dispatch(p, payload);
    }

    /// A (whole) packet to the flow its transport says.
    fn dispatch(&mut self, p: &Packet, payload: &[u8]) {
        match &p.transport {
            Transport::Tcp(_) => self.insert_tcp(p, payload),
            Transport::Udp(_) => self.insert_udp(p, payload),
            Transport::Icmp(icmp) => match &icmp.message {
                IcmpMessage::EchoRequest { id, seq } => self.insert_echo(p, payload, *id, *seq, true),
                IcmpMessage::EchoReply { id, seq } => self.insert_echo(p, payload, *id, *seq, false),
                IcmpMessage::Error(q) => self.insert_icmp_error(p, icmp, q),
                IcmpMessage::Other => self.stats.other += 1,
            },
            Transport::Other { .. } => self.stats.other += 1,
        }
    }

    /// The datagrams the reassembly ended, each one packet of its flow.
    fn add_ended(&mut self) {
        if self.ended.is_empty() {
            return;
        }
        let mut ended = std::mem::take(&mut self.ended);
        for r in ended.drain(..) {
            self.dispatch(&r.packet, &r.payload);
            if let Some((idx, to_server)) = self.flow_of(&r.packet) {
                let frags = self.flows[idx].frags.get_or_insert_with(Box::default);
                if to_server { &mut frags.to_server } else { &mut frags.to_client }.add(&r);
            }
        }
        self.ended = ended;
    }

    /// The flow a packet just dispatched went to, and whether it went to the
    /// server; None for ICMP errors and other protocols.
    fn flow_of(&self, p: &Packet) -> Option<(usize, bool)> {
        let ep = |addr, port| Endpoint { addr, port };
        let (proto, src, dst) = match &p.transport {
            Transport::Tcp(t) => (FlowProto::Tcp, ep(p.src, t.src_port), ep(p.dst, t.dst_port)),
            Transport::Udp(u) => (FlowProto::Udp, ep(p.src, u.src_port), ep(p.dst, u.dst_port)),
            Transport::Icmp(i) => match i.message {
                IcmpMessage::EchoRequest { id, .. } | IcmpMessage::EchoReply { id, .. } => {
                    (FlowProto::Icmp, ep(p.src, id), ep(p.dst, id))
                }
                _ => return None,
            },
            Transport::Other { .. } => return None,
        };
        let idx = *self.index.get(&FlowKey::of(p, proto, src, dst))? as usize;
        Some((idx, self.flows[idx].client == src))
    }

    /// The reassembly's problems to warn about since the last call (one file's).
    pub fn take_frag_notes(&mut self) -> FragNotes {
        self.frags.take_notes()
    }

    pub(super) fn new_flow(
        &mut self,
        key: FlowKey,
        p: &Packet,
        proto: FlowProto,
        client: Endpoint,
        server: Endpoint,
        orientation: Orientation,
    ) -> Option<usize> {
        if self.closed {
            // As when open, the tuple no longer reaches the flow it had: the
            // rest of this new flow's packets are dropped with it, not added
            // to the old one.
            self.index.remove(&key);
            return None;
        }
        let mut flow = Flow::new(proto, p.src.is_ipv6(), client, server, orientation, p.ts_ns);
        (flow.first_interface, flow.first_packet_type) = (super::key::interface_of(p), p.sll_packet_type);
        let idx = self.flows.len();
        self.flows.push(flow);
        self.streams.push(Streams {
            client_stream: Learning::Nothing,
            server_stream: Learning::Nothing,
            client_head: StreamHead::default(),
            client_base: None,
            server_base: None,
            server_status: None,
            http: None,
        });
        self.index.insert(key, idx as u32);
        if !self.interfaces.contains(&key.interface) && self.interfaces.len() < MAX_INTERFACES {
            self.interfaces.push(key.interface);
        }
        Some(idx)
    }

    /// The flow a packet with no flow on its own interface belongs to when it
    /// answers a flow seen on exactly one other interface of this capture: an
    /// end host with two interfaces (`tcpdump -i any` on a multi-homed host)
    /// receives a request on one and sends the reply out of the other, and no
    /// packet is on both. The flow on the other interface must hold packets the
    /// other way only, the last at most the UDP idle time before. A host that
    /// forwards sees the request on two interfaces (two flows with this tuple)
    /// and its reply on an interface that saw the request: nothing changes
    /// there. From then on the packet's interface reaches that flow too; the
    /// flow records where its other direction was seen.
    pub(super) fn reply_elsewhere(&mut self, key: FlowKey, src: Endpoint, ts_ns: i64) -> Option<usize> {
        if key.side {
            return None;
        }
        let mut found = None;
        for &other in self.interfaces.iter().filter(|&&i| i != key.interface) {
            if let Some(&i) = self.index.get(&FlowKey { interface: other, ..key }) {
                if found.replace(i as usize).is_some() {
                    return None; // on two other interfaces: a host that forwards
                }
            }
        }
        let i = found?;
        let f = &self.flows[i];
        let answers = if src == f.server {
            f.packets_to_client == 0 && f.packets_to_server > 0
        } else {
            src == f.client && f.packets_to_server == 0 && f.packets_to_client > 0
        };
        if !answers || ts_ns.saturating_sub(f.last_ns) > self.config.udp_idle_ns {
            return None;
        }
        self.index.insert(key, i as u32);
        self.flows[i].answered_on = key.interface;
        self.stats.return_elsewhere += 1;
        Some(i)
    }

    /// Counts the packet in its direction (`to_server`: client → server).
    pub(super) fn account(f: &mut Flow, p: &Packet, to_server: bool) -> bool {
        f.first_ns = f.first_ns.min(p.ts_ns);
        f.last_ns = f.last_ns.max(p.ts_ns);
        if to_server {
            f.packets_to_server += 1;
            f.bytes_to_server += u64::from(p.ip_len);
            if f.first_client_ns.is_none() {
                f.first_client_ns = Ns::at(p.ts_ns);
                f.client_ip_id = p.ip_id.filter(|&id| id != 0);
                f.client_ttl = p.ttl;
                f.client_tos = p.tos;
                f.client_vlan = p.vlan.unwrap_or(Flow::NO_VLAN);
            }
        } else {
            f.packets_to_client += 1;
            f.bytes_to_client += u64::from(p.ip_len);
            if f.first_server_ns.is_none() {
                f.first_server_ns = Ns::at(p.ts_ns);
                f.server_ttl = Some(p.ttl);
            }
        }
        to_server
    }

    /// Finishes the table: fingerprints hashed, `-i any` copies folded.
    pub fn finish(self) -> Flows {
        let mut flows = self.finish_unfolded();
        flows.fold_copies();
        flows
    }

    /// Finishes the table with fingerprints hashed and copies kept: the caller
    /// splits the capture into observation points or folds them
    /// ([`Flows::fold_copies`]).
    pub fn finish_unfolded(mut self) -> Flows {
        // The datagrams still in progress end incomplete with the capture.
        self.frags.flush(&mut self.ended);
        self.add_ended();
        self.stats.reassembly = Box::new(self.frags.stats().clone());
        let FlowTable { mut flows, mut streams, index, stats, .. } = self;
        drop(index);
        for (f, s) in flows.iter_mut().zip(&mut streams) {
            // Prefixes that became final while reading are in the flow already.
            if let Some(fp) = std::mem::take(&mut s.client_stream).finish() {
                f.client_fp = fp;
            }
            if let Some(fp) = std::mem::take(&mut s.server_stream).finish() {
                f.server_fp = fp;
            }
            if let Some(t) = s.http.take() {
                f.one_exchange = t.one_whole();
                if !f.one_exchange {
                    f.exchanges = t.finish().map(Box::new);
                }
            }
            let (carriers, app) = s.client_head.take();
            f.carriers = carriers;
            if app.is_some() {
                f.app = app; // TCP: the client head's (UDP flows' DNS facts are set already)
            }
            // The response's status beside the request's facts (alone when
            // the request was not recognised: a server that answered nothing).
            if let Some(code) = s.server_status {
                let app = f.app.get_or_insert_with(|| Box::new(AppFacts::new(AppProto::Http)));
                if app.proto == AppProto::Http {
                    app.status = Some(code);
                }
            }
            // A PROXY header is the proxy's, not the client's: compare what follows it.
            if let Some(fp) = f.carriers.as_mut().and_then(|c| c.payload_fp.take()) {
                f.client_fp = fp;
            }
        }
        drop(streams);
        Flows { flows, stats }
    }
}

impl Flows {
    /// Folds `-i any` copies (see `copies`) and counts them in `stats.duplicate_flows`.
    pub fn fold_copies(&mut self) {
        let before = self.flows.len();
        fold_copies(&mut self.flows);
        self.stats.duplicate_flows += (before - self.flows.len()) as u64;
    }
}

#[cfg(test)]
mod frag_tests {
    use super::*;
    use crate::read::{LinkType, RawRecord};

    /// Raw IPv4 fragments of a UDP datagram 198.18.0.1:4000 -> 198.18.0.2:5000
    /// (`dst` last byte), IP id `id`, 3000 IP bytes, at MTU 1500.
    fn fragments(id: u8, src_last: u8) -> Vec<Vec<u8>> {
        let mut data = vec![0x0f, 0xa0, 0x13, 0x88, 0x0b, 0xb8, 0, 0];
        data.extend(std::iter::repeat_n(id, 2980 - 8));
        (data.chunks(1480).enumerate())
            .map(|(k, chunk)| {
                let off = k * 1480;
                let more = off + chunk.len() < data.len();
                let total = (20 + chunk.len() as u16).to_be_bytes();
                let field = ((off / 8) as u16 | if more { 0x2000 } else { 0 }).to_be_bytes();
                let mut b = vec![0x45, 0, total[0], total[1], 0, id, field[0], field[1], 64, 17, 0, 0];
                b.extend_from_slice(&[198, 18, 0, src_last, 198, 18, 0, 2]);
                b.extend_from_slice(chunk);
                b
            })
            .collect()
    }

    fn insert(t: &mut FlowTable, b: &[u8], ts_ns: i64, interface: u32) {
        let rec = RawRecord {
            ts_ns,
            interface,
            link_type: LinkType::RawIp,
            data: b,
            orig_len: 0,
            record: 1,
            byte_offset: 0,
        };
        let p = crate::decode::decode(&rec).unwrap();
        t.insert(&p, p.payload(b));
    }

    #[test]
    fn a_fragmented_datagram_is_one_packet_of_its_flow_with_its_fragments_counted() {
        let mut t = FlowTable::new(&FlowConfig::default());
        let mut a = fragments(1, 1);
        a.reverse();
        for b in &a {
            insert(&mut t, b, 10, 0);
        }
        // The same datagram on another interface (tcpdump -i any) is another one.
        for b in &fragments(1, 1)[..2] {
            insert(&mut t, b, 20, 1);
        }
        let f = t.finish_unfolded();
        assert_eq!(f.flows.len(), 2);
        let (x, y) = (&f.flows[0], &f.flows[1]);
        assert_eq!((x.packets_to_server, x.bytes_to_server, x.first_interface), (1, 3000, 0));
        let fx = x.frags.as_deref().unwrap().to_server;
        assert_eq!(
            (fx.fragments, fx.datagrams, fx.incomplete, fx.largest_fragment, fx.largest_datagram),
            (3, 1, 0, 1500, 3000)
        );
        // The second copy lost its last fragment: one packet of the bytes that came, incomplete.
        assert_eq!((y.packets_to_server, y.bytes_to_server, y.first_interface), (1, 20 + 2 * 1480, 1));
        let fy = y.frags.as_deref().unwrap().to_server;
        assert_eq!((fy.fragments, fy.datagrams, fy.incomplete, fy.largest_datagram), (2, 1, 1, 0));
        assert_eq!((f.stats.fragments, f.stats.reassembly.whole, f.stats.reassembly.incomplete), (3, 1, 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{LinkType, RawRecord};

    /// An IPv4 packet 10.0.0.`src` -> 10.0.0.`dst` of protocol `proto`.
    fn ip(src: u8, dst: u8, proto: u8, body: &[u8]) -> Vec<u8> {
        let total = (20 + body.len() as u16).to_be_bytes();
        let mut b =
            vec![0x45, 0, total[0], total[1], 0, 1, 0, 0, 64, proto, 0, 0, 10, 0, 0, src, 10, 0, 0, dst];
        b.extend_from_slice(body);
        b
    }

    fn udp(src: (u8, u16), dst: (u8, u16), data: &[u8]) -> Vec<u8> {
        let mut u = src.1.to_be_bytes().to_vec();
        u.extend(dst.1.to_be_bytes());
        u.extend((8 + data.len() as u16).to_be_bytes());
        u.extend([0, 0]);
        u.extend(data);
        ip(src.0, dst.0, 17, &u)
    }

    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;

    fn tcp(src: (u8, u16), dst: (u8, u16), flags: u8, seq: u32, ack: u32) -> Vec<u8> {
        let mut t = src.1.to_be_bytes().to_vec();
        t.extend(dst.1.to_be_bytes());
        t.extend(seq.to_be_bytes());
        t.extend(ack.to_be_bytes());
        t.extend([0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        ip(src.0, dst.0, 6, &t)
    }

    /// The three packets of a handshake of client `c` with server 10.0.0.2:80, ISN `isn`.
    fn handshake(c: (u8, u16), isn: u32) -> [Vec<u8>; 3] {
        let s = (2, 80);
        [tcp(c, s, SYN, isn, 0), tcp(s, c, SYN | ACK, 7, isn + 1), tcp(c, s, ACK, isn + 1, 8)]
    }

    /// An ICMP port unreachable from 10.0.0.`from` quoting `packet` (its IP
    /// header and first 8 bytes).
    fn unreachable(from: u8, to: u8, packet: &[u8]) -> Vec<u8> {
        let mut m = vec![3, 3, 0, 0, 0, 0, 0, 0];
        m.extend_from_slice(&packet[..28]);
        ip(from, to, 1, &m)
    }

    fn put(t: &mut FlowTable, b: &[u8], ts_ns: i64, interface: u32) {
        let rec = RawRecord {
            ts_ns,
            interface,
            link_type: LinkType::RawIp,
            data: b,
            orig_len: b.len() as u32,
            record: 1,
            byte_offset: 0,
        };
        let p = crate::decode::decode(&rec).unwrap();
        t.insert(&p, p.payload(b));
    }

    fn ep(last: u8, port: u16) -> Endpoint {
        Endpoint { addr: std::net::Ipv4Addr::new(10, 0, 0, last).into(), port }
    }

    #[test]
    fn both_directions_are_one_flow_and_flows_come_in_the_order_of_their_first_packet() {
        let mut t = FlowTable::new(&FlowConfig::default());
        assert!(t.is_empty());
        let [syn, syn_ack, ack] = handshake((1, 40000), 100);
        put(&mut t, &syn, 1_000, 0);
        put(&mut t, &udp((3, 5353), (4, 53), b"q"), 1_500, 0);
        put(&mut t, &syn_ack, 2_000, 0);
        put(&mut t, &ack, 3_000, 0);
        put(&mut t, &udp((4, 53), (3, 5353), b"answer"), 4_000, 0);
        put(&mut t, &ip(1, 2, 253, &[0; 8]), 5_000, 0); // another IP protocol
        put(&mut t, &ip(1, 2, 1, &[13, 0, 0, 0, 0, 0, 0, 0]), 6_000, 0); // an ICMP timestamp request
        assert_eq!(t.len(), 2);
        let f = t.finish();
        assert_eq!((f.stats.packets, f.stats.other), (7, 2));
        let (c, u) = (&f.flows[0], &f.flows[1]);
        assert_eq!(
            (c.proto, c.client, c.server, c.orientation),
            (FlowProto::Tcp, ep(1, 40000), ep(2, 80), Orientation::Syn)
        );
        assert_eq!((c.packets_to_server, c.packets_to_client, c.first_ns, c.last_ns), (2, 1, 1_000, 3_000));
        assert_eq!((c.bytes_to_server, c.bytes_to_client), (80, 40));
        assert_eq!((u.proto, u.client, u.server), (FlowProto::Udp, ep(3, 5353), ep(4, 53)));
        assert_eq!((u.packets_to_server, u.packets_to_client, u.first_ns, u.last_ns), (1, 1, 1_500, 4_000));
    }

    #[test]
    fn a_closed_table_carries_its_flows_on_and_begins_none_until_it_opens_again() {
        let mut t = FlowTable::new(&FlowConfig::default());
        let [syn, syn_ack, ack] = handshake((1, 40000), 100);
        put(&mut t, &syn, 1_000, 0);
        t.set_closed(true);
        put(&mut t, &syn_ack, 2_000, 0);
        put(&mut t, &udp((3, 5353), (4, 53), b"q"), 2_500, 0);
        put(&mut t, &udp((4, 53), (3, 5353), b"a"), 2_600, 0);
        put(&mut t, &ack, 3_000, 0);
        assert_eq!(t.len(), 1, "no flow begun while closed, not even by its reply");
        t.set_closed(false);
        put(&mut t, &udp((3, 5353), (4, 53), b"q2"), 4_000, 0);
        let f = t.finish();
        assert_eq!(f.stats.packets, 6, "every packet is counted, kept or not");
        assert_eq!(f.flows.len(), 2);
        assert_eq!(
            (f.flows[0].packets_to_server, f.flows[0].packets_to_client, f.flows[0].last_ns),
            (2, 1, 3_000)
        );
        assert_eq!(
            (f.flows[1].first_ns, f.flows[1].packets_to_server, f.flows[1].packets_to_client),
            (4_000, 1, 0)
        );
    }

    /// A connection seen on interfaces 0 and 1 (10 ns apart), and a port
    /// scanner's two probes with one ISN on interface 0.
    fn copies() -> FlowTable {
        let mut t = FlowTable::new(&FlowConfig::default());
        for (k, p) in handshake((1, 40000), 100).iter().enumerate() {
            put(&mut t, p, 1_000 + k as i64 * 1_000, 0);
            put(&mut t, p, 1_010 + k as i64 * 1_000, 1);
        }
        put(&mut t, &tcp((5, 1000), (6, 22), SYN, 42, 0), 9_000, 0);
        put(&mut t, &tcp((5, 1001), (6, 23), SYN, 42, 0), 9_001, 0);
        t
    }

    #[test]
    fn copies_of_a_connection_on_two_interfaces_fold_into_one_and_are_counted() {
        let unfolded = copies().finish_unfolded();
        assert_eq!(unfolded.flows.len(), 4, "kept apart until folded");
        assert_eq!((unfolded.flows[0].first_interface, unfolded.flows[1].first_interface), (0, 1));
        assert_eq!(unfolded.stats.duplicate_flows, 0);
        let f = copies().finish();
        assert_eq!(f.flows.len(), 3, "the scanner's probes on one interface are no copies");
        assert_eq!(f.stats.duplicate_flows, 1);
        assert_eq!((f.flows[0].first_interface, f.flows[0].copies), (0, 1), "the earlier copy kept");
        assert_eq!((f.flows[1].copies, f.flows[2].copies), (0, 0));
    }

    #[test]
    fn a_reply_on_another_interface_joins_the_one_flow_it_answers_there() {
        let (a, b) = ((1, 5000), (2, 53));
        let mut t = FlowTable::new(&FlowConfig::default());
        put(&mut t, &udp(a, b, b"q"), 1_000, 0);
        put(&mut t, &udp(b, a, b"r"), 2_000, 1);
        put(&mut t, &udp(a, b, b"q"), 3_000, 0);
        put(&mut t, &udp(b, a, b"r"), 4_000, 1);
        let f = t.finish();
        assert_eq!(f.flows.len(), 1);
        let x = &f.flows[0];
        assert_eq!(
            (x.packets_to_server, x.packets_to_client, x.first_interface, x.answered_on),
            (2, 2, 0, 1)
        );
        assert_eq!(f.stats.return_elsewhere, 1, "looked up once, then reached on its interface");

        // A host that forwards saw the request on two interfaces: the reply on a third is its own flow.
        let mut t = FlowTable::new(&FlowConfig::default());
        put(&mut t, &udp(a, b, b"q"), 1_000, 0);
        put(&mut t, &udp(a, b, b"q"), 1_001, 1);
        put(&mut t, &udp(b, a, b"r"), 2_000, 2);
        let f = t.finish_unfolded();
        assert_eq!((f.flows.len(), f.stats.return_elsewhere), (3, 0));

        // Not when the flow there was answered already, nor after the idle time.
        let idle = FlowConfig::default().udp_idle_ns;
        let mut t = FlowTable::new(&FlowConfig::default());
        put(&mut t, &udp(a, b, b"q"), 1_000, 0);
        put(&mut t, &udp(b, a, b"r"), 2_000, 0);
        put(&mut t, &udp(b, a, b"r"), 3_000, 1);
        put(&mut t, &udp((7, 5000), b, b"q"), 10_000, 0);
        put(&mut t, &udp(b, (7, 5000), b"r"), 10_001 + idle, 1);
        let f = t.finish_unfolded();
        assert_eq!((f.flows.len(), f.stats.return_elsewhere), (4, 0));
    }

    #[test]
    fn a_reply_is_looked_for_on_the_first_interfaces_only() {
        let b = (2, 53);
        let mut t = FlowTable::new(&FlowConfig::default());
        for i in 0..MAX_INTERFACES as u32 {
            put(&mut t, &udp((1, 5000 + i as u16), b, b"q"), 1_000, i);
        }
        put(&mut t, &udp((1, 6000), b, b"q"), 2_000, 40); // a 17th interface
        put(&mut t, &udp(b, (1, 6000), b"r"), 3_000, 41);
        put(&mut t, &udp(b, (1, 5005), b"r"), 3_000, 41); // asked on interface 5
        let f = t.finish_unfolded();
        assert_eq!(f.stats.return_elsewhere, 1);
        assert_eq!(
            f.flows.len(),
            MAX_INTERFACES + 2,
            "the reply of the 17th interface's request is a flow of its own"
        );
        assert_eq!(f.flows[5].answered_on, 41);
    }

    #[test]
    fn icmp_errors_go_to_the_flow_they_quote_a_few_kept_each() {
        let (a, b) = ((1, 5000), (2, 53));
        let q = udp(a, b, b"q");
        let mut t = FlowTable::new(&FlowConfig::default());
        put(&mut t, &q, 1_000, 0);
        for k in 0..MAX_ICMP_ERRORS as i64 + 2 {
            put(&mut t, &unreachable(9, 1, &q), 2_000 + k, 0);
        }
        put(&mut t, &unreachable(9, 1, &udp(a, (2, 54), b"q")), 3_000, 0); // quotes no flow
        let f = t.finish();
        assert_eq!(f.flows.len(), 1);
        let x = &f.flows[0];
        assert_eq!(x.icmp_errors.len(), MAX_ICMP_ERRORS);
        assert_eq!(x.last_ns, 2_005, "every error counts towards the flow's time");
        assert!(x.icmp_errors.iter().all(|e| e.about_request && e.sender == ep(9, 0).addr));
        assert_eq!(
            (x.icmp_errors[0].ts_ns, x.icmp_errors[0].icmp_type, x.icmp_errors[0].code),
            (2_000, 3, 3)
        );
        assert_eq!(f.stats.icmp_unattributed, 1);
    }

    #[test]
    fn a_datagram_exchange_silent_longer_than_the_idle_time_is_split() {
        let (a, b) = ((1, 5000), (2, 53));
        let times = [0, 500_000_000, 2_000_000_000, 2_500_000_000];
        let flows = |config: &FlowConfig| {
            let mut t = FlowTable::new(config);
            for ts in times {
                put(&mut t, &udp(a, b, b"q"), ts, 0);
            }
            t.finish().flows.iter().map(|f| (f.first_ns, f.packets_to_server)).collect::<Vec<_>>()
        };
        assert_eq!(flows(&FlowConfig::default()), [(0, 4)]);
        let short = FlowConfig { udp_idle_ns: 1_000_000_000, ..FlowConfig::default() };
        assert_eq!(flows(&short), [(0, 2), (2_000_000_000, 2)]);
        let exact = FlowConfig { udp_idle_ns: 1_500_000_000, ..FlowConfig::default() };
        assert_eq!(flows(&exact), [(0, 4)], "a gap of exactly the idle time goes on");
    }
}
