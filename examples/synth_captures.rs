//! Writes deterministic three-point captures (decap, egress, backend) for
//! benchmarks and scale tests, plus a truth file:
//!
//!     cargo run --release --example synth_captures -- OUT_DIR CONNECTIONS [RESPONSE_BYTES] [SEED]
//!
//! Between decap and egress the pod forwards (TTL − 1); between egress and
//! backend the node masquerades to 198.19.3.17 with remapped ports. Egress's
//! clock runs 2.75 s ahead, backend's 1.3 s behind. Per 100 connections: 90 TCP
//! request/response, 4 UDP request/response, 2 ICMP echo, 2 whose request is
//! lost after egress, 2 whose replies are lost before egress; plus background
//! flows seen only at the backend. `truth.tsv` lists, per request, its protocol,
//! client endpoint at decap and at backend (`-` where not seen) and the expected
//! reply path, so a benchmark can check that every request was mapped.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use tuplecorr::synth::{self, Echo, Hop, Path, Point, Tcp, Udp};

const T0: i64 = 1_795_995_638_000_000_000;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: synth_captures OUT_DIR CONNECTIONS [RESPONSE_BYTES] [SEED]");
        std::process::exit(2);
    }
    let out = PathBuf::from(&args[1]);
    let connections: u32 = args[2].parse().expect("CONNECTIONS is a number");
    let response_bytes: usize =
        args.get(3).map(|s| s.parse().expect("RESPONSE_BYTES is a number")).unwrap_or(20_000);
    let seed: u32 = args.get(4).map(|s| s.parse().expect("SEED is a number")).unwrap_or(1);
    std::fs::create_dir_all(&out)?;

    let points = vec![
        Point::default(),
        Point { clock_offset_ns: 2_750_000_000, ..Point::default() },
        Point { clock_offset_ns: -1_300_000_000, segment: 65_000, ..Point::default() },
    ];
    let masq = IpAddr::V4(Ipv4Addr::new(198, 19, 3, 17));
    let backend = IpAddr::V4(Ipv4Addr::new(198, 19, 96, 10));
    let mut truth = BufWriter::new(File::create(out.join("truth.tsv"))?);
    writeln!(truth, "proto\tdecap_client\tbackend_client\treply_path")?;

    // Write in slices of connections so memory stays bounded at any scale.
    let slice = 2_000u32;
    let labels = ["decap", "egress", "backend"];
    let mut files: Vec<BufWriter<File>> = labels
        .iter()
        .map(|l| File::create(out.join(format!("{l}.pcap"))).map(|f| BufWriter::with_capacity(1 << 20, f)))
        .collect::<Result<_, _>>()?;
    for (i, f) in files.iter_mut().enumerate() {
        synth::write_pcap_header(f, points[i].snaplen as u32)?;
    }
    let mut carry: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
    let mut start = 0u32;
    while start < connections {
        let end = (start + slice).min(connections);
        let mut hops = Vec::new();
        let mut path = Path::new(points.clone(), Vec::new());
        for c in start..end {
            let client_ip =
                IpAddr::V4(Ipv4Addr::new(198, 18, 90 + (c / 60_000 % 100) as u8, (c % 250 + 2) as u8));
            let client_port = 10_000 + (c % 50_000) as u16;
            // Distinct for 45,000 consecutive connections (7919 is prime): NAT never
            // hands one tuple to two live requests.
            let remap = 20_000 + ((u64::from(c) * 7919 + u64::from(seed)) % 45_000) as u16;
            hops.push((c, client_ip, client_port, remap));
        }
        // One path per connection would be slow; hops differ only by the remapped
        // port, so build each connection on its own small path and merge.
        let mut merged: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
        for &(c, client_ip, client_port, remap) in &hops {
            let hop = vec![
                Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
                Hop {
                    delay_ns: 90_000,
                    routed: true,
                    snat: Some(masq),
                    snat_port: Some(remap),
                    ..Hop::default()
                },
            ];
            path.hops = hop;
            let t = T0 + i64::from(c) * 200_000;
            let kind = c % 100;
            let s = c ^ seed.rotate_left(16);
            let backend_client = format!("{masq}:{remap}");
            let decap_client = format!("{client_ip}:{client_port}");
            match kind {
                0..=89 | 94..=97 => {
                    let mut tcp = Tcp::new((client_ip, client_port), (backend, 80), t, s);
                    tcp.response = synth::response_body(s, response_bytes);
                    let mut reply = "same-path";
                    let mut at_backend = backend_client.clone();
                    if (94..=95).contains(&kind) {
                        tcp.lost_after = Some(1);
                        tcp.unanswered = true;
                        reply = "no-reply";
                        at_backend = "-".into();
                    } else if (96..=97).contains(&kind) {
                        tcp.reply_lost_before = Some(2);
                        reply = "reply-lost";
                    }
                    path.tcp(&tcp);
                    writeln!(truth, "tcp\t{decap_client}\t{at_backend}\t{reply}")?;
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
                    writeln!(truth, "udp\t{decap_client}\t{backend_client}\tsame-path")?;
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
                    writeln!(truth, "icmp\t{client_ip}\t{masq}\tsame-path")?;
                }
            }
            if c % 10 == 0 {
                // Node-local background traffic, seen only at the backend.
                let bg =
                    Tcp::new((masq, 50_000 + (c % 10_000) as u16), (backend, 9100), t + 50_000, s ^ 0xdead);
                path.background_tcp(2, &bg);
            }
            let done = std::mem::replace(&mut path, Path::new(points.clone(), Vec::new())).finish();
            for (k, pkts) in done.points.into_iter().enumerate() {
                merged[k].extend(pkts);
            }
        }
        // Write what no later connection can precede; carry the rest over.
        let next_start = T0 + i64::from(end) * 200_000;
        for (k, pkts) in merged.into_iter().enumerate() {
            carry[k].extend(pkts);
            carry[k].sort_by_key(|(ts, _, _)| *ts);
            let cut = if end == connections { i64::MAX } else { next_start + points[k].clock_offset_ns };
            let keep = carry[k].partition_point(|(ts, _, _)| *ts < cut);
            let rest = carry[k].split_off(keep);
            synth::write_pcap_records(&mut files[k], &carry[k])?;
            carry[k] = rest;
        }
        start = end;
    }
    for mut f in files {
        f.flush()?;
    }
    truth.flush()?;
    Ok(())
}
