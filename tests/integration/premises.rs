//! Premises checked before verdicts (issue 29) on the lab's real captures:
//! an empty capture, a clock off by minutes to days, captures given in
//! reverse order. Each gives the right verdict or an explicit unknown with a
//! warning, never a blame that rests on a capture that was not recording.

use crate::util::{
    count_records, cut_pcap_after, drop_pcap, drop_records_pcap, drop_syns_pcap, garble_pcap, keep_pcap,
    portmap_pcap, repeat_last_pcap, replace_pcap, resend_pcap, shift_pcap, step_pcap, step_pcap_from,
};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn lab(scenario: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab").join(scenario)
}

/// Runs tuplecorr on `LABEL=PATH` arguments with `extra` options: exit code,
/// stdout, stderr.
fn run(captures: &[(&str, &Path)], extra: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuplecorr"));
    cmd.args(extra).arg("--quiet");
    for (label, path) in captures {
        cmd.arg(format!("{label}={}", path.display()));
    }
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The JSON report of a run, its explanations checked against its fields.
fn json(captures: &[(&str, &Path)]) -> Value {
    let (code, out, err) = run(captures, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let typed: tuplecorr::report::wire::Findings = serde_json::from_str(&out).unwrap();
    let found: Vec<String> =
        typed.requests.iter().flat_map(tuplecorr::report::consistency::contradictions).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
    serde_json::from_str(&out).unwrap()
}

/// [`json`] of a lab scenario's decap, egress and backend captures, each
/// first edited by `edit(label, bytes)` (written to a temporary folder).
fn edited_json(scenario: &str, mut edit: impl FnMut(&str, Vec<u8>) -> Vec<u8>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for label in ["decap", "egress", "backend"] {
        let raw = std::fs::read(lab(scenario).join(format!("{label}.pcap"))).unwrap();
        let path = dir.path().join(format!("{label}.pcap"));
        std::fs::write(&path, edit(label, raw)).unwrap();
        paths.push((label, path));
    }
    json(&paths.iter().map(|(l, p)| (*l, p.as_path())).collect::<Vec<_>>())
}

/// A capture stopped right after a request on a keep-alive connection: its
/// "no response" must not read as "never answered". The lab's `keepalive`
/// captures, every point cut after the first `GET /hang` it recorded: the
/// server's side never ended there, so the unanswered exchange is `open`
/// and the explanation says the capture may have ended first; whole, the
/// server's FIN was recorded and it says no such thing.
#[test]
fn a_capture_stopped_after_a_keep_alive_request_does_not_say_it_was_never_answered() {
    let hang = |v: &Value| -> Value {
        let requests = v["requests"].as_array().unwrap();
        let unanswered_hang = |r: &&Value| {
            let x = &r["exchanges"];
            let n = x["unanswered"]["n"].as_u64().unwrap_or(0) as usize;
            n > 0 && x["list"][n - 1]["target"] == "/hang"
        };
        requests.iter().find(unanswered_hang).cloned().expect("a request whose /hang went unanswered")
    };
    let dir = lab("keepalive");
    let labels = ["decap", "egress", "backend"];
    let paths: Vec<_> = labels.iter().map(|l| dir.join(format!("{l}.pcap"))).collect();
    let whole = json(&labels.iter().zip(&paths).map(|(l, p)| (*l, p.as_path())).collect::<Vec<_>>());
    let cut = edited_json("keepalive", |_, raw| cut_pcap_after(&raw, b"GET /hang"));
    let (w, c) = (hang(&whole), hang(&cut));
    assert_eq!(w["captures"][0]["client"], c["captures"][0]["client"], "the same connection");
    assert_eq!(w["exchanges"]["unanswered"]["n"], c["exchanges"]["unanswered"]["n"]);
    assert_eq!(c["exchanges"]["unanswered"]["request_reached"], "backend");
    let words = "(which saw no FIN from the server and no RST: the capture may have ended before a response)";
    assert_eq!(w["exchanges"]["unanswered"]["open"], false);
    assert!(!w["explanation"].as_str().unwrap().contains(words), "{}", w["explanation"]);
    assert_eq!(c["exchanges"]["unanswered"]["open"], true);
    assert!(
        c["explanation"].as_str().unwrap().contains(&format!("got no response at decap {words}")),
        "{}",
        c["explanation"]
    );
}

fn warnings(v: &Value) -> Vec<(String, String)> {
    let text = |w: &Value, k: &str| w[k].as_str().unwrap_or_default().to_string();
    v["warnings"].as_array().unwrap().iter().map(|w| (text(w, "label"), text(w, "message"))).collect()
}

#[test]
fn an_empty_capture_makes_every_blame_next_to_it_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let reject = lab("reject");
    let header = std::fs::read(reject.join("backend.pcap")).unwrap()[..24].to_vec();
    let empty = dir.path().join("backend.pcap");
    std::fs::write(&empty, header).unwrap();
    let caps = [("decap", reject.join("decap.pcap")), ("egress", reject.join("egress.pcap"))];
    let with = |b: &Path| json(&[("decap", &caps[0].1), ("egress", &caps[1].1), ("backend", b)]);
    // With the real backend, the node's RST and ICMP errors entered between egress and backend.
    let real = with(&reject.join("backend.pcap"));
    let origins = |v: &Value| -> Vec<Value> {
        v["requests"].as_array().unwrap().iter().map(|r| r["outcome"]["origin"].clone()).collect()
    };
    let blamed = origins(&real).iter().filter(|o| o.as_str() == Some("egress->backend")).count();
    assert_eq!(blamed, 3, "{:#}", real["requests"]);
    assert!(warnings(&real).is_empty(), "{:?}", warnings(&real));
    // With an empty backend capture: unknown, because backend recorded nothing.
    let v = with(&empty);
    let w = warnings(&v);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "backend");
    assert!(w[0].1.starts_with("backend holds no packets"), "{w:?}");
    let requests = v["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 5);
    for r in requests {
        assert_eq!(r["blind"], serde_json::json!(["backend"]), "{r:#}");
        assert!(r["outcome"]["origin"].is_null(), "{r:#}");
        let e = r["explanation"].as_str().unwrap();
        assert!(!e.contains("forged") && !e.contains("between egress and backend"), "{e}");
        if ["reset", "icmp-error"].contains(&r["outcome"]["kind"].as_str().unwrap()) {
            assert!(
                e.contains(
                    "where it entered the path is unknown: backend recorded nothing while this request ran"
                ),
                "{e}"
            );
        }
    }
    // The CSV says the same, and the table's summary blames no boundary.
    let b = empty.as_path();
    let (_, csv, _) =
        run(&[("decap", &caps[0].1), ("egress", &caps[1].1), ("backend", b)], &["--format", "csv"]);
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let blind = rows.headers().unwrap().iter().position(|h| h == "blind").unwrap();
    assert!(rows.records().all(|r| &r.unwrap()[blind] == "backend"));
    let (_, table, err) = run(&[("decap", &caps[0].1), ("egress", &caps[1].1), ("backend", b)], &[]);
    assert!(!table.contains("injected"), "{table}");
    assert!(
        table.contains("reset from 198.19.96.10, where it entered unknown (backend recorded nothing then)")
    );
    assert!(err.contains("backend holds no packets"), "{err}");
    // --stream takes no capture as blind, and says so rather than staying silent.
    let (code, _, err) = run(
        &[("decap", &caps[0].1), ("egress", &caps[1].1), ("backend", b)],
        &["--stream", "--format", "csv"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("backend holds no packets"), "{err}");
    assert!(err.contains("blames next to it still rest on its silence"), "{err}");
}

/// The fields of a request that do not depend on a capture's own clock.
fn clock_free(r: &Value) -> Value {
    let mut r = r.clone();
    for h in r["captures"].as_array_mut().unwrap() {
        h.as_object_mut().unwrap().remove("raw_time");
    }
    r
}

/// Whether the scenario's last capture is a classic pcap (not pcapng or gzip).
fn ends_in_classic_pcap(scenario: &str, files: &[String]) -> bool {
    let last = lab(scenario).join(files.last().unwrap());
    let magic = std::fs::read(&last).unwrap()[..4].to_vec();
    matches!(magic[..], [0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4] | [0x4d, 0x3c, 0xb2, 0xa1])
}

/// Shifting the last capture of any lab scenario by seconds to days leaves
/// every verdict and explanation as it was (the clock is found from pairs
/// found without time) or, where too few such pairs exist, makes the last
/// capture blind with a warning: never another blame.
#[test]
fn a_clock_off_by_minutes_to_days_changes_no_verdict_or_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let (mut found, mut unknown) = (0, 0);
    for (scenario, files) in crate::util::lab_scenarios() {
        if !ends_in_classic_pcap(&scenario, &files) {
            continue; // pcapng and gzip: shift_pcap shifts classic pcap only
        }
        let labels: Vec<String> = (0..files.len()).map(|i| format!("p{i}")).collect();
        let paths: Vec<std::path::PathBuf> = files.iter().map(|f| lab(&scenario).join(f)).collect();
        let args = |last_path: &Path| -> Vec<(String, std::path::PathBuf)> {
            let mut a: Vec<(String, std::path::PathBuf)> =
                labels.iter().cloned().zip(paths.iter().cloned()).collect();
            a.last_mut().unwrap().1 = last_path.to_path_buf();
            a
        };
        let call = |a: &[(String, std::path::PathBuf)]| {
            json(&a.iter().map(|(l, p)| (l.as_str(), p.as_path())).collect::<Vec<_>>())
        };
        let base = call(&args(paths.last().unwrap()));
        for secs in [90, 32_400, 3 * 86_400] {
            let shifted = dir.path().join(format!("{scenario}-{secs}.pcap"));
            std::fs::write(&shifted, shift_pcap(&std::fs::read(paths.last().unwrap()).unwrap(), secs))
                .unwrap();
            let v = call(&args(&shifted));
            let what = format!("{scenario} shifted {secs} s");
            let caps = v["captures"].as_array().unwrap();
            let last_point = caps.last().unwrap();
            let base_caps = base["captures"].as_array().unwrap();
            if last_point["offset_method"] == "time-free" {
                found += 1;
                let moved = last_point["clock_offset_ms"].as_f64().unwrap();
                let was = base_caps.last().unwrap()["clock_offset_ms"].as_f64().unwrap();
                assert!((moved - was - secs as f64 * 1000.0).abs() < 1.0, "{what}: {moved} against {was}");
                let (a, b) = (base["requests"].as_array().unwrap(), v["requests"].as_array().unwrap());
                assert_eq!(a.len(), b.len(), "{what}");
                for (x, y) in a.iter().zip(b) {
                    assert_eq!(clock_free(x), clock_free(y), "{what}");
                }
            } else {
                unknown += 1;
                let label = last_point["label"].as_str().unwrap();
                assert!(
                    warnings(&v).iter().any(|(l, m)| l == label && m.contains("do not overlap in time")),
                    "{what}: {:?}",
                    warnings(&v)
                );
                for r in v["requests"].as_array().unwrap() {
                    let blind = r["blind"].as_array().cloned().unwrap_or_default();
                    assert!(blind.iter().any(|b| b == label), "{what}: {r:#}");
                    let origin = r["outcome"]["origin"].as_str().unwrap_or_default();
                    assert!(
                        !origin.ends_with(&format!("->{label}")),
                        "{what}: a blame beside a blind capture: {r:#}"
                    );
                }
            }
        }
    }
    eprintln!("shifted last captures: {found} clocks found without time, {unknown} unknown");
    // 27 scenarios end in a classic pcap, 3 shifts each: all but reject (one
    // pair at its backend) are found without time; reject is unknown.
    assert!(found >= 75 && unknown >= 3, "{found} found, {unknown} unknown");
}

/// A clock that steps by ±0.4 s halfway through the last capture of any lab
/// scenario (NTP correcting a drifting host): where two or more pairs found
/// without time lie on each side, the step is found and said, and every
/// verdict and explanation is as without it. Before, the healthcheck's
/// requests after the step were chained to the wrong connections ("a proxy
/// opened a new connection … 42009 became 42011").
#[test]
fn a_clock_step_inside_a_capture_changes_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (mut found, mut small, mut unbridged) = (0, 0, 0);
    for (scenario, files) in crate::util::lab_scenarios() {
        if !ends_in_classic_pcap(&scenario, &files) {
            continue; // pcapng and gzip: step_pcap steps classic pcap only
        }
        let labels: Vec<String> = (0..files.len()).map(|i| format!("p{i}")).collect();
        let paths: Vec<std::path::PathBuf> = files.iter().map(|f| lab(&scenario).join(f)).collect();
        let call = |last_path: &Path| {
            let mut a: Vec<(&str, &Path)> =
                labels.iter().map(String::as_str).zip(paths.iter().map(|p| p.as_path())).collect();
            a.last_mut().unwrap().1 = last_path;
            json(&a)
        };
        let base = call(paths.last().unwrap());
        for step_ms in [400, -400] {
            let stepped = dir.path().join(format!("{scenario}-{step_ms}.pcap"));
            std::fs::write(
                &stepped,
                step_pcap(&std::fs::read(paths.last().unwrap()).unwrap(), step_ms * 1_000_000),
            )
            .unwrap();
            let v = call(&stepped);
            let what = format!("{scenario} stepped {step_ms} ms");
            let said = warnings(&v).into_iter().find(|(_, m)| m.contains("disagree by a step of"));
            let (a, b) = (base["requests"].as_array().unwrap(), v["requests"].as_array().unwrap());
            if let Some((_, m)) = said {
                found += 1;
                let said_ms: f64 =
                    m.split("a step of ").nth(1).and_then(|t| t.split(' ').next()).unwrap().parse().unwrap();
                assert!((said_ms - step_ms as f64).abs() < 1.0, "{what}: {m}");
                assert_eq!(a.len(), b.len(), "{what}");
                for (x, y) in a.iter().zip(b) {
                    assert_eq!(step_free(x), step_free(y), "{what}");
                }
            } else {
                // Fewer than two pairs on a side: the step is not told from
                // delay (the known gap: docs/guide/reading-the-report.md).
                small += 1;
                // Pairs matched without time that the step kept apart are
                // said, and only where the verdicts changed: no false alarm,
                // and no verdict changed unsaid.
                let differ = a.iter().zip(b).any(|(x, y)| step_free(x) != step_free(y));
                let said = warnings(&v).iter().any(|(_, m)| m.contains("pairs matched without time"));
                assert_eq!(said, differ, "{what}: warned {said}, verdicts changed {differ}");
                // And each request it changed says which capture's silence is
                // no evidence for it (`apart`, or `blind` where the step moved
                // the capture's recorded span off the request).
                for (x, y) in a.iter().zip(b).filter(|(x, y)| step_free(x) != step_free(y)) {
                    let listed = |k: &str| y[k].as_array().is_some_and(|l| !l.is_empty());
                    assert!(
                        listed("apart") || listed("blind"),
                        "{what}: {}\n -> {}",
                        x["explanation"],
                        y["explanation"]
                    );
                }
                unbridged += usize::from(said);
            }
        }
    }
    eprintln!("stepped last captures: {found} steps found, {small} not ({unbridged} of those said)");
    // Found: healthcheck (15 requests) both ways, and the scenarios whose
    // middle falls between two pairs and two more (masquerade-node, delay,
    // pmtu-blackhole, ...).
    assert!(found >= 8, "{found} found, {small} not");
    // Not found, and verdicts changed: said, 17 of the 50 (reject, lossy-capture
    // and syn-retransmit among them: pairs by ports and by sequence numbers).
    assert!(unbridged >= 17, "{unbridged} of {small} said");
}

/// A step too thin to find leaves no-return-route's echo (request 3) unmatched
/// at the backend: "got as far as egress" would blame the path; the backend's
/// flow with its echo, kept apart by the clock, makes it "unknown".
#[test]
fn a_request_whose_flow_the_clock_kept_apart_is_not_blamed_on_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let lab_dir = lab("no-return-route");
    let stepped = dir.path().join("backend.pcap");
    std::fs::write(&stepped, step_pcap(&std::fs::read(lab_dir.join("backend.pcap")).unwrap(), 400_000_000))
        .unwrap();
    let v = json(&[
        ("decap", &lab_dir.join("decap.pcap")),
        ("egress", &lab_dir.join("egress.pcap")),
        ("backend", &stepped),
    ]);
    let r = &v["requests"][2];
    assert_eq!(r["proto"], "icmp", "{r:#}");
    assert_eq!(r["apart"], serde_json::json!(["backend"]), "{r:#}");
    assert_eq!(r["reply"]["path"], "no-reply", "{r:#}");
    let e = r["explanation"].as_str().unwrap();
    assert!(
        e.ends_with(
            "the request got as far as egress, and whether it went further is unknown: backend holds a flow \
                     tied to it without time (ISN, first datagram, echo or sequence numbers) that matching by time left apart"
        ),
        "{e}"
    );
    // The requests the clock did not touch list nothing.
    assert!(v["requests"][0].get("apart").is_none(), "{:#}", v["requests"][0]);
}

/// [`clock_free`] without the corrected times either (a step is corrected by
/// its median: microseconds off the unstepped run).
fn step_free(r: &Value) -> Value {
    let mut r = clock_free(r);
    for h in r["captures"].as_array_mut().unwrap() {
        h.as_object_mut().unwrap().remove("time");
    }
    r
}

/// Verdicts are never printed from an order the run doubts: captures given
/// client side last at every boundary are read the other way round (the same
/// verdicts as in path order, and a warning saying so); an order with one
/// boundary reversed and another the right way stops with exit 2; with
/// --offset (clocks read against capture 1) a reversed order stops too.
#[test]
fn captures_given_in_reverse_order_are_read_in_path_order_or_refused() {
    let dir = lab("masquerade-node");
    let (d, e, b) = (dir.join("decap.pcap"), dir.join("egress.pcap"), dir.join("backend.pcap"));
    let right = json(&[("decap", &d), ("egress", &e), ("backend", &b)]);
    assert!(warnings(&right).is_empty(), "{:?}", warnings(&right));
    let v = json(&[("backend", &b), ("egress", &e), ("decap", &d)]);
    let w = warnings(&v);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "decap");
    assert!(w[0].1.starts_with("the captures look given in reverse path order at every boundary"), "{w:?}");
    assert!(w[0].1.contains("backend->egress (TTL +1, delay -0.0"), "{w:?}");
    assert!(w[0]
        .1
        .ends_with("read in the reverse order, decap → egress → backend; give them client side first"));
    // the verdicts of the path order, request by request
    let labels = |v: &Value| -> Vec<String> {
        v["captures"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(labels(&v), labels(&right));
    assert_eq!(v["requests"], right["requests"]);
    // one boundary reversed, one the right way: no order the evidence agrees on
    let (code, out, err) = run(&[("egress", &e), ("decap", &d), ("backend", &b)], &[]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("the captures' order is in doubt: egress->decap (TTL +1, delay -0.0"), "{err}");
    assert!(err.contains("while decap->backend (TTL -2, delay 0.0"), "{err}");
    // reversed with a clock given against capture 1: refused, not re-read
    let (code, out, err) = run(&[("backend", &b), ("egress", &e), ("decap", &d)], &["--offset", "egress=0"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("with --offset, --clocks-from or a shard"), "{err}");
}

#[test]
fn a_single_any_capture_of_a_forwarding_host_is_a_run_of_its_own() {
    let node = lab("any-node").join("node.pcap");
    let v = json(&[("node", &node)]);
    let labels: Vec<&str> =
        v["captures"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["node(in)", "node(out)"]);
    let requests = v["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 4);
    for r in requests {
        assert_eq!(r["source"]["changed"][0]["between"], "node(in)->node(out)", "{r:#}");
        assert_eq!(r["outcome"]["kind"], "completed", "{r:#}");
    }
    // One interface, one direction: one point, refused once read.
    let decap = lab("reject").join("decap.pcap");
    let (code, out, err) = run(&[("decap", &decap)], &[]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("decap holds one observation point (one interface, one direction)"), "{err}");
    let (code, _, err) = run(&[("node", &node)], &["--stream"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--stream needs 2 to 8 capture points"), "{err}");
}

/// masquerade-node's backend capture rewritten by `tcprewrite` with `options`
/// into `dir`; None (said) where tcprewrite is missing.
fn rewritten_backend(dir: &Path, options: &[&str]) -> Option<std::path::PathBuf> {
    if std::process::Command::new("tcprewrite").arg("--version").output().is_err() {
        eprintln!("skipped: tcprewrite (Debian tcpreplay) is needed");
        return None;
    }
    let out = dir.join("backend.pcap");
    let status = std::process::Command::new("tcprewrite")
        .args(options)
        .arg("-i")
        .arg(lab("masquerade-node").join("backend.pcap"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    Some(out)
}

/// A TTL set by a rewriter (`tcprewrite --ttl`, as a proxy or normalizer
/// does) is said as set, not as a drop of -137 hops; nor does its rise read
/// as captures in reverse order.
#[test]
fn a_ttl_set_by_a_rewriter_is_said_as_set_not_as_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let lab = lab("masquerade-node");
    let Some(set) = rewritten_backend(dir.path(), &["--ttl=200"]) else { return };
    let (d, e) = (lab.join("decap.pcap"), lab.join("egress.pcap"));
    let v = json(&[("decap", &d), ("egress", &e), ("backend", &set)]);
    let b = &v["boundaries"];
    assert_eq!(b[0]["ttl_set_to"], Value::Null, "{b:#}");
    assert_eq!(b[1]["ttl_set_to"], 200, "{b:#}");
    assert!(warnings(&v).is_empty(), "{:?}", warnings(&v));
    let (_, table, _) = run(&[("decap", &d), ("egress", &e), ("backend", &set)], &[]);
    assert!(table.contains("egress->backend  delay") && table.contains("TTL set to 200"), "{table}");
}

/// A constant sequence shift on the wire that keeps the TTL and both ports
/// (`tcprewrite --tcp-sequence`, as a SYN proxy or a load balancer does) is
/// a shift of the same packets, not a proxy's new connection (issue 30).
#[test]
fn a_sequence_shift_that_keeps_the_ttl_and_ports_is_a_shift_not_a_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let lab = lab("masquerade-node");
    let Some(shifted) = rewritten_backend(dir.path(), &["--tcp-sequence=12345", "--ttl=+1"]) else { return };
    let (d, e) = (lab.join("decap.pcap"), lab.join("egress.pcap"));
    let v = json(&[("decap", &d), ("egress", &e), ("backend", &shifted)]);
    let b = &v["boundaries"][1];
    assert_eq!((b["seq_shift"].as_bool(), b["ttl_decrement"].as_i64()), (Some(true), Some(0)), "{b:#}");
    let tcp: Vec<&Value> = v["requests"].as_array().unwrap().iter().filter(|r| r["proto"] == "tcp").collect();
    assert_eq!(tcp.len(), 3);
    let mut shifts = Vec::new();
    for r in tcp {
        let change = &r["source"]["changed"][0];
        assert_eq!(
            (change["between"].as_str(), change["kind"].as_str()),
            (Some("egress->backend"), Some("snat"))
        );
        assert_eq!(r["matches"][1]["evidence"][0], "seq-shift", "{r:#}");
        // tcprewrite moves every sequence and acknowledgement number by one
        // amount: both sides by it, every connection the same.
        let shift = &r["seq_shift"];
        assert_eq!(shift.as_array().map(Vec::len), Some(1), "{r:#}");
        let by = shift[0]["client"].as_i64().unwrap();
        assert_eq!(
            (shift[0]["between"].as_str(), shift[0]["server"].as_i64()),
            (Some("egress->backend"), Some(by))
        );
        assert_ne!(by, 0);
        shifts.push(by);
        let words = format!(
            "sequence numbers shifted by a middlebox between egress and backend (client {by:+}, server {by:+})"
        );
        assert!(r["explanation"].as_str().unwrap().contains(&words), "{r:#}");
    }
    assert!(shifts.windows(2).all(|w| w[0] == w[1]), "{shifts:?}");
    // One amount for every request: the boundary's trait says it.
    assert_eq!(b["seq_shift_by"].as_i64(), Some(shifts[0]), "{b:#}");
    let (_, table, _) = run(&[("decap", &d), ("egress", &e), ("backend", &shifted)], &[]);
    assert!(table.contains(&format!("sequence numbers shifted by {:+}", shifts[0])), "{table}");
}

/// Packets cut on their way (`tcprewrite --mtu-trunc`, a middlebox that
/// truncates at an MTU): every client packet reached the backend, each
/// shorter. That is a truncation, said with the sizes, not "the client's data
/// stopped between egress and backend" (issue 30).
#[test]
fn packets_that_all_arrive_cut_short_are_a_truncation_not_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let lab = lab("masquerade-node");
    let Some(cut) = rewritten_backend(dir.path(), &["--mtu=80", "--mtu-trunc"]) else { return };
    let (d, e) = (lab.join("decap.pcap"), lab.join("egress.pcap"));
    let v = json(&[("decap", &d), ("egress", &e), ("backend", &cut)]);
    let tcp: Vec<&Value> = v["requests"].as_array().unwrap().iter().filter(|r| r["proto"] == "tcp").collect();
    assert_eq!(tcp.len(), 3);
    for r in tcp {
        let text = r["explanation"].as_str().unwrap();
        assert!(!text.contains("stopped between"), "{text}");
        assert!(
            text.contains("every client packet crossed between egress and backend, cut to at most 80 bytes"),
            "{text}"
        );
        let data = &r["data"];
        assert_eq!(data["cut"], "egress->backend", "{data:#}");
        assert_eq!(
            (data["cut_to"]["bytes"].as_u64(), data["cut_from"]["bytes"].as_u64()),
            (Some(80), Some(130))
        );
        assert_eq!(data["stopped"], Value::Null);
        assert_eq!(r["outcome"]["kind"], "completed");
    }
}

/// A DSCP rewrite (`tcprewrite --tos`, as a QoS policy does) and a VLAN tag
/// added on the way (`tcprewrite --enet-vlan=add`) are boundary traits said
/// where they happen, never on the boundaries that kept them (issue 30).
#[test]
fn a_dscp_rewrite_and_an_added_vlan_tag_are_said_where_they_happen() {
    let dir = tempfile::tempdir().unwrap();
    let lab = lab("masquerade-node");
    let (d, e) = (lab.join("decap.pcap"), lab.join("egress.pcap"));
    let Some(tos) = rewritten_backend(dir.path(), &["--tos=184"]) else { return };
    let v = json(&[("decap", &d), ("egress", &e), ("backend", &tos)]);
    let b = &v["boundaries"];
    assert_eq!((b[0]["tos"].as_str(), b[1]["tos"].as_str()), (Some("kept"), Some("rewritten")), "{b:#}");
    let change = &b[1]["tos_change"];
    assert_eq!((change["dscp_before"].as_u64(), change["dscp_after"].as_u64()), (Some(0), Some(46)), "{b:#}");
    let (_, table, _) = run(&[("decap", &d), ("egress", &e), ("backend", &tos)], &[]);
    let line = |t: &str, at: &str| {
        t.lines().find(|l| l.trim_start().starts_with(at)).unwrap_or_default().to_string()
    };
    assert!(line(&table, "egress->backend").contains("DSCP 0 -> 46"), "{table}");
    assert!(!line(&table, "decap->egress").contains("DSCP"), "{table}");
    let vlan_dir = tempfile::tempdir().unwrap();
    let Some(tagged) = rewritten_backend(
        vlan_dir.path(),
        &["--enet-vlan=add", "--enet-vlan-tag=100", "--enet-vlan-cfi=0", "--enet-vlan-pri=0"],
    ) else {
        return;
    };
    let v = json(&[("decap", &d), ("egress", &e), ("backend", &tagged)]);
    let b = &v["boundaries"];
    assert_eq!((b[0]["vlan"].as_str(), b[1]["vlan"].as_str()), (Some("kept"), Some("changed")), "{b:#}");
    assert_eq!(b[1]["vlan_change"], serde_json::json!({"before": null, "after": 100}), "{b:#}");
    let (_, table, _) = run(&[("decap", &d), ("egress", &e), ("backend", &tagged)], &[]);
    assert!(line(&table, "egress->backend").contains("untagged -> VLAN 100"), "{table}");
    // The requests themselves are as without the rewrites.
    for r in v["requests"].as_array().unwrap() {
        assert_eq!(r["outcome"]["kind"], "completed", "{r:#}");
        assert_eq!(r["source"]["changed"][0]["between"], "egress->backend", "{r:#}");
    }
}

/// A UDP request sent again 6 s later (an SNMP or DNS retry) whose first
/// sending the backend capture does not hold (it started after it): the
/// backend's flow, the same bytes from the same conversation inside its life
/// at egress, is that request — not "seen only at decap and egress", and no
/// clock blamed (issue 30: UDP's lifetime-overlap fallback).
#[test]
fn a_udp_retry_whose_first_sending_a_capture_missed_is_matched_there() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (label, only_again) in [("decap", false), ("egress", false), ("backend", true)] {
        let raw = std::fs::read(lab("masquerade-node").join(format!("{label}.pcap"))).unwrap();
        let path = dir.path().join(format!("{label}.pcap"));
        std::fs::write(&path, resend_pcap(&raw, b"tclab-masquerade-node-r004", 6, only_again)).unwrap();
        paths.push((label, path));
    }
    let captures: Vec<(&str, &Path)> = paths.iter().map(|(l, p)| (*l, p.as_path())).collect();
    let v = json(&captures);
    let r = &v["requests"][3];
    assert_eq!((&r["proto"], &r["captures"][0]["client"]), (&"udp".into(), &"198.18.90.42:40004".into()));
    assert_eq!(r["captures"][2]["seen"], true, "{r:#}");
    assert_eq!(r["captures"][2]["client"], "198.19.3.17:40004", "{r:#}");
    assert_eq!(r["matches"][1]["strength"], "strong");
    assert_eq!(r["outcome"]["kind"], "completed");
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{}", v["warnings"]);
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{}", v["unmatched"]);
    // the clocks are those of the other requests, not the retry's 6 s
    let offset = v["captures"][2]["clock_offset_ms"].as_f64().unwrap();
    assert!(offset.abs() < 1.0, "{offset}");
    // the retry alone: its first datagrams are not one packet, so no clock
    // is read from them (it was +6000 ms "± 0.000" from this one pair)
    for (_, path) in &paths {
        let raw = std::fs::read(path).unwrap();
        std::fs::write(path, keep_pcap(&raw, b"tclab-masquerade-node-r004")).unwrap();
    }
    let v = json(&captures);
    assert_eq!(v["requests"][0]["captures"][2]["client"], "198.19.3.17:40004");
    assert_eq!(v["captures"][2]["offset_method"], "none", "{}", v["captures"][2]);
    assert_eq!(v["captures"][1]["offset_method"], "request-reply", "{}", v["captures"][1]);
}

/// A UDP query between two ports above 1023 that egress lost while it kept
/// the answer: egress holds that flow from the server (its first datagram
/// went to the client). Its answer is the one decap and backend saw, from
/// the same server port: egress's flow is turned round and chained, and the
/// explanation says the query was not seen there (issue 30). With the
/// answer's bytes other at egress nothing shows it is an answer: it stays
/// unmatched, and the request names it as a flow of its endpoints at the
/// same time rather than passing egress by in silence.
#[test]
fn a_capture_that_saw_only_the_answer_is_chained_or_named() {
    let run = |garble: bool| {
        edited_json("masquerade-node", |label, mut raw| {
            if label == "egress" {
                raw = drop_pcap(&raw, b"r004 udp-request", b"echo ");
                if garble {
                    // the answer, egress's last record
                    let last = count_records(&raw);
                    raw = garble_pcap(&raw, &[last], 4);
                }
            }
            raw
        })
    };
    let v = run(false);
    let r = &v["requests"][3];
    let at = &r["captures"][1];
    assert_eq!((&at["seen"], &at["client"]), (&true.into(), &"198.18.90.42:40004".into()), "{r:#}");
    assert_eq!((&at["packets_to_server"], &at["packets_to_client"]), (&0.into(), &1.into()));
    assert_eq!(r["matches"][0]["strength"], "strong", "{r:#}");
    let e = r["explanation"].as_str().unwrap();
    assert!(e.contains("the query was not seen at egress, only its answer"), "{e}");
    assert_eq!(v["unmatched"][0]["count"], 0, "{}", v["unmatched"]);
    let v = run(true);
    let r = &v["requests"][3];
    assert_eq!(r["captures"][1]["seen"], false, "{r:#}");
    assert_eq!(r["same_tuple"], serde_json::json!(["egress"]), "{r:#}");
    let e = r["explanation"].as_str().unwrap();
    assert!(
        e.contains(
            "egress holds a flow with the same endpoints at the same time that matching did not tie to it"
        ),
        "{e}"
    );
    assert_eq!(v["unmatched"][0]["count"], 1, "{}", v["unmatched"]);
}

/// A request not tied to a capture that holds a flow of its endpoints at the
/// same time (the bytes differ: matching rightly did not tie them) does not
/// read "seen only at … not at egress" or pass egress by in silence: the
/// explanation names that flow (issue 30).
#[test]
fn a_flow_of_the_same_endpoints_and_time_with_other_bytes_is_named_not_passed_over() {
    use flate2::read::MultiGzDecoder;
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let gunzip = |name: &str| {
        let mut raw = Vec::new();
        MultiGzDecoder::new(std::fs::File::open(lab("udp-icmp").join(name)).unwrap())
            .read_to_end(&mut raw)
            .unwrap();
        raw
    };
    let mut paths = Vec::new();
    for (label, edit) in [("decap", false), ("egress", true), ("backend", false)] {
        let raw = gunzip(&format!("{label}.pcap.gz"));
        // egress: the first datagram's query and answer (records 3 and 4), their last 4 bytes
        let raw = if edit { garble_pcap(&raw, &[3, 4], 4) } else { raw };
        let path = dir.path().join(format!("{label}.pcap"));
        std::fs::write(&path, raw).unwrap();
        paths.push((label, path));
    }
    let captures: Vec<(&str, &Path)> = paths.iter().map(|(l, p)| (*l, p.as_path())).collect();
    let v = json(&captures);
    let r = &v["requests"][0];
    assert_eq!(r["captures"][0]["client"], "198.18.90.42:5353", "{r:#}");
    assert_eq!(
        (r["captures"][1]["seen"].as_bool(), &r["same_tuple"]),
        (Some(false), &serde_json::json!(["egress"]))
    );
    assert!(
        r["explanation"].as_str().unwrap().contains(
            "; egress holds a flow with the same endpoints at the same time that matching did not tie to it;"
        ),
        "{r:#}"
    );
    assert_eq!(v["unmatched"][0]["count"], 1);
    // The other requests: seen at egress, nothing to say.
    for r in v["requests"].as_array().unwrap().iter().skip(1) {
        assert!(r.get("same_tuple").is_none(), "{r:#}");
    }
}

/// A UDP conversation of two queries (the second one other bytes, 1 s
/// later) whose first query and answer one capture does not hold (it started
/// after them, or lost them): its flow starts with the second query, which
/// is a later datagram of the other capture's flow. The two are one request,
/// chained on that datagram with its evidence named, and the explanation
/// counts the datagrams the later capture lacks (issue 30: UDP chained on
/// later datagrams). Either capture may be the one that missed them.
#[test]
fn a_udp_conversation_whose_first_query_a_capture_missed_is_chained_on_its_next() {
    for missed in ["egress", "decap"] {
        let v = edited_json("masquerade-node", |label, raw| {
            // the query and its answer sent again 1 s later, other bytes
            let again = shift_pcap(&keep_pcap(&raw, b"r004 udp-request"), 1);
            let n = count_records(&again);
            assert_eq!(n, 2, "{label}: one query, one answer");
            let again = garble_pcap(&again, &[1, 2], 4);
            let mut out =
                if label == missed { drop_pcap(&raw, b"r004 udp-request", b"\xff\xfe\xfd") } else { raw };
            out.extend_from_slice(&again[24..]);
            out
        });
        let udp: Vec<&Value> =
            v["requests"].as_array().unwrap().iter().filter(|r| r["proto"] == "udp").collect();
        assert_eq!(udp.len(), 1, "{missed}: one request, not two: {udp:#?}");
        let r = udp[0];
        let hops: Vec<(String, u64)> = (0..3)
            .map(|c| {
                let h = &r["captures"][c];
                (
                    h["client"].as_str().unwrap_or("-").to_string(),
                    h["packets_to_server"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        let sent = |label: &str| if label == missed { 1 } else { 2 };
        let want = [
            ("198.18.90.42:40004".to_string(), sent("decap")),
            ("198.18.90.42:40004".to_string(), sent("egress")),
            ("198.19.3.17:40004".to_string(), 2),
        ];
        assert_eq!(hops, want, "{missed}: {r:#}");
        for m in r["matches"].as_array().unwrap() {
            assert_eq!(m["strength"], "strong", "{missed}: {r:#}");
            assert_eq!(m["evidence"][0], "udp-payload", "{missed}: {r:#}");
        }
        assert_eq!(r["outcome"]["kind"], "completed");
        let fewer = "fewer datagrams to the server at egress (1) than at decap (2)";
        assert_eq!(r["explanation"].as_str().unwrap().contains(fewer), missed == "egress", "{r:#}");
        assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{}", v["unmatched"]);
    }
}

/// Connections the backend saw without their handshakes (its capture started
/// after them), through a NAT that moved the server's port 80 to 50080,
/// above the clients' 4000x: the port guess takes the server for the client
/// there, and the sequence numbers would compare the wrong way round. The
/// handshake seen at egress settles the sides — or, with no handshake seen
/// anywhere, egress's guess (port 80 is the server's) does: the backend's
/// flows are turned round and chained (issue 30: orientation kept through
/// port remaps).
#[test]
fn a_midstream_connection_whose_server_port_a_nat_moved_above_the_clients_is_chained() {
    for everywhere in [false, true] {
        let v = edited_json("masquerade-node", |label, mut raw| {
            if everywhere || label == "backend" {
                raw = drop_syns_pcap(&raw);
            }
            if label == "backend" {
                raw = portmap_pcap(&raw, 80, 50080);
            }
            raw
        });
        let tcp: Vec<&Value> =
            v["requests"].as_array().unwrap().iter().filter(|r| r["proto"] == "tcp").collect();
        assert_eq!(tcp.len(), 3, "{everywhere}: {tcp:#?}");
        for r in tcp {
            let b = &r["captures"][2];
            let port = r["captures"][0]["client"].as_str().unwrap().rsplit(':').next().unwrap().to_string();
            assert_eq!(
                (&b["seen"], &b["client"], &b["server"]),
                (&true.into(), &format!("198.19.3.17:{port}").into(), &"198.19.96.10:50080".into()),
                "{everywhere}: {r:#}"
            );
            // both ways counted on their own side (egress's SYN and SYN-ACK
            // aside, when it saw them)
            let syn = u64::from(!everywhere);
            for way in ["packets_to_server", "packets_to_client"] {
                let egress = r["captures"][1][way].as_u64().unwrap();
                assert_eq!(b[way].as_u64(), Some(egress - syn), "{everywhere} {way}: {r:#}");
            }
            assert_eq!(r["matches"][1]["strength"], "strong", "{everywhere}: {r:#}");
            assert_eq!(r["matches"][1]["evidence"][0], "seq-ack", "{everywhere}: {r:#}");
            let moved = "destination 198.19.96.10:80 -> 198.19.96.10:50080 between egress and backend";
            assert!(r["explanation"].as_str().unwrap().contains(moved), "{everywhere}: {r:#}");
        }
        assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{}", v["unmatched"]);
    }
}

/// The lab's HTTP reverse proxy (`proxy-xff`: HTTP/1.0 upstream, `Via` and
/// `X-Forwarded-For` added) with no request id left to pass on (the header
/// renamed at both captures): no byte, ISN or id survives decap->egress. The
/// request line does (`GET /… HTTP/1.1` became `GET /… HTTP/1.0`), inside the
/// client connection's life: each request is chained there, weak, by
/// `request-line`, a proxy's new connection — and the explanation says what
/// the match rests on, not "time only" (issue 32: proxies that rewrite HTTP).
#[test]
fn a_proxy_that_rewrites_a_request_without_an_id_is_chained_weakly_by_its_request_line() {
    let v = edited_json("proxy-xff", |_, raw| replace_pcap(&raw, b"X-Request-ID", b"X-Request-Ix"));
    let proxied: Vec<&Value> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["captures"][0]["server"].as_str().is_some_and(|s| s.ends_with(":80")))
        .collect();
    assert_eq!(proxied.len(), 3, "{v:#}");
    for r in proxied {
        let m = &r["matches"][0];
        assert_eq!((&m["between"], &m["strength"]), (&"decap->egress".into(), &"weak".into()), "{r:#}");
        assert_eq!(m["evidence"], serde_json::json!(["request-line", "time"]), "{r:#}");
        assert_eq!(r["matches"][1]["strength"], "strong", "{r:#}");
        assert_eq!(r["source"]["changed"][0]["kind"], "proxy", "{r:#}");
        assert_eq!(r["captures"][2]["seen"], true, "{r:#}");
        let e = r["explanation"].as_str().unwrap();
        assert!(e.contains("match at decap->egress is weak (the same request line and timing only)"), "{e}");
        assert!(!e.contains("time only)"), "{e}");
    }
    // its request id kept, the same proxy's requests are strong by it
    let v = edited_json("proxy-xff", |_, raw| raw);
    assert_eq!(v["requests"][0]["matches"][0]["strength"], "strong");
    assert_eq!(v["requests"][0]["matches"][0]["evidence"][0], "request-id");
}

/// A server whose answer to a SYN dies on the way back (the node has no
/// route to the client: no-return-route) drops that answer on the ICMP error
/// and answers the client's next SYN with a new ISN. The backend then holds
/// every SYN of the connection, each answered with another ISN: one
/// connection, not a new flow per answer — so not "the first SYN was not
/// seen at backend; the retransmission at +1.0 s was" for a backend that saw
/// it, and no unmatched flow left at the backend (issue 50). The lab's
/// captures with the client's third SYN (+3 s, Linux's schedule) and the
/// server's third answer added.
#[test]
fn a_server_answering_each_syn_with_a_new_isn_keeps_one_connection() {
    let v = edited_json("no-return-route", |label, raw| {
        let raw = repeat_last_pcap(&raw, 0x02, 2_000_000_000, 0);
        if label == "backend" {
            repeat_last_pcap(&raw, 0x12, 2_000_000_000, 0x0100_0000)
        } else {
            raw
        }
    });
    let r = &v["requests"][0];
    assert_eq!((&r["proto"], &r["captures"][2]["seen"]), (&"tcp".into(), &true.into()), "{r:#}");
    assert!(r.get("syn_missed").is_none_or(Value::is_null), "{r:#}");
    let text = r["explanation"].as_str().unwrap();
    assert!(!text.contains("not seen at backend"), "{text}");
    assert_eq!(r["outcome"]["kind"], "no-reply", "{r:#}");
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{}", v["unmatched"]);
    assert_eq!(v["requests"].as_array().unwrap().len(), 3);
}

/// A +5 s step of the backend's clock with only two requests after it and one
/// pair before (udp-icmp: requests 4 and 5, an echo and a datagram, come
/// 150 ms and 300 ms after the first three): too few pairs to correct, so
/// the two lose the backend. Never silently (issue 50): the warning names
/// them, each explanation says what it became at the backend is unknown,
/// and the summary does not call them unchanged.
#[test]
fn a_step_too_thin_to_correct_names_the_requests_it_makes_unknown() {
    use flate2::read::MultiGzDecoder;
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for label in ["decap", "egress", "backend"] {
        let mut raw = Vec::new();
        let file = std::fs::File::open(lab("udp-icmp").join(format!("{label}.pcap.gz"))).unwrap();
        MultiGzDecoder::new(file).read_to_end(&mut raw).unwrap();
        if label == "backend" {
            raw = step_pcap_from(&raw, 100_000_000, 5_000_000_000);
        }
        let path = dir.path().join(format!("{label}.pcap"));
        std::fs::write(&path, raw).unwrap();
        paths.push((label, path));
    }
    let captures: Vec<(&str, &Path)> = paths.iter().map(|(l, p)| (*l, p.as_path())).collect();
    let v = json(&captures);
    let warning = (v["warnings"].as_array().unwrap().iter())
        .find_map(|w| w["message"].as_str().filter(|m| m.contains("were not matched by time")))
        .expect("a warning");
    assert!(warning.contains("their requests (4, 5) read as not seen at backend"), "{warning}");
    for r in &v["requests"].as_array().unwrap()[3..] {
        assert_eq!(r["apart"], serde_json::json!(["backend"]), "{r:#}");
        assert_eq!(r["captures"][2]["seen"], false, "{r:#}");
        let e = r["explanation"].as_str().unwrap();
        assert!(e.contains("unchanged through decap, egress; backend holds a flow tied to it"), "{e}");
        assert!(e.contains("left apart: what it became there is unknown"), "{e}");
    }
    let (_, table, _) = run(&captures, &[]);
    assert!(
        table.contains(
            "2 requests: addresses unchanged as far as egress, unknown at backend (it holds a flow tied to it that matching by time left apart), replies on the same path"
        ),
        "{table}"
    );
    assert!(!table.contains("requests: addresses unchanged, replies"), "{table}");
}

/// A middle capture that lost a connection's first SYN (record 3 of the
/// lab's no-return-route egress) saw only its retransmission, 1 s later,
/// while the last capture holds both (issue 50): the backend's flow starts at
/// the first SYN, a second before egress's, and was left unchained ("1 pairs
/// matched without time … not matched by time"). It meets egress's flow at
/// its last SYN: one chain, the first SYN said missed at egress only.
#[test]
fn a_syn_a_middle_capture_lost_leaves_the_last_capture_chained() {
    let v =
        edited_json(
            "no-return-route",
            |label, raw| {
                if label == "egress" {
                    drop_records_pcap(&raw, &[3])
                } else {
                    raw
                }
            },
        );
    let r = &v["requests"][0];
    assert_eq!(r["proto"], "tcp", "{r:#}");
    let seen: Vec<&Value> = r["captures"].as_array().unwrap().iter().map(|c| &c["seen"]).collect();
    assert_eq!(seen, [&Value::Bool(true); 3], "{r:#}");
    assert_eq!(r["syn_missed"]["at"], "egress", "{r:#}");
    assert!(
        r["explanation"]
            .as_str()
            .unwrap()
            .ends_with("the first SYN was not seen at egress; the retransmission at +1.0 s was"),
        "{r:#}"
    );
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{}", v["warnings"]);
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{}", v["unmatched"]);
}
