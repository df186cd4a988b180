#!/usr/bin/env bash
# The API documentation, with every intra-doc link checked.
#
# Not part of scripts/test.sh: rustdoc reads the dependencies compiled in check mode, which the
# test build never makes, so this costs a second compilation of all of them (about three minutes
# on two cores). Run it after changing doc comments.
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked "$@"
