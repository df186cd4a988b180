#!/usr/bin/env bash
# Builds the user guide (docs/guide, an mdBook) and checks that every internal link of it, of
# README.md and of ARCHITECTURE.md leads somewhere. mdBook is installed from crates.io where it
# is missing (the HTML renderer alone: no server, no file watcher).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mdbook >/dev/null 2>&1; then
    echo "==> installing mdbook from crates.io"
    cargo install mdbook --locked --quiet --no-default-features --features search
fi
mdbook build docs/guide >/dev/null 2>"${TMPDIR:-/tmp}/mdbook.log" || { cat "${TMPDIR:-/tmp}/mdbook.log" >&2; exit 1; }
python3 scripts/check-links.py docs/guide/book
