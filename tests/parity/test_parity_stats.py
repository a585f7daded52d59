"""Parity of the paired statistics with ranx's `compare` (ranx 0.3.21, env np2).

The same qrels and three runs go to ranx (its Qrels/Run, `compare` with `stat_test` student,
fisher and tukey) and to receval (`evaluate_runs` + `Runs.compare`). Compared: the per-user
NDCG@10 values, the win/tie/loss counts, the t-test p-values (ranx calls scipy's ttest_rel:
equal to 1e-12), Tukey's HSD p-values (ranx's own Tukey on the per-query scores vs
scipy.stats.tukey_hsd: equal to 1e-6), and Fisher's randomization test, which ranx draws with
its own generator (1000 permutations, seed 42): equal within Monte Carlo error (|Δp| < 0.06
with 20,000 resamples here).
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from receval.runs import evaluate_runs

from conftest import absent, env_python

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

SCRIPT = r'''
import json, sys
import numpy as np
from ranx import Qrels, Run, compare
doc = json.load(open(sys.argv[1]))
q = Qrels(doc["qrels"])
runs = [Run(doc["runs"][n], name=n) for n in doc["names"]]
out = {"tests": {}}
for test in ("student", "fisher", "tukey"):
    rep = compare(q, runs, ["ndcg@10"], stat_test=test, max_p=0.05)
    out["tests"][test] = {f"{a}|{b}": float(rep.comparisons[frozenset([a, b])]["ndcg@10"]["p_value"])
                          for i, a in enumerate(doc["names"]) for b in doc["names"][i + 1:]}
    out["wtl"] = {f"{a}|{b}": v["ndcg@10"] for (a, b), v in rep.win_tie_loss.items()}
out["per_user"] = {r.name: {u: float(v) for u, v in r.scores["ndcg@10"].items()} for r in runs}
print(json.dumps(out))
'''


def _data():
    rng = np.random.default_rng(11)
    users = [f"u{u:03d}" for u in range(60)]
    qrels = {u: {f"i{i}": 1 for i in rng.choice(40, 4, replace=False)} for u in users}
    runs = {}
    for n, boost in (("a", 0.0), ("b", 0.4), ("c", 0.1)):
        runs[n] = {}
        for u in users:
            s = rng.random(40)
            for i in qrels[u]:
                s[int(i[1:])] += boost * rng.random()
            runs[n][u] = {f"i{i}": float(v) for i, v in enumerate(s)}
    return qrels, runs


def test_compare_equals_ranx(tmp_path):
    py = env_python("ranx")
    if not py.exists():
        pytest.skip(absent("ranx"))
    qrels, runs = _data()
    names = list(runs)
    (tmp_path / "in.json").write_text(json.dumps({"qrels": qrels, "runs": runs, "names": names}))
    (tmp_path / "s.py").write_text(SCRIPT)
    proc = subprocess.run([str(py), str(tmp_path / "s.py"), str(tmp_path / "in.json")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rx = json.loads(proc.stdout.strip().splitlines()[-1])

    truth = {"user_id": [u for u in qrels for _ in qrels[u]], "item_id": [i for u in qrels for i in qrels[u]]}
    recs = {n: {"user_id": [u for u in runs[n] for _ in runs[n][u]], "item_id": [i for u in runs[n] for i in runs[n][u]],
                "score": [v for u in runs[n] for v in runs[n][u].values()]} for n in names}
    r = evaluate_runs(recs, truth, ["ndcg@10"], dialect="ranx")
    users = [str(u) for u in r.user_ids.tolist()]
    pu = r.arrays()
    for n in names:
        assert np.allclose(pu[n]["ndcg@10"], [rx["per_user"][n][u] for u in users], rtol=0, atol=1e-12)
    tests = {"student": "t", "fisher": "permutation", "tukey": "tukey"}
    for ranx_name, ours in tests.items():
        c = r.compare(test=ours, correction="none", ci="none", resamples=20_000, seed=1)
        for key, p_rx in rx["tests"][ranx_name].items():
            a, b = key.split("|")
            p = c.pair("ndcg@10", a, b).p_adjusted
            tol = {"student": 1e-12, "tukey": 1e-6, "fisher": 0.06}[ranx_name]
            assert abs(p - p_rx) <= tol * (1 if ranx_name == "fisher" else max(1.0, p_rx)), (ranx_name, key, p, p_rx)
    c = r.compare(test="t", correction="none", ci="none")
    for key, wtl in rx["wtl"].items():
        a, b = key.split("|")
        t = c.pair("ndcg@10", a, b)
        mine = (t.wins, t.ties, t.losses) if t.a == a else (t.losses, t.ties, t.wins)
        assert mine == (wtl["W"], wtl["T"], wtl["L"]), key
