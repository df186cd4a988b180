#!/usr/bin/env bash
# The browser build: BatchScope as a static site, on WebGPU and WebAssembly.
#
#   scripts/web.sh build [--dev]   the site in target/web/ (release; --dev: the debug profile)
#   scripts/web.sh serve [PORT]    serve target/web/ on localhost (default 8080) with the
#                                  cross-origin isolation headers
#   scripts/web.sh test            build (--dev), run the self-test pages (spiral, digits-cnn)
#                                  in headless Chromium on SwiftShader's WebGPU, and compare
#                                  their losses with the desktop build's, step by step
#
# target/web/ is deployable as it is on any static host: `_headers` carries the headers for
# Netlify and Cloudflare Pages; elsewhere, send Cross-Origin-Opener-Policy: same-origin and
# Cross-Origin-Embedder-Policy: require-corp with every file.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
site="$target_dir/web"
wasm=wasm32-unknown-unknown

# wasm-bindgen's command line must be the version of the crate in Cargo.lock: installed once
# into target/tools when PATH has no such version (its command line alone, without the test
# runner's TLS: about two minutes on two cores).
bindgen() {
    local want have tool
    want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
    for tool in wasm-bindgen "$target_dir/tools/bin/wasm-bindgen"; do
        have=$("$tool" --version 2>/dev/null | awk '{ print $2 }') || true
        if [ "$have" = "$want" ]; then
            echo "$tool"
            return
        fi
    done
    echo "==> installing wasm-bindgen $want into $target_dir/tools" >&2
    # Not linted as this crate is (test.sh's clippy wrapper), and not optimised much: it runs
    # once a build.
    local install=(env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS CARGO_PROFILE_RELEASE_OPT_LEVEL=1
        CARGO_TARGET_DIR="$target_dir/tools/build" cargo install --quiet --root "$target_dir/tools"
        wasm-bindgen-cli --version "$want" --no-default-features --bin wasm-bindgen)
    # Its own lock first; a registry mirror without one of its locked versions, without.
    "${install[@]}" --locked >&2 || "${install[@]}" >&2
    echo "$target_dir/tools/bin/wasm-bindgen"
}

build() {
    local profile=release flag=--release
    if [ "${1:-}" = --dev ]; then
        profile=debug flag=
    fi
    if ! rustup target list --installed 2>/dev/null | grep -qx "$wasm"; then
        rustup target add "$wasm"
    fi
    echo "==> cargo build --target $wasm ($profile)"
    # shellcheck disable=SC2086
    cargo build --locked --target "$wasm" --bin batchscope $flag
    local tool
    tool=$(bindgen)
    rm -rf "$site"
    mkdir -p "$site"
    "$tool" --target web --no-typescript --out-dir "$site" --out-name batchscope \
        "$target_dir/$wasm/$profile/batchscope.wasm"
    cp web/index.html web/_headers "$site/"
    cp packaging/icons/batchscope.svg "$site/icon.svg"
    echo "==> the site is in $site ($(du -sh "$site" | cut -f1))"
}

case "${1:-}" in
build)
    shift
    build "$@"
    ;;
serve)
    [ -f "$site/index.html" ] || build
    python3 scripts/web.py serve "$site" "${2:-8080}"
    ;;
test)
    build --dev
    names=(spiral digits-cnn)
    echo "==> the self-test pages in headless Chromium (WebGPU on SwiftShader)"
    # Each page's whole line (every loss) goes to a file; the comparison below says what matters.
    python3 scripts/web.py selftest "$site" "${names[@]}" > "$site/selftest-browser.txt"
    echo "the pages' lines are in $site/selftest-browser.txt"
    echo "==> the same self-tests in the desktop build"
    [ -x "$target_dir/debug/batchscope" ] || cargo build --locked --bin batchscope
    "$target_dir/debug/batchscope" selftest "${names[@]}" > "$site/selftest-desktop.txt"
    python3 scripts/web.py compare "$site/selftest-browser.txt" "$site/selftest-desktop.txt"
    ;;
*)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
