//! Issue 49: the summary's "Client address at the backend" section on lab
//! captures. Every request of a scenario is named in the statements its
//! `expected.json` (the lab's own truth) makes of it: the backend sees the
//! client's address or a boundary replaces it, the replies of the requests
//! that keep it came back or were lost, a proxy stands between or none.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn lab(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab").join(scenario)
}

/// The section of `scenario`'s `--summary` with `extra` options, per service:
/// (service line, its statement lines).
fn section(scenario: &str, extra: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut args = vec!["decap.pcap", "egress.pcap", "backend.pcap", "--summary"];
    args.extend(extra);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab(scenario))
        .args(&args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let start = text.find("\nClient address at the backend (per service, from the requests' fields):\n");
    let start = start.unwrap_or_else(|| panic!("{scenario}: no section in\n{text}"));
    let mut services: Vec<(String, Vec<String>)> = Vec::new();
    for line in text[start + 1..].lines().skip(1).take_while(|l| !l.is_empty()) {
        if line.starts_with("    ") {
            services.last_mut().unwrap().1.push(line.trim().to_string());
        } else {
            services.push((line.trim().to_string(), Vec::new()));
        }
    }
    services
}

/// The request numbers a statement names (`request 4`, `requests 1, 2, 3`).
fn named(line: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for (i, _) in line.match_indices("request") {
        let rest = line[i + "request".len()..].trim_start_matches('s');
        let Some(list) = rest.strip_prefix(' ') else { continue };
        let list: String =
            list.chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == ' ').collect();
        out.extend(list.split(',').filter_map(|n| n.trim().parse::<u64>().ok()));
    }
    out
}

/// `egress->backend` as the summary says it: `egress and backend`.
fn words(between: &str) -> String {
    between.replace("->", " and ")
}

fn addr(endpoint: &str) -> &str {
    endpoint.rsplit_once(':').map_or(endpoint, |(a, _)| a)
}

/// Checks every request of `scenario` against its statements; returns the section.
fn every_request_is_named_where_its_truth_says(scenario: &str) -> Vec<(String, Vec<String>)> {
    let services = section(scenario, &[]);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(lab(scenario).join("expected.json")).unwrap()).unwrap();
    for want in expected["requests"].as_array().unwrap() {
        let n = want["id"].as_u64().unwrap();
        let at = |c: &str| &want["captures"][c];
        let service =
            format!("{} {} (", want["proto"].as_str().unwrap(), at("decap")["server"].as_str().unwrap());
        let (_, lines) = (services.iter().find(|(s, _)| s.starts_with(&service)))
            .unwrap_or_else(|| panic!("{scenario} request {n}: no service {service} in {services:?}"));
        let says = |text: &str| lines.iter().any(|l| l.contains(text) && named(l).contains(&n));
        let changes: Vec<(&str, &str)> = (want["source_changed_at"].as_array().unwrap().iter())
            .map(|c| match c {
                Value::String(b) => (b.as_str(), "snat"),
                c => (c["between"].as_str().unwrap(), c["kind"].as_str().unwrap()),
            })
            .collect();
        let kept =
            addr(at("decap")["client"].as_str().unwrap()) == addr(at("backend")["client"].as_str().unwrap());
        if kept {
            assert!(says("address: the backend sees the client's address"), "{scenario} {n}: {lines:?}");
            if want["reply_path"] == "reply-lost" {
                assert!(
                    says("no reply for")
                        && lines.iter().any(|l| l.contains("a return route, the reverse-path filter")),
                    "{scenario} {n}: {lines:?}"
                );
            } else {
                assert_eq!(at("decap")["reply_seen"], true);
                assert!(says("return:  replies come back:"), "{scenario} {n}: {lines:?}");
            }
        } else {
            let (first, _) = changes[0];
            let replaced = format!("the client's address is replaced between {}", words(first));
            assert!(says(&replaced), "{scenario} {n}: {lines:?}");
            assert!(lines.iter().any(|l| l.starts_with("return:  untested")), "{scenario} {n}: {lines:?}");
        }
        match changes.iter().find(|(_, kind)| *kind == "proxy") {
            Some((b, _)) => {
                let proxy =
                    format!("a proxy between {} opens its own connection (change kind proxy;", words(b));
                assert!(says(&proxy), "{scenario} {n}: {lines:?}");
                if want["identity"]["preserved"] == true {
                    assert!(
                        says("carries the client's address to backend (identity preserved)"),
                        "{lines:?}"
                    );
                }
            }
            None => assert!(says("path:    no proxy seen"), "{scenario} {n}: {lines:?}"),
        }
    }
    services
}

#[test]
fn preserved_the_backend_sees_the_client_and_every_reply_comes_back() {
    let s = every_request_is_named_where_its_truth_says("preserved");
    assert_eq!(s[0].0, "tcp 198.19.96.10:80 (2 requests)");
    assert_eq!(
        s[0].1,
        [
            "address: the backend sees the client's address (requests 1, 2)",
            "return:  replies come back: 2 of the 2 requests that keep the client's address got a reply at decap (requests 1, 2)",
            "path:    no proxy seen (requests 1, 2)",
        ]
    );
}

#[test]
fn masquerade_node_replaces_the_client_at_egress_to_backend_by_its_rule() {
    let s = every_request_is_named_where_its_truth_says("masquerade-node");
    assert_eq!(
        s[0].1[0],
        "address: the client's address is replaced between egress and backend: snat to 198.19.3.17 (requests 1, 2, 3)"
    );
    // with the node's rules, the rule that replaces it
    let s = section("masquerade-node", &["--rules", "egress->backend=rules-node.txt"]);
    for (_, lines) in &s {
        assert!(
            lines[0].contains("snat to 198.19.3.17, by `-A POSTROUTING … -j MASQUERADE` (rules-node.txt:"),
            "{lines:?}"
        );
    }
}

#[test]
fn proxy_opens_its_own_connection_and_a_port_it_does_not_take_is_forwarded() {
    let s = every_request_is_named_where_its_truth_says("proxy");
    assert!(s[0].1[2]
        .ends_with("(change kind proxy; requests 1, 2, 3); no PROXY protocol or forwarding header seen"));
    assert_eq!(s[1].0, "tcp 198.19.96.10:8080 (1 request)");
    assert_eq!(s[1].1[0], "address: the backend sees the client's address (request 4)");
    let s = every_request_is_named_where_its_truth_says("proxy-v1");
    assert_eq!(
        s[0].1[2],
        "path:    a proxy between decap and egress opens its own connection (change kind proxy; requests 1, 2); \
         PROXY v1 carries the client's address to backend (identity preserved)"
    );
}

#[test]
fn no_return_route_kept_addresses_get_no_reply_and_the_files_that_decide_are_named() {
    let s = every_request_is_named_where_its_truth_says("no-return-route");
    assert_eq!(s.len(), 3);
    assert_eq!(
        s[0].1[1],
        "return:  no reply for 1 of the 1 request that keeps the client's address (request 1): reply seen at \
         backend but not at egress: a return route, the reverse-path filter or a filter rule between them \
         (--routes, --sysctl, --rules 'egress->backend=…' decide which)"
    );
    // the node's routes given: the section points to the section that says why
    let s = section("no-return-route", &["--routes", "egress->backend=routes-node.txt"]);
    assert!(s[0].1[1]
        .ends_with("reply seen at backend but not at egress (\"Why requests were lost\" below says why)"));
}
