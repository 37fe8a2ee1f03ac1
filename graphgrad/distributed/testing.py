"""``check_grad_distributed``: verify a gradient that flows through communication, on every rank.

With collectives, one rank's input changes other ranks' outputs, so a finite-difference check must
move one rank's input while every rank evaluates. The objective is the one data-parallel autodiff
differentiates: each rank projects its output on its own random ``v_r``, and the objective is the sum
over ranks ``F = sum_r <v_r, f_r(x_0, ..., x_{N-1})>``. Autograd's gradient on rank ``p`` (each
rank calls ``backward`` on its own projection) is compared with ``(F(x_p + eps e_i) - F(x_p - eps
e_i)) / 2 eps``, for a sample of elements ``i`` of every rank's inputs in turn. Every rank must call
it with the same ``fn``: it runs the same collectives everywhere.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from graphgrad.backend import np, to_numpy
from graphgrad.core.autograd import no_grad
from graphgrad.core.gradcheck import GradcheckError
from graphgrad.core.tensor import Tensor
from graphgrad.distributed import comm
from graphgrad.distributed.world import require_init


def _float64(inputs) -> list:
    return [Tensor._wrap(to_numpy(x._data if isinstance(x, Tensor) else x).astype(np.float64), None, True)
            if (isinstance(x, Tensor) or hasattr(x, "dtype")) and x.dtype.kind == "f" else x for x in inputs]


def _projection(out, v: list) -> Tensor:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = None
    for o, w in zip(outs, v):
        term = (o * Tensor._wrap(w)).sum()
        total = term if total is None else total + term
    return total


def check_grad_distributed(fn: Callable, *inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                           max_elements: int = 12, seed: int = 0, wrt: Optional[Sequence[int]] = None) -> float:
    """Check the gradient of ``fn(*inputs)`` across ranks (call it on every rank, collectively).

    Args:
        fn: a function of tensors that may use collectives; returns a tensor or a tuple of tensors.
        inputs: this rank's inputs (float ones are copied to float64 and differentiated).
        max_elements: elements checked per rank and input (a random sample when there are more).

    Returns:
        The largest error seen, on every rank; raises :class:`GradcheckError` on every rank, naming
        the rank, input and element, when a check fails anywhere.
    """
    world = require_init("check_grad_distributed()")
    xs = _float64(inputs)
    if wrt is None:
        wrt = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    out = fn(*xs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    rng = np.random.default_rng(seed + 1000 * world.rank)
    v = [rng.standard_normal(o.shape) for o in outs]
    _projection(out, v).backward()
    analytic = {i: (to_numpy(xs[i].grad._data) if xs[i].grad is not None else np.zeros(xs[i].shape)) for i in wrt}

    def objective() -> float:
        with no_grad():
            local = _projection(fn(*xs), v).numpy().reshape(1)
        return float(comm.all_reduce(local, "sum", name="check_grad objective")[0])

    worst, failure = 0.0, None
    for p in range(world.size):
        for i in wrt:
            size = xs[i].size if world.rank == p else 0
            size = int(comm.broadcast(np.array([size], np.int64), root=p, name="check_grad size")[0])
            picks = rng.permutation(size)[:max_elements] if world.rank == p else np.zeros(min(size, max_elements), np.int64)
            picks = comm.broadcast(picks.astype(np.int64), root=p, name="check_grad elements")
            for k in picks.tolist():
                values = []
                for sign in (1.0, -1.0):
                    if world.rank == p:
                        flat = xs[i]._data.reshape(-1)
                        saved = flat[k]
                        flat[k] = saved + sign * eps
                    values.append(objective())
                    if world.rank == p:
                        flat[k] = saved
                if world.rank == p:
                    numeric = (values[0] - values[1]) / (2 * eps)
                    exact = float(analytic[i].reshape(-1)[k])
                    err = abs(exact - numeric)
                    worst = max(worst, err)
                    if failure is None and not err <= atol + rtol * abs(numeric):
                        failure = f"rank {p}, input {i}, element {k}: analytic {exact:.6g}, numeric {numeric:.6g}"
    flags = comm.all_gather(np.array([failure is not None], np.int64), name="check_grad outcome")
    worst = float(comm.all_reduce(np.array([worst]), "max", name="check_grad worst")[0])
    if flags.any():
        bad = [r for r, f in enumerate(flags.tolist()) if f]
        raise GradcheckError(f"distributed gradient check failed on rank(s) {bad}" + (f": {failure}" if failure else ""))
    return worst
