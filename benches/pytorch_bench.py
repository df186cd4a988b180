#!/usr/bin/env python3
"""The PyTorch side of BatchScope's CPU benchmark: the same training step, timed the same way.

For each configuration: build nn.Sequential(Linear, act, ..., Linear) — after, with --conv, one
block per value of Conv2d(k×k, zero padding that keeps the size), act, MaxPool2d(2), then
Flatten — Adam (or SGD),
CrossEntropyLoss, random inputs and labels; run warm-up steps, then `repeats` timed runs of
`steps` optimizer steps each (zero_grad, forward, loss, backward, step), and print one JSON line
with the median, min and max step time. Same statistics as `batchscope bench --json`.
"""
import argparse
import json
import statistics
import time

import torch


def conv_blocks(conv, kernel, image, act):
    """The convolution blocks, the flattened width after them, and each one's MACs per sample."""
    height, width, channels = image
    modules, macs = [], []
    for filters in conv:
        modules += [torch.nn.Conv2d(channels, filters, kernel, padding=kernel // 2), act(), torch.nn.MaxPool2d(2)]
        macs.append(height * width * kernel * kernel * channels * filters)
        height, width, channels = height // 2, width // 2, filters
    if conv:
        modules.append(torch.nn.Flatten())
    return modules, height * width * channels, macs


def timed(step, warmup, repeats, steps):
    """Seconds a step of `step()` (which returns the loss) took in each of `repeats` runs of
    `steps` steps, after `warmup` untimed ones; each run ends by reading the loss, so its work
    is done."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            loss = step()
        loss.item()
        times.append((time.perf_counter() - start) / steps)
    return times


def run(layers, batch, optimizer, threads, warmup, repeats, steps, activation, lr, seed, conv=(), kernel=3, image=None):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "sigmoid": torch.nn.Sigmoid}[activation]
    modules, conv_macs = [], []
    if conv:
        # With blocks, --layers lists the dense layers after them (hidden widths, classes).
        modules, flat, conv_macs = conv_blocks(conv, kernel, image, act)
        layers = [flat] + layers
    for i, (fan_in, fan_out) in enumerate(zip(layers, layers[1:])):
        modules.append(torch.nn.Linear(fan_in, fan_out))
        if i + 2 < len(layers):
            modules.append(act())
    model = torch.nn.Sequential(*modules)
    opt = {
        "adam": lambda p: torch.optim.Adam(p, lr=lr),
        "sgd": lambda p: torch.optim.SGD(p, lr=lr),
        "momentum": lambda p: torch.optim.SGD(p, lr=lr, momentum=0.9),
    }[optimizer](model.parameters())
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, image[2], image[0], image[1]) if conv else torch.randn(batch, layers[0])
    y = torch.randint(0, layers[-1], (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    times = timed(step, warmup, repeats, steps)
    median = statistics.median(times)
    # Forward, weight gradients, and input gradients of every layer but the first, as
    # `batchscope bench` counts them.
    products = conv_macs + [a * b for a, b in zip(layers, layers[1:])]
    flops = 2 * batch * (3 * sum(products) - products[0])
    return {
        "framework": f"pytorch {torch.__version__}",
        "device": "cpu",
        "layers": layers,
        "conv": list(conv),
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
    p.add_argument("--conv", default="", help="filters of each convolution block, e.g. 8,16")
    p.add_argument("--conv-kernel", type=int, default=3)
    p.add_argument("--image", default="28,28,1", help="height,width,channels of the input images")
    a = p.parse_args()
    layers = [int(w) for w in a.layers.split(",")]
    conv = [int(c) for c in a.conv.split(",") if c]
    image = [int(v) for v in a.image.split(",")]
    shape = dict(conv=conv, kernel=a.conv_kernel, image=image)
    steps = a.steps
    if steps == 0:
        probe = run(layers, a.batch, a.optimizer, a.threads, a.warmup, 1, 10, a.activation, a.lr, a.seed, **shape)
        steps = max(10, int(0.2 / (probe["step_time_median_ms"] / 1e3)))
    print(json.dumps(run(layers, a.batch, a.optimizer, a.threads, a.warmup, a.repeats, steps, a.activation, a.lr, a.seed, **shape)))


if __name__ == "__main__":
    main()
