"""``torch.nn.functional``: graphgrad's functional forms, with PyTorch's ``dim=`` arguments."""
from __future__ import annotations

from typing import Any

import graphgrad.nn.functional as _F


def softmax(input, dim: Any = None, _stacklevel: int = 3, dtype=None):
    out = _F.softmax(input, -1 if dim is None else dim)
    return out if dtype is None else out.astype(dtype)


def log_softmax(input, dim: Any = None, _stacklevel: int = 3, dtype=None):
    out = _F.log_softmax(input, -1 if dim is None else dim)
    return out if dtype is None else out.astype(dtype)


def legacy_reduction(size_average=None, reduce=None, reduction: str = "mean") -> str:
    """PyTorch's deprecated ``size_average=`` / ``reduce=`` loss arguments as a ``reduction``: either
    given overrides ``reduction`` (``reduce=False``: ``'none'``; else ``size_average=False``: ``'sum'``;
    else ``'mean'``), as PyTorch's ``_Reduction.legacy_get_string`` does."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _with_legacy_reduction(fn):
    def loss(*args, size_average=None, reduce=None, **kwargs):
        if size_average is not None or reduce is not None:
            kwargs["reduction"] = legacy_reduction(size_average, reduce, kwargs.get("reduction", "mean"))
        return fn(*args, **kwargs)

    loss.__name__ = loss.__qualname__ = fn.__name__
    loss.__doc__ = fn.__doc__
    loss.__wrapped__ = fn
    return loss


#: the losses that take PyTorch's deprecated ``size_average=`` and ``reduce=`` besides ``reduction=``
LOSSES = ("binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy",
          "gaussian_nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss",
          "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss",
          "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss")
for _name in LOSSES:
    globals()[_name] = _with_legacy_reduction(getattr(_F, _name))


def __getattr__(name: str) -> Any:
    try:
        return getattr(_F, name)
    except AttributeError:
        raise AttributeError(f"torch.nn.functional.{name} is not mapped onto graphgrad yet (see docs/pytorch.md)") from None
