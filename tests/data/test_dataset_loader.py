"""Dataset protocol, splits and the DataLoader: batching, collation, samplers, reproducible shuffling."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, RandomSampler, SequentialSampler,
                            Subset, SubsetRandomSampler, TensorDataset, TransformDataset, WeightedRandomSampler,
                            default_collate, random_split)


def _xy(n=10):
    x = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    y = np.arange(n, dtype=np.int64) % 3
    return x, y


class PerSample(Dataset):
    """A dataset without get_batch: samples are (array, int)."""

    def __init__(self, n=10):
        self.x, self.y = _xy(n)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


def test_base_dataset_is_abstract_and_adds():
    with pytest.raises(TypeError):  # as len() of an object without one (list() of a stream relies on it)
        len(Dataset())
    cat = PerSample(3) + PerSample(4)
    assert isinstance(cat, ConcatDataset) and len(cat) == 7


def test_tensor_dataset_items_and_batches():
    x, y = _xy()
    ds = TensorDataset(gg.tensor(x), y)
    assert len(ds) == 10
    xi, yi = ds[4]
    assert isinstance(xi, gg.Tensor) and xi.shape == (3,) and yi.shape == () and int(yi) == 1
    xb, yb = ds.get_batch([1, 5, 2])
    np.testing.assert_array_equal(xb.numpy(), x[[1, 5, 2]])
    assert xb.dtype == np.float64 and yb.dtype == np.int64
    assert int(ds[-1][1]) == y[-1]


def test_tensor_dataset_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match=r"same size along axis 0.*\(10, 3\).*\(9,\)"):
        TensorDataset(np.zeros((10, 3)), np.zeros(9))
    with pytest.raises(ValueError):
        TensorDataset()


def test_subset_and_concat():
    x, y = _xy()
    ds = TensorDataset(x, y)
    sub = Subset(ds, [7, 2, 9])
    assert len(sub) == 3 and int(sub[0][1]) == y[7]
    xb, _ = sub.get_batch([2, 0])
    np.testing.assert_array_equal(xb.numpy(), x[[9, 7]])
    cat = ConcatDataset([PerSample(3), PerSample(4)])
    assert cat[3][1] == 0 and cat[-1][1] == 0 and cat[6][1] == 0 and cat[2][1] == 2
    with pytest.raises(IndexError):
        cat[7]


def test_random_split_counts_fractions_and_reproducibility():
    ds = TensorDataset(np.arange(10))
    a, b = random_split(ds, [7, 3], generator=gg.Generator(0))
    assert (len(a), len(b)) == (7, 3)
    assert sorted(a.indices.tolist() + b.indices.tolist()) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=gg.Generator(0))
    assert a.indices.tolist() == a2.indices.tolist()
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=gg.Generator(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    parts = random_split(TensorDataset(np.arange(11)), [0.5, 0.5], generator=gg.Generator(1))
    assert [len(p) for p in parts] == [6, 5]
    with pytest.raises(ValueError, match="sum"):
        random_split(ds, [5, 3])
    with pytest.raises(ValueError):
        random_split(ds, [0.5, 0.2])


def test_loader_batches_len_and_drop_last():
    x, y = _xy(10)
    ds = TensorDataset(x, y)
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
    assert batches[0][0].dtype == np.float64 and batches[0][1].dtype == np.int64
    loader = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(loader) == 2 and len(list(loader)) == 2


def test_fast_path_matches_per_sample_path():
    x, y = _xy(10)
    fast = list(DataLoader(TensorDataset(x, y), batch_size=3, shuffle=True, seed=5))
    slow = list(DataLoader(PerSample(10), batch_size=3, shuffle=True, seed=5))
    for (xf, yf), (xs, ys) in zip(fast, slow):
        np.testing.assert_array_equal(xf.numpy(), xs.numpy())
        np.testing.assert_array_equal(yf.numpy(), ys.numpy())
        assert xf.dtype == xs.dtype and yf.dtype == ys.dtype == np.int64


def test_fast_path_does_not_loop_per_sample(monkeypatch):
    ds = TensorDataset(*_xy(100))
    calls = []
    monkeypatch.setattr(TensorDataset, "__getitem__", lambda self, i: calls.append(i))
    assert len(list(DataLoader(ds, batch_size=10, shuffle=True))) == 10
    assert calls == []


def test_shuffle_reproducible_and_new_each_epoch():
    ds = TensorDataset(np.arange(50))

    def epoch(loader):
        return np.concatenate([b[0].numpy() for b in loader]).tolist()

    loader = DataLoader(ds, batch_size=8, shuffle=True, seed=3)
    e1, e2 = epoch(loader), epoch(loader)
    assert sorted(e1) == list(range(50)) and e1 != e2 and e1 != list(range(50))
    again = DataLoader(ds, batch_size=8, shuffle=True, generator=gg.Generator(3))
    assert epoch(again) == e1 and epoch(again) == e2
    gg.manual_seed(11)
    d1 = epoch(DataLoader(ds, batch_size=8, shuffle=True))
    gg.manual_seed(11)
    assert epoch(DataLoader(ds, batch_size=8, shuffle=True)) == d1


def test_loader_argument_errors():
    ds = TensorDataset(np.arange(5))
    with pytest.raises(ValueError, match="sampler"):
        DataLoader(ds, shuffle=True, sampler=SequentialSampler(ds))
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(ds, batch_size=2, batch_sampler=BatchSampler(SequentialSampler(ds), 2))
    with pytest.raises(ValueError, match="either"):
        DataLoader(ds, seed=0, generator=gg.Generator(0))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)


def test_batch_size_none_yields_single_samples():
    samples = list(DataLoader(PerSample(3), batch_size=None))
    assert len(samples) == 3
    x, y = samples[1]
    assert isinstance(x, gg.Tensor) and x.shape == (3,) and isinstance(y, gg.Tensor) and y.dtype == np.int64


def test_custom_collate_and_batch_sampler():
    ds = TensorDataset(np.arange(6))
    out = list(DataLoader(ds, batch_size=4, collate_fn=lambda items: len(items)))
    assert out == [4, 2]
    bs = BatchSampler(SequentialSampler(ds), batch_size=2)
    assert list(bs) == [[0, 1], [2, 3], [4, 5]]
    loader = DataLoader(ds, batch_sampler=[[5, 0], [3]])
    assert [b[0].numpy().tolist() for b in loader] == [[5, 0], [3]]


def test_samplers():
    ds = list(range(7))
    assert list(SequentialSampler(ds)) == list(range(7))
    rs = RandomSampler(ds, generator=gg.Generator(0))
    assert len(rs) == 7 and sorted(rs) == list(range(7))
    rr = RandomSampler(ds, replacement=True, num_samples=20, generator=gg.Generator(0))
    drawn = list(rr)
    assert len(drawn) == 20 and all(0 <= i < 7 for i in drawn)
    more = list(RandomSampler(ds, num_samples=10, generator=gg.Generator(0)))
    assert len(more) == 10 and sorted(more[:7]) == list(range(7))
    ss = SubsetRandomSampler([10, 20, 30], generator=gg.Generator(0))
    assert sorted(ss) == [10, 20, 30] and len(ss) == 3
    ws = list(WeightedRandomSampler([0, 0, 1], num_samples=5, generator=gg.Generator(0)))
    assert ws == [2] * 5
    bs = BatchSampler(RandomSampler(ds, generator=gg.Generator(0)), batch_size=3, drop_last=True)
    assert len(bs) == 2 and [len(b) for b in bs] == [3, 3]

    class Plain:  # a user sampler with only __iter__ / __len__
        def __iter__(self):
            return iter([4, 3, 2, 1, 0])

        def __len__(self):
            return 5

    assert list(BatchSampler(Plain(), 2)) == [[4, 3], [2, 1], [0]]


def test_default_collate_structures_and_dtypes():
    Point = collections.namedtuple("Point", "x y")
    batch = [
        {"img": np.zeros((2, 2), np.float64), "label": 1, "w": 0.5, "flag": True, "name": "a",
         "pt": Point(np.float32(1), 2), "pair": (gg.tensor([1.0]), [3, 4])},
        {"img": np.ones((2, 2), np.float64), "label": 2, "w": 1.5, "flag": False, "name": "b",
         "pt": Point(np.float32(2), 3), "pair": (gg.tensor([2.0]), [5, 6])},
    ]
    out = default_collate(batch)
    assert out["img"].shape == (2, 2, 2) and out["img"].dtype == np.float64
    assert out["label"].dtype == np.int64 and out["label"].numpy().tolist() == [1, 2]
    assert out["w"].dtype == np.float32 and out["flag"].dtype == np.bool_
    assert out["name"] == ["a", "b"]
    assert isinstance(out["pt"], Point) and out["pt"].x.dtype == np.float32
    t, lst = out["pair"]
    assert t.shape == (2, 1) and isinstance(lst, list) and lst[0].numpy().tolist() == [3, 5]


def test_default_collate_errors():
    with pytest.raises(ValueError, match="different shapes"):
        default_collate([np.zeros(3), np.zeros(4)])
    with pytest.raises(TypeError, match="collate_fn"):
        default_collate([object(), object()])
    with pytest.raises(ValueError, match="different lengths"):
        default_collate([(1, 2), (1,)])


def test_transform_dataset_and_loader_with_generated_toy():
    x, y = gg.data.make_moons(20, noise=0.1, generator=gg.Generator(0))
    ds = TransformDataset(TensorDataset(x, y), transform=lambda t: t * 2, target_transform=lambda t: t + 1)
    xb, yb = next(iter(DataLoader(ds, batch_size=20)))
    np.testing.assert_allclose(xb.numpy(), x.numpy() * 2)
    np.testing.assert_array_equal(yb.numpy(), y.numpy() + 1)


def test_training_loop_over_loader_learns():
    x, y = gg.data.make_blobs(120, centers=[[-3, 0], [3, 0]], cluster_std=0.5, generator=gg.Generator(0))
    w = gg.zeros(2, 2, requires_grad=True)
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True, seed=0)
    for _ in range(5):
        for xb, yb in loader:
            logits = xb @ w
            onehot = gg.tensor(np.eye(2, dtype=np.float32)[yb.numpy()])
            loss = ((logits - onehot) ** 2).mean()
            w.grad = None
            loss.backward()
            with gg.no_grad():
                w.data -= 0.1 * w.grad.data
    acc = ((x @ w).numpy().argmax(1) == y.numpy()).mean()
    assert acc > 0.95


def test_list_of_a_loader_over_a_stream_without_length():
    """list(loader) asks len() for a size hint; a stream without __len__ must answer with a TypeError."""
    from graphgrad.data import IterableDataset

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(5))

    batches = list(DataLoader(Stream(), batch_size=2))
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]

