"""Dialect files, the `compare` command, the RecSys'21 study's pattern, and hand-derived goldens.

The goldens for libraries that are not installable from PyPI (Elliot, the RecSys2019 DL
evaluation, OpenRec tf2, NeuRec's Python backend, DaisyRec 1.x) write each expected value as
the arithmetic of that library's source, as recorded in
the project's reference notes (shared/reference/dialects.md) (file and line cited next to each).
"""

from __future__ import annotations

import math
import tomllib
from importlib import resources

import numpy as np
import pytest

from receval import evaluate
from receval.cli import explain, main
from receval.compare import compare, compare_results, select_dialects
from receval.dialects import all_dialects, load_dialect
from receval.errors import SpecError
from receval.options import CONTEXT_AXES
from receval.metrics import get_metric
from receval.resolve import resolve

log2 = math.log2

# --------------------------------------------------------------------------------------------
# the files


def _files():
    return [p for p in resources.files("receval.dialects").iterdir() if p.name.endswith(".toml")]


def test_file_names_match_contents():
    names = set()
    for p in _files():
        data = tomllib.loads(p.read_text(encoding="utf-8"))
        if data["name"] != "standard":
            assert p.name == f"{data['name']}@{data['version']}.toml"
        names.add(data["name"])
    for expected in [
        "replay", "recbole", "elliot", "daisyrec", "beta_recsys", "ms_recommenders", "openrec", "neurec",
        "dlrs_eval", "recsys_pytorch", "rs_metrics", "rectools", "ranx", "torchmetrics", "lenskit", "trec_eval",
    ]:
        assert expected in names


def test_one_default_per_library():
    by_name: dict[str, list] = {}
    for d in all_dialects():
        by_name.setdefault(d.name, []).append(d)
    for name, ds in by_name.items():
        assert sum(d.default for d in ds) == 1, name


@pytest.mark.parametrize("d", [d for d in all_dialects() if d.name != "standard"], ids=lambda d: d.label)
def test_every_option_parses_and_every_metric_resolves(d):
    for key, value in d.context.items():
        assert key in CONTEXT_AXES, f"{d.label}: unknown context option {key}"
        CONTEXT_AXES[key].parse(value)
    assert d.metrics, d.label
    for name, entry in d.metrics.items():
        base, _, at = name.partition("@")  # "auc@k": the metric at a cut-off (auc vs auc@k)
        m = get_metric(base)
        for key, value in entry.options.items():
            assert key in m.axes or key in m.context, f"{d.label} {name}: unknown option {key}"
            m.axis(key).parse(value)
        assert entry.source and entry.note, f"{d.label} {name}: source and note are required"
        k = 10 if (m.needs_k or at) else None
        r = resolve(f"{base}@{k}" if k else base, dialect=d)
        for key, value in d.options_for(base, k).items():
            if r.options.get(key) is not None:  # a resolve hook may drop options the form does not read
                assert r.options[key] == value


def test_explain_shows_the_differences():
    text = explain("map@10", "neurec")
    assert "denominator: min_k_r -> cumulative_min" in text
    assert "metric.py:34-41" in text
    text = explain("ndcg@10", "dlrs_eval")
    assert "gain: binary -> exp2" in text and "ideal: cut -> uncut" in text
    text = explain("precision@10", "recbole")
    # RecBole's precision is the standard definition; only its tie rule (torch.topk: ties in
    # the input order) differs from the standard's ties=average, and explain says what it means
    assert "ties: average -> input" in text and "depends on the row order" in " ".join(text.split())
    diffs = text.split("differs from the standard definition:")[1].split("note:")[0].strip().splitlines()
    assert [d.split(":")[0].strip() for d in diffs] == ["ties"]


def test_unknown_dialect_and_version():
    with pytest.raises(SpecError, match="did you mean 'recbole'"):
        load_dialect("recbol")
    with pytest.raises(SpecError, match="versions: 1.1.2, 2.3.0"):
        load_dialect("daisyrec@9")
    assert load_dialect("daisyrec@2.3").version == "2.3.0"
    assert load_dialect("daisyrec").version == "1.1.2"
    assert load_dialect("ms_recommenders").version == "2021.2.9"


def test_missing_metric_names_the_ones_it_has():
    recs = {"user_id": [1], "item_id": [1], "score": [1.0]}
    truth = {"user_id": [1], "item_id": [1]}
    with pytest.raises(SpecError, match="has no metric 'hitrate'; it has: ") as exc:
        evaluate(recs, truth, ["hitrate@5"], dialect="openrec")
    assert "ndcg" in str(exc.value) and "recall" in str(exc.value)


def test_cli_errors_are_one_line(capsys):
    from receval.examples import example_path

    code = main(["compare", str(example_path("recs.csv")), str(example_path("truth.csv")), "-m", "map@5", "--dialects", "neurek"])
    assert code == 2
    assert "did you mean 'neurec'" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# generated data in the study's shape


def _study_data(seed: int = 7, n_users: int = 200, n_items: int = 1000, top: int = 50):
    """Top-50 lists sorted by a distinct score; ratings 0.5–5; every user has a rating ≥ 4.5."""
    rng = np.random.default_rng(seed)
    ru, ri, rs, tu, ti, tr = [], [], [], [], [], []
    for u in range(n_users):
        n_truth = int(min(3 + rng.geometric(1 / 30), 300))  # median ~ 20, some users far above k
        items = rng.choice(n_items, size=n_truth, replace=False)
        ratings = rng.choice(np.arange(1, 11) / 2, size=n_truth)
        ratings[0] = rng.choice([4.5, 5.0])
        tu += [u] * n_truth
        ti += items.tolist()
        tr += ratings.tolist()
        score = rng.random(n_items)
        score[items] += 0.3 * (ratings >= 4.5) * rng.random(n_truth)  # some signal
        order = np.argsort(-score)[:top]
        ru += [u] * top
        ri += order.tolist()
        rs += score[order].tolist()
    recs = {"user_id": np.array(ru), "item_id": np.array(ri), "score": np.array(rs)}
    truth = {"user_id": np.array(tu), "item_id": np.array(ti), "rating": np.array(tr)}
    return recs, truth


STUDY = ["recbole", "replay", "dlrs_eval", "ms_recommenders", "beta_recsys", "rs_metrics", "daisyrec", "elliot", "neurec"]


@pytest.fixture(scope="module")
def study():
    recs, truth = _study_data()
    specs = ["precision@20", "recall@20", "hitrate@20", "mrr@20", "map@20", "ndcg@20"]
    res = compare_results(recs, truth, specs, dialects=["standard", *STUDY, "openrec"], rel=4.5, errors="raise")
    return {row["dialect"].split("@")[0]: row for row in res.frame.iter_rows(named=True)}, res


def test_study_precision_and_recall_identical(study):
    rows, _ = study
    p = {d: rows[d]["precision@20"] for d in ["standard", *STUDY]}
    r = {d: rows[d]["recall@20"] for d in ["standard", *STUDY, "openrec"]}
    assert max(p.values()) - min(p.values()) < 1e-12, p
    assert max(r.values()) - min(r.values()) < 1e-12, r
    assert 0 < p["standard"] < 1


def test_study_hitrate(study):
    rows, _ = study
    hr = {d: rows[d]["hitrate@20"] for d in ["standard", "recbole", "replay", "daisyrec", "elliot", "rs_metrics"]}
    assert len(set(hr.values())) == 1
    # DL evaluation: the mean number of hits = Precision@k · k when every list holds ≥ k items
    assert rows["dlrs_eval"]["hitrate@20"] == pytest.approx(rows["standard"]["precision@20"] * 20, rel=1e-12)
    assert rows["dlrs_eval"]["hitrate@20"] > 1 or rows["dlrs_eval"]["hitrate@20"] > rows["standard"]["hitrate@20"]


def test_study_mrr(study):
    rows, _ = study
    assert rows["daisyrec"]["mrr@20"] > rows["standard"]["mrr@20"]
    for d in ["recbole", "replay", "dlrs_eval", "elliot", "neurec", "rs_metrics"]:
        assert rows[d]["mrr@20"] == pytest.approx(rows["standard"]["mrr@20"], abs=1e-12)


def test_study_map_five_values_and_orderings(study):
    rows, _ = study
    m = {d: rows[d]["map@20"] for d in STUDY}
    groups = [("recbole", "replay", "dlrs_eval"), ("ms_recommenders", "beta_recsys", "rs_metrics"), ("daisyrec",), ("elliot",), ("neurec",)]
    for g in groups:
        assert all(m[d] == pytest.approx(m[g[0]], abs=1e-12) for d in g), g
    reps = [m[g[0]] for g in groups]
    assert min(abs(a - b) for i, a in enumerate(reps) for b in reps[i + 1:]) > 1e-6, reps
    assert rows["standard"]["map@20"] == pytest.approx(m["recbole"], abs=1e-12)
    # orderings that hold for every user: ÷min(k,|R|) ≥ ÷|R|, ÷min(k,|R|) ≥ ÷k, NeuRec ≤ ÷min(k,|R|)
    assert m["recbole"] >= m["ms_recommenders"]
    assert m["recbole"] >= m["daisyrec"]
    assert m["neurec"] <= m["recbole"]


def test_study_ndcg(study):
    rows, _ = study
    for d in ["recbole", "replay", "ms_recommenders", "beta_recsys", "rs_metrics", "neurec"]:
        assert rows[d]["ndcg@20"] == pytest.approx(rows["standard"]["ndcg@20"], abs=1e-12)
    # OpenRec tf2 reports DCG, larger than NDCG whenever the ideal DCG exceeds 1
    assert rows["openrec"]["ndcg@20"] > rows["standard"]["ndcg@20"]
    assert rows["dlrs_eval"]["ndcg@20"] != pytest.approx(rows["standard"]["ndcg@20"])


def test_study_map_orderings_hold_per_user():
    recs, truth = _study_data(seed=11)
    out = {}
    for d in ["recbole", "ms_recommenders", "daisyrec", "neurec"]:
        out[d] = evaluate(recs, truth, ["map@20"], dialect=d, rel=4.5).per_user()["map@20"].to_numpy()
    assert np.all(out["recbole"] >= out["ms_recommenders"] - 1e-15)
    assert np.all(out["recbole"] >= out["daisyrec"] - 1e-15)
    assert np.all(out["neurec"] <= out["recbole"] + 1e-15)


def test_openrec_ndcg_can_exceed_one():
    # three relevant items ranked 1, 2, 3: DCG@5 = 1 + 1/log2 3 + 1/log2 4 (ranking_metrics.py:28-47, no IDCG)
    recs = {"user_id": [1] * 5, "item_id": [1, 2, 3, 4, 5], "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
    truth = {"user_id": [1, 1, 1], "item_id": [1, 2, 3]}
    v = evaluate(recs, truth, ["ndcg@5"], dialect="openrec").value("ndcg@5")
    assert v == pytest.approx(1 + 1 / log2(3) + 1 / log2(4))
    assert v > 1


# --------------------------------------------------------------------------------------------
# compare


def test_compare_frame_and_missing_metrics():
    from receval.examples import WORKED_RECS, WORKED_TRUTH

    df = compare(WORKED_RECS, WORKED_TRUTH, ["hitrate@4", "map@4"], dialects="standard,openrec,neurec")
    assert df.columns == ["dialect", "library", "version", "hitrate@4", "map@4"]
    rows = {r["dialect"]: r for r in df.iter_rows(named=True)}
    assert rows["openrec@0.3.0"]["hitrate@4"] is None and rows["openrec@0.3.0"]["map@4"] is None
    assert rows["neurec@f8d3ab7"]["hitrate@4"] is None
    assert rows["neurec@f8d3ab7"]["map@4"] == pytest.approx((1 / 2 + 2 / 4) / (1 + 2 + 3 + 3))
    assert rows["standard"]["hitrate@4"] == 1.0


def test_compare_agrees_with_evaluate_and_builds_once_per_build_key(monkeypatch):
    import receval.hits as hits_mod

    recs, truth = _study_data(seed=3, n_users=30)
    calls = []
    real = hits_mod.build

    def counting(*a, **kw):
        calls.append(a[2])
        return real(*a, **kw)

    monkeypatch.setattr(hits_mod, "build", counting)
    dialects = select_dialects("all")
    specs = ["precision@10", "map@10", "ndcg@10"]
    res = compare_results(recs, truth, specs, dialects="all", rel=4.5)
    distinct = {tuple(sorted(c.items())) for c in calls}
    assert len(calls) == len(distinct) < len(dialects)
    monkeypatch.setattr(hits_mod, "build", real)
    for row in res.frame.iter_rows(named=True):
        d = row["dialect"]
        for s in specs:
            if row[s] is None:
                continue
            want = evaluate(recs, truth, [s], dialect=None if d == "standard" else d, rel=4.5)
            assert row[s] == pytest.approx(want.value(s), abs=1e-15), (d, s)
            assert res.signatures[(d, s)] == want.signature(s)


def test_compare_marks_refused_data():
    # the standard refuses a repeated item (dup=error), Elliot counts it (dup=keep): the refused
    # row is marked, the other computed (RecTools, which refused scores without a rank column
    # before issue 23, now ranks them by score: tests/metrics/test_rectools_scores.py)
    recs = {"user_id": [1, 1, 1], "item_id": [1, 2, 2], "score": [0.9, 0.8, 0.7]}
    truth = {"user_id": [1], "item_id": [2]}
    res = compare_results(recs, truth, ["precision@2"], dialects="standard,elliot")
    assert ("standard", "precision@2") in res.errors
    assert res.cell("standard", "precision@2") == "error"
    assert res.cell("elliot@0.3.1", "precision@2") == "0.5000"  # 4 significant digits, as every table
    with pytest.raises(Exception, match="duplicate"):
        compare(recs, truth, ["precision@2"], dialects="standard", errors="raise")


def test_compare_cli(capsys):
    from receval.examples import example_path

    code = main([
        "compare", str(example_path("recs.csv")), str(example_path("truth.csv")),
        "-m", "map@5", "-m", "hitrate@5", "--dialects", "recbole,openrec", "--format", "csv",
    ])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "dialect,map@5,hitrate@5"
    assert lines[2].startswith("openrec@0.3.0,,")


# --------------------------------------------------------------------------------------------
# hand-derived goldens for libraries not on PyPI
#
# One user: items 10, 20, 30, 40, 50 recommended in that order; relevant 20 (rating 5.0),
# 40 (rating 4.5) and 60 (rating 5.0, not recommended). Hits at positions 2 and 4, |R| = 3.

RECS = {"user_id": [1] * 5, "item_id": [10, 20, 30, 40, 50], "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
TRUTH = {"user_id": [1, 1, 1], "item_id": [20, 40, 60], "rating": [5.0, 4.5, 5.0]}


def _v(spec: str, dialect: str, recs=RECS, truth=TRUTH, **kw) -> float:
    return evaluate(recs, truth, [spec], dialect=dialect, **kw).value(spec)


def test_golden_elliot():
    # elliot/evaluation/metrics/accuracy/map/map.py:61-80 — AP = (1/k)·Σ_{n=1..k} P@n, no rel_n
    assert _v("map@5", "elliot") == pytest.approx((0 + 1 / 2 + 1 / 3 + 2 / 4 + 2 / 5) / 5)
    # mar.py — (1/k)·Σ_{n=1..k} Recall@n
    assert _v("mar@5", "elliot") == pytest.approx((0 + 1 / 3 + 1 / 3 + 2 / 3 + 2 / 3) / 5)
    # precision/precision.py — H/k even for a list shorter than k
    assert _v("precision@10", "elliot") == pytest.approx(2 / 10)
    # ndcg/ndcg.py:68,80 + relevance/relevance.py:80 — gain 2^(r−t+1)−1 with t = threshold 4.5,
    # discount relevance.py:55 ln2/ln(r+2) = 1/log2(r+2) for 0-based r; IDCG top-min(k,|R|) gains
    g5, g45 = 2 ** (5 - 4.5 + 1) - 1, 2 ** (4.5 - 4.5 + 1) - 1
    dcg = g5 / log2(3) + g45 / log2(5)
    idcg = g5 / log2(2) + g5 / log2(3) + g45 / log2(4)
    assert _v("ndcg@5", "elliot", rel=4.5) == pytest.approx(dcg / idcg)
    # the study's setting t = 1 (gain 2^r − 1): written in the spec
    assert _v("ndcg(t=1)@5", "elliot") == pytest.approx(
        (31 / log2(3) + (2**4.5 - 1) / log2(5)) / (31 + 31 / log2(3) + (2**4.5 - 1) / log2(4))
    )


def test_golden_elliot_skips_users_without_recs():
    # base_metric.py:BaseMetric.eval averages only users that received recommendations
    truth = {"user_id": [1, 1, 1, 2], "item_id": [20, 40, 60, 7], "rating": [5.0, 4.5, 5.0, 5.0]}
    assert _v("precision@5", "elliot", truth=truth) == pytest.approx(2 / 5)
    assert _v("precision@5", "recbole", truth=truth) == pytest.approx((2 / 5 + 0) / 2)


def test_golden_dlrs_eval():
    # Base/Evaluation/Evaluator.py:339 — HIT_RATE accumulates is_relevant.sum() = H
    assert _v("hitrate@5", "dlrs_eval") == 2.0
    # metrics.py:136 — precision = H/ℓ (a list of 5 at k = 10)
    assert _v("precision@10", "dlrs_eval") == pytest.approx(2 / 5)
    # metrics.py:65 — average_precision ÷ min(|R|, ℓ)
    assert _v("map@5", "dlrs_eval") == pytest.approx((1 / 2 + 2 / 4) / min(3, 5))
    two = {"user_id": [1, 1], "item_id": [20, 40], "score": [0.9, 0.8]}
    assert _v("map@10", "dlrs_eval", recs=two) == pytest.approx((1 / 1 + 2 / 2) / min(3, 2))
    # metrics.py:180-207 — gain 2^rel − 1 of the test rating, 1/ln(i+1) (cancels),
    # IDCG (line 194) over ALL the user's relevances, not cut at k = 2
    dcg = (2**5 - 1) / math.log(3)
    idcg = (2**5 - 1) / math.log(2) + (2**5 - 1) / math.log(3) + (2**4.5 - 1) / math.log(4)
    assert _v("ndcg@2", "dlrs_eval") == pytest.approx(dcg / idcg)
    # Evaluator.py:257-263 — F1 of the averaged precision and recall
    truth2 = {"user_id": [1, 1, 1, 2], "item_id": [20, 40, 60, 10], "rating": [5.0, 4.5, 5.0, 5.0]}
    recs2 = {"user_id": [1] * 5 + [2] * 5, "item_id": [10, 20, 30, 40, 50] * 2, "score": [0.9, 0.8, 0.7, 0.6, 0.5] * 2}
    p = (2 / 5 + 1 / 5) / 2  # full lists: ÷ℓ = ÷k (receval's F1 reads precision ÷k)
    r = (2 / 3 + 1 / 1) / 2
    assert _v("f1@5", "dlrs_eval", recs=recs2, truth=truth2) == pytest.approx(2 * p * r / (p + r))


def test_golden_openrec_tf2():
    # openrec/tf2/metrics/ranking_metrics.py:28-47 — Σ_{p: rank_p<k} 1/log2(rank_p+2), no IDCG;
    # hits at 0-based ranks 1 and 3
    assert _v("ndcg@5", "openrec") == pytest.approx(1 / log2(1 + 2) + 1 / log2(3 + 2))
    # Recall = #{p: rank_p < k}/|R|
    assert _v("recall@2", "openrec") == pytest.approx(1 / 3)
    # rank_p = #items with a strictly greater score: item 20 tied with 10 and listed after it
    tied = dict(RECS, score=[0.8, 0.8, 0.7, 0.6, 0.5])
    assert _v("ndcg@5", "openrec", recs=tied) == pytest.approx(1 / log2(0 + 2) + 1 / log2(3 + 2))
    assert _v("recall@1", "openrec", recs=tied) == pytest.approx(1 / 3)


def test_golden_neurec_python():
    # evaluator/backend/python/metric.py:34-41 — Σ P@i·rel_i ÷ cumsum(min(i, |R|)) at k (line 39)
    assert _v("map@5", "neurec") == pytest.approx((1 / 2 + 2 / 4) / (1 + 2 + 3 + 3 + 3))
    assert _v("map@2", "neurec") == pytest.approx((1 / 2) / (1 + 2))
    # util/tool.py:argmax_top_k = heapq.nlargest over (score, index): the larger index wins a tie
    tied = dict(RECS, score=[0.8, 0.8, 0.7, 0.6, 0.5])  # 10 and 20 tied: 20 ranks first
    assert _v("mrr@5", "neurec", recs=tied) == 1.0
    assert _v("mrr@5", "recbole", recs=tied) == 0.5
    # precision H/k, ndcg binary log2 with IDCG over min(|R|, k)
    assert _v("precision@5", "neurec") == pytest.approx(2 / 5)
    assert _v("ndcg@5", "neurec") == pytest.approx((1 / log2(3) + 1 / log2(5)) / (1 + 1 / log2(3) + 1 / log2(4)))


def test_golden_daisyrec_1x():
    # daisy/utils/metrics.py:53-74 (line 71, no break) — Σ over all hits of 1/i
    assert _v("mrr@5", "daisyrec") == pytest.approx(1 / 2 + 1 / 4)
    # metrics.py:77-94 (line 92) — ap = Σ_{hits} P@i ÷ len(r), len(r) = k for a top-k list
    assert _v("map@5", "daisyrec") == pytest.approx((1 / 2 + 2 / 4) / 5)
    # metrics.py:133-152 (line 147) — IDCG = DCG of sorted(r, reverse=True): the 2 hits on top
    assert _v("ndcg@5", "daisyrec") == pytest.approx((1 / log2(3) + 1 / log2(5)) / (1 / log2(2) + 1 / log2(3)))
    # all hits on top: NDCG 1 however many relevant items were missed
    top = dict(RECS, item_id=[20, 40, 10, 30, 50])
    assert _v("ndcg@5", "daisyrec", recs=top) == pytest.approx(1.0)
    assert _v("ndcg@5", "standard", recs=top) < 1
    # DaisyRec 2.x: MAP ÷H, MRR first hit, precision ÷ℓ
    assert _v("map@5", "daisyrec@2.3") == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert _v("mrr@5", "daisyrec@2.3") == pytest.approx(1 / 2)
    assert _v("precision@10", "daisyrec@2.3") == pytest.approx(2 / 5)


# --------------------------------------------------------------------------------------------
# a few behaviours of the installable peers, as recorded in the dialect files


def test_rs_metrics_takes_the_input_order():
    shuffled = dict(RECS, score=[0.5, 0.9, 0.4, 0.3, 0.2])  # the score would put 20 first
    assert _v("mrr@5", "rs_metrics", recs=shuffled) == 0.5  # rows taken in input order
    assert _v("mrr@5", "recbole", recs=shuffled) == 1.0  # sorted by score


def test_rectools_orders_by_rank_and_fills_k():
    recs = dict(RECS, rank=[5, 4, 3, 2, 1])  # 50 first, 40 second
    assert _v("mrr@5", "rectools", recs=recs) == 0.5
    # ideal = all k slots relevant: DCG over k slots of 1/log2(i+1)
    dcg = 1 / log2(3) + 1 / log2(5)
    assert _v("ndcg@5", "rectools", recs=recs) == pytest.approx(dcg / sum(1 / log2(i + 1) for i in range(1, 6)))


def test_torchmetrics_sees_only_the_listed_items():
    # relevant 60 is not among the rows: recall ÷ 2 positives present, AP ÷ hits
    assert _v("recall@5", "torchmetrics") == pytest.approx(2 / 2)
    assert _v("recall@2", "torchmetrics") == pytest.approx(1 / 2)
    assert _v("map@5", "torchmetrics") == pytest.approx((1 / 2 + 2 / 4) / 2)
    # linear gain, ideal from the listed targets (5.0 and 4.5) cut at k
    dcg = 5.0 / log2(3) + 4.5 / log2(5)
    assert _v("ndcg@5", "torchmetrics") == pytest.approx(dcg / (5.0 + 4.5 / log2(3)))
