"""gg.backend.blas_threads(n) limits BLAS to n threads inside its block and restores the count after."""
import pytest

import graphgrad as gg

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list:
    return [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]


def test_blas_threads_limits_inside_the_block_and_restores_after():
    import numpy as np

    np.ones((4, 4)) @ np.ones((4, 4))  # BLAS loaded
    gg.backend.blas.available()  # and MKL, when installed (blas_threads loads it first too)
    before = _blas_threads()
    with gg.backend.blas_threads(1):
        assert all(n == 1 for n in _blas_threads())
        x = gg.randn(8, 8)
        assert (x @ x).shape == (8, 8)
    assert _blas_threads() == before
