"""``torch.backends``: the switches PyTorch programs set (``cudnn.benchmark``, ``cuda.matmul.allow_tf32``,
``mps.is_available()``...). graphgrad has no cuDNN, TF32 or MPS; the flags are kept, and read back,
but change nothing."""
from __future__ import annotations

from types import SimpleNamespace

cudnn = SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                        is_available=lambda: False, version=lambda: None)
cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                              allow_bf16_reduced_precision_reduction=True),
                       is_built=lambda: False, flash_sdp_enabled=lambda: False, enable_flash_sdp=lambda on: None,
                       enable_mem_efficient_sdp=lambda on: None, enable_math_sdp=lambda on: None)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = SimpleNamespace(enabled=False, is_available=lambda: False)
openmp = SimpleNamespace(is_available=lambda: True)
