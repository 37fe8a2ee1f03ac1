"""One step of the recurrent cells as functions, PyTorch's ``torch.rnn_tanh_cell``, ``rnn_relu_cell``,
``lstm_cell`` and ``gru_cell`` (gate order i, f, g, o for the LSTM and r, z, n for the GRU, as in
``nn.LSTMCell``/``nn.GRUCell``), composed from matmuls and activations.

Shapes: input (N, I), h (N, H), w_ih (G * H, I), w_hh (G * H, H), biases (G * H,) -> (N, H).
"""
from __future__ import annotations

from typing import Optional

from graphgrad.core.tensor import Tensor
from graphgrad.ops.linalg import matmul
from graphgrad.ops.shape import split, swapaxes
from graphgrad.ops.unary import relu, sigmoid, tanh


def _project(x: Tensor, w: Tensor, b: Optional[Tensor]) -> Tensor:
    y = matmul(x, swapaxes(w, -1, -2))
    return y if b is None else y + b


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return tanh(_project(input, w_ih, b_ih) + _project(hx, w_hh, b_hh))


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return relu(_project(input, w_ih, b_ih) + _project(hx, w_hh, b_hh))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> tuple:
    """One LSTM step: ``hx = (h, c)`` -> ``(h', c')``."""
    h, c = hx
    gates = _project(input, w_ih, b_ih) + _project(h, w_hh, b_hh)
    i, f, g, o = split(gates, 4, axis=-1)
    c_next = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c_next), c_next


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor:
    """One GRU step: ``h' = (1 - z) * n + z * h`` with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""
    x_r, x_z, x_n = split(_project(input, w_ih, b_ih), 3, axis=-1)
    h_r, h_z, h_n = split(_project(hx, w_hh, b_hh), 3, axis=-1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return (1 - z) * n + z * hx
