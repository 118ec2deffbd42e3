//! Criterion bench of the decode stage: every record of a generated capture held
//! in memory is framed and decoded (`read_bytes` + `decode`), so MB/s here is
//! read + decode; compare with `read/memory/*` for the decode share. Two
//! shapes: `decap` (MSS-sized segments, many small packets) and `backend`
//! (GRO-sized segments, few large packets). Inputs: `common::three_points`.

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tuplecorr::decode::decode;
use tuplecorr::read::read_bytes;

const CONNECTIONS: u32 = 1_000;
const RESPONSE_BYTES: usize = 20_000;

fn bench_decode(c: &mut Criterion) {
    let files = common::three_points(CONNECTIONS, RESPONSE_BYTES);
    let mut group = c.benchmark_group("decode");
    group.sample_size(20);
    for (label, bytes) in common::LABELS.iter().zip(&files).filter(|(l, _)| **l != "egress") {
        let packets = common::packets(bytes);
        eprintln!("decode/{label}: {} bytes, {packets} packets", bytes.len());
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(*label, |b| {
            b.iter(|| {
                let (mut ok, mut payload) = (0u64, 0u64);
                read_bytes(label, black_box(bytes), &mut |r| {
                    if let Ok(p) = decode(r) {
                        ok += 1;
                        payload += p.payload(r.data).len() as u64;
                    }
                })
                .unwrap();
                assert_eq!(ok, packets);
                black_box(payload)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
