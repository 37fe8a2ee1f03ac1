"""``@gg.function`` against eager mode across models and shapes: compiled must never be slower.

Each case is one training step (forward, loss, backward, optimizer step) written once and run both
eagerly and as ``gg.function(step)``, timed interleaved in one process; the report lists
compiled/eager per case and flags every case where the compiled step is slower than eager.

    python benchmarks/function_vs_eager.py [--json out.json] [--repeats 15] [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import save_json, time_steps  # noqa: E402  (first: sets the BLAS threads)

import numpy as np  # noqa: E402


def _step(gg, model, opt, inputs, target, flat=False):
    def step():
        opt.zero_grad()
        out = model(*inputs)
        y = target
        if flat:
            out, y = out.reshape(-1, out.shape[-1]), target.reshape(-1)
        loss = gg.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss

    return step


def cases(gg, quick: bool) -> dict:
    """name -> a factory making a fresh (eager) training step."""
    nn = gg.nn
    made = {}

    def mlp(batch, width, opt_name):
        def make():
            gg.manual_seed(0)
            rng = np.random.default_rng(0)  # the same data for the eager and the compiled step
            model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, width), nn.Tanh(),
                                  nn.Linear(width, 10))
            opt = (gg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if opt_name == "sgd"
                   else gg.optim.Adam(model.parameters(), lr=1e-3))
            x = gg.tensor(rng.standard_normal((batch, 64)).astype(np.float32))
            return _step(gg, model, opt, (x,), gg.tensor(rng.integers(0, 10, batch)))
        return make

    def cnn(batch, channels, size):
        def make():
            gg.manual_seed(0)
            rng = np.random.default_rng(0)  # the same data for the eager and the compiled step
            model = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10))
            opt = gg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            x = gg.tensor(rng.standard_normal((batch, 3, size, size)).astype(np.float32))
            return _step(gg, model, opt, (x,), gg.tensor(rng.integers(0, 10, batch)))
        return make

    def rnn(kind, batch, seq, hidden):
        def make():
            gg.manual_seed(0)
            rng = np.random.default_rng(0)  # the same data for the eager and the compiled step

            class LM(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(50, 32)
                    self.rnn = getattr(nn, kind)(32, hidden, batch_first=True)
                    self.head = nn.Linear(hidden, 50)

                def forward(self, t):
                    return self.head(self.rnn(self.embed(t))[0])

            model = LM()
            opt = gg.optim.Adam(model.parameters(), lr=1e-3)
            t = gg.tensor(rng.integers(0, 50, (batch, seq)))
            return _step(gg, model, opt, (t,), gg.tensor(rng.integers(0, 50, (batch, seq))), flat=True)
        return make

    def transformer(batch, seq, d):
        def make():
            gg.manual_seed(0)
            rng = np.random.default_rng(0)  # the same data for the eager and the compiled step

            class T(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(50, d)
                    self.block = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, activation="gelu",
                                                            batch_first=True, norm_first=True)
                    self.head = nn.Linear(d, 50)

                def forward(self, t):
                    return self.head(self.block(self.embed(t), is_causal=False))

            model = T()
            opt = gg.optim.AdamW(model.parameters(), lr=1e-3)
            t = gg.tensor(rng.integers(0, 50, (batch, seq)))
            return _step(gg, model, opt, (t,), gg.tensor(rng.integers(0, 50, (batch, seq))), flat=True)
        return make

    for batch in ((1, 256) if quick else (1, 16, 256, 2048)):
        made[f"mlp b{batch} sgd"] = mlp(batch, 128, "sgd")
    made["mlp b64 w512 adam"] = mlp(64, 512, "adam")
    for batch, channels, size in (((2, 8, 16),) if quick else ((2, 8, 16), (32, 16, 32))):
        made[f"cnn b{batch} c{channels} {size}x{size}"] = cnn(batch, channels, size)
    for kind in ("LSTM",) if quick else ("LSTM", "GRU", "RNN"):
        made[f"{kind.lower()} b8 t12 h32"] = rnn(kind, 8, 12, 32)
    if not quick:
        made["lstm b32 t35 h128"] = rnn("LSTM", 32, 35, 128)
    made["transformer b4 t16 d32"] = transformer(4, 16, 32)
    if not quick:
        made["transformer b16 t64 d128"] = transformer(16, 64, 128)
    return made


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    import graphgrad as gg

    results, slower = {}, []
    print(f"{'case':<32}{'eager':>12}{'compiled':>12}   compiled/eager")
    for name, make in cases(gg, args.quick).items():
        eager, compiled = make(), gg.function(make())
        for _ in range(2):  # same start: the compiled step must follow eager
            a, b = float(eager().item()), float(compiled().item())
            np.testing.assert_allclose(b, a, rtol=2e-4, err_msg=name)
        rows = time_steps({"eager": eager, "compiled": compiled}, warmup=2, repeats=args.repeats, inner=1)
        e, c = rows["eager"]["median"], rows["compiled"]["median"]
        results[name] = {"eager_s": e, "compiled_s": c, "ratio": c / e}
        flag = "  <- compiled slower" if c > e else ""
        print(f"{name:<32}{e * 1e3:>10.3f}ms{c * 1e3:>10.3f}ms   {c / e:.2f}x{flag}")
        if c > e:
            slower.append(name)
    print(f"compiled slower than eager in {len(slower)} of {len(results)} cases" + (f": {slower}" if slower else ""))
    save_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
