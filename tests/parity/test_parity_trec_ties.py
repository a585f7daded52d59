"""trec_eval breaks score ties by docno compared as text, descending ("9" before "10"):
the trec_eval dialect's ties=text_desc against pytrec_eval on integer-looking and string docnos."""

from __future__ import annotations

import json
import subprocess

import pytest

import receval

from conftest import absent, env_python

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

SCRIPT = r'''
import json, sys, pytrec_eval
doc = json.load(open(sys.argv[1]))
ev = pytrec_eval.RelevanceEvaluator(doc["qrels"], {"recip_rank", "P.1", "ndcg_cut.2"})
print(json.dumps(ev.evaluate(doc["run"])))
'''


def test_ties_by_docno_as_text(tmp_path):
    py = env_python("pytrec_eval")
    if not py.exists():
        pytest.skip(absent("pytrec_eval"))
    # every list is one tie group; the relevant docno decides where trec_eval puts it
    run = {"q1": {"9": 0.5, "10": 0.5, "11": 0.5}, "q2": {"9": 1.0, "10": 1.0, "100": 1.0, "2": 1.0},
           "q3": {"d9": 0.3, "d10": 0.3, "d100": 0.3}}
    qrels = {"q1": {"10": 1}, "q2": {"100": 1}, "q3": {"d10": 1}}
    (tmp_path / "in.json").write_text(json.dumps({"run": run, "qrels": qrels}))
    (tmp_path / "s.py").write_text(SCRIPT)
    proc = subprocess.run([str(py), str(tmp_path / "s.py"), str(tmp_path / "in.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    want = json.loads(proc.stdout)
    for q in ("q1", "q2"):  # integer ids: compared as numbers they would rank otherwise
        recs = {"user_id": [1] * len(run[q]), "item_id": [int(d) for d in run[q]], "score": list(run[q].values())}
        truth = {"user_id": [1], "item_id": [int(next(iter(qrels[q])))]}
        res = receval.evaluate(recs, truth, ["mrr@10", "precision@1", "ndcg@2"], dialect="trec_eval")
        assert res["mrr@10"] == pytest.approx(want[q]["recip_rank"], abs=1e-12)
        assert res["precision@1"] == pytest.approx(want[q]["P_1"], abs=1e-12)
        assert res["ndcg@2"] == pytest.approx(want[q]["ndcg_cut_2"], abs=1e-12)
    recs = {"user_id": ["q3"] * 3, "item_id": list(run["q3"]), "score": list(run["q3"].values())}
    res = receval.evaluate(recs, {"user_id": ["q3"], "item_id": ["d10"]}, ["mrr@10"], dialect="trec_eval")
    assert res["mrr@10"] == pytest.approx(want["q3"]["recip_rank"], abs=1e-12)


LEVEL_SCRIPT = r'''
import json, sys, pytrec_eval
doc = json.load(open(sys.argv[1]))
ev = pytrec_eval.RelevanceEvaluator(doc["qrels"], {"P.3", "ndcg_cut.3", "recall.3"}, relevance_level=4)
print(json.dumps(ev.evaluate(doc["run"])))
'''


def test_relevance_level_applies_to_binary_measures_only(tmp_path):
    """trec_eval -l 4: P and recall count grades >= 4, ndcg_cut still gains every positive grade:
    --rel 4 with ndcg(rel=>0)@k under the trec_eval dialect."""
    py = env_python("pytrec_eval")
    if not py.exists():
        pytest.skip(absent("pytrec_eval"))
    run = {"q1": {"1": 3.0, "2": 2.0, "3": 1.0}, "q2": {"5": 3.0, "6": 2.0, "7": 1.0}}
    qrels = {"q1": {"1": 1, "2": 4, "3": 0}, "q2": {"6": 5, "7": 2, "8": 4}}
    (tmp_path / "in.json").write_text(json.dumps({"run": run, "qrels": qrels}))
    (tmp_path / "s.py").write_text(LEVEL_SCRIPT)
    proc = subprocess.run([str(py), str(tmp_path / "s.py"), str(tmp_path / "in.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    want = json.loads(proc.stdout)
    for q in run:
        recs = {"user_id": [q] * 3, "item_id": list(run[q]), "score": list(run[q].values())}
        truth = {"user_id": [q] * len(qrels[q]), "item_id": list(qrels[q]), "rating": [float(v) for v in qrels[q].values()]}
        res = receval.evaluate(recs, truth, ["precision@3", "recall@3", "ndcg(rel=>0)@3"], dialect="trec_eval", rel=4)
        assert res["precision@3"] == pytest.approx(want[q]["P_3"], abs=1e-12)
        assert res["recall@3"] == pytest.approx(want[q]["recall_3"], abs=1e-12)
        assert res["ndcg(rel=>0)@3"] == pytest.approx(want[q]["ndcg_cut_3"], abs=1e-12)
