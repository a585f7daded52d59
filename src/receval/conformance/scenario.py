"""One conformance scenario (:class:`Scenario`): a small data set with its side inputs, shared by
:mod:`receval.conformance.generate` and the scenario modules of the metric families
(:mod:`~receval.conformance.scenarios_pop`, :mod:`~receval.conformance.scenarios_rank`); it
imports nothing of receval's, so each of them can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: (user, item, score, rank) rows; rank is the list position (1-based, row order within a user)
Rows = list[tuple[Any, ...]]

#: the train interactions every scenario shares (restricted to its catalogue)
TRAIN = [("t1", "i1"), ("t1", "i2"), ("t2", "i1"), ("t2", "i3"), ("t3", "i1"), ("t3", "i5"), ("u1", "i4"),
         ("t4", "i2"), ("t4", "i6"), ("t5", "i7"), ("t5", "i1")]
CATEGORIES = {"i1": ("a",), "i2": ("a", "b"), "i3": ("b",), "i4": ("c",), "i5": ("a",), "i6": ("c",), "i7": ("b",),
              "i8": ("a",), "i9": ("c",)}


@dataclass(frozen=True)
class Scenario:
    """One small data set: recommendations, truth, the cut-offs it is read at, its tags and
    the option every spec on it carries (``rel='>0'`` where a rating 0 means not relevant)."""

    name: str
    recs: list[tuple[Any, ...]]  # (user, item, score), rank = position within the user in row order; or (user, item, score, rank)
    truth: list[tuple[str, str, float]]  # (user, item, rating)
    ks: tuple[int, ...]
    tags: tuple[str, ...]
    catalog: tuple[str, ...] | None = None  # None: every item of recs, truth and train
    extra: dict[str, str] = field(default_factory=dict)  # options every spec on it carries
    why: str = ""
    #: its own train rows (None: :data:`TRAIN`, restricted to the catalogue), item and user groups
    #: and baseline run (None: derived), and the metrics it is planned for (None: every metric)
    train: tuple[tuple[str, str], ...] | None = None
    item_groups: tuple[tuple[str, str], ...] | None = None
    user_groups: tuple[tuple[str, str], ...] | None = None
    baseline: tuple[tuple[str, str, float], ...] | None = None  # (user, item, score): rank = position within the user
    metrics: frozenset[str] | None = None

    def rec_rows(self) -> list[tuple[str, str, float, int]]:
        pos: dict[str, int] = {}
        out = []
        for u, i, s, *rank in self.recs:
            pos[u] = pos.get(u, 0) + 1
            out.append((u, i, float(s), int(rank[0]) if rank else pos[u]))
        return out

    def items(self) -> list[str]:
        return sorted({r[1] for r in self.recs} | {i for _, i, _ in self.truth})

    def side(self) -> dict[str, list[tuple[Any, ...]]]:
        """The side inputs as rows: train (user, item), catalog (item,), categories (item,
        category), baseline (user, item, score, rank), item_groups (item, group), user_groups
        (user, group); by default the shared train (with a row of the catalogue's first item when
        it has none), each user's list reversed as the baseline, the item groups by the parity of
        the item number, the user groups alternating."""
        own = self.train is not None
        train_rows = list(self.train) if self.train is not None else TRAIN
        cat = list(self.catalog) if self.catalog is not None else sorted(set(self.items()) | {i for _, i in train_rows})
        train = [(u, i) for u, i in train_rows if i in cat]
        if not own and self.catalog is not None and not any(i == cat[0] for _, i in train):
            train.append(("t9", cat[0]))
        users = sorted({r[0] for r in self.recs} | {u for u, _, _ in self.truth})
        base: list[tuple[Any, ...]] = []
        if self.baseline is not None:
            pos: dict[str, int] = {}
            for u, i, s in self.baseline:
                pos[u] = pos.get(u, 0) + 1
                base.append((u, i, float(s), pos[u]))
        else:
            for u in users:
                mine = [r[1] for r in self.recs if r[0] == u]
                for r, i in enumerate(reversed(mine), 1):
                    base.append((u, i, float(len(mine) - r + 1), r))
        return {
            "train": train,
            "catalog": [(i,) for i in cat],
            "categories": [(i, c) for i in cat for c in CATEGORIES.get(i, ("z",))],
            "baseline": base,
            "item_groups": ([tuple(r) for r in self.item_groups] if self.item_groups is not None
                            else [(i, "g1" if int(i[1:]) % 2 else "g2") for i in cat]),
            "user_groups": ([tuple(r) for r in self.user_groups] if self.user_groups is not None
                            else [(u, "a" if n % 2 == 0 else "b") for n, u in enumerate(users)]),
        }


__all__ = ["Scenario", "Rows", "TRAIN", "CATEGORIES"]
