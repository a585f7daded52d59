r"""``evaluate``: estimates, intervals, diagnostics and paired differences, with their signatures.

Every estimate is :math:`\hat V = \frac1n\sum_i A_i + \sum_i B_i / \sum_i C_i`
(:class:`receval.ope.estimators.Parts`) over its *n* rounds (log rows; slates for the slate
estimators). Each sum is exactly rounded (``math.fsum``), so a value does not depend on the
row order; the joins are on the id values, so it does not depend on their spelling.

**Per-round terms** :math:`t_i = A_i + B_i / \bar C` (their mean is the value; for ``snips``
:math:`w_i r_i / \bar w`, as obp's round rewards).

**Intervals** at ``level``:

* ``ci="normal"``: :math:`\hat V \pm z_{(1+\ell)/2}\, s_\psi / \sqrt n` with the influence terms
  :math:`\psi_i = A_i + (B_i - R\, C_i) / \bar C`, :math:`R = \sum B / \sum C` (for the plain
  means :math:`\psi_i = A_i`, the normal approximation; for the self-normalised ones the delta
  method: the signature says ``ci:delta``), :math:`s_\psi` their standard deviation (n − 1);
* ``ci="bootstrap"``: the percentile interval of ``resamples`` estimates recomputed on rounds
  drawn with replacement (a seeded ``numpy.random.default_rng(seed)``; the rounds first put in
  an order fixed by their content, so the interval does not depend on the row order);
* ``ci="none"``.

**Paired differences** of two targets on the same log: :math:`\hat V_a - \hat V_b` with the
interval of the differences of their influence terms (normal) or of resamples drawn once for both.

**Diagnostics** (of the weights the estimator applies; raw: :math:`\pi_i/\mu_i` before cap/floor):
``ess`` :math:`(\sum w)^2 / \sum w^2`, ``max_weight``, ``mean_weight`` (raw; about 1 when the
propensities are right and the logging policy covers the target), ``clipped`` (share of rounds
whose weight ``cap``, ``floor`` or ``tau`` changed), ``unsupported`` (the target's mean probability
mass, per round, on items the log never shows).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from .._version import __version__
from ..errors import DataError, RecevalWarning, SpecError, bad_param, caller_level
from .data import Aligned, OpeColumns, _same_ids, align, read_log, read_rewards, read_target, split
from .estimators import EstimatorSpec, Parts, parse_estimator, render

CI_METHODS = ("normal", "bootstrap", "none")
#: a RecevalWarning when the effective sample size is below this share of the rounds
ESS_SHARE = 0.01
#: the weight warnings need this many rounds (fewer say nothing either way)
MIN_ROUNDS = 10
#: ... when the mean raw weight is further than this from 1 (and 3 standard errors)
MEAN_WEIGHT_GAP = 0.1
#: ... when the target puts more than this mass, per round, on items the log never shows
UNSUPPORTED_MASS = 0.01


#: the log is aligned and estimated in batches of about this many rows (whole contexts), when
#: ``batches`` is not given; a value does not depend on the batches (every sum is exact)
BATCH_ROWS = 1_000_000
_CHUNK = 1 << 20


def _fsum(x: np.ndarray) -> float:
    """``math.fsum`` of the array (exactly rounded, so independent of the order), read in chunks."""
    return math.fsum(itertools.chain.from_iterable(x[i:i + _CHUNK].tolist() for i in range(0, len(x), _CHUNK)))


def _fsum_mean(x: np.ndarray) -> float:
    return _fsum(x) / len(x) if len(x) else float("nan")


@dataclass
class OpeEntry:
    """One estimate of one target policy."""

    estimator: str
    target: str
    value: float
    low: float | None
    high: float | None
    signature: str
    rounds: int
    terms: np.ndarray = field(repr=False)
    diagnostics: dict[str, float | None] = field(default_factory=dict)


@dataclass
class OpeDifference:
    """``value(a) - value(b)`` of one estimator, paired on the shared rounds."""

    estimator: str
    a: str
    b: str
    value: float
    low: float | None
    high: float | None
    signature: str


@dataclass
class OpeResults:
    """What :func:`evaluate` returns: an entry per target and estimator, the paired differences."""

    entries: list[OpeEntry]
    differences: list[OpeDifference]
    version: str = __version__

    def value(self, estimator: str, target: str | None = None) -> float:
        """The value of ``estimator`` (as written in the call or canonical) for ``target`` (the only one by default)."""
        return self.entry(estimator, target).value

    def entry(self, estimator: str, target: str | None = None) -> OpeEntry:
        name = str(parse_estimator(estimator))
        targets = list(dict.fromkeys(e.target for e in self.entries))
        if target is None:
            if len(targets) > 1:
                raise SpecError(f"name the target: value('{name}', target=...) with one of {', '.join(targets)}")
            target = targets[0]
        for e in self.entries:
            if e.estimator == name and e.target == target:
                return e
        raise SpecError(f"ask for an estimator and target of this result: no '{name}' for target '{target}'")

    def to_dict(self) -> dict[str, Any]:
        def num(v: float | None) -> float | None:
            return None if v is None or not math.isfinite(v) else float(v)

        return {
            "version": self.version,
            "results": [{"metric": e.estimator, "target": e.target, "value": num(e.value), "ci": [num(e.low), num(e.high)],
                         "signature": e.signature, "rounds": e.rounds,
                         "diagnostics": {k: num(v) for k, v in e.diagnostics.items()}} for e in self.entries],
            "differences": [{"metric": d.estimator, "a": d.a, "b": d.b, "value": num(d.value), "ci": [num(d.low), num(d.high)],
                             "signature": d.signature} for d in self.differences],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_frame(self) -> pl.DataFrame:
        return pl.DataFrame([{"target": e.target, "estimator": e.estimator, "value": e.value, "ci_low": e.low,
                              "ci_high": e.high, **e.diagnostics, "signature": e.signature} for e in self.entries])

    def render(self, fmt: str = "table", digits: int = 6) -> str:
        """``table``, ``markdown``, ``latex``, ``csv`` or ``json``."""
        if fmt == "json":
            return self.to_json() + "\n"
        from ..report import render

        several = len({e.target for e in self.entries}) > 1
        head = (["target"] if several else []) + ["estimator", "value", "ci_low", "ci_high", "ess", "max_weight",
                                                   "mean_weight", "signature"]
        rows: list[list[Any]] = [([e.target] if several else []) + [e.estimator, e.value, e.low, e.high, e.diagnostics.get("ess"),
                                                    e.diagnostics.get("max_weight"), e.diagnostics.get("mean_weight"), e.signature]
                for e in self.entries]
        out = render(head, rows, fmt, digits=digits, width=None)
        if self.differences:
            rows = [[d.estimator, d.a, d.b, d.value, d.low, d.high] for d in self.differences]  # noqa: E501
            out += "\n" + render(["estimator", "a", "b", "a - b", "ci_low", "ci_high"], rows, fmt, digits=digits, width=None)
        return out

    def __str__(self) -> str:
        return self.render("table")


def _is_named_targets(target: Any) -> bool:
    """A dict name -> target (each a frame, a dict of columns or a path), not a dict of columns."""
    if not isinstance(target, Mapping) or not target:
        return False
    return all(isinstance(v, (Mapping, str, os.PathLike)) or hasattr(v, "columns") or hasattr(v, "schema")
               and not hasattr(v, "dtype") for v in target.values())


def _ci_fields(spec: EstimatorSpec, ci: str, level: float, resamples: int, seed: int) -> list[str]:
    if ci == "none":
        return ["ci:none"]
    if ci == "bootstrap":
        return ["ci:bootstrap", f"B:{resamples}", f"seed:{seed}", f"level:{render(level)}"]
    return [f"ci:{'delta' if spec.estimator.normalised else 'normal'}", f"level:{render(level)}"]


def signature(spec: EstimatorSpec, d: Aligned | _Batched, ci: str, level: float, resamples: int, seed: int) -> str:
    """``ips(cap=10)|w:pi/mu|cap:10|floor:none|tgt:prob|ci:normal|level:0.95|v:0.1.0``: every option and rule."""
    est = spec.estimator
    parts = [spec.canonical()]
    if est.weight:
        parts.append(f"w:{est.weight}")
    parts += [f"{k}:{render(v)}" for k, v in spec.options]
    parts.append(f"tgt:{d.mode}")
    if est.name in ("rips", "sips"):
        parts.append(f"pislate:{d.slate_rule}")
    if est.level == "slate":
        parts.append("round:slate")
    parts += _ci_fields(spec, ci, level, resamples, seed)
    parts.append(f"v:{__version__}")
    return "|".join(parts)


def _value(p: Parts) -> float:
    v = _fsum_mean(p.a)
    if p.b is not None and p.c is not None:
        den = _fsum(p.c)
        v += _fsum(p.b) / den if den else float("nan")
    return v


def _influence(p: Parts) -> np.ndarray:
    if p.b is None or p.c is None:
        return p.a
    cbar = _fsum_mean(p.c)
    ratio = _fsum(p.b) / _fsum(p.c)
    return p.a + (p.b - ratio * p.c) / cbar


def _terms(p: Parts) -> np.ndarray:
    if p.b is None or p.c is None:
        return p.a
    return p.a + p.b / _fsum_mean(p.c)


def _normal(psi: np.ndarray, center: float, level: float) -> tuple[float | None, float | None]:
    n = len(psi)
    if n < 2:
        return None, None
    m = _fsum_mean(psi)
    sd = math.sqrt(_fsum((psi - m) ** 2) / (n - 1))
    half = NormalDist().inv_cdf((1 + level) / 2) * sd / math.sqrt(n)
    return center - half, center + half


def _stack(p: Parts) -> list[np.ndarray]:
    out = [p.a]
    if p.b is not None and p.c is not None:
        out += [p.b, p.c]
    return out


def _bootstrap(parts: Sequence[Parts], signs: Sequence[float], level: float, resamples: int, seed: int) -> tuple[float, float]:
    """Percentile interval of ``sum(sign * estimate)`` over rounds drawn with replacement, the
    rounds first ordered by their content (so the row order does not matter)."""
    keys = [x for p in parts for x in _stack(p)]
    order = np.lexsort(keys[::-1])
    n = len(order)
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    ps = [Parts(a=p.a[order], b=None if p.b is None else p.b[order], c=None if p.c is None else p.c[order]) for p in parts]
    for r in range(resamples):
        k = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
        total = 0.0
        for p, s in zip(ps, signs):
            v = float(k @ p.a) / n
            if p.b is not None and p.c is not None:
                v += float(k @ p.b) / float(k @ p.c)
            total += s * v
        stats[r] = total
    lo, hi = np.quantile(stats, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _interval(parts: Sequence[Parts], signs: Sequence[float], center: float, ci: str, level: float, resamples: int,
              seed: int) -> tuple[float | None, float | None]:
    if ci == "none":
        return None, None
    if ci == "bootstrap":
        return _bootstrap(parts, signs, level, resamples, seed)
    psi = sum(s * _influence(p) for p, s in zip(parts, signs))
    return _normal(np.asarray(psi, dtype=np.float64), center, level)


def _diagnostics(p: Parts, d: Aligned | _Batched) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    if p.w is None or p.raw_w is None:
        return out | {"ess": None, "max_weight": None, "mean_weight": None, "clipped": None, "unsupported": _fsum_mean(d.unsupported)}
    sw, sw2 = _fsum(p.w), _fsum(p.w ** 2)
    return out | {
        "ess": sw * sw / sw2 if sw2 else 0.0,
        "max_weight": float(p.w.max()),
        "mean_weight": _fsum_mean(p.raw_w),
        "clipped": float(np.count_nonzero(p.changed)) / len(p.w) if p.changed is not None else 0.0,
        "unsupported": _fsum_mean(d.unsupported),
    }


def _warn(d: Aligned | _Batched, name: str) -> None:
    """One RecevalWarning per condition that says the weighted estimates of this target cannot be trusted."""
    w = d.pi / d.mu
    n = len(w)
    sw, sw2 = _fsum(w), _fsum(w ** 2)
    ess = sw * sw / sw2 if sw2 else 0.0
    said = []
    if n >= MIN_ROUNDS and ess < ESS_SHARE * n:
        said.append(f"the effective sample size of target '{name}' is {ess:.4g} of {n} rounds (below {ESS_SHARE:.0%}): "
                    "its weighted estimates rest on a few rounds")
    mean = sw / n
    sd = math.sqrt(_fsum((w - mean) ** 2) / (n - 1)) if n > 1 else 0.0
    if n >= MIN_ROUNDS and abs(mean - 1) > MEAN_WEIGHT_GAP and abs(mean - 1) > 3 * sd / math.sqrt(n):
        said.append(f"the mean weight pi/mu of target '{name}' is {mean:.4g}, not about 1: the propensities may be wrong "
                    "or the target may show items the logging policy could not")
    u = _fsum_mean(d.unsupported)
    if u > UNSUPPORTED_MASS:
        said.append(f"target '{name}' puts {u:.3g} of its probability per round on items the log never shows: "
                    "the weighted estimates cannot see them")
    for text in said:
        warnings.warn(text, RecevalWarning, stacklevel=caller_level(3))


@dataclass
class _Batched:
    """A target aligned on the log in batches of whole contexts: the batches (each an
    :class:`Aligned`) and their rounds joined (``pi``, ``mu``, ``unsupported``, for the
    diagnostics and warnings)."""

    batches: list[Aligned]
    pi: np.ndarray
    mu: np.ndarray
    unsupported: np.ndarray
    mode: str
    slate_rule: str | None


def _aligned(logs: dict[int, pl.DataFrame], targets: dict[int, pl.DataFrame], mode: str,
             models: dict[int, pl.DataFrame] | None, slates: set[str], what: str, shown: pl.DataFrame | None) -> _Batched:
    """``align`` batch by batch (:func:`receval.ope.data.split`: each context, its target rows and
    its reward model rows in one batch), the items shown anywhere in the log given to each; the
    logged contexts without target rows counted over every batch first."""
    if len(logs) > 1:
        missing, example = 0, None
        for key, lb in logs.items():
            tb = targets.get(key)
            lc = lb.select("c").unique()
            if tb is not None:
                lc, tc = _same_ids(lc, tb.select("c").unique(), "c", what)
                lc = lc.join(tc, on="c", how="anti")
            missing += lc.height
            if lc.height and example is None:
                example = lc.get_column("c").sort()[0]
        if missing:
            raise DataError(f"give the {what} rows for every logged context: {missing} have none, e.g. context_id="
                            f"{example!r} (list an item with probability 0 if it shows nothing there)")
    parts = []
    for key, lb in logs.items():
        t = targets[key]
        m = None if models is None else models.get(key, next(iter(models.values())).clear())
        parts.append(align(lb, t, mode, m, slates=slates, what=what, shown=shown))
    first = parts[0]
    return _Batched(parts, np.concatenate([b.pi for b in parts]), np.concatenate([b.mu for b in parts]),
                    np.concatenate([b.unsupported for b in parts]), first.mode, first.slate_rule)


def _concat(parts: list[Parts]) -> Parts:
    """The rounds of every batch's parts, one after the other."""
    if len(parts) == 1:
        return parts[0]

    def cat(name: str) -> np.ndarray | None:
        xs = [getattr(p, name) for p in parts]
        return None if xs[0] is None else np.concatenate(xs)

    a = cat("a")
    assert a is not None
    return Parts(a=a, b=cat("b"), c=cat("c"), w=cat("w"), raw_w=cat("raw_w"), changed=cat("changed"))


def evaluate(
    log: Any,
    target: Any,
    estimators: Sequence[str | EstimatorSpec] | str = ("naive", "ips", "snips"),
    rewards: Any = None,
    *,
    ci: str = "normal",
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    slate_size: int | None = None,
    context_col: str = "context_id",
    item_col: str = "item_id",
    reward_col: str = "reward",
    propensity_col: str = "propensity",
    position_col: str = "position",
    rank_col: str = "rank",
    score_col: str = "score",
    estimate_col: str = "estimate",
    batches: int | None = None,
) -> OpeResults:
    """Estimate the online value of one or several target policies from a logging policy's log.

    ``log``: one row per shown item: ``context_id``, ``item_id``, ``reward``, ``propensity``
    (the logging policy's probability of that item, at that position), optional ``position``
    (1 = top), and for ``rips`` / ``sips`` ``cascade_propensity`` / ``joint_propensity``.
    ``target``: ``context_id``, ``item_id``, ``propensity`` (per ``position`` when the log has
    positions; an item it does not list has probability 0), or a deterministic ranking
    (``rank``, else ``score`` descending) read as probability 1 at its position (at position 1
    without positions; signature ``tgt:rank`` / ``tgt:score``); or a dict name -> target, each
    estimated on the same rounds, with paired differences of every pair in the dict's order.
    ``rewards``: for ``dm``, ``dr``, ``switch_dr``, ``sndr``: ``context_id``, ``item_id``,
    [``position``], ``estimate``. Frames may be pandas, polars, Arrow, dicts of columns, CSV or
    Parquet paths; the ``*_col`` keywords rename the columns (of every input).

    ``ci``: ``normal`` (delta method for the self-normalised estimators), ``bootstrap``
    (``resamples``, ``seed``) or ``none``; ``level`` the interval's coverage. ``slate_size``:
    the positions a slate has (default: the largest logged position); target positions beyond
    it are refused. ``batches``: the log's contexts are aligned and estimated in this many
    batches (default: one per million log rows), each a set of whole contexts; the values do
    not depend on it (every sum is exactly rounded), only the memory does.

    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET
    >>> r = evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["naive", "ips", "snips"])
    >>> [round(e.value, 6) for e in r.entries]
    [0.5, 0.566667, 0.34]
    >>> r.entry("ips").signature.split("|v:")[0]
    'ips|w:pi/mu|cap:none|floor:none|tgt:prob|ci:normal|level:0.95'
    """
    if isinstance(estimators, (str, EstimatorSpec)):
        estimators = [estimators]
    specs = [parse_estimator(e) for e in estimators]
    if not specs:
        raise SpecError("name at least one estimator, e.g. ['ips', 'snips']")
    names = [str(s) for s in specs]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise SpecError(f"give each estimator once: '{twice}' is given twice")
    if ci not in CI_METHODS:
        raise SpecError(f"choose ci= one of {', '.join(CI_METHODS)}; got {ci!r}")
    from ..stats import check_options

    check_options(level=level, resamples=resamples if ci == "bootstrap" else None, seed=seed)
    if slate_size is not None and not (isinstance(slate_size, (int, np.integer)) and not isinstance(slate_size, bool)
                                       and slate_size >= 1):
        raise bad_param("slate_size", "an integer >= 1", slate_size)
    model_needed = [n for s, n in zip(specs, names) if s.estimator.rewards]
    if model_needed and rewards is None:
        raise SpecError(f"pass rewards= / --rewards FILE (a reward model: context_id, item_id, [position], estimate) for {', '.join(model_needed)}")
    cols = OpeColumns(context=context_col, item=item_col, reward=reward_col, propensity=propensity_col, position=position_col,
                      rank=rank_col, score=score_col, estimate=estimate_col)
    lf = read_log(log, cols)
    positions = "p" in lf.columns
    if positions:
        top = int(lf.get_column("p").max())  # type: ignore[arg-type]
        if slate_size is None:
            slate_size = top
        elif top > slate_size:
            raise DataError(f"give log positions within the slate (1..{slate_size}): some are up to {top}")
    model = read_rewards(rewards, cols) if rewards is not None and model_needed else None
    targets = dict(target) if _is_named_targets(target) else {"target": target}
    slates = {s.name for s in specs if s.estimator.level == "slate"}
    weighted = any(s.estimator.weight for s in specs)
    entries: list[OpeEntry] = []
    parts: dict[tuple[str, str], Parts] = {}
    if batches is None:
        batches = max(1, -(-lf.height // BATCH_ROWS))
    elif not (isinstance(batches, (int, np.integer)) and not isinstance(batches, bool) and batches >= 1):
        raise bad_param("batches", "an integer >= 1", batches)
    shown = lf.select("i").unique() if batches > 1 else None
    logs = split(lf, int(batches))
    del lf
    models = split(model, int(batches)) if model is not None else None
    for tname, tobj in targets.items():
        tparts, mode = read_target(tobj, cols, positions, slate_size, int(batches))
        what = "target" if len(targets) == 1 else f"target '{tname}'"
        d = _aligned(logs, tparts, mode, models, slates, what, shown)
        del tparts
        if weighted:
            _warn(d, str(tname))
        for spec, name in zip(specs, names):
            p = _concat([spec.estimator.fn(b, spec.opts) for b in d.batches])
            parts[(str(tname), name)] = p
            value = _value(p)
            low, high = _interval([p], [1.0], value, ci, level, resamples, seed)
            entries.append(OpeEntry(name, str(tname), value, low, high, signature(spec, d, ci, level, resamples, seed),
                                    len(p.a), _terms(p), _diagnostics(p, d)))
    diffs: list[OpeDifference] = []
    tnames = [str(t) for t in targets]
    for i, a in enumerate(tnames):
        for b in tnames[i + 1:]:
            for spec, name in zip(specs, names):
                pa, pb = parts[(a, name)], parts[(b, name)]
                value = _value(pa) - _value(pb)
                low, high = _interval([pa, pb], [1.0, -1.0], value, ci, level, resamples, seed)
                sig = next(e.signature for e in entries if e.estimator == name and e.target == a)
                diffs.append(OpeDifference(name, a, b, value, low, high, "diff:paired|" + sig))
    return OpeResults(entries, diffs)


__all__ = ["evaluate", "OpeResults", "OpeEntry", "OpeDifference", "CI_METHODS"]
