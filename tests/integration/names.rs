//! Reports in the user's terms (issue 17): `--names` from kubectl output,
//! hosts and CSV files; `--tz` and `--time-format`; the service column and
//! `--columns`; `--warnings-to`. The binary runs on the lab's captures with the
//! hand-written names files of `testdata/names` (kubectl's column layouts).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn names(file: &str) -> String {
    root().join("testdata/names").join(file).display().to_string()
}

/// Runs the binary on a lab scenario's captures (in its folder) with `extra`.
fn run(scenario: &str, captures: &[&str], extra: &[&str]) -> Output {
    let dir = root().join("testdata/lab").join(scenario);
    Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(&dir)
        .args(captures)
        .arg("-q")
        .args(extra)
        .env_remove("COLUMNS")
        .output()
        .unwrap()
}

const MASQ: [&str; 3] = ["decap.pcap", "egress.pcap", "backend.pcap"];

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn kubectl_text() -> Vec<String> {
    ["pods.txt", "nodes.txt", "svc.txt"].iter().flat_map(|f| ["--names".to_string(), names(f)]).collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn kubectl_names_appear_beside_addresses_in_table_and_summary() {
    let args = kubectl_text();
    let t = ok(run("masquerade-node", &MASQ, &strs(&args)));
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("#  service "), "{}", lines[0]);
    // the service column: protocol and server at capture 1, with its Service name
    assert!(lines[1].contains("tcp default/backend (198.19.96.10:80)"), "{}", lines[1]);
    assert!(lines[4].contains("udp default/backend (198.19.96.10:9000)"), "{}", lines[4]);
    // pod at decap; at backend the node's address: the node wins over the hostNetwork kube-proxy pod
    assert!(lines[1].contains("vpn/backend-vpn-0 (198.18.90.42:40001)"), "{}", lines[1]);
    assert!(lines[1].contains("node-a (198.19.3.17:40001)"), "{}", lines[1]);
    assert!(!t.contains("kube-proxy"), "{t}");
    assert!(t.contains("source of 2 clients → node-a (198.19.3.17) between egress and backend"), "{t}");
}

#[test]
fn explanation_csv_and_json_carry_names_only_when_asked() {
    let args = kubectl_text();
    let mut csv_args = strs(&args);
    csv_args.extend(["--format", "csv"]);
    let with = ok(run("masquerade-node", &MASQ, &csv_args));
    let mut rows = csv::Reader::from_reader(with.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    let first = rows.records().next().unwrap().unwrap();
    let col = |name: &str| &first[header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}"))];
    assert_eq!(
        col("explanation"),
        "source vpn/backend-vpn-0 (198.18.90.42:40001) -> node-a (198.19.3.17:40001) between egress and backend \
         (downstream of the pod); reply returned on the same path"
    );
    // address columns are kept; names come after every other column
    assert_eq!((col("client"), col("client_name")), ("198.18.90.42:40001", "vpn/backend-vpn-0"));
    assert_eq!((col("service"), col("service_name")), ("198.19.96.10:80", "default/backend"));
    assert_eq!(col("backend_client_name"), "node-a");
    let name_at = header.iter().position(|h| h == "client_name").unwrap();
    assert_eq!(header[name_at - 1], "exchange_slowest", "names follow the last column without --names");
    assert!(header[..name_at].iter().all(|h| !h.ends_with("_name")));
    let without = ok(run("masquerade-node", &MASQ, &["--format", "csv"]));
    assert!(!without.lines().next().unwrap().contains("_name"));

    let json = ok(run("masquerade-node", &MASQ, &["--names", &names("list.json"), "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let r = &v["requests"][0];
    assert_eq!(r["captures"][0]["client_name"], "vpn/backend-vpn-0");
    assert_eq!(r["captures"][2]["client_name"], "node-a");
    assert_eq!(r["captures"][2]["server_name"], "default/backend");
    assert_eq!(r["captures"][2]["client"], "198.19.3.17:40001");
    assert_eq!(r["source"]["changed"][0]["after_name"], "node-a");
    let plain = ok(run("masquerade-node", &MASQ, &["--format", "json"]));
    assert!(!plain.contains("_name") && !plain.contains("time_local"));
}

#[test]
fn names_from_hosts_and_csv_and_formula_cells_are_defused() {
    let out = ok(run(
        "masquerade-node",
        &MASQ,
        &["--names", &names("names.csv"), "--names", &names("hosts"), "--format", "csv"],
    ));
    let mut rows = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let at =
        |r: &csv::StringRecord, name: &str| r[header.iter().position(|h| h == name).unwrap()].to_string();
    // the CSV's name for .42 starts with `=`: a spreadsheet must not run it
    assert_eq!(at(&records[0], "client_name"), "'=HYPERLINK(\"http://x\")");
    // .43 has no name of its own: the hosts file's network names it
    assert_eq!(at(&records[2], "client_name"), "vpn-clients");
    assert_eq!(at(&records[0], "service_name"), "backend.default.svc");
}

#[test]
fn html_embeds_the_names_and_keeps_them_text() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("hostile.csv");
    std::fs::write(&hostile, "198.19.3.17,\"</script><img src=x onerror=alert(1)>\"\n").unwrap();
    let page = dir.path().join("r.html");
    let out =
        run("masquerade-node", &MASQ, &["--names", hostile.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<img"), "a name became markup");
    assert!(html.contains("\"client_name\":\"\\u003c/script>\\u003cimg src=x onerror=alert(1)>\""));
    // the page's script shows names beside addresses
    assert!(html.contains("named(h.client, h.client_name)"));
}

#[test]
fn tz_and_time_format_rewrite_csv_times_and_json_keeps_utc() {
    let cell = |extra: &[&str]| -> String {
        let mut args = vec!["--format", "csv"];
        args.extend(extra);
        let out = ok(run("masquerade-node", &MASQ, &args));
        let mut rows = csv::Reader::from_reader(out.as_bytes());
        rows.records().next().unwrap().unwrap()[2].to_string()
    };
    assert_eq!(cell(&[]), "2026-12-05T00:09:21.722263000Z");
    assert_eq!(cell(&["--tz", "Europe/Berlin"]), "2026-12-05T01:09:21.722263000+01:00");
    assert_eq!(cell(&["--tz", "-03:30", "--time-format", "spreadsheet"]), "2026-12-04 20:39:21.722263");
    assert_eq!(cell(&["--time-format", "epoch"]), "1796429361.722263000");
    let json = ok(run("masquerade-node", &MASQ, &["--tz", "America/New_York", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["requests"][0]["captures"][0]["time"], "2026-12-05T00:09:21.722263000Z");
    assert_eq!(v["requests"][0]["captures"][0]["time_local"], "2026-12-04T19:09:21.722263000-05:00");
    let table = ok(run("masquerade-node", &MASQ, &["--tz", "Asia/Tokyo", "--columns", "time,request"]));
    assert_eq!(table.lines().nth(1).unwrap(), "2026-12-05 09:09:21.722263  1");
}

#[test]
fn columns_choose_and_order_like_ps_o() {
    let t = ok(run("masquerade-node", &MASQ, &["--columns", "reply,backend,#,decap,egress,proto"]));
    let first = t.lines().next().unwrap();
    assert_eq!(
        first.split_whitespace().collect::<Vec<_>>(),
        ["reply", "backend", "#", "decap", "→", "egress", "proto"],
        "{first}"
    );
    assert!(t.lines().nth(1).unwrap().starts_with("same-path  198.19.3.17:40001"), "{t}");
}

#[test]
fn an_identity_column_shows_who_the_backend_thinks_the_client_is() {
    // proxy-v1: requests 1 and 2 through the pod's proxy (PROXY v1 with the
    // client), request 3 with an X-Forwarded-For the client set itself.
    let t = ok(run("proxy-v1", &MASQ, &["--columns", "#,identity"]));
    let lines: Vec<&str> = t.lines().take(4).map(str::trim_end).collect();
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["#", "identity"]);
    assert_eq!(lines[1], "1  proxy-v1 198.18.90.42:40001 added decap->egress");
    assert_eq!(lines[2], "2  proxy-v1 198.18.90.43:40002 added decap->egress");
    assert_eq!(lines[3], "3  x-forwarded-for 203.0.113.9 added client-side");
    let t = ok(run("masquerade-node", &MASQ, &["--columns", "#,identity"]));
    assert!(t.lines().skip(1).take(4).all(|l| l.trim_end().ends_with(" -")), "no carrier: {t}");
}

#[test]
fn wrong_names_zones_and_columns_are_usage_errors_that_say_what_is_read() {
    let cases: [(&[&str], &str); 5] = [
        (&["--names", "expected.json"], "kubectl get nodes -o wide"),
        (&["--names", "../index.tsv"], "not a names file"),
        (&["--tz", "Moon/Base"], "Area/City"),
        (&["--columns", "reply,latency"], "columns are request, proto, service, time, hops"),
        (&["--time-format", "excel"], "spreadsheet"),
    ];
    for (extra, says) in cases {
        let out = run("masquerade-node", &MASQ, extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn warnings_travel_with_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (text, table) = (dir.path().join("w.txt"), dir.path().join("w.csv"));
    // one mistake a user makes: the same capture given twice
    let captures = ["decap.pcap", "egress.pcap", "again=egress.pcap"];
    let out =
        run("masquerade-node", &captures, &["--format", "csv", "--warnings-to", text.to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(read(&text), stderr, "the file holds the lines printed on stderr");
    assert!(read(&text).contains("egress and again are the same file"), "{}", read(&text));
    let out = run("masquerade-node", &captures, &["--warnings-to", table.to_str().unwrap()]);
    assert!(out.status.success());
    let body = read(&table);
    let mut rows = csv::Reader::from_reader(body.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, ["file", "label", "record", "byte_offset", "message"]);
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!((&rows[0][0], &rows[0][1]), ("egress.pcap", "again"));
    // no warning: the file is still written, empty of lines
    let empty = dir.path().join("none.txt");
    ok(run("masquerade-node", &MASQ, &["--warnings-to", empty.to_str().unwrap()]));
    assert_eq!(read(&empty), "");
}

const ANY_NODE: [&str; 4] = ["decap.pcap", "egress.pcap", "node.pcap", "backend.pcap"];

/// The interface each request took at a side of the node, as JSON shows it.
fn ifaces(v: &serde_json::Value, label: &str) -> Vec<String> {
    (v["requests"].as_array().unwrap().iter())
        .map(|r| {
            let at = r["captures"].as_array().unwrap().iter().find(|c| c["label"] == label).unwrap();
            at["iface"].as_str().unwrap_or("-").to_string()
        })
        .collect()
}

#[test]
fn ip_link_output_names_the_interfaces_each_request_took_at_the_sides_of_an_any_capture() {
    // real `ip -o link` / `ip -j link` of a namespace built as the lab's node (pod0 ifindex 2, be0 ifindex 3)
    for file in ["any-node-ip-o-link.txt", "any-node-ip-j-link.json"] {
        let with = names(file);
        let json = ok(run("any-node", &ANY_NODE, &["--names", &with, "--format", "json"]));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let labels: Vec<&str> =
            v["captures"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
        // the sides are points; the interfaces are fields of each request there
        assert_eq!(labels, ["decap", "egress", "node(in)", "node(out)", "backend"], "{file}");
        assert_eq!(ifaces(&v, "node(in)"), ["pod0"; 4], "{file}");
        assert_eq!(ifaces(&v, "node(out)"), ["be0"; 4], "{file}");
        assert_eq!(ifaces(&v, "backend"), ["-"; 4], "a whole capture names no interface: {file}");
        let change = &v["requests"][0]["source"]["changed"][0];
        assert_eq!(change["between"], "node(in)->node(out)", "{file}");
        assert_eq!(change["before"], "198.18.90.42:40001");
        assert_eq!(v["warnings"].as_array().unwrap().len(), 0, "{file}: {}", v["warnings"]);
    }
    // without them: the indexes
    let v: serde_json::Value =
        serde_json::from_str(&ok(run("any-node", &ANY_NODE, &["--format", "json"]))).unwrap();
    assert_eq!(
        (ifaces(&v, "node(in)"), ifaces(&v, "node(out)")),
        (vec!["if2".to_string(); 4], vec!["if3".to_string(); 4])
    );
    // interface names alone add no name columns of addresses; with hosts names, both apply
    let links = names("any-node-ip-o-link.txt");
    let csv = ok(run("any-node", &ANY_NODE, &["--names", &links, "--format", "csv"]));
    let header = csv.lines().next().unwrap();
    assert!(header.contains("node(in)_client") && !header.contains("client_name"), "{header}");
    let both =
        ok(run("any-node", &ANY_NODE, &["--names", &links, "--names", &names("hosts"), "--format", "csv"]));
    let header = both.lines().next().unwrap();
    assert!(header.contains("node(out)_client") && header.contains("client_name"), "{header}");
}

#[test]
fn ip_link_names_that_cannot_apply_are_warned_about() {
    // LINUX_SLL carries no interface index: the names cannot be used
    let out =
        run("any-node-sll", &ANY_NODE, &["--names", &names("any-node-ip-o-link.txt"), "--format", "json"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
    assert_eq!(v["captures"][2]["label"], "node(in)");
    assert!(
        err.contains("node.pcap: interface names were given to --names") && err.contains("LINUX_SLL"),
        "{err}"
    );
    // an `ip -o link` of another host: the indexes it lacks are named
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other-host.txt");
    std::fs::write(&other, "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536\n3: eth9: <UP> mtu 1500\n").unwrap();
    let out = run("any-node", &ANY_NODE, &["--names", other.to_str().unwrap(), "--format", "json"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
    assert_eq!(
        (v["captures"][2]["label"].as_str(), v["captures"][3]["label"].as_str()),
        (Some("node(in)"), Some("node(out)"))
    );
    assert_eq!((ifaces(&v, "node(in)")[0].as_str(), ifaces(&v, "node(out)")[0].as_str()), ("if2", "eth9"));
    assert!(err.contains("name no interface if2 of this capture"), "{err}");
    // without link names, no such warning
    let out = run("any-node-sll", &ANY_NODE, &["--names", &names("hosts")]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("interface names"));
    // an SLL2 capture that stays one point (a multi-homed end host) holds
    // indexes too: no "no capture holds interface indexes"
    let multihomed = ["decap.pcap", "egress.pcap", "backend.pcap"];
    let out = run("multihomed", &multihomed, &["--names", &names("any-node-ip-o-link.txt")]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("no capture holds interface indexes"), "{err}");
}

#[test]
fn broken_or_hostile_ip_link_files_are_usage_errors_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("cut.txt", b"1: lo: <LOOPBACK> mtu 65536\n2: eth0: <UP> mtu 1500\n3: be0 garbage\n", "line 3: "),
        (
            "blank.txt",
            b"1: lo: <LOOPBACK> mtu 65536\n2: \x1b\x07(): <UP>\n",
            "line 2: an interface without a name",
        ),
        ("json.json", br#"[{"ifindex":1,"ifname":"lo"},{"ifindex":4294967296,"ifname":"x"}]"#, "item 2 "),
        ("bytes.txt", b"1: lo: <UP>\n\xff\xfe\x00\x01: x: y\n", "line 2: "),
    ];
    for (file, bytes, want) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, bytes).unwrap();
        let out = run("any-node", &ANY_NODE, &["--names", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(&format!("--names {}: {want}", path.display())), "{file}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
