//! Criterion bench of the read stage on real captures from `../shared/corpus`
//! (skipped with a message when that folder is absent). Takes the files; gives
//! MB/s for framing from memory (`read_bytes`) and from disk (`read_capture`),
//! counting records so the work cannot be optimised away. Never decodes packets.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::path::PathBuf;
use tuplecorr::config::{CaptureSpec, Source};
use tuplecorr::read::{read_bytes, read_capture, NoProgress};

const FILES: &[&str] =
    &["pcapparser__wireshark_samples-test.pcapng", "pcpp__ExamplesTest__many-protocols.pcap"];

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus").join(name)
}

fn bench_read(c: &mut Criterion) {
    let mut group = c.benchmark_group("read");
    for name in FILES {
        let path = corpus(name);
        let Ok(bytes) = std::fs::read(&path) else {
            eprintln!("skipping {name}: {} not found", path.display());
            continue;
        };
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("memory/{name}"), |b| {
            b.iter(|| {
                let mut n = 0u64;
                let info = read_bytes(name, black_box(&bytes), &mut |r| n += r.data.len() as u64).unwrap();
                black_box((n, info.packets))
            })
        });
        let spec = CaptureSpec { label: name.to_string(), source: Source::Path(path.clone()) };
        group.bench_function(format!("file/{name}"), |b| {
            b.iter(|| {
                let mut n = 0u64;
                let info = read_capture(&spec, 0, &NoProgress, &mut |r| n += r.data.len() as u64).unwrap();
                black_box((n, info.packets))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_read);
criterion_main!(benches);
