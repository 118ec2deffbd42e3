//! Bench inputs made in memory with `tuplecorr_synth`: three capture points
//! (decap → egress → backend) like `examples/synth_captures.rs` — the pod
//! forwards, the node masquerades with remapped ports, egress's clock runs
//! ahead and backend's behind, backend sees GRO-sized segments; per 100
//! connections 90 TCP, 4 UDP, 2 ICMP echo, 2 lost requests, 2 lost replies.
//! Deterministic, no files, no corpus.
#![allow(dead_code)] // each bench uses part of this

use tuplecorr::decode::decode;
use tuplecorr::flows::FlowConfig;
use tuplecorr::flows::{FlowTable, Flows};
use tuplecorr::read::read_bytes;
use tuplecorr_synth as synth;

pub const LABELS: [&str; 3] = ["decap", "egress", "backend"];

/// The pcap bytes of the three capture points for `connections` requests with
/// `response_bytes` per TCP response (`synth::mix_connection`, seed 1).
pub fn three_points(connections: u32, response_bytes: usize) -> Vec<Vec<u8>> {
    let points = synth::mix_points();
    let mut all: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
    for c in 0..connections {
        let (caps, _) = synth::mix_connection(c, 1, response_bytes);
        for (k, pkts) in caps.points.into_iter().enumerate() {
            all[k].extend(pkts);
        }
    }
    all.into_iter()
        .zip(&points)
        .map(|(mut pkts, p)| {
            pkts.sort_by_key(|(ts, _, _)| *ts);
            let mut out = Vec::new();
            synth::write_pcap(&mut out, p.snaplen as u32, &pkts).expect("writing to memory");
            out
        })
        .collect()
}

/// Reads, decodes and builds the flow table of one capture held in memory.
pub fn flows_of(label: &str, bytes: &[u8]) -> Flows {
    let mut table = FlowTable::new(&FlowConfig::default());
    read_bytes(label, bytes, &mut |r| {
        if let Ok(p) = decode(r) {
            table.insert(&p, p.payload(r.data));
        }
    })
    .expect("generated capture reads");
    table.finish()
}

/// Packets in a capture held in memory.
pub fn packets(bytes: &[u8]) -> u64 {
    read_bytes("count", bytes, &mut |_| {}).expect("generated capture reads").packets
}
