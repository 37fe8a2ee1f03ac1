"""Which initializers an imported ONNX model trains: the weights, not the numbers an exporter stores
as initializers too (exponents, clip bounds, running statistics, mask fills, scales, tables)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import load, to_module  # noqa: E402
from graphgrad.io.onnx.trainable import trainable_initializers  # noqa: E402

RNG = np.random.default_rng(0)


def _model(nodes, initializers, inputs=(("x", TensorProto.FLOAT, ["batch", 4]),), output="y", metadata=None):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(a), name) for name, a in initializers.items()])
    for name, props in (metadata or {}).items():
        info = helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
        for key, value in props.items():
            entry = info.metadata_props.add()
            entry.key, entry.value = key, value
        graph.value_info.append(info)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _trained(model, trainable="auto"):
    from graphgrad.io.onnx.importer import initializer_arrays

    return trainable_initializers(model, initializer_arrays(model.graph), trainable)


def _mlp_with_constants():
    """y = clip(pow(x @ W + b, 3.0) * scale, lo, hi) with a BatchNorm-like normalisation in between."""
    inits = {
        "W": RNG.normal(size=(4, 3)).astype("float32"), "b": RNG.normal(size=3).astype("float32"),
        "exponent": np.array(3.0, "float32"), "scale": np.array([0.125], "float32"),
        "lo": np.array(-1.0, "float32"), "hi": np.array(1.0, "float32"),
        "gamma": np.ones(3, "float32") * 1.5, "beta": np.zeros(3, "float32") + 0.1,
        "mean": RNG.normal(size=3).astype("float32"), "var": np.abs(RNG.normal(size=3)).astype("float32") + 1,
        "exponents": np.full(3, 2.0, "float32"),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["h2"]),
        helper.make_node("Unsqueeze", ["h2", "axis2"], ["h3"]),
        helper.make_node("BatchNormalization", ["h3", "gamma", "beta", "mean", "var"], ["h4"]),
        helper.make_node("Squeeze", ["h4", "axis2"], ["h5"]),
        helper.make_node("Pow", ["h5", "exponent"], ["h6"]),
        helper.make_node("Pow", ["h6", "exponents"], ["h7"]),
        helper.make_node("Mul", ["h7", "scale"], ["h8"]),
        helper.make_node("Clip", ["h8", "lo", "hi"], ["y"]),
    ]
    inits["axis2"] = np.array([2], "int64")
    return _model(nodes, inits)


def test_only_weights_are_trained_by_structure():
    model = _mlp_with_constants()
    assert _trained(model) == {"W", "b", "gamma", "beta"}


def test_a_mask_fill_table_and_a_table_of_positions_stay_constant():
    """A (T, T) table of -3.4e38 (a causal mask fill) and frequencies multiplied by positions from
    Range(Shape(x)) (rotary embeddings) are tables, while a position embedding gathered by those
    positions is a weight."""
    t = 6
    inits = {
        "fill": np.triu(np.full((t, t), -3.4e38, "float32"), 1),
        "inv_freq": (1.0 / 10000 ** (np.arange(0, 4, 2) / 4)).astype("float32"),
        "pos_embedding": RNG.normal(size=(t, 4)).astype("float32"),
        "zero": np.array(0, "int64"), "one": np.array(1, "int64"), "axis0": np.array([0], "int64"),
        "axis1": np.array([1], "int64"),
    }
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["length"]),
        helper.make_node("Range", ["zero", "length", "one"], ["positions"]),
        helper.make_node("Cast", ["positions"], ["positions_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["positions_f", "axis1"], ["pcol"]),
        helper.make_node("Unsqueeze", ["inv_freq", "axis0"], ["frow"]),
        helper.make_node("Mul", ["pcol", "frow"], ["angles"]),
        helper.make_node("Cos", ["angles"], ["cos"]),
        helper.make_node("Gather", ["pos_embedding", "positions"], ["pe"]),
        helper.make_node("MatMul", ["x", "fill"], ["masked"]),
        helper.make_node("ReduceSum", ["masked"], ["total"], keepdims=0),
        helper.make_node("Concat", ["cos", "cos"], ["cos4"], axis=1),
        helper.make_node("Add", ["pe", "cos4"], ["y0"]),
        helper.make_node("Mul", ["y0", "total"], ["y"]),
    ]
    model = _model(nodes, inits, inputs=(("x", TensorProto.FLOAT, [1, t]),))
    assert _trained(model) == {"pos_embedding"}


def test_pytorch_exporter_record_decides_when_present():
    """A value PyTorch recorded as a BUFFER stays constant even where the structure would train it; a
    weight the exporter's optimizer folded (transposed) from a PARAMETER is trained."""
    kind = "pkg.torch.export.graph_signature.InputSpec.kind"
    folded = "pkg.onnxscript.optimizer.folded_from"
    inits = {"running": RNG.normal(size=(4, 3)).astype("float32"), "val_7": RNG.normal(size=(3, 4)).astype("float32"),
             "val_9": RNG.normal(size=(4, 4)).astype("float32")}
    nodes = [helper.make_node("MatMul", ["x", "running"], ["h"]), helper.make_node("MatMul", ["h", "val_7"], ["h2"]),
             helper.make_node("MatMul", ["h2", "val_9"], ["y"])]
    model = _model(nodes, inits, metadata={"running": {kind: "BUFFER"}, "val_7": {folded: "['fc.weight']"},
                                           "val_9": {folded: "['val_3', 'val_4']"}, "x": {kind: "USER_INPUT"}})
    assert _trained(model) == {"val_7"}


def test_the_caller_chooses():
    model = _mlp_with_constants()
    floats = {"W", "b", "exponent", "scale", "lo", "hi", "gamma", "beta", "mean", "var", "exponents"}
    assert _trained(model, True) == floats
    assert _trained(model, False) == set()
    assert _trained(model, ["W"]) == {"W"}
    assert _trained(model, lambda name, array: array.ndim == 2) == {"W"}
    with pytest.raises(gg.errors.ArgumentError, match="does not have"):
        _trained(model, ["W", "nope"])
    with pytest.raises(gg.errors.ArgumentError, match="not floating point"):
        _trained(model, ["axis2"])
    with pytest.raises(gg.errors.ArgumentError, match="auto"):
        _trained(model, "weights")


def test_module_and_graph_use_the_choice():
    model = _mlp_with_constants()
    net = to_module(model)
    assert sorted(net.trained_initializers) == ["W", "b", "beta", "gamma"]
    assert {"exponent", "mean", "var", "lo", "hi", "scale"} <= set(net.constant_initializers)
    assert len(list(net.parameters())) == 4
    x = gg.tensor(RNG.normal(size=(2, 4)).astype("float32") * 0.1)
    net(x).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    graph = load(model)
    assert sorted(graph.variables) == ["W", "b", "beta", "gamma"]
    assert sorted(load(model, trainable=["W"]).variables) == ["W"]
    (y,) = graph.run({"x": x.numpy()})
    np.testing.assert_allclose(y, net(x).numpy(), rtol=1e-5, atol=1e-6)
