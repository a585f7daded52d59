"""Audit an implementation of a metric: which receval definition does it compute?

:func:`audit` runs an implementation (a Python callable ``impl(recs, truth, k, side)``, a
:class:`~receval.conformance.case.BatchImplementation`, ``module:function``,
``path/to/file.py:function`` or a built-in adapter name) on the inputs of the conformance
cases of one metric, and searches the metric's option space for the definitions that
reproduce it on every case (1e-9 relative):

1. the product of the metric's named options — bounded: a larger product is searched one option
   at a time around the standard definition, then in pairs;
2. around the best of those, the context options together: the ordering and tie rule, ``dup``,
   ``tdup``, ``hitscore``, ``rel``, ``empty`` and ``norecs`` (each only where an answered input
   tells its values apart);
3. the named options again in the best contexts;
4. the numeric options (sampled) and every dialect of a library that offers the metric;
5. when a numeric option then comes first without a match, the context options around it.

A case's truth has ratings, so an unwritten ``rel`` is read as :func:`receval.evaluate` reads
it there (``rel:>0``, :func:`receval.resolve.decide_rel`). When every difference from one of the
closest definitions is explained by rounding (or a factor 100), the report says so
(:func:`explained_by_rounding`). :func:`per_user` and :func:`from_dicts` wrap functions of one
user's list or of two dicts into the interface.

A case where a definition has no value (receval refuses it) says nothing about it; a case where
the implementation raises says nothing either (its message is kept). The report names the
definition matched (its spec, the options that differ from the standard definition, the
dialects that compute it) or, when none matches, the closest ones, each with the smallest
case that rules it out; the formula of the matched or closest definition is printed as
``receval explain`` prints it. An implementation returning per-user values is compared user by
user, and a difference in the set of users only (a user left out of the mean, or averaged as
0) is reported as such.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import io
import itertools
import json
import math
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import adapters
from .conformance.case import BatchImplementation, Case
from .conformance.suite import per_user_of, side_kwargs
from .engine import dialect_of, evaluate_each
from .inputs import exact_items, read_inputs
from .io import Columns
from .resolve import decide_rel, resolve
from .side import SideInputs
from .signature import note_side
from .errors import RecevalError, SpecError
from .metrics import get_metric
from .plaintext import to_text
from .conformance.suite import cases as suite_cases
from .dialects import load_dialect
from .dialects import all_dialects

#: relative tolerance of a match; an implementation that computes in lower precision declares
#: its own with a ``tolerance`` attribute (torchmetrics works in float32: 1e-6), never looser
#: than its precision, and the report states it
TOLERANCE = 1e-9
_TOL: ContextVar[float] = ContextVar("receval_audit_tolerance", default=TOLERANCE)
#: options the audited metric was named with (``bias_disparity(icat=g1)``): every candidate carries them
_FIXED: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("receval_audit_fixed", default=())


def _named_options(metric: str) -> tuple[str, dict[str, str]]:
    """``"bias_disparity(icat=g1)"`` -> ``("bias_disparity", {"icat": "g1"})``: the metric an audit
    is of and the options every candidate definition keeps (a cell, a group: what the function
    is told, not what the audit infers)."""
    name, _, rest = metric.strip().partition("(")
    if not rest:
        return name, {}
    if not rest.endswith(")"):
        raise AuditError(f"write the metric as name(option=value,...): got '{metric}'")
    fixed = {}
    for part in filter(None, (x.strip() for x in rest[:-1].split(","))):
        a, eq, v = part.partition("=")
        if not eq or not a.strip() or not v.strip():
            raise AuditError(f"write the metric as name(option=value,...): '{part}' in '{metric}' has no value")
        fixed[a.strip()] = v.strip()
    return name.strip(), fixed
#: the largest product of options searched whole (stage 1)
MAX_PRODUCT = 1500
#: sample values of the numeric options searched around the best candidates (stage 2)
NUMERIC = {"base": [10.0, math.e], "persistence": [0.5, 0.95], "alpha": [0.3], "beta": [0.5], "gmax": [5.0],
           "cut": [0.5], "refk": [2.0], "maxfpr": [0.5], "rmax": [2.0]}
#: the tie rules searched with ``order=score`` (stage 2; besides the rank column, the input order and rank values)
ORDER_TIES = ["input", "item", "item_desc", "optimistic", "average"]


class AuditError(SpecError):
    """An implementation that cannot be loaded or run, or a metric the suite has no case of."""


# --- the implementation -----------------------------------------------------------------------


def load_implementation(text: str) -> tuple[Any, str]:
    """``module:function``, ``path/to/file.py:function`` or an adapter name -> (implementation, label)."""
    if ":" in text and not text.endswith(":"):
        where, _, name = text.rpartition(":")
        if where.endswith(".py") or "/" in where or "\\" in where:
            path = Path(where)
            if not path.is_file():
                raise AuditError(f"implementation '{text}': no file '{where}'; give path/to/file.py:function or module:function")
            spec = importlib.util.spec_from_file_location(f"_receval_audit_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise AuditError(f"implementation '{text}': cannot import '{where}' as Python")
            module = importlib.util.module_from_spec(spec)
            try:
                with _quiet():  # what the file prints on import reaches neither the report nor --json
                    spec.loader.exec_module(module)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - sys.exit on import included
                raise AuditError(f"implementation '{text}': importing '{where}' failed: {type(exc).__name__}: {exc}") from None
        else:
            try:
                with _quiet():
                    module = importlib.import_module(where)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001
                raise AuditError(f"implementation '{text}': cannot import module '{where}' ({type(exc).__name__}: {exc}); "
                                 "give module:function with the module on the path, or path/to/file.py:function") from None
        fn = getattr(module, name, None)
        if fn is None or not (callable(fn) or isinstance(fn, BatchImplementation)):
            raise AuditError(f"implementation '{text}': '{where}' has no function '{name}'")
        return fn, text
    try:
        return adapters.get(text), text
    except Exception as exc:
        raise AuditError(f"implementation '{text}': {exc}") from None


def _pick(impl: Any, metric: str) -> Any:
    """An adapter's implementations by metric name -> the one of ``metric``."""
    if isinstance(impl, Mapping):
        if metric not in impl:
            raise AuditError(f"the implementation has no metric '{metric}'; it has: {', '.join(sorted(impl))}")
        return impl[metric]
    return impl


class Unanswered(str):
    """No value from the implementation on one input: its text, and ``kind``: ``"raised"`` (an
    exception, ``sys.exit`` included), ``"non-number"`` (it answered something that is not a
    number or a mapping of user to number) or ``"not run"``."""

    kind: str = "raised"

    def __new__(cls, text: str, kind: str = "raised") -> Unanswered:
        obj = super().__new__(cls, text)
        obj.kind = kind
        return obj


def _outcome(raw: Any, batch: bool = False) -> Any:
    """An implementation's answer as a float (a mean) or {user: float}; an :class:`Unanswered`
    otherwise (a batch implementation's text is its error)."""
    if isinstance(raw, str):
        return Unanswered(raw) if batch else Unanswered(f"answered a non-number: {raw[:60]!r}", "non-number")
    if hasattr(raw, "to_dict") and not isinstance(raw, Mapping) and hasattr(raw, "index"):  # a pandas Series
        raw = raw.to_dict()
    if isinstance(raw, Mapping):
        out = {}
        for u, v in raw.items():
            try:
                if isinstance(v, (str, bytes)):
                    raise TypeError
                f = float(v)
            except (TypeError, ValueError):
                return Unanswered(f"answered a non-number for user {str(u)[:40]!r}: {str(v)[:60]!r}", "non-number")
            if not math.isnan(f):
                out[str(u)] = f
        return out
    try:
        if isinstance(raw, (bytes, bytearray)):
            raise TypeError
        return float(raw)
    except (TypeError, ValueError):
        return Unanswered(f"answered a non-number: {type(raw).__name__} {str(raw)[:60]!r}, not a number or a mapping "
                          "of user to number", "non-number")


@contextmanager
def _quiet() -> Iterator[io.StringIO]:
    """Run code under audit with everything it prints captured: ``sys.stdout``/``sys.stderr``
    and the process's file descriptors 1 and 2 (a C extension's or ``os.write``'s output)."""
    buffer = io.StringIO()
    saved: list[tuple[int, int]] = []
    sink = tempfile.TemporaryFile()
    try:
        for fd in (1, 2):
            try:
                saved.append((fd, os.dup(fd)))
                os.dup2(sink.fileno(), fd)
            except OSError:  # no such descriptor (an embedded interpreter): sys.* is still captured
                pass
        with redirect_stdout(buffer), redirect_stderr(buffer):
            yield buffer
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        sink.close()


def _call(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    """``fn()`` with its output captured and any exception but KeyboardInterrupt trapped
    (``sys.exit`` included): (answer, None) or (None, its one-line text)."""
    try:
        with _quiet():
            return fn(), None
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:
        return None, f"called sys.exit({exc.code!r})"
    except BaseException as exc:  # noqa: BLE001 - the implementation's own error: no evidence on this case
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0][:200] if str(exc) else type(exc).__name__


# --- probes: the distinct inputs of the cases ------------------------------------------------


@dataclass
class Probe:
    """The distinct inputs (recs, truth, k) of one or more cases, with every side input they carry."""

    key: str
    case: Case  # the representative (the first), with the merged side inputs
    ids: list[str]
    tags: tuple[str, ...]
    size: int
    dup: bool = False  # duplicate (user, item) rows in the recommendations
    tdup: bool = False  # ... in the truth

    @property
    def id(self) -> str:
        return self.case.id


def _digest(*frames: Any) -> str:
    h = hashlib.sha256()
    for f in frames:
        h.update(json.dumps(f.rows() if f is not None else None, default=str).encode())
        h.update(b"|")
    return h.hexdigest()[:20]


def probes_of(cases: Sequence[Case]) -> list[Probe]:
    """The distinct inputs of ``cases``: (k, recs, truth), with every side input they carry."""
    out: dict[str, Probe] = {}
    for c in cases:
        key = f"{c.k}:{_digest(c.recs, c.truth)}"
        p = out.get(key)
        if p is None:
            out[key] = Probe(key, c, [c.id], c.tags, c.recs.height + c.truth.height,
                             c.recs.select("user", "item").is_duplicated().any(),
                             c.truth.select("user", "item").is_duplicated().any())
        else:
            side = {**p.case.side, **c.side}
            if set(side) != set(p.case.side):
                from dataclasses import replace

                p.case = replace(p.case, side=side)
            p.ids.append(c.id)
            p.tags = tuple(dict.fromkeys(p.tags + c.tags))
    for p in out.values():  # the side inputs are part of what receval's values are cached by
        p.key += ":" + _digest(*[p.case.side[n] for n in sorted(p.case.side)]) + ":" + ",".join(sorted(p.case.side))
    return list(out.values())


def run_implementation(impl: Any, probes: Sequence[Probe]) -> dict[str, Any]:
    """The implementation's outcome on each probe (by probe key): float, {user: float}, or an
    :class:`Unanswered`. What it prints is captured, and neither an exception nor ``sys.exit``
    ends the audit."""
    out: dict[str, Any] = {}
    if isinstance(impl, BatchImplementation):  # a library in another process: every case at once
        got, error = _call(lambda: impl.evaluate_cases([p.case for p in probes]))
        for p in probes:
            if error is not None or not isinstance(got, Mapping):
                out[p.key] = Unanswered(error or f"evaluate_cases returned {type(got).__name__}, not a mapping")
            else:
                out[p.key] = _outcome(got[p.case.id], batch=True) if p.case.id in got else Unanswered("not run", "not run")
        return out
    for p in probes:
        c = p.case

        def one(c: Case = c) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return impl(c.recs.clone(), c.truth.clone(), c.k, {n: f.clone() for n, f in c.side.items()})

        answer, error = _call(one)
        out[p.key] = Unanswered(error) if error is not None else _outcome(answer)
    return out


# --- receval's values ----------------------------------------------------------------------------

class Refused(str):
    """No value of receval's under one definition on one input: why (a one-line text);
    ``unnamed``: the definition itself is incomplete (a cell or group the spec must name)."""

    unnamed = False


class ReceValues:
    """receval's values on the probes, cached: a probe is keyed by the digest of its frames, so
    one object serves every audit of a process (:data:`VALUES`) or of a caller (``values=``)."""

    def __init__(self) -> None:
        #: (probe key, spec, dialect) -> (mean, {user: value} or None), or a :class:`Refused`
        self.outcomes: dict[tuple[str, str, str | None], Any] = {}
        #: (spec, dialect) -> Resolved, or None (refused)
        self.resolved: dict[tuple[str, str | None], Any] = {}
        #: (probe key, exact item ids) -> (Encoded, SideInputs), or None (refused)
        self.encoded: dict[tuple[str, bool], Any] = {}

    def __call__(self, probe: Probe, specs: Sequence[str], dialect: str | None = None) -> dict[str, Any]:
        """receval's outcome of each spec on the probe: (mean, {user: value}) or None (refused)."""
        todo = [s for s in dict.fromkeys(specs) if (probe.key, s, dialect) not in self.outcomes]
        if todo:
            self._batch(probe, todo, dialect)
        return {s: self.outcomes[(probe.key, s, dialect)] for s in specs}

    def _batch(self, probe: Probe, specs: list[str], dialect: str | None) -> None:
        c = probe.case
        out = self.outcomes
        if dialect is None:  # a duplicate refused by dup=error / tdup=error: known without evaluating
            dups = [("dup", probe.dup), ("tdup", probe.tdup)]
            refused = [s for s in specs if any(has and _opt(s, opt) == "error" for opt, has in dups)]
            for s in refused:
                which = [f"{opt}=error" for opt, has in dups if has and _opt(s, opt) == "error"]
                out[(probe.key, s, dialect)] = Refused(f"refused by the definition: {', '.join(which)}")
            specs = [s for s in specs if s not in set(refused)]
            if not specs:
                return
        resolved = []
        for s in specs:
            if (s, dialect) not in self.resolved:
                try:  # the truth of a case has ratings: an unwritten rel reads rel:>0, as evaluate decides it
                    self.resolved[(s, dialect)] = decide_rel([resolve(s, dialect=dialect_of(dialect))], True)[0]
                except RecevalError as exc:
                    self.resolved[(s, dialect)] = Refused(f"not a definition: {exc}")
            r = self.resolved[(s, dialect)]
            if isinstance(r, Refused):
                out[(probe.key, s, dialect)] = r
            else:
                resolved.append((s, r))
        if not resolved:
            return
        cols = Columns("user", "item", "score", "rank", "rating")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exact = exact_items([r for _, r in resolved])
            if (probe.key, exact) not in self.encoded:
                try:
                    self.encoded[(probe.key, exact)] = (read_inputs(c.recs, c.truth, cols).encode(exact=exact),
                                                        SideInputs(cols=cols, **side_kwargs(c.side)))
                except RecevalError as exc:
                    self.encoded[(probe.key, exact)] = Refused(f"refused by receval: {exc}")
            if isinstance(self.encoded[(probe.key, exact)], Refused):
                for s, _ in resolved:
                    out[(probe.key, s, dialect)] = self.encoded[(probe.key, exact)]
                return
            enc, side = self.encoded[(probe.key, exact)]
            each = evaluate_each(enc, note_side([r for _, r in resolved], side), side)
        for i, (s, _) in enumerate(resolved):
            e = each[i]
            if isinstance(e, RecevalError):
                out[(probe.key, s, dialect)] = why = Refused(f"refused by the definition: {e}".splitlines()[0][:200])
                why.unnamed = isinstance(e, SpecError)
                continue
            mean = None if e.value is None or (isinstance(e.value, float) and math.isnan(e.value)) else float(e.value)
            out[(probe.key, s, dialect)] = (mean, per_user_of(each.user_ids, e.per_user) if e.per_user is not None else None)


#: the values every audit of this process shares unless given its own (``audit(..., values=)``)
VALUES = ReceValues()


def _opt(spec: str, name: str) -> str:
    """The value of option ``name`` written in ``spec`` ("error", the default of dup/tdup, when absent)."""
    import re

    found = re.search(rf"[(,]{name}=([^,)]*)", spec)
    return found.group(1) if found else "error"


# --- comparison ----------------------------------------------------------------------------------


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=_TOL.get(), abs_tol=1e-12)


def compare(got: Any, want: Any) -> str:
    """'match', 'undefined' (the implementation gave no number), 'refused' (receval has no value
    under this definition), 'users' (equal on the common users, another user set) or 'differs'."""
    if isinstance(got, str):
        return "undefined"
    if want is None or isinstance(want, Refused):
        return "refused"
    mean, per_user = want
    if isinstance(got, float):
        return "match" if _close(got, mean) else "differs"
    if per_user is None or not per_user and got:  # a global metric answered per user: its mean
        return "match" if got and _close(sum(got.values()) / len(got), mean) else "differs"
    common = set(got) & set(per_user)
    if not all(_close(got[u], per_user[u]) for u in common):
        return "differs"
    if set(got) != set(per_user):
        return "users"
    return "match"


@dataclass
class Candidate:
    """One definition tried: its options (those that differ from the standard one) or a dialect."""

    options: dict[str, str]
    dialect: str | None = None
    matched: int = 0
    undefined: int = 0
    differs: list[str] = field(default_factory=list)  # probe keys
    refused: dict[str, str] = field(default_factory=dict)  # probe key -> why receval has no value (an answered input)
    users: list[str] = field(default_factory=list)  # probe keys: another user set only
    pruned: bool = False  # left behind by the search: its counts are lower bounds
    seen: set[str] = field(default_factory=set)  # probe keys it was compared on

    def spec(self, metric: str, k: int | None) -> str:
        opts = ",".join(f"{a}={v}" for a, v in {**self.options, **dict(_FIXED.get())}.items())
        return metric + (f"({opts})" if opts else "") + (f"@{k}" if k is not None else "")

    @property
    def wrong(self) -> int:
        return len(self.differs) + len(self.users)

    def label(self, metric: str) -> str:
        if self.dialect:
            return f"{metric} as {self.dialect} computes it (--dialect {self.dialect})"
        return self.spec(metric, None) if self.options or _FIXED.get() else f"{metric} (the standard definition)"


def _render(axis: Any, v: Any) -> str:
    return axis.render(v) if axis.numeric else str(v)


#: options the suite cannot infer: propensity weighting needs a train side input and an exponent
#: the implementation does not state (``weight=pop`` with ``gamma``, ``floor``)
NOT_SEARCHED = {"weight", "gamma", "floor"}


def _space(metric: Any) -> list[dict[str, str]]:
    """Stage 1: the named options of the metric (their product, or one at a time and in pairs
    around the standard definition when the product is larger than :data:`MAX_PRODUCT`)."""
    axes: list[tuple[str, list[str]]] = []
    for a in metric.axes.values():
        if a.free or a.numeric or a.name in NOT_SEARCHED:
            continue
        axes.append((a.name, [str(a.default)] + [v for v in a.values if v != a.default]))
    return _combos(axes)


def _context(metric: Any, base: dict[str, str], probes: Sequence[Probe]) -> list[dict[str, str]]:
    """Stage 2: the ordering and tie rule, ``dup``, ``tdup``, ``empty``, ``norecs`` and ``rel``
    searched together around ``base``; an option is searched only when one of ``probes`` (the
    answered inputs) can tell its values apart (a duplicate policy needs a duplicate, ``rel=all``
    a rating <= 0, ``rel=1`` a rating between 0 and 1, ``norecs`` a truth user without a list)."""
    ctx = metric.context
    ratings = [r for p in probes for r in p.case.truth["rating"].to_list() if r is not None]
    no_list = any(not set(p.case.truth["user"].to_list()) <= set(p.case.recs["user"].to_list()) for p in probes)
    axes: list[tuple[str, list[Any]]] = []
    if "order" in ctx:
        orders: list[Any] = [None] + [("score", t) for t in ORDER_TIES] + [("input", None), ("rank_value", None)]
        axes.append(("ordering", _distinct_orders(orders, probes)))
    low_hit = any(s <= 0 for p in probes for s in _hit_scores(p))
    cv = CONTEXT_VALUES
    wanted: list[tuple[str, list[Any], bool]] = [("dup", cv["dup"], any(p.dup for p in probes)),
              ("hitscore", cv["hitscore"], low_hit),
              ("tdup", cv["tdup"], any(p.tdup for p in probes)),
              ("rel", cv["rel"], any(r <= 0 or 0 < r < 1 for r in ratings)),
              ("empty", cv["empty"], any(r <= 0 for r in ratings)),
              ("norecs", cv["norecs"], no_list)]
    axes += [(n, v) for n, v, needed in wanted if n in ctx and needed]
    out = []
    base = {n: v for n, v in base.items() if n not in ("order", "ties", *(n for n, _ in axes))}
    for values in itertools.product(*[v for _, v in axes]):
        o = dict(base)
        for (name, default), v in zip(axes, values):
            if name == "ordering":
                if v is not None:
                    o["order"] = v[0]
                    if v[1] is not None and "ties" in ctx:
                        o["ties"] = v[1]
            elif v is not None and v != default[0]:
                o[name] = v
        out.append(o)
    return out


def _hit_scores(p: Probe) -> list[float]:
    """The scores of the recommended items that are in the truth of their user (``hitscore`` reads them)."""
    pairs = set(p.case.truth.select("user", "item").iter_rows())
    return [s for u, i, s in p.case.recs.select("user", "item", "score").iter_rows() if (u, i) in pairs and s is not None]


#: the values of each context option the audit names, its default first (stage 2)
CONTEXT_VALUES: dict[str, list[Any]] = {"dup": ["error", "first", "keep"], "hitscore": ["any", "positive"],
                                        "tdup": ["error", "first", "max", "keep"], "rel": [None, "all", "1"],
                                        "empty": ["skip", "zero"], "norecs": ["zero", "skip"]}


def option_settings(metric: Any) -> list[dict[str, str]]:
    """Every option setting the audit can name for ``metric``, one option at a time from the
    standard definition (the first, ``{}``): each value of the metric's named options, the
    numeric options at :data:`NUMERIC`'s samples, the orderings (by score with each tie rule of
    :data:`ORDER_TIES`, the input order, the rank values) and each value of the context options
    of :data:`CONTEXT_VALUES` the metric reads; only the settings that resolve alone.
    ``tests/metrics/test_suite_power.py`` checks that the suite tells every two of them apart."""

    m = get_metric(metric) if isinstance(metric, str) else metric
    out: list[dict[str, str]] = [{}]
    for o in _space(m):
        if len(o) == 1:
            out.append(o)
    out += _around(m, {})
    ctx = m.context
    if "order" in ctx:
        for t in ORDER_TIES:
            out.append({"order": "score", "ties": t} if "ties" in ctx else {"order": "score"})
        out += [{"order": "input"}, {"order": "rank_value"}]
    for name, vals in CONTEXT_VALUES.items():
        if name in ctx:
            out += [{name: str(v)} for v in vals[1:]]
    kept, seen = [], set()
    for o in out:
        key = tuple(sorted(o.items()))
        if key in seen:
            continue
        seen.add(key)
        try:
            resolve(Candidate(o).spec(m.name, None if not m.needs_k else 3))
        except RecevalError:
            continue
        kept.append(o)
    return kept


def _distinct_orders(orders: list[Any], probes: Sequence[Probe]) -> list[Any]:
    """``orders`` without those that list every user's items as an earlier one does on every probe
    (the rules for ties that read relevance, optimistic and average, are kept while a score ties)."""
    def lists(p: Probe, o: Any) -> Any:
        rows = list(enumerate(p.case.recs.iter_rows(named=True)))
        if o is None or o[0] == "rank_value":
            rows.sort(key=lambda r: r[1]["rank"])
        elif o[0] == "score":
            if o[1] == "item":
                rows.sort(key=lambda r: r[1]["item"])
            elif o[1] == "item_desc":
                rows.sort(key=lambda r: r[1]["item"], reverse=True)
            rows.sort(key=lambda r: -r[1]["score"])
        out: dict[str, list[str]] = {}
        for _, r in rows:
            out.setdefault(r["user"], []).append(r["item"])
        return tuple(sorted((u, tuple(v)) for u, v in out.items()))

    ties = any(p.case.recs.select("user", "score").is_duplicated().any() for p in probes)
    kept, seen = [], set()
    for o in orders:
        key = tuple(lists(p, o) for p in probes)
        if o is None or o[0] == "score" and o[1] in ("optimistic", "average") and ties:
            kept.append(o)  # the rank column's own ties follow the tie rule: the default is never a duplicate
        elif key not in seen:
            seen.add(key)
            kept.append(o)
    return kept


def _context_of(metric: Any, options: Mapping[str, str]) -> dict[str, str]:
    """The context options (ordering, duplicates, users, relevance) of ``options``."""
    return {n: v for n, v in options.items() if n in metric.context}


def _combos(axes: list[tuple[str, list[str]]]) -> list[dict[str, str]]:
    """The option sets of ``axes`` (each: name, values with its default first), written as the
    options that differ from the defaults."""
    size = math.prod(len(v) for _, v in axes) if axes else 1
    defaults = {n: v[0] for n, v in axes}
    if size <= MAX_PRODUCT:
        combos = [dict(zip([n for n, _ in axes], vs)) for vs in itertools.product(*[v for _, v in axes])]
    else:  # one at a time and in pairs around the standard definition
        combos = [dict(defaults)]
        for (n1, v1), (n2, v2) in itertools.combinations(axes, 2):
            for a, b in itertools.product(v1, v2):
                combos.append({**defaults, n1: a, n2: b})
    out, seen = [], set()
    for c in combos:
        diff = {n: v for n, v in c.items() if v != defaults[n]}
        key = tuple(sorted(diff.items()))
        if key not in seen:
            seen.add(key)
            out.append(diff)
    return out


def _around(metric: Any, base: dict[str, str]) -> list[dict[str, str]]:
    """Stage 4: one more option around ``base``: the numeric options at sample values."""
    out: list[dict[str, str]] = []
    for a in metric.axes.values():
        if a.numeric and not a.free and a.name not in NOT_SEARCHED:
            out.extend({**base, a.name: _render(a, v)} for v in NUMERIC.get(a.name, []) if v != a.default)
    return out


def _score(metric: Any, cands: list[Candidate], probes: Sequence[Probe], got: Mapping[str, Any], values: ReceValues) -> None:
    """Tally every candidate on every probe; a candidate already wrong on 2 more probes than
    the best is not evaluated further (its count is then a lower bound: it is not the closest)."""
    live = list(cands)
    for p in probes:
        if not cands:
            return
        if isinstance(got[p.key], str):
            for c in cands:
                c.undefined += 1
            continue
        plain = [c for c in live if c.dialect is None]
        mine = values(p, [c.spec(metric.name, p.case.k) for c in plain])
        for c in plain:
            want = mine[c.spec(metric.name, p.case.k)]
            _tally(c, p, compare(got[p.key], want), want)
        for c in live:
            if c.dialect is not None:
                spec = metric.name + (f"@{p.case.k}" if p.case.k is not None else "")
                want = values(p, [spec], c.dialect)[spec]
                _tally(c, p, compare(got[p.key], want), want)
        # the best among the candidates with evidence: a spec that is no definition (refused everywhere)
        # has wrong == 0 and would otherwise prune every definition that differs on 3 inputs
        best = min((c.wrong for c in live if c.wrong + c.matched), default=0)
        for c in live:
            c.pruned = c.wrong > best + 2
        live = [c for c in live if not c.pruned]


def _tally(c: Candidate, p: Probe, verdict: str, want: Any) -> None:
    c.seen.add(p.key)
    if verdict == "match":
        c.matched += 1
    elif verdict == "undefined":
        c.undefined += 1
    elif verdict == "refused":
        c.undefined += 1
        c.refused[p.key] = str(want) if isinstance(want, Refused) else "receval has no value"
    elif verdict == "users":
        c.users.append(p.key)
    else:
        c.differs.append(p.key)


def _rank(c: Candidate) -> tuple[bool, bool, int, int, int, int, int]:
    """Best first: searched to the end, with evidence, fewest cases wrong, fewest answered
    inputs refused, most cases matched, options before dialects, fewest options changed."""
    return (c.pruned, c.wrong + c.matched == 0, c.wrong, len(c.refused), -c.matched, 0 if c.dialect is None else 1,
            len(c.options))


# --- the report ------------------------------------------------------------------------------------


@dataclass
class Finding:
    """A definition that does not reproduce the implementation, and the smallest case showing it."""

    definition: str
    matched: int
    wrong: int
    case: dict[str, Any]
    refused: int = 0  # answered inputs it has no value on (that another definition has one on)


@dataclass
class AuditReport:
    """What :func:`audit` found for one metric."""

    metric: str
    implementation: str
    cases: int
    probes: int
    evidence: int  # probes where the implementation gave a value
    status: str  # "match", "no match", "no evidence"
    definition: str | None = None  # the spec matched (or the closest)
    options: dict[str, str] = field(default_factory=dict)
    dialects: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    closest: list[Finding] = field(default_factory=list)
    user_set: str | None = None
    explanation: str = ""
    errors: list[str] = field(default_factory=list)  # the messages of the inputs where it raised
    raised: list[tuple[str, str]] = field(default_factory=list)  # (case id, message)
    non_numbers: list[tuple[str, str]] = field(default_factory=list)  # (case id, what it answered)
    tolerance: float = TOLERANCE  # relative; looser only where the implementation declares its precision
    compared: int = 0  # answered inputs the matched definition has a value on (all compared equal)
    not_compared: list[tuple[str, str]] = field(default_factory=list)  # (case id, why): answered, no value of receval's
    out_of_bounds: list[tuple[str, float]] = field(default_factory=list)  # (case id, a value outside ``bounds``)
    bounds: tuple[float, float] | None = None  # the metric's declared (lowest, highest)
    rounding: tuple[str, str] | None = None  # (definition, "rounded to d decimals" / "in percent"): explains every difference

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric, "implementation": self.implementation, "status": self.status,
            "cases": self.cases, "inputs": self.probes, "evidence": self.evidence, "definition": self.definition,
            "options": dict(self.options), "dialects": list(self.dialects), "equivalent": list(self.equivalent),
            "closest": [f.__dict__ for f in self.closest], "user_set": self.user_set, "errors": list(self.errors),
            "raised": [list(x) for x in self.raised], "non_numbers": [list(x) for x in self.non_numbers],
            "tolerance": self.tolerance, "compared": self.compared,
            "not_compared": [list(x) for x in self.not_compared], "out_of_bounds": [list(x) for x in self.out_of_bounds],
            "rounding": list(self.rounding) if self.rounding else None,
        }

    def __str__(self) -> str:
        lines = [f"{self.implementation} as {self.metric}: {self.cases} cases, {self.probes} distinct inputs, "
                 f"{self.evidence} answered" + (f", values compared to {self.tolerance:g} relative (its declared "
                                                 "precision)" if self.tolerance != TOLERANCE else "")]
        # a MATCH computes those values too: the declared bounds are the standard definition's, and
        # a variant (a repeated hit counted twice under dup=keep, ild's hamming distance) may leave them
        if self.out_of_bounds and self.bounds is not None and self.status != "match":
            i, v = self.out_of_bounds[0]
            lines.append(f"OUT OF BOUNDS: {self.metric} lies in [{self.bounds[0]:g}, {self.bounds[1]:g}], the implementation "
                         f"answered {v:.6g} on {i}" + (f" (and on {len(self.out_of_bounds) - 1} more inputs: "
                                                      f"{_ids(self.out_of_bounds[1:])})" if len(self.out_of_bounds) > 1 else ""))
        if self.status == "match":
            opts = ", ".join(f"{a}={v}" for a, v in self.options.items()) or "none (the standard definition)"
            lines.append(f"MATCH on every case compared ({self.compared} of {self.evidence} answered inputs): {self.definition}")
            lines.append(f"  options that differ from the standard definition: {opts}")
            if self.dialects:
                lines.append(f"  agrees, on every case where they have a value, with the dialects: {', '.join(self.dialects)}")
            if self.equivalent:
                lines.append(f"  equally matched on these cases (the suite does not tell them apart): {', '.join(self.equivalent[:6])}"
                             + (" ..." if len(self.equivalent) > 6 else ""))
        elif self.status == "no match":
            lines.append(f"NO MATCH: no definition of {self.metric} reproduces it on every case")
            if self.rounding:
                lines.append(f"  values {self.rounding[1]}? every difference from {self.rounding[0]} is explained by it")
        else:
            lines.append("NO EVIDENCE: the implementation gave no number on any case")
        if self.not_compared:
            lines.append(f"  not compared ({len(self.not_compared)} answered inputs where this definition has no value): "
                         + "; ".join(f"{i}: {why}" for i, why in self.not_compared[:6])
                         + (f"; and {len(self.not_compared) - 6} more" if len(self.not_compared) > 6 else ""))
        if self.user_set:
            lines.append(f"  user set: {self.user_set}")
        for f in self.closest:
            lines.append(f"closest: {f.definition}  (matches {f.matched} inputs, differs on {f.wrong}"
                         + (f", has no value on {f.refused} it answered)" if f.refused else ")"))
            lines.append(f"  smallest case that tells them apart: {f.case.get('id')} [{', '.join(f.case.get('tags', []))}], k={f.case.get('k')}")
            lines.append(f"    recs (user, item, score, rank): {f.case.get('recs')}")
            lines.append(f"    truth (user, item, rating): {f.case.get('truth')}")
            lines.append(f"    implementation: {_show(f.case.get('implementation'))}")
            lines.append(f"    {f.definition}: {_show(f.case.get('receval'))}")
        for what, cases in (("raised", self.raised), ("answered a non-number", self.non_numbers)):
            if cases:
                lines.append(f"the implementation {what} on {len(cases)} inputs ({_ids(cases)}), e.g.: {cases[0][1]}")
        if self.explanation:
            lines += ["", self.explanation.rstrip()]
        return "\n".join(lines) + "\n"


def _ids(items: Sequence[tuple[str, Any]], most: int = 8) -> str:
    """The case ids of (case id, ...) pairs, at most ``most`` of them."""
    ids = [i for i, _ in items]
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _show(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{u}: {x:.6g}" for u, x in sorted(v.items())) + "}"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def explanation(spec: str, dialect: str | None = None, any_k: bool = False) -> str:
    """The formula and resolved options of ``spec``, as ``receval explain`` prints them; with
    ``any_k`` (an audit of several cut-offs) the spec's cut-off is written ``@k``."""

    r = decide_rel([resolve(spec, dialect=dialect_of(dialect))], True)[0]  # the truth of a case has ratings
    m = r.metric
    # the spec as written: its canonical form drops rel=all (rel's default value), which a reader of
    # the header would then take for the data-decided default rel:>0
    head = spec if "rel=all" in spec.replace(" ", "") else str(r.spec)
    if any_k and "@" in head:
        head = head[:head.rindex("@")] + "@k"
    lines = [f"{head}  —  {m.summary}", "", "Formula:"]
    lines += ["  " + line for line in to_text(m.formula()).splitlines()]
    lines += ["", "Resolved options:"]
    for name, axis in m.all_axes().items():
        value = r.options.get(name)
        if value is None and not axis.numeric:
            continue
        meaning = axis.values.get(str(value), "") if axis.values else axis.doc
        lines.append(f"  {name} = {axis.render(value)}  {meaning}")
    return "\n".join(lines) + "\n"


# --- helpers for the shapes people have ----------------------------------------------------------

_RELEVANT = ("set", "ratings")
_EMPTY = ("call", "skip")


def _shape_args(relevant: str, empty: str) -> None:
    if relevant not in _RELEVANT:
        raise AuditError(f"relevant='{relevant}': write relevant='set' (the items rated > 0) or relevant='ratings' "
                         "({item: rating} of every truth row)")
    if empty not in _EMPTY:
        raise AuditError(f"empty='{empty}': write empty='call' (the function gets an empty collection) or empty='skip'")


def _lists(recs: Any, truth: Any, relevant: str, catalog: bool, side: Mapping[str, Any]) -> tuple[dict, dict]:
    """({user: [items in row order]}, {user: set or {item: rating}}) of one case; every truth
    user is listed in both (an empty list: no recommendation)."""
    ranked: dict[str, list[str]] = {}
    for u, i in recs.select("user", "item").iter_rows():  # the rows' order: the helper reads no rank or score
        ranked.setdefault(u, []).append(i)
    rel: dict[str, Any] = {}
    for u, i, r in truth.select("user", "item", "rating").iter_rows():
        r = 1.0 if r is None else float(r)
        if relevant == "set":
            mine = rel.setdefault(u, set())
            if r > 0:
                mine.add(i)
        else:
            got = rel.setdefault(u, {})
            got[i] = max(r, got.get(i, -math.inf))
    if catalog:
        every = (side["catalog"]["item"].to_list() if "catalog" in side
                 else recs["item"].to_list() + truth["item"].to_list())
        items = sorted(set(every))
        for u in rel:
            listed = ranked.setdefault(u, [])
            seen = set(listed)
            listed.extend(i for i in items if i not in seen)
    for u in rel:
        ranked.setdefault(u, [])
    return ranked, rel


def _has_relevant(rel: Any) -> bool:
    return any(v > 0 for v in rel.values()) if isinstance(rel, dict) else bool(rel)


def per_user(fn: Callable[[list[str], Any, int | None], Any], *, relevant: str = "set", empty: str = "call",
             catalog: bool = False) -> Callable[..., dict[str, float]]:
    """The audit's implementation ``impl(recs, truth, k, side)`` of a per-user function
    ``fn(ranked_items, relevant_items, k) -> value``, called once for each truth user.

    The translation, each choice one that can change the verdict (docs/audit.md, "Functions of
    one user"):

    - ``ranked_items``: the user's recommended items in the order of the rows (the rank column
      and the scores are not read, so the verdict's ordering is ``order=input``: the helper's,
      not the function's), the list only (no item beyond it: a function that expects a full
      ranking, an AUC over every item, sees a short one); ``catalog=True`` appends every
      catalogue item not in the list, in id order (the ``catalog`` side input, else every item
      of the case), as a full ranking;
    - a repeated recommendation is passed as is (the item twice): the function's own rule is
      what the audit names (``dup``); a user with relevant items and no recommendation gets ``[]``;
    - ``relevant``: ``"set"`` (default) the items rated > 0 (receval's default ``rel:>0``, so the
      verdict reads ``rel`` from the function only through which rows it is given), or
      ``"ratings"``: ``{item: rating}`` of every truth row (ratings <= 0 included: the function
      decides); a repeated truth row is given once (a set), with its highest rating, so the
      verdict cannot tell ``tdup=keep`` from ``first``/``max``;
    - ``empty``: a truth user with no relevant item (no rating > 0) is given an empty set
      (``"call"``, default; the function decides: a NaN or None answer leaves the user out of the
      mean) or not called (``"skip"``; the verdict then reads ``empty=skip``). A user who is
      only in the recommendations is never called (the averaged users are the truth users).

    An exception of ``fn`` on any user makes the whole input unanswered (the report names it).

    >>> import polars as pl
    >>> def precision_at_k(ranked, relevant, k):
    ...     return sum(1 for item in ranked[:k] if item in relevant) / k
    >>> impl = per_user(precision_at_k)
    >>> recs = pl.DataFrame({"user": ["u1", "u1", "u2"], "item": ["a", "b", "a"], "score": [0.9, 0.8, 0.5],
    ...                      "rank": [1, 2, 1]})
    >>> truth = pl.DataFrame({"user": ["u1", "u2", "u3"], "item": ["b", "c", "a"], "rating": [1.0, 2.0, 1.0]})
    >>> impl(recs, truth, 2, {})
    {'u1': 0.5, 'u2': 0.0, 'u3': 0.0}
    """
    if not callable(fn):
        raise AuditError(f"per_user(fn): pass a function fn(ranked_items, relevant_items, k), got {type(fn).__name__}")
    _shape_args(relevant, empty)

    def impl(recs: Any, truth: Any, k: int | None, side: Mapping[str, Any]) -> dict[str, float]:
        ranked, rel = _lists(recs, truth, relevant, catalog, side)
        out: dict[str, float] = {}
        for u in sorted(rel):
            if empty == "skip" and not _has_relevant(rel[u]):
                continue
            v = fn(list(ranked[u]), rel[u], k)
            if v is not None:
                out[u] = v
        return out

    impl.__qualname__ = f"per_user({getattr(fn, '__qualname__', type(fn).__name__)})"
    return impl


def from_dicts(fn: Callable[[dict[str, list[str]], dict[str, Any], int | None], Any], *, relevant: str = "ratings",
               catalog: bool = False) -> Callable[..., Any]:
    """The audit's implementation ``impl(recs, truth, k, side)`` of a function of two dicts,
    ``fn(recommendations, truth, k) -> {user: value} or the mean``: ``recommendations`` is
    ``{user: [items in row order]}``, ``truth`` is ``{user: {item: rating}}``
    (``relevant="ratings"``, default: every truth row, its highest rating when repeated) or
    ``{user: [items rated > 0]}`` (``relevant="set"``, each item once).

    The same translation as :func:`per_user` (the list only unless ``catalog=True``; a
    repeated recommendation passed as is; every truth user a key of both dicts, with ``[]`` when
    it has no recommendation; a user with no relevant item keeps an empty entry, the function
    decides), called once on the whole input.

    >>> import polars as pl
    >>> def hit_rate(recommendations, truth, k):
    ...     return {u: float(any(i in truth[u] for i in items[:k])) for u, items in recommendations.items()}
    >>> impl = from_dicts(hit_rate)
    >>> recs = pl.DataFrame({"user": ["u1", "u1"], "item": ["a", "b"], "score": [0.9, 0.8], "rank": [1, 2]})
    >>> truth = pl.DataFrame({"user": ["u1", "u2"], "item": ["b", "a"], "rating": [4.0, 1.0]})
    >>> impl(recs, truth, 1, {})
    {'u1': 0.0, 'u2': 0.0}
    """
    if not callable(fn):
        raise AuditError(f"from_dicts(fn): pass a function fn(recommendations, truth, k), got {type(fn).__name__}")
    _shape_args(relevant, "call")

    def impl(recs: Any, truth: Any, k: int | None, side: Mapping[str, Any]) -> Any:
        ranked, rel = _lists(recs, truth, relevant, catalog, side)
        given = {u: ranked[u] for u in sorted(rel)}
        return fn(given, {u: (sorted(v) if isinstance(v, set) else v) for u, v in sorted(rel.items())}, k)

    impl.__qualname__ = f"from_dicts({getattr(fn, '__qualname__', type(fn).__name__)})"
    return impl


# --- the audit -------------------------------------------------------------------------------------


def audit(impl: Any, metric: str, cases: Any = None, *, values: ReceValues | None = None) -> AuditReport:
    """Which definition of ``metric`` does ``impl`` compute? (see the module docs)

    ``impl``: ``impl(recs, truth, k, side) -> {user: value} | mean``, a batch implementation,
    or its text (``module:function``, ``path/to/file.py:function``, an adapter name);
    ``cases``: None (the shipped suite), an exported folder, or a list of
    :class:`~receval.conformance.case.Case`; ``values``: the cache of receval's values to
    read and fill (default: :data:`VALUES`, shared by the audits of this process).
    """

    metric, fixed = _named_options(metric)
    m = get_metric(metric)
    for a in fixed:
        try:
            m.axis(a)
        except SpecError as e:
            raise AuditError(str(e)) from None
    label = impl if isinstance(impl, str) else getattr(impl, "__qualname__", None) or type(impl).__name__
    if isinstance(impl, str):
        impl, label = load_implementation(impl)
    impl = _pick(impl, m.name)
    if cases is None or isinstance(cases, (str, Path)):
        chosen = suite_cases(m.name, cases)
    else:
        chosen = [c for c in cases if c.metric == m.name]
    if not chosen:
        raise AuditError(f"no conformance case of metric '{m.name}'" + (f" in '{cases}'" if isinstance(cases, (str, Path)) else ""))
    if not (callable(impl) or isinstance(impl, BatchImplementation)):
        raise AuditError(f"pass a function impl(recs, truth, k, side), an object with evaluate_cases(cases), or its text "
                         f"'module:function': got {type(impl).__name__}")
    tolerance = max(TOLERANCE, _tolerance(getattr(impl, "tolerance", TOLERANCE)))
    token, fixed_token = _TOL.set(tolerance), _FIXED.set(tuple(fixed.items()))
    try:
        _check_named(m, chosen[0], values if values is not None else VALUES)
        report = _audit(impl, m, chosen, label, values if values is not None else VALUES)
    finally:
        _TOL.reset(token)
        _FIXED.reset(fixed_token)
    report.tolerance = tolerance
    return report


def _check_named(m: Any, case: Any, values: ReceValues) -> None:
    """Refuse an audit of a metric whose definition needs an option the audit cannot infer (the
    cell of ``bias_disparity``): its standard definition is refused as a spec on any input."""
    spec = Candidate({}).spec(m.name, case.k)
    got = values(probes_of([case])[0], [spec])[spec]
    if isinstance(got, Refused) and got.unnamed:
        why = got.removeprefix("refused by the definition: ")
        raise AuditError(f"name it in the metric you audit, e.g. '{m.name}(option=value)': {why}")


#: the loosest tolerance an implementation may declare
MAX_TOLERANCE = 1e-3


def _tolerance(value: Any) -> float:
    """A declared ``tolerance``: a float in (0, :data:`MAX_TOLERANCE`], else refused in one line."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_TOLERANCE
    if not ok:
        raise AuditError(f"declare tolerance as a float in (0, {MAX_TOLERANCE:g}] (relative): the implementation "
                         f"declares {str(value)[:40]!r}")
    return float(value)


def _audit(impl: Any, m: Any, chosen: list, label: str, values: ReceValues) -> AuditReport:
    probes = probes_of(chosen)
    got = run_implementation(impl, probes)
    unanswered = [(p.id, got[p.key]) for p in probes if isinstance(got[p.key], str)]
    report = AuditReport(m.name, str(label), len(chosen), len(probes), len(probes) - len(unanswered), "no evidence",
                         errors=[str(v) for _, v in unanswered if getattr(v, "kind", "raised") != "non-number"],
                         raised=[(i, str(v)) for i, v in unanswered if getattr(v, "kind", "raised") != "non-number"],
                         non_numbers=[(i, str(v)) for i, v in unanswered if getattr(v, "kind", "raised") == "non-number"])
    report.out_of_bounds = _out_of_bounds(m, probes, got)
    report.bounds = m.bounds
    if not report.evidence:
        return report
    cands: list[Candidate] = []
    seen: set[tuple] = set()

    def stage(option_sets: list[dict[str, str]], dialects: Sequence[str] = ()) -> None:
        new = []
        for o in option_sets:
            key = tuple(sorted(o.items()))
            if key not in seen:
                seen.add(key)
                new.append(Candidate(o))
        new += [Candidate({}, d) for d in dialects]
        _score(m, new, probes, got, values)
        cands.extend(new)

    def bases() -> list[dict[str, str]]:
        top = [c.options for c in sorted(cands, key=_rank) if c.dialect is None][:2]
        return top + ([{}] if {} not in top else [])

    answered = [p for p in probes if not isinstance(got[p.key], str)]
    stage(_space(m))  # 1. the metric's own options
    stage([o for b in bases() for o in _context(m, b, answered)])  # 2. the context options together
    contexts = [_context_of(m, b) for b in bases()]
    stage([{**o, **c} for c in contexts for o in _space(m)])  # 3. the metric's own options again, in the best contexts
    stage([o for b in bases() for o in _around(m, b)], _dialects(m.name))  # 4. numeric options, dialects
    best = sorted(cands, key=_rank)[0]
    if best.wrong or best.refused:  # 5. the context options again, around a numeric option that came first
        stage([o for b in bases() for o in _context(m, b, answered)])
    everything = sorted(cands, key=_rank)
    top = everything[0]
    by_key = {p.key: p for p in probes}
    several_k = len({p.case.k for p in probes}) > 1
    # an answered input some definition has a value on: a match must reproduce it, not refuse it
    # (a candidate left behind by the search still shows it has a value on the inputs it was compared on)
    answerable = {p.key for p in answered if any(p.key in c.seen and p.key not in c.refused for c in everything)}
    if top.wrong == 0 and top.matched > 0 and not set(top.refused) & answerable:
        report.status = "match"
        same = [c for c in everything if c.wrong == 0 and c.matched == top.matched]
        plain = [c for c in same if c.dialect is None]
        chosen_c = plain[0] if plain else top
        k = probes[0].case.k
        report.definition = chosen_c.spec(m.name, None) if chosen_c.dialect is None else f"{m.name} (dialect {chosen_c.dialect})"
        report.options = dict(chosen_c.options) if chosen_c.dialect is None else _dialect_options(chosen_c.dialect, m.name, k)
        report.dialects = [c.dialect for c in everything if c.dialect and c.wrong == 0 and c.matched]
        report.equivalent = [c.spec(m.name, None) for c in plain[1:]]
        report.explanation = explanation(chosen_c.spec(m.name, k), chosen_c.dialect, several_k)
        report.compared = chosen_c.matched
        report.not_compared = [(by_key[key].id, why) for key, why in chosen_c.refused.items()]
        return report
    report.status = "no match"
    shown: set[tuple] = set()
    for c in closest_order(everything):
        key = (tuple(c.differs), tuple(c.users), tuple(c.refused))
        if not (c.wrong or set(c.refused) & answerable) or c.pruned or key in shown:
            continue
        shown.add(key)
        report.closest.append(_finding(m.name, c, by_key, got, values))
        if len(report.closest) == 3:
            break
    report.rounding = rounding(m.name, [c for c in closest_order(everything) if c.wrong][:ROUNDING_TRIED], probes, got, values)
    first = next((c for c in everything if c.wrong + c.matched), everything[0])
    if first.users and not first.differs:
        report.user_set = _user_set(by_key[first.users[0]], got[first.users[0]], first, m.name, values)
    k = probes[0].case.k
    report.definition = first.spec(m.name, None) if first.dialect is None else f"{m.name} (dialect {first.dialect})"
    report.options = dict(first.options)
    report.not_compared = [(by_key[key].id, why) for key, why in first.refused.items()]
    try:
        report.explanation = explanation(first.spec(m.name, k), first.dialect, several_k)
    except RecevalError:  # not a definition (no candidate had evidence): no formula to print
        report.explanation = ""
    return report


#: how many of the closest definitions the rounding diagnosis tries
ROUNDING_TRIED = 300


def explained_by_rounding(pairs: Sequence[tuple[float, float]]) -> str | None:
    """The rounding that explains every (implementation, receval) pair, or None: ``"rounded to
    d decimals"`` when each answer is a multiple of 10^-d within 10^-d of receval's value (any
    rounding mode: half-even, half-up, truncation), the smallest such d in 1..8; ``"in
    percent"`` when each answer is 100 times receval's value (to 1e-9), or ``"in percent,
    rounded to d decimals"``. At least one pair must differ (else it is no finding).

    >>> explained_by_rounding([(0.6309, 0.63092975), (0.5, 0.5)])
    'rounded to 4 decimals'
    >>> explained_by_rounding([(63.09, 0.63092975), (50.0, 0.5)])
    'in percent, rounded to 2 decimals'
    >>> explained_by_rounding([(0.62, 0.63092975)]) is None
    True
    """
    if not pairs or all(_close(g, w) for g, w in pairs):
        return None
    for scale, label in ((1.0, ""), (100.0, "in percent")):
        scaled = [(g, w * scale) for g, w in pairs]
        if scale != 1.0 and all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in scaled):
            return label
        for d in range(1, 9):
            unit = 10.0 ** -d
            if all(abs(g - w) < unit * (1 + 1e-9) and abs(g / unit - round(g / unit)) < 1e-6 for g, w in scaled):
                return (label + ", rounded" if label else "rounded") + f" to {d} decimal{'s' if d != 1 else ''}"
    return None


def rounding(metric: str, cands: Sequence[Candidate], probes: Sequence[Probe], got: Mapping[str, Any],
             values: ReceValues) -> tuple[str, str] | None:
    """(definition, what) for the first of ``cands`` whose every difference from the implementation
    is explained by rounding or percent (:func:`explained_by_rounding`), the finest rounding first;
    None when none is."""
    found: list[tuple[int, int, int, str, str]] = []
    for c in cands:
        pairs: list[tuple[float, float]] = []
        ok = True
        for p in probes:
            g = got[p.key]
            if isinstance(g, str) or p.key in c.refused:
                continue
            spec = c.spec(metric, p.case.k) if c.dialect is None else metric + (f"@{p.case.k}" if p.case.k is not None else "")
            want = values(p, [spec], c.dialect)[spec]
            if want is None or isinstance(want, Refused):
                continue
            mean, per_user = want
            if isinstance(g, float) or per_user is None:
                v = g if isinstance(g, float) else (sum(g.values()) / len(g) if g else math.nan)
                if mean is None or math.isnan(v):
                    ok = False
                    break
                pairs.append((v, mean))
            else:
                if set(g) != set(per_user):
                    ok = False
                    break
                pairs += [(g[u], x) for u, x in per_user.items() if x is not None]
        what = explained_by_rounding(pairs) if ok else None
        if what is not None:
            digits = int(what.split(" to ")[1].split()[0]) if " to " in what else 99
            found.append((-digits, len(c.refused), len(found), c.label(metric), what))
    if not found:
        return None
    *_, label, what = min(found)
    return label, what


def closest_order(cands: Sequence[Candidate]) -> list[Candidate]:
    """The candidates in the order the closest are shown: most inputs matched first, then fewest
    differing, fewest refused; a definition matching no input only after every one that matches some."""
    live = [c for c in cands if not c.pruned]
    return sorted(live, key=lambda c: (c.matched == 0, -c.matched, c.wrong, len(c.refused))) + [c for c in cands if c.pruned]


def _out_of_bounds(m: Any, probes: Sequence[Probe], got: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(case id, value) of every answered input with a value outside the metric's declared bounds."""
    if m.bounds is None:
        return []
    lo, hi = m.bounds
    slack = 1e-9 * max(1.0, abs(lo) if math.isfinite(lo) else 1.0, abs(hi) if math.isfinite(hi) else 1.0)
    out = []
    for p in probes:
        g = got[p.key]
        if isinstance(g, str):
            continue
        for v in ([g] if isinstance(g, float) else list(g.values())):
            if not math.isnan(v) and (v < lo - slack or v > hi + slack):
                out.append((p.id, v))
                break
    return out


def _dialect_options(label: str, metric: str, k: int | None) -> dict[str, str]:
    """The options a dialect changes from the standard definition of ``metric``."""

    m = get_metric(metric)
    return {name: m.axis(name).render(value) for name, _, value, _ in load_dialect(label).differences(metric, k)}


def _dialects(metric: str) -> list[str]:

    out = []
    for d in all_dialects():
        if d.name != "standard" and (metric in d.metrics or f"{metric}@k" in d.metrics):
            out.append(d.label)
    return out


def _finding(metric: str, c: Candidate, by_key: Mapping[str, Probe], got: Mapping[str, Any], values: ReceValues) -> Finding:
    keys = c.differs + c.users or list(c.refused)
    p = min((by_key[k] for k in keys), key=lambda p: (p.size, p.id))
    spec = c.spec(metric, p.case.k) if c.dialect is None else metric + (f"@{p.case.k}" if p.case.k is not None else "")
    want = values(p, [spec], c.dialect)[spec]
    mine = want if want is None or isinstance(want, Refused) else (want[1] if isinstance(got[p.key], dict) and want[1] else want[0])
    case = {
        "id": p.id, "tags": list(p.tags), "k": p.case.k, "recs": p.case.recs.rows(), "truth": p.case.truth.rows(),
        "side": sorted(p.case.side), "implementation": got[p.key], "receval": mine,
    }
    return Finding(c.label(metric), c.matched, c.wrong, case, len(c.refused))


def _user_set(p: Probe, got: Any, c: Candidate, metric: str, values: ReceValues) -> str:
    spec = c.spec(metric, p.case.k) if c.dialect is None else metric + (f"@{p.case.k}" if p.case.k is not None else "")
    want = values(p, [spec], c.dialect)[spec]
    if want is None or isinstance(want, Refused) or not isinstance(got, dict):
        return "another set of users"
    ours = set(want[1] or {})
    extra, missing = sorted(set(got) - ours), sorted(ours - set(got))
    parts = []
    if missing:
        parts.append(f"leaves out users {', '.join(missing)} that this definition averages")
    if extra:
        parts.append(f"averages users {', '.join(extra)} that this definition leaves out")
    return f"on {p.id} the implementation " + " and ".join(parts) + " (the values of the common users agree)"


def main_audit(impl: str, metrics: Sequence[str], cases: str | None, as_json: bool = False) -> int:
    """The command line's ``receval audit``: print one report per metric."""
    reports = [audit(impl, m, cases) for m in metrics]
    if as_json:
        print(json.dumps([r.to_dict() for r in reports], indent=2, default=str))
    else:
        sys.stdout.write("\n".join(str(r) for r in reports))
    return 0


def build_command(p: Any) -> Callable[[Any], int]:
    """``receval audit IMPL --metric NAME [--cases DIR]``."""
    p.add_argument("impl", metavar="IMPL",
                   help="the implementation: module:function, path/to/file.py:function (impl(recs, truth, k, side) -> "
                        "{user: value} or a mean), or a built-in adapter name")
    p.add_argument("-m", "--metric", action="append", required=True, help="the receval metric it computes (repeatable)")
    p.add_argument("--cases", metavar="DIR", help="a folder written by `receval conformance export` (default: the shipped suite)")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")

    def run(a: Any) -> int:

        for name in a.metric:
            get_metric(_named_options(name)[0])  # an unknown metric: one line, before any work
        return main_audit(a.impl, a.metric, a.cases, a.json)

    return run


__all__ = ["audit", "option_settings", "CONTEXT_VALUES", "per_user", "from_dicts", "explained_by_rounding", "rounding", "AuditReport", "AuditError", "Candidate", "Finding", "Refused", "Unanswered", "closest_order", "load_implementation", "explanation",
           "probes_of", "run_implementation", "compare", "build_command"]
