//! Shared test helpers: where the corpus (`TUPLECORR_CORPUS`) and testdata live, and reading a
//! capture into owned records so tests can assert on them. Never writes files.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use tuplecorr::read::{self, CaptureInfo, LinkType, NoProgress, ReadError};
use tuplecorr::read::{CaptureSpec, Source};

/// An owned copy of one `RawRecord`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    pub ts_ns: i64,
    pub interface: u32,
    pub link_type: LinkType,
    pub data: Vec<u8>,
    pub orig_len: u32,
    pub record: u64,
    pub byte_offset: u64,
}

/// The environment variable that names the corpus folder: real captures from
/// other projects' test suites, kept outside this repository (`index.tsv` says
/// what each file exercises). CI always sets it; a plain clone skips those tests.
pub const CORPUS_VAR: &str = "TUPLECORR_CORPUS";

/// The corpus folder named by `TUPLECORR_CORPUS`, `None` when the variable is
/// unset or empty. Set to something that is not a corpus folder, it panics: a
/// wrong setting must fail, never silently skip.
pub fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(CORPUS_VAR).filter(|v| !v.is_empty())?);
    assert!(
        dir.join("index.tsv").is_file(),
        "{CORPUS_VAR}={} is not a corpus folder (no index.tsv in it)",
        dir.display()
    );
    Some(dir)
}

/// The corpus folder, for tests that began with `require_corpus!()`.
pub fn corpus_dir() -> PathBuf {
    corpus().unwrap_or_else(|| panic!("{CORPUS_VAR} is unset: begin this test with require_corpus!()"))
}

/// Corpus tests skipped so far in this run.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// How many tests in this binary read the corpus: the `require_corpus!()` calls
/// in their sources (one per test; helpers never call it).
fn corpus_tests() -> usize {
    let marker = concat!("require_corpus", "!()");
    [
        include_str!("read.rs"),
        include_str!("inspect.rs"),
        include_str!("decode.rs"),
        include_str!("corpus_nat.rs"),
        include_str!("overlays.rs"),
        include_str!("fragments.rs"),
        include_str!("app.rs"),
    ]
    .iter()
    .map(|src| src.matches(marker).count())
    .sum()
}

/// True when the corpus is not available and the calling test should return.
/// libtest has no "skipped" result, so the skip is written straight to the
/// process's stderr (past libtest's capture): one line, by the skip that
/// completes the count, saying how many were skipped and why. When the run is
/// filtered (some corpus tests may not run at all), each skip says so itself.
pub fn skip_corpus_test() -> bool {
    if corpus().is_some() {
        return false;
    }
    let n = SKIPPED.fetch_add(1, Ordering::SeqCst) + 1;
    let total = corpus_tests();
    let filtered = std::env::args().skip(1).any(|a| !a.starts_with('-'));
    let line = if filtered {
        let name = std::thread::current().name().unwrap_or("a corpus test").to_string();
        format!("skipped: corpus test {name} ({CORPUS_VAR} unset)\n")
    } else if n == total {
        format!("skipped: {n} corpus tests ({CORPUS_VAR} unset; set it to a corpus folder to run them)\n")
    } else {
        return true;
    };
    let _ = std::io::stderr().write_all(line.as_bytes());
    true
}

/// At the top of a test that reads the corpus: returns from it (a visible skip)
/// when `TUPLECORR_CORPUS` is unset.
macro_rules! require_corpus {
    () => {
        if $crate::util::skip_corpus_test() {
            return;
        }
    };
}
pub(crate) use require_corpus;

/// `testdata/<rel>` in this repository.
pub fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(rel)
}

/// A capture spec for a file, labelled by its file name.
pub fn spec(path: &std::path::Path) -> CaptureSpec {
    let label = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    CaptureSpec { label, source: Source::Path(path.to_path_buf()) }
}

/// Reads a file with `read_capture`, keeping every record.
pub fn read_file(path: &std::path::Path) -> Result<(Vec<Rec>, CaptureInfo), ReadError> {
    let mut recs = Vec::new();
    let info = read::read_capture(&spec(path), 0, &NoProgress, &mut |r| recs.push(own(r)))?;
    Ok((recs, info))
}

/// Reads bytes with `read_bytes`, keeping every record.
pub fn read_mem(label: &str, bytes: &[u8]) -> Result<(Vec<Rec>, CaptureInfo), ReadError> {
    let mut recs = Vec::new();
    let info = read::read_bytes(label, bytes, &mut |r| recs.push(own(r)))?;
    Ok((recs, info))
}

/// An owned copy of a record.
pub fn own(r: &read::RawRecord<'_>) -> Rec {
    Rec {
        ts_ns: r.ts_ns,
        interface: r.interface,
        link_type: r.link_type,
        data: r.data.to_vec(),
        orig_len: r.orig_len,
        record: r.record,
        byte_offset: r.byte_offset,
    }
}

/// Writes the benchmark mix of `connections` requests as `decap.pcap`,
/// `egress.pcap`, `backend.pcap` in `dir` (seed 7, 3000-byte responses) and
/// returns the file names in path order.
pub fn write_mix_set(dir: &std::path::Path, connections: u32) -> Vec<String> {
    write_spread_mix_set(dir, connections, 0)
}

/// [`write_mix_set`] with connection `c` moved `c × extra_ns` later (the mix
/// starts one every 200 µs): a set spread over a longer time.
pub fn write_spread_mix_set(dir: &std::path::Path, connections: u32, extra_ns: i64) -> Vec<String> {
    write_spread_mix_set_with_long(dir, connections, extra_ns, 0, 0)
}

/// [`write_spread_mix_set`] plus `long` long-lived connections
/// (`tuplecorr_synth::mix_long_connection`, one a second from the start),
/// open over the whole set with a response segment every `gap_ns`.
pub fn write_spread_mix_set_with_long(
    dir: &std::path::Path,
    connections: u32,
    extra_ns: i64,
    long: u32,
    gap_ns: i64,
) -> Vec<String> {
    write_spread_mix_set_keeping(dir, connections, extra_ns, long, gap_ns, &|_, _| true)
}

/// [`write_spread_mix_set_with_long`] keeping only the packets `keep(point,
/// time)` chooses (`time`: ns after the mix's start, on that point's clock).
pub fn write_spread_mix_set_keeping(
    dir: &std::path::Path,
    connections: u32,
    extra_ns: i64,
    long: u32,
    gap_ns: i64,
    keep: &dyn Fn(usize, i64) -> bool,
) -> Vec<String> {
    let points = tuplecorr_synth::mix_points();
    let mut caps: Vec<Vec<(i64, Vec<u8>, u32)>> = vec![Vec::new(); points.len()];
    let span = i64::from(connections) * (200_000 + extra_ns);
    for i in 0..long {
        let start = tuplecorr_synth::MIX_T0 + i64::from(i) * 1_000_000_000;
        let (captures, _) = tuplecorr_synth::mix_long_connection(i, 7, start, span, gap_ns);
        for (k, pkts) in captures.points.into_iter().enumerate() {
            caps[k].extend(pkts);
        }
    }
    for c in 0..connections {
        let (captures, _) = tuplecorr_synth::mix_connection(c, 7, 3000);
        let shift = i64::from(c) * extra_ns;
        for (k, pkts) in captures.points.into_iter().enumerate() {
            caps[k].extend(pkts.into_iter().map(|(ts, p, len)| (ts + shift, p, len)));
        }
    }
    let mut files = Vec::new();
    for (k, ((label, pkts), p)) in
        ["decap", "egress", "backend"].iter().zip(caps.iter_mut()).zip(&points).enumerate()
    {
        pkts.retain(|(ts, _, _)| keep(k, ts - tuplecorr_synth::MIX_T0));
        pkts.sort_by_key(|(ts, _, _)| *ts);
        let mut f = std::fs::File::create(dir.join(format!("{label}.pcap"))).unwrap();
        tuplecorr_synth::write_pcap(&mut f, p.snaplen as u32, pkts).unwrap();
        files.push(format!("{label}.pcap"));
    }
    files
}

/// Scenario name and its capture files in path order (testdata/lab/index.tsv).
pub fn lab_scenarios() -> Vec<(String, Vec<String>)> {
    let index = std::fs::read_to_string("testdata/lab/index.tsv").unwrap();
    (index.lines().skip(1))
        .map(|l| {
            let mut cols = l.split('\t');
            let name = cols.next().unwrap().to_string();
            let files = cols.next().unwrap().split(',').map(str::to_string).collect();
            (name, files)
        })
        .collect()
}

/// A classic pcap file is little-endian (by its magic).
fn pcap_le(bytes: &[u8]) -> bool {
    matches!(bytes[..4], [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1])
}

/// A 4-byte word of a classic pcap in its byte order.
fn pcap_word(le: bool, b: &[u8]) -> u32 {
    let b: [u8; 4] = b.try_into().unwrap();
    if le {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    }
}

/// A classic pcap's records shifted by `secs` seconds (as `editcap -t`; the
/// seconds field wraps as a u32 does).
pub fn shift_pcap(bytes: &[u8], secs: i64) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let le = pcap_le(&out);
    let word = |b: &[u8]| pcap_word(le, b);
    let mut at = 24;
    while at + 16 <= out.len() {
        let ts = word(&out[at..at + 4]).wrapping_add_signed(secs as i32);
        out[at..at + 4].copy_from_slice(&if le { ts.to_le_bytes() } else { ts.to_be_bytes() });
        at += 16 + word(&out[at + 8..at + 12]) as usize;
    }
    assert_eq!(at, out.len(), "whole records");
    out
}

/// A classic pcap with the last `n` bytes of records `records` (1-based, as
/// tshark numbers them) inverted: the same packets and tuples, other bytes
/// (as a rewriter that edits payloads, or tcprewrite turning padding into
/// payload, leaves them).
pub fn garble_pcap(bytes: &[u8], records: &[usize], n: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let le = pcap_le(&out);
    let (mut at, mut number) = (24, 0);
    while at + 16 <= out.len() {
        let len = pcap_word(le, &out[at + 8..at + 12]) as usize;
        number += 1;
        if records.contains(&number) {
            out[at + 16 + len - n..at + 16 + len].iter_mut().for_each(|b| *b ^= 0xff);
        }
        at += 16 + len;
    }
    assert_eq!(at, out.len(), "whole records");
    out
}

/// A classic pcap with only its records that hold `marker`.
pub fn keep_pcap(bytes: &[u8], marker: &[u8]) -> Vec<u8> {
    filter_pcap(bytes, |r| holds(r, marker))
}

/// A classic pcap up to and including its first record that holds `marker`
/// (a capture stopped right after it).
pub fn cut_pcap_after(bytes: &[u8], marker: &[u8]) -> Vec<u8> {
    let mut past = false;
    filter_pcap(bytes, |r| {
        let keep = !past;
        past = past || holds(r, marker);
        keep
    })
}

/// A classic pcap without its records `records` (1-based, as tshark numbers
/// them): a capture that lost them.
pub fn drop_records_pcap(bytes: &[u8], records: &[usize]) -> Vec<u8> {
    let mut n = 0;
    filter_pcap(bytes, |_| {
        n += 1;
        !records.contains(&n)
    })
}

/// A classic pcap without its records that hold `marker` but not `unless`
/// (a capture that lost them).
pub fn drop_pcap(bytes: &[u8], marker: &[u8], unless: &[u8]) -> Vec<u8> {
    filter_pcap(bytes, |r| !holds(r, marker) || holds(r, unless))
}

fn holds(record: &[u8], marker: &[u8]) -> bool {
    record.windows(marker.len()).any(|w| w == marker)
}

/// A classic pcap with the records (header and data) for which `keep` is true.
fn filter_pcap(bytes: &[u8], mut keep: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
    let le = pcap_le(bytes);
    let mut out = bytes[..24].to_vec();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let end = at + 16 + pcap_word(le, &bytes[at + 8..at + 12]) as usize;
        if keep(&bytes[at..end]) {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    assert_eq!(at, bytes.len(), "whole records");
    out
}

/// The TCP header of an Ethernet + IPv4 record's data (None for others).
fn tcp_at(data: &[u8]) -> Option<usize> {
    let ipv4 = data.get(12..14) == Some(&[0x08, 0x00]) && data.get(23) == Some(&6);
    ipv4.then(|| 14 + usize::from(data[14] & 0x0f) * 4).filter(|&t| t + 20 <= data.len())
}

/// A classic Ethernet pcap without its TCP SYNs and SYN-ACKs (a capture that
/// started after the handshakes: every connection is seen midstream).
pub fn drop_syns_pcap(bytes: &[u8]) -> Vec<u8> {
    filter_pcap(bytes, |r| tcp_at(&r[16..]).is_none_or(|t| r[16 + t + 13] & 0x02 == 0))
}

/// A classic Ethernet pcap whose TCP port `from` reads `to` either way (as
/// `tcprewrite --portmap`; checksums left as they were).
pub fn portmap_pcap(bytes: &[u8], from: u16, to: u16) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let le = pcap_le(&out);
    let mut at = 24;
    while at + 16 <= out.len() {
        let end = at + 16 + pcap_word(le, &out[at + 8..at + 12]) as usize;
        let data = &mut out[at + 16..end];
        if let Some(t) = tcp_at(data) {
            for p in [t, t + 2] {
                if data[p..p + 2] == from.to_be_bytes() {
                    data[p..p + 2].copy_from_slice(&to.to_be_bytes());
                }
            }
        }
        at = end;
    }
    assert_eq!(at, out.len(), "whole records");
    out
}

/// A classic pcap with every `from` in its records' bytes replaced by `to`
/// (the same length: lengths and offsets stay; checksums as they were).
pub fn replace_pcap(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len(), "a replacement of the same length");
    let mut out = bytes.to_vec();
    let mut at = 24;
    while let Some(i) = out[at..].windows(from.len()).position(|w| w == from) {
        out[at + i..at + i + to.len()].copy_from_slice(to);
        at += i + to.len();
    }
    out
}

/// A classic pcap whose records holding `marker` are sent again `secs`
/// seconds later (appended, as a retry long after the rest); with
/// `only_again` the first sending is gone (a capture that started after it,
/// or lost it).
pub fn resend_pcap(bytes: &[u8], marker: &[u8], secs: i64, only_again: bool) -> Vec<u8> {
    let again = shift_pcap(&keep_pcap(bytes, marker), secs);
    assert!(again.len() > 24, "no record holds the marker");
    let mut out = if only_again { filter_pcap(bytes, |r| !holds(r, marker)) } else { bytes.to_vec() };
    out.extend_from_slice(&again[24..]);
    out
}

/// The records of a classic pcap.
pub fn count_records(bytes: &[u8]) -> usize {
    let mut n = 0;
    filter_pcap(bytes, |_| {
        n += 1;
        false
    });
    n
}

/// A classic pcap whose clock steps by `step_ns` halfway through its time
/// range (as NTP correcting a drifting host): records from then on are
/// shifted (as `editcap -A T` + `editcap -t` + `mergecap -a`). Microsecond
/// and nanosecond files alike.
pub fn step_pcap(bytes: &[u8], step_ns: i64) -> Vec<u8> {
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    retime_pcap(bytes, |ts| {
        (first, last) = (first.min(ts), last.max(ts));
        ts
    });
    let middle = first + (last - first) / 2;
    retime_pcap(bytes, |ts| if ts >= middle { ts + step_ns } else { ts })
}

/// A classic pcap whose clock steps by `step_ns` at `from_ns` seconds after
/// its first record: records from then on are shifted (as [`step_pcap`],
/// at a chosen time).
pub fn step_pcap_from(bytes: &[u8], from_ns: i64, step_ns: i64) -> Vec<u8> {
    let mut first = None;
    retime_pcap(bytes, |ts| {
        let at = *first.get_or_insert(ts) + from_ns;
        if ts >= at {
            ts + step_ns
        } else {
            ts
        }
    })
}

/// A classic pcap with every record's time (ns since the epoch) mapped by
/// `to`, in record order. Microsecond and nanosecond files alike.
fn retime_pcap(bytes: &[u8], mut to: impl FnMut(i64) -> i64) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let magic: [u8; 4] = out[..4].try_into().unwrap();
    let le = pcap_le(&out);
    let nano = matches!(magic, [0x4d, 0x3c, 0xb2, 0xa1] | [0xa1, 0xb2, 0x3c, 0x4d]);
    let unit: i64 = if nano { 1 } else { 1000 };
    let put = |v: u32| if le { v.to_le_bytes() } else { v.to_be_bytes() };
    let mut at = 24;
    while at + 16 <= out.len() {
        let word = |b: &[u8]| pcap_word(le, b);
        let ts =
            i64::from(word(&out[at..at + 4])) * 1_000_000_000 + i64::from(word(&out[at + 4..at + 8])) * unit;
        let len = word(&out[at + 8..at + 12]) as usize;
        let t = to(ts);
        out[at..at + 4].copy_from_slice(&put((t / 1_000_000_000) as u32));
        out[at + 4..at + 8].copy_from_slice(&put(((t % 1_000_000_000) / unit) as u32));
        at += 16 + len;
    }
    assert_eq!(at, out.len(), "whole records");
    out
}

/// The built tuplecorr run in testdata/lab with `args` (NO_COLOR unset).
pub fn run_in_lab(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(testdata("lab"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

/// A finished process's standard error as text.
pub fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The built tuplecorr started in `dir` with `args`, no standard input, its
/// standard output and error piped (read them as it runs: a large report
/// would otherwise block it).
pub fn spawn_tuplecorr(dir: &std::path::Path, args: &[String]) -> std::process::Child {
    use std::process::Stdio;
    std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends signal `name` (`INT`, `KILL`) to the process `pid` this test started,
/// with the shell's own `kill` (no procps needed); true when it was sent.
pub fn signal(pid: u32, name: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -{name} {pid}"))
        .status()
        .is_ok_and(|s| s.success())
}

/// The files under `dir` (every level) whose extension is `ext`, sorted.
pub fn files_under(dir: &std::path::Path, ext: &str) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, ext, &mut out);
    out.sort();
    out
}

/// A classic Ethernet pcap split by the client port of its TCP segments (the
/// port above 1024): the records of even client ports (and every record that
/// is not IPv4 TCP) when `even`, else those of odd ones; as two hosts of one
/// point would each hold half the connections.
pub fn split_pcap_by_client_port(bytes: &[u8], even: bool) -> Vec<u8> {
    filter_pcap(bytes, |r| {
        let frame = &r[16..];
        let tcp = frame.len() > 14 + 20 && frame[12..14] == [0x08, 0x00] && frame[14 + 9] == 6;
        if !tcp {
            return even;
        }
        let ihl = usize::from(frame[14] & 0x0f) * 4;
        let port = |at: usize| frame.get(at..at + 2).map_or(0, |p| u16::from_be_bytes([p[0], p[1]]));
        let (src, dst) = (port(14 + ihl), port(14 + ihl + 2));
        let client = if src > 1024 { src } else { dst };
        client.is_multiple_of(2) == even
    })
}

/// A classic pcap with every record's time moved by `delta_ns` (as `editcap
/// -t` with a fraction). Microsecond and nanosecond files alike.
pub fn shift_pcap_ns(bytes: &[u8], delta_ns: i64) -> Vec<u8> {
    retime_pcap(bytes, |ts| ts + delta_ns)
}

/// A classic pcap (Ethernet or raw IPv4) with its last TCP record whose flags are exactly
/// `flags` (0x02 a SYN, 0x12 a SYN-ACK) sent again `delay_ns` later, its
/// sequence number moved by `seq_delta` (a SYN-ACK with a new ISN), the
/// records kept in time order (as `mergecap` merges them; checksums as they
/// were).
pub fn repeat_last_pcap(bytes: &[u8], flags: u8, delay_ns: i64, seq_delta: u32) -> Vec<u8> {
    let le = pcap_le(bytes);
    let magic: [u8; 4] = bytes[..4].try_into().unwrap();
    let unit: i64 =
        if matches!(magic, [0x4d, 0x3c, 0xb2, 0xa1] | [0xa1, 0xb2, 0x3c, 0x4d]) { 1 } else { 1000 };
    let word = |b: &[u8]| i64::from(pcap_word(le, b));
    // the TCP header of a record's data: behind Ethernet, or the IPv4 header itself
    let raw = matches!(word(&bytes[20..24]), 12 | 101 | 228);
    let tcp_at = |d: &[u8]| {
        if raw {
            tcp_at(&[&[0u8; 12][..], &[0x08, 0], d].concat()).map(|t| t - 14)
        } else {
            tcp_at(d)
        }
    };
    let put = |v: i64| if le { (v as u32).to_le_bytes() } else { (v as u32).to_be_bytes() };
    let mut records: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let end = at + 16 + word(&bytes[at + 8..at + 12]) as usize;
        let ts = word(&bytes[at..at + 4]) * 1_000_000_000 + word(&bytes[at + 4..at + 8]) * unit;
        records.push((ts, bytes[at..end].to_vec()));
        at = end;
    }
    assert_eq!(at, bytes.len(), "whole records");
    let last = (records.iter().rposition(|(_, r)| tcp_at(&r[16..]).is_some_and(|t| r[16 + t + 13] == flags)))
        .expect("a record with those flags");
    let (ts, mut again) = records[last].clone();
    let t = 16 + tcp_at(&again[16..]).unwrap();
    let seq = u32::from_be_bytes(again[t + 4..t + 8].try_into().unwrap()).wrapping_add(seq_delta);
    again[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
    let ts = ts + delay_ns;
    again[..4].copy_from_slice(&put(ts / 1_000_000_000));
    again[4..8].copy_from_slice(&put(ts % 1_000_000_000 / unit));
    records.push((ts, again));
    records.sort_by_key(|(ts, _)| *ts);
    let mut out = bytes[..24].to_vec();
    records.iter().for_each(|(_, r)| out.extend_from_slice(r));
    out
}
