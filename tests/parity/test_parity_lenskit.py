"""Parity with LensKit (lkpy 2026.4.0): receval under ``dialect="lenskit@2026.4.0"`` against
LensKit's own list metrics, mean and per user, to 1e-12.

The runner (src/receval/adapters/runners/lenskit.py, env ``lk``: Python 3.13, see src/receval/adapters/envs/lk.txt)
measures every recommendation list of a truth user with ``MeasurementCollector`` and reports
each metric's accumulated mean (NaN lists dropped) and the per-list values. LensKit has no tie
rule: a list's rank is its position, so the ``ties`` data (rank column = RePlay's larger-item-id
rule) and ``distinct`` both compare, receval reading the same rank column. ``signed`` redraws
the truth grades from -2..5 (negative and zero gains, users rated negative throughout): LensKit
clips negative gains to 0 in graded DCG/NDCG (``neg=zero``), while its binary metrics count every
test row as relevant, whatever its rating (as receval does with no relevance threshold).
LensKit's ``n=None`` (the whole list) is compared with receval at a cut-off longer than every
list (@100).

Run: ``pytest -m parity tests/parity/test_parity_lenskit.py`` (build the env first:
``receval peers build lk``).
"""

from __future__ import annotations

import math

import pytest

from generate import read_frames  # tests/parity is on sys.path (conftest)

from receval import evaluate

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

DIALECT = "lenskit@2026.4.0"
KS = [1, 3, 5, 10, None]
WHOLE = 100  # receval's cut-off for LensKit's n=None (longer than every generated list)
KINDS = ("ties", "distinct", "signed")
TOL = 1e-12

#: LensKit label (without @n) -> receval spec (without @k)
METRICS = {
    "NDCG": "ndcg",
    "NDCG(gain=rating)": "ndcg(gain=linear)",
    "NDCG(offset=1)": "ndcg(discount=log)",
    "DCG": "dcg",
    "DCG(gain=rating)": "dcg(gain=linear)",
    "Precision": "precision",
    "Recall": "recall",
    "Hit": "hitrate",
    "RecipRank": "mrr",
    "AveragePrecision": "map",
    "RBP": "rbp",
    "RBP(normalize=True)": "rbp(normalize=listed)",
    "RBP(patience=0.5)": "rbp(persistence=0.5)",
}


def _cases():
    for kind in KINDS:
        for peer, spec in METRICS.items():
            for k in KS:
                name = peer if k is None else f"{peer}@{k}"
                yield pytest.param(kind, name, f"{spec}@{WHOLE if k is None else k}", id=f"{kind}-{name}")


@pytest.mark.parametrize("kind, peer_name, spec", list(_cases()))
def test_parity_lenskit(kind, peer_name, spec, peer_run, dataset):
    doc = peer_run("lenskit", kind)
    got = doc["metrics"][peer_name]
    recs, truth = read_frames(dataset(kind))
    res = evaluate(recs, truth, [spec], dialect=DIALECT)
    ours = res[spec]
    problems = []
    if got["mean"] is None or not math.isclose(ours, got["mean"], rel_tol=0, abs_tol=TOL):
        problems.append(f"mean: LensKit {got['mean']!r} receval {ours!r}")
    ent = res._entry(spec)
    ours_pu = {int(u): float(v) for u, v in zip(res.user_ids.tolist(), ent.per_user.tolist())}
    bad = []
    for u, v in got["per_user"].items():
        mine = ours_pu.get(int(u), math.nan)
        if v is None or math.isnan(mine):
            if not (v is None and math.isnan(mine)):
                bad.append((int(u), v, mine))  # measured by one side only
        elif abs(mine - v) > TOL:
            bad.append((int(u), v, mine))
    if bad:
        problems.append(f"per-user: {len(bad)} of {len(got['per_user'])} differ, e.g. (user, LensKit, receval) {bad[:4]}")
    assert not problems, f"LensKit {doc['version']} {peer_name} vs {spec} [{DIALECT}] on '{kind}': " + "; ".join(problems)


def test_lenskit_user_set(peer_run, dataset):
    """LensKit measures the lists of the truth users that have one: receval's user set under the dialect."""
    doc = peer_run("lenskit", "distinct")
    recs, truth = read_frames(dataset("distinct"))
    both = set(recs["user_id"].tolist()) & set(truth["user_id"].tolist())
    assert {int(u) for u in doc["metrics"]["NDCG@10"]["per_user"]} == both
    res = evaluate(recs, truth, ["ndcg@10"], dialect=DIALECT)
    measured = {int(u) for u, v in zip(res.user_ids.tolist(), res._entry("ndcg@10").per_user.tolist()) if not math.isnan(v)}
    assert measured == both
