//! The drivers: what runs the stages over the captures.
//!
//! Who calls whom (each file takes only from those below it):
//!
//! ```text
//! stream   --stream / --follow: one pass, correlated window by window
//!   > pipeline   analyze*: each point read in full, then correlated at once
//!   > shard      a time shard: which files and records of a point it reads
//!   > ingest     the per-capture stage: records of one capture read, decoded
//!                and handed to a sink (the flow builder, inspect's tally)
//! ```
//!
//! `app` and `merge` call `pipeline::analyze*`, `app` calls `stream::run`;
//! both drivers read each point through `ingest` (`inspect` too); a shard's
//! reading of a point follows the plan `shard::ReadPlan` gives before it.
//! Nothing here formats a report. `Config` (here) is what a driver is given:
//! the captures and each stage's settings; the drivers' own are
//! `shard::Shard` and `stream::StreamConfig`.

pub mod ingest;
pub mod pipeline;
pub mod shard;
pub mod stream;
pub mod tunnels;

use crate::correlate::{CorrelateConfig, PinnedClocks};
use crate::flows::FlowConfig;
use crate::read::{CaptureSpec, ReadConfig};
use crate::report::Filter;
use shard::Shard;
use stream::StreamConfig;

/// Everything `drive::pipeline::analyze` needs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Config {
    pub captures: Vec<CaptureSpec>,
    pub read: ReadConfig,
    pub flows: FlowConfig,
    pub correlate: CorrelateConfig,
    pub filter: Filter,
    /// Rayon threads; None = rayon's default.
    pub threads: Option<usize>,
    pub quiet: bool,
    /// List flows that matched no request (`--all`).
    pub list_unmatched: bool,
    /// `--shard-start` / `--shard-end`: report only the requests that begin in
    /// this window, reading only the files it needs.
    pub shard: Option<Shard>,
    /// `--clocks-from REPORT`: the clocks and delays to use instead of estimates.
    pub clocks_from: Option<PinnedClocks>,
    /// `--stream`: correlate window by window of capture 1's time, reading
    /// each capture once (`stream`).
    pub stream: Option<StreamConfig>,
    /// Interface names by index (`--names` with `ip -o link` output): they
    /// name the interfaces requests took at the sides of a LINUX_SLL2 capture
    /// (`iface` `eth0`).
    pub link_names: std::collections::BTreeMap<u32, String>,
    /// Per capture point, the time (its own clock) its live input is known to
    /// have stopped recording at (set by a live run per window; empty else).
    pub stopped: Vec<Option<i64>>,
}
