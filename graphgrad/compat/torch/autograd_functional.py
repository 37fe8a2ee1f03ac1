"""``torch.autograd.functional``: Jacobians, Hessians and vector products of a function, by graphgrad's
reverse mode (``gg.grad``): ``jacobian`` and ``hessian`` take one backward pass per output element, so
they suit the small functions they are used on (physics losses, second-order checks, teaching).

Shapes follow PyTorch: for one input ``x`` and one output ``y``, ``jacobian`` is ``y.shape + x.shape``
and ``hessian`` ``x.shape + x.shape``; with a tuple of inputs (or outputs) the result is a tuple (of
tuples) in the same order.
"""
from __future__ import annotations

from typing import Any, Callable

import graphgrad as _gg

Tensor = _gg.Tensor


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _leaves(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs as tensors that require grad (kept in the caller's graph with ``create_graph``)."""
    out = []
    for x in inputs:
        x = x if isinstance(x, Tensor) else _gg.tensor(x)
        if create_graph and x.requires_grad:
            out.append(x)
        else:
            out.append(x.detach().requires_grad_(True))
    return tuple(out)


def _grads(output: Tensor, inputs: tuple, grad_output: Any, create_graph: bool) -> list:
    grads = _gg.grad(output, list(inputs), grad_outputs=grad_output, retain_graph=True, create_graph=create_graph,
                     allow_unused=True)
    return [g if g is not None else _gg.zeros_like(x) for g, x in zip(grads, inputs)]


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``d func(x)[i] / d x[j]`` of shape ``out.shape + x.shape``."""
    tuple_in = isinstance(inputs, (tuple, list))
    xs = _leaves(_as_tuple(inputs), create_graph)
    with _gg.enable_grad():
        outputs = func(*xs)
        tuple_out = isinstance(outputs, (tuple, list))
        result = []
        for out in _as_tuple(outputs):
            flat = out.reshape(-1)
            rows = [[] for _ in xs]
            for j in range(flat.shape[0]):
                for k, g in enumerate(_grads(flat[j], xs, None, create_graph)):
                    rows[k].append(g)
            per_input = []
            for k, x in enumerate(xs):
                stacked = _gg.stack(rows[k]) if rows[k] else _gg.zeros((0,) + tuple(x.shape), dtype=x.dtype)
                jac = stacked.reshape(tuple(out.shape) + tuple(x.shape))
                per_input.append(jac if create_graph else jac.detach())
            result.append(tuple(per_input) if tuple_in else per_input[0])
    return tuple(result) if tuple_out else result[0]


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: ``x.shape + x.shape`` (a tuple of tuples for several
    inputs)."""
    tuple_in = isinstance(inputs, (tuple, list))

    def gradient(*xs):
        out = func(*xs)
        grads = _grads(out, xs, None, True)
        return tuple(grads) if tuple_in else grads[0]

    return jacobian(gradient, inputs, create_graph=create_graph)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product (``v`` may be omitted for a scalar output)."""
    tuple_in = isinstance(inputs, (tuple, list))
    xs = _leaves(_as_tuple(inputs), create_graph)
    with _gg.enable_grad():
        out = func(*xs)
        grads = _grads(out, xs, v, create_graph)
    grads = [g if create_graph else g.detach() for g in grads]
    return (out if create_graph else out.detach()), (tuple(grads) if tuple_in else grads[0])


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick (two reverse
    passes through a dummy cotangent)."""
    tuple_in = isinstance(inputs, (tuple, list))
    xs = _leaves(_as_tuple(inputs), create_graph)
    vs = _as_tuple(v) if v is not None else tuple(_gg.ones_like(x) for x in xs)
    with _gg.enable_grad():
        out = func(*xs)
        dummy = _gg.zeros_like(out).requires_grad_(True)
        grads = _grads(out, xs, dummy, True)
        total = None
        for g, direction in zip(grads, vs):
            term = (g * direction).sum()
            total = term if total is None else total + term
        (product,) = _grads(total, (dummy,), None, create_graph)
    return (out if create_graph else out.detach()), (product if create_graph else product.detach())


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` for a scalar ``func`` (the Hessian is symmetric: ``vhp`` gives the same)."""
    tuple_in = isinstance(inputs, (tuple, list))
    xs = _leaves(_as_tuple(inputs), create_graph)
    vs = _as_tuple(v)
    with _gg.enable_grad():
        out = func(*xs)
        grads = _grads(out, xs, None, True)
        total = None
        for g, direction in zip(grads, vs):
            term = (g * direction).sum()
            total = term if total is None else total + term
        products = _grads(total, xs, None, create_graph)
    products = [p if create_graph else p.detach() for p in products]
    return (out if create_graph else out.detach()), (tuple(products) if tuple_in else products[0])


vhp = hvp

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]
