"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterable, Iterator, Optional, Union

from graphgrad.core.tensor import Tensor
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter


__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class _Ordered(Module):
    """Modules kept in order under the names "0", "1", ...: append, extend, len, iteration."""

    def append(self, module: Module) -> "_Ordered":
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "_Ordered":
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> "_Ordered":
        """Put ``module`` before position ``index`` (negative counts from the end); renumbers."""
        modules = list(self._modules.values())
        n = len(modules)
        if not -n <= index <= n:
            raise IndexError(f"{type(self).__name__}.insert: index {index} out of range for length {n}")
        modules.insert(index % (n + 1) if index < 0 else index, module)
        self._renumber(modules)
        return self

    def pop(self, index: Union[int, slice] = -1) -> Module:
        """Remove and return the module at ``index``; renumbers."""
        module = self[index]
        del self[index]
        return module

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[index]
        self.add_module(key, module)

    def __delitem__(self, index: Union[int, slice]) -> None:
        modules = list(self._modules.values())
        del modules[index]
        self._renumber(modules)

    def _renumber(self, modules: list) -> None:
        """Keep the modules under the names "0", "1"... (as PyTorch after a deletion or insertion)."""
        for key in list(self._modules):
            del self._modules[key]
        for i, module in enumerate(modules):
            self.add_module(str(i), module)

    def __add__(self, other: "_Ordered") -> "_Ordered":
        return type(self)(*list(self), *list(other)) if isinstance(self, Sequential) else \
            type(self)(list(self) + list(other))

    def __iadd__(self, other: Iterable[Module]) -> "_Ordered":
        return self.extend(other)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class Sequential(_Ordered):
    """Modules applied one after the other: ``Sequential(a, b)(x) == b(a(x))``.

    Also accepts an ``OrderedDict`` of named modules. Supports ``len``, indexing, slicing and
    iteration.
    """

    def __init__(self, *modules: Union[Module, "OrderedDict[str, Module]"]) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index):
        items = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        return items[index][1]


class ModuleList(_Ordered):
    """A list of modules, registered so their parameters are found."""

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        for module in modules or ():
            self.append(module)

    def __getitem__(self, index):
        values = list(self._modules.values())
        return ModuleList(values[index]) if isinstance(index, slice) else values[index]


class ModuleDict(Module):
    """A dict of modules by name, registered so their parameters are found."""

    def __init__(self, modules: Optional[dict] = None) -> None:
        super().__init__()
        for name, module in (modules or {}).items():
            self[name] = module

    def __setitem__(self, name: str, module: Module) -> None:
        self.add_module(name, module)

    def __getitem__(self, name: str) -> Module:
        return self._modules[name]

    def __contains__(self, name: str) -> bool:
        return name in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def __delitem__(self, name: str) -> None:
        del self._modules[name]

    def update(self, modules) -> None:
        """Add or replace modules from a mapping or from ``(name, module)`` pairs."""
        for name, module in (modules.items() if hasattr(modules, "items") else modules):
            self[name] = module

    def pop(self, name: str) -> Module:
        module = self._modules[name]
        del self._modules[name]
        return module

    def clear(self) -> None:
        self._modules.clear()


def _as_parameter(value) -> Parameter:
    """A tensor becomes a Parameter (as PyTorch's containers do); a Parameter stays."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"parameter containers hold tensors, got {type(value).__name__}")


class ParameterList(Module):
    """A list of parameters registered under "0", "1", ... (``state_dict`` keys ``name.0``...)."""

    def __init__(self, values: Optional[Iterable] = None) -> None:
        super().__init__()
        for value in values or ():
            self.append(value)

    def append(self, value) -> "ParameterList":
        self.register_parameter(str(len(self._parameters)), _as_parameter(value))
        return self

    def extend(self, values: Iterable) -> "ParameterList":
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index):
        values = list(self._parameters.values())
        return ParameterList(values[index]) if isinstance(index, slice) else values[index]

    def __setitem__(self, index: int, value) -> None:
        self.register_parameter(str(index % len(self)), _as_parameter(value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())


class ParameterDict(Module):
    """A dict of parameters by name (``state_dict`` keys ``name.key``)."""

    def __init__(self, parameters: Optional[dict] = None) -> None:
        super().__init__()
        for name, value in (parameters or {}).items():
            self[name] = value

    def __setitem__(self, name: str, value) -> None:
        self.register_parameter(name, _as_parameter(value))

    def __getitem__(self, name: str) -> Parameter:
        return self._parameters[name]

    def __delitem__(self, name: str) -> None:
        del self._parameters[name]

    def __contains__(self, name: str) -> bool:
        return name in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def update(self, parameters: dict) -> None:
        for name, value in dict(parameters).items():
            self[name] = value
