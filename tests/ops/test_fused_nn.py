"""The fused nn ops (gelu, layer_norm, scaled_dot_product_attention and its packed-heads form):
eager == graph (Session) == compiled (gg.function) for values and gradients, the composition's
second derivatives, agreement with the unfused formulas, and ONNX export at the opsets with and
without the standard ops (Gelu from 20, LayerNormalization from 17)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.ops.attention import _apply_attention

RNG = np.random.default_rng(0)


def _gelu_composed(x, approximate):
    if approximate == "tanh":
        return x * 0.5 * (gg.tanh((x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)) + 1.0)
    return x * 0.5 * (gg.erf(x * math.sqrt(0.5)) + 1.0)


def _layer_norm_composed(x, w, b, k=1, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = gg.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = gg.mean(centered * centered, axis=axes, keepdims=True)
    return centered / gg.sqrt(var + eps) * w + b


def _sdpa_composed(q, k, v, causal):
    scores = gg.matmul(q, gg.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        L, S = q.shape[-2], k.shape[-2]
        scores = gg.where(gg.tensor(np.triu(np.ones((L, S), bool), 1)), -np.inf, scores)
    return gg.matmul(gg.softmax(scores, axis=-1), v)


def _packed_composed(x, heads, causal):
    n, length, width = x.shape
    split = gg.reshape(x, (n, length, 3, heads, width // (3 * heads)))
    q, k, v = (gg.transpose(split[:, :, i], (0, 2, 1, 3)) for i in range(3))
    out = _sdpa_composed(q, k, v, causal)
    return gg.reshape(gg.transpose(out, (0, 2, 1, 3)), (n, length, width // 3))


CASES = {
    "gelu": (lambda x: gg.gelu(x), lambda x: _gelu_composed(x, "none"), [(3, 5)]),
    "gelu[tanh]": (lambda x: gg.gelu(x, approximate="tanh"), lambda x: _gelu_composed(x, "tanh"), [(3, 5)]),
    "layer_norm": (lambda x, w, b: gg.layer_norm(x, (6,), w, b), _layer_norm_composed, [(2, 3, 6), (6,), (6,)]),
    "layer_norm[2d]": (lambda x, w, b: gg.layer_norm(x, (3, 4), w, b, eps=1e-3),
                       lambda x, w, b: _layer_norm_composed(x, w, b, 2, 1e-3), [(2, 3, 4), (3, 4), (3, 4)]),
    "sdpa[causal]": (lambda q, k, v: gg.scaled_dot_product_attention(q, k, v, is_causal=True),
                     lambda q, k, v: _sdpa_composed(q, k, v, True), [(2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 3)]),
    "sdpa[packed]": (lambda x: _apply_attention((1 / math.sqrt(3), True, None, 2), (x,)),
                     lambda x: _packed_composed(x, 2, True), [(2, 5, 18)]),
}


def _inputs(shapes, dtype="float64"):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def _value_and_grads(fn, arrays, upstream):
    xs = [gg.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*xs)
    grads = gg.grad(y, xs, grad_outputs=gg.tensor(upstream))
    return [y.numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_matches_composition_eager_graph_and_compiled(name):
    fused, composed, shapes = CASES[name]
    arrays = _inputs(shapes)
    upstream = RNG.standard_normal(fused(*[gg.tensor(a) for a in arrays]).shape)
    expected = _value_and_grads(composed, arrays, upstream)
    eager = _value_and_grads(fused, arrays, upstream)
    for e, got in zip(expected, eager):
        np.testing.assert_allclose(got, e, rtol=1e-10, atol=1e-12)

    # a static graph run by a Session (its gradients are built with create_graph, the composition's)
    graph = gg.Graph()
    with graph.as_default():
        ps = [gg.placeholder(a.dtype, a.shape) for a in arrays]
        seed = gg.placeholder(upstream.dtype, upstream.shape)
        y = fused(*ps)
        grads = gg.gradients([y], ps, grad_ys=[seed])
    feed = dict(zip(ps, arrays))
    feed[seed] = upstream
    for e, got in zip(expected, gg.Session(graph).run([y] + grads, feed)):
        np.testing.assert_allclose(got, e, rtol=1e-10, atol=1e-12)

    # compiled: forward and the fused backward ops traced by gg.function
    @gg.function
    def step(*xs):
        out = fused(*xs)
        return [out] + list(gg.grad(out, xs, grad_outputs=gg.tensor(upstream)))

    compiled = step(*[gg.tensor(a, requires_grad=True) for a in arrays])
    for e, got in zip(expected, compiled):
        np.testing.assert_allclose(got.numpy(), e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_float32_keeps_dtype_and_second_order(name):
    fused, composed, shapes = CASES[name]
    arrays = _inputs(shapes, "float32")
    upstream = RNG.standard_normal(fused(*[gg.tensor(a) for a in arrays]).shape).astype(np.float32)
    expected = _value_and_grads(composed, arrays, upstream)
    for e, got in zip(expected, _value_and_grads(fused, arrays, upstream)):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, e, rtol=2e-5, atol=2e-6)
    xs = [gg.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
    gg.check_grad(fused, *xs, order=2)


@pytest.mark.parametrize("opset", [13, 17, 20])
def test_fused_ops_export_to_onnx_at_every_opset(opset, tmp_path):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    for name, (fused, _, shapes) in sorted(CASES.items()):
        arrays = _inputs(shapes, "float32")
        model = gg.onnx.export(gg.function(fused), tmp_path / "model.onnx", arrays, opset=opset)
        onnx.checker.check_model(model, full_check=True)
        kinds = {n.op_type for n in model.graph.node}
        if name.startswith("gelu"):
            assert ("Gelu" in kinds) == (opset >= 20), (name, opset, kinds)
        if name.startswith("layer_norm"):
            assert ("LayerNormalization" in kinds) == (opset >= 17), (name, opset, kinds)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = session.run(None, {i.name: a for i, a in zip(session.get_inputs(), arrays)})[0]
        np.testing.assert_allclose(got, fused(*[gg.tensor(a) for a in arrays]).numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name} at opset {opset}")


def test_create_graph_gradients_are_differentiable_again():
    # third derivative of gelu through GeluGrad's own backward, against the composition
    for approximate in ("none", "tanh"):
        x = gg.tensor(np.linspace(-3, 3, 7), requires_grad=True)
        xc = gg.tensor(np.linspace(-3, 3, 7), requires_grad=True)
        d_fused, d_comp = gg.gelu(x, approximate=approximate), _gelu_composed(xc, approximate)
        for _ in range(3):
            (d_fused,) = gg.grad(d_fused.sum(), [x], create_graph=True)
            (d_comp,) = gg.grad(d_comp.sum(), [xc], create_graph=True)
            np.testing.assert_allclose(d_fused.numpy(), d_comp.numpy(), rtol=1e-10, atol=1e-12)


def test_relu_backward_is_one_op_with_the_masks_values():
    """ReLU's backward (ReluGrad: one op, a native pass for float32) gives ``g * (y > 0)`` exactly, the
    sign of zeros and non-finite ``g`` included; graphs write it out as that multiply for the fuser."""
    from graphgrad.ops.unary import ReluGrad

    y = RNG.standard_normal((64, 33)).astype(np.float32)
    y[0, :4] = [0.0, -0.0, np.nan, np.inf]
    g = RNG.standard_normal((64, 33)).astype(np.float32)
    g[1, :3] = [np.nan, np.inf, -np.inf]
    y[1, :3] = [-1.0, -1.0, 2.0]
    expected = g * (y > 0)
    got = ReluGrad().apply(gg.tensor(y), gg.tensor(g)).numpy()
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))
    # non-contiguous and float64 inputs take NumPy's path, with the same values
    np.testing.assert_array_equal(ReluGrad().apply(gg.tensor(y).T, gg.tensor(g).T).numpy(), expected.T)
    np.testing.assert_array_equal(ReluGrad().apply(gg.tensor(y.astype(np.float64)), gg.tensor(g)).numpy(),
                                  expected)
    # eager relu's gradient is that op; graph and compiled steps agree with it
    x = gg.tensor(RNG.standard_normal((5, 7)), requires_grad=True)
    w = RNG.standard_normal((5, 7))

    def loss(t):
        return (gg.relu(t) * gg.tensor(w)).sum()

    loss(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), w * (x.numpy() > 0))
    gg.check_grad(lambda t: gg.relu(t) * t * t, x, order=2)
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder(gg.float64, (5, 7))
        (grad,) = gg.gradients(loss(p), [p])
    for level in (0, 2):
        np.testing.assert_array_equal(gg.Session(graph, optimize=level).run(grad, {p: x.numpy()}), x.grad.numpy())
