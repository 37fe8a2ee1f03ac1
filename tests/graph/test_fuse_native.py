"""Fused elementwise kernels generated as C (graph/rewrite/fuse_native.py, the native extra): each
group runs the same with the C loop as with the NumPy kernel (bit for bit where no exp or tanh is
involved), the groups expected to get a C loop get one, and anything the loop was not made for
falls back to NumPy."""
import numpy as np

import graphgrad as gg
from graphgrad.backend import native
from graphgrad.graph.rewrite import fuse_native
from graphgrad.graph.rewrite.fuse import FusedElementwise
from tests.backend.native_checks import needs_native, openmp_team, own_threads

pytestmark = needs_native

N, C = 128, 256  # 32768 elements: above fuse_native.MIN_ELEMENTS
RNG = np.random.default_rng(0)


def _fused(sess):
    plan = next(iter(sess._plans.values()))
    return [s[3].op for s in plan.steps if isinstance(s[3].op, FusedElementwise)]


def _run(build, feeds: dict, exact: bool = True, expect_c: int = 1, atol: float = 1e-7):
    """Build a graph with ``build(placeholders) -> fetches``, run it with C kernels and without;
    compare; check how many fused kernels have a C loop."""
    graph = gg.Graph()
    with graph.as_default():
        holders = {name: gg.placeholder(gg.as_dtype(v.dtype), v.shape, name=name) for name, v in feeds.items()}
        fetches = build(**holders)
    feed = {holders[k]: v for k, v in feeds.items()}
    sess = gg.Session(graph, optimize=2)
    got = sess.run(fetches, feed)
    with native.disabled():
        expected = sess.run(fetches, feed)
    with_c = [op for op in _fused(sess) if op.kernel.native is not None]
    assert len(with_c) == expect_c, [op.ops for op in _fused(sess)]
    for e, g in zip(np.atleast_1d(expected) if not isinstance(expected, list) else expected,
                    np.atleast_1d(got) if not isinstance(got, list) else got):
        if exact:
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=3e-6, atol=atol)
    return sess, got


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def test_bias_relu_after_a_matmul_head():
    w = _f32(64, C)
    b = _f32(C)
    _run(lambda x: gg.relu(x @ gg.constant(w) + gg.constant(b)), {"x": _f32(N, 64)})


def test_heads_with_a_short_inner_dimension_are_summed_in_the_loop():
    """K <= INLINE_K: the product is summed in the C loop (within rounding of BLAS's), for every
    transposition of the operands that the group reads in place."""
    k = fuse_native.INLINE_K
    w, b = _f32(k, C), _f32(C)
    _run(lambda x: gg.relu(x @ gg.constant(w) + gg.constant(b)), {"x": _f32(N, k)}, exact=False, atol=1e-6)
    _run(lambda x: gg.relu(gg.transpose(x, (1, 0)) @ gg.constant(w) + 1.0), {"x": _f32(k, N)}, exact=False, atol=1e-6)
    _run(lambda x, v: (x @ gg.transpose(v, (1, 0))) * (x[:, :1] > 0), {"x": _f32(N, 2), "v": _f32(C, 2)},
         exact=False, atol=1e-6)
    _run(lambda x, v: gg.transpose(x, (1, 0)) @ gg.transpose(v, (1, 0)) - 0.5, {"x": _f32(3, N), "v": _f32(C, 3)},
         exact=False, atol=1e-6)
    sess, _ = _run(lambda x: gg.relu(x @ gg.constant(w)), {"x": _f32(N, k)}, exact=False, atol=1e-6)
    (op,) = _fused(sess)
    assert "MatMul" in op.ops and op.kernel.native.heads == []  # no BLAS call before the loop
    assert f"float t1[{2 * C}]" in _fused(_run(lambda x, v: (x @ gg.transpose(v, (1, 0))) * (x[:, :1] > 0),
                                               {"x": _f32(N, 2), "v": _f32(C, 2)}, exact=False,
                                               atol=1e-6)[0])[0].kernel.native_source[0]
    # a transposed operand too large to copy to the stack is read in place (every K-th float)
    wide = fuse_native.INLINE_COPY_FLOATS // 2 + 8
    sess, _ = _run(lambda x, v: (x @ gg.transpose(v, (1, 0))) * 2.0, {"x": _f32(2, 2), "v": _f32(wide, 2)},
                   exact=False, atol=1e-6)
    assert "float t1[" not in _fused(sess)[0].kernel.native_source[0]


def test_relu_backward_mask_times_gradient():
    def build(x, g):
        (gx,) = gg.gradients((gg.relu(x) * g).sum(), [x])
        return gx
    _run(build, {"x": _f32(N, C), "g": _f32(N, C)})


def test_arithmetic_broadcasts_and_nan():
    x = _f32(N, C)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]

    def build(x, row, col):
        y = gg.maximum(x * col + row, 0.25) - gg.minimum(x, -0.5) / (col + 3.0)
        return gg.where(x > 0.1, y, -y) * 2.0 + gg.abs(x) + gg.sqrt(gg.abs(y))
    _run(build, {"x": x, "row": _f32(N, 1), "col": _f32(C)})


def test_leading_and_single_value_broadcasts():
    _run(lambda x, s, lead: (x - s) * lead + 1.0, {"x": _f32(4, 64, 128), "s": _f32(1, 1, 1), "lead": _f32(4, 1, 1)})


def test_exp_and_tanh_within_a_few_ulp():
    # a few ulp of each term: where the two terms (about 1) nearly cancel, that is an absolute 1e-6
    _run(lambda x: gg.tanh(x) * gg.exp(x * 0.5) + gg.exp(-x * x), {"x": _f32(N, C, scale=3.0)}, exact=False,
         atol=1e-6)


def test_tanh_backward():
    def build(x):
        (gx,) = gg.gradients((gg.tanh(x) * 3.0).sum(), [x])
        return gx
    _run(build, {"x": _f32(N, C)}, exact=False)


def test_several_outputs():
    def build(x, y):
        a = x * y + 1.0
        return [a * 2.0, a + x]
    _run(build, {"x": _f32(N, C), "y": _f32(N, C)}, expect_c=1)


def test_small_float64_and_unsupported_groups_keep_numpy():
    _run(lambda x: gg.relu(x * 2.0 + 1.0), {"x": _f32(8, 8)}, expect_c=0)  # below MIN_ELEMENTS
    _run(lambda x: gg.relu(x * 2.0 + 1.0), {"x": RNG.standard_normal((N, C))}, expect_c=0)  # float64
    _run(lambda x: gg.log(gg.abs(x) + 1.0) * 2.0, {"x": _f32(N, C)}, expect_c=0)  # log: NumPy's


def test_long_chain_on_a_small_array_gets_a_c_loop():
    """W4's shape: many operations on 16 floats (each a NumPy call otherwise), forward and backward
    in one group."""
    def build(x):
        y = x
        for i in range(60):
            y = y * 1.001 if i % 3 == 0 else (y + 0.001 if i % 3 == 1 else gg.tanh(y))
        (gx,) = gg.gradients(y.sum(), [x])
        return [y, gx]
    sess, _ = _run(build, {"x": _f32(16)}, exact=False)
    assert len(_fused(sess)[0].ops) >= fuse_native.MIN_INSTRUCTIONS
    _run(lambda x: gg.relu(x * 2.0 + 1.0) - x, {"x": _f32(16)}, expect_c=0)  # short and small: NumPy


def test_optimizer_update_in_place_matches_numpy():
    """SGD with momentum, compiled: the update writes the variables' own arrays (donated buffers)."""
    def train(enabled):
        previous = native.set_enabled(enabled)
        try:
            gg.manual_seed(0)
            model = gg.nn.Sequential(gg.nn.Linear(256, 256), gg.nn.ReLU(), gg.nn.Linear(256, 10))
            opt = gg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
            x = gg.tensor(_f32(64, 256))
            y = gg.tensor(np.arange(64) % 10)

            @gg.function
            def step(x, y):
                opt.zero_grad()
                loss = gg.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss
            losses = [float(step(x, y).numpy()) for _ in range(4)]
            return losses, [p.numpy().copy() for p in model.parameters()]
        finally:
            native.set_enabled(previous)
    RNG_STATE = RNG.bit_generator.state
    losses_c, params_c = train(True)
    RNG.bit_generator.state = RNG_STATE
    losses_np, params_np = train(False)
    # (not bit-identical: the native loss-and-gradient kernel's exp is within 2 ulp of NumPy's; an update
    # written into the wrong buffer would be off by far more than this)
    np.testing.assert_allclose(losses_c, losses_np, rtol=1e-6)
    for a, b in zip(params_c, params_np):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_non_contiguous_or_foreign_arguments_fall_back():
    sess, _ = _run(lambda x: gg.relu(x * 2.0 + 1.0), {"x": _f32(N, C)})
    (op,) = _fused(sess)
    x = _f32(N, 2 * C)[:, ::2]  # a strided view: the C loop refuses it, NumPy's kernel runs
    assert op.kernel.native(None, (x,)) is None
    np.testing.assert_array_equal(op.forward(np, x), np.maximum(x * np.float32(2) + np.float32(1), 0))
    with native.disabled():
        assert op.kernel.native(None, (np.ascontiguousarray(x),)) is None


def test_loop_layout():
    out = (4, 8, 16)
    layout = fuse_native.loop_layout
    assert layout([(4, 8, 16)], out) == ((1, 1, 512), [(0, 0, 1)])  # all axes merged
    assert layout([(4, 8, 16), (1,)], out) == ((1, 1, 512), [(0, 0, 1), (0, 0, 0)])
    assert layout([(4, 8, 16), (16,)], out) == ((1, 32, 16), [(0, 16, 1), (0, 0, 1)])
    assert layout([(4, 8, 16), (8, 1)], out) == ((4, 8, 16), [(128, 16, 1), (0, 1, 0)])  # a middle block
    assert layout([(4, 8, 16), (4, 1, 1)], out) == ((1, 4, 128), [(0, 128, 1), (0, 1, 0)])
    assert layout([(4, 8, 16), (4, 1, 16)], out) == ((4, 8, 16), [(128, 16, 1), (16, 0, 1)])
    assert layout([(1, 8, 1, 16)], (2, 8, 4, 16)) is None  # four loops
    assert layout([(3, 16)], out) is None  # not a broadcast


def test_channel_bias_of_a_convolution_output():
    _run(lambda x, b: gg.relu(x + b) * 0.5, {"x": _f32(8, 16, 14, 14), "b": _f32(16, 1, 1)})


def test_literals_are_exact():
    assert fuse_native._literal(0.1) == f"{float(np.float32(0.1)).hex()}f"
    assert fuse_native._literal(float("inf")) == "INFINITY"


def test_the_same_input_array_changed_in_place_is_read_afresh():
    """The kernel keeps the pointer of the last small array at each input (the same object at every
    call, as a variable's array is): an array changed in place is read with its new values, and a
    different array of the same shape gets its own pointer."""
    sess, _ = _run(lambda x: gg.relu(x * 2.0 + 1.0), {"x": _f32(N, C)})
    (op,) = _fused(sess)
    x = _f32(N, C)
    first = op.kernel.native(None, (x,)).copy()
    np.testing.assert_array_equal(first, np.maximum(x * np.float32(2) + np.float32(1), 0))
    x *= -1.0  # the same object, new values
    np.testing.assert_array_equal(op.kernel.native(None, (x,)), np.maximum(x * np.float32(2) + np.float32(1), 0))
    y = _f32(N, C)
    np.testing.assert_array_equal(op.kernel.native(None, (y,)), np.maximum(y * np.float32(2) + np.float32(1), 0))
    assert op.kernel.native(None, (y[:, :C // 2],)) is None  # (and a wrong shape is still refused)


def test_large_groups_split_over_an_openmp_team():
    """Outputs of SPLIT_ELEMENTS or more split over the team, by rows of the outer loop, of the middle
    one, or by blocks of a flat loop (with a short last block): the same bits on one or three threads."""
    cases = [
        (lambda x, s: gg.relu(x * s + 1.0), {"x": _f32(4, 160, 130), "s": _f32(4, 1, 1)}),  # rows of i0
        (lambda x, b: gg.tanh(x + b) * 2.0, {"x": _f32(300, 257), "b": _f32(257)}),      # rows of i1
        (lambda x: gg.exp(x * 0.5) - x, {"x": _f32(70001)}),                            # flat blocks
        (lambda x, w: gg.relu(x @ w + 0.5), {"x": _f32(600, 3), "w": _f32(3, 200)}),    # an inline head
    ]
    for build, feeds in cases:
        graph = gg.Graph()
        with graph.as_default():
            holders = {n: gg.placeholder(gg.float32, v.shape, name=n) for n, v in feeds.items()}
            fetch = build(**holders)
        sess = gg.Session(graph, optimize=2)
        feed = {holders[n]: v for n, v in feeds.items()}
        results = []
        with openmp_team():
            for threads in (1, 3):
                native.set_threads(threads)
                results.append(sess.run(fetch, feed))
        (op,) = _fused(sess)
        assert op.kernel.native is not None and op.kernel.native.large
        np.testing.assert_array_equal(results[1], results[0])
        with native.disabled():
            np.testing.assert_allclose(results[0], sess.run(fetch, feed), rtol=3e-6, atol=1e-6)


def test_large_groups_split_over_threads_of_their_own():
    """Without a team (NumPy's OpenBLAS, its threaded work on the native pool), groups of at least
    OWN_SPLIT_WORK (elements x operations) split on threads of their own, smaller ones not: the same
    bits on one or three threads."""
    graph = gg.Graph()
    x_value = _f32(300, 1000)
    with graph.as_default():
        x = gg.placeholder(gg.float32, x_value.shape, name="x")
        big = gg.tanh(x * 0.5 + 1.0) * 2.0 - x
        small = gg.relu(x[:60] * 2.0)
    sess = gg.Session(graph, optimize=2)
    with own_threads():
        results = []
        for threads in (1, 3):
            native.set_threads(threads)
            results.append(sess.run([big, small], {x: x_value}))
            split = {repr(op): native.split_over_team(op.kernel.native.work)[0] != 0 for op in _fused(sess)}
        assert sorted(split.values()) == [False, True]  # (60 x 1000 x 2 < OWN_SPLIT_WORK <= 300 x 1000 x 5)
        assert native.split_over_team(native.OWN_SPLIT_WORK - 1) == (0, 1)
    for first, second in zip(*results):
        np.testing.assert_array_equal(second, first)
    with native.disabled():
        for got, expected in zip(results[0], sess.run([big, small], {x: x_value})):
            np.testing.assert_allclose(got, expected, rtol=3e-6, atol=1e-6)


def test_head_over_an_unknown_batch_dimension():
    """A weight gradient x^T g whose summed dimension is the batch, unknown when the graph is built:
    the head stays a BLAS product, and the group runs as NumPy's."""
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (None, 128), name="x")
        g = gg.placeholder(gg.float32, (None, 256), name="g")
        fetch = gg.relu(gg.transpose(x, (1, 0)) @ g * 2.0 + 1.0)
    feeds = {x: _f32(40, 128), g: _f32(40, 256)}
    got = gg.Session(graph, optimize=2).run(fetch, feeds)
    expected = np.maximum((feeds[x].T @ feeds[g]) * 2.0 + 1.0, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
