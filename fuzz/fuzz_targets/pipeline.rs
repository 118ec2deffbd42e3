//! Fuzz target: the input split into two small captures (a 2-byte little-endian
//! length of the first, then both) run in memory through the whole pipeline:
//! read, decode, flows, correlate and verdict (`drive::pipeline::analyze_bytes`).
//! Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tuplecorr::drive::Config;
use tuplecorr::drive::pipeline::analyze_bytes;

fuzz_target!(|data: &[u8]| {
    let Some((len, rest)) = data.split_first_chunk::<2>() else { return };
    let split = usize::from(u16::from_le_bytes(*len)).min(rest.len());
    let (a, b) = rest.split_at(split);
    let _ = analyze_bytes(&Config::default(), &[("decap", a), ("egress", b)]);
});
