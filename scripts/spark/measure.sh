#!/usr/bin/env bash
# The Spark job's wall time (issue 16 item 4) against one tuplecorr run on the
# same files: scripts/shards.sh's generated three-point set (20 000 requests
# over 20 minutes in 60 s files by default; made by shards.sh when missing),
# each point's files linked into its own folder. The single run and the job's
# shards pin the same clocks (a report without requests) and write Parquet.
# Prints medians of RUNS runs of each, and the job's own parts: the sum of the
# shards' tuplecorr times (_tuplecorr_shards.json), and the phases of one more run.
#
#     scripts/spark/measure.sh [RUNS]        default 3
#
# Environment: MASTER (local[2]), SHARD_SECONDS (300), and shards.sh's
# CONNECTIONS (20000), SPREAD_NS, ROTATE.
set -euo pipefail
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/../bench-lib.sh"
RUNS="${1:-3}"
MASTER="${MASTER:-local[2]}"
SHARD_SECONDS="${SHARD_SECONDS:-300}"
CONNECTIONS="${CONNECTIONS:-20000}"
SPREAD_NS="${SPREAD_NS:-60000000}"
DIR="$CACHE/shards-c$CONNECTIONS-r3000-s1-spread$SPREAD_NS"
[ -f "$DIR/.done" ] || SPREAD_NS="$SPREAD_NS" "$ROOT/scripts/shards.sh" "$CONNECTIONS" 1 >&2
build
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
CAPS=()
for p in decap egress backend; do
    mkdir -p "$WORK/$p"
    for f in "$DIR"/rotated/"$p"_*.pcap; do ln -s "$f" "$WORK/$p/"; CAPS+=("$p=$f"); done
done
"$BIN" -q --format json -o "$WORK/first.json" "${CAPS[@]}"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["requests"] = []; json.dump(r, open(sys.argv[2], "w"))' \
    "$WORK/first.json" "$WORK/clocks.json"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg); $CONNECTIONS requests, ${#CAPS[@]} files" >&2
RESULTS="$WORK/results.tsv"
for run in $(seq "$RUNS"); do
    echo "# run $run/$RUNS" >&2
    timed "$RESULTS" single "$BIN" -q --format parquet -o "$WORK/single.parquet" --clocks-from "$WORK/clocks.json" "${CAPS[@]}"
    timed "$RESULTS" spark python3 "$ROOT/scripts/spark/tuplecorr_spark.py" --master "$MASTER" --tuplecorr "$BIN" \
        --point "decap=$WORK/decap" --point "egress=$WORK/egress" --point "backend=$WORK/backend" \
        --shard-seconds "$SHARD_SECONDS" --out "$WORK/spark"
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("shards\t%.4f\t0" % sum(s["seconds"] for s in d))' \
        "$WORK/spark/_tuplecorr_shards.json" >>"$RESULTS"
done
echo "# one more job run, its phases:" >&2
python3 "$ROOT/scripts/spark/tuplecorr_spark.py" --master "$MASTER" --tuplecorr "$BIN" \
    --point "decap=$WORK/decap" --point "egress=$WORK/egress" --point "backend=$WORK/backend" \
    --shard-seconds "$SHARD_SECONDS" --out "$WORK/spark" 2>&1 | grep '^tuplecorr_spark: .*: [0-9.]* s$'
python3 - "$RESULTS" "$WORK/spark/_tuplecorr_shards.json" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, secs, _ = line.split("\t")
    rows.setdefault(name, []).append(float(secs))
med = {n: statistics.median(v) for n, v in rows.items()}
n = len(json.load(open(sys.argv[2])))
print(f"single tuplecorr run: {med['single']:.2f} s")
print(f"Spark job ({n} shards): {med['spark']:.2f} s ({med['spark'] / med['single']:.1f}x), "
      f"of which the shards' tuplecorr runs sum to {med['shards']:.2f} s")
PY
