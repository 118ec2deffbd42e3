//! analyze(): one rayon task per capture (read → decode → flows), then correlate →
//! verdict. The only place that wires the stages together.

use crate::config::{CaptureSpec, Config};
use crate::correlate;
use crate::decode::{self, Packet};
use crate::flows::{FlowTable, Flows};
use crate::read::{self, CaptureInfo, Progress, ReadError};
use crate::verdict::{self, CaptureMeta, Findings, VerdictOptions};
use crate::warning::Warning;
use rayon::prelude::*;

/// One capture after the per-capture stages.
#[derive(Debug)]
pub struct CaptureResult {
    pub info: CaptureInfo,
    pub flows: Flows,
    /// Records that held no decodable IP packet (ARP, unknown link types, damage).
    pub undecodable: u64,
    /// Problems found while reading and building flows.
    pub warnings: Vec<Warning>,
}

/// Packets of one chunk, decoded in parallel with other chunks; payloads cut to
/// the bytes the flow stage can use, kept in one arena.
#[derive(Default)]
struct DecodedChunk {
    packets: Vec<(Packet, u32, u32)>,
    payloads: Vec<u8>,
    undecodable: u64,
}

/// Reads, decodes and builds the flows of one capture. A large uncompressed
/// file is split into chunks at record boundaries; a wave of chunks (one per
/// thread) is framed and decoded in parallel, then its packets are inserted in
/// file order — so the flows are exactly those of a sequential read, whatever
/// the thread count and chunk size, and memory stays bounded by the wave.
pub fn read_flows(
    spec: &CaptureSpec,
    index: usize,
    config: &Config,
    progress: &dyn Progress,
) -> Result<CaptureResult, ReadError> {
    let mut table = FlowTable::new(&config.flows);
    let mut undecodable = 0u64;
    let split = config.read.force_chunks
        || (rayon::current_num_threads() > config.captures.len()
            && file_len(spec).is_some_and(|len| len > config.read.chunk_bytes));
    let info = if split && read::is_splittable(spec) {
        let plan = read::plan_chunks(spec, config.read.chunk_bytes)?;
        let total: u64 = plan.chunks.iter().map(|c| c.end - c.start).sum();
        progress.start(index, &spec.label, total);
        let limit = config.flows.fingerprint_len;
        let wave = rayon::current_num_threads().max(1);
        for group in plan.chunks.chunks(wave) {
            let decoded: Vec<Result<DecodedChunk, ReadError>> = group
                .par_iter()
                .map(|chunk| {
                    let mut d = DecodedChunk::default();
                    read::read_chunk(spec, index, chunk, progress, &mut |rec| match decode::decode(rec) {
                        Ok(p) => {
                            let payload = p.payload(rec.data);
                            let payload = &payload[..payload.len().min(limit)];
                            let at = d.payloads.len() as u32;
                            d.payloads.extend_from_slice(payload);
                            d.packets.push((p, at, payload.len() as u32));
                        }
                        Err(_) => d.undecodable += 1,
                    })?;
                    Ok(d)
                })
                .collect();
            for d in decoded {
                let d = d?;
                undecodable += d.undecodable;
                for (p, at, len) in &d.packets {
                    let (at, len) = (*at as usize, *len as usize);
                    table.insert(p, &d.payloads[at..at + len]);
                }
            }
        }
        progress.finish(index);
        plan.info
    } else {
        read::read_capture(spec, index, progress, &mut |rec| match decode::decode(rec) {
            Ok(p) => table.insert(&p, p.payload(rec.data)),
            Err(_) => undecodable += 1,
        })?
    };
    let flows = table.finish();
    let mut warnings = info.warnings.clone();
    warnings.extend(duplicate_flows_warning(&spec.label, &spec.display_name(), flows.stats.duplicate_flows));
    Ok(CaptureResult { info, flows, undecodable, warnings })
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
    let results: Vec<Result<CaptureResult, ReadError>> = config
        .captures
        .par_iter()
        .enumerate()
        .map(|(i, spec)| read_flows(spec, i, config, progress))
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let metas: Vec<CaptureMeta> = config
        .captures
        .iter()
        .zip(&results)
        .map(|(spec, r)| {
            let mut link_types: Vec<String> = Vec::new();
            for i in &r.info.interfaces {
                let name = i.link_type.name();
                if !link_types.contains(&name) {
                    link_types.push(name);
                }
            }
            CaptureMeta {
                label: spec.label.clone(),
                file: spec.display_name(),
                format: r.info.format.name().to_string(),
                link_types,
                packets: r.info.packets,
            }
        })
        .collect();
    let warnings: Vec<Warning> = results.iter().flat_map(|r| r.warnings.iter().cloned()).collect();
    let flows: Vec<Flows> = results.into_iter().map(|r| r.flows).collect();
    let correlation = correlate::correlate(&flows, &config.correlate);
    let options = VerdictOptions { list_unmatched: config.list_unmatched };
    Ok(verdict::verdict(&metas, &flows, &correlation, &warnings, &options))
}
