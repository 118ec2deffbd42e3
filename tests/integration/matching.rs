//! Matching classes that real traffic produces (issue 13): a port scanner's
//! shared ISN, short midstream flows arriving together, a first SYN lost between
//! two points, a capture point that lost a connection's first packet, many
//! clients onto one NAT tuple. Captures are generated with `tuplecorr_synth`,
//! written to a temporary directory and run through the binary; assertions are on
//! its JSON output, so they hold whatever the library's types look like.

use serde_json::Value;
use std::net::IpAddr;
use std::path::Path as FsPath;
use std::process::Command;
use tuplecorr_synth::{write_pcap, Captures, Hop, Path, Point, Tcp, Udp};

type Packets = Vec<(i64, Vec<u8>, u32)>;

const T0: i64 = 1_795_995_638_000_000_000;
const LABELS: [&str; 3] = ["decap", "egress", "backend"];

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// Writes each point as `<label>.pcap` in a temporary directory and runs
/// `tuplecorr --format json` on them in path order.
pub fn run_json(points: &[Packets], labels: &[&str], extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["-q".into(), "--format".into(), "json".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    for (pkts, label) in points.iter().zip(labels) {
        let path = dir.path().join(format!("{label}.pcap"));
        let mut f = std::fs::File::create(&path).unwrap();
        write_pcap(&mut f, 262_144, pkts).unwrap();
        args.push(format!("{label}={}", path.display()));
    }
    run_binary(&args, dir.path())
}

fn run_binary(args: &[String], cwd: &FsPath) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(args).current_dir(cwd).output().unwrap();
    assert!(out.status.success(), "tuplecorr failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

/// TCP flags, payload length and sequence number of a raw IPv4 TCP packet.
pub fn tcp_info(pkt: &[u8]) -> Option<(u8, usize, u32)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 || pkt[9] != 6 {
        return None;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    let t = pkt.get(ihl..)?;
    if t.len() < 20 {
        return None;
    }
    let doff = usize::from(t[12] >> 4) * 4;
    let seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
    Some((t[13], total.saturating_sub(ihl + doff), seq))
}

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

fn is_syn(p: &[u8]) -> bool {
    tcp_info(p).is_some_and(|(f, _, _)| f & (SYN | ACK) == SYN)
}

fn requests(v: &Value) -> &Vec<Value> {
    v["requests"].as_array().expect("requests")
}

fn seen(r: &Value, k: usize) -> bool {
    r["captures"][k]["seen"].as_bool() == Some(true)
}

fn client_at(r: &Value, k: usize) -> &str {
    r["captures"][k]["client"].as_str().unwrap_or("")
}

fn server_at(r: &Value, k: usize) -> &str {
    r["captures"][k]["server"].as_str().unwrap_or("")
}

fn evidence(m: &Value) -> Vec<&str> {
    m["evidence"].as_array().map(|e| e.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn masquerade(delay_backend_ns: i64) -> Vec<Hop> {
    vec![
        Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
        Hop {
            delay_ns: delay_backend_ns,
            routed: true,
            snat: Some(ip("198.19.3.17")),
            snat_port: None,
            ..Hop::default()
        },
    ]
}

/// Ordinary connections that give the clock estimate its samples.
fn background(p: &mut Path, n: u32, at: i64) {
    for i in 0..n {
        let t = Tcp::new(
            (ip("198.18.90.50"), 30000 + i as u16),
            (ip("198.19.96.20"), 443),
            at + i64::from(i) * 3_000_000,
            900 + i,
        );
        p.tcp(&t);
    }
}

fn three() -> Vec<Point> {
    vec![Point::default(), Point::default(), Point::default()]
}

/// A port scanner sends every probe from one source port with one ISN; open
/// ports answer with a SYN-ACK, closed ones reset. One ordinary interface per
/// capture: no probe is a copy of another.
#[test]
fn scanner_probes_sharing_one_isn_are_each_their_own_request() {
    let mut p = Path::new(vec![Point::default(), Point::default()], vec![masquerade(80_000).remove(1)]);
    let ports: Vec<u16> = (0..40).map(|i| 20 + i * 7).collect();
    for (i, &port) in ports.iter().enumerate() {
        let mut t =
            Tcp::new((ip("198.18.90.66"), 61000), (ip("198.19.96.30"), port), T0 + i as i64 * 700_000, 7);
        t.client_isn = 0x1234_5678;
        t.request = Vec::new();
        t.response = Vec::new();
        t.reset = i % 4 != 0; // every fourth port is open
        p.tcp(&t);
    }
    let v = run_json(&p.finish().points, &["scan", "nat"], &[]);
    let rs = requests(&v);
    assert_eq!(rs.len(), ports.len(), "one request per probe, none folded");
    for (r, &port) in rs.iter().zip(&ports) {
        assert!(server_at(r, 0).ends_with(&format!(":{port}")), "order: {}", server_at(r, 0));
        assert!(seen(r, 1), "probe to {port} not chained");
        assert_eq!(server_at(r, 1), server_at(r, 0));
        assert_eq!(r["matches"][0]["strength"], "strong");
    }
    let open = rs.iter().filter(|r| r["outcome"]["kind"] != "reset").count();
    assert_eq!(open, ports.len() / 4, "the open ports that answered are all there");
}

/// Four keep-alive exchanges of four long-lived connections within 50 µs: no
/// handshake, no payload, ports and sequence numbers unchanged at the next point.
#[test]
fn short_midstream_flows_arriving_together_pair_by_seq_and_ack() {
    let mut p = Path::new(three(), masquerade(80_000));
    for i in 0..4u32 {
        let t = Tcp::new(
            (ip("198.18.90.42"), 41000 + i as u16),
            (ip("198.19.96.10"), 5432),
            T0 + i64::from(i) * 12_000,
            40 + i,
        );
        p.tcp(&t);
    }
    let caps = p.finish();
    // Keep only what a keep-alive leaves: ACKs and FINs without payload.
    let points: Vec<Packets> = caps
        .points
        .into_iter()
        .map(|pts| {
            pts.into_iter()
                .filter(|(_, d, _)| tcp_info(d).is_some_and(|(f, len, _)| f & SYN == 0 && len == 0))
                .collect()
        })
        .collect();
    let v = run_json(&points, &LABELS, &[]);
    let rs = requests(&v);
    assert_eq!(rs.len(), 4);
    for (i, r) in rs.iter().enumerate() {
        assert!((0..3).all(|k| seen(r, k)), "midstream request {i} not chained: {}", r["explanation"]);
        for m in r["matches"].as_array().unwrap() {
            assert_eq!(m["strength"], "strong", "{m}");
            assert!(evidence(m).contains(&"seq-ack"), "{m}");
        }
        let port = client_at(r, 0).rsplit(':').next().unwrap().to_string();
        assert!(client_at(r, 2).ends_with(&format!(":{port}")), "chained to another connection: {r}");
    }
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{}", v["unmatched"]);
}

/// The client's first SYN is dropped after decap; its retransmission 1 s later
/// gets through. decap saw both, egress and backend only the second.
#[test]
fn first_syn_lost_after_decap_joins_the_retransmission() {
    let mut p = Path::new(three(), masquerade(80_000));
    background(&mut p, 5, T0);
    let t = Tcp::new((ip("198.18.90.42"), 42000), (ip("198.19.96.10"), 80), T0 + 2_000_000_000, 77);
    p.tcp(&t);
    let mut caps = p.finish();
    insert_lost_first_syn(&mut caps, 0, t.client_isn, 1_000_000_000);
    let v = run_json(&caps.points, &LABELS, &[]);
    let r = requests(&v).iter().find(|r| client_at(r, 0) == "198.18.90.42:42000").expect("the request");
    assert!((0..3).all(|k| seen(r, k)), "not chained: {}", r["explanation"]);
    for m in r["matches"].as_array().unwrap() {
        assert_eq!(m["strength"], "strong");
        assert!(evidence(m).contains(&"isn"), "{m}");
    }
    assert_eq!(client_at(r, 1), "198.18.90.42:42000");
    let changes = r["source"]["changed"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["between"], "egress->backend");
    assert_eq!(changes[0]["kind"], "snat", "not a proxy: {}", r["explanation"]);
    assert_eq!(r["outcome"]["kind"], "completed");
    let why = r["explanation"].as_str().unwrap();
    assert!(why.contains("first SYN was not seen at egress") && why.contains("+1.0 s"), "{why}");
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0));
}

/// Adds, at point `k` only, a SYN `before_ns` earlier than the first SYN with
/// this ISN (an attempt lost after that point).
fn insert_lost_first_syn(caps: &mut Captures, k: usize, isn: u32, before_ns: i64) {
    let pts = &mut caps.points[k];
    let (t, data, orig) = pts
        .iter()
        .find(|(_, d, _)| is_syn(d) && tcp_info(d).is_some_and(|(_, _, s)| s == isn))
        .cloned()
        .expect("the SYN");
    pts.push((t - before_ns, data, orig));
    pts.sort_by_key(|(t, _, _)| *t);
}

/// The middle point lost a connection's SYN: its flow starts at the SYN-ACK, one
/// round trip later. It is still the request's hop, and the change is located
/// between egress and backend, not "between decap and backend".
#[test]
fn middle_point_that_lost_the_first_packet_stays_in_the_chain() {
    let mut p = Path::new(three(), masquerade(5_000_000));
    background(&mut p, 5, T0);
    let t = Tcp::new((ip("198.18.90.42"), 43000), (ip("198.19.96.10"), 80), T0 + 1_000_000_000, 78);
    p.tcp(&t);
    let mut caps = p.finish();
    caps.points[1].retain(|(_, d, _)| !(is_syn(d) && tcp_info(d).is_some_and(|(_, _, s)| s == t.client_isn)));
    let v = run_json(&caps.points, &LABELS, &[]);
    let r = requests(&v).iter().find(|r| client_at(r, 0) == "198.18.90.42:43000").expect("the request");
    assert!(seen(r, 1), "egress copy skipped: {}", r["explanation"]);
    assert!(seen(r, 2));
    let between: Vec<&str> =
        r["matches"].as_array().unwrap().iter().filter_map(|m| m["between"].as_str()).collect();
    assert_eq!(between, ["decap->egress", "egress->backend"]);
    let changes = r["source"]["changed"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["between"], "egress->backend");
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0));
}

/// Three discovery clients send the same datagram from the same port to one
/// multicast group; NAT maps them all onto one tuple, which the next point sees
/// as one flow. Every client is reported: ambiguous, naming the shared flow.
#[test]
fn many_clients_onto_one_nat_tuple_are_all_ambiguous_on_the_shared_flow() {
    let hops = vec![Hop { delay_ns: 60_000, routed: true, snat: Some(ip("198.19.3.17")), ..Hop::default() }];
    let mut p = Path::new(vec![Point::default(), Point::default()], hops);
    let probe = b"M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\nST: ssdp:all\r\n\r\n";
    for i in 0..3u16 {
        p.udp(&Udp {
            client: (ip(&format!("198.18.90.{}", 10 + i)), 1900),
            server: (ip("239.255.255.250"), 1900),
            start_ns: T0 + i64::from(i) * 30_000,
            request: probe.to_vec(),
            response: None,
            ip_id: 0,
        });
    }
    let v = run_json(&p.finish().points, &["lan", "wan"], &[]);
    let rs = requests(&v);
    assert_eq!(rs.len(), 3);
    let mut named = Vec::new();
    for r in rs {
        assert!(seen(r, 1), "a client is missing at wan: {}", r["explanation"]);
        assert_eq!(client_at(r, 1), "198.19.3.17:1900");
        let m = &r["matches"][0];
        assert_eq!(m["strength"], "ambiguous", "{m}");
        let c: Vec<&str> = m["candidates"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].starts_with("wan 198.19.3.17:1900 -> 239.255.255.250:1900"), "{c:?}");
        named.push(c[0].to_string());
        assert!(r["explanation"].as_str().unwrap().contains("ambiguous"));
    }
    assert!(named.windows(2).all(|w| w[0] == w[1]), "one shared flow: {named:?}");
}

/// A SYN retried on a new NAT port (issue 12 item 3): the node's first mapping
/// (port 40000) is reset by the backend; the client's retransmission 1 s later
/// leaves on port 40001 and carries the request. The backend holds two flows
/// with one ISN, one after the other: attempts, not copies. The one with the
/// data is chained and the earlier one listed, in JSON and in the CSV column.
#[test]
fn a_syn_retried_on_a_new_nat_port_chains_the_attempt_with_the_data_and_lists_the_first() {
    let nat = |port: u16| {
        let mut hops = masquerade(80_000);
        hops[1].snat_port = Some(port);
        hops
    };
    let start = T0 + 2_000_000_000;
    let mut p = Path::new(three(), nat(40001));
    background(&mut p, 5, T0);
    let t = Tcp::new((ip("198.18.90.42"), 42000), (ip("198.19.96.10"), 80), start, 77);
    p.tcp(&t);
    let mut caps = p.finish();
    // the first SYN, seen at decap and egress, then behind the NAT on port 40000
    insert_lost_first_syn(&mut caps, 0, t.client_isn, 1_000_000_000);
    insert_lost_first_syn(&mut caps, 1, t.client_isn, 1_000_000_000);
    let mut first = Path::new(three(), nat(40000));
    first.tcp(&Tcp { start_ns: start - 1_000_000_000, reset: true, only_at: Some(vec![2]), ..t.clone() });
    caps.points[2].extend(first.finish().points[2].iter().cloned());
    caps.points[2].sort_by_key(|(t, _, _)| *t);

    let v = run_json(&caps.points, &LABELS, &[]);
    let r = requests(&v).iter().find(|r| client_at(r, 0) == "198.18.90.42:42000").expect("the request");
    assert_eq!(client_at(r, 2), "198.19.3.17:40001", "the attempt that carried the request");
    assert_eq!(r["outcome"]["kind"], "completed");
    let attempts = r["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    let a = &attempts[0];
    assert_eq!((a["at"].as_str(), a["client"].as_str()), (Some("backend"), Some("198.19.3.17:40000")));
    assert_eq!((a["server"].as_str(), a["ending"].as_str()), (Some("198.19.96.10:80"), Some("rst")));
    assert!(r["syn_missed"].is_null(), "the first SYN was seen at backend, on the attempt");
    let why = r["explanation"].as_str().unwrap();
    assert!(
        why.contains("earlier attempt at backend from 198.19.3.17:40000 to 198.19.96.10:80 (reset)")
            && why.ends_with("the connection got through from 198.19.3.17:40001"),
        "{why}"
    );
    assert!(
        v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0),
        "the attempt is the request's"
    );
    // the other requests have none
    assert!(requests(&v)
        .iter()
        .filter(|o| o["request"] != r["request"])
        .all(|o| o.get("attempts").is_none()));

    // the same in the CSV's earlier_attempts column
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["-q".into(), "--format".into(), "csv".into()];
    for (pkts, label) in caps.points.iter().zip(LABELS) {
        let path = dir.path().join(format!("{label}.pcap"));
        write_pcap(&mut std::fs::File::create(&path).unwrap(), 262_144, pkts).unwrap();
        args.push(format!("{label}={}", path.display()));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr")).args(&args).output().unwrap();
    let mut csv = csv::Reader::from_reader(out.stdout.as_slice());
    let header = csv.headers().unwrap().clone();
    let at = header.iter().position(|h| h == "earlier_attempts").expect("the column");
    let row = (csv.records().map(Result::unwrap))
        .find(|row| &row[3] == "198.18.90.42:42000")
        .expect("the request's row");
    let cell = &row[at];
    assert!(
        cell.starts_with("198.19.3.17:40000->198.19.96.10:80 @") && cell.ends_with(" rst at backend"),
        "{cell}"
    );
}

/// The same on a real kernel (`scripts/lab/nat-port-reuse.sh`, captures in
/// `testdata/kernel/nat-port-reuse`): 12 connections through a MASQUERADE onto
/// two ports, the server holding both in TIME_WAIT. The truth is the router's
/// `conntrack -E` log: each connection's mappings in order; a connection mapped
/// more than once met a bare ACK (TIME_WAIT) on the earlier ports and got
/// through on the last one.
#[test]
fn a_real_nat_under_port_pressure_lists_the_earlier_mappings_as_attempts() {
    let dir = crate::util::testdata("kernel/nat-port-reuse");
    let log = std::fs::read_to_string(dir.join("conntrack.log")).unwrap();
    // client port -> NAT ports of its mappings, in order
    let mut mappings: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let field = |line: &str, key: &str, nth: usize| -> String {
        line.split_whitespace().filter_map(|w| w.strip_prefix(key)).nth(nth).unwrap_or_default().to_string()
    };
    for line in log.lines().filter(|l| l.contains("[NEW]")) {
        mappings.entry(field(line, "sport=", 0)).or_default().push(field(line, "dport=", 1));
    }
    assert_eq!(mappings.len(), 12);
    assert!(mappings.values().any(|m| m.len() > 1), "the capture holds retried mappings");
    let out = Command::new(env!("CARGO_BIN_EXE_tuplecorr"))
        .arg(format!("front={}", dir.join("front.pcap").display()))
        .arg(format!("behind={}", dir.join("behind.pcap").display()))
        .args(["-q", "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(requests(&v).len(), 12);
    for r in requests(&v) {
        let sport = client_at(r, 0).rsplit(':').next().unwrap().to_string();
        let ports = &mappings[&sport];
        let last = ports.last().unwrap();
        assert_eq!(client_at(r, 1), format!("198.19.50.1:{last}"), "the mapping that got through");
        let mut earlier: Vec<&String> = ports.iter().filter(|p| *p != last).collect();
        earlier.dedup();
        let listed: Vec<String> = (r["attempts"].as_array().map(Vec::as_slice).unwrap_or_default().iter())
            .map(|a| {
                assert_eq!(
                    (a["at"].as_str(), a["ending"].as_str()),
                    (Some("behind"), Some("bare-ack")),
                    "{a}"
                );
                a["client"].as_str().unwrap().rsplit(':').next().unwrap().to_string()
            })
            .collect();
        assert_eq!(listed.iter().collect::<Vec<_>>(), earlier, "request from port {sport}");
        assert!(r["syn_missed"].is_null(), "every SYN was seen behind the NAT, on one mapping or another");
    }
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0));
}

/// A DNS query lost before egress (or not captured there) whose answer egress
/// saw: a datagram from a system port to an ephemeral one is an answer, so the
/// flow there is the querier's, chained by the answer's bytes, and the
/// explanation says the query was not seen there (issue 30). A datagram from a
/// system port to another system port (NTP, 123 to 123) stays its sender's.
#[test]
fn an_answer_seen_without_its_query_is_chained_by_its_bytes_and_said() {
    let mut p = Path::new(three(), masquerade(80_000));
    let query =
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01".to_vec();
    let answer = [&query[..], b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x0e\x10\x00\x04\xc6\x13\x60\x0a"].concat();
    p.udp(&Udp {
        client: (ip("198.18.90.42"), 40000),
        server: (ip("198.19.96.53"), 53),
        start_ns: T0,
        request: query,
        response: Some(answer),
        ip_id: 7,
    });
    p.udp(&Udp {
        client: (ip("198.18.90.42"), 123),
        server: (ip("198.19.96.123"), 123),
        start_ns: T0 + 5_000_000,
        request: vec![0x23; 48],
        response: Some(vec![0x24; 48]),
        ip_id: 8,
    });
    let mut points = p.finish().points;
    // egress lost the DNS query: its first packet
    let query_at = points[1].iter().position(|(_, b, _)| b.len() > 28 && b[22..24] == 53u16.to_be_bytes());
    points[1].remove(query_at.expect("the query at egress"));
    let v = run_json(&points, &LABELS, &[]);
    let rs = requests(&v);
    assert_eq!(rs.len(), 2, "{v:#}");
    let dns = rs.iter().find(|r| server_at(r, 0).ends_with(":53")).unwrap();
    assert!((0..3).all(|k| seen(dns, k)), "{dns:#}");
    let egress = &dns["captures"][1];
    assert_eq!(
        (egress["packets_to_server"].as_u64(), egress["packets_to_client"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!((client_at(dns, 1), client_at(dns, 2)), ("198.18.90.42:40000", "198.19.3.17:40000"));
    assert_eq!(dns["matches"][0]["evidence"][0], "udp-payload", "{dns:#}");
    assert_eq!(dns["source"]["changed"][0]["between"], "egress->backend");
    let words = dns["explanation"].as_str().unwrap();
    assert!(words.contains("; the query was not seen at egress, only its answer;"), "{words}");
    let ntp = rs.iter().find(|r| server_at(r, 0).ends_with(":123")).unwrap();
    assert_eq!(client_at(ntp, 0), "198.18.90.42:123");
    assert!(!ntp["explanation"].as_str().unwrap().contains("only its answer"));
    assert!(v["unmatched"].as_array().unwrap().iter().all(|u| u["count"] == 0), "{v:#}");
}
