"""More of TF1's namespace that real programs use: ``tf.cond`` (see ``_control.py`` for a predicate known when run),
``tf.metrics`` (streaming accuracy and means over local variables), ``tf.train.ExponentialMovingAverage``,
``tf.multinomial`` / ``tf.random.categorical``, ``tf.map_fn`` over a known length, the sequence losses of
``tf.contrib.seq2seq`` / ``legacy_seq2seq``, ``tf.linalg`` and a few array helpers, each composed from
graphgrad ops."""
from __future__ import annotations

import builtins
import types
from typing import Any, Callable, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import as_axis, as_dtype, default_dtype, float32, in_graph, int32, int64, named

Tensor = _gg.Tensor


def _tf():
    import graphgrad.compat.tf as tf

    return tf


def _map_structure(fn: Callable, *structures: Any) -> Any:
    first = structures[0]
    if isinstance(first, dict):
        return {k: _map_structure(fn, *(s[k] for s in structures)) for k in first}
    if isinstance(first, (list, tuple)) and not hasattr(first, "as_list"):
        items = [_map_structure(fn, *parts) for parts in zip(*structures)]
        return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)
    return fn(*structures)


# ---- control flow ------------------------------------------------------------------------------------------------
def cond(pred: Any, true_fn: Optional[Callable] = None, false_fn: Optional[Callable] = None, strict: bool = False,
         name: Optional[str] = None, fn1: Optional[Callable] = None, fn2: Optional[Callable] = None) -> Any:
    """``true_fn()`` where ``pred`` holds, else ``false_fn()`` (tensors, operations, or structures of
    them). A Python or constant ``pred`` picks one branch when the graph is built. A ``pred`` known
    only when run (a placeholder such as ``is_training``) builds both branches, and each run runs only
    the branch taken, with its side effects (an assign, a control dependency), as TensorFlow does.
    Unless ``strict``, a branch result that is a list or tuple of one value gives that value."""
    true_fn, false_fn = true_fn or fn1, false_fn or fn2
    if true_fn is None or false_fn is None:
        raise TypeError("cond: true_fn and false_fn must both be given")
    if not isinstance(pred, Tensor) or not pred.is_symbolic:
        flag = pred.item() if isinstance(pred, Tensor) else pred
        return true_fn() if builtins.bool(flag) else false_fn()
    from graphgrad.compat.tf._control import runtime_cond

    return runtime_cond(pred, true_fn, false_fn, strict, name)


def case(pred_fn_pairs: Any, default: Optional[Callable] = None, exclusive: bool = False, strict: bool = False,
         name: Optional[str] = None) -> Any:
    """The first pair whose predicate holds (built as nested :func:`cond`)."""
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    if default is None:
        pairs, (_, default) = pairs[:-1], pairs[-1]
    result = default
    for pred, fn in reversed(pairs):
        result = (lambda p, f, rest: lambda: cond(p, f, rest))(pred, fn, result)
    return result()


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: Any = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name: Optional[str] = None) -> Any:
    """``fn`` applied to each slice of ``elems`` along its first axis, the results stacked: unrolled
    when the size of that axis is known when the graph is built, else a ``tf.while_loop``."""
    tf = _tf()
    leaves = list(elems) if isinstance(elems, (tuple, list)) else [elems]
    n = leaves[0].shape[0] if isinstance(leaves[0], Tensor) else len(leaves[0])
    if n is None:  # known only when run: a loop
        from graphgrad.compat.tf._control import map_fn_loop

        return map_fn_loop(fn, elems, dtype, back_prop, name)
    with _gg.get_default_graph().as_default():
        slices = [tf.unstack(leaf, n) for leaf in leaves]
        outs = [fn(tuple(s[i] for s in slices) if isinstance(elems, (tuple, list)) else slices[0][i])
                for i in builtins.range(n)]
        if isinstance(outs[0], (tuple, list)):
            return type(outs[0])(_gg.stack([o[j] for o in outs]) for j in builtins.range(len(outs[0])))
        return _gg.stack(outs)


def tuple_(tensors: Any, name: Optional[str] = None, control_inputs: Any = None) -> list:
    """``tf.tuple``: the tensors, each available once all are computed."""
    tf = _tf()
    tensors = list(tensors)
    with _gg.get_default_graph().as_default():
        gate = tf.group(*[t for t in tensors if t is not None], *(control_inputs or []))
        with _gg.control_dependencies([gate]):
            return [None if t is None else _gg.identity(t) for t in tensors]


def identity_n(input: Any, name: Optional[str] = None) -> list:
    with _gg.get_default_graph().as_default():
        return [_gg.identity(t) for t in input]


def convert_to_tensor(value: Any, dtype: Any = None, name: Optional[str] = None, preferred_dtype: Any = None,
                      dtype_hint: Any = None) -> Tensor:
    """A graph tensor as it is (cast to ``dtype`` if given); anything else a constant."""
    tf = _tf()
    if isinstance(value, Tensor) and value.is_symbolic:
        return value if dtype is None or value.dtype == as_dtype(dtype) else tf.cast(value, dtype)
    if isinstance(value, (list, tuple)) and _holds_tensor(value):  # TensorFlow packs them
        with _gg.get_default_graph().as_default():
            return tf.stack([convert_to_tensor(v, dtype=dtype) for v in value])
    if getattr(value, "is_variable", False):
        return value.value()
    return tf.constant(value, dtype=dtype or (None if hasattr(value, "dtype") else preferred_dtype or dtype_hint),
                       name=name or "Const")


def _holds_tensor(value: Any) -> bool:
    return any(isinstance(v, Tensor) or getattr(v, "is_variable", False) or
               (isinstance(v, (list, tuple)) and _holds_tensor(v)) for v in value)


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


# ---- sampling and shuffling ----------------------------------------------------------------------------------------
def _gumbel_like(x: Tensor) -> Tensor:
    u = _gg.rand_like(x, 1e-20, 1.0)
    return -_gg.log(-_gg.log(u))


def multinomial(logits: Any, num_samples: int, seed: Any = None, name: Optional[str] = None,
                output_dtype: Any = int64) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` (batch, classes), drawn anew on every run
    (the Gumbel-max trick)."""
    with _gg.get_default_graph().as_default():
        logits = _gg.astype(logits, float32)
        wide = _gg.expand_dims(logits, 1) + _gg.zeros((1, int(num_samples), 1), dtype=float32)
        out = _gg.argmax(wide + _gumbel_like(wide), axis=-1)
        return named(out if as_dtype(output_dtype) == int64 else _gg.astype(out, as_dtype(output_dtype)), name)


def categorical(logits: Any, num_samples: int, dtype: Any = None, seed: Any = None, name: Optional[str] = None):
    return multinomial(logits, num_samples, seed, name, dtype or int64)


@in_graph
def random_shuffle(value: Any, seed: Any = None) -> Tensor:
    """The rows of ``value`` in a random order, drawn anew on every run."""
    rows = _gg.astype(value, float32) * 0.0
    if len(value.shape) > 1:
        rows = _gg.sum(rows, axis=tuple(builtins.range(1, len(value.shape))))
    return _gg.take(value, _gg.argsort(_gg.rand_like(rows)), axis=0)


# ---- arrays and math ------------------------------------------------------------------------------------------------
@in_graph
def count_nonzero(input_tensor: Any = None, axis: Any = None, keepdims: Any = None, dtype: Any = int64,
                  reduction_indices: Any = None, keep_dims: Any = None, input: Any = None) -> Tensor:
    x = input if input_tensor is None else input_tensor
    axis = reduction_indices if axis is None else axis
    keep = builtins.bool(keepdims if keepdims is not None else keep_dims)
    return _gg.astype(_gg.sum(_gg.astype(_gg.not_equal(x, 0), int64), axis=as_axis(axis), keepdims=keep),
                      as_dtype(dtype))


@in_graph
def sort(values: Any, axis: int = -1, direction: str = "ASCENDING") -> Tensor:
    return _gg.sort(values, axis=int(axis), descending=direction == "DESCENDING")


@in_graph
def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False) -> Tensor:
    return _gg.astype(_gg.argsort(values, axis=int(axis), descending=direction == "DESCENDING"), int32)


@in_graph
def div_no_nan(x: Any, y: Any) -> Tensor:
    """``x / y``, 0 where ``y`` is 0."""
    x, y = (v if isinstance(v, Tensor) else _gg.constant(v, dtype=default_dtype(v)) for v in (x, y))
    zero = _gg.equal(y, 0)
    return _gg.where(zero, _gg.zeros_like(x * y), x / _gg.where(zero, _gg.ones_like(y), y))


@in_graph
def log_sigmoid(x: Any) -> Tensor:
    return _gg.logsigmoid(x)


@in_graph
def eye(num_rows: int, num_columns: Optional[int] = None, batch_shape: Any = None, dtype: Any = float32) -> Tensor:
    out = _gg.constant(_gg.eye(int(num_rows), None if num_columns is None else int(num_columns),
                               dtype=as_dtype(dtype)))
    if batch_shape:
        out = _gg.tile(_gg.reshape(out, (1,) * len(batch_shape) + tuple(out.shape)), tuple(batch_shape) + (1, 1))
    return out


diag = in_graph(lambda diagonal: _gg.diag_embed(diagonal))
diag_part = in_graph(lambda input: _gg.diagonal(input, 0, -2, -1))
trace = in_graph(lambda x: _gg.sum(_gg.diagonal(x, 0, -2, -1), axis=-1))
matrix_inverse = in_graph(lambda input, adjoint=False: _gg.linalg.inv(_gg.swapaxes(input, -1, -2) if adjoint
                                                                        else input))
matrix_determinant = in_graph(lambda input: _gg.linalg.det(input))
cholesky = in_graph(lambda input: _gg.linalg.cholesky(input))
matrix_solve = in_graph(lambda matrix, rhs, adjoint=False: _gg.linalg.solve(
    _gg.swapaxes(matrix, -1, -2) if adjoint else matrix, rhs))


@in_graph
def matrix_band_part(input: Any, num_lower: int, num_upper: int) -> Tensor:
    """Keep the ``num_lower`` diagonals below and ``num_upper`` above the main one (-1: all)."""
    out = input
    if int(num_lower) >= 0:
        out = _gg.triu(out, -int(num_lower))
    if int(num_upper) >= 0:
        out = _gg.tril(out, int(num_upper))
    return out


@in_graph
def _svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True):
    """TensorFlow's order: ``(s, u, v)`` (``v``, not its transpose), or ``s`` alone."""
    u, s, vh = _gg.linalg.svd(tensor, full_matrices=full_matrices)
    return (s, u, _gg.swapaxes(vh, -1, -2)) if compute_uv else s


@in_graph
def _qr(input: Any, full_matrices: bool = False):
    return _gg.linalg.qr(input, mode="complete" if full_matrices else "reduced")


linalg = types.SimpleNamespace(
    inv=matrix_inverse, det=matrix_determinant, cholesky=cholesky, solve=matrix_solve, band_part=matrix_band_part,
    diag=diag, diag_part=diag_part, trace=trace, eye=eye, svd=_svd, qr=_qr,
    matmul=lambda a, b, **kw: _tf().matmul(a, b, **kw), norm=lambda *a, **kw: _tf().norm(*a, **kw),
    transpose=lambda a, name=None, conjugate=False: _tf().transpose(a, _perm_last_two(a), name=name))


def _perm_last_two(a: Any) -> list:
    rank = len(a.shape)
    return list(builtins.range(rank - 2)) + [rank - 1, rank - 2]


# ---- metrics: (value, update_op) over local variables ---------------------------------------------------------------
def _local(name: str, scope: str) -> Any:
    tf = _tf()
    with tf.variable_scope(None, default_name=scope):
        var = tf.Variable(0.0, trainable=False, name=name, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return var


def _streaming(total_of: Any, count_of: Any, name: Optional[str], scope: str, finish: Callable = None) -> tuple:
    tf = _tf()
    with _gg.get_default_graph().as_default():
        total, count = _local("total", name or scope), _local("count", name or scope)
        update_total = tf.assign_add(total, _gg.astype(total_of, float32))
        update_count = tf.assign_add(count, _gg.astype(count_of, float32))
        finish = finish or (lambda x: x)
        value = finish(div_no_nan(total.value(), count.value()))
        update_op = finish(div_no_nan(update_total, update_count))
    return value, update_op


def _weighted(values: Any, weights: Any) -> tuple:
    values = _gg.astype(values, float32)
    if weights is None:
        return _gg.sum(values), _gg.astype(_gg.prod(_gg.shape_of(values)), float32)
    weights = _gg.astype(weights, float32) + _gg.zeros_like(values)
    return _gg.sum(values * weights), _gg.sum(weights)


def _metric_mean(values: Any, weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                 name: Optional[str] = None) -> tuple:
    """``(mean so far, update_op)``: the update adds this run's values and gives the new mean."""
    with _gg.get_default_graph().as_default():
        total, count = _weighted(values, weights)
    return _streaming(total, count, name, "mean")


def _metric_accuracy(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                     updates_collections: Any = None, name: Optional[str] = None) -> tuple:
    """``(accuracy so far, update_op)``: the share of ``predictions`` equal to ``labels``."""
    with _gg.get_default_graph().as_default():
        hits = _gg.equal(_gg.astype(predictions, int64), _gg.astype(labels, int64))
        total, count = _weighted(hits, weights)
    return _streaming(total, count, name, "accuracy")


def _metric_mse(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                updates_collections: Any = None, name: Optional[str] = None) -> tuple:
    with _gg.get_default_graph().as_default():
        total, count = _weighted(_gg.square(_gg.astype(predictions, float32) - _gg.astype(labels, float32)), weights)
    return _streaming(total, count, name, "mean_squared_error")


def _metric_mae(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                updates_collections: Any = None, name: Optional[str] = None) -> tuple:
    with _gg.get_default_graph().as_default():
        total, count = _weighted(_gg.abs(_gg.astype(predictions, float32) - _gg.astype(labels, float32)), weights)
    return _streaming(total, count, name, "mean_absolute_error")


def _metric_rmse(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                 updates_collections: Any = None, name: Optional[str] = None) -> tuple:
    with _gg.get_default_graph().as_default():
        total, count = _weighted(_gg.square(_gg.astype(predictions, float32) - _gg.astype(labels, float32)), weights)
    return _streaming(total, count, name, "root_mean_squared_error", _gg.sqrt)


metrics = types.SimpleNamespace(accuracy=_metric_accuracy, mean=_metric_mean, mean_squared_error=_metric_mse,
                                mean_absolute_error=_metric_mae, root_mean_squared_error=_metric_rmse)


# ---- moving averages ---------------------------------------------------------------------------------------------------
class ExponentialMovingAverage:
    """``tf.train.ExponentialMovingAverage(decay)``: ``apply(vars)`` makes a shadow variable for each
    (its initial value the variable's) and returns the op ``shadow -= (1 - decay) * (shadow - var)``;
    ``average(var)`` is the shadow. With ``num_updates`` the decay is ``min(decay, (1 + n) / (10 + n))``."""

    def __init__(self, decay: float, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage") -> None:
        self._decay, self._num_updates, self.name = decay, num_updates, name
        self._averages: dict = {}

    def apply(self, var_list: Any = None) -> Any:
        tf = _tf()
        var_list = list(tf.trainable_variables() if var_list is None else var_list)
        graph = _gg.get_default_graph()
        with graph.as_default():
            decay = self._decay
            if self._num_updates is not None:
                n = _gg.astype(self._num_updates, float32)
                decay = _gg.minimum(_gg.astype(decay, float32) if isinstance(decay, Tensor) else decay,
                                    (1.0 + n) / (10.0 + n))
            updates = []
            for var in var_list:
                shadow = self._averages.get(id(var))
                if shadow is None:
                    base = getattr(var, "base_name", None) or (var.name or "value").split(":")[0]
                    initial = var.initial_value if getattr(var, "is_variable", False) and hasattr(
                        var, "initial_value") else _gg.zeros(var.shape, dtype=var.dtype)
                    with tf._no_name_prefix():
                        shadow = tf.Variable(initial, trainable=False, name=f"{base}/{self.name}")
                    self._averages[id(var)] = shadow
                value = var.value() if getattr(var, "is_variable", False) else var
                updates.append(tf.assign_sub(shadow, (1.0 - decay) * (shadow.value() - value)))
            return tf.group(*updates, name=self.name)

    def average(self, var: Any) -> Any:
        return self._averages.get(id(var))

    def average_name(self, var: Any) -> str:
        return f"{getattr(var, 'base_name', None) or var.name.split(':')[0]}/{self.name}"

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict:
        tf = _tf()
        out = {}
        for var in tf.global_variables():
            shadow = self._averages.get(id(var))
            out[(shadow or var).base_name if shadow is not None else var.base_name] = shadow or var
        return out


# ---- sequence losses ----------------------------------------------------------------------------------------------------
def sequence_loss(logits: Any, targets: Any, weights: Any, average_across_timesteps: bool = True,
                  average_across_batch: bool = True, sum_over_timesteps: bool = False, sum_over_batch: bool = False,
                  softmax_loss_function: Any = None, name: Optional[str] = None) -> Tensor:
    """``tf.contrib.seq2seq.sequence_loss``: the weighted cross-entropy of ``logits`` (batch, time, classes)
    against integer ``targets`` (batch, time), averaged as asked."""
    tf = _tf()
    with _gg.get_default_graph().as_default():
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
        else:
            crossent = softmax_loss_function(labels=targets, logits=logits)
        weights = _gg.astype(weights, crossent.dtype)
        crossent = crossent * weights
        if average_across_timesteps and average_across_batch or sum_over_timesteps and sum_over_batch:
            total = _gg.sum(crossent)
            return total / (_gg.sum(weights) + 1e-12) if average_across_timesteps else total
        if average_across_batch or sum_over_batch:
            total = _gg.sum(crossent, axis=0)
            return total / (_gg.sum(weights, axis=0) + 1e-12) if average_across_batch else total
        if average_across_timesteps or sum_over_timesteps:
            total = _gg.sum(crossent, axis=1)
            return total / (_gg.sum(weights, axis=1) + 1e-12) if average_across_timesteps else total
        return crossent


def sequence_loss_by_example(logits: list, targets: list, weights: list, average_across_timesteps: bool = True,
                             softmax_loss_function: Any = None, name: Optional[str] = None) -> Tensor:
    """``tf.contrib.legacy_seq2seq.sequence_loss_by_example``: lists of (batch, classes) logits and (batch,)
    targets and weights, one per time step; each example's weighted cross-entropy (per step if averaged)."""
    tf = _tf()
    with _gg.get_default_graph().as_default():
        losses = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=_gg.reshape(target, (-1,)),
                                                                          logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            losses.append(crossent * _gg.astype(weight, crossent.dtype))
        total = builtins.sum(losses[1:], losses[0])
        if average_across_timesteps:
            total = total / (builtins.sum([_gg.astype(w, float32) for w in weights[1:]],
                                          _gg.astype(weights[0], float32)) + 1e-12)
        return total


def legacy_sequence_loss(logits: list, targets: list, weights: list, average_across_timesteps: bool = True,
                         average_across_batch: bool = True, softmax_loss_function: Any = None,
                         name: Optional[str] = None) -> Tensor:
    """``tf.contrib.legacy_seq2seq.sequence_loss``: :func:`sequence_loss_by_example` summed over the batch
    (and divided by the batch size when ``average_across_batch``)."""
    with _gg.get_default_graph().as_default():
        cost = _gg.sum(sequence_loss_by_example(logits, targets, weights, average_across_timesteps,
                                                softmax_loss_function))
        if average_across_batch:
            cost = cost / _gg.astype(_gg.shape_of(targets[0])[0], cost.dtype)
        return cost


def rnn_decoder(decoder_inputs: list, initial_state: Any, cell: Any, loop_function: Optional[Callable] = None,
                scope: Any = None) -> tuple:
    """``tf.contrib.legacy_seq2seq.rnn_decoder``: ``(outputs, state)`` of ``cell`` over a list of (batch,
    features) inputs from ``initial_state``; with ``loop_function(prev_output, i)`` each input after the
    first is made from the previous output instead (sampling)."""
    tf = _tf()
    with _gg.get_default_graph().as_default(), tf.variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with tf.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
        return outputs, state
