"""Module: PyTorch's registration contract, kept small.

Assigning a :class:`Parameter` or a :class:`Module` to an attribute registers it; buffers (state
that is saved but not trained, like BatchNorm's running statistics) are registered with
:meth:`Module.register_buffer`. Everything else (``parameters()``, ``state_dict()``, ``train()``...)
walks these three registries.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator, NamedTuple, Optional

from graphgrad.core.autograd import note_inplace_write
from graphgrad.core.tensor import RemovableHandle, Tensor, dtype_and_device, to_array
from graphgrad.dtypes import as_dtype
from graphgrad.errors import ShapeError
from graphgrad.nn.parameter import Buffer, Parameter


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` found: the model's keys the state dict lacked, and its extra keys."""

    missing_keys: list
    unexpected_keys: list


class Module:
    """Base class of layers and models: subclass it, create parameters and submodules in
    ``__init__``, and compute in ``forward``.

    Examples:
        >>> class Net(gg.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = gg.nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return gg.relu(self.fc(x))
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())

    # ---- registration -------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() is called: "
                                 "call super().__init__() first in your module's __init__")
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry and not isinstance(value, (Parameter, Module)) and registry is not self._buffers:
                if value is None:
                    registry[name] = None
                    return
                raise TypeError(f"cannot assign {type(value).__name__} as {name!r}: it is a registered "
                                f"{'parameter' if registry is self._parameters else 'submodule'}")
        if isinstance(value, Parameter):
            self._remove(name, keep=self._parameters)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._remove(name, keep=self._modules)
            self._modules[name] = value
        elif isinstance(value, Buffer) and name not in self._buffers:
            self.register_buffer(name, value, persistent=getattr(value, "persistent", True))
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"buffer {name!r} must be a Tensor or None, got {type(value).__name__}")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: look in the registries
        for registry in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__.get(registry)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute, parameter, buffer or submodule {name!r}")

    def __delattr__(self, name: str) -> None:
        if not self._remove(name):
            object.__delattr__(self, name)

    def _remove(self, name: str, keep: Optional[dict] = None) -> bool:
        """Drop ``name`` from the registries (all but ``keep``: a submodule or parameter assigned again
        keeps its place, so ``children()`` and ``state_dict()`` keep their order, as in PyTorch)."""
        found = False
        for table in (self._parameters, self._buffers, self._modules):
            if name in table and table is not keep:
                del table[name]
                found = True
        self._persistent.discard(name)
        if name in self.__dict__:
            object.__delattr__(self, name)
            found = True
        return found

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Register ``param`` (or ``None``, a declared but absent parameter such as a missing bias)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r}: wrap it in "
                            "gg.nn.Parameter")
        self._remove(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """Register a non-trained tensor saved in ``state_dict`` (unless ``persistent=False``)."""
        self._remove(name)
        self._buffers[name] = tensor
        if persistent:
            self._persistent.add(name)

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Register ``module`` as the submodule ``name`` (one registered again keeps its place)."""
        self._remove(name, keep=self._modules)
        self._modules[name] = module

    # ---- computing --------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        hooked = self.__dict__.get("_forward_pre_hooks") or self.__dict__.get("_forward_hooks") or \
            self.__dict__.get("_backward_hooks")
        if not hooked:  # the common case, kept to one dict lookup per hook kind
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        with_kwargs_keys = self.__dict__.get("_forward_pre_hooks_with_kwargs") or ()
        for key, hook in list(self._forward_pre_hooks.items()):
            with_kwargs = key in with_kwargs_keys
            result = hook(self, args, kwargs) if with_kwargs else hook(self, args)
            if result is not None:
                if with_kwargs:
                    args, kwargs = result
                else:
                    args = result if isinstance(result, tuple) else (result,)
        if self._backward_hooks:
            args = self._watch_inputs(args)
        out = self.forward(*args, **kwargs)
        with_kwargs_keys = self.__dict__.get("_forward_hooks_with_kwargs") or ()
        for key, hook in list(self._forward_hooks.items()):
            result = hook(self, args, kwargs, out) if key in with_kwargs_keys else hook(self, args, out)
            if result is not None:
                out = result
        if self._backward_hooks:
            self._watch_outputs(out)
        return out

    # -- full backward hooks: grad_output is caught on the outputs, grad_input on copies of the inputs --
    def _watch_inputs(self, args: tuple) -> tuple:
        from graphgrad.ops.array import identity

        watched = [identity(a) if isinstance(a, Tensor) and a.requires_grad else a for a in args]
        record = {"inputs": watched, "grad_input": [None] * len(watched), "pending": 0, "grad_output": None}
        object.__setattr__(self, "_backward_record", record)
        for i, a in enumerate(watched):
            if isinstance(a, Tensor) and a.requires_grad:
                record["pending"] += 1
                a.register_hook(self._input_grad_hook(record, i))
        return tuple(watched)

    def _input_grad_hook(self, record: dict, i: int):
        def hook(grad):
            record["grad_input"][i] = grad
            record["pending"] -= 1
            if record["pending"] == 0:
                grad_input = tuple(record["grad_input"])
                for fn in list(self._backward_hooks.values()):
                    result = fn(self, grad_input, record["grad_output"] or ())
                    if result is not None:
                        grad_input = tuple(result)
                return grad_input[i] if grad_input[i] is not grad else None
            return None

        return hook

    def _watch_outputs(self, out) -> None:
        record = self.__dict__.get("_backward_record")
        outputs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, Tensor)]
        grads = [None] * len(outputs)
        record["grad_output"] = tuple(grads)
        for j, o in enumerate(outputs):
            if o.requires_grad:
                def hook(grad, j=j):
                    grads[j] = grad
                    record["grad_output"] = tuple(grads)
                o.register_hook(hook)
        if record["pending"] == 0:  # no input needs grad: call the hooks when the outputs' grads arrive
            def late(grad):
                for fn in list(self._backward_hooks.values()):
                    fn(self, (None,) * len(record["inputs"]), record["grad_output"])
            for o in outputs:
                if o.requires_grad:
                    o.register_hook(late)
                    break

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False):
        """Call ``hook(module, args)`` (``with_kwargs``: ``hook(module, args, kwargs)``) before every
        forward; a returned value replaces the arguments. Returns a handle with ``remove()``."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              self._hook_table("_forward_pre_hooks_with_kwargs") if with_kwargs else None)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """Call ``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs, output)``)
        after every forward; a returned value replaces the output. Returns a handle with ``remove()``."""
        return self._add_hook(self._forward_hooks, hook, prepend,
                              self._hook_table("_forward_hooks_with_kwargs") if with_kwargs else None)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False):
        """Call ``hook(module, grad_input, grad_output)`` in backward once the gradients of the module's
        tensor inputs are known; a returned tuple replaces ``grad_input``. Returns a handle."""
        return self._add_hook(self._backward_hooks, hook, prepend)

    register_backward_hook = register_full_backward_hook

    # ---- state-dict hooks (PyTorch's; a model renames keys of old checkpoints with them) ----------
    def _hook_table(self, name: str) -> OrderedDict:
        table = self.__dict__.get(name)
        if table is None:
            table = OrderedDict()
            object.__setattr__(self, name, table)
        return table

    def register_state_dict_pre_hook(self, hook: Callable):
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict()`` collects this module."""
        return self._add_hook(self._hook_table("_state_dict_pre_hooks"), hook, False)

    def register_state_dict_post_hook(self, hook: Callable):
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict()``; it may change
        the dict in place."""
        return self._add_hook(self._hook_table("_state_dict_hooks"), (hook, False), False)

    def _register_state_dict_hook(self, hook: Callable):
        """PyTorch's older form of :meth:`register_state_dict_post_hook`: a returned dict replaces it."""
        return self._add_hook(self._hook_table("_state_dict_hooks"), (hook, True), False)

    def register_load_state_dict_pre_hook(self, hook: Callable):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before ``load_state_dict()`` reads this module's keys; it may edit ``state_dict``."""
        return self._add_hook(self._hook_table("_load_state_dict_pre_hooks"), (hook, True), False)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False):
        """PyTorch's older form: ``hook(state_dict, prefix, ...)`` (``with_module``: module first)."""
        return self._add_hook(self._hook_table("_load_state_dict_pre_hooks"), (hook, with_module), False)

    def register_load_state_dict_post_hook(self, hook: Callable):
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict()``; it may edit the key lists
        (strict loading then judges what is left)."""
        return self._add_hook(self._hook_table("_load_state_dict_post_hooks"), hook, False)

    _HOOK_IDS = iter(range(1, 1 << 62))

    @staticmethod
    def _add_hook(table: OrderedDict, entry, prepend: bool, flags: Optional[dict] = None):
        """Put ``entry`` in ``table`` under a new id (PyTorch's layout: the hook itself is the value; a hook
        taking keyword arguments is also marked in ``flags``). Returns its handle."""
        key = next(Module._HOOK_IDS)
        table[key] = entry
        if flags is not None:
            flags[key] = True
        if prepend:
            table.move_to_end(key, last=False)

        def remove() -> None:
            table.pop(key, None)
            if flags is not None:
                flags.pop(key, None)

        return RemovableHandle(remove)

    # ---- walking ----------------------------------------------------------------------------------
    def named_modules(self, memo: Optional[set] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple]:
        """``(dotted name, module)`` for this module and every submodule, each once (every path to it
        with ``remove_duplicate=False``)."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple]:
        for name, child in self._modules.items():
            if child is not None:
                yield name, child

    def children(self) -> Iterator["Module"]:
        for _, child in self.named_children():
            yield child

    def _named(self, registry: str, prefix: str, recurse: bool) -> Iterator[tuple]:
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple]:
        """``(dotted name, Parameter)`` pairs, each parameter once (shared ones too)."""
        return self._named("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple]:
        return self._named("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def num_parameters(self, trainable_only: bool = False) -> int:
        """How many scalar parameters the module has."""
        return sum(p.size for p in self.parameters() if p.requires_grad or not trainable_only)

    # ---- modes and updates ---------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (dropout active, batch norm uses batch statistics) here and below."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = Tensor._wrap(p.grad._data * 0)

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args, dtype=None, device: Optional[str] = None, memory_format=None,
           non_blocking: bool = False) -> "Module":
        """Convert floating-point parameters and buffers to ``dtype`` and/or move everything to
        ``device`` (in place), PyTorch's ``module.to(device)``, ``to(dtype)``, ``to(device, dtype)``
        or ``to(tensor)``. A device is a string (``"cpu"``, ``"cuda:0"``) or an object whose ``str()``
        is one. ``memory_format`` and ``non_blocking`` are accepted for PyTorch programs and change
        nothing (NumPy lays arrays out itself). Returns self."""
        from graphgrad import backend

        dtype, device = dtype_and_device(args, dtype, device)
        dtype = None if dtype is None else as_dtype(dtype)
        for t in list(self.parameters()) + list(self.buffers()):
            data = t._data
            if dtype is not None and data.dtype.kind == "f":
                data = data.astype(dtype)
            if device is not None and backend.device_of(data) != device:
                data = backend.to_device(data, device)
            if data is t._data:
                continue
            t._data = data
            note_inplace_write(t, "Module.to()")
            if t.grad is not None:
                t.grad = None
        return self

    def _factory(self, device=None, dtype=None) -> "Module":
        """PyTorch's factory arguments of a layer (``nn.LSTM(..., device=d, dtype=t)``): its parameters
        and buffers made on ``device`` in ``dtype`` (either ``None``: as made). Returns self."""
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)
        return self

    def double(self) -> "Module":
        return self.to(dtype="float64")

    def half(self) -> "Module":
        return self.to(dtype="float16")

    def type(self, dst_type) -> "Module":
        """Convert floating-point parameters and buffers to ``dst_type`` (a dtype)."""
        return self.to(dtype=dst_type)

    def cpu(self) -> "Module":
        return self.to(device="cpu")

    def cuda(self, device: Any = None) -> "Module":
        return self.to(device=f"cuda:{device}" if isinstance(device, int) else (device or "cuda"))

    def to_empty(self, *, device: Any = None, recurse: bool = True) -> "Module":
        """Move to ``device`` (PyTorch leaves the values uninitialized; here they are kept)."""
        return self.to(device=device)

    def share_memory(self) -> "Module":
        """Move every parameter and buffer into memory shared with processes forked later
        (``Tensor.share_memory_``): their in-place updates are then seen by all (Hogwild! training)."""
        for t in list(self.parameters()) + [b for b in self.buffers() if b is not None]:
            t.share_memory_()
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` of every parameter (``False`` freezes the module). Returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def register_module(self, name: str, module: Optional["Module"]) -> None:
        """Alias of :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        module = self
        for part in filter(None, target.split(".")):
            child = module._modules.get(part) if isinstance(module, Module) else None
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no submodule {part!r} (looking up {target!r})")
            module = child
        return module

    def _get_registered(self, registry: str, kind: str, target: str):
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        table = getattr(module, registry)
        if name not in table:
            raise AttributeError(f"{type(module).__name__} has no {kind} {name!r} (looking up {target!r})")
        return table[name]

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        return self._get_registered("_parameters", "parameter", target)

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        return self._get_registered("_buffers", "buffer", target)

    def get_extra_state(self) -> Any:
        raise RuntimeError("get_extra_state: this module saves no extra state")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("set_extra_state: this module takes no extra state")

    def float(self) -> "Module":
        return self.to(dtype="float32")

    # ---- state ----------------------------------------------------------------------------------
    def state_dict(self, *args: Any, destination: Optional[dict] = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by dotted name, a module reached along two paths under
        both names, as PyTorch's: tensors sharing the module's data (the parameters themselves with
        ``keep_vars``), added to ``destination`` when given."""
        if args:  # PyTorch's older positional form, state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
            destination = destination if isinstance(destination, dict) else None
        state: OrderedDict = OrderedDict() if destination is None else destination
        walk = list(self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False))
        for module_prefix, module in walk:
            dot = f"{module_prefix}." if module_prefix else ""
            for hook in module.__dict__.get("_state_dict_pre_hooks", {}).values():
                hook(module, dot, keep_vars)
            for name, p in module._parameters.items():
                if p is not None:
                    state[dot + name] = p if keep_vars else Tensor._wrap(p._data)
            for name, b in module._buffers.items():
                if b is not None and name in module._persistent:
                    state[dot + name] = b if keep_vars else Tensor._wrap(b._data)
        for module_prefix, module in reversed(walk):  # innermost first, as PyTorch's recursion
            for hook, may_replace in module.__dict__.get("_state_dict_hooks", {}).values():
                result = hook(module, state, f"{module_prefix}." if module_prefix else "", {})
                state = result if may_replace and result is not None else state
        return state

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False) -> "IncompatibleKeys":
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        With ``strict`` every key must match: missing and unexpected keys and shape mismatches are
        all listed in one error, and nothing is changed. Returns ``IncompatibleKeys(missing_keys,
        unexpected_keys)`` (a named pair, as PyTorch's). ``assign`` is accepted (values are copied).
        """
        targets = OrderedDict()
        walk = list(self.named_modules(remove_duplicate=False))
        if any(m.__dict__.get("_load_state_dict_pre_hooks") for _, m in walk):
            state_dict = OrderedDict(state_dict)  # the hooks may edit it; the caller's stays as it was
            for module_prefix, module in walk:
                dot = f"{module_prefix}." if module_prefix else ""
                for hook, with_module in module.__dict__.get("_load_state_dict_pre_hooks", {}).values():
                    args = (state_dict, dot, {}, strict, [], [], [])
                    hook(module, *args) if with_module else hook(*args)
        for module_prefix, module in walk:
            dot = f"{module_prefix}." if module_prefix else ""
            for registry in (module._parameters, module._buffers):
                for name, t in registry.items():
                    if t is not None and (registry is module._parameters or name in module._persistent):
                        targets[dot + name] = t
        missing = [k for k in targets if k not in state_dict]
        unexpected = [k for k in state_dict if k not in targets]
        result = IncompatibleKeys(missing, unexpected)
        for _, module in walk:
            for hook in module.__dict__.get("_load_state_dict_post_hooks", {}).values():
                hook(module, result)  # (PyTorch calls them after loading; the key lists are known now)
        values, mismatched = {}, []
        for key, target in targets.items():
            if key in state_dict:
                value = to_array(state_dict[key], device=target.device)  # (the parameter stays on its device)
                if tuple(value.shape) != tuple(target.shape):
                    mismatched.append(f"{key}: checkpoint {tuple(value.shape)} vs model {tuple(target.shape)}")
                values[key] = value
        problems = []
        if strict and missing:
            problems.append(f"missing keys: {missing}")
        if strict and unexpected:
            problems.append(f"unexpected keys: {unexpected}")
        if mismatched:
            problems.append("shape mismatches: " + "; ".join(mismatched))
        if problems:
            raise ShapeError(f"load_state_dict for {type(self).__name__} failed:\n  " + "\n  ".join(problems))
        for key, value in values.items():
            target = targets[key]
            target._data = value.astype(target.dtype, copy=True)
            note_inplace_write(target, "load_state_dict()")
        return result

    # ---- display ---------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """What to show between the parentheses of this module's repr (its settings)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            text = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        body = "\n  ".join(([extra] if extra else []) + lines)
        return f"{type(self).__name__}(\n  {body}\n)"
