"""Every op gives the same values and gradients whatever the memory layout of its inputs.

Eager results are not always C-ordered arrays: a linear layer's product may come back as a transposed
(Fortran-ordered) view when that orientation is faster (ops/linalg.py ``_matmul_2d``), and
``x.T``, ``swapaxes`` and slicing give views. Each row of the op table is run twice, once on
C-ordered inputs and once on the same values as transposed views (the last two axes of every input
of two or more dimensions swapped in memory), and its outputs and the gradients of a weighted sum of
them must agree. A kernel that reads memory in C order, or writes a flattened copy instead of the
array (``x.reshape(-1)[i] = v`` on a transposed view), shows up here.
"""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from tests.ops.op_table import ROWS


def _transposable(row) -> bool:
    values = row.make_inputs("float64")
    return any(isinstance(v, np.ndarray) and v.ndim >= 2 for v in values)


LAYOUT_ROWS = [row for row in ROWS if _transposable(row)]


def _inputs(row, dtype, transposed: bool):
    """The row's inputs as tensors, and the leaves to differentiate (index -> leaf)."""
    values = row.make_inputs(dtype)
    diff = set(row.differentiable()) if row.grad else set()
    tensors, leaves = [], {}
    for i, v in enumerate(values):
        if not isinstance(v, np.ndarray):
            tensors.append(v)
            continue
        wants_grad = i in diff and v.dtype.kind == "f"
        if transposed and v.ndim >= 2:
            leaf = gg.tensor(np.ascontiguousarray(np.swapaxes(v, -1, -2)), requires_grad=wants_grad)
            view = gg.swapaxes(leaf, -1, -2)
            assert not view.numpy().flags.c_contiguous or min(v.shape[-2:]) <= 1
            tensors.append(view)
        else:
            leaf = gg.tensor(v, requires_grad=wants_grad)
            tensors.append(leaf)
        if wants_grad:
            leaves[i] = leaf
    return tensors, leaves


def _run(row, dtype, transposed: bool):
    gg.manual_seed(0)  # (the same draws for both layouts: pca_lowrank's random projection)
    tensors, leaves = _inputs(row, dtype, transposed)
    result = row.fn(*tensors)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    values = [np.array(o.numpy()) for o in outs]
    grads = {}
    floats = [o for o in outs if isinstance(o, gg.Tensor) and o.dtype.kind == "f" and o.requires_grad]
    if leaves and floats:
        rng = np.random.default_rng(1)
        total = None
        for o in floats:
            weight = gg.tensor(rng.uniform(0.5, 1.5, o.shape).astype(o.dtype))
            term = (o * weight).sum()
            total = term if total is None else total + term
        total.backward()
        for i, leaf in leaves.items():
            g = leaf.grad
            if g is not None:
                g = g.numpy()
                grads[i] = np.swapaxes(g, -1, -2) if transposed and g.ndim >= 2 else g
    return values, grads


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row", LAYOUT_ROWS, ids=[row.name for row in LAYOUT_ROWS])
def test_transposed_inputs_give_the_same_values_and_gradients(row, dtype):
    if dtype not in row.dtypes:
        pytest.skip(f"row does not run in {dtype}")
    # (float32: products summed in another order for another layout differ in the last bits)
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-10, 1e-12)
    c_values, c_grads = _run(row, dtype, transposed=False)
    t_values, t_grads = _run(row, dtype, transposed=True)
    assert len(c_values) == len(t_values)
    for k, (c, t) in enumerate(zip(c_values, t_values)):
        assert c.shape == t.shape, f"{row.name}: output {k} shape {t.shape} != {c.shape}"
        if c.dtype.kind in "fc":
            np.testing.assert_allclose(t, c, rtol=rtol, atol=atol, err_msg=f"{row.name}: output {k}")
        else:
            np.testing.assert_array_equal(t, c, err_msg=f"{row.name}: output {k}")
    assert c_grads.keys() == t_grads.keys(), row.name
    for i in c_grads:
        np.testing.assert_allclose(t_grads[i], c_grads[i], rtol=rtol, atol=atol, err_msg=f"{row.name}: gradient {i}")
