//! One integration-test binary; themed modules.

mod read;
mod util;
