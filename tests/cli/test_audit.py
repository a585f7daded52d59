"""``receval audit``: the definition inference recovers the options of deliberately altered
implementations (plain Python, written from each variant's textbook description, not from
receval's code), says "no match" for broken ones, and the command line loads
``module:function`` / ``file.py:function`` and refuses bad input in one line."""

from __future__ import annotations

import math
import textwrap

import pytest

from receval.audit import AuditError, AuditReport, audit
from receval.conformance.suite import cases as suite_cases

pytestmark = pytest.mark.xdist_group("audit")


# --- helpers: the case frames as plain Python ------------------------------------------------


def lists(recs):
    """user -> items in list order (the rank column)."""
    out: dict = {}
    for r in recs.sort(["user", "rank"]).iter_rows(named=True):
        out.setdefault(r["user"], []).append(r["item"])
    return out


def by_score(recs, tie=None):
    """user -> items by score descending; equal scores by item id (tie='item') or row order."""
    rows = list(recs.iter_rows(named=True))
    key = (lambda r: (-r["score"], r["item"])) if tie == "item" else (lambda r: -r["score"])
    out: dict = {}
    for r in sorted(rows, key=key):
        out.setdefault(r["user"], []).append(r["item"])
    return out


def ratings(truth, positive_only=False):
    """user -> {item: rating} (the highest rating of a repeated item, ``tdup=max``: the first row
    would be a rule no option names where the repeats disagree, the suite's ``rating_conflicts``);
    with ``positive_only`` a rating <= 0 is not relevant (the user is still a truth user)."""
    out: dict = {}
    for r in truth.iter_rows(named=True):
        rel = out.setdefault(r["user"], {})
        if positive_only and r["rating"] <= 0:
            continue
        rel[r["item"]] = max(rel.get(r["item"], r["rating"]), r["rating"])
    return out


def disc(i, base=2.0):
    return 1.0 / math.log(i + 2, base)


# --- NDCG ---------------------------------------------------------------------------------------


def ndcg_standard(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        dcg = sum(disc(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel)
        idcg = sum(disc(i) for i in range(min(k, len(rel))))
        out[u] = dcg / idcg
    return out


def ndcg_ideal_over_list(recs, truth, k, side):
    """Evidently / Transformers4Rec: the ideal is the retrieved list's own hits, sorted."""
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        hits = [1.0 if it in rel else 0.0 for it in L.get(u, [])[:k]]
        dcg = sum(h * disc(i) for i, h in enumerate(hits))
        idcg = sum(h * disc(i) for i, h in enumerate(sorted(hits, reverse=True)))
        out[u] = dcg / idcg if idcg else 0.0
    return out


def ndcg_exponential_gain(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        dcg = sum((2 ** rel[it] - 1) * disc(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel)
        best = sorted((2 ** r - 1 for r in rel.values()), reverse=True)[:k]
        idcg = sum(g * disc(i) for i, g in enumerate(best))
        out[u] = dcg / idcg if idcg else 0.0
    return out


def ndcg_linear_gain(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        dcg = sum(rel[it] * disc(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel)
        best = sorted(rel.values(), reverse=True)[:k]
        idcg = sum(g * disc(i) for i, g in enumerate(best))
        out[u] = dcg / idcg if idcg else 0.0
    return out


def ndcg_ideal_uncut(recs, truth, k, side):
    """The ideal DCG over every relevant item, not only the first k."""
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        dcg = sum(disc(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel)
        out[u] = dcg / sum(disc(i) for i in range(len(rel)))
    return out


def ndcg_ideal_k(recs, truth, k, side):
    """RecTools: the ideal fills all k positions."""
    L, T = lists(recs), ratings(truth)
    return {u: sum(disc(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel) / sum(disc(i) for i in range(k))
            for u, rel in T.items()}


def ndcg_by_score_item_ties(recs, truth, k, side):
    """Sorts by score itself, equal scores by item id (ignores the rank column)."""
    L, T = by_score(recs, tie="item"), ratings(truth)
    out = {}
    for u, rel in T.items():
        dcg = sum(disc(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel)
        out[u] = dcg / sum(disc(i) for i in range(min(k, len(rel))))
    return out


def ndcg_discount_logmax2(recs, truth, k, side):
    """The discount 1/max(1, log2(i)) (position 1 and 2 weigh 1)."""
    def d(i):
        return 1.0 / max(1.0, math.log2(i + 1))

    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        dcg = sum(d(i) for i, it in enumerate(L.get(u, [])[:k]) if it in rel)
        out[u] = dcg / sum(d(i) for i in range(min(k, len(rel))))
    return out


def dcg_log10(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: sum(disc(i, 10.0) for i, it in enumerate(L.get(u, [])[:k]) if it in rel) for u, rel in T.items()}


def ndcg_broken(recs, truth, k, side):
    """Deliberately broken: a position-independent share smoothed by +1."""
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / (len(rel) + 1.0) + 0.01 for u, rel in T.items()}


# --- MAP, precision, recall, hit rate, MRR --------------------------------------------------------


def _ap(items, rel, k, den):
    hits, s = 0, 0.0
    for i, it in enumerate(items[:k]):
        if it in rel:
            hits += 1
            s += hits / (i + 1)
    d = {"min_k_r": min(k, len(rel)), "k": k, "r": len(rel), "hits": hits}[den]
    return s / d if d else 0.0


def map_standard(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: _ap(L.get(u, []), rel, k, "min_k_r") for u, rel in T.items()}


def map_divided_by_k(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: _ap(L.get(u, []), rel, k, "k") for u, rel in T.items()}


def map_divided_by_r(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: _ap(L.get(u, []), rel, k, "r") for u, rel in T.items()}


def map_divided_by_hits(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: _ap(L.get(u, []), rel, k, "hits") for u, rel in T.items()}


def precision_standard(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / k for u, rel in T.items()}


def precision_over_list_length(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        top = L.get(u, [])[:k]
        out[u] = sum(1 for it in top if it in rel) / len(top) if top else 0.0
    return out


def precision_over_min_k_r(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / min(k, len(rel)) for u, rel in T.items()}


def precision_mean_only(recs, truth, k, side):
    """Returns one number: the mean over the truth users."""
    values = precision_standard(recs, truth, k, side)
    return sum(values.values()) / len(values)


def precision_positive_zero(recs, truth, k, side):
    """Relevant = rating > 0; a user with no relevant item scores 0 and is averaged."""
    L, T = lists(recs), ratings(truth, positive_only=True)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / k for u, rel in T.items()}


def precision_positive_skip(recs, truth, k, side):
    """Relevant = rating > 0; a user with no relevant item is left out of the mean."""
    L, T = lists(recs), ratings(truth, positive_only=True)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / k for u, rel in T.items() if rel}


def precision_rated_at_least_1(recs, truth, k, side):
    """Relevant = rating >= 1 (the fractional ratings of the suite tell it from rating > 0)."""
    L = lists(recs)
    T: dict = {}
    for r in truth.iter_rows(named=True):
        rel = T.setdefault(r["user"], set())
        if r["rating"] >= 1:
            rel.add(r["item"])
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / k for u, rel in T.items() if rel}


def recall_standard(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / len(rel) for u, rel in T.items()}


def recall_over_min_k_r(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 for it in L.get(u, [])[:k] if it in rel) / min(k, len(rel)) for u, rel in T.items()}


def recall_over_listed(recs, truth, k, side):
    """Divides by the relevant items found anywhere in the list (0 when none is listed)."""
    L, T = lists(recs), ratings(truth)
    out = {}
    for u, rel in T.items():
        listed = sum(1 for it in L.get(u, []) if it in rel)
        out[u] = sum(1 for it in L.get(u, [])[:k] if it in rel) / listed if listed else 0.0
    return out


def recall_users_with_recs(recs, truth, k, side):
    """Averages only the users who have recommendations (an inner join of truth and recs)."""
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 for it in L[u][:k] if it in rel) / len(rel) for u, rel in T.items() if u in L}


def hitrate_standard(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: float(any(it in rel for it in L.get(u, [])[:k])) for u, rel in T.items()}


def hitrate_summing_hits(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: float(sum(1 for it in L.get(u, [])[:k] if it in rel)) for u, rel in T.items()}


def mrr_standard(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: next((1 / (i + 1) for i, it in enumerate(L.get(u, [])[:k]) if it in rel), 0.0) for u, rel in T.items()}


def mrr_summing_all_hits(recs, truth, k, side):
    L, T = lists(recs), ratings(truth)
    return {u: sum(1 / (i + 1) for i, it in enumerate(L.get(u, [])[:k]) if it in rel) for u, rel in T.items()}


def mrr_without_cutoff(recs, truth, k, side):
    """The first relevant item anywhere in the list (k ignored): no receval definition."""
    L, T = lists(recs), ratings(truth)
    return {u: next((1 / (i + 1) for i, it in enumerate(L.get(u, [])) if it in rel), 0.0) for u, rel in T.items()}


def f1_of_means(recs, truth, k, side):
    """One number: the F1 of mean precision and mean recall."""
    p = precision_standard(recs, truth, k, side)
    r = recall_standard(recs, truth, k, side)
    P, R = sum(p.values()) / len(p), sum(r.values()) / len(r)
    return 2 * P * R / (P + R) if P + R else 0.0


def rbp_half(recs, truth, k, side):
    """Rank-biased precision with persistence 0.5 (binary gains)."""
    L, T = lists(recs), ratings(truth)
    return {u: (1 - 0.5) * sum(0.5 ** i for i, it in enumerate(L.get(u, [])[:k]) if it in rel) for u, rel in T.items()}


def arp_train_rows(recs, truth, k, side):
    """Average recommendation popularity: mean train-row count of the top-k items."""
    pop: dict = {}
    for r in side["train"].iter_rows(named=True):
        pop[r["item"]] = pop.get(r["item"], 0) + 1
    L, T = lists(recs), ratings(truth)
    out = {}
    for u in T:
        top = L.get(u, [])[:k]
        out[u] = sum(pop.get(it, 0) for it in top) / len(top) if top else 0.0
    return out


# (implementation, metric, options the inference must report, options it must not report)
RECOVERED = [
    (ndcg_standard, "ndcg", {}, ("ideal", "gain", "order", "discount")),
    (ndcg_ideal_over_list, "ndcg", {"ideal": "hits"}, ("gain",)),
    (ndcg_exponential_gain, "ndcg", {"gain": "exp2"}, ("ideal",)),
    (ndcg_linear_gain, "ndcg", {"gain": "linear"}, ("ideal",)),
    (ndcg_ideal_uncut, "ndcg", {"ideal": "uncut"}, ("gain",)),
    (ndcg_ideal_k, "ndcg", {"ideal": "k"}, ("gain",)),
    (ndcg_by_score_item_ties, "ndcg", {"order": "score", "ties": "item"}, ("ideal", "gain")),
    (ndcg_discount_logmax2, "ndcg", {"discount": "logmax2"}, ("ideal", "gain")),
    (dcg_log10, "dcg", {"base": "10"}, ("gain",)),
    (map_standard, "map", {}, ("denominator",)),
    (map_divided_by_k, "map", {"denominator": "k"}, ()),
    (map_divided_by_r, "map", {"denominator": "r"}, ()),
    (map_divided_by_hits, "map", {"denominator": "hits"}, ()),
    (precision_standard, "precision", {}, ("denominator",)),
    (precision_over_list_length, "precision", {"denominator": "length"}, ()),
    (precision_over_min_k_r, "precision", {"denominator": "min_k_r"}, ()),
    (precision_mean_only, "precision", {}, ("denominator",)),
    # rel:>0 is how evaluate reads a truth with ratings (an unwritten rel): the standard definition
    (precision_positive_zero, "precision", {"empty": "zero"}, ("rel",)),
    (precision_positive_skip, "precision", {}, ("empty", "rel")),
    (precision_rated_at_least_1, "precision", {"rel": "1"}, ("empty",)),
    (recall_standard, "recall", {}, ("denominator", "norecs")),
    (recall_over_min_k_r, "recall", {"denominator": "min_k_r"}, ()),
    (recall_over_listed, "recall", {"denominator": "listed"}, ()),
    (recall_users_with_recs, "recall", {"norecs": "skip"}, ("denominator",)),
    (hitrate_standard, "hitrate", {}, ("count",)),
    (hitrate_summing_hits, "hitrate", {"count": "hits"}, ()),
    (mrr_standard, "mrr", {}, ("hits",)),
    (mrr_summing_all_hits, "mrr", {"hits": "all"}, ()),
    (f1_of_means, "f1", {"aggregate": "means"}, ()),
    (rbp_half, "rbp", {"persistence": "0.5"}, ("normalize",)),
    (arp_train_rows, "arp", {}, ("count", "denominator", "scale")),
]


def test_there_are_at_least_20_altered_implementations():
    altered = [r for r in RECOVERED if r[2]]
    assert len(altered) >= 20 and len(RECOVERED) >= 28


@pytest.mark.parametrize("impl,metric,want,absent", RECOVERED, ids=[r[0].__name__ for r in RECOVERED])
def test_the_inference_recovers_the_options(impl, metric, want, absent):
    report = audit(impl, metric)
    # a match, or every definition that has a value agrees and the best refuses an input it answered
    # (negative gains: receval refuses an NDCG that could exceed 1, the function computes one)
    assert report.status == "match" or report.not_compared and report.closest[0].wrong == 0, str(report)
    for key, value in want.items():
        assert report.options.get(key) == value, (key, str(report))
    for key in absent:
        assert key not in report.options, (key, str(report))
    assert "Formula:" in str(report)


def test_a_dialect_is_named_when_it_is_the_definition():
    report = audit(ndcg_ideal_k, "ndcg")
    assert any(d.startswith("rectools") for d in report.dialects), str(report)


@pytest.mark.parametrize("impl,metric", [(ndcg_broken, "ndcg"), (mrr_without_cutoff, "mrr")])
def test_no_match_names_the_closest_and_the_case_that_rules_it_out(impl, metric):
    report = audit(impl, metric)
    assert report.status == "no match"
    assert report.closest and report.closest[0].case["id"].startswith(metric)
    text = str(report)
    assert "NO MATCH" in text and "smallest case that tells them apart" in text and "Formula:" in text
    d = report.to_dict()
    assert d["status"] == "no match" and (d["closest"][0]["wrong"] >= 1 or d["closest"][0]["refused"] >= 1)


def test_mrr_without_cutoff_is_ruled_out_by_a_list_longer_than_k():
    report = audit(mrr_without_cutoff, "mrr")
    case = report.closest[0].case
    assert case["k"] is not None and max(r[3] for r in case["recs"]) > case["k"]


def test_a_user_set_difference_is_reported_as_such():
    def recall_skips_users_without_recs_but_is_otherwise_standard(recs, truth, k, side):
        return recall_users_with_recs(recs, truth, k, side)

    report = audit(recall_skips_users_without_recs_but_is_otherwise_standard, "recall",
                   cases=[c for c in suite_cases("recall") if "no_recs" in c.tags and "norecs" not in c.spec])
    # on these cases norecs=skip reproduces it
    assert report.status == "match" and report.options.get("norecs") == "skip"


def test_an_implementation_that_raises_is_no_evidence():
    def boom(recs, truth, k, side):
        raise RuntimeError("not implemented")

    report = audit(boom, "precision")
    assert report.status == "no evidence" and "RuntimeError: not implemented" in report.errors[0]
    assert "NO EVIDENCE" in str(report)


def test_the_report_is_a_dict_and_text():
    report = audit(map_divided_by_k, "map")
    assert isinstance(report, AuditReport)
    d = report.to_dict()
    assert d["status"] == "match" and d["options"]["denominator"] == "k" and d["cases"] > 100
    assert str(report).startswith("map_divided_by_k as map:")


# --- the command line -------------------------------------------------------------------------


IMPL_FILE = textwrap.dedent('''
    def precision_by_length(recs, truth, k, side):
        rel = {}
        for r in truth.iter_rows(named=True):
            rel.setdefault(r["user"], set()).add(r["item"])
        lists = {}
        for r in recs.sort(["user", "rank"]).iter_rows(named=True):
            lists.setdefault(r["user"], []).append(r["item"])
        out = {}
        for u, items in rel.items():
            top = lists.get(u, [])[:k]
            out[u] = sum(1 for i in top if i in items) / len(top) if top else 0.0
        return out
''')


def test_cli_audits_a_function_in_a_file(tmp_path, capsys):
    from receval.cli import main

    f = tmp_path / "mymetric.py"
    f.write_text(IMPL_FILE)
    assert main(["audit", f"{f}:precision_by_length", "--metric", "precision"]) == 0
    out = capsys.readouterr().out
    assert "MATCH on every case" in out and "denominator=length" in out


def test_cli_audits_module_function(tmp_path, capsys, monkeypatch):
    from receval.cli import main

    (tmp_path / "my_audit_module.py").write_text(IMPL_FILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "my_audit_module:precision_by_length", "-m", "precision", "--json"]) == 0
    import json

    got = json.loads(capsys.readouterr().out)
    assert got[0]["status"] == "match" and got[0]["options"]["denominator"] == "length"


def test_cli_audits_an_exported_folder(tmp_path, capsys):
    from receval.cli import main

    assert main(["conformance", "export", str(tmp_path / "suite")]) == 0
    f = tmp_path / "mymetric.py"
    f.write_text(IMPL_FILE)
    capsys.readouterr()
    assert main(["audit", f"{f}:precision_by_length", "-m", "precision", "--cases", str(tmp_path / "suite")]) == 0
    assert "denominator=length" in capsys.readouterr().out


@pytest.mark.parametrize("args,needle", [
    (["audit", "no_such_module_xyz:fn", "-m", "precision"], "cannot import module 'no_such_module_xyz'"),
    (["audit", "/nowhere/file.py:fn", "-m", "precision"], "no file '/nowhere/file.py'"),
    (["audit", "just_a_name", "-m", "precision"], "just_a_name"),
    (["audit", "math:sqrt_nope", "-m", "precision"], "has no function 'sqrt_nope'"),
    (["audit", "math:sqrt", "-m", "ndgc"], "unknown metric 'ndgc'"),
])
def test_cli_refusals_are_one_line(args, needle, capsys):
    from receval.cli import main

    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("receval: error:") and needle in err and "Traceback" not in err


def test_bad_implementation_text_in_the_api():
    with pytest.raises(AuditError, match="no function"):
        audit("math:nope", "precision")


def test_the_audit_page_quotes_the_example_and_its_verdict():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "audit.md").read_text(encoding="utf-8")
    example = (root / "examples" / "audit_my_metric.py").read_text(encoding="utf-8")
    assert example in page
    import importlib.util

    spec = importlib.util.spec_from_file_location("audit_my_metric", root / "examples" / "audit_my_metric.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = audit(module.my_ndcg, "ndcg")
    assert report.status == "match" and report.options["ideal"] == "hits"
    verdict = str(report).splitlines()[1]
    assert verdict in page.replace("examples/audit_my_metric.py:my_ndcg", "my_ndcg")


def test_a_user_set_only_difference_without_an_option_is_named():
    def precision_without_zero_users(recs, truth, k, side):
        return {u: v for u, v in precision_standard(recs, truth, k, side).items() if v > 0}

    report = audit(precision_without_zero_users, "precision")
    assert report.status == "no match"
    assert report.user_set and "leaves out users" in report.user_set and "common users agree" in report.user_set
    assert "user set:" in str(report)


def test_a_batch_implementation_runs_every_case_at_once():
    class Batch:
        def __init__(self):
            self.calls = 0

        def evaluate_cases(self, cases):
            self.calls += 1
            return {c.id: map_divided_by_k(c.recs, c.truth, c.k, c.side) for c in cases}

    impl = Batch()
    report = audit(impl, "map")
    assert impl.calls == 1 and report.status == "match" and report.options["denominator"] == "k"


def test_a_dialect_match_names_its_options():
    from receval.audit import _dialect_options

    assert _dialect_options("rectools@0.19.0", "ndcg", 10)["ideal"] == "k"


def test_a_declared_precision_is_the_tolerance_and_no_looser():
    """An implementation in float32 (as torchmetrics) matches at its declared precision, and only
    there: without the declaration the same values are no match at 1e-9."""
    import numpy as np

    def ndcg32(recs, truth, k, side):
        return {u: float(np.float32(v) * np.float32(1 + 3e-7)) for u, v in ndcg_standard(recs, truth, k, side).items()}

    assert audit(ndcg32, "ndcg").status == "no match"

    class Declared:
        tolerance = 1e-6

        def __call__(self, recs, truth, k, side):
            return ndcg32(recs, truth, k, side)

    report = audit(Declared(), "ndcg")
    assert report.status == "match" and report.tolerance == 1e-6
    assert "1e-06 relative" in str(report)
    assert report.to_dict()["tolerance"] == 1e-6


# --- hardening: what the implementation does cannot end the command or reach --json ------------


NOISY_FILE = textwrap.dedent('''
    import os
    import sys

    print("imported!")

    def noisy_precision(recs, truth, k, side):
        print("hello from the implementation")
        sys.stderr.write("warning on stderr\\n")
        os.write(1, b"raw bytes on fd 1\\n")
        if recs.height == 0:
            sys.exit(3)
        rel = {}
        for r in truth.iter_rows(named=True):
            rel.setdefault(r["user"], set()).add(r["item"])
        lists = {}
        for r in recs.sort(["user", "rank"]).iter_rows(named=True):
            lists.setdefault(r["user"], []).append(r["item"])
        return {u: sum(1 for i in lists.get(u, [])[:k] if i in items) / k for u, items in rel.items()}
''')


def test_prints_and_sys_exit_cannot_end_the_command_or_reach_json(tmp_path, capfd):
    from receval.cli import main

    f = tmp_path / "noisy.py"
    f.write_text(NOISY_FILE)
    assert main(["audit", f"{f}:noisy_precision", "-m", "precision", "--json"]) == 0
    captured = capfd.readouterr()
    import json

    got = json.loads(captured.out)  # nothing but the JSON on stdout
    assert got[0]["evidence"] > 0
    assert "hello" not in captured.err and "raw bytes" not in captured.out + captured.err


def test_sys_exit_in_the_implementation_is_an_input_it_raised_on():
    import sys

    def exits(recs, truth, k, side):
        sys.exit(3)

    report = audit(exits, "precision")
    assert report.status == "no evidence" and report.raised and "sys.exit(3)" in report.raised[0][1]


def test_a_non_number_answer_is_not_reported_as_raised():
    def says_text(recs, truth, k, side):
        return "0.5"

    report = audit(says_text, "precision")
    assert report.status == "no evidence" and not report.raised and not report.errors
    assert report.non_numbers and "answered a non-number" in report.non_numbers[0][1]
    text = str(report)
    assert "answered a non-number on" in text and "implementation raised" not in text


@pytest.mark.parametrize("tolerance", ["1e-6", 1.0, 0.0, -1e-9, float("nan"), True, 2e-3])
def test_a_declared_tolerance_outside_its_range_is_refused(tolerance):
    class Declared:
        def __call__(self, recs, truth, k, side):
            return precision_standard(recs, truth, k, side)

    impl = Declared()
    impl.tolerance = tolerance
    with pytest.raises(AuditError, match=r"^declare tolerance as a float in \(0, 0.001\]") as info:
        audit(impl, "precision")
    assert "\n" not in str(info.value)


def test_the_loosest_declared_tolerance_is_accepted():
    class Declared:
        tolerance = 1e-3

        def __call__(self, recs, truth, k, side):
            return precision_standard(recs, truth, k, side)

    assert audit(Declared(), "precision").tolerance == 1e-3


@pytest.mark.parametrize("impl", [42, None, [1, 2]])
def test_a_non_callable_is_refused_with_the_fix(impl):
    with pytest.raises(AuditError, match=r"^pass a function impl\(recs, truth, k, side\)"):
        audit(impl, "precision")


def _bad_case_folder(tmp_path, case):
    import json

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "precision.json").write_text(json.dumps({"format": 1, "metric": "precision", "cases": [case]}))
    return tmp_path


GOOD_CASE = {"id": "precision-1", "metric": "precision", "spec": "precision@2", "k": 2,
             "recs": {"user": ["u1"], "item": ["a"], "score": [1.0], "rank": [1]},
             "truth": {"user": ["u1"], "item": ["a"], "rating": [1.0]}, "expected": {"mean": 0.5, "per_user": {"u1": 0.5}}}


@pytest.mark.parametrize("change,field", [
    ({"recs": [1, 2]}, "recs"),
    ({"recs": {"user": ["u1"], "item": [3], "score": [1.0], "rank": [1]}}, "recs.item"),
    ({"truth": {"user": ["u1", "u2"], "item": ["a"], "rating": [1.0]}}, "truth.item"),
    ({"k": "two"}, "k"),
    ({"id": 7}, "id"),
    ({"side": {"nonsense": {}}}, "side.nonsense"),
    ({"recs": {"user": ["u1"], "item": ["a"], "score": ["high"], "rank": [1]}}, "recs.score"),
])
def test_a_case_file_of_the_wrong_shape_is_one_line_naming_file_and_field(tmp_path, capsys, change, field):
    from receval.cli import main

    folder = _bad_case_folder(tmp_path, {**GOOD_CASE, **change})
    assert main(["audit", "math:sqrt", "-m", "precision", "--cases", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "precision.json' case 0" in err and f"field '{field}'" in err


def test_a_case_file_that_is_not_an_object_of_cases_is_one_line(tmp_path, capsys):
    from receval.cli import main

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.json").write_text("[1, 2]")
    assert main(["audit", "math:sqrt", "-m", "precision", "--cases", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x.json' has no list 'cases'" in err


def test_a_well_formed_case_folder_is_read(tmp_path):
    folder = _bad_case_folder(tmp_path, GOOD_CASE)
    assert audit(precision_standard, "precision", str(folder)).evidence == 1


# --- the report shows its evidence ------------------------------------------------------------


def _has_dup_recs(recs):
    return recs.select("user", "item").is_duplicated().any()


def test_the_inputs_it_raised_on_are_named_by_case_id():
    def precision_refusing_duplicates(recs, truth, k, side):
        if _has_dup_recs(recs):
            raise ValueError("duplicate recommendation")
        return precision_standard(recs, truth, k, side)

    report = audit(precision_refusing_duplicates, "precision")
    dup_ids = {p.id for p in __import__("receval.audit", fromlist=["probes_of"]).probes_of(suite_cases("precision"))
               if p.dup}
    assert dup_ids and {i for i, _ in report.raised} == dup_ids
    assert all("duplicate recommendation" in msg for _, msg in report.raised)
    assert f"raised on {len(dup_ids)} inputs ({sorted(dup_ids)[0]}" in str(report)


def test_inputs_not_compared_are_listed_with_the_reason():
    def precision_odd_on_duplicates(recs, truth, k, side):
        if _has_dup_recs(recs):
            return 0.123  # no definition computes this
        return precision_standard(recs, truth, k, side)

    report = audit(precision_odd_on_duplicates, "precision")
    assert report.not_compared and all("dup=error" in why for _, why in report.not_compared), str(report)
    text = str(report)
    assert "not compared (" in text and "refused by the definition: dup=error" in text


def test_a_match_says_how_many_inputs_were_compared():
    report = audit(precision_standard, "precision")
    assert report.status == "match"
    assert f"MATCH on every case compared ({report.compared} of {report.evidence} answered inputs)" in str(report)
    assert report.compared == report.evidence - len(report.not_compared)


def test_a_value_outside_the_metric_bounds_is_flagged_first():
    def ndcg_above_one(recs, truth, k, side):
        return {u: v * 1.585 for u, v in ndcg_standard(recs, truth, k, side).items()}

    report = audit(ndcg_above_one, "ndcg")
    assert report.out_of_bounds and report.out_of_bounds[0][1] > 1
    assert str(report).splitlines()[1].startswith("OUT OF BOUNDS: ndcg lies in [0, 1], the implementation answered 1.585")
    assert audit(ndcg_standard, "ndcg").out_of_bounds == []


def test_the_formula_header_says_at_k_for_an_audit_of_several_cut_offs():
    report = audit(ndcg_ideal_over_list, "ndcg")
    header = report.explanation.splitlines()[0]
    assert "@k  —" in header and "@1 " not in header


def test_closest_definitions_are_ordered_by_inputs_matched():
    for impl, metric in [(ndcg_broken, "ndcg"), (mrr_without_cutoff, "mrr"), (precision_without_zero_users_, "precision")]:
        report = audit(impl, metric)
        matched = [f.matched for f in report.closest]
        assert matched == sorted(matched, reverse=True), (impl.__name__, matched)
        if any(matched):
            assert matched[0] > 0


def test_a_definition_matching_no_input_is_never_the_first_closest():
    from receval.audit import Candidate, closest_order

    none_matched = Candidate({"gain": "linear"}, matched=0, differs=["a"])
    some_matched = Candidate({}, matched=5, differs=["a", "b"])
    more_matched = Candidate({"ideal": "k"}, matched=7, differs=["a", "b", "c"])
    order = closest_order([none_matched, some_matched, more_matched])
    assert order == [more_matched, some_matched, none_matched]


def precision_without_zero_users_(recs, truth, k, side):
    return {u: v for u, v in precision_standard(recs, truth, k, side).items() if v > 0}


# --- the joint search of the context options ----------------------------------------------------


def ndcg_score_input_ties_first_dups(recs, truth, k, side):
    """Ranks by score, equal scores in input order (a stable sort); a repeated recommendation
    counts at its first place only; a repeated truth row counts by its first rating."""
    rows = sorted(recs.iter_rows(named=True), key=lambda r: -r["score"])  # stable: ties keep the input order
    ranked: dict = {}
    for r in rows:
        items = ranked.setdefault(r["user"], [])
        if r["item"] not in items:
            items.append(r["item"])
    rel: dict = {}
    for r in truth.iter_rows(named=True):
        rel.setdefault(r["user"], {}).setdefault(r["item"], r["rating"])
    out = {}
    for u, items in rel.items():
        relevant = {i for i, g in items.items() if g > 0}
        if not relevant:
            continue
        dcg = sum(1 / math.log2(i + 2) for i, it in enumerate(ranked.get(u, [])[:k]) if it in relevant)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
        out[u] = dcg / idcg
    return out


def test_ordering_ties_and_duplicate_rules_are_found_together():
    report = audit(ndcg_score_input_ties_first_dups, "ndcg")
    assert report.status == "match", str(report)
    for key, value in {"order": "score", "ties": "input", "dup": "first"}.items():
        assert report.options.get(key) == value, (key, str(report))
    # the first rating of a repeated truth row: tdup=first, which refuses repeats that disagree on the
    # rating (the suite's truth_conflicts input); with binary gains tdup=max is the same wherever first answers
    assert report.options.get("tdup") in ("first", "max"), str(report)
    assert not report.not_compared


def test_a_definition_that_refuses_an_answered_input_is_no_match():
    def precision_odd_on_duplicates(recs, truth, k, side):
        if _has_dup_recs(recs):
            return 0.123
        return precision_standard(recs, truth, k, side)

    report = audit(precision_odd_on_duplicates, "precision")
    assert report.status == "no match" and report.not_compared, str(report)


def test_a_metric_without_cases_is_refused_in_one_line():
    """Every metric has cases in the shipped suite now (issue 35); a case list without the metric
    is refused with its name."""
    with pytest.raises(AuditError, match="no conformance case of metric 'ab_ndcg'"):
        audit(lambda recs, truth, k, side: 0.0, "ab_ndcg", suite_cases("ndcg")[:3])
