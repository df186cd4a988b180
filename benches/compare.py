#!/usr/bin/env python3
"""BatchScope's CPU path against PyTorch on the CPU: one command, one ratio table.

    python3 benches/compare.py            # the grid of issue 3, 2 threads
    python3 benches/compare.py --quick    # fewer repeats
    python3 benches/compare.py --only gpt # the GPT rows alone (issue 39)
    python3 benches/compare.py --only dense # the MLP and CNN rows alone (issue 42)

It builds `batchscope` in release mode, installs PyTorch into target/bench-venv when that
virtualenv lacks it (PyPI's wheel, with its CUDA libraries: a large download, once), then runs the
same training step (MLP, ReLU, Adam or SGD as each row says, cross-entropy, random inputs) in both, in this one run on
this one machine, and prints samples/s side by side as ratios. BatchScope's CPU column is also run
on one thread, with every kernel split over 2 threads, and with the automatic choice (split only
work large enough), to show the automatic choice is never slower than the better fixed one. Every number is measured here and now; nothing is copied from elsewhere.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "bench-venv")
BIN = os.path.join(ROOT, "target", "release", "batchscope")

# (layers, batch, optimizer, target ratio of BatchScope's samples/s to PyTorch's). The large rows
# (issue 42) train with SGD: with Adam, this PyTorch's step on them is dominated by its optimizer
# (784,256,256,10 at batch 512: 15,000 samples/s with Adam against 145,000 with SGD, measured
# 2026-12-07 with PyTorch 2.15), so a ratio there would measure PyTorch's Adam, not the products.
GRID = [
    ("2,16,16,2", 1, "adam", 10.0),
    ("2,16,16,2", 8, "adam", 10.0),
    ("2,16,16,2", 32, "adam", 10.0),
    ("784,128,10", 128, "adam", 1.1),
    ("784,128,10", 256, "adam", 1.1),
    ("784,512,512,10", 1024, "adam", 1.1),
    ("784,256,256,10", 512, "sgd", 1.1),
    ("784,256,256,10", 1024, "sgd", 1.1),
    ("784,256,256,10", 2048, "sgd", 1.1),
    ("784,1024,1024,10", 512, "sgd", 1.1),
    ("784,1024,1024,10", 1024, "sgd", 1.1),
    ("784,1024,1024,10", 2048, "sgd", 1.1),
]

# Each row's two programs are run this many times, alternating, and the best run of each kept:
# a shared machine's speed moves between runs, and alternating gives both the same share of it.
ALTERNATIONS = 5

# GPTs on the shipped Shakespeare (issue 39): (preset, context, batch, target), AdamW, the
# PyTorch side from benches/pytorch_gpt.py.
GPT_GRID = [
    ("gpt-baby", 64, 12, 1.0),
    ("gpt-baby", 64, 32, 1.0),
]

# CNNs on 28×28 MNIST images (issue 17): (conv blocks, dense layers after them, batch, target).
CNN_GRID = [
    ("8,16", "10", 64, 2.0),
    ("8,16", "10", 256, 2.0),
]


def venv_python():
    return os.path.join(VENV, "bin", "python")


def ensure_torch():
    py = venv_python()
    if os.path.exists(py) and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
        return py
    print("installing PyTorch into target/bench-venv (once; PyPI's wheel is large)...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "torch", "numpy"], check=True)
    return py


def machine():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def batchscope(layers, batch, threads, repeats, split="auto", optimizer="adam"):
    cmd = [BIN, "bench", "--device", "cpu", "--dataset", "random", "--layers", layers,
           "--batch", str(batch), "--threads", str(threads), "--split", split, "--optimizer", optimizer,
           "--repeats", str(repeats), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def batchscope_cnn(conv, layers, batch, threads, repeats, split="auto"):
    # The shipped MNIST: its images, loaded before the timing starts.
    cmd = [BIN, "bench", "--device", "cpu", "--dataset", "mnist", "--conv", conv, "--layers", layers,
           "--batch", str(batch), "--threads", str(threads), "--split", split,
           "--repeats", str(repeats), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def batchscope_gpt(preset, context, batch, threads, repeats):
    cmd = [BIN, "bench", "--device", "cpu", "--dataset", "shakespeare", "--model", preset,
           "--context", str(context), "--batch", str(batch), "--optimizer", "adamw",
           "--threads", str(threads), "--repeats", str(repeats), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["tokens_per_s"] = r["samples_per_s"] * context
    # The vocabulary: the head's width, the model's last layer.
    r["vocab"] = int(re.findall(r"\[(\d+)\]", r["model"])[-1])
    return r


def pytorch_gpt(py, preset, vocab, context, batch, threads, repeats):
    cmd = [py, os.path.join(ROOT, "benches", "pytorch_gpt.py"), "--model", preset, "--vocab", str(vocab),
           "--context", str(context), "--batch", str(batch), "--threads", str(threads),
           "--repeats", str(repeats)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def gpt_rows(py, threads, repeats):
    """Each GPT row measured ALTERNATIONS times, alternating the two programs, the best of each
    kept."""
    rows = []
    for preset, context, batch, target in GPT_GRID:
        ours, theirs = [], []
        for _ in range(ALTERNATIONS):
            ours.append(batchscope_gpt(preset, context, batch, threads, repeats))
            theirs.append(pytorch_gpt(py, preset, ours[-1]["vocab"], context, batch, threads, repeats))
        best = lambda runs: max(runs, key=lambda r: r["tokens_per_s"])
        o, t = best(ours), best(theirs)
        rows.append({"model": preset, "context": context, "batch": batch, "target_ratio": target,
                     "batchscope": o, "pytorch": t, "ratio": o["tokens_per_s"] / t["tokens_per_s"]})
    return rows


def print_gpt(rows, threads):
    print(f"GPTs on the shipped Shakespeare, AdamW, {threads} threads, best of {ALTERNATIONS} alternating runs each:")
    print("| model | context | batch | PyTorch tokens/s | BatchScope tokens/s | ratio | target | met |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        met = "yes" if r["ratio"] >= r["target_ratio"] else "NO"
        print(f"| {r['model']} | {r['context']} | {r['batch']} | {r['pytorch']['tokens_per_s']:,.0f} | "
              f"{r['batchscope']['tokens_per_s']:,.0f} | {r['ratio']:.2f}x | {r['target_ratio']:g}x | {met} |")


def pytorch(py, layers, batch, threads, repeats, conv=None, optimizer="adam"):
    cmd = [py, os.path.join(ROOT, "benches", "pytorch_bench.py"), "--layers", layers,
           "--batch", str(batch), "--threads", str(threads), "--repeats", str(repeats),
           "--optimizer", optimizer]
    if conv:
        cmd += ["--conv", conv, "--image", "28,28,1"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def alternate(theirs, ours):
    """Runs the two programs ALTERNATIONS times, alternating, and keeps the best run of each."""
    a, b = [], []
    for _ in range(ALTERNATIONS):
        a.append(theirs())
        b.append(ours())
    best = lambda runs: max(runs, key=lambda r: r["samples_per_s"])
    return best(a), best(b)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    p.add_argument("--threads", type=int, default=2, help="threads for both (default 2)")
    p.add_argument("--out", default=os.path.join(ROOT, "target", "bench-results.json"))
    p.add_argument("--only", choices=["all", "gpt", "dense"], default="all",
                   help="gpt: the GPT rows alone; dense: the MLP and CNN rows without the GPTs")
    a = p.parse_args()
    repeats = 3 if a.quick else 7
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    py = ensure_torch()
    gpts = gpt_rows(py, a.threads, repeats) if a.only != "dense" else []
    if a.only == "gpt":
        print(f"Measured {datetime.date.today().isoformat()} on {machine()}")
        print_gpt(gpts, a.threads)
        return
    kernels = json.loads(subprocess.run(
        [BIN, "bench", "--kernels", "--dataset", "random", "--layers", "784,512,512,10", "--batch", "1024",
         "--device", "cpu", "--json"], check=True, capture_output=True, text=True).stdout)
    results = []
    for layers, batch, optimizer, target in GRID:
        torch_r, auto = alternate(lambda: pytorch(py, layers, batch, a.threads, repeats, optimizer=optimizer),
                                  lambda: batchscope(layers, batch, a.threads, repeats, optimizer=optimizer))
        ours = {
            "one_thread": batchscope(layers, batch, 1, repeats, optimizer=optimizer),
            "always_split": batchscope(layers, batch, a.threads, repeats, "always", optimizer),
            "auto": auto,
        }
        best_fixed = max(ours["one_thread"]["samples_per_s"], ours["always_split"]["samples_per_s"])
        results.append({
            "layers": layers, "batch": batch, "optimizer": optimizer, "target_ratio": target,
            "pytorch": torch_r, "batchscope": ours,
            "ratio": auto["samples_per_s"] / torch_r["samples_per_s"],
            "auto_vs_best_fixed": auto["samples_per_s"] / best_fixed,
        })
    for conv, layers, batch, target in CNN_GRID:
        torch_r, auto = alternate(lambda: pytorch(py, layers, batch, a.threads, repeats, conv),
                                  lambda: batchscope_cnn(conv, layers, batch, a.threads, repeats))
        ours = {
            "one_thread": batchscope_cnn(conv, layers, batch, 1, repeats),
            "always_split": batchscope_cnn(conv, layers, batch, a.threads, repeats, "always"),
            "auto": auto,
        }
        best_fixed = max(ours["one_thread"]["samples_per_s"], ours["always_split"]["samples_per_s"])
        results.append({
            "layers": f"conv {conv} + {layers} (28x28)", "batch": batch, "optimizer": "adam",
            "target_ratio": target, "pytorch": torch_r, "batchscope": ours,
            "ratio": auto["samples_per_s"] / torch_r["samples_per_s"],
            "auto_vs_best_fixed": auto["samples_per_s"] / best_fixed,
        })
    conv_kernels = json.loads(subprocess.run(
        [BIN, "bench", "--kernels", "--dataset", "mnist", "--conv", "8,16", "--layers", "10",
         "--batch", "256", "--device", "cpu", "--json"], check=True, capture_output=True, text=True).stdout)
    today = datetime.date.today().isoformat()
    print(f"BatchScope CPU vs {results[0]['pytorch']['framework']} CPU, {a.threads} threads, measured {today}")
    print(f"Machine: {machine()}")
    peak = kernels["fma_peak_per_core"]
    print(f"FMA peak of one core, measured: {peak['gflop_per_s']:.0f} GFLOP/s ({peak['isa']})")
    print()
    print(f"Best of {ALTERNATIONS} runs of each program, alternating row by row.")
    print(f"| layers | batch | optimizer | PyTorch samples/s | BatchScope samples/s | ratio | target | met | automatic split vs best of 1 thread and always {a.threads} |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ours = r["batchscope"]["auto"]["samples_per_s"]
        met = "yes" if r["ratio"] >= r["target_ratio"] else "NO"
        print(f"| {r['layers']} | {r['batch']} | {r['optimizer']} | {r['pytorch']['samples_per_s']:,.0f} | {ours:,.0f} | "
              f"{r['ratio']:.2f}x | {r['target_ratio']:g}x | {met} | {r['auto_vs_best_fixed']:.2f} |")
    print()
    print("Matrix products of 784,512,512,10 at batch 1024 (with their fused bias/activation), one thread:")
    print("| product | m x k x n | GFLOP/s | share of one core's FMA peak |")
    print("|---|---|---|---|")
    one = next(x for x in kernels["products"] if x["threads"] == 1)
    for rate in one["rates"]:
        m, k, n = rate["shape"]
        print(f"| {rate['name']} | {m}x{k}x{n} | {rate['gflop_per_s']:.0f} | "
              f"{100 * rate['gflop_per_s'] / peak['gflop_per_s']:.0f}% |")
    print()
    print("Convolutions of conv 8,16 + 10 on 28x28 images at batch 256, one thread: the kernels the CPU's step")
    print("runs, straight from the images (forward with bias and ReLU, weight gradient, input gradient of")
    print("the second block), FLOPs counted as the equivalent products m x k x n:")
    print("| op | m x k x n | GFLOP/s | share of one core's FMA peak |")
    print("|---|---|---|---|")
    one = next(x for x in conv_kernels["products"] if x["threads"] == 1)
    for rate in one["rates"]:
        if rate["name"].split()[-1] not in ("0", "1"):
            continue
        m, k, n = rate["shape"]
        print(f"| {rate['name']} | {m}x{k}x{n} | {rate['gflop_per_s']:.0f} | "
              f"{100 * rate['gflop_per_s'] / peak['gflop_per_s']:.0f}% |")
    if gpts:
        print()
        print_gpt(gpts, a.threads)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"date": today, "machine": machine(), "kernels": kernels, "conv_kernels": conv_kernels,
                   "results": results, "gpt": gpts}, f, indent=1)
    print(f"\nAll measurements: {os.path.relpath(a.out, ROOT)}")


if __name__ == "__main__":
    main()
