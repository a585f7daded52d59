"""Hand-checkable conformance cases for the metrics the slow reference does not cover.

Each case is a few rows whose value is worked out in ``why``; ``tests/conformance_build.py``
keeps a case (``source: "arithmetic"``) only where receval gives exactly this arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from .generate import SCENARIOS


@dataclass(frozen=True)
class Arithmetic:
    name: str
    metric: str
    spec: str
    k: int | None
    recs: list[tuple[Any, ...]]  # (user, item, score, rank)
    truth: list[tuple[Any, ...]]  # (user, item, rating)
    mean: float
    per_user: dict[str, float]
    why: str
    side: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    tags: tuple[str, ...] = ("arithmetic",)
    dialect: str | None = None
    scenario: str | None = None  # a scenario of generate.SCENARIOS whose rows these are (a worked case), else its own


_LISTS = [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u1", "i3", 0.7, 3), ("u2", "i1", 0.9, 1), ("u2", "i4", 0.5, 2)]
_TRUTH = [("u1", "i1", 1.0), ("u2", "i4", 1.0)]
_CATALOG = {"catalog": [("i1",), ("i2",), ("i3",), ("i4",), ("i5",)]}
_TOP2 = "the top-2 lists are u1: i1, i2 and u2: i1, i4, so i1 is recommended twice, i2 and i4 once"
_PRED = [("u1", "i1", 4.0, 1), ("u1", "i2", 2.0, 2), ("u2", "i3", 3.0, 1)]
_RATED = [("u1", "i1", 5.0), ("u1", "i2", 1.0), ("u2", "i3", 3.0)]
_AUC_RECS = [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u1", "i3", 0.7, 3), ("u1", "i4", 0.6, 4),
             ("u2", "i5", 0.9, 1), ("u2", "i6", 0.5, 2)]
_AUC_TRUTH = [("u1", "i2", 1.0), ("u2", "i5", 1.0)]
_NOV_TRAIN = {"train": [("t1", "i1"), ("t1", "i2"), ("t2", "i1"), ("t3", "i1")]}
_PAUC_RECS = [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u1", "i3", 0.7, 3), ("u1", "i4", 0.6, 4),
              ("u2", "i5", 0.9, 1), ("u2", "i6", 0.8, 2), ("u2", "i7", 0.7, 3),
              ("u3", "i1", 0.9, 1), ("u3", "i4", 0.8, 2), ("u3", "i2", 0.7, 3), ("u3", "i3", 0.6, 4)]
_PAUC_TRUTH = [("u1", "i2", 1.0), ("u1", "i9", 1.0), ("u2", "i5", 1.0), ("u3", "i1", 1.0), ("u3", "i2", 1.0),
               ("u3", "i3", 1.0)]
_PAUC_WHY = ("k=2 negatives; u1 ranks n p n n with a second relevant item missing from the list, u2 p n n, u3 p n p p "
             "(f = negatives above a hit): ")
_GROUPS = {"item_groups": [("i1", "g1"), ("i3", "g1"), ("i2", "g2"), ("i4", "g2")]}
_BD_RECS = [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u2", "i3", 0.9, 1), ("u2", "i1", 0.8, 2)]
_BD_TRUTH = [("u1", "i1", 1.0), ("u2", "i3", 1.0)]
_BD_TRAIN = {"train": [("t1", "i1"), ("t1", "i2"), ("t2", "i2"), ("t3", "i3")]}
_CATS = {"categories": [("i1", "a"), ("i2", "a"), ("i2", "b"), ("i3", "b"), ("i4", "c")]}

_AB_RECS = [("u1", "i2", 0.9, 1), ("u1", "i1", 0.8, 2)]
_AB_TRUTH = [("u1", "i1", 5.0)]
_AB_CATS = {"categories": [("i1", "a"), ("i2", "a")]}
_AB_WHY = ("one aspect a (gamma_a = 1), r_max = 5; i2 unrated with a: P = alpha = 0.02, G[1] = 0.02; i1 rated 5: "
           "P = beta · 5/5, one unrated item with a above: G[2] = P · 0.98; the ideal (rated items only) is i1 alone, "
           "G = P: ")

ARITHMETIC: list[Arithmetic] = [
    Arithmetic("ab-ndcg", "ab_ndcg", "ab_ndcg@2", 2, _AB_RECS, _AB_TRUTH, (0.02 + 0.2 * 0.98 / math.log2(3)) / 0.2,
               {"u1": (0.02 + 0.2 * 0.98 / math.log2(3)) / 0.2},
               _AB_WHY + "beta 0.2: (0.02 + 0.196/log2 3) / 0.2", _AB_CATS),
    Arithmetic("ab-ndcg-beta", "ab_ndcg", "ab_ndcg(beta=0.5)@2", 2, _AB_RECS, _AB_TRUTH,
               (0.02 + 0.5 * 0.98 / math.log2(3)) / 0.5, {"u1": (0.02 + 0.5 * 0.98 / math.log2(3)) / 0.5},
               _AB_WHY + "beta 0.5: (0.02 + 0.49/log2 3) / 0.5", _AB_CATS),
    Arithmetic("ab-ndcg-k1", "ab_ndcg", "ab_ndcg@1", 1, _AB_RECS, _AB_TRUTH, 0.02 / 0.2, {"u1": 0.1},
               _AB_WHY + "at k=1 only i2: 0.02 / 0.2 = 0.1", _AB_CATS),
    Arithmetic("coverage-catalog", "coverage", "coverage@2", 2, _LISTS, _TRUTH, 0.6, {},
               f"{_TOP2}: 3 distinct items of a catalogue of 5 = 3/5 = 0.6", _CATALOG),
    Arithmetic("coverage-count", "coverage", "coverage(denominator=count)@2", 2, _LISTS, _TRUTH, 3.0, {},
               f"{_TOP2}: 3 distinct items, counted (denominator 1) = 3", _CATALOG),
    Arithmetic("entropy-e", "entropy", "entropy@2", 2, _LISTS, _TRUTH, 1.5 * math.log(2), {},
               f"{_TOP2}: p = 1/2, 1/4, 1/4; H = -(1/2 ln 1/2 + 2 · 1/4 ln 1/4) = 1/2 ln 2 + ln 2 = 1.5 ln 2", _CATALOG),
    Arithmetic("entropy-2", "entropy", "entropy(base=2)@2", 2, _LISTS, _TRUTH, 1.5, {},
               f"{_TOP2}: p = 1/2, 1/4, 1/4; H = -(1/2 log2 1/2 + 2 · 1/4 log2 1/4) = 1/2 + 1 = 1.5", _CATALOG),
    Arithmetic("gini", "gini", "gini@2", 2, _LISTS, _TRUTH, 0.625, {},
               f"{_TOP2}; over the catalogue of 5 the sorted shares are 0, 0, 1/4, 1/4, 1/2 with weights "
               "2j - 6 = -4, -2, 0, 2, 4: (0 + 0 + 0 + 1/2 + 2) / (5 - 1) = 0.625", _CATALOG),
    Arithmetic("mae-pairs", "mae", "mae", None, _PRED, _RATED, 2 / 3, {},
               "predictions 4, 2, 3 against ratings 5, 1, 3: (|4-5| + |2-1| + |3-3|) / 3 = 2/3"),
    Arithmetic("mae-users", "mae", "mae(average=users)", None, _PRED, _RATED, 0.5, {},
               "u1: (|4-5| + |2-1|) / 2 = 1, u2: |3-3| = 0; the mean over users = 0.5"),
    Arithmetic("rmse-pairs", "rmse", "rmse", None, _PRED, _RATED, math.sqrt(2 / 3), {},
               "predictions 4, 2, 3 against ratings 5, 1, 3: sqrt((1 + 1 + 0) / 3) = sqrt(2/3)"),
    Arithmetic("gauc", "gauc", "gauc", None, _AUC_RECS, _AUC_TRUTH, 5 / 6, {"u1": 2 / 3, "u2": 1.0},
               "u1 ranks i1 i2 i3 i4 with i2 relevant: 1 positive, 3 negatives, 1 negative above it: 1 - 1/3 = 2/3; "
               "u2 ranks its one positive first: 1; the mean = 5/6"),
    Arithmetic("gauc-at-2", "gauc", "gauc@2", 2, _AUC_RECS, _AUC_TRUTH, 0.5, {"u1": 0.0, "u2": 1.0},
               "top 2: u1 has i1 (negative) above i2 (positive): 1 - 1/1 = 0; u2 has i5 (positive) above i6: 1; "
               "the mean = 0.5"),
    Arithmetic("auc-stacked", "auc", "auc", None, _AUC_RECS, _AUC_TRUTH, 0.8125, {},
               "pooled rows: positives scored 0.8 and 0.9, negatives 0.9, 0.7, 0.6, 0.5; 0.8 beats 3 negatives, "
               "0.9 beats 3 and ties 1 (1/2): (3 + 3.5) / (2 · 4) = 0.8125"),
    Arithmetic("ild-jaccard", "ild", "ild@3", 3, _LISTS, _TRUTH, 5 / 6, {"u1": 2 / 3, "u2": 1.0},
               "categories i1 {a}, i2 {a, b}, i3 {b}, i4 {c}; u1's list i1 i2 i3: Jaccard distances 1/2, 1, 1/2, "
               "mean over the 3 pairs = 2/3; u2's list i1 i4: distance 1; the mean = 5/6", _CATS),
    Arithmetic("lauc", "lauc", "lauc@1", 1, _AUC_RECS, _AUC_TRUTH, 0.5, {"u1": 0.0, "u2": 1.0},
               "u1's only positive i2 is at position 2, outside the top 1: 0; u2's positive i5 leads its full ranking "
               "of 1 negative: (1 - 0/1) / min(1, 1) = 1; the mean = 0.5"),
    Arithmetic("alpha-ndcg", "alpha_ndcg", "alpha_ndcg@2", 2, [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2)],
               [("u1", "i1", 1.0), ("u1", "i2", 1.0)],
               (1 + 1.5 / math.log2(3)) / (2 + 0.5 / math.log2(3)),
               {"u1": (1 + 1.5 / math.log2(3)) / (2 + 0.5 / math.log2(3))},
               "categories i1 {a}, i2 {a, b}, both relevant, alpha 1/2: G = 1 (i1: a new), 1/2 + 1 (i2: a seen once, "
               "b new); the greedy ideal takes i2 first (2) then i1 (1/2): (1 + 1.5/log2 3) / (2 + 0.5/log2 3)", _CATS),
    Arithmetic("bias-disparity-br", "bias_disparity", "bias_disparity(of=br,icat=g1)@2", 2, _BD_RECS, _BD_TRUTH, 1.5, {},
               "groups g1 {i1, i3}, g2 {i2, i4}; top 2: u1 i1 i2, u2 i3 i1: 3 of 4 positions in g1, over g1's share "
               "of the items 2/4: (3/4) / (1/2) = 1.5", {**_GROUPS, **_BD_TRAIN}),
    Arithmetic("bias-disparity-bd", "bias_disparity", "bias_disparity(icat=g1)@2", 2, _BD_RECS, _BD_TRUTH, 0.5, {},
               "B_R = 1.5 (as bias-disparity-br); train pairs t1 i1, t1 i2, t2 i2, t3 i3: 2 of 4 in g1, "
               "B_S = (2/4) / (2/4) = 1; BD = (1.5 - 1) / 1 = 0.5", {**_GROUPS, **_BD_TRAIN}),
    Arithmetic("novelty", "novelty", "novelty@2", 2, [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u2", "i2", 0.5, 1)],
               [("u1", "i1", 1.0), ("u2", "i2", 1.0)], 0.75 * math.log2(3),
               {"u1": 0.5 * math.log2(3), "u2": math.log2(3)},
               "3 train users: i1 seen by 3, i2 by 1; u1's list i1 i2: (-log2 3/3 - log2 1/3) / 2 = log2(3)/2; "
               "u2's list i2: log2 3; the mean = 3/4 log2 3", _NOV_TRAIN),
    Arithmetic("pauc", "pauc", "pauc@2", 2, _PAUC_RECS, _PAUC_TRUTH, (0.25 + 1 + 2 / 3) / 3,
               {"u1": 0.25, "u2": 1.0, "u3": 2 / 3},
               _PAUC_WHY + "u1 (2 - 1) / (2 · 2) = 1/4 (the missing item beats none); u2 (2 - 0) / (2 · 1) = 1; "
               "u3 ((2 - 0) + (2 - 1) + (2 - 1)) / (2 · 3) = 2/3; the mean of the three"),
    Arithmetic("pap", "pap", "pap@2", 2, _PAUC_RECS, _PAUC_TRUTH, 2 / 3, {"u1": 0.25, "u2": 1.0, "u3": 0.75},
               _PAUC_WHY + "u1 (2 - 1) / (2 · min(2, 2)) = 1/4; u2 (2 - 0) / (2 · 1) = 1; u3 counts its first "
               "min(2, 3) = 2 hits: ((2 - 0) + (2 - 1)) / (2 · 2) = 3/4; the mean = 2/3"),
    Arithmetic("reo", "reo", "reo@2", 2, [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u1", "i3", 0.7, 3),
                                          ("u2", "i3", 0.9, 1), ("u2", "i4", 0.8, 2)],
               [("u1", "i1", 1.0), ("u1", "i2", 1.0), ("u1", "i4", 1.0), ("u2", "i3", 1.0)], 1 / 3, {},
               "groups g1 {i1, i3}, g2 {i2, i4}; top 2: u1 i1 i2, u2 i3 i4; g1: hits 1 + 1 of relevant 1 + 1 = 1, "
               "g2: hits 1 + 0 of relevant 2 + 0 = 1/2; std/mean = (1/4) / (3/4) = 1/3", _GROUPS),
    Arithmetic("rsp", "rsp", "rsp@2", 2, [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2), ("u2", "i3", 0.9, 1),
                                          ("u2", "i1", 0.8, 2)],
               [("u1", "i1", 1.0), ("u2", "i3", 1.0)], 0.5, {},
               "groups g1 {i1, i3}, g2 {i2, i4}, no train: g1 recommended 1 + 2 times of 2 + 2 = 3/4, g2 1 + 0 "
               "of 2 + 2 = 1/4; std/mean = (1/4) / (1/2) = 1/2", _GROUPS),
    Arithmetic("mad-score", "mad", "mad(of=score)@2", 2, [("u1", "i1", 0.9, 1), ("u1", "i2", 0.8, 2),
                                                         ("u2", "i3", 0.6, 1), ("u2", "i4", 0.4, 2)],
               [("u1", "i1", 1.0), ("u2", "i3", 1.0)], 0.35, {},
               "user groups a {u1}, b {u2}; mean top-2 scores 0.85 and 0.5; 2 / (2 · 1) · |0.85 - 0.5| = 0.35",
               {"user_groups": [("u1", "a"), ("u2", "b")]}),
]



# --- worked cases: the arithmetic of the simple global metrics on every scenario -------------------
#
# For the metrics no slow reference covers, each scenario of ``generate.SCENARIOS`` is worked out
# here in plain Python from the formula in the metric's documentation (nothing of receval's is
# imported), and the steps are written into ``why``; the build keeps a case only where receval
# gives the same value (issue 35: at least 10 distinct inputs for every metric).


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _top(sc: Any, k: int, users: set[str] | None = None) -> dict[str, list[str]]:
    """user -> the items of ranks 1..k (the scenario's rank column)."""
    rows = sorted(sc.rec_rows(), key=lambda r: (r[0], r[3]))
    out: dict[str, list[str]] = {}
    for u, i, _, rank in rows:
        if users is not None and u not in users:
            continue
        if rank <= k:
            out.setdefault(u, []).append(i)
    return out


def _worked_coverage(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str]:
    lists = _top(sc, k)
    shown = sorted({i for items in lists.values() for i in items})
    catalog = [r[0] for r in side["catalog"]]
    how = opts.get("denominator", "catalog")
    if how == "catalog":
        den, what = len(catalog), f"a catalogue of {len(catalog)}"
    elif how == "catalog_plus_one":
        den, what = len(catalog) + 1, f"a catalogue of {len(catalog)} plus one padding item"
    elif how == "count":
        den, what = 1, "counted (denominator 1)"
    else:
        train = {i for _, i in side["train"]}
        shown = [i for i in shown if i in train]
        den, what = len(train), f"the {len(train)} distinct train items (recommended train items only)"
    v = len(shown) / den
    return v, f"top-{k} items {', '.join(shown)}: {len(shown)} distinct of {what} = {_fmt(v)}"


def _shares(sc: Any, k: int) -> dict[str, int]:
    cnt: dict[str, int] = {}
    for items in _top(sc, k).values():
        for i in items:
            cnt[i] = cnt.get(i, 0) + 1
    return cnt


def _worked_entropy(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    cnt = _shares(sc, k)
    n = sum(cnt.values())
    base = math.e if opts.get("base", "e") == "e" else float(opts["base"])
    h = -sum(c / n * math.log(c / n, base) for c in cnt.values())
    norm = opts.get("normalize", "no")
    parts = f"top-{k} counts {', '.join(f'{i}:{c}' for i, c in sorted(cnt.items()))} of {n}: H = {_fmt(h)}"
    if norm in ("catalog", "recommended") and (len(side["catalog"]) if norm == "catalog" else len(cnt)) < 2:
        return None
    if norm == "catalog":
        m = len(side["catalog"])
        return h / math.log(m, base), parts + f" / log {m} = {_fmt(h / math.log(m, base))}"
    if norm == "recommended":
        m = len(cnt)
        return h / math.log(m, base), parts + f" / log {m} = {_fmt(h / math.log(m, base))}"
    return h, parts


def _worked_gini(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    cnt = _shares(sc, k)
    n = sum(cnt.values())
    catalog = [r[0] for r in side["catalog"]]
    shares = sorted([cnt.get(i, 0) / n for i in catalog] + ([0.0] if opts.get("pad") == "yes" else []))
    m = len(shares)
    if m < 2:
        return None
    s = sum((2 * j - m - 1) * p for j, p in enumerate(shares, 1))
    form = opts.get("form", "castells")
    g = s / m if form == "catalog_divisor" else s / (m - 1)
    if form == "complement":
        g = 1 - g
    return g, (f"top-{k} counts {', '.join(f'{i}:{c}' for i, c in sorted(cnt.items()))} of {n} over {m} items "
               f"(unrecommended: 0), sorted shares weighted 2j - {m + 1}: sum {_fmt(s)}; {form} = {_fmt(g)}")


def _worked_errors(sc: Any, opts: dict[str, str], square: bool) -> tuple[float, str] | None:
    pred = {(u, i): s for u, i, s, _ in sc.rec_rows()}
    pairs = [(u, i, float(r), pred.get((u, i))) for u, i, r in sc.truth]
    if any(p is None for *_, p in pairs) and opts.get("missing", "error") == "error":
        return None
    known = [(u, i, r, float(p)) for u, i, r, p in pairs if p is not None]
    if not known or len({(u, i) for u, i, _, _ in known}) != len(known):
        return None
    err = [(u, (r - p) ** 2 if square else abs(r - p)) for u, _, r, p in known]
    if opts.get("average", "pairs") == "users":
        users = sorted({u for u, _ in err})
        per = [sum(e for uu, e in err if uu == u) / sum(1 for uu, _ in err if uu == u) for u in users]
        v = sum(per) / len(per)
        how = f"per user {', '.join(_fmt(x) for x in per)}, their mean {_fmt(v)}"
    else:
        v = sum(e for _, e in err) / len(err)
        how = f"{'squared' if square else 'absolute'} errors {', '.join(_fmt(e) for _, e in err)}: mean {_fmt(v)}"
    if square:
        return math.sqrt(v), how + f", root {_fmt(math.sqrt(v))}"
    return v, how


def _worked_novelty(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, dict[str, float], str] | None:
    train = {(u, i) for u, i in side["train"]}
    n_users = len({u for u, _ in train})
    pop: dict[str, int] = {}
    for _, i in train:
        pop[i] = pop.get(i, 0) + 1
    truth_users = sorted({u for u, i, r in sc.truth if r > 0})
    lists = _top(sc, k)
    per: dict[str, float] = {}
    for u in truth_users:
        items = lists.get(u, [])
        if not items:
            per[u] = 0.0
            continue
        terms = []
        for i in items:
            if i in pop:
                terms.append(-math.log2(pop[i] / n_users))
            elif opts.get("unknown", "max") == "max":
                terms.append(-math.log2(1 / n_users))
        if not terms:
            return None
        per[u] = sum(terms) / len(terms)
    v = sum(per.values()) / len(per)
    return v, per, (f"{n_users} train users; pop {', '.join(f'{i}:{c}' for i, c in sorted(pop.items()))}; per user mean "
                    f"-log2(pop/{n_users}) over its top-{k}: {', '.join(f'{u}: {_fmt(x)}' for u, x in per.items())}; "
                    f"the mean {_fmt(v)}")


def _relevant(sc: Any) -> dict[str, set[str]]:
    """user -> the items rated > 0 (receval's default rel:>0), for every truth user."""
    out: dict[str, set[str]] = {}
    for u, i, r in sc.truth:
        out.setdefault(u, set())
        if r > 0:
            out[u].add(i)
    return out


def _worked_ild(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, dict[str, float], str] | None:
    cats: dict[str, set[str]] = {}
    for i, c in side["categories"]:
        cats.setdefault(i, set()).add(c)
    how = opts.get("distance", "jaccard")

    def d(a: str, b: str) -> float:
        x, y = cats.get(a, set()), cats.get(b, set())
        if how == "hamming":
            return float(len(x ^ y))
        if how == "cosine":
            return 1 - len(x & y) / math.sqrt(len(x) * len(y)) if x and y else 1.0
        return 1 - len(x & y) / len(x | y) if x | y else 0.0

    lists = _top(sc, k)
    per: dict[str, float] = {}
    for u, rel in sorted(_relevant(sc).items()):
        if not rel:
            continue
        items = lists.get(u, [])
        n = len(items)
        per[u] = 0.0 if n < 2 else 2 / (n * (n - 1)) * sum(d(items[a], items[b]) for a in range(n) for b in range(a + 1, n))
    if not per:
        return None
    v = sum(per.values()) / len(per)
    return v, per, (f"{how} distances of the category sets inside each top-{k}: "
                    f"{', '.join(f'{u}: {_fmt(x)}' for u, x in per.items())}; the mean {_fmt(v)}")


def _worked_gauc(sc: Any, k: int | None, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, dict[str, float], str] | None:
    rows = sorted(sc.rec_rows(), key=lambda r: (r[0], r[3]))
    per: dict[str, float] = {}
    tied = opts.get("tied", "half")
    for u, rel in sorted(_relevant(sc).items()):
        if not rel:
            continue
        mine = [(i, s) for uu, i, s, _ in rows if uu == u]
        if k is not None:
            mine = mine[:k]
        if not mine:
            per[u] = 0.0
            continue
        pos = [(n, s) for n, (i, s) in enumerate(mine) if i in rel]
        neg = [(n, s) for n, (i, s) in enumerate(mine) if i not in rel]
        if not pos:
            per[u] = {"zero": 0.0, "one": 1.0}[opts.get("nopos", "zero")]
            continue
        if not neg:
            per[u] = {"zero": 0.0, "one": 1.0}[opts.get("noneg", "one")]
            continue

        def above(n: int, s: float, neg: list[tuple[int, float]] = neg) -> float:
            if tied == "order":
                return float(sum(1 for m, _ in neg if m < n))
            return sum(1.0 if t > s else (0.5 if tied == "half" else 0.0) if t == s else 0.0 for _, t in neg)

        den = len(pos) if opts.get("denominator", "list") == "list" else len(rel)
        per[u] = sum(1 - above(n, s) / len(neg) for n, s in pos) / den
    if not per:
        return None
    v = sum(per.values()) / len(per)
    return v, per, (f"per user 1 - (negatives above each positive, ties {tied}) / negatives, averaged over "
                    f"{'its positives' if opts.get('denominator', 'list') == 'list' else '|R|'}"
                    f"{f' inside the top {k}' if k is not None else ''}: "
                    f"{', '.join(f'{u}: {_fmt(x)}' for u, x in per.items())}; the mean {_fmt(v)}")


def _groups(side: dict[str, list[tuple[Any, ...]]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for i, g in side["item_groups"]:
        out.setdefault(g, set()).add(i)
    return out


def _two_groups(side: dict[str, list[tuple[Any, ...]]]) -> bool:
    return len(_groups(side)) >= 2  # one group: nothing to compare (receval refuses)


def _std_over_mean(p: dict[str, float]) -> float:
    mean = sum(p.values()) / len(p)
    return math.sqrt(sum((x - mean) ** 2 for x in p.values()) / len(p)) / mean


def _worked_reo(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    if not _two_groups(side):
        return None
    lists = _top(sc, k)
    rel = _relevant(sc)
    p: dict[str, float] = {}
    for g, items in sorted(_groups(side).items()):
        den = sum(len(r & items) for r in rel.values())
        if den == 0:
            return None
        p[g] = sum(len(set(lists.get(u, [])) & r & items) for u, r in rel.items()) / den
    if sum(p.values()) == 0:
        return None
    v = _std_over_mean(p)
    return v, f"top-{k} hits over relevant items per group: {', '.join(f'{g}: {_fmt(x)}' for g, x in p.items())}; std/mean = {_fmt(v)}"


def _worked_rsp(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    if not _two_groups(side):
        return None
    lists = _top(sc, k)
    users = sorted({u for u, _, _ in sc.truth})
    train: dict[str, set[str]] = {}
    for u, i in side["train"]:
        train.setdefault(u, set()).add(i)
    p: dict[str, float] = {}
    for g, items in sorted(_groups(side).items()):
        den = sum(len(items - train.get(u, set())) for u in users)
        if den == 0:
            return None
        p[g] = sum(len([i for i in lists.get(u, []) if i in items]) for u in users) / den
    if sum(p.values()) == 0:
        return None
    v = _std_over_mean(p)
    return v, f"top-{k} items per group over the group's items not in each user's train: {', '.join(f'{g}: {_fmt(x)}' for g, x in p.items())}; std/mean = {_fmt(v)}"


def _ranked(sc: Any, u: str) -> list[tuple[str, float]]:
    """(item, score) of u's rows in rank order."""
    return [(i, sc_) for uu, i, sc_, _ in sorted(sc.rec_rows(), key=lambda r: (r[0], r[3])) if uu == u]


def _worked_pauc(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]], pap: bool) -> tuple[float, dict[str, float], str] | None:
    per: dict[str, float] = {}
    for u, rel in sorted(_relevant(sc).items()):
        if not rel:
            continue
        mine = _ranked(sc, u)
        negatives = sum(1 for i, _ in mine if i not in rel)
        missing = len(rel - {i for i, _ in mine})
        if negatives < k and missing:
            how = opts.get("insufficient", "ignore")
            if how == "error":
                return None
            if how == "exclude":
                continue
        f, hits, total = 0, 0, 0.0
        for i, _ in mine:
            if i in rel:
                hits += 1
                if f < k and (not pap or hits <= k):
                    total += k - f
            else:
                f += 1
        per[u] = total / (k * (min(k, len(rel)) if pap else len(rel)))
    if not per:
        return None
    v = sum(per.values()) / len(per)
    return v, per, (f"per user the sum of (k - negatives above) over its {'first min(k, |R|) ' if pap else ''}hits with fewer "
                    f"than k={k} negatives above, over k · {'min(k, |R|)' if pap else '|R|'}: "
                    f"{', '.join(f'{u}: {_fmt(x)}' for u, x in per.items())}; the mean {_fmt(v)}")


def _worked_pauc_only(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> Any:
    return _worked_pauc(sc, k, opts, side, pap=False)


def _worked_pap(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> Any:
    return _worked_pauc(sc, k, opts, side, pap=True)


def _worked_lauc(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, dict[str, float], str] | None:
    per: dict[str, float] = {}
    tied = opts.get("tied", "half")
    for u, rel in sorted(_relevant(sc).items()):
        if not rel:
            continue
        mine = _ranked(sc, u)
        neg = [(n, s_) for n, (i, s_) in enumerate(mine) if i not in rel]
        positives = sum(1 for i, _ in mine if i in rel)
        big_n = len(neg) if opts.get("negatives", "exact") == "exact" else len(mine) - len(rel) + 1
        total = 0.0
        for n, (i, s_) in enumerate(mine):
            if i not in rel or n >= k:
                continue
            if tied == "order":
                a = float(sum(1 for m, _ in neg if m < n))
            else:
                a = sum(1.0 if t > s_ else (0.5 if tied == "half" else 0.0) if t == s_ else 0.0 for _, t in neg)
            total += 1.0 if big_n == 0 else 1 - a / big_n
        del positives
        per[u] = total / min(k, len(rel))
    if not per:
        return None
    v = sum(per.values()) / len(per)
    return v, per, (f"per user 1 - (negatives above, ties {tied}) / negatives of the whole list, summed over the hits in "
                    f"the top {k}, over min(k, |R|): {', '.join(f'{u}: {_fmt(x)}' for u, x in per.items())}; the mean {_fmt(v)}")


def _worked_auc(sc: Any, k: int | None, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    rel = _relevant(sc)
    judged = {(u, i) for u, i, _ in sc.truth}
    pos: list[float] = []
    neg: list[float] = []
    for u, i, s_, _ in sc.rec_rows():
        if u not in rel:
            continue
        if opts.get("rows", "all") == "judged" and (u, i) not in judged:
            continue
        (pos if i in rel[u] else neg).append(s_)
    if not pos or not neg:
        return None
    t = 0.5 if opts.get("tied", "half") == "half" else 1.0
    wins = sum(1.0 if p > n else t if p == n else 0.0 for p in pos for n in neg)
    v = wins / (len(pos) * len(neg))
    return v, (f"pooled positives scored {', '.join(_fmt(x) for x in sorted(pos))}, negatives "
               f"{', '.join(_fmt(x) for x in sorted(neg))}: {_fmt(wins)} of {len(pos)} · {len(neg)} pairs won "
               f"(a tie counts {t}) = {_fmt(v)}")


def _ndcg_binary(items: list[str], rel: set[str], k: int) -> float:
    dcg = sum(1 / math.log2(n + 2) for n, i in enumerate(items[:k]) if i in rel)
    idcg = sum(1 / math.log2(n + 2) for n in range(min(k, len(rel))))
    return dcg / idcg


def _worked_mad(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    group = {u: g for u, g in side["user_groups"]}
    lists = _top(sc, k)
    scores = {(u, i): s_ for u, i, s_, _ in sc.rec_rows()}
    v: dict[str, float] = {}
    for u, rel in sorted(_relevant(sc).items()):
        if opts.get("of", "ndcg") == "score":
            if lists.get(u):
                v[u] = sum(scores[(u, i)] for i in lists[u]) / len(lists[u])
        elif rel:
            v[u] = _ndcg_binary(lists.get(u, []), rel, k)
    means: dict[str, float] = {}
    for g in sorted({group[u] for u in v if u in group}):
        mine = [x for u, x in v.items() if group.get(u) == g]
        means[g] = sum(mine) / len(mine)
    gs = sorted(means)
    if len(gs) < 2:
        return None
    pairs = [(a, b) for n, a in enumerate(gs) for b in gs[n + 1:]]
    mad = sum(abs(means[a] - means[b]) for a, b in pairs) / len(pairs)
    return mad, (f"per user {opts.get('of', 'ndcg')}@{k}: {', '.join(f'{u}: {_fmt(x)}' for u, x in v.items())}; group means "
                 f"{', '.join(f'{g}: {_fmt(x)}' for g, x in means.items())}; mean absolute difference {_fmt(mad)}")


def _worked_bias(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, str] | None:
    groups = _groups(side)
    cat = "g1"
    if cat not in groups:
        return None
    in_any = {i for items in groups.values() for i in items}
    share = len(groups[cat]) / len(in_any)
    lists = _top(sc, k)
    users = sorted({u for u, _, _ in sc.truth})
    n_rc = sum(1 for u in users for i in lists.get(u, []) if i in groups[cat])
    n_r = sum(1 for u in users for i in lists.get(u, []) if i in in_any)
    pairs = set(side["train"])
    n_sc = sum(1 for _, i in pairs if i in groups[cat])
    n_s = sum(1 for _, i in pairs if i in in_any)
    of = opts.get("of", "bd")
    if n_r == 0 and of != "bs" or n_s == 0 and of != "br":
        return None
    br = n_rc / n_r / share if n_r else math.nan
    bs = n_sc / n_s / share if n_s else math.nan
    if of == "br":
        return br, f"top-{k} positions in g1 {n_rc} of {n_r}, g1 holds {len(groups[cat])} of {len(in_any)} items: B_R = {_fmt(br)}"
    if of == "bs":
        return bs, f"distinct train pairs in g1 {n_sc} of {n_s}, g1 holds {len(groups[cat])} of {len(in_any)} items: B_S = {_fmt(bs)}"
    if bs == 0:
        return None
    bd = (br - bs) / bs
    return bd, f"B_R = {n_rc}/{n_r} / {_fmt(share)} = {_fmt(br)}, B_S = {n_sc}/{n_s} / {_fmt(share)} = {_fmt(bs)}: BD = {_fmt(bd)}"


def _alpha_dcg(items: list[str], rel: set[str], cats: dict[str, set[str]], alpha: float, k: int) -> float:
    seen: dict[str, int] = {}
    total = 0.0
    for n, i in enumerate(items[:k]):
        if i not in rel:
            continue
        g = sum((1 - alpha) ** seen.get(c, 0) for c in cats.get(i, set()))
        total += g / math.log2(n + 2)
        for c in cats.get(i, set()):
            seen[c] = seen.get(c, 0) + 1
    return total


def _worked_alpha_ndcg(sc: Any, k: int, opts: dict[str, str], side: dict[str, list[tuple[Any, ...]]]) -> tuple[float, dict[str, float], str] | None:
    import itertools

    cats: dict[str, set[str]] = {}
    for i, c in side["categories"]:
        cats.setdefault(i, set()).add(c)
    alpha = float(opts.get("alpha", "0.5"))
    lists = _top(sc, k)
    per: dict[str, float] = {}
    for u, rel in sorted(_relevant(sc).items()):
        if not rel:
            continue
        ideal = max(_alpha_dcg(list(p), rel, cats, alpha, k) for p in itertools.permutations(sorted(rel), min(k, len(rel))))
        per[u] = _alpha_dcg(lists.get(u, []), rel, cats, alpha, k) / ideal if ideal else 0.0
    if not per:
        return None
    v = sum(per.values()) / len(per)
    return v, per, (f"alpha {alpha:g}: per user alpha-DCG@{k} of the list over the best alpha-DCG of any ordering of its "
                    f"relevant items: {', '.join(f'{u}: {_fmt(x)}' for u, x in per.items())}; the mean {_fmt(v)}")


#: the option sets worked out per metric
WORKED_OPTIONS: dict[str, list[dict[str, str]]] = {
    "coverage": [{}, {"denominator": "count"}, {"denominator": "catalog_plus_one"}, {"denominator": "train"}],
    "entropy": [{}, {"base": "2"}, {"normalize": "catalog"}, {"normalize": "recommended"}],
    "gini": [{}, {"form": "catalog_divisor"}, {"form": "complement"}, {"pad": "yes"}],
    "mae": [{"missing": "skip"}, {"missing": "skip", "average": "users"}, {}],
    "rmse": [{"missing": "skip"}, {"missing": "skip", "average": "users"}, {}],
    "novelty": [{}, {"unknown": "skip"}],
    "ild": [{}, {"distance": "cosine"}, {"distance": "hamming"}],
    "gauc": [{}, {"tied": "correct"}, {"tied": "order"}, {"denominator": "r"}, {"noneg": "zero"}],
    "reo": [{}],
    "rsp": [{}],
    "pauc": [{}, {"insufficient": "exclude"}],
    "pap": [{}, {"insufficient": "exclude"}],
    "lauc": [{}, {"tied": "correct"}, {"tied": "order"}, {"negatives": "plus_one"}],
    "auc": [{}, {"rows": "judged"}, {"tied": "correct"}],
    "mad": [{}, {"of": "score"}],
    "bias_disparity": [{"icat": "g1"}, {"icat": "g1", "of": "br"}, {"icat": "g1", "of": "bs"}],
    "alpha_ndcg": [{}, {"alpha": "0.3"}],
}


def worked() -> list[Arithmetic]:
    """The worked cases of :data:`WORKED_OPTIONS` on every scenario without repeated rows."""

    out: list[Arithmetic] = []
    for sc in SCENARIOS.values():
        if "duplicates" in sc.tags:
            continue
        side = sc.side()
        recs = [tuple(r) for r in sc.rec_rows()]
        truth = [(u, i, float(r)) for u, i, r in sc.truth]
        for metric, variants in WORKED_OPTIONS.items():
            if sc.metrics is not None and metric not in sc.metrics:
                continue  # a scenario planned for other metrics only
            ks: tuple[int | None, ...] = (None,) if metric in ("mae", "rmse", "auc") else (*sc.ks, None) if metric == "gauc" else sc.ks
            for k in ks:
                for opts in variants:
                    text = ",".join(f"{a}={v}" for a, v in opts.items())
                    spec = metric + (f"({text})" if text else "") + (f"@{k}" if k is not None else "")
                    per_user: dict[str, float] = {}
                    if metric in ("mae", "rmse"):
                        got = _worked_errors(sc, opts, metric == "rmse")
                        if got is None:
                            continue
                        value, why = got
                    elif metric in ("novelty", "ild", "gauc", "pauc", "pap", "lauc", "alpha_ndcg"):
                        if metric in ("gauc", "lauc") and "orderings" in sc.tags:
                            continue  # the rank column and the scores disagree: which one a tie rule reads is not worked here
                        fn3: Any = {"novelty": _worked_novelty, "ild": _worked_ild, "gauc": _worked_gauc, "lauc": _worked_lauc,
                                    "alpha_ndcg": _worked_alpha_ndcg,
                                    "pauc": _worked_pauc_only, "pap": _worked_pap}[metric]
                        nov = fn3(sc, k, opts, side)
                        if nov is None:
                            continue
                        value, per_user, why = nov
                    else:
                        fn: Any = {"coverage": _worked_coverage, "entropy": _worked_entropy, "gini": _worked_gini,
                                   "reo": _worked_reo, "rsp": _worked_rsp, "auc": _worked_auc, "mad": _worked_mad,
                                   "bias_disparity": _worked_bias}[metric]
                        res = fn(sc, k, opts, side)
                        if res is None:
                            continue
                        value, why = res
                    name = f"{sc.name}-{spec}"
                    out.append(Arithmetic(name, metric, spec, k, recs, truth, value, per_user, f"{sc.name}: {why}",
                                          {n: side[n] for n in ("catalog", "train", "categories", "item_groups", "user_groups")},
                                          ("arithmetic", "worked", *sc.tags),
                                          scenario=sc.name))
    return out


__all__ = ["Arithmetic", "ARITHMETIC", "WORKED_OPTIONS", "worked"]
