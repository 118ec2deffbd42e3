//! Capture bytes → raw records. Takes a `CaptureSpec` (file, gzip file or standard
//! input); gives each record as a borrowed `RawRecord` with its timestamp in UTC
//! nanoseconds, interface, link type, record number and byte offset, plus a
//! `CaptureInfo` describing the file. Our own pcap/pcapng framing (see ARCHITECTURE.md
//! "Crates"): every length read from the file is checked against a cap
//! before anything is allocated. Mid-file damage stops the capture with a
//! `Warning` and keeps what was read; only an unopenable file or one that is no
//! capture at all is an error. A large uncompressed file can also be split at
//! record boundaries and read in parallel chunks (`chunk.rs`). The types are in
//! `types.rs`, the warning context in `context.rs`, byte helpers in `bytes.rs`.
//! The only flate2 user. Never decodes packets, never allocates per record.
//! The captures as given (`CaptureSpec`, `Source`), the observation points
//! they form (`point_files`), how a name stands for points (`points_named`,
//! `capture_of_point`) and the stage's settings (`ReadConfig`) are here, the
//! lowest module that takes them.

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

use crate::warning::Warning;
use feeder::{CountingRead, Feeder, READ_CHUNK};
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

/// Where a capture's bytes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Path(PathBuf),
    Stdin,
}

/// One capture point as given on the command line: `LABEL=PATH`, `PATH` or `-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSpec {
    pub label: String,
    pub source: Source,
}

impl CaptureSpec {
    /// The file as the user named it (`-` for standard input), for messages.
    pub fn display_name(&self) -> String {
        match &self.source {
            Source::Path(p) => p.display().to_string(),
            Source::Stdin => "-".to_string(),
        }
    }

    /// True when the capture can be opened and read more than once: a regular
    /// file. Standard input, a named pipe (FIFO), a process substitution
    /// (`/dev/fd/N`) or a character device gives its bytes once: the reader
    /// that opens it must be the only one, from the first byte (a peek that
    /// opens and closes a FIFO loses what the writer put in the pipe and kills
    /// the writer with SIGPIPE; the next open then waits for a writer forever).
    /// Checked with `stat`, which never opens the file.
    pub fn readable_again(&self) -> bool {
        match &self.source {
            Source::Path(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Source::Stdin => false,
        }
    }
}

/// The observation points `captures` form: for each, the indices of its files
/// (one label; a label given more than once holds several files), points in
/// the order their labels first appear.
pub fn point_files(captures: &[CaptureSpec]) -> Vec<Vec<usize>> {
    let mut points: Vec<Vec<usize>> = Vec::new();
    for (i, c) in captures.iter().enumerate() {
        match points.iter_mut().find(|p| captures[p[0]].label == c.label) {
            Some(p) => p.push(i),
            None => points.push(vec![i]),
        }
    }
    points
}

/// Settings of the read stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadConfig {
    /// Uncompressed seekable files larger than this are split into chunks of
    /// about this size, decoded in parallel, when there are more threads than
    /// captures (bytes).
    pub chunk_bytes: u64,
    /// Split every splittable file, whatever its size and the thread count
    /// (tests: small lab captures really split).
    pub force_chunks: bool,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig { chunk_bytes: 16 << 20, force_chunks: false }
    }
}

/// The capture a point's name belongs to: `node` for `node(out if3)` (a
/// sub-point of a `tcpdump -i any` capture), the name itself otherwise.
pub fn capture_of_point(name: &str) -> &str {
    match name.find('(') {
        Some(i) if i > 0 && name.ends_with(')') => &name[..i],
        _ => name,
    }
}

/// Whether a name given on the command line can stand for points of a run of
/// these captures (`capture_labels`): a capture label, or one with a sub-point
/// in parentheses (`node(out if3)`; which sub-points there are is known only
/// once the capture is read).
pub fn names_a_capture(name: &str, capture_labels: &[&str]) -> bool {
    capture_labels.contains(&name) || capture_labels.contains(&capture_of_point(name))
}

/// The points of a run (`point_labels`, in path order) a name stands for: the
/// point so labelled, else every sub-point of the capture so labelled (`node`
/// for `node(in if2)` and `node(out if3)`); empty when none.
pub fn points_named(name: &str, point_labels: &[&str]) -> Vec<usize> {
    if let Some(i) = point_labels.iter().position(|l| *l == name) {
        return vec![i];
    }
    (0..point_labels.len()).filter(|&i| capture_of_point(point_labels[i]) == name).collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_stands_for_its_point_or_every_sub_point_of_its_capture() {
        let points = ["decap", "node(in if2)", "node(out if3)", "backend"];
        assert_eq!(points_named("node(out if3)", &points), [2]);
        assert_eq!(points_named("node", &points), [1, 2]);
        assert_eq!(points_named("backend", &points), [3]);
        assert!(points_named("node(out if9)", &points).is_empty());
        assert!(points_named("nod", &points).is_empty());
        let captures = ["decap", "node", "backend"];
        assert!(names_a_capture("node(out if3)", &captures) && names_a_capture("node", &captures));
        assert!(!names_a_capture("vpn(out if3)", &captures) && !names_a_capture("(x)", &captures));
    }
    use std::io::Write;

    /// (ts_ns, record, byte_offset, data) of one record.
    type Rec = (i64, u64, u64, Vec<u8>);

    /// A pcap of `n` records of 1 to 40 bytes (LINKTYPE_RAW, ns), the first at `t0`.
    fn pcap_bytes(n: usize, t0: i64) -> Vec<u8> {
        let pkts: Vec<(i64, Vec<u8>, u32)> =
            (0..n).map(|i| (t0 + i as i64 * 1_000, vec![i as u8; 1 + i * 3 % 40], 100)).collect();
        let mut out = Vec::new();
        tuplecorr_synth::write_pcap(&mut out, 65535, &pkts).unwrap();
        out
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, CaptureSpec) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f.flush().unwrap();
        let spec = CaptureSpec { label: "a".into(), source: Source::Path(f.path().to_path_buf()) };
        (f, spec)
    }

    fn read_file(spec: &CaptureSpec) -> Result<(Vec<Rec>, CaptureInfo), ReadError> {
        let mut out = Vec::new();
        let info = read_capture(spec, 0, &NoProgress, &mut |r| {
            out.push((r.ts_ns, r.record, r.byte_offset, r.data.to_vec()))
        })?;
        Ok((out, info))
    }

    #[test]
    fn capture_magic_is_gzip_the_six_pcap_magics_or_a_pcapng_section_header() {
        for magic in [
            [0x1f, 0x8b, 0x08, 0x00],
            [0xd4, 0xc3, 0xb2, 0xa1],
            [0xa1, 0xb2, 0xc3, 0xd4],
            [0x4d, 0x3c, 0xb2, 0xa1],
            [0xa1, 0xb2, 0x3c, 0x4d],
            [0x34, 0xcd, 0xb2, 0xa1],
            [0xa1, 0xb2, 0xcd, 0x34],
            [0x0a, 0x0d, 0x0d, 0x0a],
        ] {
            assert!(looks_like_capture(&magic), "{magic:02x?}");
        }
        for other in [&b"GET / HTTP/1.1"[..], b"", b"\x1f", b"\x00\x00\x00\x00", b"\x0a\x0d\x0d\x0b"] {
            assert!(!looks_like_capture(other), "{other:02x?}");
        }
    }

    #[test]
    fn what_is_no_capture_is_an_error_that_names_the_file_and_shows_its_first_bytes() {
        let e = read_bytes("x.pcap", b"", &mut |_| {}).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::Empty));
        assert!(e.to_string().starts_with("x.pcap: the file is empty (0 bytes)"), "{e}");
        let e = read_bytes("x.pcap", b"GET / HTTP/1.1\r\n", &mut |_| {}).unwrap_err();
        assert!(matches!(&e.kind, ReadErrorKind::NotACapture { first_bytes } if first_bytes == b"GET "));
        assert!(e.to_string().ends_with("at byte 0, found 47 45 54 20"), "{e}");
        let e = read_bytes("x.pcap", &[0xd4, 0xc3], &mut |_| {}).unwrap_err();
        assert!(
            matches!(&e.kind, ReadErrorKind::NotACapture { first_bytes } if first_bytes == &[0xd4, 0xc3])
        );
        let spec = CaptureSpec { label: "a".into(), source: Source::Path("/nonexistent/b.pcap".into()) };
        let e = read_file(&spec).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::Io(_)));
        assert!(e.to_string().starts_with("/nonexistent/b.pcap: cannot read it: "), "{e}");
    }

    #[test]
    fn a_gzip_capture_reads_as_the_same_capture_uncompressed_also_in_several_members() {
        let plain = pcap_bytes(50, 1_000);
        let (_f, spec) = file_of(&plain);
        let (records, info) = read_file(&spec).unwrap();
        assert_eq!((records.len(), info.packets, info.bytes, info.gzip), (50, 50, plain.len() as u64, false));
        assert_eq!(records[3], (4_000, 4, 24 + 16 * 3 + 1 + 4 + 7, vec![3; 10]));
        let (_g, gz) = file_of(&gzip(&plain));
        let (zipped, zinfo) = read_file(&gz).unwrap();
        assert_eq!(zipped, records, "offsets in the decompressed stream");
        assert_eq!(zinfo, CaptureInfo { gzip: true, ..info.clone() });
        // `gzip -c a >x; gzip -c b >>x`: members one after the other are one stream
        let mut two = gzip(&plain[..500]);
        two.extend(gzip(&plain[500..]));
        let (_h, members) = file_of(&two);
        assert_eq!(read_file(&members).unwrap().0, records);
    }

    #[test]
    fn only_an_uncompressed_regular_file_is_splittable() {
        let plain = pcap_bytes(3, 0);
        let (_f, file) = file_of(&plain);
        let (_g, zipped) = file_of(&gzip(&plain));
        assert!(is_splittable(&file));
        assert!(!is_splittable(&zipped));
        assert!(!is_splittable(&CaptureSpec { label: "a".into(), source: Source::Stdin }));
        let gone = CaptureSpec { label: "a".into(), source: Source::Path("/nonexistent/c.pcap".into()) };
        assert!(!is_splittable(&gone));
    }

    #[test]
    fn the_first_timestamp_and_the_interfaces_are_peeked_from_the_file_start() {
        let t0 = 1_700_000_000_123_456_789;
        let plain = pcap_bytes(20, t0);
        let (_f, file) = file_of(&plain);
        let (_g, zipped) = file_of(&gzip(&plain));
        assert_eq!(first_timestamp(&file), Some(t0));
        assert_eq!(first_timestamp(&zipped), Some(t0));
        let (_h, empty) = file_of(&plain[..24]);
        assert_eq!(first_timestamp(&empty), None, "a header without records");
        assert_eq!(first_timestamp(&CaptureSpec { label: "a".into(), source: Source::Stdin }), None);
        let info = peek_info(&file).unwrap();
        assert_eq!((info.format, info.packets, info.bytes), (Format::Pcap, 0, 0));
        assert_eq!(info.interfaces.len(), 1);
        assert_eq!((info.interfaces[0].link_type, info.interfaces[0].snaplen), (LinkType::RawIp, 65535));
        assert!(peek_info(&zipped).unwrap().gzip);
        assert!(peek_info(&empty).is_some(), "its header still says what it is");
    }

    #[test]
    fn a_record_cut_short_ends_the_read_with_a_warning_naming_file_record_and_offset() {
        let plain = pcap_bytes(5, 0);
        // Records 1..5 hold 1, 4, 7, 10, 13 bytes; the last one loses 3 of them.
        let cut = &plain[..plain.len() - 3];
        let mut records = Vec::new();
        let info = read_bytes("c.pcap", cut, &mut |r| records.push(r.record)).unwrap();
        assert_eq!(records, [1, 2, 3, 4]);
        assert_eq!(info.packets, 4);
        let offset = 24 + 16 * 4 + (1 + 4 + 7 + 10);
        assert_eq!(info.bytes, offset, "read up to the record cut short");
        assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
        let w = &info.warnings[0];
        assert_eq!((w.label.as_str(), w.file.as_str()), ("c.pcap", "c.pcap"));
        assert_eq!((w.record, w.byte_offset), (Some(5), Some(offset)));
        assert_eq!(
            w.problem,
            "record is cut short: its header says 13 bytes, the file ends after 10 (tcpdump stopped mid-write?)"
        );
        assert_eq!(w.consequence, "dropped it, kept the 4 records before it");
        // Cut inside the record header: the record before is the one kept.
        let info = read_bytes("c.pcap", &plain[..24 + 16 + 1 + 9], &mut |_| {}).unwrap();
        let w = &info.warnings[0];
        assert_eq!((w.record, w.byte_offset), (Some(2), Some(24 + 16 + 1)));
        assert_eq!(w.problem, "record header is cut short: it needs 16 bytes, the file ends after 9 (tcpdump stopped mid-write?)");
        assert_eq!(w.consequence, "dropped it, kept the 1 record before it");
    }
}
