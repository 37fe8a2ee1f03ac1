"""``DistributedDataParallel``: average gradients across ranks while ``backward()`` still runs.

Each rank holds a full copy of the model and trains on its own part of the batch. After
``backward()`` every parameter's ``.grad`` must hold the average over the ranks, as if one process
had computed the mean loss of the whole batch. The wrapper gets there in three steps:

1. at construction, rank 0's parameters and buffers are broadcast, so every replica starts equal;
2. the parameters are grouped into *buckets* of about ``bucket_mb`` megabytes, in reverse order of
   registration (backward reaches the last layers first). A post-accumulate-grad hook marks a
   parameter ready when its ``.grad`` is complete; when a whole bucket is ready its gradients are
   copied into one flat buffer and a nonblocking all-reduce starts, so the transfer overlaps the
   rest of backward. Buckets start strictly in bucket order, so every rank issues the same
   collectives in the same sequence (and, as every collective, each is checked against the other
   ranks' unless ``init(check=False)``: code that runs a collective on some ranks only is caught);
3. when backward ends (a callback queued by the first hook), the remaining buckets start, every
   transfer is waited for, and each ``.grad`` is replaced by its average.

Each bucket also carries one flag per parameter (1 when this rank has a gradient for it), so a
parameter no rank used keeps ``.grad = None``, exactly like one process would, and one used on
some ranks only gets the average with zeros elsewhere. Inside ``gg.function`` the hooks see graph
tensors: the compiled step then contains the bucketed all-reduces as graph ops.
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Iterator

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core import autograd
from graphgrad.core.tensor import Tensor
from graphgrad.distributed import comm
from graphgrad.distributed.graph import grouped_all_reduce
from graphgrad.distributed.world import DistributedError, World, require_init
from graphgrad.nn.module import Module

#: Default bucket size in megabytes (PyTorch's default as well).
DEFAULT_BUCKET_MB = 25.0


class _Bucket:
    """Parameters whose gradients travel together: ``flat`` holds their gradients then one presence
    flag per parameter."""

    def __init__(self, index: int, params: list) -> None:
        self.index = index
        self.params = params
        self.sizes = [p.size for p in params]
        self.offsets = np.cumsum([0] + self.sizes[:-1]).tolist()
        self.numel = sum(self.sizes)
        self.flat = np.zeros(self.numel + len(params), params[0].dtype)
        self.ready = 0
        self.handle = None

    @property
    def nbytes(self) -> int:
        return self.flat.nbytes


def _plan(params: list, bucket_mb: float) -> list:
    """Split ``params`` (already in reverse registration order) into buckets of one dtype and at most
    ``bucket_mb`` megabytes (a larger parameter gets a bucket of its own)."""
    limit = bucket_mb * 2 ** 20
    buckets: list = []
    current: list = []
    size = 0
    for p in params:
        nbytes = p.size * p.dtype.itemsize
        if current and (p.dtype != current[0].dtype or size + nbytes > limit):
            buckets.append(_Bucket(len(buckets), current))
            current, size = [], 0
        current.append(p)
        size += nbytes
    if current:
        buckets.append(_Bucket(len(buckets), current))
    return buckets


class DistributedDataParallel(Module):
    """Data-parallel wrapper: gradients averaged over the ranks during ``backward()``.

    Args:
        module: the model (every rank builds the same architecture).
        bucket_mb: gradients travel in buckets of about this many megabytes; smaller buckets start
            communicating earlier, bigger ones pay the per-message latency fewer times.
        broadcast_buffers: at each forward in training mode, copy rank 0's buffers (BatchNorm
            running statistics) to every rank, so all replicas keep the same state.

    ``forward`` is the module's; ``state_dict()`` keys carry the ``module.`` prefix (as in PyTorch;
    ``gg.load_checkpoint`` accepts either form). Every optimizer and scheduler works unchanged:
    they only see the averaged ``.grad``. Needs ``graphgrad.distributed.init()``.

    Examples:
        >>> dist.init()
        >>> model = DistributedDataParallel(Net())
        >>> opt = gg.optim.SGD(model.parameters(), lr=0.1)
        >>> loss = loss_fn(model(x_local), y_local); loss.backward(); opt.step()
    """

    def __init__(self, module: Module, bucket_mb: float = DEFAULT_BUCKET_MB, broadcast_buffers: bool = True) -> None:
        super().__init__()
        world = require_init("DistributedDataParallel")
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an nn.Module, got {type(module).__name__}")
        if bucket_mb <= 0:
            raise ValueError(f"DistributedDataParallel: bucket_mb must be positive, got {bucket_mb}")
        self.module = module
        self.bucket_mb = float(bucket_mb)
        self.broadcast_buffers = bool(broadcast_buffers)
        self.last_stats: dict = {}
        self._world: World = world
        self._sync = True
        self._queued = False
        self._traced = False
        self._next = 0
        self._started_at = 0.0
        params, seen = [], set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        self._names = {id(p): name for name, p in module.named_parameters()}
        self._broadcast_state()
        self._buckets = _plan(params[::-1], self.bucket_mb)
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        self._removers = []
        if world.size > 1:
            self._check_layout()
            self._removers = [p.register_post_accumulate_grad_hook(self._ready) for p in params]

    # ---- construction -----------------------------------------------------------------------------
    def _broadcast_state(self) -> None:
        """Rank 0's parameters and buffers on every rank (a checked collective per tensor: a shape or
        dtype that differs on some rank raises an error naming the parameter)."""
        if self._world.size == 1:
            return
        for name, p in self.module.named_parameters():
            p._data[...] = comm.broadcast(p._data, 0, name=f"parameter {name}")
            autograd.note_inplace_write(p._data, "the broadcast of rank 0's parameters")
        self._broadcast_buffers()

    def _broadcast_buffers(self) -> None:
        for name, b in self.module.named_buffers():
            if b is not None and b._data is not None:
                b._data[...] = comm.broadcast(b._data, 0, name=f"buffer {name}")
                autograd.note_inplace_write(b._data, "the broadcast of rank 0's buffers")

    def _check_layout(self) -> None:
        """Every rank must have planned the same buckets (then the hot path can skip the handshake)."""
        layout = np.array([[len(self._buckets)] + [v for b in self._buckets for v in (b.numel, b.flat.dtype.num)]],
                          np.int64)
        everyone = comm.all_gather(layout, name="gradient bucket layout")
        if (everyone != layout).any():
            raise DistributedError(f"the ranks planned different gradient buckets (rank {self._world.rank}: "
                                   f"{layout.tolist()}, all: {everyone.tolist()}): every rank must wrap the same "
                                   "model with the same bucket_mb")

    def remove_hooks(self) -> None:
        """Stop averaging (the wrapper then behaves as the bare module)."""
        for remove in self._removers:
            remove()
        self._removers = []

    # ---- the training step ---------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        if self.training and self.broadcast_buffers and self._world.size > 1 and not self._tracing(args):
            self._broadcast_buffers()
        return self.module(*args, **kwargs)

    @staticmethod
    def _tracing(args) -> bool:
        return any(isinstance(a, Tensor) and a._data is None for a in args)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside it, ``backward()`` only accumulates gradients locally; the first ``backward()``
        after it averages everything accumulated (gradient accumulation over micro-batches)."""
        previous, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = previous

    def _ready(self, param: Tensor) -> None:
        """Post-accumulate hook: ``param.grad`` is complete for this backward pass."""
        if not self._sync:
            return
        if not self._queued:
            self._queued = True
            self._started_at = time.perf_counter()
            autograd.queue_callback(self._finish)
        if param.grad._data is None:  # tracing a gg.function: the reduction becomes graph ops
            self._traced = True
            return
        bucket = self._bucket_of[id(param)]
        bucket.ready += 1
        while self._next < len(self._buckets) and self._buckets[self._next].ready == len(self._buckets[self._next].params):
            self._start(self._buckets[self._next])
            self._next += 1
        for b in self._buckets[:self._next]:  # let MPI progress the transfers in flight
            if b.handle is not None and not b.handle.is_completed():
                break

    def _start(self, bucket: _Bucket) -> None:
        flat, numel = bucket.flat, bucket.numel
        for i, (p, offset, size) in enumerate(zip(bucket.params, bucket.offsets, bucket.sizes)):
            grad = p.grad
            if grad is None:
                flat[offset:offset + size] = 0
                flat[numel + i] = 0
            else:
                flat[offset:offset + size] = backend.to_numpy(grad._data).reshape(-1)  # (MPI reads host memory)
                flat[numel + i] = 1
        bucket.handle = comm.start_all_reduce(flat, "sum", name=f"gradient bucket {bucket.index}")

    def _finish(self) -> None:
        """End of backward: start the buckets not started yet, wait for all, write the averages."""
        self._queued = False
        if self._traced:
            self._traced = False
            self._finish_traced()
            return
        launched_early = self._next
        while self._next < len(self._buckets):
            self._start(self._buckets[self._next])
            self._next += 1
        waited = time.perf_counter()
        size = self._world.size
        for bucket in self._buckets:
            total = bucket.handle.wait()
            bucket.handle, bucket.ready = None, 0
            counts = total[bucket.numel:]
            for i, (p, offset, n) in enumerate(zip(bucket.params, bucket.offsets, bucket.sizes)):
                if counts[i] == 0:  # no rank had a gradient: like one process, the parameter keeps none
                    p.grad = None
                    continue
                mean = total[offset:offset + n]
                mean /= size
                p.grad = Tensor._wrap(backend.to_device(mean.reshape(p.shape), backend.device_of(p._data)))
        self._next = 0
        end = time.perf_counter()
        self.last_stats = {"buckets": len(self._buckets), "bytes": sum(b.nbytes for b in self._buckets),
                           "started_during_backward": launched_early, "backward_s": waited - self._started_at,
                           "wait_s": end - waited}

    def _finish_traced(self) -> None:
        for bucket in self._buckets:
            bucket.ready = 0
            params = [p for p in bucket.params if p.grad is not None and p.grad._data is None]
            if not params:
                continue
            names = [f"gradient of {self._names.get(id(p), 'parameter')}" for p in params]
            averaged = grouped_all_reduce([p.grad for p in params], "mean", self.bucket_mb, names)
            for p, g in zip(params, averaged):
                p.grad = g
        self._next = 0

    # ---- delegation ------------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            modules = self.__dict__.get("_modules")
            if modules is not None and "module" in modules:
                return getattr(modules["module"], name)
            raise


DDP = DistributedDataParallel

__all__ = ["DistributedDataParallel", "DDP", "DEFAULT_BUCKET_MB", "DistributedError"]
