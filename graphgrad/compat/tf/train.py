"""``tf.train``: the TF1 optimizers (``minimize(loss, global_step, var_list)``), ``Saver`` (with
``max_to_keep`` and a ``checkpoint`` file for ``latest_checkpoint``), the global step and learning-rate
schedules. The optimizers are graphgrad's graph optimizers (``gg.train``) with TF1's argument order; their
update rules are graphgrad's shared ones (``gg.optim.rules``)."""
from __future__ import annotations

import math
import os
import types
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import graph_state, in_graph, int64

_rules = _gg.optim.rules


class _TFOrder:
    """TF1's ``minimize(loss, global_step=None, var_list=None, ...)`` argument order."""

    def minimize(self, loss: Any, global_step: Any = None, var_list: Any = None, gate_gradients: Any = 1,
                 aggregation_method: Any = None, colocate_gradients_with_ops: Any = False, name: Optional[str] = None,
                 grad_loss: Any = None):
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step=global_step, name=name)

    def compute_gradients(self, loss: Any, var_list: Any = None, gate_gradients: Any = 1, aggregation_method: Any = None,
                          colocate_gradients_with_ops: Any = False, grad_loss: Any = None) -> list:
        graph = loss._node.graph if isinstance(getattr(loss, "_node", None), _gg.GraphNode) else None
        reads = graph_state(graph).get("control_reads") if graph is not None else None
        if reads:  # inside tf.control_dependencies: the gradients of the reads the loss was built from
            with graph.as_default():
                var_list = list(_gg.trainable_variables() if var_list is None else var_list)
                grads = _gg.gradients(loss, [reads[-1].get(id(v), v) for v in var_list])
            return list(zip(grads, var_list))
        return super().compute_gradients(loss, None if var_list is None else list(var_list))

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None, name: Optional[str] = None):
        return super().apply_gradients(list(grads_and_vars), global_step=global_step, name=name)


class Optimizer(_TFOrder, _gg.train.Optimizer):
    """The base class (graphgrad's ``gg.train.Optimizer`` with TF1's ``minimize`` argument order)."""


class GradientDescentOptimizer(_TFOrder, _gg.train.GradientDescentOptimizer):
    def __init__(self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent") -> None:
        super().__init__(learning_rate, name=name)


class MomentumOptimizer(_TFOrder, _gg.train.MomentumOptimizer):
    def __init__(self, learning_rate: Any, momentum: Any, use_locking: bool = False, name: str = "Momentum",
                 use_nesterov: bool = False) -> None:
        super().__init__(learning_rate, momentum, use_nesterov=use_nesterov, name=name)


class AdamOptimizer(_TFOrder, _gg.train.AdamOptimizer):
    """Adam; epsilon is applied as PyTorch does (see ``gg.train.AdamOptimizer``)."""

    def __init__(self, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-08,
                 use_locking: bool = False, name: str = "Adam") -> None:
        super().__init__(learning_rate, beta1, beta2, epsilon, name=name)


class RMSPropOptimizer(_TFOrder, _gg.train.RMSPropOptimizer):
    """RMSProp; PyTorch's formula (see ``gg.train.RMSPropOptimizer`` for how it differs from TF1's)."""

    def __init__(self, learning_rate: Any, decay: float = 0.9, momentum: float = 0.0, epsilon: float = 1e-10,
                 use_locking: bool = False, centered: bool = False, name: str = "RMSProp") -> None:
        super().__init__(learning_rate, decay, momentum, epsilon, centered, name=name)


class AdagradOptimizer(_TFOrder, _gg.train.Optimizer):
    """Adagrad as TF1 has it: the squared-gradient sum starts at ``initial_accumulator_value`` and there is
    no epsilon (``var -= lr * g / sqrt(accum)``), through graphgrad's shared rule ``rules.adagrad``."""

    rule = "adagrad"

    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1, use_locking: bool = False,
                 name: str = "Adagrad") -> None:
        super().__init__(learning_rate, name)
        self._initial = float(initial_accumulator_value)

    def _switches(self) -> dict:
        return {"initial_accumulator_value": self._initial}

    def _update(self, var, grad, state, lr, step):
        new_var, state_sum = _rules.adagrad(var, grad, state["state_sum"], step, lr, eps=0.0)
        return new_var, {"state_sum": state_sum}


# ---- the global step --------------------------------------------------------------------------------------
def get_global_step(graph: Any = None):
    """The global step variable of the (default) graph, or ``None``."""
    state = graph_state(graph)
    found = state["collections"].get("global_step")
    if found:
        return found[0]
    for v in (graph or _gg.get_default_graph()).variables():
        if v.base_name == "global_step":
            return v
    return None


def create_global_step(graph: Any = None):
    if get_global_step(graph) is not None:
        raise ValueError("create_global_step: a global step already exists")
    from graphgrad.compat.tf import Variable

    graph = graph or _gg.get_default_graph()
    with graph.as_default():
        step = Variable(0, trainable=False, name="global_step", dtype=int64)
    graph_state(graph)["collections"]["global_step"] = [step]
    return step


def get_or_create_global_step(graph: Any = None):
    """The int64 ``global_step`` variable (not trainable) of the graph, made on first use."""
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    return int(sess.run(global_step_tensor))


# ---- learning-rate schedules: graph tensors of the global step ---------------------------------------------
def _step(step: Any):
    return _gg.astype(step, _gg.float32)


@in_graph
def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False):
    """``learning_rate * decay_rate ** (global_step / decay_steps)`` (the exponent floored when
    ``staircase``), evaluated when the graph runs."""
    p = _step(global_step) / decay_steps
    if staircase:
        p = _gg.floor(p)
    return learning_rate * _gg.pow(_gg.astype(_gg.constant(decay_rate), _gg.float32), p)


@in_graph
def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False):
    p = _step(global_step) / decay_steps
    if staircase:
        p = _gg.floor(p)
    return learning_rate / (1 + decay_rate * p)


@in_graph
def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False):
    p = _step(global_step) / decay_steps
    if staircase:
        p = _gg.floor(p)
    return learning_rate * _gg.exp(-decay_rate * p)


@in_graph
def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any, end_learning_rate: float = 0.0001,
                     power: float = 1.0, cycle: bool = False):
    step = _gg.minimum(_step(global_step), float(decay_steps))
    return (learning_rate - end_learning_rate) * _gg.pow(1 - step / decay_steps, power) + end_learning_rate


@in_graph
def cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, alpha: float = 0.0):
    step = _gg.minimum(_step(global_step), float(decay_steps))
    cosine = 0.5 * (1 + _gg.cos(math.pi * step / decay_steps))
    return learning_rate * ((1 - alpha) * cosine + alpha)


@in_graph
def piecewise_constant(x: Any, boundaries: list, values: list):
    """``values[0]`` while ``x <= boundaries[0]``, ``values[1]`` while ``x <= boundaries[1]``, ...,
    ``values[-1]`` after the last boundary."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("piecewise_constant: values must have one more entry than boundaries")
    dtype = _gg.float32 if all(isinstance(v, (int, float)) for v in values) else None
    out = _gg.constant(values[-1], dtype=dtype)
    for boundary, value in zip(reversed(boundaries), reversed(values[:-1])):
        out = _gg.where(x <= boundary, _gg.constant(value, dtype=out.dtype), out)
    return out


# ---- Saver --------------------------------------------------------------------------------------------------
class CheckpointState:
    """What ``get_checkpoint_state`` reads from a directory's ``checkpoint`` file."""

    def __init__(self, model_checkpoint_path: str, all_model_checkpoint_paths: list) -> None:
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = all_model_checkpoint_paths


def _state_path(folder: str) -> str:
    return os.path.join(folder or ".", "checkpoint")


def _write_state(folder: str, latest: str, paths: list) -> None:
    lines = [f'model_checkpoint_path: "{os.path.basename(latest)}"']
    lines += [f'all_model_checkpoint_paths: "{os.path.basename(p)}"' for p in paths]
    target = _state_path(folder)
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, target)


def get_checkpoint_state(checkpoint_dir: str, latest_filename: Any = None) -> Optional[CheckpointState]:
    """The ``checkpoint`` file that ``Saver.save`` keeps in ``checkpoint_dir``, or ``None``."""
    path = _state_path(checkpoint_dir)
    if not os.path.exists(path):
        return None
    latest, paths = None, []
    with open(path) as f:
        for line in f:
            key, _, value = line.partition(":")
            value = os.path.join(checkpoint_dir, value.strip().strip('"'))
            if key.strip() == "model_checkpoint_path":
                latest = value
            elif key.strip() == "all_model_checkpoint_paths":
                paths.append(value)
    return None if latest is None else CheckpointState(latest, paths)


def latest_checkpoint(checkpoint_dir: str, latest_filename: Any = None) -> Optional[str]:
    """The prefix of the newest checkpoint ``Saver.save`` wrote in ``checkpoint_dir``, or ``None``."""
    state = get_checkpoint_state(checkpoint_dir)
    return None if state is None else state.model_checkpoint_path


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    return os.path.exists(checkpoint_prefix + ".json")


class Saver:
    """``tf.train.Saver(var_list=None, max_to_keep=5)``: ``save(sess, path, global_step)`` writes
    ``path[-step].json`` and ``.npz`` (graphgrad's graph format, ``gg.train.Saver``) and returns that
    prefix; only the newest ``max_to_keep`` checkpoints are kept (all with ``None`` or 0)."""

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False, max_to_keep: Any = 5,
                 keep_checkpoint_every_n_hours: float = 10000.0, name: Any = None, **kwargs) -> None:
        if isinstance(var_list, dict):
            var_list = list(var_list.values())
        self._saver = _gg.train.Saver(None if var_list is None else list(var_list))
        self.max_to_keep = max_to_keep
        self.last_checkpoints: list = []

    def save(self, sess: Any, save_path: str, global_step: Any = None, latest_filename: Any = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True, **kwargs) -> str:
        if global_step is not None:
            step = global_step if isinstance(global_step, int) else int(sess.run(global_step))
            save_path = f"{save_path}-{step}"
        folder = os.path.dirname(save_path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        try:
            self._saver.save(sess, save_path)
        except _gg.GraphError as error:
            if "cannot be rebuilt" not in str(error):
                raise
            # a graph with loops or branches decided when run (tf.while_loop, tf.cond) cannot be written
            # whole: write the variables' values alone (what restore reads), named as in the graph
            self._saver.save(types.SimpleNamespace(graph=self._variables_graph(sess.graph)), save_path)
        if save_path in self.last_checkpoints:
            self.last_checkpoints.remove(save_path)
        self.last_checkpoints.append(save_path)
        while self.max_to_keep and len(self.last_checkpoints) > self.max_to_keep:
            old = self.last_checkpoints.pop(0)
            for suffix in (".json", ".npz"):
                if os.path.exists(old + suffix):
                    os.remove(old + suffix)
        if write_state:
            _write_state(folder, save_path, self.last_checkpoints)
        return save_path

    def _variables_graph(self, graph: Any) -> Any:
        """A graph holding only reads of the saved variables, each named as its read in ``graph``."""
        variables = graph.variables() if self._saver.var_list is None else self._saver.var_list
        alone = _gg.Graph()
        for v in variables:
            node, name = alone.read_variable(v)._node, graph.read_variable(v)._node.name
            if node.name != name:
                alone.rename(node, name)
        return alone

    def restore(self, sess: Any, save_path: str) -> None:
        if save_path is None:
            raise ValueError("Saver.restore: save_path is None (no checkpoint found?)")
        self._saver.restore(sess, save_path)

    def recover_last_checkpoints(self, checkpoint_paths: list) -> None:
        self.last_checkpoints = list(checkpoint_paths)


__all__ = ["GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer", "RMSPropOptimizer", "AdagradOptimizer",
           "Optimizer", "Saver", "get_global_step", "create_global_step", "get_or_create_global_step",
           "exponential_decay", "inverse_time_decay", "natural_exp_decay", "polynomial_decay", "cosine_decay",
           "piecewise_constant", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists"]


class AdadeltaOptimizer(_TFOrder, _gg.train.Optimizer):
    """Adadelta as TF1 has it (``rules.adadelta``: the learning rate scales the update; TF1's defaults
    ``learning_rate=0.001, rho=0.95, epsilon=1e-8``)."""

    rule = "adadelta"

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.95, epsilon: float = 1e-08, use_locking: bool = False,
                 name: str = "Adadelta") -> None:
        super().__init__(learning_rate, name)
        self._rho, self._eps = float(rho), float(epsilon)

    def _update(self, var, grad, state, lr, step):
        new_var, square_avg, acc_delta = _rules.adadelta(var, grad, state["square_avg"], state["acc_delta"], lr,
                                                         rho=self._rho, eps=self._eps)
        return new_var, {"square_avg": square_avg, "acc_delta": acc_delta}
