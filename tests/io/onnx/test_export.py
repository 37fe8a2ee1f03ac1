"""ONNX export: every nn layer and loss, example models, opsets, dynamic axes, gg.function and static
graphs, the error for ops without ONNX form, and a sweep of the op table, each checked by
``onnx.checker`` (full check) and run in onnxruntime against graphgrad's eager result."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import graphgrad as gg  # noqa: E402
from graphgrad import nn  # noqa: E402
from graphgrad.graph.graph import GraphNode, topo_order  # noqa: E402
from graphgrad.io.onnx.export import CONVERTERS, OnnxExportError  # noqa: E402
from tests.example_loader import load_example  # noqa: E402
from tests.ops.op_table import ROWS  # noqa: E402

RNG = np.random.default_rng(0)


def f32(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def run_onnx(model, inputs: list) -> list:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def _flat(out) -> list:
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def eager(target, inputs):
    return [o.numpy() for o in _flat(target(*[gg.tensor(x) for x in inputs]))]


def check_export(target, inputs, tmp_path, rtol=1e-4, atol=1e-5, **kwargs):
    """Export, check (full), run in onnxruntime and compare with graphgrad eager; returns the model."""
    path = tmp_path / "model.onnx"
    model = gg.onnx.export(target, path, inputs, **kwargs)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    expected = eager(target, inputs)
    got = run_onnx(model, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, f"{g.dtype}{g.shape} != {e.dtype}{e.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    # and back: the exported file imported by graphgrad computes the same (graphgrad -> ONNX -> graphgrad)
    again = [o.numpy() for o in _flat(gg.onnx.to_module(model)(*[gg.tensor(x) for x in inputs]))]
    for g, e in zip(again, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, f"round trip: {g.dtype}{g.shape} != {e.dtype}{e.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg="round trip through ONNX")
    return model


# ---- layers and losses ----------------------------------------------------------------------------------
def _layers():
    x2, x3, x4 = f32(4, 8), f32(2, 3, 10), f32(2, 3, 8, 8)
    seq = f32(2, 5, 8)
    bn1, bn2 = nn.BatchNorm1d(8), nn.BatchNorm2d(3)
    for bn in (bn1, bn2):  # non-trivial running statistics
        bn.running_mean.data[...] = RNG.uniform(-1, 1, bn.running_mean.shape)
        bn.running_var.data[...] = RNG.uniform(0.5, 2, bn.running_var.shape)
    return {
        "Linear": (nn.Linear(8, 5), [x2]),
        "Bilinear": (nn.Bilinear(8, 6, 3), [x2, f32(4, 6)]),
        "Conv1d": (nn.Conv1d(3, 4, 3, padding=1, stride=2), [x3]),
        "Conv2d": (nn.Conv2d(3, 4, 3, padding=1, dilation=2), [x4]),
        "Conv2d-groups": (nn.Conv2d(4, 6, 3, groups=2), [f32(2, 4, 6, 6)]),
        "ConvTranspose2d": (nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1), [x4]),
        "MaxPool2d": (nn.MaxPool2d(3, stride=2, padding=1), [x4]),
        "AvgPool2d": (nn.AvgPool2d(2), [x4]),
        "AdaptiveAvgPool2d": (nn.AdaptiveAvgPool2d((3, 5)), [x4]),
        "Flatten": (nn.Flatten(), [x4]),
        "Unflatten": (nn.Unflatten(1, (2, 4)), [x2]),
        "BatchNorm1d": (bn1.eval(), [x2]),
        "BatchNorm2d": (bn2.eval(), [x4]),
        "LayerNorm": (nn.LayerNorm(8), [x2]),
        "GroupNorm": (nn.GroupNorm(2, 4), [f32(2, 4, 5, 5)]),
        "Dropout": (nn.Dropout(0.5).eval(), [x2]),
        "Embedding": (nn.Embedding(10, 4), [np.array([[1, 2, 9], [0, 4, 4]])]),
        "ReLU": (nn.ReLU(), [x2]), "ReLU6": (nn.ReLU6(), [x2 * 8]), "GELU": (nn.GELU(), [x2]),
        "GELU-tanh": (nn.GELU(approximate="tanh"), [x2]), "Tanh": (nn.Tanh(), [x2]),
        "Sigmoid": (nn.Sigmoid(), [x2]), "Softmax": (nn.Softmax(-1), [x2]), "LogSoftmax": (nn.LogSoftmax(1), [x2]),
        "LeakyReLU": (nn.LeakyReLU(0.1), [x2]), "ELU": (nn.ELU(), [x2]), "SELU": (nn.SELU(), [x2]),
        "SiLU": (nn.SiLU(), [x2]), "Mish": (nn.Mish(), [x2]), "Softplus": (nn.Softplus(), [x2]),
        "Hardtanh": (nn.Hardtanh(), [x2 * 2]),
        "RNN": (nn.RNN(8, 6, batch_first=True), [seq]),
        "LSTM": (nn.LSTM(8, 6, num_layers=2, batch_first=True), [seq]),
        "GRU": (nn.GRU(8, 6, batch_first=True), [seq]),
        "MultiheadAttention": (nn.MultiheadAttention(8, 2, batch_first=True), [seq, f32(2, 4, 8), f32(2, 4, 8)]),
        "TransformerEncoderLayer": (nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval(), [seq]),
    }


def _losses():
    logits, labels = f32(6, 4), RNG.integers(0, 4, 6)
    a, b = f32(6, 4), f32(6, 4)
    p, y = RNG.uniform(0.05, 0.95, (6, 4)).astype(np.float32), (RNG.random((6, 4)) < 0.5).astype(np.float32)
    log_p = np.log(np.full((6, 4), 0.25, np.float32))
    return {
        "cross_entropy": (nn.CrossEntropyLoss(), [logits, labels]),
        "cross_entropy-none": (nn.CrossEntropyLoss(reduction="none"), [logits, labels]),
        "cross_entropy-smoothing": (nn.CrossEntropyLoss(label_smoothing=0.1), [logits, labels]),
        "nll": (nn.NLLLoss(), [np.log(p / p.sum(1, keepdims=True)), labels]),
        "mse": (nn.MSELoss(), [a, b]), "l1": (nn.L1Loss(), [a, b]),
        "bce": (nn.BCELoss(), [p, y]), "bce_with_logits": (nn.BCEWithLogitsLoss(), [a, y]),
        "smooth_l1": (nn.SmoothL1Loss(), [a * 3, b]), "huber": (nn.HuberLoss(delta=0.5), [a * 3, b]),
        "kl_div": (nn.KLDivLoss(reduction="batchmean"), [log_p, p]),
    }


LAYERS, LOSSES = _layers(), _losses()


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_exports_and_matches(name, tmp_path):
    module, inputs = LAYERS[name]
    check_export(module, inputs, tmp_path)


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_exports_and_matches(name, tmp_path):
    module, inputs = LOSSES[name]
    check_export(module, inputs, tmp_path)


# ---- example models --------------------------------------------------------------------------------------
def test_spiral_mlp(tmp_path):
    model = nn.Sequential(nn.Linear(2, 100), nn.ReLU(), nn.Linear(100, 3))
    onnx_model = check_export(model, [f32(16, 2)], tmp_path)
    names = {i.name for i in onnx_model.graph.initializer}
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= names  # weights travel as initializers
    assert all(onnx.numpy_helper.to_array(i).dtype == np.float32 for i in onnx_model.graph.initializer
               if i.data_type == onnx.TensorProto.FLOAT or i.data_type == onnx.TensorProto.DOUBLE)


def test_digits_cnn(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(32 * 2 * 2, 10))
    check_export(model, [f32(4, 1, 8, 8)], tmp_path)


class CharLSTM(nn.Module):
    def __init__(self, vocab: int = 12, hidden: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.lstm = nn.LSTM(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


def test_char_lstm_language_model(tmp_path):
    check_export(CharLSTM(), [RNG.integers(0, 12, (3, 7))], tmp_path)


def test_char_transformer_example(tmp_path):
    module = load_example("char_transformer")
    model = module.CharTransformer(vocab_size=11, block_size=8, d_model=16, nhead=2, num_layers=2,
                                   dim_feedforward=32).eval()
    check_export(model, [RNG.integers(0, 11, (2, 8))], tmp_path)


# ---- options -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [13, 17, 18, 20])
def test_opset_is_respected(opset, tmp_path):
    model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.Softmax(-1))
    x = f32(3, 4)
    onnx_model = check_export(model, [x], tmp_path, opset=opset)
    assert [(o.domain, o.version) for o in onnx_model.opset_import] == [("", opset)]
    # ReduceMean takes axes as an input from opset 18 (attribute before): the mean of a loss
    loss = gg.onnx.export(nn.MSELoss(), None, [x, x * 2], opset=opset)
    node = next(n for n in loss.graph.node if n.op_type == "ReduceSum")
    assert len(node.input) == 2  # ReduceSum's axes are an input since 13


def test_opset_below_13_is_refused():
    with pytest.raises(OnnxExportError, match="opset 13"):
        gg.onnx.export(nn.Linear(2, 2), None, [f32(1, 2)], opset=11)


def test_dynamic_axes(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3))
    axes = {"images": {0: "batch"}, "logits": {0: "batch"}}
    onnx_model = gg.onnx.export(model, tmp_path / "m.onnx", [f32(2, 1, 8, 8)], input_names=["images"],
                                output_names=["logits"], dynamic_axes=axes)
    onnx.checker.check_model(onnx_model, full_check=True)
    assert onnx_model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert onnx_model.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    for batch in (1, 5):
        x = f32(batch, 1, 8, 8)
        np.testing.assert_allclose(run_onnx(onnx_model, [x])[0], eager(model, [x])[0], rtol=1e-4, atol=1e-5)


def test_gg_function(tmp_path):
    lin = nn.Linear(3, 2)

    @gg.function
    def predict(x, y):
        return gg.softmax(lin(x) * y, axis=-1), x.sum()

    x, y = f32(4, 3), f32(4, 2)
    check_export(predict, [x, y], tmp_path, output_names=["probs", "total"],
                 dynamic_axes={"input_0": [0], "input_1": [0], "probs": [0]})


def test_static_graph(tmp_path):
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (None, 3), name="x")
        w = gg.Variable(f32(3, 2), name="w")
        c = gg.constant(np.float32([1.0, -1.0]))
        y = gg.tanh(gg.matmul(x, w) + c)
        z = y.mean(axis=0)
    xv = f32(5, 3)
    model = gg.onnx.export([y, z], tmp_path / "g.onnx", {x: xv})
    assert model.graph.input[0].name == "x"
    expected = gg.Session(graph).run([y, z], {x: xv})
    for got, e in zip(run_onnx(model, [xv]), expected):
        np.testing.assert_allclose(got, e, rtol=1e-5, atol=1e-6)
    assert all(onnx.numpy_helper.to_array(i).dtype == np.float32 for i in model.graph.initializer
               if onnx.numpy_helper.to_array(i).dtype.kind == "f")


def test_op_without_onnx_form_names_op_and_node():
    graph = gg.Graph()
    with graph.as_default():
        a = gg.placeholder(gg.float32, (3, 3), name="a")
        y = gg.inv(a)  # no ONNX op computes a matrix inverse
    with pytest.raises(OnnxExportError) as info:
        gg.onnx.export(y, None, [np.eye(3, dtype=np.float32)])
    message = str(info.value)
    assert "Inv" in message and y._node.name in message and "test_export.py" in message
    assert isinstance(info.value, gg.GraphgradError)


def test_file_is_written_atomically(tmp_path):
    path = tmp_path / "m.onnx"
    gg.onnx.export(nn.Linear(2, 2), path, [f32(1, 2)])
    assert onnx.load(str(path)).graph.node and [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


# ---- the op table ------------------------------------------------------------------------------------------
def _exportable(node) -> bool:
    return type(node.op) in CONVERTERS or bool(getattr(node.op, "onnx", None)) or \
        type(node.op).__name__ in ("Placeholder", "Const", "ReadVariable")


# rows whose graphs are exportable but that onnxruntime runs differently, and why
ORT_DIFFERENCES = {
    "dropout": "training-mode dropout draws its mask from onnxruntime's generator, not graphgrad's",
    "rand_like": "onnxruntime draws its own random numbers (see test_random_ops_export)",
    "randn_like": "onnxruntime draws its own random numbers (see test_random_ops_export)",
    "bernoulli": "onnxruntime draws its own random numbers (see test_random_ops_export)",
    **{name: "training-mode dropout draws its mask from onnxruntime's generator, not graphgrad's"
       for name in ("dropout1d", "dropout1d[unbatched]", "dropout2d", "dropout3d", "alpha_dropout",
                    "feature_alpha_dropout")},
}


def test_random_ops_export():
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder("float32", (None, 1000))
        outs = [gg.rand_like(x, -1.0, 1.0), gg.randn_like(x, 2.0, 0.5, generator=gg.Generator(3)),
                gg.bernoulli(gg.full_like(x, 0.25))]
    model = gg.onnx.export(outs, None, {x: np.zeros((2, 1000), np.float32)})
    ops = [n.op_type for n in model.graph.node]
    assert "RandomUniformLike" in ops and "RandomNormalLike" in ops
    seeds = [a.f for n in model.graph.node for a in n.attribute if a.name == "seed"]
    assert seeds == [3.0]
    u, normal, coin = run_onnx(model, [np.zeros((4, 1000), np.float32)])
    assert u.shape == normal.shape == coin.shape == (4, 1000) and u.dtype == normal.dtype == coin.dtype == np.float32
    assert u.min() >= -1.0 and u.max() < 1.0 and abs(u.mean()) < 0.05
    assert abs(normal.mean() - 2.0) < 0.05 and abs(normal.std() - 0.5) < 0.05
    assert set(np.unique(coin)) == {0.0, 1.0} and abs(coin.mean() - 0.25) < 0.05


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_op_table_row_matches_onnxruntime(row, tmp_path):
    dtype = "float32" if "float32" in row.dtypes else row.dtypes[0]
    values = row.make_inputs(dtype)
    graph = gg.Graph()
    feeds = {}
    with graph.as_default():
        inputs = []
        for v in values:
            if isinstance(v, np.ndarray):
                p = gg.placeholder(v.dtype, v.shape)
                feeds[p] = v
                inputs.append(p)
            else:
                inputs.append(v)
        try:
            result = row.fn(*inputs)
        except gg.GraphgradError as error:
            pytest.skip(f"not buildable as a graph: {error}")
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    if not outs or any(not isinstance(o._node, GraphNode) for o in outs):
        pytest.skip("the row returns no graph tensor")
    missing = sorted({n.op.name for n in topo_order([o._node for o in outs]) if not _exportable(n)})
    if missing:
        pytest.skip(f"ops without ONNX form: {missing}")
    if row.name in ORT_DIFFERENCES:
        pytest.skip(ORT_DIFFERENCES[row.name])
    try:
        model = gg.onnx.export(outs, None, feeds)
    except OnnxExportError as error:  # attribute values or index forms with no ONNX form (the message says)
        pytest.skip(str(error))
    expected = gg.Session(graph).run(outs, feeds)
    by_name = {p._node.name: v for p, v in feeds.items()}
    got = run_onnx(model, [by_name[i.name] for i in model.graph.input])
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, f"{row.name}: {g.dtype}{g.shape} != {e.dtype}{e.shape}"
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, err_msg=row.name)
