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
use super::Ns;
use super::{Endpoint, Flow, FlowProto, FlowStats, Flows, Orientation};
use crate::config::FlowConfig;
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
}

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
            f.carriers = s.client_head.take();
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
