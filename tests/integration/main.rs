//! One integration-test binary; themed modules.

mod decode;
