"""Parameter: a trainable tensor of a Module. It is the static-graph ``Variable``, so a module's
parameters are read by graph nodes when the module is applied to graph tensors."""
from __future__ import annotations

from typing import Any

from graphgrad.graph.variables import Variable


class Parameter(Variable):
    """A tensor that a :class:`Module` registers as one of its parameters.

    Args:
        data: the initial value (array, list or Tensor; copied).
        requires_grad: whether it is trained (``False`` for frozen parameters).

    Examples:
        >>> w = gg.nn.Parameter(gg.randn(3, 4))
        >>> w.requires_grad, w.shape
        (True, (3, 4))
    """

    __slots__ = ()
    graph_collected = False  # joins a graph's collections only when a graph reads it

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        super().__init__(data, trainable=requires_grad)
        if not requires_grad:
            self.requires_grad = False

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super(Variable, self).__repr__()


class Buffer(Variable):
    """A module's state that is saved but not trained (BatchNorm's running statistics).

    It is a Variable, so a graph built from the module (``gg.function`` included) reads it when it
    runs and can update it with assign nodes; eagerly it is an ordinary tensor. Assigning one to a
    module attribute registers it as a buffer (PyTorch's ``nn.Buffer``), in ``state_dict`` unless
    ``persistent=False``.
    """

    __slots__ = ("persistent",)
    graph_collected = False

    def __init__(self, data: Any, persistent: bool = True) -> None:
        super().__init__(data, trainable=False)
        self.persistent = bool(persistent)
