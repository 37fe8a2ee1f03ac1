"""Large static graphs: the generated plan is split into functions of bounded size and fused kernels
have a bounded number of ops, so a long chain plans in bounded memory and gives the same values."""
import resource

import numpy as np

import graphgrad as gg
from graphgrad.graph import plan
from graphgrad.graph.rewrite import fuse


def _chain(n: int):
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder("float32", (4,), name="x")
        y = x
        for i in range(n):
            y = y * 1.0001 + 0.001 if i % 2 else gg.tanh(y)
    return graph, x, y


def _reference(n: int, x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float32)
    for i in range(n):
        y = (y * np.float32(1.0001) + np.float32(0.001)) if i % 2 else np.tanh(y)
    return y


def test_split_plans_and_bounded_kernels_give_the_same_values(monkeypatch):
    monkeypatch.setattr(plan, "STEPS_PER_FUNCTION", 5)
    monkeypatch.setattr(fuse, "MAX_GROUP_MEMBERS", 4)
    graph, x, y = _chain(60)
    feed = np.linspace(-1, 1, 4).astype(np.float32)
    for level in (0, 2):
        out = gg.Session(graph=graph, optimize=level).run(y, {x: feed})
        np.testing.assert_allclose(out, _reference(60, feed), rtol=1e-5)


def test_a_long_chain_plans_in_bounded_memory():
    graph, x, y = _chain(30000)  # 45,000 nodes
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = gg.Session(graph=graph).run(y, {x: np.ones(4, np.float32)})
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert np.all(np.isfinite(out)) and grown_mb < 400, grown_mb
