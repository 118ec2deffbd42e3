//! Fuzz target: the first byte picks a link type, the rest is one captured record
//! handed to `decode::decode`. Must never panic; a decoded payload must lie
//! inside the record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tuplecorr::decode::decode;
use tuplecorr::read::{LinkType, RawRecord};

/// The link types tuplecorr decodes, plus one it does not.
const LINK_TYPES: [LinkType; 14] = [
    LinkType::Ethernet,
    LinkType::RawIp,
    LinkType::Ipv4,
    LinkType::Ipv6,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::Null,
    LinkType::Loop,
    LinkType::Unknown(147),
    LinkType::Ethernet,
    LinkType::Ppp,
    LinkType::PppHdlc,
    LinkType::CiscoHdlc,
    LinkType::Nflog,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let link_type = LINK_TYPES[usize::from(pick) % LINK_TYPES.len()];
    let rec = RawRecord {
        ts_ns: 1_700_000_000_000_000_000,
        interface: u32::from(pick >> 4),
        link_type,
        data: rest,
        orig_len: rest.len() as u32,
        record: 1,
        byte_offset: 24,
    };
    if let Ok(p) = decode(&rec) {
        let payload = p.payload(rest);
        assert!(payload.len() <= rest.len());
    }
});
