"""The shipped conformance suite: reading it, running a case through receval, exporting it.

The suite is package data, ``suite.json`` next to this module, written by
``python tests/conformance_build.py`` (which keeps only the cases whose expectation has an
honest source, see :mod:`receval.conformance.generate`). Its expectations are frozen: a change
of receval that changes a value fails ``tests/test_conformance.py`` instead of silently
changing the published file.

``suite.json`` stores each scenario's rows once (``scenarios``) and each case by the name of
its scenario; :func:`export` writes the language-neutral, self-contained form (docs/conformance.md).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .case import Case
from ..errors import DataError
from ..jsonread import load_json
from ..api import evaluate
from ..errors import RecevalError
from .._version import __version__
from ..outputs import write_output

#: the format of ``suite.json`` and of an exported folder
FORMAT = 1

#: the side inputs and their columns (in the case frames and the exported CSV files)
SIDE_COLUMNS = {
    "train": ("user", "item"),
    "catalog": ("item",),
    "categories": ("item", "category"),
    "baseline": ("user", "item", "score", "rank"),
    "item_groups": ("item", "group"),
    "user_groups": ("user", "group"),
}
RECS_COLUMNS = ("user", "item", "score", "rank")
TRUTH_COLUMNS = ("user", "item", "rating")


def columns(rows: list[Any], names: tuple[str, ...]) -> dict[str, list[Any]]:
    """Rows (tuples) as a dict of columns."""
    return {n: [r[j] for r in rows] for j, n in enumerate(names)}


@lru_cache(maxsize=4)
def _read(path: str | None) -> dict[str, Any]:
    if path is None:
        text = resources.files(__package__).joinpath("suite.json").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text)
    return data


def raw_suite() -> dict[str, Any]:
    """The shipped ``suite.json`` as parsed JSON (scenarios and cases)."""
    return _read(None)


def _frame(cols: Mapping[str, list[Any]], names: tuple[str, ...]) -> Any:
    import polars as pl

    schema = {n: (pl.String if n in ("user", "item", "category", "group") else pl.Int64 if n == "rank" else pl.Float64)
              for n in names}
    return pl.DataFrame({n: cols.get(n, []) for n in names}, schema=schema)


def case_from_json(c: Mapping[str, Any]) -> Case:
    """A :class:`Case` from one exported case (self-contained JSON)."""
    exp = c.get("expected") or {}
    return Case(
        id=c["id"], metric=c["metric"], spec=c["spec"], k=c.get("k"),
        recs=_frame(c["recs"], RECS_COLUMNS), truth=_frame(c["truth"], TRUTH_COLUMNS),
        side={name: _frame(cols, SIDE_COLUMNS[name]) for name, cols in (c.get("side") or {}).items()},
        expected_mean=exp.get("mean"), expected_per_user=dict(exp.get("per_user") or {}),
        refusal=c.get("refusal"), source=c.get("source", ""), tags=tuple(c.get("tags", ())),
        dialect=c.get("dialect"), why=c.get("why", ""),
    )


def expand(case: Mapping[str, Any], scenarios: Mapping[str, Any]) -> dict[str, Any]:
    """One case of ``suite.json`` with its scenario's rows inline (the exported form): only the
    side inputs its value reads."""
    sc = scenarios[case["scenario"]]
    out = {k: v for k, v in case.items() if k != "scenario"}
    out["why"] = case.get("why") or sc.get("why", "")
    out["inputs"] = f"inputs/{case['scenario']}"
    out["recs"] = columns(sc["recs"], RECS_COLUMNS)
    out["truth"] = columns(sc["truth"], TRUTH_COLUMNS)
    out["side"] = {name: columns(sc["side"][name], SIDE_COLUMNS[name]) for name in case.get("side", [])}
    return out


def cases(metric: str | None = None, folder: str | Path | None = None) -> list[Case]:
    """The cases of the shipped suite (or of an exported ``folder``), of one ``metric`` or all."""
    if folder is not None:
        return [case_from_json(c) for c in read_folder(folder) if metric is None or c["metric"] == metric]
    data = raw_suite()
    return [case_from_json(expand(c, data["scenarios"])) for c in data["cases"] if metric is None or c["metric"] == metric]


def read_folder(folder: str | Path) -> list[dict[str, Any]]:
    """The cases of an exported folder (``cases/*.json``), as JSON objects."""

    root = Path(folder)
    files = sorted((root / "cases").glob("*.json")) if (root / "cases").is_dir() else []
    if not files:
        raise DataError(f"'{folder}' holds no conformance cases (cases/*.json); write them with `receval conformance export DIR`")
    out: list[dict[str, Any]] = []
    for f in files:
        data = load_json(f.read_text(encoding="utf-8"), str(f))
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            raise DataError(f"write a conformance case file as {{\"format\": {FORMAT}, \"metric\": ..., \"cases\": [...]}}: "
                            f"'{f}' has no list 'cases'")
        for i, c in enumerate(data["cases"]):
            check_case(c, f"'{f}' case {i}")
        out.extend(data["cases"])
    return out


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_case(c: Any, where: str) -> None:
    """One exported case checked field by field: a wrong shape is a one-line
    :class:`~receval.errors.DataError` naming ``where`` and the field."""

    def bad(fix: str, field: str) -> DataError:
        return DataError(f"{fix}: {where} field '{field}'")

    if not isinstance(c, dict):
        raise DataError(f"write each case as a JSON object: {where} is {type(c).__name__}")
    for name in ("id", "metric", "spec"):
        if not isinstance(c.get(name), str) or not c[name]:
            raise bad("write a non-empty string", name)
    k = c.get("k")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise bad("write k as a positive integer or null", "k")
    tables: list[tuple[str, Any, tuple[str, ...]]] = [("recs", c.get("recs"), RECS_COLUMNS), ("truth", c.get("truth"), TRUTH_COLUMNS)]
    side = c.get("side") or {}
    if not isinstance(side, dict):
        raise bad("write side as an object of side input name to columns", "side")
    for name, cols in side.items():
        if name not in SIDE_COLUMNS:
            raise bad(f"name a side input one of {', '.join(SIDE_COLUMNS)}", f"side.{str(name)[:40]}")
        tables.append((f"side.{name}", cols, SIDE_COLUMNS[name]))
    for label, cols, names in tables:
        if not isinstance(cols, dict):
            raise bad(f"write {label} as an object of columns ({', '.join(names)}) to lists", label)
        height = None
        for n in names:
            col = cols.get(n, [])
            if not isinstance(col, list):
                raise bad("write a column as a list", f"{label}.{n}")
            if height is not None and len(col) != height:
                raise bad(f"give every column of {label} the same length ({height})", f"{label}.{n}")
            height = len(col)
            ids = n in ("user", "item", "category", "group")
            for v in col:
                ok = isinstance(v, str) if ids else (isinstance(v, int) and not isinstance(v, bool)) if n == "rank" \
                    else v is None or _is_num(v)
                if not ok:
                    kind = "a string" if ids else "an integer" if n == "rank" else "a number or null"
                    raise bad(f"write each {n} as {kind}, not {str(v)[:40]!r}", f"{label}.{n}")
    exp = c.get("expected")
    if exp is not None:
        if not isinstance(exp, dict) or not (exp.get("mean") is None or _is_num(exp.get("mean"))) \
                or not isinstance(exp.get("per_user") or {}, dict):
            raise bad("write expected as {\"mean\": number or null, \"per_user\": {user: number}}", "expected")
    tags = c.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise bad("write tags as a list of strings", "tags")


# --- running a case through receval ---------------------------------------------------------


def run_receval(spec: str, dialect: str | None, recs: Any, truth: Any, side: Mapping[str, Any]) -> dict[str, Any]:
    """receval's outcome for one case: ``{"mean", "per_user", "signature"}`` or ``{"refusal": class name}``.

    ``recs``/``truth``/``side`` are frames or dicts of columns with the case's column names."""

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = evaluate(recs, truth, [spec], dialect=dialect, user_col="user", item_col="item", score_col="score",
                           rank_col="rank", rating_col="rating", **side_kwargs(side))
    except RecevalError as exc:
        return {"refusal": type(exc).__name__, "message": str(exc)}
    e = res.entries[0]
    return {"mean": _num(e.value), "per_user": per_user_of(res.user_ids, e.per_user), "signature": strip_version(e.signature)}


def side_kwargs(side: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, frame in side.items():
        if name == "catalog":
            out[name] = list(frame["item"]) if isinstance(frame, Mapping) else frame.get_column("item").to_list()
        else:
            out[name] = frame
    return out


def per_user_of(user_ids: Any, values: Any) -> dict[str, float | None]:
    """The users a value averages over and their values (users left out, NaN, are not listed)."""
    if values is None:
        return {}
    out: dict[str, float | None] = {}
    for u, v in zip(list(user_ids), list(values)):
        if hasattr(v, "__len__"):  # (precision, recall) pairs of f1(aggregate=means)
            continue
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        out[str(u)] = float(v)
    return out


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def strip_version(signature: str) -> str:
    """A signature without its ``v:`` field (the published suite holds across versions)."""
    return "|".join(p for p in signature.split("|") if not p.startswith("v:"))


def close(a: float | None, b: float | None, tol: float = 1e-12) -> bool:
    """Equal values within ``tol`` (relative and absolute); None (NaN) equals only None."""
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


# --- exporting ---------------------------------------------------------------------------------


def export(folder: str | Path) -> dict[str, int]:
    """Write the suite to ``folder`` (new or empty): ``README.md``, ``index.json``,
    ``cases/<metric>.json`` (self-contained cases) and ``inputs/<scenario>/*.csv``. Returns the
    number of cases by metric."""

    root = Path(folder)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise DataError(f"'{folder}' exists and is not an empty folder; export into a new or empty folder")
    data = raw_suite()
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for c in data["cases"]:
        by_metric.setdefault(c["metric"], []).append(expand(c, data["scenarios"]))
    try:
        (root / "cases").mkdir(parents=True, exist_ok=True)
        for name, sc in data["scenarios"].items():
            d = root / "inputs" / name
            d.mkdir(parents=True, exist_ok=True)
            write_output(d / "recs.csv", _csv(sc["recs"], RECS_COLUMNS), "conformance input")
            write_output(d / "truth.csv", _csv(sc["truth"], TRUTH_COLUMNS), "conformance input")
            for side, rows in sc["side"].items():
                write_output(d / f"{side}.csv", _csv(rows, SIDE_COLUMNS[side]), "conformance input")
    except OSError as exc:
        raise DataError(f"cannot write the conformance suite into '{folder}': {exc.strerror or exc}") from None
    counts = {}
    for name, items in sorted(by_metric.items()):
        write_output(root / "cases" / f"{name}.json", _case_file(name, items), "conformance case file")
        counts[name] = len(items)
    index = {
        "format": FORMAT, "receval": __version__, "built_with": data.get("built_with"), "cases": sum(counts.values()),
        "metrics": counts, "scenarios": {n: {"tags": s["tags"], "why": s["why"]} for n, s in data["scenarios"].items()},
        "sources": _count(c["source"] for c in data["cases"]), "tags": _count(t for c in data["cases"] for t in c["tags"]),
    }
    write_output(root / "index.json", json.dumps(index, indent=1, ensure_ascii=False) + "\n", "conformance index")
    write_output(root / "README.md", README.format(n=index["cases"], m=len(counts), version=__version__), "conformance README")
    return counts


def _case_file(metric: str, items: list[dict[str, Any]]) -> str:
    """A metric's case file: one case per line (valid JSON, readable line by line)."""
    lines = [json.dumps(c, ensure_ascii=False, separators=(", ", ": ")) for c in items]
    return (f'{{"format": {FORMAT}, "metric": {json.dumps(metric)}, "cases": [\n' + ",\n".join(lines) + "\n]}\n")


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def _csv(rows: list[Any], names: tuple[str, ...]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow([repr(float(v)) if isinstance(v, float) else v for v in r])
    return buf.getvalue()


README = """# receval conformance suite

{n} cases over {m} metrics, written by `receval conformance export` (receval {version}).
The format and how to use it from any language: receval's documentation, page "Conformance
suite" (docs/conformance.md in the repository).

## Files

- `index.json`: the format version, the number of cases by metric, source and tag, and the
  scenarios (small data sets, each chosen for an edge where implementations differ).
- `cases/<metric>.json`: `{{"format": 1, "metric": ..., "cases": [...]}}`; each case is
  self-contained:
  - `id`, `metric`, `spec` (receval's metric string), `k` (the cut-off, or null),
    `dialect` (null, or the library@version whose definition the spec is computed under),
    `signature` (the full resolved definition: every option value, without the receval version);
  - `recs`: columns `user`, `item`, `score`, `rank` (1-based position within the user: the
    list order; the scores may tie, the ranks do not);
  - `truth`: columns `user`, `item`, `rating`;
  - `side`: only the side inputs the value reads (`train`: user, item; `catalog`: item;
    `categories`: item, category; `baseline`: user, item, score, rank; `item_groups`: item,
    group; `user_groups`: user, group);
  - `expected`: `{{"mean": number, "per_user": {{user: number}}}}` (the users the mean averages
    over; empty for a metric with one global value), or null with `refusal` set to the error
    class receval raises (the definition has no value on these inputs);
  - `source`: `reference` (receval's slow, independent reference implementation agrees) or
    `arithmetic` (small enough to check by hand; the arithmetic is in `why`); `tags`: the edges.
- `inputs/<scenario>/*.csv`: the same rows as CSV (`inputs` in a case names its folder).

Compare values with a tolerance of 1e-9 (relative); the expected values are exact to 1e-12.
"""


__all__ = ["cases", "raw_suite", "export", "run_receval", "read_folder", "check_case", "case_from_json", "expand", "close",
           "strip_version", "per_user_of", "columns", "side_kwargs", "SIDE_COLUMNS", "RECS_COLUMNS", "TRUTH_COLUMNS", "FORMAT"]
