"""Fused elementwise kernels as generated C (the optional native extra, graphgrad.backend.native).

The fuse phase turns a group of elementwise nodes into one Python kernel of NumPy calls, each a pass
over memory (see :mod:`graphgrad.graph.rewrite.fuse`). Here the same group becomes one C loop that
reads each input once, keeps every intermediate value in a register and writes each output once:
an SGD-momentum update is one pass instead of four, ReLU's backward one instead of two.

Only float32 groups of large arrays whose operations have an exact C counterpart are generated:

* operations: ``+ - * /``, maximum, minimum, comparisons, ``where``, negative, absolute, sqrt,
  relu, tanh's gradient (rounded as NumPy rounds them: the same float32 operations in the same
  order, no contraction into fused multiply-adds), and exp and tanh through gg_native.h (within
  3 ulp of NumPy's). A MatMul head stays NumPy's (BLAS) product, written first into the output
  buffer (or a scratch one), which the loop then reads; a head whose inner dimension is at most
  :data:`INLINE_K` (the first layer of a 2-feature MLP, the backward of a 3-class head) is instead
  summed in the loop, in order (within rounding of BLAS's, which may order or fuse the products
  otherwise): a BLAS call costs 10-15 us there for a few thousand multiply-adds. Log, sin, cos and
  casts between float types keep the NumPy kernel.
* inputs: any broadcast that three nested loops can read (:func:`loop_layout`): the output's shape,
  a single value, a bias ``(C,)`` of ``(N, C)``, a per-channel ``(C, 1, 1)`` of ``(N, C, H, W)``,
  ``(N, 1)`` rows...; the shapes are constants of the generated code.
* outputs of at least :data:`MIN_ELEMENTS` elements, or groups of at least :data:`MIN_INSTRUCTIONS`
  operations of any size: below both the generated NumPy kernel is about as fast (a few NumPy calls
  on small arrays), and the tests' thousands of tiny graphs would each wait for a compiler. A long
  chain on small arrays (W4's 165 operations on 16 floats) is a NumPy call per operation, about a
  microsecond each, where the C loop takes a few microseconds in all.

Outputs of :data:`SPLIT_ELEMENTS` or more split over MKL's OpenMP team when native kernels have one
(native.team: whole rows of the loops, or blocks of a flat one, to each thread; every element is
computed alike wherever it runs). A generated kernel is a library of its own, so it is handed
gg_parallel's address rather than linked to it.

All kernels of one fuse pass are compiled together, once (cached on disk by their text); the NumPy
kernel stays and runs whenever an argument is not what the C one was generated for (a CuPy array,
a non-contiguous view) or native kernels are off.
"""
from __future__ import annotations

import ctypes
import hashlib
import math
from typing import Callable, Optional

from graphgrad.backend import blas, native, np
from graphgrad.ops import elementwise as E
from graphgrad.ops import unary as U
from graphgrad.ops.linalg import MatMul

_pointer = native.pointer
_ndarray = np.ndarray
_c_int64 = ctypes.c_int64
_ONE_THREAD = (_c_int64(0), _c_int64(1))  # (a generated kernel's split arguments: not split)
_KEEP_BYTES = 1 << 18  # NativeKernel.last

#: Smallest output (elements) that gets a C kernel.
MIN_ELEMENTS = 1 << 14

#: Fewest operations in a group that gets a C kernel whatever its size.
MIN_INSTRUCTIONS = 48

#: Largest inner dimension of a MatMul head summed inside the loop rather than by BLAS.
INLINE_K = 4

#: Largest transposed second operand of an inline head (floats) copied to the stack in its loop's order.
INLINE_COPY_FLOATS = 1 << 14

#: Outputs of at least this many elements split over MKL's OpenMP team (native.team), in rows of the
#: loops or blocks of SPLIT_BLOCK elements; each element is computed alike on any thread.
SPLIT_ELEMENTS = 1 << 16
SPLIT_BLOCK = 4096

_F32 = np.dtype(np.float32)
_BOOL = np.dtype(bool)
_BINARY = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/"}
_UNARY = {U.Neg: "-", U.Abs: "fabsf", U.Sqrt: "sqrtf", U.Exp: "gg_expf", U.Tanh: "gg_tanhf"}
_COMPARE = {E.Greater: ">", E.GreaterEqual: ">=", E.Less: "<", E.LessEqual: "<=", E.Equal: "==", E.NotEqual: "!="}


def _literal(value) -> str:
    """An exact float32 C literal (hexadecimal: no decimal rounding)."""
    value = float(np.float32(value))
    return f"{value.hex()}f" if math.isfinite(value) else ("INFINITY" if value > 0 else "-INFINITY")


def loop_layout(in_shapes: list, out: tuple) -> Optional[tuple]:
    """How an ``out``-shaped loop reads inputs of ``in_shapes`` (each broadcast to ``out``):
    ``(sizes, strides)``, three loop sizes (outer to inner; the output's axes of size 1 dropped and
    neighbours that every input reads alike merged) and, per input, its element stride along each
    loop (0 where it is broadcast). ``None`` when more than three loops would be needed or a shape
    does not broadcast."""
    nd = len(out)
    masks = []
    for shape in in_shapes:
        padded = (1,) * (nd - len(shape)) + tuple(shape)
        if len(padded) != nd or any(s != o and s != 1 for s, o in zip(padded, out)):
            return None
        masks.append([s == o for s, o in zip(padded, out)])
    groups = []  # (which inputs read along it, output axes merged into it)
    for k in range(nd):
        if out[k] == 1:
            continue
        column = tuple(m[k] for m in masks)
        if groups and groups[-1][0] == column:
            groups[-1][1].append(k)
        else:
            groups.append((column, [k]))
    if len(groups) > 3:
        return None
    groups = [(tuple(False for _ in masks), [])] * (3 - len(groups)) + groups
    sizes = tuple(math.prod(out[k] for k in axes) for _, axes in groups)
    strides = []
    for i in range(len(in_shapes)):
        stride, own = [0, 0, 0], 1
        for level in (2, 1, 0):
            if groups[level][0][i]:
                stride[level] = own
                own *= sizes[level]
        strides.append(tuple(stride))
    return sizes, strides


def _index(strides: tuple) -> str:
    terms = [f"{'i' + str(level) if step == 1 else f'i{level} * {step}'}" for level, step in enumerate(strides) if step]
    return " + ".join(terms) or "0"


def c_source(name: str, instrs: list, inputs: list, out_slots: dict, shape: tuple) -> Optional[tuple]:
    """``(source, heads, inline inputs)``: the C function ``gg_<name>`` of a fused group (its last two
    arguments: gg_parallel's address or 0, and the threads), the MatMul heads computed before it as
    ``(member, input a, input b, a transposed, b transposed)``, and the inputs that heads summed in the
    loop read (never to be given as an output's array); ``None`` when
    the group is outside what is generated (module docstring). ``instrs`` are the group's
    ``(opkey, op class, args, dtype str)`` (args: ``("v", member)``, ``("a", input)``,
    ``("l", literal)``), ``inputs`` its input tensors, ``out_slots`` ``{member: output index}`` (the
    root is output 0)."""
    shape = tuple(shape)
    if None in shape or (math.prod(shape) < MIN_ELEMENTS and len(instrs) < MIN_INSTRUCTIONS):
        return None
    if any(np.dtype(t.dtype) not in (_F32, _BOOL) for t in inputs):
        return None
    elementwise = sorted({a[1] for _, cls, args, _ in instrs if cls is not MatMul for a in args if a[0] == "a"})
    inline = any(cls is MatMul and _inner(opkey, args, inputs) <= INLINE_K for opkey, cls, args, _ in instrs)
    # an inline head needs the output's row and column apart: two pseudo inputs keep them as loops
    pseudo = [(shape[0], 1), (shape[1],)] if inline else []
    layout = loop_layout([inputs[i].shape for i in elementwise] + pseudo, shape)
    if layout is None:
        return None
    sizes, strides = layout
    index_of = {i: _index(st) for i, st in zip(elementwise, strides)}
    row, col = (_index(st) for st in strides[len(elementwise):]) if inline else (None, None)
    full = _index((sizes[1] * sizes[2], sizes[2], 1))
    kinds = {}  # value name -> "f" (float) or "b" (bool)
    body = []
    heads = []
    inline_inputs = set()  # inputs read by inline heads (across a row: never an output's own array)
    prologue = []  # transposed copies of inline heads' second operands, made at the start of each part
    # (once per call, or once per chunk of rows when the kernel splits over the team)

    def operand(ref) -> tuple[str, str]:
        kind, v = ref
        if kind == "v":
            return f"v{v}", kinds[f"v{v}"]
        if kind == "l":
            return _literal(v), "f"
        value = f"a{v}[{index_of[v]}]"
        return (f"({value} != 0)", "b") if np.dtype(inputs[v].dtype) == _BOOL else (value, "f")

    for j, (opkey, cls, args, dstr) in enumerate(instrs):
        dtype = np.dtype(dstr)
        if cls is MatMul:
            if dtype != _F32 or any(a[0] != "a" or np.dtype(inputs[a[1]].dtype) != _F32 for a in args):
                return None
            kinds[f"v{j}"] = "f"
            if _inner(opkey, args, inputs) <= INLINE_K:
                expr, copy = _inline_product(opkey, args, inputs, row, col)
                body.append(f"                float v{j} = {expr};")
                if copy and copy not in prologue:
                    prologue.append(copy)
                inline_inputs.update(a[1] for a in args)
                continue
            heads.append((j,) + tuple(a[1] for a in args) + tuple(opkey[1:]))
            body.append(f"                float v{j} = m{j}[{full}];")
            continue
        expr = _expression(cls, opkey, [operand(a) for a in args], dtype)
        kind = "b" if dtype == _BOOL else "f"
        if expr is None or (kind == "f" and dtype != _F32):
            return None
        kinds[f"v{j}"] = kind
        body.append(f"                {'float' if kind == 'f' else 'int'} v{j} = {expr};")
    for j, k in sorted(out_slots.items(), key=lambda item: item[1]):
        if kinds[f"v{j}"] != "f":
            return None
        body.append(f"                o{k}[{full}] = v{j};")
    params = [f"{'const uint8_t' if np.dtype(t.dtype) == _BOOL else 'const float'} *a{i}" for i, t in enumerate(inputs)]
    params += [f"const float *m{j}" for j, *_ in heads]
    params += [f"float *o{k}" for k in sorted(out_slots.values())]
    names = [p.split("*")[1] for p in params]
    # the loops of units [first, stop) of the first loop longer than 1 (blocks of SPLIT_BLOCK elements
    # when that is the innermost): what gg_parallel hands to each thread (ranges of whole rows or blocks)
    level = next((k for k in range(3) if sizes[k] > 1), 2)
    units = sizes[level] if level < 2 else -(-sizes[2] // SPLIT_BLOCK)
    ranges = [f"{sizes[0]}", f"{sizes[1]}", f"{sizes[2]}"]
    starts = ["0", "0", "0"]
    if level < 2:
        starts[level], ranges[level] = "first", "stop"
    else:
        starts[2], ranges[2] = f"first * {SPLIT_BLOCK}", f"(stop * {SPLIT_BLOCK} < {sizes[2]} ? stop * {SPLIT_BLOCK} : {sizes[2]})"
    chunk = max(-(-units // 16), 1)
    return "\n".join([
        f"typedef struct {{ {' '.join(p + ';' for p in params)} }} task_{name};",
        "",
        f"static void part_{name}(void *task, int64_t first, int64_t stop, int worker, int64_t chunk) {{",
        f"    const task_{name} *t = (const task_{name} *)task;",
        *[f"    {p} = t->{n};" for p, n in zip(params, names)],
        "    (void)worker, (void)chunk;",
        *prologue,
        f"    for (int64_t i0 = {starts[0]}; i0 < {ranges[0]}; i0++) {{",
        f"        for (int64_t i1 = {starts[1]}; i1 < {ranges[1]}; i1++) {{",
        "            #pragma GCC ivdep",  # outputs may be inputs' own arrays: element i is read, then written
        f"            for (int64_t i2 = {starts[2]}; i2 < {ranges[2]}; i2++) {{",
        *body,
        "            }",
        "        }",
        "    }",
        "}",
        "",
        # split: gg_parallel's address (a separate library: passed, not linked), 0 for one thread
        f"GG_EXPORT void gg_{name}({', '.join(params + ['int64_t split', 'int64_t workers'])}) {{",
        f"    task_{name} t = {{{', '.join(names)}}};",
        "    if (split && workers > 1)",
        f"        ((gg_split_fn)(intptr_t)split)(part_{name}, &t, {units}, {chunk}, workers);",
        "    else",
        f"        part_{name}(&t, 0, {units}, 0, 0);",
        "}",
        ""]), heads, sorted(inline_inputs)


def _inner(opkey, args, inputs) -> int:
    """The inner (summed) dimension of a MatMul head: columns of its first operand as read (taken as
    large where an operand's shape is not fully known: such a head stays a BLAS call)."""
    (_, ia), (_, ib) = args
    if None in inputs[ia].shape or None in inputs[ib].shape:
        return INLINE_K + 1
    shape = inputs[ia].shape
    return int(shape[0] if opkey[1] else shape[1])


def _inline_product(opkey, args, inputs, row: str, col: str) -> tuple:
    """``(expression, copy)``: the C expression of element (row, col) of a head's product, its K products
    summed in order, and the C statements that first copy a transposed second operand (N, K) into a
    local (K, N) array (``""`` if none), so that the loop along a row reads it contiguously rather than
    gathering every K-th float (twice as fast for W6's 3-class backward; the same products)."""
    (_, ia), (_, ib) = args
    a_transposed, b_transposed = opkey[1:]
    k_size = _inner(opkey, args, inputs)
    m_size = inputs[ia].shape[1] if a_transposed else inputs[ia].shape[0]
    n_size = inputs[ib].shape[0] if b_transposed else inputs[ib].shape[1]
    copy = ""
    b_name = f"a{ib}"
    if b_transposed and k_size * n_size <= INLINE_COPY_FLOATS:
        b_name, b_transposed = f"t{ib}", False
        copy = (f"    float t{ib}[{k_size * n_size}];\n"
                f"    for (int64_t n = 0; n < {n_size}; n++)\n"
                f"        for (int64_t k = 0; k < {k_size}; k++) t{ib}[k * {n_size} + n] = a{ib}[n * {k_size} + k];")
    terms = []
    for k in range(k_size):
        a = f"a{ia}[{k} * {m_size} + ({row})]" if a_transposed else f"a{ia}[({row}) * {k_size} + {k}]"
        b = f"{b_name}[({col}) * {k_size} + {k}]" if b_transposed else f"{b_name}[{k} * {n_size} + ({col})]"
        terms.append(f"{a} * {b}")
    expr = terms[0]
    for term in terms[1:]:
        expr = f"({expr} + {term})"
    return expr, copy


def _expression(cls, opkey, ops: list, dtype) -> Optional[str]:
    """The C expression of one member, or ``None`` when it has no exact C counterpart here."""
    values = [v for v, _ in ops]
    kinds = [k for _, k in ops]
    as_float = [f"(float){v}" if k == "b" else v for v, k in ops]
    if cls in _BINARY:
        return f"({as_float[0]} {_BINARY[cls]} {as_float[1]})"
    if cls in _COMPARE:
        return None if "b" in kinds else f"({values[0]} {_COMPARE[cls]} {values[1]})"
    if cls is E.Maximum or cls is E.Minimum:  # NaN propagates from either side, as np.maximum
        a, b = as_float
        sign = ">=" if cls is E.Maximum else "<="
        return f"(({a} {sign} {b} || {a} != {a}) ? {a} : {b})"
    if cls is U.Relu:
        a = as_float[0]
        return f"(({a} >= 0.0f || {a} != {a}) ? {a} : 0.0f)"
    if cls is E.Where:
        cond = values[0] if kinds[0] == "b" else None
        return None if cond is None else f"({cond} ? {as_float[1]} : {as_float[2]})"
    if cls is U.TanhGrad:
        y, g = as_float
        return f"({g} * (1.0f - {y} * {y}))"
    if cls in _UNARY:
        return f"{_UNARY[cls]}({as_float[0]})"
    if cls is E.Cast:
        return f"(float){values[0]}" if np.dtype(dtype) == _F32 else None
    return None


class NativeKernel:
    """The C kernel of a fused group, with what its arguments must be: ``call(out, arrays)`` runs it
    and returns the output (a tuple for several), or ``None`` when the arguments do not fit it (the
    caller then runs the NumPy kernel). ``fn`` is the C function without argument conversion
    (``native.untyped``): it is given pointers and ``c_int64`` values only."""

    def __init__(self, fn: Callable, shape: tuple, heads: list, in_shapes: list, in_dtypes: list, n_outputs: int,
                 inline_inputs: tuple = (), operations: int = 1):
        self.fn = fn
        self.heads = heads
        self.inline_inputs = tuple(inline_inputs)
        self.shape = tuple(shape)
        elements = math.prod(self.shape)
        self.large = elements >= SPLIT_ELEMENTS
        self.work = elements * max(1, operations)  # (see native.split_over_team)
        self.in_shapes = [tuple(s) for s in in_shapes]
        self.in_bool = [np.dtype(d) == _BOOL for d in in_dtypes]
        self.n_outputs = n_outputs
        # the last small array seen at each input and its pointer: a variable's array, or a fed array,
        # is often the same object at every call, and making a pointer costs about a microsecond, which
        # counts for small kernels (large arrays are not kept alive for it)
        self.last = [(None, None)] * len(self.in_shapes)

    def __call__(self, out, arrays):
        if not native.enabled():
            return None
        pointers = []
        last = self.last
        for j, a in enumerate(arrays):
            seen, pointer = last[j]
            if a is not seen:
                if a.__class__ is not _ndarray or a.shape != self.in_shapes[j] or not a.flags.c_contiguous or \
                        a.dtype != (_BOOL if self.in_bool[j] else _F32):
                    return None
                pointer = _pointer(a)  # (a bool array's bytes are the kernel's uint8 values)
                if a.nbytes <= _KEEP_BYTES:
                    last[j] = (a, pointer)
            pointers.append(pointer)
        if self.n_outputs == 1 and not self.heads:  # the common kernel: one output, no BLAS head
            if out is not None and self.inline_inputs and any(out is arrays[i] for i in self.inline_inputs):
                return None  # an inline head reads across rows: not from the array being written (NumPy's path)
            if out is None or not self._fits(out):
                out = np.empty(self.shape, _F32)
            pointers.append(_pointer(out))
            pointers += self._split()
            self.fn(*pointers)
            return out
        outs = list(out) if isinstance(out, tuple) else [out] + [None] * (self.n_outputs - 1)
        if self.inline_inputs and any(o is arrays[i] for o in outs for i in self.inline_inputs):
            return None  # an inline head reads across rows: not from the array being written (NumPy's path)
        fresh = []
        for k, o in enumerate(outs):
            if not self._fits(o):
                outs[k] = np.empty(self.shape, _F32)
                fresh.append(outs[k])
        for _, i, k, a_transposed, b_transposed in self.heads:
            # a fresh output is free until the loop writes it (element by element, after reading the
            # product there); a given one may be an input's own array, still to be read
            buffer = fresh.pop() if fresh else np.empty(self.shape, _F32)
            blas.matmul(arrays[i].T if a_transposed else arrays[i], arrays[k].T if b_transposed else arrays[k],
                        out=buffer)
            pointers.append(_pointer(buffer))
        pointers += [_pointer(o) for o in outs]
        pointers += self._split()
        self.fn(*pointers)
        return tuple(outs) if self.n_outputs > 1 else outs[0]

    def _fits(self, o) -> bool:
        """Whether ``o`` can be written as an output."""
        return o.__class__ is _ndarray and o.shape == self.shape and o.dtype == _F32 and o.flags.c_contiguous \
            and o.flags.writeable

    def _split(self) -> tuple:
        """The kernel's last two arguments: gg_parallel's address and the threads, or (0, 1)."""
        if not self.large:
            return _ONE_THREAD
        split, workers = native.split_over_team(self.work)
        return (_c_int64(split), _c_int64(workers)) if split else _ONE_THREAD


def attach(kernels: list) -> None:
    """Compile the C sources of ``kernels`` (fuse's kernel objects with a ``native_source``) together
    and give each its :class:`NativeKernel` (``kernel.native``); nothing when native kernels are off
    or the compiler fails."""
    pending = [k for k in kernels if k.native_source is not None and k.native is None and not k.native_tried]
    if not pending or not native.available():
        return
    for k in pending:
        k.native_tried = True
    unique = {}
    for k in pending:
        unique.setdefault(k.native_name, k.native_source[0])
    source = '#include "gg_native.h"\n\n' + "\n".join(unique[name] for name in sorted(unique))
    compiled = native.compile_source(source)
    if compiled is None:
        return
    for k in pending:
        fn = compiled.get(k.native_name)
        if fn is not None:
            k.native = NativeKernel(native.untyped(fn.raw), k.native_shape, k.native_source[1], *k.native_inputs,
                                    k.native_source[2], operations=len(k.ops))


def describe(key) -> str:
    """A short stable name for a kernel key (the C function's name)."""
    return "fused_" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]
