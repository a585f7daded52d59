"""Signatures and the canonical spec form.

* every registered metric × every option value: the signature parses back to a spec that,
  evaluated again, gives the same value and the same signature;
* snapshots of exact signature strings;
* short keys are unique per metric;
* ``parse_spec(str(spec)) == spec``; the canonical form drops defaults and sorts options.
"""

from __future__ import annotations

import math

import pytest

import receval
from receval import SpecError, parse_signature, parse_spec
from receval.metrics import all_metrics, get_metric

V = receval.__version__

# every truth pair is also recommended (rating prediction needs a score for each), plus
# user 3 with no relevant item under rel=3 (a `skipped:1` field) and user 4 without recs
RECS = {
    "user_id": [1, 1, 1, 1, 2, 2, 2, 2, 3, 3],
    "item_id": [10, 20, 30, 40, 10, 40, 50, 60, 10, 20],
    "score": [4.5, 4.0, 3.5, 3.0, 4.0, 3.5, 2.5, 2.0, 1.0, 0.5],
    "rank": [1, 2, 3, 4, 1, 2, 3, 4, 1, 2],
}
TRUTH = {
    "user_id": [1, 1, 2, 2, 3, 4],
    "item_id": [20, 40, 40, 60, 10, 70],
    "rating": [5.0, 3.0, 4.0, 2.0, 1.0, 4.0],
}
SIDE = {
    "categories": {"item_id": [10, 20, 30, 40, 50, 60, 70], "category": ["a", "b", "a", "c", "b", "a", "c"]},
    "train": {"user_id": [1, 2, 5, 5, 5], "item_id": [10, 10, 20, 30, 70]},
    "catalog": [10, 20, 30, 40, 50, 60, 70, 80],
    "baseline": {"user_id": [1, 1, 2, 3], "item_id": [20, 80, 10, 30], "score": [2.0, 1.0, 1.0, 1.0]},
    "item_groups": {"item_id": [10, 20, 30, 40, 50, 60, 70, 80], "group": ["p", "q", "p", "q", "p", "q", "p", "q"]},
    "user_groups": {"user_id": [1, 2, 3, 4], "group": ["x", "y", "x", "y"]},
}

NUMERIC_TRIALS = {"rel": [3.0], "base": [math.e, 10.0], "t": [1.0]}
#: options that name a group of the data (free names): the groups of SIDE
NAME_TRIALS = {"icat": ["p", "q"], "ugroup": ["x", "y"]}
#: options a metric needs to compute at all, added to each of its sweep specs
REQUIRED = {"bias_disparity": {"icat": "p"}}
#: options that only mean something together (weight=pop needs its exponent; floor=1 keeps an
#: item without train rows countable), added when the sweep sets one of them
COMPANIONS = {"weight": {"gamma": "0.5", "floor": "1"}, "gamma": {"weight": "pop", "floor": "1"},
              "floor": {"weight": "pop", "gamma": "0.5"}}


def _specs_for(metric) -> list[str]:
    """The metric with each value of each option (one option at a time), rel=3 variants too."""
    k = "@3" if metric.needs_k else ""
    need = REQUIRED.get(metric.name, {})
    base = ",".join(f"{a}={v}" for a, v in need.items())
    out = [metric.name + (f"({base})" if base else "") + k]
    for name, axis in metric.all_axes().items():
        if axis.values:
            values = [v for v in axis.values if v != axis.default]
        elif axis.free:
            values = NAME_TRIALS[name]
        else:
            values = NUMERIC_TRIALS.get(name, [0.3])
        for v in values:
            shown = axis.render(v) if axis.numeric else v
            companions = COMPANIONS.get(name, {})
            if companions and metric.name == "hitrate":  # count=any has no propensity-weighted definition
                companions = {**companions, "count": "hits"}
            opts = {**need, **companions, name: shown}
            out.append(f"{metric.name}({','.join(f'{a}={w}' for a, w in opts.items())}){k}")
    return out


ALL = [(m.name, s) for m in all_metrics() for s in _specs_for(m)]
ALL += [("ndcg", "ndcg(ideal=none,base=e)@3"), ("ndcg", "ndcg(ideal=none,base=10,gain=exp2)@3")]


#: the same truth without user 4, so that norecs=error / empty=error have nothing to refuse
#: and every truth pair has a predicted rating
COMPLETE = {k: v[:-1] for k, v in TRUTH.items()}


def _evaluate(spec):
    text = str(spec)
    refusing = "norecs=error" in text or "empty=error" in text or text.startswith(("mae", "rmse"))
    truth = COMPLETE if refusing else TRUTH
    return receval.evaluate(RECS, truth, [spec], **SIDE)


def test_the_sweep_is_not_empty():
    names = {n for n, _ in ALL}
    assert {"ndcg", "map", "mar", "precision", "recall", "f1", "hitrate", "mrr", "dcg"} <= names
    assert len(ALL) > 80


@pytest.mark.parametrize("name, spec", ALL, ids=[s for _, s in ALL])
def test_signature_round_trip(name, spec):
    try:
        res = _evaluate(spec)
    except receval.RecevalError as exc:
        # a combination that is refused on this data must be refused for a stated reason,
        # never for the ranking core
        assert name not in {"precision", "recall", "f1", "dcg"} and (name not in {"hitrate", "mrr", "map", "mar"} or "ties=average" in str(spec)), exc
        assert name != "ndcg" or "base" in spec, exc
        pytest.skip(f"refused on the sweep data: {exc}")
    value, sig = res[spec], res.signature(spec)
    assert sig.startswith(name)
    assert sig.endswith(f"|dialect:standard|v:{V}")
    explicit, dialect, version = parse_signature(sig)
    assert (dialect, version) == ("standard", V)
    again = _evaluate(explicit)
    assert again[explicit] == value or (math.isnan(value) and math.isnan(again[explicit]))
    assert again.signature(explicit) == sig
    # and through the text of the explicit spec
    again = _evaluate(str(explicit))
    assert again.signature(str(explicit)) == sig


def test_skipped_is_informational_and_ignored_when_parsing():
    res = receval.evaluate(RECS, TRUTH, ["ndcg@3"], rel=3)
    sig = res.signature("ndcg@3")
    assert "|skipped:1|" in sig  # user 3 (rating 1) has no relevant item
    explicit, _, _ = parse_signature(sig)
    assert "skipped" not in str(explicit)
    assert receval.evaluate(RECS, TRUTH, [explicit]).signature(explicit) == sig


SNAPSHOTS = {
    "ndcg@10": "ndcg@10|gain:binary|ideal:cut|base:2|disc:log|rel:>0|order:score|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:{v}",
    "map(denominator=r)@4": "map@4|den:r|ind:yes|rel:>0|order:score|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:{v}",
    "precision@2": "precision@2|den:k|rel:>0|order:score|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:{v}",
    "dcg(base=e)@4": "dcg@4|gain:binary|base:e|disc:log|rel:>0|order:score|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:{v}",
    "ndcg(gain=shifted)@3": "ndcg@3|gain:shifted|ideal:cut|base:2|disc:log|t:0|neg:error|rel:>0|order:score|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:{v}",
}


@pytest.mark.parametrize("spec", list(SNAPSHOTS))
def test_signature_snapshots(spec):
    from receval.examples import WORKED_RECS, WORKED_TRUTH

    sig = receval.evaluate(WORKED_RECS, WORKED_TRUTH, [spec]).signature(spec)
    assert sig == SNAPSHOTS[spec].format(v=V)


def test_signature_snapshot_with_context_options():
    from receval.examples import WORKED_RECS, WORKED_TRUTH

    res = receval.evaluate(WORKED_RECS, WORKED_TRUTH, ["map(denominator=r)@20"], rel=4.5, norecs="skip", ties="item")
    assert res.signature("map(denominator=r)@20") == (
        f"map@20|den:r|ind:yes|rel:4.5|order:score|ties:item|hitscore:any|dup:error|tdup:error|empty:skip|norecs:skip|dialect:standard|v:{V}"
    )


def test_parse_signature_docstring_example():
    spec, dialect, version = parse_signature(
        "map@20|den:r|ind:yes|rel:4.5|order:score|ties:input|hitscore:any|dup:error|tdup:error|"
        "empty:skip|norecs:skip|dialect:ms_recommenders|v:0.1.0"
    )
    assert str(spec) == "map(denominator=r,norecs=skip,order=score,rel=4.5,ties=input)@20"  # input is not the default
    assert (dialect, version) == ("ms_recommenders", "0.1.0")


def test_parse_signature_errors():
    with pytest.raises(SpecError, match="empty signature"):
        parse_signature("")
    with pytest.raises(SpecError, match="not an option of 'ndcg'"):
        parse_signature("ndcg@3|den:r|v:0.1.0")
    with pytest.raises(SpecError, match="key:value"):
        parse_signature("ndcg@3|gain")
    with pytest.raises(SpecError, match="unknown metric"):
        parse_signature("ndgc@3|gain:binary")
    with pytest.raises(SpecError, match="`k` must be an integer >= 1, got 0"):
        parse_signature("ndcg@0|gain:binary")


@pytest.mark.parametrize("metric", [m.name for m in all_metrics()])
def test_short_keys_unique_per_metric(metric):
    m = get_metric(metric)
    keys = [axis.key for axis in m.all_axes().values()]
    assert len(keys) == len(set(keys)), keys
    assert not set(keys) & {"dialect", "v", "skipped"}
    names = list(m.all_axes())
    assert len(names) == len(set(names))


CANONICAL = {
    "NDCG( ideal=uncut , gain=exp2 )@20": "ndcg(gain=exp2,ideal=uncut)@20",
    "map(denominator=min_k_r)@20": "map@20",  # the default is dropped
    "map(indicator=no,denominator=k)@5": "map(denominator=k,indicator=no)@5",
    "ndcg(ties=item_desc,rel=4)@10": "ndcg(rel=4,ties=item_desc)@10",
    "ndcg(rel=>=4.5)@10": "ndcg(rel=4.5)@10",
    "dcg(base=2)@3": "dcg@3",
    "dcg(base=e)@3": "dcg(base=e)@3",
    "precision(empty=skip,norecs=zero,dup=error)@1": "precision@1",
    "mrr(hits=all) @ 7": "mrr(hits=all)@7",
    "hitrate(count=yes)@3": None,  # not a value of `count`
}


@pytest.mark.parametrize("text", list(CANONICAL))
def test_canonical_form(text):
    want = CANONICAL[text]
    if want is None:
        with pytest.raises(SpecError):
            parse_spec(text)
        return
    spec = parse_spec(text)
    assert str(spec) == want
    assert parse_spec(str(spec)) == parse_spec(want)
    assert str(parse_spec(str(spec))) == want


@pytest.mark.parametrize("name, spec", [x for x in ALL if x[0] in ("ndcg", "map", "mar", "f1", "dcg", "recall")])
def test_parse_str_round_trip(name, spec):
    try:
        s = parse_spec(spec)
    except SpecError:
        pytest.skip("not a valid spec")
    assert parse_spec(str(s)) == s or all(v == get_metric(name).axis(k).default for k, v in s.options)


def test_canonical_form_sorts_every_option():
    s = parse_spec("ndcg(norecs=skip,gain=exp2,ties=item,ideal=uncut,empty=zero)@5")
    inner = str(s)[len("ndcg(") : str(s).index(")")]
    keys = [part.split("=")[0] for part in inner.split(",")]
    assert keys == sorted(keys) == ["empty", "gain", "ideal", "norecs", "ties"]
    assert parse_spec(str(s)) == s


def test_explicit_default_is_distinct_under_a_dialect():
    from receval.examples import WORKED_RECS, WORKED_TRUTH

    res = receval.evaluate(WORKED_RECS, WORKED_TRUTH, ["map@4", "map(denominator=min_k_r)@4"], dialect="daisyrec")
    assert len(set(res.keys())) == 2
    assert res["map(denominator=min_k_r)@4"] != res["map@4"]
    # without a dialect the explicit default is dropped from the key
    plain = receval.evaluate(WORKED_RECS, WORKED_TRUTH, ["map(denominator=min_k_r)@4"])
    assert plain.keys() == ["map@4"]
