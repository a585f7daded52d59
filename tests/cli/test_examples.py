"""Every script in examples/ runs on the bundled data, and docs/tutorial.md holds their real
output (regenerate it with ``python examples/render_tutorial.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("render_tutorial", ROOT / "examples" / "render_tutorial.py")
tutorial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tutorial)

pytestmark = pytest.mark.xdist_group("examples")


@pytest.fixture(scope="module")
def outputs():
    return {s.name: tutorial.run(s) for s in tutorial.scripts()}


def test_there_are_examples():
    assert len(tutorial.scripts()) >= 5


def test_every_example_runs_and_prints(outputs):
    for name, out in outputs.items():
        assert out.strip(), name


def test_tutorial_page_is_fresh(outputs):
    committed = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert committed == tutorial.render(outputs), "docs/tutorial.md is stale: run python examples/render_tutorial.py"


def test_ope_page_holds_the_offline_ab_table(outputs):
    """docs/ope.md's Open Bandit Dataset table is examples/06_offline_ab.py's current output."""
    page = (ROOT / "docs" / "ope.md").read_text(encoding="utf-8")
    assert f"```text\n{outputs['06_offline_ab.py'].rstrip()}\n```" in page, "docs/ope.md: paste examples/06_offline_ab.py's output"
