"""Recurrent sequence ops: a whole LSTM or GRU layer (one direction) as one forward op and one backward op.

Written as a loop of per-step ops, one LSTM layer over 35 steps is about 2,000 small ops per training
step, and its recurrent weight gradient 35 small matmuls. Here:

* ``LSTMScan`` / ``GRUScan`` run the recurrence: the input projection of every step is one matmul,
  then a loop over time writes into preallocated buffers with in-place gate math. The result is a
  *workspace*: the public rows (the outputs ``h_t``, then the final states) followed by what the
  gradient needs (gate activations, cell states). A scan has no gradient of its own.
* ``LSTMSequence`` / ``GRUSequence`` take the same inputs plus the workspace and return its public
  rows (a view). Their gradient is ``LSTMSequenceGrad`` / ``GRUSequenceGrad`` (backpropagation through
  time: the gradient of every step's gate pre-activations, in one op), then ordinary ops: each weight
  gradient is one matmul over the whole sequence, the bias gradients are sums.
* Higher orders: the ``...Grad`` ops differentiate, in their own backward, the same computation
  written with ordinary ops (``_lstm_gate_grads`` / ``_gru_gate_grads``), so second derivatives work.

Parameters use PyTorch's layout and gate order: ``w_ih`` (G*H, I), ``w_hh`` (G*H, H), ``b_ih`` and
``b_hh`` (G*H,), gates ``i, f, g, o`` for the LSTM and ``r, z, n`` for the GRU, whose candidate is
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.

Sigmoids are computed as ``sigmoid(a) = 0.5 * tanh(a / 2) + 0.5``: the halving is folded into the
weights and biases once per call (an exact scaling by a power of two), so each step applies one
``tanh`` to all gates at once and one multiply-add. Gate activations are stored gate-major (each
gate's (B, H) block of a step contiguous), so every elementwise pass, per step or over the whole
sequence, runs over contiguous memory.

With native kernels on (graphgrad.backend.native) and float32 NumPy arrays, the pointwise part of a
step (all gate activations, the state updates, or their gradients) is one C call
(backend/native/recurrent.c) instead of about ten NumPy calls; the matmuls stay NumPy's, and the
workspace layout is the same, so either backward reads either forward's workspace.
"""
from __future__ import annotations

from typing import Tuple

from graphgrad.backend import blas, native, np
from graphgrad.core.autograd import enable_grad, grad, is_grad_enabled
from graphgrad.core.op import Op, as_tensor_args
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.array import reshape_like, zeros_like
from graphgrad.ops.linalg import matmul
from graphgrad.ops.reduce import sum_to
from graphgrad.ops.shape import concatenate, expand_dims, reshape, stack, transpose
from graphgrad.ops.unary import sigmoid, tanh


def _fmt(shape) -> str:
    return str(tuple(shape))


def _same(a, b) -> bool:
    return a is None or b is None or a == b


def _cast(a, dtype):
    return a if a.dtype == dtype else a.astype(dtype)


# A product of one time step is split into column blocks of at most _BLOCK_PRODUCT multiply-adds when
# the whole product is at most _SMALL_PRODUCT: BLAS then runs each block on the calling thread. At these
# sizes a second thread gains little (32x128 by 128x512: 42 us on one thread, 29 us on two on an idle
# machine), while on a busy machine waiting for a second thread the OS has not scheduled yet made one
# two-thread product in ten take milliseconds (and the W3 step 2x slower).
_BLOCK_PRODUCT = 1 << 19
_SMALL_PRODUCT = 1 << 23
#: Whether a step's product may take the transposed form below (a switch for on-off benchmarks).
TRANSPOSED_STEP_PRODUCT = True
#: Whether the native LSTM and GRU run a whole sequence (and its backward) in one call, products
#: included (backend/native/recurrent.c), rather than one call per step beside a BLAS product.
_WHOLE_SEQUENCE = True
# The recurrent multiply-adds of a sequence from which its batch rows are split over threads.
_SCAN_SPLIT_MULTIPLY_ADDS = 1 << 23


def _scan_threads(T: int, B: int, H: int, gates: int) -> int:
    """Threads for a whole-sequence kernel: its recurrent products' multiply-adds decide. None while
    MKL's threads spin for milliseconds after a product (blas.threads_spin_long) and the split would
    run on threads of our own (no native.team): with PyTorch loaded, a W3 step split over two of ours
    took 10.1 ms against 9.2 ms on one, where on MKL's OpenMP team the benchmark's W3 ratio went from
    0.96x to 0.81x."""
    if T * B * gates * H * H < _SCAN_SPLIT_MULTIPLY_ADDS or (blas.threads_spin_long() and not native.team()):
        return 1
    return native.threads()


class _StepProduct:
    """``a @ w_k`` for fixed weight blocks ``w_k`` (K, N_k) and ``a`` (M, K) of a fixed M, each block
    written into its own output ``outs[k]`` (M, N_k)."""

    def __init__(self, xp, blocks: list, m: int):
        total = sum(m * w.shape[0] * w.shape[1] for w in blocks)
        self.xp = xp
        self.transposed = self.mkl_weight = self.bound = None
        if xp is np and len(blocks) == 1 and blas.available():
            # MKL: one product, bound once to its output (blas.BoundProduct: on this thread)
            self.mkl_weight = xp.ascontiguousarray(blocks[0])
            return
        transpose = native.kernel("transpose_f32") if xp is np else None
        if TRANSPOSED_STEP_PRODUCT and transpose is not None and len(blocks) == 1 and m < blocks[0].shape[1] \
                and blocks[0].dtype == np.float32:
            # (w^T a^T)^T: with more rows than columns in the result, OpenBLAS splits the product over
            # its threads well (32x128 by 128x512: 29 us against 41 us blocked on one thread), then one
            # native transposing copy into the output (3.5 us; NumPy's strided copy takes 14-18 us)
            w = blocks[0]
            w_t, out_t = xp.ascontiguousarray(w.T), xp.empty((w.shape[1], m), np.float32)
            self.transposed = (w_t, out_t, transpose.raw, native.pointer(out_t), w.shape[1], m)
            return
        self.parts = []  # (block, first column, end column, weight columns)
        for k, w in enumerate(blocks):
            n = w.shape[1]
            width = n if total > _SMALL_PRODUCT else max(1, _BLOCK_PRODUCT // max(1, m * w.shape[0]))
            width = -(-n // -(-n // width)) if n else 1  # equal blocks (GRU: 4 x 32 columns, not 42, 42, 42, 2)
            for j in range(0, n, width):
                self.parts.append((k, j, min(n, j + width), xp.ascontiguousarray(w[:, j:j + width])))

    def __call__(self, a, outs) -> None:
        if self.mkl_weight is not None:
            out = outs[0]
            if self.bound is None or self.bound.out is not out:  # (the callers pass one array every step)
                self.bound = blas.bind(self.mkl_weight, out)
            if self.bound is not None and a.flags.c_contiguous and a.shape == self.bound.shape \
                    and a.dtype == self.bound.dtype and not np.may_share_memory(a, out):
                self.bound(a)
            else:
                blas.matmul(a, self.mkl_weight, out=out)
            return
        if self.transposed is not None:
            w_t, out_t, transpose, out_t_pointer, rows, cols = self.transposed
            self.xp.matmul(w_t, a.T, out=out_t)
            if outs[0].flags.c_contiguous:  # (float32, of the product's shape: the callers' buffers)
                transpose(out_t_pointer, native.pointer(outs[0]), rows, cols)
            else:
                outs[0][...] = out_t.T
            return
        for k, start, stop, w in self.parts:
            out = outs[k]
            self.xp.matmul(a, w, out=out if stop - start == out.shape[1] else out[:, start:stop])


def _gate_blocks(xp, w, gates: int, scales: tuple) -> list:
    """``w`` (G * H, K) as G blocks ``w_k^T * scale_k`` (K, H), each a new C-contiguous array (BLAS
    multiplies by a transposed right operand about 1.4x slower at the sizes of one time step)."""
    H = w.shape[0] // gates
    blocks = []
    for k in range(gates):
        block = xp.array(w[k * H:(k + 1) * H].T, order="C")
        if scales[k] != 1.0:
            block *= scales[k]
        blocks.append(block)
    return blocks


def _native_step(name: str, arrays, B: int, H: int):
    """The native kernel ``name`` (backend/native/recurrent.c) when a scan or its gradient can use it:
    the arrays (``None`` skipped) are float32 NumPy arrays, a step's (B, H) block is not empty, native
    kernels are on. Else ``None``: the caller takes its NumPy path."""
    if B * H == 0 or any(type(a) is not np.ndarray or a.dtype != np.float32 for a in arrays if a is not None):
        return None
    return native.kernel(name)


def _contiguous(a):
    return None if a is None else np.ascontiguousarray(a)


def _project(xp, x, blocks: list, bias, scales: tuple, dtype):
    """The input projections of every step at once, gate-major: (G, T, B, H) with
    ``[k] = (x @ W_k^T + b_k) * scale_k``, one matmul per gate."""
    T, B, _ = x.shape
    H = blocks[0].shape[1]
    x2 = x.reshape(T * B, x.shape[2])  # (-1 is ambiguous when B == 0)
    out = xp.empty((len(blocks), T, B, H), dtype)
    for k, block in enumerate(blocks):
        xp.matmul(x2, block, out=out[k].reshape(T * B, H))
        if bias is not None:
            out[k] += bias[k * H:(k + 1) * H] * scales[k]
    return out


# ---- the shared frame: inputs, shape rule ----------------------------------------------------------
class _Recurrent(Op):
    """Inputs ``x, w_ih, w_hh[, b_ih, b_hh][, initial states][, extra...]`` as the props say.

    Props: ``reverse`` (run from the last step to the first; outputs stay in time order),
    ``has_bias``, ``has_state`` (initial states given; else they are zero)."""

    props = ("reverse", "has_bias", "has_state")
    function = ""  # the public function's name, for messages
    gates = 0      # G: gate blocks in the weights
    n_states = 0   # 2 for the LSTM (h, c), 1 for the GRU
    n_extra = 0    # inputs after the states: the workspace, the upstream gradient

    def __init__(self, reverse: bool = False, has_bias: bool = True, has_state: bool = False):
        self.reverse, self.has_bias, self.has_state = bool(reverse), bool(has_bias), bool(has_state)

    def _unpack(self, items) -> tuple:
        """``(x, w_ih, w_hh, b_ih, b_hh, states, extra)`` of the op's inputs (arrays, specs or Tensors)."""
        x, w_ih, w_hh = items[0], items[1], items[2]
        k = 3
        b_ih = b_hh = None
        if self.has_bias:
            b_ih, b_hh = items[3], items[4]
            k = 5
        states = (None,) * self.n_states
        if self.has_state:
            states = tuple(items[k:k + self.n_states])
            k += self.n_states
        return x, w_ih, w_hh, b_ih, b_hh, states, tuple(items[k:])

    def _steps(self, T: int) -> range:
        return range(T - 1, -1, -1) if self.reverse else range(T)

    def _check(self, specs) -> tuple:
        """The shape rule shared by the ops of one cell type: returns ``(T, B, H, dtype)``."""
        expected = 3 + 2 * self.has_bias + self.n_states * self.has_state + self.n_extra
        if len(specs) != expected:
            raise ShapeError(f"{self.function}: expected {expected} inputs for {self!r}, got {len(specs)}")
        x, w_ih, w_hh, b_ih, b_hh, states, _ = self._unpack(specs)
        name = self.function
        if len(x.shape) != 3:
            raise ShapeError(f"{name}: x must be (T, B, input_size), got shape {_fmt(x.shape)}")
        T, B, I = x.shape
        if T == 0:
            raise ShapeError(f"{name}: the sequence is empty (x of shape {_fmt(x.shape)})")
        if len(w_hh.shape) != 2:
            raise ShapeError(f"{name}: w_hh must be ({self.gates} * hidden, hidden), got {_fmt(w_hh.shape)}")
        GH, H = w_hh.shape
        if GH is not None and H is not None and GH != self.gates * H:
            raise ShapeError(f"{name}: w_hh must be ({self.gates} * hidden, hidden) = ({self.gates * H}, {H}), "
                             f"got {_fmt(w_hh.shape)}")
        if len(w_ih.shape) != 2 or not _same(w_ih.shape[0], GH) or not _same(w_ih.shape[1], I):
            raise ShapeError(f"{name}: w_ih must be ({GH}, {I}) (gates * hidden, input_size of x "
                             f"{_fmt(x.shape)}), got {_fmt(w_ih.shape)}")
        for label, b in (("b_ih", b_ih), ("b_hh", b_hh)):
            if b is not None and (len(b.shape) != 1 or not _same(b.shape[0], GH)):
                raise ShapeError(f"{name}: {label} must be ({GH},), got {_fmt(b.shape)}")
        for s in states:
            if s is not None and (len(s.shape) != 2 or not _same(s.shape[0], B) or not _same(s.shape[1], H)):
                raise ShapeError(f"{name}: an initial state must be (B, hidden) = ({B}, {H}), got {_fmt(s.shape)}")
        floats = [s for s in (x, w_ih, w_hh, b_ih, b_hh) + states if s is not None]
        if any(s.dtype.kind != "f" for s in floats):
            shown = ", ".join(str(s.dtype) for s in floats)
            raise DTypeError(f"{name}: expects floating-point inputs, got ({shown})")
        dtype = np.result_type(*[s.dtype for s in floats])
        return T, B, H, dtype


# ---- LSTM -----------------------------------------------------------------------------------------------
def _lstm_rows(T: int) -> int:
    return 7 * T + 2


def _lstm_views(ws, T: int) -> tuple:
    """The parts of an LSTM workspace (rows of (B, H)) that backward reads: ``h`` (T rows, in time
    order), ``c`` (T), ``tanh(c)`` (T), gate activations ``i, f, g, o`` gate-major as (4, T, B, H) (so
    that every elementwise pass runs over contiguous (B, H) blocks); ``h_n``, ``c_n`` sit after ``h``."""
    B, H = ws.shape[1], ws.shape[2]
    return ws[:T], ws[T + 2:2 * T + 2], ws[2 * T + 2:3 * T + 2], ws[3 * T + 2:].reshape(4, T, B, H)


# sigmoid(a) = 0.5 * tanh(a / 2) + 0.5: the gates' scale inside the tanh, and the affine map after it
_LSTM_SCALES = (0.5, 0.5, 1.0, 0.5)  # i, f, o are sigmoids; g is a tanh
_GRU_SCALES = (0.5, 0.5, 1.0)        # r, z are sigmoids; n is a tanh


class _LSTMOp(_Recurrent):
    function = "lstm"
    gates = 4
    n_states = 2


class LSTMScan(_LSTMOp):
    """The LSTM recurrence over a whole sequence; returns the workspace (``7T + 2`` rows of (B, H),
    see ``_lstm_views``) that ``LSTMSequence`` reads its outputs and gradient from. No gradient:
    differentiate through ``LSTMSequence`` (which ``lstm`` returns)."""

    saves_output = False

    def infer(self, *specs):
        T, B, H, dtype = self._check(specs)
        return TensorSpec((None if T is None else _lstm_rows(T), B, H), dtype)

    def forward(self, xp, *arrays):
        T, B, H, dtype = self._check(arrays)  # (eager mode runs no shape rule: check here)
        x, w_ih, w_hh, b_ih, b_hh, (h_prev, c_prev), _ = self._unpack([_cast(a, dtype) for a in arrays])
        step = _native_step("lstm_step_f32", (x, w_ih, w_hh, b_ih, b_hh, h_prev, c_prev), B, H)
        if step is not None:
            return self._forward_native(xp, step, x, w_ih, w_hh, b_ih, b_hh, h_prev, _contiguous(c_prev))
        scales = _LSTM_SCALES
        gx = _project(xp, x, _gate_blocks(xp, w_ih, 4, scales), None if b_ih is None else b_ih + b_hh, scales, dtype)
        recurrent = _StepProduct(xp, _gate_blocks(xp, w_hh, 4, scales), B)
        scale = xp.asarray(scales, dtype).reshape(4, 1, 1)
        shift = 0.5 * (scale != 1.0).astype(dtype)
        ws = xp.empty((_lstm_rows(T), B, H), dtype)
        h, c, tc, act = _lstm_views(ws, T)
        pre = xp.empty((4, B, H), dtype)
        ig = xp.empty((B, H), dtype)
        for t in self._steps(T):
            a = act[:, t]
            if h_prev is None:
                xp.tanh(gx[:, t], out=pre)
            else:
                recurrent(h_prev, pre)
                pre += gx[:, t]
                xp.tanh(pre, out=pre)
            xp.multiply(pre, scale, out=a)  # sigmoid(a) = 0.5 * tanh(a / 2) + 0.5 for i, f, o; g is the tanh
            a += shift
            if c_prev is None:
                xp.multiply(a[0], a[2], out=c[t])
            else:
                xp.multiply(a[1], c_prev, out=c[t])
                xp.multiply(a[0], a[2], out=ig)
                c[t] += ig
            xp.tanh(c[t], out=tc[t])
            xp.multiply(a[3], tc[t], out=h[t])
            h_prev, c_prev = h[t], c[t]
        ws[T] = h_prev
        ws[T + 1] = c_prev
        return ws

    def _forward_native(self, xp, step, x, w_ih, w_hh, b_ih, b_hh, h_prev, c0):
        """The scan with one native call per step for everything but the recurrent matmul; unscaled
        weights (the kernel computes its sigmoids itself), the gates side by side (one product)."""
        T, B, _ = x.shape
        H = w_hh.shape[1]
        gx = blas.matmul(x.reshape(T * B, x.shape[2]), w_ih.T)  # (T B, 4H): every step's input projection at once
        bias = xp.zeros(4 * H, np.float32) if b_ih is None else b_ih + b_hh  # (added by the kernel)
        scan = native.kernel("lstm_scan_f32") if _WHOLE_SEQUENCE else None
        if scan is not None and T > 0 and (h_prev is None) == (c0 is None):
            ws, ok = xp.empty((_lstm_rows(T), B, H), np.float32), np.zeros(1, np.int64)
            state = c0 is not None
            w = np.ascontiguousarray(w_hh)
            scan(gx, bias, w, _contiguous(h_prev) if state else w, c0 if state else w, ws, T, B, H,
                 int(self.reverse), int(state), _scan_threads(T, B, H, 4), ok)
            if ok[0]:
                return ws
        recurrent = _StepProduct(xp, [w_hh.T], B)  # (it copies its blocks contiguous)
        ws = xp.empty((_lstm_rows(T), B, H), np.float32)
        pre = xp.empty((B, 4 * H), np.float32)  # h_{t-1} W_hh^T
        # the kernel's unchecked entry: the arrays are checked float32 and C-contiguous above
        pointers = [native.pointer(a) for a in (gx, bias, pre, pre if c0 is None else c0, ws)]
        prev = -2 if c0 is None else -1  # where c_{t-1} is: zero, c0, then the row of step t - 1
        for t in self._steps(T):
            if h_prev is not None:
                recurrent(h_prev, (pre,))
            step.raw(*pointers, t, prev, T, B, H)
            h_prev, prev = ws[t], t
        ws[T] = h_prev
        ws[T + 1] = ws[T + 2 + prev]
        return ws

    def backward(self, inputs, out, g):
        return (None,) * len(inputs)


class LSTMSequence(_LSTMOp):
    """The public rows of an ``LSTMScan`` workspace: ``(T + 2, B, H)`` = the outputs ``h_t`` in time
    order, ``h_n``, ``c_n``. Inputs: the scan's inputs, then its workspace. Gradient:
    ``LSTMSequenceGrad`` (gate gradients of all steps), then one matmul per weight."""

    n_extra = 1

    def infer(self, *specs):
        T, B, H, dtype = self._check(specs)
        return TensorSpec((None if T is None else T + 2, B, H), dtype)

    def forward(self, xp, *arrays):
        return arrays[-1][:arrays[0].shape[0] + 2]

    def backward(self, inputs, out, g):
        x, w_ih, w_hh, b_ih, b_hh, (h0, c0), _ = self._unpack(inputs)
        d = LSTMSequenceGrad(self.reverse, self.has_bias, self.has_state).apply(*inputs, g)
        d_gates = d[:-1]  # (T, B, 4H)
        grads = _projection_grads(x, w_ih, w_hh, b_ih, b_hh, h0, out[:-2], d_gates, d_gates, self.reverse)
        gx, gw_ih, gw_hh, gb_ih, gb_hh = grads
        H = w_hh.shape[1]
        result = [gx, gw_ih, gw_hh]
        if self.has_bias:
            result += [gb_ih, gb_hh]
        if self.has_state:
            result += [d[-1][:, :H] if h0.requires_grad else None, d[-1][:, H:2 * H] if c0.requires_grad else None]
        return tuple(result) + (None,)  # (none for the workspace)


class LSTMSequenceGrad(_LSTMOp):
    """Backpropagation through time of ``LSTMSequence``. Inputs: its inputs (with the workspace),
    then the upstream gradient ``g`` of shape (T + 2, B, H). Returns (T + 1, B, 4H): rows ``0..T-1``
    the gradients of the gate pre-activations of each step (i, f, g, o), row ``T`` the gradients of
    the initial states ``[dh_0, dc_0, 0, 0]``."""

    n_extra = 2
    saves_output = False

    def infer(self, *specs):
        T, B, H, dtype = self._check(specs)
        return TensorSpec((None if T is None else T + 1, B, 4 * H), dtype)

    def forward(self, xp, *arrays):
        x, _, w_hh, _, _, (_, c0), (ws, g) = self._unpack(arrays)
        T = x.shape[0]
        B, H = ws.shape[1], ws.shape[2]
        dtype = ws.dtype
        g = _cast(g, dtype)
        step = _native_step("lstm_step_grad_f32", (ws, g, w_hh, c0), B, H)
        if step is not None and ws.flags.c_contiguous:
            return self._forward_native(xp, step, w_hh, ws, np.ascontiguousarray(g), _contiguous(c0))
        recurrent = _StepProduct(xp, [_cast(w_hh, dtype)], B)
        h, c, tc, act = _lstm_views(ws, T)
        # d activation / d pre-activation, for all steps at once: s (1 - s) for the sigmoids, 1 - t^2 for g
        square = act * act
        slope = act - square
        xp.subtract(1.0, square[2], out=slope[2])
        # what multiplies dc_t in each gate's gradient: [g, c_{t-1}, i] times their slopes
        coef = xp.empty((3, T, B, H), dtype)
        xp.multiply(act[2], slope[0], out=coef[0])
        earlier, later = (slice(1, None), slice(0, -1)) if self.reverse else (slice(0, -1), slice(1, None))
        first = T - 1 if self.reverse else 0
        xp.multiply(c[earlier], slope[1, later], out=coef[1, later])
        if c0 is None:
            coef[1, first] = 0.0
        else:
            xp.multiply(_cast(c0, dtype), slope[1, first], out=coef[1, first])
        xp.multiply(act[0], slope[2], out=coef[2])
        to_o = tc * slope[3]                       # dh -> o's pre-activation
        to_c = xp.multiply(h, tc)                  # dh -> c: o (1 - tanh(c)^2) = o - h tanh(c)
        xp.subtract(act[3], to_c, out=to_c)
        d = xp.empty((T + 1, B, 4 * H), dtype)
        d4 = d[:T].reshape(T, B, 4, H)
        dh_next, dc = g[T].copy(), g[T + 1].copy()
        dh, tmp = xp.empty((B, H), dtype), xp.empty((B, H), dtype)
        for t in reversed(self._steps(T)):
            xp.add(g[t], dh_next, out=dh)
            xp.multiply(dh, to_o[t], out=d4[t, :, 3])
            xp.multiply(dh, to_c[t], out=tmp)
            dc += tmp
            xp.multiply(dc, coef[:, t], out=d4[t, :, :3].transpose(1, 0, 2))
            dc *= act[1, t]  # dc_{t-1} = dc_t * f_t
            recurrent(d[t], (dh_next,))
        d[T, :, :H] = dh_next
        d[T, :, H:2 * H] = dc
        d[T, :, 2 * H:] = 0.0
        return d

    def _forward_native(self, xp, step, w_hh, ws, g, c0):
        """Backpropagation through time in one native call (gg_lstm_scan_grad_f32), else with one per
        step for the gate gradients (from the workspace's activations, nothing precomputed over the
        sequence) and the recurrent matmul."""
        T = g.shape[0] - 2
        B, H = ws.shape[1], ws.shape[2]
        d = xp.empty((T + 1, B, 4 * H), np.float32)
        dh_next, dc = g[T].copy(), g[T + 1].copy()
        scan = native.kernel("lstm_scan_grad_f32") if _WHOLE_SEQUENCE else None
        if scan is not None and T > 0:
            ok = np.zeros(1, np.int64)
            state = c0 is not None
            scan(ws, g, np.ascontiguousarray(w_hh), c0 if state else dc, dh_next, dc, d, T, B, H,
                 int(self.reverse), int(state), _scan_threads(T, B, H, 4), ok)
            if ok[0]:
                d[T, :, :H] = dh_next
                d[T, :, H:2 * H] = dc
                d[T, :, 2 * H:] = 0.0
                return d
            dh_next, dc = g[T].copy(), g[T + 1].copy()
        recurrent = _StepProduct(xp, [w_hh], B)
        pointers = [native.pointer(a) for a in (ws, g, dh_next, dc if c0 is None else c0, dc, d)]
        first = T - 1 if self.reverse else 0
        for t in reversed(self._steps(T)):
            # where c_{t-1} is (as in the forward kernel): the row of the step before, c0, or zero
            prev = (t + 1 if self.reverse else t - 1) if t != first else (-2 if c0 is None else -1)
            step.raw(*pointers, t, prev, T, B, H)
            recurrent(d[t], (dh_next,))
        d[T, :, :H] = dh_next
        d[T, :, H:2 * H] = dc
        d[T, :, 2 * H:] = 0.0
        return d

    def backward(self, inputs, out, g):
        return _differentiate_reference(self, inputs, g, _lstm_gate_grads)


# ---- GRU ------------------------------------------------------------------------------------------------
def _gru_rows(T: int) -> int:
    return 5 * T + 1


def _gru_views(ws, T: int) -> tuple:
    """The parts of a GRU workspace (rows of (B, H)) that backward reads: ``h`` (T rows, in time
    order), gate activations ``r, z, n`` gate-major as (3, T, B, H), ``W_hn h_{t-1} + b_hn`` (T);
    ``h_n`` sits after ``h``."""
    B, H = ws.shape[1], ws.shape[2]
    return ws[:T], ws[T + 1:4 * T + 1].reshape(3, T, B, H), ws[4 * T + 1:]


class _GRUOp(_Recurrent):
    function = "gru"
    gates = 3
    n_states = 1


class GRUScan(_GRUOp):
    """The GRU recurrence over a whole sequence; returns the workspace (``5T + 1`` rows of (B, H),
    see ``_gru_views``) that ``GRUSequence`` reads its outputs and gradient from. No gradient:
    differentiate through ``GRUSequence`` (which ``gru`` returns)."""

    saves_output = False

    def infer(self, *specs):
        T, B, H, dtype = self._check(specs)
        return TensorSpec((None if T is None else _gru_rows(T), B, H), dtype)

    def forward(self, xp, *arrays):
        T, B, H, dtype = self._check(arrays)  # (eager mode runs no shape rule: check here)
        x, w_ih, w_hh, b_ih, b_hh, (h_prev,), _ = self._unpack([_cast(a, dtype) for a in arrays])
        step = _native_step("gru_step_f32", (x, w_ih, w_hh, b_ih, b_hh, h_prev), B, H)
        if step is not None:
            return self._forward_native(xp, step, x, w_ih, w_hh, b_ih, b_hh, h_prev)
        scales = _GRU_SCALES  # n's two halves stay unscaled
        gx = _project(xp, x, _gate_blocks(xp, w_ih, 3, scales), b_ih, scales, dtype)
        recurrent = _StepProduct(xp, _gate_blocks(xp, w_hh, 3, scales), B)
        b_rz = None if b_hh is None else (b_hh[:2 * H] * 0.5).reshape(2, 1, H)
        b_n = None if b_hh is None else b_hh[2 * H:]
        ws = xp.empty((_gru_rows(T), B, H), dtype)
        h, act, hn = _gru_views(ws, T)
        gh = xp.empty((2, B, H), dtype)  # W_hr h + b_hr, W_hz h + b_hz (halved)
        for t in self._steps(T):
            rz, r, z, n = act[:2, t], act[0, t], act[1, t], act[2, t]
            if h_prev is None:  # W_hh h = 0
                gh[...] = 0.0 if b_rz is None else b_rz
                hn[t] = 0.0 if b_n is None else b_n
            else:
                recurrent(h_prev, (gh[0], gh[1], hn[t]))
                if b_rz is not None:
                    gh += b_rz
                    hn[t] += b_n
            xp.add(gx[:2, t], gh, out=rz)
            xp.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5
            xp.multiply(r, hn[t], out=n)
            n += gx[2, t]
            xp.tanh(n, out=n)
            if h_prev is None:  # h = n + z * (0 - n)
                xp.multiply(z, n, out=h[t])
                xp.subtract(n, h[t], out=h[t])
            else:
                xp.subtract(h_prev, n, out=h[t])
                h[t] *= z
                h[t] += n
            h_prev = h[t]
        ws[T] = h_prev
        return ws

    def _forward_native(self, xp, step, x, w_ih, w_hh, b_ih, b_hh, h0):
        """The scan with one native call per step for everything but the recurrent matmul (as
        ``LSTMScan._forward_native``; the kernel adds the biases, b_hn inside r's product with W_hn h)."""
        T, B, _ = x.shape
        H = w_hh.shape[1]
        gx = blas.matmul(x.reshape(T * B, x.shape[2]), w_ih.T)  # (T B, 3H): every step's input projection
        zero = xp.zeros(3 * H, np.float32)  # (the biases are added by the kernel)
        b_ih, b_hh = [zero if b is None else xp.ascontiguousarray(b) for b in (b_ih, b_hh)]
        scan = native.kernel("gru_scan_f32") if _WHOLE_SEQUENCE else None
        if scan is not None and T > 0:
            ws, ok = xp.empty((_gru_rows(T), B, H), np.float32), np.zeros(1, np.int64)
            w = np.ascontiguousarray(w_hh)
            scan(gx, b_ih, b_hh, w, w if h0 is None else _contiguous(h0), ws, T, B, H, int(self.reverse),
                 int(h0 is not None), _scan_threads(T, B, H, 3), ok)
            if ok[0]:
                return ws
        recurrent = _StepProduct(xp, [w_hh.T], B)  # (it copies its blocks contiguous)
        ws = xp.empty((_gru_rows(T), B, H), np.float32)
        pre = xp.empty((B, 3 * H), np.float32)  # W_hh h_{t-1}
        h_prev = _contiguous(h0)
        pointers = [native.pointer(a) for a in (gx, b_ih, pre, b_hh, pre if h0 is None else h_prev, ws)]
        prev = -2 if h0 is None else -1  # where h_{t-1} is: zero, h0, then the row of step t - 1
        for t in self._steps(T):
            if h_prev is not None:
                recurrent(h_prev, (pre,))
            step.raw(*pointers, t, prev, T, B, H)
            h_prev, prev = ws[t], t
        ws[T] = h_prev
        return ws

    def backward(self, inputs, out, g):
        return (None,) * len(inputs)


class GRUSequence(_GRUOp):
    """The public rows of a ``GRUScan`` workspace: ``(T + 1, B, H)`` = the outputs ``h_t`` in time
    order, then ``h_n``. Inputs: the scan's inputs, then its workspace. Gradient: ``GRUSequenceGrad``,
    then one matmul per weight."""

    n_extra = 1

    def infer(self, *specs):
        T, B, H, dtype = self._check(specs)
        return TensorSpec((None if T is None else T + 1, B, H), dtype)

    def forward(self, xp, *arrays):
        return arrays[-1][:arrays[0].shape[0] + 1]

    def backward(self, inputs, out, g):
        x, w_ih, w_hh, b_ih, b_hh, (h0,), _ = self._unpack(inputs)
        d = GRUSequenceGrad(self.reverse, self.has_bias, self.has_state).apply(*inputs, g)
        d_x, d_h = d[0, :-1], d[1, :-1]
        gx, gw_ih, gw_hh, gb_ih, gb_hh = _projection_grads(x, w_ih, w_hh, b_ih, b_hh, h0, out[:-1], d_x, d_h,
                                                             self.reverse)
        H = w_hh.shape[1]
        result = [gx, gw_ih, gw_hh]
        if self.has_bias:
            result += [gb_ih, gb_hh]
        if self.has_state:
            result += [d[0, -1][:, :H] if h0.requires_grad else None]
        return tuple(result) + (None,)  # (none for the workspace)


class GRUSequenceGrad(_GRUOp):
    """Backpropagation through time of ``GRUSequence``. Inputs: its inputs (with the workspace), then
    the upstream gradient ``g`` of shape (T + 1, B, H). Returns (2, T + 1, B, 3H): ``[0, :T]`` the
    gradients of the input projections ``W_ih x_t + b_ih`` (r, z, n), ``[1, :T]`` those of the
    recurrent projections ``W_hh h_{t-1} + b_hh`` (r, z, n), ``[0, T]`` = ``[dh_0, 0, 0]``, ``[1, T]`` = 0."""

    n_extra = 2
    saves_output = False

    def infer(self, *specs):
        T, B, H, dtype = self._check(specs)
        return TensorSpec((2, None if T is None else T + 1, B, 3 * H), dtype)

    def forward(self, xp, *arrays):
        x, _, w_hh, _, _, (h0,), (ws, g) = self._unpack(arrays)
        T = x.shape[0]
        B, H = ws.shape[1], ws.shape[2]
        dtype = ws.dtype
        g = _cast(g, dtype)
        step = _native_step("gru_step_grad_f32", (ws, g, w_hh, h0), B, H)
        if step is not None and ws.flags.c_contiguous:
            return self._forward_native(xp, step, w_hh, ws, np.ascontiguousarray(g), _contiguous(h0))
        recurrent = _StepProduct(xp, [_cast(w_hh, dtype)], B)
        h, act, hn = _gru_views(ws, T)
        r, z, n = act[0], act[1], act[2]
        # per step, dh_t times these gives: [dz_pre, dn_pre] = dh * [(h_{t-1} - n) z (1 - z), (1 - z)(1 - n^2)]
        coef = xp.empty((2, T, B, H), dtype)
        earlier, later = (slice(1, None), slice(0, -1)) if self.reverse else (slice(0, -1), slice(1, None))
        first = T - 1 if self.reverse else 0
        xp.subtract(h[earlier], n[later], out=coef[0, later])
        if h0 is None:
            xp.negative(n[first], out=coef[0, first])
        else:
            xp.subtract(_cast(h0, dtype), n[first], out=coef[0, first])
        coef[0] *= z - z * z
        xp.multiply(n, n, out=coef[1])
        xp.subtract(1.0, coef[1], out=coef[1])
        coef[1] *= 1.0 - z
        to_r = r - r * r  # dn_pre -> r's pre-activation: (W_hn h + b_hn) r (1 - r)
        to_r *= hn
        d = xp.empty((2, T + 1, B, 3 * H), dtype)
        dgx, dgh = d[0], d[1]
        dgx4 = d[0].reshape(T + 1, B, 3, H)
        dh_next = g[T].copy()
        dh, tmp = xp.empty((B, H), dtype), xp.empty((B, H), dtype)
        for t in reversed(self._steps(T)):
            xp.add(g[t], dh_next, out=dh)
            dn = dgx[t, :, 2 * H:]
            xp.multiply(dh, coef[:, t], out=dgx4[t, :, 1:].transpose(1, 0, 2))
            xp.multiply(dn, to_r[t], out=dgx[t, :, :H])
            dgh[t, :, :2 * H] = dgx[t, :, :2 * H]
            xp.multiply(dn, r[t], out=dgh[t, :, 2 * H:])
            recurrent(dgh[t], (dh_next,))
            xp.multiply(dh, z[t], out=tmp)  # h_t = n + z (h_{t-1} - n): the direct path
            dh_next += tmp
        dgx[T] = 0.0
        dgx[T, :, :H] = dh_next
        dgh[T] = 0.0
        return d

    def _forward_native(self, xp, step, w_hh, ws, g, h0):
        """Backpropagation through time in one native call (gg_gru_scan_grad_f32), else with one per
        step for the gate gradients and the recurrent matmul; the direct path dh z is carried to the
        next step beside the product."""
        T = g.shape[0] - 1
        B, H = ws.shape[1], ws.shape[2]
        d = xp.empty((2, T + 1, B, 3 * H), np.float32)
        mm, carry = g[T].copy(), xp.zeros((B, H), np.float32)  # dh_T = g[T] + mm + carry
        scan = native.kernel("gru_scan_grad_f32") if _WHOLE_SEQUENCE else None
        if scan is not None and T > 0:
            ok = np.zeros(1, np.int64)
            scan(ws, g, np.ascontiguousarray(w_hh), mm if h0 is None else h0, mm, carry, d, T, B, H,
                 int(self.reverse), int(h0 is not None), _scan_threads(T, B, H, 3), ok)
            if ok[0]:
                d[:, T] = 0.0
                xp.add(mm, carry, out=d[0, T, :, :H])
                return d
            mm, carry = g[T].copy(), xp.zeros((B, H), np.float32)
        recurrent = _StepProduct(xp, [w_hh], B)
        pointers = [native.pointer(a) for a in (ws, g, mm, mm if h0 is None else h0, carry, d)]
        first = T - 1 if self.reverse else 0
        for t in reversed(self._steps(T)):
            prev = (t + 1 if self.reverse else t - 1) if t != first else (-2 if h0 is None else -1)
            step.raw(*pointers, t, prev, T, B, H)
            recurrent(d[1, t], (mm,))
        d[:, T] = 0.0
        xp.add(mm, carry, out=d[0, T, :, :H])
        return d

    def backward(self, inputs, out, g):
        return _differentiate_reference(self, inputs, g, _gru_gate_grads)


# ---- the gradient ops' gradient -----------------------------------------------------------------------
def _projection_grads(x, w_ih, w_hh, b_ih, b_hh, h0, y, d_x, d_h, reverse: bool) -> tuple:
    """Gradients of ``x``, the weights and the biases from the gate gradients of every step: ``d_x``
    (T, B, G) of the input projections ``x_t W_ih^T + b_ih``, ``d_h`` of the recurrent ones
    ``h_{t-1} W_hh^T + b_hh`` (the same tensor for the LSTM); ``y`` (T, B, H) are the outputs, so
    ``h_{t-1}`` is ``y`` shifted by one step (``h0``, or zero, before the first)."""
    H, I = w_hh.shape[1], w_ih.shape[1]
    G = d_x.shape[-1]  # (known even where the weights' row count is not)
    dx2 = reshape(d_x, (-1, G))
    gx = reshape_like(matmul(dx2, w_ih), x) if x.requires_grad else None
    gw_ih = matmul(transpose(dx2), reshape(x, (-1, I))) if w_ih.requires_grad else None
    gw_hh = None
    if w_hh.requires_grad:
        later, earlier = (d_h[:-1], y[1:]) if reverse else (d_h[1:], y[:-1])
        gw_hh = matmul(transpose(reshape(later, (-1, G))), reshape(earlier, (-1, H)))
        if h0 is not None:
            gw_hh = gw_hh + matmul(transpose(d_h[-1] if reverse else d_h[0]), h0)
    # (bias gradients as the sums that autograd makes of broadcast gradients: BLAS's, 5x NumPy's here)
    gb_ih = sum_to(dx2, (G,)) if b_ih is not None and b_ih.requires_grad else None
    gb_hh = None
    if b_hh is not None and b_hh.requires_grad:
        gb_hh = gb_ih if d_h is d_x and gb_ih is not None else sum_to(reshape(d_h, (-1, G)), (G,))
    return gx, gw_ih, gw_hh, gb_ih, gb_hh


class _Barrier(Op):
    """The input, unchanged. While ``closed``, its gradient is cut: a nested ``grad()`` taken with
    respect to barriers stops there instead of walking on into the caller's graph. Opened after
    that, it passes gradients through, so results built on it stay differentiable."""

    saves_output = False

    def __init__(self) -> None:
        self.closed = True

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        return x

    def backward(self, inputs, out, g):
        return (None,) if self.closed else (g,)


def _differentiate_reference(op: _Recurrent, inputs: tuple, upstream: Tensor, reference) -> tuple:
    """The backward of a ``...SequenceGrad`` op: the vector-Jacobian product of ``reference`` (the
    op's output written with ordinary ops) with ``upstream``, for every input but the workspace."""
    T = inputs[0].shape[0]
    if T is None:
        raise ShapeError(f"{op.function}: second derivatives need the sequence length, unknown in "
                         f"{_fmt(inputs[0].shape)}")
    record = is_grad_enabled()
    barrier = _Barrier()
    workspace = len(inputs) - 2
    result = [None] * len(inputs)
    try:
        with enable_grad():
            proxies = [None if k == workspace else barrier.apply(v) for k, v in enumerate(inputs)]
            wrt = [k for k, p in enumerate(proxies) if p is not None and p.requires_grad]
            x, w_ih, w_hh, b_ih, b_hh, states, (_, g) = op._unpack(proxies)
            value = reference(op, T, x, w_ih, w_hh, b_ih, b_hh, states, g)
            if wrt and value.requires_grad:
                found = grad([value], [proxies[k] for k in wrt], grad_outputs=[upstream],
                             create_graph=record, allow_unused=True)
                for k, gk in zip(wrt, found):
                    result[k] = gk
    finally:
        barrier.closed = False
    return tuple(result)


def _lstm_gate_grads(op, T, x, w_ih, w_hh, b_ih, b_hh, states, g) -> Tensor:
    """``LSTMSequenceGrad``'s output written with ordinary ops: the LSTM cell loop, then its backward
    through time by hand."""
    H = w_hh.shape[1]
    w_ih_t, w_hh_t = transpose(w_ih), transpose(w_hh)
    h, c = states
    saved = {}
    for t in op._steps(T):
        pre = matmul(x[t], w_ih_t)
        if b_ih is not None:
            pre = pre + (b_ih + b_hh)
        if h is not None:
            pre = pre + matmul(h, w_hh_t)
        i, f = sigmoid(pre[:, :H]), sigmoid(pre[:, H:2 * H])
        cand, o = tanh(pre[:, 2 * H:3 * H]), sigmoid(pre[:, 3 * H:])
        c_new = i * cand if c is None else f * c + i * cand
        tc = tanh(c_new)
        saved[t] = (i, f, cand, o, c, tc)
        h, c = o * tc, c_new
    dh_next, dc = g[T], g[T + 1]
    rows = [None] * T
    for t in reversed(op._steps(T)):
        i, f, cand, o, c_prev, tc = saved[t]
        dh = g[t] + dh_next
        dc = dc + dh * o * (1.0 - tc * tc)
        df = zeros_like(dc) if c_prev is None else dc * c_prev * f * (1.0 - f)
        rows[t] = concatenate([dc * cand * i * (1.0 - i), df, dc * i * (1.0 - cand * cand),
                               dh * tc * o * (1.0 - o)], axis=-1)
        dc = dc * f
        dh_next = matmul(rows[t], w_hh)
    last = concatenate([dh_next, dc, zeros_like(dh_next), zeros_like(dc)], axis=-1)
    return concatenate([stack(rows, 0), expand_dims(last, 0)], axis=0)


def _gru_gate_grads(op, T, x, w_ih, w_hh, b_ih, b_hh, states, g) -> Tensor:
    """``GRUSequenceGrad``'s output written with ordinary ops: the GRU cell loop, then its backward
    through time by hand."""
    H = w_hh.shape[1]
    w_ih_t, w_hh_t = transpose(w_ih), transpose(w_hh)
    (h,) = states
    saved = {}
    for t in op._steps(T):
        gx = matmul(x[t], w_ih_t)
        if b_ih is not None:
            gx = gx + b_ih
        gh = b_hh if h is None else (matmul(h, w_hh_t) if b_hh is None else matmul(h, w_hh_t) + b_hh)
        if gh is None:  # no state, no bias: W_hh h + b_hh = 0
            r, z, hn = sigmoid(gx[:, :H]), sigmoid(gx[:, H:2 * H]), None
            n = tanh(gx[:, 2 * H:])
        else:
            r, z = sigmoid(gx[:, :H] + gh[..., :H]), sigmoid(gx[:, H:2 * H] + gh[..., H:2 * H])
            hn = gh[..., 2 * H:]
            n = tanh(gx[:, 2 * H:] + r * hn)
        saved[t] = (r, z, n, hn, h)
        h = n - z * n if h is None else n + z * (h - n)
    dh_next = g[T]
    rows_x, rows_h = [None] * T, [None] * T
    for t in reversed(op._steps(T)):
        r, z, n, hn, h_prev = saved[t]
        dh = g[t] + dh_next
        dn = dh * (1.0 - z) * (1.0 - n * n)
        dz = dh * ((0.0 - n) if h_prev is None else (h_prev - n)) * z * (1.0 - z)
        dr = zeros_like(dn) if hn is None else dn * hn * r * (1.0 - r)
        rows_x[t] = concatenate([dr, dz, dn], axis=-1)
        rows_h[t] = concatenate([dr, dz, dn * r], axis=-1)
        dh_next = matmul(rows_h[t], w_hh) + dh * z
    zero = zeros_like(dh_next)
    last_x = expand_dims(concatenate([dh_next, zero, zero], axis=-1), 0)
    last_h = expand_dims(concatenate([zero, zero, zero], axis=-1), 0)
    return stack([concatenate([stack(rows_x, 0), last_x], axis=0),
                  concatenate([stack(rows_h, 0), last_h], axis=0)], 0)


# ---- public functions -------------------------------------------------------------------------------------
def _bias_pair(b_ih, b_hh) -> tuple:
    """Both biases or neither: a missing one of a pair is zero."""
    if b_ih is None and b_hh is None:
        return ()
    if b_ih is None:
        b_ih = zeros_like(b_hh)
    if b_hh is None:
        b_hh = zeros_like(b_ih)
    return (b_ih, b_hh)


def lstm(x, w_ih, w_hh, b_ih=None, b_hh=None, h0=None, c0=None, reverse: bool = False) -> Tuple[Tensor, Tensor, Tensor]:
    """One LSTM layer, one direction, over a whole sequence (PyTorch's gates ``i, f, g, o``)::

        i, f, o = sigmoid(x_t W_i*^T + b_i* + h W_h*^T + b_h*)   g = tanh(same for the g rows)
        c_t = f * c_{t-1} + i * g                              h_t = o * tanh(c_t)

    Args:
        x: the inputs, time-major.
        w_ih, w_hh: weights in PyTorch's layout (gate blocks i, f, g, o stacked along axis 0).
        b_ih, b_hh: biases (optional).
        h0, c0: initial states (both, or neither for zeros).
        reverse: run from the last step to the first (the backward half of a bidirectional layer);
            the outputs stay in time order.

    Shapes: x (T, B, I); w_ih (4H, I); w_hh (4H, H); b_ih, b_hh (4H,); h0, c0 (B, H)
    -> (y (T, B, H), h_n (B, H), c_n (B, H)).

    Examples:
        >>> y, h, c = gg.lstm(gg.randn(5, 3, 2), gg.randn(16, 2), gg.randn(16, 4))
        >>> y.shape, h.shape
        ((5, 3, 4), (3, 4))
    """
    if (h0 is None) != (c0 is None):
        raise ValueError("lstm: give both initial states h0 and c0, or neither")
    x, w_ih, w_hh, b_ih, b_hh, h0, c0 = as_tensor_args(x, w_ih, w_hh, b_ih, b_hh, h0, c0)
    biases = _bias_pair(b_ih, b_hh)
    states = () if h0 is None else (h0, c0)
    inputs = (x, w_ih, w_hh) + biases + states
    flags = (bool(reverse), bool(biases), bool(states))
    workspace = LSTMScan(*flags).apply(*inputs)
    out = LSTMSequence(*flags).apply(*inputs, workspace)
    return out[:-2], out[-2], out[-1]


def gru(x, w_ih, w_hh, b_ih=None, b_hh=None, h0=None, reverse: bool = False) -> Tuple[Tensor, Tensor]:
    """One GRU layer, one direction, over a whole sequence (PyTorch's gates ``r, z, n``)::

        r, z = sigmoid(x_t W_i*^T + b_i* + h W_h*^T + b_h*)
        n = tanh(x_t W_in^T + b_in + r * (h W_hn^T + b_hn))      h_t = (1 - z) * n + z * h_{t-1}

    Args: as :func:`lstm` (one initial state ``h0``).

    Shapes: x (T, B, I); w_ih (3H, I); w_hh (3H, H); b_ih, b_hh (3H,); h0 (B, H)
    -> (y (T, B, H), h_n (B, H)).

    Examples:
        >>> y, h = gg.gru(gg.randn(5, 3, 2), gg.randn(12, 2), gg.randn(12, 4))
        >>> y.shape, h.shape
        ((5, 3, 4), (3, 4))
    """
    x, w_ih, w_hh, b_ih, b_hh, h0 = as_tensor_args(x, w_ih, w_hh, b_ih, b_hh, h0)
    biases = _bias_pair(b_ih, b_hh)
    states = () if h0 is None else (h0,)
    inputs = (x, w_ih, w_hh) + biases + states
    flags = (bool(reverse), bool(biases), bool(states))
    workspace = GRUScan(*flags).apply(*inputs)
    out = GRUSequence(*flags).apply(*inputs, workspace)
    return out[:-1], out[-1]


__all__ = ["LSTMScan", "LSTMSequence", "LSTMSequenceGrad", "GRUScan", "GRUSequence", "GRUSequenceGrad",
           "lstm", "gru"]
