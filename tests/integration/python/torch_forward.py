"""The forward pass of a model saved by BatchScope, computed with NumPy from the safetensors file
as PyTorch would compute it from that state_dict (NCHW images, y = x @ W.T + b), for the
weights test: reads the file with the safetensors package and prints the logits as JSON.

usage: torch_forward.py WEIGHTS.safetensors INPUTS.json
INPUTS.json: {"layers": [...the layer list...], "image": [H, W, C] or null, "x": [[...], ...]}
(x: one row a sample, an image's values channels last, as BatchScope reads them).
"""

import json
import sys

import numpy as np
from safetensors.numpy import load_file


def conv2d(x, w, b):
    # x: [N, C, H, W]; w: [O, C, K, K]; zero padding that keeps the size, stride 1.
    k = w.shape[2]
    p = k // 2
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + 2 * p, wd + 2 * p), dtype=np.float64)
    xp[:, :, p : p + h, p : p + wd] = x
    out = np.zeros((n, w.shape[0], h, wd))
    for ky in range(k):
        for kx in range(k):
            patch = xp[:, :, ky : ky + h, kx : kx + wd]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, ky, kx])
    return out + b[None, :, None, None]


def main():
    tensors = {k: v.astype(np.float64) for k, v in load_file(sys.argv[1]).items()}
    spec = json.load(open(sys.argv[2]))
    x = np.array(spec["x"], dtype=np.float64)
    if spec["image"] is not None:
        h, w, c = spec["image"]
        x = x.reshape(len(x), h, w, c).transpose(0, 3, 1, 2)
    names = {}
    for i, layer in enumerate(spec["layers"]):
        kind = layer["kind"]
        if kind in ("dense", "conv2d", "layer_norm"):
            weight, bias = tensors[f"{i}.weight"], tensors[f"{i}.bias"]
            names[f"{i}.weight"] = list(weight.shape)
            names[f"{i}.bias"] = list(bias.shape)
        if kind == "dense":
            x = x @ weight.T + bias
        elif kind == "conv2d":
            x = conv2d(x, weight, bias)
        elif kind == "max_pool2d":
            n, c, h, w = x.shape
            x = x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        elif kind == "flatten":
            x = x.reshape(len(x), -1)
        elif kind == "layer_norm":
            mean = x.mean(axis=1, keepdims=True)
            var = x.var(axis=1, keepdims=True)
            x = (x - mean) / np.sqrt(var + 1e-5) * weight + bias
        elif kind == "activation":
            f = layer["function"]
            if f == "relu":
                x = np.maximum(x, 0)
            elif f == "tanh":
                x = np.tanh(x)
            elif f == "sigmoid":
                x = 1 / (1 + np.exp(-x))
            elif f == "gelu":
                x = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    print(json.dumps({"shapes": names, "logits": x.tolist(), "tensors": sorted(tensors)}))


main()
