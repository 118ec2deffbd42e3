# shellcheck shell=bash disable=SC2034  # variables are used by the sourcing scripts
# Shared helpers of scripts/bench.sh and scripts/scale.sh (sourced, not run).
# Needs: cargo, python3, GNU time (/usr/bin/time; apt-get install -y time).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CACHE:-$ROOT/target/bench-cache}"
BIN="${BIN:-$ROOT/target/release/tuplecorr}"  # override to benchmark another build
SYNTH="$ROOT/target/release/examples/synth_captures"
GNU_TIME=/usr/bin/time

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "bench: $1 not found${2:+ ($2)}" >&2; exit 2; }
}

# Builds the binary and the generator once (a no-op when they are up to date).
build() {
    [ -x "$GNU_TIME" ] || { echo "bench: $GNU_TIME missing (apt-get install -y time)" >&2; exit 2; }
    need python3
    (cd "$ROOT" && cargo build --release --quiet --bin tuplecorr --example synth_captures) || exit 2
}

# gen CONNECTIONS RESPONSE_BYTES SEED -> prints the folder holding decap/egress/backend.pcap
# and truth.tsv, generating it only when absent (a .done marker guards half-written sets).
gen() {
    local dir="$CACHE/c$1-r$2-s$3"
    if [ ! -f "$dir/.done" ]; then
        rm -rf "$dir" && mkdir -p "$dir"
        echo "generating $dir ..." >&2
        "$SYNTH" "$dir" "$1" "$2" "$3" >&2 || exit 2
        touch "$dir/.done"
    fi
    echo "$dir"
}

# timed OUT NAME CMD... : runs CMD under GNU time, appends "NAME<TAB>seconds<TAB>maxrss_kb"
# to OUT. Wall time from date +%s%N around it (GNU time's %e has 10 ms steps,
# 3-5% of a run here; the fork of time itself is in both, ~1 ms). CMD's stdout
# goes to /dev/null; a failing CMD stops the script.
timed() {
    local out="$1" name="$2"; shift 2
    local t t0 t1; t="$(mktemp)"
    t0="$(date +%s%N)"
    if ! "$GNU_TIME" -f "%M" -o "$t" "$@" >/dev/null 2>"$t.err"; then
        echo "bench: '$name' failed:" >&2; cat "$t.err" >&2; rm -f "$t" "$t.err"; exit 1
    fi
    t1="$(date +%s%N)"
    printf '%s\t%s\t%s\n' "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')" \
        "$(tail -1 "$t")" >>"$out"
    rm -f "$t" "$t.err"
}

# Total packets of a capture set, from tuplecorr's JSON report.
packets_of() {
    python3 -c 'import json,sys; print(sum(c["packets"] for c in json.load(open(sys.argv[1]))["captures"]))' "$1"
}
