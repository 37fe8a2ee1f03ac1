"""Every ```python block of README.md and docs/*.md runs, page by page in one namespace, from an empty
folder, as a reader pasting them in order would. A block that is deliberately a fragment is fenced
as ```python fragment (or preceded by ``<!-- skip -->``) and skipped; keep those rare."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
BLOCK = re.compile(r"(<!-- skip -->[ \t]*\n[ \t]*)?```python( fragment)?[ \t]*\n(.*?)```", re.S)


def runnable_blocks(text: str) -> list:
    """The page's ```python blocks that are meant to run, dedented (blocks inside list items are indented)."""
    return [textwrap.dedent(code) for skip, fragment, code in BLOCK.findall(text) if not skip and not fragment]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_snippets_run(page, tmp_path):
    blocks = runnable_blocks(page.read_text())
    if not blocks:
        pytest.skip("no python blocks")
    source = "\n\n".join(f"# ---- block {i + 1} of {page.name}\n{code}" for i, code in enumerate(blocks))
    script = tmp_path / "page.py"
    script.write_text(source)
    env = {"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    import os

    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})
    assert done.returncode == 0, f"{page.name}: a snippet failed:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("page", PAGES[1:], ids=[p.name for p in PAGES[1:]])
def test_page_names_the_extra_its_examples_need(page):
    """Each page says at its start which install its examples need (one extra that has it all)."""
    start = "\n".join(page.read_text().split("\n")[:8])
    assert 'pip install "graphgrad[all]"' in start, f"{page.name} does not name graphgrad[all] where it starts"
