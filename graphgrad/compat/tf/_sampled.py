"""``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss`` (word2vec's losses) and the log-uniform
candidate sampler they use, composed from graphgrad ops.

Each run draws ``num_sampled`` classes from the log-uniform (Zipfian) distribution
``P(k) = log((k + 2) / (k + 1)) / log(num_classes + 1)`` that TensorFlow's default sampler uses, over
classes sorted by decreasing frequency. They are drawn with replacement (TensorFlow draws distinct
classes by default), so a class's expected count is ``num_sampled * P(k)``; the logits are corrected by
subtracting its log, as in TensorFlow."""
from __future__ import annotations

import math
from typing import Any

import graphgrad as _gg

Tensor = _gg.Tensor


def _log_uniform_sample(num_sampled: int, range_max: int) -> Tensor:
    """``num_sampled`` int64 class ids in ``[0, range_max)``, drawn anew on every run (inverse CDF)."""
    zeros = _gg.constant(_gg.zeros((int(num_sampled),), dtype=_gg.float64))
    u = _gg.rand_like(zeros, 0.0, 1.0)
    ids = _gg.floor(_gg.exp(u * math.log(range_max + 1.0))) - 1.0
    return _gg.astype(_gg.clip(ids, 0, range_max - 1), _gg.int64)


def _expected_count(ids: Tensor, num_sampled: int, range_max: int) -> Tensor:
    k = _gg.astype(ids, _gg.float32)
    return num_sampled * _gg.log((k + 2.0) / (k + 1.0)) / math.log(range_max + 1.0)


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: Any = None, name: Any = None) -> tuple:
    """``(sampled_candidates, true_expected_count, sampled_expected_count)`` (drawn with replacement)."""
    with _gg.get_default_graph().as_default():
        sampled = _log_uniform_sample(num_sampled, range_max)
        return (sampled, _expected_count(true_classes, num_sampled, range_max),
                _expected_count(sampled, num_sampled, range_max))


def _sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                    num_true: int, remove_accidental_hits: bool, subtract_log_q: bool) -> tuple:
    """``(logits, labels)``: each example's ``num_true`` true classes then the ``num_sampled`` drawn ones."""
    if isinstance(weights, (list, tuple)):
        if len(weights) != 1:
            raise NotImplementedError("sampled losses: partitioned weights (a list of several) are not supported")
        weights = weights[0]
    if isinstance(biases, (list, tuple)):
        biases = biases[0]
    labels = _gg.astype(labels, _gg.int64)
    labels = _gg.reshape(labels, (-1, num_true))
    sampled = _log_uniform_sample(num_sampled, num_classes)
    dim = weights.shape[-1]
    true_w = _gg.reshape(_gg.take(weights, _gg.reshape(labels, (-1,)), axis=0), (-1, num_true, dim))
    true_logits = _gg.sum(_gg.expand_dims(inputs, 1) * true_w, axis=-1) + _gg.take(biases, labels, axis=0)
    sampled_logits = _gg.matmul(inputs, _gg.transpose(_gg.take(weights, sampled, axis=0))) + \
        _gg.take(biases, sampled, axis=0)
    if remove_accidental_hits:
        hits = _gg.any(_gg.equal(_gg.expand_dims(labels, -1), sampled), axis=1)  # (batch, num_sampled)
        sampled_logits = _gg.where(hits, _gg.full_like(sampled_logits, -1e30), sampled_logits)
    if subtract_log_q:
        true_logits = true_logits - _gg.log(_expected_count(labels, num_sampled, num_classes))
        sampled_logits = sampled_logits - _gg.log(_expected_count(sampled, num_sampled, num_classes))
    logits = _gg.concatenate([true_logits, sampled_logits], axis=1)
    targets = _gg.concatenate([_gg.ones_like(true_logits) / num_true, _gg.zeros_like(sampled_logits)], axis=1)
    return logits, _gg.stop_gradient(targets)


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss") -> Tensor:
    """Noise-contrastive estimation: one loss per example (sigmoid cross-entropies of its true classes
    against ``num_sampled`` classes drawn for the batch)."""
    if sampled_values is not None:
        raise NotImplementedError("nce_loss: sampled_values= is not supported (the classes are drawn here)")
    with _gg.get_default_graph().as_default():
        logits, targets = _sampled_logits(weights, biases, labels, inputs, int(num_sampled), int(num_classes),
                                          int(num_true), remove_accidental_hits, True)
        per = _gg.relu(logits) - logits * targets + _gg.log1p(_gg.exp(-_gg.abs(logits)))
        return _gg.sum(per, axis=1)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                         num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = True,
                         partition_strategy: str = "mod", name: str = "sampled_softmax_loss",
                         seed: Any = None) -> Tensor:
    """Softmax cross-entropy over each example's true classes and ``num_sampled`` drawn ones."""
    if sampled_values is not None:
        raise NotImplementedError("sampled_softmax_loss: sampled_values= is not supported (the classes are drawn "
                                  "here)")
    with _gg.get_default_graph().as_default():
        logits, targets = _sampled_logits(weights, biases, labels, inputs, int(num_sampled), int(num_classes),
                                          int(num_true), remove_accidental_hits, True)
        return -_gg.sum(targets * _gg.log_softmax(logits, axis=1), axis=1)
