#!/usr/bin/env python3
"""The PyTorch side of BatchScope's CPU benchmark: the same MLP training step, timed the same way.

For each configuration: build nn.Sequential(Linear, act, ..., Linear), Adam (or SGD),
CrossEntropyLoss, random inputs and labels; run warm-up steps, then `repeats` timed runs of
`steps` optimizer steps each (zero_grad, forward, loss, backward, step), and print one JSON line
with the median, min and max step time. Same statistics as `batchscope bench --json`.
"""
import argparse
import json
import statistics
import time

import torch


def run(layers, batch, optimizer, threads, warmup, repeats, steps, activation, lr, seed):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    modules = []
    for i, (fan_in, fan_out) in enumerate(zip(layers, layers[1:])):
        modules.append(torch.nn.Linear(fan_in, fan_out))
        if i + 2 < len(layers):
            modules.append({"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "sigmoid": torch.nn.Sigmoid}[activation]())
    model = torch.nn.Sequential(*modules)
    opt = {
        "adam": lambda p: torch.optim.Adam(p, lr=lr),
        "sgd": lambda p: torch.optim.SGD(p, lr=lr),
        "momentum": lambda p: torch.optim.SGD(p, lr=lr, momentum=0.9),
    }[optimizer](model.parameters())
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, layers[0])
    y = torch.randint(0, layers[-1], (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            loss = step()
        loss.item()
        times.append((time.perf_counter() - start) / steps)
    median = statistics.median(times)
    macs = sum(a * b for a, b in zip(layers, layers[1:]))
    # Forward, weight gradients, and input gradients of every layer but the first.
    flops = 2 * batch * (2 * macs + sum(a * b for a, b in zip(layers[1:], layers[2:])))
    return {
        "framework": f"pytorch {torch.__version__}",
        "device": "cpu",
        "layers": layers,
        "batch": batch,
        "optimizer": optimizer,
        "threads": threads,
        "step_time_median_ms": median * 1e3,
        "step_time_min_ms": min(times) * 1e3,
        "step_time_max_ms": max(times) * 1e3,
        "samples_per_s": batch / median,
        "gflop_per_s": flops / median / 1e9,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--layers", default="2,16,16,2")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--optimizer", default="adam")
    p.add_argument("--activation", default="relu")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=0, help="steps per repeat (0: about 0.2 s worth)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    layers = [int(w) for w in a.layers.split(",")]
    steps = a.steps
    if steps == 0:
        probe = run(layers, a.batch, a.optimizer, a.threads, a.warmup, 1, 10, a.activation, a.lr, a.seed)
        steps = max(10, int(0.2 / (probe["step_time_median_ms"] / 1e3)))
    print(json.dumps(run(layers, a.batch, a.optimizer, a.threads, a.warmup, a.repeats, steps, a.activation, a.lr, a.seed)))


if __name__ == "__main__":
    main()
