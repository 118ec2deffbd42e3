#!/usr/bin/env bash
# Shows the pinned versions of CI's tools (scripts/tools.env) beside the latest
# each registry offers, and rewrites pins only when asked:
#
#   scripts/bump-tools.sh                       # show pinned and latest
#   scripts/bump-tools.sh --write               # pin every tool to its latest
#   scripts/bump-tools.sh --write cargo-deb     # pin only these to their latest
#   scripts/bump-tools.sh --write duckdb=2.0.1  # pin to a given version
#
# Cargo tools are looked up with `cargo info` (crates.io), Python packages
# with `pip index versions` (PyPI). Review `git diff scripts/tools.env`, run
# .ci/run, and commit the bump on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
env_file=scripts/tools.env

# tool name -> its variable in tools.env, and its registry
declare -A var=([cargo-mutants]=CARGO_MUTANTS_VERSION [cargo-fuzz]=CARGO_FUZZ_VERSION
                [cargo-deb]=CARGO_DEB_VERSION [duckdb]=DUCKDB_VERSION [pyspark]=PYSPARK_VERSION)
declare -A registry=([cargo-mutants]=crates [cargo-fuzz]=crates [cargo-deb]=crates
                     [duckdb]=pypi [pyspark]=pypi)
order=(cargo-mutants cargo-fuzz cargo-deb duckdb pyspark)

pinned() { sed -n "s/^$1=//p" "$env_file"; }

latest() {
  case ${registry[$1]} in
    crates) (cd "${TMPDIR:-/tmp}" && cargo info --registry crates-io "$1" 2>/dev/null) | sed -n 's/^version: *\([^ ]*\).*/\1/p' | head -1 ;;
    pypi) python3 -m pip index versions "$1" 2>/dev/null | sed -n "s/^$1 (\(.*\))$/\1/p" | head -1 ;;
  esac
}

write=0
wanted=()
for arg in "$@"; do
  case $arg in
    --write) write=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) wanted+=("$arg") ;;
  esac
done
((${#wanted[@]})) || wanted=("${order[@]}")

printf '%-14s %-10s %-10s\n' tool pinned latest
for want in "${wanted[@]}"; do
  name=${want%%=*}
  [[ -n ${var[$name]:-} ]] || { echo "bump-tools: unknown tool $name (known: ${order[*]})" >&2; exit 2; }
  old=$(pinned "${var[$name]}")
  if [[ $want == *=* ]]; then new=${want#*=}; else new=$(latest "$name"); fi
  printf '%-14s %-10s %-10s\n' "$name" "$old" "${new:-?}"
  if ((write)); then
    [[ -n $new ]] || { echo "bump-tools: no version found for $name; pin it by hand: $name=VERSION" >&2; exit 1; }
    [[ $new =~ ^[0-9][0-9A-Za-z.+-]*$ ]] || { echo "bump-tools: $name: '$new' is not a version" >&2; exit 1; }
    sed -i "s/^${var[$name]}=.*/${var[$name]}=$new/" "$env_file"
  fi
done
if ((write)); then
  echo "rewrote $env_file:"
  git --no-pager diff --stat -- "$env_file" || true
fi
