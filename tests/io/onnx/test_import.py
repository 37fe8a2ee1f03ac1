"""ONNX import: a model written by hand with onnx.helper (as another tool would export it) is
imported, run equal to onnxruntime, run through Session and gg.function, and fine-tuned."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import OnnxImportError, load, to_module  # noqa: E402


def small_cnn(seed: int = 0, opset: int = 17) -> onnx.ModelProto:
    """Conv(1->4, 3x3, pad 1) + BatchNorm + Relu + MaxPool 2 + Flatten + Gemm(36->3) on (N, 1, 6, 6)."""
    rng = np.random.default_rng(seed)
    inits = {
        "conv.w": rng.normal(0, 0.5, (4, 1, 3, 3)).astype(np.float32),
        "conv.b": rng.normal(0, 0.1, 4).astype(np.float32),
        "bn.scale": rng.uniform(0.5, 1.5, 4).astype(np.float32),
        "bn.bias": rng.normal(0, 0.1, 4).astype(np.float32),
        "bn.mean": rng.normal(0, 0.1, 4).astype(np.float32),
        "bn.var": rng.uniform(0.5, 1.5, 4).astype(np.float32),
        "fc.w": rng.normal(0, 0.3, (3, 36)).astype(np.float32),
        "fc.b": np.zeros(3, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["n"],
                         epsilon=1e-5, name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], axis=1, name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 6, 6])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="hand-written")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _data(n=8, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 1, 6, 6)).astype(np.float32), rng.integers(0, 3, n)


def _onnxruntime(model, x):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_module_matches_onnxruntime_and_keeps_float32():
    model = small_cnn()
    x, _ = _data()
    net = to_module(model)
    out = net(gg.tensor(x))
    assert out.dtype == gg.float32
    np.testing.assert_allclose(out.numpy(), _onnxruntime(model, x), rtol=1e-4, atol=1e-5)
    names = dict(net.named_parameters())
    # the weights are Parameters; BatchNorm's running statistics stay constants (PyTorch's buffers)
    assert len(names) == 6 and all(p.dtype == gg.float32 for p in names.values())
    assert len(net.constant_initializers) == 2


def test_load_runs_in_a_session_and_its_graph_differentiates():
    model = small_cnn()
    x, y = _data()
    imported = load(model)
    (out,) = imported.run({"x": x})
    np.testing.assert_allclose(out, _onnxruntime(model, x), rtol=1e-4, atol=1e-5)
    assert out.dtype == np.float32
    with imported.graph.as_default():
        labels = gg.placeholder(gg.int64, (None,), name="labels")
        loss = gg.cross_entropy(imported.outputs["logits"], labels)
        grads = gg.gradients(loss, list(imported.variables.values()))
    values = gg.Session(imported.graph).run([loss] + grads, {imported.inputs["x"]: x, labels: y})
    assert all(g is not None and np.isfinite(g).all() for g in values[1:])


def test_imported_model_fine_tunes_with_a_falling_loss():
    model = small_cnn()
    x, y = _data(32)
    net = to_module(model)
    opt = gg.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    xt, yt = gg.tensor(x), gg.tensor(y)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = gg.cross_entropy(net(xt), yt)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert losses[-1] < 0.7 * losses[0], losses


def test_gg_function_on_an_imported_module_equals_eager():
    model = small_cnn()
    x, _ = _data()
    net = to_module(model)
    compiled = gg.function(lambda t: net(t))
    np.testing.assert_allclose(compiled(gg.tensor(x)).numpy(), net(gg.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_older_opsets_import(opset):
    model = small_cnn(opset=opset)
    x, _ = _data()
    np.testing.assert_allclose(load(model).run({"x": x})[0], _onnxruntime(model, x), rtol=1e-4, atol=1e-5)


def test_unsupported_op_names_the_op_and_node():
    graph = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    with pytest.raises(OnnxImportError, match="NoSuchOp.*mystery"):
        load(helper.make_model(graph))


def test_a_shape_given_as_data_is_used_when_the_graph_runs():
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_by_data")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    imported = load(helper.make_model(graph))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for shape in ([3, 2], [1, -1], [0, 3]):  # 0 copies the input's dimension
        (y,) = imported.run({"x": x, "s": np.array(shape)})
        np.testing.assert_array_equal(y, x.reshape([x.shape[i] if d == 0 else d for i, d in enumerate(shape)]))


def test_a_bound_that_truly_depends_on_data_is_still_a_clear_error():
    graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk_by_data")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, None)])
    with pytest.raises(OnnxImportError, match="topk_by_data.*must be known"):
        load(helper.make_model(graph))


def _sequence_model() -> onnx.ModelProto:
    """x (N, 4) -> SplitToSequence into 2-column pieces -> SequenceMap(Mul by w) -> ConcatFromSequence,
    plus the length of the input sequence ``s`` and ``s`` with the pieces appended."""
    body = helper.make_graph([helper.make_node("Mul", ["piece", "w"], ["scaled"])], "scale",
                             [helper.make_tensor_value_info("piece", TensorProto.FLOAT, None)],
                             [helper.make_tensor_value_info("scaled", TensorProto.FLOAT, None)])
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    nodes = [
        helper.make_node("SplitToSequence", ["x", "two"], ["pieces"], axis=1),
        helper.make_node("SequenceMap", ["pieces"], ["scaled"], body=body),
        helper.make_node("ConcatFromSequence", ["scaled"], ["y"], axis=1),
        helper.make_node("SequenceLength", ["s"], ["n"]),
        helper.make_node("SequenceInsert", ["s", "x"], ["s_plus"]),
    ]
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    graph = helper.make_graph(
        nodes, "sequences",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]), helper.make_value_info("s", seq_type)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("n", TensorProto.INT64, []), helper.make_value_info("s_plus", seq_type)],
        [two, numpy_helper.from_array(np.array([1.5, -1.0], np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def test_sequences_import_as_lists_of_tensors():
    model = _sequence_model()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    s = [np.ones(2, np.float32), np.zeros((1, 3), np.float32)]
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "s": s})
    imported = load(model, input_shapes={"x": x.shape, "s": [a.shape for a in s]})
    assert isinstance(imported.inputs["s"], list) and len(imported.inputs["s"]) == 2
    y, n, s_plus = imported.run({"x": x, "s": s})
    np.testing.assert_allclose(y, expected[0], rtol=1e-6)
    assert n == 2 and n.dtype == np.int64
    assert [a.shape for a in s_plus] == [(2,), (1, 3), (3, 4)]
    np.testing.assert_array_equal(s_plus[2], x)
    with pytest.raises(OnnxImportError, match="sequence's length is fixed"):
        imported.run({"x": x, "s": s[:1]})
    # the module form differentiates through the sequence ops
    net = to_module(model)
    w = [p for p in net.parameters()]
    assert len(w) == 1
    y, n, s_plus = net(gg.tensor(x), [gg.tensor(a) for a in s])
    assert isinstance(s_plus, list) and len(s_plus) == 3
    y.sum().backward()
    np.testing.assert_allclose(w[0].grad.numpy(), x.reshape(3, 2, 2).sum(axis=(0, 1)), rtol=1e-6)


def test_sequence_input_needs_its_length():
    with pytest.raises(OnnxImportError, match="'s' is a sequence.*input_shapes"):
        load(_sequence_model())


def test_optional_inputs_may_be_empty():
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    graph = helper.make_graph(
        [helper.make_node("OptionalHasElement", ["o"], ["has"])], "optional",
        [helper.make_value_info("o", opt_type)], [helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert not load(model, input_shapes={"o": None}).run({"o": None})[0]
    assert load(model).run({"o": np.zeros(2, np.float32)})[0]


def test_random_ops_draw_anew_on_every_run():
    nodes = [helper.make_node("RandomNormalLike", ["x"], ["noise"], mean=2.0, scale=0.5),
             helper.make_node("Bernoulli", ["p"], ["coin"], seed=3.0),
             helper.make_node("RandomUniform", [], ["u"], shape=[1000], low=-1.0, high=1.0)]
    graph = helper.make_graph(
        nodes, "random",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [1000])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1000]) for n in ("noise", "coin", "u")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    feeds = {"x": np.zeros(1000, np.float32), "p": np.full(1000, 0.25, np.float32)}
    imported = load(model)
    noise, coin, u = imported.run(feeds)
    assert noise.dtype == coin.dtype == u.dtype == np.float32
    assert abs(noise.mean() - 2.0) < 0.1 and abs(noise.std() - 0.5) < 0.1
    assert set(np.unique(coin)) <= {0.0, 1.0} and 0.15 < coin.mean() < 0.35
    assert u.min() >= -1.0 and u.max() < 1.0 and abs(u.mean()) < 0.1
    again = imported.run(feeds)
    assert not np.array_equal(noise, again[0]) and not np.array_equal(u, again[2])
    # a seeded node repeats its numbers in every fresh import
    np.testing.assert_array_equal(load(model).run(feeds)[1], load(model).run(feeds)[1])


def test_cli_info_and_run(tmp_path, capsys):
    from graphgrad.cli import main

    model = small_cnn()
    path = tmp_path / "cnn.onnx"
    onnx.save(model, str(path))
    x, _ = _data(2)
    np.save(tmp_path / "x.npy", x)
    assert main(["onnx", "info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "x (N, 1, 6, 6) float32" in text.replace("?", "N") or "x (?, 1, 6, 6) float32" in text
    assert "parameters: 167" in text and "Conv x1" in text and "ops graphgrad lacks: none" in text
    out_file = tmp_path / "out.npz"
    assert main(["onnx", "run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out_file)]) == 0
    assert "logits (2, 3) float32" in capsys.readouterr().out
    np.testing.assert_allclose(np.load(out_file)["logits"], _onnxruntime(model, x), rtol=1e-4, atol=1e-5)
