//! Fuzz target: any bytes as a capture file (pcap, pcapng or gzip) through
//! `read::read_bytes`, decoding every record. Must never panic, and every record
//! must lie inside the input's caps.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tuplecorr::decode::decode;
use tuplecorr::read::{read_bytes, MAX_PCAPNG_BLOCK};

fuzz_target!(|data: &[u8]| {
    let mut last = 0u64;
    let _ = read_bytes("fuzz", data, &mut |rec| {
        assert!(rec.data.len() <= MAX_PCAPNG_BLOCK as usize);
        assert!(rec.record > last, "record numbers increase");
        last = rec.record;
        if let Ok(p) = decode(rec) {
            let _ = p.payload(rec.data);
        }
    });
});
