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

# tcpdump on the client's side of the pair, packets to or from $1 into
# $WORK/out.pcap, handed over as they come (--immediate-mode: without it
# TPACKET_V3 hands them over a block at a time, and a capture of a second
# ends before the block's timeout with nothing written).
capture_start() {
  ip netns exec "$C" timeout 60 tcpdump -U --immediate-mode -i "$TAG-a" -w "$WORK/out.pcap" -s 0 \
    "host $1" 2>/dev/null &
  TCPDUMP=$!
  PIDS+=("$TCPDUMP")
}

# Waits (bounded: 5 s) until tcpdump has begun its file and the command "$@"
# succeeds (e.g. a function that tells whether the servers listen).
capture_wait_ready() {
  local _
  for _ in $(seq 1 50); do
    if [[ -s $WORK/out.pcap ]] && "$@"; then
      return 0
    fi
    sleep 0.1
  done
}

# Ends the capture (half a second after the last client) and copies it to $1.
capture_stop() {
  sleep 0.5
  kill -INT "$TCPDUMP"
  wait "$TCPDUMP" 2>/dev/null || true
  cp "$WORK/out.pcap" "$1"
  echo "wrote $1: $(tcpdump -r "$1" 2>/dev/null | wc -l) packets"
}
