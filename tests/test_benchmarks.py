"""The benchmark scripts and ``python -m graphgrad bench`` run (smoke tests with few repeats; their
numbers are for humans, never asserted)."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from graphgrad.bench import process, suite

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


@pytest.mark.parametrize("script, args", [
    ("overhead.py", ["--repeats", "2"]),
    ("graph_mode.py", ["--repeats", "2"]),
    ("compile.py", ["--repeats", "2"]),
    ("train.py", ["--repeats", "1", "--only", "mlp"]),
])
def test_benchmark_script_runs(script, args, tmp_path):
    out = tmp_path / "result.json"
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), *args, "--json", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ratio" in result.stdout and out.exists()


def _bench(tmp_path, only: str, *options: str) -> tuple:
    out = tmp_path / "bench.json"
    result = subprocess.run([sys.executable, "-m", "graphgrad", "bench", "--quick", "--only", only, "--json", str(out),
                             *options], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    with open(out) as fh:
        return json.load(fh), result.stdout


def _check_timed(entry: dict, reference: str) -> None:
    assert entry["check"] == "ok", entry["check"]
    assert {"graphgrad eager", "graphgrad compiled", reference} <= set(entry["rows"])
    assert all({"median", "min", "max"} <= set(r) for r in entry["rows"].values())
    assert entry["reference"] == reference and {"eager", "compiled", "compiled_vs_eager"} <= set(entry["ratios"])


@pytest.mark.skipif(not process.torch_installed(), reason="PyTorch is the reference of this run")
def test_bench_quick_against_pytorch(tmp_path):
    results, stdout = _bench(tmp_path, "w1,w4")
    assert {"meta", "w1", "w4", "summary"} <= set(results)
    assert results["meta"]["quick"] is True and results["meta"]["commit"] and results["meta"]["pytorch"]
    _check_timed(results["w1"], "pytorch eager")
    _check_timed(results["w4"], "pytorch eager")
    assert "numpy by hand" in results["w4"]["rows"]
    assert [r["workload"] for r in results["summary"]] == ["W1", "W4"]
    assert "Summary" in stdout and "met?" in stdout


def test_bench_quick_without_pytorch(tmp_path):
    results, stdout = _bench(tmp_path, "w1,w6,rss", "--no-torch")
    assert results["meta"]["pytorch"] is None
    _check_timed(results["w1"], "numpy by hand")
    w6 = results["w6"]
    assert w6["check"] == "ok" and set(w6["rows"]) == {"graphgrad eager", "graphgrad compiled"}
    steps = {name: r["steps"] for name, r in w6["rows"].items()}
    assert len(set(steps.values())) == 1 and None not in steps.values()  # same start, same steps to 99%
    assert w6["ratios"].keys() == {"compiled_vs_eager"}
    for key in ("w1", "w2"):
        ours = results["rss"][key]["graphgrad"]
        assert "error" not in ours, ours
        assert ours["peak_rss_mb"] > 10 and 0 < ours["first_step_s"] < 60
        assert "pytorch" not in results["rss"][key]
    assert [r["workload"] for r in results["summary"]] == ["W1", "W6"]
    assert "peak RSS" in stdout


def test_summary_marks_targets():
    entry = {"ratios": {"eager": 1.1, "compiled": 0.95, "compiled_vs_eager": 0.86}, "reference": "pytorch eager",
             "check": "ok"}
    rows = suite.summarize({"w1": entry, "w2": dict(entry), "w3": dict(entry, check="mismatch at step 1")})
    met = {r["workload"]: r["met"] for r in rows}
    assert met == {"W1": False, "W2": True, "W3": False}  # W1 compiled > 0.9; W3 did not follow eager
    assert "W1" in suite.format_summary(rows)
    with pytest.raises(ValueError):
        suite.run(["w9"])


def test_gpu_benchmark_runs_on_the_emulated_device(tmp_path):
    out = tmp_path / "gpu.json"
    result = subprocess.run([sys.executable, str(BENCHMARKS / "gpu.py"), "--device", "emulated", "--only", "w1",
                             "--repeats", "1", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "graphgrad emulated" in result.stdout and out.exists()
