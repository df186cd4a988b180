#!/usr/bin/env bash
# Everything CI checks, in one command: system packages, formatting, lints, all the tests.
#
# The GPU tests run for real on Mesa's lavapipe (a Vulkan driver that runs on the CPU) and the
# window test under Xvfb; the Windows build runs under Wine. Missing Debian packages are installed when this runs as root or with
# password-less sudo; otherwise the script names them and goes on (the GPU and window tests then
# say why they are skipped, except under CI=true, where they fail).
# scripts/check-targets.sh (clippy for Windows MSVC and macOS) and scripts/package.sh (the
# release packages, then scripts/package-check.sh) are run by hand: each is minutes more.
set -euo pipefail
cd "$(dirname "$0")/.."

# mingw-w64, Wine and ImageMagick build the Windows binary, run it, and look at its window;
# Chromium runs the browser build's self-test pages.
packages=(mesa-vulkan-drivers libvulkan1 xvfb xauth libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 libx11-xcb1 python3 tzdata
    mingw-w64 wine wine64 imagemagick chromium)
if command -v dpkg >/dev/null 2>&1; then
    missing=()
    for p in "${packages[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "==> installing ${missing[*]}"
        if [ "$(id -u)" = 0 ]; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        else
            echo "warning: cannot install packages; run: sudo apt-get install ${missing[*]}" >&2
        fi
    fi
else
    echo "note: not a Debian/Ubuntu system; install Mesa's Vulkan drivers (lavapipe) and Xvfb yourself" >&2
fi

for component in rustfmt clippy; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
        rustup component add "$component"
    fi
done

# Wayland and the Vulkan loader warn without a runtime dir; give them a private one.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
    XDG_RUNTIME_DIR=$(mktemp -d)
    export XDG_RUNTIME_DIR
fi

# A clean build gains nothing from incremental compilation's bookkeeping, as CI's always is.
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0
fi

# Saved settings and the GPU kernel tuning go to a data directory of the run's own, so a
# developer's saved state neither changes the tests nor is changed by them; the first GPU run
# times the kernel variants once and the rest read the choice.
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME

echo "==> module structure (no import cycle, no upward arrow, no file over 800 lines)"
python3 scripts/check-structure.py
echo "==> timing tests (one list for cargo test's lock and nextest's group)"
python3 scripts/check-test-groups.py
echo "==> the guide (mdBook) and every internal link"
bash scripts/check-guide.sh
echo "==> cargo fmt --check"
cargo fmt --all -- --check
# Clippy lints the workspace as its compiler wrapper while the binary and the tests are built
# (what `cargo clippy` does for a check build), so the dependencies are compiled once, as the
# tests need them, instead of a second time in check mode: three minutes of a clean run on two
# cores. Every cargo command below builds with it, so none rebuilds the crate without it.
clippy_driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)
if [ -n "$clippy_driver" ]; then
    echo "==> clippy -D warnings (as the crate builds)"
    export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
else
    echo "==> cargo clippy -D warnings (no clippy-driver found: a check build of its own)"
    cargo clippy --all-targets --locked -- -D warnings
fi
echo "==> cargo build (the app and every test target)"
cargo test --all-targets --locked --no-run
echo "==> GPU adapter"
# The binary the tests built: `cargo run` would build another, since the test build's features
# (naga's Metal writer, for the shader-translation test) reach wgpu and everything above it.
app="${CARGO_TARGET_DIR:-target}/debug/batchscope"
if "$app" devices --json | grep -q '"usable_for_training":true'; then
    "$app" devices | head -n 3
else
    # libtest has no "skipped" status: say it here, where it is seen.
    echo "warning: no GPU adapter can train here, so the GPU tests check nothing" \
        "(with CI=true they fail instead). Install mesa-vulkan-drivers for lavapipe." >&2
fi
# The weights test reads a saved file with Python's safetensors and NumPy, as a PyTorch user
# would: from PyPI into target/pylib, once.
if ! PYTHONPATH=target/pylib python3 -c 'import safetensors.numpy, numpy' 2>/dev/null; then
    echo "==> safetensors and numpy for Python (into target/pylib)"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        --target target/pylib \
        safetensors numpy || echo "warning: could not install them; the weights test says why" >&2
fi
# cargo-nextest, where installed, runs the library's and the integration binary's tests from one
# pool, each in a process of its own, with the timing tests one at a time in a test group
# (.config/nextest.toml); `cargo test` runs the binaries one after the other, the timing tests
# serialised by a lock. The same tests either way.
if cargo nextest --version >/dev/null 2>&1; then
    echo "==> cargo nextest run"
    cargo nextest run --all-targets --locked --final-status-level slow
else
    echo "==> cargo test (cargo-nextest is not installed: the binaries one after the other)"
    cargo test --all-targets --locked
fi
# The Windows build, cross-compiled (debug, so it shares nothing slow with the release packages)
# and run under Wine: the app's Windows code paths built and linted (clippy is the compiler
# wrapper here too) and used, not only type-checked. Two to three minutes of Wine and about six of
# compiling the dependencies for Windows on two cores.
echo "==> the Windows build under Wine (a debug cross build)"
windows=x86_64-pc-windows-gnu
if ! rustup target list --installed 2>/dev/null | grep -qx "$windows"; then
    rustup target add "$windows" >/dev/null 2>&1 || true
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$windows" \
    || ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || ! command -v wine >/dev/null 2>&1; then
    why="needs rustup's $windows target, mingw-w64 and wine64"
    if [ "${CI:-}" = true ]; then
        echo "error: the Windows check $why, and they could not be installed" >&2
        exit 1
    fi
    echo "skipped: the Windows check $why (sudo apt-get install mingw-w64 wine64 wine imagemagick;" \
        "rustup target add $windows)"
else
    cargo build --locked --target "$windows" --bin batchscope
    bash scripts/wine-check.sh "${CARGO_TARGET_DIR:-target}/$windows/debug/batchscope.exe" \
        "${CARGO_TARGET_DIR:-target}/wine-check"
fi
# The browser build (scripts/web.sh): the app for wasm32 with clippy as the wrapper, so nothing
# native creeps back into the core, then its self-test pages (the spiral MLP and the digits CNN)
# in headless Chromium on SwiftShader's WebGPU, each device's 50 losses against the desktop
# build's. About five minutes on two cores, wasm-bindgen's first install included.
echo "==> the browser build and its self-test pages (WebAssembly, WebGPU)"
wasm=wasm32-unknown-unknown
if ! rustup target list --installed 2>/dev/null | grep -qx "$wasm"; then
    rustup target add "$wasm" >/dev/null 2>&1 || true
fi
if rustup target list --installed 2>/dev/null | grep -qx "$wasm" && command -v chromium >/dev/null 2>&1; then
    bash scripts/web.sh test
elif [ "${CI:-}" = true ]; then
    echo "error: the browser check needs rustup's $wasm target and Chromium, and they could not be installed" >&2
    exit 1
else
    echo "skipped: the browser check needs rustup's $wasm target and Chromium" \
        "(rustup target add $wasm; sudo apt-get install chromium)"
fi
# The packages are checked where scripts/package.sh has built them: their two release builds
# would double CI's time on two cores.
echo "==> packages"
if [ -f target/dist/SHA256SUMS ]; then
    bash scripts/package-check.sh
else
    echo "skipped: no packages in target/dist (scripts/package.sh builds them, then" \
        "scripts/package-check.sh checks them as a user meets them)"
fi
