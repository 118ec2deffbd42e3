#!/usr/bin/env python3
"""Network helpers of the tuplecorr lab (python3 stdlib only).

Subcommands, each bounded by --lifetime seconds and stopped early by SIGTERM/SIGINT:

  tunnel   a userspace UDP tunnel endpoint: a TUN device (IFF_TUN|IFF_NO_PI, so
           tcpdump on it sees raw IP) whose packets are carried in UDP datagrams
           to the peer endpoint, and whose peer's datagrams are written back to it.
  proxy    a terminating TCP proxy: accepts connections redirected to it
           (iptables REDIRECT), reads SO_ORIGINAL_DST and opens a new connection
           to that destination from its own address, copying bytes both ways.
  nfqdelay an NFQUEUE consumer (raw netlink) that holds every queued packet a fixed
           time, then accepts it: a one-way delay without sch_netem.

Every socket has a timeout; every loop ends at the deadline.
"""
import argparse
import fcntl
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

STOP = False


def _stop(_signum, _frame):
    global STOP
    STOP = True


def install_signals():
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)


def log(path, obj):
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(obj, sort_keys=True) + "\n")


# --------------------------------------------------------------------------- tunnel
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    ifr = struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI)
    fcntl.ioctl(fd, TUNSETIFF, ifr)
    return fd


def cmd_tunnel(a):
    install_signals()
    deadline = time.monotonic() + a.lifetime
    fd = open_tun(a.dev)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((a.local, a.port))
    sock.setblocking(False)
    peer = (a.peer, a.port)
    with open(a.ready, "w", encoding="utf-8") as f:
        f.write("ready\n")
    n_up = n_down = 0
    while not STOP and time.monotonic() < deadline:
        r, _, _ = select.select([fd, sock], [], [], 0.2)
        if fd in r:
            for _ in range(64):
                try:
                    pkt = os.read(fd, 65535)
                except BlockingIOError:
                    break
                sock.sendto(pkt, peer)
                n_up += 1
        if sock in r:
            for _ in range(64):
                try:
                    pkt, _src = sock.recvfrom(65535)
                except BlockingIOError:
                    break
                try:
                    os.write(fd, pkt)
                    n_down += 1
                except OSError:
                    pass
    print(f"tunnel {a.dev}: {n_up} packets encapsulated, {n_down} decapsulated", file=sys.stderr)


# --------------------------------------------------------------------------- proxy
SO_ORIGINAL_DST = 80


def read_head(sock, limit=65536):
    """Bytes up to and including the blank line that ends an HTTP head (bounded)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < limit:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def rewrite_request(data, client_ip):
    """What an HTTP reverse proxy does to a request: HTTP/1.0 upstream, its own
    Via, and the client appended to X-Forwarded-For (nginx's
    $proxy_add_x_forwarded_for); every other header, the request id included, kept."""
    head, sep, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    method, target, _ = (lines[0].split(b" ") + [b"", b""])[:3]
    out = [method + b" " + target + b" HTTP/1.0", b"Via: 1.1 tclab-proxy"]
    xff = None
    for h in lines[1:]:
        name = h.partition(b":")[0].strip().lower()
        if name == b"x-forwarded-for":
            xff = h.partition(b":")[2].strip()
        elif name != b"connection":
            out.append(h)
    xff = (xff + b", " if xff else b"") + client_ip.encode()
    out += [b"X-Forwarded-For: " + xff, b"Connection: close"]
    return b"\r\n".join(out) + sep + body


def rewrite_response(data):
    status, sep, rest = data.partition(b"\r\n")
    return status + sep + b"Via: 1.1 tclab-proxy\r\n" + rest if sep else data


def proxy_conn(a, conn, peer):
    try:
        raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
        port = struct.unpack("!H", raw[2:4])[0]
        ip = socket.inet_ntoa(raw[4:8])
        up = socket.create_connection((ip, port), timeout=a.timeout)
        if a.send_proxy == "v1":
            # PROXY protocol v1 (haproxy's send-proxy): who the client really is
            up.sendall(f"PROXY TCP4 {peer[0]} {ip} {peer[1]} {port}\r\n".encode())
        elif a.send_proxy == "v2":
            # PROXY protocol v2 (haproxy's send-proxy-v2): PROXY command, TCP over IPv4,
            # then a NOOP TLV (type 0x04) that a reader must skip within the length
            addrs = socket.inet_aton(peer[0]) + socket.inet_aton(ip) + struct.pack("!HH", peer[1], port)
            tlv = b"\x04\x00\x03tcl"
            up.sendall(b"\r\n\r\n\x00\r\nQUIT\n" + b"\x21\x11" + struct.pack("!H", len(addrs) + len(tlv))
                       + addrs + tlv)
        entry = {
            "event": "proxied",
            "downstream_peer": list(peer),
            "downstream_sock": list(conn.getsockname()),
            "original_dst": [ip, port],
            "upstream_sock": list(up.getsockname()),
            "upstream_peer": list(up.getpeername()),
            "send_proxy": a.send_proxy,
            "http": a.http,
        }
        log(a.log, entry)
        conn.settimeout(a.timeout)
        up.settimeout(a.timeout)
        if a.http:
            up.sendall(rewrite_request(read_head(conn), peer[0]))
            conn.sendall(rewrite_response(read_head(up)))

        def pump(src, dst):
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

        t = threading.Thread(target=pump, args=(up, conn), daemon=True)
        t.start()
        pump(conn, up)
        t.join(a.timeout)
        up.close()
    except OSError as e:
        log(a.log, {"event": "error", "downstream_peer": list(peer), "error": str(e)})
    finally:
        conn.close()


def cmd_proxy(a):
    install_signals()
    deadline = time.monotonic() + a.lifetime
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", a.port))
    ls.listen(64)
    ls.settimeout(0.2)
    with open(a.ready, "w", encoding="utf-8") as f:
        f.write("ready\n")
    while not STOP and time.monotonic() < deadline:
        try:
            conn, peer = ls.accept()
        except socket.timeout:
            continue
        threading.Thread(target=proxy_conn, args=(a, conn, peer), daemon=True).start()


# --------------------------------------------------------------------------- nfqueue
NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET = 0
NFQNL_MSG_VERDICT = 1
NFQNL_MSG_CONFIG = 2
NFQA_CFG_CMD = 1
NFQA_CFG_PARAMS = 2
NFQA_PACKET_HDR = 1
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQNL_COPY_PACKET = 2
NF_ACCEPT = 1
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
NFQA_VERDICT_HDR = 2


def nla(t, payload):
    ln = 4 + len(payload)
    pad = (4 - ln % 4) % 4
    return struct.pack("=HH", ln, t) + payload + b"\0" * pad


def nfmsg(msg_type, family, res_id, attrs, flags=NLM_F_REQUEST, seq=0):
    body = struct.pack("=BBH", family, 0, socket.htons(res_id)) + b"".join(attrs)
    t = (NFNL_SUBSYS_QUEUE << 8) | msg_type
    return struct.pack("=IHHII", 16 + len(body), t, flags, seq, 0) + body


def cmd_nfqdelay(a):
    install_signals()
    deadline = time.monotonic() + a.lifetime
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    s.settimeout(0.05)
    q = a.queue
    # bind the queue (family AF_UNSPEC for the command), copy only metadata
    cmd = struct.pack("=BxH", NFQNL_CFG_CMD_BIND, socket.htons(socket.AF_INET))
    s.send(nfmsg(NFQNL_MSG_CONFIG, socket.AF_UNSPEC, q, [nla(NFQA_CFG_CMD, cmd)], NLM_F_REQUEST | NLM_F_ACK, 1))
    params = struct.pack("!IB", 0, NFQNL_COPY_META)
    s.send(nfmsg(NFQNL_MSG_CONFIG, socket.AF_UNSPEC, q, [nla(NFQA_CFG_PARAMS, params)], NLM_F_REQUEST | NLM_F_ACK, 2))
    acks = 0
    ack_deadline = time.monotonic() + 2
    while acks < 2 and time.monotonic() < ack_deadline:
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        off = 0
        while off + 16 <= len(data):
            ln, typ, _fl, _seq, _pid = struct.unpack_from("=IHHII", data, off)
            if typ == NLMSG_ERROR:
                err = struct.unpack_from("=i", data, off + 16)[0]
                if err != 0:
                    print(f"nfqdelay: netlink config error {err}", file=sys.stderr)
                    sys.exit(1)
                acks += 1
            off += (ln + 3) & ~3
    with open(a.ready, "w", encoding="utf-8") as f:
        f.write("ready\n")
    hold = a.delay_ms / 1000.0
    pending = []  # (release_time, packet_id)
    n = 0
    while not STOP and time.monotonic() < deadline:
        now = time.monotonic()
        while pending and pending[0][0] <= now:
            _, pid = pending.pop(0)
            vh = struct.pack("!II", NF_ACCEPT, pid)
            s.send(nfmsg(NFQNL_MSG_VERDICT, socket.AF_UNSPEC, q, [nla(NFQA_VERDICT_HDR, vh)]))
            n += 1
        timeout = 0.05
        if pending:
            timeout = max(0.0, min(timeout, pending[0][0] - time.monotonic()))
        s.settimeout(timeout if timeout > 0 else 0.0001)
        try:
            data = s.recv(65536)
        except (socket.timeout, BlockingIOError):
            continue
        arrived = time.monotonic()
        off = 0
        while off + 16 <= len(data):
            ln, typ, _fl, _seq, _pid = struct.unpack_from("=IHHII", data, off)
            if ln < 16:
                break
            if typ == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                aoff = off + 20
                end = off + ln
                while aoff + 4 <= end:
                    alen, atype = struct.unpack_from("=HH", data, aoff)
                    if alen < 4:
                        break
                    if (atype & 0x7FFF) == NFQA_PACKET_HDR:
                        pid = struct.unpack_from("!I", data, aoff + 4)[0]
                        pending.append((arrived + hold, pid))
                    aoff += (alen + 3) & ~3
            off += (ln + 3) & ~3
    # release whatever is left so nothing stays queued
    for _, pid in pending:
        vh = struct.pack("!II", NF_ACCEPT, pid)
        try:
            s.send(nfmsg(NFQNL_MSG_VERDICT, socket.AF_UNSPEC, q, [nla(NFQA_VERDICT_HDR, vh)]))
        except OSError:
            pass
    print(f"nfqdelay: {n} packets held {a.delay_ms} ms", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tunnel")
    t.add_argument("--dev", required=True)
    t.add_argument("--local", required=True)
    t.add_argument("--peer", required=True)
    t.add_argument("--port", type=int, default=51820)
    t.add_argument("--ready", required=True)
    t.add_argument("--lifetime", type=float, default=120)
    x = sub.add_parser("proxy")
    x.add_argument("--port", type=int, default=3128)
    x.add_argument("--log", required=True)
    x.add_argument("--ready", required=True)
    x.add_argument("--timeout", type=float, default=3)
    x.add_argument("--lifetime", type=float, default=60)
    x.add_argument("--send-proxy", choices=["v1", "v2"], default=None,
                   help="write a PROXY protocol header with the client's address first")
    x.add_argument("--http", action="store_true",
                   help="an HTTP reverse proxy: rewrite the request (HTTP/1.0, Via, X-Forwarded-For "
                        "appended) and the response (Via), keep the request id")
    d = sub.add_parser("nfqdelay")
    d.add_argument("--queue", type=int, default=0)
    d.add_argument("--delay-ms", type=float, default=20)
    d.add_argument("--ready", required=True)
    d.add_argument("--lifetime", type=float, default=60)
    a = p.parse_args()
    {"tunnel": cmd_tunnel, "proxy": cmd_proxy, "nfqdelay": cmd_nfqdelay}[a.cmd](a)


if __name__ == "__main__":
    main()
