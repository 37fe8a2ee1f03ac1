"""The launcher: ``python -m graphgrad.distributed.run -n N script args`` over the installed mpiexec."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from graphgrad.distributed import run
from tests.distributed.launch import ROOT, needs_mpi

SCRIPT = """
import sys
import graphgrad as gg
import graphgrad.distributed as dist
dist.init()
total = int(dist.all_reduce(gg.tensor([dist.rank()])).item())
if dist.rank() == 0:
    print("world", dist.world_size(), "ranks sum", total, "args", sys.argv[1:], flush=True)
"""


@needs_mpi
def test_the_launcher_starts_the_ranks_and_passes_arguments(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-m", "graphgrad.distributed.run", "-n", "3", str(script), "--epochs", "2"],
                         capture_output=True, text=True, timeout=90, env=env)
    assert out.returncode == 0, out.stderr
    assert "world 3 ranks sum 3 args ['--epochs', '2']" in out.stdout


def test_a_script_without_a_launcher_is_a_world_of_one(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")}
    env["PYTHONPATH"] = ROOT
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=90, env=env)
    assert out.returncode == 0, out.stderr
    assert "world 1 ranks sum 0" in out.stdout


def test_the_command_line_for_several_machines(monkeypatch):
    monkeypatch.setattr(run, "_is_open_mpi", lambda mpiexec: False)
    line = run.command(8, ["train.py", "--lr", "0.1"], hostfile="hosts.txt", mpiexec="mpiexec", python="python3")
    assert line == ["mpiexec", "-n", "8", "-f", "hosts.txt", "python3", "train.py", "--lr", "0.1"]
    line = run.command(4, ["-m", "pkg.train"], hosts="a,b", mpiexec="mpiexec", python="python3")
    assert line == ["mpiexec", "-n", "4", "-hosts", "a,b", "python3", "-m", "pkg.train"]
    monkeypatch.setattr(run, "_is_open_mpi", lambda mpiexec: True)
    line = run.command(4, ["t.py"], hostfile="h", hosts="a,b", mpiexec="mpiexec", python="python3")
    assert line[:7] == ["mpiexec", "-n", "4", "--hostfile", "h", "--host", "a,b"]


def test_the_launcher_needs_a_script(capsys):
    try:
        run.main(["-n", "2"])
    except SystemExit as stop:
        assert stop.code == 2
    assert "give the script to run" in capsys.readouterr().err


@needs_mpi
def test_the_distributed_benchmark_runs(tmp_path):
    out = tmp_path / "dist.json"
    result = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "distributed.py"), "--quick", "--json",
                             str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "all-reduce, 2 ranks" in result.stdout and "hidden" in result.stdout and out.exists()
    with open(out) as f:
        saved = json.load(f)
    assert saved["single"]["workloads"]["w1"]["window_s"] > 0
    assert {"step_s", "local_step_s", "lockstep_step_s", "comm_s", "hidden_fraction"} <= set(
        saved["parallel"][0]["workloads"]["w1"])
    merged = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "distributed.py"), "--merge", str(out),
                             str(out)], capture_output=True, text=True, timeout=60)
    assert merged.returncode == 0 and "medians of 2 runs" in merged.stdout, merged.stderr[-2000:]


def test_the_scaling_model_prints_its_table(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("scaling_model", os.path.join(ROOT, "benchmarks", "scaling_model.py"))
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    rows = model.main(["--markdown"])
    assert len(rows) == 2 * 3 * 3 and "| w5 | 100 Gb/s RDMA | 512 |" in capsys.readouterr().out
    # the ring's bandwidth term approaches 2 S / B; its latency term grows with N
    assert abs(model.ring_time(1e9, 10 ** 6, 1e9, 0.0) - 2.0) < 1e-5
    assert model.ring_time(0.0, 9, 1e9, 1e-6, buckets=2) == 2 * 2 * 8 * 1e-6
    # one bucket overlaps nothing; many overlap up to the backward window, the last never
    assert model.exposed(3.0, 10.0, 1) == 3.0 and model.exposed(3.0, 10.0, 3) == 1.0
    assert model.exposed(30.0, 10.0, 2) == 25.0
    # hierarchical (free links inside a machine): 2 (M-1) latency terms across machines instead of 2 (N-1)
    flat = model.ring_time(8e6, 512, 1e9, 1e-5)
    tiered = model.hierarchical_time(8e6, 64, 8, 1e9, 1e-5, float("inf"), 0.0)
    bytes_term = 2 * 8e6 / 1e9 * (511 / 512 - 63 / 64)
    assert abs((flat - tiered) - (2 * (511 - 63) * 1e-5 + bytes_term)) < 1e-12


def test_the_scaling_model_fits_measured_all_reduces(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("scaling_model", os.path.join(ROOT, "benchmarks", "scaling_model.py"))
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    sizes = [4096, 2 ** 20, 2 ** 26]
    tables = [{"ranks": n, "rows": [{"bytes": b, "mpi4py_s": model.ring_time(b, n, 2e9, 5e-6),
                                     "graphgrad_s": model.ring_time(b, n, 2e9, 5e-6) + 3e-5,
                                     "graphgrad_unchecked_s": model.ring_time(b, n, 2e9, 5e-6)} for b in sizes]}
              for n in (2, 4)]
    bandwidth, latency = model.fit([(2, r["bytes"], r["mpi4py_s"]) for r in tables[0]["rows"]])
    assert abs(bandwidth / 2e9 - 1) < 1e-9 and abs(latency / 5e-6 - 1) < 1e-6
    rows = model.check({"allreduce": tables}, cores=4)
    assert len(rows) == 6 and all(abs(r["mpi4py_s"] / r["model_s"] - 1) < 1e-6 for r in rows)
    assert all(abs(r["graphgrad_s"] / r["model_checked_s"] - 1) < 1e-6 for r in rows)  # handshake: 30 us
    assert "bandwidth 2.00 GB/s, latency 5.0 us" in capsys.readouterr().out
