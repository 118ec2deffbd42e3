#!/bin/bash
# Captures a real NFLOG (LINKTYPE 239) pcap the way a Kubernetes node user would
# (`tcpdump -i nflog:5`), for testdata/edge/nflog-tcpdump.pcap:
#
#     sudo scripts/capture-nflog.sh testdata/edge/nflog-tcpdump.pcap
#
# Everything happens inside a network namespace created here and deleted on exit
# (also on failure): no veth, no route, no link to a real interface. Addresses
# only from 198.18.0.0/15 and 2001:db8::/32, on the namespace's loopback. An
# nftables rule logs a TCP connection to 198.18.77.1:8080 and one UDP datagram to
# [2001:db8:77::1]:5353 to NFLOG group 5; tcpdump keeps 6 packets. Every step
# is bounded by `timeout`. Needs root, nft, tcpdump and python3.
set -eu
OUT=${1:?usage: capture-nflog.sh OUT.pcap}
NS=tuplecorr-nflog-$$
TD= SRV=
cleanup() {
    set +e
    [ -n "$TD" ] && kill "$TD" 2>/dev/null
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null
    ip netns del "$NS" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" addr add 198.18.77.1/32 dev lo
ip -n "$NS" addr add 2001:db8:77::1/128 dev lo nodad
ip netns exec "$NS" nft -f - <<'NFT'
table inet t {
  chain out {
    type filter hook output priority 0;
    ip daddr 198.18.77.1 tcp dport 8080 log group 5;
    ip6 daddr 2001:db8:77::1 udp dport 5353 log group 5;
  }
}
NFT
ip netns exec "$NS" timeout 10 python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.77.1", 8080)); s.listen(1); s.settimeout(8)
c, _ = s.accept(); c.settimeout(5); c.recv(100); c.close()' &
SRV=$!
ip netns exec "$NS" timeout 10 tcpdump -i nflog:5 -c 6 -U -w "$OUT" 2>/dev/null &
TD=$!
sleep 1.5
ip netns exec "$NS" timeout 5 python3 -c '
import socket
c = socket.create_connection(("198.18.77.1", 8080), timeout=3)
c.sendall(b"GET / HTTP/1.1\r\n\r\n"); c.close()
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.sendto(b"\x12\x34" + bytes(10), ("2001:db8:77::1", 5353, 0, 0))'
wait "$TD" || true
TD=
echo "wrote $OUT"
