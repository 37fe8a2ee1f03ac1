"""The stateless API, as ``torch.nn.functional``: ``import graphgrad.nn.functional as F``.

Mostly re-exports of the op library (``F.relu is gg.relu``), with PyTorch's argument names where
they differ from the ops' NumPy names (``dim`` instead of ``axis``), plus ``linear`` and
``bilinear``, the functional forms of the layers of those names.

Examples:
    >>> import graphgrad.nn.functional as F
    >>> y = F.relu(F.linear(x, w, b))            # x (N, 4), w (3, 4), b (3,) -> (N, 3)
    >>> loss = F.cross_entropy(y, labels)
"""
from __future__ import annotations

from typing import Optional, Sequence

from graphgrad import backend
from graphgrad.core.op import as_tensor_args
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.core.autograd import is_grad_enabled, note_inplace_write
from graphgrad.ops.inplace import apply_in_place, recorded
from graphgrad.ops.activations_more import (cosine_similarity, gumbel_softmax, hardshrink, pairwise_distance, pdist,
                                            prelu, softshrink, tanhshrink)
from graphgrad.ops.activations_more import rrelu as _rrelu
from graphgrad.ops.attention import scaled_dot_product_attention
from graphgrad.ops.ctc import ctc_loss
from graphgrad.ops.embedding_bag import embedding_bag
from graphgrad.ops.losses_more import (cosine_embedding_loss, gaussian_nll_loss, margin_ranking_loss,
                                       multilabel_margin_loss, multilabel_soft_margin_loss, poisson_nll_loss,
                                       soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)
from graphgrad.ops.composite import elu, hardtanh, leaky_relu, mish, selu, silu, softplus
from graphgrad.ops.unary import gelu
from graphgrad.ops.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from graphgrad.ops.dropout_more import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from graphgrad.ops.elementwise import astype, maximum
from graphgrad.ops.sorting_more import bincount
from graphgrad.ops.im2col import fold, unfold
from graphgrad.ops.linalg import einsum, matmul
from graphgrad.ops.linalg import linear as _linear
from graphgrad.ops.losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                                  hinge_embedding_loss, huber_loss, kl_div, l1_loss, mse_loss, multi_margin_loss,
                                  nll_loss, smooth_l1_loss)
from graphgrad.ops.nn import batch_norm, group_norm, layer_norm
from graphgrad.ops.nn import embedding as _embedding
from graphgrad.ops.nn import dropout as _dropout
from graphgrad.ops.nn import log_softmax as _log_softmax
from graphgrad.ops.nn import softmax as _softmax
from graphgrad.ops.pointwise import celu, glu, hardsigmoid, hardswish, logsigmoid, softmin, softsign, threshold
from graphgrad.ops.pool import adaptive_avg_pool2d, avg_pool2d, interpolate, max_pool2d
from graphgrad.ops.pool_nd import (adaptive_avg_pool1d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
                                   adaptive_max_pool3d, avg_pool1d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                                   max_pool1d, max_pool3d, max_unpool1d, max_unpool2d, max_unpool3d)
from graphgrad.ops.resample import channel_shuffle, pixel_shuffle, pixel_unshuffle
from graphgrad.ops.sampling import affine_grid, grid_sample
from graphgrad.ops.pool_fractional import fractional_max_pool2d, fractional_max_pool3d
from graphgrad.ops.norm_spatial import instance_norm, local_response_norm
from graphgrad.ops.reduce import norm
from graphgrad.ops.shape import flatten, one_hot, pad as _pad, reshape, take, transpose
from graphgrad.ops.unary import relu, sigmoid, tanh

__all__ = [
    # activations
    "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "mish", "softplus", "hardtanh", "sigmoid",
    "tanh", "softmax", "log_softmax", "celu", "glu", "hardsigmoid", "hardswish", "logsigmoid", "softmin", "softsign",
    "threshold", "rrelu", "hardshrink", "softshrink", "tanhshrink", "prelu", "gumbel_softmax", "relu_", "elu_",
    "selu_", "celu_", "hardtanh_", "leaky_relu_", "threshold_", "rrelu_",
    # distances
    "cosine_similarity", "pairwise_distance", "pdist", "rms_norm", "embedding_bag", "ctc_loss",
    # linear, convolution, pooling
    "linear", "bilinear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
    "adaptive_avg_pool2d", "interpolate",
    "conv3d", "conv_transpose3d", "max_pool1d", "max_pool3d", "avg_pool1d", "avg_pool3d", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "upsample",
    "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "instance_norm", "local_response_norm", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "native_channel_shuffle",
    "affine_grid", "grid_sample",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    # attention, normalization, dropout, embedding
    "scaled_dot_product_attention", "batch_norm", "layer_norm", "group_norm", "normalize", "dropout", "embedding",
    "one_hot",
    # losses
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss",
    "huber_loss", "smooth_l1_loss", "hinge_embedding_loss", "multi_margin_loss", "kl_div", "margin_ranking_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss",
    # shape
    "pad", "flatten", "unfold", "fold",
]


def linear(input, weight, bias=None) -> Tensor:
    """``input @ weight.T + bias``.

    Shapes: input (*, in_features); weight (out_features, in_features); bias (out_features,) ->
    (*, out_features).

    Examples:
        >>> F.linear(gg.randn(8, 4), gg.randn(3, 4), gg.zeros(3)).shape
        (8, 3)
    """
    input, weight, bias = as_tensor_args(input, weight, bias)
    if weight.ndim != 2:
        raise ShapeError(f"linear: weight must be 2-D (out_features, in_features), got {tuple(weight.shape)}")
    if input.ndim == 0 or (input.shape[-1] is not None and input.shape[-1] != weight.shape[1]):
        raise ShapeError(f"linear: input of shape {tuple(input.shape)} does not end in in_features = "
                         f"{weight.shape[1]} (weight shape {tuple(weight.shape)})")
    same = input.dtype == weight.dtype and input.dtype.kind == "f" and input.ndim >= 1
    if same and (bias is None or (bias.dtype == input.dtype and bias.ndim == 1)):
        return _linear(input, weight, bias)  # one op: its weight gradient needs no transpose copy
    y = matmul(input, transpose(weight))
    return y if bias is None else y + bias


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``.

    Shapes: input1 (*, in1); input2 (*, in2); weight (out, in1, in2); bias (out,) -> (*, out).
    """
    input1, input2, weight, bias = as_tensor_args(input1, input2, weight, bias)
    if weight.ndim != 3:
        raise ShapeError(f"bilinear: weight must be 3-D (out, in1, in2), got {tuple(weight.shape)}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


def embedding(input, weight, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` for the integer indices ``input``, with PyTorch's options.

    ``max_norm``: the looked-up rows whose ``norm_type``-norm exceeds it are first scaled down to it *in
    the table* (in place, outside autograd, as PyTorch does). ``scale_grad_by_freq``: a row's gradient
    is divided by how often its index occurs in ``input``. ``sparse``: accepted; the gradient is
    dense (graphgrad has no sparse tensors). ``padding_idx``'s row gets no gradient.
    Shapes: input (*) integer, weight (num_embeddings, D) -> (*, D).
    """
    input, weight = as_tensor_args(input, weight)
    if max_norm is not None:
        _renorm_rows(input, weight, max_norm, norm_type)
    out = _embedding(input, weight, padding_idx)
    if not scale_grad_by_freq:
        return out
    counts = bincount(reshape(input, (-1,)), minlength=weight.shape[0])
    inverse = reshape(1.0 / astype(take(counts, input), out.dtype), tuple(input.shape) + (1,))
    # the value of ``out`` unchanged (the second term is exactly zero), its gradient divided by the count
    return out.detach() + (out - out.detach()) * inverse


def _renorm_rows(input: Tensor, weight: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``input`` selects down to ``max_norm`` where their norm exceeds
    it, in place (PyTorch's ``embedding_renorm_``: scale ``max_norm / (norm + 1e-7)``)."""
    if input._data is None or weight._data is None:
        raise ShapeError("embedding: max_norm rescales the table in place when the rows are looked up, which a "
                         "graph being built cannot do; renormalize the table in the training step instead")
    xp = backend.namespace_of(weight._data)
    rows = xp.unique(input._data.reshape(-1))
    table = weight._data[rows]
    norms = xp.linalg.norm(table.astype("float64"), ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = (max_norm / (norms[over] + 1e-7)).astype(table.dtype)
        weight._data[rows[over]] = table[over] * scale[:, None]
        note_inplace_write(weight._data, "embedding's max_norm renormalization")


def relu6(input, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0)


# PyTorch's activations take ``inplace=``; with ``inplace=True`` they behave as their ``name_`` forms:
# the result is written into the input, or, when autograd records (the input in the autograd graph),
# the input becomes the result (ops/inplace.py), as PyTorch's in-place activations do. Either way the
# return value is the input tensor holding the result.
def _writes_back(fn):
    def function(input, *args, **kwargs):
        if isinstance(input, Tensor) and recorded(input):
            return apply_in_place(input, lambda value: fn(value, *args, **kwargs), f"{fn.__name__}_()")
        out = fn(input, *args, **kwargs)
        if isinstance(input, Tensor) and input._data is not None and not (input.requires_grad and is_grad_enabled()):
            input._data[...] = out._data
            note_inplace_write(input._data, f"{fn.__name__}_()")
            return input
        return out

    function.__name__ = fn.__name__ + "_"
    function.__doc__ = f"In place: ``{fn.__name__}(input, ...)`` written into ``input`` (recorded by autograd)."
    return function


def _accepts_inplace(fn):
    in_place = _writes_back(fn)

    def function(input, *args, inplace: bool = False, **kwargs):
        return in_place(input, *args, **kwargs) if inplace else fn(input, *args, **kwargs)

    function.__name__, function.__doc__ = fn.__name__, fn.__doc__
    function.__qualname__, function.__module__ = fn.__name__, __name__  # (pickled by name, as this module's)
    function.__wrapped__ = fn
    return function


relu = _accepts_inplace(relu)
elu = _accepts_inplace(elu)
selu = _accepts_inplace(selu)
celu = _accepts_inplace(celu)
silu = _accepts_inplace(silu)
mish = _accepts_inplace(mish)
hardsigmoid = _accepts_inplace(hardsigmoid)
hardswish = _accepts_inplace(hardswish)
hardtanh = _accepts_inplace(hardtanh)
leaky_relu = _accepts_inplace(leaky_relu)
threshold = _accepts_inplace(threshold)
relu_ = _writes_back(relu)
elu_ = _writes_back(elu)
selu_ = _writes_back(selu)
celu_ = _writes_back(celu)
hardtanh_ = _writes_back(hardtanh)
leaky_relu_ = _writes_back(leaky_relu)
threshold_ = _writes_back(threshold)


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU (random negative slopes in training, their mean otherwise)."""
    return _rrelu(input, lower, upper, training)


rrelu_ = _writes_back(rrelu)


def softmax(input, dim: int = -1) -> Tensor:
    """Softmax along ``dim`` (default: the last axis; PyTorch's implicit choice is not reproduced)."""
    return _softmax(input, axis=dim)


def log_softmax(input, dim: int = -1) -> Tensor:
    """``log(softmax(input, dim))`` computed stably."""
    return _log_softmax(input, axis=dim)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator: Optional[Generator] = None) -> Tensor:
    """Inverted dropout (``inplace`` is accepted for PyTorch compatibility and ignored)."""
    return _dropout(input, p, training=training, generator=generator)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    (input,) = as_tensor_args(input)
    return input / maximum(norm(input, ord=p, axis=dim, keepdims=True), eps)


def pad(input, pad: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad with PyTorch's convention: ``pad`` lists (before, after) pairs starting from the LAST axis,
    ``(left, right, top, bottom, ...)``. ``mode``: 'constant', 'reflect', 'replicate' or 'circular'."""
    (input,) = as_tensor_args(input)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ShapeError(f"pad: pad must have an even length of at most 2 * ndim = {2 * input.ndim}, got {tuple(pad)}")
    pairs = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        pairs[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
    if mode not in modes:
        raise ValueError(f"pad: mode must be one of {sorted(modes)}, got {mode!r}")
    if mode == "constant":
        return _pad(input, tuple(pairs), "constant", value)
    # as PyTorch: reflect at most size - 1 elements, wrap around at most once
    largest = {"reflect": lambda size: size - 1, "circular": lambda size: size}.get(mode)
    for size, pair in zip(input.shape, pairs):
        if largest is not None and size is not None and max(pair) > largest(size):
            raise ShapeError(f"pad: {mode} padding {tuple(pad)} is too large for input of shape {tuple(input.shape)}: "
                             f"at most {largest(size)} on an axis of size {size}")
    return _pad(input, tuple(pairs), modes[mode])



def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: Optional[bool] = None) -> Tensor:
    """PyTorch's deprecated alias of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    """``interpolate(input, size, scale_factor, mode='nearest')`` (PyTorch's deprecated form)."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:
    """``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)`` (PyTorch's
    deprecated form)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _with_indices(pool, n_args: int):
    """PyTorch's ``<pool>_with_indices``: the pooling's (values, indices) whatever ``return_indices`` says."""

    def function(input, *args, return_indices: bool = False, **kwargs):
        args = args[:n_args] + args[n_args + 1:]  # a positional return_indices is ignored too
        kwargs.pop("return_indices", None)
        return pool(input, *args, return_indices=True, **kwargs)

    function.__name__ = f"{pool.__name__}_with_indices"
    function.__doc__ = f"``{pool.__name__}(..., return_indices=True)``: ``(values, indices)``."
    return function


max_pool1d_with_indices = _with_indices(max_pool1d, 5)
max_pool2d_with_indices = _with_indices(max_pool2d, 5)
max_pool3d_with_indices = _with_indices(max_pool3d, 5)
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d, 1)
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d, 1)
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d, 1)
fractional_max_pool2d_with_indices = _with_indices(fractional_max_pool2d, 3)
fractional_max_pool3d_with_indices = _with_indices(fractional_max_pool3d, 3)


#: PyTorch's name of the channel shuffle's kernel (the same function)
native_channel_shuffle = channel_shuffle


def rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor:
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims (see ``nn.RMSNorm``)."""
    from graphgrad.nn.layers.transformer import rms_norm as _rms_norm  # (the layers import this module)

    return _rms_norm(input, normalized_shape, weight, eps)
