"""ReLU's backward moved before max pooling's (graph/rewrite/pooling.py): the rule fires on a
relu -> max_pool block's gradient and keeps the values, overlapping windows, padding, ties and NaN
included; it does not fire when the mask is of another tensor or the pooled gradient is shared."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.graph.rewrite import optimize

RNG = np.random.default_rng(0)


def _fired(outs, feeds) -> int:
    prog = optimize([o._node for o in outs], [p._node for p in feeds], level=2, skip=("fuse",))
    return sum(record.fired["mask_before_max_pool_gradient"] for record in prog.log)


@pytest.mark.parametrize("kernel, stride, padding", [(2, 2, 0), (3, 2, 1), (3, 1, 1), (2, 1, 0)])
def test_relu_then_max_pool_gradient(kernel, stride, padding):
    x_value = RNG.standard_normal((2, 3, 9, 9))
    x_value[0, 0, :3, :3] = 0.0  # ties, and a window whose maximum is 0 (masked)
    x_value[1, 2, 4, 4] = np.nan
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, x_value.shape, name="x")
        w = gg.placeholder(gg.float64, (), name="w")
        h = gg.relu(x * w)
        pooled = gg.nn.functional.max_pool2d(h, kernel, stride, padding)
        loss = (pooled * pooled).sum()
        (gx,) = gg.gradients(loss, [x])
    feed = {x: x_value, w: 1.5}
    r0 = gg.Session(graph, optimize=0).run(gx, feed)
    r2 = gg.Session(graph, optimize=2).run(gx, feed)
    np.testing.assert_array_equal(r2, r0)
    assert _fired([gx], [x, w]) == 1


def test_no_rewrite_for_another_mask_or_a_shared_gradient():
    from graphgrad.ops.pool import MaxPoolBackward
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (1, 1, 4, 4), name="x")
        other = gg.placeholder(gg.float64, (1, 1, 4, 4), name="other")
        y = gg.nn.functional.max_pool2d(x, 2)
        g = gg.placeholder(gg.float64, (1, 1, 2, 2), name="g")
        grad = MaxPoolBackward((2, 2), (2, 2)).apply(x, y, g)
        masked_other = grad * gg.greater(other, 0)  # a mask of another tensor
        shared = [grad * gg.greater(x, 0), grad + 1.0]  # the pooled gradient read twice
    assert _fired([masked_other], [x, other, g]) == 0
    assert _fired(shared, [x, g]) == 0
