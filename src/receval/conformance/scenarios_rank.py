"""Scenarios that tell apart the option settings of the distribution, rating-error, AUC-family
and list metrics (issue 35): each one is an input on which two settings the audit can name
give different values (the pair is named in ``why``). generate.py merges them into its ``SCENARIOS``.
"""

from __future__ import annotations

from .scenario import Scenario


RANK_SCENARIOS: list[Scenario] = [
    Scenario(
        "dist_orders",
        [("u1", "i4", .5, 2), ("u1", "i2", .5, 4), ("u1", "i9", .95, 1), ("u1", "i3", .5, 5), ("u1", "i5", .5, 3),
         ("u2", "i1", .9, 1), ("u2", "i2", .8, 2), ("u2", "i3", .7, 3)],
        [("u1", "i5", .5), ("u1", "i3", 2), ("u2", "i2", 1), ("u2", "i6", 1.5)],
        (3,), ("ties", "orderings"),
        why="u1's top 3 by the rank column (i9, i4, i5), the row order (i4, i2, i9) and the scores with the tie group "
            "i4, i2, i3, i5 broken by row order, smaller id or larger id hold 6, 5, 5, 4 and 6 distinct items with "
            "u2's: coverage, entropy and gini tell the orderings apart",
    ),
    Scenario(
        "rank_ties",
        [("u1", "i1", .9, 1), ("u1", "i5", .5, 2), ("u1", "i3", .5, 3), ("u1", "i9", .5, 4), ("u1", "i6", .2, 5),
         ("u2", "i4", .8, 1), ("u2", "i5", .4, 2),
         ("u3", "i3", .4, 1), ("u3", "i5", .4, 2), ("u3", "i9", .4, 3)],
        [("u1", "i3", 1), ("u1", "i9", 2), ("u2", "i5", 1), ("u3", "i3", 1)],
        (2,), ("ties",),
        why="u1's tie group at position 2 puts i5 (irrelevant, category a), i3 (relevant, b) or i9 (relevant) there by "
            "row order, smaller id or larger id (rprecision and catdiv); u3's three tied items put the relevant i3 in "
            "the top 2 by row order and not by larger id (auc@k, gauc@k)",
    ),
    Scenario(
        "nonpositive_hits",
        [("u1", "i1", .9), ("u1", "i2", -.8), ("u1", "i3", -.9), ("u2", "i4", -.5), ("u2", "i5", -.6), ("u2", "i1", -.7)],
        [("u1", "i2", 1), ("u2", "i4", 1), ("u2", "i2", 1)],
        (2,), ("low_scores",),
        why="u2's relevant item leads its list with a negative score: a hit, or no hit under hitscore=positive (gauc, lauc)",
    ),
    Scenario(
        "history_duplicates",
        [("u1", "i4", .9), ("u1", "i1", .8), ("u1", "i4", .7), ("u1", "i2", .6), ("u2", "i3", .9), ("u2", "i5", .8)],
        [("u1", "i1", 1), ("u2", "i5", 1)],
        (3,), ("duplicates",),
        why="u1's train history (i4, category c) meets its repeated i4 inside the top 3: counted once (dup=first) or "
            "twice (keep) in the list's category shares (miscalibration)",
    ),
    Scenario(
        "history_unrated",
        [("u1", "i4", .9), ("u1", "i1", .8), ("u1", "i3", .7), ("u2", "i3", .9), ("u2", "i5", .8)],
        [("u1", "i1", 0), ("u2", "i5", 1)],
        (3,), ("no_relevant",), extra={"rel": ">0"},
        why="u1, the user with a train history, has only a rating 0: scored 0 (empty=zero) or miscalibrated (rel=all)",
    ),
    Scenario(
        "history_ties",
        [("u1", "i7", .9), ("u1", "i6", .5), ("u1", "i5", .5), ("u2", "i1", .8), ("u2", "i2", .7)],
        [("u1", "i6", 1), ("u2", "i2", 1)],
        (2,), ("ties",),
        why="u1's tie at position 2 puts i6 (category c, u1's history) or i5 (a) there by row order or smaller id "
            "(miscalibration)",
    ),
    Scenario(
        "rating_repeats",
        [("u1", "i1", 3.5), ("u1", "i2", 2.0), ("u1", "i3", 4.0), ("u2", "i4", 1.5), ("u2", "i5", 3.0)],
        [("u1", "i1", 4), ("u1", "i1", 4), ("u1", "i2", 1), ("u2", "i4", 2), ("u2", "i5", 2.5)],
        (3,), ("truth_duplicates", "duplicates"),
        why="every truth pair has a predicted rating and one pair repeats with the same rating: tdup=first and max "
            "answer, the standard refuses (mae, rmse)",
    ),
    Scenario(
        "low_ratings",
        [("u1", "i1", .9), ("u1", "i2", .6), ("u1", "i3", .4), ("u2", "i2", .8), ("u2", "i4", .7), ("u2", "i1", .2)],
        [("u1", "i1", .5), ("u1", "i3", .25), ("u2", "i2", 3), ("u2", "i4", 1)],
        (2,), ("graded", "fractional"),
        why="u1's ratings all lie in (0, 1): relevant under the standard rel:>0, not under rel=1 (then u1 has no "
            "relevant item and the empty policy decides), so every metric that reads the user set tells them apart "
            "(ab_ndcg among them)",
    ),
    Scenario(
        "rating_conflicts",
        [("u1", "i1", 3.5), ("u1", "i2", 2.0), ("u1", "i3", 4.0), ("u2", "i4", 1.5), ("u2", "i5", 3.0)],
        [("u1", "i1", 4), ("u1", "i1", 2), ("u1", "i2", 1), ("u2", "i4", 2), ("u2", "i5", 2.5)],
        (3,), ("truth_duplicates", "duplicates"),
        why="every truth pair has a predicted rating and one pair repeats with two ratings: tdup=max answers, "
            "tdup=first refuses (mae, rmse)",
    ),
]

__all__ = ["RANK_SCENARIOS"]
