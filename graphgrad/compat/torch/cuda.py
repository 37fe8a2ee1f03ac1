"""``torch.cuda``: whether a GPU (CuPy with a CUDA device) is usable; graphgrad's ``gg.cuda``."""
from graphgrad import cuda as _cuda
from graphgrad.compat.torch import amp  # noqa: F401  (torch.cuda.amp: autocast, GradScaler)

is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device
synchronize = _cuda.synchronize
manual_seed = _cuda.manual_seed
manual_seed_all = _cuda.manual_seed_all
empty_cache = _cuda.empty_cache


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether a GPU computes in bfloat16: never without a GPU."""
    return is_available()


def __getattr__(name: str):
    """``torch.cuda.FloatTensor``, ``torch.cuda.LongTensor``...: the typed classes of GPU tensors."""
    from graphgrad.compat import torch

    try:
        return torch.CUDA_TENSOR_TYPES[name]
    except KeyError:
        raise AttributeError(f"graphgrad.compat.torch.cuda has no {name!r}") from None
