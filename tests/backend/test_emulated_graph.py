"""Graph mode and compiled plans on the emulated device (and on ``cuda`` where CuPy sees a GPU).

A graph is built on the host; a Session runs it on the device of its feeds and variables: the
compiler's constants are moved there, fused kernels run through ``xp``, and fetched values stay on
the device. ``gg.function`` returns tensors on the device and leaves device gradients in ``.grad``.
The strict emulated device raises wherever a host array meets a device array, so these tests pass
only when nothing leaks; every result is also compared with the CPU's. ``pytest -k emulated``
selects them."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.backend import emulated
from graphgrad.graph.rewrite.fuse import FusedElementwise
from tests.backend.test_emulated_device import DEVICES, TOLERANCE
from tests.ops.op_table import ROWS


def _on(value, device) -> bool:
    """Whether a fetched value (or a tensor) lives on ``device``."""
    if isinstance(value, gg.Tensor):
        return str(value.device).startswith(device)
    return gg.backend.device_of(value).startswith(device)


def _host(value):
    return gg.backend.to_numpy(value.data if isinstance(value, gg.Tensor) else value)


def _check_results(device_values, cpu_values, device, rtol, atol=None):
    assert len(device_values) == len(cpu_values)
    for d, c in zip(device_values, cpu_values):
        assert _on(d, device), f"a result came back on {gg.backend.device_of(d)}, not {device}"
        np.testing.assert_allclose(_host(d), _host(c), rtol=rtol, atol=rtol if atol is None else atol)


# ---- a static graph trained with minimize ------------------------------------------------------------
def _regression(device, optimizer):
    """A linear regression built as a graph (Variables made on ``device``) and trained by Session.run
    with device feeds; returns the fetched losses, the variables and the session's fetch types."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    graph = gg.Graph()
    with graph.as_default(), gg.device(device):
        x = gg.placeholder(gg.float32, (None, 3), name="x")
        y = gg.placeholder(gg.float32, (None, 1), name="y")
        w = gg.Variable(np.zeros((3, 1), np.float32), name="w")
        b = gg.Variable(np.zeros((1,), np.float32), name="b")
        loss = ((x @ w + b - y) ** 2).mean()
        train = optimizer().minimize(loss)
    feed = {x: gg.tensor(xs, device=device), y: gg.tensor(ys, device=device)}
    losses = []
    with gg.Session(graph) as sess:
        for _ in range(5):
            _, value = sess.run([train, loss], feed)
            losses.append(value)
    return losses, gg.global_variables(graph)


_GRAPH_OPTIMIZERS = {
    "sgd": lambda: gg.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: gg.train.MomentumOptimizer(0.05, momentum=0.9),
    "adam": lambda: gg.train.AdamOptimizer(0.05),
    "rmsprop": lambda: gg.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(_GRAPH_OPTIMIZERS))
def test_emulated_graph_regression_minimize_equals_cpu(name, device):
    cpu_losses, cpu_vars = _regression("cpu", _GRAPH_OPTIMIZERS[name])
    dev_losses, dev_vars = _regression(device, _GRAPH_OPTIMIZERS[name])
    assert isinstance(cpu_losses[0], np.float32)  # the CPU fetches NumPy scalars, as TensorFlow does
    _check_results(dev_losses, cpu_losses, device, rtol=max(TOLERANCE[device], 1e-6))
    assert dev_losses[-1] < dev_losses[0]
    assert [v.base_name for v in dev_vars] == [v.base_name for v in cpu_vars]  # w, b and the slots
    _check_results(dev_vars, cpu_vars, device, rtol=max(TOLERANCE[device], 1e-6))


# ---- symbolic gradients of op-table rows ----------------------------------------------------------------
#: every third row that runs in graph mode: each family of ops is represented (the whole table runs in
#: a few seconds more, and does so cleanly)
GRAPH_ROWS = [r for r in ROWS if r.graph_error is None][::3]


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _graph_row(row, device, values):
    """The row built on placeholders, its weighted outputs differentiated with ``gg.gradients``, and
    both run by a Session fed on ``device``; returns the fetched values."""
    diff = row.differentiable() if row.grad else []
    graph, feed, inputs = gg.Graph(), {}, []
    with graph.as_default(), gg.device(device):  # constants the row makes are made on the device
        for v in values:
            if isinstance(v, np.ndarray):
                p = gg.placeholder(v.dtype, v.shape)
                feed[p] = gg.tensor(v, device=device)
                inputs.append(p)
            else:
                inputs.append(v)
        outs = [o for o in _outputs(row.fn(*inputs)) if isinstance(o, gg.Tensor)]
        grads = []
        roots = [o for o in outs if o.requires_grad and o.dtype.kind == "f" and o.shape is not None
                 and None not in o.shape]  # a shape known only when run (masked_select) gets no seed
        if diff and roots:
            rng = np.random.default_rng(7)
            seeds = [gg.tensor(rng.standard_normal(o.shape).astype(o.dtype), device=device) for o in roots]
            grads = gg.gradients(roots, [inputs[i] for i in diff], grad_ys=seeds)
    # outputs and gradients that are graph tensors (a row may hand back an input, or a seed, as such)
    fetches = [t for t in outs + list(grads) if t is not None and t.data is None]
    gg.manual_seed(0)  # rows with random ops draw the same numbers on both devices
    with gg.device(device):  # a graph without feeds runs on the default device
        return gg.Session(graph).run(fetches, feed)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("row", GRAPH_ROWS, ids=[r.name for r in GRAPH_ROWS])
def test_emulated_graph_gradients_of_op_table_row_equal_cpu(row, device):
    values = row.make_inputs("float64" if "float64" in row.dtypes else row.dtypes[0])
    cpu = _graph_row(row, "cpu", values)
    dev = _graph_row(row, device, values)
    _check_results(dev, cpu, device, rtol=TOLERANCE[device])


# ---- gg.function: whole training steps ------------------------------------------------------------------
_MODELS = {
    "mlp": (lambda nn: nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3)),
            (8, 6), "Adam"),
    "cnn": (lambda nn: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Flatten(), nn.Linear(4 * 4 * 4, 3)), (4, 1, 8, 8), "SGD"),
}


def _compiled_training(name, device, steps=4):
    make, shape, optimizer = _MODELS[name]
    gg.manual_seed(0)
    model = make(gg.nn).to(device)
    options = {"momentum": 0.9} if optimizer == "SGD" else {}
    opt = getattr(gg.optim, optimizer)(model.parameters(), lr=0.05, **options)

    @gg.function
    def train_step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = gg.nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, logits

    rng = np.random.default_rng(0)
    x = gg.tensor(rng.standard_normal(shape).astype(np.float32), device=device)
    y = gg.tensor(rng.integers(0, 3, shape[0]), device=device)
    results = [train_step(x, y) for _ in range(steps)]
    return results, model, train_step


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(_MODELS))
def test_emulated_compiled_training_step_equals_cpu(name, device):
    cpu_results, cpu_model, _ = _compiled_training(name, "cpu")
    dev_results, dev_model, step = _compiled_training(name, device)
    assert step.trace_count == 1
    for (dev_loss, dev_logits), (cpu_loss, cpu_logits) in zip(dev_results, cpu_results):
        _check_results([dev_loss, dev_logits], [cpu_loss, cpu_logits], device, rtol=1e-5, atol=1e-6)
    assert float(_host(dev_results[-1][0])) < float(_host(dev_results[0][0]))
    for d, c in zip(dev_model.parameters(), cpu_model.parameters()):
        _check_results([d, d.grad], [c, c.grad], device, rtol=1e-5, atol=1e-6)
    for d, c in zip(dev_model.buffers(), cpu_model.buffers()):  # batch-norm statistics
        _check_results([d], [c], device, rtol=1e-5, atol=1e-6)
    fused = [s[3].op for plan in step.concrete(*_example(name, device)).session._plans.values()
             for s in plan.steps if isinstance(s[3].op, FusedElementwise)]
    assert fused, "the compiled step should run fused kernels"


def _example(name, device):
    _, shape, _ = _MODELS[name]
    return gg.zeros(*shape, device=device), gg.zeros(shape[0], dtype="int64", device=device)


# ---- the optimizer passes, each exercised on the device ---------------------------------------------------
def _passes_graph(device):
    """A graph that every pass changes: a constant from a device tensor to fold, a multiply chain to
    combine, a repeated subexpression to merge, elementwise chains to fuse (with a matmul head),
    dead nodes to prune and dying buffers to reuse."""
    rng = np.random.default_rng(1)
    graph = gg.Graph()
    with graph.as_default(), gg.device(device):
        x = gg.placeholder(gg.float32, (4, 8), name="x")
        w = gg.Variable(rng.standard_normal((8, 8)).astype(np.float32), name="w")
        c = gg.tensor(np.linspace(-1, 1, 8, dtype=np.float32), device=device)
        k = gg.exp(c) * 0.5                                   # folded at compile time
        scaled = x * 2.0 * 3.0 * 4.0                          # combined into one multiply by 24
        a = gg.tanh(x @ w + k)
        b = gg.tanh(x @ w + k)                                # merged with a
        h = gg.relu(a) * b + scaled - 1.0                     # fused (matmul + elementwise)
        s = gg.sum(h, axis=0)
        out = gg.sigmoid(h * 0.5 + s)
        loss = out.sum()
        (gx,) = gg.gradients(loss, [x])
    return graph, x, [out, loss, gx]


@pytest.mark.parametrize("device", DEVICES)
def test_emulated_optimizer_passes_run_on_the_device(device):
    xs = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    graph, x, fetches = _passes_graph("cpu")
    cpu = gg.Session(graph).run(fetches, {x: xs})
    graph, x, fetches = _passes_graph(device)
    plain = gg.Session(graph, optimize=0).run(fetches, {x: gg.tensor(xs, device=device)})
    sess = gg.Session(graph)
    dev = sess.run(fetches, {x: gg.tensor(xs, device=device)})
    again = sess.run(fetches, {x: gg.tensor(xs, device=device)})  # the cached plan, constants already moved
    _check_results(dev, cpu, device, rtol=1e-6)
    _check_results(again, cpu, device, rtol=1e-6)
    _check_results(dev, plain, device, rtol=1e-6)
    (plan,) = sess._plans.values()
    fired = {rule for record in plan.program.log for rule in record.fired}
    for rule in ("fold_constant_node", "combine_constant_factors", "merge_common_subexpression",
                 "fuse_elementwise", "remove_dead_node"):
        assert rule in fired, f"{rule} did not fire: {sorted(fired)}"
    assert any(isinstance(s[3].op, FusedElementwise) for s in plan.steps)
    assert plan.memory["in_place_steps"] >= 1  # a fused kernel wrote into a dying buffer
    if device == "emulated":  # the folded constants went to the device with the plan
        assert any(isinstance(v, emulated.EmulatedArray) for v in plan.templates["emulated"])


@pytest.mark.parametrize("device", DEVICES)
def test_emulated_compiled_function_of_a_multiply_chain_is_one_kernel(device):
    @gg.function
    def f(x):
        return gg.tanh(x * 2.0 * 3.0 * 4.0 + 1.0) * x

    xs = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    got = f(gg.tensor(xs, device=device))
    assert got.device == gg.tensor(xs, device=device).device
    np.testing.assert_allclose(got.numpy(), np.tanh(xs * 24.0 + 1.0) * xs, rtol=1e-6)
    program = f.concrete(gg.tensor(xs, device=device)).program()
    fired = {rule for record in program.log for rule in record.fired}
    assert {"combine_constant_factors", "fuse_elementwise"} <= fired
    ops = [type(n.op).__name__ for n in program.nodes()]
    # one kernel, reading the input and the combined factor (24: a host constant the plan moved to the device)
    assert sorted(ops) == ["Const", "Fed", "FusedElementwise"], ops


# ---- what a Session returns, and where it runs ------------------------------------------------------------
def test_emulated_session_device_rules():
    graph = gg.Graph()
    with graph.as_default(), gg.device("emulated"):
        x = gg.placeholder(gg.float32, (None, 2), name="x")
        lr = gg.placeholder(gg.float32, (), name="lr")
        w = gg.Variable(np.ones((2, 1), np.float32), name="w")
        y = (x @ w * lr).sum()
        c = gg.constant([1.0, 2.0]) * 3.0
    sess = gg.Session(graph)
    value = sess.run(y, {x: gg.ones(3, 2, device="emulated"), lr: 0.5})  # a Python number joins the device
    assert isinstance(value, emulated.EmulatedArray) and value.shape == () and float(value) == 3.0
    assert float(sess.run(y, {x: [[1.0, 2.0]], lr: 0.5})) == 1.5  # so does a nested list
    with pytest.raises(gg.DeviceError, match=r"variable 'w' on emulated.*'x' on cpu"):
        sess.run(y, {x: np.ones((3, 2), np.float32), lr: 0.5})  # a host array for a device graph
    host = sess.run(c)  # no feeds, no variables: the default device, here the CPU
    assert isinstance(host, np.ndarray)
    with gg.device("emulated"):
        on_device = sess.run(c)
    assert isinstance(on_device, emulated.EmulatedArray)
    np.testing.assert_array_equal(on_device.get(), host)
    with gg.detect_anomaly():  # the step-by-step interpreter runs on the device too
        checked = sess.run(y, {x: gg.ones(3, 2, device="emulated"), lr: 0.5})
    assert isinstance(checked, emulated.EmulatedArray)
    with sess.as_default():
        assert isinstance(y.eval({x: gg.ones(1, 2, device="emulated"), lr: 2.0}), emulated.EmulatedArray)


def test_emulated_assign_and_initializer_runs_keep_variables_on_the_device():
    """A run that only writes variables (an initializer reads none) runs on their device."""
    graph = gg.Graph()
    with graph.as_default(), gg.device("emulated"):
        w = gg.Variable(np.ones((2, 2), np.float32), name="w")
        triple = w.assign(w * 3.0)
        init = gg.global_variables_initializer()
    sess = gg.Session(graph)
    sess.run(triple)
    assert w.device == "emulated" and float(w.data.sum()) == 12.0
    sess.run(init)  # outside any gg.device block: the variable's device decides
    assert w.device == "emulated" and float(w.data.sum()) == 4.0


# ---- an imported ONNX model run without gradients (its compiled Session path) ---------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["cnn_ts", "lstm_ts", "gpt2_dynamo"])
def test_emulated_imported_onnx_model_runs_compiled_without_gradients(name, device):
    """Under no_grad an imported module runs the graph it converted once per signature through a
    Session: outputs on the device, equal to PyTorch's."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "io", "onnx", "torch_models")
    with np.load(os.path.join(folder, name + ".npz")) as archive:
        data = dict(archive)
    net = gg.onnx.to_module(os.path.join(folder, name + ".onnx")).to(device)
    x = gg.tensor(data["x"], device=device)
    with gg.no_grad():
        first = net(x)
        again = net(x)  # the cached conversion and plan
    assert net.conversions == 1
    for y in (first, again):
        assert y.device == x.device
        np.testing.assert_allclose(y.numpy(), data["y"], rtol=1e-4, atol=1e-5)
