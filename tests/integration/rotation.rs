//! Several files for one observation point (tcpdump -C/-G rotation, issue 12
//! item 2): a lab capture split into pieces at record boundaries, given under
//! one label, gives the same report as the whole file, whatever the order of
//! the pieces on the command line; overlapping pieces are warned about; the
//! 2..8 limit counts points, not files.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCENARIO: &str = "testdata/lab/masquerade-node";

/// The records of a little-endian µs pcap file: the file header and each record's bytes.
fn pcap_records(path: &Path) -> (Vec<u8>, Vec<Vec<u8>>) {
    let bytes = std::fs::read(path).expect("lab capture");
    assert_eq!(&bytes[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "a little-endian µs pcap");
    let mut records = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        records.push(bytes[at..at + 16 + len].to_vec());
        at += 16 + len;
    }
    assert_eq!(at, bytes.len());
    (bytes[..24].to_vec(), records)
}

/// Writes records `range` of `path` to `dir/name`.
fn piece(path: &Path, range: std::ops::Range<usize>, dir: &Path, name: &str) -> PathBuf {
    let (header, records) = pcap_records(path);
    let mut out = header;
    for r in &records[range] {
        out.extend_from_slice(r);
    }
    let file = dir.join(name);
    std::fs::write(&file, out).unwrap();
    file
}

fn run(args: &[String]) -> (Value, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .args(args)
        .args(["--format", "json", "-q"])
        .output()
        .expect("runs");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (json, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.success())
}

fn lab(name: &str) -> String {
    format!("{SCENARIO}/{name}")
}

/// The egress capture (34 records) cut at records 7 and 20: connection 1 spans
/// the first cut (SYN .. data in e0, the rest in e1), connection 2 the second.
fn split_egress(dir: &Path) -> Vec<PathBuf> {
    let egress = Path::new(SCENARIO).join("egress.pcap");
    let n = pcap_records(&egress).1.len();
    assert_eq!(n, 34);
    vec![
        piece(&egress, 0..7, dir, "e0.pcap"),
        piece(&egress, 7..20, dir, "e1.pcap"),
        piece(&egress, 20..n, dir, "e2.pcap"),
    ]
}

fn whole() -> Value {
    let (json, err, ok) = run(&[lab("decap.pcap"), lab("egress.pcap"), lab("backend.pcap")]);
    assert!(ok, "{err}");
    json
}

fn with_pieces(pieces: &[&PathBuf]) -> (Value, String) {
    let mut args = vec![lab("decap.pcap")];
    args.extend(pieces.iter().map(|p| format!("egress={}", p.display())));
    args.push(lab("backend.pcap"));
    let (json, err, ok) = run(&args);
    assert!(ok, "{err}");
    (json, err)
}

#[test]
fn rotated_files_of_one_point_give_the_report_of_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = split_egress(dir.path());
    let whole = whole();
    for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
        let (split, _) = with_pieces(&[&p[order[0]], &p[order[1]], &p[order[2]]]);
        assert_eq!(split["requests"], whole["requests"], "argv order {order:?}");
        assert_eq!(split["boundaries"], whole["boundaries"]);
        assert_eq!(split["unmatched"], whole["unmatched"]);
        assert_eq!(split["warnings"], whole["warnings"], "no overlap, no damage: no warning");
        let labels: Vec<&str> =
            (split["captures"].as_array().unwrap().iter()).map(|c| c["label"].as_str().unwrap()).collect();
        assert_eq!(labels, ["decap", "egress", "backend"], "three files, one point");
        assert_eq!(split["captures"][1]["packets"], whole["captures"][1]["packets"]);
        // the point's files in time order, whatever the argv order
        let files = format!("{}, {}, {}", p[0].display(), p[1].display(), p[2].display());
        assert_eq!(split["captures"][1]["file"], files.as_str());
    }
    // connection 1 spans the first cut: its request still has its bytes and handshake at egress
    let requests = whole["requests"].as_array().unwrap();
    assert!(requests.len() >= 3);
}

#[test]
fn a_merged_pcapng_of_rotated_files_is_the_merge_of_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = split_egress(dir.path());
    let merged = |name: &str, egress: Vec<String>| {
        let out = dir.path().join(name);
        let mut args = vec![lab("decap.pcap")];
        args.extend(egress);
        args.extend([lab("backend.pcap"), "-q".into(), "--pcapng".into(), out.display().to_string()]);
        let run = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(&args).output().expect("runs");
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let (records, info) = crate::util::read_file(&out).expect("merged pcapng");
        let names: Vec<Option<String>> = info.interfaces.iter().map(|i| i.name.clone()).collect();
        (records.iter().map(|r| (r.interface, r.ts_ns, r.data.clone())).collect::<Vec<_>>(), names)
    };
    let whole = merged("whole.pcapng", vec![lab("egress.pcap")]);
    let split = merged("split.pcapng", p.iter().rev().map(|f| format!("egress={}", f.display())).collect());
    assert_eq!(split.1, whole.1, "one interface per point, named as for the whole file");
    assert_eq!(split.0, whole.0, "every packet once, on its point's interface, in time order");
}

#[test]
fn overlapping_files_of_one_point_are_warned_about_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let egress = Path::new(SCENARIO).join("egress.pcap");
    let a = piece(&egress, 0..20, dir.path(), "a.pcap");
    let b = piece(&egress, 10..34, dir.path(), "b.pcap");
    let (json, _) = with_pieces(&[&b, &a]);
    let warnings = json["warnings"].as_array().unwrap();
    let overlap: Vec<&str> =
        (warnings.iter()).filter_map(|w| w["message"].as_str()).filter(|m| m.contains("overlap")).collect();
    assert_eq!(overlap.len(), 1, "{warnings:?}");
    assert!(overlap[0].contains(&*a.display().to_string()) && overlap[0].contains(&*b.display().to_string()));
    // pieces without overlap: no such warning
    let c = piece(&egress, 20..34, dir.path(), "c.pcap");
    let (json, _) = with_pieces(&[&a, &c]);
    assert!(!json["warnings"].to_string().contains("overlap"));
}

#[test]
fn a_warning_of_one_file_of_a_point_names_that_file_and_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let p = split_egress(dir.path());
    // cut the last piece's last record short (tcpdump killed mid-write)
    let mut bytes = std::fs::read(&p[2]).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&p[2], bytes).unwrap();
    let (json, _) = with_pieces(&[&p[0], &p[1], &p[2]]);
    let w = &json["warnings"][0];
    assert_eq!(w["label"], "egress");
    assert_eq!(w["record"], 14, "the 14th record of e2.pcap (34 - 20)");
    assert!(w["message"].as_str().unwrap().contains(&*p[2].display().to_string()), "{w}");
}

#[test]
fn the_limit_counts_points_not_files() {
    let dir = tempfile::tempdir().unwrap();
    let egress = Path::new(SCENARIO).join("egress.pcap");
    // 9 files under 2 labels: 2 points, fine
    let mut args = vec![lab("decap.pcap")];
    for i in 0..8 {
        args.push(format!(
            "egress={}",
            piece(&egress, i * 4..(i * 4 + 4).min(34), dir.path(), &format!("p{i}.pcap")).display()
        ));
    }
    let (json, err, ok) = run(&args);
    assert!(ok, "{err}");
    assert_eq!(json["captures"].as_array().unwrap().len(), 2);
    // two files of one label are one point: too few
    let (_, err, ok) =
        run(&[format!("egress={}", lab("egress.pcap")), format!("egress={}", lab("backend.pcap"))]);
    assert!(!ok);
    assert!(
        err.contains("give 2 to 8 capture points")
            && err.contains("got 1 from 2 files: the files of one LABEL= are one point"),
        "{err}"
    );
    // nine points (derived labels stay distinct: x, x-2, …) are too many
    let nine: Vec<String> = (0..9).map(|_| lab("egress.pcap")).collect();
    let (_, err, ok) = run(&nine);
    assert!(!ok);
    assert!(err.contains("got 9)"), "{err}");
}

#[test]
fn the_overlap_warning_names_the_file_read_first_and_files_that_only_touch_do_not_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let egress = Path::new(SCENARIO).join("egress.pcap");
    // Records 17..20 are 61, 166 and 120 µs apart.
    let a = piece(&egress, 0..20, dir.path(), "a.pcap");
    // begins with a's last record: starts at the time a ends
    let touching = piece(&egress, 19..34, dir.path(), "touching.pcap");
    // begins with a's last two records: starts before a ends
    let c = piece(&egress, 18..34, dir.path(), "c.pcap");
    // starts before c ends
    let d = piece(&egress, 30..34, dir.path(), "d.pcap");
    // after a, then f starts before e ends (not before a ends)
    let e = piece(&egress, 20..25, dir.path(), "e.pcap");
    let f = piece(&egress, 23..34, dir.path(), "f.pcap");
    // a stream reads the files one after the other; a whole run takes files
    // that overlap in time as several hosts' (a pool's nodes), and says so
    let overlap = |earlier: &Path, later: &Path, stream: bool| {
        let (earlier, later) = (earlier.display(), later.display());
        if stream {
            format!(
                "{later} starts before {earlier} ends: files given under one label are read as one point in the \
                 order of their first packet, and these overlap in time; read one after the other anyway; check \
                 that both files come from the same capture point"
            )
        } else {
            format!("{later} starts before {earlier} ends: files of one label that overlap in time are read as captures of")
        }
    };
    for mode in [&[][..], &["--stream", "--stream-window", "30"]] {
        let stream = !mode.is_empty();
        let overlaps = |pieces: &[&PathBuf]| {
            let mut args: Vec<String> = mode.iter().map(|s| s.to_string()).collect();
            args.push(lab("decap.pcap"));
            args.extend(pieces.iter().map(|p| format!("egress={}", p.display())));
            args.push(lab("backend.pcap"));
            let (json, err, ok) = run(&args);
            assert!(ok, "{mode:?}: {err}");
            let warnings = json["warnings"].as_array().unwrap().clone();
            (warnings.into_iter())
                .filter(|w| w["message"].as_str().unwrap().contains("overlap"))
                .map(|w| {
                    let mut m = w["message"].as_str().unwrap().to_string();
                    if !stream {
                        // up to "captures of N hosts", which the hosts' count ends
                        assert!(
                            m.contains(
                                " hosts at one point (a pool's nodes, ECMP, replicas); each host keeps"
                            ),
                            "{m}"
                        );
                        m.truncate(m.find(" captures of").map_or(m.len(), |i| i + " captures of".len()));
                    }
                    (w["label"].clone(), w["record"].clone(), m)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(overlaps(&[&touching, &a]), [], "{mode:?}");
        let a_c = || (Value::from("egress"), Value::Null, overlap(&a, &c, stream));
        assert_eq!(overlaps(&[&c, &a]), [a_c()], "{mode:?}");
        assert_eq!(overlaps(&[&d, &c, &a]), [a_c()], "{mode:?}: the first overlap only");
        let e_f = (Value::from("egress"), Value::Null, overlap(&e, &f, stream));
        assert_eq!(overlaps(&[&f, &e, &a]), [e_f], "{mode:?}: the file that reached latest is e");
    }
}
