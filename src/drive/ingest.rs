//! The per-capture stage: `ingest` is the one ingest path: sequential,
//! chunked, in-memory and live reads all decode each record and hand it, in
//! file order, to a `Sink` (the flow `Builder` of `pipeline` and `stream`,
//! `inspect`'s tally). Also what a point of several files needs: their reading
//! order, their merged `CaptureInfo`, the warning when they overlap. Takes a
//! capture and a sink; gives the capture's result. Correlates nothing.

use super::Config;
use crate::decode::{self, DecodeError, Packet};
use crate::flows::points::{self, PointKey};
use crate::flows::{Flow, FlowTable, Flows};
use crate::read::{self, CaptureInfo, InterfaceInfo, Progress, RawRecord, ReadError};
use crate::read::{CaptureSpec, ReadConfig};
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
    pub cut: Cut,
    /// A point captured on several hosts (files of one label overlapping in
    /// time): each host's files, by `Flow::host`; empty for one host.
    pub hosts: Vec<String>,
}

/// Where a point's reading was cut by skipped files, on that point's clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// First packet of the first file read, when earlier files were skipped.
    pub read_from: Option<i64>,
    /// First packet of the first later file skipped.
    pub read_until: Option<i64>,
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
            let mine = key.is_none_or(|k| k.takes(interface, outgoing));
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
            .map(|&(i, inc, out)| u64::from(key.takes(i, false)) * inc + u64::from(key.takes(i, true)) * out)
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
    tunnels: crate::drive::tunnels::TunnelTally,
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
        // A split capture is a forwarding host: a reply on another interface is
        // a field of its request there (`reply_iface`), not a multi-homed end host.
        let split = points.len() > 1;
        let answered = Elsewhere::of(points.iter().filter(|_| !split).flat_map(|p| &p.1.flows));
        warnings.extend(answered.warning(label, file));
        let result = CaptureResult {
            info,
            points,
            overlays,
            undecodable,
            warnings,
            cut: Default::default(),
            hosts: Vec::new(),
        };
        (result, elsewhere)
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
        self.finish_hosts(warnings, files, 1);
    }

    /// [`Overlaps::finish`] of a point whose files were taken as `hosts`
    /// hosts' (files overlapping in time: a pool's nodes): the overlap is then
    /// said as that, not as files read one after the other.
    pub(crate) fn finish_hosts(mut self, warnings: &mut Vec<Warning>, files: usize, hosts: usize) {
        if files > 1 {
            for w in warnings.iter_mut() {
                w.problem = format!("in {}: {}", w.file, w.problem);
            }
        }
        if let Some(w) = self.overlap.as_mut().filter(|_| hosts > 1) {
            w.problem = format!(
                "{}: files of one label that overlap in time are read as captures of {hosts} hosts at one point \
                 (a pool's nodes, ECMP, replicas)",
                w.problem.split(": files given under one label").next().unwrap_or_default()
            );
            w.consequence =
                "each host keeps its own clock and each request names its host (captures[].host); \
                             if these files come from one host, give them labels of their own"
                    .into();
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
        crate::read::Source::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        crate::read::Source::Stdin => None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Source;

    /// Captures of one label named `names` (nothing is read from them).
    fn named(names: &[&str]) -> Vec<CaptureSpec> {
        (names.iter())
            .map(|n| CaptureSpec { label: "egress".into(), source: Source::Path(n.into()) })
            .collect()
    }

    /// Files `firsts.len()` in `dir`, f0.pcap, f1.pcap, …: a pcap of two records
    /// from each given time (1 µs apart), a header without records for None.
    fn captures(dir: &std::path::Path, firsts: &[Option<i64>]) -> Vec<CaptureSpec> {
        (firsts.iter().enumerate())
            .map(|(i, t)| {
                let records: Vec<(i64, Vec<u8>, u32)> =
                    t.map_or(Vec::new(), |t| vec![(t, vec![0x45; 20], 20), (t + 1_000, vec![0x45; 20], 20)]);
                let mut bytes = Vec::new();
                tuplecorr_synth::write_pcap(&mut bytes, 65535, &records).unwrap();
                let path = dir.join(format!("f{i}.pcap"));
                std::fs::write(&path, bytes).unwrap();
                CaptureSpec { label: "egress".into(), source: Source::Path(path) }
            })
            .collect()
    }

    const T: i64 = 1_700_000_000_000_000_000;

    #[test]
    fn one_file_or_none_is_read_as_given_without_peeking_at_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let specs = captures(dir.path(), &[Some(T + 5), Some(T)]);
        assert_eq!(reading_order(&specs, &[1]), (vec![1], vec![]));
        assert_eq!(reading_order(&specs, &[0]), (vec![0], vec![]));
        assert_eq!(reading_order(&specs, &[]), (vec![], vec![]));
    }

    #[test]
    fn files_of_one_point_are_read_in_the_order_of_their_first_packet() {
        let dir = tempfile::tempdir().unwrap();
        // f0 latest, f1 earliest, f2 between; f3 is of another point
        let specs = captures(dir.path(), &[Some(T + 2_000_000), Some(T), Some(T + 1_000_000), Some(T - 9)]);
        assert_eq!(reading_order(&specs, &[1, 0]), (vec![1, 0], vec![Some(T), Some(T + 2_000_000)]));
        assert_eq!(reading_order(&specs, &[0, 1]), (vec![1, 0], vec![Some(T), Some(T + 2_000_000)]));
        assert_eq!(
            reading_order(&specs, &[0, 2, 1]),
            (vec![1, 2, 0], vec![Some(T), Some(T + 1_000_000), Some(T + 2_000_000)])
        );
        // one nanosecond apart is apart
        let dir = tempfile::tempdir().unwrap();
        let specs = captures(dir.path(), &[Some(T + 1), Some(T)]);
        assert_eq!(reading_order(&specs, &[0, 1]), (vec![1, 0], vec![Some(T), Some(T + 1)]));
    }

    #[test]
    fn files_starting_at_the_same_time_keep_their_command_line_order() {
        let dir = tempfile::tempdir().unwrap();
        let specs = captures(dir.path(), &[Some(T), Some(T), Some(T - 1), Some(T)]);
        assert_eq!(
            reading_order(&specs, &[3, 0, 2, 1]),
            (vec![2, 3, 0, 1], vec![Some(T - 1), Some(T), Some(T), Some(T)])
        );
        assert_eq!(reading_order(&specs, &[1, 3, 0]), (vec![1, 3, 0], vec![Some(T), Some(T), Some(T)]));
    }

    #[test]
    fn files_without_a_first_packet_come_last_in_command_line_order() {
        let dir = tempfile::tempdir().unwrap();
        // f0 and f2: a pcap header without records; f3: gone
        let mut specs = captures(dir.path(), &[None, Some(T + 7), None]);
        specs
            .push(CaptureSpec { label: "egress".into(), source: Source::Path(dir.path().join("gone.pcap")) });
        assert_eq!(reading_order(&specs, &[2, 0, 1]), (vec![1, 2, 0], vec![Some(T + 7), None, None]));
        assert_eq!(reading_order(&specs, &[3, 1, 0]), (vec![1, 3, 0], vec![Some(T + 7), None, None]));
        assert_eq!(reading_order(&specs, &[0, 2]), (vec![0, 2], vec![None, None]));
    }

    /// The overlap warning `later` gets for starting before `earlier` ended.
    fn overlap(earlier: &str, later: &str) -> Warning {
        Warning {
            label: "egress".into(),
            file: later.into(),
            record: None,
            byte_offset: None,
            problem: format!(
                "{later} starts before {earlier} ends: files given under one label are read as one point \
                 in the order of their first packet, and these overlap in time"
            ),
            consequence:
                "read one after the other anyway; check that both files come from the same capture point"
                    .into(),
        }
    }

    /// `Overlaps` after noting `spans` of files 0, 1, … (named a, b, c, …) in that order.
    fn noted(spans: &[Option<(i64, i64)>]) -> Overlaps {
        let specs = named(&["a.pcap", "b.pcap", "c.pcap", "d.pcap", "e.pcap"]);
        let mut o = Overlaps::default();
        for (f, &span) in spans.iter().enumerate() {
            o.note(&specs, f, span, "egress");
        }
        o
    }

    #[test]
    fn files_one_after_the_other_do_not_overlap_even_when_they_touch() {
        let o = noted(&[Some((10, 20)), Some((21, 30)), Some((30, 30)), Some((30, 45))]);
        assert_eq!((o.latest, o.overlap), (Some((3, 45)), None));
        let o = noted(&[Some((10, 20)), Some((20, 25))]);
        assert_eq!((o.latest, o.overlap), (Some((1, 25)), None), "starting as the other ends");
        let o = noted(&[Some((10, 20))]);
        assert_eq!((o.latest, o.overlap), (Some((0, 20)), None));
        assert_eq!((noted(&[]).latest, noted(&[]).overlap), (None, None));
    }

    #[test]
    fn a_file_starting_before_the_latest_end_overlaps_it() {
        let o = noted(&[Some((10, 20)), Some((19, 30))]);
        assert_eq!((o.latest, o.overlap), (Some((1, 30)), Some(overlap("a.pcap", "b.pcap"))));
        // one that starts and ends inside the first
        let o = noted(&[Some((10, 40)), Some((15, 25))]);
        assert_eq!((o.latest, o.overlap), (Some((0, 40)), Some(overlap("a.pcap", "b.pcap"))));
    }

    #[test]
    fn the_earlier_file_of_an_overlap_is_the_one_that_reached_latest() {
        // b ends before a: c, starting after b's end but before a's, overlaps a
        let o = noted(&[Some((10, 50)), Some((20, 30)), Some((40, 60))]);
        assert_eq!((o.latest, o.overlap), (Some((2, 60)), Some(overlap("a.pcap", "b.pcap"))));
        let o = noted(&[Some((10, 50)), Some((50, 50)), Some((45, 55))]);
        assert_eq!(o.latest, Some((2, 55)));
        assert_eq!(o.overlap, Some(overlap("a.pcap", "c.pcap")), "b ends as late as a: a stays latest");
        // b reaches later than a: c overlapping both overlaps b
        let o = noted(&[Some((10, 30)), Some((30, 40)), Some((25, 35))]);
        assert_eq!((o.latest, o.overlap), (Some((1, 40)), Some(overlap("b.pcap", "c.pcap"))));
    }

    #[test]
    fn only_the_first_overlap_is_kept() {
        let o = noted(&[Some((10, 30)), Some((20, 40)), Some((35, 50)), Some((0, 60))]);
        assert_eq!((o.latest, o.overlap), (Some((3, 60)), Some(overlap("a.pcap", "b.pcap"))));
        // a later overlap after pieces that did not overlap
        let o = noted(&[Some((10, 30)), Some((30, 40)), Some((39, 50)), Some((45, 55))]);
        assert_eq!((o.latest, o.overlap), (Some((3, 55)), Some(overlap("b.pcap", "c.pcap"))));
    }

    #[test]
    fn a_file_without_records_neither_overlaps_nor_moves_the_latest_end() {
        let o = noted(&[None, Some((10, 20)), None, Some((20, 30))]);
        assert_eq!((o.latest, o.overlap), (Some((3, 30)), None));
        let o = noted(&[Some((10, 20)), None, Some((15, 30))]);
        assert_eq!((o.latest, o.overlap), (Some((2, 30)), Some(overlap("a.pcap", "c.pcap"))));
    }

    #[test]
    fn with_several_files_each_warning_names_its_file_then_comes_the_overlap() {
        let read = Warning { problem: "cut short".into(), ..overlap("a.pcap", "b.pcap") };
        let read = Warning { file: "a.pcap".into(), consequence: "kept".into(), ..read };
        let o = noted(&[Some((10, 20)), Some((15, 25))]);
        let mut warnings = vec![read.clone()];
        o.finish(&mut warnings, 2);
        let prefixed = Warning { problem: "in a.pcap: cut short".into(), ..read.clone() };
        assert_eq!(warnings, [prefixed.clone(), overlap("a.pcap", "b.pcap")]);
        let mut warnings = vec![read.clone()];
        noted(&[Some((10, 20)), Some((20, 25)), Some((30, 35))]).finish(&mut warnings, 3);
        assert_eq!(warnings, [prefixed], "three files, no overlap");
        // one file: as it was
        let mut warnings = vec![read.clone()];
        noted(&[Some((10, 20))]).finish(&mut warnings, 1);
        assert_eq!(warnings, [read]);
    }
}
