//! Issue 55 on real lab captures. `pool-nodes`: one point (`nodes`) captured
//! on two nodes of a pool at once (node-a.pcap on node's be0, node-b.pcap on
//! node2's), given as one label: each request names the node file that
//! recorded it, its source change is the one that node's NAT made, and with
//! each node's own `iptables-save` (`--rules 'egress->nodes@FILE=…'`) a
//! masqueraded request names the MASQUERADE rule of its own node's file.
//! `follow-late-iface`: a node's `tcpdump -i any` whose second out-interface
//! (be1, masquerading) first carries traffic 2.5 s into the run: each request
//! names the interface it left by at `node(out)`.
//!
//! The truth is the lab's, never tuplecorr's: `hosts.json` and
//! `expected.json`, built by `scripts/lab/labexpect.py` from the namespaces'
//! configuration, the client's and server's socket logs and each node's
//! `conntrack -E`, cross-checked with tshark.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn lab(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab").join(scenario)
}

fn load(scenario: &str, file: &str) -> Value {
    let text = std::fs::read_to_string(lab(scenario).join(file)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `tuplecorr --format json --quiet ARGS` in the scenario's folder.
fn report(scenario: &str, args: &[&str]) -> Value {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab(scenario))
        .args(["--format", "json", "--quiet"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{scenario} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Line `n` (1-based) of a file of the scenario.
fn line(scenario: &str, file: &str, n: u64) -> String {
    let text = std::fs::read_to_string(lab(scenario).join(file)).unwrap();
    text.lines().nth(n as usize - 1).unwrap_or_default().to_string()
}

/// `198.19.3.1:*` matches any port.
fn endpoint_matches(expected: &str, got: &str) -> bool {
    match expected.strip_suffix(":*") {
        Some(addr) => got.rsplit_once(':').is_some_and(|(a, p)| a == addr && p.parse::<u16>().is_ok()),
        None => expected == got,
    }
}

/// The reported request whose client and server at capture 1 are these.
fn found<'a>(report: &'a Value, client: &str, server: &str) -> &'a Value {
    let all: Vec<&Value> = (report["requests"].as_array().unwrap().iter())
        .filter(|r| {
            r["captures"][0]["client"].as_str() == Some(client)
                && r["captures"][0]["server"].as_str().is_some_and(|s| endpoint_matches(server, s))
        })
        .collect();
    assert_eq!(all.len(), 1, "{client} -> {server}: {} reported requests", all.len());
    all[0]
}

fn labels(report: &Value) -> Vec<&str> {
    report["captures"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect()
}

const POOL: &str = "pool-nodes";
const POOL_FILES: [&str; 5] = [
    "decap=decap.pcap",
    "egress=egress.pcap",
    "nodes=node-a.pcap",
    "nodes=node-b.pcap",
    "backend=backend.pcap",
];

/// Per request of hosts.json: the reported request, checked to have crossed
/// `nodes` on the node hosts.json names, with the source change its NAT made.
fn pool_requests_checked(report: &Value) -> Vec<(Value, Value)> {
    let truth = load(POOL, "hosts.json");
    assert_eq!(truth["point"], "nodes");
    assert_eq!(labels(report), ["decap", "egress", "nodes", "backend"]);
    let reqs = truth["requests"].as_array().unwrap();
    assert_eq!(report["requests"].as_array().unwrap().len(), reqs.len(), "one reported request per request");
    let mut out = Vec::new();
    let mut masqueraded = [0, 0];
    for t in reqs {
        let id = &t["id"];
        let r = found(report, t["decap_client"].as_str().unwrap(), t["decap_server"].as_str().unwrap());
        let at = &r["captures"][2];
        assert_eq!(at["label"], "nodes");
        assert_eq!(at["seen"], true, "request {id}: {r:#}");
        let host = t["host"].as_str().unwrap();
        // `host`: the files of the host that recorded it (one file each here)
        assert_eq!(at["host"].as_str(), Some(host), "request {id}: the node that recorded it");
        for key in ["client", "server"] {
            let (want, got) = (t[key].as_str().unwrap(), at[key].as_str().unwrap_or("-"));
            assert!(endpoint_matches(want, got), "request {id} at nodes: {key} {want} expected, got {got}");
        }
        assert_eq!(at["reply_seen"], t["reply_seen"], "request {id}: reply at nodes");
        let changed = r["source"]["changed"].as_array().unwrap();
        if t["masqueraded"] == true {
            masqueraded[usize::from(host == "node-b.pcap")] += 1;
            assert_eq!(changed.len(), 1, "request {id}: {changed:#?}");
            let c = &changed[0];
            assert_eq!(
                (c["between"].as_str(), c["kind"].as_str()),
                (Some("egress->nodes"), Some("snat")),
                "request {id}: masqueraded by its node"
            );
            assert!(endpoint_matches(t["client"].as_str().unwrap(), c["after"].as_str().unwrap()), "{c}");
        } else {
            assert!(changed.is_empty(), "request {id}: the source was kept, tuplecorr says {changed:#?}");
        }
        assert!(r["destination"]["changed"].as_array().unwrap().is_empty(), "request {id}");
        out.push((t.clone(), r.clone()));
    }
    // the scenario holds masqueraded requests through both nodes, and kept ones
    assert!(masqueraded[0] > 0 && masqueraded[1] > 0, "{masqueraded:?}");
    assert!(reqs.iter().any(|t| t["masqueraded"] == false));
    out
}

/// Each request of the pool names the node file that recorded it at `nodes`
/// and the source change that node made (masqueraded or kept), with no rules.
#[test]
fn a_pool_point_names_each_requests_node_and_its_own_nat() {
    let report = report(POOL, &POOL_FILES);
    pool_requests_checked(&report);
}

/// With each node's rules given for its own file, a masqueraded request
/// names the MASQUERADE rule of its node's file (file and line, the line read
/// back from the saved file); node2's MASQUERADE stands one line later in its
/// file than node's, after the RETURN that keeps 198.19.96.0/24. A request
/// whose source was kept has no rule; node2's say why not, at its own host.
#[test]
fn a_pool_request_names_the_masquerade_rule_of_its_own_node() {
    let mut args: Vec<&str> = POOL_FILES.to_vec();
    args.extend([
        "--rules",
        "egress->nodes@node-a.pcap=rules-node.txt",
        "--rules",
        "egress->nodes@node-b.pcap=rules-node2.txt",
    ]);
    let report = report(POOL, &args);
    let truth = load(POOL, "hosts.json");
    for (t, r) in pool_requests_checked(&report) {
        let id = &t["id"];
        let host = t["host"].as_str().unwrap();
        let changed = r["source"]["changed"].as_array().unwrap();
        if t["masqueraded"] == true {
            let want = &t["rule"];
            // the truth: the one MASQUERADE rule of the node's saved iptables-save
            assert_eq!(want, &truth["files"][host]["masquerade"]);
            let (file, n) = (want["file"].as_str().unwrap(), want["line"].as_u64().unwrap());
            assert_eq!(line(POOL, file, n), want["text"].as_str().unwrap());
            let rule = &changed[0]["rule"];
            assert!(rule.is_object(), "request {id} (through {host}): no rule: {:#}", changed[0]);
            assert_eq!(
                (rule["file"].as_str(), rule["line"].as_u64()),
                (Some(file), Some(n)),
                "request {id} (through {host}): the rule of its own node's file"
            );
            assert_eq!(rule["text"].as_str(), Some(line(POOL, file, n).as_str()), "request {id}");
            assert_eq!((rule["table"].as_str(), rule["chain"].as_str()), (Some("nat"), Some("POSTROUTING")));
        } else {
            assert!(changed.is_empty(), "request {id}: kept, so no change and no rule: {changed:#?}");
            // why not: said at its own host (node2's RETURN for 198.19.96.0/24)
            let kept = r["source"]["kept"].as_array().map(Vec::as_slice).unwrap_or_default();
            assert!(
                !kept.is_empty() && kept.iter().all(|k| k["at"] == format!("egress->nodes@{host}")),
                "request {id} (through {host}): {kept:#?}"
            );
        }
    }
}

const LATE: &str = "follow-late-iface";

/// `follow-late-iface` without --follow: each request's interface at
/// `node(out)` (if3 = be0, source kept; if4 = be1, masqueraded, first used
/// 2.5 s into the run) and its source change are the lab's.
#[test]
fn a_node_out_interface_first_used_late_is_named_and_its_masquerade_found() {
    let exp = load(LATE, "expected.json");
    let report = report(LATE, &["decap.pcap", "egress.pcap", "node.pcap", "backend.pcap"]);
    assert_eq!(labels(&report), ["decap", "egress", "node(in)", "node(out)", "backend"]);
    let reqs = exp["requests"].as_array().unwrap();
    assert_eq!(report["requests"].as_array().unwrap().len(), reqs.len());
    let ns =
        |r: &Value| tuplecorr::time::parse_rfc3339(r["captures"][0]["raw_time"].as_str().unwrap()).unwrap();
    let mut first_time = i64::MAX;
    let mut late: Vec<(i64, Value)> = Vec::new();
    for e in reqs {
        let id = &e["id"];
        let r = found(
            &report,
            e["captures"]["decap"]["client"].as_str().unwrap(),
            e["captures"]["decap"]["server"].as_str().unwrap(),
        );
        first_time = first_time.min(ns(r));
        let out = &r["captures"][3];
        assert_eq!(out["label"], "node(out)");
        let want = e["captures"]["node(out)"]["iface"].as_str().unwrap();
        assert_eq!(out["iface"].as_str(), Some(want), "request {id}: the interface it left the node by");
        assert_eq!(r["captures"][2]["iface"].as_str(), Some("if2"), "request {id}: in by pod0");
        let changed: Vec<(&str, &str)> = (r["source"]["changed"].as_array().unwrap().iter())
            .map(|c| (c["between"].as_str().unwrap(), c["after"].as_str().unwrap()))
            .collect();
        let want_changed: Vec<&str> =
            e["source_changed_at"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect();
        assert_eq!(
            changed.iter().map(|c| c.0).collect::<Vec<_>>(),
            want_changed,
            "request {id}: source change"
        );
        for (_, after) in &changed {
            assert!(
                endpoint_matches(e["captures"]["node(out)"]["client"].as_str().unwrap(), after),
                "{after}"
            );
        }
        if want == "if4" {
            assert_eq!(want_changed, ["node(in)->node(out)"], "the late interface masquerades");
            late.push((ns(r), r.clone()));
        }
    }
    // the late interface's requests: masqueraded, the first sent 2 s or more after the run's first
    let first_late = late.iter().map(|l| l.0).min().expect("requests out of the late interface");
    assert!(first_late - first_time >= 2_000_000_000, "{} ns", first_late - first_time);
}
