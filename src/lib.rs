//! tuplecorr: for each request seen in tcpdump captures taken at several points of
//! one path, where was its source (or destination) rewritten, did the reply come
//! back the same way, and how did it end.
//!
//! The design — the stages, the modules and which may import which (the
//! stack `tests/integration/architecture.rs` holds the code to), how requests
//! are matched, how a `tcpdump -i any` capture of a forwarding host becomes
//! its two sides — is ARCHITECTURE.md, at the root of the repository. What a
//! run writes, field by field, is the output contract: docs/output.md.
#![forbid(unsafe_code)]

pub mod app;
pub mod checks;
pub mod cli;
pub mod clock_steps;
pub mod compare;
pub mod correlate;
pub mod decode;
pub mod drive;
pub mod flows;
pub mod fragments;
pub mod inspect;
pub mod ladder;
pub mod merge;
pub mod names;
pub mod output;
pub mod progress;
pub mod read;
pub mod report;
pub mod run;
pub mod time;
pub mod verdict;
pub mod warning;
pub mod why;

/// The version written into every report (`"tuplecorr": "0.1.0"`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
