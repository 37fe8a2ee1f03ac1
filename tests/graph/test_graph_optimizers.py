"""Graph optimizers (gg.train.*Optimizer): minimize, compute/apply_gradients, slots, global step,
learning-rate tensors, and agreement with the shared eager rules applied by hand."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.optim import rules
from graphgrad.train import (AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer, Optimizer,
                             RMSPropOptimizer)

TARGET = np.array([1.0, -2.0, 0.5], dtype=np.float32)
SCALE = np.array([1.0, 0.5, 2.0], dtype=np.float32)
START = np.array([3.0, 1.0, -1.0], dtype=np.float32)


def quadratic():
    """w (3,) and loss = sum(SCALE * (w - TARGET)^2), minimum at TARGET."""
    w = gg.Variable(START, name="w")
    loss = gg.sum(gg.constant(SCALE) * (w - gg.constant(TARGET)) ** 2)
    return w, loss


OPTIMIZERS = {
    "sgd": lambda: GradientDescentOptimizer(0.1),
    "momentum": lambda: MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda: MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda: AdamOptimizer(0.1),
    "rmsprop": lambda: RMSPropOptimizer(0.02),
    "rmsprop-centered-momentum": lambda: RMSPropOptimizer(0.01, decay=0.9, momentum=0.5, centered=True),
}


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_minimize_converges_on_a_quadratic(g, make):
    w, loss = quadratic()
    train_op = make().minimize(loss)
    sess = gg.Session()
    before = sess.run(loss)
    for _ in range(300):
        assert sess.run(train_op) is None
    assert sess.run(loss) < 1e-3 * before
    np.testing.assert_allclose(sess.run(w), TARGET, atol=0.05)
    assert w.dtype == gg.float32 and w.numpy().dtype == np.float32


def test_compute_and_apply_gradients(g):
    w, loss = quadratic()
    unused = gg.Variable([1.0, 2.0], name="unused")
    opt = GradientDescentOptimizer(0.1)
    pairs = opt.compute_gradients(loss)
    assert [v.base_name for _, v in pairs] == ["w", "unused"] and pairs[0][1] is w
    grads = dict((v.base_name, grad) for grad, v in pairs)
    assert grads["unused"] is None
    sess = gg.Session()
    np.testing.assert_allclose(sess.run(grads["w"]), 2 * SCALE * (START - TARGET))
    # transform the gradients before applying them (here: halve them)
    train_op = opt.apply_gradients([(grad * 0.5, v) for grad, v in pairs if grad is not None])
    sess.run(train_op)
    np.testing.assert_allclose(w.numpy(), START - 0.1 * 0.5 * 2 * SCALE * (START - TARGET), rtol=1e-6)
    np.testing.assert_allclose(unused.numpy(), [1.0, 2.0])


def test_default_var_list_is_the_trainable_variables(g):
    w, loss = quadratic()
    frozen = gg.Variable([2.0], trainable=False, name="frozen")
    loss = loss + gg.sum(frozen * frozen)
    pairs = GradientDescentOptimizer(0.1).compute_gradients(loss)
    assert [v.base_name for _, v in pairs] == ["w"]
    train_op = GradientDescentOptimizer(0.1).minimize(loss, var_list=[w])
    gg.Session().run(train_op)
    np.testing.assert_allclose(frozen.numpy(), [2.0])


def test_learning_rate_placeholder(g):
    w, loss = quadratic()
    lr = gg.placeholder(gg.float32, (), name="lr")
    train_op = GradientDescentOptimizer(lr).minimize(loss)
    sess = gg.Session()
    sess.run(train_op, {lr: 0.0})
    np.testing.assert_allclose(w.numpy(), START)
    sess.run(train_op, {lr: 0.25})
    np.testing.assert_allclose(w.numpy(), START - 0.25 * 2 * SCALE * (START - TARGET), rtol=1e-6)


def test_learning_rate_tensor_for_adam_and_rmsprop(g):
    w, loss = quadratic()
    lr = gg.placeholder(gg.float64, (), name="lr")  # a float64 rate must not make the update float64
    ops = [AdamOptimizer(lr).minimize(loss), RMSPropOptimizer(lr, momentum=0.9).minimize(loss)]
    sess = gg.Session()
    for op in ops:
        sess.run(op, {lr: 0.0})
    np.testing.assert_allclose(w.numpy(), START)
    assert w.numpy().dtype == np.float32
    sess.run(ops[0], {lr: 0.1})
    # the first Adam step moves each coordinate by about lr, against the gradient's sign
    np.testing.assert_allclose(w.numpy(), START - 0.1 * np.sign(START - TARGET), rtol=1e-5)


def test_global_step_increments(g):
    w, loss = quadratic()
    step = gg.Variable(0, trainable=False, name="global_step", dtype=gg.int64)
    train_op = AdamOptimizer(0.01).minimize(loss, global_step=step)
    sess = gg.Session()
    for i in range(3):
        sess.run(train_op)
    assert sess.run(step) == 3 and step.numpy().dtype == np.int64


def test_learning_rate_from_global_step_reads_the_step_before_the_update(g):
    w, loss = quadratic()
    step = gg.Variable(0.0, trainable=False, name="global_step")
    lr = 0.1 * (step + 1.0)  # 0.1 on the first run, 0.2 on the second
    train_op = GradientDescentOptimizer(lr).minimize(loss, global_step=step)
    sess = gg.Session()
    expected = START.astype(np.float64)
    for rate in (0.1, 0.2):
        sess.run(train_op)
        expected = expected - rate * 2 * SCALE * (expected - TARGET)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


def test_slot_variables(g):
    w, loss = quadratic()
    opt = AdamOptimizer(0.1)
    opt.minimize(loss)
    assert opt.get_slot_names() == ["m", "v"]
    m, v = opt.get_slot(w, "m"), opt.get_slot(w, "v")
    assert m.base_name == "w/Adam/m" and v.base_name == "w/Adam/v"
    assert not m.trainable and not v.trainable and not m.requires_grad
    assert m.shape == w.shape and m.dtype == w.dtype
    assert [v.base_name for v in gg.trainable_variables()] == ["w"]
    names = {var.base_name for var in gg.global_variables()}
    assert {"w", "w/Adam/m", "w/Adam/v", "Adam/step"} <= names
    assert opt.get_slot(w, "nothing") is None
    rms = RMSPropOptimizer(0.1, momentum=0.9, centered=True)
    rms.minimize(loss)
    assert rms.get_slot_names() == ["square_avg", "buf", "grad_avg"]
    assert RMSPropOptimizer(0.1).get_slot_names() == ["square_avg"]
    assert MomentumOptimizer(0.1, 0.9).get_slot_names() == ["velocity"]
    assert GradientDescentOptimizer(0.1).get_slot_names() == []


def test_initializer_resets_variables_and_slots(g):
    w, loss = quadratic()
    opt = AdamOptimizer(0.1)
    train_op = opt.minimize(loss)
    init = gg.global_variables_initializer()
    sess = gg.Session()
    first = None
    for attempt in range(2):
        sess.run(init)
        np.testing.assert_array_equal(opt.get_slot(w, "m").numpy(), 0.0)
        np.testing.assert_array_equal(opt.get_slot(w, "v").numpy(), 0.0)
        for _ in range(5):
            sess.run(train_op)
        if first is None:
            first = w.numpy().copy()
            assert np.abs(opt.get_slot(w, "m").numpy()).sum() > 0
    np.testing.assert_array_equal(w.numpy(), first)  # a reset run repeats the first one exactly


def test_every_update_reads_values_from_before_the_step(g):
    """loss = sum(a * b): a' = a - lr * b and b' = b - lr * a, both with the old values."""
    a = gg.Variable([1.0, 2.0], name="a")
    b = gg.Variable([3.0, 5.0], name="b")
    loss = gg.sum(a * b)
    gg.Session().run(GradientDescentOptimizer(0.1).minimize(loss))
    np.testing.assert_allclose(a.numpy(), [1.0 - 0.3, 2.0 - 0.5], rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), [3.0 - 0.1, 5.0 - 0.2], rtol=1e-6)


def test_errors(g):
    w, loss = quadratic()
    other = gg.Variable([1.0], name="other")
    with pytest.raises(ValueError, match="no gradients"):
        GradientDescentOptimizer(0.1).minimize(loss, var_list=[other])
    with pytest.raises(gg.GraphError, match="graph tensor"):
        GradientDescentOptimizer(0.1).minimize(gg.tensor(1.0))
    with pytest.raises(ValueError, match="learning_rate"):
        GradientDescentOptimizer(-1.0)
    assert isinstance(AdamOptimizer(), Optimizer)


# ---- each optimizer against its eager rule applied by hand -------------------------------------------------
def hand_grad(w):
    return 2 * gg.tensor(SCALE) * (w - gg.tensor(TARGET))


HAND = {
    "sgd": (lambda: GradientDescentOptimizer(0.1), "sgd", dict(lr=0.1)),
    "momentum": (lambda: MomentumOptimizer(0.05, 0.9), "momentum", dict(lr=0.05, momentum=0.9)),
    "nesterov": (lambda: MomentumOptimizer(0.05, 0.9, use_nesterov=True), "momentum",
                 dict(lr=0.05, momentum=0.9, nesterov=True)),
    "adam": (lambda: AdamOptimizer(0.05, beta1=0.8, beta2=0.99, epsilon=1e-6), "adam",
             dict(lr=0.05, beta1=0.8, beta2=0.99, eps=1e-6)),
    "rmsprop": (lambda: RMSPropOptimizer(0.01, decay=0.95, epsilon=1e-7), "rmsprop",
                dict(lr=0.01, alpha=0.95, eps=1e-7)),
    "rmsprop-centered-momentum": (lambda: RMSPropOptimizer(0.01, decay=0.9, momentum=0.5, epsilon=1e-10,
                                                           centered=True), "rmsprop",
                                  dict(lr=0.01, alpha=0.9, eps=1e-10, momentum=0.5, centered=True)),
}


def eager_by_hand(rule, hyper, steps):
    w = gg.tensor(START)
    state = {k: gg.full((3,), v) for k, v in rules.state_for(rule, **hyper).items()}
    history = []
    with gg.no_grad():
        for t in range(1, steps + 1):
            grad = hand_grad(w)
            if rule == "sgd":
                w = rules.sgd(w, grad, **hyper)
            elif rule == "momentum":
                w, state["velocity"] = rules.momentum(w, grad, state["velocity"], **hyper)
            elif rule == "adam":
                w, state["m"], state["v"] = rules.adam(w, grad, state["m"], state["v"], t, **hyper)
            else:
                w, state["square_avg"], buf, avg = rules.rmsprop(w, grad, state["square_avg"], buf=state.get("buf"),
                                                                 grad_avg=state.get("grad_avg"), **hyper)
                state.update({k: x for k, x in (("buf", buf), ("grad_avg", avg)) if x is not None})
            history.append((w.numpy(), {k: x.numpy() for k, x in state.items()}))
    return history


@pytest.mark.parametrize("name", HAND)
def test_matches_the_eager_rule_applied_by_hand(name):
    make, rule, hyper = HAND[name]
    expected = eager_by_hand(rule, hyper, 10)  # eagerly, outside any graph
    graph = gg.Graph()
    with graph.as_default():
        w, loss = quadratic()
        opt = make()
        train_op = opt.minimize(loss)
    sess = gg.Session(graph)
    for want_w, want_state in expected:
        sess.run(train_op)
        np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-6, atol=1e-7)
        assert set(opt.get_slot_names()) == set(want_state)
        for k, x in want_state.items():
            np.testing.assert_allclose(opt.get_slot(w, k).numpy(), x, rtol=1e-6, atol=1e-7)
    assert w.numpy().dtype == np.float32


def test_adam_step_counter_counts_runs(g):
    w, loss = quadratic()
    opt = AdamOptimizer(0.1)
    train_op = opt.minimize(loss)
    sess = gg.Session()
    for _ in range(4):
        sess.run(train_op)
    (counter,) = [v for v in opt.variables() if v.base_name == "Adam/step"]
    assert counter.numpy() == 4.0 and not counter.trainable
