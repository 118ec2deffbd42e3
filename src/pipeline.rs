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
use crate::flows::{FlowTable, Flows};
use crate::ladder::{self, Ladder, LadderCapture, LadderInterface};
use crate::read::{self, CaptureInfo, LinkType, Progress, RawRecord, ReadError};
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
    /// Records that held no decodable IP packet (ARP, unknown link types, damage).
    pub undecodable: u64,
    /// Problems found while reading and building flows.
    pub warnings: Vec<Warning>,
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
struct Builder {
    table: FlowTable,
    undecodable: u64,
    damage: Damage,
    /// Decoded packets per interface (`flows::points`' numbering): (interface,
    /// incoming, outgoing).
    counts: Vec<(u32, u64, u64)>,
}

impl Builder {
    fn new(config: &Config) -> Builder {
        Builder {
            table: FlowTable::new(&config.flows),
            undecodable: 0,
            damage: Damage::default(),
            counts: Vec::new(),
        }
    }

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

    fn finish(self, label: &str, file: &str, info: CaptureInfo) -> CaptureResult {
        let Builder { table, undecodable, damage, counts } = self;
        let packets = |key: PointKey| Builder::packets(&counts, key);
        let points = match points::split(table.finish_unfolded()) {
            Ok(points) => points
                .into_iter()
                .map(|p| {
                    let packets = packets(p.key);
                    (Some(p.key), p.flows, packets)
                })
                .collect(),
            Err(mut flows) => {
                flows.fold_copies();
                vec![(None, flows, info.packets)]
            }
        };
        // Records without an IP packet (ARP, damage) count towards the first point.
        let mut points: Vec<(Option<PointKey>, Flows, u64)> = points;
        let counted: u64 = points.iter().map(|p| p.2).sum();
        if let Some(first) = points.first_mut() {
            first.2 += info.packets.saturating_sub(counted);
        }
        let duplicates: u64 = points.iter().map(|p| p.1.stats.duplicate_flows).sum();
        let mut warnings = info.warnings.clone();
        if let Some((record, byte_offset, e)) = damage.first {
            let damaged = damage.count;
            warnings.push(Warning {
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
        warnings.extend(duplicate_flows_warning(label, file, duplicates));
        CaptureResult { info, points, undecodable, warnings }
    }
}

impl Sink for Builder {
    fn add(&mut self, rec: &Ingested<'_>) {
        match rec.packet {
            Ok(p) => {
                self.count(p);
                self.table.insert(p, rec.payload)
            }
            Err(e) => {
                self.undecodable += 1;
                self.damage.note(rec, e);
            }
        }
    }
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

/// Reads, decodes and builds the flows of one capture (through [`ingest`]).
pub fn read_flows(
    spec: &CaptureSpec,
    index: usize,
    config: &Config,
    progress: &dyn Progress,
) -> Result<CaptureResult, ReadError> {
    let mut b = Builder::new(config);
    let captures = config.captures.len();
    let limit = config.flows.payload_limit();
    let info = ingest(spec, index, &config.read, captures, limit, progress, &mut b)?;
    Ok(b.finish(&spec.label, &spec.display_name(), info))
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
    let results: Vec<Result<CaptureResult, ReadError>> = config
        .captures
        .par_iter()
        .enumerate()
        .map(|(i, spec)| read_flows(spec, i, config, progress))
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let names: Vec<(String, String)> =
        config.captures.iter().map(|s| (s.label.clone(), s.display_name())).collect();
    Ok(conclude(config, &names, results, ladder))
}

/// Runs the whole pipeline on captures held in memory, `(label, bytes)` in path
/// order, sequentially (fuzzing, tests). `config.captures` is not used; each
/// label also names its capture in warnings.
pub fn analyze_bytes(config: &Config, captures: &[(&str, &[u8])]) -> Result<Findings, ReadError> {
    let mut results = Vec::with_capacity(captures.len());
    for &(label, bytes) in captures {
        let mut b = Builder::new(config);
        let info = ingest_bytes(label, bytes, &mut b)?;
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
/// present, else `if` and its number (SLL2 interface index or pcapng interface
/// number); SLL without interface index names only the direction:
/// `node(in if4)`, `node(out eth0)`, `node(in)`.
fn expand<'a>(names: &[(String, String)], results: &'a [CaptureResult]) -> Vec<PointOf<'a>> {
    let mut out = Vec::new();
    for (source, ((label, _), r)) in names.iter().zip(results).enumerate() {
        for (n, (key, _, _)) in r.points.iter().enumerate() {
            let label = match key {
                None => label.clone(),
                Some(k) => format!("{label}({})", point_name(*k, n == 0, &r.info)),
            };
            out.push(PointOf { source, n, label, key: *key, result: r });
        }
    }
    out
}

/// `in if4`, `out eth0`, `in`: see [`expand`].
fn point_name(key: PointKey, first: bool, info: &CaptureInfo) -> String {
    let role = if first { "in" } else { "out" };
    match key {
        PointKey::Direction { .. } => role.to_string(),
        PointKey::Interface(i) => {
            let sll2 = info.interfaces.iter().any(|itf| itf.link_type == LinkType::LinuxSll2);
            let name = (!sll2)
                .then(|| info.interfaces.get(i as usize).and_then(|itf| itf.name.as_deref()))
                .flatten()
                .map(|n| {
                    n.chars()
                        .filter(|c| !c.is_control() && !matches!(c, '(' | ')'))
                        .take(32)
                        .collect::<String>()
                })
                .filter(|n| !n.trim().is_empty());
            format!("{role} {}", name.unwrap_or_else(|| format!("if{i}")))
        }
    }
}

/// Correlates the per-capture results (`names`: label and file of each) and
/// builds the findings (and the ladder data when asked).
fn conclude(
    config: &Config,
    names: &[(String, String)],
    results: Vec<CaptureResult>,
    want_ladder: bool,
) -> (Findings, Option<Ladder>) {
    let points = expand(names, &results);
    let metas: Vec<CaptureMeta> = points
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
            }
        })
        .collect();
    let warnings: Vec<Warning> = results.iter().flat_map(|r| r.warnings.iter().cloned()).collect();
    let ladder_captures = want_ladder.then(|| ladder_captures(names, &points));
    // A manual offset of a capture holds for each of its points (one clock).
    let mut correlate_config = config.correlate.clone();
    correlate_config.offsets_ns = (config.correlate.offsets_ns.iter())
        .flat_map(|&(c, o)| {
            points.iter().enumerate().filter(move |(_, p)| p.source == c).map(move |(i, _)| (i, o))
        })
        .collect();
    drop(points);
    let flows: Vec<Flows> = results.into_iter().flat_map(|r| r.points.into_iter().map(|p| p.1)).collect();
    let correlation = correlate::correlate(&flows, &correlate_config);
    let options = VerdictOptions { list_unmatched: config.list_unmatched };
    let findings = verdict::verdict(&metas, &flows, &correlation, &warnings, &options);
    let ladder = ladder_captures.map(|caps| {
        let order = verdict::request_order(&flows, &correlation);
        ladder::build(caps, &flows, &correlation, &order)
    });
    (findings, ladder)
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
