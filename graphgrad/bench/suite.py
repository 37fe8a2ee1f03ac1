"""``python -m graphgrad bench``: the workloads W1..W6 of BENCHMARKS.md, graphgrad against PyTorch.

For each training workload (W1 MLP, W2 CNN, W3 LSTM LM, W5 GPT) three versions of one step are
timed interleaved in this process: graphgrad eager, graphgrad compiled (``gg.function`` of the whole
step: forward, loss, backward, optimizer update; the same closure as eager) and PyTorch eager. The
compiled step is first checked to follow eager (same initial model, the losses of a few steps agree).
W4 times per-op overhead, W6 the time and steps to 99% training accuracy on the spiral. Without
PyTorch, W1 and W4 are compared with hand-written NumPy and the other workloads only with eager.
Peak RSS and time to first step come from separate processes (``process.py``).

    python -m graphgrad bench [--only w1,w2,w3,w4,w5,w6,rss] [--repeats N] [--quick] [--json out.json]
                              [--no-torch]
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from typing import Any, Optional, Sequence

from graphgrad.backend import np
from graphgrad.bench import process, workloads
from graphgrad.bench.timing import THREAD_VARIABLES, THREADS, save_json, summary, time_steps, torch_or_none
from graphgrad.bench.workloads import TITLES

ALL = ("w1", "w2", "w3", "w4", "w5", "w6", "rss")
#: Targets of the ratio graphgrad / PyTorch eager (``None``: no target).
TARGETS = {"w1": (1.2, 0.9), "w2": (1.5, 1.0), "w3": (1.5, 1.0), "w4": (None, 0.15), "w5": (1.5, 1.0),
           "w6": (None, 0.35)}
#: Targets of the whole-process measurements: peak RSS graphgrad/PyTorch, and seconds to the first step.
RSS_TARGET, FIRST_STEP_TARGET = 0.3, 1.0
EAGER, COMPILED, NUMPY = "graphgrad eager", "graphgrad compiled", "numpy by hand"
TORCH = "pytorch eager"
LOSS_RTOL = 1e-4


def _settings(quick: bool, repeats: Optional[int]) -> dict:
    if quick:
        return {"repeats": repeats or 3, "warmup": 1, "check_steps": 2, "w6_runs": 1, "w6_budget": 20.0,
                "process_runs": 1}
    # W6: five interleaved runs of each version (a run is one to two seconds; PyTorch's own time to 99%
    # moved between 0.7 and 1.5 s from run to run here, so three medians flipped with one slow run)
    return {"repeats": repeats or 30, "warmup": 3, "check_steps": 3, "w6_runs": 5, "w6_budget": 60.0,
            "process_runs": 2}


def _groups(rows: Sequence[str]) -> dict:
    """Which library's threads each version uses (a pause separates blocks of different libraries)."""
    return {name: "torch" if name.startswith("pytorch") else "numpy" for name in rows}


def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def _loss(value) -> float:
    return float(value.item())


def check_compiled(eager, compiled, batch: tuple, steps: int) -> str:
    """Run ``steps`` steps of both from the same start; "ok" when the losses agree (rtol ``LOSS_RTOL``),
    else what differed."""
    for i in range(steps):
        a, b = _loss(eager(*batch)), _loss(compiled(*batch))
        if not abs(a - b) <= LOSS_RTOL * max(abs(a), abs(b), 1e-12):
            return f"mismatch at step {i + 1}: eager loss {a:.6g}, compiled {b:.6g}"
    return "ok"


# ---- the training workloads -------------------------------------------------------------------------
def bench_training(key: str, gg, torch, data: dict, cfg: dict) -> dict:
    """Time W1/W2/W3/W5: graphgrad eager, compiled, PyTorch eager (or NumPy by hand for W1)."""
    fw = workloads.graphgrad_framework()
    eager, batch = workloads.build_step(key, fw, data)
    twin, _ = workloads.build_step(key, fw, data)  # the same initial model, for the compiled step
    versions = {EAGER: lambda: eager(*batch)}
    entry: dict = {"title": TITLES[key], "unit": "ms", "scale": 1e3}
    try:
        compiled = gg.function(twin)
        entry["check"] = check_compiled(eager, compiled, batch, cfg["check_steps"])
        versions[COMPILED] = lambda: compiled(*batch)
    except Exception as exc:  # report, do not stop the suite
        entry["check"] = f"compiled step failed: {_error(exc)}"
    if torch is not None:
        tstep, tbatch = workloads.build_step(key, workloads.torch_framework(torch), data)
        versions[TORCH] = lambda: tstep(*tbatch)
    elif key == "w1":
        x, y = data["w1"]
        versions[NUMPY] = workloads.mlp_numpy_step(workloads.mlp_arrays((784, 512, 256, 10)), x, y, 0.01, 0.9)
    entry["rows"] = time_steps(versions, warmup=cfg["warmup"], repeats=cfg["repeats"], inner=2,
                               groups=_groups(versions))
    return _with_ratios(entry)


def bench_tiny(gg, torch, cfg: dict) -> dict:
    """W4: microseconds per op of the tiny chain, forward + backward."""
    x0 = np.random.default_rng(0).standard_normal(16).astype("float32")
    x = gg.tensor(x0, requires_grad=True)
    eager = workloads.tiny_chain_step(x)
    reference = workloads.tiny_chain_numpy(x0)
    versions = {EAGER: eager}
    entry: dict = {"title": TITLES["w4"], "unit": "us", "scale": 1e6 / workloads.N_OPS}
    try:
        @gg.function
        def chain(xt):
            loss = workloads.tiny_chain(xt, gg.tanh).sum()
            (g,) = gg.grad([loss], [xt])
            return loss, g

        expected = eager().numpy()
        got = chain(x)[1].numpy()
        ok = np.allclose(got, expected, rtol=1e-4) and np.allclose(got, reference()[1], rtol=1e-4)
        entry["check"] = "ok" if ok else "mismatch: the compiled gradient differs from eager"
        versions[COMPILED] = lambda: chain(x)
    except Exception as exc:
        entry["check"] = f"compiled step failed: {_error(exc)}"
    versions[NUMPY] = reference
    if torch is not None:
        versions[TORCH] = workloads.tiny_chain_step(torch.tensor(x0, requires_grad=True))
    entry["rows"] = time_steps(versions, warmup=cfg["warmup"] + 2, repeats=cfg["repeats"], inner=3,
                               groups=_groups(versions))
    return _with_ratios(entry)


def bench_spiral(gg, torch, cfg: dict) -> dict:
    """W6: seconds and steps to 99% training accuracy, each version from the same initial weights
    (the compiled time includes tracing and compiling the step). Rounds after the first run only
    while the workload has taken less than ``cfg["w6_budget"]`` seconds (a busy machine can slow
    PyTorch's small ops 10-100x)."""
    x, y = workloads.spiral_data()
    fw = workloads.graphgrad_framework()
    makers = {EAGER: (fw, lambda: workloads.spiral_step(fw, x, y)),
              COMPILED: (fw, lambda: gg.function(workloads.spiral_step(fw, x, y)))}
    if torch is not None:
        tfw = workloads.torch_framework(torch)
        makers[TORCH] = (tfw, lambda: workloads.spiral_step(tfw, x, y))
    seconds: dict = {name: [] for name in makers}
    steps: dict = {}
    entry: dict = {"title": TITLES["w6"], "unit": "s", "scale": 1.0, "check": "ok"}
    failed: set = set()
    began = time.perf_counter()
    for round_ in range(cfg["w6_runs"]):
        if round_ and time.perf_counter() - began > cfg["w6_budget"]:
            break
        for name, (framework, make) in makers.items():
            if name in failed:
                continue
            time.sleep(0.15)
            try:
                took, n = workloads.steps_to_accuracy(make(), framework, x, y, max_seconds=cfg["w6_budget"])
            except Exception as exc:
                entry["check"] = f"{name} failed: {_error(exc)}"
                failed.add(name)
                continue
            seconds[name].append(took)
            steps[name] = n
    entry["rows"] = {name: dict(summary(t), steps=steps[name]) for name, t in seconds.items() if t}
    if any(n is None for n in steps.values()):
        entry["check"] = (f"did not reach 99% accuracy within 20000 steps or {cfg['w6_budget']:.0f}s: "
                          + ", ".join(name for name, n in steps.items() if n is None))
    return _with_ratios(entry)


def _with_ratios(entry: dict) -> dict:
    """Add the reference row and ratios: eager and compiled against PyTorch eager, else against
    NumPy by hand, else compiled against eager only."""
    rows = entry["rows"]
    medians = {name: r["median"] for name, r in rows.items()}
    reference = TORCH if TORCH in rows else (NUMPY if NUMPY in rows else None)
    entry["reference"] = reference or "none (PyTorch not installed)"
    ratios = {}
    if reference is not None:
        for name, key in ((EAGER, "eager"), (COMPILED, "compiled")):
            if name in medians:
                ratios[key] = medians[name] / medians[reference]
    if EAGER in medians and COMPILED in medians:
        ratios["compiled_vs_eager"] = medians[COMPILED] / medians[EAGER]
    entry["ratios"] = ratios
    return entry


def format_workload(entry: dict) -> str:
    """One workload's table: median/min/max per version and the ratio to the reference."""
    unit, scale, rows = entry["unit"], entry["scale"], entry["rows"]
    reference = entry["reference"] if entry["reference"] in rows else None
    with_steps = any("steps" in r for r in rows.values())
    lines = [entry["title"], f"  {'version':<24}{'median':>12}{'min':>12}{'max':>12}{'steps' if with_steps else '':>8}"
                             f"   ratio to {reference or '-'}"]
    for name, r in rows.items():
        ratio = f"{r['median'] / rows[reference]['median']:.2f}x" if reference and name != reference else ""
        steps = str(r.get("steps")) if with_steps else ""
        lines.append(f"  {name:<24}{r['median'] * scale:>10.2f}{unit:>2}{r['min'] * scale:>10.2f}{unit:>2}"
                     f"{r['max'] * scale:>10.2f}{unit:>2}{steps:>8}   {ratio}")
    if "compiled_vs_eager" in entry["ratios"]:
        lines.append(f"  compiled / eager {entry['ratios']['compiled_vs_eager']:.2f}x")
    if entry.get("check", "ok") != "ok":
        lines.append(f"  NOTE: {entry['check']}")
    return "\n".join(lines)


# ---- summary ----------------------------------------------------------------------------------------
def summarize(results: dict) -> list:
    """One row per measured target: {workload, eager, compiled, target, met}."""
    rows = []
    for key in ("w1", "w2", "w3", "w4", "w5", "w6"):
        entry = results.get(key)
        if entry is None:
            continue
        ratios, against_torch = entry["ratios"], entry["reference"].startswith("pytorch")
        checks, texts = [], []
        for name, limit in zip(("eager", "compiled"), TARGETS[key]):
            if against_torch and limit is not None and name in ratios:
                checks.append(ratios[name] <= limit)
                texts.append(f"{name} <= {limit}")
        if "compiled_vs_eager" in ratios:  # gg.function is never slower than eager
            checks.append(ratios["compiled_vs_eager"] <= 1.0)
            texts.append("compiled <= eager")
        if not against_torch:
            texts.append("(the targets against PyTorch not checked)")
        rows.append({"workload": key.upper(), "reference": entry["reference"], "eager": ratios.get("eager"),
                     "compiled": ratios.get("compiled"), "compiled_vs_eager": ratios.get("compiled_vs_eager"),
                     "target": ", ".join(texts), "met": bool(checks) and all(checks) and entry.get("check") == "ok"})
    for key, entry in results.get("rss", {}).items():
        if "rss_ratio" in entry:
            first = entry["graphgrad"]["first_step_s"]
            rows.append({"workload": f"{key.upper()} process", "reference": "pytorch process",
                         "eager": entry["rss_ratio"], "compiled": None, "compiled_vs_eager": None,
                         "target": f"peak RSS <= {RSS_TARGET}x, first step {first:.2f}s <= {FIRST_STEP_TARGET}s",
                         "met": entry["rss_ratio"] <= RSS_TARGET and first <= FIRST_STEP_TARGET})
    return rows


def format_summary(rows: list) -> str:
    def ratio(value) -> str:
        return "-" if value is None else f"{value:.2f}x"

    lines = [f"{'workload':<12}{'eager':>8}{'compiled':>10}{'comp/eager':>12}  {'met?':<5} target (ratios to the reference)"]
    for r in rows:
        lines.append(f"{r['workload']:<12}{ratio(r['eager']):>8}{ratio(r['compiled']):>10}"
                     f"{ratio(r['compiled_vs_eager']):>12}  {'yes' if r['met'] else 'NO':<5} {r['target']}"
                     + ("" if r["reference"].startswith("pytorch") else f" [vs {r['reference']}]"))
    return "\n".join(lines)


def _commit() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + ("+modified" if dirty else "")) or "unknown"


def load_average() -> Optional[float]:
    """The 1-minute load average of the machine (None where the OS does not tell)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def metadata(gg, torch, cfg: dict, quick: bool) -> dict:
    from graphgrad.backend import blas

    return {"date": time.strftime("%Y-%m-%d %H:%M"), "commit": _commit(), "graphgrad": gg.__version__,
            "products": "MKL" if blas.available() else "NumPy's BLAS",
            "numpy": np.__version__, "pytorch": getattr(torch, "__version__", None),
            "python": platform.python_version(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "threads": THREADS, "repeats": cfg["repeats"], "quick": quick, "load_average": load_average()}


def busy_warning(load: Optional[float]) -> str:
    """A warning when other programs keep the machine busy ("" when quiet)."""
    cores = os.cpu_count() or 1
    if load is None or load <= cores / 2:
        return ""
    return (f"WARNING: the machine is busy (load average {load:.1f} on {cores} cores): timings are noisy, and "
            "PyTorch's OpenMP threads, which spin while they wait, slow down most; run on a quiet machine")


def run(only: Sequence[str] = ALL, repeats: Optional[int] = None, quick: bool = False,
        json_path: Optional[str] = None, use_torch: bool = True, out=print) -> dict:
    """Run the chosen workloads, print their tables and the summary; returns the results (also written
    to ``json_path``). ``use_torch=False`` measures as if PyTorch were not installed."""
    import graphgrad as gg

    unknown = set(only) - set(ALL)
    if unknown:
        raise ValueError(f"unknown workloads {sorted(unknown)}; choose from {', '.join(ALL)}")
    cfg = _settings(quick, repeats)
    torch = torch_or_none() if use_torch else None
    results: dict = {"meta": metadata(gg, torch, cfg, quick)}
    meta = results["meta"]
    out(f"graphgrad {meta['graphgrad']} ({meta['commit']}) vs PyTorch {meta['pytorch'] or 'not installed'}, "
        f"{meta['threads']} threads, {meta['machine']}, {meta['date']}; graphgrad's matrix products on "
        f"{meta['products']}")
    if meta["products"] != "MKL" and platform.machine().lower() in ("x86_64", "amd64"):
        out("NOTE: without MKL (the BLAS of PyTorch's CPU wheels) graphgrad's large products run on NumPy's "
            "BLAS (OpenBLAS in NumPy's wheels), slower at these sizes; `pip install \"graphgrad[mkl]\"` "
            "gives graphgrad the same kernels as PyTorch")
    if busy_warning(meta["load_average"]):
        out(busy_warning(meta["load_average"]))
    started = time.perf_counter()
    data = workloads.make_data()
    for key in only:
        if key == "rss":
            continue
        begin = time.perf_counter()
        if key == "w4":
            entry = bench_tiny(gg, torch, cfg)
        elif key == "w6":
            entry = bench_spiral(gg, torch, cfg)
        else:
            entry = bench_training(key, gg, torch, data, cfg)
        entry["seconds"] = time.perf_counter() - begin
        results[key] = entry
        out("\n" + format_workload(entry))
        time.sleep(0.2)
    if "rss" in only:
        frameworks = ("graphgrad", "pytorch") if torch is not None else ("graphgrad",)
        results["rss"] = process.measure_all(frameworks=frameworks, repeats=cfg["process_runs"])
        out("\nWhole training processes (peak RSS, time from process start to the end of the first step)")
        out(process.format_table(results["rss"]))
    results["summary"] = summarize(results)
    out("\nSummary: ratio graphgrad / PyTorch eager (lower is faster)")
    out(format_summary(results["summary"]))
    results["seconds"] = time.perf_counter() - started
    meta["load_average_after"] = load_average()
    out(f"\n(bench took {results['seconds']:.0f}s; load average {meta['load_average']} before, "
        f"{meta['load_average_after']} after)")
    save_json(json_path, results)
    return results


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="graphgrad bench", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", default=",".join(ALL), help=f"comma-separated subset of {','.join(ALL)}")
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds per workload (default 30; 3 quick)")
    parser.add_argument("--quick", action="store_true", help="few repeats (a smoke test; the numbers are rough)")
    parser.add_argument("--json", default=None, help="write the results to this JSON file")
    parser.add_argument("--no-torch", action="store_true", help="measure as if PyTorch were not installed")


def run_from_args(args: Any) -> int:
    """Run with parsed arguments. BLAS reads its thread count when NumPy loads, so when the thread
    variables are unset the suite runs in a child process that has them."""
    if any(name not in os.environ for name in THREAD_VARIABLES):
        env = dict(os.environ)
        for name in THREAD_VARIABLES:
            env.setdefault(name, str(THREADS))
        argv = ["--only", args.only] + (["--repeats", str(args.repeats)] if args.repeats else []) \
            + (["--quick"] if args.quick else []) + (["--json", args.json] if args.json else []) \
            + (["--no-torch"] if args.no_torch else [])
        return subprocess.run([sys.executable, "-m", "graphgrad.bench", *argv], env=env).returncode
    only = [k.strip().lower() for k in args.only.split(",") if k.strip()]
    run(only, args.repeats, args.quick, args.json, use_torch=not args.no_torch)
    return 0


__all__ = ["run", "main", "summarize", "format_summary", "format_workload", "TARGETS", "ALL"]
