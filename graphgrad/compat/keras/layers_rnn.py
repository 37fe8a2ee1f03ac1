"""Keras' recurrent layers (``(batch, time, features)`` inputs) over graphgrad's fused ``nn.LSTM`` /
``nn.GRU`` / ``nn.RNN`` (batch_first), and the merge layers (``Concatenate``, ``Add``...)."""
from __future__ import annotations

from typing import Any, Sequence

import graphgrad as gg
from graphgrad import nn
from graphgrad.backend import np
from graphgrad.nn import init

from graphgrad.compat.keras.engine import Layer, pop_weight_rules

__all__ = ["LSTM", "GRU", "SimpleRNN", "Bidirectional", "Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum",
           "concatenate", "add", "subtract", "multiply", "average", "maximum"]


class _Recurrent(Layer):
    kind, gates = "lstm", 4

    def __init__(self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid",
                 use_bias: bool = True, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 unit_forget_bias: bool = True, reset_after: bool = True, **kwargs) -> None:
        for ignored in ("kernel_initializer", "recurrent_initializer", "bias_initializer", "stateful", "unroll"):
            kwargs.pop(ignored, None)
        for unsupported in ("bias_regularizer", "bias_constraint"):
            if kwargs.pop(unsupported, None) is not None:
                raise NotImplementedError(f"{type(self).__name__}: {unsupported} is not supported by graphgrad.compat."
                                          "keras (Keras' one bias is the sum of graphgrad's two); kernel_ and "
                                          "recurrent_ regularizers and constraints are")
        rules = pop_weight_rules(kwargs, ("kernel", "recurrent"))
        super().__init__(**kwargs)
        self.set_weight_rules(rules, ("kernel", "recurrent"))
        from graphgrad.compat.keras import activations

        self.activation_name = activation if isinstance(activation, str) else getattr(activation, "__name__", "fn")
        self.recurrent_activation_name = (recurrent_activation if isinstance(recurrent_activation, str)
                                          else getattr(recurrent_activation, "__name__", "fn"))
        # tanh and sigmoid run graphgrad's fused recurrence; other activations a step loop of graphgrad ops
        self.fused = self.activation_name == "tanh" and (self.kind == "rnn" or self.recurrent_activation_name
                                                          == "sigmoid")
        self.act = activations.get(activation)
        self.recurrent_act = activations.get(recurrent_activation)
        if not 0.0 <= float(dropout) < 1.0 or not 0.0 <= float(recurrent_dropout) < 1.0:
            raise ValueError(f"{type(self).__name__}: dropout and recurrent_dropout must be in [0, 1)")
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        # reset_after=False (Keras 2's and TF1's default): the reset gate applies to the state before the
        # recurrent kernel, one bias; run as a step loop of graphgrad ops
        self.reset_after = bool(reset_after) or self.kind != "gru"
        if not self.reset_after:
            self.fused = False
        self.units, self.use_bias = int(units), bool(use_bias)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.unit_forget_bias = bool(go_backwards), bool(unit_forget_bias)

    def build(self, input_shape) -> None:
        size = int(input_shape[-1])
        if self.kind == "lstm":
            self.rnn = nn.LSTM(size, self.units, bias=self.use_bias, batch_first=True)
        elif self.kind == "gru":
            self.rnn = nn.GRU(size, self.units, bias=self.use_bias, batch_first=True)
        else:
            self.rnn = nn.RNN(size, self.units, nonlinearity="tanh", bias=self.use_bias, batch_first=True)
        # Keras' initialization: glorot-uniform kernel, orthogonal recurrent kernel, zero bias
        # (the LSTM's forget gate bias 1 with unit_forget_bias)
        init.xavier_uniform_(self.rnn.weight_ih_l0)
        hh = gg.concatenate([init.orthogonal_(gg.zeros(self.units, self.units)) for _ in range(self.gates)], axis=0)
        with gg.no_grad():
            self.rnn.weight_hh_l0.copy_(hh)
        if self.use_bias:
            init.zeros_(self.rnn.bias_ih_l0)
            init.zeros_(self.rnn.bias_hh_l0)
            if self.kind == "lstm" and self.unit_forget_bias:
                bias = gg.concatenate([gg.zeros(self.units), gg.ones(self.units), gg.zeros(2 * self.units)])
                with gg.no_grad():
                    self.rnn.bias_ih_l0.copy_(bias)
            self._hold_recurrent_bias()

    def _hold_recurrent_bias(self) -> None:
        """LSTM and SimpleRNN: Keras has one bias where graphgrad (PyTorch) has two; the recurrent one stays
        zero and untrained, so the input bias is Keras' bias and takes Keras' updates (training both would
        move their sum twice as fast)."""
        if self.kind != "gru" and self.use_bias:
            self.rnn.bias_hh_l0.requires_grad_(False)

    def _after_requires_grad(self) -> None:
        self._hold_recurrent_bias()

    def count_non_trainable(self) -> int:
        return 0 if self.trainable else self.count_params()

    consumes_mask = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask if self.return_sequences and not self.return_state else None

    def _masked(self, x, mask):
        """Keras' masked recurrence: masked steps are skipped (the state carried over them). The unmasked
        steps are moved to the front, in order, and run as a packed sequence of their lengths; with
        ``return_sequences`` a masked step repeats the last output (zeros before the first)."""
        m = np.asarray(mask.numpy()).astype(bool)
        if self.go_backwards:
            x, m = gg.flip(x, axis=1), m[:, ::-1]
        batch, steps, features = (int(d) for d in x.shape)
        lengths = m.sum(1)
        order = np.argsort(~m, axis=1, kind="stable")
        compact = gg.take_along_axis(x, gg.tensor(np.ascontiguousarray(
            np.broadcast_to(order[:, :, None], (batch, steps, features)))), axis=1)
        packed = nn.pack_padded_sequence(compact, np.maximum(lengths, 1).tolist(), batch_first=True,
                                         enforce_sorted=False)
        out, state = self.rnn(packed)
        seen = gg.tensor((lengths > 0).astype(np.float32).reshape(batch, 1), dtype=x.dtype)
        states = [s[0] * seen for s in (state if self.kind == "lstm" else (state,))]
        if self.return_sequences:
            padded, _ = nn.pad_packed_sequence(out, batch_first=True, total_length=steps)
            count = np.cumsum(m, axis=1)
            index = np.broadcast_to(np.maximum(count - 1, 0)[:, :, None], (batch, steps, self.units))
            result = gg.take_along_axis(padded, gg.tensor(np.ascontiguousarray(index)), axis=1)
            result = result * gg.tensor((count > 0)[:, :, None].astype(np.float32), dtype=x.dtype)
        else:
            result = states[0]
        return [result, *states] if self.return_state else result

    def _dropout_mask(self, shape, rate: float, dtype):
        """Keras' recurrent-layer dropout: one mask per sequence, the same at every step."""
        keep = (gg.rand(*shape) >= rate).astype(dtype)
        return keep / (1.0 - rate)

    def _loop(self, x, mask=None):
        """The recurrence as a loop of graphgrad ops over the steps, with the fused module's weights: for
        activations other than tanh/sigmoid and for ``recurrent_dropout`` (Keras' mask on the previous
        state where it enters the recurrent kernel, the same mask at every step). Masked steps keep the
        state (and repeat the last output)."""
        rnn, u = self.rnn, self.units
        if self.go_backwards:
            x = gg.flip(x, axis=1)
            mask = None if mask is None else gg.flip(mask, axis=1)
        batch, steps = int(x.shape[0]), int(x.shape[1])
        xw = gg.matmul(x, gg.transpose(rnn.weight_ih_l0, (1, 0)))
        if self.use_bias:
            xw = xw + rnn.bias_ih_l0
        w_hh = gg.transpose(rnn.weight_hh_l0, (1, 0))
        rec_mask = None
        if self.training and self.recurrent_dropout:
            rec_mask = self._dropout_mask((batch, u), self.recurrent_dropout, x.dtype)
        h = gg.zeros((batch, u), dtype=x.dtype)
        c = gg.zeros((batch, u), dtype=x.dtype) if self.kind == "lstm" else None
        outputs = []
        for t in range(steps):
            h_in = h if rec_mask is None else h * rec_mask
            hw = gg.matmul(h_in, w_hh)
            if self.use_bias:
                hw = hw + rnn.bias_hh_l0
            z_t = xw[:, t]
            if self.kind == "lstm":
                gates = z_t + hw
                i, f = self.recurrent_act(gates[:, :u]), self.recurrent_act(gates[:, u:2 * u])
                g, o = self.act(gates[:, 2 * u:3 * u]), self.recurrent_act(gates[:, 3 * u:])
                c_new = f * c + i * g
                h_new = o * self.act(c_new)
            elif self.kind == "gru":  # PyTorch's (r, z, n) blocks; Keras' reset_after formulation
                r = self.recurrent_act(z_t[:, :u] + hw[:, :u])
                z = self.recurrent_act(z_t[:, u:2 * u] + hw[:, u:2 * u])
                if self.reset_after:
                    n = self.act(z_t[:, 2 * u:] + r * hw[:, 2 * u:])
                else:  # the reset gate on the state, before its kernel (hw's bias part is zero here)
                    n = self.act(z_t[:, 2 * u:] + gg.matmul(r * h_in, w_hh[:, 2 * u:]))
                h_new, c_new = (1 - z) * n + z * h, None
            else:
                h_new, c_new = self.act(z_t + hw), None
            if mask is not None:
                m = mask[:, t:t + 1].astype(x.dtype)
                h_new = m * h_new + (1 - m) * h
                if c is not None:
                    c_new = m * c_new + (1 - m) * c
            h, c = h_new, c_new
            outputs.append(h)
        result = gg.stack(outputs, axis=1) if self.return_sequences else h
        if not self.return_state:
            return result
        return [result, h, c] if self.kind == "lstm" else [result, h]

    def forward(self, x, mask=None):
        if self.training and self.dropout:
            x = x * gg.expand_dims(self._dropout_mask((int(x.shape[0]), int(x.shape[-1])), self.dropout, x.dtype), 1)
        if not self.fused or (self.training and self.recurrent_dropout):
            return self._loop(x, mask)
        if mask is not None:
            return self._masked(x, mask)
        if self.go_backwards:
            x = gg.flip(x, axis=1)
        out, state = self.rnn(x)
        result = out if self.return_sequences else out[:, -1]
        if not self.return_state:
            return result
        if self.kind == "lstm":
            h, c = state
            return [result, h[0], c[0]]
        return [result, state[0]]

    def _order(self, w, to_keras: bool):
        """GRU's gates: PyTorch (r, z, n) <-> Keras (z, r, h); LSTM's (i, f, g, o) are Keras' (i, f, c, o)."""
        if self.kind != "gru":
            return w
        u = self.units
        blocks = [w[..., :u], w[..., u:2 * u], w[..., 2 * u:]]
        return np.concatenate([blocks[1], blocks[0], blocks[2]], axis=-1)

    def keras_weights(self) -> list:
        return [(p, None, None) for p in self.rnn.parameters()]

    def rule_slots(self) -> list:
        """The kernel and the recurrent kernel, with Keras' layout (transposed, Keras' gate order)."""
        to_keras = lambda w: self._order(w.T, True).copy()  # noqa: E731
        from_keras = lambda w: self._order(w, False).T.copy()  # noqa: E731
        return [(self.rnn.weight_ih_l0, to_keras, from_keras), (self.rnn.weight_hh_l0, to_keras, from_keras)]

    def get_weights(self) -> list:
        """Keras' ``[kernel (features, gates*units), recurrent_kernel (units, gates*units), bias]``:
        the bias is the sum of graphgrad's (PyTorch's) two biases for LSTM and SimpleRNN, and both
        stacked, ``(2, 3 units)``, for GRU (reset_after)."""
        rnn = self.rnn
        out = [self._order(rnn.weight_ih_l0.numpy().T, True).copy(), self._order(rnn.weight_hh_l0.numpy().T, True).copy()]
        if self.use_bias:
            b_ih, b_hh = self._order(rnn.bias_ih_l0.numpy(), True), self._order(rnn.bias_hh_l0.numpy(), True)
            out.append(np.stack([b_ih, b_hh]) if self.kind == "gru" and self.reset_after else b_ih + b_hh)
        return out

    def set_weights(self, weights) -> None:
        weights = [np.asarray(gg.tensor(w).numpy()) for w in weights]
        expected = 3 if self.use_bias else 2
        if len(weights) != expected:
            raise ValueError(f"{self.name}.set_weights: expected {expected} arrays, got {len(weights)}")
        rnn = self.rnn
        values = [(rnn.weight_ih_l0, self._order(weights[0], False).T), (rnn.weight_hh_l0, self._order(weights[1], False).T)]
        if self.use_bias:
            bias = weights[2]
            if self.kind == "gru" and self.reset_after:
                values += [(rnn.bias_ih_l0, self._order(bias[0], False)), (rnn.bias_hh_l0, self._order(bias[1], False))]
            elif self.kind == "gru":  # one bias: on the input side (the recurrent one stays zero)
                bias = self._order(bias, False)
                values += [(rnn.bias_ih_l0, bias), (rnn.bias_hh_l0, np.zeros_like(bias))]
            else:
                values += [(rnn.bias_ih_l0, bias), (rnn.bias_hh_l0, np.zeros_like(bias))]
        for tensor, value in values:
            if tuple(value.shape) != tuple(tensor.shape):
                raise ValueError(f"{self.name}.set_weights: an array of shape {value.shape} for a weight of shape "
                                 f"{tuple(tensor.shape)} (in graphgrad's layout)")
            with gg.no_grad():
                tensor.copy_(gg.tensor(np.ascontiguousarray(value), dtype=tensor.dtype))

    def count_params(self) -> int:
        return sum(int(w.size) for w in self.get_weights()) if self.built else 0


class LSTM(_Recurrent):
    """``LSTM(units, return_sequences=False, return_state=False)`` on ``(batch, time, features)``.
    Weights: kernel ``(features, 4 units)``, recurrent kernel, and two biases (input and recurrent;
    Keras has one, their sum)."""

    kind, gates = "lstm", 4


class GRU(_Recurrent):
    """``GRU(units, return_sequences=False)`` (Keras' default ``reset_after=True``)."""

    kind, gates = "gru", 3


class SimpleRNN(_Recurrent):
    """``SimpleRNN(units, return_sequences=False)`` with tanh."""

    kind, gates = "rnn", 1


# ---- merge layers --------------------------------------------------------------------------------------------------
class _Merge(Layer):
    def forward(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"{type(self).__name__}: call it on a list of at least two tensors")
        return self._merge(list(inputs))


class Concatenate(_Merge):
    """``Concatenate(axis=-1)([a, b])``."""

    def __init__(self, axis: int = -1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _merge(self, xs):
        return gg.concatenate(xs, axis=self.axis)


class Add(_Merge):
    """``Add()([a, b, ...])``: the elementwise sum."""

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class Subtract(_Merge):
    def _merge(self, xs):
        if len(xs) != 2:
            raise ValueError("Subtract: call it on exactly two tensors")
        return xs[0] - xs[1]


class Multiply(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out * x
        return out


class Average(_Merge):
    def _merge(self, xs):
        return Add._merge(self, xs) * (1.0 / len(xs))


class Maximum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = gg.maximum(out, x)
        return out


def concatenate(inputs: Sequence[Any], axis: int = -1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(list(inputs))


def add(inputs: Sequence[Any], **kwargs):
    return Add(**kwargs)(list(inputs))


def subtract(inputs: Sequence[Any], **kwargs):
    return Subtract(**kwargs)(list(inputs))


def multiply(inputs: Sequence[Any], **kwargs):
    return Multiply(**kwargs)(list(inputs))


def average(inputs: Sequence[Any], **kwargs):
    return Average(**kwargs)(list(inputs))


def maximum(inputs: Sequence[Any], **kwargs):
    return Maximum(**kwargs)(list(inputs))


class Bidirectional(Layer):
    """``Bidirectional(LSTM(units), merge_mode="concat")``: the layer and a copy that reads the sequence
    backwards (``go_backwards``); with ``return_sequences`` the backward outputs are put back in time
    order, as Keras. Weights: the forward layer's, then the backward layer's."""

    def __init__(self, layer: _Recurrent, merge_mode: str = "concat", backward_layer: Any = None, **kwargs) -> None:
        if isinstance(layer, dict):  # from a saved config
            from graphgrad.compat.keras import layers as _layers

            layer = getattr(_layers, layer["class_name"]).from_config(layer["config"])
        if not isinstance(layer, _Recurrent):
            raise TypeError(f"Bidirectional wraps an LSTM, GRU or SimpleRNN, got {type(layer).__name__}")
        if backward_layer is not None:
            raise NotImplementedError("Bidirectional: backward_layer is not supported; the backward copy is made for you")
        if merge_mode not in ("concat", "sum", "mul", "ave"):
            raise ValueError(f"Bidirectional: merge_mode must be 'concat', 'sum', 'mul' or 'ave', got {merge_mode!r}")
        if layer.return_state:
            raise NotImplementedError("Bidirectional: return_state is not supported")
        super().__init__(**kwargs)
        saved = {"layer": {"class_name": type(layer).__name__, "config": layer.get_config()}, "merge_mode": merge_mode}
        object.__setattr__(self, "_init_args", ([], dict(kwargs, **saved)))
        args, config = layer._init_args
        config = dict(config, go_backwards=not layer.go_backwards, name=f"backward_{layer.name}")
        self.forward_layer = layer
        self.backward_layer = type(layer)(*args, **config)
        self.merge_mode = merge_mode

    def build(self, input_shape) -> None:
        self.forward_layer._ensure_built(gg.zeros(tuple(1 if d is None else d for d in input_shape)))
        self.backward_layer._ensure_built(gg.zeros(tuple(1 if d is None else d for d in input_shape)))

    consumes_mask = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask if self.forward_layer.return_sequences else None

    def forward(self, x, mask=None):
        a, b = self.forward_layer(x, mask=mask), self.backward_layer(x, mask=mask)
        if self.forward_layer.return_sequences:
            b = gg.flip(b, axis=1)
        if self.merge_mode == "concat":
            return gg.concatenate([a, b], axis=-1)
        if self.merge_mode == "sum":
            return a + b
        if self.merge_mode == "mul":
            return a * b
        return (a + b) * 0.5

    def keras_weights(self) -> list:
        return self.forward_layer.keras_weights() + self.backward_layer.keras_weights()

    def get_weights(self) -> list:
        return self.forward_layer.get_weights() + self.backward_layer.get_weights()

    def set_weights(self, weights) -> None:
        weights = list(weights)
        n = len(self.forward_layer.get_weights())
        self.forward_layer.set_weights(weights[:n])
        self.backward_layer.set_weights(weights[n:])

    def count_params(self) -> int:
        return self.forward_layer.count_params() + self.backward_layer.count_params()

    def count_non_trainable(self) -> int:
        return self.forward_layer.count_non_trainable() + self.backward_layer.count_non_trainable()
