"""gg.function: tracing eager code into a graph, retracing per signature, and whole training steps
(forward, backward / gg.grad, optimizer step) giving the same results compiled as eager."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import graphgrad as gg

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def float64():
    previous = gg.get_default_dtype()
    gg.set_default_dtype("float64")
    yield
    gg.set_default_dtype(previous)


def _bench():
    """benchmarks/train.py (its LSTM LM and small GPT), imported by path."""
    path = ROOT / "benchmarks" / "train.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location("_bench_train", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def assert_close(a, b, rtol, atol=None):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol if atol is None else atol)


# ---- forward functions ----------------------------------------------------------------------------------
def test_forward_values_equal_eager():
    def f(x, y):
        return gg.tanh(x @ y) + gg.exp(-x.sum(axis=1, keepdims=True))

    compiled = gg.function(f)
    rng = np.random.default_rng(0)
    x, y = gg.tensor(rng.standard_normal((4, 3))), gg.tensor(rng.standard_normal((3, 5)))
    out = compiled(x, y)
    assert isinstance(out, gg.Tensor) and not out.is_symbolic
    assert_close(out.numpy(), f(x, y).numpy(), 1e-12)
    assert compiled.trace_count == 1
    compiled(gg.tensor(rng.standard_normal((4, 3))), y)
    assert compiled.trace_count == 1  # same signature: no retrace


def test_decorator_forms_and_module():
    model = gg.nn.Sequential(gg.nn.Linear(3, 4), gg.nn.ReLU(), gg.nn.Linear(4, 2))

    @gg.function
    def a(x):
        return model(x)

    @gg.function(optimize=1)
    def b(x):
        return model(x)

    x = gg.randn(5, 3)
    assert_close(a(x).numpy(), model(x).numpy(), 1e-5)
    assert_close(b(x).numpy(), model(x).numpy(), 1e-5)
    assert isinstance(a, gg.graph.trace.Function) and b.optimize == 1
    assert a.__name__ == "a"


def test_retrace_on_new_shape_dtype_and_python_args():
    @gg.function
    def f(x, scale, mode="add"):
        return x * scale + 1 if mode == "add" else x * scale - 1

    x = gg.ones((2, 3))
    assert_close(f(x, 2.0).numpy(), np.full((2, 3), 3.0), 0)
    assert f.trace_count == 1
    f(gg.ones((2, 3)), 2.0)
    assert f.trace_count == 1
    f(gg.ones((4, 3)), 2.0)  # new shape
    assert f.trace_count == 2
    f(gg.ones((2, 3), dtype="float64"), 2.0)  # new dtype
    assert f.trace_count == 3
    assert_close(f(x, 3.0).numpy(), np.full((2, 3), 4.0), 0)  # new Python value
    assert f.trace_count == 4
    assert_close(f(x, 3.0, mode="sub").numpy(), np.full((2, 3), 2.0), 0)  # Python control flow
    assert f.trace_count == 5
    f(x, 3.0, mode="sub")
    assert f.trace_count == 5
    assert len(f.signatures) == 5


def test_numpy_arrays_are_tensor_arguments():
    f = gg.function(lambda x: x * 2)
    out = f(np.arange(3.0))
    assert_close(out.numpy(), [0.0, 2.0, 4.0], 0)
    f(np.arange(3.0) + 1)
    assert f.trace_count == 1


def test_input_signature_none_batch_dim():
    model = gg.nn.Linear(3, 2)

    @gg.function(input_signature=[gg.TensorSpec((None, 3), "float32")])
    def predict(x):
        return model(x).sum(axis=1)

    for batch in (1, 4, 7):
        x = gg.randn(batch, 3)
        assert_close(predict(x).numpy(), model(x).sum(axis=1).numpy(), 1e-5)
    assert predict.trace_count == 1
    assert predict.graph_for(gg.randn(2, 3)).get_operation_by_name("input_0").out.shape == (None, 3)
    with pytest.raises(gg.GraphError, match="does not fit"):
        predict(gg.randn(2, 4))


def test_nested_outputs():
    @gg.function
    def f(x):
        return {"sum": x.sum(), "pair": (x * 2, [x + 1, None]), "const": 7}

    x = gg.tensor([1.0, 2.0])
    out = f(x)
    assert set(out) == {"sum", "pair", "const"}
    assert_close(out["sum"].numpy(), 3.0, 0)
    assert isinstance(out["pair"], tuple) and isinstance(out["pair"][1], list)
    assert_close(out["pair"][0].numpy(), [2.0, 4.0], 0)
    assert_close(out["pair"][1][0].numpy(), [2.0, 3.0], 0)
    assert out["pair"][1][1] is None and out["const"] == 7
    assert gg.function(lambda x: None)(x) is None


def test_nested_tensor_arguments():
    @gg.function
    def f(pair, d):
        return pair[0] * pair[1] + d["b"]

    out = f((gg.tensor([1.0, 2.0]), gg.tensor([3.0, 4.0])), {"b": gg.tensor([1.0, 1.0])})
    assert_close(out.numpy(), [4.0, 9.0], 0)


def test_data_dependent_control_flow_raises_a_clear_error():
    @gg.function
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(gg.GraphError, match="tensor values are unknown while tracing") as info:
        f(gg.ones(3))
    assert "gg.where" in str(info.value) and "test_trace.py" in str(info.value)

    @gg.function
    def g(x):
        return x * float(x.max())

    with pytest.raises(gg.GraphError, match="gg.where"):
        g(gg.ones(3))
    # the where form traces
    h = gg.function(lambda x: gg.where(x > 0, x, -x))
    assert_close(h(gg.tensor([-1.0, 2.0])).numpy(), [1.0, 2.0], 0)


def test_concrete_and_explain():
    f = gg.function(lambda x: gg.exp(x) * 1.0 + 0.0)
    x = gg.ones(3)
    concrete = f.concrete(x)
    assert concrete is f.concrete(x) and f.trace_count == 1
    assert len(concrete.inputs) == 1 and len(concrete.outputs) == 1
    assert isinstance(concrete.session, gg.Session)
    text = f.explain(x)
    assert "nodes traced" in text


# ---- training steps: compiled vs eager ----------------------------------------------------------------
def _make_optimizer(name, params):
    if name == "sgd":
        return gg.optim.SGD(params, lr=0.05, momentum=0.9)
    if name == "sgd_dampening":
        return gg.optim.SGD(params, lr=0.05, momentum=0.9, dampening=0.3, nesterov=False, weight_decay=1e-3)
    if name == "adam":
        return gg.optim.Adam(params, lr=1e-2)
    if name == "adamw":
        return gg.optim.AdamW(params, lr=1e-2, weight_decay=0.05)
    if name == "rmsprop":
        return gg.optim.RMSprop(params, lr=1e-2, momentum=0.5)
    if name == "adagrad":
        return gg.optim.Adagrad(params, lr=1e-1)
    raise ValueError(name)


def _mlp(seed, dtype):
    gg.manual_seed(seed)
    model = gg.nn.Sequential(gg.nn.Linear(6, 16), gg.nn.Tanh(), gg.nn.Linear(16, 8), gg.nn.ReLU(),
                             gg.nn.Linear(8, 3))
    for p in model.parameters():
        p.data = p.data.astype(dtype)
    return model


def _run(make_model, make_opt, step_fn, batches, compiled, steps=10):
    model = make_model()
    opt = make_opt(model.parameters())
    fn = step_fn(model, opt)
    if compiled:
        fn = gg.function(fn)
    losses = [float(fn(*batch).item()) for batch in batches[:steps]]
    return model, opt, fn, losses


def _backward_step(loss_of):
    def factory(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = loss_of(model, x, y)
            loss.backward()
            opt.step()
            return loss

        return step

    return factory


def _grad_step(loss_of):
    def factory(model, opt):
        params = list(model.parameters())

        def step(x, y):
            loss = loss_of(model, x, y)
            grads = gg.grad(loss, params)
            for p, g in zip(params, grads):
                p.grad = g
            opt.step()
            return loss

        return step

    return factory


def _ce(model, x, y):
    return gg.cross_entropy(model(x), y)


def _batches(rng, dtype, n=10, batch=12):
    return [(gg.tensor(rng.standard_normal((batch, 6)).astype(dtype)), gg.tensor(rng.integers(0, 3, batch)))
            for _ in range(n)]


def _compare(make_model, opt_name, factory, batches, rtol, noise=None):
    """``noise``: {parameter name: index} of entries whose gradient is zero in exact arithmetic (an
    attention's key bias), so that an optimizer that normalizes gradients (Adam) steps on rounding
    noise, which differs with the order of the products' sums: their values are not compared, their
    gradients are checked to be that noise."""
    make_opt = lambda params: _make_optimizer(opt_name, params)  # noqa: E731
    m_e, _, _, losses_e = _run(make_model, make_opt, factory, batches, compiled=False)
    m_c, _, fn, losses_c = _run(make_model, make_opt, factory, batches, compiled=True)
    assert fn.trace_count == 1
    assert_close(losses_c, losses_e, rtol)
    for (name, pc), pe in zip(m_c.named_parameters(), m_e.parameters()):
        assert pc.dtype == pe.dtype
        if noise and name in noise:
            for p in (pc, pe):
                assert np.abs(p.grad.numpy()[noise[name]]).max() < 1e-6
            keep = np.ones(pc.shape, bool)
            keep[noise[name]] = False
            assert_close(pc.numpy()[keep], pe.numpy()[keep], rtol)
            continue
        assert_close(pc.numpy(), pe.numpy(), rtol)
        assert pc.grad is not None and not pc.grad.is_symbolic
        assert_close(pc.grad.numpy(), pe.grad.numpy(), rtol)
    return m_c, m_e


@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adamw", "sgd_dampening", "rmsprop", "adagrad"])
@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-6), ("float32", 1e-4)])
def test_mlp_training_backward(opt_name, dtype, rtol):
    batches = _batches(np.random.default_rng(1), dtype)
    _compare(lambda: _mlp(0, dtype), opt_name, _backward_step(_ce), batches, rtol)


@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adamw"])
@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-6), ("float32", 1e-4)])
def test_mlp_training_with_gg_grad(opt_name, dtype, rtol):
    batches = _batches(np.random.default_rng(2), dtype)
    _compare(lambda: _mlp(0, dtype), opt_name, _grad_step(_ce), batches, rtol)


def test_cnn_training(float64):
    def make():
        gg.manual_seed(3)
        return gg.nn.Sequential(gg.nn.Conv2d(1, 4, 3, padding=1), gg.nn.ReLU(), gg.nn.MaxPool2d(2),
                                gg.nn.Conv2d(4, 6, 3, padding=1), gg.nn.ReLU(), gg.nn.AvgPool2d(2),
                                gg.nn.Flatten(), gg.nn.Linear(6 * 2 * 2, 3))

    rng = np.random.default_rng(3)
    batches = [(gg.tensor(rng.standard_normal((5, 1, 8, 8))), gg.tensor(rng.integers(0, 3, 5))) for _ in range(10)]
    _compare(make, "adam", _backward_step(_ce), batches, 1e-6)


def _flat_ce(model, x, y):
    logits = model(x) if not isinstance(x, tuple) else model(*x)
    return gg.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def test_lstm_lm_training():
    bench = _bench()
    rng = np.random.default_rng(4)

    def make():
        gg.manual_seed(4)
        return bench.lstm_lm(gg.nn)

    batches = [(gg.tensor(rng.integers(0, 65, (3, 8))), gg.tensor(rng.integers(0, 65, (3, 8)))) for _ in range(10)]
    _compare(make, "adam", _backward_step(_flat_ce), batches, 1e-4)


def test_small_transformer_training():
    bench = _bench()
    rng = np.random.default_rng(5)
    T = 8
    mask = gg.tensor(np.triu(np.full((T, T), -np.inf, np.float32), 1))
    positions = gg.tensor(np.broadcast_to(np.arange(T), (2, T)).copy())

    def make():
        gg.manual_seed(5)
        return bench.gpt(gg.nn, mask)

    def loss_of(model, tokens, y):
        logits = model(tokens, positions)
        return gg.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    batches = [(gg.tensor(rng.integers(0, 65, (2, T))), gg.tensor(rng.integers(0, 65, (2, T)))) for _ in range(10)]
    key_bias = {f"blocks.{i}.self_attn.in_proj_bias": slice(128, 256) for i in range(2)}
    _compare(make, "adamw", _backward_step(loss_of), batches, 1e-4, noise=key_bias)


def test_eager_steps_after_compiled_steps_continue(float64):
    """Compiled steps update the real parameters and optimizer state; eager steps continue from them."""
    batches = _batches(np.random.default_rng(6), "float64", n=12)
    for opt_name in ("sgd", "adam", "adagrad"):
        make_opt = lambda params: _make_optimizer(opt_name, params)  # noqa: E731
        m_e, opt_e, step_e, _ = _run(lambda: _mlp(0, "float64"), make_opt, _backward_step(_ce), batches,
                                     compiled=False, steps=0)
        m_c, opt_c, step_c, _ = _run(lambda: _mlp(0, "float64"), make_opt, _backward_step(_ce), batches,
                                     compiled=False, steps=0)
        compiled = gg.function(step_c)
        for i, batch in enumerate(batches):
            expected = float(step_e(*batch).item())
            got = float((compiled if i % 4 < 2 else step_c)(*batch).item())  # alternate compiled / eager
            assert_close(got, expected, 1e-9)
        for pc, pe in zip(m_c.parameters(), m_e.parameters()):
            assert_close(pc.numpy(), pe.numpy(), 1e-9)
        state_c, state_e = opt_c.state_dict(), opt_e.state_dict()
        for idx, entry in state_e["state"].items():
            for key, value in entry.items():
                if key == "step":
                    assert state_c["state"][idx][key] == value and isinstance(state_c["state"][idx][key], int)
                else:
                    assert_close(state_c["state"][idx][key], value, 1e-9)
        assert compiled.trace_count == 1


def test_scheduler_changes_the_learning_rate_of_compiled_steps(float64):
    batches = _batches(np.random.default_rng(7), "float64")
    results = []
    for compiled in (False, True):
        model = _mlp(0, "float64")
        opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = gg.optim.StepLR(opt, step_size=2, gamma=0.5)
        step = _backward_step(_ce)(model, opt)
        fn = gg.function(step) if compiled else step
        losses = []
        for batch in batches:
            losses.append(float(fn(*batch).item()))
            sched.step()
        results.append(losses)
        if compiled:
            assert fn.trace_count == 1
    assert_close(results[1], results[0], 1e-9)


def test_grad_after_compiled_call_equals_eager_gradient(float64):
    model = _mlp(0, "float64")
    x, y = _batches(np.random.default_rng(8), "float64", n=1)[0]

    @gg.function
    def loss_and_grads(x, y):
        for p in model.parameters():
            p.grad = None
        loss = _ce(model, x, y)
        loss.backward()
        return loss

    loss = loss_and_grads(x, y)
    compiled_grads = [p.grad.numpy().copy() for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    eager_loss = _ce(model, x, y)
    eager_loss.backward()
    assert_close(loss.numpy(), eager_loss.numpy(), 1e-12)
    for g, p in zip(compiled_grads, model.parameters()):
        assert_close(g, p.grad.numpy(), 1e-12)
    # a second call gives the same gradient again (no accumulation across calls: the function zeroes)
    loss_and_grads(x, y)
    for g, p in zip(compiled_grads, model.parameters()):
        assert_close(p.grad.numpy(), g, 1e-12)


def test_no_symbolic_grad_leaks_after_tracing(float64):
    model = _mlp(0, "float64")
    opt = gg.optim.Adam(model.parameters(), lr=1e-2)
    step = gg.function(_backward_step(_ce)(model, opt))
    x, y = _batches(np.random.default_rng(9), "float64", n=1)[0]
    step.concrete(x, y)  # trace only
    for p in model.parameters():
        assert p.grad is None or not p.grad.is_symbolic
    for state in opt.state.values():
        for value in state.values():
            assert not (isinstance(value, gg.Tensor) and value.is_symbolic)
    step(x, y)
    for p in model.parameters():
        assert p.grad is not None and not p.grad.is_symbolic


def test_accumulated_gradients_are_fed(float64):
    """A gradient already in .grad when the function runs is added to, as eagerly."""
    w = gg.nn.Parameter(gg.tensor([1.0, 2.0]))

    def f(x):
        (w * x).sum().backward()
        return w.grad * 1.0

    compiled = gg.function(f)
    w.grad = gg.tensor([10.0, 10.0])
    out = compiled(gg.tensor([1.0, 3.0]))
    assert_close(out.numpy(), [11.0, 13.0], 0)
    assert_close(w.grad.numpy(), [11.0, 13.0], 0)
    out = compiled(gg.tensor([1.0, 1.0]))
    assert_close(w.grad.numpy(), [12.0, 14.0], 0)


def test_reads_after_an_update_see_the_new_value(float64):
    model = _mlp(0, "float64")
    opt = gg.optim.SGD(model.parameters(), lr=0.1)
    x, y = _batches(np.random.default_rng(10), "float64", n=1)[0]

    def step(x, y):
        opt.zero_grad()
        loss = _ce(model, x, y)
        loss.backward()
        opt.step()
        return loss, _ce(model, x, y)  # the loss after the update

    m2 = _mlp(0, "float64")
    opt2 = gg.optim.SGD(m2.parameters(), lr=0.1)
    before_e, after_e = _backward_step(_ce)(m2, opt2)(x, y), _ce(m2, x, y)
    before_c, after_c = gg.function(step)(x, y)
    assert_close(before_c.numpy(), before_e.numpy(), 1e-10)
    assert_close(after_c.numpy(), after_e.numpy(), 1e-10)
    assert float(after_c.item()) < float(before_c.item())


def test_dropout_models():
    def make():
        gg.manual_seed(11)
        return gg.nn.Sequential(gg.nn.Linear(6, 16), gg.nn.ReLU(), gg.nn.Dropout(0.3), gg.nn.Linear(16, 3))

    batches = _batches(np.random.default_rng(11), "float32")
    # eval mode: dropout is the identity, compiled == eager
    def eval_step(model, opt):
        model.eval()
        return _backward_step(_ce)(model, opt)

    _compare(make, "adam", eval_step, batches, 1e-4)
    # train mode: it runs (random streams differ between eager and compiled)
    model = make()
    model.train()
    opt = gg.optim.Adam(model.parameters(), lr=1e-2)
    step = gg.function(_backward_step(_ce)(model, opt))
    losses = [float(step(*b).item()) for b in batches]
    assert all(np.isfinite(losses)) and step.trace_count == 1


def test_calling_inside_another_trace_inlines():
    inner = gg.function(lambda x: x * 2)
    outer = gg.function(lambda x: inner(x) + 1)
    assert_close(outer(gg.tensor([1.0])).numpy(), [3.0], 0)
    assert inner.trace_count == 0 and outer.trace_count == 1


def test_method_decorator():
    class Net(gg.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = gg.nn.Linear(2, 2)

        @gg.function
        def predict(self, x):
            return self.fc(x)

    a, b = Net(), Net()
    x = gg.randn(3, 2)
    assert_close(a.predict(x).numpy(), a.fc(x).numpy(), 1e-6)
    assert_close(b.predict(x).numpy(), b.fc(x).numpy(), 1e-6)
    assert Net.predict.trace_count == 2  # one per instance


def test_zero_grad_to_zeros_inside_a_trace(float64):
    def factory(model, opt):
        def step(x, y):
            opt.zero_grad(set_to_none=False)
            loss = _ce(model, x, y)
            loss.backward()
            opt.step()
            return loss

        return step

    batches = _batches(np.random.default_rng(12), "float64")
    _compare(lambda: _mlp(0, "float64"), "adam", factory, batches, 1e-6)


def test_in_place_parameter_updates_under_no_grad_become_assigns():
    w = gg.Variable(np.array([1.0, 2.0]), name="w")
    params = [w]

    @gg.function
    def step(x):
        for p in params:
            p.grad = None
        loss = (w * x).sum()
        loss.backward()
        with gg.no_grad():
            for p in params:
                p -= p.grad * 0.5  # an in-place eager update: an assign node when traced
        return loss

    x = gg.tensor(np.array([2.0, 4.0]))
    step(x)
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])
    step(x)
    np.testing.assert_allclose(w.numpy(), [-1.0, -2.0])


def test_compiled_batchnorm_training_updates_running_statistics_like_eager():
    x = gg.tensor(np.random.default_rng(3).standard_normal((16, 4)).astype(np.float32))
    y = gg.tensor(np.random.default_rng(4).integers(0, 2, 16))
    results = []
    for compiled in (False, True):
        gg.manual_seed(0)
        model = gg.nn.Sequential(gg.nn.Linear(4, 8), gg.nn.BatchNorm1d(8), gg.nn.ReLU(), gg.nn.Linear(8, 2))
        opt = gg.optim.SGD(model.parameters(), lr=0.1)

        def step(xb, yb):
            opt.zero_grad()
            loss = gg.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss

        run = gg.function(step) if compiled else step
        losses = [run(x, y).item() for _ in range(5)]
        bn = model[1]
        results.append((losses, bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                        int(bn.num_batches_tracked.item())))
    (l0, m0, v0, n0), (l1, m1, v1, n1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    np.testing.assert_allclose(m1, m0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v1, v0, rtol=1e-5, atol=1e-6)
    assert n0 == n1 == 5
