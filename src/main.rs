//! The `tuplecorr` binary: parse the command line into a plain run, run it,
//! map the result to an exit status. Everything else is in the library.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use tuplecorr::app::{self, Error};

fn main() -> ExitCode {
    let result = tuplecorr::cli::parse_run().map_err(Error::from).and_then(app::run);
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS, // `| head` is not an error
        Err(err) => {
            eprintln!("tuplecorr: error: {err}");
            ExitCode::from(app::EXIT_ERROR)
        }
    }
}
