"""``keras.layers.TextVectorization``: strings to token indices (``"int"``), or to one row per string over
the vocabulary (``"multi_hot"``, ``"count"``, ``"tf_idf"``), as Keras 3. The text work (standardizing,
splitting, n-grams, the vocabulary that ``adapt`` counts) is plain Python on NumPy string arrays; the
output is a graphgrad Tensor (int64, float32 for tf_idf), so the layer goes first in a model or
prepares the arrays that ``fit`` takes."""
from __future__ import annotations

import collections
import math
import re
from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

from graphgrad.compat.keras.engine import KerasTensor, Layer

__all__ = ["TextVectorization"]

#: Keras' DEFAULT_STRIP_REGEX: the punctuation that "strip_punctuation" removes
STRIP_REGEX = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
MODES = ("int", "multi_hot", "count", "tf_idf", "one_hot")


def _strings(value: Any) -> list:
    """A batch of strings: a list, a NumPy array ``(batch,)`` / ``(batch, 1)``, bytes decoded as UTF-8."""
    if isinstance(value, gg.Tensor):
        value = value.numpy()
    if isinstance(value, (str, bytes)):
        value = [value]
    array = np.asarray(value, dtype=object)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(f"TextVectorization: expected a batch of strings (batch,) or (batch, 1), got shape "
                         f"{array.shape}")
    return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in array.tolist()]


class TextVectorization(Layer):
    """``TextVectorization(max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace",
    ngrams=None, output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
    idf_weights=None)``. ``adapt(texts)`` makes the vocabulary: the most frequent tokens first (ties in
    reverse order of the strings, as Keras), after ``""`` (padding, 0) and ``"[UNK]"`` (out of vocabulary,
    1) in ``"int"`` mode, after ``"[UNK]"`` (0) in the others; ``max_tokens`` counts those special tokens.
    ``"int"`` pads (zeros) or cuts each sequence to ``output_sequence_length`` (else to the longest in
    the batch). ``"tf_idf"`` weighs counts by ``log(1 + documents / (1 + documents with the token))``,
    out-of-vocabulary tokens by the mean weight."""

    def __init__(self, max_tokens: Optional[int] = None, standardize: Any = "lower_and_strip_punctuation",
                 split: Any = "whitespace", ngrams: Any = None, output_mode: str = "int",
                 output_sequence_length: Optional[int] = None, pad_to_max_tokens: bool = False, vocabulary: Any = None,
                 idf_weights: Any = None, sparse: bool = False, ragged: bool = False, encoding: str = "utf-8",
                 name: Optional[str] = None, **kwargs) -> None:
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        if output_mode not in MODES:
            raise ValueError(f"TextVectorization: output_mode must be one of {MODES}, got {output_mode!r}")
        if standardize not in (None, "lower_and_strip_punctuation", "lower", "strip_punctuation") and not callable(
                standardize):
            raise ValueError(f"TextVectorization: unknown standardize {standardize!r}")
        if split not in (None, "whitespace", "character") and not callable(split):
            raise ValueError(f"TextVectorization: unknown split {split!r}")
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                             f"Received output_sequence_length={output_sequence_length}.")
        if ragged or sparse:
            raise ValueError("TextVectorization: ragged / sparse outputs have no graphgrad form; use the padded "
                             "'int' output")
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        self.standardize, self.split = standardize, split
        self.ngrams = (tuple(range(1, int(ngrams) + 1)) if isinstance(ngrams, int) else
                       (tuple(int(n) for n in ngrams) if ngrams is not None else None))
        self.output_mode = "multi_hot" if output_mode == "one_hot" else output_mode
        self.output_sequence_length = None if output_sequence_length is None else int(output_sequence_length)
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self._vocab: list = []
        self._index: dict = {}
        self._idf = None
        object.__setattr__(self, "built", True)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ---- text to tokens ------------------------------------------------------------------------------------------
    def _standardized(self, text: str) -> str:
        if callable(self.standardize):
            return str(self.standardize(text))
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            text = text.lower()
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = STRIP_REGEX.sub("", text)
        return text

    def _tokens(self, text: str) -> list:
        text = self._standardized(text)
        if callable(self.split):
            tokens = [str(t) for t in self.split(text)]
        elif self.split == "whitespace":
            tokens = text.split()
        elif self.split == "character":
            tokens = list(text)
        else:
            tokens = [text]
        if self.ngrams is not None:
            tokens = [" ".join(tokens[i:i + n]) for n in self.ngrams for i in range(len(tokens) - n + 1)]
        return tokens

    # ---- the vocabulary --------------------------------------------------------------------------------------------
    @property
    def _specials(self) -> list:
        return ["", "[UNK]"] if self.output_mode == "int" else ["[UNK]"]

    def adapt(self, data: Any, batch_size: Optional[int] = None, steps: Optional[int] = None) -> None:
        """Count the tokens of ``data`` (strings; a list, an array, or an iterable of batches such as a
        dataset) and keep the ``max_tokens`` most frequent as the vocabulary."""
        counts: collections.Counter = collections.Counter()
        documents: collections.Counter = collections.Counter()
        total = 0
        if isinstance(data, (str, bytes, list, tuple)) or hasattr(data, "shape"):
            batches = [data]
        else:
            batches = data
        for index, batch in enumerate(batches):
            if steps is not None and index >= int(steps):
                break
            if isinstance(batch, tuple):  # (texts, labels) batches
                batch = batch[0]
            for text in _strings(batch):
                tokens = self._tokens(text)
                counts.update(tokens)
                documents.update(set(tokens))
                total += 1
        ordered = [token for token, _ in sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
                   if token not in self._specials]
        room = None if self.max_tokens is None else self.max_tokens - len(self._specials)
        vocab = ordered if room is None else ordered[:max(room, 0)]
        idf = None
        if self.output_mode == "tf_idf":
            idf = np.array([math.log(1.0 + total / (1.0 + documents[t])) for t in vocab], dtype=np.float32)
        self._set(vocab, idf)

    def _set(self, tokens: list, idf: Any) -> None:
        self._vocab = self._specials + list(tokens)
        self._index = {token: i for i, token in enumerate(self._vocab)}
        if self.output_mode == "tf_idf":
            if idf is None:
                raise ValueError("TextVectorization: output_mode='tf_idf' needs idf_weights with a vocabulary")
            idf = np.asarray(idf, dtype=np.float32)
            oov = float(idf.mean()) if idf.size else 0.0
            self._idf = np.concatenate([[oov], idf]).astype(np.float32)

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Set the vocabulary (a list of tokens or a file with one a line), without the special tokens (or
        starting with them); ``idf_weights`` for ``"tf_idf"``, one per token."""
        if isinstance(vocabulary, str):
            with open(vocabulary, encoding="utf-8") as handle:
                vocabulary = [line.rstrip("\n") for line in handle]
        tokens = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in list(vocabulary)]
        specials = self._specials
        if tokens[:len(specials)] == specials:
            tokens = tokens[len(specials):]
            if idf_weights is not None and len(idf_weights) == len(tokens) + len(specials):
                idf_weights = list(idf_weights)[len(specials):]
        if len(set(tokens)) != len(tokens):
            raise ValueError("TextVectorization: the vocabulary has repeated tokens")
        self._set(tokens, idf_weights)

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        return list(self._vocab) if include_special_tokens else self._vocab[len(self._specials):]

    def vocabulary_size(self) -> int:
        return len(self._vocab)

    # ---- calling ------------------------------------------------------------------------------------------------------
    def _width(self) -> int:
        if self.pad_to_max_tokens and self.max_tokens is not None:
            return self.max_tokens
        return len(self._vocab)

    def _encode(self, texts: list):
        if not self._vocab:
            raise ValueError("TextVectorization: no vocabulary yet; call adapt(texts) or pass vocabulary=")
        unknown = self._index["[UNK]"]
        ids = [[self._index.get(t, unknown) for t in self._tokens(text)] for text in texts]
        if self.output_mode == "int":
            length = self.output_sequence_length
            if length is None:
                length = max([len(row) for row in ids] + [0])
            out = np.zeros((len(ids), length), dtype=np.int64)
            for r, row in enumerate(ids):
                row = row[:length]
                out[r, :len(row)] = row
            return gg.tensor(out)
        counts = np.zeros((len(ids), self._width()), dtype=np.float32)
        for r, row in enumerate(ids):
            np.add.at(counts[r], np.asarray(row, dtype=np.int64), 1.0)
        if self.output_mode == "multi_hot":
            return gg.tensor((counts > 0).astype(np.int64))
        if self.output_mode == "count":
            return gg.tensor(counts.astype(np.int64))
        weights = np.zeros(self._width(), dtype=np.float32)
        weights[:len(self._idf)] = self._idf
        return gg.tensor((counts * weights).astype(np.float32))

    def __call__(self, inputs: Any, *args, **kwargs):
        if isinstance(inputs, KerasTensor):
            return self._call_symbolic(inputs)
        return self._encode(_strings(inputs))

    def forward(self, inputs):
        return self._encode(_strings(inputs))

    def compute_output_shape(self, input_shape: Any) -> tuple:
        if self.output_mode == "int":
            return (input_shape[0], self.output_sequence_length)
        return (input_shape[0], self._width())

    def get_config(self) -> dict:
        """The constructor's arguments, with the vocabulary (and idf weights) that ``adapt`` made."""
        config = super().get_config()
        config["kwargs"]["vocabulary"] = self.get_vocabulary(include_special_tokens=False)
        if self._idf is not None:
            config["kwargs"]["idf_weights"] = [float(v) for v in self._idf[1:]]
        config.update({"max_tokens": self.max_tokens, "output_mode": self.output_mode,
                       "output_sequence_length": self.output_sequence_length, "ngrams": self.ngrams,
                       "pad_to_max_tokens": self.pad_to_max_tokens,
                       "standardize": self.standardize if isinstance(self.standardize, str) or self.standardize is None
                       else None, "split": self.split if isinstance(self.split, str) or self.split is None else None})
        return config
