//! One integration-test binary; themed modules.
mod lab;
