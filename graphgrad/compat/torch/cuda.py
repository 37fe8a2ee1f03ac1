"""``torch.cuda``: whether a GPU (CuPy with a CUDA device) is usable; graphgrad's ``gg.cuda``."""
from graphgrad import cuda as _cuda

is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device
synchronize = _cuda.synchronize
manual_seed = _cuda.manual_seed
manual_seed_all = _cuda.manual_seed_all
empty_cache = _cuda.empty_cache
