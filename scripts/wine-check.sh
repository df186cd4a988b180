#!/usr/bin/env bash
# Runs a Windows build of BatchScope under Wine (Debian's wine64) as a user would:
#   --version, devices --json, training on the CPU, a CSV given as a Windows path,
#   lessons --verify --no-gpu, training on the GPU where Wine's Vulkan reaches lavapipe, and the
#   window under Xvfb (a screenshot in OUT_DIR).
# scripts/package-check.sh runs it on the packaged .exe, scripts/test.sh on a debug cross build.
# Each check says what ran; the script exits non-zero at the first that fails. Wine is installed
# where this runs as root; otherwise its absence is said and the checks are skipped (exit 0), or,
# with CI=true, fail.
#
# Usage: scripts/wine-check.sh BATCHSCOPE.EXE OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."

exe=$(realpath "$1")
out=$2
mkdir -p "$out"
out=$(realpath "$out")
version=$(bash scripts/version.sh)
work=$(mktemp -d /tmp/batchscope-wine.XXXXXX)
trap 'rm -rf "$work"' EXIT

ran() { echo "ok: $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

if ! command -v wine >/dev/null 2>&1 || ! dpkg -s mingw-w64 >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "==> installing wine64 and mingw-w64"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine wine64 mingw-w64 >/dev/null
    elif [ "${CI:-}" = true ]; then
        fail "Wine is not installed and cannot be here (sudo apt-get install wine64 mingw-w64)"
    else
        echo "skipped: Wine is not installed (sudo apt-get install wine64 mingw-w64)"
        exit 0
    fi
fi

export WINEPREFIX=$work/wine WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
export XDG_DATA_HOME=$work/data XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/run}
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# Wine reaches Vulkan (and so lavapipe) and draws windows only with an X display.
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null 2>&1; then
    display=:$((90 + RANDOM % 100))
    Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 &
    xvfb_pid=$!
    trap 'kill $xvfb_pid 2>/dev/null; wineserver -k 2>/dev/null; rm -rf "$work"' EXIT
    export DISPLAY=$display
    sleep 2
fi
timeout 300 wineboot --init >/dev/null 2>&1 || true
system32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -f "$system32/bcryptprimitives.dll" ]; then
    # Rust's standard library imports ProcessPrng from bcryptprimitives.dll (Windows 10 and
    # later have it); Wine before 9.0 does not, so the prefix gets a stand-in built here.
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
grep -q '"summary":true' "$work/wine-train.json" || fail "Wine: no summary from training on the CPU"
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
if [ -n "${DISPLAY:-}" ] && command -v convert >/dev/null 2>&1; then
    # The window closes itself after 40 s and prints what its columns did; the screen is looked
    # at every few seconds until it has drawn (a debug build under Wine takes a while to start).
    WGPU_BACKEND=vulkan timeout 120 wine "$exe" --no-gpu --exit-after-secs 40 > "$work/window.json" 2>&1 &
    window_pid=$!
    colours=0
    for _ in $(seq 12); do
        sleep 3
        import -window root "$out/windows-under-wine.png" 2>/dev/null \
            || xwd -root -silent | convert xwd:- "$out/windows-under-wine.png"
        # A window that drew is many colours; a black screen is one.
        colours=$(convert "$out/windows-under-wine.png" -format %k info: 2>/dev/null || echo 0)
        [ "$colours" -gt 100 ] && break
    done
    wait "$window_pid" || true
    [ "$colours" -gt 100 ] || fail "Wine: the window did not draw ($colours colours on screen; $(tail -c 300 "$work/window.json"))"
    grep -q '"window":true' "$work/window.json" || fail "Wine: the window did not report ($(tail -c 300 "$work/window.json"))"
    ran "Wine: the window opened and drew under Xvfb ($colours colours): $out/windows-under-wine.png"
else
    echo "skipped: the window under Wine (needs an X display or Xvfb, and ImageMagick)"
fi
