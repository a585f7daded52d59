"""Issue 34: output a reader takes in at a glance (signatures as fields, compact tables, ...)."""

from __future__ import annotations

import warnings

import pytest

from glance_data import METRICS, frames
from receval import evaluate
from receval.runs import evaluate_runs
from receval.segments import compare_segments
from receval.spec import signature_fields
from receval.stats import parse_stats_signature

STATS = dict(resamples=200, seed=0, ci="percentile")


@pytest.fixture(scope="module")
def runs():
    truth, recs, train = frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = evaluate_runs(recs, truth, METRICS, rel=4)
    return truth, recs, train, r


def test_no_signature_contains_a_space(runs):
    truth, recs, train, r = runs
    sigs = list(evaluate(recs["ease"], truth, METRICS, rel=4).signatures.values())
    c = r.compare(**STATS)
    sigs += list(c.signatures.values())
    for kind in ("activity", "cold-users"):
        sc = compare_segments(r, kind, train=train, **STATS)
        sigs += [s for _, cc in sc.comparisons() for s in cc.signatures.values()]
    assert sigs and not [s for s in sigs if " " in s or "," in s]
    for s in sigs:  # every one parses back
        assert signature_fields(s) and parse_stats_signature(s).get("users", "truth") == "truth"


def test_the_user_set_is_fields_with_a_true_reason(runs):
    truth, recs, train, r = runs
    c = r.compare(**STATS)
    assert c.dropped > 0
    fields = signature_fields(c.signatures["ndcg@10"])
    total = c.users + c.dropped
    assert fields["userset"] == "truth" and fields["paired"] == f"{c.users}/{total}" and fields["dropped"] == "norel"
    # the reason is true: the dropped users are exactly those without an item rated 4 or more
    relevant = set(truth.filter(truth["rating"] >= 4)["user_id"].to_list())
    assert c.dropped == len(set(truth["user_id"].to_list()) - relevant)
    assert parse_stats_signature(c.signatures["ndcg@10"])["dropped"] == "norel"


def test_a_segments_counts_are_its_own(runs):
    truth, recs, train, r = runs
    sc = compare_segments(r, "activity", train=train, **STATS)
    whole = int(signature_fields(sc.overall.signatures["ndcg@10"])["skipped"])
    own = []
    for c in sc.segments.values():
        f = signature_fields(c.signatures["ndcg@10"])
        assert int(f.get("skipped", 0)) == c.dropped and f.get("paired", f"{c.users}/{c.users}") == \
            f"{c.users}/{c.users + c.dropped}"
        own.append(c.dropped)
    assert sum(own) == whole and max(own) < whole


def test_the_tukey_signature_names_the_adjustment_applied(runs):
    c = runs[3].compare(test="tukey", **STATS)
    assert {signature_fields(s)["corr"] for s in c.signatures.values()} == {"tukey"}
    assert parse_stats_signature(c.signatures["ndcg@10"])["correction"] == "tukey"
