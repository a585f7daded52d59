"""``ties=average``: the expected value over all orderings of equally scored items
(McSherry & Najork, ECIR 2008), for precision, recall, f1, hitrate, mrr, map, dcg, ndcg,
rprecision, rbp and ncrr.

Goldens written as arithmetic, a brute-force check against the mean over every permutation of
every tie group (hypothesis, small data), the bit-identity with ``ties=input`` when no score is
tied, and the refusals (other metrics, rank/input order, no score column).
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import evaluate
from receval.errors import DataError

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True)

# the shared worked example with items 20 and 30 tied at positions 2-3 (20 is relevant)
TIED = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.8, 0.6]}
TRUTH = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 4.0, 3.0]}
L2 = math.log2


def _value(spec, recs=TIED, truth=TRUTH, **kw):
    return evaluate(recs, truth, [spec], **kw).value(spec)


GOLDENS = [
    ("precision(ties=average)@1", 0.0),
    ("precision(ties=average)@2", (1 / 2) / 2),
    ("precision(ties=average)@3", 1 / 3),
    ("precision(ties=average)@4", 2 / 4),
    ("precision(ties=average,denominator=min_k_r)@2", (1 / 2) / 2),
    ("recall(ties=average)@2", (1 / 2) / 3),
    ("recall(ties=average,denominator=listed)@2", (1 / 2) / 2),
    ("f1(ties=average)@2", 2 * (1 / 2) / (2 + 3)),
    ("f1(ties=average)@3", 2 * 1 / (3 + 3)),
    ("dcg(ties=average)@2", (1 / L2(3)) / 2),
    ("dcg(ties=average)@3", (1 / L2(3) + 1 / L2(4)) / 2),
    ("dcg(ties=average)@4", (1 / L2(3) + 1 / L2(4)) / 2 + 1 / L2(5)),
    ("dcg(ties=average,gain=linear)@4", 5 * (1 / L2(3) + 1 / L2(4)) / 2 + 4 / L2(5)),
    ("dcg(ties=average,base=e)@2", (1 / math.log(3)) / 2),
    ("ndcg(ties=average)@2", ((1 / L2(3)) / 2) / (1 + 1 / L2(3))),
    ("ndcg(ties=average)@4", ((1 / L2(3) + 1 / L2(4)) / 2 + 1 / L2(5)) / (1 + 1 / L2(3) + 1 / L2(4))),
    (
        "ndcg(ties=average,gain=exp2)@3",
        (31 * (1 / L2(3) + 1 / L2(4)) / 2) / (31 + 15 / L2(3) + 7 / L2(4)),
    ),
    ("ndcg(ties=average,ideal=none)@4", (1 / L2(3) + 1 / L2(4)) / 2 + 1 / L2(5)),
    # lauc: N' = 2 negatives (10, 30); 20 has A = 1 above it and b = 1 tied with it
    ("lauc(ties=average,tied=half)@2", (1 / 2) * (1 - 1.5 / 2) / 2),  # 20 inside the top 2 w.p. 1/2
    ("lauc(ties=average,tied=half)@4", ((1 - 1.5 / 2) + (1 - 2 / 2)) / 3),
    ("lauc(ties=average,tied=correct)@4", ((1 - 1 / 2) + (1 - 2 / 2)) / 3),
    ("lauc(ties=average,tied=order)@4", (((1 - 1 / 2) + (1 - 2 / 2)) / 2 + 0) / 3),
    # pauc: 20 at 2 (f = 1) or 3 (f = 2), 40 at 4 (f = 2): k = 2 → (1/2)(2 − 1) / (2 · 3)
    ("pauc(ties=average)@2", (1 / 2) * 1 / (2 * 3)),
]


@pytest.mark.parametrize("spec, expected", GOLDENS, ids=[g[0] for g in GOLDENS])
def test_goldens(spec, expected):
    assert _value(spec) == pytest.approx(expected, abs=1e-12)


def test_whole_list_tied():
    # four items in one tie group, 2 relevant: E[H_k] = 2k/4 whatever the input order
    recs = {"user_id": [1] * 4, "item_id": [10, 20, 30, 40], "score": [0.5] * 4}
    truth = {"user_id": [1, 1], "item_id": [40, 10]}
    for k in (1, 2, 3, 4, 6):
        assert _value(f"precision(ties=average)@{k}", recs, truth) == pytest.approx(2 * min(k, 4) / 4 / k)
        disc = sum(1 / L2(t + 1) for t in range(1, min(k, 4) + 1))
        assert _value(f"dcg(ties=average)@{k}", recs, truth) == pytest.approx(2 * disc / 4)


def test_signature_names_the_rule():
    res = evaluate(TIED, TRUTH, ["ndcg(ties=average)@4"])
    sig = res.signature("ndcg(ties=average)@4")
    assert "ties:average" in sig and "order:score" in sig


def test_evaluate_keyword():
    assert evaluate(TIED, TRUTH, ["precision@2"], ties="average").value("precision@2") == 0.25


def test_auto_order_reads_a_rank_column_which_has_no_ties():
    # order=auto: a rank column is the list's order (distinct ranks: nothing to average); the
    # scores' ties are averaged when the list is ordered by score
    recs = dict(TIED, rank=[1, 3, 2, 4])
    assert _value("precision(ties=average)@2", recs) == _value("precision(ties=input)@2", recs) == 0.0
    assert _value("precision(ties=average,order=score)@2", recs) == 0.25


SUPPORTED = [
    "precision@{k}", "precision(denominator=length)@{k}", "precision(denominator=min_k_r)@{k}",
    "recall@{k}", "recall(denominator=min_k_r)@{k}", "recall(denominator=listed)@{k}",
    "f1@{k}", "f1(aggregate=means)@{k}",
    "dcg@{k}", "dcg(gain=linear)@{k}", "dcg(gain=exp2,base=e)@{k}",
    *[f"ndcg(ideal={i})@{{k}}" for i in ("cut", "uncut", "k", "listed", "none")],
    "ndcg(gain=linear)@{k}", "ndcg(gain=exp2,ideal=uncut)@{k}",
]


def test_no_ties_is_bit_identical_to_input():
    recs = {"user_id": [1, 1, 1, 1, 2, 2, 2], "item_id": [10, 20, 30, 40, 1, 2, 3],
            "score": [0.9, 0.8, 0.7, 0.6, 0.3, 0.2, 0.1]}
    truth = {"user_id": [1, 1, 1, 2, 2], "item_id": [20, 40, 50, 3, 9], "rating": [5.0, 4.0, 3.0, 2.0, 1.0]}
    for k in (1, 2, 3, 5):
        specs = [s.format(k=k) for s in SUPPORTED]
        plain = evaluate(recs, truth, specs)
        avg = evaluate(recs, truth, specs, ties="average")
        for s in specs:
            assert avg.value(s) == plain.value(s), s


# ------------------------------------------------------------------------------------------
# brute force: the mean over every ordering of every tie group


def _gain(r: float, kind: str) -> float:
    return {"binary": 1.0, "linear": r, "exp2": 2.0**r - 1.0}[kind]


def _per_order(order, rel, k, metric, opt, n_listed):
    """One user's value for one total order (a list of items), from the definitions."""
    top = order[:k]
    hits = sum(1 for i in top if i in rel)
    n_r = len(rel)
    if metric == "precision":
        den = {"k": k, "length": min(k, len(order)), "min_k_r": min(k, n_r)}[opt]
        return hits / den if den else 0.0
    if metric == "recall":
        den = {"r": n_r, "min_k_r": min(k, n_r), "listed": n_listed}[opt]
        return hits / den if den else 0.0
    if metric == "f1":
        return 2 * hits / (k + n_r)
    if metric == "hitrate":
        return float(hits) if opt == "hits" else float(hits > 0)
    if metric in ("map", "mar"):
        d, ind = opt if isinstance(opt, tuple) else (opt, "yes" if metric == "map" else "no")
        ap, h = 0.0, 0
        for t in range(k):  # positions past the list keep H constant
            is_rel = t < len(top) and top[t] in rel
            h += is_rel
            at = h / (t + 1) if metric == "map" else h / n_r
            ap += at if (ind == "no" or is_rel) else 0.0
        ell = len(order)
        den = {"min_k_r": min(k, n_r), "r": n_r, "k": k, "length": min(k, ell), "min_length_r": min(k, ell, n_r),
               "cumulative_min": sum(min(i, n_r) for i in range(1, k + 1)), "hits": hits}[d]
        return ap / den if den else 0.0
    if metric == "rprecision":
        r = n_r if opt == "truth" else n_listed
        return sum(1 for i in order[:r] if i in rel) / r if r else 0.0
    if metric == "rbp":
        pers, norm, gain = opt
        s = sum((rel[i] if gain == "rating" else 1.0) * pers**t for t, i in enumerate(top) if i in rel)
        if norm == "no":
            return (1 - pers) * s
        m = min(n_r, k) if norm == "cut" else min(n_r, len(top))
        ideal = sum(pers**t for t in range(m))
        return s / ideal if ideal else 0.0
    if metric == "bpref":
        judged_nonrel, n_r = opt
        above, total = 0, 0.0
        den = min(n_r, len(judged_nonrel))
        for i in top:
            if i in rel:
                total += 1.0 if above == 0 else 1.0 - min(above, n_r) / den
            elif i in judged_nonrel:
                above += 1
        return total / n_r
    if metric == "lauc":  # over the whole list: a_p negatives above, N' = ℓ − P (negatives=exact)
        tied, = opt
        negs = [i for i in order if i not in rel]
        pos_list = [i for i in order if i in rel]
        nprime = len(negs)
        total = 0.0
        for t, i in enumerate(order):
            if i not in rel or t >= k:
                continue
            a = sum(1 for x in order[:t] if x not in rel)
            total += 1.0 - a / nprime if nprime else 1.0
        del pos_list
        return total / min(k, n_r)
    if metric in ("pauc", "pap"):
        total, f, j = 0.0, 0, 0
        for i in order:  # the whole list: k counts negatives, not positions
            if i in rel:
                j += 1
                if f < k and (metric == "pauc" or j <= k):
                    total += k - f
            else:
                f += 1
        return total / (k * (n_r if metric == "pauc" else min(k, n_r)))
    if metric == "err":
        val, reach = 0.0, 1.0
        for t, i in enumerate(top):
            if i in rel:
                stop = 0.5 if opt is None else (2.0 ** rel[i] - 1) / 2.0**opt
                val += reach * stop / (t + 1)
                reach *= 1 - stop
        return val
    if metric == "ncrr":
        s = sum(1 / (t + 1) for t, i in enumerate(top) if i in rel)
        ideal = sum(1 / j for j in range(1, min(k, n_r) + 1))
        return s / ideal if ideal else 0.0
    if metric == "mrr":
        ranks = [t + 1 for t, i in enumerate(top) if i in rel]
        if opt == "all":
            return sum(1 / t for t in ranks)
        return 1 / ranks[0] if ranks else 0.0
    gain, ideal = opt
    dcg = sum(_gain(rel[i], gain) / L2(t + 2) for t, i in enumerate(top) if i in rel)
    if metric == "dcg" or ideal == "none":
        return dcg
    gains = sorted((_gain(r, gain) for r in rel.values()), reverse=True)
    if ideal == "cut":
        idcg = sum(g / L2(t + 2) for t, g in enumerate(gains[:k]))
    elif ideal == "uncut":
        idcg = sum(g / L2(t + 2) for t, g in enumerate(gains))
    elif ideal == "k":
        idcg = gains[0] * sum(1 / L2(t + 2) for t in range(k))
    else:  # listed
        listed = sorted((_gain(rel[i], gain) for i in order if i in rel), reverse=True)
        idcg = sum(g / L2(t + 2) for t, g in enumerate(listed[:k]))
    return dcg / idcg if idcg else 0.0


def _orderings(rows):
    """Every total order of ``rows`` [(item, score)] consistent with score descending."""
    groups = [
        [i for i, _ in grp]
        for _, grp in itertools.groupby(sorted(rows, key=lambda r: -r[1]), key=lambda r: r[1])
    ]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for g in combo for i in g]


CASES = [
    ("precision", "k", "precision@{k}"), ("precision", "length", "precision(denominator=length)@{k}"),
    ("precision", "min_k_r", "precision(denominator=min_k_r)@{k}"),
    ("recall", "r", "recall@{k}"), ("recall", "min_k_r", "recall(denominator=min_k_r)@{k}"),
    ("recall", "listed", "recall(denominator=listed)@{k}"),
    ("f1", None, "f1@{k}"),
    ("hitrate", "any", "hitrate@{k}"), ("hitrate", "hits", "hitrate(count=hits)@{k}"),
    ("mrr", "first", "mrr@{k}"), ("mrr", "all", "mrr(hits=all)@{k}"),
    *[("map", d, f"map(denominator={d})@{{k}}") for d in ("min_k_r", "r", "k", "length", "min_length_r", "cumulative_min", "hits")],
    *[("map", (d, "no"), f"map(indicator=no,denominator={d})@{{k}}") for d in ("min_k_r", "k", "hits", "length")],
    *[("mar", (d, "no"), f"mar(denominator={d})@{{k}}") for d in ("k", "r", "hits", "min_length_r")],
    *[("mar", (d, "yes"), f"mar(indicator=yes,denominator={d})@{{k}}") for d in ("min_k_r", "hits", "cumulative_min")],
    ("dcg", ("binary", None), "dcg@{k}"), ("dcg", ("linear", None), "dcg(gain=linear)@{k}"),
    ("dcg", ("exp2", None), "dcg(gain=exp2)@{k}"),
    *[("ndcg", ("linear", i), f"ndcg(gain=linear,ideal={i})@{{k}}") for i in ("cut", "uncut", "k", "listed", "none")],
    ("ndcg", ("binary", "cut"), "ndcg@{k}"), ("ndcg", ("exp2", "cut"), "ndcg(gain=exp2)@{k}"),
    ("rprecision", "truth", "rprecision"), ("rprecision", "listed", "rprecision(r=listed)"),
    ("rbp", (0.8, "no", "binary"), "rbp@{k}"), ("rbp", (0.5, "no", "rating"), "rbp(persistence=0.5,gain=rating)@{k}"),
    ("rbp", (0.8, "listed", "binary"), "rbp(normalize=listed)@{k}"), ("rbp", (0.8, "cut", "binary"), "rbp(normalize=cut)@{k}"),
    ("ncrr", None, "ncrr@{k}"),
    ("err", None, "err@{k}"), ("err", 5.0, "err(grade=rating,gmax=5)@{k}"),
    ("bpref", None, "bpref@{k}"),
    ("pauc", None, "pauc@{k}"), ("pap", None, "pap@{k}"),
    ("lauc", ("order",), "lauc(tied=order)@{k}"),
]


@st.composite
def tied_data(draw):
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": [], "rating": []}
    users = {}
    for u in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 7))
        items = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n, unique=True))
        scores = draw(st.lists(st.sampled_from([0.1, 0.2, 0.3]), min_size=n, max_size=n))
        for s in set(scores):  # at most 5 items per tie group (5! orderings)
            if scores.count(s) > 5:
                scores[scores.index(s)] = 0.4 + s
        m = draw(st.integers(1, 4))
        titems = draw(st.lists(st.integers(0, 11), min_size=m, max_size=m, unique=True))
        ratings = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0]), min_size=m, max_size=m))
        for i, s in zip(items, scores):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(s)
        for i, r in zip(titems, ratings):
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(r)
        users[u] = (list(zip(items, scores)), dict(zip(titems, ratings)))
    if not recs["user_id"]:
        return None
    return recs, truth, users


def _averaged_users(data, rel) -> bool:
    """Whether the drawn data has a user with a relevant item to average."""
    return data is not None and any(rel is None or r >= rel for _, ratings in data[2].values() for r in ratings.values())


def _check_against_orderings(data, k, rel, cases, per_order, **side):
    """Each case's value under ties=average equals the mean over users (with a relevant item)
    of the mean over every ordering of ``per_order(order, relevant, ratings, rows, metric, opt)``."""
    recs, truth, users = data
    specs = [c[2].format(k=k) for c in cases]
    res = evaluate(recs, truth, specs, ties="average", rel=rel, **side)
    for metric, opt, spec in cases:
        per_user = []
        for rows, ratings in users.values():
            relevant = {i: r for i, r in ratings.items() if rel is None or r >= rel}
            if not relevant:
                continue  # empty=skip
            vals = [per_order(o, relevant, ratings, rows, metric, opt) for o in _orderings(rows)]
            per_user.append(sum(vals) / len(vals))
        assert res.value(spec.format(k=k)) == pytest.approx(sum(per_user) / len(per_user), abs=1e-12), spec


@SETTINGS
@given(tied_data(), st.sampled_from([1, 2, 3, 5, 8]), st.sampled_from([None, 3.0]))
def test_equals_mean_over_all_orderings(data, k, rel):
    if not _averaged_users(data, rel):
        return  # no data, or no user to average (receval refuses: tested elsewhere)

    def one(order, relevant, ratings, rows, metric, opt):
        n_listed = sum(1 for i, _ in rows if i in relevant)
        if metric == "bpref":
            opt = ({i for i in ratings if i not in relevant}, len(relevant))
        return _per_order(order, relevant, k, metric, opt, n_listed)

    _check_against_orderings(data, k, rel, CASES, one)


@SETTINGS
@given(tied_data(), st.sampled_from([1, 3, 5]))
def test_f1_means_combines_expected_precision_and_recall(data, k):
    if data is None:
        return
    recs, truth, _ = data
    specs = [f"f1(aggregate=means)@{k}", f"precision@{k}", f"recall@{k}"]
    res = evaluate(recs, truth, specs, ties="average")
    p, r = res.value(specs[1]), res.value(specs[2])
    assert res.value(specs[0]) == pytest.approx(2 * p * r / (p + r) if p + r else 0.0, abs=1e-12)


# ------------------------------------------------------------------------------------------
# refusals

REFUSED = ["ndcg(ideal=hits)@3", "ab_ndcg@3"]  # mad(of=ndcg): its own message, tested below


@pytest.mark.parametrize("spec", REFUSED)
def test_refuses_other_metrics_on_data_with_ties_in_the_top_k(spec):
    """No tie-averaged value: refused where a tie reaches into the top k (TIED: 20 and 30 tie at
    positions 2-3), computed where the scores settle the order (then every tie rule agrees)."""
    head, _, tail = spec.partition("@")
    name, paren, inner = head.partition("(")
    tied_spec = f"{name}(ties=average,{inner}" if paren else f"{name}(ties=average)"
    tied_spec += f"@{tail}" if tail else ""
    side = {"categories": {"item_id": [10, 20, 30, 40, 50], "category": ["a", "b", "a", "b", "c"]}} if name == "ab_ndcg" else {}
    for call in (lambda: evaluate(TIED, TRUTH, [tied_spec], **side), lambda: evaluate(TIED, TRUTH, [spec], ties="average", **side),
                 lambda: evaluate(TIED, TRUTH, [spec], **side)):  # the default
        with pytest.raises(DataError) as exc:
            call()
        msg = str(exc.value)
        assert "\n" not in msg
        assert f"{head}@3 has no tie-averaged value; 1 user has ties within the top 3" in msg
        assert msg.startswith("pass ties=item (or item_desc, input") and len(msg) <= 200
    settled = dict(TIED, score=[0.9, 0.8, 0.7, 0.6])
    for k in (1, 3):
        s = f"{head}@{k}"
        assert evaluate(settled, TRUTH, [s], **side).value(s) == evaluate(settled, TRUTH, [s], ties="input", **side).value(s)
    # the tie starts at position 2: k = 1 is settled
    assert _value(f"{head}@1", TIED, **side) == _value(f"{head}@1", TIED, ties="item", **side)


def test_refused_alongside_a_supported_metric():
    with pytest.raises(DataError, match=r"ndcg\(ideal=hits\)@3 has no tie-averaged value"):
        evaluate(TIED, TRUTH, ["map@3", "ndcg(ideal=hits)@3"], ties="average")


@pytest.mark.parametrize("order", ["rank", "input"])
def test_rank_and_input_orders_have_no_tied_scores(order):
    """A list ordered by a rank column or by the row order has no ties: ties=average changes nothing."""
    recs = dict(TIED, rank=[1, 2, 3, 4])
    for spec in ("ndcg@3", "map@3", "ab_ndcg@3", "ndcg(ideal=hits)@2"):
        side = {"categories": {"item_id": [10, 20, 30, 40, 50], "category": ["a", "b", "a", "b", "c"]}}
        assert _value(spec, recs, ties="average", order=order, **side) == _value(spec, recs, ties="input", order=order, **side)


def test_needs_a_score_column():
    recs = {k: v for k, v in TIED.items() if k != "score"}
    with pytest.raises(DataError, match="score column"):
        evaluate(recs, TRUTH, ["ndcg@3"], ties="average")


# ------------------------------------------------------------------------------------------
# α-nDCG: the expected α-DCG over every ordering, over the (order-free) greedy ideal


def _alpha_dcg(order, rel, cats, k, q):
    seen: dict[str, int] = {}
    total = 0.0
    for t, i in enumerate(order[:k]):
        if i in rel:
            total += sum(q ** seen.get(c, 0) for c in cats.get(i, ())) / L2(t + 2)
            for c in cats.get(i, ()):
                seen[c] = seen.get(c, 0) + 1
    return total


def _alpha_ideal(rel, cats, k, q):
    cand = [i for i in rel if cats.get(i)]
    seen: dict[str, int] = {}
    total = 0.0
    for t in range(min(k, len(cand))):
        gains = [(sum(q ** seen.get(c, 0) for c in cats[i]), i) for i in cand]
        g, best = max(gains)  # the largest gain, ties to the largest item id (ndeval)
        total += g / L2(t + 2)
        cand.remove(best)
        for c in cats[best]:
            seen[c] = seen.get(c, 0) + 1
    return total


@SETTINGS
@given(tied_data(), st.sampled_from([1, 2, 3, 5, 8]), st.sampled_from([None, 3.0]), st.sampled_from([0.5, 0.2]),
       st.lists(st.sets(st.sampled_from("abc"), max_size=2), min_size=12, max_size=12))
def test_alpha_ndcg_equals_mean_over_all_orderings(data, k, rel, alpha, item_cats):
    if not _averaged_users(data, rel):
        return  # no data, or no user to average (receval refuses: tested elsewhere)
    recs, truth, users = data
    cats = {i: sorted(c) for i, c in enumerate(item_cats) if c}
    if not cats:
        return
    side = {"item_id": [i for i, cs in cats.items() for _ in cs], "category": [c for cs in cats.values() for c in cs]}
    spec = f"alpha_ndcg(alpha={alpha})@{k}"
    got = evaluate(recs, truth, [spec], ties="average", rel=rel, categories=side).value(spec)
    q = 1 - alpha
    per_user = []
    for rows, ratings in users.values():
        relevant = {i: r for i, r in ratings.items() if rel is None or r >= rel}
        if not relevant:
            continue
        ideal = _alpha_ideal(relevant, cats, k, q)
        vals = [_alpha_dcg(o, relevant, cats, k, q) for o in _orderings(rows)]
        per_user.append(sum(vals) / len(vals) / ideal if ideal else 0.0)
    assert got == pytest.approx(sum(per_user) / len(per_user), abs=1e-12)


# ------------------------------------------------------------------------------------------
# AUC over the whole list: tied=half is the expectation over the orderings of tied scores


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("spec", ["gauc", "auc(form=users)", "auc(form=positives)", "gauc(negatives=plus_one,denominator=r)"])
def test_auc_equals_mean_over_all_orderings(seed, spec):
    import random

    rnd = random.Random(seed)
    recs, truth = {"user_id": [], "item_id": [], "score": []}, {"user_id": [], "item_id": [], "rating": []}
    users = {}
    for u in range(3):
        items = rnd.sample(range(10), rnd.randint(2, 6))
        scores = [rnd.choice([0.1, 0.2, 0.3]) for _ in items]
        rel = rnd.sample(range(12), rnd.randint(1, 4))
        recs["user_id"] += [u] * len(items)
        recs["item_id"] += items
        recs["score"] += scores
        truth["user_id"] += [u] * len(rel)
        truth["item_id"] += rel
        truth["rating"] += [1.0] * len(rel)
        users[u] = (list(zip(items, scores)), rel)
    name, paren, inner = spec.partition("(")
    tied = f"{name}(tied=order,{inner}" if paren else f"{name}(tied=order)"
    # the expectation: every combination of the users' orderings, each scored with tied=order
    per_combo = []
    for combo in itertools.product(*(list(_orderings(rows)) for rows, _ in users.values())):
        r2 = {"user_id": [], "item_id": [], "score": []}
        for u, order in enumerate(combo):
            r2["user_id"] += [u] * len(order)
            r2["item_id"] += order
            r2["score"] += [float(len(order) - t) for t in range(len(order))]
        try:
            per_combo.append(evaluate(r2, truth, [tied]).value(tied))
        except DataError:
            pytest.skip("a user set this AUC form refuses")
    try:
        got = evaluate(recs, truth, [spec], ties="average").value(spec)
    except DataError:
        pytest.skip("refused on this data")
    assert got == pytest.approx(sum(per_combo) / len(per_combo), abs=1e-12)


@pytest.mark.parametrize("spec", ["gauc(tied=correct)", "auc(tied=correct)", "gauc(maxfpr=0.5)"])
def test_auc_variants_that_read_scores_are_order_free(spec):
    """tied=correct and the ROC cut at maxfpr read the scores, not the positions: every
    ordering of the ties gives them the same value, which ties=average therefore keeps."""
    swapped = dict(TIED, item_id=[10, 30, 20, 40])
    got = _value(spec, TIED, ties="average")
    assert got == _value(spec, TIED, ties="input") == _value(spec, swapped, ties="input")


@pytest.mark.parametrize("spec", ["gauc(tied=order)@3", "auc(tied=order)@3", "gauc(tied=order)"])
def test_auc_tied_order_reads_positions_and_is_refused_on_ties(spec):
    with pytest.raises(DataError, match="has no tie-averaged value"):
        evaluate(TIED, TRUTH, [spec], ties="average")
    settled = dict(TIED, score=[0.9, 0.8, 0.7, 0.6])
    assert _value(spec, settled, ties="average") == _value(spec, settled, ties="input")


@pytest.mark.parametrize("spec", ["auc@{k}", "gauc@{k}", "gauc(negatives=plus_one,denominator=r)@{k}"])
def test_auc_at_k_when_the_ties_do_not_cross_k(spec):
    # TIED: 20 and 30 share positions 2-3; at k = 3 or 4 both orders give the same top-k rows
    swapped = dict(TIED, item_id=[10, 30, 20, 40])
    for k in (1, 3, 4):
        s = spec.format(k=k)
        ordered = s.replace("@", "(tied=order)@") if "(" not in s else s.replace(")", ",tied=order)")
        mean = (_value(ordered, TIED, ties="input") + _value(ordered, swapped, ties="input")) / 2
        assert evaluate(TIED, TRUTH, [s], ties="average").value(s) == pytest.approx(mean, abs=1e-12)
    with pytest.raises(DataError, match="across position 2"):
        evaluate(TIED, TRUTH, [spec.format(k=2)], ties="average")


# ------------------------------------------------------------------------------------------
# metrics of the top-k *set*: defined under ties=average when the scores settle that set

SET_RECS = {  # user 1: 20 and 30 tie inside the top 3; user 2: 40 and 50 tie at 2-3
    "user_id": [1, 1, 1, 1, 2, 2, 2, 2],
    "item_id": [10, 20, 30, 40, 10, 40, 50, 60],
    "score": [4.5, 4.0, 4.0, 3.0, 4.0, 3.5, 3.5, 2.0],
}
SET_TRUTH = {"user_id": [1, 1, 1, 2, 2], "item_id": [20, 40, 10, 40, 60], "rating": [5.0, 3.0, 4.0, 4.0, 2.0]}
SET_SIDE = {
    "categories": {"item_id": [10, 20, 30, 40, 50, 60, 70], "category": ["a", "b", "a", "c", "b", "a", "c"]},
    "train": {"user_id": [1, 2, 5, 5, 5], "item_id": [10, 10, 20, 30, 70]},
    "catalog": [10, 20, 30, 40, 50, 60, 70, 80],
    "baseline": {"user_id": [1, 1, 2], "item_id": [20, 80, 10], "score": [2.0, 1.0, 1.0]},
    "item_groups": {"item_id": [10, 20, 30, 40, 50, 60, 70, 80], "group": ["p", "q", "p", "q", "p", "q", "p", "q"]},
    "user_groups": {"user_id": [1, 2], "group": ["x", "y"]},
}


def _set_metrics():
    from receval.metrics import all_metrics

    return sorted(m.name for m in all_metrics() if m.ties == "topk_set")


@pytest.mark.parametrize("name", _set_metrics())
def test_topk_set_metrics_are_defined_when_the_ties_do_not_cross_k(name):
    spec = {"bias_disparity": "bias_disparity(icat=p)@3", "unrepeated": "unrepeated(dup=keep)@3"}.get(name, f"{name}@3")
    # at k = 3 no tie group straddles the cut: every ordering has the same top-3 sets
    avg = evaluate(SET_RECS, SET_TRUTH, [spec], ties="average", **SET_SIDE)
    plain = evaluate(SET_RECS, SET_TRUTH, [spec], **SET_SIDE)
    swapped = dict(SET_RECS, item_id=[10, 30, 20, 40, 10, 50, 40, 60])  # the other order of each tie
    other = evaluate(swapped, SET_TRUTH, [spec], **SET_SIDE)
    assert plain.value(spec) == pytest.approx(other.value(spec), abs=1e-12, nan_ok=True)
    assert avg.value(spec) == pytest.approx(plain.value(spec), abs=1e-12, nan_ok=True)
    assert "ties:average" in avg.signature(spec)
    # at k = 2 user 2's tie (positions 2-3) straddles the cut: refused, naming the fix
    spec2 = spec.replace("@3", "@2")
    with pytest.raises(DataError) as exc:
        evaluate(SET_RECS, SET_TRUTH, [spec2], ties="average", **SET_SIDE)
    msg = str(exc.value)
    assert "\n" not in msg and "2 users have" in msg and "position 2" in msg and msg.startswith("pass ties=item (or item_desc, input")


def test_position_reading_set_metrics_stay_refused():
    for spec in ("ab_ndcg@3",):  # reads the positions: refused where a tie reaches into the top k
        with pytest.raises(DataError, match=r"ab_ndcg@3 has no tie-averaged value; 2 users have ties within the top 3"):
            evaluate(SET_RECS, SET_TRUTH, [spec], ties="average", **SET_SIDE)


# ------------------------------------------------------------------------------------------
# EPC, EFD (rank-discounted) and serendipity: each row's position term averaged over its slots

TRAIN = {"user_id": [100, 100, 101, 101, 102, 103, 103], "item_id": [0, 1, 0, 2, 0, 3, 1]}
CATALOG = list(range(12))


def _pop_per_order(order, rel, k, metric, opt):
    users = {}
    for u, i in zip(TRAIN["user_id"], TRAIN["item_id"]):
        users.setdefault(i, set()).add(u)
    n_train = len(set(TRAIN["user_id"]))
    top = order[:k]
    if metric in ("epc", "efd"):
        disc_kind, relevance = opt
        num = den = 0.0
        for t, i in enumerate(top):
            disc = 1 / L2(t + 2) if disc_kind == "log" else 1.0
            phi = len(users.get(i, ()))
            nov = 1 - phi / n_train if metric == "epc" else -math.log2(max(phi, 1) / n_train)
            num += disc * nov * (1.0 if relevance == "any" or i in rel else 0.0)
            den += disc
        return num / den if den else 0.0
    counts = {}
    for i in TRAIN["item_id"]:
        counts[i] = counts.get(i, 0) + 1
    distinct = sorted(set(counts.values()), reverse=True)
    n = len(CATALOG)
    total = 0.0
    for t, i in enumerate(top):
        pu = (n + 1 - (distinct.index(counts[i]) + 1)) / n if i in counts else 0.0
        total += max((n + 1 - (t + 1)) / n - pu, 0.0) * (i in rel)
    d = len(top) if opt == "length" else k
    return total / d if d else 0.0


POP_CASES = [
    ("epc", ("log", "hits"), "epc@{k}"), ("epc", ("none", "any"), "epc(discount=none,relevance=any)@{k}"),
    ("efd", ("log", "hits"), "efd@{k}"), ("efd", ("log", "any"), "efd(relevance=any)@{k}"),
    ("serendipity", "length", "serendipity@{k}"), ("serendipity", "k", "serendipity(denominator=k)@{k}"),
]


@SETTINGS
@given(tied_data(), st.sampled_from([1, 2, 3, 5, 8]), st.sampled_from([None, 3.0]))
def test_position_terms_equal_mean_over_all_orderings(data, k, rel):
    if not _averaged_users(data, rel):
        return  # no data, or no user to average (receval refuses: tested elsewhere)
    _check_against_orderings(data, k, rel, POP_CASES, lambda o, relevant, _r, _rows, metric, opt: _pop_per_order(o, relevant, k, metric, opt),
                             train=TRAIN, catalog=CATALOG)


# ------------------------------------------------------------------------------------------
# the metrics linear in the top-k set (each row weighted by its chance to be in the top k),
# against the slow reference of receval/conformance/reference/pop.py evaluated on every ordering

BASE = {"user_id": [0, 0, 0, 1, 1, 2], "item_id": [1, 4, 7, 0, 2, 3], "score": [3.0, 2.0, 1.0, 2.0, 1.0, 1.0]}
LINEAR = [("arp", {}), ("arp", {"count": "users", "denominator": "k"}), ("aplt", {}), ("aplt", {"split": "items", "cut": 0.5}),
          ("aclt", {"split": "count", "cut": 2.0}), ("surprisal", {}), ("surprisal", {"denominator": "k"}),
          ("unexpectedness", {}), ("unseen", {}), ("novelty", {}), ("filled", {}), ("filled", {"form": "share"}), ("covered", {}),
          ("intersection", {}), ("intersection", {"refk": 2})]


def _linear_ref(metric, opts, rows, ratings, u, k, rel):
    from receval.conformance.reference.pop import reference_pop
    from receval.conformance.reference.ranking import RefError

    truth = {"user_id": [u] * len(ratings), "item_id": list(ratings), "rating": list(ratings.values())}
    vals = []
    for order in _orderings(rows):
        recs = {"user_id": [u] * len(order), "item_id": order, "score": [float(len(order) - t) for t in range(len(order))]}
        if not order:
            recs = {"user_id": [], "item_id": [], "score": []}
        ctx = {"rel": rel} if rel is not None else {}
        if metric in ("novelty", "filled", "covered", "intersection"):
            top = order[:k]
            if metric == "intersection":
                rows_b = sorted((j for j in range(len(BASE["user_id"])) if BASE["user_id"][j] == u), key=lambda j: -BASE["score"][j])
                b = [BASE["item_id"][j] for j in rows_b][: int(opts.get("refk", k))]
                vals.append(sum(1 for i in top if i in b) / len(top) if top else 0.0)
                continue
            if metric == "filled":
                vals.append(float(len(order) >= k) if opts.get("form") != "share" else min(len(order), k) / k)
            elif metric == "covered":
                vals.append(float(len(top) > 0))
            else:
                users_of = {}
                for tu, i in zip(TRAIN["user_id"], TRAIN["item_id"]):
                    users_of.setdefault(i, set()).add(tu)
                n_train = len(set(TRAIN["user_id"]))
                vals.append(sum(-math.log2(max(len(users_of.get(i, ())), 1) / n_train) for i in top) / len(top) if top else 0.0)
            continue
        if metric == "unseen":
            seen = {i for tu, i in zip(TRAIN["user_id"], TRAIN["item_id"]) if tu == u}
            top = order[:k]
            vals.append(1 - sum(1 for i in top if i in seen) / len(top) if top else 0.0)
            continue
        try:
            per_user, _ = reference_pop(recs, truth, metric, k, {**opts, **ctx}, train=TRAIN, catalog=CATALOG, baseline=BASE)
        except RefError:
            return None
        vals.append(per_user[u])
    return sum(vals) / len(vals)


@SETTINGS
@given(tied_data(), st.sampled_from([1, 2, 3, 5]), st.sampled_from([None, 3.0]))
def test_linear_topk_metrics_equal_mean_over_all_orderings(data, k, rel):
    if not _averaged_users(data, rel):
        return  # no data, or no user to average (receval refuses: tested elsewhere)
    recs, truth, users = data
    for metric, opts in LINEAR:
        inner = ",".join(f"{a}={v:g}" if isinstance(v, float) else f"{a}={v}" for a, v in opts.items())
        spec = f"{metric}({inner})@{k}" if inner else f"{metric}@{k}"
        got = evaluate(recs, truth, [spec], ties="average", rel=rel, train=TRAIN, catalog=CATALOG, baseline=BASE).value(spec)
        per_user = []
        for u, (rows, ratings) in users.items():
            if metric not in ("filled", "covered", "intersection") and not any(rel is None or r >= rel for r in ratings.values()):
                continue  # empty=skip (the list-quality metrics read every truth user)
            v = _linear_ref(metric, opts, rows, ratings, u, k, rel)
            assert v is not None
            per_user.append(v)
        assert got == pytest.approx(sum(per_user) / len(per_user), abs=1e-12), spec


def test_mad_of_score_is_order_free_and_of_ndcg_refused():
    spec = "mad(of=score)@2"  # k = 2 splits both users' ties: the tied items share their score
    avg = evaluate(SET_RECS, SET_TRUTH, [spec], ties="average", **SET_SIDE).value(spec)
    swapped = dict(SET_RECS, item_id=[10, 30, 20, 40, 10, 50, 40, 60])
    assert avg == evaluate(SET_RECS, SET_TRUTH, [spec], **SET_SIDE).value(spec) == evaluate(swapped, SET_TRUTH, [spec], **SET_SIDE).value(spec)
    with pytest.raises(DataError, match=r"mad@2 has no tie-averaged value; 2 users have ties within the top 2"):
        evaluate(SET_RECS, SET_TRUTH, ["mad@2"], ties="average", **SET_SIDE)


def test_novelty_skip_needs_settled_top_k():
    # unknown=skip: the known items of the top k (its denominator) depend on the order of a tie
    with pytest.raises(DataError, match="across position 2"):
        evaluate(SET_RECS, SET_TRUTH, ["novelty(unknown=skip)@2"], ties="average", **SET_SIDE)
    settled = evaluate(SET_RECS, SET_TRUTH, ["novelty(unknown=skip)@3"], ties="average", **SET_SIDE)
    assert settled.value("novelty(unknown=skip)@3") == evaluate(SET_RECS, SET_TRUTH, ["novelty(unknown=skip)@3"], **SET_SIDE).value(
        "novelty(unknown=skip)@3")
