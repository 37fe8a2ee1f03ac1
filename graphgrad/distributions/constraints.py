"""Constraints on parameters and values (``torch.distributions.constraints``): objects whose
``check(value)`` returns a boolean tensor saying where ``value`` satisfies the constraint (reduced over
the constraint's ``event_dim`` rightmost dimensions).

    >>> constraints.positive.check(gg.tensor([1.0, -1.0]))
    tensor([ True, False])
"""
from __future__ import annotations

from typing import Any

import graphgrad as gg
from graphgrad.core.tensor import Tensor


def _t(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else gg.tensor(value)


def _all_last(x: Tensor, n: int) -> Tensor:
    for _ in range(n):
        x = gg.all(x, axis=-1)
    return x


class Constraint:
    """A region of valid values: ``is_discrete``, ``event_dim`` and ``check(value)``."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (it cannot be checked)."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> "_Dependent":
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Any) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@constraints.dependent_property``: a property whose value is a constraint depending on the
    instance (``support`` of a distribution with parameter-dependent bounds)."""

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> "_DependentProperty":  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


def dependent_property(fn: Any = None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
    if fn is None:
        return _DependentProperty(None, is_discrete=is_discrete, event_dim=event_dim)
    return _DependentProperty(fn, is_discrete=is_discrete, event_dim=event_dim)


class _IndependentConstraint(Constraint):
    """A base constraint with ``reinterpreted_batch_ndims`` more dimensions treated as the event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = int(reinterpreted_batch_ndims)

    @property
    def is_discrete(self):  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Any) -> Tensor:
        return _all_last(self.base_constraint.check(value), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.logical_or(gg.equal(value, 0), gg.equal(value, 1))


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        is_bool = gg.all(gg.logical_or(gg.equal(value, 0), gg.equal(value, 1)), axis=-1)
        return gg.logical_and(is_bool, gg.equal(gg.sum(value, axis=-1), 1))


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        ok = gg.logical_and(gg.equal(gg.fmod(value, 1), 0), gg.less_equal(self.lower_bound, value))
        return gg.logical_and(ok, gg.less_equal(value, self.upper_bound))

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any):
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.logical_and(gg.equal(gg.fmod(value, 1), 0), gg.greater_equal(value, self.lower_bound))

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.equal(value, value)  # false for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any):
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        return gg.less(self.lower_bound, _t(value))

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Any) -> Tensor:
        return gg.less_equal(self.lower_bound, _t(value))

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any):
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Tensor:
        return gg.less(_t(value), self.upper_bound)

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.logical_and(gg.less_equal(self.lower_bound, value), gg.less_equal(value, self.upper_bound))

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.logical_and(gg.less_equal(self.lower_bound, value), gg.less(value, self.upper_bound))

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.logical_and(gg.all(gg.greater_equal(value, 0), axis=-1),
                              gg.less(gg.abs(gg.sum(value, axis=-1) - 1), 1e-6))


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any):
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.logical_and(gg.all(gg.greater_equal(value, 0), axis=-1),
                              gg.less_equal(gg.sum(value, axis=-1), self.upper_bound))


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        return gg.all(gg.all(gg.equal(gg.tril(value), value), axis=-1), axis=-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        tri = gg.all(gg.all(gg.equal(gg.tril(value), value), axis=-1), axis=-1)
        diag = gg.diagonal(value, 0, -2, -1)
        return gg.logical_and(tri, gg.all(gg.greater(diag, 0), axis=-1))


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        row_norm = gg.sqrt(gg.sum(value * value, axis=-1))
        unit = gg.all(gg.less_equal(gg.abs(row_norm - 1), 1e-4 * value.shape[-1]), axis=-1)
        return gg.logical_and(_LowerCholesky().check(value), unit)


class _Symmetric(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        value = _t(value)
        close = gg.less_equal(gg.abs(value - gg.swapaxes(value, -1, -2)), 1e-6 + 1e-5 * gg.abs(value))
        return gg.all(gg.all(close, axis=-1), axis=-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Any) -> Tensor:
        value = _t(value)
        sym = super().check(value)
        return gg.logical_and(sym, gg.all(gg.greater_equal(gg.linalg.eigvalsh(value), 0), axis=-1))


class _PositiveDefinite(_Symmetric):
    def check(self, value: Any) -> Tensor:
        value = _t(value)
        sym = super().check(value)
        return gg.logical_and(sym, gg.all(gg.greater(gg.linalg.eigvalsh(value), 0), axis=-1))


dependent = _Dependent()
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()

__all__ = ["Constraint", "boolean", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
           "one_hot", "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real",
           "real_vector", "simplex", "symmetric", "unit_interval"]
