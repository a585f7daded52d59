"""Built-in adapters: real libraries as implementations under audit.

Each adapter wraps one peer library. Its metrics are :class:`~receval.conformance.case.BatchImplementation`
objects that run many conformance cases at once: the library runs in its own virtual environment
(a *peer env*, pinned in ``receval/adapters/envs/<env>.txt`` and built by ``receval peers build ENV`` under
``${RECEVAL_PEER_ENVS:-~/.cache/receval-peers}``, see :mod:`receval.adapters.peers`)
through the runner scripts shipped in ``receval/adapters/runners/`` (standalone scripts that never
import receval; the parity tests run the same scripts). Spark MLlib's ``RankingMetrics`` runs in
this process instead (pyspark in local mode, see :mod:`receval.adapters.mllib`).

>>> from receval import adapters
>>> "rectools" in adapters.names()
True
>>> a = adapters.get("rectools")
>>> a.library, a.env
('RecTools', 'np1')
>>> a.implementations()["MAP"][0]
'map'

How a batch runs: the cases' string ids are encoded as integers (the runners' input), each user as
its own (case, user) pair, so that one input folder holds every case; the runner computes the
metric at every cut-off the cases ask for, once, and its per-user values are split back by case.
A metric the library gives only as a mean (``means_only``) runs one folder per case, all in one
process. A case the library fails on (an exception) maps to the exception's one-line text; when a
shared run fails, each of its cases is run on its own to find which.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from receval.adapters._base import ByMetric, PeerMetric
from receval.adapters.mllib import MllibAdapter
from receval.errors import RecevalError

if TYPE_CHECKING:
    from receval.adapters.mllib import MllibAdapter
    from receval.conformance.case import BatchImplementation, Case, Outcome

__all__ = ["RUNNERS_DIR", "Adapter", "PeerMetric", "env_root", "get", "names"]

#: the folder of the runner scripts (and of ``runners.json``, the env of each runner)
RUNNERS_DIR = Path(__file__).resolve().parent / "runners"

#: most cut-offs one runner call computes (a batch with more is split)
MAX_KS = 16


def env_root() -> Path:
    """Where the peer envs live: ``$RECEVAL_PEER_ENVS``, else ``~/.cache/receval-peers``."""
    return Path(os.environ.get("RECEVAL_PEER_ENVS", Path.home() / ".cache" / "receval-peers"))


def runner_envs() -> dict[str, str]:
    """runner name -> peer env name (``runners/runners.json``)."""
    doc = json.loads((RUNNERS_DIR / "runners.json").read_text())
    return {k: v for k, v in doc.items() if not k.startswith("_")}


def _m(name: str, metric: str, spec: str | None = "", **kw: Any) -> PeerMetric:
    """PeerMetric with ``spec`` defaulting to ``<metric>@{k}`` (``None``: not compared)."""
    if spec == "":
        spec = f"{metric}@{{k}}"
    return PeerMetric(name, metric, spec, **kw)


def _w(name: str, metric: str, spec: str | None = None, **kw: Any) -> PeerMetric:
    """A metric without cut-off (the whole list)."""
    return PeerMetric(name, metric, spec, cut=False, whole=True, **kw)


# ---- the catalogue: which metrics each runner emits and what they are -------------------------------
# The specs are the ones tests/parity/test_parity*.py compare each peer metric with (to 1e-9, mean
# and per user, under the dialect); tests/test_adapters.py checks that the two agree.

_RECTOOLS = [
    _m("Precision", "precision"), _m("Recall", "recall"), _m("HitRate", "hitrate"), _m("MRR", "mrr"),
    _m("MAP", "map"), _m("NDCG", "ndcg"),
    _m("Precision(r_precision=True)", "precision", None), _m("MAP(divide_by_k=True)", "map", None),
    _m("NDCG(divide_by_achievable=True)", "ndcg", None),
    _m("PartialAUC", "pauc"), _m("PAP", "pap"),
    _m("PartialAUC(exclude)", "pauc", "pauc(insufficient=exclude)@{k}"),
    _m("PAP(exclude)", "pap", "pap(insufficient=exclude)@{k}"),
]
_REPLAY = [
    _m(f"{p}{n}", s, note="dict input keeps the given list order (re-sorted by score, stably, only when the scores "
                          "increase somewhere): the parity data's row order breaks ties by the larger item id, "
                          "as the dialect's ties=item_desc" if p else "")
    for p in ("", "dict:") for n, s in [
        ("HitRate", "hitrate"), ("Precision", "precision"), ("Recall", "recall"), ("MRR", "mrr"),
        ("MAP", "map"), ("NDCG", "ndcg"), ("RocAuc", "gauc")]
]
_RANX = [
    _m("hits", "hitrate", "hitrate(count=hits)@{k}"), _m("hit_rate", "hitrate"), _m("precision", "precision"),
    _m("recall", "recall"), _m("f1", "f1"), PeerMetric("mrr", "mrr", "mrr@{k}", whole=True),
    PeerMetric("map", "map", "map@{k}", whole=True), _m("ndcg", "ndcg", "ndcg(gain=binary)@{k}"),
    _m("ndcg(graded)", "ndcg"), _m("ndcg_burges", "ndcg", None), _m("ndcg_burges(graded)", "ndcg", None),
    _m("map(graded)", "map", None), _w("r-precision", "rprecision"),
]
_PYTREC_EVAL = [
    _m("P", "precision"), _m("recall", "recall"), _m("ndcg_cut", "ndcg", "ndcg(gain=binary)@{k}"),
    _m("ndcg_cut(graded)", "ndcg"), _m("map_cut", "map"), _m("success", "hitrate"),
    _w("recip_rank", "mrr"), _w("map", "map"), _w("ndcg", "ndcg"), _w("ndcg(graded)", "ndcg"),
    _w("Rprec", "rprecision", "rprecision"),
]
_RECBOLE = [
    _m("hit", "hitrate"), _m("precision", "precision"), _m("recall", "recall"), _m("mrr", "mrr"),
    _m("map", "map"), _m("ndcg", "ndcg"),
    _w("gauc", "auc", "auc(form=users,weight=positives,nopos=skip,noneg=skip)", means_only=True),
]
_RECOMMENDERS = [
    *(_m(n, s, sp, means_only=True) for n, s, sp in [
        ("precision_at_k", "precision", "precision@{k}"), ("recall_at_k", "recall", "recall@{k}"),
        ("map_at_k", "map", "map@{k}"), ("map", "map", "map(denominator=r)@{k}"), ("ndcg_at_k", "ndcg", "ndcg@{k}"),
        ("r_precision_at_k", "rprecision", None)]),
    *(_m(f"ndcg_at_k(score_type={st},discfun_type={dt})", "ndcg", None, means_only=True)
      for st in ("binary", "raw", "exp") for dt in ("loge", "log2")),
    _w("auc", "auc", "auc", means_only=True, note="only with 0/1 truth ratings"),
]
_TORCHMETRICS = [
    *(_m(f"Retrieval{n}", s, f"{sp}@{{k}}") for n, s, sp in [
        ("Precision", "precision", "precision"), ("Recall", "recall", "recall"), ("HitRate", "hitrate", "hitrate"),
        ("MRR", "mrr", "mrr"), ("MAP", "map", "map"), ("AUROC", "gauc", "gauc"),
        ("AUROC(max_fpr=0.3)", "gauc", "gauc(maxfpr=0.3)"),
        ("NormalizedDCG", "ndcg", "ndcg(gain=binary)"), ("NormalizedDCG(graded)", "ndcg", "ndcg")]),
    _m("RetrievalPrecision(adaptive_k=True)", "precision", None),
    _w("RetrievalRPrecision", "rprecision", "rprecision"),
]
_SKLEARN = [
    _m("ndcg_score", "ndcg", "ndcg(ties=average,order=score)@{k}"),
    _m("ndcg_score(ignore_ties=True)", "ndcg"), _m("ndcg_score(graded)", "ndcg", None),
    _w("roc_auc_score", "auc", "auc", means_only=True, note="one ROC over every recommendation row"),
    _w("roc_auc_score(per_user_mean)", "auc", "auc(form=users,nopos=skip,noneg=skip)"),
]
_LENSKIT = [
    PeerMetric(n, s, f"{sp}@{{k}}", whole=True) for n, s, sp in [
        ("NDCG", "ndcg", "ndcg"), ("NDCG(gain=rating)", "ndcg", "ndcg(gain=linear)"),
        ("NDCG(offset=1)", "ndcg", "ndcg(discount=log)"), ("DCG", "dcg", "dcg"),
        ("DCG(gain=rating)", "dcg", "dcg(gain=linear)"), ("Precision", "precision", "precision"),
        ("Recall", "recall", "recall"), ("Hit", "hitrate", "hitrate"), ("RecipRank", "mrr", "mrr"),
        ("AveragePrecision", "map", "map"), ("RBP", "rbp", "rbp"), ("RBP(normalize=True)", "rbp", "rbp(normalize=listed)"),
        ("RBP(patience=0.5)", "rbp", "rbp(persistence=0.5)")]
]
_RS_METRICS = [
    _m("hitrate", "hitrate"), _m("precision", "precision"), _m("recall", "recall"), _m("mrr", "mrr"),
    _m("mapr", "map"), _m("ndcg", "ndcg"),
]

#: libraries that compute in lower precision than float64: torchmetrics works in float32
_PRECISION = {"torchmetrics": 1e-6}

#: name -> (library, distribution (for the version), the version the peer env pins, dialect, metrics);
#: name = the runner's name
_CATALOGUE: dict[str, tuple[str, str, str, str | None, list[PeerMetric]]] = {
    "rectools": ("RecTools", "rectools", "0.19.0", "rectools@0.19.0", _RECTOOLS),
    "replay": ("RePlay", "replay-rec", "0.22.0", "replay@0.22.0", _REPLAY),
    "ranx": ("ranx", "ranx", "0.3.21", "ranx@0.3.21", _RANX),
    "pytrec_eval": ("pytrec_eval (trec_eval)", "pytrec-eval-terrier", "0.5.11", "trec_eval@0.5.11", _PYTREC_EVAL),
    "recbole": ("RecBole", "recbole", "1.2.1", "recbole@1.2.1", _RECBOLE),
    "recommenders": ("MS Recommenders", "recommenders", "1.2.1", "ms_recommenders@1.2.1", _RECOMMENDERS),
    "torchmetrics": ("torchmetrics", "torchmetrics", "1.9.0", "torchmetrics@1.9.0", _TORCHMETRICS),
    "sklearn": ("scikit-learn", "scikit-learn", "1.8.0", None, _SKLEARN),
    "lenskit": ("LensKit", "lenskit", "2026.4.0", "lenskit@2026.4.0", _LENSKIT),
    "rs_metrics": ("rs_metrics", "rs-metrics", "0.6.0", "rs_metrics@0.6.0", _RS_METRICS),
}


def names() -> list[str]:
    """The built-in adapters: the peer runners, then ``mllib`` (Spark MLlib, in-process)."""
    return [*_CATALOGUE, "mllib"]


def get(name: str) -> Adapter | MllibAdapter:
    """The adapter called ``name`` (see :func:`names`)."""
    if name == "mllib":
        return MllibAdapter()
    if name not in _CATALOGUE:
        raise RecevalError(f"no adapter '{name}': the adapters are {', '.join(names())}")
    library, dist, pinned, dialect, metrics = _CATALOGUE[name]
    return Adapter(name=name, library=library, dist=dist, dialect=dialect, metrics=tuple(metrics),
                   env=runner_envs()[name], pinned=pinned)


# ---- id encoding: many cases in one input folder ------------------------------------------------------


def _item_codes(items: Sequence[str]) -> dict[str, int]:
    """Items as integers, keeping their order: the integer itself when every id is one (so a
    library's tie rule by item id sees the same order), else the rank in sorted string order."""
    uniq = sorted(set(items))
    try:
        ints = {s: int(s) for s in uniq}
        if all(str(v) == s and v >= 0 for s, v in ints.items()):
            return ints
    except ValueError:
        pass
    return {s: i + 1 for i, s in enumerate(uniq)}


def _write_folder(folder: Path, cases: Sequence[Case], ks: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Write ``cases`` into one runner input folder; returns user code -> (case id, user id)."""
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    items = [str(x) for c in cases for x in (*c.recs["item"].to_list(), *c.truth["item"].to_list())]
    icode = _item_codes(items)
    users: dict[tuple[str, str], int] = {}
    back: dict[int, tuple[str, str]] = {}
    recs_parts, truth_parts = [], []
    for c in cases:
        # (case id, user) -> a fresh integer: the case id prefixes the user
        for u in sorted({str(u) for u in (*c.recs["user"].to_list(), *c.truth["user"].to_list())}):
            code = users.setdefault((c.id, u), len(users) + 1)
            back[code] = (c.id, u)
        r = c.recs.sort(["user", "rank"], maintain_order=True) if c.recs.height else c.recs
        recs_parts.append(pd.DataFrame({
            "user_id": [users[(c.id, str(u))] for u in r["user"].to_list()],
            "item_id": [icode[str(i)] for i in r["item"].to_list()],
            "score": [float(s) for s in r["score"].to_list()],
            "rank": [int(x) for x in r["rank"].to_list()],
        }))
        truth_parts.append(pd.DataFrame({
            "user_id": [users[(c.id, str(u))] for u in c.truth["user"].to_list()],
            "item_id": [icode[str(i)] for i in c.truth["item"].to_list()],
            "rating": [float(x) for x in c.truth["rating"].to_list()],
        }))
    recs = pd.concat(recs_parts, ignore_index=True).astype(
        {"user_id": "int64", "item_id": "int64", "score": "float64", "rank": "int64"})
    truth = pd.concat(truth_parts, ignore_index=True).astype({"user_id": "int64", "item_id": "int64", "rating": "float64"})
    recs.to_parquet(folder / "recs.parquet", index=False)
    truth.to_parquet(folder / "truth.parquet", index=False)
    (folder / "params.json").write_text(json.dumps({"k": sorted(set(ks)) or [1], "threshold": None}))
    return back


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


@dataclass(eq=False)
class Adapter(ByMetric):
    """A library run in its peer env through its runner script.

    ``library`` is the library's display name, ``env`` its peer env, ``dialect`` the receval
    dialect that reproduces it (None: receval's standard definitions), ``version`` the installed
    version (read from the env when it runs, or asked of the env on first use), ``pinned`` the
    version the peer env's requirements pin (the one the parity tests and the dialect describe).
    """

    name: str
    library: str
    dist: str
    dialect: str | None
    metrics: tuple[PeerMetric, ...]
    env: str
    pinned: str = ""
    _version: str | None = field(default=None, repr=False)
    #: finished runs by the content of their cases (the metrics of one library share a run)
    _runs: dict[str, dict[str, dict | str]] = field(default_factory=dict, repr=False)

    # ---- the environment ----

    @property
    def python(self) -> Path:
        return env_root() / self.env / "bin" / "python"

    def available(self) -> bool:
        """Whether the peer env exists."""
        return self.python.exists()

    def _require(self) -> Path:
        py = self.python
        if not py.exists():
            raise RecevalError(f"build it with `receval peers build {self.env}`: the peer env '{self.env}' of the "
                               f"{self.library} adapter is absent ({py})")
        return py

    @property
    def version(self) -> str:
        """The library version installed in the peer env."""
        if self._version is None:
            py = self._require()
            code = "import sys; from importlib.metadata import version; print(version(sys.argv[1]))"
            out = subprocess.run([str(py), "-c", code, self.dist], capture_output=True, text=True, timeout=120)
            if out.returncode != 0:
                raise RecevalError(f"cannot read the {self.library} version in peer env '{self.env}': "
                                   f"{(out.stderr.strip().splitlines() or ['?'])[-1]}")
            self._version = out.stdout.strip()
        return self._version

    # ---- the metrics ----

    def implementations(self) -> dict[str, tuple[str, BatchImplementation]]:
        """peer metric name -> (receval metric name, a batch implementation of it)."""
        return {m.name: (m.metric, PeerImplementation(self, m)) for m in self.metrics}

    # ---- running ----

    def _run_jobs(self, jobs: list[dict]) -> None:
        """Run runner jobs (``{"runner", "in", "out"}``) in one process of the peer env."""
        py = self._require()
        spec = Path(jobs[0]["out"]).parent / "jobs.json"
        spec.write_text(json.dumps(jobs))
        for attempt in (1, 2):  # a process killed by a signal (seen: a library's threads aborting it under load) runs once more
            proc = subprocess.run([str(py), str(RUNNERS_DIR / "_batch.py"), str(spec)],
                                  capture_output=True, text=True, timeout=3600)
            if proc.returncode >= 0:
                break
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise RecevalError(f"the {self.library} runner failed in peer env '{self.env}': {last}")

    def run(self, cases: Sequence[Case], ks: Sequence[int], *, separately: bool = False) -> dict[str, dict | str]:
        """Run the runner on ``cases`` at the cut-offs ``ks``: case id -> {emitted name: {"mean",
        "per_user" (the case's user ids)}} or the one-line error text. ``separately``: one input
        folder per case (for the metrics the library gives only as means). A run is remembered by
        the content of its cases: the other metrics of the library on the same cases reuse it."""
        key = _fingerprint(cases, ks, separately)
        if key in self._runs:
            return self._runs[key]
        out: dict[str, dict | str] = {}
        with tempfile.TemporaryDirectory(prefix=f"receval-{self.name}-") as tmp:
            root = Path(tmp)
            groups = [[c] for c in cases] if separately else [list(cases)]
            jobs, backs = [], []
            for i, group in enumerate(groups):
                folder = root / f"g{i}"
                backs.append((group, _write_folder(folder, group, ks)))
                jobs.append({"runner": self.name, "in": str(folder), "out": str(folder / "out.json")})
            self._run_jobs(jobs)
            retry: list[Case] = []
            for job, (group, back) in zip(jobs, backs):
                doc = json.loads(Path(job["out"]).read_text())
                if "error" in doc:
                    if len(group) > 1:
                        retry.extend(group)  # find the case(s) the library fails on
                    else:
                        out[group[0].id] = doc["error"]
                    continue
                self._version = doc.get("version", self._version)
                for c in group:
                    out[c.id] = {}
                for name, entry in doc["metrics"].items():
                    per = entry.get("per_user")
                    if per is None:
                        for c in group:
                            out[c.id][name] = {"mean": entry.get("mean")}  # type: ignore[index]
                        continue
                    split: dict[str, dict[str, float]] = {c.id: {} for c in group}
                    for code, v in per.items():
                        cid, user = back[int(code)]
                        split[cid][user] = _num(v)
                    for c in group:
                        mean = entry.get("mean") if len(group) == 1 else None
                        out[c.id][name] = {"mean": mean, "per_user": split[c.id]}  # type: ignore[index]
        if retry:
            out.update(self.run(retry, ks, separately=True))
        self._runs[key] = out
        return out


def _fingerprint(cases: Sequence[Case], ks: Sequence[int], separately: bool) -> str:
    import hashlib

    h = hashlib.sha256(json.dumps([sorted(set(ks)), separately]).encode())
    for c in cases:
        h.update(json.dumps([c.id, c.k]).encode())
        for frame in (c.recs, c.truth):
            h.update(frame.write_csv().encode())
    return h.hexdigest()


def _cut_name(pm: PeerMetric, k: int | None) -> str | None:
    """The runner's emitted name for a case with cut-off ``k`` (None: the metric cannot run it)."""
    if k is not None and pm.cut:
        return f"{pm.name}@{k}"
    if pm.whole:
        return pm.name
    return None


@dataclass
class PeerImplementation:
    """One metric of a library as a :class:`~receval.conformance.case.BatchImplementation`.

    A metric without cut-off (``whole``) ignores a case's k; a metric with a cut-off only
    (``cut``) cannot run a case without k (its outcome is an error text).
    """

    adapter: Adapter
    metric: PeerMetric

    @property
    def name(self) -> str:
        return f"{self.adapter.name}:{self.metric.name}"

    @property
    def tolerance(self) -> float:
        """The relative tolerance its values are compared to: the library's precision."""
        return _PRECISION.get(self.adapter.name, 1e-9)

    def evaluate_cases(self, cases: list[Case]) -> Mapping[str, Outcome | str]:
        pm = self.metric
        result: dict[str, Outcome | str] = {}
        runnable: list[Case] = []
        for c in cases:
            if _cut_name(pm, c.k) is None:
                result[c.id] = f"{self.adapter.library} {pm.name} needs a cut-off k; the case has none"
            else:
                runnable.append(c)
        if not runnable:
            return result
        ks = sorted({c.k for c in runnable if c.k is not None and pm.cut}) or [1]
        chunks = [ks[i:i + MAX_KS] for i in range(0, len(ks), MAX_KS)]
        for chunk in chunks:
            todo = [c for c in runnable if (c.k in chunk if (pm.cut and c.k is not None) else chunk is chunks[0])]
            if not todo:
                continue
            runs = self.adapter.run(todo, chunk, separately=pm.means_only)
            for c in todo:
                got = runs.get(c.id)
                if isinstance(got, str):
                    result[c.id] = got
                    continue
                name = _cut_name(pm, c.k)
                entry = (got or {}).get(name or "")
                if entry is None:
                    result[c.id] = f"{self.adapter.library} emitted no {name} for this case (see its runner's notes)"
                elif entry.get("per_user"):
                    result[c.id] = dict(entry["per_user"])
                elif entry.get("mean") is not None:
                    result[c.id] = float(entry["mean"])
                else:
                    result[c.id] = f"{self.adapter.library} gave no value for this case (NaN)"
        return result
