//! Reports on the lab's real captures (issue 5): every format written, parsed
//! back and checked field by field against the scenario's expected.json; the
//! change-record statement of `compare` on two scenarios that differ by one
//! masquerade rule; filters; colour on a pseudo-terminal.

use crate::lab_verdicts::{expected, is_stray, labels, run_typed as run, scenarios};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use tuplecorr::report::wire::{Findings as Wire, Request, WireName};
use tuplecorr::report::{self, Format, ReportOptions};
use tuplecorr::verdict::{Findings, IcmpCode};

fn write(f: &Findings, format: Format) -> String {
    let mut out = Vec::new();
    report::write(f, &ReportOptions { format, ..ReportOptions::default() }, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn endpoint_matches(expected: &str, got: &str) -> bool {
    match expected.strip_suffix(":*") {
        Some(addr) => got.rsplit_once(':').is_some_and(|(a, p)| a == addr && p.parse::<u16>().is_ok()),
        None => expected == got,
    }
}

fn expected_boundaries(v: &Value) -> String {
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().map(str::to_string).unwrap_or_else(|| b["between"].as_str().unwrap().to_string()))
        .collect::<Vec<_>>()
        .join(";")
}

/// The expected request whose client and server at capture 1 are `client` and
/// `server` (a reply from elsewhere is listed on its own with the client's endpoint).
fn expected_request<'a>(exp: &'a Value, first: &str, client: &str, server: &str) -> Option<&'a Value> {
    exp["requests"].as_array().unwrap().iter().find(|r| {
        r["captures"][first]["client"].as_str() == Some(client)
            && r["captures"][first]["server"].as_str().is_some_and(|s| endpoint_matches(s, server))
    })
}

#[test]
fn csv_parsed_back_matches_every_expected_field() {
    let mut failures = Vec::new();
    for dir in scenarios() {
        let (exp, found) = run(&dir);
        let labels = labels(&dir, &exp);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let text = write(&found, Format::Csv);
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
        let col =
            |h: &str| header.iter().position(|x| x == h).unwrap_or_else(|| panic!("{name}: no column {h}"));
        let mut rows = 0;
        for row in rd.records() {
            let row = row.unwrap();
            let (client, server) = (&row[col("client")], &row[col(&format!("{}_server", labels[0]))]);
            let Some(e) = expected_request(&exp, &labels[0], client, server) else {
                if !is_stray(&exp, client, server) {
                    failures.push(format!("{name}: unexpected row for {client}"));
                }
                continue;
            };
            rows += 1;
            if let Some(u) = e.get("unexpected_source") {
                let want = u.as_object().map_or(String::new(), |u| {
                    format!(
                        "{} {} at {}",
                        u["from"].as_str().unwrap(),
                        u["packet"].as_str().unwrap(),
                        u["seen_at"].as_str().unwrap()
                    )
                });
                if want != row[col("reply_unexpected_source")] {
                    failures.push(format!(
                        "{name} {client} reply_unexpected_source: expected {want:?}, got {:?}",
                        &row[col("reply_unexpected_source")]
                    ));
                }
            }
            let mut check = |what: &str, want: String, got: &str| {
                if want != got {
                    failures.push(format!("{name} {client} {what}: expected {want:?}, got {got:?}"));
                }
            };
            check("proto", e["proto"].as_str().unwrap().into(), &row[col("proto")]);
            for l in &labels {
                let h = &e["captures"][l];
                for key in ["client", "server"] {
                    let got = &row[col(&format!("{l}_{key}"))];
                    match h[key].as_str() {
                        Some(want) if endpoint_matches(want, got) => {}
                        Some(want) => check(&format!("{l}_{key}"), want.into(), got),
                        None => check(&format!("{l}_{key}"), String::new(), got),
                    }
                }
                let reply = match (h["seen"].as_bool().unwrap(), h["reply_seen"].as_bool().unwrap()) {
                    (_, true) => "yes",
                    (true, false) => "no",
                    (false, false) => "",
                };
                check(&format!("{l}_reply"), reply.into(), &row[col(&format!("{l}_reply"))]);
            }
            check(
                "source_changed_at",
                expected_boundaries(&e["source_changed_at"]),
                &row[col("source_changed_at")],
            );
            check(
                "destination_changed_at",
                expected_boundaries(&e["destination_changed_at"]),
                &row[col("destination_changed_at")],
            );
            check("reply_path", e["reply_path"].as_str().unwrap().into(), &row[col("reply_path")]);
            check("outcome", e["outcome"].as_str().unwrap().into(), &row[col("outcome")]);
            check("outcome_icmp", e["outcome_icmp"].as_str().unwrap_or("").into(), &row[col("outcome_icmp")]);
        }
        if rows != exp["requests"].as_array().unwrap().len() {
            failures.push(format!("{name}: {rows} CSV rows"));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

/// The verdict fields of one request, as the expected.json names them.
fn verdict_fields(r: &Request) -> (String, String, String, Option<String>) {
    (
        r.source.changed.iter().map(|c| c.between.clone()).collect::<Vec<_>>().join(";"),
        r.reply.path.wire().to_string(),
        r.outcome.kind.wire().to_string(),
        r.outcome.icmp.clone(),
    )
}

#[test]
fn json_and_ndjson_parsed_back_match_the_findings_and_the_expectation() {
    for dir in scenarios() {
        let (exp, found) = run(&dir);
        let labels = labels(&dir, &exp);
        let json: Wire = serde_json::from_str(&write(&found, Format::Json)).unwrap();
        let nd: Vec<Request> =
            write(&found, Format::Ndjson).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(json.requests.len(), found.requests.len());
        assert_eq!(nd.len(), found.requests.len());
        assert_eq!(json.captures.iter().map(|c| c.label.clone()).collect::<Vec<_>>(), labels);
        for (j, n) in json.requests.iter().zip(&nd) {
            let client = j.captures[0].client.clone().unwrap();
            let server = j.captures[0].server.clone().unwrap();
            let Some(e) = expected_request(&exp, &labels[0], &client, &server) else {
                assert!(is_stray(&exp, &client, &server), "{} {client} -> {server}", dir.display());
                continue;
            };
            let want = (
                expected_boundaries(&e["source_changed_at"]),
                e["reply_path"].as_str().unwrap().to_string(),
                e["outcome"].as_str().unwrap().to_string(),
                e["outcome_icmp"].as_str().map(str::to_string),
            );
            assert_eq!(verdict_fields(j), want, "{} {client} (json)", dir.display());
            assert_eq!(verdict_fields(n), want, "{} {client} (ndjson)", dir.display());
            for (i, l) in labels.iter().enumerate() {
                assert_eq!(j.captures[i].seen, e["captures"][l]["seen"].as_bool().unwrap());
                assert_eq!(j.captures[i].reply_seen, e["captures"][l]["reply_seen"].as_bool().unwrap());
                if j.captures[i].seen {
                    let cid = j.captures[i].community_id.as_deref().unwrap();
                    assert!(cid.starts_with("1:") && cid.len() == 30, "{cid}");
                    assert!(j.captures[i].wireshark_filter.as_deref().unwrap().contains("addr=="));
                }
            }
        }
    }
}

fn lab(s: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab").join(s)
}

fn capture_list(scenario: &str) -> String {
    ["decap.pcap", "egress.pcap", "backend.pcap"]
        .iter()
        .map(|f| lab(scenario).join(f).display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn compare_states_the_masquerade_change_between_two_lab_scenarios() {
    let side = |scenario| tuplecorr::cli::compare_side(&capture_list(scenario)).unwrap();
    let before = tuplecorr::app::compare_side(&side("preserved"), true).unwrap();
    let after = tuplecorr::app::compare_side(&side("masquerade-node"), true).unwrap();
    let cmp = tuplecorr::compare::diff::compare(&before, &after);
    let udp =
        cmp.pairings.iter().find(|s| s.service == "198.19.96.10:9000").expect("the UDP service in both");
    assert!(udp.source_changed && !udp.reply_path_changed && !udp.outcome_changed);
    assert_eq!(
        udp.statement,
        "request to 198.19.96.10:9000 from 198.18.90.42: source at backend was 198.18.90.42 before, 198.19.3.17 after; \
         replies on the same path before and after"
    );
    let tcp = cmp.pairings.iter().find(|s| s.service == "198.19.96.10:80").unwrap();
    assert!(
        tcp.statement.contains("source at backend was 198.18.90.42 before, 198.19.3.17 after"),
        "{}",
        tcp.statement
    );
}

#[test]
fn compare_reads_reports_written_by_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_tuplecorr");
    for (scenario, out) in [("preserved", "before.json"), ("masquerade-node", "after.csv")] {
        let mut args: Vec<String> =
            vec!["-q".into(), "-o".into(), dir.path().join(out).display().to_string()];
        args.extend(capture_list(scenario).split(',').map(str::to_string));
        let st = Command::new(bin).args(&args).status().unwrap();
        assert!(st.success());
    }
    let out = Command::new(bin)
        .args(["compare", "-q", "--format", "json"])
        .arg(dir.path().join("before.json"))
        .arg(dir.path().join("after.csv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let services = v["pairings"].as_array().unwrap();
    let udp = services.iter().find(|s| s["service"] == "198.19.96.10:9000").unwrap();
    assert_eq!(
        udp["statement"],
        "request to 198.19.96.10:9000 from 198.18.90.42: source at backend was 198.18.90.42 before, 198.19.3.17 after; \
         replies on the same path before and after"
    );
}

#[test]
fn filters_narrow_to_exactly_the_expected_requests_with_unchanged_verdicts() {
    let dir = lab("reject");
    let exp = expected(&dir);
    let config = crate::lab_verdicts::config_for(&dir, &exp);
    let all = tuplecorr::drive::pipeline::analyze(&config, &tuplecorr::read::NoProgress).unwrap();
    let narrowed = |filter: tuplecorr::report::Filter| {
        let mut f = all.clone();
        tuplecorr::report::filter_requests(&mut f, &filter);
        f.requests
    };
    // The forged RST: only port 8081.
    let by_port = narrowed(tuplecorr::report::Filter { ports: vec![8081], ..Default::default() });
    assert_eq!(by_port.len(), 1);
    let unfiltered = all.requests.iter().find(|r| r.request == by_port[0].request).unwrap();
    assert_eq!(&by_port[0], unfiltered, "verdicts stay what they are unfiltered");
    assert_eq!(by_port[0].outcome.kind, tuplecorr::verdict::OutcomeKind::Reset);
    // The rejected client, by address.
    let by_host = narrowed(tuplecorr::report::Filter {
        hosts: vec!["198.18.90.43".parse().unwrap()],
        ..Default::default()
    });
    assert_eq!(by_host.len(), 2);
    assert!(by_host.iter().all(|r| r.outcome.icmp == Some(IcmpCode { ty: 3, code: 13 })));
    let udp = narrowed(tuplecorr::report::Filter { protos: vec!["udp".into()], ..Default::default() });
    assert_eq!(udp.len(), 2);
}

/// Runs the binary under a pseudo-terminal (`script` from util-linux).
fn on_pty(args: &str, env: &[(&str, &str)]) -> Option<String> {
    let script = ["/usr/bin/script", "/bin/script"].into_iter().find(|p| Path::new(p).exists())?;
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_tuplecorr"));
    let mut c = Command::new(script);
    c.args(["-qec", &cmd, "/dev/null"]).env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn colour_on_a_terminal_only_when_wanted() {
    let caps = capture_list("reject").replace(',', " ");
    let Some(auto) = on_pty(&format!("-q {caps}"), &[]) else {
        eprintln!("skipped: no `script` to make a pseudo-terminal");
        return;
    };
    assert!(auto.contains("\x1b["), "auto colours on a terminal");
    let no_color = on_pty(&format!("-q {caps}"), &[("NO_COLOR", "1")]).unwrap();
    assert!(!no_color.contains("\x1b["), "NO_COLOR with --color auto");
    let never = on_pty(&format!("-q --color never {caps}"), &[]).unwrap();
    assert!(!never.contains("\x1b["));
    let piped = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .args(["-q", "--color", "always"])
        .args(capture_list("reject").split(','))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&piped.stdout).contains("\x1b["), "--color always, even into a pipe");
}

#[test]
fn standard_input_is_a_capture_too() {
    let dir = lab("masquerade-node");
    let file = std::fs::File::open(dir.join("decap.pcap")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .args(["-q", "--format", "json", "-"])
        .arg(dir.join("egress.pcap"))
        .arg(dir.join("backend.pcap"))
        .stdin(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["captures"][0]["label"], "stdin");
    assert_eq!(v["captures"][0]["file"], "-");
    assert_eq!(v["requests"].as_array().unwrap().len(), 4);
    assert!(v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["source"]["changed"][0]["between"] == "stdin->egress"
            || r["source"]["changed"][0]["between"] == "egress->backend"));
}
