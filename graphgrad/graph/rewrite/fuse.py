"""Elementwise fusion: connected groups of elementwise nodes become one generated kernel over ``xp``.

The "fuse" phase runs on the final graph (gradients and optimizer updates are already nodes). It
finds groups of elementwise nodes of one output shape (float results; comparisons feeding a
``where`` inside the group are fine), grown backwards from a root so that every interior value is
used only inside the group, and replaces each group by one :class:`FusedElementwise` node. A group
may also start with a ``MatMul`` whose only consumer is in the group (matmul + bias + relu becomes
``np.matmul(x, w, out=buf); np.add(buf, b, out=buf); np.maximum(buf, 0, out=buf)``).

The kernel is Python source generated per group structure, compiled once (``exec``) and cached; it
calls only ``xp`` (the run's array namespace: NumPy, CuPy or the emulated device's), so one kernel
serves every device. When every shape is known it writes each instruction with ``out=`` into the
output buffer or a few temporaries, reusing a buffer as soon as its value is dead (register
allocation); otherwise it evaluates the same ufuncs without ``out=``. A group whose interior values
are needed outside (at most ``MAX_EXTRA_OUTPUTS`` of them, same dtype) returns a tuple of its
outputs, one array each, and :class:`Unpack` nodes hand them out (its spec says ``(k, *shape)``:
the bytes it makes).

Semantics are those of the unfused ops: each value has its node's dtype (the graph's specs), Python
scalars stay weak (they are converted to the dtype of the array they meet), and ops whose rule is
not copied here exactly are simply not fused.
"""
from __future__ import annotations

import collections
import heapq
import math

from graphgrad.backend import blas, errstate as backend_errstate, np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GradError
from graphgrad.graph.graph import topo_order
from graphgrad.graph.rewrite import fuse_native
from graphgrad.graph.rewrite.engine import Program, program_pass
from graphgrad.graph.variables import Assign, ReadVariable
from graphgrad.ops import elementwise as E
from graphgrad.ops import unary as U
from graphgrad.ops.array import FullLike
from graphgrad.ops.linalg import MatMul
from graphgrad.ops.shape import Transpose
from graphgrad.ops.losses import SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad, SoftmaxCrossEntropyWithGrad

#: Most values a group may hand out besides its root (the kernel returns them as a tuple).
MAX_EXTRA_OUTPUTS = 4
#: Ops per fused kernel at most: a longer elementwise chain becomes several kernels (the generated
#: source of one kernel per 100,000-op chain would take the compiler seconds and hundreds of MB).
MAX_GROUP_MEMBERS = 512
#: Scalars meeting arrays of at most this many elements are stored as full arrays (array-array
#: ufunc calls are about twice as fast as array-scalar ones on tiny arrays).
SMALL = 4096
#: ``maximum``/``minimum`` (relu, clamps) with a scalar are 3-5x slower in NumPy than with an array
#: at every size (no vectorized loop for a broadcast scalar), so their scalars become read-only full
#: arrays, shared by every kernel of one shape, for outputs of up to this many elements.
FULL_OPERAND_LIMIT = 1 << 22
_FULL_OPERAND = (E.Maximum, E.Minimum, U.Relu)
_FULL_ARRAYS: dict = {}

_BINARY = {E.Add: "add", E.Sub: "subtract", E.Mul: "multiply", E.Div: "true_divide", E.Maximum: "maximum",
           E.Minimum: "minimum"}
_COMPARE = {E.Greater: "greater", E.GreaterEqual: "greater_equal", E.Less: "less", E.LessEqual: "less_equal",
            E.Equal: "equal", E.NotEqual: "not_equal"}
_UNARY = {U.Neg: "negative", U.Exp: "exp", U.Log: "log", U.Tanh: "tanh", U.Sqrt: "sqrt", U.Abs: "absolute",
          U.Sin: "sin", U.Cos: "cos"}
#: Op classes the fuse phase may put in a group (exact classes, no subclasses).
FUSIBLE = tuple(_BINARY) + tuple(_COMPARE) + tuple(_UNARY) + (U.Relu, U.TanhGrad, E.Where, E.Cast)


class Unpack(Op):
    """Output ``index`` of an op with ``multiple_outputs`` (an item of the tuple its forward returns:
    a fused kernel with extra outputs, or a merged softmax cross-entropy)."""

    props = ("index",)

    def __init__(self, index: int):
        self.index = int(index)

    def infer(self, packed):
        return TensorSpec(None if packed.shape is None else packed.shape[1:], packed.dtype)

    def forward(self, xp, packed):
        return packed[self.index]

    def backward(self, inputs, out, g):
        raise GradError("fused ops are only produced after differentiation")


class FusedElementwise(Op):
    """A group of elementwise nodes run as one generated kernel (see the module docstring).

    ``source`` is the kernel's Python code; ``ops`` the fused op names in order; ``donatable`` the
    input positions whose array the kernel may overwrite as its output (buffer planning passes one
    through ``forward_into`` when that input is dead after this step).
    """

    props = ("key",)

    def __init__(self, kernel: "_Kernel"):
        self.kernel = kernel
        self.key = kernel.key
        self.source = kernel.source
        self.ops = kernel.ops
        self.donatable = kernel.donatable
        self.donors = kernel.donors
        # a kernel with extra outputs returns a tuple of arrays, read by ``Unpack`` nodes
        self.multiple_outputs = kernel.key[3] != ()
        self._fn = kernel.fn

    def __repr__(self) -> str:
        shown = "+".join(self.ops[:6]) + ("+..." if len(self.ops) > 6 else "")
        return f"FusedElementwise({len(self.ops)} ops: {shown})"

    def infer(self, *specs):
        return self.kernel.spec

    def forward(self, xp, *arrays):
        native = self.kernel.native
        if native is not None:  # (the C loop straight away: a compiled step runs a few of these per call)
            result = native(None, arrays)
            if result is not None:
                return result
        return self.forward_into(xp, None, *arrays)

    def forward_into(self, xp, out, *arrays):
        """Run with ``out`` as the output buffer (an input position listed in ``donatable``), or for a
        kernel with several outputs a tuple of buffers (or None) per output (see ``donors``)."""
        kernel = self.kernel
        if kernel.native is None and kernel.native_source is not None and not kernel.native_tried:
            fuse_native.attach([kernel])  # planned while native kernels were off: compile it now
        if kernel.native is not None:  # the C loop, when the arguments are what it was made for
            result = kernel.native(out, arrays)
            if result is not None:
                return result
        return self._fn(xp, out, *arrays)

    def backward(self, inputs, out, g):
        raise GradError("fused ops are only produced after differentiation (gradients are already in the graph)")


# ---- eligibility ------------------------------------------------------------------------------------
def _spec(x):
    return x.spec if isinstance(x, Tensor) else None


def _literal_ok(x) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def _eligible(node) -> bool:
    """Whether ``node`` may be an elementwise member of a group."""
    op = node.op
    cls = type(op)
    if cls not in FUSIBLE or node.out is None or node.control_inputs:
        return False
    spec = node.out.spec
    if spec.shape is None:
        return False
    tensors = [x for x in node.inputs if isinstance(x, Tensor)]
    if not tensors or any(x.shape is None for x in tensors):
        return False
    if any(not isinstance(x, Tensor) and not _literal_ok(x) for x in node.inputs):
        return False
    if cls in _COMPARE:
        return spec.dtype.kind == "b" and all(x.dtype.kind == "f" for x in tensors)
    if spec.dtype.kind != "f":
        return False
    if cls is E.Where:
        cond, x, y = node.inputs
        if not (isinstance(cond, Tensor) and cond.dtype.kind == "b"):
            return False
        return all(v.dtype.kind == "f" for v in (x, y) if isinstance(v, Tensor))
    if cls is E.Mul and spec.dtype.kind == "f" and any(x.dtype == spec.dtype for x in tensors):
        # a float times a bool mask (relu's backward): the mask converts to 0/1 exactly
        return all(x.dtype.kind in "fb" for x in tensors)
    if any(x.dtype.kind != "f" for x in tensors):
        return False
    if cls is U.TanhGrad:
        return all(isinstance(x, Tensor) and x.dtype == spec.dtype for x in node.inputs)
    if cls in _BINARY and not any(isinstance(x, Tensor) and x.dtype == spec.dtype for x in node.inputs):
        return False  # e.g. float16 * float32 scalar array: keep NumPy's own resolution
    return True


def _eligible_head(node, shape, dtype) -> bool:
    """A MatMul that can open a group: 2-D operands of the result's dtype, known shapes."""
    if type(node.op) is not MatMul or node.out is None or node.control_inputs:
        return False
    a, b = node.inputs
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    if a.ndim != 2 or b.ndim != 2 or a.dtype != dtype or b.dtype != dtype or dtype.kind != "f":
        return False
    return node.out.shape == shape and None not in shape


# ---- grouping -----------------------------------------------------------------------------------------
def _consumers(order) -> dict:
    users: dict = {n: [] for n in order}
    for n in order:
        for x in n.inputs:
            if isinstance(x, Tensor) and x._node in users:
                users[x._node].append(n)
        for c in n.control_inputs:
            if c in users:
                users[c].append(None)  # a control dependency: an outside use that is not a value
    return users


def _grow(root, index, users, eligible, assigned, fetched, allow_extra: bool):
    shape, dtype = root.out.shape, root.out.spec.dtype
    members = {root}
    extras = []
    heap = []
    seen = set()

    def push(node):
        for x in node.inputs:
            if isinstance(x, Tensor) and x._node in index and x._node not in seen:
                seen.add(x._node)
                heapq.heappush(heap, (-index[x._node], id(x._node), x._node))

    push(root)
    while heap and len(members) < MAX_GROUP_MEMBERS:
        _, _, p = heapq.heappop(heap)
        if p in assigned or p.out is None or p.out.shape != shape:
            continue
        head = False
        if not eligible.get(p):
            if not _eligible_head(p, shape, dtype):
                continue
            head = True
        outside = p in fetched or any(u is None or u not in members for u in users[p])
        if outside:
            if head or not allow_extra or len(extras) >= MAX_EXTRA_OUTPUTS or p.out.spec.dtype != dtype:
                continue
            extras.append(p)
        members.add(p)
        if not head:
            push(p)
    return members, extras


def _has_cycle(members, extras, users, group_of, groups) -> bool:
    """Whether a value leaving the group through an extra output comes back into it, counting each
    group formed earlier as one node (it will be one fused node)."""
    stack = [u for x in extras for u in users[x] if u is not None and u not in members]
    seen = set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        gid = group_of.get(n)
        nodes = groups[gid][0] if gid is not None else (n,)
        for m in nodes:
            seen.add(m)
            for u in users[m]:
                if u is None:
                    continue
                if u in members:
                    return True
                if u not in seen:
                    stack.append(u)
    return False


def _control_users(order) -> dict:
    users: dict = {}
    for n in order:
        for c in n.control_inputs:
            users.setdefault(c, []).append(n)
    return users


def find_groups(program: Program) -> list:
    """The groups to fuse: (members in execution order, root, extra outputs), roots last first."""
    order = program.nodes()
    index = {n: i for i, n in enumerate(order)}
    users = _consumers(order)
    controls = _control_users(order)
    for node, deps in controls.items():  # a node waited on by control edges: follow them in cycles
        users[node] = [u for u in users[node] if u is not None] + deps + [None]
    fetched = set(program.outputs)
    eligible = {n: _eligible(n) for n in order}
    assigned: set = set()
    group_of: dict = {}
    groups = []
    for root in reversed(order):
        if root in assigned or not eligible[root] or root.out.spec.dtype.kind != "f":
            continue
        members, extras = _grow(root, index, users, eligible, assigned, fetched, allow_extra=True)
        if extras and _has_cycle(members, extras, users, group_of, groups):
            members, extras = _grow(root, index, users, eligible, assigned, fetched, allow_extra=False)
        real = [m for m in members if type(m.op) is not MatMul]
        if len(members) < 2 or not real:
            continue
        assigned.update(members)
        for m in members:
            group_of[m] = len(groups)
        groups.append((_heads_late(sorted(members, key=index.__getitem__)), root,
                       sorted(extras, key=index.__getitem__)))
    if any(g[2] for g in groups) and not _acyclic(order, users, group_of):
        # safety net: the per-group check should make this unreachable; single-output groups are
        # always safe, so keep those only
        return [g for g in groups if not g[2]]
    return groups


def _heads_late(members: list) -> list:
    """``members`` (in execution order) with each MatMul head moved to just before its first reader:
    the instructions before it (e.g. relu's mask from the activation) then read their inputs before
    the kernel's output is written, so a dying input can be the output buffer."""
    heads = [m for m in members if type(m.op) is MatMul]
    if not heads:
        return members
    order = [m for m in members if type(m.op) is not MatMul]
    for head in heads:
        readers = [i for i, m in enumerate(order)
                   if any(isinstance(x, Tensor) and x._node is head for x in member_inputs(m))]
        order.insert(readers[0] if readers else len(order), head)
    return order


def _acyclic(order, users, group_of) -> bool:
    """Whether the graph stays acyclic with each group contracted to one node (Kahn's algorithm)."""
    key = {n: ("g", group_of[n]) if n in group_of else n for n in order}
    succ: dict = {}
    indeg: dict = {k: 0 for k in key.values()}
    for n in order:
        for u in users[n]:
            if u is None or u not in key or key[u] == key[n]:
                continue
            edge = (key[n], key[u])
            if edge not in succ:
                succ[edge] = True
                indeg[key[u]] += 1
    out: dict = {}
    for a, b in succ:
        out.setdefault(a, []).append(b)
    ready = [k for k, d in indeg.items() if d == 0]
    count = 0
    while ready:
        k = ready.pop()
        count += 1
        for b in out.get(k, ()):
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    return count == len(indeg)


# ---- code generation --------------------------------------------------------------------------------
class _Kernel:
    __slots__ = ("key", "source", "fn", "spec", "ops", "donatable", "donors",
                 "native", "native_name", "native_source", "native_shape", "native_inputs", "native_tried")


_CACHE: dict = {}


def _lit(value, dtype, small, consts, shape):
    """A literal as code: a full array (tiny shapes) or a NumPy scalar of the dtype it meets."""
    if dtype is None or dtype.kind != "f":
        return repr(value) if value >= 0 else f"({value!r})"
    key = (value, dtype.str, small)
    name = consts.get(key)
    if name is None:
        name = consts[key] = f"_c{len(consts)}"
    return name


def _full_array(shape, value, dtype):
    """A read-only array of ``value``, one per (shape, value, dtype) for every kernel."""
    key = (tuple(shape), value, dtype.str)
    array = _FULL_ARRAYS.get(key)
    if array is None:
        array = _FULL_ARRAYS[key] = np.full(shape, value, dtype)
        array.flags.writeable = False
    return array


def member_inputs(m) -> list:
    """The inputs a group member reads: its node's inputs, except that a ``MatMul`` reads the source
    of a 2-D transpose directly (``matmul(a.T, b)``: BLAS takes transposed operands without a copy;
    the gradients of a matmul are full of these)."""
    if type(m.op) is not MatMul:
        return list(m.inputs)
    return [x._node.inputs[0] if _is_plain_transpose(x) else x for x in m.inputs]


def _is_plain_transpose(x) -> bool:
    node = x._node
    return (type(node.op) is Transpose and node.op.axes == (1, 0) and not node.control_inputs
            and isinstance(node.inputs[0], Tensor) and node.inputs[0].ndim == 2)


def build_kernel(members, root, extras, inputs, in_place: bool = False) -> _Kernel:
    """Generate (or fetch from the cache) the kernel of a group. ``inputs`` lists the group's external
    tensor inputs in argument order. ``in_place``: keep the output buffer for the root's own write (no
    scratch use before), so that an input read until then may be given as the output."""
    pos = {id(t._node): i for i, t in enumerate(inputs)}
    slot = {m: j for j, m in enumerate(members)}
    shape = root.out.shape
    fast = None not in shape
    # the group's structure: instructions over input positions / member positions / literals
    instrs = []
    for m in members:
        args = []
        for x in member_inputs(m):
            if isinstance(x, Tensor):
                args.append(("v", slot[x._node]) if x._node in slot else ("a", pos[id(x._node)]))
            else:
                args.append(("l", x))
        if type(m.op) is MatMul:  # which operands are read transposed
            opkey = (MatMul,) + tuple(isinstance(x, Tensor) and _is_plain_transpose(x) for x in m.inputs)
        else:
            opkey = m.op._key()
        instrs.append((opkey, type(m.op), tuple(args), m.out.spec.dtype.str))
    in_specs = tuple((t.shape, t.dtype.str) for t in inputs)
    outs = tuple(slot[x] for x in extras)
    key = (tuple((i[0], i[2], i[3]) for i in instrs), in_specs, shape, outs, in_place)
    kernel = _CACHE.get(key)
    if kernel is None:
        kernel = _CACHE[key] = _generate(key, instrs, inputs, members, root, extras, shape, fast, in_place)
    return kernel


def _generate(key, instrs, inputs, members, root, extras, shape, fast, in_place=False) -> _Kernel:
    n = len(instrs)
    dtypes = [np.dtype(d) for _, _, _, d in instrs]
    in_dtypes = [t.dtype for t in inputs]
    small = fast and math.prod(shape) <= SMALL
    wide = fast and math.prod(shape) <= FULL_OPERAND_LIMIT
    consts: dict = {}
    lines = []

    def dtype_of(ref):
        kind, v = ref
        return dtypes[v] if kind == "v" else (in_dtypes[v] if kind == "a" else None)

    # last use of each member value and of each input
    last = {}
    for j, (_, _, args, _) in enumerate(instrs):
        for a in args:
            if a[0] != "l":
                last[a] = j
    extra_slots = {members.index(x): k + 1 for k, x in enumerate(extras)}
    root_j = n - 1
    packed = bool(extras)
    if packed:
        extra_slots[root_j] = 0
    bufname: dict = {}
    free: dict = {}
    temps = []
    first_out_write = None

    def operand(ref, other_dtype, full=False):
        kind, v = ref
        if kind == "v":
            return bufname[v] if fast else f"v{v}"
        if kind == "a":
            return f"a{v}"
        return _lit(v, other_dtype, small or full, consts, shape)

    def take(j, dtype, reusable):
        """The buffer instruction j writes (fast path)."""
        if j in extra_slots:
            return f"o{extra_slots[j]}" if packed else "out"
        if j == root_j:
            return "out"
        for ref in reusable:
            if ref[0] == "v" and last.get(ref) == j and dtypes[ref[1]] == dtype and ref[1] not in extra_slots:
                name = bufname[ref[1]]
                if name not in held_elsewhere(j, ref):
                    return name
        pool = free.get(dtype.str, [])
        if pool:
            return pool.pop(0)
        name = f"t{len(temps)}"
        temps.append((name, dtype))
        return name

    def held_elsewhere(j, ref):
        # a buffer may hold only one live value; values read by j other than ref keep theirs
        return {bufname[a[1]] for a in instrs[j][2] if a[0] == "v" and a != ref}

    if fast:
        out_dtype = dtypes[root_j]
        if not packed and not in_place:
            free[out_dtype.str] = ["out"]
    for j, (opkey, cls, args, dstr) in enumerate(instrs):
        dtype = dtypes[j]
        tensor_dtypes = [dtype_of(a) for a in args if a[0] != "l"]
        meet = dtype if cls is E.Where else next((d for d in tensor_dtypes if d is not None), None)
        full = wide and cls in _FULL_OPERAND
        ops = [operand(a, meet, full) for a in args]
        if cls is MatMul:
            ops = [f"{o}.T" if transposed else o for o, transposed in zip(ops, opkey[1:])]
        if not fast:
            target = f"v{j}"
            lines.append(f"    {target} = " + _functional(cls, instrs[j], ops, dtype))
            continue
        if cls is MatMul:
            target = take(j, dtype, ())
        elif cls is E.Where:
            target = take(j, dtype, (args[2], args[1]))
        else:
            target = take(j, dtype, args)
        bufname[j] = target
        if target == "out" and first_out_write is None:
            first_out_write = j
        lit = (lambda v: _lit(v, dtype, small or full, consts, shape)) if dtype.kind == "f" else repr
        if (cls is E.Where and target == ops[1] and target != ops[2] and args[2][0] == "l"
                and args[2][1] == 0 and dtype.kind == "f"):
            # where(c, x, 0) in place on x (relu's and clip's backward): a masked copy costs ~1 ns per
            # element in NumPy, a multiply by the mask ~0.2 ns. x*1 == x and x*0 == 0, except that a
            # negative x under a false mask gives -0.0 (equal to 0.0; only the sign of zero differs)
            # and a non-finite one NaN (rare: detected by a sum, which is NaN or inf whenever a NaN is
            # there and costs a fraction of an isnan pass, then repaired exactly)
            c = ops[0]
            lines.extend(["    with _errstate(xp, invalid='ignore', over='ignore'):",
                          f"        xp.multiply({target}, {c}, out={target})",
                          f"        if not xp.isfinite({target}.sum()) and xp.isnan({target}).any():",
                          f"            xp.copyto({target}, 0.0, where=xp.logical_and(xp.isnan({target}), "
                          f"xp.logical_not({c})))"])
        else:
            lines.extend("    " + s for s in _emit(cls, ops, target, dtype, temps, lit))
        # free the buffers of values whose last use this was
        for a in set(args):
            if a[0] == "v" and last.get(a) == j and a[1] not in extra_slots and bufname[a[1]] != target:
                free.setdefault(dtypes[a[1]].str, []).append(bufname[a[1]])
    in_args = ", ".join(f"a{i}" for i in range(len(inputs)))
    head = [f"def kernel(xp, out{', ' if in_args else ''}{in_args}):"]
    out_spec_dtype = dtypes[root_j]
    if fast:
        if packed:
            # one buffer per output, each given by the caller (``out``: a tuple with a buffer or None
            # per output; buffer planning passes a variable's own array for an in-place update) or new
            k = len(extras) + 1
            names = ", ".join(f"o{i}" for i in range(k))
            head.append(f"    {names}, = (None,) * {k} if out is None else out")
            for i in range(k):
                head.append(f"    if o{i} is None: o{i} = xp.empty({tuple(shape)!r}, _out_dtype)")
        else:
            head.append("    if out is None:")
            head.append(f"        out = xp.empty({tuple(shape)!r}, _out_dtype)")
        for name, dtype in temps:
            head.append(f"    {name} = xp.empty({tuple(shape)!r}, _d_{dtype.str[1:]})")
        tail = [f"    return ({names},)" if packed else "    return out"]
    else:
        if packed:
            names = ", ".join(f"v{j}" for j in [root_j] + [members.index(x) for x in extras])
            tail = [f"    return ({names},)"]
        else:
            tail = [f"    return v{root_j}"]
    namespace = {"_out_dtype": out_spec_dtype, "np": np, "_errstate": backend_errstate, "_matmul": blas.xp_matmul}
    for dtype in set(dtypes) | {d for _, d in temps}:
        namespace[f"_d_{dtype.str[1:]}"] = dtype
    const_lines = []
    for (value, dstr, small_), name in consts.items():
        dtype = np.dtype(dstr)
        if small_:
            namespace[name.upper()] = _full_array(shape, value, dtype)
            namespace[name + "_scalar"] = dtype.type(value)
            # the full array is a NumPy speed-up only: on a device (CuPy) the scalar serves, with no
            # host array to move there on each call
            head.insert(1, f"    {name} = {name.upper()} if xp is np else {name}_scalar")
            const_lines.append(f"# {name.upper()} = full({tuple(shape)}, {value!r}, {dtype}) (read-only)")
        else:
            namespace[name] = dtype.type(value)
            const_lines.append(f"# {name} = {dtype}({value!r})")
    # bind each array function once per call (a local load is cheaper than ``xp.`` each time)
    import re

    used = sorted(set(re.findall(r"\bxp\.([a-z_]+)\(", "\n".join(lines + head[1:]))))
    if len(lines) > len(used):
        lines = [re.sub(r"\bxp\.([a-z_]+)\(", r"_\1(", line) for line in lines]
        head.insert(1, "    " + ", ".join(f"_{u}" for u in used) + " = " + ", ".join(f"xp.{u}" for u in used))
    source = "\n".join(const_lines + head + lines + tail) + "\n"
    exec(compile(source, f"<fused kernel {abs(hash(key)) % 10**8}>", "exec"), namespace)
    kernel = _Kernel()
    kernel.key = key
    kernel.source = source
    kernel.fn = namespace["kernel"]
    kernel.ops = tuple(cls.__name__ if cls is not E.Cast else "Cast" for _, cls, _, _ in instrs)
    kernel.spec = TensorSpec(((len(extras) + 1,) + tuple(shape)) if packed else shape, out_spec_dtype)
    # inputs the kernel may overwrite as its output: read for the last time before ``out`` is first
    # written, or by that very instruction when it is a plain ufunc (elementwise in place is safe)
    # per output, the inputs whose array it may be written into (for each, the instruction that first
    # writes the output); ``donatable`` is output 0's list for a single-output kernel
    first_writes = {0: first_out_write} if not packed else {k: j for j, k in extra_slots.items()}
    donors = {}
    for k, first in first_writes.items():
        if not fast or first is None:
            continue
        plain = instrs[first][1] not in (MatMul, E.Where, U.TanhGrad)
        donors[k] = tuple(i for i, t in enumerate(inputs)
                          if t.shape == tuple(shape) and t.dtype == out_spec_dtype and last.get(("a", i)) is not None
                          and (last[("a", i)] < first or (last[("a", i)] == first and plain)))
    kernel.donors = donors
    kernel.donatable = () if packed else donors.get(0, ())
    # the same group as one C loop (optional: graphgrad.backend.native), compiled with the pass's others
    kernel.native = None
    kernel.native_tried = False
    kernel.native_name = fuse_native.describe(key)
    kernel.native_source = fuse_native.c_source(kernel.native_name, instrs, inputs,
                                                extra_slots if packed else {root_j: 0}, shape) if fast else None
    kernel.native_shape = tuple(shape)
    kernel.native_inputs = ([t.shape for t in inputs], [t.dtype for t in inputs], len(extras) + 1)
    return kernel


def _ufunc_name(cls) -> str:
    return _BINARY.get(cls) or _COMPARE.get(cls) or _UNARY.get(cls)


def _functional(cls, instr, ops, dtype) -> str:
    if cls is MatMul:
        return f"_matmul(xp, {ops[0]}, {ops[1]})"
    if cls is E.Where:
        return f"xp.where({ops[0]}, {ops[1]}, {ops[2]})"
    if cls is E.Cast:
        return f"xp.asarray({ops[0]}).astype(_d_{dtype.str[1:]})"
    if cls is U.Relu:
        return f"xp.maximum({ops[0]}, 0)"
    if cls is U.TanhGrad:
        return f"{ops[1]} * (1 - {ops[0]} * {ops[0]})"
    return f"xp.{_ufunc_name(cls)}({', '.join(ops)})"


def _emit(cls, ops, target, dtype, temps, lit) -> list:
    if cls is MatMul:
        return [f"_matmul(xp, {ops[0]}, {ops[1]}, out={target})"]
    if cls is U.Relu:
        return [f"xp.maximum({ops[0]}, {lit(0)}, out={target})"]
    if cls is E.Cast:
        return [f"xp.copyto({target}, {ops[0]}, casting='unsafe')"]
    if cls is U.TanhGrad:
        y, g = ops
        # g * (1 - y * y), as TanhGrad.forward; the scratch must not be g's buffer
        scratch = target if target != g else None
        if scratch is None:
            scratch = f"t{len(temps)}"
            temps.append((scratch, dtype))
        return [f"xp.multiply({y}, {y}, {scratch})", f"xp.subtract({lit(1)}, {scratch}, {scratch})",
                f"xp.multiply({g}, {scratch}, {target})"]
    if cls is E.Where:
        cond, x, y = ops
        if target == x and target != y:
            inv = f"t{len(temps)}"
            temps.append((inv, np.dtype(bool)))
            return [f"xp.logical_not({cond}, {inv})", f"xp.copyto({target}, {y}, where={inv})"]
        if target == y:
            return [f"xp.copyto({target}, {x}, where={cond})"]
        return [f"xp.copyto({target}, {y})", f"xp.copyto({target}, {x}, where={cond})"]
    return [f"xp.{_ufunc_name(cls)}({', '.join(ops)}, out={target})"]


# ---- the pass ---------------------------------------------------------------------------------------
def fuse_program(program: Program) -> int:
    """Fuse every group of ``program`` in place; returns how many fused nodes were made."""
    _shape_only_constants(program)
    groups = find_groups(program)
    graph = program.graph
    replaced: dict = {}  # old node -> new tensor
    assigned_from = _assigned_variables(program)
    kernels = []
    for members, root, extras in reversed(groups):  # roots in execution order
        member_set = set(members)
        inputs, seen = [], set()
        for m in members:
            for x in member_inputs(m):
                if isinstance(x, Tensor) and x._node not in member_set and x._node not in seen:
                    seen.add(x._node)
                    inputs.append(x)
        # an update of a variable read here (assign(v, f(read(v)))) may run in place: then the
        # output buffer must not serve as scratch before the kernel's last read of that input
        updated = {id(v) for n in [root] + extras for v in assigned_from.get(n, ())}
        in_place = any(type(x._node.op) is ReadVariable and id(x._node.op.variable) in updated for x in inputs)
        kernel = build_kernel(members, root, extras, inputs, in_place)
        kernels.append(kernel)
        op = FusedElementwise(kernel)
        name = "Fused" + "".join(kernel.ops[:3]) if len(kernel.ops) <= 3 else f"Fused{len(kernel.ops)}"
        fused = graph.add_node(op, tuple(inputs), kernel.spec, name=name)
        if extras:
            for k, node in enumerate([root] + extras):
                replaced[node] = graph.add_node(Unpack(k), (fused.out,), node.out.spec,
                                                name=f"{fused.name}/out{k}").out
        else:
            replaced[root] = fused.out
        fused.site = root.site
    if replaced:
        _redirect(program, replaced)
    fuse_native.attach(kernels)
    return len(groups)


def _assigned_variables(program: Program) -> dict:
    """{node: the variables assigned its value}."""
    found: dict = {}
    for node in program.nodes():
        if type(node.op) is Assign and isinstance(node.inputs[0], Tensor):
            found.setdefault(node.inputs[0]._node, []).append(node.op.variable)
    return found


def _redirect(program: Program, replaced: dict) -> None:
    """Make every node (and the outputs) use the replacements of the ``replaced`` nodes."""
    for node in program.graph._nodes:
        if any(isinstance(x, Tensor) and x._node in replaced for x in node.inputs):
            node.inputs = tuple(replaced[x._node] if isinstance(x, Tensor) and x._node in replaced else x
                                for x in node.inputs)
        if any(c in replaced for c in node.control_inputs):
            node.control_inputs = tuple(replaced[c]._node if c in replaced else c for c in node.control_inputs)
    program.outputs = [replaced[n]._node if n in replaced else n for n in program.outputs]


def _shape_only_constants(program: Program) -> None:
    """``full_like(x, v)`` of a known shape does not depend on ``x``'s value: make it a constant, so
    that it does not tie a gradient seed to the forward pass (it would stop fusion across them)."""
    replaced = {}
    for node in program.nodes():
        if type(node.op) is FullLike and not node.control_inputs and node.out is not None:
            spec = node.out.spec
            if spec.shape is not None and None not in spec.shape and math.prod(spec.shape) <= 4096:
                from graphgrad.graph.variables import Const

                value = np.full(spec.shape, node.op.value, spec.dtype)
                replaced[node] = program.graph.add_node(Const(value), (), spec, name="Const").out
    if replaced:
        _redirect(program, replaced)


def merge_softmax_cross_entropy(program: Program) -> int:
    """A softmax cross-entropy and its gradient of the same logits and targets (a training step needs
    both) become one :class:`SoftmaxCrossEntropyWithGrad` node: softmax is computed once. Not when the
    gradient's upstream value depends on the loss itself (``loss ** 2``): the merged node would need
    its own output. Returns how many pairs were merged."""
    order = program.nodes()
    losses = {}
    for node in order:
        if type(node.op) is SoftmaxCrossEntropy and not node.control_inputs:
            losses[_cross_entropy_key(node)] = node
    graph = program.graph
    replaced: dict = {}
    for node in order:
        if type(node.op) is not SoftmaxCrossEntropyGrad or node.control_inputs:
            continue
        loss = losses.pop(_cross_entropy_key(node), None)
        if loss is None or not all(isinstance(x, Tensor) for x in node.inputs):
            continue
        if loss in set(topo_order([node.inputs[2]._node])):
            continue
        op = SoftmaxCrossEntropyWithGrad(node.op.ignore_index, node.op.reduction)
        merged = graph.add_node(op, node.inputs, node.out.spec, name="SoftmaxCrossEntropyWithGrad")
        merged.site = loss.site
        for k, old in enumerate((loss, node)):
            replaced[old] = graph.add_node(Unpack(k), (merged.out,), old.out.spec, name=f"{merged.name}/out{k}").out
    if replaced:
        _redirect(program, replaced)
    return len(replaced) // 2


def _cross_entropy_key(node) -> tuple:
    x, t = node.inputs[:2]
    return (x._node, t._node, node.op.ignore_index, node.op.reduction)


@program_pass("fuse")
def fuse(program: Program) -> collections.Counter:
    """Merge softmax cross-entropy with its gradient, then fuse every elementwise group of the
    program (see ``merge_softmax_cross_entropy`` and ``fuse_program``)."""
    fired = collections.Counter()
    _shape_only_constants(program)
    merged = merge_softmax_cross_entropy(program)
    if merged:
        fired["fuse_softmax_cross_entropy_grad"] = merged
    count = fuse_program(program)
    if count:
        fired["fuse_elementwise"] = count
    return fired
