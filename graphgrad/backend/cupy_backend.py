"""CuPy backend: GPU arrays flow through the same op code as NumPy arrays."""
from __future__ import annotations


def xp():
    """The ``cupy`` module (raises a clear error when CuPy is not installed)."""
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise ImportError("the CUDA device needs CuPy: pip install 'graphgrad[cuda]' (cupy-cuda12x)") from exc
    return cupy


def register(register_kernel) -> None:
    """Register the CuPy versions of backend kernels."""
    from cupyx.scipy.special import digamma, erf, erfc, erfinv, expit, gammaln, polygamma

    register_kernel("cupy", "erf", erf)
    register_kernel("cupy", "erf_fast", erf)
    register_kernel("cupy", "sigmoid", expit)
    register_kernel("cupy", "lgamma", gammaln)
    register_kernel("cupy", "digamma", digamma)
    register_kernel("cupy", "polygamma", lambda n, x: polygamma(n, x))
    register_kernel("cupy", "erfc", erfc)
    register_kernel("cupy", "erfinv", erfinv)
    register_kernel("cupy", "scatter_add_rows", _scatter_add_rows)


def _scatter_add_rows(index, rows, num: int):
    """See ``numpy_backend.scatter_add_rows``: CuPy's atomic scatter-add."""
    import cupy
    import cupyx

    out = cupy.zeros((num,) + rows.shape[1:], dtype=rows.dtype)
    cupyx.scatter_add(out, index, rows)
    return out
