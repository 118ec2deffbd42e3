//! Hand-built findings for report tests: three captures `decap, egress, backend`
//! and one request of each kind the report must render. Takes nothing; gives
//! `Findings`. Test-only; also compiled into the integration tests through
//! `#[path]` (they provide `crate::verdict`), so it names types only through
//! `crate::verdict`.

use crate::verdict::*;

/// 2026-11-29T23:40:38.123456789Z in ns since the Unix epoch.
pub const T0_NS: i64 = 1_795_995_638_123_456_789;

/// RFC 3339 text of `T0_NS + offset_ns` for the few whole-ms offsets used here.
pub fn time_text(offset_ns: i64) -> String {
    let secs = 38 + offset_ns / 1_000_000_000;
    let nanos = 123_456_789 + offset_ns % 1_000_000_000;
    format!("2026-11-29T23:40:{secs:02}.{nanos:09}Z")
}

/// A hop where the request was seen.
pub fn seen(label: &str, offset_ns: i64, client: &str, server: &str, reply_seen: bool) -> Hop {
    Hop {
        label: label.to_string(),
        seen: true,
        time: Some(time_text(offset_ns)),
        raw_time: Some(time_text(offset_ns)),
        client: Some(client.to_string()),
        server: Some(server.to_string()),
        reply_seen,
        rtt_ms: if reply_seen { Some(0.30999999999999994) } else { None },
        packets_to_server: Some(5),
        packets_to_client: Some(if reply_seen { 4 } else { 0 }),
        bytes_to_server: Some(412),
        bytes_to_client: Some(if reply_seen { 1290 } else { 0 }),
        community_id: Some("1:LQU9qZlK+B5F3KDmev6m5PMibrg=".to_string()),
        wireshark_filter: Some(format!("flow {client} {server}")),
        icmp_id: None,
        icmp_seqs: None,
        time_ns: Some(T0_NS + offset_ns),
    }
}

/// A hop where the request was not seen.
pub fn unseen(label: &str, reply_seen: bool) -> Hop {
    Hop { reply_seen, ..Hop::unseen(label.to_string()) }
}

fn strong(between: &str, evidence: &[Evidence]) -> Match {
    Match {
        between: between.to_string(),
        strength: Strength::Strong,
        evidence: evidence.to_vec(),
        candidates: vec![],
    }
}

fn change(between: &str, kind: ChangeKind, before: &str, after: &str) -> Change {
    Change { between: between.to_string(), kind, before: before.to_string(), after: after.to_string() }
}

fn reply(path: ReplyPath, lost: Option<&str>, reached: &str) -> Reply {
    Reply { path, lost_between: lost.map(str::to_string), bypassed: None, reached: Some(reached.to_string()) }
}

fn outcome(kind: OutcomeKind) -> Outcome {
    Outcome { kind, by: None, origin: None, icmp: None }
}

const S: i64 = 1_000_000_000;
const HOP: i64 = 100_000; // 0.1 ms per capture point

/// 1: TCP snat at egress->backend, same path. 2: same service, reply lost
/// between egress and backend. 3: UDP rejected by ICMP 3/13 from a box between
/// egress and backend. 4: TCP with an ambiguous decap->egress match. 5: ICMPv6
/// echo with a dnat to a long IPv6 address at egress->backend.
pub fn findings() -> Findings {
    let snat = |c: &str, after: &str| change("egress->backend", ChangeKind::Snat, c, after);
    let r1 = Request {
        request: 1,
        proto: Proto::Tcp,
        captures: vec![
            seen("decap", 0, "198.18.90.42:51514", "198.19.96.10:80", true),
            seen("egress", HOP, "198.18.90.42:51514", "198.19.96.10:80", true),
            seen("backend", 2 * HOP, "198.19.3.17:40112", "198.19.96.10:80", true),
        ],
        matches: vec![
            strong("decap->egress", &[Evidence::Isn, Evidence::ClientFingerprint, Evidence::IpId]),
            strong("egress->backend", &[Evidence::Isn]),
        ],
        source: Changes { changed: vec![snat("198.18.90.42:51514", "198.19.3.17:40112")] },
        destination: Changes::default(),
        reply: reply(ReplyPath::SamePath, None, "backend"),
        outcome: outcome(OutcomeKind::Completed),
        explanation: "source 198.18.90.42:51514 -> 198.19.3.17:40112 between egress and backend (downstream of the pod); reply returned on the same path".into(),
    };
    let r2 = Request {
        request: 2,
        proto: Proto::Tcp,
        captures: vec![
            seen("decap", S, "198.18.90.42:51600", "198.19.96.10:80", false),
            seen("egress", S + HOP, "198.18.90.42:51600", "198.19.96.10:80", false),
            seen("backend", S + 2 * HOP, "198.19.3.17:40200", "198.19.96.10:80", true),
        ],
        matches: vec![
            strong("decap->egress", &[Evidence::Isn, Evidence::IpId]),
            strong("egress->backend", &[Evidence::Isn]),
        ],
        source: Changes { changed: vec![snat("198.18.90.42:51600", "198.19.3.17:40200")] },
        destination: Changes::default(),
        reply: reply(ReplyPath::ReplyLost, Some("egress->backend"), "backend"),
        outcome: outcome(OutcomeKind::NoReply),
        explanation: "reply seen at backend but not at egress: return route or reverse-path filter between egress and backend".into(),
    };
    let r3 = Request {
        request: 3,
        proto: Proto::Udp,
        captures: vec![
            seen("decap", 2 * S, "198.18.90.43:5353", "198.19.96.11:53", true),
            seen("egress", 2 * S + HOP, "198.18.90.43:5353", "198.19.96.11:53", true),
            unseen("backend", false),
        ],
        matches: vec![strong("decap->egress", &[Evidence::UdpPayload])],
        source: Changes::default(),
        destination: Changes::default(),
        reply: reply(ReplyPath::SamePath, None, "egress"),
        outcome: Outcome {
            kind: OutcomeKind::IcmpError,
            by: Some("198.19.3.1".into()),
            origin: Some("egress->backend".into()),
            icmp: Some("3/13".into()),
        },
        explanation:
            "rejected between egress and backend: ICMP 3/13 (administratively prohibited) from 198.19.3.1"
                .into(),
    };
    let r4 = Request {
        request: 4,
        proto: Proto::Tcp,
        captures: vec![
            seen("decap", 3 * S, "198.18.90.44:40000", "198.19.96.12:443", true),
            seen("egress", 3 * S + HOP, "198.18.90.44:40000", "198.19.96.12:443", true),
            seen("backend", 3 * S + 2 * HOP, "198.18.90.44:40000", "198.19.96.12:443", true),
        ],
        matches: vec![
            Match {
                between: "decap->egress".into(),
                strength: Strength::Ambiguous,
                evidence: vec![Evidence::ClientFingerprint, Evidence::Time],
                candidates: vec![
                    "egress 198.18.90.44:40000->198.19.96.12:443 @2026-11-29T23:40:41.123556789Z".into(),
                    "egress 198.18.90.44:40002->198.19.96.12:443 @2026-11-29T23:40:41.123557000Z".into(),
                ],
            },
            Match {
                between: "egress->backend".into(),
                strength: Strength::Weak,
                evidence: vec![Evidence::Ports, Evidence::Time],
                candidates: vec![],
            },
        ],
        source: Changes::default(),
        destination: Changes::default(),
        reply: reply(ReplyPath::SamePath, None, "backend"),
        outcome: outcome(OutcomeKind::Completed),
        explanation: "addresses unchanged; reply returned on the same path (decap->egress match ambiguous)"
            .into(),
    };
    let long_v6 = "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1";
    let mut r5_hops = vec![
        seen("decap", 4 * S, "2001:db8::1", "2001:db8:ffff::99", true),
        seen("egress", 4 * S + HOP, "2001:db8::1", "2001:db8:ffff::99", true),
        seen("backend", 4 * S + 2 * HOP, "2001:db8::1", long_v6, true),
    ];
    for (hop, id) in r5_hops.iter_mut().zip([4711u16, 4711, 4711]) {
        hop.icmp_id = Some(id);
        hop.icmp_seqs = Some("1-3".into());
    }
    let r5 = Request {
        request: 5,
        proto: Proto::Icmp,
        captures: r5_hops,
        matches: vec![
            strong("decap->egress", &[Evidence::IcmpEcho]),
            strong("egress->backend", &[Evidence::IcmpEcho]),
        ],
        source: Changes::default(),
        destination: Changes {
            changed: vec![change("egress->backend", ChangeKind::Dnat, "2001:db8:ffff::99", long_v6)],
        },
        reply: reply(ReplyPath::SamePath, None, "backend"),
        outcome: outcome(OutcomeKind::Completed),
        explanation: format!("destination 2001:db8:ffff::99 -> {long_v6} between egress and backend"),
    };
    let capture =
        |label: &str, offset: f64, spread: f64, samples: u64, method: OffsetMethod| CaptureSummary {
            label: label.to_string(),
            file: format!("{label}.pcap"),
            format: "pcap".into(),
            link_types: vec!["raw".into()],
            packets: 212,
            flows: 31,
            clock_offset_ms: offset,
            offset_spread_ms: spread,
            offset_samples: samples,
            offset_method: method,
        };
    let boundary = |between: &str, ports: &str| Boundary {
        between: between.to_string(),
        delay_ms: Some(0.080000001),
        ttl_decrement: Some(1),
        ports: ports.to_string(),
        icmp_id: "kept".into(),
        mss_clamped: false,
        seq_shift: false,
    };
    Findings {
        tuplecorr: "0.1.0".into(),
        captures: vec![
            capture("decap", 0.0, 0.0, 0, OffsetMethod::Reference),
            capture("egress", 0.012, 0.004, 24, OffsetMethod::RequestReply),
            capture("backend", 2750.0124999, 0.0041, 24, OffsetMethod::RequestReply),
        ],
        boundaries: vec![boundary("decap->egress", "kept"), boundary("egress->backend", "remapped")],
        requests: vec![r1, r2, r3, r4, r5],
        unmatched: vec![
            Unmatched { label: "egress".into(), count: 0, flows: vec![] },
            Unmatched { label: "backend".into(), count: 3, flows: vec![] },
        ],
        warnings: vec![WarningOut {
            label: "egress".into(),
            record: Some(18412),
            byte_offset: Some(9437112),
            message: "record cut short: its header says 1514 bytes, the file ends after 306; kept the 18411 records before it".into(),
        }],
    }
}
