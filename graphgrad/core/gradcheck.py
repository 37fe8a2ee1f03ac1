"""``check_grad``: verify an op's gradient against float64 central differences.

The check projects the output on a random upstream gradient ``v`` (so any output shape reduces to
the scalar ``<v, f(x)>``) and compares, element by element, autograd's ``d<v, f>/dx`` with
``(<v, f(x + eps e_i)> - <v, f(x - eps e_i)>) / 2 eps``. Large inputs are checked on a random sample
of elements plus random directions. ``order=2`` repeats the check on the gradient itself
(``x -> <w, d<v, f>/dx>``), which exercises every backward rule's own backward.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from graphgrad.backend import np, to_numpy
from graphgrad.core.autograd import grad
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphgradError


class GradcheckError(GraphgradError, AssertionError):
    """Analytic and numerical gradients disagree."""


@dataclass
class GradcheckReport:
    """Outcome of :func:`check_grad`: the worst element seen per order."""

    ok: bool
    worst: list  # (order, input index, element index, analytic, numeric, error)

    def __str__(self) -> str:
        lines = [f"check_grad {'passed' if self.ok else 'FAILED'}"]
        for order, i, idx, a, n, err in self.worst:
            lines.append(f"  order {order}, input {i}, element {idx}: analytic {a:.6g}, numeric {n:.6g} "
                         f"(error {err:.3g})")
        return "\n".join(lines)


def _as_float64_inputs(inputs):
    xs = []
    for x in inputs:
        if isinstance(x, Tensor) and x.dtype.kind == "f":
            xs.append(Tensor._wrap(to_numpy(x._data).astype(np.float64), None, True))
        elif isinstance(x, Tensor):
            xs.append(x)
        elif isinstance(x, np.ndarray) and x.dtype.kind == "f":
            xs.append(Tensor._wrap(x.astype(np.float64), None, True))
        else:
            xs.append(x)
    return xs


def _scalar_fn(fn: Callable, v_seed: int):
    """``fn`` projected on a fixed random upstream gradient: returns (value, v) helpers."""
    cache = {}

    def project(*xs) -> tuple:
        out = fn(*xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if "v" not in cache:
            rng = np.random.default_rng(v_seed)
            cache["v"] = [rng.standard_normal(o.shape) for o in outs]
        return outs, cache["v"]

    return project


def _value(project, xs) -> float:
    outs, vs = project(*xs)
    return float(sum(np.sum(to_numpy(o._data).astype(np.float64) * v) for o, v in zip(outs, vs)))


def _analytic(project, xs, wrt, create_graph):
    outs, vs = project(*xs)
    live = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if not live:
        return [None] * len(wrt)
    return grad([o for o, _ in live], [xs[i] for i in wrt],
                grad_outputs=[Tensor._wrap(v.astype(o.dtype)) for o, v in live],
                create_graph=create_graph, allow_unused=True)


def _check_order(project, xs, wrt, eps, atol, rtol, order, max_elements, rng):
    """Compare analytic and numeric directional derivatives; returns (ok, worst entry)."""
    grads = _analytic(project, xs, wrt, create_graph=False)
    worst = None
    for slot, i in enumerate(wrt):
        base = xs[i]._data
        analytic = np.zeros(base.shape) if grads[slot] is None else to_numpy(grads[slot]._data).astype(np.float64)
        n = base.size
        elements = list(range(n)) if n <= max_elements else list(rng.choice(n, max_elements, replace=False))
        directions = [(tuple(int(j) for j in np.unravel_index(e, base.shape)), np.eye(1, n, e).reshape(base.shape))
                      for e in elements]
        if n > max_elements:
            directions += [("random direction", rng.standard_normal(base.shape)) for _ in range(2)]
        for index, d in directions:
            shifted = []
            for sign in (1, -1):
                moved = list(xs)
                moved[i] = Tensor._wrap(base + sign * eps * d, None, True)
                shifted.append(_value(project, moved))
            numeric = (shifted[0] - shifted[1]) / (2 * eps)
            exact = float(np.sum(analytic * d))
            err = abs(exact - numeric)
            entry = (order, i, index, exact, numeric, err)
            if worst is None or err > worst[5]:
                worst = entry
            if not err <= atol + rtol * abs(numeric):
                return False, entry
    return True, worst


def check_grad(fn: Callable, *inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
               order: int = 1, wrt: Optional[Sequence[int]] = None, max_elements: int = 48, seed: int = 0,
               raise_exception: bool = True) -> GradcheckReport:
    """Check the gradient of ``fn(*inputs)`` (first and, with ``order=2``, second order).

    Args:
        fn: a function of tensors returning a tensor (or a tuple of tensors).
        inputs: tensors/arrays; float ones are copied to float64 and differentiated, others passed as is.
        eps, atol, rtol: finite-difference step and tolerances (``|analytic - numeric| <= atol + rtol*|numeric|``).
        order: 1, or 2 to check the gradient of the gradient as well.
        wrt: indices of the inputs to differentiate (default: every float input).
        max_elements: inputs larger than this are checked on a random sample of elements.

    Returns:
        A :class:`GradcheckReport`; raises :class:`GradcheckError` naming the worst element when a
        check fails (unless ``raise_exception=False``).

    Examples:
        >>> gg.check_grad(lambda x: (x * x).sin(), gg.randn(3, 4), order=2)
    """
    xs = _as_float64_inputs(inputs)
    if wrt is None:
        wrt = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    rng = np.random.default_rng(seed)
    project = _scalar_fn(fn, seed + 1)
    ok, entry = _check_order(project, xs, wrt, eps, atol, rtol, 1, max_elements, rng)
    worst = [entry] if entry else []
    if ok and order >= 2:

        def gradient_fn(*moved):
            grads = _analytic(project, moved, wrt, create_graph=True)
            return tuple(g for g in grads if g is not None)

        inner = _scalar_fn(gradient_fn, seed + 7)
        ok, entry = _check_order(inner, xs, wrt, eps, atol * 10, rtol * 10, 2, max_elements, rng)
        worst += [entry] if entry else []
    report = GradcheckReport(ok, worst)
    if not ok and raise_exception:
        raise GradcheckError(str(report))
    return report
