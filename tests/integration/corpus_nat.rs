//! Real-traffic regression (issue 13), built at test time and never committed:
//! each corpus capture with many packets becomes three points — the capture
//! itself, a copy NAT-ed by a real rewriting tool (`tcprewrite --pnat`) with its
//! clock shifted +0.35 s, and another NAT-ed copy shifted −1.2 s — once clean and
//! once lossy (2 % of the middle point's packets deleted, the last point cut to
//! 96 bytes). The truth is the per-packet mapping: packet i of every point is
//! packet i of the capture, so the addresses each point shows for it are the
//! rewritten ones. Prints the accuracy per set; runs only when
//! `TUPLECORR_CORPUS` is set and the tools are installed.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Captures with at least this many records in `index.tsv` are used.
const MIN_RECORDS: u64 = 1000;
/// NAT of the middle and the last point (both ends of every flow are rewritten).
const PNAT: [&str; 2] = [
    "0.0.0.0/1:198.18.0.0/16,128.0.0.0/1:198.19.0.0/16",
    "0.0.0.0/1:198.20.0.0/16,128.0.0.0/1:198.21.0.0/16",
];
const SHIFT: [&str; 2] = ["0.35", "-1.2"];

fn tool(cmd: &str, args: &[&str]) {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn have(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

/// (src, src port, dst, dst port) of every packet, in order ("" where absent).
fn packets(file: &Path) -> Vec<[String; 4]> {
    let out = Command::new("tshark")
        .args(["-r", p(file), "-T", "fields", "-E", "occurrence=f"])
        .args(["-e", "ip.src", "-e", "ip.dst", "-e", "ipv6.src", "-e", "ipv6.dst"])
        .args(["-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "udp.srcport", "-e", "udp.dstport"])
        .output()
        .expect("tshark");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let x: Vec<&str> = l.split('\t').collect();
            let f = |i: usize, j: usize| -> String {
                let a = x.get(i).copied().unwrap_or("");
                if a.is_empty() { x.get(j).copied().unwrap_or("") } else { a }.to_string()
            };
            [f(0, 2), f(4, 6), f(1, 3), f(5, 7)]
        })
        .collect()
}

/// Splits `ip:port`, `[v6]:port` or a bare address.
fn split(ep: &str) -> (String, String) {
    if let Some(rest) = ep.strip_prefix('[') {
        let (a, port) = rest.split_once("]:").unwrap_or((rest, ""));
        return (a.to_string(), port.to_string());
    }
    match ep.split_once(':') {
        Some((a, port)) if !port.contains(':') => (a.to_string(), port.to_string()),
        _ => (ep.to_string(), String::new()),
    }
}

#[derive(Default, Debug)]
struct Score {
    requests: usize,
    right: usize,
    ambiguous: usize,
    wrong: usize,
    missed: usize,
    /// `verdict proto client -> server` of every request not right.
    notes: Vec<String>,
}

/// Compares every request's hops with the truth: the address map of each later
/// point, and the 4-tuples present in each (possibly lossy) later file.
fn score(report: &Value, maps: &[HashMap<String, String>], present: &[HashSet<[String; 4]>]) -> Score {
    let mut s = Score::default();
    for r in report["requests"].as_array().expect("requests") {
        s.requests += 1;
        let c0 = &r["captures"][0];
        let (ca, cp) = split(c0["client"].as_str().unwrap_or(""));
        let (sa, sp) = split(c0["server"].as_str().unwrap_or(""));
        let mut verdict = "right";
        for (k, (map, there)) in maps.iter().zip(present).enumerate() {
            let h = &r["captures"][k + 1];
            let m = |a: &String| map.get(a).cloned().unwrap_or_else(|| a.clone());
            let want = [m(&ca), cp.clone(), m(&sa), sp.clone()];
            if h["seen"].as_bool() != Some(true) {
                if there.contains(&want) {
                    verdict = "missed";
                    break;
                }
                continue; // every packet of it was deleted at this point
            }
            let (ga, gp) = split(h["client"].as_str().unwrap_or(""));
            let (gs, gsp) = split(h["server"].as_str().unwrap_or(""));
            let got = [ga, gp, gs, gsp];
            let flipped = [got[2].clone(), got[3].clone(), got[0].clone(), got[1].clone()];
            if got != want && flipped != want {
                let ambiguous =
                    r["matches"].as_array().is_some_and(|ms| ms.iter().any(|m| m["strength"] == "ambiguous"));
                verdict = if ambiguous { "ambiguous" } else { "wrong" };
                break;
            }
        }
        if verdict != "right" {
            s.notes.push(format!("{verdict} {} {} -> {}", r["proto"], c0["client"], c0["server"]));
        }
        match verdict {
            "right" => s.right += 1,
            "ambiguous" => s.ambiguous += 1,
            "missed" => s.missed += 1,
            _ => s.wrong += 1,
        }
    }
    s
}

/// Corpus captures with many records, from `index.tsv`.
fn many_flow_captures(corpus: &Path) -> Vec<PathBuf> {
    let index = std::fs::read_to_string(corpus.join("index.tsv")).expect("index.tsv");
    let mut lines = index.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).expect("index.tsv column");
    let (file, records) = (col("file"), col("records_parsed"));
    lines
        .filter_map(|l| {
            let x: Vec<&str> = l.split('\t').collect();
            let n: u64 = x.get(records)?.parse().ok()?;
            let f = x.get(file)?;
            (n >= MIN_RECORDS).then(|| corpus.join(f))
        })
        .collect()
}

#[test]
fn nat_rewritten_corpus_captures_are_matched_per_packet_truth() {
    crate::util::require_corpus!();
    if !["tcprewrite", "editcap", "tshark"].iter().all(|t| have(t)) {
        eprintln!("skipped: tcprewrite, editcap and tshark are needed (real-traffic NAT regression)");
        return;
    }
    let corpus = crate::util::corpus_dir();
    let sets = many_flow_captures(&corpus);
    assert!(!sets.is_empty(), "no corpus capture with {MIN_RECORDS}+ records");
    let dir = tempfile::tempdir().unwrap();
    let mut table =
        vec!["| capture | set | requests | right | ambiguous | wrong | missed | accuracy |".to_string()];
    table.push("|---|---|---:|---:|---:|---:|---:|---:|".into());
    for src in &sets {
        let name = src.file_name().unwrap().to_string_lossy().to_string();
        let f = |s: &str| dir.path().join(format!("{name}.{s}.pcap"));
        tool("editcap", &["-F", "pcap", p(src), p(&f("p1"))]);
        for k in 0..2 {
            let pnat = format!("--pnat={}", PNAT[k]);
            tool("tcprewrite", &[&pnat, "-i", p(&f("p1")), "-o", p(&f("nat"))]);
            tool("editcap", &["-t", SHIFT[k], p(&f("nat")), p(&f(&format!("p{}", k + 2)))]);
        }
        // Lossy: 2 % of the middle point deleted (a fixed pseudo-random choice),
        // the last point cut to 96 bytes.
        let base = packets(&f("p1"));
        let mut x: u32 = 13;
        let gone: Vec<String> = (1..=base.len())
            .filter(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) % 100 < 2
            })
            .map(|i| i.to_string())
            .collect();
        let mut args = vec![p(&f("p2")).to_string(), p(&f("p2loss")).to_string()];
        args.extend(gone);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tool("editcap", &args);
        tool("editcap", &["-s", "96", p(&f("p3")), p(&f("p3cut"))]);

        let later = [packets(&f("p2")), packets(&f("p3"))];
        let maps: Vec<HashMap<String, String>> = later
            .iter()
            .map(|l| {
                let mut m = HashMap::new();
                for (a, b) in base.iter().zip(l) {
                    for i in [0, 2] {
                        if !a[i].is_empty() && !b[i].is_empty() {
                            m.insert(a[i].clone(), b[i].clone());
                        }
                    }
                }
                m
            })
            .collect();
        let tuples = |file: &Path| -> HashSet<[String; 4]> {
            packets(file)
                .into_iter()
                .flat_map(|t| [t.clone(), [t[2].clone(), t[3].clone(), t[0].clone(), t[1].clone()]])
                .collect()
        };
        for (set, files) in [("clean", ["p2", "p3"]), ("lossy", ["p2loss", "p3cut"])] {
            let present: Vec<_> = files.iter().map(|s| tuples(&f(s))).collect();
            let caps = [("p1", f("p1")), ("p2", f(files[0])), ("p3", f(files[1]))];
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuplecorr"));
            cmd.args(["-q", "--format", "json"]);
            for (l, path) in &caps {
                cmd.arg(format!("{l}={}", p(path)));
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{name} {set}: {}", String::from_utf8_lossy(&out.stderr));
            let report: Value = serde_json::from_slice(&out.stdout).unwrap();
            let s = score(&report, &maps, &present);
            let acc = 100.0 * s.right as f64 / s.requests.max(1) as f64;
            for n in &s.notes {
                println!("{name} {set}: {n}");
            }
            table.push(format!(
                "| {name} | {set} | {} | {} | {} | {} | {} | {acc:.1} % |",
                s.requests, s.right, s.ambiguous, s.wrong, s.missed
            ));
            assert!(s.requests > 100, "{name}: too few requests for a regression ({s:?})");
            let floor = if set == "clean" { 99.9 } else { 99.5 };
            assert!(acc >= floor, "{name} {set}: {acc:.1} % right < {floor} % ({s:?})");
            assert_eq!(s.wrong, 0, "{name} {set}: a request chained to the wrong flow ({s:?})");
        }
    }
    println!("{}", table.join("\n"));
}
