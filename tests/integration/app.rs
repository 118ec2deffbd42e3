//! Application facts end to end (issue 32, item 2): what the first bytes of a
//! request say — an HTTP request line, `Host` and status, a TLS ClientHello's
//! SNI and ALPN, a DNS question and rcode — in JSON and CSV, on the lab's
//! real captures, on a real capture between two network namespaces (`testdata/edge/app-netns.pcap`, made by `scripts/app-capture.sh`) and
//! on the corpus's real traffic (`TUPLECORR_CORPUS`), each checked by tshark.

use crate::lab_verdicts::{expected, labels, run, scenarios};
use crate::util::{require_corpus, testdata};
use serde_json::{json, Value};

/// Every lab request whose client stream at capture 1 is an HTTP request
/// names its marker as the target (the lab's clients request `/MARKER`), with
/// the method, `Host` and, where the response came back, its status, taken
/// at capture 1.
#[test]
fn lab_http_requests_name_their_target_host_and_status() {
    let mut checked = 0;
    // keepalive's clients request other targets: its exchanges are checked below.
    for dir in scenarios().into_iter().filter(|d| !d.ends_with("keepalive")) {
        let (exp, found) = run(&dir);
        let first = labels(&dir, &exp)[0].clone();
        for q in &found.requests {
            let Some(app) = &q.app else { continue };
            let marker = (exp["requests"].as_array().unwrap().iter())
                .find(|r| r["captures"][&first]["client"].as_str() == q.captures[0].client.as_deref())
                .and_then(|r| r["marker"].as_str().map(str::to_string));
            let Some(marker) = marker else { continue };
            assert_eq!(app.protocol.to_string_lossy(), "http", "{}: {q:?}", dir.display());
            assert_eq!(app.target.as_deref(), Some(format!("/{marker}").as_str()), "{}", dir.display());
            assert!(matches!(app.method.as_deref(), Some("GET" | "POST")), "{}", dir.display());
            assert_eq!(app.host.as_deref(), Some("backend"), "{}", dir.display());
            assert_eq!(app.at, first);
            if q.outcome.kind == tuplecorr::verdict::OutcomeKind::Completed
                && q.proto == tuplecorr::verdict::Proto::Tcp
            {
                assert_eq!(app.status, Some(200), "{} {marker}", dir.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} lab requests with an HTTP request");
}

/// Issue 32, item 1, on real HTTP/1.1 keep-alive and pipelined connections
/// (`keepalive`): every connection's exchange count, statuses in order and
/// first unanswered exchange at decap are what the client logged
/// (`exchanges.json`), and the response the node dropped is read at backend
/// only.
#[test]
fn every_keep_alive_connection_reports_its_exchanges_as_the_client_saw_them() {
    let dir = testdata("lab").join("keepalive");
    let (_, found) = run(&dir);
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("exchanges.json")).unwrap()).unwrap();
    let conns = truth.as_array().unwrap();
    assert_eq!(conns.len(), 8);
    for c in conns {
        let client = format!("{}:{}", c["client"][0].as_str().unwrap(), c["client"][1]);
        let q = (found.requests.iter())
            .find(|q| q.captures[0].client.as_deref() == Some(client.as_str()))
            .unwrap_or_else(|| panic!("no request from {client}"));
        let x = q.exchanges.as_ref().unwrap_or_else(|| panic!("{client}: no exchanges"));
        let want = c["exchanges"].as_array().unwrap();
        assert_eq!((x.at.as_str(), x.count, x.complete), ("decap", want.len() as u32, true), "{client}");
        let statuses: Vec<Option<u16>> = x.list.iter().map(|e| e.status).collect();
        let truth_statuses: Vec<Option<u16>> =
            want.iter().map(|e| e["status"].as_u64().map(|s| s as u16)).collect();
        assert_eq!(statuses, truth_statuses, "{client}");
        let targets: Vec<&str> = x.list.iter().map(|e| e.target.as_str()).collect();
        let truth_targets: Vec<&str> = want.iter().map(|e| e["target"].as_str().unwrap()).collect();
        assert_eq!(targets, truth_targets, "{client}");
        let first_unanswered =
            want.iter().find(|e| e["status"].is_null()).map(|e| e["n"].as_u64().unwrap() as u32);
        assert_eq!(x.unanswered.as_ref().map(|u| u.n), first_unanswered, "{client}");
        if let Some(u) = &x.unanswered {
            assert_eq!(u.request_reached, "backend", "{client}");
            let dropped = c["response_dropped_at_node"].as_array().is_some_and(|d| !d.is_empty());
            let seen: Vec<&str> = u.response_seen.iter().map(String::as_str).collect();
            assert_eq!(seen, if dropped { vec!["backend"] } else { vec![] }, "{client}");
            assert!(q.explanation.contains(&format!("exchange {} (", u.n)), "{}", q.explanation);
        }
        let worst = truth_statuses.iter().flatten().max().copied();
        assert_eq!(x.worst_status, worst, "{client}");
        // the 2-second exchange is the slowest of its connection
        if let Some(slow) = want.iter().find(|e| e["target"].as_str().unwrap().starts_with("/slow/")) {
            let s = x.slowest.as_ref().unwrap();
            assert_eq!(s.n as u64, slow["n"].as_u64().unwrap());
            assert!(s.after_ms >= 1900.0, "{client}: {}", s.after_ms);
        }
    }
}

trait Wire {
    fn to_string_lossy(&self) -> String;
}

impl Wire for tuplecorr::verdict::AppProto {
    fn to_string_lossy(&self) -> String {
        serde_json::to_value(self).unwrap().as_str().unwrap().to_string()
    }
}

/// The proxy scenario: the client's request at decap; the proxy's upstream
/// connection carries the same request line, so the facts are decap's.
#[test]
fn a_proxied_request_reports_its_facts_where_the_client_sent_them() {
    let dir = testdata("lab/proxy");
    let exp = expected(&dir);
    let (_, found) = run(&dir);
    let q = &found.requests[0];
    let want = json!({"protocol": "http", "at": "decap", "method": "GET",
        "target": format!("/{}", exp["requests"][0]["marker"].as_str().unwrap()),
        "host": "backend", "status": 200});
    assert_eq!(serde_json::to_value(&q.app).unwrap(), want);
}

fn run_binary(args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A namespace capture of `testdata/edge`, one point given twice (a and b).
fn twice(file: &str, format: &str) -> Vec<u8> {
    let f = testdata(file);
    let (a, b) = (format!("a={}", f.display()), format!("b={}", f.display()));
    run_binary(&["-q", "--format", format, &a, &b]).stdout
}

/// Each request's `app` object of a JSON report.
fn apps(json: &[u8]) -> Vec<Value> {
    let report: Value = serde_json::from_slice(json).unwrap();
    report["requests"].as_array().unwrap().iter().map(|r| r["app"].clone()).collect()
}

/// The cells of `columns` of every row of a CSV report, and the header.
fn cells(csv: &[u8], columns: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(csv);
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows = (reader.records())
        .map(|r| {
            let r = r.unwrap();
            columns.iter().map(|c| r[at(c)].to_string()).collect()
        })
        .collect();
    (header, rows)
}

#[test]
fn real_tls_http_and_dns_bytes_give_their_facts_in_json_and_csv() {
    // tshark on the same file: SNI app.example, ALPN h2,http/1.1; GET
    // /nothing-here?q=1 Host app.example, 404; nx.app.example type 1 rcode 3.
    assert_eq!(
        apps(&twice("edge/app-netns.pcap", "json")),
        [
            json!({"protocol": "tls", "at": "a", "sni": "app.example", "alpn": ["h2", "http/1.1"]}),
            json!({"protocol": "http", "at": "a", "method": "GET", "target": "/nothing-here?q=1",
                    "host": "app.example", "status": 404}),
            json!({"protocol": "dns", "at": "a", "qname": "nx.app.example", "qtype": "A", "rcode": "NXDOMAIN"}),
        ]
    );
    let (header, rows) = cells(
        &twice("edge/app-netns.pcap", "csv"),
        &["app", "app_at", "app_host", "app_detail", "app_status"],
    );
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(at("app"), at("apart") + 1, "after every earlier column");
    assert_eq!(
        rows,
        [
            ["tls", "a", "app.example", "h2,http/1.1", ""],
            ["http", "a", "app.example", "GET /nothing-here?q=1", "404"],
            ["dns", "a", "nx.app.example", "A", "NXDOMAIN"],
        ]
    );
}

/// DNS over TCP between two namespaces (`testdata/edge/dns-tcp-netns.pcap`,
/// made by `scripts/dns-tcp-capture.sh`): a message after its length in one
/// segment, the length and the message in two segments each way, and two
/// pipelined queries. tshark on the same file (`-Y dns -e tcp.stream -e
/// dns.qry.name -e dns.qry.type -e dns.flags.rcode`): tcp.app.example 28
/// rcode 0; split.app.example 1 rcode 2; first.app.example 1 rcode 0, then
/// second.app.example 15 rcode 3 (not read: the first message only).
#[test]
fn dns_over_tcp_gives_the_first_question_and_answer_however_the_length_was_sent() {
    let file = "edge/dns-tcp-netns.pcap";
    assert_eq!(
        apps(&twice(file, "json")),
        [
            json!({"protocol": "dns", "at": "a", "qname": "tcp.app.example", "qtype": "AAAA", "rcode": "NOERROR"}),
            json!({"protocol": "dns", "at": "a", "qname": "split.app.example", "qtype": "A", "rcode": "SERVFAIL"}),
            json!({"protocol": "dns", "at": "a", "qname": "first.app.example", "qtype": "A", "rcode": "NOERROR"}),
        ]
    );
    assert_eq!(
        cells(&twice(file, "csv"), &["proto", "app", "app_host", "app_detail", "app_status"]).1,
        [
            ["tcp", "dns", "tcp.app.example", "AAAA", "NOERROR"],
            ["tcp", "dns", "split.app.example", "A", "SERVFAIL"],
            ["tcp", "dns", "first.app.example", "A", "NOERROR"],
        ]
    );
}

/// A web browsing capture of the corpus (pcpp's many-protocols.pcap): DNS,
/// TLS and HTTP, every value as tshark reads it (`-e dns.qry.name -e
/// tls.handshake.extensions_server_name -e http.request.uri -e
/// http.response.code ...`).
#[test]
fn corpus_browsing_facts_agree_with_tshark() {
    require_corpus!();
    let f = crate::util::corpus_dir().join("pcpp__ExamplesTest__many-protocols.pcap");
    let (a, b) = (format!("a={}", f.display()), format!("b={}", f.display()));
    let report: Value =
        serde_json::from_slice(&run_binary(&["-q", "--format", "json", &a, &b]).stdout).unwrap();
    let app_of = |client: &str| {
        (report["requests"].as_array().unwrap().iter())
            .find(|r| r["captures"][0]["client"] == client)
            .map(|r| r["app"].clone())
            .unwrap_or_else(|| panic!("no request from {client}"))
    };
    assert_eq!(
        app_of("10.0.0.1:64286"),
        json!({"protocol": "dns", "at": "a", "qname": "www.google.com", "qtype": "A", "rcode": "NOERROR"})
    );
    assert_eq!(
        app_of("10.0.0.1:55194"),
        json!({"protocol": "tls", "at": "a", "sni": "www.google.com", "alpn": ["spdy/3.1", "spdy/3", "http/1.1"]})
    );
    assert_eq!(
        app_of("10.0.0.1:55195"),
        json!({"protocol": "http", "at": "a", "method": "POST", "target": "/ocsp",
               "host": "clients1.google.com", "status": 200})
    );
    // The client sent nothing; the server answered 400 (tshark: HTTP/1.0 400 Bad request).
    assert_eq!(app_of("10.0.0.1:55219"), json!({"protocol": "http", "at": "a", "status": 400}));
    // A request line longer than the first 1024 bytes kept leaves its Host unsaid.
    let long = app_of("10.0.0.1:55250");
    assert_eq!((long["method"].as_str(), long.get("host")), (Some("GET"), None));
    assert_eq!(long["target"].as_str().map(str::len), Some(128), "cut to its bound");
    let n = report["requests"].as_array().unwrap().iter().filter(|r| r.get("app").is_some()).count();
    assert_eq!(n, 212, "requests with application facts");
}

mod hostile {
    use proptest::prelude::*;
    use tuplecorr::flows::facts::{self, Field, ALPN_BOUND, ALPN_ID_BOUND, NAME_BOUND, TARGET_BOUND};

    /// At most this many characters for `n` bytes of escaped text (`\xHH` each).
    fn bounded(f: &facts::AppFacts, field: Field, n: usize) -> bool {
        f.text(field).is_none_or(|t| t.len() <= 4 * n && t.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    }

    /// The real ClientHello of the unit tests' kind: starts like one, then anything.
    fn tls_like() -> impl Strategy<Value = Vec<u8>> {
        (any::<u16>(), proptest::collection::vec(any::<u8>(), 0..1100))
            .prop_map(|(len, rest)| [&[0x16, 3, 1][..], &len.to_be_bytes(), &[1], &rest].concat())
    }

    fn dns_like() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(prop_oneof![Just(0xc0u8), Just(0u8), 1u8..64, any::<u8>()], 0..600)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Any bytes: no panic, text bounded and printable, lists bounded.
        #[test]
        fn any_first_bytes_give_bounded_printable_facts(
            tls in tls_like(),
            dns in dns_like(),
            http in "[A-Z]{3,7} [ -~\\x80-\\xff]{0,300} HTTP/1\\.[01]\r\n([ -~]{0,60}\r\n){0,8}",
        ) {
            for f in [facts::client_hello(&tls), facts::http_request(http.as_bytes()), facts::dns(&dns)]
                .into_iter()
                .flatten()
            {
                prop_assert!(bounded(&f, Field::Target, TARGET_BOUND) && bounded(&f, Field::Host, NAME_BOUND));
                prop_assert!(bounded(&f, Field::Sni, NAME_BOUND) && bounded(&f, Field::Qname, NAME_BOUND));
                prop_assert!(f.alpn_raw().count() <= ALPN_BOUND);
                prop_assert!(f.alpn_text().all(|p| p.len() <= 4 * ALPN_ID_BOUND && !p.contains(',')));
            }
            let _ = facts::http_status(&tls);
            let _ = facts::http_status(http.as_bytes());
        }
    }
}
