"""``torch.nn.utils.parametrize`` and ``torch.nn.utils.parametrizations``: a parameter computed from
others by a module (``register_parametrization``), with PyTorch's layout — the originals live in
``module.parametrizations.<name>.original`` (``original0``, ``original1``... when the first
parametrization's ``right_inverse`` returns several), so state dicts carry PyTorch's keys.

``module.<name>`` is recomputed before every forward (a forward pre-hook) and after registering or
loading; read outside ``forward`` after changing the originals by hand, it holds the value of the last
forward (PyTorch recomputes it on every access).
"""
from __future__ import annotations

import contextlib
from typing import Any, Optional

import graphgrad as _gg
from graphgrad import nn as _nn

Tensor = _gg.Tensor


class ParametrizationList(_nn.ModuleList):
    """The parametrizations of one tensor, applied in order, and the original parameter(s)."""

    def __init__(self, modules: list, original: Any) -> None:
        super().__init__(modules)
        originals = original if isinstance(original, (tuple, list)) else None
        if originals is None:
            self.register_parameter("original", _nn.Parameter(original.detach().clone()))
        else:
            for i, value in enumerate(originals):
                self.register_parameter(f"original{i}", _nn.Parameter(value.detach().clone()))
        self.is_tensor = originals is None
        self.ntensors = 1 if originals is None else len(originals)

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value`` (under ``no_grad``)."""
        with _gg.no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            values = (value,) if self.is_tensor else tuple(value)
            for name, v in zip(self._original_names(), values):
                getattr(self, name).copy_(v)

    def _original_names(self) -> list:
        return ["original"] if self.is_tensor else [f"original{i}" for i in range(self.ntensors)]

    def forward(self) -> Tensor:
        first, *rest = list(self)
        if self.is_tensor:
            value = first(self.original)
        else:
            value = first(*(getattr(self, name) for name in self._original_names()))
        for module in rest:
            value = module(value)
        return value


def _refresh(module: _nn.Module, name: str) -> None:
    object.__setattr__(module, name, module.parametrizations[name]())


def register_parametrization(module: _nn.Module, tensor_name: str, parametrization: _nn.Module,
                             *, unsafe: bool = False) -> _nn.Module:
    """``module.<tensor_name>`` becomes ``parametrization(original)``; a second registration on the same
    tensor applies after the first."""
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        _refresh(module, tensor_name)
        return module
    original = getattr(module, tensor_name)
    if not isinstance(original, Tensor):
        raise ValueError(f"register_parametrization: module has no tensor {tensor_name!r} to parametrize")
    with _gg.no_grad():
        stored = parametrization.right_inverse(original) if hasattr(parametrization, "right_inverse") else original
    plist = ParametrizationList([parametrization], stored)
    if tensor_name in module._parameters:
        del module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        del module._buffers[tensor_name]
    if "parametrizations" not in module._modules:
        module.parametrizations = _nn.ModuleDict()
    module.parametrizations[tensor_name] = plist
    _refresh(module, tensor_name)
    hooks = module.__dict__.setdefault("_parametrization_hooks", {})
    hooks[tensor_name] = module.register_forward_pre_hook(lambda m, inputs, name=tensor_name: _refresh(m, name))
    return module


def is_parametrized(module: _nn.Module, tensor_name: Optional[str] = None) -> bool:
    plists = module._modules.get("parametrizations")
    if plists is None:
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def remove_parametrizations(module: _nn.Module, tensor_name: str, leave_parametrized: bool = True) -> _nn.Module:
    """Undo the parametrizations of ``tensor_name``: a plain parameter again, holding the parametrized
    value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    with _gg.no_grad():
        value = plist() if leave_parametrized or not plist.is_tensor else plist.original
        value = value.detach().clone()
    module.__dict__["_parametrization_hooks"].pop(tensor_name).remove()
    del module.parametrizations._modules[tensor_name]
    object.__delattr__(module, tensor_name)
    module.register_parameter(tensor_name, _nn.Parameter(value))
    if len(module.parametrizations) == 0:
        del module._modules["parametrizations"]
    return module


@contextlib.contextmanager
def cached():
    """Accepted for PyTorch programs: the parametrized tensors are computed once per forward anyway."""
    yield


def _norm_except_dim(v: Tensor, dim) -> Tensor:
    if dim is None:
        return _gg.sqrt(_gg.sum(v * v))
    dim = dim % v.ndim
    axes = tuple(a for a in range(v.ndim) if a != dim)
    return _gg.sqrt(_gg.sum(v * v, axis=axes, keepdims=True))


class _WeightNorm(_nn.Module):
    def __init__(self, dim: Optional[int] = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple:
        return _norm_except_dim(weight, self.dim), weight


class _SpectralNorm(_nn.Module):
    """``weight / sigma``, sigma the largest singular value of the weight as a matrix (``dim`` first),
    estimated by power iteration on the buffers ``_u`` and ``_v`` (``n_power_iterations`` steps per
    forward in training mode; 15 when made). A 1-d weight is normalized instead."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}")
        self.dim = dim % weight.ndim if weight.ndim else 0
        self.eps, self.n_power_iterations, self.ndim = eps, n_power_iterations, weight.ndim
        if weight.ndim > 1:
            matrix = self._matrix(weight.detach())
            normalize = _gg.nn.functional.normalize
            self.register_buffer("_u", normalize(_gg.randn(matrix.shape[0], dtype=weight.dtype), dim=0, eps=eps))
            self.register_buffer("_v", normalize(_gg.randn(matrix.shape[1], dtype=weight.dtype), dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = _gg.moveaxis(weight, self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, matrix: Tensor, iterations: int) -> None:
        normalize = _gg.nn.functional.normalize
        with _gg.no_grad():
            for _ in range(iterations):
                self._u[...] = normalize(matrix @ self._v, dim=0, eps=self.eps)
                self._v[...] = normalize(matrix.T @ self._u, dim=0, eps=self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        if self.ndim == 1:
            return _gg.nn.functional.normalize(weight, dim=0, eps=self.eps)
        matrix = self._matrix(weight)
        if self.training:
            self._power_method(matrix.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / _gg.sum(u * (matrix @ v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


class parametrizations:
    """``torch.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm``."""

    @staticmethod
    def spectral_norm(module: _nn.Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                      dim: Optional[int] = None) -> _nn.Module:
        """``module.<name>`` divided by its largest singular value (power iteration; buffers
        ``parametrizations.<name>.0._u`` and ``._v``, the weight in ``parametrizations.<name>.original``,
        PyTorch's keys). ``dim`` (default 0, 1 for transposed convolutions) is the output dimension."""
        weight = getattr(module, name)
        if dim is None:
            dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
        return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))

    @staticmethod
    def weight_norm(module: _nn.Module, name: str = "weight", dim: Optional[int] = 0) -> _nn.Module:
        """``module.<name>`` as ``g * v / ||v||`` with ``g`` = ``parametrizations.<name>.original0`` and ``v``
        = ``original1`` (PyTorch's keys)."""
        return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


__all__ = ["register_parametrization", "is_parametrized", "remove_parametrizations", "cached", "ParametrizationList",
           "parametrizations"]
