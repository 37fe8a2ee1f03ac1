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


#: exported with a dynamic batch and sequence length: one import runs every shape
DYNAMIC_SEQUENCE = ["gpt2_dynamo", "llama_dynamo"]


@pytest.mark.parametrize("name", MODELS)
def test_static_graph_equals_pytorch(name):
    path, data = _files(name)
    imported = load(path)
    (y,) = imported.run({"x": data["x"]})
    np.testing.assert_allclose(y, data["y"], rtol=1e-4, atol=1e-5)
    for key in ("2", "3"):  # exported with dynamic axes: the same graph runs other batch sizes and lengths
        if "x" + key in data:
            (y2,) = imported.run({"x": data["x" + key]})
            np.testing.assert_allclose(y2, data["y" + key], rtol=1e-4, atol=1e-5)


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


def _fine_tune(net, data, steps=5):
    opt = gg.optim.Adam(net.parameters(), lr=0.01)
    x, targets = gg.tensor(data["train_x"]), gg.tensor(data["train_targets"])
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        logits = net(x)
        loss = gg.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name", ["gpt2_dynamo", "llama_dynamo"])
def test_dynamo_language_models_fine_tune_as_in_pytorch(name):
    """The dynamo exporter stores scalars (GPT-2's Pow exponent 3.0, the -3.4e38 mask fill, attention
    scales, RMSNorm's eps and exponent) and buffers (rotary inv_freq) as float initializers: only
    PyTorch's parameters are trained, so five Adam steps give PyTorch's losses."""
    path, data = _files(name)
    net = to_module(path)
    assert "inv_freq" not in net.trained_initializers
    losses = _fine_tune(net, data)
    np.testing.assert_allclose(losses, data["losses"], rtol=2e-4)


def test_training_every_float_initializer_reproduces_the_nan():
    """``trainable=True`` is the old behaviour: GPT-2's exponent 3.0 is trained and gets a NaN gradient."""
    path, data = _files("gpt2_dynamo")
    with np.errstate(invalid="ignore", divide="ignore"):
        losses = _fine_tune(to_module(path, trainable=True), data, steps=2)
    assert np.isnan(losses[1])


@pytest.mark.parametrize("name", ["gpt2_dynamo", "llama_dynamo"])
def test_the_module_reports_what_it_trains(name):
    path, _ = _files(name)
    net = to_module(path)
    assert len(list(net.parameters())) == len(net.trained_initializers) > 5
    assert net.constant_initializers
    text = repr(net)
    assert "trained=[" in text and "constant=[" in text
    graph = load(path, input_shapes={"x": (2, 8)})
    assert set(graph.variables) == set(net.trained_initializers)


@pytest.mark.parametrize("name", DYNAMIC_SEQUENCE)
def test_dynamic_shapes_are_computed_when_the_graph_runs(name):
    """Imported once with (batch, sequence) unknown: Shape and the arithmetic after it are graph ops,
    the dims known at import stay static, and three input shapes give PyTorch's outputs."""
    path, data = _files(name)
    imported = load(path)
    assert imported.inputs["x"].shape == (None, None)
    assert imported.outputs["y"].shape == (None, None, 32)  # the vocabulary stays a static dimension
    kinds = {type(node.op).__name__ for node in imported.graph.get_operations() if hasattr(node, "op")}
    assert {"ShapeOf", "ArangeOf"} <= kinds
    session = gg.Session(imported.graph)
    for key in ("", "2", "3"):
        (y,) = session.run([imported.outputs["y"]], {imported.inputs["x"]: data["x" + key]})
        np.testing.assert_allclose(y, data["y" + key], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", DYNAMIC_SEQUENCE)
def test_one_trace_serves_every_shape(name):
    path, data = _files(name)
    net = to_module(path)
    forward = gg.function(lambda x: net(x), input_signature=[gg.TensorSpec((None, None), gg.int64)])
    for key in ("", "2", "3"):
        np.testing.assert_allclose(forward(gg.tensor(data["x" + key])).numpy(), data["y" + key], rtol=1e-4, atol=1e-5)
    assert forward.trace_count == 1


@pytest.mark.parametrize("name", DYNAMIC_SEQUENCE)
def test_a_compiled_fine_tuning_step_with_unknown_shapes_matches_pytorch(name):
    """The whole step (forward, loss, backward, Adam) traced once with (batch, sequence) unknown:
    gradients flow through the run-time slices and reshapes, and the losses are PyTorch's."""
    path, data = _files(name)
    net = to_module(path)
    opt = gg.optim.Adam(net.parameters(), lr=0.01)

    @gg.function(input_signature=[gg.TensorSpec((None, None), gg.int64)] * 2)
    def step(x, targets):
        opt.zero_grad()
        logits = net(x)
        loss = gg.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    x, targets = gg.tensor(data["train_x"]), gg.tensor(data["train_targets"])
    losses = [step(x, targets).item() for _ in range(5)]
    np.testing.assert_allclose(losses, data["losses"], rtol=2e-4)
    assert step.trace_count == 1


def test_a_bert_style_encoder_with_an_attention_mask_runs_every_shape_from_one_import():
    """BERT-style export (two inputs with dynamic batch and sequence length; position ids sliced from
    a buffer by the sequence length; an additive mask from the attention-mask input): one static
    import runs three shapes, equal to PyTorch; so does one gg.function trace of the module."""
    folder = os.path.join(HERE, "bert")
    with np.load(os.path.join(folder, "bert_dynamo.npz")) as archive:
        data = dict(archive)
    path = os.path.join(folder, "bert_dynamo.onnx")
    imported = load(path)
    net = to_module(path)
    spec = gg.TensorSpec((None, None), gg.int64)
    forward = gg.function(lambda ids, mask: net(ids, mask), input_signature=[spec, spec])
    for key in ("", "2", "3"):
        feeds = {"input_ids": data["input_ids" + key], "attention_mask": data["attention_mask" + key]}
        (pooled,) = imported.run(feeds)
        np.testing.assert_allclose(pooled, data["pooled" + key], rtol=1e-4, atol=1e-5)
        traced = forward(gg.tensor(feeds["input_ids"]), gg.tensor(feeds["attention_mask"]))
        np.testing.assert_allclose(traced.numpy(), data["pooled" + key], rtol=1e-4, atol=1e-5)
    assert forward.trace_count == 1
    assert "position_ids" not in net.trained_initializers
