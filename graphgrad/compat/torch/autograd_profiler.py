"""``torch.autograd.profiler``: the older profiler API (``with torch.autograd.profiler.profile() as prf:``,
``prf.key_averages().table(sort_by="self_cpu_time_total")``) on the facade's ``torch.profiler``."""
from __future__ import annotations

from typing import Any

from graphgrad.compat.torch import profiler as _profiler

record_function = _profiler.record_function


class profile(_profiler.profile):
    """``torch.autograd.profiler.profile(enabled=True, *, use_cuda=False, record_shapes=False, ...)``:
    records the ops run inside it (a GPU's time is the ops' time here: ``use_cuda`` adds nothing); with
    ``enabled=False`` it records nothing and its tables are empty."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.enabled = enabled

    def __enter__(self) -> "profile":
        return super().__enter__() if self.enabled else self

    def __exit__(self, *exc) -> bool:
        return super().__exit__(*exc) if self.enabled else False
