"""ONNX import converters: signal processing.

DFT and STFT, the window generators (HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix.

graphgrad has no complex dtype, and neither has ONNX here: a signal carries a trailing axis of size 1
(real) or 2 (real, imaginary). Transform lengths are known at import time, so a DFT is a product with
real cosine and sine matrices built with NumPy at import time, in the signal's dtype, applied with
graphgrad's matmul: the transform runs eagerly, in a static graph or in a trace, and stays
differentiable. Windows and mel weight matrices depend only on import-time constants (sizes, rates)
and are built as constants of the requested ``output_datatype``.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import const_tensor, converter, np_dtype
from graphgrad.io.onnx.ops_shape import _axis, _int


# ---- the transform on the last axis ----------------------------------------------------------------------
def _angles(rows: int, cols: int, n: int):
    """``2*pi*j*k/n`` for ``j < rows``, ``k < cols``: shape (rows, cols), float64."""
    jk = np.arange(rows).reshape(-1, 1) * np.arange(cols).reshape(1, -1)
    # reducing j*k modulo n first keeps the angles below 2*pi, where cos and sin are accurate
    return 2 * np.pi * (jk % n) / n


def _conjugate_symmetric_counts(bins: int, n: int):
    """How often each of the first ``bins`` bins occurs in a length-``n`` spectrum rebuilt from its
    conjugate-symmetric half: once for the DC bin (and the Nyquist bin of an even ``n``), twice otherwise."""
    counts = np.full(bins, 2.0)
    counts[0] = 1.0
    if n % 2 == 0 and bins > n // 2:
        counts[n // 2] = 1.0
    return counts


def _dft_last(re, im, n: int, inverse: bool, onesided: bool):
    """The DFT of the signal ``re + i*im`` along its last axis, zero-padded or truncated to ``n`` samples.

    ``re``, ``im``: (..., length); ``im`` is None for a real signal. Forward (``inverse`` False):
    ``y[k] = sum_t x[t] exp(-2*pi*i*k*t/n)`` for the ``n`` bins, or the first ``n // 2 + 1`` when
    ``onesided``. Inverse: ``x[t] = 1/n sum_k y[k] exp(2*pi*i*k*t/n)``; with ``onesided`` the input
    holds the first bins of a conjugate-symmetric spectrum and the output is real (IRFFT).

    Returns ``(real, imaginary)``, each (..., bins) (``n`` samples for an inverse); the imaginary part
    is None for an IRFFT.
    """
    length = re.shape[-1]
    if inverse and onesided:
        rows, cols = min(length, n // 2 + 1), n
    else:
        rows, cols = min(length, n), (n // 2 + 1 if onesided else n)
    if length > rows:  # samples (or bins) past the transform's length take no part
        re = re[..., :rows]
        im = None if im is None else im[..., :rows]

    angles = _angles(rows, cols, n)
    sign = 1.0 if inverse else -1.0
    scale = np.full((rows, 1), 1.0 / n if inverse else 1.0)
    if inverse and onesided:
        scale = scale * _conjugate_symmetric_counts(rows, n).reshape(-1, 1)
    cos = const_tensor((scale * np.cos(angles)).astype(re.dtype))
    sin = const_tensor((scale * sign * np.sin(angles)).astype(re.dtype))

    # (a + ib)(cos + i*sin) = (a cos - b sin) + i(b cos + a sin)
    real = G.matmul(re, cos)
    if im is not None:
        real = real - G.matmul(im, sin)
    if inverse and onesided:  # the inverse of a conjugate-symmetric spectrum is real
        return real, None
    imag = G.matmul(re, sin)
    if im is not None:
        imag = imag + G.matmul(im, cos)
    return real, imag


def _split_complex(node, x):
    """``x`` (..., 1 or 2) as its real and imaginary parts (...,); the imaginary part of a real signal is None."""
    parts = x.shape[-1] if x.ndim else None
    if parts not in (1, 2):
        raise node.error(f"expects a last axis of size 1 (real) or 2 (complex), got shape {x.shape}")
    return x[..., 0], (x[..., 1] if parts == 2 else None)


def _join_complex(real, imag):
    """Real and imaginary parts (...,) as one tensor (..., 2), or (..., 1) when ``imag`` is None."""
    if imag is None:
        return G.expand_dims(real, -1)
    return G.stack([real, imag], axis=-1)


# ---- DFT and STFT --------------------------------------------------------------------------------------
@converter("DFT")
def dft(node, x, dft_length=None, axis=None):
    """Input (..., signal, ..., 1 or 2) -> (..., bins, ..., 2), or (..., n, ..., 1) for an IRFFT.

    Opset 17-19 take ``axis`` as an attribute (default 1), opset 20 as input 2 (default -2)."""
    if node.opset >= 20:
        axis = _int(node.const(2)) if axis is not None else -2
    else:
        axis = node.attr("axis", 1)
    axis = _axis(node, axis, x.ndim)
    if axis == x.ndim - 1:
        raise node.error(f"axis {axis} is the real/imaginary axis; the DFT runs over one of the axes before it")
    length = x.shape[axis]
    if length is None:
        raise node.error(f"needs the length of axis {axis} when the model is imported, got shape {x.shape}")

    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    if dft_length is not None:
        n = _int(node.const(1))
    else:
        n = 2 * (length - 1) if inverse and onesided else length
    if n < 1:
        raise node.error(f"the DFT length must be positive, got {n}")

    re, im = _split_complex(node, x)
    re = G.moveaxis(re, axis, -1)
    im = None if im is None else G.moveaxis(im, axis, -1)
    out = _join_complex(*_dft_last(re, im, n, inverse, onesided))
    return G.moveaxis(out, -2, axis)


@converter("STFT")
def stft(node, signal, frame_step, window=None, frame_length=None):
    """Signal (batch, length, 1 or 2) -> (batch, frames, bins, 2), with ``frames = (length -
    frame_length) // frame_step + 1`` and ``bins = frame_length // 2 + 1`` when ``onesided`` (the
    default), else ``frame_length``. The frame length is ``frame_length``, else the window's, else
    the signal's."""
    if signal.ndim != 3:
        raise node.error(f"expects a signal of rank 3 (batch, length, 1 or 2), got shape {signal.shape}")
    length = signal.shape[1]
    if length is None:
        raise node.error(f"needs the signal's length when the model is imported, got shape {signal.shape}")
    step = _int(node.const(1))
    if window is not None and (window.ndim != 1 or window.shape[0] is None):
        raise node.error(f"expects a 1-D window of a length known at import, got shape {window.shape}")
    if frame_length is not None:
        size = _int(node.const(3))
    else:
        size = window.shape[0] if window is not None else length
    if window is not None and window.shape[0] != size:
        raise node.error(f"the window's length {window.shape[0]} differs from frame_length {size}")
    if step < 1 or not 1 <= size <= length:
        raise node.error(f"needs frame_step >= 1 and 1 <= frame_length <= signal length {length}, "
                         f"got frame_step {step} and frame_length {size}")

    frames = (length - size) // step + 1
    sample_of = np.arange(frames).reshape(-1, 1) * step + np.arange(size)  # (frames, size)
    framed = G.take(signal, const_tensor(sample_of), axis=1)  # (batch, frames, size, 1 or 2)
    if window is not None:
        framed = framed * G.reshape(window, (size, 1))
    re, im = _split_complex(node, framed)
    return _join_complex(*_dft_last(re, im, size, inverse=False, onesided=bool(node.attr("onesided", 1))))


# ---- windows ----------------------------------------------------------------------------------------------
def _cosine_window(node, coefficients) -> Tensor:
    """The generalized cosine window ``w[t] = sum_m (-1)^m a_m cos(2*pi*m*t/N)`` of input 0's length,
    with ``N`` the length (``periodic``, the default) or the length - 1 (symmetric). Shape (size,)."""
    size = _int(node.const(0))
    if size < 0:
        raise node.error(f"the window size must not be negative, got {size}")
    dtype = np_dtype(node.attr("output_datatype", 1))
    period = size if node.attr("periodic", 1) else size - 1
    if period < 1:  # a symmetric window of one sample: 1, as in NumPy and torch
        return const_tensor(np.ones(size, dtype=dtype))
    t = np.arange(size)
    w = sum((-1) ** m * a * np.cos(2 * np.pi * m * t / period) for m, a in enumerate(coefficients))
    return const_tensor(np.asarray(w).astype(dtype))


@converter("HannWindow")
def hann_window(node, size):
    """``0.5 - 0.5 cos(2*pi*t/N)``: shape (size,)."""
    return _cosine_window(node, (0.5, 0.5))


@converter("HammingWindow")
def hamming_window(node, size):
    """``25/46 - 21/46 cos(2*pi*t/N)`` (the exact coefficients ONNX specifies): shape (size,)."""
    return _cosine_window(node, (25 / 46, 21 / 46))


@converter("BlackmanWindow")
def blackman_window(node, size):
    """``0.42 - 0.5 cos(2*pi*t/N) + 0.08 cos(4*pi*t/N)``: shape (size,)."""
    return _cosine_window(node, (0.42, 0.5, 0.08))


# ---- mel filter banks ----------------------------------------------------------------------------------------
def _hertz_to_mel(hertz):
    return 2595 * np.log1p(hertz / 700) / np.log(10)


def _mel_to_hertz(mel):
    return 700 * np.expm1(mel * np.log(10) / 2595)


@converter("MelWeightMatrix")
def mel_weight_matrix(node, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
    """Triangular filters from linear DFT bins to mel bands: shape (dft_length // 2 + 1, num_mel_bins),
    each triangle peaking at 1."""
    bands, n, rate = _int(node.const(0)), _int(node.const(1)), _int(node.const(2))
    low, high = float(np.asarray(node.const(3)).reshape(-1)[0]), float(np.asarray(node.const(4)).reshape(-1)[0])
    if bands < 1 or n < 1 or rate < 1:
        raise node.error(f"needs positive num_mel_bins, dft_length and sample_rate, got {bands}, {n}, {rate}")

    # band edges equally spaced on the mel scale, as DFT bin indices; the step divides by bands + 2 (not
    # bands + 1) and the bins by (n + 1) / rate, as ONNX Runtime and the ONNX reference do
    mel_step = (_hertz_to_mel(high) - _hertz_to_mel(low)) / (bands + 2)
    edges_hz = _mel_to_hertz(_hertz_to_mel(low) + mel_step * np.arange(bands + 2))
    edges = np.floor_divide((n + 1) * edges_hz, rate).astype(np.int64)
    left, center, right = edges[:-2], edges[1:-1], edges[2:]

    spectrum_bin = np.arange(n // 2 + 1).reshape(-1, 1)
    rising = (spectrum_bin - left) / np.maximum(center - left, 1)
    falling = (right - spectrum_bin) / np.maximum(right - center, 1)
    weights = np.where((spectrum_bin >= center) & (spectrum_bin < right), falling,
                       np.where((spectrum_bin >= left) & (spectrum_bin <= center), rising, 0.0))
    # a band whose left edge is its center has a rising edge of one bin: 1 at the center
    weights = np.where((spectrum_bin == center) & (center == left), 1.0, weights)
    return const_tensor(weights.astype(np_dtype(node.attr("output_datatype", 1))))
