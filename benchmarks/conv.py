"""Convolution micro-benchmarks: graphgrad's conv2d against PyTorch's (when installed), forward alone
and forward + backward (gradients in the input and the weight), interleaved in one process with a
pause between the two libraries (the threads one leaves spinning would slow the other).

Cases: the two convolutions of W2 (../shared/BENCHMARKS.md), a grouped convolution, and depthwise
3x3 convolutions as in MobileNet-style models (stride 1 and 2, one with a channel multiplier).

    python benchmarks/conv.py [--json out.json] [--repeats 20] [--only w2,grouped,depthwise]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import save_json, time_steps, torch_or_none  # noqa: E402  (first: sets the BLAS threads)

import numpy as np  # noqa: E402


# name: (family, input shape, weight shape, stride, padding, groups)
CASES = {
    "W2 conv1 (64,1,28,28) 1->16 3x3": ("w2", (64, 1, 28, 28), (16, 1, 3, 3), 1, 1, 1),
    "W2 conv2 (64,16,14,14) 16->32 3x3": ("w2", (64, 16, 14, 14), (32, 16, 3, 3), 1, 1, 1),
    "grouped (8,64,28,28) 64->64 3x3 g=4": ("grouped", (8, 64, 28, 28), (64, 16, 3, 3), 1, 1, 4),
    "grouped (1,256,14,14) 256->256 3x3 g=32": ("grouped", (1, 256, 14, 14), (256, 8, 3, 3), 1, 1, 32),
    "depthwise (1,96,56,56) 3x3": ("depthwise", (1, 96, 56, 56), (96, 1, 3, 3), 1, 1, 96),
    "depthwise (1,96,112,112) 3x3 stride 2": ("depthwise", (1, 96, 112, 112), (96, 1, 3, 3), 2, 1, 96),
    "depthwise (1,1152,7,7) 5x5": ("depthwise", (1, 1152, 7, 7), (1152, 1, 5, 5), 1, 2, 1152),
    "depthwise (8,32,112,112) 3x3": ("depthwise", (8, 32, 112, 112), (32, 1, 3, 3), 1, 1, 32),
    "depthwise x2 (8,32,56,56) 3x3": ("depthwise", (8, 32, 56, 56), (64, 1, 3, 3), 1, 1, 32),
}


def _steps(conv, grad, tensor, x, w, g, stride, padding, groups):
    """(forward, forward + backward) step functions for one library."""
    xt, wt, gt = tensor(x, True), tensor(w, True), tensor(g, False)

    def forward():
        return conv(xt, wt, stride=stride, padding=padding, groups=groups)

    def backward():
        return grad(conv(xt, wt, stride=stride, padding=padding, groups=groups), xt, wt, gt)

    return forward, backward


def graphgrad_fns(gg):
    return (gg.conv2d, lambda y, x, w, g: gg.grad([y], [x, w], [g]),
            lambda a, rg: gg.tensor(a, requires_grad=rg))


def torch_fns(torch):
    return (torch.nn.functional.conv2d, lambda y, x, w, g: torch.autograd.grad(y, (x, w), g),
            lambda a, rg: torch.tensor(a, requires_grad=rg))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default="w2,grouped,depthwise")
    args = parser.parse_args(argv)
    import graphgrad as gg

    torch = torch_or_none()
    families = args.only.split(",")
    rng = np.random.default_rng(0)
    results = {}
    for name, (family, xs, ws, stride, padding, groups) in CASES.items():
        if family not in families:
            continue
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        out = gg.conv2d(gg.tensor(x), gg.tensor(w), stride=stride, padding=padding, groups=groups)
        g = rng.standard_normal(out.shape).astype(np.float32)
        fwd, bwd = _steps(*graphgrad_fns(gg), x, w, g, stride, padding, groups)
        steps = {"graphgrad forward": fwd, "graphgrad fwd+bwd": bwd}
        if torch is not None:
            tf, tb = _steps(*torch_fns(torch), x, w, g, stride, padding, groups)
            steps.update({"pytorch forward": tf, "pytorch fwd+bwd": tb})
        groups = {name: name.split()[0] for name in steps}  # pause between libraries: spinning threads
        rows = time_steps(steps, warmup=2, repeats=args.repeats, inner=3, groups=groups)
        print(f"\n{name}")
        for kind in ("forward", "fwd+bwd"):
            ours = rows[f"graphgrad {kind}"]["median"]
            line = f"  {kind:<10}graphgrad {ours * 1e3:8.3f} ms"
            if torch is not None:
                theirs = rows[f"pytorch {kind}"]["median"]
                line += f"   pytorch {theirs * 1e3:8.3f} ms   ratio {ours / theirs:5.2f}x"
            print(line)
        results[name] = rows
    save_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
