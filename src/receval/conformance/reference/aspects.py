"""A slow per-user reference for αβ-nDCG (``ab_ndcg``, Parapar & Radlinski, RecSys 2021): plain
Python loops written from the docstrings of ``receval.metrics.aspects.alpha_beta_ndcg`` and of the
``ab_ndcg`` metric (the aspects are the item categories); nothing imports receval's formulas.

Per user *u*, for an item *i* and an aspect φ::

    P(φ | u, i) = 0              if i lacks φ
                = α              if u has not rated i
                = β r_{u,i}/r_max if u rated i (the rating of its matched truth row)

    γ_φ = Σ_{rated i ∋ φ} r_{u,i} / Σ_{φ'} Σ_{rated i ∋ φ'} r_{u,i}   (0 when the sum is 0)

over the user's kept truth rows (``tdup``), relevant or not. Walking the list (every row at a
position ≤ k, in ranked order), each aspect keeps a state ``s_φ`` (1 at the start, times
``1 − P(φ|u,i_j)`` after each item); the gain of the item at slot j is

    G[j] = 1 − Π_{φ ∈ i_j} (1 − P(φ|u,i_j) γ_φ s_φ)

(the factors multiplied in ascending order of their values), DCG = Σ_j G[j] log 2 / log(pos_j + 1)
over the positions pos_j ≤ k (``dup=first`` under ``order=rank`` keeps rank values: a dropped
repeat leaves its position empty). With ``hitscore=positive`` a relevant item scored ≤ 0 is no hit
"nor a positive row": it reads as unrated (P = α).
The normaliser is the DCG of the greedy ideal over the candidates, the user's rated truth rows
with P > 0 and at least one aspect: at each of the k ranks the candidate of the largest
(gain, κ), κ the documented label-free tie key (two rounds of colour refinement from counts,
SplitMix64 sums modulo 2^64, computed here with Python integers); where several candidates
attain it, every choice is followed and the largest DCG kept. r_max is ``rmax`` or the largest
truth rating (1 when that is not positive); the value is DCG / DCG* (0 when DCG* = 0) under the
``empty`` and ``norecs`` policies of the ranking reference.

Refused (any user's rows sharing a position in the top k, under ``ties=optimistic`` or equal rank
values): the gains read the order of the list's items, which the data do not give there. Not
covered (``NotImplementedError``, the case is left out): a negative truth rating (P would be a
negative probability), ``ties=average`` (the expectation over tie orders).
"""

from __future__ import annotations

import math
import struct

from .ranking import RefError, metric_options, policy_values, prepare

ASPECT_DEFAULTS = {"ab_ndcg": {"alpha": 0.02, "beta": 0.2, "rmax": None}}

_M64 = (1 << 64) - 1


def _mix(x: int, salt: int) -> int:
    """SplitMix64's finaliser of ``x + salt`` modulo 2^64."""
    z = (x + salt) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _bits(p: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", p))[0]


def tie_keys(cands: list[tuple[frozenset, float]]) -> list[int]:
    """κ of every candidate (categories, P): h1(d) = Σ_{c∈d} H1(m_c) + H4(bits of P(d)),
    b_c = Σ_{d'∋c} H2(h1(d')), κ(d) = Σ_{c∈d} H3(b_c) + H5(h1(d)); m_c the number of candidates in c."""
    m: dict = {}
    for cs, _ in cands:
        for c in cs:
            m[c] = m.get(c, 0) + 1
    h1 = [(sum(_mix(m[c], 1) for c in cs) + _mix(_bits(p), 4)) & _M64 for cs, p in cands]
    b: dict = {}
    for (cs, _), h in zip(cands, h1):
        for c in cs:
            b[c] = (b.get(c, 0) + _mix(h, 2)) & _M64
    return [(sum(_mix(b[c], 3) for c in cs) + _mix(h, 5)) & _M64 for (cs, _), h in zip(cands, h1)]


def _gain(cs, p: float, gamma: dict, state: dict) -> float:
    f = 1.0
    for term in sorted(1.0 - p * gamma.get(c, 0.0) * state.get(c, 1.0) for c in cs):
        f *= term
    return 1.0 - f


def _disc(j: int) -> float:
    """The discount of the 0-based slot j: log 2 / log(j + 2)."""
    return math.log(2.0) / math.log(j + 2.0)


def ideal_dcg(cands: list[tuple[frozenset, float]], gamma: dict, k: int) -> float:
    """The greedy ideal's DCG: at each rank the candidates of the largest (gain, κ); every one of
    them followed, the largest DCG kept."""
    keys = tie_keys(cands)

    def walk(left: tuple[int, ...], state: dict, acc: float, j: int) -> float:
        if j == k or not left:
            return acc
        scored = [((_gain(cands[x][0], cands[x][1], gamma, state), keys[x]), x) for x in left]
        best = max(s for s, _ in scored)
        out = -math.inf
        for s, x in scored:
            if s != best:
                continue
            cs, p = cands[x]
            st = dict(state)
            for c in cs:
                st[c] = st.get(c, 1.0) * (1.0 - p)
            out = max(out, walk(tuple(y for y in left if y != x), st, acc + best[0] * _disc(j), j + 1))
        return out

    return walk(tuple(range(len(cands))), {}, 0.0, 0)


def per_user_ab(o: dict, k: int, ranked: list, rating_of: dict, kept: list[tuple], cats: dict, r_max: float,
                unmatched: set) -> float:
    """``ranked``: [(position, item)]; ``rating_of``: item -> the rating of its matched truth row;
    ``kept``: [(item, rating)] the user's kept truth rows; ``unmatched``: the indices into
    ``ranked`` of relevant items that are no hit (``hitscore=positive``): they read as unrated."""
    num: dict = {}
    for i, r in kept:
        for c in cats.get(i, ()):
            num[c] = num.get(c, 0.0) + r
    den = sum(num.values())
    gamma = {c: (v / den if den > 0 else 0.0) for c, v in num.items()}

    top = [(j, pos, i) for j, (pos, i) in enumerate(ranked) if pos <= k]
    dcg, state = 0.0, {}
    for j, pos, i in top:
        r = None if j in unmatched else rating_of.get(i)
        cs, p = cats.get(i, frozenset()), (o["alpha"] if r is None else o["beta"] * (r / r_max))
        if cs:
            dcg += _gain(cs, p, gamma, state) * _disc(pos - 1)
        for c in cs:
            state[c] = state.get(c, 1.0) * (1.0 - p)
    cands = [(cats[i], o["beta"] * (r / r_max)) for i, r in kept if cats.get(i)]
    cands = [c for c in cands if c[1] > 0]
    idcg = ideal_dcg(cands, gamma, k)
    return dcg / idcg if idcg > 0 else 0.0


def reference_aspects(recs, truth, metric, k, options=None, *, categories=None):
    """``(per_user, mean)`` of ``ab_ndcg@k``."""
    ctx, o = metric_options(metric, options, ASPECT_DEFAULTS, average=False)
    has_rating = "rating" in truth
    ratings = [float(r) for r in truth["rating"]] if has_rating else [1.0] * len(truth["user_id"])
    if any(r < 0 for r in ratings):
        raise NotImplementedError("a negative rating")
    users = prepare(recs, truth, ctx, metric)
    cats: dict = {}
    for i, c in zip(categories["item_id"], categories["category"]):
        cats[i] = cats.get(i, frozenset()) | {c}
    r_max = float(o["rmax"]) if o["rmax"] is not None else (max(ratings) if ratings and max(ratings) > 0 else 1.0)
    rows: dict = {}  # (user, item) -> the ratings of its truth rows, in order
    for u, i, r in zip(truth["user_id"], truth["item_id"], ratings):
        rows.setdefault((u, i), []).append(r)
    kept: dict = {u: [] for u in users}
    matched: dict = {u: {} for u in users}
    rel = ctx["rel"]
    for data in users.values():  # rows sharing a position in the top k: their order is not in the data
        top = [pos for pos, _ in data["ranked"] if pos <= k]
        if len(set(top)) < len(top):
            raise RefError("rows sharing a position in the top k")
    for (u, i), rs in rows.items():
        mine = rs if ctx["tdup"] == "keep" else [max(rs) if ctx["tdup"] == "max" else rs[0]]
        kept[u].extend((i, r) for r in mine)
        relevant = [r for r in mine if rel is None or r >= rel]
        matched[u][i] = max(relevant) if relevant else mine[0]  # the relevant row of the highest rating, else the first

    def unmatched(u, data) -> set:
        return {j for j, (_, i) in enumerate(data["ranked"])
                if i in matched[u] and (rel is None or matched[u][i] >= rel) and j not in data["hit_rows"]}

    return policy_values(users, ctx, lambda u, data: per_user_ab(o, k, data["ranked"], matched[u], kept[u], cats, r_max,
                                                                 unmatched(u, data)))


# ------------------------------------------------------------------------------------------
# α-nDCG (Clarke et al. 2008), the item categories as subtopics (issue 35: its context options)

ALPHA_DEFAULTS = {"alpha_ndcg": {"alpha": 0.5}}


def _alpha_gain(cs, counts: dict, alpha: float) -> float:
    """G = Σ_{c ∈ cs} (1 − α)^{r_c}, r_c the relevant items above covering c."""
    return sum((1.0 - alpha) ** counts.get(c, 0) for c in cs)


def alpha_ideal(cands: list, alpha: float, k: int) -> float:
    """The greedy ideal's DCG over the candidate category sets: at each of the k ranks a candidate
    of the largest gain; where several attain it, every choice is followed and the largest DCG
    kept (an upper bound of the label-free tie key's choice; a case where they differ is left out
    by the build, the reference and receval then disagreeing)."""

    def walk(left: tuple, counts: dict, acc: float, j: int) -> float:
        if j == k or not left:
            return acc
        scored = [(_alpha_gain(cands[x], counts, alpha), x) for x in left]
        best = max(g for g, _ in scored)
        out = -math.inf
        seen = set()
        for g, x in scored:
            if g != best or cands[x] in seen:
                continue
            seen.add(cands[x])
            c2 = dict(counts)
            for c in cands[x]:
                c2[c] = c2.get(c, 0) + 1
            rest = list(left)
            rest.remove(x)
            out = max(out, walk(tuple(rest), c2, acc + g * _disc(j), j + 1))
        return out

    return walk(tuple(range(len(cands))), {}, 0.0, 0)


def reference_alpha(recs, truth, metric, k, options=None, *, categories=None):
    """``(per_user, mean)`` of ``alpha_ndcg@k``: the hits of each truth user's list (``prepare``:
    order, ties, dup, tdup, rel, hitscore) at positions <= k gain Σ_c (1 − α)^{r_c} over their
    categories, discounted by log2(1 + position); the ideal is the greedy list over the user's
    relevant items (one per kept relevant truth row), cut at k; ``empty``/``norecs`` as for the
    ranking metrics. Rows sharing a position in the top k (``ties=optimistic``) are not covered."""
    ctx, o = metric_options(metric, options, ALPHA_DEFAULTS, average=False)
    alpha = float(o["alpha"])
    users = prepare(recs, truth, ctx, metric)
    cats: dict = {}
    for i, c in zip(categories["item_id"], categories["category"]):
        cats[i] = cats.get(i, frozenset()) | {c}
    has_rating = "rating" in truth
    rows: dict = {}
    for j, (u, i) in enumerate(zip(truth["user_id"], truth["item_id"])):
        rows.setdefault((u, i), []).append(float(truth["rating"][j]) if has_rating else 1.0)
    rel_items: dict = {u: [] for u in users}
    for (u, i), rs in rows.items():
        kept = rs if ctx["tdup"] == "keep" else [max(rs) if ctx["tdup"] == "max" else rs[0]]
        rel_items.setdefault(u, []).extend(i for r in kept if ctx["rel"] is None or r >= ctx["rel"])

    def value(u, data):
        top = [(j, pos, i) for j, (pos, i) in enumerate(data["ranked"]) if pos <= k]
        if len({pos for _, pos, _ in top}) < len(top):
            raise NotImplementedError("rows sharing a position in the top k")
        counts: dict = {}
        dcg = 0.0
        for j, pos, i in top:
            if j not in data["hit_rows"]:
                continue
            cs = cats.get(i, frozenset())
            dcg += _alpha_gain(cs, counts, alpha) * _disc(pos - 1)
            for c in cs:
                counts[c] = counts.get(c, 0) + 1
        idcg = alpha_ideal([cats.get(i, frozenset()) for i in rel_items[u]], alpha, k)
        return dcg / idcg if idcg > 0 else 0.0

    return policy_values(users, ctx, value)
