//! The warning context of one capture being framed: its names, the
//! `CaptureInfo` being filled, the record-level warnings (listed up to a cap,
//! then counted) and the chunk planner. Takes what the pcap/pcapng framing
//! reports; gives `Warning`s in the capture's `CaptureInfo`. Never reads bytes.
//! (Moved from `read/mod.rs` unchanged.)

use super::*;
use crate::warning::Warning;

/// Record-level warnings (skipped records) listed per capture; later ones are counted.
const MAX_RECORD_WARNINGS: usize = 20;

/// "1 record", "2 records".
pub(crate) fn records(n: u64) -> String {
    if n == 1 {
        "1 record".to_string()
    } else {
        format!("{n} records")
    }
}

/// What the framing code needs besides the bytes: names for warnings and the
/// `CaptureInfo` being filled.
pub(crate) struct Ctx<'a> {
    pub(super) label: &'a str,
    pub(super) file: &'a str,
    pub(crate) info: CaptureInfo,
    pub(super) record_warnings: usize,
    pub(super) suppressed: u64,
    pub(super) io_error_reported: bool,
    /// Timestamps beyond what i64 nanoseconds hold (year 2262) seen so far.
    pub(super) ts_out_of_range: u64,
    /// Set while planning chunks: where the next cut is due and the cuts so far.
    pub(super) planner: Option<Planner>,
    /// Timestamps that go backwards and records longer than their snaplen.
    pub(crate) odd: OddRecords,
}

/// Records that are read as they are but counted for one summary warning each
/// per capture: a timestamp earlier than the record before it on the same
/// interface (clock steps, several captures merged into one interface; a
/// pcapng's interfaces interleave by design, as dumpcap writes them), a
/// captured length above the interface's snaplen.
#[derive(Default)]
pub(crate) struct OddRecords {
    /// The last timestamp of each interface, by its number in the capture.
    last_ts_ns: Vec<Option<i64>>,
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
    /// Its interface's number in the capture (0 in a pcap file).
    pub(crate) interface: u32,
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
        let Noted { record, byte_offset, interface, ts_ns, caplen, snaplen, orig_len } = r;
        let i = interface as usize;
        if self.last_ts_ns.len() <= i {
            self.last_ts_ns.resize(i + 1, None);
        }
        if let Some(last) = self.last_ts_ns[i].filter(|&last| ts_ns < last) {
            self.backwards += 1;
            self.first_backwards.get_or_insert((record, byte_offset, last.saturating_sub(ts_ns)));
        }
        self.last_ts_ns[i] = Some(ts_ns);
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
    pub(super) fn new(label: &'a str, file: &'a str, gzip: bool, planner: Option<Planner>) -> Ctx<'a> {
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
    pub(super) fn finish(&mut self) {
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
            // several interfaces: each is checked on its own
            let (it, them) = if self.odd.last_ts_ns.iter().flatten().count() > 1 {
                ("it on its interface", "them on their interface")
            } else {
                ("it", "them")
            };
            self.summarize(
                self.odd.backwards,
                (record, offset),
                format!("1 record has a timestamp earlier than the record before {it} ({back} ms back)"),
                format!("have a timestamp earlier than the record before {them} (this is the first, {back} ms back)"),
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

/// Names a capture in warnings and progress.
#[derive(Clone, Copy)]
pub(crate) struct Who<'a> {
    pub(crate) label: &'a str,
    pub(crate) file: &'a str,
    pub(crate) capture: usize,
}
