//! Byte helpers of the framing code: fixed-size integers at an offset in either
//! byte order, and filling a buffer from a stream. Takes bytes or a reader;
//! gives numbers or a count, `None` past the end. Never panics, never allocates.
//! (Moved from `read/mod.rs` unchanged.)

use super::ByteOrder;
use std::io::{self, Read};

/// Reads until `buf` is full or the stream ends; returns the bytes read.
pub(crate) fn read_full(src: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while let Some(room) = buf.get_mut(n..).filter(|r| !r.is_empty()) {
        match src.read(room) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads a u16 at `at` in byte order `bo`; None past the end.
#[inline]
pub(crate) fn read_u16(b: &[u8], at: usize, bo: ByteOrder) -> Option<u16> {
    let bytes: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(match bo {
        ByteOrder::Little => u16::from_le_bytes(bytes),
        ByteOrder::Big => u16::from_be_bytes(bytes),
    })
}

/// Reads a u32 at `at` in byte order `bo`; None past the end.
#[inline]
pub(crate) fn read_u32(b: &[u8], at: usize, bo: ByteOrder) -> Option<u32> {
    let bytes: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(match bo {
        ByteOrder::Little => u32::from_le_bytes(bytes),
        ByteOrder::Big => u32::from_be_bytes(bytes),
    })
}

/// Reads a u64 at `at` in byte order `bo`; None past the end.
#[inline]
pub(crate) fn read_u64(b: &[u8], at: usize, bo: ByteOrder) -> Option<u64> {
    let bytes: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(match bo {
        ByteOrder::Little => u64::from_le_bytes(bytes),
        ByteOrder::Big => u64::from_be_bytes(bytes),
    })
}
