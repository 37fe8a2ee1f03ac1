"""TF1 programs as public projects write them (TensorFlow-Examples, TF1's tutorials) run on
graphgrad.compat.tf: one unit test for each gap such a program hit, then the programs of
tests/compat/tf_realworld/ (written in the style of the real ones, small and quick) run end to end
and must learn."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad.compat.tf as tf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS_DIR = os.path.join(HERE, "tf_realworld")
sys.path.insert(0, PROGRAMS_DIR)
from mnist_files import write_mnist  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield


def _run_installed(code: str, cwd: str = ROOT) -> str:
    """``code`` in a fresh interpreter after ``install()`` (``import tensorflow`` resolves to the facade)."""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", "import graphgrad.compat.tf as t; t.install()\n" + code],
                          capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# ---- the gaps, one test each ----------------------------------------------------------------------------
def test_tf_mnist_input_data_reads_the_idx_files(tmp_path):
    from graphgrad.compat.tf.examples import input_data

    write_mnist(str(tmp_path), train=600, test=100)
    mnist = input_data.read_data_sets(str(tmp_path), one_hot=True, validation_size=100)
    assert mnist.train.images.shape == (500, 784) and mnist.train.images.dtype == np.float32
    assert mnist.train.labels.shape == (500, 10) and mnist.test.num_examples == 100
    assert mnist.validation.num_examples == 100 and 0 <= mnist.train.images.min() <= mnist.train.images.max() <= 1
    seen = np.concatenate([mnist.train.next_batch(128)[1] for _ in range(8)])  # crosses an epoch's end
    assert seen.shape == (1024, 10) and mnist.train.epochs_completed == 2
    plain = input_data.read_data_sets(str(tmp_path), reshape=False, validation_size=0)
    assert plain.train.images.shape == (600, 28, 28, 1) and plain.train.labels.dtype == np.uint8
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        input_data.read_data_sets(str(tmp_path / "missing"))


def test_tf_tutorial_imports_resolve_after_install():
    out = _run_installed("from tensorflow.examples.tutorials.mnist import input_data\n"
                         "from tensorflow.contrib import rnn\n"
                         "import tensorflow.contrib.layers as layers\n"
                         "print(callable(input_data.read_data_sets), rnn.BasicLSTMCell.__name__,\n"
                         "      callable(rnn.static_bidirectional_rnn), callable(layers.fully_connected))")
    assert out.split() == ["True", "BasicLSTMCell", "True", "True"]


def test_tf_summary_filewriter_works_after_install(tmp_path):
    # TensorBoard's writer must not take the installed namespace for TensorFlow (it has no tf.io.gfile)
    out = _run_installed("import tensorflow as tf\n"
                         f"w = tf.summary.FileWriter({str(tmp_path)!r}, graph=tf.get_default_graph())\n"
                         "w.close(); print('ok')")
    assert out.strip() == "ok" and os.listdir(tmp_path)


def test_tf_gfile_names():
    assert tf.gfile.Exists(ROOT) and not tf.gfile.Exists(os.path.join(ROOT, "no-such"))
    assert tf.io.gfile.isdir(ROOT) and "README.md" in tf.gfile.ListDirectory(ROOT)


def test_tf_arg_min_and_arg_max_aliases():
    x = tf.constant([[3.0, 1.0, 2.0]])
    with tf.Session() as sess:
        assert sess.run([tf.arg_min(x, 1), tf.arg_max(x, 1)]) == [1, 0]


def test_tf_get_shape_gives_a_tensor_shape():
    x = tf.placeholder(tf.float32, [None, 7, 4])
    shape = x.get_shape()
    assert shape.as_list() == [None, 7, 4] and shape[1].value == 7 and shape[0].value is None
    assert shape.ndims == 3 and shape[1:].as_list() == [7, 4] and shape == (None, 7, 4)
    assert not shape.is_fully_defined() and shape[1:].num_elements() == 28
    w = tf.Variable(tf.zeros([12, 3]))
    assert w.get_shape().as_list()[0] == 12 and w.get_shape()[1] * 2 == 6
    assert tf.placeholder(tf.float32).get_shape().ndims is None


def test_tf_random_values_with_tensor_parameters():
    # TensorFlow-Examples' gan.py: tf.random_normal(shape, stddev=1. / tf.sqrt(shape[0] / 2.))
    w = tf.Variable(tf.random_normal([400, 50], stddev=1. / tf.sqrt(400 / 2.)))
    t = tf.truncated_normal([400, 50], stddev=tf.sqrt(0.5), mean=tf.constant(1.0))
    u = tf.random_uniform([400, 50], minval=-tf.sqrt(3.0), maxval=tf.sqrt(3.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w, t, u = sess.run([w, t, u])
    assert abs(w.std() - 1 / np.sqrt(200)) < 0.01 and abs(t.mean() - 1) < 0.03 and np.abs(t - 1).max() <= 2 * 0.71
    assert abs(u.std() - 1) < 0.05 and np.abs(u).max() <= np.sqrt(3)


def test_tf_layers_reused_in_a_scope_find_their_variables():
    # TensorFlow-Examples' dcgan.py: discriminator(x) then discriminator(fake, reuse=True), each making
    # conv2d, conv2d_1, dense, dense_1 inside variable_scope('Discriminator')
    def discriminator(x, reuse=False):
        with tf.variable_scope("Discriminator", reuse=reuse):
            x = tf.layers.conv2d(x, 4, 3)
            x = tf.layers.conv2d(x, 4, 3)
            return tf.layers.dense(tf.layers.dense(tf.layers.flatten(x), 8), 2)

    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    real, fake = discriminator(images), discriminator(images * 0.5, reuse=True)
    names = [v.name for v in tf.trainable_variables()]
    assert len(names) == 8 and "Discriminator/conv2d_1/kernel:0" in names and "Discriminator/dense_1/bias:0" in names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([real, fake], {images: np.ones((2, 8, 8, 1))})
    assert a.shape == b.shape == (2, 2)
    with pytest.raises(ValueError, match="already exists"):
        discriminator(images)  # a third time without reuse: TF1's error


def test_tf_integer_placeholder_takes_float_labels():
    # dcgan.py feeds np.ones([batch]) (float64) to a tf.int32 placeholder, as TF1's session allows
    labels = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess:
        out = sess.run(labels * 2, feed_dict={labels: np.concatenate([np.ones(2), np.zeros(2)])})
    assert out.dtype == np.int32 and out.tolist() == [2, 2, 0, 0]


def test_tf_static_bidirectional_rnn():
    steps = [tf.placeholder(tf.float32, [None, 3]) for _ in range(4)]
    fw, bw = tf.nn.rnn_cell.BasicLSTMCell(5), tf.nn.rnn_cell.BasicLSTMCell(5)
    outputs, state_fw, state_bw = tf.contrib.rnn.static_bidirectional_rnn(fw, bw, steps, dtype=tf.float32)
    assert len(outputs) == 4 and outputs[0].shape == (None, 10)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names[0].startswith("bidirectional_rnn/bw/") and names[-1].startswith("bidirectional_rnn/fw/")
    data = np.random.RandomState(0).randn(4, 2, 3).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, h_bw = sess.run([outputs, state_bw.h], {s: d for s, d in zip(steps, data)})
        # the backward half of the first output is the backward cell's last output (it read the sequence reversed)
        np.testing.assert_allclose(out[0][:, 5:], h_bw, rtol=1e-5)
        # fed the reversed sequence, the forward and backward halves swap (the two cells' weights aside)
        assert not np.allclose(out[0][:, :5], out[0][:, 5:])


def test_tf_data_iterators_feed_the_runs_that_need_them():
    # TensorFlow-Examples' tensorflow_dataset_api.py: X, Y = iterator.get_next(); sess.run(train_op)
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    y = np.arange(10)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2.0, b + 1)).batch(4)
    assert dataset.output_shapes[0].as_list() == [None, 1] and dataset.output_types[1] == np.int64
    iterator = dataset.make_initializable_iterator()
    a, b = iterator.get_next()
    total = tf.reduce_sum(a)
    unrelated = tf.constant(1.0) + 1
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        assert sess.run(unrelated) == 2.0  # a run that does not need the element does not take one
        first = sess.run([a, b])
        assert first[0].ravel().tolist() == [0, 2, 4, 6] and first[1].tolist() == [1, 2, 3, 4]
        assert sess.run(total) == 8 + 10 + 12 + 14
        assert sess.run(b).tolist() == [9, 10]  # the smaller last batch
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(total)
        sess.run(iterator.initializer)  # starts over
        assert sess.run(b).tolist() == [1, 2, 3, 4]


def test_tf_data_from_placeholders_shuffle_repeat_and_reinitializable_iterators():
    features = tf.placeholder(tf.float32, [None, 2])
    train = tf.data.Dataset.from_tensor_slices(features).shuffle(100, seed=1).repeat().batch(3)
    test = tf.data.Dataset.from_tensor_slices(features).batch(5)
    iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    batch = iterator.get_next()
    train_init, test_init = iterator.make_initializer(train), iterator.make_initializer(test)
    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    with tf.Session() as sess:
        sess.run(train_init, feed_dict={features: data})
        rows = np.concatenate([sess.run(batch) for _ in range(5)])  # 15 rows: three shuffled rounds
        assert sorted(rows[:, 0].tolist()) == sorted(data[:, 0].tolist() * 3)
        assert rows[:5, 0].tolist() != data[:, 0].tolist()
        sess.run(test_init, feed_dict={features: data[:4]})
        assert sess.run(batch)[:, 1].tolist() == [1, 3, 5, 7]
    one_shot = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [sess.run(one_shot) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(one_shot)


def test_tf_string_constant_and_device_scope():
    # TensorFlow-Examples' helloworld.py and word2vec.py's `with tf.device('/cpu:0'):`
    with tf.device("/cpu:0"):
        hello = tf.constant("Hello, TensorFlow!")
        words = tf.constant(["a", "bc"])
    with tf.Session() as sess:
        assert sess.run(hello) == b"Hello, TensorFlow!"
        assert sess.run(words).tolist() == [b"a", b"bc"]
    assert hello.dtype == tf.string


@pytest.mark.parametrize("loss", ["nce_loss", "sampled_softmax_loss"])
def test_tf_sampled_losses_train_embeddings(loss):
    # word2vec's tf.nn.nce_loss (sampled_softmax_loss the same way): word i predicts word (i + 1) % 10
    tf.set_random_seed(0)
    vocabulary, size = 50, 8
    embedding = tf.Variable(tf.random_uniform([vocabulary, size], -1.0, 1.0))
    weights = tf.Variable(tf.truncated_normal([vocabulary, size], stddev=1.0 / np.sqrt(size)))
    biases = tf.Variable(tf.zeros([vocabulary]))
    x, y = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None, 1])
    per_example = getattr(tf.nn, loss)(weights=weights, biases=biases, labels=y, inputs=tf.nn.embedding_lookup(
        embedding, x), num_sampled=10, num_classes=vocabulary)
    assert per_example.shape == (None,)
    cost = tf.reduce_mean(per_example)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(cost)
    scores = tf.matmul(tf.nn.embedding_lookup(embedding, x), weights, transpose_b=True) + biases
    words = np.arange(40) % 10
    feed = {x: words, y: ((words + 1) % 10)[:, None]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = np.mean([sess.run(cost, feed) for _ in range(5)])
        for _ in range(300):
            sess.run(train, feed)
        last = np.mean([sess.run(cost, feed) for _ in range(5)])
        best = sess.run(tf.argmax(scores, 1), feed)
    assert last < first / 3
    assert (best == (words + 1) % 10).mean() >= 0.9  # the full softmax's best class is the true next word



def test_tf_placeholder_shape_given_as_an_int_and_the_pre_1_0_names(tmp_path):
    # fully_connected_feed.py: tf.placeholder(tf.int32, shape=(batch_size)), tf.merge_all_summaries,
    # tf.train.SummaryWriter, tf.initialize_all_variables
    labels = tf.placeholder(tf.int32, shape=(5))
    assert labels.shape == (5,) and tf.placeholder(tf.float32, tf.TensorShape([None, 3])).shape == (None, 3)
    tf.scalar_summary("twice", tf.reduce_sum(tf.mul(labels, 2)))
    merged = tf.merge_all_summaries()
    writer = tf.train.SummaryWriter(str(tmp_path))
    with tf.Session() as sess:
        sess.run(tf.initialize_all_variables())
        writer.add_summary(sess.run(merged, {labels: [1, 2, 3, 4, 5]}), 0)
    writer.close()
    assert tf.sub(3, 1) is not None and os.listdir(tmp_path)


def test_tf_tutorial_mnist_model_module():
    from graphgrad.compat.tf.examples import model as mnist

    images, labels = tf.placeholder(tf.float32, [20, mnist.IMAGE_PIXELS]), tf.placeholder(tf.int32, [20])
    logits = mnist.inference(images, 16, 8)
    loss = mnist.loss(logits, labels)
    train_op, correct = mnist.training(loss, 0.1), mnist.evaluation(logits, labels)
    assert sorted(v.name for v in tf.trainable_variables())[:2] == ["hidden1/biases:0", "hidden1/weights:0"]
    rng = np.random.RandomState(0)
    x, y = rng.rand(20, 784).astype(np.float32), np.arange(20) % 10
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(100):
            sess.run(train_op, {images: x, labels: y})
        assert sess.run(correct, {images: x, labels: y}) >= 18
        assert tf.train.global_step(sess, tf.train.get_global_step()) == 100



def test_tf_image_and_text_summaries_and_run_options(tmp_path):
    # mnist_with_summaries.py: tf.summary.image, tf.RunOptions(trace_level=FULL_TRACE), add_run_metadata
    x = tf.placeholder(tf.float32, [None, 4, 4, 1])
    tf.summary.image("input", x, 2)
    tf.summary.text("note", tf.constant("hello"))
    tf.summary.scalar("mean", tf.reduce_mean(x))
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter(str(tmp_path))
    options, metadata = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), tf.RunMetadata()
    with tf.Session() as sess:
        value = sess.run(merged, {x: np.ones((3, 4, 4, 1))}, options=options, run_metadata=metadata)
    writer.add_run_metadata(metadata, "step000")
    writer.add_summary(value, 0)
    writer.close()
    assert value[0].shape == (3, 4, 4, 1) and value[2] == 1.0 and os.listdir(tmp_path)



def test_tf_split_of_an_axis_known_when_run_and_nested_config_options():
    # nlintz's 07_lstm.py: tf.split(tf.reshape(XT, [-1, 28]), 28, 0) of a batch of unknown size, and
    # session_conf.gpu_options.allow_growth = True
    x = tf.placeholder(tf.float32, [None, 3])
    pieces = tf.split(x, 4, 0)
    columns = tf.split(tf.transpose(x), 2, axis=1)
    assert len(pieces) == 4 and pieces[0].shape == (None, 3)
    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    config.graph_options.optimizer_options.global_jit_level = 1
    data = np.arange(24, dtype=np.float32).reshape(8, 3)
    with tf.Session(config=config) as sess:
        out = sess.run(pieces + columns, {x: data})
    np.testing.assert_array_equal(out[1], data[2:4])
    np.testing.assert_array_equal(out[5], data[4:].T)
    assert config.gpu_options.allow_growth is True



def test_tf_cond_selects_with_a_placeholder_predicate():
    # the is_training switch of TF1 batch-norm code: tf.cond(is_training, lambda: ..., lambda: ...)
    x, training = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.bool, [])
    out = tf.cond(training, lambda: x * 2.0, lambda: x - 1.0)
    pair = tf.cond(training, lambda: (x, tf.reduce_sum(x)), lambda: (-x, tf.reduce_max(x)))
    w = tf.Variable(3.0)
    grad = tf.gradients(tf.reduce_sum(tf.cond(training, lambda: w * x, lambda: x)), [w])[0]
    assert tf.cond(True, lambda: 1, lambda: 2) == 1  # a Python predicate picks when built
    data = np.array([[1.0, 2.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {x: data, training: True}).tolist() == [[2.0, 4.0]]
        assert sess.run(out, {x: data, training: False}).tolist() == [[0.0, 1.0]]
        assert sess.run(pair, {x: data, training: False})[1] == 2.0
        assert sess.run(grad, {x: data, training: True}) == 3.0 and sess.run(grad, {x: data, training: False}) == 0
        assert sess.run(tf.case([(tf.less(training, True), lambda: tf.constant(5))], default=lambda: tf.constant(6)),
                        {training: True}) == 6


def test_tf_streaming_metrics_and_local_variables():
    labels, predictions = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.int64, [None])
    accuracy, update = tf.metrics.accuracy(labels=labels, predictions=predictions)
    mse, mse_update = tf.metrics.mean_squared_error(labels, predictions)
    assert len(tf.local_variables()) == 4 and not tf.trainable_variables()
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        assert sess.run(update, {labels: [1, 2], predictions: [1, 0]}) == 0.5
        sess.run([update, mse_update], {labels: [1, 2], predictions: [1, 2]})
        assert sess.run(accuracy) == 0.75
        sess.run(tf.local_variables_initializer())  # starts over
        assert sess.run(accuracy) == 0.0


def test_tf_moving_average_categorical_sampling_and_helpers():
    w = tf.Variable(4.0)
    ema = tf.train.ExponentialMovingAverage(decay=0.5)
    average_op = ema.apply([w])
    samples = tf.multinomial(tf.log([[0.1, 0.9], [0.9, 0.1]]), 400)
    drawn = tf.random.categorical(tf.zeros([1, 3]), 5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, 0.0))
        sess.run(average_op)
        assert sess.run(ema.average(w)) == 2.0
        rows = sess.run(samples).mean(axis=1)
        assert rows[0] > 0.8 and rows[1] < 0.2 and sess.run(drawn).shape == (1, 5)
        assert sorted(sess.run(tf.random_shuffle(tf.range(6))).tolist()) == list(range(6))
        assert sess.run(tf.count_nonzero(tf.constant([[0, 1], [2, 0]]), axis=1)).tolist() == [1, 1]
        np.testing.assert_allclose(sess.run(tf.matrix_inverse(tf.eye(2) * 4.0)), np.eye(2) / 4)
        assert sess.run(tf.map_fn(lambda row: tf.reduce_sum(row), tf.constant([[1., 2.], [3., 4.]]))).tolist() == [3, 7]
        a, b = sess.run(tf.tuple([tf.constant(1), tf.constant(2)]))
        assert (a, b) == (1, 2) and sess.run(tf.div_no_nan(1.0, 0.0)) == 0.0


def test_tf_sequence_losses():
    logits = tf.placeholder(tf.float32, [2, 3, 4])
    targets = tf.placeholder(tf.int32, [2, 3])
    loss = tf.contrib.seq2seq.sequence_loss(logits, targets, tf.ones([2, 3]))
    per_step = tf.contrib.legacy_seq2seq.sequence_loss_by_example(
        tf.unstack(logits, axis=1), tf.unstack(targets, axis=1), [tf.ones([2])] * 3)
    rng = np.random.RandomState(0)
    z, t = rng.randn(2, 3, 4).astype(np.float32), rng.randint(0, 4, (2, 3))
    expected = -(z - np.log(np.exp(z).sum(-1, keepdims=True)))[np.arange(2)[:, None], np.arange(3), t]
    with tf.Session() as sess:
        got, by_example = sess.run([loss, per_step], {logits: z, targets: t})
    np.testing.assert_allclose(got, expected.mean(), rtol=1e-5)
    np.testing.assert_allclose(by_example, expected.mean(axis=1), rtol=1e-5)



def test_tf_shape_as_list_after_install():
    # DeepLearningZeroToAll's back-prop labs: assert hypothesis.shape.as_list() == Y.shape.as_list()
    out = _run_installed("import tensorflow as tf\n"
                         "x = tf.placeholder(tf.float32, [None, 3])\n"
                         "y = tf.layers.dense(x, 2)\n"
                         "print(y.shape.as_list(), y.shape[1].value, y.shape[0], y.shape == (None, 2))")
    assert out.strip() == "[None, 2] 2 None True"


def test_tf_lists_of_tensors_are_packed_and_a_shapeless_training_flag():
    # DeepLearningZeroToAll's zoo classifier: tf.stop_gradient([Y_one_hot]); its tf.layers CNN:
    # tf.layers.dropout(x, training=tf.placeholder(tf.bool)) (a placeholder without a shape)
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    packed = tf.stop_gradient([a, b])
    mean = tf.reduce_mean([tf.reduce_sum(a), tf.reduce_sum(b)])
    training = tf.placeholder(tf.bool)
    x = tf.placeholder(tf.float32, [None, 4, 4, 2])
    dropped = tf.layers.dropout(x, rate=0.5, training=training)
    after = tf.layers.conv2d(dropped, 3, 2)  # needs the channels of the dropout's output
    normed = tf.layers.batch_normalization(x, training=training)
    assert packed.shape == (2, 2) and dropped.shape == (None, 4, 4, 2) and normed.shape == x.shape
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(packed).tolist() == [[1, 2], [3, 4]] and sess.run(mean) == 5.0
        out = sess.run(after, {x: np.ones((1, 4, 4, 2)), training: False})
    assert out.shape == (1, 3, 3, 3)



def test_tf_contrib_layers_arg_scope_batch_norm_and_dropout():
    # DeepLearningZeroToAll's lab-10-7: arg_scope([fully_connected], normalizer_fn=batch_norm,
    # normalizer_params={'is_training': train_mode, 'decay': 0.9, 'updates_collections': None})
    from graphgrad.compat.tf.contrib import contrib

    fully_connected, batch_norm, dropout = (contrib.layers.fully_connected, contrib.layers.batch_norm,
                                            contrib.layers.dropout)
    x, train_mode = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.bool, name="train_mode")
    params = {"is_training": train_mode, "decay": 0.5, "updates_collections": None}
    with contrib.framework.arg_scope([fully_connected], activation_fn=tf.nn.relu, biases_initializer=None,
                                     normalizer_fn=batch_norm, normalizer_params=params):
        hidden = dropout(fully_connected(x, 4, scope="h1"), 0.5, is_training=train_mode)
        out = fully_connected(hidden, 2, activation_fn=None, scope="out")
    names = sorted(v.name for v in tf.global_variables())
    assert "h1/BatchNorm/moving_mean:0" in names and "h1/weights:0" in names and "h1/biases:0" not in names
    assert not any("gamma" in n for n in names) and not tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    moving = [v for v in tf.global_variables() if v.name == "h1/BatchNorm/moving_mean:0"][0]
    data = np.random.RandomState(0).rand(8, 3).astype(np.float32) + 1.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(out, {x: data, train_mode: False})
        assert not sess.run(moving).any()  # no update when not training
        sess.run(out, {x: data, train_mode: True})
        assert sess.run(moving).any()  # updated by the training run itself
        assert sess.run(out, {x: data, train_mode: False}).shape == (8, 2)



def test_tf_rnn_decoder_and_feeding_a_state_structure():
    # char-rnn-tensorflow: legacy_seq2seq.rnn_decoder(inputs, cell.zero_state(...), cell, loop_function)
    # and sess.run(..., {model.initial_state: state}) with the state tuple as one feed key
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(4)])
    steps = [tf.placeholder(tf.float32, [2, 3]) for _ in range(3)]
    initial = cell.zero_state(2, tf.float32)
    outputs, state = tf.contrib.legacy_seq2seq.rnn_decoder(steps, initial, cell, scope="rnnlm")
    project = tf.get_variable("project", [4, 3])
    looped, _ = tf.contrib.legacy_seq2seq.rnn_decoder(steps, initial, cell, scope="rnnlm",
                                                      loop_function=lambda prev, i: tf.matmul(prev, project))
    assert len(outputs) == 3 and len(tf.trainable_variables()) == 7  # both decoders share the cells
    data = np.random.RandomState(0).rand(3, 2, 3).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {s: d for s, d in zip(steps, data)}
        first, final = sess.run([outputs, state], feed)
        again = sess.run(outputs, {**feed, initial: final})  # a structure key, fed a structure
        assert not np.allclose(again[0], first[0])
        differ = sess.run(looped, feed)
    np.testing.assert_allclose(differ[0], first[0], rtol=1e-6)  # the first step reads the real input
    assert not np.allclose(differ[2], first[2])


# ---- whole programs ---------------------------------------------------------------------------------------------
#: program -> (arguments, the least final accuracy); "{mnist}" is a folder of MNIST-format files, "{tmp}" a
#: fresh folder
PROGRAMS = {
    "mnist_deep.py": (["--data_dir", "{mnist}"], 0.8),
    "fully_connected_feed.py": (["--input_data_dir", "{mnist}", "--log_dir", "{tmp}/logs"], 0.8),
    "dataset_cnn.py": ([], 0.85),
    "bidirectional_rnn.py": ([], 0.7),
    "word2vec.py": ([], 0.7),
    "mnist_with_summaries.py": (["--data_dir", "{mnist}", "--summaries_dir", "{tmp}/logs"], 0.8),
    "char_rnn.py": (["--save_dir", "{tmp}/save"], 0.8),
}


@pytest.fixture(scope="module")
def mnist_folder(tmp_path_factory):
    return write_mnist(str(tmp_path_factory.mktemp("mnist")))


def _accuracy(stdout: str) -> float:
    what, value = stdout.strip().splitlines()[-1].split()
    assert what == "accuracy", stdout[-500:]
    return float(value)


@pytest.mark.parametrize("program", PROGRAMS)
def test_tf_realworld_program_learns(program, mnist_folder, tmp_path):
    args, least = PROGRAMS[program]
    args = [a.format(mnist=mnist_folder, tmp=tmp_path) for a in args]
    out = _run_installed("import runpy, sys\n"
                         f"sys.argv = {[os.path.join(PROGRAMS_DIR, program)] + args!r}\n"
                         "runpy.run_path(sys.argv[0], run_name='__main__')", cwd=str(tmp_path))
    assert _accuracy(out) >= least, out[-1500:]
    if program == "mnist_with_summaries.py":
        assert all(os.listdir(tmp_path / "logs" / part) for part in ("train", "test"))
    if program == "fully_connected_feed.py":
        assert "global step 400" in out and "model.ckpt-399.npz" in os.listdir(tmp_path / "logs")
        assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path / "logs"))
