"""TF1-style data parallelism: DistributedOptimizer and broadcast_variables on 2 and 3 ranks (against one
process on the whole batch), collectives in Session graphs and gg.function, the example script; and, in
process, the world of one, bucketing and the errors."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.distributed import world
from graphgrad.distributed.graph import DistributedOptimizer, grouped_all_reduce, plan_buckets
from graphgrad.distributed.ops import AllReduce
from tests.distributed.launch import HERE, ROOT, needs_mpi, run_ranks
from tests.example_loader import load_example

SCRIPTS = os.path.join(HERE, "scripts")


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_graph_training_equals_one_process_on_the_whole_batch(ranks):
    out = run_ranks(ranks, os.path.join(SCRIPTS, "graph_training.py")).stdout
    assert f"ok {ranks} ranks" in out


@needs_mpi
def test_example_runs_under_the_launcher_and_only_rank_0_prints():
    out = run_ranks(2, os.path.join(ROOT, "examples", "distributed_tf1.py"), "--steps", "150").stdout
    assert out.count("whole data set") == 1 and "(2 ranks)" in out
    accuracy = float(out.rsplit("accuracy", 1)[1])
    assert accuracy >= 0.9


# ---- in process: a world of one -------------------------------------------------------------------------------
def _regression(graph, make_optimizer, steps=3):
    """Variables after ``steps`` of training a linear regression in ``graph`` with ``make_optimizer()``."""
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    with graph.as_default():
        x, y = gg.placeholder(gg.float64, (None, 3)), gg.placeholder(gg.float64, (None, 1))
        w = gg.Variable(rng.standard_normal((3, 1)), name="w")
        b = gg.Variable(np.zeros(1), name="b")
        loss = gg.mean((x @ w + b - y) ** 2)
        optimizer = make_optimizer()
        train_op = optimizer.minimize(loss)
        init = gg.global_variables_initializer()
    sess = gg.Session(graph)
    sess.run(init)
    for _ in range(steps):
        sess.run(train_op, {x: xs, y: ys})
    return [w.numpy(), b.numpy()], optimizer, loss


def test_world_of_one_is_the_wrapped_optimizer(fresh_world):
    dist.init()
    plain, _, _ = _regression(gg.Graph(), lambda: gg.train.AdamOptimizer(0.1))
    def distributed():
        return gg.train.DistributedOptimizer(gg.train.AdamOptimizer(0.1))

    wrapped, optimizer, loss = _regression(gg.Graph(), distributed)
    for a, b in zip(wrapped, plain):
        np.testing.assert_array_equal(a, b)
    # no collective in the graph; the rest is the wrapped optimizer's
    assert not any(isinstance(n.op, AllReduce) for n in loss._node.graph.get_operations())
    assert optimizer.get_name() == "Adam" and optimizer.get_slot_names() == ["m", "v"]
    assert isinstance(optimizer.optimizer, gg.train.AdamOptimizer)
    assert {v.base_name for v in optimizer.variables()} >= {"w/Adam/m", "b/Adam/v", "Adam/step"}
    assert "DistributedOptimizer(" in repr(optimizer)
    assert gg.train.DistributedOptimizer is dist.DistributedOptimizer
    with gg.Graph().as_default():
        v = gg.Variable(np.arange(3.0), name="v")
        sync = gg.train.broadcast_global_variables(0)
        gg.Session().run(sync)
    np.testing.assert_array_equal(v.numpy(), np.arange(3.0))


def test_example_on_one_process(fresh_world, capsys):
    result = load_example("distributed_tf1").main(steps=150)
    assert result["accuracy"] >= 0.9
    assert "(1 rank)" in capsys.readouterr().out


def test_bad_arguments_are_clear(fresh_world):
    with pytest.raises(dist.DistributedError, match=r"call graphgrad.distributed.init\(\) first"):
        _regression(gg.Graph(), lambda: DistributedOptimizer(gg.train.GradientDescentOptimizer(0.1)))
    dist.init()
    with pytest.raises(ValueError, match="op must be one of"):
        DistributedOptimizer(gg.train.GradientDescentOptimizer(0.1), op="max")
    with pytest.raises(ValueError, match="bucket_mb"):
        DistributedOptimizer(gg.train.GradientDescentOptimizer(0.1), bucket_mb=-1)
    with pytest.raises(TypeError, match="graph optimizer.*DistributedDataParallel"):
        DistributedOptimizer(gg.optim.SGD([gg.tensor([1.0], requires_grad=True)], lr=0.1))
    with gg.Graph().as_default():
        v = gg.Variable(1.0)
        with pytest.raises(dist.DistributedError, match="root_rank 1 is not a rank of a world of 1"):
            dist.broadcast_variables([v], root_rank=1)
        with pytest.raises(TypeError, match="expected gg.Variables"):
            dist.broadcast_variables([v * 2])
        with pytest.raises(dist.DistributedError, match="static shape"):
            grouped_all_reduce([gg.placeholder(gg.float64, (None, 2), name="p")])


def test_buckets_keep_dtypes_apart_and_respect_the_cap():
    f64 = [gg.zeros(4, dtype=gg.float64), gg.zeros((2, 2), dtype=gg.float64)]   # 32 bytes each
    f32 = gg.zeros(3, dtype=gg.float32)
    big = gg.zeros(100, dtype=gg.float64)
    assert plan_buckets([f64[0], f32, f64[1]], 1e9) == [[0, 2], [1]]
    assert plan_buckets([f64[0], f64[1], big, f64[0]], 64) == [[0, 1], [2], [3]]
    assert plan_buckets([f64[0], f64[1]], 0) == [[0], [1]]
    assert plan_buckets([], 64) == []


def test_grouped_all_reduce_runs_its_buckets_in_one_order_whatever_the_batch(fresh_world):
    """Each bucket's collective waits for the previous one (a control input), so the plan runs them in
    bucket order on every rank, even where the memory-aware schedule of the rest depends on a per-rank
    batch size."""
    dist.init()
    orders = set()
    for batch in (1, 5, 6, 7, 11):
        graph = gg.Graph()
        with graph.as_default():
            x = gg.placeholder(gg.float64, (batch, 5))
            rng = np.random.default_rng(0)
            params, h = [], x
            for i, width in enumerate((16, 32, 8, 3)):
                w = gg.Variable(rng.standard_normal((h.shape[1], width)), name=f"w{i}")
                b = gg.Variable(np.zeros(width), name=f"b{i}")
                params += [w, b]
                h = gg.tanh(h @ w + b)
            grads = gg.gradients((h ** 2).sum(), params)
            reduced = grouped_all_reduce(grads, "mean", bucket_mb=0, names=[p.base_name for p in params])
            collectives = [n for n in graph.get_operations() if isinstance(n.op, AllReduce)]
            assert len(collectives) == len(params)
            assert [c.control_inputs for c in collectives[1:]] == [(c,) for c in collectives[:-1]]
            sess = gg.Session(graph)
            values = sess.run(reduced, {x: np.ones((batch, 5))})
        expected = gg.Session(graph).run(grads, {x: np.ones((batch, 5))})
        for got, want in zip(values, expected):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        (plan,) = sess._plans.values()
        orders.add(tuple(s[3].op.label for s in plan.steps if isinstance(s[3].op, AllReduce)))
    assert orders == {tuple(p.base_name for p in params)}


def test_grouped_all_reduce_eagerly(fresh_world):
    dist.init()
    a, b = gg.tensor(np.arange(6.0).reshape(2, 3)), gg.tensor(2.5, dtype=gg.float64)
    c = gg.tensor(np.arange(3, dtype=np.float32))
    out = grouped_all_reduce([a, b, c], "sum")
    assert [t.shape for t in out] == [(2, 3), (), (3,)]
    assert [t.dtype for t in out] == [gg.float64, gg.float64, gg.float32]
    for got, want in zip(out, (a, b, c)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_compiler_keeps_every_collective(fresh_world):
    """Collectives are impure: CSE does not merge equal ones, folding leaves those of constants alone,
    fusion and pruning keep them, and a Session runs each once per run."""
    dist.init()
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder(gg.float64, (2, 3), name="p")
        c = gg.constant(np.ones((2, 3)))
        fetches = [dist.all_reduce(p, name="twin"), dist.all_reduce(p, name="twin"),
                   dist.all_reduce(c, name="of a constant") + 1.0, dist.broadcast(c * 2.0, name="scaled constant"),
                   dist.all_reduce(p, name="times one") * 1.0, gg.exp(dist.all_gather(p + 0.0, name="gathered"))]
    sess = gg.Session(graph)
    before = world.WORLD.sequence
    for _ in range(2):
        values = sess.run(fetches, {p: np.full((2, 3), 2.0)})
    assert world.WORLD.sequence - before == 2 * 6
    np.testing.assert_array_equal(values[2], np.full((2, 3), 2.0))
    np.testing.assert_allclose(values[5], np.exp(np.full((2, 3), 2.0)))
    (plan,) = sess._plans.values()
    labels = sorted(s[3].op.label for s in plan.steps if getattr(s[3].op, "pure", True) is False)
    assert labels == sorted(["twin", "twin", "of a constant", "scaled constant", "times one", "gathered"])
