"""DistributedSampler and ShardSampler in one process, with num_replicas and rank given explicitly."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data import DataLoader, TensorDataset
from graphgrad.distributed import DistributedSampler, ShardSampler


def shares(n, replicas, epoch=0, **kwargs):
    out = []
    for r in range(replicas):
        sampler = DistributedSampler(range(n), num_replicas=replicas, rank=r, **kwargs)
        sampler.set_epoch(epoch)
        out.append(list(sampler))
    return out


@pytest.mark.parametrize("n, replicas", [(12, 3), (10, 3), (10, 4), (2, 5), (7, 1)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_shares_are_equal_disjoint_up_to_padding_and_cover_the_dataset(n, replicas, shuffle):
    parts = shares(n, replicas, shuffle=shuffle, seed=5)
    count = -(-n // replicas)
    assert [len(p) for p in parts] == [count] * replicas
    assert len(DistributedSampler(range(n), num_replicas=replicas, rank=0)) == count
    every = [i for p in parts for i in p]
    assert sorted(set(every)) == list(range(n))                     # together the whole dataset
    assert len(every) - len(set(every)) == count * replicas - n     # repeats only to pad
    if n >= replicas:
        # the padding repeats the start of the epoch's order: only the last row of the interleave repeats
        order = [parts[i % replicas][i // replicas] for i in range(count * replicas)]
        assert order[n:] == order[:count * replicas - n]


def test_strided_split_of_the_order_and_padding_match_pytorch_semantics():
    assert shares(10, 3, shuffle=False) == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert shares(10, 3, shuffle=False, drop_last=True) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]  # padding wraps as often as needed
    torch = pytest.importorskip("torch")
    from torch.utils.data import DistributedSampler as TorchSampler

    for n, replicas, drop_last in [(10, 3, False), (10, 3, True), (11, 4, False), (11, 4, True), (3, 7, False)]:
        expected = [list(TorchSampler(range(n), num_replicas=replicas, rank=r, shuffle=False, drop_last=drop_last))
                    for r in range(replicas)]
        assert shares(n, replicas, shuffle=False, drop_last=drop_last) == expected, (n, replicas, drop_last)
    del torch


def test_drop_last_cuts_the_tail_and_the_shares_are_disjoint():
    parts = shares(11, 4, shuffle=True, seed=2, drop_last=True, epoch=3)
    assert [len(p) for p in parts] == [2] * 4
    every = [i for p in parts for i in p]
    assert len(set(every)) == 8
    assert len(DistributedSampler(range(11), num_replicas=4, rank=3, drop_last=True)) == 2
    assert shares(3, 4, drop_last=True) == [[], [], [], []]


def test_epochs_reshuffle_the_same_way_on_every_rank():
    n, replicas = 20, 2
    epochs = [shares(n, replicas, epoch=e, seed=7) for e in range(3)]
    orders = [[p[i % replicas][i // replicas] for i in range(n)] for p in epochs]
    for e, order in enumerate(orders):
        assert order == np.random.default_rng(7 + e).permutation(n).tolist()  # seed + epoch, as every rank sees it
    assert orders[0] != orders[1] != orders[2]
    assert shares(n, replicas, epoch=1, seed=7) == epochs[1]   # reproducible
    assert shares(n, replicas, epoch=0, seed=8) != epochs[0]   # the seed matters
    unshuffled = shares(n, replicas, epoch=4, shuffle=False)
    assert unshuffled == shares(n, replicas, epoch=0, shuffle=False)


def test_defaults_come_from_the_world_of_one_and_bad_places_are_refused():
    sampler = DistributedSampler(range(5), shuffle=False)
    assert (sampler.num_replicas, sampler.rank) == (1, 0)
    assert list(sampler) == [0, 1, 2, 3, 4]
    assert list(ShardSampler(range(3))) == [0, 1, 2]
    with pytest.raises(ValueError, match=r"rank must be an int in \[0, 1\]"):
        DistributedSampler(range(5), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="num_replicas must be a positive int"):
        DistributedSampler(range(5), num_replicas=0, rank=0)
    assert "num_replicas=1" in repr(sampler)


def test_a_data_loader_batches_the_ranks_share():
    x = np.arange(22, dtype=np.float32).reshape(11, 2)
    ds = TensorDataset(gg.tensor(x), gg.tensor(np.arange(11)))
    seen = []
    for r in range(2):
        sampler = DistributedSampler(ds, num_replicas=2, rank=r, seed=1)
        sampler.set_epoch(2)
        loader = DataLoader(ds, batch_size=4, sampler=sampler)
        assert len(loader) == 2
        batches = list(loader)
        assert [int(b[1].shape[0]) for b in batches] == [4, 2]
        labels = np.concatenate([b[1].numpy() for b in batches])
        np.testing.assert_array_equal(labels, sampler.index_array())
        np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x[labels])
        seen += labels.tolist()
    assert sorted(set(seen)) == list(range(11)) and len(seen) == 12


def test_shard_sampler_splits_in_order_without_padding():
    parts = [list(ShardSampler(range(7), num_replicas=3, rank=r)) for r in range(3)]
    assert parts == [[0, 3, 6], [1, 4], [2, 5]]
    assert [len(ShardSampler(range(7), num_replicas=3, rank=r)) for r in range(3)] == [3, 2, 2]
    assert list(ShardSampler(range(1), num_replicas=3, rank=2)) == []
