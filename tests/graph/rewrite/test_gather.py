"""Products with embedding rows done on the table's rows (graph/rewrite/gather.py): the rules fire
where the table is small, keep the values (optimize=0 == optimize=2, and eager == gg.function for a
whole training step), follow reshapes and transposes of the position axes, and keep padding rows."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.graph.rewrite import optimize

RNG = np.random.default_rng(0)


def _program(outs, ps):
    return optimize([o._node for o in outs], [p._node for p in ps], level=2, skip=("fuse",))


def _fired(prog, rule: str) -> int:
    return sum(record.fired[rule] for record in prog.log)


def _both(graph, outs, feed):
    r0 = gg.Session(graph, optimize=0).run(outs, feed)
    r2 = gg.Session(graph, optimize=2).run(outs, feed)
    return r0, r2


@pytest.mark.parametrize("layout", ["flat", "time_major", "batch_major"])
def test_weight_gradient_of_gathered_rows(layout):
    """``a @ E[idx]`` with idx (4, 30) seen as 120 rows, through a transpose and a reshape."""
    table = RNG.standard_normal((10, 6))
    graph = gg.Graph()
    with graph.as_default():
        idx = gg.placeholder(gg.int64, (4, 30), name="idx")
        a = gg.placeholder(gg.float64, (120, 5), name="a")
        E = gg.constant(table)
        rows = gg.embedding(idx, E)  # (4, 30, 6)
        if layout == "time_major":
            rows = gg.transpose(rows, (1, 0, 2))
        rows = gg.reshape(rows, (120, 6))
        out = gg.matmul(gg.transpose(a, (1, 0)), rows)  # (5, 6)
    feed = {idx: RNG.integers(0, 10, (4, 30)), a: RNG.standard_normal((120, 5))}
    (r0,), (r2,) = _both(graph, [out], feed)
    np.testing.assert_allclose(r2, r0, rtol=1e-12, atol=1e-12)
    assert _fired(_program([out], [idx, a]), "product_with_gathered_rows") == 1


def test_embedding_gradient_of_a_product():
    """``scatter(g @ W, idx)`` through the inverse reshape/transpose, with a padding row kept at zero."""
    graph = gg.Graph()
    with graph.as_default():
        idx = gg.placeholder(gg.int64, (4, 30), name="idx")
        g = gg.placeholder(gg.float64, (120, 7), name="g")
        w = gg.constant(RNG.standard_normal((7, 6)))
        rows = gg.transpose(gg.reshape(gg.matmul(g, w), (30, 4, 6)), (1, 0, 2))  # (4, 30, 6)
        from graphgrad.ops.nn import EmbeddingBackward
        out = EmbeddingBackward(10, padding_idx=3).apply(rows, idx)
    feed = {idx: RNG.integers(0, 10, (4, 30)), g: RNG.standard_normal((120, 7))}
    (r0,), (r2,) = _both(graph, [out], feed)
    np.testing.assert_allclose(r2, r0, rtol=1e-12, atol=1e-12)
    assert (r2[3] == 0).all()
    assert _fired(_program([out], [idx, g]), "scatter_before_product") == 1


def test_no_rewrite_for_a_large_table_or_a_shared_product():
    graph = gg.Graph()
    with graph.as_default():
        idx = gg.placeholder(gg.int64, (20,), name="idx")
        a = gg.placeholder(gg.float64, (5, 20), name="a")
        out = gg.matmul(a, gg.embedding(idx, gg.constant(RNG.standard_normal((50, 6)))))  # 50 rows > 20 / 2
        g = gg.placeholder(gg.float64, (20, 7), name="g")
        product = gg.matmul(g, gg.constant(RNG.standard_normal((7, 6))))
        from graphgrad.ops.nn import EmbeddingBackward
        shared = [EmbeddingBackward(5).apply(product, idx), product * 2.0]  # the product is read twice
    prog = _program([out] + shared, [idx, a, g])
    assert _fired(prog, "product_with_gathered_rows") == 0 and _fired(prog, "scatter_before_product") == 0


def test_language_model_step_compiled_matches_eager():
    """An embedding -> LSTM -> linear language model: gg.function (where both rules fire) trains as eager."""
    def train(compiled: bool):
        gg.manual_seed(0)
        embed, lstm, head = gg.nn.Embedding(12, 8), gg.nn.LSTM(8, 16, batch_first=True), gg.nn.Linear(16, 12)
        params = list(embed.parameters()) + list(lstm.parameters()) + list(head.parameters())
        opt = gg.optim.Adam(params, lr=1e-2)

        def step(tokens, targets):
            opt.zero_grad()
            out, _ = lstm(embed(tokens))
            loss = gg.cross_entropy(head(out).reshape(-1, 12), targets.reshape(-1))
            loss.backward()
            opt.step()
            return loss
        step = gg.function(step) if compiled else step
        data = np.random.default_rng(1)
        tokens, targets = gg.tensor(data.integers(0, 12, (4, 20))), gg.tensor(data.integers(0, 12, (4, 20)))
        return [float(step(tokens, targets).numpy()) for _ in range(4)], embed.weight.numpy()
    eager, compiled = train(False), train(True)
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-5)
    np.testing.assert_allclose(compiled[1], eager[1], rtol=1e-4, atol=1e-6)
