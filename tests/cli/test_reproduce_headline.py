"""The study's output states its finding: each metric's spread across the dialects (max/min),
what a dialect is, and `receval explain` for the largest outliers."""

from __future__ import annotations

import json
import math

import pytest

from receval.cli import main
from receval.reproduce import DIALECT_LINE, Reproduction, headline, spreads

pytestmark = pytest.mark.xdist_group("reproduce")


def _rep(table):
    columns = list(next(iter(table.values())))
    return Reproduction(table=table, signatures={}, protocol={}, columns=columns)


TABLE = {
    "standard": {"map@20": 0.02, "ndcg@20": 0.05, "precision@20": 0.03, "auc": None},
    "a@1": {"map@20": 0.001, "ndcg@20": 0.05, "precision@20": 0.03, "auc": 0.7},
    "b@2": {"map@20": 0.03, "ndcg@20": 0.10, "precision@20": 0.03, "auc": None},
    "c@3": {"map@20": None, "ndcg@20": 0.05, "precision@20": 0.03, "auc": None},
}


def test_spreads_are_max_over_min_widest_first():
    sp = spreads(_rep(TABLE))
    assert [s.metric for s in sp] == ["map@20", "ndcg@20", "precision@20"]  # auc: one value, no spread
    assert sp[0].ratio == pytest.approx(30.0) and sp[0].low == ("a@1", 0.001) and sp[0].high == ("b@2", 0.03)
    assert sp[0].outlier == "a@1"  # farthest from the standard by ratio (0.001 vs 0.02), not the largest
    assert sp[1].ratio == pytest.approx(2.0) and sp[1].outlier == "b@2"
    assert sp[2].agrees()


def test_the_headline_text():
    lines = headline(_rep(TABLE))
    text = "\n".join(lines)
    assert lines[0].startswith("Headline:")
    assert "map@20 varies 30x across 3 dialects (0.001000 a@1 .. 0.03000 b@2)" in text  # 4 significant digits
    assert "ndcg@20 varies 2x across 4 dialects" in text
    assert "precision@20: every dialect that offers it agrees" in text
    assert " ".join(DIALECT_LINE.split()) in " ".join(text.split())
    assert "  receval explain map@20 --dialect a@1" in lines and "  receval explain ndcg@20 --dialect b@2" in lines
    assert text.index("map@20 varies") < text.index("ndcg@20 varies")
    assert all(len(line) <= 100 for line in lines)


def test_a_zero_value_is_an_unbounded_spread():
    rep = _rep({"standard": {"m@5": 0.2}, "z@1": {"m@5": 0.0}})
    (sp,) = spreads(rep)
    assert math.isinf(sp.ratio)
    assert "m@5 varies from 0 up across 2 dialects" in "\n".join(headline(rep))


def test_reproduce_prints_the_headline_first(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["reproduce", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    head = printed[: printed.index("This data")]
    assert head.startswith("Headline:")
    assert "map@20 varies" in head and "x across" in head
    assert "A dialect is how one library, at one version, computes a metric" in head
    assert "receval explain map@20 --dialect neurec@f8d3ab7" in head
    data = json.loads((out / "table.json").read_text())
    assert data["headline"][0].startswith("Headline:")
    assert data["spread"]["map@20"]["ratio"] > 10 and data["spread"]["map@20"]["outlier"] == "neurec@f8d3ab7"
    assert (out / "table.md").read_text().startswith("Headline:")
    # the study's pinned versions, whatever an unversioned name means
    assert "recbole@0.2.1" in data["dialects"] and "replay@0.4.0" in data["dialects"]
