//! Writes deterministic three-point captures (decap, egress, backend) for
//! benchmarks and scale tests, plus a truth file:
//!
//!     cargo run --release --example synth_captures -- OUT_DIR CONNECTIONS [RESPONSE_BYTES] [SEED]
//!
//! The mix is `tuplecorr_synth::mix_connection` (the benches use the same):
//! between decap and egress the pod forwards (TTL − 1); between egress and
//! backend the node masquerades to 198.19.3.17 with remapped ports. Egress's
//! clock runs 2.75 s ahead, backend's 1.3 s behind. Per 100 connections: 90
//! TCP request/response, 4 UDP request/response, 2 ICMP echo, 2 whose request is
//! lost after egress, 2 whose replies are lost before egress; plus background
//! flows seen only at the backend. `truth.tsv` lists, per request, its protocol,
//! client endpoint at decap and at backend (`-` where not seen) and the expected
//! reply path, so a benchmark can check that every request was mapped.
//! `SPREAD_NS=N` in the environment moves connection c N × c ns later (one
//! connection every 200 µs + N): a set spread over a longer time, as rotated
//! captures of a day are (scripts/shards.sh). `LONG=N` adds N long-lived
//! connections (`synth::mix_long_connection`, one a second from the start)
//! open over the whole set, one response segment every `LONG_GAP_NS` (20 s):
//! what holds a streaming run's windows open (scripts/scale.sh).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use tuplecorr_synth as synth;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: synth_captures OUT_DIR CONNECTIONS [RESPONSE_BYTES] [SEED]");
        std::process::exit(2);
    }
    let out = PathBuf::from(&args[1]);
    let number = |i: usize, what: &str, default: u64| -> u64 {
        args.get(i).map(|s| s.parse().unwrap_or_else(|_| panic!("{what} is a number"))).unwrap_or(default)
    };
    let connections = number(2, "CONNECTIONS", 0) as u32;
    let response_bytes = number(3, "RESPONSE_BYTES", 20_000) as usize;
    let seed = number(4, "SEED", 1) as u32;
    let spread: i64 =
        std::env::var("SPREAD_NS").ok().map_or(0, |s| s.parse().expect("SPREAD_NS is a number"));
    let env_number = |name: &str, default: i64| -> i64 {
        std::env::var(name)
            .ok()
            .map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("{name} is a number")))
    };
    let long = env_number("LONG", 0) as u32;
    let long_gap = env_number("LONG_GAP_NS", 20_000_000_000);
    std::fs::create_dir_all(&out)?;

    let points = synth::mix_points();
    let mut truth = BufWriter::new(File::create(out.join("truth.tsv"))?);
    writeln!(truth, "proto\tdecap_client\tbackend_client\treply_path")?;
    let mut files: Vec<BufWriter<File>> = ["decap", "egress", "backend"]
        .iter()
        .map(|l| File::create(out.join(format!("{l}.pcap"))).map(|f| BufWriter::with_capacity(1 << 20, f)))
        .collect::<Result<_, _>>()?;
    for (f, p) in files.iter_mut().zip(&points) {
        synth::write_pcap_header(f, p.snaplen as u32)?;
    }
    // Connections are built in slices so memory stays bounded at any scale;
    // packets no later connection can precede are written, the rest carried over.
    let slice = 2_000u32;
    let mut carry: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); 3];
    let span = i64::from(connections) * (200_000 + spread);
    for i in 0..long {
        let start = synth::MIX_T0 + i64::from(i) * 1_000_000_000;
        let (caps, row) = synth::mix_long_connection(i, seed, start, span, long_gap);
        writeln!(truth, "{}\t{}\t{}\t{}", row.proto, row.decap_client, row.backend_client, row.reply_path)?;
        for (k, pkts) in caps.points.into_iter().enumerate() {
            carry[k].extend(pkts);
        }
    }
    let mut start = 0u32;
    while start < connections {
        let end = (start + slice).min(connections);
        for c in start..end {
            let (caps, row) = synth::mix_connection(c, seed, response_bytes);
            writeln!(
                truth,
                "{}\t{}\t{}\t{}",
                row.proto, row.decap_client, row.backend_client, row.reply_path
            )?;
            let shift = i64::from(c) * spread;
            for (k, pkts) in caps.points.into_iter().enumerate() {
                carry[k].extend(pkts.into_iter().map(|(ts, p, len)| (ts + shift, p, len)));
            }
        }
        let next_start = synth::MIX_T0 + i64::from(end) * (200_000 + spread);
        for (k, pkts) in carry.iter_mut().enumerate() {
            pkts.sort_by_key(|(ts, _, _)| *ts);
            let cut = if end == connections { i64::MAX } else { next_start + points[k].clock_offset_ns };
            let keep = pkts.partition_point(|(ts, _, _)| *ts < cut);
            let rest = pkts.split_off(keep);
            synth::write_pcap_records(&mut files[k], pkts)?;
            *pkts = rest;
        }
        start = end;
    }
    for mut f in files {
        f.flush()?;
    }
    truth.flush()?;
    Ok(())
}
