"""GPU training steps: graphgrad on a device (CuPy) against PyTorch CUDA, interleaved in one process.

W1 (MLP), W2 (CNN), W3 (LSTM LM) and W5 (GPT) of BENCHMARKS.md, every tensor and parameter on the
device (``with gg.device(...)`` / ``torch.set_default_device``), each step followed by a device
synchronize so the time is the GPU's work, not just its queueing. Prints ratios graphgrad / PyTorch.

    python benchmarks/gpu.py [--device cuda] [--only w1,w2] [--repeats 10] [--json out.json]

``--device emulated`` runs graphgrad's steps on the emulated device (a smoke test on a machine
without a GPU: the timings are NumPy's, and there is no PyTorch column).
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402,F401  (2 BLAS threads, set before NumPy loads)

import graphgrad as gg  # noqa: E402
from graphgrad.bench import workloads  # noqa: E402


def _graphgrad_step(key: str, device: str, data: dict):
    with gg.device(device):
        step, batch = workloads.build_step(key, workloads.graphgrad_framework(), data)

    def run():
        with gg.device(device):
            step(*batch)
        gg.cuda.synchronize()

    return run


def _torch_step(key: str, torch, data: dict):
    previous = torch.get_default_device()
    torch.set_default_device("cuda")
    try:
        step, batch = workloads.build_step(key, workloads.torch_framework(torch), data)
    finally:
        torch.set_default_device(previous)

    def run():
        step(*batch)
        torch.cuda.synchronize()

    return run


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="graphgrad's device: cuda[:N] or emulated")
    parser.add_argument("--only", default="w1,w2,w3,w5")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.device.startswith("cuda") and not gg.cuda.is_available():
        print("no GPU here: CuPy sees none (pip install 'graphgrad[cuda]' on a machine with a GPU), "
              "or run --device emulated for a smoke test")
        return {}
    torch = common.torch_or_none()
    with_torch = args.device.startswith("cuda") and torch is not None and torch.cuda.is_available()
    data = workloads.make_data()
    results = {}
    for key in args.only.split(","):
        steps = {f"graphgrad {args.device}": _graphgrad_step(key, args.device, data)}
        if with_torch:
            steps["pytorch cuda"] = _torch_step(key, torch, data)
        rows = common.time_steps(steps, warmup=2, repeats=args.repeats, inner=1)
        baseline = f"graphgrad {args.device}"
        if with_torch:
            common.report(workloads.TITLES[key], "ms", 1e3, rows, baseline, None)
        else:
            r = rows[baseline]
            print(f"{workloads.TITLES[key]}: {baseline} median {r['median'] * 1e3:.2f} ms "
                  f"(min {r['min'] * 1e3:.2f}; no PyTorch CUDA to compare: no ratio)")
        results[key] = rows
    common.save_json(args.json, {"device": args.device, "results": results})
    return results


if __name__ == "__main__":
    main()
