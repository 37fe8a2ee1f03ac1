"""``torch.utils.tensorboard.SummaryWriter``: graphgrad's TensorBoard event writer (needs the
``tensorboard`` package, as PyTorch's does): ``add_scalar``, ``add_scalars``, ``add_histogram``,
``add_text``, ``add_graph``, ``flush``, ``close``. See graphgrad/train/tensorboard.py."""
import graphgrad as _gg

SummaryWriter = _gg.train.SummaryWriter

__all__ = ["SummaryWriter"]
