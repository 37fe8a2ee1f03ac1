"""``torch.nn.utils``: gradient clipping, parameters as one flat vector, and ``rnn`` (packed sequences)."""
from __future__ import annotations

import graphgrad as _gg
from graphgrad import Tensor
from graphgrad import nn as _nn

#: ``torch.nn.utils.rnn``: padding and packing variable-length sequences.
rnn = _nn.rnn_utils
from graphgrad.optim import clip_grad_norm_, clip_grad_value_  # noqa: F401
from graphgrad.compat.torch.nn import parametrize  # noqa: E402
from graphgrad.compat.torch.nn.parametrize import _norm_except_dim, parametrizations  # noqa: E402,F401
from graphgrad.compat.torch.nn import prune  # noqa: E402,F401  (torch.nn.utils.prune)


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated into one 1-d tensor (differentiable)."""
    return _gg.concatenate([p.reshape(-1) for p in parameters], axis=0)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (in place, not recorded)."""
    start = 0
    with _gg.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(p.shape))
            start += n


# ---- weight reparameterizations ------------------------------------------------------------------------
def weight_norm(module: _nn.Module, name: str = "weight", dim=0) -> _nn.Module:
    """``torch.nn.utils.weight_norm``: ``module.<name>`` becomes ``g * v / ||v||`` (the norm over every
    axis but ``dim``), recomputed before each forward from the parameters ``<name>_g`` and ``<name>_v``."""
    weight = getattr(module, name)
    g = _nn.Parameter(_norm_except_dim(weight.detach(), dim).detach())
    v = _nn.Parameter(weight.detach().clone())
    del module._parameters[name]
    module.register_parameter(name + "_g", g)
    module.register_parameter(name + "_v", v)

    def compute(m: _nn.Module) -> Tensor:
        v_, g_ = getattr(m, name + "_v"), getattr(m, name + "_g")
        return v_ * (g_ / _norm_except_dim(v_, dim))

    def hook(m: _nn.Module, inputs) -> None:
        object.__setattr__(m, name, compute(m))

    object.__setattr__(module, name, compute(module))
    hooks = module.__dict__.setdefault("_weight_norm_hooks", {})
    hooks[name] = (module.register_forward_pre_hook(hook), compute)
    return module


def remove_weight_norm(module: _nn.Module, name: str = "weight") -> _nn.Module:
    """Undo :func:`weight_norm`: ``<name>`` is a plain parameter again, holding the current weight."""
    hooks = module.__dict__.get("_weight_norm_hooks", {})
    if name not in hooks:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    handle, compute = hooks.pop(name)
    with _gg.no_grad():
        weight = compute(module).detach()
    handle.remove()
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    object.__delattr__(module, name)
    module.register_parameter(name, _nn.Parameter(weight))
    return module


def spectral_norm(module: _nn.Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim=None) -> _nn.Module:
    """``torch.nn.utils.spectral_norm``: ``module.<name>`` becomes ``<name>_orig / sigma``, ``sigma`` its
    largest singular value estimated by power iteration (``n_power_iterations`` steps per forward in
    training mode, on the buffers ``<name>_u`` and ``<name>_v``)."""
    weight = getattr(module, name)
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0

    def as_matrix(w: Tensor) -> Tensor:
        if dim != 0:
            w = _gg.moveaxis(w, dim, 0)
        return w.reshape(w.shape[0], -1)

    rows, cols = as_matrix(weight.detach()).shape
    u = _gg.nn.functional.normalize(_gg.randn(rows, dtype=weight.dtype), dim=0, eps=eps)
    v = _gg.nn.functional.normalize(_gg.randn(cols, dtype=weight.dtype), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", _nn.Parameter(weight.detach().clone()))
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)

    def compute(m: _nn.Module, iterate: bool) -> Tensor:
        w = getattr(m, name + "_orig")
        matrix = as_matrix(w)
        u_, v_ = getattr(m, name + "_u"), getattr(m, name + "_v")
        if iterate:
            with _gg.no_grad():
                for _ in range(n_power_iterations):
                    v_ = _gg.nn.functional.normalize(matrix.detach().T @ u_, dim=0, eps=eps)
                    u_ = _gg.nn.functional.normalize(matrix.detach() @ v_, dim=0, eps=eps)
                setattr(m, name + "_u", u_)
                setattr(m, name + "_v", v_)
        sigma = _gg.sum(u_ * (matrix @ v_))
        return w / sigma

    def hook(m: _nn.Module, inputs) -> None:
        object.__setattr__(m, name, compute(m, m.training))

    with _gg.no_grad():
        object.__setattr__(module, name, compute(module, True))
    object.__setattr__(module, f"_spectral_norm_hook_{name}", module.register_forward_pre_hook(hook))
    return module


class stateless:
    """``torch.nn.utils.stateless``: ``functional_call`` (torch.func's, the older name)."""

    @staticmethod
    def functional_call(module, parameters_and_buffers, args=(), kwargs=None, *, tie_weights: bool = True,
                        strict: bool = False):
        from graphgrad.compat.torch.func import functional_call

        return functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """PyTorch's deprecated name of :func:`clip_grad_norm_`."""
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of all elements of ``tensors`` taken as one vector."""
    tensors = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    if not tensors:
        return _gg.tensor(0.0)
    norms = _gg.stack([_gg.linalg.vector_norm(t.detach(), norm_type) for t in tensors])
    total = _gg.linalg.vector_norm(norms, norm_type)
    if error_if_nonfinite and not bool(_gg.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients is non-finite")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    scale = min(1.0, float(max_norm) / (float(total_norm) + 1e-6))
    with _gg.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.mul_(scale)


def remove_spectral_norm(module: _nn.Module, name: str = "weight") -> _nn.Module:
    """Undo :func:`spectral_norm`: ``module.<name>`` a plain parameter again, holding the normalized value."""
    handle = module.__dict__.get(f"_spectral_norm_hook_{name}")
    if handle is None:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    weight = getattr(module, name).detach().clone()
    handle.remove()
    object.__delattr__(module, f"_spectral_norm_hook_{name}")
    for suffix in ("_orig", "_u", "_v"):
        module._remove(name + suffix)
    object.__delattr__(module, name) if name in module.__dict__ else None
    module.register_parameter(name, _nn.Parameter(weight))
    return module


def fuse_conv_bn_weights(conv_w: Tensor, conv_b, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w, bn_b,
                         transpose: bool = False) -> tuple:
    """The weight and bias of one convolution computing conv then batch norm (inference)."""
    conv_b = _gg.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = _gg.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = _gg.zeros_like(bn_rm) if bn_b is None else bn_b
    scale = bn_w * _gg.rsqrt(bn_rv + bn_eps)
    shape = [1] * conv_w.ndim
    shape[1 if transpose else 0] = -1
    weight = conv_w * _gg.reshape(scale, tuple(shape))
    bias = (conv_b - bn_rm) * scale + bn_b
    return _nn.Parameter(weight.detach()), _nn.Parameter(bias.detach())


def fuse_conv_bn_eval(conv: _nn.Module, bn: _nn.Module, transpose: bool = False) -> _nn.Module:
    """A copy of ``conv`` (eval mode) that also applies ``bn`` (eval mode)."""
    import copy

    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w,
                           bn_b) -> tuple:
    """The weight and bias of one linear layer computing linear then batch norm (inference)."""
    return fuse_conv_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)


def fuse_linear_bn_eval(linear: _nn.Module, bn: _nn.Module) -> _nn.Module:
    """A copy of ``linear`` (eval mode) that also applies ``bn`` (eval mode)."""
    import copy

    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def skip_init(module_cls: type, *args, **kwargs) -> _nn.Module:
    """``module_cls(*args, **kwargs)`` (its parameters are initialized here; PyTorch leaves them empty)."""
    kwargs.pop("device", None)
    return module_cls(*args, **kwargs)
