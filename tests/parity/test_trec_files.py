"""TREC files read by receval give trec_eval's numbers: pytrec_eval parses the same run and
qrels files (tied scores, zero-padded string docnos, grades 0..3) in its own environment and
evaluates them; receval reads the files under dialect="trec_eval" with rel=1 (trec_eval's
relevance level)."""

from __future__ import annotations

import json
import random
import subprocess

import pytest

import receval
from conftest import absent, env_python

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

PEER = """
import json, sys, pytrec_eval
run = pytrec_eval.parse_run(open(sys.argv[1]))
qrels = pytrec_eval.parse_qrel(open(sys.argv[2]))
res = pytrec_eval.RelevanceEvaluator(qrels, {"map_cut.10", "ndcg_cut.10", "P.5", "recall.20", "recip_rank"}).evaluate(run)
print(json.dumps(res))
"""
PAIRS = {"map_cut_10": "map@10", "ndcg_cut_10": "ndcg@10", "P_5": "precision@5", "recall_20": "recall@20", "recip_rank": "mrr@1000"}


def test_trec_files_match_pytrec_eval(tmp_path):
    python = env_python("pytrec_eval")
    if not python.exists():
        pytest.skip(absent("pytrec_eval"))
    rng = random.Random(3)
    with open(tmp_path / "x.run", "w") as f, open(tmp_path / "x.qrels", "w") as g:
        for q in range(30):
            for rank, d in enumerate(rng.sample(range(200), 40)):
                f.write(f"q{q} Q0 d{d:03d} {rank + 1} {round(rng.random(), 2)} sys\n")   # ties
            for d in rng.sample(range(200), 15):
                g.write(f"q{q} 0 d{d:03d} {rng.choice([0, 0, 1, 2, 3])}\n")
    out = subprocess.run([str(python), "-c", PEER, str(tmp_path / "x.run"), str(tmp_path / "x.qrels")],
                         capture_output=True, text=True, check=True).stdout
    peer = json.loads(out)
    res = receval.evaluate(tmp_path / "x.run", tmp_path / "x.qrels", list(PAIRS.values()), dialect="trec_eval", rel=1)
    users = [str(u) for u in res.user_ids]
    assert sorted(users) == sorted(peer)
    per_user = res.per_user()
    for trec, ours in PAIRS.items():
        got = dict(zip(per_user.get_column(per_user.columns[0]).cast(str).to_list(), per_user.get_column(ours).to_list()))
        for q, vals in peer.items():
            assert got[q] == pytest.approx(vals[trec], abs=1e-12), (trec, q)
