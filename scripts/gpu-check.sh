#!/usr/bin/env bash
# The GPU path on whatever GPU this machine has, in one JSON report:
#
#   scripts/gpu-check.sh REPORT.json
#
# It runs from binaries built beforehand on a machine of the same architecture (a GPU machine
# may have no Rust toolchain): the release binary target/release/batchscope and the GPU test
# binaries from `cargo test --release --no-run`, found in target/release/deps. Where cargo is
# present and they are missing, it builds them first. Every step has its own time limit, so the
# whole check ends within about 8 minutes on any machine with a GPU (on a software adapter the
# steps are cut short and say so).
#
# The report holds: the adapter and driver (`devices --json`), every GPU test's result, the
# kernel variant timed fastest on this adapter (`tune --json`), the matrix-product kernels'
# GFLOP/s from 256³ up and the convolution's (`bench --kernels --device
# gpu`), dispatch overhead, upload and readback bandwidth, step time and samples/s of a tiny and
# a large network at several batch sizes on the GPU and on this machine's CPU, and the batch
# size where the GPU's samples/s overtake the CPU's (`sweep`). Each command's own output is kept
# beside the report (REPORT.json.d/) for anything the report leaves out.
set -u -o pipefail

report=${1:?usage: scripts/gpu-check.sh REPORT.json}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=target/release/batchscope
deps=target/release/deps
# Integration test binaries with GPU cases.
test_names="gpu_kernels gradients convolution cnn training memory precision"
out="$report.d"
mkdir -p "$out"
started=$(date +%s)

say() { printf '%s\n' "$*" >&2; }

newest_test_binary() {
    # The newest executable deps/NAME-HASH (cargo keeps old ones beside it).
    find "$deps" -maxdepth 1 -type f -executable -name "$1-*" -printf '%T@ %p\n' 2>/dev/null |
        sort -rn | head -1 | cut -d' ' -f2-
}

missing=0
[ -x "$bin" ] || missing=1
for t in $test_names; do
    [ -n "$(newest_test_binary "$t")" ] || missing=1
done
if [ "$missing" = 1 ]; then
    if command -v cargo >/dev/null; then
        say "building the release binary and the test binaries (cargo is here)"
        cargo build --release --quiet && cargo test --release --no-run --quiet 2>/dev/null ||
            { say "the build failed"; exit 1; }
    else
        say "target/release/batchscope or a test binary is missing and there is no cargo:"
        say "build them on a machine of this architecture with"
        say "  cargo build --release && cargo test --release --no-run"
        say "and copy target/release/batchscope and target/release/deps/ here"
        exit 1
    fi
fi

# A GPU must be found: with CI=true the GPU tests fail rather than skip without one.
export CI=true
# The kernel tuning is kept beside the report, not in this machine's user data.
mkdir -p "$out/data"
XDG_DATA_HOME=$(cd "$out/data" && pwd)
export XDG_DATA_HOME
export RUST_BACKTRACE=0

# The whole check's budget: 7.5 minutes from the start, the report's writing included.
deadline=$((started + 450))

step() {
    # step NAME SECONDS COMMAND...: runs COMMAND with a time limit (its own, or what is left of
    # the budget), its stdout to NAME.out and its stderr to NAME.err, and records its exit
    # status (124: cut at its limit; "skipped": no time was left).
    local name=$1 seconds=$2
    shift 2
    local left=$((deadline - $(date +%s)))
    if [ "$left" -lt 5 ]; then
        say "== $name: skipped, the time is up"
        echo skipped >"$out/$name.status"
        : >"$out/$name.out"
        : >"$out/$name.err"
        return
    fi
    [ "$seconds" -gt "$left" ] && seconds=$left
    say "== $name (at most ${seconds}s)"
    timeout "$seconds" "$@" >"$out/$name.out" 2>"$out/$name.err"
    echo $? >"$out/$name.status"
}

step devices 60 "$bin" devices --json

for t in $test_names; do
    b=$(newest_test_binary "$t")
    # gpu_kernels is all GPU; in the others the GPU cases are the ones named `...::gpu`.
    filter=gpu
    [ "$t" = gpu_kernels ] && filter=
    step "test-$t" 90 "$b" $filter --test-threads 2
done

step tune 60 "$bin" tune --json
step kernels 180 "$bin" bench --kernels --device gpu --json --dataset mnist --conv 8,16 --batch 256

# Step time and samples/s on both devices: a tiny network (overhead-bound) and a large one
# (arithmetic-bound) at several batch sizes.
for b in 1 32 1024; do
    step "bench-tiny-$b" 40 "$bin" bench --json --device both --dataset spiral --samples 6000 \
        --layers 2,16,16,2 --batch "$b" --repeats 3 --steps-per-run 100
done
for b in 64 1024 4096; do
    step "bench-large-$b" 50 "$bin" bench --json --device both --dataset random \
        --layers 784,4096,4096,10 --batch "$b" --repeats 3 --steps-per-run 3
done

# Where the GPU overtakes the CPU as the batch grows, on a mid-sized network.
step crossover 150 "$bin" sweep --json --dataset random --layers 784,512,512,10 \
    --vary batch=1,4,16,64,256,1024,4096 --cap-s 2

elapsed=$(($(date +%s) - started))
say "== writing $report (${elapsed}s)"
python3 - "$out" "$report" "$elapsed" <<'PY'
import json, os, re, sys

out, report, elapsed = sys.argv[1], sys.argv[2], int(sys.argv[3])

def text(name, ext="out"):
    try:
        with open(os.path.join(out, f"{name}.{ext}"), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""

def status(name):
    s = text(name, "status").strip()
    return int(s) if s.isdigit() else (s or None)

def json_lines(name):
    lines = []
    for line in text(name).splitlines():
        line = line.strip()
        if line.startswith("{") or line.startswith("["):
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass
    return lines

def step(name):
    code = status(name)
    return {
        "exit_status": code,
        "timed_out": code == 124,
        "skipped": code == "skipped",
        "json": json_lines(name),
        "stderr_tail": text(name, "err")[-2000:],
    }

tests = {}
for entry in sorted(os.listdir(out)):
    m = re.fullmatch(r"test-(.+)\.out", entry)
    if not m:
        continue
    name = m.group(1)
    results = {}
    for line in text(f"test-{name}").splitlines():
        r = re.fullmatch(r"test (\S+) \.\.\. (ok|FAILED|ignored)", line.strip())
        if r:
            results[r.group(1)] = r.group(2)
    tests[name] = {"exit_status": status(f"test-{name}"), "results": results}

benches = {e[:-4]: step(e[:-4]) for e in sorted(os.listdir(out))
           if e.startswith("bench-") and e.endswith(".out")}
all_tests = [r for t in tests.values() for r in t["results"].values()]
summary = {
    "tests_passed": all_tests.count("ok"),
    "tests_failed": all_tests.count("FAILED"),
    "test_binaries_not_finished": [n for n, t in tests.items() if t["exit_status"] not in (0, 101)],
    "seconds": elapsed,
}
with open(report, "w", encoding="utf-8") as f:
    json.dump({
        "summary": summary,
        "devices": step("devices"),
        "tests": tests,
        "tune": step("tune"),
        "kernels": step("kernels"),
        "benches": benches,
        "crossover": step("crossover"),
    }, f, indent=1)
print(json.dumps(summary))
PY
