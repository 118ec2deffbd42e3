#!/usr/bin/env bash
# A real kernel's NAT under port pressure (issue 12 item 3), outside lab.sh:
#
#   sudo scripts/lab/nat-port-reuse.sh OUTDIR
#
# Three namespaces joined by veth pairs (no other link, no default route):
#   client 198.18.50.2 = r0 [router] r1 198.19.50.1 = server 198.19.50.10:80
# The router masquerades TCP to ONE of two ports (40000-40001, --random-fully)
# and forgets a closed connection after 1 s (nf_conntrack_tcp_timeout_time_wait=1);
# the server closes first, so it keeps each port it served in TIME_WAIT for 60 s.
# The client (TCP timestamps off) opens 12 connections one after the other from
# ports 50001..50012. A SYN mapped onto a port the server holds in TIME_WAIT,
# with a sequence number below the old connection's, is answered with a bare
# ACK; the client resets, which ends that TIME_WAIT and the conntrack entry,
# and its SYN retry gets a new mapping - maybe the other port. Which connection
# does so is chance (random ports and ISNs): the script says how many did.
# Writes OUTDIR/front.pcap (router r0, before NAT), OUTDIR/behind.pcap (r1,
# after NAT) and OUTDIR/conntrack.log (`conntrack -E` in the router: the truth
# of every mapping). Every process it starts is ended by PID, every namespace
# deleted on exit (trap).
set -euo pipefail
OUT=${1:?usage: nat-port-reuse.sh OUTDIR}
mkdir -p "$OUT"
P="tcnpr-$$-"
NSS=()
PIDS=()
cleanup() {
  local p n
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
}
trap cleanup EXIT
nsx() { local n=$1; shift; ip netns exec "$P$n" "$@"; }
for n in c r s; do
  ip netns add "$P$n"
  NSS+=("$P$n")
  nsx "$n" ip link set lo up
  nsx "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
ip -n "${P}c" link add c0 type veth peer name r0 netns "${P}r"
ip -n "${P}r" link add r1 type veth peer name s0 netns "${P}s"
nsx c ip addr add 198.18.50.2/24 dev c0
nsx r ip addr add 198.18.50.1/24 dev r0
nsx r ip addr add 198.19.50.1/24 dev r1
nsx s ip addr add 198.19.50.10/24 dev s0
nsx c ip link set c0 up
nsx r ip link set r0 up
nsx r ip link set r1 up
nsx s ip link set s0 up
nsx c ip route add 198.19.50.0/24 via 198.18.50.1
nsx r sysctl -qw net.ipv4.ip_forward=1
nsx c sysctl -qw net.ipv4.tcp_timestamps=0
nsx r iptables -t nat -A POSTROUTING -o r1 -p tcp -j MASQUERADE --to-ports 40000-40001 --random-fully
nsx r sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1
nsx r tcpdump -n -i r0 -s 262144 -U -w "$OUT/front.pcap" tcp 2>/dev/null &
PIDS+=($!)
nsx r tcpdump -n -i r1 -s 262144 -U -w "$OUT/behind.pcap" tcp 2>/dev/null &
PIDS+=($!)
nsx r stdbuf -oL conntrack -E -o timestamp >"$OUT/conntrack.log" 2>/dev/null &
PIDS+=($!)
nsx s timeout 70 python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.19.50.10", 80))
s.listen(16)
s.settimeout(60)
while True:
    c, _ = s.accept()
    c.recv(1000)
    c.sendall(b"HTTP/1.0 200 OK\r\n\r\nhi")
    c.close()  # the server closes first: TIME_WAIT is on its side
' &
PIDS+=($!)
sleep 1
nsx c timeout 60 python3 -c '
import socket, time
for i, port in enumerate(range(50001, 50013)):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    c.bind(("198.18.50.2", port))
    c.settimeout(8)
    t = time.time()
    try:
        c.connect(("198.19.50.10", 80))
        c.sendall(b"GET /tclab-nat-port-reuse-r%02d HTTP/1.0\r\n\r\n" % (i + 1))
        while c.recv(1000):
            pass
        print(port, "ok", round(time.time() - t, 3))
    except OSError as e:
        print(port, "error", e)
    c.close()
    time.sleep(2.5)
'
sleep 1.5
n=$(grep -c 'NEW.*sport=500' "$OUT/conntrack.log" || true)
echo "conntrack: $n mappings for 12 connections ($((n - 12)) SYN retries got a mapping of their own)"
