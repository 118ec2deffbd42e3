//! Live inputs (`--follow`): a capture that is still being written — a FIFO,
//! a pipe from `<(ssh host tcpdump -U -w -)`, standard input, or a regular
//! file tcpdump is writing — read once from its first byte as it grows.
//!
//! One pump thread per input opens it (a FIFO's open waits for its writer)
//! and reads it into a bounded channel; the framing reads from the channel.
//! While no byte comes, the reader wakes every [`TICK`] and calls the
//! caller's `on_quiet` (so a silent point's clock still runs on), and ends
//! the input when it has given nothing for the idle limit, when the run is
//! asked to stop (SIGINT/SIGTERM), or at the end of a pipe. A regular file
//! has no end while it is written: at its current end the pump waits and
//! reads again (as `tail -f`), so only the idle limit or a stop ends it.

use super::{read_stream, Progress, ReadError, ReadErrorKind, Who};
use super::{CaptureSpec, Source};
use crate::read::CaptureInfo;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How often a silent input wakes its reader.
pub const TICK: Duration = Duration::from_millis(200);

/// Bytes a pump reads at once.
const PUMP_CHUNK: usize = 64 << 10;

/// Chunks a pump may have read ahead of the framing (bounded memory: 1 MiB).
const PUMP_AHEAD: usize = 16;

/// How a live input ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveEnd {
    /// The writer closed the pipe (or the file could not grow: never for a file).
    Eof,
    /// No byte came for the idle limit.
    Idle,
    /// The run was asked to stop.
    Stopped,
}

/// What a live read is told and calls.
pub struct Live<'a> {
    /// An input silent this long is ended.
    pub idle: Duration,
    /// Set when the run is asked to stop (a signal): ends the input at once.
    pub stop: &'a AtomicBool,
    /// Called about every [`TICK`] while no byte comes, with when the pump
    /// read the last bytes that came (every record of them already handed
    /// over): the input's clock has run on since then.
    pub on_quiet: &'a dyn Fn(Instant),
}

/// Reads one live capture, calling `on_record` for every record as it comes.
pub fn read_live(
    spec: &CaptureSpec,
    capture: usize,
    progress: &dyn Progress,
    live: Live<'_>,
    on_record: &mut dyn FnMut(&super::RawRecord<'_>),
) -> Result<(CaptureInfo, LiveEnd), ReadError> {
    let file = spec.display_name();
    let (tx, rx) = sync_channel::<Pumping>(PUMP_AHEAD);
    let source = spec.source.clone();
    // Detached: a pump blocked in the read of a silent pipe cannot be woken;
    // it ends at its next byte (its channel is gone) or with the process.
    std::thread::spawn(move || pump(source, tx));
    let end = std::cell::Cell::new(LiveEnd::Eof);
    let input = Pumped { rx, chunk: Vec::new(), at: 0, live, last: Instant::now(), end: &end };
    progress.start(capture, &spec.label, 0);
    let result = read_stream(
        Box::new(input),
        None,
        Who { label: &spec.label, file: &file, capture },
        progress,
        &mut None,
        on_record,
    );
    progress.finish(capture);
    match result {
        Ok(info) => Ok((info, end.get())),
        // Stopped or idle before a whole file header came: nothing was recorded.
        Err(ReadErrorKind::Empty) if end.get() != LiveEnd::Eof => {
            Err(ReadError { file, kind: ReadErrorKind::Empty })
        }
        Err(kind) => Err(ReadError { file, kind }),
    }
}

/// What a pump sends: when it read, and the bytes (empty: a file had no more
/// for now) or the error.
type Pumping = (Instant, io::Result<Vec<u8>>);

/// A pump's side of its channel; each call is false once nobody listens.
struct Out<'a>(&'a std::sync::mpsc::SyncSender<Pumping>);

impl Out<'_> {
    /// Sends bytes read now.
    fn bytes(&self, bytes: Vec<u8>) -> bool {
        self.0.send((Instant::now(), Ok(bytes))).is_ok()
    }

    /// A file at its end for now: waits a moment and says so (an empty chunk,
    /// which also finds out whether the reader still listens).
    fn wait(&self) -> bool {
        std::thread::sleep(TICK / 2);
        self.bytes(Vec::new())
    }

    /// Sends the error that ends the input.
    fn fail(&self, e: io::Error) {
        let _ = self.0.send((Instant::now(), Err(e)));
    }
}

/// Opens `source` and sends its bytes until its end (a pipe) or until nobody
/// listens; a regular file is read on at its end as it grows.
fn pump(source: Source, tx: std::sync::mpsc::SyncSender<Pumping>) {
    let out = Out(&tx);
    if let Source::Path(path) = &source {
        if is_pattern(path) {
            return pump_rotated(path, &out);
        }
    }
    let (mut input, growing): (Box<dyn Read>, bool) = match source {
        Source::Stdin => (Box::new(io::stdin()), false),
        Source::Path(path) => match std::fs::File::open(&path) {
            Ok(f) => {
                let growing = f.metadata().is_ok_and(|m| m.is_file());
                (Box::new(f), growing)
            }
            Err(e) => return out.fail(e),
        },
    };
    loop {
        let mut buf = vec![0u8; PUMP_CHUNK];
        let going = match input.read(&mut buf) {
            // a file's end for now: wait for the writer
            Ok(0) if growing => out.wait(),
            Ok(0) => false,
            Ok(n) => {
                buf.truncate(n);
                out.bytes(buf)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => true,
            Err(e) => {
                out.fail(e);
                false
            }
        };
        if !going {
            return;
        }
    }
}

/// True when the file name of `path` holds `*` or `?`: a rotation pattern
/// (`decap.pcap*` for `tcpdump -C`, `decap-*.pcap` for `-G`).
pub fn is_pattern(path: &std::path::Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(['*', '?']))
}

/// Whether `name` matches the glob `pattern` (`*`: any run, `?`: one character).
fn glob_match(pattern: &[char], name: &[char]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => (0..=name.len()).any(|i| glob_match(rest, &name[i..])),
        Some(('?', rest)) => !name.is_empty() && glob_match(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && glob_match(rest, &name[1..]),
    }
}

/// The files of a rotation pattern, oldest first (by modification time, then name).
fn rotated(pattern: &std::path::Path) -> Vec<std::path::PathBuf> {
    let dir = match pattern.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let Some(glob) = pattern.file_name().and_then(|n| n.to_str()) else { return Vec::new() };
    let glob: Vec<char> = glob.chars().collect();
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<(std::time::SystemTime, String)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let chars: Vec<char> = name.chars().collect();
            let modified = e.metadata().ok()?.modified().ok()?;
            glob_match(&glob, &chars).then_some((modified, name))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, name)| dir.join(name)).collect()
}

/// Classic pcap: a file's header, which the files after the first of a
/// rotation repeat (dropped when it is the first file's, so the framing sees
/// one capture; pcapng sections follow each other as they are).
const PCAP_HEADER: usize = 24;

/// [`pump`] of a rotation pattern: each file in turn, oldest first, as it
/// grows; when its writer has moved on to a newer file (one exists and this
/// one gave nothing for a while), the newer one.
fn pump_rotated(pattern: &std::path::Path, out: &Out<'_>) {
    let mut read: Vec<std::path::PathBuf> = Vec::new();
    let mut first_header: Option<Vec<u8>> = None;
    loop {
        let next = rotated(pattern).into_iter().find(|f| !read.contains(f));
        let Some(path) = next else {
            // no file yet (tcpdump has not opened it), or every one read
            if !out.wait() {
                return;
            }
            continue;
        };
        read.push(path.clone());
        let mut file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) => return out.fail(e),
        };
        let mut head: Vec<u8> = Vec::new();
        loop {
            let mut buf = vec![0u8; PUMP_CHUNK];
            match file.read(&mut buf) {
                Ok(0) => {
                    // at its end for now: a newer file means its writer moved on
                    let newer = rotated(pattern).into_iter().any(|f| !read.contains(&f));
                    if newer && head.len() >= PCAP_HEADER {
                        // read what came meanwhile, then go on
                        let mut rest = Vec::new();
                        let got = file.read_to_end(&mut rest).is_ok() && !rest.is_empty();
                        if got && !out.bytes(rest) {
                            return;
                        }
                        break;
                    }
                    if !out.wait() {
                        return;
                    }
                }
                Ok(n) => {
                    buf.truncate(n);
                    let mut bytes = buf;
                    if head.len() < PCAP_HEADER {
                        // the file's header: the first file's is sent, a later one's
                        // equal to it is dropped
                        let take = (PCAP_HEADER - head.len()).min(bytes.len());
                        head.extend(bytes.drain(..take));
                        if head.len() < PCAP_HEADER {
                            continue;
                        }
                        let send_head = match &first_header {
                            None => {
                                first_header = Some(head.clone());
                                true
                            }
                            Some(h) => *h != head || super::pcap::sniff(h).is_none(),
                        };
                        if send_head {
                            bytes.splice(0..0, head.iter().copied());
                        }
                    }
                    if !bytes.is_empty() && !out.bytes(bytes) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return out.fail(e),
            }
        }
    }
}

/// The framing's side of a pump.
struct Pumped<'a> {
    rx: Receiver<Pumping>,
    chunk: Vec<u8>,
    at: usize,
    live: Live<'a>,
    /// When the pump read the last byte (not when the framing took it: a
    /// reader held up by the run must not take its input for silent).
    last: Instant,
    end: &'a std::cell::Cell<LiveEnd>,
}

impl Read for Pumped<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut quiet_since = Instant::now();
        loop {
            if self.at < self.chunk.len() {
                let n = buf.len().min(self.chunk.len() - self.at);
                buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.live.stop.load(Ordering::Relaxed) {
                self.end.set(LiveEnd::Stopped);
                return Ok(0);
            }
            // Silent for the idle limit as the pump saw it: when it found a
            // file's end, or now when it sends nothing (blocked in a read).
            let silent_since = |at: Instant| at.saturating_duration_since(self.last) >= self.live.idle;
            match self.rx.recv_timeout(TICK) {
                Ok((at, Ok(bytes))) if bytes.is_empty() => {
                    if silent_since(at) {
                        self.end.set(LiveEnd::Idle);
                        return Ok(0);
                    }
                }
                Ok((at, Ok(bytes))) => {
                    (self.chunk, self.at, self.last) = (bytes, 0, at);
                    continue;
                }
                Ok((_, Err(e))) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    if silent_since(Instant::now()) {
                        self.end.set(LiveEnd::Idle);
                        return Ok(0);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(0),
            }
            if quiet_since.elapsed() >= TICK {
                quiet_since = Instant::now();
                (self.live.on_quiet)(self.last);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &std::path::Path) -> CaptureSpec {
        CaptureSpec { label: "x".into(), source: Source::Path(path.to_path_buf()) }
    }

    #[test]
    fn a_growing_file_is_read_as_it_grows_and_ends_after_the_idle_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.pcap");
        let lab = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab/reject/decap.pcap");
        let bytes = std::fs::read(&lab).unwrap();
        // The header and part of the records now, the rest 600 ms later.
        let cut = bytes.len() / 2;
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let (p, rest) = (path.clone(), bytes[cut..].to_vec());
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
            f.write_all(&rest).unwrap();
        });
        let stop = AtomicBool::new(false);
        let quiet = std::cell::Cell::new(0u32);
        let on_quiet = |_| quiet.set(quiet.get() + 1);
        let live = Live { idle: Duration::from_millis(1500), stop: &stop, on_quiet: &on_quiet };
        let mut n = 0u64;
        let started = Instant::now();
        let (info, end) =
            read_live(&spec(&path), 0, &super::super::NoProgress, live, &mut |_| n += 1).unwrap();
        writer.join().unwrap();
        let whole = crate::read::read_bytes("x", &bytes, &mut |_| {}).unwrap();
        assert_eq!((n, info.packets), (whole.packets, whole.packets), "every record, the late half too");
        assert_eq!(end, LiveEnd::Idle);
        assert!(started.elapsed() >= Duration::from_millis(1500), "{:?}", started.elapsed());
        assert!(quiet.get() >= 3, "silent ticks: {}", quiet.get());
    }

    #[test]
    fn a_rotation_pattern_matches_the_files_tcpdump_names() {
        let m = |p: &str, n: &str| glob_match(&p.chars().collect::<Vec<_>>(), &n.chars().collect::<Vec<_>>());
        assert!(m("decap.pcap*", "decap.pcap") && m("decap.pcap*", "decap.pcap12"));
        assert!(m("decap-*.pcap", "decap-120000.pcap") && m("decap.pcap?", "decap.pcap1"));
        assert!(
            !m("decap.pcap*", "egress.pcap")
                && !m("decap.pcap?", "decap.pcap")
                && !m("decap-*.pcap", "decap-1.pcapng")
        );
        assert!(
            is_pattern(std::path::Path::new("/x/decap.pcap*"))
                && !is_pattern(std::path::Path::new("/x*/decap.pcap"))
        );
        let dir = tempfile::tempdir().unwrap();
        for name in ["decap.pcap", "decap.pcap1", "egress.pcap"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let found = rotated(&dir.path().join("decap.pcap*"));
        assert_eq!(found, [dir.path().join("decap.pcap"), dir.path().join("decap.pcap1")]);
    }

    #[test]
    fn a_stop_ends_a_silent_input_with_what_it_gave() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.pcap");
        let lab = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab/reject/decap.pcap");
        std::fs::copy(&lab, &path).unwrap();
        let stop = AtomicBool::new(false);
        let on_quiet = |_| stop.store(true, Ordering::Relaxed);
        let live = Live { idle: Duration::from_secs(60), stop: &stop, on_quiet: &on_quiet };
        let started = Instant::now();
        let (info, end) = read_live(&spec(&path), 0, &super::super::NoProgress, live, &mut |_| {}).unwrap();
        assert_eq!(end, LiveEnd::Stopped);
        assert!(info.packets > 0);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
