"""Issue 31, "The 13 cases": the three rulings that put the dropped conformance cases back.

(1) ``ties=optimistic``: every row at a position <= k is in the top k (more than k rows when
    scores tie across k); an ideal list still has at most k slots.
(2) ``unexpectedness(dup=keep)``: a repeated row is a list position in |L_k ∩ B_k| as in k.
(3) a recommended item outside the catalogue of a metric that reads one: one refusal
    (:class:`receval.errors.OutsideCatalogue`), the same on every engine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from receval import evaluate
from receval.errors import DataError, OutsideCatalogue

from receval.conformance.reference.pop import reference_pop

SUITE = Path(__file__).resolve().parents[2] / "src" / "receval" / "conformance" / "suite.json"

# u1: i1 at 1, then i2, i3, i4 tied at 2 (optimistic: all three at position 2), i5 at 5
RECS = {"user_id": ["u1"] * 5, "item_id": ["i1", "i2", "i3", "i4", "i5"], "score": [0.9, 0.5, 0.5, 0.5, 0.1]}
TRUTH = {"user_id": ["u1", "u1"], "item_id": ["i3", "i5"], "rating": [2.0, 1.0]}
TRAIN = {"user_id": ["t1", "t1", "t2", "t2", "t3", "t4"], "item_id": ["i1", "i2", "i1", "i3", "i1", "i4"]}
OPT = "order=score,ties=optimistic"


def _one(spec: str, **side) -> float:
    return evaluate(RECS, TRUTH, [spec], **side)[spec]


# ---- ruling 1 --------------------------------------------------------------------------------


def test_optimistic_top_k_holds_every_tied_row():
    """Before: the rows tied at position 2 overwrote one slot, so arp@2 read i1 and i4 only
    ((3 + 1) / 2 = 2.0); now i1..i4 are the top 2 (φ 3, 1, 1, 1: 6 / 4)."""
    assert _one(f"arp({OPT})@2", train=TRAIN) == pytest.approx(6 / 4)
    assert _one(f"arp({OPT},denominator=k)@2", train=TRAIN) == pytest.approx(6 / 2)


def test_optimistic_positions_are_the_shared_ones():
    """EPC discounts each of the tied rows at its shared position 2 (before: i4 alone at 2)."""
    n = 4  # train users
    d2 = 1 / math.log2(3)
    # only i3 (φ_users 1) is a hit: (1 − 1/4)·d2 over 1 + 3·d2
    want = (1 - 1 / n) * d2 / (1 + 3 * d2)
    assert _one(f"epc({OPT})@2", train=TRAIN) == pytest.approx(want, abs=1e-12)


def test_optimistic_ideal_keeps_k_slots():
    """Three hits at position 2 at k = 2: DCG counts all three there, but ideal=hits keeps the
    2 best gains (1 + 1/log2 3), so the value is not divided by an ideal of 3 slots."""
    truth = {"user_id": ["u1"] * 3, "item_id": ["i2", "i3", "i4"]}
    spec = f"ndcg({OPT},ideal=hits)@2"
    d2 = 1 / math.log2(3)
    assert evaluate(RECS, truth, [spec])[spec] == pytest.approx(3 * d2 / (1 + d2))


# ---- ruling 2 --------------------------------------------------------------------------------

DUP_RECS = {"user_id": ["u1"] * 4, "item_id": ["i1", "i2", "i1", "i3"], "score": [0.9, 0.8, 0.7, 0.6]}
DUP_TRUTH = {"user_id": ["u1"], "item_id": ["i1"], "rating": [1.0]}
BASE = {"user_id": ["u1"] * 3, "item_id": ["i3", "i1", "i2"], "score": [3.0, 2.0, 1.0]}


def test_unexpectedness_counts_repeated_rows_as_positions():
    """L_3 = (i1, i2, i1), B_3 = {i3, i1, i2}: 3 of the 3 positions are in B, so 1 − 3/3 = 0
    (the slow reference said 1 − |{i1, i2}|/3 = 1/3 before)."""
    spec = "unexpectedness(dup=keep)@3"
    assert evaluate(DUP_RECS, DUP_TRUTH, [spec], baseline=BASE)[spec] == 0.0
    per_user, mean = reference_pop({**DUP_RECS, "rank": [1, 2, 3, 4]}, DUP_TRUTH, "unexpectedness", 3,
                                   {"dup": "keep", "order": "score"}, train={"user_id": [], "item_id": []},
                                   baseline={**BASE, "rank": [1, 2, 3]})
    assert mean == 0.0 and per_user == {"u1": 0.0}


def test_the_suite_holds_the_13_cases():
    """The cases the builder left out while receval and the reference disagreed."""
    cases = json.loads(SUITE.read_text())["cases"]
    have = {(c["spec"], c["dialect"], c["scenario"]) for c in cases}
    want = {("aclt(cut=2,split=count)@3", None, "basic"), ("aplt(cut=2,split=count)@3", None, "basic"),
            ("unexpectedness(dup=keep)@3", None, "duplicates"), ("unexpectedness@3", "replay@0.22.0", "duplicates")}
    want |= {(f"{m}({OPT})@2", None, "ties") for m in
             ("arp", "catdiv", "efd", "epc", "intersection", "miscalibration", "serendipity", "srecall", "surprisal")}
    assert want <= have, sorted(want - have)


# ---- ruling 3 --------------------------------------------------------------------------------

C_RECS = {"user_id": [1, 1, 1, 2, 2, 2, 3, 3], "item_id": [10, 20, 30, 10, 40, 50, 40, 70],
          "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 2.0, 1.0]}
C_TRUTH = {"user_id": [1, 2, 3], "item_id": [10, 40, 70], "rating": [1.0, 1.0, 1.0]}
C_TRAIN = {"user_id": [7, 7, 8, 8, 9], "item_id": [10, 20, 10, 30, 60]}
CATALOG = [10, 20, 30, 60]
WANT = ("add the items to the catalogue or drop them from the recommendations: 3 recommended items are not in the "
        "catalogue of {m}, e.g. 40, 50, 70")
READERS = ["aplt@3", "aclt@3", "popreo@3", "poprsp@3", "coverage@3", "gini@3", "serendipity@3"]


@pytest.mark.parametrize("spec", READERS)
def test_one_refusal_for_every_catalogue_reader(spec):
    """Distinct items counted (40 is recommended twice), the 3 smallest ids given, the fix first
    (before: 'aplt: 4 recommended items are not in the catalogue; pass ...'; serendipity gave a value)."""
    with pytest.raises(OutsideCatalogue) as err:
        evaluate(C_RECS, C_TRUTH, [spec], train=C_TRAIN, catalog=CATALOG)
    msg = str(err.value)
    assert msg == WANT.format(m=spec.split("@")[0]) and len(msg) <= 200 and "\n" not in msg
    assert isinstance(err.value, DataError)


@pytest.mark.parametrize("n_batches", [1, 2, 3])
@pytest.mark.parametrize("spec", ["aplt@3", "coverage@3", "serendipity@3"])
def test_the_refusal_is_the_same_in_polars_batches(spec, n_batches):
    """Each batch sees some of the items; the batches' items are united before the refusal."""
    from receval.backends.polars import evaluate_polars

    with pytest.raises(OutsideCatalogue) as err:
        evaluate_polars(pl.DataFrame(C_RECS).lazy(), pl.DataFrame(C_TRUTH).lazy(), [spec], n_batches=n_batches,
                        train=C_TRAIN, catalog=CATALOG)
    assert str(err.value) == WANT.format(m=spec.split("@")[0])


def test_split_count_reads_no_catalogue():
    """aclt(split=count): the tail is every item with φ ≤ cut, an item unseen in train included
    (φ = 0); no catalogue is read, so none refuses (before: refused, the train items standing in
    for a catalogue)."""
    spec = "aclt(split=count,cut=1)@3"
    res = evaluate(C_RECS, C_TRUTH, [spec], train=C_TRAIN)
    # φ: 10 → 2, 20 → 1, 30 → 1; 40, 50, 70 unseen → 0. u1: 20, 30; u2: 40, 50; u3: 40, 70
    assert res[spec] == pytest.approx(2.0)


@pytest.mark.spark
def test_the_refusal_is_the_same_on_spark():
    pytest.importorskip("pyspark")
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import evaluate_spark, local_session

    session = local_session(partitions=3)
    try:
        recs = session.createDataFrame(pl.DataFrame(C_RECS).to_pandas())
        truth = session.createDataFrame(pl.DataFrame(C_TRUTH).to_pandas())
        for spec in ("aplt@3", "coverage@3"):
            with pytest.raises(DataError) as err:
                evaluate_spark(recs, truth, [spec], train=C_TRAIN, catalog=CATALOG, n_partitions=3, spark=session)
            assert str(err.value) == WANT.format(m=spec.split("@")[0])
    finally:
        session.stop()
