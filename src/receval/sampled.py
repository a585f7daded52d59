r"""Sampled-negative evaluation (Krichene & Rendle, KDD 2020), with corrected estimators.

Sampled evaluation ranks each held-out positive against *m* sampled negatives instead of the
whole catalogue. Krichene & Rendle show the resulting "sampled metrics" are not consistent
with the full-ranking metrics; they propose corrected estimators. :func:`sampled_evaluate`
computes, for the same scores and the same seed, the **uncorrected** sampled value, the
**bias–variance corrected** value (their BV estimator, γ named) and the **full-ranking** value
(``estimator="full"``), so the gap can be reported.

**The score source** must score every catalogue item for every truth user (sampling needs
the negatives' scores, the full value needs all of them). Either

* a callable ``scores(user_id) -> array`` returning one score per item of ``catalog`` (in the
  order given), or
* a frame (any input :func:`receval.evaluate` reads) with ``user_id``, ``item_id``, ``score``
  holding every (truth user, catalogue item) pair; a missing pair is an error.

**The protocol** (exactly reproducible from the seed): every distinct relevant truth pair
(user *u*, item *i*) is one instance; instances are taken with users in sorted id order and
their positives in sorted item order. The candidates of *u* are the catalogue items that are
neither relevant to *u* nor in ``exclude`` for *u* (e.g. the train items), *C* of them; *A*
of those score above the positive (:math:`s_j > s_i`, or :math:`s_j \ge s_i` with
``ties=pessimistic``). The full rank is :math:`R = 1 + A`. The sampled rank is
:math:`r = 1 + X` where *X*, the number of the *n* negatives drawn uniformly without
replacement from the candidates that score above the positive, is drawn from its exact law,
the hypergeometric distribution :math:`X \sim \mathrm{Hyp}(A, C - A, n)`, with
``numpy.random.default_rng(seed).hypergeometric(A, C - A, n)`` over the instances in order
(one vectorised call: the negatives' identities are never needed, so nothing loops over users).
Values are means over instances (leave-one-out: one per user).

**Metrics** of a rank *r* (one positive): ``hitrate@k`` :math:`\mathbb{1}[r \le k]` (= recall@k),
``ndcg@k`` :math:`\mathbb{1}[r \le k] / \log_2(r + 1)`, ``mrr`` :math:`1/r` (``mrr@k`` cut).

**Estimators.** ``uncorrected``: the metric of the sampled rank. ``bv`` (Krichene & Rendle
§4.2): a corrected value :math:`\tilde M(r)` per sampled rank, the minimiser of

.. math::

    \sum_{R=1}^{N} p(R) \Bigl[\bigl(\mathbb{E}[\tilde M(r) | R] - M(R)\bigr)^2 + \gamma\,\mathrm{Var}[\tilde M(r) | R]\Bigr],
    \qquad P(r | R) = \frac{\binom{R-1}{r-1}\binom{N-R}{n-r+1}}{\binom{N-1}{n}}

(hypergeometric: *r* − 1 of the *n* negatives drawn from the *R* − 1 candidates above the
positive, out of *N* − 1), with *p(R)* uniform over 1..N (*N* the candidates plus the
positive; the paper also fits *p*), solved in closed form:
:math:`\tilde M = [(1-\gamma) P^\top D P + \gamma\,\mathrm{diag}(P^\top D \mathbf{1})]^{-1} P^\top D M`.
``full``: the metric of the full rank *R* (no sampling).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import __version__
from .errors import DataError, SpecError

ESTIMATORS = ("uncorrected", "bv", "full")
_METRICS = ("hitrate", "ndcg", "mrr")


@dataclass
class SampledResults:
    """Values of :func:`sampled_evaluate`: ``values[(spec, estimator)]`` and their signatures."""

    values: dict[tuple[str, str], float]
    signatures: dict[tuple[str, str], str]
    instances: int
    per_instance: dict[str, np.ndarray] = field(default_factory=dict)  # sampled / full ranks

    def __getitem__(self, key: tuple[str, str]) -> float:
        return self.values[key]

    def table(self) -> list[tuple[str, str, float]]:
        return [(s, e, v) for (s, e), v in self.values.items()]


def _metric_of(name: str, k: int | None) -> Callable[[np.ndarray], np.ndarray]:
    kk = np.inf if k is None else k
    if name == "hitrate":
        return lambda r: (r <= kk).astype(np.float64)
    if name == "ndcg":
        return lambda r: np.where(r <= kk, 1.0 / np.log2(r + 1.0), 0.0)
    return lambda r: np.where(r <= kk, 1.0 / r, 0.0)


def _parse(spec: str) -> tuple[str, int | None]:
    name, _, k = spec.strip().lower().partition("@")
    if name not in _METRICS:
        raise SpecError(f"sampled evaluation supports {', '.join(_METRICS)}; got '{spec}'")
    if name != "mrr" and not k:
        raise SpecError(f"'{name}' needs a cut-off: write '{name}@10'")
    try:
        return name, int(k) if k else None
    except ValueError:
        raise SpecError(f"cannot read the cut-off of '{spec}'") from None


def _above(x: np.ndarray, s: float, ties: str) -> int:
    return int(np.sum(x > s) + (np.sum(x == s) if ties == "pessimistic" else 0))


def rank_distribution(N: int, n: int) -> np.ndarray:
    """``P[R-1, r-1] = P(sampled rank r | full rank R)`` for ``R = 1..N`` and ``r = 1..n+1``:
    the hypergeometric pmf of r − 1 successes in n draws from N − 1 items of which R − 1 are
    "above", from log-gamma values (equal to ``scipy.stats.hypergeom.pmf``, much faster)."""
    from scipy.special import gammaln

    def lncomb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ok = (b >= 0) & (b <= a)
        out = np.full(np.broadcast(a, b).shape, -np.inf)
        aa, bb = np.broadcast_arrays(a, b)
        out[ok] = gammaln(aa[ok] + 1) - gammaln(bb[ok] + 1) - gammaln(aa[ok] - bb[ok] + 1)
        return out

    R = np.arange(1, N + 1, dtype=np.float64)[:, None]
    r = np.arange(1, n + 2, dtype=np.float64)[None, :]
    logp = lncomb(R - 1, r - 1) + lncomb(N - R, n - r + 1) - lncomb(np.array(N - 1.0), np.array(float(n)))
    return np.exp(logp)


def bv_correction(metric: Callable[[np.ndarray], np.ndarray], N: int, n: int, gamma: float) -> np.ndarray:
    r"""Corrected values :math:`\tilde M(r)`, ``r = 1..n+1`` (Krichene & Rendle's BV estimator, uniform *p(R)*)."""
    P = rank_distribution(N, n)
    d = np.full(N, 1.0 / N)
    M = metric(np.arange(1, N + 1, dtype=np.float64))
    A = (1 - gamma) * (P.T * d) @ P + gamma * np.diag(P.T @ d)
    return np.linalg.lstsq(A, (P.T * d) @ M, rcond=None)[0]


def _codes(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Position of each value in the sorted unique ``table``, -1 where absent (vectorised)."""
    if len(table) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(table, values), len(table) - 1)
    return np.where(table[pos] == values, pos, -1).astype(np.int64)


def _score_matrix(scores: Any, users: np.ndarray, catalog: np.ndarray) -> np.ndarray:
    """Scores ``[len(users), len(catalog)]``: every truth user's score of every catalogue item."""
    if callable(scores):  # the user's own per-user function: one call per user is its contract
        S = np.empty((len(users), len(catalog)), dtype=np.float64)
        for j, u in enumerate(users.tolist()):
            row = np.asarray(scores(u), dtype=np.float64)
            if row.shape != (len(catalog),):
                raise DataError(f"the score source returned {row.shape} scores for user {u!r}; it must return one per catalogue item ({len(catalog)})")
            S[j] = row
    else:
        from .io import columns_of, read_frame

        c = columns_of(read_frame(scores, "scores"), "scores", {"user": "user_id", "item": "item_id", "score": "score"}, {})
        uc, ic = _codes(c["user"], users), _codes(c["item"], catalog)
        keep = (uc >= 0) & (ic >= 0)
        flat = uc[keep] * len(catalog) + ic[keep]
        flat_s = np.full(len(users) * len(catalog), np.nan)
        seen = np.zeros(len(flat_s), dtype=np.int64)
        np.add.at(seen, flat, 1)
        if (seen > 1).any():
            f = int(np.flatnonzero(seen > 1)[0])
            raise DataError(f"the scores repeat (user {users[f // len(catalog)]!r}, item {catalog[f % len(catalog)]!r}); keep one score per pair")
        flat_s[flat] = c["score"][keep].astype(np.float64)
        if (seen == 0).any():
            f = int(np.flatnonzero(seen == 0)[0])
            raise DataError(
                f"the scores miss (user {users[f // len(catalog)]!r}, item {catalog[f % len(catalog)]!r}); "
                "sampled evaluation needs a score for every catalogue item of every truth user"
            )
        S = flat_s.reshape(len(users), len(catalog))
    if not np.all(np.isfinite(S)):
        u = users[int(np.flatnonzero(~np.isfinite(S).all(axis=1))[0])]
        raise DataError(f"the score source returned NaN or infinite scores for user {u!r}")
    return S


def _candidates_above(S: np.ndarray, never: np.ndarray, inst_u: np.ndarray, inst_i: np.ndarray, pessimistic: bool) -> np.ndarray:
    """For every instance (user row u, positive column i): how many candidates of u (columns
    not in ``never[u]``) score above ``S[u, i]`` (or equal, with ``pessimistic``). Vectorised
    comparisons of the instances' rows, in chunks of at most 2^24 cells."""
    out = np.empty(len(inst_u), dtype=np.int64)
    step = max(1, (1 << 24) // max(S.shape[1], 1))
    for lo in range(0, len(inst_u), step):
        u, i = inst_u[lo:lo + step], inst_i[lo:lo + step]
        rows, sp = S[u], S[u, i][:, None]
        hit = (rows >= sp) if pessimistic else (rows > sp)
        hit &= ~never[u]
        out[lo:lo + step] = hit.sum(axis=1)
    return out


def sampled_evaluate(
    scores: Any,
    truth: Any,
    metrics: list[str] | str,
    *,
    catalog: Any,
    n: int = 100,
    seed: int = 0,
    estimators: tuple[str, ...] = ESTIMATORS,
    gamma: float = 0.01,
    ties: str = "pessimistic",
    exclude: Any = None,
    rel: float | None = None,
) -> SampledResults:
    """Sampled-negative evaluation of a full score source (see the module docs for the exact protocol).

    ``truth`` (user_id, item_id[, rating]) gives the positives (``rel`` a rating threshold),
    ``catalog`` the candidate items, ``exclude`` (user_id, item_id) items never sampled as
    negatives (e.g. the train interactions). ``n`` negatives per positive, drawn with ``seed``.

    >>> import numpy as np
    >>> catalog = [1, 2, 3, 4, 5]
    >>> score = {1: [0.9, 0.8, 0.7, 0.6, 0.5]}          # user 1 ranks items 1..5 in order
    >>> truth = {"user_id": [1], "item_id": [3]}        # the positive has full rank 3
    >>> r = sampled_evaluate(lambda u: score[u], truth, ["hitrate@1"], catalog=catalog, n=4)
    >>> r[("hitrate@1", "full")], r[("hitrate@1", "uncorrected")]   # every negative sampled: 3 either way
    (0.0, 0.0)
    >>> r.instances
    1
    """
    from .io import columns_of, read_frame

    if isinstance(metrics, str):
        metrics = [metrics]
    parsed = [(m, *_parse(m)) for m in metrics]
    if ties not in ("pessimistic", "optimistic"):
        raise SpecError(f"ties must be 'pessimistic' or 'optimistic', got '{ties}'")
    for e in estimators:
        if e not in ESTIMATORS:
            raise SpecError(f"unknown estimator '{e}'; choose from {', '.join(ESTIMATORS)}")
    if not 0 <= gamma <= 1:
        raise SpecError(f"gamma must lie in [0, 1], got {gamma}")
    if n < 1:
        raise SpecError(f"n (negatives per positive) must be at least 1, got {n}")
    cat = np.unique(np.asarray(catalog.to_list() if hasattr(catalog, "to_list") else catalog))
    if cat.dtype.kind in "US":
        cat = cat.astype(object)
    t = columns_of(read_frame(truth, "ground truth"), "ground truth", {"user": "user_id", "item": "item_id"}, {"rating": "rating"})
    relevant = np.ones(len(t["user"]), dtype=bool) if rel is None else t["rating"] >= rel
    if rel is not None and "rating" not in t:
        raise DataError("a relevance threshold needs a rating column in the ground truth")
    tu, ti = t["user"][relevant], t["item"][relevant]
    if len(tu) == 0:
        raise DataError("no relevant truth row: nothing to evaluate")
    users = np.unique(tu)
    # the instances: unique (user, positive) pairs, users in sorted id order, items in sorted order
    pu, pi = _codes(tu, users), _codes(ti, cat)
    if (pi < 0).any():
        bad = np.flatnonzero(pi < 0)[0]
        raise DataError(f"positive (user {tu[bad]!r}, item {ti[bad]!r}) is not in the catalogue; pass a catalog that holds every truth item")
    inst = np.unique(pu * len(cat) + pi)
    inst_u, inst_i = inst // len(cat), inst % len(cat)
    # items that are never negatives of a user: the positives and the excluded items
    nc = inst
    if exclude is not None:
        ex = columns_of(read_frame(exclude, "exclude"), "exclude", {"user": "user_id", "item": "item_id"}, {})
        eu, ei = _codes(ex["user"], users), _codes(ex["item"], cat)
        ok = (eu >= 0) & (ei >= 0)
        nc = np.unique(np.r_[inst, eu[ok] * len(cat) + ei[ok]])
    never = np.zeros((len(users), len(cat)), dtype=bool)  # never a negative: positives, excluded items
    never.ravel()[nc] = True
    S = _score_matrix(scores, users, cat)
    above = _candidates_above(S, never, inst_u, inst_i, ties == "pessimistic")
    cand = len(cat) - never.sum(axis=1)[inst_u]
    short = cand < n
    if short.any():
        j = int(np.flatnonzero(short)[0])
        raise DataError(f"user {users[inst_u[j]]!r} has {int(cand[j])} candidate negatives, fewer than n={n}; lower n or enlarge the catalogue")
    rng = np.random.default_rng(seed)
    # the number of the n sampled negatives (drawn without replacement) that rank above the
    # positive follows the hypergeometric law exactly: drawn directly, no negative's identity needed
    r_s = 1.0 + rng.hypergeometric(above, cand - above, n).astype(np.float64)
    r_f, N = 1.0 + above.astype(np.float64), cand + 1
    values: dict[tuple[str, str], float] = {}
    sigs: dict[tuple[str, str], str] = {}
    base = f"protocol:sampled|n:{n}|seed:{seed}|ties:{ties}|exclude:{'given' if exclude is not None else 'none'}|rel:{'all' if rel is None else format(rel, 'g')}"
    for spec, name, k in parsed:
        fn = _metric_of(name, k)
        for est in estimators:
            if est == "uncorrected":
                v = float(fn(r_s).mean())
            elif est == "full":
                v = float(fn(r_f).mean())
            else:
                tot = 0.0
                for size in np.unique(N):  # one correction per candidate-set size
                    corr = bv_correction(fn, int(size), n, gamma)
                    sel = N == size
                    tot += float(corr[(r_s[sel] - 1).astype(np.int64)].sum())
                v = tot / len(r_s)
            values[(spec, est)] = v
            extra = f"|gamma:{gamma:g}" if est == "bv" else ""
            sigs[(spec, est)] = f"{spec}|{base}|estimator:{est}{extra}|v:{__version__}"
    return SampledResults(values, sigs, len(r_s), {"sampled_rank": r_s, "full_rank": r_f})


__all__ = ["sampled_evaluate", "SampledResults", "bv_correction", "rank_distribution"]
