"""DataLoader worker processes and iterable datasets: the same batches as without workers (map-style,
shuffled with a seeded generator), sharded streams without duplicates, worker errors raised in the
main process, worker seeding, and PyTorch's argument rules."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data import (ChainDataset, DataLoader, Dataset, IterableDataset, StackDataset, TensorDataset,
                            get_worker_info)


class Squares(Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, i):
        return np.float32(i), np.float32(i * i)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(np.arange(start, self.n, step, dtype=np.float32))

    def __len__(self):
        return self.n


class Broken(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError("sample five is missing")
        return np.float32(i)


def _values(loader):
    return [tuple(np.asarray(t.numpy()).tolist() for t in batch) for batch in loader]


@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_give_the_batches_of_the_main_process(shuffle):
    plain = DataLoader(Squares(), batch_size=4, shuffle=shuffle, seed=3)
    pooled = DataLoader(Squares(), batch_size=4, shuffle=shuffle, seed=3, num_workers=2, prefetch_factor=1)
    assert _values(plain) == _values(pooled) and len(pooled) == 6
    tensors = TensorDataset(gg.arange(10.0), gg.arange(10))
    assert _values(DataLoader(tensors, batch_size=3, num_workers=3)) == _values(DataLoader(tensors, batch_size=3))


def test_iterable_dataset_is_sharded_by_the_workers():
    seen = [v for batch in DataLoader(Stream(10), batch_size=2, num_workers=2) for v in batch.numpy().tolist()]
    assert sorted(seen) == list(range(10))
    alone = [batch.numpy().tolist() for batch in DataLoader(Stream(7), batch_size=3)]
    assert alone == [[0, 1, 2], [3, 4, 5], [6]] and len(DataLoader(Stream(7), batch_size=3)) == 3
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    chained = [v.item() for v in DataLoader(ChainDataset([Stream(2), Stream(3)]), batch_size=None)]
    assert chained == [0, 1, 0, 1, 2]


def test_a_worker_error_is_raised_in_the_main_process():
    with pytest.raises(RuntimeError, match="(?s)DataLoader worker . raised .*sample five is missing"):
        list(DataLoader(Broken(), batch_size=2, num_workers=2))


def test_workers_are_seeded_and_run_worker_init_fn():
    class Noise(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return np.float32(gg.rand(1).item()), np.float32(get_worker_info().id)

    first = _values(DataLoader(Noise(), batch_size=1, num_workers=2, seed=0))
    again = _values(DataLoader(Noise(), batch_size=1, num_workers=2, seed=0))
    assert first == again
    assert [b[1][0] for b in first] == [0.0, 1.0, 0.0, 1.0]
    assert len({b[0][0] for b in first}) == 4  # the two workers draw different numbers


def test_pytorch_argument_rules():
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(Squares(), num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(Squares(), prefetch_factor=2)
    loader = DataLoader(Squares(), batch_size=8, pin_memory=True, persistent_workers=True, num_workers=1, timeout=30)
    assert sum(len(x) for x, _ in loader) == 23
    stacked = StackDataset(Squares(), Squares())
    assert stacked[2] == ((2.0, 4.0), (2.0, 4.0)) and len(stacked) == 23
    assert StackDataset(a=Squares())[1] == {"a": (1.0, 1.0)}
    assert get_worker_info() is None
