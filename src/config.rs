//! Plain run settings, built by `cli` from the command line (or by tests directly).
//! No clap here: every stage takes its own small settings struct.

use std::net::IpAddr;
use std::path::PathBuf;

/// Where a capture's bytes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Path(PathBuf),
    Stdin,
}

/// One capture point as given on the command line: `LABEL=PATH`, `PATH` or `-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSpec {
    pub label: String,
    pub source: Source,
}

impl CaptureSpec {
    /// The file as the user named it (`-` for standard input), for messages.
    pub fn display_name(&self) -> String {
        match &self.source {
            Source::Path(p) => p.display().to_string(),
            Source::Stdin => "-".to_string(),
        }
    }
}

/// Settings of the read stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadConfig {
    /// Split uncompressed seekable files larger than this into chunks decoded in
    /// parallel (bytes). Tests lower it so small lab captures really split.
    pub chunk_bytes: u64,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig { chunk_bytes: 64 << 20 }
    }
}

/// Settings of the flow stage.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    /// A UDP exchange silent for longer than this is split (ns).
    pub udp_idle_ns: i64,
    /// Bytes of each direction's stream that are fingerprinted.
    pub fingerprint_len: usize,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig { udp_idle_ns: 10_000_000_000, fingerprint_len: 128 }
    }
}

/// Settings of the correlate stage.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CorrelateConfig {
    /// `--offset LABEL=SECONDS`, as capture index → offset in ns (positive: that
    /// capture's clock runs ahead of capture 1's).
    pub offsets_ns: Vec<(usize, i64)>,
    /// `--max-offset` in ns (default 60 s).
    pub max_offset_ns: Option<i64>,
    /// `--tolerance` in ns; None = 5 × offset spread + 1 ms, capped at 200 ms.
    pub tolerance_ns: Option<i64>,
}

/// Which requests are reported (matching always uses every packet).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Filter {
    pub hosts: Vec<IpAddr>,
    pub nets: Vec<(IpAddr, u8)>,
    pub ports: Vec<u16>,
    pub protos: Vec<String>,
    pub since_ns: Option<i64>,
    pub until_ns: Option<i64>,
}

/// Everything `pipeline::analyze` needs.
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
}
