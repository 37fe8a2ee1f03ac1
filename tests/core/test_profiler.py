"""gg.profile(): what is recorded (eager ops, the backward walk, Session runs, gg.function calls), that
self and total times add up, and the table and Chrome trace made from the events."""
from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.core.profiler import PROFILER

HERE = __file__.removesuffix("c")  # (a .pyc path names the .py)


def _line(offset: int = 0) -> int:
    """The line of the caller (plus ``offset``)."""
    import sys

    return sys._getframe(1).f_lineno + offset


def _names(prof, cat=None) -> list:
    return [e.name for e in prof.events if cat is None or e.cat == cat]


def _check_nesting(prof) -> None:
    """Every event lies inside an event one level up; self times sum to the outermost totals."""
    events = sorted(prof.events, key=lambda e: (e.start, e.depth))
    for e in events:
        assert e.dur >= 0 and 0 <= e.self_time <= e.dur
        if e.depth:
            parents = [p for p in events if p.depth == e.depth - 1
                       and p.start <= e.start and e.start + e.dur <= p.start + p.dur]
            assert len(parents) == 1, f"{e.name} at depth {e.depth} has {len(parents)} parents"
    for p in events:  # a parent's self time is its total minus its children's totals
        children = [e for e in events if e.depth == p.depth + 1 and p.start <= e.start
                    and e.start + e.dur <= p.start + p.dur]
        assert p.self_time == p.dur - sum(c.dur for c in children)
    assert sum(e.self_time for e in events) == sum(e.dur for e in events if e.depth == 0)
    assert prof.recorded <= prof.wall


def test_off_records_nothing():
    assert PROFILER.active is False
    prof = gg.profile()
    x = gg.tensor(np.ones(3, np.float32), requires_grad=True)
    (x * 2).sum().backward()
    assert prof.events == []
    with prof:
        assert PROFILER.active is True
    assert PROFILER.active is False
    (x * 3).sum().backward()  # after the block: nothing more
    assert prof.events == []


def test_eager_forward_counts_bytes_and_site():
    x = gg.tensor(np.ones((4, 5), np.float32))
    with gg.profile() as prof:
        y = x * 2.0; line = _line()  # noqa: E702
        for _ in range(3):
            y = gg.tanh(y)
        r = y.reshape(20)
        r.sum()
    assert _names(prof) == ["Mul", "Tanh", "Tanh", "Tanh", "Reshape", "Sum"]
    assert {e.cat for e in prof.events} == {"forward"}
    by_name = {row["name"]: row for row in prof.key_averages()}
    assert by_name["Tanh"]["calls"] == 3
    assert by_name["Mul"]["nbytes"] == 4 * 5 * 4 and by_name["Tanh"]["nbytes"] == 3 * 80
    assert by_name["Reshape"]["nbytes"] == 0  # a view of its input allocates nothing
    assert by_name["Sum"]["nbytes"] == 4
    mul = prof.events[0]
    assert mul.site == (HERE, line) and mul.shapes == ((4, 5), None)
    assert all(e.depth == 0 and e.self_time == e.dur for e in prof.events)
    _check_nesting(prof)


def test_backward_walk_split_and_nesting():
    x = gg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    w = gg.tensor(np.ones((4, 2), np.float32), requires_grad=True)
    with gg.profile() as prof:
        h = gg.tanh(x @ w); line = _line()  # noqa: E702
        loss = (h * h).sum()
        loss.backward()
    forward = _names(prof, "forward")
    assert forward == ["MatMul", "Tanh", "Mul", "Sum"]
    walk = [e for e in prof.events if e.name == "backward"]
    assert len(walk) == 1 and walk[0].depth == 0 and walk[0].cat == "backward"
    rules = [e for e in prof.events if e.name.endswith(".backward")]
    assert sorted(e.name for e in rules) == ["MatMul.backward", "Mul.backward", "Sum.backward", "Tanh.backward"]
    assert all(e.depth == 1 and e.cat == "backward" for e in rules)
    # the ops run by the gradient rules are backward ops, one level below their rule
    inner = [e for e in prof.events if e.cat == "backward" and e.depth == 2]
    assert {e.name for e in inner} >= {"MatMul"}
    assert [e for e in rules if e.name == "Tanh.backward"][0].site == (HERE, line)
    assert all(e.cat == "backward" for e in prof.events if e.depth > 0)
    _check_nesting(prof)
    rows = {(r["name"], r["cat"]): r for r in prof.key_averages()}
    assert rows[("MatMul", "forward")]["calls"] == 1
    assert rows[("MatMul", "backward")]["calls"] == 2  # gx = g @ w.T, gw = x.T @ g
    np.testing.assert_allclose(x.grad.numpy(), (2 * h.numpy() * (1 - h.numpy() ** 2)) @ w.numpy().T, rtol=1e-5)


def test_record_function_region_and_times():
    x = gg.tensor(np.ones(1000, np.float32))
    with gg.profile() as prof:
        with gg.record_function("outer"):
            line = _line(-1)
            time.sleep(0.02)
            with gg.record_function("inner"):
                (x + 1).sum()
    outer = next(e for e in prof.events if e.name == "outer")
    inner = next(e for e in prof.events if e.name == "inner")
    assert outer.cat == "user" and outer.depth == 0 and inner.depth == 1 and outer.site == (HERE, line)
    assert outer.dur >= 20e6 and outer.self_time >= 20e6 - 1e6
    assert inner.self_time == inner.dur - sum(e.dur for e in prof.events if e.depth == 2)
    _check_nesting(prof)


def test_session_run_steps():
    graph = gg.Graph()
    with graph.as_default():
        a = gg.placeholder(gg.float32, (None, 3), name="a")
        b = gg.exp(a) * 2.0; line = _line()  # noqa: E702
        c = b.sum()
    sess = gg.Session(graph, optimize=0)
    feed = {a: np.ones((2, 3), np.float32)}
    expected = sess.run(c, feed)
    with gg.profile() as prof:
        got = sess.run(c, feed)
    assert got == expected
    run = [e for e in prof.events if e.name == "Session.run"]
    assert len(run) == 1 and run[0].cat == "session" and run[0].depth == 0
    steps = [e for e in prof.events if e.depth == 1]
    assert [e.name for e in steps] == ["Exp", "Mul", "Sum"]
    assert all(e.cat == "session" for e in steps)
    assert steps[1].site == f"{HERE}:{line}" and steps[0].nbytes == 2 * 3 * 4
    _check_nesting(prof)


def test_gg_function_call_and_trace():
    model = gg.nn.Linear(3, 2)
    opt = gg.optim.SGD(model.parameters(), lr=0.1)
    x = gg.tensor(np.ones((4, 3), np.float32))

    def step(xb):
        opt.zero_grad()
        loss = (model(xb) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    compiled = gg.function(step)
    with gg.profile() as prof:
        first = compiled(x)
        second = compiled(x)
    assert float(second.item()) < float(first.item())
    calls = [e for e in prof.events if e.name == "gg.function step"]
    traces = [e for e in prof.events if e.name == "trace step"]
    assert len(calls) == 2 and len(traces) == 1 and all(e.cat == "function" for e in calls + traces)
    runs = [e for e in prof.events if e.name == "Session.run"]
    assert len(runs) == 2 and all(r.depth == 1 for r in runs)
    steps = [e for e in prof.events if e.cat == "session" and e.depth == 2]
    assert steps and any(e.site.startswith(HERE) for e in steps)
    _check_nesting(prof)


def test_other_threads_are_not_recorded():
    x = gg.tensor(np.ones(3, np.float32))
    with gg.profile() as prof:
        worker = threading.Thread(target=lambda: [gg.exp(x) for _ in range(5)])
        worker.start()
        worker.join()
        gg.tanh(x)
    assert _names(prof) == ["Tanh"]


def test_table_and_chrome_trace(tmp_path):
    x = gg.tensor(np.ones((8, 8), np.float32), requires_grad=True)
    with gg.profile() as prof:
        for _ in range(2):
            (gg.relu(x @ x) * 3).sum().backward()
    text = prof.table(sort_by="self", top=5)
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["name", "phase", "calls", "self"]
    assert "more rows" in text and "profiled block" in lines[-1]
    assert len([ln for ln in lines if "forward" in ln or "backward" in ln]) <= 6
    assert "MatMul" in prof.table(sort_by="name", top=None)
    assert repr(text) == str(text)
    with pytest.raises(ValueError):
        prof.table(sort_by="nope")
    assert any(r["site"].startswith(HERE) for r in prof.key_averages(group_by="site"))

    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as fh:
        trace = json.load(fh)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(prof.events)
    for e in complete:
        assert {"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert e["cat"] in ("forward", "backward", "session", "function", "user") and e["dur"] >= 0
    assert {e["name"] for e in complete} >= {"MatMul", "Relu", "backward", "MatMul.backward"}
    matmul = next(e for e in complete if e["name"] == "MatMul")
    assert matmul["args"]["shapes"] == "(8, 8), (8, 8)" and matmul["args"]["site"].startswith(HERE)
    assert matmul["args"]["bytes"] == 8 * 8 * 4
