//! `--format parquet` in a build without the `parquet` feature (the slim
//! static binary): the same names as `parquet.rs`, each refusing with
//! [`crate::report::PARQUET_MISSING`]. The command line refuses the format
//! before any work (exit 2); these are the backstop for a library caller.

use crate::report::words::Words;
use crate::verdict as v;
use std::io::{self, Write};

/// The key of the key-value metadata that holds the rest of the report.
pub const METADATA_KEY: &str = "tuplecorr.report";

fn missing() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, crate::report::PARQUET_MISSING)
}

/// Refuses: this build has no Parquet writer.
pub fn write_parquet_with(_: &Words<'_>, _: &v::Findings, _: &mut (dyn Write + Send)) -> io::Result<()> {
    Err(missing())
}

/// `--stream --format parquet` without the writer: every call refuses.
pub struct ParquetStream<'o> {
    _out: &'o mut (dyn Write + Send),
}

impl<'o> ParquetStream<'o> {
    pub fn new(out: &'o mut (dyn Write + Send)) -> ParquetStream<'o> {
        ParquetStream { _out: out }
    }

    /// Refuses: this build has no Parquet writer.
    pub fn window(&mut self, _: &Words<'_>, _: &[v::Request]) -> io::Result<()> {
        Err(missing())
    }

    /// Refuses: this build has no Parquet writer.
    pub fn finish(self, _: &Words<'_>, _: &v::Findings) -> io::Result<()> {
        Err(missing())
    }
}
