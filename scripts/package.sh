#!/usr/bin/env bash
# The installable builds, into target/dist/ (version from Cargo.toml):
#   batchscope-VERSION-x86_64-linux.tar.gz    the binary, licences, a short README; runs from any folder
#   batchscope_VERSION_amd64.deb              made by cargo-deb ([package.metadata.deb] in Cargo.toml)
#   batchscope-VERSION-x86_64-windows.zip     cross-built for x86_64-pc-windows-gnu with mingw-w64
#   SHA256SUMS
# Everything the app reads at run time is compiled into the binary, so each runs wherever it is
# put. Missing tools are installed where this runs as root (Debian's mingw-w64, the Windows
# target, cargo-deb from crates.io); otherwise the script names them and stops.
#
# Usage: scripts/package.sh [--linux-only]
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(bash scripts/version.sh)
dist=target/dist
windows=x86_64-pc-windows-gnu
linux_only=false
[ "${1:-}" = "--linux-only" ] && linux_only=true

need_apt() {
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    ((${#missing[@]})) || return 0
    if [ "$(id -u)" = 0 ]; then
        echo "==> installing ${missing[*]}"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "error: needs ${missing[*]}: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
}

# The distributed binaries carry no debug information (the release profile keeps line tables
# for the benchmarks' profilers).
export CARGO_PROFILE_RELEASE_STRIP=true

rm -rf "$dist"
mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# What every archive carries beside the binary.
common() {
    local into=$1
    mkdir -p "$into/licences"
    cp LICENSE-MIT LICENSE-APACHE "$into/"
    mkdir -p "$into/man"
    cp docs/man/*.1 "$into/man/"
    sed "s/VERSION/$version/" packaging/README.txt > "$into/README.txt"
    cp assets/fonts/OFL.txt "$into/licences/NotoSansSC-OFL.txt"
    for source in datasets/*/SOURCE.md; do
        cp "$source" "$into/licences/dataset-$(basename "$(dirname "$source")").md"
    done
}

echo "==> Linux (x86_64) release build"
cargo build --release --locked
linux="batchscope-$version-x86_64-linux"
mkdir -p "$stage/$linux"
cp target/release/batchscope "$stage/$linux/"
common "$stage/$linux"
tar -C "$stage" -czf "$dist/$linux.tar.gz" "$linux"

echo "==> .deb (cargo-deb)"
if ! cargo deb --version >/dev/null 2>&1; then
    echo "==> installing cargo-deb from crates.io"
    cargo install cargo-deb --locked --quiet
fi
cargo deb --no-build --no-strip --output "$dist/batchscope_${version}_amd64.deb" >/dev/null

if ! $linux_only; then
    echo "==> Windows (x86_64) release build, cross-compiled with mingw-w64"
    need_apt mingw-w64
    rustup target list --installed | grep -qx "$windows" || rustup target add "$windows"
    cargo build --release --locked --target "$windows"
    win="batchscope-$version-x86_64-windows"
    mkdir -p "$stage/$win"
    cp "target/$windows/release/batchscope.exe" "$stage/$win/"
    common "$stage/$win"
    # Windows users read text files in Notepad: CRLF line ends.
    for f in "$stage/$win/README.txt" "$stage/$win/LICENSE-MIT" "$stage/$win/LICENSE-APACHE"; do
        sed -i 's/$/\r/' "$f"
    done
    (cd "$stage" && python3 -c 'import shutil, sys; shutil.make_archive(sys.argv[1], "zip", ".", sys.argv[2])' \
        "$OLDPWD/$dist/$win" "$win")
fi

(cd "$dist" && sha256sum -- *.tar.gz *.deb *.zip 2>/dev/null > SHA256SUMS)
echo "==> target/dist:"
ls -l "$dist"
