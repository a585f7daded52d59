r"""Top-k accuracy metrics: precision, recall, F1, hit rate, MRR, MAP, MAR, DCG, NDCG.

Notation (one user *u*; the mean over the averaged users is taken afterwards):

* :math:`L_k` the first *k* recommended items, :math:`\ell_k = |L_k| \le k`;
* :math:`R` the relevant truth items, :math:`rel_i \in \{0,1\}` whether position *i* is a hit;
* :math:`H_k = \sum_{i \le k} rel_i` the hits in the top *k*, :math:`P@i = H_i / i`;
* :math:`r_1` the position of the first hit.

Every function below receives the intermediate form and the cut-offs and returns per-user
values ``[users, len(ks)]``; none loops over users.

The shared worked example (used by the doctests): user 1 is recommended items 10, 20, 30, 40
in that order and likes 20, 40 and 50 (|R| = 3, hits at positions 2 and 4).

Tie-aware values (``ties=average``, McSherry & Najork, ECIR 2008) are the expectation of the
metric over all orderings of the items with equal scores. They are defined for the metrics
linear in the per-position hits: precision, recall, F1, DCG and NDCG (whose ideal DCG does
not depend on the order). A relevant item whose tie group occupies positions
:math:`lo..hi` counts in the top *k*, and contributes to DCG@k, as

.. math::

    E[H_k] = \sum_{hits} \frac{|[lo, hi] \cap [1, k]|}{hi - lo + 1}, \qquad
    E[DCG@k] = \sum_{hits} g(r) \, \frac{\sum_{t=lo}^{\min(hi, k)} disc(t)}{hi - lo + 1}

(equivalently every tied item gets the mean gain of its group, as scikit-learn's
``ndcg_score``). Every other metric refuses ``ties=average``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataError, SpecError
from ..hits import Hits
from ..lists import encoder
from ..options import Axis
from ..registry import register
from ._common import safe_div
from ._ties import hypergeom, lncomb, ragged, tie_group_table, tie_groups

_EXAMPLE = None  # doctest helper is defined in receval.examples


def _sparse(h: Hits) -> bool:
    """Whether hit positions strictly increase within each user (no shared position), so
    sums over hits in (user, position) order equal the row cumsums of the dense form exactly."""
    key = ("sparse_ok",)
    if key not in h._dense:
        hu, hp = h.hit_user, h.hit_pos
        h._dense[key] = bool(np.all((hu[1:] != hu[:-1]) | (hp[1:] > hp[:-1])))
    return h._dense[key]


def _per_k(h: Hits, ks: list[int], weights: np.ndarray | None) -> np.ndarray:
    """``[U, len(ks)]``: Σ weights (default 1) over the hits at positions <= k.

    Summed in (user, position) order, as ``np.cumsum`` along the dense rows adds them (the
    zeros in between add nothing), so the values are identical to the dense form's; memory
    is O(hits), not O(users × k).
    """
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = h.hit_pos <= k
        out[:, j] = np.bincount(h.hit_user[keep], weights=None if weights is None else weights[keep], minlength=h.n_users)
    return out


def _hit_rank(h: Hits) -> np.ndarray:
    """1-based rank of each hit among its user's hits (float64): H at the hit's position."""
    key = ("hitrank",)
    if key not in h._dense:
        hu = h.hit_user
        idx = np.arange(len(hu), dtype=np.int64)
        start = np.maximum.accumulate(np.where(np.r_[True, hu[1:] != hu[:-1]], idx, 0)) if len(hu) else idx
        h._dense[key] = (idx - start + 1).astype(np.float64)
    return h._dense[key]


def _averaged(h: Hits) -> bool:
    """Whether the intermediate form carries tie groups (``ties=average``)."""
    return h.hit_lo is not None


def _expected_hits_at(h: Hits, ks: list[int]) -> np.ndarray:
    """``[U, len(ks)]`` expected hits in the top k over the orderings of each tie group:
    a hit whose group spans positions lo..hi counts |[lo, hi] ∩ [1, k]| / (hi − lo + 1)."""
    lo, hi = h.hit_lo, h.hit_hi
    n = (hi - lo + 1).astype(np.float64)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        inside = np.clip(np.minimum(hi, k) - lo + 1, 0, None).astype(np.float64)
        out[:, j] = np.bincount(h.hit_user, weights=inside / n, minlength=h.n_users)
    return out


def _expected_any_hit(h: Hits, ks: list[int]) -> np.ndarray:
    """``[U, len(ks)]`` P(at least one relevant item in the top k) over the orderings of the tie
    groups: 1 − Π_g C(n_g − r_g, m_g) / C(n_g, m_g), m_g the group's slots inside the top k."""
    gu, lo, n, r = tie_groups(h)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        m = np.clip(k - lo + 1, 0, n)  # slots of the group inside the top k
        log_none = lncomb(n - r, m) - lncomb(n, m)
        total = np.bincount(gu, weights=np.where(np.isinf(log_none), 0.0, log_none), minlength=h.n_users)
        certain = np.bincount(gu, weights=np.isinf(log_none).astype(np.float64), minlength=h.n_users) > 0
        out[:, j] = np.where(certain, 1.0, 1.0 - np.exp(total))
    return out


def _expected_first_rr(h: Hits, ks: list[int]) -> np.ndarray:
    """``[U, len(ks)]`` E[1/r₁ · 1(r₁ ≤ k)] over the orderings of the tie groups. The first hit lies
    in the user's first group holding one (positions lo..hi, r of its n items relevant) at
    lo + j with P(j) = C(n − 1 − j, r − 1) / C(n, r) (McSherry & Najork 2008)."""
    gu, lo, n, r = tie_groups(h)
    first = np.r_[True, gu[1:] != gu[:-1]] if len(gu) else np.zeros(0, dtype=bool)  # groups sorted by (user, lo)
    gu, lo, n, r = gu[first], lo[first], n[first], r[first]
    kmax = max(ks)
    span = np.clip(np.minimum(n - r, kmax - lo), -1, None) + 1  # offsets j = 0 .. min(n − r, kmax − lo)
    rep, jj = ragged(span)
    pos = lo[rep] + jj
    p = np.exp(lncomb(n[rep] - 1 - jj, r[rep] - 1) - lncomb(n[rep], r[rep]))
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = pos <= k
        out[:, j] = np.bincount(gu[rep[keep]], weights=p[keep] / pos[keep], minlength=h.n_users)
    return out


def _expected_all_rr(h: Hits, ks: list[int]) -> np.ndarray:
    """``[U, len(ks)]`` E[Σ_{hits ≤ k} 1/i]: each hit uniform over its group's positions lo..hi."""
    lo, hi = h.hit_lo.astype(np.int64), h.hit_hi.astype(np.int64)
    width = max(1, min(max(ks), int(hi.max()) if len(hi) else 1))
    ch = np.r_[0.0, np.cumsum(1.0 / np.arange(1, width + 1))]
    n = (hi - lo + 1).astype(np.float64)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = lo <= k
        top = np.minimum(hi[keep], min(k, width))
        out[:, j] = np.bincount(h.hit_user[keep], weights=(ch[top] - ch[lo[keep] - 1]) / n[keep], minlength=h.n_users)
    return out


def _hits_at(h: Hits, ks: list[int]) -> np.ndarray:
    """``[U, len(ks)]`` hits in the top k (expected hits with ``ties=average``)."""
    if _averaged(h):
        key = ("ehk", tuple(ks))
        if key not in h._dense:
            h._dense[key] = _expected_hits_at(h, ks)
        return h._dense[key]
    if _sparse(h):
        key = ("hk", tuple(ks))
        if key not in h._dense:
            h._dense[key] = _per_k(h, ks, None)
        return h._dense[key]
    width = h.width(ks)
    return h.cumulative(width)[:, h.cols(ks, width)]


def _col(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)[:, None]


def _len_at(h: Hits, ks: list[int]) -> np.ndarray:
    return np.minimum(_col(h.length), np.asarray(ks, dtype=np.float64)[None, :])




# ---- propensity weights (weight=pop) -----------------------------------------------------

WEIGHT = Axis(
    "weight", "weight", "none", "what a relevant item counts for (test sets missing not at random, Yang et al., RecSys 2018)",
    {
        "none": "1: every relevant item alike",
        "pop": ("its inverse propensity 1/p_i, p_i = (max(n_i, floor) / max_j n_j)^gamma with n_i the item's train rows, "
                "rescaled to mean 1 over the user's relevant items (self-normalised)"),
    },
    silent=True,
)
GAMMA = Axis("gamma", "gamma", None, "γ, the exponent of the popularity propensity of weight=pop (required with it; Yang et al.: p_i ∝ n_i^γ)",
             numeric=True, silent=True)
FLOOR = Axis("floor", "floor", None, "the train count an item with fewer train rows is given by weight=pop (default: none, an item without train rows is refused)",
             numeric=True, silent=True)
WEIGHT_AXES = [WEIGHT, GAMMA, FLOOR]


def _weighted(o: dict) -> bool:
    return o.get("weight") == "pop"


def _weight_hook(o: dict, *_: object) -> dict:
    """``gamma`` and ``floor`` belong to ``weight=pop``: refused without it, ``gamma`` required with it."""
    if not _weighted(o):
        for name in ("gamma", "floor"):
            if o.get(name) is not None:
                raise SpecError(f"write weight=pop with {name}= (e.g. 'recall(weight=pop,gamma=0.5)@10'): {name} sets the propensity of weight=pop")
        return o
    if o.get("gamma") is None:
        raise SpecError("write gamma= with weight=pop (e.g. 'recall(weight=pop,gamma=0.5)@10'): the propensity exponent has no default")
    if o["gamma"] < 0:
        raise SpecError(f"write gamma >= 0 (popular items are the likelier observed), got {o['gamma']:g}")
    if o.get("floor") is not None and o["floor"] <= 0:
        raise SpecError(f"write floor > 0 (a train count), got {o['floor']:g}")
    return o


def _weight_refuse(metric: str, option: str, values: tuple[str, ...]) -> Any:
    """A check hook: ``weight=pop`` refused with ``option`` in ``values`` (no weighted meaning)."""
    def check(o: dict, *_: object) -> None:
        if _weighted(o) and o.get(option) in values:
            raise SpecError(
                f"write {metric}(weight=pop) without {option}={o[option]} (use one of the others): "
                f"{option}={o[option]} has no propensity-weighted definition"
            )
    return check


def _weight_side(o: dict, given: frozenset[str]) -> set[str] | None:
    """``weight=pop`` reads the train interactions; the unweighted metric reads no side input."""
    return {"train"} if _weighted(o) else None


def _weights(h: Hits, o: dict, metric: str) -> tuple[np.ndarray, np.ndarray]:
    r"""``(hit weights [H], relevant-row weights [R])``: :math:`\tilde w_i = w_i |R| / \sum_{j \in R} w_j`
    with :math:`w_i = 1/p_i`, :math:`p_i = (\max(n_i, f) / \max_j n_j)^\gamma`, ``n_i`` the train
    rows of item i (the scale of p cancels in :math:`\tilde w`)."""
    key = ("ipw", o["gamma"], o.get("floor"))
    if key in h._dense:
        return h._dense[key]
    train = h.side.read("train") if h.side is not None else None
    if train is None:
        raise DataError(f"pass train= (or --train FILE): {metric}(weight=pop) reads each item's propensity from its train rows")
    s = h.lists
    counts = np.bincount(encoder(s.universe)(train[1]), minlength=s.n_items).astype(np.float64)
    if o.get("floor") is not None:
        counts = np.maximum(counts, float(o["floor"]))
    assert h.truth_rel is not None and h.hit_truth is not None
    rel_code = s.truth_code[h.truth_rel]
    unseen = counts[rel_code] <= 0
    if unseen.any():
        n_items = len(np.unique(rel_code[unseen]))
        example = s.universe[rel_code[unseen][0]]
        raise DataError(
            f"pass floor=1 to count an item without train rows as seen once, or add it to train: {metric}(weight=pop) "
            f"has no propensity for {n_items} relevant items (e.g. {getattr(example, 'item', lambda: example)()!r})"
        )
    top = float(counts.max())
    with np.errstate(divide="ignore"):  # items without train rows are not relevant here (refused above)
        w_item = np.ones(s.n_items) if o["gamma"] == 0 else (counts / top) ** -float(o["gamma"])
    w_rel = w_item[rel_code]
    # Σ_{j∈R} w_j per user, summed in (user, weight) order: the same bits for every row order
    srt = np.lexsort((w_rel, h.rel_user))
    total = np.bincount(h.rel_user[srt], weights=w_rel[srt], minlength=h.n_users)
    scale = safe_div(h.n_rel.astype(np.float64), total)
    out = (w_item[s.truth_code[h.hit_truth]] * scale[h.hit_user], w_rel * scale[h.rel_user])
    h._dense[key] = out
    return out


def _weighted_hits_at(h: Hits, ks: list[int], w: np.ndarray) -> np.ndarray:
    r"""``[U, len(ks)]`` :math:`\sum_{hits \le k} \tilde w_i` (with ``ties=average`` each hit's
    weight times its group's share inside the top k)."""
    if not _averaged(h):
        return _per_k(h, ks, w)
    lo, hi = h.hit_lo, h.hit_hi
    n = (hi - lo + 1).astype(np.float64)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        inside = np.clip(np.minimum(hi, k) - lo + 1, 0, None).astype(np.float64)
        out[:, j] = np.bincount(h.hit_user, weights=w * inside / n, minlength=h.n_users)
    return out


def _counted_hits(h: Hits, ks: list[int], o: dict, metric: str) -> np.ndarray:
    """Hits in the top k, each counted :math:`\\tilde w_i` under ``weight=pop`` (else 1)."""
    if _weighted(o):
        return _weighted_hits_at(h, ks, _weights(h, o, metric)[0])
    return _hits_at(h, ks)


def _hooks(*hooks: Any) -> Any:
    """One resolve or check hook running ``hooks`` in turn (a resolve hook returns the options)."""
    def run(o: dict, *extra: object) -> Any:
        for hook in hooks:
            res = hook(o, *extra)
            if res is not None:
                o = res
        return o
    return run

# ------------------------------------------------------------------------------------------

AVERAGE = Axis(
    "average", "avg", "macro", "how the users' values are averaged",
    {
        "macro": "the mean over users of each user's value (the standard)",
        "micro": ("pooled over the averaged users: Σ_u numerator / Σ_u denominator (total hits / total slots; "
                  "implicit's precision, scikit-learn's average='micro')"),
    },
    silent=True,
)


def _pooled(o: dict, hk: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``average=micro``: ``[U, len(ks), 2]`` (numerator, denominator) pairs, pooled by the
    aggregator as Σ numerator / Σ denominator (:attr:`receval.registry.Metric.ratio_of_means`);
    else the per-user ratio (0 when the denominator is 0)."""
    den = np.broadcast_to(den, hk.shape)
    if o.get("average") == "micro":
        return np.stack([hk, np.asarray(den, dtype=np.float64)], axis=-1)
    return safe_div(hk, den)


PRECISION_DEN = Axis(
    "denominator", "den", "k", "what the hits are divided by",
    {
        "k": "the cut-off k, even when the list is shorter (RecBole, RePlay >= 0.11, Elliot)",
        "length": "the list length min(k, ℓ) (rs_metrics, DaisyRec 2.x, RecSys2019 DL evaluation)",
        "min_k_r": "min(k, |R|): R-precision style (RecTools r_precision)",
    },
)


@register("precision", axes=[PRECISION_DEN, *WEIGHT_AXES, AVERAGE], resolve_hook=_weight_hook, side=_weight_side, needs_when={"weight": "pop"}, family="classification", ties="closed", bounds=(0.0, 1.0),
          ratio_of_means={"average": "micro"})
def precision(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Precision@k: the share of the top-k list that is relevant.

    Formula
    -------
    .. math:: P@k = \frac{H_k}{D}, \qquad D = k \;|\; \min(k, \ell) \;|\; \min(k, |R|)

    by ``denominator=k`` (default), ``length``, ``min_k_r``; 0 when D = 0.

    ``average=micro`` pools the users instead of averaging their values (:math:`U` the averaged
    users; a user scored 0 by ``empty=zero`` or ``norecs=zero`` adds its :math:`D_u` and no hit,
    a skipped user adds neither; 0 when :math:`\sum_u D_u = 0`):

    .. math:: P^{micro}@k = \frac{\sum_{u \in U} H_{k,u}}{\sum_{u \in U} D_u}

    as implicit's ``ranking_metrics_at_k`` computes its precision (``relevant / pr_div``,
    :math:`D_u = \min(k, |R_u|)`: ``precision(denominator=min_k_r,average=micro)``;
    ``implicit/evaluation.pyx``, benfred/implicit), and as scikit-learn's
    ``precision_score(average='micro')`` does on the users' top-k indicator rows (it sums the true
    and the predicted positives over the cells before dividing, ``sklearn/metrics/_classification.py``:
    ``precision(denominator=length,average=micro)``). Each user's own value stays
    :math:`H_{k,u} / D_u` (per-user output, paired tests).

    With ``weight=pop`` (see recall) a hit counts :math:`\tilde w_i = w_i |R| / \sum_{j \in R} w_j`:
    :math:`P^w@k = \sum_{i \in R \cap L_k} \tilde w_i / D` (it can exceed 1).

    With ``ties=average`` :math:`H_k` is replaced by its expectation over the orderings of
    the tie groups (a hit whose group spans positions *lo..hi* counts the share of the group
    inside the top *k*):

    .. math:: E[H_k] = \sum_{hits} \frac{|[lo, hi] \cap [1, k]|}{hi - lo + 1}

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("precision@4")                 # 2 hits / 4
    0.5
    >>> worked("precision(denominator=min_k_r)@4")   # 2 / min(4, 3)
    0.666667
    >>> from receval import evaluate       # user 1: 1 hit of 3 listed; user 2: 1 hit of 1 listed
    >>> recs = {"user_id": [1, 1, 1, 2], "item_id": [10, 20, 30, 10], "score": [3.0, 2.0, 1.0, 1.0]}
    >>> truth = {"user_id": [1, 2], "item_id": [10, 10]}
    >>> res = evaluate(recs, truth, ["precision(denominator=length)@3", "precision(denominator=length,average=micro)@3"])
    >>> round(res["precision(denominator=length)@3"], 6), res["precision(denominator=length,average=micro)@3"]   # (1/3 + 1/1)/2, (1 + 1)/(3 + 1)
    (0.666667, 0.5)
    >>> from receval.examples import tied          # items 20 and 30 tie at positions 2-3
    >>> tied("precision(ties=average)@2")  # (0 + 1/2) / 2
    0.25
    """
    hk = _counted_hits(h, ks, o, "precision")
    k = np.asarray(ks, dtype=np.float64)[None, :]
    den = {"k": k, "length": _len_at(h, ks), "min_k_r": np.minimum(k, _col(h.n_rel))}[o["denominator"]]
    return _pooled(o, hk, den)


RECALL_DEN = Axis(
    "denominator", "den", "r", "what the hits are divided by",
    {
        "r": "|R|, all relevant items (the standard; trec_eval, RecBole, RePlay, ...)",
        "min_k_r": "min(k, |R|), so a perfect list scores 1 (MultVAE, LensKit)",
        "listed": "|R ∩ L|, the relevant items anywhere in the user's recommendation rows (torchmetrics sees only the scored items)",
    },
)


@register("recall", axes=[RECALL_DEN, *WEIGHT_AXES, AVERAGE], resolve_hook=_weight_hook, side=_weight_side, needs_when={"weight": "pop"}, check_hook=_weight_refuse("recall", "denominator", ("listed",)), family="classification", ties="closed", bounds=(0.0, 1.0),
          ratio_of_means={"average": "micro"})
def recall(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Recall@k: the share of the relevant items found in the top k.

    Formula
    -------
    .. math:: R@k = \frac{H_k}{D}, \qquad D = |R| \;|\; \min(k, |R|) \;|\; |R \cap L|

    by ``denominator=r`` (default), ``min_k_r`` or ``listed`` (the relevant items present
    anywhere in the user's rows, not only the top k; 0 when D = 0).

    With ``ties=average`` :math:`H_k` is replaced by its expectation over the orderings of
    the tie groups (a hit whose group spans positions *lo..hi* counts the share of the group
    inside the top *k*):

    .. math:: E[H_k] = \sum_{hits} \frac{|[lo, hi] \cap [1, k]|}{hi - lo + 1}

    ``average=micro`` pools the users (total hits / total relevant items; a user scored 0 by
    ``empty=zero`` or ``norecs=zero`` adds its :math:`D_u` and no hit, a skipped user neither; 0
    when :math:`\sum_u D_u = 0`; as scikit-learn's ``recall_score(average='micro')`` over the
    users' top-k indicator rows, which sums the true positives and the relevant cells before
    dividing, ``sklearn/metrics/_classification.py``):

    .. math:: R^{micro}@k = \frac{\sum_{u \in U} H_{k,u}}{\sum_{u \in U} D_u}

    With ``weight=pop`` (test sets missing not at random; Yang et al., RecSys 2018) each
    relevant item counts its inverse propensity, read from the ``train`` side input:
    :math:`p_i = (\max(n_i, f)/\max_j n_j)^\gamma`, :math:`n_i` the train rows of item *i*,
    *f* the ``floor`` (without it an item with no train rows is refused), :math:`w_i = 1/p_i`.
    Recall is the self-normalised estimator (the scale of *p* cancels; ``gamma=0`` is recall):

    .. math:: R^w@k = \frac{\sum_{i \in R \cap L_k} w_i}{\sum_{i \in R} w_i}

    The other weighted metrics count the same :math:`\tilde w_i = w_i |R| / \sum_{j \in R} w_j`
    (mean 1 over the user's relevant items) where they count a hit. ``ties=average`` multiplies
    each hit's term by its weight; ``denominator=listed`` has no weighted form.

    Examples
    --------
    >>> from receval import evaluate   # train rows: 10 → 4, 20 → 2, 40 → 2, 50 → 1
    >>> train = {"user_id": [1, 2, 3, 4, 1, 2, 3, 4, 5], "item_id": [10, 10, 10, 10, 20, 20, 40, 40, 50]}
    >>> recs = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [4.0, 3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1, 1, 1], "item_id": [20, 40, 50]}
    >>> evaluate(recs, truth, ["recall(weight=pop,gamma=1)@4"], train=train)["recall(weight=pop,gamma=1)@4"]  # (2 + 2) / (2 + 2 + 4)
    0.5
    >>> from receval.examples import worked
    >>> worked("recall@4")                    # 2 hits / |R| = 3
    0.666667
    >>> worked("recall(denominator=min_k_r)@2")   # 1 hit / min(2, 3)
    0.5
    >>> worked("recall(denominator=listed)@2")    # 1 hit / 2 relevant items in the list
    0.5
    >>> recs = {"user_id": [1, 2], "item_id": [10, 10], "score": [1.0, 1.0]}   # user 1 likes 10, 20, 30; user 2 likes 10
    >>> truth = {"user_id": [1, 1, 1, 2], "item_id": [10, 20, 30, 10]}
    >>> res = evaluate(recs, truth, ["recall@1", "recall(average=micro)@1"])
    >>> round(res["recall@1"], 6), res["recall(average=micro)@1"]   # (1/3 + 1/1)/2, (1 + 1)/(3 + 1)
    (0.666667, 0.5)
    >>> from receval.examples import tied          # items 20 and 30 tie at positions 2-3
    >>> tied("recall(ties=average)@2")  # (1/2) / 3
    0.166667
    """
    hk = _counted_hits(h, ks, o, "recall")
    r = _col(h.n_rel)
    if o["denominator"] == "listed":
        r = _col(np.bincount(h.listed()[0], minlength=h.n_users))
    den = np.minimum(r, np.asarray(ks, dtype=np.float64)[None, :]) if o["denominator"] == "min_k_r" else r
    return _pooled(o, hk, den)


F1_AGG = Axis(
    "aggregate", "agg", "users", "where the harmonic mean is taken",
    {
        "users": "per user, then averaged",
        "means": "of the averaged precision and recall (RecSys2019 DL evaluation's F1)",
    },
)


@register("f1", axes=[F1_AGG], family="classification", ties="closed", bounds=(0.0, 1.0), f1_of_means={"aggregate": "means"})
def f1(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""F1@k: the harmonic mean of precision (÷k) and recall (÷|R|).

    Formula
    -------
    .. math:: F_1@k = \frac{2\,P@k\,R@k}{P@k + R@k} = \frac{2 H_k}{k + |R|}

    per user (``aggregate=users``, default). With ``aggregate=means`` the harmonic mean of the
    averaged precision and recall is reported instead (computed at aggregation time).

    With ``ties=average`` :math:`H_k` is its expectation over the orderings of the tie groups
    (see precision), so per user

    .. math:: F_1@k = \frac{2\,E[H_k]}{k + |R|}

    which is the expectation of the per-user F1, since the denominator does not depend on the
    order (``aggregate=means`` combines the expected precision and recall).

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("f1@4")                        # 2·2 / (4 + 3)
    0.571429
    >>> from receval.examples import tied          # items 20 and 30 tie at positions 2-3
    >>> tied("f1(ties=average)@2")  # 2·(1/2) / (2 + 3)
    0.2
    """
    hk = _hits_at(h, ks)
    k = np.asarray(ks, dtype=np.float64)[None, :]
    if o["aggregate"] == "means":
        # carry precision and recall side by side; the aggregator combines the means
        p = hk / k
        r = safe_div(hk, np.broadcast_to(_col(h.n_rel), hk.shape))
        return np.stack([p, r], axis=-1)
    return safe_div(2 * hk, k + _col(h.n_rel))


HR_COUNT = Axis(
    "count", "count", "any", "what a user contributes",
    {
        "any": "1 if the top k holds at least one hit, else 0 (the standard)",
        "hits": "the number of hits H_k, so the mean can exceed 1 (RecSys2019 DL evaluation: = precision·k)",
    },
)


@register("hitrate", axes=[HR_COUNT, *WEIGHT_AXES], resolve_hook=_weight_hook, side=_weight_side, needs_when={"weight": "pop"}, check_hook=_weight_refuse("hitrate", "count", ("any",)), family="classification", ties="closed", bounds=(0.0, 1.0))
def hitrate(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""HitRate@k: the share of users with at least one relevant item in the top k.

    Formula
    -------
    .. math:: HR@k = \mathbb{1}[H_k > 0] \quad\text{or, with count=hits,}\quad H_k

    With ``weight=pop`` (see recall; only ``count=hits``, since positive weights leave the
    indicator as it is) :math:`H_k` is :math:`\sum_{i \in R \cap L_k} \tilde w_i`.

    With ``ties=average`` (the expectation over the orderings of the tie groups) ``count=hits``
    is the expected :math:`H_k`, and ``count=any`` the probability of a hit in the top k: a tie
    group of *n* items, *r* of them relevant, with *m* of its positions inside the top k misses
    with probability :math:`\binom{n-r}{m} / \binom{n}{m}` (groups order independently):

    .. math:: E[HR@k] = 1 - \prod_{g} \binom{n_g - r_g}{m_g} \Big/ \binom{n_g}{m_g}

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("hitrate@1"), worked("hitrate@2"), worked("hitrate(count=hits)@4")
    (0.0, 1.0, 2.0)
    >>> from receval.examples import tied          # items 20 and 30 tie at positions 2-3
    >>> tied("hitrate(ties=average)@2")             # user 1: 20 relevant: 1/2 at position 2
    0.5
    """
    hk = _counted_hits(h, ks, o, "hitrate")
    if o["count"] == "hits":
        return hk
    return _expected_any_hit(h, ks) if _averaged(h) else (hk > 0).astype(np.float64)


MRR_HITS = Axis(
    "hits", "hits", "first", "which hits contribute a reciprocal rank",
    {
        "first": "only the first hit: 1/r₁ (the standard)",
        "all": "every hit: Σ 1/i over hits, can exceed 1 (DaisyRec 1.x, a.k.a. ARHR)",
    },
)


@register("mrr", axes=[MRR_HITS], ties="closed", bounds=(0.0, 1.0))
def mrr(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""MRR@k: the reciprocal rank of the first relevant item in the top k.

    Formula
    -------
    .. math:: RR@k = \frac{1}{r_1}\,\mathbb{1}[r_1 \le k] \quad\text{or, with hits=all,}\quad \sum_{i \le k} \frac{rel_i}{i}

    With ``ties=average`` (McSherry & Najork 2008) the first hit lies in the first tie group
    that holds one (positions *lo..hi*, *r* of its *n* items relevant), at *lo + j* with
    probability :math:`\binom{n-1-j}{r-1} / \binom{n}{r}`; with ``hits=all`` each hit is
    uniform over its group's positions:

    .. math:: E[RR@k] = \sum_{j=0}^{n-r} \frac{\binom{n-1-j}{r-1}}{\binom{n}{r}} \frac{\mathbb{1}[lo + j \le k]}{lo + j},
              \qquad E[\textstyle\sum] = \sum_{hits} \frac{1}{n} \sum_{t=lo}^{\min(hi, k)} \frac{1}{t}

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("mrr@4")                       # first hit at 2
    0.5
    >>> worked("mrr(hits=all)@4")             # 1/2 + 1/4
    0.75
    >>> from receval.examples import tied      # items 20 (relevant) and 30 tie at positions 2-3
    >>> tied("mrr(ties=average)@4")             # (1/2 + 1/3) / 2
    0.416667
    """
    if _averaged(h):
        return _expected_first_rr(h, ks) if o["hits"] == "first" else _expected_all_rr(h, ks)
    k = np.asarray(ks)[None, :]
    if o["hits"] == "first":
        r1 = _col(h.first_hit)
        return np.where((r1 > 0) & (r1 <= k), safe_div(np.ones_like(r1), r1), 0.0)
    width = h.width(ks)
    if _sparse(h):
        return _per_k(h, ks, 1.0 / h.hit_pos.astype(np.float64))
    dense = h.dense(width) / np.arange(1, width + 1)[None, :]
    return np.cumsum(dense, axis=1)[:, h.cols(ks, width)]


AP_DEN = Axis(
    "denominator", "den", "min_k_r", "D, what the sum of precisions is divided by",
    {
        "min_k_r": "min(k, |R|): the standard (RecBole, RePlay, NeuRec C++)",
        "r": "|R|, all relevant items (MS Recommenders `map`, Beta-RecSys, rs_metrics >= 0.5, trec_eval, ranx)",
        "k": "the cut-off k (DaisyRec 1.x divides by the list length = k; Elliot's mean of P@1..k)",
        "length": "the list length min(k, ℓ) (RecSys_Course successor of the DL evaluation)",
        "min_length_r": "min(min(k, ℓ), |R|) (RecSys2019 DL evaluation)",
        "hits": "H_k, the number of hits: the mean of P@i at hit positions (DaisyRec 2.x, torchmetrics)",
        "cumulative_min": "Σ_{i≤k} min(i, |R|): NeuRec's Python backend bug (cumsum applied to min(i, |R|))",
    },
)
AP_IND = Axis(
    "indicator", "ind", "yes", "whether P@i counts only at relevant positions",
    {
        "yes": "Σ P@i·rel_i (the standard)",
        "no": "Σ P@i over every position 1..k (Elliot's MAP; seed 001's worked example)",
        "distinct": "Σ P@i·1[a hit at i]: a position shared by several hits (equal ranks, order=rank_value) counts once (RecTools' MAP); the same as yes when positions are distinct",
    },
)


def _ap_den(h: Hits, ks: list[int], name: str, hk: np.ndarray) -> np.ndarray:
    k = np.asarray(ks, dtype=np.float64)[None, :]
    r = _col(h.n_rel)
    if name == "min_k_r":
        return np.minimum(k, r)
    if name == "r":
        return np.broadcast_to(r, hk.shape)
    if name == "k":
        return np.broadcast_to(k, hk.shape)
    if name == "length":
        return _len_at(h, ks)
    if name == "min_length_r":
        return np.minimum(_len_at(h, ks), r)
    if name == "hits":
        return hk
    if name == "cumulative_min":
        # Σ_{i=1..k} min(i, |R|) = |R|(|R|+1)/2 + (k-|R|)|R| for k >= |R|, else k(k+1)/2
        m = np.minimum(k, r)
        return m * (m + 1) / 2 + (k - m) * r
    raise AssertionError(name)  # pragma: no cover - values are validated by the axis


def _harmonic_gap(lo: int, hi: int) -> float:
    """Σ_{i=lo+1}^{hi} 1/i (0 when hi <= lo): summed exactly up to 2^22 terms, else by the
    digamma function (ψ(hi+1) − ψ(lo+1), relative error ~1e-16)."""
    if hi <= lo:
        return 0.0
    if hi - lo <= 1 << 22:
        return float(np.sum(1.0 / np.arange(lo + 1, hi + 1, dtype=np.float64)))
    from scipy.special import digamma

    return float(digamma(hi + 1.0) - digamma(lo + 1.0))


def _slots_sum(lo: np.ndarray, m: np.ndarray, x: np.ndarray, before: np.ndarray, n_rel: np.ndarray,
               inner: str, indicator: str, hm: np.ndarray, chm: np.ndarray, wk: float, k: int) -> np.ndarray:
    """E[the hits' share of Σ_{i≤k} w_i·H_i·(rel_i or 1)] for x relevant items placed uniformly
    in the m slots lo..lo+m−1 (``before`` relevant items above them); w_i = 1/i (precision) or
    1/|R| (recall)."""
    xf, mf = x.astype(np.float64), m.astype(np.float64)
    if indicator == "yes":  # Σ_hits w(p)·H_p: slot lo+t relevant w.p. x/m, then h_b + 1 + t(x−1)/(m−1) hits
        if inner == "precision":
            s0 = hm[lo + m - 1] - hm[lo - 1]  # Σ_{t<m} 1/(lo + t)
            s1 = mf - lo * s0  # Σ_{t<m} t/(lo + t)
        else:
            s0, s1 = mf / n_rel, mf * (mf - 1) / 2 / n_rel
        rho = np.where(m > 1, (xf - 1) / np.maximum(mf - 1, 1), 0.0)
        return np.where(m > 0, xf / np.maximum(mf, 1), 0.0) * ((before + 1) * s0 + rho * s1)
    # indicator=no: Σ_{i≤k} w_i H_i = Σ_hits Σ_{i=p}^{k} w_i, a hit uniform over the m slots
    if inner == "precision":
        mean_before = (chm[lo + m - 1] - chm[lo - 1]) / np.maximum(mf, 1)  # mean of H_{p−1} (harmonic)
        return xf * (wk - mean_before)
    return xf * (k - (2 * lo + mf - 3) / 2) / n_rel  # Σ_{i=p}^{k} 1/|R| = (k − p + 1)/|R|


def _expected_average(h: Hits, ks: list[int], o: dict, inner: str) -> np.ndarray:
    """``[U, len(ks)]`` E[AP@k] (``inner=precision``) or E[AR@k] (``recall``) over the orderings of
    the tie groups, for both indicators and every denominator. Only the group straddling k
    makes the hits in the top k random: conditioned on the x relevant items among its m slots
    inside the top k (hypergeometric), its relevant items are uniform over those slots, so the
    sum is exact in closed form and D = H_k (``denominator=hits``) is fixed; the expectation is
    then a finite sum over x."""
    gu, lo, n, r, before = tie_group_table(h)
    n_rel = h.n_rel[gu].astype(np.float64)
    # as wide as the cut-offs (not the data), so that every batch of users sums the same terms
    width = max(h.width(ks), int((lo + n - 1).max()) if len(lo) else 1)
    hm = np.r_[0.0, np.cumsum(1.0 / np.arange(1, width + 1))]  # hm[i] = Σ_{j≤i} 1/j
    chm = np.r_[0.0, np.cumsum(hm)]  # chm[i] = Σ_{j<i} hm[j]
    den_name = o["denominator"]
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        wk = float(hm[min(k, width)]) + _harmonic_gap(width, k)
        m = np.clip(k - lo + 1, 0, n)
        full = m == n
        part = np.flatnonzero((m > 0) & (m < n))  # at most one group per user straddles k
        fixed = _slots_sum(lo[full], n[full], r[full], before[full], n_rel[full], inner, o["indicator"], hm, chm, wk, k)
        a = np.bincount(gu[full], weights=fixed, minlength=h.n_users)
        hfix = np.bincount(gu[full], weights=r[full].astype(np.float64), minlength=h.n_users)
        # expand each straddling group over x = max(0, m − (n − r)) .. min(r, m)
        x_lo = np.maximum(0, m[part] - (n[part] - r[part]))
        cnt = np.minimum(r[part], m[part]) - x_lo + 1
        j_, off = ragged(cnt)
        rep, x = part[j_], x_lo[j_] + off
        p = hypergeom(n[rep], r[rep], m[rep], x)
        b = _slots_sum(lo[rep], m[rep], x, before[rep], n_rel[rep], inner, o["indicator"], hm, chm, wk, k)
        if den_name == "hits":
            res = safe_div(a, hfix)
            u = gu[rep]
            res[gu[part]] = 0.0
            res += np.bincount(u, weights=p * safe_div(a[u] + b, hfix[u] + x), minlength=h.n_users)
            out[:, j] = res
        else:
            out[:, j] = a + np.bincount(gu[rep], weights=p * b, minlength=h.n_users)
    if den_name == "hits":
        return out
    return safe_div(out, _ap_den(h, ks, den_name, out))


def _weighted_ap(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    """``[U, len(ks)]`` Σ_{hits ≤ k} w̃_i P@pos_i / D (``indicator=yes``), D counting hits by weight."""
    w = _weights(h, o, "map")[0]
    hu, hp = h.hit_user, h.hit_pos
    # H at each hit's position: the user's hits at positions <= it (several may share one)
    key = hu * (int(hp.max()) + 1 if len(hp) else 1) + hp
    above = np.searchsorted(key, key, side="right") - np.searchsorted(hu, hu)
    num = _per_k(h, ks, w * above / hp.astype(np.float64))
    return safe_div(num, _ap_den(h, ks, o["denominator"], _per_k(h, ks, w)))


def _average_precision(h: Hits, ks: list[int], o: dict, inner: str) -> np.ndarray:
    if _weighted(o):
        return _weighted_ap(h, ks, o)
    width = h.width(ks)
    ind = o["indicator"]
    if ind == "distinct" and (_averaged(h) or _sparse(h)):  # every position holds at most one hit
        o, ind = dict(o, indicator="yes"), "yes"
    if _averaged(h):
        return _expected_average(h, ks, o, inner)
    if ind == "yes" and _sparse(h):
        c = _hit_rank(h)
        if inner == "precision":
            w = c / h.hit_pos.astype(np.float64)
        else:
            w = c / h.n_rel[h.hit_user].astype(np.float64)  # a hit's user has |R| >= 1
        hk = _hits_at(h, ks)
        return safe_div(_per_k(h, ks, w), _ap_den(h, ks, o["denominator"], hk))
    cum = h.cumulative(width)
    pos = np.arange(1, width + 1, dtype=np.float64)[None, :]
    if inner == "precision":
        at_i = cum / pos
    else:  # recall at i
        at_i = safe_div(cum, np.broadcast_to(_col(h.n_rel), cum.shape))
    if ind == "yes":
        at_i = at_i * h.dense(width)
    elif ind == "distinct":
        at_i = at_i * (h.dense(width) > 0)
    cols = h.cols(ks, width)
    num = np.cumsum(at_i, axis=1)[:, cols]
    hk = cum[:, cols]
    if ind == "no" and max(ks) > width:
        # positions past every list keep H constant: P@i = H/i, R@i = H/|R| (no array as wide as k)
        for j, k in enumerate(ks):
            if k > width:
                if inner == "precision":
                    num[:, j] = num[:, j] + cum[:, -1] * _harmonic_gap(width, k)
                else:
                    num[:, j] = num[:, j] + at_i[:, -1] * float(k - width)
    return safe_div(num, _ap_den(h, ks, o["denominator"], hk))


@register("map", axes=[AP_DEN, AP_IND, *WEIGHT_AXES], resolve_hook=_weight_hook, side=_weight_side, needs_when={"weight": "pop"}, check_hook=_weight_refuse("map", "indicator", ("no", "distinct")), ties="closed", ties_settled={"weight": "pop"}, bounds=(0.0, 1.0))
def map_(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""MAP@k: the mean over users of average precision at k.

    Formula
    -------
    .. math:: AP@k = \frac{1}{D} \sum_{i=1}^{k} P@i \cdot w_i, \qquad P@i = \frac{H_i}{i}

    with :math:`w_i = rel_i` (``indicator=yes``, default), :math:`w_i = 1` (``indicator=no``)
    or :math:`w_i = 1[\text{a hit at } i]` (``indicator=distinct``: with equal ranks several
    hits share a position, which then counts once), and D one of: :math:`\min(k,|R|)` (default), :math:`|R|`, *k*,
    :math:`\min(k,\ell)`, :math:`\min(k,\ell,|R|)`, :math:`H_k`, or
    :math:`\sum_{i\le k}\min(i,|R|)`. AP is 0 when D = 0.

    With ``weight=pop`` (see recall; ``indicator=yes`` only) each hit's term is multiplied by
    its :math:`\tilde w_i` and ``denominator=hits`` is :math:`\sum_{hits \le k} \tilde w_i`:
    :math:`AP^w@k = \frac{1}{D}\sum_{i \in R \cap L_k} \tilde w_i\, P@\mathrm{pos}_i`.
    ``ties=average`` has no closed form here: computed where no tie reaches into the top k.

    With ``ties=average`` (McSherry & Najork 2008) the value is its expectation over the
    orderings of the tie groups, for both indicators and every denominator. In a group at
    positions *lo..hi* with *n* items, *r* relevant and :math:`h_b` relevant items in the groups
    above, position *lo + t* is relevant with probability r/n and then holds
    :math:`c_t = h_b + 1 + t\rho` hits in expectation, ρ = (r − 1) / (n − 1) (0 for a group of one):

    .. math:: E[\sum_{i \le k} \frac{rel_i H_i}{i}] = \sum_g \frac{r}{n} \sum_{t=0}^{m-1}
              \frac{c_t}{lo + t}, \qquad m = \min(n, k - lo + 1)

    With ``indicator=no`` each hit adds :math:`\sum_{i=p}^{k} 1/i` from its position p, averaged
    over the group's slots. Only the group straddling k makes :math:`H_k` random: for
    ``denominator=hits`` the value is conditioned on the x relevant items among its m slots in
    the top k (hypergeometric; given x they are uniform over those slots, i.e. a group of m
    with x relevant) and averaged, :math:`E[AP] = \sum_x P(x)\, E[S \mid x] / (H_{fixed} + x)`.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("map@4")                          # (1/2 + 2/4) / min(4, 3)
    0.333333
    >>> worked("map(denominator=r)@4")           # (1/2 + 2/4) / 3
    0.333333
    >>> worked("map(denominator=hits)@4")        # (1/2 + 2/4) / 2
    0.5
    >>> worked("map(indicator=no,denominator=k)@4")  # (0 + 1/2 + 1/3 + 2/4) / 4
    0.333333
    >>> worked("map(denominator=cumulative_min)@4")  # (1/2 + 2/4) / (1 + 2 + 3 + 3)
    0.111111
    >>> from receval import evaluate                # 20 and 40 both at rank 2 (order=rank_value)
    >>> recs = {"user_id": [1, 1, 1], "item_id": [10, 20, 40], "rank": [1, 2, 2]}
    >>> truth = {"user_id": [1, 1], "item_id": [20, 40]}
    >>> evaluate(recs, truth, ["map(indicator=distinct)@2"], order="rank_value").value("map(indicator=distinct)@2")
    0.5
    >>> evaluate(recs, truth, ["map@2"], order="rank_value").value("map@2")   # 2 · (2/2) / 2
    1.0
    >>> from receval.examples import tied       # 20 (relevant) and 30 tie at 2-3; 40 at 4
    >>> tied("map(ties=average)@4")              # ((1/2)(1/2 + 1/3) + 2/4) / 3
    0.305556
    >>> tied("map(ties=average,denominator=hits)@2")  # 20 at 2 w.p. 1/2: (1/2)(1/2 / 1)
    0.25
    """
    return _average_precision(h, ks, o, "precision")


MAR_IND = Axis(
    "indicator", "ind", "no", "whether R@i counts only at relevant positions",
    {
        "no": "Σ R@i over every position 1..k (Elliot's MAR, seed 004)",
        "yes": "Σ R@i·rel_i",
    },
)
MAR_DEN = Axis(
    "denominator", "den", "k", "D, what the sum of recalls is divided by",
    {v: d for v, d in AP_DEN.values.items()},
)


@register("mar", axes=[MAR_DEN, MAR_IND], ties="closed", bounds=(0.0, 1.0))
def mar(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""MAR@k: the mean over users of average recall at k.

    Formula
    -------
    .. math:: AR@k = \frac{1}{D} \sum_{i=1}^{k} R@i \cdot w_i, \qquad R@i = \frac{H_i}{|R|}

    By default :math:`w_i = 1` and D = k: the mean of R@1..R@k (Elliot's MAR and the
    worked example of seed 004); ``indicator`` and ``denominator`` take the same values as MAP.

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("mar@4")                          # (0 + 1/3 + 1/3 + 2/3) / 4
    0.333333

    ``ties=average`` takes the expectation as for MAP (every indicator and denominator):

    >>> from receval.examples import tied       # 20 (relevant) and 30 tie at 2-3; 40 at 4
    >>> tied("mar(ties=average)@4")             # (0 + (1/2)(1/3) + 1/3 + 2/3) / 4
    0.291667
    """
    return _average_precision(h, ks, o, "recall")


# ---- DCG / NDCG -------------------------------------------------------------------------

GAIN = Axis(
    "gain", "gain", "binary", "the gain of a relevant item with rating r",
    {
        "binary": "1",
        "linear": "r (the rating itself)",
        "exp2": "2^r − 1",
        "shifted": "2^(r − t + 1) − 1 with t the option `t` (Elliot)",
    },
)
GAIN_T = Axis("t", "t", None, "t of the shifted gain (default: the relevance threshold, or 0)", numeric=True)
IDEAL = Axis(
    "ideal", "ideal", "cut", "the ideal DCG that normalises",
    {
        "cut": "the user's min(k, |R|) best gains at the top (the standard)",
        "uncut": "all |R| of the user's gains, not cut at k (RecSys2019 DL evaluation, OpenRec tf1)",
        "k": "all k slots hold a relevant item of the user's best gain (RecTools default)",
        "length": "as k, cut at the list's own length: min(k, ℓ) slots, each of the user's best gain (CAPRI's ndcgk counts every listed slot in IDCG)",
        "hits": "the list's own hits moved to the top (DaisyRec, NGCF): 1 whenever all hits lead",
        "listed": "the user's relevant items found anywhere in the list, best gains first, cut at k (torchmetrics sees only the scored items)",
        "none": "no normalisation: the value is DCG@k (OpenRec tf2's NDCG)",
    },
)
NEG = Axis(
    "neg", "neg", "error", "a negative graded gain (a relevant rating below 0 with gain=linear/exp2, below t − 1 with gain=shifted)",
    {
        "error": "refuse the input: with negative gains the ideal DCG is no longer a maximum and NDCG can exceed 1",
        "zero": "count a negative gain as 0 (LensKit's choice)",
    },
)
BASE = Axis(
    "base", "base", 2.0, "the logarithm base of the discount 1/log_b(i+1)", numeric=True,
)
DISCOUNT = Axis(
    "discount", "disc", "log",
    "the rank discount of position i",
    {
        "log": "1/log_b(i+1): positions 1, 2, 3 weigh 1, 0.631, 0.5 (Burges et al. 2005; most libraries)",
        "logmax2": "1/log_b(max(i,2)): positions 1 and 2 both weigh 1, then 1/log_b(i) (Järvelin & Kekäläinen 2002; LensKit's default)",
    },
)


def _gain(values: np.ndarray, o: dict) -> np.ndarray:
    g = o["gain"]
    if g == "binary":
        return np.ones_like(values)
    if g == "linear":
        out = values.astype(np.float64)
    elif g == "exp2":
        out = np.exp2(values) - 1.0
    else:
        out = np.exp2(values - o["t"] + 1.0) - 1.0
    negative = out < 0
    if negative.any():
        if o.get("neg") == "zero":
            return np.where(negative, 0.0, out)

        worst = float(values[negative].min())
        raise DataError(
            f"{int(negative.sum())} relevant truth rows have a negative gain under gain={g} (lowest rating {worst:g}): "
            "the ideal DCG would be a minimum and NDCG could exceed 1; pass neg=zero to count them as 0 "
            "(e.g. 'ndcg(gain=linear,neg=zero)@10'), or a relevance threshold rel >= 0"
        )
    return out


def _disc_at(pos: np.ndarray, base: Any) -> np.ndarray:
    """The discount of 1-based positions ``pos``; ``base`` is the log base, or ``(base, discount)``."""
    b, kind = base if isinstance(base, tuple) else (base, "log")
    arg = pos + 1.0 if kind == "log" else np.maximum(pos, 2.0)
    return np.log(b) / np.log(arg)


def _discount(width: int, base: Any) -> np.ndarray:
    return _disc_at(np.arange(1, width + 1, dtype=np.float64), base)


def _discount_prefix(ks: list[int], base: Any) -> np.ndarray:
    """Σ_{i=1}^{k} disc(i) for each k (the ideal of k slots): one cumsum up to 2^22 positions,
    beyond it in chunks, so memory stays bounded whatever k."""
    kmax = max(ks)
    if kmax <= 1 << 22:
        return np.cumsum(_discount(kmax, base))[np.asarray(ks) - 1]
    out = np.empty(len(ks), dtype=np.float64)
    order = np.argsort(ks)
    carry, start, step, j = 0.0, 0, 1 << 22, 0
    while j < len(ks):
        stop = min(start + step, kmax)
        cs = carry + np.cumsum(_disc_at(np.arange(start + 1, stop + 1, dtype=np.float64), base))
        while j < len(ks) and ks[order[j]] <= stop:
            out[order[j]] = cs[ks[order[j]] - start - 1]
            j += 1
        carry, start = float(cs[-1]), stop
    return out


def _expected_dcg(h: Hits, ks: list[int], gains: np.ndarray, base: Any) -> np.ndarray:
    """``[U, len(ks)]`` expected DCG@k over the orderings of each tie group: a hit whose
    group spans lo..hi contributes its gain times Σ_{t=lo}^{min(hi,k)} disc(t) / (hi − lo + 1)."""
    lo, hi = h.hit_lo, h.hit_hi
    width = h.width(ks)
    disc = _discount(width, base)
    cd = np.r_[0.0, np.cumsum(disc)]
    n = (hi - lo + 1).astype(np.float64)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, k in enumerate(ks):  # a loop over cut-offs, not users
        keep = lo <= k
        top = np.minimum(hi[keep], k)
        lk = lo[keep]
        # an untied hit reads its discount directly (no difference of partial sums)
        mean_disc = np.where(hi[keep] == lk, disc[lk - 1], (cd[top] - cd[lk - 1]) / n[keep])
        out[:, j] = np.bincount(h.hit_user[keep], weights=gains[keep] * mean_disc, minlength=h.n_users)
    return out


def _dcg(h: Hits, ks: list[int], o: dict, base: Any) -> np.ndarray:
    width = h.width(ks)
    gains = _gain(h.hit_rating, o)
    if _averaged(h):
        return _expected_dcg(h, ks, gains, base)
    if _sparse(h):
        disc = _discount(width, base)[h.hit_pos[h.hit_pos <= width] - 1]
        w = np.zeros(len(gains))
        keep = h.hit_pos <= width
        w[keep] = (1.0 if o["gain"] == "binary" else (0.0 + gains[keep])) * disc
        return _per_k(h, ks, w)
    dense = h.dense(width, gains, key=f"gain:{o['gain']}:{o.get('t')}:{o.get('neg')}") if o["gain"] != "binary" else h.dense(width)
    return np.cumsum(dense * _discount(width, base)[None, :], axis=1)[:, h.cols(ks, width)]


def _weighted_dcg(h: Hits, ks: list[int], o: dict, base: Any, hit_w: np.ndarray) -> np.ndarray:
    """``[U, len(ks)]`` DCG@k with each hit's gain times its weight (expected with ``ties=average``)."""
    gains = _gain(h.hit_rating, o) * hit_w
    if _averaged(h):
        return _expected_dcg(h, ks, gains, base)
    return _per_k(h, ks, gains * _disc_at(h.hit_pos.astype(np.float64), base))


def _weighted_ideal(h: Hits, ks: list[int], o: dict, base: Any, rel_w: np.ndarray) -> np.ndarray:
    """``[U, len(ks)]`` the ideal DCG of the weighted gains: the user's relevant items by gain ×
    weight descending, the best min(k, |R|) (``ideal=cut``) or all (``uncut``); 1 for ``none``."""
    if o["ideal"] == "none":
        return np.ones((h.n_users, len(ks)))
    g = _gain(h.rel_rating, o) * rel_w
    srt = np.lexsort((-g, h.rel_user))
    u, g = h.rel_user[srt], g[srt]
    rank = np.arange(len(u)) - np.searchsorted(u, u)
    term = g * _disc_at(rank + 1.0, base)
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, kk in enumerate(ks):  # a loop over cut-offs, not users
        cut = rank < kk if o["ideal"] == "cut" else np.ones(len(u), dtype=bool)
        out[:, j] = np.bincount(u[cut], weights=term[cut], minlength=h.n_users)
    return out


def _ideal(h: Hits, ks: list[int], o: dict, base: Any) -> np.ndarray:
    kind = o["ideal"]
    k = np.asarray(ks)
    if kind == "none":
        return np.ones((h.n_users, len(ks)))
    if kind in ("hits", "listed"):
        out = np.zeros((h.n_users, len(ks)))
        lu, lr = (h.hit_user, h.hit_rating) if kind == "hits" else h.listed()
        gains = _gain(lr, o)
        for j, kk in enumerate(ks):  # a loop over cut-offs, not users
            keep = h.hit_pos <= kk if kind == "hits" else np.ones(len(lu), dtype=bool)
            u, g = lu[keep], gains[keep]
            srt = np.lexsort((-g, u))
            u, g = u[srt], g[srt]
            rank = np.arange(len(u)) - np.searchsorted(u, u)
            # an ideal list has at most k slots, even when ties=optimistic puts more than k hits
            # at positions <= k (issue 31, ruling 1); OpenRec, the dialect with optimistic ties,
            # has no IDCG to say otherwise (openrec/tf2/metrics/ranking_metrics.py:28-47, v0.3.0)
            cut = rank < kk
            disc = _discount(int(rank.max()) + 1 if len(rank) else 1, base)
            out[:, j] = np.bincount(u[cut], weights=g[cut] * disc[rank[cut]], minlength=h.n_users)
        return out
    if kind == "cut" and o["gain"] == "binary":
        # every gain is 1: IDCG@k is the partial sum of the discounts up to min(k, |R|),
        # the same additions in the same order as the dense row cumsum
        top = max(1, min(int(k.max()), int(h.n_rel.max()) if h.n_users else 1))
        cd = np.r_[0.0, np.cumsum(_discount(top, base))]
        return cd[np.minimum(h.n_rel[:, None], k[None, :])]
    gains = _gain(h.rel_rating, o)
    if kind == "k":
        best = np.zeros(h.n_users)
        np.maximum.at(best, h.rel_user, gains)
        return best[:, None] * _discount_prefix(ks, base)[None, :]
    if kind == "length":  # min(k, ℓ) slots of the best gain: the discounts summed up to the list's length
        best = np.zeros(h.n_users)
        np.maximum.at(best, h.rel_user, gains)
        width = max(1, min(int(k.max()), int(h.length.max()) if h.n_users else 1))
        cd = np.r_[0.0, np.cumsum(_discount(width, base))]
        return best[:, None] * cd[np.minimum(np.minimum(h.length, width)[:, None], k[None, :])]
    srt = h.rel_rank()
    u, g = h.rel_user[srt], gains[srt]
    rank = np.arange(len(u)) - np.searchsorted(u, u)
    if kind == "uncut":
        total = np.bincount(u, weights=g * _discount(int(rank.max()) + 1 if len(rank) else 1, base)[rank], minlength=h.n_users)
        return np.broadcast_to(total[:, None], (h.n_users, len(ks))).copy()
    width = max(1, min(int(k.max()), int(rank.max()) + 1 if len(rank) else 1))
    keep = rank < width
    # sums in (user, rank) order: identical to the row cumsums of the dense [U, k] ideal gains
    w = (0.0 + g[keep]) * _discount(width, base)[rank[keep]]
    uk, rk = u[keep], rank[keep]
    out = np.empty((h.n_users, len(ks)), dtype=np.float64)
    for j, kk in enumerate(ks):  # a loop over cut-offs, not users
        cut = rk < kk
        out[:, j] = np.bincount(uk[cut], weights=w[cut], minlength=h.n_users)
    return out


def _check_ndcg(o: dict) -> None:
    if o["ideal"] != "none" and o.get("base", 2.0) != 2.0:
        raise SpecError(
            "`base` cancels in NDCG (the same base divides DCG and ideal DCG); drop it, or use dcg@k / ndcg(ideal=none) for an unnormalised value"
        )


def _resolve_t(o: dict) -> dict:
    if o.get("t") is None:
        o = dict(o, t=o.get("rel") if o.get("rel") is not None else 0.0)
    if o["gain"] != "shifted":
        o = dict(o, t=None)
    if o["gain"] == "binary":  # every gain is 1: no gain is negative, `neg` is not read
        o = dict(o, neg=None)
    return o


@register("ndcg", axes=[GAIN, IDEAL, BASE, DISCOUNT, GAIN_T, NEG, *WEIGHT_AXES], resolve_hook=_hooks(_resolve_t, _weight_hook),
          check_hook=_hooks(_check_ndcg, _weight_refuse("ndcg", "ideal", ("k", "length", "hits", "listed"))), side=_weight_side, needs_when={"weight": "pop"}, ties="closed", ties_settled={"ideal": "hits"}, bounds=(0.0, 1.0))
def ndcg(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""NDCG@k: discounted cumulative gain of the top k divided by that of an ideal list.

    Formula
    -------
    .. math::

        DCG@k = \sum_{i=1}^{k} \frac{g(r_i)}{\log_b(i+1)}, \qquad
        NDCG@k = \frac{DCG@k}{IDCG@k}

    :math:`g` by ``gain``: binary 1, linear r, exp2 :math:`2^r-1`, shifted
    :math:`2^{r-t+1}-1`; non-relevant items gain 0. IDCG by ``ideal``: the user's
    :math:`\min(k,|R|)` best gains (``cut``, default), all :math:`|R|` gains (``uncut``),
    *k* copies of the best gain (``k``), :math:`\min(k, \ell)` copies of it (``length``: the
    ideal cut at the list's own length, :math:`IDCG = g_{max} \sum_{i=1}^{\min(k,\ell)} 1/\log_b(i+1)`;
    CAPRI's ``ndcgk``, ``Evaluations/ndcg.py`` in CARecSys/CAPRI, adds a discount to its IDCG for every
    listed slot, relevant or not), the list's own hits sorted (``hits``), the relevant
    items anywhere in the list sorted and cut at *k* (``listed``), or 1
    (``none``: the value is DCG). The log base *b* cancels between DCG and IDCG, so it is
    accepted only with ``ideal=none``. NDCG is 0 when IDCG = 0.

    With ``weight=pop`` (see recall; ``ideal`` cut, uncut or none) every relevant item's gain
    is :math:`\tilde w_i g(r_i)`, in DCG and in the ideal, which sorts the weighted gains:
    :math:`NDCG^w@k = \sum_{i \in R \cap L_k} \frac{w_i g(r_i)}{\log_b(pos_i+1)} \Big/
    \sum_{j=1}^{\min(k,|R|)} \frac{(w g)_{(j)}}{\log_b(j+1)}`, :math:`(wg)_{(j)}` the j-th largest.

    An ideal list has at most *k* slots, also when ``ties=optimistic`` puts more than *k*
    items at positions :math:`\le k` (each of them counts in DCG at its shared position, but
    ``hits`` and ``listed`` keep only the *k* best gains). The one dialect with
    ``ties=optimistic``, OpenRec 0.3.0, has no ideal to follow: its tf2 ``NDCG``
    (``openrec/tf2/metrics/ranking_metrics.py``, l. 28–47) divides by none (``ideal=none``).

    A graded gain below 0 (a relevant rating below 0 with ``linear`` or ``exp2``, below
    :math:`t-1` with ``shifted``) is refused by default (``neg=error``): the ideal list would
    no longer be the best one and NDCG could exceed 1. ``neg=zero`` counts it as 0 in DCG and
    IDCG alike (LensKit's choice): :math:`g^{+}(r) = \max(0, g(r))`.

    With ``ties=average`` (the expectation over the orderings of the tie groups, as
    scikit-learn's ``ndcg_score``) a hit whose tie group spans positions *lo..hi* contributes
    its gain times the mean discount of the group's positions inside the top *k*:

    .. math:: E[DCG@k] = \sum_{hits} g(r) \, \frac{1}{hi - lo + 1} \sum_{t=lo}^{\min(hi, k)} \frac{1}{\log_b(t+1)}

    and NDCG divides it by the same IDCG (the ideal does not depend on the order;
    ``ideal=hits``, which moves the list's own top-*k* hits up, refuses ``ties=average``).

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("ndcg@4")          # (1/log2 3 + 1/log2 5) / (1/log2 2 + 1/log2 3 + 1/log2 4)
    0.498189
    >>> worked("ndcg(ideal=hits)@4")   # same DCG / (1 + 1/log2 3)
    0.650921
    >>> worked("ndcg(ideal=listed)@2")  # 1/log2 3 / (1 + 1/log2 3): items 20 and 40 are listed
    0.386853
    >>> worked("ndcg(ideal=length)@10")  # DCG / (1 + 1/log2 3 + 1/log2 4 + 1/log2 5): the list holds 4
    0.41443
    >>> worked("ndcg(ideal=none)@4")   # DCG itself
    1.061606
    >>> from receval import evaluate    # ratings −1, 3, 1 ranked in that order, every row relevant
    >>> recs = {"user_id": [1, 1, 1], "item_id": [1, 2, 3], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1, 1, 1], "item_id": [1, 2, 3], "rating": [-1.0, 3.0, 1.0]}
    >>> res = evaluate(recs, truth, "ndcg(gain=linear,neg=zero)@3", rel="all")
    >>> round(res["ndcg(gain=linear,neg=zero)@3"], 6)   # (0 + 3/log2 3 + 1/log2 4) / (3 + 1/log2 3 + 0)
    0.659002
    >>> from receval.examples import tied          # items 20 and 30 tie at positions 2-3
    >>> tied("ndcg(ties=average)@4")  # ((1/log2 3 + 1/log2 4)/2 + 1/log2 5) / (1 + 1/log2 3 + 1/log2 4)
    0.467468
    """
    base = (o.get("base", 2.0), o.get("discount", "log"))
    if _weighted(o):
        hit_w, rel_w = _weights(h, o, "ndcg")
        return safe_div(_weighted_dcg(h, ks, o, base, hit_w), _weighted_ideal(h, ks, o, base, rel_w))
    return safe_div(_dcg(h, ks, o, base), _ideal(h, ks, o, base))


@register("dcg", axes=[GAIN, BASE, DISCOUNT, GAIN_T, NEG], resolve_hook=_resolve_t, ties="closed", bounds=(0.0, float("inf")))
def dcg(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""DCG@k: discounted cumulative gain of the top k, not normalised.

    Formula
    -------
    .. math:: DCG@k = \sum_{i=1}^{k} \frac{g(r_i)}{\log_b(i+1)}

    with the gains of NDCG and the log base *b* (default 2; here it matters). A negative
    graded gain is refused (``neg=error``) or counted as 0 (``neg=zero``), as in NDCG.
    ``discount=logmax2`` replaces :math:`\log_b(i+1)` by :math:`\log_b(\max(i, 2))`
    (Järvelin & Kekäläinen 2002, LensKit's default): positions 1 and 2 both weigh 1, in NDCG too.

    With ``ties=average`` (the expectation over the orderings of the tie groups, as
    scikit-learn's ``ndcg_score``) a hit whose tie group spans positions *lo..hi* contributes
    its gain times the mean discount of the group's positions inside the top *k*:

    .. math:: E[DCG@k] = \sum_{hits} g(r) \, \frac{1}{hi - lo + 1} \sum_{t=lo}^{\min(hi, k)} \frac{1}{\log_b(t+1)}

    Examples
    --------
    >>> from receval.examples import worked
    >>> worked("dcg@4")              # 1/log2 3 + 1/log2 5
    1.061606
    >>> worked("dcg(base=e)@4")      # 1/ln 3 + 1/ln 5
    1.531574
    >>> from receval import evaluate     # LensKit's example: recs [2, 3, 1], truth {1, 2, 3}
    >>> recs = {"user_id": [1, 1, 1], "item_id": [2, 3, 1], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1, 1, 1], "item_id": [1, 2, 3]}
    >>> round(evaluate(recs, truth, ["dcg(discount=logmax2)@3"])["dcg(discount=logmax2)@3"], 4)  # 1 + 1 + 1/log2 3
    2.6309
    >>> from receval.examples import tied          # items 20 and 30 tie at positions 2-3
    >>> tied("dcg(ties=average)@4")  # (1/log2 3 + 1/log2 4)/2 + 1/log2 5
    0.996141
    """
    return _dcg(h, ks, o, (o["base"], o.get("discount", "log")))
