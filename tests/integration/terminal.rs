//! The table on a terminal (issues 35 and 55): `TUPLECORR_TERM_WIDTH` makes
//! the binary lay out its table as on a terminal that wide. Every line of
//! every lab scenario (and of a generated set, and with `--names`) fits 80 and
//! 120 columns, the compact columns are chosen, and no address or port is
//! ever cut: every request's client (the JSON's first capture's) is shown
//! whole, no `…` touches an address, and every `:digits` after an address in
//! the table is a whole port of the report. The same with `--columns`.

use crate::util::{lab_scenarios, testdata, write_mix_set};
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

const WIDTH_VAR: &str = "TUPLECORR_TERM_WIDTH";

fn run(dir: &Path, args: &[String], width: Option<usize>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tuplecorr"));
    cmd.current_dir(dir).args(args).args(["--quiet", "--color", "never"]).env_remove("COLUMNS");
    match width {
        Some(w) => cmd.env(WIDTH_VAR, w.to_string()),
        None => cmd.env_remove(WIDTH_VAR),
    };
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every port of every endpoint the JSON report names.
fn ports(json: &str) -> HashSet<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut out = HashSet::new();
    let mut add = |e: &serde_json::Value| {
        if let Some((_, port)) =
            e.as_str().and_then(|s| s.rsplit_once(':')).filter(|(a, _)| !a.ends_with(':'))
        {
            if port.chars().all(|c| c.is_ascii_digit()) {
                out.insert(port.to_string());
            }
        }
    };
    for r in v["requests"].as_array().unwrap() {
        for h in r["captures"].as_array().unwrap() {
            add(&h["client"]);
            add(&h["server"]);
        }
        for side in ["source", "destination"] {
            for c in r[side]["changed"].as_array().unwrap() {
                add(&c["before"]);
                add(&c["after"]);
            }
        }
    }
    out
}

/// Each request's client as the JSON (and the CSV's `client`) gives it: its
/// endpoint at the first capture that saw it.
fn clients(json: &str) -> Vec<(u64, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    (v["requests"].as_array().unwrap().iter())
        .map(|r| {
            let first = r["captures"].as_array().unwrap().iter().find(|h| h["seen"] == true).unwrap();
            (r["request"].as_u64().unwrap(), first["client"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The table part of `text` (before the summary).
fn table_part(text: &str) -> &str {
    text.split("\n\n").next().unwrap()
}

/// The lines of each request in the table part: its first line begins with
/// its number, the lines after it (its cells wrapped, its columns below)
/// with no number (no cell's first word is one).
fn blocks(text: &str) -> Vec<(u64, Vec<&str>)> {
    let mut out: Vec<(u64, Vec<&str>)> = Vec::new();
    for line in table_part(text).lines().skip(1) {
        match line.split_whitespace().next().and_then(|w| w.parse::<u64>().ok()) {
            Some(n) => out.push((n, vec![line])),
            _ => {
                if let Some(last) = out.last_mut() {
                    last.1.push(line);
                }
            }
        }
    }
    out
}

/// No `…` beside a character of an address (a digit, `.`, `:`, a bracket):
/// a name may be shortened, an address never.
fn no_address_cut(text: &str, what: &str) {
    let chars: Vec<char> = table_part(text).chars().collect();
    for (i, _) in chars.iter().enumerate().filter(|(_, c)| **c == '…') {
        for n in [i.checked_sub(1).map(|j| chars[j]), chars.get(i + 1).copied()].into_iter().flatten() {
            assert!(
                !(n.is_ascii_digit() || matches!(n, '.' | ':' | '[' | ']')),
                "{what}: `…` beside {n:?} (an address cut?):\n{text}"
            );
        }
    }
}

/// Every request's client whole in its own lines (on its first line with
/// `first_line`), every line within `width`, no address cut.
fn clients_whole(text: &str, clients: &[(u64, String)], width: usize, first_line: bool, what: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "{what} at {width}: {} > {width}:\n{line}\n{text}",
            line.chars().count()
        );
    }
    no_address_cut(text, what);
    let blocks = blocks(text);
    assert_eq!(blocks.len(), clients.len(), "{what} at {width}: one block per request:\n{text}");
    for ((n, lines), (request, client)) in blocks.iter().zip(clients) {
        assert_eq!(n, request, "{what} at {width}:\n{text}");
        let shown = if first_line { &lines[..1] } else { &lines[..] };
        // whole: not followed by another character of an address
        let whole = |l: &&str| {
            l.match_indices(client.as_str()).any(|(at, _)| {
                let next = l[at + client.len()..].chars().next().unwrap_or(' ');
                !(next.is_ascii_hexdigit() || matches!(next, '.' | ':' | ']'))
            })
        };
        assert!(
            shown.iter().any(whole),
            "{what} at {width}: request {n}'s client {client} not whole:\n{text}"
        );
    }
}

/// The `:digits` after an address (a digit, `]` or `…`) in the table part of `text`.
fn shown_ports(text: &str) -> Vec<String> {
    let table = text.split("\n\n").next().unwrap();
    let chars: Vec<char> = table.chars().collect();
    let mut out = Vec::new();
    for i in 1..chars.len() {
        let before = chars[i - 1];
        if chars[i] == ':' && (before.is_ascii_digit() || before == ']' || before == '…') {
            let digits: String = chars[i + 1..].iter().take_while(|c| c.is_ascii_digit()).collect();
            let next = chars.get(i + 1 + digits.len()).copied().unwrap_or(' ');
            // an IPv6 group (`2001:db8`, `…:42]`) or a time (`05:29:32.1`) is not a port:
            // a port ends the endpoint
            if !digits.is_empty() && !next.is_ascii_hexdigit() && !matches!(next, ':' | '.' | ']') {
                out.push(digits);
            }
        }
    }
    out
}

fn check(dir: &Path, files: &[String], extra: &[&str], what: &str) {
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.extend(files.iter().cloned());
    let mut json_args = args.clone();
    json_args.extend(["--format".to_string(), "json".to_string()]);
    let json = run(dir, &json_args, None);
    let known = ports(&json);
    let clients = clients(&json);
    let piped = run(dir, &args, None);
    assert!(piped.lines().next().unwrap().contains("match"), "{what}: piped table keeps every column");
    for width in [80, 120] {
        let text = run(dir, &args, Some(width));
        clients_whole(&text, &clients, width, true, what);
        if !extra.contains(&"--names") {
            assert!(!table_part(&text).contains('…'), "{what} at {width}: nothing shortened:\n{text}");
        }
        // the compact columns: the number and the client first, the others on the line or below
        let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
        let compact = ["#", "time", "client", "service", "source", "reply", "outcome"];
        assert!(header.iter().all(|c| compact.contains(c)), "{what} at {width}:\n{text}");
        assert_eq!(header[..1], ["#"], "{what} at {width}:\n{text}");
        assert!(header.contains(&"client"), "{what} at {width}:\n{text}");
        for column in compact.iter().filter(|c| !header.contains(*c)) {
            if *column == "time" && !extra.contains(&"--tz") {
                continue;
            }
            let lead = format!("{column}: ");
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(&lead)),
                "{what} at {width}: {column}:\n{text}"
            );
        }
        let shown = shown_ports(&text);
        assert!(!shown.is_empty() || known.is_empty(), "{what}: no port shown:\n{text}");
        for p in shown {
            assert!(
                known.contains(&p),
                "{what} at {width}: port {p} is not a port of the report (cut?):\n{text}"
            );
        }
    }
}

#[test]
fn every_line_fits_80_and_120_columns_on_every_lab_scenario_and_no_port_is_cut() {
    for (name, files) in lab_scenarios() {
        check(&testdata("lab").join(&name), &files, &[], &name);
    }
}

#[test]
fn a_generated_set_and_named_addresses_fit_too() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_mix_set(dir.path(), 300);
    check(dir.path(), &files, &[], "mix-300");
    let names = testdata("names");
    let with_names: Vec<String> = ["pods.txt", "nodes.txt", "svc.txt"]
        .iter()
        .flat_map(|f| ["--names".to_string(), names.join(f).display().to_string()])
        .collect();
    let with: Vec<&str> = with_names.iter().map(String::as_str).chain(["--tz", "Europe/Berlin"]).collect();
    let lab = testdata("lab/masquerade-node");
    let files = ["decap.pcap", "egress.pcap", "backend.pcap"].map(String::from);
    check(&lab, &files, &with, "masquerade-node with names and --tz");
}

#[test]
fn every_client_address_is_whole_at_80_100_and_120_columns_with_and_without_columns() {
    let scenarios: [(&str, &[&str]); 3] = [
        ("reject", &["decap.pcap", "egress.pcap", "backend.pcap"]),
        ("ipv6", &["decap.pcap", "egress.pcap", "backend.pcap"]),
        // four points: a `tcpdump -i any` capture on the node between egress and backend
        ("any-node", &["decap.pcap", "egress.pcap", "node.pcap", "backend.pcap"]),
    ];
    let choices: [&[&str]; 5] = [
        &[],
        &["--columns", "all"],
        &["--columns", "request,hops,reply,outcome"],
        &["--columns", "request,service,outcome"],
        &["--columns", "request,outcome,match,hops"],
    ];
    for (name, files) in scenarios {
        let lab = testdata("lab").join(name);
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        let mut json = vec!["--format".to_string(), "json".into()];
        json.extend(files.iter().cloned());
        let clients = clients(&run(&lab, &json, None));
        assert!(!clients.is_empty(), "{name}");
        for choice in choices {
            let mut args: Vec<String> = choice.iter().map(|a| a.to_string()).collect();
            args.extend(files.iter().cloned());
            for width in [80, 100, 120] {
                let text = run(&lab, &args, Some(width));
                let what = format!("{name} {choice:?}");
                // without --columns the client has a column of its own, never moved
                clients_whole(&text, &clients, width, choice.is_empty(), &what);
                assert!(!table_part(&text).contains('…'), "{what} at {width}: nothing shortened:\n{text}");
            }
        }
    }
}

#[test]
fn explicit_columns_and_all_are_kept_on_a_terminal() {
    let lab = testdata("lab/reject");
    let files: Vec<String> = ["decap.pcap", "egress.pcap", "backend.pcap"].map(String::from).to_vec();
    let with = |cols: &str| {
        let mut a = vec!["--columns".to_string(), cols.to_string()];
        a.extend(files.iter().cloned());
        run(&lab, &a, Some(120))
    };
    let t = with("request,hops,reply");
    let header: Vec<&str> = t.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["#", "decap", "→", "egress", "→", "backend", "reply"], "{t}");
    // every column of `all`: on the request's line, or below it when the line is full
    let t = with("all");
    let header: Vec<&str> = t.lines().next().unwrap().split_whitespace().collect();
    for c in [
        "#", "proto", "service", "time", "decap", "backend", "source", "reply", "outcome", "match",
        "identity",
    ] {
        let below = format!("{c}: ");
        assert!(
            header.contains(&c) || t.lines().filter(|l| l.trim_start().starts_with(&below)).count() == 5,
            "{c} missing in --columns all:\n{t}"
        );
    }
    assert!(header.starts_with(&["#"]) && header.contains(&"decap"), "{t}");
}

#[test]
fn a_real_terminal_is_fitted_to_columns_and_a_file_never_is() {
    let lab = testdata("lab/reject");
    let files = "decap.pcap egress.pcap backend.pcap";
    // a pseudo-terminal (`script` from util-linux) COLUMNS=80 wide
    let script = ["/usr/bin/script", "/bin/script"].into_iter().find(|p| Path::new(p).exists());
    match script {
        None => eprintln!("skipped the pseudo-terminal half: no `script` to make a pseudo-terminal"),
        Some(script) => {
            let cmd = format!("{} -q --color never {files}", env!("CARGO_BIN_EXE_tuplecorr"));
            let out = Command::new(script)
                .current_dir(&lab)
                .args(["-qec", &cmd, "/dev/null"])
                .env("COLUMNS", "80")
                .env_remove(WIDTH_VAR)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
            let header: Vec<&str> = text.lines().next().unwrap_or("").split_whitespace().collect();
            assert_eq!(header[..3], ["#", "client", "service"], "{text}");
            assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
            // the rejected client, whole, on its request's line
            assert!(text.lines().any(|l| l.starts_with("2  198.18.90.43:40002  ")), "{text}");
        }
    }
    // -o FILE: the full table, whatever the width variable says
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("t.txt");
    let st = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .current_dir(&lab)
        .args(["-q", "-o"])
        .arg(&report)
        .args(files.split(' '))
        .env(WIDTH_VAR, "80")
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&report).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header.last(), Some(&"match"), "{text}");
    assert!(text.lines().next().unwrap().chars().count() > 80);
}
