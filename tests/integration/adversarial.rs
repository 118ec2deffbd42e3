//! Synthetic adversarial cases for the correlator (issue 4): built with
//! `tuplecorr_synth`, decoded record by record and run through flows →
//! correlate → verdict, asserting verdict fields.

use std::net::IpAddr;
use tuplecorr::correlate::correlate;
use tuplecorr::correlate::CorrelateConfig;
use tuplecorr::decode::decode;
use tuplecorr::flows::FlowConfig;
use tuplecorr::flows::{FlowTable, Flows};
use tuplecorr::read::{LinkType, RawRecord};
use tuplecorr::verdict::{
    verdict, Between, CaptureMeta, ChangeKind, Endpoint, Evidence, Findings, Kept, Origin, OutcomeKind,
    ReplyPath, Strength, VerdictOptions,
};
use tuplecorr_synth::{Captures, Echo, Hop, Path, Point, Tcp, Udp};

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

const T0: i64 = 1_795_995_638_000_000_000;
const LABELS: [&str; 3] = ["decap", "egress", "backend"];
const EGRESS_BACKEND: Between = Between { from: 1, to: 2 };

fn ep(addr: &str, port: u16) -> Endpoint {
    Endpoint { addr: ip(addr), port: Some(port) }
}

/// The explanation the report writes for `r`.
fn explain(f: &Findings, r: &tuplecorr::verdict::Request) -> String {
    tuplecorr::report::explain::explain(&tuplecorr::report::words::Words::new(f), r)
}

/// Decodes every packet of every point and runs the later stages.
pub fn run(caps: &Captures, labels: &[&str], config: &CorrelateConfig) -> Findings {
    let flows: Vec<Flows> = caps
        .points
        .iter()
        .map(|pkts| {
            let mut table = FlowTable::new(&FlowConfig::default());
            for (i, (ts, data, orig)) in pkts.iter().enumerate() {
                let rec = RawRecord {
                    ts_ns: *ts,
                    interface: 0,
                    link_type: LinkType::RawIp,
                    data,
                    orig_len: *orig,
                    record: i as u64 + 1,
                    byte_offset: 0,
                };
                let p = decode(&rec).expect("synthetic packets decode");
                table.insert(&p, p.payload(data));
            }
            table.finish()
        })
        .collect();
    let metas: Vec<CaptureMeta> = labels
        .iter()
        .zip(&caps.points)
        .map(|(l, p)| CaptureMeta {
            label: l.to_string(),
            file: format!("{l}.pcap"),
            format: "pcap".into(),
            link_types: vec!["raw".into()],
            packets: p.len() as u64,
            overlays: Vec::new(),
            interfaces: Vec::new(),
            hosts: Vec::new(),
        })
        .collect();
    let corr = correlate(&flows, config);
    verdict(&metas, &flows, &corr, &[], &VerdictOptions::default())
}

fn three_points() -> Vec<Point> {
    vec![Point::default(), Point::default(), Point::default()]
}

/// decap → egress: pod forwards; egress → backend: node masquerades to 198.19.3.17 with a port remap.
fn node_masquerade() -> Vec<Hop> {
    vec![
        Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
        Hop {
            delay_ns: 80_000,
            routed: true,
            snat: Some(ip("198.19.3.17")),
            snat_port: Some(40112),
            ..Hop::default()
        },
    ]
}

#[test]
fn node_masquerade_is_found_between_egress_and_backend() {
    let mut p = Path::new(three_points(), node_masquerade());
    p.tcp(&Tcp::new((ip("198.18.90.42"), 51514), (ip("198.19.96.10"), 80), T0, 1));
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 1);
    let r = &f.requests[0];
    assert!(r.captures.iter().all(|h| h.seen && h.reply_seen));
    assert_eq!(r.source.len(), 1);
    let c = &r.source[0];
    assert_eq!((c.between, c.kind), (EGRESS_BACKEND, ChangeKind::Snat));
    assert_eq!((c.before, c.after), (ep("198.18.90.42", 51514), ep("198.19.3.17", 40112)));
    assert!(r.destination.is_empty());
    assert_eq!(r.reply.path, ReplyPath::SamePath);
    assert_eq!(r.outcome.kind, OutcomeKind::Completed);
    assert!(r.matches.iter().all(|m| m.strength == Strength::Strong && m.evidence.contains(&Evidence::Isn)));
    assert!(r.matches[0].evidence.contains(&Evidence::ClientFingerprint));
    let explanation = explain(&f, r);
    assert!(explanation.contains("egress and backend") && explanation.contains("198.19.3.17"));
    assert_eq!(f.boundaries[1].ports, Kept::Changed);
    assert_eq!(f.boundaries[0].ports, Kept::Kept);
    assert_eq!(f.boundaries[1].ttl_decrement, Some(1));
    let delay = f.boundaries[1].delay_ns.unwrap() as f64 / 1e6;
    assert!((delay - 0.08).abs() < 0.002, "delay {delay}");
}

#[test]
fn reused_tuple_with_new_isn_starts_a_new_request() {
    let mut p = Path::new(three_points(), node_masquerade());
    for i in 0..3u32 {
        let mut t = Tcp::new(
            (ip("198.18.90.42"), 51514),
            (ip("198.19.96.10"), 80),
            T0 + i64::from(i) * 2_000_000_000,
            10 + i,
        );
        t.request = b"GET / HTTP/1.1\r\nHost: same\r\nUser-Agent: same-bytes-every-time\r\n\r\n".to_vec();
        p.tcp(&t);
    }
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 3);
    for r in &f.requests {
        assert!(r.captures.iter().all(|h| h.seen), "request {} not chained", r.request);
        assert_eq!(r.matches.len(), 2);
        assert!(r.matches.iter().all(|m| m.strength == Strength::Strong));
    }
    assert!(f.unmatched.iter().all(|u| u.count == 0));
}

#[test]
fn fifty_identical_health_checks_through_snat_are_told_apart_by_isn() {
    let mut p = Path::new(three_points(), node_masquerade());
    for i in 0..50u32 {
        let mut t = Tcp::new(
            (ip("198.18.90.42"), 40000 + i as u16),
            (ip("198.19.96.10"), 8080),
            T0 + i64::from(i) * 1_000_000_000,
            100 + i,
        );
        t.request =
            b"GET /healthz HTTP/1.1\r\nHost: 198.19.96.10:8080\r\nUser-Agent: kube-probe/1.30\r\n\r\n"
                .to_vec();
        t.response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec();
        p.tcp(&t);
    }
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 50);
    for (i, r) in f.requests.iter().enumerate() {
        let port = 40000 + i;
        assert_eq!(r.captures[0].client, Some(ep("198.18.90.42", port as u16)));
        assert_eq!(r.captures[1].client, Some(ep("198.18.90.42", port as u16)));
        assert_eq!(r.captures[2].client, Some(ep("198.19.3.17", 40112)));
        assert!(r
            .matches
            .iter()
            .all(|m| m.strength == Strength::Strong && m.evidence.contains(&Evidence::Isn)));
    }
}

#[test]
fn identical_udp_probes_inside_the_tolerance_are_ambiguous_not_guessed() {
    // Two clients send identical DNS-like probes at the same instant through
    // masquerade to one address: nothing (not ports, not IP ID) separates them.
    let mut p = Path::new(
        three_points(),
        vec![
            Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
            Hop { delay_ns: 80_000, routed: true, snat: Some(ip("198.19.3.17")), ..Hop::default() },
        ],
    );
    for (i, client) in ["198.18.90.42", "198.18.90.43"].iter().enumerate() {
        p.udp(&Udp {
            client: (ip(client), 5353 + i as u16),
            server: (ip("198.19.96.53"), 53),
            start_ns: T0 + i as i64 * 100_000,
            request:
                b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
                    .to_vec(),
            response: None,
            ip_id: 0,
        });
    }
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 2);
    for r in &f.requests {
        let m = r.matches.iter().find(|m| m.between == EGRESS_BACKEND).expect("a match at egress->backend");
        assert_eq!(m.strength, Strength::Ambiguous, "request {}", r.request);
        assert_eq!(m.candidates.len(), 2);
        assert_eq!(r.matches[0].strength, Strength::Strong, "decap->egress keeps the address: no tie there");
    }
    assert!(explain(&f, &f.requests[0]).contains("ambiguous"));
}

#[test]
fn unanswered_syn_retransmissions_are_one_request_without_reply() {
    let mut p = Path::new(three_points(), node_masquerade());
    let mut t = Tcp::new((ip("198.18.90.42"), 51600), (ip("198.19.96.10"), 443), T0, 7);
    t.unanswered = true;
    t.syn_retries = 3;
    t.lost_after = Some(1);
    p.tcp(&t);
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 1);
    let r = &f.requests[0];
    assert_eq!(r.captures[0].packets_to_server, Some(4));
    assert!(r.captures[1].seen && !r.captures[2].seen);
    assert_eq!(r.reply.path, ReplyPath::NoReply);
    assert_eq!(r.reply.reached, Some(1), "egress");
    assert_eq!(r.outcome.kind, OutcomeKind::NoReply);
}

#[test]
fn gro_merged_segments_match_mss_sized_ones() {
    let points =
        vec![Point { segment: 65_000, ..Point::default() }, Point { segment: 536, ..Point::default() }];
    let mut p = Path::new(points, vec![Hop { delay_ns: 30_000, routed: true, ..Hop::default() }]);
    let mut t = Tcp::new((ip("198.18.90.42"), 51700), (ip("198.19.96.10"), 80), T0, 9);
    t.request = tuplecorr_synth::response_body(5, 2000); // a 2000-byte upload
    p.tcp(&t);
    let caps = p.finish();
    assert!(caps.points[1].len() > caps.points[0].len() + 4, "segmentation really differs");
    let f = run(&caps, &["decap", "egress"], &CorrelateConfig::default());
    let m = &f.requests[0].matches[0];
    assert!(
        m.evidence.contains(&Evidence::ClientFingerprint)
            && m.evidence.contains(&Evidence::ServerFingerprint)
    );
    assert_eq!(f.requests[0].outcome.kind, OutcomeKind::Completed);
}

#[test]
fn snaplen_96_side_matches_the_full_side() {
    let points = vec![Point { snaplen: 96, ..Point::default() }, Point::default()];
    let mut p = Path::new(
        points,
        vec![Hop { delay_ns: 30_000, routed: true, snat: Some(ip("198.19.3.17")), ..Hop::default() }],
    );
    for i in 0..5u32 {
        p.tcp(&Tcp::new(
            (ip("198.18.90.42"), 51800 + i as u16),
            (ip("198.19.96.10"), 80),
            T0 + i64::from(i) * 300_000_000,
            20 + i,
        ));
    }
    let f = run(&p.finish(), &["decap", "egress"], &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 5);
    for r in &f.requests {
        assert!(r.captures[1].seen);
        assert_eq!(r.matches[0].strength, Strength::Strong);
        assert_eq!(r.source[0].kind, ChangeKind::Snat);
        assert_eq!(r.outcome.kind, OutcomeKind::Completed);
    }
}

#[test]
fn isn_randomizing_middlebox_is_a_seq_shift_trait_not_a_proxy() {
    let hops = vec![Hop { delay_ns: 50_000, routed: true, seq_shift: 0x1234_5678, ..Hop::default() }];
    let mut p = Path::new(vec![Point::default(), Point::default()], hops);
    p.tcp(&Tcp::new((ip("198.18.90.42"), 51900), (ip("198.19.96.10"), 80), T0, 31));
    let f = run(&p.finish(), &["decap", "egress"], &CorrelateConfig::default());
    let r = &f.requests[0];
    assert!(r.captures[1].seen);
    assert!(r.matches[0].evidence.contains(&Evidence::SeqShift), "{:?}", r.matches[0]);
    assert!(r.source.is_empty(), "not a proxy: {:?}", r.source);
    assert!(f.boundaries[0].seq_shift);
}

#[test]
fn terminating_proxy_is_reported_as_proxy_on_the_source_side() {
    let hops = vec![
        Hop { delay_ns: 50_000, proxy: Some((ip("198.18.10.2"), 33000)), ..Hop::default() },
        Hop { delay_ns: 80_000, routed: true, ..Hop::default() },
    ];
    let mut p = Path::new(three_points(), hops);
    p.tcp(&Tcp::new((ip("198.18.90.42"), 52000), (ip("198.19.96.10"), 80), T0, 41));
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    let r = &f.requests[0];
    assert!(r.captures.iter().all(|h| h.seen), "{r:#?}");
    let c = &r.source[0];
    assert_eq!((c.between, c.kind), (Between { from: 0, to: 1 }, ChangeKind::Proxy), "{:?}", r.matches);
    assert_eq!(c.after, ep("198.18.10.2", 33000));
    assert!(!r.matches[0].evidence.contains(&Evidence::Isn));
    assert!(r.matches[0].evidence.contains(&Evidence::ClientFingerprint));
    assert!(!f.boundaries[0].seq_shift);
}

#[test]
fn background_flows_at_one_point_match_nothing() {
    let mut p = Path::new(three_points(), node_masquerade());
    p.tcp(&Tcp::new((ip("198.18.90.42"), 52100), (ip("198.19.96.10"), 80), T0, 51));
    for i in 0..4u32 {
        // Node-local traffic seen only at the backend, at the same moments.
        p.background_tcp(
            2,
            &Tcp::new(
                (ip("198.19.3.17"), 60000 + i as u16),
                (ip("198.19.96.10"), 80),
                T0 + i64::from(i) * 1000,
                900 + i,
            ),
        );
    }
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 1);
    assert_eq!(f.unmatched.iter().find(|u| u.capture == 2).unwrap().count, 4, "backend");
    assert_eq!(f.requests[0].captures[2].client, Some(ep("198.19.3.17", 40112)));
}

#[test]
fn request_missing_at_the_middle_capture_is_still_chained() {
    let mut p = Path::new(three_points(), node_masquerade());
    let mut t = Tcp::new((ip("198.18.90.42"), 52200), (ip("198.19.96.10"), 80), T0, 61);
    t.only_at = Some(vec![0, 2]);
    p.tcp(&t);
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    let r = &f.requests[0];
    assert!(r.captures[0].seen && !r.captures[1].seen && r.captures[2].seen);
    assert_eq!(r.matches[0].between, Between { from: 0, to: 2 });
    assert_eq!(r.source[0].between, Between { from: 0, to: 2 });
    assert_eq!(r.reply.path, ReplyPath::SamePath);
}

#[test]
fn reply_seen_at_backend_but_not_egress_is_reply_lost() {
    let mut p = Path::new(three_points(), node_masquerade());
    let mut t = Tcp::new((ip("198.18.90.42"), 52300), (ip("198.19.96.10"), 80), T0, 71);
    t.reply_lost_before = Some(2);
    p.tcp(&t);
    let f =
        run(&p.finish(), &LABELS, &CorrelateConfig { tolerance_ns: Some(1_000_000), ..Default::default() });
    let r = &f.requests[0];
    assert_eq!(r.reply.path, ReplyPath::ReplyLost);
    assert_eq!(r.reply.lost_between, Some(EGRESS_BACKEND));
    assert!(explain(&f, r).contains("not at egress"));
}

#[test]
fn clock_offsets_of_both_signs_are_estimated_and_removed() {
    let points = vec![
        Point::default(),
        Point { clock_offset_ns: 2_750_000_000, ..Point::default() },
        Point { clock_offset_ns: -1_300_000_000, ..Point::default() },
    ];
    let mut p = Path::new(points, node_masquerade());
    for i in 0..20u32 {
        p.tcp(&Tcp::new(
            (ip("198.18.90.42"), 53000 + i as u16),
            (ip("198.19.96.10"), 80),
            T0 + i64::from(i) * 50_000_000,
            200 + i,
        ));
    }
    p.udp(&Udp {
        client: (ip("198.18.90.42"), 5000),
        server: (ip("198.19.96.53"), 53),
        start_ns: T0 + 5_000_000,
        request: b"query-one-two-three-four-five-six".to_vec(),
        response: Some(b"answer".to_vec()),
        ip_id: 0,
    });
    p.echo(&Echo {
        client: ip("198.18.90.42"),
        server: ip("198.19.96.10"),
        start_ns: T0 + 7_000_000,
        id: 0x4242,
        count: 3,
        payload: b"abcdefghijklmnopqrstuvwabcdefghi".to_vec(),
        answered: true,
    });
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    let offset_ms = |c: usize| f.captures[c].clock_offset_ns as f64 / 1e6;
    assert!((offset_ms(1) - 2750.0).abs() < 1.0, "{}", offset_ms(1));
    assert!((offset_ms(2) + 1300.0).abs() < 1.0, "{}", offset_ms(2));
    assert_eq!(f.requests.len(), 22);
    assert!(f.requests.iter().all(|r| r.captures.iter().all(|h| h.seen)));
    let echo = f.requests.iter().find(|r| r.proto == tuplecorr::verdict::Proto::Icmp).unwrap();
    assert_eq!(echo.outcome.kind, OutcomeKind::Completed);
    assert_eq!(echo.matches[1].evidence[0], Evidence::IcmpEcho);
    assert_eq!(echo.captures[2].client, Some(Endpoint { addr: ip("198.19.3.17"), port: None }));
    assert_ne!(echo.captures[2].icmp_id, echo.captures[0].icmp_id, "NAT rewrote the identifier");
    assert_eq!(f.boundaries[1].icmp_id, Kept::Changed);
    let udp = f.requests.iter().find(|r| r.proto == tuplecorr::verdict::Proto::Udp).unwrap();
    assert_eq!(udp.matches[1].evidence[0], Evidence::UdpPayload);
    // Times are on capture 1's clock: the backend sees the SYN after decap.
    let r = &f.requests[0];
    assert!(r.captures[2].time_ns > r.captures[0].time_ns);
}

#[test]
fn manual_offset_overrides_the_estimate() {
    let points = vec![Point::default(), Point { clock_offset_ns: 5_000_000_000, ..Point::default() }];
    let mut p = Path::new(points, vec![Hop { delay_ns: 100_000, routed: true, ..Hop::default() }]);
    p.tcp(&Tcp::new((ip("198.18.90.42"), 54000), (ip("198.19.96.10"), 80), T0, 300));
    let config = CorrelateConfig { offsets_ns: vec![(1, 5_000_000_000)], ..Default::default() };
    let f = run(&p.finish(), &["decap", "egress"], &config);
    assert_eq!(f.captures[1].clock_offset_ns, 5_000_000_000);
    assert_eq!(f.captures[1].offset_method, tuplecorr::verdict::OffsetMethod::Manual);
    assert!(f.requests[0].captures[1].seen);
}

#[test]
fn server_reset_and_its_origin() {
    let mut p = Path::new(three_points(), node_masquerade());
    let mut t = Tcp::new((ip("198.18.90.42"), 54100), (ip("198.19.96.10"), 81), T0, 400);
    t.reset = true;
    p.tcp(&t);
    let f = run(&p.finish(), &LABELS, &CorrelateConfig::default());
    let r = &f.requests[0];
    assert_eq!(r.outcome.kind, OutcomeKind::Reset);
    assert_eq!(r.outcome.by, Some(ip("198.19.96.10")));
    assert_eq!(r.outcome.origin, Some(Origin::Capture(2)), "backend");
}

#[test]
fn capture_started_mid_connection_is_midstream_and_still_chained() {
    let mut p = Path::new(three_points(), node_masquerade());
    p.tcp(&Tcp::new((ip("198.18.90.42"), 52400), (ip("198.19.96.10"), 80), T0, 81));
    let mut caps = p.finish();
    for point in &mut caps.points {
        point.drain(..3); // SYN, SYN-ACK, handshake ACK happened before tcpdump started
    }
    let f = run(&caps, &LABELS, &CorrelateConfig::default());
    assert_eq!(f.requests.len(), 1);
    let r = &f.requests[0];
    assert_eq!(r.outcome.kind, OutcomeKind::Midstream);
    assert_eq!(r.captures[0].server, Some(ep("198.19.96.10", 80)), "oriented by the well-known port");
    assert!(r.captures.iter().all(|h| h.seen));
    assert!(r.matches.iter().all(|m| m.evidence.contains(&Evidence::ClientFingerprint)));
    assert_eq!(r.source[0].between, EGRESS_BACKEND);
}
