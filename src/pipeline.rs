//! analyze(): one rayon task per capture (read → decode → flows), then correlate →
//! verdict. The only place that wires the stages together. `analyze_bytes` runs
//! the same stages on captures held in memory (fuzzing, tests).

use crate::config::{CaptureSpec, Config};
use crate::correlate;
use crate::decode::{self, DecodeError};
use crate::flows::{FlowTable, Flows};
use crate::read::{self, CaptureInfo, Progress, RawRecord, ReadError};
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

/// Reads, decodes and builds the flows of one capture.
pub fn read_flows(
    spec: &CaptureSpec,
    index: usize,
    config: &Config,
    progress: &dyn Progress,
) -> Result<CaptureResult, ReadError> {
    build_flows(&spec.label, &spec.display_name(), config, |on_record| {
        read::read_capture(spec, index, progress, on_record)
    })
}

/// Decodes every record that `read` yields into one capture's flow table.
fn build_flows(
    label: &str,
    file: &str,
    config: &Config,
    read: impl FnOnce(&mut dyn FnMut(&RawRecord<'_>)) -> Result<CaptureInfo, ReadError>,
) -> Result<CaptureResult, ReadError> {
    let mut table = FlowTable::new(&config.flows);
    let mut undecodable = 0u64;
    // Records whose IP header is cut short or malformed (zero-length records
    // too): how many, and the first one's number, offset and problem.
    let mut damaged = 0u64;
    let mut first_damaged: Option<(u64, u64, DecodeError)> = None;
    let info = read(&mut |rec| match decode::decode(rec) {
        Ok(p) => table.insert(&p, p.payload(rec.data)),
        Err(e) => {
            undecodable += 1;
            if matches!(e, DecodeError::Truncated { .. } | DecodeError::Malformed { .. }) {
                damaged += 1;
                first_damaged.get_or_insert((rec.record, rec.byte_offset, e));
            }
        }
    })?;
    let flows = table.finish();
    let mut warnings = info.warnings.clone();
    if let Some((record, byte_offset, e)) = first_damaged {
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
    if flows.stats.duplicate_flows > 0 {
        warnings.push(Warning {
            label: label.to_string(),
            file: file.to_string(),
            record: None,
            byte_offset: None,
            problem: format!(
                "{} flows are copies of other flows of this capture (same ISN or first datagram: \
                 a capture on several interfaces, e.g. tcpdump -i any on a NAT host)",
                flows.stats.duplicate_flows
            ),
            consequence: "each request is reported once, from the copy nearest the client".into(),
        });
    }
    Ok(CaptureResult { info, flows, undecodable, warnings })
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
    let names: Vec<(String, String)> =
        config.captures.iter().map(|s| (s.label.clone(), s.display_name())).collect();
    Ok(conclude(config, &names, results))
}

/// Runs the whole pipeline on captures held in memory, `(label, bytes)` in path
/// order, sequentially (fuzzing, tests). `config.captures` is not used; each
/// label also names its capture in warnings.
pub fn analyze_bytes(config: &Config, captures: &[(&str, &[u8])]) -> Result<Findings, ReadError> {
    let mut results = Vec::with_capacity(captures.len());
    for &(label, bytes) in captures {
        results
            .push(build_flows(label, label, config, |on_record| read::read_bytes(label, bytes, on_record))?);
    }
    let names: Vec<(String, String)> =
        captures.iter().map(|&(label, _)| (label.to_string(), label.to_string())).collect();
    Ok(conclude(config, &names, results))
}

/// Correlates the per-capture results (`names`: label and file of each) and
/// builds the findings.
fn conclude(config: &Config, names: &[(String, String)], results: Vec<CaptureResult>) -> Findings {
    let metas: Vec<CaptureMeta> = names
        .iter()
        .zip(&results)
        .map(|((label, file), r)| {
            let mut link_types: Vec<String> = Vec::new();
            for i in &r.info.interfaces {
                let name = i.link_type.name();
                if !link_types.contains(&name) {
                    link_types.push(name);
                }
            }
            CaptureMeta {
                label: label.clone(),
                file: file.clone(),
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
    verdict::verdict(&metas, &flows, &correlation, &warnings, &options)
}
