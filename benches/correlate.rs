//! Criterion bench of the cross-capture stages on pre-built flow tables of
//! generated three-point captures (`common::three_points`): `correlate`
//! (clock estimate, hash joins, assignment, chains), `correlate+verdict`, and
//! writing the findings as JSON and as the table (`report/*`). Throughput is
//! requests (flows at capture 1). Packet bytes do not matter here, so the
//! responses are short.

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tuplecorr::correlate::correlate;
use tuplecorr::correlate::CorrelateConfig;
use tuplecorr::flows::Flows;
use tuplecorr::report::{self, Format, ReportOptions};
use tuplecorr::verdict::{verdict, CaptureMeta, VerdictOptions};

const CONNECTIONS: u32 = 5_000;
const RESPONSE_BYTES: usize = 3_000;

fn bench_correlate(c: &mut Criterion) {
    let files = common::three_points(CONNECTIONS, RESPONSE_BYTES);
    let flows: Vec<Flows> = common::LABELS.iter().zip(&files).map(|(l, b)| common::flows_of(l, b)).collect();
    let metas: Vec<CaptureMeta> = common::LABELS
        .iter()
        .zip(&files)
        .map(|(l, b)| CaptureMeta {
            label: l.to_string(),
            file: format!("{l}.pcap"),
            format: "pcap".into(),
            link_types: vec!["raw".into()],
            packets: common::packets(b),
            overlays: Vec::new(),
            interfaces: Vec::new(),
            hosts: Vec::new(),
        })
        .collect();
    let requests = flows[0].flows.len() as u64;
    let config = CorrelateConfig::default();
    let options = VerdictOptions::default();
    let mut group = c.benchmark_group("correlate");
    group.sample_size(20);
    group.throughput(Throughput::Elements(requests));
    group.bench_function("correlate", |b| {
        b.iter(|| black_box(correlate(black_box(&flows), &config).chains.len()))
    });
    group.bench_function("correlate+verdict", |b| {
        b.iter(|| {
            let corr = correlate(black_box(&flows), &config);
            black_box(verdict(&metas, &flows, &corr, &[], &options).requests.len())
        })
    });
    let findings = verdict(&metas, &flows, &correlate(&flows, &config), &[], &options);
    assert_eq!(findings.requests.len() as u64, requests);
    for (name, format) in
        [("report/json", Format::Json), ("report/csv", Format::Csv), ("report/table", Format::Table)]
    {
        let opts = ReportOptions { format, ..ReportOptions::default() };
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(8 << 20);
                report::write(black_box(&findings), &opts, &mut out).unwrap();
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_correlate);
criterion_main!(benches);
