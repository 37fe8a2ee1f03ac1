"""Recurrent layers with PyTorch's API and parameter names: RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU.

A multi-layer layer runs one layer and direction at a time. LSTM and GRU layers (and cells) run each
as one fused sequence op (``graphgrad.ops.recurrent``: the whole recurrence forward in one op, and
backpropagation through time in one op, with the weight gradients as one matmul over the sequence).
The Elman RNN projects the inputs of every time step with one matmul (``x @ W_ih^T + b``), then a
Python loop over time applies the per-step ops; autograd differentiates through the loop. Gate order
is PyTorch's (LSTM ``i, f, g, o``; GRU ``r, z, n`` with ``n = tanh(W_in x + b_in + r * (W_hn h +
b_hn))``), so a PyTorch ``state_dict`` loads unchanged. Without an initial state the first step skips
the recurrent matmul (the state is zero), which also keeps the batch size free in graph mode.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

from graphgrad.core.creation import uniform, zeros
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.linalg import matmul
from graphgrad.ops.nn import dropout
from graphgrad.ops.recurrent import gru, lstm
from graphgrad.backend import np
from graphgrad.nn.rnn_utils import PackedSequence, pack_padded_sequence, pad_packed_sequence
from graphgrad.ops.shape import concatenate, expand_dims, pad, reshape, squeeze, stack, swapaxes, take, transpose
from graphgrad.ops.unary import relu, sigmoid, tanh

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _uniform_parameter(shape: tuple, bound: float) -> Parameter:
    return Parameter(uniform(-bound, bound, shape))


def _input_projection(x: Tensor, w_ih: Tensor, bias: Optional[Tensor]) -> Tensor:
    """``x @ w_ih^T + bias`` for ``x`` of shape (L, N, H_in) as one 2-D matmul -> (L, N, G)."""
    L, N, H = x.shape
    y = matmul(reshape(x, (-1, H)), transpose(w_ih))
    if bias is not None:
        y = y + bias
    return reshape(y, (L if L is not None else -1, N if N is not None else -1, y.shape[-1]))


def _unstack(x: Tensor) -> list:
    """``[x[0], x[1], ...]`` along axis 0, cut by repeated halving: the gradient of a slice is the
    slice's gradient scattered into zeros of the sliced tensor's shape, so slicing each step straight
    from the (L, ...) tensor would cost O(L^2) in the backward pass; halving costs O(L log L)."""
    n = x.shape[0]
    if n == 1:
        return [x[0]]
    if n <= 3:
        return [x[t] for t in range(n)]
    mid = n // 2
    return _unstack(x[0:mid]) + _unstack(x[mid:n])


# ---- one time step (shared by the cells and the layers) --------------------------------------------
def _rnn_step(gx: Tensor, h: Optional[Tensor], w_hh_t: Tensor, act) -> Tensor:
    """``act(gx + h @ W_hh^T)``; ``gx`` already holds the input projection and both biases."""
    return act(gx if h is None else gx + matmul(h, w_hh_t))


def _as_sequence(input: Tensor, unbatched: bool) -> Tensor:
    """A cell's input (N, H_in) or (H_in,) as a one-step sequence (1, N, H_in)."""
    return reshape(input, (1, 1, -1)) if unbatched else expand_dims(input, 0)


def _as_batch(state: Tensor, unbatched: bool) -> Tensor:
    return expand_dims(state, 0) if unbatched else state


def _projected_lstm(x: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor], b_hh: Optional[Tensor],
                    w_hr: Tensor, state, reverse: bool):
    """One direction of an LSTM with projections (PyTorch's ``proj_size``): ``h = (o * tanh(c)) W_hr^T``,
    so the recurrent input and the output have ``proj_size`` features. Steps as ops in a Python loop
    (the fused sequence op has no projection). Shapes: x (L, N, H_in) -> y (L, N, P), (h (N, P), c (N, H))."""
    H = w_hr.shape[1]
    proj = _input_projection(x, w_ih, None if b_ih is None else b_ih + b_hh)
    h, c = state if state is not None else (None, None)
    w_hh_t, w_hr_t = transpose(w_hh), transpose(w_hr)
    L = x.shape[0]
    outputs = [None] * L
    projections = _unstack(proj)
    for t in (range(L - 1, -1, -1) if reverse else range(L)):
        gates = projections[t] if h is None else projections[t] + matmul(h, w_hh_t)
        i, f = sigmoid(gates[:, :H]), sigmoid(gates[:, H:2 * H])
        g, o = tanh(gates[:, 2 * H:3 * H]), sigmoid(gates[:, 3 * H:])
        c = i * g if c is None else f * c + i * g
        h = matmul(o * tanh(c), w_hr_t)
        outputs[t] = h
    return stack(outputs, 0), (h, c)


# ---- cells ------------------------------------------------------------------------------------------
class _CellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, gates: int, device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = int(input_size), int(hidden_size), bool(bias)
        k = 1.0 / math.sqrt(hidden_size)
        G = gates * hidden_size
        self.weight_ih = _uniform_parameter((G, input_size), k)
        self.weight_hh = _uniform_parameter((G, hidden_size), k)
        if bias:
            self.bias_ih = _uniform_parameter((G,), k)
            self.bias_hh = _uniform_parameter((G,), k)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self._factory(device, dtype)

    def _check_input(self, input: Tensor) -> bool:
        if input.ndim not in (1, 2) or input.shape[-1] not in (None, self.input_size):
            raise ShapeError(f"{type(self).__name__}: expected input of shape (N, {self.input_size}) or "
                             f"({self.input_size},), got {input.shape}")
        return input.ndim == 1

    def _projection(self, input: Tensor) -> Tensor:
        """``input @ W_ih^T + b_ih + b_hh`` (both biases act additively in an Elman cell)."""
        gx = matmul(input, transpose(self.weight_ih))
        if self.bias:
            gx = gx + (self.bias_ih + self.bias_hh)
        return gx

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """An Elman RNN cell: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Shapes: input (N, H_in) or (H_in,); hx (N, H) or (H,) (zeros when ``None``) -> h' of hx's shape.

    Examples:
        >>> cell = gg.nn.RNNCell(10, 20)
        >>> cell(gg.randn(3, 10)).shape
        (3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        unbatched = self._check_input(input)
        act = tanh if self.nonlinearity == "tanh" else relu
        if hx is None and (unbatched or input.shape[0] is not None):
            # a zero state, multiplied as PyTorch does: weight_hh gets its (zero) gradient, not None
            hx = zeros((self.hidden_size,) if unbatched else (input.shape[0], self.hidden_size), dtype=input.dtype)
        return _rnn_step(self._projection(input), hx, transpose(self.weight_hh), act)


class LSTMCell(_CellBase):
    """A long short-term memory cell (gates i, f, g, o as PyTorch).

    Shapes: input (N, H_in) or (H_in,); hx a pair (h, c) of (N, H) or (H,) (zeros when ``None``)
    -> (h', c').

    Examples:
        >>> cell = gg.nn.LSTMCell(10, 20)
        >>> h, c = cell(gg.randn(3, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Optional[tuple] = None) -> tuple:
        unbatched = self._check_input(input)
        states = (None, None) if hx is None else tuple(_as_batch(h, unbatched) for h in hx)
        _, h, c = lstm(_as_sequence(input, unbatched), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                       *states)
        return (squeeze(h, 0), squeeze(c, 0)) if unbatched else (h, c)


class GRUCell(_CellBase):
    """A gated recurrent unit cell (gates r, z, n as PyTorch).

    Shapes: input (N, H_in) or (H_in,); hx (N, H) or (H,) (zeros when ``None``) -> h'.

    Examples:
        >>> cell = gg.nn.GRUCell(10, 20)
        >>> cell(gg.randn(3, 10)).shape
        (3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        unbatched = self._check_input(input)
        state = None if hx is None else _as_batch(hx, unbatched)
        _, h = gru(_as_sequence(input, unbatched), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, state)
        return squeeze(h, 0) if unbatched else h


# ---- layers --------------------------------------------------------------------------------------
class _RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: parameters ``weight_ih_l{k}[_reverse]``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, the layer/direction loop, dropout between
    layers, batch_first and unbatched inputs."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, proj_size: int = 0) -> None:
        super().__init__()
        if not isinstance(proj_size, int) or proj_size < 0 or (proj_size and proj_size >= hidden_size):
            raise ValueError(f"{type(self).__name__}: proj_size must be an int in [0, hidden_size), got {proj_size!r}")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"{type(self).__name__}: hidden_size must be a positive int, got {hidden_size!r}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"{type(self).__name__}: num_layers must be a positive int, got {num_layers!r}")
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout must be in [0, 1], got {dropout}")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = int(input_size), hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bool(bias), bool(batch_first), float(dropout)
        self.bidirectional, self.proj_size = bool(bidirectional), proj_size
        G = _GATES[mode] * hidden_size
        state_size = proj_size or hidden_size  # the size of h (LSTM with projections: proj_size)
        k = 1.0 / math.sqrt(hidden_size)
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else state_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                self.register_parameter("weight_ih" + suffix, _uniform_parameter((G, layer_input), k))
                self.register_parameter("weight_hh" + suffix, _uniform_parameter((G, state_size), k))
                if bias:
                    self.register_parameter("bias_ih" + suffix, _uniform_parameter((G,), k))
                    self.register_parameter("bias_hh" + suffix, _uniform_parameter((G,), k))
                if proj_size:
                    self.register_parameter("weight_hr" + suffix, _uniform_parameter((proj_size, hidden_size), k))
        self._factory(device, dtype)

    @property
    def num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    def flatten_parameters(self) -> None:
        """PyTorch's call to pack the weights into one block for cuDNN: here they are used as they are
        (nothing to do), so programs that call it after loading a model run unchanged."""

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        return text

    # -- one layer, one direction --
    def _run_direction(self, x: Tensor, layer: int, reverse: bool, state):
        suffix = f"_l{layer}" + ("_reverse" if reverse else "")
        w_ih = getattr(self, "weight_ih" + suffix)
        w_hh = getattr(self, "weight_hh" + suffix)
        b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
        b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
        if self.mode == "LSTM" and self.proj_size:
            return _projected_lstm(x, w_ih, w_hh, b_ih, b_hh, getattr(self, "weight_hr" + suffix), state, reverse)
        if self.mode == "LSTM":
            y, h, c = lstm(x, w_ih, w_hh, b_ih, b_hh, *(state or (None, None)), reverse=reverse)
            return y, (h, c)
        if self.mode == "GRU":
            return gru(x, w_ih, w_hh, b_ih, b_hh, state, reverse=reverse)
        # the Elman RNN: both biases act additively, so they fold into the input projection
        proj = _input_projection(x, w_ih, None if b_ih is None else b_ih + b_hh)
        act = tanh if self.mode == "RNN_TANH" else relu
        w_hh_t = transpose(w_hh)
        L = x.shape[0]
        outputs = [None] * L
        projections = _unstack(proj)
        for t in (range(L - 1, -1, -1) if reverse else range(L)):
            state = _rnn_step(projections[t], state, w_hh_t, act)
            outputs[t] = state
        return stack(outputs, 0), state

    def _check(self, input: Tensor, hx) -> bool:
        name = type(self).__name__
        if input.ndim not in (2, 3):
            raise ShapeError(f"{name}: expected a 3-D input ({'N, L' if self.batch_first else 'L, N'}, "
                             f"{self.input_size}) or a 2-D unbatched one (L, {self.input_size}), got {input.shape}")
        if input.shape[-1] not in (None, self.input_size):
            raise ShapeError(f"{name}: input.shape[-1] must be input_size={self.input_size}, got {input.shape}")
        batched = input.ndim == 3
        seq_axis = 1 if (batched and self.batch_first) else 0
        if input.shape[seq_axis] is None and self.mode not in ("LSTM", "GRU"):
            raise ShapeError(f"{name}: the sequence length (axis {seq_axis} of {input.shape}) must be known "
                             "when the graph is built: the layer unrolls its time loop")
        states = () if hx is None else (tuple(hx) if self.mode == "LSTM" else (hx,))
        if self.mode == "LSTM" and hx is not None and len(states) != 2:
            raise ShapeError(f"{name}: hx must be a pair (h_0, c_0)")
        front = (self.num_layers * self.num_directions,) + ((input.shape[1 - seq_axis],) if batched else ())
        for s, size in zip(states, (self.proj_size or self.hidden_size, self.hidden_size)):
            expected = front + (size,)
            if len(s.shape) != len(expected) or any(a is not None and b is not None and a != b
                                                    for a, b in zip(s.shape, expected)):
                raise ShapeError(f"{name}: initial state must have shape {expected}, got {s.shape}")
        return batched

    def forward(self, input: Tensor, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input = input if isinstance(input, Tensor) else Tensor(input)
        batched = self._check(input, hx)
        if not batched:
            input = expand_dims(input, 1)
            if hx is not None:
                hx = tuple(expand_dims(h, 1) for h in hx) if self.mode == "LSTM" else expand_dims(hx, 1)
        elif self.batch_first:
            input = swapaxes(input, 0, 1)
        D = self.num_directions
        finals_h, finals_c = [], []
        x = input
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0.0 and self.training:
                x = dropout(x, self.dropout, training=True)
            outs = []
            for direction in range(D):
                index = layer * D + direction
                if hx is None:
                    state = None
                elif self.mode == "LSTM":
                    state = (hx[0][index], hx[1][index])
                else:
                    state = hx[index]
                out, state = self._run_direction(x, layer, direction == 1, state)
                outs.append(out)
                if self.mode == "LSTM":
                    finals_h.append(state[0])
                    finals_c.append(state[1])
                else:
                    finals_h.append(state)
            x = outs[0] if D == 1 else concatenate(outs, axis=-1)
        h_n = stack(finals_h, 0)
        c_n = stack(finals_c, 0) if self.mode == "LSTM" else None
        if not batched:
            x, h_n = squeeze(x, 1), squeeze(h_n, 1)
            c_n = None if c_n is None else squeeze(c_n, 1)
        elif self.batch_first:
            x = swapaxes(x, 0, 1)
        return (x, (h_n, c_n)) if self.mode == "LSTM" else (x, h_n)

    def _forward_packed(self, packed: PackedSequence, hx):
        """Each sequence over its own length: the batch split into groups of equal length, each run as
        one batched (time-major) call; outputs re-packed in the input's order, states in the caller's."""
        padded, lengths = pad_packed_sequence(packed)  # (T, N, H_in), the caller's order
        lengths = lengths.numpy()
        steps, n = padded.shape[0], padded.shape[1]
        states = () if hx is None else (tuple(hx) if self.mode == "LSTM" else (hx,))
        outputs, finals, order = [], [], []
        for length in sorted(set(lengths.tolist()), reverse=True):
            members = np.flatnonzero(lengths == length)
            index = Tensor(members)
            x = take(padded[:length], index, axis=1)
            group_states = tuple(take(h, index, axis=1) for h in states)
            state = None if not group_states else (group_states if self.mode == "LSTM" else group_states[0])
            y, final = _RNNBase.forward(self, swapaxes(x, 0, 1) if self.batch_first else x, state)
            y = swapaxes(y, 0, 1) if self.batch_first else y
            if length < steps:
                y = pad(y, [(0, steps - length), (0, 0), (0, 0)])
            outputs.append(y)
            finals.append(final if self.mode == "LSTM" else (final,))
            order.extend(members.tolist())
        restore = Tensor(np.argsort(np.asarray(order), kind="stable"))
        y = take(concatenate(outputs, axis=1), restore, axis=1)  # (T, N, D * H), the caller's order
        final = tuple(take(concatenate([f[k] for f in finals], axis=1), restore, axis=1)
                      for k in range(len(finals[0])))
        sorted_lengths = lengths
        if packed.sorted_indices is not None:
            y = take(y, packed.sorted_indices, axis=1)
            sorted_lengths = lengths[packed.sorted_indices.numpy()]
        repacked = pack_padded_sequence(y, sorted_lengths)._replace(sorted_indices=packed.sorted_indices,
                                                                    unsorted_indices=packed.unsorted_indices)
        return (repacked, final) if self.mode == "LSTM" else (repacked, final[0])


class RNN(_RNNBase):
    """Multi-layer Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (PyTorch's
    ``nn.RNN``).

    Args:
        input_size, hidden_size, num_layers: sizes.
        nonlinearity: ``'tanh'`` or ``'relu'``.
        bias: whether the ``bias_ih``/``bias_hh`` parameters exist.
        batch_first: input and output as (N, L, H) instead of (L, N, H) (the states are not affected).
        dropout: dropout probability on the output of every layer but the last, in training only.
        bidirectional: also run each layer backwards in time and concatenate the features.

    Shapes: input (L, N, H_in), (N, L, H_in) with ``batch_first``, or unbatched (L, H_in); h_0
    (D * num_layers, N, H) -> output (L, N, D * H), h_n (D * num_layers, N, H), D = 2 if bidirectional.

    Examples:
        >>> rnn = gg.nn.RNN(10, 20, num_layers=2)
        >>> out, h_n = rnn(gg.randn(5, 3, 10))
        >>> out.shape, h_n.shape
        ((5, 3, 20), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        """Returns ``(output, h_n)``."""
        return super().forward(input, hx)


class LSTM(_RNNBase):
    """Multi-layer long short-term memory (PyTorch's ``nn.LSTM``; gates i, f, g, o)::

        i, f, o = sigmoid(W_i* x + b_i* + W_h* h + b_h*)   g = tanh(W_ig x + b_ig + W_hg h + b_hg)
        c' = f * c + i * g                               h' = o * tanh(c')

    Args: as :class:`RNN` (no ``nonlinearity``), and ``proj_size``: when > 0, each step's hidden state
    is projected to ``proj_size`` features, ``h = (o * tanh(c)) W_hr^T`` (parameters ``weight_hr_l{k}``
    (proj_size, hidden_size)); the output and h have proj_size features, c keeps hidden_size.

    Shapes: input (L, N, H_in) (or (N, L, H_in) with ``batch_first``, or unbatched (L, H_in)); hx a
    pair (h_0, c_0) of (D * num_layers, N, P) and (D * num_layers, N, H), P = proj_size or H ->
    ``(output, (h_n, c_n))``, output (L, N, D * P).

    Examples:
        >>> lstm = gg.nn.LSTM(10, 20, batch_first=True)
        >>> out, (h, c) = lstm(gg.randn(3, 5, 10))
        >>> out.shape, h.shape
        ((3, 5, 20), (1, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device, dtype, proj_size)

    def forward(self, input: Tensor, hx: Optional[tuple] = None) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        """Returns ``(output, (h_n, c_n))``."""
        return super().forward(input, hx)


class GRU(_RNNBase):
    """Multi-layer gated recurrent unit (PyTorch's ``nn.GRU``; gates r, z, n)::

        r, z = sigmoid(W_i* x + b_i* + W_h* h + b_h*)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))      h' = (1 - z) * n + z * h

    Args and shapes: as :class:`RNN` (no ``nonlinearity``); returns ``(output, h_n)``.

    Examples:
        >>> gru = gg.nn.GRU(10, 20, bidirectional=True)
        >>> out, h_n = gru(gg.randn(5, 3, 10))
        >>> out.shape, h_n.shape
        ((5, 3, 40), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device, dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        """Returns ``(output, h_n)``."""
        return super().forward(input, hx)

