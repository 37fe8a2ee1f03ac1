"""Optional native kernels: a small C library that graphgrad compiles on first use.

NumPy runs one elementwise pass per call, so a fused computation (GELU, a layer norm, an LSTM cell,
a max-pool with its argmax) costs several passes over memory and a Python call each. The C files
next to this module do such computations in one pass. They are an optional extra: the core is
NumPy-only and every op that uses a native kernel keeps its NumPy path, which runs when the library
is off or cannot be built, and which the tests compare it with.

How it is built and found:

* The ``*.c`` files here are compiled together into one shared library with the C compiler of
  ``$CC``, else ``cc``, ``gcc`` or ``clang`` on the PATH, else the one the ``ziglang`` package brings
  (``pip install 'graphgrad[native]'``), with ``-O3 -march=native``. The library is cached under
  ``$GRAPHGRAD_CACHE_DIR`` (else ``$XDG_CACHE_HOME/graphgrad``, else ``~/.cache/graphgrad``), keyed by
  the sources, the flags, the compiler and the CPU, and written atomically; later processes load it
  in about a millisecond. :func:`build` compiles it ahead of time (``python -m graphgrad native``).
* ``GRAPHGRAD_NATIVE=0`` turns it off (NumPy only); unset or ``auto``, it is used where it builds;
  :func:`set_enabled` switches it at run time (the tests run both paths).
* A C function is exported by writing ``GG_EXPORT void gg_name(...)`` on one line in a ``.c`` file;
  its parameters may be pointers to ``float``, ``double``, ``int64_t``, ``int32_t`` or ``uint8_t``
  (``const`` for inputs) and scalars of those types or ``int``. :func:`kernel` returns a Python
  callable that checks each array's dtype, C-contiguity and (for non-``const`` pointers)
  writability before calling, so a wrong argument is a ``TypeError``, never a corrupted array.
  ctypes releases the GIL during the call.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Callable, Optional

import numpy as np

SOURCE_DIR = Path(__file__).resolve().parent
FLAGS = ["-O3", "-march=native", "-fPIC", "-shared", "-std=c99", "-fno-math-errno", "-fno-trapping-math",
         "-ffp-contract=off"]  # (no fused multiply-adds unless a file asks: results as NumPy rounds them)

_EXPORT = re.compile(r"^GG_EXPORT\s+void\s+(gg_\w+)\s*\(([^)]*)\)", re.MULTILINE)
_ARRAY_TYPES = {"float": np.float32, "double": np.float64, "int64_t": np.int64, "int32_t": np.int32,
                "uint8_t": np.uint8}
_SCALAR_TYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "int64_t": ctypes.c_int64,
                 "int32_t": ctypes.c_int32, "int": ctypes.c_int, "uint8_t": ctypes.c_uint8}

_POINTER = ctypes.POINTER(ctypes.c_char)
_byref = ctypes.byref
_from_buffer = ctypes.c_char.from_buffer


def _read_only_pointer(a: np.ndarray):
    return ctypes.cast(a.ctypes.data, _POINTER)


def pointer(a: np.ndarray):
    """``a``'s data as an argument of a kernel's unchecked ``raw`` function (``a`` must be a
    C-contiguous NumPy array of the parameter's type: the caller has checked). ``from_buffer`` +
    ``byref`` is ~3x cheaper than ``a.ctypes.data`` but needs a writable, non-empty buffer."""
    return _byref(_from_buffer(a)) if a.flags.writeable and a.nbytes else _read_only_pointer(a)


_UNTYPED = ctypes.CFUNCTYPE(None)


def untyped(function):
    """``function`` (a kernel's ``raw`` function) without argument conversion: each argument must
    already be a ctypes value of its parameter's exact type (:func:`pointer` for arrays,
    ``ctypes.c_int64(n)`` for an ``int64_t``...). ctypes' conversion through ``argtypes`` costs about
    0.4 us per argument, as much as a small kernel's own work; the calls of a fused kernel, made in
    one place with arguments of known types, skip it."""
    call = _UNTYPED(ctypes.cast(function, ctypes.c_void_p).value)
    call.typed = function  # (keeps the library loaded)
    return call


#: ctypes values for :func:`untyped` calls: ``int64_t``, ``int`` and ``float`` parameters.
c_int64, c_int, c_float = ctypes.c_int64, ctypes.c_int, ctypes.c_float

_LOCK = threading.Lock()
_STATE: dict = {}  # "library", "kernels", "error", "path", "enabled"


# ---- switching --------------------------------------------------------------------------------------
def _enabled_by_environment() -> bool:
    return os.environ.get("GRAPHGRAD_NATIVE", "auto").strip().lower() not in ("0", "off", "false", "no")


def enabled() -> bool:
    """Whether native kernels are switched on (``GRAPHGRAD_NATIVE``, or :func:`set_enabled`)."""
    if "enabled" not in _STATE:
        _STATE["enabled"] = _enabled_by_environment()
    return _STATE["enabled"]


def set_enabled(flag: bool) -> bool:
    """Switch native kernels on or off for this process; returns the previous setting."""
    previous = enabled()
    _STATE["enabled"] = bool(flag)
    return previous


class disabled:
    """``with native.disabled():`` runs its block on the NumPy paths only."""

    def __enter__(self):
        self._previous = set_enabled(False)
        return self

    def __exit__(self, *exc):
        set_enabled(self._previous)
        return False


# ---- finding and building the library ---------------------------------------------------------------
def sources() -> list[Path]:
    """The C files compiled into the library (sorted), with the shared header first."""
    return sorted(SOURCE_DIR.glob("*.h")) + sorted(SOURCE_DIR.glob("*.c"))


def compiler() -> Optional[list[str]]:
    """The C compiler command (a list), or ``None`` when there is none."""
    if os.environ.get("CC"):
        return os.environ["CC"].split()
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    try:
        import ziglang  # noqa: F401  (pip install 'graphgrad[native]')
    except ImportError:
        return None
    return [sys.executable, "-m", "ziglang", "cc"]


def _cpu_signature() -> str:
    """What ``-march=native`` depends on: the machine and, on Linux, the CPU's model and flags."""
    text = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("model name", "flags", "Features")):
                    text += line
                if line.strip() == "":
                    break
    except OSError:
        text += platform.processor()
    return text


def cache_dir() -> Path:
    """Where built libraries are kept."""
    if os.environ.get("GRAPHGRAD_CACHE_DIR"):
        return Path(os.environ["GRAPHGRAD_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "graphgrad"


def _library_path(cc: list[str], prefix: str, texts: list[tuple[str, bytes]]) -> Path:
    digest = hashlib.sha256()
    for name, text in [(p.name, p.read_bytes()) for p in sources()] + texts:
        digest.update(name.encode() + b"\0" + text + b"\0")
    digest.update(" ".join(cc + FLAGS).encode() + _cpu_signature().encode() + sys.platform.encode())
    suffix = ".dll" if sys.platform == "win32" else ".dylib" if sys.platform == "darwin" else ".so"
    return cache_dir() / f"{prefix}-{digest.hexdigest()[:20]}{suffix}"


def _compiler_or_error() -> list[str]:
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler found (set CC, install gcc or clang, or pip install 'graphgrad[native]')")
    return cc


def _compile(cc: list[str], c_files: list[str], target: Path, keep: int) -> None:
    """Compile ``c_files`` (each to an object, several at once: one per CPU) and link them into
    ``target`` through a temporary file renamed into place (atomic: a concurrent process sees no
    library or the whole of it), then prune the oldest builds of the same kind beyond ``keep``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=target.stem + "-", suffix=target.suffix + ".partial", dir=target.parent)
    os.close(fd)
    try:
        with tempfile.TemporaryDirectory(prefix="graphgrad-build-") as folder:
            objects = [os.path.join(folder, f"{i}.o") for i in range(len(c_files))]
            jobs = [cc + FLAGS + ["-I", str(SOURCE_DIR), "-c", c, "-o", o] for c, o in zip(c_files, objects)]
            _run_all(jobs, cc, max(1, os.cpu_count() or 1))
            _run_all([cc + FLAGS + objects + ["-o", partial, "-lm"]], cc, 1)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    _forget_old_builds(target, keep)


def _run_all(commands: list[list[str]], cc: list[str], at_once: int) -> None:
    """Run compiler commands, ``at_once`` at a time; a failure raises with the compiler's message."""
    for first in range(0, len(commands), at_once):
        running = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for c in commands[first:first + at_once]]
        failed = [stderr for process in running for _, stderr in [process.communicate(timeout=300)]
                  if process.returncode != 0]  # (every process waited for before raising)
        if failed:
            raise RuntimeError(f"the C compiler ({' '.join(cc)}) failed:\n{failed[0][-2000:]}")


def build(force: bool = False) -> Path:
    """Compile the library (unless a cached one matches) and return its path. Raises ``RuntimeError``
    with the compiler's message when it cannot be built."""
    cc = _compiler_or_error()
    target = _library_path(cc, "native", [])
    if not target.exists() or force:
        _compile(cc, [str(p) for p in sources() if p.suffix == ".c"], target, KEEP_BUILDS)
    return target


#: Builds kept in the cache (each source change or compiler makes a new one; older ones are removed),
#: and generated libraries (one per set of fused kernels: see :func:`compile_source`).
KEEP_BUILDS = 8
KEEP_GENERATED = 512


def _forget_old_builds(newest: Path, keep: int) -> None:
    prefix = newest.name.split("-")[0]
    builds = sorted(newest.parent.glob(f"{prefix}-*{newest.suffix}"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in builds[keep:]:
        try:
            old.unlink()  # a process that loaded it keeps its mapping
        except OSError:
            pass


def compile_source(source: str) -> Optional[dict[str, Callable]]:
    """Compile generated C ``source`` (which may include ``gg_native.h``) into its own library, cached
    by its text like the main one, and return the checked callables of its ``GG_EXPORT`` functions
    (names without ``gg_``). ``None`` when native kernels are off or unavailable, or the source does
    not compile (a RuntimeWarning then says why; callers keep their NumPy path)."""
    if not available():
        return None
    key = hashlib.sha256(source.encode()).hexdigest()
    if key in _GENERATED:
        return _GENERATED[key]
    try:
        cc = _compiler_or_error()
        target = _library_path(cc, "generated", [("generated.c", source.encode())])
        if not target.exists():
            with tempfile.TemporaryDirectory(prefix="graphgrad-native-") as folder:
                c_file = os.path.join(folder, "generated.c")
                with open(c_file, "w", encoding="utf-8") as f:
                    f.write(source)
                _compile(cc, [c_file], target, KEEP_GENERATED)
        library = ctypes.CDLL(str(target))
        kernels = {name[3:]: _wrap(name, getattr(library, name), params)
                   for name, params in _parse(source).items()}
    except Exception as exc:  # noqa: BLE001 - a generated kernel that fails to build falls back to NumPy
        warnings.warn(f"graphgrad: generated native kernels did not build, NumPy runs them: {exc}",
                      RuntimeWarning, stacklevel=2)
        kernels = None
    _GENERATED[key] = kernels
    return kernels


_GENERATED: dict = {}  # source hash -> kernels (or None: failed), for this process


def signatures() -> dict[str, list[tuple[str, object, bool]]]:
    """``{function: [(kind, type, writable), ...]}`` read from the ``GG_EXPORT`` lines of the sources;
    kind is ``"array"`` (type: a NumPy dtype) or ``"scalar"`` (type: a ctypes type)."""
    found = {}
    for path in sources():
        if path.suffix == ".c":
            found.update(_parse(path.read_text(encoding="utf-8")))
    return found


def _parse(text: str) -> dict[str, list[tuple[str, object, bool]]]:
    return {name: [_parameter(name, p.strip()) for p in params.split(",") if p.strip() not in ("", "void")]
            for name, params in _EXPORT.findall(text)}


def _parameter(function: str, text: str) -> tuple[str, object, bool]:
    words = text.replace("*", " * ").split()
    const = "const" in words
    words = [w for w in words if w not in ("const", "restrict", "__restrict__")]
    base = words[0]
    if "*" in words:
        if base not in _ARRAY_TYPES:
            raise TypeError(f"native kernel {function}: unsupported pointer type in {text!r}")
        return "array", np.dtype(_ARRAY_TYPES[base]), not const
    if base not in _SCALAR_TYPES:
        raise TypeError(f"native kernel {function}: unsupported parameter type in {text!r}")
    return "scalar", _SCALAR_TYPES[base], False


def _wrap(name: str, function, params: list) -> Callable:
    function.restype = None
    function.argtypes = [_POINTER if kind == "array" else ctype for kind, ctype, _ in params]
    short = name[3:]
    array_dtypes = [(i, dtype, writable) for i, (kind, dtype, writable) in enumerate(params) if kind == "array"]
    count = len(params)

    def call(*args):
        if len(args) != count:
            raise TypeError(f"native kernel {short} takes {count} arguments, got {len(args)}")
        args = list(args)
        for i, dtype, writable in array_dtypes:
            a = args[i]
            if type(a) is not np.ndarray or a.dtype != dtype or not a.flags.c_contiguous or \
                    (writable and not a.flags.writeable):
                what = f"{type(a).__name__}" if type(a) is not np.ndarray else \
                    f"{a.dtype} array (C-contiguous: {a.flags.c_contiguous}, writable: {a.flags.writeable})"
                raise TypeError(f"native kernel {short}: argument {i} must be a C-contiguous "
                                f"{'writable ' if writable else ''}{dtype} NumPy array, got {what}")
            args[i] = pointer(a)
        function(*args)

    call.raw = function  # unchecked: for callers that check their arguments themselves (pointer(a))
    call.untyped = untyped(function)  # unchecked and unconverted: ctypes values only (see untyped)
    call.__name__ = short
    call.__doc__ = f"The native kernel {name} (arguments checked; see graphgrad.backend.native)."
    return call


def _load() -> None:
    """Build (when needed) and load the library once per process; remember why when it fails."""
    with _LOCK:
        if "kernels" in _STATE or "error" in _STATE:
            return
        try:
            path = build()
            library = ctypes.CDLL(str(path))
            kernels = {name[3:]: _wrap(name, getattr(library, name), params)
                       for name, params in signatures().items()}
        except Exception as exc:  # no compiler, a failed build, a library that does not load
            _STATE["error"] = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"graphgrad's native kernels are off, NumPy runs everything: {_STATE['error']}",
                          RuntimeWarning, stacklevel=3)
            return
        _STATE.update(library=library, kernels=kernels, path=str(path))
        kernels["set_spin"](spin_microseconds())
        _share_with_openblas(kernels)
        kernels["set_threads"](threads())
        _join_team(kernels)


#: How long an idle thread of the native pool spins, waiting for its next task, before it sleeps
#: (``GRAPHGRAD_SPIN_US`` sets it). Long enough to span the gaps between the products and kernels of
#: one training step, so a step wakes the other core once rather than at every product (waking an
#: idle virtual CPU took from tens of microseconds to milliseconds here); short enough to leave the
#: core to other processes soon after the step (OpenBLAS's own threads spin for about 0.1 s).
SPIN_MICROSECONDS = 2000


def spin_microseconds() -> int:
    """``GRAPHGRAD_SPIN_US`` when set to a whole number, else :data:`SPIN_MICROSECONDS`."""
    value = os.environ.get("GRAPHGRAD_SPIN_US", "").strip()
    return int(value) if value.isdigit() else SPIN_MICROSECONDS


def _share_with_openblas(kernels: dict) -> None:
    """Where NumPy's OpenBLAS does the products, its threaded work runs on this library's thread pool
    (``blas.share_openblas_threads``), so the native kernels split over the same threads."""
    from graphgrad.backend import blas

    address = np.zeros(1, np.int64)
    kernels["blas_threads_address"](address)
    if address[0]:  # (0: built without POSIX threads, no pool)
        blas.share_openblas_threads(int(address[0]))


def _join_team(kernels: dict) -> None:
    """Split work runs as parallel regions of MKL's OpenMP runtime when there is one (blas.openmp_team:
    its threads, spinning after each product, start a region at once; threads of our own found the
    other core taken by them, so kernels that follow products did not split). ``GRAPHGRAD_NATIVE_TEAM=0``
    keeps threads of our own."""
    if os.environ.get("GRAPHGRAD_NATIVE_TEAM", "").strip() == "0":
        return
    from graphgrad.backend import blas  # (loaded already: threads() asked whether MKL runs)

    team = blas.openmp_team()
    if team:
        kernels["set_team"](team)
        _STATE["team"] = True
    elif blas.openblas_on_pool() and threads() > 1:
        # no MKL, and NumPy's OpenBLAS runs its threaded work on our pool: no other library's threads
        # spin on the other core, so the kernels that split only on MKL's team split on our pool
        kernels["set_own_split"](1)
        _STATE["own_split"] = True


#: Least work (output elements x operations) of a generated kernel split on threads of our own (where
#: there is no MKL team): a thread started for the call costs tens of microseconds. Measured with
#: NumPy's OpenBLAS, alternating: W5 compiled 1.06x -> 0.95x of PyTorch, W1 1.02x -> 1.00x; with
#: every kernel of 65k elements or more split, W1 lost (0.97x -> 1.07x: its bias + ReLU passes).
OWN_SPLIT_WORK = 1 << 19


def split_over_team(work: int) -> tuple[int, int]:
    """``(address of gg_parallel, threads)`` for a generated kernel (a library of its own, given the
    function's address) of ``work`` (output elements x operations) to split its work on MKL's OpenMP
    team, or on the native pool where NumPy's OpenBLAS runs its threaded work there too (see
    :func:`_join_team`) and the work is at least :data:`OWN_SPLIT_WORK`; ``(0, 1)`` otherwise."""
    if not _STATE.get("team") and not (_STATE.get("own_split") and work >= OWN_SPLIT_WORK):
        return 0, 1
    if "split" not in _STATE:
        _STATE["split"] = ctypes.cast(_STATE["library"].gg_parallel, ctypes.c_void_p).value or 0
    return _STATE["split"], threads()


def team() -> bool:
    """Whether native kernels split their work over MKL's OpenMP threads (see :func:`_join_team`)."""
    return available() and bool(_STATE.get("team"))


def available() -> bool:
    """Whether the native library is switched on and loaded (building it on the first call)."""
    if not enabled():
        return False
    if "kernels" not in _STATE:
        _load()
    return "kernels" in _STATE


def kernel(name: str) -> Optional[Callable]:
    """The native kernel ``name`` (the C function ``gg_<name>``), or ``None`` when native kernels are
    off, cannot be built, or have no such function; callers then take their NumPy path."""
    if not available():
        return None
    return _STATE["kernels"].get(name)


def threads() -> int:
    """How many threads a native kernel may split its work over (large convolutions, max pooling, the
    batch rows of an LSTM sequence): ``GRAPHGRAD_NATIVE_THREADS`` (which :func:`set_threads` sets),
    else the CPUs this process may run on (at most 8) when NumPy's BLAS threads hold no core between
    products (on one thread where MKL does the large products, the ``mkl`` extra; or with
    its threaded work on the native pool, see ``blas.share_openblas_threads``), else 1."""
    value = os.environ.get("GRAPHGRAD_NATIVE_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return min(int(value), 8)
    from graphgrad.backend import blas  # (here: loading MKL is not free, and only this needs it)
    available()  # (loading the library hands OpenBLAS's threaded work to its pool)
    if not blas.numpy_blas_quiet():
        # NumPy's OpenBLAS threads spin for ~0.1 s after each product: a thread of ours beside one
        # made a W2 step 1.5x slower instead of 1.2x faster (measured in one process)
        return 1
    return _cpus()


_CPUS: list = []  # [count], asked once


def _cpus() -> int:
    """The CPUs this process may run on (asked once: the conv and scan ops ask at every call)."""
    if not _CPUS:
        _CPUS.append(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    return max(1, min(_CPUS[0], 8))



def set_threads(n: int) -> None:
    """Let native kernels split their work over ``n`` threads (1: never split; at most 8), through
    ``GRAPHGRAD_NATIVE_THREADS`` (so child processes follow)."""
    if int(n) < 1:
        raise ValueError(f"set_threads: expected a positive count, got {n}")
    os.environ["GRAPHGRAD_NATIVE_THREADS"] = str(int(n))
    if "kernels" in _STATE:
        _STATE["kernels"]["set_threads"](min(int(n), 8))


def usable(*arrays) -> bool:
    """Whether ``arrays`` can go to a native kernel as they are: NumPy arrays, C-contiguous, float32."""
    return all(type(a) is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)


def status() -> str:
    """One line for ``graphgrad info``: on (with the library's path), off, or why it is unavailable."""
    if not enabled():
        return "off (GRAPHGRAD_NATIVE=0)"
    if available():
        count = threads()
        where = " on MKL's OpenMP team" if count > 1 and team() else ""
        return f"on, {len(_STATE['kernels'])} kernels, {count} thread{'s' if count > 1 else ''}{where} ({_STATE['path']})"
    return f"unavailable ({_STATE.get('error')})"
