"""``torch.func``: function transforms (``grad``, ``vmap``, ``functional_call``, ``jacrev``...) composed from
graphgrad's reverse mode.

- ``grad(f)(*args)`` differentiates ``f``'s scalar output with ``gg.grad`` with respect to argument
  ``argnums`` (a tensor, or a dict/tuple/list of them: the gradient has the same structure). Transforms nest
  (``grad(grad(f))``, ``vmap(grad(f))``): an input that already requires grad is differentiated through.
- ``vmap(f, in_dims, out_dims)(*args)`` runs ``f`` once per index of the mapped dimension and stacks the
  results: PyTorch's numbers, by a Python loop rather than batched kernels (fine for per-sample gradients of
  small batches, ensembles of a few models, Jacobian rows).
- ``functional_call(module, params_and_buffers, args)`` runs a module with the given tensors in place of its
  parameters and buffers, restoring them afterwards.
- ``jacrev`` / ``jacfwd`` / ``hessian`` / ``vjp`` / ``grad_and_value`` / ``stack_module_state`` likewise;
  ``jacfwd`` and ``jvp`` are computed in reverse mode (the same numbers).
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

import graphgrad as _gg

Tensor = _gg.Tensor


# ---- pytrees: tensors inside tuples, lists and dicts ------------------------------------------------------
def _flatten(tree: Any) -> tuple:
    """The tensors of ``tree`` in order, and a function that rebuilds the tree from a list like them."""
    if isinstance(tree, Tensor):
        return [tree], lambda leaves: leaves[0]
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        return _joined(parts, lambda vs: type(tree)(zip(keys, vs)) if type(tree) is not dict else dict(zip(keys, vs)))
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(v) for v in tree]
        make = (lambda vs: type(tree)(*vs)) if hasattr(tree, "_fields") else (lambda vs: type(tree)(vs))
        return _joined(parts, make)
    return [], lambda leaves: tree


def _joined(parts: list, make: Callable) -> tuple:
    leaves, sizes = [], []
    for flat, _ in parts:
        leaves.extend(flat)
        sizes.append(len(flat))

    def rebuild(values):
        out, at = [], 0
        for (_, sub), n in zip(parts, sizes):
            out.append(sub(list(values[at:at + n])))
            at += n
        return make(out)

    return leaves, rebuild


def _tree_map(fn: Callable, tree: Any) -> Any:
    leaves, rebuild = _flatten(tree)
    return rebuild([fn(x) for x in leaves])


# ---- grad ---------------------------------------------------------------------------------------------------
def _grad_and_value(func: Callable, argnums, has_aux: bool, args: tuple, kwargs: dict) -> tuple:
    single = isinstance(argnums, builtins.int)
    nums = (argnums,) if single else tuple(argnums)
    args = list(args)
    leaves, rebuilds, nested = [], [], False
    for n in nums:
        flat, rebuild = _flatten(args[n])
        made = []
        for x in flat:
            if x.requires_grad:  # inside another transform (or a parameter): differentiate through it
                nested = True
                made.append(x)
            else:
                made.append(x.detach().requires_grad_(True))
        args[n] = rebuild(made)
        leaves.append(made)
        rebuilds.append(rebuild)
    with _gg.enable_grad():
        out = func(*args, **kwargs)
        aux = None
        if has_aux:
            out, aux = out
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("torch.func.grad: the function must return a tensor with one element, got "
                               f"{getattr(out, 'shape', type(out).__name__)}")
        every = [x for flat in leaves for x in flat]
        grads = _gg.grad(out, every, create_graph=nested, allow_unused=True) if out.requires_grad else [None] * len(every)
    grads = [_gg.zeros_like(x) if g is None else g for x, g in zip(every, grads)]
    trees, at = [], 0
    for flat, rebuild in zip(leaves, rebuilds):
        trees.append(rebuild(grads[at:at + len(flat)]))
        at += len(flat)
    result = trees[0] if single else tuple(trees)
    value = out if nested else out.detach()
    return result, (value, aux) if has_aux else value


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of ``func`` (scalar output) with respect to its argument(s) ``argnums``; with
    ``has_aux`` ``func`` returns ``(output, aux)`` and the gradient function ``(gradient, aux)``."""

    def gradient(*args, **kwargs):
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g

    return gradient


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``(gradient, value)`` of ``func``; with ``has_aux``, ``(gradient, (value, aux))``."""

    def both(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return both


# ---- vmap ---------------------------------------------------------------------------------------------------
def _stack(results: list, out_dims) -> Any:
    first = results[0]
    if isinstance(first, Tensor):
        return _gg.stack(results, axis=out_dims)
    if isinstance(first, (builtins.int, builtins.float, builtins.bool)):
        return _gg.stack([_gg.tensor(r) for r in results], axis=out_dims)
    if isinstance(first, dict):
        return {k: _stack([r[k] for r in results], out_dims) for k in first}
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else [out_dims] * len(first)
        parts = [_stack([r[i] for r in results], d) for i, d in enumerate(dims)]
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
    if first is None:
        return None
    raise TypeError(f"vmap: cannot stack outputs of type {type(first).__name__}")


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its arguments (an int for all, or one int/None per
    argument; None: not mapped), results stacked along ``out_dims``."""

    def mapped(*args, **kwargs):
        dims = tuple(in_dims) if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries for {len(args)} arguments")
        size = None
        for a, d in zip(args, dims):
            if d is None:
                continue
            for x in _flatten(a)[0]:
                n = x.shape[d]
                if size is not None and n != size:
                    raise ValueError(f"vmap: mapped dimensions of different sizes ({size} and {n})")
                size = n
        if size is None:
            raise ValueError("vmap: at least one argument must be mapped (in_dims all None)")
        results = []
        for i in range(size):
            sliced = [a if d is None else _tree_map(lambda x, d=d: x.select(d, i), a) for a, d in zip(args, dims)]
            results.append(func(*sliced, **kwargs))
        return _stack(results, out_dims)

    return mapped


# ---- functional_call ----------------------------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a dict, or a tuple of
    dicts, keyed like ``named_parameters()``) in place of its own; they are put back afterwards."""
    dicts = parameter_and_buffer_dicts
    merged: dict = {}
    for d in (dicts if isinstance(dicts, (tuple, list)) else (dicts,)):
        merged.update(d)
    if strict:
        expected = {k for k, _ in module.named_parameters()} | {k for k, _ in module.named_buffers()}
        if set(merged) != expected:
            raise RuntimeError(f"functional_call: missing {sorted(expected - set(merged))}, "
                               f"unexpected {sorted(set(merged) - expected)}")
    saved = []
    try:
        for name, value in merged.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            for registry in (owner._parameters, owner._buffers):
                if attr in registry:
                    saved.append((registry, attr, registry[attr]))
                    registry[attr] = value
                    break
            else:
                raise AttributeError(f"functional_call: {type(module).__name__} has no parameter or buffer {name!r}")
        args = args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for registry, attr, value in reversed(saved):
            registry[attr] = value


def stack_module_state(models) -> tuple:
    """The parameters and the buffers of same-shaped ``models`` stacked along a new first dimension
    (``(params, buffers)`` dicts, for ``vmap`` over an ensemble); the stacked parameters are new leaves."""
    models = list(models)
    params = {name: _gg.stack([dict(m.named_parameters())[name].detach() for m in models]).requires_grad_(True)
              for name, _ in models[0].named_parameters()}
    buffers = {name: _gg.stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


# ---- Jacobians ----------------------------------------------------------------------------------------------
def _jacobian_of(func: Callable, argnums, args: tuple, kwargs: dict, create_graph: bool):
    from graphgrad.compat.torch.autograd_functional import jacobian

    single = isinstance(argnums, builtins.int)
    nums = (argnums,) if single else tuple(argnums)

    def of_selected(*chosen):
        full = list(args)
        for n, value in zip(nums, chosen):
            full[n] = value
        return func(*full, **kwargs)

    chosen = tuple(args[n] for n in nums)
    nested = create_graph or builtins.any(x.requires_grad for x in chosen if isinstance(x, Tensor))
    jac = jacobian(of_selected, chosen if not single else chosen[0], create_graph=nested)
    return jac


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None) -> Callable:
    """The Jacobian of ``func`` with respect to argument(s) ``argnums`` (``out.shape + in.shape``)."""

    def jac(*args, **kwargs):
        if has_aux:
            aux_box = []

            def without_aux(*a, **k):
                out, aux = func(*a, **k)
                aux_box[:] = [aux]
                return out

            return _jacobian_of(without_aux, argnums, args, kwargs, False), aux_box[0]
        return _jacobian_of(func, argnums, args, kwargs, False)

    return jac


jacfwd = jacrev


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of scalar ``func`` with respect to argument ``argnums``: ``jacrev(jacrev(func))``."""

    def hess(*args, **kwargs):
        inner = lambda *a, **k: _jacobian_of(func, argnums, a, k, True)  # noqa: E731
        return _jacobian_of(inner, argnums, args, kwargs, False)

    return hess


def vjp(func: Callable, *primals, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` gives one gradient per primal."""
    leaves = tuple(p if p.requires_grad else p.detach().requires_grad_(True) for p in primals)
    with _gg.enable_grad():
        out = func(*leaves)
    aux = None
    if has_aux:
        out, aux = out

    def vjp_fn(cotangents):
        grads = _gg.grad(out, list(leaves), grad_outputs=cotangents, retain_graph=True, allow_unused=True)
        return tuple(_gg.zeros_like(x) if g is None else g for x, g in zip(leaves, grads))

    value = out.detach()
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(func: Callable, primals: tuple, tangents: tuple) -> tuple:
    """``(func(*primals), J @ tangents)``, the Jacobian taken in reverse mode."""
    from graphgrad.compat.torch.autograd_functional import jvp as _jvp

    return _jvp(func, tuple(primals), tuple(tangents))
