"""Broken and foreign files (issue 14): every load path raises a graphgrad error (a subclass of the
built-in type older code caught) naming the file and what is wrong, never a raw BadZipFile, KeyError,
TypeError, RecursionError or NumPy message."""
from __future__ import annotations

import gzip
import json
import re
import zipfile

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data.datasets import read_idx
from graphgrad.errors import FileLoadError, GraphgradError


def _npz_with_structure(path, structure: bytes, **arrays) -> None:
    np.savez(path, __graphgrad__=np.frombuffer(structure, np.uint8), **arrays)


# ---- PyTorch files ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("zipped", [True, False], ids=["zip", "legacy"])
def test_a_pytorch_file_says_what_it_is_and_how_to_convert_it(tmp_path, torch, zipped):
    path = tmp_path / "model.pt"
    state = {"fc.weight": torch.arange(6.0).reshape(2, 3), "fc.bias": torch.zeros(2)}
    torch.save(state, path, _use_new_zipfile_serialization=zipped)
    for load in (gg.load, lambda p: gg.load_checkpoint(p, gg.nn.Linear(3, 2))):
        with pytest.raises(FileLoadError) as info:
            load(path)
        message = str(info.value)
        assert "model.pt" in message and "PyTorch" in message and "torch.save" in message
        assert "never unpickles" in message and ("zip" in message) == zipped
        assert "dtype |S" not in message
    # the compat facade's torch.load reads PyTorch's zip format, weights only (as PyTorch's default),
    # and refuses the legacy format like the core loader
    from graphgrad.compat import torch as gtorch
    if zipped:
        np.testing.assert_array_equal(gtorch.load(str(path))["fc.weight"].numpy(), np.arange(6.0).reshape(2, 3))
    else:
        with pytest.raises(FileLoadError, match="PyTorch"):
            gtorch.load(str(path))
    # the conversion the message suggests works, and its output loads
    command = re.search(r'python -c "(.*)"', message).group(1)
    exec(command, {})
    converted = gg.load(tmp_path / "model.safetensors")
    assert sorted(converted) == ["fc.bias", "fc.weight"]
    np.testing.assert_array_equal(converted["fc.weight"].numpy(), np.arange(6.0).reshape(2, 3))


# ---- truncated, garbled and foreign files -----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["npz", "safetensors"])
def test_truncated_checkpoints_name_the_file(tmp_path, fmt):
    path = tmp_path / f"ckpt.{fmt}"
    gg.save({"model": {"w": gg.tensor(np.arange(100, dtype=np.float32))}, "epoch": 3}, path)
    data = path.read_bytes()
    for cut in (0, 3, 10, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:cut])
        with pytest.raises(FileLoadError, match="ckpt"):
            gg.load(path)


def test_foreign_zip_and_object_arrays_are_refused(tmp_path):
    path = tmp_path / "foreign.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(FileLoadError, match=r"foreign\.npz.*'readme\.txt' is not a \.npy array"):
        gg.load(path)
    np.savez(path, w=np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(FileLoadError, match=r"foreign\.npz.*'w\.npy'.*dtype object"):
        gg.load(path)
    np.savez(path, w=np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))
    with pytest.raises(FileLoadError, match="dtype"):
        gg.load(path)


def test_a_corrupt_member_is_a_clear_error(tmp_path):
    path = tmp_path / "crc.npz"
    gg.save({"w": np.arange(1000, dtype=np.float32)}, path)
    data = bytearray(path.read_bytes())
    data[300] ^= 0xFF  # inside w.npy's data: the CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(FileLoadError, match=r"crc\.npz.*corrupt"):
        gg.load(path)


@pytest.mark.parametrize("structure, what", [
    (b'{"graphgrad_format": 1, "root": {"__gg_tensor__": "missing"}}', "KeyError"),
    (b'{"graphgrad_format": 1, "root": {"__gg_items__": [[[1], 2]]}}', "unhashable"),
    (b'{"graphgrad_format": 1, "root": {"__gg_items__": [[1, 2, 3]]}}', "ValueError"),
    (b'{"graphgrad_format": 1, "root": {"__gg_tuple__": 5}}', "TypeError"),
    (b'{"graphgrad_format": 1}', "KeyError"),
    (b"[1, 2]", "version"),
    (b"[" * 100000 + b"]" * 100000, "RecursionError"),
    (b"{not json", "JSONDecodeError"),
    (b"\xff\xfe\x00", "UTF-8"),
])
def test_malformed_checkpoint_structure_is_a_clear_error(tmp_path, structure, what):
    path = tmp_path / "bad.npz"
    _npz_with_structure(path, structure, w=np.zeros(2, np.float32))
    with pytest.raises(FileLoadError, match=r"bad\.npz") as info:
        gg.load(path)
    assert what in str(info.value)


def test_malformed_structure_in_safetensors_metadata(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "bad.safetensors"
    path.write_bytes(st.save({"w": np.zeros(2, np.float32)},
                             metadata={"graphgrad": '{"graphgrad_format": 1, "root": {"__gg_tensor__": 3}}'}))
    with pytest.raises(FileLoadError, match=r"bad\.safetensors.*KeyError"):
        gg.load(path)


def test_a_checkpoint_with_entries_of_the_wrong_type(tmp_path):
    model = gg.nn.Linear(2, 2)
    path = tmp_path / "run.npz"
    gg.save({"model": [1, 2], "rng": None}, path)
    with pytest.raises(FileLoadError, match=r"run\.npz.*'model' entry is a list"):
        gg.load_checkpoint(path, model)
    gg.save({"model": model.state_dict(), "rng": {"generators": 3}}, path)
    with pytest.raises(FileLoadError, match=r"run\.npz.*random-number state"):
        gg.load_checkpoint(path, model)


def test_corrupt_graph_weights_and_idx_files(tmp_path):
    g = gg.Graph()
    with g.as_default():
        gg.Variable(np.zeros(3, np.float32), name="w")
    path = str(tmp_path / "model")
    gg.save_graph(g, path)
    doc = json.loads(open(path + ".json").read())
    weights = (tmp_path / "model.npz").read_bytes()[:-10]
    (tmp_path / "model.npz").write_bytes(weights)
    import hashlib
    doc["weights"]["sha256"] = hashlib.sha256(weights).hexdigest()
    open(path + ".json", "w").write(json.dumps(doc))
    with pytest.raises(gg.GraphError, match=r"model\.npz.*not a readable \.npz"):
        gg.load_graph(path)
    bad = tmp_path / "train-labels-idx1-ubyte.gz"
    bad.write_bytes(gzip.compress(b"\x00\x00\x08\x01" + (5).to_bytes(4, "big") + bytes(5))[:-6])
    with pytest.raises(FileLoadError, match="train-labels-idx1-ubyte.gz"):
        read_idx(bad)
    bad.write_bytes(b"\x1f\x8b" + bytes(30))
    with pytest.raises(FileLoadError, match="corrupt"):
        read_idx(bad)


def test_errors_keep_their_old_built_in_types():
    assert issubclass(FileLoadError, ValueError) and issubclass(FileLoadError, GraphgradError)


def test_a_safetensors_file_whose_header_length_looks_like_a_pickle_still_loads(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    for pad in range(2000):  # find a header length of 0x0280..: its first two bytes read as pickle protocol 2
        data = st.save({"w": np.arange(3, dtype=np.float32)}, metadata={"pad": "x" * pad})
        if data[0] == 0x80 and data[1] == 2:
            break
    else:
        pytest.skip("no such header length found")
    path = tmp_path / "w.safetensors"
    path.write_bytes(data)
    assert gg.load(path)["w"].tolist() == [0.0, 1.0, 2.0]


def test_truncated_cifar_batch_names_the_file(tmp_path):
    import pickle

    from graphgrad.data.datasets import load_cifar10

    batch = pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 1]})
    (tmp_path / "test_batch").write_bytes(batch[: len(batch) // 2])
    with pytest.raises(FileLoadError, match="test_batch.*not a readable CIFAR-10 batch") as info:
        load_cifar10(tmp_path, train=False)
    assert isinstance(info.value, pickle.UnpicklingError)  # what older code caught
    (tmp_path / "test_batch").write_bytes(pickle.dumps({"data": np.zeros(5, np.uint8), "labels": [0]}))
    with pytest.raises(FileLoadError, match="test_batch"):
        load_cifar10(tmp_path, train=False)


def test_npz_files_numpy_writes_still_load_exactly(tmp_path):
    """The bounded reader keeps every .npy layout NumPy writes: Fortran order, big-endian, 0-d, empty,
    bool, complex, compressed or not."""
    arrays = {"f": np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
              "be": np.arange(5, dtype=">i4"), "scalar": np.array(2.5, np.float32),
              "empty": np.zeros((0, 3), np.int16), "mask": np.array([True, False]),
              "z": np.array([1 + 2j], np.complex64)}
    for save in (np.savez, np.savez_compressed):
        save(tmp_path / "a.npz", **arrays)
        loaded = gg.load(tmp_path / "a.npz")
        assert sorted(loaded) == sorted(arrays)
        for key, array in arrays.items():
            got = loaded[key].numpy()
            assert got.shape == array.shape and np.array_equal(got, array), key
