"""Models exported by PyTorch's ``torch.onnx.export`` (TorchScript and dynamo exporters), committed
with PyTorch's outputs and input gradients by ``torch_models/generate.py``: graphgrad imports each,
runs it as a Module and as a static graph equal to PyTorch, differentiates it equal to PyTorch, runs
a dynamic batch, and fine-tunes one. PyTorch is not needed to run these tests."""
import glob
import os

import numpy as np
import pytest

pytest.importorskip("onnx")

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import load, to_module  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_models")
MODELS = sorted(os.path.basename(p)[:-len(".onnx")] for p in glob.glob(os.path.join(HERE, "*.onnx")))


def _files(name):
    with np.load(os.path.join(HERE, name + ".npz")) as archive:
        return os.path.join(HERE, name + ".onnx"), dict(archive)


def test_the_exported_models_are_there():
    assert len(MODELS) >= 12 and {"cnn_ts", "cnn_dynamo", "transformer_dynamo", "lstm_ts"} <= set(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_module_equals_pytorch_forward_and_input_gradient(name):
    path, data = _files(name)
    net = to_module(path)
    x = gg.tensor(data["x"], requires_grad=data["x"].dtype.kind == "f")
    y = net(x)
    assert y.dtype == data["y"].dtype
    np.testing.assert_allclose(y.numpy(), data["y"], rtol=1e-4, atol=1e-5)
    if "gx" in data:
        (y * gg.tensor(data["gy"])).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), data["gx"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_static_graph_equals_pytorch(name):
    path, data = _files(name)
    imported = load(path)
    (y,) = imported.run({"x": data["x"]})
    np.testing.assert_allclose(y, data["y"], rtol=1e-4, atol=1e-5)
    if "x2" in data:  # exported with a dynamic batch: the same graph runs another batch size
        (y2,) = imported.run({"x": data["x2"]})
        np.testing.assert_allclose(y2, data["y2"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cnn_ts", "cnn_dynamo"])
def test_pytorch_cnn_fine_tunes(name):
    path, data = _files(name)
    net = to_module(path)
    params = list(net.parameters())
    assert params, "float initializers become Parameters"
    x = gg.tensor(np.concatenate([data["x"], data["x2"]]) if "x2" in data else data["x"])
    labels = gg.tensor(np.arange(x.shape[0]) % 5)
    opt = gg.optim.Adam(params, lr=0.01)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = gg.nll_loss(net(x), labels)  # the model ends in log_softmax
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0], losses
