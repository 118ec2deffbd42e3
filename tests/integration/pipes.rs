//! Inputs readable only once (issue "Live"): named FIFOs, process substitution
//! (`/dev/fd/N`) and standard input are read in one pass from the first byte,
//! with no second open and no peek, so the run gives what it gives on the
//! files; no identical-input warning fires between different pipes; one pipe
//! given twice, or `--pcapng` (which reads every capture again) over a pipe,
//! is refused before anything is read.

use crate::util::write_mix_set;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A run's output (read as it comes, so a large report never blocks the
/// child), or a failure when it has not ended within `limit` (a reader waiting
/// on a pipe forever): the child is killed by its PID first.
fn finish_within(child: Child, limit: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    match rx.recv_timeout(limit) {
        Ok(o) => o,
        Err(_) => {
            crate::util::signal(pid, "KILL");
            let o = rx.recv().unwrap();
            panic!("still running after {limit:?}: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
}

/// Writers of `files` into new FIFOs in `dir` (one `cat` each, as tcpdump
/// writing `-w` into a FIFO would): the FIFO paths and the writer processes.
fn fifos(dir: &Path, files: &[PathBuf]) -> (Vec<PathBuf>, Vec<Child>) {
    let mut paths = Vec::new();
    let mut writers = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let fifo = dir.join(format!("fifo{i}"));
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success(), "mkfifo {}", fifo.display());
        let writer = Command::new("sh")
            .arg("-c")
            .arg("exec cat \"$1\" > \"$2\"")
            .args(["sh", &file.display().to_string(), &fifo.display().to_string()])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        paths.push(fifo);
        writers.push(writer);
    }
    (paths, writers)
}

fn stop(writers: Vec<Child>) {
    for mut w in writers {
        let _ = w.kill();
        let _ = w.wait();
    }
}

fn run(args: &[String], dir: &Path) -> Output {
    let child = crate::util::spawn_tuplecorr(dir, args);
    finish_within(child, Duration::from_secs(60))
}

/// Three captures of a few MB each (far more than a pipe's 64 KiB buffer, so a
/// peek that opened and closed a FIFO would lose bytes).
fn mix(dir: &Path) -> Vec<PathBuf> {
    let names = write_mix_set(dir, 3000);
    let files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    let size = std::fs::metadata(&files[0]).unwrap().len();
    assert!(size > 1 << 20, "the mix is {size} bytes: too small to outgrow a pipe");
    files
}

fn labelled(labels: &[&str], paths: &[PathBuf]) -> Vec<String> {
    labels.iter().zip(paths).map(|(l, p)| format!("{l}={}", p.display())).collect()
}

#[test]
fn three_named_fifos_give_the_report_of_the_files_with_and_without_stream() {
    let dir = tempfile::tempdir().unwrap();
    let files = mix(dir.path());
    let labels = ["decap", "egress", "backend"];
    for extra in [&[][..], &["--stream".to_string()][..]] {
        let mut args = vec!["--format".to_string(), "csv".to_string()];
        args.extend(extra.iter().cloned());
        let mut on_files = args.clone();
        on_files.extend(labelled(&labels, &files));
        let batch = run(&on_files, dir.path());
        assert_eq!(batch.status.code(), Some(0), "{}", String::from_utf8_lossy(&batch.stderr));
        let rows = String::from_utf8_lossy(&batch.stdout).lines().count();
        assert!(rows > 3000, "{rows} rows from the files");

        let (fifos, writers) = fifos(dir.path(), &files);
        let mut on_fifos = args.clone();
        on_fifos.extend(labelled(&labels, &fifos));
        let live = run(&on_fifos, dir.path());
        stop(writers);
        for f in &fifos {
            std::fs::remove_file(f).unwrap();
        }
        let err = String::from_utf8_lossy(&live.stderr);
        assert_eq!(live.status.code(), Some(0), "{extra:?}: {err}");
        assert!(!err.contains("identical") && !err.contains("the same file"), "{extra:?}: {err}");
        assert_eq!(
            String::from_utf8_lossy(&live.stdout),
            String::from_utf8_lossy(&batch.stdout),
            "{extra:?}: FIFOs and files differ"
        );
    }
}

#[test]
fn process_substitution_reads_each_pipe_once_without_an_identical_warning() {
    let dir = tempfile::tempdir().unwrap();
    let files = mix(dir.path());
    let batch = run(
        &["--format".into(), "csv".into(), files[0].display().to_string(), files[1].display().to_string()],
        dir.path(),
    );
    assert_eq!(batch.status.code(), Some(0));
    // bash gives each <(…) its own pipe as /dev/fd/N, all of length 0.
    let script = format!(
        "exec \"$0\" --format csv a=<(cat '{}') b=<(cat '{}')",
        files[0].display(),
        files[1].display()
    );
    let child = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_tuplecorr"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let live = finish_within(child, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&live.stderr);
    assert_eq!(live.status.code(), Some(0), "{err}");
    assert!(!err.contains("identical"), "{err}");
    // The labels differ (a, b against the file names): compare the rows after the header.
    let rows =
        |o: &Output| String::from_utf8_lossy(&o.stdout).lines().skip(1).map(String::from).collect::<Vec<_>>();
    assert_eq!(rows(&live).len(), rows(&batch).len());
    assert!(rows(&live).len() >= 3000);
}

#[test]
fn standard_input_and_a_fifo_together_give_the_report_of_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = mix(dir.path());
    let mut on_files = vec!["--format".to_string(), "json".to_string()];
    on_files.extend(labelled(&["decap", "egress"], &files[..2]));
    let batch = run(&on_files, dir.path());
    let (fifos, writers) = fifos(dir.path(), &files[1..2]);
    let child = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(dir.path())
        .args(["--format", "json", "decap=-", &format!("egress={}", fifos[0].display())])
        .stdin(std::fs::File::open(&files[0]).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let live = finish_within(child, Duration::from_secs(60));
    stop(writers);
    assert_eq!(live.status.code(), Some(0), "{}", String::from_utf8_lossy(&live.stderr));
    let requests = |o: &Output| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["requests"].clone()
    };
    assert_eq!(requests(&live), requests(&batch));
    assert!(requests(&batch).as_array().unwrap().len() >= 3000);
}

#[test]
fn one_fifo_given_twice_and_pcapng_over_a_fifo_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let f = fifo.display().to_string();
    // No writer: any attempt to open the FIFO would hang until the time limit.
    let twice = run(&[format!("decap={f}"), format!("egress={f}")], dir.path());
    assert_eq!(twice.status.code(), Some(2));
    let err = String::from_utf8_lossy(&twice.stderr);
    assert!(
        err.contains(&format!(
            "decap ({f}) and egress ({f}) are the same pipe or FIFO: its bytes can be read only once"
        )),
        "{err}"
    );
    let lab = crate::util::testdata("lab/masquerade-node/backend.pcap");
    let merged = dir.path().join("m.pcapng").display().to_string();
    let pcapng = run(
        &[format!("decap={f}"), format!("backend={}", lab.display()), "--pcapng".into(), merged],
        dir.path(),
    );
    assert_eq!(pcapng.status.code(), Some(2));
    let err = String::from_utf8_lossy(&pcapng.stderr);
    assert!(err.contains("and decap ("), "{err}");
    assert!(err.contains(") is standard input, a pipe or a FIFO, which cannot be read twice"), "{err}");
}
