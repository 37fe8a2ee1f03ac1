"""``tf.data`` as TF1 programs use it: a ``Dataset`` pipeline (``from_tensor_slices``, ``from_tensors``,
``range``, ``from_generator``, ``zip``; ``map``, ``filter``, ``shuffle``, ``batch``, ``padded_batch``,
``repeat``, ``take``, ``skip``, ``prefetch``, ``cache``, ``concatenate``) read through an iterator
(``make_one_shot_iterator``, ``make_initializable_iterator``, ``Iterator.from_structure`` with
``make_initializer``) whose ``get_next()`` tensors the session fills.

The pipeline runs in Python on NumPy values, as TensorFlow's runs outside the graph. ``get_next()``
gives placeholders; a :class:`graphgrad.compat.tf.Session` run that needs them (and is not fed them)
takes the iterator's next element and feeds it, so each such run advances the iterator once, as in
TensorFlow; running ``iterator.initializer`` (with a ``feed_dict`` for datasets made from placeholders)
starts it again. Past the last element the run raises ``tf.errors.OutOfRangeError``. A ``map`` or
``filter`` function is traced once into a graph of its own, as TensorFlow traces it, and run per element.
"""
from __future__ import annotations

import itertools
import types
from typing import Any, Callable, Iterator as _PyIterator, Optional

from graphgrad.backend import np

import graphgrad as _gg
from graphgrad.compat.tf._common import as_dtype, default_dtype, graph_state


class OpError(Exception):
    """The base of ``tf.errors``' exceptions."""

    def __init__(self, node_def: Any = None, op: Any = None, message: str = "", *args) -> None:
        if isinstance(node_def, str) and not message:
            message, node_def = node_def, None
        super().__init__(message)
        self.node_def, self.op, self.message = node_def, op, message


class OutOfRangeError(OpError):
    """Raised by a session run that needs the next element of an iterator that has none left."""


class InvalidArgumentError(OpError, ValueError):
    pass


class NotFoundError(OpError, FileNotFoundError):
    pass


errors = types.SimpleNamespace(OpError=OpError, OutOfRangeError=OutOfRangeError,
                               InvalidArgumentError=InvalidArgumentError, NotFoundError=NotFoundError)


# ---- nested structures (a leaf, a tuple/list, a dict) -------------------------------------------------------
def _flatten(structure: Any) -> list:
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in _flatten(structure[key])]
    if isinstance(structure, tuple) and not hasattr(structure, "as_list"):  # a list (or a shape) is one leaf
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(template: Any, leaves: _PyIterator) -> Any:
    if isinstance(template, dict):
        return {key: _pack(template[key], leaves) for key in sorted(template)}
    if isinstance(template, tuple) and not hasattr(template, "as_list"):
        items = [_pack(item, leaves) for item in template]
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    return next(leaves)


def _repack(template: Any, leaves: list) -> Any:
    return _pack(template, iter(leaves))


def _as_array(value: Any) -> np.ndarray:
    """A leaf as a NumPy array, with TensorFlow's dtypes for Python values (floats float32, ints int32)."""
    if isinstance(value, _gg.Tensor):
        return value.numpy()
    dtype = default_dtype(value)
    return np.asarray(value, dtype=None if dtype is None else np.dtype(dtype))


class _Spec:
    """One leaf's dtype and static shape (``None`` where it varies)."""

    def __init__(self, dtype: Any, shape: tuple) -> None:
        self.dtype, self.shape = np.dtype(dtype), tuple(shape)

    @staticmethod
    def merge(a: "_Spec", b: "_Spec") -> "_Spec":
        if len(a.shape) != len(b.shape):
            return _Spec(a.dtype, ())
        return _Spec(a.dtype, tuple(x if x == y else None for x, y in zip(a.shape, b.shape)))


def _spec_of(leaf: Any) -> _Spec:
    if isinstance(leaf, _gg.Tensor):
        return _Spec(leaf.dtype, leaf.shape if leaf.shape is not None else ())
    array = _as_array(leaf)
    return _Spec(array.dtype, array.shape)


# ---- datasets ---------------------------------------------------------------------------------------------------
def _chunks(source, batch_size: int, drop_remainder: bool):
    """Lists of ``batch_size`` consecutive elements of ``source`` (the last shorter unless
    ``drop_remainder``)."""
    while True:
        chunk = list(itertools.islice(source, int(batch_size)))
        if not chunk or drop_remainder and len(chunk) < batch_size:
            return
        yield chunk


class _Structured:
    """What a dataset and an iterator tell of their elements (``_structure`` and ``_specs``)."""

    @property
    def output_types(self) -> Any:
        return _repack(self._structure, [_gg.as_dtype(s.dtype) for s in self._specs])

    @property
    def output_shapes(self) -> Any:
        from graphgrad.compat.tf import TensorShape

        return _repack(self._structure, [TensorShape(s.shape) for s in self._specs])


class Dataset(_Structured):
    """A pipeline of elements (a structure of arrays: one array, a tuple, or a dict of them)."""

    def __init__(self, make: Callable, structure: Any, specs: list, inputs: tuple = ()) -> None:
        #: ``make(resolve)`` gives a fresh Python iterator of elements, each a list of leaf arrays;
        #: ``resolve(tensors)`` evaluates graph tensors the dataset was made from (at the initializer's run)
        self._make, self._structure, self._specs, self._inputs = make, structure, specs, inputs

    # -- sources
    @staticmethod
    def from_tensor_slices(tensors: Any) -> "Dataset":
        """One element per row of the leaves (all with the same first dimension)."""
        leaves = _flatten(tensors)
        symbolic = [leaf for leaf in leaves if isinstance(leaf, _gg.Tensor) and leaf.is_symbolic]
        specs = [_spec_of(leaf) for leaf in leaves]
        specs = [_Spec(s.dtype, s.shape[1:]) for s in specs]

        def make(resolve):
            arrays = [_as_array(leaf) for leaf in resolve(leaves)]
            count = len(arrays[0])
            if any(len(a) != count for a in arrays):
                raise InvalidArgumentError(f"from_tensor_slices: the leaves' first dimensions differ: "
                                           f"{[len(a) for a in arrays]}")
            return ([a[i] for a in arrays] for i in range(count))

        return Dataset(make, _structure_of(tensors), specs, tuple(symbolic))

    @staticmethod
    def from_tensors(tensors: Any) -> "Dataset":
        leaves = _flatten(tensors)
        symbolic = [leaf for leaf in leaves if isinstance(leaf, _gg.Tensor) and leaf.is_symbolic]

        def make(resolve):
            return iter([[_as_array(leaf) for leaf in resolve(leaves)]])

        return Dataset(make, _structure_of(tensors), [_spec_of(leaf) for leaf in leaves], tuple(symbolic))

    @staticmethod
    def range(*args: int, output_type: Any = None) -> "Dataset":  # noqa: A003
        dtype = np.dtype(as_dtype(output_type) or np.int64)
        return Dataset(lambda resolve: ([np.asarray(i, dtype)] for i in range(*args)), 0, [_Spec(dtype, ())])

    @staticmethod
    def from_generator(generator: Callable, output_types: Any, output_shapes: Any = None, args: Any = None,
                       output_signature: Any = None) -> "Dataset":
        """Elements from ``generator(*args)``, converted to ``output_types``."""
        types_ = _flatten(output_types)
        shapes = _flatten(output_shapes) if output_shapes is not None else [None] * len(types_)
        if output_shapes is not None and len(shapes) != len(types_):  # a single shape given as a list
            shapes = [output_shapes]
        dtypes = [np.dtype(as_dtype(t)) for t in types_]
        specs = [_Spec(d, () if s is None else tuple(None if x is None else int(x) for x in s))
                 for d, s in zip(dtypes, shapes)]

        def make(resolve):
            for element in generator(*(args or ())):
                yield [np.asarray(leaf, dtype=d) for leaf, d in zip(_flatten(element), dtypes)]

        return Dataset(make, output_types, specs)

    @staticmethod
    def zip(datasets: Any) -> "Dataset":
        parts = _flatten(datasets)

        def make(resolve):
            for elements in zip(*(p._make(resolve) for p in parts)):
                yield [leaf for element in elements for leaf in element]

        structure = _repack(datasets, [p._structure for p in parts])
        return Dataset(make, structure, [s for p in parts for s in p._specs],
                       tuple(t for p in parts for t in p._inputs))

    # -- derived datasets
    def _derived(self, make: Callable, structure: Any = None, specs: Optional[list] = None) -> "Dataset":
        return Dataset(make, self._structure if structure is None else structure,
                       self._specs if specs is None else specs, self._inputs)

    # -- transformations
    def repeat(self, count: Optional[int] = None) -> "Dataset":
        """The elements ``count`` times over (forever for ``None`` or -1)."""
        def make(resolve):
            rounds = itertools.count() if count is None or count < 0 else range(int(count))
            for _ in rounds:
                yield from self._make(resolve)

        return self._derived(make)

    def shuffle(self, buffer_size: int, seed: Optional[int] = None,
                reshuffle_each_iteration: Optional[bool] = None) -> "Dataset":
        """TensorFlow's buffered shuffle: each element drawn at random from a buffer of the next
        ``buffer_size`` ones."""
        state = {"rng": np.random.RandomState(seed) if seed is not None else None}

        def make(resolve):
            rng = state["rng"] or np.random.RandomState(np.random.randint(2 ** 31))
            buffer = []
            for element in self._make(resolve):
                buffer.append(element)
                if len(buffer) >= buffer_size:
                    yield buffer.pop(rng.randint(len(buffer)))
            while buffer:
                yield buffer.pop(rng.randint(len(buffer)))

        return self._derived(make)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> "Dataset":
        """Consecutive elements stacked into batches (the last one smaller unless ``drop_remainder``)."""
        def make(resolve):
            for chunk in _chunks(self._make(resolve), batch_size, drop_remainder):
                yield [np.stack(leaves) for leaves in zip(*chunk)]

        first = int(batch_size) if drop_remainder else None
        return self._derived(make, specs=[_Spec(s.dtype, (first,) + s.shape) for s in self._specs])

    def padded_batch(self, batch_size: int, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False) -> "Dataset":
        """Batches of elements padded (with ``padding_values``, default 0) to ``padded_shapes`` (``None``
        or -1 entries: the longest in the batch)."""
        shapes = _flatten(padded_shapes) if padded_shapes is not None else [None] * len(self._specs)
        if len(shapes) != len(self._specs):
            shapes = [padded_shapes]
        values = _flatten(padding_values) if padding_values is not None else [0] * len(self._specs)

        def pad(leaves, shape, value):
            arrays = [np.asarray(a) for a in leaves]
            target = [max(a.shape[d] for a in arrays) for d in range(arrays[0].ndim)]
            if shape is not None:
                target = [t if s in (None, -1) else int(s) for t, s in zip(target, _flatten_shape(shape))]
            out = np.full((len(arrays),) + tuple(target), value, dtype=arrays[0].dtype)
            for i, a in enumerate(arrays):
                out[(i,) + tuple(slice(0, n) for n in a.shape)] = a
            return out

        def make(resolve):
            for chunk in _chunks(self._make(resolve), batch_size, drop_remainder):
                yield [pad(leaves, s, v) for leaves, s, v in zip(zip(*chunk), shapes, values)]

        specs = [_Spec(s.dtype, (int(batch_size) if drop_remainder else None,) + tuple(
            None if shape is None or d in (None, -1) else int(d)
            for d in (_flatten_shape(shape) if shape is not None else s.shape)))
            for s, shape in zip(self._specs, shapes)]
        return self._derived(make, specs=specs)

    def map(self, map_func: Callable, num_parallel_calls: Any = None, deterministic: Any = None) -> "Dataset":
        """``map_func`` applied to every element (its tuple's parts as separate arguments); traced once."""
        traced = _Traced(map_func, self._structure, self._specs)

        def make(resolve):
            return (traced(element) for element in self._make(resolve))

        return self._derived(make, traced.structure, traced.specs)

    def filter(self, predicate: Callable) -> "Dataset":
        traced = _Traced(predicate, self._structure, self._specs)

        def make(resolve):
            return (element for element in self._make(resolve) if bool(traced(element)[0]))

        return self._derived(make)

    def take(self, count: int) -> "Dataset":
        return self._derived(lambda resolve: itertools.islice(self._make(resolve), None if count < 0 else int(count)))

    def skip(self, count: int) -> "Dataset":
        return self._derived(lambda resolve: itertools.islice(self._make(resolve), int(count), None))

    def concatenate(self, dataset: "Dataset") -> "Dataset":
        specs = [_Spec.merge(a, b) for a, b in zip(self._specs, dataset._specs)]
        return Dataset(lambda resolve: itertools.chain(self._make(resolve), dataset._make(resolve)),
                       self._structure, specs, self._inputs + dataset._inputs)

    def prefetch(self, buffer_size: Any = None) -> "Dataset":
        """Nothing to do: the next element is made when a run needs it."""
        return self

    def cache(self, filename: str = "") -> "Dataset":
        store: dict = {}

        def make(resolve):
            if "items" in store:
                return iter(store["items"])
            store["items"] = items = list(self._make(resolve))
            return iter(items)

        return self._derived(make)

    def apply(self, transformation: Callable) -> "Dataset":
        return transformation(self)

    # -- iterators
    def make_one_shot_iterator(self) -> "Iterator":
        """An iterator that starts on its first use in a session (no initializer to run)."""
        return Iterator(self._structure, self._specs, one_shot=self)

    def make_initializable_iterator(self, shared_name: Any = None) -> "Iterator":
        """An iterator to start by running its ``initializer`` (again to start over)."""
        iterator = Iterator(self._structure, self._specs)
        iterator.initializer = iterator.make_initializer(self)
        return iterator


def _flatten_shape(shape: Any) -> list:
    shape = getattr(shape, "as_list", lambda: shape)()
    return [None if d is None else int(getattr(d, "value", d)) for d in shape]


def _structure_of(value: Any) -> Any:
    """``value``'s structure with every leaf replaced by 0."""
    return _repack(value, [0] * len(_flatten(value)))


class _Traced:
    """A function of an element traced into a graph of its own (placeholders of the element's leaves),
    run on each element's arrays."""

    def __init__(self, fn: Callable, structure: Any, specs: list) -> None:
        self.graph = _gg.Graph()
        with self.graph.as_default():
            self.inputs = [_gg.placeholder(_gg.as_dtype(s.dtype), s.shape) for s in specs]
            element = _repack(structure, self.inputs)
            out = fn(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") else fn(element)
            leaves = [leaf if isinstance(leaf, _gg.Tensor) and leaf.is_symbolic else _gg.constant(_as_array(leaf))
                      for leaf in _flatten(out)]
        self.outputs = leaves
        self.structure = _structure_of(out)
        self.specs = [_Spec(leaf.dtype, leaf.shape if leaf.shape is not None else ()) for leaf in leaves]
        self.session = _gg.Session(self.graph)

    def __call__(self, element: list) -> list:
        return [np.asarray(v) for v in self.session.run(self.outputs, dict(zip(self.inputs, element)))]


# ---- iterators --------------------------------------------------------------------------------------------------
class Iterator(_Structured):
    """What ``make_one_shot_iterator`` / ``make_initializable_iterator`` / ``Iterator.from_structure``
    give: ``get_next()``, ``initializer``, ``make_initializer(dataset)``."""

    def __init__(self, structure: Any, specs: list, one_shot: Optional[Dataset] = None) -> None:
        self._structure, self._specs, self._one_shot = structure, specs, one_shot
        self._graph = _gg.get_default_graph()
        self._initializers: dict = {}  # initializer node -> dataset
        self._next: Optional[list] = None
        self.initializer = None
        graph_state(self._graph).setdefault("iterators", []).append(self)

    @staticmethod
    def from_structure(output_types: Any, output_shapes: Any = None, shared_name: Any = None,
                       output_classes: Any = None) -> "Iterator":
        """A reinitializable iterator: ``make_initializer(dataset)`` gives the op that starts it on
        ``dataset`` (any dataset of this structure)."""
        types_ = _flatten(output_types)
        shapes = _flatten(output_shapes) if output_shapes is not None else [None] * len(types_)
        specs = [_Spec(np.dtype(as_dtype(t)), () if s is None else _flatten_shape(s)) for t, s in zip(types_, shapes)]
        return Iterator(_structure_of(output_types), specs)

    def make_initializer(self, dataset: Dataset, name: Optional[str] = None):
        """The op that (re)starts this iterator on ``dataset`` when a session runs it."""
        with self._graph.as_default():
            node = _gg.no_op(name=name or "make_initializer")
        self._initializers[node] = dataset
        return node

    def get_next(self, name: Optional[str] = None) -> Any:
        """The next element's tensors: each session run that needs them takes one element."""
        if self._next is None:
            with self._graph.as_default():
                self._next = [_gg.placeholder(_gg.as_dtype(s.dtype), s.shape, name="IteratorGetNext")
                              for s in self._specs]
        return _repack(self._structure, self._next)

    # -- driven by Session.run
    def _start(self, session: Any, dataset: Dataset, feed_dict: Optional[dict]) -> None:
        def resolve(leaves):
            symbolic = [i for i, leaf in enumerate(leaves) if isinstance(leaf, _gg.Tensor) and leaf.is_symbolic]
            if not symbolic:
                return leaves
            values = _gg.Session.run(session, [leaves[i] for i in symbolic], feed_dict)
            out = list(leaves)
            for i, v in zip(symbolic, values):
                out[i] = v
            return out

        session._tf_iterators[self] = dataset._make(resolve)

    def _take(self, session: Any) -> list:
        source = session._tf_iterators.get(self)
        if source is None:
            if self._one_shot is None:
                raise _gg.GraphError("GetNext() failed because the iterator has not been initialized: run its "
                                     "initializer (sess.run(iterator.initializer)) first")
            self._start(session, self._one_shot, None)
            source = session._tf_iterators[self]
        try:
            return next(source)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Dataset, shared_name: Any = None) -> Iterator:
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset: Any) -> Any:
    return dataset.output_types


def get_output_shapes(dataset: Any) -> Any:
    return dataset.output_shapes


def session_feeds(session: Any, flat_nodes: list, feed_dict: Optional[dict]) -> Optional[dict]:
    """For a run of ``flat_nodes``: start the iterators whose initializer runs, and add to ``feed_dict``
    the next element of every iterator whose ``get_next()`` tensors the run needs and is not fed."""
    iterators = graph_state(session.graph).get("iterators")
    if not iterators:
        return feed_dict
    if not hasattr(session, "_tf_iterators"):
        session._tf_iterators = {}
    wanted = set(flat_nodes)
    for iterator in iterators:
        for node, dataset in iterator._initializers.items():
            if node in wanted:
                iterator._start(session, dataset, feed_dict)
    pending = [it for it in iterators if it._next is not None]
    if not pending:
        return feed_dict
    fed = {session._node_of(key, "feed_dict key") for key in (feed_dict or {})}
    cache = session.__dict__.setdefault("_tf_needed", {})
    key = (tuple(flat_nodes), frozenset(fed))
    needed = cache.get(key)
    if needed is None:
        needed = cache[key] = session.graph.ancestors(flat_nodes, stop=fed)
    out = dict(feed_dict or {})
    for iterator in pending:
        if any(t._node in needed and t._node not in fed for t in iterator._next):
            out.update(zip(iterator._next, iterator._take(session)))
    return out

