#!/usr/bin/env bash
# tuplecorr lab: real captures of real kernel NAT, made in network namespaces.
#
#   sudo scripts/lab.sh [--out DIR] [SCENARIO...]   run scenarios (default: all) into DIR
#                                                   (default testdata/lab)
#   scripts/lab.sh --verify [--out DIR] [SCENARIO...]  re-run the tshark cross-check only
#   scripts/lab.sh --list
#
# Needs root, a kernel with netns/veth/tun/nf_nat/nfqueue, and
#   apt-get install -y tcpdump tshark iproute2 iptables nftables conntrack python3
#   (and nginx-light for proxy-nginx)
# (python3 stdlib only; tshark also provides editcap; gzip; shellcheck to lint this file).
#
# Topology (one set of namespaces per scenario, named tclab-<pid>-*, deleted on exit):
#
#   [client]                        [pod]  (VPN pod)                 [node]                     [backend]
#   tun0 198.18.90.42,.43    UDP     tun0  <- capture "decap" (RAW)
#        2001:db8:90::42   tunnel           ip_forward
#   ul0 198.18.80.2/30 ===========  ul0 198.18.80.1/30
#                                   eth0 198.18.10.2/24  ========  pod0 198.18.10.1/24
#                                   <- capture "egress" (EN10MB)    ip_forward, NAT rules
#                                   2001:db8:10::2/64               2001:db8:10::1/64
#                                                                   be0 198.19.3.17/24  ========  eth0 198.19.96.10/24
#                                                                   2001:db8:3::17/64             2001:db8:96::10/64
#                                                                   (capture "node": -i any)      <- capture "backend"
#
#   The client's tunnel is a python3 program (scripts/lab/labnet.py tunnel) on each
#   side: TUN device <-> UDP datagrams over ul0 (198.18.80.0/30, port 51820).
#   Routes: client 198.19.0.0/16 and 198.18.10.0/24 (and 2001:db8:{3,10,96,200}::/64)
#   via tun0; pod 198.18.90.0/24 via tun0, 198.19.0.0/16 via 198.18.10.1; node
#   198.18.90.0/24 via 198.18.10.2 (the return route; absent in no-return-route),
#   198.19.96.0/24 on-link on be0; backend 198.19.3.0/24 on-link, 198.18.0.0/15 via
#   198.19.3.17. No default route anywhere, no link to a real interface.
#   The pod's tun0 holds 198.18.90.1/32 (REDIRECT to the proxy needs an address).
#   Service VIP (DNAT on the node): 198.19.200.10:80 -> 198.19.96.10:8080.
#   rp-filter and asymmetric add a second pod<->node link (not captured):
#   pod eth1 198.18.11.2/24 = node pod1 198.18.11.1/24.
#   pool-nodes adds a second node, node2 (pod0 198.18.10.3, be0 198.19.3.18),
#   bridges in the pod and the backend (br0), and one point 'nodes' captured on
#   both nodes' be0 (node-a.pcap, node-b.pcap; hosts.json beside expected.json).
#
# Per scenario, testdata/lab/<scenario>/ gets the captures, expected.json (built by
# scripts/lab/labexpect.py from the scenario's configuration, the client/server/proxy
# socket logs and `conntrack -E` events in the pod and node), checks.json (packet
# counts and markers per capture, from tshark), the NAT hosts' rules and conntrack
# logs (and iptables-save of a host with filter rules only), the routing state of
# pod, node and backend (routes-*.txt, sysctl-*.txt, neigh-*.txt) and a line in
# testdata/lab/index.tsv.
# Each scenario is then cross-checked against tshark's view of the captures
# (labexpect.py verify); a disagreement fails the scenario.
# scripts/LAB.md describes every scenario and what the captures show.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LABPY="$HERE/lab"
OUT="$ROOT/testdata/lab"
PFX="tclab-$$-"
ALL_SCENARIOS=(preserved masquerade-node masquerade-pod dnat-service no-return-route reject proxy proxy-v1 proxy-v2 proxy-xff
  udp-icmp concurrent any-node clock-shift delay healthcheck ipv6 rp-filter asymmetric syn-retransmit
  lossy-capture pmtu pmtu-blackhole pmtu-mss-clamp pmtu-ipv6 any-node-sll any-router any-router-sll reply-elsewhere vxlan
  multihomed masq-agent masq-agent-drift nft-service proxy-nginx keepalive any-node-fork
  forward-drop stale-gateway backend-no-route dead-end-route pool-nodes follow-late-iface dnat-reject)

NSS=()
PIDS=()
WORK=""

log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- process/namespace hygiene
stop_pid() { # PID [SIGNAL]: signal one process we started, wait (bounded), then KILL
  local pid=$1 sig=${2:-INT} i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -"$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  log "pid $pid ignored SIG$sig for 5 s: KILL"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

stop_all() {
  local p
  for p in "${PIDS[@]}"; do stop_pid "$p" TERM; done
  PIDS=()
}

del_namespaces() {
  local ns
  for ns in "${NSS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  NSS=()
}

cleanup() {
  local rc=$?
  stop_all
  del_namespaces
  if [[ -n $WORK && -d $WORK ]]; then
    if [[ $rc == 0 && -z ${TCLAB_KEEP:-} ]]; then rm -rf "$WORK"; else log "work files kept in $WORK"; fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

nsx() { local n=$1; shift; ip netns exec "${PFX}$n" "$@"; }

bgrun() { # NS LOGFILE CMD...: start CMD in NS in the background, remember its PID in LAST_PID
  local n=$1 lf=$2; shift 2
  ip netns exec "${PFX}$n" "$@" >"$lf" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

forget_pid() { local p=$1 q keep=(); for q in "${PIDS[@]}"; do [[ $q == "$p" ]] || keep+=("$q"); done; PIDS=("${keep[@]}"); }

wait_for() { # FILE PATTERN SECONDS
  local f=$1 pat=$2 s=$3 i
  for ((i = 0; i < s * 20; i++)); do
    if [[ -f $f ]] && grep -q -- "$pat" "$f"; then return 0; fi
    sleep 0.05
  done
  die "timed out after ${s}s waiting for '$pat' in $f"
}

# ---------------------------------------------------------------- topology
sysctl_ns() { local n=$1; shift; local kv; for kv in "$@"; do nsx "$n" sysctl -qw "$kv" >/dev/null; done; }

topo_up() { # V6(0|1)
  local v6=$1 n
  for n in client pod node backend; do
    ip netns add "${PFX}$n"
    NSS+=("${PFX}$n")
    nsx "$n" ip link set lo up
    sysctl_ns "$n" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
      "net.ipv4.ping_group_range=0 2147483647"
    if [[ $v6 == 0 ]]; then
      sysctl_ns "$n" net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    else
      sysctl_ns "$n" net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
        net.ipv6.conf.default.router_solicitations=0 net.ipv6.conf.all.accept_ra=0 \
        net.ipv6.conf.default.accept_ra=0
    fi
  done
  sysctl_ns pod net.ipv4.ip_forward=1
  sysctl_ns node net.ipv4.ip_forward=1
  if [[ $v6 == 1 ]]; then
    sysctl_ns pod net.ipv6.conf.all.forwarding=1
    sysctl_ns node net.ipv6.conf.all.forwarding=1
  fi

  # links (created directly inside the namespaces: nothing in the host's namespace)
  ip -n "${PFX}client" link add ul0 type veth peer name ul0 netns "${PFX}pod"
  ip -n "${PFX}pod" link add eth0 type veth peer name pod0 netns "${PFX}node"
  ip -n "${PFX}node" link add be0 type veth peer name eth0 netns "${PFX}backend"

  nsx client ip addr add 198.18.80.2/30 dev ul0
  nsx pod ip addr add 198.18.80.1/30 dev ul0
  nsx pod ip addr add 198.18.10.2/24 dev eth0
  nsx node ip addr add 198.18.10.1/24 dev pod0
  nsx node ip addr add 198.19.3.17/24 dev be0
  nsx backend ip addr add 198.19.96.10/24 dev eth0
  if [[ $v6 == 1 ]]; then
    nsx pod ip -6 addr add 2001:db8:10::2/64 dev eth0 nodad
    nsx node ip -6 addr add 2001:db8:10::1/64 dev pod0 nodad
    nsx node ip -6 addr add 2001:db8:3::17/64 dev be0 nodad
    nsx backend ip -6 addr add 2001:db8:96::10/64 dev eth0 nodad
  fi
  nsx client ip link set ul0 up
  nsx pod ip link set ul0 up
  nsx pod ip link set eth0 up
  nsx node ip link set pod0 up
  nsx node ip link set be0 up
  nsx backend ip link set eth0 up

  # the tunnel: a TUN device on each side, packets carried in UDP over ul0
  bgrun client "$WORK/tunnel-client.log" python3 "$LABPY/labnet.py" tunnel --dev tun0 \
    --local 198.18.80.2 --peer 198.18.80.1 --ready "$WORK/tunnel-client.ready" --lifetime 300
  bgrun pod "$WORK/tunnel-pod.log" python3 "$LABPY/labnet.py" tunnel --dev tun0 \
    --local 198.18.80.1 --peer 198.18.80.2 --ready "$WORK/tunnel-pod.ready" --lifetime 300
  wait_for "$WORK/tunnel-client.ready" ready 5
  wait_for "$WORK/tunnel-pod.ready" ready 5
  nsx client ip addr add 198.18.90.42/32 dev tun0
  nsx client ip addr add 198.18.90.43/32 dev tun0
  nsx client ip link set tun0 up
  nsx pod ip addr add 198.18.90.1/32 dev tun0
  nsx pod ip link set tun0 up
  nsx client ip route add 198.19.0.0/16 dev tun0 src 198.18.90.42
  nsx client ip route add 198.18.10.0/24 dev tun0 src 198.18.90.42
  nsx pod ip route add 198.18.90.0/24 dev tun0
  nsx pod ip route add 198.19.0.0/16 via 198.18.10.1
  nsx node ip route add 198.19.96.0/24 dev be0
  nsx backend ip route add 198.19.3.0/24 dev eth0
  nsx backend ip route add 198.18.0.0/15 via 198.19.3.17
  if [[ ${NODE_RETURN_ROUTE:-1} == 1 ]]; then
    nsx node ip route add 198.18.90.0/24 via 198.18.10.2
  fi
  if [[ $v6 == 1 ]]; then
    # a VPN tunnel carries unicast to its peer only (like WireGuard's allowed IPs):
    # keep the tun devices' own MLD reports out of the decap capture
    nsx client ip6tables -A OUTPUT -o tun0 -d ff00::/8 -j DROP
    nsx pod ip6tables -A OUTPUT -o tun0 -d ff00::/8 -j DROP
    nsx client ip -6 addr add 2001:db8:90::42/128 dev tun0 nodad
    local p
    for p in 2001:db8:3::/64 2001:db8:10::/64 2001:db8:96::/64 2001:db8:200::/64; do
      nsx client ip -6 route add "$p" dev tun0
    done
    nsx pod ip -6 route add 2001:db8:90::/64 dev tun0
    nsx pod ip -6 route add 2001:db8:3::/64 via 2001:db8:10::1
    nsx pod ip -6 route add 2001:db8:96::/64 via 2001:db8:10::1
    nsx node ip -6 route add 2001:db8:96::/64 dev be0
    nsx node ip -6 route add 2001:db8:90::/64 via 2001:db8:10::2
    nsx backend ip -6 route add 2001:db8:3::/64 dev eth0
    nsx backend ip -6 route add 2001:db8:10::/64 via 2001:db8:3::17
    nsx backend ip -6 route add 2001:db8:90::/64 via 2001:db8:3::17
  fi
  # conntrack only runs in a namespace once a rule needs it: count NEW flows in
  # the pod and the node so `conntrack -E` sees every forwarded flow.
  nsx pod iptables -A FORWARD -m conntrack --ctstate NEW
  nsx node iptables -A FORWARD -m conntrack --ctstate NEW
  if [[ $v6 == 1 ]]; then
    nsx pod ip6tables -A FORWARD -m conntrack --ctstate NEW
    nsx node ip6tables -A FORWARD -m conntrack --ctstate NEW
  fi
}

topo_down() {
  stop_all
  del_namespaces
}

# ---------------------------------------------------------------- captures and event logs
CAPS=()     # label[=file]:ns:iface[:linktype[:filter]]
# `file` (default: the label) names the capture file ($WORK/file.pcap): several
# entries with one label and their own files are one point captured on several
# hosts (pool-nodes: nodes=node-a, nodes=node-b), given as LABEL=FILE each.
cap_label() { local f=${1%%:*}; printf '%s' "${f%%=*}"; }
cap_file() { local f=${1%%:*}; printf '%s' "${f#*=}"; }
CAP_PIDS=()
FOLLOW_PID=""
CT_PIDS=()

cap_start() {
  local spec label n ifc lt args out i filt
  CAP_PIDS=()
  if [[ -n ${TCLAB_FOLLOW:-} ]]; then
    # tuplecorr --follow on the captures tcpdump is writing, each line timed as
    # it comes: growing files (TCLAB_FOLLOW_INPUT=file), or FIFOs tcpdump writes
    # into, copied into the files and into pipes tuplecorr reads (pipe, default)
    local files=() mode=${TCLAB_FOLLOW_INPUT:-pipe}
    for spec in "${CAPS[@]}"; do files+=("$(cap_label "$spec")=$WORK/$(cap_file "$spec").pcap"); done
    python3 "$LABPY/follow_watch.py" "$TCLAB_FOLLOW" "$WORK/follow.json" "$mode" "${files[@]}" &
    FOLLOW_PID=$!
    PIDS+=("$FOLLOW_PID")
    if [[ $mode == pipe ]]; then
      for spec in "${CAPS[@]}"; do
        for ((i = 0; i < 100; i++)); do [[ -p $WORK/$(cap_file "$spec").pcap.fifo ]] && break; sleep 0.05; done
      done
    fi
  fi
  for spec in "${CAPS[@]}"; do
    IFS=: read -r _ n ifc lt filt <<<"$spec"
    label=$(cap_file "$spec")
    out="$WORK/$label.pcap"
    [[ -n ${TCLAB_FOLLOW:-} && ${TCLAB_FOLLOW_INPUT:-pipe} == pipe ]] && out="$WORK/$label.pcap.fifo"
    args=(tcpdump -Z root -n -i "$ifc" -s 262144 -w "$out")
    # TCLAB_FOLLOW: each packet written as it comes, for tuplecorr --follow
    if [[ -n ${TCLAB_FOLLOW:-} ]]; then args+=(-U); fi
    if [[ -n $lt ]]; then args+=(-y "$lt"); fi
    if [[ -n $filt ]]; then args+=("$filt"); fi
    bgrun "$n" "$WORK/$label.tcpdump.log" "${args[@]}"
    CAP_PIDS+=("$LAST_PID")
  done
  for spec in "${CAPS[@]}"; do
    label=$(cap_file "$spec")
    wait_for "$WORK/$label.tcpdump.log" "listening on" 10
  done
  sleep 0.3
}

cap_stop() {
  # tcpdump (TPACKET_V3, no --immediate-mode) hands packets over in blocks that the
  # kernel retires after its 1 s timeout: packets still in an open block when
  # tcpdump gets SIGINT are lost. Let every block retire first, then check that
  # each capture wrote every packet its filter received and the kernel dropped none.
  local p spec label got rcv drop
  sleep 2.2
  for p in "${CAP_PIDS[@]}"; do stop_pid "$p" INT; forget_pid "$p"; done
  CAP_PIDS=()
  for spec in "${CAPS[@]}"; do
    label=$(cap_file "$spec")
    got=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$WORK/$label.tcpdump.log")
    rcv=$(sed -n 's/^\([0-9]*\) packets\{0,1\} received by filter$/\1/p' "$WORK/$label.tcpdump.log")
    drop=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$WORK/$label.tcpdump.log")
    [[ -n $got && $got == "$rcv" && $drop == 0 ]] ||
      die "capture $label incomplete: captured '$got', received by filter '$rcv', dropped '$drop'"
  done
  if [[ -n ${FOLLOW_PID:-} ]]; then
    # it ends by itself once the files stopped growing for --follow-idle (25 s)
    local i
    for ((i = 0; i < 500; i++)); do kill -0 "$FOLLOW_PID" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$FOLLOW_PID" INT
    forget_pid "$FOLLOW_PID"
    FOLLOW_PID=""
  fi
}

ct_start() { # conntrack -E in the pod and the node, started before any traffic
  local n
  CT_PIDS=()
  for n in pod node node2; do
    [[ -e /run/netns/${PFX}$n ]] || continue # node2: pool-nodes only
    bgrun "$n" "$WORK/conntrack-$n.log" stdbuf -oL conntrack -E -o timestamp
    CT_PIDS+=("$LAST_PID")
  done
  sleep 0.3
}

ct_stop() {
  local p
  for p in "${CT_PIDS[@]}"; do stop_pid "$p" TERM; forget_pid "$p"; done
  CT_PIDS=()
}

server_start() { # extra args for traffic.py server
  bgrun backend "$WORK/server.stderr" python3 "$LABPY/traffic.py" server --tcp 80 8080 8081 8082 --silent 8082 --udp 9000 \
    --icmp --log "$WORK/server.jsonl" --ready "$WORK/server.ready" --lifetime 240 "$@"
  SERVER_PID=$LAST_PID
  wait_for "$WORK/server.ready" ready 5
}

client_run() { # NS PLAN LOG [extra args]
  local n=$1 plan=$2 lg=$3; shift 3
  timeout 200 ip netns exec "${PFX}$n" python3 "$LABPY/traffic.py" client --plan "$plan" --log "$lg" "$@"
}

# ---------------------------------------------------------------- scenarios (network configuration)
# Each cfg_* runs after topo_up and before traffic. The request plans and the
# model of what each box does live in scripts/lab/labexpect.py (same names).

cfg_preserved() { :; }

cfg_masquerade-node() {
  nsx node iptables -t nat -A POSTROUTING -o be0 -j MASQUERADE
}

cfg_masquerade-pod() {
  nsx pod iptables -t nat -A POSTROUTING -o eth0 -j MASQUERADE
}

cfg_dnat-service() {
  # kube-proxy-like: DNAT the service VIP, masquerade with random port selection
  nsx node iptables -t nat -A PREROUTING -d 198.19.200.10/32 -p tcp --dport 80 \
    -j DNAT --to-destination 198.19.96.10:8080
  nsx node iptables -t nat -A POSTROUTING -o be0 -j MASQUERADE --random-fully
}

cfg_nft-service() {
  # kube-proxy's nftables mode in small, native nftables only (no iptables rule):
  # a service map DNATs the VIP 198.19.200.10:80 to 198.19.96.10:8080, and
  # what leaves on be0 from the tunnel pool is masqueraded
  cat >"$WORK/nft-service.nft" <<'NFT'
table ip tclab_nat {
  map services {
    type ipv4_addr . inet_service : ipv4_addr . inet_service
    elements = { 198.19.200.10 . 80 : 198.19.96.10 . 8080 }
  }
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    meta l4proto tcp dnat ip addr . port to ip daddr . tcp dport map @services
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "be0" ip saddr 198.18.90.0/24 masquerade
  }
}
NFT
  nsx node nft -f "$WORK/nft-service.nft"
}

cfg_no-return-route() { :; } # NODE_RETURN_ROUTE=0 set by the runner

cfg_reject() {
  nsx node iptables -I FORWARD 1 -i pod0 -s 198.18.90.43/32 -j REJECT --reject-with icmp-admin-prohibited
  nsx node iptables -I FORWARD 2 -i pod0 -p tcp --dport 8081 -j REJECT --reject-with tcp-reset
}

cfg_dnat-reject() {
  # a kube-proxy-like service (as dnat-service) whose node rejects one client
  # in FORWARD, after the DNAT: the node's ICMP error quotes the translated
  # packet, and conntrack translates it back on its way to the client
  cfg_dnat-service
  nsx node iptables -I FORWARD 1 -i pod0 -s 198.18.90.43/32 -j REJECT --reject-with icmp-admin-prohibited
}

cfg_proxy() {
  # transparent terminating proxy in the pod: the client's port-80 connections are
  # REDIRECTed to a python proxy that reconnects from the pod's own address
  nsx pod iptables -t nat -A PREROUTING -i tun0 -p tcp --dport 80 -j REDIRECT --to-ports 3128
  bgrun pod "$WORK/proxy.stderr" python3 "$LABPY/labnet.py" proxy --port 3128 --log "$WORK/proxy.jsonl" \
    --ready "$WORK/proxy.ready" --lifetime 200
  wait_for "$WORK/proxy.ready" ready 5
}

cfg_proxy-v1() {
  # as proxy, the proxy writing a PROXY v1 line first (haproxy's send-proxy), and
  # MASQUERADE on the node; the backend reads PROXY headers on port 80 (run_scenario)
  cfg_masquerade-node
  nsx pod iptables -t nat -A PREROUTING -i tun0 -p tcp --dport 80 -j REDIRECT --to-ports 3128
  bgrun pod "$WORK/proxy.stderr" python3 "$LABPY/labnet.py" proxy --port 3128 --log "$WORK/proxy.jsonl" \
    --ready "$WORK/proxy.ready" --lifetime 200 --send-proxy "${SEND_PROXY:-v1}"
  wait_for "$WORK/proxy.ready" ready 5
}

cfg_proxy-v2() { SEND_PROXY=v2 cfg_proxy-v1; } # haproxy's send-proxy-v2

cfg_proxy-xff() {
  # an HTTP reverse proxy in the pod (rewrites requests and responses, appends the
  # client to X-Forwarded-For, keeps X-Request-ID), and MASQUERADE on the node
  cfg_masquerade-node
  nsx pod iptables -t nat -A PREROUTING -i tun0 -p tcp --dport 80 -j REDIRECT --to-ports 3128
  bgrun pod "$WORK/proxy.stderr" python3 "$LABPY/labnet.py" proxy --port 3128 --log "$WORK/proxy.jsonl" \
    --ready "$WORK/proxy.ready" --lifetime 200 --http
  wait_for "$WORK/proxy.ready" ready 5
}

cfg_proxy-nginx() {
  # nginx (the distribution's, as it ships) as the reverse proxy in the pod:
  # proxy_pass to the backend (HTTP/1.0 upstream, Host rewritten, Connection:
  # close, X-Forwarded-For appended), every other request header passed as
  # sent; iptables REDIRECT of tun0's port 80; MASQUERADE on the node. Its
  # access log (JSON) is the proxy log labexpect reads.
  command -v nginx >/dev/null || die "missing tool: nginx (apt-get install -y nginx-light)"
  cfg_masquerade-node
  nsx pod iptables -t nat -A PREROUTING -i tun0 -p tcp --dport 80 -j REDIRECT --to-ports 3128
  local d="$WORK/nginx" i
  mkdir -p "$d"
  cat >"$d/nginx.conf" <<NGINX
daemon off;
master_process off;
worker_processes 1;
user root;
pid $d/nginx.pid;
error_log $WORK/proxy.stderr info;
events { worker_connections 64; }
http {
  client_body_temp_path $d/body;
  proxy_temp_path $d/proxy;
  fastcgi_temp_path $d/fastcgi;
  uwsgi_temp_path $d/uwsgi;
  scgi_temp_path $d/scgi;
  log_format tclab escape=json
    '{"event":"nginx","downstream_peer":["\$remote_addr",\$remote_port],'
    '"upstream_peer":"\$upstream_addr","request":"\$request","status":"\$status"}';
  access_log $WORK/nginx-access.jsonl tclab;
  server {
    listen 3128;
    location / {
      proxy_pass http://198.19.96.10:80;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
    }
  }
}
NGINX
  bgrun pod "$WORK/nginx.stdout" nginx -e "$WORK/proxy.stderr" -p "$d" -c "$d/nginx.conf"
  for ((i = 0; i < 100; i++)); do
    nsx pod ss -Htln 'sport = :3128' | grep -q 3128 && return 0
    sleep 0.05
  done
  die "nginx did not listen on :3128 within 5 s: $(cat "$WORK/proxy.stderr")"
}

cfg_keepalive() {
  # HTTP/1.1 keep-alive and pipelined connections (traffic.py server --http11 8088,
  # see run_scenario) through the node's MASQUERADE; the node's FORWARD chain
  # drops every packet carrying the response header X-Drop: yes (the answer to
  # /drop, connection 8): seen at backend, never at egress or decap
  cfg_masquerade-node
  nsx node iptables -I FORWARD 1 -i be0 -p tcp --sport 8088 -m string --algo bm --string 'X-Drop: yes' -j DROP
}

cfg_udp-icmp() { cfg_masquerade-node; }
cfg_concurrent() { cfg_masquerade-node; }
cfg_any-node() { cfg_masquerade-node; }
cfg_any-node-sll() { cfg_masquerade-node; } # the node's capture: -i any -y LINUX_SLL (see run_scenario)
cfg_any-router() { :; }                     # no NAT: the node only routes; its capture: -i any
cfg_any-router-sll() { :; }                 # ... captured with -i any -y LINUX_SLL

cfg_reply-elsewhere() {
  # the backend holds a secondary address 198.19.96.11 on eth0 (primary 198.19.96.10).
  # UDP: the server's socket is bound to 0.0.0.0 and answers with sendto() without
  # IP_PKTINFO, so the kernel picks the route's source for the reply: the primary
  # address. TCP: a stateless nftables rule rewrites the source of what the backend
  # sends from 198.19.96.11:80 to 198.19.96.10 (a reply that skips its un-NAT).
  nsx backend ip addr add 198.19.96.11/24 dev eth0
  nsx backend nft add table ip tclab
  nsx backend nft add chain ip tclab out '{ type filter hook output priority 0; }'
  nsx backend nft add rule ip tclab out ip saddr 198.19.96.11 tcp sport 80 ip saddr set 198.19.96.10
  nsx backend ip -4 route get 198.18.90.42 >"$WORK/backend-route.txt"
  nsx backend ip -4 addr show dev eth0 >"$WORK/backend-addr.txt"
  nsx backend nft list ruleset >"$WORK/backend-nft.txt"
}
cfg_clock-shift() { cfg_masquerade-node; }
cfg_healthcheck() { cfg_masquerade-node; }

cfg_syn-retransmit() {
  # the node drops every other TCP SYN it forwards (the 1st, 3rd, ...): with one
  # connection at a time, each connection's first SYN dies after egress and its
  # retransmission 1 s later gets through
  cfg_masquerade-node
  nsx node iptables -I FORWARD 1 -i pod0 -p tcp --syn -m statistic --mode nth --every 2 --packet 0 -j DROP
}

cfg_lossy-capture() { cfg_masquerade-node; } # egress's tcpdump filter: see run_scenario

cfg_delay() {
  # 20 ms each way on the node's path between egress and backend: every forwarded
  # packet is queued to NFQUEUE 0 and held by labnet.py nfqdelay (no sch_netem here)
  bgrun node "$WORK/nfqdelay.stderr" python3 "$LABPY/labnet.py" nfqdelay --queue 0 --delay-ms 20 \
    --ready "$WORK/nfqdelay.ready" --lifetime 200
  wait_for "$WORK/nfqdelay.ready" ready 5
  nsx node iptables -A FORWARD -j NFQUEUE --queue-num 0
}

cfg_ipv6() {
  nsx node ip6tables -t nat -A POSTROUTING -o be0 -j MASQUERADE
}

cfg_pmtu() {
  # the node's link to the backend carries 1100 bytes (the backend's side keeps 1500,
  # so its SYN-ACK still announces MSS 1460): the node answers full-size segments
  # with ICMP fragmentation-needed, MTU 1100
  nsx node ip link set be0 mtu 1100
}

cfg_pmtu-blackhole() {
  # ... and the pod drops those ICMP messages on their way to the tunnel
  cfg_pmtu
  nsx pod iptables -I FORWARD 1 -i eth0 -p icmp --icmp-type fragmentation-needed -j DROP
}

cfg_pmtu-mss-clamp() {
  # ... and the pod clamps the MSS of forwarded SYNs and SYN-ACKs (both ways) so no
  # segment needs the ICMP
  cfg_pmtu-blackhole
  nsx pod iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1060
}

cfg_pmtu-ipv6() {
  # IPv6: the node's link to the backend carries 1280 bytes; ICMPv6 packet-too-big passes
  nsx node ip link set be0 mtu 1280
}

second_pod_link() { # pod eth1 198.18.11.2/24 <-> node pod1 198.18.11.1/24
  ip -n "${PFX}pod" link add eth1 type veth peer name pod1 netns "${PFX}node"
  nsx pod ip addr add 198.18.11.2/24 dev eth1
  nsx node ip addr add 198.18.11.1/24 dev pod1
  nsx pod ip link set eth1 up
  nsx node ip link set pod1 up
}

cfg_asymmetric() {
  # requests leave the pod by eth0 (captured: egress); the node routes the tunnel
  # pool back over the second link eth1, which is not captured: replies bypass egress
  second_pod_link
  nsx node ip route replace 198.18.90.0/24 via 198.18.11.2 dev pod1
}

cfg_multihomed() {
  # the backend is an end host with two links to the node: requests come in on
  # eth0 (node be0), its route back to the tunnel pool leaves by eth1 (node be1,
  # 198.19.4.0/24). Its capture is tcpdump -i any: requests on one interface,
  # replies on the other, no packet on both (it forwards nothing)
  ip -n "${PFX}node" link add be1 type veth peer name eth1 netns "${PFX}backend"
  nsx node ip addr add 198.19.4.17/24 dev be1
  nsx backend ip addr add 198.19.4.10/24 dev eth1
  nsx node ip link set be1 up
  nsx backend ip link set eth1 up
  nsx backend ip route replace 198.18.0.0/15 via 198.19.4.17 dev eth1 src 198.19.96.10
}

cfg_any-node-fork() {
  # a node with three interfaces: pod0 in, be0 out to the backend's eth0 (source
  # kept), be1 out to the backend's second link eth1 198.19.97.10 (MASQUERADE -o
  # be1: the source becomes 198.19.97.1); the FORWARD chain drops .43 -> .97.10.
  # The backend answers the kept sources by be0 (its route 198.18.0.0/15 via
  # 198.19.3.17), the masqueraded ones on-link by eth1
  ip -n "${PFX}node" link add be1 type veth peer name eth1 netns "${PFX}backend"
  nsx node ip addr add 198.19.97.1/24 dev be1
  nsx backend ip addr add 198.19.97.10/24 dev eth1
  nsx node ip link set be1 up
  nsx backend ip link set eth1 up
  nsx node iptables -t nat -A POSTROUTING -o be1 -j MASQUERADE
  nsx node iptables -A FORWARD -s 198.18.90.43/32 -d 198.19.97.10/32 -p udp -j DROP
  # a wrong return route: replies to 198.18.90.43 leave by up0 (to a namespace
  # that drops them), not by pod0 where its requests came in
  ip netns add "${PFX}sink"
  NSS+=("${PFX}sink")
  ip -n "${PFX}node" link add up0 type veth peer name sk0 netns "${PFX}sink"
  nsx node ip addr add 198.19.98.1/24 dev up0
  nsx node ip link set up0 up
  nsx sink ip link set sk0 up
  nsx node ip neigh add 198.19.98.2 lladdr 02:00:00:00:00:02 dev up0 nud permanent
  nsx node ip route add 198.18.90.43/32 via 198.19.98.2 dev up0
}

cfg_follow-late-iface() {
  # for --follow: a node with two out-interfaces, the second first used ~2.5 s
  # into the run. be0 to the backend's eth0 198.19.96.10 keeps the source; be1
  # (ifindex 4) to the backend's second link eth1 198.19.97.10 masquerades (the
  # source becomes 198.19.97.1). The client's first requests all go to
  # 198.19.96.10; its later ones (labexpect plan: at >= 2.5 s) to 198.19.97.10,
  # so node.pcap (-i any) holds nothing on be1 before then. The backend answers
  # the kept sources by be0 (its route 198.18.0.0/15 via 198.19.3.17), the
  # masqueraded ones on-link by eth1
  ip -n "${PFX}node" link add be1 type veth peer name eth1 netns "${PFX}backend"
  nsx node ip addr add 198.19.97.1/24 dev be1
  nsx backend ip addr add 198.19.97.10/24 dev eth1
  nsx node ip link set be1 up
  nsx backend ip link set eth1 up
  nsx node iptables -t nat -A POSTROUTING -o be1 -j MASQUERADE
}

cfg_pool-nodes() {
  # two nodes of a pool, node and node2, side by side between the pod and the
  # backend, each on the pod's subnet and on the backend's:
  #   pod br0 198.18.10.2/24 (ports eth0 -> node pod0 198.18.10.1, eth1 -> node2
  #   pod0 198.18.10.3); backend br0 198.19.96.10/24 + 198.19.97.10/24 (ports
  #   eth0 <- node be0 198.19.3.17, eth1 <- node2 be0 198.19.3.18).
  # The pod routes the tunnel pool's 198.18.90.42 through node (main table,
  # via 198.18.10.1) and 198.18.90.43 through node2 (policy rule: from
  # 198.18.90.43 lookup table 102, via 198.18.10.3). node masquerades all it
  # sends out of be0 (a pool without ip-masq-agent); node2 keeps the source of
  # what goes to 198.19.96.0/24 (a RETURN before its MASQUERADE) and
  # masquerades the rest (198.19.97.0/24). The backend answers the kept
  # sources through node2 (198.18.0.0/15 via 198.19.3.18), the masqueraded
  # ones on-link.
  ip netns add "${PFX}node2"
  NSS+=("${PFX}node2")
  nsx node2 ip link set lo up
  sysctl_ns node2 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
    "net.ipv4.ping_group_range=0 2147483647" net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1 net.ipv4.ip_forward=1
  nsx node2 iptables -A FORWARD -m conntrack --ctstate NEW # conntrack runs there (topo_up)
  ip -n "${PFX}pod" link add eth1 type veth peer name pod0 netns "${PFX}node2"
  ip -n "${PFX}node2" link add be0 type veth peer name eth1 netns "${PFX}backend"
  # the pod's side: one bridge over both links, the pod's address on it
  nsx pod ip addr flush dev eth0
  nsx pod ip link add br0 type bridge stp_state 0 forward_delay 0
  nsx pod ip link set eth0 master br0
  nsx pod ip link set eth1 master br0
  nsx pod ip link set eth1 up
  nsx pod ip addr add 198.18.10.2/24 dev br0
  nsx pod ip link set br0 up
  nsx pod ip route replace 198.19.0.0/16 via 198.18.10.1 dev br0
  nsx pod ip route add 198.19.0.0/16 via 198.18.10.3 dev br0 table 102
  nsx pod ip rule add from 198.18.90.43 lookup 102 priority 100
  # the backend's side: one bridge over both links, its addresses on it
  nsx backend ip addr flush dev eth0
  nsx backend ip link add br0 type bridge stp_state 0 forward_delay 0
  nsx backend ip link set eth0 master br0
  nsx backend ip link set eth1 master br0
  nsx backend ip link set eth1 up
  nsx backend ip addr add 198.19.96.10/24 dev br0
  nsx backend ip addr add 198.19.97.10/24 dev br0
  nsx backend ip link set br0 up
  nsx backend ip route replace 198.19.3.0/24 dev br0
  nsx backend ip route replace 198.18.0.0/15 via 198.19.3.18 dev br0
  # node2, as topo_up makes node
  nsx node2 ip addr add 198.18.10.3/24 dev pod0
  nsx node2 ip addr add 198.19.3.18/24 dev be0
  nsx node2 ip link set pod0 up
  nsx node2 ip link set be0 up
  nsx node2 ip route add 198.19.96.0/24 dev be0
  nsx node2 ip route add 198.19.97.0/24 dev be0
  nsx node2 ip route add 198.18.90.0/24 via 198.18.10.2 dev pod0
  nsx node ip route add 198.19.97.0/24 dev be0
  nsx node iptables -t nat -A POSTROUTING -o be0 -j MASQUERADE
  # node2 as ip-masq-agent would: RETURN for the non-masquerade CIDR first
  nsx node2 iptables -t nat -A POSTROUTING -d 198.19.96.0/24 -o be0 -j RETURN
  nsx node2 iptables -t nat -A POSTROUTING -o be0 -j MASQUERADE
}

cfg_forward-drop() {
  # a policy DROP in the node's FORWARD chain for one client: whatever
  # 198.18.90.43 sends is seen at egress and dies in the node; .42 passes
  nsx node iptables -A FORWARD -s 198.18.90.43/32 -j DROP
}

cfg_stale-gateway() {
  # the eviction retest: the VPN pod moved, and the node's route to the tunnel
  # pool still points at its old address 198.18.10.99 (in pod0's subnet, owned
  # by no namespace). ARP for it goes unanswered, the entry turns INCOMPLETE,
  # then FAILED, and the backend's replies queued for it die in the node.
  # 198.18.90.43 has a host route via the pod's live address: its replies pass.
  nsx node ip route replace 198.18.90.0/24 via 198.18.10.99 dev pod0
  nsx node ip route add 198.18.90.43/32 via 198.18.10.2 dev pod0
}

settle_stale-gateway() {
  # after the traffic: the entry of the gateway that never answered, as the
  # kernel left it after the failed resolution (FAILED once its last probe went
  # unanswered; INCOMPLETE while one is still running). Wait for FAILED
  # (bounded, 8 s) so neigh-node.txt holds the end state; fail if there is no
  # such entry at all
  local i st=""
  for ((i = 0; i < 80; i++)); do
    st=$(nsx node ip neigh show 198.18.10.99 dev pod0)
    [[ $st == *FAILED* ]] && break
    sleep 0.1
  done
  log "stale-gateway: node's entry for 198.18.10.99: ${st:-none}"
  [[ $st == *FAILED* || $st == *INCOMPLETE* ]] ||
    die "stale-gateway: the node's entry for 198.18.10.99 is '${st:-missing}', not FAILED or INCOMPLETE"
}

cfg_backend-no-route() {
  # the backend has no route back to the client range, but a host route to
  # 198.18.90.43: for 198.18.90.42 its kernel cannot route a SYN-ACK, a
  # datagram or an echo reply, so nothing answers .42 (not even an ICMP error:
  # that needs the same route); .43 is answered
  nsx backend ip route del 198.18.0.0/15 via 198.19.3.17
  nsx backend ip route add 198.18.90.43/32 via 198.19.3.17
}

cfg_dead-end-route() {
  # the node's route to the backend's subnet is a blackhole: what goes to
  # 198.19.96.10 is dropped in the node, silently (no ICMP). The backend's
  # second address 198.19.96.11 has a host route on-link by be0, more specific
  # than the blackhole: it passes
  nsx backend ip addr add 198.19.96.11/24 dev eth0
  nsx node ip route replace blackhole 198.19.96.0/24
  nsx node ip route add 198.19.96.11/32 dev be0
}

cfg_rp-filter() {
  # policy routing by fwmark in the pod: what comes out of the tunnel is marked and
  # routed via eth0 (table 100); the main table routes 198.19.0.0/16 via a second
  # link eth1. Replies come back on eth0 unmarked, and strict rp_filter (which
  # looks the source up without the mark) drops them: IPReversePathFilter counts.
  second_pod_link
  nsx pod iptables -t mangle -A PREROUTING -i tun0 -j MARK --set-mark 0x1
  nsx pod ip rule add fwmark 0x1 table 100
  nsx pod ip route add 198.19.0.0/16 via 198.18.10.1 dev eth0 table 100
  nsx pod ip route replace 198.19.0.0/16 via 198.18.11.1 dev eth1
  sysctl_ns pod net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.eth0.rp_filter=1 net.ipv4.conf.eth1.rp_filter=1
}

cfg_vxlan() {
  # the node-backend veth becomes an underlay (198.19.250.1/30 - .2/30) carrying a
  # VXLAN (VNI 42, UDP 4789) between the two; the overlay device vxlan0 on each side
  # takes over the addresses and routes be0/eth0 had. MASQUERADE -o vxlan0 on the
  # node (before encapsulation: the inner source is 198.19.3.17). Capture
  # "underlay" (node be0) holds every request inside VXLAN; "backend" is the
  # backend's vxlan0 (plain).
  nsx node ip addr flush dev be0
  nsx backend ip addr flush dev eth0
  nsx node ip addr add 198.19.250.1/30 dev be0
  nsx backend ip addr add 198.19.250.2/30 dev eth0
  nsx node ip link add vxlan0 type vxlan id 42 dstport 4789 local 198.19.250.1 remote 198.19.250.2 dev be0
  nsx backend ip link add vxlan0 type vxlan id 42 dstport 4789 local 198.19.250.2 remote 198.19.250.1 dev eth0
  nsx node ip addr add 198.19.3.17/24 dev vxlan0
  nsx backend ip addr add 198.19.96.10/24 dev vxlan0
  nsx node ip link set vxlan0 up
  nsx backend ip link set vxlan0 up
  nsx node ip route replace 198.19.96.0/24 dev vxlan0
  nsx backend ip route replace 198.19.3.0/24 dev vxlan0
  nsx backend ip route replace 198.18.0.0/15 via 198.19.3.17 dev vxlan0
  nsx node iptables -t nat -A POSTROUTING -o vxlan0 -j MASQUERADE
}

netstat_counter() { # NS NAME: a TcpExt/IpExt counter of the namespace's kernel
  nsx "$1" cat /proc/net/netstat | awk -v k="$2" '
    $1 ~ /:$/ && !h[$1]++ { for (i = 2; i <= NF; i++) name[$1, i] = $i; next }
    $1 ~ /:$/ { for (i = 2; i <= NF; i++) if (name[$1, i] == k) print $i }'
}

background_concurrent() {
  # flows that are not requests: the pod pings the node (egress only), the node
  # talks to the backend itself (backend only)
  python3 "$LABPY/labexpect.py" plan concurrent-background-pod >"$WORK/plan-bg-pod.json"
  client_run pod "$WORK/plan-bg-pod.json" "$WORK/client-bg-pod.jsonl"
  python3 "$LABPY/labexpect.py" plan concurrent-background-node >"$WORK/plan-bg-node.json"
  client_run node "$WORK/plan-bg-node.json" "$WORK/client-bg-node.jsonl"
}

# ip-masq-agent on the node, as the agent writes it: POSTROUTING sends every
# non-LOCAL destination to IP-MASQ-AGENT, which RETURNs for link-local and each
# CIDR given ($@) and masquerades the rest. The backend holds a second address
# 198.19.96.11 (TCP only: its UDP replies would leave from the primary).
masq_agent_chain() {
  local c
  nsx backend ip addr add 198.19.96.11/24 dev eth0
  nsx node iptables -t nat -N IP-MASQ-AGENT
  nsx node iptables -t nat -A POSTROUTING -m comment --comment \
    "ip-masq-agent: ensure nat POSTROUTING directs all non-LOCAL destination traffic to our custom IP-MASQ-AGENT chain" \
    -m addrtype ! --dst-type LOCAL -j IP-MASQ-AGENT
  for c in 169.254.0.0/16 "$@"; do
    nsx node iptables -t nat -A IP-MASQ-AGENT -d "$c" -m comment \
      --comment "ip-masq-agent: local traffic is not subject to MASQUERADE" -j RETURN
  done
  nsx node iptables -t nat -A IP-MASQ-AGENT -m comment \
    --comment "ip-masq-agent: outbound traffic is subject to MASQUERADE (must be last in chain)" -j MASQUERADE
}

# The agent's ConfigMap as `kubectl get cm -n kube-system ip-masq-agent -o yaml`
# prints it, with the CIDRs given ($@), into the scenario's work folder.
masq_agent_configmap() {
  local c
  {
    printf 'apiVersion: v1\ndata:\n  config: |\n    nonMasqueradeCIDRs:\n'
    for c in "$@"; do printf '      - %s\n' "$c"; done
    printf '    masqLinkLocal: false\n    resyncInterval: 60s\nkind: ConfigMap\nmetadata:\n'
    printf '  name: ip-masq-agent\n  namespace: kube-system\n'
  } >"$WORK/masq-agent.yaml"
}

cfg_masq-agent() {
  # the chain carries the ConfigMap: 198.19.96.11 is kept, the rest masqueraded
  masq_agent_chain 198.19.96.11/32
  masq_agent_configmap 198.19.96.11/32
}

cfg_masq-agent-drift() {
  # the ConfigMap keeps all of 198.19.96.0/24, but the chain still holds the old
  # config (only 198.19.96.11/32): the agent has not applied it
  masq_agent_chain 198.19.96.11/32
  masq_agent_configmap 198.19.96.0/24
}

# A rule of the host's iptables (CMD: iptables-save or ip6tables-save) in any
# table, other than the FORWARD rule topo_up adds to every pod and node only so
# that conntrack runs there.
has_rules() { # NS CMD
  [[ -n $(nsx "$1" "$2" | grep '^-A' | grep -vx -- '-A FORWARD -m conntrack --ctstate NEW') ]]
}

# The NAT rules of the pod and the node as `iptables-save`, `ip6tables-save`,
# `nft list ruleset` and `nft -j list ruleset` print them, for the hosts that
# have any nat rule; and `iptables-save` (`ip6tables-save`) of a host with
# other rules (a FORWARD drop: what tuplecorr --rules reads of its filter table).
save_rules() {
  local n nat
  for n in pod node node2; do
    [[ -e /run/netns/${PFX}$n ]] || continue # node2: pool-nodes only
    # nft first: listing with iptables-nft must not be what makes a nat table
    nat=0
    nsx "$n" nft list ruleset | grep -Eq '\b(masquerade|snat|dnat|redirect)\b' && nat=1
    if nsx "$n" iptables-save -t nat | grep -q '^-A' || nsx "$n" ip6tables-save -t nat | grep -q '^-A'; then
      nat=1
      nsx "$n" iptables-save >"$WORK/rules-$n.txt"
      nsx "$n" ip6tables-save >"$WORK/rules6-$n.txt"
    fi
    if ((nat)); then
      nsx "$n" nft list ruleset >"$WORK/nft-$n.txt"
      nsx "$n" nft -j list ruleset >"$WORK/nft-$n.json"
    else
      # no nat rule: the filter (mangle, raw) rules, when the scenario added any
      if has_rules "$n" iptables-save; then nsx "$n" iptables-save >"$WORK/rules-$n.txt"; fi
      if has_rules "$n" ip6tables-save; then nsx "$n" ip6tables-save >"$WORK/rules6-$n.txt"; fi
    fi
  done
}

# The routing state of the pod, the node and the backend, as the tools print it,
# taken after the traffic while the namespaces still exist: what decides whether
# the kernel forwards a packet, where to, and whether it drops it first
# (policy rules and every table, rp_filter/src_valid_mark/accept_local and
# forwarding, neighbour entries). One file per kind and host, in $WORK.
save_host_state() {
  local n
  for n in pod node node2 backend; do
    [[ -e /run/netns/${PFX}$n ]] || continue # not every scenario need have them all
    {
      # headers as `ip` would be typed: they tell a reader which family a
      # `from all lookup local` rule line belongs to
      echo '# ip rule'
      nsx "$n" ip rule
      echo '# ip -6 rule'
      nsx "$n" ip -6 rule
      echo '# ip route show table all'
      nsx "$n" ip route show table all
      echo '# ip -6 route show table all'
      nsx "$n" ip -6 route show table all
    } >"$WORK/routes-$n.txt"
    # sysctl -a holds about a thousand keys (and complains about some it may not
    # read): keep those that decide forwarding and the source check. Its status
    # is not checked (a key it cannot read makes it fail); an empty result is.
    { nsx "$n" sysctl -a 2>/dev/null || true; } |
      grep -E 'rp_filter|src_valid_mark|accept_local|ip_forward|\.forwarding' >"$WORK/sysctl-$n.txt" ||
      die "sysctl -a in $n: no forwarding or rp_filter key"
    {
      nsx "$n" ip neigh show
      nsx "$n" ip -6 neigh show
    } >"$WORK/neigh-$n.txt"
  done
}

# ---------------------------------------------------------------- running one scenario
run_scenario() {
  local sc=$1 v6=0 dest fmt label f ext n
  declare -F "cfg_$sc" >/dev/null || die "unknown scenario: $sc (see --list)"
  log "=== $sc"
  WORK=$(mktemp -d /tmp/tclab-work.XXXXXX)
  NODE_RETURN_ROUTE=1
  [[ $sc == no-return-route ]] && NODE_RETURN_ROUTE=0
  [[ $sc == ipv6 || $sc == pmtu-ipv6 ]] && v6=1
  CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "backend:backend:eth0:")
  if [[ $sc == any-node ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "node:node:any:LINUX_SLL2" "backend:backend:eth0:")
  fi
  if [[ $sc == any-node-sll ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "node:node:any:LINUX_SLL" "backend:backend:eth0:")
  fi
  if [[ $sc == any-router ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "router:node:any:LINUX_SLL2" "backend:backend:eth0:")
  fi
  if [[ $sc == any-router-sll ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "router:node:any:LINUX_SLL" "backend:backend:eth0:")
  fi
  if [[ $sc == multihomed ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "backend:backend:any:LINUX_SLL2")
  fi
  if [[ $sc == any-node-fork ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "node:node:any:LINUX_SLL2" "backend:backend:any:LINUX_SLL2")
  fi
  if [[ $sc == follow-late-iface ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "node:node:any:LINUX_SLL2" "backend:backend:any:LINUX_SLL2")
  fi
  if [[ $sc == pool-nodes ]]; then
    # one point, 'nodes', captured on two hosts: each node's backend-side be0
    CAPS=("decap:pod:tun0:" "egress:pod:br0:" "nodes=node-a:node:be0:" "nodes=node-b:node2:be0:"
      "backend:backend:br0:")
  fi
  if [[ $sc == vxlan ]]; then
    CAPS=("decap:pod:tun0:" "egress:pod:eth0:" "underlay:node:be0:" "backend:backend:vxlan0:")
  fi
  if [[ $sc == lossy-capture ]]; then
    # a capture point that loses packets: egress records only TCP segments with
    # payload, FIN or RST (no handshake), and everything that is not TCP
    CAPS=("decap:pod:tun0:"
      "egress:pod:eth0::not tcp or tcp[tcpflags] & (tcp-fin|tcp-rst) != 0 or ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2) > 0"
      "backend:backend:eth0:")
  fi
  topo_up "$v6"
  "cfg_$sc"
  python3 "$LABPY/labexpect.py" plan "$sc" >"$WORK/plan.json"
  local srv_args=()
  [[ $v6 == 1 ]] && srv_args+=(--ipv6)
  [[ $sc == proxy-v1 || $sc == proxy-v2 ]] && srv_args+=(--proxy-protocol 80)
  [[ $sc == keepalive ]] && srv_args+=(--http11 8088)
  server_start "${srv_args[@]}"
  ct_start
  cap_start
  local cargs=()
  [[ $sc == concurrent ]] && cargs+=(--concurrent)
  local rpf_before rpf_after
  rpf_before=$(netstat_counter pod IPReversePathFilter)
  client_run client "$WORK/plan.json" "$WORK/client.jsonl" "${cargs[@]}"
  rpf_after=$(netstat_counter pod IPReversePathFilter)
  printf '{"pod": {"IPReversePathFilter": %d}}\n' "$((rpf_after - rpf_before))" >"$WORK/counters.json"
  [[ $sc == concurrent ]] && background_concurrent
  cap_stop
  ct_stop
  if declare -F "settle_$sc" >/dev/null; then "settle_$sc"; fi
  save_rules
  save_host_state
  stop_pid "$SERVER_PID" TERM
  forget_pid "$SERVER_PID"
  topo_down

  # post-processing: formats, clock shifts
  dest="$OUT/$sc"
  rm -rf "$dest"
  mkdir -p "$dest"
  fmt=pcap
  case $sc in
  masquerade-pod) fmt=pcapng ;;
  udp-icmp) fmt=pcap.gz ;;
  esac
  local caps_arg=()
  for f in "${CAPS[@]}"; do
    label=$(cap_file "$f")
    ext=$fmt
    case $fmt in
    pcapng) editcap -F pcapng "$WORK/$label.pcap" "$dest/$label.pcapng" ;;
    pcap.gz) gzip -n -9 -c "$WORK/$label.pcap" >"$dest/$label.pcap.gz" ;;
    *) cp "$WORK/$label.pcap" "$dest/$label.pcap" ;;
    esac
    caps_arg+=("$(cap_label "$f")=$label.$ext")
  done
  local offsets=()
  if [[ $sc == clock-shift ]]; then
    # egress's clock runs 2.75 s ahead of decap's, backend's 1.3 s behind
    editcap -t 2.75 "$dest/egress.pcap" "$WORK/egress.shifted.pcap"
    mv "$WORK/egress.shifted.pcap" "$dest/egress.pcap"
    editcap -t -1.3 "$dest/backend.pcap" "$WORK/backend.shifted.pcap"
    mv "$WORK/backend.shifted.pcap" "$dest/backend.pcap"
    offsets=(--offset egress=2750 --offset backend=-1300)
  fi
  if [[ -n ${TCLAB_FOLLOW:-} ]]; then cp "$WORK/follow.json" "$dest/follow.json"; fi
  # beside the captures: each NAT host's rules and its conntrack -E -o timestamp
  # log, and the ConfigMap the scenario applied (tuplecorr --rules, --conntrack, --masq-agent)
  for n in pod node node2; do
    if [[ -f $WORK/nft-$n.txt ]]; then
      cp "$WORK/nft-$n.txt" "$WORK/nft-$n.json" "$WORK/conntrack-$n.log" "$dest/"
    fi
    # a NAT host's iptables-save, or a host's with filter rules only (save_rules)
    if [[ -f $WORK/rules-$n.txt ]]; then cp "$WORK/rules-$n.txt" "$dest/"; fi
    if [[ -f $WORK/rules6-$n.txt ]] && grep -q '^-A' "$WORK/rules6-$n.txt"; then cp "$WORK/rules6-$n.txt" "$dest/"; fi
  done
  if [[ -f $WORK/masq-agent.yaml ]]; then cp "$WORK/masq-agent.yaml" "$dest/"; fi
  # and, for every scenario, the routing state of the pod, the node and the
  # backend (save_host_state): policy rules and routes of every table, the
  # forwarding and source-check sysctls, the neighbour entries. With them
  # tuplecorr --routes/--sysctl/--neigh WHERE=FILE says why a packet was lost
  # where the captures only show that it was: no route back, rp_filter, a
  # route out of the wrong interface, a neighbour that never answered.
  for n in pod node node2 backend; do
    for f in routes sysctl neigh; do
      if [[ -f $WORK/$f-$n.txt ]]; then cp "$WORK/$f-$n.txt" "$dest/"; fi
    done
  done
  python3 "$LABPY/labexpect.py" expect "$sc" --work "$WORK" --dest "$dest" "${caps_arg[@]}" "${offsets[@]}"
  python3 "$LABPY/labexpect.py" verify "$dest" --work "$WORK"
  python3 "$LABPY/labexpect.py" index "$OUT"
  if [[ -z ${TCLAB_KEEP:-} ]]; then rm -rf "$WORK"; else log "work files kept in $WORK"; fi
  WORK=""
  log "=== $sc done: $(du -sh "$dest" | cut -f1)"
}

main() {
  local scenarios=() verify_only=0
  while (($#)); do
    case $1 in
    --out) OUT=$2; shift 2 ;;
    --list) printf '%s\n' "${ALL_SCENARIOS[@]}"; exit 0 ;;
    --verify) verify_only=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) scenarios+=("$1"); shift ;;
    esac
  done
  ((${#scenarios[@]})) || scenarios=("${ALL_SCENARIOS[@]}")
  if ((verify_only)); then
    # re-run the tshark cross-check on existing captures (no root, no network)
    local s
    for s in "${scenarios[@]}"; do python3 "$LABPY/labexpect.py" verify "$OUT/$s"; done
    exit 0
  fi
  [[ $(id -u) == 0 ]] || die "needs root (network namespaces, iptables, tcpdump)"
  local t
  for t in ip iptables ip6tables nft conntrack tcpdump tshark editcap python3 gzip stdbuf timeout; do
    command -v "$t" >/dev/null || die "missing tool: $t"
  done
  mkdir -p "$OUT"
  local sc
  for sc in "${scenarios[@]}"; do run_scenario "$sc"; done
}

main "$@"
