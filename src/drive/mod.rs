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
//! Nothing here formats a report.

pub mod ingest;
pub mod pipeline;
pub mod shard;
pub mod stream;
pub mod tunnels;
