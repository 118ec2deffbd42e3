#!/usr/bin/env bash
# The live check of --follow on the lab: runs ONE scenario (default
# healthcheck) with scripts/lab.sh while `tuplecorr --follow` reads the
# captures tcpdump -U is still writing, then checks (scripts/lab/check-follow.py)
# that its lines equal the batch run over the finished captures and came
# within seconds of each request.
#
#   TUPLECORR=BIN scripts/lab-follow.sh [SCENARIO]
#   TCLAB_FOLLOW_INPUT=file scripts/lab-follow.sh follow-late-iface
#
# (TCLAB_FOLLOW_INPUT: pipe, the default, or file: growing files.)
# follow-late-iface: a node's -i any capture whose second out-interface first
# carries traffic 2.5 s into the run (its requests masqueraded).
#
# healthcheck runs a minute of traffic (TCLAB_HEALTHCHECK_SECONDS, default 60:
# a request every 200 ms). Every line must come within 14 s of its
# connection's last packet at capture 1: the hold (10 s with --follow: a flow
# that may go on, such as a SYN never answered or a datagram within
# --udp-idle, waits it after its last packet), the 1 s a silent point's clock
# is taken to lag the wall clock, and 3 s for reading and scheduling on a busy
# CI machine (measured on 2 idle cores: healthcheck at most 10.3 s, reject and
# masquerade-node 11.5-11.9 s); healthcheck's within 14 s of its first packet
# too (its connections close at once: the same budget), the other scenarios'
# within 20 s. (12 s for healthcheck failed a local CI run once: 13.2 s, while
# three reruns on the same machine gave 10.3-10.9 s.)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SCENARIO=${1:-healthcheck}

skip() { echo "lab-follow: SKIP: $*"; exit 0; }
[[ $(id -u) == 0 ]] || skip "not root (the lab needs network namespaces, iptables and tcpdump)"
for t in ip iptables ip6tables nft conntrack tcpdump tshark editcap python3 gzip stdbuf timeout; do
  command -v "$t" >/dev/null || skip "missing tool: $t"
done
probe="tclab-follow-probe-$$"
ip netns add "$probe" 2>/dev/null || skip "ip netns add does not work here"
ip netns del "$probe" 2>/dev/null || true

bin=${TUPLECORR:-}
if [[ -z $bin ]]; then
  (cd "$ROOT" && cargo build -q --release)
  # where cargo put it: CARGO_TARGET_DIR (relative to the repository), else target/
  tdir=${CARGO_TARGET_DIR:-target}
  [[ $tdir == /* ]] || tdir="$ROOT/$tdir"
  bin="$tdir/release/tuplecorr"
fi
out=$(mktemp -d /tmp/tclab-follow.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "lab-follow: running scenario $SCENARIO live with tuplecorr --follow"
limit=20
if [[ $SCENARIO == healthcheck ]]; then
  export TCLAB_HEALTHCHECK_SECONDS=${TCLAB_HEALTHCHECK_SECONDS:-60}
  limit=14
fi
TCLAB_FOLLOW=$bin timeout 400 "$ROOT/scripts/lab.sh" --out "$out" "$SCENARIO"
python3 "$HERE/lab/check-follow.py" "$bin" "$out/$SCENARIO" "$limit" 20 14
echo "lab-follow: OK"
