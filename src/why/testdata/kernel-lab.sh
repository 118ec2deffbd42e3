#!/bin/bash
# Writes the kernel-* fixtures of src/why/kernel (run as root, from this
# directory: `sudo ./kernel-lab.sh [OUT]`, OUT defaulting to .): two network
# namespaces joined by veth pairs, addresses from 198.18.0.0/15 and
# 2001:db8::/32 only, no route to a real interface; both namespaces are
# deleted on exit, also on failure. The fixtures were written with
# iproute2 6.1 and procps-ng 4.0.2 on Linux 6.18; another run differs only
# in link-local and peer MAC addresses and in the order of neighbours.
set -u
OUT=${1:-.}
cleanup() { ip netns del tchelp1 2>/dev/null; ip netns del tchelp2 2>/dev/null; }
trap cleanup EXIT
cleanup
set -e
ip netns add tchelp1
ip netns add tchelp2
N="ip -n tchelp1"
X="ip netns exec tchelp1"
$N link add eth0 type veth peer name peer0 netns tchelp2
$N link add eth1 type veth peer name peer1 netns tchelp2
$N link add eth0.100 type veth peer name peer2 netns tchelp2
for i in lo eth0 eth1 eth0.100; do $N link set $i up; done
for i in lo peer0 peer1 peer2; do ip -n tchelp2 link set $i up; done
ip -n tchelp2 addr add 198.18.10.254/24 dev peer0
ip -n tchelp2 addr add 198.18.20.254/24 dev peer1
ip -n tchelp2 addr add 2001:db8:10::fe/64 dev peer0 nodad
ip -n tchelp2 addr add 2001:db8:20::fe/64 dev peer1 nodad
$N addr add 198.18.10.1/24 dev eth0
$N addr add 198.18.20.1/24 dev eth1
$N addr add 198.18.30.1/24 dev eth0.100
$N addr add 2001:db8:10::1/64 dev eth0 nodad
$N addr add 2001:db8:20::1/64 dev eth1 nodad
$N route add default via 198.18.10.254 dev eth0
$N route add 198.19.0.0/16 via 198.18.20.254 dev eth1 metric 100
$N route add 198.19.0.0/16 via 198.18.10.254 dev eth0 metric 50
$N route add 198.19.96.0/24 via 198.18.20.254 dev eth1
$N route add blackhole 198.19.66.0/24
$N route add unreachable 198.19.67.0/24
$N route add prohibit 198.19.68.0/24
$N route add 198.19.80.0/24 nexthop via 198.18.10.254 dev eth0 weight 1 nexthop via 198.18.20.254 dev eth1 weight 2
$N route add 198.19.70.0/24 dev eth1 src 198.18.20.1 proto static scope link
$N route add default via 198.18.20.254 dev eth1 table 100
$N route add throw 198.19.96.0/24 table 100
$N route add 198.18.90.0/24 via 198.18.20.254 dev eth1 table 100
$N route add 198.18.90.0/24 via 198.18.20.254 dev eth1 table 200
$N route add blackhole default table 200
$N rule add pref 100 fwmark 0x1/0x1 lookup 100
$N rule add pref 150 iif eth1 to 198.19.50.0/24 blackhole
$N rule add pref 200 not from 198.18.0.0/15 lookup 200
$N rule add pref 300 from 198.18.90.0/24 lookup 200
$N rule add pref 400 oif eth0.100 lookup 100
$N rule add pref 500 to 198.19.201.0/24 unreachable
$N rule add pref 600 nop
$N rule add pref 700 to 198.19.202.0/24 goto 32766
$N rule add pref 750 to 198.19.202.0/24 lookup 100
$N rule add pref 800 lookup main suppress_prefixlength 0
$N rule add pref 900 not fwmark 0xca6c lookup 51820
$N route add default via 198.18.20.254 dev eth1 table 51820
# IPv6
$N -6 route add default via 2001:db8:10::fe dev eth0
$N -6 route add 2001:db8:96::/48 via 2001:db8:20::fe dev eth1 metric 100
$N -6 route add 2001:db8:96::/48 via 2001:db8:10::fe dev eth0 metric 200
$N -6 route add blackhole 2001:db8:66::/48
$N -6 route add 2001:db8:80::/48 nexthop via 2001:db8:10::fe dev eth0 weight 1 nexthop via 2001:db8:20::fe dev eth1 weight 1
$N -6 route add 2001:db8:300::/48 from 2001:db8:90::/48 via 2001:db8:20::fe dev eth1 || echo "no ipv6 subtrees" >&2
$N -6 route add default via 2001:db8:20::fe dev eth1 table 100
$N -6 route add throw 2001:db8:96::/48 table 100
$N -6 rule add pref 100 fwmark 0x1/0x1 lookup 100
$N -6 rule add pref 200 not from 2001:db8::/32 unreachable
$N -6 rule add pref 300 from 2001:db8:90::/48 lookup 200
# sysctl: eth0 strict through all; eth1 strict with src_valid_mark; eth0.100 loose
S="$X sysctl -q -w"
$S net.ipv4.conf.all.rp_filter=1
$S net.ipv4.conf.eth0.rp_filter=0
$S net.ipv4.conf.eth1.rp_filter=1
$S net.ipv4.conf.eth1.src_valid_mark=1
$S net.ipv4.conf.eth0/100.rp_filter=2
$S net.ipv4.conf.eth0/100.accept_local=1
$S net.ipv4.ip_forward=1
$S net.ipv6.conf.all.forwarding=1
# neighbours: static entries, then traffic that makes real INCOMPLETE/DELAY/PROBE/FAILED
$N neigh add 198.18.10.17 dev eth0 lladdr 02:00:00:00:00:02 nud reachable
$N neigh add 198.18.10.18 dev eth0 lladdr 02:00:00:00:00:03 nud stale
$N neigh add 198.18.10.19 dev eth0 lladdr 02:00:00:00:00:04 nud permanent
$N neigh add 198.18.10.20 dev eth0 lladdr 02:00:00:00:00:07 proto static
$N neigh add 198.18.20.17 dev eth1 nud noarp 2>/dev/null || true
$N neigh add 2001:db8:10::17 dev eth0 lladdr 02:00:00:00:00:08 router nud reachable
$N neigh add 2001:db8:20::18 dev eth1 lladdr 02:00:00:00:00:09 nud stale
# datagrams to absent neighbours, to the peer and to the STALE entry: the
# kernel's own INCOMPLETE, DELAY, REACHABLE, then PROBE and FAILED
$X python3 -c '
import socket
for src, dst in [("198.18.10.1", "198.18.10.99"), ("198.18.10.1", "198.18.10.18"),
                 ("198.18.10.1", "198.18.10.254"), ("198.18.20.1", "198.18.20.98")]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((src, 0)); s.sendto(b"x", (dst, 9))
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(("2001:db8:20::1", 0)); s.sendto(b"x", ("2001:db8:20::99", 9))
'
sleep 0.2
$N -s neigh show nud all > "$OUT/kernel-neigh-stats.txt"
sleep 6.3
$N neigh show nud all > "$OUT/kernel-neigh.txt"
# `ip route show table all` prints the IPv6 routes too: the file holds them twice
{
    echo '# ip rule'; $N rule
    echo '# ip -6 rule'; $N -6 rule
    echo '# ip route show table all'; $N route show table all
    echo '# ip -6 route show table all'; $N -6 route show table all
} > "$OUT/kernel-routes.txt"
{ $N rule; $N -6 rule; } > "$OUT/kernel-rules-bare.txt"
$N route > "$OUT/kernel-routes-main.txt"
$N -d route show table all > "$OUT/kernel-routes-detail.txt"
$X sysctl -a 2>/dev/null | grep -E 'rp_filter|src_valid_mark|ip_forward|accept_local|\.forwarding' > "$OUT/kernel-sysctl.txt"
$X bash -c 'grep -r . /proc/sys/net/ipv4/conf/*/rp_filter /proc/sys/net/ipv4/conf/*/src_valid_mark' > "$OUT/kernel-sysctl-proc.txt"
$S net.ipv4.conf.all.rp_filter=0
$S net.ipv4.conf.eth0.rp_filter=2
$X sysctl -a 2>/dev/null | grep -E 'rp_filter|src_valid_mark|ip_forward' > "$OUT/kernel-sysctl-loose.txt"
