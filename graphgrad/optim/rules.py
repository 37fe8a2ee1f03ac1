"""Optimizer update rules, written once with graphgrad ops and shared by every optimizer.

Rules: ``sgd``, ``momentum``, ``adam`` (and AdamW), ``rmsprop``, ``adagrad``, ``adadelta``.

Each rule is a pure function: it takes a parameter, its gradient, the parameter's optimizer state
and the hyperparameters, and returns the new parameter and the new state. Nothing is changed in
place, so one definition serves two modes (DESIGN principle 3):

* **eagerly**, on concrete tensors, it computes now. The eager optimizers (``gg.optim``) call it
  under ``gg.no_grad()`` and store the results into the parameter and its state;
* **in a graph**, on graph tensors (or inside ``with graph.as_default():``), it adds the nodes
  that compute the update; the graph optimizers (``gg.train.AdamOptimizer``...) assign them to the
  variable and its slot variables.

Hyperparameters may be Python numbers or tensors (a learning-rate placeholder, a decayed schedule).
Python numbers are weak scalars (a float32 parameter stays float32); tensor hyperparameters are cast
to the parameter's dtype where they meet it. The formulas are PyTorch's (``torch.optim``), which
follow the published algorithms; the differences from TensorFlow 1 are noted in each docstring.

The state each rule needs is listed in :data:`STATE` (name -> initial value, and the hyperparameter
that switches it on), so that an optimizer can create it generically::

    >>> state_for("rmsprop", momentum=0.9, centered=False)
    {'square_avg': 0.0, 'buf': 0.0}

Rules that use a step count (:data:`NEEDS_STEP`) receive ``step``, the number of the update being
made: 1 for the first one (the count starts at 0 and is incremented before the rule runs).

Example (eager):
    >>> with gg.no_grad():
    ...     p, m, v = adam(p, g, m, v, step=1, lr=1e-3)
"""
from __future__ import annotations

import math
from typing import Any, Optional

from graphgrad.core.tensor import Tensor
from graphgrad.ops import astype, maximum, pow as _pow_op, sqrt as _sqrt_op

#: Per-parameter state of each rule: ``name -> (initial value, switch)``. ``switch`` is ``None``
#: when the state is always needed, else the name of the hyperparameter that needs it when true
#: (``momentum > 0``, ``centered``, ``amsgrad``). State has the parameter's shape and dtype.
STATE: dict = {
    "sgd": {},
    "momentum": {"velocity": (0.0, None)},
    "adam": {"m": (0.0, None), "v": (0.0, None), "v_max": (0.0, "amsgrad")},
    "rmsprop": {"square_avg": (0.0, None), "buf": (0.0, "momentum"), "grad_avg": (0.0, "centered")},
    # a string initial value names the hyperparameter that gives it (0.0 when not given)
    "adagrad": {"state_sum": ("initial_accumulator_value", None)},
    "adadelta": {"square_avg": (0.0, None), "acc_delta": (0.0, None)},
}

#: Rules that take a step count ``step`` (>= 1: the number of the update being made).
NEEDS_STEP = frozenset({"adam", "adagrad"})


def state_for(rule: str, **hyper: Any) -> dict:
    """The state ``rule`` needs with hyperparameters ``hyper``: ``{name: initial value}``.

    A switched state is included when its hyperparameter is given and true (a tensor counts as
    true: a momentum fed at run time needs its buffer). An initial value given in :data:`STATE`
    as a string is read from ``hyper`` (Adagrad's ``initial_accumulator_value``; 0.0 if absent).

    Examples:
        >>> state_for("adam", amsgrad=True)
        {'m': 0.0, 'v': 0.0, 'v_max': 0.0}
    """
    if rule not in STATE:
        raise ValueError(f"unknown update rule {rule!r}; known rules: {sorted(STATE)}")
    out = {}
    for name, (initial, switch) in STATE[rule].items():
        if switch is None or _is_on(hyper.get(switch)):
            out[name] = float(hyper.get(initial, 0.0)) if isinstance(initial, str) else initial
    return out


# ---- helpers: hyperparameters that are numbers or tensors -----------------------------------------
def _is_on(value: Any) -> bool:
    return isinstance(value, Tensor) or bool(value)


def _like(value: Any, param: Tensor) -> Any:
    """A hyperparameter as it meets the parameter: numbers stay weak scalars, tensors take the
    parameter's dtype (so a float64 learning-rate placeholder keeps a float32 update float32)."""
    if isinstance(value, Tensor) and value.dtype != param.dtype and param.dtype.kind in "fc":
        return astype(value, param.dtype)
    return value


def _sqrt(x: Any) -> Any:
    return _sqrt_op(x) if isinstance(x, Tensor) else math.sqrt(x)


def _one_minus_power(beta: Any, step: Any) -> Any:
    """``1 - beta ** step``: a Python float for numbers (as PyTorch computes it), else a float64 tensor."""
    if not isinstance(beta, Tensor) and not isinstance(step, Tensor):
        return 1.0 - beta ** step
    if isinstance(step, Tensor) and step.dtype.kind != "f":
        step = astype(step, "float64")
    return 1.0 - _pow_op(beta, step)


def _check_lr(lr: Any) -> None:
    if not isinstance(lr, Tensor) and lr < 0.0:
        raise ValueError(f"invalid learning rate {lr}: it must be >= 0")


# ---- the rules ------------------------------------------------------------------------------------
def sgd(param: Tensor, grad: Tensor, lr: Any, weight_decay: float = 0.0) -> Tensor:
    """Plain gradient descent.

    Rule::

        g  = grad + weight_decay * param
        param' = param - lr * g

    State: none. Same as ``torch.optim.SGD(momentum=0)`` and TF1's ``GradientDescentOptimizer``.

    Returns:
        the new parameter.
    """
    _check_lr(lr)
    if _is_on(weight_decay):
        grad = grad + _like(weight_decay, param) * param
    return param - _like(lr, param) * grad


def momentum(param: Tensor, grad: Tensor, velocity: Optional[Tensor], lr: Any, momentum: Any,
             dampening: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0) -> tuple:
    """Gradient descent with (heavy-ball or Nesterov) momentum, PyTorch's ``SGD(momentum=...)``.

    Rule (Sutskever et al., 2013, in PyTorch's form)::

        g  = grad + weight_decay * param
        v' = momentum * v + (1 - dampening) * g      (v' = g on the first step, v is None)
        d  = g + momentum * v'  if nesterov  else  v'
        param' = param - lr * d

    State: ``velocity`` (initially 0; pass ``None`` on the first step to start it at the gradient,
    as PyTorch does: the same result as 0 unless ``dampening > 0``). With ``dampening = 0`` this is
    also TF1's ``MomentumOptimizer`` (``accum = momentum * accum + g; var -= lr * accum``, and
    ``var -= lr * (g + momentum * accum)`` with ``use_nesterov``).

    Returns:
        ``(new_param, new_velocity)``.
    """
    _check_lr(lr)
    if nesterov and (_is_on(dampening) or not _is_on(momentum)):
        raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")
    if _is_on(weight_decay):
        grad = grad + _like(weight_decay, param) * param
    mu = _like(momentum, param)
    if velocity is None:
        new_velocity = grad
    elif _is_on(dampening):
        new_velocity = mu * velocity + _like(1.0 - dampening, param) * grad
    else:
        new_velocity = mu * velocity + grad
    step = grad + mu * new_velocity if nesterov else new_velocity
    return param - _like(lr, param) * step, new_velocity


def adam(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, step: Any, lr: Any, beta1: Any = 0.9,
         beta2: Any = 0.999, eps: Any = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
         v_max: Optional[Tensor] = None, decoupled_weight_decay: bool = False, epsilon_hat: bool = False) -> tuple:
    """Adam (Kingma & Ba, 2015) with bias correction, PyTorch's ``Adam`` (``AdamW`` with
    ``decoupled_weight_decay=True``).

    Rule, for update number ``t = step`` (1, 2, ...)::

        param = param * (1 - lr * weight_decay)     if decoupled_weight_decay   (AdamW)
        g  = grad + weight_decay * param             otherwise                   (L2)
        m' = beta1 * m + (1 - beta1) * g
        v' = beta2 * v + (1 - beta2) * g * g
        v_max' = maximum(v_max, v')                  if amsgrad (and v_max' replaces v' below)
        denom  = sqrt(v') / sqrt(1 - beta2 ** t) + eps
        param' = param - (lr / (1 - beta1 ** t)) * m' / denom

    State: ``m`` and ``v`` (initially 0), ``v_max`` (initially 0, with ``amsgrad``), and the step
    count. ``step`` may be a Python int or a tensor (a graph's step counter); the bias corrections
    are computed in float64 and cast to the parameter's dtype.

    TF1's ``AdamOptimizer`` puts epsilon elsewhere: ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)``
    and ``param -= lr_t * m' / (sqrt(v') + eps)``, i.e. its epsilon is PyTorch's times
    ``sqrt(1 - beta2**t)``. The two agree when eps is negligible against ``sqrt(v')``. Keras' Adam
    is TF1's; ``epsilon_hat=True`` computes that form: ``denom = (sqrt(v') + eps) / sqrt(1 - beta2 ** t)``.

    Returns:
        ``(new_param, new_m, new_v)``, plus ``new_v_max`` with ``amsgrad``.
    """
    _check_lr(lr)
    if amsgrad and v_max is None:
        raise ValueError("adam: amsgrad needs the v_max state (initially zeros)")
    if _is_on(weight_decay):
        if decoupled_weight_decay:
            param = param * _like(1.0 - lr * weight_decay, param)
        else:
            grad = grad + _like(weight_decay, param) * param
    new_m = _like(beta1, param) * m + _like(1.0 - beta1, param) * grad
    new_v = _like(beta2, param) * v + _like(1.0 - beta2, param) * (grad * grad)
    new_v_max = maximum(v_max, new_v) if amsgrad else None
    correction1 = _one_minus_power(beta1, step)
    correction2_sqrt = _sqrt(_one_minus_power(beta2, step))
    step_size = _like(lr / correction1, param)
    root = _sqrt(new_v_max if amsgrad else new_v)
    if epsilon_hat:  # TF1's and Keras' placement: eps joins sqrt(v') before the bias correction
        denom = (root + _like(eps, param)) / _like(correction2_sqrt, param)
    else:
        denom = root / _like(correction2_sqrt, param) + _like(eps, param)
    new_param = param - step_size * (new_m / denom)
    return (new_param, new_m, new_v, new_v_max) if amsgrad else (new_param, new_m, new_v)


def rmsprop(param: Tensor, grad: Tensor, square_avg: Tensor, lr: Any, alpha: Any = 0.99, eps: Any = 1e-8,
            momentum: Any = 0.0, centered: bool = False, buf: Optional[Tensor] = None,
            grad_avg: Optional[Tensor] = None, weight_decay: float = 0.0) -> tuple:
    """RMSprop (Hinton, Coursera lecture 6e; centered: Graves, 2013), PyTorch's ``RMSprop``.

    Rule::

        g   = grad + weight_decay * param
        s'  = alpha * s + (1 - alpha) * g * g                       (s: square_avg)
        a'  = alpha * a + (1 - alpha) * g                           (a: grad_avg, if centered)
        avg = sqrt(s' - a' * a') if centered else sqrt(s')
        avg = avg + eps
        b'  = momentum * b + g / avg;  param' = param - lr * b'     (if momentum > 0; b: buf)
        param' = param - lr * g / avg                                (otherwise)

    State: ``square_avg`` (initially 0); ``buf`` (initially 0) when ``momentum > 0``; ``grad_avg``
    (initially 0) when ``centered``.

    TF1's ``RMSPropOptimizer`` differs: its mean square starts at **1** (not 0), epsilon is added
    *inside* the square root (``sqrt(s' + eps)``) and the learning rate goes into the momentum
    buffer (``b' = momentum * b + lr * g / sqrt(s' + eps); param -= b'``). With a constant
    learning rate only the first two matter.

    Returns:
        ``(new_param, new_square_avg, new_buf, new_grad_avg)``; ``new_buf`` is ``None`` without
        momentum and ``new_grad_avg`` is ``None`` unless centered.
    """
    _check_lr(lr)
    use_momentum = _is_on(momentum)
    if use_momentum and buf is None:
        raise ValueError("rmsprop: momentum needs the buf state (initially zeros)")
    if centered and grad_avg is None:
        raise ValueError("rmsprop: centered needs the grad_avg state (initially zeros)")
    if _is_on(weight_decay):
        grad = grad + _like(weight_decay, param) * param
    a, one_minus_a = _like(alpha, param), _like(1.0 - alpha, param)
    new_square_avg = a * square_avg + one_minus_a * (grad * grad)
    new_grad_avg = None
    if centered:
        new_grad_avg = a * grad_avg + one_minus_a * grad
        avg = _sqrt_op(new_square_avg - new_grad_avg * new_grad_avg)
    else:
        avg = _sqrt_op(new_square_avg)
    avg = avg + _like(eps, param)
    lr = _like(lr, param)
    if use_momentum:
        new_buf = _like(momentum, param) * buf + grad / avg
        return param - lr * new_buf, new_square_avg, new_buf, new_grad_avg
    return param - lr * (grad / avg), new_square_avg, None, new_grad_avg


def adagrad(param: Tensor, grad: Tensor, state_sum: Tensor, step: Any, lr: Any, lr_decay: Any = 0.0,
            eps: Any = 1e-10, weight_decay: float = 0.0) -> tuple:
    """Adagrad (Duchi et al., 2011), PyTorch's ``Adagrad``.

    Rule, for update number ``t = step`` (1, 2, ...)::

        g   = grad + weight_decay * param
        clr = lr / (1 + (t - 1) * lr_decay)
        s'  = s + g * g                                  (s: state_sum)
        param' = param - clr * g / (sqrt(s') + eps)

    State: ``state_sum`` (initially ``initial_accumulator_value``, default 0) and the step count.
    TF1's ``AdagradOptimizer`` starts the sum at 0.1 and has no epsilon (``sqrt(s')`` alone).

    Returns:
        ``(new_param, new_state_sum)``.
    """
    _check_lr(lr)
    if _is_on(weight_decay):
        grad = grad + _like(weight_decay, param) * param
    if isinstance(step, Tensor) or isinstance(lr, Tensor) or isinstance(lr_decay, Tensor):
        if isinstance(step, Tensor) and step.dtype.kind != "f":
            step = astype(step, "float64")
        clr = _like(lr, param) / _like(1.0 + (step - 1.0) * lr_decay, param)
    else:
        clr = lr / (1.0 + (step - 1) * lr_decay)  # a Python float, as PyTorch computes it
    new_sum = state_sum + grad * grad
    std = _sqrt_op(new_sum) + _like(eps, param)
    return param - _like(clr, param) * (grad / std), new_sum


def adadelta(param: Tensor, grad: Tensor, square_avg: Tensor, acc_delta: Tensor, lr: Any = 1.0, rho: Any = 0.9,
             eps: Any = 1e-6, weight_decay: float = 0.0) -> tuple:
    """Adadelta (Zeiler, 2012), PyTorch's ``Adadelta`` (the learning rate scales the update).

    Rule::

        g   = grad + weight_decay * param
        s'  = rho * s + (1 - rho) * g * g                         (s: square_avg)
        d   = sqrt(u + eps) / sqrt(s' + eps) * g                  (u: acc_delta)
        u'  = rho * u + (1 - rho) * d * d
        param' = param - lr * d

    State: ``square_avg`` and ``acc_delta`` (initially 0). TF1's ``AdadeltaOptimizer`` is the same
    rule (its default learning rate is 0.001, PyTorch's 1.0).

    Returns:
        ``(new_param, new_square_avg, new_acc_delta)``.
    """
    _check_lr(lr)
    if _is_on(weight_decay):
        grad = grad + _like(weight_decay, param) * param
    r, one_minus_r, e = _like(rho, param), _like(1.0 - rho, param), _like(eps, param)
    new_square_avg = r * square_avg + one_minus_r * (grad * grad)
    delta = _sqrt_op(acc_delta + e) / _sqrt_op(new_square_avg + e) * grad
    new_acc_delta = r * acc_delta + one_minus_r * (delta * delta)
    return param - _like(lr, param) * delta, new_square_avg, new_acc_delta


#: The rules by name (the keys of :data:`STATE`).
RULES = {"sgd": sgd, "momentum": momentum, "adam": adam, "rmsprop": rmsprop, "adagrad": adagrad,
         "adadelta": adadelta}
