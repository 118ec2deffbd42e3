//! One integration-test binary; themed modules.

mod adversarial;
mod decode;
