"""Whole-process costs of training: peak RSS and time to the end of the first step.

They need processes of their own (PyTorch's import alone takes ~300 MB), so each measurement starts
a fresh Python that imports one framework only, builds the W1 or W2 model, runs a few training steps
and reports its own peak RSS (``VmHWM`` on Linux) and the moment its first step ended. The model and
step code are the framework-neutral functions of ``workloads.py``, sent as source.

The children keep compiled bytecode in a folder of this run (``PYTHONPYCACHEPREFIX``), even where the
environment says ``PYTHONDONTWRITEBYTECODE``: an installed package has its bytecode from install time,
and without it each start would compile every module of the framework again (half a second for
graphgrad from an editable checkout). The fastest of the repeats is reported, so the first one fills
the cache, for both frameworks alike.
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import time
from typing import Optional

from graphgrad.bench import workloads
from graphgrad.bench.timing import THREAD_VARIABLES, THREADS

_SETUP = {
    "graphgrad": ("import graphgrad as gg\n"
                  "nn, optim, tensor, cross_entropy, seed = gg.nn, gg.optim, gg.tensor, gg.cross_entropy, gg.manual_seed\n"),
    "pytorch": ("import torch\n"
                f"torch.set_num_threads({THREADS})\n"
                "nn, optim, tensor, seed = torch.nn, torch.optim, torch.tensor, torch.manual_seed\n"
                "cross_entropy = torch.nn.functional.cross_entropy\n"),
}

_MAIN = """
seed(0)
model = {model}(nn)
opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
rng = np.random.default_rng(0)
x = tensor(rng.standard_normal({shape}).astype(np.float32))
y = tensor(rng.integers(0, 10, {batch}))
step = training_step(cross_entropy, model, opt, flat=False)
step(x, y)
first = time.time()
for _ in range({more}):
    step(x, y)
print(json.dumps({{"first_step_end": first, "peak_rss_mb": peak_rss_mb()}}))
"""

# ru_maxrss of a process started by another one begins at the parent's peak (Linux carries it across
# fork and exec), so the child reads the peak of its own address space (VmHWM) where it can.
_PEAK_RSS = """
def peak_rss_mb():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20
"""

SHAPES = {"w1": ((128, 784), 128, "mlp"), "w2": ((64, 1, 28, 28), 64, "cnn")}


def child_script(framework: str, key: str, more_steps: int = 4) -> str:
    """The source of a training process of ``framework`` ("graphgrad" or "pytorch") on ``key``."""
    shape, batch, model = SHAPES[key]
    functions = "\n\n".join(inspect.getsource(f) for f in (workloads.mlp, workloads.cnn, workloads.training_step))
    return ("from __future__ import annotations\nimport json, resource, sys, time\nimport numpy as np\n" + _SETUP[framework] + "\n" + functions
            + _PEAK_RSS + _MAIN.format(model=model, shape=shape, batch=batch, more=more_steps))


_BYTECODE: list = []  # [folder] for this process's children


def _bytecode_folder() -> str:
    if not _BYTECODE:
        import atexit
        import shutil
        import tempfile

        _BYTECODE.append(tempfile.mkdtemp(prefix="graphgrad-bench-pycache-"))
        atexit.register(shutil.rmtree, _BYTECODE[0], True)
    return _BYTECODE[0]


def measure(framework: str, key: str, timeout: float = 120) -> dict:
    """Run one training process; returns {peak_rss_mb, first_step_s} or {error}."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = _bytecode_folder()
    for name in THREAD_VARIABLES:
        env.setdefault(name, str(THREADS))
    if framework == "graphgrad":  # the graphgrad being measured, wherever it was imported from
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    start = time.time()
    try:
        done = subprocess.run([sys.executable, "-c", child_script(framework, key)], capture_output=True, text=True,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"peak_rss_mb": result["peak_rss_mb"], "first_step_s": result["first_step_end"] - start}


def measure_all(keys=("w1", "w2"), frameworks=("graphgrad", "pytorch"), repeats: int = 2,
                pause: float = 0.2) -> dict:
    """Peak RSS (largest) and time to first step (smallest) over ``repeats`` processes per framework
    and workload, with the ratios graphgrad/PyTorch: {key: {framework: {...}, "rss_ratio", "first_step_ratio"}}."""
    results: dict = {}
    for key in keys:
        entry: dict = {}
        for framework in frameworks:
            runs = []
            for _ in range(repeats):
                runs.append(measure(framework, key))
                time.sleep(pause)
            good = [r for r in runs if "error" not in r]
            if not good:
                entry[framework] = runs[0]
                continue
            entry[framework] = {"peak_rss_mb": max(r["peak_rss_mb"] for r in good),
                                "first_step_s": min(r["first_step_s"] for r in good), "runs": len(good)}
        ours, theirs = entry.get("graphgrad", {}), entry.get("pytorch", {})
        if "peak_rss_mb" in ours and "peak_rss_mb" in theirs:
            entry["rss_ratio"] = ours["peak_rss_mb"] / theirs["peak_rss_mb"]
            entry["first_step_ratio"] = ours["first_step_s"] / theirs["first_step_s"]
        results[key] = entry
    return results


def torch_installed() -> bool:
    """Whether PyTorch can be imported (checked without importing it here)."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def format_table(results: dict) -> str:
    """The process measurements as a text table."""
    lines = [f"{'process':<26}{'peak RSS MB':>13}{'first step s':>14}"]
    for key, entry in results.items():
        for framework in ("graphgrad", "pytorch"):
            r: Optional[dict] = entry.get(framework)
            if r is None:
                continue
            if "error" in r:
                lines.append(f"{key.upper() + ' ' + framework:<26}  failed: {r['error']}")
            else:
                lines.append(f"{key.upper() + ' ' + framework:<26}{r['peak_rss_mb']:>13.0f}{r['first_step_s']:>14.2f}")
        if "rss_ratio" in entry:
            lines.append(f"{key.upper() + ' graphgrad/pytorch':<26}{entry['rss_ratio']:>12.2f}x"
                         f"{entry['first_step_ratio']:>13.2f}x")
    return "\n".join(lines)


__all__ = ["measure", "measure_all", "child_script", "format_table", "torch_installed"]
