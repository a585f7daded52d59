"""One engine entry for many specs (issue 32): :func:`receval.engine.evaluate_each` gives every
spec its Entry or the refusal that refused it; ``receval.evaluate`` (memory), ``compare`` and
``audit`` go through it, and the audit's cache of receval's values is an object."""

from __future__ import annotations

import warnings

import pytest

import receval
from receval import audit as audit_mod
from receval.engine import Each, evaluate_each, plan
from receval.errors import DataError, OutsideCatalogue
from receval.inputs import read_inputs
from receval.io import Columns
from receval.side import SideInputs

RECS = {"user_id": [1, 1, 1, 2, 2, 2], "item_id": [1, 2, 3, 1, 4, 5], "score": [3.0, 2, 1, 3, 2, 1]}
TRUTH = {"user_id": [1, 2], "item_id": [1, 4]}
SPECS = ["ndcg@2", "coverage@2", "precision@2", "novelty@2"]


def _each(strict: bool = False) -> Each:
    cols = Columns()
    side = SideInputs(catalog=[1, 2, 3], cols=cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_each(read_inputs(RECS, TRUTH, cols).encode(exact=True), plan(SPECS), side, strict=strict)


def test_each_spec_gets_its_entry_or_its_refusal():
    each = _each()
    assert sorted(each) == [0, 1, 2, 3]
    assert isinstance(each[1], OutsideCatalogue)  # item 4 is outside the catalogue of coverage
    assert isinstance(each[3], DataError) and "pass train=" in str(each[3])  # novelty without train
    res = receval.evaluate(RECS, TRUTH, ["ndcg@2", "precision@2"], catalog=[1, 2, 3])
    for i, spec in ((0, "ndcg@2"), (2, "precision@2")):
        assert each[i].value == res[spec]
        assert each[i].signature == res.signature(spec)
    assert list(each.user_ids) == [1, 2]


def test_strict_raises_what_evaluate_raises():
    with pytest.raises(DataError) as got:
        _each(strict=True)
    with pytest.raises(DataError) as want:
        receval.evaluate(RECS, TRUTH, SPECS, catalog=[1, 2, 3])
    assert str(got.value) == str(want.value)


def test_the_audit_keeps_its_values_in_an_object():
    assert not any(hasattr(audit_mod, n) for n in ("_CACHE", "_RESOLVED", "_ENCODED"))
    values = audit_mod.ReceValues()

    def precision(recs, truth, k, side):
        top = recs.sort("score", descending=True).group_by("user", maintain_order=True).head(k)
        hits = top.join(truth, on=["user", "item"]).group_by("user").len()
        return {str(u): n / k for u, n in zip(hits["user"], hits["len"])}

    report = audit_mod.audit(precision, "precision", values=values)
    assert values.outcomes and values.encoded and values.resolved
    assert report.status in ("match", "no match")
