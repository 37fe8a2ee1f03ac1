"""Built-in datasets: generated toys, sklearn digits, MNIST IDX and CIFAR-10 readers (files made here)."""
from __future__ import annotations

import gzip
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data import (load_cifar10, load_digits, load_mnist, make_blobs, make_circles, make_moons,
                            make_spiral, read_idx)


# ---- generated toys ----------------------------------------------------------------------------------
def test_make_spiral_unchanged():
    x, y = make_spiral(50, 3, generator=gg.Generator(0))
    assert x.shape == (150, 2) and x.dtype == np.float32 and y.dtype == np.int64
    assert np.bincount(y.numpy()).tolist() == [50, 50, 50]


@pytest.mark.parametrize("make", [make_moons, make_circles])
def test_moons_and_circles(make):
    x, y = make(101, noise=0.05, generator=gg.Generator(0))
    assert x.shape == (101, 2) and x.dtype == np.float32 and y.dtype == np.int64
    assert np.bincount(y.numpy()).tolist() == [50, 51]
    x2, y2 = make(101, noise=0.05, generator=gg.Generator(0))
    np.testing.assert_array_equal(x.numpy(), x2.numpy())
    np.testing.assert_array_equal(y.numpy(), y2.numpy())


def test_moons_geometry_without_noise():
    x, y = make_moons(40, shuffle=False)
    upper, lower = x.numpy()[y.numpy() == 0], x.numpy()[y.numpy() == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1, atol=1e-6)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1, atol=1e-6)


def test_circles_radii():
    x, y = make_circles(40, factor=0.5, shuffle=False)
    r = np.hypot(*x.numpy().T)
    np.testing.assert_allclose(r[y.numpy() == 0], 1, atol=1e-6)
    np.testing.assert_allclose(r[y.numpy() == 1], 0.5, atol=1e-6)
    with pytest.raises(ValueError):
        make_circles(factor=1.5)


def test_make_blobs():
    x, y = make_blobs(100, centers=[[0, 0], [10, 10], [-10, 5]], cluster_std=0.1, generator=gg.Generator(0))
    assert x.shape == (100, 2) and np.bincount(y.numpy()).tolist() == [34, 33, 33]
    np.testing.assert_allclose(x.numpy()[y.numpy() == 1].mean(0), [10, 10], atol=0.1)
    x, y = make_blobs(30, centers=4, n_features=5)
    assert x.shape == (30, 5) and set(y.numpy().tolist()) == {0, 1, 2, 3}


# ---- digits ------------------------------------------------------------------------------------------
def test_load_digits():
    pytest.importorskip("sklearn")
    (xtr, ytr), (xte, yte) = load_digits(test_size=0.25, seed=0)
    assert xtr.shape[1:] == (1, 8, 8) and xtr.shape[0] + xte.shape[0] == 1797
    assert xte.shape[0] == round(0.25 * 1797)
    assert xtr.dtype == np.float32 and ytr.dtype == np.int64
    assert 0 <= xtr.numpy().min() and xtr.numpy().max() == 1.0
    assert set(yte.numpy().tolist()) == set(range(10))
    (a, _), _ = load_digits(test_size=0.25, seed=0)
    np.testing.assert_array_equal(a.numpy(), xtr.numpy())
    (flat, _), (t, _) = load_digits(test_size=100, seed=1, flatten=True)
    assert flat.shape == (1697, 64) and t.shape == (100, 64)
    with pytest.raises(ValueError):
        load_digits(test_size=0)


def test_load_digits_without_sklearn(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("sklearn"):
            raise ImportError("no sklearn")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r'pip install "graphgrad\[datasets\]"'):
        load_digits()


# ---- IDX / MNIST -------------------------------------------------------------------------------------
def _idx_bytes(array: np.ndarray) -> bytes:
    code = {np.dtype(np.uint8): 0x08, np.dtype(">i4"): 0x0C, np.dtype(">f4"): 0x0D}[array.dtype]
    return bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}i", *array.shape) + array.tobytes()


def _write(path, content: bytes, gz: bool):
    if gz:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(content)
    else:
        path.write_bytes(content)


def _mnist_files(folder, prefix, n, gz, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n).astype(np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / f"{prefix}-images-idx3-ubyte", _idx_bytes(images), gz)
    _write(folder / f"{prefix}-labels-idx1-ubyte", _idx_bytes(labels), gz)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_load_mnist_round_trip(tmp_path, gz, train):
    images, labels = _mnist_files(tmp_path, "train" if train else "t10k", 7, gz)
    x, y = load_mnist(tmp_path, train=train)
    assert x.shape == (7, 1, 28, 28) and x.dtype == np.float32 and y.dtype == np.int64
    np.testing.assert_allclose(x.numpy()[:, 0], images / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y.numpy(), labels)
    assert 0.0 <= x.numpy().min() and x.numpy().max() <= 1.0


def test_load_fashion_in_torchvision_layout(tmp_path):
    images, labels = _mnist_files(tmp_path / "FashionMNIST" / "raw", "t10k", 3, gz=True)
    x, y = load_mnist(str(tmp_path), train=False, kind="fashion")
    np.testing.assert_array_equal(y.numpy(), labels)


def test_load_mnist_missing_files_message(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_mnist(tmp_path, train=True)
    msg = str(info.value)
    assert "train-images-idx3-ubyte" in msg and "train-labels-idx1-ubyte" in msg
    assert str(tmp_path) in msg and "https://" in msg
    _mnist_files(tmp_path, "t10k", 2, gz=False)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte") as info:
        load_mnist(tmp_path, train=False, kind="fashion")
    assert "t10k-images" not in str(info.value) and "fashion-mnist" in str(info.value)
    with pytest.raises(ValueError, match="kind"):
        load_mnist(tmp_path, kind="kmnist")


def test_read_idx_dtypes_and_corruption(tmp_path):
    a = np.arange(6, dtype=">i4").reshape(2, 3)
    (tmp_path / "a").write_bytes(_idx_bytes(a))
    out = read_idx(tmp_path / "a")
    np.testing.assert_array_equal(out, a)
    assert out.dtype.isnative and out.dtype == np.int32
    f = np.linspace(0, 1, 4).astype(">f4")
    (tmp_path / "f").write_bytes(_idx_bytes(f))
    np.testing.assert_allclose(read_idx(tmp_path / "f"), f)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(ValueError, match="magic"):
        read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(_idx_bytes(a)[:-3])
    with pytest.raises(ValueError, match="bytes"):
        read_idx(tmp_path / "short")


# ---- CIFAR-10 ----------------------------------------------------------------------------------------
def _cifar_batch(n, seed, byte_keys):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n).tolist()
    batch = {"batch_label": "b", "data": data, "labels": labels, "filenames": [f"{i}.png" for i in range(n)]}
    if byte_keys:  # the real files come from Python 2: bytes keys when read with encoding="bytes"
        batch = {k.encode(): v for k, v in batch.items()}
    return batch, data, labels


def _cifar_folder(folder, byte_keys=False):
    folder.mkdir(parents=True, exist_ok=True)
    datas, labels = [], []
    for i, name in enumerate([f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]):
        batch, d, l = _cifar_batch(3, i, byte_keys)
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
        datas.append(d)
        labels.append(l)
    return datas, labels


@pytest.mark.parametrize("byte_keys", [False, True])
def test_load_cifar10_round_trip(tmp_path, byte_keys):
    datas, labels = _cifar_folder(tmp_path, byte_keys)
    x, y = load_cifar10(tmp_path, train=True)
    assert x.shape == (15, 3, 32, 32) and x.dtype == np.float32 and y.dtype == np.int64
    expect = np.concatenate(datas[:5]).reshape(-1, 3, 32, 32) / 255.0
    np.testing.assert_allclose(x.numpy(), expect, rtol=1e-6)
    assert y.numpy().tolist() == sum(labels[:5], [])
    xt, yt = load_cifar10(tmp_path, train=False)
    assert xt.shape == (3, 3, 32, 32) and yt.numpy().tolist() == labels[5]


def test_load_cifar10_subfolder_and_tarball(tmp_path):
    datas, labels = _cifar_folder(tmp_path / "a" / "cifar-10-batches-py")
    _, yt = load_cifar10(tmp_path / "a", train=False)
    assert yt.numpy().tolist() == labels[5]
    buf = tmp_path / "b"
    buf.mkdir()
    with tarfile.open(buf / "cifar-10-python.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "a" / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    x, y = load_cifar10(buf, train=True)
    assert x.shape == (15, 3, 32, 32) and y.numpy().tolist() == sum(labels[:5], [])


def test_load_cifar10_missing_files_message(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_cifar10(tmp_path)
    msg = str(info.value)
    assert all(f"data_batch_{k}" in msg for k in range(1, 6)) and str(tmp_path) in msg
    assert "cifar-10-python.tar.gz" in msg and "https://www.cs.toronto.edu" in msg
    with pytest.raises(FileNotFoundError, match="test_batch"):
        load_cifar10(tmp_path, train=False)


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_load_cifar10_refuses_arbitrary_pickles(tmp_path):
    (tmp_path / "test_batch").write_bytes(pickle.dumps({"data": _Evil(), "labels": []}))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_cifar10(tmp_path, train=False)
    (tmp_path / "test_batch").write_bytes(pickle.dumps({"images": np.zeros(3)}))
    with pytest.raises(ValueError, match="keys"):
        load_cifar10(tmp_path, train=False)


def test_load_text_and_random_windows(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("abracadabra", encoding="utf-8")
    text, vocab, ids = gg.data.load_text(path)
    assert text == "abracadabra" and vocab == ["a", "b", "c", "d", "r"]
    assert ids.dtype == gg.int64 and "".join(vocab[i] for i in ids.tolist()) == text
    x, y = gg.data.random_windows(ids, 4, 3, generator=gg.Generator(0))
    assert x.shape == y.shape == (3, 4)
    np.testing.assert_array_equal(x.numpy()[:, 1:], y.numpy()[:, :-1])  # targets: shifted by one
    with pytest.raises(ValueError, match="too short"):
        gg.data.random_windows(ids, 20, 1)
