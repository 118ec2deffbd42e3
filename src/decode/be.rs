//! Big-endian fields read from packet bytes (the transport and ICMP readers
//! both take them from here, so neither names the other for them).

use std::ops::Range;

/// Big-endian u16 at `range`, None when the bytes are not all there.
pub(super) fn be16(bytes: &[u8], range: Range<usize>) -> Option<u16> {
    bytes.get(range).and_then(|b| <[u8; 2]>::try_from(b).ok()).map(u16::from_be_bytes)
}

/// Big-endian u32 at `range`, None when the bytes are not all there.
pub(super) fn be32(bytes: &[u8], range: Range<usize>) -> Option<u32> {
    bytes.get(range).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(u32::from_be_bytes)
}
