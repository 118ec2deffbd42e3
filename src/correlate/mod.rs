//! Pairs flows of neighbouring captures by evidence that survives NAT (ISN,
//! stream fingerprints, IP ID) behind a clock-offset-corrected time gate.
//! Never formats text, never reads captures.
