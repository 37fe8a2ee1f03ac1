"""Every ```python block of docs/tensorflow.md runs, in order, in one namespace (as a reader would run them)."""
from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_tf_every_python_block_of_docs_tensorflow_md_runs(tmp_path, monkeypatch, capsys):
    text = open(os.path.join(ROOT, "docs", "tensorflow.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/tensorflow.md block {i + 1}", "exec"), namespace)
    finally:
        namespace["tf"].reset_default_graph()
    out = capsys.readouterr().out
    assert float(out.split("accuracy ")[1].split()[0]) > 0.9
    assert "(None, 4, 4, 4)" in out and "True True" in out
