"""Optimizers for static graphs, TensorFlow-1 style: ``minimize(loss)`` returns a train op.

The update rules are the shared ones of :mod:`graphgrad.optim.rules` (the eager optimizers use the
same functions); here they are applied to graph tensors, and their results assigned to the
variables and to per-variable *slot* variables (non-trainable, named like ``w/Adam/m``).

Within one train step every rule reads the values from before the step: the updates are all built
from the variables' reads first, and only then assigned (an assign writes a new array, so a read
computed earlier in the run keeps the old value).

Examples:
    >>> x = gg.placeholder(gg.float32, (100, 2)); y = gg.placeholder(gg.int64, (100,))
    >>> w = gg.Variable(gg.randn(2, 3), name="w")
    >>> loss = gg.cross_entropy(x @ w, y)
    >>> train_op = AdamOptimizer(0.01).minimize(loss)
    >>> sess = gg.Session()
    >>> for _ in range(100):
    ...     sess.run(train_op, {x: xs, y: ys})
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from graphgrad.core.creation import full
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import float64
from graphgrad.errors import GraphError
from graphgrad.graph import Variable, gradients, group, trainable_variables
from graphgrad.graph.graph import GraphNode, graph_of
from graphgrad.optim import rules


class Optimizer:
    """Base class of the graph optimizers.

    A subclass names its rule (``rule``, a key of ``rules.STATE``), gives the hyperparameters that
    switch optional state on (``_switches``) and applies the rule to one variable (``_update``).

    Args:
        learning_rate: a float, a graph tensor (a placeholder, a schedule of the global step) or a
            callable returning one of those (called when the train op is built).
        name: the name scope of the update nodes and the middle part of slot names.
    """

    rule = ""

    def __init__(self, learning_rate: Any, name: str) -> None:
        if not isinstance(learning_rate, Tensor) and not callable(learning_rate) and learning_rate < 0:
            raise ValueError(f"{type(self).__name__}: learning_rate must be >= 0, got {learning_rate}")
        self._learning_rate = learning_rate
        self._name = name
        self._slots: dict = {}  # id(var) -> (var, {slot name: slot Variable})
        self._steps: dict = {}  # graph -> the step-count Variable (rules that need a step)

    def get_name(self) -> str:
        return self._name

    # ---- the TF1 API ------------------------------------------------------------------------------
    def compute_gradients(self, loss: Tensor, var_list: Optional[Sequence[Variable]] = None) -> list:
        """``[(gradient, variable)]`` for ``var_list`` (default: the trainable variables of the
        loss's graph); a gradient is ``None`` where the variable does not affect the loss."""
        if not (isinstance(loss, Tensor) and isinstance(loss._node, GraphNode)):
            raise GraphError(f"{type(self).__name__}.compute_gradients: loss must be a graph tensor, got "
                             f"{type(loss).__name__} (for eager training use gg.optim)")
        graph = graph_of([loss])
        var_list = list(trainable_variables(graph) if var_list is None else var_list)
        if not var_list:
            raise ValueError(f"{type(self).__name__}: there are no variables to optimize")
        for v in var_list:
            if not getattr(v, "is_variable", False):
                raise TypeError(f"{type(self).__name__}: var_list must hold gg.Variables, got {type(v).__name__}")
        return list(zip(gradients(loss, var_list), var_list))

    def apply_gradients(self, grads_and_vars: Sequence[tuple], global_step: Optional[Variable] = None,
                        name: Optional[str] = None) -> GraphNode:
        """A train op that applies each ``(gradient, variable)`` update (pairs with a ``None``
        gradient are skipped) and, if ``global_step`` is given, adds 1 to it."""
        pairs = list(grads_and_vars)
        live = [(g, v) for g, v in pairs if g is not None]
        if not live:
            names = [getattr(v, "base_name", "?") for _, v in pairs]
            raise ValueError(f"{type(self).__name__}: no gradients for any variable of {names}; check that "
                             "the loss depends on them")
        graph = graph_of([g for g, _ in live])
        with graph.as_default(), graph.name_scope(name or self._name):
            lr = self._learning_rate() if callable(self._learning_rate) else self._learning_rate
            step = None
            updates = []  # (variable, new value): all built from reads before any assign
            if self.rule in rules.NEEDS_STEP:
                counter = self._step_counter(graph)
                step = graph.read_variable(counter) + 1.0
                updates.append((counter, step))
            for g, var in live:
                slots = self._slots_of(var)
                reads = {k: graph.read_variable(s) for k, s in slots.items()}
                new_var, new_state = self._update(graph.read_variable(var), g, reads, lr, step)
                updates.append((var, new_var))
                updates.extend((slots[k], value) for k, value in new_state.items())
            assigns = [var.assign(value) for var, value in updates]
            if global_step is not None:
                assigns.append(global_step.assign_add(1))
        return group(*assigns, name=name or self._name)

    def minimize(self, loss: Tensor, var_list: Optional[Sequence[Variable]] = None,
                 global_step: Optional[Variable] = None, name: Optional[str] = None) -> GraphNode:
        """``apply_gradients(compute_gradients(loss, var_list), global_step)``: one train op."""
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step=global_step, name=name)

    # ---- slots ----------------------------------------------------------------------------------------
    def get_slot_names(self) -> list:
        """The slot names this optimizer makes per variable (e.g. ``['m', 'v']``)."""
        return list(rules.state_for(self.rule, **self._switches()))

    def get_slot(self, var: Variable, name: str) -> Optional[Variable]:
        """The slot variable ``name`` of ``var``, or ``None`` if none was made."""
        entry = self._slots.get(id(var))
        return None if entry is None else entry[1].get(name)

    def variables(self) -> list:
        """Every variable this optimizer made (slots and step counters)."""
        out = [s for _, slots in self._slots.values() for s in slots.values()]
        return out + list(self._steps.values())

    def _slots_of(self, var: Variable) -> dict:
        entry = self._slots.get(id(var))
        if entry is None:
            slots = {name: Variable(full(tuple(var.shape), initial, dtype=var.dtype), trainable=False,
                                    name=f"{var.base_name}/{self._name}/{name}")
                     for name, initial in rules.state_for(self.rule, **self._switches()).items()}
            entry = self._slots[id(var)] = (var, slots)
        return entry[1]

    def _step_counter(self, graph) -> Variable:
        counter = self._steps.get(graph)
        if counter is None:  # float64: the bias corrections are computed in float64, as PyTorch does
            counter = self._steps[graph] = Variable(0.0, trainable=False, name=f"{self._name}/step", dtype=float64)
        return counter

    # ---- subclass hooks ---------------------------------------------------------------------------------
    def _switches(self) -> dict:
        """Hyperparameters that switch optional state on (see ``rules.STATE``)."""
        return {}

    def _update(self, var: Tensor, grad: Tensor, state: dict, lr: Any, step: Any) -> tuple:
        """``(new value, {slot name: new value})`` for one variable, from reads of it and its slots."""
        raise NotImplementedError


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad`` (``rules.sgd``)."""

    rule = "sgd"

    def __init__(self, learning_rate: Any, name: str = "GradientDescent") -> None:
        super().__init__(learning_rate, name)

    def _update(self, var, grad, state, lr, step):
        return rules.sgd(var, grad, lr), {}


class MomentumOptimizer(Optimizer):
    """Momentum (``rules.momentum``): ``accum = momentum * accum + grad; var -= lr * accum``, or
    ``var -= lr * (grad + momentum * accum)`` with ``use_nesterov`` (TF1's and PyTorch's rule
    agree). Slot: ``velocity``."""

    rule = "momentum"

    def __init__(self, learning_rate: Any, momentum: Any, use_nesterov: bool = False, name: str = "Momentum") -> None:
        super().__init__(learning_rate, name)
        self._momentum = momentum
        self._use_nesterov = bool(use_nesterov)

    def _update(self, var, grad, state, lr, step):
        new_var, velocity = rules.momentum(var, grad, state["velocity"], lr, self._momentum,
                                           nesterov=self._use_nesterov)
        return new_var, {"velocity": velocity}


class AdamOptimizer(Optimizer):
    """Adam (``rules.adam``, PyTorch's formula). Slots: ``m``, ``v``; a step counter per graph
    (``Adam/step``, float64).

    Note: TF1 applies ``epsilon`` to the uncorrected ``sqrt(v)`` (its epsilon is PyTorch's times
    ``sqrt(1 - beta2**t)``); this follows PyTorch, so results match ``torch.optim.Adam`` and differ
    from TF1 only while epsilon is not negligible against ``sqrt(v)``.
    """

    rule = "adam"

    def __init__(self, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                 name: str = "Adam") -> None:
        super().__init__(learning_rate, name)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon

    def _update(self, var, grad, state, lr, step):
        new_var, m, v = rules.adam(var, grad, state["m"], state["v"], step, lr, self._beta1, self._beta2,
                                   self._epsilon)
        return new_var, {"m": m, "v": v}


class RMSPropOptimizer(Optimizer):
    """RMSProp (``rules.rmsprop``, PyTorch's formula; ``decay`` is PyTorch's ``alpha``). Slots:
    ``square_avg``; ``buf`` with momentum; ``grad_avg`` when centered.

    Note: TF1's RMSProp starts the mean square at 1, adds epsilon inside the square root and puts
    the learning rate inside the momentum buffer; this follows PyTorch (mean square starting at 0,
    ``lr * g / (sqrt(ms) + eps)``), so results match ``torch.optim.RMSprop``.
    """

    rule = "rmsprop"

    def __init__(self, learning_rate: Any, decay: float = 0.9, momentum: Any = 0.0, epsilon: float = 1e-10,
                 centered: bool = False, name: str = "RMSProp") -> None:
        super().__init__(learning_rate, name)
        self._decay, self._momentum, self._epsilon, self._centered = decay, momentum, epsilon, bool(centered)

    def _switches(self) -> dict:
        return {"momentum": self._momentum, "centered": self._centered}

    def _update(self, var, grad, state, lr, step):
        new_var, square_avg, buf, grad_avg = rules.rmsprop(
            var, grad, state["square_avg"], lr, self._decay, self._epsilon, momentum=self._momentum,
            centered=self._centered, buf=state.get("buf"), grad_avg=state.get("grad_avg"))
        new_state = {"square_avg": square_avg}
        if buf is not None:
            new_state["buf"] = buf
        if grad_avg is not None:
            new_state["grad_avg"] = grad_avg
        return new_var, new_state


__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer", "RMSPropOptimizer"]
