"""backend/blas.py: products through MKL (when installed) equal NumPy's, whatever the operands' layout."""
import os
import subprocess
import sys

import numpy as np
import pytest

from graphgrad.backend import blas, native

needs_mkl = pytest.mark.skipif(not blas.available(), reason="MKL is not installed (the mkl extra)")

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check(a, b, out=None, rtol=1e-4):
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    got = blas.matmul(a, b, out=out)
    assert got.shape == expected.shape and got.dtype == a.dtype
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 10)
    if out is not None:
        assert got is out
    return got


CASES_2D = {
    "plain": lambda: (_f32(128, 300), _f32(300, 64)),
    "a transposed": lambda: (_f32(300, 128).T, _f32(300, 64)),
    "b transposed": lambda: (_f32(128, 300), _f32(64, 300).T),
    "both transposed": lambda: (_f32(300, 128).T, _f32(64, 300).T),
    "row slices": lambda: (_f32(128, 400)[:, :300], _f32(300, 90)[:, 10:74]),
    "strided rows (NumPy's path)": lambda: (_f32(256, 300)[::2], _f32(300, 64)),
    "negative strides (NumPy's path)": lambda: (_f32(128, 300)[::-1], _f32(300, 64)),
    "one column": lambda: (_f32(2048, 600), _f32(600, 1)),
    "one row": lambda: (_f32(1, 600), _f32(600, 2048)),
    "float64": lambda: (RNG.standard_normal((128, 300)), RNG.standard_normal((300, 64))),
    "small (NumPy's path)": lambda: (_f32(4, 5), _f32(5, 3)),
    "empty inner dimension": lambda: (_f32(64, 0), _f32(0, 32)),
}


@pytest.mark.parametrize("case", list(CASES_2D))
def test_two_dimensional_products_equal_numpys(case):
    a, b = CASES_2D[case]()
    _check(a, b)


@pytest.mark.parametrize("case", ["plain", "a transposed", "both transposed"])
def test_products_write_into_out(case):
    a, b = CASES_2D[case]()
    _check(a, b, out=np.empty((a.shape[0], b.shape[1]), a.dtype))


def test_a_non_contiguous_or_aliased_out_takes_numpys_path():
    a, b = _f32(128, 300), _f32(300, 128)
    out = np.empty((128, 256), np.float32)[:, :128]
    _check(a, b, out=out)
    c = _f32(128, 128)
    expected = c @ c.astype(np.float64)
    got = blas.matmul(c, c.copy(), out=c)  # out is an operand: NumPy's path copes with the overlap
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


BATCHED = {
    "stack": lambda: (_f32(8, 64, 96), _f32(8, 96, 80)),
    "broadcast weight": lambda: (_f32(1, 32, 144), _f32(9, 1, 144, 196)),
    "broadcast both": lambda: (_f32(8, 1, 64, 32), _f32(4, 32, 64)),
    "transposed views": lambda: (_f32(6, 64, 64), _f32(6, 80, 64).swapaxes(-1, -2)),
    "reversed stack (NumPy's path)": lambda: (_f32(6, 64, 64)[::-1], _f32(64, 72)),
    "matrix times stack": lambda: (_f32(64, 96), _f32(5, 96, 120)),
}


@pytest.mark.parametrize("case", list(BATCHED))
def test_batched_products_equal_numpys(case):
    a, b = BATCHED[case]()
    _check(a, b)


def test_batched_product_writes_into_out():
    a, b = BATCHED["broadcast weight"]()
    _check(a, b, out=np.empty((9, 1, 32, 196), np.float32))


def test_vectors_and_mismatches_behave_as_numpy():
    a, b = _f32(300), _f32(300, 64)
    np.testing.assert_allclose(blas.matmul(a, b), a @ b, rtol=1e-5)
    with pytest.raises(ValueError):
        blas.matmul(_f32(64, 300), _f32(200, 64))
    with pytest.raises(ValueError):
        blas.matmul(_f32(3, 64, 300), _f32(2, 300, 64))


def test_xp_matmul_dispatches_on_the_namespace():
    class Namespace:
        calls = []

        def matmul(self, a, b, out=None):
            self.calls.append(out)
            return "theirs"

    xp = Namespace()
    assert blas.xp_matmul(xp, 1, 2) == "theirs" and xp.calls == [None]
    a, b = _f32(128, 300), _f32(300, 64)
    np.testing.assert_allclose(blas.xp_matmul(np, a, b), a @ b, rtol=1e-4, atol=1e-3)


@needs_mkl
def test_mkl_products_go_to_mkl():
    assert "MKL" in blas.status()
    a, b = _f32(256, 512), _f32(512, 256)
    np.testing.assert_allclose(blas.matmul(a, b), a @ b, rtol=1e-4, atol=1e-3)


def test_environment_switch_keeps_numpy():
    code = "from graphgrad.backend import blas; print(blas.available(), blas.status())"
    env = dict(os.environ, GRAPHGRAD_BLAS="numpy")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.startswith("False NumPy's") and "(off (GRAPHGRAD_BLAS=numpy))" in out.stdout


@pytest.mark.parametrize("gomp_first", [False, True])
def test_mkl_threading_runtime_and_the_native_threads(gomp_first):
    """MKL on the GNU OpenMP runtime (libgomp loaded first, as PyTorch does) counts as spinning long;
    native kernels then split as parallel regions of that runtime (native.team: its GOMP_parallel), and
    so do the whole-sequence scans; without a team they would stay on one thread. Without MKL there is
    no team: native kernels take one thread unless NumPy's OpenBLAS runs its threads on the native pool."""
    code = ("import ctypes, ctypes.util\n"
            + ("ctypes.CDLL(ctypes.util.find_library('gomp') or 'libgomp.so.1', mode=ctypes.RTLD_GLOBAL)\n" if gomp_first else "")
            + "from graphgrad.backend import blas, native\n"
            "from graphgrad.ops import recurrent\n"
            "print(blas.available(), blas.threads_spin_long(), native.threads(), recurrent._scan_threads(35, 32, 128, 4),"
            " native.team(), blas.openblas_on_pool())")
    env = {k: v for k, v in os.environ.items() if k not in ("GRAPHGRAD_NATIVE_THREADS", "MKL_THREADING_LAYER")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    available, spin, threads, scan, team, pool = out.stdout.split()
    if available == "False":
        assert (spin, team) == ("False", "False") and scan == threads
        assert pool == "True" or threads == "1"
        return
    assert pool == "False"  # (MKL: NumPy's OpenBLAS is on one thread instead)
    if sys.platform.startswith("linux") and native.available() and int(threads) > 1:
        assert team == "True"  # MKL's runtime (libgomp or libiomp5) found in the process
    if gomp_first and spin == "True":
        assert scan == (threads if team == "True" else "1")
    else:
        assert spin == "False" and scan == threads


def test_asking_for_mkl_without_it_is_an_error(tmp_path):
    if blas._candidates():
        pytest.skip("MKL is installed here")
    code = "from graphgrad.backend import blas; blas.available()"
    env = dict(os.environ, GRAPHGRAD_BLAS="mkl")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "GRAPHGRAD_BLAS=mkl" in out.stderr


@needs_mkl
def test_a_bound_product_equals_numpys_at_every_call():
    w, out = _f32(128, 512), np.empty((32, 512), np.float32)
    product = blas.bind(w, out)
    assert product is not None and product.out is out
    for _ in range(3):
        a = _f32(32, 128)
        product(a)
        np.testing.assert_allclose(out, a.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)
    product_t = blas.bind(_f32(512, 128).T, out)  # a transposed weight, read in place
    a = _f32(32, 128)
    product_t(a)
    np.testing.assert_allclose(out, a @ product_t.b, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="C-contiguous"):
        product(_f32(128, 32).T)


def test_bind_declines_what_it_cannot_run():
    w = _f32(128, 512)
    assert blas.bind(w, np.empty((32, 1024), np.float32)[:, :512]) is None  # out not contiguous
    assert blas.bind(w, np.empty((32, 512), np.float64)) is None  # dtypes differ
    assert blas.bind(w, w[:32]) is None or not blas.available()  # out overlaps b


def _run_without_mkl(code: str, **env) -> list:
    full = {k: v for k, v in os.environ.items() if k not in ("GRAPHGRAD_OPENBLAS_POOL", "GRAPHGRAD_NATIVE_THREADS")}
    full.update(GRAPHGRAD_BLAS="numpy", **env)
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, check=True, timeout=120)
    return out.stdout.split()


needs_openblas_pool = pytest.mark.skipif(
    not blas._openblas_libraries() or not native.available(),
    reason="NumPy's BLAS is not OpenBLAS here (or not on Linux), or no native library")


@needs_openblas_pool
def test_openblas_runs_its_threads_on_the_native_pool():
    """Without MKL, NumPy's OpenBLAS hands its threaded work to the native library's pool (its
    threading callback) once the library loads, and native kernels split over that pool; the opt-out
    leaves OpenBLAS's own threads, and native kernels then stay on one thread."""
    code = ("from graphgrad.backend import blas, native\n"
            "native.available()\n"
            "print(blas.openblas_on_pool(), native.threads(), 'pool' in blas.status())")
    assert _run_without_mkl(code) == ["True", str(native._cpus()), "True"]
    assert _run_without_mkl(code, GRAPHGRAD_OPENBLAS_POOL="0") == ["False", "1", "False"]


@needs_openblas_pool
def test_products_on_the_pool_are_right_from_threads_and_after_fork():
    """Threaded products on the pool: from two Python threads at once (one finds the pool busy and
    runs its jobs on threads made for the call), interleaved with split native kernels, with more
    OpenBLAS threads than cores, and in a child made by fork() (which has none of the parent's
    workers)."""
    code = ("import os, threading, numpy as np\n"
            "from graphgrad.backend import native\n"
            "import graphgrad as gg\n"
            "native.available()\n"
            "rng = np.random.default_rng(0)\n"
            "pairs = [(rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32))\n"
            "         for m, k, n in [(128, 784, 512), (512, 128, 784), (300, 301, 302), (64, 1000, 64)]]\n"
            "errors = []\n"
            "def check(rounds):\n"
            "    for _ in range(rounds):\n"
            "        for a, b in pairs:\n"
            "            got, want = a @ b, a.astype(np.float64) @ b\n"
            "            errors.append(float(np.abs(got - want).max() / np.abs(want).max()))\n"
            "        x = gg.tensor(rng.standard_normal((8, 16, 28, 28)).astype(np.float32))\n"
            "        gg.max_pool2d(gg.relu(x), 2).numpy()\n"
            "threads = [threading.Thread(target=check, args=(20,)) for _ in range(2)]\n"
            "[t.start() for t in threads]; [t.join() for t in threads]\n"
            "import ctypes\n"
            "from graphgrad.backend import blas\n"
            "for lib in blas._openblas_libraries():\n"
            "    for name in ('scipy_openblas_set_num_threads64_', 'openblas_set_num_threads'):\n"
            "        if hasattr(lib, name):\n"
            "            getattr(lib, name)(5)  # more jobs than cores: each on a worker of the pool\n"
            "check(2)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    a, b = pairs[0]\n"
            "    os._exit(0 if np.allclose(a @ b, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3) else 3)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "print(len(errors), max(errors) < 1e-5, os.waitstatus_to_exitcode(status))")
    assert _run_without_mkl(code) == ["168", "True", "0"]


@needs_openblas_pool
@pytest.mark.parametrize("spin", ["0", "2000"])
def test_split_kernels_and_products_from_several_threads_give_the_same_bits(spin):
    """Split kernels hand their chunks to the pool's workers, and take back the tasks that a worker
    has not started when the calling thread has done every chunk; with workers that sleep at once
    (GRAPHGRAD_SPIN_US=0) nearly every call races that. The results are the bits of one thread."""
    code = ("import threading, time, numpy as np\n"
            "import graphgrad as gg\n"
            "from graphgrad.backend import native\n"
            "rng = np.random.default_rng(0)\n"
            "x = rng.standard_normal((16, 16, 28, 28)).astype(np.float32)\n"
            "native.set_threads(1)\n"
            "want = gg.max_pool2d(gg.relu(gg.tensor(x)), 2).numpy()\n"
            "native.set_threads(2)\n"
            "a, b = rng.standard_normal((256, 300)).astype(np.float32), rng.standard_normal((300, 400)).astype(np.float32)\n"
            "bad = []\n"
            "def work():\n"
            "    for i in range(100):\n"
            "        bad.append(not np.array_equal(gg.max_pool2d(gg.relu(gg.tensor(x)), 2).numpy(), want))\n"
            "        bad.append(not np.allclose(a @ b, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3))\n"
            "        if i % 7 == 0: time.sleep(0.003)\n"
            "threads = [threading.Thread(target=work) for _ in range(3)]\n"
            "[t.start() for t in threads]; work(); [t.join() for t in threads]\n"
            "print(len(bad), sum(bad))")
    assert _run_without_mkl(code, GRAPHGRAD_SPIN_US=spin) == ["800", "0"]


@needs_openblas_pool
def test_the_pool_uses_no_cpu_between_steps():
    """The pool's idle threads spin for 2 ms (GRAPHGRAD_SPIN_US), then sleep: OpenBLAS's own threads
    spun for about 0.1 s after each product (about 50 ms of CPU in 50 ms idle with two threads)."""
    code = ("import resource, time, numpy as np\n"
            "from graphgrad.backend import blas, native\n"
            "native.available()\n"
            "a = np.ones((512, 512), np.float32)\n"
            "a @ a\n"
            "time.sleep(0.01)\n"
            "before = resource.getrusage(resource.RUSAGE_SELF)\n"
            "time.sleep(0.1)\n"
            "after = resource.getrusage(resource.RUSAGE_SELF)\n"
            "print(blas.openblas_on_pool(), (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3)")
    pool, cpu_ms = _run_without_mkl(code)
    assert pool == "True" and float(cpu_ms) < 25.0
