#!/usr/bin/env bash
# End-to-end benchmark of tuplecorr on generated three-point captures
# (examples/synth_captures.rs: decap, egress, backend; ~19 kB per connection and
# file at the default RESPONSE_BYTES, so 10000 connections ≈ 190 MB per file).
#
#     scripts/bench.sh [CONNECTIONS] [RUNS]        defaults: 10000 5
#
# Environment: RESPONSE_BYTES (20000), SEED (1), CACHE (target/bench-cache),
# TSHARK=0 skips the (slow, run once) tshark row, BASE=path/to/other/tuplecorr
# adds that build's table, CSV and JSON rows, run alternately with ours in the
# same session (e.g. main's binary, to measure a change side by side).
#
# Generates the captures once into $CACHE (reused when present with the same
# parameters), then alternates RUNS runs of each command (medians, min–max, peak
# RSS from GNU time), runs tshark once, prints a markdown table and the target
# ratios, and checks that tuplecorr mapped every request of truth.tsv (exit 1 on
# any mismatch, so a fast wrong answer cannot pass).
set -euo pipefail
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

CONNECTIONS="${1:-10000}"
RUNS="${2:-5}"
RESPONSE_BYTES="${RESPONSE_BYTES:-20000}"
SEED="${SEED:-1}"
TSHARK="${TSHARK:-1}"
BASE="${BASE:-}"

build
need tcpdump
DIR="$(gen "$CONNECTIONS" "$RESPONSE_BYTES" "$SEED")"
FILES=("$DIR/decap.pcap" "$DIR/egress.pcap" "$DIR/backend.pcap")
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
RESULTS="$WORK/results.tsv"

tcpdump_sum() { for f in "$@"; do tcpdump -r "$f" -w /dev/null 2>/dev/null; done; }
tshark_fields() {
    for f in "$@"; do
        tshark -r "$f" -T fields -e frame.time_epoch -e ip.src -e ip.dst -e tcp.srcport \
            -e tcp.dstport -e tcp.seq_raw -e tcp.flags >/dev/null 2>&1
    done
}
export -f tcpdump_sum tshark_fields

echo "# $(date -u +%FT%TZ) $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "# files: $(du -bc "${FILES[@]}" | tail -1 | cut -f1) bytes in $DIR" >&2
# Warm the page cache so the first run is not the only one reading from disk.
cat "${FILES[@]}" >/dev/null

for run in $(seq "$RUNS"); do
    echo "# run $run/$RUNS" >&2
    timed "$RESULTS" "tcpdump -r F -w /dev/null (3 files, sum)" bash -c 'tcpdump_sum "$@"' _ "${FILES[@]}"
    timed "$RESULTS" "tuplecorr a b c (table)" "$BIN" -q "${FILES[@]}"
    [ -z "$BASE" ] || timed "$RESULTS" "base: tuplecorr a b c (table)" "$BASE" -q "${FILES[@]}"
    timed "$RESULTS" "tuplecorr a b c --format csv -o F" "$BIN" -q --format csv -o "$WORK/out.csv" "${FILES[@]}"
    [ -z "$BASE" ] || timed "$RESULTS" "base: tuplecorr a b c --format csv -o F" "$BASE" -q --format csv -o "$WORK/base.csv" "${FILES[@]}"
    timed "$RESULTS" "tuplecorr a b c --format json -o F" "$BIN" -q --format json -o "$WORK/out.json" "${FILES[@]}"
    [ -z "$BASE" ] || timed "$RESULTS" "base: tuplecorr a b c --format json -o F" "$BASE" -q --format json -o "$WORK/base.json" "${FILES[@]}"
    timed "$RESULTS" "tuplecorr --threads 1 a b c (table)" "$BIN" -q --threads 1 "${FILES[@]}"
done
if [ "$TSHARK" != 0 ] && command -v tshark >/dev/null; then
    echo "# tshark -T fields (once; slow)" >&2
    timed "$RESULTS" "tshark -r F -T fields ... (3 files, once)" bash -c 'tshark_fields "$@"' _ "${FILES[@]}"
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# Correctness: every request of truth.tsv mapped as generated.
"$BIN" -q --format csv -o "$WORK/out.csv" "${FILES[@]}"
if [ -n "$BASE" ]; then
    for f in csv json; do
        if cmp -s "$WORK/out.$f" "$WORK/base.$f"; then echo "# $f: identical to base" >&2
        else echo "# $f: DIFFERS from base" >&2; fi
    done
fi

python3 - "$RESULTS" "$DIR/truth.tsv" "$WORK/out.csv" "$(packets_of "$WORK/out.json")" "$SEED" <<'PY'
import csv, statistics, sys
from collections import Counter, defaultdict
results, truth_path, out_csv = sys.argv[1], sys.argv[2], sys.argv[3]
packets, seed = int(sys.argv[4]), int(sys.argv[5])
rows = defaultdict(list)
for line in open(results):
    name, sec, kb = line.rstrip("\n").split("\t")
    rows[name].append((float(sec), int(kb)))
med = {n: statistics.median(s for s, _ in v) for n, v in rows.items()}
floor = next(n for n in rows if n.startswith("tcpdump"))
main = "tuplecorr a b c (table)"
print(f"{packets} packets in 3 files\n")
print("| command | runs | median s | min–max s | peak RSS MiB | × tcpdump sum |")
print("|---|---:|---:|---:|---:|---:|")
for n, v in rows.items():
    secs = [s for s, _ in v]
    rss = max(k for _, k in v) / 1024
    print(f"| `{n}` | {len(v)} | {med[n]:.3f} | {min(secs):.3f}–{max(secs):.3f} | {rss:.1f} | {med[n] / med[floor]:.2f} |")
print()
for n in [x for x in rows if x.startswith("tuplecorr a b c")]:
    r = med[n] / med[floor]
    print(f"{n} / tcpdump-sum = {r:.2f} (target ≤ 1.5: {'met' if r <= 1.5 else 'MISSED'})")
    if "base: " + n in med:
        print(f"    base: {med['base: ' + n] / med[floor]:.2f}; this build / base = {med[n] / med['base: ' + n]:.2f}")
ts = next((n for n in rows if n.startswith("tshark")), None)
if ts:
    r = med[ts] / med[main]
    print(f"tshark / tuplecorr      = {r:.0f} (target ≥ 100: {'met' if r >= 100 else 'MISSED'})")
print(f"tuplecorr ns per packet = {med[main] / packets * 1e9:.0f}")

# truth.tsv: proto, decap_client, backend_client ('-': never reached), reply_path.
# The generator (synth::mix_connection) never gives two live requests one NAT
# tuple, so every row must be reported exactly as written; nothing is waived.
want = Counter()
for t in csv.DictReader(open(truth_path), delimiter="\t"):
    want[(t["proto"], t["decap_client"], t["backend_client"], t["reply_path"])] += 1
got = Counter()
for r in csv.DictReader(open(out_csv)):
    got[(r["proto"], r["decap_client"], r["backend_client"] or "-", r["reply_path"])] += 1
missing, extra = want - got, got - want
print(f"\ncorrectness: {sum(want.values())} requests in truth.tsv, {sum(got.values())} reported, "
      f"{sum(missing.values())} missing or wrong, {sum(extra.values())} unexpected")
for k in list(missing)[:5]:
    print("  expected:", *k)
for k in list(extra)[:5]:
    print("  reported:", *k)
sys.exit(1 if missing or extra else 0)
PY
