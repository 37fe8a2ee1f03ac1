"""Op-table rows for the fused recurrent sequence ops ``lstm`` and ``gru``.

The references are plain NumPy loops over time written from PyTorch's documented equations (gates
``i, f, g, o`` and ``r, z, n``), sharing no code with graphgrad.
"""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import F, OpSpec


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _time_steps(T: int, reverse: bool):
    return range(T - 1, -1, -1) if reverse else range(T)


def ref_lstm(x, w_ih, w_hh, b_ih=None, b_hh=None, h0=None, c0=None, reverse=False):
    T, B, _ = x.shape
    H = w_hh.shape[1]
    h = np.zeros((B, H)) if h0 is None else h0
    c = np.zeros((B, H)) if c0 is None else c0
    bias = 0.0 if b_ih is None else b_ih + b_hh
    ys = [None] * T
    for t in _time_steps(T, reverse):
        a = x[t] @ w_ih.T + h @ w_hh.T + bias
        i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c


def ref_gru(x, w_ih, w_hh, b_ih=None, b_hh=None, h0=None, reverse=False):
    T, B, _ = x.shape
    H = w_hh.shape[1]
    h = np.zeros((B, H)) if h0 is None else h0
    b_ih = np.zeros(3 * H) if b_ih is None else b_ih
    b_hh = np.zeros(3 * H) if b_hh is None else b_hh
    ys = [None] * T
    for t in _time_steps(T, reverse):
        gi = x[t] @ w_ih.T + b_ih
        gh = h @ w_hh.T + b_hh
        r = _sigmoid(gi[:, :H] + gh[:, :H])
        z = _sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        h = (1 - z) * n + z * h
        ys[t] = h
    return np.stack(ys), h


T, B, I, H = 3, 2, 3, 2
X, H0 = F((T, B, I)), F((B, H))


def _weights(gates: int) -> list:
    return [F((gates * H, I), -1, 1), F((gates * H, H), -1, 1), F((gates * H,), -1, 1), F((gates * H,), -1, 1)]


ROWS = [
    OpSpec("lstm", lambda x, wi, wh, bi, bh: gg.lstm(x, wi, wh, bi, bh), ref_lstm, [X] + _weights(4)),
    OpSpec("lstm[state]", lambda x, wi, wh, bi, bh, h0, c0: gg.lstm(x, wi, wh, bi, bh, h0, c0),
           ref_lstm, [X] + _weights(4) + [H0, H0]),
    OpSpec("lstm[reverse,no bias,state]", lambda x, wi, wh, h0, c0: gg.lstm(x, wi, wh, h0=h0, c0=c0, reverse=True),
           lambda x, wi, wh, h0, c0: ref_lstm(x, wi, wh, h0=h0, c0=c0, reverse=True), [X] + _weights(4)[:2] + [H0, H0]),
    # every input's first dimension unknown in the graph test: time, batch and the weights' gate rows
    OpSpec("lstm[reverse,unknown sizes]", lambda x, wi, wh, bi, bh: gg.lstm(x, wi, wh, bi, bh, reverse=True),
           lambda *a: ref_lstm(*a, reverse=True), [X] + _weights(4), batch=True),
    OpSpec("gru", lambda x, wi, wh, bi, bh: gg.gru(x, wi, wh, bi, bh), ref_gru, [X] + _weights(3)),
    OpSpec("gru[state]", lambda x, wi, wh, bi, bh, h0: gg.gru(x, wi, wh, bi, bh, h0), ref_gru,
           [X] + _weights(3) + [H0]),
    OpSpec("gru[reverse,no bias]", lambda x, wi, wh: gg.gru(x, wi, wh, reverse=True),
           lambda x, wi, wh: ref_gru(x, wi, wh, reverse=True), [X] + _weights(3)[:2]),
    OpSpec("gru[reverse,state,unknown sizes]",
           lambda x, wi, wh, bi, bh, h0: gg.gru(x, wi, wh, bi, bh, h0, reverse=True),
           lambda *a: ref_gru(*a, reverse=True), [X] + _weights(3) + [H0], batch=True),
]
