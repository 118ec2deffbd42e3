//! TCP lifecycle rules of the flow table: a new SYN with a new ISN on a reused
//! 5-tuple starts a new flow, SYN retransmissions are counted, a SYN-ACK alone
//! orients the flow, anything else starts a midstream flow; streams are
//! reassembled by sequence number for the fingerprints.

use super::exchange;
use super::facts;
use super::fingerprint::{Fingerprint, Learning};
use super::key::{src_is_server, FlowKey};
use super::table::{FlowTable, SPARE_READERS};
use super::Ns;
use super::{Endpoint, FlowProto, Orientation, TcpEvent};
use crate::decode::{tcp_flags, Packet, TcpInfo, Transport};

/// A SYN-ACK that answers flow `f`'s client SYN (it acknowledges the client
/// ISN) while the handshake is not done: the server answering the same SYN (or
/// its retransmission) again, not a new connection on a reused tuple.
fn answers_again(f: &super::Flow, t: &TcpInfo) -> bool {
    f.handshake_done_ns.is_none() && f.client_isn.is_some_and(|c| c.wrapping_add(1) == t.ack)
}

impl FlowTable {
    pub(super) fn insert_tcp(&mut self, p: &Packet, payload: &[u8]) {
        let Transport::Tcp(t) = &p.transport else { return };
        let src = Endpoint { addr: p.src, port: t.src_port };
        let dst = Endpoint { addr: p.dst, port: t.dst_port };
        let key = FlowKey::of(p, FlowProto::Tcp, src, dst);
        let syn = t.flags & tcp_flags::SYN != 0;
        let ack = t.flags & tcp_flags::ACK != 0;
        let fin = t.flags & tcp_flags::FIN != 0;
        let existing = match self.index.get(&key) {
            Some(&i) => Some(i as usize),
            None => self.reply_elsewhere(key, src, p.ts_ns),
        };

        let idx = match existing {
            Some(i) if syn && !ack => {
                let f = &self.flows[i];
                if f.client == src && f.client_isn == Some(t.seq) {
                    Some(i) // SYN retransmission
                } else {
                    self.new_flow(key, p, FlowProto::Tcp, src, dst, Orientation::Syn)
                }
            }
            Some(i) if syn && ack => {
                let f = &self.flows[i];
                let fits = f.server == src
                    && (f.server_isn.is_none() || f.server_isn == Some(t.seq) || answers_again(f, t));
                if fits {
                    Some(i)
                } else {
                    self.new_flow(key, p, FlowProto::Tcp, dst, src, Orientation::SynAck)
                }
            }
            Some(i) => Some(i),
            None if syn && !ack => self.new_flow(key, p, FlowProto::Tcp, src, dst, Orientation::Syn),
            None if syn && ack => self.new_flow(key, p, FlowProto::Tcp, dst, src, Orientation::SynAck),
            None => {
                let (client, server) =
                    if src_is_server(t.src_port, t.dst_port) { (dst, src) } else { (src, dst) };
                self.new_flow(key, p, FlowProto::Tcp, client, server, Orientation::Midstream)
            }
        };
        let Some(idx) = idx else { return }; // a new flow while the table is closed

        let limit = self.config.fingerprint_len;
        // The exchanges read what every reading path keeps of a payload (a
        // chunked read keeps no more), so they do not depend on the path.
        let kept = self.config.payload_limit();
        let (f, s) = (&mut self.flows[idx], &mut self.streams[idx]);
        let to_server = Self::account(f, p, src == f.client);
        let payload_len = p.payload_len;
        if ack && f.seq_pair.is_none() && t.flags & tcp_flags::RST == 0 {
            f.seq_pair = Some(if to_server { (t.seq, t.ack) } else { (t.ack, t.seq) });
        }
        if to_server {
            if syn && !ack {
                if f.client_isn.is_none() {
                    f.client_isn = Some(t.seq);
                    f.syn_mss = t.mss;
                    s.client_base = Some(t.seq.wrapping_add(1));
                } else if let (Some(first), true) = (f.first_client_ns.get(), f.client_isn == Some(t.seq)) {
                    let us = p.ts_ns.saturating_sub(first).max(0) / 1000;
                    f.last_syn_after_us = u32::try_from(us).unwrap_or(u32::MAX).max(1);
                }
                f.syn_count += 1;
            } else if f.synack_ns.is_some() && f.handshake_done_ns.is_none() {
                f.handshake_done_ns = Ns::at(p.ts_ns);
            }
            if payload_len > 0 && f.client_data_ns.is_none() {
                f.client_data_ns = Ns::at(p.ts_ns);
            }
            if t.flags & tcp_flags::FIN != 0 && f.client_fin_ns.is_none() {
                f.client_fin_ns = Ns::at(p.ts_ns);
            }
            if t.flags & tcp_flags::RST != 0 && f.rst_to_server.is_none() {
                f.rst_to_server =
                    Some(Box::new(TcpEvent { ts_ns: p.ts_ns, to_client: false, sender: p.src, ttl: p.ttl }));
            }
            if !syn && s.client_base.is_none() && t.flags & tcp_flags::RST == 0 {
                s.client_base = Some(t.seq); // midstream: offsets from the first seq seen
            }
            if payload_len > 0 {
                f.max_to_server.add(p.ip_len);
                extend(&mut f.client_payload, s.client_base, t.seq, payload_len);
            }
            stream_add(&mut s.client_stream, &mut f.client_fp, limit, s.client_base, t, payload, payload_len);
            if let (Some(base), true) = (s.client_base, f.orientation != Orientation::Midstream) {
                let off = t.seq.wrapping_sub(base);
                if off < 1 << 31 {
                    facts::add_dns_tcp(&mut f.app, (t.src_port, t.dst_port), off, payload); // the question
                    let read = s.client_head.add(u64::from(off), payload);
                    if off == 0 && s.http.is_none() && !f.one_exchange && exchange::may_be_request(payload) {
                        s.http = Some(self.spare_readers.pop().unwrap_or_default());
                    }
                    if let Some(h) = s.http.as_deref_mut() {
                        if payload_len > 0 {
                            let data = &payload[..payload.len().min(kept)];
                            h.add_read(true, u64::from(off), data, payload_len, p.ts_ns, read);
                        }
                        if fin {
                            h.closed(true, u64::from(off) + u64::from(payload_len));
                        }
                    }
                }
            }
        } else {
            if syn && ack && f.server_isn.is_some() && f.server_isn != Some(t.seq) && answers_again(f, t) {
                // The same SYN answered again with a new ISN: the server
                // dropped its first answer (an ICMP error for it). The
                // connection goes on with the newest one, in this flow.
                f.server_isn = Some(t.seq);
                f.seq_pair = Some((t.ack, t.seq));
                s.server_base = Some(t.seq.wrapping_add(1));
            }
            if syn && ack && f.server_isn.is_none() {
                f.server_isn = Some(t.seq);
                f.synack_mss = t.mss;
                f.synack_ns = Ns::at(p.ts_ns);
                s.server_base = Some(t.seq.wrapping_add(1));
                if f.client_isn.is_none() {
                    f.client_isn = Some(t.ack.wrapping_sub(1));
                    s.client_base = Some(t.ack);
                }
            }
            if payload_len > 0 && f.server_data_ns.is_none() {
                f.server_data_ns = Ns::at(p.ts_ns);
            }
            if t.flags & tcp_flags::FIN != 0 && f.server_fin_ns.is_none() {
                f.server_fin_ns = Ns::at(p.ts_ns);
            }
            if t.flags & tcp_flags::RST != 0 && f.rst_to_client.is_none() {
                f.rst_to_client =
                    Some(Box::new(TcpEvent { ts_ns: p.ts_ns, to_client: true, sender: p.src, ttl: p.ttl }));
            }
            if !syn && s.server_base.is_none() && t.flags & tcp_flags::RST == 0 {
                s.server_base = Some(t.seq);
            }
            // DNS over TCP: the answer's response code (and question).
            if let (Some(base), true) = (s.server_base, f.orientation != Orientation::Midstream) {
                facts::add_dns_tcp(&mut f.app, (t.src_port, t.dst_port), t.seq.wrapping_sub(base), payload);
            }
            // An HTTP/1.x response's status at the start of the server stream.
            if payload.first() == Some(&b'H')
                && s.server_base == Some(t.seq)
                && f.orientation != Orientation::Midstream
                && s.server_status.is_none()
            {
                s.server_status = facts::http_status(payload);
            }
            if let (Some(h), Some(base)) = (s.http.as_deref_mut(), s.server_base) {
                let off = t.seq.wrapping_sub(base);
                if off < 1 << 31 {
                    if payload_len > 0 {
                        let data = &payload[..payload.len().min(kept)];
                        h.add(false, u64::from(off), data, payload_len, p.ts_ns);
                    }
                    if fin {
                        h.closed(false, u64::from(off) + u64::from(payload_len));
                    }
                }
            }
            if payload_len > 0 {
                f.max_to_client.add(p.ip_len);
                extend(&mut f.server_payload, s.server_base, t.seq, payload_len);
            }
            stream_add(&mut s.server_stream, &mut f.server_fp, limit, s.server_base, t, payload, payload_len);
        }
        // A connection closed both ways after one answered exchange, every
        // byte read, is settled: a flag, not a tracker held to the end.
        if fin && s.http.as_deref().is_some_and(exchange::Tracker::settled) {
            if let Some(mut reader) = s.http.take().filter(|_| self.spare_readers.len() < SPARE_READERS) {
                *reader = exchange::Tracker::default();
                self.spare_readers.push(reader);
            }
            f.one_exchange = true;
        }
    }
}

/// Widens a direction's payload extent `[start, end)` (stream offsets) by one segment.
fn extend(extent: &mut Option<(u32, u32)>, base: Option<u32>, seq: u32, payload_len: u32) {
    let Some(base) = base else { return };
    let off = seq.wrapping_sub(base);
    if off >= 1 << 31 {
        return; // before the stream start (or far out of window)
    }
    let end = off.saturating_add(payload_len);
    let e = extent.get_or_insert((off, end));
    *e = (e.0.min(off), e.1.max(end));
}

/// Adds a TCP segment's payload at its stream offset; a FIN marks the end.
/// When the prefix becomes final, its fingerprint goes to `fp` (the flow's).
fn stream_add(
    stream: &mut Learning,
    fp: &mut Fingerprint,
    limit: usize,
    base: Option<u32>,
    t: &TcpInfo,
    payload: &[u8],
    payload_len: u32,
) {
    let Some(base) = base else { return };
    let off = t.seq.wrapping_sub(base);
    if off >= 1 << 31 {
        return; // before the stream start (or far out of window)
    }
    let mut done = stream.add(limit, u64::from(off), payload);
    if t.flags & tcp_flags::FIN != 0 {
        done = done.or(stream.set_end(limit, u64::from(off) + u64::from(payload_len)));
    }
    if let Some(done) = done {
        *fp = done;
    }
}

#[cfg(test)]
mod tests {
    use crate::decode::decode;
    use crate::flows::FlowConfig;
    use crate::flows::{FlowTable, Flows, Orientation};
    use crate::read::{LinkType, RawRecord};
    use tuplecorr_synth::{Path, Point, Tcp};

    fn table(pkts: &[(i64, Vec<u8>, u32)]) -> Flows {
        table_closed_from(pkts, i64::MAX)
    }

    fn one_point(c: &Tcp) -> Vec<(i64, Vec<u8>, u32)> {
        let mut p = Path::new(vec![Point::default()], Vec::new());
        p.tcp(c);
        p.finish().points.remove(0)
    }

    /// Inserts `pkts` in their order, the table closed to new flows from `close_at` on.
    fn table_closed_from(pkts: &[(i64, Vec<u8>, u32)], close_at: i64) -> Flows {
        let mut t = FlowTable::new(&FlowConfig::default());
        for (i, (ts, data, orig)) in pkts.iter().enumerate() {
            let p = decode(&raw(*ts, 0, data, *orig, i as u64 + 1)).expect("synthetic packet");
            t.set_closed(*ts >= close_at);
            t.insert(&p, p.payload(data));
        }
        t.finish()
    }

    /// A raw IP record of the synthetic packets.
    fn raw(ts_ns: i64, interface: u32, data: &[u8], orig_len: u32, record: u64) -> RawRecord<'_> {
        RawRecord { ts_ns, interface, link_type: LinkType::RawIp, data, orig_len, record, byte_offset: 0 }
    }

    fn source(data: &[u8], orig_len: u32) -> std::net::IpAddr {
        decode(&raw(0, 0, data, orig_len, 0)).expect("synthetic packet").src
    }

    /// Inserts `pkts`, each on the interface `on` gives for its source address
    /// (None: the packet is not captured); several interfaces: one copy on each.
    fn table_on(pkts: &[(i64, Vec<u8>, u32)], on: impl Fn(std::net::IpAddr) -> Vec<u32>) -> Flows {
        let mut t = FlowTable::new(&FlowConfig::default());
        for (i, (ts, data, orig)) in pkts.iter().enumerate() {
            let src = source(data, *orig);
            for interface in on(src) {
                let p = decode(&raw(*ts, interface, data, *orig, i as u64 + 1)).expect("synthetic packet");
                t.insert(&p, p.payload(data));
            }
        }
        t.finish_unfolded()
    }

    #[test]
    fn a_reply_on_another_interface_joins_its_request_only_on_an_end_host() {
        let addr = |s: &str| s.parse().unwrap();
        let client: std::net::IpAddr = addr("198.18.0.1");
        let c = Tcp::new((client, 40000), (addr("198.19.0.1"), 80), 1_000, 3);
        let pkts = one_point(&c);
        // An end host asked on interface 2, answering by interface 3.
        let end = table_on(&pkts, |src| if src == client { vec![2] } else { vec![3] });
        assert_eq!(end.flows.len(), 1, "one connection, not a request and a reply apart");
        let f = &end.flows[0];
        assert_eq!((f.first_interface, f.other_interface()), (2, Some(3)));
        assert!(f.packets_to_server > 0 && f.packets_to_client > 0 && f.server_isn.is_some());
        assert_eq!(f.orientation, Orientation::Syn);
        assert_eq!(end.stats.return_elsewhere, 1);
        // A host that forwards: the request on 2 and 3, the reply on 3 and 2.
        let fwd = table_on(&pkts, |_| vec![2, 3]);
        assert_eq!(fwd.flows.len(), 2, "one flow per interface");
        assert!(fwd.flows.iter().all(|f| f.other_interface().is_none() && f.packets_to_client > 0));
        // ... whose reply comes back by a third interface: the request is on two
        // others, so the reply is no answer to one of them alone.
        let third = table_on(&pkts, |src| if src == client { vec![2, 3] } else { vec![4, 2] });
        assert_eq!(
            third.flows.len(),
            3,
            "{:?}",
            third.flows.iter().map(|f| f.first_interface).collect::<Vec<_>>()
        );
        assert!(third.flows.iter().all(|f| f.other_interface().is_none()));
        assert_eq!(third.stats.return_elsewhere, 0);
        // One interface: nothing to look for elsewhere.
        let one = table_on(&pkts, |_| vec![0]);
        assert_eq!((one.flows.len(), one.flows[0].other_interface()), (1, None));
    }

    #[test]
    fn a_reply_long_after_its_request_on_another_interface_is_a_flow_of_its_own() {
        let addr = |s: &str| s.parse().unwrap();
        let client: std::net::IpAddr = addr("198.18.0.1");
        let c = Tcp::new((client, 40000), (addr("198.19.0.1"), 80), 1_000, 3);
        let mut pkts = one_point(&c);
        // The server's packets arrive 20 s after the client's last: past the idle time.
        let last_client = pkts.iter().filter(|p| p.0 < 1_000_000).map(|p| p.0).max().unwrap();
        let idle = FlowConfig::default().udp_idle_ns;
        let mut late: Vec<_> = pkts
            .drain(..)
            .map(|(ts, d, o)| (if source(&d, o) == client { ts } else { ts + idle + 1 + last_client }, d, o))
            .collect();
        late.sort_by_key(|p| p.0);
        let f = table_on(&late, |src| if src == client { vec![2] } else { vec![3] });
        assert!(f.flows.len() >= 2, "too late to be its answer");
        assert!(f.flows.iter().all(|f| f.other_interface().is_none()));
    }

    #[test]
    fn a_closed_table_carries_on_its_flows_and_begins_none() {
        let addr = |s: &str| s.parse().unwrap();
        // Begun before the close: a connection whose SYN is retransmitted
        // across it (answered after the second retry, 2 s on).
        let mut early = Tcp::new((addr("198.18.0.1"), 40000), (addr("198.19.0.1"), 80), 1_000, 3);
        early.syn_retries = 2;
        // Begun after it: a UDP exchange, a connection, and a new SYN (new
        // ISN) on the early one's tuple.
        let dns = tuplecorr_synth::Udp {
            client: (addr("198.18.0.1"), 53000),
            server: (addr("198.19.0.53"), 53),
            start_ns: 6_000_000_000,
            request: b"query".to_vec(),
            response: Some(b"answer".to_vec()),
            ip_id: 1,
        };
        let late = Tcp::new((addr("198.18.0.2"), 40000), (addr("198.19.0.1"), 80), 5_000_000_000, 4);
        let reuse = Tcp::new((addr("198.18.0.1"), 40000), (addr("198.19.0.1"), 80), 9_000_000_000, 9);
        let mut p = Path::new(vec![Point::default()], Vec::new());
        for c in [&early, &late, &reuse] {
            p.tcp(c);
        }
        p.udp(&dns);
        let mut pkts = p.finish().points.remove(0);
        pkts.sort_by_key(|(ts, _, _)| *ts);
        let open = table(&pkts);
        assert_eq!(open.flows.len(), 4, "open: every connection and the exchange");
        assert!(open.flows[0].last_ns > 2_000_000_000, "the early connection goes on past the close");
        let closed = table_closed_from(&pkts, 500_000_000);
        assert_eq!(closed.flows.len(), 1, "closed: only the connection begun before");
        for f in &closed.flows {
            let same = open.flows.iter().find(|o| o.client == f.client && o.first_ns == f.first_ns).unwrap();
            assert_eq!(format!("{f:?}"), format!("{same:?}"), "the same flow, field by field");
        }
        let tcp = closed.flows.iter().find(|f| f.client.port == 40000).unwrap();
        assert_eq!(tcp.syn_count, 3, "SYN retransmissions after the close carry the flow on");
    }

    #[test]
    fn syn_retransmissions_keep_their_times() {
        let addr = |s: &str| s.parse().unwrap();
        let mut c = Tcp::new((addr("198.18.0.1"), 40000), (addr("198.19.0.1"), 80), 1_000, 3);
        c.unanswered = true;
        c.syn_retries = 2;
        let f = table(&one_point(&c));
        assert_eq!(f.flows.len(), 1);
        let f = &f.flows[0];
        assert_eq!(f.syn_count, 3);
        assert_eq!(f.last_syn_after_us, 2_000_000);
        assert_eq!(f.seq_pair, None, "no ACK seen");
    }

    #[test]
    fn carriers_are_read_from_the_reassembled_client_stream() {
        let addr = |s: &str| s.parse().unwrap();
        let mut c = Tcp::new((addr("198.18.0.1"), 40000), (addr("198.19.0.1"), 80), 1_000, 5);
        c.request = b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80\r\nGET / HTTP/1.1\r\nHost: h\r\n\
            X-Forwarded-For: 203.0.113.9\r\nX-Request-ID: 7f3a9c1e-0001\r\n\r\n"
            .to_vec();
        // 10-byte segments: the header spans many packets.
        let mut p = Path::new(vec![Point { segment: 10, ..Point::default() }], Vec::new());
        p.tcp(&c);
        let f = table(&p.finish().points.remove(0));
        let car = f.flows[0].carriers.as_deref().expect("carriers found");
        let proxy = car.proxy.expect("PROXY v1");
        assert_eq!((proxy.addr, proxy.port), (Some(addr("198.18.90.42")), Some(40001)));
        assert_eq!(car.headers[0].addr, Some(addr("203.0.113.9")));
        assert!(car.request_id.is_some());
        // The client fingerprint is of what follows the PROXY line: the client's own bytes.
        let mut own = Tcp::new((addr("198.18.0.1"), 40000), (addr("198.19.0.1"), 80), 1_000, 7);
        own.request = c.request[47..].to_vec();
        let own_fp = table(&one_point(&own)).flows[0].client_fp.clone();
        assert_eq!(own_fp.agreement(&f.flows[0].client_fp), Some(64), "agree at the longest common prefix");
        // A stream with nothing carried keeps nothing.
        let plain = Tcp::new((addr("198.18.0.1"), 40001), (addr("198.19.0.1"), 80), 1_000, 6);
        assert_eq!(table(&one_point(&plain)).flows[0].carriers, None);
    }

    #[test]
    fn first_ack_packet_gives_the_sequence_pair_of_a_midstream_flow() {
        let addr = |s: &str| s.parse().unwrap();
        let c = Tcp::new((addr("198.18.0.1"), 40000), (addr("198.19.0.1"), 80), 1_000, 4);
        let all = one_point(&c);
        let f = table(&all);
        assert_eq!(
            f.flows[0].seq_pair,
            Some((c.client_isn.wrapping_add(1), c.server_isn)),
            "from the SYN-ACK"
        );
        // Without the SYN and SYN-ACK: from the client's first ACK.
        let mid: Vec<_> = all.into_iter().filter(|(_, d, _)| d[33] & 0x02 == 0).collect();
        let f = table(&mid);
        assert_eq!(f.flows[0].orientation, Orientation::Midstream);
        assert_eq!(f.flows[0].seq_pair, Some((c.client_isn.wrapping_add(1), c.server_isn.wrapping_add(1))));
    }
}
