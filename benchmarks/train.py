"""Training-step benchmarks W1 (MLP), W2 (CNN), W3 (LSTM LM) and W5 (small GPT) of
../shared/BENCHMARKS.md: graphgrad eager next to PyTorch eager (when installed), ms per step
(forward, backward, optimizer update), with the ratio graphgrad/PyTorch.

    python benchmarks/train.py [--json out.json] [--repeats 30] [--only mlp,cnn,lstm,gpt]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import report, save_json, time_steps, torch_or_none  # noqa: E402


# ---- the four models, written once against a module namespace (gg.nn or torch.nn) -------------
def mlp(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def lstm_lm(nn):
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(65, 64)
            self.lstm = nn.LSTM(64, 128, batch_first=True)
            self.head = nn.Linear(128, 65)

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.head(out)

    return LM()


def gpt(nn, causal_mask):
    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(65, 128)
            self.pos = nn.Embedding(64, 128)
            self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, activation="gelu",
                                                                    batch_first=True, norm_first=True)
                                         for _ in range(2)])
            self.norm = nn.LayerNorm(128)
            self.head = nn.Linear(128, 65)
            self.mask = causal_mask

        def forward(self, tokens, positions):
            h = self.embed(tokens) + self.pos(positions)
            for block in self.blocks:
                h = block(h, src_mask=self.mask, is_causal=True)
            return self.head(self.norm(h))

    return GPT()


def _data(rng):
    return {
        "mlp": (rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128)),
        "cnn": (rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)),
        "lstm": (rng.integers(0, 65, (32, 35)), rng.integers(0, 65, (32, 35))),
        "gpt": (rng.integers(0, 65, (16, 64)), rng.integers(0, 65, (16, 64))),
    }


def graphgrad_steps(gg, data, which):
    gg.manual_seed(0)
    steps = {}
    if "mlp" in which or "cnn" in which:
        for name, build in (("mlp", mlp), ("cnn", cnn)):
            if name not in which:
                continue
            model, (x, y) = build(gg.nn), data[name]
            opt = gg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            steps[name] = _train_step(gg.cross_entropy, model, opt, lambda m, x=gg.tensor(x): m(x), gg.tensor(y), flat=False)
    if "lstm" in which:
        model, (tokens, targets) = lstm_lm(gg.nn), data["lstm"]
        opt = gg.optim.Adam(model.parameters(), lr=1e-3)
        steps["lstm"] = _train_step(gg.cross_entropy, model, opt, lambda m, t=gg.tensor(tokens): m(t), gg.tensor(targets), flat=True)
    if "gpt" in which:
        mask = gg.tensor(np.triu(np.full((64, 64), -np.inf, np.float32), 1))
        model, (tokens, targets) = gpt(gg.nn, mask), data["gpt"]
        opt = gg.optim.AdamW(model.parameters(), lr=3e-4)
        positions = gg.tensor(np.broadcast_to(np.arange(64), (16, 64)).copy())
        steps["gpt"] = _train_step(gg.cross_entropy, model, opt, lambda m, t=gg.tensor(tokens): m(t, positions), gg.tensor(targets),
                                flat=True)
    return steps


def _train_step(loss_fn, model, opt, run, targets, flat):
    """forward (``run(model)``), loss, backward, update — the same code for graphgrad and PyTorch."""

    def step():
        opt.zero_grad()
        logits = run(model)
        if flat:
            logits, y = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        else:
            y = targets
        loss = loss_fn(logits, y)
        loss.backward()
        opt.step()
        return loss

    return step


def torch_steps(torch, data, which):
    torch.manual_seed(0)
    nn, steps = torch.nn, {}
    f = torch.nn.functional
    for name, build in (("mlp", mlp), ("cnn", cnn)):
        if name in which:
            model, (x, y) = build(nn), data[name]
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            steps[name] = _train_step(f.cross_entropy, model, opt, lambda m, x=torch.tensor(x): m(x), torch.tensor(y), flat=False)
    if "lstm" in which:
        model, (tokens, targets) = lstm_lm(nn), data["lstm"]
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        steps["lstm"] = _train_step(f.cross_entropy, model, opt, lambda m, t=torch.tensor(tokens): m(t), torch.tensor(targets),
                                    flat=True)
    if "gpt" in which:
        mask = torch.triu(torch.full((64, 64), float("-inf")), 1)
        model, (tokens, targets) = gpt(nn, mask), data["gpt"]
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
        positions = torch.arange(64).expand(16, 64)
        steps["gpt"] = _train_step(f.cross_entropy, model, opt, lambda m, t=torch.tensor(tokens): m(t, positions),
                                   torch.tensor(targets), flat=True)
    return steps


TITLES = {"mlp": "W1 MLP 784-512-256-10, batch 128, SGD momentum",
          "cnn": "W2 CNN conv16-pool-conv32-pool-linear, batch 64, SGD momentum",
          "lstm": "W3 LSTM LM vocab 65, embed 64, hidden 128, seq 35, batch 32, Adam",
          "gpt": "W5 GPT d128, 4 heads, 2 layers, seq 64, batch 16, AdamW"}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default="mlp,cnn,lstm,gpt")
    args = parser.parse_args(argv)
    import graphgrad as gg

    which = args.only.split(",")
    data = _data(np.random.default_rng(0))
    ours = graphgrad_steps(gg, data, which)
    torch = torch_or_none()
    theirs = torch_steps(torch, data, which) if torch is not None else {}
    results = {}
    for name in which:
        steps = {"graphgrad eager": ours[name]}
        if name in theirs:
            steps[f"pytorch {torch.__version__} eager"] = theirs[name]
        rows = time_steps(steps, warmup=3, repeats=args.repeats, inner=1)
        report(TITLES[name], "ms", 1e3, rows, "graphgrad eager", None)
        results[name] = rows
    save_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
