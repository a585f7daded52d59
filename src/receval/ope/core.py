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

**Paired differences** of two targets on the same log (the rounds are shared, so the terms pair
up round by round): :math:`D = \hat V_a - \hat V_b` with, for ``ci="normal"``, the influence
terms' differences :math:`\Delta\psi_i = \psi^a_i - \psi^b_i`, :math:`\mathrm{se} = s_{\Delta\psi}/\sqrt n`
(for the self-normalised estimators the delta method on the difference of two ratios), the
interval :math:`D \pm z_{(1+\ell)/2}\,\mathrm{se}` and the two-sided z test
:math:`p = 2(1 - \Phi(|D|/\mathrm{se}))` (se = 0: p = 1 when D = 0, else 0); for
``ci="bootstrap"`` resamples :math:`D^*_b` drawn once for both targets, their percentile interval
and :math:`p = \min(1, 2\min(1 + \#\{D^* \le 0\}, 1 + \#\{D^* \ge 0\})/(1 + B))`; for
``ci="none"`` the z test only. Every difference's p-value is corrected together with the others
of the call (``correction``: :func:`receval.stats.adjust`, Holm by default); each carries Cohen's
:math:`d_z` and the wins/ties/losses of the per-round terms :math:`t_i`.

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
from ..comparison import Comparison, Interval, PairTest
from ..errors import DataError, RecevalWarning, SpecError, bad_param, caller_level
from ..report import render as render_rows
from ..spec import signature_fields
from ..stats import adjust, check_options
from .data import (CONTEXT_CHECKS, Aligned, OpeColumns, _same_ids, align, batch, read_log, read_rewards, read_target, refusal,
                   rewards_batch, target_batch)
from .estimators import EstimatorSpec, Parts, parse_estimator, render

CI_METHODS = ("normal", "bootstrap", "none")
#: the corrections of the paired differences' p-values (:func:`receval.stats.adjust`)
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
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
    """``value(a) - value(b)`` of one estimator, paired on the shared rounds: its interval, the
    two-sided p-value of ``test`` (``z`` or ``bootstrap``, module docs) and the p-value after
    ``correction`` over every difference of the call; ``effect`` Cohen's :math:`d_z` of the
    per-round terms' differences, ``wins``/``ties``/``losses`` the rounds whose term of ``a``
    is above, equal to, below that of ``b``."""

    estimator: str
    a: str
    b: str
    value: float
    low: float | None
    high: float | None
    signature: str
    p: float = float("nan")
    p_adjusted: float = float("nan")
    test: str = "z"
    correction: str = "holm"
    effect: float = float("nan")
    wins: int = 0
    ties: int = 0
    losses: int = 0


#: how a Comparison's intervals name the methods of ``evaluate``'s ``ci`` (per estimator)
_CI_NAMES = {"normal": "normal", "delta": "delta-method", "bootstrap": "percentile"}


@dataclass
class OpeResults:
    """What :func:`evaluate` returns: an entry per target and estimator, the paired differences
    (against ``baseline`` when given, else of every pair of targets)."""

    entries: list[OpeEntry]
    differences: list[OpeDifference]
    version: str = __version__
    baseline: str | None = None

    @property
    def targets(self) -> list[str]:
        return list(dict.fromkeys(e.target for e in self.entries))

    @property
    def estimators(self) -> list[str]:
        return list(dict.fromkeys(e.estimator for e in self.entries))

    def value(self, estimator: str, target: str | None = None) -> float:
        """The value of ``estimator`` (as written in the call or canonical) for ``target`` (the only one by default)."""
        return self.entry(estimator, target).value

    def entry(self, estimator: str, target: str | None = None) -> OpeEntry:
        name = str(parse_estimator(estimator))
        targets = self.targets
        if target is None:
            if len(targets) > 1:
                raise SpecError(f"name the target: value('{name}', target=...) with one of {', '.join(targets)}")
            target = targets[0]
        for e in self.entries:
            if e.estimator == name and e.target == target:
                return e
        raise SpecError(f"ask for an estimator and target of this result: no '{name}' for target '{target}'")

    def compare(self, per_round: bool = True) -> Comparison:
        """The targets as the runs of a :class:`receval.comparison.Comparison` (each estimator a
        metric), for the tables, figures and report page of ``receval runs``
        (:func:`receval.tables.render_table`, :func:`receval.figures.plot_differences`,
        :func:`receval.page.render_page`): every value with its interval, every paired
        difference with its interval, p-value and corrected p-value (its ``test``: ``z`` or
        ``bootstrap``); ``users`` is the number of rounds (``unit`` ``"rounds"``). Each
        estimator's signature is its estimate's with the test and correction
        (``|test:z|corr:holm``). ``per_round``: keep the per-round terms (column ``user_id``: the
        round's index) for the per-round figure.

        >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET
        >>> half = dict(EXAMPLE_TARGET, propensity=[p / 2 for p in EXAMPLE_TARGET["propensity"]])
        >>> c = evaluate(EXAMPLE_LOG, {"full": EXAMPLE_TARGET, "half": half}, ["ips"]).compare()
        >>> c.runs, c.metrics, round(c.pair("ips", "full", "half").diff, 6)   # IPS halves: 0.566667 - 0.283333
        (['full', 'half'], ['ips'], 0.283333)
        """
        targets, metrics = self.targets, self.estimators
        values = {(e.target, e.estimator): e.value for e in self.entries}
        intervals = {}
        for e in self.entries:
            if e.low is not None and e.high is not None:
                f = signature_fields(e.signature)
                intervals[(e.target, e.estimator)] = Interval(e.low, e.high, _CI_NAMES.get(f.get("ci", ""), f.get("ci", "")),
                                                              float(f.get("level", "nan")))
        test = self.differences[0].test if self.differences else "z"
        correction = self.differences[0].correction if self.differences else "holm"
        sigs = {}
        for m in metrics:
            own = [e.signature for e in self.entries if e.estimator == m]
            tgt = "+".join(dict.fromkeys(signature_fields(s).get("tgt", "") for s in own))
            head, _, version = own[0].rpartition("|v:")
            head = "|".join(f"tgt:{tgt}" if part.startswith("tgt:") else part for part in head.split("|"))
            sigs[m] = f"{head}|test:{test}|corr:{correction}|v:{version}"
        pairs = []
        for d in self.differences:
            ci = None
            if d.low is not None and d.high is not None:
                f = signature_fields(d.signature)
                ci = Interval(d.low, d.high, _CI_NAMES.get(f.get("ci", ""), f.get("ci", "")), float(f.get("level", "nan")))
            pairs.append(PairTest(d.estimator, d.a, d.b, d.value, d.p, d.p_adjusted, d.test, d.correction, d.effect,
                                  "cohen_dz", d.wins, d.ties, d.losses, ci))
        rounds = max(e.rounds for e in self.entries)
        c = Comparison(targets, metrics, values, {m: True for m in metrics}, sigs, rounds, intervals, pairs, self.baseline,
                       unit="rounds")
        if per_round and len({e.rounds for e in self.entries}) == 1:
            c.per_user = {t: pl.DataFrame({"user_id": np.arange(rounds), **{e.estimator: e.terms for e in self.entries
                                                                            if e.target == t}}) for t in targets}
        return c

    def to_dict(self) -> dict[str, Any]:
        def num(v: float | None) -> float | None:
            return None if v is None or not math.isfinite(v) else float(v)

        return {
            "version": self.version,
            "results": [{"metric": e.estimator, "target": e.target, "value": num(e.value), "ci": [num(e.low), num(e.high)],
                         "signature": e.signature, "rounds": e.rounds,
                         "diagnostics": {k: num(v) for k, v in e.diagnostics.items()}} for e in self.entries],
            "differences": [{"metric": d.estimator, "a": d.a, "b": d.b, "value": num(d.value), "ci": [num(d.low), num(d.high)],
                             "p": num(d.p), "p_adjusted": num(d.p_adjusted), "test": d.test, "correction": d.correction,
                             "effect": num(d.effect), "wins": d.wins, "ties": d.ties, "losses": d.losses,
                             "signature": d.signature} for d in self.differences],
            **({"baseline": self.baseline} if self.baseline else {}),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_frame(self) -> pl.DataFrame:
        return pl.DataFrame([{"target": e.target, "estimator": e.estimator, "value": e.value, "ci_low": e.low,
                              "ci_high": e.high, **e.diagnostics, "signature": e.signature} for e in self.entries])

    def render(self, fmt: str = "table", digits: int = 4, differences: bool = True, signatures: bool = True,
               width: Any = None, values: bool = True) -> str:
        """``table``, ``markdown``, ``latex``, ``csv`` or ``json``: every estimate with its
        interval and diagnostics, then (``differences``) every paired difference with its p-values.
        ``signatures=False`` and ``values=False`` leave the signature and the value and interval
        columns out (a comparison table printed above already gives them, signatures factored); ``width`` the columns a terminal table fits
        (:func:`receval.report.render`: ``"terminal"``, a number, or None for no limit)."""
        if fmt == "json":
            return self.to_json() + "\n"

        several = len(self.targets) > 1
        head = ((["target"] if several else []) + ["estimator"] + (["value", "ci_low", "ci_high"] if values else [])
                + ["ess", "max_weight", "mean_weight"] + (["signature"] if signatures else []))
        rows: list[list[Any]] = [([e.target] if several else []) + [e.estimator] + ([e.value, e.low, e.high] if values else [])
                                 + [e.diagnostics.get("ess"), e.diagnostics.get("max_weight"), e.diagnostics.get("mean_weight")]
                                 + ([e.signature] if signatures else []) for e in self.entries]
        keys = 2 if several else 1
        out = render_rows(head, rows, fmt, digits=digits, width=width, keys=keys)
        if self.differences and differences:
            rows = [[d.estimator, d.a, d.b, d.value, d.low, d.high, d.p, d.p_adjusted] for d in self.differences]
            out += "\n" + render_rows(["estimator", "a", "b", "a - b", "ci_low", "ci_high", "p", f"p ({self.differences[0].correction})"],
                                      rows, fmt, digits=digits, width=width, keys=3)
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


def signature(spec: EstimatorSpec, d: Aligned | _TargetAcc, ci: str, level: float, resamples: int, seed: int) -> str:
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


def _bootstrap_stats(parts: Sequence[Parts], signs: Sequence[float], resamples: int, seed: int) -> np.ndarray:
    """``sum(sign * estimate)`` on each of ``resamples`` sets of rounds drawn with replacement
    (one draw for every part: paired), the rounds first ordered by their content (so the row
    order does not matter)."""
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
    return stats


def _bootstrap(parts: Sequence[Parts], signs: Sequence[float], level: float, resamples: int, seed: int) -> tuple[float, float]:
    """The percentile interval of :func:`_bootstrap_stats`."""
    lo, hi = np.quantile(_bootstrap_stats(parts, signs, resamples, seed), [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _interval(parts: Sequence[Parts], signs: Sequence[float], center: float, ci: str, level: float, resamples: int,
              seed: int) -> tuple[float | None, float | None]:
    if ci == "none":
        return None, None
    if ci == "bootstrap":
        return _bootstrap(parts, signs, level, resamples, seed)
    psi = sum(s * _influence(p) for p, s in zip(parts, signs))
    return _normal(np.asarray(psi, dtype=np.float64), center, level)


def _sd(x: np.ndarray) -> float:
    """The standard deviation (n − 1) of ``x`` from exactly rounded sums."""
    m = _fsum_mean(x)
    return math.sqrt(_fsum((x - m) ** 2) / (len(x) - 1))


def _difference(pa: Parts, pb: Parts, value: float, ci: str, level: float, resamples: int,
                seed: int) -> tuple[float | None, float | None, float]:
    r"""The interval and the two-sided p-value of ``value`` = :math:`\hat V_a - \hat V_b` on the
    shared rounds (module docs): with ``ci="bootstrap"`` from the paired resamples
    :math:`D^*_1..D^*_B`, :math:`p = \min(1, 2\min(1 + \#\{D^* \le 0\}, 1 + \#\{D^* \ge 0\})/(1 + B))`;
    else the z test :math:`p = 2(1 - \Phi(|\hat V_a - \hat V_b| \sqrt n / s_{\Delta\psi}))` with
    :math:`\Delta\psi_i = \psi^a_i - \psi^b_i` (``ci="none"``: the p-value only)."""
    if ci == "bootstrap":
        stats = _bootstrap_stats([pa, pb], [1.0, -1.0], resamples, seed)
        lo, hi = np.quantile(stats, [(1 - level) / 2, (1 + level) / 2])
        below, above = int(np.count_nonzero(stats <= 0)), int(np.count_nonzero(stats >= 0))
        return float(lo), float(hi), min(1.0, 2 * min(1 + below, 1 + above) / (1 + resamples))
    dpsi = np.asarray(_influence(pa) - _influence(pb), dtype=np.float64)
    n = len(dpsi)
    if n < 2:
        return None, None, float("nan")
    se = _sd(dpsi) / math.sqrt(n)
    p = (1.0 if value == 0 else 0.0) if se == 0 else math.erfc(abs(value) / se / math.sqrt(2))
    if ci == "none":
        return None, None, p
    half = NormalDist().inv_cdf((1 + level) / 2) * se
    return value - half, value + half, p


def _effect(ta: np.ndarray, tb: np.ndarray) -> float:
    """Cohen's :math:`d_z` of the per-round terms' differences (exactly rounded sums): 0 when
    every difference is 0, NaN when they are all one non-zero number or with fewer than 2 rounds."""
    d = ta - tb
    if len(d) < 2:
        return float("nan")
    if not np.any(d):
        return 0.0
    sd = _sd(d)
    return _fsum_mean(d) / sd if sd > 0 else float("nan")


def _wins(ta: np.ndarray, tb: np.ndarray) -> tuple[int, int, int]:
    """Rounds whose term of ``a`` is above, equal to, below that of ``b``."""
    d = ta - tb
    return int(np.count_nonzero(d > 0)), int(np.count_nonzero(d == 0)), int(np.count_nonzero(d < 0))


def _adjust(p: list[float], correction: str) -> list[float]:
    """The p-values of every paired difference corrected together (:func:`receval.stats.adjust`)."""
    if not p:
        return []

    return [float(x) for x in adjust(p, correction)]


def _diff_signature(sig: str, test: str, correction: str, baseline: str | None) -> str:
    """``diff:paired|`` + the estimate's signature with the test and correction before its version."""
    head, _, version = sig.rpartition("|v:")
    extra = f"|test:{test}|corr:{correction}" + (f"|base:{baseline}" if baseline else "")
    return f"diff:paired|{head}{extra}|v:{version}"


def _exact(x: np.ndarray) -> list[float]:
    """Floats whose exact sum is the exact sum of ``x`` (each the rounded rest of the ones
    before), so that ``math.fsum`` over the partials of every batch is ``math.fsum`` over every
    element: a batch's arrays need not be kept for its sums."""
    out: list[float] = []
    for _ in range(100):
        r = math.fsum(itertools.chain(itertools.chain.from_iterable(x[i:i + _CHUNK].tolist() for i in range(0, len(x), _CHUNK)),
                                      (-v for v in out)))
        if r == 0:
            break
        out.append(r)
        if not math.isfinite(r):
            return [r]
    return out


@dataclass
class _Acc:
    """One estimator of one target over the batches: its per-round parts (kept: the interval
    and the paired differences need them), the exact partial sums of its weights (not kept)."""

    a: list[np.ndarray] = field(default_factory=list)
    b: list[np.ndarray] = field(default_factory=list)
    c: list[np.ndarray] = field(default_factory=list)
    sw: list[float] = field(default_factory=list)
    sw2: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    n_w: int = 0
    max_w: float = -math.inf
    changed: int | None = None
    weighted: bool = False

    def add(self, p: Parts) -> None:
        self.a.append(p.a)
        if p.b is not None and p.c is not None:
            self.b.append(p.b)
            self.c.append(p.c)
        if p.w is not None and p.raw_w is not None:
            self.weighted = True
            self.sw += _exact(p.w)
            self.sw2 += _exact(p.w ** 2)
            self.raw += _exact(p.raw_w)
            self.n_w += len(p.w)
            if len(p.w):
                self.max_w = max(self.max_w, float(p.w.max()))
            if p.changed is not None:
                self.changed = (self.changed or 0) + int(np.count_nonzero(p.changed))

    def parts(self) -> Parts:
        """The parts of every batch, one after the other (the lists emptied)."""
        a = np.concatenate(self.a)
        b = np.concatenate(self.b) if self.b else None
        c = np.concatenate(self.c) if self.c else None
        self.a, self.b, self.c = [], [], []
        return Parts(a=a, b=b, c=c)

    def diagnostics(self, t: _TargetAcc) -> dict[str, float | None]:
        unsupported = math.fsum(t.unsupported) / t.n if t.n else float("nan")
        if not self.weighted:
            return {"ess": None, "max_weight": None, "mean_weight": None, "clipped": None, "unsupported": unsupported}
        sw, sw2 = math.fsum(self.sw), math.fsum(self.sw2)
        return {"ess": sw * sw / sw2 if sw2 else 0.0, "max_weight": self.max_w,
                "mean_weight": math.fsum(self.raw) / self.n_w if self.n_w else float("nan"),
                "clipped": (self.changed or 0) / self.n_w if self.changed is not None and self.n_w else 0.0,
                "unsupported": unsupported}


@dataclass
class _TargetAcc:
    """One target over the batches: the exact partial sums of its raw weights pi/mu and of its
    unsupported mass (for the warnings and the diagnostics), how it was read."""

    mode: str
    slate_rule: str | None = None
    n: int = 0
    sw: list[float] = field(default_factory=list)
    sw2: list[float] = field(default_factory=list)
    unsupported: list[float] = field(default_factory=list)

    def add(self, d: Aligned, weighted: bool) -> None:
        self.n += d.n
        self.unsupported += _exact(d.unsupported)
        if weighted:
            w = d.pi / d.mu
            self.sw += _exact(w)
            self.sw2 += _exact(w * w)
        if d.slate_rule is not None:
            self.slate_rule = d.slate_rule


def _warn(t: _TargetAcc, name: str) -> None:
    """One RecevalWarning per condition that says the weighted estimates of this target cannot
    be trusted (the standard deviation of the raw weights from their exact sums:
    :math:`s^2 = (\\sum w^2 - (\\sum w)^2/n)/(n-1)`)."""
    n = t.n
    sw, sw2 = math.fsum(t.sw), math.fsum(t.sw2)
    ess = sw * sw / sw2 if sw2 else 0.0
    said = []
    if n >= MIN_ROUNDS and ess < ESS_SHARE * n:
        said.append(f"the effective sample size of target '{name}' is {ess:.4g} of {n} rounds (below {ESS_SHARE:.0%}): "
                    "its weighted estimates rest on a few rounds")
    mean = sw / n
    sd = math.sqrt(max(0.0, math.fsum([*t.sw2, -sw * sw / n]) / (n - 1))) if n > 1 else 0.0
    if n >= MIN_ROUNDS and abs(mean - 1) > MEAN_WEIGHT_GAP and abs(mean - 1) > 3 * sd / math.sqrt(n):
        said.append(f"the mean weight pi/mu of target '{name}' is {mean:.4g}, not about 1: the propensities may be wrong "
                    "or the target may show items the logging policy could not")
    u = math.fsum(t.unsupported) / n
    if u > UNSUPPORTED_MASS:
        said.append(f"target '{name}' puts {u:.3g} of its probability per round on items the log never shows: "
                    "the weighted estimates cannot see them")
    for text in said:
        warnings.warn(text, RecevalWarning, stacklevel=caller_level(3))


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
    correction: str = "holm",
    baseline: str | None = None,
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
    not depend on it (every sum is exactly rounded), only the memory does; a Parquet input is
    scanned, each batch reading only its contexts' rows.

    Several targets: ``correction`` (``holm``, ``bonferroni``, ``bh``, ``none``) corrects the
    p-values of every paired difference together; ``baseline`` (a target's name) compares every
    other target with it instead of every pair. :meth:`OpeResults.compare` gives them to the
    tables, figures and report page of ``receval runs``.

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

    check_options(level=level, resamples=resamples if ci == "bootstrap" else None, seed=seed)
    if slate_size is not None and not (isinstance(slate_size, (int, np.integer)) and not isinstance(slate_size, bool)
                                       and slate_size >= 1):
        raise bad_param("slate_size", "an integer >= 1", slate_size)
    model_needed = [n for s, n in zip(specs, names) if s.estimator.rewards]
    if model_needed and rewards is None:
        raise SpecError(f"pass rewards= / --rewards FILE (a reward model: context_id, item_id, [position], estimate) for {', '.join(model_needed)}")
    cols = OpeColumns(context=context_col, item=item_col, reward=reward_col, propensity=propensity_col, position=position_col,
                      rank=rank_col, score=score_col, estimate=estimate_col)
    log_in = read_log(log, cols)
    positions = log_in.top is not None
    if log_in.top is not None:
        if slate_size is None:
            slate_size = log_in.top
        elif log_in.top > slate_size:
            raise DataError(f"give log positions within the slate (1..{slate_size}): some are up to {log_in.top}")
    model = read_rewards(rewards, cols) if rewards is not None and model_needed else None
    targets = dict(target) if _is_named_targets(target) else {"target": target}
    tnames = [str(t) for t in targets]
    if len(set(tnames)) < len(tnames):
        raise SpecError("give the targets different names")
    if baseline is not None and baseline not in tnames:
        raise SpecError(f"name a baseline among the targets ({', '.join(tnames)}); got {baseline!r}")
    if correction not in CORRECTIONS:
        raise SpecError(f"choose correction= one of {', '.join(CORRECTIONS)}; got {correction!r}")
    tins = {str(k): read_target(v, cols, positions, slate_size) for k, v in targets.items()}
    slates = {s.name for s in specs if s.estimator.level == "slate"}
    weighted = any(s.estimator.weight for s in specs)
    if batches is None:
        batches = max(1, -(-log_in.rows // BATCH_ROWS))
    elif not (isinstance(batches, (int, np.integer)) and not isinstance(batches, bool) and batches >= 1):
        raise bad_param("batches", "an integer >= 1", batches)
    nb = int(batches)
    frames = [log_in.frame, *(t.frame for t in tins.values()), *([model.frame] if model is not None else [])]
    ints = all(f.collect_schema()["c"].is_integer() for f in frames)
    shown = log_in.frame.select("i").unique().collect() if nb > 1 else None
    keys = ["c", "p", "i"] if positions else ["c", "i"]
    taccs = {t: _TargetAcc(tin.mode) for t, tin in tins.items()}
    accs = {(t, n): _Acc() for t in tins for n in names}
    fails: dict[str, dict[str, list[Any]]] = {t: {} for t in tins}
    for bi in range(nb):
        lb = batch(log_in.frame, bi, nb, ints)
        mb = rewards_batch(batch(model.frame, bi, nb, ints)) if model is not None else None
        for tname, tin in tins.items():
            what = "target" if len(tins) == 1 else f"target '{tname}'"
            tb, bad = target_batch(batch(tin.frame, bi, nb, ints), tin.mode, positions, slate_size)
            if lb.height:
                lc, tc = _same_ids(lb.select("c").unique(), tb.select("c").unique(), "c", what)
                bad["missing"] = lc.join(tc, on="c", how="anti")
            failed = fails[tname]
            for kind, rows in bad.items():
                if rows.height:
                    failed.setdefault(kind, [0, rows])[0] += rows.height
            if failed or lb.height == 0:
                continue  # the checks still run on every batch, to count every offender
            d = align(lb, tb, tin.mode, mb, slates=slates, what=what, shown=shown)
            del tb
            taccs[tname].add(d, weighted)
            for spec, name in zip(specs, names):
                accs[(tname, name)].add(spec.estimator.fn(d, spec.opts))
            del d
        del lb, mb
    for tname, failed in fails.items():
        for kind in CONTEXT_CHECKS:
            if kind in failed:
                count, rows = failed[kind]
                what = "target" if len(tins) == 1 else f"target '{tname}'"
                raise refusal(kind, rows, count, what, keys, slate_size if positions and slate_size is not None else 1)
    entries: list[OpeEntry] = []
    parts: dict[tuple[str, str], Parts] = {}
    for tname, tacc in taccs.items():
        if weighted:
            _warn(tacc, tname)
        for spec, name in zip(specs, names):
            acc = accs.pop((tname, name))
            p = acc.parts()
            parts[(tname, name)] = p
            value = _value(p)
            low, high = _interval([p], [1.0], value, ci, level, resamples, seed)
            entries.append(OpeEntry(name, tname, value, low, high, signature(spec, tacc, ci, level, resamples, seed),
                                    len(p.a), _terms(p), acc.diagnostics(tacc)))
    pairs = ([(baseline, t) for t in tnames if t != baseline] if baseline is not None else
             [(a, b) for i, a in enumerate(tnames) for b in tnames[i + 1:]])
    raw: list[tuple[Any, ...]] = []
    for a, b in pairs:
        for name in names:
            pa, pb = parts[(a, name)], parts[(b, name)]
            value = _value(pa) - _value(pb)
            low, high, pv = _difference(pa, pb, value, ci, level, resamples, seed)
            ta = next(e.terms for e in entries if e.estimator == name and e.target == a)
            tb_ = next(e.terms for e in entries if e.estimator == name and e.target == b)
            sig = next(e.signature for e in entries if e.estimator == name and e.target == a)
            raw.append((name, a, b, value, low, high, pv, sig, _effect(ta, tb_), *_wins(ta, tb_)))
    test = "bootstrap" if ci == "bootstrap" else "z"
    adjusted = _adjust([r[6] for r in raw], correction)
    diffs = [OpeDifference(name, a, b, value, low, high, _diff_signature(sig, test, correction, baseline), pv, float(pa),
                           test, correction, eff, w, t_, lo_)
             for (name, a, b, value, low, high, pv, sig, eff, w, t_, lo_), pa in zip(raw, adjusted)]
    return OpeResults(entries, diffs, baseline=baseline)


__all__ = ["evaluate", "OpeResults", "OpeEntry", "OpeDifference", "CI_METHODS"]
