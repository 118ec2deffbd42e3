#!/usr/bin/env bash
# Mutation testing of the matching and verdict code (src/correlate/, src/verdict/)
# with cargo-mutants: every mutant is a small wrong change to that code; a
# mutant is caught when a test fails on it, missed when every test still passes.
# Prints caught/missed per file and the survivors. Configuration (files, test
# binaries, and the equivalent mutants excluded with their reasons):
# .cargo/mutants.toml.
#
#     scripts/mutants.sh [--file GLOB]... [--min PCT]            whole sweep
#     scripts/mutants.sh --in-diff [BASE]                        CI: changed code only
#     scripts/mutants.sh --summary DIR                           re-print a finished run
#
#   --file GLOB     only these files (repeatable; default: src/correlate/*.rs src/verdict/*.rs)
#   --min PCT       exit 1 when a file catches fewer than PCT % of its viable
#                   mutants (default 0: report only)
#   --in-diff BASE  only mutants in lines changed since BASE (default: the commit
#                   of the last whole sweep, recorded in .cargo/mutants-baseline,
#                   so a merge of several commits is checked whole; else the merge
#                   base with main, else the previous commit); exit 1 on any
#                   survivor; skipped when no src/correlate/ or src/verdict/ file changed
#
# Environment: MUTANTS_JOBS (default 1: the machine is shared), MUTANTS_TIMEOUT
# (seconds per mutant's tests, default 180), MUTANTS_BUDGET (seconds for the
# whole run, default 0 = none; --in-diff: 900), MUTANTS_OUT (output folder,
# default target/mutants-out; each run replaces <MUTANTS_OUT>/mutants.out).
# When the budget runs out, the mutants tested so far are reported and the
# untested ones are counted; a survivor among them still fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# The cargo-mutants version is pinned with CI's other tools (scripts/bump-tools.sh).
# shellcheck source=tools.env
source scripts/tools.env
VERSION=$CARGO_MUTANTS_VERSION
mode=sweep base="" min=0 summary_dir=""
files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --file) files+=("$2"); shift 2 ;;
        --min) min="$2"; shift 2 ;;
        --in-diff)
            mode=diff
            if [ $# -gt 1 ] && [[ "$2" != --* ]]; then base="$2"; shift; fi
            shift ;;
        --summary) mode=summary summary_dir="$2"; shift 2 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "mutants.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
out="${MUTANTS_OUT:-target/mutants-out}"

# Per file: caught (timeouts count as caught: the tests noticed), missed,
# unviable (does not build; not counted), score; then the survivors.
summary() {
    local dir="$1/mutants.out" below=0
    if [ ! -d "$dir" ]; then
        [ "$mode" = diff ] && { echo "mutants.sh: no mutants in the changed lines"; return 0; }
        echo "mutants.sh: no results in $dir" >&2
        return 2
    fi
    for f in caught missed timeout unviable; do touch "$dir/$f.txt"; done
    echo "file                                caught  missed  unviable  score"
    local total_c=0 total_m=0
    while read -r file; do
        # (grep exits 1 when a file has no caught mutant, e.g. only unviable ones.)
        c=$({ grep -c "^$file:" "$dir/caught.txt" "$dir/timeout.txt" || true; } | awk -F: '{s+=$NF} END {print s+0}')
        m=$(grep -c "^$file:" "$dir/missed.txt" || true)
        u=$(grep -c "^$file:" "$dir/unviable.txt" || true)
        total_c=$((total_c + c)) total_m=$((total_m + m))
        if [ $((c + m)) -gt 0 ]; then
            pct=$((100 * c / (c + m)))
            [ "$pct" -lt "$min" ] && below=1
            printf '%-35s %6d  %6d  %8d  %4d%%\n' "$file" "$c" "$m" "$u" "$pct"
        else
            printf '%-35s %6d  %6d  %8d     -\n' "$file" "$c" "$m" "$u"
        fi
    done < <(cat "$dir"/{caught,missed,timeout,unviable}.txt | cut -d: -f1 | sort -u)
    if [ $((total_c + total_m)) -gt 0 ]; then
        printf '%-35s %6d  %6d            %4d%%\n' "total" "$total_c" "$total_m" $((100 * total_c / (total_c + total_m)))
    fi
    if [ -s "$dir/missed.txt" ]; then
        echo "survivors (missed):"
        sed 's/^/  /' "$dir/missed.txt"
    fi
    if [ -s "$dir/timeout.txt" ]; then
        echo "timed out (counted as caught):"
        sed 's/^/  /' "$dir/timeout.txt"
    fi
    [ "$below" -eq 0 ] || { echo "mutants.sh: a file is below ${min}%" >&2; return 1; }
    [ "$mode" != diff ] || [ ! -s "$dir/missed.txt" ] || { echo "mutants.sh: new survivors in changed code" >&2; return 1; }
}

if [ "$mode" = summary ]; then
    summary "$summary_dir"
    exit $?
fi

if [ "$(cargo mutants --version 2>/dev/null | awk '{print $2}')" != "$VERSION" ]; then
    echo "mutants.sh: installing cargo-mutants $VERSION" >&2
    cargo install -q cargo-mutants --locked --version "$VERSION"
fi

# The code whose mistakes change a verdict (not in .cargo/mutants.toml: there
# its globs would be added to any --file given here).
[ ${#files[@]} -gt 0 ] || files=("src/correlate/*.rs" "src/verdict/*.rs")
pick=()    # which mutants
for f in "${files[@]}"; do pick+=(--file "$f"); done
budget="${MUTANTS_BUDGET:-0}"

if [ "$mode" = diff ]; then
    budget="${MUTANTS_BUDGET:-900}"
    if [ -z "$base" ] && [ -f .cargo/mutants-baseline ]; then
        # the first word of the first line that is not a comment
        base=$(grep -v '^#' .cargo/mutants-baseline | awk 'NF {print $1; exit}')
        if ! git merge-base --is-ancestor "$base" HEAD 2>/dev/null; then
            echo "mutants.sh: baseline $base in .cargo/mutants-baseline is not an ancestor of HEAD; ignored" >&2
            base=""
        fi
    fi
    if [ -z "$base" ]; then
        base=$(git merge-base HEAD main 2>/dev/null || true)
        if [ -z "$base" ] || [ "$base" = "$(git rev-parse HEAD)" ]; then
            base=$(git rev-parse HEAD~1 2>/dev/null || true)
        fi
    fi
    [ -n "$base" ] || { echo "mutants.sh: no base commit to diff against; skipped"; exit 0; }
    mkdir -p "$out"
    diff_file="$out/changes.diff"
    git diff "$base" -- src/correlate src/verdict >"$diff_file"
    if [ ! -s "$diff_file" ]; then
        echo "mutants.sh: no change to src/correlate/ or src/verdict/ since $(git rev-parse --short "$base"); skipped"
        exit 0
    fi
    echo "mutants.sh: mutants in code changed since $(git rev-parse --short "$base")" >&2
    pick+=(--in-diff "$diff_file")
fi
args=(--jobs "${MUTANTS_JOBS:-1}" --timeout "${MUTANTS_TIMEOUT:-180}" --no-shuffle
      -o "$out" "${pick[@]}")

mkdir -p "$out"
rm -rf "$out/mutants.out" "$out/mutants.out.old"    # no stale results
echo "mutants.sh: cargo mutants ${args[*]}" >&2
start=$(date +%s)
status=0
if [ "$budget" -gt 0 ]; then
    timeout --signal=INT --kill-after=60 "$budget" cargo mutants "${args[@]}" || status=$?
else
    cargo mutants "${args[@]}" || status=$?
fi
elapsed=$(( $(date +%s) - start ))
echo "mutants.sh: $(( elapsed / 60 )) min" >&2
# cargo-mutants exits 2 when mutants were missed, 3 on timeouts, 4 when the
# unmutated tree fails its tests; the summary decides for 2 and 3. Stopped by
# the budget it exits 124/130, or 5 when the interrupt lands inside a
# mutant's build or tests ("scenario execution internal error: interrupted").
if [ "$budget" -gt 0 ] && [ "$elapsed" -ge "$budget" ] && [ "$status" = 5 ]; then
    status=130
fi
case "$status" in
    0|2|3) ;;
    124|130)
        total=$(cargo mutants --list "${pick[@]}" 2>/dev/null | wc -l)
        done_n=$(cat "$out"/mutants.out/{caught,missed,timeout,unviable}.txt 2>/dev/null | wc -l)
        echo "mutants.sh: budget of ${budget}s used up: $done_n of $total mutants tested" >&2 ;;
    *) echo "mutants.sh: cargo mutants failed (status $status); see $out/mutants.out/debug.log" >&2; exit "$status" ;;
esac
summary "$out"
