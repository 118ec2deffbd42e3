//! Criterion bench of the per-capture work the pipeline does: read + decode +
//! `FlowTable::insert` + `finish` on a generated capture held in memory
//! (`common::three_points`). MB/s is of capture bytes; subtract `decode/*` for
//! the flow-table share.

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

const CONNECTIONS: u32 = 1_000;
const RESPONSE_BYTES: usize = 20_000;

fn bench_flows(c: &mut Criterion) {
    let files = common::three_points(CONNECTIONS, RESPONSE_BYTES);
    let mut group = c.benchmark_group("flows");
    group.sample_size(20);
    for (label, bytes) in common::LABELS.iter().zip(&files).filter(|(l, _)| **l != "egress") {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(*label, |b| {
            b.iter(|| {
                let flows = common::flows_of(label, black_box(bytes));
                black_box(flows.flows.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_flows);
criterion_main!(benches);
