r"""List quality (RecTools data-quality metrics): lists filled to k, repeated items, covered users,
and the intersection between two runs.

These metrics do not read relevance: every truth user is averaged (the ``empty`` policy does
not apply); a truth user without recommendations scores 0 under ``norecs=zero`` (the default)
and is left out under ``norecs=skip`` (RecTools measures the users present in the
recommendations). ``covered`` counts every truth user (RecTools CoveredUsers does too).
"""

from __future__ import annotations

import numpy as np

from ..errors import SpecError
from ..hits import Hits
from ..options import Axis
from ..registry import register
from ._common import baseline_rows, baseline_top, expected_overlap, overlap

_CTX = ("rel", "order", "ties", "dup", "tdup", "norecs")

FORM = Axis(
    "form", "form", "all", "a per-user flag or a share",
    {"all": "1 when the whole top k passes, else 0 (RecTools deep=False)", "share": "the passing share of the top k (RecTools deep=True)"},
)


def _length_at(h: Hits, k: int) -> np.ndarray:
    """ℓ_k per user: the rows at positions <= k (with dup=keep every occurrence counts)."""
    keep = h.row_pos <= k
    return np.bincount(h.row_user[keep], minlength=h.n_users).astype(np.float64)


@register("filled", axes=[FORM], needs={"rows"}, context=_CTX, family="listquality", ties="closed", bounds=(0.0, 1.0))
def filled(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Filled@k: whether a user's list reaches k items (RecTools SufficientReco).

    Formula
    -------
    .. math:: \mathrm{Filled}@k = \mathbb{1}[\ell_k \ge k] \quad\text{or, with form=share,}\quad \min(\ell_k / k, 1)

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 1, 2], "item_id": [10, 20, 10], "score": [2.0, 1.0, 1.0]}
    >>> truth = {"user_id": [1, 2], "item_id": [10, 10]}
    >>> evaluate(recs, truth, ["filled@2", "filled(form=share)@2"]).values   # (1 + 0)/2; (1 + 1/2)/2
    {'filled@2': 0.5, 'filled(form=share)@2': 0.75}
    """
    out = []
    for k in ks:
        ell = _length_at(h, k)
        out.append((ell >= k).astype(np.float64) if o["form"] == "all" else np.minimum(ell / k, 1.0))
    return np.stack(out, axis=1)


def _unrepeated_check(o: dict, *_: object) -> None:
    if o.get("dup") != "keep":
        raise SpecError("unrepeated counts repeated items, which only dup=keep lets through: write unrepeated(dup=keep)@k or pass dup='keep'")


@register("unrepeated", axes=[FORM], needs={"rows", "items"}, context=_CTX, family="listquality", check_hook=_unrepeated_check, ties="topk_set", bounds=(0.0, 1.0))
def unrepeated(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Unrepeated@k: whether a user's top k repeats no item (RecTools UnrepeatedReco).

    Formula
    -------
    .. math:: \mathrm{Unrep}@k = \mathbb{1}[|\mathrm{set}(L_k)| = \ell_k] \quad\text{or, with form=share,}\quad \frac{|\mathrm{set}(L_k)|}{\ell_k}

    Needs ``dup=keep`` (every other policy removes or refuses repeats before any metric runs).
    0 for an empty list.

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 1, 1], "item_id": [10, 20, 10], "score": [3.0, 2.0, 1.0]}
    >>> truth = {"user_id": [1], "item_id": [10]}
    >>> r = evaluate(recs, truth, ["unrepeated@3", "unrepeated(form=share)@3", "unrepeated@2"], dup="keep")
    >>> [round(v, 6) for v in r.values.values()]      # 10 repeats at 3: 0; 2 distinct of 3; no repeat in the top 2
    [0.0, 0.666667, 1.0]
    """
    s = h.lists
    out = []
    for k in ks:
        keep = h.row_pos <= k
        u, code = h.row_user[keep], s.row_code[keep]
        ell = np.bincount(u, minlength=h.n_users).astype(np.float64)
        pairs = np.unique(u.astype(np.int64) * (s.n_items + 1) + code)
        distinct = np.bincount(pairs // (s.n_items + 1), minlength=h.n_users).astype(np.float64)
        if o["form"] == "all":
            out.append(((distinct == ell) & (ell > 0)).astype(np.float64))
        else:
            share = np.zeros(h.n_users)
            np.divide(distinct, ell, out=share, where=ell > 0)
            out.append(share)
    return np.stack(out, axis=1)


@register("covered", needs={"rows"}, context=("rel", "order", "ties", "dup", "tdup"), family="listquality", ties="closed", bounds=(0.0, 1.0))
def covered(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Covered@k: the share of truth users with at least one recommendation in the top k (RecTools CoveredUsers).

    Formula
    -------
    .. math:: \mathrm{Covered}@k = \mathbb{1}[\ell_k > 0]

    averaged over every truth user (with or without relevant items or recommendations).

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "rank": [1, 2, 2]}
    >>> truth = {"user_id": [1, 2, 3, 4], "item_id": [1, 1, 1, 1]}
    >>> evaluate(recs, truth, ["covered@1", "covered@2"]).values   # RecTools' docstring example: 1/4, 2/4
    {'covered@1': 0.25, 'covered@2': 0.5}
    """
    return np.stack([(_length_at(h, k) > 0).astype(np.float64) for k in ks], axis=1)


REF_K = Axis("refk", "refk", None, "the cut-off of the baseline run (default: k itself; RecTools ref_k)", numeric=True)


@register("intersection", side={"baseline"}, axes=[REF_K], needs={"rows", "items"}, context=_CTX, family="listquality", ties="closed", bounds=(0.0, 1.0))
def intersection(h: Hits, ks: list[int], o: dict) -> np.ndarray:
    r"""Intersection@k: the share of a user's top k that a baseline run's top k' also holds (RecTools Intersection).

    Formula
    -------
    .. math:: \mathrm{Inter}@k = \frac{|\mathrm{set}(L_k) \cap B_{k'}|}{\ell_k}, \qquad k' = \text{refk} \text{ or } k

    :math:`B_{k'}` the top k' of the ``baseline`` run (ordered by its rank, else score, else
    rows; a repeated item kept once). 0 for an empty list. ``ties=average``: each row weighs
    its chance (m/n) to be in the top k (the value is linear in the rows).

    Examples
    --------
    >>> from receval import evaluate
    >>> recs = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
    >>> base = {"user_id": [1, 1, 1], "item_id": [30, 20, 10], "rank": [1, 2, 3]}
    >>> truth = {"user_id": [1], "item_id": [10]}
    >>> r = evaluate(recs, truth, ["intersection@2", "intersection(refk=3)@2"], baseline=base)
    >>> r.values           # {10, 20} ∩ {30, 20} = 1 of 2;  ∩ {30, 20, 10} = 2 of 2
    {'intersection@2': 0.5, 'intersection(refk=3)@2': 1.0}
    """
    s = h.lists
    out = []
    for k in ks:
        items = s.top(k)[0]
        ref = int(o["refk"]) if o["refk"] is not None else k
        rows = baseline_rows(h, "intersection")
        base = baseline_top(rows, h.n_users, ref)
        ell = (items >= 0).sum(axis=1).astype(np.float64)
        share = np.zeros(h.n_users)
        # ties=average: the expected overlap over the ties of both lists
        common = expected_overlap(h, rows, k, ref, s.row_code, s.n_items) if h.options.get("ties") == "average" else overlap(items, base)
        np.divide(common, ell, out=share, where=ell > 0)
        out.append(share)
    return np.stack(out, axis=1)
