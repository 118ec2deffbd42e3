#!/usr/bin/env bash
# Records testdata/edge/app-netns.pcap: real application first bytes for the
# application-facts tests (issue 32) — a TLS 1.3 handshake by `openssl
# s_client` (SNI app.example, ALPN h2,http/1.1), an HTTP/1.1 GET by curl
# answered 404 by `python3 -m http.server`, and a DNS query for nx.app.example
# answered NXDOMAIN — captured by tcpdump on a veth pair between two network
# namespaces this script creates (198.18.210.1 client, 198.18.210.2 server; no
# route anywhere else), deleted when it ends, also on failure.
#
#   sudo scripts/app-capture.sh [OUT.pcap]
#
# Needs ip (iproute2), tcpdump, openssl, curl, python3; root (namespaces).
set -euo pipefail
OUT=${1:-$(dirname "$0")/../testdata/edge/app-netns.pcap}
# shellcheck source=scripts/netns-pair-lib.sh
source "$(dirname "$0")/netns-pair-lib.sh"
netns_pair tcapp$$ 198.18.210.1 198.18.210.2

# A self-signed certificate for app.example, made here.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=app.example \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

# Servers in the server namespace.
ip netns exec "$S" timeout 60 openssl s_server -quiet -accept 198.18.210.2:8443 -alpn h2 \
  -cert "$WORK/cert.pem" -key "$WORK/key.pem" -naccept 1 </dev/null >/dev/null 2>&1 &
PIDS+=($!)
mkdir "$WORK/www"
ip netns exec "$S" timeout 60 python3 -m http.server 8080 --bind 198.18.210.2 --directory "$WORK/www" \
  >/dev/null 2>&1 &
PIDS+=($!)
# One DNS answer: the query's id and question back, QR set, RCODE 3 (NXDOMAIN).
ip netns exec "$S" timeout 60 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.210.2", 53))
s.settimeout(50)
q, peer = s.recvfrom(512)
s.sendto(q[:2] + b"\x81\x83" + q[4:6] + b"\x00\x00\x00\x00\x00\x00" + q[12:], peer)
' &
PIDS+=($!)

capture_start 198.18.210.2
servers_listen() {
  ip netns exec "$S" ss -ltn | grep -q ':8443' && ip netns exec "$S" ss -ltn | grep -q ':8080' &&
    ip netns exec "$S" ss -lun | grep -q ':53'
}
capture_wait_ready servers_listen

ip netns exec "$C" timeout 10 openssl s_client -connect 198.18.210.2:8443 -servername app.example \
  -alpn h2,http/1.1 </dev/null >/dev/null 2>&1 || true
ip netns exec "$C" timeout 10 curl -s -o /dev/null -H 'Host: app.example' \
  'http://198.18.210.2:8080/nothing-here?q=1' || true
ip netns exec "$C" timeout 10 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
name = b"".join(bytes([len(p)]) + p for p in b"nx.app.example".split(b".")) + b"\x00"
s.sendto(b"\x1a\x2b\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + name + b"\x00\x01\x00\x01", ("198.18.210.2", 53))
s.recvfrom(512)
'
capture_stop "$OUT"
