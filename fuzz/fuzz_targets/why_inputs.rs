//! Fuzz target: the first byte picks a parser of `--rules`, `--conntrack` or
//! `--masq-agent` (iptables-save / nft text by content, conntrack lines, the
//! ip-masq-agent ConfigMap), the rest is the file. Must never panic or hang;
//! a parsed ruleset is then evaluated for two packets (the walk is bounded),
//! and every note names a line of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tuplecorr::why::{conntrack, eval, masq, parse_rules};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let lines = text.lines().count() as u32;
    let notes = match pick % 3 {
        0 => {
            let (set, notes) = parse_rules("f", &text);
            let a = |s: &str| s.parse().unwrap();
            for after in ["198.19.3.17", "198.18.90.42"] {
                let obs = eval::Observed {
                    proto: 6,
                    before: (a("198.18.90.42"), Some(40001), a("198.19.96.10"), Some(80)),
                    after: (a(after), Some(40001), a("198.19.96.10"), Some(80)),
                    iif: None,
                    oif: Some("be0".into()),
                };
                let _ = eval::evaluate(&set, &obs);
            }
            notes
        }
        1 => conntrack::parse("f", &text).1,
        _ => masq::parse("f", &text).1,
    };
    for (line, _) in &notes.list {
        assert!(*line <= lines.max(1), "a note names line {line} of {lines}");
    }
});
