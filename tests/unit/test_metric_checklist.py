"""Adding a metric is a checklist (CONTRIBUTING.md, "Add a metric"): one test names every piece
a registered metric still lacks, in a single failure, so a new metric cannot land half-wired."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

#: metrics whose conformance cases have no slow reference yet (their values are checked by the
#: goldens and the mean over all orderings instead); a new metric does not join this list
NO_CONFORMANCE_CASE_YET = {"ab_ndcg"}


def missing_pieces(m: Any, *, invariance: set[str], suite: set[str], docs: str) -> list[str]:
    """What ``m`` (a registered metric) lacks, each as the fix: its docstring's LaTeX formula and
    worked example, its row in the invariance table, its conformance cases (a slow reference),
    its section of the generated metric reference."""
    out = []
    formula = m.formula()
    if not formula or not any(c in formula for c in ("\\", "$")):
        out.append(f"{m.name}: write its exact formula in LaTeX under 'Formula' in its docstring")
    if ">>>" not in m.doc:
        out.append(f"{m.name}: give its docstring a worked example that runs as a doctest (>>>)")
    if m.name not in invariance:
        out.append(f"{m.name}: give it a row in TABLE of tests/contracts/test_invariance.py")
    if m.name not in suite and m.name not in NO_CONFORMANCE_CASE_YET:
        out.append(f"{m.name}: write its slow per-user reference (receval/conformance/reference/) and rebuild the conformance suite "
                   "(python -m receval.conformance.build)")
    if f"## `{m.name}" not in docs:
        out.append(f"{m.name}: regenerate the metric reference (python -m receval.docs docs/)")
    return out


def _context() -> dict[str, Any]:
    sys.path.insert(0, str(HERE / "contracts"))
    from test_invariance import TABLE

    from receval.conformance.suite import raw_suite

    return {"invariance": set(TABLE), "suite": {c["metric"] for c in raw_suite()["cases"]},
            "docs": (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")}


def test_every_registered_metric_has_every_piece():
    from receval.metrics import all_metrics

    ctx = _context()
    missing = [p for m in all_metrics() for p in missing_pieces(m, **ctx)]
    assert not missing, "a registered metric lacks pieces (CONTRIBUTING.md, 'Add a metric'):\n" + "\n".join(missing)


def test_a_half_wired_metric_is_named_with_every_missing_piece():
    # the check can fail: a metric with a docstring but nothing else is told each fix at once
    fake = SimpleNamespace(name="fresh", doc="Fresh: a new metric.\n\nFormula\n-------\nfresh = 1\n",
                           formula=lambda: "fresh = 1")
    got = missing_pieces(fake, invariance=set(), suite=set(), docs="")
    assert len(got) == 5 and all(g.startswith("fresh: ") for g in got)
    ctx = _context()
    ndcg = next(m for m in __import__("receval.metrics", fromlist=["x"]).all_metrics() if m.name == "ndcg")
    assert missing_pieces(ndcg, **ctx) == []
    assert json.dumps(missing_pieces(ndcg, **{**ctx, "invariance": set()})).count("test_invariance") == 1
