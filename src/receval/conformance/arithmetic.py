"""Hand-checkable conformance cases for the metrics the slow reference does not cover.

Each case is a few rows whose value is worked out in ``why``; ``tests/conformance_build.py``
keeps a case (``source: "arithmetic"``) only where receval gives exactly this arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


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

ARITHMETIC: list[Arithmetic] = [
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

__all__ = ["Arithmetic", "ARITHMETIC"]
