//! `compare` for change records, through the binary, on lab pairs: masquerade
//! switched on at the node, a removed return route, an eviction drill (the same
//! test repeated, and one that hit the restart), a second client only after, a
//! service only before. Every expectation passing and failing with its exit
//! status, regressions (a botched change whose expectation holds) failing
//! unless allowed, and reports (JSON, NDJSON, CSV) read back losslessly. What each
//! case expects comes from the scenarios' configuration (testdata/lab/index.tsv,
//! testdata/lab-compare/README.md), never from tuplecorr's own output.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// `lab/NAME` or `lab-compare/NAME` as a comma-separated capture list, relative to testdata/.
fn side(dir: &str) -> String {
    ["decap.pcap", "egress.pcap", "backend.pcap"]
        .iter()
        .map(|f| format!("{dir}/{f}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn compare(before: &str, after: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(root())
        .args(["compare", "--quiet"])
        .args(extra)
        .arg(before)
        .arg(after)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// The pairing of `service` and `client` in a JSON comparison.
fn pairing<'a>(v: &'a Value, service: &str, client: &str) -> &'a Value {
    v["pairings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["service"] == service && p["client"] == client)
        .unwrap_or_else(|| panic!("no pairing {service} from {client}"))
}

/// Request numbers breaking expectation `i`.
fn broken(v: &Value, i: usize) -> Vec<u64> {
    v["expectations"][i]["broken_by"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["requests"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()))
        .collect()
}

#[test]
fn masquerade_on_at_the_node_states_the_source_before_and_after() {
    let (b, a) = (side("lab/preserved"), side("lab/masquerade-node"));
    let o = compare(&b, &a, &["--format", "json", "--expect-source", "198.19.3.17"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["expectations"][0]["expectation"], "source at backend is 198.19.3.17");
    assert_eq!(v["expectations"][0]["holds"], true);
    assert_eq!(v["expectations"][0]["checked"], 4);
    let udp = pairing(&v, "198.19.96.10:9000", "198.18.90.42");
    assert_eq!(udp["sides"], "both");
    assert_eq!(udp["before"]["sources"][2]["sources"][0], "198.18.90.42");
    assert_eq!(udp["after"]["sources"][2]["sources"][0], "198.19.3.17");
    assert_eq!(
        (udp["source_changed"].as_bool(), udp["reply_path_changed"].as_bool()),
        (Some(true), Some(false))
    );
    // a second client (198.18.90.43) only after: not a source change of 198.18.90.42's pairing
    let first = pairing(&v, "198.19.96.10:80", "198.18.90.42");
    assert_eq!(first["sides"], "both");
    assert_eq!(first["after"]["sources"][0]["sources"], serde_json::json!(["198.18.90.42"]));
    let second = pairing(&v, "198.19.96.10:80", "198.18.90.43");
    assert_eq!(
        (second["sides"].as_str(), second["source_changed"].as_bool()),
        (Some("only-after"), Some(false))
    );
    assert_eq!(
        second["statement"],
        "request to 198.19.96.10:80 from 198.18.90.43: requested only after (1 request)"
    );
    // services only before: TCP 8082 and the ICMP echo
    for service in ["198.19.96.10:8082", "198.19.96.10"] {
        let p = pairing(&v, service, "198.18.90.42");
        assert_eq!((p["sides"].as_str(), p["service_in_both"].as_bool()), (Some("only-before"), Some(false)));
        assert!(p["statement"].as_str().unwrap().ends_with("; the service was not requested after"), "{p}");
        assert_eq!(
            (p["reply_path_changed"].as_bool(), p["outcome_changed"].as_bool()),
            (Some(false), Some(false))
        );
    }
}

#[test]
fn the_markdown_statement_lists_captures_pairings_and_marked_expectations() {
    let (b, a) = (side("lab/preserved"), side("lab/masquerade-node"));
    let o = compare(
        &b,
        &a,
        &["--format", "markdown", "--expect-source", "198.19.3.17", "--expect-reply", "same-path"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = text(&o);
    assert!(
        md.contains(
            "**Before**: decap `lab/preserved/decap.pcap` (clock +0 ms), egress `lab/preserved/egress.pcap`"
        ),
        "{md}"
    );
    assert!(md.contains("**After**: decap `lab/masquerade-node/decap.pcap` (clock +0 ms)"), "{md}");
    assert!(md.contains("; requests from 2026-"), "{md}");
    assert!(md.contains(
        "- `udp 198.19.96.10:9000 from 198.18.90.42` (1 before, 1 after): source decap 198.18.90.42 → 198.18.90.42, \
         egress 198.18.90.42 → 198.18.90.42, backend 198.18.90.42 → 198.19.3.17; reply path same-path → same-path; \
         outcome completed → completed\n"
    ), "{md}");
    assert!(md.contains("- `tcp 198.19.96.10:80 from 198.18.90.43` (0 before, 1 after) — only after: source decap 198.18.90.43,"), "{md}");
    assert!(md.contains("- ✔ source at backend is 198.19.3.17 (4 requests checked, 0 broken)\n"), "{md}");
    assert!(md.contains("- ✔ reply path same-path (4 requests checked, 0 broken)\n"), "{md}");
    // the text default is the same block without Markdown marks
    let plain = text(&compare(&b, &a, &["--expect-source", "198.19.3.17"]));
    assert!(plain.contains("\nBefore: decap lab/preserved/decap.pcap (clock +0 ms)"), "{plain}");
    assert!(plain.contains("- ✔ source at backend is 198.19.3.17"), "{plain}");
}

#[test]
fn a_source_expectation_that_does_not_hold_exits_1_listing_the_requests() {
    let (b, a) = (side("lab/preserved"), side("lab/masquerade-node"));
    // masquerade is on: the source at backend is not the client's own
    let o = compare(&b, &a, &["--format", "json", "--expect-source", "preserved"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["expectations"][0]["holds"], false);
    assert_eq!(broken(&v, 0), [1, 2, 3, 4]);
    assert_eq!(v["expectations"][0]["broken_by"][2]["client"], "198.18.90.43");
    assert_eq!(v["expectations"][0]["broken_by"][2]["found"], "source at backend 198.19.3.17");
    assert!(stderr(&o).contains("expectation not met: source at backend preserved (the client's own address): broken by requests 1, 2, 3, 4"), "{}", stderr(&o));
    // at egress (before the node) the source is still the client's: 198.19.3.17 fails there, preserved holds
    let o = compare(
        &b,
        &a,
        &[
            "--format",
            "json",
            "--expect-source",
            "198.19.3.17",
            "--expect-source",
            "preserved",
            "--at",
            "egress",
            "--at",
            "egress",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(
        (v["expectations"][0]["holds"].as_bool(), v["expectations"][1]["holds"].as_bool()),
        (Some(false), Some(true))
    );
    // a network: the node's 198.19.3.0/24 holds at backend
    let o = compare(&b, &a, &["--expect-source", "198.19.3.0/24", "--format", "markdown"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("- ✔ source at backend in 198.19.3.0/24"));
}

#[test]
fn a_removed_return_route_breaks_the_reply_expectation_and_its_fix_holds() {
    // after: the node has no route back to the tunnel pool: every reply lost between egress and backend
    let o = compare(
        &side("lab/preserved"),
        &side("lab/no-return-route"),
        &["--format", "json", "--expect-reply", "same-path"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(broken(&v, 0), [1, 2, 3]);
    assert_eq!(v["expectations"][0]["broken_by"][0]["found"], "reply path reply-lost egress->backend");
    let udp = pairing(&v, "198.19.96.10:9000", "198.18.90.42");
    assert_eq!(
        (udp["reply_path_changed"].as_bool(), udp["source_changed"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(udp["expectations_broken"], serde_json::json!(["reply path same-path"]));
    // the fix (route restored): replies on the same path again
    let (b, a) = (side("lab/no-return-route"), side("lab/preserved"));
    let o = compare(&b, &a, &["--expect-reply", "same-path"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // request 5 of preserved goes to a server that never answers: handshake-only, not completed
    let o = compare(
        &b,
        &a,
        &["--format", "json", "--expect-reply", "same-path", "--expect-outcome", "completed"],
    );
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["expectations"][0]["holds"], true);
    assert_eq!(broken(&v, 1), [5]);
    assert_eq!(v["expectations"][1]["broken_by"][0]["found"], "outcome handshake-only");
}

#[test]
fn eviction_drill_unchanged_holds_for_a_repeat_and_breaks_for_the_request_that_hit_the_restart() {
    // the same test repeated (clock-shift is masquerade-node's configuration run again)
    let before = side("lab/masquerade-node");
    let o = compare(
        &before,
        &side("lab/clock-shift"),
        &["--format", "json", "--expect-unchanged", "--expect-outcome", "completed"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["expectations"][0]["checked"], 3); // three service/client pairings
    assert_eq!(
        v["after"]["captures"][1]["clock_offset_ms"].as_f64().map(|ms| (ms - 2750.0).abs() < 1.0),
        Some(true)
    );
    // during the restart 198.18.90.43's request stopped at decap
    let o = compare(
        &before,
        &side("lab-compare/eviction-during"),
        &["--format", "json", "--expect-unchanged", "--expect-outcome", "completed"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let b = &v["expectations"][0]["broken_by"];
    assert_eq!(b.as_array().unwrap().len(), 1, "{b}");
    assert_eq!(
        (b[0]["client"].as_str(), b[0]["service"].as_str()),
        (Some("198.18.90.43"), Some("198.19.96.10:80"))
    );
    assert_eq!(b[0]["found"], "reply path changed, outcome changed");
    assert_eq!(pairing(&v, "198.19.96.10:80", "198.18.90.43")["statement"], "request to 198.19.96.10:80 from 198.18.90.43: not seen at egress, backend after; replies on the same path before, no reply after; outcome completed before, no-reply after; a regression: outcome and reply path worse after");
    // that request is also a regression (completed → no-reply): exit status 1 even without the expectations
    let r = &v["regressions"];
    assert_eq!(r.as_array().unwrap().len(), 1, "{r}");
    assert_eq!(
        (r[0]["client"].as_str(), r[0]["requests_after"].clone()),
        (Some("198.18.90.43"), serde_json::json!([3]))
    );
    assert_eq!(r[0]["worse"], serde_json::json!(["outcome", "reply-path"]));
    assert_eq!(
        (r[0]["outcome_after"].clone(), r[0]["reply_path_after"].clone()),
        (serde_json::json!(["no-reply"]), serde_json::json!(["no-reply"]))
    );
    let plain = compare(&before, &side("lab-compare/eviction-during"), &[]);
    assert_eq!(plain.status.code(), Some(1), "{}", stderr(&plain));
    assert_eq!(broken(&v, 1), [3]);
    assert_eq!(v["expectations"][1]["broken_by"][0]["found"], "outcome no-reply");
    let p = pairing(&v, "198.19.96.10:80", "198.18.90.43");
    assert_eq!(p["after"]["sources"][1]["sources"], serde_json::json!([]), "not seen at egress");
    assert_eq!(pairing(&v, "198.19.96.10:80", "198.18.90.42")["expectations_broken"], serde_json::json!([]));
}

#[test]
fn a_botched_change_is_a_regression_although_its_source_expectation_holds() {
    // SNAT removed (masquerade-node → no-return-route) but no return route added: the source at
    // backend is the client's own as the record says, yet every request went from completed to
    // no-reply with its reply lost between egress and backend
    let (b, a) = (side("lab/masquerade-node"), side("lab/no-return-route"));
    let o = compare(&b, &a, &["--format", "json", "--expect-source", "preserved", "--at", "backend"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["expectations"][0]["holds"].as_bool(), v["expectations"][0]["checked"].as_u64()),
        (Some(true), Some(3))
    );
    assert_eq!(v["regressions_allowed"], false);
    let r = v["regressions"].as_array().unwrap();
    assert_eq!(r.len(), 2, "{r:?}");
    for (reg, service, proto, before, after) in
        [(&r[0], "198.19.96.10:80", "tcp", &[1, 2][..], 1), (&r[1], "198.19.96.10:9000", "udp", &[4][..], 2)]
    {
        assert_eq!(
            (reg["proto"].as_str(), reg["service"].as_str(), reg["client"].as_str()),
            (Some(proto), Some(service), Some("198.18.90.42"))
        );
        assert_eq!(reg["worse"], serde_json::json!(["outcome", "reply-path"]));
        assert_eq!(reg["requests_before"], serde_json::json!(before));
        assert_eq!(reg["requests_after"], serde_json::json!([after]));
        assert_eq!(reg["outcome_before"], serde_json::json!(["completed"]));
        assert_eq!(reg["outcome_after"], serde_json::json!(["no-reply"]));
        assert_eq!(reg["reply_path_before"], serde_json::json!(["same-path"]));
        assert_eq!(reg["reply_path_after"], serde_json::json!(["reply-lost egress->backend"]));
        assert_eq!(
            pairing(&v, service, "198.18.90.42")["regressed"],
            serde_json::json!(["outcome", "reply-path"])
        );
    }
    // the client 198.18.90.43 (only before) and the ICMP echo (only after) are no regression
    assert_eq!(pairing(&v, "198.19.96.10:80", "198.18.90.43")["regressed"], serde_json::json!([]));
    assert!(stderr(&o).contains("tuplecorr: regression: tcp 198.19.96.10:80 from 198.18.90.42 (request 1 after): outcome completed → no-reply; reply path same-path → reply-lost egress->backend\n"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("expectation not met"), "{}", stderr(&o));
    // the text block names the regressed requests with the ✔ of the expectation
    let o = compare(&b, &a, &["--expect-source", "preserved", "--at", "backend"]);
    assert_eq!(o.status.code(), Some(1));
    let t = text(&o);
    assert!(t.contains("\nRegressions\n\n- ✘ 2 of 2 services/clients in both runs got worse\n  - ✘ tcp 198.19.96.10:80 from 198.18.90.42 (request 1 after): outcome completed → no-reply; reply path same-path → reply-lost egress->backend\n  - ✘ udp 198.19.96.10:9000 from 198.18.90.42 (request 2 after): outcome completed → no-reply; reply path same-path → reply-lost egress->backend\n"), "{t}");
    assert!(
        t.contains(
            "- ✔ source at backend preserved (the client's own address) (3 requests checked, 0 broken)"
        ),
        "{t}"
    );
    assert!(
        t.contains(
            "outcome completed before, no-reply after; a regression: outcome and reply path worse after\n"
        ),
        "{t}"
    );
    // no expectation at all: still exit status 1
    assert_eq!(compare(&b, &a, &[]).status.code(), Some(1));
    // CSV: the pairing's row says what got worse
    let o = compare(&b, &a, &["--format", "csv"]);
    assert_eq!(o.status.code(), Some(1));
    let mut reader = csv::Reader::from_reader(o.stdout.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let col = header.iter().position(|h| h == "regressed").unwrap();
    let cells: Vec<(String, String, String)> = reader
        .records()
        .map(|r| r.unwrap())
        .map(|r| (r[1].to_string(), r[2].to_string(), r[col].to_string()))
        .collect();
    assert!(
        cells.contains(&("198.19.96.10:9000".into(), "198.18.90.42".into(), "outcome;reply-path".into())),
        "{cells:?}"
    );
    assert!(cells.contains(&("198.19.96.10:80".into(), "198.18.90.43".into(), String::new())), "{cells:?}");
}

#[test]
fn allow_regressions_reports_them_as_a_note_and_exits_0() {
    let (b, a) = (side("lab/masquerade-node"), side("lab/no-return-route"));
    let o = compare(&b, &a, &["--allow-regressions", "--format", "json", "--expect-source", "preserved"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["regressions_allowed"], true);
    assert_eq!(v["regressions"].as_array().unwrap().len(), 2);
    assert!(stderr(&o).contains("tuplecorr: note: regression (allowed): udp 198.19.96.10:9000 from 198.18.90.42 (request 2 after): outcome completed → no-reply"), "{}", stderr(&o));
    let o = compare(&b, &a, &["--allow-regressions", "--format", "markdown"]);
    assert_eq!(o.status.code(), Some(0));
    let md = text(&o);
    assert!(md.contains("#### Regressions\n\n- note: 2 of 2 services/clients in both runs got worse (allowed by --allow-regressions: the exit status ignores them)\n  - note: tcp 198.19.96.10:80 from 198.18.90.42 (request 1 after):"), "{md}");
    assert!(!md.contains('✘'), "{md}");
    // an expectation that does not hold still fails
    let o = compare(&b, &a, &["--allow-regressions", "--expect-reply", "same-path"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_change_without_regression_exits_0_and_its_fix_is_not_one() {
    // masquerade switched on: every request still completes on the same path
    let o = compare(&side("lab/preserved"), &side("lab/masquerade-node"), &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["regressions"], serde_json::json!([]));
    assert!(v["pairings"].as_array().unwrap().iter().all(|p| p["regressed"] == serde_json::json!([])));
    let t = text(&compare(&side("lab/preserved"), &side("lab/masquerade-node"), &[]));
    assert!(
        t.contains("\nRegressions\n\n- ✔ nothing got worse (2 services/clients in both runs checked)\n"),
        "{t}"
    );
    // the return route restored: no-reply → completed is better, not worse
    let o = compare(&side("lab/no-return-route"), &side("lab/masquerade-node"), &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["regressions"], serde_json::json!([]));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    let (b, a) = (side("lab/preserved"), side("lab/masquerade-node"));
    for (args, says) in [
        (
            &["--expect-source", "198.19.3.17", "--at", "node"][..],
            "--at node: the after run has no capture node",
        ),
        (&["--expect-source", "nonsense"][..], "--expect-source nonsense: expected an address"),
        (&["--expect-source", "198.19.3.17", "--at", "decap", "--at", "egress"][..], "--at: give it once"),
        (&["--expect-reply", "sideways"][..], "invalid value 'sideways'"),
        (&["--at", "egress"][..], "--expect-source"),
        (&["--format", "html"][..], "invalid value 'html'"),
        (&["-o", "change.html"][..], "html is for the main form"),
    ] {
        let o = compare(&b, &a, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}: nothing written");
    }
}

#[test]
fn compare_help_describes_every_option_and_the_exit_statuses() {
    let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(["compare", "--help"]).output().unwrap();
    let help = text(&o);
    for line in [
        "--format <FORMAT>",
        "-o, --output <FILE>",
        "-q, --quiet",
        "--expect-source",
        "--at <LABEL>",
        "--allow-regressions",
    ] {
        let at = help.find(line).unwrap_or_else(|| panic!("{line} missing: {help}"));
        let rest = &help[at + line.len()..];
        let described = rest.lines().next().unwrap().trim();
        assert!(
            described.len() > 10 || rest.lines().nth(1).is_some_and(|l| l.trim().len() > 10),
            "{line} has no description"
        );
    }
    assert!(help.contains("Output format: table (the change-record block as text"), "{help}");
    assert!(help.contains("Exit status: 0 every expectation holds"), "{help}");
    assert!(help.contains("1 an expectation does not hold, or a regression"), "{help}");
    assert!(help.contains("A service and client got worse (a regression) when"), "{help}");
}

/// Writes `scenario`'s report in `format` with the binary into `dir`.
fn report(dir: &Path, scenario: &str, format: &str) -> String {
    let path = dir.join(format!("{scenario}.{format}"));
    let files: Vec<String> = side(&format!("lab/{scenario}")).split(',').map(String::from).collect();
    let st = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(root())
        .args(["--quiet", "--format", format, "-o"])
        .arg(&path)
        .args(&files)
        .status()
        .unwrap();
    assert!(st.success());
    path.display().to_string()
}

#[test]
fn reports_in_every_format_read_back_to_the_same_comparison_as_the_captures() {
    let dir = tempfile::tempdir().unwrap();
    let pairings = |o: &Output| json(o)["pairings"].clone();
    for (b, a) in
        [("preserved", "masquerade-node"), ("masquerade-node", "proxy"), ("preserved", "asymmetric")]
    {
        let want = compare(&side(&format!("lab/{b}")), &side(&format!("lab/{a}")), &["--format", "json"]);
        // asymmetric's replies bypass egress (same-path → bypassed): a regression, exit status 1
        let status = if a == "asymmetric" { 1 } else { 0 };
        assert_eq!(want.status.code(), Some(status), "{}", stderr(&want));
        for format in ["json", "ndjson", "csv"] {
            let got = compare(
                &report(dir.path(), b, format),
                &report(dir.path(), a, format),
                &["--format", "json"],
            );
            assert_eq!(got.status.code(), Some(status), "{format}: {}", stderr(&got));
            assert_eq!(pairings(&got), pairings(&want), "{b} → {a} from {format} reports");
            assert_eq!(json(&got)["regressions"], json(&want)["regressions"], "{b} → {a} from {format}");
        }
    }
}

#[test]
fn csv_reports_keep_the_change_kind_and_the_bypassed_capture() {
    let dir = tempfile::tempdir().unwrap();
    for scenario in ["proxy", "asymmetric", "dnat-service"] {
        let from_json =
            tuplecorr::compare::load_report(Path::new(&report(dir.path(), scenario, "json"))).unwrap();
        let from_csv =
            tuplecorr::compare::load_report(Path::new(&report(dir.path(), scenario, "csv"))).unwrap();
        let from_ndjson =
            tuplecorr::compare::load_report(Path::new(&report(dir.path(), scenario, "ndjson"))).unwrap();
        assert_eq!(from_csv.requests.len(), from_json.requests.len());
        for ((c, j), n) in from_csv.requests.iter().zip(&from_json.requests).zip(&from_ndjson.requests) {
            assert_eq!(
                (&c.source, &c.destination, &c.reply, &c.outcome),
                (&j.source, &j.destination, &j.reply, &j.outcome),
                "{scenario} request {}",
                j.request
            );
            assert_eq!(n, j, "{scenario} request {}: NDJSON and JSON read back alike", j.request);
        }
    }
    // from the scenarios' configuration: a proxy change in `proxy`, replies bypassing egress in `asymmetric`
    let proxy = tuplecorr::compare::load_report(Path::new(&report(dir.path(), "proxy", "csv"))).unwrap();
    assert!(proxy
        .requests
        .iter()
        .any(|r| r.source.iter().any(|c| c.kind == tuplecorr::verdict::ChangeKind::Proxy)));
    let asym = tuplecorr::compare::load_report(Path::new(&report(dir.path(), "asymmetric", "csv"))).unwrap();
    assert!(asym.requests.iter().all(|r| r.reply.bypassed == Some(1)), "bypassed egress");
}
