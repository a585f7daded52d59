"""Reading and checking the log, the target policy and the reward model, and aligning them
into per-round arrays (:class:`Aligned`).

Every input goes through :func:`receval.io.read_frame` (pandas, polars, Arrow, a dict of
columns, CSV, Parquet). Joins are on the id values themselves (an integer id column meets a
text one as text), so the row order and the spelling of the ids never reach a value: every
sum over rows runs in an order fixed by the content (see :mod:`receval.ope.core`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import DataError
from ..io import read_frame, scan_frame

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


def _require(columns: list[str], what: str, names: list[str]) -> None:
    for n in names:
        if n not in columns:
            raise DataError(f"name the {what}'s column '{n}' (or pass its name as a keyword, e.g. {_kw(n)}=...); "
                            f"found: {', '.join(columns)}"[:400])


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


def _source(obj: Any, what: str, c: OpeColumns) -> pl.LazyFrame:
    """The input as a LazyFrame: a Parquet file (or a folder of part files) scanned, so that only
    the batch of contexts being aligned is ever in memory; any other input read whole (a frame
    already is; CSV is parsed once)."""
    ids = (c.context, c.item)
    if isinstance(obj, (str, os.PathLike)):
        path = Path(obj)
        if path.is_dir() or path.suffix.lower() in (".parquet", ".pq"):
            lf = scan_frame(obj, what, ids)
            if lf is not None:
                return lf
    return read_frame(obj, what, ids=ids).lazy()


def _number_facts(col: str, dtype: Any, rng: str | None = None) -> list[pl.Expr]:
    """What :func:`_number_verdict` needs of a number column, as aggregate expressions (one pass)."""
    out = [pl.col(col).first().alias(f"{col}:first"), pl.col(col).null_count().alias(f"{col}:nulls")]
    if dtype.is_numeric() or dtype == pl.Boolean:
        f = pl.col(col).cast(pl.Float64)
        out.append((~f.is_finite()).sum().alias(f"{col}:nonfinite"))
        if rng is not None:
            bad = (f <= 0) | (f > 1) if rng == "open" else (f < 0) | (f > 1)
            out += [bad.sum().alias(f"{col}:bad"), f.filter(bad).first().alias(f"{col}:badfirst")]
    return out


def _number_verdict(facts: dict[str, Any], col: str, dtype: Any, what: str, name: str) -> None:
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        raise DataError(f"give numbers in the {what} column '{name}' (it holds {dtype!s}, e.g. {facts[col + ':first']!r})")
    if facts[f"{col}:nulls"]:
        raise DataError(f"fill or drop the {facts[col + ':nulls']} missing values of the {what} column '{name}'")
    if facts[f"{col}:nonfinite"]:
        raise DataError(f"give finite numbers in the {what} column '{name}': {facts[col + ':nonfinite']} are NaN or infinite")


def _position_facts(col: str, dtype: Any) -> list[pl.Expr]:
    out = [pl.col(col).null_count().alias(f"{col}:nulls")]
    if dtype.is_float():
        f = pl.col(col).cast(pl.Float64)
        out.append((f != f.round(0)).sum().alias(f"{col}:frac"))
    if dtype.is_numeric():
        out += [pl.col(col).cast(pl.Float64).min().alias(f"{col}:min"), pl.col(col).cast(pl.Float64).max().alias(f"{col}:max")]
    return out


def _position_verdict(facts: dict[str, Any], col: str, dtype: Any, what: str, name: str) -> None:
    if dtype.is_float():
        if facts[f"{col}:nulls"] or facts[f"{col}:frac"]:
            raise DataError(f"give whole numbers (1 = top) in the {what} column '{name}'")
    elif not dtype.is_integer():
        raise DataError(f"give whole numbers (1 = top) in the {what} column '{name}' (it holds {dtype})")
    if facts[f"{col}:nulls"]:
        raise DataError(f"fill or drop the {facts[col + ':nulls']} missing values of the {what} column '{name}'")
    low = int(facts[f"{col}:min"])
    if low < 1:
        raise DataError(f"number positions from 1 (the top) in the {what} column '{name}': found {low}")


def _facts(lf: pl.LazyFrame, exprs: list[pl.Expr]) -> dict[str, Any]:
    """Every aggregate of ``exprs`` in one pass over ``lf``."""
    return lf.select(exprs).collect().row(0, named=True) if exprs else {}


@dataclass
class LogInput:
    """The log, checked, as a LazyFrame with canonical columns ``c i r mu`` [``p muc muj``]."""

    frame: pl.LazyFrame
    rows: int
    #: the largest position (None: no positions)
    top: int | None


def read_log(obj: Any, c: OpeColumns) -> LogInput:
    """The log checked in one pass (every check of the whole log), read batch by batch later."""
    lf = _source(obj, "log", c)
    schema = lf.collect_schema()
    _require(list(schema.names()), "log", [c.context, c.item, c.reward, c.propensity])
    names = {c.context: "c", c.item: "i", c.reward: "r", c.propensity: "mu", c.position: "p", c.cascade: "muc", c.joint: "muj"}
    lf = lf.select([pl.col(k).alias(v) for k, v in names.items() if k in schema.names()])
    types = dict(lf.collect_schema())
    exprs = [pl.len().alias("n"), pl.col("c").null_count().alias("c:nulls"), pl.col("i").null_count().alias("i:nulls")]
    exprs += _number_facts("r", types["r"])
    probs = [(col, name) for col, name in (("mu", c.propensity), ("muc", c.cascade), ("muj", c.joint)) if col in types]
    for col, _ in probs:
        exprs += _number_facts(col, types[col], "open")
    if "p" in types:
        exprs += _position_facts("p", types["p"])
    f = _facts(lf, exprs)
    if f["n"] == 0:
        raise DataError("give a log with at least one round (it has no rows)")
    for col, name in (("c", c.context), ("i", c.item)):
        if f[f"{col}:nulls"]:
            raise DataError(f"fill or drop the {f[col + ':nulls']} missing ids of the log column '{name}'")
    _number_verdict(f, "r", types["r"], "log", c.reward)
    for col, name in probs:
        _number_verdict(f, col, types[col], "log", name)
        if f[f"{col}:bad"]:
            raise DataError(f"give every logged round a {name} in (0, 1]: {f[col + ':bad']} are not "
                            f"(e.g. {f[col + ':badfirst']!r}); a round its policy could not show cannot be weighted")
    casts = [pl.col(col).cast(pl.Float64) for col in ("r", "mu", "muc", "muj") if col in types]
    top = None
    if "p" in types:
        _position_verdict(f, "p", types["p"], "log", c.position)
        casts.append(pl.col("p").cast(pl.Int64))
        top = int(f["p:max"])
    return LogInput(lf.with_columns(casts), int(f["n"]), top)


def bucket(batches: int, integer_ids: bool) -> pl.Expr:
    """The batch of each row: a hash of its context id (as an Int64 when every input's context ids
    are integers, else as text, so an integer id and its text meet in one batch) modulo ``batches``."""
    key = pl.col("c").cast(pl.Int64) if integer_ids else pl.col("c").cast(pl.String)
    return key.hash(0) % batches


def batch(lf: pl.LazyFrame, b: int, batches: int, integer_ids: bool) -> pl.DataFrame:
    """The rows of ``lf`` whose contexts fall in batch ``b`` of ``batches`` (:func:`bucket`)."""
    if batches == 1:
        return lf.collect()
    return lf.filter(bucket(batches, integer_ids) == b).collect()


@dataclass
class TargetInput:
    """A target policy, checked row by row, as a LazyFrame (``c i`` and ``pi`` [``p pic pij``],
    or ``key``: its rank or score); the checks per context run on each batch (:func:`target_batch`)."""

    frame: pl.LazyFrame
    mode: str


def read_target(obj: Any, c: OpeColumns, positions: bool, slate_size: int | None) -> TargetInput:
    """The target and how it was read: ``prob`` (a propensity column), ``rank`` or ``score``
    (a deterministic ranking: probability 1 at its position). The checks of single rows run
    here, in one pass."""
    lf = _source(obj, "target", c)
    cols = list(lf.collect_schema().names())
    _require(cols, "target", [c.context, c.item])
    if c.propensity in cols:
        mode = "prob"
    elif c.rank in cols:
        mode = "rank"
    elif c.score in cols:
        mode = "score"
    else:
        raise DataError(f"give the target a '{c.propensity}' column (its probabilities) or a '{c.rank}' or '{c.score}' column "
                        f"(a deterministic ranking); found: {', '.join(cols)}"[:400])
    keep = {c.context: "c", c.item: "i"}
    if mode == "prob":
        keep |= {c.propensity: "pi", c.position: "p", c.cascade: "pic", c.joint: "pij"}
    else:
        keep |= {(c.rank if mode == "rank" else c.score): "key"}
    lf = lf.select([pl.col(k).alias(v) for k, v in keep.items() if k in cols])
    types = dict(lf.collect_schema())
    exprs = [pl.col("c").null_count().alias("c:nulls"), pl.col("i").null_count().alias("i:nulls")]
    if mode == "prob":
        exprs += _number_facts("pi", types["pi"], "closed")
        for col in ("pic", "pij"):
            if col in types:
                exprs += _number_facts(col, types[col])
        if "p" in types:
            exprs += _position_facts("p", types["p"])
            if slate_size is not None and types["p"].is_numeric():
                exprs.append((pl.col("p").cast(pl.Float64) > slate_size).sum().alias("p:beyond"))
    elif mode == "rank":
        exprs += _position_facts("key", types["key"])
    else:
        exprs += _number_facts("key", types["key"])
    f = _facts(lf, exprs)
    for col, name in (("c", c.context), ("i", c.item)):
        if f[f"{col}:nulls"]:
            raise DataError(f"fill or drop the {f[col + ':nulls']} missing ids of the target column '{name}'")
    casts: list[pl.Expr] = []
    if mode == "prob":
        _number_verdict(f, "pi", types["pi"], "target", c.propensity)
        for col, name in (("pic", c.cascade), ("pij", c.joint)):
            if col in types:
                _number_verdict(f, col, types[col], "target", name)
                casts.append(pl.col(col).cast(pl.Float64))
        if f["pi:bad"]:
            raise DataError(f"give target probabilities in [0, 1]: {f['pi:bad']} are not (e.g. {f['pi:badfirst']!r})")
        casts.append(pl.col("pi").cast(pl.Float64))
        if ("p" in types) != positions:
            raise DataError("give the target a position column exactly when the log has one: "
                            + ("the log has positions, the target has none" if positions else "the target has positions, the log none"))
        if positions:
            _position_verdict(f, "p", types["p"], "target", c.position)
            if slate_size is not None and f["p:beyond"]:
                raise DataError(f"give target positions within the slate (1..{slate_size}): {f['p:beyond']} rows are beyond it")
            casts.append(pl.col("p").cast(pl.Int64))
    elif mode == "rank":
        _position_verdict(f, "key", types["key"], "target", c.rank)
        casts.append(pl.col("key").cast(pl.Int64))
    else:
        _number_verdict(f, "key", types["key"], "target", c.score)
        casts.append(pl.col("key").cast(pl.Float64))
    return TargetInput(lf.with_columns(casts), mode)


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


#: the checks per context of a target batch, in the order their refusals are given
CONTEXT_CHECKS = ("ties", "ranks", "rows", "sums", "missing")


def target_batch(f: pl.DataFrame, mode: str, positions: bool, slate_size: int | None) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """One batch of a target (whole contexts) as ``c i [p] pi [pic pij]``, and the rows that
    fail each check per context (:data:`CONTEXT_CHECKS`; empty frames: none)."""
    bad: dict[str, pl.DataFrame] = {}
    if mode != "prob":
        if mode == "rank":
            f = f.with_columns(pl.col("key").alias("p"))
        else:
            f = f.with_columns(
                pl.col("key").rank("ordinal", descending=True).over("c").cast(pl.Int64).alias("p"),
                pl.col("key").rank("min", descending=True).over("c").cast(pl.Int64).alias("lo"),
                pl.col("key").rank("max", descending=True).over("c").cast(pl.Int64).alias("hi"),
            )
            top = slate_size if positions and slate_size is not None else 1
            bad["ties"] = f.filter((pl.col("lo") != pl.col("hi")) & (pl.col("lo") <= top)).select("c").unique(maintain_order=True)
            f = f.drop("lo", "hi")
        bad["ranks"] = f.filter(pl.struct("c", "p").is_duplicated()).select("c", "p")
        limit = slate_size if positions and slate_size is not None else 1
        f = f.filter(pl.col("p") <= limit).with_columns(pl.lit(1.0).alias("pi"))
        f = f.select("c", "i", "p", "pi") if positions else f.select("c", "i", "pi")
    keys = ["c", "p", "i"] if "p" in f.columns else ["c", "i"]
    # sorted by its keys (a copy that replaces the batch): a repeated key is a row equal to the
    # one before, and the sums per context run on sorted groups (far less memory than hashing)
    f = f.sort(keys)
    same = f.select(pl.all_horizontal([pl.col(k) == pl.col(k).shift(1) for k in keys]).fill_null(False)).to_series()
    bad["rows"] = f.filter(same | same.shift(-1, fill_value=False)).select(keys)
    del same
    group = ["c", "p"] if "p" in keys else ["c"]
    bad["sums"] = _sums_above(f.with_columns(pl.col("c").set_sorted()) if group == ["c"] else f, group)
    return f, bad


def refusal(kind: str, rows: pl.DataFrame, count: int, what: str, keys: list[str], top: int = 1) -> DataError:
    """The one-line refusal of a check per context (:data:`CONTEXT_CHECKS`), ``count`` offenders
    over every batch, ``rows`` those of the first batch that had any."""
    if kind == "ties":
        return DataError(f"break the target's score ties (or give a rank column): {count} contexts have equal scores "
                         f"within the top {top}, e.g. {_example(rows, ['c'])}")
    if kind == "ranks":
        return DataError(f"give each target item its own rank within a context: {count} rows share one, e.g. {_example(rows, ['c', 'p'])}")
    if kind == "rows":
        where = "context, position and item" if "p" in keys else "context and item"
        return DataError(f"give the target one row per {where}: {count} rows repeat one, e.g. {_example(rows, keys)}")
    if kind == "sums":
        group = ["c", "p"] if "p" in keys else ["c"]
        where = "context and position" if "p" in group else "context"
        return DataError(f"give target probabilities that sum to at most 1 per {where}: {count} sum above it, "
                         f"e.g. {_example(rows.sort(group), group + ['s'])}")
    return DataError(f"give the {what} rows for every logged context: {count} have none, e.g. context_id="
                     f"{rows.get_column('c').sort()[0]!r} (list an item with probability 0 if it shows nothing there)")


@dataclass
class RewardsInput:
    """The reward model, checked, as a LazyFrame ``c i [p] q``."""

    frame: pl.LazyFrame


def read_rewards(obj: Any, c: OpeColumns) -> RewardsInput:
    """The reward model as ``c i [p] q``; its rows checked in one pass, its keys per batch."""
    lf = _source(obj, "reward model", c)
    cols = list(lf.collect_schema().names())
    _require(cols, "reward model", [c.context, c.item, c.estimate])
    names = {c.context: "c", c.item: "i", c.position: "p", c.estimate: "q"}
    lf = lf.select([pl.col(k).alias(v) for k, v in names.items() if k in cols])
    types = dict(lf.collect_schema())
    exprs = _number_facts("q", types["q"]) + (_position_facts("p", types["p"]) if "p" in types else [])
    f = _facts(lf, exprs)
    _number_verdict(f, "q", types["q"], "reward model", c.estimate)
    casts = [pl.col("q").cast(pl.Float64)]
    if "p" in types:
        _position_verdict(f, "p", types["p"], "reward model", c.position)
        casts.append(pl.col("p").cast(pl.Int64))
    return RewardsInput(lf.with_columns(casts))


def rewards_batch(f: pl.DataFrame) -> pl.DataFrame:
    """One batch of the reward model, refused when a key repeats (keys are whole in a batch)."""
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
    ``shown``: the items of the whole log (column ``i``) when ``log`` is one batch of it (default: ``log``'s).
    Every logged context must have target rows (the caller checks it, counting over every batch)."""
    log = log.with_row_index("_row")
    for col in ("c", "i"):
        log, target = _same_ids(log, target, col, what)
    pos = "p" in log.columns
    keys = ["c", "p", "i"] if pos else ["c", "i"]
    group = ["c", "p"] if pos else ["c"]
    n = log.height
    # each log row's target probability: the rows that meet a target row (keys are unique in the
    # target), scattered into zeros by row number (no sort, no left join building on the target)
    j = target.select(keys + ["pi"]).join(log.select(keys + ["_row"]), on=keys, how="inner")
    pi = np.zeros(n)
    pi[j.get_column("_row").to_numpy()] = j.get_column("pi").to_numpy()
    del j
    shown = log.select("i").unique() if shown is None else _same_ids(log, shown, "i", what)[1]
    u = np.zeros(n)
    unseen = target.join(shown, on="i", how="anti")
    if unseen.height:
        uns = unseen.group_by(group).agg(pl.col("pi").sort().sum().alias("u"))
        ju = uns.join(log.select(group + ["_row"]), on=group, how="inner")
        u[ju.get_column("_row").to_numpy()] = ju.get_column("u").to_numpy()
    del unseen
    out = Aligned(n=n, reward=log.get_column("r").to_numpy(), mu=log.get_column("mu").to_numpy(), pi=pi,
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


__all__ = ["OpeColumns", "Aligned", "LogInput", "TargetInput", "RewardsInput", "read_log", "read_target", "read_rewards",
           "target_batch", "rewards_batch", "refusal", "bucket", "batch", "align", "CONTEXT_CHECKS", "SUM_TOLERANCE"]
