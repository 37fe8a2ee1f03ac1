"""The torch submodules PyTorch programs import beyond the core: torch.jit (script/trace run the model
eagerly), torch.onnx.export (graphgrad's exporter), torch.profiler (graphgrad's profiler with PyTorch's
calls), torch.testing.assert_close, torch.utils.checkpoint, torch.utils.tensorboard, torch.random,
memory formats, and the module paths older code imports from (torch.nn.modules.loss,
torch.optim.optimizer, torch.utils.data.sampler)."""
from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

import graphgrad.compat.torch as torch

nn = torch.nn


@pytest.fixture(autouse=True)
def installed():
    """``import torch`` resolves to graphgrad's inside each test; real PyTorch (or nothing) is put back
    after, for the tests that compare with it in the same process."""
    import sys

    def torch_modules() -> dict:
        return {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")}

    saved = torch_modules()
    for name in saved:
        del sys.modules[name]
    torch.install()
    try:
        yield
    finally:
        for name in torch_modules():
            del sys.modules[name]
        sys.modules.update(saved)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()


@pytest.mark.parametrize("path, name", [("torch.nn.modules.loss", "_Loss"), ("torch.nn.modules", "Module"),
                                        ("torch.optim.optimizer", "Optimizer"),
                                        ("torch.utils.data.sampler", "SubsetRandomSampler"),
                                        ("torch.utils.data.dataloader", "default_collate"),
                                        ("torch.utils.data.distributed", "DistributedSampler"),
                                        ("torch.nn.parallel", "DistributedDataParallel"),
                                        ("torch.backends.cudnn", "benchmark"), ("torch.random", "fork_rng"),
                                        ("torch.utils.checkpoint", "checkpoint"), ("torch.jit", "script"),
                                        ("torch.onnx", "export"), ("torch.profiler", "ProfilerActivity"),
                                        ("torch.testing", "assert_close"), ("torch.distributed", "all_reduce"),
                                        ("torch.utils.tensorboard", "SummaryWriter")])
def test_module_paths_programs_import_from_resolve(path, name):
    assert hasattr(importlib.import_module(path), name)


def test_jit_script_and_trace_give_a_model_that_runs():
    model = _model()
    x = torch.randn(3, 4)
    scripted, traced = torch.jit.script(model), torch.jit.trace(model, x)
    torch.testing.assert_close(scripted(x), model(x))
    torch.testing.assert_close(traced(x), model(x))

    @torch.jit.ignore
    def helper(v):
        return v * 2

    assert helper(3) == 6 and not torch.jit.is_scripting()


def test_onnx_export_writes_a_model_onnxruntime_runs(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    model, x = _model(), torch.randn(3, 4)
    path = str(tmp_path / "model.onnx")
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, opset_version=17)
    batch = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    got = ort.InferenceSession(path).run(None, {"input": batch})[0]
    np.testing.assert_allclose(got, model(torch.tensor(batch)).numpy(), rtol=1e-5, atol=1e-6)


def test_profiler_records_ops_and_blocks_and_writes_a_chrome_trace(tmp_path):
    model, x = _model(), torch.randn(3, 4)
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(x)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    assert "model_inference" in table and "Linear" in table
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    names = {e["name"] for e in json.load(open(tmp_path / "trace.json"))["traceEvents"]}
    assert {"model_inference", "Linear", "Relu"} <= names


def test_assert_close_uses_dtype_tolerances_and_reports():
    torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    with pytest.raises(AssertionError, match="not close"):
        torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.1]))
    with pytest.raises(AssertionError, match="shape"):
        torch.testing.assert_close(torch.zeros(2), torch.zeros(3))
    with pytest.raises(AssertionError, match="dtype"):
        torch.testing.assert_close(torch.zeros(2), torch.zeros(2, dtype=torch.float64))
    torch.testing.assert_close({"a": [torch.ones(2)]}, {"a": [torch.ones(2)]})


def test_checkpoint_gives_the_same_values_and_gradients():
    model = _model()
    x = torch.randn(3, 4, requires_grad=True)
    from torch.utils.checkpoint import checkpoint, checkpoint_sequential

    checkpoint(model, x, use_reentrant=False).sum().backward()
    with_checkpoint = x.grad.numpy().copy()
    x.grad = None
    checkpoint_sequential(model, 2, x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), with_checkpoint)


def test_fork_rng_restores_the_generator_and_memory_formats_are_accepted():
    with torch.random.fork_rng():
        first = torch.rand(3)
    torch.testing.assert_close(torch.rand(3), first)
    x = torch.randn(1, 3, 4, 4)
    assert x.contiguous(memory_format=torch.channels_last).shape == (1, 3, 4, 4)
    conv = nn.Conv2d(3, 2, 1)
    assert conv.to(memory_format=torch.channels_last) is conv
    assert repr(torch.channels_last) == "torch.channels_last"


def test_tensorboard_summary_writer_writes_events(tmp_path):
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "run"))
    writer.add_scalar("loss", 0.5, 0)
    writer.close()
    assert any(p.name.startswith("events.out.tfevents") for p in (tmp_path / "run").iterdir())


def test_autograd_functional_jacobian_hessian_and_products():
    import torch.autograd.functional as AF

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    np.testing.assert_allclose(AF.jacobian(lambda a: a ** 2, x).numpy(), np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_allclose(AF.hessian(lambda a: (a ** 3).sum(), x).numpy(), np.diag([6.0, 12.0, 18.0]))
    ja, jb = AF.jacobian(lambda a, b: (a * b).sum(0, keepdim=True), (x, x * 2))
    assert ja.shape == (1, 3) and jb.shape == (1, 3)
    np.testing.assert_allclose(ja.numpy(), [[2.0, 4.0, 6.0]])
    v = torch.ones(3, dtype=torch.float64)
    out, product = AF.vjp(lambda a: a ** 2, x, v)
    np.testing.assert_allclose(product.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(AF.jvp(lambda a: a ** 2, x, v)[1].numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(AF.hvp(lambda a: (a ** 3).sum(), x, v)[1].numpy(), [6.0, 12.0, 18.0])


def test_weight_norm_and_spectral_norm_reparameterize_the_weight():
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    before = lin.weight.detach().numpy().copy()
    nn.utils.weight_norm(lin)
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "weight_g", "weight_v"]
    assert lin.weight_g.shape == (2, 1)
    x = torch.randn(4, 3)
    lin(x).sum().backward()
    np.testing.assert_allclose(lin.weight.detach().numpy(), before, rtol=1e-6)
    assert lin.weight_g.grad is not None and lin.weight_v.grad is not None
    nn.utils.remove_weight_norm(lin)
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "weight"]
    conv = nn.utils.spectral_norm(nn.Conv2d(3, 4, 3))
    for _ in range(30):
        conv(torch.randn(1, 3, 5, 5))
    sigma = np.linalg.svd(conv.weight.detach().numpy().reshape(4, -1), compute_uv=False)[0]
    assert abs(sigma - 1.0) < 1e-3
    assert sorted(conv.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]


def test_set_grad_enabled_called_plainly_switches_at_once():
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()

    @torch.set_grad_enabled(False)
    def inside():
        return torch.is_grad_enabled()

    assert inside() is False and torch.is_grad_enabled()


def test_creation_and_reduction_arguments_programs_pass():
    np.testing.assert_allclose(torch.linspace(0, 1, steps=5).numpy(), [0, 0.25, 0.5, 0.75, 1.0])
    mean = torch.zeros(2, 3)
    assert torch.normal(mean, 1.0).shape == (2, 3) and torch.normal(0.0, torch.ones(4)).shape == (4,)
    assert torch.normal(2.0, 3.0, size=(5,)).shape == (5,)
    r = torch.randint_like(torch.zeros(3, 2), 5)
    assert r.shape == (3, 2) and (r.numpy() >= 0).all() and (r.numpy() < 5).all()
    ints = torch.tensor([[1, 2], [3, 4]])
    assert ints.sum(dtype=torch.float64).dtype == torch.float64
    assert torch.sum(ints, 1, dtype=torch.float32).tolist() == [3.0, 7.0]


def test_parametrizations_keep_pytorchs_layout_and_train():
    import torch.nn.utils.parametrize as P
    from torch.nn.utils.parametrizations import weight_norm

    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    before = lin.weight.detach().numpy().copy()
    weight_norm(lin)
    assert sorted(lin.state_dict()) == ["bias", "parametrizations.weight.original0",
                                        "parametrizations.weight.original1"]
    lin(torch.randn(4, 3)).sum().backward()
    np.testing.assert_allclose(lin.weight.detach().numpy(), before, rtol=1e-6)
    assert lin.parametrizations.weight.original0.grad.shape == (2, 1)

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    w = m.weight.detach().numpy()
    assert np.allclose(w, w.T) and P.is_parametrized(m, "weight")
    m(torch.randn(2, 3)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    P.remove_parametrizations(m, "weight")
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"] and not P.is_parametrized(m)


def test_spectral_norm_parametrization_as_pytorch():
    """PyTorch 2.13's output and weight gradient for this weight (the power iteration converges to the
    top singular value 5.7554 of [[1, 2, 2], [0, 3, 4]])."""
    lin = torch.nn.Linear(3, 2)
    lin.weight.data = torch.tensor([[1.0, 2.0, 2.0], [0.0, 3.0, 4.0]])
    lin.bias.data.zero_()
    torch.nn.utils.parametrizations.spectral_norm(lin)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                      "parametrizations.weight.0._v"]
    y = lin(torch.ones(1, 3))
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [[0.86875075, 1.216251]], rtol=1e-5)
    np.testing.assert_allclose(lin.parametrizations.weight.original.grad.numpy(),
                               [[0.15789254, 0.0600584, 0.0327329], [0.14642464, -0.02216114, -0.06924787]], atol=1e-6)
    conv = torch.nn.utils.parametrizations.spectral_norm(torch.nn.ConvTranspose2d(2, 3, 3))
    assert conv.parametrizations.weight[0].dim == 1 and tuple(conv(torch.ones(1, 2, 4, 4)).shape) == (1, 3, 6, 6)


def test_fusing_batch_norm_into_conv_and_linear_and_norm_utilities():
    torch.manual_seed(0)
    conv, bn = torch.nn.Conv2d(2, 3, 3).eval(), torch.nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3]))
        bn.running_var.copy_(torch.tensor([1.5, 0.5, 2.0]))
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    x = torch.randn(1, 2, 5, 5)
    fused = torch.nn.utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), atol=1e-5)
    lin, bn1 = torch.nn.Linear(3, 3).eval(), torch.nn.BatchNorm1d(3).eval()
    np.testing.assert_allclose(torch.nn.utils.fuse_linear_bn_eval(lin, bn1)(torch.ones(2, 3)).detach().numpy(),
                               bn1(lin(torch.ones(2, 3))).detach().numpy(), atol=1e-6)
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.ones(3) * 2
    assert abs(float(torch.nn.utils.get_total_norm([p.grad])) - 12 ** 0.5) < 1e-6
    assert abs(float(torch.nn.utils.clip_grad_norm([p], 1.0)) - 12 ** 0.5) < 1e-6
    layer = torch.nn.utils.remove_spectral_norm(torch.nn.utils.spectral_norm(torch.nn.Linear(3, 2)))
    assert sorted(n for n, _ in layer.named_parameters()) == ["bias", "weight"] and not layer._forward_pre_hooks


def test_tensor_methods_of_older_programs():
    probs = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert probs.multinomial(2, replacement=True).tolist() == [[1, 1], [0, 0]]
    assert probs.bernoulli().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    x = torch.ones(2, 3)
    assert tuple(x.new(2, 2).shape) == (2, 2) and x.new([1, 2]).dtype == torch.float32 and tuple(x.new().shape) == (0,)
    assert torch.arange(6.0).resize_(2, 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    a = torch.zeros(2, 2)
    a.addmm_(torch.ones(2, 2), torch.ones(2, 2))
    assert a.tolist() == [[2, 2], [2, 2]]
    assert torch.zeros(3).apply_(lambda v: v + 2).tolist() == [2, 2, 2]
    assert float(torch.zeros(100).log_normal_().min()) > 0
