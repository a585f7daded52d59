"""The eight axioms of Parapar & Radlinski (RecSys'21) as hypothesis property tests.

Each axiom has a strategy that builds the rankings the axiom describes
(reference notes §2.3) and a checker ``holds(metric, instance) -> bool``
(strict improvement, margin 1e-12 so float noise never counts as a win).
The same checks run against αβ-nDCG (receval defaults α=0.02, β=0.2,
r_max=5; ``AB_DEFAULTS``), α-nDCG (α=0.5, relevant iff rating >= 1) and plain binary NDCG
(relevant iff rating >= 1).  ``EXPECTED`` is the table in docs/axioms.md
(a test keeps the two in sync); every expected violation is asserted to
exist, both by a hypothesis search and by the concrete counterexample
recorded in the docs.

Conventions: ratings are integers 0..5; 0 = rated non-relevant; ``None`` =
unrated (NaN).  Filler items are rated 0 (non-relevant): they gain nothing
and, with P = 0 / J = 0, do not change any redundancy state, so they are
neutral for all three metrics.

Scope (see docs/axioms.md, "Where the statements are bounded"): rank-position
axioms (Pri, Deep) are checked at every rank pair within the top ``TOP`` = 10,
the usual evaluation depth; no β > 0 satisfies Pri at *every* depth for items
sharing two or more aspects (``test_pri_ab_fails_deep_at_defaults``).
TopHeav/TopHeavComp compare interchangeable relevant items, i.e. items with the
same aspect set (the transcription ties TopHeav to Pri, "priority inside
aspect"); the heterogeneous case is recorded as its own violation test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
import inspect
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from receval.metrics.aspects import alpha_beta_ndcg, alpha_ndcg
from receval.metrics.beyond import AB_ALPHA, AB_BETA

C = 4  # aspects
TOP = 10  # rank-position axioms are checked at every rank pair within the top 10
AB_DEFAULTS = (0.02, 0.2)  # (alpha, beta): the defaults the αβ-nDCG column of the table is about
EPS = 1e-12
SET = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None,
               derandomize=True)  # deterministic: the table must not flake
FIND = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None,
                derandomize=True,
                phases=[Phase.generate])  # no shrinking: the minimal examples are the hand-written tests below


# ---------------------------------------------------------------------------
# metrics under test: Q(asp, [(truth, ranking), ...]) -> one value per pair.
# Every (truth, ranking) pair is one "user" of a single vectorised call.
# ---------------------------------------------------------------------------
def _arrays(pairs):
    k = max(1, max(len(r) for _, r in pairs))
    n = len(pairs)
    items = np.full((n, k), -1, dtype=np.int64)
    rating = np.full((n, k), np.nan)
    ti, tr, off = [], [], [0]
    for u, (truth, r) in enumerate(pairs):
        items[u, : len(r)] = r
        for j, x in enumerate(r):
            if truth.get(x) is not None:
                rating[u, j] = truth[x]
        rated = [(x, v) for x, v in truth.items() if v is not None]
        ti += [x for x, _ in rated]
        tr += [v for _, v in rated]
        off.append(len(ti))
    return (items, rating, np.array(ti, dtype=np.int64), np.array(tr, dtype=np.float64),
            np.array(off, dtype=np.int64), k)


def q_ab(asp, pairs):
    """αβ-nDCG with the library defaults for α and β (asserted to be ``AB_DEFAULTS``)."""
    items, rating, ti, tr, off, k = _arrays(pairs)
    return alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=k)


def q_ab_at(alpha, beta):
    """αβ-nDCG with explicit α, β (for the parameter-region tests)."""
    def q(asp, pairs):
        items, rating, ti, tr, off, k = _arrays(pairs)
        return alpha_beta_ndcg(items, rating, asp, off, ti, tr, r_max=5.0, k=k, alpha=alpha, beta=beta)
    return q


def q_alpha(asp, pairs):
    items, rating, ti, tr, off, k = _arrays(pairs)
    rel = np.nan_to_num(rating, nan=0.0) >= 1
    return alpha_ndcg(items, rel, asp, off, ti, tr, 1.0, alpha=0.5, k=k)


def q_ndcg(asp, pairs):
    """Plain binary NDCG@k, log2 discount, IDCG over min(k, |R_u|)."""
    items, rating, ti, tr, off, k = _arrays(pairs)
    rel = np.nan_to_num(rating, nan=0.0) >= 1
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = (rel * disc).sum(axis=1)
    cs = np.concatenate([[0], np.cumsum(tr >= 1)])
    nrel = np.minimum(cs[off[1:]] - cs[off[:-1]], k)
    idcg = np.concatenate([[0.0], np.cumsum(disc)])[nrel]
    out = np.zeros(len(pairs))
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def pairwise(metric, asp, truth, rankings):
    """Q of several rankings for one user (same truth)."""
    return metric(asp, [(truth, r) for r in rankings])


METRICS = {"ab-nDCG": q_ab, "alpha-nDCG": q_alpha, "nDCG": q_ndcg}


# ---------------------------------------------------------------------------
# instances
# ---------------------------------------------------------------------------
@dataclass
class Inst:
    """A catalogue (aspects), and a list of (truth, better, worse) cases.

    ``mode="all"``: the axiom holds iff Q(better) > Q(worse) in every case;
    ``mode="any"``: iff it does in at least one case (existential axioms);
    ``mode="deep"``: cases are pairs of (truth, better, worse) swaps, the
    first at a shallower depth; holds iff its improvement is larger.
    """

    asp: np.ndarray
    cases: list = field(default_factory=list)
    mode: str = "all"
    note: str = ""


class Catalog:
    def __init__(self):
        self.rows = []

    def add(self, aspects) -> int:
        self.rows.append(np.isin(np.arange(C), list(aspects)))
        return len(self.rows) - 1

    def matrix(self):
        return np.array(self.rows, dtype=bool).reshape(-1, C)


def holds(metric, inst: Inst) -> bool:
    if inst.mode == "deep":
        (t, b1, w1), (_, b2, w2) = inst.cases
        q = pairwise(metric, inst.asp, t, [b1, w1, b2, w2])
        return (q[0] - q[1]) - (q[2] - q[3]) > EPS
    pairs = [p for t, b, w in inst.cases for p in ((t, b), (t, w))]
    q = metric(inst.asp, pairs)
    res = q[0::2] - q[1::2] > EPS
    return bool(res.any() if inst.mode == "any" else res.all())


aspect_sets = st.sets(st.integers(0, C - 1), min_size=1, max_size=C)
rel_rating = st.integers(1, 5)


@st.composite
def fillers(draw, cat, truth, max_n=3, min_n=0):
    out = []
    for _ in range(draw(st.integers(min_n, max_n))):
        x = cat.add(draw(st.sets(st.integers(0, C - 1), max_size=C)))
        truth[x] = 0
        out.append(x)
    return out


@st.composite
def background(draw, cat, truth, max_n=3):
    """Rated items the user knows but that are not ranked (shape γ and the ideal)."""
    for _ in range(draw(st.integers(0, max_n))):
        x = cat.add(draw(aspect_sets))
        truth[x] = draw(st.integers(0, 5))


# 1. Priority inside aspect (both items within the top TOP ranks)
@st.composite
def pri(draw):
    cat, truth = Catalog(), {}
    S = draw(aspect_sets)
    r_lo = draw(st.integers(0, 4))
    r_hi = draw(st.integers(r_lo + 1, 5))
    lo, hi = cat.add(S), cat.add(S)
    truth[lo], truth[hi] = r_lo, r_hi
    pre = draw(fillers(cat, truth, TOP - 2))
    mid = draw(fillers(cat, truth, TOP - 2 - len(pre)))
    post = draw(fillers(cat, truth))
    draw(background(cat, truth))
    worse = pre + [lo] + mid + [hi] + post
    better = pre + [hi] + mid + [lo] + post
    return Inst(cat.matrix(), [(truth, better, worse)])


# 2. Deepness inside aspect
@st.composite
def deep(draw):
    cat, truth = Catalog(), {}
    S = draw(aspect_sets)
    r_lo = draw(st.integers(0, 4))
    r_hi = draw(st.integers(r_lo + 1, 5))
    lo, hi = cat.add(S), cat.add(S)
    truth[lo], truth[hi] = r_lo, r_hi
    n_fill = draw(st.integers(1, TOP - 2))  # the deeper pair ends at rank <= TOP
    fill = [cat.add(draw(st.sets(st.integers(0, C - 1)))) for _ in range(n_fill)]
    for x in fill:
        truth[x] = 0
    draw(background(cat, truth))
    p = draw(st.integers(0, n_fill - 1))  # fillers before the pair (shallow)
    q = draw(st.integers(p + 1, n_fill))  # fillers before the pair (deep)
    at = lambda d, a, b: fill[:d] + [a, b] + fill[d:]  # noqa: E731
    return Inst(cat.matrix(), [(truth, at(p, hi, lo), at(p, lo, hi)), (truth, at(q, hi, lo), at(q, lo, hi))], "deep")


# 3. Non-priority on saturated aspects (exists a saturation depth n <= NSAT).
# The axiom's n is unbounded; NSAT only bounds the search.  With the default
# β = 0.2, rating-1 saturating items (P = 0.04) and γ_a growing with n, the worst
# case (r_x = 2, r_y = 1) first wins at n = 139 (n = 43 with β = 0.5).
NSAT = 160
@st.composite
def nonprisat(draw):
    r_s = draw(rel_rating)
    r_x = draw(rel_rating)
    r_y = draw(st.integers(max(1, r_x - 1), r_x))  # y somewhat less (or equally) relevant
    a = draw(st.integers(0, C - 1))
    b = draw(st.integers(0, C - 1).filter(lambda v: v != a))
    cat = Catalog()
    sat = [cat.add({a}) for _ in range(NSAT)]
    x, y = cat.add({a}), cat.add({b})
    cases = []
    for n in range(1, NSAT + 1):
        truth = {i: r_s for i in sat[:n]}
        truth[x], truth[y] = r_x, r_y
        cases.append((truth, sat[:n] + [y, x], sat[:n] + [x, y]))
    return Inst(cat.matrix(), cases, "any")


# 4./5. Top heaviness threshold (and complementary), n, m <= 15.
# The relevant items i^r are interchangeable: one drawn aspect set shared by all
# (the transcription bases TopHeav on Pri, "priority inside aspect").  Items with
# different aspect sets: test_topheavcomp_ab_heterogeneous_aspects.
@st.composite
def topheav_items(draw):
    r = draw(rel_rating)
    cat = Catalog()
    S = draw(aspect_sets)
    rel = [cat.add(S) for _ in range(15)]
    non = [cat.add(draw(st.sets(st.integers(0, C - 1)))) for _ in range(30)]
    return cat, r, rel, non


@st.composite
def topheav(draw):
    cat, r, rel, non = draw(topheav_items())
    cases = []
    for n in range(1, 16):
        truth = {**{i: r for i in rel[:n]}, **{i: 0 for i in non[: 2 * n]}}
        cases.append((truth, [rel[0]] + non[: 2 * n - 1], non[:n] + rel[:n]))
    return Inst(cat.matrix(), cases, "any")


@st.composite
def topheavcomp(draw):
    cat, r, rel, non = draw(topheav_items())
    cases = []
    for m in range(1, 16):
        truth = {**{i: r for i in rel[:m]}, **{i: 0 for i in non[: 2 * m]}}
        cases.append((truth, non[:m] + rel[:m], [rel[0]] + non[: 2 * m - 1]))
    return Inst(cat.matrix(), cases, "any")


# 6. Aspect relevance
@st.composite
def asprel(draw):
    cat, truth = Catalog(), {}
    a = draw(st.integers(0, C - 1))
    b = draw(st.integers(0, C - 1).filter(lambda v: v != a))
    r = draw(rel_rating)
    x, y = cat.add({a}), cat.add({b})
    truth[x] = truth[y] = r
    for _ in range(draw(st.integers(1, 3))):  # the user prefers aspect a
        truth[cat.add({a})] = draw(rel_rating)
    pre = draw(fillers(cat, truth))
    return Inst(cat.matrix(), [(truth, pre + [x, y], pre + [y, x])])


# 7. Prefer more aspect contribution (less redundant aspect first), equal preferences
@st.composite
def moreasp(draw):
    cat, truth = Catalog(), {}
    a = draw(st.integers(0, C - 1))
    b = draw(st.integers(0, C - 1).filter(lambda v: v != a))
    r = draw(rel_rating)
    prefix = []
    for _ in range(draw(st.integers(1, 4))):
        rp = draw(rel_rating)
        p = cat.add({a})
        truth[p] = rp
        prefix.append(p)
        truth[cat.add({b})] = rp  # background B item with the same rating: γ_a = γ_b
    x, y = cat.add({a}), cat.add({b})
    truth[x] = truth[y] = r
    return Inst(cat.matrix(), [(truth, prefix + [y, x], prefix + [x, y])])


# 8. Missing over non-relevant
@st.composite
def missovernon(draw):
    cat, truth = Catalog(), {}
    A = draw(aspect_sets)
    liked = draw(st.sampled_from(sorted(A)))
    truth[cat.add({liked})] = draw(rel_rating)  # the user likes an aspect of j'
    j = cat.add(draw(st.sets(st.integers(0, C - 1))))
    truth[j] = 0
    jp = cat.add(A)  # unrated
    pre = []
    for _ in range(draw(st.integers(0, 3))):  # arbitrary context above
        x = cat.add(draw(st.sets(st.integers(0, C - 1))))
        truth[x] = draw(st.one_of(st.none(), st.integers(0, 5)))
        pre.append(x)
    draw(background(cat, truth))
    return Inst(cat.matrix(), [(truth, pre + [jp, j], pre + [j, jp])])


AXIOMS = {
    "Pri": pri(),
    "Deep": deep(),
    "NonPriSatAsp": nonprisat(),
    "TopHeav": topheav(),
    "TopHeavComp": topheavcomp(),
    "AspRel": asprel(),
    "MoreAsp": moreasp(),
    "MissOverNon": missovernon(),
}

# ✓ = satisfied on every generated instance; ✗ = a counterexample exists.
EXPECTED = {
    #               ab-nDCG  alpha-nDCG  nDCG
    "Pri":          (True,   False,      False),
    "Deep":         (True,   False,      False),
    "NonPriSatAsp": (True,   True,       False),
    "TopHeav":      (True,   True,       True),
    "TopHeavComp":  (True,   False,      True),
    "AspRel":       (True,   False,      False),
    "MoreAsp":      (True,   True,       False),
    "MissOverNon":  (True,   False,      False),
}
NAMES = list(METRICS)

CASES = [(ax, m, EXPECTED[ax][i]) for ax in AXIOMS for i, m in enumerate(NAMES)]


@pytest.mark.parametrize("axiom,metric,ok", [c for c in CASES if c[2]], ids=lambda v: str(v))
def test_axiom_satisfied(axiom, metric, ok):
    @SET
    @given(AXIOMS[axiom])
    def run(inst):
        assert holds(METRICS[metric], inst)

    run()


@pytest.mark.parametrize("axiom,metric,ok", [c for c in CASES if not c[2]], ids=lambda v: str(v))
def test_axiom_violation_exists(axiom, metric, ok):
    """Hypothesis must find a counterexample (so the ✗ in the table cannot drift)."""
    ce = find(AXIOMS[axiom], lambda inst: not holds(METRICS[metric], inst), settings=FIND)
    assert not holds(METRICS[metric], ce)


# ---------------------------------------------------------------------------
# the concrete counterexamples recorded in docs/axioms.md
# ---------------------------------------------------------------------------
def _asp(*sets):
    return np.array([np.isin(np.arange(C), list(s)) for s in sets], dtype=bool).reshape(-1, C)


def test_counterexample_pri_binary():
    # two items with the same aspect {0}, ratings 1 < 2, both relevant: binary metrics tie
    asp = _asp({0}, {0})
    truth = {0: 1, 1: 2}
    for m in (q_alpha, q_ndcg):
        q = pairwise(m, asp, truth, [[1, 0], [0, 1]])
        assert q[0] == q[1]
    q = pairwise(q_ab, asp, truth, [[1, 0], [0, 1]])
    assert q[0] > q[1]


def test_counterexample_pri_ab_multi_aspect():
    """αβ-nDCG with β = 0.5 (receval's previous default): two items sharing three aspects,
    ratings 4 < 5, at ranks 3-4.

    The 1-Π gain saturates: the pair's undiscounted total is larger with the
    *lower* rated item first (0.6200 vs 0.6083), and at ranks 3/4 the discounts
    are too close (0.5 vs 0.431) to compensate.  At ranks 1/2 the swap does improve.
    The defaults (β = 0.2) satisfy this instance.
    """
    q_half = q_ab_at(0.05, 0.5)
    asp = _asp({0, 1, 2}, {0, 1, 2}, set(), set())
    truth = {0: 4, 1: 5, 2: 0, 3: 0}
    q = pairwise(q_half, asp, truth, [[2, 3, 1, 0], [2, 3, 0, 1]])
    assert q[0] < q[1]
    q = pairwise(q_half, asp, truth, [[1, 0], [0, 1]])
    assert q[0] > q[1]
    q = pairwise(q_ab, asp, truth, [[2, 3, 1, 0], [2, 3, 0, 1]])
    assert q[0] > q[1]


def _pri_adjacent(metric, S, r_lo, r_hi, j):
    """Q(hi first) - Q(lo first) for a same-aspect pair at ranks (j, j+1) after j-1 fillers."""
    asp = _asp(S, S, *([set()] * (j - 1)))
    fill = list(range(2, j + 1))
    truth = {0: r_lo, 1: r_hi, **{f: 0 for f in fill}}
    q = pairwise(metric, asp, truth, [fill + [1, 0], fill + [0, 1]])
    return q[0] - q[1]


def test_pri_ab_fails_deep_at_defaults():
    """No β > 0 satisfies Pri at every depth for items sharing >= 2 aspects.

    The lower-rated-first order always has the larger undiscounted total (by
    ~2 e2(γ) P_lo P_hi (P_hi - P_lo) = O(β^3)), the rated-first advantage is
    O(β), and the discount ratio of adjacent ranks tends to 1.  With the
    defaults and four shared aspects (γ = 1/4 each), ratings 4 < 5, the swap
    improves Q at ranks (13, 14) but not at (14, 15); with β = 0.5 it already
    fails at (3, 4).  Single-aspect items satisfy Pri at every depth.
    """
    S = {0, 1, 2, 3}
    assert _pri_adjacent(q_ab, S, 4, 5, 13) > EPS
    assert _pri_adjacent(q_ab, S, 4, 5, 14) < 0
    assert _pri_adjacent(q_ab_at(0.05, 0.5), S, 4, 5, 3) < 0
    assert _pri_adjacent(q_ab, {0}, 4, 5, 60) > EPS


def test_pri_ab_exhaustive_top10_at_defaults():
    """The worst case of Pri, checked exhaustively at the defaults: every shared
    aspect set size (γ spread equally over it), every rating pair 1..5, every
    rank pair within the top 10.  One vectorised call."""
    pairs, asp_rows = [], []
    for s_ in range(1, C + 1):
        S = set(range(s_))
        for r_lo in range(1, 5):
            for r_hi in range(r_lo + 1, 6):
                for j1 in range(1, TOP):
                    for j2 in range(j1 + 1, TOP + 1):
                        base = len(asp_rows)
                        asp_rows += [S, S] + [set()] * (j2 - 2)
                        fill = list(range(base + 2, base + j2))
                        truth = {base: r_lo, base + 1: r_hi, **{f: 0 for f in fill}}
                        pre, mid = fill[: j1 - 1], fill[j1 - 1:]
                        pairs += [(truth, pre + [base + 1] + mid + [base]),
                                  (truth, pre + [base] + mid + [base + 1])]
    q = q_ab(_asp(*asp_rows), pairs)
    assert (q[0::2] - q[1::2] > EPS).all()


def test_counterexample_deep_binary():
    asp = _asp({0}, {0}, set())
    truth = {0: 1, 1: 2, 2: 0}
    for m in (q_alpha, q_ndcg):
        q = pairwise(m, asp, truth, [[1, 0, 2], [0, 1, 2], [2, 1, 0], [2, 0, 1]])
        assert (q[0] - q[1]) == (q[2] - q[3]) == 0


def test_counterexample_nonprisat_ndcg():
    asp = _asp(*([{0}] * 10), {0}, {1})
    for n in range(1, 11):
        truth = {**{i: 1 for i in range(n)}, 10: 1, 11: 1}
        q = pairwise(q_ndcg, asp, truth, [list(range(n)) + [11, 10], list(range(n)) + [10, 11]])
        assert q[0] == q[1]


def _topheavcomp_ms(metric, asp, r, M=15):
    """The m <= M for which Q(0 x m, r x m) > Q(r, 0 x (2m-1)) (items 0..14 relevant, 15.. not)."""
    rel, non = list(range(15)), list(range(15, 15 + 2 * M))
    ms = []
    for m in range(1, M + 1):
        truth = {**{i: r for i in rel[:m]}, **{i: 0 for i in non[: 2 * m]}}
        q = pairwise(metric, asp, truth, [non[:m] + rel[:m], [rel[0]] + non[: 2 * m - 1]])
        if q[0] - q[1] > EPS:
            ms.append(m)
    return ms


def test_counterexample_topheavcomp_redundant():
    """All relevant items share one aspect: later relevant items are discounted twice.

    α-nDCG never prefers the deep relevant items; αβ-nDCG with β = 0.5 does not
    for r >= 3.  The single-aspect r = 5 case is the worst case of identical aspect
    sets and bounds β: the axiom holds for β <= 0.2564 (0.2: from m = 4; 0.25: from
    m = 5) and fails for every m (unbounded) from β = 0.2565 on (0.3 checked to m = 15).
    """
    asp = _asp(*([{0}] * 15), *([set()] * 30))
    assert _topheavcomp_ms(q_alpha, asp, 5) == []
    for r in (3, 4, 5):
        assert _topheavcomp_ms(q_ab_at(0.05, 0.5), asp, r) == [], r
    assert _topheavcomp_ms(q_ab_at(0.05, 0.3), asp, 5) == []
    assert _topheavcomp_ms(q_ab_at(0.025, 0.25), asp, 5)[0] == 5
    assert _topheavcomp_ms(q_ab, asp, 5)[0] == 4
    rel, non = list(range(15)), list(range(15, 45))
    # binary nDCG satisfies it already at m = 3
    truth = {**{i: 5 for i in rel[:3]}, **{i: 0 for i in non[:6]}}
    q = pairwise(q_ndcg, asp, truth, [non[:3] + rel[:3], [rel[0]] + non[:5]])
    assert q[0] > q[1]


def test_topheavcomp_ab_exhaustive_identical_aspects_at_defaults():
    """Every shared aspect set size and every rating r = 1..5: some m <= 15 works."""
    for s_ in range(1, C + 1):
        asp = _asp(*([set(range(s_))] * 15), *([set()] * 30))
        for r in range(1, 6):
            assert _topheavcomp_ms(q_ab, asp, r), (s_, r)


def test_topheavcomp_ab_heterogeneous_aspects():
    """Outside the identical-aspects statement: the top item covers all four aspects,
    the others only aspect 0.  The single item at rank 1 then satisfies more
    aspects than m deep, redundant items together, for every m <= 15 at the
    defaults; β <= 0.15 restores the axiom (from m = 7).  Other heterogeneous
    layouts need β lower still, and with more aspects in the catalogue no β > 0
    works for every layout (docs/axioms.md)."""
    asp = _asp({0, 1, 2, 3}, *([{0}] * 14), *([set()] * 30))
    assert _topheavcomp_ms(q_ab, asp, 5) == []
    assert _topheavcomp_ms(q_ab_at(0.015, 0.15), asp, 5)[0] == 7


def test_nonprisat_ab_saturation_depth_at_defaults():
    """The worst NonPriSatAsp case at the defaults: saturating items rated 1 (P = 0.04),
    x rated 2, y rated 1.  y first wins only from n = 139 on (why NSAT = 160)."""
    asp = _asp(*([{0}] * NSAT), {0}, {1})
    x, y = NSAT, NSAT + 1
    pairs = []
    for n in (138, 139):
        truth = {**{i: 1 for i in range(n)}, x: 2, y: 1}
        pairs += [(truth, list(range(n)) + [y, x]), (truth, list(range(n)) + [x, y])]
    q = q_ab(asp, pairs)
    assert q[0] - q[1] <= EPS < q[2] - q[3]


def test_defaults_match_the_table():
    """The αβ-nDCG column is about the library defaults: kernel signature and registry axes."""
    params = inspect.signature(alpha_beta_ndcg).parameters
    assert (params["alpha"].default, params["beta"].default) == AB_DEFAULTS
    assert (AB_ALPHA.default, AB_BETA.default) == AB_DEFAULTS


def test_counterexample_asprel_unweighted():
    asp = _asp({0}, {1}, {0})
    truth = {0: 1, 1: 1, 2: 1}  # the user also liked another aspect-0 item
    for m in (q_alpha, q_ndcg):
        q = pairwise(m, asp, truth, [[0, 1], [1, 0]])
        assert q[0] == q[1]


def test_counterexample_moreasp_ndcg():
    asp = _asp({0}, {1}, {0}, {1})
    truth = {0: 1, 1: 1, 2: 1, 3: 1}
    q = pairwise(q_ndcg, asp, truth, [[0, 3, 2], [0, 2, 3]])
    assert q[0] == q[1]


def test_counterexample_missovernon_binary():
    asp = _asp({0}, set(), {0})  # 0: liked (rated 1); 1: rated 0; 2: unrated with aspect 0
    truth = {0: 1, 1: 0, 2: None}
    for m in (q_alpha, q_ndcg):
        q = pairwise(m, asp, truth, [[2, 1], [1, 2]])
        assert q[0] == q[1] == 0.0


# ---------------------------------------------------------------------------
# docs/axioms.md must carry the same table
# ---------------------------------------------------------------------------
def test_docs_table_matches_expected():
    doc = Path(__file__).resolve().parents[2] / "docs" / "axioms.md"
    text = doc.read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\|\s*\d\.\s*(\w+)[^|]*\|\s*([✓✗])\s*\|\s*([✓✗])\s*\|\s*([✓✗])\s*\|", line)
        if m:
            rows[m.group(1)] = tuple(c == "✓" for c in m.groups()[1:])
    assert rows == EXPECTED
