"""Recurrent layers: shapes of every configuration, float64 gradient checks of inputs, states and
parameters, state_dict round trips, dropout between layers, and graph mode against eager."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import graphgrad as gg

TOL = dict(rtol=1e-9, atol=1e-11)
LAYERS = {"RNN": gg.nn.RNN, "LSTM": gg.nn.LSTM, "GRU": gg.nn.GRU}


def _states(kind, out):
    """``(output, [h_n] or [h_n, c_n])`` of a layer's result."""
    output, state = out
    return output, (list(state) if kind == "LSTM" else [state])


def _initial(kind, shape, rng):
    def draw():
        return gg.tensor(rng.standard_normal(shape).astype("float32"))

    return (draw(), draw()) if kind == "LSTM" else draw()


def with_params(module, fn, n_inputs):
    """``f(*inputs, *params)`` that runs ``fn(module, *inputs)`` with the module's parameters replaced by
    the given tensors (so ``check_grad`` can differentiate them); the parameters are restored after."""
    names = [n for n, _ in module.named_parameters()]
    owners = []
    for name in names:
        *path, leaf = name.split(".")
        owner = module
        for p in path:
            owner = getattr(owner, p)
        owners.append((owner, leaf))

    def f(*args):
        inputs, params = args[:n_inputs], args[n_inputs:]
        saved = [owner._parameters[leaf] for owner, leaf in owners]
        for (owner, leaf), p in zip(owners, params):
            owner._parameters[leaf] = p
        try:
            return fn(module, *inputs)
        finally:
            for (owner, leaf), p in zip(owners, saved):
                owner._parameters[leaf] = p

    return f, [p for _, p in module.named_parameters()]


# ---- shapes ---------------------------------------------------------------------------------------------
CONFIGS = list(itertools.product(LAYERS, (1, 2), (False, True), (False, True), (False, True), (False, True)))


@pytest.mark.parametrize("kind,layers,bidir,batch_first,init,unbatched", CONFIGS,
                         ids=[f"{k}-l{l}-{'bi' if b else 'uni'}-{'bf' if f else 'sf'}-{'h0' if i else 'noh0'}"
                              f"-{'unb' if u else 'bat'}" for k, l, b, f, i, u in CONFIGS])
def test_output_shapes(kind, layers, bidir, batch_first, init, unbatched):
    L, N, In, H = 4, 3, 5, 6
    D = 2 if bidir else 1
    m = LAYERS[kind](In, H, num_layers=layers, bidirectional=bidir, batch_first=batch_first)
    rng = np.random.default_rng(0)
    if unbatched:
        x, state_shape, out_shape = (L, In), (D * layers, H), (L, D * H)
    else:
        x = (N, L, In) if batch_first else (L, N, In)
        state_shape = (D * layers, N, H)
        out_shape = (N, L, D * H) if batch_first else (L, N, D * H)
    hx = _initial(kind, state_shape, rng) if init else None
    output, states = _states(kind, m(gg.randn(*x), hx))
    assert output.shape == out_shape
    assert [s.shape for s in states] == [state_shape] * len(states)
    assert output.dtype == gg.float32


def test_parameter_names_and_init_range():
    m = gg.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    expected = []
    for layer in range(2):
        for suffix in ("", "_reverse"):
            expected += [f"{w}_l{layer}{suffix}" for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert list(m.state_dict()) == expected
    assert m.weight_ih_l0.shape == (16, 3) and m.weight_ih_l1.shape == (16, 8) and m.bias_hh_l1_reverse.shape == (16,)
    for p in m.parameters():
        assert np.abs(p.numpy()).max() <= 0.5
    assert gg.nn.GRU(3, 4).weight_hh_l0.shape == (12, 4)
    assert gg.nn.RNN(3, 4, bias=False).state_dict().keys() == {"weight_ih_l0", "weight_hh_l0"}
    assert gg.nn.LSTMCell(3, 4).weight_ih.shape == (16, 3)


@pytest.mark.parametrize("cell,gates", [(gg.nn.RNNCell, 1), (gg.nn.LSTMCell, 4), (gg.nn.GRUCell, 3)])
def test_cell_shapes(cell, gates):
    m = cell(3, 5)
    assert m.weight_hh.shape == (gates * 5, 5)
    for shape, hshape in (((2, 3), (2, 5)), ((3,), (5,))):
        out = m(gg.randn(*shape))
        outs = out if isinstance(out, tuple) else (out,)
        assert all(o.shape == hshape for o in outs)
        state = tuple(gg.randn(*hshape) for _ in outs) if len(outs) == 2 else gg.randn(*hshape)
        out = m(gg.randn(*shape), state)
        assert all(o.shape == hshape for o in (out if isinstance(out, tuple) else (out,)))


def test_zero_initial_state_equals_no_initial_state():
    rng = np.random.default_rng(1)
    x = gg.tensor(rng.standard_normal((4, 2, 3)))
    for kind, cls in LAYERS.items():
        m = cls(3, 4, num_layers=2, bidirectional=True).double()
        zeros = gg.zeros(4, 2, 4, dtype="float64")
        a = _states(kind, m(x))
        b = _states(kind, m(x, (zeros, zeros) if kind == "LSTM" else zeros))
        np.testing.assert_allclose(a[0].numpy(), b[0].numpy(), **TOL)
        for s, t in zip(a[1], b[1]):
            np.testing.assert_allclose(s.numpy(), t.numpy(), **TOL)


def test_layer_matches_cell_loop():
    """A one-layer LSTM/GRU/RNN is its cell applied step by step with the same weights."""
    rng = np.random.default_rng(2)
    x = gg.tensor(rng.standard_normal((5, 2, 3)))
    for kind, cell_cls in (("LSTM", gg.nn.LSTMCell), ("GRU", gg.nn.GRUCell), ("RNN", gg.nn.RNNCell)):
        layer = LAYERS[kind](3, 4).double()
        cell = cell_cls(3, 4).double()
        cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
        state = None
        outs = []
        for t in range(5):
            state = cell(x[t], state)
            outs.append(state[0] if kind == "LSTM" else state)
        output, _ = layer(x)
        np.testing.assert_allclose(output.numpy(), gg.stack(outs).numpy(), **TOL)


def test_bidirectional_reverse_direction_runs_backwards():
    """The reverse half of a bidirectional layer equals a forward layer on the time-reversed input."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 2, 3))
    bi = gg.nn.GRU(3, 4, bidirectional=True).double()
    fwd = gg.nn.GRU(3, 4).double()
    fwd.load_state_dict({k.replace("_reverse", ""): v for k, v in bi.state_dict().items() if "_reverse" in k})
    out, h = bi(gg.tensor(x))
    out_r, h_r = fwd(gg.tensor(x[::-1].copy()))
    np.testing.assert_allclose(out.numpy()[..., 4:], out_r.numpy()[::-1], **TOL)
    np.testing.assert_allclose(h.numpy()[1], h_r.numpy()[0], **TOL)


# ---- gradients ------------------------------------------------------------------------------------
GRAD_CASES = [("RNN", {}), ("RNN", {"nonlinearity": "tanh", "batch_first": True}), ("LSTM", {}),
              ("LSTM", {"batch_first": True}), ("GRU", {}), ("GRU", {"bias": False})]


@pytest.mark.parametrize("kind,extra", GRAD_CASES, ids=[f"{k}-{sorted(e)}" for k, e in GRAD_CASES])
def test_check_grad_inputs_states_and_parameters(kind, extra):
    gg.manual_seed(0)
    m = LAYERS[kind](2, 2, num_layers=2, bidirectional=True, **extra).double()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 2))  # (N=2, L=3, In) with batch_first, else (L=2, N=3, In)
    batch = 2 if extra.get("batch_first") else 3
    states = [rng.standard_normal((4, batch, 2)) for _ in range(2 if kind == "LSTM" else 1)]

    def run(module, x, *s):
        hx = tuple(s) if kind == "LSTM" else s[0]
        output, rest = _states(kind, module(x, hx))
        return (output, *rest)

    f, params = with_params(m, run, 1 + len(states))
    gg.check_grad(f, gg.tensor(x), *[gg.tensor(s) for s in states], *params, max_elements=24)


@pytest.mark.parametrize("cell", [gg.nn.RNNCell, gg.nn.LSTMCell, gg.nn.GRUCell])
def test_check_grad_cells_second_order(cell):
    gg.manual_seed(1)
    m = cell(3, 2).double()
    rng = np.random.default_rng(5)
    n_states = 2 if cell is gg.nn.LSTMCell else 1
    states = [gg.tensor(rng.standard_normal((2, 2))) for _ in range(n_states)]

    def run(module, x, *s):
        return module(x, tuple(s) if n_states == 2 else s[0])

    f, params = with_params(m, run, 1 + n_states)
    gg.check_grad(f, gg.tensor(rng.standard_normal((2, 3))), *states, *params, order=2)


def test_gradients_reach_every_parameter():
    m = gg.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    out, (h, c) = m(gg.randn(5, 2, 3))
    (out.sum() + h.sum() + c.sum()).backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name
        assert np.abs(p.grad.numpy()).sum() > 0, name


# ---- state, modes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(LAYERS))
def test_state_dict_round_trip(kind):
    a = LAYERS[kind](3, 4, num_layers=2, bidirectional=True)
    b = LAYERS[kind](3, 4, num_layers=2, bidirectional=True)
    x = gg.randn(5, 2, 3)
    assert not np.allclose(_states(kind, a(x))[0].numpy(), _states(kind, b(x))[0].numpy())
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(_states(kind, a(x))[0].numpy(), _states(kind, b(x))[0].numpy())
    state = a.state_dict()
    state["weight_hh_l1"] = gg.zeros(3, 3)
    with pytest.raises(gg.ShapeError):
        b.load_state_dict(state)


def test_dropout_between_layers_only_in_training():
    m = gg.nn.LSTM(3, 4, num_layers=3, dropout=0.5).double()
    ref = gg.nn.LSTM(3, 4, num_layers=3).double()
    ref.load_state_dict(m.state_dict())
    x = gg.tensor(np.random.default_rng(6).standard_normal((4, 2, 3)))
    gg.manual_seed(0)
    train1, train2 = m(x)[0].numpy(), m(x)[0].numpy()
    assert not np.allclose(train1, train2)
    assert not np.allclose(train1, ref(x)[0].numpy())
    m.eval()
    np.testing.assert_allclose(m(x)[0].numpy(), ref(x)[0].numpy(), **TOL)
    np.testing.assert_allclose(m(x)[0].numpy(), m(x)[0].numpy(), **TOL)
    one = gg.nn.GRU(3, 4, num_layers=1, dropout=0.9)  # no layer after the only one: no dropout
    np.testing.assert_array_equal(one(x.astype("float32"))[0].numpy(), one(x.astype("float32"))[0].numpy())


def test_errors_are_actionable():
    m = gg.nn.LSTM(3, 4)
    with pytest.raises(gg.ShapeError, match="input_size=3"):
        m(gg.randn(5, 2, 7))
    with pytest.raises(gg.ShapeError, match="initial state"):
        m(gg.randn(5, 2, 3), (gg.randn(1, 3, 4), gg.randn(1, 3, 4)))
    with pytest.raises(gg.ShapeError):
        m(gg.randn(3))
    with pytest.raises(ValueError):
        gg.nn.RNN(3, 4, nonlinearity="sigmoid")
    graph = gg.Graph()
    with graph.as_default(), pytest.raises(gg.ShapeError, match="sequence length"):
        gg.nn.RNN(3, 4)(gg.placeholder(gg.float32, (None, 2, 3)))  # the Elman RNN unrolls its loop


def test_repr():
    assert "num_layers=2" in repr(gg.nn.GRU(3, 4, num_layers=2)) and "LSTM(3, 4" in repr(gg.nn.LSTM(3, 4))


# ---- graph mode ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(LAYERS))
def test_graph_mode_matches_eager(kind):
    m = LAYERS[kind](3, 4, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(7)
    params = list(m.parameters())
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (5, None, 3))
        output, states = _states(kind, m(x))
        assert output.shape == (5, None, 8)
        loss = (output * output).sum() + sum(s.sum() for s in states)
        grads = gg.gradients(loss, [x] + params)
    sess = gg.Session(graph)
    for batch in (2, 3):
        xv = rng.standard_normal((5, batch, 3))
        got = sess.run([output] + states + grads, {x: xv})
        tx = gg.tensor(xv, requires_grad=True)
        e_out, e_states = _states(kind, m(tx))
        e_loss = (e_out * e_out).sum() + sum(s.sum() for s in e_states)
        expected = [e_out.numpy()] + [s.numpy() for s in e_states] + \
            [g.numpy() for g in gg.grad(e_loss, [tx] + params)]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)


def test_graph_mode_with_initial_state_and_batch_first():
    m = gg.nn.LSTM(3, 4, batch_first=True).double()
    rng = np.random.default_rng(8)
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (None, 5, 3))
        h0 = gg.placeholder(gg.float64, (1, None, 4))
        c0 = gg.placeholder(gg.float64, (1, None, 4))
        out, (h, c) = m(x, (h0, c0))
    xv, hv, cv = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 2, 4)), rng.standard_normal((1, 2, 4))
    got = gg.Session(graph).run([out, h, c], {x: xv, h0: hv, c0: cv})
    e_out, (e_h, e_c) = m(gg.tensor(xv), (gg.tensor(hv), gg.tensor(cv)))
    for g, e in zip(got, (e_out, e_h, e_c)):
        np.testing.assert_allclose(g, e.numpy(), **TOL)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_graph_mode_with_unknown_sequence_length(kind):
    """LSTM and GRU run as one sequence op, so neither the length nor the batch size need be known."""
    m = LAYERS[kind](3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (None, None, 3))
        output, states = _states(kind, m(x))
        assert output.shape == (None, None, 8)
        loss = (output * output).sum() + sum(s.sum() for s in states)
        grads = gg.gradients(loss, [x] + list(m.parameters()))
    sess = gg.Session(graph)
    rng = np.random.default_rng(9)
    for shape in ((2, 5, 3), (3, 1, 3)):
        xv = rng.standard_normal(shape)
        got = sess.run([output] + grads, {x: xv})
        tx = gg.tensor(xv, requires_grad=True)
        e_out, e_states = _states(kind, m(tx))
        e_loss = (e_out * e_out).sum() + sum(s.sum() for s in e_states)
        expected = [e_out.numpy()] + [g.numpy() for g in gg.grad(e_loss, [tx] + list(m.parameters()))]
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)


# ---- eager, graph and compiled agree ----------------------------------------------------------------------
class _LanguageModel(gg.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.embed = gg.nn.Embedding(11, 5)
        self.rnn = LAYERS[kind](5, 6, num_layers=2, bidirectional=True, batch_first=True)
        self.head = gg.nn.Linear(12, 11)

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


def _training_step(kind):
    gg.manual_seed(3)
    model = _LanguageModel(kind).double()
    opt = gg.optim.Adam(model.parameters(), lr=0.01)

    def step(tokens, targets):
        opt.zero_grad()
        logits = model(tokens)
        loss = gg.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    return model, step


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_compiled_training_step_matches_eager(kind):
    """A whole training step (embedding, a two-layer bidirectional LSTM/GRU, a linear head,
    cross-entropy, backward, Adam) compiled by gg.function follows the eager step: same losses,
    same parameters after three steps."""
    rng = np.random.default_rng(10)
    batches = [(gg.tensor(rng.integers(0, 11, (3, 7))), gg.tensor(rng.integers(0, 11, (3, 7)))) for _ in range(3)]
    eager_model, eager_step = _training_step(kind)
    compiled_model, step = _training_step(kind)
    compiled_step = gg.function(step)
    for tokens, targets in batches:
        a, b = eager_step(tokens, targets), compiled_step(tokens, targets)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-9)
    for (name, p), q in zip(eager_model.named_parameters(), compiled_model.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_gradients_agree_eager_session_compiled(kind):
    """Output and every gradient (input, initial states, parameters) of a recurrent layer: eager,
    a Session on placeholders, and gg.function give the same values."""
    m = LAYERS[kind](3, 4, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(11)
    xv = rng.standard_normal((5, 2, 3))
    sv = [rng.standard_normal((4, 2, 4)) for _ in range(2 if kind == "LSTM" else 1)]
    params = list(m.parameters())

    def loss_and_grads(x, *states):
        out, final = _states(kind, m(x, tuple(states) if kind == "LSTM" else states[0]))
        loss = (out * out).sum() + sum((s * s).sum() for s in final)
        return [loss] + list(gg.grad(loss, [x, *states] + params))

    eager_in = [gg.tensor(v, requires_grad=True) for v in [xv] + sv]
    eager = [t.numpy() for t in loss_and_grads(*eager_in)]
    graph = gg.Graph()
    with graph.as_default():
        holders = [gg.placeholder(gg.float64, v.shape) for v in [xv] + sv]
        fetches = loss_and_grads(*holders)
    session = gg.Session(graph).run(fetches, dict(zip(holders, [xv] + sv)))
    compiled = [t.numpy() for t in gg.function(loss_and_grads)(*[gg.tensor(v, requires_grad=True) for v in [xv] + sv])]
    assert len(eager) == len(session) == len(compiled) == 1 + len(sv) + 1 + len(params)
    for e, s, c in zip(eager, session, compiled):
        np.testing.assert_allclose(s, e, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(c, e, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_second_derivatives_eager_and_graph(kind):
    """Second derivatives through the fused sequence ops (their gradient ops differentiate the cell
    loop written with ordinary ops): checked by finite differences, and equal in eager mode and in
    a graph (``gg.gradients`` of ``gg.gradients``)."""
    m = LAYERS[kind](2, 2, bidirectional=True).double()
    rng = np.random.default_rng(12)
    xv = rng.standard_normal((3, 2, 2))
    f, params = with_params(m, lambda module, x: module(x)[0], 1)
    gg.check_grad(f, gg.tensor(xv), *params, order=2, max_elements=12)

    def penalty(x):  # a gradient penalty: |d loss / dx|^2, then differentiated again
        out = m(x)[0]
        (gx,) = gg.grad((out * out * out).sum(), [x], create_graph=True)
        return (gx * gx).sum()

    x = gg.tensor(xv, requires_grad=True)
    eager = [g.numpy() for g in gg.grad(penalty(x), [x] + params)]
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder(gg.float64, xv.shape)
        out = m(p)[0]
        (gx,) = gg.gradients((out * out * out).sum(), [p])
        second = gg.gradients((gx * gx).sum(), [p] + params)
    got = gg.Session(graph).run(second, {p: xv})
    for e, g in zip(eager, got):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def test_sequence_op_errors_are_actionable():
    x, w_ih, w_hh = gg.randn(5, 2, 3), gg.randn(16, 3), gg.randn(16, 4)
    with pytest.raises(gg.ShapeError, match="w_hh must be"):
        gg.lstm(x, w_ih, gg.randn(12, 4))
    with pytest.raises(gg.ShapeError, match="w_ih must be"):
        gg.lstm(x, gg.randn(16, 5), w_hh)
    with pytest.raises(gg.ShapeError, match="initial state"):
        gg.lstm(x, w_ih, w_hh, h0=gg.randn(3, 4), c0=gg.randn(3, 4))
    with pytest.raises(gg.ShapeError, match="x must be"):
        gg.gru(gg.randn(2, 3), gg.randn(12, 3), gg.randn(12, 4))
    with pytest.raises(gg.DTypeError, match="floating-point"):
        gg.gru(gg.tensor(np.ones((5, 2, 3), dtype=np.int64)), gg.randn(12, 3), gg.randn(12, 4))
    with pytest.raises(ValueError, match="h0 and c0"):
        gg.lstm(x, w_ih, w_hh, h0=gg.randn(2, 4))
