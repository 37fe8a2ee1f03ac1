"""ONNX LSTM/GRU import: the forms PyTorch computes run as graphgrad's fused sequence ops, with the same
values as onnxruntime and the same gradients as the op-by-op unrolled recurrence."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
import graphgrad.ops as G  # noqa: E402
from graphgrad.io.onnx import ops_rnn, to_module  # noqa: E402

T, B, I, H = 5, 3, 4, 6


def recurrent_model(op_type: str, direction: str = "forward", layout: int = 0, states: bool = True,
                    **attrs) -> onnx.ModelProto:
    gates = 4 if op_type == "LSTM" else 3
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(0)

    def init(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)

    inits = [init("w", dirs, gates * H, I), init("r", dirs, gates * H, H), init("b", dirs, 2 * gates * H)]
    state_shape = (B, dirs, H) if layout else (dirs, B, H)
    inputs = ["x", "w", "r", "b", ""]
    if states:
        inits.append(init("h0", *state_shape))
        inputs.append("h0")
        if op_type == "LSTM":
            inits.append(init("c0", *state_shape))
            inputs.append("c0")
    outputs = ["y", "y_h"] + (["y_c"] if op_type == "LSTM" else [])
    node = helper.make_node(op_type, inputs, outputs, hidden_size=H, direction=direction, layout=layout, **attrs)
    x_shape = (B, T, I) if layout else (T, B, I)
    y_shape = (B, T, dirs, H) if layout else (T, dirs, B, H)
    graph = helper.make_graph([node], "rnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)]
                              + [helper.make_tensor_value_info(o, TensorProto.FLOAT, state_shape) for o in outputs[1:]],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


CASES = [("LSTM", {}), ("LSTM", {"direction": "bidirectional"}), ("LSTM", {"direction": "reverse", "layout": 1}),
         ("LSTM", {"states": False}), ("GRU", {"linear_before_reset": 1}),
         ("GRU", {"linear_before_reset": 1, "direction": "bidirectional", "layout": 1})]


@pytest.mark.parametrize("op_type, kwargs", CASES)
def test_fused_recurrence_matches_onnxruntime_and_the_unrolled_gradients(op_type, kwargs, monkeypatch):
    model = recurrent_model(op_type, **kwargs)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    expected = []  # onnxruntime runs no batch-first (layout=1) recurrence: those compare with the unrolled form
    if not kwargs.get("layout"):
        expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
    fused_calls = []
    fused_op = getattr(G, op_type.lower())
    monkeypatch.setattr(G, op_type.lower(), lambda *a, **k: fused_calls.append(1) or fused_op(*a, **k))

    def run():
        net = to_module(model)
        xt = gg.tensor(x, requires_grad=True)
        outputs = net(xt)
        sum(((o * o).sum() for o in outputs), gg.tensor(np.float32(0))).backward()
        return [o.numpy() for o in outputs], [xt.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]

    values, grads = run()
    assert fused_calls
    for got, want in zip(values, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    monkeypatch.setattr(ops_rnn, "_fusable", lambda *args: False)
    fused_calls.clear()
    unrolled_values, unrolled_grads = run()
    assert not fused_calls
    for got, want in zip(values + grads, unrolled_values + unrolled_grads):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_forms_the_fused_ops_do_not_compute_are_unrolled(monkeypatch):
    monkeypatch.setattr(G, "lstm", lambda *a, **k: pytest.fail("not a fused form"))
    monkeypatch.setattr(G, "gru", lambda *a, **k: pytest.fail("not a fused form"))
    x = gg.tensor(np.ones((T, B, I), np.float32))
    for model in (recurrent_model("LSTM", clip=0.5), recurrent_model("GRU"),
                  recurrent_model("LSTM", activations=["Sigmoid", "Tanh", "Relu"])):
        assert to_module(model)(x)[0].shape == (T, 1, B, H)
