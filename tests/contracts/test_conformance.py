"""The conformance suite: every shipped case runs through receval (values to 1e-12, refusals by
class, the signature), the suite holds what its generator plans and its sources are honest,
and ``receval conformance export`` writes it whole."""

from __future__ import annotations

import csv
import json
import warnings
from collections import Counter
from pathlib import Path

import pytest

import receval
from receval.conformance.suite import SIDE_COLUMNS, side_kwargs, cases, close, columns, export, raw_suite, run_receval, strip_version

HERE = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.xdist_group("conformance")


def _groups():
    data = raw_suite()
    out: dict[tuple, list[dict]] = {}
    for c in data["cases"]:
        if c["refusal"] is None:
            out.setdefault((c["scenario"], c["dialect"], tuple(c["side"])), []).append(c)
    return data, out


def test_the_suite_is_large_and_covers_every_edge():
    data = raw_suite()
    assert len(data["cases"]) >= 1000
    tags = Counter(t for c in data["cases"] for t in c["tags"])
    for tag in ("ties", "short_list", "k_beyond_catalog", "no_relevant", "no_recs", "duplicates", "graded",
                "negative_gains", "single_user", "one_item", "dialect"):
        assert tags[tag] > 0, tag
    assert {c["source"] for c in data["cases"]} <= {"reference", "arithmetic"}
    assert all(c["why"] for c in data["cases"] if c["source"] == "arithmetic")
    assert any(c["refusal"] for c in data["cases"])
    assert len({c["id"] for c in data["cases"]}) == len(data["cases"])


def test_every_value_case_runs_through_receval():
    data, groups = _groups()
    n = 0
    for (scenario, dialect, side_names), items in groups.items():
        sc = data["scenarios"][scenario]
        side = {name: columns(sc["side"][name], SIDE_COLUMNS[name]) for name in side_names}
        specs = list(dict.fromkeys(c["spec"] for c in items))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = receval.evaluate(columns(sc["recs"], ("user", "item", "score", "rank")),
                                   columns(sc["truth"], ("user", "item", "rating")), specs, dialect=dialect,
                                   user_col="user", item_col="item", score_col="score", rank_col="rank",
                                   rating_col="rating", **side_kwargs(side))
        for c in items:
            e = res._entry(c["spec"])
            assert close(e.value, c["expected"]["mean"]), (c["id"], e.value, c["expected"]["mean"])
            assert strip_version(e.signature) == c["signature"], c["id"]
            from receval.conformance.suite import per_user_of

            got = per_user_of(res.user_ids, e.per_user)
            want = c["expected"]["per_user"]
            assert set(got) == set(want) and all(close(got[u], want[u]) for u in want), c["id"]
            n += 1
    assert n > 900


def test_every_refusal_case_is_refused_with_its_class():
    data = raw_suite()
    refusals = [c for c in data["cases"] if c["refusal"]]
    for c in refusals:
        sc = data["scenarios"][c["scenario"]]
        out = run_receval(c["spec"], c["dialect"], columns(sc["recs"], ("user", "item", "score", "rank")),
                          columns(sc["truth"], ("user", "item", "rating")),
                          {n: columns(sc["side"][n], SIDE_COLUMNS[n]) for n in c["side"]})
        assert out.get("refusal") == c["refusal"], c["id"]


def test_the_shipped_suite_is_what_the_generator_plans():
    """Inputs and specs are those of receval.conformance.generate (rebuild with
    ``python -m receval.conformance.build`` after changing it, the registry or a dialect)."""
    from receval.conformance.generate import SCENARIOS, plans

    data = raw_suite()
    for name, sc in SCENARIOS.items():
        shipped = data["scenarios"][name]
        assert shipped["recs"] == [list(r) for r in sc.rec_rows()], name
        assert shipped["truth"] == [[u, i, float(r)] for u, i, r in sc.truth], name
        assert shipped["side"] == {n: [list(r) for r in rows] for n, rows in sc.side().items()}, name
    from receval.conformance.arithmetic import ARITHMETIC

    arith = {f"arith-{a.name}": a for a in ARITHMETIC}
    shipped_arith = [c for c in data["cases"] if c["source"] == "arithmetic" and "worked" not in c["tags"]]
    assert sorted(c["scenario"] for c in shipped_arith) == sorted(arith)
    from receval.conformance.arithmetic import worked

    planned_worked = {(a.spec, a.scenario): a for a in worked()}
    for c in data["cases"]:
        if c["source"] == "arithmetic" and "worked" in c["tags"]:  # a worked case: on a generator scenario's rows
            a = planned_worked[(c["spec"], c["scenario"])]
            assert c["why"] == a.why and close(c["expected"]["mean"], a.mean), c["id"]
    for c in shipped_arith:
        a = arith[c["scenario"]]
        assert (c["spec"], c["why"], sorted(c["expected"]["per_user"])) == (a.spec, a.why, sorted(a.per_user)), c["id"]
        assert close(c["expected"]["mean"], a.mean), c["id"]
        assert all(close(c["expected"]["per_user"][u], v) for u, v in a.per_user.items()), c["id"]
    planned = {(p.spec, p.scenario, p.dialect): p for p in plans()}
    for c in data["cases"]:
        if c["source"] == "reference":
            p = planned.get((c["spec"], c["scenario"], c["dialect"]))
            assert p is not None, f"{c['id']} is no longer planned: run python -m receval.conformance.build"
            assert list(p.tags) == c["tags"] and p.k == c["k"], c["id"]


def test_reference_sources_are_honest_on_a_sample():
    """Every 15th case marked "reference": the slow reference gives the same values (the build
    checked them all)."""
    from receval.conformance.build import _dicts, agree, reference_outcome

    from receval.conformance.generate import SCENARIOS
    from receval.engine import dialect_of
    from receval.resolve import decide_rel, resolve

    data = raw_suite()
    ref_cases = [c for c in data["cases"] if c["source"] == "reference"][::15]
    dicts = {name: _dicts(sc) for name, sc in SCENARIOS.items()}
    for c in ref_cases:
        r = decide_rel([resolve(c["spec"], dialect=dialect_of(c["dialect"]))], True)[0]  # every scenario is rated
        ref = reference_outcome(c["metric"], c["k"], dict(r.options), dicts[c["scenario"]])
        ours = {"refusal": c["refusal"]} if c["refusal"] else {"mean": c["expected"]["mean"], "per_user": c["expected"]["per_user"]}
        assert agree(ours, ref), c["id"]


def test_export_writes_a_self_contained_folder(tmp_path):
    out = tmp_path / "suite"
    counts = export(out)
    assert sum(counts.values()) == len(raw_suite()["cases"]) >= 1000
    index = json.loads((out / "index.json").read_text())
    assert index["cases"] == sum(counts.values()) and index["metrics"] == counts
    assert "# receval conformance suite" in (out / "README.md").read_text()
    loaded = cases("ndcg", folder=out)
    assert len(loaded) == index["metrics"]["ndcg"]
    one = json.loads((out / "cases" / "ndcg.json").read_text())["cases"][0]
    with open(out / one["inputs"] / "recs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["item"] for r in rows] == one["recs"]["item"]
    assert [int(r["rank"]) for r in rows] == one["recs"]["rank"]
    shipped = {c.id: c for c in cases("ndcg")}
    c = next(x for x in loaded if x.id == one["id"])
    assert c.expected_mean == shipped[c.id].expected_mean and c.recs.equals(shipped[c.id].recs)


def test_export_refuses_a_non_empty_folder(tmp_path, capsys):
    from receval.cli import main

    (tmp_path / "x.txt").write_text("mine")
    assert main(["conformance", "export", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an empty folder" in err and "new or empty folder" in err
    assert (tmp_path / "x.txt").read_text() == "mine"


def test_the_docs_give_the_size_of_the_suite():
    data = raw_suite()
    n, m = len(data["cases"]), len({c["metric"] for c in data["cases"]})
    page = (HERE.parent / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert f"{n:,} cases over {m} metrics" in page, "update docs/conformance.md"
    assert f"covers {m} of receval's" in (HERE.parent / "docs" / "audit.md").read_text(encoding="utf-8")
