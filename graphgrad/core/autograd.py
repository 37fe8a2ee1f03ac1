"""Reverse-mode autodiff: one iterative walk serves ``backward()``, ``grad()`` and higher orders.

Each op output made while gradients are enabled carries a :class:`Node` (the op, its inputs, its
output array). The walk sorts the nodes reachable from the outputs topologically with an explicit
stack (a 100,000-op chain does not hit Python's recursion limit), then calls each op's
``backward(inputs, out, g)``. Gradient rules are written in graphgrad ops, so with
``create_graph=True`` the backward pass is itself recorded and can be differentiated again.
Broadcasting is undone here, once, for every op: a gradient whose shape differs from its input's is
summed back to it (``sum_to``).
"""
from __future__ import annotations

import contextlib
import threading
import heapq
import itertools
import weakref
from typing import Any, Optional, Sequence

from graphgrad import config
from graphgrad.core.profiler import PROFILER, profile_span
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GradError, NonFiniteError, ShapeError


_SEQUENCE = itertools.count()
#: id(leaf) -> (weak reference to the leaf, [hooks]): hooks called once per backward walk, after the
#: leaf's ``.grad`` holds every contribution of that walk (``register_post_accumulate_grad_hook``).
_POST_ACCUMULATE: dict = {}
#: Callbacks queued (``queue_callback``) during the running walk, called when it ends; one list per
#: nested walk.
_CALLBACKS: list = []


class Node:
    """How a tensor was made: ``op`` applied to ``inputs`` gave the array ``out``."""

    __slots__ = ("op", "inputs", "out", "seq", "_hooks", "retained", "__weakref__")

    def __init__(self, op, inputs: tuple, out) -> None:
        # Creation order is a topological order: a node's inputs always exist before it.
        self.seq = next(_SEQUENCE)
        self.op = op
        self.inputs = inputs
        self.out = out
        self._hooks = None
        self.retained = None

    def __repr__(self) -> str:
        return f"<Node {self.op!r}>"


# ---- in-place writes after a value was saved for backward (PyTorch's version counters) -------------------
class _InplaceWrites:
    """When memory was last written in place, on the clock of node creation (``Node.seq``).

    Instead of a counter on every tensor (a cost on every op), a write stamps the array's memory
    (the root of its views, so a ``detach()`` or a slice shares the stamp, as PyTorch's views share a
    version counter) or the tensor it rebinds (``x.data = new``). A node's saved values changed
    since it was made iff a stamp is newer than the node; ``last`` lets backward skip the check
    entirely when nothing was written since the oldest node it visits (every ordinary training step).
    """

    def __init__(self) -> None:
        self.stamps: dict = {}  # id(root array or tensor) -> (weak reference or the object, stamp, how)
        self.last = -1
        #: bumped by every in-place write and by every Session run that assigns variables: a Session
        #: plan keeps what it computed from variables alone while this has not changed (session.py)
        self.epoch = 0

    def note(self, target, how: Optional[str]) -> None:
        key_object = target if isinstance(target, Tensor) else _memory_root(target)
        key = id(key_object)
        stamp = next(_SEQUENCE)
        entry = self.stamps.get(key)
        if entry is not None and _deref(entry[0]) is key_object:
            self.stamps[key] = (entry[0], stamp, how)
        else:
            try:
                ref = weakref.ref(key_object, lambda _, key=key, stamps=self.stamps: stamps.pop(key, None))
            except TypeError:  # (a root that takes no weak reference: kept alive, rare)
                ref = key_object
            self.stamps[key] = (ref, stamp, how)
        self.last = stamp
        self.epoch += 1

    def stamp_of(self, obj) -> tuple:
        entry = self.stamps.get(id(obj))
        if entry is None or _deref(entry[0]) is not obj:
            return -1, None
        return entry[1], entry[2]


def _deref(ref):
    return ref() if isinstance(ref, weakref.ref) else ref


def _memory_root(array):
    """The array owning the memory ``array`` views (NumPy and CuPy keep ``base`` pointing at it)."""
    while True:
        base = getattr(array, "base", None)
        if base is None or not hasattr(base, "shape"):
            return array
        array = base


INPLACE_WRITES = _InplaceWrites()


def note_inplace_write(target, how: Optional[str] = None) -> None:
    """Record that ``target`` changed in place: a backend array (every view of its memory counts as
    written) or a Tensor whose ``.data`` was replaced. Backward then refuses nodes that saved it
    before the write. ``how`` names the writer for the error (e.g. ``"the optimizer step"``).

    Every graphgrad path that writes a tensor in place calls this: ``x[i] = v``, ``x.add_(...)``,
    ``zero_``, optimizer steps, ``load_state_dict``, checkpoint loads."""
    if target is not None:
        INPLACE_WRITES.note(target, how)


#: id(tensor) -> (weak reference to it, [(until, earlier version)]): the versions in-place ops replaced
#: while recorded ops still referred to the tensor (the entry goes with the tensor). ``until`` is the
#: node clock at the replacement: a node made before it reads the earlier version in backward.
_VERSIONS: dict = {}


def _history(x: Tensor) -> Optional[list]:
    entry = _VERSIONS.get(id(x))
    return entry[1] if entry is not None and entry[0]() is x else None


def in_place_source(x: Tensor, how: str) -> Tensor:
    """The value of ``x`` before an in-place op that autograd must record (``x += y``, ``x.relu_()``,
    ``x[i] = v`` with ``x`` or the operand requiring grad), as a new tensor with ``x``'s array and
    history: compute the op's result from it, then :func:`rebind_in_place`. Raises ``GradError`` for a
    leaf that requires grad, as PyTorch does."""
    if x.requires_grad and x._node is None:
        raise GradError(f"{how}: a leaf tensor that requires grad can't be used in an in-place operation while "
                        "gradients are recorded; use `with gg.no_grad():` (an optimizer-style update) or write "
                        "out-of-place code")
    return Tensor._wrap(x._data, x._node, x.requires_grad)


def rebind_in_place(x: Tensor, result: Tensor, how: str, source: Optional[Tensor] = None) -> Tensor:
    """Make ``x`` the result of an in-place op computed out of place from ``source`` (its
    :func:`in_place_source`): ``x`` takes ``result``'s array and the node that made it, so gradients flow
    through the op, as PyTorch's do through the new version of ``x``. Ops recorded earlier with ``x`` as
    an input keep the earlier version (``source``: its array, unchanged, and its history) for their
    gradients; views taken of ``x`` before the op keep the old values. Returns ``x``."""
    if result.shape != x.shape:
        raise ShapeError(f"{how}: the result of shape {tuple(result.shape)} does not fit the tensor of shape "
                         f"{tuple(x.shape)} being modified in place")
    if getattr(x, "_used", False):  # recorded ops refer to x: they must still see the version they used
        history = _history(x)
        if history is None:
            key = id(x)
            history = []
            _VERSIONS[key] = (weakref.ref(x, lambda _, key=key: _VERSIONS.pop(key, None)), history)
        history.append((next(_SEQUENCE), source if source is not None else
                        Tensor._wrap(x._data, x._node, x.requires_grad)))
        x._used = False
    x._data = result._data
    x._node = result._node
    x.requires_grad = result.requires_grad
    return x


def _versioned(inputs: tuple, seq: int) -> tuple:
    """``inputs`` of the node made at ``seq``, each tensor an in-place op replaced since then swapped
    for the version that node used."""
    out = None
    for i, x in enumerate(inputs):
        history = _history(x) if isinstance(x, Tensor) else None
        if history:
            for until, earlier in history:
                if seq < until:
                    if out is None:
                        out = list(inputs)
                    out[i] = earlier
                    break
    return inputs if out is None else tuple(out)


def _check_saved(node, inputs: Optional[tuple] = None) -> None:
    """Raise ``GradError`` when a value ``node`` saved for its backward was written in place after
    the node was made (the gradient would silently use the new value)."""
    op = node.op
    saved = getattr(op, "saves_inputs", True)
    inputs = node.inputs if inputs is None else inputs
    inputs = inputs if saved is True else (inputs[saved] if saved else ())
    offset = 0 if saved is True or not saved else (saved.start or 0)
    for position, x in enumerate(inputs, offset):
        if not isinstance(x, Tensor) or x._data is None:
            continue
        for obj in (x, _memory_root(x._data)):
            stamp, how = INPLACE_WRITES.stamp_of(obj)
            if stamp > node.seq:
                raise _modified_error(node, f"input {position}", x, how)
    out = node.out
    if out is not None and out.__class__ is not Tensor:
        stamp, how = INPLACE_WRITES.stamp_of(_memory_root(out))
        if stamp > node.seq:
            raise _modified_error(node, "output", None, how, out)


def _modified_error(node, which: str, tensor, how, array=None) -> GradError:
    array = tensor._data if tensor is not None else array
    described = f"{tensor.name!r}, " if tensor is not None and tensor.name else ""
    described += f"a {array.dtype} tensor of shape {tuple(array.shape)}"
    by = f" by {how}" if how else ""
    site = creation_note(node)
    return GradError(
        f"one of the values needed for gradient computation was modified by an in-place operation: the "
        f"{which} of {node.op.name} ({described}) was written{by} after {node.op.name} saved it for "
        f"backward{site}. Compute the gradient before changing it, or change a copy (x = x.clone()) instead")


# ---- anomaly mode: where each node was made ------------------------------------------------------------
#: node -> (file, line, function, source line) of the user's code that made it; filled only under
#: ``detect_anomaly`` (a weak mapping: it never keeps a graph alive).
CREATION_SITES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def record_creation_site(node) -> None:
    """Remember the user's line that made ``node`` (called for every node under ``detect_anomaly``)."""
    import linecache

    site = user_frame()
    if site is not None:
        filename, line, function = site
        CREATION_SITES[node] = (filename, line, function, linecache.getline(filename, line).strip())


def user_frame() -> Optional[tuple]:
    """(file, line, function) of the innermost frame outside the graphgrad library, or None."""
    import sys

    from graphgrad.core.profiler import _in_library

    frame = sys._getframe(1)
    while frame is not None:
        if not _in_library(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


def creation_note(node) -> str:
    """`` (created at file:line in function: `source`)`` for a node made under ``detect_anomaly``,
    else a hint to turn anomaly mode on."""
    site = CREATION_SITES.get(node)
    if site is None:
        return " (run under gg.detect_anomaly() to see the line that made it)"
    filename, line, function, source = site
    code = f": `{source}`" if source else ""
    return f" (created at {filename}:{line} in {function}{code})"


class ThreadLocalStack(threading.local):
    """A stack of which each thread sees its own (the default-graph stack, the trace stack): one
    thread building a graph or tracing a function leaves the others eager."""

    def __init__(self) -> None:
        self.items: list = []

    def append(self, item) -> None:
        self.items.append(item)

    def pop(self):
        return self.items.pop()

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


class _GradMode(threading.local):
    """The per-thread modes (as PyTorch's grad mode): whether ops record the autograd graph, and
    whether anomaly detection checks every result. Class attributes are each new thread's defaults."""

    enabled = True
    anomaly = False


GRAD_MODE = _GradMode()


class _ModeSwitches:
    """How many mode contexts (``no_grad``, ``enable_grad``, ``detect_anomaly``, ``graph.as_default``)
    are open in any thread. While none is, every thread is in the default modes, and the eager hot
    path reads this one plain attribute instead of the per-thread state."""

    count = 0
    _lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.count += 1

    def exit(self) -> None:
        with self._lock:
            self.count -= 1


MODE_SWITCHES = _ModeSwitches()


def is_grad_enabled() -> bool:
    """Whether ops currently record the autograd graph (in this thread)."""
    return GRAD_MODE.enabled if MODE_SWITCHES.count else True


class set_grad_enabled(contextlib.ContextDecorator):
    """Context manager and decorator that turns graph recording on or off. Called plainly,
    ``gg.set_grad_enabled(False)`` switches the mode at once and leaves it so (PyTorch's too)."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = []
        self.immediate = type(self) is set_grad_enabled  # no_grad()/enable_grad() act only inside `with`
        if self.immediate:  # the mode switches now; `with` restores the previous one at its end
            self.before = GRAD_MODE.enabled
            GRAD_MODE.enabled = self.mode
            MODE_SWITCHES.enter()

    def __call__(self, fn):
        if self.immediate:  # used as a decorator: the mode applies inside the function only
            GRAD_MODE.enabled = self.before
            MODE_SWITCHES.exit()
            self.immediate = False
        return super().__call__(fn)

    def __enter__(self):
        if self.immediate:  # already switched by the constructor: its previous mode comes back at exit
            self.immediate = False
            self.prev.append(self.before)
            return self
        self.prev.append(GRAD_MODE.enabled)
        GRAD_MODE.enabled = self.mode
        MODE_SWITCHES.enter()
        return self

    def __exit__(self, *exc) -> bool:
        if not self.prev and self.immediate:  # exited without `with` (PyTorch allows it): back to before
            self.immediate = False
            self.prev.append(self.before)
        GRAD_MODE.enabled = self.prev.pop()
        MODE_SWITCHES.exit()
        return False


class no_grad(set_grad_enabled):
    """``with gg.no_grad():`` (or ``@gg.no_grad()``): ops run without recording gradients."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """``with gg.enable_grad():``: record gradients again inside a ``no_grad`` region."""

    def __init__(self) -> None:
        super().__init__(True)


class detect_anomaly(contextlib.ContextDecorator):
    """Raise ``NonFiniteError`` naming the op as soon as a forward or backward op yields NaN/inf."""

    def __enter__(self):
        self.prev = GRAD_MODE.anomaly
        GRAD_MODE.anomaly = True
        MODE_SWITCHES.enter()
        return self

    def __exit__(self, *exc) -> bool:
        GRAD_MODE.anomaly = self.prev
        MODE_SWITCHES.exit()
        return False


def check_finite(what: str, array) -> None:
    """Raise ``NonFiniteError`` if ``array`` holds NaN or inf (used under ``detect_anomaly``)."""
    if array.dtype.kind in "fc" and not bool(array.size == 0 or _xp_isfinite_all(array)):
        raise NonFiniteError(f"{what} produced NaN or inf (shape {tuple(array.shape)})")


def _xp_isfinite_all(array) -> bool:
    from graphgrad.backend import namespace_of

    return bool(namespace_of(array).isfinite(array).all())


def _root_gradient(root: Tensor, gradient: Any) -> Tensor:
    if gradient is None:
        shape = root.shape
        if shape != () and (shape is None or None in shape or root.size != 1):
            raise GradError(f"backward() on a non-scalar output of shape {root.shape} needs an explicit "
                            "gradient of that shape: call out.backward(gradient)")
        if root._data is None:  # a graph tensor (e.g. a loss inside gg.function): a node of ones
            from graphgrad.backend import np

            return Tensor._wrap(np.ones((), dtype=root.dtype)).broadcast_like(root)
        return Tensor._wrap(_ones_like(root._data))
    g = gradient if isinstance(gradient, Tensor) else Tensor(gradient, dtype=root.dtype)
    if g.shape != root.shape:
        raise GradError(f"gradient has shape {g.shape} but the output has shape {root.shape}")
    return g


def _ones_like(array):
    from graphgrad.backend import namespace_of

    return namespace_of(array).ones_like(array)


def _run_hooks(hooks, g: Tensor) -> Tensor:
    for hook in hooks:
        result = hook(g)
        if result is not None:
            g = result
    return g


def _conform(gx: Tensor, x: Tensor) -> Tensor:
    """Undo broadcasting and dtype promotion: ``gx`` summed to ``x``'s shape, in ``x``'s dtype."""
    xs, gs = x.shape, gx.shape
    if xs is None or gs is None or None in xs or None in gs:
        # graph tensors may know some dimensions only at run time: sum to x's run-time shape
        gx = gx.sum_like(x)
    elif gs != xs:
        gx = gx.sum_to(xs)
    if gx.dtype != x.dtype:
        gx = gx.astype(x.dtype)
    return gx


def _add_into(store: dict, key, g: Tensor) -> bool:
    """Accumulate ``g`` under ``key``; True when the key is new."""
    prev = store.get(key)
    store[key] = g if prev is None else prev + g
    return prev is None


def _walk(roots, root_grads, retain_graph: bool, create_graph: bool, targets=None) -> dict:
    """The reverse walk. Without ``targets`` it accumulates into leaves' ``.grad``; with ``targets``
    (a dict from id(leaf) or node to index) it returns {index: gradient} and touches no ``.grad``.

    Nodes are processed in decreasing creation order (a max-heap on ``seq``): when a node is popped,
    every node that consumes its output has been processed already, so its gradient is complete.
    """
    captured: dict = {}
    grads: dict = {}  # node -> gradient of its output, summed over consumers
    # leaves with post-accumulate hooks -> gradient contributions still to come in this walk
    pending = _pending_uses(roots) if _POST_ACCUMULATE and targets is None else None
    arrived: set = set()
    handed_out = {id(g._data) for g in root_grads}  # arrays a leaf's .grad must not share
    heap: list = []

    def to_leaf(x: Tensor, gx: Tensor) -> None:
        if x._hooks:
            gx = _run_hooks(x._hooks, gx)
        if targets is not None:
            index = targets.get(id(x))
            if index is not None:
                _add_into(captured, index, gx)
        elif x.grad is None and gx._data is None:  # a graph tensor (a Variable's gradient in a graph)
            x.grad = gx
        elif x.grad is None:
            # A leaf gets an array of its own, writable and not shared: copied only when it is a view
            # (a broadcast, a reshape) or was already handed out (a rule may pass one gradient to two
            # inputs, e.g. add). Fresh results (a matmul's) are taken as they are: no copy per step.
            if create_graph:
                x.grad = gx
            else:
                owned = id(gx._data) not in handed_out and getattr(gx._data, "base", None) is None
                handed_out.add(id(gx._data))
                x.grad = Tensor._wrap(gx._data if owned else gx._data.copy())
        else:
            x.grad = x.grad + gx
        if pending is not None and id(x) in pending:
            _count_down(pending, x, arrived)

    def send(x: Tensor, gx: Tensor) -> None:
        xd, gd = x._data, gx._data
        if xd is None or gd is None or gd.shape != xd.shape or gd.dtype != xd.dtype:
            gx = _conform(gx, x)
        parent = x._node
        if parent is None:
            to_leaf(x, gx)
        elif _add_into(grads, parent, gx):
            heapq.heappush(heap, (-parent.seq, parent))

    _CALLBACKS.append([])
    try:
        with set_grad_enabled(create_graph), profile_span("backward", "backward", phase="backward"):
            _reverse(roots, root_grads, retain_graph, targets, captured, grads, heap, send, to_leaf)
            if pending:  # hooked leaves some of whose expected gradients never came (a None gradient)
                for key in [k for k in pending if k in arrived]:
                    _fire_post_accumulate(key)
            callbacks = _CALLBACKS[-1]
            while callbacks:
                callbacks.pop(0)()
    finally:
        _CALLBACKS.pop()
    return captured


def _reverse(roots, root_grads, retain_graph, targets, captured, grads, heap, send, to_leaf) -> None:
    """The loop of :func:`_walk`: pop nodes in decreasing creation order and apply their rules."""
    for root, g in zip(roots, root_grads):
        send(root, g)
    anomaly = bool(MODE_SWITCHES.count) and GRAD_MODE.anomaly
    profiling = PROFILER.active  # gg.profile(): each gradient rule is recorded
    last_write = INPLACE_WRITES.last
    while heap:
        node = heapq.heappop(heap)[1]
        g = grads.pop(node)
        inputs, op = node.inputs, node.op
        if _VERSIONS and inputs:
            inputs = _versioned(inputs, node.seq)
        if inputs is None:
            raise GradError(
                f"trying to backward through the graph a second time (through {op.name}): "
                "its saved values were freed by the first backward(); pass retain_graph=True to it")
        if node.seq < last_write:  # something was written in place after this node was made
            _check_saved(node, inputs)
        if node._hooks:
            g = _run_hooks(node._hooks, g)
        if node.retained is not None and node.retained() is not None:
            kept = node.retained()
            kept.grad = g if kept.grad is None else kept.grad + g
        if targets is not None and node in targets:
            _add_into(captured, targets[node], g)
        if not inputs:  # a graph source (placeholder, variable read): nothing further back
            # a source that stands for a leaf (a Variable's read: ``op.gradient_target``) hands the
            # gradient on to it, as if the leaf itself had been used
            target = getattr(op, "gradient_target", None)
            if target is not None and target.requires_grad:
                to_leaf(target, g)
            continue
        out = node.out
        if out is not None and out.__class__ is not Tensor:  # an eager node keeps the output array
            out = Tensor._wrap(out, node, True)
        if anomaly:
            try:
                gxs = op.backward(inputs, out, g)
            except NonFiniteError as error:
                raise NonFiniteError(f"in the backward of {op.name}{creation_note(node)}: {error}") from None
        elif profiling:
            gxs = PROFILER.profile.backward(node, inputs, out, g)
        else:
            gxs = op.backward(inputs, out, g)
        for x, gx in zip(inputs, gxs):
            if gx is not None and isinstance(x, Tensor) and x.requires_grad:
                if anomaly and gx._data is not None:
                    check_finite(f"the gradient of {op.name} (backward){creation_note(node)}", gx._data)
                send(x, gx)
        if not retain_graph and (out is None or out._data is not None):
            # (the nodes of a static graph are never freed: the graph is reused)
            node.inputs = None
            node.out = None


def _pending_uses(roots) -> dict:
    """For the leaves with post-accumulate hooks: how many gradient contributions the walk from
    ``roots`` will deliver to each (one per edge from a reachable node; one per variable read)."""
    counts: dict = {}
    seen: set = set()
    stack = []
    for root in roots:
        if root._node is None:
            if id(root) in _POST_ACCUMULATE:
                counts[id(root)] = counts.get(id(root), 0) + 1
        else:
            stack.append(root._node)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        inputs = node.inputs
        if _VERSIONS and inputs:
            inputs = _versioned(inputs, node.seq)
        if not inputs:
            target = getattr(node.op, "gradient_target", None)
            if target is not None and id(target) in _POST_ACCUMULATE:
                counts[id(target)] = counts.get(id(target), 0) + 1
            continue
        for x in inputs:
            if isinstance(x, Tensor) and x.requires_grad:
                if x._node is None:
                    if id(x) in _POST_ACCUMULATE:
                        counts[id(x)] = counts.get(id(x), 0) + 1
                elif id(x._node) not in seen:
                    stack.append(x._node)
    return counts


def _count_down(pending: dict, leaf: Tensor, arrived: set) -> None:
    key = id(leaf)
    left = pending[key] - 1
    if left > 0:
        pending[key] = left
        arrived.add(key)
    else:
        del pending[key]
        arrived.discard(key)
        _fire_post_accumulate(key)


def _fire_post_accumulate(key: int) -> None:
    entry = _POST_ACCUMULATE.get(key)
    leaf = entry[0]() if entry else None
    if leaf is not None:
        for hook in list(entry[1]):
            hook(leaf)


def register_post_accumulate_grad_hook(leaf: Tensor, hook) -> "Any":
    """Call ``hook(leaf)`` once per backward pass, after ``leaf.grad`` holds all of that pass's
    gradient (the place to start communicating or applying it). Returns a function removing the hook."""
    if leaf._node is not None:
        raise GradError("post-accumulate-grad hooks can only be registered on leaf tensors")
    if not leaf.requires_grad:
        raise GradError("cannot register a hook on a tensor that does not require grad")
    key = id(leaf)
    entry = _POST_ACCUMULATE.get(key)
    if entry is None or entry[0]() is not leaf:
        entry = _POST_ACCUMULATE[key] = (weakref.ref(leaf, lambda _, key=key, table=_POST_ACCUMULATE: table.pop(key, None)), [])
    entry[1].append(hook)

    def remove() -> None:
        if hook in entry[1]:
            entry[1].remove(hook)
        if not entry[1] and _POST_ACCUMULATE.get(key) is entry:
            del _POST_ACCUMULATE[key]

    return remove


def queue_callback(callback) -> None:
    """Call ``callback()`` when the backward pass now running ends (from inside a hook)."""
    if not _CALLBACKS:
        raise GradError("queue_callback() can only be called while a backward pass runs (from a hook)")
    _CALLBACKS[-1].append(callback)


def backward(tensors: Sequence[Tensor], grad_tensors: Optional[Sequence[Any]] = None,
             retain_graph: Optional[bool] = None, create_graph: bool = False) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of every leaf that requires grad."""
    tensors = list(tensors)
    for t in tensors:
        if not t.requires_grad:
            raise GradError("backward() on a tensor that does not require grad (no input requires grad, "
                            "or it was computed under no_grad)")
    grads = grad_tensors or [None] * len(tensors)
    root_grads = [_root_gradient(t, g) for t, g in zip(tensors, grads)]
    if retain_graph is None:
        retain_graph = create_graph
    _walk(tensors, root_grads, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph: Optional[bool] = None,
         create_graph: bool = False, allow_unused: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated in ``.grad``).

    Args:
        outputs: a tensor or sequence of tensors.
        inputs: a tensor or sequence of tensors that require grad (leaves or intermediate).
        grad_outputs: upstream gradients, one per output (optional for scalar outputs).
        create_graph: record the computation so the result can be differentiated again.
        allow_unused: return ``None`` for inputs the outputs do not depend on (else raise).

    Returns:
        A tuple with one gradient per input, each of the input's shape.
    """
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor) or not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    targets: dict = {}
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor) or not x.requires_grad:
            raise GradError(f"input {i} of grad() does not require grad")
        targets[id(x) if x._node is None else x._node] = i
    for i, y in enumerate(outputs):
        if not y.requires_grad:
            if allow_unused:
                continue
            raise GradError(f"output {i} of grad() does not require grad: it does not depend on any input")
    live = [(y, g) for y, g in zip(outputs, grad_outputs) if y.requires_grad]
    root_grads = [_root_gradient(y, g) for y, g in live]
    if retain_graph is None:
        retain_graph = create_graph
    captured = _walk([y for y, _ in live], root_grads, retain_graph, create_graph, targets)
    result = []
    for i, x in enumerate(inputs):
        g = captured.get(i)
        if g is None and not allow_unused:
            raise GradError(f"input {i} of grad() (shape {x.shape}) was not used to compute the outputs; "
                            "pass allow_unused=True to get None for it")
        result.append(g)
    return tuple(result)


__all__ = ["Node", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "detect_anomaly", "note_inplace_write"]
