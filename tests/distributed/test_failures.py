"""Failures never hang: an exception on one rank ends the job with its message; mismatched
collectives give an error naming ranks and tensors; a missing rank gives a timeout."""
from __future__ import annotations

import os
import time

from tests.distributed.launch import HERE, needs_mpi, run_ranks

SCRIPT = os.path.join(HERE, "scripts", "failures.py")


@needs_mpi
def test_mismatched_collectives_name_the_ranks_and_tensors():
    out = run_ranks(2, SCRIPT, "mismatch").stdout
    assert "rank 0: collective #0: all_reduce(sum) of 'bias.grad' (3,) float64" in out
    assert "rank 1: collective #0: all_reduce(sum) of 'bias.grad' (4,) float64" in out
    assert out.rstrip().endswith("ok")


@needs_mpi
def test_an_exception_on_one_rank_ends_every_rank_quickly():
    start = time.monotonic()
    result = run_ranks(2, SCRIPT, "raise", check=False, timeout=60)
    elapsed = time.monotonic() - start
    assert result.returncode != 0
    assert elapsed < 20, f"the job took {elapsed:.1f} s to end"
    assert "[graphgrad rank 1/2] uncaught exception" in result.stderr
    assert "boom: a bad batch on this rank" in result.stderr


@needs_mpi
def test_a_rank_that_finishes_early_fails_the_others_at_once():
    start = time.monotonic()
    result = run_ranks(2, SCRIPT, "exit", "30", check=False, timeout=60)
    assert result.returncode != 0
    assert time.monotonic() - start < 15
    assert "rank 1: collective #0: the end of the script (this rank has finished)" in result.stderr + result.stdout
    assert "rank 0: collective #0: all_reduce(sum) of 'w.grad'" in result.stderr + result.stdout


@needs_mpi
def test_a_rank_that_never_arrives_gives_a_timeout():
    start = time.monotonic()
    result = run_ranks(2, SCRIPT, "timeout", "2", check=False, timeout=60)
    elapsed = time.monotonic() - start
    assert result.returncode != 0
    assert elapsed < 25, f"the job took {elapsed:.1f} s to end"
    assert "CollectiveTimeout: rank 0 waited 2 s in collective #0 (all_reduce(sum) of 'lonely'" in result.stderr
