//! Fuzz target: the first byte picks a reader of `--rules`, `--conntrack` or
//! `--masq-agent` (iptables-save, nft text or nft JSON by content, conntrack lines, the
//! ip-masq-agent ConfigMap), the rest is the file (`tuplecorr::why::exercise`:
//! a parsed ruleset is also evaluated for two packets). Must never panic or
//! hang, and every note must name a line of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    tuplecorr::why::exercise(pick, &String::from_utf8_lossy(rest));
});
