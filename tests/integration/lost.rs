//! Issue 51's lab scenarios of packets lost inside a host, on the captures and
//! the host state the lab saved beside them (`scripts/lab.sh`, `scripts/LAB.md`):
//! `forward-drop` (a FORWARD DROP on the node), `dead-end-route` (a blackhole
//! route on the node), `stale-gateway` (the node's route back via a next hop
//! that never answers ARP) and `backend-no-route` (the end host cannot answer).
//!
//! Which request was lost, and where, comes from each scenario's
//! `expected.json` (the lab's own logs and conntrack, never the captures);
//! every `loss.note` must cite FILE:LINE of the file that holds the cause, and
//! the test reads that line from the saved file, so the citation is proved to
//! hold what the note says. Requests not lost carry no `loss`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const NODE: &str = "egress->backend";

fn lab(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab").join(scenario)
}

/// tuplecorr's output in `format` for `scenario`, given the routing state
/// of `host` (`routes-`, `sysctl-`, `neigh-HOST.txt`) at `at`, and its rules
/// file when `rules`.
fn output(scenario: &str, at: &str, host: &str, rules: bool, format: &str) -> Vec<u8> {
    let mut args: Vec<String> =
        ["decap.pcap", "egress.pcap", "backend.pcap", "--format", format, "-q"].map(String::from).to_vec();
    let mut kinds = vec!["routes", "sysctl", "neigh"];
    if rules {
        kinds.push("rules");
    }
    for kind in kinds {
        let file = format!("{kind}-{host}.txt");
        assert!(lab(scenario).join(&file).is_file(), "{scenario}: the lab saved no {file}");
        args.push(format!("--{kind}"));
        args.push(format!("{at}={file}"));
    }
    let o = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab(scenario))
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{scenario}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// [`output`]'s JSON requests.
fn run(scenario: &str, at: &str, host: &str, rules: bool) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&output(scenario, at, host, rules, "json")).unwrap();
    v["requests"].as_array().unwrap().clone()
}

/// Line `n` (1-based) of a saved file of the scenario.
fn line(scenario: &str, file: &str, n: u64) -> String {
    let text = std::fs::read_to_string(lab(scenario).join(file)).unwrap();
    text.lines().nth(n as usize - 1).unwrap_or_default().to_string()
}

/// The line numbers a note cites of `file` (`FILE:N`, `FILE:N,M`).
fn cited(note: &str, file: &str) -> Vec<u64> {
    let pat = format!("{file}:");
    let mut out = Vec::new();
    for (i, _) in note.match_indices(&pat) {
        let rest = &note[i + pat.len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',').collect();
        out.extend(digits.split(',').filter_map(|d| d.parse::<u64>().ok()));
    }
    out
}

/// The lab's truth per request, keyed by the client endpoint at decap:
/// `Some("request")` when the request was seen at egress and not at backend,
/// `Some("reply")` when the reply was seen at backend and not at egress,
/// None when neither (the lab's scenarios here are requests between egress and backend).
fn truth(scenario: &str) -> Vec<(String, Option<&'static str>)> {
    let text = std::fs::read_to_string(lab(scenario).join("expected.json")).unwrap();
    let exp: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for r in exp["requests"].as_array().unwrap() {
        let c = &r["captures"];
        let (e, b) = (&c["egress"], &c["backend"]);
        let lost = if e["seen"] == true && b["seen"] == false {
            Some("request")
        } else if b["seen"] == true && b["reply_seen"] == true && e["reply_seen"] == false {
            Some("reply")
        } else {
            None
        };
        out.push((c["decap"]["client"].as_str().unwrap().to_string(), lost));
    }
    out
}

/// The request tuplecorr reports for `client` at capture 1.
fn by_client<'a>(requests: &'a [Value], client: &str) -> &'a Value {
    let found: Vec<&Value> = requests.iter().filter(|r| r["captures"][0]["client"] == client).collect();
    assert_eq!(found.len(), 1, "one request from {client}: {found:?}");
    found[0]
}

/// Checks the loss of every request of `scenario` the lab lost (`packet`,
/// cause, `at`, the note in the explanation) with `check` on its loss, and
/// that every other request has none; returns how many were lost.
fn each_loss(scenario: &str, requests: &[Value], cause: &str, check: impl Fn(&Value)) -> usize {
    let truth = truth(scenario);
    assert_eq!(requests.len(), truth.len(), "{scenario}: {requests:?}");
    let mut lost = 0;
    for (client, packet) in &truth {
        let r = by_client(requests, client);
        let Some(packet) = packet else {
            assert!(r.get("loss").is_none(), "{scenario} {client}: not lost, yet {}", r["loss"]);
            continue;
        };
        lost += 1;
        let loss = &r["loss"];
        assert_eq!(
            (loss["at"].as_str(), loss["packet"].as_str(), loss["cause"].as_str()),
            (Some(NODE), Some(*packet), Some(cause)),
            "{scenario} {client}: {loss}"
        );
        let note = loss["note"].as_str().unwrap();
        let expl = r["explanation"].as_str().unwrap();
        assert!(expl.contains(&format!("lost at {NODE}: {note}")), "{scenario} {client}: {expl}");
        check(loss);
    }
    lost
}

/// `forward-drop`: the node's FORWARD chain drops 198.18.90.43. Each of its
/// three requests (TCP, UDP, ICMP) names the rule at its line of
/// rules-node.txt (saved though the node has no nat rule); .42's pass.
#[test]
fn forward_drop_names_the_filter_rule_at_its_line() {
    let sc = "forward-drop";
    let requests = run(sc, NODE, "node", true);
    let lost = each_loss(sc, &requests, "filter", |loss| {
        let rule = &loss["rule"];
        assert_eq!((rule["file"].as_str(), rule["table"].as_str()), (Some("rules-node.txt"), Some("filter")));
        assert_eq!(rule["chain"], "FORWARD");
        let n = rule["line"].as_u64().unwrap();
        let text = line(sc, "rules-node.txt", n);
        assert_eq!(text, "-A FORWARD -s 198.18.90.43/32 -j DROP", "rules-node.txt:{n}");
        assert_eq!(rule["text"], text.as_str());
        let note = loss["note"].as_str().unwrap();
        assert_eq!(note, format!("dropped by `{text}` (rules-node.txt:{n})"));
        assert_eq!(cited(note, "rules-node.txt"), [n]);
    });
    assert_eq!(lost, 3, "{sc}: requests 2, 3, 4 (from 198.18.90.43) are dropped");
    for r in &requests {
        let from43 = r["captures"][0]["client"].as_str().unwrap().starts_with("198.18.90.43");
        assert_eq!(r.get("loss").is_some(), from43, "{r}");
    }
}

/// `dead-end-route`: the node's route to 198.19.96.0/24 is a blackhole. The
/// requests to 198.19.96.10 cite that route's line of routes-node.txt; those
/// to 198.19.96.11 (a host route on-link) pass.
#[test]
fn dead_end_route_names_the_blackhole_route_at_its_line() {
    let sc = "dead-end-route";
    let requests = run(sc, NODE, "node", false);
    let lost = each_loss(sc, &requests, "route", |loss| {
        let note = loss["note"].as_str().unwrap();
        let lines = cited(note, "routes-node.txt");
        assert_eq!(lines.len(), 1, "{note}");
        let text = line(sc, "routes-node.txt", lines[0]);
        assert_eq!(text.trim_end(), "blackhole 198.19.96.0/24", "routes-node.txt:{}", lines[0]);
        assert_eq!(
            note,
            format!("refused by the route to 198.19.96.10: a blackhole route (routes-node.txt:{})", lines[0])
        );
    });
    assert_eq!(lost, 3, "{sc}: requests 2, 3, 4 (to 198.19.96.10) are lost");
    for r in &requests {
        let to10 = r["captures"][0]["server"].as_str().unwrap().starts_with("198.19.96.10");
        assert_eq!(r.get("loss").is_some(), to10, "{r}");
    }
}

/// `stale-gateway`, what holds today: the replies of 198.18.90.42's requests
/// are seen at backend and not at egress, so their loss is the reply's, in
/// the node; 198.18.90.43 (a host route via the live pod) has none. The node
/// told the backend so itself: ICMP 3/1 from 198.19.3.17 (in the explanation).
#[test]
fn stale_gateway_loses_the_replies_in_the_node() {
    let sc = "stale-gateway";
    let requests = run(sc, NODE, "node", false);
    for (client, packet) in truth(sc) {
        let r = by_client(&requests, &client);
        match packet {
            None => assert!(r.get("loss").is_none(), "{client}: {r}"),
            Some(p) => {
                assert_eq!(p, "reply", "{client}");
                let loss = &r["loss"];
                assert_eq!(
                    (loss["at"].as_str(), loss["packet"].as_str()),
                    (Some(NODE), Some("reply")),
                    "{r}"
                );
                assert!(client.starts_with("198.18.90.42"), "{client}");
            }
        }
    }
    assert_eq!(requests.iter().filter(|r| r.get("loss").is_some()).count(), 3);
}

/// `stale-gateway`, the cause: the route back to 198.18.90.42 is via
/// 198.18.10.99 (routes-node.txt), whose neighbour entry the kernel left
/// FAILED after the unanswered ARP (neigh-node.txt): both lines cited.
#[test]
fn stale_gateway_names_the_failed_next_hop_and_the_route_to_it() {
    let sc = "stale-gateway";
    let requests = run(sc, NODE, "node", false);
    let lost = each_loss(sc, &requests, "neighbour", |loss| {
        let note = loss["note"].as_str().unwrap();
        let n = cited(note, "neigh-node.txt");
        assert_eq!(n.len(), 1, "{note}");
        let entry = line(sc, "neigh-node.txt", n[0]);
        assert!(
            entry.starts_with("198.18.10.99 dev pod0 ") && entry.contains("FAILED"),
            "neigh-node.txt:{}",
            n[0]
        );
        assert!(note.contains("198.18.10.99 is FAILED"), "{note}");
        let m = cited(note, "routes-node.txt");
        assert_eq!(m.len(), 1, "{note}");
        let route = line(sc, "routes-node.txt", m[0]);
        assert!(route.starts_with("198.18.90.0/24 via 198.18.10.99 dev pod0"), "routes-node.txt:{}", m[0]);
    });
    assert_eq!(lost, 3);
}

/// `backend-no-route`: the backend has no route back to 198.18.90.42, so it
/// sends nothing for its requests. Nothing is lost in the node (its files
/// say nothing); the backend's own files (WHERE `backend`: the host the
/// capture was taken on) name the missing route.
#[test]
fn backend_no_route_names_the_missing_route_of_the_end_host() {
    let sc = "backend-no-route";
    // the kernel's state: no route in the backend covers 198.18.90.42 (only
    // the host route to .43, the two on-link subnets, and table local)
    let routes = std::fs::read_to_string(lab(sc).join("routes-backend.txt")).unwrap();
    let main: Vec<&str> = (routes.lines())
        .skip_while(|l| *l != "# ip route show table all")
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| !l.starts_with("local ") && !l.starts_with("broadcast "))
        .collect();
    assert!(!main.iter().any(|l| l.starts_with("default")), "{main:?}");
    assert!(main.iter().all(|l| !l.starts_with("198.18.") || l.starts_with("198.18.90.43 ")), "{main:?}");
    // the node's files where the node is: it lost nothing
    let requests = run(sc, NODE, "node", false);
    for (client, packet) in truth(sc) {
        assert_eq!(packet, None, "{client}: the lab's reply is seen nowhere");
        let r = by_client(&requests, &client);
        assert!(r.get("loss").is_none(), "{r}");
        let answered = client.starts_with("198.18.90.43");
        assert_eq!(r["captures"][2]["seen"], true, "{client}");
        let replies = r["captures"].as_array().unwrap().iter().filter(|c| c["reply_seen"] == true).count();
        assert_eq!(replies, if answered { 3 } else { 0 }, "{client}: {r}");
        let kind = if answered { "completed" } else { "no-reply" };
        assert_eq!(r["outcome"]["kind"], kind, "{client}");
    }
    // the backend's own files: its replies to .42 have no route
    let requests = run(sc, "backend", "backend", false);
    for (client, _) in truth(sc) {
        let r = by_client(&requests, &client);
        if client.starts_with("198.18.90.43") {
            assert!(r.get("loss").is_none(), "{r}");
            continue;
        }
        let loss = &r["loss"];
        assert_eq!(
            (loss["at"].as_str(), loss["packet"].as_str(), loss["cause"].as_str()),
            (Some("backend"), Some("reply"), Some("route")),
            "{r}"
        );
        assert_eq!(
            loss["note"],
            "reply has no route: no route to 198.18.90.42 in table local, main, default (routes-backend.txt)"
        );
    }
}

/// [`output`]'s CSV: its header and rows.
fn run_csv(scenario: &str, at: &str, host: &str, rules: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let out = output(scenario, at, host, rules, "csv");
    let mut r = csv::Reader::from_reader(&out[..]);
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r.records().map(|x| x.unwrap().iter().map(String::from).collect()).collect();
    (header, rows)
}

#[test]
fn the_csv_lost_columns_hold_the_json_loss_of_every_request() {
    for (sc, cause, rules) in [("forward-drop", "filter", true), ("stale-gateway", "neighbour", false)] {
        let requests = run(sc, NODE, "node", rules);
        let (header, rows) = run_csv(sc, NODE, "node", rules);
        let col =
            |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{sc}: no {name}"));
        let (at, packet, why, rule) =
            (col("lost_at"), col("lost_packet"), col("lost_cause"), col("lost_rule"));
        assert_eq!(rows.len(), requests.len(), "{sc}");
        let mut lost = 0;
        for (row, r) in rows.iter().zip(&requests) {
            let loss = &r["loss"];
            let s = |v: &Value| v.as_str().unwrap_or("").to_string();
            assert_eq!(row[at], s(&loss["at"]), "{sc} request {}", r["request"]);
            assert_eq!(row[packet], s(&loss["packet"]), "{sc} request {}", r["request"]);
            assert_eq!(row[why], s(&loss["cause"]), "{sc} request {}", r["request"]);
            let want = match loss["rule"].as_object() {
                Some(x) => format!("{}:{} {}", s(&x["file"]), x["line"], s(&x["chain"])),
                None => String::new(),
            };
            assert_eq!(row[rule], want, "{sc} request {}", r["request"]);
            lost += usize::from(row[why] == cause);
        }
        assert!(lost > 0, "{sc}: no request lost by {cause} in the CSV");
    }
}

/// `stale-gateway` with a FORWARD chain of our own (`--rules`): dropping
/// what 198.19.96.10 sends to 198.18.90.42 loses .42's replies to that rule,
/// named before their next hop (the kernel runs FORWARD before it looks the
/// next hop up); an ESTABLISHED accept before the DROP lets the replies
/// through, and the failed next hop is the cause again; .43's requests,
/// answered, have no loss either way.
#[test]
fn a_forward_rule_dropping_replies_is_named_before_the_next_hop() {
    let sc = "stale-gateway";
    let tmp = tempfile::tempdir().unwrap();
    let chain = |first: &str| {
        format!(
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n{first}\
             -A FORWARD -s 198.19.96.10/32 -d 198.18.90.42/32 -j DROP\nCOMMIT\n"
        )
    };
    let losses = |rules: String| -> Vec<(String, Value)> {
        let path = tmp.path().join("rules-fw.txt");
        std::fs::write(&path, rules).unwrap();
        let mut args: Vec<String> = ["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "-q"]
            .map(String::from)
            .to_vec();
        for kind in ["routes", "sysctl", "neigh"] {
            args.extend([format!("--{kind}"), format!("{NODE}={kind}-node.txt")]);
        }
        args.extend(["--rules".to_string(), format!("{NODE}={}", path.display())]);
        let o =
            Command::new(env!("CARGO_BIN_EXE_tuplecorr")).current_dir(lab(sc)).args(&args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["requests"].as_array().unwrap().iter())
            .map(|r| (r["captures"][0]["client"].as_str().unwrap().to_string(), r["loss"].clone()))
            .collect()
    };
    let dropped = losses(chain(""));
    assert_eq!(dropped.len(), 4);
    for (client, loss) in &dropped {
        if client.starts_with("198.18.90.43") {
            assert!(loss.is_null(), "{client}: {loss}");
            continue;
        }
        assert_eq!(
            (loss["packet"].as_str(), loss["cause"].as_str()),
            (Some("reply"), Some("filter")),
            "{loss}"
        );
        let rule = &loss["rule"];
        assert_eq!((rule["chain"].as_str(), rule["line"].as_u64()), (Some("FORWARD"), Some(5)), "{loss}");
        assert_eq!(
            loss["note"],
            "reply dropped by `-A FORWARD -s 198.19.96.10/32 -d 198.18.90.42/32 -j DROP` (rules-fw.txt:5)"
        );
    }
    let accepted = losses(chain("-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"));
    for (client, loss) in &accepted {
        if client.starts_with("198.18.90.43") {
            assert!(loss.is_null(), "{client}: {loss}");
        } else {
            assert_eq!(
                (loss["packet"].as_str(), loss["cause"].as_str()),
                (Some("reply"), Some("neighbour")),
                "{loss}"
            );
        }
    }
}

/// `dnat-reject`: the node DNATs the Service address 198.19.200.10 and
/// rejects 198.18.90.43 in FORWARD, after the DNAT. With the rules, the
/// route checked is the one to the DNAT's 198.19.96.10 (there is none to the
/// Service address: it read "has no route"), and the REJECT is named at its
/// line: its `-i pod0` the captures cannot show is taken as matched because
/// the error it answers with was seen (issue 52). Without the rules, the
/// missing route to the Service address is no cause: a DNAT may rewrite it
/// first.
#[test]
fn dnat_reject_names_the_reject_after_the_dnat_and_never_a_missing_route_to_the_service() {
    let sc = "dnat-reject";
    let requests = run(sc, NODE, "node", true);
    let lost = each_loss(sc, &requests, "filter", |loss| {
        let note = loss["note"].as_str().unwrap();
        let lines = cited(note, "rules-node.txt");
        assert_eq!(lines.len(), 1, "{note}");
        let text = line(sc, "rules-node.txt", lines[0]);
        assert!(
            text.contains("-j REJECT --reject-with icmp-admin-prohibited"),
            "rules-node.txt:{}: {text}",
            lines[0]
        );
        assert!(note.ends_with("taking -i pod0 (the only way that answers with the error seen)"), "{note}");
        let decided = loss["rule"]["decided"].as_array().unwrap();
        assert_eq!(decided.len(), 1, "{loss}");
        assert!(decided[0].as_str().unwrap().starts_with("-i pod0 (matched, line"), "{loss}");
        assert!(decided[0].as_str().unwrap().ends_with("its error was seen)"), "{loss}");
    });
    assert_eq!(lost, 1, "{sc}: request 2 from 198.18.90.43 is rejected");
    let requests = run(sc, NODE, "node", false);
    for r in &requests {
        let Some(loss) = r.get("loss") else { continue };
        assert_ne!(loss["cause"], "route", "{loss}");
        let note = loss["note"].as_str().unwrap();
        assert!(note.contains("unless a DNAT on the host rewrites it first: --rules tells"), "{note}");
    }
}
