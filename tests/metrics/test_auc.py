"""AUC family: goldens as arithmetic, sklearn for the stacked AUC, slow per-user references.

`auc` / `auc@k` resolve per dialect to what the library calls AUC / RocAuc@k.

gauc(maxfpr=m): the standardised partial AUC (McClish 1989; scikit-learn / torchmetrics
max_fpr), against a plain ROC walk written from the definition, plus its refusals.

pAUC@k and pAp@k (RecTools PartialAUC / PAP): goldens as arithmetic, a brute-force pair
count under hypothesis, the insufficient-list policies, and the batched engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval
from receval import SpecError, evaluate
from receval.backends import evaluate_polars
from receval.cli import explain
from receval.errors import DataError

# ------------------------------------------------------------------------------------------
# data


def make_data(seed: int, n_users: int = 40, n_items: int = 30, ties: bool = True):
    """Rankings with score ties and explicit ranks, truth with items off the list, edge users."""
    rng = np.random.default_rng(seed)
    ru, ri, rs, rk = [], [], [], []
    tu, ti, tr = [], [], []
    for u in range(n_users):
        kind = u % 8
        length = 0 if kind == 7 else int(rng.integers(1, n_items))
        items = rng.choice(n_items, size=length, replace=False)
        scores = np.round(rng.random(length), 1) if ties else rng.random(length)
        order = np.lexsort((rng.random(length), -scores))  # a tie order of our choosing
        items, scores = items[order], scores[order]
        ru += [u] * length
        ri += items.tolist()
        rs += scores.tolist()
        rk += list(range(1, length + 1))
        if kind == 5:  # every ranked item relevant (no negatives)
            truth = items.tolist()
        elif kind == 6:  # nothing relevant in the list
            truth = [n_items + 1, n_items + 2]
        else:
            m = int(rng.integers(1, 6))
            truth = rng.choice(n_items + 3, size=m, replace=False).tolist()
        if not truth:
            truth = [n_items + 1]
        tu += [u] * len(truth)
        ti += truth
        tr += rng.integers(1, 6, size=len(truth)).astype(float).tolist()
    recs = {"user_id": np.array(ru, dtype=np.int64), "item_id": np.array(ri, dtype=np.int64),
            "score": np.array(rs), "rank": np.array(rk, dtype=np.int64)}
    truth = {"user_id": np.array(tu, dtype=np.int64), "item_id": np.array(ti, dtype=np.int64),
             "rating": np.array(tr)}
    return recs, truth


def per_user_lists(recs, truth, rel=None):
    """user -> (items in rank order, scores, relevant set) for every truth user."""
    out = {}
    users = sorted(set(truth["user_id"].tolist()))
    for u in users:
        m = recs["user_id"] == u
        order = np.argsort(recs["rank"][m], kind="stable")
        items = recs["item_id"][m][order].tolist()
        scores = recs["score"][m][order].tolist()
        tm = truth["user_id"] == u
        rset = {int(i) for i, r in zip(truth["item_id"][tm], truth["rating"][tm]) if rel is None or r >= rel}
        out[u] = (items, scores, rset)
    return out


# ------------------------------------------------------------------------------------------
# slow references


def ref_pairs(items, scores, rset, tied):
    """(P, N, Σ a_p) by an explicit double loop."""
    pos = [j for j, i in enumerate(items) if i in rset]
    neg = [j for j, i in enumerate(items) if i not in rset]
    a = 0.0
    for p in pos:
        for n in neg:
            if tied == "order":
                a += n < p
            elif scores[n] > scores[p]:
                a += 1
            elif scores[n] == scores[p] and tied == "half":
                a += 0.5
    return len(pos), len(neg), a


def ref_user_auc(items, scores, rset, *, tied="half", negatives="exact", denominator="list", nopos=0.0, noneg=1.0):
    if not items:
        return 0.0
    p, n, a = ref_pairs(items, scores, rset, tied)
    if p == 0:
        return nopos
    if n == 0:
        return noneg
    nprime = n if negatives == "exact" else len(items) - len(rset) + 1
    d = p if denominator == "list" else len(rset)
    return (p - a / nprime) / d


def mann_whitney(items, scores, rset):
    """Per-user AUC by the rank-sum formula with scipy's average ranks."""
    from scipy.stats import rankdata

    y = np.array([i in rset for i in items])
    p, n = int(y.sum()), int((~y).sum())
    ranks = rankdata(scores)  # ascending, average ties
    return (ranks[y].sum() - p * (p + 1) / 2) / (p * n)


def elliot_user(items, rset, cutoff=None):
    """Elliot's GAUC/LAUC per user, transcribed from its arithmetic (ranks by list position)."""
    neg_num = len(items) - len(rset) + 1
    lst = items if cutoff is None else items[:cutoff]
    pos_ranks = [r for r, i in enumerate(lst) if i in rset]
    # Elliot divides by zero when neg_num = 0; receval counts such a term 1
    terms = [(neg_num - r_r + p_r) / neg_num if neg_num else 1.0 for p_r, r_r in enumerate(pos_ranks)]
    den = len(rset) if cutoff is None else min(cutoff, len(rset))
    return sum(terms) / den, terms


def replay_rocauc(pred, gt, k):
    """RePlay RocAuc@k per user (transcribed)."""
    if not gt or not pred:
        return 0.0
    length = min(k, len(pred))
    fp_cur = fp_cum = 0
    for item in pred[:length]:
        if item in gt:
            fp_cum += fp_cur
        else:
            fp_cur += 1
    if fp_cur == length:
        return 0.0
    if fp_cum == 0:
        return 1.0
    return 1 - fp_cum / (fp_cur * (length - fp_cur))


def pu(res, spec):
    """Per-user values of ``spec`` (NaN where left out), in truth-user order."""
    return res._entry(spec).per_user


# ------------------------------------------------------------------------------------------
# goldens (the worked example: positives at 2 and 4 of 10, 20, 30, 40; |R| = 3)

WR = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.7, 0.6]}
WT = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 4.0, 3.0]}


def val(spec, recs=WR, truth=WT, **kw):
    return evaluate(recs, truth, [spec], **kw).value(spec)


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("auc", 1 / 4),  # (20>30) of pairs 20:10, 20:30, 40:10, 40:30
        ("auc(form=positives)", ((1 - 1 / 2) + (1 - 2 / 2)) / 2),
        ("auc(form=positives,negatives=plus_one)", ((1 - 1 / 2) + (1 - 2 / 2)) / 2),  # 4 − 3 + 1 = 2
        ("auc(form=users)", 1 - 3 / 4),
        ("auc(form=users,denominator=r)", (2 - 3 / 2) / 3),
        ("gauc", 1 - 3 / 4),
        ("gauc@1", 0.0),  # no positive
        ("gauc@2", 1 - 1 / 1),  # 10−, 20+
        ("gauc@3", 1 - 1 / 2),
        ("gauc@4", 1 - 3 / 4),
        ("gauc(denominator=r)", (2 - 3 / 2) / 3),
        ("lauc@1", 0.0),
        ("lauc@2", (1 - 1 / 2) / 2),
        ("lauc@3", (1 - 1 / 2) / 3),
        ("lauc@4", (1 - 1 / 2 + 0) / 3),
    ],
)
def test_worked_goldens(spec, expected):
    assert val(spec) == pytest.approx(expected, abs=1e-15)


def test_ties_goldens():
    # scores: 10:0.5(−) 20:0.5(+) 30:0.5(−) 40:0.1(+): ties everywhere
    recs = dict(WR, score=[0.5, 0.5, 0.5, 0.1])
    # half: 20 ties with 10 and 30 → ½ + ½; 40 below both → 0 ⇒ 1/4 of 4 pairs... (1 + 0) / 4
    assert val("gauc", recs) == pytest.approx(1 / 4)
    assert val("auc", recs) == pytest.approx(1 / 4)
    # correct: 20's ties count as wins → 2/4
    assert val("gauc(tied=correct)", recs) == pytest.approx(2 / 4)
    assert val("auc(tied=correct)", recs) == pytest.approx(2 / 4)
    # order: positions decide (10 above 20, 20 above 30) → 1/4, under ties=input (the row order)
    assert val("gauc(tied=order,ties=input)", recs) == pytest.approx(1 / 4)
    # ties=average (the default): tied=order reads the positions of tied scores, so it has no
    # order-free value: refused on these data, naming the users and the fix
    with pytest.raises(DataError, match=r"^pass ties=item.*gauc\(tied=order\) has no tie-averaged value; 1 user"):
        val("gauc(tied=order)", recs)


def test_elliot_plus_one_differs():
    # |R| = 3 with 50 off the list: N' = 4 − 3 + 1 = 2 = N here; make the list longer
    recs = {"user_id": [1] * 6, "item_id": [10, 20, 30, 40, 60, 70], "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}
    # N = 4, N' = 6 − 3 + 1 = 4; put 50 in: then N' = 6 − 3 + 1 = 4, N = 3
    recs2 = {"user_id": [1] * 6, "item_id": [10, 20, 30, 40, 50, 70], "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}
    # positives 20 (a=1), 40 (a=2), 50 (a=2); N = 3, N' = 4
    assert val("gauc", recs2) == pytest.approx(1 - 5 / 9)
    assert val("gauc(negatives=plus_one)", recs2) == pytest.approx((3 - 5 / 4) / 3)
    assert val("auc(form=positives,negatives=plus_one)", recs2) == pytest.approx((3 - 5 / 4) / 3)
    assert val("gauc", recs) == pytest.approx(1 - 3 / 8)


def test_edge_cases_top_k():
    recs = {"user_id": [1, 1, 2, 2, 3], "item_id": [1, 2, 3, 4, 5], "score": [2.0, 1.0, 2.0, 1.0, 1.0]}
    truth = {"user_id": [1, 1, 2, 3, 4], "item_id": [1, 2, 9, 5, 7], "rating": [1.0] * 5}
    res = evaluate(recs, truth, ["gauc@2", "gauc(noneg=zero,nopos=one)@2"])
    got = pu(res, "gauc@2")
    # user 1: no negatives → 1; user 2: no positives → 0; user 3: no negatives → 1; user 4: no recs → 0
    assert got.tolist() == [1.0, 0.0, 1.0, 0.0]
    assert pu(res, "gauc(noneg=zero,nopos=one)@2").tolist() == [0.0, 1.0, 0.0, 0.0]


def test_skip_policies():
    recs = {"user_id": [1, 1, 2, 2, 3, 3], "item_id": [1, 2, 3, 4, 5, 6], "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0]}
    truth = {"user_id": [1, 1, 2, 3], "item_id": [1, 2, 9, 6], "rating": [1.0] * 4}
    # user 1: all positive; user 2: no positive; user 3: AUC 0 (positive below the negative), P = 1
    assert val("auc(form=users,nopos=skip,noneg=skip)", recs, truth) == 0.0
    assert val("auc(form=users)", recs, truth) == pytest.approx((1 + 0 + 0) / 3)
    assert val("auc(form=users,weight=positives)", recs, truth) == pytest.approx((1 * 2 + 0 * 0 + 0 * 1) / 3)
    with pytest.raises(SpecError, match="skip"):
        evaluate(recs, truth, ["gauc(nopos=skip)"])
    with pytest.raises(SpecError, match="stacked"):
        evaluate(recs, truth, ["auc(tied=order)"])


def test_stacked_needs_scores_and_both_classes():
    with pytest.raises(DataError, match="score"):
        evaluate({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]}, {"user_id": [1], "item_id": [1]}, ["auc"])
    with pytest.raises(DataError, match="undefined"):
        evaluate({"user_id": [1], "item_id": [1], "score": [1.0]}, {"user_id": [1], "item_id": [1]}, ["auc"])


def test_signature_omits_unused_axes():
    sig = evaluate(WR, WT, ["auc"]).signature("auc")
    assert "form:stacked" in sig and "den:" not in sig and "neg:" not in sig


# ------------------------------------------------------------------------------------------
# generated data against references


@pytest.mark.parametrize("seed", range(6))
def test_stacked_equals_sklearn(seed):
    sk = pytest.importorskip("sklearn.metrics")
    recs, truth = make_data(seed)
    lists = per_user_lists(recs, truth)
    y, s = [], []
    for items, scores, rset in lists.values():
        y += [i in rset for i in items]
        s += scores
    expected = sk.roc_auc_score(np.array(y, dtype=int), np.array(s))
    assert val("auc", recs, truth) == pytest.approx(expected, abs=1e-12)
    # with a relevance threshold
    lists = per_user_lists(recs, truth, rel=3)
    y = [i in rset for items, _, rset in lists.values() for i in items]
    assert val("auc", recs, truth, rel=3) == pytest.approx(sk.roc_auc_score(np.array(y, dtype=int), np.array(s)), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tied", ["half", "correct", "order"])
def test_gauc_per_user_reference(seed, tied):
    recs, truth = make_data(seed)
    lists = per_user_lists(recs, truth)
    spec = f"gauc(tied={tied})"
    res = evaluate(recs, truth, [spec])
    got = pu(res, spec)
    exp = [ref_user_auc(*lists[u], tied=tied) for u in lists]
    np.testing.assert_allclose(got, exp, rtol=0, atol=1e-12)
    if tied == "half":  # and the exact Mann–Whitney with scipy's average ranks
        for j, (items, scores, rset) in enumerate(lists.values()):
            p = sum(i in rset for i in items)
            if 0 < p < len(items):
                assert got[j] == pytest.approx(mann_whitney(items, scores, rset), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_recbole_gauc_reference(seed):
    recs, truth = make_data(seed)
    lists = per_user_lists(recs, truth)
    num = den = 0.0
    for items, scores, rset in lists.values():
        p = sum(i in rset for i in items)
        if p == 0 or p == len(items):
            continue
        num += mann_whitney(items, scores, rset) * p
        den += p
    assert val("auc(form=users,weight=positives,nopos=skip,noneg=skip)", recs, truth) == pytest.approx(num / den, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_elliot_references(seed):
    recs, truth = make_data(seed)
    lists = per_user_lists(recs, truth)
    # Elliot users: relevant items > 0 and a list; a user without recommendations is not counted
    users = [u for u, (items, _, rset) in lists.items() if rset and items]
    gauc_ref = {u: elliot_user(lists[u][0], lists[u][2])[0] for u in users}
    terms = [t for u in users for t in elliot_user(lists[u][0], lists[u][2])[1]]
    spec = "gauc(tied=order,negatives=plus_one,denominator=r)"
    res = evaluate(recs, truth, [spec, "auc(form=positives,tied=order,negatives=plus_one)"], norecs="skip")
    got = dict(zip(res.user_ids.tolist(), pu(res, spec).tolist()))
    for u in users:
        assert got[u] == pytest.approx(gauc_ref[u], abs=1e-12)
    assert res[spec] == pytest.approx(np.mean(list(gauc_ref.values())), abs=1e-12)
    assert res["auc(form=positives,tied=order,negatives=plus_one)"] == pytest.approx(np.mean(terms), abs=1e-12)
    for k in (1, 3, 10):
        lspec = f"lauc(tied=order,negatives=plus_one)@{k}"
        r2 = evaluate(recs, truth, [lspec], norecs="skip")
        got = dict(zip(r2.user_ids.tolist(), pu(r2, lspec).tolist()))
        for u in users:
            assert got[u] == pytest.approx(elliot_user(lists[u][0], lists[u][2], cutoff=k)[0], abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 5, 20])
def test_gauc_at_k_replay_reference(seed, k):
    recs, truth = make_data(seed)
    lists = per_user_lists(recs, truth)
    spec = f"gauc(tied=order)@{k}"
    got = pu(evaluate(recs, truth, [spec], empty="zero"), spec)
    exp = [replay_rocauc(items, rset, k) for items, _, rset in lists.values()]
    np.testing.assert_allclose(got, exp, rtol=0, atol=1e-12)


def test_no_python_loop_scales():
    """A sanity check on size: 20k users × 50 rows evaluate quickly (vectorised)."""
    import time

    rng = np.random.default_rng(0)
    n_u, L = 20000, 50
    recs = {"user_id": np.repeat(np.arange(n_u), L), "item_id": np.tile(np.arange(L), n_u),
            "score": np.round(rng.random(n_u * L), 2)}
    truth = {"user_id": np.repeat(np.arange(n_u), 3), "item_id": rng.integers(0, L, n_u * 3)}
    t0 = time.perf_counter()
    evaluate(recs, truth, ["auc", "gauc", "gauc@10", "lauc@10", "auc(form=users)"], tdup="first", ties="input")
    assert time.perf_counter() - t0 < 20


def test_stacked_judged_rows():
    # inner join: only rows 20 (rating 5, +), 40 (rating 1, −) are judged; 20 above 40 → 1
    truth = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 1.0, 3.0]}
    assert val("auc(rows=judged)", WR, truth, rel=3) == 1.0
    assert val("auc", WR, truth, rel=3) == pytest.approx(2 / 3)  # 20 vs 10, 30, 40


def _data(seed=3):
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(30), 25)
    items = np.concatenate([rng.permutation(60)[:25] for _ in range(30)])
    scores = rng.random(len(users)).round(2)  # some ties
    truth_u = np.repeat(np.arange(30), 6)
    truth_i = np.concatenate([rng.permutation(60)[:6] for _ in range(30)])
    return ({"user_id": users, "item_id": items, "score": scores}, {"user_id": truth_u, "item_id": truth_i})


def test_auc_at_k_is_the_top_k_user_auc():
    recs, truth = _data()
    res = evaluate(recs, truth, ["auc@10", "gauc@10", "auc", "gauc"], ties="input")  # rounded scores: ties straddle k
    assert res["auc@10"] == pytest.approx(res["gauc@10"], abs=1e-15)
    assert res["auc"] != pytest.approx(res["auc@10"])
    assert res.per_user()["auc@10"].to_list() == res.per_user()["gauc@10"].to_list()


def test_replay_rocauc_at_k():
    recs, truth = _data()
    replay = evaluate(recs, truth, ["auc@10"], dialect="replay@0.22")
    ref = evaluate(recs, truth, ["gauc(tied=order,nopos=zero,noneg=one)@10"], ties="item_desc")
    assert replay["auc@10"] == pytest.approx(ref.value("gauc(tied=order,nopos=zero,noneg=one)@10"), abs=1e-15)
    assert "tied:order" in replay.signature("auc@10")


def test_a_library_without_a_top_k_auc_says_so():
    recs, truth = _data()
    with pytest.raises(SpecError, match="has no metric 'auc@k'"):
        evaluate(recs, truth, ["auc@10"], dialect="recbole")
    # but its full-ranking AUC is there
    assert 0 <= evaluate(recs, truth, ["auc"], dialect="recbole")["auc"] <= 1


def test_explain_auc_at_k():
    text = explain("auc@20", "dlrs_eval")
    assert "tied: half -> order" in text
    assert "auc@20|" in text


def _partial(scores: list[float], labels: list[bool], m: float) -> float:
    """ROC vertices at each distinct threshold, trapezoids up to FPR m (interpolated), McClish."""
    P, N = sum(labels), len(labels) - sum(labels)
    pts = [(0.0, 0.0)]
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for s, y in zip(scores, labels) if s >= t and y)
        fp = sum(1 for s, y in zip(scores, labels) if s >= t and not y)
        pts.append((fp / N, tp / P))
    area = 0.0
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x1 <= m:
            area += (x1 - x0) * (y0 + y1) / 2
        elif x0 < m:
            ym = y0 + (y1 - y0) * (m - x0) / (x1 - x0)
            area += (m - x0) * (y0 + ym) / 2
    lo = m * m / 2
    return 0.5 * (1 + (area - lo) / (m - lo))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.7]), st.booleans()), min_size=2, max_size=9),
                min_size=1, max_size=4),
       st.sampled_from([0.1, 0.25, 0.3, 0.5, 0.9, 1.0]))
def test_matches_roc_walk(users, m):
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": []}
    want = []
    for u, rows in enumerate(users):
        for i, (s, y) in enumerate(rows):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(s)
            if y:
                truth["user_id"].append(u)
                truth["item_id"].append(i)
        labels = [y for _, y in rows]
        if not any(labels):
            want.append(None)  # no truth row: not a truth user
        elif all(labels):
            want.append(1.0)  # noneg=one (default)
        else:
            want.append(_partial([s for s, _ in rows], labels, m))
    if not truth["user_id"]:
        return
    spec = f"gauc(maxfpr={m})"
    got = receval.evaluate(recs, truth, [spec])
    vals = [w for w in want if w is not None]
    assert got[spec] == pytest.approx(sum(vals) / len(vals), abs=1e-12)
    if m == 1.0:
        assert got[spec] == pytest.approx(receval.evaluate(recs, truth, ["gauc"])["gauc"], abs=1e-12)


def test_refusals_and_signature():
    recs, truth = {"user_id": [1, 1], "item_id": [1, 2], "score": [0.5, 0.4]}, {"user_id": [1], "item_id": [2]}
    assert "maxfpr:0.5" in receval.evaluate(recs, truth, ["gauc(maxfpr=0.5)"]).signature("gauc(maxfpr=0.5)")
    assert "maxfpr:all" in receval.evaluate(recs, truth, ["gauc"]).signature("gauc")
    with pytest.raises(receval.SpecError, match=r"maxfpr must lie in \(0, 1\]"):
        receval.evaluate(recs, truth, ["gauc(maxfpr=0)"])
    with pytest.raises(receval.SpecError, match="tied=order"):
        receval.evaluate(recs, truth, ["gauc(maxfpr=0.5,tied=order)"])


RECS = {"user_id": [1, 1, 1, 1, 2, 2], "item_id": [10, 20, 30, 40, 10, 30], "rank": [1, 2, 3, 4, 1, 2]}
TRUTH = {"user_id": [1, 1, 1, 2, 2], "item_id": [20, 40, 50, 30, 70]}


def test_goldens():
    res = receval.evaluate(RECS, TRUTH, ["pauc@2", "pap@2", "pauc@1"])
    # user 1: hits at 2 (f=1) and 4 (f=2), |R|=3: (2−1)/(2·3); user 2: hit at 2 (f=1), |R|=2: (2−1)/(2·2)
    assert res["pauc@2"] == pytest.approx((1 / 6 + 1 / 4) / 2, abs=1e-12)
    # pAp@2: ÷ 2·min(2, |R|): user 1 (2−1)/4, user 2 (2−1)/4
    assert res["pap@2"] == pytest.approx((1 / 4 + 1 / 4) / 2, abs=1e-12)
    # k=1: only positives above the first negative: none for either user
    assert res["pauc@1"] == 0.0


def test_insufficient_lists():
    # user 1 has 2 negatives and misses item 50; user 2 has 1 negative and misses 70
    res = receval.evaluate(RECS, TRUTH, ["pauc(insufficient=exclude)@2", "pauc(insufficient=exclude)@1"])
    assert res["pauc(insufficient=exclude)@2"] == pytest.approx(1 / 6, abs=1e-12)  # user 2 left out
    assert res._entry("pauc(insufficient=exclude)@2").users == 1
    assert res._entry("pauc(insufficient=exclude)@1").users == 2
    assert "insuf:exclude" in res.signature("pauc(insufficient=exclude)@2")
    with pytest.raises(receval.DataError, match=r"pauc@2: 1 users have fewer than 2 .*insufficient=exclude"):
        receval.evaluate(RECS, TRUTH, ["pauc(insufficient=error)@2"])
    # a user whose every relevant item is listed is never insufficient: the hit at 2 (f = 1)
    # beats the k − 1 top negatives below it, those the list lacks included: (5 − 1) / (5 · 1)
    got = receval.evaluate(RECS, {"user_id": [1], "item_id": [20]}, ["pap(insufficient=error)@5"])
    assert got["pap(insufficient=error)@5"] == pytest.approx(0.8, abs=1e-12)


def test_rank_gaps_count_as_negatives():
    # ranks 1 and 3: RecTools fills rank 2 as a negative, so the hit at rank 3 has f = 2
    got = receval.evaluate({"user_id": [1, 1], "item_id": [5, 6], "rank": [1, 3]}, {"user_id": [1], "item_id": [6]}, ["pauc@3"])
    assert got["pauc@3"] == pytest.approx((3 - 2) / 3, abs=1e-12)


def _brute(ranked: list[int], relevant: set[int], k: int, top_positives: bool) -> float:
    """Pairs won by listed positives against the k top negatives; a list with fewer than k
    negatives is padded with negatives below its end (RecTools: k − f per positive);
    relevant items missing from the list win no pair."""
    where = {i: p for p, i in enumerate(ranked)}
    negatives = [where[i] for i in ranked if i not in relevant][:k]
    negatives += [len(ranked) + j for j in range(k - len(negatives))]
    pos_ranked = [i for i in ranked if i in relevant]
    positives = pos_ranked[:k] if top_positives else pos_ranked
    wins = sum(1 for p in positives for n in negatives if where[p] < n)
    den = k * (min(k, len(relevant)) if top_positives else len(relevant))
    return wins / den


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.permutations(list(range(8))), st.integers(0, 8), st.sets(st.integers(0, 11), min_size=1)),
                min_size=1, max_size=4), st.integers(1, 6))
def test_matches_pair_count(users, k):
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": []}
    want_pauc, want_pap = [], []
    for u, (perm, length, rel) in enumerate(users):
        ranked = list(perm[:length])
        for p, i in enumerate(ranked):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(float(len(ranked) - p))
        for i in sorted(rel):
            truth["user_id"].append(u)
            truth["item_id"].append(i)
        want_pauc.append(_brute(ranked, rel, k, False))
        want_pap.append(_brute(ranked, rel, k, True))
    if not recs["user_id"]:
        return
    res = receval.evaluate(recs, truth, [f"pauc@{k}", f"pap@{k}"])
    assert res[f"pauc@{k}"] == pytest.approx(sum(want_pauc) / len(users), abs=1e-12)
    assert res[f"pap@{k}"] == pytest.approx(sum(want_pap) / len(users), abs=1e-12)


def test_batched_engine_equals_memory():
    import polars as pl

    specs = ["pauc(insufficient=exclude)@2", "pap(insufficient=exclude)@1", "pauc@3"]
    a = receval.evaluate(RECS, TRUTH, specs)
    b = evaluate_polars(pl.DataFrame(RECS).lazy(), pl.DataFrame(TRUTH).lazy(), specs, n_batches=2)
    assert a.values == b.values
    assert [e.users for e in a.entries] == [e.users for e in b.entries]
