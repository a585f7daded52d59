"""The spellings people type from habit: none silently changes the definition.

receval's own names, in any case (``NDCG@10``, ``Precision@10``, ``hit_rate@10``), are receval's
metric, keyed by the canonical spec, and say nothing. Another vocabulary's exact spelling
(``nDCG@10``, ``P@10``, ``AP``) is keyed as written, announces in one note what it resolves to,
and its signature holds the resolved definition. A list metric without a cut-off (``mrr``,
``coverage``) is read over each user's whole list (``@all``), on every engine and under
batching; a metric with no single whole-list meaning is refused with a one-line fix.
"""

from __future__ import annotations

import warnings

import pytest

import receval
from receval import SpecError
from receval.backends.polars import evaluate_polars
from receval.errors import RecevalNote
from receval.signature import parse_signature
from receval.spec import parse_spec

# distinct scores (no tie decides anything), graded ratings (0 = judged non-relevant), a truth
# user whose judged items are all non-relevant, lists of different lengths
RECS = {
    "user_id": [1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4],
    "item_id": [1, 2, 3, 4, 1, 5, 6, 2, 3, 7, 1, 2],
    "score": [0.9, 0.8, 0.7, 0.6, 0.95, 0.5, 0.4, 0.9, 0.1, 0.3, 0.2, 0.15],
}
TRUTH = {"user_id": [1, 1, 2, 2, 3, 4], "item_id": [2, 4, 6, 9, 3, 1], "rating": [3, 1, 2, 1, 5, 0]}
TRAIN = {"user_id": [5, 5, 6, 6, 7], "item_id": [1, 2, 1, 3, 4]}
CATALOG = list(range(1, 10))
SIDE = {"train": TRAIN, "catalog": CATALOG}

# receval's own names in another case or spelling -> the canonical spec (the key; no note)
OWN = {
    "ndcg@10": "ndcg@10", "NDCG@10": "ndcg@10", "Ndcg@10": "ndcg@10", "precision@10": "precision@10",
    "Precision@10": "precision@10", "recall@20": "recall@20", "Recall@20": "recall@20", "map@10": "map@10",
    "MAP@10": "map@10", "mrr@10": "mrr@10", "MRR@10": "mrr@10", "hit_rate@10": "hitrate@10",
    "hitrate@10": "hitrate@10", "HitRate@10": "hitrate@10", "auc": "auc", "AUC": "auc", "novelty@10": "novelty@10",
    "coverage@10": "coverage@10",
    # without a cut-off: the whole list
    "mrr": "mrr@all", "MRR": "mrr@all", "map": "map@all", "ndcg": "ndcg@all", "recall": "recall@all",
    "hitrate": "hitrate@all", "coverage": "coverage@all", "novelty": "novelty@all", "dcg": "dcg@all",
    "precision": "precision@all", "mrr@all": "mrr@all", "ndcg@ALL": "ndcg@all",
}

# another vocabulary's spelling -> (the note it announces, the receval spec and dialect of the
# definition it announces: its value must be that one's)
VOCAB = {
    "nDCG@10": ("nDCG@10 is ir_measures' name for trec_eval's ndcg_cut_10 (graded gains, rating >= 1 relevant); "
                "receval's ndcg@10 has binary gains", "ndcg@10", "trec_eval"),
    "nDCG": ("nDCG is ir_measures' name for trec_eval's ndcg (graded gains, rating >= 1 relevant); "
             "receval's ndcg@all has binary gains", "ndcg@all", "trec_eval"),
    "P@10": ("P@10 is ir_measures' name for trec_eval's P_10 (ties by item id, users without relevant items count 0); "
             "receval's precision@10 averages tied orders and skips those users", "precision@10", "trec_eval"),
    "R@20": ("R@20 is ir_measures' name for trec_eval's recall_20 (ties by item id, users without relevant items "
             "count 0); receval's recall@20 averages tied orders and skips those users", "recall@20", "trec_eval"),
    "AP@10": ("AP@10 is ir_measures' name for trec_eval's map_cut_10 (÷ |R|, ties by item id, users without relevant "
              "items count 0); receval's map@10 divides by min(k, |R|), averages tied orders and skips those users",
              "map@10", "trec_eval"),
    "AP": ("AP is ir_measures' name for trec_eval's map (ties by item id, users without relevant items count 0); "
           "receval's map@all averages tied orders and skips those users", "map@all", "trec_eval"),
    "RR": ("RR is ir_measures' name for trec_eval's recip_rank (ties by item id, users without relevant items count 0); "
           "receval's mrr@all averages tied orders and skips those users", "mrr@all", "trec_eval"),
    "HR@10": ("HR@10 is recommender papers' name for receval's hitrate@10", "hitrate@10", None),
    "P_10": ("P_10 is trec_eval's measure (ties by item id, users without relevant items count 0); receval's "
             "precision@10 averages tied orders and skips those users", "precision@10", "trec_eval"),
    "ndcg_cut_10": ("ndcg_cut_10 is trec_eval's measure (graded gains, rating >= 1 relevant); receval's ndcg@10 has "
                    "binary gains", "ndcg@10", "trec_eval"),
    "recip_rank": ("recip_rank is trec_eval's measure (ties by item id, users without relevant items count 0); "
                   "receval's mrr@all averages tied orders and skips those users", "mrr@all", "trec_eval"),
}

# refused, each with a one-line fix at the start of the message
REFUSED = {
    "f1": "write 'f1@10'", "catdiv": "write 'catdiv@10'", "catdiv@all": "write 'catdiv@10'",
    "mar": "write 'mar@10'", "precision(denominator=k)": "write a cut-off ('precision(denominator=k)@10')",
    "map(denominator=k)@all": "write a cut-off ('map(denominator=k)@10')", "err@all": "write 'err' for the whole list",
}


#: the notes of the data, not of a spelling: under the relevance default (rel:>0) user 4's
#: rating-0 row is not relevant, and that user is left out of the means (empty=skip)
DATA_NOTES = ("rel:>0 (the default): 1 of 6 truth rows have a rating <= 0",
              "1 of 4 truth users have no relevant item and are left out of the means")


def _evaluate(metrics, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = receval.evaluate(RECS, TRUTH, metrics, **SIDE, **kw)
    notes = [str(w.message) for w in caught if w.category is RecevalNote]
    return res, [n for n in notes if not n.startswith(DATA_NOTES)], \
        [str(w.message) for w in caught if w.category is not RecevalNote]


@pytest.mark.parametrize("typed", sorted(OWN))
def test_receval_own_names_in_any_case_say_nothing(typed):
    res, notes, others = _evaluate([typed])
    assert res.keys() == [OWN[typed]] and notes == [] and others == []
    canonical, _, _ = _evaluate([OWN[typed]])
    assert res[typed] == canonical[OWN[typed]]
    assert res.signature(typed).split("|")[0] == OWN[typed].split("(")[0]


@pytest.mark.parametrize("typed", sorted(VOCAB))
def test_a_vocabulary_name_is_keyed_as_typed_and_announced_once(typed):
    note, spec, dialect = VOCAB[typed]
    res, notes, others = _evaluate([typed, typed.lower() if typed == "nDCG@10" else typed])
    assert notes == [note], notes  # once per call, one line
    assert others == []  # no tie warning merely because a vocabulary name was used (no tie decides here)
    assert res.keys()[0] == typed
    want, _, _ = _evaluate([spec], dialect=dialect)
    assert res[typed] == pytest.approx(want[spec], abs=1e-12)
    resolved = str(parse_spec(typed))  # the resolved definition: a lookup by it and by the name agree
    assert res[resolved] == res[typed] and res.signature(resolved) == res.signature(typed)
    again = parse_signature(res.signature(typed))[0]  # fully explicit: every option the value read
    want_spec = parse_spec(typed)
    assert (again.name, again.k) == (want_spec.name, want_spec.k) and want_spec.opts.items() <= again.opts.items()
    assert typed in res.per_user().columns


def test_no_receval_name_resolves_to_another_vocabulary():
    for typed in OWN:
        assert parse_spec(typed).label is None, typed
    for typed in VOCAB:
        assert parse_spec(typed).label == typed


@pytest.mark.parametrize("typed", sorted(REFUSED))
def test_no_single_whole_list_meaning_is_refused_with_the_fix(typed):
    with pytest.raises(SpecError) as err:
        receval.evaluate(RECS, TRUTH, [typed], **SIDE)
    text = str(err.value)
    assert text.startswith(REFUSED[typed]) and len(text) <= 200 and "\n" not in text, text


WHOLE = ["mrr", "map", "ndcg", "recall", "precision", "hitrate", "dcg", "novelty", "coverage", "AP", "nDCG", "RR"]


def test_whole_list_values():
    res, _, _ = _evaluate(WHOLE)
    longest = max(len([u for u in RECS["user_id"] if u == x]) for x in set(RECS["user_id"]))
    at, _, _ = _evaluate([f"{m}@{longest}" for m in ("mrr", "map", "ndcg", "recall", "hitrate", "dcg", "novelty", "coverage")]
                         + [f"precision(denominator=length)@{longest}"])
    for m in ("mrr", "map", "ndcg", "recall", "hitrate", "dcg", "novelty", "coverage"):
        assert res[m] == at[f"{m}@{longest}"], m  # the whole list is the longest list's cut-off
    # precision over the whole list: hits ÷ the list length (rel=1: user 4 has no relevant item, skipped)
    rel1, _, _ = _evaluate(["precision"], rel=1)
    assert rel1["precision"] == pytest.approx((2 / 4 + 1 / 3 + 1 / 2) / 3)
    assert res["precision"] == at[f"precision(denominator=length)@{longest}"]
    assert res.signature("precision").startswith("precision@all|den:length|")


def test_whole_list_signatures_round_trip():
    res, _, _ = _evaluate(WHOLE)
    for key in res.keys():
        sig = res.signature(key)
        assert sig.split("|")[0].endswith("@all"), sig
        spec, _, _ = parse_signature(sig)
        again, _, _ = _evaluate([sig])
        assert again[str(spec)] == res[key], key


def test_whole_list_is_the_same_on_every_engine_and_batching():
    res, _, _ = _evaluate(WHOLE)
    on_polars, _, _ = _evaluate(WHOLE, engine="polars")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = evaluate_polars(RECS, TRUTH, WHOLE, n_batches=3, **SIDE)
    for key in res.keys():
        assert on_polars[key] == res[key] and batched[key] == res[key], key
        assert on_polars.signature(key) == res.signature(key) == batched.signature(key)


@pytest.mark.spark
def test_whole_list_on_spark():
    pytest.importorskip("pyspark")
    metrics = ["mrr", "map", "ndcg", "precision", "coverage", "nDCG", "AP"]
    res, _, _ = _evaluate(metrics)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_spark = receval.evaluate(RECS, TRUTH, metrics, engine="spark", **SIDE)
    for key in res.keys():
        assert on_spark[key] == pytest.approx(res[key], abs=1e-12) and on_spark.signature(key) == res.signature(key)
