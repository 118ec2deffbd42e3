//! Deterministic synthetic multi-point captures, for tests and benchmarks: the
//! same conversations (TCP with handshake, request, multi-segment response and
//! teardown; UDP request/response; ICMP echo) as seen at N capture points, with
//! per-boundary SNAT / port remap / DNAT, hop delay, TTL decrement, sequence
//! shift, terminating proxy and lost requests or replies, and per-point clock
//! offset, segment size (GRO vs MSS) and snaplen. Gives raw-IP packets per point
//! and writes them as pcap (LINKTYPE_RAW). Never reads captures.
//!
//! Times: a client packet sent at t is seen at point k at t + D(k), where D(k) is
//! the sum of the delays of the boundaries before k; a server packet sent at T is
//! seen at point k at T + D(last) − D(k) + the server leg. Recorded time = true
//! time + the point's clock offset.

use std::io::{self, Write};
use std::net::IpAddr;

/// One capture point.
#[derive(Clone, Debug)]
pub struct Point {
    /// Added to every timestamp written at this point (its clock runs ahead).
    pub clock_offset_ns: i64,
    /// Largest TCP payload per packet at this point (1448: MSS-sized; 65000: GRO).
    pub segment: usize,
    /// Bytes of each packet written (as `tcpdump -s`).
    pub snaplen: usize,
}

impl Default for Point {
    fn default() -> Self {
        Point { clock_offset_ns: 0, segment: 1448, snaplen: 262_144 }
    }
}

/// What happens between point k and point k+1.
#[derive(Clone, Debug, Default)]
pub struct Hop {
    pub delay_ns: i64,
    /// Source NAT to this address (the client port is kept unless `snat_port`).
    pub snat: Option<IpAddr>,
    /// Source port after this hop (port remap, `--random-fully`).
    pub snat_port: Option<u16>,
    /// Destination NAT to this address and port.
    pub dnat: Option<(IpAddr, u16)>,
    /// Every client sequence number shifted by this constant (ISN-randomizing firewall).
    pub seq_shift: u32,
    /// A terminating proxy: a new connection from this address and port.
    pub proxy: Option<(IpAddr, u16)>,
    /// Routed: TTL drops by one.
    pub routed: bool,
}

/// One TCP conversation, as the client sends it.
#[derive(Clone, Debug)]
pub struct Tcp {
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
    /// When the client sends its SYN (true time, ns).
    pub start_ns: i64,
    pub client_isn: u32,
    pub server_isn: u32,
    pub request: Vec<u8>,
    pub response: Vec<u8>,
    /// IP ID of the client's first packet (incremented per packet).
    pub ip_id: u16,
    /// The server never answers: the SYN is retransmitted `syn_retries` times.
    pub unanswered: bool,
    pub syn_retries: u32,
    /// The server resets instead of answering the SYN.
    pub reset: bool,
    /// The request is lost after this point (never seen beyond it).
    pub lost_after: Option<usize>,
    /// Replies are lost before this point (seen at later points only).
    pub reply_lost_before: Option<usize>,
    /// Seen only at these points (None: all it reaches).
    pub only_at: Option<Vec<usize>>,
    /// Time between the server's response segments (1 µs; seconds make a
    /// long-lived connection, e.g. a database pool's or a watch's). The
    /// client's FIN follows the last one.
    pub gap_ns: i64,
}

impl Tcp {
    /// A completed request/response with sensible defaults.
    pub fn new(client: (IpAddr, u16), server: (IpAddr, u16), start_ns: i64, seed: u32) -> Tcp {
        let x = mix(seed);
        Tcp {
            client,
            server,
            start_ns,
            client_isn: x,
            server_isn: mix(x),
            request: format!(
                "GET /item/{seed} HTTP/1.1\r\nHost: {}\r\nUser-Agent: synth\r\nAccept: */*\r\n\r\n",
                server.0
            )
            .into_bytes(),
            response: response_body(seed, 3000),
            ip_id: (x >> 16) as u16 | 1,
            unanswered: false,
            syn_retries: 0,
            reset: false,
            lost_after: None,
            reply_lost_before: None,
            only_at: None,
            gap_ns: RESPONSE_GAP_NS,
        }
    }
}

/// Default [`Tcp::gap_ns`].
pub const RESPONSE_GAP_NS: i64 = 1_000;

/// One UDP request/response.
#[derive(Clone, Debug)]
pub struct Udp {
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
    pub start_ns: i64,
    pub request: Vec<u8>,
    pub response: Option<Vec<u8>>,
    pub ip_id: u16,
}

/// One ICMP echo sequence.
#[derive(Clone, Debug)]
pub struct Echo {
    pub client: IpAddr,
    pub server: IpAddr,
    pub start_ns: i64,
    pub id: u16,
    pub count: u16,
    pub payload: Vec<u8>,
    pub answered: bool,
}

/// A deterministic pseudo-random step (splitmix-like), for ISNs and ports.
pub fn mix(x: u32) -> u32 {
    let mut z = u64::from(x).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// An HTTP response of about `len` bytes (head and body) that differs per
/// seed, its `Content-Length` the length of its body, as a server's is.
pub fn response_body(seed: u32, len: usize) -> Vec<u8> {
    let head = |body: usize| format!("HTTP/1.1 200 OK\r\nContent-Length: {body}\r\nX-Seed: {seed}\r\n\r\n");
    let body = len.saturating_sub(head(len).len());
    let mut v = head(body).into_bytes();
    let len = v.len() + body;
    let mut s = seed;
    while v.len() < len {
        s = mix(s);
        v.push(b'a' + (s % 26) as u8);
    }
    v
}

/// Packets seen at each point: (recorded time ns, raw IP bytes, original length).
#[derive(Clone, Debug, Default)]
pub struct Captures {
    pub points: Vec<Vec<(i64, Vec<u8>, u32)>>,
}

const SERVER_LEG_NS: i64 = 50_000;
const SERVER_THINK_NS: i64 = 200_000;
const CLIENT_THINK_NS: i64 = 20_000;

/// Builds the packets of conversations through `points` joined by `hops`
/// (`hops.len() == points.len() - 1`).
pub struct Path {
    pub points: Vec<Point>,
    pub hops: Vec<Hop>,
    out: Captures,
}

#[derive(Clone, Copy)]
struct Addrs {
    client: (IpAddr, u16),
    server: (IpAddr, u16),
    ttl_c: u8,
    ttl_s: u8,
}

impl Path {
    pub fn new(points: Vec<Point>, hops: Vec<Hop>) -> Path {
        let n = points.len();
        Path { points, hops, out: Captures { points: vec![Vec::new(); n] } }
    }

    /// Cumulative delay from point 0 to point k.
    fn d(&self, k: usize) -> i64 {
        self.hops.iter().take(k).map(|h| h.delay_ns).sum()
    }

    fn end(&self) -> i64 {
        self.d(self.points.len() - 1) + SERVER_LEG_NS
    }

    /// Addresses and TTLs at each point, and where a proxy starts a new connection.
    fn addrs(&self, client: (IpAddr, u16), server: (IpAddr, u16)) -> (Vec<Addrs>, Option<usize>) {
        let mut v = Vec::with_capacity(self.points.len());
        let mut a = Addrs { client, server, ttl_c: 64, ttl_s: 64 };
        let mut proxy_at = None;
        let n = self.points.len();
        // Server TTL at the last point, rising towards the client... computed after.
        for k in 0..n {
            if k > 0 {
                let h = &self.hops[k - 1];
                if let Some(p) = h.proxy {
                    a.client = p;
                    a.ttl_c = 64;
                    proxy_at.get_or_insert(k);
                } else {
                    if let Some(ip) = h.snat {
                        a.client.0 = ip;
                    }
                    if let Some(port) = h.snat_port {
                        a.client.1 = port;
                    }
                    if h.routed {
                        a.ttl_c = a.ttl_c.saturating_sub(1);
                    }
                }
                if let Some(d) = h.dnat {
                    a.server = d;
                }
            }
            v.push(a);
        }
        // Replies lose one TTL per routed hop on their way back.
        let mut ttl = 64u8;
        for k in (0..n).rev() {
            v[k].ttl_s = ttl;
            if k > 0 && self.hops[k - 1].routed && self.hops[k - 1].proxy.is_none() {
                ttl = ttl.saturating_sub(1);
            }
        }
        (v, proxy_at)
    }

    fn shift(&self, k: usize) -> u32 {
        self.hops.iter().take(k).fold(0u32, |s, h| s.wrapping_add(h.seq_shift))
    }

    fn emit(&mut self, k: usize, t_true: i64, bytes: Vec<u8>) {
        let p = &self.points[k];
        let orig = bytes.len() as u32;
        let mut bytes = bytes;
        bytes.truncate(p.snaplen);
        self.out.points[k].push((t_true + p.clock_offset_ns, bytes, orig));
    }

    /// Adds one TCP conversation.
    pub fn tcp(&mut self, c: &Tcp) {
        let n = self.points.len();
        let (addrs, proxy_at) = self.addrs(c.client, c.server);
        let visible = |k: usize| -> bool {
            c.only_at.as_ref().is_none_or(|o| o.contains(&k)) && c.lost_after.is_none_or(|l| k <= l)
        };
        let reply_visible = |k: usize| -> bool { visible(k) && c.reply_lost_before.is_none_or(|l| k >= l) };
        let reaches_server = c.lost_after.is_none_or(|l| l + 1 >= n) && !c.unanswered;
        let end = self.end();
        let mut ip_id_c = c.ip_id;
        let mut ip_id_s = (c.server_isn >> 8) as u16;
        // Per point: the connection's ISNs (a proxy starts a new one beyond it).
        let isns: Vec<(u32, u32)> = (0..n)
            .map(|k| match proxy_at {
                Some(p) if k >= p => (mix(c.client_isn ^ 0x5a5a), mix(c.server_isn ^ 0xa5a5)),
                _ => (c.client_isn.wrapping_add(self.shift(k)), c.server_isn),
            })
            .collect();
        let proxy_lag = |k: usize| -> i64 {
            match proxy_at {
                Some(p) if k >= p => 3 * SERVER_THINK_NS,
                _ => 0,
            }
        };
        // SYN (and retransmissions).
        for r in 0..=c.syn_retries {
            let t = c.start_ns + i64::from(r) * 1_000_000_000;
            for k in (0..n).filter(|&k| visible(k)) {
                let a = addrs[k];
                let pkt = tcp_packet(a.client, a.server, a.ttl_c, ip_id_c, isns[k].0, 0, SYN, 1460, &[]);
                self.emit(k, t + self.d(k) + proxy_lag(k), pkt);
            }
            ip_id_c = ip_id_c.wrapping_add(1);
        }
        if !reaches_server && !c.reset {
            return;
        }
        let t_synack = c.start_ns + end + SERVER_THINK_NS / 4;
        if c.reset {
            for k in (0..n).filter(|&k| reply_visible(k)) {
                let a = addrs[k];
                let pkt = tcp_packet(
                    a.server,
                    a.client,
                    a.ttl_s,
                    0,
                    0,
                    isns[k].0.wrapping_add(1),
                    RST | ACK,
                    0,
                    &[],
                );
                self.emit(k, t_synack + end - self.d(k) + proxy_lag(k), pkt);
            }
            return;
        }
        for k in (0..n).filter(|&k| reply_visible(k)) {
            let a = addrs[k];
            let pkt = tcp_packet(
                a.server,
                a.client,
                a.ttl_s,
                ip_id_s,
                isns[k].1,
                isns[k].0.wrapping_add(1),
                SYN | ACK,
                1460,
                &[],
            );
            self.emit(k, t_synack + end - self.d(k) + proxy_lag(k), pkt);
        }
        ip_id_s = ip_id_s.wrapping_add(1);
        let t_req = t_synack + end + CLIENT_THINK_NS;
        // Client: ACK + request segments.
        let req_end = c.request.len() as u32;
        for k in (0..n).filter(|&k| visible(k)) {
            let a = addrs[k];
            let (ci, si) = isns[k];
            let mut id = ip_id_c;
            let pkt = tcp_packet(
                a.client,
                a.server,
                a.ttl_c,
                id,
                ci.wrapping_add(1),
                si.wrapping_add(1),
                ACK,
                0,
                &[],
            );
            self.emit(k, t_req + self.d(k) + proxy_lag(k), pkt);
            for (i, chunk) in c.request.chunks(self.points[k].segment.max(1)).enumerate() {
                id = id.wrapping_add(1);
                let off = (i * self.points[k].segment) as u32;
                let pkt = tcp_packet(
                    a.client,
                    a.server,
                    a.ttl_c,
                    id,
                    ci.wrapping_add(1 + off),
                    si.wrapping_add(1),
                    ACK | PSH,
                    0,
                    chunk,
                );
                self.emit(k, t_req + self.d(k) + proxy_lag(k) + 1_000 * (i as i64 + 1), pkt);
            }
        }
        ip_id_c = ip_id_c.wrapping_add(1 + c.request.len().div_ceil(1448) as u16);
        // Server: response segments, then FIN.
        let t_resp = t_req + end + SERVER_THINK_NS;
        let resp_end = c.response.len() as u32;
        for k in (0..n).filter(|&k| reply_visible(k)) {
            let a = addrs[k];
            let (ci, si) = isns[k];
            let mut id = ip_id_s;
            let seg = self.points[k].segment.max(1);
            // Behind a proxy every reply waits for the proxy's own connection.
            let base_t = t_resp + end - self.d(k) + if proxy_at.is_some() { 3 * SERVER_THINK_NS } else { 0 };
            for (i, chunk) in c.response.chunks(seg).enumerate() {
                let off = (i * seg) as u32;
                let pkt = tcp_packet(
                    a.server,
                    a.client,
                    a.ttl_s,
                    id,
                    si.wrapping_add(1 + off),
                    ci.wrapping_add(1 + req_end),
                    ACK | PSH,
                    0,
                    chunk,
                );
                self.emit(k, base_t + c.gap_ns * i as i64, pkt);
                id = id.wrapping_add(1);
            }
            let pkt = tcp_packet(
                a.server,
                a.client,
                a.ttl_s,
                id,
                si.wrapping_add(1 + resp_end),
                ci.wrapping_add(1 + req_end),
                FIN | ACK,
                0,
                &[],
            );
            self.emit(k, base_t + c.gap_ns * (c.response.len() / seg + 1) as i64, pkt);
        }
        // Client: FIN (after the response when its segments are spread out).
        let spread = (c.gap_ns - RESPONSE_GAP_NS).max(0) * (c.response.len() / 1448 + 1) as i64;
        let t_fin = t_resp + end + CLIENT_THINK_NS + spread;
        for k in (0..n).filter(|&k| visible(k)) {
            let a = addrs[k];
            let (ci, si) = isns[k];
            let pkt = tcp_packet(
                a.client,
                a.server,
                a.ttl_c,
                ip_id_c,
                ci.wrapping_add(1 + req_end),
                si.wrapping_add(2 + resp_end),
                FIN | ACK,
                0,
                &[],
            );
            self.emit(
                k,
                t_fin
                    + self.d(k)
                    + 2 * proxy_lag(k)
                    + if proxy_at.is_some() { 3 * SERVER_THINK_NS } else { 0 },
                pkt,
            );
        }
    }

    /// Adds one UDP request (and response).
    pub fn udp(&mut self, u: &Udp) {
        let (addrs, _) = self.addrs(u.client, u.server);
        let end = self.end();
        for (k, &a) in addrs.iter().enumerate() {
            let pkt = udp_packet(a.client, a.server, a.ttl_c, u.ip_id, &u.request);
            self.emit(k, u.start_ns + self.d(k), pkt);
        }
        if let Some(resp) = &u.response {
            let t = u.start_ns + end + SERVER_THINK_NS;
            for (k, &a) in addrs.iter().enumerate() {
                let pkt = udp_packet(a.server, a.client, a.ttl_s, u.ip_id ^ 0x55, resp);
                self.emit(k, t + end - self.d(k), pkt);
            }
        }
    }

    /// Adds one ICMP echo sequence (NAT rewrites the identifier with the source port).
    pub fn echo(&mut self, e: &Echo) {
        let (addrs, _) = self.addrs((e.client, e.id), (e.server, 0));
        let end = self.end();
        for s in 0..e.count {
            let t0 = e.start_ns + i64::from(s) * 1_000_000_000;
            for (k, &a) in addrs.iter().enumerate() {
                let pkt = echo_packet(
                    a.client.0,
                    a.server.0,
                    a.ttl_c,
                    s.wrapping_add(7),
                    true,
                    a.client.1,
                    s + 1,
                    &e.payload,
                );
                self.emit(k, t0 + self.d(k), pkt);
            }
            if e.answered {
                let t = t0 + end + SERVER_THINK_NS / 4;
                for (k, &a) in addrs.iter().enumerate() {
                    let pkt = echo_packet(
                        a.server.0,
                        a.client.0,
                        a.ttl_s,
                        s.wrapping_add(99),
                        false,
                        a.client.1,
                        s + 1,
                        &e.payload,
                    );
                    self.emit(k, t + end - self.d(k), pkt);
                }
            }
        }
    }

    /// Adds a packet seen at one point only (background noise).
    pub fn background_tcp(&mut self, k: usize, c: &Tcp) {
        let mut one = Path::new(vec![self.points[k].clone()], Vec::new());
        one.tcp(c);
        let pkts = std::mem::take(&mut one.out.points[0]);
        self.out.points[k].extend(pkts);
    }

    /// The packets of each point in time order.
    pub fn finish(mut self) -> Captures {
        for p in &mut self.out.points {
            p.sort_by_key(|(t, _, _)| *t);
        }
        self.out
    }
}

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;

fn checksum(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Recomputes the IPv4 header checksum and the TCP/UDP checksum of an IPv4
/// packet after a test edited it (TTL, options, payload); other packets are
/// left as they are.
pub fn fix_ipv4_checksums(p: &mut [u8]) {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return;
    }
    let h = usize::from(p[0] & 0x0f) * 4;
    if p.len() < h {
        return;
    }
    p[10..12].fill(0);
    let c = fold(checksum(0, &p[..h]));
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let at = match p[9] {
        6 => h + 16,
        17 => h + 6,
        _ => return,
    };
    if p.len() < at + 2 {
        return;
    }
    p[at..at + 2].fill(0);
    let pseudo = checksum(checksum(0, &p[12..16]), &p[16..20]) + u32::from(p[9]) + (p.len() - h) as u32;
    let c = fold(checksum(pseudo, &p[h..]));
    p[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// An IP header (v4 or v6) in front of `l4` with protocol `proto`; fills the L4
/// checksum at `csum_at` when given.
fn ip_packet(
    src: IpAddr,
    dst: IpAddr,
    ttl: u8,
    ip_id: u16,
    proto: u8,
    mut l4: Vec<u8>,
    csum_at: Option<usize>,
) -> Vec<u8> {
    let len = l4.len();
    let pseudo = |s: &[u8], d: &[u8]| -> u32 {
        let mut sum = checksum(0, s);
        sum = checksum(sum, d);
        sum + u32::from(proto) + len as u32
    };
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            if let Some(at) = csum_at {
                let c = fold(checksum(pseudo(&s.octets(), &d.octets()), &l4));
                l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
            }
            let mut h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, ttl, proto, 0, 0];
            h[2..4].copy_from_slice(&((20 + len) as u16).to_be_bytes());
            h[4..6].copy_from_slice(&ip_id.to_be_bytes());
            h.extend_from_slice(&s.octets());
            h.extend_from_slice(&d.octets());
            let c = fold(checksum(0, &h));
            h[10..12].copy_from_slice(&c.to_be_bytes());
            h.extend_from_slice(&l4);
            h
        }
        (s, d) => {
            let to6 = |a: IpAddr| match a {
                IpAddr::V6(a) => a,
                IpAddr::V4(a) => a.to_ipv6_mapped(),
            };
            let (s, d) = (to6(s), to6(d));
            let proto = if proto == 1 { 58 } else { proto };
            if let Some(at) = csum_at {
                let mut sum = checksum(0, &s.octets());
                sum = checksum(sum, &d.octets());
                sum += u32::from(proto) + len as u32;
                let c = fold(checksum(sum, &l4));
                l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
            }
            let mut h = vec![0x60, 0, 0, 0, 0, 0, proto, ttl];
            h[4..6].copy_from_slice(&(len as u16).to_be_bytes());
            h.extend_from_slice(&s.octets());
            h.extend_from_slice(&d.octets());
            h.extend_from_slice(&l4);
            h
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn tcp_packet(
    src: (IpAddr, u16),
    dst: (IpAddr, u16),
    ttl: u8,
    ip_id: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    mss: u16,
    payload: &[u8],
) -> Vec<u8> {
    let opts: &[u8] = if mss > 0 { &[2, 4, (mss >> 8) as u8, mss as u8] } else { &[] };
    let hlen = 20 + opts.len();
    let mut t = Vec::with_capacity(hlen + payload.len());
    t.extend_from_slice(&src.1.to_be_bytes());
    t.extend_from_slice(&dst.1.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.push(((hlen / 4) as u8) << 4);
    t.push(flags);
    t.extend_from_slice(&[0xfa, 0xf0, 0, 0, 0, 0]);
    t.extend_from_slice(opts);
    t.extend_from_slice(payload);
    ip_packet(src.0, dst.0, ttl, ip_id, 6, t, Some(16))
}

fn udp_packet(src: (IpAddr, u16), dst: (IpAddr, u16), ttl: u8, ip_id: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + payload.len());
    u.extend_from_slice(&src.1.to_be_bytes());
    u.extend_from_slice(&dst.1.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    ip_packet(src.0, dst.0, ttl, ip_id, 17, u, Some(6))
}

#[allow(clippy::too_many_arguments)]
fn echo_packet(
    src: IpAddr,
    dst: IpAddr,
    ttl: u8,
    ip_id: u16,
    request: bool,
    id: u16,
    seq: u16,
    payload: &[u8],
) -> Vec<u8> {
    let v6 = src.is_ipv6();
    let ty = match (v6, request) {
        (false, true) => 8,
        (false, false) => 0,
        (true, true) => 128,
        (true, false) => 129,
    };
    let mut m = vec![ty, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(payload);
    if v6 {
        ip_packet(src, dst, ttl, ip_id, 58, m, Some(2))
    } else {
        let c = fold(checksum(0, &m));
        m[2..4].copy_from_slice(&c.to_be_bytes());
        ip_packet(src, dst, ttl, ip_id, 1, m, None)
    }
}

/// Writes packets as a little-endian nanosecond pcap with LINKTYPE_RAW (101).
pub fn write_pcap(out: &mut dyn Write, snaplen: u32, packets: &[(i64, Vec<u8>, u32)]) -> io::Result<()> {
    write_pcap_header(out, snaplen)?;
    write_pcap_records(out, packets)
}

/// The 24-byte pcap file header: nanosecond magic, little-endian, LINKTYPE_RAW.
pub fn write_pcap_header(out: &mut dyn Write, snaplen: u32) -> io::Result<()> {
    let mut h = Vec::with_capacity(24);
    h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&[0; 8]);
    h.extend_from_slice(&snaplen.to_le_bytes());
    h.extend_from_slice(&101u32.to_le_bytes());
    out.write_all(&h)
}

/// Records after a header written by `write_pcap_header`.
pub fn write_pcap_records(out: &mut dyn Write, packets: &[(i64, Vec<u8>, u32)]) -> io::Result<()> {
    for (ts, data, orig) in packets {
        let secs = ts.div_euclid(1_000_000_000) as u32;
        let nanos = ts.rem_euclid(1_000_000_000) as u32;
        let mut r = [0u8; 16];
        r[0..4].copy_from_slice(&secs.to_le_bytes());
        r[4..8].copy_from_slice(&nanos.to_le_bytes());
        r[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        r[12..16].copy_from_slice(&orig.to_le_bytes());
        out.write_all(&r)?;
        out.write_all(data)?;
    }
    Ok(())
}

/// The three points of the benchmark mix (decap, egress, backend): egress's clock
/// runs 2.75 s ahead, backend's 1.3 s behind, backend sees GRO-sized segments.
pub fn mix_points() -> Vec<Point> {
    vec![
        Point::default(),
        Point { clock_offset_ns: 2_750_000_000, ..Point::default() },
        Point { clock_offset_ns: -1_300_000_000, segment: 65_000, ..Point::default() },
    ]
}

/// What the benchmark mix expects of one connection (a `truth.tsv` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixTruth {
    pub proto: &'static str,
    pub decap_client: String,
    /// `-` where the request never reaches the backend.
    pub backend_client: String,
    pub reply_path: &'static str,
}

/// Start of the benchmark mix (true time, ns).
pub const MIX_T0: i64 = 1_795_995_638_000_000_000;

/// Connection `c` of the deterministic benchmark mix, as seen at `mix_points()`:
/// the pod forwards (TTL − 1), the node masquerades to 198.19.3.17 with a
/// remapped port (distinct for 45,000 consecutive connections: 7919 is prime, so
/// NAT never hands one tuple to two live requests); one connection every 200 µs;
/// per 100 connections 90 TCP request/response with `response_bytes`, 4 UDP, 2
/// ICMP echo, 2 whose request is lost after egress, 2 whose replies are lost
/// before egress; every tenth connection adds node-local background traffic seen
/// only at the backend. Gives the packets of each point and the expectation.
pub fn mix_connection(c: u32, seed: u32, response_bytes: usize) -> (Captures, MixTruth) {
    use std::net::Ipv4Addr;
    let masq = IpAddr::V4(Ipv4Addr::new(198, 19, 3, 17));
    let backend = IpAddr::V4(Ipv4Addr::new(198, 19, 96, 10));
    let client_ip = IpAddr::V4(Ipv4Addr::new(198, 18, 90 + (c / 60_000 % 100) as u8, (c % 250 + 2) as u8));
    let client_port = 10_000 + (c % 50_000) as u16;
    let remap = 20_000 + ((u64::from(c) * 7919 + u64::from(seed)) % 45_000) as u16;
    let hops = vec![
        Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
        Hop { delay_ns: 90_000, routed: true, snat: Some(masq), snat_port: Some(remap), ..Hop::default() },
    ];
    let mut path = Path::new(mix_points(), hops);
    let t = MIX_T0 + i64::from(c) * 200_000;
    let kind = c % 100;
    let s = c ^ seed.rotate_left(16);
    let mut truth = MixTruth {
        proto: "tcp",
        decap_client: format!("{client_ip}:{client_port}"),
        backend_client: format!("{masq}:{remap}"),
        reply_path: "same-path",
    };
    match kind {
        0..=89 | 94..=97 => {
            let mut tcp = Tcp::new((client_ip, client_port), (backend, 80), t, s);
            tcp.response = response_body(s, response_bytes);
            if (94..=95).contains(&kind) {
                tcp.lost_after = Some(1);
                tcp.unanswered = true;
                truth.reply_path = "no-reply";
                truth.backend_client = "-".into();
            } else if (96..=97).contains(&kind) {
                tcp.reply_lost_before = Some(2);
                truth.reply_path = "reply-lost";
            }
            path.tcp(&tcp);
        }
        90..=93 => {
            let mut request = format!("udp-query-{s:08x}-").into_bytes();
            request.resize(120, b'q');
            path.udp(&Udp {
                client: (client_ip, client_port),
                server: (backend, 53),
                start_ns: t,
                request,
                response: Some(response_body(s, 400)),
                ip_id: (s >> 3) as u16,
            });
            truth.proto = "udp";
        }
        _ => {
            let mut payload = format!("echo-{s:08x}-").into_bytes();
            payload.resize(56, b'e');
            path.echo(&Echo {
                client: client_ip,
                server: backend,
                start_ns: t,
                id: client_port,
                count: 1,
                payload,
                answered: true,
            });
            truth.proto = "icmp";
            truth.decap_client = client_ip.to_string();
            truth.backend_client = masq.to_string();
        }
    }
    if c.is_multiple_of(10) {
        // Node-local background traffic (ports below the remap range).
        let bg = Tcp::new((masq, 10_000 + (c % 10_000) as u16), (backend, 9100), t + 50_000, s ^ 0xdead);
        path.background_tcp(2, &bg);
    }
    (path.finish(), truth)
}

/// Long-lived connection `i` through the benchmark mix's path (as a database
/// pool's or a watch's): its SYN at `start_ns` (true time), then one response
/// segment every `gap_ns` for `span_ns`, then FIN both ways. Every point sees
/// MSS-sized segments (no GRO: segments seconds apart are never merged).
/// Clients are 198.18.250.x, masqueraded to 198.19.3.17 with ports from 65001,
/// so they never share a tuple with [`mix_connection`]'s.
pub fn mix_long_connection(
    i: u32,
    seed: u32,
    start_ns: i64,
    span_ns: i64,
    gap_ns: i64,
) -> (Captures, MixTruth) {
    use std::net::Ipv4Addr;
    let masq = IpAddr::V4(Ipv4Addr::new(198, 19, 3, 17));
    let backend = IpAddr::V4(Ipv4Addr::new(198, 19, 96, 10));
    let client = (IpAddr::V4(Ipv4Addr::new(198, 18, 250, (i % 250 + 2) as u8)), 30_000 + (i / 250) as u16);
    let remap = 65_001 + (i % 500) as u16;
    let hops = vec![
        Hop { delay_ns: 40_000, routed: true, ..Hop::default() },
        Hop { delay_ns: 90_000, routed: true, snat: Some(masq), snat_port: Some(remap), ..Hop::default() },
    ];
    let points = mix_points().into_iter().map(|p| Point { segment: 1448, ..p }).collect();
    let mut path = Path::new(points, hops);
    let s = mix(i ^ 0x10c6 ^ seed.rotate_left(8));
    let mut tcp = Tcp::new(client, (backend, 5432), start_ns, s);
    let gap_ns = gap_ns.max(1);
    tcp.response = response_body(s, (span_ns / gap_ns).max(1) as usize * 1448);
    tcp.gap_ns = gap_ns;
    path.tcp(&tcp);
    let truth = MixTruth {
        proto: "tcp",
        decap_client: format!("{}:{}", client.0, client.1),
        backend_client: format!("{masq}:{remap}"),
        reply_path: "same-path",
    };
    (path.finish(), truth)
}
