#!/usr/bin/env bash
# The live check of --follow on the lab: runs ONE scenario (default
# healthcheck) with scripts/lab.sh while `tuplecorr --follow` reads the
# captures tcpdump -U is still writing, then checks (scripts/lab/check-follow.py)
# that its lines equal the batch run over the finished captures and came
# within seconds of each request.
#
#   TUPLECORR=BIN scripts/lab-follow.sh [SCENARIO]
#
# Exits 0 with a "SKIP:" line where the lab cannot run (as scripts/lab-ci.sh).
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
  bin="$ROOT/target/release/tuplecorr"
fi
out=$(mktemp -d /tmp/tclab-follow.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "lab-follow: running scenario $SCENARIO live with tuplecorr --follow"
TCLAB_FOLLOW=$bin timeout 300 "$ROOT/scripts/lab.sh" --out "$out" "$SCENARIO"
python3 "$HERE/lab/check-follow.py" "$bin" "$out/$SCENARIO"
echo "lab-follow: OK"
