"""The built-in adapters (receval.adapters): real libraries run on conformance cases.

Hand-made cases go through every adapter whose peer env is built (``receval peers build``), and
each outcome is checked against receval's own ``evaluate`` under the adapter's dialect with the
spec its catalogue names (the spec the parity tests compare that metric with). A missing env
skips, except under ``CI=true``, where it fails: CI builds every env.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from pathlib import Path

import polars as pl
import pytest

from receval import adapters, evaluate
from receval.conformance.case import BatchImplementation, Case
from receval.errors import RecevalError

PARITY = Path(__file__).resolve().parents[1] / "parity"
WHOLE = 100  # receval's cut-off for a metric without one (longer than every list below)
#: torch computes in float32
TOL = {"torchmetrics": 1e-6}


def _case(cid: str, k: int | None, users: dict[str, tuple[list[str], dict[str, float]]]) -> Case:
    """users: user -> (recommended items best first, {truth item: rating}); scores fall with rank."""
    recs = [(u, i, 1.0 - r / 100, r) for u, (lst, _) in users.items() for r, i in enumerate(lst, start=1)]
    truth = [(u, i, g) for u, (_, t) in users.items() for i, g in t.items()]
    return Case(
        id=cid, metric="", spec="", k=k,
        recs=pl.DataFrame(recs, schema={"user": pl.String, "item": pl.String, "score": pl.Float64, "rank": pl.Int64},
                          orient="row"),
        truth=pl.DataFrame(truth, schema={"user": pl.String, "item": pl.String, "rating": pl.Float64}, orient="row"),
    )


#: tie-free cases every peer reads alike: every truth user has a list, no recommendation-only
#: user, no duplicates; lists shorter and longer than k, a user without a hit, graded ratings
CASES = [
    _case("c-k3", 3, {
        "u1": (["10", "11", "12", "13", "14"], {"11": 3.0, "14": 1.0, "99": 2.0}),
        "u2": (["10", "20"], {"20": 2.0}),
        "u3": (["30", "31", "32", "33"], {"40": 1.0, "41": 3.0}),
        "u4": (["12", "10", "11"], {"12": 1.0, "10": 2.0, "11": 3.0}),
    }),
    _case("c-k5", 5, {
        "a": (["1", "2", "3", "4", "5", "6", "7"], {"2": 2.0, "6": 3.0, "9": 1.0}),
        "b": (["3"], {"3": 1.0, "4": 2.0}),
        "c": (["7", "8", "9"], {"9": 3.0, "8": 1.0}),
    }),
]

#: (adapter, peer metric) that do not run on CASES, with why (their outcome is an error text)
NOT_ON_CASES = {
    ("recommenders", "auc"): "MS Recommenders' auc needs 0/1 truth labels",
}


def _require(adapter) -> None:
    if adapter.available():
        return
    msg = f"the {adapter.library} adapter's env '{adapter.env}' is absent: build it with `receval peers build {adapter.env}`"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + " (CI builds every peer env)")
    pytest.skip(msg)


def _ours(case: Case, spec: str, dialect: str | None) -> tuple[float, dict[str, float]]:
    res = evaluate(case.recs, case.truth, [spec], dialect=dialect, user_col="user", item_col="item")
    ent = res._entry(spec)
    per = {str(u): float(v) for u, v in zip(res.user_ids.to_list() if hasattr(res.user_ids, "to_list") else res.user_ids.tolist(),
                                            ent.per_user.tolist())} if ent.per_user is not None else {}
    return float(res[spec]), per


def _check(name: str, pm, dialect: str | None, outcomes, cases: list[Case]) -> list[str]:
    tol = TOL.get(name, 1e-9)
    problems = []
    for c in cases:
        got = outcomes[c.id]
        if (name, pm.name) in NOT_ON_CASES:
            assert isinstance(got, str), (name, pm.name, got)
            continue
        if isinstance(got, str):
            problems.append(f"{pm.name} on {c.id}: error {got}")
            continue
        k = c.k if (pm.cut and c.k is not None) else WHOLE
        spec = pm.spec.format(k=k)
        mean, per = _ours(c, spec, dialect)
        if isinstance(got, float):
            if not (math.isclose(got, mean, rel_tol=0, abs_tol=tol) or (math.isnan(got) and math.isnan(mean))):
                problems.append(f"{pm.name} on {c.id}: mean {got!r}, receval {spec} {mean!r}")
            continue
        assert got, (pm.name, c.id)
        assert set(got) <= {str(u) for u in (*c.recs["user"].to_list(), *c.truth["user"].to_list())}
        for u, v in got.items():
            ours = per.get(u, math.nan)
            if math.isnan(v) or math.isnan(ours):
                continue  # outside one of the averaged sets
            if not math.isclose(v, ours, rel_tol=0, abs_tol=tol):
                problems.append(f"{pm.name} on {c.id} user {u}: {v!r}, receval {spec} {ours!r}")
    return problems


# ---- the catalogue ---------------------------------------------------------------------------------


def test_names_and_get():
    assert set(adapters.names()) >= {"rectools", "replay", "ranx", "pytrec_eval", "recbole", "recommenders",
                                     "torchmetrics", "sklearn", "lenskit", "rs_metrics", "mllib"}
    a = adapters.get("rectools")
    assert (a.library, a.env, a.dialect) == ("RecTools", "np1", "rectools@0.19.0")
    impls = a.implementations()
    assert impls["MAP"][0] == "map" and impls["NDCG"][0] == "ndcg"
    assert isinstance(impls["MAP"][1], BatchImplementation)
    # read as {receval metric: implementation} (receval audit's --metric): the plain metric of each
    assert a["map"] is not None and set(a) >= {"map", "ndcg", "precision"} and len(a) == len(set(a))
    assert isinstance(adapters.get("mllib")["ndcg"], BatchImplementation)
    with pytest.raises(RecevalError, match="no adapter 'nope'"):
        adapters.get("nope")


def test_the_runners_ship_with_the_package():
    runners = adapters.runner_envs()
    for name in adapters.names():
        if name != "mllib":
            assert (adapters.RUNNERS_DIR / f"{name}.py").exists()
            assert name in runners
    for name in runners:
        assert (adapters.RUNNERS_DIR / f"{name}.py").exists(), name
    assert not (PARITY / "peers").exists()  # no copies left in the test tree


def test_catalogue_metrics_are_receval_metrics_and_specs_resolve():
    from receval.metrics import all_metrics
    from receval.spec import parse_spec

    known = {m.name for m in all_metrics()}
    for name in adapters.names():
        a = adapters.get(name)
        for pm in a.metrics:
            assert pm.metric in known, (name, pm.name, pm.metric)
            assert pm.cut or pm.whole, (name, pm.name)
            if pm.spec is not None:
                spec = parse_spec(pm.spec.format(k=5))
                assert spec.name == pm.metric, (name, pm.name, pm.spec)


def _parity_specs() -> dict[str, dict[str, set[str]]]:
    """runner -> peer name (without @k) -> the specs tests/parity compares it with."""
    sys.path.insert(0, str(PARITY))
    try:
        import test_parity as tp
        import test_parity_ir as tpi
        import test_parity_lenskit as tpl
        import test_parity_mllib as tpm
    finally:
        sys.path.remove(str(PARITY))
    out: dict[str, dict[str, set[str]]] = {}
    for table in (tp.PEERS, tpi.PEERS):
        for runner, (_dialect, metrics) in table.items():
            for m in metrics:
                out.setdefault(runner, {}).setdefault(m.peer.replace("@{k}", ""), set()).add(m.spec)
    for peer, spec in tpl.METRICS.items():
        out.setdefault("lenskit", {}).setdefault(peer, set()).add(f"{spec}@{{k}}")
    for peer, spec in tpm.METRICS.items():
        out.setdefault("mllib", {}).setdefault(peer, set()).add(spec)
    return out


def test_catalogue_specs_are_the_parity_specs():
    """Each spec the catalogue names is one the parity tests compare that peer metric with, and
    every metric the parity tests compare has its spec in the catalogue."""
    parity = _parity_specs()
    for name in adapters.names():
        a = adapters.get(name)
        theirs = parity.get(name, {})
        for pm in a.metrics:
            if pm.spec is not None:
                assert pm.spec in theirs.get(pm.name, set()), (name, pm.name, pm.spec, theirs.get(pm.name))
        for peer in theirs:
            assert a.metric(peer).spec is not None, (name, peer)


def test_the_audit_table_page_is_current():
    from receval.adapters.table import markdown

    page = Path(__file__).resolve().parents[2] / "docs" / "audit-table.md"
    # the page is the generated table, then (issue 35) a hand-written record of the audit runs
    assert page.read_text(encoding="utf-8").split("\n## Audited on the conformance suite")[0].rstrip("\n") == markdown().rstrip("\n"), \
        "docs/audit-table.md is stale: run `python -m receval.adapters.table docs/audit-table.md`"


def test_the_audit_table_falls_back_to_the_parity_specs(monkeypatch, capsys):
    from receval.adapters import table

    monkeypatch.setitem(sys.modules, "receval.audit", None)  # the audit engine absent: ImportError
    assert table.main(["--audit"]) == 0
    out = capsys.readouterr()
    assert "the table is filled from the parity specs" in out.err
    assert "| `MAP@k` | map | `map@k` | denominator=r, indicator=distinct, order=rank_value, ties=input | parity |" in out.out


# ---- the peers, for real ---------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.xdist_group("parity")
@pytest.mark.parametrize("name", [n for n in adapters.names() if n != "mllib"])
def test_adapter_agrees_with_its_dialect(name):
    a = adapters.get(name)
    _require(a)
    problems = []
    for peer, (metric, impl) in a.implementations().items():
        pm = a.metric(peer)
        if pm.spec is None:
            continue
        outcomes = impl.evaluate_cases(CASES)
        assert set(outcomes) == {c.id for c in CASES}
        problems += _check(name, pm, a.dialect, outcomes, CASES)
    assert a.version  # read from the env by the run
    assert not problems, f"{a.library} {a.version}: " + "; ".join(problems[:8])


FAKE_RUNNER = """
import _common
Result, load = _common.Result, _common.load

recs, truth, params, out = load()
if (recs["item_id"] == 666).any():
    raise ValueError("boom: item 666")
res = Result("fake", "1.2.3")
rel = set(zip(truth["user_id"], truth["item_id"]))
users = sorted(set(truth["user_id"]))
for k in params["k"]:
    per = {u: float(sum((u, i) in rel for i in recs[recs["user_id"] == u]["item_id"].head(k))) for u in users}
    res.add(f"hits@{k}", sum(per.values()) / len(per), per)
res.add("total", float(len(recs)))
res.write(out)
"""


def _fake_env(where):
    """A venv of its own (its ``bin/python`` a symlink, as ``python -m venv`` makes it, with a
    ``pyvenv.cfg``) that sees this interpreter's packages through a ``.pth`` file: a runner job
    through a symlinked interpreter works from a user's venv as from the machine's Python (a bare
    symlink to a venv's interpreter runs the base interpreter, without the venv's packages)."""
    import site
    import sysconfig
    import venv

    venv.create(where, with_pip=False, symlinks=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)})
    paths = [p for p in (*site.getsitepackages(), site.getusersitepackages(), *sys.path) if p and Path(p).is_dir()]
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "_receval_test_parent.pth").write_text("\n".join(dict.fromkeys(paths)) + "\n")
    assert (where / "bin" / "python").is_symlink()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """An adapter whose 'library' is a tiny runner in a fake env (this Python): the batching,
    the id encoding, the splitting back and the retry of a failed batch, without a peer env."""
    runners = tmp_path / "runners"
    runners.mkdir()
    for f in ("_batch.py", "_common.py"):
        shutil.copy(adapters.RUNNERS_DIR / f, runners / f)
    (runners / "fake.py").write_text(FAKE_RUNNER)
    _fake_env(tmp_path / "envs" / "fakeenv")
    monkeypatch.setattr(adapters, "RUNNERS_DIR", runners)
    monkeypatch.setenv("RECEVAL_PEER_ENVS", str(tmp_path / "envs"))
    return adapters.Adapter(name="fake", library="Fake", dist="receval", dialect=None, env="fakeenv", metrics=(
        adapters.PeerMetric("hits", "hitrate"), adapters.PeerMetric("total", "hitrate", cut=False, whole=True, means_only=True)))


def test_batches_split_back_by_case_and_a_failing_case_is_isolated(fake):
    boom = _case("boom", 3, {"u1": (["666"], {"666": 1.0})})
    impls = fake.implementations()
    out = impls["hits"][1].evaluate_cases([*CASES, boom, _case("nok", None, {"u": (["1"], {"1": 1.0})})])
    # the same user ids in two cases stay apart; each case at its own k
    assert out["c-k3"] == {"u1": 1.0, "u2": 1.0, "u3": 0.0, "u4": 3.0}
    assert out["c-k5"] == {"a": 1.0, "b": 1.0, "c": 2.0}
    assert out["boom"] == "ValueError: boom: item 666"  # the shared run failed: each case ran alone
    assert "needs a cut-off" in out["nok"]
    assert fake.version == "1.2.3"  # read from the run
    # a means-only metric runs one folder per case (in one process) and ignores k
    tot = impls["total"][1].evaluate_cases(CASES)
    assert tot == {"c-k3": 14.0, "c-k5": 11.0}


def test_a_missing_env_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RECEVAL_PEER_ENVS", str(tmp_path))
    a = adapters.get("replay")
    assert not a.available()
    _metric, impl = a.implementations()["MAP"]
    with pytest.raises(RecevalError) as err:
        impl.evaluate_cases(CASES)
    assert str(err.value).startswith("build it with `receval peers build np2`: ") and "\n" not in str(err.value)


def test_a_cut_off_metric_refuses_a_case_without_k(tmp_path, monkeypatch):
    monkeypatch.setenv("RECEVAL_PEER_ENVS", str(tmp_path))  # nothing runs: the case is refused first
    _metric, impl = adapters.get("rectools").implementations()["MAP"]
    out = impl.evaluate_cases([_case("nok", None, {"u": (["1"], {"1": 1.0})})])
    assert "needs a cut-off" in out["nok"]


def test_item_codes_keep_the_order():
    from receval.adapters import _item_codes

    assert _item_codes(["10", "9", "2"]) == {"10": 10, "9": 9, "2": 2}
    assert _item_codes(["b", "a", "10"]) == {"10": 1, "a": 2, "b": 3}
    assert _item_codes(["007", "7"]) == {"007": 1, "7": 2}  # not round-tripping ints: by text


# ---- Spark MLlib, in this process ---------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_mllib_adapter_agrees_with_its_dialect():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    a = adapters.get("mllib")
    assert a.available() and a.version
    problems = []
    for peer, (metric, impl) in a.implementations().items():
        pm = a.metric(peer)
        outcomes = impl.evaluate_cases(CASES)
        assert all(isinstance(v, float) for v in outcomes.values()), outcomes  # means only
        problems += _check("mllib", pm, a.dialect, outcomes, CASES)
    assert not problems, "; ".join(problems[:8])


def test_a_runner_killed_by_a_signal_runs_once_more(fake, tmp_path, monkeypatch):
    """A peer process killed by a signal (scikit-learn's runner once died of SIGABRT,
    "terminate called without an active exception", under a loaded CI run) is run once more;
    a second death is the one-line error."""
    marker = tmp_path / "died"
    runner = adapters.RUNNERS_DIR / "fake.py"
    runner.write_text("import os, signal, pathlib\n"
                      f"m = pathlib.Path({str(marker)!r})\n"
                      "if not m.exists() or os.environ.get('RECEVAL_TEST_ALWAYS_ABORT'):\n"
                      "    m.write_text('x')\n"
                      "    os.kill(os.getpid(), signal.SIGABRT)\n" + runner.read_text())
    impl = fake.implementations()["hits"][1]
    assert impl.evaluate_cases(CASES)["c-k5"] == {"a": 1.0, "b": 1.0, "c": 2.0}
    assert marker.exists()
    monkeypatch.setenv("RECEVAL_TEST_ALWAYS_ABORT", "1")
    fake._runs.clear()
    with pytest.raises(RecevalError, match="the Fake runner failed in peer env 'fakeenv'"):
        impl.evaluate_cases(CASES)
