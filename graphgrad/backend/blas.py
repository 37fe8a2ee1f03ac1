"""Optional: matrix products through Intel MKL's BLAS (the ``mkl`` extra).

NumPy's wheels bring OpenBLAS. At the sizes of small and medium models it is slower than MKL, the
BLAS that PyTorch's CPU wheels use: measured here (2 threads, float32), 128x784 by 784x512 takes 496 us
with OpenBLAS and 369 us with MKL (PyTorch: 369 us); 128x512 by 512x256, 191 against 141 us. When MKL's
runtime library is installed (``pip install "graphgrad[mkl]"``, or MKL from conda), graphgrad sends
float32/float64 products of at least :data:`MIN_MULTIPLY_ADDS` multiply-adds to MKL's ``cblas_?gemm``
(2-D) and ``cblas_?gemm_batch_strided`` (stacks, batch dimensions broadcast) through ctypes, which
releases the GIL; everything else stays NumPy's. NumPy's OpenBLAS then runs on one thread (see
``_quiet_openblas``).

``GRAPHGRAD_BLAS=numpy`` keeps every product on NumPy; ``GRAPHGRAD_BLAS=mkl`` makes a missing MKL
an error instead of a silent fallback. MKL's threads follow ``MKL_NUM_THREADS`` / ``OMP_NUM_THREADS``
(and ``graphgrad.backend.blas_threads``, through threadpoolctl, like OpenBLAS's). Unless
``KMP_BLOCKTIME`` is set, MKL's OpenMP threads are told to sleep 1 ms after a product instead of
spinning 200 ms: spinning, they took the cores from NumPy's own BLAS threads and from the Python
thread between products.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import sys
import threading
from typing import Optional

import numpy as np

#: Products with fewer multiply-adds stay on NumPy (on one thread): there, waking MKL's threads costs
#: more than they save (128x10 by 10x256: 29 us on MKL, 7 us on OpenBLAS's one thread; 32x128 by
#: 128x512: 32 against 45 us).
MIN_MULTIPLY_ADDS = 1 << 20

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_INT_MAX = 2**31 - 1  # MKL's LP64 interface: 32-bit dimensions
_LOCK = threading.Lock()
_STATE: dict = {}  # "gemm", "batched": {dtype: function}; "set_local"; "path"; or "error": why not


def _candidates() -> list:
    names = ["libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"] if sys.platform.startswith("linux") else \
        ["libmkl_rt.3.dylib", "libmkl_rt.2.dylib", "libmkl_rt.dylib"] if sys.platform == "darwin" else \
        ["mkl_rt.3.dll", "mkl_rt.2.dll", "mkl_rt.dll"]
    folders = [os.path.join(sys.prefix, "lib"), os.path.join(sys.prefix, "Library", "bin")]
    paths = [os.path.join(folder, name) for folder in folders for name in names]
    found = ctypes.util.find_library("mkl_rt")
    return [p for p in paths if os.path.exists(p)] + ([found] if found else [])


def _load() -> None:
    choice = os.environ.get("GRAPHGRAD_BLAS", "auto").strip().lower()
    if choice in ("numpy", "openblas", "0", "off"):
        _STATE["error"] = f"off (GRAPHGRAD_BLAS={choice})"
        return
    os.environ.setdefault("KMP_BLOCKTIME", "1")  # (read when MKL starts its OpenMP runtime: see above)
    errors = []
    for path in _candidates():
        try:
            library = ctypes.CDLL(path)
            gemm, batched = {}, {}
            i, p = ctypes.c_int, ctypes.c_void_p
            for dtype, letter, scalar in ((np.float32, "s", ctypes.c_float), (np.float64, "d", ctypes.c_double)):
                fn = getattr(library, f"cblas_{letter}gemm")
                fn.restype = None
                fn.argtypes = [i] * 6 + [scalar, p, i, p, i, scalar, p, i]
                gemm[np.dtype(dtype)] = fn
                fn = getattr(library, f"cblas_{letter}gemm_batch_strided")
                fn.restype = None
                fn.argtypes = [i] * 6 + [scalar, p, i, i, p, i, i, scalar, p, i, i, i]
                batched[np.dtype(dtype)] = fn
            set_local = library.MKL_Set_Num_Threads_Local
            set_local.restype, set_local.argtypes = ctypes.c_int, [ctypes.c_int]
        except (OSError, AttributeError) as exc:
            errors.append(f"{path}: {exc}")
            continue
        _STATE["gemm"], _STATE["batched"], _STATE["path"], _STATE["set_local"] = gemm, batched, path, set_local
        _STATE["library"] = library
        _quiet_openblas()
        return
    _STATE["error"] = "; ".join(errors) or "MKL is not installed (pip install \"graphgrad[mkl]\")"
    if choice == "mkl":
        raise RuntimeError(f"GRAPHGRAD_BLAS=mkl but MKL's runtime could not be loaded: {_STATE['error']}")


def _quiet_openblas() -> None:
    """Run NumPy's OpenBLAS on one thread from now on: the products left to it are small, and its
    threads, spinning for about 0.1 s after each product, took a core from MKL's (a 128x784 by
    784x512 product went from 384 to 801 us right after NumPy's own). Through threadpoolctl, which
    the extra installs; without it, a no-op."""
    if os.environ.get("GRAPHGRAD_BLAS_KEEP_OPENBLAS_THREADS"):
        return
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return
    ThreadpoolController().select(internal_api="openblas").limit(limits=1)
    _STATE["openblas_quiet"] = True


def threads_spin_long() -> bool:
    """Whether MKL runs on the GNU OpenMP runtime (it picks it when PyTorch, or anything else, loaded
    libgomp first): its threads then spin for milliseconds after a product (GOMP_SPINCOUNT, whatever
    KMP_BLOCKTIME says), and a native kernel split over threads right after one finds the other core
    taken."""
    if not available():
        return False
    if "gnu" not in _STATE:
        try:
            layer = _STATE["library"].MKL_Set_Threading_Layer
            layer.restype, layer.argtypes = ctypes.c_int, [ctypes.c_int]
            _STATE["gnu"] = layer(-1) == 3  # (-1 asks, 3 is MKL_THREADING_GNU)
        except AttributeError:
            _STATE["gnu"] = False
    return _STATE["gnu"]


def openmp_team() -> Optional[int]:
    """The address of ``GOMP_parallel`` in the OpenMP runtime that MKL's threads belong to (GNU's
    libgomp, or Intel's libiomp5, which provides the same entry point), or ``None`` without MKL or
    where it cannot be found (Linux only: read from /proc/self/maps). Native kernels run their split
    work as a parallel region of that runtime (backend/native/parallel.c): its threads, spinning for a
    while after each product (KMP_BLOCKTIME; GOMP_SPINCOUNT, milliseconds), start it at once, where a
    thread of ours would find the other core taken by one of them."""
    if not available():
        return None
    if "team" not in _STATE:
        _STATE["team"] = None
        runtime = "libgomp" if threads_spin_long() else "libiomp5"
        try:
            with open("/proc/self/maps", encoding="utf-8") as maps:
                paths = sorted({line.split()[-1] for line in maps if runtime in line and "/" in line})
            for path in paths:  # (already loaded: dlopen of its path returns that copy, loads no other)
                address = ctypes.cast(ctypes.CDLL(path).GOMP_parallel, ctypes.c_void_p).value
                if address:
                    _STATE["team"] = address
                    break
        except (OSError, AttributeError):
            pass
    return _STATE["team"]


def numpy_blas_quiet() -> bool:
    """Whether NumPy's own BLAS threads hold no core between products, which graphgrad's native
    threads would need: on one thread (set when MKL loads, through threadpoolctl), or its threaded
    work handed to graphgrad's thread pool (:func:`openblas_on_pool`)."""
    available()  # (loads MKL when installed)
    return bool(_STATE.get("openblas_quiet") or _STATE.get("openblas_pool"))


def openblas_on_pool() -> bool:
    """Whether NumPy's OpenBLAS does graphgrad's products (no MKL) and runs its threaded work on the
    native kernels' thread pool (:func:`share_openblas_threads`)."""
    return bool(_STATE.get("openblas_pool"))


#: OpenBLAS's function that sets its threading callback, by build: NumPy's wheels (scipy-openblas,
#: 64-bit integers), then a plain OpenBLAS.
_CALLBACK_SETTERS = ("scipy_openblas_set_threads_callback_function64_", "scipy_openblas_set_threads_callback_function",
                     "openblas_set_threads_callback_function")


def _openblas_libraries() -> list:
    """The OpenBLAS libraries loaded in this process (NumPy's, SciPy's), as ctypes libraries (Linux:
    read from /proc/self/maps; elsewhere none)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line})
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            found.append(ctypes.CDLL(path))  # (loaded already: the same copy)
        except OSError:
            pass
    return found


def share_openblas_threads(callback: int) -> bool:
    """Where NumPy's OpenBLAS does the products (no MKL), give it ``callback`` (the address of the
    native library's ``gg_blas_threads``) as its threading callback (OpenBLAS 0.3.27 and newer): its
    threaded products then run on graphgrad's thread pool, the threads the native kernels split
    their work over, instead of threads of its own. Whether it did (False: MKL does the products,
    ``GRAPHGRAD_OPENBLAS_POOL=0``, or no OpenBLAS with that function is loaded).

    Why: two thread pools on two cores fight. OpenBLAS's threads spin for about 0.1 s after each
    product, taking the core a native kernel splits onto (a W2 step 1.5x slower); told to sleep
    right after each product (what graphgrad did before), they had to be woken for every product,
    which on a virtual machine cost up to milliseconds a time: after an idle pause of 0.15 s the next
    W1 steps took 10-25 ms instead of 3. One pool, whose idle threads spin a little (2 ms) and then
    sleep, serves both."""
    if os.environ.get("GRAPHGRAD_OPENBLAS_POOL", "").strip() == "0" or available():
        return False
    shared = False
    for library in _openblas_libraries():
        setter = next((getattr(library, name) for name in _CALLBACK_SETTERS if hasattr(library, name)), None)
        if setter is None:
            continue
        setter.restype, setter.argtypes = None, [ctypes.c_void_p]
        setter(ctypes.c_void_p(callback))
        shared = True
    _STATE["openblas_pool"] = shared
    return shared


def available() -> bool:
    """Whether products go to MKL (loaded at the first call)."""
    if not _STATE:
        with _LOCK:
            if not _STATE:
                _load()
    return "gemm" in _STATE


def status() -> str:
    """One line for ``graphgrad info``: which BLAS runs graphgrad's matrix products."""
    if available():
        return (f"MKL ({_STATE['path']}) for products of at least {MIN_MULTIPLY_ADDS} multiply-adds, "
                "NumPy's BLAS (one thread) for the rest")
    pool = ", its threaded work on graphgrad's thread pool" if _STATE.get("openblas_pool") else ""
    return f"NumPy's{pool} ({_STATE['error']})"


def _operand(a: np.ndarray) -> Optional[tuple]:
    """(transpose flag, leading dimension) of the last two axes of an operand MKL can read in place,
    else None."""
    itemsize = a.itemsize
    rows, cols = a.shape[-2:]
    s0, s1 = a.strides[-2:]
    if (s1 == itemsize or cols == 1) and s0 >= max(1, cols) * itemsize and s0 % itemsize == 0:
        return _NO_TRANS, max(1, s0 // itemsize, cols)
    if (s0 == itemsize or rows == 1) and s1 >= max(1, rows) * itemsize and s1 % itemsize == 0:
        return _TRANS, max(1, s1 // itemsize, rows)
    return None


def _batch_stride(a: np.ndarray, batch: tuple) -> Optional[int]:
    """The one stride (in elements) between consecutive matrices of ``a`` broadcast to ``batch``,
    or None when its batch axes do not collapse into one (then NumPy takes the product)."""
    view = np.broadcast_to(a, batch + a.shape[-2:])
    strides = [s for s, n in zip(view.strides[:-2], batch) if n != 1]
    sizes = [n for n in batch if n != 1]
    if not strides:
        return 0
    for i in range(len(strides) - 1):
        if strides[i] != strides[i + 1] * sizes[i + 1]:
            return None
    stride = strides[-1]
    return stride // a.itemsize if stride % a.itemsize == 0 and 0 <= stride // a.itemsize <= _INT_MAX else None


def _fits(a, b, out, shape) -> bool:
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and a.dtype in _STATE["gemm"]
            and (out is None or (type(out) is np.ndarray and out.dtype == a.dtype and out.shape == shape
                                 and out.flags.c_contiguous and out.flags.writeable
                                 and not np.may_share_memory(out, a) and not np.may_share_memory(out, b))))


def matmul(a: np.ndarray, b: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """``numpy.matmul(a, b, out=out)`` for NumPy arrays of at least 2 dims (batch dims broadcast):
    MKL when it is loaded and the product is large enough, else NumPy. Operands may be transposed or
    broadcast views (read in place); ``out``, when given, must be C-contiguous for MKL to write it.
    The same values as NumPy's up to the summation order.

    Shapes: (..., m, k) @ (..., k, n) -> (..., m, n).

    Examples:
        >>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
        (2, 4)
    """
    if a.ndim < 2 or b.ndim < 2:
        return np.matmul(a, b, out=out)
    (m, k), n = a.shape[-2:], b.shape[-1]
    if a.ndim == 2 and b.ndim == 2:
        if m * n * k >= MIN_MULTIPLY_ADDS and b.shape[0] == k and available() and max(m, n, k) <= _INT_MAX \
                and _fits(a, b, out, (m, n)):
            ta, tb = _operand(a), _operand(b)
            if ta is not None and tb is not None:
                out = np.empty((m, n), a.dtype) if out is None else out
                _STATE["gemm"][a.dtype](_ROW_MAJOR, ta[0], tb[0], m, n, k, 1.0, a.ctypes.data, ta[1],
                                        b.ctypes.data, tb[1], 0.0, out.ctypes.data, max(1, n))
                return out
        return np.matmul(a, b, out=out)
    if not available():
        return np.matmul(a, b, out=out)
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return np.matmul(a, b, out=out)  # (NumPy's error)
    count = math.prod(batch)
    if count * m * n * k >= MIN_MULTIPLY_ADDS and count > 0 and b.shape[-2] == k and \
            max(m, n, k, count * m * n) <= _INT_MAX and _fits(a, b, out, batch + (m, n)):
        ta, tb = _operand(a), _operand(b)
        sa, sb = _batch_stride(a, batch), _batch_stride(b, batch)
        if None not in (ta, tb, sa, sb):
            out = np.empty(batch + (m, n), a.dtype) if out is None else out
            _STATE["batched"][a.dtype](_ROW_MAJOR, ta[0], tb[0], m, n, k, 1.0, a.ctypes.data, ta[1], sa,
                                       b.ctypes.data, tb[1], sb, 0.0, out.ctypes.data, max(1, n), m * n, count)
            return out
    return np.matmul(a, b, out=out)


class BoundProduct:
    """``out = a @ b`` for a fixed ``b`` (k, n) and ``out`` (m, n) and any C-contiguous ``a`` (m, k),
    for loops of many small dependent products (a recurrent scan's time steps): the checks, pointers
    and leading dimensions are worked out once, so a call costs one ctypes call (about 2 us, against
    10 us through :func:`matmul`). Made by :func:`bind`.

    It computes on the calling thread only: for such a chain, with other work on each result in
    between (32x128 by 128x512 per step in W3), a second thread saves less than it costs."""

    def __init__(self, b: np.ndarray, out: np.ndarray, m: int):
        k, n = b.shape
        tb = _operand(b)
        self._args = (_ROW_MAJOR, _NO_TRANS, tb[0], m, n, k, 1.0)
        self._rest = (k, b.ctypes.data, tb[1], 0.0, out.ctypes.data, max(1, n))
        self._gemm, self._set_local = _STATE["gemm"][b.dtype], _STATE["set_local"]
        self.shape, self.dtype, self.out, self.b = (m, k), b.dtype, out, b  # (b and out kept alive)

    def __call__(self, a: np.ndarray) -> None:
        if a.shape != self.shape or a.dtype != self.dtype or not a.flags.c_contiguous:
            raise ValueError(f"BoundProduct: expected a C-contiguous {self.dtype} array of shape {self.shape}, "
                             f"got {a.dtype} {a.shape}")
        previous = self._set_local(1)
        k, b_data, ldb, beta, out_data, ldc = self._rest
        self._gemm(*self._args, a.ctypes.data, k, b_data, ldb, beta, out_data, ldc)
        self._set_local(previous)


def bind(b: np.ndarray, out: np.ndarray) -> Optional[BoundProduct]:
    """A :class:`BoundProduct` computing ``out = a @ b`` on MKL, or None where MKL is not loaded or
    the arrays do not fit it (then use :func:`matmul`): ``b`` (k, n) readable in place, ``out``
    (m, n) C-contiguous and writable, both of one float dtype, not overlapping."""
    if not available() or type(b) is not np.ndarray or type(out) is not np.ndarray or b.ndim != 2 or out.ndim != 2:
        return None
    m, n = out.shape
    if b.shape[1] != n or b.dtype not in _STATE["gemm"] or out.dtype != b.dtype or not out.flags.c_contiguous \
            or not out.flags.writeable or _operand(b) is None or np.may_share_memory(out, b) \
            or max(m, n, b.shape[0]) > _INT_MAX:
        return None
    return BoundProduct(b, out, m)


def xp_matmul(xp, a, b, out=None):
    """``xp.matmul(a, b, out=out)`` for any array namespace, NumPy's arrays through :func:`matmul`."""
    if xp is np:
        return matmul(a, b, out=out)
    return xp.matmul(a, b) if out is None else xp.matmul(a, b, out=out)


__all__ = ["available", "status", "matmul", "xp_matmul", "bind", "BoundProduct", "MIN_MULTIPLY_ADDS"]
