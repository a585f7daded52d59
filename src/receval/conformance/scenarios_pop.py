"""The conformance scenarios of the popularity, novelty, fairness and baseline metrics (issue 35).

Every scenario of :mod:`receval.conformance.generate` reads the one shared train table, in
which every item but one has a single train user and no pair repeats: the long tail is then
the items outside train, ``count=rows`` equals ``count=users`` and the popularity metrics'
options cannot be told apart. The scenarios here carry their own train (:data:`POP_TRAIN`: a
graded popularity, an item whose rows come from one user, repeated pairs), their own item
groups and baseline run, and are planned for the metrics of :data:`POP_METRICS` only (the
other metrics' cases are not changed by them).

Under :data:`POP_TRAIN` and the scenarios' catalogue ``i1..i9`` the long tail (split by
interactions, cut 0.8) is {i5, i6, i7, i8, i9} with ``count=rows`` and {i3, i6, i7, i8, i9}
with ``count=users``: i3 has five train rows from one user, i5 two rows from two users.
"""

from __future__ import annotations

from typing import Any

from .scenario import Scenario

#: the metrics these scenarios are planned for
POP_METRICS = frozenset({"bias_disparity", "popreo", "poprsp", "rsp", "reo", "aclt", "aplt", "arp", "novelty",
                         "unexpectedness", "serendipity", "surprisal", "unseen", "intersection"})

#: (user, item) train rows: φ by rows i1 5, i3 5, i2 4, i4 3, i5 2, i6 1; by users i1 5, i2 4, i4 3, i5 2, i3 1, i6 1
POP_TRAIN: tuple[tuple[str, str], ...] = (
    ("t1", "i1"), ("t2", "i1"), ("t3", "i1"), ("t4", "i1"), ("u1", "i1"),
    ("t1", "i2"), ("t2", "i2"), ("t3", "i2"), ("u2", "i2"),
    ("t5", "i3"), ("t5", "i3"), ("t5", "i3"), ("t5", "i3"), ("t5", "i3"),
    ("t4", "i4"), ("t6", "i4"), ("t1", "i4"),
    ("t6", "i5"), ("u1", "i5"),
    ("t2", "i6"),
)
POP_CATALOG = tuple(f"i{n}" for n in range(1, 10))


def PopScenario(name: str, recs: list, truth: list, ks: tuple, tags: tuple, **more: Any) -> Scenario:  # noqa: N802
    """A :class:`~receval.conformance.scenario.Scenario` with :data:`POP_TRAIN` as its train,
    planned for :data:`POP_METRICS` only (unless ``more`` says otherwise)."""
    return Scenario(name, recs, truth, ks, tags, **{"train": POP_TRAIN, "metrics": POP_METRICS, **more})


#: the scenarios (generate.py adds them to its SCENARIOS)
SCENARIOS_POP: list[Scenario] = [
    PopScenario(
        "pop_count",
        [("u1", "i3", .9), ("u1", "i5", .8), ("u1", "i1", .7), ("u1", "i7", .6),
         ("u2", "i5", .9), ("u2", "i2", .8), ("u2", "i6", .7),
         ("u3", "i8", .9), ("u3", "i4", .8), ("u3", "i9", .7)],
        [("u1", "i3", 2), ("u1", "i7", 1), ("u1", "i2", 1), ("u2", "i5", 1), ("u2", "i6", 3), ("u2", "i1", 2),
         ("u3", "i8", 0), ("u3", "i1", 0), ("u4", "i9", 1), ("u4", "i4", 1)],
        (2, 3), ("popularity", "no_relevant", "no_recs"), catalog=POP_CATALOG,
        why="i3 (five train rows of one user) is head by rows and tail by users, i5 the other way; u3's ratings are "
            "all 0 (no relevant item under rel>0) and its list holds tail items; u4 has relevant items and no list",
    ),
    PopScenario(
        "pop_seen_ties",
        [("u1", "i7", .9), ("u1", "i6", .5), ("u1", "i5", .5), ("u1", "i1", .2),
         ("u2", "i4", .9), ("u2", "i9", .5), ("u2", "i2", .5)],
        [("u1", "i6", 1), ("u1", "i1", 2), ("u2", "i2", 1), ("u2", "i8", 1)],
        (2,), ("popularity", "ties"), catalog=POP_CATALOG,
        why="a tie at .5 across k=2 between an item the user has in train (u1: i5, u2: i2; the smaller id) and one it "
            "has not (first in row order): ties=input and ties=item list a seen item or not",
    ),
    PopScenario(
        "pop_truth_repeats",
        [("u1", "i3", .9), ("u1", "i5", .8), ("u1", "i1", .7), ("u1", "i7", .6),
         ("u2", "i5", .9), ("u2", "i2", .8), ("u2", "i6", .7),
         ("u3", "i8", .9), ("u3", "i4", .8), ("u3", "i9", .7)],
        [("u1", "i3", 2), ("u1", "i7", 1), ("u1", "i2", 1), ("u2", "i5", 1), ("u2", "i6", 3), ("u2", "i5", 1),
         ("u2", "i1", 2), ("u3", "i8", 1), ("u3", "i8", 1), ("u3", "i1", 0), ("u4", "i9", 1), ("u4", "i4", 1)],
        (2, 3), ("popularity", "truth_duplicates", "duplicates"), catalog=POP_CATALOG,
        why="pop_count's lists with relevant truth rows repeated at the same rating (u2's i5 and u3's i8, both tail): "
            "tdup=keep counts them twice in |R_u ∩ Γ|, tdup=first and max once",
    ),
    PopScenario(
        "pop_truth_conflicts",
        [("u1", "i3", .9), ("u1", "i5", .8), ("u1", "i1", .7), ("u1", "i7", .6),
         ("u2", "i5", .9), ("u2", "i2", .8), ("u2", "i6", .7),
         ("u3", "i8", .9), ("u3", "i4", .8), ("u3", "i9", .7)],
        [("u1", "i3", 2), ("u1", "i7", 1), ("u1", "i2", 1), ("u1", "i2", 3), ("u2", "i5", 1), ("u2", "i6", 3),
         ("u2", "i1", 2), ("u3", "i8", 0), ("u3", "i8", 2), ("u3", "i1", 0), ("u4", "i9", 1), ("u4", "i4", 1)],
        (2, 3), ("popularity", "truth_duplicates", "duplicates"), catalog=POP_CATALOG,
        why="pop_count's lists with truth rows repeated at other ratings (u1's i2 at 1 and 3, u3's i8 at 0 and 2): "
            "tdup=first refuses them, tdup=max keeps the higher row (u3's i8 relevant), tdup=keep every row",
    ),
    PopScenario(
        "pop_duplicates",
        [("u1", "i2", .7, 1), ("u1", "i3", .5, 2), ("u1", "i9", .4, 6), ("u1", "i9", .7, 3), ("u1", "i8", .3, 4),
         ("u1", "i1", .7, 5), ("u2", "i8", .5, 2), ("u2", "i2", .9, 1), ("u2", "i2", .4, 3),
         ("u3", "i8", .9, 1), ("u3", "i7", .2, 3), ("u3", "i7", .7, 2),
         ("u4", "i4", .9, 1), ("u4", "i4", .8, 2), ("u4", "i6", .7, 3)],
        [("u1", "i9", .5), ("u2", "i2", .5), ("u2", "i3", .5), ("u2", "i8", 1), ("u2", "i9", 3), ("u3", "i9", 1),
         ("u4", "i4", 1), ("u4", "i6", 2)],
        (2, 3), ("popularity", "duplicates", "orderings", "fractional"), catalog=POP_CATALOG,
        baseline=(("u1", "i3", .9), ("u1", "i4", .2), ("u1", "i9", .2), ("u2", "i3", .9), ("u3", "i3", .2), ("u3", "i2", .5),
                  ("u4", "i6", .9)),
        why="a repeated item in every list, at different scores and ranks (found by a search over small random inputs): "
            "dup=keep gives the repeat a position of its own, pushing a head or tail item, a seen item or a baseline "
            "item (u4's i6) past k; dup=first keeps the best-ranked occurrence",
    ),
    # found by a search over small random inputs for the pairs of option settings the suite did not tell apart
    PopScenario(
        "pop_orders",
        [("u1", "i9", .9, 1), ("u1", "i2", .1, 2), ("u1", "i3", .7, 3),
         ("u2", "i5", .7, 3), ("u2", "i8", .3, 2), ("u2", "i7", .5, 4), ("u2", "i6", .9, 1),
         ("u3", "i4", .7, 1), ("u3", "i7", .5, 2), ("u3", "i6", .5, 3),
         ("u4", "i2", .5, 4), ("u4", "i4", .5, 2), ("u4", "i1", .1, 1), ("u4", "i9", .9, 3)],
        [("u1", "i3", 1), ("u1", "i5", 1), ("u1", "i9", 0), ("u1", "i8", 0), ("u2", "i2", 1), ("u2", "i5", .5),
         ("u2", "i8", 1), ("u3", "i1", 1), ("u3", "i9", 1), ("u3", "i7", 1), ("u4", "i6", 0), ("u4", "i2", 1),
         ("u4", "i7", 3), ("u4", "i9", .5)],
        (2, 3), ("popularity", "orderings", "ties", "fractional"), catalog=POP_CATALOG,
        baseline=(("u1", "i8", .9), ("u1", "i9", .9), ("u1", "i4", .9), ("u1", "i3", .2), ("u2", "i9", .2), ("u2", "i6", .9),
                  ("u3", "i6", .2), ("u3", "i8", .5), ("u4", "i3", .5), ("u4", "i7", .9), ("u4", "i8", .2), ("u4", "i6", .5)),
        why="u2's rank column, scores and row order give three different top 2 of head and tail items; u3 and u4 tie "
            "at .5 across k=2 (u4's rank column puts its lowest score first); fractional and 0 ratings; a baseline "
            "run of its own",
    ),
    PopScenario(
        "pop_orders_listed",
        [("u1", "i3", .3, 1), ("u1", "i8", .9, 2), ("u1", "i1", .5, 3), ("u1", "i4", .5, 4),
         ("u2", "i8", .9, 2), ("u2", "i3", .5, 3), ("u2", "i9", .5, 1),
         ("u3", "i5", .5, 4), ("u3", "i2", .5, 5), ("u3", "i3", .5, 1), ("u3", "i8", .7, 2), ("u3", "i7", .9, 3)],
        [("u1", "i4", 3), ("u1", "i8", 1), ("u1", "i1", .5), ("u2", "i6", 1), ("u2", "i3", 0), ("u2", "i8", 1),
         ("u3", "i3", 2), ("u3", "i1", 1), ("u3", "i4", 2), ("u4", "i4", .5), ("u4", "i5", .5), ("u4", "i8", 2),
         ("u4", "i2", .5)],
        (2, 3), ("popularity", "orderings", "ties", "fractional", "no_recs"), catalog=POP_CATALOG,
        baseline=(("u1", "i4", .2), ("u1", "i1", .5), ("u1", "i2", .2), ("u2", "i8", .9), ("u2", "i2", .2), ("u2", "i9", .2),
                  ("u2", "i5", .9), ("u3", "i8", .2), ("u3", "i1", .5), ("u4", "i4", .9), ("u4", "i2", .2)),
        why="ties at .5 inside and across k against a rank column that puts the lowest score first; u4 has relevant "
            "head and tail items and no list (users=listed leaves it out of the group sums)",
    ),
]

__all__ = ["PopScenario", "POP_TRAIN", "POP_METRICS", "SCENARIOS_POP"]
