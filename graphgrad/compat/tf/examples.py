"""``tensorflow.examples.tutorials.mnist.input_data``: TF1's MNIST reader for its tutorials.

``input_data.read_data_sets(train_dir, one_hot=False)`` reads the four original IDX files
(``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``, ``t10k-images-idx3-ubyte.gz``,
``t10k-labels-idx1-ubyte.gz``, raw or gzip) from ``train_dir`` with :func:`graphgrad.data.read_idx`,
and gives ``mnist.train`` / ``mnist.validation`` / ``mnist.test``, each with ``images`` (float32 in
``[0, 1]``, flattened to 784 columns unless ``reshape=False``), ``labels`` (ints, or one-hot rows),
``num_examples`` and ``next_batch(batch_size)`` (reshuffled every epoch), as TensorFlow's does.
Nothing is downloaded: a missing file raises ``FileNotFoundError`` naming it and where to get it.
"""
from __future__ import annotations

import collections
import os
import types
from typing import Any, Optional

from graphgrad.backend import np

import graphgrad as _gg

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])
_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
_SOURCE = "https://storage.googleapis.com/cvdf-datasets/mnist/ (or http://yann.lecun.com/exdb/mnist/)"


class DataSet:
    """One split: ``images``, ``labels``, ``num_examples``, ``epochs_completed`` and ``next_batch``."""

    def __init__(self, images: Any, labels: Any, fake_data: bool = False, one_hot: bool = False,
                 dtype: Any = None, reshape: bool = True, seed: Optional[int] = None) -> None:
        self.fake_data, self.one_hot = fake_data, one_hot
        if fake_data:
            self._num_examples = 10000
        else:
            images = np.asarray(images)
            if len(images) != len(labels):
                raise ValueError(f"DataSet: {len(images)} images but {len(labels)} labels")
            self._num_examples = len(images)
            if reshape and images.ndim == 4:  # (N, 28, 28, 1) -> (N, 784)
                images = images.reshape(len(images), -1)
            if np.dtype(_gg.as_dtype(dtype) if dtype is not None else np.float32).kind == "f":
                images = images.astype(np.float32)
                if images.max(initial=0) > 1:
                    images = images * np.float32(1.0 / 255.0)
        self._images, self._labels = images, labels
        self._epochs_completed, self._index_in_epoch = 0, 0
        self._rng = np.random.RandomState(seed)

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size: int, fake_data: bool = False, shuffle: bool = True) -> tuple:
        """The next ``batch_size`` examples; the order is shuffled at the start of every epoch, and a batch
        that crosses the end of an epoch is completed from the next one."""
        if fake_data or self.fake_data:
            image = [1.0] * 784
            label = [1] + [0] * 9 if self.one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            images_rest, labels_rest = self._images[start:], self._labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate((images_rest, self._images[:end]), axis=0),
                    np.concatenate((labels_rest, self._labels[:end]), axis=0))
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]

    def _shuffle(self) -> None:
        order = self._rng.permutation(self._num_examples)
        self._images, self._labels = self._images[order], self._labels[order]


def dense_to_one_hot(labels_dense: Any, num_classes: int = 10) -> np.ndarray:
    labels_dense = np.asarray(labels_dense).astype(np.int64).ravel()
    out = np.zeros((len(labels_dense), num_classes), dtype=np.float64)
    out[np.arange(len(labels_dense)), labels_dense] = 1
    return out


def _path(folder: str, name: str) -> str:
    for candidate in (name + ".gz", name):
        path = os.path.join(folder, candidate)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"read_data_sets: {name}.gz (or {name}) is not in {os.path.abspath(folder)}; nothing "
                            f"is downloaded here: put the four MNIST files there (from {_SOURCE})")


def read_data_sets(train_dir: str, fake_data: bool = False, one_hot: bool = False, dtype: Any = None,
                   reshape: bool = True, validation_size: int = 5000, seed: Optional[int] = None,
                   source_url: Any = None) -> Datasets:
    """``Datasets(train, validation, test)`` from the MNIST files in ``train_dir``; the first
    ``validation_size`` training images are the validation split, as in TensorFlow."""
    if fake_data:
        fake = DataSet([], [], fake_data=True, one_hot=one_hot, seed=seed)
        return Datasets(fake, fake, fake)
    folder = os.path.expanduser(os.fspath(train_dir))
    arrays = [_gg.data.read_idx(_path(folder, name)) for name in _FILES]
    train_images, train_labels, test_images, test_labels = arrays
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels), dense_to_one_hot(test_labels)
    else:
        train_labels, test_labels = train_labels.astype(np.uint8), test_labels.astype(np.uint8)
    train_images, test_images = train_images[..., None], test_images[..., None]  # (N, 28, 28, 1)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"validation_size should be between 0 and {len(train_images)}, got {validation_size}")
    kw = dict(one_hot=one_hot, dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(DataSet(train_images[validation_size:], train_labels[validation_size:], **kw),
                    DataSet(train_images[:validation_size], train_labels[:validation_size], **kw),
                    DataSet(test_images, test_labels, **kw))


# ---- tensorflow.examples.tutorials.mnist.mnist: the model module of TF1's fully_connected_feed.py --------------
NUM_CLASSES, IMAGE_SIZE = 10, 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _tf():
    import graphgrad.compat.tf as tf

    return tf


def inference(images: Any, hidden1_units: int, hidden2_units: int) -> Any:
    """Logits of two ReLU layers and a linear one (scopes ``hidden1``, ``hidden2``, ``softmax_linear``,
    each with ``weights`` and ``biases``)."""
    tf = _tf()
    x, width = images, IMAGE_PIXELS
    for scope, units, act in (("hidden1", hidden1_units, True), ("hidden2", hidden2_units, True),
                              ("softmax_linear", NUM_CLASSES, False)):
        with tf.name_scope(scope):
            weights = tf.Variable(tf.truncated_normal([width, units], stddev=1.0 / np.sqrt(float(width))),
                                  name="weights")
            biases = tf.Variable(tf.zeros([units]), name="biases")
            x = tf.matmul(x, weights) + biases
            x = tf.nn.relu(x) if act else x
        width = units
    return x


def loss(logits: Any, labels: Any) -> Any:
    """The mean sparse softmax cross-entropy of integer ``labels``."""
    tf = _tf()
    return tf.losses.sparse_softmax_cross_entropy(labels=tf.to_int64(labels), logits=logits)


def training(loss: Any, learning_rate: float) -> Any:
    """A gradient-descent step that also counts ``global_step``; the loss goes to a scalar summary."""
    tf = _tf()
    tf.summary.scalar("loss", loss)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step=global_step)


def evaluation(logits: Any, labels: Any) -> Any:
    """How many of the batch's ``labels`` are the top logit (an int32 count)."""
    tf = _tf()
    return tf.reduce_sum(tf.cast(tf.nn.in_top_k(logits, labels, 1), tf.int32))


model = types.ModuleType("tensorflow.examples.tutorials.mnist.mnist", "TF1's MNIST model module (inference, loss, "
                         "training, evaluation).")
for _name in ("NUM_CLASSES", "IMAGE_SIZE", "IMAGE_PIXELS", "inference", "loss", "training", "evaluation"):
    setattr(model, _name, globals()[_name])

input_data = types.ModuleType("tensorflow.examples.tutorials.mnist.input_data", __doc__)
for _name in ("DataSet", "Datasets", "dense_to_one_hot", "read_data_sets"):
    setattr(input_data, _name, globals()[_name])
mnist = types.ModuleType("tensorflow.examples.tutorials.mnist")
mnist.input_data = input_data
mnist.mnist = model
tutorials = types.ModuleType("tensorflow.examples.tutorials")
tutorials.mnist = mnist
