//! tuplecorr: for each request seen in tcpdump captures taken at several points of
//! one path, where was its source (or destination) rewritten, did the reply come
//! back the same way, and how did it end.
//!
//! ```text
//!  read  ->  decode  ->  flows (per capture)  ->  correlate (across captures)  ->  verdict  ->  report
//!  bytes     Packet      FlowTable                 Correlation                    Findings     bytes
//! ```
//!
//! Who uses whom (every arrow points down the stack below):
//! `read -> config, warning` (pcap/pcapng/gzip framing) · `decode -> read` ·
//! `flows -> decode, read, config` (per capture) · `correlate -> flows, config`
//! (across captures) · `verdict -> correlate, flows, decode, warning` ·
//! `steps -> correlate, flows` (clock steps inside a capture) ·
//! `fragments -> verdict, correlate, flows` (after the verdicts) ·
//! `ladder -> flows, correlate, read` (per-request packet events, beside the findings) ·
//! `why -> verdict, config` (`--why`: the nat rule and conntrack entry behind a change) ·
//! `report -> verdict, ladder, why, names, output, config, time` (the HTML page
//! from `ladder`; `report::flowid` writes Community IDs and Wireshark filters) ·
//! `drive -> read, decode, flows, correlate, verdict, steps, fragments, ladder,
//! report, config, time, warning`: the drivers (see `drive`): `drive::pipeline`
//! reads every point then correlates, `drive::stream` runs `--stream`/`--follow`
//! window by window, both read each point through `drive::ingest` (the
//! per-capture stage, which counts each capture's overlays and tunnels in
//! `drive::tunnels`), and `drive::shard` plans which files and records a time
//! shard reads ·
//! `compare -> report, verdict, read, config, time` (two reports or runs; the
//! captures of a side are run by `app` through `drive::pipeline`) ·
//! `checks -> report, verdict, output, config, time` (mistakes users make) ·
//! `inspect -> drive, read, decode, flows, report` (`tuplecorr inspect`) ·
//! `merge -> drive, read, decode, flows, ladder, verdict, report` (`--pcapng`:
//! reads the captures again, after the verdicts) ·
//! `progress -> read` (the only indicatif user) ·
//! `time` (RFC 3339), `names` (`--names`) and `warning` are leaves (test and bench captures come from the
//! dev-only workspace crate `tuplecorr-synth`, in `synth/`) ·
//! `cli -> run, config, compare, drive, output, report, verdict, why, time` (the
//! only clap user; gives a plain `run::Run`; the others for what its flags parse to) ·
//! `run -> config, compare` (each form's settings, above every stage;
//! `config` below them names no stage above it) ·
//! `app` is what the binary runs: a `Run` → the stages → `report`, written by
//! `output` (`-o`: never over an input, a directory or a device); it never sees clap.
//! `verdict` gives typed findings (addresses, ns, capture indices, enums); `report`
//! owns every word and the wire contract (`report::wire`, made by `report::schema`).
//! Check: `rg 'crate::(report|verdict)' src/{read,decode,flows,correlate}` stays empty.
//!
//! The stack, top first: a module takes only from the groups below its own
//! (`tests/integration/architecture.rs` reads this list and every `crate::`
//! path of `src/`, and fails on a module missing here or an import that runs
//! up or sideways):
//!
//! ```text
//! app > cli > inspect merge > drive run > checks compare > report
//!     > fragments why > ladder steps verdict > correlate > flows > decode progress
//!     > output read > config > names time warning
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
pub mod verdict;
pub mod warning;
pub mod why;

/// The version written into every report (`"tuplecorr": "0.1.0"`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
