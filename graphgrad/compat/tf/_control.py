"""TF1's control flow decided when the graph runs: ``tf.while_loop``, ``tf.cond`` on a fed predicate,
``tf.TensorArray``, and ``tf.scan`` / ``tf.map_fn`` / ``tf.foldl`` / ``tf.foldr`` built on them.

The loops and branches are graphgrad's graph-level ``while_loop`` / ``cond`` (``graphgrad.graph.
control_flow``); this module maps TensorFlow's conventions onto them: nested structures of loop
variables (lists, tuples, namedtuples such as ``LSTMStateTuple``, dicts), ``TensorArray`` loop
variables (carried as their rows), ``shape_invariants``, ``maximum_iterations``, what is returned
for one loop variable, and ``strict``.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import as_dtype, int32, named

Tensor = _gg.Tensor
_cf = _gg.graph.control_flow


def _tf():
    import graphgrad.compat.tf as tf

    return tf


# ---- nested structures (TensorFlow's ``nest``: dicts by sorted key; TensorArrays and shapes are leaves) ----
def _is_sequence(x: Any) -> bool:
    if isinstance(x, dict):
        return True
    return isinstance(x, (list, tuple)) and not hasattr(x, "as_list") and not getattr(x, "is_variable", False)


def flatten(structure: Any) -> list:
    """The leaves of ``structure`` in TensorFlow's order."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if _is_sequence(structure):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure: Any, leaves: list) -> Any:
    """``structure`` with its leaves replaced, in order, by ``leaves``."""
    it = iter(leaves)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            values = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, values[k]) for k in s) if type(s) is not dict else {k: values[k] for k in s}
        if _is_sequence(s):
            items = [build(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return next(it)

    out = build(structure)
    rest = builtins.list(it)
    if rest:
        raise ValueError(f"pack_sequence_as: {len(rest)} values more than the structure has leaves")
    return out


def map_structure(fn: Callable, *structures: Any) -> Any:
    """``fn`` applied to the corresponding leaves of ``structures``, in the first one's structure."""
    columns = [flatten(s) for s in structures]
    for c in columns[1:]:
        if len(c) != len(columns[0]):
            raise ValueError("map_structure: the structures don't have the same number of elements")
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*columns)])


def is_nested(structure: Any) -> bool:
    return _is_sequence(structure)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True) -> None:
    _check_same_structure(nest1, nest2, "assert_same_structure")


def _flatten_up_to(shallow: Any, deep: Any) -> list:
    """``deep``'s parts at the leaves of ``shallow`` (shape invariants given per loop variable)."""
    if isinstance(shallow, dict):
        return [leaf for k in sorted(shallow) for leaf in _flatten_up_to(shallow[k], deep[k])]
    if _is_sequence(shallow):
        if not isinstance(deep, (list, tuple)) or len(deep) != len(shallow):
            raise ValueError(f"shape_invariants must have the structure of loop_vars, got {deep!r}")
        return [leaf for s, d in zip(shallow, deep) for leaf in _flatten_up_to(s, d)]
    return [deep]


def _check_same_structure(expected: Any, got: Any, what: str) -> None:
    a, b = flatten(expected), flatten(got)
    if len(a) != len(b):
        raise ValueError(f"{what}: the two structures don't have the same number of elements ({len(a)} and "
                         f"{len(b)})")


# ---- TensorArray -------------------------------------------------------------------------------------------
class TensorArray:
    """TF1's ``tf.TensorArray``: a list of tensors of one dtype written and read by index, the way
    loop bodies collect their outputs. Each ``write`` (and ``unstack``, ``scatter``) returns a new
    TensorArray, which the program must use from then on (as in TensorFlow); inside
    ``tf.while_loop`` it is a loop variable like a tensor.

    ``size`` is the declared number of elements (a number or a scalar tensor), or, with
    ``dynamic_size=True``, where writes past the end grow the array. Elements are stored as the rows
    of one tensor (``flow``). Reading an element not written yet gives zeros, where TensorFlow raises.
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: Any = None, clear_after_read: Any = None,
                 tensor_array_name: Any = None, handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True, name: Any = None,
                 _info: Optional[dict] = None):
        tf = _tf()
        self._dtype = as_dtype(dtype)
        self._dynamic = builtins.bool(dynamic_size)
        if _info is not None:
            self._info = _info
        else:
            shape = None
            if element_shape is not None:
                shape = _tf_dims(element_shape)
            self._info = {"element_shape": shape, "infer_shape": infer_shape}
        if size is None and flow is None and not self._dynamic:
            raise ValueError("TensorArray: size must be given unless dynamic_size=True")
        self._size = None if size is None else (size if isinstance(size, Tensor) else
                                                 tf.constant(size, dtype=int32))
        if flow is None:
            elem = self._info["element_shape"]  # (no rows yet: an unknown dimension may be 0)
            with _gg.get_default_graph().as_default():
                flow = tf.zeros((0,) + tuple(0 if d is None else d for d in elem or ()), dtype=self._dtype)
        self._flow = flow

    # ---- properties -----------------------------------------------------------------------------------
    @property
    def flow(self) -> Tensor:
        """The tensor holding the elements (as rows)."""
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        tf = _tf()
        return tf.TensorShape(self._info["element_shape"])

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    @property
    def handle(self) -> Tensor:
        return self._flow

    def _with_flow(self, flow: Tensor, size: Any = None) -> "TensorArray":
        return TensorArray(self._dtype, size=self._size if size is None else size, dynamic_size=self._dynamic,
                           flow=flow, _info=self._info)

    def _learn_shape(self, shape: Any) -> None:
        if not self._info.get("infer_shape", True):
            return
        shape = None if shape is None else tuple(shape)
        known = self._info["element_shape"]
        if known is None:
            self._info["element_shape"] = shape
        elif shape is not None:
            if len(known) != len(shape) or any(a is not None and b is not None and a != b
                                               for a, b in zip(known, shape)):
                raise ValueError(f"TensorArray: could not write an element of shape {shape} into a TensorArray "
                                 f"whose elements have shape {known}")
            self._info["element_shape"] = tuple(a if a is not None else b for a, b in zip(known, shape))

    # ---- operations -----------------------------------------------------------------------------------
    def write(self, index: Any, value: Any, name: Any = None) -> "TensorArray":
        """A TensorArray with element ``index`` set to ``value``."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            value = tf.convert_to_tensor(value, dtype=self._dtype)
            self._learn_shape(value.shape)
            return self._with_flow(_cf.list_write(self._flow, _index(index), value))

    def read(self, index: Any, name: Any = None) -> Tensor:
        """Element ``index``."""
        with _gg.get_default_graph().as_default():
            out = _cf.list_read(self._stacked(), _index(index))
            return named(out, name) if name else out

    def _stacked(self) -> Tensor:
        return _cf.list_stack(self._flow, self._info["element_shape"])

    def stack(self, name: Any = None) -> Tensor:
        """Every element, stacked along a new first axis."""
        with _gg.get_default_graph().as_default():
            rows = self._flow if self._size is None or self._dynamic else _cf.list_resize(self._flow, self._size)
            out = _cf.list_stack(rows, self._info["element_shape"])
            return named(out, name) if name else out

    def gather(self, indices: Any, name: Any = None) -> Tensor:
        """The elements at ``indices``, stacked."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            return tf.gather(self.stack(), indices, name=name)

    def concat(self, name: Any = None) -> Tensor:
        """The elements concatenated along their first axis."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            stacked = self.stack()
            elem = self._info["element_shape"]
            if elem is None or not elem:
                raise ValueError("TensorArray.concat: the elements must have a known rank of at least 1")
            rest = [d if d is not None else tf.shape(stacked)[i + 2] for i, d in enumerate(elem[1:])]
            return tf.reshape(stacked, [-1] + rest, name=name)

    def unstack(self, value: Any, name: Any = None) -> "TensorArray":
        """A TensorArray whose elements are the slices of ``value`` along its first axis."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            value = tf.convert_to_tensor(value, dtype=self._dtype)
            if value.shape is not None:
                self._learn_shape(tuple(value.shape)[1:])
            size = self._size if self._size is not None and not self._dynamic else \
                (tf.shape(value)[0] if value.shape is None or value.shape[0] is None else
                 tf.constant(int(value.shape[0]), dtype=int32))
            return self._with_flow(value, size)

    def scatter(self, indices: Any, value: Any, name: Any = None) -> "TensorArray":
        """A TensorArray with element ``indices[k]`` set to ``value[k]`` (``indices`` of a length known
        when the graph is built)."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            value = tf.convert_to_tensor(value, dtype=self._dtype)
            indices = tf.convert_to_tensor(indices)
            if indices.shape is None or indices.shape[0] is None:
                raise ValueError("TensorArray.scatter: the number of indices must be known when the graph is built")
            out = self
            for k in builtins.range(int(indices.shape[0])):
                out = out.write(indices[k], value[k])
            return out

    def split(self, value: Any, lengths: Any, name: Any = None) -> "TensorArray":
        """A TensorArray whose elements are consecutive pieces of ``value`` of the given (equal) lengths."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            value = tf.convert_to_tensor(value, dtype=self._dtype)
            lengths = [int(x) for x in _gg.Tensor(lengths).numpy().reshape(-1)] if not isinstance(lengths, Tensor) \
                or not lengths.is_symbolic else None
            if lengths is None or len(set(lengths)) > 1:
                raise ValueError("TensorArray.split: lengths must be equal and known when the graph is built "
                                 "(elements of one shape)")
            pieces = tf.reshape(value, [len(lengths), lengths[0]] + [d if d is not None else -1
                                                                       for d in tuple(value.shape)[1:]])
            return self.unstack(pieces)

    def size(self, name: Any = None) -> Tensor:
        """The number of elements: the declared size, or the number written to a dynamic array."""
        tf = _tf()
        with _gg.get_default_graph().as_default():
            if self._size is not None and not self._dynamic:
                return self._size
            return tf.shape(self._flow, out_type=int32)[0]

    def identity(self) -> "TensorArray":
        return self

    def close(self, name: Any = None):
        return _tf().no_op(name=name or "TensorArrayClose")

    def __repr__(self) -> str:
        return f"<TensorArray dtype={self._dtype} element_shape={self._info['element_shape']}>"


def _tf_dims(shape: Any):
    if hasattr(shape, "as_list"):
        try:
            return tuple(shape.as_list())
        except ValueError:
            return None
    return tuple(None if getattr(d, "value", d) is None else int(getattr(d, "value", d)) for d in shape)


def _index(index: Any) -> Any:
    return index if isinstance(index, Tensor) else _tf().constant(int(index), dtype=int32)


# ---- while_loop --------------------------------------------------------------------------------------------
def _leaf_tensor(leaf: Any) -> Tensor:
    if isinstance(leaf, TensorArray):
        return leaf.flow
    if isinstance(leaf, Tensor) and leaf.is_symbolic:
        return leaf
    return _tf().convert_to_tensor(leaf)


def _as_leaves(template: list, tensors: list) -> list:
    """Loop values handed to the program: TensorArrays rebuilt around their rows."""
    return [t._with_flow(x) if isinstance(t, TensorArray) else x for t, x in zip(template, tensors)]


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               name: Optional[str] = None, maximum_iterations: Any = None, return_same_structure: bool = False) -> Any:
    """Repeat ``body`` while ``cond`` holds, decided when the graph runs (TF1's ``tf.while_loop``).

    ``loop_vars`` is a (nested) list or tuple of tensors and TensorArrays (a single tensor is taken
    as a list of one); ``cond(*loop_vars)`` returns a boolean scalar, ``body(*loop_vars)`` the new
    values in the same structure. Returns the final values in the structure ``body`` returns; one
    loop value alone is returned as it is, unless ``return_same_structure``. ``parallel_iterations``
    and ``swap_memory`` concern TensorFlow's scheduling and change nothing here.
    """
    tf = _tf()
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    if not isinstance(loop_vars, (list, tuple)):
        loop_vars = [loop_vars]
    if builtins.len(flatten(loop_vars)) == 0:
        raise ValueError("while_loop: no loop variables given")
    graph = _gg.get_default_graph()
    with graph.as_default():
        leaves = flatten(loop_vars)
        tensors = [_leaf_tensor(v) for v in leaves]
        given = _flatten_up_to(loop_vars, shape_invariants) if shape_invariants is not None else [False] * len(leaves)
        # (a TensorArray's elements keep their shape; its number of elements may change)
        invariants = [_array_invariant(v) if isinstance(v, TensorArray) else
                      (False if inv is False else _tf_dims_or_none(inv)) for v, inv in zip(leaves, given)]
        body_structure: list = []

        def run_cond(*xs):
            out = cond(*pack_sequence_as(loop_vars, _as_leaves(leaves, builtins.list(xs))))
            return tf.convert_to_tensor(out, dtype=tf.bool)

        def run_body(*xs):
            out = body(*pack_sequence_as(loop_vars, _as_leaves(leaves, builtins.list(xs))))
            if not _is_sequence(out):
                out = [out]
            _check_same_structure(loop_vars, out, "while_loop: body's result and loop_vars")
            body_structure.append(out)
            flat = flatten(out)
            for template, new in zip(leaves, flat):
                if isinstance(template, TensorArray) != isinstance(new, TensorArray):
                    raise TypeError("while_loop: body must return a TensorArray where loop_vars has one")
            return [_leaf_tensor(v) for v in flat]

        results = _cf.while_loop(run_cond, run_body, tensors,
                                 shape_invariants=[inv for inv in invariants],
                                 maximum_iterations=maximum_iterations, back_prop=back_prop,
                                 name=name or "while")
        packed = pack_sequence_as(body_structure[0], _as_leaves(leaves, results))
        if not return_same_structure and len(results) == 1:
            return packed[0]  # (TensorFlow's: the body's structure holding one value gives that value)
        return packed


def _array_invariant(array: TensorArray):
    elem = array._info["element_shape"]
    return None if elem is None else (None,) + tuple(elem)


def _tf_dims_or_none(inv: Any):
    if inv is None:
        return None
    return _tf_dims(inv)


# ---- cond --------------------------------------------------------------------------------------------------
def runtime_cond(pred: Tensor, true_fn: Callable, false_fn: Callable, strict: bool, name: Optional[str]) -> Any:
    """``tf.cond`` on a predicate known when the graph runs: only the branch taken runs."""
    tf = _tf()
    graph = _gg.get_default_graph()
    structures: list = []

    def branch(fn: Callable) -> Callable:
        def run() -> list:
            out = fn()
            structures.append(out)
            leaves = flatten(out)
            return [leaf if isinstance(leaf, _gg.GraphNode) or (isinstance(leaf, Tensor) and leaf.is_symbolic)
                    else _leaf_tensor(leaf) for leaf in leaves]

        return run

    with graph.as_default():
        pred = tf.cast(pred, tf.bool) if pred.dtype != _gg.bool_ else pred
        if pred.shape is not None and len(pred.shape):
            pred = tf.reshape(pred, [])
        outs = _cf.cond(pred, branch(true_fn), branch(false_fn), name=name or "cond")
        _check_same_structure(structures[0], structures[1], "cond: true_fn and false_fn")
        result = pack_sequence_as(structures[0], outs)
        if not strict and isinstance(result, (list, tuple)) and not hasattr(result, "_fields") and len(result) == 1:
            return result[0]
        return result


# ---- functional loops --------------------------------------------------------------------------------------
def _first_dim(t: Tensor) -> Tensor:
    tf = _tf()
    if t.shape is not None and len(t.shape) and t.shape[0] is not None:
        return tf.constant(int(t.shape[0]), dtype=int32)
    return tf.shape(t, out_type=int32)[0]


def _elements(elems: Any) -> tuple:
    tf = _tf()
    leaves = [tf.convert_to_tensor(e) for e in flatten(elems)]
    if not leaves:
        raise ValueError("elems must be a tensor or a structure of tensors")
    n = _first_dim(leaves[0])
    arrays = [TensorArray(e.dtype, size=n, element_shape=None if e.shape is None else tuple(e.shape)[1:]).unstack(e)
              for e in leaves]
    return leaves, n, arrays


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
         swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False, name: Optional[str] = None) -> Any:
    """The accumulators ``a = fn(a, x)`` over the elements ``x`` of ``elems`` (slices along the first
    axis), stacked; ``a`` starts at ``initializer``, or at the first element, which is then the first
    result (TF1's ``tf.scan``). ``reverse`` scans from the last element."""
    tf = _tf()
    graph = _gg.get_default_graph()
    with graph.as_default():
        n, arrays, first, a0, start = _start(elems, initializer, reverse)
        a_leaves = [tf.convert_to_tensor(a) for a in flatten(a0)]
        outs = [TensorArray(a.dtype, size=n, element_shape=None if a.shape is None else tuple(a.shape)) for a in a_leaves]
        if initializer is None:
            outs = [ta.write(first, a) for ta, a in zip(outs, a_leaves)]

        def body(i, a, tas):
            x = pack_sequence_as(elems, [ta.read(i) for ta in arrays])
            new = fn(pack_sequence_as(a0, builtins.list(a)), x)
            new_leaves = [tf.convert_to_tensor(v) for v in flatten(new)]
            tas = [ta.write(i, v) for ta, v in zip(tas, new_leaves)]
            return (i - 1 if reverse else i + 1), new_leaves, tas

        def cond(i, a, tas):
            return tf.greater_equal(i, 0) if reverse else tf.less(i, n)

        _, _, tas = while_loop(cond, body, (start, a_leaves, outs), back_prop=back_prop, name=name or "scan",
                               return_same_structure=True)
        return pack_sequence_as(a0, [ta.stack() for ta in tas])


def _start(elems: Any, initializer: Any, reverse: bool) -> tuple:
    """Where a scan or fold over ``elems`` starts: ``(n, arrays, first, a0, start)`` with the elements as
    TensorArrays, the accumulator's first value ``a0`` (the first element when there is no
    ``initializer``, which is then at index ``first``) and the first index the body reads."""
    tf = _tf()
    _, n, arrays = _elements(elems)
    if initializer is None:
        first = n - 1 if reverse else tf.constant(0)
        a0 = pack_sequence_as(elems, [ta.read(first) for ta in arrays])
        return n, arrays, first, a0, (n - 2 if reverse else tf.constant(1))
    return n, arrays, None, initializer, (n - 1 if reverse else tf.constant(0))


def _fold(fn: Callable, elems: Any, initializer: Any, back_prop: bool, name: str, reverse: bool) -> Any:
    tf = _tf()
    with _gg.get_default_graph().as_default():
        n, arrays, first, a0, start = _start(elems, initializer, reverse)
        a_leaves = [tf.convert_to_tensor(a) for a in flatten(a0)]

        def body(i, a):
            x = pack_sequence_as(elems, [ta.read(i) for ta in arrays])
            new = fn(pack_sequence_as(a0, builtins.list(a)), x)
            return (i - 1 if reverse else i + 1), [tf.convert_to_tensor(v) for v in flatten(new)]

        def cond(i, a):
            return tf.greater_equal(i, 0) if reverse else tf.less(i, n)

        _, a = while_loop(cond, body, (start, a_leaves), back_prop=back_prop, name=name, return_same_structure=True)
        return pack_sequence_as(a0, builtins.list(a))


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """``fn(...fn(fn(initializer, x0), x1)..., xn)`` over the elements of ``elems`` (TF1's ``tf.foldl``;
    without ``initializer`` the first element starts)."""
    return _fold(fn, elems, initializer, back_prop, name or "foldl", reverse=False)


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """:func:`foldl` from the last element to the first (TF1's ``tf.foldr``)."""
    return _fold(fn, elems, initializer, back_prop, name or "foldr", reverse=True)


def map_fn_loop(fn: Callable, elems: Any, dtype: Any, back_prop: bool, name: Optional[str]) -> Any:
    """``tf.map_fn`` as a loop (the number of elements known only when the graph runs)."""
    tf = _tf()
    with _gg.get_default_graph().as_default():
        leaves, n, arrays = _elements(elems)
        out_structure = elems if dtype is None else dtype
        out_dtypes = [leaf.dtype for leaf in leaves] if dtype is None else [as_dtype(d) for d in flatten(dtype)]
        outs = [TensorArray(d, size=n) for d in out_dtypes]

        def body(i, tas):
            x = pack_sequence_as(elems, [ta.read(i) for ta in arrays])
            y = [tf.convert_to_tensor(v) for v in flatten(fn(x))]
            if len(y) != len(tas):
                raise ValueError(f"map_fn: fn returned {len(y)} values where dtype says {len(tas)}")
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, y)]

        _, tas = while_loop(lambda i, tas: tf.less(i, n), body, (tf.constant(0), outs), back_prop=back_prop,
                            name=name or "map", return_same_structure=True)
        return pack_sequence_as(out_structure, [ta.stack() for ta in tas])
