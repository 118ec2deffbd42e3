#!/usr/bin/env python3
"""Writes the hand-made edge captures in testdata/edge/ and their index.tsv.

Takes nothing (standard library only, deterministic: gzip mtime 0); gives one
small capture per format variant and per failure, each holding real-looking
IPv4/IPv6 TCP/UDP packets (addresses from 198.18.0.0/15 and 2001:db8::/32, valid
checksums) so the decode stage can reuse them. Never touches other folders.

Run from the repository root:  python3 scripts/make-edge.py
tests/integration/read.rs asserts on what these files hold; change both together.
"""

import gzip
import io
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "edge")

# 2026-11-29T23:40:38Z
T0 = 1795995638

MAC_CLIENT = bytes.fromhex("020000000001")
MAC_SERVER = bytes.fromhex("020000000002")

V4_CLIENT = "198.18.90.42"
V4_SERVER = "198.19.96.10"
V6_CLIENT = "2001:db8::42"
V6_SERVER = "2001:db8:1::10"


# ---------------------------------------------------------------- IP packets


def v4addr(s):
    return bytes(int(x) for x in s.split("."))


def v6addr(s):
    head, _, tail = s.partition("::")
    h = [int(x, 16) for x in head.split(":") if x]
    t = [int(x, 16) for x in tail.split(":") if x]
    words = h + [0] * (8 - len(h) - len(t)) + t
    return struct.pack("!8H", *words)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def tcp_segment(flags, sport, dport, seq, ack, payload, mss=None):
    opts = struct.pack("!BBH", 2, 4, mss) if mss else b""
    off = (20 + len(opts)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, 64240, 0, 0)
    return hdr + opts + payload


def udp_datagram(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def with_l4_checksum(proto, seg, pseudo):
    at = 16 if proto == 6 else 6
    c = csum(pseudo + seg)
    if proto == 17 and c == 0:
        c = 0xFFFF
    return seg[:at] + struct.pack("!H", c) + seg[at + 2 :]


def ipv4(src, dst, proto, seg, ipid, ttl=64):
    s, d = v4addr(src), v4addr(dst)
    pseudo = s + d + struct.pack("!BBH", 0, proto, len(seg))
    seg = with_l4_checksum(proto, seg, pseudo)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg), ipid, 0x4000, ttl, proto, 0, s, d)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + seg


def ipv6(src, dst, proto, seg, hlim=64):
    s, d = v6addr(src), v6addr(dst)
    pseudo = s + d + struct.pack("!IxxxB", len(seg), proto)
    seg = with_l4_checksum(proto, seg, pseudo)
    return struct.pack("!IHBB16s16s", 0x60000000, len(seg), proto, hlim, s, d) + seg


SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01


class Pkt:
    """An IP packet plus a one-line description for index.tsv."""

    def __init__(self, ip, desc):
        self.ip = ip
        self.desc = desc


def v4_tcp(flags, sport, dport, seq, ack=0, payload=b"", ipid=0x1234, src=V4_CLIENT, dst=V4_SERVER, mss=None):
    seg = tcp_segment(flags, sport, dport, seq, ack, payload, mss)
    names = "".join(n for f, n in ((SYN, "S"), (ACK, "A"), (PSH, "P"), (FIN, "F")) if flags & f)
    return Pkt(ipv4(src, dst, 6, seg, ipid), f"tcp {src}:{sport}>{dst}:{dport} [{names}] seq={seq} len={len(payload)}")


def v4_udp(sport, dport, payload, ipid=0x2345, src=V4_CLIENT, dst=V4_SERVER):
    return Pkt(ipv4(src, dst, 17, udp_datagram(sport, dport, payload), ipid), f"udp {src}:{sport}>{dst}:{dport} len={len(payload)}")


def v6_tcp(flags, sport, dport, seq, ack=0, payload=b"", src=V6_CLIENT, dst=V6_SERVER, mss=None):
    seg = tcp_segment(flags, sport, dport, seq, ack, payload, mss)
    names = "".join(n for f, n in ((SYN, "S"), (ACK, "A"), (PSH, "P"), (FIN, "F")) if flags & f)
    return Pkt(ipv6(src, dst, 6, seg), f"tcp [{src}]:{sport}>[{dst}]:{dport} [{names}] seq={seq} len={len(payload)}")


def v6_udp(sport, dport, payload, src=V6_CLIENT, dst=V6_SERVER):
    return Pkt(ipv6(src, dst, 17, udp_datagram(sport, dport, payload)), f"udp [{src}]:{sport}>[{dst}]:{dport} len={len(payload)}")


HTTP_GET = b"GET / HTTP/1.1\r\nHost: svc\r\n\r\n"
HTTP_OK = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100
DNS_Q = bytes.fromhex("abcd01000001000000000000037376630000010001")


def handshake_v4(sport=51514, dport=80):
    return [
        v4_tcp(SYN, sport, dport, 0x12345678, mss=1460),
        v4_tcp(SYN | ACK, dport, sport, 0x9ABCDEF0, 0x12345679, src=V4_SERVER, dst=V4_CLIENT, ipid=0, mss=1460),
        v4_tcp(ACK | PSH, sport, dport, 0x12345679, 0x9ABCDEF1, HTTP_GET, ipid=0x1235),
    ]


# ---------------------------------------------------------------- link layers


def is_v6(ip):
    return ip[0] >> 4 == 6


def ethertype(ip):
    return 0x86DD if is_v6(ip) else 0x0800


def eth(ip):
    return MAC_SERVER + MAC_CLIENT + struct.pack("!H", ethertype(ip)) + ip


def eth_vlan(ip, vid=100):
    return MAC_SERVER + MAC_CLIENT + struct.pack("!HHH", 0x8100, vid, ethertype(ip)) + ip


def eth_qinq(ip, outer=200, inner=100):
    return MAC_SERVER + MAC_CLIENT + struct.pack("!HHHHH", 0x88A8, outer, 0x8100, inner, ethertype(ip)) + ip


def sll(ip):
    # packet type 0 (to us), ARPHRD_ETHER, address length 6, address padded to 8, protocol
    return struct.pack("!HHH8sH", 0, 1, 6, MAC_CLIENT, ethertype(ip)) + ip


def sll2(ip, ifindex=3):
    # protocol, reserved, interface index, ARPHRD_ETHER, packet type, address length, address
    return struct.pack("!HHIHBB8s", ethertype(ip), 0, ifindex, 1, 0, 6, MAC_CLIENT) + ip


def null(ip, family, order):
    return struct.pack(order + "I", family) + ip


def ppp(ip, hdlc=True, compressed=False):
    # optional address 0xff + control 0x03, then protocol 0x0021 IPv4 / 0x0057 IPv6
    # (one byte with protocol-field compression)
    proto = 0x57 if is_v6(ip) else 0x21
    head = bytes([0xFF, 0x03]) if hdlc else b""
    return head + (bytes([proto]) if compressed else struct.pack("!H", proto)) + ip


def chdlc(ip, address=0x0F):
    # address (0x0f unicast, 0x8f broadcast), control 0, ethertype
    return struct.pack("!BBH", address, 0, ethertype(ip)) + ip


def nflog(ip, order="<", prefix=b"k8s-fw-drop", rid=5):
    """NFLOG (239): family, version 0, resource id (big-endian), then TLVs whose
    length and type are in the capturing host's byte order, padded to 4 bytes:
    NFULA_PACKET_HDR (1), NFULA_PREFIX (10), NFULA_UID (11), NFULA_PAYLOAD (9)."""
    def tlv(ty, value):
        t = struct.pack(order + "HH", 4 + len(value), ty) + value
        return t + b"\0" * (-len(t) % 4)
    family = 10 if is_v6(ip) else 2
    out = struct.pack("!BBH", family, 0, rid)
    out += tlv(1, struct.pack("!HBx", ethertype(ip), 3))
    out += tlv(10, prefix + b"\0")
    out += tlv(11, struct.pack("!I", 0))
    return out + tlv(9, ip)


# ---------------------------------------------------------------- writers


def pcap(records, link=1, order="<", nanos=False, modified=False, snaplen=262144, linkfield=None, minor=4):
    """records: (sec, frac, data[, orig_len])."""
    magic = 0xA1B2CD34 if modified else (0xA1B23C4D if nanos else 0xA1B2C3D4)
    out = struct.pack(order + "IHHiIII", magic, 2, minor, 0, 0, snaplen, link if linkfield is None else linkfield)
    for r in records:
        sec, frac, data = r[0], r[1], r[2]
        orig = r[3] if len(r) > 3 else len(data)
        out += struct.pack(order + "IIII", sec, frac, len(data), orig)
        if modified:
            out += struct.pack(order + "IHBB", 2, ethertype(data[14:]) if link == 1 else 0, 0, 0)
        out += data
    return out


def block(btype, body, order="<"):
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack(order + "II", btype, n) + body + struct.pack(order + "I", n)


def options(opts, order="<"):
    out = b""
    for code, value in opts:
        out += struct.pack(order + "HH", code, len(value)) + value + b"\0" * (-len(value) % 4)
    return out + (struct.pack(order + "HH", 0, 0) if opts else b"")


def shb(order="<", major=1, minor=0):
    return block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, major, minor, -1), order)


def idb(link, snaplen=0, opts=(), order="<"):
    return block(1, struct.pack(order + "HHI", link, 0, snaplen) + options(list(opts), order), order)


def epb(iface, units, data, order="<", orig=None):
    body = struct.pack(order + "IIIII", iface, units >> 32, units & 0xFFFFFFFF, len(data), len(data) if orig is None else orig)
    return block(6, body + data, order)


def spb(data, orig=None, order="<"):
    return block(3, struct.pack(order + "I", orig or len(data)) + data, order)


def pb(iface, units, data, order="<"):
    body = struct.pack(order + "HHIIII", iface, 0, units >> 32, units & 0xFFFFFFFF, len(data), len(data))
    return block(2, body + data, order)


def us(sec, usec):
    return sec * 1_000_000 + usec


# ---------------------------------------------------------------- the files

FILES = []  # (name, bytes, what it exercises, [packet descriptions])

# Captures made by real tools (not rewritten here), listed in index.tsv.
KEPT = [
    ("nflog-tcpdump.pcap",
     "NFLOG (239) from tcpdump -i nflog:5 (scripts/capture-nflog.sh): nftables log group 5 in a namespace, LE host",
     ["tcp 198.18.77.1:60390>198.18.77.1:8080 [S]", "[A]", "[AP] len=20", "[AF]",
      "udp [2001:db8:77::1]:40573>[2001:db8:77::1]:5353 len=12", "tcp [A]"]),
]


def add(name, data, what, pkts=()):
    FILES.append((name, data, what, [p.desc for p in pkts]))


def main():
    os.makedirs(OUT, exist_ok=True)
    hs = handshake_v4()

    # Link types ---------------------------------------------------------
    add("eth-ipv4-tcp.pcap", pcap([(T0, i * 1000, eth(p.ip)) for i, p in enumerate(hs)]),
        "Ethernet (1), LE us pcap: TCP handshake + request", hs)
    p6 = [v6_udp(40000, 53, DNS_Q), v6_udp(53, 40000, DNS_Q, src=V6_SERVER, dst=V6_CLIENT)]
    add("eth-vlan-ipv6-udp.pcap", pcap([(T0, i, eth_vlan(p.ip)) for i, p in enumerate(p6)]),
        "Ethernet + 802.1Q VLAN 100: IPv6 UDP", p6)
    p4u = [v4_udp(40001, 53, DNS_Q), v4_udp(53, 40001, DNS_Q, src=V4_SERVER, dst=V4_CLIENT, ipid=0)]
    add("eth-qinq-ipv4-udp.pcap", pcap([(T0, i, eth_qinq(p.ip)) for i, p in enumerate(p4u)]),
        "Ethernet + 802.1ad QinQ (outer 200, inner 100): IPv4 UDP", p4u)
    mixed = [hs[0], v6_tcp(SYN, 51515, 443, 0x0BADCAFE, mss=1440)]
    for link, name in ((101, "raw101"), (12, "raw12"), (14, "raw14")):
        add(f"{name}-mixed.pcap", pcap([(T0, i, p.ip) for i, p in enumerate(mixed)], link=link),
            f"raw IP link type {link}: one IPv4, one IPv6 packet", mixed)
    add("raw228-ipv4.pcap", pcap([(T0, i, p.ip) for i, p in enumerate(hs)], link=228),
        "LINKTYPE_IPV4 (228)", hs)
    p6t = [v6_tcp(SYN, 51516, 80, 1000, mss=1440), v6_tcp(SYN | ACK, 80, 51516, 2000, 1001, src=V6_SERVER, dst=V6_CLIENT)]
    add("raw229-ipv6.pcap", pcap([(T0, i, p.ip) for i, p in enumerate(p6t)], link=229),
        "LINKTYPE_IPV6 (229)", p6t)
    add("sll-ipv4-tcp.pcap", pcap([(T0, i, sll(p.ip)) for i, p in enumerate(hs)], link=113),
        "Linux cooked SLL (113), tcpdump -i any", hs)
    add("sll2-ipv6-tcp.pcap", pcap([(T0, i, sll2(p.ip)) for i, p in enumerate(p6t)], link=276),
        "Linux cooked SLL2 (276), interface index 3", p6t)
    # BSD null: AF_INET 2, AF_INET6 10 (Linux), 24 (OpenBSD/NetBSD), 28 (FreeBSD), 30 (macOS)
    fam = [(2, hs[0])] + [(f, v6_tcp(SYN, 50000 + f, 80, 7000 + f, mss=1440)) for f in (10, 24, 28, 30)]
    for order, name in (("<", "le"), (">", "be")):
        add(f"null-{name}.pcap", pcap([(T0, i, null(p.ip, f, order)) for i, (f, p) in enumerate(fam)], link=0, order=order),
            f"BSD null (0), {'little' if order == '<' else 'big'}-endian file and family field: AF_INET 2, AF_INET6 10/24/28/30",
            [p for _, p in fam])
    loop = [(2, hs[0]), (24, fam[2][1])]
    add("loop108.pcap", pcap([(T0, i, null(p.ip, f, ">")) for i, (f, p) in enumerate(loop)], link=108),
        "OpenBSD loop (108): family big-endian in a LE file: AF_INET 2, AF_INET6 24", [p for _, p in loop])

    # pcap variants --------------------------------------------------------
    add("be-us.pcap", pcap([(T0, 250_000 + i, eth(p.ip)) for i, p in enumerate(hs)], order=">"),
        "big-endian us pcap", hs)
    add("le-ns.pcap", pcap([(T0, 123_456_789 + i, eth(p.ip)) for i, p in enumerate(hs)], nanos=True),
        "little-endian ns pcap: nanosecond timestamps", hs)
    add("be-ns.pcap", pcap([(T0, 999_999_999, eth(hs[0].ip))], order=">", nanos=True),
        "big-endian ns pcap", hs[:1])
    add("modified.pcap", pcap([(T0, i, eth(p.ip)) for i, p in enumerate(hs)], modified=True),
        "Kuznetsov modified pcap (a1b2cd34, 24-byte record headers)", hs)
    add("modified-be.pcap", pcap([(T0, i, eth(p.ip)) for i, p in enumerate(hs)], modified=True, order=">"),
        "Kuznetsov modified pcap, big-endian", hs)
    add("linktype-fcs-bits.pcap", pcap([(T0, 0, eth(hs[0].ip))], linkfield=0x14000001),
        "link-type field 0x14000001: FCS-length bits above Ethernet (1) are masked off", hs[:1])
    add("snaplen-exceeded.pcap", pcap([(T0, 0, eth(p.ip)) for p in hs], snaplen=64),
        "snaplen 64, records longer than it (accepted up to the 256 KiB cap)", hs)
    add("ns-fraction-overflow.pcap", pcap([(T0, 1_500_000_000, eth(hs[0].ip)), (T0, 1_000_000_000, eth(hs[1].ip))], nanos=True),
        "ns fraction >= 1e9 in two records: carried into the seconds, one warning", hs[:2])

    # pcapng ----------------------------------------------------------------
    ng = shb()
    ng += idb(1, 262144, [(2, b"eth0"), (9, bytes([6]))])
    ng += idb(101, 262144, [(2, b"tun0"), (9, bytes([0x8A])), (14, struct.pack("<q", 3600))])
    ng += epb(0, us(T0, 1), eth(hs[0].ip))
    # 2^-10 s units, 3600 s offset: T0 + 0.5 s
    ng += epb(1, (T0 - 3600) * 1024 + 512, hs[1].ip)
    ng += epb(0, us(T0, 3), eth(hs[2].ip))
    add("pcapng-two-if-tsresol.pcapng", ng,
        "pcapng: interface 0 Ethernet 10^-6 (eth0), interface 1 raw 2^-10 with if_tsoffset 3600 (tun0)", hs)

    sec2 = shb(">") + idb(101, 0, [(9, bytes([9]))], ">") + epb(0, T0 * 10**9 + 7, p6t[0].ip, ">") + epb(0, T0 * 10**9 + 8, p6t[1].ip, ">")
    two = shb() + idb(1) + epb(0, us(T0, 10), eth(hs[0].ip)) + epb(0, us(T0, 11), eth(hs[1].ip)) + sec2
    add("pcapng-two-sections.pcapng", two,
        "pcapng: section 1 LE (interface 0 Ethernet), section 2 BE (interface 1 raw, ns): interfaces renumbered", hs[:2] + p6t)

    resp = v4_tcp(ACK | PSH, 80, 51514, 0x9ABCDEF1, 0x12345696, HTTP_OK, src=V4_SERVER, dst=V4_CLIENT, ipid=0)
    spbpb = shb() + idb(1, 96) + epb(0, us(T0, 20), eth(hs[0].ip)) + spb(eth(resp.ip)[:96], len(eth(resp.ip)))
    spbpb += pb(0, us(T0, 22), eth(hs[1].ip))
    add("pcapng-spb-pb.pcapng", spbpb,
        "pcapng: EPB, SPB (snaplen 96 cuts it; no timestamp: takes the previous one), obsolete PB", [hs[0], resp, hs[1]])

    unk = shb() + block(0x00000BAD, b"custom data ignored") + idb(1)
    unk += block(4, struct.pack("<HH4s", 1, 4, v4addr(V4_SERVER)) + b"\0\0\0\0")  # NRB
    unk += epb(0, us(T0, 30), eth(hs[0].ip)) + block(5, struct.pack("<III", 0, 0, 0))  # ISB
    unk += block(0x40000BAD, struct.pack("<I", 32473) + b"pen")
    unk += epb(0, us(T0, 31), eth(hs[1].ip))
    add("pcapng-unknown-block.pcapng", unk,
        "pcapng: unknown/custom blocks, NRB and ISB are skipped", hs[:2])

    ulink = shb() + idb(1) + idb(147) + epb(0, us(T0, 40), eth(hs[0].ip)) + epb(1, us(T0, 41), b"\x01\x02\x03\x04") + epb(1, us(T0, 42), b"\x05\x06")
    opaque = [Pkt(b"", "opaque USER0 record (4 bytes)"), Pkt(b"", "opaque USER0 record (2 bytes)")]
    add("pcapng-unknown-linktype.pcapng", ulink,
        "pcapng: interface 1 has link type 147 (USER0): records yielded, one warning", hs[:1] + opaque)

    badif = shb() + idb(1) + epb(0, us(T0, 50), eth(hs[0].ip)) + epb(7, us(T0, 51), eth(hs[1].ip)) + epb(0, us(T0, 52), eth(hs[2].ip))
    add("pcapng-bad-interface.pcapng", badif,
        "pcapng: record 2 names interface 7, which does not exist: skipped with a warning", [hs[0], hs[2]])

    ngtrunc = shb() + idb(1) + epb(0, us(T0, 60), eth(hs[0].ip)) + epb(0, us(T0, 61), eth(hs[1].ip))
    add("pcapng-truncated.pcapng", ngtrunc[:-20],
        "pcapng: last EPB cut 20 bytes short", hs[:1])

    # Link types carrying plain IP (PPP, Cisco HDLC, NFLOG) and ones not decoded
    pppk = [hs[0], v6_tcp(SYN, 51517, 443, 3000, mss=1440), hs[1]]
    lcp = bytes.fromhex("ff03c021010100040000")  # LCP Configure-Request: not IP
    add("ppp9.pcap", pcap([(T0, 0, ppp(pppk[0].ip)), (T0, 1, ppp(pppk[1].ip, hdlc=False)),
                           (T0, 2, ppp(pppk[2].ip, compressed=True)), (T0, 3, lcp)], link=9),
        "PPP (9): ff03+0x0021 IPv4; no address/control, 0x0057 IPv6; compressed protocol 0x21; then an LCP frame (not IP)",
        pppk + [Pkt(b"", "LCP Configure-Request (not IP)")])
    add("ppp-hdlc50.pcap", pcap([(T0, 0, ppp(pppk[0].ip)), (T0, 1, ppp(pppk[1].ip))], link=50),
        "PPP in HDLC-like framing (50): ff03 0021 IPv4, ff03 0057 IPv6", pppk[:2])
    slarp = bytes.fromhex("8f008035") + bytes(18)
    add("chdlc104.pcap", pcap([(T0, 0, chdlc(hs[0].ip)), (T0, 1, chdlc(pppk[1].ip, 0x8F)), (T0, 2, slarp)], link=104),
        "Cisco HDLC (104): 0f00 0800 IPv4, 8f00 86dd IPv6, then a SLARP keepalive (8035, not IP)",
        pppk[:2] + [Pkt(b"", "SLARP keepalive (not IP)")])
    nfk = [hs[0], v6_udp(40002, 53, DNS_Q)]
    add("nflog239-be.pcap", pcap([(T0, i, nflog(p.ip, ">")) for i, p in enumerate(nfk)], link=239, order=">"),
        "NFLOG (239) from a big-endian host: big-endian file, TLV lengths and types big-endian; prefix k8s-fw-drop", nfk)
    add("fddi10.pcap", pcap([(T0, 0, bytes(13) + hs[0].ip), (T0, 1, bytes(13) + hs[1].ip)], link=10),
        "FDDI (10), not decoded: two records skipped with one warning naming FDDI", hs[:2])
    idle = shb() + idb(1) + idb(10) + idb(105) + epb(0, us(T0, 70), eth(hs[0].ip))
    add("pcapng-idle-interfaces.pcapng", idle,
        "pcapng: interface 0 Ethernet with a packet; interfaces 1 (FDDI) and 2 (IEEE802_11) have none: no warning", hs[:1])

    # Versions and lengths that are odd but readable --------------------------
    v11 = shb(minor=1) + idb(1) + epb(0, us(T0, 80), eth(hs[0].ip)) + shb(minor=2) + idb(1) + epb(0, us(T0, 81), eth(hs[1].ip))
    add("pcapng-version-1-1.pcapng", v11,
        "pcapng: sections of version 1.1 and 1.2: read, one warning", hs[:2])
    add("pcap-version-2-5.pcap", pcap([(T0, i, eth(p.ip)) for i, p in enumerate(hs[:2])], minor=5),
        "pcap version 2.5: read, one warning", hs[:2])
    over = [(T0, 0, eth(hs[0].ip)), (T0, 1, eth(hs[1].ip), 40), (T0, 2, eth(hs[2].ip), 60)]
    add("caplen-over-orig.pcap", pcap(over),
        "records 2 and 3 have captured length above original length (58 > 40, 83 > 60): read, one warning", hs)
    ngover = shb() + idb(1) + epb(0, us(T0, 90), eth(hs[0].ip), orig=14)
    add("pcapng-caplen-over-orig.pcapng", ngover,
        "pcapng: an EPB with captured length 58, original length 14: read, one warning", hs[:1])
    later2 = (shb() + idb(1) + epb(0, us(T0, 100), eth(hs[0].ip)) + shb(major=2) + idb(1)
              + epb(0, us(T0, 101), eth(hs[1].ip)) + shb() + idb(1) + epb(0, us(T0, 102), eth(hs[2].ip)))
    add("pcapng-later-version-2.pcapng", later2,
        "pcapng: three sections, the second of version 2.0: skipped with a warning, records 1 and 3 read", [hs[0], hs[2]])

    # gzip --------------------------------------------------------------------
    plain = pcap([(T0, i * 1000, eth(p.ip)) for i, p in enumerate(hs)])
    cut = 24 + 16 + len(eth(hs[0].ip)) + 5  # second member starts inside record 2
    gz = gzip.compress(plain[:cut], mtime=0) + gzip.compress(plain[cut:], mtime=0)
    add("eth-ipv4-tcp.pcap.gz", gz,
        "gzip with two members (split inside record 2) of eth-ipv4-tcp.pcap", hs)
    add("pcapng-two-sections.pcapng.gz", gzip.compress(two, mtime=0),
        "gzip (one member) of pcapng-two-sections.pcapng", hs[:2] + p6t)

    # damage ------------------------------------------------------------------
    add("truncated-last-record.pcap", plain[:-20],
        "last record cut 20 bytes short (tcpdump killed mid-write)", hs[:2])
    rec3 = 24 + 16 + len(eth(hs[0].ip)) + 16 + len(eth(hs[1].ip))
    garbage = bytearray(plain)
    struct.pack_into("<I", garbage, rec3 + 8, 0xC0000000)
    add("garbage-length.pcap", bytes(garbage),
        "record 3 has captured length 0xC0000000: stop, keep 2 records", hs[:2])
    add("header-only.pcap", plain[:24], "pcap file header, no records")
    add("header-cut.pcap", plain[:20], "pcap file header cut at 20 of 24 bytes: error")
    add("not-a-capture.txt", b"# tuplecorr notes\nthis is not a capture\n", "text file: not a capture")
    add("empty.pcap", b"", "empty file")
    add("pcap-version-1.pcap", plain[:4] + struct.pack("<H", 1) + plain[6:], "pcap major version 1: error")
    add("pcapng-version-2.pcapng", shb(major=2) + idb(1) + epb(0, us(T0, 1), eth(hs[0].ip)),
        "pcapng first section version 2.0: error")

    for name, data, _, _ in FILES:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    with open(os.path.join(OUT, "index.tsv"), "w") as f:
        f.write("file\texercises\tpackets\tcontents\n")
        for name, _, what, descs in FILES:
            f.write(f"{name}\t{what}\t{len(descs)}\t{'; '.join(descs)}\n")
        for name, what, descs in KEPT:
            f.write(f"{name}\t{what}\t{len(descs)}\t{'; '.join(descs)}\n")
    print(f"wrote {len(FILES)} files to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
