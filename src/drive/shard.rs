//! Time shards (`--shard-start`, `--shard-end`): which files of each point a
//! shard reads, which requests it reports, and the warnings that say where a
//! shard could differ from the whole run (a flow cut by a skipped file, clocks
//! estimated from part of the run). Takes the shard, file times, flows and the
//! correlation; gives a point's `ReadPlan`, made before it is read, and
//! warnings. Never opens captures itself (first timestamps come from
//! `read::first_timestamp`, records from the reader it is given), never
//! formats reports.
//!
//! Why a shard equals its part of the whole run: a request is a flow of capture
//! 1; what decides its matches and verdict are the flows of every point whose
//! corrected lifetimes reach within one matching step of it (the time gate:
//! tolerance ≤ 200 ms plus the boundary delay; 64 s back for a flow that missed
//! its handshake; 130 s back for an earlier attempt). A shard reads every file
//! that holds a packet within the margin (default 140 s) of its window on that
//! point's clock; of those files, the packets within that widened window, and
//! after it the packets of flows begun in it (`Windowed`): so every
//! flow of a reported request and every flow that competes for its partners is
//! read whole, unless it began before the widened window (a long connection),
//! which is warned about request by request. Memory grows with the flows of
//! the widened window, also when a point is one large file.

use super::ingest::{Builder, Cut, Ingested, Sink};
use super::Config;
use crate::correlate::Correlation;
use crate::correlate::{Pinned, PinnedClocks};
use crate::flows::{Flow, FlowProto, Flows, Orientation};
use crate::read::CaptureSpec;
use crate::read::{CaptureInfo, ReadError};
use crate::warning::Warning;

/// A time shard: the requests whose first packet at capture 1 (on that
/// capture's own clock) lies in `[start_ns, end_ns)`. Files of a point that lie
/// wholly more than `margin_ns` (plus the clock offset allowance) outside the
/// window are not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub start_ns: i64,
    pub end_ns: i64,
    pub margin_ns: i64,
}

/// Default `--shard-margin`: 140 s, the longest reach of one matching step
/// (an earlier attempt up to 130 s before its connection, see
/// `correlate::attempts`) plus 10 s for the time gate (tolerance, delay).
pub const DEFAULT_SHARD_MARGIN_NS: i64 = 140_000_000_000;

/// Keeps the requests of a time shard (`--shard-start`, `--shard-end`): those
/// whose first packet at capture 1, as that capture recorded it, lies in
/// `[start, end)`. Numbers are kept as the shard's run gave them.
pub fn keep_requests(findings: &mut crate::verdict::Findings, shard: &Shard) {
    findings.requests.retain(|r| {
        let t = r.captures.first().and_then(|h| h.raw_time_ns);
        t.is_some_and(|t| t >= shard.start_ns && t < shard.end_ns)
    });
}

/// The window of capture `capture`'s own clock that a shard needs: the shard
/// widened by the margin, moved by that capture's known offset (`--offset`,
/// `--clocks-from`) or widened by `--max-offset` when it is estimated.
pub fn raw_window(config: &Config, shard: &Shard, capture: usize, label: &str) -> (i64, i64) {
    let given = config.correlate.offsets_ns.iter().rev().find(|(c, _)| *c == capture).map(|(_, o)| *o);
    let base = config.correlate.offsets_ns.iter().rev().find(|(c, _)| *c == 0).map_or(0, |(_, o)| *o);
    let pinned = (config.clocks_from.as_ref())
        .and_then(|p| p.clocks.iter().find(|(l, _, _)| l == label).map(|(_, o, _)| *o));
    let max = config.correlate.max_offset_ns.unwrap_or(crate::correlate::clock::DEFAULT_MAX_OFFSET_NS);
    let (shift, extra) = match (capture, given, pinned) {
        (0, _, _) => (0, 0),
        (_, Some(o), _) => (o.saturating_sub(base), 0),
        (_, None, Some(o)) => (o, 0),
        (_, None, None) => (0, max),
    };
    let widen = shard.margin_ns.saturating_add(extra);
    (
        shard.start_ns.saturating_add(shift).saturating_sub(widen),
        shard.end_ns.saturating_add(shift).saturating_add(widen),
    )
}

/// Which files of one point to read, given each file's first packet time in
/// reading order (`firsts`, None when it could not be peeked) and the raw
/// window `(lo, hi)`: a file is skipped when the next file starts at or before
/// `lo` (files of a point follow each other, so it ended before that), or when
/// it starts at or after `hi`. The last file is never skipped for being early
/// (its end is unknown without reading it); at least one file is always read.
/// Gives the positions read, the positions skipped, and the cut.
pub fn plan_files(firsts: &[Option<i64>], (lo, hi): (i64, i64)) -> (Vec<usize>, Vec<usize>, Cut) {
    let n = firsts.len();
    let early = |i: usize| i + 1 < n && firsts[i + 1].is_some_and(|t| t <= lo);
    let late = |i: usize| firsts[i].is_some_and(|t| t >= hi);
    let mut read: Vec<usize> = (0..n).filter(|&i| !early(i) && !late(i)).collect();
    if read.is_empty() {
        // Everything is late: the first file that is not early says the point is quiet then.
        read.extend((0..n).find(|&i| !early(i)));
    }
    let skipped: Vec<usize> = (0..n).filter(|i| !read.contains(i)).collect();
    let (first, last) = (read.first().copied().unwrap_or(0), read.last().copied().unwrap_or(0));
    let cut = Cut {
        read_from: if first > 0 { firsts[first] } else { None },
        read_until: (last + 1 < n).then(|| firsts[last + 1]).flatten(),
    };
    (read, skipped, cut)
}

/// How one point's files are read, planned before reading: all of them in
/// their reading order, or under a time shard the files that reach its raw
/// window ([`plan_files`]) and of them the records [`Windowed`] keeps. The
/// reading loop asks it for the next file ([`ReadPlan::next_file`]), reads
/// through it ([`ReadPlan::read`]), tells it after each file what the flow
/// table holds ([`ReadPlan::after_file`]: after the last planned file, the
/// next late one is read too while a flow begun in the window may go on in
/// it), and once done takes the point's cut and the shard's warnings
/// ([`ReadPlan::finish`]).
pub(crate) struct ReadPlan<'a> {
    shard: Option<&'a Shard>,
    /// The point's files (indices into the captures) in reading order, and
    /// their first packet times (empty for one file).
    all: Vec<usize>,
    firsts: Vec<Option<i64>>,
    /// Positions in `all`: to read (in order), skipped before the last one
    /// planned, skipped after it (late: read while a flow may go on in them).
    read: Vec<usize>,
    skipped: Vec<usize>,
    late: Vec<usize>,
    /// How many of `read` were given by `next_file`.
    next: usize,
    /// The shard's raw window on this point's clock ([`raw_window`]).
    window: Option<(i64, i64)>,
    /// Flows that began in this span may go on in a late file.
    began: (i64, i64),
    cut: Cut,
    udp_idle_ns: i64,
    /// Capture 1's shard `[start, end)` (None for the other points).
    shard_span: Option<(i64, i64)>,
    /// A record before the window was dropped.
    dropped_before: bool,
    /// The first and last time of every record seen (kept or not).
    seen: Option<(i64, i64)>,
    /// A record lay in `shard_span`.
    in_shard: bool,
}

impl<'a> ReadPlan<'a> {
    /// The plan of point `capture` (`label`) of the run `config`, whose files
    /// are `all` (indices into the captures) in reading order with their first
    /// packet times `firsts` (see `ingest::reading_order`).
    pub fn new(
        config: &'a Config,
        capture: usize,
        label: &str,
        all: Vec<usize>,
        firsts: Vec<Option<i64>>,
    ) -> ReadPlan<'a> {
        let shard = config.shard.as_ref();
        // A shard's records outside its window (see `Windowed`), on this point's clock.
        let window = shard.map(|shard| raw_window(config, shard, capture, label));
        let mut plan = ReadPlan {
            shard,
            read: (0..all.len()).collect(),
            all,
            firsts,
            skipped: Vec::new(),
            late: Vec::new(),
            next: 0,
            window,
            began: (i64::MIN, i64::MAX),
            cut: Cut::default(),
            udp_idle_ns: config.flows.udp_idle_ns,
            shard_span: shard.map(|s| (s.start_ns, s.end_ns)).filter(|_| capture == 0),
            dropped_before: false,
            seen: None,
            in_shard: false,
        };
        // A shard reads only the files that reach its window (with the margin),
        // and later ones while a flow begun in the window may go on in them.
        if let (Some(shard), Some(window), true) = (shard, window, plan.all.len() > 1) {
            let (read, skip, cut) = plan_files(&plan.firsts, window);
            let last = read.last().copied().unwrap_or(0);
            (plan.skipped, plan.late) = skip.into_iter().partition(|&i| i < last);
            plan.read = read;
            plan.cut = cut;
            plan.began = if capture == 0 { (shard.start_ns, shard.end_ns) } else { window };
        }
        plan
    }

    /// The next file to read (an index into the captures); None once done.
    pub fn next_file(&mut self) -> Option<usize> {
        let &i = self.read.get(self.next)?;
        self.next += 1;
        Some(self.all[i])
    }

    /// Reads one file by `read` into `builder`: under a shard through
    /// [`Windowed`], which keeps the records of the window and after it those
    /// of the flows begun.
    pub fn read(
        &mut self,
        builder: &mut Builder,
        read: impl FnOnce(&mut dyn Sink) -> Result<CaptureInfo, ReadError>,
    ) -> Result<CaptureInfo, ReadError> {
        let Some((lo, hi)) = self.window else { return read(builder) };
        let mut w = Windowed {
            inner: builder,
            lo,
            hi,
            before: false,
            shard: self.shard_span,
            seen: self.seen,
            in_shard: self.in_shard,
        };
        let info = read(&mut w)?;
        self.dropped_before |= w.before;
        (self.seen, self.in_shard) = (w.seen, w.in_shard);
        builder.table().set_closed(false);
        Ok(info)
    }

    /// After each file read, given the flows read so far: when it was the
    /// last file planned, plans the next late file too while a flow begun in
    /// the shard's window may go on in it (a long connection).
    pub fn after_file(&mut self, flows: &[Flow]) {
        if self.next < self.read.len() {
            return;
        }
        let Some(until) = self.late.first().and_then(|&i| self.firsts[i]) else { return };
        let open = (flows.iter())
            .filter(|fl| fl.first_ns >= self.began.0 && fl.first_ns < self.began.1)
            .any(|fl| may_continue_later(fl, until, self.udp_idle_ns));
        if open {
            self.read.push(self.late.remove(0));
        }
    }

    /// The files read, in order (indices into the captures).
    pub fn files_read(&self) -> Vec<usize> {
        self.read.iter().map(|&i| self.all[i]).collect()
    }

    /// Once read (`specs`: the captures, `label` the point's): where the
    /// point's reading was cut; the warning for capture 1 without a packet in
    /// the shard (a warning of the point's files); the warning naming the
    /// files not read. Without a shard: no cut, no warning.
    pub fn finish(self, specs: &[CaptureSpec], label: &str) -> (Cut, Option<Warning>, Option<Warning>) {
        let Some(shard) = self.shard else { return (Cut::default(), None, None) };
        let mut skipped = self.skipped;
        skipped.extend(&self.late);
        let skipped_warning = (!skipped.is_empty()).then(|| {
            let names: Vec<String> = skipped.iter().map(|&i| specs[self.all[i]].display_name()).collect();
            skipped_warning(label, &names, shard)
        });
        let mut cut = self.cut;
        cut.read_until = self.late.first().and_then(|&i| self.firsts[i]);
        if let (true, Some((lo, _))) = (self.dropped_before, self.window) {
            cut.read_from = Some(cut.read_from.map_or(lo, |from| from.max(lo)));
        }
        let no_packet =
            (self.shard_span.is_some() && !self.in_shard).then(|| no_packet_warning(label, shard, self.seen));
        (cut, no_packet, skipped_warning)
    }
}

/// A shard's view of one point's records: those before its raw window are
/// dropped (the point's reading is cut there, and warned about like a skipped
/// earlier file); those after it only carry on the flows already begun (the
/// flow table is closed to new ones), so a flow of the window is read to its
/// end and nothing that begins after the window is kept. Memory then grows
/// with the flows of the window, also when a point is one large file.
struct Windowed<'a> {
    inner: &'a mut Builder,
    lo: i64,
    hi: i64,
    /// A record before the window was dropped.
    before: bool,
    /// Capture 1's shard `[start, end)`, to say when no packet lies in it.
    shard: Option<(i64, i64)>,
    /// The first and last time of every record seen (kept or not).
    seen: Option<(i64, i64)>,
    /// A record lay in `shard`.
    in_shard: bool,
}

impl Sink for Windowed<'_> {
    fn add(&mut self, rec: &Ingested<'_>) {
        let t = rec.ts_ns;
        self.seen = Some(self.seen.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        self.in_shard |= self.shard.is_some_and(|(start, end)| t >= start && t < end);
        if rec.ts_ns < self.lo {
            self.before = true;
            return;
        }
        // Per record: a capture's times may step back into the window.
        self.inner.table().set_closed(rec.ts_ns > self.hi);
        self.inner.add(rec);
    }
}

/// The files of a list, up to six; a longer list (a day of rotated files)
/// as its first three, a count, and its last two.
fn some_files(files: &[String]) -> String {
    match files {
        [first @ .., a, b] if files.len() > 6 => {
            format!("{}, … {} more …, {a}, {b}", first[..3].join(", "), first.len() - 3)
        }
        _ => files.join(", "),
    }
}

/// The warning naming the files a shard did not read.
pub fn skipped_warning(label: &str, skipped: &[String], shard: &Shard) -> Warning {
    let files = some_files(skipped);
    Warning {
        label: label.to_string(),
        file: files.clone(),
        record: None,
        byte_offset: None,
        problem: format!(
            "shard {} to {}: {} of this point's files lie wholly outside the shard and its {} s margin: {}",
            crate::time::rfc3339(shard.start_ns),
            crate::time::rfc3339(shard.end_ns),
            skipped.len(),
            shard.margin_ns as f64 / 1e9,
            files
        ),
        consequence: "not read".into(),
    }
}

/// The warning for a shard in which capture 1 (`label`) has no packet, so
/// no request: its packets read span `seen` (None: none at all).
pub fn no_packet_warning(label: &str, shard: &Shard, seen: Option<(i64, i64)>) -> Warning {
    let rfc = crate::time::rfc3339;
    let (start, end) = (rfc(shard.start_ns), rfc(shard.end_ns));
    let span = match seen {
        Some((_, last)) if last < shard.start_ns => {
            format!("the shard begins after its last packet read ({})", rfc(last))
        }
        Some((first, _)) if first >= shard.end_ns => {
            format!("the shard ends before its first packet read ({})", rfc(first))
        }
        Some((first, last)) => format!("its packets read run from {} to {}", rfc(first), rfc(last)),
        None => "no packet was read".to_string(),
    };
    Warning {
        label: label.to_string(),
        file: String::new(),
        record: None,
        byte_offset: None,
        problem: format!("shard {start} to {end}: no packet of this capture (capture 1) lies in it: {span}"),
        consequence: "the shard has no request; check --shard-start/--shard-end against the captures' \
                      times (capture 1's own clock)"
            .into(),
    }
}

/// The pinned clocks of `--clocks-from` for the run's points (`labels`), by
/// label; a point or boundary the report does not name is estimated, and said so.
pub fn resolve_pins(pinned: &PinnedClocks, labels: &[String]) -> (Pinned, Vec<Warning>) {
    let mut warnings = Vec::new();
    let clocks: Vec<Option<(i64, i64)>> = labels
        .iter()
        .map(|l| pinned.clocks.iter().find(|(pl, _, _)| pl == l).map(|(_, o, s)| (*o, *s)))
        .collect();
    let delays: Vec<Option<Option<i64>>> = labels
        .windows(2)
        .map(|w| {
            let between = format!("{}->{}", w[0], w[1]);
            pinned.delays.iter().find(|(b, _)| *b == between).map(|(_, d)| *d)
        })
        .collect();
    for (l, c) in labels.iter().zip(&clocks) {
        if c.is_none() {
            warnings.push(Warning {
                label: l.clone(),
                file: pinned.source.clone(),
                record: None,
                byte_offset: None,
                problem: format!("--clocks-from {}: the report has no capture labelled {l}", pinned.source),
                consequence: "its clock is estimated from the flows read".into(),
            });
        }
    }
    (Pinned { clocks, delays }, warnings)
}

/// The time a shard sorts a request by: its flow's first packet at capture 1,
/// on that capture's own clock.
pub fn request_start(f: &Flow) -> i64 {
    f.first_ns
}

/// Whether a flow read from `from` on may have begun in a skipped earlier
/// file: a TCP flow without its handshake, a SYN that may retransmit an earlier
/// one, or a datagram exchange that was not silent long enough before it.
fn may_continue_earlier(f: &Flow, from: i64, udp_idle_ns: i64) -> bool {
    match f.proto {
        FlowProto::Tcp => {
            f.orientation != Orientation::Syn || f.first_ns < from.saturating_add(ATTEMPT_REACH_NS)
        }
        _ => f.first_ns < from.saturating_add(udp_idle_ns),
    }
}

/// Whether a flow read until `until` may go on in a skipped later file: a TCP
/// connection neither closed both ways nor reset, heard from within the reach
/// of a SYN retransmission (130 s) before the cut, or a datagram exchange whose
/// silence before the cut was shorter than `--udp-idle`. (A TCP connection
/// silent for longer, then resuming after the cut, is not detected.)
pub fn may_continue_later(f: &Flow, until: i64, udp_idle_ns: i64) -> bool {
    match f.proto {
        FlowProto::Tcp => {
            let closed = (f.client_fin_ns.is_some() && f.server_fin_ns.is_some())
                || f.rst_to_client.is_some()
                || f.rst_to_server.is_some();
            !closed && f.last_ns.saturating_add(ATTEMPT_REACH_NS) > until
        }
        _ => f.last_ns.saturating_add(udp_idle_ns) > until,
    }
}

/// SYN retransmissions of one connection reach this far (Linux: 127 s).
const ATTEMPT_REACH_NS: i64 = 130_000_000_000;

/// Warnings for the reported requests of a shard that hold a flow a skipped
/// file may have cut (`cuts`: per point, where its reading was cut): one per
/// point and side (begun in an earlier skipped file, going on in a later one).
pub fn edge_warnings(
    shard: &Shard,
    labels: &[String],
    cuts: &[Cut],
    flows: &[Flows],
    correlation: &Correlation,
    udp_idle_ns: i64,
    stream_hold_ns: Option<i64>,
) -> Vec<Warning> {
    let Some(first) = flows.first() else { return Vec::new() };
    // Per point: request times at risk from the early cut, from the late cut.
    let mut at_risk: Vec<[Vec<i64>; 2]> = vec![[Vec::new(), Vec::new()]; labels.len()];
    for chain in &correlation.chains {
        let Some(f0) = chain.hops.first().copied().flatten() else { continue };
        let t = request_start(&first.flows[f0]);
        if t < shard.start_ns || t >= shard.end_ns {
            continue;
        }
        for (p, hop) in chain.hops.iter().enumerate() {
            let (Some(i), Some(cut)) = (hop, cuts.get(p)) else { continue };
            let f = &flows[p].flows[*i];
            if cut.read_from.is_some_and(|from| may_continue_earlier(f, from, udp_idle_ns)) {
                at_risk[p][0].push(t);
            }
            if cut.read_until.is_some_and(|until| may_continue_later(f, until, udp_idle_ns)) {
                at_risk[p][1].push(t);
            }
        }
    }
    let mut out = Vec::new();
    for (label, sides) in labels.iter().zip(at_risk) {
        for (side, ts) in sides.iter().enumerate().filter(|(_, ts)| !ts.is_empty()) {
            let (how, consequence) = match (side, stream_hold_ns) {
                (0, None) => (
                    "may have begun before what the shard read (in an earlier file it skipped, or \
                     before its window in this file: a connection without its handshake, a SYN or \
                     datagram soon after the cut)"
                        .to_string(),
                    "its earlier packets are not counted; widen --shard-margin to read them",
                ),
                (_, None) => (
                    "may go on in a later file the shard skipped (a connection open across the cut)"
                        .to_string(),
                    "its later packets are not counted; widen --shard-margin to read them",
                ),
                (0, Some(_)) => (
                    "may have begun before the stream's window read this capture (a connection \
                     without its handshake, a SYN or datagram soon after the window's reach began)"
                        .to_string(),
                    "its earlier packets are not counted",
                ),
                (_, Some(hold)) => (
                    format!(
                        "was still open when the stream stopped waiting for it ({} s past its window \
                         and margin, --stream-hold)",
                        hold as f64 / 1e9
                    ),
                    "its later packets are not counted, and its outcome is as of then; a longer \
                     --stream-hold waits for them (holding the windows after it in memory meanwhile)",
                ),
            };
            out.push(Warning {
                label: label.clone(),
                file: String::new(),
                record: None,
                byte_offset: None,
                problem: format!(
                    "{} requests of this {} (the first at {}) hold a flow here that {how}",
                    ts.len(),
                    if stream_hold_ns.is_some() { "stream's window" } else { "shard" },
                    crate::time::rfc3339(ts[0])
                ),
                consequence: consequence.into(),
            });
        }
    }
    out
}

/// Warnings where a point's pinned clock differs from what this run's flows
/// alone estimate by more than the time gate's default tolerance.
pub fn clock_warnings(labels: &[String], correlation: &Correlation, source: &str) -> Vec<Warning> {
    let Some(estimated) = &correlation.estimated else { return Vec::new() };
    let mut out = Vec::new();
    for (j, ((label, used), est)) in labels.iter().zip(&correlation.clocks).zip(estimated).enumerate().skip(1)
    {
        // An estimate is relative to the points before it: where one of them
        // had no estimate of its own (it read as capture 1's clock), this one is
        // off by that point's unknown offset, and says nothing of the pin. (A
        // stream's last windows can hold only the tail of capture 1.)
        let based = estimated[..j].iter().all(|e| e.method != crate::correlate::OffsetMethodKind::None);
        let allowed = used.spread_ns.max(0).saturating_mul(5).saturating_add(1_000_000);
        if based
            && est.samples > 0
            && (est.offset_ns.saturating_sub(used.offset_ns)).saturating_abs() > allowed
        {
            out.push(Warning {
                label: label.clone(),
                file: source.to_string(),
                record: None,
                byte_offset: None,
                problem: format!(
                    "the flows read estimate this capture's clock offset at {:.3} ms ({} samples), \
                     --clocks-from {source} gives {:.3} ms",
                    est.offset_ns as f64 / 1e6,
                    est.samples,
                    used.offset_ns as f64 / 1e6
                ),
                consequence: "the given offset is used".into(),
            });
        }
    }
    out
}

/// The warning for a shard whose clocks were estimated from files it did not
/// all read (some were skipped): another shard may estimate them otherwise.
pub fn estimated_clock_warning(label: &str) -> Warning {
    Warning {
        label: label.to_string(),
        file: String::new(),
        record: None,
        byte_offset: None,
        problem: "this shard skipped files and estimated the clocks from the files it read; another \
                  shard, or the whole run, may estimate them slightly otherwise"
            .into(),
        consequence: "give every shard --clocks-from REPORT (one run's JSON report) for shards that \
                      union exactly to that run"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::Ns;

    #[test]
    fn a_long_list_of_skipped_files_is_named_by_its_ends_and_a_count() {
        let files = |n: usize| (0..n).map(|i| format!("d-{i:04}.pcap")).collect::<Vec<_>>();
        assert_eq!(some_files(&files(2)), "d-0000.pcap, d-0001.pcap");
        assert_eq!(some_files(&files(6)), files(6).join(", "));
        assert_eq!(
            some_files(&files(288)),
            "d-0000.pcap, d-0001.pcap, d-0002.pcap, … 283 more …, d-0286.pcap, d-0287.pcap"
        );
        assert_eq!(
            some_files(&files(7)),
            "d-0000.pcap, d-0001.pcap, d-0002.pcap, … 2 more …, d-0005.pcap, d-0006.pcap"
        );
    }

    #[test]
    fn a_file_is_skipped_only_when_it_ends_before_the_window_or_starts_after_it() {
        let firsts = [Some(0), Some(100), Some(200), Some(300)];
        // Window [150, 250): file 0 ended before 100 < 150; file 3 starts at 300 ≥ 250.
        let (read, skipped, cut) = plan_files(&firsts, (150, 250));
        assert_eq!((read, skipped), (vec![1, 2], vec![0, 3]));
        assert_eq!(cut, Cut { read_from: Some(100), read_until: Some(300) });
        // A window starting exactly where a file starts still reads the file before
        // only when that one may reach into it: file 1 starts at 100 ≤ 100, so file 0 ended.
        let (read, _, cut) = plan_files(&firsts, (100, 101));
        assert_eq!(read, vec![1]);
        assert_eq!(cut, Cut { read_from: Some(100), read_until: Some(200) });
        // The last file is never skipped as early; an all-late point reads its first file.
        assert_eq!(plan_files(&firsts, (1_000, 2_000)).0, vec![3]);
        assert_eq!(plan_files(&firsts, (-100, -50)).0, vec![0]);
        // A file whose first packet could not be peeked (read last) is read.
        let (read, _, _) = plan_files(&[Some(0), Some(100), None], (150, 300));
        assert_eq!(read, vec![1, 2]);
        // Nothing skipped: no cut.
        assert_eq!(plan_files(&firsts, (0, 1_000)).2, Cut::default());
    }

    const S: i64 = 1_000_000_000;
    const IDLE: i64 = 10 * S;

    fn tcp(first: i64, last: i64) -> Flow {
        let mut f = Flow::test_tcp("198.18.0.1:40000", "198.19.0.1:80", first, 7);
        f.last_ns = last;
        f
    }

    /// One point of six files `f0`..`f5`, given in reverse, their first
    /// packets at 0, 50, 95, 150, 250 and 300 s; with a shard [100 s, 200 s)
    /// and a 10 s margin (its raw window: [90 s, 210 s)). Gives the run, the
    /// files in reading order (`f0` first) and their first packet times.
    fn six_files(shard: bool) -> (Config, Vec<usize>, Vec<Option<i64>>) {
        let spec = |i: usize| crate::read::CaptureSpec {
            label: "a".into(),
            source: crate::read::Source::Path(format!("f{i}").into()),
        };
        let config = Config {
            captures: (0..6).rev().map(spec).collect(),
            shard: shard.then_some(Shard { start_ns: 100 * S, end_ns: 200 * S, margin_ns: 10 * S }),
            ..Config::default()
        };
        (config, vec![5, 4, 3, 2, 1, 0], [0, 50, 95, 150, 250, 300].map(|t| Some(t * S)).to_vec())
    }

    /// The names of the files a plan gives, `flows` read after each.
    fn files_of(plan: &mut ReadPlan<'_>, config: &Config, flows: &[Flow]) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(f) = plan.next_file() {
            out.push(config.captures[f].display_name());
            plan.after_file(flows);
        }
        out
    }

    #[test]
    fn without_a_shard_a_point_reads_every_file_in_order_and_is_not_cut() {
        let (config, all, firsts) = six_files(false);
        let mut plan = ReadPlan::new(&config, 0, "a", all, firsts);
        assert_eq!(files_of(&mut plan, &config, &[]), ["f0", "f1", "f2", "f3", "f4", "f5"]);
        assert_eq!(plan.files_read(), [5, 4, 3, 2, 1, 0]);
        let (cut, no_packet, skipped) = plan.finish(&config.captures, "a");
        assert_eq!((cut, no_packet, skipped), (Cut::default(), None, None));
    }

    #[test]
    fn a_shard_plans_its_files_before_reading_and_names_those_it_skipped() {
        let (config, all, firsts) = six_files(true);
        let mut plan = ReadPlan::new(&config, 0, "a", all, firsts);
        // f0 ended before f1 began (50 s < 90 s); f4 and f5 begin after 210 s.
        assert_eq!(files_of(&mut plan, &config, &[]), ["f1", "f2", "f3"]);
        let (cut, no_packet, skipped) = plan.finish(&config.captures, "a");
        assert_eq!(cut, Cut { read_from: Some(50 * S), read_until: Some(250 * S) });
        let skipped = skipped.expect("the files not read are named");
        assert_eq!(skipped.file, "f0, f4, f5");
        assert!(
            skipped.problem.contains(": 3 of this point's files lie wholly outside"),
            "{}",
            skipped.problem
        );
        assert!(no_packet.is_some(), "capture 1 read no packet in the shard");
    }

    #[test]
    fn a_late_file_is_read_while_a_flow_begun_in_the_shard_may_go_on_in_it() {
        let (config, all, firsts) = six_files(true);
        // Begun in the shard, heard at 150 s: may go on past 250 s (f4), not past 300 s (f5).
        let open = [tcp(150 * S, 150 * S)];
        let mut plan = ReadPlan::new(&config, 0, "a", all.clone(), firsts.clone());
        assert_eq!(files_of(&mut plan, &config, &open), ["f1", "f2", "f3", "f4"]);
        let (cut, _, skipped) = plan.finish(&config.captures, "a");
        assert_eq!(cut, Cut { read_from: Some(50 * S), read_until: Some(300 * S) });
        assert_eq!(skipped.unwrap().file, "f0, f5");
        // Begun before the shard (capture 1's own window): no reason to read on.
        let before = [tcp(95 * S, 240 * S)];
        let mut plan = ReadPlan::new(&config, 0, "a", all.clone(), firsts.clone());
        assert_eq!(files_of(&mut plan, &config, &before), ["f1", "f2", "f3"]);
        // Another point, its clock estimated: its raw window is widened by
        // --max-offset (60 s) to [30 s, 270 s), f0 to f4 are planned, and its
        // flows count from that window on: that one is in it and reads f5 too.
        let mut plan = ReadPlan::new(&config, 1, "a", all.clone(), firsts.clone());
        assert_eq!(files_of(&mut plan, &config, &[]), ["f0", "f1", "f2", "f3", "f4"]);
        let mut plan = ReadPlan::new(&config, 1, "a", all, firsts);
        assert_eq!(files_of(&mut plan, &config, &before), ["f0", "f1", "f2", "f3", "f4", "f5"]);
        let (cut, no_packet, skipped) = plan.finish(&config.captures, "a");
        assert_eq!((cut, skipped), (Cut::default(), None));
        assert!(no_packet.is_none(), "said of capture 1 only");
    }

    #[test]
    fn a_shard_reads_a_file_from_its_raw_window_on_and_says_when_it_cut_records() {
        let (config, all, firsts) = six_files(true);
        let info = crate::read::CaptureInfo {
            format: crate::read::Format::Pcap,
            byte_order: crate::read::ByteOrder::Little,
            gzip: false,
            interfaces: Vec::new(),
            packets: 4,
            bytes: 0,
            warnings: Vec::new(),
        };
        let damaged = crate::decode::DecodeError::NotIp { ethertype: 0x0806 };
        let read = |plan: &mut ReadPlan<'_>, times: &[i64]| {
            let mut b = Builder::new(&config);
            plan.read(&mut b, |sink| {
                for (k, &t) in times.iter().enumerate() {
                    let rec = Ingested {
                        ts_ns: t * S,
                        record: k as u64 + 1,
                        byte_offset: 0,
                        packet: Err(&damaged),
                        payload: &[],
                    };
                    sink.add(&rec);
                }
                Ok(info.clone())
            })
            .unwrap();
            b.finish("a", "f", info.clone()).undecodable
        };
        let mut plan = ReadPlan::new(&config, 0, "a", all.clone(), firsts.clone());
        plan.next_file();
        assert_eq!(read(&mut plan, &[80, 150, 205, 230]), 3, "the record before 90 s is dropped");
        let (cut, no_packet, _) = plan.finish(&config.captures, "a");
        assert_eq!(cut.read_from, Some(90 * S), "cut at the window, after f1's start");
        assert!(no_packet.is_none(), "150 s lies in the shard");
        // Nothing dropped: the cut is the files'; nothing in the shard: said so.
        let mut plan = ReadPlan::new(&config, 0, "a", all, firsts);
        plan.next_file();
        assert_eq!(read(&mut plan, &[95, 205]), 2);
        let (cut, no_packet, _) = plan.finish(&config.captures, "a");
        assert_eq!(cut.read_from, Some(50 * S));
        let w = no_packet.expect("no packet of capture 1 in the shard");
        assert!(w.problem.contains("its packets read run from"), "{}", w.problem);
    }

    #[test]
    fn a_flow_may_go_on_past_a_cut_while_open_and_recently_heard() {
        let until = 1_000 * S;
        // Open TCP heard within 130 s of the cut: may go on; heard before: not.
        assert!(may_continue_later(&tcp(0, until - 129 * S), until, IDLE));
        assert!(!may_continue_later(&tcp(0, until - 131 * S), until, IDLE));
        // Closed both ways, or reset: never.
        let mut closed = tcp(0, until - S);
        (closed.client_fin_ns, closed.server_fin_ns) = (Ns::at(until - 2 * S), Ns::at(until - S));
        assert!(!may_continue_later(&closed, until, IDLE));
        closed.server_fin_ns = Ns::NONE;
        assert!(may_continue_later(&closed, until, IDLE), "half closed");
        closed.rst_to_client = Some(Box::new(crate::flows::TcpEvent {
            ts_ns: until - S,
            to_client: true,
            sender: "198.19.0.1".parse().unwrap(),
            ttl: 64,
        }));
        assert!(!may_continue_later(&closed, until, IDLE));
        // A datagram exchange goes on only within --udp-idle.
        let mut udp = tcp(0, until - 9 * S);
        udp.proto = FlowProto::Udp;
        assert!(may_continue_later(&udp, until, IDLE));
        udp.last_ns = until - 11 * S;
        assert!(!may_continue_later(&udp, until, IDLE));
    }

    #[test]
    fn a_flow_may_have_begun_before_a_cut_without_a_handshake_or_soon_after_it() {
        let from = 1_000 * S;
        // A connection seen from its SYN well after the cut began after it.
        assert!(!may_continue_earlier(&tcp(from + 131 * S, from + 132 * S), from, IDLE));
        // A SYN soon after the cut may retransmit one sent before it.
        assert!(may_continue_earlier(&tcp(from + 129 * S, from + 130 * S), from, IDLE));
        // Without its handshake: whenever.
        let mut mid = tcp(from + 1_000 * S, from + 1_001 * S);
        mid.orientation = Orientation::Midstream;
        assert!(may_continue_earlier(&mid, from, IDLE));
        let mut udp = tcp(from + 9 * S, from + 9 * S);
        udp.proto = FlowProto::Udp;
        assert!(may_continue_earlier(&udp, from, IDLE));
        udp.first_ns = from + 11 * S;
        assert!(!may_continue_earlier(&udp, from, IDLE));
    }

    #[test]
    fn a_pinned_clock_is_questioned_only_by_an_estimate_whose_points_before_it_were_estimated() {
        use crate::correlate::{ClockEstimate, OffsetMethodKind as M};
        let est = |offset_ns, samples, method| ClockEstimate { offset_ns, spread_ns: 0, samples, method };
        let labels: Vec<String> = ["decap", "egress", "backend"].map(String::from).into();
        let pinned = vec![
            est(0, 0, M::Reference),
            est(2_750 * 1_000_000, 40, M::Manual),
            est(-1_300 * 1_000_000, 40, M::Manual),
        ];
        let warned = |estimated: Vec<ClockEstimate>| -> Vec<String> {
            let correlation = Correlation {
                clocks: pinned.clone(),
                delays_ns: vec![None, None],
                chains: Vec::new(),
                unmatched: vec![Vec::new(); 3],
                estimated: Some(estimated),
            };
            clock_warnings(&labels, &correlation, "the pins").into_iter().map(|w| w.label).collect()
        };
        // Egress estimated nothing (it reads as capture 1's clock): backend's
        // estimate, made against egress, is off by egress's offset. No warning.
        let r = est(0, 0, M::Reference);
        assert!(warned(vec![r, est(0, 0, M::None), est(-4_050 * 1_000_000, 62, M::RequestReply)]).is_empty());
        // Estimated both: backend's disagreement is real.
        let e = est(2_750 * 1_000_000, 50, M::RequestReply);
        assert_eq!(warned(vec![r, e, est(-4_050 * 1_000_000, 62, M::RequestReply)]), ["backend"]);
        // Within the tolerance, or no samples: no warning.
        assert!(warned(vec![r, e, est(-1_300 * 1_000_000 + 999_000, 62, M::RequestReply)]).is_empty());
        assert!(warned(vec![r, e, est(0, 0, M::None)]).is_empty());
    }
}
