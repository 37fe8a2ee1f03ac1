"""PyTorch-agreement cases of the Tensor methods under PyTorch's names (``view``, ``expand``,
``masked_fill``, ``split`` by size...): the same method call on both frameworks' tensors."""
from tests.oracle.cases import B, C, F, I

C("method.view", [F((2, 3, 4))], lambda t, x: x.view(4, -1) * 2, lambda g, x: x.view(4, -1) * 2)
C("method.view_as", [F((2, 6)), F((3, 4), diff=False)], lambda t, x, y: x.view_as(y), lambda g, x, y: x.view_as(y))
C("method.expand", [F((1, 3))], lambda t, x: x.expand(4, -1) * x.expand(2, 4, 3).sum(0),
  lambda g, x: x.expand(4, -1) * x.expand(2, 4, 3).sum(0))
C("method.expand_as", [F((3, 1)), F((3, 5), diff=False)], lambda t, x, y: x.expand_as(y), lambda g, x, y: x.expand_as(y))
C("method.t_and_mT", [F((3, 4)), F((2, 3, 4))], lambda t, x, y: (x.t(), y.mT), lambda g, x, y: (x.t(), y.mT))
C("method.split_size", [F((7, 3))], lambda t, x: x.split(3), lambda g, x: x.split(3))
C("method.split_sections", [F((2, 6))], lambda t, x: x.split([1, 2, 3], dim=1), lambda g, x: x.split([1, 2, 3], dim=1))
C("method.chunk", [F((2, 7))], lambda t, x: x.chunk(3, dim=1), lambda g, x: x.chunk(3, dim=1))
C("method.unbind", [F((3, 4))], lambda t, x: x.unbind(1), lambda g, x: x.unbind(1))
C("method.masked_fill", [F((3, 4)), B((3, 4))], lambda t, x, m: x.masked_fill(m, -1.5),
  lambda g, x, m: x.masked_fill(m, -1.5))
C("method.masked_fill_broadcast", [F((2, 3, 4)), B((3, 4))], lambda t, x, m: x.masked_fill(m, float("-inf")).softmax(-1),
  lambda g, x, m: x.masked_fill(m, float("-inf")).softmax(-1))
C("method.index_select", [F((4, 5)), I((6,), 0, 5)], lambda t, x, i: x.index_select(1, i),
  lambda g, x, i: x.index_select(1, i))
C("method.clone", [F((3, 4))], lambda t, x: x.clone() * x, lambda g, x: x.clone() * x)
