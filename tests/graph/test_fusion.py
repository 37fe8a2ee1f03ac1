"""Elementwise fusion (graphgrad/graph/rewrite/fuse.py): group structure, generated source, and
numerical equality of optimize=0 and optimize=2 on random elementwise graphs."""
import collections

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.graph.rewrite.fuse import FusedElementwise, Unpack


def _plan(sess):
    return next(iter(sess._plans.values()))


def _fused_ops(sess):
    return [s[3].op for s in _plan(sess).steps if isinstance(s[3].op, FusedElementwise)]


def _run_both(graph, fetches, feed):
    r0 = gg.Session(graph, optimize=0).run(fetches, feed)
    sess = gg.Session(graph, optimize=2)
    r2 = sess.run(fetches, feed)
    return r0, r2, sess


def _tiny_chain(n_ops=30):
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (16,), name="x")
        y = x
        for i in range(n_ops):
            k = i % 3
            y = y * 1.001 if k == 0 else (y + 0.001 if k == 1 else gg.tanh(y))
        loss = y.sum()
        (gx,) = gg.gradients(loss, [x])
    return graph, x, loss, gx


def test_tiny_chain_becomes_one_kernel():
    graph, x, loss, gx = _tiny_chain()
    xv = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    (l0, g0), (l2, g2), sess = _run_both(graph, [loss, gx], {x: xv})
    np.testing.assert_allclose(l2, l0, rtol=1e-6)
    np.testing.assert_allclose(g2, g0, rtol=1e-6)
    assert g2.dtype == np.float32
    fused = _fused_ops(sess)
    assert len(fused) == 1 and len(fused[0].ops) >= 50  # forward and backward in one kernel
    assert len(_plan(sess).steps) < 12
    src = fused[0].source
    assert "out=" in src and "_tanh(" in src and "def kernel" in src
    # the same structure reuses the compiled kernel
    sess2 = gg.Session(graph, optimize=2)
    sess2.run([loss, gx], {x: xv})
    assert _fused_ops(sess2)[0].kernel is fused[0].kernel


def test_chain_writes_in_place_into_one_buffer():
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (8,), name="x")
        y = gg.tanh(x * 1.001 + 0.001)
    r0, r2, sess = _run_both(graph, y, {x: np.arange(8.0)})
    np.testing.assert_allclose(r2, r0)
    (op,) = _fused_ops(sess)
    body = [line.strip() for line in op.source.splitlines() if line.startswith(("    xp.", "    _"))]
    assert [line.replace("xp.", "_") for line in body][-3:] == [
        "_multiply(a0, _c0, out=out)", "_add(out, _c1, out=out)", "_tanh(out, out=out)"], op.source
    assert "t0" not in op.source  # a chain needs no temporary


def test_matmul_bias_relu_fused():
    graph = gg.Graph()
    rng = np.random.default_rng(1)
    with graph.as_default():
        x = gg.placeholder(gg.float32, (4, 5), name="x")
        w = gg.constant(rng.standard_normal((5, 3)).astype(np.float32))
        b = gg.constant(rng.standard_normal(3).astype(np.float32))
        y = gg.relu(x @ w + b)
    xv = rng.standard_normal((4, 5)).astype(np.float32)
    r0, r2, sess = _run_both(graph, y, {x: xv})
    np.testing.assert_allclose(r2, r0, rtol=1e-6)
    (op,) = _fused_ops(sess)
    assert op.ops == ("MatMul", "Add", "Relu")
    assert "_matmul(xp, a0, a1, out=out)" in op.source and r2.dtype == np.float32


def test_fused_op_is_a_valid_op():
    graph, x, loss, gx = _tiny_chain(6)
    sess = gg.Session(graph)
    sess.run(gx, {x: np.ones(16, np.float32)})
    op = _fused_ops(sess)[0]
    assert op.infer() == op.kernel.spec
    with pytest.raises(gg.errors.GradError if hasattr(gg, "errors") else Exception):
        op.backward((), None, None)
    assert "FusedElementwise" in repr(op)


def _random_graph(rng, dtype, shape, batch_none=False):
    """A random elementwise DAG over two inputs (one broadcast), with scalars, where and comparisons."""
    graph = gg.Graph()
    with graph.as_default():
        a = gg.placeholder(dtype, ((None,) + shape[1:]) if batch_none else shape, name="a")
        b = gg.placeholder(dtype, shape[1:], name="b")  # broadcasts
        values = [a, b, a * 0.5]
        for _ in range(12):
            k = int(rng.integers(0, 9))
            p, q = (values[int(i)] for i in rng.integers(0, len(values), 2))
            if k == 0:
                v = p + q
            elif k == 1:
                v = p * q - 1.5
            elif k == 2:
                v = gg.tanh(p)
            elif k == 3:
                v = gg.where(gg.greater(p, q), p, 0.25)
            elif k == 4:
                v = gg.maximum(p, q) / 2
            elif k == 5:
                v = gg.exp(-gg.abs(p))
            elif k == 6:
                v = gg.relu(p) + 3
            elif k == 7:
                v = 2 - p
            else:
                v = gg.sqrt(p * p + 1.0)
            values.append(v)
        out = values[-1] + values[-2] * values[-3]
        extra = values[-4]  # fetched too: an interior value needed outside
    return graph, a, b, [out, extra]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_graphs_match_unoptimized(seed, dtype):
    rng = np.random.default_rng(seed)
    graph, a, b, fetches = _random_graph(rng, dtype, (3, 4), batch_none=seed % 3 == 0)
    feed = {a: rng.standard_normal((3, 4)).astype(dtype), b: rng.standard_normal(4).astype(dtype)}
    r0, r2, sess = _run_both(graph, fetches, feed)
    for x0, x2 in zip(r0, r2):
        assert x2.dtype == x0.dtype == dtype
        assert x2.shape == x0.shape
        np.testing.assert_allclose(x2, x0, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    # runs again identically (kernels keep no state between runs)
    for x2, again in zip(r2, sess.run(fetches, feed)):
        np.testing.assert_array_equal(x2, again)


def test_gradients_of_random_graph_match():
    rng = np.random.default_rng(7)
    graph, a, b, fetches = _random_graph(rng, np.float64, (3, 4))
    with graph.as_default():
        grads = gg.gradients(fetches[0].sum() + fetches[1].sum(), [a, b])
    feed = {a: rng.standard_normal((3, 4)), b: rng.standard_normal(4)}
    r0, r2, _ = _run_both(graph, grads, feed)
    for x0, x2 in zip(r0, r2):
        np.testing.assert_allclose(x2, x0, rtol=1e-10, atol=1e-12)


def test_float32_with_python_scalars_stays_float32():
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (5,), name="x")
        y = gg.where(x > 0.5, x * 2.5, 1e-3) + 1
    r0, r2, sess = _run_both(graph, y, {x: np.linspace(0, 1, 5, dtype=np.float32)})
    assert r2.dtype == np.float32
    np.testing.assert_array_equal(r2, r0)
    assert _fused_ops(sess)


def test_multi_output_group_packs_outputs():
    graph, x, loss, gx = _tiny_chain(9)
    sess = gg.Session(graph)
    sess.run([loss, gx], {x: np.ones(16, np.float32)})
    assert any(isinstance(s[3].op, Unpack) for s in _plan(sess).steps)


def test_fusion_log_and_original_graph_untouched():
    graph, x, loss, gx = _tiny_chain(9)
    before = len(graph.get_operations())
    sess = gg.Session(graph)
    sess.run(gx, {x: np.ones(16, np.float32)})
    assert len(graph.get_operations()) == before
    fuse = [r for r in _plan(sess).program.log if r.name == "fuse"][0]
    assert fuse.fired["fuse_elementwise"] >= 1 and fuse.nodes_after < fuse.nodes_before


def test_fused_masked_select_keeps_where_semantics_for_non_finite_values():
    g = gg.Graph()
    with g.as_default():
        a = gg.placeholder(gg.float32, (6,))
        b = gg.placeholder(gg.float32, (6,))
        y = gg.where(a > 0, b * 2, 0.0) + 1  # fused: where(c, x, 0) becomes a multiply by the mask
    feed = {a: np.array([1, -1, 2, -2, 0, -1], np.float32),
            b: np.array([np.inf, np.inf, np.nan, np.nan, -3.0, -5.0], np.float32)}
    plain = gg.Session(g, optimize=0).run(y, feed)
    fused = gg.Session(g, optimize=2).run(y, feed)
    np.testing.assert_array_equal(plain, fused)  # inf, 1, nan, 1, 1, 1: masked-out inf/nan give 0 + 1
    masked = gg.Session(g, optimize=2).run(y - 1, feed)
    assert masked[5] == 0  # -10 * 0: -0.0 or +0.0 (only the sign of zero may differ from where's +0.0)


# ---- softmax cross-entropy merged with its gradient -----------------------------------------------
def _classifier_step(loss_fn, ignore=False, reduction="mean"):
    rng = np.random.default_rng(3)
    graph = gg.Graph()
    with graph.as_default():
        w = gg.Variable(rng.standard_normal((5, 4)).astype(np.float32))
        x = gg.placeholder(gg.float32, (12, 5), name="x")
        y = gg.placeholder(gg.int64, (12,), name="y")
        loss = loss_fn(gg.cross_entropy(x @ w, y, ignore_index=-1, reduction=reduction))
        (gw,) = gg.gradients(loss, [w])
    labels = rng.integers(0, 4, 12)
    if ignore:
        labels[[1, 5, 6]] = -1
    feed = {x: rng.standard_normal((12, 5)).astype(np.float32), y: labels}
    return graph, [loss, gw], feed


def _op_names(sess):
    return [type(s[3].op).__name__ for s in _plan(sess).steps]


@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_and_its_gradient_become_one_node(ignore, reduction):
    fn = (lambda l: l) if reduction != "none" else (lambda l: (l * gg.arange(12, dtype=gg.float32)).sum())
    graph, fetches, feed = _classifier_step(fn, ignore, reduction)
    (l0, g0), (l2, g2), sess = _run_both(graph, fetches, feed)
    names = _op_names(sess)
    assert names.count("SoftmaxCrossEntropyWithGrad") == 1
    assert "SoftmaxCrossEntropy" not in names and "SoftmaxCrossEntropyGrad" not in names
    np.testing.assert_allclose(l2, l0, rtol=1e-6)
    np.testing.assert_allclose(g2, g0, rtol=1e-5, atol=1e-7)
    assert l2.dtype == g2.dtype == np.float32
    fired = sum((r.fired for r in _plan(sess).program.log), collections.Counter())
    assert fired["fuse_softmax_cross_entropy_grad"] == 1


def test_cross_entropy_not_merged_when_its_gradient_needs_the_loss():
    graph, fetches, feed = _classifier_step(lambda l: l * l)  # d(l^2) = 2 l dl: the gradient reads the loss
    (l0, g0), (l2, g2), sess = _run_both(graph, fetches, feed)
    names = _op_names(sess)
    assert "SoftmaxCrossEntropyWithGrad" not in names and "SoftmaxCrossEntropyGrad" in names
    np.testing.assert_allclose(l2, l0, rtol=1e-6)
    np.testing.assert_allclose(g2, g0, rtol=1e-5)


def test_merged_cross_entropy_under_detect_anomaly():
    graph, fetches, feed = _classifier_step(lambda l: l)
    sess = gg.Session(graph, optimize=2)
    expected = sess.run(fetches, feed)
    with gg.detect_anomaly():
        got = sess.run(fetches, feed)
    np.testing.assert_array_equal(got[1], expected[1])


# ---- transposes read by matmul kernels, array operands for max/min ----------------------------------
def test_matmul_kernel_reads_transposes_without_a_step():
    rng = np.random.default_rng(4)
    graph = gg.Graph()
    with graph.as_default():
        a = gg.placeholder(gg.float64, (6, 3), name="a")
        b = gg.placeholder(gg.float64, (6, 4), name="b")
        c = gg.placeholder(gg.float64, (5, 4), name="c")
        out = gg.relu(gg.transpose(a) @ b + 1.0)  # (3, 4)
        out2 = b @ gg.transpose(c) * 2.0  # (6, 5)
        shared = gg.transpose(a)  # also fetched: stays a node
    feed = {a: rng.standard_normal((6, 3)), b: rng.standard_normal((6, 4)), c: rng.standard_normal((5, 4))}
    r0, r2, sess = _run_both(graph, [out, out2, shared], feed)
    for got, exp in zip(r2, r0):
        np.testing.assert_allclose(got, exp, rtol=1e-12)
    sources = [op.source for op in _fused_ops(sess)]
    assert any("a0.T, a1" in src for src in sources) and any("a1.T" in src for src in sources)
    assert _op_names(sess).count("Transpose") == 1  # only the fetched one


def test_relu_and_clamp_kernels_use_read_only_array_operands():
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (64, 80), name="x")  # above SMALL: a scalar would stay a scalar
        y = gg.minimum(gg.relu(x * 2.0), 3.0) + x
    xv = np.random.default_rng(5).standard_normal((64, 80)).astype(np.float32) * 3
    xv[0, :3] = [np.nan, -np.inf, np.inf]
    r0, r2, sess = _run_both(graph, y, {x: xv})
    np.testing.assert_array_equal(r2, r0)
    (op,) = _fused_ops(sess)
    assert "full((64, 80), 0" in op.source and "full((64, 80), 3.0" in op.source
    assert "_maximum(" in op.source or "xp.maximum(" in op.source
