"""The invariance contract, for every registered metric and every dialect that offers it.

A value is a function of its signature and the content of its inputs, taken as sets of rows
and up to a renaming of ids: not of the row order, the spelling or type of the ids, the
engine, the batch split, the input format, or side inputs the metric does not read. Where a
number would depend on anything else, that thing is in the signature, or the call is refused.

The harness is driven by the registry: every metric of ``registered()`` is checked (a new
metric fails :func:`test_table_covers_every_registered_metric` until it gets a row in
``TABLE``: the side inputs it needs or may read and one valid spec). Hypothesis draws small
inputs with coarse scores (many ties), graded ratings, truth users without recommendations,
recommendation users outside the truth and every side input (tests/invariance_data.py). For
each input the value (or the refusal: exception class and message with quoted text and numbers
masked) and the signature are computed once, then compared with the same call after each
transformation of a family:

* ``rows_ids``: rows of every input shuffled; ids renamed by a random bijection onto other
  integers, onto strings, and onto strings held as polars Categorical columns;
* ``polars``: the Polars engine (``engine="polars"``) and ``evaluate_polars`` in 2 and 5 batches;
* ``files``: every input read from CSV files, and from Parquet files;
* ``spark``: the Spark engine (``-m spark``, few examples).

Dialects reproduce libraries whose values may depend on what the standard forbids; they are
checked with the transformations that keep what they read: distinct scores when the tie rule
reads the row order or the ids (ties=input, item, item_desc, text_desc), each user's rows kept
in their order when the order is the input order (order=input), order-preserving renamings
when a rule reads the ids (boundary=id).

Separately: the default signature names ``ties:average``; a side input a metric does not read
changes neither its value nor its signature; one it may read changes the signature whenever
it changes the value.

Values agree to 1e-12 (NaN equals NaN); refusals agree in class and reason (the message up to
its advice, with quoted text and numbers masked). A check that fails is a finding, never
weakened to pass.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import invariance_data as D
import receval.metrics  # noqa: F401  (registers the metrics)
from receval import evaluate
from receval.backends.polars import evaluate_polars
from receval.inputs import Request
from receval.dialects import all_dialects
from receval.engine import ORDER_DEPENDENT_TIES, plan
from receval.errors import RecevalError
from receval.registry import registered
from receval.spec import parse_spec

# ---- the table: what each metric reads, and one valid spec ---------------------------------------

SIDE = D.SIDE_NAMES  # categories, train, catalog, baseline, item_groups, user_groups


@dataclass(frozen=True)
class Row:
    spec: str
    needs: frozenset[str]  # refused without them
    optional: frozenset[str]  # read when given (the catalogue: catalog, else train items, else every item seen)


def _row(spec: str, needs: str = "", optional: str = "") -> Row:
    return Row(spec, frozenset(needs.split()), frozenset(optional.split()))


TABLE: dict[str, Row] = {
    "ab_ndcg": _row("ab_ndcg@3", "categories"),
    "aclt": _row("aclt@3", "train", "catalog"),
    "alpha_ndcg": _row("alpha_ndcg@3", "categories"),
    "aplt": _row("aplt@3", "train", "catalog"),
    "arp": _row("arp@3", "train", "catalog"),
    "auc": _row("auc"),
    "bias_disparity": _row("bias_disparity(icat=a,ugroup=x)@3", "item_groups user_groups train"),
    "bpref": _row("bpref"),
    "catdiv": _row("catdiv@3", "categories"),
    "coverage": _row("coverage@3", "", "catalog train categories"),  # the catalogue: catalog, else train, else all items seen
    "covered": _row("covered@3"),
    "dcg": _row("dcg@3"),
    "efd": _row("efd@3", "train", "catalog"),
    "entropy": _row("entropy@3", "", "catalog train"),
    "epc": _row("epc@3", "train", "catalog"),
    "err": _row("err@3"),
    "f1": _row("f1@3"),
    "filled": _row("filled@3"),
    "gauc": _row("gauc"),
    "gini": _row("gini@3", "", "catalog train categories"),
    "hitrate": _row("hitrate@3"),
    "ild": _row("ild@3", "categories"),
    "intersection": _row("intersection@3", "baseline"),
    "lauc": _row("lauc@3"),
    "mad": _row("mad@3", "user_groups"),
    "mae": _row("mae(missing=skip)"),
    "map": _row("map@3"),
    "mar": _row("mar@3"),
    "miscalibration": _row("miscalibration@3", "categories train"),
    "mrr": _row("mrr@3"),
    "ncrr": _row("ncrr"),
    "ndcg": _row("ndcg@3"),
    "novelty": _row("novelty@3", "train", "catalog"),
    "pap": _row("pap@3"),
    "pauc": _row("pauc@3"),
    "popreo": _row("popreo@3", "train", "catalog"),
    "poprsp": _row("poprsp@3", "train", "catalog"),
    "precision": _row("precision@3"),
    "rbp": _row("rbp@3"),
    "recall": _row("recall@3"),
    "reo": _row("reo@3", "item_groups"),
    "rmse": _row("rmse(missing=skip)"),
    "rprecision": _row("rprecision"),
    "rsp": _row("rsp@3", "item_groups", "train"),
    "serendipity": _row("serendipity@3", "train", "catalog"),
    "srecall": _row("srecall@3", "categories"),
    "surprisal": _row("surprisal@3", "train", "catalog"),
    "unexpectedness": _row("unexpectedness@3", "baseline"),
    "unrepeated": _row("unrepeated(dup=keep)@3"),  # needs dup=keep: the data then holds repeated rows
    "unseen": _row("unseen@3", "train", "catalog"),
}


def test_table_covers_every_registered_metric():
    assert sorted(TABLE) == sorted(registered()), "give every registered metric a row in TABLE"
    for name, row in TABLE.items():
        assert parse_spec(row.spec).name == name
        assert row.needs <= set(SIDE) and row.optional <= set(SIDE) and not row.needs & row.optional


# ---- units: what one test evaluates ----------------------------------------------------------


def _spec_for(name: str, entry: str, dialect) -> str:
    """The table's spec of ``name``, with a cut-off when the dialect entry is ``name@k``, without
    the options the dialect sets itself (its value is the one under test)."""
    spec = parse_spec(TABLE[name].spec)
    k = spec.k if spec.k is not None else (3 if entry.endswith("@k") else None)
    own = dialect.options_for(name, k) if dialect is not None else {}
    opts = {a: v for a, v in spec.opts.items() if a not in own}
    inner = ",".join(f"{a}={v}" for a, v in opts.items())
    return name + (f"({inner})" if inner else "") + (f"@{k}" if k is not None else "")


@dataclass(frozen=True)
class Unit:
    """Specs evaluated together under one dialect, with the side inputs they read."""

    dialect: str  # "standard" or a dialect label
    specs: tuple[str, ...]
    reads: tuple[str, ...] = ()  # side inputs read by an option of the specs (weight=pop: train)

    @property
    def dialect_arg(self) -> str | None:
        return None if self.dialect == "standard" else self.dialect

    @property
    def names(self) -> list[str]:
        return [parse_spec(s).name for s in self.specs]

    @property
    def side(self) -> tuple[str, ...]:
        reads = set(self.reads).union(*(TABLE[n].needs | TABLE[n].optional for n in self.names))
        return tuple(s for s in SIDE if s in reads)

    @cached_property
    def options(self) -> list[dict[str, Any]]:
        return [r.options for r in plan(list(self.specs), self.dialect_arg)]

    @property
    def distinct(self) -> bool:  # a tie rule that reads the row order or the ids
        return any(o.get("ties") in ORDER_DEPENDENT_TIES for o in self.options)

    @property
    def keep_order(self) -> bool:  # the input order ranks the lists
        return any(o.get("order") == "input" for o in self.options)

    @property
    def rank(self) -> bool:  # the lists are ranked by a rank column
        return any(o.get("order") in ("rank", "rank_value") for o in self.options)

    @property
    def monotone(self) -> bool:  # a rule that reads the order of the ids
        return any(o.get("boundary") == "id" for o in self.options)

    @property
    def dups(self) -> bool:
        return "unrepeated" in self.names

    def strategy(self):
        return D.cases(distinct_scores=self.distinct, dups=self.dups, rank=self.rank)

    def __str__(self) -> str:
        flags = [f for f in ("distinct", "keep_order", "rank", "monotone", "dups") if getattr(self, f)]
        what = "+".join(self.names) if len(self.names) < 4 else f"{len(self.names)} metrics"
        return f"{self.dialect}{'[' + ','.join(flags) + ']' if flags else ''}:{what}"


def _dialect_units() -> list[Unit]:
    """Per dialect, its metrics in as few units as keep each metric's checks: the metrics that
    read the same things (tie rule, input order, rank column, id order, repeated rows) together."""
    units = []
    for d in all_dialects():
        if d.name == "standard":
            continue
        groups: dict[tuple, list[str]] = {}
        for entry in sorted(d.metrics):
            one = Unit(d.label, (_spec_for(entry.split("@")[0], entry, d),))
            groups.setdefault((one.distinct, one.keep_order, one.rank, one.monotone, one.dups), []).extend(one.specs)
        units += [Unit(d.label, tuple(specs)) for specs in groups.values()]
    return units


STANDARD_UNITS = [Unit("standard", (row.spec,)) for _, row in sorted(TABLE.items())]
#: option variants that read more than their metric's row (the propensity weights read train)
VARIANT_UNITS = [Unit("standard", ("recall(weight=pop,gamma=0.5,floor=1)@3", "precision(weight=pop,gamma=1,floor=1)@3",
                                   "ndcg(weight=pop,gamma=0.5,floor=1)@3", "hitrate(count=hits,weight=pop,gamma=2,floor=1)@3",
                                   "map(weight=pop,gamma=0.5,floor=1)@3"), reads=("train",))]
DIALECT_UNITS = _dialect_units()


def test_dialect_units_cover_every_dialect_entry():
    covered = {(u.dialect, parse_spec(s).name) for u in DIALECT_UNITS for s in u.specs}
    want = {(d.label, e.split("@")[0]) for d in all_dialects() if d.name != "standard" for e in d.metrics}
    assert covered == want and len(want) > 100


# ---- outcomes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    value: float | None = None
    signature: str | None = None
    error: str | None = None  # exception class name
    message: str | None = None  # masked
    crash: bool = False  # not a RecevalError: every error a user can cause should be one

    def __str__(self) -> str:
        if self.error:
            return f"{'CRASH ' if self.crash else ''}{self.error}: {self.message}"
        return f"{self.value!r} [{self.signature}]"


def _same(a: Outcome, b: Outcome) -> bool:
    if a.crash or b.crash:
        return False
    if a.error or b.error or a.value is None or b.value is None:
        return a.error == b.error and a.message == b.message
    both_nan = math.isnan(a.value) and math.isnan(b.value)
    return (both_nan or abs(a.value - b.value) <= 1e-12) and a.signature == b.signature


def _error(exc: BaseException) -> Outcome:
    """A refusal: its class and its reason (the message up to the first ';', where the advice
    starts, which may guess from the ids, e.g. whether the columns look swapped), quoted text
    and numbers masked."""
    return Outcome(error=type(exc).__name__, message=D.mask(str(exc).split(";")[0]), crash=not isinstance(exc, RecevalError))


def _outcomes(specs: tuple[str, ...], call: Callable[[list[str]], Any],
              expect: dict[str, Outcome] | None = None) -> dict[str, Outcome]:
    """Every spec's outcome: one call for the specs that have a value (all of them, or those
    with a value in ``expect``), one call per other spec, and one per spec when the common call
    is refused."""

    def run(ss: list[str]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(ss)

    def one(s: str) -> Outcome:
        try:
            res = run([s])
            return Outcome(res.value(s), res.signature(s))
        except Exception as exc:  # noqa: BLE001 - a crash is an outcome to compare
            return _error(exc)

    together = [s for s in specs if expect is None or expect[s].error is None]
    out = {s: one(s) for s in specs if s not in together}
    if len(together) == 1:
        out[together[0]] = one(together[0])
    elif together:
        try:
            res = run(together)
            out.update({s: Outcome(res.value(s), res.signature(s)) for s in together})
        except Exception:  # noqa: BLE001
            out.update({s: one(s) for s in together})
    return {s: out[s] for s in specs}


def _rel(case: D.Case) -> dict[str, Any]:
    return {} if case.rel is None else {"rel": case.rel}


def memory(unit: Unit, case: D.Case, side: tuple[str, ...] | None = None, expect=None, **kw) -> dict[str, Outcome]:
    side = unit.side if side is None else side
    return _outcomes(unit.specs, lambda ss: evaluate(case.recs, case.truth, ss, dialect=unit.dialect_arg,
                                                     **_rel(case), **case.kwargs(side), **kw), expect)


#: the keywords evaluate_polars takes: its own and (``**request``) the fields of the Request it builds
_POLARS_KW = set(inspect.signature(evaluate_polars).parameters) | {f.name for f in dataclasses.fields(Request)}


def polars_batches(unit: Unit, case: D.Case, n_batches: int, expect=None) -> dict[str, Outcome]:
    # only the keywords evaluate_polars takes: a side input it does not take is then missing (a finding), not a TypeError
    side = {k: v for k, v in case.kwargs(unit.side).items() if k in _POLARS_KW}
    return _outcomes(unit.specs, lambda ss: evaluate_polars(
        pl.DataFrame(case.recs).lazy(), pl.DataFrame(case.truth).lazy(), ss, dialect=unit.dialect_arg,
        overrides=_rel(case), n_batches=n_batches, **side), expect)


# ---- the transformations -------------------------------------------------------------------------

#: (unit, case, seed, tmp folder, the original outcomes) -> the outcomes after the transformation
Transform = Callable[[Unit, D.Case, int, Path, dict[str, Outcome]], dict[str, Outcome]]


def _renaming(kind: str) -> Transform:
    def run(unit: Unit, case: D.Case, seed: int, tmp: Path, base: dict[str, Outcome]) -> dict[str, Outcome]:
        k = {"perm": "monotone", "str": "monotone_str", "categorical": "monotone_str"}[kind] if unit.monotone else kind
        cmap = D.category_map(case, seed, monotone=unit.monotone)  # category ids too: a side input's ids
        renamed = D.rename(case, *D.id_maps(case, seed, "str" if k == "categorical" else k), cmap)
        return memory(unit, D.categorical(renamed) if kind == "categorical" else renamed, expect=base)

    return run


def _shuffle(unit: Unit, case: D.Case, seed: int, tmp: Path, base: dict[str, Outcome]) -> dict[str, Outcome]:
    return memory(unit, D.shuffle(case, seed, keep_user_order=unit.keep_order), expect=base)


def _polars_engine(unit: Unit, case: D.Case, seed: int, tmp: Path, base: dict[str, Outcome]) -> dict[str, Outcome]:
    return memory(unit, case, engine="polars", expect=base)


def _batches(n: int) -> Transform:
    return lambda unit, case, seed, tmp, base: polars_batches(unit, case, n, expect=base)


def _files(fmt: str) -> Transform:
    def run(unit: Unit, case: D.Case, seed: int, tmp: Path, base: dict[str, Outcome]) -> dict[str, Outcome]:
        return memory(unit, D.to_files(case, Path(tempfile.mkdtemp(dir=tmp)), fmt), expect=base)

    return run


FAMILIES: dict[str, list[tuple[str, Transform]]] = {
    "rows_ids": [("shuffled rows", _shuffle), ("ids int->permuted int", _renaming("perm")),
                 ("ids int->str", _renaming("str")), ("ids as polars Categorical", _renaming("categorical"))],
    "polars": [("engine=polars", _polars_engine), ("evaluate_polars n_batches=2", _batches(2)),
               ("evaluate_polars n_batches=5", _batches(5))],
    "files": [("CSV files", _files("csv")), ("Parquet files", _files("parquet"))],
}


# ---- the harness ---------------------------------------------------------------------------------

#: examples scale with RECEVAL_INVARIANCE_SCALE (default 1: the CI budget; e.g. 10 for a deep local run)
SCALE = float(os.environ.get("RECEVAL_INVARIANCE_SCALE", "1"))
N_STANDARD = round(6 * SCALE)  # examples per (metric, family) under the standard dialect
N_DIALECT = round(4 * SCALE)  # examples per (dialect unit, family)
_BASE: dict[tuple, dict[str, Outcome]] = {}  # the in-memory outcome of a (unit, case): shared by the families


def _settings(n: int, shrink: bool = True):
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else [])
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, phases=phases, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.filter_too_much, HealthCheck.data_too_large])


def base_of(unit: Unit, case: D.Case) -> dict[str, Outcome]:
    key = (unit, repr(case))
    if key not in _BASE:
        _BASE[key] = memory(unit, case)
    return _BASE[key]


def _check_default_ties(unit: Unit, base: dict[str, Outcome]) -> list[str]:
    """Under the standard dialect and the default options a value's signature names ties:average."""
    out = []
    for spec, o in base.items():
        if unit.dialect == "standard" and o.signature is not None and "ties" in registered()[parse_spec(spec).name].context:
            if "|ties:average|" not in o.signature:
                out.append(f"{spec}: default signature without ties:average: {o.signature}")
    return out


def _diff(base: dict[str, Outcome], got: dict[str, Outcome], what: str) -> list[str]:
    out = []
    for spec, o in base.items():
        if o.crash:
            out.append(f"{spec}: the original call crashed: {o}")
        elif not _same(o, got[spec]):
            out.append(f"{spec} | {what}:\n    original: {o}\n    got:      {got[spec]}")
    return out


#: inputs that exposed a defect: (metrics, case, seed of the transformations), checked by the
#: standard units of those metrics before the generated inputs (any number may be added)
EXPLICIT: list[tuple[frozenset[str], D.Case, int]] = [
    # the baseline's tied scores: its top k taken in row order (shuffled rows change the value)
    (frozenset({"intersection", "unexpectedness"}),
     D.case_of({"user_id": [0, 0, 0], "item_id": [1, 2, 3], "score": [3.0, 2.0, 1.0]}, {"user_id": [0], "item_id": [1]},
               baseline={"user_id": [0, 0, 0, 0], "item_id": [4, 1, 2, 3], "score": [0.0, 0.0, 0.0, 0.0]}), 3),
    # r_max (default: the largest truth rating) of the users' batch, not of the whole truth
    (frozenset({"ab_ndcg"}),
     D.case_of({"user_id": [3, 7], "item_id": [10, 11], "score": [1.0, 1.0]},
               {"user_id": [3, 3, 3, 7], "item_id": [11, 10, 7, 11], "rating": [3.0, 4.0, 4.0, 5.0]},
               categories={"item_id": [7, 10, 10, 11], "category": ["c2", "c2", "c1", "c2"]}), 0),
]


def _check(unit: Unit, family: str, case: D.Case, seed: int, tmp: Path) -> None:
    base = base_of(unit, case)
    problems = _check_default_ties(unit, base)
    for what, transform in FAMILIES[family]:
        problems += _diff(base, transform(unit, case, seed, tmp, base), what)
    assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + case.describe()


def _params():
    for unit in STANDARD_UNITS + VARIANT_UNITS + DIALECT_UNITS:
        for family in FAMILIES:
            yield pytest.param(unit, family, id=f"{unit}-{family}")


@pytest.mark.parametrize("unit,family", list(_params()))
def test_invariance(unit: Unit, family: str, tmp_path: Path):
    for names, case, seed in EXPLICIT:
        if unit.dialect == "standard" and names & set(unit.names):
            _check(unit, family, case, seed, tmp_path)

    @_settings(N_STANDARD if unit.dialect == "standard" else N_DIALECT)
    @given(data=st.data())
    def run(data):
        case = data.draw(unit.strategy(), label="case")
        _check(unit, family, case, data.draw(st.integers(0, 2**31 - 1), label="seed"), tmp_path)

    run()


# ---- the default tie rule --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TABLE))
def test_default_resolves_ties_average(name):
    """Every metric that orders the lists resolves ties=average by default (mae/rmse read no order)."""
    r = plan([TABLE[name].spec])[0]
    if "ties" in r.metric.context:
        assert r.options["ties"] == "average"
    else:
        assert "ties" not in r.options and r.metric.kind == "global" and not r.metric.needs_k


# ---- side inputs -----------------------------------------------------------------------------------

N_SIDE = round(4 * SCALE)


def _side_case(data, name: str) -> D.Case:
    return data.draw(STANDARD_UNITS[sorted(TABLE).index(name)].strategy(), label="case")


@pytest.mark.parametrize("name", sorted(TABLE))
def test_unread_side_input_changes_nothing(name):
    """A side input the metric neither needs nor may read changes neither its value (or
    refusal) nor its signature, whether the optional inputs it reads are given or not."""
    row = TABLE[name]
    unit = Unit("standard", (row.spec,))
    unread = [s for s in SIDE if s not in row.needs | row.optional]

    @_settings(N_SIDE)
    @given(data=st.data())
    def run(data):
        case = _side_case(data, name)
        problems = []
        # next to every input the metric reads, and (when some are optional) next to those it needs only
        needed = tuple(s for s in unit.side if s in row.needs)
        for given_ in [unit.side] + ([needed] if needed != unit.side else []):
            base = memory(unit, case, side=given_)
            found = _diff(base, memory(unit, case, side=given_ + tuple(unread)), f"given {given_}, adding {unread}")
            if found:  # which one
                found = [p for s in unread for p in _diff(base, memory(unit, case, side=given_ + (s,)),
                                                            f"given {given_}, adding {s}=")] or found
            problems += found
        assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + case.describe()

    run()


@pytest.mark.parametrize("name", [n for n in sorted(TABLE) if TABLE[n].optional])
def test_read_side_input_is_in_the_signature(name):
    """A side input the metric may read (the catalogue: catalog, else train items) changes the
    signature whenever it changes the value: the value is a function of the signature and the
    content of the inputs."""
    row = TABLE[name]
    unit = Unit("standard", (row.spec,))

    @_settings(N_SIDE)
    @given(data=st.data())
    def run(data):
        case = _side_case(data, name)
        full = memory(unit, case)
        problems = []
        for s in sorted(row.optional):
            without = memory(unit, case, side=tuple(x for x in unit.side if x != s))
            for spec, a in full.items():
                b = without[spec]
                if a.value is not None and b.value is not None and not _same(a, b) and a.signature == b.signature:
                    problems.append(f"{spec}: {s}= changes the value ({b.value!r} -> {a.value!r}) "
                                    f"but not the signature [{a.signature}]")
        assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + case.describe()

    run()


# ---- ties of the greedy ideals over categories; repeated truth rows ----------------------------------

CATEGORY_METRICS = sorted(n for n in TABLE if "categories" in TABLE[n].needs | TABLE[n].optional)


def _swap_ids(case: D.Case, items: dict, cats: dict) -> D.Case:
    """``case`` with the item ids and the category ids of the maps swapped (others kept)."""
    _, all_items = D.all_ids(case)
    users, _ = D.all_ids(case)
    names = set(case.side["categories"]["category"])
    return D.rename(case, {u: u for u in users}, {i: items.get(i, i) for i in all_items},
                    {c: cats.get(c, c) for c in names})


def test_greedy_ideal_ties_read_no_id():
    """Relevant items 1 {c1, c2}, 2 {c1, c3}, 3 {c2, c4} all gain 2 at rank 1, but 1 leads to
    [2, 1.5] and 2 or 3 to [2, 2]; alpha_ndcg took the larger item id, so swapping the ids 1 and
    3 changed alpha_ndcg@2 (0.6131 and 0.6788)."""
    case = D.case_of({"user_id": [0, 0, 0], "item_id": [2, 4, 1], "score": [3.0, 2.0, 1.0]},
                     {"user_id": [0, 0, 0], "item_id": [1, 2, 3], "rating": [5.0, 5.0, 5.0]},
                     categories={"item_id": [1, 1, 2, 2, 3, 3, 4], "category": ["c1", "c2", "c1", "c3", "c2", "c4", "c1"]})
    unit = Unit("standard", ("alpha_ndcg@2", "alpha_ndcg@3"))
    base = memory(unit, case)
    problems = []
    for what, items, cats in [("items 1, 3 swapped", {1: 3, 3: 1}, {}), ("categories c1, c2 swapped", {}, {"c1": "c2", "c2": "c1"}),
                              ("both", {1: 3, 3: 1}, {"c1": "c2", "c2": "c1"})]:
        problems += _diff(base, memory(unit, _swap_ids(case, items, cats)), what)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", CATEGORY_METRICS)
def test_category_metrics_under_renaming(name):
    """Every metric that reads categories, on richer category data (3..10 truth rows per user,
    items in 1..3 of 4 categories) with distinct scores: the same outcome after the rows are
    shuffled and after the user, item and category ids are renamed (onto other integers and
    category strings, and onto strings)."""
    unit = Unit("standard", (TABLE[name].spec,))

    @_settings(N_STANDARD * 2)
    @given(data=st.data())
    def run(data):
        case = data.draw(D.cases(distinct_scores=True, rich=True), label="case")
        seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
        base = memory(unit, case)
        problems = []
        for kind in ("perm", "str"):
            renamed = D.rename(case, *D.id_maps(case, seed, kind), D.category_map(case, seed))
            problems += _diff(base, memory(unit, renamed), f"ids {kind} and category ids renamed")
        problems += _diff(base, memory(unit, D.shuffle(case, seed)), "shuffled rows")
        assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + case.describe()

    run()


TDUP_METRICS = sorted(n for n in TABLE if "tdup" in registered()[n].context)


def _with_repeats(case: D.Case, rows: list[int], later: bool) -> D.Case:
    """The truth with each of ``rows`` repeated with another rating (rating % 5 + 1), the repeat
    after the original row (``later``) or before it."""
    t = case.truth
    out: dict[str, list] = {c: [] for c in t}
    for j in range(len(t["user_id"])):
        pair = [j, None] if later else [None, j]
        for q in (pair if j in rows else [j]):
            for c in t:
                out[c].append(t[c][j] if q is not None or c != "rating" else t[c][j] % 5 + 1)
    return D.replace(case, truth=out)


@pytest.mark.parametrize("tdup", ["first", "max", "keep"])
@pytest.mark.parametrize("name", TDUP_METRICS)
def test_repeated_truth_rows_with_different_ratings(name, tdup):
    """Truth rows of one (user, item) with different ratings: the outcome (value, or refusal) is
    the same whichever of them comes first."""
    unit = Unit("standard", (TABLE[name].spec,))

    @_settings(N_SIDE)
    @given(data=st.data())
    def run(data):
        case = data.draw(unit.strategy(), label="case")
        n = len(case.truth["user_id"])
        rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True), label="repeated rows")
        a = memory(unit, _with_repeats(case, rows, True), tdup=tdup)
        b = memory(unit, _with_repeats(case, rows, False), tdup=tdup)
        problems = _diff(a, b, f"tdup={tdup}: the repeat before the original row")
        assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + _with_repeats(case, rows, True).describe()

    run()


# ---- Spark -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from receval.backends.spark import local_session

    session = local_session(partitions=3)
    yield session
    session.stop()


N_SPARK = round(2 * SCALE)  # examples of the standard Spark units: a Spark call takes seconds
N_SPARK_DIALECT = round(1 * SCALE)


def _spark_units() -> list[Unit]:
    """Every standard metric in one unit (unrepeated, whose data repeat rows, in its own), and
    the dialect units."""
    plain = tuple(TABLE[n].spec for n in sorted(TABLE) if n != "unrepeated")
    return [Unit("standard", plain), Unit("standard", (TABLE["unrepeated"].spec,)), *DIALECT_UNITS]


@pytest.mark.spark
@pytest.mark.xdist_group("spark-invariance")  # its own group: the Spark tests split over both workers
@pytest.mark.parametrize("unit", _spark_units(), ids=str)
def test_spark(spark, unit: Unit):
    def frame(cols):
        return spark.createDataFrame(pl.DataFrame(cols).to_pandas())

    def check(case: D.Case) -> None:
        base = memory(unit, case)
        rs, ts = frame(case.recs), frame(case.truth)
        got = _outcomes(unit.specs, lambda ss: evaluate(rs, ts, ss, engine="spark", dialect=unit.dialect_arg,
                                                        **_rel(case), **case.kwargs(unit.side)), expect=base)
        problems = _diff(base, got, "engine=spark")
        assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + case.describe()

    for names, case, _ in EXPLICIT:
        if unit.dialect == "standard" and names & set(unit.names):
            check(case)

    # no shrinking on Spark (each step is a Spark job): the other families give minimal reproducers
    @_settings(N_SPARK if unit.dialect == "standard" else N_SPARK_DIALECT, shrink=False)
    @given(data=st.data())
    def run(data):
        check(data.draw(unit.strategy(), label="case"))

    run()
