//! Criterion bench of the read stage. Takes a generated capture
//! (`common::three_points`, always present) and, when `TUPLECORR_CORPUS` names
//! the corpus folder, two real captures (skipped with a message otherwise); gives MB/s for
//! framing from memory (`read_bytes`) and from disk (`read_capture`, a temp
//! file for the generated one), counting records so the work cannot be
//! optimised away. Never decodes packets.

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::path::PathBuf;
use tuplecorr::read::{read_bytes, read_capture, NoProgress};
use tuplecorr::read::{CaptureSpec, Source};

const FILES: &[&str] =
    &["pcapparser__wireshark_samples-test.pcapng", "pcpp__ExamplesTest__many-protocols.pcap"];

/// `name` in the corpus folder named by `TUPLECORR_CORPUS` (unset: a path that
/// does not exist, so the bench says it skips it).
fn corpus(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os("TUPLECORR_CORPUS").unwrap_or_default()).join(name)
}

fn bench_one(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    path: PathBuf,
) {
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!("skipping {name}: {} not found", path.display());
        return;
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

fn bench_read(c: &mut Criterion) {
    let mut group = c.benchmark_group("read");
    group.sample_size(20);
    let dir = tempfile::tempdir().expect("temp dir");
    let synth = dir.path().join("synth-decap.pcap");
    let files = common::three_points(1_000, 20_000);
    std::fs::write(&synth, &files[0]).expect("temp file");
    bench_one(&mut group, "synth-decap", synth);
    for name in FILES {
        bench_one(&mut group, name, corpus(name));
    }
    group.finish();
}

criterion_group!(benches, bench_read);
criterion_main!(benches);
