//! tuplecorr: for each request seen in tcpdump captures taken at several points of
//! one path, where was its source (or destination) rewritten, did the reply come
//! back the same way, and how did it end.
//!
//! ```text
//!  read  ->  decode  ->  flows (per capture)  ->  correlate (across captures)  ->  verdict  ->  report
//!  bytes     Packet      FlowTable                 Correlation                    Findings     bytes
//! ```
//!
//! Who may use whom (no arrow points upstream): `pipeline -> read, decode, flows,
//! correlate, verdict, warning` · `decode -> read` · `flows -> decode` ·
//! `correlate -> flows` · `verdict -> correlate, flows, warning` ·
//! `report -> verdict, warning, config, flowid, time` · `compare -> pipeline, report, verdict` ·
//! `verdict -> flowid` (a leaf: Community ID and Wireshark filters) ·
//! `inspect -> read, decode, flows, pipeline, time, warning` (`tuplecorr inspect`) ·
//! `ladder -> flows, correlate, read` (per-request packet events, beside the findings) ·
//! `report -> ladder` (the HTML page) · `merge -> read, decode, ladder, verdict`
//! (`--pcapng`: reads the captures again, after the verdicts) ·
//! `pipeline -> shard -> flows, correlate, config, time, warning` (time shards:
//! which files a shard reads, where it could differ from the whole run) ·
//! `stream -> pipeline, shard, config, read, verdict` (`--stream`: one pass,
//! correlated window by window) ·
//! `time` (RFC 3339) is a leaf (test and bench captures come from the dev-only
//! workspace crate `tuplecorr-synth`, in `synth/`) ·
//! `cli -> run, config` (the only clap user; gives a plain `run::Run`) ·
//! `run -> config, compare` (each form's settings, above every stage;
//! `config` below them names no stage above it) ·
//! `app` is what the binary runs: a `Run` → the stages → `report`, written by
//! `output` (`-o`: never over an input, a directory or a device); it never sees clap.
//! `verdict` gives typed findings (addresses, ns, capture indices, enums); `report`
//! owns every word and the wire contract (`report::schema`).
//! Check: `rg 'crate::(report|verdict)' src/{read,decode,flows,correlate}` stays empty.
//!
//! The stack, top first: a module takes only from the groups below its own
//! (`tests/integration/architecture.rs` reads this list and every `crate::`
//! path of `src/`, and fails on a module missing here or an import that runs
//! up or sideways):
//!
//! ```text
//! app > cli > inspect merge > drive run > checks compare tunnels > report
//!     > fragments why > ladder steps verdict > correlate > flows > decode progress
//!     > output read > config > flowid names time warning
//! ```
#![forbid(unsafe_code)]

pub mod app;
pub mod checks;
pub mod cli;
pub mod compare;
pub mod config;
pub mod correlate;
pub mod decode;
pub mod drive;
pub mod flowid;
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
pub mod steps;
pub mod time;
pub mod tunnels;
pub mod verdict;
pub mod warning;
pub mod why;

/// The version written into every report (`"tuplecorr": "0.1.0"`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
