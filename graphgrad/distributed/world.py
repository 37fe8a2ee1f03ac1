"""The process world: who we are (rank), how many we are (world size), and how a failure ends the job.

graphgrad scales out on MPI through mpi4py, imported only here and only when a launcher started
several processes (``mpiexec -n 4 python train.py`` or ``python -m graphgrad.distributed.run -n 4
train.py``). A script started without a launcher runs as a world of one process, with no MPI at all,
so the same script works unchanged on a laptop.

Failures must never hang a job: :func:`init` installs an exception hook that prints the traceback
with the rank's number and aborts every rank (``MPI_Abort``), so an exception on one rank ends all of
them within seconds with a non-zero exit.
"""
from __future__ import annotations

import atexit
import os
import sys
import traceback
from typing import Optional

from graphgrad.errors import GraphgradError

#: Environment variables a launcher sets on every rank it starts (MPICH/Hydra, Open MPI, Slurm...).
_LAUNCHER_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "PMIX_RANK", "MV2_COMM_WORLD_SIZE")
#: Seconds a collective waits for the other ranks before it raises (override: ``init(timeout=...)``
#: or the ``GRAPHGRAD_DIST_TIMEOUT`` environment variable).
DEFAULT_TIMEOUT = 300.0


class DistributedError(GraphgradError, RuntimeError):
    """A distributed operation was misused, or the ranks disagree about what to do."""


class CollectiveTimeout(DistributedError, TimeoutError):
    """A collective waited longer than the world's timeout for the other ranks."""


class World:
    """The state of this process's world (one per process; read it through the module functions).

    Attributes:
        comm: the mpi4py communicator, or ``None`` for a world of one process without MPI.
        rank, size, local_rank, local_size: this process's place in the job.
        timeout: seconds a collective waits for the other ranks.
        check: whether every collective first checks that all ranks submitted the same one.
    """

    def __init__(self) -> None:
        self.initialized = False
        self.comm = None
        self.rank = 0
        self.size = 1
        self.local_rank = 0
        self.local_size = 1
        self.timeout = DEFAULT_TIMEOUT
        self.check = True
        self.sequence = 0  # number of collectives submitted so far (the same on every rank)


WORLD = World()


def launched_by_mpi() -> bool:
    """Whether an MPI launcher started this process (then :func:`init` uses MPI)."""
    return any(os.environ.get(name) for name in _LAUNCHER_SIZE_VARIABLES)


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise DistributedError(
            "this process was started by an MPI launcher but mpi4py is not installed: "
            "pip install 'graphgrad[mpi]' (mpi4py and an MPI, e.g. the mpich wheel)") from error
    return MPI


def init(timeout: Optional[float] = None, check: Optional[bool] = None) -> None:
    """Join the world: under an MPI launcher, initialise MPI; otherwise become a world of one.

    Calling it again does nothing (beyond updating ``timeout``/``check`` when given).

    Args:
        timeout: seconds a collective waits for the other ranks before raising
            :class:`CollectiveTimeout` (default 300, or ``GRAPHGRAD_DIST_TIMEOUT``).
        check: check, before each collective, that every rank submitted the same one (same kind,
            shape, dtype, device and position in the sequence); a mismatch raises an error naming
            the ranks and tensors instead of deadlocking. Default on (``GRAPHGRAD_DIST_CHECK=0`` turns it off).
    """
    world = WORLD
    if timeout is None and "GRAPHGRAD_DIST_TIMEOUT" in os.environ:
        timeout = float(os.environ["GRAPHGRAD_DIST_TIMEOUT"])
    if check is None and "GRAPHGRAD_DIST_CHECK" in os.environ:
        check = os.environ["GRAPHGRAD_DIST_CHECK"] not in ("0", "false", "False", "")
    if timeout is not None:
        if timeout <= 0:
            raise ValueError(f"init(): timeout must be positive seconds, got {timeout}")
        world.timeout = float(timeout)
    if check is not None:
        world.check = bool(check)
    if world.initialized:
        return
    if launched_by_mpi():
        MPI = _import_mpi()
        comm = MPI.COMM_WORLD.Dup()
        world.comm = comm
        world.rank, world.size = comm.Get_rank(), comm.Get_size()
        local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=world.rank)
        world.local_rank, world.local_size = local.Get_rank(), local.Get_size()
        local.Free()
        _install_abort_on_exception()
        atexit.register(_leave)
    world.initialized = True


def _install_abort_on_exception() -> None:
    """An uncaught exception on any rank prints its traceback, naming the rank, and aborts every rank."""
    previous = sys.excepthook

    def abort_all(kind, value, tb) -> None:
        try:
            text = "".join(traceback.format_exception(kind, value, tb))
            sys.stderr.write(f"[graphgrad rank {WORLD.rank}/{WORLD.size}] uncaught exception, aborting all ranks:\n"
                             + text)
            sys.stderr.flush()
            sys.stdout.flush()
        finally:
            if WORLD.comm is not None and WORLD.size > 1 and kind is not KeyboardInterrupt:
                WORLD.comm.Abort(1)
            previous(kind, value, tb)

    sys.excepthook = abort_all


def _leave() -> None:
    """At exit, tell the other ranks this one has finished (a last handshake): ranks still waiting
    in a collective then fail at once, naming this rank, instead of waiting for the timeout."""
    world = WORLD
    if world.comm is None or world.size == 1 or not world.check:
        return
    from graphgrad.distributed import comm

    try:
        comm.handshake(world, {"kind": "exit", "name": "", "shape": [], "dtype": "", "device": ""})
    except DistributedError:
        pass  # another rank is waiting in a collective: it reports the mismatch and aborts the job


def require_init(what: str) -> World:
    """The world, or a clear error when :func:`init` was not called."""
    if not WORLD.initialized:
        raise DistributedError(f"{what} needs the distributed world: call graphgrad.distributed.init() first")
    return WORLD


def is_initialized() -> bool:
    """Whether :func:`init` was called in this process."""
    return WORLD.initialized


def rank() -> int:
    """This process's rank, ``0 .. world_size() - 1`` (0 in a world of one)."""
    return require_init("rank()").rank


def world_size() -> int:
    """The number of processes in the job (1 without a launcher)."""
    return require_init("world_size()").size


def local_rank() -> int:
    """This process's rank among the processes on its machine (to pick a GPU, say)."""
    return require_init("local_rank()").local_rank


def is_main_process() -> bool:
    """True on rank 0, or when the world was never initialised (a plain one-process run)."""
    return not WORLD.initialized or WORLD.rank == 0


def mpi():
    """The mpi4py ``MPI`` module (only under a launcher)."""
    return _import_mpi()


__all__ = ["init", "is_initialized", "rank", "world_size", "local_rank", "is_main_process", "DistributedError",
           "CollectiveTimeout", "WORLD", "launched_by_mpi"]
