//! Issue 33 on real lab captures: every translated request names the nat rule
//! that made it (from the node's own `iptables-save` and `nft list ruleset`,
//! saved by the lab beside the captures) and the conntrack entry that records
//! it (the node's `conntrack -E -o timestamp` log of the same run); the
//! ip-masq-agent ConfigMap the lab applied is checked against the chain and
//! the packets.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn lab(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lab").join(scenario)
}

/// The JSON report of `scenario` with `extra` options, and its exit status.
fn report(scenario: &str, extra: &[&str]) -> (Value, i32, String) {
    let mut args = vec!["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "--quiet"];
    args.extend(extra);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab(scenario))
        .args(&args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let json = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (json, o.status.code().unwrap_or(-1), err)
}

/// Line `n` (1-based) of a file of the scenario.
fn line(scenario: &str, file: &str, n: u64) -> String {
    let text = std::fs::read_to_string(lab(scenario).join(file)).unwrap();
    text.lines().nth(n as usize - 1).unwrap_or_default().to_string()
}

/// For every translated request of `scenario` (per expected.json, from the
/// lab's own configuration and conntrack events): its change names `rules`'s
/// masquerade rule of the IP-MASQ-AGENT chain, and the conntrack line that
/// holds its before and after tuples, confirmed.
fn every_translation_names_its_rule_and_entry(scenario: &str, rules: &str, masquerade: &str) {
    let w = format!("egress->backend={rules}");
    let (r, code, err) =
        report(scenario, &["--rules", &w, "--conntrack", "egress->backend=conntrack-node.log"]);
    assert_eq!(code, 0, "{err}");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(lab(scenario).join("expected.json")).unwrap()).unwrap();
    let mut translated = 0;
    for (req, want) in r["requests"].as_array().unwrap().iter().zip(expected["requests"].as_array().unwrap())
    {
        let n = req["request"].as_u64().unwrap();
        let changes = req["source"]["changed"].as_array().unwrap();
        let kept = want["captures"]["egress"]["client"] == want["captures"]["backend"]["client"];
        if kept {
            assert!(changes.is_empty(), "{scenario} request {n}: no change expected");
            continue;
        }
        translated += 1;
        assert_eq!(changes.len(), 1, "{scenario} request {n}");
        let c = &changes[0];
        let rule = &c["rule"];
        assert_eq!(rule["file"], rules, "{scenario} request {n}: {c}");
        assert_eq!(rule["chain"], "IP-MASQ-AGENT", "{scenario} request {n}");
        let at = line(scenario, rules, rule["line"].as_u64().unwrap());
        assert_eq!(at.trim(), rule["text"].as_str().unwrap(), "the line named is the rule's text");
        assert!(at.contains(masquerade), "{scenario} request {n}: {at}");
        assert!(c.get("rule_note").is_none());
        let ct = &c["conntrack"];
        assert_eq!((&ct["file"], &ct["confirmed"]), (&Value::from("conntrack-node.log"), &Value::Bool(true)));
        let entry = line(scenario, "conntrack-node.log", ct["line"].as_u64().unwrap());
        let (before, after) = (c["before"].as_str().unwrap(), c["after"].as_str().unwrap());
        let (ba, bp) = before.rsplit_once(':').unwrap();
        let (aa, ap) = after.rsplit_once(':').unwrap();
        assert!(entry.contains("[NEW]"), "{entry}");
        assert!(entry.contains(&format!("src={ba} ")) && entry.contains(&format!("sport={bp} ")), "{entry}");
        assert!(entry.contains(&format!("dst={aa} ")) && entry.ends_with(&format!("dport={ap}")), "{entry}");
        assert!(ct["time"].as_str().unwrap().ends_with('Z'));
        let explanation = req["explanation"].as_str().unwrap();
        assert!(
            explanation.contains(&format!("({rules}:{})", rule["line"])) && explanation.contains(", by `"),
            "{explanation}"
        );
    }
    assert_eq!(translated, 3, "{scenario}: requests 1, 2 and 4 are masqueraded");
    assert!(r["warnings"].as_array().unwrap().is_empty(), "{}", r["warnings"]);
}

#[test]
fn masq_agent_translations_name_the_iptables_rule_and_the_conntrack_entry() {
    every_translation_names_its_rule_and_entry("masq-agent", "rules-node.txt", "-j MASQUERADE");
    every_translation_names_its_rule_and_entry("masq-agent-drift", "rules-node.txt", "-j MASQUERADE");
}

#[test]
fn masq_agent_translations_name_the_nft_rule_of_the_same_kernel() {
    every_translation_names_its_rule_and_entry("masq-agent", "nft-node.txt", "masquerade");
    every_translation_names_its_rule_and_entry("masq-agent-drift", "nft-node.txt", "masquerade");
}

/// A rule's text with blanks squeezed and without nft's `# handle N`.
fn squeezed(text: &str) -> String {
    let text = text.split(" # handle ").next().unwrap_or(text);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `nft -j list ruleset` of a namespace loaded with the lab's `nft-node.txt`
/// (`nft -f`, nft 1.0.6): for every request, each change names the same rule
/// (table, chain, text but for the handle, counters included) and entry as
/// the text gives; the JSON rule's `line` is its place in the `nftables`
/// array, whose element is that rule of that chain with that handle.
#[test]
fn nft_json_names_the_same_rule_as_the_nft_text_for_every_request() {
    for scenario in ["masq-agent", "masq-agent-drift"] {
        let run = |rules: &str| {
            let w = format!("egress->backend={rules}");
            let (r, code, err) =
                report(scenario, &["--rules", &w, "--conntrack", "egress->backend=conntrack-node.log"]);
            assert_eq!(code, 0, "{err}");
            assert!(r["warnings"].as_array().unwrap().is_empty(), "{scenario} {rules}: {}", r["warnings"]);
            r
        };
        let (text, json) = (run("nft-node.txt"), run("nft-node.json"));
        let dump: Value =
            serde_json::from_str(&std::fs::read_to_string(lab(scenario).join("nft-node.json")).unwrap())
                .unwrap();
        let (text, json) = (text["requests"].as_array().unwrap(), json["requests"].as_array().unwrap());
        assert_eq!(text.len(), json.len());
        let mut named = 0;
        for (t, j) in text.iter().zip(json) {
            let n = &t["request"];
            for side in ["source", "destination"] {
                let (tc, jc) =
                    (t[side]["changed"].as_array().unwrap(), j[side]["changed"].as_array().unwrap());
                assert_eq!(tc.len(), jc.len(), "{scenario} request {n}");
                for (tc, jc) in tc.iter().zip(jc) {
                    let (tr, jr) = (&tc["rule"], &jc["rule"]);
                    assert!(tr.is_object(), "{scenario} request {n}: {tc}");
                    assert_eq!(jr["file"], "nft-node.json");
                    assert_eq!(
                        (&jr["table"], &jr["chain"]),
                        (&tr["table"], &tr["chain"]),
                        "{scenario} request {n}"
                    );
                    let jt = jr["text"].as_str().unwrap();
                    assert_eq!(
                        squeezed(jt),
                        squeezed(tr["text"].as_str().unwrap()),
                        "{scenario} request {n}"
                    );
                    let el = &dump["nftables"][jr["line"].as_u64().unwrap() as usize - 1]["rule"];
                    assert_eq!(el["chain"], jr["chain"], "{scenario} request {n}: line {}", jr["line"]);
                    assert!(jt.ends_with(&format!(" # handle {}", el["handle"])), "{jt}");
                    assert_eq!(jc["conntrack"], tc["conntrack"]);
                    assert_eq!(jc.get("decided"), tc.get("decided"));
                    let expl = j["explanation"].as_str().unwrap();
                    assert!(expl.contains(&format!("(nft-node.json:{})", jr["line"])), "{expl}");
                    named += 1;
                }
            }
        }
        assert_eq!(named, 3, "{scenario}: requests 1, 2 and 4 are masqueraded");
    }
}

/// Why not (issue 33, item 3): the request the lab sent to 198.19.96.11 (a
/// RETURN in IP-MASQ-AGENT) crossed the node unchanged; its source's `kept`
/// names that RETURN and the MASQUERADE it came before, in both rules
/// formats, and the explanation says so; the translated requests keep nothing.
#[test]
fn an_unchanged_request_names_the_return_that_kept_it_and_the_masquerade_it_passed() {
    for (rules, ret, masq) in [
        (
            "rules-node.txt",
            "`-A IP-MASQ-AGENT -d 198.19.96.11/32 -j RETURN` (rules-node.txt:18)",
            "(line 19)",
        ),
        (
            "nft-node.json",
            "`ip daddr 198.19.96.11 counter packets 1 bytes 60 return # handle 4` (nft-node.json:9)",
            "(line 10)",
        ),
    ] {
        let w = format!("egress->backend={rules}");
        let (r, code, err) = report("masq-agent", &["--rules", &w]);
        assert_eq!(code, 0, "{err}");
        for req in r["requests"].as_array().unwrap() {
            let n = req["request"].as_u64().unwrap();
            assert!(req["destination"].get("kept").is_none(), "no nat rule on PREROUTING: nothing to say");
            let kept = &req["source"]["kept"];
            if n != 3 {
                assert!(kept.is_null(), "request {n} was masqueraded: {kept}");
                continue;
            }
            assert_eq!(kept.as_array().unwrap().len(), 1, "{kept}");
            assert_eq!(kept[0]["at"], "egress->backend");
            let note = kept[0]["rule_note"].as_str().unwrap();
            assert!(
                note.starts_with(&format!("no rule translates it: {ret} came first, before `")),
                "{note}"
            );
            assert!(note.ends_with(masq), "{note}");
            let explanation = req["explanation"].as_str().unwrap();
            assert!(
                explanation.contains(&format!("; source kept at egress->backend: {note}; ")),
                "{explanation}"
            );
        }
    }
    // without --rules: no kept, the explanation as before
    let (r, _, _) = report("masq-agent", &[]);
    assert!(r["requests"][2]["source"].get("kept").is_none());
    assert!(!r["requests"][2]["explanation"].as_str().unwrap().contains(" kept at "));
}

#[test]
fn a_configmap_the_chain_carries_gives_no_intent_finding() {
    let (r, code, err) = report(
        "masq-agent",
        &["--rules", "egress->backend=rules-node.txt", "--masq-agent", "egress->backend=masq-agent.yaml"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(r.get("intent").is_none(), "{}", r["intent"]);
}

#[test]
fn a_configmap_the_chain_does_not_carry_is_an_intent_finding_with_the_packets_that_show_it() {
    for rules in ["rules-node.txt", "nft-node.txt", "nft-node.json"] {
        let w = format!("egress->backend={rules}");
        let (r, code, err) =
            report("masq-agent-drift", &["--rules", &w, "--masq-agent", "egress->backend=masq-agent.yaml"]);
        assert_eq!(code, 0, "{err}");
        let intent = r["intent"].as_array().unwrap();
        let chain: Vec<&Value> = intent.iter().filter(|i| i["kind"] == "chain").collect();
        assert_eq!(chain.len(), 2, "{intent:?}");
        assert_eq!(chain[0]["cidr"], "198.19.96.0/24");
        assert!(
            chain[0]["message"].as_str().unwrap().starts_with(
                "ConfigMap keeps 198.19.96.0/24 unmasqueraded (masq-agent.yaml:5), but the node's IP-MASQ-AGENT \
                 chain"
            ),
            "{}",
            chain[0]["message"]
        );
        assert_eq!(chain[1]["cidr"], "198.19.96.11/32", "returned for, but not in the ConfigMap");
        let packets: Vec<&Value> = intent.iter().filter(|i| i["kind"] == "packets").collect();
        assert_eq!(packets.len(), 1, "{intent:?}");
        let p = packets[0];
        assert_eq!(
            (&p["destination"], &p["requests"], &p["translated_to"]),
            (&Value::from("198.19.96.10"), &Value::from(3), &Value::from("198.19.3.17"))
        );
        assert_eq!(p["rule"]["chain"], "IP-MASQ-AGENT");
        // the summary says it too
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(lab("masq-agent-drift"))
            .args(["decap.pcap", "egress.pcap", "backend.pcap", "--summary", "--color", "never", "--quiet"])
            .args(["--rules", &w, "--masq-agent", "egress->backend=masq-agent.yaml"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("ConfigMap keeps 198.19.96.0/24 unmasqueraded, but 3 requests to 198.19.96.10 were masqueraded to 198.19.3.17 at egress->backend, by `"),
            "{text}"
        );
    }
}

#[test]
fn an_unknown_where_is_refused_naming_the_valid_ones_and_a_stream_run_is_refused() {
    let (_, code, err) = report("masq-agent", &["--rules", "egress->node=rules-node.txt"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("valid: decap->egress, egress->backend"), "{err}");
    let (_, code, err) = report("masq-agent", &["--rules", "rules-node.txt"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected WHERE=FILE"), "{err}");
    let (_, code, err) =
        report("masq-agent", &["--stream", "--conntrack", "egress->backend=conntrack-node.log"]);
    assert_eq!(code, 2);
    assert!(err.contains("no --stream or --follow"), "{err}");
    let (_, code, err) = report("masq-agent", &["--rules", "egress->backend=nope.txt"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope.txt"), "{err}");
}

#[test]
fn a_conntrack_entry_that_disagrees_or_is_missing_is_a_warning_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(lab("masq-agent").join("conntrack-node.log")).unwrap();
    // the kernel's entry for request 1 says port 1024; request 2's entries are gone
    let edited: String = (src.lines())
        .filter(|l| !l.contains("sport=40002"))
        .map(|l| {
            l.replace("dst=198.19.3.17 sport=80 dport=40001", "dst=198.19.3.17 sport=80 dport=1024") + "\n"
        })
        .collect();
    let ct = dir.path().join("ct.log");
    std::fs::write(&ct, edited).unwrap();
    let arg = format!("egress->backend={}", ct.display());
    let (r, code, err) = report("masq-agent", &["--conntrack", &arg]);
    assert_eq!(code, 0, "{err}");
    let change = |n: usize| &r["requests"][n]["source"]["changed"][0];
    assert_eq!(change(0)["conntrack"]["confirmed"], false);
    assert_eq!(change(0)["conntrack"]["reply"], "198.19.96.10:80 -> 198.19.3.17:1024");
    assert!(change(1).get("conntrack").is_none());
    let warnings: Vec<&str> =
        r["warnings"].as_array().unwrap().iter().map(|w| w["message"].as_str().unwrap()).collect();
    assert!(
        warnings.iter().any(|w| w.starts_with(
            "request 1: source 198.18.90.42:40001 -> 198.19.3.17:40001: the conntrack entry (ct.log:"
        )),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w
            .starts_with("request 2: source 198.18.90.43:40002 -> 198.19.3.17:40002: no conntrack entry")),
        "{warnings:?}"
    );
    assert!(err.contains("request 2: source"), "printed too: {err}");
}

#[test]
fn csv_carries_the_short_rule_and_entry_columns_last_only_when_asked() {
    let run = |extra: &[&str]| {
        let mut args = vec!["decap.pcap", "egress.pcap", "backend.pcap", "--format", "csv", "--quiet"];
        args.extend(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(lab("masq-agent"))
            .args(&args)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let plain = run(&[]);
    assert!(!plain.lines().next().unwrap().contains("source_rule"));
    let with = run(&[
        "--rules",
        "egress->backend=rules-node.txt",
        "--conntrack",
        "egress->backend=conntrack-node.log",
    ]);
    let mut rows = csv::Reader::from_reader(with.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(
        &header[header.len() - 10..],
        [
            "source_rule",
            "source_conntrack",
            "destination_rule",
            "destination_conntrack",
            "lost_at",
            "lost_packet",
            "lost_cause",
            "lost_rule",
            "predicted_at",
            "predicted_source"
        ]
    );
    let first = rows.records().next().unwrap().unwrap();
    let n = first.len() - 6;
    assert_eq!(&first[n - 4], "rules-node.txt:19 IP-MASQ-AGENT");
    assert_eq!(&first[n - 3], "conntrack-node.log:1");
    assert_eq!((&first[n - 2], &first[n - 1]), ("", ""));
    // nothing lost, no change proposed: the last six are empty
    assert!(first.iter().skip(n).all(str::is_empty), "{first:?}");
}

/// Every lab scenario with NAT, re-recorded with each NAT host's rules and
/// `conntrack -E -o timestamp` log of the same run beside the captures: per
/// host, its files' suffix (`node`, `pod`), WHERE, and the rule lines the lab
/// applied there. Proxies: the pod's REDIRECT sent the client's connection to
/// the proxy, which opened a new one.
const MASQ_BE0: &[&str] = &["-A POSTROUTING -o be0 -j MASQUERADE"];
const REDIRECT: &[&str] = &["-A PREROUTING -i tun0 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 3128"];
/// A NAT host of a scenario: its files' suffix, WHERE, the rule lines applied there.
type NatHost = (&'static str, &'static str, &'static [&'static str]);
const NAT_SCENARIOS: &[(&str, &[NatHost])] = &[
    ("masquerade-node", &[("node", "egress->backend", MASQ_BE0)]),
    ("masquerade-pod", &[("pod", "decap->egress", &["-A POSTROUTING -o eth0 -j MASQUERADE"])]),
    (
        "dnat-service",
        &[(
            "node",
            "egress->backend",
            &[
                "-A PREROUTING -d 198.19.200.10/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 198.19.96.10:8080",
                "-A POSTROUTING -o be0 -j MASQUERADE --random-fully",
            ],
        )],
    ),
    ("udp-icmp", &[("node", "egress->backend", MASQ_BE0)]),
    ("concurrent", &[("node", "egress->backend", MASQ_BE0)]),
    ("any-node", &[("node", "node", MASQ_BE0)]),
    ("any-node-sll", &[("node", "node", MASQ_BE0)]),
    ("clock-shift", &[("node", "egress->backend", MASQ_BE0)]),
    ("healthcheck", &[("node", "egress->backend", MASQ_BE0)]),
    ("ipv6", &[("node", "egress->backend", MASQ_BE0)]),
    ("syn-retransmit", &[("node", "egress->backend", MASQ_BE0)]),
    ("lossy-capture", &[("node", "egress->backend", MASQ_BE0)]),
    ("vxlan", &[("node", "egress->underlay", &["-A POSTROUTING -o vxlan0 -j MASQUERADE"])]),
    // native nftables only: no iptables-save file
    (
        "nft-service",
        &[(
            "node",
            "egress->backend",
            &["dnat ip to ip daddr . tcp dport map @services", "oifname \"be0\" ip saddr 198.18.90.0/24 masquerade"],
        )],
    ),
    ("proxy", &[("pod", "decap->egress", REDIRECT)]),
    ("proxy-v1", &[("pod", "decap->egress", REDIRECT), ("node", "egress->backend", MASQ_BE0)]),
    ("proxy-v2", &[("pod", "decap->egress", REDIRECT), ("node", "egress->backend", MASQ_BE0)]),
    ("proxy-xff", &[("pod", "decap->egress", REDIRECT), ("node", "egress->backend", MASQ_BE0)]),
    ("proxy-nginx", &[("pod", "decap->egress", REDIRECT), ("node", "egress->backend", MASQ_BE0)]),
];

/// The captures of a lab scenario in path order, a split capture once.
fn captures_of(scenario: &str) -> Vec<String> {
    let text = std::fs::read_to_string(lab(scenario).join("expected.json")).unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    let mut seen: Vec<String> = Vec::new();
    for f in expected["captures"].as_object().unwrap().values() {
        let f = f.as_str().unwrap().to_string();
        if !seen.contains(&f) {
            seen.push(f);
        }
    }
    // serde_json sorts keys: the order of the text is the path order
    seen.sort_by_key(|f| text.find(&format!("\"{f}\"")).unwrap());
    seen
}

/// Issue 33's done-when on every lab scenario with NAT: each translated
/// request (and each proxy's new connection) names the rule the lab applied
/// — from `iptables-save` (`ip6tables-save` for IPv6), `nft list ruleset`
/// and `nft -j list ruleset` of the same host alike — and the conntrack
/// entry of the same run that confirms it, whose original tuple is the
/// request before the host; the explanation names the rule; nothing warns.
#[test]
fn every_translation_of_every_nat_scenario_names_the_rule_the_lab_applied_and_its_entry() {
    for (scenario, hosts) in NAT_SCENARIOS {
        let files = captures_of(scenario);
        for format in ["iptables", "nft", "nft-json"] {
            if format == "iptables" && !lab(scenario).join(format!("rules-{}.txt", hosts[0].0)).exists() {
                assert_eq!(*scenario, "nft-service");
                continue;
            }
            let mut args: Vec<String> = Vec::new();
            for (host, at, _) in hosts.iter() {
                let rules = match format {
                    "iptables" if *scenario == "ipv6" => format!("rules6-{host}.txt"),
                    "iptables" => format!("rules-{host}.txt"),
                    "nft" => format!("nft-{host}.txt"),
                    _ => format!("nft-{host}.json"),
                };
                args.extend(["--rules".into(), format!("{at}={rules}")]);
                args.extend(["--conntrack".into(), format!("{at}=conntrack-{host}.log")]);
            }
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
                .current_dir(lab(scenario))
                .args(&files)
                .args(["--format", "json", "--quiet"])
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{scenario}: {}", String::from_utf8_lossy(&o.stderr));
            let r: Value = serde_json::from_slice(&o.stdout).unwrap();
            // nft -j does not show the arguments of iptables-nft's extensions: said once, as it should
            let xt = |w: &Value| {
                format == "nft-json"
                    && w["message"].as_str().unwrap().contains("iptables-nft extensions (`xt`)")
            };
            assert!(
                r["warnings"].as_array().unwrap().iter().all(xt),
                "{scenario} {format}: {}",
                r["warnings"]
            );
            let mut named = 0;
            for req in r["requests"].as_array().unwrap() {
                let n = &req["request"];
                for side in ["source", "destination"] {
                    for c in req[side]["changed"].as_array().unwrap() {
                        let at = c["between"].as_str().unwrap();
                        let (host, _, applied) = (hosts.iter())
                            .find(|(_, w, _)| *w == at || at.starts_with(&format!("{w}(")))
                            .unwrap_or_else(|| {
                                panic!("{scenario} request {n}: a change at {at}, no NAT host there")
                            });
                        let rule = &c["rule"];
                        if format == "nft-json" && *scenario == "dnat-service" {
                            // iptables-nft's DNAT shows in `nft -j` without its address: never a guess
                            let note = "not evaluated: xt target DNAT (arguments not shown)";
                            assert_eq!((rule, &c["rule_note"]), (&Value::Null, &Value::from(note)));
                            named += 1;
                            continue;
                        }
                        assert!(rule.is_object(), "{scenario} {format} request {n}: {c}");
                        let text = rule["text"].as_str().unwrap();
                        let dnat = text.to_lowercase().contains("dnat");
                        let proxy = c["kind"] == "proxy";
                        if format == "iptables" {
                            assert!(applied.contains(&text), "{scenario} request {n}: {text}");
                            let file = rule["file"].as_str().unwrap();
                            assert_eq!(line(scenario, file, rule["line"].as_u64().unwrap()), text);
                        } else {
                            // nft -j shows iptables-nft's targets as `xt target MASQUERADE`
                            let word = if proxy {
                                "redirect"
                            } else if dnat {
                                "dnat"
                            } else {
                                "masquerade"
                            };
                            let lower = text.to_lowercase();
                            assert!(lower.contains(word), "{scenario} {format} request {n}: {text}");
                            if *scenario == "nft-service" {
                                let bare = text.split(" # handle ").next().unwrap();
                                assert!(applied.contains(&bare), "{scenario} {format}: {text}");
                            }
                        }
                        assert_eq!(dnat, side == "destination", "{scenario}: {text} on the {side}");
                        assert_eq!(proxy, text.to_lowercase().contains("redirect"), "{text}");
                        let ct = &c["conntrack"];
                        let log = format!("conntrack-{host}.log");
                        assert_eq!(
                            (&ct["file"], &ct["confirmed"]),
                            (&Value::from(log.as_str()), &Value::Bool(true)),
                            "{scenario} {format} request {n}: {c}"
                        );
                        let entry = line(scenario, &log, ct["line"].as_u64().unwrap());
                        if side == "source" && req["proto"] != "icmp" {
                            let (ba, bp) = c["before"].as_str().unwrap().rsplit_once(':').unwrap();
                            let ba = ba.trim_start_matches('[').trim_end_matches(']');
                            assert!(
                                entry.contains(&format!("src={ba} "))
                                    && entry.contains(&format!("sport={bp} ")),
                                "{scenario} request {n}: {entry}"
                            );
                        }
                        assert!(
                            entry.contains("[NEW]") && ct["time"].as_str().unwrap().ends_with('Z'),
                            "{entry}"
                        );
                        let explanation = req["explanation"].as_str().unwrap();
                        assert!(
                            explanation.contains(&format!(
                                "({}:{})",
                                rule["file"].as_str().unwrap(),
                                rule["line"]
                            )),
                            "{explanation}"
                        );
                        named += 1;
                    }
                }
            }
            let want: usize = match *scenario {
                "concurrent" => 40,
                "nft-service" => 6,
                "healthcheck" => 15,
                "dnat-service" => 6,
                "proxy-xff" => 6,
                "proxy-nginx" => 12,
                "lossy-capture" | "syn-retransmit" | "masquerade-pod" | "udp-icmp" | "proxy-v1" => 5,
                "proxy" => 3,
                _ => 4,
            };
            assert_eq!(named, want, "{scenario} {format}: changes that named a rule and an entry");
        }
    }
}

/// Issue 33, item 5's last sentence: `compare` of two JSON reports made
/// with `--rules` and `--masq-agent` carries, per service and client, the
/// rule each run names for its requests' changes, and each run's intent
/// findings (masq-agent: the chain carries the ConfigMap; masq-agent-drift:
/// it does not).
#[test]
fn compare_carries_the_rules_and_intent_findings_of_both_runs() {
    let dir = tempfile::tempdir().unwrap();
    let save = |scenario: &str, rules: &str, name: &str| {
        let w = format!("egress->backend={rules}");
        let (r, code, err) =
            report(scenario, &["--rules", &w, "--masq-agent", "egress->backend=masq-agent.yaml"]);
        assert_eq!(code, 0, "{err}");
        let path = dir.path().join(name);
        std::fs::write(&path, r.to_string()).unwrap();
        path
    };
    let before = save("masq-agent", "rules-node.txt", "before.json");
    let after = save("masq-agent-drift", "nft-node.json", "after.json");
    let run = |format: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .args(["compare", "--quiet", "--format", format])
            .arg(&before)
            .arg(&after)
            .output()
            .unwrap()
    };
    let o = run("json");
    let c: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    let statements: Vec<&str> =
        c["pairings"].as_array().unwrap().iter().map(|p| p["statement"].as_str().unwrap()).collect();
    let by = |file: &str, line: u32, n: &str| {
        format!("{n} source at egress->backend by {file}:{line} IP-MASQ-AGENT")
    };
    // requests 1, 2 and 4 (each its own service and client) were masqueraded
    // in both runs; request 3 (to the RETURNed 198.19.96.11) in neither: no rule to name
    let one = format!(
        "; rules before: {}, after: {}",
        by("rules-node.txt", 19, "1 request"),
        by("nft-node.json", 10, "1 request")
    );
    assert_eq!(statements.iter().filter(|s| s.ends_with(&one)).count(), 3, "{statements:#?}");
    let kept: Vec<&&str> = statements.iter().filter(|s| s.contains("198.19.96.11:80")).collect();
    assert_eq!(kept.len(), 1);
    assert!(!kept[0].contains("; rules before"), "{kept:?}");
    assert!(c.get("intent_before").is_none(), "the chain carries the ConfigMap before");
    let after_intent: Vec<&str> =
        c["intent_after"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(after_intent.len(), 3, "{after_intent:?}");
    assert!(
        after_intent[0].starts_with("at egress->backend: ConfigMap keeps 198.19.96.0/24 unmasqueraded"),
        "{after_intent:?}"
    );
    let text = String::from_utf8(run("table").stdout).unwrap();
    assert!(text.contains("Intent (ip-masq-agent)\n\n- before: no intent finding\n- after: at egress->backend: ConfigMap keeps 198.19.96.0/24"), "{text}");
    assert!(text.contains(&one), "{text}");
}

/// At a split capture's host, the interface each request took at its in-side
/// and out-side is the input and output interface its rules see: with the
/// node's `ip -o link` (--names), `-o be1` is read off the capture, not
/// inferred from the translation; without names (`if4`), it is inferred and
/// says so.
#[test]
fn a_split_capture_s_interfaces_decide_the_rules_interface_matches() {
    let dir = lab("any-node-fork");
    let tmp = tempfile::tempdir().unwrap();
    // the node of lab.sh's any-node-fork: lo, pod0, be0, be1, up0 (expected.json's if2..if5)
    let links = tmp.path().join("node-links.txt");
    std::fs::write(
        &links,
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536\n2: pod0@if2: <UP> mtu 1500\n3: be0@if2: <UP> mtu 1500\n\
         4: be1@if3: <UP> mtu 1500\n5: up0@if2: <UP> mtu 1500\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args =
            vec!["decap.pcap", "egress.pcap", "node.pcap", "backend.pcap", "--format", "json", "-q"];
        args.extend(["--rules", "node=rules-node.txt"]);
        args.extend(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(&dir)
            .args(&args)
            .output();
        let o = o.unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let masqueraded = |v: &Value| -> Value {
        let r = (v["requests"].as_array().unwrap().iter())
            .find(|r| r["captures"][0]["client"] == "198.18.90.42:40002")
            .unwrap();
        r["source"]["changed"][0]["rule"].clone()
    };
    let named = run(&["--names", links.to_str().unwrap()]);
    let rule = masqueraded(&named);
    assert_eq!(
        (rule["line"].as_u64(), rule["text"].as_str()),
        (Some(16), Some("-A POSTROUTING -o be1 -j MASQUERADE"))
    );
    assert!(rule.get("decided").is_none_or(|d| d.as_array().is_none_or(Vec::is_empty)), "{rule}");
    let r = &named["requests"].as_array().unwrap()[1];
    assert_eq!(r["captures"][3]["iface"], "be1", "{r}");
    let unnamed = masqueraded(&run(&[]));
    assert_eq!(unnamed["line"].as_u64(), Some(16));
    let decided = unnamed["decided"].as_array().unwrap();
    assert!(
        decided.iter().any(|d| d
            .as_str()
            .unwrap()
            .starts_with("-o be1 (matched, line 16: output interface not known)")),
        "{unnamed}"
    );
}

/// A request the node's FORWARD chain drops (lab `any-node-fork`: seen at
/// node(in), never at node(out)) names the filter rule, read from each of
/// the three formats the lab saved; every other request, which left the
/// node, has no `loss`.
#[test]
fn a_request_dropped_inside_a_node_names_the_filter_rule_that_dropped_it() {
    let dir = lab("any-node-fork");
    for (file, line, text) in [
        ("rules-node.txt", 7, "-A FORWARD -s 198.18.90.43/32 -d 198.19.97.10/32 -p udp -j DROP"),
        ("nft-node.txt", 5, "meta l4proto udp ip saddr 198.18.90.43 ip daddr 198.19.97.10 drop"),
        ("nft-node.json", 5, "meta l4proto udp ip saddr 198.18.90.43 ip daddr 198.19.97.10 drop"),
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(&dir)
            .args(["decap.pcap", "egress.pcap", "node.pcap", "backend.pcap", "--format", "json", "-q"])
            .args(["--rules", &format!("node={file}")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let lost: Vec<&Value> =
            v["requests"].as_array().unwrap().iter().filter(|r| r.get("loss").is_some()).collect();
        assert_eq!(lost.len(), 1, "{file}: {lost:?}");
        let r = lost[0];
        assert_eq!(r["captures"][0]["client"], "198.18.90.43:40005", "{file}");
        assert_eq!(r["captures"][3]["seen"], false, "{file}");
        let loss = &r["loss"];
        assert_eq!((loss["at"].as_str(), loss["cause"].as_str()), (Some("node"), Some("filter")), "{file}");
        assert_eq!((loss["rule"]["file"].as_str(), loss["rule"]["line"].as_u64()), (Some(file), Some(line)));
        assert_eq!(loss["rule"]["chain"], "FORWARD", "{file}");
        let note = format!("dropped by `{text}` ({file}:{line})");
        assert_eq!(loss["note"], note.as_str(), "{file}");
        let expl = r["explanation"].as_str().unwrap();
        assert!(expl.contains(&format!("; lost at node: {note}")), "{file}: {expl}");
    }
}

/// Why a packet was lost, from the host's routing state the lab collected
/// (`ip rule`/`ip route show table all`, `sysctl -a`, `ip neigh`): the
/// node with no route back to the tunnel pool (`no-return-route`) and the
/// pod whose fwmark policy routing sends requests out of eth0 while strict
/// rp_filter checks replies against the main table's route by eth1
/// (`rp-filter`). Without the files, no `loss` is said.
#[test]
fn a_lost_reply_names_the_missing_route_or_the_reverse_path_filter_with_file_and_line() {
    let run = |scenario: &str, at: &str, host: &str| -> Vec<Value> {
        let mut args: Vec<String> = ["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "-q"]
            .map(String::from)
            .to_vec();
        for kind in ["routes", "sysctl", "neigh"] {
            args.push(format!("--{kind}"));
            args.push(format!("{at}={kind}-{host}.txt"));
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(lab(scenario))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["requests"].as_array().unwrap().clone()
    };
    let requests = run("no-return-route", "egress->backend", "node");
    assert_eq!(requests.len(), 3);
    for r in &requests {
        let loss = &r["loss"];
        assert_eq!(
            (loss["at"].as_str(), loss["packet"].as_str(), loss["cause"].as_str()),
            (Some("egress->backend"), Some("reply"), Some("route")),
            "{r}"
        );
        let note =
            "reply has no route: no route to 198.18.90.42 in table local, main, default (routes-node.txt)";
        assert_eq!(loss["note"].as_str().map(|n| n.trim_start_matches("the ")), Some(note), "{r}");
        assert!(r["explanation"].as_str().unwrap().contains("lost at egress->backend: "), "{r}");
    }
    let requests = run("rp-filter", "decap->egress", "pod");
    assert_eq!(requests.len(), 3);
    for r in &requests {
        let loss = &r["loss"];
        assert_eq!(
            (loss["packet"].as_str(), loss["cause"].as_str()),
            (Some("reply"), Some("rp_filter")),
            "{r}"
        );
        let note = loss["note"].as_str().unwrap();
        // rp_filter of eth0 is 1 by conf/all (line 4) and conf/eth0 (line 14);
        // the main table's 198.19.0.0/16 via eth1 is line 15; the fwmark rule line 3
        assert!(note.contains("dropped by rp_filter=1 on eth0 (sysctl-pod.txt:4,14)"), "{note}");
        assert!(note.contains("the route back to 198.19.96.10 leaves by eth1 (routes-pod.txt:15)"), "{note}");
        assert!(note.contains("marked 0x1 (the rule at routes-pod.txt:3"), "{note}");
    }
    // without the host's files nothing is said of why
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab("rp-filter"))
        .args(["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "-q"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["requests"].as_array().unwrap().iter().all(|r| r.get("loss").is_none()));
}

/// `tuplecorr generate collect` prints a shell script (valid `sh`) that
/// writes what `--host-dir` reads; a folder of those names, here holding the
/// rp-filter lab's pod files, gives the same `loss` as the files one by one.
#[test]
fn a_host_folder_gives_what_its_files_give_one_by_one() {
    let bin = env!("CARGO_BIN_EXE_tuplecorr");
    let o = std::process::Command::new(bin).args(["generate", "collect"]).output().unwrap();
    assert!(o.status.success());
    let script = String::from_utf8(o.stdout).unwrap();
    for name in
        ["routes.txt", "sysctl.txt", "neigh.txt", "iptables-save.txt", "nft-ruleset.json", "conntrack.txt"]
    {
        assert!(script.contains(name), "the script writes {name}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("collect.sh");
    std::fs::write(&path, &script).unwrap();
    let syntax = std::process::Command::new("sh").arg("-n").arg(&path).status().unwrap();
    assert!(syntax.success(), "sh -n collect.sh");
    let dir = lab("rp-filter");
    let host = tmp.path().join("pod");
    std::fs::create_dir(&host).unwrap();
    for (from, to) in
        [("routes-pod.txt", "routes.txt"), ("sysctl-pod.txt", "sysctl.txt"), ("neigh-pod.txt", "neigh.txt")]
    {
        std::fs::copy(dir.join(from), host.join(to)).unwrap();
    }
    // an iptables-save without a rule (an nftables-only host) is no rules file
    std::fs::write(host.join("iptables-save.txt"), "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n").unwrap();
    let loss = |args: &[String]| -> Vec<Value> {
        let o = std::process::Command::new(bin)
            .current_dir(&dir)
            .args(["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "-q"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["requests"].as_array().unwrap().iter().map(|r| r["loss"].clone()).collect()
    };
    let folder = loss(&["--host-dir".into(), format!("decap->egress={}", host.display())]);
    let files: Vec<String> = ["routes", "sysctl", "neigh"]
        .iter()
        .flat_map(|k| [format!("--{k}"), format!("decap->egress={k}-pod.txt")])
        .collect();
    let one_by_one = loss(&files);
    assert_eq!(folder.len(), 3);
    for (a, b) in folder.iter().zip(&one_by_one) {
        assert_eq!(a["cause"], "rp_filter", "{a}");
        // the same sentence, the folder's files named as the folder names them
        let renamed = b["note"].as_str().unwrap().replace("-pod.txt", ".txt");
        assert_eq!(a["note"].as_str(), Some(renamed.as_str()));
    }
    let o = std::process::Command::new(bin)
        .current_dir(&dir)
        .args([
            "decap.pcap",
            "egress.pcap",
            "backend.pcap",
            "--host-dir",
            "decap->egress=/nonexistent-folder",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--host-dir decap->egress=/nonexistent-folder: no such folder"));
}

/// A point captured on two hosts (a pool's nodes) takes each host's files
/// with `WHERE@FILE`: the rules given for the host of node-a.pcap name the
/// rule of the requests it recorded, and only theirs; a file that is no
/// host's is refused naming the hosts.
#[test]
fn the_files_of_one_host_of_a_point_explain_only_that_host_s_requests() {
    let dir = lab("masquerade-node");
    let backend = std::fs::read(dir.join("backend.pcap")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (name, even) in [("node-a.pcap", true), ("node-b.pcap", false)] {
        std::fs::write(tmp.path().join(name), crate::util::split_pcap_by_client_port(&backend, even))
            .unwrap();
    }
    let run = |at: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(&dir)
            .args(["decap=decap.pcap", "egress=egress.pcap"])
            .arg(format!("backend={}", tmp.path().join("node-a.pcap").display()))
            .arg(format!("backend={}", tmp.path().join("node-b.pcap").display()))
            .args(["--format", "json", "-q", "--rules", &format!("{at}=rules-node.txt")])
            .output()
            .unwrap()
    };
    let o = run("egress->backend@node-a.pcap");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (mut a, mut b) = (0, 0);
    for r in v["requests"].as_array().unwrap() {
        let host = r["captures"][2]["host"].as_str().unwrap_or_default();
        let named = r["source"]["changed"].as_array().unwrap().iter().any(|c| c.get("rule").is_some());
        if host.ends_with("node-a.pcap") {
            a += 1;
            assert!(named, "node-a's request names its rule: {r}");
        } else {
            b += 1;
            assert!(host.ends_with("node-b.pcap"), "{r}");
            assert!(!named, "node-b's request is not explained by node-a's rules: {r}");
        }
    }
    assert!(a > 0 && b > 0, "{a} {b}");
    let o = run("egress->backend@other.pcap");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"other.pcap\" is no file of a host captured at egress->backend; its hosts:"),
        "{err}"
    );
    assert!(err.contains("node-a.pcap") && err.contains("node-b.pcap"), "{err}");
}

/// The summary lists each loss sentence once, with its count and first request.
#[test]
fn the_summary_counts_each_reason_a_request_was_lost() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(lab("no-return-route"))
        .args(["decap.pcap", "egress.pcap", "backend.pcap", "--summary", "--color", "never"])
        .args(["--routes", "egress->backend=routes-node.txt"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains(
            "Why requests were lost (the hosts' files):\n  3 requests (first: request 1): lost at egress->backend: \
             reply has no route: no route to 198.18.90.42 in table local, main, default (routes-node.txt)\n"
        ),
        "{text}"
    );
}

/// A masquerade change previewed on the masq-agent lab (today's ConfigMap
/// keeps only 198.19.96.11/32): widening nonMasqueradeCIDRs to
/// 198.19.96.0/24 gives the requests to .10 their pod's source back, and
/// the blast radius names .10 as the destination that will see new senders;
/// narrowing it to 10.0.0.0/8 masquerades the request to .11, to the address
/// the node's masqueraded requests leave with today.
#[test]
fn a_proposed_configmap_predicts_each_request_s_source_and_who_will_see_another_sender() {
    let tmp = tempfile::tempdir().unwrap();
    let cm = |cidr: &str| {
        format!(
            "apiVersion: v1\ndata:\n  config: |\n    nonMasqueradeCIDRs:\n      - {cidr}\n    masqLinkLocal: false\n\
             kind: ConfigMap\nmetadata:\n  name: ip-masq-agent\n  namespace: kube-system\n"
        )
    };
    let output = |cidr: &str, format: &str| -> Vec<u8> {
        let path = tmp.path().join(format!("after-{}.yaml", cidr.replace('/', "_")));
        std::fs::write(&path, cm(cidr)).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(lab("masq-agent"))
            .args(["decap.pcap", "egress.pcap", "backend.pcap", "--format", format, "-q"])
            .arg("--masq-agent-after")
            .arg(format!("egress->backend={}", path.display()))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let run = |cidr: &str| -> Value { serde_json::from_slice(&output(cidr, "json")).unwrap() };
    let wide = run("198.19.96.0/24");
    let file = "after-198.19.96.0_24.yaml";
    for r in wide["requests"].as_array().unwrap() {
        let p = &r["predicted"];
        let pod = r["captures"][0]["client"].as_str().unwrap().rsplit_once(':').unwrap().0;
        let today = r["captures"][2]["client"].as_str().unwrap().rsplit_once(':').unwrap().0;
        let dst = r["captures"][2]["server"].as_str().unwrap().rsplit_once(':').unwrap().0;
        assert_eq!((p["source_today"].as_str(), p["source_after"].as_str()), (Some(today), Some(pod)), "{r}");
        assert_eq!(p["changes"], today != pod, "{r}");
        assert_eq!(p["reason"], format!("{dst} in 198.19.96.0/24: kept ({file}:5)").as_str(), "{r}");
    }
    let blast = wide["blast_radius"].as_array().unwrap();
    assert!(!blast.is_empty() && blast.iter().all(|b| b["destination"] == "198.19.96.10"), "{blast:?}");
    assert!(blast.iter().all(|b| b["source_today"] == "198.19.3.17"), "{blast:?}");
    let moved: u64 = blast.iter().map(|b| b["requests"].as_u64().unwrap()).sum();
    let masqueraded_today = (wide["requests"].as_array().unwrap().iter())
        .filter(|r| r["captures"][2]["client"].as_str().unwrap().starts_with("198.19.3.17:"))
        .count() as u64;
    assert_eq!(moved, masqueraded_today);
    let narrow = run("10.0.0.0/8");
    let to11: Vec<&Value> = (narrow["requests"].as_array().unwrap().iter())
        .filter(|r| r["captures"][2]["server"].as_str().unwrap().starts_with("198.19.96.11:"))
        .collect();
    assert_eq!(to11.len(), 1);
    let p = &to11[0]["predicted"];
    assert_eq!(
        (p["source_after"].as_str(), p["changes"].as_bool()),
        (Some("198.19.3.17"), Some(true)),
        "{p}"
    );
    assert!(
        to11[0]["explanation"]
            .as_str()
            .unwrap()
            .contains("after the change at egress->backend: source 198.19.3.17 instead of 198.18.90.42"),
        "{}",
        to11[0]["explanation"]
    );
    // The CSV's predicted_at and predicted_source say the same, row by row.
    let csv = output("10.0.0.0/8", "csv");
    let mut rows = csv::Reader::from_reader(&csv[..]);
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (at, source) = (col("predicted_at"), col("predicted_source"));
    let requests = narrow["requests"].as_array().unwrap();
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), requests.len());
    for (row, r) in rows.iter().zip(requests) {
        let p = &r["predicted"];
        assert_eq!(row[at], *p["at"].as_str().unwrap_or(""), "{r}");
        assert_eq!(row[source], *p["source_after"].as_str().unwrap_or(""), "{r}");
    }
    assert!(rows.iter().any(|row| &row[source] == "198.19.3.17"));
    let b = narrow["blast_radius"].as_array().unwrap();
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(
        (b[0]["destination"].as_str(), b[0]["source_after"].as_str()),
        (Some("198.19.96.11"), Some("198.19.3.17"))
    );
}

/// An edited ruleset previewed (`--rules-after`) on the masquerade-node lab:
/// the same rules predict today's sources (the `-o be0` of the MASQUERADE
/// decided by today's translation) and no blast radius; the rules without
/// the MASQUERADE give every request its pod's source back.
#[test]
fn an_edited_ruleset_predicts_each_request_s_source() {
    let dir = lab("masquerade-node");
    let tmp = tempfile::tempdir().unwrap();
    let rules = std::fs::read_to_string(dir.join("rules-node.txt")).unwrap();
    let without = tmp.path().join("rules-without-masquerade.txt");
    std::fs::write(
        &without,
        rules.lines().filter(|l| !l.contains("MASQUERADE")).collect::<Vec<_>>().join("\n"),
    )
    .unwrap();
    let run = |file: &str| -> Value {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
            .current_dir(&dir)
            .args(["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "-q"])
            .args(["--rules-after", &format!("egress->backend={file}")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let same = run("rules-node.txt");
    assert!(same.get("blast_radius").is_none(), "{}", same["blast_radius"]);
    let masq_line = rules.lines().position(|l| l.contains("-j MASQUERADE")).unwrap() + 1;
    for r in same["requests"].as_array().unwrap() {
        let p = &r["predicted"];
        assert_eq!(p["changes"], false, "{r}");
        assert_eq!(p["source_after"], p["source_today"], "{r}");
        assert_eq!(
            p["reason"],
            format!("by `-A POSTROUTING … -j MASQUERADE` (rules-node.txt:{masq_line})").as_str()
        );
    }
    let gone = run(without.to_str().unwrap());
    let mut moved = 0;
    for r in gone["requests"].as_array().unwrap() {
        let pod = r["captures"][0]["client"].as_str().unwrap().rsplit_once(':').unwrap().0;
        let p = &r["predicted"];
        assert_eq!(p["source_after"].as_str(), Some(pod), "{r}");
        assert_eq!(p["reason"], "no nat rule of rules-without-masquerade.txt translates it", "{r}");
        moved += u64::from(p["changes"] == true);
    }
    let blast: u64 =
        gone["blast_radius"].as_array().unwrap().iter().map(|b| b["requests"].as_u64().unwrap()).sum();
    assert!(moved > 0 && blast == moved, "{moved} {blast}");
}

/// Two MASQUERADE rules guarded by `-o` where the captures do not name the
/// interface (the fork lab without --names): the rules alone leave both
/// possible; the node's routes (table local) say which interface holds the
/// address the source became, and that settles it, said in `decided`.
#[test]
fn the_address_a_source_became_names_the_interface_and_so_the_masquerade_rule() {
    let dir = lab("any-node-fork");
    let tmp = tempfile::tempdir().unwrap();
    let rules = std::fs::read_to_string(dir.join("rules-node.txt")).unwrap().replace(
        "-A POSTROUTING -o be1 -j MASQUERADE",
        "-A POSTROUTING -o be0 -j MASQUERADE\n-A POSTROUTING -o be1 -j MASQUERADE",
    );
    let path = tmp.path().join("two-masq.txt");
    std::fs::write(&path, &rules).unwrap();
    let be1 = rules.lines().position(|l| l == "-A POSTROUTING -o be1 -j MASQUERADE").unwrap() + 1;
    let local = std::fs::read_to_string(dir.join("routes-node.txt")).unwrap();
    let held =
        local.lines().position(|l| l.starts_with("local 198.19.97.1 dev be1 table local")).unwrap() + 1;
    let run = |routes: bool| -> Vec<Value> {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr"));
        c.current_dir(&dir)
            .args(["decap.pcap", "egress.pcap", "node.pcap", "backend.pcap", "--format", "json", "-q"])
            .arg("--rules")
            .arg(format!("node={}", path.display()));
        if routes {
            c.args(["--routes", "node=routes-node.txt"]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["requests"].as_array().unwrap().iter())
            .flat_map(|r| r["source"]["changed"].as_array().unwrap().clone())
            .collect()
    };
    let without = run(false);
    assert!(!without.is_empty());
    assert!(without.iter().all(|c| c["rule_note"] == "not evaluated: -o be0, -o be1"), "{without:?}");
    let with = run(true);
    assert_eq!(with.len(), without.len());
    for c in &with {
        assert_eq!(c["rule"]["line"].as_u64(), Some(be1 as u64), "{c}");
        let decided = format!("-o be1 (the interface holding 198.19.97.1, routes-node.txt:{held})");
        assert_eq!(c["rule"]["decided"], serde_json::json!([decided]), "{c}");
    }
}

/// `tuplecorr preview` is a run that insists on a proposed state: without
/// one it is a usage error naming both options; with one it writes what the
/// main form with that option writes.
#[test]
fn preview_is_a_run_that_insists_on_a_proposed_state() {
    let bin = env!("CARGO_BIN_EXE_tuplecorr");
    let dir = lab("masquerade-node");
    let caps = ["decap.pcap", "egress.pcap", "backend.pcap", "--format", "json", "-q"];
    let o = std::process::Command::new(bin).current_dir(&dir).arg("preview").args(caps).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--masq-agent-after WHERE=FILE") && err.contains("--rules-after WHERE=FILE"),
        "{err}"
    );
    let after = ["--rules-after", "egress->backend=rules-node.txt"];
    let sub = std::process::Command::new(bin)
        .current_dir(&dir)
        .arg("preview")
        .args(caps)
        .args(after)
        .output()
        .unwrap();
    let main = std::process::Command::new(bin).current_dir(&dir).args(caps).args(after).output().unwrap();
    assert!(sub.status.success() && main.status.success());
    assert_eq!(String::from_utf8_lossy(&sub.stdout), String::from_utf8_lossy(&main.stdout));
    assert!(String::from_utf8_lossy(&sub.stdout).contains("\"predicted\""));
}

/// The change record predicts, then proves (issue 49, item 4): the preview
/// on the masq-agent lab of a ConfigMap keeping all of 198.19.96.0/24 writes
/// its prediction (`--expectations`); the lab's `preserved` run (no NAT: what
/// that ConfigMap gives) proves it, exit 0; the run before the change does
/// not, exit 1 naming each request that still leaves masqueraded; and the
/// same file proves the rollback (`--rollback`: today's sources).
#[test]
fn a_preview_s_expectations_are_proved_after_the_change_and_after_its_rollback() {
    let bin = env!("CARGO_BIN_EXE_tuplecorr");
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let today = std::fs::read_to_string(lab("masq-agent").join("masq-agent.yaml")).unwrap();
    assert!(today.contains("- 198.19.96.11/32"));
    std::fs::write(path("wide.yaml"), today.replace("- 198.19.96.11/32", "- 198.19.96.0/24")).unwrap();
    let caps = ["decap.pcap", "egress.pcap", "backend.pcap", "-q"];
    let o = std::process::Command::new(bin)
        .current_dir(lab("masq-agent"))
        .arg("preview")
        .args(caps)
        .args(["--masq-agent-after", &format!("egress->backend={}", path("wide.yaml"))])
        .args(["--expectations", &path("expected.json"), "-o", &path("before.json")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = std::process::Command::new(bin)
        .current_dir(lab("preserved"))
        .args(caps)
        .args(["-o", &path("after.json")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // the file: one entry per service, client and host
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path("expected.json")).unwrap()).unwrap();
    assert_eq!(file["tuplecorr_expectations"], 1);
    assert_eq!(file["captures"], serde_json::json!(["decap", "egress", "backend"]));
    let entries = file["entries"].as_array().unwrap();
    let entry = |proto: &str, service: &str, client: &str| -> &Value {
        (entries.iter())
            .find(|e| e["proto"] == proto && e["service"] == service && e["client"] == client)
            .unwrap_or_else(|| panic!("{proto} {service} {client}: {entries:?}"))
    };
    assert_eq!(entries.len(), 4, "{entries:?}");
    let tcp42 = entry("tcp", "198.19.96.10:80", "198.18.90.42");
    assert_eq!(tcp42["at"], "egress->backend");
    assert_eq!(
        (tcp42["source_today"].as_str(), tcp42["source_after"].as_str()),
        (Some("198.19.3.17"), Some("198.18.90.42"))
    );
    assert_eq!(tcp42["reason"], "198.19.96.10 in 198.19.96.0/24: kept (wide.yaml:5)");
    assert_eq!(tcp42["requests"], serde_json::json!([1]));
    let kept = entry("tcp", "198.19.96.11:80", "198.18.90.42");
    assert_eq!(
        (kept["source_today"].as_str(), kept["source_after"].as_str()),
        (Some("198.18.90.42"), Some("198.18.90.42"))
    );
    assert_eq!(entry("udp", "198.19.96.10:9000", "198.18.90.42")["source_after"], "198.18.90.42");

    let compare = |before: &str, after: &str, extra: &[&str]| {
        std::process::Command::new(bin)
            .args(["compare", &path(before), &path(after), "--expectations", &path("expected.json")])
            .args(extra)
            .output()
            .unwrap()
    };
    // (a) after the change as predicted: exit 0, each entry held or not exercised
    let o = compare("before.json", "after.json", &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    let checks: Vec<&Value> = c["expectations"].as_array().unwrap().iter().map(|e| &e["predicted"]).collect();
    assert_eq!(checks.len(), 4);
    let check = |service: &str, client: &str| {
        *checks.iter().find(|p| p["service"] == service && p["client"] == client).unwrap()
    };
    let p = check("198.19.96.10:80", "198.18.90.42");
    assert_eq!(p["status"], "held");
    assert_eq!(
        (p["before"].clone(), p["predicted"].clone(), p["observed"].clone()),
        (
            serde_json::json!(["198.19.3.17"]),
            serde_json::json!("198.18.90.42"),
            serde_json::json!(["198.18.90.42"])
        )
    );
    assert_eq!(check("198.19.96.10:9000", "198.18.90.42")["status"], "held");
    assert_eq!(check("198.19.96.10:80", "198.18.90.43")["status"], "not-exercised");
    assert_eq!(check("198.19.96.11:80", "198.18.90.42")["status"], "not-exercised");
    let held = c["expectations"].as_array().unwrap().iter().filter(|e| e["holds"] == true).count();
    assert_eq!(held, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("tuplecorr: note: not exercised: tcp 198.19.96.10:80 from 198.18.90.43: source leaving egress->backend is 198.18.90.43, as predicted"),
        "{err}"
    );
    let o = compare("before.json", "after.json", &["--format", "markdown"]);
    assert_eq!(o.status.code(), Some(0));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains(
            "- ✔ tcp 198.19.96.10:80 from 198.18.90.42: source leaving egress->backend is 198.18.90.42, as predicted \
             (2 requests checked, 0 broken)\n  - 198.19.3.17 → 198.18.90.42 → 198.18.90.42 (before → predicted → \
             observed, at egress->backend; 198.19.96.10 in 198.19.96.0/24: kept (wide.yaml:5))\n"
        ),
        "{md}"
    );

    // (b) the run before the change does not leave as predicted: exit 1, each request named
    let o = compare("before.json", "before.json", &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    for (whose, n, want) in [
        ("tcp 198.19.96.10:80 from 198.18.90.42", 1, "198.18.90.42"),
        ("tcp 198.19.96.10:80 from 198.18.90.43", 2, "198.18.90.43"),
        ("udp 198.19.96.10:9000 from 198.18.90.42", 4, "198.18.90.42"),
    ] {
        let line = format!(
            "tuplecorr: expectation not met: {whose}: source leaving egress->backend is {want}, as predicted: broken by \
             request {n} (source leaving egress->backend 198.19.3.17, not {want})\n"
        );
        assert!(err.contains(&line), "{line}\n{err}");
    }
    assert_eq!(err.matches("expectation not met").count(), 3, "{err}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("- ✘ tcp 198.19.96.10:80 from 198.18.90.42: source leaving egress->backend is 198.18.90.42, as predicted (1 request checked, 1 broken)\n"), "{table}");
    assert!(
        table.contains("  - 198.19.3.17 → 198.18.90.42 → 198.19.3.17 (before → predicted → observed"),
        "{table}"
    );
    assert!(
        table.contains("  - request 1 after: source leaving egress->backend 198.19.3.17, not 198.18.90.42\n"),
        "{table}"
    );
    assert!(table.contains("- ✔ tcp 198.19.96.11:80 from 198.18.90.42: source leaving egress->backend is 198.18.90.42, as predicted"), "{table}");
    let o = compare("before.json", "before.json", &["--format", "json"]);
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    let broken: Vec<u64> = (c["expectations"].as_array().unwrap().iter())
        .flat_map(|e| e["broken_by"].as_array().unwrap().iter().map(|b| b["requests"][0].as_u64().unwrap()))
        .collect();
    assert_eq!(broken, [1, 2, 4]);

    // the rollback, from after the change back to today's: the same file, --rollback
    let o = compare("after.json", "before.json", &["--rollback"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("- ✔ tcp 198.19.96.10:80 from 198.18.90.42: source leaving egress->backend is 198.19.3.17, as before the change (--rollback)"), "{text}");
    assert_eq!(text.matches("- ✔ ").count(), 4 + 1, "4 entries and no regression: {text}");
    // and a rollback that did not happen (still as after the change) breaks it
    let o = compare("after.json", "after.json", &["--rollback"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("broken by request 1 (source leaving egress->backend 198.18.90.42, not 198.19.3.17), request 2 (source leaving egress->backend 198.18.90.42, not 198.19.3.17)"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `--expectations` writes what a proposed state will do: without one it is a
/// usage error; `compare` refuses a file that is not an expectations file,
/// naming it and what is wrong, before writing anything.
#[test]
fn expectations_need_a_proposed_state_and_a_file_of_theirs() {
    let bin = env!("CARGO_BIN_EXE_tuplecorr");
    let tmp = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(bin)
        .current_dir(lab("masq-agent"))
        .args(["decap.pcap", "egress.pcap", "backend.pcap", "-q", "--format", "json"])
        .arg("--expectations")
        .arg(tmp.path().join("e.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--expectations") && err.contains("--masq-agent-after WHERE=FILE"), "{err}");
    assert!(o.stdout.is_empty() && !tmp.path().join("e.json").exists());
    let report = tmp.path().join("r.json");
    let o = std::process::Command::new(bin)
        .current_dir(lab("masq-agent"))
        .args(["decap.pcap", "egress.pcap", "backend.pcap", "-q", "-o"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success());
    for (text, says) in [
        ("not json", "not JSON"),
        ("{\"entries\": []}", "not a tuplecorr expectations file"),
        ("{\"tuplecorr_expectations\": 2, \"entries\": []}", "version 2 of the format"),
        ("{\"tuplecorr_expectations\": 1, \"entries\": [{\"proto\": \"tcp\"}]}", "entry 1: missing field"),
    ] {
        let file = tmp.path().join("bad.json");
        std::fs::write(&file, text).unwrap();
        let o = std::process::Command::new(bin)
            .arg("compare")
            .args([&report, &report])
            .arg("--expectations")
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("--expectations {}: ", file.display())) && err.contains(says),
            "{text}: {err}"
        );
        assert!(o.stdout.is_empty(), "{text}");
    }
}
