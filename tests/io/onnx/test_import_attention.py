"""ONNX import of the transformer-family ops: a tiny RotaryEmbedding + SwiGLU model equals onnx's
reference evaluator, keeps its dtype, and has the gradients of finite differences."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import to_module  # noqa: E402

BATCH, HEADS, SEQ, HEAD_SIZE, MAX_POSITION = 2, 2, 3, 8, 10


def rope_swiglu(elem_type=TensorProto.FLOAT, interleaved: int = 0, rotary_dim: int = 0) -> onnx.ModelProto:
    """y = SwiGLU(RotaryEmbedding(x, cos, sin, position_ids), x) on x (B, H, S, D)."""
    half = (rotary_dim or HEAD_SIZE) // 2
    nodes = [
        helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "position_ids"], ["rotated"],
                         interleaved=interleaved, rotary_embedding_dim=rotary_dim),
        helper.make_node("SwiGLU", ["rotated", "x"], ["y"], alpha=0.75),
    ]
    graph = helper.make_graph(
        nodes, "rope_swiglu",
        [helper.make_tensor_value_info("x", elem_type, [BATCH, HEADS, SEQ, HEAD_SIZE]),
         helper.make_tensor_value_info("cos", elem_type, [MAX_POSITION, half]),
         helper.make_tensor_value_info("sin", elem_type, [MAX_POSITION, half]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, [BATCH, SEQ])],
        [helper.make_tensor_value_info("y", elem_type, [BATCH, HEADS, SEQ, HEAD_SIZE])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
    onnx.checker.check_model(model)
    return model


def _inputs(dtype, rotary_dim: int = 0, seed: int = 0):
    rng = np.random.default_rng(seed)
    half = (rotary_dim or HEAD_SIZE) // 2
    angles = np.arange(MAX_POSITION)[:, None] * rng.uniform(0.1, 1.0, half)[None, :]
    return (rng.standard_normal((BATCH, HEADS, SEQ, HEAD_SIZE)).astype(dtype), np.cos(angles).astype(dtype),
            np.sin(angles).astype(dtype), rng.integers(0, MAX_POSITION, (BATCH, SEQ)).astype(np.int64))


@pytest.mark.parametrize("interleaved, rotary_dim", [(0, 0), (1, 0), (0, 4), (1, 4)])
def test_rope_swiglu_equals_the_reference_evaluator(interleaved, rotary_dim):
    model = rope_swiglu(interleaved=interleaved, rotary_dim=rotary_dim)
    inputs = _inputs(np.float32, rotary_dim)
    expected = ReferenceEvaluator(model).run(None, dict(zip(["x", "cos", "sin", "position_ids"], inputs)))[0]
    net = to_module(model)
    eager = net(*inputs)
    traced = gg.function(lambda *ts: net(*ts))(*[gg.Tensor(a) for a in inputs])
    for y in (eager, traced):
        assert y.dtype == np.float32
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_rope_swiglu_keeps_float16():
    model = rope_swiglu(TensorProto.FLOAT16, interleaved=1)
    inputs = _inputs(np.float16)
    expected = ReferenceEvaluator(model).run(None, dict(zip(["x", "cos", "sin", "position_ids"], inputs)))[0]
    y = to_module(model)(*inputs)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.numpy().astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("interleaved, rotary_dim", [(0, 4), (1, 0)])
def test_rope_swiglu_gradients_match_finite_differences(interleaved, rotary_dim):
    net = to_module(rope_swiglu(TensorProto.DOUBLE, interleaved=interleaved, rotary_dim=rotary_dim))
    inputs = _inputs(np.float64, rotary_dim)
    gg.check_grad(lambda x, cos, sin, ids: net(x, cos, sin, ids), *inputs, wrt=[0, 1, 2])
