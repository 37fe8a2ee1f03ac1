"""``keras.preprocessing.text``: Keras 2's ``Tokenizer`` (word index by frequency, texts to index
sequences or to bag-of-words matrices), ``text_to_word_sequence`` and the hashing ``one_hot``."""
from __future__ import annotations

import json
from collections import OrderedDict, defaultdict
from typing import Any, Iterable, Optional

from graphgrad.backend import np

__all__ = ["Tokenizer", "text_to_word_sequence", "one_hot", "hashing_trick", "tokenizer_from_json"]

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text: str, filters: str = FILTERS, lower: bool = True, split: str = " ") -> list:
    """The words of ``input_text``: lower-cased, each character of ``filters`` made a separator."""
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in input_text.split(split) if w]


def hashing_trick(text: str, n: int, hash_function: Any = None, filters: str = FILTERS, lower: bool = True,
                  split: str = " ") -> list:
    """Each word as ``hash(word) % (n - 1) + 1`` (``hash_function`` ``"md5"`` for a stable hash)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        import hashlib

        def hash_function(w):
            return int(hashlib.md5(w.encode()).hexdigest(), 16)

    return [int(hash_function(w) % (n - 1) + 1) for w in text_to_word_sequence(text, filters, lower, split)]


def one_hot(input_text: str, n: int, filters: str = FILTERS, lower: bool = True, split: str = " ", **kwargs) -> list:
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower, split=split)


class Tokenizer:
    """Keras' ``Tokenizer``: ``fit_on_texts`` numbers the words by decreasing count (1 the most frequent;
    ``oov_token``, if given, is 1); ``texts_to_sequences`` keeps the words numbered below ``num_words``
    (others become the ``oov_token``'s index, or are dropped); ``texts_to_matrix`` /
    ``sequences_to_matrix`` give ``(n, num_words)`` rows in mode ``binary``, ``count``, ``freq`` or ``tfidf``."""

    def __init__(self, num_words: Optional[int] = None, filters: str = FILTERS, lower: bool = True,
                 split: str = " ", char_level: bool = False, oov_token: Optional[str] = None,
                 analyzer: Any = None, document_count: int = 0, **kwargs) -> None:
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.document_count = document_count
        self.word_counts: OrderedDict = OrderedDict()
        self.word_docs: dict = defaultdict(int)
        self.index_docs: dict = defaultdict(int)
        self.word_index: dict = {}
        self.index_word: dict = {}

    def _words(self, text: Any) -> list:
        if self.char_level or isinstance(text, list):
            return [t.lower() for t in text] if self.lower and not isinstance(text, list) else list(text)
        if self.analyzer is not None:
            return list(self.analyzer(text))
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts: Iterable[Any]) -> None:
        for text in texts:
            self.document_count += 1
            seq = self._words(text)
            for w in seq:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(seq):
                self.word_docs[w] += 1
        ordered = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)  # stable, as Keras
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + [w for w, _ in ordered]
        self.word_index = {w: i for i, w in enumerate(vocabulary, start=1)}
        self.index_word = {i: w for w, i in self.word_index.items()}
        self.index_docs = defaultdict(int)
        for w, c in self.word_docs.items():
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences: Iterable[Any]) -> None:
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts: Iterable[Any]) -> list:
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts: Iterable[Any]):
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        for text in texts:
            out = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None and (not self.num_words or i < self.num_words):
                    out.append(i)
                elif oov is not None:
                    out.append(oov)
            yield out

    def sequences_to_texts(self, sequences: Iterable[Any]) -> list:
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        texts = []
        for seq in sequences:
            words = []
            for i in seq:
                w = self.index_word.get(int(i))
                if w is not None and (not self.num_words or int(i) < self.num_words):
                    words.append(w)
                elif oov is not None:
                    words.append(self.index_word[oov])
            texts.append(" ".join(words))
        return texts

    def texts_to_matrix(self, texts: Iterable[Any], mode: str = "binary") -> Any:
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences: Iterable[Any], mode: str = "binary") -> Any:
        if mode not in ("binary", "count", "tfidf", "freq"):
            raise ValueError(f"Tokenizer: unknown mode {mode!r} (binary, count, tfidf, freq)")
        if self.num_words:
            num_words = self.num_words
        elif self.word_index:
            num_words = len(self.word_index) + 1
        else:
            raise ValueError("Tokenizer: specify num_words, or fit the tokenizer on texts first")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Tokenizer: fit on some data before using tfidf mode")
        sequences = list(sequences)
        x = np.zeros((len(sequences), num_words))
        for row, seq in enumerate(sequences):
            if not len(seq):
                continue
            counts: dict = defaultdict(int)
            for j in seq:
                if int(j) < num_words:
                    counts[int(j)] += 1
            for j, c in counts.items():
                if mode == "count":
                    x[row, j] = c
                elif mode == "freq":
                    x[row, j] = c / len(seq)
                elif mode == "binary":
                    x[row, j] = 1
                else:
                    tf = 1 + np.log(c)
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[row, j] = tf * idf
        return x

    def get_config(self) -> dict:
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
                "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(dict(self.word_docs)),
                "index_docs": json.dumps({str(k): v for k, v in self.index_docs.items()}),
                "index_word": json.dumps({str(k): v for k, v in self.index_word.items()}),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs) -> str:
        return json.dumps({"class_name": "Tokenizer", "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string: str) -> Tokenizer:
    config = json.loads(json_string)["config"]
    tables = {k: json.loads(config.pop(k)) for k in ("word_counts", "word_docs", "index_docs", "index_word",
                                                     "word_index")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = OrderedDict(tables["word_counts"])
    tokenizer.word_docs = defaultdict(int, tables["word_docs"])
    tokenizer.index_docs = defaultdict(int, {int(k): v for k, v in tables["index_docs"].items()})
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    tokenizer.word_index = tables["word_index"]
    return tokenizer
