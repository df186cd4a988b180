#!/usr/bin/env bash
# Checks what scripts/package.sh wrote into target/dist/, as a user would meet it:
#   - the tarball's binary, unpacked under /tmp and run from /tmp: trains the spiral, opens a
#     shipped data set;
#   - the .deb (as root): installed with dpkg, `batchscope` in PATH, its desktop entry valid, the
#     installed binary trains and opens a shipped data set, then removed again;
#   - the Windows build under Wine: scripts/wine-check.sh (the test script runs the same checks
#     on a debug cross build).
# Each check says what ran; the script exits non-zero at the first that fails. A tool that
# cannot be had (Wine, Xvfb) is named, and its checks are said to be skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(bash scripts/version.sh)
dist=$PWD/target/dist
out=$dist/check
mkdir -p "$out"
work=$(mktemp -d /tmp/batchscope-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/run}
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

ran() { echo "ok: $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

# A binary trains the spiral and opens a shipped data set, run from /tmp.
trains_from_tmp() {
    local bin=$1 what=$2
    (cd /tmp && "$bin" train --dataset spiral --device cpu --steps 200 --json > "$work/spiral.json") \
        || fail "$what: train --dataset spiral"
    grep -q '"summary":true' "$work/spiral.json" \
        || fail "$what: no summary from training the spiral"
    (cd /tmp && "$bin" train --dataset mnist --device cpu --steps 5 > "$work/mnist.txt") \
        || fail "$what: train --dataset mnist"
    ran "$what: trains the spiral and the shipped MNIST from /tmp"
}

echo "==> the tarball"
tar -xzf "$dist/batchscope-$version-x86_64-linux.tar.gz" -C "$work"
tarball_bin="$work/batchscope-$version-x86_64-linux/batchscope"
"$tarball_bin" --version | grep -q "$version" || fail "tarball: --version"
trains_from_tmp "$tarball_bin" "tarball"

echo "==> the .deb"
deb="$dist/batchscope_${version}_amd64.deb"
if [ "$(id -u)" = 0 ]; then
    dpkg -s desktop-file-utils >/dev/null 2>&1 \
        || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq desktop-file-utils >/dev/null
    dpkg -i "$deb" >/dev/null
    [ "$(command -v batchscope)" = /usr/bin/batchscope ] || fail ".deb: batchscope is not in PATH"
    desktop-file-validate /usr/share/applications/batchscope.desktop || fail ".deb: desktop entry"
    [ -f /usr/share/icons/hicolor/scalable/apps/batchscope.svg ] || fail ".deb: no icon"
    [ -f /usr/share/mime/packages/batchscope.xml ] || fail ".deb: no MIME type"
    ran ".deb: installed, batchscope in PATH, desktop entry valid, icon and MIME type in place"
    trains_from_tmp /usr/bin/batchscope ".deb"
    dpkg -r batchscope >/dev/null
    ran ".deb: removed again"
else
    dpkg-deb --info "$deb" >/dev/null || fail ".deb: not a Debian package"
    echo "skipped: installing the .deb needs root (dpkg-deb reads it)"
fi

echo "==> Windows under Wine"
zip="$dist/batchscope-$version-x86_64-windows.zip"
if [ ! -f "$zip" ]; then
    echo "skipped: no Windows build ($zip); scripts/package.sh without --linux-only makes it"
    exit 0
fi
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$work"
bash scripts/wine-check.sh "$work/batchscope-$version-x86_64-windows/batchscope.exe" "$out"
