"""The audit's helpers for the shapes people have (per_user, from_dicts), its reading of an
unwritten ``rel`` (as evaluate decides it) and the rounding diagnosis (issue 35)."""

from __future__ import annotations

import math

import pytest

from receval.audit import AuditError, audit, explained_by_rounding, from_dicts, option_settings, per_user


def ndcg_at_k(ranked, relevant, k):
    """The notebook NDCG: binary gains, the ideal of min(k, |R|) hits."""
    dcg = sum(1 / math.log2(n + 2) for n, item in enumerate(ranked[:k]) if item in relevant)
    idcg = sum(1 / math.log2(n + 2) for n in range(min(k, len(relevant))))
    return dcg / idcg if idcg else None


def precision_at_k(ranked, relevant, k):
    return sum(1 for item in ranked[:k] if item in relevant) / k


def test_per_user_names_the_notebook_ndcg():
    report = audit(per_user(ndcg_at_k), "ndcg")
    assert report.status == "match", str(report)
    # a repeated recommendation is given as is: the function counts each occurrence
    assert report.options.get("dup") == "keep" and report.options.get("order") == "input", report.options
    assert "rel" not in report.options  # the items rated > 0: receval's default rel:>0
    assert report.implementation == "per_user(ndcg_at_k)"


def test_per_user_with_ratings_names_the_threshold_the_function_keeps():
    def precision_rated_1(ranked, ratings, k):
        relevant = {i for i, r in ratings.items() if r >= 1}
        return sum(1 for item in ranked[:k] if item in relevant) / k

    report = audit(per_user(precision_rated_1, relevant="ratings"), "precision")
    assert report.status == "match", str(report)
    assert report.options.get("rel") == "1", report.options  # fractional ratings tell rel=1 from rel>0


def test_per_user_empty_skip_changes_the_verdict():
    called = audit(per_user(precision_at_k), "precision")
    skipped = audit(per_user(precision_at_k, empty="skip"), "precision")
    assert called.status == skipped.status == "match", (str(called), str(skipped))
    assert called.options.get("empty") == "zero" and "empty" not in skipped.options


def test_from_dicts_names_the_dict_hit_rate():
    def hit_rate(recommendations, truth, k):
        return {u: float(any(i in truth[u] for i in items[:k])) for u, items in recommendations.items()
                if any(r > 0 for r in truth[u].values())}

    report = audit(from_dicts(hit_rate), "hitrate")
    assert report.status == "match", str(report)


def test_the_helpers_refuse_what_they_cannot_wrap():
    with pytest.raises(AuditError, match="pass a function"):
        per_user("ndcg")  # type: ignore[arg-type]
    with pytest.raises(AuditError, match="relevant='set'"):
        per_user(ndcg_at_k, relevant="graded")
    with pytest.raises(AuditError, match="empty='call'"):
        per_user(ndcg_at_k, empty="zero")
    with pytest.raises(AuditError, match="pass a function"):
        from_dicts(3)  # type: ignore[arg-type]


def test_catalog_gives_a_full_ranking():
    import polars as pl

    seen = {}

    def grab(ranked, relevant, k):
        seen["ranked"] = ranked
        return 0.0

    recs = pl.DataFrame({"user": ["u1"], "item": ["b"], "score": [0.5], "rank": [1]})
    truth = pl.DataFrame({"user": ["u1"], "item": ["a"], "rating": [1.0]})
    per_user(grab, catalog=True)(recs, truth, 2, {"catalog": pl.DataFrame({"item": ["c", "a", "b"]})})
    assert seen["ranked"] == ["b", "a", "c"]
    per_user(grab)(recs, truth, 2, {})
    assert seen["ranked"] == ["b"]


def test_an_unwritten_rel_reads_as_evaluate_decides_it():
    """Every truth row relevant is rel=all; the items rated > 0 are the standard definition (the
    audit resolves an unwritten rel as evaluate does on a truth with ratings: rel:>0)."""
    def every_row(ranked, ratings, k):
        return sum(1 for item in ranked[:k] if item in ratings) / k

    report = audit(per_user(every_row, relevant="ratings"), "precision")
    assert report.status == "match" and report.options.get("rel") == "all", str(report)
    standard = audit(per_user(precision_at_k), "precision")
    assert "rel" not in standard.options
    assert "rel = >0" in standard.explanation


def _rounded(digits, scale=1.0):
    def fn(ranked, relevant, k):
        v = ndcg_at_k(ranked, relevant, k)
        return None if v is None else round(v * scale, digits)
    return fn


def test_the_report_says_values_are_rounded():
    report = audit(per_user(_rounded(4)), "ndcg")
    assert report.status == "no match"
    assert report.rounding is not None and report.rounding[1] == "rounded to 4 decimals", report.rounding
    assert "values rounded to 4 decimals?" in str(report)
    assert report.to_dict()["rounding"][1] == "rounded to 4 decimals"


def test_the_report_says_values_are_in_percent():
    report = audit(per_user(_rounded(12, 100.0)), "ndcg")
    assert report.rounding is not None and report.rounding[1].startswith("in percent"), str(report)


def test_no_rounding_finding_for_a_wrong_definition():
    def mrr_whole_list(ranked, relevant, k):
        return next((1 / (n + 1) for n, item in enumerate(ranked) if item in relevant), 0.0)

    report = audit(per_user(mrr_whole_list), "mrr")
    assert report.status == "no match" and report.rounding is None, str(report)
    assert explained_by_rounding([(0.5, 0.5)]) is None  # no difference: no finding


def test_option_settings_read_the_registry():
    settings = option_settings("ndcg")
    assert settings[0] == {} and {"gain": "exp2"} in settings and {"order": "score", "ties": "item"} in settings
    assert {"rel": "1"} in settings and {"hitscore": "positive"} in settings
    assert all(len(o) <= 2 for o in settings)
