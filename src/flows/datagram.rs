//! UDP exchanges (split by an idle gap; the first datagram each way is the
//! fingerprint), ICMP echo sequences (one identifier) and the ICMP errors that
//! quote a flow of the table.

use super::key::{quoted_key, FlowKey};
use super::table::{FlowTable, MAX_ICMP_ERRORS};
use super::Ns;
use super::{EchoSummary, Endpoint, FlowProto, IcmpError, MtuSignal, Orientation};
use crate::decode::{IcmpInfo, Packet, Quoted, Transport};

impl FlowTable {
    pub(super) fn insert_udp(&mut self, p: &Packet, payload: &[u8]) {
        let Transport::Udp(u) = &p.transport else { return };
        let src = Endpoint { addr: p.src, port: u.src_port };
        let dst = Endpoint { addr: p.dst, port: u.dst_port };
        let key = FlowKey::of(p, FlowProto::Udp, src, dst);
        let idle = self.config.udp_idle_ns;
        let found = match self.index.get(&key) {
            Some(&i) => Some(i as usize),
            None => self.reply_elsewhere(key, src, p.ts_ns),
        };
        let idx = match found {
            Some(i) if p.ts_ns.saturating_sub(self.flows[i].last_ns) <= idle => Some(i),
            // A datagram from a system port to an ephemeral one answers a
            // query this capture missed: the flow is the querier's.
            _ if u.src_port < 1024 && u.dst_port >= 32768 => {
                self.new_flow(key, p, FlowProto::Udp, dst, src, Orientation::Reply)
            }
            _ => self.new_flow(key, p, FlowProto::Udp, src, dst, Orientation::FirstPacket),
        };
        let Some(idx) = idx else { return }; // a new flow while the table is closed
        let (f, s) = (&mut self.flows[idx], &mut self.streams[idx]);
        let to_server = Self::account(f, p, src == f.client);
        let (stream, fp, seen) = if to_server {
            (&mut s.client_stream, &mut f.client_fp, f.packets_to_server > 1)
        } else {
            (&mut s.server_stream, &mut f.server_fp, f.packets_to_client > 1)
        };
        if !seen {
            // The first datagram of each direction is its fingerprint. Both
            // steps always run; the one that makes the prefix final gives it.
            let limit = self.config.fingerprint_len;
            let done = stream.add(limit, 0, payload).or(stream.set_end(limit, u64::from(p.payload_len)));
            if let Some(done) = done {
                *fp = done;
            }
            // A DNS question (and its answer's response code): once each way.
            if super::facts::dns_port(u.src_port, u.dst_port) {
                super::facts::add_dns(&mut f.app, payload);
            }
        }
        if to_server && seen && f.packets_to_server <= 1 + super::LATER_DATAGRAMS as u64 {
            // The next client datagrams' keys (see `LaterDatagrams`).
            if let Some(k) = super::datagram_key(payload, u64::from(p.payload_len)) {
                f.later.get_or_insert_with(Default::default).push(k, p.ts_ns);
            }
        }
        if to_server {
            if p.payload_len > 0 && f.client_data_ns.is_none() {
                f.client_data_ns = Ns::at(p.ts_ns);
            }
        } else if f.server_data_ns.is_none() {
            f.server_data_ns = Ns::at(p.ts_ns);
        }
    }

    pub(super) fn insert_echo(&mut self, p: &Packet, payload: &[u8], id: u16, seq: u16, request: bool) {
        let limit = self.config.fingerprint_len;
        let src = Endpoint { addr: p.src, port: id };
        let dst = Endpoint { addr: p.dst, port: id };
        let key = FlowKey::of(p, FlowProto::Icmp, src, dst);
        let idle = self.config.udp_idle_ns;
        let found = match self.index.get(&key) {
            Some(&i) => Some(i as usize),
            None => self.reply_elsewhere(key, src, p.ts_ns),
        };
        let idx = match found {
            Some(i) if p.ts_ns.saturating_sub(self.flows[i].last_ns) <= idle => Some(i),
            _ => {
                let (client, server) = if request { (src, dst) } else { (dst, src) };
                self.new_flow(key, p, FlowProto::Icmp, client, server, Orientation::FirstPacket)
            }
        };
        let Some(idx) = idx else { return }; // a new flow while the table is closed
        let f = &mut self.flows[idx];
        let to_server = Self::account(f, p, request);
        let echo = f.echo.get_or_insert_with(|| {
            Box::new(EchoSummary { first_seq: seq, last_seq: seq, requests: 0, replies: 0, payload: None })
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
                f.client_data_ns = Ns::at(p.ts_ns);
            }
        } else {
            echo.replies += 1;
            if f.server_data_ns.is_none() {
                f.server_data_ns = Ns::at(p.ts_ns);
            }
        }
    }

    pub(super) fn insert_icmp_error(&mut self, p: &Packet, icmp: &IcmpInfo, q: &Quoted) {
        let IcmpInfo { v6, icmp_type, code, .. } = *icmp;
        let Some((key, quoted_src)) = quoted_key(p, q) else {
            self.stats.icmp_unattributed += 1;
            return;
        };
        let Some(&i) = self.index.get(&key) else {
            self.stats.icmp_unattributed += 1;
            return;
        };
        let f = &mut self.flows[i as usize];
        f.last_ns = f.last_ns.max(p.ts_ns);
        let about_request = quoted_src == f.client;
        if let (Some(mtu), true) = (icmp.mtu, about_request) {
            let s = f.mtu_signal.get_or_insert_with(|| {
                Box::new(MtuSignal { mtu, sender: p.src, v6, count: 0, first_ns: p.ts_ns })
            });
            if mtu < s.mtu {
                (s.mtu, s.sender) = (mtu, p.src);
            }
            s.count = s.count.saturating_add(1);
        }
        if f.icmp_errors.len() < MAX_ICMP_ERRORS {
            f.icmp_errors.push(IcmpError {
                ts_ns: p.ts_ns,
                sender: p.src,
                v6,
                icmp_type,
                code,
                ttl: p.ttl,
                about_request,
            });
        }
    }
}
