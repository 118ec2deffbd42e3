#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each, one after another, one job at a
# time (the machine is shared). Exits non-zero on the first crash and prints the
# artifact path. Needs cargo-fuzz (`cargo install cargo-fuzz`); on a stable
# toolchain RUSTC_BOOTSTRAP=1 lets it use the sanitizer flags it needs.
#
#     scripts/fuzz.sh [SECONDS] [TARGET...]      default: 60 s each, all targets
#
# The working corpus (fuzz/corpus/<target>/) starts from the committed seeds in
# fuzz/seeds/<target>/ and is not committed; crashes land in fuzz/artifacts/<target>/.
# A crash: reproduce it with `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET ARTIFACT`
# (in fuzz/), fix it in the library, copy the input to testdata/regress/ and add
# a test named after what it exercises to tests/integration/regression.rs.
# Seeds are rebuilt with scripts/fuzz-seeds.py.
# Memory: one allocation over 512 MiB is a crash (-malloc_limit_mb: a length
# read from the input must never size an allocation), and so is the whole
# process past 1 GiB. ASan keeps freed memory in a quarantine to catch a use
# after free (none is possible here: #![forbid(unsafe_code)]); its default
# 256 MiB grew why_inputs past 500 MiB in a minute with no input at fault
# (a 512 MiB limit failed CI), so it is 16 MiB here (peak 180 MiB).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(read_capture decode_packet pipeline why_inputs)
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is not installed (cargo install cargo-fuzz)" >&2
    exit 2
fi
export RUSTC_BOOTSTRAP=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=16}"
status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    echo "fuzz.sh: $t for ${secs}s" >&2
    before=$(ls "artifacts/$t" | wc -l)
    if ! cargo fuzz run "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" -malloc_limit_mb=512 -rss_limit_mb=1024 -max_len=65536 \
        -print_final_stats=1 2>"artifacts/$t.log"; then
        status=1
    fi
    after=$(ls "artifacts/$t" | wc -l)
    if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
        echo "fuzz.sh: $t crashed; artifacts:" >&2
        ls -t "artifacts/$t" | head -5 | sed "s|^|  fuzz/artifacts/$t/|" >&2
        grep -E 'panicked|ERROR: libFuzzer|SUMMARY' "artifacts/$t.log" | head -5 >&2 || true
        exit 1
    fi
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "artifacts/$t.log" | sed "s|^|  $t |" >&2 || true
done
exit $status
