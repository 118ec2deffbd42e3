#!/bin/sh
# What tuplecorr reads on a host, written into one folder for
# `tuplecorr CAPTURES... --host-dir 'WHERE=FOLDER'` (printed by
# `tuplecorr generate collect`). Run it as root on the host the requests
# crossed (a Kubernetes node: a debug pod with hostNetwork, or
# `nsenter -t 1 -n`), while or right after the requests run: conntrack
# entries expire, neighbour entries age, and rules change.
#
#     tuplecorr generate collect > collect.sh && sh collect.sh node-a
#
# It only reads: iptables-save, ip6tables-save, nft -j list ruleset,
# conntrack -L, ip rule / route / neigh / link / addr, the sysctls of
# forwarding and source validation, and the ip-masq-agent ConfigMap
# (kubectl, when present). What the tools print on stderr, and a tool that
# is missing or fails, is noted in collect.log; the rest is written.
set -u
dir=${1:-tuplecorr-host-$(hostname 2>/dev/null || echo host)}
mkdir -p "$dir" || exit 1
: > "$dir/collect.log"
have() { command -v "$1" >/dev/null 2>&1; }
run() {
  out=$1
  shift
  if have "$1"; then
    "$@" > "$dir/$out" 2>> "$dir/collect.log" || echo "$*: exit status $?" >> "$dir/collect.log"
  else
    echo "$1: not installed" >> "$dir/collect.log"
  fi
}
run iptables-save.txt iptables-save
run ip6tables-save.txt ip6tables-save
run nft-ruleset.json nft -j list ruleset
run conntrack.txt conntrack -L
{
  echo '# ip rule'; ip rule
  echo '# ip -6 rule'; ip -6 rule
  echo '# ip route show table all'; ip route show table all
  echo '# ip -6 route show table all'; ip -6 route show table all
} > "$dir/routes.txt" 2>> "$dir/collect.log"
{ ip neigh show; ip -6 neigh show; } > "$dir/neigh.txt" 2>> "$dir/collect.log"
run links.txt ip -o link
run addr.txt ip -o addr
sysctl -a 2>/dev/null | grep -E 'rp_filter|src_valid_mark|accept_local|ip_forward|\.forwarding' > "$dir/sysctl.txt"
if have kubectl; then
  kubectl get cm -n kube-system ip-masq-agent -o yaml > "$dir/masq-agent.yaml" 2>> "$dir/collect.log" ||
    rm -f "$dir/masq-agent.yaml"
fi
echo "tuplecorr: wrote $dir; give it as: --host-dir 'WHERE=$dir' (and --names $dir/links.txt)" >&2
