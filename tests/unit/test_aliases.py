"""Measure names of the IR ecosystem (ir_measures, trec_eval) are aliases of exact, signed
receval definitions: each equals the trec_eval dialect's value on tied, graded data, keeps the
resolved spec in its signature, never shadows a receval name silently, and says what it means
in ``receval explain``."""

from __future__ import annotations

import contextlib
import io

import pytest

import receval
from receval import SpecError, parse_spec
from receval.cli import main
from receval.registry import ALIAS_CASES, ALIASES, CASE_COLLISIONS, TREC_EVAL_CUTS, register, registered

# ties=text_desc on tied scores warns that the values depend on the ids: the point here; each
# alias announces itself in a note (tests/unit/test_spellings.py checks them)
pytestmark = [pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning"),
              pytest.mark.filterwarnings("ignore::receval.errors.RecevalNote")]

# tied scores, string ids ('9' vs '10': trec_eval breaks ties by docno as text, descending),
# graded ratings 0..3 (0: judged non-relevant), a truth user without recommendations (trec_eval
# leaves it out) and a user whose judged items are all non-relevant (trec_eval scores it 0)
RECS = {
    "user_id": ["a"] * 6 + ["b"] * 5 + ["d"] * 3 + ["e"] * 2,
    "item_id": ["9", "10", "3", "4", "5", "6", "1", "2", "10", "11", "12", "7", "8", "9", "1", "2"],
    "score": [0.9, 0.9, 0.5, 0.5, 0.5, 0.1, 0.7, 0.7, 0.7, 0.2, 0.1, 0.3, 0.3, 0.3, 0.5, 0.4],
}
TRUTH = {
    "user_id": ["a", "a", "a", "a", "b", "b", "b", "c", "d", "d", "e"],
    "item_id": ["10", "4", "6", "99", "2", "11", "12", "1", "8", "9", "2"],
    "rating": [2, 3, 1, 1, 1, 0, 3, 2, 0, 0, 2],
}

# alias -> the receval spec it means under the trec_eval dialect
SAME = {
    "P@3": "precision@3", "P@10": "precision@10", "R@2": "recall@2", "R@20": "recall@20",
    "AP": "map@all", "AP@3": "map@3", "RR": "mrr@all", "RR@2": "mrr@2",
    "nDCG@3": "ndcg@3", "nDCG@10": "ndcg@10", "nDCG": "ndcg@all",
    "Success@1": "hitrate@1", "Success@3": "hitrate@3",
    "Rprec": "rprecision", "RPrec": "rprecision", "R-Prec": "rprecision",
    "P_10": "precision@10", "P_2": "precision@2", "recall_20": "recall@20", "ndcg_cut_10": "ndcg@10",
    "ndcg_cut_2": "ndcg@2", "map_cut_10": "map@10", "map_cut_2": "map@2", "success_1": "hitrate@1",
    "recip_rank": "mrr@all", "P(rel=2)@3": "precision@3",
}


@pytest.mark.parametrize("alias", sorted(SAME))
def test_an_alias_equals_the_trec_eval_dialect_on_tied_graded_data(alias):
    overrides = {"rel": 2} if "rel=2" in alias else {}
    got = receval.evaluate(RECS, TRUTH, [alias])
    want = receval.evaluate(RECS, TRUTH, [SAME[alias]], dialect="trec_eval", **overrides)
    (key,) = got.keys()
    (wkey,) = want.keys()
    assert got[key] == pytest.approx(want[wkey], abs=1e-12), alias
    # the same value whatever dialect the call names: the alias carries trec_eval's options
    other = receval.evaluate(RECS, TRUTH, [alias], dialect="ranx")
    assert other[next(iter(other.keys()))] == pytest.approx(want[wkey], abs=1e-12)


def test_hr_is_receval_hitrate():
    """HR (recommender papers' hit rate) is receval's own hitrate, not trec_eval's success_k."""
    got = receval.evaluate(RECS, TRUTH, ["HR@2", "hitrate@2"])
    assert got["HR@2"] == got["hitrate@2"]
    assert got.signature("HR@2") == got.signature("hitrate@2")


def test_every_alias_is_tested():
    names = set(ALIASES) | {f"{n}_10" for n in TREC_EVAL_CUTS}
    tested = {a.split("(")[0].split("@")[0] for a in SAME} | {"success_10", "recall_10", "HR"}
    assert names <= tested | {f"{n}_10" for n in TREC_EVAL_CUTS}, names - tested


def test_the_tie_rule_matters_on_these_data():
    """The data are tied enough that the tie rule changes a value (so the test above checks it)."""
    text = receval.evaluate(RECS, TRUTH, ["precision@1"], dialect="trec_eval")
    item = receval.evaluate(RECS, TRUTH, ["precision@1"], dialect="trec_eval", ties="average")
    assert text[next(iter(text.keys()))] != item[next(iter(item.keys()))]


def test_the_signature_keeps_the_resolved_spec():
    res = receval.evaluate(RECS, TRUTH, ["P@10"])
    (key,) = res.keys()
    sig = res.signature(key) if callable(getattr(res, "signature", None)) else None
    spec = parse_spec("P@10")
    # keyed as written; the resolved definition is the spec's canonical form and the signature
    assert key == "P@10" and str(spec) == "precision(empty=zero,norecs=skip,order=score,rel=1,ties=text_desc)@10"
    assert res[str(spec)] == res["P@10"]
    if sig is not None:
        again = parse_spec(sig)
        assert again.opts["ties"] == "text_desc" and again.opts["rel"] == 1 and again.k == 10


def test_aliases_are_case_sensitive_and_never_shadow_a_receval_name():
    reg = registered()
    for name in [*ALIASES, *(f"{n}_10" for n in TREC_EVAL_CUTS)]:
        assert name not in reg, f"alias {name} is a receval name"
        if name.lower() in reg:
            assert name in ALIAS_CASES, f"alias {name} shadows receval's {name.lower()} silently"
    # receval's own names, in any case, keep their meaning
    assert str(parse_spec("map@10")) == "map@10"
    assert str(parse_spec("NDCG@10")) == "ndcg@10"
    assert str(parse_spec("MAP@10")) == "map@10"
    assert str(parse_spec("ndcg@10")) == "ndcg@10"
    assert str(parse_spec("nDCG@10")) != "ndcg@10"
    for name in CASE_COLLISIONS:
        assert name.lower() in reg and name not in ALIASES


def test_a_new_metric_cannot_take_an_alias_name():
    with pytest.raises(ValueError, match="alias"):
        register("ap", context=())(lambda h, ks, o: None)
    with pytest.raises(ValueError, match="alias"):
        register("ndcg_cut_5", context=())(lambda h, ks, o: None)
    assert "ap" not in registered() and "ndcg_cut_5" not in registered()


@pytest.mark.parametrize("text, fragment", [
    ("ap@10", "did you mean 'AP'"),
    ("p@10", "did you mean 'P'"),
    ("hr@10", "did you mean 'HR'"),
    ("p_10", "did you mean 'P_10'"),
    ("P", "needs a cut-off: write 'P@10'"),
    ("Rprec@5", "takes no cut-off"),
    ("P_10@10", "carries its cut-off"),
    ("recip_rank@10", "takes no cut-off"),
    ("Judged@10", "receval has no Judged@k"),
])
def test_misleading_suggestions_are_gone(text, fragment):
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    assert fragment in str(err.value)
    assert "'pap'" not in str(err.value)


def test_rbp_takes_ir_measures_p():
    assert str(parse_spec("RBP(p=0.9)")) == "rbp(persistence=0.9)"
    assert str(parse_spec("RBP(p=0.8)")) == "rbp"


def _explain(spec: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain", spec]) == 0
    return " ".join(out.getvalue().split())


def test_explain_says_whose_name_it_is():
    text = _explain("P@10")
    assert "P@10 is ir_measures/trec_eval's name; it means trec_eval's P_k" in text
    assert "ties=text_desc" in text and "Signature:" in text
    assert "ir_measures' NDCG is trec_eval's ndcg_cut" in _explain("NDCG@10")
    assert "whole ranking" in _explain("AP")
    assert "trec_eval's name" in _explain("ndcg_cut_10")
