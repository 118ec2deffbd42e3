//! Times each per-capture stage on one capture file, for profiling:
//!
//!     cargo run --release --example stage_times -- FILE
//!
//! Prints the seconds for read only, read + decode, and read + decode + flows.

use std::time::Instant;
use tuplecorr::decode::decode;
use tuplecorr::flows::FlowConfig;
use tuplecorr::flows::FlowTable;
use tuplecorr::read::{read_capture, NoProgress};
use tuplecorr::read::{CaptureSpec, Source};

fn main() {
    let path = std::env::args().nth(1).expect("usage: stage_times FILE");
    let spec = CaptureSpec { label: "x".into(), source: Source::Path(path.into()) };
    let t = Instant::now();
    let mut n = 0u64;
    read_capture(&spec, 0, &NoProgress, &mut |r| n += r.data.len() as u64).expect("readable");
    println!("read:                {:.3} s ({n} bytes)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let mut ok = 0u64;
    read_capture(&spec, 0, &NoProgress, &mut |r| {
        if decode(r).is_ok() {
            ok += 1
        }
    })
    .expect("readable");
    println!("read+decode:         {:.3} s ({ok} packets)", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let mut table = FlowTable::new(&FlowConfig::default());
    read_capture(&spec, 0, &NoProgress, &mut |r| {
        if let Ok(p) = decode(r) {
            table.insert(&p, p.payload(r.data));
        }
    })
    .expect("readable");
    let flows = table.finish();
    println!("read+decode+flows:   {:.3} s ({} flows)", t.elapsed().as_secs_f64(), flows.flows.len());
}
