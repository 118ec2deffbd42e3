//! Issue 14 on the lab's real captures: the merged pcapng checked with
//! Wireshark's own tshark, and the HTML report loaded in a real headless
//! Chromium. Each test skips with one line when its tool is missing.

use crate::lab_verdicts::{config_for, expected, scenarios};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tuplecorr::read::Source;

/// `LABEL=PATH` arguments of a lab scenario, in path order.
fn capture_args(dir: &Path) -> Vec<String> {
    config_for(dir, &expected(dir))
        .captures
        .into_iter()
        .map(|c| match c.source {
            Source::Path(p) => format!("{}={}", c.label, p.display()),
            Source::Stdin => unreachable!("lab captures are files"),
        })
        .collect()
}

/// Runs tuplecorr with the scenario's captures and `extra`; panics unless it exits 0.
fn tuplecorr(dir: &Path, extra: &[&str]) {
    let mut args = capture_args(dir);
    args.push("-q".into());
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(&args).output().unwrap();
    assert!(out.status.success(), "tuplecorr {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Runs tshark; returns stdout, and stderr without its "running as root" note.
fn tshark(args: &[&str]) -> (String, String) {
    let out = Command::new("tshark").args(args).output().expect("tshark runs");
    assert!(out.status.success(), "tshark {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("Running as user") && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// `1796013004.669911000` → ns, exactly.
fn epoch_ns(text: &str) -> i64 {
    let (s, frac) = text.split_once('.').unwrap_or((text, "0"));
    let frac = format!("{frac:0<9}");
    s.parse::<i64>().unwrap() * 1_000_000_000 + frac[..9].parse::<i64>().unwrap()
}

/// The request number in a tuplecorr comment (`tuplecorr request 17 at egress: ...`).
fn request_of(comment: &str) -> Option<(u64, &str)> {
    let rest = comment.strip_prefix("tuplecorr request ")?;
    let (n, rest) = rest.split_once(" at ")?;
    Some((n.parse().ok()?, rest.split_once(':')?.0))
}

#[test]
fn merged_pcapng_reads_clean_in_tshark_with_each_requests_packets_and_corrected_times() {
    if !have("tshark") {
        eprintln!("skipped: tshark is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for dir in scenarios() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let (json, pcapng) =
            (tmp.path().join(format!("{name}.json")), tmp.path().join(format!("{name}.pcapng")));
        tuplecorr(&dir, &["-o", json.to_str().unwrap(), "--pcapng", pcapng.to_str().unwrap()]);
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let labels: Vec<&str> =
            report["captures"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
        let pcap = pcapng.to_str().unwrap();
        let (fields, warnings) = tshark(&[
            "-r",
            pcap,
            "-T",
            "fields",
            "-E",
            "separator=\t",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.time_epoch",
            "-e",
            "frame.comment",
            "-e",
            "icmp.type",
            "-e",
            "icmpv6.type",
        ]);
        assert_eq!(warnings, "", "{name}: tshark warned");
        // Every capture's packets are there, under the capture's label.
        let total: u64 =
            report["captures"].as_array().unwrap().iter().map(|c| c["packets"].as_u64().unwrap()).sum();
        assert_eq!(fields.lines().count() as u64, total, "{name}: every packet of every capture");
        // Per request: annotated packets without ICMP errors, and with them.
        let mut counted: BTreeMap<u64, u64> = BTreeMap::new();
        let mut annotated: BTreeMap<u64, u64> = BTreeMap::new();
        let mut first_at: BTreeMap<(u64, String), i64> = BTreeMap::new();
        let mut last_ns = i64::MIN;
        for line in fields.lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            assert!(labels.contains(&cols[0]), "{name}: interface {} is no capture label", cols[0]);
            let t = epoch_ns(cols[1]);
            assert!(t >= last_ns, "{name}: merged in corrected-time order");
            last_ns = t;
            let Some((n, at)) = request_of(cols[2]) else { continue };
            assert_eq!(at, cols[0], "{name}: the comment names the packet's capture point");
            // The outer ICMP header's type (tshark lists the quoted packet's too: `3,0`).
            let outer = |c: &str| c.split(',').next().unwrap_or("").to_string();
            let icmp_error = matches!(outer(cols[3]).as_str(), "3" | "4" | "5" | "11" | "12")
                || matches!(outer(cols[4]).as_str(), "1" | "2" | "3" | "4");
            if !icmp_error {
                *counted.entry(n).or_default() += 1;
            }
            *annotated.entry(n).or_default() += 1;
            first_at.entry((n, at.to_string())).and_modify(|v| *v = (*v).min(t)).or_insert(t);
        }
        for r in report["requests"].as_array().unwrap() {
            let n = r["request"].as_u64().unwrap();
            let mut want = 0;
            for h in r["captures"].as_array().unwrap().iter().filter(|h| h["seen"].as_bool().unwrap()) {
                want += h["packets_to_server"].as_u64().unwrap() + h["packets_to_client"].as_u64().unwrap();
                // The flow's first packet at this point, at its corrected time to the ns.
                let label = h["label"].as_str().unwrap().to_string();
                let time = tuplecorr::time::parse_rfc3339(h["time"].as_str().unwrap()).unwrap();
                // A later point of a split capture: written at the file's first point's
                // clock offset, while correlate estimates one per point (a known gap).
                if !label.contains("(out ") {
                    assert_eq!(
                        first_at.get(&(n, label.clone())),
                        Some(&time),
                        "{name}: request {n} at {label}"
                    );
                }
                assert!(first_at.contains_key(&(n, label.clone())), "{name}: request {n} at {label}");
            }
            assert_eq!(counted.get(&n).copied().unwrap_or(0), want, "{name}: packets of request {n}");
        }
        // The display filter of docs/guide/pictures.md selects exactly those (first and last request).
        let requests = report["requests"].as_array().unwrap();
        for r in [requests.first(), requests.last()].into_iter().flatten() {
            let n = r["request"].as_u64().unwrap();
            let filter = format!("frame.comment contains \"request {n} at \"");
            let (out, _) = tshark(&["-r", pcap, "-Y", &filter]);
            assert_eq!(out.lines().count() as u64, annotated[&n], "{name}: -Y for request {n}");
        }
    }
}

#[test]
fn merged_pcapng_keeps_link_types_names_points_and_can_hold_only_requests() {
    if !have("tshark") {
        eprintln!("skipped: tshark is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/lab/any-node");
    let (json, all, only) =
        (tmp.path().join("r.json"), tmp.path().join("all.pcapng"), tmp.path().join("only.pcapng"));
    tuplecorr(&dir, &["-o", json.to_str().unwrap(), "--pcapng", all.to_str().unwrap()]);
    tuplecorr(&dir, &["--format", "json", "--pcapng", only.to_str().unwrap(), "--pcapng-only-requests"]);
    let (ifaces, _) = tshark(&[
        "-r",
        all.to_str().unwrap(),
        "-T",
        "fields",
        "-e",
        "frame.interface_name",
        "-e",
        "frame.interface_description",
        "-e",
        "frame.encap_type",
    ]);
    let mut seen: BTreeMap<String, (String, String)> = BTreeMap::new();
    for line in ifaces.lines() {
        let c: Vec<&str> = line.split('\t').collect();
        seen.insert(c[0].to_string(), (c[1].to_string(), c[2].to_string()));
    }
    // node.pcap (`tcpdump -i any`) is two points, each its own interface.
    assert_eq!(seen.keys().collect::<Vec<_>>(), ["backend", "decap", "egress", "node(in)", "node(out)"]);
    // node.pcap is Linux cooked v2 (WTAP encap 210); the others Ethernet (1) or raw IP.
    for node in ["node(in)", "node(out)"] {
        assert_eq!(seen[node].1, "210", "{seen:?}");
        assert!(seen[node].0.contains("node.pcap") && seen[node].0.contains("clock offset"), "{seen:?}");
    }
    let (frames, _) = tshark(&["-r", only.to_str().unwrap(), "-T", "fields", "-e", "frame.comment"]);
    assert!(frames.lines().count() > 0);
    assert!(frames.lines().all(|c| c.starts_with("tuplecorr request ")), "only annotated packets");
    let (annotated_in_all, _) =
        tshark(&["-r", all.to_str().unwrap(), "-Y", "frame.comment contains \"tuplecorr request\""]);
    assert_eq!(frames.lines().count(), annotated_in_all.lines().count());
}

/// The Chromium binary, or None (the test then skips).
/// A headless browser for a test: its command, a temporary folder, a profile
/// in it, and the lab's captures.
struct Browser {
    browser: String,
    tmp: tempfile::TempDir,
    profile: PathBuf,
    lab: PathBuf,
}

impl Browser {
    /// None where chromium is not installed.
    fn find() -> Option<Browser> {
        let browser = chromium()?;
        let tmp = tempfile::tempdir().unwrap();
        let profile = tmp.path().join("profile");
        let lab = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/lab");
        Some(Browser { browser, tmp, profile, lab })
    }
}

fn chromium() -> Option<String> {
    let candidates = [
        std::env::var("TUPLECORR_CHROMIUM").unwrap_or_default(),
        "chromium".into(),
        "chromium-browser".into(),
    ];
    candidates.into_iter().filter(|c| !c.is_empty()).find(|c| have(c))
}

/// Loads `page#hash` in headless Chromium and returns the DOM after the script ran.
fn dump_dom(browser: &str, page: &Path, hash: &str, profile: &Path) -> String {
    dump_dom_in(browser, page, hash, profile, "1200,900")
}

/// [`dump_dom`] in a window of `size` (`WIDTH,HEIGHT`).
fn dump_dom_in(browser: &str, page: &Path, hash: &str, profile: &Path, size: &str) -> String {
    let url = format!("file://{}#{hash}", page.display());
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000"])
        .arg(format!("--window-size={size}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium: {}", String::from_utf8_lossy(&out.stderr));
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script ran to its end:\n{}",
        &dom[..dom.len().min(2000)]
    );
    dom
}

/// The text of the element with this id (first text run after its start tag).
fn text_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id}"));
    let from = at + dom[at..].find('>').unwrap() + 1;
    &dom[from..from + dom[from..].find('<').unwrap()]
}

/// The request numbers of the table's rows, in order.
fn table_rows(dom: &str) -> Vec<u64> {
    let table = &dom[dom.find("<table id=\"table\">").unwrap()..];
    let body = &table[table.find("<tbody>").unwrap()..];
    let body = &body[..body.find("</tbody>").unwrap()];
    body.split("<tr data-request=\"").skip(1).map(|s| s[..s.find('"').unwrap()].parse().unwrap()).collect()
}

/// The part of the DOM that is the ladder (the detail's svg).
fn ladder(dom: &str) -> &str {
    let from = dom.find("<svg class=\"ladder\"").expect("a ladder is drawn");
    &dom[from..from + dom[from..].find("</svg>").unwrap()]
}

#[test]
fn html_report_in_headless_chromium_counts_filters_and_draws_ladders() {
    let Some(Browser { browser, tmp, profile, lab }) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    // reject: an ICMP error and a RST forged between egress and backend.
    let page = tmp.path().join("reject.html");
    let json = tmp.path().join("reject.json");
    tuplecorr(&lab.join("reject"), &["-o", page.to_str().unwrap()]);
    tuplecorr(&lab.join("reject"), &["-o", json.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let requests = report["requests"].as_array().unwrap();
    let dom = dump_dom(&browser, &page, "request=2", &profile);
    assert_eq!(text_of(&dom, "count"), format!("({} of {})", requests.len(), requests.len()));
    assert_eq!(table_rows(&dom), requests.iter().map(|r| r["request"].as_u64().unwrap()).collect::<Vec<_>>());
    let icmp = requests.iter().find(|r| r["request"] == 2).unwrap();
    assert_eq!(icmp["outcome"]["kind"], "icmp-error");
    let l = ladder(&dom);
    for label in ["decap", "egress", "backend"] {
        assert!(l.contains(&format!(">{label}</text>")), "point {label} labelled");
    }
    assert!(l.contains(">198.18.90.43:40002</text>"), "the tuple at a point");
    // The SYN goes decap -> egress and stops before backend; the ICMP error enters
    // between egress and backend and runs back to decap.
    assert!(l.contains("data-kind=\"SYN\" data-dir=\"to-server\""));
    assert!(l.contains("data-from=\"decap\" data-to=\"egress\""));
    assert!(l.contains("class=\"small bad lost-label\">not seen at next point</text>"));
    assert!(l.contains(">ICMP 3/13 from 198.18.10.1</text>"));
    assert!(l.contains("data-from=\"between egress and backend\" data-to=\"egress\""));
    assert!(l.contains("data-from=\"egress\" data-to=\"decap\""));
    assert_eq!(l.matches("marker-end=").count(), 3, "SYN decap->egress, ICMP entered->egress, egress->decap");
    // The filter narrows the table to the ICMP errors.
    let dom = dump_dom(&browser, &page, "outcome=icmp-error", &profile);
    let want: Vec<u64> = (requests.iter())
        .filter(|r| r["outcome"]["kind"] == "icmp-error")
        .map(|r| r["request"].as_u64().unwrap())
        .collect();
    assert!(want.len() < requests.len());
    assert_eq!(table_rows(&dom), want);
    assert_eq!(text_of(&dom, "count"), format!("({} of {})", want.len(), requests.len()));
    // A text filter: one client address.
    let dom = dump_dom(&browser, &page, "q=198.18.90.43", &profile);
    let with: Vec<u64> = (requests.iter())
        .filter(|r| r.to_string().contains("198.18.90.43"))
        .map(|r| r["request"].as_u64().unwrap())
        .collect();
    assert_eq!(table_rows(&dom), with);

    // masquerade-node: the boundary where the source changed is highlighted, before → after.
    let page = tmp.path().join("masq.html");
    tuplecorr(&lab.join("masquerade-node"), &["-o", page.to_str().unwrap()]);
    let dom = dump_dom(&browser, &page, "request=1", &profile);
    let l = ladder(&dom);
    assert!(l.contains("class=\"changed\""));
    let change = l.split("class=\"change\">").nth(1).expect("a change label");
    assert!(change.starts_with("source 198.18.90.42:"), "{}", &change[..80.min(change.len())]);
    assert!(change[..change.find('<').unwrap()].contains(" → 198.19.3.17:"));
    assert!(l.contains("data-kind=\"SYN-ACK\" data-dir=\"to-client\""));

    // --names: the page shows names beside addresses, in the table and the ladder.
    let page_names = tmp.path().join("masq-names.html");
    let names = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/names");
    let (pods, nodes) = (names.join("pods.txt"), names.join("nodes.txt"));
    let named = ["--names", pods.to_str().unwrap(), "--names", nodes.to_str().unwrap()];
    tuplecorr(&lab.join("masquerade-node"), &[&named[..], &["-o", page_names.to_str().unwrap()]].concat());
    let dom = dump_dom(&browser, &page_names, "request=1", &profile);
    assert!(dom.contains("vpn/backend-vpn-0 (198.18.90.42:40001)"), "names in the table");
    let change = ladder(&dom).split("class=\"change\">").nth(1).expect("a change label");
    let change = &change[..change.find('<').unwrap()];
    assert_eq!(change, "source vpn/backend-vpn-0 (198.18.90.42:40001) → node-a (198.19.3.17:40001)");

    // rp-filter: the reply is lost between egress and decap: its arrow stops.
    let page_rp = tmp.path().join("rp.html");
    tuplecorr(&lab.join("rp-filter"), &["-o", page_rp.to_str().unwrap()]);
    let dom = dump_dom(&browser, &page_rp, "request=1", &profile);
    let l = ladder(&dom);
    let reply = &l[l.find("data-kind=\"SYN-ACK\" data-dir=\"to-client\"").expect("a SYN-ACK band")..];
    let reply = &reply[..reply.find("</g>").unwrap()];
    assert!(reply.contains("data-from=\"backend\" data-to=\"egress\""));
    assert!(reply.contains("lost-label"), "the reply stops before decap");
    assert!(!reply.contains("data-to=\"decap\""));

    // Capture-derived text stays text: a label that is markup (labels hold no `/`).
    let page_bad = tmp.path().join("bad.html");
    let mut args = capture_args(&lab.join("reject"));
    args[0] = format!("<b>bold<script>x{}", &args[0][args[0].find('=').unwrap()..]);
    args.extend(["-q".into(), "-o".into(), page_bad.display().to_string()]);
    assert!(Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(&args).status().unwrap().success());
    let dom = dump_dom(&browser, &page_bad, "request=1", &profile);
    assert!(!dom.contains("<b>bold"), "no element made of a label");
    assert!(dom.contains(">&lt;b&gt;bold&lt;script&gt;x</"), "the label shown as text");

    // A screenshot renders.
    let png = screenshot(&browser, &profile, &format!("file://{}#request=1", page.display()), (1200, 900));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a real picture, {} bytes", png.len());
}

/// A `data-NAME="N"` number of the page's body (what its script measured).
fn body_number(dom: &str, name: &str) -> i64 {
    let body = &dom[dom.find("<body").unwrap()..];
    let body = &body[..body.find('>').unwrap()];
    let at = body.find(&format!("data-{name}=\"")).unwrap_or_else(|| panic!("no data-{name} in {body}"));
    let v = &body[at + name.len() + 7..];
    v[..v.find('"').unwrap()].parse().unwrap()
}

/// The first request of a JSON report that did not go through cleanly (the
/// page's "first failure"), else the first request.
fn first_failure_or_first(report: &Value) -> u64 {
    let requests = report["requests"].as_array().unwrap();
    let failed = |r: &&Value| {
        r["reply"]["path"] != "same-path"
            || ["reset", "icmp-error", "no-reply", "data-stopped", "handshake-only"]
                .contains(&r["outcome"]["kind"].as_str().unwrap())
    };
    requests.iter().find(failed).or(requests.first()).unwrap()["request"].as_u64().unwrap()
}

#[test]
fn html_first_screen_opens_on_the_first_failure_with_its_ladder_above_the_fold() {
    let Some(Browser { browser, tmp, profile, lab }) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    // a failure late in the run (no-return-route: all), among completed ones (reject: 2 of 5),
    // none (masquerade-node), many requests (concurrent), five points (any-node)
    let cases = [
        ("reject", Some(2), true),
        ("no-return-route", Some(1), true),
        ("masquerade-node", Some(1), false),
        ("concurrent", None, false),
        ("any-node", Some(1), false),
        ("pmtu-blackhole", None, true),
    ];
    for (scenario, want, failure) in cases {
        let page = tmp.path().join(format!("{scenario}.html"));
        let json = tmp.path().join(format!("{scenario}.json"));
        tuplecorr(&lab.join(scenario), &["-o", page.to_str().unwrap()]);
        tuplecorr(&lab.join(scenario), &["-o", json.to_str().unwrap()]);
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let first = first_failure_or_first(&report);
        if let Some(want) = want {
            assert_eq!(first, want, "{scenario}: the lab's first failure");
        }
        let dom = dump_dom_in(&browser, &page, "", &profile, "1280,800");
        assert_eq!(body_number(&dom, "selected") as u64, first, "{scenario}: the page opens on it");
        let heading = dom[dom.find("id=\"detail\"").unwrap()..].split("<h3>").nth(1).unwrap();
        let heading = &heading[..heading.find('<').unwrap()];
        let why = if failure { "the first failure" } else { "the first request" };
        assert!(
            heading.starts_with(&format!("Request {first} (")) && heading.contains(why),
            "{scenario}: {}",
            &heading[..heading.len().min(80)]
        );
        // its ladder within the first screen: whole when it is short, else its top 300 px
        let (top, bottom, screen) = (
            body_number(&dom, "ladder-top"),
            body_number(&dom, "ladder-bottom"),
            body_number(&dom, "viewport-height"),
        );
        assert!(screen >= 500, "{scenario}: a viewport of {screen} px");
        assert!(
            top > 0 && top + 300.min(bottom - top) <= screen,
            "{scenario}: ladder {top}..{bottom} in a {screen} px screen"
        );
        assert!(
            dom.contains("<tr data-request=\"1\" tabindex=\"0\" title=\"draw the ladder of request 1\""),
            "{scenario}: rows say they open a ladder"
        );
        let selected = dom.split("<tr ").filter(|t| t.contains("class=\"selected\"")).count();
        assert_eq!(selected, 1, "{scenario}: one row marked");
        assert!(dom.contains("id=\"hint\""));
        // the summary: patterns with counts first, the text report below, collapsed
        let patterns = &dom[dom.find("<ul id=\"patterns\">").unwrap()..];
        let patterns = &patterns[..patterns.find("</ul>").unwrap()];
        let counts: Vec<u64> = patterns
            .split("<span class=\"n\">")
            .skip(1)
            .map(|p| p[..p.find('<').unwrap()].parse().unwrap())
            .collect();
        let total = report["requests"].as_array().unwrap().len() as u64;
        assert!(!counts.is_empty() && counts.len() <= 6, "{scenario}: {counts:?}");
        if !dom.contains("more patterns in the full summary") {
            assert_eq!(counts.iter().sum::<u64>(), total, "{scenario}: every request in a pattern");
        }
        assert!(patterns.contains("<li class=\"bad\"") == failure, "{scenario}: a red pattern for a failure");
        let details = dom.find("<details id=\"summary\">").expect("the full summary collapsed (not open)");
        assert!(dom.find("id=\"summary-text\"").unwrap() > details);
        assert!(
            dom.find("id=\"detail\"").unwrap() < dom.find("<table id=\"table\">").unwrap(),
            "the ladder above the table"
        );
    }
    // #request=N still opens N (and says nothing of failures)
    let page = tmp.path().join("reject.html");
    let dom = dump_dom_in(&browser, &page, "request=5", &profile, "1280,800");
    assert_eq!(body_number(&dom, "selected"), 5);
    // the screenshot of the first screen: 1280 x 800, a real picture (PNG IHDR width and height)
    let png = screenshot(&browser, &profile, &format!("file://{}", page.display()), (1280, 800));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "a real picture, {} bytes", png.len());
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (1280, 800), "the screenshot is the first screen");
}

/// A headless browser's screenshot of `url` in a window of `size`, as PNG bytes.
fn screenshot(browser: &str, profile: &std::path::Path, url: &str, size: (u32, u32)) -> Vec<u8> {
    let shot = profile.with_extension("shot.png");
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
        .arg(format!("--window-size={},{}", size.0, size.1))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read(&shot).unwrap()
}

/// The exchange marks of a ladder in drawing (time) order: (kind, n, status).
fn exchange_marks(ladder: &str) -> Vec<(String, u64, Option<u64>)> {
    let attr = |tag: &str, name: &str| {
        let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
        Some(tag[at..at + tag[at..].find('"')?].to_string())
    };
    (ladder.split("<g class=\"exchange ").skip(1))
        .map(|g| {
            let tag = &g[..g.find('>').unwrap()];
            let kind = tag[..tag.find('"').unwrap()].to_string();
            (
                kind,
                attr(tag, "data-n").unwrap().parse().unwrap(),
                attr(tag, "data-status").map(|s| s.parse().unwrap()),
            )
        })
        .collect()
}

/// The detail's table of `class` (`exchanges` or `exchanges-seen`): its body rows'
/// opening tags and cell texts.
fn detail_table(dom: &str, class: &str) -> Option<Vec<(String, Vec<String>)>> {
    let from = dom.find(&format!("<table class=\"{class}\">"))?;
    let table = &dom[from..from + dom[from..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    let rows = body.split("<tr").skip(1).map(|tr| {
        let tag = tr[..tr.find('>').unwrap()].to_string();
        let cells = tr.split("<td>").skip(1).map(|c| c[..c.find('<').unwrap()].to_string()).collect();
        (tag, cells)
    });
    Some(rows.collect())
}

/// The text of the page's `<script type="application/json" id=ID>` block.
fn html_block<'a>(html: &'a str, id: &str) -> &'a str {
    let start = format!("<script type=\"application/json\" id=\"{id}\">");
    let from = html.find(&start).unwrap() + start.len();
    &html[from..from + html[from..].find("</script>").unwrap()]
}

/// What the page must show of a request's `exchanges`, checked against the JSON.
fn check_exchanges_drawn(dom: &str, r: &Value, what: &str) {
    let ex = &r["exchanges"];
    let list = ex["list"].as_array().unwrap();
    let at = ex["at"].as_str().unwrap();
    let marks = exchange_marks(ladder(dom));
    // Each listed exchange has its request mark (plain or unanswered), in n order.
    let asked: Vec<u64> = marks.iter().filter(|m| m.0 != "response").map(|m| m.1).collect();
    let want: Vec<u64> = list.iter().map(|e| e["n"].as_u64().unwrap()).collect();
    assert_eq!(asked, want, "{what}: a request mark per listed exchange");
    // Responses: one per status, drawn in the order of the list.
    let statuses: Vec<u64> = marks.iter().filter(|m| m.0 == "response").map(|m| m.2.unwrap()).collect();
    let want: Vec<u64> = list.iter().filter_map(|e| e["status"].as_u64()).collect();
    assert_eq!(statuses, want, "{what}: statuses in order");
    let unanswered: Vec<u64> = marks.iter().filter(|m| m.0 == "unanswered").map(|m| m.1).collect();
    let want: Vec<u64> =
        list.iter().filter(|e| e.get("status").is_none()).map(|e| e["n"].as_u64().unwrap()).collect();
    assert_eq!(unanswered, want, "{what}: the exchanges without a response drawn as unanswered");
    if let Some(n) = ex["unanswered"]["n"].as_u64() {
        assert!(unanswered.contains(&n), "{what}: the first unanswered, {n}, is marked");
        assert!(ladder(dom).contains(&format!(": no response read at {at}")), "{what}");
    }
    // The table: n, method, target, status in list order; unanswered rows marked.
    let rows = detail_table(dom, "exchanges").unwrap_or_else(|| panic!("{what}: an exchange table"));
    assert_eq!(rows.len(), list.len(), "{what}");
    for ((tag, cells), e) in rows.iter().zip(list) {
        let status = e["status"].as_u64().map_or("no response read".to_string(), |s| s.to_string());
        let want = [
            e["n"].to_string(),
            e["method"].as_str().unwrap().into(),
            e["target"].as_str().unwrap().into(),
            status,
        ];
        assert_eq!(cells[..4], want, "{what}");
        assert_eq!(tag.contains("class=\"unanswered\""), e.get("status").is_none(), "{what}: {tag}");
    }
    // The counts per capture, `N+` where the capture could not read it whole.
    let seen = detail_table(dom, "exchanges-seen").unwrap();
    assert_eq!(seen.len(), ex["seen"].as_array().unwrap().len(), "{what}: a row per capture that read it");
    for ((_, cells), s) in seen.iter().zip(ex["seen"].as_array().unwrap()) {
        let plus = if s["complete"] == true { "" } else { "+" };
        let want = [
            s["at"].as_str().unwrap().to_string(),
            format!("{}{plus}", s["requests"]),
            format!("{}{plus}", s["responses"]),
        ];
        assert_eq!(cells[..3], want, "{what}");
    }
    let summary = text_of(dom, "exchanges-summary");
    let least = if ex["complete"] == true { "" } else { "at least " };
    assert!(
        summary.starts_with(&format!(
            "At {at}: {least}{} exchanges, {least}{} answered",
            ex["count"], ex["answered"]
        )),
        "{what}: {summary}"
    );
    assert!(!summary.contains("all answered"), "{what}: {summary}");
}

#[test]
fn html_shows_http_exchanges_in_the_ladder_and_the_detail() {
    let Some(Browser { browser, tmp, profile, lab }) = Browser::find() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    // keepalive: every connection carries several exchanges, some left unanswered.
    let (page, json) = (tmp.path().join("keepalive.html"), tmp.path().join("keepalive.json"));
    tuplecorr(&lab.join("keepalive"), &["-o", page.to_str().unwrap()]);
    tuplecorr(&lab.join("keepalive"), &["-o", json.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let with: Vec<&Value> = (report["requests"].as_array().unwrap().iter())
        .filter(|r| r["exchanges"]["list"].as_array().is_some_and(|l| l.len() > 1))
        .collect();
    assert!(
        with.iter().any(|r| r["exchanges"]["unanswered"].is_object()),
        "keepalive has an unanswered exchange"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let ladders: Value = serde_json::from_str(html_block(&html, "tc-ladder")).unwrap();
    for r in &with {
        let n = r["request"].as_u64().unwrap();
        let dom = dump_dom(&browser, &page, &format!("request={n}"), &profile);
        check_exchanges_drawn(&dom, r, &format!("keepalive request {n}"));
        // Each mark at its time after the ladder's t0 (capture 1's clock, as its events):
        // a request at `time`, its response `after_ms` later, in time order.
        let lad = ladders["requests"].as_array().unwrap().iter().find(|l| l["request"] == n).unwrap();
        let t0 = lad["t0"].as_i64().unwrap();
        let mut want: Vec<String> = Vec::new();
        let mut times: Vec<i64> = Vec::new();
        for e in r["exchanges"]["list"].as_array().unwrap() {
            let at = tuplecorr::time::parse_rfc3339(e["time"].as_str().unwrap()).unwrap() - t0;
            times.push(at);
            if let Some(after) = e["after_ms"].as_f64() {
                times.push(at + (after * 1e6).round() as i64);
            }
        }
        times.sort();
        want.extend(times.iter().map(|t| format!("+{:.3} ms", *t as f64 / 1e6)));
        let drawn: Vec<String> = ladder(&dom)
            .split("<tspan class=\"time\">")
            .skip(1)
            .map(|t| t[..t.find('<').unwrap()].trim().to_string())
            .collect();
        assert_eq!(drawn, want, "keepalive request {n}: marks at their times, in time order");
    }

    // A connection not read whole: the counts are lower bounds, the page says "at least";
    // sixteen listed of more: sixteen drawn and a note. (The page's findings edited.)
    let start = "<script type=\"application/json\" id=\"tc-findings\">";
    let from = html.find(start).unwrap() + start.len();
    let to = from + html[from..].find("</script>").unwrap();
    let mut findings: Value = serde_json::from_str(&html[from..to]).unwrap();
    let r = &mut findings["requests"][0];
    let n = r["request"].as_u64().unwrap();
    let ex = &mut r["exchanges"];
    let first = ex["list"][0].clone();
    ex["list"] = (1..=16u64)
        .map(|k| {
            let mut e = first.clone();
            e["n"] = k.into();
            e["status"] = (200 + k).into();
            e
        })
        .collect();
    ex["count"] = 20.into();
    ex["answered"] = 16.into();
    ex["complete"] = false.into();
    ex["seen"][0]["complete"] = false.into();
    let r = findings["requests"][0].clone();
    let edited = tmp.path().join("lower-bound.html");
    let text = serde_json::to_string(&findings).unwrap().replace('<', "\\u003c");
    std::fs::write(&edited, format!("{}{text}{}", &html[..from], &html[to..])).unwrap();
    let dom = dump_dom(&browser, &edited, &format!("request={n}"), &profile);
    check_exchanges_drawn(&dom, &r, "a lower bound");
    assert_eq!(exchange_marks(ladder(&dom)).len(), 32, "16 requests and 16 responses drawn");
    assert!(ladder(&dom).contains(">exchanges after the first 16 are not drawn"));
    assert!(dom.contains("<td>no: counts are lower bounds</td>"));

    // masquerade-node: one answered exchange per connection, no `exchanges`: no table, no marks.
    let (page, json) = (tmp.path().join("masq.html"), tmp.path().join("masq.json"));
    tuplecorr(&lab.join("masquerade-node"), &["-o", page.to_str().unwrap()]);
    tuplecorr(&lab.join("masquerade-node"), &["-o", json.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let plain = (report["requests"].as_array().unwrap().iter())
        .find(|r| r["app"].is_object() && r.get("exchanges").is_none())
        .expect("a request with app and without exchanges");
    let n = plain["request"].as_u64().unwrap();
    let dom = dump_dom(&browser, &page, &format!("request={n}"), &profile);
    assert!(dom.contains("Evidence of each match"), "the detail is drawn");
    assert!(detail_table(&dom, "exchanges").is_none() && !dom.contains("<h3>HTTP/1.x exchanges</h3>"));
    assert!(exchange_marks(ladder(&dom)).is_empty());
}
