//! TCP lifecycle rules of the flow table: a new SYN with a new ISN on a reused
//! 5-tuple starts a new flow, SYN retransmissions are counted, a SYN-ACK alone
//! orients the flow, anything else starts a midstream flow; streams are
//! reassembled by sequence number for the fingerprints.

use super::fingerprint::StreamPrefix;
use super::key::{src_is_server, FlowKey};
use super::table::FlowTable;
use super::{Endpoint, FlowProto, Orientation, TcpEvent, MAX_SYN_TIMES};
use crate::decode::{tcp_flags, Packet, Transport};

impl FlowTable {
    pub(super) fn insert_tcp(&mut self, p: &Packet, payload: &[u8]) {
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
        if ack && f.seq_pair.is_none() && t.flags & tcp_flags::RST == 0 {
            f.seq_pair = Some(if to_server { (t.seq, t.ack) } else { (t.ack, t.seq) });
        }
        if to_server {
            if syn && !ack {
                if f.client_isn.is_none() {
                    f.client_isn = Some(t.seq);
                    f.syn_mss = t.mss;
                    s.client_base = Some(t.seq.wrapping_add(1));
                } else if f.client_isn == Some(t.seq) && f.syn_retx_ns.len() < MAX_SYN_TIMES {
                    f.syn_retx_ns.push(p.ts_ns);
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
