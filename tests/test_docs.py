"""The generated reference docs are in sync with the registry and the dialect files."""

from pathlib import Path

import pytest

from receval.docs import GENERATED

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("name,make", sorted(GENERATED.items()))
def test_generated_docs_are_current(name, make):
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert committed == make(), f"docs/{name} is stale: run `python -m receval.docs docs/`"


def test_every_metric_has_formula_and_example():
    from receval.metrics import all_metrics

    for m in all_metrics():
        assert m.formula(), f"{m.name} has no Formula section"
        assert ">>>" in m.doc, f"{m.name} has no worked example"
