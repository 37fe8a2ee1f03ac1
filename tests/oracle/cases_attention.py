"""PyTorch-agreement cases of grouped-query attention (scaled_dot_product_attention(enable_gqa=True))."""
from tests.oracle.cases import C, F, nnf

C("scaled_dot_product_attention[gqa]", [F((2, 6, 5, 4)), F((2, 2, 7, 4)), F((2, 2, 7, 3))],
  lambda t, q, k, v: nnf(t).scaled_dot_product_attention(q, k, v, enable_gqa=True),
  lambda g, q, k, v: g.scaled_dot_product_attention(q, k, v, enable_gqa=True))
C("scaled_dot_product_attention[gqa_causal]", [F((1, 4, 5, 4)), F((1, 1, 5, 4)), F((1, 1, 5, 4))],
  lambda t, q, k, v: nnf(t).scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
  lambda g, q, k, v: g.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
