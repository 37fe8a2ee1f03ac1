"""``torch.nn.utils.prune``: pruning a module's parameter with a mask, as PyTorch does it.

Pruning ``name`` of a module moves the parameter to ``name + "_orig"``, keeps the mask as the buffer
``name + "_mask"``, and makes ``name`` a plain attribute, ``mask * orig``, recomputed by a forward
pre-hook (the pruning method itself) before every forward; gradients reach ``name_orig`` through the
mask. Pruning the same parameter again combines the masks (a :class:`PruningContainer`: the new method
only prunes what is still unpruned). :func:`remove` makes the pruning permanent.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

import graphgrad as _gg
from graphgrad import Tensor, no_grad


def _validate_amount(amount) -> None:
    if isinstance(amount, numbers.Integral):
        if amount < 0:
            raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")
    elif isinstance(amount, numbers.Real):
        if not 0.0 <= amount <= 1.0:
            raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")
    else:
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        if amount > tensor_size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")
        return int(amount)
    return round(amount * tensor_size)


class BasePruningMethod(ABC):
    """A pruning method: ``compute_mask(t, default_mask)`` says which entries are kept (1) or pruned (0).
    Applied to a module it is also the forward pre-hook that recomputes the pruned tensor."""

    _tensor_name: str

    def __call__(self, module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask, given the tensor ``t`` (or its importance scores) and the current mask."""

    def apply_mask(self, module):
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name: str, *args, importance_scores=None, **kwargs):
        old_method, stale = None, []
        for key, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                stale.append(key)
        for key in stale:
            del module._forward_pre_hooks[key]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:  # pruned before: the masks combine
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                container = PruningContainer(old_method)
                container.add_pruning_method(method)
                method = container
        orig = getattr(module, name)
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(f"importance_scores should have the same shape as parameter {name} of {module}")
        scores = orig if importance_scores is None else importance_scores
        if old_method is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _gg.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        with no_grad():
            mask = method.compute_mask(scores.detach(), default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with this method's mask applied."""
        scores = t if importance_scores is None else importance_scores
        mask = self.compute_mask(scores, default_mask=_gg.ones_like(t) if default_mask is None else default_mask)
        return t * mask

    def remove(self, module) -> None:
        """Make the pruning permanent: ``name`` a parameter again, holding the pruned values."""
        name = self._tensor_name
        with no_grad():
            weight = self.apply_mask(module)
        module.__dict__.pop(name, None)  # the plain attribute the hook kept (not a registered parameter)
        orig = module._parameters[name + "_orig"]
        orig._data = weight._data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """Pruning methods applied one after another to the same parameter."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):  # an iterable of methods
            args = tuple(args[0])
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._pruning_methods and method._tensor_name != self._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer. Found '{method._tensor_name}'")
        if method is not None:
            self._tensor_name = method._tensor_name
            self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, index):
        return self._pruning_methods[index]

    def compute_mask(self, t, default_mask):
        """The last method's mask computed on the entries (unstructured) or channels (structured) the
        earlier masks kept, combined with them."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.clone().to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            keep = default_mask == 1
            partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
            new_mask[keep] = partial.to(dtype=new_mask.dtype)
            return new_mask
        if kind == "structured":
            dim = method.dim if method.dim >= 0 else t.ndim + method.dim
            others = tuple(d for d in range(t.ndim) if d != dim)
            kept = (default_mask.sum(dim=others) != 0).numpy().nonzero()[0].tolist()
            index = _gg.tensor(kept, dtype=_gg.int64)
            partial = method.compute_mask(t.index_select(dim, index), default_mask=default_mask.index_select(dim, index))
            for j, channel in enumerate(kept):
                slot = [slice(None)] * t.ndim
                part = [slice(None)] * t.ndim
                slot[dim], part[dim] = channel, j
                new_mask[tuple(slot)] = partial[tuple(part)].to(dtype=new_mask.dtype)
            return new_mask
        if kind == "global":
            return method.compute_mask(t, default_mask=new_mask)
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` (a share, or a count) of the entries; a subclass picks which (``_pick``)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_amount(amount)
        self.amount = amount

    def _pick(self, t, n):
        """The flat indices of the ``n`` entries of ``t`` to prune."""
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        n = _compute_nparams_toprune(self.amount, t.numel())
        mask = default_mask.clone()
        if n != 0:
            flat = mask.reshape(-1)
            flat[self._pick(t, n)] = 0
            mask = flat.reshape(tuple(t.shape))
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` (a share, or a count) of the entries, chosen at random."""

    def _pick(self, t, n):
        return _gg.topk(_gg.rand(*t.shape).reshape(-1), n)[1]

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes ``amount`` of the entries with the smallest absolute values."""

    def _pick(self, t, n):
        return _gg.topk(t.abs().reshape(-1), n, largest=False)[1]

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim: int, channels) -> Tensor:
    mask = _gg.zeros_like(t)
    for c in channels:
        slot = [slice(None)] * t.ndim
        slot[dim] = int(c)
        mask[tuple(slot)] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _validate_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        size = t.shape[self.dim]
        n = _compute_nparams_toprune(self.amount, size)
        if n == 0:
            return default_mask
        keep = _gg.topk(_gg.rand(size), size - n)[1].tolist()
        return _channel_mask(t, self.dim % t.ndim, keep) * default_mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes ``amount`` of the channels along ``dim`` with the smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _validate_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        size = t.shape[self.dim]
        n = _compute_nparams_toprune(self.amount, size)
        if n == 0:
            return default_mask
        dim = self.dim % t.ndim
        others = tuple(d for d in range(t.ndim) if d != dim)
        norms = _gg.linalg.vector_norm(t, ord=self.n, dim=others) if others else t.abs()
        keep = _gg.topk(norms, size - n)[1].tolist()
        return _channel_mask(t, dim, keep) * default_mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the ``(module, name)`` pairs together: ``amount`` counts over all of them (the smallest
    entries of all the tensors, for ``L1Unstructured``)."""
    parameters = list(parameters)
    importance_scores = importance_scores or {}
    scores = _gg.concatenate([importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1)
                              for m, n in parameters])
    default_mask = _gg.concatenate([getattr(m, n + "_mask", _gg.ones_like(getattr(m, n))).reshape(-1)
                                    for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer(method)
    with no_grad():
        final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + count].reshape(tuple(param.shape)))
        pointer += count


def remove(module, name):
    """Make ``name``'s pruning permanent (raises if it is not pruned)."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module) -> bool:
    """Whether any parameter of ``module`` or its submodules is pruned."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
