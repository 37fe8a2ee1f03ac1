"""gg.explain / fn.explain: the per-pass report, memory line and before/after drawings."""
from __future__ import annotations

import graphgrad as gg


def test_explain_mul_chain_reports_the_folded_constants(tmp_path):
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (4,), name="x")
        y = ((x * 2) * 2) * 2
    report = gg.explain(y, dot_dir=str(tmp_path), print_fn=None)
    assert "combine_constant_factors x2" in report
    assert "final program: 3 nodes" in report and "Mul x1" in report
    assert "peak intermediate memory" in report
    before = (tmp_path / "before.dot").read_text()
    after = (tmp_path / "after.dot").read_text()
    assert before.count("Mul") > after.count("Mul") >= 1
    assert [n.op.name for n in g.get_operations()] == ["Placeholder", "Mul", "Mul", "Mul"]  # unchanged


def test_explain_level_zero_and_whole_graph():
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (2,))
        _ = x + 0
    assert "level 0" in gg.explain(g, level=0, print_fn=None)
    assert "drop_add_zero x1" in gg.explain(g, print_fn=None)


def test_function_explain_reports_the_training_step():
    model = gg.nn.Sequential(gg.nn.Linear(3, 4), gg.nn.ReLU(), gg.nn.Linear(4, 2))
    opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    @gg.function
    def step(x, y):
        opt.zero_grad()
        loss = gg.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    x, y = gg.randn(5, 3), gg.randint(0, 2, (5,))
    text = step.explain(x, y)
    assert text.startswith("gg.function trace:") and "assignments" in text and "fuse" in text
    assert gg.explain(step, x, y, print_fn=None).startswith("gg.function trace:")
