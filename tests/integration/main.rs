//! One integration-test binary; themed modules.
