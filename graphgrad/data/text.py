"""Character-level text for language models: a file as token ids, and random training windows."""
from __future__ import annotations

import pathlib
from typing import Optional

from graphgrad.core.creation import arange, randint, tensor
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.ops import take


def load_text(path) -> tuple:
    """``(text, vocabulary, ids)``: the file's text, its sorted characters, and the text as int64 ids
    into the vocabulary (shape (len(text),))."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    vocab = sorted(set(text))
    index = {ch: i for i, ch in enumerate(vocab)}
    return text, vocab, tensor([index[ch] for ch in text], dtype="int64")


def random_windows(data: Tensor, length: int, batch_size: int, generator: Optional[Generator] = None) -> tuple:
    """``batch_size`` windows of ``data`` at random offsets: inputs (N, length) and the targets, the same
    windows shifted by one token. Random offsets (rather than consecutive chunks) decorrelate batches."""
    if len(data) < length + 2:
        raise ValueError(f"random_windows: a text of {len(data)} tokens is too short for windows of {length}")
    starts = randint(0, len(data) - length - 1, size=(batch_size, 1), generator=generator)
    windows = take(data, starts + arange(length + 1))  # (N, length + 1)
    return windows[:, :-1], windows[:, 1:]
