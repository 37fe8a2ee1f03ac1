"""The eager optimizer base class (PyTorch's ``torch.optim.Optimizer`` contract).

An optimizer holds **param groups** (each a dict: ``"params"``, a list of Parameters, plus that
group's hyperparameters, defaulting to the optimizer's ``defaults``) and a per-parameter ``state``
dict. ``step()`` applies the optimizer's update rule (one of :mod:`graphgrad.optim.rules`, the
functions the graph optimizers of ``gg.train`` use too) to every parameter that has a gradient.

How ``step()`` writes results back: by default (``fused = True``) the rule is traced once per
parameter set and hyperparameters into a compiled function (``gg.function``), whose fused kernels
write the new parameter values and state **in place** into the existing arrays; otherwise the rule
runs op by op under ``gg.no_grad()`` and the new value is copied in place (``param.data[...] =
new``). Either way the parameter's array keeps its identity (views of it, a graph that reads the
parameter, a ``state_dict`` of the module all see the new values) and its dtype: a float32
parameter stays float32 even if its gradient is float64 (the gradient is cast to the parameter's
dtype before the rule). Both ways give the same numbers.

Examples:
    >>> model = gg.nn.Linear(3, 1)
    >>> opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> for x, y in data:
    ...     opt.zero_grad()
    ...     loss = ((model(x) - y) ** 2).mean()
    ...     loss.backward()
    ...     opt.step()
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Iterable, Optional

from graphgrad.backend import namespace_of
from graphgrad.core.autograd import enable_grad, no_grad, note_inplace_write
from graphgrad.core.profiler import PROFILER
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError, ShapeError
from graphgrad.graph.graph import building_graph, graph_of
from graphgrad.graph.variables import Variable
from graphgrad.ops import astype, neg, where, zeros_like
from graphgrad.optim import rules


#: How many parameter sets / hyperparameter values a fused ``step()`` compiles before it gives up
#: (a schedule changing a hyperparameter other than the learning rate every step).
MAX_FUSED_TRACES = 4


class StateVariable(Variable):
    """An optimizer's state tensor (or step count) once the optimizer has been traced into a graph
    (``gg.function``): a Variable, so the compiled step reads and assigns it, and still an eager
    tensor, so eager steps keep using (and updating) the same values."""

    __slots__ = ()
    graph_collected = False

    def __init__(self, value: Any, name: str = "optimizer_state") -> None:
        super().__init__(value, trainable=False, name=name)


def _is_symbolic(value: Any) -> bool:
    return isinstance(value, Tensor) and value._data is None


class _Required:
    """The marker of a hyperparameter that has no default (it must be given per group)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class of the eager optimizers.

    A subclass sets ``rule`` (a key of :data:`rules.STATE`), validates its hyperparameters in
    ``_check_group`` and makes one update in ``_update(param, grad, state, group)``, which returns
    the new parameter value and updates ``state`` (a dict of tensors).

    Args:
        params: an iterable of Parameters, or of dicts (param groups: ``{"params": [...], "lr": ...}``;
            keys missing from a group take the value in ``defaults``).
        defaults: the default hyperparameters.

    Attributes:
        param_groups: the list of groups (dicts); schedulers change ``group["lr"]`` between steps.
        state: ``{parameter: {name: value}}``; a parameter's state is created at its first update
            (``step`` counts updates for the rules that need it).
    """

    rule = ""
    #: Whether ``step()`` runs as one compiled update (the rule traced once per parameter set and
    #: hyperparameters with ``gg.function``: fused kernels that write the parameters and the state in
    #: place) instead of op by op. Same results; set ``opt.fused = False`` to step op by op.
    fused: bool = True

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.state: dict = {}
        self.param_groups: list = []
        self._compiled_step = None
        self._fused_steps: dict = {}  # key of the parameter set and hyperparameters -> its ConcreteFunction
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of Parameters or dicts, got a "
                            "single Tensor; pass [tensor]")
        if isinstance(params, (set, frozenset)):
            raise TypeError(f"{type(self).__name__}: params must be an ordered iterable (a list), not a set: the "
                            "order of a set changes between runs, and state_dict() refers to parameters by position")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # ---- groups -------------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with its own hyperparameters) to train, e.g. when unfreezing
        layers: ``opt.add_param_group({"params": head.parameters(), "lr": 1e-4})``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"{type(self).__name__}: a param group must be a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters must be an ordered iterable (a list), not a set: the order of "
                            "a set changes between runs, and state_dict() refers to parameters by position")
        else:
            params = list(params or [])
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__} can only optimize Tensors (Parameters), got "
                                f"{type(p).__name__}")
            if p.is_symbolic:
                raise TypeError(f"{type(self).__name__} optimizes concrete parameters; for a graph's Variables "
                                "use gg.train's graph optimizers (minimize(loss) returns a train op)")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__} can only optimize leaf tensors (not {p!r}, which an op made)")
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{type(self).__name__}: a param group holds the same parameter more than once")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError(f"{type(self).__name__}: some parameters appear in more than one param group")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"{type(self).__name__}: param group does not give the required "
                                 f"hyperparameter {name!r}")
            group.setdefault(name, default)
        group["params"] = params
        self._check_group(group)
        self.param_groups.append(group)

    # ---- the training loop API ------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the parameters' gradients: set them to ``None`` (default: the next ``backward``
        allocates fresh ones and ``step`` skips parameters without one), or fill them with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                g = p.grad
                if g._data is None or building_graph():  # tracing (gg.function): zeros in the graph
                    p.grad = zeros_like(p)
                    continue
                if g.grad_fn is not None or g.requires_grad:  # (made with create_graph=True)
                    g = p.grad = g.detach()
                try:
                    g._data[...] = 0
                    note_inplace_write(g._data, "zero_grad()")
                except ValueError:  # a read-only array (a broadcast view)
                    g._data = namespace_of(g._data).zeros_like(g._data)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Update every parameter that has a gradient, once.

        Args:
            closure: optional; a function that clears the gradients, recomputes the loss, calls
                ``backward()`` and returns the loss (it runs with gradients enabled).

        Returns:
            the closure's loss, or ``None``.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if self.fused and not building_graph() and self._fused_step():
            return loss
        with no_grad():
            for group in self.param_groups:
                lr = None
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if _is_symbolic(p.grad) or building_graph():
                        lr = self._step_in_graph(p, group, lr)
                        continue
                    grad = self._grad_of(p, group)
                    state = self.state.get(p)
                    if state is None:
                        state = self.state[p] = self._init_state(p, group)
                    view = dict(state)
                    if "step" in state:
                        count = state["step"]
                        if isinstance(count, Variable):  # (the optimizer was traced: keep the Variable)
                            count._data = count._data + 1
                            view["step"] = int(count._data)
                        else:
                            view["step"] = state["step"] = count + 1
                    new = self._update(p.detach(), grad, view, group)
                    p._data[...] = new._data
                    note_inplace_write(p._data, f"{type(self).__name__}.step()")
                    for name, value in view.items():
                        old = state.get(name)
                        if name == "step":
                            continue
                        if isinstance(old, Variable):
                            if value is not old:
                                old._data = value._data if isinstance(value, Tensor) else value
                        else:
                            state[name] = value
        return loss

    # ---- the compiled eager step ----------------------------------------------------------------------
    def _fused_step(self) -> bool:
        """Run the update of every parameter with a gradient as one compiled function; False when this
        step cannot be compiled (a gradient is a graph tensor, or the rule branches on tensor values)."""
        key, grads = [], []
        for group in self.param_groups:
            live = [p for p in group["params"] if p.grad is not None]
            if any(_is_symbolic(p.grad) for p in live):
                return False
            grads.extend(p.grad for p in live)
            hyper = tuple((k, _hashable(v)) for k, v in sorted(group.items()) if k not in ("params", "lr"))
            key.append((tuple(id(p) for p in live), tuple((p.grad.dtype.str, tuple(p.grad.shape)) for p in live),
                        hyper, isinstance(group["lr"], Tensor)))
        key = tuple(key)
        concrete = self._fused_steps.get(key)
        before = None if concrete is not None else {p: dict(s) for p, s in self.state.items()}
        try:
            if concrete is None:
                if self._compiled_step is None:
                    from graphgrad.graph.trace import function  # (a layer below: imported when first needed)

                    self._compiled_step = function(self._traced_step)
                elif self._compiled_step.trace_count >= MAX_FUSED_TRACES:
                    self.fused = False  # hyperparameters change every step (a momentum schedule): op by op is cheaper
                    return False
                concrete = self._fused_steps[key] = self._compiled_step.concrete(key, grads)
            # The trace is looked up by this key rather than by gg.function's signature of the arguments,
            # which walks the key's nested tuples (about 90 us a step for an MLP's six parameters).
            leaves = [(g, None, False) for g in grads]
            if PROFILER.active:
                PROFILER.profile.call("gg.function _traced_step", "function", concrete, leaves)
            else:
                concrete(leaves)
        except GraphError:
            self.fused = False  # a rule that needs tensor values in Python: step op by op from now on
            if before is not None:  # the failed trace may have made state (SGD's velocity, as zeros)
                for p in [p for p in self.state if p not in before]:
                    del self.state[p]
                for p, s in before.items():
                    self.state[p] = s
            return False
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    note_inplace_write(p, f"{type(self).__name__}.step()")
        return True

    def _traced_step(self, key: tuple, grads: list) -> None:
        """The update of every parameter with a gradient, traced by ``_fused_step``: ``grads`` are the
        placeholders standing for the gradients (``key`` only makes ``gg.function`` trace anew when
        the parameter set or the hyperparameters change)."""
        placeholders = iter(grads)
        for group in self.param_groups:
            lr = None
            for p in group["params"]:
                if p.grad is not None:
                    lr = self._step_in_graph(p, group, lr, grad=next(placeholders))

    # ---- the step inside a graph (gg.function) -------------------------------------------------------
    def _step_in_graph(self, p: Tensor, group: dict, lr: Any, grad: Optional[Tensor] = None) -> Any:
        """Build the update of ``p`` in the graph being traced: the rule runs on graph tensors, the new
        parameter and state are ``assign`` nodes. The state lives in Variables (:class:`StateVariable`,
        made here from the eager state, kept for later eager steps too), so each run of the compiled
        step continues from the last. Returns the group's learning rate as the graph sees it.
        ``grad`` stands for ``p.grad`` when given (a placeholder of the compiled eager step)."""
        grad = p.grad if grad is None else grad
        graph = graph_of([grad])
        with graph.as_default():
            if lr is None:
                lr = self._graph_hyperparameter(group, "lr")
            hyper = dict(group, lr=lr)
            grad = self._grad_of(p, group, detach=False, grad=grad)
            state = self.state.get(p)
            if state is None:
                state = self.state[p] = self._init_state(p, group)
            for name, value in list(state.items()):
                if isinstance(value, Variable):
                    continue
                if name == "step":
                    state[name] = StateVariable(namespace_of(p._data).asarray(value, dtype="int64"), name="step")
                elif isinstance(value, Tensor):
                    state[name] = StateVariable(value, name=name)
            view = dict(state)
            assigns = {}
            if "step" in state:
                view["step"] = assigns["step"] = state["step"] + 1
            new = self._update(p, grad, view, group=hyper)
            made = [k for k, v in view.items() if k not in state and isinstance(v, Tensor)]
            if made:
                # state the rule creates at its first update (SGD's velocity starts at the gradient):
                # zero Variables and the rule's usual update. When that update from zeros is exactly
                # the first one, it is all; otherwise a flag chooses between the two formulas
                for name in made:
                    state[name] = StateVariable(namespace_of(p._data).zeros(p.shape, dtype=view[name].dtype),
                                                name=name)
                later = dict(state)
                if "step" in state:
                    later["step"] = view["step"]
                new_later = self._update(p, grad, later, group=hyper)
                if self._zero_state_is_exact(group):
                    new, view = new_later, later
                else:
                    started = StateVariable(namespace_of(p._data).asarray(False), name="started")
                    new = where(started, new_later, new)
                    for name in made:
                        view[name] = where(started, later[name], view[name])
                    for name, value in later.items():
                        if name not in made and isinstance(value, Tensor) and name != "step":
                            view[name] = where(started, value, view[name])
                    started.assign(True)
            for name, value in view.items():
                var = state.get(name)
                if isinstance(var, Variable) and isinstance(value, Tensor) and value is not var:
                    var.assign(assigns.get(name, value))
            p.assign(new)
        return lr

    def _graph_hyperparameter(self, group: dict, name: str) -> Any:
        """A number hyperparameter (the learning rate) as a graph value read at every run, so that a
        scheduler changing ``group[name]`` between compiled calls is followed."""
        value = group[name]
        if isinstance(value, Tensor) or isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        from graphgrad.graph.trace import current_trace  # (the tracer calls back before each run)

        tracer = current_trace()
        if tracer is None:
            return value
        xp = namespace_of(group["params"][0]._data)
        var = StateVariable(xp.asarray(value, dtype="float64"), name=name)

        last = [value]

        def refresh(var=var, group=group, name=name, xp=xp, last=last):
            value = group[name]
            if value is not last[0]:  # (a new array only when a scheduler changed it: once per call otherwise)
                last[0] = value
                var._data = xp.asarray(value, dtype="float64")

        tracer.before_each_call(refresh)
        return var

    # ---- state_dict -----------------------------------------------------------------------------------
    #: graphgrad's state names that PyTorch calls otherwise (``{"m": "exp_avg"}``): a state dict carries
    #: PyTorch's names, so the two load each other's optimizer checkpoints
    TORCH_STATE_NAMES: dict = {}

    def state_dict(self) -> dict:
        """The optimizer's state, PyTorch-style: ``{"state": {index: {name: value}}, "param_groups":
        [{hyperparameters..., "params": [index, ...]}]}``, with PyTorch's state names. Parameters are
        numbered in order across the groups; arrays are copies (backend arrays), step counts are ints."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: copy.deepcopy(v) for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index[id(p)] = len(index)
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    state[index[id(p)]] = {self.TORCH_STATE_NAMES.get(k, k): (
                        int(v._data) if k == "step" and isinstance(v, Tensor) else
                        v._data.copy() if isinstance(v, Tensor) else copy.deepcopy(v)) for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`, for an optimizer built on the same parameters in the same
        order. Arrays are copied and cast to their parameter's dtype and device."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{type(self).__name__}.load_state_dict: the state has {len(groups)} param groups, "
                             f"this optimizer {len(self.param_groups)}")
        by_index = {}
        for i, (saved, group) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(f"{type(self).__name__}.load_state_dict: param group {i} has "
                                 f"{len(saved['params'])} parameters in the state, {len(group['params'])} here")
            by_index.update(zip(saved["params"], group["params"]))
        previous, self.state = self.state, {}
        own_names = {torch_name: own for own, torch_name in self.TORCH_STATE_NAMES.items()}
        for idx, saved_state in state_dict["state"].items():
            p = by_index[int(idx)]
            restored = {}
            for k, v in saved_state.items():
                k = own_names.get(k, k)
                if k == "step" or not hasattr(v, "shape"):
                    restored[k] = copy.deepcopy(v)
                    continue
                array = v._data if isinstance(v, Tensor) else v
                if tuple(array.shape) != tuple(p.shape):
                    raise ShapeError(f"{type(self).__name__}.load_state_dict: state {k!r} of parameter {idx} has "
                                     f"shape {tuple(array.shape)}, the parameter {tuple(p.shape)}")
                restored[k] = Tensor(array, dtype=p.dtype, device=p.device)
                if restored[k]._data is array:
                    restored[k]._data = array.copy()
            for k, old in previous.get(p, {}).items():
                # state that a compiled step (gg.function) reads keeps its Variable: load the value into it
                if isinstance(old, Variable) and k in restored:
                    value = restored[k]
                    old._data = (value._data if isinstance(value, Tensor) else
                                namespace_of(old._data).asarray(value, dtype=old.dtype))
                    restored[k] = old
            self.state[p] = restored
        for saved, group in zip(groups, self.param_groups):
            for k, v in saved.items():
                if k != "params":
                    group[k] = copy.deepcopy(v)

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"

    # ---- subclass hooks -----------------------------------------------------------------------------------
    def _check_group(self, group: dict) -> None:
        """Validate a group's hyperparameters (raise ``ValueError``)."""
        lr = group.get("lr")
        if isinstance(lr, (int, float)) and lr < 0.0:
            raise ValueError(f"{type(self).__name__}: invalid learning rate {lr}: it must be >= 0")

    def _zero_state_is_exact(self, group: dict) -> bool:
        """Whether state the rule creates at its first update (``_init_state`` leaves it out) may start
        at zeros instead, with the later-step formula giving the first update exactly. A compiled step
        then computes one formula, not both and a choice between them."""
        return False

    def _switches(self, group: dict) -> dict:
        """The hyperparameters of a group that switch optional state on (see ``rules.STATE``)."""
        return {}

    def _init_state(self, param: Tensor, group: dict) -> dict:
        """A new parameter's state: the rule's initial tensors (and ``step = 0`` if it counts steps)."""
        xp = namespace_of(param._data)
        state = {}
        if self.rule in rules.NEEDS_STEP:
            state["step"] = 0
        for name, initial in rules.state_for(self.rule, **self._switches(group)).items():
            state[name] = Tensor._wrap(xp.full(param.shape, initial, dtype=param.dtype))
        return state

    def _grad_of(self, param: Tensor, group: dict, detach: bool = True, grad: Optional[Tensor] = None) -> Tensor:
        """The gradient the rule sees: ``param.grad`` (or ``grad``; detached, in the parameter's dtype),
        negated with ``maximize``."""
        grad = param.grad if grad is None else grad
        if tuple(grad.shape) != tuple(param.shape):
            raise ShapeError(f"{type(self).__name__}.step: a parameter of shape {tuple(param.shape)} has a gradient "
                             f"of shape {tuple(grad.shape)}")
        if detach:
            grad = grad.detach()
        if grad.dtype != param.dtype:
            grad = astype(grad, param.dtype)
        return neg(grad) if group.get("maximize") else grad

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> Tensor:
        """The new value of ``param``; updates ``state`` in the dict."""
        raise NotImplementedError


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


def _check_nonnegative(owner: str, group: dict, *names: str) -> None:
    for name in names:
        value = group.get(name)
        if isinstance(value, (int, float)) and value < 0.0:
            raise ValueError(f"{owner}: invalid {name} {value}: it must be >= 0")


__all__ = ["Optimizer", "required"]
