"""docs/compare.md's worked example holds the real output of its code on the bundled data
(regenerate with ``python examples/render_compare.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("render_compare", ROOT / "examples" / "render_compare.py")
page = importlib.util.module_from_spec(spec)
spec.loader.exec_module(page)

pytestmark = pytest.mark.xdist_group("examples")


def test_compare_page_is_fresh(tmp_path, monkeypatch):
    # the figures go to a copy of docs/img: the test writes nothing into the repository
    monkeypatch.setattr(page, "ROOT", tmp_path)
    (tmp_path / "docs" / "img").mkdir(parents=True)
    output = page.run()
    assert "<sup>" in output and "Holm correction" in output
    committed = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    assert committed == page.render(committed, output), "docs/compare.md is stale: run python examples/render_compare.py"
    for name in ("compare-at-k.png", "compare-differences.png"):
        assert (tmp_path / "docs" / "img" / name).stat().st_size > 10_000
        assert (ROOT / "docs" / "img" / name).exists()
