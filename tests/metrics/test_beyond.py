"""Beyond-accuracy metrics reached by name through evaluate / the CLI, and their dialect variants."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from receval import DataError, evaluate
from receval.cli import main
from receval.data import load_genres

TRUTH5 = {"user_id": [1, 2, 3, 4, 5], "item_id": [9] * 5}


def test_seed_001_entropy_goldens():
    same = {"user_id": [1, 2, 3, 4, 5], "item_id": [7] * 5, "score": [1.0] * 5}
    diff = {"user_id": [1, 2, 3, 4, 5], "item_id": [1, 2, 3, 4, 5], "score": [1.0] * 5}
    assert evaluate(same, TRUTH5, ["entropy@1"])["entropy@1"] == 0.0
    assert evaluate(diff, TRUTH5, ["entropy@1"])["entropy@1"] == pytest.approx(math.log(5))
    assert evaluate(diff, TRUTH5, ["entropy(base=2)@1"])["entropy(base=2)@1"] == pytest.approx(math.log2(5))


def _recs():
    # user 1: items 1, 2, 3; user 2: items 1, 4; user 3: item 1
    return {"user_id": [1, 1, 1, 2, 2, 3], "item_id": [1, 2, 3, 1, 4, 1], "score": [3.0, 2.0, 1.0, 2.0, 1.0, 1.0]}


TRUTH = {"user_id": [1, 2, 3], "item_id": [2, 4, 5], "rating": [5.0, 4.0, 3.0]}
CATALOG = [1, 2, 3, 4, 5, 6, 7, 8]


def test_entropy_variants_against_arithmetic():
    counts = np.array([3, 1, 1, 1])  # item 1 three times, items 2, 3, 4 once
    p = counts / counts.sum()
    h = -(p * np.log(p)).sum()
    res = evaluate(_recs(), TRUTH, ["entropy@3", "entropy(form=per_item)@3", "entropy(normalize=catalog)@3"], catalog=CATALOG)
    assert res["entropy@3"] == pytest.approx(h)
    assert res["entropy(form=per_item)@3"] == pytest.approx(h / 4)  # ÷ distinct recommended items
    assert res["entropy(normalize=catalog)@3"] == pytest.approx(h / math.log(8))


def test_coverage_and_gini_variants():
    res = evaluate(
        _recs(), TRUTH,
        ["coverage@3", "coverage(denominator=count)@3", "coverage(denominator=catalog_plus_one)@3", "gini@3", "gini(form=complement)@3"],
        catalog=CATALOG,
    )
    assert res["coverage@3"] == pytest.approx(4 / 8)
    assert res["coverage(denominator=count)@3"] == 4
    assert res["coverage(denominator=catalog_plus_one)@3"] == pytest.approx(4 / 9)
    shares = np.sort(np.r_[np.zeros(4), [3, 1, 1, 1]] / 6)
    n = 8
    g = sum((2 * j - n - 1) * shares[j - 1] for j in range(1, n + 1)) / (n - 1)
    assert res["gini@3"] == pytest.approx(g)
    assert res["gini(form=complement)@3"] == pytest.approx(1 - g)


def test_dialect_variants_resolve():
    res = evaluate(_recs(), TRUTH, ["entropy@3", "gini@3"], dialect="recbole@1.2.1", catalog=CATALOG)
    assert "form:per_item" in res.signature("entropy@3")
    elliot = evaluate(_recs(), TRUTH, ["coverage@3"], dialect="elliot", catalog=CATALOG)
    assert elliot["coverage@3"] == 4


#: values once named after a library -> the name of what they compute (issue 21)
RENAMED = [
    ("entropy", "form", "recbole", "per_item"),
    ("entropy", "form", "elliot", "length_weighted"),
    ("gini", "form", "recbole", "catalog_divisor"),
    ("gini", "form", "elliot", "complement"),
    ("coverage", "denominator", "recbole", "catalog_plus_one"),
]


@pytest.mark.parametrize(("metric", "option", "old", "new"), RENAMED)
def test_a_renamed_value_keeps_its_old_spelling(metric, option, old, new):
    from receval import parse_signature
    from receval.metrics import get_metric

    axis = get_metric(metric).axis(option)
    assert axis.aliases[old] == new and new in axis.values and old not in axis.values
    res = evaluate(_recs(), TRUTH, [f"{metric}({option}={old})@3", f"{metric}({option}={new})@3"], catalog=CATALOG)
    (e_old, e_new) = res.entries
    assert e_old.value == e_new.value  # the same choice, bit for bit
    assert e_old.metric == e_new.metric == f"{metric}({option}={new})@3"  # written under the new name
    assert e_old.signature == e_new.signature and f"|{axis.key}:{new}|" in e_old.signature
    # a signature published with the old spelling parses to the new name and recomputes the same value
    published = e_new.signature.replace(f"|{axis.key}:{new}|", f"|{axis.key}:{old.upper()}|")
    spec, _, _ = parse_signature(published)
    assert spec == parse_signature(e_new.signature)[0] and f"{option}={new}" in str(spec)
    again = evaluate(_recs(), TRUTH, [published], catalog=CATALOG).entries[0]
    assert again.value == e_new.value and again.signature == e_new.signature


def test_an_alias_must_name_a_value():
    from receval.options import Axis

    with pytest.raises(ValueError, match="alias"):
        Axis("form", "form", "a", "doc", {"a": "A"}, aliases={"old": "b"})


def test_novelty_from_train_popularity():
    train = {"user_id": [1, 2, 3, 4, 1, 2, 1], "item_id": [1, 1, 1, 1, 2, 2, 3]}
    res = evaluate(_recs(), TRUTH, ["novelty@2"], train=train, catalog=CATALOG)
    # user 1: items 1 (4/4 users), 2 (2/4); user 2: items 1, 4 (unseen → 1 user); user 3: item 1
    u1 = (0 + 1) / 2
    u2 = (0 + math.log2(4)) / 2
    u3 = 0.0
    assert res["novelty@2"] == pytest.approx((u1 + u2 + u3) / 3)


def test_missing_side_inputs_name_the_fix():
    with pytest.raises(DataError, match="train="):
        evaluate(_recs(), TRUTH, ["novelty@2"])
    with pytest.raises(DataError, match="categories"):
        evaluate(_recs(), TRUTH, ["alpha_ndcg@2"])
    with pytest.raises(DataError, match="catalogue"):
        evaluate(_recs(), TRUTH, ["gini@3"], catalog=[1, 2])


def test_movielens_genres_and_cli(tmp_path, capsys):
    genres = load_genres()
    items = genres["item_id"].unique().sort().head(30).to_list()
    recs = pl.DataFrame({"user_id": [1] * 10 + [2] * 10, "item_id": items[:10] + items[10:20],
                         "score": list(range(10, 0, -1)) * 2})
    truth = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [items[0], items[3], items[12]], "rating": [5.0, 4.5, 5.0]})
    r = tmp_path / "recs.csv"
    t = tmp_path / "truth.csv"
    recs.write_csv(r)
    truth.write_csv(t)
    from receval.data.movielens import bundled_path

    movies = str(bundled_path("movies.csv"))
    code = main(["evaluate", str(r), str(t), "-m", "alpha_ndcg@10", "-m", "ab_ndcg(rmax=5)@10", "-m", "ild@10",
                 "--categories", movies, "--format", "json"])
    assert code == 0
    out = capsys.readouterr().out
    import json

    data = json.loads(out)
    values = {e["metric"]: e["value"] for e in data["results"]}
    assert 0 < values["alpha_ndcg@10"] <= 1
    assert 0 < values["ab_ndcg(rmax=5)@10"]
    assert 0 <= values["ild@10"] <= 1
    # the same through the API with the genres frame
    res = evaluate(recs, truth, ["alpha_ndcg@10"], categories=genres)
    assert res["alpha_ndcg@10"] == pytest.approx(values["alpha_ndcg@10"], abs=1e-12)
