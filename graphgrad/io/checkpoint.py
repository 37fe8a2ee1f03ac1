"""Saving and loading tensors, state dicts and whole training checkpoints, atomically.

``gg.save(obj, path)`` writes a state dict (``str -> Tensor``) or any nested checkpoint structure of
dicts, lists, tuples, tensors/arrays, NumPy scalars, Python numbers, strings, bools and ``None``;
``gg.load(path)`` gives the same structure back with every tensor or array as a graphgrad
:class:`~graphgrad.Tensor` (NumPy scalars stay NumPy scalars, tuples stay tuples, integer dict keys
stay integers). ``gg.save_checkpoint`` / ``gg.load_checkpoint`` capture and restore everything a
training run needs to continue on exactly the same trajectory: model, optimizer and scheduler state,
the epoch, and the random-number state.

Formats
-------
* **safetensors** (the default; needs the optional ``safetensors`` package:
  ``pip install graphgrad[checkpoints]``). Every tensor is a safetensors tensor; the rest of the
  structure is JSON in the header metadata under the key ``"graphgrad"``.
* **npz** (NumPy's zip of ``.npy`` members; always available). Every tensor is a ``<key>.npy``
  member; the structure is the JSON text, UTF-8 encoded as a ``uint8`` array, in the member
  ``__graphgrad__.npy``. Files are read with ``allow_pickle=False``: nothing in them can run code.

``format=None`` picks by extension: ``.safetensors`` -> safetensors, ``.npz`` -> npz, anything else
(``.ckpt``, no extension...) -> safetensors when the package is installed, **npz when it is not**.
Loading detects the format from the file's first bytes, whatever its name.

On-disk layout
--------------
Tensor keys are the dotted path of the tensor in the structure: a state dict's own names for a flat
state dict (``fc.weight``), and e.g. ``model.fc.weight``, ``optimizer.state.0.exp_avg``,
``rng.numpy.state.key`` for a checkpoint (a ``#N`` suffix keeps keys unique if two paths collide).
A flat state dict is therefore an ordinary safetensors/npz file other tools read directly. The
structure JSON (format version ``1``) mirrors the object with these encodings:

=========================  ===============================================================
object                     JSON
=========================  ===============================================================
None, bool, int, float,    themselves (ints of any size; NaN/inf as ``NaN``/``Infinity``)
str
list                       a list
dict with str keys         an object (unless a key starts with ``__gg_``)
other dict                 ``{"__gg_items__": [[key, value], ...]}`` (int, float, tuple keys)
tuple                      ``{"__gg_tuple__": [...]}``
Tensor / array             ``{"__gg_tensor__": "<tensor key>"}``
NumPy scalar               ``{"__gg_scalar__": "<tensor key>"}`` (stored as a 0-d tensor)
=========================  ===============================================================

The JSON document is ``{"graphgrad_format": 1, "root": <encoded object>}``. A file without it (one
written by another tool) loads as a flat ``{name: Tensor}`` dict.

Atomic writes
-------------
Bytes go to a temporary file in the destination's directory (``.<name>.<random>.tmp``), which is
flushed and fsync'ed and then renamed over the destination with ``os.replace`` (atomic on POSIX and
Windows); the directory is fsync'ed afterwards where the OS allows it. A save that fails or is
interrupted before the rename leaves the previous file untouched; a failure that Python sees also
removes the temporary file. A process killed outright may leave one behind (it is never read); the
next successful save of the same target deletes such leftovers once they are a minute old (younger
ones may belong to a save still running in another process). A write that fails (disk full, a file
size limit) raises an OSError naming the destination and saying that the previous file is unchanged.

Loading
-------
Loading is bounded and checked: before any array is allocated, the sizes an npz archive (or a
safetensors file) declares are checked against each other and against
``graphgrad.config.max_load_bytes`` (4 GiB by default; raise it to load bigger files), so a zip bomb
is refused with :class:`~graphgrad.errors.LoadLimitError`. A truncated, corrupt or foreign file (a
PyTorch ``.pt`` pickle, any other zip, a malformed structure JSON) raises
:class:`~graphgrad.errors.FileLoadError` (a ``ValueError``) naming the file and what is wrong.
"""
from __future__ import annotations

import contextlib
import json
import os
import random as _pyrandom
import sys
import tempfile
import zipfile
from typing import Any, Callable, Iterable, Optional, Sequence

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core import random as gg_random
from graphgrad.core.tensor import Tensor
from graphgrad.errors import FileLoadError, GraphgradError
from graphgrad.graph import files as _files

__all__ = ["save", "load", "save_checkpoint", "load_checkpoint", "FORMAT_VERSION"]

#: Version of the structure JSON written by :func:`save`.
FORMAT_VERSION = 1
_META_KEY = "graphgrad"            # safetensors metadata key holding the structure JSON
_NPZ_META = "__graphgrad__"        # npz member (without .npy) holding the structure JSON
_TENSOR, _SCALAR, _TUPLE, _ITEMS = "__gg_tensor__", "__gg_scalar__", "__gg_tuple__", "__gg_items__"
_TAGS = (_TENSOR, _SCALAR, _TUPLE, _ITEMS)
_FORMATS = ("safetensors", "npz")
_INSTALL_HINT = "install it with `pip install safetensors` (or `pip install graphgrad[checkpoints]`)"


# ---- optional dependency ------------------------------------------------------------------------------
def _safetensors():
    """The ``safetensors.numpy`` module and ``safe_open``, or ``None`` when not installed."""
    try:
        import safetensors.numpy as st_numpy
        from safetensors import safe_open
    except ImportError:
        return None
    return st_numpy, safe_open


def _pick_format(path: str, format: Optional[str]) -> str:
    if format is not None:
        if format not in _FORMATS:
            raise ValueError(f"unknown checkpoint format {format!r}; expected one of {_FORMATS}")
        chosen = format
    elif path.endswith(".npz"):
        chosen = "npz"
    elif path.endswith(".safetensors"):
        chosen = "safetensors"
    else:
        chosen = "safetensors" if _safetensors() is not None else "npz"
    if chosen == "safetensors" and _safetensors() is None:
        raise ImportError(f"saving {path!r} as safetensors needs the safetensors package: {_INSTALL_HINT}; "
                          "or save with format='npz' (or a .npz path)")
    return chosen


# ---- encoding: object <-> (JSON structure, {key: array}) -------------------------------------------------
class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict = {}

    def _put(self, array, path: Sequence[str]) -> str:
        if array.dtype.kind not in "biufc":
            raise TypeError(f"cannot save the {array.dtype} array at {_where(path)}: only bool, integer, "
                            "float and complex arrays can be saved")
        key = ".".join(path) or "tensor"
        base, n = key, 1
        while key in self.arrays or key == _NPZ_META:
            key, n = f"{base}#{n}", n + 1
        self.arrays[key] = array if array.flags.c_contiguous else array.copy(order="C")  # keeps 0-d arrays 0-d
        return key

    def encode(self, obj: Any, path: list) -> Any:
        if isinstance(obj, Tensor):
            return {_TENSOR: self._put(backend.to_numpy(obj._value()), path)}
        if isinstance(obj, np.generic):
            return {_SCALAR: self._put(np.asarray(obj), path)}
        if backend.is_array(obj):
            return {_TENSOR: self._put(backend.to_numpy(obj), path)}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, list):
            return [self.encode(v, path + [str(i)]) for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            return {_TUPLE: [self.encode(v, path + [str(i)]) for i, v in enumerate(obj)]}
        if isinstance(obj, dict):
            if all(isinstance(k, str) and not k.startswith("__gg_") for k in obj):
                return {k: self.encode(v, path + [k]) for k, v in obj.items()}
            return {_ITEMS: [[_encode_key(k, path), self.encode(v, path + [str(k)])] for k, v in obj.items()]}
        raise TypeError(f"cannot save {type(obj).__name__} at {_where(path)}: checkpoints hold tensors, arrays, "
                        "dicts, lists, tuples, numbers, strings, bools and None")


def _encode_key(key: Any, path: list) -> Any:
    if key is None or isinstance(key, (bool, int, float, str)) and not isinstance(key, np.generic):
        return key
    if isinstance(key, tuple):
        return {_TUPLE: [_encode_key(k, path) for k in key]}
    raise TypeError(f"cannot save the dict key {key!r} ({type(key).__name__}) at {_where(path)}: keys must be "
                    "str, int, float, bool, None or tuples of them")


def _where(path: Sequence[str]) -> str:
    return repr(".".join(path)) if path else "the top level"


def _decode(obj: Any, arrays: dict) -> Any:
    if isinstance(obj, list):
        return [_decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if len(obj) == 1:
        (tag, value), = obj.items()
        if tag == _TENSOR:
            return Tensor(arrays[value])
        if tag == _SCALAR:
            return arrays[value][()]
        if tag == _TUPLE:
            return tuple(_decode(v, arrays) for v in value)
        if tag == _ITEMS:
            return {_decode(k, arrays): _decode(v, arrays) for k, v in value}
    return {k: _decode(v, arrays) for k, v in obj.items()}


# ---- atomic file writing -------------------------------------------------------------------------------
def _open_temp(directory: str, name: str):
    """A new temporary file (binary, writable) next to the destination: ``(file object, its path)``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    return os.fdopen(fd, "wb"), tmp


def _file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _atomic_write(path: str, write: Callable[[Any], None]) -> None:
    """Call ``write(file)`` on a temp file beside ``path``, fsync it, and rename it over ``path``."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    f, tmp = _open_temp(directory, os.path.basename(path))
    try:
        with f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode(path))  # mkstemp makes 0600 files; use what a plain open() would
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno is not None:  # disk full, file size limit, I/O error...
            raise type(exc)(exc.errno, f"could not save {path!r}: {exc.strerror or exc}; the previous file "
                                       "(if any) is unchanged") from exc
        raise
    _fsync_directory(directory)
    _remove_stale_temps(directory, os.path.basename(path))


_STALE_SECONDS = 60.0


def _remove_stale_temps(directory: str, name: str) -> None:
    """Delete the temporary files (``.<name>.<random>.tmp``) that killed saves of this same target left
    behind, once they are a minute old (a younger one may be another process's save in progress)."""
    import re
    import time

    pattern = re.compile(r"\." + re.escape(name) + r"\.[A-Za-z0-9_]+\.tmp\Z")
    now = time.time()
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for other in names:
        if pattern.match(other) is None:
            continue
        full = os.path.join(directory, other)
        try:
            if now - os.lstat(full).st_mtime >= _STALE_SECONDS:
                os.unlink(full)
        except OSError:
            pass


def _fsync_directory(directory: str) -> None:
    # Makes the rename itself durable. Not possible on every OS/filesystem (Windows): best effort.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_npz(f, arrays: dict) -> None:
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, array in arrays.items():
            with zf.open(key + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


# ---- public API ----------------------------------------------------------------------------------------
def save(obj: Any, path, format: Optional[str] = None) -> None:
    """Save a state dict or a nested checkpoint structure to ``path``, atomically.

    Args:
        obj: a state dict (``{name: Tensor or array}``) or any nesting of dicts, lists and tuples of
            tensors/arrays, NumPy scalars, numbers, strings, bools and ``None``.
        path: the file to write (replaced atomically: a failed save leaves the old file intact).
        format: ``"safetensors"``, ``"npz"``, or ``None`` to pick by extension (``.npz`` -> npz,
            ``.safetensors`` -> safetensors, anything else -> safetensors if the ``safetensors``
            package is installed, otherwise npz). The module docstring describes the on-disk layout.

    With several ranks every rank that calls it writes ``path`` (per-rank files are kept); for one
    file of the shared state, call it on rank 0 (``if dist.rank() == 0:``) and ``dist.barrier()``
    before other ranks load it, or use :func:`save_checkpoint`, which rank 0 alone writes.

    Examples:
        >>> gg.save(model.state_dict(), "model.safetensors")
        >>> model.load_state_dict(gg.load("model.safetensors"))
    """
    path = os.fspath(path)
    chosen = _pick_format(path, format)
    encoder = _Encoder()
    root = encoder.encode(obj, [])
    structure = json.dumps({"graphgrad_format": FORMAT_VERSION, "root": root}, separators=(",", ":"))
    arrays = encoder.arrays
    if chosen == "safetensors":
        st_numpy, _ = _safetensors()
        data = st_numpy.save(arrays, metadata={_META_KEY: structure})
        _atomic_write(path, lambda f: f.write(data))
    else:
        arrays = dict(arrays)
        arrays[_NPZ_META] = np.frombuffer(structure.encode("utf-8"), dtype=np.uint8)
        _atomic_write(path, lambda f: _write_npz(f, arrays))


def load(path) -> Any:
    """Load what :func:`save` wrote (the format is detected from the file's contents).

    Returns the saved structure with every tensor/array as a graphgrad ``Tensor`` (on the CPU). A
    safetensors or npz file written by another tool loads as a flat ``{name: Tensor}`` dict.

    Examples:
        >>> state = gg.load("model.safetensors")
        >>> state["fc.weight"].shape
        (2, 4)
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        magic = f.read(9)
    if magic.startswith(b"PK"):
        arrays, structure = _read_npz(path)
    elif len(magic) >= 2 and magic[0] == 0x80 and 2 <= magic[1] <= 5 and magic[8:9] != b"{":
        # pickle protocol 2-5 (a legacy, non-zip torch.save file); a safetensors file has its JSON
        # header at byte 8 (its first 8 bytes, the header length, may start with 0x80 too)
        raise _files.pytorch_file_error(repr(path), path, zipped=False)
    else:
        arrays, structure = _read_safetensors(path)
    try:
        if structure is None:
            return {k: Tensor(v) for k, v in arrays.items()}
        document = json.loads(structure)
        version = document.get("graphgrad_format") if isinstance(document, dict) else None
        if version != FORMAT_VERSION:
            raise FileLoadError(f"{path}: checkpoint format version {version!r} is not supported "
                                f"(this graphgrad reads version {FORMAT_VERSION})")
        return _decode(document["root"], arrays)
    except FileLoadError:
        raise
    except (GraphgradError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        raise FileLoadError(f"{path}: its graphgrad structure (the JSON describing the saved object) is "
                            f"malformed ({type(exc).__name__}: {exc})") from None


def _read_npz(path: str):
    arrays = _files.read_npz(path, repr(path))
    meta = arrays.pop(_NPZ_META, None)
    structure = None
    if meta is not None:
        try:
            structure = meta.tobytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileLoadError(f"{path}: its structure member {_NPZ_META + '.npy'!r} is not UTF-8 text "
                                f"({exc})") from None
    return arrays, structure


def _read_safetensors(path: str):
    lib = _safetensors()
    if lib is None:
        raise ImportError(f"{path} is not an npz file; reading it as safetensors needs the safetensors "
                          f"package: {_INSTALL_HINT}")
    _, safe_open = lib
    # safetensors checks that the offsets in the header lie inside the file, so the file size bounds
    # what get_tensor allocates
    _files.check_load_size(os.path.getsize(path), repr(path), "the file")
    try:
        with safe_open(path, framework="numpy") as f:
            metadata = f.metadata() or {}
            arrays = {key: f.get_tensor(key) for key in f.keys()}
    except Exception as exc:
        raise FileLoadError(f"{path} is neither an npz nor a readable safetensors file "
                            f"({type(exc).__name__}: {exc})") from exc
    return arrays, metadata.get(_META_KEY)


# ---- training checkpoints --------------------------------------------------------------------------------
def _rng_state(generators: Iterable) -> dict:
    return {
        "graphgrad": gg_random.default_generator.get_state(),
        "generators": [g.get_state() for g in generators],
        "numpy": np.random.get_state(legacy=False),
        "python": _pyrandom.getstate(),
    }


def _as_numpy(tree: Any) -> Any:
    """``tree`` with Tensors replaced by NumPy arrays (RNG states need plain arrays)."""
    if isinstance(tree, Tensor):
        return tree.numpy()
    if isinstance(tree, dict):
        return {k: _as_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_as_numpy(v) for v in tree)
    return tree


def _set_rng_state(state: dict, generators: Sequence, path: str) -> None:
    saved = state.get("generators", [])
    if len(saved) != len(generators):
        raise FileLoadError(f"checkpoint {path} holds the state of {len(saved)} generator(s) but "
                            f"{len(generators)} were passed in generators=")
    gg_random.default_generator.set_state(_as_numpy(state["graphgrad"]))
    for generator, generator_state in zip(generators, saved):
        generator.set_state(_as_numpy(generator_state))
    if state.get("numpy") is not None:
        np.random.set_state(_as_numpy(state["numpy"]))
    if state.get("python") is not None:
        _pyrandom.setstate(state["python"])


def _snapshot(model, optimizer, scheduler, generators: list) -> dict:
    """Copies of everything :func:`load_checkpoint` replaces (model arrays, optimizer and scheduler
    state, random states), for :func:`_restore`."""
    import copy

    return {"model": {k: v.numpy().copy() for k, v in model.state_dict().items()},
            "optimizer": None if optimizer is None else copy.deepcopy(optimizer.state_dict()),
            "scheduler": None if scheduler is None else copy.deepcopy(scheduler.state_dict()),
            "rng": _rng_state(generators)}


def _restore(before: dict, model, optimizer, scheduler, generators: list) -> None:
    from graphgrad.core.autograd import note_inplace_write

    current = model.state_dict()
    for name, value in before["model"].items():
        current[name]._data[...] = value
        note_inplace_write(current[name]._data, "the restore after a failed checkpoint load")
    if optimizer is not None:
        optimizer.load_state_dict(before["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(before["scheduler"])
    _set_rng_state(before["rng"], generators, "(the state before loading)")


def _other_rank() -> bool:
    """Whether this process is a rank other than 0 of several (which leave shared files to rank 0)."""
    world = sys.modules.get("graphgrad.distributed.world")  # never imported here: several ranks imply it
    return world is not None and world.WORLD.initialized and world.WORLD.size > 1 and world.WORLD.rank != 0


def _unwrapped(model):
    """The module a ``DistributedDataParallel`` wraps (so saved names carry no ``module.`` prefix), or ``model``."""
    parallel = sys.modules.get("graphgrad.distributed.parallel")  # never imported here: a wrapper implies it
    if parallel is not None and isinstance(model, parallel.DistributedDataParallel):
        return model.module
    return model


def _without_wrapper_prefix(state: dict, expected, prefix: str = "module.") -> dict:
    """``state`` with its names fitted to the ``expected`` names when they differ only by a wrapper's
    ``prefix`` (a state dict saved from a ``DistributedDataParallel`` and loaded into the bare module,
    or the reverse); otherwise ``state`` itself."""
    keys, expected = list(state), list(expected)
    if not keys or not expected or set(keys) == set(expected):
        return state
    if all(k.startswith(prefix) for k in keys) and not any(k.startswith(prefix) for k in expected):
        return {k[len(prefix):]: v for k, v in state.items()}
    if all(k.startswith(prefix) for k in expected) and not any(k.startswith(prefix) for k in keys):
        return {prefix + k: v for k, v in state.items()}
    return state


def save_checkpoint(path, model, optimizer=None, scheduler=None, epoch: Optional[int] = None,
                    extra: Any = None, generators: Sequence = (), format: Optional[str] = None) -> None:
    """Save everything needed to resume training bit-identically, atomically.

    The file holds ``{"model": model.state_dict(), "optimizer": optimizer.state_dict() or None,
    "scheduler": scheduler.state_dict() or None, "epoch": epoch, "extra": extra, "rng": {...}}``
    where ``rng`` has the state of graphgrad's default generator, of each generator in
    ``generators`` (e.g. the one given to a Dropout layer), of NumPy's global (legacy) generator and of
    Python's ``random`` module. ``extra`` is any structure :func:`save` accepts.

    With several ranks only rank 0 writes (on the other ranks it does nothing), so it may be called
    on every rank or on rank 0 alone; call ``dist.barrier()`` before other ranks load the file.
    Nothing in the file depends on the number of ranks (a ``DistributedDataParallel`` is saved as
    the module it wraps; the random state is rank 0's), so training can resume on any number of ranks.

    Examples:
        >>> gg.save_checkpoint("run.ckpt", model, opt, sched, epoch=3, generators=[g])
        >>> info = gg.load_checkpoint("run.ckpt", model, opt, sched, generators=[g])
        >>> info["epoch"]
        3
    """
    if _other_rank():
        return
    checkpoint = {
        "model": _unwrapped(model).state_dict(),
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "epoch": epoch,
        "extra": extra,
        "rng": _rng_state(generators),
    }
    save(checkpoint, path, format=format)


@contextlib.contextmanager
def _loading_part(path: str, part: str):
    """Errors of ``load_state_dict`` with the checkpoint's path: a graphgrad error keeps its type (a
    ShapeError stays a ShapeError), anything else (a malformed state) becomes a FileLoadError."""
    try:
        yield
    except GraphgradError as exc:
        try:
            error = type(exc)(f"checkpoint {path}: {exc}")
        except Exception:  # an exception type that takes other arguments: keep it as it is
            raise exc from None
        raise error from exc
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
        raise FileLoadError(f"checkpoint {path}: its {part} state cannot be loaded ({type(exc).__name__}: {exc})") from exc


def load_checkpoint(path, model, optimizer=None, scheduler=None, generators: Sequence = (),
                    strict: bool = True, restore_rng: bool = True) -> dict:
    """Restore a :func:`save_checkpoint` file into ``model`` (and ``optimizer``, ``scheduler``,
    ``generators``, and the global random state unless ``restore_rng=False``).

    A model whose parameter names or shapes differ from the checkpoint's raises the error of
    ``Module.load_state_dict`` (naming every mismatched key and both shapes) with the checkpoint's
    path added; the model is then unchanged. Names that differ only by the ``module.`` prefix of a
    ``DistributedDataParallel`` wrapper (on either side) are matched. With several ranks every rank
    loads the file. Returns ``{"epoch": ..., "extra": ...}``.
    """
    path = os.fspath(path)
    checkpoint = load(path)
    if not isinstance(checkpoint, dict) or "model" not in checkpoint:
        raise FileLoadError(f"{path} is not a training checkpoint (no 'model' entry); use gg.load() for plain "
                            "state dicts")
    for name, kind in (("model", dict), ("rng", dict), ("optimizer", dict), ("scheduler", dict)):
        if checkpoint.get(name) is not None and not isinstance(checkpoint[name], kind):
            raise FileLoadError(f"checkpoint {path}: its {name!r} entry is a {type(checkpoint[name]).__name__}, "
                                f"not a {kind.__name__}: not a file save_checkpoint wrote")
    model = _unwrapped(model)
    for name, target in (("optimizer", optimizer), ("scheduler", scheduler)):
        if target is not None and checkpoint.get(name) is None:
            raise FileLoadError(f"checkpoint {path} has no {name} state, but a {name} was passed to load it into")
    rng = checkpoint.get("rng") if restore_rng else None
    if rng is not None and not isinstance(rng.get("generators", []), list):
        raise FileLoadError(f"checkpoint {path}: its random-number state is malformed ('generators' is not a list)")
    if rng is not None and len(rng.get("generators", [])) != len(generators):
        raise FileLoadError(f"checkpoint {path} holds the state of {len(rng.get('generators', []))} generator(s) but "
                            f"{len(generators)} were passed in generators=")
    # all or nothing: what is replaced is copied first and put back if any part fails to load
    before = _snapshot(model, optimizer, scheduler, list(generators))
    try:
        with _loading_part(path, "model"):
            model.load_state_dict(_without_wrapper_prefix(checkpoint["model"], model.state_dict()), strict=strict)
        for name, target in (("optimizer", optimizer), ("scheduler", scheduler)):
            if target is not None:
                with _loading_part(path, name):
                    target.load_state_dict(checkpoint[name])
        if rng is not None:
            try:
                _set_rng_state(rng, list(generators), path)
            except FileLoadError:
                raise
            except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
                raise FileLoadError(f"checkpoint {path}: its random-number state cannot be restored "
                                    f"({type(exc).__name__}: {exc})") from exc
    except BaseException:
        _restore(before, model, optimizer, scheduler, list(generators))
        raise
    return {"epoch": checkpoint.get("epoch"), "extra": checkpoint.get("extra")}
