//! `-o` never destroys (issue 10): `-o -` is standard output, devices and FIFOs
//! are written in place, a symlink is written through, an input capture or a
//! directory is refused, an unwritable folder is named. And a reader that
//! closes the pipe after one line ends every format of every subcommand with
//! exit 0 and nothing on stderr. Runs the built binary in temporary folders.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tuplecorr"));
    c.env_remove("NO_COLOR");
    c
}

/// The lab's `reject` captures copied into `dir` (so tests may point `-o` at them).
fn lab_copy(dir: &Path) -> Vec<String> {
    let src = crate::util::testdata("lab/reject");
    ["decap.pcap", "egress.pcap", "backend.pcap"]
        .iter()
        .map(|f| {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
            f.to_string()
        })
        .collect()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The CSV report of the `reject` captures in `dir`, as written to stdout.
fn csv_on_stdout(dir: &Path) -> Vec<u8> {
    let o = run(dir, &["--quiet", "--format", "csv", "decap.pcap", "egress.pcap", "backend.pcap"]);
    assert!(o.status.success(), "{}", stderr(&o));
    o.stdout
}

#[test]
fn dash_is_standard_output_and_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    let o = run(
        dir.path(),
        &["--quiet", "--format", "csv", "-o", "-", "decap.pcap", "egress.pcap", "backend.pcap"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, csv_on_stdout(dir.path()));
    assert!(o.stdout.starts_with(b"request,proto,"));
    assert_eq!(names(dir.path()), ["backend.pcap", "decap.pcap", "egress.pcap"]);
}

#[test]
fn dev_null_is_written_and_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    for args in [
        &["--quiet", "-o", "/dev/null", "decap.pcap", "egress.pcap", "backend.pcap"][..],
        &["compare", "--quiet", "-o", "/dev/null", "decap.pcap,egress.pcap", "decap.pcap,backend.pcap"][..],
    ] {
        let o = run(dir.path(), args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
    assert_eq!(names(dir.path()), ["backend.pcap", "decap.pcap", "egress.pcap"]);
}

#[test]
fn dev_stdout_redirected_to_a_file_writes_the_file_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    let out = std::fs::File::create(dir.path().join("redirected.csv")).unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args([
            "--quiet",
            "--format",
            "csv",
            "-o",
            "/dev/stdout",
            "decap.pcap",
            "egress.pcap",
            "backend.pcap",
        ])
        .stdout(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.path().join("redirected.csv")).unwrap(), csv_on_stdout(dir.path()));
    assert!(std::fs::symlink_metadata("/dev/stdout").unwrap().file_type().is_symlink());
    assert_eq!(names(dir.path()), ["backend.pcap", "decap.pcap", "egress.pcap", "redirected.csv"]);
}

/// As a user who may not create files in /dev: the report goes to /dev/null
/// itself, never through a temporary file beside it.
#[test]
fn dev_null_as_a_non_root_user() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    let mut cmd = if nix_uid() == 0 {
        // root: drop to nobody where setpriv exists and nobody can reach the binary and the captures
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_tuplecorr"));
        let probe = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_tuplecorr"))
            .arg("--version")
            .current_dir(dir.path())
            .output();
        let readable =
            std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755));
        if !probe.is_ok_and(|o| o.status.success()) || readable.is_err() {
            eprintln!("skipped: dev_null_as_a_non_root_user (cannot run the binary as nobody here)");
            return;
        }
        c
    } else {
        bin()
    };
    let o = cmd
        .current_dir(dir.path())
        .args(["--quiet", "-o", "/dev/null", "decap.pcap", "egress.pcap", "backend.pcap"])
        .output()
        .unwrap();
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), stderr(&o));
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}

/// The real user id, from /proc (no libc, no unsafe).
fn nix_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap_or("Uid: 0");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    let fifo = dir.path().join("report.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = run(
        dir.path(),
        &["--quiet", "--format", "csv", "-o", "report.fifo", "decap.pcap", "egress.pcap", "backend.pcap"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(reader.join().unwrap(), csv_on_stdout(dir.path()));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_symlink_is_written_through_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    std::fs::create_dir(dir.path().join("reports")).unwrap();
    std::fs::write(dir.path().join("reports/today.csv"), "old").unwrap();
    std::os::unix::fs::symlink("reports/today.csv", dir.path().join("link.csv")).unwrap();
    let o = run(dir.path(), &["--quiet", "-o", "link.csv", "decap.pcap", "egress.pcap", "backend.pcap"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(dir.path().join("link.csv")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(dir.path().join("reports/today.csv")).unwrap(), csv_on_stdout(dir.path()));
    assert_eq!(names(&dir.path().join("reports")), ["today.csv"]);
}

#[test]
fn an_input_capture_is_never_overwritten_by_any_path() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::hard_link(dir.path().join("backend.pcap"), dir.path().join("sub/hard.pcap")).unwrap();
    std::os::unix::fs::symlink("../egress.pcap", dir.path().join("sub/soft.csv")).unwrap();
    let before = std::fs::read(dir.path().join("backend.pcap")).unwrap();
    for (out, label) in [
        ("backend.pcap", "backend"),
        ("./sub/../backend.pcap", "backend"),
        ("sub/hard.pcap", "backend"),
        ("sub/soft.csv", "egress"),
    ] {
        let o = run(dir.path(), &["--quiet", "-o", out, "decap.pcap", "egress.pcap", "backend.pcap"]);
        assert_eq!(o.status.code(), Some(2), "-o {out}");
        let e = stderr(&o);
        assert!(e.contains(&format!("is the input {label}")) && e.contains("refusing"), "-o {out}: {e}");
        assert!(o.stdout.is_empty());
    }
    assert_eq!(std::fs::read(dir.path().join("backend.pcap")).unwrap(), before);
    // compare: the same for its captures and for a report given as a side
    std::fs::write(
        dir.path().join("before.json"),
        run(dir.path(), &["--quiet", "--format", "json", "decap.pcap", "egress.pcap"]).stdout,
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["compare", "--quiet", "-o", "before.json", "before.json", "decap.pcap,egress.pcap"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is the input report"), "{}", stderr(&o));
    let o = run(
        dir.path(),
        &["compare", "--quiet", "-o", "egress.pcap", "before.json", "decap.pcap,egress.pcap"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is the input egress"), "{}", stderr(&o));
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let o = run(dir.path(), &["--quiet", "-o", "out", "decap.pcap", "egress.pcap", "backend.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-o out: is a directory"), "{}", stderr(&o));
    assert!(names(&dir.path().join("out")).is_empty());
}

#[test]
fn a_folder_where_no_temporary_file_can_be_made_is_named() {
    let dir = tempfile::tempdir().unwrap();
    lab_copy(dir.path());
    let o = run(
        dir.path(),
        &["--quiet", "-o", "missing/report.csv", "decap.pcap", "egress.pcap", "backend.pcap"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot create a temporary file in the folder missing"), "{}", stderr(&o));
}

/// Runs the binary with its stdout on a pipe, reads one line and closes the
/// pipe; returns the exit status and stderr.
fn close_after_one_line(dir: &Path, args: &[String]) -> (Option<i32>, String) {
    let mut child =
        bin().current_dir(dir).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "{args:?}: no first line");
    // the reader (and the pipe) is dropped here
    let out = child.wait_with_output().unwrap();
    (out.status.code(), stderr(&out))
}

/// Report files of many services (the fixture's request 1 at 1,500 server
/// ports) so `compare`'s output overflows a pipe's buffer.
fn many_service_reports(dir: &Path) -> (String, String) {
    let mut f = crate::fixtures::findings();
    let one = f.requests[0].clone();
    f.requests = (0..1500u16)
        .map(|i| {
            let mut r = one.clone();
            r.request = u64::from(i) + 1;
            r.captures[0].server = Some(tuplecorr::verdict::Endpoint {
                addr: "198.19.96.10".parse().unwrap(),
                port: Some(1000 + i),
            });
            r
        })
        .collect();
    let before = dir.join("before.json");
    std::fs::write(&before, serde_json::to_vec(&tuplecorr::report::to_wire::findings(&f)).unwrap()).unwrap();
    for r in &mut f.requests {
        r.source.clear();
    }
    let after = dir.join("after.json");
    std::fs::write(&after, serde_json::to_vec(&tuplecorr::report::to_wire::findings(&f)).unwrap()).unwrap();
    (before.to_string_lossy().into_owned(), after.to_string_lossy().into_owned())
}

#[test]
fn a_reader_closing_after_one_line_is_not_an_error_in_any_format() {
    let dir = tempfile::tempdir().unwrap();
    // 1,000 requests: every format's output is far larger than a pipe's buffer
    let files = crate::util::write_mix_set(dir.path(), 1000);
    let (before, after) = many_service_reports(dir.path());
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let mut runs: Vec<Vec<String>> = Vec::new();
    for format in ["table", "csv", "json", "ndjson"] {
        runs.push([strings(&["--quiet", "--color", "never", "--format", format]), files.clone()].concat());
        runs.push(
            [strings(&["compare", "--quiet", "--format", format]), vec![before.clone(), after.clone()]]
                .concat(),
        );
    }
    for format in ["table", "json"] {
        // the same capture 200 times
        runs.push(
            [strings(&["inspect", "--quiet", "--format", format]), vec!["backend.pcap".into(); 200]].concat(),
        );
    }
    for args in &runs {
        let (code, err) = close_after_one_line(dir.path(), args);
        assert_eq!((code, err.as_str()), (Some(0), ""), "{args:?}");
    }
}
