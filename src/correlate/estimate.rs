//! What a clock estimate is (`clock` makes them, `candidates` reads them to
//! set its time gates): named apart from both, so neither names the other's
//! types back.

/// How a capture's offset was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetMethodKind {
    Reference,
    RequestReply,
    OneWay,
    Manual,
    /// A later sub-point of a split capture: the clock of the capture's first
    /// point (one file, one clock).
    SameCapture,
    /// Beyond `--max-offset`: from pairs found without time (the same TCP
    /// ISN, first datagram or echo), at least [`FAR_SAMPLES`](super::clock::FAR_SAMPLES) of them agreeing
    /// within [`FAR_SPREAD_NS`](super::clock::FAR_SPREAD_NS).
    TimeFree,
    None,
}

/// A capture's clock relative to capture 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockEstimate {
    pub offset_ns: i64,
    /// Median absolute deviation of the samples (accumulated along the path).
    pub spread_ns: i64,
    pub samples: usize,
    pub method: OffsetMethodKind,
}
