//! The read stage's vocabulary: a borrowed `RawRecord`, what a capture is
//! (`CaptureInfo`, its interfaces, format and byte order), why one could not be
//! read (`ReadError`) and the `Progress` trait. Takes nothing; gives the types.
//! Never reads a byte. (Moved from `read/mod.rs` unchanged.)

use super::*;
use std::fmt;

/// One captured packet, borrowed from the reader's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// Capture time, UTC nanoseconds since the Unix epoch (pcapng `if_tsresol`
    /// and `if_tsoffset` applied).
    pub ts_ns: i64,
    /// Interface index within the capture (pcapng: counted across sections in
    /// file order; pcap: 0).
    pub interface: u32,
    pub link_type: LinkType,
    /// The captured bytes (at most the snaplen).
    pub data: &'a [u8],
    /// The packet's length on the wire.
    pub orig_len: u32,
    /// 1-based packet number (counts packet records only, as Wireshark does; a
    /// pcapng packet block skipped with a warning still takes its number).
    pub record: u64,
    /// Byte offset of the record's header in the (decompressed) stream.
    pub byte_offset: u64,
}

/// Container format of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap,
    /// Alexey Kuznetsov's "modified" pcap (magic a1b2cd34, 24-byte record headers).
    PcapModified,
    Pcapng,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Pcap => "pcap",
            Format::PcapModified => "pcap-modified",
            Format::Pcapng => "pcapng",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

/// One interface of a capture (pcap has exactly one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceInfo {
    pub link_type: LinkType,
    pub snaplen: u32,
    /// Nanoseconds per timestamp unit numerator/denominator expressed as text,
    /// e.g. "us", "ns", "2^-20 s".
    pub ts_resolution: String,
    /// pcapng `if_tsoffset` in seconds (0 when absent).
    pub ts_offset_s: i64,
    /// pcapng `if_name`, when present.
    pub name: Option<String>,
    /// Packet records read on this interface.
    pub packets: u64,
}

/// What a capture file is, filled as it is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureInfo {
    pub format: Format,
    pub byte_order: ByteOrder,
    /// The file was gzip-compressed.
    pub gzip: bool,
    pub interfaces: Vec<InterfaceInfo>,
    /// Packet records read (every one, decodable or not).
    pub packets: u64,
    /// Bytes consumed from the (decompressed) stream.
    pub bytes: u64,
    /// Non-fatal problems met while reading.
    pub warnings: Vec<Warning>,
}

/// A capture that could not be read at all (exit status 2).
#[derive(Debug)]
pub struct ReadError {
    /// The file as the user named it.
    pub file: String,
    pub kind: ReadErrorKind,
}

#[derive(Debug)]
pub enum ReadErrorKind {
    /// The path could not be opened or read.
    Io(std::io::Error),
    /// The file is empty.
    Empty,
    /// The first bytes are no pcap, pcapng or gzip magic.
    NotACapture { first_bytes: Vec<u8> },
    /// A recognised format whose file header we cannot use (e.g. pcap major version 1).
    BadHeader { what: String },
}

/// Says what is wrong and where; the caller says what happens next (the main
/// form stops, `inspect` skips the capture).
impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = &self.file;
        match &self.kind {
            ReadErrorKind::Io(e) => write!(f, "{file}: cannot read it: {e}"),
            ReadErrorKind::Empty => {
                write!(f, "{file}: the file is empty (0 bytes); expected a pcap, pcapng or gzip capture")
            }
            ReadErrorKind::NotACapture { first_bytes } => {
                let hex: Vec<String> = first_bytes.iter().map(|b| format!("{b:02x}")).collect();
                write!(
                    f,
                    "{file}: not a pcap, pcapng or gzip file: expected a capture's magic number at byte 0, \
                     found {}",
                    hex.join(" ")
                )
            }
            ReadErrorKind::BadHeader { what } => write!(f, "{file}: {what}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reports bytes read, so a progress bar can follow long reads.
pub trait Progress: Sync {
    /// `total` bytes of capture `capture` are known (0 when unknown, e.g. stdin).
    fn start(&self, capture: usize, label: &str, total: u64);
    /// `bytes` more bytes of capture `capture` were consumed.
    fn bytes_read(&self, capture: usize, bytes: u64);
    /// Capture `capture` is done.
    fn finish(&self, capture: usize);
}

/// A `Progress` that shows nothing (tests, `--quiet`).
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: usize, _: &str, _: u64) {}
    fn bytes_read(&self, _: usize, _: u64) {}
    fn finish(&self, _: usize) {}
}
