"""The benchmark scripts run (a smoke test with few repeats; their numbers are for humans)."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


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
