"""TensorFlow 1's graph API on graphgrad: ``import graphgrad.compat.tf as tf``.

Placeholders, Variables (``tf.Variable``, ``tf.get_variable`` with ``tf.variable_scope``), sessions
(``tf.Session``, ``tf.InteractiveSession``, ``tensor.eval()``, ``op.run()``), the math and array
functions under TensorFlow's names and argument conventions (``reduce_sum(x, axis, keepdims)`` and the
old ``reduction_indices``/``keep_dims``, ``concat(values, axis)``, ``matmul(transpose_a=...)``...),
``tf.nn``, ``tf.losses``, ``tf.train`` (optimizers, Saver, learning-rate schedules) and ``tf.summary``.

Everything maps onto graphgrad's static graphs (``gg.placeholder``, ``gg.Variable``, ``gg.Session``,
``gg.gradients``, ``gg.train`` optimizers): nothing here is an op of its own. Every function builds a
node of the default graph, as in TensorFlow 1 (even one whose inputs are all Variables), and takes
``name=``.

:func:`install` makes ``import tensorflow as tf`` and ``import tensorflow.compat.v1 as tf`` resolve to
this namespace, so a TF1 program runs unchanged. See docs/tensorflow.md for what differs.
"""
from __future__ import annotations

import builtins
import contextlib
import math as _math
import sys
import types
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import (SCOPES, as_axis, as_dtype, bool_, current_scope, default_dtype, float16,
                                         float32, float64, graph_state, in_graph, int8, int16, int32, int64, named,
                                         need_rank, uint8)

bool = bool_  # noqa: A001
string = _gg.as_dtype(object)
double, half = float64, float16
__version__ = "1.15.0+graphgrad"

Tensor = _gg.Tensor
Operation = _gg.GraphNode
Graph = _gg.Graph
get_default_graph = _gg.get_default_graph
get_default_session = _gg.get_default_session


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", **kwargs) -> list:
    """``tf.gradients``: d(sum of ys)/d(each of xs). Inside ``tf.control_dependencies`` a variable's
    gradient is that of its read outside, which the ``ys`` were built from."""
    stack = graph_state().get("control_reads")
    if stack:
        single = not isinstance(xs, (list, tuple))
        xs = [stack[-1].get(id(x), x) for x in ([xs] if single else xs)]
    return _gg.gradients(ys, xs, grad_ys, name=name)
hessians = _gg.hessians
group = _gg.group
no_op = _gg.no_op
set_random_seed = _gg.manual_seed
AUTO_REUSE = "AUTO_REUSE"


@contextlib.contextmanager
def control_dependencies(control_inputs: Any):
    """``with tf.control_dependencies([a, b]):`` makes the nodes made inside run after ``a`` and ``b``.
    Gradients taken inside (``optimizer.minimize`` under ``UPDATE_OPS``, as TF1 programs write it) are
    those of the variables' reads outside, which the loss uses."""
    graph = _gg.get_default_graph()
    stack = graph_state(graph).setdefault("control_reads", [])
    reads = dict(stack[-1]) if stack else {id(v): graph.read_variable(v) for v in _gg.global_variables()}
    stack.append(reads)
    try:
        with _gg.control_dependencies([] if control_inputs is None else control_inputs):
            yield
    finally:
        stack.pop()


@contextlib.contextmanager
def device(device_name: Any):
    """``with tf.device('/cpu:0'):`` accepted: graphgrad places a graph's nodes itself."""
    yield


def container(container_name: Any):
    return device(container_name)


def disable_v2_behavior() -> None:
    """Nothing to do: graphs and sessions are how this namespace always works."""


disable_eager_execution = disable_v2_behavior


def executing_eagerly() -> builtins.bool:
    return False


def reset_default_graph() -> Graph:
    """A new, empty default graph (the variable scopes of the old one are forgotten)."""
    return _gg.reset_default_graph()


class GraphKeys:
    """The standard collection names."""

    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    LOSSES = "losses"
    SUMMARIES = "summaries"
    UPDATE_OPS = "update_ops"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"


def add_to_collection(name: str, value: Any) -> None:
    graph_state()["collections"].setdefault(name, []).append(value)


def get_collection(key: str, scope: Optional[str] = None) -> list:
    """The values of collection ``key`` of the default graph (variables' collections are the graph's)."""
    if key == GraphKeys.GLOBAL_VARIABLES:
        return global_variables(scope)
    if key == GraphKeys.TRAINABLE_VARIABLES:
        return trainable_variables(scope)
    items = list(graph_state()["collections"].get(key, []))
    if scope:
        items = [v for v in items if _name_of(v).startswith(scope)]
    return items


def _name_of(value: Any) -> str:
    return getattr(value, "base_name", None) or getattr(value, "name", None) or ""


# ---- shapes ------------------------------------------------------------------------------------------------
class Dimension(int):
    """One known dimension of a :class:`TensorShape`: an int with TF1's ``.value``."""

    @property
    def value(self) -> int:
        return int(self)


class _UnknownDimension:
    """An unknown dimension (``?``): its ``.value`` is ``None``."""

    value = None

    def __repr__(self) -> str:
        return "Dimension(None)"

    def __eq__(self, other: Any):
        return None

    __hash__ = None


class TensorShape(tuple):
    """What ``tensor.get_shape()`` gives: a tuple of the dimensions (``None`` where unknown) with TF1's
    ``as_list()``, ``ndims``, ``num_elements()``, ``is_fully_defined()``, and ``shape[i].value``."""

    def __new__(cls, dims: Any = None):
        if dims is None:
            out = super().__new__(cls, ())
            out._known = False
            return out
        out = super().__new__(cls, (None if getattr(d, "value", d) is None else int(getattr(d, "value", d))
                                    for d in dims))
        out._known = True
        return out

    def __getitem__(self, key: Any) -> Any:
        if not self._known:
            return _UnknownDimension()
        if isinstance(key, builtins.slice):
            return TensorShape(tuple.__getitem__(self, key))
        d = tuple.__getitem__(self, key)
        return _UnknownDimension() if d is None else Dimension(d)

    def __iter__(self):
        return (self[i] for i in builtins.range(len(self)))

    def as_list(self) -> list:
        if not self._known:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(tuple.__iter__(self))

    @property
    def ndims(self) -> Optional[int]:
        return len(self) if self._known else None

    rank = ndims
    dims = property(lambda self: list(self) if self._known else None)

    def num_elements(self) -> Optional[int]:
        return _math.prod(self.as_list()) if self.is_fully_defined() else None

    def is_fully_defined(self) -> builtins.bool:
        return self._known and None not in tuple.__iter__(self)

    def __repr__(self) -> str:
        return f"TensorShape({self.as_list() if self._known else None})"

    def __str__(self) -> str:  # TF1's: (?, 784), or <unknown>
        if not self._known:
            return "<unknown>"
        dims = ["?" if d is None else str(d) for d in tuple.__iter__(self)]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


class _ShapeTuple(TensorShape):
    """``tensor.shape`` once :func:`install` ran: the static shape tuple (unknown dimensions ``None``,
    known ones ints with ``.value``) with TensorShape's ``as_list()``, ``ndims``, ``num_elements()``."""

    _known = True

    def __new__(cls, dims: Any):
        return tuple.__new__(cls, dims)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, builtins.slice):
            return _ShapeTuple(tuple.__getitem__(self, key))
        d = tuple.__getitem__(self, key)
        return None if d is None else Dimension(d)

    def __iter__(self):
        return tuple.__iter__(self)

    # printed as the plain tuple it was before install(): graphgrad's own messages stay the same
    __repr__ = __str__ = tuple.__repr__


def _tf_shape(self) -> Any:
    d = self._data
    spec_shape = d.shape if d is not None else self._spec.shape
    return None if spec_shape is None else _ShapeTuple(spec_shape)


def _get_shape(self) -> TensorShape:
    """TF1's ``tensor.get_shape()``: the static shape as a :class:`TensorShape`."""
    return TensorShape(self.shape)


if not hasattr(_gg.Tensor, "get_shape"):
    _gg.Tensor.get_shape = _get_shape


# ---- Variables ------------------------------------------------------------------------------------------
class Variable(_gg.Variable):
    """``tf.Variable``: a graphgrad Variable whose arithmetic (``w * 2``, ``w @ x``, ``-w``, ``w[0]``)
    reads it in the default graph, as a TF1 variable's does (a graphgrad Variable alone computes
    eagerly). Its name is prefixed by the enclosing ``name_scope``/``variable_scope``."""

    __slots__ = ()

    def __init__(self, initial_value: Any = None, trainable: builtins.bool = True, collections: Any = None,
                 validate_shape: builtins.bool = True, caching_device: Any = None, name: Optional[str] = None,
                 variable_def: Any = None, dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Any = None, use_resource: Any = None, **kwargs) -> None:
        if initial_value is None:
            raise ValueError("tf.Variable: initial_value must be given")
        if callable(initial_value):
            initial_value = initial_value()
        dtype = as_dtype(dtype) or default_dtype(initial_value)
        prefix = current_scope()[0]
        super().__init__(initial_value, trainable=trainable, name=prefix + (name or "Variable"), dtype=dtype)
        for key in collections or ():
            if key not in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES):
                add_to_collection(key, self)

    @property
    def name(self) -> str:
        """TensorFlow's name: ``scope/name:0``."""
        return self.base_name + ":0"

    @name.setter
    def name(self, value: Any) -> None:  # a Tensor's own name slot: the variable's name is base_name
        pass

    @property
    def op(self):
        """The node that reads this variable in the default graph."""
        return self.value()._node

    @property
    def graph(self):
        return self.value()._node.graph

    def eval(self, session=None):
        return self.value().eval(session=session)

    def get_shape(self) -> "TensorShape":
        return TensorShape(self.shape)


def _reading(name: str):
    def method(self, *args):
        return getattr(self.value(), name)(*args)

    method.__name__ = name
    return method


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
            "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__neg__", "__abs__",
            "__matmul__", "__rmatmul__", "__getitem__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(Variable, _op, _reading(_op))


def assign(ref: Variable, value: Any, name: Optional[str] = None, **kwargs) -> Tensor:
    return ref.assign(value, name=name)


def assign_add(ref: Variable, value: Any, name: Optional[str] = None, **kwargs) -> Tensor:
    return ref.assign_add(value, name=name)


def assign_sub(ref: Variable, value: Any, name: Optional[str] = None, **kwargs) -> Tensor:
    return ref.assign_sub(value, name=name)


def _named(variables: list) -> list:
    """``variables`` with TensorFlow's ``name`` (``scope/name:0``) on those graphgrad made itself (an
    optimizer's slots and step counters, named ``<var>/<optimizer>/<slot>``)."""
    for v in variables:
        if not isinstance(v, Variable) and v.name is None and v.base_name:
            v.name = v.base_name + ":0"
    return variables


def global_variables(scope: Optional[str] = None) -> list:
    return _named([v for v in _gg.global_variables() if not scope or v.base_name.startswith(scope)])


def trainable_variables(scope: Optional[str] = None) -> list:
    return _named([v for v in _gg.trainable_variables() if not scope or v.base_name.startswith(scope)])


all_variables = global_variables


def local_variables(scope: Optional[str] = None) -> list:
    """The variables of the ``LOCAL_VARIABLES`` collection (``tf.metrics``' totals and counts)."""
    return [v for v in graph_state()["collections"].get(GraphKeys.LOCAL_VARIABLES, [])
            if not scope or v.base_name.startswith(scope)]


def global_variables_initializer() -> Operation:
    """An operation that sets every variable of the default graph to its initial value."""
    return _gg.global_variables_initializer()


initialize_all_variables = global_variables_initializer


def variables_initializer(var_list, name: str = "init") -> Operation:
    return _gg.variables_initializer(list(var_list), name=name)


def local_variables_initializer() -> Operation:
    """An operation that sets the local variables (``tf.metrics``' totals and counts) to zero."""
    found = local_variables()
    return _gg.variables_initializer(found, name="init_local") if found else _gg.no_op(name="init_local")


tables_initializer = local_variables_initializer


# ---- scopes and get_variable ------------------------------------------------------------------------------
@contextlib.contextmanager
def name_scope(name: Optional[str], default_name: Optional[str] = None, values: Any = None):
    """``with tf.name_scope("layer1") as scope:`` prefixes the names of nodes and Variables made inside."""
    name = name or default_name
    if not name:
        yield ""
        return
    graph = _gg.get_default_graph()
    _, var_prefix, reuse, init, reg = current_scope()
    with graph.name_scope(name) as prefix:
        SCOPES.stack.append((graph, prefix, var_prefix, reuse, init, reg))
        try:
            yield prefix
        finally:
            SCOPES.stack.pop()


class VariableScope:
    """What ``with tf.variable_scope(...) as scope:`` gives: its ``name``, ``reuse``, and
    ``reuse_variables()``."""

    def __init__(self, name: str, reuse: Any) -> None:
        self.name, self.reuse = name, reuse

    def reuse_variables(self) -> None:
        """Reuse variables from now on in this scope (TF1's ``scope.reuse_variables()``)."""
        self.reuse = True
        graph = _gg.get_default_graph()
        for i in builtins.range(len(SCOPES.stack) - 1, -1, -1):
            entry = SCOPES.stack[i]
            if entry[0] is graph and entry[2] == (self.name + "/" if self.name else ""):
                SCOPES.stack[i] = entry[:3] + (True,) + entry[4:]
                return


@contextlib.contextmanager
def variable_scope(name_or_scope: Any, default_name: Optional[str] = None, values: Any = None,
                   initializer: Any = None, regularizer: Any = None, reuse: Any = None, dtype: Any = None, **kwargs):
    """``with tf.variable_scope("layer1", reuse=...):`` prefixes the names of variables made by
    ``tf.get_variable`` (and of nodes). ``reuse=True`` makes ``get_variable`` return the existing variable
    of that name (an error if there is none); ``tf.AUTO_REUSE`` reuses it or makes it."""
    reentered = isinstance(name_or_scope, VariableScope)
    if reentered:
        name_or_scope = name_or_scope.name.rsplit("/", 1)[-1]
    name = name_or_scope or default_name
    graph = _gg.get_default_graph()
    _, var_prefix, outer_reuse, outer_init, outer_reg = current_scope()
    reuse = outer_reuse if reuse is None or reuse is False and outer_reuse else reuse
    scope = VariableScope(var_prefix + name if name else var_prefix.rstrip("/"), reuse)
    with graph.name_scope(name) as prefix:
        SCOPES.stack.append((graph, prefix, scope.name + "/", reuse, initializer or outer_init,
                             regularizer or outer_reg))
        depth = len(SCOPES.stack)
        try:
            yield scope
        finally:
            del SCOPES.stack[depth - 1:]
            if not reentered:  # as TF1: the layer names (dense, dense_1...) inside start again next time
                counts = graph_state(graph).get("layer_names", {})
                for key in [k for k in counts if k.startswith(scope.name + "/")]:
                    del counts[key]


def get_variable_scope() -> VariableScope:
    _, var_prefix, reuse, _, _ = current_scope()
    return VariableScope(var_prefix.rstrip("/"), reuse)


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None, regularizer: Any = None,
                 trainable: builtins.bool = True, collections: Any = None, **kwargs) -> Variable:
    """``tf.get_variable``: the variable ``scope/name`` of the default graph, made with ``initializer``
    (default: the scope's, else ``glorot_uniform_initializer``) unless the scope reuses variables."""
    _, var_prefix, reuse, scope_init, scope_reg = current_scope()
    full = var_prefix + name
    store = graph_state()["variables"]
    if full in store:
        if not reuse:
            raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set reuse=True or "
                             "reuse=tf.AUTO_REUSE in VarScope?")
        found = store[full]
        if shape is not None and tuple(found.shape) != tuple(shape):
            raise ValueError(f"Trying to share variable {full}, but specified shape {tuple(shape)} and found "
                             f"shape {tuple(found.shape)}.")
        return found
    if reuse is True:
        raise ValueError(f"Variable {full} does not exist, or was not created with tf.get_variable(). Did you "
                         "mean to set reuse=tf.AUTO_REUSE in VarScope?")
    dtype = as_dtype(dtype) or float32
    init = initializer if initializer is not None else scope_init
    if init is None:
        init = glorot_uniform_initializer() if dtype.kind == "f" else zeros_initializer()
    if callable(init):
        if shape is None:
            raise ValueError(f"get_variable {full}: the shape must be given with an initializer")
        value = init(tuple(shape), dtype=dtype)
    else:
        value = init
    graph = _gg.get_default_graph()
    with _no_name_prefix():
        var = Variable(value, trainable=trainable, name=full, dtype=dtype)
    store[full] = var
    reg = regularizer or scope_reg
    if reg is not None:
        with graph.as_default():
            loss = reg(var)
        if loss is not None:
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return var


@contextlib.contextmanager
def _no_name_prefix():
    """Make ``Variable`` take its name as given (``get_variable`` already prefixed it)."""
    graph = _gg.get_default_graph()
    SCOPES.stack.append((graph, "", "", False, None, None))
    try:
        yield
    finally:
        SCOPES.stack.pop()


# ---- initializers ----------------------------------------------------------------------------------------
def _generator(seed: Optional[int]):
    return None if seed is None else _gg.Generator(seed)


class _Initializer:
    """An initializer: ``init(shape, dtype)`` gives a value (a graphgrad tensor) for a new variable."""

    dtype = None

    def __call__(self, shape, dtype=None, partition_info=None):
        return self.make(tuple(int(d) for d in shape), as_dtype(dtype) or as_dtype(self.dtype) or float32)


class zeros_initializer(_Initializer):  # noqa: N801
    def __init__(self, dtype=None):
        self.dtype = dtype

    def make(self, shape, dtype):
        return _gg.zeros(shape, dtype=dtype)


class ones_initializer(zeros_initializer):  # noqa: N801
    def make(self, shape, dtype):
        return _gg.ones(shape, dtype=dtype)


class constant_initializer(_Initializer):  # noqa: N801
    def __init__(self, value=0, dtype=None, verify_shape=False):
        self.value, self.dtype = value, dtype

    def make(self, shape, dtype):
        value = _gg.tensor(self.value, dtype=dtype)
        return _gg.full(shape, value.item(), dtype=dtype) if value.ndim == 0 else value.reshape(shape)


class random_normal_initializer(_Initializer):  # noqa: N801
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=None):
        self.mean, self.stddev, self.seed, self.dtype = mean, stddev, seed, dtype

    def make(self, shape, dtype):
        return _gg.normal(self.mean, self.stddev, shape, generator=_generator(self.seed), dtype=dtype)


class truncated_normal_initializer(random_normal_initializer):  # noqa: N801
    """Normal values more than two standard deviations from the mean drawn again."""

    def make(self, shape, dtype):
        return _truncated(shape, self.mean, self.stddev, dtype, self.seed)


class random_uniform_initializer(_Initializer):  # noqa: N801
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=None):
        self.minval, self.maxval, self.seed, self.dtype = minval, 1.0 if maxval is None else maxval, seed, dtype

    def make(self, shape, dtype):
        return _gg.uniform(self.minval, self.maxval, shape, generator=_generator(self.seed), dtype=dtype)


def _fans(shape: tuple) -> tuple:
    """TensorFlow's fan-in and fan-out: a kernel's last two axes are (in, out), the others its window."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    window = _math.prod(shape[:-2])
    return shape[-2] * window, shape[-1] * window


class variance_scaling_initializer(_Initializer):  # noqa: N801
    """TF1's variance scaling: ``scale / fan`` as the variance of a truncated normal (``normal``) or a
    uniform distribution; ``mode`` picks fan_in, fan_out or fan_avg."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=None):
        self.scale, self.mode, self.distribution, self.seed, self.dtype = scale, mode, distribution, seed, dtype

    def make(self, shape, dtype):
        fan_in, fan_out = _fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / builtins.max(1.0, fan)
        if self.distribution == "uniform":
            limit = _math.sqrt(3.0 * variance)
            return _gg.uniform(-limit, limit, shape, generator=_generator(self.seed), dtype=dtype)
        if self.distribution == "untruncated_normal":
            return _gg.normal(0.0, _math.sqrt(variance), shape, generator=_generator(self.seed), dtype=dtype)
        stddev = _math.sqrt(variance) / 0.87962566103423978  # the truncated normal's stddev correction
        return _truncated(shape, 0.0, stddev, dtype, self.seed)


class glorot_uniform_initializer(variance_scaling_initializer):  # noqa: N801
    """Uniform in ``±sqrt(6 / (fan_in + fan_out))`` (get_variable's default)."""

    def __init__(self, seed=None, dtype=None):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class glorot_normal_initializer(variance_scaling_initializer):  # noqa: N801
    def __init__(self, seed=None, dtype=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


initializers = types.SimpleNamespace(
    zeros=zeros_initializer, ones=ones_initializer, constant=constant_initializer,
    random_normal=random_normal_initializer, truncated_normal=truncated_normal_initializer,
    random_uniform=random_uniform_initializer, glorot_uniform=glorot_uniform_initializer,
    glorot_normal=glorot_normal_initializer, variance_scaling=variance_scaling_initializer,
    global_variables=global_variables_initializer, variables=variables_initializer)


# ---- sessions ----------------------------------------------------------------------------------------------
class ConfigProto:
    """Accepted and ignored (``allow_soft_placement``, ``gpu_options``...)."""

    def __init__(self, **kwargs) -> None:
        self.__dict__.update(kwargs)

    def __getattr__(self, name: str) -> Any:
        """A nested options block (``config.gpu_options.allow_growth = True``), made on first use."""
        if name.startswith("__"):
            raise AttributeError(name)
        value = self.__dict__[name] = ConfigProto()
        return value


GPUOptions = GraphOptions = OptimizerOptions = ConfigProto


class RunOptions(ConfigProto):
    """Accepted and ignored (``trace_level=tf.RunOptions.FULL_TRACE``)."""

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3


class RunMetadata(ConfigProto):
    """Accepted; a run fills nothing in."""


class Session(_gg.Session):
    """``tf.Session(target='', graph=None, config=None)``: a graphgrad Session (``with tf.Session() as
    sess:`` makes it the default session, for ``tensor.eval()`` and ``op.run()``)."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None) -> None:
        super().__init__(graph=graph)

    def run(self, fetches: Any, feed_dict: Optional[dict] = None, options: Any = None, run_metadata: Any = None):
        """As TF1's: integer placeholders take float values (``np.ones(n)`` for labels) as
        ``np.asarray(value, dtype)`` does."""
        if feed_dict:
            flat_feed: dict = {}
            for key, value in feed_dict.items():
                _flatten_feed(key, value, flat_feed)
            feed_dict = {key: _fed(key, value) for key, value in flat_feed.items()}
        strings = graph_state(self.graph).get("strings")
        if strings:  # the values of tf.constant("text")
            feed_dict = {**strings, **(feed_dict or {})}
        if graph_state(self.graph).get("iterators"):  # tf.data: feed the next elements the run needs
            flat: list = []
            self._flatten(fetches, flat)
            feed_dict = data.session_feeds(self, flat, feed_dict)
        return super().run(fetches, feed_dict)


def _flatten_feed(key: Any, value: Any, out: dict) -> None:
    """A feed whose key is a structure of tensors (an LSTM state tuple, a list of them) fed part by part
    from the same structure of values, as TF1's session allows."""
    if isinstance(key, (tuple, list)) and not getattr(key, "is_variable", False):
        if len(key) != len(value):
            raise ValueError(f"feed_dict: a structure of {len(key)} tensors fed {len(value)} values")
        for k, v in zip(key, value):
            _flatten_feed(k, v, out)
    else:
        out[key] = value


def _fed(key: Any, value: Any) -> Any:
    """``value`` cast as TF1's session casts a fed value: a float array fed to an integer tensor."""
    dtype = getattr(key, "dtype", None)
    if dtype is None or getattr(dtype, "kind", "") not in "iu" or isinstance(value, Tensor):
        return value
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f" or isinstance(value, (list, tuple, float)):
        from graphgrad.backend import np as _np

        return _np.asarray(value, dtype=dtype)
    return value


class InteractiveSession(Session):
    """A session that makes itself the default session when made (until ``close()``), so that
    ``tensor.eval()`` works at an interactive prompt."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None) -> None:
        super().__init__(target, graph, config)
        self._default = self.as_default()
        self._default.__enter__()

    def close(self) -> None:
        default, self._default = getattr(self, "_default", None), None
        if default is not None:
            default.__exit__(None, None, None)
        super().close()


# ---- constants, placeholders, creation ---------------------------------------------------------------------
def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const", verify_shape: Any = False):
    """A constant node; Python floats make float32 and ints int32, as in TensorFlow. A string (or a list
    of them) makes a ``tf.string`` tensor whose value a session run gives as bytes."""
    if _is_text(value):
        from graphgrad.backend import np as _np

        array = _np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(
            _np.asarray(value, dtype=object))
        node = _gg.placeholder(string, array.shape, name=name)
        graph_state().setdefault("strings", {})[node] = array
        return node
    dtype = as_dtype(dtype) or default_dtype(value)
    return _gg.constant(value, dtype=dtype, shape=None if shape is None else tuple(shape), name=name)


def _is_text(value: Any) -> builtins.bool:
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return isinstance(value, (str, bytes))


def placeholder(dtype: Any, shape: Any = None, name: Optional[str] = None) -> Tensor:
    """An input fed through ``feed_dict``; without ``shape`` it takes a value of any shape."""
    return _gg.placeholder(as_dtype(dtype), _static_shape(shape), name=name)


def _static_shape(shape: Any) -> Optional[tuple]:
    """A placeholder's shape as TF1 takes it: ``None`` (any shape), an int (``shape=(batch_size)`` is
    one), or a list/tuple/TensorShape whose entries may be ``None``."""
    if shape is None or isinstance(shape, TensorShape) and not shape._known:
        return None
    if isinstance(shape, int):
        return (int(shape),)
    return tuple(None if getattr(d, "value", d) is None else int(getattr(d, "value", d)) for d in shape)


def placeholder_with_default(input: Any, shape: Any, name: Optional[str] = None) -> Tensor:
    return _gg.placeholder_with_default(input, tuple(shape), name=name)


def _shape_arg(shape: Any):
    """A static shape tuple, or a 1-D int64 graph tensor for a shape known only at run time."""
    if isinstance(shape, Tensor) and shape.is_symbolic:
        return shape.astype(int64)
    if isinstance(shape, (list, tuple)) and builtins.any(isinstance(d, Tensor) and d.is_symbolic for d in shape):
        return _gg.stack([_gg.astype(d, int64) if isinstance(d, Tensor) else _gg.constant(int(d), dtype=int64)
                          for d in shape])
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    return (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)


@in_graph
def fill(dims: Any, value: Any, name: Optional[str] = None) -> Tensor:
    shape = _shape_arg(dims)
    dtype = default_dtype(value) or getattr(value, "dtype", None)
    if isinstance(shape, tuple):
        return _gg.constant(_gg.full(shape, value, dtype=dtype))
    return _gg.ops.FullOfShape(value, dtype or float32).apply(shape)


def zeros(shape: Any, dtype: Any = float32, name: Optional[str] = None) -> Tensor:
    return fill(shape, _gg.tensor(0, dtype=as_dtype(dtype)), name=name)


def ones(shape: Any, dtype: Any = float32, name: Optional[str] = None) -> Tensor:
    return fill(shape, _gg.tensor(1, dtype=as_dtype(dtype)), name=name)


@in_graph
def zeros_like(tensor: Any, dtype: Any = None, name: Optional[str] = None, optimize: Any = True) -> Tensor:
    return _gg.zeros_like(tensor, dtype=as_dtype(dtype))


@in_graph
def ones_like(tensor: Any, dtype: Any = None, name: Optional[str] = None, optimize: Any = True) -> Tensor:
    return _gg.ones_like(tensor, dtype=as_dtype(dtype))


@in_graph
def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None) -> Tensor:  # noqa: A001
    """``tf.range``: ints give int32, floats float32, as in TensorFlow."""
    if limit is None:
        start, limit = 0, start
    dtype = as_dtype(dtype) or default_dtype([start, limit, delta]) or float32
    if builtins.any(isinstance(v, Tensor) and v.is_symbolic for v in (start, limit, delta)):
        return _gg.astype(_gg.ops.ArangeOf().apply(start, limit, delta), dtype)
    if builtins.any(isinstance(v, float) for v in (start, limit, delta)) and dtype.kind != "f":
        dtype = float32
    return _gg.constant(_gg.arange(start, limit, delta, dtype=dtype))


@in_graph
def linspace(start: Any, stop: Any, num: int) -> Tensor:
    return _gg.constant(_gg.linspace(start, stop, num, dtype=float32))


lin_space = linspace


# ---- random values -------------------------------------------------------------------------------------------
def _truncated(shape, mean, stddev, dtype, seed):
    value = _gg.empty(shape, dtype=dtype)
    return _gg.nn.init.trunc_normal_(value, mean, stddev, mean - 2 * stddev, mean + 2 * stddev,
                                     generator=_generator(seed))


def _random(shape, dtype, like):
    """A node that draws anew on every run, for a static ``shape`` or a run-time one (a graph tensor, e.g.
    from ``tf.shape``). A Variable made from it keeps the values of its first draw."""
    shape = _shape_arg(shape)
    with _gg.get_default_graph().as_default():
        zeros = _gg.constant(_gg.zeros(shape, dtype=dtype)) if isinstance(shape, tuple) else \
            _gg.ops.FullOfShape(0, dtype).apply(shape)
        return like(zeros)


def _cast_to(value: Any, dtype: Any) -> Any:
    """A tensor as ``dtype``; a Python number as it is."""
    return _gg.astype(value, dtype) if isinstance(value, Tensor) else value


def random_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = float32, seed: Any = None,
                  name: Optional[str] = None) -> Tensor:
    """Normal values drawn anew on every run; ``mean`` and ``stddev`` may be tensors (e.g.
    ``stddev=1. / tf.sqrt(fan_in / 2.)``)."""
    if not builtins.any(isinstance(v, Tensor) for v in (mean, stddev)):
        return named(_random(shape, as_dtype(dtype),
                             lambda z: _gg.randn_like(z, mean, stddev, generator=_generator(seed))), name)
    draw = _random(shape, as_dtype(dtype), lambda z: _gg.randn_like(z, 0.0, 1.0, generator=_generator(seed)))
    with _gg.get_default_graph().as_default():
        out = draw * _cast_to(stddev, draw.dtype) + _cast_to(mean, draw.dtype)
    return named(out, name)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = float32, seed: Any = None,
                     name: Optional[str] = None) -> Tensor:
    """Normal values, those beyond two standard deviations drawn again (a static shape only). Unlike
    TensorFlow's, it is drawn once, when made: a constant of the graph (scaled by ``stddev`` and moved by
    ``mean`` in the graph when they are tensors)."""
    with _gg.get_default_graph().as_default():
        if not builtins.any(isinstance(v, Tensor) for v in (mean, stddev)):
            return _gg.constant(_truncated(_shape_arg(shape), mean, stddev, as_dtype(dtype), seed), name=name)
        unit = _gg.constant(_truncated(_shape_arg(shape), 0.0, 1.0, as_dtype(dtype), seed))
        return named(unit * _cast_to(stddev, unit.dtype) + _cast_to(mean, unit.dtype), name)


def random_uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = float32, seed: Any = None,
                   name: Optional[str] = None) -> Tensor:
    dtype = as_dtype(dtype)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("random_uniform: maxval must be given for an integer dtype")
        with _gg.get_default_graph().as_default():  # drawn once, when made
            value = _gg.randint(minval, maxval, _shape_arg(shape), generator=_generator(seed)).astype(dtype)
            return _gg.constant(value, name=name)
    maxval = 1.0 if maxval is None else maxval
    if not builtins.any(isinstance(v, Tensor) for v in (minval, maxval)):
        return named(_random(shape, dtype, lambda z: _gg.rand_like(z, minval, maxval, generator=_generator(seed))),
                     name)
    unit = _random(shape, dtype, lambda z: _gg.rand_like(z, 0.0, 1.0, generator=_generator(seed)))
    with _gg.get_default_graph().as_default():
        low = _cast_to(minval, dtype)
        return named(low + unit * (_cast_to(maxval, dtype) - low), name)


random = types.SimpleNamespace(normal=random_normal, uniform=random_uniform, truncated_normal=truncated_normal,
                               set_random_seed=set_random_seed, set_seed=set_random_seed)


# ---- math ----------------------------------------------------------------------------------------------------
def _packed(value: Any) -> Any:
    """A list or tuple holding graph tensors stacked into one tensor, as TensorFlow converts it
    (``tf.stop_gradient([y])``, ``tf.reduce_mean([loss_a, loss_b])``); anything else as it is."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "as_list") and _holds_tensor(value):
        return _gg.stack([_packed(v) if isinstance(v, (list, tuple, Tensor)) else _gg.constant(
            v, dtype=default_dtype(v)) for v in value])
    return value


def _holds_tensor(value: Any) -> builtins.bool:
    return builtins.any(isinstance(v, Tensor) or isinstance(v, (list, tuple)) and _holds_tensor(v) for v in value)


def _same(fn):
    return in_graph(lambda *args, **kwargs: fn(*(_packed(a) if i == 0 else a for i, a in enumerate(args)),
                                               **kwargs))


add = in_graph(lambda x, y: _gg.add(_packed(x), _packed(y)))
subtract = in_graph(lambda x, y: _gg.subtract(_packed(x), _packed(y)))
multiply = in_graph(lambda x, y: _gg.multiply(_packed(x), _packed(y)))
def _true_divide(x: Any, y: Any) -> Tensor:
    """TensorFlow's ``truediv``: integers are divided as float64 (int32, int64) or float32 (8- and 16-bit)."""
    x, y = _packed(x), _packed(y)
    kinds = [v.dtype for v in (x, y) if isinstance(v, Tensor)]
    if kinds and builtins.all(d.kind in "iu" for d in kinds) and not builtins.any(isinstance(v, float) for v in (x, y)):
        wide = builtins.any(d.itemsize >= 4 for d in kinds)
        target = _gg.float64 if wide else _gg.float32
        x = _gg.astype(x, target) if isinstance(x, Tensor) else x
        y = _gg.astype(y, target) if isinstance(y, Tensor) else y
    return _gg.divide(x, y)


divide = in_graph(_true_divide)
truediv = div = realdiv = divide
floordiv = in_graph(lambda x, y: _gg.floor_divide(x, y))
mod = floormod = in_graph(lambda x, y: _gg.remainder(x, y))
maximum = in_graph(lambda x, y: _gg.maximum(x, y))
minimum = in_graph(lambda x, y: _gg.minimum(x, y))
pow = in_graph(lambda x, y: _gg.pow(x, y))  # noqa: A001
squared_difference = in_graph(lambda x, y: _gg.square(_gg.subtract(x, y)))
add_n = in_graph(lambda inputs: builtins.sum(inputs[1:], inputs[0]) if len(inputs) > 1 else _gg.identity(inputs[0]))
negative = neg = in_graph(lambda x: _gg.negative(x))

log = _same(_gg.log)
exp = _same(_gg.exp)
sqrt = _same(_gg.sqrt)
rsqrt = _same(_gg.rsqrt)
square = _same(_gg.square)
abs = _same(_gg.abs)  # noqa: A001
sign = _same(_gg.sign)
floor = _same(_gg.floor)
ceil = _same(_gg.ceil)
round = _same(_gg.round)  # noqa: A001
reciprocal = _same(_gg.reciprocal)
log1p = _same(_gg.log1p)
expm1 = _same(_gg.expm1)
sin, cos, tan = _same(_gg.sin), _same(_gg.cos), _same(_gg.tan)
sigmoid = _same(_gg.sigmoid)
tanh = _same(_gg.tanh)
erf = _same(_gg.erf)
is_nan, is_inf, is_finite = _same(_gg.isnan), _same(_gg.isinf), _same(_gg.isfinite)
equal = _same(_gg.equal)
not_equal = _same(_gg.not_equal)
less, less_equal = _same(_gg.less), _same(_gg.less_equal)
greater, greater_equal = _same(_gg.greater), _same(_gg.greater_equal)
logical_and, logical_or = _same(_gg.logical_and), _same(_gg.logical_or)
logical_not, logical_xor = _same(_gg.logical_not), _same(_gg.logical_xor)
identity = _same(_gg.identity)
stop_gradient = _same(_gg.stop_gradient)
einsum = _same(_gg.einsum)
tensordot = in_graph(lambda a, b, axes: _gg.tensordot(a, b, axes))


@in_graph
def matmul(a: Any, b: Any, transpose_a: builtins.bool = False, transpose_b: builtins.bool = False,
           adjoint_a: builtins.bool = False, adjoint_b: builtins.bool = False, a_is_sparse: Any = False,
           b_is_sparse: Any = False, output_type: Any = None) -> Tensor:
    """``a @ b`` of matrices (or batches of them), optionally transposed. As in TensorFlow, both must have
    rank 2 or more: a vector is an error (NumPy and graphgrad's ``matmul`` would treat it as one)."""
    for which, x in (("a", a), ("b", b)):
        rank = len(_gg.tensor(x).shape) if not isinstance(x, Tensor) else (None if x.shape is None else len(x.shape))
        if rank is not None and rank < 2:
            raise _gg.ShapeError(f"matmul: {which} must have rank 2 or more (TensorFlow's matmul multiplies "
                                 f"matrices), got rank {rank}; use tf.reshape or tf.expand_dims for a vector")
    if transpose_a or adjoint_a:
        a = _matrix_transpose(a)
    if transpose_b or adjoint_b:
        b = _matrix_transpose(b)
    return _gg.matmul(a, b)


def _matrix_transpose(x: Any) -> Tensor:
    """The last two axes swapped; a tensor of unknown rank is taken as a matrix."""
    if isinstance(x, Tensor) and x.shape is None:
        return _gg.ops.Transpose((1, 0)).apply(x)
    return _gg.swapaxes(x, -1, -2)


# ---- reductions ------------------------------------------------------------------------------------------------
def _reduction(fn, what: str):
    @in_graph
    def reduce(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
        if axis is None:
            axis = reduction_indices
        keep = keepdims if keepdims is not None else keep_dims
        return fn(_packed(input_tensor), axis=as_axis(axis), keepdims=builtins.bool(keep))

    reduce.__name__ = f"reduce_{what}"
    reduce.__doc__ = (f"``tf.reduce_{what}(x, axis=None, keepdims=False)``: the {what} over ``axis`` (all axes "
                      "for None); TF1's ``reduction_indices`` and ``keep_dims`` are accepted.")
    return reduce


reduce_sum = _reduction(_gg.sum, "sum")
def _mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """TensorFlow's mean: of integers, an integer (the quotient rounded towards zero)."""
    if x.dtype.kind not in "iub":
        return _gg.mean(x, axis=axis, keepdims=keepdims)
    total = _gg.sum(x, axis=axis, keepdims=keepdims)
    count = _gg.sum(_gg.ones_like(x), axis=axis, keepdims=keepdims)
    return _gg.astype(_gg.trunc(_gg.astype(total, _gg.float64) / _gg.astype(count, _gg.float64)), x.dtype)


reduce_mean = _reduction(_mean, "mean")
reduce_max = _reduction(_gg.max, "max")
reduce_min = _reduction(_gg.min, "min")
reduce_prod = _reduction(_gg.prod, "prod")
reduce_any = _reduction(_gg.any, "any")
reduce_all = _reduction(_gg.all, "all")
reduce_logsumexp = _reduction(_gg.logsumexp, "logsumexp")
reduce_std = _reduction(_gg.std, "std")
reduce_variance = _reduction(_gg.var, "variance")


def _arg_extremum(fn):
    @in_graph
    def arg(input: Any, axis: Any = None, name: Optional[str] = None, dimension: Any = None,
            output_type: Any = int64) -> Tensor:
        axis = dimension if axis is None else axis
        out = fn(input, axis=0 if axis is None else int(axis))
        return out if as_dtype(output_type) == int64 else _gg.astype(out, as_dtype(output_type))

    return arg


argmax = arg_max = _arg_extremum(_gg.argmax)
argmin = arg_min = _arg_extremum(_gg.argmin)


@in_graph
def cast(x: Any, dtype: Any) -> Tensor:
    return _gg.astype(x, as_dtype(dtype))


to_float = in_graph(lambda x: _gg.astype(x, float32))
to_int32 = in_graph(lambda x: _gg.astype(x, int32))
to_int64 = in_graph(lambda x: _gg.astype(x, int64))


@in_graph
def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any) -> Tensor:
    return _gg.clip(t, clip_value_min, clip_value_max)


@in_graph
def global_norm(t_list: Any) -> Tensor:
    """``sqrt(sum of every tensor's squared elements)`` (``None`` entries skipped)."""
    return _gg.sqrt(builtins.sum(_gg.sum(_gg.square(t)) for t in t_list if t is not None))


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None, name: Optional[str] = None) -> tuple:
    """``(tensors scaled by clip_norm / max(global_norm, clip_norm), global_norm)``."""
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else use_norm
    with _gg.get_default_graph().as_default():
        scale = clip_norm / _gg.maximum(norm, clip_norm)
        return [None if t is None else t * _gg.astype(scale, t.dtype) for t in t_list], norm


@in_graph
def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None) -> Tensor:
    norm = _gg.sqrt(_gg.sum(_gg.square(t), axis=as_axis(axes), keepdims=True))
    return t * (clip_norm / _gg.maximum(norm, clip_norm))


@in_graph
def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = None, keep_dims: Any = None):
    keep = builtins.bool(keepdims if keepdims is not None else keep_dims)
    if ord in ("euclidean", "fro", 2, 2.0):
        return _gg.sqrt(_gg.sum(_gg.square(tensor), axis=as_axis(axis), keepdims=keep))
    if ord in (1, 1.0):
        return _gg.sum(_gg.abs(tensor), axis=as_axis(axis), keepdims=keep)
    return _gg.max(_gg.abs(tensor), axis=as_axis(axis), keepdims=keep)


# ---- arrays ----------------------------------------------------------------------------------------------------
@in_graph
def concat(values: Any, axis: int) -> Tensor:
    need_rank("concat", *values)
    return _gg.concatenate(list(values), axis=int(axis))


@in_graph
def stack(values: Any, axis: int = 0) -> Tensor:
    """``values`` stacked along a new axis ``axis``; an item that is itself a list of tensors is
    stacked first (TensorFlow packs nested lists of tensors)."""
    values = [stack(v) if isinstance(v, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) for x in v)
              else v for v in values]
    need_rank("stack", *values)
    return _gg.stack(list(values), axis=axis)


pack = stack


@in_graph
def unstack(value: Any, num: Optional[int] = None, axis: int = 0) -> list:
    need_rank("unstack", value)
    n = value.shape[axis] if num is None else num
    if n is None:
        raise ValueError(f"unstack: the size of axis {axis} of shape {value.shape} is unknown; pass num=")
    return [_gg.squeeze(piece, axis) for piece in _gg.split(value, n, axis=axis)]


unpack = unstack


@in_graph
def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: Any = None) -> list:
    """Into ``num_or_size_splits`` equal pieces, or pieces of the sizes listed (one may be -1)."""
    need_rank("split", value)
    axis = int(axis) % len(value.shape)
    if isinstance(num_or_size_splits, int) and value.shape[axis] is None:  # equal pieces of a size known when run
        rest = value.shape[:axis] + value.shape[axis + 1:]
        if None in rest:
            raise _gg.ShapeError(f"split: only the split axis of shape {value.shape} may be unknown when "
                                 f"splitting it into {num_or_size_splits} equal pieces")
        pieces = _gg.reshape(_gg.moveaxis(value, axis, 0), (num_or_size_splits, -1) + rest)
        return [_gg.moveaxis(pieces[i], 0, axis) for i in builtins.range(num_or_size_splits)]
    if isinstance(num_or_size_splits, int):
        return _gg.split(value, num_or_size_splits, axis=axis)
    sizes = [int(s) for s in num_or_size_splits]
    if -1 in sizes:
        sizes[sizes.index(-1)] = value.shape[axis] - (builtins.sum(sizes) + 1)
    cuts, at = [], 0
    for s in sizes[:-1]:
        at += s
        cuts.append(at)
    return _gg.split(value, cuts, axis=int(axis))


@in_graph
def reshape(tensor: Any, shape: Any) -> Tensor:
    """``shape`` may hold one -1, and may be (or hold) graph tensors, e.g. ``[tf.shape(x)[0], -1]``."""
    shape = _shape_arg(shape)
    if isinstance(shape, tuple):
        return _gg.reshape(tensor, shape)
    return _gg.ops.ReshapeTo(allowzero=True).apply(tensor, shape)


@in_graph
def transpose(a: Any, perm: Any = None, conjugate: Any = False) -> Tensor:
    if perm is None:
        need_rank("transpose", a)
        return _gg.transpose(a)
    if isinstance(a, Tensor) and a.shape is None:  # rank known at run time: the permutation says it
        return _gg.ops.Transpose(tuple(int(p) for p in perm)).apply(a)
    return _gg.permute(a, *[int(p) for p in perm])


@in_graph
def expand_dims(input: Any, axis: Any = None, dim: Any = None) -> Tensor:
    axis = int(dim if axis is None else axis)
    if isinstance(input, Tensor) and input.shape is None:
        if axis < 0:
            need_rank("expand_dims (with a negative axis)", input)
        return _gg.ops.ExpandDims((axis,)).apply(input)
    return _gg.expand_dims(input, axis)


@in_graph
def squeeze(input: Any, axis: Any = None, squeeze_dims: Any = None) -> Tensor:
    axis = squeeze_dims if axis is None else axis
    need_rank("squeeze", input)
    return _gg.squeeze(input, as_axis(axis) if axis not in ([], ()) else None)


@in_graph
def tile(input: Any, multiples: Any) -> Tensor:
    need_rank("tile", input)
    return _gg.tile(input, tuple(int(m) for m in multiples))


@in_graph
def gather(params: Any, indices: Any, validate_indices: Any = None, axis: int = 0, batch_dims: int = 0) -> Tensor:
    need_rank("gather", params)
    return _gg.take(params, indices, axis=int(axis))


@in_graph
def one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None, axis: Any = None,
            dtype: Any = None) -> Tensor:
    """``depth``-wide one-hot rows (float32 by default), ``on_value``/``off_value`` where given."""
    dtype = as_dtype(dtype) or (default_dtype(on_value) if on_value is not None else None) or float32
    out = _gg.one_hot(_gg.astype(indices, int64), int(depth), dtype=dtype)
    if on_value is not None or off_value is not None:
        on = 1 if on_value is None else on_value
        off = 0 if off_value is None else off_value
        out = out * (on - off) + off
    if axis not in (None, -1):
        out = _gg.moveaxis(out, -1, int(axis))
    return out


@in_graph
def where(condition: Any, x: Any = None, y: Any = None) -> Tensor:
    """``where(c, x, y)`` selects; ``where(c)`` alone gives the coordinates of true elements (int64)."""
    if x is None and y is None:
        return _gg.argwhere(condition)
    return _gg.where(condition, x, y)


@in_graph
def shape(input: Any, out_type: Any = int32) -> Tensor:
    """``input``'s shape when it runs, a 1-D tensor (int32 by default, as in TensorFlow)."""
    return _gg.astype(_gg.shape_of(input), as_dtype(out_type))


@in_graph
def size(input: Any, out_type: Any = int32) -> Tensor:
    return _gg.astype(_gg.prod(_gg.shape_of(input)), as_dtype(out_type))


@in_graph
def rank(input: Any) -> Tensor:
    if isinstance(input, Tensor) and input.shape is not None:
        return _gg.constant(len(input.shape), dtype=int32)
    return _gg.astype(_gg.shape_of(_gg.shape_of(input))[0], int32)


@in_graph
def slice(input_: Any, begin: Any, size: Any) -> Tensor:  # noqa: A001
    need_rank("slice", input_)
    index = tuple(builtins.slice(int(b), None if int(s) == -1 else int(b) + int(s)) for b, s in zip(begin, size))
    return input_[index]


@in_graph
def reverse(tensor: Any, axis: Any) -> Tensor:
    need_rank("reverse", tensor)
    return _gg.flip(tensor, as_axis(axis))


@in_graph
def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0) -> Tensor:
    need_rank("pad", tensor)
    widths = [tuple(int(p) for p in pair) for pair in paddings]
    return _gg.pad(tensor, widths, mode=mode.lower(), constant_values=constant_values)


@in_graph
def cumsum(x: Any, axis: int = 0, exclusive: builtins.bool = False, reverse: builtins.bool = False) -> Tensor:
    need_rank("cumsum", x)
    if reverse:
        x = _gg.flip(x, int(axis))
    out = _gg.cumsum(x, axis=int(axis))
    if exclusive:
        out = out - x
    return _gg.flip(out, int(axis)) if reverse else out



from graphgrad.compat.tf._arrays import (Print, boolean_mask, cumprod, gather_nd, print,  # noqa: E402,A004
                                         sequence_mask)
from graphgrad.compat.tf import _segments  # noqa: E402

math = types.SimpleNamespace(
    add=add, subtract=subtract, multiply=multiply, divide=divide, truediv=truediv, floordiv=floordiv, pow=pow,
    maximum=maximum, minimum=minimum, log=log, exp=exp, sqrt=sqrt, rsqrt=rsqrt, square=square, abs=abs, sign=sign,
    sigmoid=sigmoid, tanh=tanh, log1p=log1p, reciprocal=reciprocal, equal=equal, not_equal=not_equal, less=less,
    greater=greater, less_equal=less_equal, greater_equal=greater_equal, logical_and=logical_and,
    logical_or=logical_or, logical_not=logical_not, reduce_sum=reduce_sum, reduce_mean=reduce_mean,
    reduce_max=reduce_max, reduce_min=reduce_min, reduce_prod=reduce_prod, reduce_any=reduce_any,
    reduce_all=reduce_all, reduce_logsumexp=reduce_logsumexp, argmax=argmax, argmin=argmin,
    squared_difference=squared_difference, add_n=add_n, negative=negative, cumsum=cumsum, is_nan=is_nan,
    is_inf=is_inf, is_finite=is_finite, erf=erf, floor=floor, ceil=ceil, round=round, reduce_std=reduce_std,
    reduce_variance=reduce_variance, cumprod=cumprod, floormod=floormod, mod=mod,
    **{name: getattr(_segments, name) for name in (
        "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod", "unsorted_segment_sum",
        "unsorted_segment_mean", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
        "unsorted_segment_sqrt_n")})
from graphgrad.compat.tf._segments import (depth_to_space, scatter_nd, space_to_depth,  # noqa: E402,F401
                                           tensor_scatter_nd_add, tensor_scatter_nd_sub, tensor_scatter_nd_update,
                                           unique)
for _name in ("segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod", "unsorted_segment_sum",
              "unsorted_segment_mean", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
              "unsorted_segment_sqrt_n"):
    globals()[_name] = getattr(_segments, _name)  # TF1 has them at the top level too


class _Logging:
    """``tf.logging``: verbosity levels accepted; messages go to Python's logging."""

    DEBUG, INFO, WARN, WARNING, ERROR, FATAL = 10, 20, 30, 30, 40, 50

    def set_verbosity(self, level: int) -> None:
        import logging as _logging

        _logging.getLogger("graphgrad.compat.tf").setLevel(level)

    def __getattr__(self, level: str):
        import logging as _logging

        return getattr(_logging.getLogger("graphgrad.compat.tf"), level.lower())


logging = _Logging()


# the submodules, imported before the module __getattr__ below exists (which would answer for them)
from graphgrad.compat.tf import losses, nn, summary, train  # noqa: E402
from graphgrad.compat.tf import layers, rnn as _rnn  # noqa: E402
from graphgrad.compat.tf._flags import app, flags  # noqa: E402
from graphgrad.compat.tf._gfile import gfile, io  # noqa: E402
from graphgrad.compat.tf import data  # noqa: E402
from graphgrad.compat.tf._more import (argsort, case, cholesky, cond, convert_to_tensor, count_nonzero,  # noqa: E402
                                       diag, diag_part, div_no_nan, eye, identity_n, is_tensor, linalg, log_sigmoid,
                                       map_fn, matrix_band_part, matrix_determinant, matrix_inverse, matrix_solve,
                                       metrics, multinomial, random_shuffle, sort, trace)
from graphgrad.compat.tf import _more  # noqa: E402
from graphgrad.compat.tf._control import TensorArray, foldl, foldr, scan, while_loop  # noqa: E402
from graphgrad.compat.tf import _control  # noqa: E402
from graphgrad.compat.tf.data import errors  # noqa: E402

nn.rnn_cell = types.SimpleNamespace(
    RNNCell=_rnn.RNNCell, BasicRNNCell=_rnn.BasicRNNCell, BasicLSTMCell=_rnn.BasicLSTMCell, LSTMCell=_rnn.LSTMCell,
    GRUCell=_rnn.GRUCell, MultiRNNCell=_rnn.MultiRNNCell, LSTMStateTuple=_rnn.LSTMStateTuple,
    DropoutWrapper=_rnn.DropoutWrapper)
nn.dynamic_rnn, nn.static_rnn = _rnn.dynamic_rnn, _rnn.static_rnn
nn.bidirectional_dynamic_rnn = _rnn.bidirectional_dynamic_rnn
nn.static_bidirectional_rnn = _rnn.static_bidirectional_rnn
# the names of TensorFlow before 1.0, which early TF1 programs and tutorials still use
scalar_summary, histogram_summary = summary.scalar, summary.histogram
merge_summary, merge_all_summaries = summary.merge, summary.merge_all
train.SummaryWriter = summary.FileWriter
train.ExponentialMovingAverage = _more.ExponentialMovingAverage
random.categorical, random.shuffle = _more.categorical, random_shuffle
math.log_sigmoid, math.count_nonzero, math.divide_no_nan = log_sigmoid, count_nonzero, div_no_nan
nn.log_sigmoid = log_sigmoid
mul, sub = multiply, subtract
reverse_sequence = _rnn.reverse_sequence
from graphgrad.compat.tf.contrib import contrib  # noqa: E402
contrib.seq2seq = types.SimpleNamespace(sequence_loss=_more.sequence_loss)
contrib.legacy_seq2seq = types.SimpleNamespace(sequence_loss_by_example=_more.sequence_loss_by_example,
                                               sequence_loss=_more.legacy_sequence_loss,
                                               rnn_decoder=_more.rnn_decoder)
from graphgrad.compat.tf import examples  # noqa: E402


nest = types.SimpleNamespace(flatten=_control.flatten, pack_sequence_as=_control.pack_sequence_as,
                             map_structure=_control.map_structure, is_nested=_control.is_nested,
                             assert_same_structure=_control.assert_same_structure)
compat = types.SimpleNamespace(v1=sys.modules[__name__])


def __getattr__(name: str) -> Any:
    if name == "tuple":  # not bound in this module, whose code uses the built-in tuple
        return _more.tuple_
    raise AttributeError(f"graphgrad.compat.tf has no {name!r} (TensorFlow's tf.{name} is not mapped; see "
                         "docs/tensorflow.md for what is)")


def install() -> None:
    """Make ``import tensorflow`` and ``import tensorflow.compat.v1`` (and their ``nn``, ``train``,
    ``losses``, ``summary``, ``layers``) resolve to this namespace in this process."""
    me = sys.modules[__name__]
    # TF1 programs read ``x.shape.as_list()`` and ``x.shape[1].value``: in a process running one, a
    # tensor's shape is a tuple with those (graphgrad's own code sees the same tuple)
    if not getattr(_gg.Tensor, "_tf_shapes", False):
        _gg.Tensor.shape = property(_tf_shape, doc=_gg.Tensor.shape.__doc__)
        _gg.Tensor._tf_shapes = True
    if not hasattr(_gg.Tensor, "op"):  # TF1's ``tensor.op``: the operation that makes it (``tf.assign(v, x).op``)
        _gg.Tensor.op = property(lambda self: self._node if isinstance(self._node, _gg.GraphNode) else None)
    compat_module = types.ModuleType("tensorflow.compat")
    compat_module.v1 = me
    for prefix in ("tensorflow", "tensorflow.compat.v1"):
        sys.modules[prefix] = me
        for sub in ("nn", "train", "losses", "summary", "layers"):
            sys.modules[f"{prefix}.{sub}"] = getattr(me, sub)
    sys.modules["tensorflow.compat"] = compat_module
    for prefix in ("tensorflow.contrib", "tensorflow.compat.v1.contrib"):
        sys.modules[prefix] = contrib
        for sub in ("rnn", "layers", "framework", "seq2seq", "legacy_seq2seq"):
            sys.modules[f"{prefix}.{sub}"] = getattr(contrib, sub)
    # TensorBoard's writer uses TensorFlow when ``import tensorflow`` works: this namespace is not it, so
    # tell TensorBoard (its documented switch) to use its own stand-in
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    sys.modules["tensorflow.examples"] = examples
    sys.modules["tensorflow.examples.tutorials"] = examples.tutorials
    sys.modules["tensorflow.examples.tutorials.mnist"] = examples.mnist
    sys.modules["tensorflow.examples.tutorials.mnist.input_data"] = examples.input_data
    sys.modules["tensorflow.examples.tutorials.mnist.mnist"] = examples.model
