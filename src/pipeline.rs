//! analyze(): one rayon task per capture (read → decode → flows), then correlate →
//! verdict. The only place that wires the stages together. `analyze_bytes` runs
//! the same stages on captures held in memory (fuzzing, tests).
//! `ingest` is the one ingest path: sequential, chunked and in-memory reads all
//! decode each record and hand it, in file order, to a `Sink` (the flow builder
//! here, `inspect`'s tally there). Takes settings and captures; gives findings.
//! Never formats a report.

use crate::config::{CaptureSpec, Config, ReadConfig};
use crate::correlate;
use crate::decode::{self, DecodeError, Packet};
use crate::flows::points::{self, PointKey};
use crate::flows::{Flow, FlowTable, Flows};
use crate::ladder::{self, Ladder, LadderCapture, LadderInterface};
use crate::read::{self, CaptureInfo, InterfaceInfo, LinkType, Progress, RawRecord, ReadError};
use crate::verdict::{self, CaptureMeta, Findings, VerdictOptions};
use crate::warning::Warning;
use rayon::prelude::*;

/// One capture after the per-capture stages.
#[derive(Debug)]
pub struct CaptureResult {
    pub info: CaptureInfo,
    /// Its observation points in path order: one (key None) unless the capture
    /// was split (see `flows::points`), each with its flows and decoded packets.
    pub points: Vec<(Option<PointKey>, Flows, u64)>,
    /// Per point (in `points`' order), the overlays peeled off its packets.
    pub overlays: Vec<OverlayCounts>,
    /// Records that held no decodable IP packet (ARP, unknown link types, damage).
    pub undecodable: u64,
    /// Problems found while reading and building flows.
    pub warnings: Vec<Warning>,
    /// With a shard: where skipped files cut this capture's reading.
    pub cut: crate::shard::Cut,
}

/// Overlays peeled in one point: (overlay, packets), by kind then id.
pub type OverlayCounts = Vec<(crate::decode::Overlay, u64)>;

/// A capture's decoded packets per interface and direction, and the overlays
/// peeled off them: what gives each of its points its packets, also for points
/// known only later (a stream's, from its windows' flows).
#[derive(Clone, Debug, Default)]
pub(crate) struct PointCounts {
    /// (interface in `flows::points`' numbering, incoming, outgoing).
    counts: Vec<(u32, u64, u64)>,
    /// Peeled packets per (interface, outgoing, overlay).
    overlays: Vec<(u32, bool, crate::decode::Overlay, u64)>,
}

impl PointCounts {
    fn count(&mut self, p: &Packet) {
        let interface = crate::flows::interface_of(p);
        let outgoing = p.sll_packet_type == Some(4);
        let i = match self.counts.iter().position(|c| c.0 == interface) {
            Some(i) => i,
            None if self.counts.len() < COUNTED_INTERFACES => {
                self.counts.push((interface, 0, 0));
                self.counts.len() - 1
            }
            None => return,
        };
        let c = &mut self.counts[i];
        if outgoing {
            c.2 += 1;
        } else {
            c.1 += 1;
        }
        if let Some(o) = p.overlay {
            match self.overlays.iter().position(|e| (e.0, e.1, e.2) == (interface, outgoing, o)) {
                Some(i) => self.overlays[i].3 += 1,
                None if self.overlays.len() < COUNTED_INTERFACES => {
                    self.overlays.push((interface, outgoing, o, 1))
                }
                None => {}
            }
        }
    }

    /// The overlays peeled in one point (None: the whole capture).
    fn overlays_of(
        overlays: &[(u32, bool, crate::decode::Overlay, u64)],
        key: Option<PointKey>,
    ) -> OverlayCounts {
        let mut out: OverlayCounts = Vec::new();
        for &(interface, outgoing, o, n) in overlays {
            let mine = match key {
                None => true,
                Some(PointKey::Interface(k)) => k == interface,
                Some(PointKey::Direction { outgoing: k }) => k == outgoing,
            };
            if !mine {
                continue;
            }
            match out.iter_mut().find(|e| e.0 == o) {
                Some(e) => e.1 += n,
                None => out.push((o, n)),
            }
        }
        out.sort();
        out
    }

    /// Decoded packets of one point.
    fn packets(counts: &[(u32, u64, u64)], key: PointKey) -> u64 {
        (counts.iter())
            .map(|&(i, inc, out)| match key {
                PointKey::Interface(k) => {
                    if i == k {
                        inc + out
                    } else {
                        0
                    }
                }
                PointKey::Direction { outgoing } => {
                    if outgoing {
                        out
                    } else {
                        inc
                    }
                }
            })
            .sum()
    }

    /// The packets and overlays of each of a capture's points (`keys`, in
    /// path order: one None for an unsplit capture), of `records` in all:
    /// records without an IP packet (ARP, damage) count towards the first point.
    pub(crate) fn of(&self, keys: &[Option<PointKey>], records: u64) -> (Vec<u64>, Vec<OverlayCounts>) {
        let mut packets: Vec<u64> =
            keys.iter().map(|k| k.map_or(records, |k| PointCounts::packets(&self.counts, k))).collect();
        let counted: u64 = packets.iter().sum();
        if let Some(first) = packets.first_mut() {
            *first += records.saturating_sub(counted);
        }
        let overlays = keys.iter().map(|&k| PointCounts::overlays_of(&self.overlays, k)).collect();
        (packets, overlays)
    }
}

/// Records whose IP header is cut short or malformed (zero-length records too):
/// how many, and the first one's number, offset and problem.
#[derive(Default)]
struct Damage {
    count: u64,
    first: Option<(u64, u64, DecodeError)>,
}

impl Damage {
    fn note(&mut self, rec: &Ingested<'_>, e: &DecodeError) {
        if matches!(e, DecodeError::Truncated { .. } | DecodeError::Malformed { .. }) {
            self.count += 1;
            self.first.get_or_insert((rec.record, rec.byte_offset, e.clone()));
        }
    }
}

/// One record as the per-capture stages see it, in file order: where it is and
/// what it decoded to.
pub struct Ingested<'a> {
    pub ts_ns: i64,
    pub record: u64,
    pub byte_offset: u64,
    pub packet: Result<&'a Packet, &'a DecodeError>,
    /// The packet's transport payload (at least `FlowConfig::payload_limit` bytes).
    pub payload: &'a [u8],
}

/// What is built from one capture's records, in file order.
pub trait Sink {
    fn add(&mut self, rec: &Ingested<'_>);
}

/// [`ingest`] of a live input (`--follow`): read as it comes, never split.
pub fn ingest_live(
    spec: &CaptureSpec,
    index: usize,
    progress: &dyn Progress,
    live: read::Live<'_>,
    sink: &mut dyn Sink,
) -> Result<(CaptureInfo, read::LiveEnd), ReadError> {
    read::read_live(spec, index, progress, live, &mut |rec| decode_into(sink, rec))
}

/// Decodes a record and hands it to `sink`.
fn decode_into(sink: &mut dyn Sink, rec: &RawRecord<'_>) {
    let decoded = decode::decode(rec);
    let payload = match &decoded {
        Ok(p) => p.payload(rec.data),
        Err(_) => &[],
    };
    sink.add(&Ingested {
        ts_ns: rec.ts_ns,
        record: rec.record,
        byte_offset: rec.byte_offset,
        packet: decoded.as_ref(),
        payload,
    });
}

/// Most interfaces whose decoded packets are counted one by one (the rest
/// count towards none: a hostile SLL2 capture may name any index).
const COUNTED_INTERFACES: usize = 64;

/// The flow table of one capture being built, with its decode statistics.
pub(crate) struct Builder {
    table: FlowTable,
    undecodable: u64,
    damage: Damage,
    /// Decoded and peeled packets per interface and direction, for the points.
    counts: PointCounts,
    /// Damaged overlay headers and encrypted tunnels of the file being read.
    tunnels: crate::tunnels::TunnelTally,
    /// Earliest and latest record time of the file being read.
    span: Option<(i64, i64)>,
    /// Warnings of the files read so far, in reading order.
    warnings: Vec<Warning>,
}

impl Builder {
    pub(crate) fn new(config: &Config) -> Builder {
        Builder {
            table: FlowTable::new(&config.flows),
            undecodable: 0,
            damage: Damage::default(),
            counts: PointCounts::default(),
            tunnels: Default::default(),
            span: None,
            warnings: Vec::new(),
        }
    }

    /// Ends one file of the point: keeps its read warnings and its damage
    /// warning (naming that file), and gives its earliest and latest record time.
    pub(crate) fn end_file(
        &mut self,
        label: &str,
        file: &str,
        read_warnings: &[Warning],
    ) -> Option<(i64, i64)> {
        self.warnings.extend_from_slice(read_warnings);
        let damage = std::mem::take(&mut self.damage);
        if let Some((record, byte_offset, e)) = damage.first {
            let damaged = damage.count;
            self.warnings.push(Warning {
                label: label.to_string(),
                file: file.to_string(),
                record: Some(record),
                byte_offset: Some(byte_offset),
                problem: if damaged == 1 {
                    format!("1 record holds no usable IP header: {e}")
                } else {
                    format!("{damaged} records hold no usable IP header (this is the first: {e})")
                },
                consequence: format!("counted and skipped {}", if damaged == 1 { "it" } else { "them" }),
            });
        }
        // Overlay damage and encrypted tunnels, per file like the damage above.
        self.warnings.extend(std::mem::take(&mut self.tunnels).warnings(label, file));
        self.warnings.extend(fragment_warnings(label, file, self.table.take_frag_notes()));
        self.span.take()
    }

    /// The point's result; `file` names its files, `info` describes them
    /// (each file ended with [`Builder::end_file`]).
    pub(crate) fn finish(self, label: &str, file: &str, info: CaptureInfo) -> CaptureResult {
        self.finish_as(label, file, info, None).0
    }

    /// [`Builder::finish`], split into the points `keys` when given (a
    /// stream's first window's: `[None]`, one point, copies folded), not as
    /// its own flows would split it; gives how many flows were of none of them.
    pub(crate) fn finish_as(
        self,
        label: &str,
        file: &str,
        info: CaptureInfo,
        keys: Option<&[Option<PointKey>]>,
    ) -> (CaptureResult, u64) {
        let Builder { table, undecodable, counts, mut warnings, .. } = self;
        let one = |mut flows: Flows| {
            flows.fold_copies();
            vec![(None, flows)]
        };
        let given: Option<Vec<PointKey>> = keys.map(|k| k.iter().flatten().copied().collect());
        let mut elsewhere = 0;
        let points: Vec<(Option<PointKey>, Flows)> = match given {
            Some(keys) if keys.is_empty() => one(table.finish_unfolded()),
            Some(keys) => {
                let (points, other) = points::split_as(table.finish_unfolded(), &keys);
                elsewhere = other;
                points.into_iter().map(|p| (Some(p.key), p.flows)).collect()
            }
            None => match points::split(table.finish_unfolded()) {
                Ok(points) => points.into_iter().map(|p| (Some(p.key), p.flows)).collect(),
                Err(flows) => one(flows),
            },
        };
        let keys: Vec<Option<PointKey>> = points.iter().map(|p| p.0).collect();
        let (packets, overlays) = counts.of(&keys, info.packets);
        let points: Vec<(Option<PointKey>, Flows, u64)> =
            points.into_iter().zip(packets).map(|((k, f), n)| (k, f, n)).collect();
        let duplicates: u64 = points.iter().map(|p| p.1.stats.duplicate_flows).sum();
        warnings.extend(duplicate_flows_warning(label, file, duplicates));
        let answered = Elsewhere::of(points.iter().flat_map(|p| &p.1.flows));
        warnings.extend(answered.warning(label, file));
        (CaptureResult { info, points, overlays, undecodable, warnings, cut: Default::default() }, elsewhere)
    }

    /// The packet and overlay counts of the files read so far.
    pub(crate) fn counts(&self) -> &PointCounts {
        &self.counts
    }
}

impl Builder {
    /// What one record adds besides flows: its time to the file's span, its
    /// packet to the counts and tunnels, or its damage.
    pub(crate) fn tally(&mut self, rec: &Ingested<'_>) {
        let (lo, hi) = self.span.get_or_insert((rec.ts_ns, rec.ts_ns));
        *lo = (*lo).min(rec.ts_ns);
        *hi = (*hi).max(rec.ts_ns);
        match rec.packet {
            Ok(p) => {
                self.counts.count(p);
                self.tunnels.note(p, rec.record, rec.byte_offset);
            }
            Err(e) => {
                self.undecodable += 1;
                self.damage.note(rec, e);
            }
        }
    }

    /// What one record adds to the flows.
    pub(crate) fn add_flow(&mut self, rec: &Ingested<'_>) {
        if let Ok(p) = rec.packet {
            self.table.insert(p, rec.payload)
        }
    }

    /// The flow table being built.
    pub(crate) fn table(&mut self) -> &mut FlowTable {
        &mut self.table
    }

    /// The warnings of the files read so far.
    pub(crate) fn warnings_mut(&mut self) -> &mut Vec<Warning> {
        &mut self.warnings
    }
}

impl Sink for Builder {
    fn add(&mut self, rec: &Ingested<'_>) {
        self.tally(rec);
        self.add_flow(rec);
    }
}

/// The reassembly's problems in one file: malformed or overlapping fragments
/// (their datagram ends incomplete) and datagrams ended early at the cap.
fn fragment_warnings(label: &str, file: &str, notes: crate::flows::reassembly::FragNotes) -> Vec<Warning> {
    let mut out = Vec::new();
    let warning = |record, problem, consequence: &str| Warning {
        label: label.to_string(),
        file: file.to_string(),
        record: Some(record),
        byte_offset: None,
        problem,
        consequence: consequence.to_string(),
    };
    if let Some((record, fault)) = notes.first_malformed {
        let problem = match notes.malformed {
            1 => format!("1 IP fragment is malformed: {fault}"),
            n => format!("{n} IP fragments are malformed or overlap (this is the first: {fault})"),
        };
        out.push(warning(
            record,
            problem,
            "counted; their datagrams count as incomplete, as a receiver drops them",
        ));
    }
    if let Some(record) = notes.first_evicted {
        let n = notes.evicted;
        let cap = crate::flows::reassembly::Limits::default().max_datagrams;
        let problem = format!(
            "{n} fragmented datagram{} ended before {} fragments came: more than {cap} were in progress at once",
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" },
        );
        out.push(warning(
            record,
            problem,
            "counted as incomplete (a fragment flood, or a capture of many lost fragments)",
        ));
    }
    out
}

/// Records of one chunk, decoded in parallel with other chunks; payloads cut to
/// `payload_limit` bytes, kept in one arena.
#[derive(Default)]
struct DecodedChunk {
    records: Vec<DecodedRecord>,
    payloads: Vec<u8>,
}

/// One record of a chunk: where it is, what it decoded to, its payload in the arena.
struct DecodedRecord {
    ts_ns: i64,
    record: u64,
    byte_offset: u64,
    decoded: Result<Packet, DecodeError>,
    payload_at: u32,
    payload_len: u32,
}

/// The one ingest path: reads, decodes and hands every record of one capture
/// to `sink` in file order. A large uncompressed file (when there are more
/// threads than `captures`, or `read.force_chunks`) is split into chunks at
/// record boundaries; a wave of chunks (one per thread) is framed and decoded
/// in parallel, then handed over in file order — so the sink sees exactly what
/// a sequential read gives it, whatever the thread count and chunk size, and
/// memory stays bounded by the wave. Payloads of chunked reads are cut to
/// `payload_limit` bytes (all a flow stage reads).
pub fn ingest(
    spec: &CaptureSpec,
    index: usize,
    read_config: &ReadConfig,
    captures: usize,
    payload_limit: usize,
    progress: &dyn Progress,
    sink: &mut dyn Sink,
) -> Result<CaptureInfo, ReadError> {
    let split = read_config.force_chunks
        || (rayon::current_num_threads() > captures
            && file_len(spec).is_some_and(|len| len > read_config.chunk_bytes));
    if !(split && read::is_splittable(spec)) {
        return read::read_capture(spec, index, progress, &mut |rec| decode_into(sink, rec));
    }
    let plan = read::plan_chunks(spec, read_config.chunk_bytes)?;
    let total: u64 = plan.chunks.iter().map(|c| c.end - c.start).sum();
    progress.start(index, &spec.label, total);
    let wave = rayon::current_num_threads().max(1);
    for group in plan.chunks.chunks(wave) {
        let decoded: Vec<Result<DecodedChunk, ReadError>> = group
            .par_iter()
            .map(|chunk| {
                let mut d = DecodedChunk::default();
                read::read_chunk(spec, index, chunk, progress, &mut |rec| {
                    let decoded = decode::decode(rec);
                    let payload = match &decoded {
                        Ok(p) => p.payload(rec.data),
                        Err(_) => &[],
                    };
                    let payload = &payload[..payload.len().min(payload_limit)];
                    let at = d.payloads.len() as u32;
                    d.payloads.extend_from_slice(payload);
                    d.records.push(DecodedRecord {
                        ts_ns: rec.ts_ns,
                        record: rec.record,
                        byte_offset: rec.byte_offset,
                        decoded,
                        payload_at: at,
                        payload_len: payload.len() as u32,
                    });
                })?;
                Ok(d)
            })
            .collect();
        for d in decoded {
            let d = d?;
            for r in &d.records {
                let (at, len) = (r.payload_at as usize, r.payload_len as usize);
                sink.add(&Ingested {
                    ts_ns: r.ts_ns,
                    record: r.record,
                    byte_offset: r.byte_offset,
                    packet: r.decoded.as_ref(),
                    payload: &d.payloads[at..at + len],
                });
            }
        }
    }
    progress.finish(index);
    Ok(plan.info)
}

/// The ingest path for a capture held in memory (`label` names it).
pub fn ingest_bytes(label: &str, bytes: &[u8], sink: &mut dyn Sink) -> Result<CaptureInfo, ReadError> {
    read::read_bytes(label, bytes, &mut |rec| decode_into(sink, rec))
}

/// Reads, decodes and builds the flows of one observation point from its
/// files (`files`: indices into `config.captures`, one label; `points`: how
/// many points the run has). Several files (tcpdump -C/-G rotation) are read
/// one after the other into one flow table, in the order of their first
/// packet's time, so a connection alive across a rotation is one flow; files
/// that overlap in time get one warning. Gives the result and the point's
/// files in reading order (comma-separated).
fn read_point(
    config: &Config,
    capture: usize,
    files: &[usize],
    points: usize,
    progress: &dyn Progress,
) -> Result<(CaptureResult, String), ReadError> {
    let specs = &config.captures;
    let (mut order, firsts) = reading_order(specs, files);
    let label = specs[order[0]].label.as_str();
    // A shard reads only the files that reach its window (with the margin),
    // and later ones while a flow begun in the window may go on in them.
    let mut cut = crate::shard::Cut::default();
    let mut skipped: Vec<usize> = Vec::new();
    let mut late: Vec<usize> = Vec::new();
    let mut began = (i64::MIN, i64::MAX);
    let all = order.clone();
    // A shard's records outside its window (see `Windowed`), on this point's clock.
    let window = config.shard.as_ref().map(|shard| crate::shard::raw_window(config, shard, capture, label));
    if let (Some(shard), Some(window), true) = (&config.shard, window, order.len() > 1) {
        let (read, skip, c) = crate::shard::plan_files(&firsts, window);
        let last = read.last().copied().unwrap_or(0);
        (skipped, late) = skip.into_iter().partition(|&i| i < last);
        order = read.iter().map(|&i| all[i]).collect();
        cut = c;
        began = if capture == 0 { (shard.start_ns, shard.end_ns) } else { window };
    }
    let limit = config.flows.payload_limit();
    let mut b = Builder::new(config);
    let mut dropped_before = false;
    // Capture 1 under a shard: the span of its packets read, and whether one lay in the shard.
    let mut seen: Option<(i64, i64)> = None;
    let mut in_shard = false;
    let shard_span = config.shard.as_ref().map(|s| (s.start_ns, s.end_ns)).filter(|_| capture == 0);
    let mut info: Option<CaptureInfo> = None;
    let mut files = Overlaps::default();
    let mut k = 0;
    while let Some(&f) = order.get(k) {
        k += 1;
        let spec = &specs[f];
        let file_info = match window {
            Some((lo, hi)) => {
                let mut w =
                    Windowed { inner: &mut b, lo, hi, before: false, shard: shard_span, seen, in_shard };
                let info = ingest(spec, f, &config.read, points, limit, progress, &mut w)?;
                dropped_before |= w.before;
                (seen, in_shard) = (w.seen, w.in_shard);
                b.table.set_closed(false);
                info
            }
            None => ingest(spec, f, &config.read, points, limit, progress, &mut b)?,
        };
        let span = b.end_file(label, &spec.display_name(), &file_info.warnings);
        files.note(specs, f, span, label);
        info = Some(merge_info(info, file_info));
        // The last planned file read: the next one too while a flow begun in the
        // shard's window may go on in it (a long connection).
        if k == order.len() {
            if let Some(until) = late.first().and_then(|&i| firsts[i]) {
                let idle = config.flows.udp_idle_ns;
                let open = (b.table.flows().iter())
                    .filter(|fl| fl.first_ns >= began.0 && fl.first_ns < began.1)
                    .any(|fl| crate::shard::may_continue_later(fl, until, idle));
                if open {
                    order.push(all[late.remove(0)]);
                }
            }
        }
    }
    let mut shard_warning = None;
    if let Some(shard) = &config.shard {
        skipped.extend(&late);
        if !skipped.is_empty() {
            let names: Vec<String> = skipped.iter().map(|&i| specs[all[i]].display_name()).collect();
            shard_warning = Some(crate::shard::skipped_warning(label, &names, shard));
        }
        cut.read_until = late.first().and_then(|&i| firsts[i]);
        if let (true, Some((lo, _))) = (dropped_before, window) {
            cut.read_from = Some(cut.read_from.map_or(lo, |from| from.max(lo)));
        }
        if capture == 0 && !in_shard {
            b.warnings.push(crate::shard::no_packet_warning(label, shard, seen));
        }
    }
    let names: Vec<String> = order.iter().map(|&f| specs[f].display_name()).collect();
    let names = names.join(", ");
    files.finish(&mut b.warnings, order.len());
    b.warnings.extend(shard_warning);
    // `files` is never empty (a point has a label because a file gave it).
    let info = info.ok_or_else(|| ReadError { file: label.to_string(), kind: read::ReadErrorKind::Empty })?;
    // A shard splits a `tcpdump -i any` capture as the run its --clocks-from
    // report came from: also where its own flows are too few (or none) to.
    let keys = config.shard.as_ref().and_then(|_| pinned_keys(config, label, &info));
    let (mut result, elsewhere) = b.finish_as(label, &names, info, keys.as_deref());
    if elsewhere > 0 {
        result.warnings.push(Warning {
            label: label.to_string(),
            file: names.clone(),
            record: None,
            byte_offset: None,
            problem: format!(
                "{elsewhere} flows were on interfaces the --clocks-from report did not split this capture by"
            ),
            consequence: "they were counted at its first point".into(),
        });
    }
    result.cut = cut;
    Ok((result, names))
}

/// What a point's files were, given what the files before were (`info`) and
/// what the next one is (its warnings are the Builder's, not kept here).
pub(crate) fn merge_info(info: Option<CaptureInfo>, file_info: CaptureInfo) -> CaptureInfo {
    match info {
        None => CaptureInfo { warnings: Vec::new(), ..file_info },
        Some(mut i) => {
            i.packets += file_info.packets;
            i.bytes += file_info.bytes;
            i.gzip |= file_info.gzip;
            // Rotated files repeat their interfaces: the same one at the
            // same number counts once (its packets added).
            for (n, itf) in file_info.interfaces.into_iter().enumerate() {
                match i.interfaces.get_mut(n) {
                    Some(have) if InterfaceInfo { packets: have.packets, ..itf.clone() } == *have => {
                        have.packets += itf.packets
                    }
                    _ => i.interfaces.push(itf),
                }
            }
            i
        }
    }
}

/// The files of one point (indices into `specs`) in reading order, the order
/// of their first packet's time, with those times (empty for one file).
pub(crate) fn reading_order(specs: &[CaptureSpec], files: &[usize]) -> (Vec<usize>, Vec<Option<i64>>) {
    if files.len() < 2 {
        return (files.to_vec(), Vec::new());
    }
    let mut timed: Vec<(i64, usize, Option<i64>)> = (files.iter())
        .map(|&f| {
            let t = read::first_timestamp(&specs[f]);
            (t.unwrap_or(i64::MAX), f, t)
        })
        .collect();
    // Stable: files without a first timestamp keep their command-line order, last.
    timed.sort_by_key(|&(t, _, _)| t);
    (timed.iter().map(|&(_, f, _)| f).collect(), timed.iter().map(|&(_, _, t)| t).collect())
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
        self.inner.table.set_closed(rec.ts_ns > self.hi);
        self.inner.add(rec);
    }
}

/// The files of one point read so far: the one that reached latest, and the
/// first pair that overlapped in time.
#[derive(Default)]
pub(crate) struct Overlaps {
    latest: Option<(usize, i64)>,
    overlap: Option<Warning>,
}

impl Overlaps {
    /// File `f` (of `specs`) was read, its records spanning `span`.
    pub(crate) fn note(&mut self, specs: &[CaptureSpec], f: usize, span: Option<(i64, i64)>, label: &str) {
        if let (Some((lo, _)), Some((prev, prev_hi))) = (span, self.latest) {
            if lo < prev_hi && self.overlap.is_none() {
                let (earlier, later) = (specs[prev].display_name(), specs[f].display_name());
                self.overlap = Some(overlap_warning(label, &earlier, &later));
            }
        }
        if let Some((_, hi)) = span {
            self.latest = Some(self.latest.map_or((f, hi), |l| if hi > l.1 { (f, hi) } else { l }));
        }
    }

    /// The point's warnings once its `files` files are read: with several,
    /// each says its file (a report names warnings by label); then the overlap.
    pub(crate) fn finish(self, warnings: &mut Vec<Warning>, files: usize) {
        if files > 1 {
            for w in warnings.iter_mut() {
                w.problem = format!("in {}: {}", w.file, w.problem);
            }
        }
        warnings.extend(self.overlap);
    }
}

/// The warning for two files of one point whose packets overlap in time.
fn overlap_warning(label: &str, earlier: &str, later: &str) -> Warning {
    Warning {
        label: label.to_string(),
        file: later.to_string(),
        record: None,
        byte_offset: None,
        problem: format!(
            "{later} starts before {earlier} ends: files given under one label are read as one point \
             in the order of their first packet, and these overlap in time"
        ),
        consequence:
            "read one after the other anyway; check that both files come from the same capture point".into(),
    }
}

fn file_len(spec: &CaptureSpec) -> Option<u64> {
    match &spec.source {
        crate::config::Source::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        crate::config::Source::Stdin => None,
    }
}

/// The warning for `duplicates` flows folded as copies of others (`tcpdump -i any`
/// on a NAT host), or None when there are none.
pub fn duplicate_flows_warning(label: &str, file: &str, duplicates: u64) -> Option<Warning> {
    (duplicates > 0).then(|| Warning {
        label: label.to_string(),
        file: file.to_string(),
        record: None,
        byte_offset: None,
        problem: format!(
            "{duplicates} flows are copies of other flows of this capture (same ISN or first datagram: \
             a capture on several interfaces, e.g. tcpdump -i any on a NAT host)"
        ),
        consequence: "each request is reported once, from the copy nearest the client".into(),
    })
}

/// Flows of one capture answered on another interface than they were asked on
/// (a multi-homed end host, see `flows::Flow::other_interface`): how many, and
/// the interfaces of the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Elsewhere {
    pub flows: u64,
    pub first: Option<(u32, u32)>,
}

impl Elsewhere {
    pub fn of<'a>(flows: impl Iterator<Item = &'a Flow>) -> Elsewhere {
        let mut e = Elsewhere::default();
        for f in flows {
            if let Some(other) = f.other_interface() {
                e.add(Elsewhere { flows: 1, first: Some((f.first_interface, other)) });
            }
        }
        e
    }

    pub fn add(&mut self, other: Elsewhere) {
        self.flows += other.flows;
        self.first = self.first.or(other.first);
    }

    /// The warning that says so, or None when there are none.
    pub fn warning(&self, label: &str, file: &str) -> Option<Warning> {
        let (asked, answered) = self.first?;
        let n = self.flows;
        Some(Warning {
            label: label.to_string(),
            file: file.to_string(),
            record: None,
            byte_offset: None,
            problem: format!(
                "{n} flows were answered on another interface than they began on, with no packet on both \
                 (the first: if{asked}, answered on if{answered}): {label} looks like an end host with several \
                 interfaces and asymmetric routing, not a host that forwards"
            ),
            consequence: format!(
                "{label} stays one observation point; each such flow is one flow there, its reply counted as \
                 seen at {label}"
            ),
        })
    }
}

/// Runs the whole pipeline on the configured captures.
pub fn analyze(config: &Config, progress: &dyn Progress) -> Result<Findings, ReadError> {
    analyze_full(config, progress, false).map(|(findings, _)| findings)
}

/// [`analyze`], and with `ladder` also the per-request packet events and flow
/// tuples (HTML ladders, merged pcapng).
pub fn analyze_full(
    config: &Config,
    progress: &dyn Progress,
    ladder: bool,
) -> Result<(Findings, Option<Ladder>), ReadError> {
    let points = crate::config::point_files(&config.captures);
    if worker_per_point(config.threads, points.len(), rayon::current_num_threads()) {
        // No pool to be had (threads refused): the run goes on in the current one.
        if let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(points.len()).build() {
            return pool.install(|| analyze_points(config, &points, progress, ladder));
        }
    }
    analyze_points(config, &points, progress, ladder)
}

/// [`analyze_full`] in the current rayon pool: the points read across its
/// workers, then concluded.
fn analyze_points(
    config: &Config,
    points: &[Vec<usize>],
    progress: &dyn Progress,
    ladder: bool,
) -> Result<(Findings, Option<Ladder>), ReadError> {
    let results: Vec<Result<(CaptureResult, String), ReadError>> = (points.par_iter().enumerate())
        .map(|(c, files)| read_point(config, c, files, points.len(), progress))
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let names: Vec<(String, String)> = (points.iter().zip(&results))
        .map(|(files, (_, names))| (config.captures[files[0]].label.clone(), names.clone()))
        .collect();
    let results = results.into_iter().map(|(r, _)| r).collect();
    Ok(conclude(config, &names, results, ladder))
}

/// Whether the run gets a pool of one worker a point: only when it may use
/// every core (no `--threads`) and there are more points than rayon workers.
/// Rayon would otherwise read the points in waves: three captures on two
/// cores take two captures' time, the last one alone on one core while the
/// other idles. With a worker a point the kernel shares the cores among all
/// points (1.5 captures' time). With `--threads N` the points are read N at a
/// time, as asked.
///
/// The whole run (not only the reading) goes to that pool, so that the later
/// stages allocate on the threads whose memory the reading freed: with the
/// reading alone on threads of its own, each reader kept a malloc arena the
/// later stages never reused (peak RSS 175 vs 163 MiB on the bench set).
pub fn worker_per_point(threads: Option<usize>, points: usize, workers: usize) -> bool {
    threads.is_none() && points > workers
}

/// Runs the whole pipeline on captures held in memory, `(label, bytes)` in path
/// order, sequentially (fuzzing, tests). `config.captures` is not used; each
/// label also names its capture in warnings.
pub fn analyze_bytes(config: &Config, captures: &[(&str, &[u8])]) -> Result<Findings, ReadError> {
    let mut results = Vec::with_capacity(captures.len());
    for &(label, bytes) in captures {
        let mut b = Builder::new(config);
        let info = ingest_bytes(label, bytes, &mut b)?;
        b.end_file(label, label, &info.warnings);
        results.push(b.finish(label, label, info));
    }
    let names: Vec<(String, String)> =
        captures.iter().map(|&(label, _)| (label.to_string(), label.to_string())).collect();
    Ok(conclude(config, &names, results, false).0)
}

/// One observation point: a capture, or a sub-point of a split capture.
struct PointOf<'a> {
    /// Index of its capture.
    source: usize,
    /// Its place among its capture's points.
    n: usize,
    label: String,
    key: Option<PointKey>,
    result: &'a CaptureResult,
}

/// The observation points of the run in path order: each capture's points in
/// its own order. A sub-point's label is the capture's label with, in
/// parentheses, `in` for the first sub-point (where requests enter the host)
/// and `out` for the later ones, then the interface: the pcapng `if_name` when
/// present; for an SLL2 interface index, its name in `links` (`ip -o link`
/// output given to `--names`); else `if` and its number (SLL2 interface index
/// or pcapng interface number); SLL without interface index names only the
/// direction: `node(in if4)`, `node(out eth0)`, `node(in)`.
fn expand<'a>(names: &[(String, String)], results: &'a [CaptureResult], links: &Links) -> Vec<PointOf<'a>> {
    let mut out = Vec::new();
    for (source, ((label, _), r)) in names.iter().zip(results).enumerate() {
        for (n, (key, _, _)) in r.points.iter().enumerate() {
            let label = match key {
                None => label.clone(),
                Some(k) => format!("{label}({})", point_name(*k, n == 0, &r.info, links)),
            };
            out.push(PointOf { source, n, label, key: *key, result: r });
        }
    }
    out
}

/// The sub-points (as keys, in path order) the `--clocks-from` report split
/// capture `label` into: its labels read back as [`point_name`] wrote them.
/// None when the report names fewer than two sub-points of it, or one this
/// capture cannot have.
fn pinned_keys(config: &Config, label: &str, info: &CaptureInfo) -> Option<Vec<Option<PointKey>>> {
    let pinned = config.clocks_from.as_ref()?;
    let names: Vec<&str> = (pinned.clocks.iter())
        .map(|(l, _, _)| l.as_str())
        .filter(|l| *l != label && crate::config::capture_of_point(l) == label)
        .map(|l| &l[label.len() + 1..l.len() - 1])
        .collect();
    if names.len() < 2 {
        return None;
    }
    names.iter().map(|n| point_key_named(n, info, &config.link_names).map(Some)).collect()
}

/// The key of a sub-point named `in if4`, `out eth0`, `in` (see [`point_name`]).
fn point_key_named(name: &str, info: &CaptureInfo, links: &Links) -> Option<PointKey> {
    let (role, interface) = match name.split_once(' ') {
        Some((role, i)) => (role, Some(i)),
        None => (name, None),
    };
    if !matches!(role, "in" | "out") {
        return None;
    }
    let Some(interface) = interface else {
        // `in`: the flows whose first packet came in (where requests enter the host)
        return Some(PointKey::Direction { outgoing: role == "out" });
    };
    let sll2 = info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2);
    let by_name = (!sll2)
        .then(|| {
            (info.interfaces.iter())
                .position(|itf| itf.name.as_deref().and_then(interface_name).as_deref() == Some(interface))
        })
        .flatten();
    let by_link =
        sll2.then(|| links.iter().find(|(_, n)| n.as_str() == interface).map(|(i, _)| *i)).flatten();
    match (by_name, by_link) {
        (Some(i), _) => u32::try_from(i).ok().map(PointKey::Interface),
        (None, Some(i)) => Some(PointKey::Interface(i)),
        (None, None) => interface.strip_prefix("if")?.parse().ok().map(PointKey::Interface),
    }
}

/// Interface names by index (`Config::link_names`).
type Links = std::collections::BTreeMap<u32, String>;

/// A pcapng `if_name` as a sub-point's label shows it: without control
/// characters and parentheses, at most 32 characters; None when blank.
fn interface_name(name: &str) -> Option<String> {
    let n: String = name.chars().filter(|c| !c.is_control() && !matches!(c, '(' | ')')).take(32).collect();
    (!n.trim().is_empty()).then_some(n)
}

/// `in if4`, `out eth0`, `in`: see [`expand`].
fn point_name(key: PointKey, first: bool, info: &CaptureInfo, links: &Links) -> String {
    let role = if first { "in" } else { "out" };
    match key {
        PointKey::Direction { .. } => role.to_string(),
        PointKey::Interface(i) => {
            let sll2 = info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2);
            let name = if sll2 {
                links.get(&i).cloned()
            } else {
                info.interfaces.get(i as usize).and_then(|itf| itf.name.as_deref()).and_then(interface_name)
            };
            format!("{role} {}", name.unwrap_or_else(|| format!("if{i}")))
        }
    }
}

/// When interface names were given (`links`): one warning when no capture
/// holds interface indexes they could name (a LINUX_SLL capture carries none),
/// and one per capture whose sub-points have indexes they do not name (the
/// `ip -o link` of another host?). Nothing without `links`.
fn link_name_warnings(names: &[(String, String)], results: &[CaptureResult], links: &Links) -> Vec<Warning> {
    if links.is_empty() {
        return Vec::new();
    }
    let warning = |label: &str, file: &str, problem: String, consequence: &str| Warning {
        label: label.to_string(),
        file: file.to_string(),
        record: None,
        byte_offset: None,
        problem,
        consequence: consequence.to_string(),
    };
    let mut out = Vec::new();
    let mut any = false;
    for ((label, file), r) in names.iter().zip(results) {
        if !r.info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2) {
            continue;
        }
        let indexes: Vec<u32> = (r.points.iter())
            .filter_map(|(k, _, _)| match k {
                Some(PointKey::Interface(i)) => Some(*i),
                _ => None,
            })
            .collect();
        any |= !indexes.is_empty();
        let missing: Vec<String> =
            indexes.iter().filter(|i| !links.contains_key(i)).map(|i| format!("if{i}")).collect();
        if !missing.is_empty() {
            out.push(warning(
                label,
                file,
                format!(
                    "the interface names given to --names (ip link output) name no interface {} of this capture",
                    missing.join(", ")
                ),
                "those sub-points keep their index as name; give the `ip -o link` of the host this capture was taken on",
            ));
        }
    }
    if !any {
        // named after the capture split into sub-points (else the first)
        let split = results.iter().position(|r| r.points.len() > 1).unwrap_or(0);
        let (label, file) = names.get(split).map_or(("", ""), |(l, f)| (l.as_str(), f.as_str()));
        out.push(warning(
            label,
            file,
            "interface names were given to --names (ip link output), but no capture holds interface indexes they \
             could name (only LINUX_SLL2, `tcpdump -i any -y LINUX_SLL2`, carries them; LINUX_SLL carries none)"
                .into(),
            "the names are not used; sub-points are named by direction (in, out) or by the pcapng interface name",
        ));
    }
    out
}

/// What the verdict stage is told of each observation point of `results`.
pub(crate) fn capture_metas(
    names: &[(String, String)],
    results: &[CaptureResult],
    links: &Links,
) -> Vec<CaptureMeta> {
    metas_of(names, &expand(names, results, links))
}

fn metas_of(names: &[(String, String)], points: &[PointOf<'_>]) -> Vec<CaptureMeta> {
    points
        .iter()
        .map(|p| {
            let r = p.result;
            let mut link_types: Vec<String> = Vec::new();
            for i in &r.info.interfaces {
                let name = i.link_type.name();
                if !link_types.contains(&name) {
                    link_types.push(name);
                }
            }
            CaptureMeta {
                label: p.label.clone(),
                file: names[p.source].1.clone(),
                format: r.info.format.name().to_string(),
                link_types,
                packets: r.points[p.n].2,
                overlays: r.overlays.get(p.n).cloned().unwrap_or_default(),
            }
        })
        .collect()
}

/// Correlates the per-capture results (`names`: label and file of each) and
/// builds the findings (and the ladder data when asked).
pub(crate) fn conclude(
    config: &Config,
    names: &[(String, String)],
    results: Vec<CaptureResult>,
    want_ladder: bool,
) -> (Findings, Option<Ladder>) {
    let (findings, ladder, _) = conclude_owning(config, names, results, want_ladder, None);
    (findings, ladder)
}

/// [`conclude`], and with `own` (a stream's window on capture 1's clock) what
/// the window owns of the run's totals (`verdict::window_totals`).
pub(crate) fn conclude_owning(
    config: &Config,
    names: &[(String, String)],
    results: Vec<CaptureResult>,
    want_ladder: bool,
    own: Option<(i64, i64)>,
) -> (Findings, Option<Ladder>, Option<verdict::WindowTotals>) {
    let points = expand(names, &results, &config.link_names);
    let metas = metas_of(names, &points);
    let mut warnings: Vec<Warning> = results.iter().flat_map(|r| r.warnings.iter().cloned()).collect();
    warnings.extend(link_name_warnings(names, &results, &config.link_names));
    let ladder_captures = want_ladder.then(|| ladder_captures(names, &points));
    // A manual offset of a capture holds for each of its points (one clock).
    let mut correlate_config = config.correlate.clone();
    correlate_config.offsets_ns = (config.correlate.offsets_ns.iter())
        .flat_map(|&(c, o)| {
            points.iter().enumerate().filter(move |(_, p)| p.source == c).map(move |(i, _)| (i, o))
        })
        .collect();
    correlate_config.clock_of = points.iter().map(|p| p.source).collect();
    let labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
    let cuts: Vec<crate::shard::Cut> = points.iter().map(|p| p.result.cut).collect();
    if let Some(pinned) = &config.clocks_from {
        let (pins, missing) = crate::shard::resolve_pins(pinned, &labels);
        correlate_config.pinned = Some(pins);
        warnings.extend(missing);
    }
    let files: Vec<String> =
        points.iter().map(|p| names.get(p.source).map(|n| n.1.clone()).unwrap_or_default()).collect();
    drop(points);
    let mut flows: Vec<Flows> = results.into_iter().flat_map(|r| r.points.into_iter().map(|p| p.1)).collect();
    // A whole run reads each capture on one clock, across a step of it (a time
    // shard or a stream window holds too little of the capture to tell).
    if config.shard.is_none() {
        let steps = crate::steps::correct(&mut flows, &correlate_config.clock_of);
        warnings.extend(steps.iter().map(|s| crate::steps::warning(s, &labels, &files)));
    }
    let correlation = correlate::correlate(&flows, &correlate_config);
    // (chain, point): requests whose flow a point holds apart by its clock
    let mut apart = Vec::new();
    if config.shard.is_none() {
        let unbridged = crate::steps::unlinked(&flows, &correlation, &correlate_config.clock_of);
        warnings.extend(unbridged.iter().map(|u| crate::steps::unbridged_warning(u, &labels, &files)));
        apart.extend(unbridged.iter().flat_map(|u| u.chains.iter().map(|&c| (c, u.point))));
        apart.sort_unstable();
    }
    if let Some(pinned) = &config.clocks_from {
        warnings.extend(crate::shard::clock_warnings(&labels, &correlation, &pinned.source));
    }
    if let Some(shard) = &config.shard {
        let skipped = cuts.iter().any(|c| *c != crate::shard::Cut::default());
        // A stream says it in its own words (`stream`).
        if skipped && config.clocks_from.is_none() && labels.len() > 1 && config.stream.is_none() {
            warnings.push(crate::shard::estimated_clock_warning(&labels[0]));
        }
        let udp_idle = config.flows.udp_idle_ns;
        let hold = config.stream.map(|s| s.hold_ns);
        warnings.extend(crate::shard::edge_warnings(
            shard,
            &labels,
            &cuts,
            &flows,
            &correlation,
            udp_idle,
            hold,
        ));
    }
    let options = VerdictOptions {
        list_unmatched: config.list_unmatched,
        part: config.shard.is_some(),
        stopped: config.stopped.clone(),
        apart,
    };
    let (mut findings, totals) =
        verdict::verdict_owning(&metas, &flows, &correlation, &warnings, &options, own);
    crate::fragments::add(&mut findings, &flows, &correlation);
    let ladder = ladder_captures.map(|caps| {
        let order = verdict::request_order(&flows, &correlation);
        ladder::build(caps, &flows, &correlation, &order)
    });
    (findings, ladder, totals)
}

/// The observation points as the ladder data describes them (offsets filled in
/// by `ladder::build`).
fn ladder_captures(names: &[(String, String)], points: &[PointOf<'_>]) -> Vec<LadderCapture> {
    (points.iter())
        .map(|p| LadderCapture {
            label: p.label.clone(),
            file: names[p.source].1.clone(),
            offset_ns: 0,
            interfaces: (p.result.info.interfaces.iter())
                .map(|i| LadderInterface { link_type: i.link_type, snaplen: i.snaplen, name: i.name.clone() })
                .collect(),
            source: p.source,
            capture: names[p.source].0.clone(),
            point: p.key,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_get_a_worker_each_only_without_a_thread_limit_and_beyond_the_workers() {
        assert!(worker_per_point(None, 3, 2));
        assert!(!worker_per_point(None, 2, 2), "one worker a point already");
        assert!(!worker_per_point(None, 3, 8));
        assert!(!worker_per_point(Some(2), 3, 2), "--threads 2 reads two at a time");
        assert!(worker_per_point(None, 2, 1));
    }

    fn info(link_type: LinkType, names: &[Option<&str>]) -> CaptureInfo {
        let interface = |name: &Option<&str>| crate::read::InterfaceInfo {
            link_type,
            snaplen: 262144,
            ts_resolution: "us".into(),
            ts_offset_s: 0,
            name: name.map(str::to_string),
            packets: 0,
        };
        CaptureInfo {
            format: crate::read::Format::Pcapng,
            byte_order: crate::read::ByteOrder::Little,
            gzip: false,
            interfaces: names.iter().map(interface).collect(),
            packets: 0,
            bytes: 0,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn sub_points_are_named_by_ip_link_names_only_for_sll2_indexes_and_read_back() {
        let links: Links = [(2, "pod0".to_string()), (3, "be0".to_string())].into_iter().collect();
        let none = Links::new();
        let sll2 = info(LinkType::LinuxSll2, &[Some("any")]);
        assert_eq!(point_name(PointKey::Interface(2), true, &sll2, &links), "in pod0");
        assert_eq!(point_name(PointKey::Interface(3), false, &sll2, &links), "out be0");
        assert_eq!(
            point_name(PointKey::Interface(7), false, &sll2, &links),
            "out if7",
            "not named: its index"
        );
        assert_eq!(point_name(PointKey::Interface(2), true, &sll2, &none), "in if2");
        // read back (--clocks-from): by the name, or by the index
        assert_eq!(point_key_named("in pod0", &sll2, &links), Some(PointKey::Interface(2)));
        assert_eq!(point_key_named("out be0", &sll2, &links), Some(PointKey::Interface(3)));
        assert_eq!(point_key_named("out if3", &sll2, &links), Some(PointKey::Interface(3)));
        assert_eq!(point_key_named("out be0", &sll2, &none), None);
        // pcapng interfaces are numbered by the file, not by the kernel: their if_name, never a link name
        let pcapng = info(LinkType::Ethernet, &[Some("eth0"), None, None]);
        assert_eq!(point_name(PointKey::Interface(0), true, &pcapng, &links), "in eth0");
        assert_eq!(point_name(PointKey::Interface(2), false, &pcapng, &links), "out if2");
        assert_eq!(point_key_named("out pod0", &pcapng, &links), None);
        assert_eq!(point_key_named("in eth0", &pcapng, &links), Some(PointKey::Interface(0)));
        let sll = info(LinkType::LinuxSll, &[None]);
        assert_eq!(point_name(PointKey::Direction { outgoing: true }, false, &sll, &links), "out");
    }
}
