"""Every ```python block of docs/keras.md runs, in order, in one namespace (as a reader would run them)."""
from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_python_block_of_docs_keras_md_runs(tmp_path, monkeypatch):
    text = open(os.path.join(ROOT, "docs", "keras.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/keras.md block {i + 1}", "exec"), namespace)
    assert namespace["accuracy"] > 0.85
