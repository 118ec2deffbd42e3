//! Identity carriers end to end (issue 19): a proxy in the pod that opens a new
//! connection to the backend and writes a PROXY v1 line or rewrites the HTTP
//! request (keeping only its request id), and a client that sets
//! `X-Forwarded-For` itself. Captures are generated with `tuplecorr_synth` (the
//! backend side as its own connection) and run through the binary; assertions
//! are on its JSON.

use crate::matching::run_json;
use serde_json::Value;
use std::net::IpAddr;
use tuplecorr_synth::{Path, Point, Tcp};

type Packets = Vec<(i64, Vec<u8>, u32)>;

const T0: i64 = 1_795_995_638_000_000_000;
const LABELS: [&str; 3] = ["decap", "egress", "backend"];

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The client's connection seen at decap and egress, and the proxy's own
/// connection to the backend (from 198.19.0.5, sending `to_backend`, answered
/// with `answer`) seen at backend, starting 200 µs later.
fn proxied(request: &[u8], to_backend: &[u8], answer: Option<Vec<u8>>) -> Vec<Packets> {
    let mut c = Tcp::new((ip("198.18.90.42"), 40001), (ip("198.19.96.10"), 80), T0, 11);
    c.request = request.to_vec();
    let mut front = Path::new(vec![Point::default(), Point::default()], vec![Default::default()]);
    front.tcp(&c);
    let mut b = Tcp::new((ip("198.19.0.5"), 51000), (ip("198.19.96.10"), 80), T0 + 200_000, 12);
    b.request = to_backend.to_vec();
    b.response = answer.unwrap_or_else(|| c.response.clone());
    let mut back = Path::new(vec![Point::default()], Vec::new());
    back.tcp(&b);
    let mut points = front.finish().points;
    points.extend(back.finish().points);
    points
}

fn request(report: &Value) -> &Value {
    &report["requests"][0]
}

const GET: &[u8] = b"GET /api/items HTTP/1.1\r\nHost: shop\r\nUser-Agent: curl/7.88\r\nAccept: */*\r\n\r\n";

#[test]
fn proxy_v1_added_in_the_pod_preserves_the_client_through_the_new_connection() {
    let mut backend = b"PROXY TCP4 198.18.90.42 198.19.96.10 40001 80\r\n".to_vec();
    backend.extend(GET);
    let report = run_json(&proxied(GET, &backend, None), &LABELS, &[]);
    let r = request(&report);
    assert_eq!(r["matches"][1]["strength"], "strong", "{r}");
    let ev = r["matches"][1]["evidence"].as_array().unwrap();
    assert!(ev.contains(&Value::from("client-fingerprint")), "the bytes after the PROXY line match: {r}");
    let id = &r["identity"];
    assert_eq!(id["at"], "backend");
    assert_eq!(id["peer"], "198.19.0.5:51000");
    assert_eq!(id["carrier"], "proxy-v1");
    assert_eq!(id["carried"], "198.18.90.42:40001");
    assert_eq!(id["added"], "egress->backend");
    assert_eq!(id["preserved"], true);
    assert!(id.get("client_set").is_none());
    let text = r["explanation"].as_str().unwrap();
    assert!(
        text.contains(
            "PROXY v1 added between egress and backend carries 198.18.90.42:40001 = the client: \
             identity preserved through the proxy"
        ),
        "{text}"
    );
}

#[test]
fn a_proxy_that_rewrites_everything_but_the_request_id_still_matches_strongly() {
    let front = b"GET /api/items?page=2 HTTP/1.1\r\nHost: shop\r\nX-Request-ID: 4b1d0c7e-93a2-4c55\r\n\r\n";
    let back =
        b"GET /items?page=2&tenant=a HTTP/1.0\r\nHost: items.internal\r\nX-Forwarded-For: 198.18.90.42\r\n\
        X-Request-ID: 4b1d0c7e-93a2-4c55\r\nConnection: close\r\n\r\n";
    // The answer is rewritten too (other headers): no byte in common.
    let report =
        run_json(&proxied(front, back, Some(tuplecorr_synth::response_body(99, 2000))), &LABELS, &[]);
    let r = request(&report);
    assert_eq!(report["requests"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(r["captures"][2]["seen"], true, "the backend side is chained: {r}");
    assert_eq!(r["matches"][1]["strength"], "strong");
    // The service port is the only other thing kept (a hint, not a key).
    assert_eq!(r["matches"][1]["evidence"], serde_json::json!(["request-id", "ports"]));
    assert_eq!(r["source"]["changed"][0]["kind"], "proxy");
    let id = &r["identity"];
    assert_eq!(
        (&id["carrier"], &id["carried"], &id["added"]),
        (&"x-forwarded-for".into(), &"198.18.90.42".into(), &"egress->backend".into())
    );
    assert_eq!(id["preserved"], true);
    // Without the id the two connections are two requests.
    let front = b"GET /api/items?page=2 HTTP/1.1\r\nHost: shop\r\n\r\n";
    let report =
        run_json(&proxied(front, back, Some(tuplecorr_synth::response_body(99, 2000))), &LABELS, &[]);
    assert_eq!(request(&report)["captures"][2]["seen"], false);
}

#[test]
fn a_forwarded_for_the_client_sets_itself_is_not_to_be_trusted() {
    let spoofed = b"GET / HTTP/1.1\r\nHost: shop\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n";
    let mut c = Tcp::new((ip("198.18.90.42"), 40002), (ip("198.19.96.10"), 80), T0, 13);
    c.request = spoofed.to_vec();
    let hops = vec![
        Default::default(),
        tuplecorr_synth::Hop { snat: Some(ip("198.19.3.17")), ..Default::default() },
    ];
    let mut p = Path::new(vec![Point::default(); 3], hops);
    p.tcp(&c);
    let report = run_json(&p.finish().points, &LABELS, &[]);
    let r = request(&report);
    let id = &r["identity"];
    assert_eq!((&id["carrier"], &id["carried"]), (&"x-forwarded-for".into(), &"203.0.113.9".into()));
    assert_eq!(
        (&id["added"], &id["preserved"], &id["client_set"]),
        (&"client-side".into(), &false.into(), &"203.0.113.9".into())
    );
    assert_eq!(id["peer"], "198.19.3.17:40002");
    let text = r["explanation"].as_str().unwrap();
    assert!(
        text.contains("X-Forwarded-For 203.0.113.9 arrived from the client side at decap: the backend must not trust it"),
        "{text}"
    );
    // Requests without a carrier have no identity key at all.
    let plain = Tcp::new((ip("198.18.90.42"), 40003), (ip("198.19.96.10"), 80), T0, 14);
    let mut p = Path::new(vec![Point::default(); 2], vec![Default::default()]);
    p.tcp(&plain);
    let report = run_json(&p.finish().points, &LABELS[..2], &[]);
    assert!(request(&report).get("identity").is_none());
}
