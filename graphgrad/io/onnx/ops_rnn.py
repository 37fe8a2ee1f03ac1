"""ONNX import converters: recurrent layers (RNN, GRU, LSTM).

An LSTM or GRU that PyTorch's semantics cover (default activations, no clipping, no peepholes, every
sequence full length, and for a GRU ``linear_before_reset=1``, which is what PyTorch exports) runs as
graphgrad's fused sequence op (``gg.lstm``/``gg.gru``: the recurrence forward and
backpropagation through time each in one op) after its gate blocks are reordered from ONNX's order
to PyTorch's. Every other form is unrolled over the time steps from graphgrad ops (:class:`_Recurrence`).
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import const_tensor, converter
from graphgrad.io.onnx.ops_nn import _known


# ---- recurrent layers ---------------------------------------------------------------------------------
def _activation(name: str, alpha, beta):
    """An ONNX RNN activation by name, as a function of a tensor (alpha/beta where it takes them)."""
    table = {
        "Sigmoid": lambda t: G.sigmoid(t),
        "Tanh": lambda t: G.tanh(t),
        "Relu": lambda t: G.relu(t),
        "Softsign": lambda t: t / (G.abs(t) + 1.0),
        "Softplus": lambda t: G.softplus(t),
        "HardSigmoid": lambda t: G.clip(t * alpha + beta, 0.0, 1.0),
        "LeakyRelu": lambda t: G.leaky_relu(t, alpha),
        "Elu": lambda t: G.elu(t, alpha),
        "Affine": lambda t: t * alpha + beta,
        "ScaledTanh": lambda t: G.tanh(t * beta) * alpha,
        "ThresholdedRelu": lambda t: t * (t > alpha).astype(t.dtype),
    }
    if name not in table:
        raise KeyError(name)
    return table[name]


_ACTIVATION_DEFAULTS = {"HardSigmoid": (0.2, 0.5), "LeakyRelu": (0.01, None), "Elu": (1.0, None),
                        "Affine": (1.0, 0.0), "ScaledTanh": (1.0, 1.0), "ThresholdedRelu": (1.0, None)}


def _activations(node, defaults: list, directions: int) -> list:
    """Per direction, the list of activation functions of a recurrent node."""
    names = node.attr("activations", None) or defaults * directions
    alphas = list(node.attr("activation_alpha", None) or [])
    betas = list(node.attr("activation_beta", None) or [])
    fns = []
    for name in names:
        alpha, beta = _ACTIVATION_DEFAULTS.get(name, (None, None))
        if name in _ACTIVATION_DEFAULTS and alphas:  # attribute values are consumed in order
            alpha = float(alphas.pop(0))
        if name in _ACTIVATION_DEFAULTS and beta is not None and betas:
            beta = float(betas.pop(0))
        try:
            fns.append(_activation(name, alpha, beta))
        except KeyError:
            raise node.unsupported(f"the recurrent activation {name!r}") from None
    per = len(defaults)
    return [fns[d * per:(d + 1) * per] for d in range(directions)]


def _reverse_within_lengths(x, lens):
    """``x`` (T, B, ...) with each batch column's first ``lens[b]`` steps reversed (the rest zero): a
    permutation matrix built from the lengths, so it works when they are only known at run time."""
    steps = int(x.shape[0])
    t = const_tensor(np.arange(steps).reshape(1, steps, 1), np.int64)
    s = const_tensor(np.arange(steps).reshape(1, 1, steps), np.int64)
    n = lens.astype(np.int64).reshape((-1, 1, 1))
    perm = G.logical_and(G.equal(s, n - 1 - t), G.less(t, n)).astype(x.dtype)  # (B, T, T)
    return G.einsum("bts,sb...->tb...", perm, x)


class _Recurrence:
    """What every ONNX recurrent layer shares: inputs in (T, B, ...) layout, the per-direction weights,
    initial states, sequence lengths, and the loop over time steps with masking."""

    def __init__(self, node, x, w, r, b, lens, h0, gates: int, defaults: list):
        self.node = node
        self.layout = int(node.attr("layout", 0))
        self.x = G.swapaxes(x, 0, 1) if self.layout else x
        self.hidden = int(node.attr("hidden_size", None) or r.shape[-1])
        direction = node.attr("direction", "forward")
        self.reverse_flags = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]
        self.w, self.r, self.b, self.gates = w, r, b, gates
        self.h0 = None if h0 is None else (G.swapaxes(h0, 0, 1) if self.layout else h0)
        self.lens = self._lengths(node, lens)
        self.acts = _activations(node, defaults, len(self.reverse_flags))
        clip = node.attr("clip", None)
        self.clip = None if clip is None else float(clip)

    def _lengths(self, node, lens):
        """None when every sequence has the full length (the common case; no masking)."""
        if lens is None:
            return None
        value = _known(node, 4)
        if value is not None and (np.asarray(value) == self.x.shape[0]).all():
            return None
        return lens

    def initial(self, state, d):
        if state is None:
            batch = int(self.x.shape[1])
            return const_tensor(np.zeros((batch, self.hidden)), self.x.dtype)
        return state[d]

    def clipped(self, t):
        return t if self.clip is None else G.clip(t, -self.clip, self.clip)

    def projections(self, d):
        """x_t @ W^T + (Wb + Rb) for every step at once: (T, B, gates*H); and R^T, Rb."""
        gh = self.gates * self.hidden
        wb = rb = None
        if self.b is not None:
            wb, rb = self.b[d, :gh], self.b[d, gh:]
        xw = G.matmul(self.x, self.w[d].T)
        return (xw if wb is None else xw + wb), self.r[d].T, rb

    def run(self, step, states0: list) -> tuple:
        """Run ``step(d, x_proj_t, states) -> states`` per direction; returns Y (T, dirs, B, H) and the
        final states, each (dirs, B, H), in the node's layout."""
        ys, finals = [], []
        for d, reverse in enumerate(self.reverse_flags):
            xw, rt, rb = self.projections(d)
            if reverse:
                xw = G.flip(xw, axis=0) if self.lens is None else _reverse_within_lengths(xw, self.lens)
            states = [self.initial(s, d) for s in states0]
            outs = []
            for t in range(int(self.x.shape[0])):
                new = step(d, xw[t], rt, rb, states)
                if self.lens is not None:  # finished sequences keep their state and output zeros
                    valid = G.less(t, self.lens).astype(self.x.dtype).reshape((-1, 1))
                    new = [n * valid + s * (1.0 - valid) for n, s in zip(new, states)]
                    outs.append(new[0] * valid)
                else:
                    outs.append(new[0])
                states = new
            y = G.stack(outs, axis=0)
            if reverse:
                y = G.flip(y, axis=0) if self.lens is None else _reverse_within_lengths(y, self.lens)
            ys.append(y)
            finals.append(states)
        return self.finish(ys, finals)

    def finish(self, ys: list, finals: list) -> tuple:
        """Y (T, dirs, B, H) and the final states (dirs, B, H) in the node's layout, from each
        direction's outputs (T, B, H) and list of final states (B, H)."""
        y = G.stack(ys, axis=1)
        finals = [G.stack([f[i] for f in finals], axis=0) for i in range(len(finals[0]))]
        if self.layout:
            y = G.transpose(y, (2, 0, 1, 3))
            finals = [G.swapaxes(f, 0, 1) for f in finals]
        return (y, *finals)

    def outputs(self, results: tuple):
        return tuple(results[:self.node.num_outputs])


# ---- the fused forms --------------------------------------------------------------------------------------
#: gate blocks of PyTorch's order, by their index in ONNX's: LSTM i, f, g, o from ONNX i, o, f, c;
#: GRU r, z, n from ONNX z, r, h
_LSTM_ORDER = (0, 2, 3, 1)
_GRU_ORDER = (1, 0, 2)


def _fusable(node, rec, defaults: list) -> bool:
    """Whether the layer computes what graphgrad's fused sequence ops compute: default activations,
    no clipping, every sequence full length."""
    names = node.attr("activations", None)
    if names is not None and list(names) != defaults * len(rec.reverse_flags):
        return False
    return (rec.clip is None and rec.lens is None and not node.has("activation_alpha")
            and not node.has("activation_beta"))


def _reordered(t, order: tuple, hidden: int):
    """``t`` (gates*H, ...) with its gate blocks of H rows in ``order``."""
    return G.concatenate([t[k * hidden:(k + 1) * hidden] for k in order], axis=0)


def _fused(rec, run, order: tuple, states0: list) -> tuple:
    """Each direction through ``run(x, w_ih, w_hh, b_ih, b_hh, states, reverse) -> (y, *finals)``
    (``gg.lstm``/``gg.gru``) with its weights in PyTorch's gate order."""
    gh = rec.gates * rec.hidden
    ys, finals = [], []
    for d, reverse in enumerate(rec.reverse_flags):
        w_ih, w_hh = _reordered(rec.w[d], order, rec.hidden), _reordered(rec.r[d], order, rec.hidden)
        b_ih = b_hh = None
        if rec.b is not None:
            b_ih, b_hh = _reordered(rec.b[d, :gh], order, rec.hidden), _reordered(rec.b[d, gh:], order, rec.hidden)
        states = [None if s is None else s[d] for s in states0]
        if any(s is not None for s in states):  # both states, or neither
            states = [rec.initial(s, d) if s is None else s[d] for s in states0]
        y, *last = run(rec.x, w_ih, w_hh, b_ih, b_hh, states, reverse)
        ys.append(y)
        finals.append(last)
    return rec.finish(ys, finals)


def _split(t, n: int, hidden: int) -> list:
    return [t[..., i * hidden:(i + 1) * hidden] for i in range(n)]


@converter("RNN")
def rnn(node, x, w, r, b=None, lens=None, h0=None):
    rec = _Recurrence(node, x, w, r, b, lens, h0, 1, ["Tanh"])

    def step(d, xw, rt, rb, states):
        pre = xw + G.matmul(states[0], rt)
        if rb is not None:
            pre = pre + rb
        return [rec.acts[d][0](rec.clipped(pre))]

    return rec.outputs(rec.run(step, [rec.h0]))


@converter("GRU")
def gru(node, x, w, r, b=None, lens=None, h0=None):
    rec = _Recurrence(node, x, w, r, b, lens, h0, 3, ["Sigmoid", "Tanh"])
    hidden, linear_before_reset = rec.hidden, bool(node.attr("linear_before_reset", 0))
    if linear_before_reset and _fusable(node, rec, ["Sigmoid", "Tanh"]):
        def run(x, w_ih, w_hh, b_ih, b_hh, states, reverse):
            return G.gru(x, w_ih, w_hh, b_ih, b_hh, states[0], reverse=reverse)

        return rec.outputs(_fused(rec, run, _GRU_ORDER, [rec.h0]))

    def step(d, xw, rt, rb, states):
        (h,), (f, g) = states, rec.acts[d]
        xz, xr, xh = _split(xw, 3, hidden)
        rz_w, rr_w, rh_w = _split(rt, 3, hidden)
        rbz, rbr, rbh = _split(rb, 3, hidden) if rb is not None else (0.0, 0.0, 0.0)
        z = f(rec.clipped(xz + G.matmul(h, rz_w) + rbz))
        reset = f(rec.clipped(xr + G.matmul(h, rr_w) + rbr))
        if linear_before_reset:
            cand = xh + reset * (G.matmul(h, rh_w) + rbh)
        else:
            cand = xh + G.matmul(reset * h, rh_w) + rbh
        cand = g(rec.clipped(cand))
        return [(1.0 - z) * cand + z * h]

    return rec.outputs(rec.run(step, [rec.h0]))


@converter("LSTM")
def lstm(node, x, w, r, b=None, lens=None, h0=None, c0=None, p=None):
    if node.attr("input_forget", 0):
        raise node.unsupported("input_forget=1")
    rec = _Recurrence(node, x, w, r, b, lens, h0, 4, ["Sigmoid", "Tanh", "Tanh"])
    hidden = rec.hidden
    if c0 is not None and rec.layout:
        c0 = G.swapaxes(c0, 0, 1)
    if p is None and _fusable(node, rec, ["Sigmoid", "Tanh", "Tanh"]):
        def run(x, w_ih, w_hh, b_ih, b_hh, states, reverse):
            return G.lstm(x, w_ih, w_hh, b_ih, b_hh, states[0], states[1], reverse=reverse)

        return rec.outputs(_fused(rec, run, _LSTM_ORDER, [rec.h0, c0]))

    def step(d, xw, rt, rb, states):
        (h, c), (f, g, act_h) = states, rec.acts[d]
        pre = xw + G.matmul(h, rt)
        if rb is not None:
            pre = pre + rb
        i, o, fg, cand = _split(pre, 4, hidden)
        if p is not None:  # peepholes: the cell state feeds the input, forget and output gates
            p_i, p_o, p_f = _split(p[d], 3, hidden)
            i, fg = i + p_i * c, fg + p_f * c
        i, fg = f(rec.clipped(i)), f(rec.clipped(fg))
        c_new = fg * c + i * g(rec.clipped(cand))
        if p is not None:
            o = o + p_o * c_new
        h_new = f(rec.clipped(o)) * act_h(c_new)
        return [h_new, c_new]

    return rec.outputs(rec.run(step, [rec.h0, c0]))
