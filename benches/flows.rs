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

/// One connection's HTTP/1.x reading (`flows::exchange::Tracker`) as the
/// small-flow mix has it: a request head in one segment, a response head
/// with the first bytes of its body, three more body segments.
fn bench_exchange(c: &mut Criterion) {
    use tuplecorr::flows::exchange::Tracker;
    let request =
        b"GET /item/12345 HTTP/1.1\r\nHost: backend.example\r\nUser-Agent: synth\r\nAccept: */*\r\n\r\n";
    let mut response = b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nX-Seed: 12345\r\n\r\n".to_vec();
    let head = response.len();
    response.resize(head + 5000, b'x');
    let segments: Vec<(u64, &[u8])> = (0..response.len())
        .step_by(1448)
        .map(|o| (o as u64, &response[o..(o + 1448).min(response.len())]))
        .collect();
    c.bench_function("flows/http_exchange", |b| {
        b.iter(|| {
            let mut t = Box::new(Tracker::new());
            t.add(true, 0, black_box(request), request.len() as u32, 1_000);
            for &(off, seg) in &segments {
                let kept = &seg[..seg.len().min(1024)];
                t.add(false, off, black_box(kept), seg.len() as u32, 2_000);
            }
            black_box(t.one_whole())
        })
    });
}

criterion_group!(benches, bench_flows, bench_exchange);
criterion_main!(benches);
