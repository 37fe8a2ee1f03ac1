"""Collectives as ops: differentiable, and the same in eager code, static graphs and ``gg.function``.

Each collective is an :class:`~graphgrad.core.op.Op` whose forward communicates (so ``Session.run``
and a compiled function execute the communication where the node stands) and whose gradient rule is
again a collective. Gradients follow the usual convention of data-parallel autodiff: every rank
seeds the backward pass of its own outputs, and the objective is the sum over ranks of what each
rank differentiates. Then, with ``g_r`` the gradient arriving at rank ``r``'s output:

* ``all_reduce(x, "sum")``: every output depends on every input, ``gx = sum_r g_r`` (an all-reduce);
* ``all_reduce(x, "mean")``: ``gx = mean_r g_r``;
* ``all_reduce(x, "max"|"min")``: the sum of the ``g_r`` goes to the rank(s) holding the extreme
  value, split evenly among ties;
* ``broadcast(x, src)``: the sum of the ``g_r`` goes to rank ``src``, zero elsewhere;
* ``all_gather(x)``: each rank gets the sum over ranks of the rows of ``g`` that came from it (a
  reduce-scatter), and ``reduce_scatter`` has an all-gather as its gradient.

Collective ops are impure (``pure = False``: the compiler never merges or folds them) and set
``collective = True``: an execution plan keeps them in program order, so every rank runs its
collectives in the same sequence. Their graphs never depend on the rank (a rank-dependent gradient
is one op, :class:`Reduce`), so every rank builds and schedules the same program.
"""
from __future__ import annotations

from typing import Optional

from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor, to_array
from graphgrad.distributed import comm
from graphgrad.distributed.world import WORLD
from graphgrad.errors import GraphError, ShapeError


def _size() -> int:
    return WORLD.size if WORLD.initialized else 1


class AllReduce(Op):
    """Reduce over ranks with ``reduce_op`` (``"sum"``, ``"mean"``, ``"max"``, ``"min"``); shape kept."""

    props = ("reduce_op", "label")
    pure = False
    collective = True

    def __init__(self, reduce_op: str = "sum", label: Optional[str] = None) -> None:
        if reduce_op not in comm.REDUCE_OPS:
            raise ValueError(f"all_reduce: op must be one of {comm.REDUCE_OPS}, got {reduce_op!r}")
        self.reduce_op, self.label = reduce_op, label

    @property
    def saves_output(self) -> bool:  # max/min route the gradient by comparing with the output
        return self.reduce_op in ("max", "min")

    def forward(self, xp, x):
        return comm.all_reduce(x, self.reduce_op, self.label)

    def infer(self, x: TensorSpec) -> TensorSpec:
        return TensorSpec(x.shape, x.dtype)

    def backward(self, inputs, out, g):
        label = f"gradient of {self.label}" if self.label else "gradient"
        if self.reduce_op in ("sum", "mean"):
            return (AllReduce(self.reduce_op, label).apply(g),)
        (x,) = inputs
        holds = (x == out).astype(g.dtype)
        share = AllReduce("sum", label).apply(g) / AllReduce("sum", f"ties of {label}").apply(holds)
        return (share * holds,)


class Broadcast(Op):
    """Rank ``root``'s value on every rank."""

    props = ("root", "label")
    pure = False
    collective = True
    saves_output = False

    def __init__(self, root: int = 0, label: Optional[str] = None) -> None:
        self.root, self.label = int(root), label

    def forward(self, xp, x):
        return comm.broadcast(x, self.root, self.label)

    def infer(self, x: TensorSpec) -> TensorSpec:
        return TensorSpec(x.shape, x.dtype)

    def backward(self, inputs, out, g):
        return (Reduce(self.root, f"gradient of {self.label}" if self.label else "gradient").apply(g),)


class Reduce(Op):
    """The sum over ranks on rank ``root``, zeros on the others (the gradient of a broadcast).

    One op rather than a sum and a rank-dependent product, so every rank builds the same graph."""

    props = ("root", "label")
    pure = False
    collective = True
    saves_output = False

    def __init__(self, root: int = 0, label: Optional[str] = None) -> None:
        self.root, self.label = int(root), label

    def forward(self, xp, x):
        total = comm.all_reduce(x, "sum", self.label)
        return total if WORLD.rank == self.root else xp.zeros_like(total)

    def infer(self, x: TensorSpec) -> TensorSpec:
        return TensorSpec(x.shape, x.dtype)

    def backward(self, inputs, out, g):
        return (Broadcast(self.root, self.label).apply(g),)


class AllGather(Op):
    """The ranks' tensors concatenated along axis 0 in rank order (parts may differ in length).

    In a graph the number of rows is known only at run time (the ranks' parts may differ), except
    in a world of one.
    """

    props = ("label",)
    pure = False
    collective = True
    saves_output = False

    def __init__(self, label: Optional[str] = None) -> None:
        self.label = label

    def forward(self, xp, x):
        return comm.all_gather(x, self.label)

    def infer(self, x: TensorSpec) -> TensorSpec:
        if not x.shape:
            raise ShapeError(f"AllGather of {self.label or 'a tensor'}: needs at least one dimension, got a scalar")
        rows = x.shape[0] if _size() == 1 else None
        return TensorSpec((rows,) + tuple(x.shape[1:]), x.dtype)

    def backward(self, inputs, out, g):
        (x,) = inputs
        return (ReduceScatterLike(self.label).apply(g, x),)


class ReduceScatter(Op):
    """Sum over ranks, then rank ``r`` keeps its block of rows (an even split of axis 0)."""

    props = ("reduce_op", "label")
    pure = False
    collective = True
    saves_output = False

    def __init__(self, reduce_op: str = "sum", label: Optional[str] = None) -> None:
        if reduce_op not in ("sum", "mean"):
            raise ValueError(f"reduce_scatter: op must be 'sum' or 'mean', got {reduce_op!r}")
        self.reduce_op, self.label = reduce_op, label

    def forward(self, xp, x):
        return comm.reduce_scatter(x, self.reduce_op, self.label)

    def infer(self, x: TensorSpec) -> TensorSpec:
        if not x.shape:
            raise ShapeError(f"ReduceScatter of {self.label or 'a tensor'}: needs at least one dimension")
        rows = None
        if x.shape[0] is not None:
            rows = comm.split_counts(x.shape[0], _size())[WORLD.rank if WORLD.initialized else 0]
        return TensorSpec((rows,) + tuple(x.shape[1:]), x.dtype)

    def backward(self, inputs, out, g):
        gx = AllGather(f"gradient of {self.label}" if self.label else "gradient").apply(g)
        return (gx / _size() if self.reduce_op == "mean" else gx,)


class ReduceScatterLike(Op):
    """Sum ``x`` over ranks; rank ``r`` keeps as many rows as its ``like`` has (the gradient of an
    all-gather of unequal parts: each rank gets back the rows it contributed)."""

    props = ("label",)
    pure = False
    collective = True
    saves_output = False

    def __init__(self, label: Optional[str] = None) -> None:
        self.label = label

    def forward(self, xp, x, like):
        counts = comm.all_gather(xp.asarray([like.shape[0]]), f"row counts of {self.label or 'tensor'}")
        return comm.reduce_scatter(x, "sum", self.label, counts=[int(c) for c in counts])

    def infer(self, x: TensorSpec, like: TensorSpec) -> TensorSpec:
        return TensorSpec((like.shape[0],) + tuple(x.shape[1:]), x.dtype)

    def backward(self, inputs, out, g):
        return (AllGather(self.label).apply(g), None)


# ---- the public functions ----------------------------------------------------------------------------------
class Work:
    """A nonblocking collective: ``wait()`` returns the result Tensor; ``is_completed()`` polls.

    The result of a nonblocking collective is not recorded by autograd (use the blocking form to
    differentiate through communication).
    """

    def __init__(self, handle: comm.Handle) -> None:
        self._handle = handle
        self._tensor = None

    def is_completed(self) -> bool:
        return self._handle.is_completed()

    def wait(self) -> Tensor:
        if self._tensor is None:
            self._tensor = Tensor._wrap(self._handle.wait())
        return self._tensor

    def result(self) -> Tensor:
        return self.wait()


def _label(t, name: Optional[str]) -> Optional[str]:
    return name or (t.name if isinstance(t, Tensor) else None)


def _array(t, what: str):
    if isinstance(t, Tensor) and t._data is None:
        raise GraphError(f"{what}(async_op=True) runs eagerly; in a graph use the blocking form")
    return to_array(t)


def all_reduce(t, op: str = "sum", name: Optional[str] = None, async_op: bool = False):
    """Reduce ``t`` over all ranks with ``op`` (``"sum"``, ``"mean"``, ``"max"``, ``"min"``).

    Args:
        t: a tensor of the same shape and dtype on every rank (a graph tensor works too).
        name: how errors about this collective name the tensor (default: the tensor's name).
        async_op: start the collective and return a :class:`Work` at once (``.wait()`` gives the result).

    Returns:
        A new tensor of ``t``'s shape holding the reduction, on every rank. Differentiable.

    Examples:
        >>> total = gg.distributed.all_reduce(local_loss, op="sum")
    """
    if async_op:
        return Work(comm.start_all_reduce(_array(t, "all_reduce"), op, _label(t, name)))
    return AllReduce(op, _label(t, name)).apply(t)


def broadcast(t, src: int = 0, name: Optional[str] = None, async_op: bool = False):
    """Rank ``src``'s ``t`` on every rank (``t`` must have the same shape and dtype everywhere)."""
    if async_op:
        return Work(comm.start_broadcast(_array(t, "broadcast"), src, _label(t, name)))
    return Broadcast(src, _label(t, name)).apply(t)


def all_gather(t, name: Optional[str] = None, async_op: bool = False):
    """The ranks' ``t`` concatenated along axis 0 in rank order: ``(n_r, *rest)`` on rank ``r`` gives
    ``(sum of n_r, *rest)``; the parts may differ in length."""
    if async_op:
        return Work(comm.start_all_gather(_array(t, "all_gather"), _label(t, name)))
    return AllGather(_label(t, name)).apply(t)


def reduce_scatter(t, op: str = "sum", name: Optional[str] = None, async_op: bool = False):
    """The sum (or mean) of ``t`` over ranks, split along axis 0: rank ``r`` gets its block of rows.

    ``t`` of shape ``(n, *rest)`` on every rank gives ``(n_r, *rest)``, ``n_r`` an even split of ``n``
    (the first ``n % world_size`` ranks get one more row).
    """
    if async_op:
        return Work(comm.start_reduce_scatter(_array(t, "reduce_scatter"), op, _label(t, name)))
    return ReduceScatter(op, _label(t, name)).apply(t)


def barrier() -> None:
    """Wait until every rank reaches this call (bounded by the world's timeout)."""
    comm.barrier()


__all__ = ["AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "ReduceScatterLike", "Work", "all_reduce",
           "broadcast", "all_gather", "reduce_scatter", "barrier"]
