#!/usr/bin/env bash
# Builds the tests once, then runs the whole suite N times (default 5) and prints each run's
# result and time: a test that fails one time in ten shows up here before it fails CI.
# Run it on a quiet machine; it takes N times what one run of the suite takes.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
    XDG_RUNTIME_DIR=$(mktemp -d)
    export XDG_RUNTIME_DIR
fi
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME
cargo test --all-targets --locked --no-run --quiet
# The runner CI uses (scripts/test.sh): cargo-nextest where installed, else cargo test.
if cargo nextest --version >/dev/null 2>&1; then
    run_all=(cargo nextest run --all-targets --locked --no-fail-fast)
    failures='^ *FAIL |panicked'
else
    run_all=(cargo test --all-targets --locked --quiet)
    failures='^test .* FAILED|panicked'
fi
failed=0
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    if "${run_all[@]}" >"/tmp/batchscope-steady-$i.log" 2>&1; then
        echo "run $i: passed in $(($(date +%s) - start)) s"
    else
        failed=$((failed + 1))
        echo "run $i: FAILED in $(($(date +%s) - start)) s (log: /tmp/batchscope-steady-$i.log)"
        grep -E "$failures" "/tmp/batchscope-steady-$i.log" | head -5
    fi
done
echo "$((runs - failed)) of $runs runs passed"
[ "$failed" -eq 0 ]
