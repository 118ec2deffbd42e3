//! Capture bytes → raw records. Takes a `CaptureSpec` (file, gzip file or standard
//! input); gives each record as a borrowed `RawRecord` with its timestamp in UTC
//! nanoseconds, interface, link type, record number and byte offset, plus a
//! `CaptureInfo` describing the file. Our own pcap/pcapng framing (see DESIGN.md
//! "Crate facts"): every length read from the file is checked against a cap
//! before anything is allocated. Mid-file damage stops the capture with a
//! `Warning` and keeps what was read; only an unopenable file or one that is no
//! capture at all is an error. A large uncompressed file can also be split at
//! record boundaries and read in parallel chunks (`chunk.rs`). The only flate2
//! user. Never decodes packets, never allocates per record.

mod chunk;
mod feeder;
pub mod link_type;
mod pcap;
mod pcapng;

use chunk::Resume;
pub use chunk::{plan_chunks, read_chunk, Chunk, ChunkPlan};
pub use link_type::LinkType;

use crate::config::{CaptureSpec, Source};
use crate::warning::Warning;
use feeder::{CountingRead, Feeder, READ_CHUNK};
use flate2::read::MultiGzDecoder;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};

/// Largest pcap record we accept (captured length), bytes.
pub const MAX_PCAP_RECORD: u32 = 256 * 1024;
/// Largest pcapng block we accept, bytes.
pub const MAX_PCAPNG_BLOCK: u32 = 16 * 1024 * 1024;

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

/// First two bytes of a gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Bytes that identify a capture format (pcap magic, pcapng block type).
const MAGIC_LEN: usize = 4;
/// Record-level warnings (skipped records) listed per capture; later ones are counted.
const MAX_RECORD_WARNINGS: usize = 20;

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
        total,
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
        bytes.len() as u64,
        Who { label, file: label, capture: 0 },
        &NoProgress,
        &mut None,
        on_record,
    )
    .map_err(|kind| ReadError { file: label.to_string(), kind })
}

/// True when `spec` is an uncompressed regular file, which could be split into
/// chunks at record boundaries and decoded in parallel (gzip and standard input
/// must be read sequentially).
pub fn is_splittable(spec: &CaptureSpec) -> bool {
    let Source::Path(path) = &spec.source else { return false };
    let Ok(mut f) = File::open(path) else { return false };
    if !f.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return false;
    }
    let mut head = [0u8; 2];
    matches!(read_full(&mut f, &mut head), Ok(2)) && head != GZIP_MAGIC
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full(src: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
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

/// Names a capture in warnings and progress.
#[derive(Clone, Copy)]
pub(crate) struct Who<'a> {
    pub(crate) label: &'a str,
    pub(crate) file: &'a str,
    pub(crate) capture: usize,
}

/// Sniffs gzip, then the capture format, and frames the whole stream.
pub(crate) fn read_stream<'p>(
    raw: Box<dyn Read + 'p>,
    size_hint: u64,
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
    let chunk = match (size_hint, gzip) {
        (0, _) => READ_CHUNK,
        (n, false) => READ_CHUNK.min(n.saturating_add(16) as usize),
        (n, true) => READ_CHUNK.min(n.saturating_mul(8).max(64 << 10) as usize),
    };
    let Who { label, file, capture } = who;
    let mut feeder = Feeder::new(stream, raw_count, chunk, progress, capture);

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
        pcap::read(&mut feeder, &mut ctx, kind, on_record)?;
    } else if pcapng::sniff(first) {
        pcapng::read(&mut feeder, &mut ctx, on_record)?;
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

/// "1 record", "2 records".
fn records(n: u64) -> String {
    if n == 1 {
        "1 record".to_string()
    } else {
        format!("{n} records")
    }
}

/// What the framing code needs besides the bytes: names for warnings and the
/// `CaptureInfo` being filled.
pub(crate) struct Ctx<'a> {
    label: &'a str,
    file: &'a str,
    pub(crate) info: CaptureInfo,
    record_warnings: usize,
    suppressed: u64,
    io_error_reported: bool,
    /// Timestamps beyond what i64 nanoseconds hold (year 2262) seen so far.
    ts_out_of_range: u64,
    /// Set while planning chunks: where the next cut is due and the cuts so far.
    planner: Option<Planner>,
    /// Timestamps that go backwards and records longer than their snaplen.
    pub(crate) odd: OddRecords,
}

/// Records that are read as they are but counted for one summary warning each
/// per capture: a timestamp earlier than the record before it (clock steps,
/// several interfaces merged), a captured length above the interface's snaplen.
#[derive(Default)]
pub(crate) struct OddRecords {
    last_ts_ns: Option<i64>,
    backwards: u64,
    /// First such record: number, byte offset, how far back (ns).
    first_backwards: Option<(u64, u64, i64)>,
    over_snaplen: u64,
    /// First such record: number, byte offset, captured length, snaplen.
    first_over_snaplen: Option<(u64, u64, usize, u32)>,
    over_orig_len: u64,
    /// First record captured longer than it was on the wire: number, byte
    /// offset, captured length, original length.
    first_over_orig_len: Option<(u64, u64, usize, u32)>,
}

/// Where and what one record is, for `OddRecords::note`.
pub(crate) struct Noted {
    pub(crate) record: u64,
    pub(crate) byte_offset: u64,
    pub(crate) ts_ns: i64,
    pub(crate) caplen: usize,
    /// Its interface's snaplen (0: none).
    pub(crate) snaplen: u32,
    pub(crate) orig_len: u32,
}

impl OddRecords {
    /// Notes one record's timestamp, captured, snap and original lengths.
    #[inline]
    pub(crate) fn note(&mut self, r: Noted) {
        let Noted { record, byte_offset, ts_ns, caplen, snaplen, orig_len } = r;
        if let Some(last) = self.last_ts_ns.filter(|&last| ts_ns < last) {
            self.backwards += 1;
            self.first_backwards.get_or_insert((record, byte_offset, last.saturating_sub(ts_ns)));
        }
        self.last_ts_ns = Some(ts_ns);
        if snaplen != 0 && caplen > snaplen as usize {
            self.over_snaplen += 1;
            self.first_over_snaplen.get_or_insert((record, byte_offset, caplen, snaplen));
        }
        if caplen > orig_len as usize {
            self.over_orig_len += 1;
            self.first_over_orig_len.get_or_insert((record, byte_offset, caplen, orig_len));
        }
    }
}

/// Records resumable positions about every `every` bytes.
pub(crate) struct Planner {
    every: u64,
    next_at: u64,
    cuts: Vec<(u64, Resume)>,
}

impl Planner {
    /// A cut about every `every` bytes (at least 1).
    pub(crate) fn new(every: u64) -> Planner {
        Planner { every: every.max(1), next_at: 0, cuts: Vec::new() }
    }

    /// The resumable positions recorded, in file order.
    pub(crate) fn into_cuts(self) -> Vec<(u64, Resume)> {
        self.cuts
    }
}

impl<'a> Ctx<'a> {
    /// An empty `CaptureInfo` to fill.
    fn new(label: &'a str, file: &'a str, gzip: bool, planner: Option<Planner>) -> Ctx<'a> {
        Ctx {
            label,
            file,
            info: CaptureInfo {
                format: Format::Pcap,
                byte_order: ByteOrder::Little,
                gzip,
                interfaces: Vec::new(),
                packets: 0,
                bytes: 0,
                warnings: Vec::new(),
            },
            record_warnings: 0,
            suppressed: 0,
            io_error_reported: false,
            ts_out_of_range: 0,
            planner,
            odd: OddRecords::default(),
        }
    }

    /// True when the framing code should record a cut at this record boundary.
    #[inline]
    pub(crate) fn wants_cut(&self, offset: u64) -> bool {
        matches!(&self.planner, Some(p) if offset >= p.next_at)
    }

    /// Records a resumable position.
    pub(crate) fn cut(&mut self, offset: u64, resume: Resume) {
        if let Some(p) = &mut self.planner {
            p.cuts.push((offset, resume));
            p.next_at = offset.saturating_add(p.every);
        }
    }

    /// Adds a warning.
    pub(crate) fn warn(
        &mut self,
        record: Option<u64>,
        byte_offset: Option<u64>,
        problem: String,
        consequence: String,
    ) {
        self.info.warnings.push(Warning {
            label: self.label.to_string(),
            file: self.file.to_string(),
            record,
            byte_offset,
            problem,
            consequence,
        });
    }

    /// A timestamp beyond year 2262 (or before 1677) was clamped; warned once
    /// per capture, at the first such record.
    pub(crate) fn timestamp_out_of_range(&mut self, record: u64, byte_offset: u64) {
        self.ts_out_of_range += 1;
        if self.ts_out_of_range == 1 {
            self.warn(
                Some(record),
                Some(byte_offset),
                "timestamp beyond what tuplecorr can hold (after the year 2262 or before 1677: a bogus \
                 if_tsresol or clock?)"
                    .to_string(),
                "clamped it (and any later such timestamps) to the limit; times of this interface are not \
                 trustworthy"
                    .to_string(),
            );
        }
    }

    /// One record was skipped; the first `MAX_RECORD_WARNINGS` are listed.
    pub(crate) fn skip_record(&mut self, record: u64, byte_offset: u64, problem: String) {
        if self.record_warnings < MAX_RECORD_WARNINGS {
            self.record_warnings += 1;
            self.warn(Some(record), Some(byte_offset), problem, "skipped this record".to_string());
        } else {
            self.suppressed += 1;
        }
    }

    /// The stream ends inside a record, header or block (`says`: the length came
    /// from its header).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cut_short(
        &mut self,
        feeder: &Feeder<'_>,
        record: Option<u64>,
        byte_offset: u64,
        what: &str,
        needed: usize,
        available: usize,
        says: bool,
    ) {
        let claim = if says { "its header says" } else { "it needs" };
        let problem = match feeder.error() {
            Some(e) => {
                self.io_error_reported = true;
                format!("{what} is cut short: {claim} {needed} bytes, reading failed after {available} ({e})")
            }
            None => format!(
                "{what} is cut short: {claim} {needed} bytes, the file ends after {available} (tcpdump stopped mid-write?)"
            ),
        };
        let consequence = format!("dropped it, kept the {} before it", records(self.info.packets));
        self.warn(record, Some(byte_offset), problem, consequence);
    }

    /// A length field exceeds its cap: the rest of the file cannot be framed.
    pub(crate) fn over_cap(
        &mut self,
        record: Option<u64>,
        byte_offset: u64,
        what: &str,
        value: u32,
        cap: u32,
    ) {
        self.stop(
            record,
            byte_offset,
            format!("{what} {value} exceeds the {cap}-byte cap (garbage length?)"),
        );
    }

    /// A framing problem after which nothing more can be read.
    pub(crate) fn stop(&mut self, record: Option<u64>, byte_offset: u64, problem: String) {
        let consequence =
            format!("stopped reading this capture, kept the {} before it", records(self.info.packets));
        self.warn(record, Some(byte_offset), problem, consequence);
    }

    /// End-of-capture warnings: suppressed record warnings, timestamps that go
    /// backwards, records over their snaplen or their original length, link
    /// types not decoded (one per value, for interfaces that have packets).
    fn finish(&mut self) {
        if self.suppressed > 0 {
            let n = self.suppressed;
            self.warn(
                None,
                None,
                format!("{n} more records had problems like those above (only the first {MAX_RECORD_WARNINGS} are listed)"),
                "skipped them".to_string(),
            );
        }
        if let Some((record, offset, back_ns)) = self.odd.first_backwards {
            let back = ms(back_ns);
            self.summarize(
                self.odd.backwards,
                (record, offset),
                format!("1 record has a timestamp earlier than the record before it ({back} ms back)"),
                format!("have a timestamp earlier than the record before them (this is the first, {back} ms back)"),
                |them| format!("kept {them}; flows use each packet's own time"),
            );
        }
        if let Some((record, offset, caplen, snaplen)) = self.odd.first_over_snaplen {
            self.summarize(
                self.odd.over_snaplen,
                (record, offset),
                format!("1 record is longer than the interface's snaplen ({caplen} bytes, snaplen {snaplen})"),
                format!(
                    "are longer than the interface's snaplen (this is the first: {caplen} bytes, snaplen {snaplen})"
                ),
                |them| format!("read {them} whole (up to the {MAX_PCAP_RECORD}-byte cap)"),
            );
        }
        if let Some((record, offset, caplen, orig)) = self.odd.first_over_orig_len {
            self.summarize(
                self.odd.over_orig_len,
                (record, offset),
                format!(
                    "1 record has more bytes captured than its original length ({caplen} captured, {orig} on \
                     the wire)"
                ),
                format!(
                    "have more bytes captured than their original length (this is the first: {caplen} \
                     captured, {orig} on the wire)"
                ),
                |them| format!("read {them} as captured"),
            );
        }
        // (link type, interfaces, packets) in order of first appearance; an
        // interface without packets loses nothing, so it is not warned about.
        let mut unknown: Vec<(LinkType, Vec<usize>, u64)> = Vec::new();
        for (i, f) in self.info.interfaces.iter().enumerate() {
            if f.link_type.is_decoded() || f.packets == 0 {
                continue;
            }
            match unknown.iter_mut().find(|u| u.0 == f.link_type) {
                Some(u) => {
                    u.1.push(i);
                    u.2 += f.packets;
                }
                None => unknown.push((f.link_type, vec![i], f.packets)),
            }
        }
        for (link_type, ifaces, packets) in unknown {
            let their = if ifaces.len() == 1 { "its" } else { "their" };
            let what = if packets == 1 {
                format!("{their} 1 packet is")
            } else {
                format!("{their} {packets} packets are")
            };
            let which = match ifaces.as_slice() {
                [one] => format!("interface {one} has"),
                [first, ..] => format!("{} interfaces (the first is {first}) have", ifaces.len()),
                [] => continue,
            };
            let problem = format!("{which} link type {}, not decoded", link_type.describe());
            self.warn(None, None, problem, format!("{what} skipped"));
        }
    }

    /// One warning for `n` records of a kind, at the first: `one` says it for a
    /// single record, `many` follows "N records" for several; `consequence` gets
    /// "it" or "them".
    fn summarize(
        &mut self,
        n: u64,
        (record, offset): (u64, u64),
        one: String,
        many: String,
        consequence: impl Fn(&str) -> String,
    ) {
        let (problem, them) = if n == 1 { (one, "it") } else { (format!("{n} records {many}"), "them") };
        self.warn(Some(record), Some(offset), problem, consequence(them));
    }
}

/// Nanoseconds as milliseconds with up to three decimals.
fn ms(ns: i64) -> String {
    let text = format!("{:.3}", ns as f64 / 1e6);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
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
