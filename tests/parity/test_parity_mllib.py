"""Parity with Spark MLlib's ``RankingMetrics`` (pyspark, local mode): receval under
``dialect="mllib@4.3.0"`` against the real library on the parity datasets, to 1e-12 (means:
MLlib gives nothing per user).

MLlib's input is one (prediction array, label array) row per truth user, built by
:func:`receval.adapters.mllib.rows_from_frames` (the adapter's own preparation): the
recommendations in rank order, the truth items; a truth user without recommendations has an
empty prediction array. ``dups`` repeats recommendation and truth rows (MLlib: a hit at every
repeated position, the truth a set: dup=keep, tdup=first in the dialect).
"""

from __future__ import annotations

import shutil

import pytest

from generate import read_frames  # tests/parity is on sys.path (conftest)

from receval import evaluate

pytestmark = [pytest.mark.parity, pytest.mark.spark, pytest.mark.xdist_group("spark")]

DIALECT = "mllib@4.3.0"
KS = [1, 3, 5, 10]
WHOLE = 100  # longer than every generated list: meanAveragePrecision has no cut-off
KINDS = ("distinct", "ties", "dups")
TOL = 1e-12

#: MLlib method (ndcgAt(graded): relevance values passed) -> receval spec with {k}
METRICS = {
    "precisionAt": "precision@{k}",
    "recallAt": "recall@{k}",
    "ndcgAt": "ndcg@{k}",
    "meanAveragePrecisionAt": "map@{k}",
    "meanAveragePrecision": "map(denominator=r)@{k}",
    # pyspark 4.3.0 drops the relevance column (PythonMLLibAPI.newRankingMetrics reads two): binary
    "ndcgAt(graded)": "ndcg@{k}",
}


@pytest.fixture(scope="module")
def mllib():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.adapters import mllib

    yield mllib
    _RM.clear()  # release the Java objects while the gateway is up (else noise at exit)


_RM: dict = {}


def _cases():
    for kind in KINDS:
        for name, spec in METRICS.items():
            for k in ([None] if name == "meanAveragePrecision" else KS):
                yield pytest.param(kind, name, spec, k, id=f"{kind}-{name}@{k}")


@pytest.mark.parametrize("kind, name, spec, k", list(_cases()))
def test_parity_mllib(kind, name, spec, k, mllib, dataset):
    recs, truth = read_frames(dataset(kind))
    graded = "graded" in name
    key = (kind, graded)
    if key not in _RM:
        rows = mllib.rows_from_frames(recs, truth, user="user_id", item="item_id")
        _RM[key] = mllib.ranking_metrics(rows, graded=graded)
    got = mllib.compute(_RM[key], name, k)
    s = spec.format(k=WHOLE if k is None else k)
    ours = evaluate(recs, truth, [s], dialect=DIALECT)[s]
    assert abs(ours - got) <= TOL, f"MLlib {name}@{k} {got!r} vs receval {s} [{DIALECT}] {ours!r} on '{kind}'"


def test_mllib_users_are_the_truth_users(mllib, dataset):
    """The adapter passes one row per truth user, the dialect averages the truth users."""
    recs, truth = read_frames(dataset("distinct"))
    rows = mllib.rows_from_frames(recs, truth, user="user_id", item="item_id")
    assert len(rows) == truth["user_id"].nunique()
    res = evaluate(recs, truth, ["ndcg@5"], dialect=DIALECT)
    assert res._entry("ndcg@5").users == truth["user_id"].nunique()


def test_mllib_dialect_deviates_from_every_other_dialect(dataset):
    """The dialect is needed: on the duplicated data no other dialect gives MLlib's numbers."""
    from receval.dialects import all_dialects

    recs, truth = read_frames(dataset("dups"))
    specs = ["precision@5", "recall@5", "map@5", "ndcg@5"]
    ours = evaluate(recs, truth, specs, dialect=DIALECT)
    for d in [x.label for x in all_dialects()]:
        if d.startswith("mllib"):
            continue
        try:
            other = evaluate(recs, truth, specs, dialect=d)
        except Exception:  # noqa: BLE001  (a dialect that refuses the duplicates differs too)
            continue
        assert any(abs(other[s] - ours[s]) > 1e-12 for s in specs), d
