#!/usr/bin/env bash
# Time shards measured (issue 16 item 2): a generated three-point set spread
# over time (examples/synth_captures.rs with SPREAD_NS), each point rotated into
# files of ROTATE seconds with editcap -i (as tcpdump -G writes them), run whole
# and as SHARDS equal shards, each shard pinned with --clocks-from the whole
# run's report. Prints the whole run's wall time and peak RSS, the sum of the
# shards' wall times and their largest peak RSS (medians of RUNS runs), and
# checks that the union of the shards' requests equals the whole run's
# (join key: proto, capture 1 client, capture 1 raw_time; exit 1 otherwise).
#
#     scripts/shards.sh [CONNECTIONS] [RUNS]       defaults: 20000 3
#
# Environment: SPREAD_NS (60000000: one connection every 60.2 ms, 20000 of them
# ≈ 20 min), ROTATE (60 s files), SHARDS (4), RESPONSE_BYTES (3000), SEED (1),
# CACHE (target/bench-cache), MARGIN (--shard-margin; default the tool's 140 s).
set -euo pipefail
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

CONNECTIONS="${1:-20000}"
RUNS="${2:-3}"
SPREAD_NS="${SPREAD_NS:-60000000}"
ROTATE="${ROTATE:-60}"
SHARDS="${SHARDS:-4}"
RESPONSE_BYTES="${RESPONSE_BYTES:-3000}"
SEED="${SEED:-1}"
MARGIN="${MARGIN:-}"

build
need editcap
DIR="$CACHE/shards-c$CONNECTIONS-r$RESPONSE_BYTES-s$SEED-spread$SPREAD_NS"
if [ ! -f "$DIR/.done" ]; then
    rm -rf "$DIR" && mkdir -p "$DIR/rotated"
    echo "generating $DIR ..." >&2
    SPREAD_NS="$SPREAD_NS" "$SYNTH" "$DIR" "$CONNECTIONS" "$RESPONSE_BYTES" "$SEED" >&2
    for p in decap egress backend; do
        editcap -i "$ROTATE" "$DIR/$p.pcap" "$DIR/rotated/$p.pcap" >&2
    done
    touch "$DIR/.done"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
RESULTS="$WORK/results.tsv"
CAPS=()
for p in decap egress backend; do
    for f in "$DIR"/rotated/"$p"_*.pcap; do CAPS+=("$p=$f"); done
done
echo "# $(date -u +%FT%TZ) $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "# $CONNECTIONS connections, ${#CAPS[@]} files, $(du -bc "$DIR"/rotated/*.pcap | tail -1 | cut -f1) bytes" >&2
cat "$DIR"/rotated/*.pcap >/dev/null

# One pass fixes the clocks every run below pins; as a planner would, keep only
# its clocks (captures, boundaries) for the shards: every shard reads the file.
"$BIN" -q --format json -o "$WORK/first.json" "${CAPS[@]}"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["requests"] = []; json.dump(r, open(sys.argv[2], "w"))' \
    "$WORK/first.json" "$WORK/clocks.json"
PIN=(--clocks-from "$WORK/clocks.json")
[ -z "$MARGIN" ] || PIN+=(--shard-margin "$MARGIN")
read -r FIRST LAST < <(python3 -c '
import json, sys, datetime
r = json.load(open(sys.argv[1]))["requests"]
t = sorted(x["captures"][0]["raw_time"] for x in r)
print(t[0], t[-1])' "$WORK/first.json")
BOUNDS="$(python3 -c '
import sys
from datetime import datetime, timezone
def ns(s):
    whole, frac = s.rstrip("Z").split(".")
    return int(datetime.fromisoformat(whole).replace(tzinfo=timezone.utc).timestamp()) * 10**9 + int(frac.ljust(9, "0"))
a, b, n = ns(sys.argv[1]), ns(sys.argv[2]) + 1, int(sys.argv[3])
print(" ".join(str(a + (b - a) * k // n) for k in range(n + 1)))' "$FIRST" "$LAST" "$SHARDS")"
read -r -a B <<<"$BOUNDS"
epoch() { printf '%d.%09d' "$(($1 / 1000000000))" "$(($1 % 1000000000))"; }

for run in $(seq "$RUNS"); do
    echo "# run $run/$RUNS" >&2
    timed "$RESULTS" "whole" "$BIN" -q --format json -o "$WORK/whole.json" "${PIN[@]}" "${CAPS[@]}"
    for k in $(seq 0 $((SHARDS - 1))); do
        timed "$RESULTS" "shard $k" "$BIN" -q --format json -o "$WORK/shard$k.json" "${PIN[@]}" \
            --shard-start "$(epoch "${B[$k]}")" --shard-end "$(epoch "${B[$((k + 1))]}")" "${CAPS[@]}"
    done
done

python3 - "$RESULTS" "$SHARDS" "$WORK" <<'EOF'
import json, statistics, sys
from collections import defaultdict
results, shards, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = defaultdict(list)
for line in open(results):
    name, secs, rss = line.rstrip("\n").split("\t")
    rows[name].append((float(secs), int(rss)))
med = {n: (statistics.median(s for s, _ in v), statistics.median(r for _, r in v)) for n, v in rows.items()}
print("| run | wall s (median) | peak RSS MiB (median) |")
print("|---|---|---|")
for n in ["whole"] + [f"shard {k}" for k in range(shards)]:
    print(f"| {n} | {med[n][0]:.3f} | {med[n][1] / 1024:.1f} |")
total = sum(med[f"shard {k}"][0] for k in range(shards))
peak = max(med[f"shard {k}"][1] for k in range(shards))
print(f"| sum of {shards} shards | {total:.3f} | largest {peak / 1024:.1f} |")
print(f"\nshards / whole: time {total / med['whole'][0]:.2f}x, largest shard RSS {peak / med['whole'][1]:.2f}x")
def keyed(path):
    out = {}
    for r in json.load(open(path))["requests"]:
        c = r["captures"][0]
        r = dict(r); r.pop("request")
        out[(r["proto"], c.get("client"), c["raw_time"])] = r
    return out
whole = keyed(f"{work}/whole.json")
union = {}
for k in range(shards):
    for key, r in keyed(f"{work}/shard{k}.json").items():
        assert key not in union, f"{key} in two shards"
        union[key] = r
if union != whole:
    missing = [k for k in whole if k not in union][:3]
    extra = [k for k in union if k not in whole][:3]
    differ = [k for k in whole if k in union and union[k] != whole[k]][:3]
    print(f"UNION DIFFERS: missing {missing} extra {extra} differ {differ}")
    sys.exit(1)
print(f"union of the shards' {len(union)} requests equals the whole run's")
EOF
