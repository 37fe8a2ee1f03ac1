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
from tests.compat.test_programs import _reached, _run

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


def test_sparse_tensors_are_built_dense_and_multiply_as_matrices():
    """pytorch/examples gcn and gat: sparse_coo_tensor, diag(...).to_sparse(), torch.spmm, x.to_dense()."""
    i, v = torch.tensor([[0, 1, 1, 1], [2, 0, 2, 2]]), torch.tensor([3.0, 4.0, 5.0, 1.0])
    s = torch.sparse_coo_tensor(i, v, (2, 3))
    assert s.to_dense().tolist() == [[0.0, 0.0, 3.0], [4.0, 0.0, 6.0]]  # duplicates add up
    assert s.coalesce().indices().tolist() == [[0, 1, 1], [2, 0, 2]] and s.values().tolist() == [3.0, 4.0, 6.0]
    assert s._nnz() == 3 and s.to_sparse() is s and not s.is_sparse
    adj = torch.eye(3) + torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 2]]), torch.ones(2), (3, 3),
                                                 dtype=torch.int64)
    scale = torch.diag(1 / torch.sum(adj, dim=1)).to_sparse()
    assert torch.allclose(torch.spmm(scale @ adj, torch.ones(3, 1)), torch.ones(3, 1))
    assert torch.sparse.mm(s, torch.ones(3, 1)).tolist() == [[3.0], [10.0]]
    csr = torch.sparse_csr_tensor(torch.tensor([0, 1, 3]), torch.tensor([2, 0, 2]), torch.tensor([3.0, 4.0, 6.0]),
                                  (2, 3))
    assert csr.tolist() == s.tolist()
    values = torch.tensor([1.0, 2.0], requires_grad=True)  # gradients reach the values
    (torch.sparse_coo_tensor(torch.tensor([[0, 2]]), values, (3,)) * torch.tensor([5.0, 6.0, 7.0])).sum().backward()
    assert values.grad.tolist() == [5.0, 7.0]


def test_factories_take_size_as_a_keyword():
    """pytorch/examples gat: nn.Parameter(torch.empty(size=(in_features, n_hidden * n_heads)))."""
    assert torch.empty(size=(2, 3)).shape == (2, 3) and torch.zeros(size=[4]).shape == (4,)
    assert torch.randn(2, 3).shape == (2, 3) and torch.ones((2, 3)).shape == (2, 3)
    assert torch.rand(size=(2,), dtype=torch.float64).dtype == torch.float64
    assert torch.zeros(3, layout=torch.strided, pin_memory=False).shape == (3,)
    with pytest.raises(TypeError):
        torch.ones(2, size=(3,))


def test_autograd_variable_of_old_tutorials():
    """The PyTorch tutorials' Bi-LSTM CRF: autograd.Variable(torch.Tensor(1, n).fill_(-10000.)) and
    self.transitions.data[i, :] = -10000 on a Parameter."""
    from graphgrad.compat.torch import autograd

    init = torch.Tensor(1, 5).fill_(-10000.0)
    init[0][3] = 0.0
    v = autograd.Variable(init)
    assert isinstance(v, autograd.Variable) and isinstance(init, autograd.Variable) and not v.requires_grad
    assert v.tolist() == init.tolist() and v.grad_fn is None
    w = autograd.Variable(torch.ones(2) * 2, requires_grad=True)
    assert w.requires_grad and w.grad_fn is None
    transitions = torch.nn.Parameter(torch.randn(5, 5))
    transitions.data[3, :] = -10000
    assert transitions[3].tolist() == [-10000.0] * 5
    tags = torch.cat([torch.LongTensor([3]), torch.tensor([0, 1])])
    score = autograd.Variable(torch.Tensor([0])) + transitions[tags[1], tags[0]]
    score.sum().backward()
    assert transitions.grad[0, 3].item() == 1.0 and transitions.grad.sum().item() == 1.0


# ---- programs in the style of public ones: each trains, on graphgrad and (when installed) on PyTorch ----------
#: program -> the figure its last line must reach: an accuracy (at least) or a loss (at most; makemore's words
#: have 15 symbols, a loss of 2.7 for a model that learned nothing)
PROGRAMS = {"makemore_names.py": ("loss", 1.2), "gcn_citations.py": ("accuracy", 0.85),
            "bilstm_crf_tagger.py": ("accuracy", 0.9), "nn_refactoring.py": ("accuracy", 0.9),
            "per_sample_dp_sgd.py": ("accuracy", 0.9)}
SHIM = ("import graphgrad.compat.torch as t; t.install(); import runpy, sys; "
        "runpy.run_path(sys.argv[1], run_name='__main__')")


@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_a_program_in_the_style_of_a_public_one_trains_on_graphgrad(program, goal):
    assert _reached(_run(["-c", SHIM, os.path.join(HERE, "torch_realworld", program)]), goal)


#: the programs also run on PyTorch itself (the two whose idioms the facade composes: sparse layouts, torch.func;
#: the others once by hand, to keep this file's time short)
ON_PYTORCH = ("gcn_citations.py", "per_sample_dp_sgd.py")


@pytest.mark.skipif(__import__("importlib").util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("program, goal", [(p, PROGRAMS[p]) for p in ON_PYTORCH])
def test_the_same_program_trains_on_pytorch(program, goal):
    assert _reached(_run([os.path.join(HERE, "torch_realworld", program)]), goal)


def test_torch_func_transforms_compose_per_sample_gradients():
    """The PyTorch tutorials' per-sample gradients: vmap(grad(loss of functional_call(model, (params,
    buffers), x)), in_dims=(None, None, 0, 0)) equals one autograd.grad per sample."""
    from graphgrad.compat.torch.func import functional_call, grad, grad_and_value, hessian, jacrev, vmap, vjp
    from graphgrad.compat.torch.func import stack_module_state

    F = torch.nn.functional
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    data, targets = torch.randn(5, 4), torch.randint(3, (5,))
    by_hand = [torch.autograd.grad(F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]), list(model.parameters()))
               for i in range(5)]
    params = {k: v.detach() for k, v in model.named_parameters()}

    def compute_loss(params, buffers, sample, target):
        return F.cross_entropy(functional_call(model, (params, buffers), (sample.unsqueeze(0),)), target.unsqueeze(0))

    per_sample = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, {}, data, targets)
    assert list(per_sample) == [k for k, _ in model.named_parameters()]
    for j, stacked in enumerate(per_sample.values()):
        assert stacked.shape == (5,) + tuple(by_hand[0][j].shape)
        assert torch.allclose(stacked, torch.stack([g[j] for g in by_hand]), atol=1e-6)
    assert model[0].weight is dict(model.named_parameters())["0.weight"]  # the module's own are back

    x = torch.tensor([1.0, 2.0, 3.0])
    cube = lambda v: (v ** 3).sum()  # noqa: E731
    assert grad(cube)(x).tolist() == [3.0, 12.0, 27.0]
    assert grad(grad(cube))(torch.tensor(2.0)).item() == 12.0
    assert grad_and_value(cube)(x)[1].item() == 36.0
    assert hessian(cube)(x).tolist() == [[6.0, 0, 0], [0, 12.0, 0], [0, 0, 18.0]]
    assert jacrev(torch.sin)(x).shape == (3, 3)
    assert vjp(lambda v: v * 2, x)[1](torch.ones(3))[0].tolist() == [2.0, 2.0, 2.0]
    assert vmap(torch.dot)(torch.ones(2, 3), torch.ones(2, 3)).tolist() == [3.0, 3.0]
    assert vmap(lambda v: v.sum(), in_dims=1)(torch.ones(2, 5)).shape == (5,)

    ensemble = [torch.nn.Linear(3, 2) for _ in range(3)]  # the tutorials' model ensembling
    stacked_params, stacked_buffers = stack_module_state(ensemble)
    base = torch.nn.Linear(3, 2)
    out = vmap(lambda p, b, v: functional_call(base, (p, b), (v,)), in_dims=(0, 0, None))(
        stacked_params, stacked_buffers, torch.ones(4, 3))
    assert out.shape == (3, 4, 2) and torch.allclose(out[1], ensemble[1](torch.ones(4, 3)))
    assert torch.nn.utils.stateless.functional_call(base, dict(ensemble[0].named_parameters()),
                                                    torch.ones(1, 3)).shape == (1, 2)


def test_benchmark_timer_measures_a_statement():
    """The per-sample-gradients tutorial times both ways with torch.utils.benchmark.Timer(stmt, globals=...)."""
    from graphgrad.compat.torch.utils.benchmark import Timer

    x = torch.ones(3)
    m = Timer(stmt="x * 2", globals={"x": x}).timeit(20)
    assert len(m.times) == 1 and m.times[0] > 0 and m.mean == m.median and "Measurement" in repr(m)
    assert Timer("x + 1", globals={"x": x}).blocked_autorange(min_run_time=0.01).times


def test_out_arguments_write_into_the_given_tensor():
    """The tutorials' tensors lessons: torch.matmul(a, b, out=c), torch.rand(2, 2, out=c), torch.cat(..., out=)."""
    a, b = torch.ones(2, 2), torch.ones(2, 2) * 2
    c = torch.zeros(2, 2)
    assert torch.matmul(a, b, out=c) is c and c.tolist() == [[4.0, 4.0], [4.0, 4.0]]
    assert torch.rand(2, 2, out=c) is c and float(c.max()) < 1.0
    e = torch.zeros(4, 2)
    assert torch.cat([a, b], out=e) is e and e[2:].tolist() == [[2.0, 2.0], [2.0, 2.0]]
    s = torch.zeros(2)
    torch.sum(torch.ones(2, 2), 0, out=s)
    assert s.tolist() == [2.0, 2.0]
    i = torch.zeros(2, dtype=torch.long)
    torch.add(torch.tensor([1, 2]), 1, out=i)
    assert i.tolist() == [2, 3] and i.dtype == torch.long
    assert torch.add(a, b, alpha=2).tolist() == [[5.0, 5.0], [5.0, 5.0]]
    with pytest.raises(ValueError, match="shape"):
        torch.mul(a, b, out=torch.zeros(3))


def test_shape_functions_take_pytorch_keyword_names():
    """MorvanZhou/PyTorch-Tutorial: torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1); also flatten(start_dim=),
    roll(shifts=, dims=), flip(dims=), gather(dim=, index=), transpose(dim0=, dim1=)."""
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1).shape == (100, 1)
    assert torch.squeeze(x[None], dim=0).shape == (2, 3) and torch.unsqueeze(input=x, dim=0).shape == (1, 2, 3)
    assert torch.flatten(x[None], start_dim=1).shape == (1, 6) and torch.flatten(x, start_dim=0, end_dim=-1).shape == (6,)
    assert torch.roll(x, shifts=1, dims=1).tolist() == [[2.0, 0.0, 1.0], [5.0, 3.0, 4.0]]
    assert torch.roll(x, 1).tolist() == [[5.0, 0.0, 1.0], [2.0, 3.0, 4.0]]
    assert torch.flip(x, dims=[1]).tolist() == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]
    assert torch.gather(x, dim=1, index=torch.tensor([[2], [0]])).tolist() == [[2.0], [3.0]]
    assert torch.transpose(x, dim0=0, dim1=1).shape == (3, 2) and len(torch.chunk(x, 3, dim=1)) == 3
    assert torch.tile(x, dims=(2,)).shape == (2, 6)


def test_anomaly_switch_and_triangle_keywords():
    """torch.autograd.set_detect_anomaly(True) as a call or a context; torch.triu(x, diagonal=1)."""
    from graphgrad.compat.torch import autograd

    assert not autograd.is_anomaly_enabled()
    autograd.set_detect_anomaly(True)
    assert autograd.is_anomaly_enabled()
    autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled()
        with pytest.raises(Exception, match="NaN|inf"):
            torch.log(torch.tensor([-1.0], requires_grad=True)).sum().backward()
    assert not autograd.is_anomaly_enabled()
    with autograd.detect_anomaly(check_nan=True):
        pass
    assert torch.triu(torch.ones(3, 3), diagonal=1).sum().item() == 3.0
    assert torch.tril(torch.ones(3, 3), diagonal=-1).sum().item() == 3.0
