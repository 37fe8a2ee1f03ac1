"""PyTorch-agreement cases of scatter / scatter_reduce, nonzero, masked_select, diagonal, diag_embed,
meshgrid, tensor_split, unfold / fold, cropping pads, tuple index arrays and 0-d
tensors with dim 0 / -1."""
from tests.oracle.cases import A, B, C, F, I, nnf

UNIQUE = A(((2, 0, 1, 3), (0, 3, 2, 1)))
REPEATED = A(((1, 0, 1, 1), (1, 2, 0, 1), (1, 0, 0, 2)))

C("scatter.src", [F((4, 4)), UNIQUE, F((2, 4))], lambda t, x, i, s: x.scatter(0, i, s),
  lambda g, x, i, s: x.scatter(0, i, s))
# PyTorch's scatter cannot differentiate a src larger than the index (its gradient has the index's shape)
C("scatter.larger_src_dim1", [F((2, 5)), A(((4, 0), (1, 3))), F((3, 4), diff=False)], lambda t, x, i, s: t.scatter(x, 1, i, s),
  lambda g, x, i, s: g.scatter(x, 1, i, s))
C("scatter.value", [F((3, 4)), A(((3, 0), (1, 2), (0, 0)))], lambda t, x, i: x.scatter(-1, i, 2.5),
  lambda g, x, i: x.scatter(-1, i, value=2.5))
# PyTorch has no derivative for scatter(..., reduce=...): forward values only (scatter_reduce covers gradients)
C("scatter.reduce_add", [F((3, 4), diff=False), REPEATED, F((3, 4), diff=False)], lambda t, x, i, s: x.scatter(0, i, s, reduce="add"),
  lambda g, x, i, s: x.scatter(0, i, s, reduce="add"))
C("scatter.reduce_multiply_value", [F((3, 4), diff=False), REPEATED],
  lambda t, x, i: x.scatter(0, i, 1.5, reduce="multiply"), lambda g, x, i: g.scatter(x, 0, i, value=1.5, reduce="multiply"))
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _self in (True, False):
        C(f"scatter_reduce.{_reduce}{'' if _self else '_exclude_self'}", [F((3, 4)), REPEATED, F((3, 4))],
          lambda t, x, i, s, r=_reduce, k=_self: x.scatter_reduce(0, i, s, r, include_self=k),
          lambda g, x, i, s, r=_reduce, k=_self: x.scatter_reduce(0, i, s, r, include_self=k))
C("scatter_reduce.prod_zeros", [A(((0.0, 2.0, 3.0), (1.5, 0.0, 0.0)), diff=True), A(((0, 0), (1, 2))),
                                A(((2.0, 0.5), (0.0, 3.0)), diff=True)],
  lambda t, x, i, s: x.scatter_reduce(1, i, s, "prod"), lambda g, x, i, s: x.scatter_reduce(1, i, s, "prod"))
C("scatter_reduce.amax_ties", [A(((1.0, 2.0), (3.0, 0.5)), diff=True), A(((0, 0), (0, 1))),
                               A(((1.0, 2.0), (1.0, 0.5)), diff=True)],
  lambda t, x, i, s: x.scatter_reduce(0, i, s, "amax"), lambda g, x, i, s: x.scatter_reduce(0, i, s, "amax"))

C("nonzero", [A(((0.0, 1.5, 0.0), (2.0, 0.0, -1.0)))], lambda t, x: t.nonzero(x), lambda g, x: g.nonzero(x))
C("nonzero.as_tuple", [B((3, 4))], lambda t, m: t.nonzero(m, as_tuple=True), lambda g, m: g.nonzero(m, as_tuple=True))
C("nonzero.zero_d", [A(3.0)], lambda t, x: (t.nonzero(x), t.nonzero(x, as_tuple=True)[0]),
  lambda g, x: (g.nonzero(x), g.nonzero(x, as_tuple=True)[0]))
C("masked_select", [F((2, 3, 4)), B((3, 4))], lambda t, x, m: t.masked_select(x, m),
  lambda g, x, m: g.masked_select(x, m))
C("masked_select.method", [F((3, 4)), B((2, 1, 4))], lambda t, x, m: x.masked_select(m), lambda g, x, m: x.masked_select(m))
C("diagonal", [F((3, 4))], lambda t, x: t.diagonal(x), lambda g, x: g.diagonal(x))
C("diagonal.batched_offset", [F((2, 3, 4))], lambda t, x: (x.diagonal(1, 2, 0), x.diagonal(-1, -2, -1)),
  lambda g, x: (x.diagonal(1, 2, 0), x.diagonal(-1, -2, -1)))
C("diag_embed", [F((2, 3))], lambda t, x: t.diag_embed(x), lambda g, x: g.diag_embed(x))
C("diag_embed.offset_dims", [F((2, 3))], lambda t, x: (t.diag_embed(x, -1, 0, 2), x.diag_embed(2, 2, 1)),
  lambda g, x: (g.diag_embed(x, -1, 0, 2), x.diag_embed(2, 2, 1)))
C("meshgrid.ij", [F((2,)), F((3,)), F((4,))], lambda t, a, b, c: t.meshgrid(a, b, c, indexing="ij"),
  lambda g, a, b, c: g.meshgrid(a, b, c, indexing="ij"))
C("meshgrid.xy", [F((2,)), F((3,))], lambda t, a, b: t.meshgrid([a, b], indexing="xy"),
  lambda g, a, b: g.meshgrid([a, b], indexing="xy"))
C("tensor_split.sections", [F((2, 7))], lambda t, x: t.tensor_split(x, 3, dim=1), lambda g, x: g.tensor_split(x, 3, dim=1))
C("tensor_split.indices", [F((6, 2))], lambda t, x: x.tensor_split([1, 4, 9]), lambda g, x: x.tensor_split([1, 4, 9]))
C("tensor_split.negative_indices", [F((7,))], lambda t, x: t.tensor_split(x, [2, -1]),
  lambda g, x: g.tensor_split(x, [2, -1]))
C("pad.negative", [F((2, 3, 4))], lambda t, x: nnf(t).pad(x, (1, -2, -1, 0), value=0.5),
  lambda g, x: g.nn.functional.pad(x, (1, -2, -1, 0), value=0.5))
C("pad.crop_only", [F((3, 4))], lambda t, x: nnf(t).pad(x, (-1, -1, 0, -2)), lambda g, x: g.nn.functional.pad(x, (-1, -1, 0, -2)))
C("getitem.tuple_index", [F((2, 3, 4)), I((2,), 0, 3)], lambda t, x, b: x[(0,), b], lambda g, x, b: x[(0,), b])
C("getitem.tuples", [F((2, 3, 4))], lambda t, x: x[(1, 0), (2, 2)], lambda g, x: x[(1, 0), (2, 2)])
C("getitem.nested_tuple", [F((3, 4))], lambda t, x: x[((0, 2), (1, 3))], lambda g, x: x[((0, 2), (1, 3))])

# 0-d tensors with dim 0 / -1 (PyTorch wraps a 0-d tensor's dims as a one-element vector's)
ZERO_D = A(2.5, diff=True)
C("zero_d.permute_transpose", [ZERO_D], lambda t, x: (x.permute(()), x.transpose(0, -1), t.moveaxis(x, -1, 0)),
  lambda g, x: (x.permute(()), x.transpose(0, -1), g.moveaxis(x, -1, 0)))
C("zero_d.squeeze_flip", [ZERO_D], lambda t, x: (x.squeeze(-1), x.flip(-1) * 2), lambda g, x: (x.squeeze(-1), x.flip(-1) * 2))
C("zero_d.gather_scatter", [ZERO_D, A(1.5, diff=True)],
  lambda t, x, s: (x.gather(-1, t.tensor(0)), x.scatter(-1, t.tensor(0), s), x.index_select(-1, t.tensor([0]))),
  lambda g, x, s: (x.gather(-1, g.tensor(0)), x.scatter(-1, g.tensor(0), s), x.index_select(-1, g.tensor([0]))))
C("zero_d.scatter_reduce_ties", [ZERO_D], lambda t, x: x.scatter_reduce(0, t.tensor(0), x * 1.0, "amax"),
  lambda g, x: x.scatter_reduce(0, g.tensor(0), x * 1.0, "amax"))

# im2col / col2im
C("unfold", [F((2, 3, 4, 5))], lambda t, x: nnf(t).unfold(x, 2), lambda g, x: g.nn.functional.unfold(x, 2))
C("unfold.dilation_padding_stride", [F((2, 2, 7, 6))], lambda t, x: nnf(t).unfold(x, (3, 2), (2, 1), (1, 2), (2, 3)),
  lambda g, x: g.unfold(x, (3, 2), (2, 1), (1, 2), (2, 3)))
C("fold", [F((2, 12, 12))], lambda t, x: nnf(t).fold(x, (4, 5), 2), lambda g, x: g.nn.functional.fold(x, (4, 5), 2))
C("fold.dilation_padding_stride", [F((2, 12, 9))], lambda t, x: nnf(t).fold(x, (7, 6), (3, 2), (2, 1), (1, 2), (2, 3)),
  lambda g, x: g.fold(x, (7, 6), (3, 2), (2, 1), (1, 2), (2, 3)))

# the matrix products and rot90 as Tensor methods
C("method.mm_bmm_addmm_baddbmm_rot90", [F((2, 4)), F((2, 3)), F((3, 4)), F((2, 2, 3)), F((2, 3, 2))],
  lambda t, c, a, b, p, q: (a.mm(b), p.bmm(q), c.addmm(a, b, beta=0.5, alpha=2.0),
                            p.bmm(q).baddbmm(p, q, alpha=-1.0), p.rot90(1, (1, 2))),
  lambda g, c, a, b, p, q: (a.mm(b), p.bmm(q), c.addmm(a, b, beta=0.5, alpha=2.0),
                            p.bmm(q).baddbmm(p, q, alpha=-1.0), p.rot90(1, (1, 2))))
