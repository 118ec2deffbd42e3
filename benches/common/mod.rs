//! Bench inputs made in memory with `tuplecorr::synth`: three capture points
//! (decap → egress → backend) like `examples/synth_captures.rs` — the pod
//! forwards, the node masquerades with remapped ports, egress's clock runs
//! ahead and backend's behind, backend sees GRO-sized segments; per 100
//! connections 90 TCP, 4 UDP, 2 ICMP echo, 2 lost requests, 2 lost replies.
//! Deterministic, no files, no `../shared/corpus`.
#![allow(dead_code)] // each bench uses part of this

use std::net::{IpAddr, Ipv4Addr};
use tuplecorr::config::FlowConfig;
use tuplecorr::decode::decode;
use tuplecorr::flows::{FlowTable, Flows};
use tuplecorr::read::read_bytes;
use tuplecorr::synth::{self, Echo, Hop, Path, Point, Tcp, Udp};

const T0: i64 = 1_795_995_638_000_000_000;
pub const LABELS: [&str; 3] = ["decap", "egress", "backend"];

/// The pcap bytes of the three capture points for `connections` requests with
/// `response_bytes` per TCP response.
pub fn three_points(connections: u32, response_bytes: usize) -> Vec<Vec<u8>> {
    let points = vec![
        Point::default(),
        Point { clock_offset_ns: 2_750_000_000, ..Point::default() },
        Point { clock_offset_ns: -1_300_000_000, segment: 65_000, ..Point::default() },
    ];
    let masq = IpAddr::V4(Ipv4Addr::new(198, 19, 3, 17));
    let backend = IpAddr::V4(Ipv4Addr::new(198, 19, 96, 10));
    let mut all: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
    for c in 0..connections {
        let client_ip =
            IpAddr::V4(Ipv4Addr::new(198, 18, 90 + (c / 60_000 % 100) as u8, (c % 250 + 2) as u8));
        let client_port = 10_000 + (c % 50_000) as u16;
        let remap = 20_000 + (synth::mix(c ^ 1) % 30_000) as u16;
        let hops = vec![
            Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
            Hop {
                delay_ns: 90_000,
                routed: true,
                snat: Some(masq),
                snat_port: Some(remap),
                ..Hop::default()
            },
        ];
        let mut path = Path::new(points.clone(), hops);
        let t = T0 + i64::from(c) * 200_000;
        let kind = c % 100;
        let s = c ^ (1u32 << 16);
        match kind {
            0..=89 | 94..=97 => {
                let mut tcp = Tcp::new((client_ip, client_port), (backend, 80), t, s);
                tcp.response = synth::response_body(s, response_bytes);
                if (94..=95).contains(&kind) {
                    tcp.lost_after = Some(1);
                    tcp.unanswered = true;
                } else if (96..=97).contains(&kind) {
                    tcp.reply_lost_before = Some(2);
                }
                path.tcp(&tcp);
            }
            90..=93 => {
                let mut request = format!("udp-query-{s:08x}-").into_bytes();
                request.resize(120, b'q');
                path.udp(&Udp {
                    client: (client_ip, client_port),
                    server: (backend, 53),
                    start_ns: t,
                    request,
                    response: Some(synth::response_body(s, 400)),
                    ip_id: (s >> 3) as u16,
                });
            }
            _ => {
                let mut payload = format!("echo-{s:08x}-").into_bytes();
                payload.resize(56, b'e');
                path.echo(&Echo {
                    client: client_ip,
                    server: backend,
                    start_ns: t,
                    id: client_port,
                    count: 1,
                    payload,
                    answered: true,
                });
            }
        }
        if c % 10 == 0 {
            let bg = Tcp::new((masq, 50_000 + (c % 10_000) as u16), (backend, 9100), t + 50_000, s ^ 0xdead);
            path.background_tcp(2, &bg);
        }
        for (k, pkts) in path.finish().points.into_iter().enumerate() {
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
