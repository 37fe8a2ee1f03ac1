"""Collectives on backend arrays, checked and bounded in time.

Every collective first runs a *handshake* (unless ``init(check=False)``): each rank contributes a
short record of what it is about to do (the collective's kind and position in the sequence, the
tensor's name, shape, dtype and device) to a nonblocking allgather, which is polled until it
completes or the world's timeout passes. So ranks that submit different collectives (another
tensor, shape, dtype or order) get a :class:`DistributedError` naming the ranks and tensors, and a
rank that never arrives gives a :class:`CollectiveTimeout`, instead of a silent deadlock. The
handshake also tells every rank the others' shapes, which ``all_gather`` of unequal parts needs.

Arrays on a GPU are copied to the host and back (an MPI without GPU support sees host buffers only).
In a world of one process every collective is the identity (a copy).
"""
from __future__ import annotations

import json
import os
import time
from typing import Callable, Optional, Sequence

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.distributed.world import CollectiveTimeout, DistributedError, World, mpi, require_init
from graphgrad.errors import DTypeError, ShapeError

REDUCE_OPS = ("sum", "mean", "max", "min")
#: Bytes of one handshake record (a JSON text, padded).
_RECORD_BYTES = 384
#: Seconds a waiting rank polls without sleeping (long enough for a 64 MB all-reduce on one machine).
SPIN_SECONDS = 0.05
#: Dtypes MPI reduces in a wider type (it has no half-precision float).
_WIDENED = {"float16": "float32", "bfloat16": "float32"}


# ---- waiting with a deadline ---------------------------------------------------------------------------
def wait_for(request, what: Callable[[], str], world: World) -> None:
    """Poll the MPI ``request`` until it completes; raise :class:`CollectiveTimeout` after the timeout.

    It spins for the first ``SPIN_SECONDS``, yielding the core between polls: MPI moves the data of
    a nonblocking collective only while it is polled, and ranks in step finish a collective in
    microseconds (a sleep costs far more). After that it sleeps with a growing pause (at most a
    millisecond), so a rank waiting for a slow peer leaves the CPU to it.
    """
    if request.Test():
        return
    start = time.perf_counter()
    spin_until = start + SPIN_SECONDS
    while time.perf_counter() < spin_until:
        _yield()  # let a peer that shares this core run (more ranks than cores)
        if request.Test():
            return
    deadline = start + world.timeout
    pause = 1e-4
    while not request.Test():
        time.sleep(pause)
        pause = min(pause * 1.5, 1e-3)
        if time.perf_counter() > deadline:
            raise CollectiveTimeout(
                f"rank {world.rank} waited {world.timeout:g} s in {what()} and the other ranks did not complete it: "
                "some rank never reached this collective (it finished, is stuck, or took another code path); "
                "raise the limit with graphgrad.distributed.init(timeout=...) if a step is that slow")


_yield = getattr(os, "sched_yield", lambda: None)


# ---- the handshake -------------------------------------------------------------------------------------
def describe(record: dict) -> str:
    """A record as a human sentence: ``all_reduce(sum) of 'w.grad' (3, 4) float32 on cpu``."""
    kind = record["kind"]
    if record.get("op"):
        kind += f"({record['op']})"
    elif record.get("root") is not None:
        kind += f"(root={record['root']})"
    if kind == "barrier":
        return "barrier()"
    if kind == "exit":
        return "the end of the script (this rank has finished)"
    shape = tuple(record["shape"])
    return f"{kind} of {record['name']!r} {shape} {record['dtype']} on {record['device']}"


def _must_agree(kind: str) -> tuple:
    """The record fields every rank must give equal values for, in a collective of ``kind``."""
    common = ("kind", "op", "root", "dtype", "device")
    if kind == "all_gather":
        return common + ("trailing",)
    if kind in ("barrier", "exit"):
        return ("kind",)
    return common + ("shape",)


def handshake(world: World, record: dict) -> list:
    """Exchange ``record`` with every rank; return all ranks' records, or raise naming the mismatch."""
    record = dict(record, seq=world.sequence, trailing=list(record.get("shape", ()))[1:])
    text = json.dumps(record, separators=(",", ":")).encode()
    if len(text) > _RECORD_BYTES:
        record["name"] = record["name"][:60] + "..."
        text = json.dumps(record, separators=(",", ":")).encode()
    send = np.zeros(_RECORD_BYTES, np.uint8)
    send[:len(text)] = np.frombuffer(text, np.uint8)
    received = np.empty((world.size, _RECORD_BYTES), np.uint8)
    request = world.comm.Iallgather(send, received)
    wait_for(request, lambda: f"collective #{world.sequence} ({describe(record)})", world)
    if (received == send).all():  # the common case: every rank sent the very same record
        return [record] * world.size
    records = [json.loads(bytes(row).rstrip(b"\0")) for row in received]
    fields = ("seq",) + _must_agree(record["kind"])
    if any(any(r.get(f) != records[0].get(f) for f in fields) for r in records[1:]):
        raise DistributedError(_mismatch_message(records, world))
    return records


def _mismatch_message(records: list, world: World) -> str:
    groups: dict = {}
    for rank, r in enumerate(records):
        groups.setdefault(f"collective #{r['seq']}: {describe(r)}", []).append(rank)
    lines = [f"the ranks submitted different collectives (seen from rank {world.rank}); every rank must call "
             "the same collectives, on tensors of the same shape and dtype, in the same order:"]
    for text, ranks in groups.items():
        who = "rank" if len(ranks) == 1 else "ranks"
        lines.append(f"  {who} {', '.join(map(str, ranks))}: {text}")
    return "\n".join(lines)


def _record(kind: str, array, name: Optional[str], op: Optional[str] = None, root: Optional[int] = None) -> dict:
    return {"kind": kind, "op": op, "root": root, "name": name or "tensor",
            "shape": list(array.shape), "dtype": str(array.dtype), "device": backend.device_of(array)}


def _begin(kind: str, array, name: Optional[str], op: Optional[str] = None, root: Optional[int] = None,
           check: Optional[bool] = None):
    """Common start of a collective: the world (initialised), and all ranks' records (or ``None``).
    ``check`` overrides the world's handshake setting for this call."""
    world = require_init(f"{kind}()")
    if op is not None and op not in REDUCE_OPS:
        raise ValueError(f"{kind}: op must be one of {REDUCE_OPS}, got {op!r}")
    if root is not None and not 0 <= root < world.size:
        raise DistributedError(f"{kind}: root rank {root} is not in a world of {world.size} ranks")
    if op == "mean" and array.dtype.kind not in "fc":
        raise DTypeError(f"{kind}(mean) of {name or 'a tensor'}: needs a floating dtype, got {array.dtype}; "
                         "use op='sum' for integers")
    records = None
    if world.size > 1 and (world.check if check is None else check):
        records = handshake(world, _record(kind, array, name, op, root))
    world.sequence += 1
    return world, records


# ---- host buffers ----------------------------------------------------------------------------------------
def _host(array):
    """A contiguous NumPy array MPI can read, in a dtype MPI knows."""
    host = backend.to_numpy(array)
    if not host.flags.c_contiguous:
        host = host.copy()  # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
    wide = _WIDENED.get(host.dtype.name)
    return host.astype(wide) if wide else host


def _back(host, like):
    """``host`` in ``like``'s dtype and on its device."""
    if host.dtype != like.dtype:
        host = host.astype(like.dtype)
    return backend.to_device(host, backend.device_of(like))


def _mpi_op(op: str):
    MPI = mpi()
    return {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]


# ---- the collectives ---------------------------------------------------------------------------------------
class Handle:
    """A collective in flight: ``wait()`` returns its result (an array), ``is_completed()`` polls it.

    The data moves while this rank computes; MPI progresses the transfer whenever a handle is polled.
    """

    def __init__(self, world: World, what: str, request=None, result=None, finish: Optional[Callable] = None,
                 keep=None) -> None:
        self._world, self._what, self._request, self._result, self._finish = world, what, request, result, finish
        self._keep = keep  # a send buffer MPI reads until the transfer ends
        self._done = request is None

    def is_completed(self) -> bool:
        """Whether the transfer has ended (``wait()`` will not block)."""
        if not self._done and self._request.Test():
            self._done = True
        return self._done

    def wait(self):
        """Block until the collective completes (bounded by the world's timeout); return its result."""
        if not self._done:
            wait_for(self._request, lambda: self._what, self._world)
            self._done = True
        if self._finish is not None:
            self._result, self._finish = self._finish(self._result), None
        self._keep = None
        return self._result


def _finisher(world: World, op: Optional[str], like) -> Callable:
    def finish(result):
        if op == "mean":
            result /= world.size
        return _back(result, like)

    return finish


def start_all_reduce(array, op: str = "sum", name: Optional[str] = None, check: Optional[bool] = None) -> Handle:
    """Start reducing ``array`` (any shape, the same on every rank) over all ranks with ``op``.

    ``handle.wait()`` gives the result on every rank. ``check`` overrides the world's handshake setting.
    """
    world, _ = _begin("all_reduce", array, name, op=op, check=check)
    what = f"all_reduce({op}) of {name or 'tensor'} {tuple(array.shape)}"
    if world.size == 1:
        return Handle(world, what, result=array.copy())
    host = _host(array)
    out = np.empty_like(host)
    request = world.comm.Iallreduce(host, out, op=_mpi_op(op))
    return Handle(world, what, request, out, _finisher(world, op, array), keep=host)


def start_broadcast(array, root: int = 0, name: Optional[str] = None, check: Optional[bool] = None) -> Handle:
    """Start sending rank ``root``'s ``array`` to every rank (same shape and dtype everywhere)."""
    world, _ = _begin("broadcast", array, name, root=root, check=check)
    what = f"broadcast(root={root}) of {name or 'tensor'} {tuple(array.shape)}"
    if world.size == 1:
        return Handle(world, what, result=array.copy())
    host = _host(array).copy()
    request = world.comm.Ibcast(host, root=root)
    return Handle(world, what, request, host, _finisher(world, None, array))


def _gather_counts(world: World, array, records, name) -> list:
    """Every rank's first dimension (from the handshake, or exchanged when checks are off)."""
    if records is not None:
        return [r["shape"][0] for r in records]
    counts = np.zeros(world.size, np.int64)
    wait_for(world.comm.Iallgather(np.array([array.shape[0]], np.int64), counts),
             lambda: f"all_gather of {name or 'tensor'} (row counts)", world)
    return counts.tolist()


def start_all_gather(array, name: Optional[str] = None, check: Optional[bool] = None) -> Handle:
    """Start concatenating every rank's ``array`` along the first axis, in rank order.

    The parts may differ in their first dimension (the other dimensions must agree): the result has
    shape ``(sum of the ranks' n_r, *rest)``.
    """
    if array.ndim == 0:
        raise ShapeError(f"all_gather of {name or 'a tensor'}: needs at least one dimension, got a scalar")
    world, records = _begin("all_gather", array, name, check=check)
    what = f"all_gather of {name or 'tensor'} {tuple(array.shape)}"
    if world.size == 1:
        return Handle(world, what, result=array.copy())
    counts = _gather_counts(world, array, records, name)
    host = _host(array)
    rest = host.shape[1:]
    row = int(np.prod(rest, dtype=np.int64))
    out = np.empty((sum(counts),) + rest, host.dtype)
    sizes = [c * row for c in counts]
    offsets = np.cumsum([0] + sizes[:-1]).tolist()
    request = world.comm.Iallgatherv(host, [out, (sizes, offsets)])
    return Handle(world, what, request, out, _finisher(world, None, array), keep=host)


def split_counts(total: int, parts: int) -> list:
    """How ``total`` rows are split among ``parts`` ranks: as equal as possible, the first ranks one longer."""
    base, extra = divmod(total, parts)
    return [base + (1 if r < extra else 0) for r in range(parts)]


def start_reduce_scatter(array, op: str = "sum", name: Optional[str] = None, counts: Optional[Sequence[int]] = None,
                         check: Optional[bool] = None) -> Handle:
    """Start reducing ``array`` (the same shape on every rank) and giving each rank its block of rows.

    Rank ``r`` gets rows ``sum(counts[:r]) .. sum(counts[:r+1])`` of the reduced array; ``counts``
    defaults to an even split of the first axis (the first ranks one row longer when it does not divide).
    """
    if array.ndim == 0:
        raise ShapeError(f"reduce_scatter of {name or 'a tensor'}: needs at least one dimension, got a scalar")
    world, _ = _begin("reduce_scatter", array, name, op=op, check=check)
    counts = list(counts) if counts is not None else split_counts(array.shape[0], world.size)
    if len(counts) != world.size or sum(counts) != array.shape[0]:
        raise ShapeError(f"reduce_scatter of {name or 'a tensor'}: counts {counts} must have one entry per rank "
                         f"({world.size}) and sum to the first dimension {array.shape[0]}")
    what = f"reduce_scatter({op}) of {name or 'tensor'} {tuple(array.shape)}"
    if world.size == 1:
        return Handle(world, what, result=array.copy())
    host = _host(array)
    rest = host.shape[1:]
    row = int(np.prod(rest, dtype=np.int64))
    out = np.empty((counts[world.rank],) + rest, host.dtype)
    request = world.comm.Ireduce_scatter(host, out, [c * row for c in counts], op=_mpi_op(op))
    return Handle(world, what, request, out, _finisher(world, op, array), keep=host)


def all_reduce(array, op: str = "sum", name: Optional[str] = None):
    """Blocking :func:`start_all_reduce`: the reduction of ``array`` over all ranks."""
    return start_all_reduce(array, op, name).wait()


def broadcast(array, root: int = 0, name: Optional[str] = None):
    """Blocking :func:`start_broadcast`: rank ``root``'s ``array``."""
    return start_broadcast(array, root, name).wait()


def all_gather(array, name: Optional[str] = None):
    """Blocking :func:`start_all_gather`: every rank's ``array`` concatenated along axis 0."""
    return start_all_gather(array, name).wait()


def reduce_scatter(array, op: str = "sum", name: Optional[str] = None, counts: Optional[Sequence[int]] = None):
    """Blocking :func:`start_reduce_scatter`: this rank's block of the reduction."""
    return start_reduce_scatter(array, op, name, counts).wait()


def barrier() -> None:
    """Wait until every rank reaches this call (bounded by the world's timeout)."""
    world = require_init("barrier()")
    if world.size > 1 and world.check:
        handshake(world, {"kind": "barrier", "name": "", "shape": [], "dtype": "", "device": ""})
    elif world.size > 1:
        wait_for(world.comm.Ibarrier(), lambda: "barrier()", world)
    world.sequence += 1
