//! Raw record → owned `Packet` summary (addresses, ports, TCP seq/ack/flags, IP ID,
//! TTL, payload position, ICMP type/code and the header an ICMP error quotes).
//! Link layers etherparse lacks (SLL2, null/loopback) and IPv4 fragment transport
//! headers are parsed here by hand. The only etherparse user. Never allocates per
//! packet beyond the `Packet` itself; never keeps the record.

pub mod packet;

pub use packet::*;

use crate::read::RawRecord;
use std::fmt;

/// Why a record gave no usable IP packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The link type is not one we decode.
    UnsupportedLinkType,
    /// The link layer carries something other than IPv4/IPv6 (ARP, LLDP, ...).
    NotIp { ethertype: u16 },
    /// A header was cut short.
    Truncated { layer: &'static str, needed: usize, available: usize },
    /// A header is malformed (bad version, bad header length, ...).
    Malformed { layer: &'static str, what: String },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnsupportedLinkType => f.write_str("link type not supported"),
            DecodeError::NotIp { ethertype } => write!(f, "not IP (ethertype 0x{ethertype:04x})"),
            DecodeError::Truncated { layer, needed, available } => {
                write!(f, "{layer} header cut short: needs {needed} bytes, {available} captured")
            }
            DecodeError::Malformed { layer, what } => write!(f, "malformed {layer} header: {what}"),
        }
    }
}

/// Decodes one record.
pub fn decode(record: &RawRecord<'_>) -> Result<Packet, DecodeError> {
    let _ = record;
    Err(DecodeError::UnsupportedLinkType)
}
