#!/usr/bin/env bash
# Prints the crate's version, from Cargo.toml's [package] section (the scripts that name files
# after it read it here, so they agree).
set -euo pipefail
cd "$(dirname "$0")/.."
sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1
