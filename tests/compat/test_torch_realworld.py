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


def test_losses_take_the_deprecated_size_average_and_reduce_arguments():
    """yunjey/pytorch-tutorial's VAE: F.binary_cross_entropy(x_reconst, x, size_average=False); older code
    builds nn.MSELoss(size_average=False)."""
    F = torch.nn.functional
    x, y = torch.rand(4, 3), torch.rand(4, 3)
    total = F.binary_cross_entropy(x, y, reduction="sum").item()
    assert F.binary_cross_entropy(x, y, size_average=False).item() == pytest.approx(total)
    assert F.mse_loss(x, y, reduce=False).shape == (4, 3)
    assert F.mse_loss(x, y, size_average=True).item() == pytest.approx(F.mse_loss(x, y).item())
    loss = torch.nn.MSELoss(size_average=False)
    assert loss.reduction == "sum" and isinstance(loss, torch.nn.MSELoss) and isinstance(loss, torch.nn.Module)
    assert torch.nn.CrossEntropyLoss(reduce=False)(torch.randn(5, 3), torch.tensor([0, 1, 2, 0, 1])).shape == (5,)
    assert torch.nn.NLLLoss2d is torch.nn.NLLLoss


def test_torch_nn_functional_is_the_pytorch_flavoured_module():
    """`torch.nn.functional` (attribute and, after install(), import) is the facade's module, whose
    softmax(dim=) and legacy loss arguments follow PyTorch; graphgrad's other functions pass through."""
    import graphgrad as gg

    assert torch.nn.functional.__name__ == "graphgrad.compat.torch.nn.functional"
    assert torch.nn.functional.relu is gg.nn.functional.relu
    out = torch.nn.functional.softmax(torch.zeros(2, 4), dim=1, dtype=torch.float64)
    assert out.dtype == torch.float64 and float(out.sum()) == pytest.approx(2.0)
