"""``torch.sparse``: sparse layouts kept dense.

graphgrad has no sparse tensors: ``torch.sparse_coo_tensor`` / ``sparse_csr_tensor`` build the dense tensor
they describe (duplicate entries summed, as ``coalesce()`` would), ``x.to_sparse()`` and ``x.to_dense()`` are
``x``, and ``torch.sparse.mm`` / ``torch.spmm`` are ``matmul``. A program written for sparse tensors (the
pytorch/examples GCN and GAT: a normalized adjacency matrix times node features) computes the same numbers,
with dense memory and time (fine up to a few thousand nodes). ``is_sparse`` stays ``False`` and
``x.layout`` is ``torch.strided``: the tensor is dense.
"""
from __future__ import annotations

import builtins
from typing import Any

import graphgrad as _gg


class layout:
    """A PyTorch layout (``torch.strided``, ``torch.sparse_coo``...): accepted where PyTorch takes one."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


strided, sparse_coo, sparse_csr = layout("strided"), layout("sparse_coo"), layout("sparse_csr")
sparse_csc, sparse_bsr, sparse_bsc = layout("sparse_csc"), layout("sparse_bsr"), layout("sparse_bsc")


def _as_tensor(x, dtype=None):
    return x if isinstance(x, _gg.Tensor) else _gg.tensor(x, dtype=dtype)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad: bool = False,
                      check_invariants=None, is_coalesced=None, pin_memory: bool = False) -> _gg.Tensor:
    """The dense tensor of shape ``size`` holding ``values`` at ``indices`` (``(ndim, nnz)``); entries at the
    same index add up. ``size`` defaults to the smallest shape that holds every index."""
    from graphgrad.backend import np

    idx = indices.numpy() if isinstance(indices, _gg.Tensor) else np.asarray(indices)
    idx = idx.astype(np.int64).reshape(idx.shape[0] if idx.ndim else 0, -1)
    values = _as_tensor(values)
    if size is None:
        size = tuple(int(i) + 1 for i in idx.max(axis=1)) + tuple(values.shape[1:])
    size = tuple(int(s) for s in size)
    sparse_dims = idx.shape[0]
    flat = np.ravel_multi_index(tuple(idx), size[:sparse_dims]) if idx.size else np.zeros(0, dtype=np.int64)
    dtype = dtype or values.dtype
    values = values.astype(dtype) if values.dtype != dtype else values
    rows = int(np.prod(size[:sparse_dims], dtype=np.int64))
    out = _gg.zeros((rows,) + size[sparse_dims:], dtype=dtype).index_add(0, _gg.tensor(flat), values)
    out = out.reshape(size)
    if requires_grad:
        out = out.detach().requires_grad_(True)
    return out


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants=None, pin_memory: bool = False) -> _gg.Tensor:
    """The dense matrix a CSR triple (``crow_indices``, ``col_indices``, ``values``) describes."""
    from graphgrad.backend import np

    crow = crow_indices.numpy() if isinstance(crow_indices, _gg.Tensor) else np.asarray(crow_indices)
    cols = col_indices.numpy() if isinstance(col_indices, _gg.Tensor) else np.asarray(col_indices)
    rows = np.repeat(np.arange(len(crow) - 1), np.diff(crow))
    if size is None:
        size = (len(crow) - 1, int(cols.max()) + 1 if cols.size else 0)
    return sparse_coo_tensor(np.stack([rows, cols]), values, size, dtype=dtype, requires_grad=requires_grad)


def mm(mat1, mat2, reduce: Any = None) -> _gg.Tensor:
    """``torch.sparse.mm``: the matrix product (both dense here)."""
    return _gg.matmul(mat1, mat2)


def addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0) -> _gg.Tensor:
    return input * beta + _gg.matmul(mat1, mat2) * alpha


def sum(input, dim=None, dtype=None) -> _gg.Tensor:  # noqa: A001
    out = _gg.sum(input, axis=dim)
    return out if dtype is None else out.astype(dtype)


def softmax(input, dim: int, *, dtype=None) -> _gg.Tensor:
    """Softmax along ``dim`` (PyTorch's sparse softmax treats absent entries as minus infinity; dense here,
    zeros take part)."""
    out = _gg.nn.functional.softmax(input, dim)
    return out if dtype is None else out.astype(dtype)


def log_softmax(input, dim: int, *, dtype=None) -> _gg.Tensor:
    out = _gg.nn.functional.log_softmax(input, dim)
    return out if dtype is None else out.astype(dtype)


# ---- the Tensor methods of sparse layouts, on graphgrad's (dense) tensors ----------------------------------
def _itself(self, *args, **kwargs):
    return self


def _indices(self) -> _gg.Tensor:
    """The coordinates of the nonzero entries, ``(ndim, nnz)``, as a sparse COO tensor's ``indices()``."""
    return _gg.stack(list(_gg.nonzero(self, as_tuple=True)), axis=0) if self.ndim else _gg.zeros((0, 1), dtype="int64")


def _values(self) -> _gg.Tensor:
    """The nonzero entries in row-major order, as a sparse COO tensor's ``values()``."""
    return self[_gg.nonzero(self, as_tuple=True)]


def _nnz(self) -> int:
    return builtins.int(_gg.count_nonzero(self).item()) if hasattr(_gg, "count_nonzero") else builtins.int(
        (self != 0).sum().item())


SPARSE_METHODS = {"to_sparse": _itself, "to_sparse_coo": _itself, "to_sparse_csr": _itself,
                  "to_sparse_csc": _itself, "to_dense": _itself, "coalesce": _itself,
                  "is_coalesced": lambda self: True, "indices": _indices, "values": _values,
                  "_indices": _indices, "_values": _values, "_nnz": _nnz}
