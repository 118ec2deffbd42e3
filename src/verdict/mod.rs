//! Correlation → Findings: per request the rewrites per boundary, the reply path,
//! the outcome, timing and one explanation line; per boundary its traits. No I/O.

pub mod model;

pub use model::*;
