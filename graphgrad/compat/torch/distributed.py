"""``torch.distributed`` on graphgrad's MPI world (graphgrad.distributed): the process-group calls and
the collectives PyTorch data-parallel programs use, with PyTorch's meanings — collectives write their
result into the tensor passed (``all_reduce(t)`` changes ``t``), ``all_gather(tensor_list, t)`` fills
the list. Launch with ``mpiexec -n N python train.py`` (or ``python -m graphgrad.distributed.run -n N
train.py``) instead of ``torchrun``; without a launcher a program runs as a world of one. The
``backend``, ``init_method``, ``group`` and ``device_ids`` arguments are accepted and ignored (MPI
is the one backend, the world the one group). See docs/pytorch.md and docs/distributed.md.
"""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as _gg
from graphgrad import distributed as _dist
from graphgrad.distributed import DistributedDataParallel  # noqa: F401  (torch.nn.parallel's too)

Tensor = _gg.Tensor


class ReduceOp:
    """The reductions of ``all_reduce`` / ``reduce`` (PyTorch's names)."""

    SUM = "sum"
    AVG = "mean"
    MAX = "max"
    MIN = "min"


class Backend:
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"


group = type("group", (), {"WORLD": None})


def is_available() -> bool:
    """Always true: a world of one needs no MPI; several ranks need mpi4py and a launcher."""
    return True


def is_mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_nccl_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def init_process_group(backend: Any = None, init_method: Any = None, timeout: Any = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Join the MPI world (``graphgrad.distributed.init``). ``world_size`` and ``rank``, when given, must
    be what the launcher made; ``timeout`` (a ``datetime.timedelta`` or seconds) bounds collectives."""
    seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
    _dist.init(timeout=seconds)
    if world_size not in (-1, None) and int(world_size) != _dist.world_size():
        raise ValueError(f"init_process_group: world_size={world_size}, but the launcher started "
                         f"{_dist.world_size()} process(es): launch with mpiexec -n {world_size}")
    if rank not in (-1, None) and int(rank) != _dist.rank():
        raise ValueError(f"init_process_group: rank={rank}, but this process is rank {_dist.rank()} "
                         "(ranks come from the MPI launcher)")


def destroy_process_group(group: Any = None) -> None:
    """Accepted for PyTorch programs; the MPI world ends with the process."""


def is_initialized() -> bool:
    return _dist.is_initialized()


def get_rank(group: Any = None) -> int:
    return _dist.rank()


def get_world_size(group: Any = None) -> int:
    return _dist.world_size()


def get_backend(group: Any = None) -> str:
    return Backend.MPI


def new_group(ranks: Any = None, timeout: Any = None, backend: Any = None, pg_options: Any = None) -> None:
    """Only the whole world is a group here: ``ranks`` must be all of them (or None)."""
    if ranks is not None and sorted(int(r) for r in ranks) != list(range(_dist.world_size())):
        raise NotImplementedError("new_group: graphgrad's MPI collectives run over the whole world only; "
                                  f"got ranks {list(ranks)} of {_dist.world_size()}")
    return None


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    _dist.barrier()


class _Done:
    """What ``async_op=True`` returns: the result is already in the tensor."""

    def wait(self, timeout: Any = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def _write(tensor: Tensor, compute, how: str) -> None:
    """``tensor`` becomes ``compute(tensor)`` (a collective's result) in place, outside autograd: PyTorch's
    c10d collectives are not differentiable either (a later backward through a value saved before the
    write raises, as PyTorch's version counter does)."""
    with _gg.no_grad():
        tensor.copy_(compute(tensor))


def _finish(async_op: bool):
    return _Done() if async_op else None


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group: Any = None, async_op: bool = False):
    """``tensor`` becomes its reduction over all ranks (``ReduceOp.SUM`` by default)."""
    _write(tensor, lambda value: _dist.all_reduce(value, op=op), "all_reduce")
    return _finish(async_op)


def reduce(tensor: Tensor, dst: int, op: str = ReduceOp.SUM, group: Any = None, async_op: bool = False):
    """The reduction into ``tensor`` on rank ``dst`` (the other ranks receive it too, which PyTorch allows)."""
    _write(tensor, lambda value: _dist.all_reduce(value, op=op), "reduce")
    return _finish(async_op)


def broadcast(tensor: Tensor, src: int, group: Any = None, async_op: bool = False):
    """``tensor`` becomes rank ``src``'s ``tensor`` on every rank."""
    _write(tensor, lambda value: _dist.broadcast(value, src=src), "broadcast")
    return _finish(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None, async_op: bool = False):
    """``tensor_list[r]`` becomes rank ``r``'s ``tensor`` (every rank's of the same shape)."""
    gathered = _dist.all_gather(_gg.expand_dims(tensor, 0))
    if len(tensor_list) != gathered.shape[0]:
        raise ValueError(f"all_gather: tensor_list holds {len(tensor_list)} tensors for {gathered.shape[0]} ranks")
    for r, target in enumerate(tensor_list):
        _write(target, lambda _, part=gathered[r]: part, "all_gather")
    return _finish(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False):
    """``output_tensor`` becomes the ranks' ``input_tensor`` concatenated along the first axis."""
    _write(output_tensor, lambda _: _dist.all_gather(input_tensor), "all_gather_into_tensor")
    return _finish(async_op)


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """``object_list[r]`` becomes rank ``r``'s ``obj`` (any picklable object)."""
    if not _dist.is_initialized() or _dist.world_size() == 1:
        object_list[0] = obj
        return
    gathered = _dist.world.mpi().COMM_WORLD.allgather(obj)
    object_list[:] = gathered


def broadcast_object_list(object_list: list, src: int = 0, group: Any = None, device: Any = None) -> None:
    """Every rank's ``object_list`` becomes rank ``src``'s."""
    if not _dist.is_initialized() or _dist.world_size() == 1:
        return
    object_list[:] = _dist.world.mpi().COMM_WORLD.bcast(list(object_list), root=src)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: str = ReduceOp.SUM, group: Any = None,
                          async_op: bool = False):
    """``output`` becomes this rank's block of rows of the reduction of ``input`` over the ranks."""
    _write(output, lambda _: _dist.reduce_scatter(input, op=op), "reduce_scatter_tensor")
    return _finish(async_op)


__all__ = ["ReduceOp", "Backend", "group", "is_available", "is_mpi_available", "is_nccl_available",
           "is_gloo_available", "is_torchelastic_launched", "init_process_group", "destroy_process_group",
           "is_initialized", "get_rank", "get_world_size", "get_backend", "new_group", "barrier", "all_reduce",
           "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "broadcast_object_list", "reduce_scatter_tensor", "DistributedDataParallel"]
