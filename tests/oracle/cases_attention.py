"""PyTorch-agreement cases of grouped-query attention (scaled_dot_product_attention(enable_gqa=True))."""
from tests.oracle.cases import C, F, nnf

C("scaled_dot_product_attention[gqa]", [F((2, 6, 5, 4)), F((2, 2, 7, 4)), F((2, 2, 7, 3))],
  lambda t, q, k, v: nnf(t).scaled_dot_product_attention(q, k, v, enable_gqa=True),
  lambda g, q, k, v: g.scaled_dot_product_attention(q, k, v, enable_gqa=True))
C("scaled_dot_product_attention[gqa_causal]", [F((1, 4, 5, 4)), F((1, 1, 5, 4)), F((1, 1, 5, 4))],
  lambda t, q, k, v: nnf(t).scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
  lambda g, q, k, v: g.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))

# one recurrent step as a function (torch.lstm_cell & co.)
CELL = [F((3, 4)), F((3, 5))]
C("rnn_tanh_cell", CELL + [F((5, 4)), F((5, 5)), F((5,)), F((5,))],
  lambda t, x, h, wi, wh, bi, bh: t.rnn_tanh_cell(x, h, wi, wh, bi, bh),
  lambda g, x, h, wi, wh, bi, bh: g.rnn_tanh_cell(x, h, wi, wh, bi, bh))
C("lstm_cell", CELL + [F((3, 5)), F((20, 4)), F((20, 5)), F((20,)), F((20,))],
  lambda t, x, h, c, wi, wh, bi, bh: t.lstm_cell(x, (h, c), wi, wh, bi, bh),
  lambda g, x, h, c, wi, wh, bi, bh: g.lstm_cell(x, (h, c), wi, wh, bi, bh))
C("gru_cell", CELL + [F((15, 4)), F((15, 5)), F((15,)), F((15,))],
  lambda t, x, h, wi, wh, bi, bh: t.gru_cell(x, h, wi, wh, bi, bh),
  lambda g, x, h, wi, wh, bi, bh: g.gru_cell(x, h, wi, wh, bi, bh))
