"""PyTorch-agreement cases of the activations, distances and losses of ops/activations_more.py and
ops/losses_more.py (values and gradients), with edge cases: zero distance, margins hit exactly."""
from tests.oracle.cases import A, C, F, I, P, nnf

S = (4, 5)
SIGNS = A((1.0, -1.0, -1.0, 1.0))
MULTI = A(((3, 0, -1, 1, 2), (1, 2, 3, -1, 0), (0, 1, 2, 3, 4), (4, -1, 0, 0, 0)))
COUNTS = A(((0.0, 1, 2, 3, 4), (2, 2, 0, 1, 5), (1, 0, 0, 3, 2), (6, 1, 1, 0, 2)))

C("relu6", [F(S, -3, 9, kinks=(0.0, 6.0))], lambda t, x: nnf(t).relu6(x), lambda g, x: g.relu6(x))
C("hardshrink", [F(S, kinks=(-0.3, 0.3))], lambda t, x: nnf(t).hardshrink(x, 0.3), lambda g, x: g.hardshrink(x, 0.3))
C("softshrink", [F(S, kinks=(-0.3, 0.3))], lambda t, x: nnf(t).softshrink(x, 0.3), lambda g, x: g.softshrink(x, 0.3))
C("tanhshrink", [F(S)], lambda t, x: nnf(t).tanhshrink(x), lambda g, x: g.tanhshrink(x))
C("prelu", [F((2, 3, 4), kinks=(0.0,)), F((3,), 0.1, 0.5)], lambda t, x, w: nnf(t).prelu(x, w),
  lambda g, x, w: g.prelu(x, w))
C("prelu[shared]", [F(S, kinks=(0.0,)), F((1,), 0.1, 0.5)], lambda t, x, w: nnf(t).prelu(x, w),
  lambda g, x, w: g.prelu(x, w))
C("rrelu[eval]", [F(S, kinks=(0.0,))], lambda t, x: nnf(t).rrelu(x, 0.1, 0.3), lambda g, x: g.rrelu(x, 0.1, 0.3))
C("cosine_similarity", [F(S), F(S)], lambda t, a, b: nnf(t).cosine_similarity(a, b),
  lambda g, a, b: g.cosine_similarity(a, b))
C("cosine_similarity[broadcast_dim0]", [F((4, 1)), F(S)], lambda t, a, b: nnf(t).cosine_similarity(a, b, dim=0),
  lambda g, a, b: g.cosine_similarity(a, b, dim=0))
C("cosine_similarity[zero]", [A(((0.0, 0.0), (1.0, 2.0)), diff=True), F((2, 2))],
  lambda t, a, b: nnf(t).cosine_similarity(a, b), lambda g, a, b: g.cosine_similarity(a, b))
C("pairwise_distance", [F(S), F(S)], lambda t, a, b: nnf(t).pairwise_distance(a, b, p=3.0, keepdim=True),
  lambda g, a, b: g.pairwise_distance(a, b, p=3.0, keepdim=True))
C("pdist", [F(S)], lambda t, x: nnf(t).pdist(x), lambda g, x: g.pdist(x))
C("cdist", [F((2, 4, 3)), F((2, 3, 3))], lambda t, a, b: t.cdist(a, b), lambda g, a, b: g.cdist(a, b))
C("cdist[p1]", [F(S), F((2, 5))], lambda t, a, b: t.cdist(a, b, p=1.0), lambda g, a, b: g.cdist(a, b, p=1.0))
C("margin_ranking_loss", [F((4,)), F((4,)), SIGNS], lambda t, a, b, y: nnf(t).margin_ranking_loss(a, b, y, margin=0.1),
  lambda g, a, b, y: g.margin_ranking_loss(a, b, y, margin=0.1))
C("soft_margin_loss", [F((4,)), SIGNS], lambda t, x, y: nnf(t).soft_margin_loss(x, y, reduction="sum"),
  lambda g, x, y: g.soft_margin_loss(x, y, reduction="sum"))
C("multilabel_soft_margin_loss", [F(S), A(((1.0, 0, 1, 0, 0), (0, 1, 1, 0, 1), (1, 1, 0, 0, 0), (0, 0, 0, 1, 1))),
                                  P((5,))],
  lambda t, x, y, w: nnf(t).multilabel_soft_margin_loss(x, y, weight=w, reduction="none"),
  lambda g, x, y, w: g.multilabel_soft_margin_loss(x, y, weight=w, reduction="none"))
C("cosine_embedding_loss", [F(S), F(S), SIGNS], lambda t, a, b, y: nnf(t).cosine_embedding_loss(a, b, y, margin=0.2),
  lambda g, a, b, y: g.cosine_embedding_loss(a, b, y, margin=0.2))
C("triplet_margin_loss", [F(S), F(S), F(S)], lambda t, a, p, n: nnf(t).triplet_margin_loss(a, p, n, margin=2.0, p=1.0),
  lambda g, a, p, n: g.triplet_margin_loss(a, p, n, margin=2.0, p=1.0))
C("triplet_margin_loss[swap]", [F(S), F(S), F(S)], lambda t, a, p, n: nnf(t).triplet_margin_loss(a, p, n, swap=True),
  lambda g, a, p, n: g.triplet_margin_loss(a, p, n, swap=True))
C("triplet_margin_with_distance_loss", [F(S), F(S), F(S)],
  lambda t, a, p, n: nnf(t).triplet_margin_with_distance_loss(
      a, p, n, distance_function=lambda u, v: 1 - nnf(t).cosine_similarity(u, v), margin=0.5),
  lambda g, a, p, n: g.triplet_margin_with_distance_loss(
      a, p, n, distance_function=lambda u, v: 1 - g.cosine_similarity(u, v), margin=0.5))
C("multilabel_margin_loss", [F(S), MULTI], lambda t, x, y: nnf(t).multilabel_margin_loss(x, y),
  lambda g, x, y: g.multilabel_margin_loss(x, y))
C("poisson_nll_loss", [F(S), COUNTS], lambda t, x, y: nnf(t).poisson_nll_loss(x, y),
  lambda g, x, y: g.poisson_nll_loss(x, y))
C("poisson_nll_loss[full]", [P(S), COUNTS], lambda t, x, y: nnf(t).poisson_nll_loss(x, y, log_input=False, full=True),
  lambda g, x, y: g.poisson_nll_loss(x, y, log_input=False, full=True))
C("gaussian_nll_loss", [F(S), F(S, diff=False), P(S)], lambda t, x, y, v: nnf(t).gaussian_nll_loss(x, y, v, full=True),
  lambda g, x, y, v: g.gaussian_nll_loss(x, y, v, full=True))
C("gaussian_nll_loss[per_sample_var]", [F(S), F(S, diff=False), P((4,))],
  lambda t, x, y, v: nnf(t).gaussian_nll_loss(x, y, v, reduction="sum"),
  lambda g, x, y, v: g.gaussian_nll_loss(x, y, v, reduction="sum"))
C("gaussian_nll_loss[clamped_var]", [F((2, 2)), F((2, 2), diff=False), A(((1e-9, 0.5), (0.2, 1e-8)), diff=True)],
  lambda t, x, y, v: nnf(t).gaussian_nll_loss(x, y, v), lambda g, x, y, v: g.gaussian_nll_loss(x, y, v))
C("embedding_bag[mean_padding]", [F((10, 3)), A((1, 2, 4, 5, 4, 3, 2, 9)), A((0, 4, 4, 6))],
  lambda t, w, i, o: nnf(t).embedding_bag(i, w, o, mode="mean", padding_idx=2),
  lambda g, w, i, o: g.embedding_bag(i, w, o, mode="mean", padding_idx=2))
C("embedding_bag[max]", [F((10, 3)), A((1, 2, 4, 5, 4, 3, 2, 9)), A((0, 4, 4, 6))],
  lambda t, w, i, o: nnf(t).embedding_bag(i, w, o, mode="max"),
  lambda g, w, i, o: g.embedding_bag(i, w, o, mode="max"))
C("embedding_bag[sum_2d_weights]", [F((10, 3)), A(((1, 2), (4, 4))), F((2, 2))],
  lambda t, w, i, p: nnf(t).embedding_bag(i, w, mode="sum", per_sample_weights=p),
  lambda g, w, i, p: g.embedding_bag(i, w, mode="sum", per_sample_weights=p))
C("ctc_loss", [F((12, 3, 6)), A(((1, 1, 2, 0), (3, 0, 0, 0), (2, 4, 1, 5)))],
  lambda t, x, y: nnf(t).ctc_loss(nnf(t).log_softmax(x, -1), y, t.tensor([12, 9, 11]), t.tensor([3, 1, 4])),
  lambda g, x, y: g.ctc_loss(g.log_softmax(x, -1), y, g.tensor([12, 9, 11]), g.tensor([3, 1, 4])))
C("ctc_loss[none_concatenated]", [F((10, 2, 4)), A((1, 2, 3, 3))],
  lambda t, x, y: nnf(t).ctc_loss(nnf(t).log_softmax(x, -1), y, t.tensor([10, 7]), t.tensor([2, 2]), reduction="none"),
  lambda g, x, y: g.ctc_loss(g.log_softmax(x, -1), y, g.tensor([10, 7]), g.tensor([2, 2]), reduction="none"))
