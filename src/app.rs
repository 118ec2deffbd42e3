//! What the binary does for each form of the command line: settings → pipeline →
//! report → exit status. Exit statuses live here, in one place.

use crate::cli::{CompareArgs, CorrelateArgs, InspectArgs};
use crate::progress::Bars;
use crate::report::{self, ReportOptions};
use std::error::Error;
use std::io::{self, Write};
use std::path::Path;

/// Report written (warnings allowed).
pub const EXIT_OK: u8 = 0;
/// `--fail-on` matched.
pub const EXIT_FAIL_ON: u8 = 1;
/// Usage error, or a capture that cannot be opened or is not a capture.
pub const EXIT_ERROR: u8 = 2;

pub type AppError = Box<dyn Error + Send + Sync>;

/// True for a write error caused by a closed pipe (`tuplecorr ... | head`).
pub fn is_broken_pipe(err: &AppError) -> bool {
    err.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn print_warnings(warnings: &[crate::verdict::WarningOut]) {
    for w in warnings {
        let mut place = String::new();
        if let Some(r) = w.record {
            place.push_str(&format!("record {r} "));
        }
        if let Some(o) = w.byte_offset {
            place.push_str(&format!("at byte {o} "));
        }
        let place = if place.is_empty() { String::new() } else { format!("{}: ", place.trim_end()) };
        eprintln!("tuplecorr: warning: {}: {place}{}", w.label, w.message);
    }
}

/// The main form: correlate the captures and write the report.
pub fn correlate(args: &CorrelateArgs) -> Result<u8, AppError> {
    let config = args.to_config()?;
    let bars = Bars::new(config.captures.len(), !config.quiet);
    let findings = with_threads(config.threads, || crate::pipeline::analyze(&config, &bars))??;
    print_warnings(&findings.warnings);
    let options = ReportOptions { format: args.report_format(), summary_only: args.summary, color: false };
    write_output(args.output.as_deref(), |out| report::write(&findings, &options, out))?;
    Ok(EXIT_OK)
}

/// `tuplecorr inspect`.
pub fn inspect(args: &InspectArgs) -> Result<u8, AppError> {
    let _ = args;
    Err("inspect is not written yet".into())
}

/// `tuplecorr compare`.
pub fn compare(args: &CompareArgs) -> Result<u8, AppError> {
    let _ = args;
    Err("compare is not written yet".into())
}

/// Runs `f` on a rayon pool of `threads` threads (the global pool when None).
pub fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, AppError> {
    match threads {
        None => Ok(f()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build()?;
            Ok(pool.install(f))
        }
    }
}

/// Writes to stdout, or to `path` through a temporary file in the same folder
/// that is renamed into place only when everything was written.
pub fn write_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), AppError> {
    match path {
        None => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            write(&mut out)?;
            out.flush()?;
            Ok(())
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            let name =
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
            let tmp = dir.join(format!(".{name}.tuplecorr-{}.tmp", std::process::id()));
            let result = (|| -> io::Result<()> {
                let file = std::fs::File::create(&tmp)?;
                let mut out = io::BufWriter::new(file);
                write(&mut out)?;
                out.flush()?;
                out.get_ref().sync_all()?;
                drop(out);
                std::fs::rename(&tmp, path)
            })();
            if let Err(e) = result {
                let _ = std::fs::remove_file(&tmp);
                return Err(format!("{}: cannot write the report: {e}", path.display()).into());
            }
            Ok(())
        }
    }
}
