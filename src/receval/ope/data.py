"""Reading and checking the log, the target policy and the reward model, and aligning them
into per-round arrays (:class:`Aligned`).

Every input goes through :func:`receval.io.read_frame` (pandas, polars, Arrow, a dict of
columns, CSV, Parquet). Joins are on the id values themselves (an integer id column meets a
text one as text), so the row order and the spelling of the ids never reach a value: every
sum over rows runs in an order fixed by the content (see :mod:`receval.ope.core`).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ..errors import DataError
from ..io import read_frame

#: a target's probabilities may sum above 1 in a context (and position) by this much (rounding)
SUM_TOLERANCE = 1e-9


@dataclass(frozen=True)
class OpeColumns:
    """Column names of the inputs (each overridable by a keyword of :func:`receval.ope.evaluate`)."""

    context: str = "context_id"
    item: str = "item_id"
    reward: str = "reward"
    propensity: str = "propensity"
    position: str = "position"
    rank: str = "rank"
    score: str = "score"
    estimate: str = "estimate"
    cascade: str = "cascade_propensity"
    joint: str = "joint_propensity"


def _example(frame: pl.DataFrame, cols: Sequence[str]) -> str:
    row = frame.select(cols).row(0)
    return ", ".join(f"{c}={v!r}" for c, v in zip(cols, row))


def _numbers(frame: pl.DataFrame, col: str, what: str, name: str) -> pl.DataFrame:
    """The column as finite Float64, or a one-line refusal (text, missing, NaN or infinite values)."""
    s = frame.get_column(col)
    if not (s.dtype.is_numeric() or s.dtype == pl.Boolean):
        raise DataError(f"give numbers in the {what} column '{name}' (it holds {s.dtype!s}, e.g. {s[0]!r})")
    if s.null_count():
        raise DataError(f"fill or drop the {s.null_count()} missing values of the {what} column '{name}'")
    f = s.cast(pl.Float64)
    bad = ~f.is_finite()
    if bad.any():
        raise DataError(f"give finite numbers in the {what} column '{name}': {int(bad.sum())} are NaN or infinite")
    return frame.with_columns(f.alias(col))


def _ids(frame: pl.DataFrame, col: str, what: str, name: str) -> None:
    s = frame.get_column(col)
    if s.null_count():
        raise DataError(f"fill or drop the {s.null_count()} missing ids of the {what} column '{name}'")


def _positions(frame: pl.DataFrame, col: str, what: str, name: str) -> pl.DataFrame:
    s = frame.get_column(col)
    if s.dtype.is_float():
        f = s.cast(pl.Float64)
        if s.null_count() or not bool((f == f.round(0)).all()):
            raise DataError(f"give whole numbers (1 = top) in the {what} column '{name}'")
        s = f.cast(pl.Int64)
    elif not s.dtype.is_integer():
        raise DataError(f"give whole numbers (1 = top) in the {what} column '{name}' (it holds {s.dtype})")
    if s.null_count():
        raise DataError(f"fill or drop the {s.null_count()} missing values of the {what} column '{name}'")
    s = s.cast(pl.Int64)
    low = int(s.min())  # type: ignore[arg-type]
    if low < 1:
        raise DataError(f"number positions from 1 (the top) in the {what} column '{name}': found {low}")
    return frame.with_columns(s.alias(col))


def _require(frame: pl.DataFrame, what: str, names: list[str]) -> None:
    for n in names:
        if n not in frame.columns:
            raise DataError(f"name the {what}'s column '{n}' (or pass its name as a keyword, e.g. {_kw(n)}=...); "
                            f"found: {', '.join(frame.columns)}"[:400])


def _kw(col: str) -> str:
    return {"context_id": "context_col", "item_id": "item_col", "reward": "reward_col", "propensity": "propensity_col",
            "position": "position_col", "estimate": "estimate_col"}.get(col, "the column keyword")


def _same_ids(a: pl.DataFrame, b: pl.DataFrame, col: str, what: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both frames' id column ``col`` of one type: integers meet text as text."""
    ta, tb = a.schema[col], b.schema[col]
    if ta == tb:
        return a, b
    if ta.is_integer() and tb.is_integer():
        return a.with_columns(pl.col(col).cast(pl.Int64)), b.with_columns(pl.col(col).cast(pl.Int64))
    if ta == pl.String or tb == pl.String:
        return a.with_columns(pl.col(col).cast(pl.String)), b.with_columns(pl.col(col).cast(pl.String))
    raise DataError(f"give the log and the {what} {col} ids of one type (integers or text), not {ta} and {tb}")


def read_log(obj: Any, c: OpeColumns) -> pl.DataFrame:
    """The log with canonical columns ``c i r mu`` and, when present, ``p muc muj``."""
    f = read_frame(obj, "log", ids=(c.context, c.item))
    _require(f, "log", [c.context, c.item, c.reward, c.propensity])
    names = {c.context: "c", c.item: "i", c.reward: "r", c.propensity: "mu", c.position: "p", c.cascade: "muc", c.joint: "muj"}
    f = f.select([pl.col(k).alias(v) for k, v in names.items() if k in f.columns])
    if f.height == 0:
        raise DataError("give a log with at least one round (it has no rows)")
    _ids(f, "c", "log", c.context)
    _ids(f, "i", "log", c.item)
    f = _numbers(f, "r", "log", c.reward)
    for col, name in (("mu", c.propensity), ("muc", c.cascade), ("muj", c.joint)):
        if col in f.columns:
            f = _numbers(f, col, "log", name)
            bad = f.filter((pl.col(col) <= 0) | (pl.col(col) > 1))
            if bad.height:
                raise DataError(f"give every logged round a {name} in (0, 1]: {bad.height} are not "
                                f"(e.g. {bad.get_column(col)[0]!r}); a round its policy could not show cannot be weighted")
    if "p" in f.columns:
        f = _positions(f, "p", "log", c.position)
    return f


def split(frame: pl.DataFrame, batches: int) -> dict[int, pl.DataFrame]:
    """The rows of ``frame`` in ``batches`` sets of whole contexts (column ``c``), keyed by batch:
    a hash of the context id written as text, so an integer id and its text meet in one batch."""
    if batches == 1:
        return {0: frame}
    bucket = (pl.col("c").cast(pl.String).hash(0) % batches).alias("_b")
    parts = frame.with_columns(bucket).partition_by("_b", as_dict=True, include_key=False)
    return {int(k[0]): v for k, v in sorted(parts.items(), key=lambda kv: kv[0][0])}  # type: ignore[arg-type]


def _offenders(parts: dict[int, pl.DataFrame], find: Any) -> pl.DataFrame:
    """``find(part)`` of every batch, stacked (a check per context, run batch by batch)."""
    return pl.concat([find(f) for f in parts.values()], how="vertical")


def _sums_above(g: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """The groups whose probabilities, summed in sorted order (so the verdict does not depend on
    the row order), exceed 1 + SUM_TOLERANCE; only the groups whose plain sum is within its
    rounding bound (n · 4.5e-16 of a sum near 1) of the limit are summed again sorted."""
    s = g.group_by(group).agg(pl.col("pi").sum().alias("s"), pl.len().alias("n"))
    near = s.filter(pl.col("s") + pl.col("n").cast(pl.Float64) * 4.5e-16 > 1 + SUM_TOLERANCE).select(group)
    if near.height == 0:
        return s.clear().select(group + ["s"])
    return (g.join(near, on=group).group_by(group).agg(pl.col("pi").sort().sum().alias("s"))
            .filter(pl.col("s") > 1 + SUM_TOLERANCE))


def read_target(obj: Any, c: OpeColumns, positions: bool, slate_size: int | None,
                batches: int = 1) -> tuple[dict[int, pl.DataFrame], str]:
    """The target as ``c i [p] pi [pic pij]``, in ``batches`` sets of contexts (:func:`split`),
    and how it was read: ``prob`` (a propensity column), ``rank`` or ``score`` (a deterministic
    ranking: probability 1 at its position). The checks per context run batch by batch."""
    f = read_frame(obj, "target", ids=(c.context, c.item))
    _require(f, "target", [c.context, c.item])
    _ids(f, c.context, "target", c.context)
    _ids(f, c.item, "target", c.item)
    if c.propensity in f.columns:
        mode = "prob"
    elif c.rank in f.columns:
        mode = "rank"
    elif c.score in f.columns:
        mode = "score"
    else:
        raise DataError(f"give the target a '{c.propensity}' column (its probabilities) or a '{c.rank}' or '{c.score}' column "
                        f"(a deterministic ranking); found: {', '.join(f.columns)}"[:400])
    keep = {c.context: "c", c.item: "i"}
    if mode == "prob":
        keep |= {c.propensity: "pi", c.position: "p", c.cascade: "pic", c.joint: "pij"}
    else:
        keep |= {(c.rank if mode == "rank" else c.score): "key"}
    f = f.select([pl.col(k).alias(v) for k, v in keep.items() if k in f.columns])
    if mode == "prob":
        f = _numbers(f, "pi", "target", c.propensity)
        for col, name in (("pic", c.cascade), ("pij", c.joint)):
            if col in f.columns:
                f = _numbers(f, col, "target", name)
        bad = f.filter((pl.col("pi") < 0) | (pl.col("pi") > 1))
        if bad.height:
            raise DataError(f"give target probabilities in [0, 1]: {bad.height} are not (e.g. {bad.get_column('pi')[0]!r})")
        if ("p" in f.columns) != positions:
            raise DataError("give the target a position column exactly when the log has one: "
                            + ("the log has positions, the target has none" if positions else "the target has positions, the log none"))
        if positions:
            f = _positions(f, "p", "target", c.position)
            if slate_size is not None and f.filter(pl.col("p") > slate_size).height:
                raise DataError(f"give target positions within the slate (1..{slate_size}): "
                                f"{f.filter(pl.col('p') > slate_size).height} rows are beyond it")
    else:
        if mode == "rank":
            f = _positions(f, "key", "target", c.rank)
            f = f.with_columns(pl.col("key").alias("p"))
        else:
            f = _numbers(f, "key", "target", c.score)
            f = f.with_columns(
                pl.col("key").rank("ordinal", descending=True).over("c").cast(pl.Int64).alias("p"),
                pl.col("key").rank("min", descending=True).over("c").cast(pl.Int64).alias("lo"),
                pl.col("key").rank("max", descending=True).over("c").cast(pl.Int64).alias("hi"),
            )
            top = slate_size if positions and slate_size is not None else 1
            ties = f.filter((pl.col("lo") != pl.col("hi")) & (pl.col("lo") <= top))
            if ties.height:
                raise DataError(f"break the target's score ties (or give a rank column): {ties.get_column('c').n_unique()} "
                                f"contexts have equal scores within the top {top}, e.g. {_example(ties, ['c'])}")
            f = f.drop("lo", "hi")
        dup = f.filter(pl.struct("c", "p").is_duplicated())
        if dup.height:
            raise DataError(f"give each target item its own rank within a context: {dup.height} rows share one, e.g. {_example(dup, ['c', 'p'])}")
        limit = slate_size if positions and slate_size is not None else 1
        f = f.filter(pl.col("p") <= limit).with_columns(pl.lit(1.0).alias("pi"))
        f = f.select("c", "i", "p", "pi") if positions else f.select("c", "i", "pi")
    keys = ["c", "p", "i"] if "p" in f.columns else ["c", "i"]
    parts = split(f, batches)
    del f
    dup = _offenders(parts, lambda g: g.filter(pl.struct(keys).is_duplicated()))
    if dup.height:
        where = "context, position and item" if "p" in keys else "context and item"
        raise DataError(f"give the target one row per {where}: {dup.height} rows repeat one, e.g. {_example(dup, keys)}")
    group = ["c", "p"] if "p" in keys else ["c"]
    over = _offenders(parts, lambda g: _sums_above(g, group))
    if over.height:
        where = "context and position" if "p" in group else "context"
        raise DataError(f"give target probabilities that sum to at most 1 per {where}: {over.height} sum above it, "
                        f"e.g. {_example(over.sort(group), group + ['s'])}")
    return parts, mode


def read_rewards(obj: Any, c: OpeColumns) -> pl.DataFrame:
    """The reward model as ``c i [p] q``, one row per key."""
    f = read_frame(obj, "reward model", ids=(c.context, c.item))
    _require(f, "reward model", [c.context, c.item, c.estimate])
    names = {c.context: "c", c.item: "i", c.position: "p", c.estimate: "q"}
    f = f.select([pl.col(k).alias(v) for k, v in names.items() if k in f.columns])
    f = _numbers(f, "q", "reward model", c.estimate)
    if "p" in f.columns:
        f = _positions(f, "p", "reward model", c.position)
    keys = [k for k in ("c", "p", "i") if k in f.columns]
    dup = f.filter(pl.struct(keys).is_duplicated())
    if dup.height:
        raise DataError(f"give the reward model one estimate per key: {dup.height} rows repeat one, e.g. {_example(dup, keys)}")
    return f


@dataclass
class Aligned:
    """One target policy on the log: per-round (per log row) arrays in the log's row order."""

    n: int
    reward: np.ndarray
    mu: np.ndarray
    pi: np.ndarray
    #: the target's probability mass, in the row's context (and position), on items the log never shows
    unsupported: np.ndarray
    mode: str
    q: np.ndarray | None = None
    qpi: np.ndarray | None = None
    slate: np.ndarray | None = None
    n_slates: int = 0
    #: the rows in slate then position order (the per-slate sums run in it)
    slate_order: np.ndarray | None = None
    pi_cascade: np.ndarray | None = None
    mu_cascade: np.ndarray | None = None
    pi_joint: np.ndarray | None = None
    mu_joint: np.ndarray | None = None
    slate_rule: str | None = None


def align(log: pl.DataFrame, target: pl.DataFrame, mode: str, rewards: pl.DataFrame | None, *, slates: set[str],
          what: str = "target", shown: pl.DataFrame | None = None) -> Aligned:
    """The arrays every estimator reads; ``slates``: the slate estimators asked for (their checks and columns);
    ``shown``: the items of the whole log (column ``i``) when ``log`` is one batch of it (default: ``log``'s)."""
    log = log.with_row_index("_row")
    for col in ("c", "i"):
        log, target = _same_ids(log, target, col, what)
    pos = "p" in log.columns
    keys = ["c", "p", "i"] if pos else ["c", "i"]
    group = ["c", "p"] if pos else ["c"]
    missing = log.select("c").unique().join(target.select("c").unique(), on="c", how="anti")
    if missing.height:
        raise DataError(f"give the {what} rows for every logged context: {missing.height} have none, e.g. context_id="
                        f"{missing.get_column('c')[0]!r} (list an item with probability 0 if it shows nothing there)")
    j = log.join(target.select(keys + ["pi"]), on=keys, how="left").sort("_row")
    pi = j.get_column("pi").fill_null(0.0).to_numpy()
    shown = log.select("i").unique() if shown is None else _same_ids(log, shown, "i", what)[1]
    uns = (target.join(shown, on="i", how="anti").group_by(group).agg(pl.col("pi").sort().sum().alias("u")))
    u = log.join(uns, on=group, how="left").sort("_row").get_column("u").fill_null(0.0).to_numpy()
    out = Aligned(n=log.height, reward=log.get_column("r").to_numpy(), mu=log.get_column("mu").to_numpy(), pi=pi,
                  unsupported=u, mode=mode)
    if rewards is not None:
        out.q, out.qpi = _model(log, target, rewards, pos, what)
    if slates:
        _slates(log, target, out, slates, what)
    return out


def _model(log: pl.DataFrame, target: pl.DataFrame, rewards: pl.DataFrame, pos: bool, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``q`` of the logged item in each round and ``qpi`` = sum_a pi(a) q(a) of its context (and position)."""
    for col in ("c", "i"):
        log, rewards = _same_ids(log, rewards, col, "reward model")
        target, rewards = _same_ids(target, rewards, col, "reward model")
    if "p" in rewards.columns and not pos:
        raise DataError("drop the reward model's position column: the log has no positions")
    rkeys = [k for k in ("c", "p", "i") if k in rewards.columns]
    jq = log.join(rewards, on=rkeys, how="left").sort("_row")
    nq = jq.get_column("q").null_count()
    if nq:
        gap = jq.filter(pl.col("q").is_null())
        raise DataError(f"give the reward model an estimate for every logged item: {nq} rounds have none, e.g. {_example(gap, rkeys)}")
    group = ["c", "p"] if pos else ["c"]
    t = target.filter(pl.col("pi") > 0).join(rewards, on=rkeys, how="left")
    if t.get_column("q").null_count():
        gap = t.filter(pl.col("q").is_null())
        raise DataError(f"give the reward model an estimate for every item the {what} may show: {gap.height} have none, "
                        f"e.g. {_example(gap, ['c', 'i'] + (['p'] if pos else []))}")
    v = t.group_by(group).agg((pl.col("pi") * pl.col("q")).sort().sum().alias("v"))
    qpi = log.join(v, on=group, how="left").sort("_row").get_column("v").fill_null(0.0).to_numpy()
    return jq.get_column("q").to_numpy(), qpi


def _slates(log: pl.DataFrame, target: pl.DataFrame, out: Aligned, slates: set[str], what: str) -> None:
    if "p" not in log.columns:
        raise DataError(f"give the log a position column for the slate estimators ({', '.join(sorted(slates))})")
    dup = log.filter(pl.struct("c", "p").is_duplicated())
    if dup.height:
        raise DataError(f"give each slate (context) one row per position: {dup.height} rows repeat one, e.g. {_example(dup, ['c', 'p'])}")
    code = log.select(pl.col("c").rank("dense").cast(pl.Int64) - 1).to_series().to_numpy()
    pos = log.get_column("p").to_numpy()
    out.slate, out.n_slates = code, int(code.max()) + 1
    out.slate_order = np.lexsort((pos, code))
    given = {"rips": "pic", "sips": "pij"}
    need = {"rips": ("muc", "cascade_propensity"), "sips": ("muj", "joint_propensity")}
    rules = set()
    for name in sorted(slates & {"rips", "sips"}):
        col, label = need[name]
        if col not in log.columns:
            raise DataError(f"give the log a '{label}' column (the logging policy's probability of the slate"
                            f"{' down to each position' if name == 'rips' else ''}) for {name}")
        mu = log.get_column(col).to_numpy()
        if name == "sips":
            spread = log.group_by("c").agg((pl.col("muj").max() - pl.col("muj").min()).alias("d")).filter(pl.col("d") > 0)
            if spread.height:
                raise DataError(f"give one joint_propensity per slate: {spread.height} slates have several, e.g. {_example(spread, ['c'])}")
        if given[name] in target.columns:
            t = log.join(target.select("c", "p", "i", given[name]), on=["c", "p", "i"], how="left").sort("_row")
            pis = t.get_column(given[name]).fill_null(0.0).to_numpy()
            rules.add("given")
        else:
            # the product of the per-position probabilities, in position order within each slate
            f = pl.DataFrame({"s": code, "p": pos, "pi": out.pi, "row": np.arange(out.n)}).sort("s", "p")
            prod = pl.col("pi").cum_prod() if name == "rips" else pl.col("pi").product()
            f = f.with_columns(prod.over("s").alias("w")).sort("row")
            pis = f.get_column("w").to_numpy()
            rules.add("product")
        if name == "rips":
            out.pi_cascade, out.mu_cascade = pis, mu
        else:
            out.pi_joint, out.mu_joint = pis, mu
    out.slate_rule = "+".join(sorted(rules)) if rules else None


__all__ = ["OpeColumns", "Aligned", "read_log", "read_target", "read_rewards", "align", "split", "SUM_TOLERANCE"]
