"""Data and transformations for tests/contracts/test_invariance.py.

A :class:`Case` is the content of one evaluation: recommendations, ground truth and every
side input, as plain column dicts (lists) with integer ids, plus the relevance threshold.
The transformations return a new Case with the same content up to row order, a renaming of
the ids, the column types (polars Categorical) or the container (CSV / Parquet files).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import strategies as st

SIDE_NAMES = ("categories", "train", "catalog", "baseline", "item_groups", "user_groups")
#: where the user / item ids sit in each frame of a Case
USER_COLS = {"recs": "user_id", "truth": "user_id", "train": "user_id", "baseline": "user_id", "user_groups": "user_id"}
ITEM_COLS = {"recs": "item_id", "truth": "item_id", "train": "item_id", "baseline": "item_id", "categories": "item_id",
             "item_groups": "item_id"}

N_ITEMS = 12
ITEM_GROUPS = ("a", "b")  # item groups: bias_disparity(icat=a) reads group a
USER_GROUPS = ("x", "y")  # user groups: bias_disparity(ugroup=x) reads group x


@dataclass
class Case:
    recs: Any  # a column dict; after a transformation also a polars frame or a file path
    truth: Any
    side: dict[str, Any] = field(default_factory=dict)  # name -> column dict (catalog: a list)
    rel: float | None = None

    def frames(self) -> dict[str, Any]:
        return {"recs": self.recs, "truth": self.truth, **self.side}

    def kwargs(self, names) -> dict[str, Any]:
        """The side inputs ``names`` as keywords of ``receval.evaluate``."""
        return {n: self.side[n] for n in names}

    def describe(self) -> str:
        """A compact reproducer (paste into a Python prompt)."""
        parts = [f"recs = {self.recs!r}", f"truth = {self.truth!r}"]
        parts += [f"{n} = {v!r}" for n, v in self.side.items()]
        parts.append(f"rel = {self.rel!r}")
        return "\n".join(parts)


def _cols(**kw) -> dict[str, list]:
    return {k: list(v) for k, v in kw.items()}


@st.composite
def cases(draw, distinct_scores: bool = False, dups: bool = False, rank: bool = False, rich: bool = False) -> Case:
    """Up to 6 truth users (ids 0..7) with 1..4 graded truth rows (ratings 1..5), up to 7
    recommendations per user over 12 items with coarse scores (2, 4 or 10 levels: ties are the
    rule) unless ``distinct_scores`` (distinct over all rows, and over the baseline's rows); some truth users without
    recommendations, up to two recommendation users (8, 9) outside the truth; every side input.
    ``dups``: some recommendation rows repeated (for ``dup=keep`` specs); ``rank``: a 1-based rank
    column (score descending) next to the score. ``rich``: 3..10 truth rows per user and every item
    in 1..3 of 4 categories (greedy ideals over categories then meet ties between different
    category sets).

    Hypothesis draws the sizes, the number of score levels, the relevance threshold and a seed;
    the seed fills in the rows (few draws per example: generation stays cheap, and shrinking
    still makes the inputs small)."""
    n_users = draw(st.integers(1, 6))
    width = draw(st.integers(1, 7))  # the longest recommendation list
    levels = draw(st.sampled_from([2, 4, 4, 10]))
    rel = draw(st.sampled_from([None, 3.0]))
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    items = list(range(N_ITEMS))
    users = rnd.sample(range(8), n_users)
    recs: dict[str, list] = {"user_id": [], "item_id": [], "score": []}
    truth: dict[str, list] = {"user_id": [], "item_id": [], "rating": []}
    for u in users:
        for i in rnd.sample(items, rnd.randint(3, 10) if rich else rnd.randint(1, 4)):
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(float(rnd.randint(1, 5)))
    with_recs = [u for j, u in enumerate(users) if j == 0 or rnd.random() < 0.8]
    rec_users = with_recs + rnd.sample([8, 9], rnd.choice([0, 0, 1, 2]))  # 8, 9: not in the truth
    for u in rec_users:
        mine = [i for v, i in zip(truth["user_id"], truth["item_id"]) if v == u]
        n = rnd.randint(1, width)
        hits = rnd.sample(mine, min(len(mine), rnd.randint(0, 2))) if mine and rnd.random() < 0.8 else []
        listed = (hits + rnd.sample([i for i in items if i not in hits], n))[:n]
        rnd.shuffle(listed)
        if dups and rnd.random() < 0.5:
            listed.append(listed[0])
        for i in listed:
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(float(rnd.randrange(levels)))
    if distinct_scores:
        perm = list(range(len(recs["score"])))
        rnd.shuffle(perm)
        recs["score"] = [float(10 * p + 1) for p in perm]
    if rank:
        order = sorted(range(len(recs["user_id"])), key=lambda j: (recs["user_id"][j], -recs["score"][j], j))
        ranks = [0] * len(order)
        prev, r = None, 0
        for j in order:
            r = r + 1 if recs["user_id"][j] == prev else 1
            prev = recs["user_id"][j]
            ranks[j] = r
        recs["rank"] = ranks
    all_users = sorted(set(users) | set(rec_users))
    # side inputs
    categories: dict[str, list] = {"item_id": [], "category": []}
    names = ["c1", "c2", "c3", "c4"] if rich else ["c1", "c2", "c3"]
    for i in sorted(rnd.sample(items, N_ITEMS if rich else rnd.randint(2, N_ITEMS))):
        for c in rnd.sample(names, rnd.choice([1, 2, 3] if rich else [1, 1, 2])):
            categories["item_id"].append(i)
            categories["category"].append(c)
    n_train = rnd.randint(3, 14)
    train = _cols(user_id=[rnd.choice(all_users + [10, 11]) for _ in range(n_train)],
                  item_id=[rnd.choice(items) for _ in range(n_train)])
    catalog = sorted(set(items) | set(rnd.sample(range(N_ITEMS, N_ITEMS + 4), rnd.randint(0, 3))))
    baseline: dict[str, list] = {"user_id": [], "item_id": [], "score": []}
    for u in rnd.sample(all_users, rnd.randint(1, len(all_users))):
        listed = [i for v, i in zip(recs["user_id"], recs["item_id"]) if v == u]
        pool = sorted(set(listed) | set(rnd.sample(range(N_ITEMS + 2), 3)))
        b_levels = rnd.choice([1, 2])  # ties: the baseline's order is its scores (1 level: all tied)
        for i in rnd.sample(pool, rnd.randint(min(4, len(pool)), len(pool))):
            baseline["user_id"].append(u)
            baseline["item_id"].append(i)
            baseline["score"].append(float(rnd.randrange(b_levels)))
    if distinct_scores:  # the baseline's own ranking without ties too
        perm = list(range(len(baseline["score"])))
        rnd.shuffle(perm)
        baseline["score"] = [float(p) for p in perm]
    grouped = rnd.sample(range(2, N_ITEMS), rnd.randint(0, N_ITEMS - 2))
    item_groups = _cols(item_id=[0, 1] + grouped, group=list(ITEM_GROUPS) + [rnd.choice(ITEM_GROUPS) for _ in grouped])
    ug_users = [u for u in all_users if u in users[:2] or rnd.random() < 0.75]
    first = {u: USER_GROUPS[j] for j, u in enumerate(users[:2])}
    user_groups = _cols(user_id=ug_users, group=[first.get(u) or rnd.choice(USER_GROUPS) for u in ug_users])
    side = {"categories": categories, "train": train, "catalog": catalog, "baseline": baseline,
            "item_groups": item_groups, "user_groups": user_groups}
    return Case(recs, truth, side, rel)


def case_of(recs: dict[str, list], truth: dict[str, list], rel: float | None = None, **side: Any) -> Case:
    """A hand-written Case; side inputs not given get a plain valid content (every item in one
    category and group a/b alternately, each user in train with its first truth item, the items
    as catalogue, the recommendations as baseline, users in groups x/y alternately)."""
    users = sorted(set(recs["user_id"]) | set(truth["user_id"]))
    items = sorted(set(recs["item_id"]) | set(truth["item_id"]))
    first = {u: i for u, i in zip(reversed(truth["user_id"]), reversed(truth["item_id"]))}
    default = {
        "categories": {"item_id": items, "category": ["c1"] * len(items)},
        "train": {"user_id": list(first), "item_id": list(first.values())},
        "catalog": items,
        "baseline": {k: list(v) for k, v in recs.items() if k in ("user_id", "item_id", "score")},
        "item_groups": {"item_id": items, "group": [ITEM_GROUPS[j % 2] for j in range(len(items))]},
        "user_groups": {"user_id": users, "group": [USER_GROUPS[j % 2] for j in range(len(users))]},
    }
    return Case(recs, truth, {n: side.get(n, default[n]) for n in SIDE_NAMES}, rel)


# ---- transformations -------------------------------------------------------------------------


def _take(cols: dict[str, list], perm: list[int]) -> dict[str, list]:
    return {k: [v[j] for j in perm] for k, v in cols.items()}


def _shuffled(cols: dict[str, list], rnd: random.Random, keep_user_order: bool) -> dict[str, list]:
    n = len(next(iter(cols.values())))
    perm = list(range(n))
    rnd.shuffle(perm)
    if keep_user_order and "user_id" in cols:
        # interleave the users at random but keep each user's rows in their input order
        slots: dict[Any, list[int]] = {}
        for j in range(n):
            slots.setdefault(cols["user_id"][j], []).append(j)
        users = [cols["user_id"][j] for j in perm]
        nxt = {u: iter(v) for u, v in slots.items()}
        perm = [next(nxt[u]) for u in users]
    return _take(cols, perm)


def shuffle(case: Case, seed: int, keep_user_order: bool = False) -> Case:
    """Every frame's rows in another order (the catalogue list too)."""
    rnd = random.Random(seed)
    side: dict[str, Any] = {}
    for name, v in case.side.items():
        if name == "catalog":
            items = list(v)
            rnd.shuffle(items)
            side[name] = items
        else:
            side[name] = _shuffled(v, rnd, keep_user_order and name == "baseline")
    return replace(case, recs=_shuffled(case.recs, rnd, keep_user_order), truth=_shuffled(case.truth, rnd, False), side=side)


def all_ids(case: Case) -> tuple[list, list]:
    users, items = set(), set()
    for name, frame in case.frames().items():
        if name == "catalog":
            items |= set(frame)
            continue
        if name in USER_COLS:
            users |= set(frame[USER_COLS[name]])
        if name in ITEM_COLS:
            items |= set(frame[ITEM_COLS[name]])
    return sorted(users), sorted(items)


def id_maps(case: Case, seed: int, kind: str) -> tuple[dict, dict]:
    """Bijections of the user ids and of the item ids.

    ``perm``: a random permutation onto other integers; ``str``: a random permutation onto
    strings ("u<n>", "i<n>": not order-preserving as text); ``monotone``: order-preserving
    integers (random gaps); ``monotone_str``: order-preserving zero-padded strings."""
    rnd = random.Random(seed)
    users, items = all_ids(case)

    def one(ids: list, prefix: str) -> dict:
        if kind in ("perm", "str"):
            new = rnd.sample(range(100, 100 + 40 * len(ids) + 40), len(ids))
        else:
            new, x = [], rnd.randint(0, 50)
            for _ in ids:
                x += rnd.randint(1, 900)
                new.append(x)
        if kind in ("str",):
            return {a: f"{prefix}{b}" for a, b in zip(ids, new)}
        if kind == "monotone_str":
            return {a: f"{prefix}{b:06d}" for a, b in zip(ids, new)}
        return dict(zip(ids, new))

    return one(users, "u"), one(items, "i")


def category_map(case: Case, seed: int, monotone: bool = False) -> dict:
    """A bijection of the category ids onto other strings: in another order, or (``monotone``)
    in the same order."""
    cats = sorted(set(case.side["categories"]["category"])) if "categories" in case.side else []
    new = sorted(random.Random(seed).sample(range(100, 1000), len(cats)))
    if not monotone:
        random.Random(seed + 1).shuffle(new)
    return {c: f"k{n}" for c, n in zip(cats, new)}


def rename(case: Case, umap: dict, imap: dict, cmap: dict | None = None) -> Case:
    """The ids renamed: users by ``umap``, items by ``imap``, categories by ``cmap`` (if given)."""
    def frame(name: str, cols: Any) -> Any:
        if name == "catalog":
            return [imap[i] for i in cols]
        out: dict[str, list] = dict(cols)
        if name == "categories" and cmap is not None:
            out["category"] = [cmap[c] for c in cols["category"]]
        if name in USER_COLS:
            out["user_id"] = [umap[u] for u in cols["user_id"]]
        if name in ITEM_COLS:
            out["item_id"] = [imap[i] for i in cols["item_id"]]
        return out

    return replace(case, recs=frame("recs", case.recs), truth=frame("truth", case.truth),
                   side={n: frame(n, v) for n, v in case.side.items()})


def categorical(case: Case) -> Case:
    """Every frame as a polars DataFrame whose (string) id columns are Categorical."""
    def frame(name: str, cols: Any) -> Any:
        if name == "catalog":
            return pl.DataFrame({"item_id": cols}).with_columns(pl.col("item_id").cast(pl.Categorical))
        df = pl.DataFrame(cols)
        return df.with_columns([pl.col(c).cast(pl.Categorical) for c in ("user_id", "item_id") if c in df.columns])

    return replace(case, recs=frame("recs", case.recs), truth=frame("truth", case.truth),
                   side={n: frame(n, v) for n, v in case.side.items()})


def to_files(case: Case, folder: Path, fmt: str) -> Case:
    """Every frame written to ``folder`` as .csv or .parquet; the Case holds the paths."""
    folder.mkdir(parents=True, exist_ok=True)

    def frame(name: str, cols: Any) -> str:
        df = pl.DataFrame({"item_id": cols}) if name == "catalog" else pl.DataFrame(cols)
        path = folder / f"{name}.{fmt}"
        if fmt == "csv":
            df.write_csv(path)
        else:
            df.write_parquet(path)
        return str(path)

    return replace(case, recs=frame("recs", case.recs), truth=frame("truth", case.truth),
                   side={n: frame(n, v) for n, v in case.side.items()})


# ---- outcomes ----------------------------------------------------------------------------------

_MASK = re.compile(r"'[^']*'|\"[^\"]*\"|\w*\d+(\.\d+)?")


def mask(msg: str) -> str:
    """A refusal message without what may name ids or counts: quoted text, and words with a
    digit (numbers, ids such as u12)."""
    return _MASK.sub("#", msg)
