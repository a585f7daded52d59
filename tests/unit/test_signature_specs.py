"""A signature given as a metric spec is parsed with exactly the checks of a spec.

Real signatures are taken from what ``receval evaluate`` prints on the example files
(``-m ndcg@10 ... --rel 4``), then mutated the way a signature gets damaged when it is copied
from a paper, a log or a spreadsheet: the cut-off lost or added, a field repeated with another
value, an empty field or value. Every mutation must be refused, with a one-line
:class:`SpecError` that names the fix, by :func:`receval.parse_signature`, by
:func:`receval.evaluate` and by ``receval explain`` / ``receval evaluate -m``, never
evaluated to 0.0, 1.0 or NaN.
"""

from __future__ import annotations

import json

import pytest

import receval
from receval import SpecError, parse_signature, parse_spec
from receval.cli import main
from receval.examples import example_path

RECS, TRUTH = str(example_path("recs.csv")), str(example_path("truth.csv"))
PRINTED_METRICS = ["ndcg@10", "precision@5", "recall@10", "mrr@10", "hitrate@10", "map@10", "rprecision", "auc", "bpref"]


@pytest.fixture(scope="module")
def printed():
    """metric -> (value, signature) as ``receval evaluate --format json`` prints them."""
    import contextlib
    import io

    argv = ["evaluate", RECS, TRUTH, "--rel", "4", "--format", "json"]
    for m in PRINTED_METRICS:
        argv += ["-m", m]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return {r["metric"]: (r["value"], r["signature"]) for r in json.loads(out.getvalue())["results"]}


def _sub(sig: str, old: str, new: str) -> str:
    assert old in sig, (old, sig)
    return sig.replace(old, new, 1)


def _head(sig: str, new: str) -> str:
    return new + sig[sig.index("|"):]


# (id, metric whose printed signature is mutated, mutation, a fragment of the error)
MALFORMED = [
    ("ndcg-lost-k", "ndcg@10", lambda s: _head(s, "ndcg"), "needs a cut-off"),
    ("precision-lost-k", "precision@5", lambda s: _head(s, "precision"), "needs a cut-off"),
    ("recall-lost-k", "recall@10", lambda s: _head(s, "recall"), "needs a cut-off"),
    ("mrr-lost-k", "mrr@10", lambda s: _head(s, "mrr"), "needs a cut-off"),
    ("hitrate-lost-k", "hitrate@10", lambda s: _head(s, "hitrate"), "needs a cut-off"),
    ("map-lost-k", "map@10", lambda s: _head(s, "map"), "needs a cut-off"),
    ("ndcg-empty-k", "ndcg@10", lambda s: _head(s, "ndcg@"), "cut-off"),
    ("ndcg-k-0", "ndcg@10", lambda s: _head(s, "ndcg@0"), "`k` must be an integer >= 1, got 0"),
    ("ndcg-k-fraction", "ndcg@10", lambda s: _head(s, "ndcg@1.5"), "`k` must be an integer >= 1"),
    ("ndcg-k-twice", "ndcg@10", lambda s: _head(s, "ndcg@10@5"), "name@k"),
    ("ndcg-k-word", "ndcg@10", lambda s: _head(s, "ndcg@ten"), "`k` must be an integer >= 1"),
    ("rprecision-given-k", "rprecision", lambda s: _head(s, "rprecision@10"), "takes no cut-off"),
    ("gain-twice-two-values", "ndcg@10", lambda s: _sub(s, "|gain:binary|", "|gain:binary|gain:exp2|"), "`gain` twice"),
    ("gain-twice-same-value", "ndcg@10", lambda s: _sub(s, "|gain:binary|", "|gain:binary|gain:binary|"), "`gain` twice"),
    ("den-twice", "map@10", lambda s: _sub(s, "|den:min_k_r|", "|den:min_k_r|den:r|"), "`den` twice"),
    ("rel-twice", "precision@5", lambda s: _sub(s, "|rel:4|", "|rel:4|rel:1|"), "`rel` twice"),
    ("ties-twice-at-the-end", "recall@10", lambda s: s + "|ties:input", "`ties` twice"),
    ("dialect-twice", "ndcg@10", lambda s: s + "|dialect:recbole", "`dialect` twice"),
    ("version-twice", "mrr@10", lambda s: s + "|v:0.0.1", "`v` twice"),
    ("skipped-twice", "ndcg@10", lambda s: _sub(s, "|skipped:2|", "|skipped:2|skipped:3|"), "`skipped` twice"),
    ("head-option-and-field", "ndcg@10", lambda s: _head(s, "ndcg(gain=exp2)@10"), "`gain` twice"),
    ("empty-field", "ndcg@10", lambda s: _sub(s, "|ideal:cut|", "||ideal:cut|"), "empty field"),
    ("trailing-bar", "hitrate@10", lambda s: s + "|", "empty field"),
    ("empty-rel", "ndcg@10", lambda s: _sub(s, "|rel:4|", "|rel:|"), "no value"),
    ("empty-dialect", "precision@5", lambda s: _sub(s, "|dialect:standard|", "|dialect:|"), "no value"),
    ("field-without-colon", "map@10", lambda s: _sub(s, "|ind:yes|", "|ind|"), "key:value"),
    ("option-of-another-metric", "precision@5", lambda s: _head(s, "ndcg@5"), "not an option of 'ndcg'"),
    ("misspelt-metric", "ndcg@10", lambda s: _head(s, "ndgc@10"), "did you mean 'ndcg'"),
    ("bad-value", "ndcg@10", lambda s: _sub(s, "|gain:binary|", "|gain:binary2|"), "unknown value"),
]


def _case(printed, metric, mutate):
    value, sig = printed[metric]
    bad = mutate(sig)
    assert bad != sig
    return bad


def test_at_least_fifteen_mutations():
    assert len(MALFORMED) >= 15


def test_printed_signatures_evaluate_to_their_value(printed):
    for metric, (value, sig) in printed.items():
        got = receval.evaluate(RECS, TRUTH, [sig])
        assert got.entries[0].value == value, metric
        assert got.entries[0].signature == sig, metric
        # upper case and spaces around the bars are read as a spec reads them
        loose = sig.upper().replace("|", " | ")
        assert parse_signature(loose)[0] == parse_signature(sig)[0]


@pytest.mark.parametrize("name, metric, mutate, want", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_signature_is_refused(printed, name, metric, mutate, want):
    bad = _case(printed, metric, mutate)
    for call in (lambda: parse_signature(bad), lambda: parse_spec(bad),
                 lambda: receval.evaluate(RECS, TRUTH, [bad])):
        with pytest.raises(SpecError) as exc:
            call()
        msg = str(exc.value)
        assert want in msg, (want, msg)
        assert "\n" not in msg, msg


@pytest.mark.parametrize("name, metric, mutate, want", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_signature_is_refused_by_the_cli(printed, capsys, name, metric, mutate, want):
    bad = _case(printed, metric, mutate)
    assert main(["explain", bad]) == 2
    err = capsys.readouterr().err.strip()
    assert want in err and "\n" not in err and "Traceback" not in err, err
    assert main(["evaluate", RECS, TRUTH, "-m", bad, "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert want in captured.err and not captured.out.strip(), captured


# the head of a signature is a spec: what the spec parser refuses, the signature parser refuses
# for the same reason (one grammar). (A list metric without a cut-off, ``ndcg``, is a spec over the
# whole list, printed ``ndcg@all``; a signature head without its cut-off is refused: MALFORMED.)
HEADS = ["f1", "arp", "mar", "ndcg@", "ndcg@0", "ndcg@1.5", "ndcg@10@5", "rprecision@10", "mae@3", "ndgc@10"]


@pytest.mark.parametrize("head", HEADS)
def test_the_head_is_checked_as_a_spec(head):
    with pytest.raises(SpecError) as as_spec:
        parse_spec(head)
    with pytest.raises(SpecError) as as_sig:
        parse_signature(head + "|dialect:standard|v:0.1.0")
    # the same check fails: the spec's reason is inside the signature's message
    reason = str(as_spec.value).split(":")[0].split(";")[0]
    if reason.startswith("write "):  # the message starts with the fix; the reason follows it
        reason = str(as_spec.value).split(": ", 1)[1].split(" (")[0].split(f"{head} ", 1)[-1]
    assert reason in str(as_sig.value), (str(as_spec.value), str(as_sig.value))


def test_the_fix_is_named(printed):
    _, sig = printed["ndcg@10"]
    with pytest.raises(SpecError, match=r"e.g. 'ndcg@10\|'"):
        parse_signature(_head(sig, "ndcg"))
    _, sig = printed["rprecision"]
    with pytest.raises(SpecError, match=r"start the signature with 'rprecision\|'"):
        parse_signature(_head(sig, "rprecision@10"))


# --------------------------------------------------------------------------------------------
# the dialect a signature names (``dialect:recbole@1.2.1``): versions match on whole dotted
# components, never as text prefixes, and a version several shipped ones start with is refused

from dataclasses import replace  # noqa: E402

from receval.dialects import all_dialects, load_dialect  # noqa: E402

VERSIONS = [
    ("daisyrec@2.3", "daisyrec@2.3.0"),  # documented: the leading components of one version
    ("recbole@1.2", "recbole@1.2.1"),
    ("replay@0.22", "replay@0.22.0"),
    ("ms_recommenders@1.2", "ms_recommenders@1.2.1"),
    ("RecBole @ 1.2.1", "recbole@1.2.1"),
    ("replay@0.2", "has no version '0.2'; versions: 0.22.0, 0.4.0"),  # not 0.22.0
    ("ms_recommenders@2", "has no version '2'; versions: 1.2.1, 2021.2.9"),  # not 2021.2.9
    ("ms_recommenders@202", "has no version '202'"),
    ("rs_metrics@0", "is ambiguous: it could be rs_metrics@0.5.0, rs_metrics@0.6.0"),
    ("replay@0", "is ambiguous: it could be replay@0.22.0, replay@0.4.0"),
    ("trec_eval@0.5.1", "has no version '0.5.1'; versions: 0.5.11"),
    ("neurec@f8d", "has no version 'f8d'"),
    ("daisyrec@2.3.0.0", "has no version '2.3.0.0'"),
    ("daisyrec@2..3", "has no version '2..3'"),
    ("recbole@", "has an '@' without a version"),
]


@pytest.mark.parametrize("name, want", VERSIONS, ids=[v[0] for v in VERSIONS])
def test_dialect_versions_match_whole_components(name, want):
    if "@" in want and " " not in want:
        assert load_dialect(name).label == want
        return
    with pytest.raises(SpecError) as exc:
        load_dialect(name)
    assert want in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(SpecError, match=want.split(";")[0].replace("(", r"\(")):
        receval.evaluate(RECS, TRUTH, ["ndcg@10"], dialect=name)


def test_every_shipped_label_names_itself():
    for d in all_dialects():
        assert load_dialect(d.label) is d


def test_version_text_prefixes_are_not_components():
    from receval.dialects import _match_version

    base = next(d for d in all_dialects() if d.name == "recbole")
    make = lambda *vs: [replace(base, version=v) for v in vs]  # noqa: E731
    assert _match_version("x", "1.1", make("1.10", "1.1")).version == "1.1"
    assert _match_version("x", "1.1", make("1.10", "1.1.2")).version == "1.1.2"
    with pytest.raises(SpecError, match="has no version '1.1'"):
        _match_version("x", "1.1", make("1.10", "1.11.0"))
    with pytest.raises(SpecError, match=r"ambiguous: it could be x@1\.1\.0, x@1\.1\.2"):
        _match_version("x", "1.1", make("1.1.0", "1.1.2", "1.10"))


def test_informational_side_field_is_read_once():
    """``side:<inputs>`` (the side inputs a value was computed from) is information, like
    ``skipped``: read and ignored, but refused when repeated."""
    recs = {"user_id": [1, 1, 2], "item_id": [1, 2, 3], "score": [0.3, 0.2, 0.1]}
    truth = {"user_id": [1, 2], "item_id": [2, 3]}
    train = {"user_id": [1, 1, 1], "item_id": [1, 2, 3]}
    res = receval.evaluate(recs, truth, ["coverage@2"], train=train)
    sig = res.signature("coverage@2")
    if "|side:" not in sig:
        pytest.skip("this build's signatures carry no side field")
    assert receval.evaluate(recs, truth, [sig], train=train).entries[0].value == res.entries[0].value
    with pytest.raises(SpecError, match="`side` twice"):
        parse_spec(sig.replace("|side:train", "|side:train|side:catalog"))
