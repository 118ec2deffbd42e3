//! Hand-built findings for report tests: three captures `decap, egress, backend`
//! and one request of each kind the report must render. Takes nothing; gives
//! typed `Findings`. Test-only; also compiled into the integration tests through
//! `#[path]` (they provide `crate::verdict`), so it names types only through
//! `crate::verdict`. Never reads files.

use crate::verdict::*;

/// 2026-11-29T23:40:38.123456789Z in ns since the Unix epoch.
pub const T0_NS: i64 = 1_795_995_638_123_456_789;

/// An endpoint from its report text (`ip:port`, `[v6]:port`, bare address).
pub fn ep(text: &str) -> Endpoint {
    if let Ok(addr) = text.parse() {
        return Endpoint { addr, port: None };
    }
    let sa: std::net::SocketAddr = text.parse().expect("fixture endpoint");
    Endpoint { addr: sa.ip(), port: Some(sa.port()) }
}

const DECAP: usize = 0;
const EGRESS: usize = 1;
const BACKEND: usize = 2;

fn between(from: usize, to: usize) -> Between {
    Between { from, to }
}

/// A hop where the request was seen.
pub fn seen(offset_ns: i64, client: &str, server: &str, reply_seen: bool) -> Hop {
    Hop {
        seen: true,
        time_ns: Some(T0_NS + offset_ns),
        raw_time_ns: Some(T0_NS + offset_ns),
        start_ns: Some(T0_NS + offset_ns),
        client: Some(ep(client)),
        server: Some(ep(server)),
        reply_seen,
        rtt_ns: if reply_seen { Some(310_000) } else { None },
        packets_to_server: Some(5),
        packets_to_client: Some(if reply_seen { 4 } else { 0 }),
        bytes_to_server: Some(412),
        bytes_to_client: Some(if reply_seen { 1290 } else { 0 }),
        icmp_id: None,
        icmp_seqs: None,
        largest_to_server: None,
        largest_to_client: None,
        branch: None,
    }
}

/// A hop where the request was not seen.
pub fn unseen(reply_seen: bool) -> Hop {
    Hop { reply_seen, ..Hop::unseen() }
}

fn strong(b: Between, evidence: &[Evidence]) -> Match {
    Match {
        between: b,
        strength: Strength::Strong,
        evidence: evidence.iter().copied().collect(),
        candidates: vec![],
    }
}

fn change(b: Between, kind: ChangeKind, before: &str, after: &str) -> Change {
    Change { between: b, kind, before: ep(before), after: ep(after) }
}

fn reply(path: ReplyPath, lost: Option<Between>, reached: usize) -> Reply {
    Reply {
        path,
        lost_between: lost,
        bypassed: None,
        reached: Some(reached),
        lost_cause: None,
        unexpected_source: None,
    }
}

const S: i64 = 1_000_000_000;
const HOP: i64 = 100_000; // 0.1 ms per capture point

/// 1: TCP snat at egress->backend, same path. 2: same service, reply lost
/// between egress and backend. 3: UDP rejected by ICMP 3/13 from a box between
/// egress and backend. 4: TCP with an ambiguous decap->egress match. 5: ICMPv6
/// echo with a dnat to a long IPv6 address at egress->backend.
pub fn findings() -> Findings {
    let (de, eb) = (between(DECAP, EGRESS), between(EGRESS, BACKEND));
    let snat = |c: &str, after: &str| change(eb, ChangeKind::Snat, c, after);
    let r1 = Request {
        request: 1,
        proto: Proto::Tcp,
        captures: vec![
            seen(0, "198.18.90.42:51514", "198.19.96.10:80", true),
            seen(HOP, "198.18.90.42:51514", "198.19.96.10:80", true),
            seen(2 * HOP, "198.19.3.17:40112", "198.19.96.10:80", true),
        ],
        matches: vec![
            strong(de, &[Evidence::Isn, Evidence::ClientFingerprint, Evidence::IpId]),
            strong(eb, &[Evidence::Isn]),
        ],
        source: vec![snat("198.18.90.42:51514", "198.19.3.17:40112")],
        destination: vec![],
        reply: reply(ReplyPath::SamePath, None, BACKEND),
        outcome: Outcome::plain(OutcomeKind::Completed),
        seq_shift: Vec::new(),
        syn_missed: None,
        // the first SYN left the NAT on a port the backend still held in TIME_WAIT
        attempts: vec![Attempt {
            capture: BACKEND,
            client: ep("198.19.3.17:40111"),
            server: ep("198.19.96.10:80"),
            time_ns: T0_NS + 2 * HOP - S,
            ending: AttemptEnd::BareAck,
        }],
        data: None,
        identity: None,
        blind: Vec::new(),
        apart: Vec::new(),
        same_tuple: Vec::new(),
        fragments: None,
        app: None,
        exchanges: None,
    };
    let r2 = Request {
        request: 2,
        proto: Proto::Tcp,
        captures: vec![
            seen(S, "198.18.90.42:51600", "198.19.96.10:80", false),
            seen(S + HOP, "198.18.90.42:51600", "198.19.96.10:80", false),
            seen(S + 2 * HOP, "198.19.3.17:40200", "198.19.96.10:80", true),
        ],
        matches: vec![strong(de, &[Evidence::Isn, Evidence::IpId]), strong(eb, &[Evidence::Isn])],
        source: vec![snat("198.18.90.42:51600", "198.19.3.17:40200")],
        destination: vec![],
        reply: Reply {
            // the box that lost the reply said so: host unreachable, seen at backend
            lost_cause: Some(LostCause {
                icmp: IcmpCode { ty: 3, code: 1 },
                by: "198.19.3.1".parse().unwrap(),
                seen_at: BACKEND,
            }),
            // and an un-translated reply reached the client side
            unexpected_source: Some(UnexpectedSource {
                from: ep("198.19.96.10:8080"),
                seen_at: DECAP,
                packet: StrayPacket::SynAck,
            }),
            ..reply(ReplyPath::ReplyLost, Some(eb), BACKEND)
        },
        outcome: Outcome::plain(OutcomeKind::NoReply),
        seq_shift: Vec::new(),
        syn_missed: None,
        attempts: Vec::new(),
        data: None,
        identity: None,
        blind: Vec::new(),
        apart: Vec::new(),
        same_tuple: Vec::new(),
        fragments: None,
        app: None,
        exchanges: None,
    };
    let r3 = Request {
        request: 3,
        proto: Proto::Udp,
        captures: vec![
            seen(2 * S, "198.18.90.43:5353", "198.19.96.11:53", true),
            seen(2 * S + HOP, "198.18.90.43:5353", "198.19.96.11:53", true),
            unseen(false),
        ],
        matches: vec![strong(de, &[Evidence::UdpPayload])],
        source: vec![],
        destination: vec![],
        reply: reply(ReplyPath::SamePath, None, EGRESS),
        outcome: Outcome {
            kind: OutcomeKind::IcmpError,
            by: Some("198.19.3.1".parse().unwrap()),
            origin: Some(Origin::Between(eb)),
            icmp: Some(IcmpCode { ty: 3, code: 13 }),
        },
        seq_shift: Vec::new(),
        syn_missed: None,
        attempts: Vec::new(),
        data: None,
        identity: None,
        blind: Vec::new(),
        apart: Vec::new(),
        same_tuple: Vec::new(),
        fragments: None,
        app: None,
        exchanges: None,
    };
    let r4 = Request {
        request: 4,
        proto: Proto::Tcp,
        captures: vec![
            seen(3 * S, "198.18.90.44:40000", "198.19.96.12:443", true),
            seen(3 * S + HOP, "198.18.90.44:40000", "198.19.96.12:443", true),
            seen(3 * S + 2 * HOP, "198.18.90.44:40000", "198.19.96.12:443", true),
        ],
        matches: vec![
            Match {
                between: de,
                strength: Strength::Ambiguous,
                evidence: Evidences::from([Evidence::ClientFingerprint, Evidence::Time]),
                candidates: vec![
                    Candidate {
                        capture: EGRESS,
                        client: ep("198.18.90.44:40000"),
                        server: ep("198.19.96.12:443"),
                        time_ns: T0_NS + 3 * S + HOP,
                    },
                    Candidate {
                        capture: EGRESS,
                        client: ep("198.18.90.44:40002"),
                        server: ep("198.19.96.12:443"),
                        time_ns: T0_NS + 3 * S + HOP + 211,
                    },
                ],
            },
            Match {
                between: eb,
                strength: Strength::Weak,
                evidence: Evidences::from([Evidence::Ports, Evidence::Time]),
                candidates: vec![],
            },
        ],
        source: vec![],
        destination: vec![],
        reply: reply(ReplyPath::SamePath, None, BACKEND),
        outcome: Outcome::plain(OutcomeKind::Completed),
        seq_shift: Vec::new(),
        syn_missed: None,
        attempts: Vec::new(),
        data: None,
        identity: None,
        blind: Vec::new(),
        apart: Vec::new(),
        same_tuple: Vec::new(),
        fragments: None,
        app: None,
        exchanges: None,
    };
    let long_v6 = "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1";
    let mut r5_hops = vec![
        seen(4 * S, "2001:db8::1", "2001:db8:ffff::99", true),
        seen(4 * S + HOP, "2001:db8::1", "2001:db8:ffff::99", true),
        seen(4 * S + 2 * HOP, "2001:db8::1", long_v6, true),
    ];
    for hop in &mut r5_hops {
        hop.icmp_id = Some(4711);
        hop.icmp_seqs = Some((1, 3));
    }
    let r5 = Request {
        request: 5,
        proto: Proto::Icmp,
        captures: r5_hops,
        matches: vec![strong(de, &[Evidence::IcmpEcho]), strong(eb, &[Evidence::IcmpEcho])],
        source: vec![],
        destination: vec![change(eb, ChangeKind::Dnat, "2001:db8:ffff::99", long_v6)],
        reply: reply(ReplyPath::SamePath, None, BACKEND),
        outcome: Outcome::plain(OutcomeKind::Completed),
        seq_shift: Vec::new(),
        syn_missed: None,
        attempts: Vec::new(),
        data: None,
        identity: None,
        blind: Vec::new(),
        apart: Vec::new(),
        same_tuple: Vec::new(),
        fragments: None,
        app: None,
        exchanges: None,
    };
    let capture =
        |label: &str, offset_ns: i64, spread_ns: i64, samples: u64, method: OffsetMethod| CaptureSummary {
            label: label.to_string(),
            file: format!("{label}.pcap"),
            format: "pcap".into(),
            link_types: vec!["raw".into()],
            overlays: Vec::new(),
            packets: 212,
            flows: 31,
            clock_offset_ns: offset_ns,
            offset_spread_ns: spread_ns,
            offset_samples: samples,
            offset_method: method,
            recorded: Some((T0_NS - 1_000_000_000 + offset_ns, T0_NS + 60_000_000_000 + offset_ns)),
        };
    let boundary = |b: Between, ports: Kept| Boundary {
        between: b,
        delay_ns: Some(80_000),
        ttl_decrement: Some(1),
        ttl_set_to: None,
        ttl_by: Vec::new(),
        ports,
        server_ports: Kept::Kept,
        icmp_id: Kept::Kept,
        mss_clamped: false,
        seq_shift: false,
        seq_shift_by: None,
        tos: Kept::Kept,
        tos_change: None,
        vlan: Kept::Kept,
        vlan_change: None,
        smallest_mtu: None,
        syn_mss: None,
        largest_segment: None,
        fragmentation: None,
    };
    Findings {
        tuplecorr: "0.1.0".into(),
        captures: vec![
            capture("decap", 0, 0, 0, OffsetMethod::Reference),
            capture("egress", 12_000, 4_000, 24, OffsetMethod::RequestReply),
            capture("backend", 2_750_012_400, 4_100, 24, OffsetMethod::RequestReply),
        ],
        boundaries: vec![boundary(de, Kept::Kept), boundary(eb, Kept::Changed)],
        requests: vec![r1, r2, r3, r4, r5],
        unmatched: vec![
            Unmatched { capture: EGRESS, count: 0, flows: vec![] },
            Unmatched { capture: BACKEND, count: 3, flows: vec![] },
        ],
        warnings: vec![WarningOut {
            label: "egress".into(),
            record: Some(18412),
            byte_offset: Some(9437112),
            message: "record cut short: its header says 1514 bytes, the file ends after 306; kept the 18411 records before it".into(),
        }],
    }
}

/// Request 1 of the fixtures turned into a path-MTU black hole: data stopped
/// between egress and backend, the MTU messages seen at egress only.
pub fn black_hole() -> Findings {
    let mut f = findings();
    let r = &mut f.requests[0];
    r.attempts.clear();
    r.outcome = Outcome::plain(OutcomeKind::DataStopped);
    r.data = Some(Box::new(DataPath {
        reached: Some(1),
        stopped: Some(Between { from: 1, to: 2 }),
        stopped_segment: Some(Segment { bytes: 1207, count: 5 }),
        mtu: Some(Box::new(PathMtu {
            mtu: 1100,
            sender: "198.19.1.1".parse().unwrap(),
            v6: false,
            messages: 51,
            seen_at: vec![1],
            lost: Some(Between { from: 0, to: 1 }),
        })),
        ..DataPath::default()
    }));
    f
}

/// Request 1 of [`findings`] as PROXY v1 carries it: the backend sees the SNAT
/// address, and the PROXY line added between egress and backend carries the client.
pub fn proxied_identity() -> Identity {
    Identity {
        at: BACKEND,
        peer: ep("198.19.3.17:40112"),
        carried: Some(CarriedAddress {
            kind: CarrierKind::ProxyV1,
            addr: Some(ep("198.18.90.42").addr),
            port: Some(51514),
        }),
        added: Some(Added::Between(between(EGRESS, BACKEND))),
        preserved: true,
        client_set: None,
    }
}

/// An `X-Forwarded-For` the client sent itself, unchanged at the backend.
pub fn spoofed_identity() -> Identity {
    Identity {
        at: BACKEND,
        peer: ep("198.19.3.17:40112"),
        carried: Some(CarriedAddress {
            kind: CarrierKind::XForwardedFor,
            addr: Some(ep("203.0.113.9").addr),
            port: None,
        }),
        added: Some(Added::ClientSide),
        preserved: false,
        client_set: Some(ep("203.0.113.9").addr),
    }
}

/// A request's fragments: 6 at egress of an 8028-byte datagram, 3 of them at
/// the backend (largest 1396 bytes); the reply's datagram whole at both.
pub fn fragments_lost() -> crate::verdict::Fragments {
    use crate::verdict::{FragDir, FragFlow};
    let dir = |fragments, incomplete, largest_fragment, largest_datagram| FragDir {
        fragments,
        datagrams: 1,
        incomplete,
        largest_fragment,
        largest_datagram,
    };
    let reply = dir(3, 0, 1500, 3000);
    let sent = dir(6, 0, 1500, 8028);
    let arrived = dir(3, 1, 1396, 0);
    crate::verdict::Fragments {
        captures: vec![
            None,
            Some(FragFlow { to_server: sent, to_client: reply }),
            Some(FragFlow { to_server: arrived, to_client: reply }),
        ],
        lost: vec![crate::verdict::FragLoss {
            between: Between { from: 1, to: 2 },
            to_server: true,
            sent,
            arrived,
        }],
    }
}

/// Application facts of every kind, with text a spreadsheet or terminal must
/// not run (request 1: HTTP; 2: TLS; 3: DNS; 4: an HTTP status alone).
pub fn apps() -> [crate::verdict::App; 4] {
    use crate::verdict as v;
    use v::AppField as Field;
    use v::{AppFacts, AppProto};
    let mut http = AppFacts::new(AppProto::Http);
    http.set(Field::Method, b"GET");
    http.set(Field::Target, b"/a?b=1 c");
    http.set(Field::Host, b"-cmd|x");
    http.status = Some(503);
    let mut tls = AppFacts::new(AppProto::Tls);
    tls.set(Field::Sni, b"=app.example");
    for p in [&b"-h2"[..], b"http/1.1", b"a,b"] {
        tls.set(Field::Alpn, p);
    }
    let mut dns = AppFacts::new(AppProto::Dns);
    dns.set(Field::Qname, b"\x02nx\x03app\x07example");
    (dns.qtype, dns.rcode) = (Some(65), Some(3));
    let mut status = AppFacts::new(AppProto::Http);
    status.status = Some(400);
    [
        v::App { at: 0, facts: http },
        v::App { at: 1, facts: tls },
        v::App { at: 0, facts: dns },
        v::App { at: 0, facts: status },
    ]
}
