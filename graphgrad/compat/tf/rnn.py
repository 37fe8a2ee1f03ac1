"""``tf.nn.rnn_cell`` (``BasicRNNCell``, ``BasicLSTMCell``, ``LSTMCell``, ``GRUCell``, ``MultiRNNCell``,
``LSTMStateTuple``), ``tf.nn.dynamic_rnn``, ``static_rnn`` and ``bidirectional_dynamic_rnn``.

The cells are TensorFlow's equations over graphgrad's ops (``matmul``, ``sigmoid``, ``tanh``), with
TensorFlow's variables (``rnn/basic_lstm_cell/kernel`` of shape (input + units, 4 * units) with the gates
in the order i, j, f, o; ``gru_cell/gates/kernel`` and ``gru_cell/candidate/kernel``). The recurrences
are unrolled over the time dimension, which must be known when the graph is built; with
``sequence_length`` the outputs past each sequence's length are zero and its state is copied through.
"""
from __future__ import annotations

import collections
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf.layers import layer_scope

Tensor = _gg.Tensor


def _tf():
    import graphgrad.compat.tf as tf

    return tf


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell ``c`` and the output ``h``."""

    __slots__ = ()

    @property
    def dtype(self):
        return self.c.dtype


def _map(fn, *structures):
    """``fn`` over the tensors of nested tuples (an LSTMStateTuple stays one)."""
    first = structures[0]
    if isinstance(first, (tuple, list)):
        parts = [_map(fn, *items) for items in zip(*structures)]
        return type(first)(*parts) if isinstance(first, LSTMStateTuple) else tuple(parts)
    return fn(*structures)


class RNNCell:
    """The base of the cells: ``cell(inputs, state) -> (output, new_state)``; variables made on the first
    call, in the cell's variable scope, and shared by every later call."""

    _default_name = "rnn_cell"

    def __init__(self, num_units: int = 0, activation: Any = None, reuse: Any = None, name: Optional[str] = None,
                 dtype: Any = None, **kwargs) -> None:
        self._num_units, self._activation = int(num_units), activation or _gg.tanh
        self._reuse, self._name, self._built = reuse, name, False

    @property
    def state_size(self) -> Any:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        tf = _tf()
        size = self.state_size

        def zeros(n):
            return tf.zeros([batch_size, n], dtype=dtype)

        return _map(zeros, size) if isinstance(size, tuple) else zeros(size)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple:
        tf = _tf()
        with _gg.get_default_graph().as_default():
            if not self._built:
                with layer_scope(self._name, self._default_name, self._reuse) as vs:
                    self._name = vs.name.rsplit("/", 1)[-1]
                    depth = inputs.shape[-1]
                    if depth is None:
                        raise _gg.ShapeError(f"{type(self).__name__}: the inputs' last dimension must be known")
                    self.build(depth)
                    self._built = True
                    return self.call(inputs, state)
            with tf.name_scope(self._name):
                return self.call(inputs, state)

    def _variable(self, name: str, shape: list, initializer: Any = None) -> Any:
        return _tf().get_variable(name, shape, initializer=initializer)

    @property
    def trainable_variables(self) -> list:
        return [v for v in vars(self).values() if isinstance(v, _gg.Variable)]

    variables = trainable_weights = weights = trainable_variables


def _linear(inputs: Any, state: Any, kernel: Any, bias: Any) -> Any:
    return _gg.matmul(_gg.concatenate([inputs, state], axis=1), kernel) + bias


class BasicRNNCell(RNNCell):
    """``h = activation([x, h] @ kernel + bias)``."""

    _default_name = "basic_rnn_cell"

    def build(self, depth: int) -> None:
        self._kernel = self._variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self._variable("bias", [self._num_units], _tf().zeros_initializer())

    def call(self, inputs: Any, state: Any) -> tuple:
        out = self._activation(_linear(inputs, state, self._kernel, self._bias))
        return out, out


class BasicLSTMCell(RNNCell):
    """TensorFlow's LSTM: ``i, j, f, o = split([x, h] @ kernel + bias, 4)``, ``c = c * sigmoid(f +
    forget_bias) + sigmoid(i) * tanh(j)``, ``h = tanh(c) * sigmoid(o)``; the state an ``LSTMStateTuple``."""

    _default_name = "basic_lstm_cell"

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True, activation: Any = None,
                 reuse: Any = None, name: Optional[str] = None, dtype: Any = None, **kwargs) -> None:
        super().__init__(num_units, activation, reuse, name, dtype)
        if not state_is_tuple:
            raise NotImplementedError(f"{type(self).__name__}: state_is_tuple=False is not supported")
        self._forget_bias = float(forget_bias)
        self._initializer = None

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_units)

    def build(self, depth: int) -> None:
        self._kernel = self._variable("kernel", [depth + self._num_units, 4 * self._num_units], self._initializer)
        self._bias = self._variable("bias", [4 * self._num_units], _tf().zeros_initializer())

    def call(self, inputs: Any, state: Any) -> tuple:
        c, h = state
        i, j, f, o = _gg.split(_linear(inputs, h, self._kernel, self._bias), 4, axis=1)
        new_c = c * _gg.sigmoid(f + self._forget_bias) + _gg.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * _gg.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class LSTMCell(BasicLSTMCell):
    """TensorFlow's ``LSTMCell`` (variables under ``lstm_cell``): ``BasicLSTMCell``'s equations, with
    optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), ``cell_clip``, and a projection of the
    output to ``num_proj`` units (``projection/kernel``, clipped to ``proj_clip``)."""

    _default_name = "lstm_cell"

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip: Any = None, initializer: Any = None,
                 num_proj: Any = None, proj_clip: Any = None, num_unit_shards: Any = None,
                 num_proj_shards: Any = None, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Any = None, reuse: Any = None, name: Optional[str] = None, dtype: Any = None,
                 **kwargs) -> None:
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype)
        self._initializer, self._peepholes = initializer, use_peepholes
        self._cell_clip, self._num_proj, self._proj_clip = cell_clip, num_proj, proj_clip

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def build(self, depth: int) -> None:
        n, out = self._num_units, self._num_proj or self._num_units
        self._kernel = self._variable("kernel", [depth + out, 4 * n], self._initializer)
        self._bias = self._variable("bias", [4 * n], _tf().zeros_initializer())
        if self._peepholes:
            self._w_f, self._w_i, self._w_o = (self._variable(key, [n], self._initializer)
                                               for key in ("w_f_diag", "w_i_diag", "w_o_diag"))
        if self._num_proj:
            with _tf().variable_scope("projection"):
                self._projection = self._variable("kernel", [n, self._num_proj], self._initializer)

    def call(self, inputs: Any, state: Any) -> tuple:
        c, h = state
        i, j, f, o = _gg.split(_linear(inputs, h, self._kernel, self._bias), 4, axis=1)
        if self._peepholes:
            new_c = (_gg.sigmoid(f + self._forget_bias + self._w_f * c) * c +
                     _gg.sigmoid(i + self._w_i * c) * self._activation(j))
        else:
            new_c = _gg.sigmoid(f + self._forget_bias) * c + _gg.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            new_c = _gg.clip(new_c, -self._cell_clip, self._cell_clip)
        gate = _gg.sigmoid(o + self._w_o * new_c) if self._peepholes else _gg.sigmoid(o)
        new_h = gate * self._activation(new_c)
        if self._num_proj:
            new_h = _gg.matmul(new_h, self._projection)
            if self._proj_clip is not None:
                new_h = _gg.clip(new_h, -self._proj_clip, self._proj_clip)
        return new_h, LSTMStateTuple(new_c, new_h)


class GRUCell(RNNCell):
    """TensorFlow's GRU: ``r, u = split(sigmoid([x, h] @ gates/kernel + gates/bias), 2)`` (the gates' bias
    starts at 1), ``c = tanh([x, r * h] @ candidate/kernel + candidate/bias)``, ``h = u * h + (1 - u) * c``."""

    _default_name = "gru_cell"

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None, kernel_initializer: Any = None,
                 bias_initializer: Any = None, name: Optional[str] = None, dtype: Any = None, **kwargs) -> None:
        super().__init__(num_units, activation, reuse, name, dtype)
        self._kernel_init, self._bias_init = kernel_initializer, bias_initializer

    def build(self, depth: int) -> None:
        tf = _tf()
        n = self._num_units
        with tf.variable_scope("gates"):
            self._gate_kernel = self._variable("kernel", [depth + n, 2 * n], self._kernel_init)
            self._gate_bias = self._variable("bias", [2 * n], self._bias_init or tf.constant_initializer(1.0))
        with tf.variable_scope("candidate"):
            self._candidate_kernel = self._variable("kernel", [depth + n, n], self._kernel_init)
            self._candidate_bias = self._variable("bias", [n], self._bias_init or tf.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> tuple:
        r, u = _gg.split(_gg.sigmoid(_linear(inputs, state, self._gate_kernel, self._gate_bias)), 2, axis=1)
        c = self._activation(_linear(inputs, r * state, self._candidate_kernel, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked: each one's output is the next one's input; the state a tuple of theirs (variables
    under ``multi_rnn_cell/cell_<i>/``)."""

    _default_name = "multi_rnn_cell"

    def __init__(self, cells: list, state_is_tuple: bool = True) -> None:
        super().__init__(0)
        if not state_is_tuple:
            raise NotImplementedError("MultiRNNCell: state_is_tuple=False is not supported")
        self._cells = list(cells)

    @property
    def state_size(self) -> tuple:
        return tuple(cell.state_size for cell in self._cells)

    @property
    def output_size(self) -> int:
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> tuple:
        return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)

    def build(self, depth: int) -> None:
        pass

    def call(self, inputs: Any, state: Any) -> tuple:
        tf = _tf()
        states = []
        for i, cell in enumerate(self._cells):
            with tf.variable_scope(f"cell_{i}"):
                inputs, new = cell(inputs, state[i])
            states.append(new)
        return inputs, tuple(states)

    @property
    def trainable_variables(self) -> list:
        return [v for cell in self._cells for v in cell.trainable_variables]


class DropoutWrapper(RNNCell):
    """A cell whose inputs and outputs are dropped out (``input_keep_prob``, ``output_keep_prob``, floats or
    tensors); the state is not."""

    def __init__(self, cell: RNNCell, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, seed: Any = None, **kwargs) -> None:
        super().__init__(0)
        self._cell, self._in, self._out, self._seed = cell, input_keep_prob, output_keep_prob, seed

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)
    trainable_variables = property(lambda self: self._cell.trainable_variables)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple:
        tf = _tf()
        if isinstance(self._in, Tensor) or self._in != 1.0:
            inputs = tf.nn.dropout(inputs, keep_prob=self._in, seed=self._seed)
        out, new = self._cell(inputs, state)
        if isinstance(self._out, Tensor) or self._out != 1.0:
            out = tf.nn.dropout(out, keep_prob=self._out, seed=self._seed)
        return out, new


def _batch_size(x: Any) -> Any:
    return x.shape[0] if x.shape[0] is not None else _tf().shape(x)[0]


def _run(cell: RNNCell, steps: list, sequence_length: Any, initial_state: Any, dtype: Any) -> tuple:
    """Unroll ``cell`` over ``steps`` (a list of (batch, features) tensors)."""
    state = initial_state if initial_state is not None else cell.zero_state(_batch_size(steps[0]),
                                                                            dtype or steps[0].dtype)
    lengths = None if sequence_length is None else _gg.reshape(_gg.astype(sequence_length, _gg.int64), (-1, 1))
    outputs = []
    for t, x in enumerate(steps):
        out, new = cell(x, state)
        if lengths is not None:
            alive = lengths > t
            new = _map(lambda n, o: _gg.where(alive, n, o), new, state)
            out = _gg.where(alive, out, _gg.zeros_like(out))
        outputs.append(out)
        state = new
    return outputs, state


def dynamic_rnn(cell: RNNCell, inputs: Any, sequence_length: Any = None, initial_state: Any = None, dtype: Any = None,
                parallel_iterations: Any = None, swap_memory: bool = False, time_major: bool = False,
                scope: Any = None) -> tuple:
    """``(outputs, state)`` of ``cell`` over ``inputs`` (batch, time, features), or (time, batch, features)
    with ``time_major``; variables under ``rnn/`` (or ``scope``). A time dimension known when the graph
    is built is unrolled; one known only when run (a ``None`` in the placeholder's shape) makes a
    ``tf.while_loop``."""
    tf = _tf()
    with _gg.get_default_graph().as_default(), tf.variable_scope(scope or "rnn"):
        return _dynamic(cell, inputs, sequence_length, initial_state, dtype, time_major)


def _dynamic(cell: RNNCell, inputs: Any, sequence_length: Any, initial_state: Any, dtype: Any,
             time_major: bool) -> tuple:
    axis = 0 if time_major else 1
    if inputs.shape is None or len(inputs.shape) < 3:
        raise _gg.ShapeError(f"dynamic_rnn: inputs must have shape (batch, time, features...), got {inputs.shape}")
    if inputs.shape[axis] is None:  # known only when run: a tf.while_loop over the time steps
        return _looped(cell, inputs, sequence_length, initial_state, dtype, time_major)
    steps = [_gg.squeeze(s, axis) for s in _gg.split(inputs, inputs.shape[axis], axis=axis)]
    outputs, state = _run(cell, steps, sequence_length, initial_state, _tf().as_dtype(dtype) if dtype else None)
    return _gg.stack(outputs, axis=axis), state


def _looped(cell: RNNCell, inputs: Any, sequence_length: Any, initial_state: Any, dtype: Any,
            time_major: bool) -> tuple:
    """:func:`dynamic_rnn` over a number of time steps known only when the graph runs (as TensorFlow
    runs it: a ``tf.while_loop`` reading the steps from one TensorArray and writing the outputs to another)."""
    tf = _tf()
    rank = len(inputs.shape)
    steps = inputs if time_major else tf.transpose(inputs, [1, 0] + list(range(2, rank)))
    n = tf.shape(steps)[0]
    reader = tf.TensorArray(steps.dtype, size=n).unstack(steps)
    state = initial_state if initial_state is not None else cell.zero_state(
        _batch_size(inputs if not time_major else steps[0]), tf.as_dtype(dtype) if dtype else inputs.dtype)
    lengths = None if sequence_length is None else _gg.reshape(_gg.astype(sequence_length, _gg.int64), (-1, 1))

    def body(t, state, written):
        out, new = cell(reader.read(t), state)
        if lengths is not None:
            alive = lengths > _gg.astype(t, _gg.int64)
            new = _map(lambda a, b: _gg.where(alive, a, b), new, state)
            out = _gg.where(alive, out, _gg.zeros_like(out))
        return t + 1, new, written.write(t, out)

    _, state, written = tf.while_loop(lambda t, *_: t < n, body, (tf.constant(0), state,
                                                                 tf.TensorArray(inputs.dtype, size=n)))
    outputs = written.stack()
    if not time_major:
        outputs = tf.transpose(outputs, [1, 0] + list(range(2, len(outputs.shape))))
    return outputs, state


def static_rnn(cell: RNNCell, inputs: list, initial_state: Any = None, dtype: Any = None, sequence_length: Any = None,
               scope: Any = None) -> tuple:
    """``(outputs, state)`` of ``cell`` over a list of (batch, features) inputs; outputs a list."""
    tf = _tf()
    with _gg.get_default_graph().as_default(), tf.variable_scope(scope or "rnn"):
        return _run(cell, list(inputs), sequence_length, initial_state, tf.as_dtype(dtype) if dtype else None)


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: Any = None, batch_axis: Any = None,
                     name: Optional[str] = None, seq_dim: Any = None, batch_dim: Any = None) -> Tensor:
    """Each sequence's first ``seq_lengths[b]`` elements along ``seq_axis`` reversed, the rest kept."""
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = (batch_dim if batch_axis is None else batch_axis) or 0
    with _gg.get_default_graph().as_default():
        steps = input.shape[seq_axis]
        t = _gg.arange(steps, dtype=_gg.int64) if steps is not None else \
            _gg.astype(_tf().range(_tf().shape(input)[seq_axis]), _gg.int64)
        lengths = _gg.astype(seq_lengths, _gg.int64)
        if seq_axis < batch_axis:
            t, lengths = _gg.reshape(t, (-1, 1)), _gg.reshape(lengths, (1, -1))
        else:
            t, lengths = _gg.reshape(t, (1, -1)), _gg.reshape(lengths, (-1, 1))
        index = _gg.where(t < lengths, lengths - 1 - t, t)  # (batch, time) or (time, batch)
        for _ in range(len(input.shape) - 2):
            index = _gg.expand_dims(index, -1)
        index = index + _gg.zeros_like(input, dtype=_gg.int64)
        return _gg.take_along_axis(input, index, seq_axis)


def bidirectional_dynamic_rnn(cell_fw: RNNCell, cell_bw: RNNCell, inputs: Any, sequence_length: Any = None,
                              initial_state_fw: Any = None, initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: Any = None, swap_memory: bool = False, time_major: bool = False,
                              scope: Any = None) -> tuple:
    """``((outputs_fw, outputs_bw), (state_fw, state_bw))``: ``cell_bw`` runs over each sequence reversed
    (within its length), and its outputs are reversed back."""
    tf = _tf()
    axis = 0 if time_major else 1
    with _gg.get_default_graph().as_default(), tf.variable_scope(scope or "bidirectional_rnn"):
        with tf.variable_scope("fw"):
            out_fw, state_fw = _dynamic(cell_fw, inputs, sequence_length, initial_state_fw, dtype, time_major)

        def reverse(x):
            if sequence_length is None:
                return _gg.flip(x, axis)
            return reverse_sequence(x, sequence_length, seq_axis=axis, batch_axis=1 - axis)

        with tf.variable_scope("bw"):
            out_bw, state_bw = _dynamic(cell_bw, reverse(inputs), sequence_length, initial_state_bw, dtype,
                                        time_major)
        return (out_fw, reverse(out_bw)), (state_fw, state_bw)


rnn_cell = None  # the namespace is built in graphgrad.compat.tf.__init__
del rnn_cell


def static_bidirectional_rnn(cell_fw: RNNCell, cell_bw: RNNCell, inputs: list, initial_state_fw: Any = None,
                             initial_state_bw: Any = None, dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None) -> tuple:
    """``(outputs, state_fw, state_bw)`` over a list of (batch, features) inputs: ``cell_bw`` reads the
    sequence reversed (within ``sequence_length``), and each output is ``concat([fw_t, bw_t], 1)``."""
    tf = _tf()
    inputs = list(inputs)
    dtype = tf.as_dtype(dtype) if dtype else None
    with _gg.get_default_graph().as_default(), tf.variable_scope(scope or "bidirectional_rnn"):
        with tf.variable_scope("fw"):
            out_fw, state_fw = _run(cell_fw, inputs, sequence_length, initial_state_fw, dtype)

        def reverse(steps):
            if sequence_length is None:
                return steps[::-1]
            stacked = reverse_sequence(_gg.stack(steps, 0), sequence_length, seq_axis=0, batch_axis=1)
            return [_gg.squeeze(s, 0) for s in _gg.split(stacked, len(steps), axis=0)]

        with tf.variable_scope("bw"):
            out_bw, state_bw = _run(cell_bw, reverse(inputs), sequence_length, initial_state_bw, dtype)
        outputs = [_gg.concatenate([f, b], axis=1) for f, b in zip(out_fw, reverse(list(out_bw)))]
        return outputs, state_fw, state_bw
