"""`receval reproduce` on the bundled MovieLens data: the study's pattern must hold.

These are invariants of the definitions, not stored numbers: each assertion can fail if a
dialect or a formula changes.
"""

from __future__ import annotations

import json

import pytest

from receval.cli import main
from receval.reproduce import run
from receval.study import STUDY_DIALECTS

pytestmark = pytest.mark.xdist_group("reproduce")


@pytest.fixture(scope="module")
def rep():
    return run()


def _row(rep, name):
    [key] = [d for d in rep.table if d == name or d.startswith(name + "@")]
    return rep.table[key]


def test_every_study_dialect_is_a_row(rep):
    names = {d.split("@")[0] for d in rep.table}
    assert names == {"standard", *STUDY_DIALECTS}


def test_precision_and_recall_agree_where_the_study_found_them_equal(rep):
    # full rankings: every list is longer than k, so ÷k and ÷ℓ coincide
    for metric in ("precision@20", "recall@20"):
        values = {d: v[metric] for d, v in rep.table.items() if v[metric] is not None}
        assert len(values) >= 9
        ref = values["standard"]
        for d, v in values.items():
            assert v == pytest.approx(ref, abs=1e-12), (metric, d)


def test_dlrs_eval_hitrate_is_precision_times_k(rep):
    row = _row(rep, "dlrs_eval")
    assert row["hitrate@20"] == pytest.approx(row["precision@20"] * 20, rel=1e-12)
    assert row["hitrate@20"] > _row(rep, "standard")["hitrate@20"]


def test_daisyrec_mrr_sums_all_hits(rep):
    assert _row(rep, "daisyrec")["mrr@20"] > _row(rep, "standard")["mrr@20"]


def test_five_distinct_map_values_with_their_orderings(rep):
    maps = {d.split("@")[0]: v["map@20"] for d, v in rep.table.items() if v["map@20"] is not None}
    groups = [("recbole", "replay", "dlrs_eval", "standard"), ("ms_recommenders", "beta_recsys", "rs_metrics"),
              ("daisyrec",), ("elliot",), ("neurec",)]
    for g in groups:  # equal inside a group
        for d in g[1:]:
            assert maps[d] == pytest.approx(maps[g[0]], abs=1e-15), d
    distinct = {round(maps[g[0]], 12) for g in groups}
    assert len(distinct) == 5
    std = maps["standard"]
    assert std >= maps["ms_recommenders"]  # ÷min(k,|R|) >= ÷|R|
    assert std >= maps["daisyrec"]  # ÷min(k,|R|) >= ÷k
    assert maps["neurec"] <= std  # ÷Σ min(i,|R|) <= ÷min(k,|R|)


def test_openrec_ndcg_is_unnormalised_dcg(rep):
    std, openrec = _row(rep, "standard")["ndcg@20"], _row(rep, "openrec")["ndcg@20"]
    assert openrec > std


def test_missing_metrics_are_null(rep):
    assert _row(rep, "beta_recsys")["hitrate@20"] is None
    assert _row(rep, "neurec")["hitrate@20"] is None


def test_protocol_statistics(rep):
    p = rep.protocol
    assert p["n_interactions"] == 100836
    assert p["threshold"] == 4.5
    assert p["k"] == 20
    assert p["n_test_users"] > 0 and p["n_test"] >= p["n_test_users"]


def test_cli_writes_the_report(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["reproduce", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dlrs_eval" in printed and "The study" in printed
    for name in ("table.csv", "table.md", "table.tex", "table.json", "protocol.json", "signatures.txt", "spread.png"):
        assert (out / name).stat().st_size > 0, name
    data = json.loads((out / "table.json").read_text())
    assert set(data) >= {"dialects", "signatures", "protocol"}
    assert data["dialects"]["standard"]["precision@20"] > 0
    assert data["dialects"]["beta_recsys@0.3.2"]["hitrate@20"] is None
    sig = data["signatures"]["standard"]["map@20"]
    assert sig.startswith("map@20|") and "dialect:standard" in sig


def test_cli_rejects_a_bad_fraction(capsys):
    assert main(["reproduce", "--test-fraction", "1.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("receval: error:")


def test_beyond_columns(tmp_path):
    rep = run(beyond=True)
    std = rep.table["standard"]
    for c in ("alpha_ndcg@20", "ab_ndcg@20", "entropy@20", "coverage@20"):
        assert std[c] is not None and std[c] >= 0, c
    assert 0 < std["coverage@20"] <= 1
