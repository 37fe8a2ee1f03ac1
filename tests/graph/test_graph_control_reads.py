"""A Variable's first read made inside ``control_dependencies`` runs after the dependencies (it used to
become the shared, uncontrolled read, so it saw the value from before the assignment)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg


def test_the_first_read_inside_control_dependencies_sees_the_assignment():
    g = gg.Graph()
    with g.as_default():
        v = gg.Variable(1.0)
        update = v.assign(5.0)
        with gg.control_dependencies([update]):
            after = gg.identity(v.value())
        before = v.value() * 1  # the shared read: the value from before the run
        init = gg.global_variables_initializer()
    sess = gg.Session(graph=g)
    assert sess.run(after) == 5.0
    sess.run(init)
    assert sess.run([before, after]) == [1.0, 5.0]


def test_gradients_taken_inside_control_dependencies_are_those_of_the_loss_s_reads():
    g = gg.Graph()
    with g.as_default():
        w = gg.Variable(gg.tensor([1.0, 2.0]), name="w")
        loss = gg.sum(w * w)
        with gg.control_dependencies([gg.constant(1.0)]):
            (gw,) = gg.gradients(loss, [w])
            train = gg.train.GradientDescentOptimizer(0.5).minimize(loss)
        sess = gg.Session()
        sess.run(gg.global_variables_initializer())
        np.testing.assert_allclose(sess.run(gw), [2.0, 4.0])
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [0.0, 0.0])
