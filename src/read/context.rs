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
    /// The usual record (interface known, time not earlier, lengths in
    /// bounds) is a few compares; anything else goes to [`OddRecords::odd`].
    #[inline]
    pub(crate) fn note(&mut self, r: Noted) {
        let usual = match self.last_ts_ns.get_mut(r.interface as usize) {
            Some(Some(last)) if r.ts_ns >= *last => {
                *last = r.ts_ns;
                (r.snaplen == 0 || r.caplen <= r.snaplen as usize) && r.caplen <= r.orig_len as usize
            }
            _ => false,
        };
        if !usual {
            self.odd(r);
        }
    }

    #[cold]
    fn odd(&mut self, r: Noted) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx<'static> {
        Ctx::new("lab", "lab.pcap", false, None)
    }

    fn noted(record: u64, interface: u32, ts_ns: i64) -> Noted {
        Noted { record, byte_offset: record * 100, interface, ts_ns, caplen: 60, snaplen: 0, orig_len: 60 }
    }

    fn problems<'c>(ctx: &'c Ctx<'_>) -> Vec<(Option<u64>, Option<u64>, &'c str, &'c str)> {
        (ctx.info.warnings.iter())
            .map(|w| (w.record, w.byte_offset, w.problem.as_str(), w.consequence.as_str()))
            .collect()
    }

    #[test]
    fn counts_and_milliseconds_are_written_plainly() {
        assert_eq!(
            (records(0), records(1), records(2)),
            ("0 records".into(), "1 record".into(), "2 records".into())
        );
        assert_eq!(ms(1_500_000), "1.5");
        assert_eq!(ms(2_000_000), "2");
        assert_eq!(ms(1_234_567), "1.235");
        assert_eq!(ms(10_000_000_000), "10000");
        assert_eq!(ms(250), "0");
    }

    #[test]
    fn warnings_name_the_capture_and_file_and_skipped_records_are_listed_up_to_the_cap() {
        let mut c = ctx();
        for r in 1..=MAX_RECORD_WARNINGS as u64 + 5 {
            c.skip_record(r, r * 10, format!("bad {r}"));
        }
        assert_eq!(c.info.warnings.len(), MAX_RECORD_WARNINGS);
        let last = &c.info.warnings[MAX_RECORD_WARNINGS - 1];
        assert_eq!((last.label.as_str(), last.file.as_str()), ("lab", "lab.pcap"));
        assert_eq!((last.record, last.byte_offset, last.problem.as_str()), (Some(20), Some(200), "bad 20"));
        assert_eq!(last.consequence, "skipped this record");
        c.finish();
        assert_eq!(c.info.warnings.len(), MAX_RECORD_WARNINGS + 1);
        let more = c.info.warnings.last().unwrap();
        assert_eq!((more.record, more.byte_offset), (None, None));
        assert_eq!(
            more.problem,
            "5 more records had problems like those above (only the first 20 are listed)"
        );
        // At the cap exactly: nothing more to say.
        let mut c = ctx();
        for r in 1..=MAX_RECORD_WARNINGS as u64 {
            c.skip_record(r, 0, "bad".into());
        }
        c.finish();
        assert_eq!(c.info.warnings.len(), MAX_RECORD_WARNINGS);
    }

    #[test]
    fn stops_say_how_many_records_were_kept() {
        let mut c = ctx();
        c.info.packets = 7;
        c.over_cap(Some(8), 4000, "captured length", 300_000, MAX_PCAP_RECORD);
        c.info.packets = 1;
        c.stop(None, 50, "garbage".into());
        assert_eq!(
            problems(&c),
            [
                (
                    Some(8),
                    Some(4000),
                    "captured length 300000 exceeds the 262144-byte cap (garbage length?)",
                    "stopped reading this capture, kept the 7 records before it"
                ),
                (None, Some(50), "garbage", "stopped reading this capture, kept the 1 record before it"),
            ]
        );
    }

    #[test]
    fn a_timestamp_out_of_range_is_warned_once_at_the_first() {
        let mut c = ctx();
        c.timestamp_out_of_range(3, 300);
        c.timestamp_out_of_range(9, 900);
        assert_eq!(c.ts_out_of_range, 2);
        assert_eq!(c.info.warnings.len(), 1);
        assert_eq!((c.info.warnings[0].record, c.info.warnings[0].byte_offset), (Some(3), Some(300)));
    }

    #[test]
    fn timestamps_that_go_back_are_counted_per_interface_and_summed_up_at_the_first() {
        let mut c = ctx();
        // Two interfaces interleaved, each in order: nothing goes back.
        for (r, (i, t)) in [(0, 10), (1, 5), (0, 20), (1, 15)].into_iter().enumerate() {
            c.odd.note(noted(r as u64 + 1, i, t));
        }
        c.odd.note(noted(5, 0, 20)); // the same time is not earlier
        c.odd.note(noted(6, 0, 20 - 1_500_000));
        c.odd.note(noted(7, 1, 1));
        c.finish();
        assert_eq!(
            problems(&c),
            [(
                Some(6),
                Some(600),
                "2 records have a timestamp earlier than the record before them on their interface (this is \
                 the first, 1.5 ms back)",
                "kept them; flows use each packet's own time"
            )]
        );
        // One interface: no interface named; one record: said of it.
        let mut c = ctx();
        c.odd.note(noted(1, 0, 3_000_000));
        c.odd.note(noted(2, 0, 1_000_000));
        c.finish();
        assert_eq!(
            problems(&c),
            [(
                Some(2),
                Some(200),
                "1 record has a timestamp earlier than the record before it (2 ms back)",
                "kept it; flows use each packet's own time"
            )]
        );
    }

    #[test]
    fn records_longer_than_their_snaplen_or_their_original_length_are_summed_up() {
        let mut c = ctx();
        let n =
            |record, caplen, snaplen, orig_len| Noted { caplen, snaplen, orig_len, ..noted(record, 0, 0) };
        c.odd.note(n(1, 100, 0, 100)); // no snaplen: none to exceed
        c.odd.note(n(2, 100, 96, 100));
        c.odd.note(n(3, 200, 96, 200));
        c.odd.note(n(4, 60, 96, 54));
        c.finish();
        assert_eq!(
            problems(&c),
            [
                (
                    Some(2),
                    Some(200),
                    "2 records are longer than the interface's snaplen (this is the first: 100 bytes, snaplen 96)",
                    "read them whole (up to the 262144-byte cap)"
                ),
                (
                    Some(4),
                    Some(400),
                    "1 record has more bytes captured than its original length (60 captured, 54 on the wire)",
                    "read it as captured"
                ),
            ]
        );
    }

    #[test]
    fn link_types_not_decoded_are_warned_once_each_for_interfaces_with_packets() {
        let mut c = ctx();
        let itf = |raw, packets| InterfaceInfo {
            link_type: LinkType::from_u32(raw),
            snaplen: 0,
            ts_resolution: "us".into(),
            ts_offset_s: 0,
            name: None,
            packets,
        };
        c.info.interfaces = vec![itf(1, 9), itf(147, 3), itf(148, 0), itf(147, 2), itf(148, 1)];
        c.finish();
        let user = |raw| LinkType::from_u32(raw).describe();
        assert_eq!(
            problems(&c),
            [
                (
                    None,
                    None,
                    format!("2 interfaces (the first is 1) have link type {}, not decoded", user(147))
                        .as_str(),
                    "their 5 packets are skipped"
                ),
                (
                    None,
                    None,
                    format!("interface 4 has link type {}, not decoded", user(148)).as_str(),
                    "its 1 packet is skipped"
                ),
            ]
        );
    }

    /// The cuts a planner of `every` bytes records in a pcap of records of
    /// 16 + 10 bytes (offsets 24, 50, 76, ...).
    fn cuts(every: u64) -> Vec<(u64, u64)> {
        let pkts: Vec<(i64, Vec<u8>, u32)> = (0..10).map(|i| (i, vec![0; 10], 10)).collect();
        let mut bytes = Vec::new();
        tuplecorr_synth::write_pcap(&mut bytes, 65535, &pkts).unwrap();
        let mut planner = Some(Planner::new(every));
        let who = Who { label: "lab", file: "lab.pcap", capture: 0 };
        read_stream(
            Box::new(&bytes[..]),
            Some(bytes.len() as u64),
            who,
            &NoProgress,
            &mut planner,
            &mut |_| {},
        )
        .unwrap();
        (planner.unwrap().into_cuts().into_iter())
            .map(|(o, r)| match r {
                Resume::Pcap(st) => (o, st.packets()),
                Resume::Pcapng(st) => (o, st.records()),
            })
            .collect()
    }

    #[test]
    fn a_planner_cuts_at_the_first_record_boundary_every_so_many_bytes() {
        assert_eq!(cuts(60), [(24, 0), (102, 3), (180, 6), (258, 9)], "(offset, records before)");
        // A boundary due at the end of the file is cut too (`plan_chunks` drops the empty chunk).
        let due = [(24, 0), (76, 2), (128, 4), (180, 6), (232, 8), (284, 10)];
        assert_eq!(cuts(52), due, "exactly `every` bytes on");
        assert_eq!(
            cuts(0),
            (0..=10).map(|i| (24 + 26 * i, i)).collect::<Vec<_>>(),
            "at least a record apart"
        );
        assert_eq!(cuts(1 << 20), [(24, 0)]);
        assert!(!ctx().wants_cut(0), "no planner, no cut");
    }
}
