#!/usr/bin/env python3
"""The PyTorch side of the GPT benchmark: BatchScope's GPT presets built the same way, the same
training step, timed the same way as `batchscope bench --json`.

The model is BatchScope's (nanoGPT's pre-LayerNorm blocks): token and learned position
embeddings; per block LayerNorm, one Linear to queries, keys and values, causal multi-head
attention (PyTorch's scaled_dot_product_attention, as nanoGPT uses), the output Linear and a
residual sum, then LayerNorm, Linear to 4d, GELU (tanh form, as BatchScope's), Linear back and a
residual sum; a final LayerNorm and a Linear head to the vocabulary, every Linear with a bias, no
dropout, no weight tying. AdamW with weight decay on the matrices and the token table only (as
BatchScope's: nanoGPT's split), cross-entropy over every position. Inputs are random token ids:
the step's time does not depend on which. Prints one JSON line: the median, min and max step
time, samples (windows) and tokens a second.
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F

# The same timing as the MLP benchmark's (this folder is on the path when run as a script).
from pytorch_bench import timed

PRESETS = {"gpt-tiny": (64, 2, 2), "gpt-baby": (128, 4, 4)}  # width, heads, blocks


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, 4 * d)
        self.out = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    def __init__(self, vocab, context, d, heads, blocks):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Embedding(context, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(blocks))
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def run(preset, vocab, context, batch, threads, warmup, repeats, steps, lr, seed):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    model = Gpt(vocab, context, *PRESETS[preset])
    decays = [p for n, p in model.named_parameters() if p.dim() >= 2 and "positions" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "positions" not in n)]
    opt = torch.optim.AdamW([{"params": decays, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}], lr=lr)
    x = torch.randint(0, vocab, (batch, context))
    y = torch.randint(0, vocab, (batch, context))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).view(-1, vocab), y.view(-1))
        loss.backward()
        opt.step()
        return loss

    times = timed(step, warmup, repeats, steps)
    median = statistics.median(times)
    return {
        "framework": f"pytorch {torch.__version__}",
        "device": "cpu",
        "model": preset,
        "vocab": vocab,
        "context": context,
        "batch": batch,
        "threads": threads,
        "step_time_median_ms": median * 1e3,
        "step_time_min_ms": min(times) * 1e3,
        "step_time_max_ms": max(times) * 1e3,
        "samples_per_s": batch / median,
        "tokens_per_s": batch * context / median,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="gpt-baby", choices=sorted(PRESETS))
    p.add_argument("--vocab", type=int, default=65)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch", type=int, default=12)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=0, help="steps per repeat (0: about 0.5 s worth)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    args = (a.model, a.vocab, a.context, a.batch, a.threads)
    steps = a.steps
    if steps == 0:
        probe = run(*args, a.warmup, 1, 3, a.lr, a.seed)
        steps = max(3, int(0.5 / (probe["step_time_median_ms"] / 1e3)))
    print(json.dumps(run(*args, a.warmup, a.repeats, steps, a.lr, a.seed)))


if __name__ == "__main__":
    main()
