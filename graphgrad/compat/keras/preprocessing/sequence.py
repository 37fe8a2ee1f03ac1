"""``keras.preprocessing.sequence``: ``pad_sequences`` (as ``keras.utils.pad_sequences``) and
``make_sampling_table`` / ``skipgrams`` for word2vec-style programs."""
from __future__ import annotations

import random as _py_random
from typing import Any, Optional

from graphgrad.backend import np
from graphgrad.compat.keras.utils import pad_sequences

__all__ = ["pad_sequences", "make_sampling_table", "skipgrams"]


def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> Any:
    """The probability of keeping the word of each rank (Zipf's law, word2vec's subsampling), as Keras."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence: Any, vocabulary_size: int, window_size: int = 4, negative_samples: float = 1.0,
              shuffle: bool = True, categorical: bool = False, sampling_table: Any = None,
              seed: Optional[int] = None) -> tuple:
    """``(couples, labels)``: (word, context) pairs within ``window_size`` labelled 1, and
    ``negative_samples`` times as many (word, random word) pairs labelled 0; index 0 is skipped."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < _py_random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0 and couples:
        num_negative = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        _py_random.shuffle(words)
        couples += [[words[i % len(words)], _py_random.randint(1, vocabulary_size - 1)] for i in range(num_negative)]
        labels += [[1, 0] if categorical else 0] * num_negative
    if shuffle:
        seed = _py_random.randint(0, 10_000_000) if seed is None else seed
        _py_random.Random(seed).shuffle(couples)
        _py_random.Random(seed).shuffle(labels)
    return couples, labels
