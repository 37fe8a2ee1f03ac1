"""Variable-length sequences for the recurrent layers, as PyTorch's ``torch.nn.utils.rnn``:
``pad_sequence``, ``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``,
``pack_sequence``, ``unpack_sequence``, ``unpad_sequence``.

A :class:`PackedSequence` holds the steps of a batch of sequences time-major with the finished
sequences left out (``data`` (sum of lengths, *), ``batch_sizes`` (T,): how many sequences are still
running at each step), with ``sorted_indices``/``unsorted_indices`` relating its longest-first order to
the caller's. ``RNN``/``LSTM``/``GRU`` accept one: each sequence then runs over its own length (the
outputs past it are zeros and ``h_n`` is its state at its last step), computed group by group over the
sequences of equal length so that the fused recurrent kernels still run batched.
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.shape import concatenate, pad, stack, swapaxes, take


class PackedSequence(NamedTuple):
    """Sequences of different lengths packed time-major (see the module docstring). Shapes: data
    (sum(lengths), *), batch_sizes (T,) int64 on the CPU, sorted/unsorted_indices (N,) or None."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor] = None
    unsorted_indices: Optional[Tensor] = None

    def to(self, *args, **kwargs) -> "PackedSequence":
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _lengths(lengths) -> np.ndarray:
    values = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths, dtype=np.int64).reshape(-1)
    if values.size and values.min() <= 0:
        raise ShapeError(f"pack_padded_sequence: every length must be positive, got {values.tolist()}")
    return values


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes (L_i, *) into (L_max, N, *) (``batch_first``: (N, L_max, *)), padding
    each at the end (``padding_side='left'``: at the start) with ``padding_value``. Differentiable."""
    sequences = [_as_tensor(s) for s in sequences]
    if not sequences:
        raise ShapeError("pad_sequence: expects at least one sequence")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        where = (0, missing) if padding_side == "right" else (missing, 0)
        padded.append(pad(s, [where] + [(0, 0)] * (s.ndim - 1), constant_values=padding_value) if missing else s)
    out = stack(padded, 0)  # (N, L, *)
    return out if batch_first else swapaxes(out, 0, 1)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, N, *) (``batch_first``: (N, L, *)) whose sequence ``n`` is
    ``lengths[n]`` long. With ``enforce_sorted`` the lengths must be decreasing; otherwise they are
    sorted here (and ``unsorted_indices`` restores the order). Differentiable in ``input``."""
    input = _as_tensor(input)
    lengths = _lengths(lengths)
    if batch_first:
        input = swapaxes(input, 0, 1)
    if lengths.size != input.shape[1]:
        raise ShapeError(f"pack_padded_sequence: {lengths.size} lengths for a batch of {input.shape[1]}")
    if lengths.max() > input.shape[0]:
        raise ShapeError(f"pack_padded_sequence: a length of {lengths.max()} exceeds the {input.shape[0]} steps")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise ShapeError(f"pack_padded_sequence: lengths {lengths.tolist()} must be sorted in decreasing "
                             "order with enforce_sorted=True (or pass enforce_sorted=False)")
        order = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        input = take(input, Tensor(order), axis=1)
    steps = int(lengths[0])
    batch_sizes = np.array([(lengths > t).sum() for t in range(steps)], dtype=np.int64)
    # the packed rows: step t's first batch_sizes[t] sequences, time-major
    rows = np.concatenate([t * input.shape[1] + np.arange(b) for t, b in enumerate(batch_sizes)])
    flat = input[:steps].reshape((steps * input.shape[1],) + tuple(input.shape[2:]))
    data = take(flat, Tensor(rows), axis=0)
    sorted_indices = None if order is None else Tensor(order)
    unsorted_indices = None if order is None else Tensor(np.argsort(order, kind="stable"))
    return PackedSequence(data, Tensor(batch_sizes), sorted_indices, unsorted_indices)


def _sizes(sequence: PackedSequence) -> tuple:
    batch_sizes = np.asarray(sequence.batch_sizes.numpy(), dtype=np.int64)
    n = int(batch_sizes[0])
    lengths = np.array([(batch_sizes > i).sum() for i in range(n)], dtype=np.int64)
    return batch_sizes, lengths


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Optional[int] = None) -> tuple:
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``, padded (T, N, *) (or
    ``batch_first``) in the caller's original order, lengths (N,) int64. ``total_length`` pads to that
    many steps."""
    batch_sizes, lengths = _sizes(sequence)
    steps, n = len(batch_sizes), int(batch_sizes[0])
    total = steps if total_length is None else int(total_length)
    if total < steps:
        raise ShapeError(f"pad_packed_sequence: total_length={total_length} is less than the longest sequence ({steps})")
    data = sequence.data
    feature = tuple(data.shape[1:])
    # each padded slot (t, i) reads packed row offset[t] + i when i < batch_sizes[t], else a padding row
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
    padding_row = data.shape[0]
    index = np.full((total, n), padding_row, dtype=np.int64)
    for t, b in enumerate(batch_sizes):
        index[t, :b] = offsets[t] + np.arange(b)
    with_padding = concatenate([data, Tensor(np.full((1,) + feature, padding_value), dtype=data.dtype)], axis=0)
    padded = take(with_padding, Tensor(index.reshape(-1)), axis=0).reshape((total, n) + feature)
    if sequence.unsorted_indices is not None:
        padded = take(padded, sequence.unsorted_indices, axis=1)
        lengths = lengths[np.asarray(sequence.unsorted_indices.numpy())]
    return (swapaxes(padded, 0, 1) if batch_first else padded), Tensor(lengths)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (L_i, *) (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences (L_i, *) of a padded batch."""
    padded = padded_sequences if batch_first else swapaxes(padded_sequences, 0, 1)
    return [padded[i, :int(n)] for i, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences (L_i, *) of a packed batch, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpack_sequence", "unpad_sequence"]
