//! The `tuplecorr` binary: parse the command line, run the pipeline, write the
//! report, map the result to an exit status. Everything else is in the library.
#![forbid(unsafe_code)]

use clap::Parser;
use std::process::ExitCode;
use tuplecorr::cli::{Args, Command};

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Some(Command::Inspect(a)) => tuplecorr::app::inspect(&a),
        Some(Command::Compare(a)) => tuplecorr::app::compare(&a),
        None => tuplecorr::app::correlate(&args.correlate),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) if tuplecorr::app::is_broken_pipe(&err) => ExitCode::SUCCESS, // `| head` is not an error
        Err(err) => {
            eprintln!("tuplecorr: error: {err:#}");
            ExitCode::from(tuplecorr::app::EXIT_ERROR)
        }
    }
}
