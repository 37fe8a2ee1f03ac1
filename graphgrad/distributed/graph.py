"""Data parallelism for static graphs, TensorFlow-1 style, with Horovod's names.

Every rank builds the same graph and feeds it its own shard of the batch. :class:`DistributedOptimizer`
wraps a graph optimizer (``gg.train.AdamOptimizer`` ...) so that the gradients of ``minimize`` are
averaged over the ranks before the update, and :func:`broadcast_variables` makes an op that copies
rank 0's variables to every rank (run it once, after the initializer): the ranks start equal and,
applying equal updates, stay equal.

Example (run with ``python -m graphgrad.distributed.run -n 2 train.py``):
    >>> gg.distributed.init()
    >>> x = gg.placeholder(gg.float32, (None, 784)); y = gg.placeholder(gg.int64, (None,))
    >>> loss = gg.cross_entropy(model(x), y)
    >>> opt = gg.train.DistributedOptimizer(gg.train.AdamOptimizer(1e-3))
    >>> train_op = opt.minimize(loss)
    >>> sync = gg.train.broadcast_global_variables(0)
    >>> sess = gg.Session(); sess.run(gg.global_variables_initializer()); sess.run(sync)
    >>> for xs, ys in my_shard_of_the_batches:
    ...     sess.run(train_op, {x: xs, y: ys})

The collectives are ordinary graph nodes (:class:`~graphgrad.distributed.ops.AllReduce`,
:class:`~graphgrad.distributed.ops.Broadcast`), so ``Session.run`` executes the communication. They
are sent in *buckets*: tensors of one dtype are flattened and concatenated up to ``bucket_mb``
megabytes, one collective moves the bucket, and the result is split again (one collective per bucket
instead of one per variable). Each bucket's collective has the previous one as a control input, so
every rank runs them in the same order whatever order the compiler picks for the rest of the graph
(its memory-aware scheduler looks at shapes, which may differ between ranks, e.g. uneven batch shards).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

from graphgrad.core.tensor import Tensor
from graphgrad.distributed.ops import AllReduce, Broadcast
from graphgrad.distributed.world import DistributedError, require_init
from graphgrad.graph import get_default_graph, global_variables, group, no_op
from graphgrad.graph.graph import GraphNode, graph_of
from graphgrad.ops.shape import concatenate, reshape

#: Default bucket size cap in megabytes (a tensor larger than the cap travels alone).
DEFAULT_BUCKET_MB = 25.0
#: Reductions that make sense for gradients.
GRADIENT_OPS = ("mean", "sum")


# ---- bucketed collectives ------------------------------------------------------------------------------------
def _nbytes(t: Tensor) -> int:
    return math.prod(t.shape) * t.dtype.itemsize


def plan_buckets(tensors: Sequence[Tensor], bucket_bytes: float) -> list:
    """Group the positions of ``tensors`` into buckets: one dtype per bucket, filled in the given
    order while the bucket stays within ``bucket_bytes`` (a tensor that alone exceeds it gets a
    bucket of its own; ``bucket_bytes <= 0`` gives one bucket per tensor). Buckets are listed in the
    order they close, which depends only on the tensors' dtypes and shapes, so it is the same on
    every rank."""
    buckets: list = []
    open_buckets: dict = {}  # dtype -> (positions, bytes)
    for i, t in enumerate(tensors):
        size = _nbytes(t)
        positions, total = open_buckets.get(t.dtype, ([], 0))
        if positions and total + size > bucket_bytes:
            buckets.append(positions)
            positions, total = [], 0
        open_buckets[t.dtype] = (positions + [i], total + size)
    leftovers = sorted(open_buckets.values(), key=lambda entry: entry[0][0])
    return buckets + [positions for positions, _ in leftovers]


def _label(names: Sequence[str], what: Optional[str]) -> str:
    """How errors name a bucket: ``gradients of w3, b2, w2 and 4 more``."""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{what} of {shown}" if what else shown


def bucketed(tensors: Sequence[Tensor], collective: Callable[[Tensor, str], Tensor],
             bucket_mb: float = DEFAULT_BUCKET_MB, names: Optional[Sequence[str]] = None,
             what: Optional[str] = None) -> list:
    """Apply a shape-keeping ``collective(tensor, label)`` to ``tensors`` through buckets.

    Args:
        tensors: graph or eager tensors of static shapes (the same shapes and dtypes on every rank).
        collective: e.g. ``lambda t, label: AllReduce("mean", label).apply(t)``.
        bucket_mb: the size cap of one bucket; ``0`` sends each tensor by itself.
        names: what error messages call each tensor (default: the tensors' names).
        what: what error messages call the tensors together (``"gradients"``).

    Returns:
        The results, one per input tensor, each of its input's shape. In a graph, each bucket's
        collective runs after the previous bucket's (a control dependency).
    """
    tensors = list(tensors)
    names = list(names) if names is not None else [t.name or f"tensor {i}" for i, t in enumerate(tensors)]
    for t, name in zip(tensors, names):
        if t.shape is None or None in t.shape:
            raise DistributedError(f"bucketed collective: {name!r} has shape {t.shape}; every tensor needs a static "
                                   "shape (the same on every rank)")
    results: list = [None] * len(tensors)
    graph = graph_of(tensors) if any(isinstance(t._node, GraphNode) for t in tensors) else None
    previous = None
    for positions in plan_buckets(tensors, bucket_mb * 2**20):
        members = [tensors[i] for i in positions]
        label = _label([names[i] for i in positions], what)
        # always 1-d: one path for every bucket, and no collective sees a 0-d array
        flats = [reshape(t, (-1,)) for t in members]
        flat = flats[0] if len(flats) == 1 else concatenate(flats)
        if graph is None:
            moved = collective(flat, label)
        else:
            with graph.control_dependencies([previous] if previous is not None else []):
                moved = collective(flat, label)
            previous = moved
        offset = 0
        for i, t in zip(positions, members):
            size = math.prod(t.shape)
            part = moved if len(members) == 1 else moved[offset:offset + size]
            results[i] = reshape(part, tuple(t.shape))
            offset += size
    return results


def grouped_all_reduce(tensors: Sequence[Tensor], op: str = "mean", bucket_mb: float = DEFAULT_BUCKET_MB,
                       names: Optional[Sequence[str]] = None) -> list:
    """All-reduce a list of tensors with few collectives (Horovod's ``grouped_allreduce``).

    Tensors of one dtype share a collective, up to ``bucket_mb`` megabytes each. Works eagerly, in
    static graphs and inside ``gg.function``; differentiable.

    Args:
        tensors: tensors of static shapes, the same shapes and dtypes on every rank.
        op: ``"sum"``, ``"mean"``, ``"max"`` or ``"min"``.

    Returns:
        One tensor per input, of its shape: the reduction over the ranks.

    Examples:
        >>> gw, gb = dist.grouped_all_reduce([w.grad, b.grad], op="mean")
    """
    return bucketed(tensors, lambda t, label: AllReduce(op, label).apply(t), bucket_mb, names)


# ---- the optimizer wrapper ---------------------------------------------------------------------------------
class DistributedOptimizer:
    """A graph optimizer whose gradients are reduced over the ranks (Horovod's ``DistributedOptimizer``).

    ``compute_gradients`` returns the wrapped optimizer's gradients averaged (``op="mean"``) or summed
    over the ranks; ``apply_gradients`` is the wrapped optimizer's; ``minimize`` is both. Everything
    else (``get_name``, slots, ``variables()``, the learning rate and its schedule) is the wrapped
    optimizer's. In a world of one process it is the wrapped optimizer.

    Args:
        optimizer: a graph optimizer (``gg.train.GradientDescentOptimizer``, ``MomentumOptimizer``,
            ``AdamOptimizer``, ``RMSPropOptimizer`` or a subclass).
        op: ``"mean"`` (data parallelism on equal shards: the gradient of the mean loss over the
            whole batch) or ``"sum"`` (for a loss already divided by the global batch size).
        bucket_mb: gradients are reduced in buckets of at most this many megabytes (``0``: one
            collective per gradient).

    Examples:
        >>> train_op = gg.train.DistributedOptimizer(gg.train.MomentumOptimizer(0.1, 0.9)).minimize(loss)
    """

    def __init__(self, optimizer: Any, op: str = "mean", bucket_mb: float = DEFAULT_BUCKET_MB) -> None:
        for method in ("compute_gradients", "apply_gradients"):
            if not callable(getattr(optimizer, method, None)):
                raise TypeError(f"DistributedOptimizer wraps a graph optimizer (e.g. gg.train.AdamOptimizer) "
                                f"with {method}(); got {type(optimizer).__name__} (for eager training wrap the "
                                "model in gg.distributed.DistributedDataParallel instead)")
        if op not in GRADIENT_OPS:
            raise ValueError(f"DistributedOptimizer: op must be one of {GRADIENT_OPS}, got {op!r}")
        if bucket_mb < 0:
            raise ValueError(f"DistributedOptimizer: bucket_mb must be >= 0, got {bucket_mb}")
        self._optimizer = optimizer
        self._op = op
        self._bucket_mb = float(bucket_mb)

    @property
    def optimizer(self) -> Any:
        """The wrapped optimizer."""
        return self._optimizer

    def compute_gradients(self, loss: Tensor, var_list: Optional[Sequence[Any]] = None) -> list:
        """``[(gradient, variable)]`` with each gradient reduced over the ranks (``None`` where a
        variable does not affect the loss, as the wrapped optimizer gives)."""
        world = require_init("DistributedOptimizer")
        pairs = list(self._optimizer.compute_gradients(loss, var_list))
        live = [k for k, (g, _) in enumerate(pairs) if g is not None]
        if world.size == 1 or not live:
            return pairs
        names = [getattr(pairs[k][1], "base_name", str(k)) for k in live]
        # backpropagation makes the last variables' gradients first: their buckets come first
        order = live[::-1]
        reduced = bucketed([pairs[k][0] for k in order], lambda t, label: AllReduce(self._op, label).apply(t),
                           self._bucket_mb, names[::-1], "gradients")
        out = list(pairs)
        for k, g in zip(order, reduced):
            out[k] = (g, pairs[k][1])
        return out

    def apply_gradients(self, grads_and_vars: Sequence[tuple], global_step: Any = None,
                        name: Optional[str] = None) -> GraphNode:
        """The wrapped optimizer's train op for ``grads_and_vars`` (already reduced)."""
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def minimize(self, loss: Tensor, var_list: Optional[Sequence[Any]] = None, global_step: Any = None,
                 name: Optional[str] = None) -> GraphNode:
        """One train op: the gradients of ``loss``, reduced over the ranks, applied."""
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step=global_step, name=name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_optimizer":
            raise AttributeError(name)
        return getattr(self._optimizer, name)

    def __repr__(self) -> str:
        return f"DistributedOptimizer({self._optimizer!r}, op={self._op!r}, bucket_mb={self._bucket_mb:g})"


# ---- initial state -----------------------------------------------------------------------------------------
def broadcast_variables(variables: Optional[Sequence[Any]] = None, root_rank: int = 0,
                        bucket_mb: float = DEFAULT_BUCKET_MB, name: Optional[str] = None) -> GraphNode:
    """A graph op that sets every variable to rank ``root_rank``'s value (run it once, after the
    initializer, so all ranks start from the same weights).

    Args:
        variables: the Variables (default: every global variable of the default graph, optimizer
            slots included).
        root_rank: whose values everyone takes.
        bucket_mb: variables of one dtype travel together, up to this many megabytes per collective.
        name: the op's name (and the name scope of its nodes).

    Returns:
        An operation (a group of assigns); in a world of one, an op that does nothing.
    """
    world = require_init("broadcast_variables()")
    if not 0 <= int(root_rank) < world.size:
        raise DistributedError(f"broadcast_variables: root_rank {root_rank} is not a rank of a world of {world.size}")
    graph = get_default_graph()
    variables = list(global_variables(graph) if variables is None else variables)
    for v in variables:
        if not getattr(v, "is_variable", False):
            raise TypeError(f"broadcast_variables: expected gg.Variables, got {type(v).__name__}")
    op_name = name or "broadcast_variables"
    if world.size == 1 or not variables:
        with graph.as_default():
            return no_op(op_name)
    with graph.as_default(), graph.name_scope(op_name):
        reads = [graph.read_variable(v) for v in variables]
        values = bucketed(reads, lambda t, label: Broadcast(int(root_rank), label).apply(t), bucket_mb,
                          [v.base_name for v in variables], "variables")
        assigns = [v.assign(value) for v, value in zip(variables, values)]
    return group(*assigns, name=op_name)


def broadcast_global_variables(root_rank: int = 0) -> GraphNode:
    """:func:`broadcast_variables` of every global variable of the default graph (Horovod's name)."""
    return broadcast_variables(None, root_rank)


__all__ = ["DistributedOptimizer", "broadcast_variables", "broadcast_global_variables", "grouped_all_reduce",
           "bucketed", "plan_buckets", "DEFAULT_BUCKET_MB"]
