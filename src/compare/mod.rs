//! `tuplecorr compare BEFORE AFTER`: pairs requests of two runs by service and
//! client and states how the source address, reply path and outcome changed,
//! which services and clients got worse (regressions), and whether the
//! expectations of the change record hold. Each side is a
//! tuplecorr report (JSON, NDJSON, CSV or Parquet, detected) or a comma-separated list
//! of captures, which the caller runs through `drive::pipeline::analyze`. Takes
//! findings or report files; gives a `Comparison` and its bytes.

pub mod diff;
pub mod expect;
pub mod load;
pub mod model;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod predicted;
pub mod regress;
pub mod why;
pub mod write;

pub use diff::{compare, Comparison, LabelSources, Pairing, SideSummary, Sides};
pub use expect::{Expectation, ExpectationResult, SourceWant};
pub use load::{load_report, LoadError};
pub use regress::{Regression, Worse};
pub use write::{write, CompareFormat};

use std::path::{Path, PathBuf};

/// True when the comparison passes: every expectation holds, and no pairing
/// regressed unless regressions are allowed (`--allow-regressions`).
pub fn passes(c: &Comparison) -> bool {
    expect::all_hold(c) && (c.regressions_allowed || c.regressions.is_empty())
}

/// What one side of `compare` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// A tuplecorr report file.
    Report(PathBuf),
    /// Captures in path order, to be analysed.
    Captures(Vec<String>),
}

/// An existing file is a report; otherwise a comma-separated list is captures;
/// anything else is taken as a report path (and fails to load with its name).
pub fn side_of(arg: &str) -> Side {
    if Path::new(arg).is_file() || !arg.contains(',') {
        Side::Report(PathBuf::from(arg))
    } else {
        Side::Captures(arg.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comma_list_is_captures_and_a_file_is_a_report() {
        assert_eq!(
            side_of("decap.pcap, egress.pcap,backend.pcap"),
            Side::Captures(vec!["decap.pcap".into(), "egress.pcap".into(), "backend.pcap".into()])
        );
        assert_eq!(side_of("before.json"), Side::Report("before.json".into()));
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join("a,b.json");
        std::fs::write(&odd, "{}").unwrap();
        let odd = odd.to_str().unwrap();
        assert_eq!(side_of(odd), Side::Report(odd.into()));
    }
}
