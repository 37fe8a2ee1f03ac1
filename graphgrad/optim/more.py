"""More optimizers with PyTorch's update rules (``torch.optim``): Adamax, NAdam, RAdam, Rprop, ASGD.

They step op by op (``fused = False``): their rules keep Python-number state (NAdam's momentum
product, ASGD's step size) or branch on the step count, which a compiled step would fix at tracing.
"""
from __future__ import annotations

import math
from typing import Iterable

from graphgrad.backend import namespace_of, np
from graphgrad.core.tensor import Tensor
from graphgrad.ops import abs as _abs, clip, maximum, sign, sqrt, where
from graphgrad.optim.optimizer import Optimizer, _check_nonnegative


def _scalar(value: float) -> float:
    """``value`` rounded to float32: PyTorch keeps these optimizers' scalar state (NAdam's momentum
    product, ASGD's step size and averaging weight) in float32 tensors, even for float64 parameters."""
    return float(np.float32(value))


def _zeros(param: Tensor, value: float = 0.0) -> Tensor:
    xp = namespace_of(param._data)
    return Tensor._wrap(xp.full(param.shape, value, dtype=param.dtype))


class _Eager(Optimizer):
    """An optimizer whose rule runs op by op; subclasses give ``_state`` (the initial state)."""

    def __init__(self, params: Iterable, defaults: dict) -> None:
        super().__init__(params, defaults)
        self.fused = False

    def _init_state(self, param: Tensor, group: dict) -> dict:
        return dict(self._state(param, group), step=0)

    def _state(self, param: Tensor, group: dict) -> dict:
        raise NotImplementedError

    def _check_betas(self, group: dict) -> None:
        for i, beta in enumerate(group["betas"]):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"{type(self).__name__}: invalid beta parameter at index {i}: {beta} "
                                 "(it must be in [0, 1))")


class Adamax(_Eager):
    """Adamax (Kingma & Ba, 2015): Adam with the infinity norm::

        m = beta1 * m + (1 - beta1) * g;   u = maximum(beta2 * u, |g| + eps)
        param -= lr / (1 - beta1**t) * m / u

    Args: ``lr`` (2e-3), ``betas`` ((0.9, 0.999)), ``eps`` (1e-8), ``weight_decay`` (L2, 0), ``maximize``.
    State: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative(type(self).__name__, group, "eps", "weight_decay")
        self._check_betas(group)

    def _state(self, param: Tensor, group: dict) -> dict:
        return {"exp_avg": _zeros(param), "exp_inf": _zeros(param)}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        beta1, beta2 = group["betas"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_inf"] = maximum(state["exp_inf"] * beta2, _abs(grad) + group["eps"])
        clr = group["lr"] / (1 - beta1 ** state["step"])
        return param - clr * state["exp_avg"] / state["exp_inf"]


class SparseAdam(_Eager):
    """PyTorch's ``SparseAdam``: Adam that updates only the entries the gradient touches (the rows an
    embedding looked up), leaving the moments and values of the others as they were ("lazy" Adam).
    Gradients are dense here (``Embedding(sparse=True)`` gives a dense one): a row takes part when any
    of its gradient entries is non-zero::

        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g      (touched rows)
        param -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + eps)

    Args: ``lr`` (1e-3), ``betas`` ((0.9, 0.999)), ``eps`` (1e-8), ``maximize``.
    State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative(type(self).__name__, group, "eps")
        self._check_betas(group)

    def _state(self, param: Tensor, group: dict) -> dict:
        return {"exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        beta1, beta2 = group["betas"]
        touched = grad != 0
        if grad.ndim > 1:  # a row (an embedding's) takes part as a whole
            touched = touched.any(axis=tuple(range(1, grad.ndim)), keepdims=True)
        m = where(touched, beta1 * state["exp_avg"] + (1 - beta1) * grad, state["exp_avg"])
        v = where(touched, beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad, state["exp_avg_sq"])
        state["exp_avg"], state["exp_avg_sq"] = m, v
        t = state["step"]
        step_size = group["lr"] * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        return where(touched, param - step_size * m / (sqrt(v) + group["eps"]), param)


def _decay(param: Tensor, grad: Tensor, group: dict) -> tuple:
    """L2 weight decay into the gradient, or (``decoupled_weight_decay``) shrinking the parameter."""
    wd = group["weight_decay"]
    if not wd:
        return param, grad
    if group.get("decoupled_weight_decay"):
        return param * (1 - group["lr"] * wd), grad
    return param, grad + wd * param


class NAdam(_Eager):
    """NAdam (Dozat, 2016): Adam with Nesterov momentum and the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``, as PyTorch's ``NAdam``.

    Args: ``lr`` (2e-3), ``betas``, ``eps``, ``weight_decay``, ``momentum_decay`` (4e-3),
    ``decoupled_weight_decay`` (AdamW-style decay), ``maximize``.
    State: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative(type(self).__name__, group, "eps", "weight_decay", "momentum_decay")
        self._check_betas(group)

    def _state(self, param: Tensor, group: dict) -> dict:
        return {"mu_product": 1.0, "exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        beta1, beta2 = group["betas"]
        t, lr, decay = state["step"], group["lr"], group["momentum_decay"]
        param, grad = _decay(param, grad, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * decay))
        # (a float32 tensor times a Python float: computed in float32)
        mu_product = state["mu_product"] = float(np.float32(state["mu_product"]) * np.float32(mu))
        exp_avg = state["exp_avg"] = state["exp_avg"] + (1 - beta1) * (grad - state["exp_avg"])
        exp_avg_sq = state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad
        denom = sqrt(exp_avg_sq / (1 - beta2 ** t)) + group["eps"]
        param = param - lr * (1 - mu) / (1 - mu_product) * (grad / denom)
        return param - lr * mu_next / (1 - mu_product * mu_next) * (exp_avg / denom)


class RAdam(_Eager):
    """RAdam (Liu et al., 2020): Adam with the variance of the adaptive learning rate rectified; the
    first steps (while the approximated SMA length is at most 5) are plain momentum SGD.

    Args: ``lr`` (1e-3), ``betas``, ``eps``, ``weight_decay``, ``decoupled_weight_decay``, ``maximize``.
    State: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        _check_nonnegative(type(self).__name__, group, "eps", "weight_decay")
        self._check_betas(group)

    def _state(self, param: Tensor, group: dict) -> dict:
        return {"exp_avg": _zeros(param), "exp_avg_sq": _zeros(param)}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        beta1, beta2 = group["betas"]
        t, lr = state["step"], group["lr"]
        param, grad = _decay(param, grad, group)
        exp_avg = state["exp_avg"] = state["exp_avg"] + (1 - beta1) * (grad - state["exp_avg"])
        exp_avg_sq = state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad
        correction1, correction2 = 1 - beta1 ** t, 1 - beta2 ** t
        corrected = exp_avg / correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / correction2
        if rho_t <= 5.0:
            return param - lr * corrected
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(correction2) / (sqrt(exp_avg_sq) + group["eps"])
        return param - corrected * lr * adaptive * rect


class Rprop(_Eager):
    """Resilient backpropagation: each element's step size grows by ``etas[1]`` while its gradient
    keeps its sign and shrinks by ``etas[0]`` when it flips (that step then skips the element), within
    ``step_sizes``; the update is ``-sign(g) * step_size``.

    Args: ``lr`` (1e-2, the initial step size), ``etas`` ((0.5, 1.2)), ``step_sizes`` ((1e-6, 50)),
    ``maximize``. State: ``step``, ``prev``, ``step_size``.
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50),
                 *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize))

    def _check_group(self, group: dict) -> None:
        super()._check_group(group)
        minus, plus = group["etas"]
        if not 0.0 < minus < 1.0 < plus:
            raise ValueError(f"Rprop: invalid etas {group['etas']}: expected 0 < etaminus < 1 < etaplus")

    def _state(self, param: Tensor, group: dict) -> dict:
        return {"prev": _zeros(param), "step_size": _zeros(param, group["lr"])}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        minus, plus = group["etas"]
        low, high = group["step_sizes"]
        agreement = sign(grad * state["prev"])
        ones = agreement * 0 + 1.0  # (in the parameter's dtype: the etas must not be rounded to float32)
        factor = where(agreement > 0, plus, where(agreement < 0, minus, ones))
        state["step_size"] = clip(state["step_size"] * factor, low, high)
        grad = where(agreement < 0, 0.0, grad).astype(param.dtype)
        state["prev"] = grad
        return param - sign(grad) * state["step_size"]


class ASGD(_Eager):
    """Averaged SGD (Polyak & Juditsky, 1992) with PyTorch's step-size schedule
    ``eta_t = lr / (1 + lambd * lr * t) ** alpha``; ``ax`` holds the average of the iterates from step
    ``t0`` on (read it from ``optimizer.state[p]["ax"]``).

    Args: ``lr`` (1e-2), ``lambd`` (1e-4, decay term), ``alpha`` (0.75), ``t0`` (1e6, when averaging
    starts), ``weight_decay``, ``maximize``. State: ``step``, ``eta``, ``mu``, ``ax``.
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize))

    def _state(self, param: Tensor, group: dict) -> dict:
        return {"eta": _scalar(group["lr"]), "mu": 1.0, "ax": _zeros(param)}

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        t, eta, mu = state["step"], state["eta"], state["mu"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        param = param * (1 - group["lambd"] * eta) - eta * grad
        state["ax"] = state["ax"] + (param - state["ax"]) * mu if mu != 1 else param
        state["eta"] = _scalar(group["lr"] / (1 + group["lambd"] * group["lr"] * t) ** group["alpha"])
        state["mu"] = _scalar(1 / max(1, t - group["t0"]))
        return param


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float, bounds=None) -> float:
    """The minimizer, within ``bounds`` (default: between x1 and x2), of the cubic through two points
    with their values f and slopes g (Nocedal & Wright, eq. 3.59); the bounds' middle when the cubic
    has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    square = d1 * d1 - g1 * g2
    if square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def _strong_wolfe(evaluate, t: float, d, f: float, g, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple:
    """A step length along ``d`` satisfying the strong Wolfe conditions (Nocedal & Wright, algorithms
    3.5 and 3.6: bracket, then zoom by cubic interpolation), starting from ``t``. ``evaluate(t)``
    gives (loss, flat gradient) at the point moved by ``t * d``; f, g, gtd are the loss, gradient and
    slope ``g . d`` at t = 0. Returns (loss, gradient, t, evaluations)."""
    d_norm = float(abs(d).max())
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done, ls_iter, bracket = False, 0, None
    while ls_iter < max_ls:  # grow the step until a bracket of acceptable points is known
        overshot = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
        if not overshot and abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if overshot or gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev, t = t, f_new, g_new, gtd_new, t_next
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, float(g_new @ d), ls_iter + 1
    if bracket is None:
        bracket = [[0.0, f, g, gtd], [t, f_new, g_new, gtd_new]]
    insufficient = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:  # zoom into the bracket
        (a, fa, _, ga), (b, fb, _, gb) = bracket
        if abs(b - a) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(a, fa, ga, b, fb, gb)
        lo, hi = min(a, b), max(a, b)
        margin = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < margin:  # too close to an end: move away from it, or note it
            if insufficient or t >= hi or t <= lo:
                t = hi - margin if abs(t - hi) < abs(t - lo) else lo + margin
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, float(g_new @ d), ls_iter + 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new, gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new, gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """Limited-memory BFGS, as PyTorch's ``LBFGS``: each ``step(closure)`` runs up to ``max_iter``
    quasi-Newton iterations, re-evaluating ``closure`` (which must clear the gradients, compute the
    loss, call ``backward()`` and return the loss) after each move. One parameter group; the
    parameters are treated as one flat vector.

    Args: ``lr`` (1, the step length), ``max_iter`` (20), ``max_eval`` (``max_iter * 5 / 4``),
    ``tolerance_grad`` (1e-7), ``tolerance_change`` (1e-9), ``history_size`` (100), ``line_search_fn``
    (``None``: steps of length ``lr``; ``'strong_wolfe'``: each step's length found by a line search
    satisfying the strong Wolfe conditions, c1 = 1e-4, c2 = 0.9, at most 25 evaluations, by cubic
    interpolation as PyTorch's).
    """

    def __init__(self, params: Iterable, lr: float = 1.0, max_iter: int = 20, max_eval=None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn=None) -> None:
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval if max_eval is not None
                                      else max_iter * 5 // 4, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self.fused = False
        self._lbfgs = {"func_evals": 0, "n_iter": 0}

    def _params(self) -> list:
        return self.param_groups[0]["params"]

    def _flat_grad(self):
        xp = namespace_of(self._params()[0]._data)
        parts = [xp.zeros(p._data.size, p._data.dtype) if p.grad is None else p.grad._data.reshape(-1)
                 for p in self._params()]
        return xp.concatenate(parts).astype(self._params()[0]._data.dtype, copy=False)

    def _move(self, step: float, direction) -> None:
        offset = 0
        for p in self._params():
            n = p._data.size
            p._data[...] += (step * direction[offset:offset + n]).reshape(p._data.shape).astype(p._data.dtype, copy=False)
            offset += n

    def _evaluate_at(self, closure, step: float, direction) -> tuple:
        """The loss and flat gradient at the parameters moved by ``step * direction``; the parameters
        are put back afterwards."""
        from graphgrad.core.autograd import enable_grad

        saved = [p._data.copy() for p in self._params()]
        self._move(step, direction)
        with enable_grad():
            value = closure()
        loss, grad = float(value.item() if isinstance(value, Tensor) else value), self._flat_grad()
        for p, data in zip(self._params(), saved):
            p._data[...] = data
        return loss, grad

    def step(self, closure=None):
        """One LBFGS step (several iterations). Returns the first loss ``closure`` computed."""
        if closure is None:
            raise ValueError("LBFGS.step needs a closure that recomputes the loss")
        from graphgrad.core.autograd import enable_grad

        group, state = self.param_groups[0], self._lbfgs
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change, history = group["tolerance_grad"], group["tolerance_change"], group["history_size"]
        with enable_grad():
            first_loss = closure()
        loss = float(first_loss.item() if isinstance(first_loss, Tensor) else first_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        xp = namespace_of(flat_grad)
        if float(xp.abs(flat_grad).max()) <= tol_grad:
            return first_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_steps, ro = state.get("old_dirs", []), state.get("old_stps", []), state.get("ro", [])
        h_diag, prev_grad, prev_loss = state.get("H_diag", 1.0), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_steps, ro, h_diag = -flat_grad, [], [], [], 1.0
            else:
                y, s = flat_grad - prev_grad, d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(old_dirs) == history:
                        old_dirs.pop(0), old_steps.pop(0), ro.pop(0)
                    old_dirs.append(y), old_steps.append(s), ro.append(1.0 / ys)
                    h_diag = ys / float(y @ y)
                alphas = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):  # the two-loop recursion
                    alphas[i] = float(old_steps[i] @ q) * ro[i]
                    q = q - alphas[i] * old_dirs[i]
                d = q * h_diag
                for i in range(len(old_dirs)):
                    beta = float(old_dirs[i] @ d) * ro[i]
                    d = d + (alphas[i] - beta) * old_steps[i]
            prev_grad, prev_loss = flat_grad.copy(), loss
            t = min(1.0, 1.0 / float(xp.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            if float(flat_grad @ d) > -tol_change:  # not a descent direction
                break
            evaluated = 0
            if group["line_search_fn"] == "strong_wolfe":
                loss, flat_grad, t, evaluated = _strong_wolfe(
                    lambda step: self._evaluate_at(closure, step, d), t, d, loss, flat_grad, float(flat_grad @ d))
                self._move(t, d)
            else:
                self._move(t, d)
                if n_iter != max_iter:
                    with enable_grad():
                        value = closure()
                    loss = float(value.item() if isinstance(value, Tensor) else value)
                    flat_grad = self._flat_grad()
                    evaluated = 1
            evals += evaluated
            state["func_evals"] += evaluated
            if n_iter == max_iter or evals >= max_eval:
                break
            if float(xp.abs(flat_grad).max()) <= tol_grad or float(xp.abs(d * t).max()) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=ro, H_diag=h_diag, prev_flat_grad=prev_grad,
                     prev_loss=prev_loss)
        return first_loss

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["lbfgs"] = {k: (list(v) if isinstance(v, list) else v) for k, v in self._lbfgs.items()}
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        self._lbfgs = dict(state_dict.pop("lbfgs", {"func_evals": 0, "n_iter": 0}))
        super().load_state_dict(state_dict)
