"""Idioms met in public PyTorch programs (makemore, the ng-video-lecture GPT, the PyTorch tutorials...)
that graphgrad.compat.torch runs, one test per idiom, and short programs in their style that train
(tests/compat/torch_realworld/)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import graphgrad.compat.torch as torch
from graphgrad.compat.torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class _Range(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.tensor([i]), torch.tensor(i % 3)


def test_a_random_sampler_with_replacement_may_ask_for_an_endless_epoch():
    """makemore's InfiniteDataLoader: RandomSampler(replacement=True, num_samples=int(1e10)) drawn as read."""
    ds = _Range(10)
    sampler = torch.utils.data.RandomSampler(ds, replacement=True, num_samples=int(1e10))
    assert len(sampler) == int(1e10)
    loader = DataLoader(ds, sampler=sampler, batch_size=4)
    batches = iter(loader)
    for _ in range(3):
        x, y = next(batches)
        assert x.shape == (4, 1) and y.shape == (4,)
        assert 0 <= int(x.min()) and int(x.max()) < 10
    first = [next(iter(sampler)) for _ in range(50)]
    assert all(0 <= i < 10 for i in first) and len(set(first)) > 1
    small = torch.utils.data.RandomSampler(ds, replacement=True, num_samples=7)
    assert len(list(small)) == 7
