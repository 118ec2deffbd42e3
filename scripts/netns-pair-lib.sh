# shellcheck shell=bash
# Sourced by the capture scripts (app-capture.sh, dns-tcp-capture.sh): two
# network namespaces this script creates, $C (client) and $S (server), joined
# by one veth pair ($TAG-a in $C, $TAG-b in $S) with the two addresses of a
# /30 from 198.18.0.0/15 and no route anywhere else; $WORK a scratch folder;
# processes started into $PIDS are ended (by PID) and the namespaces deleted
# when the script exits, also on failure.
#
#   netns_pair TAG CLIENT_ADDR SERVER_ADDR     e.g. netns_pair tcapp$$ 198.18.210.1 198.18.210.2
netns_pair() {
  TAG=$1
  C=$TAG-c S=$TAG-s
  WORK=$(mktemp -d)
  PIDS=()
  trap netns_pair_cleanup EXIT
  ip netns add "$C"
  ip netns add "$S"
  ip link add "$TAG-a" netns "$C" type veth peer name "$TAG-b" netns "$S"
  ip -n "$C" addr add "$2/30" dev "$TAG-a"
  ip -n "$S" addr add "$3/30" dev "$TAG-b"
  for n in "$C" "$S"; do ip -n "$n" link set lo up; done
  ip -n "$C" link set "$TAG-a" up
  ip -n "$S" link set "$TAG-b" up
}

netns_pair_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$C" 2>/dev/null || true
  ip netns del "$S" 2>/dev/null || true
  rm -rf "$WORK"
}
