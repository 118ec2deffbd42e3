//! Output formats on hand-built findings (three captures `decap, egress,
//! backend`): CSV and JSON read back field by field, NDJSON line by line, the
//! Community ID vectors, `compare` statements and request filters.

use crate::fixtures::{findings, T0_NS};
use tuplecorr::report::{self, wire, Format, ReportOptions};
use tuplecorr::report::{Filter, TimeBound};
use tuplecorr::verdict::*;

fn written(f: &Findings, format: Format) -> String {
    let mut out = Vec::new();
    report::write(f, &ReportOptions { format, ..ReportOptions::default() }, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

const HEADER: &str = "request,proto,first_seen,client,service,\
decap_client,decap_server,decap_reply,egress_client,egress_server,egress_reply,\
backend_client,backend_server,backend_reply,\
source_changed_at,source_before,source_after,destination_changed_at,destination_before,destination_after,\
reply_path,reply_lost_between,outcome,outcome_by,outcome_origin,outcome_icmp,match_strength,match_evidence,explanation,\
source_change_kind,destination_change_kind,reply_bypassed,reply_reached,data_stopped,path_mtu,reply_lost_cause,reply_unexpected_source,\
earlier_attempts,identity,identity_preserved,identity_client_set,blind,apart,app,app_at,app_host,app_detail,app_status,\
exchanges,exchange_unanswered,exchange_worst_status,exchange_slowest";

#[test]
fn csv_header_is_pinned_for_decap_egress_backend() {
    let text = written(&findings(), Format::Csv);
    assert_eq!(text.lines().next().unwrap(), HEADER);
}

fn csv_rows() -> Vec<std::collections::HashMap<String, String>> {
    let text = written(&findings(), Format::Csv);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| header.iter().cloned().zip(r.unwrap().iter().map(String::from)).collect())
        .collect()
}

#[test]
fn csv_snat_row_reads_back() {
    let rows = csv_rows();
    assert_eq!(rows.len(), 5);
    let r = &rows[0];
    assert_eq!(r["request"], "1");
    assert_eq!(r["first_seen"], "2026-11-29T23:40:38.123456789Z");
    assert_eq!(r["client"], "198.18.90.42:51514");
    assert_eq!(r["service"], "198.19.96.10:80");
    assert_eq!(r["egress_client"], "198.18.90.42:51514");
    assert_eq!(r["backend_client"], "198.19.3.17:40112");
    assert_eq!(r["source_changed_at"], "egress->backend");
    assert_eq!(r["source_before"], "198.18.90.42:51514");
    assert_eq!(r["source_after"], "198.19.3.17:40112");
    assert_eq!(r["destination_changed_at"], "");
    assert_eq!(r["reply_path"], "same-path");
    assert_eq!(r["outcome"], "completed");
    assert_eq!(r["match_strength"], "strong;strong");
    assert_eq!(r["match_evidence"], "isn+client-fingerprint+ip-id;isn");
    assert!(r["explanation"].contains("egress and backend"));
}

#[test]
fn csv_reply_lost_icmp_error_and_ambiguous_rows_read_back() {
    let rows = csv_rows();
    let lost = &rows[1];
    assert_eq!((lost["decap_reply"].as_str(), lost["egress_reply"].as_str()), ("no", "no"));
    assert_eq!(lost["backend_reply"], "yes");
    assert_eq!(lost["reply_path"], "reply-lost");
    assert_eq!(lost["reply_lost_between"], "egress->backend");

    let icmp = &rows[2];
    assert_eq!(icmp["proto"], "udp");
    assert_eq!(icmp["backend_client"], "");
    assert_eq!(icmp["backend_reply"], "");
    assert_eq!(icmp["outcome"], "icmp-error");
    assert_eq!(icmp["outcome_by"], "198.19.3.1");
    assert_eq!(icmp["outcome_origin"], "egress->backend");
    assert_eq!(icmp["outcome_icmp"], "3/13");

    let amb = &rows[3];
    assert_eq!(amb["match_strength"], "ambiguous;weak");
    assert_eq!(amb["match_evidence"], "client-fingerprint+time;ports+time");

    let v6 = &rows[4];
    assert_eq!(v6["destination_changed_at"], "egress->backend");
    assert_eq!(v6["destination_after"], "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1");
    assert_eq!(v6["backend_server"], "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1");
}

#[test]
fn json_reads_back_as_findings() {
    let want = findings();
    let text = written(&want, Format::Json);
    let back: wire::Findings = serde_json::from_str(&text).unwrap();
    assert_eq!(
        back.captures.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
        ["decap", "egress", "backend"]
    );
    assert_eq!(back.captures[2].clock_offset_ms, 2750.012);
    assert_eq!(back.captures[2].offset_method, OffsetMethod::RequestReply);
    assert_eq!(back.boundaries[1].delay_ms, Some(0.08));
    let r1 = &back.requests[0];
    assert_eq!(r1.source.changed[0].kind, ChangeKind::Snat);
    assert_eq!(r1.source.changed[0].after, "198.19.3.17:40112");
    assert_eq!(r1.captures[0].rtt_ms, Some(0.31));
    assert!(!text.contains("time_ns") && !text.contains("start_ns")); // not part of the contract
    assert_eq!(back.requests[1].reply.lost_between.as_deref(), Some("egress->backend"));
    let icmp = &back.requests[2].outcome;
    assert_eq!(
        (icmp.kind, icmp.by.as_deref(), icmp.origin.as_deref(), icmp.icmp.as_deref()),
        (OutcomeKind::IcmpError, Some("198.19.3.1"), Some("egress->backend"), Some("3/13"))
    );
    assert_eq!(back.requests[3].matches[0].strength, Strength::Ambiguous);
    assert_eq!(back.requests[3].matches[0].candidates.len(), 2);
    assert_eq!(back.requests[4].captures[1].icmp_id, Some(4711));
    assert_eq!(back.unmatched[1].count, 3);
    assert_eq!(back.warnings[0].record, Some(18412));
}

#[test]
fn json_uses_contract_spelling() {
    let text = written(&findings(), Format::Json);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let r = &v["requests"][1];
    assert_eq!(r["reply"]["path"], "reply-lost");
    assert_eq!(r["outcome"]["kind"], "no-reply");
    assert_eq!(r["matches"][0]["evidence"][0], "isn");
    assert_eq!(v["requests"][3]["outcome"]["kind"], "completed");
    assert_eq!(
        v["requests"][2]["captures"][2],
        serde_json::json!({"label": "backend", "seen": false, "reply_seen": false})
    );
}

#[test]
fn ndjson_lines_each_parse_as_a_request() {
    let text = written(&findings(), Format::Ndjson);
    let requests: Vec<wire::Request> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(requests.iter().map(|r| r.request).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    assert_eq!(requests[4].proto, Proto::Icmp);
    assert!(!text.contains("\"tuplecorr\""));
}

#[test]
fn community_id_vectors() {
    // corelight/community-id-spec baseline/baseline_deflt.json, seed 0.
    use tuplecorr::report::flowid::community_id;
    let ip = |s: &str| s.parse().unwrap();
    assert_eq!(
        community_id(6, ip("128.232.110.120"), 34855, ip("66.35.250.204"), 80),
        "1:LQU9qZlK+B5F3KDmev6m5PMibrg="
    );
    assert_eq!(
        community_id(17, ip("8.8.8.8"), 53, ip("192.168.1.52"), 54585),
        "1:d/FP5EW3wiY1vCndhwleRRKHowQ="
    );
    assert_eq!(
        community_id(1, ip("192.168.0.89"), 8, ip("192.168.0.1"), 0),
        "1:X0snYXpgwiv9TZtqg64sgzUn6Dk="
    );
    assert_eq!(
        community_id(58, ip("fe80::260:97ff:fe07:69ea"), 134, ip("ff02::1"), 0),
        "1:pkvHqCL88/tg1k4cPigmZXUtL00="
    );
}

/// Before: request 1 of the fixtures (snat to 198.19.3.17 between egress and
/// backend). After: the same request without the masquerade.
fn masquerade_pair() -> (Findings, Findings) {
    let mut before = findings();
    before.requests.truncate(1);
    let mut after = before.clone();
    after.requests[0].captures[2].client = Some(crate::fixtures::ep("198.18.90.42:51514"));
    after.requests[0].source.clear();
    (before, after)
}

const MASQUERADE_STATEMENT: &str = "request to 198.19.96.10:80 from 198.18.90.42: source at backend was 198.19.3.17 before, 198.18.90.42 after; replies on the same path before and after";

#[test]
fn compare_states_a_removed_masquerade() {
    let (before, after) = masquerade_pair();
    let c = tuplecorr::compare::compare(&before, &after);
    assert_eq!(c.pairings.len(), 1);
    assert_eq!(c.pairings[0].statement, MASQUERADE_STATEMENT);
    assert!(c.pairings[0].source_changed);
    let b = c.pairings[0].before.as_ref().unwrap();
    assert_eq!(b.sources_at("decap").unwrap(), ["198.18.90.42"]);
    assert_eq!(b.sources_at("egress").unwrap(), ["198.18.90.42"]);
}

#[test]
fn compare_reads_csv_and_json_reports_alike() {
    let (before, after) = masquerade_pair();
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("before.csv");
    let a = dir.path().join("after.json");
    std::fs::write(&b, written(&before, Format::Csv)).unwrap();
    std::fs::write(&a, written(&after, Format::Json)).unwrap();
    let before = tuplecorr::compare::load_report(&b).unwrap();
    let after = tuplecorr::compare::load_report(&a).unwrap();
    let c = tuplecorr::compare::compare(&before, &after);
    assert_eq!(c.pairings[0].statement, MASQUERADE_STATEMENT);
    let mut out = Vec::new();
    tuplecorr::compare::write(&c, tuplecorr::compare::CompareFormat::Csv, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let row: Vec<String> = reader.records().next().unwrap().unwrap().iter().map(String::from).collect();
    let cell = |name: &str| row[header.iter().position(|h| h == name).unwrap()].clone();
    assert_eq!(cell("backend_source_before"), "198.19.3.17");
    assert_eq!(cell("backend_source_after"), "198.18.90.42");
    assert_eq!(cell("source_changed"), "yes");
    assert_eq!(cell("reply_path_changed"), "no");
    assert_eq!(cell("statement"), MASQUERADE_STATEMENT);
}

#[test]
fn compare_refuses_a_capture_as_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.pcap");
    // µs and ns pcap magics in both byte orders, Kuznetsov's "modified" pcap, pcapng, gzip
    for magic in [
        [0xd4, 0xc3, 0xb2, 0xa1],
        [0xa1, 0xb2, 0xc3, 0xd4],
        [0x4d, 0x3c, 0xb2, 0xa1],
        [0xa1, 0xb2, 0x3c, 0x4d],
        [0x34, 0xcd, 0xb2, 0xa1],
        [0xa1, 0xb2, 0xcd, 0x34],
        [0x0a, 0x0d, 0x0d, 0x0a],
        [0x1f, 0x8b, 0x08, 0x00],
    ] {
        std::fs::write(&p, [&magic[..], &[2, 0, 4, 0, 0xff, 0xfe]].concat()).unwrap();
        let err = tuplecorr::compare::load_report(&p).unwrap_err();
        assert!(err.to_string().contains("is a capture, not a report"), "{magic:02x?}: {err}");
    }
}

fn kept(filter: Filter) -> Vec<u64> {
    let mut f = findings();
    report::filter_requests(&mut f, &filter);
    f.requests.iter().map(|r| r.request).collect()
}

#[test]
fn filters_keep_exactly_the_expected_requests() {
    let ip = |s: &str| s.parse().unwrap();
    assert_eq!(kept(Filter::default()), [1, 2, 3, 4, 5]);
    assert_eq!(kept(Filter { hosts: vec![ip("198.19.3.17")], ..Filter::default() }), [1, 2]);
    assert_eq!(kept(Filter { nets: vec![(ip("2001:db8::"), 32)], ..Filter::default() }), [5]);
    assert_eq!(kept(Filter { ports: vec![443], ..Filter::default() }), [4]);
    assert_eq!(kept(Filter { protos: vec!["udp".into()], ..Filter::default() }), [3]);
    assert_eq!(
        kept(Filter {
            since: Some(TimeBound::UnixNs(T0_NS + 1)),
            until: Some(TimeBound::FromStartNs(4_000_000_000)),
            ..Filter::default()
        }),
        [2, 3, 4]
    );
}
