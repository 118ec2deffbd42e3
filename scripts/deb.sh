#!/usr/bin/env bash
# Builds the Debian package: the binary, the man page and the bash, zsh and
# fish completions (written by the binary itself: `tuplecorr generate`).
#
#   scripts/deb.sh                      # builds the dist profile (LTO, stripped), then packages it
#   PROFILE=release scripts/deb.sh --no-build   # packages target/release/tuplecorr as built (CI)
#
# Needs cargo-deb (the version pinned in scripts/tools.env:
# `cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION"`).
# Writes target/debian/tuplecorr_<version>-1_<arch>.deb and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-dist}
build=1
for arg in "$@"; do
  case $arg in
    --no-build) build=0 ;;
    *) echo "usage: [PROFILE=dist|release] scripts/deb.sh [--no-build]" >&2; exit 2 ;;
  esac
done
if ! command -v cargo-deb >/dev/null; then
  # shellcheck source=tools.env
  source scripts/tools.env
  echo "deb: cargo-deb is missing: cargo install cargo-deb --locked --version $CARGO_DEB_VERSION" >&2
  exit 2
fi
if ((build)); then
  cargo build --locked --profile "$profile" --bin tuplecorr
fi
bin=target/$profile/tuplecorr
[[ -x $bin ]] || { echo "deb: $bin is not built (drop --no-build)" >&2; exit 2; }
assets=target/deb-assets
mkdir -p "$assets"
"$bin" generate man > "$assets/tuplecorr.1"
"$bin" generate bash > "$assets/tuplecorr.bash"
"$bin" generate zsh > "$assets/_tuplecorr"
"$bin" generate fish > "$assets/tuplecorr.fish"
rm -f target/debian/tuplecorr_*.deb
cargo deb --quiet --no-build --locked --profile "$profile" --strip --no-dbgsym --no-separate-debug-symbols \
  --output target/debian/ >/dev/null
ls target/debian/tuplecorr_*.deb
