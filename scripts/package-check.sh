#!/usr/bin/env bash
# Checks what scripts/package.sh wrote into target/dist/, as a user would meet it:
#   - the tarball's binary, unpacked under /tmp and run from /tmp: trains the spiral, opens a
#     shipped data set;
#   - the .deb (as root): installed with dpkg, `batchscope` in PATH, its desktop entry valid, the
#     installed binary trains and opens a shipped data set, then removed again;
#   - the Windows build under Wine: --version, devices --json, training on the CPU, a CSV given as
#     a Windows path, lessons --verify --no-gpu, training on the GPU where Wine's Vulkan reaches
#     lavapipe, and the window under Xvfb (a screenshot in target/dist/check/).
# Each check says what ran; the script exits non-zero at the first that fails. A tool that
# cannot be had (Wine, Xvfb) is named, and its checks are said to be skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
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
if ! command -v wine >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        dpkg --add-architecture i386 2>/dev/null || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine wine64 >/dev/null
    else
        echo "skipped: Wine is not installed (sudo apt-get install wine64)"
        exit 0
    fi
fi
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$work"
exe="$work/batchscope-$version-x86_64-windows/batchscope.exe"
export WINEPREFIX=$work/wine WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
# Wine reaches Vulkan (and so lavapipe) and draws windows only with an X display.
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null 2>&1; then
    display=:$((90 + RANDOM % 100))
    Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 &
    xvfb_pid=$!
    trap 'kill $xvfb_pid 2>/dev/null; rm -rf "$work"' EXIT
    export DISPLAY=$display
    sleep 2
fi
timeout 300 wineboot --init >/dev/null 2>&1 || true
system32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -f "$system32/bcryptprimitives.dll" ]; then
    # Rust's standard library imports ProcessPrng from bcryptprimitives.dll (Windows 10 and
    # later have it); Wine before 9.0 does not, so the prefix gets a stand-in built here.
    dpkg -s mingw-w64 >/dev/null 2>&1 || fail "Wine $(wine --version) lacks bcryptprimitives.dll and mingw-w64 is not here to build its stand-in"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
        scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -ladvapi32
    echo "note: $(wine --version) lacks bcryptprimitives.dll (Wine 9 has it): the prefix has a" \
        "stand-in that forwards ProcessPrng to RtlGenRandom (scripts/wine/)"
fi
wine64() { timeout 600 wine "$exe" "$@"; }
wine64 --version > "$work/version.txt" 2>/dev/null || fail "Wine: --version"
grep -q "$version" "$work/version.txt" && grep -q "windows" "$work/version.txt" \
    || fail "Wine: --version says $(cat "$work/version.txt")"
ran "Wine: --version: $(head -n 1 "$work/version.txt" | tr -d '\r')"
wine64 devices --json > "$work/devices.json" 2>/dev/null || fail "Wine: devices --json"
devices=$(tr -d '\r' < "$work/devices.json")
ran "Wine: devices --json ($(grep -o '"name":"[^"]*"' <<< "$devices" | head -n 3 | tr '\n' ' '))"
wine64 train --dataset spiral --device cpu --steps 200 --json > "$work/wine-train.json" 2>/dev/null \
    || fail "Wine: train on the CPU"
ran "Wine: train --dataset spiral --device cpu --steps 200 --json"
cp datasets/iris/iris.csv "$work/iris.csv"
windows_path="Z:$(echo "$work/iris.csv" | tr / '\\')"
wine64 data inspect "$windows_path" > "$work/inspect.txt" 2>/dev/null \
    || fail "Wine: data inspect $windows_path"
grep -q "rows: 150" "$work/inspect.txt" || fail "Wine: data inspect said $(cat "$work/inspect.txt")"
ran "Wine: data inspect $windows_path (150 rows)"
wine64 lessons --verify --no-gpu > "$work/lessons.txt" 2>/dev/null || fail "Wine: lessons --verify --no-gpu"
ran "Wine: lessons --verify --no-gpu"
# Wine's DirectX 12 (vkd3d) shows a made-up "NVIDIA GeForce GTX 470" whose device is lost when
# opened; the GPU checks take Wine's Vulkan, which reaches lavapipe (WGPU_BACKEND, which both the
# training and the window honour).
if grep -q '"backend":"Vulkan"[^}]*"usable_for_training":true' <<< "$devices"; then
    WGPU_BACKEND=vulkan wine64 train --dataset spiral --device gpu --steps 50 --json > "$work/wine-gpu.json" 2>/dev/null \
        || fail "Wine: train --device gpu on the Vulkan adapter it lists"
    grep -q '"summary":true' "$work/wine-gpu.json" || fail "Wine: no summary from training on the GPU"
    ran "Wine: WGPU_BACKEND=vulkan train --dataset spiral --device gpu --steps 50 --json (on $(grep -o '"name":"[^"]*","backend":"Vulkan"' <<< "$devices" | head -n 1))"
else
    echo "skipped: train --device gpu: Wine's Vulkan reaches no adapter here (${devices:0:300})"
fi
if [ -n "${DISPLAY:-}" ]; then
    (WGPU_BACKEND=vulkan timeout 90 wine "$exe" --no-gpu --exit-after-secs 25 > "$work/window.json" 2>&1 &)
    sleep 20
    import -window root "$out/windows-under-wine.png" 2>/dev/null \
        || xwd -root -silent | convert xwd:- "$out/windows-under-wine.png"
    sleep 8
    # A window that drew is many colours; a black screen is one.
    colours=$(convert "$out/windows-under-wine.png" -format %k info: 2>/dev/null || echo 0)
    [ "$colours" -gt 100 ] || fail "Wine: the window did not draw ($colours colours on screen; $(tail -c 300 "$work/window.json"))"
    grep -q '"window":true' "$work/window.json" || fail "Wine: the window did not report ($(tail -c 300 "$work/window.json"))"
    ran "Wine: the window opened and drew under Xvfb ($colours colours): $out/windows-under-wine.png"
else
    echo "skipped: the window under Wine (no X display and no Xvfb)"
fi
