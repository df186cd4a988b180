#!/usr/bin/env bash
# Clippy with -D warnings for the systems the tests do not run on: Windows (MSVC) and macOS on
# Apple silicon, so every `cfg` branch of the code and the tests type-checks and lints clean
# here. Check builds only: nothing is linked, so no Windows or Apple toolchain is needed.
# (The Windows GNU build is compiled for real by scripts/package.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
for target in x86_64-pc-windows-msvc aarch64-apple-darwin; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
    echo "==> clippy -D warnings for $target"
    cargo clippy --all-targets --locked --target "$target" -- -D warnings
done
