"""Bounded, checked reading of array files, shared by every loader (checkpoints, saved graphs, IDX
data, ``onnx run`` inputs).

Nothing here trusts a size a file declares: an ``.npz`` member's uncompressed size and the shape its
``.npy`` header declares are checked against each other and against ``graphgrad.config.max_load_bytes``
(read at each call) *before* any array is allocated, so a 1 MB zip bomb declaring 1 GiB of zeros is
refused at once instead of being inflated. Broken or foreign files (truncated zips, bad CRCs, object
arrays, PyTorch pickles) raise a graphgrad error naming the file and what is wrong.
"""
from __future__ import annotations

import os
from typing import Any, Optional

from graphgrad.backend import np
from graphgrad.errors import FileLoadError, GraphgradError, LoadLimitError

__all__ = ["max_load_bytes", "check_load_size", "read_npz", "read_npy", "read_exactly", "read_bounded",
           "pytorch_file_error", "LIMIT_HINT"]

#: How to raise the limit, appended to every limit error.
LIMIT_HINT = "raise graphgrad.config.max_load_bytes to load it (e.g. graphgrad.config.max_load_bytes = 16 << 30)"
_CHUNK = 1 << 20


def max_load_bytes() -> int:
    """``graphgrad.config.max_load_bytes`` now (the most bytes a loader reads or allocates for one file)."""
    from graphgrad import config
    return int(getattr(config, "max_load_bytes", 4 << 30))


def check_load_size(nbytes: int, where: str, what: str, error: type = LoadLimitError) -> None:
    """Raise ``error`` when ``nbytes`` (what ``where`` declares for ``what``) is over the load limit."""
    limit = max_load_bytes()
    if nbytes > limit:
        raise error(f"{where}: {what}: {nbytes} bytes declared, over the load limit of {limit} bytes; refused "
                    f"before reading (a corrupt file or a decompression bomb?). If the file is genuine, {LIMIT_HINT}")


def pytorch_file_error(where: str, path: Optional[str] = None, zipped: bool = True,
                       error: type = FileLoadError) -> Exception:
    """The error for a PyTorch ``torch.save`` file: what it is, why it is not read, how to convert it."""
    name = os.fspath(path) if path is not None else "model.pt"
    stem = os.path.splitext(name)[0]
    kind = "a zip archive holding a pickle (data.pkl)" if zipped else "a pickle"
    return error(
        f"{where} is a PyTorch file written by torch.save ({kind}), not a graphgrad checkpoint. graphgrad never "
        "unpickles files (unpickling can run arbitrary code). If you trust the file and it holds a state dict "
        "of tensors, convert it once with PyTorch and the safetensors package:\n"
        f"  python -c \"import torch; from safetensors.torch import save_file; "
        f"save_file({{k: v.detach().clone().contiguous() for k, v in torch.load({name!r}, weights_only=True).items()}}, "
        f"{stem + '.safetensors'!r})\"\n"
        f"then load {stem + '.safetensors'!r} with gg.load (for a pickled whole model, save model.state_dict() "
        "in PyTorch first)")


def read_exactly(stream, nbytes: int, where: str, what: str, error: type = FileLoadError, grow: bool = False):
    """A new writable uint8 array of exactly ``nbytes`` bytes read from ``stream`` in 1 MiB chunks;
    ``error`` naming ``where`` if the stream ends early. With ``grow=True`` (a stream whose real length
    is unknown, e.g. gzip) the buffer grows with the data actually read instead of being allocated at
    the declared size, so a header that lies costs no more memory than the data behind it."""
    if grow:
        buffer = bytearray()
        while len(buffer) < nbytes:
            chunk = stream.read(min(_CHUNK, nbytes - len(buffer)))
            if not chunk:
                raise error(f"{where}: {what} is truncated: {nbytes} bytes declared, only {len(buffer)} present")
            buffer += chunk
        return np.frombuffer(buffer, dtype=np.uint8)
    out = np.empty(nbytes, dtype=np.uint8)
    view = memoryview(out)
    pos = 0
    while pos < nbytes:
        chunk = stream.read(min(_CHUNK, nbytes - pos))
        if not chunk:
            raise error(f"{where}: {what} is truncated: {nbytes} bytes declared, only {pos} present")
        view[pos:pos + len(chunk)] = chunk
        pos += len(chunk)
    return out


def read_bounded(f, where: str, what: str = "the file", error: type = LoadLimitError) -> bytes:
    """All of ``f`` (a file of any kind, a FIFO included), read in 1 MiB chunks; ``error`` as soon as
    it holds more than the load limit."""
    limit = max_load_bytes()
    chunks, total = [], 0
    while True:
        chunk = f.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise error(f"{where}: {what} is over the load limit of {limit} bytes; {LIMIT_HINT}")


_MAX_HEADER = 10000  # bytes: what np.load accepts by default (max_header_size)


def _npy_header(stream, where: str, member: str, error: type, kinds: str) -> tuple:
    """``(dtype, shape, fortran_order, nbytes, header_length)`` of the ``.npy`` stream, validated. The
    header's declared length is checked before it is read (a file read(n) allocates n bytes at once)."""
    import io
    import struct

    fmt = np.lib.format
    prefix = stream.read(8)
    if len(prefix) < 8 or prefix[:6] != b"\x93NUMPY":
        raise error(f"{where}: {member} is not a .npy array (no \\x93NUMPY magic: truncated or another format)")
    version = (prefix[6], prefix[7])
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise error(f"{where}: {member} has the unknown .npy format version {version}")
    size_field = stream.read(2 if version == (1, 0) else 4)
    if len(size_field) < (2 if version == (1, 0) else 4):
        raise error(f"{where}: {member} is truncated inside its .npy header")
    length = struct.unpack("<H" if version == (1, 0) else "<I", size_field)[0]
    if length > _MAX_HEADER:
        raise error(f"{where}: {member} declares a .npy header of {length} bytes (at most {_MAX_HEADER}): corrupt")
    header = stream.read(length)
    if len(header) < length:
        raise error(f"{where}: {member} is truncated inside its .npy header")
    whole = io.BytesIO(prefix + size_field + header)
    try:
        fmt.read_magic(whole)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(whole)
        else:
            shape, fortran, dtype = fmt.read_array_header_2_0(whole)
    except GraphgradError:
        raise
    except Exception as exc:
        raise error(f"{where}: {member} is not a valid .npy array ({type(exc).__name__}: {exc})") from None
    header_length = len(prefix) + len(size_field) + length
    if dtype.kind not in kinds or dtype.hasobject or dtype.itemsize == 0:
        raise error(f"{where}: {member} holds an array of dtype {dtype}, which graphgrad does not load "
                    "(bool, integer, float and complex arrays only; object arrays would need unpickling)")
    if any(d < 0 for d in shape):
        raise error(f"{where}: {member} declares the negative shape {shape}")
    count = 1
    for d in shape:
        count *= int(d)
    return dtype, tuple(int(d) for d in shape), bool(fortran), count * dtype.itemsize, header_length


def _array_from(raw, dtype, shape: tuple, fortran: bool):
    array = raw.view(dtype)
    return array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)


def read_npz(source: Any, where: Optional[str] = None, error: type = FileLoadError,
             limit_error: type = LoadLimitError, kinds: str = "biufc") -> dict:
    """``{name: array}`` of an ``.npz`` archive (a path or a binary file object), bounded and checked.

    Before any array is allocated: every member must be an ``.npy`` array (a PyTorch ``data.pkl``
    gets its own error), the sizes the members declare must total at most
    ``graphgrad.config.max_load_bytes``, and each member's ``.npy`` header must declare no more data
    than the member holds. Then each array is read in bounded chunks. Errors: ``error`` for a broken or
    foreign file, ``limit_error`` for a declaration over the limit; both name ``where`` and the member.
    A path that does not exist raises FileNotFoundError.
    """
    import zipfile

    if where is None:
        where = repr(os.fspath(source)) if isinstance(source, (str, bytes, os.PathLike)) else "the archive given"
    handle = open(os.fspath(source), "rb") if isinstance(source, (str, bytes, os.PathLike)) else source
    try:
        try:
            archive = zipfile.ZipFile(handle)
        except GraphgradError:
            raise
        except Exception as exc:
            raise error(f"{where} is not a readable .npz file: truncated or not a zip archive "
                        f"({type(exc).__name__}: {exc})") from None
        with archive:
            try:
                return _read_members(archive, source, where, error, limit_error, kinds)
            except GraphgradError:
                raise
            except Exception as exc:  # a central directory zipfile accepted but cannot use (empty names...)
                raise error(f"{where} is a corrupt .npz file ({type(exc).__name__}: {exc})") from None
    finally:
        if handle is not source:
            handle.close()


def _read_members(archive, source, where: str, error: type, limit_error: type, kinds: str) -> dict:
    infos = [i for i in archive.infolist() if not i.is_dir()]
    names = [i.filename for i in infos]
    if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
        path = source if isinstance(source, (str, os.PathLike)) else None
        raise pytorch_file_error(where, path, zipped=True, error=error)
    others = [n for n in names if not n.endswith(".npy")]
    if others:
        raise error(f"{where} is not an .npz file of arrays: member {others[0]!r} is not a .npy array")
    total = sum(i.file_size for i in infos)
    if total > max_load_bytes():
        biggest = max(infos, key=lambda i: i.file_size)
        check_load_size(total, where, f"its {len(infos)} member(s) (the largest, {biggest.filename!r}, "
                        f"{biggest.file_size} bytes)", limit_error)
    headers = []
    try:
        for info in infos:  # every header first: nothing is allocated until all declarations are checked
            with archive.open(info) as member:
                dtype, shape, fortran, nbytes, header = _npy_header(member, where, repr(info.filename), error, kinds)
            check_load_size(nbytes, where, f"member {info.filename!r} (shape {shape}, {dtype})", limit_error)
            if header + nbytes > info.file_size:
                raise error(f"{where}: member {info.filename!r} declares shape {shape} of {dtype} ({nbytes} bytes) "
                            f"but holds only {info.file_size - header} bytes of data: corrupt or truncated")
            headers.append((info, dtype, shape, fortran, nbytes, header))
        arrays = {}
        for info, dtype, shape, fortran, nbytes, header in headers:
            with archive.open(info) as member:
                member.read(header)
                raw = read_exactly(member, nbytes, where, f"member {info.filename!r}", error)
            arrays[info.filename[:-4]] = _array_from(raw, dtype, shape, fortran)
    except GraphgradError:
        raise
    except Exception as exc:  # bad CRC, broken deflate stream, unsupported compression, encryption...
        raise error(f"{where} is a corrupt .npz file ({type(exc).__name__}: {exc})") from None
    return arrays


def read_npy(path: Any, where: Optional[str] = None, error: type = FileLoadError,
             limit_error: type = LoadLimitError, kinds: str = "biufc"):
    """The array of an ``.npy`` file, its declared size checked against the file size and the load
    limit before allocating (see :func:`read_npz`)."""
    path = os.fspath(path)
    where = repr(path) if where is None else where
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        dtype, shape, fortran, nbytes, header = _npy_header(f, where, "the file", error, kinds)
        check_load_size(nbytes, where, f"its array (shape {shape}, {dtype})", limit_error)
        if header + nbytes > size:
            raise error(f"{where} declares shape {shape} of {dtype} ({nbytes} bytes) but holds only "
                        f"{size - header} bytes of data: corrupt or truncated")
        raw = read_exactly(f, nbytes, where, "the array", error)
    return _array_from(raw, dtype, shape, fortran)
