"""The documentation site: ``mkdocs build --strict`` passes (no broken links, no missing references),
and the built pages render in a real headless browser (Chromium from the system packages:
``apt-get install chromium``; skipped where it is absent)."""
from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HAVE_MKDOCS = all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings"))
pytestmark = pytest.mark.skipif(not HAVE_MKDOCS, reason="needs mkdocs, mkdocs-material and mkdocstrings (graphgrad[test])")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**__import__("os").environ,
                                                                           "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_site_builds_strictly_with_the_api_reference_and_gallery(site):
    linear = (site / "api" / "nn" / "index.html").read_text()
    assert 'id="graphgrad.nn.Linear"' in linear and "in_features" in linear
    assert 'id="graphgrad.ops.exp"' in (site / "api" / "ops" / "index.html").read_text()
    gallery = (site / "gallery" / "index.html").read_text()
    assert "spiral_mlp.png" in gallery and (site / "gallery" / "spiral_mlp.png").exists()
    assert (site / "architecture" / "index.html").exists()


def _browser():
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.mark.skipif(_browser() is None, reason="needs Chromium (apt-get install chromium)")
@pytest.mark.parametrize("page", ["index.html", "api/nn/index.html", "gallery/index.html"])
def test_pages_render_in_a_headless_browser(site, page, tmp_path):
    image = pytest.importorskip("PIL.Image")
    shot = tmp_path / "page.png"
    url = (site / page).as_uri()
    done = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--virtual-time-budget=3000",
                           f"--screenshot={shot}", "--window-size=1280,900", url],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    with image.open(shot) as picture:
        assert picture.size == (1280, 900)
        colours = picture.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50, f"{page} rendered (nearly) blank"
