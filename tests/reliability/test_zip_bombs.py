"""Bounded reads (issue 14): sizes that .npz/.npy/IDX files declare are checked against the file and
against graphgrad.config.max_load_bytes before anything that large is allocated or inflated."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import config
from graphgrad.data.datasets import read_idx
from graphgrad.errors import FileLoadError, GraphgradError, LoadLimitError

MiB = 1 << 20


def _npy_header(shape, descr="|u1") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _zip_bomb(path, nbytes: int, name: str = "w.npy", extra: dict = None) -> None:
    """A deflated .npz whose member ``name`` is ``nbytes`` zeros (written in 1 MiB chunks: about
    1000:1, so 64 MiB of zeros is a 64 KB file)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open(name, "w", force_zip64=True) as member:
            member.write(_npy_header((nbytes,)))
            zero = bytes(MiB)
            for _ in range(nbytes // MiB):
                member.write(zero)
        for key, array in (extra or {}).items():
            with zf.open(key + ".npy", "w") as member:
                np.lib.format.write_array(member, array)


def _stored_member(path, name: str, header: bytes, data: bytes) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(name, header + data)


def _peak_and_seconds(fn):
    """``(exception, peak traced bytes, seconds)`` of calling ``fn`` (which must raise)."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - returned for the caller's checks
        error = exc
    else:
        error = None
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return error, peak, seconds


@pytest.fixture(scope="module")
def bomb_64mib(tmp_path_factory):
    path = tmp_path_factory.mktemp("bomb") / "bomb.npz"
    _zip_bomb(path, 64 * MiB)
    assert path.stat().st_size < MiB  # a real zip bomb: under 1 MB on disk
    return path


# ---- .npz: gg.load / load_checkpoint / load_graph / onnx run inputs ---------------------------------------
def test_npz_zip_bomb_is_refused_before_inflating(bomb_64mib, monkeypatch):
    monkeypatch.setattr(config, "max_load_bytes", 16 * MiB)
    error, peak, seconds = _peak_and_seconds(lambda: gg.load(bomb_64mib))
    assert isinstance(error, LoadLimitError), error
    assert isinstance(error, ValueError)
    message = str(error)
    for part in ("bomb.npz", "w.npy", str(64 * MiB + len(_npy_header((64 * MiB,)))), "max_load_bytes"):
        assert part in message, (part, message)
    assert peak < 2 * MiB and seconds < 1.0, (peak, seconds)
    model = gg.nn.Linear(2, 2)
    with pytest.raises(LoadLimitError, match="bomb.npz"):
        gg.load_checkpoint(bomb_64mib, model)


def test_the_limit_is_read_at_each_load_and_can_be_raised(tmp_path, monkeypatch):
    path = tmp_path / "zeros.npz"
    _zip_bomb(path, 4 * MiB)
    monkeypatch.setattr(config, "max_load_bytes", 1 * MiB)
    with pytest.raises(LoadLimitError, match="max_load_bytes"):
        gg.load(path)
    monkeypatch.setattr(config, "max_load_bytes", 8 * MiB)
    loaded = gg.load(path)
    assert loaded["w"].shape == (4 * MiB,) and not loaded["w"].numpy().any()


def test_a_header_declaring_more_than_the_member_holds_is_refused_without_allocating(tmp_path):
    # default limit (4 GiB): a stored member of 16 bytes whose header declares 4 GB of float32
    path = tmp_path / "liar.npz"
    _stored_member(path, "w.npy", _npy_header((10 ** 9,), "<f4"), bytes(16))
    error, peak, seconds = _peak_and_seconds(lambda: gg.load(path))
    assert isinstance(error, FileLoadError) and "liar.npz" in str(error) and "'w.npy'" in str(error), error
    assert "holds only 16 bytes" in str(error)
    assert peak < MiB and seconds < 1.0
    # the same lie in a deflated member
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("w.npy", _npy_header((10 ** 9,), "<f4") + bytes(16))
    error, peak, _ = _peak_and_seconds(lambda: gg.load(path))
    assert isinstance(error, FileLoadError) and "holds only" in str(error) and peak < MiB


def test_a_header_declaring_a_huge_shape_is_over_the_limit(tmp_path):
    path = tmp_path / "huge.npz"
    _stored_member(path, "w.npy", _npy_header((1 << 40,), "<f8"), bytes(64))
    with pytest.raises(LoadLimitError, match=r"huge\.npz.*w\.npy.*8796093022208 bytes declared"):
        gg.load(path)


def test_a_central_directory_declaring_huge_members_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "many.npz"
    gg.save({f"w{i}": np.zeros(1000, np.float32) for i in range(8)}, path)
    monkeypatch.setattr(config, "max_load_bytes", 20_000)  # each member fits, all eight do not
    with pytest.raises(LoadLimitError, match="9 member"):
        gg.load(path)


def test_saved_graph_weights_bomb_is_refused(tmp_path, monkeypatch):
    g = gg.Graph()
    with g.as_default():
        gg.Variable(np.zeros(3, np.float32), name="w")
    path = str(tmp_path / "model")
    gg.save_graph(g, path)
    _zip_bomb(tmp_path / "model.npz", 64 * MiB, name="array_0.npy")
    doc = json.loads(open(path + ".json").read())
    doc["weights"]["sha256"] = hashlib.sha256((tmp_path / "model.npz").read_bytes()).hexdigest()
    open(path + ".json", "w").write(json.dumps(doc))
    monkeypatch.setattr(config, "max_load_bytes", 16 * MiB)
    error, peak, seconds = _peak_and_seconds(lambda: gg.load_graph(path))
    assert isinstance(error, gg.GraphError) and "max_load_bytes" in str(error) and "array_0.npy" in str(error)
    assert peak < 2 * MiB and seconds < 1.0, (peak, seconds)
    with pytest.raises(gg.GraphError, match="max_load_bytes"):
        gg.train.Saver().restore(gg.Session(g), path)


def test_onnx_run_inputs_are_bounded(bomb_64mib, tmp_path, monkeypatch):
    from graphgrad.io.onnx.tools import parse_inputs

    monkeypatch.setattr(config, "max_load_bytes", 16 * MiB)
    with pytest.raises(LoadLimitError, match="bomb.npz"):
        parse_inputs([f"x={bomb_64mib}"])
    monkeypatch.undo()
    liar = tmp_path / "x.npy"
    liar.write_bytes(b"\x93NUMPY" + _npy_header((10 ** 9,), "<f4")[6:] + bytes(8))
    with pytest.raises(FileLoadError, match=r"x\.npy.*holds only 8 bytes"):
        parse_inputs([f"x={liar}"])
    good = tmp_path / "good.npy"
    np.save(good, np.arange(3.0))
    assert parse_inputs([f"x={good}"])["x"].tolist() == [0.0, 1.0, 2.0]


# ---- IDX: read_idx ---------------------------------------------------------------------------------------
def _idx_header(shape, code=0x08) -> bytes:
    return bytes([0, 0, code, len(shape)]) + struct.pack(f">{len(shape)}i", *shape)


def _gzip_idx(path, header: bytes, zeros: int) -> None:
    with gzip.open(path, "wb") as f:
        f.write(header)
        zero = bytes(MiB)
        for _ in range(zeros // MiB):
            f.write(zero)


def test_gzip_idx_declaring_2gb_is_refused_before_inflating(tmp_path, monkeypatch):
    path = tmp_path / "train-images-idx3-ubyte.gz"
    _gzip_idx(path, _idx_header((2_000_000, 1000, 1)), MiB)  # declares 2 GB, holds 1 MiB
    assert path.stat().st_size < 10_000
    # under the default limit (4 GiB) the declaration alone is allowed: the data is read as it comes,
    # never allocated at the declared size, and the truncation is found after 1 MiB
    error, peak, seconds = _peak_and_seconds(lambda: read_idx(path))
    assert isinstance(error, FileLoadError) and "truncated" in str(error) and path.name in str(error), error
    assert peak < 8 * MiB and seconds < 2.0, (peak, seconds)
    # over the limit: refused from the header alone
    monkeypatch.setattr(config, "max_load_bytes", 1 << 30)
    error, peak, seconds = _peak_and_seconds(lambda: read_idx(path))
    assert isinstance(error, LoadLimitError) and "2000000000 bytes declared" in str(error) and "max_load_bytes" in str(error)
    assert peak < MiB and seconds < 0.5, (peak, seconds)


def test_gzip_idx_with_more_data_than_declared_stops_reading(tmp_path):
    path = tmp_path / "labels.gz"
    _gzip_idx(path, _idx_header((10,)), 64 * MiB)  # declares 10 bytes, inflates to 64 MiB
    error, peak, seconds = _peak_and_seconds(lambda: read_idx(path))
    assert isinstance(error, FileLoadError) and "more bytes" in str(error), error
    assert peak < 4 * MiB and seconds < 0.5, (peak, seconds)


def test_raw_idx_declaring_more_than_the_file_holds_is_refused_without_allocating(tmp_path):
    path = tmp_path / "raw-idx"
    path.write_bytes(_idx_header((2_000_000, 1000)) + bytes(100))
    error, peak, _ = _peak_and_seconds(lambda: read_idx(path))
    assert isinstance(error, FileLoadError) and "100 bytes after the header" in str(error)
    assert peak < MiB


def test_idx_round_trip_still_works(tmp_path):
    a = np.arange(24, dtype=">i2").reshape(2, 3, 4)
    (tmp_path / "a.gz").write_bytes(gzip.compress(_idx_header(a.shape, 0x0B) + a.tobytes()))
    (tmp_path / "a").write_bytes(_idx_header(a.shape, 0x0B) + a.tobytes())
    for name in ("a.gz", "a"):
        out = read_idx(tmp_path / name)
        np.testing.assert_array_equal(out, a)
        assert out.dtype == np.int16 and out.dtype.isnative and out.flags.writeable


def test_every_refusal_is_a_graphgrad_error():
    assert issubclass(LoadLimitError, FileLoadError) and issubclass(FileLoadError, GraphgradError)
    assert issubclass(FileLoadError, ValueError)


def test_graph_json_is_bounded_even_when_it_is_not_a_regular_file(tmp_path, monkeypatch):
    import os
    import threading

    g = gg.Graph()
    with g.as_default():
        w = gg.Variable(np.zeros(3, np.float32), name="w")
        gg.identity(w, name="y")
    path = str(tmp_path / "model")
    gg.save_graph(g, path)
    monkeypatch.setattr(config, "max_load_bytes", 100)
    with pytest.raises(gg.GraphError, match=r"model\.json.*max_load_bytes"):
        gg.load_graph(path)
    # a FIFO reports size 0: reading it stops at the limit instead of draining it
    os.unlink(path + ".json")
    os.mkfifo(path + ".json")
    stop = threading.Event()

    def writer():
        with open(path + ".json", "wb") as f:
            try:  # 16 MiB at most, so that an unbounded reader fails the memory check instead of hanging
                for _ in range(16 * MiB // 4096):
                    if stop.is_set():
                        break
                    f.write(b" " * 4096)
            except BrokenPipeError:
                pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    error, peak, seconds = _peak_and_seconds(lambda: gg.load_graph(path))
    stop.set()
    assert isinstance(error, gg.GraphError) and "max_load_bytes" in str(error), error
    assert peak < 2 * MiB and seconds < 2.0
    thread.join(timeout=5)


def test_cifar_archive_member_declaring_too_much_is_refused(tmp_path, monkeypatch):
    import tarfile

    from graphgrad.data.datasets import load_cifar10

    path = tmp_path / "cifar-10-python.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("cifar-10-batches-py/test_batch")
        info.size = 8 * MiB
        tar.addfile(info, io.BytesIO(bytes(8 * MiB)))
    monkeypatch.setattr(config, "max_load_bytes", 1 * MiB)
    error, peak, _ = _peak_and_seconds(lambda: load_cifar10(tmp_path, train=False))
    assert isinstance(error, LoadLimitError) and "test_batch" in str(error), error
    assert peak < MiB
    monkeypatch.setattr(config, "max_load_bytes", 16 * MiB)  # allowed now, but not a pickle
    with pytest.raises(FileLoadError, match="test_batch.*not a readable CIFAR-10 batch"):
        load_cifar10(tmp_path, train=False)


def test_a_npy_header_length_field_is_checked_before_reading_the_header(tmp_path):
    from graphgrad.io.onnx.tools import parse_inputs

    path = tmp_path / "x.npy"
    np.save(path, np.arange(3.0))
    data = bytearray(path.read_bytes())
    data[6] = 2  # format 2.0: the next 4 bytes, read as the header length, say about 660 MB
    path.write_bytes(bytes(data))
    error, peak, _ = _peak_and_seconds(lambda: parse_inputs([f"x={path}"]))
    assert isinstance(error, FileLoadError) and "header of" in str(error) and "x.npy" in str(error), error
    assert peak < MiB
    npz = tmp_path / "x.npz"
    with zipfile.ZipFile(npz, "w") as zf:
        zf.writestr("x.npy", bytes(data))
    with pytest.raises(FileLoadError, match=r"x\.npz.*header of"):
        gg.load(npz)


def test_the_cli_reports_a_refused_input_in_one_line(bomb_64mib, tmp_path, monkeypatch, capsys):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from graphgrad.cli import main

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8, ["n"])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, ["n"])])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    monkeypatch.setattr(config, "max_load_bytes", 16 * MiB)
    assert main(["onnx", "run", str(model), "-i", f"x={bomb_64mib}"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("graphgrad: error: "), err
    assert "bomb.npz" in err[0] and "max_load_bytes" in err[0]
