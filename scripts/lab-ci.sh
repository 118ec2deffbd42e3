#!/usr/bin/env bash
# CI check of the lab: runs ONE live scenario (default masquerade-node) with
# scripts/lab.sh into a temporary folder, lets lab.sh cross-check it with tshark,
# then compares its expected.json with the committed testdata/lab/<scenario>/
# expected.json: the same requests (by marker and client endpoint at capture 1),
# the same seen / reply_seen / source and destination changes / reply path /
# outcome, and endpoints equal where neither side has a '*' port.
#
#   scripts/lab-ci.sh [SCENARIO]
#
# Exits 0 with a clear "SKIP:" line when it cannot run here (not root, no
# working `ip netns`, no /dev/net/tun, a missing tool). Takes about 10 s.
# Packages: apt-get install -y tcpdump tshark iproute2 iptables nftables conntrack python3
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SCENARIO=${1:-masquerade-node}

skip() { echo "lab-ci: SKIP: $*"; exit 0; }

[[ $(id -u) == 0 ]] || skip "not root (the lab needs network namespaces, iptables and tcpdump)"
for t in ip iptables ip6tables conntrack tcpdump tshark editcap python3 gzip stdbuf timeout; do
  command -v "$t" >/dev/null || skip "missing tool: $t"
done
[[ -c /dev/net/tun ]] || skip "no /dev/net/tun"
probe="tclab-ci-probe-$$"
if ! ip netns add "$probe" 2>/dev/null; then skip "ip netns add does not work here"; fi
ok=1
ip netns exec "$probe" iptables -t nat -A POSTROUTING -j MASQUERADE 2>/dev/null || ok=0
ip netns del "$probe" 2>/dev/null || true
((ok)) || skip "iptables NAT does not work inside a network namespace here"

want="$ROOT/testdata/lab/$SCENARIO/expected.json"
[[ -f $want ]] || { echo "lab-ci: no committed $want" >&2; exit 1; }

out=$(mktemp -d /tmp/tclab-ci.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "lab-ci: running scenario $SCENARIO live into $out"
timeout 240 "$ROOT/scripts/lab.sh" --out "$out" "$SCENARIO"
python3 "$HERE/lab/labexpect.py" compare "$want" "$out/$SCENARIO/expected.json"
# The correlator on captures the kernel just made: every verdict field of the
# live expected.json (TUPLECORR: the binary to check; default: build one).
bin=${TUPLECORR:-}
if [[ -z $bin ]]; then
  (cd "$ROOT" && cargo build -q --release)
  bin="$ROOT/target/release/tuplecorr"
fi
python3 "$HERE/lab/check-verdicts.py" "$bin" "$out/$SCENARIO"
echo "lab-ci: OK"
