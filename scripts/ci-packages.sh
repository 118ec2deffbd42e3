#!/usr/bin/env bash
# CI's package checks (issue 35), run by .ci/run after the release build:
#
# 1. the .deb, packaged from the release binary already built (cargo-deb strips
#    it; no second build), installed with dpkg -i, and the README's quick start
#    run with the installed /usr/bin/tuplecorr; the man page and completions
#    are where man and the shells look;
# 2. the static musl binary without Parquet (the dist profile), static, and
#    the README's quick start run with it alone in an empty chroot, giving the
#    installed build's table byte for byte; asked for Parquet it says how to
#    get it;
# 3. the sizes the docs quote: docs/install.md's table states a bound ("at
#    most N MB", MB = 1,000,000 bytes) for the static binary, the .deb and
#    what `cargo install` installs (the release binary built above: the same
#    profile), and the README quotes the static binary's; each artefact is
#    checked against the bound the docs state, so a size the docs quote cannot
#    silently become untrue.
#
# Needs root, dpkg and chroot for the installing parts (it says so and skips
# them elsewhere); cargo-deb is installed at the version of scripts/tools.env.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools.env
source scripts/tools.env
step() { printf 'ci-packages: %s (%ss)\n' "$1" "$SECONDS"; }

# The bounds: the N of the "at most N MB" in the row of docs/install.md's
# table that starts with `| ROW |`; the README quotes the static binary's.
declare -A bound_mb
for row in "static (musl)" .deb cargo; do
  bound_mb[$row]=$(awk -v r="| $row |" 'index($0, r) == 1' docs/install.md |
    grep -oE 'at most [0-9]+(\.[0-9]+)? MB' | head -1 | grep -oE '[0-9]+(\.[0-9]+)?' || true)
  [[ -n ${bound_mb[$row]} ]] || { echo "ci-packages: docs/install.md's table has no \"at most N MB\" in its \"$row\" row" >&2; exit 1; }
done
grep -qF "at most ${bound_mb[static (musl)]} MB" README.md ||
  { echo "ci-packages: README.md does not quote the static binary's bound of docs/install.md (at most ${bound_mb[static (musl)]} MB)" >&2; exit 1; }
# within FILE ROW: FILE's size against the bound docs/install.md states for ROW.
within() {
  local size limit
  size=$(stat -c %s "$1")
  limit=$(awk -v m="${bound_mb[$2]}" 'BEGIN { printf "%d", m * 1000000 }')
  if ((size > limit)); then
    echo "ci-packages: $1 is $size bytes; docs/install.md says \"$2\" is at most ${bound_mb[$2]} MB ($limit bytes): make it smaller or correct the docs (and the README)" >&2
    exit 1
  fi
  step "$1: $size bytes, at most ${bound_mb[$2]} MB as docs/install.md states"
}

# The README's quick start: the `tuplecorr ...` lines between its markers.
mapfile -t quick < <(sed -n '/^<!-- quick-start -->$/,/^<!-- \/quick-start -->$/p' README.md | sed -n 's/^tuplecorr //p')
((${#quick[@]} >= 1)) || { echo "ci-packages: README.md has no quick start between <!-- quick-start --> markers" >&2; exit 1; }

# Runs the quick start with binary $1 in folder $2 (holding testdata/), or,
# with $3 = chroot, inside the chroot $2 (the binary's path is inside it).
quick_start() {
  local bin=$1 dir=$2 how=${3:-} line out=$2/quick-start.out
  : > "$out"
  for line in "${quick[@]}"; do
    read -ra args <<< "$line"
    if [[ $how == chroot ]]; then
      chroot "$dir" "$bin" "${args[@]}" >> "$out"
    else
      (cd "$dir" && "$bin" "${args[@]}") >> "$out"
    fi
  done
  grep -q "5 requests across decap → egress → backend" "$out" || { echo "ci-packages: the quick start with $bin printed:" >&2; cat "$out" >&2; exit 1; }
  [[ -s $dir/report.html ]] || { echo "ci-packages: the quick start with $bin wrote no report.html" >&2; exit 1; }
}

can_install=1
[[ $(id -u) == 0 ]] && command -v dpkg >/dev/null && command -v chroot >/dev/null || can_install=0

# 1. The .deb.
if [[ $(cargo deb --version 2>/dev/null | awk '{print $2}') != "$CARGO_DEB_VERSION" ]]; then
  echo "ci-packages: installing cargo-deb $CARGO_DEB_VERSION"
  cargo install -q cargo-deb --locked --version "$CARGO_DEB_VERSION"
  step "cargo-deb installed"
fi
[[ -x target/release/tuplecorr ]] || cargo build --release -q
deb=$(PROFILE=release bash scripts/deb.sh --no-build)
step "built $deb ($(stat -c %s "$deb") bytes)"
within "$deb" .deb
within target/release/tuplecorr cargo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/installed" "$work/root/testdata/lab"
ln -s "$PWD/testdata" "$work/installed/testdata"
if ((can_install)); then
  dpkg -i "$deb" >/dev/null
  step "installed with dpkg -i"
  [[ -x /usr/bin/tuplecorr ]]
  /usr/bin/tuplecorr --version
  quick_start /usr/bin/tuplecorr "$work/installed"
  if command -v man >/dev/null; then
    man -w tuplecorr
  fi
  for f in /usr/share/man/man1/tuplecorr.1.gz /usr/share/bash-completion/completions/tuplecorr \
           /usr/share/zsh/vendor-completions/_tuplecorr /usr/share/fish/vendor_completions.d/tuplecorr.fish; do
    [[ -s $f ]] || { echo "ci-packages: the .deb did not install $f" >&2; exit 1; }
  done
  zcat /usr/share/man/man1/tuplecorr.1.gz | grep -q '^\.TH tuplecorr 1' || { echo "ci-packages: the man page is not a man page" >&2; exit 1; }
  step "the installed package runs the README's quick start; man page and completions in place"
else
  echo "ci-packages: not root with dpkg and chroot: the .deb is built but not installed; the quick start runs with the release binary"
  quick_start "$PWD/target/release/tuplecorr" "$work/installed"
fi

# 2. The static binary.
rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-musl || rustup target add x86_64-unknown-linux-musl
cargo build --locked -q --profile dist --target x86_64-unknown-linux-musl --no-default-features --bin tuplecorr
musl=target/x86_64-unknown-linux-musl/dist/tuplecorr
size=$(stat -c %s "$musl")
within "$musl" "static (musl)"
ldd "$musl" 2>&1 | grep -Eq 'statically linked|not a dynamic executable' || { echo "ci-packages: $musl is not static:" >&2; ldd "$musl" >&2; exit 1; }
if readelf -l "$musl" 2>/dev/null | grep -q INTERP; then echo "ci-packages: $musl asks for an interpreter" >&2; exit 1; fi
"$musl" --version | grep -q 'features: none)' || { echo "ci-packages: the slim build has features" >&2; exit 1; }
cp "$musl" "$work/root/tuplecorr"
cp -r testdata/lab/reject "$work/root/testdata/lab/"
if ((can_install)); then
  # Alone in an empty root: no /lib, no /etc, no /usr/share/zoneinfo, no /dev.
  quick_start /tuplecorr "$work/root" chroot
  want=$(cd "$work/installed" && /usr/bin/tuplecorr --color never testdata/lab/reject/decap.pcap testdata/lab/reject/egress.pcap testdata/lab/reject/backend.pcap)
  got=$(chroot "$work/root" /tuplecorr --color never testdata/lab/reject/decap.pcap testdata/lab/reject/egress.pcap testdata/lab/reject/backend.pcap)
  [[ $got == "$want" ]] || { echo "ci-packages: the static binary's table differs from the installed one's" >&2; diff <(echo "$want") <(echo "$got") >&2; exit 1; }
  set +e
  said=$(chroot "$work/root" /tuplecorr -o /r.parquet testdata/lab/reject/decap.pcap testdata/lab/reject/egress.pcap 2>&1)
  code=$?
  set -e
  [[ $code == 2 && $said == *"--features parquet"* ]] || { echo "ci-packages: the slim build asked for Parquet exited $code: $said" >&2; exit 1; }
  # A Parquet report given to compare: the slim build says it reads none.
  (cd "$work/installed" && /usr/bin/tuplecorr -o "$work/root/r.parquet" testdata/lab/reject/decap.pcap testdata/lab/reject/egress.pcap)
  set +e
  said=$(chroot "$work/root" /tuplecorr compare /r.parquet /r.parquet 2>&1)
  code=$?
  set -e
  [[ $code == 2 && $said == *"reads no Parquet"* ]] || { echo "ci-packages: the slim build's compare given Parquet exited $code: $said" >&2; exit 1; }
  step "the static binary runs the quick start alone in an empty chroot, as the package does"
else
  quick_start "$PWD/$musl" "$work/installed"
fi
echo "ci-packages: ok: $(basename "$deb"), static binary $size bytes (${SECONDS}s)"
