"""Compare dialects: one table, a row per dialect, a column per metric.

:func:`compare` evaluates the same recommendations and ground truth as every chosen library
(and version) computes each metric. The input is read once; the intermediate form is built
once per distinct set of build options (relevance, ordering, ties, duplicates) across all
dialects, and metrics whose resolved options coincide across dialects are computed once.
A metric a library does not offer is null (shown as "–").

>>> from receval.examples import WORKED_RECS, WORKED_TRUTH
>>> df = compare(WORKED_RECS, WORKED_TRUTH, ["map@4", "mrr@4"], dialects="standard,daisyrec,openrec")
>>> df.select("dialect", "map@4", "mrr@4").rows()
[('standard', 0.3333333333333333, 0.5), ('daisyrec@1.1.2', 0.25, 0.75), ('openrec@0.3.0', None, None)]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .arguments import add_column_args, add_context_args, column_kwargs, context_kwargs
from .dialects import all_dialects, load_dialect
from .engine import SideInputs, evaluate_each
from .errors import MetricMissing, RecevalError, SpecError
from .inputs import encode_inputs
from .io import pop_columns
from .options import CONTEXT_AXES
from .report import command_formats, fmt_value, render
from .resolve import UNSET, decide_rel, resolve
from .signature import note_side
from .spec import spec_list

__all__ = ["compare", "compare_results", "Comparison", "select_dialects"]


def select_dialects(dialects: Any = "all") -> list[Any]:
    """Resolve a selection to dialect objects (``None`` stands for the standard definitions).

    ``"all"``: the standard and every dialect file (every version); ``"defaults"``: the
    standard and each library's default version; otherwise a comma-separated string or a list
    of names (``"recbole,daisyrec@2.3"``). An unknown name is an error with suggestions.
    """
    if dialects is None:
        dialects = "all"
    if isinstance(dialects, str):
        text = dialects.strip().lower()
        if text == "all":
            return [None] + [d for d in all_dialects() if d.name != "standard"]
        if text == "defaults":
            return [None] + [d for d in all_dialects() if d.name != "standard" and d.default]
        names: Iterable[Any] = [t for t in (p.strip() for p in dialects.split(",")) if t]
    elif isinstance(dialects, (list, tuple, set, frozenset)):
        names = dialects
    else:
        raise SpecError(f"pass dialects as 'all', 'defaults', a comma-separated string or a list of names; "
                        f"got a {type(dialects).__name__}")
    out: list[Any] = []
    for n in names:
        if not (n is None or isinstance(n, str) or type(n).__name__ == "Dialect"):
            raise SpecError(f"pass dialect names as strings (e.g. 'recbole@1.2'); got a {type(n).__name__}: {n!r}")
        if n is None or (isinstance(n, str) and n.strip().lower() == "standard"):
            d = None
        else:
            d = load_dialect(n) if isinstance(n, str) else n
        if d not in out:
            out.append(d)
    if not out:
        raise SpecError("no dialect given; pass 'all', 'defaults' or names like 'recbole,daisyrec@2.3'")
    return out


def _label(d: Any) -> str:
    return "standard" if d is None else d.label


@dataclass
class Comparison:
    """What :func:`compare_results` returns: the table plus signatures and per-cell errors."""

    frame: pl.DataFrame
    metrics: list[str]
    signatures: dict[tuple[str, str], str] = field(default_factory=dict)  # (dialect, metric) -> signature
    errors: dict[tuple[str, str], str] = field(default_factory=dict)  # (dialect, metric) -> message
    lacking: dict[tuple[str, str], str] = field(default_factory=dict)  # (dialect, metric) -> "has no metric"

    def cell(self, dialect: str, metric: str) -> str:
        """A cell as shown: the value, "–" where the library lacks the metric, "error" on failure."""
        if (dialect, metric) in self.errors:
            return "error"
        row = self.frame.filter(pl.col("dialect") == dialect)
        return fmt_value(row[metric][0] if row.height else None)


def compare_results(recs: Any, truth: Any, metrics: str | Iterable[Any], *, dialects: Any = "all", errors: str = "mark",
                    categories: Any = None, train: Any = None, catalog: Any = None, **context: Any) -> Comparison:
    """Evaluate ``metrics`` under each dialect; see :func:`compare` for the parameters.

    ``errors="mark"`` turns a dialect's data error (e.g. repeated items it refuses, a rank
    column it needs) into a null cell recorded in :attr:`Comparison.errors`;
    ``errors="raise"`` re-raises it. ``context``: the column keywords (``user_col``, ...,
    :data:`receval.io.COLUMN_KEYWORDS`) and the context options (``rel``, ``ties``, ...).
    """
    metrics = spec_list(metrics)  # as evaluate reads them
    if not metrics:
        raise SpecError("no metric given; pass at least one, e.g. 'ndcg@10'")
    if errors not in ("mark", "raise"):
        raise SpecError(f"errors must be 'mark' or 'raise', got {errors!r}")
    cols = pop_columns(context)
    unknown_ctx = set(context) - set(CONTEXT_AXES)
    if unknown_ctx:
        raise TypeError(f"compare() got unexpected keyword arguments: {', '.join(sorted(unknown_ctx))}")
    chosen = select_dialects(dialects)

    overrides = {name: context.get(name, UNSET) for name in CONTEXT_AXES}
    for name, value in list(overrides.items()):
        if value is None and name != "rel":
            overrides[name] = UNSET

    # resolve every (dialect, metric) cell; a metric the library lacks stays empty
    cells: dict[tuple[int, int], Any] = {}
    result = Comparison(frame=pl.DataFrame(), metrics=[])
    labels = [_label(d) for d in chosen]
    specs: list[str] = []
    for j, m in enumerate(metrics):
        specs.append(str(resolve(m).spec))
    for i, d in enumerate(chosen):
        for j, m in enumerate(metrics):
            try:
                cells[(i, j)] = resolve(m, dialect=d, overrides=overrides)
            except MetricMissing as exc:
                if d is None:
                    raise
                result.lacking[(labels[i], specs[j])] = str(exc)

    if type(recs).__module__.startswith("pyspark"):  # pragma: no cover
        raise SpecError("compare runs in memory; collect the Spark frames first (or use evaluate per dialect)")
    enc = encode_inputs(recs, truth, cols)

    cells = dict(zip(cells, decide_rel(list(cells.values()), "rating" in enc.truth)))  # rel:>0 when the truth is rated
    side = SideInputs(categories, train, catalog, cols)

    cells = dict(zip(cells, note_side(list(cells.values()), side)))  # signatures name the side inputs read

    # one engine entry for every cell; a refusal marks only the cells it refuses
    keys = list(cells)
    each = evaluate_each(enc, [cells[c] for c in keys], side, strict=errors == "raise")
    values: dict[tuple[int, int], float | None] = {}
    for i, e in each.items():  # in the engine's order (build groups), as the errors were always listed
        c = keys[i]
        if isinstance(e, RecevalError):
            result.errors[(labels[c[0]], specs[c[1]])] = str(e)
            continue
        values[c] = e.value
        result.signatures[(labels[c[0]], specs[c[1]])] = e.signature

    data: dict[str, list[Any]] = {
        "dialect": labels,
        "library": ["receval" if d is None else d.library for d in chosen],
        "version": ["standard" if d is None else d.version for d in chosen],
    }
    for j, s in enumerate(specs):
        data[s] = [values.get((i, j)) for i in range(len(chosen))]
    schema = {"dialect": pl.String, "library": pl.String, "version": pl.String, **{s: pl.Float64 for s in specs}}
    result.frame = pl.DataFrame(data, schema=schema)
    result.metrics = specs
    return result


def compare(recs: Any, truth: Any, metrics: str | Iterable[Any], *, dialects: Any = "all", errors: str = "mark",
            **kwargs: Any) -> pl.DataFrame:
    """One table: a row per dialect, a column per metric (null where a library lacks it).

    Parameters
    ----------
    recs, truth
        As for :func:`receval.evaluate` (frames, dicts of columns, CSV/Parquet paths).
    metrics
        Metric specs (``"map@20"``); options written in a spec win over every dialect.
    dialects
        ``"all"`` (standard + every dialect version, default), ``"defaults"`` (each library's
        default version), or names: ``"recbole,daisyrec@2.3"`` or a list.
    errors
        ``"mark"`` (default): a dialect that refuses the data gets null cells;
        ``"raise"``: raise instead. Use :func:`compare_results` for the messages and signatures.
    **kwargs
        Column names (``user_col``, ...), side inputs and context options (``rel``, ``ties``,
        ...) applied to every dialect, as in :func:`receval.evaluate`.

    Returns
    -------
    polars.DataFrame
        Columns ``dialect``, ``library``, ``version`` and one Float64 column per metric.
    """
    return compare_results(recs, truth, metrics, dialects=dialects, errors=errors, **kwargs).frame


def render_comparison(res: Comparison, fmt: str = "table") -> str:
    """The comparison as a table ("–": the library lacks the metric; "error": it refused the data).
    JSON is standard JSON: a value that is not a finite number is null."""
    import json
    import math

    def number(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v

    if fmt == "json":
        records = []
        for row in res.frame.iter_rows(named=True):
            d = row["dialect"]
            records.append({
                "dialect": d, "library": row["library"], "version": row["version"],
                "values": {m: number(row[m]) for m in res.metrics},
                "signatures": {m: res.signatures.get((d, m)) for m in res.metrics},
                "errors": {m: res.errors[(d, m)] for m in res.metrics if (d, m) in res.errors},
            })
        return json.dumps(records, indent=2, allow_nan=False) + "\n"
    headers = ["dialect", *res.metrics]
    rows: list[list[Any]] = []
    for row in res.frame.iter_rows(named=True):
        d = row["dialect"]
        cells: list[Any] = [d]
        for m in res.metrics:
            cells.append("error" if (d, m) in res.errors else row[m])
        rows.append(cells)
    out = render(headers, rows, fmt)
    if fmt in ("table", "markdown") and res.errors:
        by_msg: dict[tuple[str, str], list[str]] = defaultdict(list)
        for (d, m), msg in res.errors.items():
            by_msg[(d, msg)].append(m)
        out += "".join(f"error: {d} ({', '.join(ms)}): {msg}\n" for (d, msg), ms in by_msg.items())
    return out


def build_command(p: argparse.ArgumentParser):
    """``receval compare`` (registered by :data:`receval.cli.COMMANDS`): add its arguments to
    ``p`` and return its runner."""
    p.add_argument("recs", help="recommendations: CSV or Parquet with user, item and score and/or rank")
    p.add_argument("truth", help="ground truth: CSV or Parquet with user, item and optional rating")
    p.add_argument("-m", "--metric", action="append", required=True, help="a metric spec, e.g. map@20 (repeatable)")
    p.add_argument("--dialects", default="all", help="'all' (default), 'defaults', or names like recbole,daisyrec@2.3")
    p.add_argument("--format", choices=command_formats("compare"), default="table")
    p.add_argument("--strict", action="store_true", help="fail when a dialect refuses the data instead of marking the cell")
    add_column_args(p)
    add_context_args(p)

    def run(a: argparse.Namespace) -> int:
        res = compare_results(
            a.recs, a.truth, a.metric, dialects=a.dialects, errors="raise" if a.strict else "mark",
            **column_kwargs(a), **context_kwargs(a),
        )
        print(render_comparison(res, a.format), end="")
        return 0

    return run
