#!/usr/bin/env bash
# Records testdata/edge/dns-tcp-netns.pcap: real DNS over TCP (each message
# after its 2-byte length, RFC 1035 4.2.2) for the application-facts tests
# (issue 32), captured by tcpdump on a veth pair between two network
# namespaces this script creates (198.18.211.1 client, 198.18.211.2 server; no
# route anywhere else), deleted when it ends, also on failure. Three
# connections to port 53, each answered by a small Python server:
#
#   1. tcp.app.example AAAA: length and message in one segment each way,
#      answered NOERROR;
#   2. split.app.example A: the client and the server each write the length
#      and the message apart (TCP_NODELAY: two segments), answered SERVFAIL;
#   3. first.app.example A and second.app.example MX in one segment
#      (pipelined), answered NOERROR and NXDOMAIN.
#
#   sudo scripts/dns-tcp-capture.sh [OUT.pcap]
#
# Needs ip (iproute2), tcpdump, python3; root (namespaces).
set -euo pipefail
OUT=${1:-$(dirname "$0")/../testdata/edge/dns-tcp-netns.pcap}
# shellcheck source=scripts/netns-pair-lib.sh
source "$(dirname "$0")/netns-pair-lib.sh"
netns_pair tcdns$$ 198.18.211.1 198.18.211.2

# The server: each connection's messages answered in order, the query's id
# and question back with QR, RD and RA set, no records; the response code by
# connection (and by message on the third). Bounded: three connections, 50 s.
ip netns exec "$S" timeout 60 python3 -c '
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.211.2", 53))
s.listen(4)
s.settimeout(50)
def read(c, n):
    b = b""
    while len(b) < n:
        more = c.recv(n - len(b))
        if not more:
            return None
        b += more
    return b
for conn, rcodes, split in [(1, [0], False), (2, [2], True), (3, [0, 3], False)]:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.settimeout(10)
    for rcode in rcodes:
        head = read(c, 2)
        if head is None:
            break
        q = read(c, struct.unpack("!H", head)[0])
        a = q[:2] + struct.pack("!H", 0x8180 | rcode) + q[4:6] + b"\x00" * 6 + q[12:]
        if split:
            c.sendall(struct.pack("!H", len(a)))
            time.sleep(0.05)
            c.sendall(a)
        else:
            c.sendall(struct.pack("!H", len(a)) + a)
    time.sleep(0.1)
    c.close()
' &
PIDS+=($!)

capture_start 198.18.211.2
server_listens() { ip netns exec "$S" ss -ltn | grep -q ':53 '; }
capture_wait_ready server_listens

ip netns exec "$C" timeout 20 python3 -c '
import socket, struct, time
def query(qid, name, qtype):
    wire = b"".join(bytes([len(p)]) + p for p in name.split(b".")) + b"\x00"
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + wire + struct.pack("!HH", qtype, 1)
def framed(m):
    return struct.pack("!H", len(m)) + m
def conn():
    c = socket.create_connection(("198.18.211.2", 53), timeout=5)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c
def drain(c, answers):
    got = 0
    buf = b""
    while got < answers:
        more = c.recv(4096)
        if not more:
            break
        buf += more
        while len(buf) >= 2 and len(buf) >= 2 + struct.unpack("!H", buf[:2])[0]:
            buf = buf[2 + struct.unpack("!H", buf[:2])[0]:]
            got += 1
    c.close()
c = conn()
c.sendall(framed(query(0x1111, b"tcp.app.example", 28)))
drain(c, 1)
c = conn()
q = query(0x2222, b"split.app.example", 1)
c.sendall(struct.pack("!H", len(q)))
time.sleep(0.05)
c.sendall(q)
drain(c, 1)
c = conn()
c.sendall(framed(query(0x3333, b"first.app.example", 1)) + framed(query(0x4444, b"second.app.example", 15)))
drain(c, 2)
'
capture_stop "$OUT"
