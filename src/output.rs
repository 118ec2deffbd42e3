//! Where a report goes (`-o`), written so that nothing is ever destroyed:
//!
//! - no `-o`, or `-o -`: standard output;
//! - an existing target that is not a regular file (`/dev/null`, a FIFO, a
//!   socket, a terminal), or anything under `/dev` or `/proc` (`/dev/stdout`
//!   redirected to a file): opened and written directly, never replaced;
//! - a regular file or a new name: written to a temporary file beside the final
//!   target, then renamed into place (swapped with an existing report, which is
//!   then removed: [`move_into_place`]), so the name always holds a whole report
//!   and a failed run never leaves half a report.
//!   A symlink is written through: the temporary file goes beside the file the
//!   link points at, and the link stays a link;
//! - a directory, or any input of the run (the same file by device and inode,
//!   also when reached by another path or a link): refused, before anything is
//!   read or written.
//!
//! A closed pipe is not an error (`tuplecorr ... | head -1`): [`is_broken_pipe`]
//! walks an error's whole source chain, since the csv crate wraps the io error.

use std::error::Error;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An output refused before anything is read or written (a directory, an
/// input of the run, two outputs at one place): the command line makes no
/// sense, and says so.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Refused {}

/// One input of the run, for refusing to write over it: its label (or how it
/// was given) and its path.
#[derive(Clone, Debug)]
pub struct Input {
    pub label: String,
    pub path: PathBuf,
}

/// Where the bytes of a report go, decided before the pipeline runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Standard output (no `-o`, or `-o -`).
    Stdout,
    /// An existing file that is not a regular file: written in place.
    Direct(PathBuf),
    /// A regular file (or a new one): temporary file in `dir`, renamed to `file`.
    Replace { file: PathBuf, dir: PathBuf },
}

/// An error while writing the report that says what failed and keeps the io
/// error as its source (so a broken pipe is still recognised).
#[derive(Debug)]
pub struct OutputError {
    message: String,
    source: io::Error,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.message, self.source)
    }
}

impl Error for OutputError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.source)
    }
}

/// True when `err`, or any error in its source chain (also the error an
/// `io::Error` wraps, and the io error inside a csv error), is a closed pipe.
pub fn is_broken_pipe(err: &(dyn Error + 'static)) -> bool {
    let mut next: Option<&(dyn Error + 'static)> = Some(err);
    // A chain is short; the bound only guards against a cycle.
    for _ in 0..32 {
        let Some(e) = next else { return false };
        if let Some(c) = e.downcast_ref::<csv::Error>() {
            // csv::Error gives no source(); its io error is in its kind.
            next = match c.kind() {
                csv::ErrorKind::Io(io) => Some(io),
                _ => None,
            };
            continue;
        }
        next = match e.downcast_ref::<io::Error>() {
            Some(io) if io.kind() == io::ErrorKind::BrokenPipe => return true,
            // io::Error::source() skips the wrapped error itself: visit it.
            Some(io) => match io.get_ref() {
                Some(inner) => Some(inner as &(dyn Error + 'static)),
                None => e.source(),
            },
            None => e.source(),
        };
    }
    false
}

/// Decides where `-o PATH` writes, refusing a directory and any input.
pub fn target(path: Option<&Path>, inputs: &[Input]) -> Result<Target, Refused> {
    target_of(&Out::report(path), inputs)
}

/// One output of a run: the option that names it, what it holds (for
/// messages) and its path (`None`: standard output).
#[derive(Clone, Copy, Debug)]
pub struct Out<'a> {
    pub option: &'a str,
    pub holds: &'a str,
    pub path: Option<&'a Path>,
}

impl<'a> Out<'a> {
    /// The report, `-o`.
    pub fn report(path: Option<&'a Path>) -> Out<'a> {
        Out { option: "-o", holds: "the report", path }
    }
}

/// [`target`] of any output, its messages naming its own option.
pub fn target_of(out: &Out<'_>, inputs: &[Input]) -> Result<Target, Refused> {
    let Out { option, holds, path } = *out;
    let Some(path) = path else { return Ok(Target::Stdout) };
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let shown = path.display();
    match fs::metadata(path) {
        Ok(meta) => {
            if meta.is_dir() {
                return Err(Refused(format!(
                    "{option} {shown}: is a directory; give a file name for {holds}"
                )));
            }
            if let Some(input) = inputs.iter().find(|i| same_file(&meta, &i.path)) {
                return Err(Refused(format!(
                    "{option} {shown}: is the input {} ({}); refusing to write {holds} over it",
                    input.label,
                    input.path.display()
                )));
            }
            // /dev/stdout, /dev/fd/1, /proc/self/fd/1 name an open file of this
            // process (maybe a regular file the shell opened): write to it,
            // never replace what the name resolves to.
            if !meta.is_file() || path.starts_with("/dev") || path.starts_with("/proc") {
                return Ok(Target::Direct(path.to_path_buf()));
            }
            Ok(replace_at(&final_path(path)))
        }
        // A new file, or a link pointing at one not yet made.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(replace_at(&final_path(path))),
        Err(e) => Err(Refused(format!("{option} {shown}: cannot write {holds}: {e}"))),
    }
}

/// The targets of every output of a run, in their order, each checked as
/// [`target_of`] does and then against the ones before it: two outputs on
/// standard output (also by `/dev/stdout`), or two naming one file (also by
/// another path or a link), would mix or lose one of them and are refused,
/// naming both options. `/dev/null` may take any number of them.
pub fn targets(outs: &[Out<'_>], inputs: &[Input]) -> Result<Vec<Target>, Refused> {
    let mut targets = Vec::with_capacity(outs.len());
    let mut places: Vec<(Place, &Out<'_>, bool)> = Vec::new();
    for out in outs {
        let target = target_of(out, inputs)?;
        let stdout = target == Target::Stdout;
        if let Some(place) = place(&target) {
            if let Some((_, first, first_stdout)) = places.iter().find(|(p, _, _)| *p == place) {
                let shown = |o: &Out<'_>| match o.path {
                    None => format!("{} (left out)", o.option),
                    Some(p) => format!("{} {}", o.option, p.display()),
                };
                let why = if stdout || *first_stdout {
                    format!("standard output already takes {} ({})", first.holds, shown(first))
                } else {
                    format!("{} already writes {} there", shown(first), first.holds)
                };
                return Err(Refused(format!("{}: {why}; give {} a file of its own", shown(out), out.holds)));
            }
            places.push((place, out, stdout));
        }
        targets.push(target);
    }
    Ok(targets)
}

/// Where a target's bytes end up, to find two outputs writing one place.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    Stdout,
    File((u64, u64)),
    New(PathBuf),
}

/// The place of a target; `None` for `/dev/null` (any number of outputs may go there).
fn place(target: &Target) -> Option<Place> {
    let id = |p: &Path| fs::metadata(p).ok().as_ref().and_then(file_id);
    let null = id(Path::new("/dev/null"));
    let of = |p: &Path| match id(p) {
        Some(i) if Some(i) == null => None,
        Some(i) => Some(Place::File(i)),
        None => Some(Place::New(absolute(p))),
    };
    match target {
        // what standard output is open on, when the system says
        Target::Stdout => match id(Path::new("/dev/stdout")) {
            Some(i) if Some(i) == null => None,
            Some(i) => Some(Place::File(i)),
            None => Some(Place::Stdout),
        },
        Target::Direct(p) => of(p),
        Target::Replace { file, .. } => of(file),
    }
}

/// A path not yet made, absolute: its folder made canonical, its name kept.
fn absolute(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    fs::canonicalize(dir).map_or_else(|_| path.to_path_buf(), |d| d.join(name))
}

/// The file a path finally names: symlinks followed (at most 40, as the kernel
/// does), each relative link read against the folder of the link.
fn final_path(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match fs::read_link(&p) {
                Ok(to) if to.is_absolute() => p = to,
                Ok(to) => p = p.parent().map_or(to.clone(), |dir| dir.join(&to)),
                Err(_) => return p,
            },
            _ => return p,
        }
    }
    p
}

fn replace_at(file: &Path) -> Target {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Target::Replace { file: file.to_path_buf(), dir }
}

/// (device, inode) of a file, following links.
#[cfg(unix)]
pub fn file_id(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub fn file_id(_meta: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Whether `meta` (of the target) is the file at `path`: same device and inode,
/// or (without inodes) the same canonical path.
fn same_file(meta: &fs::Metadata, path: &Path) -> bool {
    let Ok(other) = fs::metadata(path) else { return false };
    match (file_id(meta), file_id(&other)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Writes a report to `target`; see the module documentation.
pub fn write_to(
    target: &Target,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> Result<(), OutputError> {
    match target {
        Target::Stdout => {
            // Unlocked (Stdout is Send, its lock is not): the Parquet writer
            // needs a Send writer; BufWriter locks once per 8 KiB.
            let mut out = io::BufWriter::new(io::stdout());
            write(&mut out).and_then(|()| out.flush()).map_err(|source| OutputError {
                message: "standard output: cannot write the report".into(),
                source,
            })
        }
        Target::Direct(path) => {
            let err = |source| OutputError {
                message: format!("{}: cannot write the report", path.display()),
                source,
            };
            // append: a no-op for devices and FIFOs; right for `>>` behind /dev/stdout
            let file = fs::OpenOptions::new().append(true).open(path).map_err(err)?;
            let mut out = io::BufWriter::new(file);
            write(&mut out).and_then(|()| out.flush()).map_err(err)
        }
        Target::Replace { file, dir } => replace(file, dir, write),
    }
}

/// Temporary file in `dir`, renamed over `file` once everything is written.
fn replace(
    file: &Path,
    dir: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> Result<(), OutputError> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.tuplecorr-{}.tmp", std::process::id()));
    let created = fs::OpenOptions::new().write(true).create_new(true).open(&tmp);
    let handle = created.map_err(|source| OutputError {
        message: format!(
            "{}: cannot write the report: cannot create a temporary file in the folder {}",
            file.display(),
            dir.display()
        ),
        source,
    })?;
    let result = (|| -> io::Result<()> {
        // A replaced report keeps the permissions of the file it replaces.
        if let Ok(old) = fs::metadata(file) {
            handle.set_permissions(old.permissions())?;
        }
        let mut out = io::BufWriter::new(handle);
        write(&mut out)?;
        out.flush()?;
        drop(out);
        move_into_place(&tmp, file)
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&tmp);
        OutputError { message: format!("{}: cannot write the report", file.display()), source }
    })
}

/// Puts the written temporary file `tmp` at `file`, atomically: `file` names the
/// old report or the new one at every instant, never nothing.
///
/// Over an existing file, Linux swaps the two names (`RENAME_EXCHANGE`) and
/// then removes the old report from the temporary name. A plain rename over an
/// existing file makes ext4 start writing the new file's data out before the
/// rename returns (its `auto_da_alloc` guard for programs that replace files
/// without fsync): 92 ms for a 140 MB JSON report, measured with strace on
/// the bench set. The swap does not start that flush; the report is then
/// as durable as one written to a new name, which is what tuplecorr promises
/// (it never fsyncs). Where the swap is not supported (another filesystem,
/// another system, or the file went away meanwhile) this is a plain rename.
fn move_into_place(tmp: &Path, file: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if fs::symlink_metadata(file).is_ok_and(|m| m.is_file()) {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        if renameat_with(CWD, tmp, CWD, file, RenameFlags::EXCHANGE).is_ok() {
            // `tmp` now names the old report. The new one is in place: a
            // failure to remove the old is said, not an error of the run.
            if let Err(e) = fs::remove_file(tmp) {
                eprintln!(
                    "tuplecorr: warning: {}: the report is written, but the report it replaced is left at {}: {e}",
                    file.display(),
                    tmp.display()
                );
            }
            return Ok(());
        }
    }
    fs::rename(tmp, file)
}

/// Where a report's spill file goes: beside the report (on its filesystem,
/// which has room for the report), else the temporary folder.
pub fn spill_dir(target: &Target) -> PathBuf {
    match target {
        Target::Replace { dir, .. } => dir.clone(),
        Target::Stdout | Target::Direct(_) => std::env::temp_dir(),
    }
}

/// What a streamed report puts aside to write at the end: a buffered file
/// made by [`spill_file`], written, then read back once.
pub struct Spill(io::BufWriter<fs::File>);

impl Spill {
    /// A spill file in `dir` (see [`spill_file`]).
    pub fn new(dir: &Path) -> io::Result<Spill> {
        Ok(Spill(io::BufWriter::with_capacity(1 << 20, spill_file(dir)?)))
    }

    /// Everything written to it, from its start.
    pub fn read_back(self) -> io::Result<io::BufReader<fs::File>> {
        use std::io::Seek;
        let mut file = self.0.into_inner().map_err(|e| e.into_error())?;
        file.seek(io::SeekFrom::Start(0))?;
        Ok(io::BufReader::with_capacity(1 << 20, file))
    }
}

impl Write for Spill {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// A new file in `dir` to write and read back, already removed from the
/// folder (only its handle holds it, so it goes away with the process,
/// also when the process is killed).
fn spill_file(dir: &Path) -> io::Result<fs::File> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!(".tuplecorr-spill-{}-{n}.tmp", std::process::id()));
    let file = fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).map_err(|e| {
        io::Error::new(e.kind(), format!("cannot create a spill file in {}: {e}", dir.display()))
    })?;
    // Where an open file cannot be removed (not on Linux), it is left behind.
    let _ = fs::remove_file(&path);
    Ok(file)
}

/// Decides the target and writes: all of `-o` at once (for callers that have
/// nothing to do between the two).
pub fn write_output(
    path: Option<&Path>,
    inputs: &[Input],
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> Result<(), Box<dyn Error + Send + Sync>> {
    let target = target(path, inputs)?;
    Ok(write_to(&target, write)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(label: &str, path: &Path) -> Input {
        Input { label: label.into(), path: path.to_path_buf() }
    }

    #[test]
    fn two_outputs_on_one_file_or_on_standard_output_are_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path().join("r.csv");
        let again = dir.path().join(".").join("r.csv");
        let warnings = |p| Out { option: "--warnings-to", holds: "the warnings", path: Some(p) };
        let e = targets(&[Out::report(Some(&r)), warnings(&again)], &[]).unwrap_err().0;
        assert!(
            e.starts_with(&format!("--warnings-to {}: -o {} already writes", again.display(), r.display())),
            "{e}"
        );
        let e = targets(&[Out::report(None), warnings(Path::new("-"))], &[]).unwrap_err().0;
        assert!(
            e.contains("--warnings-to -: standard output already takes the report (-o (left out))"),
            "{e}"
        );
        let null = Path::new("/dev/null");
        assert_eq!(targets(&[Out::report(Some(null)), warnings(null)], &[]).unwrap().len(), 2);
        let other = dir.path().join("w.txt");
        assert_eq!(targets(&[Out::report(Some(&r)), warnings(&other)], &[]).unwrap().len(), 2);
    }

    #[test]
    fn dash_and_none_are_stdout() {
        assert_eq!(target(None, &[]).unwrap(), Target::Stdout);
        assert_eq!(target(Some(Path::new("-")), &[]).unwrap(), Target::Stdout);
    }

    #[test]
    fn devices_are_written_directly() {
        assert_eq!(target(Some(Path::new("/dev/null")), &[]).unwrap(), Target::Direct("/dev/null".into()));
    }

    #[test]
    fn a_new_file_goes_through_a_temporary_file_beside_it() {
        let t = target(Some(Path::new("report.csv")), &[]).unwrap();
        assert_eq!(t, Target::Replace { file: "report.csv".into(), dir: ".".into() });
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_replaced_at_its_final_target_and_an_input_by_any_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("sub");
        fs::create_dir(&real).unwrap();
        fs::write(real.join("out.csv"), "old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("sub/out.csv", &link).unwrap();
        let t = target(Some(&link), &[]).unwrap();
        assert_eq!(t, Target::Replace { file: dir.path().join("sub/out.csv"), dir: dir.path().join("sub") });
        let err = target(Some(&link), &[input("backend", &real.join("out.csv"))]).unwrap_err();
        assert!(err.0.contains("is the input backend"), "{}", err.0);
        let err = target(Some(&real), &[]).unwrap_err();
        assert!(err.0.contains("is a directory"), "{}", err.0);
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_report_is_swapped_in_whole_and_the_old_one_is_gone() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.json");
        fs::write(&file, "old report").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
        let old_inode = fs::metadata(&file).unwrap().ino();
        // A reader that opened the old report keeps reading the old bytes.
        let reader = fs::File::open(&file).unwrap();
        let t = target(Some(&file), &[]).unwrap();
        write_to(&t, |out| out.write_all(b"new report")).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "new report");
        let meta = fs::metadata(&file).unwrap();
        assert_ne!(meta.ino(), old_inode, "a new file, not the old one rewritten");
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        assert_eq!(names(dir.path()), ["report.json"], "no temporary or old report left");
        assert_eq!(io::read_to_string(reader).unwrap(), "old report");
        // Again over the report just written, and once to a new name.
        write_to(&t, |out| out.write_all(b"third")).unwrap();
        let other = dir.path().join("other.json");
        write_to(&target(Some(&other), &[]).unwrap(), |out| out.write_all(b"fresh")).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "third");
        assert_eq!(fs::read_to_string(&other).unwrap(), "fresh");
        assert_eq!(names(dir.path()), ["other.json", "report.json"]);
        // A failed write keeps the old report and leaves nothing beside it.
        let failed = write_to(&t, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read_to_string(&file).unwrap(), "third");
        assert_eq!(names(dir.path()), ["other.json", "report.json"]);
    }

    #[test]
    fn broken_pipe_is_found_inside_wrapped_errors() {
        let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        let csv_like = csv::Error::from(pipe);
        let wrapped = io::Error::other(csv_like);
        assert!(is_broken_pipe(&wrapped));
        let boxed: Box<dyn Error + Send + Sync> =
            Box::new(OutputError { message: "x".into(), source: io::Error::other(wrapped) });
        assert!(is_broken_pipe(boxed.as_ref()));
        assert!(!is_broken_pipe(&io::Error::from(io::ErrorKind::PermissionDenied)));
    }
}
