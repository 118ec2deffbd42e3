#!/usr/bin/env bash
# Scaling checks of tuplecorr on generated three-point captures
# (examples/synth_captures.rs), each a pass/fail line; exit 1 when one fails.
#
#     scripts/scale.sh [CONNECTIONS] [RUNS]        defaults: 10000 3
#
#  memory:  same flows, 10× the bytes per flow (RESPONSE_BYTES 20000 → 200000; 6× the
#           packets, the backend sees GRO-sized segments):
#           median peak RSS within 10% ("memory grows with flows, not packets").
#  linear:  4× the connections (4× the data and packets): wall time per packet
#           within 10% of the 1× run (medians of RUNS alternating runs).
#  threads: `--threads 1` and the default write byte-identical JSON (1× and 4×).
#  stream:  the target of issue 16 item 1 (streaming correlation): CONNECTIONS/4
#           connections spread over ~4000 s, then 16× the connections over 16× the
#           time (SPREAD_NS, same rate), both with `--stream --format ndjson`:
#           median peak RSS within 1.2× of the 1× run; and the stream's NDJSON
#           byte-identical to the run without --stream. The 1× run spans several
#           windows and their margins (300 s + 2 × 200 s), so both runs reach the
#           stream's steady state. The run without --stream is shown for reference.
#  long:    the 16× stream set plus 4 connections open over all of it (a response
#           segment every 20 s, as a database pool's): with --stream, median peak
#           RSS still within 1.2× of the 1× run (--stream-hold bounds how long a
#           window waits for them).
#
# Captures are generated once into $CACHE (target/bench-cache) and reused; the
# 10× set is ~1.9 GB per file, the 4× set ~760 MB per file.
set -euo pipefail
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

CONNECTIONS="${1:-10000}"
RUNS="${2:-3}"
SEED="${SEED:-1}"

build
declare -A DIRS
DIRS[BASE]="$(gen "$CONNECTIONS" 20000 "$SEED")"
DIRS[DEEP]="$(gen "$CONNECTIONS" 200000 "$SEED")"
DIRS[WIDE]="$(gen $((CONNECTIONS * 4)) 20000 "$SEED")"
# stream: one connection every ~1.6 s (the generator adds 200 µs per connection).
STREAM_1=$((CONNECTIONS / 4))
STREAM_SPREAD=$((4000000000000 / STREAM_1 - 200000))
gen_spread() { SPREAD_NS="$STREAM_SPREAD" CACHE="$CACHE/spread$STREAM_SPREAD" gen "$@"; }
DIRS[SPAN1]="$(gen_spread "$STREAM_1" 3000 "$SEED")"
DIRS[SPAN16]="$(gen_spread $((STREAM_1 * 16)) 3000 "$SEED")"
DIRS[LONG16]="$(LONG=4 SPREAD_NS="$STREAM_SPREAD" CACHE="$CACHE/spread$STREAM_SPREAD-long4" gen $((STREAM_1 * 16)) 3000 "$SEED")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
RESULTS="$WORK/results.tsv"
files() { local d="${DIRS[${1%S}]}"; FILES=("$d/decap.pcap" "$d/egress.pcap" "$d/backend.pcap"); }
LONGS=LONG16S
STREAM=(--stream --format ndjson)

echo "# $(date -u +%FT%TZ) $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
fail=0
for set in BASE DEEP WIDE SPAN1 SPAN16; do
    files "$set"
    "$BIN" -q --format json -o "$WORK/$set.json" "${FILES[@]}"
    [[ $set == SPAN* ]] || "$BIN" -q --threads 1 --format json -o "$WORK/$set-t1.json" "${FILES[@]}"
    cat "${FILES[@]}" >/dev/null # page cache
done
for set in SPAN1 SPAN16; do
    files "$set"
    "$BIN" -q --format ndjson -o "$WORK/$set.ndjson" "${FILES[@]}"
    "$BIN" -q "${STREAM[@]}" -o "$WORK/${set}S.ndjson" "${FILES[@]}"
done
for run in $(seq "$RUNS"); do
    echo "# run $run/$RUNS" >&2
    for set in BASE DEEP WIDE SPAN1 SPAN16 SPAN1S SPAN16S $LONGS; do
        files "$set"
        if [[ $set == *S ]]; then
            timed "$RESULTS" "$set" "$BIN" -q "${STREAM[@]}" -o "$WORK/run.ndjson" "${FILES[@]}"
        else
            timed "$RESULTS" "$set" "$BIN" -q --format json -o "$WORK/run.json" "${FILES[@]}"
        fi
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$RESULTS" "$WORK" "$CONNECTIONS" "$STREAM_1" <<'PY' || fail=1
import json, statistics, sys
from collections import defaultdict
results, work, n, s1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t, rss = defaultdict(list), defaultdict(list)
for line in open(results):
    name, sec, kb = line.split()
    t[name].append(float(sec)); rss[name].append(int(kb) / 1024)
info = {}
SETS = ("BASE", "DEEP", "WIDE", "SPAN1", "SPAN16")
span = {}
for s in SETS:
    report = json.load(open(f"{work}/{s}.json"))
    times = [h["time"] for r in report["requests"] for h in r["captures"][:1] if h.get("time")]
    span[s] = (min(times), max(times)) if times else ("", "")
    caps = report["captures"]
    info[s] = (sum(c["packets"] for c in caps), sum(c["flows"] for c in caps))
desc = {"BASE": f"{n} conn × 20 kB", "DEEP": f"{n} conn × 200 kB", "WIDE": f"{4 * n} conn × 20 kB",
        "SPAN1": f"{s1} conn × 3 kB over ~4000 s", "SPAN16": f"{16 * s1} conn × 3 kB over ~64000 s",
        "SPAN1S": f"{s1} conn × 3 kB over ~4000 s, --stream", "SPAN16S": f"{16 * s1} conn × 3 kB over ~64000 s, --stream"}
info["SPAN1S"], info["SPAN16S"] = info["SPAN1"], info["SPAN16"]
desc["LONG16S"] = f"{16 * s1} conn × 3 kB over ~64000 s + 4 open throughout, --stream"
info["LONG16S"] = (None, None)
SETS = SETS + ("SPAN1S", "SPAN16S", "LONG16S")
print("| set | packets | flows | median s | min–max s | median peak RSS MiB | ns / packet |")
print("|---|---:|---:|---:|---:|---:|---:|")
for s in SETS:
    m = statistics.median(t[s])
    per = f"{m / info[s][0] * 1e9:.0f}" if info[s][0] else ""
    print(f"| {desc[s]} | {info[s][0] or ''} | {info[s][1] or ''} | {m:.3f} | {min(t[s]):.3f}–{max(t[s]):.3f} "
          f"| {statistics.median(rss[s]):.1f} | {per} |")
ok = True
r = statistics.median(rss["DEEP"]) / statistics.median(rss["BASE"])
good = r <= 1.10
ok &= good
print(f"\nmemory:  {info['DEEP'][0] / info['BASE'][0]:.1f}× packets, same flows -> peak RSS ×{r:.3f} "
      f"(limit 1.10): {'pass' if good else 'FAIL'}")
pp = lambda s: statistics.median(t[s]) / info[s][0]
r = pp("WIDE") / pp("BASE")
good = r <= 1.10
ok &= good
print(f"linear:  {info['WIDE'][0] / info['BASE'][0]:.1f}× packets -> time per packet ×{r:.3f} "
      f"(limit 1.10): {'pass' if good else 'FAIL'}")
r = statistics.median(rss["WIDE"]) / statistics.median(rss["BASE"])
print(f"         ({info['WIDE'][1] / info['BASE'][1]:.1f}× flows -> peak RSS ×{r:.2f}, for reference)")
r = statistics.median(rss["SPAN16S"]) / statistics.median(rss["SPAN1S"])
good = r <= 1.2
ok &= good
print(f"stream:  16× the requests over 16× the time ({span['SPAN1'][0]}..{span['SPAN1'][1]} vs "
      f"{span['SPAN16'][0]}..{span['SPAN16'][1]}), --stream -> peak RSS ×{r:.2f} (limit 1.20, issue 16 "
      f"item 1): {'pass' if good else 'FAIL'}")
r = statistics.median(rss["SPAN16"]) / statistics.median(rss["SPAN1"])
print(f"         (without --stream: peak RSS ×{r:.2f}, for reference)")
r = statistics.median(rss["LONG16S"]) / statistics.median(rss["SPAN1S"])
good = r <= 1.2
ok &= good
print(f"long:    the 16× set with 4 connections open throughout, --stream -> peak RSS ×{r:.2f} of the 1× "
      f"run (limit 1.20): {'pass' if good else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
for set in SPAN1 SPAN16; do
    if cmp -s "$WORK/$set.ndjson" "$WORK/${set}S.ndjson"; then
        echo "stream:  $set NDJSON identical with --stream and without: pass"
    else
        echo "stream:  $set NDJSON differs between --stream and the run without it: FAIL"
        cmp "$WORK/$set.ndjson" "$WORK/${set}S.ndjson" | head -3
        fail=1
    fi
done
for set in BASE WIDE; do
    if cmp -s "$WORK/$set.json" "$WORK/$set-t1.json"; then
        echo "threads: $set JSON identical with --threads 1 and the default: pass"
    else
        echo "threads: $set JSON differs between --threads 1 and the default: FAIL"
        diff <(python3 -m json.tool "$WORK/$set.json") <(python3 -m json.tool "$WORK/$set-t1.json") | head -20
        fail=1
    fi
done
exit "$fail"
