//! Capture bytes → raw records. Takes a `CaptureSpec` (file, gzip file or standard
//! input); gives each record as a borrowed `RawRecord` with its timestamp in UTC
//! nanoseconds, interface, link type, record number and byte offset, plus a
//! `CaptureInfo` describing the file. Our own pcap/pcapng framing (see DESIGN.md
//! "Crate facts"): every length read from the file is checked against a cap
//! before anything is allocated. Mid-file damage stops the capture with a
//! `Warning` and keeps what was read; only an unopenable file or one that is no
//! capture at all is an error. A large uncompressed file can also be split at
//! record boundaries and read in parallel chunks (`chunk.rs`). The types are in
//! `types.rs`, the warning context in `context.rs`, byte helpers in `bytes.rs`.
//! The only flate2 user. Never decodes packets, never allocates per record.

mod bytes;
mod chunk;
mod context;
mod feeder;
pub mod link_type;
mod live;
mod pcap;
mod pcapng;
mod types;

use chunk::Resume;
pub use chunk::{plan_chunks, read_chunk, Chunk, ChunkPlan};
pub use link_type::LinkType;
pub use live::{read_live, Live, LiveEnd};
pub use types::*;

pub(crate) use bytes::{read_full, read_u16, read_u32, read_u64};
pub(crate) use context::{records, Ctx, Noted, Planner, Who};

use crate::config::{CaptureSpec, Source};
use crate::warning::Warning;
use feeder::{CountingRead, Feeder, READ_CHUNK};
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{self, Read};

/// Largest pcap record we accept (captured length), bytes.
pub const MAX_PCAP_RECORD: u32 = 256 * 1024;
/// Largest pcapng block we accept, bytes.
pub const MAX_PCAPNG_BLOCK: u32 = 16 * 1024 * 1024;
/// The earliest time a record can have (ns since 1970): a pcapng time before
/// 1677 is clamped here, one nanosecond after `i64::MIN`, which flow
/// summaries keep for "unknown" (`flows::Ns`).
pub const EARLIEST_NS: i64 = i64::MIN + 1;

/// First two bytes of a gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Bytes that identify a capture format (pcap magic, pcapng block type).
const MAGIC_LEN: usize = 4;

/// True when `first` (a file's first bytes) starts like a capture: gzip, any of
/// the six pcap magics (µs, ns, "modified"; both byte orders) or a pcapng
/// section header. The one definition of capture magic numbers.
pub fn looks_like_capture(first: &[u8]) -> bool {
    first.starts_with(&GZIP_MAGIC) || pcap::sniff(first).is_some() || pcapng::sniff(first)
}

/// Reads one capture, calling `on_record` for every packet record in file order.
/// Mid-file damage ends the read with a warning in the returned `CaptureInfo`.
pub fn read_capture(
    spec: &CaptureSpec,
    capture: usize,
    progress: &dyn Progress,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<CaptureInfo, ReadError> {
    let file = spec.display_name();
    let (raw, total): (Box<dyn Read>, u64) = match &spec.source {
        Source::Path(path) => match File::open(path) {
            Ok(f) => {
                let total = f.metadata().map(|m| m.len()).unwrap_or(0);
                (Box::new(f), total)
            }
            Err(e) => return Err(ReadError { file, kind: ReadErrorKind::Io(e) }),
        },
        Source::Stdin => (Box::new(io::stdin().lock()), 0),
    };
    progress.start(capture, &spec.label, total);
    let result = read_stream(
        raw,
        Some(total),
        Who { label: &spec.label, file: &file, capture },
        progress,
        &mut None,
        on_record,
    );
    progress.finish(capture);
    result.map_err(|kind| ReadError { file, kind })
}

/// Reads a capture held in memory (fuzzing, tests). `label` names it in warnings.
pub fn read_bytes(
    label: &str,
    bytes: &[u8],
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<CaptureInfo, ReadError> {
    read_stream(
        Box::new(bytes),
        Some(bytes.len() as u64),
        Who { label, file: label, capture: 0 },
        &NoProgress,
        &mut None,
        on_record,
    )
    .map_err(|kind| ReadError { file: label.to_string(), kind })
}

/// Bytes [`first_timestamp`] reads at most: room for the file header, a few
/// pcapng blocks and the first record.
const PEEK_BYTES: u64 = 2 << 20;

/// The timestamp of the first packet record of a file, read from at most its
/// first [`PEEK_BYTES`] (gzip: compressed bytes), to put rotated files of one
/// point in time order. None for standard input, an unreadable file or one
/// without a record there; read warnings are dropped (the full read gives them).
pub fn first_timestamp(spec: &CaptureSpec) -> Option<i64> {
    peek(spec)?.0
}

/// The format and interfaces of a file as its beginning describes them (the
/// interfaces declared before its first record), read like [`first_timestamp`]:
/// what a streaming run tells its windows about a file it has not finished.
pub fn peek_info(spec: &CaptureSpec) -> Option<CaptureInfo> {
    let info = peek(spec)?.1?;
    Some(CaptureInfo { packets: 0, bytes: 0, warnings: Vec::new(), ..info })
}

/// The first record's time and what was read up to it (None for standard input
/// and any other input that can be read only once: a FIFO, a pipe).
fn peek(spec: &CaptureSpec) -> Option<(Option<i64>, Option<CaptureInfo>)> {
    let Source::Path(path) = &spec.source else { return None };
    if !spec.readable_again() {
        return None;
    }
    let Ok(f) = File::open(path) else { return Some((None, None)) };
    let file = spec.display_name();
    let mut first = None;
    let found = std::cell::Cell::new(false);
    // Read in small steps and stop at the first record: a shard peeks every
    // rotated file of a day, and reading 2 MiB of each cost as much as reading
    // the files it needs.
    let info = read_stream(
        Box::new(UntilFound { inner: f.take(PEEK_BYTES), found: &found }),
        Some(PEEK_STEP),
        Who { label: &spec.label, file: &file, capture: 0 },
        &NoProgress,
        &mut None,
        &mut |r| {
            first.get_or_insert(r.ts_ns);
            found.set(true);
        },
    );
    Some((first, info.ok()))
}

/// The read size [`first_timestamp`] starts with (the buffer still grows to a
/// larger first block).
const PEEK_STEP: u64 = 64 << 10;

/// A reader that ends as soon as `found` is set.
struct UntilFound<'a, R> {
    inner: R,
    found: &'a std::cell::Cell<bool>,
}

impl<R: Read> Read for UntilFound<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.found.get() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

/// True when `spec` is an uncompressed regular file, which could be split into
/// chunks at record boundaries and decoded in parallel (gzip and standard input
/// must be read sequentially).
pub fn is_splittable(spec: &CaptureSpec) -> bool {
    let Source::Path(path) = &spec.source else { return false };
    // Stat before opening: opening a FIFO to look at it would lose its bytes.
    if !spec.readable_again() {
        return false;
    }
    let Ok(mut f) = File::open(path) else { return false };
    let mut head = [0u8; 2];
    matches!(read_full(&mut f, &mut head), Ok(2)) && head != GZIP_MAGIC
}

/// Sniffs gzip, then the capture format, and frames the whole stream.
/// `size_hint`: the bytes expected (0: unknown), or None for a live input,
/// whose records are handed over as soon as their bytes have come.
pub(crate) fn read_stream<'p>(
    raw: Box<dyn Read + 'p>,
    size_hint: Option<u64>,
    who: Who<'_>,
    progress: &'p dyn Progress,
    planner: &mut Option<Planner>,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<CaptureInfo, ReadErrorKind> {
    let (mut counted, raw_count) = CountingRead::new(raw);
    let mut head = [0u8; 2];
    let n = read_full(&mut counted, &mut head).map_err(ReadErrorKind::Io)?;
    let gzip = n == 2 && head == GZIP_MAGIC;
    let rejoined = io::Cursor::new(head).take(n as u64).chain(counted);
    let stream: Box<dyn Read + 'p> =
        if gzip { Box::new(MultiGzDecoder::new(rejoined)) } else { Box::new(rejoined) };
    // Small inputs get a small buffer (it still grows to any block that fits the
    // caps): a plain file never needs more than its size, gzip rarely 8 times it.
    // No size (a live input): records are handed over as their bytes come.
    let Some(size_hint) = size_hint else {
        let mut feeder = Feeder::new(stream, raw_count, READ_CHUNK, progress, who.capture).eager();
        return frame(&mut feeder, who, gzip, planner, on_record);
    };
    let chunk = match (size_hint, gzip) {
        (0, _) => READ_CHUNK,
        (n, false) => READ_CHUNK.min(n.saturating_add(16) as usize),
        (n, true) => READ_CHUNK.min(n.saturating_mul(8).max(64 << 10) as usize),
    };
    let mut feeder = Feeder::new(stream, raw_count, chunk, progress, who.capture);
    frame(&mut feeder, who, gzip, planner, on_record)
}

/// Frames the records a feeder gives (pcap or pcapng).
fn frame(
    feeder: &mut Feeder<'_>,
    who: Who<'_>,
    gzip: bool,
    planner: &mut Option<Planner>,
    on_record: &mut dyn FnMut(&RawRecord<'_>),
) -> Result<CaptureInfo, ReadErrorKind> {
    let Who { label, file, .. } = who;
    let avail = feeder.fill(MAGIC_LEN);
    if avail == 0 {
        return Err(match feeder.take_error() {
            Some(e) => ReadErrorKind::Io(e),
            None => ReadErrorKind::Empty,
        });
    }
    let first = feeder.window().get(..avail.min(MAGIC_LEN)).unwrap_or(&[]);
    let mut ctx = Ctx::new(label, file, gzip, planner.take());
    if let Some(kind) = pcap::sniff(first) {
        pcap::read(feeder, &mut ctx, kind, on_record)?;
    } else if pcapng::sniff(first) {
        pcapng::read(feeder, &mut ctx, on_record)?;
    } else {
        return Err(ReadErrorKind::NotACapture { first_bytes: first.to_vec() });
    }
    ctx.info.bytes = feeder.offset();
    if !ctx.io_error_reported {
        if let Some(e) = feeder.error() {
            let n = ctx.info.packets;
            ctx.warn(
                Some(n + 1),
                Some(feeder.offset()),
                format!("reading failed: {e}"),
                format!("stopped reading this capture, kept the {} before it", records(n)),
            );
        }
    }
    feeder.finish();
    ctx.finish();
    if let Some(p) = ctx.planner.take() {
        *planner = Some(p);
    }
    Ok(ctx.info)
}
