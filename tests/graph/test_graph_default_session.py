"""The default session (TensorFlow 1): ``with gg.Session() as sess:`` or ``sess.as_default()`` lets
``tensor.eval(feed_dict)`` and ``operation.run(feed_dict)`` run without naming the session."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import graphgrad as gg


def test_eval_and_run_use_the_default_session():
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (None,))
        v = gg.Variable(np.zeros(2, np.float32))
        step = gg.group(v.assign_add(gg.ones(2)))
        y = x * 2
    assert gg.get_default_session() is None
    with gg.Session(graph=g) as sess:
        assert gg.get_default_session() is sess
        np.testing.assert_allclose(y.eval({x: [1, 2]}), [2, 4])
        step.run()
        step.run(session=sess)
        np.testing.assert_allclose(v.eval(), [2, 2])
    assert gg.get_default_session() is None
    other = gg.Session(graph=g)
    with other.as_default():
        assert gg.get_default_session() is other
        np.testing.assert_allclose(y.eval(feed_dict={x: [3]}), [6])
    assert gg.get_default_session() is None
    np.testing.assert_allclose(other.run(y, {x: [1]}), [2])  # as_default does not close it


def test_eval_without_a_session_says_how_to_get_one():
    g = gg.Graph()
    with g.as_default():
        y = gg.constant(1.0) * 2
    with pytest.raises(gg.GraphError, match="without a session"):
        y.eval()
    assert gg.tensor([1.0, 2.0]).eval().tolist() == [1.0, 2.0]  # an eager tensor has its value


def test_the_default_session_is_per_thread():
    g = gg.Graph()
    with g.as_default():
        y = gg.constant(1.0) + 1
    seen = []
    with gg.Session(graph=g):
        worker = threading.Thread(target=lambda: seen.append(gg.get_default_session()))
        worker.start()
        worker.join()
    assert seen == [None]
