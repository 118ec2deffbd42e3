//! Overlays peeled: a capture point that sees the path's packets inside VXLAN
//! or GRE matches the same requests as one that sees them plain, and the
//! reports say which overlay was peeled there; a capture of encrypted tunnel
//! traffic gets one warning.

use tuplecorr::decode::{Overlay, OverlayKind};
use tuplecorr::drive::pipeline::analyze_bytes;
use tuplecorr::drive::Config;
use tuplecorr::verdict::Findings;

/// Connections of the deterministic mix, per point (decap, egress, backend).
fn mix(connections: u32) -> Vec<Vec<(i64, Vec<u8>, u32)>> {
    let mut points = vec![Vec::new(); 3];
    for c in 0..connections {
        let (captures, _) = tuplecorr_synth::mix_connection(c, 11, 300);
        for (k, pkts) in captures.points.into_iter().enumerate() {
            points[k].extend(pkts);
        }
    }
    for p in &mut points {
        p.sort_by_key(|(t, _, _)| *t);
    }
    points
}

/// An outer IPv4 header 198.18.200.1 -> 198.18.200.2 around `payload`.
fn outer_v4(protocol: u8, payload: &[u8]) -> Vec<u8> {
    let total = u16::try_from(20 + payload.len()).expect("fits").to_be_bytes();
    let mut b = vec![
        0x45, 0, total[0], total[1], 0, 7, 0x40, 0, 64, protocol, 0, 0, 198, 18, 200, 1, 198, 18, 200, 2,
    ];
    b.extend_from_slice(payload);
    b
}

/// `ip` in Ethernet in VXLAN (VNI 42) in UDP 4789.
fn vxlan(ip: &[u8]) -> Vec<u8> {
    let ethertype: [u8; 2] = if ip[0] >> 4 == 6 { [0x86, 0xdd] } else { [0x08, 0x00] };
    let mut inner = vec![0x08, 0, 0, 0, 0, 0, 42, 0];
    inner.extend_from_slice(&[0x0a, 0, 0, 0, 0, 1, 0x0a, 0, 0, 0, 0, 2, ethertype[0], ethertype[1]]);
    inner.extend_from_slice(ip);
    let len = u16::try_from(8 + inner.len()).expect("fits").to_be_bytes();
    let mut udp = vec![0xc3, 0x50, 0x12, 0xb5, len[0], len[1], 0, 0];
    udp.extend_from_slice(&inner);
    outer_v4(17, &udp)
}

/// `ip` in GRE with a key (7) and a sequence number.
fn gre(ip: &[u8]) -> Vec<u8> {
    let mut g = vec![0x30, 0x00, 0x08, 0x00, 0, 0, 0, 7, 0, 0, 0, 1];
    g.extend_from_slice(ip);
    outer_v4(47, &g)
}

fn pcap(packets: &[(i64, Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    tuplecorr_synth::write_pcap(&mut out, 262_144, packets).expect("in memory");
    out
}

fn wrapped(packets: &[(i64, Vec<u8>, u32)], wrap: fn(&[u8]) -> Vec<u8>) -> Vec<(i64, Vec<u8>, u32)> {
    packets
        .iter()
        .map(|(t, b, _)| {
            let w = wrap(b);
            let len = u32::try_from(w.len()).expect("fits");
            (*t, w, len)
        })
        .collect()
}

fn run(files: &[Vec<u8>]) -> Findings {
    let labels = ["decap", "egress", "backend"];
    let captures: Vec<(&str, &[u8])> = labels.iter().copied().zip(files.iter().map(Vec::as_slice)).collect();
    analyze_bytes(&Config::default(), &captures).expect("analysis")
}

#[test]
fn requests_seen_inside_vxlan_or_gre_match_as_if_plain_and_the_overlay_is_named() {
    let points = mix(30);
    let plain: Vec<Vec<u8>> = points.iter().map(|p| pcap(p)).collect();
    let expected = run(&plain);
    assert!(expected.requests.len() >= 25, "{}", expected.requests.len());
    assert!(expected.captures.iter().all(|c| c.overlays.is_empty()));

    let egress_packets = points[1].len() as u64;
    let backend_packets = points[2].len() as u64;
    let files = vec![plain[0].clone(), pcap(&wrapped(&points[1], vxlan)), pcap(&wrapped(&points[2], gre))];
    let found = run(&files);
    // Every request, with every endpoint, verdict and match, as without the overlays.
    assert_eq!(found.requests, expected.requests);
    assert_eq!(found.boundaries.len(), expected.boundaries.len());
    assert!(found.captures[0].overlays.is_empty());
    assert_eq!(
        found.captures[1].overlays,
        vec![(Overlay { kind: OverlayKind::Vxlan, id: Some(42) }, egress_packets)]
    );
    assert_eq!(
        found.captures[2].overlays,
        vec![(Overlay { kind: OverlayKind::Gre, id: Some(7) }, backend_packets)]
    );
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);

    let mut text = Vec::new();
    tuplecorr::report::summary::write_summary(&found, false, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("Overlays peeled"), "{text}");
    assert!(text.contains(&format!("  egress   VXLAN vni 42: {egress_packets} packets\n")), "{text}");
    assert!(text.contains(&format!("  backend  GRE key 7: {backend_packets} packets\n")), "{text}");

    let mut json = Vec::new();
    tuplecorr::report::json::write_json(&found, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert!(v["captures"][0].get("overlays").is_none(), "no key without an overlay");
    assert_eq!(
        v["captures"][1]["overlays"],
        serde_json::json!([{"overlay": "vxlan", "vni": 42, "packets": egress_packets}])
    );
    assert_eq!(
        v["captures"][2]["overlays"],
        serde_json::json!([{"overlay": "gre", "key": 7, "packets": backend_packets}])
    );
    // The JSON report reads back with its overlays.
    let wire: tuplecorr::report::wire::Findings = serde_json::from_slice(&json).unwrap();
    let back = wire.into_typed().expect("reads back");
    assert_eq!(back.captures[1].overlays, found.captures[1].overlays);
}

#[test]
fn a_capture_of_wireguard_only_is_named_in_one_warning() {
    let points = mix(5);
    let plain: Vec<Vec<u8>> = points.iter().map(|p| pcap(p)).collect();
    // The pod's uplink: the same packets as WireGuard data messages (type 4, a
    // counter, ciphertext padded to 16 bytes) between the two tunnel ends.
    let wan: Vec<(i64, Vec<u8>, u32)> = points[0]
        .iter()
        .map(|(t, b, _)| {
            let mut msg = vec![4, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0];
            msg.extend(std::iter::repeat_n(0x5a, b.len().div_ceil(16) * 16 + 16));
            let len = u16::try_from(8 + msg.len()).unwrap().to_be_bytes();
            let mut udp = vec![0xca, 0x6c, 0xca, 0x6c, len[0], len[1], 0, 0];
            udp.extend_from_slice(&msg);
            let w = outer_v4(17, &udp);
            let n = u32::try_from(w.len()).unwrap();
            (*t, w, n)
        })
        .collect();
    let files = vec![pcap(&wan), plain[1].clone(), plain[2].clone()];
    let found = run(&files);
    let warned: Vec<&str> = found
        .warnings
        .iter()
        .filter(|w| w.message.contains("encrypted tunnel"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", found.warnings);
    assert!(
        warned[0].starts_with("this capture holds only encrypted tunnel traffic (WireGuard: "),
        "{}",
        warned[0]
    );
    assert!(warned[0]
        .ends_with("capture on the decapsulated interface (the tunnel's inner side: wg0, tun0, ...)"));
    assert_eq!(
        found.warnings.iter().find(|w| w.message.contains("encrypted")).map(|w| w.label.as_str()),
        Some("decap")
    );
    // The plain captures are not warned.
    let plain_run = run(&plain);
    assert!(plain_run.warnings.iter().all(|w| !w.message.contains("encrypted")));
}

#[test]
fn inspect_lists_the_overlays_and_encrypted_tunnels_of_a_capture() {
    let points = mix(3);
    let mut packets = wrapped(&points[1], vxlan);
    let n_vxlan = packets.len() as u64;
    // Two ESP packets (IP protocol 50) among them.
    for k in 0..2 {
        let esp = outer_v4(50, &[0, 0, 0x10, 0x01, 0, 0, 0, k, 0xde, 0xad, 0xbe, 0xef]);
        let len = u32::try_from(esp.len()).unwrap();
        packets.push((tuplecorr_synth::MIX_T0 + i64::from(k), esp, len));
    }
    let bytes = pcap(&packets);
    let flows = tuplecorr::flows::FlowConfig::default();
    let i = tuplecorr::inspect::inspect_bytes("underlay", &bytes, &flows).unwrap();
    let mut json = Vec::new();
    tuplecorr::inspect::write_json(std::slice::from_ref(&i), &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v[0]["overlays"], serde_json::json!([{"overlay": "vxlan", "vni": 42, "packets": n_vxlan}]));
    assert_eq!(v[0]["encrypted_tunnels"], serde_json::json!([{"tunnel": "IPsec ESP", "packets": 2}]));
    // The inner flows are the ones counted and listed.
    assert!(i.top_flows.iter().all(|f| !f.flow.contains("198.18.200.")), "{:?}", i.top_flows);
    let mut text = Vec::new();
    tuplecorr::inspect::write_table(std::slice::from_ref(&i), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(&format!("\noverlays     VXLAN vni 42: {n_vxlan} packets\n")), "{text}");
    assert!(text.contains("\nencrypted    IPsec ESP: 2 packets\n"), "{text}");
    // A plain capture has neither key.
    let plain = tuplecorr::inspect::inspect_bytes("egress", &pcap(&points[1]), &flows).unwrap();
    let mut json = Vec::new();
    tuplecorr::inspect::write_json(&[plain], &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert!(v[0].get("overlays").is_none() && v[0].get("encrypted_tunnels").is_none());
}

/// Corpus captures with overlays (and one with PPTP's enhanced GRE, which is
/// not peeled), from `index.tsv`.
const CORPUS_TUNNELS: &[&str] = &[
    "libpcap__filter__vxlan.pcap",
    "pcpp__Packet++Test__Vxlan1.pcap",
    "libpcap__filter__geneve.pcap",
    "tcpdump__geneve-gcp.pcap",
    "zeek__tunnels__geneve-truncated.pcapng",
    "zeek__tunnels__gre-sample.pcap",
    "zeek__tunnels__gre-within-gre.pcap",
    "zeek__tunnels__4in4.pcap",
    "zeek__tunnels__4in6.pcap",
    "zeek__tunnels__6in4.pcap",
    "tcpdump__pptp.pcap",
];

/// tshark's view of the outermost overlay of each packet that carries an inner
/// IP packet: (wire name, VNI/key) → packets. Read from `frame.protocols`
/// (`eth:ethertype:ip:udp:vxlan:eth:ethertype:ip:icmp`).
fn tshark_overlays(path: &std::path::Path) -> std::collections::BTreeMap<(String, Option<u32>), u64> {
    let out = std::process::Command::new("tshark")
        .args(["-n", "-r"])
        .arg(path)
        .args(["-T", "fields", "-E", "occurrence=f", "-e", "frame.protocols"])
        .args(["-e", "vxlan.vni", "-e", "geneve.vni", "-e", "gre.key"])
        .output()
        .expect("tshark runs");
    let mut counts = std::collections::BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let layers: Vec<&str> = cols[0].split(':').collect();
        let id = |n: usize| {
            let v = cols.get(n)?;
            match v.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => v.parse::<u32>().ok(),
            }
        };
        let Some(first) = layers.iter().position(|l| *l == "ip" || *l == "ipv6") else { continue };
        let rest = &layers[first + 1..];
        let inner_ip = |from: usize| rest.iter().skip(from).any(|l| *l == "ip" || *l == "ipv6");
        let found = match rest {
            ["udp", "vxlan", ..] if inner_ip(2) => Some(("vxlan", id(1))),
            ["udp", "geneve", ..] if inner_ip(2) => Some(("geneve", id(2))),
            ["gre", "eth", ..] if inner_ip(1) => Some(("gre-ethernet", id(3))),
            ["gre", "ip" | "ipv6", ..] => Some(("gre", id(3))),
            ["ip", ..] if layers[first] == "ip" => Some(("ipip", None)),
            ["ipv6", ..] if layers[first] == "ip" => Some(("6in4", None)),
            ["ip", ..] => Some(("4in6", None)),
            ["ipv6", ..] => Some(("ip6ip6", None)),
            _ => None,
        };
        if let Some((kind, id)) = found {
            *counts.entry((kind.to_string(), id)).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn corpus_overlays_are_peeled_as_tshark_sees_them() {
    crate::util::require_corpus!();
    if std::process::Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("skipped: tshark not installed");
        return;
    }
    let flows = tuplecorr::flows::FlowConfig::default();
    let mut peeled = 0;
    for name in CORPUS_TUNNELS {
        let path = crate::util::corpus_dir().join(name);
        let want = tshark_overlays(&path);
        let bytes = std::fs::read(&path).unwrap();
        let i = tuplecorr::inspect::inspect_bytes(name, &bytes, &flows).unwrap();
        let got: std::collections::BTreeMap<(String, Option<u32>), u64> =
            i.overlays.iter().map(|o| ((o.overlay.clone(), o.vni.or(o.key)), o.packets)).collect();
        assert_eq!(got, want, "{name}");
        peeled += got.values().sum::<u64>();
        // A damaged overlay is warned about once; an intact one never.
        let damaged = i.warnings.iter().filter(|w| w.message.contains("damaged overlay")).count();
        assert_eq!(damaged, usize::from(name.contains("truncated")), "{name}: {:?}", i.warnings);
    }
    assert!(peeled > 600, "{peeled}");
}

/// `ip` behind an Ethernet header, an MPLS label stack (transport label
/// 16001, service label 299776) and, with `pseudowire`, a control word and
/// an inner Ethernet frame (Ethernet over MPLS).
fn mpls(ip: &[u8], pseudowire: bool) -> Vec<u8> {
    let ethernet = |ty: [u8; 2]| [[0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2].as_slice(), &ty].concat();
    let mut f = ethernet([0x88, 0x47]);
    f.extend_from_slice(&((16_001u32 << 12) | 63).to_be_bytes());
    f.extend_from_slice(&((299_776u32 << 12) | 0x100 | 63).to_be_bytes());
    if pseudowire {
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend(ethernet(if ip[0] >> 4 == 6 { [0x86, 0xdd] } else { [0x08, 0x00] }));
    }
    f.extend_from_slice(ip);
    f
}

/// A pcap of Ethernet frames (LINKTYPE_ETHERNET).
fn pcap_ethernet(packets: &[(i64, Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = pcap(packets);
    out[20..24].copy_from_slice(&1u32.to_le_bytes());
    out
}

/// A provider core seen at two points: MPLS-labelled packets (egress), an
/// Ethernet pseudowire over MPLS (backend). Their requests match as if plain,
/// and each capture says which label its packets came under (issue 30).
#[test]
fn requests_seen_under_mpls_labels_match_as_if_plain_and_the_label_is_named() {
    let points = mix(30);
    let plain: Vec<Vec<u8>> = points.iter().map(|p| pcap(p)).collect();
    let expected = run(&plain);
    let labelled = pcap_ethernet(&wrapped(&points[1], |ip| mpls(ip, false)));
    let pseudowire = pcap_ethernet(&wrapped(&points[2], |ip| mpls(ip, true)));
    let found = run(&[plain[0].clone(), labelled.clone(), pseudowire.clone()]);
    assert_eq!(found.requests, expected.requests);
    let under = |n: usize| vec![(Overlay { kind: OverlayKind::Mpls, id: Some(16_001) }, n as u64)];
    assert_eq!(found.captures[1].overlays, under(points[1].len()));
    assert_eq!(found.captures[2].overlays, under(points[2].len()));
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    let mut text = Vec::new();
    tuplecorr::report::summary::write_summary(&found, false, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(&format!("  egress   MPLS label 16001: {} packets\n", points[1].len())), "{text}");
    let mut json = Vec::new();
    tuplecorr::report::json::write_json(&found, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        v["captures"][2]["overlays"],
        serde_json::json!([{"overlay": "mpls", "label": 16001, "packets": points[2].len()}])
    );
    let wire: tuplecorr::report::wire::Findings = serde_json::from_slice(&json).unwrap();
    assert_eq!(wire.into_typed().unwrap().captures[2].overlays, found.captures[2].overlays);
    // The frames are MPLS as Wireshark reads it: every one labelled, and the
    // same IP packets inside (the pseudowire's payload told to it: Wireshark's
    // heuristic takes a control word of zeros for the start of a MAC address).
    if std::process::Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("skipped the tshark check: tshark is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, n, payload) in [
        ("l.pcap", &labelled, points[1].len(), None),
        ("pw.pcap", &pseudowire, points[2].len(), Some("mpls.label==299776,pwethcw")),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let count = |filter: &str| {
            let out = std::process::Command::new("tshark")
                .arg("-n")
                .args(payload.iter().flat_map(|p| ["-d", p]))
                .arg("-r")
                .arg(&path)
                .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).lines().count()
        };
        assert_eq!((count("mpls.label == 16001"), count("ip or ipv6")), (n, n), "{name}");
    }
}
