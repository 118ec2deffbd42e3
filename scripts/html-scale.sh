#!/usr/bin/env bash
# The HTML report at scale (issue 14): a generated set of N connections
# (default 50,000), its HTML report, the bytes per request, and the time
# headless Chromium takes to open it (navigation start until the page's
# script has drawn the table; the page records it in <body data-ready-ms>).
#   scripts/html-scale.sh [CONNECTIONS] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50000}
work=${2:-$(mktemp -d)}
browser=${TUPLECORR_CHROMIUM:-chromium}
command -v "$browser" >/dev/null || { echo "html-scale: skipped, $browser is not installed"; exit 0; }
cargo build --release -q --bin tuplecorr --example synth_captures
[[ -f $work/decap.pcap ]] || target/release/examples/synth_captures "$work" "$n" 2000 >/dev/null
target/release/tuplecorr -q "$work/decap.pcap" "$work/egress.pcap" "$work/backend.pcap" -o "$work/report.html"
target/release/tuplecorr -q "$work/decap.pcap" "$work/egress.pcap" "$work/backend.pcap" -o "$work/report.json"
requests=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['requests']))" "$work/report.json")
bytes=$(stat -c %s "$work/report.html")
echo "requests: $requests  html: $bytes bytes  per request: $((bytes / requests)) bytes"
for run in 1 2 3; do
  start=$(date +%s%N)
  dom=$(timeout 300 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
        --virtual-time-budget=60000 --dump-dom "file://$work/report.html#request=$requests" 2>/dev/null)
  wall=$(( ($(date +%s%N) - start) / 1000000 ))
  ready=$(grep -o 'data-ready-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo "?")
  count=$(grep -o '<span id="count">[^<]*' <<<"$dom" | sed 's/.*>//')
  ladder=$(grep -c '<svg class="ladder"' <<<"$dom" || true)
  echo "run $run: page drawn ${ready} ms after navigation start; chromium process ${wall} ms in all; table $count; ladder shown: $ladder"
done
