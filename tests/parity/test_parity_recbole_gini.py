"""RecBole's GiniIndex counts its [PAD] item: n = dataset.num(item_id) = |I| + 1 (as ItemCoverage
does). receval's recbole dialect (gini(form=catalog_divisor,pad=yes)) against RecBole 1.2.1's own
GiniIndex.get_gini and ItemCoverage on random top-k matrices."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import receval

from conftest import absent, env_python

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

SCRIPT = r'''
import json, sys
import numpy as np
if not hasattr(np, "float"):
    np.float = float
from recbole.evaluator.metrics import GiniIndex, ItemCoverage
doc = json.load(open(sys.argv[1]))
cfg = {"topk": [doc["k"]], "metric_decimal_place": 15}
out = []
for case in doc["cases"]:
    m = np.array(case["matrix"])
    n = case["num_items"]  # RecBole's dataset.num(item_id): the items plus [PAD]
    out.append({"gini": float(GiniIndex(cfg).get_gini(m, n)), "coverage": float(ItemCoverage(cfg).get_coverage(m, n))})
print(json.dumps(out))
'''


def test_gini_and_coverage_count_the_pad_item(tmp_path):
    py = env_python("recbole")
    if not py.exists():
        pytest.skip(absent("recbole"))
    rng = np.random.default_rng(5)
    k, cases = 3, []
    for n_items, users in ((7, 4), (20, 30), (50, 10)):
        # RecBole's item ids are 1..n_items ([PAD] is 0 and never recommended)
        matrix = np.stack([rng.choice(np.arange(1, n_items + 1), size=k, replace=False) for _ in range(users)])
        cases.append({"matrix": matrix.tolist(), "num_items": n_items + 1})
    (tmp_path / "in.json").write_text(json.dumps({"k": k, "cases": cases}))
    (tmp_path / "s.py").write_text(SCRIPT)
    proc = subprocess.run([str(py), str(tmp_path / "s.py"), str(tmp_path / "in.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    want = json.loads(proc.stdout.strip().splitlines()[-1])
    for case, w in zip(cases, want):
        m = np.array(case["matrix"])
        users = np.repeat(np.arange(len(m)), k)
        recs = {"user_id": users, "item_id": m.ravel(), "score": np.tile(np.arange(k, 0, -1.0), len(m))}
        truth = {"user_id": np.arange(len(m)), "item_id": m[:, 0]}
        res = receval.evaluate(recs, truth, [f"gini@{k}", f"coverage@{k}"], dialect="recbole@1.2.1", catalog=np.arange(1, case["num_items"]))
        assert res[f"gini@{k}"] == pytest.approx(w["gini"], abs=1e-12)
        assert res[f"coverage@{k}"] == pytest.approx(w["coverage"], abs=1e-12)
