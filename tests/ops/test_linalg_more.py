"""gg.linalg (torch.linalg's namespace), named-tuple results, batched inputs, errors and ONNX export of the
decompositions, matrix functions and products (values and gradients are checked by the op table and the
PyTorch corpus)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch

RNG = np.random.default_rng(0)


def _t(*shape, requires_grad=False):
    return gg.tensor(RNG.normal(size=shape), requires_grad=requires_grad)


def test_namespace_holds_torch_linalg_names():
    names = ["norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "lstsq",
             "pinv", "matrix_rank", "matrix_power", "matrix_exp", "cholesky", "cholesky_ex", "qr", "eigh",
             "eigvalsh", "svd", "svdvals", "cross", "multi_dot", "tensorinv", "tensorsolve", "diagonal", "vecdot",
             "matmul", "vander", "cond", "solve_triangular", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
             "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve", "eig", "eigvals"]
    missing = [n for n in names if not callable(getattr(gg.linalg, n, None))]
    assert not missing
    assert torch.linalg is gg.linalg
    with pytest.raises(gg.linalg.LinAlgError):
        gg.linalg.inv(gg.zeros((2, 2)))


def test_install_maps_import_torch_linalg():
    import sys

    def torch_modules() -> dict:
        return {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")}

    saved = torch_modules()
    try:
        for name in saved:
            del sys.modules[name]
        torch.install()
        from torch import linalg  # resolved to graphgrad's namespace

        assert linalg is gg.linalg and sys.modules["torch.linalg"] is gg.linalg
    finally:  # put back exactly what was there (real PyTorch, or nothing)
        for name in torch_modules():
            del sys.modules[name]
        sys.modules.update(saved)


def test_results_are_named_tuples_like_pytorch():
    a = _t(2, 4, 3)
    u, s, vh = gg.linalg.svd(a, full_matrices=False)
    r = gg.linalg.svd(a, full_matrices=False)
    assert (r.U.shape, r.S.shape, r.Vh.shape) == ((2, 4, 3), (2, 3), (2, 3, 3))
    np.testing.assert_allclose(gg.matmul(u * gg.expand_dims(s, -2), vh).numpy(), a.numpy(), atol=1e-12)
    full = gg.linalg.svd(a)
    assert (full.U.shape, full.Vh.shape) == ((2, 4, 4), (2, 3, 3))
    q = gg.linalg.qr(a)
    assert (q.Q.shape, q.R.shape) == ((2, 4, 3), (2, 3, 3))
    np.testing.assert_allclose(gg.matmul(q.Q, q.R).numpy(), a.numpy(), atol=1e-12)
    assert gg.linalg.qr(a, mode="complete").Q.shape == (2, 4, 4)
    assert gg.linalg.qr(a, mode="r").Q.shape == (2, 0)
    sym = a @ a.mT
    w, v = gg.linalg.eigh(sym)
    assert gg.linalg.eigh(sym).eigenvalues.shape == (2, 4) and v.shape == (2, 4, 4)
    np.testing.assert_allclose((v * gg.expand_dims(w, -2) @ v.mT).numpy(), sym.numpy(), atol=1e-10)
    sign, logabs = gg.linalg.slogdet(_t(3, 3, 3))
    assert gg.slogdet(_t(3, 3)).sign.shape == () and logabs.shape == (3,) and sign.shape == (3,)
    lst = gg.linalg.lstsq(_t(5, 3), _t(5, 2))
    assert lst._fields == ("solution", "residuals", "rank", "singular_values")
    assert lst.solution.shape == (3, 2) and int(lst.rank.item()) == 3 and lst.residuals.shape == (0,)
    inverse, info = gg.linalg.inv_ex(_t(2, 3, 3))
    assert inverse.shape == (2, 3, 3) and info.shape == (2,) and info.dtype == np.int32


def test_lu_results_and_pivots_like_lapack():
    a = gg.tensor([[1.0, 2.0], [3.0, 4.0]])
    p, low, up = gg.linalg.lu(a)
    np.testing.assert_allclose(p.numpy(), [[0.0, 1.0], [1.0, 0.0]])  # the larger first-column entry pivots
    np.testing.assert_allclose((p @ low @ up).numpy(), a.numpy(), rtol=1e-6)
    factor = gg.linalg.lu_factor(a)
    assert factor._fields == ("LU", "pivots") and factor.pivots.dtype == np.int32
    assert factor.pivots.tolist() == [2, 2]
    LU, pivots = torch.lu(a)  # PyTorch's older API: (LU, pivots)
    np.testing.assert_allclose(torch.lu_solve(gg.tensor([[1.0], [2.0]]), LU, pivots).numpy(), [[0.0], [0.5]],
                               atol=1e-6)
    wide = _t(2, 3, requires_grad=True)
    with pytest.raises(gg.GradError, match=r"lu.*square.*\(2, 3\)"):
        gg.linalg.lu(wide).U.sum().backward()


def test_torch_old_api_svd_returns_v_not_vh():
    a = _t(4, 3)
    u, s, v = torch.svd(a)
    assert u.shape == (4, 3) and v.shape == (3, 3)
    np.testing.assert_allclose(((u * s) @ v.T).numpy(), a.numpy(), atol=1e-12)
    assert a.svd(some=False).U.shape == (4, 4)
    zeros = a.svd(compute_uv=False)
    assert float(zeros.U.abs().sum().item()) == 0.0 and zeros.S.shape == (3,)
    q, r = torch.qr(a, some=False)
    assert q.shape == (4, 4) and r.shape == (4, 3)


def test_batched_leading_dims_broadcast_like_pytorch():
    a = _t(2, 3, 4, 4)
    assert gg.linalg.det(a).shape == (2, 3)
    assert gg.linalg.matrix_exp(a).shape == (2, 3, 4, 4)
    assert gg.linalg.svdvals(a).shape == (2, 3, 4)
    assert gg.linalg.pinv(_t(2, 3, 5, 2)).shape == (2, 3, 2, 5)
    assert gg.linalg.matrix_norm(a, "nuc").shape == (2, 3)
    assert gg.linalg.matrix_rank(a).shape == (2, 3) and gg.linalg.matrix_rank(a).dtype == np.int64
    assert gg.linalg.cholesky(a @ a.mT + 4 * gg.eye(4, dtype="float64")).shape == (2, 3, 4, 4)
    np.testing.assert_allclose(gg.linalg.matrix_exp(a).numpy()[1, 2], gg.linalg.matrix_exp(a[1, 2]).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_zero_size_batches_and_empty_matrices():
    for shape in [(0, 3, 3), (2, 0, 0)]:
        a = gg.zeros(shape, dtype="float64")
        assert gg.linalg.svd(a).S.shape == shape[:-1]
        assert gg.linalg.eigh(a).eigenvectors.shape == shape
        assert gg.linalg.qr(a).R.shape == shape
        assert gg.linalg.lu(a).U.shape == shape and gg.linalg.lu_factor(a).pivots.shape == shape[:-1]
        assert gg.geqrf(a).tau.shape == shape[:-1]
        assert gg.linalg.matrix_exp(a).shape == shape


def test_builders_on_edge_sizes_match_pytorch_shapes():
    x = gg.tensor([1.0, 2.0, 3.0])
    assert gg.vander(x, 0).shape == (3, 0)
    assert gg.combinations(x, 0).shape == (0,) and gg.combinations(x, 4).shape == (0, 4)
    assert gg.cartesian_prod(x).shape == (3,)
    assert gg.block_diag(gg.tensor(1.0), gg.tensor([[2.0, 3.0]])).shape == (2, 3)


def test_matrix_exp_of_a_rotation_generator_and_of_a_large_matrix():
    theta = 0.7
    gen = gg.tensor([[0.0, -theta], [theta, 0.0]])
    rot = gg.linalg.matrix_exp(gen).numpy()
    np.testing.assert_allclose(rot, [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]],
                               rtol=1e-6, atol=1e-6)
    assert rot.dtype == np.float32
    big = np.diag([10.0, -20.0, 3.0])
    np.testing.assert_allclose(gg.linalg.matrix_exp(gg.tensor(big)).numpy(), np.diag(np.exp([10.0, -20.0, 3.0])),
                               rtol=1e-12)


def test_second_derivatives_of_the_decompositions():
    a = _t(3, 3, requires_grad=True)
    gg.check_grad(lambda x: gg.linalg.matrix_exp(x), a, order=2, atol=1e-5, rtol=1e-3)
    gg.check_grad(lambda x: gg.linalg.svdvals(x), _t(4, 3, requires_grad=True), order=2, atol=1e-5, rtol=1e-3)
    gg.check_grad(lambda x: gg.linalg.slogdet(x + 3 * gg.eye(3, dtype="float64")).logabsdet, a, order=2)


def test_svdvals_gradient_is_finite_for_repeated_singular_values():
    a = gg.tensor(np.eye(3), requires_grad=True)  # all singular values equal
    gg.linalg.svdvals(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3), atol=1e-12)  # d(nuclear norm)/dA at I = I
    b = gg.tensor(np.diag([2.0, 2.0, 1.0]), requires_grad=True)
    gg.linalg.eigvalsh(b).sum().backward()  # d(trace)/dA = I even with a repeated eigenvalue
    np.testing.assert_allclose(b.grad.numpy(), np.eye(3), atol=1e-12)


def test_singular_and_non_square_inputs_raise_naming_op_and_shape():
    singular = gg.tensor(np.ones((3, 3)))
    with pytest.raises(Exception, match=r"Inv.*\(3, 3\).*[Ss]ingular"):
        gg.linalg.inv(singular)
    with pytest.raises(Exception, match=r"Cholesky.*\(3, 3\).*positive definite"):
        gg.linalg.cholesky(gg.tensor(-np.eye(3)))
    for fn in (gg.linalg.inv, gg.linalg.det, gg.linalg.slogdet, gg.linalg.cholesky, gg.linalg.eigh,
               gg.linalg.matrix_exp):
        with pytest.raises(gg.ShapeError, match=r"square.*\(2, 3\)"):
            fn(_t(2, 3))
    with pytest.raises(gg.ShapeError, match=r"matrix_power.*\(2, 3\)"):
        gg.linalg.matrix_power(_t(2, 3), 2)
    with pytest.raises(gg.ShapeError, match=r"svd.*\(3,\)"):
        gg.linalg.svd(_t(3))
    with pytest.raises(gg.ShapeError, match=r"cross.*size 3"):
        gg.linalg.cross(_t(4, 2), _t(4, 2))
    with pytest.raises(gg.ShapeError, match=r"lstsq.*\(5, 3\).*\(4, 2\)"):
        gg.linalg.lstsq(_t(5, 3), _t(4, 2))


def test_eig_is_complex_and_its_gradient_a_clear_error():
    rotation = gg.tensor([[0.0, -1.0], [1.0, 0.0]])
    w = gg.linalg.eigvals(rotation)
    assert w.dtype == np.complex64
    np.testing.assert_allclose(sorted(w.numpy(), key=lambda z: z.imag), [-1j, 1j], atol=1e-6)
    a = _t(3, 3, requires_grad=True)
    with pytest.raises(gg.GradError, match="eigh"):
        gg.abs(gg.linalg.eigvals(a)).sum().backward()


def test_qr_gradient_of_a_wide_matrix_is_a_clear_error():
    a = _t(2, 4, requires_grad=True)
    q, r = gg.linalg.qr(a)
    with pytest.raises(gg.GradError, match=r"qr.*m >= n.*\(2, 4\)"):
        (q.sum() + r.sum()).backward()


def test_linalg_norm_dispatches_like_pytorch():
    a = _t(3, 4)
    np.testing.assert_allclose(gg.linalg.norm(a).item(), np.linalg.norm(a.numpy()), rtol=1e-12)
    np.testing.assert_allclose(gg.linalg.norm(a, 2).item(), np.linalg.norm(a.numpy(), 2), rtol=1e-12)
    np.testing.assert_allclose(gg.linalg.norm(a, -math.inf, dim=1).numpy(),
                               np.linalg.norm(a.numpy(), -np.inf, axis=1), rtol=1e-12)
    np.testing.assert_allclose(gg.norm(a, -2).item(), np.linalg.norm(a.numpy(), -2), rtol=1e-12)
    assert gg.linalg.norm(_t(2, 3, 4), keepdim=True).shape == (1, 1, 1)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        gg.linalg.norm(_t(2, 3, 4), 1)


def test_tensor_methods_follow_pytorch():
    a = _t(3, 3) + 3 * gg.eye(3, dtype="float64")
    v = _t(3)
    np.testing.assert_allclose(a.inverse().numpy(), np.linalg.inv(a.numpy()), rtol=1e-12)
    np.testing.assert_allclose(a.trace().item(), np.trace(a.numpy()))
    np.testing.assert_allclose(a.matrix_power(3).numpy(), np.linalg.matrix_power(a.numpy(), 3), rtol=1e-12)
    np.testing.assert_allclose(a.mv(v).numpy(), a.numpy() @ v.numpy(), rtol=1e-12)
    np.testing.assert_allclose(v.ger(v).numpy(), np.outer(v.numpy(), v.numpy()))
    x = _t(3, 4, 3)
    assert x.cross(x).shape == (3, 4, 3)  # PyTorch's default dim: the first of size 3
    np.testing.assert_allclose(torch.cross(x, _t(3, 4, 3)).numpy()[:, 0, 0].shape, (3,))
    assert gg.triu_indices(3, 3).dtype == np.int64 and gg.tril_indices(3, 3).shape == (2, 6)


def test_graph_mode_with_unknown_batch_dim():
    with gg.Graph().as_default() as graph:
        a = gg.placeholder("float64", (None, 4, 3))
        u, s, vh = gg.linalg.svd(a, full_matrices=False)
        recon = gg.matmul(u * gg.expand_dims(s, -2), vh)
        (grad,) = gg.gradients(gg.linalg.svdvals(a).sum(), [a])
    value = RNG.normal(size=(5, 4, 3))
    got, g = gg.Session(graph).run([recon, grad], {a: value})
    np.testing.assert_allclose(got, value, atol=1e-12)
    u_np, _, vh_np = np.linalg.svd(value, full_matrices=False)
    np.testing.assert_allclose(g, u_np @ vh_np, atol=1e-12)


def test_onnx_export_of_a_decomposition_names_the_op():
    pytest.importorskip("onnx")
    with gg.Graph().as_default():
        a = gg.placeholder("float32", (3, 3))
        out = gg.linalg.svdvals(a)
    with pytest.raises(Exception, match="Svd"):
        gg.onnx.export([out], None, {a: np.eye(3, dtype=np.float32)})


def test_onnx_export_of_compositions_matches():
    ort = pytest.importorskip("onnxruntime")
    with gg.Graph().as_default() as graph:
        a = gg.placeholder("float32", (3, 3))
        b = gg.placeholder("float32", (2, 3))
        outs = [gg.trace(a), gg.kron(a, b), gg.linalg.det(a), gg.linalg.cross(b, b[::-1])]
    feeds = {a: RNG.normal(size=(3, 3)).astype(np.float32), b: RNG.normal(size=(2, 3)).astype(np.float32)}
    model = gg.onnx.export(outs, None, feeds)
    assert "Det" in [n.op_type for n in model.graph.node]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    by_name = {p._node.name: v for p, v in feeds.items()}
    got = session.run(None, {i.name: by_name[i.name] for i in session.get_inputs()})
    expected = gg.Session(graph).run(outs, feeds)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
