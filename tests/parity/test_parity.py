"""Parity with the real libraries: every metric each peer offers, to 1e-9, mean and per user.

For every peer runner and dataset kind, the runner's output (src/receval/adapters/runners/<lib>.py, run
in its env) is compared with ``receval.evaluate(..., dialect="<name>@<version>")`` on the same
files. ``MAP`` below maps the peer's metric name to a receval spec (``{k}`` is the cut-off);
``kinds`` says on which datasets a metric is compared: peers without a defined tie rule are
compared on ``distinct`` only (see tests/parity/generate.py).

Run: ``pytest -m parity tests/parity`` (build the envs first: ``receval peers build``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from generate import read_frames  # tests/parity is on sys.path (conftest)

from receval import evaluate
from receval.errors import DataError

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

KS = [1, 3, 5, 10]
BOTH = ("ties", "distinct")
DISTINCT = ("distinct",)
TOL = 1e-9
#: peers that compute in float32 (torch) cannot agree to 1e-9
TOL_BY_RUNNER = {"torchmetrics": 1e-6}


@dataclass(frozen=True)
class M:
    peer: str  # peer metric name, with {k}
    spec: str  # receval spec, with {k}
    kinds: tuple[str, ...] = BOTH
    mean: bool = True  # compare the mean
    per_user: bool = True  # compare per-user values where the peer gives them
    user_spec: str | None = None  # receval spec for the per-user values if it differs
    overrides: tuple = ()  # evaluate keywords


#: runner -> (dialect, metrics)
PEERS: dict[str, tuple[str, list[M]]] = {
    "rs_metrics": ("rs_metrics@0.6.0", [
        M("hitrate@{k}", "hitrate@{k}"), M("precision@{k}", "precision@{k}"), M("recall@{k}", "recall@{k}"),
        M("mrr@{k}", "mrr@{k}"), M("mapr@{k}", "map@{k}"), M("ndcg@{k}", "ndcg@{k}"),
    ]),
    "replay": ("replay@0.22.0", [
        *(M(f"{p}{n}@{{k}}", f"{s}@{{k}}") for p in ("", "dict:") for n, s in [
            ("HitRate", "hitrate"), ("Precision", "precision"), ("Recall", "recall"), ("MRR", "mrr"),
            ("MAP", "map"), ("NDCG", "ndcg"), ("RocAuc", "gauc")]),
    ]),
    "recbole": ("recbole@1.2.1", [
        M("hit@{k}", "hitrate@{k}", DISTINCT), M("precision@{k}", "precision@{k}", DISTINCT),
        M("recall@{k}", "recall@{k}", DISTINCT), M("mrr@{k}", "mrr@{k}", DISTINCT),
        M("map@{k}", "map@{k}", DISTINCT), M("ndcg@{k}", "ndcg@{k}", DISTINCT),
        M("gauc", "auc(form=users,weight=positives,nopos=skip,noneg=skip)"),  # average ranks: defined with ties
    ]),
    "recommenders": ("ms_recommenders@1.2.1", [
        M("precision_at_k@{k}", "precision@{k}"), M("recall_at_k@{k}", "recall@{k}"),
        M("map_at_k@{k}", "map@{k}"), M("map@{k}", "map(denominator=r)@{k}"),
        M("ndcg_at_k@{k}", "ndcg@{k}"), M("auc", "auc", ("binary",)),
    ]),
    # torchmetrics averages over the users with recommendation rows, recommendation-only users
    # included (as 0): receval averages truth users only, so only per-user values are compared;
    # its results are float32, hence TOL_BY_RUNNER
    # "logits": half of every list scored <= 0, which torchmetrics masks in AP, precision, recall
    # and RR (hitscore=positive in the dialect); NDCG averages tied gains (ties=average in the
    # dialect), so it is also compared on the tied data
    "torchmetrics": ("torchmetrics@1.9.0", [
        *(M(f"Retrieval{n}@{{k}}", f"{s}@{{k}}", ("distinct", "logits"), mean=False) for n, s in [
            ("Precision", "precision"), ("Recall", "recall"), ("HitRate", "hitrate"), ("MRR", "mrr"),
            ("MAP", "map"), ("AUROC", "gauc"), ("AUROC(max_fpr=0.3)", "gauc(maxfpr=0.3)")]),
        *(M(f"Retrieval{n}@{{k}}", f"{s}@{{k}}", ("distinct", "logits", "ties"), mean=False) for n, s in [
            ("NormalizedDCG", "ndcg(gain=binary)"), ("NormalizedDCG(graded)", "ndcg")]),
        M("RetrievalRPrecision", "rprecision", ("distinct", "logits"), mean=False),
    ]),
    "pytrec_eval": ("trec_eval@0.5.11", [
        M("P@{k}", "precision@{k}", DISTINCT), M("recall@{k}", "recall@{k}", DISTINCT),
        # the runner's plain ndcg gets binary qrels; its graded variant gets the ratings as grades
        M("ndcg_cut@{k}", "ndcg(gain=binary)@{k}", DISTINCT), M("ndcg_cut(graded)@{k}", "ndcg@{k}", DISTINCT),
        M("map_cut@{k}", "map@{k}", DISTINCT),
        M("success@{k}", "hitrate@{k}", DISTINCT),
    ]),
    "ranx": ("ranx@0.3.21", [
        M("hits@{k}", "hitrate(count=hits)@{k}", DISTINCT), M("hit_rate@{k}", "hitrate@{k}", DISTINCT),
        M("precision@{k}", "precision@{k}", DISTINCT), M("recall@{k}", "recall@{k}", DISTINCT),
        M("f1@{k}", "f1@{k}", DISTINCT), M("mrr@{k}", "mrr@{k}", DISTINCT),
        M("map@{k}", "map@{k}", DISTINCT), M("ndcg@{k}", "ndcg(gain=binary)@{k}", DISTINCT),
        M("ndcg(graded)@{k}", "ndcg@{k}", DISTINCT),
    ]),
    "rectools": ("rectools@0.19.0", [
        # "rank_ties": tied ranks, whose positions are the rank values (order=rank_value); MAP
        # adds one term per distinct hit rank (indicator=distinct)
        *(M(f"{n}@{{k}}", f"{sp}@{{k}}", ("ties", "distinct", "rank_ties")) for n, sp in [
            ("Precision", "precision"), ("Recall", "recall"), ("HitRate", "hitrate"), ("MRR", "mrr"), ("NDCG", "ndcg"),
            ("MAP", "map")]),
        M("PartialAUC@{k}", "pauc@{k}"), M("PAP@{k}", "pap@{k}"),
        M("PartialAUC(exclude)@{k}", "pauc(insufficient=exclude)@{k}"), M("PAP(exclude)@{k}", "pap(insufficient=exclude)@{k}"),
    ]),
    # scikit-learn has no dialect: receval's standard definitions with explicit options.
    # ndcg_score averages the gains of tied items (McSherry–Najork): receval's ties=average on
    # the tied data, the default on distinct scores; sklearn reads the scores only, so the spec
    # says order=score (receval's order=auto would take the rank column, which has no ties);
    # compared per user (sklearn's mean also counts the recommendation-only users, which
    # receval does not average).
    "sklearn": ("standard", [
        M("ndcg_score@{k}", "ndcg@{k}", DISTINCT, mean=False),
        M("ndcg_score@{k}", "ndcg(ties=average,order=score)@{k}", ("ties",), mean=False),
        M("ndcg_score(ignore_ties=True)@{k}", "ndcg@{k}", DISTINCT, mean=False),
        # sklearn pools every recommendation row, receval the rows of truth users: compared on
        # data without recommendation-only users
        M("roc_auc_score", "auc", ("ties_truth",)),
        M("roc_auc_score(per_user_mean)", "auc(form=users,nopos=skip,noneg=skip)", user_spec="gauc"),
    ]),
}


def _cases():
    for runner, (dialect, metrics) in PEERS.items():
        for m in metrics:
            for kind in m.kinds:
                ks = KS if "{k}" in m.peer else [None]
                for k in ks:
                    peer = m.peer.format(k=k)
                    yield pytest.param(runner, dialect, m, kind, k, id=f"{runner}-{kind}-{peer}")


def _close(a: float, b: float, tol: float = TOL) -> bool:
    return abs(a - b) <= tol


@pytest.mark.parametrize("runner, dialect, m, kind, k", list(_cases()))
def test_parity(runner, dialect, m, kind, k, peer_run, dataset):
    doc = peer_run(runner, kind)
    peer_name = m.peer.format(k=k)
    if peer_name not in doc["metrics"]:
        pytest.skip(f"{runner} {doc.get('version')} did not emit {peer_name} on '{kind}' (notes: {doc.get('notes')})")
    got = doc["metrics"][peer_name]
    recs, truth = read_frames(dataset(kind))
    spec = m.spec.format(k=k)
    tol = TOL_BY_RUNNER.get(runner, TOL)
    try:
        res = evaluate(recs, truth, [spec], dialect=None if dialect == "standard" else dialect, **dict(m.overrides))
    except DataError as exc:
        if got["mean"] is None:
            return  # the peer's mean is NaN and receval refuses the same input: they agree
        raise AssertionError(f"receval refused {spec} [{dialect}] where {runner} gives {got['mean']}: {exc}") from exc
    ours = res[spec]
    problems = []
    if m.mean:
        if got["mean"] is None:
            problems.append(f"peer mean is NaN, receval {ours!r}")
        elif not _close(ours, got["mean"], tol):
            problems.append(f"mean: peer {got['mean']!r} receval {ours!r} (Δ {ours - got['mean']:.3g})")
    if m.per_user and got.get("per_user"):
        uspec = (m.user_spec or m.spec).format(k=k)
        ures = res if uspec == spec else evaluate(
            recs, truth, [uspec], dialect=None if dialect == "standard" else dialect, **dict(m.overrides))
        ent = ures._entry(uspec)
        if ent.per_user is not None:
            ours_pu = {int(u): float(v) for u, v in zip(ures.user_ids.tolist(), ent.per_user.tolist())}
            bad = []
            for u, v in got["per_user"].items():
                u = int(u)
                if u not in ours_pu or v is None or math.isnan(ours_pu[u]):
                    continue  # users outside receval's averaged set (e.g. recommendation-only users)
                if not _close(ours_pu[u], v, tol):
                    bad.append((u, v, ours_pu[u]))
            if bad:
                problems.append(f"per-user: {len(bad)} of {len(got['per_user'])} differ, e.g. (user, peer, receval) {bad[:4]}")
    assert not problems, f"{runner} {doc['version']} {peer_name} vs {spec} [{dialect}] on '{kind}': " + "; ".join(problems)
