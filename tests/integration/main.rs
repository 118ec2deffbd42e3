//! One integration-test binary; themed modules.

/// The report fixtures name their types through `crate::verdict`, as inside the library.
mod verdict {
    pub use tuplecorr::verdict::*;
}

#[allow(dead_code)]
#[path = "../../src/report/fixtures.rs"]
mod fixtures;

mod adversarial;
mod app;
mod architecture;
mod cli;
mod client_address;
mod compare_lab;
mod corpus_nat;
mod decode;
mod docs;
mod follow;
mod formats;
mod fragments;
mod golden;
mod honest_input;
mod identity;
mod inspect;
mod install;
mod lab;
mod lab_json;
mod lab_reports;
mod lab_verdicts;
mod limits;
mod lost;
mod matching;
mod messages;
mod mistakes;
mod names;
mod options;
mod output;
mod overlays;
#[cfg(feature = "parquet")]
mod parquet;
mod pictures;
mod pipes;
mod pool;
mod premises;
mod properties;
mod read;
mod regression;
mod resources;
mod rotation;
mod shards;
#[cfg(feature = "parquet")]
mod spark;
mod stream;
mod terminal;
mod util;
mod verdicts_mutation;
mod why;
mod writer;
