//! IP fragments (issue 32): a fragmented UDP datagram counts as one packet
//! with its full size at every point, whatever order its fragments came in,
//! and a fragment lost between two points is located there. Captures are
//! made here (raw IPv4, fragments cut as Linux cuts them at MTU 1500), run
//! through the binary; assertions are on its JSON.

use crate::matching::run_json;
use serde_json::Value;

const T0: i64 = 1_795_995_638_000_000_000;
const MS: i64 = 1_000_000;

/// IPv4 packets of one UDP datagram `src:sport -> dst:dport` carrying
/// `payload`, cut into fragments of at most `mtu` bytes (MF, offsets in
/// 8-byte units), IP id `id`, TTL `ttl`.
fn udp_fragments(
    src: [u8; 4],
    dst: [u8; 4],
    ports: (u16, u16),
    id: u16,
    ttl: u8,
    payload: &[u8],
    mtu: usize,
) -> Vec<Vec<u8>> {
    let mut data = Vec::with_capacity(8 + payload.len());
    data.extend_from_slice(&ports.0.to_be_bytes());
    data.extend_from_slice(&ports.1.to_be_bytes());
    data.extend_from_slice(&u16::try_from(8 + payload.len()).unwrap().to_be_bytes());
    data.extend_from_slice(&[0, 0]);
    data.extend_from_slice(payload);
    let step = (mtu - 20) / 8 * 8;
    data.chunks(step)
        .enumerate()
        .map(|(k, chunk)| {
            let offset = k * step;
            let more = offset + chunk.len() < data.len();
            let total = u16::try_from(20 + chunk.len()).unwrap().to_be_bytes();
            let field = (u16::try_from(offset / 8).unwrap() | if more { 0x2000 } else { 0 }).to_be_bytes();
            let idb = id.to_be_bytes();
            let mut b = vec![0x45, 0, total[0], total[1], idb[0], idb[1], field[0], field[1], ttl, 17, 0, 0];
            b.extend_from_slice(&src);
            b.extend_from_slice(&dst);
            b.extend_from_slice(chunk);
            b
        })
        .collect()
}

fn body(k: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(k)).collect()
}

fn records(ts: i64, packets: Vec<Vec<u8>>) -> Vec<(i64, Vec<u8>, u32)> {
    packets
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let len = p.len() as u32;
            (ts + i as i64 * 10_000, p, len)
        })
        .collect()
}

fn requests(v: &Value) -> &Vec<Value> {
    v["requests"].as_array().expect("requests")
}

/// Three 5000-byte datagrams from 198.18.90.42 through a NAT (source becomes
/// 198.19.3.17 between egress and backend, ports and IP id kept, TTL - 1).
/// Datagram 1 arrives whole at both; datagram 2's fragments reach the backend
/// first fragment last; datagram 3 loses its third fragment on the way. The
/// backend answers the two it received whole with a 3000-byte datagram
/// (fragmented too).
fn nat_run() -> Value {
    let (client, nat, server) = ([198, 18, 90, 42], [198, 19, 3, 17], [198, 19, 96, 10]);
    let (mut egress, mut backend) = (Vec::new(), Vec::new());
    for k in 0..3u8 {
        let t = T0 + i64::from(k) * 100 * MS;
        let ports = (40000 + u16::from(k), 9000);
        let id = 0x1000 + u16::from(k);
        let payload = body(k, 4972);
        egress.extend(records(t, udp_fragments(client, server, ports, id, 64, &payload, 1500)));
        let mut there = udp_fragments(nat, server, ports, id, 63, &payload, 1500);
        match k {
            1 => there.reverse(),
            2 => {
                there.remove(2);
            }
            _ => {}
        }
        backend.extend(records(t + MS, there));
        if k != 2 {
            let reply = body(100 + k, 2972);
            let back = (ports.1, ports.0);
            let rid = 0x2000 + u16::from(k);
            backend.extend(records(t + 5 * MS, udp_fragments(server, nat, back, rid, 64, &reply, 1500)));
            egress.extend(records(t + 6 * MS, udp_fragments(server, client, back, rid, 63, &reply, 1500)));
        }
    }
    egress.sort_by_key(|r| r.0);
    backend.sort_by_key(|r| r.0);
    run_json(&[egress, backend], &["egress", "backend"], &[])
}

#[test]
fn a_fragmented_datagram_is_one_packet_of_its_full_size_at_every_point() {
    let v = nat_run();
    let reqs = requests(&v);
    assert_eq!(reqs.len(), 3, "{v:#}");
    for (k, r) in reqs.iter().take(2).enumerate() {
        for hop in r["captures"].as_array().unwrap() {
            assert_eq!(hop["seen"], true, "request {k}: {hop}");
            assert_eq!(
                (hop["packets_to_server"].as_u64(), hop["bytes_to_server"].as_u64()),
                (Some(1), Some(5000))
            );
            assert_eq!(
                (hop["packets_to_client"].as_u64(), hop["bytes_to_client"].as_u64()),
                (Some(1), Some(3000))
            );
        }
        assert_eq!(r["matches"][0]["strength"], "strong", "{r:#}");
        assert_eq!(r["outcome"]["kind"], "completed");
        let f = &r["fragments"];
        let labels: Vec<&str> =
            f["captures"].as_array().unwrap().iter().map(|h| h["label"].as_str().unwrap()).collect();
        assert_eq!(labels, ["egress", "backend"]);
        for h in f["captures"].as_array().unwrap() {
            let up = &h["to_server"];
            assert_eq!(
                (
                    &up["fragments"],
                    &up["datagrams"],
                    &up["incomplete"],
                    &up["largest_fragment"],
                    &up["largest_datagram"]
                ),
                (&Value::from(4), &Value::from(1), &Value::from(0), &Value::from(1500), &Value::from(5000)),
                "{h}"
            );
            assert_eq!(
                (&h["to_client"]["fragments"], &h["to_client"]["largest_datagram"]),
                (&Value::from(3), &Value::from(3000))
            );
        }
        assert_eq!(f["lost"], Value::Array(Vec::new()));
        assert!(!r["explanation"].as_str().unwrap().contains("fragment"), "{}", r["explanation"]);
    }
}

#[test]
fn a_fragment_lost_between_two_points_is_located_there() {
    let v = nat_run();
    let r = &requests(&v)[2];
    let (egress, backend) = (&r["captures"][0], &r["captures"][1]);
    assert_eq!(
        (egress["packets_to_server"].as_u64(), egress["bytes_to_server"].as_u64()),
        (Some(1), Some(5000))
    );
    // Still one packet at the backend, of the bytes that arrived (3 of 4 fragments).
    assert_eq!(
        (backend["packets_to_server"].as_u64(), backend["bytes_to_server"].as_u64()),
        (Some(1), Some(5000 - 1480))
    );
    assert_eq!(r["reply"]["path"], "no-reply");
    let lost = &r["fragments"]["lost"];
    assert_eq!(
        lost,
        &serde_json::json!([{
            "between": "egress->backend", "direction": "request",
            "fragments_sent": 4, "datagrams": 1, "datagram_bytes": 5000,
            "fragments_arrived": 3, "datagrams_arrived": 1, "incomplete": 1, "largest_passed": 1500
        }])
    );
    let text = r["explanation"].as_str().unwrap();
    assert!(
        text.contains(
            "1 of 4 fragments of a datagram of 5000 bytes lost between egress and backend (downstream of the pod); \
             the largest fragment that passed was 1500 bytes"
        ),
        "{text}"
    );
    // The boundary's trait, over every request: 5 datagrams whole at the side they came from.
    let b = &v["boundaries"][0]["fragmentation"];
    assert_eq!(
        b,
        &serde_json::json!({"datagrams": 5, "incomplete": 1, "fragments_lost": 1, "largest_fragment": 1500})
    );
}

#[test]
fn a_reply_fragment_lost_on_the_way_back_is_located_and_said_of_the_reply() {
    let (client, nat, server) = ([198, 18, 90, 42], [198, 19, 3, 17], [198, 19, 96, 10]);
    let ports = (40100, 9000);
    let request = body(50, 500);
    let reply = body(51, 2972);
    let mut egress = records(T0, udp_fragments(client, server, ports, 0x4000, 64, &request, 1500));
    let mut backend = records(T0 + MS, udp_fragments(nat, server, ports, 0x4000, 63, &request, 1500));
    backend.extend(records(T0 + 2 * MS, udp_fragments(server, nat, (9000, 40100), 0x5000, 64, &reply, 1500)));
    let mut back = udp_fragments(server, client, (9000, 40100), 0x5000, 63, &reply, 1500);
    back.remove(1);
    egress.extend(records(T0 + 3 * MS, back));
    let v = run_json(&[egress, backend], &["egress", "backend"], &[]);
    let r = &requests(&v)[0];
    assert_eq!(r["captures"][0]["bytes_to_client"].as_u64(), Some(3000 - 1480), "{r:#}");
    assert_eq!(r["captures"][1]["bytes_to_client"].as_u64(), Some(3000));
    let lost = &r["fragments"]["lost"][0];
    assert_eq!(
        (&lost["between"], &lost["direction"]),
        (&Value::from("egress->backend"), &Value::from("reply"))
    );
    assert_eq!((&lost["fragments_sent"], &lost["fragments_arrived"]), (&Value::from(3), &Value::from(2)));
    let text = r["explanation"].as_str().unwrap();
    assert!(
        text.contains("1 of 3 fragments of a reply datagram of 3000 bytes lost between egress and backend"),
        "{text}"
    );
    let b = &v["boundaries"][0]["fragmentation"];
    assert_eq!(
        (&b["datagrams"], &b["incomplete"], &b["fragments_lost"]),
        (&Value::from(1), &Value::from(1), &Value::from(1))
    );
}

#[test]
fn an_overlapping_fragment_is_counted_with_a_warning_naming_file_and_record() {
    let (client, server) = ([198, 18, 90, 42], [198, 19, 96, 10]);
    let payload = body(9, 4972);
    let mut frags = udp_fragments(client, server, (40009, 9000), 0x3000, 64, &payload, 1500);
    // A copy of the second fragment moved 8 bytes back, before it: it overlaps the first.
    let mut overlap = frags[1].clone();
    overlap[7] -= 1;
    frags.insert(1, overlap);
    let egress = records(T0, frags);
    let backend =
        records(T0 + MS, udp_fragments([198, 19, 3, 17], server, (40009, 9000), 0x3000, 63, &payload, 1500));
    let v = run_json(&[egress, backend], &["egress", "backend"], &[]);
    let warnings = v["warnings"].as_array().unwrap();
    let w = (warnings.iter())
        .find(|w| w["message"].as_str().unwrap().contains("fragment"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    assert_eq!((&w["label"], &w["record"]), (&Value::from("egress"), &Value::from(2)), "{w}");
    let message = w["message"].as_str().unwrap();
    assert!(
        message.contains("1 IP fragment is malformed: it overlaps bytes of its datagram already received"),
        "{message}"
    );
    // The datagram counts as incomplete at egress, whole at the backend: not a loss on the way.
    let r = &requests(&v)[0];
    assert_eq!(r["fragments"]["captures"][0]["to_server"]["incomplete"], 1);
    assert_eq!(r["fragments"]["captures"][1]["to_server"]["incomplete"], 0);
    assert_eq!(r["fragments"]["lost"], Value::Array(Vec::new()));
}

/// The corpus's captures of IP fragments (index.tsv: IPv4-frags, IPv6-frags).
const CORPUS_FRAGMENTS: [&str; 4] = [
    "pcpp__Pcap++Test__ip4_fragments.pcap",
    "pcpp__Pcap++Test__ip6_fragments.pcap",
    "zeek__ipv4__fragmented-1.pcap",
    "tcpdump__ipv6_frag6_negative_len.pcap",
];

/// Every fragment of a capture through one reassembly, as the flow table feeds it.
struct Reassembly {
    r: tuplecorr::flows::reassembly::Reassembler,
    out: Vec<tuplecorr::flows::reassembly::Reassembled>,
}

impl tuplecorr::drive::ingest::Sink for Reassembly {
    fn add(&mut self, rec: &tuplecorr::drive::ingest::Ingested<'_>) {
        let Ok(p) = rec.packet else { return };
        self.r.expire(p.ts_ns, &mut self.out);
        if p.fragment != tuplecorr::decode::Fragment::None {
            self.r.add(p, rec.payload, &mut self.out);
        }
    }
}

/// tshark's reassembled datagrams of `path`: (payload length, fragments), sorted.
fn tshark_reassembled(path: &std::path::Path) -> Vec<(u32, u32)> {
    let out = std::process::Command::new("tshark")
        .args(["-r", path.to_str().unwrap(), "-T", "fields", "-E", "occurrence=f"])
        .args(["-e", "ip.reassembled.length", "-e", "ip.fragment.count"])
        .args(["-e", "ipv6.reassembled.length", "-e", "ipv6.fragment.count"])
        .output()
        .expect("tshark");
    let mut got: Vec<(u32, u32)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let x: Vec<&str> = l.split('\t').collect();
            let field = |i: usize| x.get(i).and_then(|s| s.parse::<u32>().ok());
            field(0).zip(field(1)).or(field(2).zip(field(3)))
        })
        .collect();
    got.sort_unstable();
    got
}

#[test]
fn corpus_fragments_reassemble_as_tshark_reassembles_them() {
    crate::util::require_corpus!();
    if std::process::Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("skipped: tshark not installed");
        return;
    }
    let mut whole = 0;
    for name in CORPUS_FRAGMENTS {
        let path = crate::util::corpus_dir().join(name);
        let bytes = std::fs::read(&path).unwrap();
        let mut sink = Reassembly { r: Default::default(), out: Vec::new() };
        tuplecorr::drive::ingest::ingest_bytes(name, &bytes, &mut sink).unwrap();
        sink.r.flush(&mut sink.out);
        let stats = sink.r.stats().clone();
        let mut got: Vec<(u32, u32)> =
            sink.out.iter().filter(|d| d.whole).map(|d| (d.data_len, d.fragments)).collect();
        got.sort_unstable();
        let want = tshark_reassembled(&path);
        if name.starts_with("zeek") {
            // An unaligned first fragment (18 bytes, more to follow), then one
            // that runs past the end the last set: tshark puts 164 bytes
            // together and flags the packet malformed; Linux (and tuplecorr)
            // drop the datagram. Its first fragment still names its flow.
            assert_eq!(want, [(164, 3)], "{name}");
            assert_eq!((got.len(), stats.malformed, stats.incomplete), (0, 1, 1), "{name}: {stats:?}");
            continue;
        }
        // The same datagrams of the same sizes. tshark's fragment counts
        // include duplicates; ours do not (they are counted apart).
        let sizes = |v: &[(u32, u32)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(sizes(&got), sizes(&want), "{name}: {stats:?}");
        let dups_within: u64 = (want.iter().zip(&got)).map(|(w, g)| u64::from(w.1 - g.1)).sum();
        assert!(dups_within <= stats.duplicates, "{name}: {want:?} {got:?} {stats:?}");
        whole += got.len();
    }
    assert_eq!(whole, 10, "6 IPv4 and 4 IPv6 datagrams");
}
