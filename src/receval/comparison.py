"""The comparison of several runs: the data every table and figure renders.

:mod:`receval.stats` fills a :class:`Comparison` from per-user values aligned across runs
(:func:`receval.stats.compare`); :mod:`receval.tables` and :mod:`receval.figures` render it.
Nothing here computes: these are the containers both sides agree on.

Keys: a *run* is the name the user gave (``"ease"``), a *metric* the canonical spec string
(``"ndcg@10"``; the same metric at several k appears as ``"ndcg@5"``, ``"ndcg@10"``, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from collections.abc import Callable
from typing import Any

from .jsonread import load_json
from .report import text_table


@dataclass(frozen=True)
class Interval:
    """A confidence interval ``[low, high]`` at ``level`` (e.g. 0.95) by ``method``
    (``"percentile"``, ``"bca"``, ``"t"``, ``"poisson-percentile"``...)."""

    low: float
    high: float
    method: str
    level: float


@dataclass(frozen=True)
class PairTest:
    """One paired comparison of run ``a`` against run ``b`` on ``metric`` over the same users.

    ``diff`` is mean(a − b) over the users; ``p`` the raw p-value of ``test``; ``p_adjusted``
    the p-value after ``correction`` across the table's family (``"none"``: equal to ``p``);
    ``effect`` the effect size named by ``effect_name`` (e.g. ``"cohen_dz"``, mean difference
    over the standard deviation of the differences; NaN where undefined); ``wins``/``ties``/
    ``losses`` count users with a − b > 0, = 0, < 0; ``ci`` the interval of mean(a − b);
    ``note`` why the test is not available (``p`` NaN, never significant), e.g. fewer than two
    paired users."""

    metric: str
    a: str
    b: str
    diff: float
    p: float
    p_adjusted: float
    test: str
    correction: str
    effect: float
    effect_name: str
    wins: int
    ties: int
    losses: int
    ci: Interval | None = None
    note: str | None = None

    def reversed(self) -> PairTest:
        """The same test read as ``b`` against ``a``: the difference, its interval and the effect
        change sign, wins and losses swap; the p-values stay.

        >>> t = PairTest("m", "a", "b", 0.25, 0.01, 0.02, "t", "holm", 1.5, "cohen_dz", 3, 1, 0,
        ...              Interval(0.125, 0.375, "t", 0.95))
        >>> r = t.reversed()
        >>> (r.a, r.b, r.diff, r.effect, r.wins, r.losses, r.ci.low, r.ci.high, r.p_adjusted)
        ('b', 'a', -0.25, -1.5, 0, 3, -0.375, -0.125, 0.02)
        """
        ci = None if self.ci is None else Interval(0.0 - self.ci.high, 0.0 - self.ci.low, self.ci.method, self.ci.level)
        return replace(self, a=self.b, b=self.a, diff=0.0 - self.diff, effect=0.0 - self.effect,
                       wins=self.losses, losses=self.wins, ci=ci)


@dataclass
class Comparison:
    """Runs x metrics with intervals and paired tests.

    ``values[(run, metric)]`` the mean over the declared user set, ``intervals[(run, metric)]``
    its CI (absent when not asked for), ``pairs`` the paired tests (against ``baseline`` when
    given, else all pairs), ``higher_is_better[metric]`` the direction (False for errors such
    as RMSE), ``signatures[metric]`` the metric's value signature extended with the statistics'
    keys (test, correction, resamples, seed, CI method and level, user set), ``users`` the
    number of users of every value, interval and test: the *paired* users, those on which every
    run has a value on every metric; ``dropped`` the users of the declared set left out because
    some run has no value for them (e.g. a user without a relevant item under ``empty=skip``);
    ``per_user[run]`` the per-user values of the paired users (``user_id`` plus one column per
    metric; None on Spark); ``with_recs[run]`` (users with recommendations, truth users); ``family`` the number of paired tests corrected together when the
    family is larger than ``pairs`` (a table of :mod:`receval.segments`), else None."""

    runs: list[str]
    metrics: list[str]
    values: dict[tuple[str, str], float]
    higher_is_better: dict[str, bool]
    signatures: dict[str, str]
    users: int
    intervals: dict[tuple[str, str], Interval] = field(default_factory=dict)
    pairs: list[PairTest] = field(default_factory=list)
    baseline: str | None = None
    per_user: dict[str, Any] | None = None
    dropped: int = 0
    family: int | None = None  # the paired tests corrected together when more than this table's (receval.segments)
    #: per run, (truth users with recommendations, truth users): a partial run's missing users
    #: score 0 under ``norecs=zero`` (:func:`receval.runs.evaluate_runs`); empty when not known
    with_recs: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: what ``users`` counts: ``"users"``, or ``"rounds"`` (the logged rounds of :mod:`receval.ope`)
    unit: str = "users"

    def pair(self, metric: str, a: str, b: str) -> PairTest:
        """The test of ``a`` against ``b`` on ``metric``, read as a − b whichever order it was
        stored in (:meth:`PairTest.reversed`)."""
        for t in self.pairs:
            if t.metric == metric and (t.a, t.b) == (a, b):
                return t
        for t in self.pairs:
            if t.metric == metric and (t.a, t.b) == (b, a):
                return t.reversed()
        raise KeyError(f"no paired test of {a} and {b} on {metric}")

    def best(self, metric: str) -> list[str]:
        """The run(s) with the best value on ``metric`` (several when tied)."""
        vals = {r: self.values[(r, metric)] for r in self.runs if (r, metric) in self.values}
        if not vals:
            return []
        top = (max if self.higher_is_better.get(metric, True) else min)(vals.values())
        return [r for r, v in vals.items() if v == top]

    def __repr__(self) -> str:
        tests = sorted({t.test for t in self.pairs})
        corrections = sorted({t.correction for t in self.pairs})
        stats = (f"; {', '.join(tests)} test, {', '.join(corrections)} correction, {len(self.pairs)} paired tests"
                 if self.pairs else "; no paired tests")
        head = f"Comparison: {len(self.runs)} runs x {len(self.metrics)} metrics on {self.users} paired users{stats}"
        best = {m: set(self.best(m)) for m in self.metrics}
        rows = [[r, *(_fmt(self.values.get((r, m))) + ("*" if r in best[m] else "") for m in self.metrics)]
                for r in self.runs]
        return "\n".join([head, *text_table(["run", *self.metrics], rows), "* the best value per metric"])

    def _repr_html_(self) -> str | None:
        """The notebook display: the table of :func:`receval.tables.render_table` (best values
        in bold, significance letters, intervals), its legend, each metric's signature as its
        header's tooltip (and whole in a ``<details>`` element) and the paired tests. Drawn by
        the renderer that :mod:`receval.tables` registers when it is loaded (the data class does
        not import its renderer); None (the text form) before."""
        return _HTML_DISPLAY[0](self) if _HTML_DISPLAY else None


#: the notebook display of a :class:`Comparison` (:func:`register_html_display`)
_HTML_DISPLAY: list[Callable[[Comparison], str]] = []


def register_html_display(render: Callable[[Comparison], str]) -> None:
    """Set the function that draws a :class:`Comparison` in a notebook (``_repr_html_``):
    :mod:`receval.tables` registers its own when it is loaded, as pandas' plotting backends do."""
    _HTML_DISPLAY[:] = [render]


def _fmt(v: float | None, digits: int = 4) -> str:
    return "–" if v is None or v != v else f"{v:.{digits}f}"


__all__ = ["Interval", "PairTest", "Comparison"]


def read_json(text: str) -> Comparison:
    """The :class:`Comparison` a ``"json"`` table holds (per-user values are not kept)."""
    doc = load_json(text, "the table's JSON")

    def interval(d: dict[str, Any] | None) -> Interval | None:
        return None if d is None else Interval(_f(d["low"]), _f(d["high"]), d["method"], d["level"])

    values = {(v["run"], v["metric"]): _f(v["value"]) for v in doc["values"]}
    intervals = {(v["run"], v["metric"]): iv for v in doc["values"] if (iv := interval(v["ci"])) is not None}
    pairs = []
    for p in doc["pairs"]:
        kw = {k: p[k] for k in ("metric", "a", "b", "test", "correction", "effect_name", "wins", "ties", "losses")}
        pairs.append(PairTest(diff=_f(p["diff"]), p=_f(p["p"]), p_adjusted=_f(p["p_adjusted"]),
                              effect=_f(p["effect"]), ci=interval(p["ci"]), **kw))
    return Comparison(doc["runs"], doc["metrics"], values, dict(doc["higher_is_better"]), dict(doc["signatures"]),
                      doc["users"], intervals, pairs, doc["baseline"])


def _f(v: float | None) -> float:
    return math.nan if v is None else float(v)

