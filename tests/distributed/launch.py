"""Run a script on several MPI ranks from a test (skipped where no MPI is installed)."""
from __future__ import annotations

import os
import subprocess
import textwrap

import pytest

from graphgrad.distributed.run import command

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def mpi_available() -> bool:
    try:
        import mpi4py.MPI  # noqa: F401 (loading it finds the MPI library)
    except Exception:
        return False
    try:
        command(1, ["-c", "pass"])
    except SystemExit:
        return False
    return True


needs_mpi = pytest.mark.skipif(not mpi_available(), reason="needs mpi4py and mpiexec (pip install 'graphgrad[mpi]')")


def run_ranks(n: int, script: str, *args: str, timeout: float = 90, env: dict | None = None,
              tmp_path=None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``script`` (a path, or Python source when it contains a newline) on ``n`` ranks.

    Returns the finished process (``stdout``/``stderr`` as text); with ``check`` a non-zero exit
    fails the test with both outputs shown.
    """
    if "\n" in script:
        assert tmp_path is not None, "pass tmp_path to run source text"
        path = os.path.join(str(tmp_path), "rank_script.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(script))
        script = path
    full_env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                    OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    full_env.update(env or {})
    result = subprocess.run(command(n, [script, *args]), capture_output=True, text=True, timeout=timeout,
                            env=full_env, cwd=str(tmp_path) if tmp_path is not None else None)
    if check and result.returncode != 0:
        pytest.fail(f"{n} ranks of {script} exited with {result.returncode}\n--- stdout\n{result.stdout}\n"
                    f"--- stderr\n{result.stderr}")
    return result


__all__ = ["needs_mpi", "run_ranks", "mpi_available"]
