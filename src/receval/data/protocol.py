r"""The evaluation protocol of Tamm et al. (RecSys 2021).

*Quality Metrics in Recommender Systems: Do We Calculate Metrics
Consistently?* (Y.-M. Tamm, R. Damdinov, A. Vasilev, RecSys '21) compare
metric implementations on one fixed set of recommendations:

1. MovieLens ratings; a rating :math:`\ge 4.5` is *relevant*;
2. global time split: the latest 20 % of interactions are test
   (:func:`receval.data.splits.global_time_split`);
3. test users and items that do not occur in train are removed;
4. only relevant test rows are kept (train keeps *every* rating);
5. EASE (:math:`\lambda = 0.5`, binary :math:`X`) is fitted on train; every
   test user gets the full ranking of all train items minus the items
   that user has in train; metrics are computed at :math:`k = 20`.

:func:`prepare_study` does steps 1-4, :func:`recommend` step 5.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any

import numpy as np
import polars as pl

from receval.data.splits import global_time_split, leave_last_out, random_split

__all__ = [
    "STUDY_K",
    "STUDY_LAMBDA",
    "STUDY_TEST_FRACTION",
    "STUDY_THRESHOLD",
    "StudyData",
    "prepare_study",
    "recommend",
]

#: Cut-off of the study's metrics.
STUDY_K = 20
#: Ratings at or above this value are relevant.
STUDY_THRESHOLD = 4.5
#: Share of the latest interactions used as test.
STUDY_TEST_FRACTION = 0.2
#: EASE regularisation in the study's code.
STUDY_LAMBDA = 0.5

_SPLITS = ("global_time", "leave_last_out", "random")


@dataclass(frozen=True)
class StudyData:
    """Result of :func:`prepare_study`.

    Attributes
    ----------
    train : polars.DataFrame
        All train interactions (every rating, relevant or not).
    test : polars.DataFrame
        Relevant test interactions of warm users and items (keeps ``rating``).
    test_all : polars.DataFrame
        Test interactions of warm users and items before the relevance
        filter (for metrics that need the non-relevant rated items).
    stats : dict
        JSON-serialisable statistics, see :func:`prepare_study`.
    """

    train: pl.DataFrame
    test: pl.DataFrame
    test_all: pl.DataFrame
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def test_users(self) -> np.ndarray:
        """Sorted ids of the users with at least one relevant test row."""
        return np.unique(self.test["user_id"].to_numpy())


def _sizes(df: pl.DataFrame) -> tuple[int, int, int]:
    return int(df.height), int(df["user_id"].n_unique()), int(df["item_id"].n_unique())


def prepare_study(
    ratings: pl.DataFrame,
    *,
    threshold: float | None = STUDY_THRESHOLD,
    test_fraction: float = STUDY_TEST_FRACTION,
    cutoff: int | str | datetime | None = None,
    split: str = "global_time",
    seed: int = 0,
    n_last: int = 1,
) -> StudyData:
    """Split ratings and build the study's train and relevant test sets.

    Steps: split (default: global time split, latest ``test_fraction`` of
    interactions, or everything from ``cutoff`` on); drop test rows whose
    user or item is not in train; keep test rows with
    ``rating >= threshold``.  The train part is not filtered.

    Parameters
    ----------
    ratings : polars.DataFrame
        ``user_id``, ``item_id``, ``rating``, ``timestamp`` (as returned by
        :func:`receval.data.load_bundled` / :func:`~receval.data.load_movielens`).
    threshold : float or None, default 4.5
        Relevance threshold (inclusive); ``None`` keeps every test row.
    test_fraction : float, default 0.2
        For ``"global_time"`` (unless ``cutoff``) and ``"random"``.
    cutoff : int, str or datetime, optional
        First test time for ``"global_time"`` (overrides ``test_fraction``).
    split : {"global_time", "leave_last_out", "random"}
        Which split of :mod:`receval.data.splits` to use.
    seed : int, default 0
        Seed of the ``"random"`` split.
    n_last : int, default 1
        Held-out interactions per user for ``"leave_last_out"``.

    Returns
    -------
    StudyData
        ``train``, ``test`` (relevant only), ``test_all`` and ``stats`` with
        keys: ``split``, ``threshold``, ``test_fraction``, ``cutoff_unix``,
        ``cutoff_iso`` (UTC, None unless a time split), ``seed``, ``n_last``,
        ``n_interactions``, ``n_users``, ``n_items`` (whole data),
        ``n_train``, ``n_train_users``, ``n_train_items``,
        ``n_test_split`` (test rows straight after the split),
        ``realised_test_fraction`` (= n_test_split / n_interactions),
        ``n_cold_users``, ``n_cold_items`` (test users/items absent from
        train), ``n_test_cold_rows`` (rows they remove), ``n_test_warm``,
        ``n_test_irrelevant_rows``, ``n_test`` (relevant rows),
        ``n_test_users``, ``n_test_items``.

    Examples
    --------
    >>> df = pl.DataFrame({"user_id": [1, 1, 2, 2, 1, 2, 3], "item_id": [1, 2, 3, 1, 3, 2, 1],
    ...                    "rating": [5.0, 3.0, 4.0, 5.0, 5.0, 2.0, 5.0],
    ...                    "timestamp": [1, 2, 3, 4, 5, 6, 7]})
    >>> s = prepare_study(df, test_fraction=0.5)    # cut-off t* = 4: rows at 4..7 are test
    >>> s.test.rows()                               # user 3 is cold, (2, 2) is not relevant
    [(2, 1, 5.0, 4), (1, 3, 5.0, 5)]
    >>> s.stats["n_train"], s.stats["n_test_split"], s.stats["n_cold_users"]
    (3, 4, 1)
    """
    for col in ("user_id", "item_id", "rating", "timestamp"):
        if col not in ratings.columns:
            raise ValueError(f"ratings need a {col!r} column; load them with receval.data.load_movielens")
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {', '.join(_SPLITS)}, got {split!r}")
    cutoff_unix = None
    if split == "global_time":
        train, test_raw, cutoff_unix = global_time_split(ratings, test_fraction, cutoff=cutoff)
    elif split == "leave_last_out":
        train, test_raw = leave_last_out(ratings, n_last)
    else:
        train, test_raw = random_split(ratings, test_fraction, seed)
    if train.height == 0:
        raise ValueError("the split left train empty; use a later cutoff or a smaller test_fraction")

    train_users = train.select(pl.col("user_id").unique())
    train_items = train.select(pl.col("item_id").unique())
    warm = test_raw.join(train_users, on="user_id", how="semi").join(train_items, on="item_id", how="semi")
    n_cold_users = test_raw.select(pl.col("user_id").unique()).join(train_users, on="user_id", how="anti").height
    n_cold_items = test_raw.select(pl.col("item_id").unique()).join(train_items, on="item_id", how="anti").height
    test = warm if threshold is None else warm.filter(pl.col("rating") >= threshold)

    n, nu, ni = _sizes(ratings)
    ntr, ntru, ntri = _sizes(train)
    nte, nteu, ntei = _sizes(test) if test.height else (0, 0, 0)
    stats: dict[str, Any] = {
        "protocol": "Tamm et al. RecSys 2021",
        "split": split,
        "threshold": None if threshold is None else float(threshold),
        "test_fraction": None if (split == "global_time" and cutoff is not None) or split == "leave_last_out"
        else float(test_fraction),
        "cutoff_unix": cutoff_unix,
        "cutoff_iso": None if cutoff_unix is None
        else datetime.fromtimestamp(cutoff_unix, tz=UTC).isoformat(),
        "seed": int(seed) if split == "random" else None,
        "n_last": int(n_last) if split == "leave_last_out" else None,
        "n_interactions": n,
        "n_users": nu,
        "n_items": ni,
        "n_train": ntr,
        "n_train_users": ntru,
        "n_train_items": ntri,
        "n_test_split": int(test_raw.height),
        "realised_test_fraction": test_raw.height / n,
        "n_cold_users": int(n_cold_users),
        "n_cold_items": int(n_cold_items),
        "n_test_cold_rows": int(test_raw.height - warm.height),
        "n_test_warm": int(warm.height),
        "n_test_irrelevant_rows": int(warm.height - test.height),
        "n_test": nte,
        "n_test_users": nteu,
        "n_test_items": ntei,
    }
    return StudyData(train=train, test=test, test_all=warm, stats=stats)


def _as_user_array(test_users) -> np.ndarray:
    if isinstance(test_users, pl.DataFrame):
        if "user_id" not in test_users.columns:
            raise ValueError("test_users frame needs a 'user_id' column; pass study.test or an array of ids")
        test_users = test_users["user_id"]
    if isinstance(test_users, pl.Series):
        test_users = test_users.to_numpy()
    arr = np.asarray(test_users).ravel()
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("test_users must be integer user ids; pass study.test_users")
    return np.unique(arr.astype(np.int64))


def recommend(
    train: pl.DataFrame,
    test_users,
    model,
    k: int | None = None,
    *,
    max_items: int | None = None,
    fit: bool = True,
    decimals: int | None = None,
    batch_size: int | None = None,
) -> pl.DataFrame:
    """Rank every train item the user has not seen, for each test user.

    Parameters
    ----------
    train : polars.DataFrame
        Train interactions (``user_id``, ``item_id``, ...); the items a user
        has here are removed from that user's ranking.
    test_users : array-like, polars.Series or polars.DataFrame
        User ids (a frame's ``user_id`` column is used, duplicates ignored).
        Every user must occur in train (:func:`prepare_study` ensures it).
    model : object
        Has ``fit(train)`` and ``score(user_ids) -> (scores, item_ids)``
        (see :mod:`receval.models`).
    k, max_items : int, optional
        Keep only the top ``k`` items per user (two names for the same
        option).  ``None`` (default) keeps the **full ranking**: every user
        gets :math:`n_{items}^{train} - |I_u^{train}|` rows.
    fit : bool, default True
        Fit ``model`` on ``train`` first; ``False`` uses it as fitted.
    decimals : int, optional
        Round scores to this many decimals before ranking.  Items with
        identical train columns (common: movies rated by one single user)
        have mathematically equal EASE scores that differ only by
        floating-point noise (~1e-16), so their order depends on the BLAS
        and solver; ``decimals=10`` makes those exact ties, which are then
        broken by ``item_id``.  Returned scores are the rounded ones.
    batch_size : int, optional
        Users scored at once (default: about 16 million matrix cells).

    Returns
    -------
    polars.DataFrame
        ``user_id`` (Int64), ``item_id`` (Int64), ``score`` (Float64),
        ``rank`` (Int64, 1-based), sorted by ``user_id`` ascending, then
        ``score`` descending, ties by ``item_id`` ascending; ``rank`` is the
        row's position within its user.

    Notes
    -----
    Full rankings are large: about #test users × #train items rows.  The
    bundled ml-latest-small study gives 27 × ~7,460 = 201,358 rows; scoring
    all 610 ml-latest-small users would give ~5.6 million rows (~180 MB).
    On ml-20m (~27,000 items) every 10,000 users give ~2.7·10^8 rows
    (~9 GB): pass ``k`` (or ``max_items``) there.  Working memory is
    bounded by ``batch_size`` × #items cells (≈ 5 arrays of 16 M cells by
    default).

    Examples
    --------
    >>> from receval.models import Popularity
    >>> train = pl.DataFrame({"user_id": [1, 1, 2, 3, 3], "item_id": [10, 20, 20, 30, 20]})
    >>> recommend(train, [1, 2], Popularity()).rows()
    [(1, 30, 1.0, 1), (2, 10, 1.0, 1), (2, 30, 1.0, 2)]
    """
    if k is not None and max_items is not None and k != max_items:
        raise ValueError(f"k={k} and max_items={max_items} disagree; pass only one of them")
    top = k if k is not None else max_items
    if top is not None and (isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1):
        raise ValueError(f"k/max_items must be a positive integer or None, got {top!r}")
    users = _as_user_array(test_users)
    for col in ("user_id", "item_id"):
        if col not in train.columns:
            raise ValueError(f"train needs a {col!r} column; load it with receval.data loaders")
    train_users = np.unique(train["user_id"].to_numpy())
    missing = np.setdiff1d(users, train_users)
    if missing.size:
        raise ValueError(
            f"{missing.size} test user(s) have no train interactions (e.g. {missing[0]}); "
            "remove cold users first (prepare_study does)"
        )
    if fit:
        model.fit(train)

    empty = pl.DataFrame(
        schema={"user_id": pl.Int64, "item_id": pl.Int64, "score": pl.Float64, "rank": pl.Int64}
    )
    if users.size == 0:
        return empty

    # seen[r, c]: user users[r] has item c in train (c = column of the model's scores)
    tr = train.select("user_id", "item_id").join(
        pl.DataFrame({"user_id": users}, schema={"user_id": train.schema["user_id"]}), on="user_id", how="semi"
    )
    tr_u = np.searchsorted(users, tr["user_id"].to_numpy())
    tr_i_ids = tr["item_id"].to_numpy()

    size = batch_size or max(1, (1 << 24) // max(1, train["item_id"].n_unique()))
    parts: list[pl.DataFrame] = []
    col_perm = None
    item_ids = None
    seen_rows = seen_cols = None
    for lo in range(0, users.size, size):
        batch = users[lo : lo + size]
        scores, ids = model.score(batch)
        scores = np.asarray(scores, dtype=np.float64)
        ids = np.asarray(ids, dtype=np.int64)
        if item_ids is None:
            col_perm = None if np.all(ids[1:] > ids[:-1]) else np.argsort(ids, kind="stable")
            item_ids = ids if col_perm is None else ids[col_perm]
            if np.any(item_ids[1:] == item_ids[:-1]):
                raise ValueError("model returned duplicate item ids; fix the model's score()")
            pos = np.searchsorted(item_ids, tr_i_ids)
            pos_c = np.minimum(pos, len(item_ids) - 1)
            ok = item_ids[pos_c] == tr_i_ids
            seen_rows, seen_cols = tr_u[ok], pos_c[ok]
        if col_perm is not None:
            scores = scores[:, col_perm]
        if scores.shape != (batch.size, item_ids.size):
            raise ValueError(f"model.score returned shape {scores.shape}, expected {(batch.size, item_ids.size)}")
        if np.isnan(scores).any():
            raise ValueError("model produced NaN scores; check the model and its training data")
        if decimals is not None:
            scores = np.round(scores, decimals)
        seen = np.zeros(scores.shape, dtype=bool)
        assert seen_rows is not None and seen_cols is not None  # set with item_ids, in the first batch
        sel = (seen_rows >= lo) & (seen_rows < lo + batch.size)
        seen[seen_rows[sel] - lo, seen_cols[sel]] = True

        order = np.argsort(-scores, axis=1, kind="stable")  # ties: lower column = lower item_id first
        keep = ~np.take_along_axis(seen, order, axis=1)
        rank = np.cumsum(keep, axis=1)
        if top is not None:
            keep &= rank <= top
        r, c = np.nonzero(keep)
        cj = order[r, c]
        parts.append(
            pl.DataFrame(
                {
                    "user_id": batch[r],
                    "item_id": item_ids[cj],
                    "score": scores[r, cj],
                    "rank": rank[r, c].astype(np.int64),
                },
                schema=empty.schema,
            )
        )
    return pl.concat(parts) if parts else empty
