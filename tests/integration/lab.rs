//! The lab's committed captures (`testdata/lab/<scenario>/`, made by
//! `scripts/lab.sh`) contain what their `expected.json` says.
//!
//! The captures are read here with the `pcap-file` crate (pcap and pcapng) and
//! `flate2` (gzip), never with tuplecorr's own reader: these tests check the
//! test data, not the tool. They need neither root nor a network.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufReader, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use serde_json::Value;

const SCENARIOS: &[&str] = &[
    "preserved",
    "masquerade-node",
    "masquerade-pod",
    "dnat-service",
    "no-return-route",
    "reject",
    "proxy",
    "proxy-v1",
    "proxy-v2",
    "proxy-xff",
    "udp-icmp",
    "concurrent",
    "any-node",
    "clock-shift",
    "delay",
    "healthcheck",
    "ipv6",
    "rp-filter",
    "asymmetric",
    "syn-retransmit",
    "lossy-capture",
    "pmtu",
    "pmtu-blackhole",
    "pmtu-mss-clamp",
    "pmtu-ipv6",
    "any-node-sll",
    "any-router",
    "any-router-sll",
    "reply-elsewhere",
    "vxlan",
    "multihomed",
    "masq-agent",
    "masq-agent-drift",
    "nft-service",
    "proxy-nginx",
    "keepalive",
    "any-node-fork",
    "forward-drop",
    "stale-gateway",
    "backend-no-route",
    "dead-end-route",
    "pool-nodes",
    "follow-late-iface",
    "dnat-reject",
];

fn lab_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join("lab")
}

/// One packet reduced to what these tests look at.
struct Pkt {
    src: Option<IpAddr>,
    dst: Option<IpAddr>,
    /// IP protocol / next header (6, 17, 1, 58), when the packet is IP.
    proto: u8,
    /// Transport ports (TCP/UDP), when present and not an ICMP error.
    ports: Option<(u16, u16)>,
    bytes: Vec<u8>,
}

struct Capture {
    link_types: BTreeSet<u32>,
    packets: Vec<Pkt>,
}

fn read_capture(path: &Path) -> Result<Capture, String> {
    let mut raw = Vec::new();
    File::open(path)
        .and_then(|f| {
            if path.extension().is_some_and(|e| e == "gz") {
                MultiGzDecoder::new(BufReader::new(f)).read_to_end(&mut raw)
            } else {
                BufReader::new(f).read_to_end(&mut raw)
            }
        })
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut link_types = BTreeSet::new();
    let mut packets = Vec::new();
    if raw.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        let mut rd = PcapNgReader::new(&raw[..]).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut ifaces: Vec<u32> = Vec::new();
        while let Some(block) = rd.next_block() {
            match block.map_err(|e| format!("{}: {e}", path.display()))? {
                Block::InterfaceDescription(idb) => {
                    let lt = u32::from(idb.linktype);
                    ifaces.push(lt);
                    link_types.insert(lt);
                }
                Block::EnhancedPacket(epb) => {
                    let lt = *ifaces
                        .get(epb.interface_id as usize)
                        .ok_or_else(|| format!("{}: EPB names a missing interface", path.display()))?;
                    packets.push(decode(lt, &epb.data));
                }
                Block::SimplePacket(spb) => {
                    let lt = *ifaces
                        .first()
                        .ok_or_else(|| format!("{}: SPB without interface", path.display()))?;
                    packets.push(decode(lt, &spb.data));
                }
                _ => {}
            }
        }
    } else {
        let mut rd = PcapReader::new(&raw[..]).map_err(|e| format!("{}: {e}", path.display()))?;
        let lt = u32::from(rd.header().datalink);
        link_types.insert(lt);
        while let Some(p) = rd.next_packet() {
            let p = p.map_err(|e| format!("{}: {e}", path.display()))?;
            packets.push(decode(lt, &p.data));
        }
    }
    Ok(Capture { link_types, packets })
}

/// Finds the IP header behind the link layers the lab writes (Ethernet, raw IP,
/// Linux cooked SLL/SLL2) and reads addresses, protocol and ports.
fn decode(link_type: u32, data: &[u8]) -> Pkt {
    let mut pkt = Pkt { src: None, dst: None, proto: 0, ports: None, bytes: data.to_vec() };
    let ip_off = match link_type {
        1 => {
            let mut off = 12;
            let mut et = u16::from_be_bytes([
                data.get(off).copied().unwrap_or(0),
                data.get(off + 1).copied().unwrap_or(0),
            ]);
            while et == 0x8100 || et == 0x88a8 {
                off += 4;
                et = u16::from_be_bytes([
                    data.get(off).copied().unwrap_or(0),
                    data.get(off + 1).copied().unwrap_or(0),
                ]);
            }
            if et != 0x0800 && et != 0x86dd {
                return pkt;
            }
            off + 2
        }
        12 | 14 | 101 | 228 | 229 => 0,
        113 => 16,
        276 => 20,
        _ => return pkt,
    };
    let ip = match data.get(ip_off..) {
        Some(ip) if !ip.is_empty() => ip,
        _ => return pkt,
    };
    let l4_off;
    match ip[0] >> 4 {
        4 if ip.len() >= 20 => {
            let a: [u8; 4] = ip[12..16].try_into().unwrap();
            let b: [u8; 4] = ip[16..20].try_into().unwrap();
            pkt.src = Some(IpAddr::from(a));
            pkt.dst = Some(IpAddr::from(b));
            pkt.proto = ip[9];
            l4_off = usize::from(ip[0] & 0x0f) * 4;
        }
        6 if ip.len() >= 40 => {
            let a: [u8; 16] = ip[8..24].try_into().unwrap();
            let b: [u8; 16] = ip[24..40].try_into().unwrap();
            pkt.src = Some(IpAddr::from(a));
            pkt.dst = Some(IpAddr::from(b));
            pkt.proto = ip[6]; // the lab sends no extension headers on its requests
            l4_off = 40;
        }
        _ => return pkt,
    }
    if matches!(pkt.proto, 6 | 17) && ip.len() >= l4_off + 4 {
        let l4 = &ip[l4_off..];
        pkt.ports = Some((u16::from_be_bytes([l4[0], l4[1]]), u16::from_be_bytes([l4[2], l4[3]])));
        // VXLAN (UDP 4789, I flag): the packet is what the Ethernet frame inside carries.
        if pkt.proto == 17
            && pkt.ports.is_some_and(|p| p.1 == 4789)
            && l4.get(8).is_some_and(|f| f & 0x08 != 0)
        {
            let inner = decode(1, l4.get(16..).unwrap_or_default());
            if inner.src.is_some() {
                return Pkt { bytes: pkt.bytes, ..inner };
            }
        }
    }
    pkt
}

/// `ip:port`, `[v6]:port`, or a bare address (ICMP); port `None` for `*` or ICMP.
fn parse_endpoint(s: &str) -> Result<(IpAddr, Option<u16>), String> {
    let (addr, port) = if let Some(rest) = s.strip_prefix('[') {
        let (a, p) = rest.split_once("]:").ok_or_else(|| format!("bad endpoint {s:?}"))?;
        (a, Some(p))
    } else if s.matches(':').count() == 1 {
        let (a, p) = s.split_once(':').unwrap();
        (a, Some(p))
    } else {
        (s, None)
    };
    let ip: IpAddr = addr.parse().map_err(|_| format!("bad address in endpoint {s:?}"))?;
    let port = match port {
        None | Some("*") => None,
        Some(p) => Some(p.parse::<u16>().map_err(|_| format!("bad port in endpoint {s:?}"))?),
    };
    Ok((ip, port))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Every `tclab-…` marker in a packet's bytes.
fn markers_in(bytes: &[u8], out: &mut BTreeSet<String>) {
    let pat = b"tclab-";
    let mut i = 0;
    while i + pat.len() <= bytes.len() {
        if &bytes[i..i + pat.len()] == pat {
            let mut j = i + pat.len();
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'-') {
                j += 1;
            }
            let mut m = &bytes[i..j];
            while m.last() == Some(&b'-') {
                m = &m[..m.len() - 1];
            }
            if m.len() > pat.len() {
                out.insert(String::from_utf8_lossy(m).into_owned());
            }
            i = j;
        } else {
            i += 1;
        }
    }
}

fn load_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Checks one scenario; returns every failure found (not only the first).
fn check_scenario(name: &str) -> Vec<String> {
    let dir = lab_dir().join(name);
    let mut errs = Vec::new();
    let (exp, checks) = match (load_json(&dir.join("expected.json")), load_json(&dir.join("checks.json"))) {
        (Ok(e), Ok(c)) => (e, c),
        (e, c) => {
            errs.extend(e.err());
            errs.extend(c.err());
            return errs;
        }
    };
    if exp["scenario"] != name {
        errs.push(format!("scenario field is {} in {name}/expected.json", exp["scenario"]));
    }
    let mut caps: BTreeMap<String, Capture> = BTreeMap::new();
    let captures = exp["captures"].as_object().cloned().unwrap_or_default();
    for (label, file) in &captures {
        let file = file.as_str().unwrap_or_default();
        let path = dir.join(file);
        let cap = match read_capture(&path) {
            Ok(c) => c,
            Err(e) => {
                errs.push(e);
                continue;
            }
        };
        let want = checks["files"][file]["packets"].as_u64();
        if want != Some(cap.packets.len() as u64) {
            errs.push(format!("{file}: {} packets read, checks.json says {want:?}", cap.packets.len()));
        }
        let mut found = BTreeSet::new();
        for p in &cap.packets {
            markers_in(&p.bytes, &mut found);
        }
        let listed: BTreeSet<String> = checks["files"][file]["markers"]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        if found != listed {
            errs.push(format!(
                "{file}: markers in the packets {:?} differ from checks.json {:?}",
                found.symmetric_difference(&listed).collect::<Vec<_>>(),
                listed.len()
            ));
        }
        if cap.link_types.is_empty() {
            errs.push(format!("{file}: no link type"));
        }
        caps.insert(label.clone(), cap);
    }
    for r in exp["requests"].as_array().cloned().unwrap_or_default() {
        let id = &r["id"];
        let marker = r["marker"].as_str();
        let proto: u8 = match r["proto"].as_str() {
            Some("tcp") => 6,
            Some("udp") => 17,
            _ => 0,
        };
        for (label, view) in r["captures"].as_object().cloned().unwrap_or_default() {
            let Some(cap) = caps.get(&label) else { continue };
            if view["seen"] != Value::Bool(true) {
                continue;
            }
            let (Some(c), Some(s)) = (view["client"].as_str(), view["server"].as_str()) else {
                errs.push(format!("request {id} at {label}: seen without endpoints"));
                continue;
            };
            let (c, s) = match (parse_endpoint(c), parse_endpoint(s)) {
                (Ok(c), Ok(s)) => (c, s),
                (a, b) => {
                    errs.extend(a.err());
                    errs.extend(b.err());
                    continue;
                }
            };
            // a packet of the request: client -> server with the expected addresses
            // (and ports, where they are not `*`), carrying the marker if there is one
            let hit = cap.packets.iter().any(|p| {
                p.src == Some(c.0)
                    && p.dst == Some(s.0)
                    && (proto == 0 || p.proto == proto)
                    && (proto == 0
                        || p.ports.is_some_and(|(sp, dp)| {
                            c.1.is_none_or(|x| x == sp) && s.1.is_none_or(|x| x == dp)
                        }))
                    && marker.is_none_or(|m| contains(&p.bytes, m.as_bytes()))
            });
            if !hit {
                errs.push(format!(
                    "request {id} at {label}: no packet {} -> {} {}",
                    view["client"],
                    view["server"],
                    marker.map(|m| format!("carrying {m}")).unwrap_or_default()
                ));
            }
            if view["reply_seen"] == Value::Bool(true) {
                // some packet comes back to the client's address at this capture
                let back = cap.packets.iter().any(|p| p.dst == Some(c.0));
                if !back {
                    errs.push(format!("request {id} at {label}: reply_seen but nothing goes to {}", c.0));
                }
            }
        }
    }
    errs
}

fn assert_scenario(name: &str) {
    let errs = check_scenario(name);
    assert!(errs.is_empty(), "lab scenario {name}: {} problems:\n  {}", errs.len(), errs.join("\n  "));
}

macro_rules! scenario_tests {
    ($($fn:ident => $name:literal),* $(,)?) => {
        $( #[test] fn $fn() { assert_scenario($name); } )*
    };
}

scenario_tests! {
    lab_preserved => "preserved",
    lab_masquerade_node => "masquerade-node",
    lab_masquerade_pod => "masquerade-pod",
    lab_dnat_service => "dnat-service",
    lab_no_return_route => "no-return-route",
    lab_reject => "reject",
    lab_proxy => "proxy",
    lab_proxy_v1 => "proxy-v1",
    lab_proxy_v2 => "proxy-v2",
    lab_proxy_xff => "proxy-xff",
    lab_udp_icmp => "udp-icmp",
    lab_concurrent => "concurrent",
    lab_any_node => "any-node",
    lab_clock_shift => "clock-shift",
    lab_delay => "delay",
    lab_healthcheck => "healthcheck",
    lab_ipv6 => "ipv6",
    lab_rp_filter => "rp-filter",
    lab_asymmetric => "asymmetric",
    lab_syn_retransmit => "syn-retransmit",
    lab_lossy_capture => "lossy-capture",
    lab_pmtu => "pmtu",
    lab_pmtu_blackhole => "pmtu-blackhole",
    lab_pmtu_mss_clamp => "pmtu-mss-clamp",
    lab_pmtu_ipv6 => "pmtu-ipv6",
    lab_any_node_sll => "any-node-sll",
    lab_any_router => "any-router",
    lab_any_router_sll => "any-router-sll",
    lab_reply_elsewhere => "reply-elsewhere",
    lab_vxlan => "vxlan",
    lab_multihomed => "multihomed",
    lab_proxy_nginx => "proxy-nginx",
    lab_any_node_fork => "any-node-fork",
    lab_forward_drop => "forward-drop",
    lab_stale_gateway => "stale-gateway",
    lab_backend_no_route => "backend-no-route",
    lab_dead_end_route => "dead-end-route",
    lab_pool_nodes => "pool-nodes",
    lab_follow_late_iface => "follow-late-iface",
    lab_dnat_reject => "dnat-reject",
}

// ------------------------------------------------------------------ schema

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn check_endpoint(s: &Value, proto: &str, what: &str, errs: &mut Vec<String>) {
    let Some(s) = s.as_str() else {
        errs.push(format!("{what}: endpoint is not a string: {s}"));
        return;
    };
    let icmp = proto == "icmp";
    let ok = if icmp {
        s.parse::<IpAddr>().is_ok()
    } else if let Some(rest) = s.strip_prefix('[') {
        rest.split_once("]:").is_some_and(|(a, p)| {
            a.parse::<std::net::Ipv6Addr>().is_ok() && (p == "*" || p.parse::<u16>().is_ok())
        })
    } else {
        s.split_once(':').is_some_and(|(a, p)| {
            a.parse::<std::net::Ipv4Addr>().is_ok() && (p == "*" || p.parse::<u16>().is_ok())
        })
    };
    if !ok {
        errs.push(format!("{what}: endpoint {s:?} is not written as the output contract says ({proto})"));
    }
}

/// Capture labels in path order. serde_json's map (without `preserve_order`)
/// sorts keys, so the order is taken from where each `"label": "file"` pair
/// stands in the text.
pub(crate) fn labels_in_path_order(text: &str, exp: &Value) -> Vec<String> {
    let mut labels: Vec<(usize, String)> = exp["captures"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(label, file)| {
            let pair = format!("\"{label}\": {file}");
            (text.find(&pair).unwrap_or(usize::MAX), label.clone())
        })
        .collect();
    labels.sort();
    labels.into_iter().map(|(_, l)| l).collect()
}

fn check_schema(name: &str, text: &str, exp: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let top: BTreeSet<&str> = ["scenario", "description", "captures", "clock_offsets_ms", "requests"].into();
    if keys(exp) != top {
        errs.push(format!("{name}: top-level keys {:?}", keys(exp)));
    }
    if !exp["scenario"].is_string() || exp["description"].as_str().is_none_or(|d| d.is_empty()) {
        errs.push(format!("{name}: scenario/description must be non-empty strings"));
    }
    let labels = labels_in_path_order(text, exp);
    if !(2..=8).contains(&labels.len()) {
        errs.push(format!("{name}: {} captures (2 to 8)", labels.len()));
    }
    for (label, f) in exp["captures"].as_object().into_iter().flatten() {
        match f.as_str() {
            Some(f) if lab_dir().join(name).join(f).is_file() => {}
            _ => errs.push(format!("{name}: capture {label} = {f} is not a file beside expected.json")),
        }
    }
    let offs = &exp["clock_offsets_ms"];
    if keys(offs) != labels.iter().map(String::as_str).collect() {
        errs.push(format!("{name}: clock_offsets_ms labels {:?} != captures {labels:?}", keys(offs)));
    }
    if offs.as_object().is_some_and(|o| o.values().any(|v| !v.is_number())) {
        errs.push(format!("{name}: clock_offsets_ms values must be numbers"));
    }
    if let Some(first) = labels.first() {
        if offs[first].as_f64() != Some(0.0) {
            errs.push(format!("{name}: clock offset of the first capture must be 0"));
        }
    }
    let req_keys: BTreeSet<&str> = [
        "id",
        "proto",
        "marker",
        "captures",
        "source_changed_at",
        "destination_changed_at",
        "reply_path",
        "outcome",
        "outcome_icmp",
    ]
    .into();
    let view_keys: BTreeSet<&str> = ["seen", "client", "server", "reply_seen"].into();
    let boundaries: BTreeSet<String> = labels
        .iter()
        .enumerate()
        .flat_map(|(i, a)| labels[i + 1..].iter().map(move |b| format!("{a}->{b}")))
        .collect();
    let requests = exp["requests"].as_array().cloned().unwrap_or_default();
    if requests.is_empty() {
        errs.push(format!("{name}: no requests"));
    }
    let mut ids = Vec::new();
    let mut decap_clients = BTreeSet::new();
    for r in &requests {
        let id = r["id"].clone();
        let what = format!("{name} request {id}");
        let data_keys: BTreeSet<&str> = ["stopped", "path_mtu", "mtu_sender", "icmp_lost_between"].into();
        if r.get("data").is_some_and(|d| keys(d) != data_keys) {
            errs.push(format!("{what}: data keys {:?}", keys(&r["data"])));
        }
        let identity_keys: BTreeSet<&str> = ["carrier", "carried", "added", "preserved", "client_set"].into();
        if r.get("identity").is_some_and(|i| !i.is_null() && keys(i) != identity_keys) {
            errs.push(format!("{what}: identity keys {:?}", keys(&r["identity"])));
        }
        let mut rk = keys(r);
        rk.remove("data"); // optional: requests whose bytes need full-size segments
        rk.remove("unexpected_source"); // optional: scenarios with replies from elsewhere
        let u = &r["unexpected_source"];
        if !(u.is_null() || keys(u) == ["from", "packet", "seen_at"].into()) {
            errs.push(format!("{what}: unexpected_source {u}"));
        }
        rk.remove("identity"); // optional: requests with an identity carrier (backend's log)
        if rk != req_keys {
            errs.push(format!("{what}: keys {:?}", keys(r)));
        }
        ids.push(r["id"].as_u64().unwrap_or(0));
        let proto = r["proto"].as_str().unwrap_or("");
        if !["tcp", "udp", "icmp"].contains(&proto) {
            errs.push(format!("{what}: proto {}", r["proto"]));
        }
        if !(r["marker"].is_null() || r["marker"].as_str().is_some_and(|m| !m.is_empty())) {
            errs.push(format!("{what}: marker must be a string or null"));
        }
        let views = &r["captures"];
        if keys(views) != labels.iter().map(String::as_str).collect() {
            errs.push(format!("{what}: capture labels {:?}", keys(views)));
        }
        for (label, v) in views.as_object().into_iter().flatten() {
            let w = format!("{what} at {label}");
            // `iface`: at a side of a split capture only, where the request was seen
            let mut have = keys(v);
            let side = label.ends_with("(in)") || label.ends_with("(out)");
            for key in ["iface", "reply_iface"] {
                if have.remove(key) && !(side && v["seen"] == Value::Bool(true) && v[key].is_string()) {
                    errs.push(format!("{w}: {key} only at a side where the request was seen, as a string"));
                }
            }
            if have != view_keys {
                errs.push(format!("{w}: keys {:?}", keys(v)));
            }
            if !v["seen"].is_boolean() || !v["reply_seen"].is_boolean() {
                errs.push(format!("{w}: seen/reply_seen must be booleans"));
            }
            if v["seen"] == Value::Bool(true) {
                check_endpoint(&v["client"], proto, &w, &mut errs);
                check_endpoint(&v["server"], proto, &w, &mut errs);
            } else if !v["client"].is_null() || !v["server"].is_null() {
                errs.push(format!("{w}: not seen, so client and server must be null"));
            }
        }
        if let Some(first) = labels.first() {
            if views[first]["seen"] != Value::Bool(true) {
                errs.push(format!("{what}: a request is always seen at capture 1 ({first})"));
            }
            if !decap_clients.insert(format!("{proto} {}", views[first]["client"])) && proto != "icmp" {
                errs.push(format!("{what}: client endpoint at {first} is not unique"));
            }
        }
        for key in ["source_changed_at", "destination_changed_at"] {
            let Some(list) = r[key].as_array() else {
                errs.push(format!("{what}: {key} must be a list"));
                continue;
            };
            for b in list {
                let (between, kind_ok) = match b {
                    Value::String(s) => (s.clone(), true),
                    Value::Object(o) => (
                        o.get("between").and_then(Value::as_str).unwrap_or("").to_owned(),
                        keys(b) == ["between", "kind"].into()
                            && b["kind"] == "proxy"
                            && key == "source_changed_at",
                    ),
                    _ => (String::new(), false),
                };
                if !boundaries.contains(&between) || !kind_ok {
                    errs.push(format!("{what}: {key} entry {b} is not a boundary in path order"));
                }
            }
        }
        let rp = r["reply_path"].as_str().unwrap_or("");
        if !["same-path", "reply-lost", "bypassed", "no-reply"].contains(&rp) {
            errs.push(format!("{what}: reply_path {}", r["reply_path"]));
        }
        let oc = r["outcome"].as_str().unwrap_or("");
        if !["completed", "handshake-only", "reset", "icmp-error", "no-reply", "midstream", "data-stopped"]
            .contains(&oc)
        {
            errs.push(format!("{what}: outcome {}", r["outcome"]));
        }
        match (oc, &r["outcome_icmp"]) {
            ("icmp-error", Value::String(s))
                if s.split_once('/')
                    .is_some_and(|(t, c)| t.parse::<u8>().is_ok() && c.parse::<u8>().is_ok()) => {}
            ("icmp-error", v) => {
                errs.push(format!("{what}: icmp-error needs outcome_icmp \"type/code\", got {v}"))
            }
            (_, Value::Null) => {}
            (_, v) => errs.push(format!("{what}: outcome_icmp {v} without outcome icmp-error")),
        }
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted != (1..=ids.len() as u64).collect::<Vec<_>>() {
        errs.push(format!("{name}: request ids are not 1..{}", ids.len()));
    }
    errs
}

#[test]
fn lab_expected_json_schema() {
    let mut errs = Vec::new();
    for name in SCENARIOS {
        let path = lab_dir().join(name).join("expected.json");
        match (std::fs::read_to_string(&path), load_json(&path)) {
            (Ok(text), Ok(exp)) => errs.extend(check_schema(name, &text, &exp)),
            (_, Err(e)) => errs.push(e),
            (Err(e), _) => errs.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(errs.is_empty(), "{} schema problems:\n  {}", errs.len(), errs.join("\n  "));
}

#[test]
fn lab_index_lists_every_scenario() {
    let text = std::fs::read_to_string(lab_dir().join("index.tsv")).expect("testdata/lab/index.tsv");
    let listed: Vec<&str> = text.lines().skip(1).filter_map(|l| l.split('\t').next()).collect();
    assert_eq!(listed, SCENARIOS, "index.tsv scenarios");
    let on_disk: BTreeSet<String> = std::fs::read_dir(lab_dir())
        .expect("testdata/lab")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let known: BTreeSet<String> = SCENARIOS.iter().map(|s| s.to_string()).collect();
    assert_eq!(on_disk, known, "scenario folders in testdata/lab");
}

#[test]
fn lab_link_types_and_formats() {
    // the formats and link types the lab promises to cover
    let read = |sc: &str, f: &str| read_capture(&lab_dir().join(sc).join(f)).expect("capture");
    assert_eq!(read("preserved", "decap.pcap").link_types, [101].into(), "decap on a TUN device is raw IP");
    assert_eq!(read("preserved", "egress.pcap").link_types, [1].into(), "egress on a veth is Ethernet");
    assert_eq!(read("any-node", "node.pcap").link_types, [276].into(), "tcpdump -i any as SLL2");
    assert_eq!(read("any-node-sll", "node.pcap").link_types, [113].into(), "tcpdump -i any -y LINUX_SLL");
    assert_eq!(read("any-router", "router.pcap").link_types, [276].into(), "tcpdump -i any as SLL2");
    assert_eq!(read("any-router-sll", "router.pcap").link_types, [113].into(), "tcpdump -i any as SLL");
    assert!(!read("masquerade-pod", "decap.pcapng").packets.is_empty());
    assert!(!read("udp-icmp", "backend.pcap.gz").packets.is_empty());
    let lab_size: u64 = walk_size(&lab_dir());
    assert!(lab_size < 5 * 1024 * 1024, "testdata/lab is {lab_size} bytes (budget 5 MiB)");
}

fn walk_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| {
                    let path = e.path();
                    if path.is_dir() {
                        walk_size(&path)
                    } else {
                        e.metadata().map(|m| m.len()).unwrap_or(0)
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}
