"""Multivariate normal distributions: ``MultivariateNormal`` (by covariance, precision or Cholesky
factor) and ``LowRankMultivariateNormal`` (covariance ``W W^T + diag(D)``), in graphgrad ops
(``gg.linalg.cholesky``, ``gg.linalg.solve_triangular``), so every quantity is differentiable."""
from __future__ import annotations

import math
from typing import Any, Optional

import graphgrad as gg
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints
from graphgrad.distributions.distribution import Distribution, _shape, _tensor

_LOG_2PI = math.log(2.0 * math.pi)


def _diag(m: Tensor) -> Tensor:
    return gg.diagonal(m, 0, -2, -1)


def _mT(m: Tensor) -> Tensor:
    return gg.swapaxes(m, -1, -2)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` over the batch (``L`` broadcast against ``x``'s leading dims)."""
    n = bx.shape[-1]
    batch = gg.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL if tuple(bL.shape[:-2]) == batch else gg.broadcast_to(bL, batch + (n, n))
    x = bx if tuple(bx.shape[:-1]) == batch else gg.broadcast_to(bx, batch + (n,))
    sol = gg.linalg.solve_triangular(L, gg.expand_dims(x, -1), upper=False)
    return gg.sum(gg.squeeze(sol, -1) ** 2, axis=-1)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    Lf = gg.linalg.cholesky(gg.flip(P, (-2, -1)))
    L_inv = _mT(gg.flip(Lf, (-2, -1)))
    eye = gg.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return gg.linalg.solve_triangular(L_inv, gg.broadcast_to(eye, tuple(L_inv.shape)), upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal ``N(loc, Sigma)`` (event shape ``(n,)``), parameterized by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor of Sigma).

        >>> d = MultivariateNormal(gg.zeros(2), covariance_matrix=gg.eye(2))
        >>> d.rsample((4,)).shape
        (4, 2)
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _batch_params = ("loc",)

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None, scale_tril: Any = None,
                 validate_args: Optional[bool] = None):
        loc = _tensor(loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = scale_tril if scale_tril is not None else (
            covariance_matrix if covariance_matrix is not None else precision_matrix)
        given = _tensor(given, loc)
        if given.ndim < 2:
            raise ValueError("scale_tril / covariance_matrix / precision_matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = gg.broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        n = loc.shape[-1]
        self.loc = gg.broadcast_to(loc, batch_shape + (n,)) if tuple(loc.shape) != batch_shape + (n,) else loc
        self._given = ("scale_tril" if scale_tril is not None else
                       "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = given
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = gg.linalg.cholesky(given)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(given)
        self._given_matrix = given
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if self._validate_args:
            ok = self.arg_constraints[self._given].check(given)
            if not bool(gg.all(ok).numpy()):
                raise ValueError(f"Expected parameter {self._given} to satisfy the constraint "
                                 f"{self.arg_constraints[self._given]!r}")

    def _full(self, m: Tensor) -> Tensor:
        shape = self.batch_shape + self.event_shape + self.event_shape
        return m if tuple(m.shape) == shape else gg.broadcast_to(m, shape)

    @property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @property
    def covariance_matrix(self) -> Tensor:
        if self._given == "covariance_matrix":
            return self._full(self._given_matrix)
        L = self._unbroadcasted_scale_tril
        return self._full(gg.matmul(L, _mT(L)))

    @property
    def precision_matrix(self) -> Tensor:
        if self._given == "precision_matrix":
            return self._full(self._given_matrix)
        L = self._unbroadcasted_scale_tril
        eye = gg.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = gg.linalg.solve_triangular(L, gg.broadcast_to(eye, tuple(L.shape)), upper=False)
        return self._full(gg.matmul(_mT(L_inv), L_inv))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        var = gg.sum(L * L, axis=-1)
        shape = self.batch_shape + self.event_shape
        return var if tuple(var.shape) == shape else gg.broadcast_to(var, shape)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = gg.randn(*shape, generator=generator, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + gg.squeeze(gg.matmul(self._unbroadcasted_scale_tril, gg.expand_dims(eps, -1)), -1)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = gg.sum(gg.log(_diag(self._unbroadcasted_scale_tril)), axis=-1)
        return -0.5 * (self.event_shape[0] * _LOG_2PI + M) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = gg.sum(gg.log(_diag(self._unbroadcasted_scale_tril)), axis=-1)
        h = 0.5 * self.event_shape[0] * (1.0 + _LOG_2PI) + half_log_det
        return h if tuple(h.shape) == self.batch_shape else gg.broadcast_to(h, self.batch_shape)


class LowRankMultivariateNormal(MultivariateNormal):
    """The multivariate normal with covariance ``cov_factor @ cov_factor.T + diag(cov_diag)``
    (``cov_factor``: ``(..., n, rank)``). Densities use the full Cholesky factor (O(n^3)): exact and
    differentiable, suited to the moderate ``n`` of typical programs."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    _batch_params = ("loc", "cov_factor", "cov_diag")

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any, validate_args: Optional[bool] = None):
        loc = _tensor(loc)
        cov_factor, cov_diag = _tensor(cov_factor, loc), _tensor(cov_diag, loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        n, rank = cov_factor.shape[-2], cov_factor.shape[-1]
        if loc.shape[-1] != n or cov_diag.shape[-1] != n:
            raise ValueError(f"loc, cov_factor and cov_diag must agree on the event size {n}")
        batch = gg.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1]))
        self.cov_factor = gg.broadcast_to(cov_factor, batch + (n, rank))
        self.cov_diag = gg.broadcast_to(cov_diag, batch + (n,))
        cov = gg.matmul(cov_factor, _mT(cov_factor)) + gg.diag_embed(cov_diag)
        super().__init__(loc, covariance_matrix=cov, validate_args=False)
        self._validate_args = bool(validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LowRankMultivariateNormal":
        batch_shape = _shape(batch_shape)
        factor_shape = batch_shape + tuple(self.cov_factor.shape[-2:])
        return LowRankMultivariateNormal(gg.broadcast_to(self.loc, batch_shape + self.event_shape),
                                         gg.broadcast_to(self.cov_factor, factor_shape),
                                         gg.broadcast_to(self.cov_diag, batch_shape + self.event_shape))

    @property
    def variance(self) -> Tensor:
        return gg.sum(self.cov_factor * self.cov_factor, axis=-1) + self.cov_diag

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + (self.cov_factor.shape[-1],)
        eps_w = gg.randn(*w_shape, generator=generator, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = gg.randn(*shape, generator=generator, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + gg.squeeze(gg.matmul(self.cov_factor, gg.expand_dims(eps_w, -1)), -1)
                + gg.sqrt(self.cov_diag) * eps_d)
