"""Bijections with log-determinant Jacobians (``torch.distributions.transforms``), for
``TransformedDistribution``: ``y = t(x)``, ``x = t.inv(y)``, ``t.log_abs_det_jacobian(x, y)``.

    >>> t = ComposeTransform([AffineTransform(0.0, 2.0), ExpTransform()])
    >>> t.inv(t(gg.tensor(1.0)))
    tensor(1.)
"""
from __future__ import annotations

import copy
import math
import numbers
from typing import Any, Optional, Sequence

import graphgrad as gg
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints
from graphgrad.distributions.distribution import _eps, _sum_rightmost, _tensor, _tiny, clamp_probs


class Transform:
    """An invertible (or at least inverse-able) map with ``domain``, ``codomain``, ``bijective``, ``sign``
    (for monotone univariate maps) and ``log_abs_det_jacobian(x, y)``."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv: Optional["Transform"] = None
        self._cached_x_y: tuple = (None, None)

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no sign")

    def with_cache(self, cache_size: int = 1) -> "Transform":
        if self._cache_size == cache_size:
            return self
        new = copy.copy(self)
        new._cache_size, new._inv, new._cached_x_y = cache_size, None, (None, None)
        return new

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return id(self)

    def __call__(self, x: Any) -> Tensor:
        """``y = t(x)``; with ``cache_size=1`` the pair is remembered, so ``t.inv(y)`` returns that very ``x``
        (what keeps ``log_prob`` of a tanh-squashed sample finite where ``atanh(y)`` overflows)."""
        if self._cache_size and x is self._cached_x_y[0]:
            return self._cached_x_y[1]
        y = self._call(x if isinstance(x, Tensor) else _tensor(x))
        if self._cache_size:
            self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y: Any) -> Tensor:
        if self._cache_size and y is self._cached_x_y[1]:
            return self._cached_x_y[0]
        x = self._inverse(y if isinstance(y, Tensor) else _tensor(y))
        if self._cache_size:
            self._cached_x_y = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no inverse")

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian is not implemented")

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple:
        return tuple(shape)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, ``t.inv``."""

    def __init__(self, transform: Transform):
        super().__init__()
        self._inv = transform

    @property
    def domain(self):  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self):  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self):  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __hash__(self) -> int:
        return hash(("inv", self._inv))

    def __call__(self, x: Any) -> Tensor:
        return self._inv._inv_call(x)

    def _inv_call(self, y: Any) -> Tensor:
        return self._inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple:
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """``parts`` applied in order (``parts[0]`` first); its Jacobian sums the parts' over event dims."""

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0):
        super().__init__(cache_size)
        self.parts = list(parts)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    def __hash__(self) -> int:
        return hash(tuple(self.parts))

    @property
    def domain(self):  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def __call__(self, x: Any) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x if isinstance(x, Tensor) else _tensor(x)

    def _inv_call(self, y: Any) -> Tensor:
        return self.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x = _tensor(x)
        if not self.parts:
            return gg.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(_tensor(y, x))
        total = None
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            term = _sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self) -> str:
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims in its event."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size)
        self.base_transform = base_transform
        self.reinterpreted_batch_ndims = int(reinterpreted_batch_ndims)

    @property
    def domain(self):  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple:
        return self.base_transform.inverse_shape(shape)


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ExpTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _call(self, x: Tensor) -> Tensor:
        return gg.exp(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return gg.log(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return _tensor(x)


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive numbers."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0):
        super().__init__(cache_size)
        self.exponent = exponent

    @property
    def sign(self):
        return gg.sign(self.exponent) if isinstance(self.exponent, Tensor) else (1 if self.exponent > 0 else -1)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        a, b = self.exponent, other.exponent
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            return bool(gg.all(gg.equal(_tensor(a), _tensor(b))).numpy())
        return a == b

    def __hash__(self) -> int:
        return id(self)

    def _call(self, x: Tensor) -> Tensor:
        return gg.power(x, self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return gg.power(y, 1.0 / self.exponent)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x, y = _tensor(x), _tensor(y, _tensor(x))
        return gg.log(gg.abs(self.exponent * y / x))

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        e = tuple(self.exponent.shape) if isinstance(self.exponent, Tensor) else ()
        return gg.broadcast_shapes(tuple(shape), e)

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, onto the unit interval."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SigmoidTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _call(self, x: Tensor) -> Tensor:
        tiny, eps = _tiny(x), _eps(x)
        return gg.clip(gg.sigmoid(x), tiny, 1.0 - eps)

    def _inverse(self, y: Tensor) -> Tensor:
        tiny, eps = _tiny(y), _eps(y)
        y = gg.clip(y, tiny, 1.0 - eps)
        return gg.log(y) - gg.log1p(-y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x = _tensor(x)
        return -gg.softplus(-x) - gg.softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``, onto ``(-1, 1)`` (the squashing of SAC-style policies)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TanhTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _call(self, x: Tensor) -> Tensor:
        return gg.tanh(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return gg.arctanh(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x = _tensor(x)
        return 2.0 * (math.log(2.0) - x - gg.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective; its ``inv`` returns ``y``)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AbsTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _call(self, x: Tensor) -> Tensor:
        return gg.abs(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``; with ``event_dim`` > 0 its Jacobian sums over that many rightmost dims."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = int(event_dim)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self._event_dim

    @property
    def domain(self):  # type: ignore[override]
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return gg.sign(self.scale)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, AffineTransform):
            return False

        def same(a: Any, b: Any) -> bool:
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                return a == b
            return bool(gg.all(gg.equal(_tensor(a), _tensor(b))).numpy())
        return same(self.loc, other.loc) and same(self.scale, other.scale)

    def __hash__(self) -> int:
        return id(self)

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x = _tensor(x)
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = gg.full_like(x, math.log(abs(self.scale)))
        else:
            result = gg.log(gg.abs(self.scale))
        if self._event_dim:
            result = gg.sum(gg.reshape(result, tuple(result.shape[:-self._event_dim]) + (-1,)), axis=-1)
            shape = shape[:-self._event_dim]
        return gg.broadcast_to(result, shape) if tuple(result.shape) != shape else result

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        loc = tuple(self.loc.shape) if isinstance(self.loc, Tensor) else ()
        scale = tuple(self.scale.shape) if isinstance(self.scale, Tensor) else ()
        return gg.broadcast_shapes(tuple(shape), loc, scale)

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last axis (not bijective: ``inv`` is ``log``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SoftmaxTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _call(self, x: Tensor) -> Tensor:
        probs = gg.exp(x - gg.max(x, axis=-1, keepdims=True))
        return probs / gg.sum(probs, axis=-1, keepdims=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return gg.log(y)


class StickBreakingTransform(Transform):
    """Maps ``R^(K-1)`` onto the ``K``-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, StickBreakingTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _offset(self, n: int, like: Tensor) -> Tensor:
        return gg.arange(n, 0, -1, dtype=like.dtype, device=like.device)

    def _call(self, x: Tensor) -> Tensor:
        offset = self._offset(x.shape[-1], x)
        z = gg.sigmoid(x - gg.log(offset))
        z_cumprod = gg.cumprod(1.0 - z, axis=-1)
        ones = gg.ones(tuple(x.shape[:-1]) + (1,), dtype=x.dtype, device=x.device)
        return gg.concatenate([z, ones], axis=-1) * gg.concatenate([ones, z_cumprod], axis=-1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        offset = self._offset(y_crop.shape[-1], y)
        sf = gg.clip(1.0 - gg.cumsum(y_crop, axis=-1), _tiny(y), None)
        return gg.log(y_crop) - gg.log(sf) + gg.log(offset)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x = _tensor(x)
        y = _tensor(y, x)
        offset = self._offset(x.shape[-1], x)
        x = x - gg.log(offset)
        return gg.sum(-x + gg.logsigmoid(x) + gg.log(y[..., :-1]), axis=-1)

    def forward_shape(self, shape: Sequence[int]) -> tuple:
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape: Sequence[int]) -> tuple:
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def biject_to(constraint: constraints.Constraint) -> Transform:
    """A bijection from unconstrained reals onto ``constraint`` (PyTorch's ``biject_to`` for the common ones)."""
    if isinstance(constraint, constraints._IndependentConstraint):
        return IndependentTransform(biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)
    if constraint is constraints.real:
        return identity_transform
    if constraint is constraints.positive or constraint is constraints.nonnegative:
        return ExpTransform()
    if isinstance(constraint, constraints._GreaterThan):
        return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])
    if isinstance(constraint, constraints._LessThan):
        return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])
    if isinstance(constraint, constraints._Interval):
        lb, ub = constraint.lower_bound, constraint.upper_bound
        if isinstance(lb, numbers.Number) and isinstance(ub, numbers.Number) and lb == 0 and ub == 1:
            return SigmoidTransform()
        return ComposeTransform([SigmoidTransform(), AffineTransform(lb, ub - lb)])
    if constraint is constraints.simplex:
        return StickBreakingTransform()
    raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")


transform_to = biject_to

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "SigmoidTransform", "SoftmaxTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "biject_to", "identity_transform", "transform_to"]
