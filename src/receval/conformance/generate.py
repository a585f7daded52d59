"""The conformance suite's inputs, generated deterministically: scenarios and specs.

A *scenario* is one small data set chosen for an edge where implementations differ (ties,
lists shorter than k, k beyond the catalogue, a user with no relevant item or no
recommendation, duplicates, graded and negative gains, a single user, one item), with the
side inputs every metric may read. A *plan* is one case before its expectation: a metric, a
spec (every option value of the metric's axes is varied one at a time from the standard
definition, and the context options where the scenario makes them matter), a dialect or
none, a scenario and a cut-off.

The expectations are not computed here: ``tests/conformance_build.py`` runs every plan
through receval and through the slow reference of the test tree, keeps the plans whose
expectation has an honest source (the reference agrees, or the arithmetic of
:mod:`receval.conformance.arithmetic` checks by hand) and writes ``suite.json`` next to this
module. The plans are a pure function of the registry and the dialect files: the test
``tests/test_conformance.py`` checks that the shipped suite holds exactly the plans kept.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from ..metrics import get_metric
from ..engine import dialect_of
from ..errors import RecevalError
from ..resolve import resolve
from ..spec import parse_spec
from ..dialects import all_dialects
from ..metrics import all_metrics
from .scenario import CATEGORIES, TRAIN, Scenario
from .scenarios_pop import SCENARIOS_POP
from .scenarios_rank import RANK_SCENARIOS



SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario(
        "basic",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u1", "i4", .6),
         ("u2", "i3", .9), ("u2", "i5", .5), ("u2", "i1", .4), ("u2", "i6", .3),
         ("u3", "i2", .8), ("u3", "i7", .6), ("u3", "i8", .2)],
        [("u1", "i1", 5), ("u1", "i3", 3), ("u1", "i5", 1), ("u2", "i1", 4), ("u2", "i6", 2),
         ("u3", "i9", 5), ("u3", "i8", 3), ("u3", "i2", 1)],
        (1, 3), ("graded",), why="three users, graded ratings, lists of 3 and 4",
    ),
    Scenario(
        "ties",
        [("u1", "i1", .9), ("u1", "i2", .5), ("u1", "i3", .5), ("u1", "i4", .5), ("u1", "i5", .1),
         ("u2", "i4", .7), ("u2", "i2", .7), ("u2", "i6", .3)],
        [("u1", "i3", 2), ("u1", "i5", 1), ("u2", "i2", 3), ("u2", "i6", 1)],
        (2,), ("ties",), why="equal scores across the cut-off; the rank column is the row order",
    ),
    Scenario(
        "short_list",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u2", "i3", .5)],
        [("u1", "i2", 1), ("u1", "i4", 1), ("u1", "i5", 1), ("u1", "i6", 1), ("u1", "i7", 1), ("u1", "i8", 1),
         ("u2", "i3", 2), ("u2", "i1", 1)],
        (5,), ("short_list",), why="lists of 2 and 1 items read at k=5; one user has more relevant items than k",
    ),
    Scenario(
        "k_beyond_catalog",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u2", "i3", .6), ("u2", "i1", .2)],
        [("u1", "i2", 1), ("u2", "i1", 1), ("u2", "i2", 1)],
        (10,), ("k_beyond_catalog", "short_list"), catalog=("i1", "i2", "i3"),
        why="a catalogue of 3 items read at k=10",
    ),
    Scenario(
        "no_relevant",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u2", "i4", .6), ("u2", "i5", .5)],
        [("u1", "i2", 1), ("u1", "i3", 0), ("u2", "i4", 0), ("u2", "i6", 0)],
        (3,), ("no_relevant",), extra={"rel": ">0"},
        why="rating 0 is not relevant (rel='>0'): u2 has no relevant item",
    ),
    Scenario(
        "no_recs",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7)],
        [("u1", "i1", 1), ("u1", "i3", 2), ("u2", "i4", 1)],
        (3,), ("no_recs",), why="u2 has a relevant item and no recommendation",
    ),
    Scenario(
        "duplicates",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i1", .7), ("u1", "i3", .6),
         ("u2", "i4", .9), ("u2", "i4", .8), ("u2", "i5", .7)],
        [("u1", "i1", 1), ("u1", "i3", 1), ("u2", "i4", 2), ("u2", "i6", 1)],
        (3,), ("duplicates",), why="the same item recommended twice to a user",
    ),
    Scenario(
        "truth_duplicates",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u2", "i2", .9), ("u2", "i4", .8)],
        [("u1", "i1", 1), ("u1", "i1", 1), ("u1", "i3", 2), ("u2", "i4", 1), ("u2", "i5", 1), ("u2", "i5", 1)],
        (3,), ("truth_duplicates", "duplicates"), why="the same (user, item) twice in the truth",
    ),
    Scenario(
        "negative_gains",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u1", "i4", .6), ("u2", "i5", .9), ("u2", "i6", .8)],
        [("u1", "i1", -1), ("u1", "i2", 2), ("u1", "i4", 1), ("u2", "i6", -2), ("u2", "i5", 1), ("u2", "i7", 3)],
        (3,), ("negative_gains", "graded"), why="negative ratings (every truth row relevant)",
    ),
    Scenario(
        "single_user",
        [("u1", "i3", .9), ("u1", "i1", .8), ("u1", "i2", .7)],
        [("u1", "i1", 2), ("u1", "i2", 1)],
        (2,), ("single_user",), why="one user",
    ),
    Scenario(
        "one_item",
        [("u1", "i1", .5)],
        [("u1", "i1", 1)],
        (1, 3), ("one_item", "single_user"), catalog=("i1",), why="a catalogue of one item",
    ),
    # issue 35: inputs that tell the definitions apart (fractional ratings, orderings, ties at the
    # cut-off, scores <= 0, disagreeing truth duplicates, lists shorter and longer than k)
    Scenario(
        "orderings",
        [("u1", "i1", .8, 3), ("u1", "i2", .9, 1), ("u1", "i3", .3, 4), ("u1", "i4", .6, 2),
         ("u2", "i5", .4, 1), ("u2", "i6", .4, 2), ("u2", "i2", .9, 3)],
        [("u1", "i1", 2.5), ("u1", "i3", .5), ("u1", "i5", 1), ("u2", "i6", 1.5), ("u2", "i7", .25)],
        (2, 3), ("orderings", "ties", "fractional"),
        why="the rank column, the scores and the row order list u1's items three ways; "
            "u2's rank column puts its best score last and two scores tie",
    ),
    Scenario(
        "ties_at_k",
        [("u1", "i1", .9), ("u1", "i3", .5), ("u1", "i2", .5), ("u1", "i4", .5), ("u1", "i5", .1),
         ("u2", "i8", .8), ("u2", "i7", .8), ("u2", "i6", .2)],
        [("u1", "i2", 2), ("u1", "i4", .5), ("u1", "i6", 1), ("u2", "i7", 1), ("u2", "i6", 3)],
        (1, 2), ("ties", "fractional"),
        why="a tie group across position 2 whose members are irrelevant (input), relevant rated 2 (item) and "
            "rated 0.5 (item_desc); u2's two tied items lead its list",
    ),
    Scenario(
        "fractional",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u1", "i4", .6), ("u1", "i5", .5), ("u1", "i6", .4),
         ("u2", "i3", .9), ("u2", "i7", .3),
         ("u3", "i8", .9), ("u3", "i2", .7), ("u3", "i5", .6), ("u3", "i9", .2)],
        [("u1", "i2", .5), ("u1", "i4", 2.5), ("u1", "i6", 1), ("u1", "i9", 3.5), ("u2", "i7", .25), ("u2", "i1", 1),
         ("u3", "i5", 0), ("u3", "i8", -.5), ("u3", "i2", .75), ("u4", "i1", 2)],
        (3, 5), ("fractional", "graded", "short_list", "long_list", "no_recs"),
        why="fractional ratings (rel=1, rel>0 and every row differ), a list of 6 and one of 2 read at k=3 and 5, "
            "a rating 0 and a negative one, a user without recommendations",
    ),
    Scenario(
        "low_scores",
        [("u1", "i1", .5), ("u1", "i2", 0.0), ("u1", "i3", -.2), ("u2", "i4", -1.0), ("u2", "i5", -2.0)],
        [("u1", "i2", 1), ("u1", "i3", 2), ("u1", "i4", 1), ("u2", "i5", 1), ("u2", "i6", 1)],
        (3,), ("low_scores",), why="relevant items recommended with a score of 0 and below",
    ),
    Scenario(
        "truth_conflicts",
        [("u1", "i2", .9), ("u1", "i1", .8), ("u1", "i3", .7), ("u2", "i4", .9), ("u2", "i5", .5)],
        [("u1", "i1", 1), ("u1", "i1", 3), ("u1", "i2", 2), ("u1", "i2", 2), ("u1", "i4", 1), ("u2", "i5", .5),
         ("u2", "i5", 2)],
        (2,), ("truth_duplicates", "duplicates"), why="repeated truth rows that disagree on the rating",
    ),
    Scenario(
        "long_lists",
        [("u1", "i1", .9), ("u1", "i2", .8), ("u1", "i3", .7), ("u1", "i4", .6), ("u1", "i5", .5), ("u1", "i6", .4),
         ("u1", "i7", .3), ("u2", "i7", .9), ("u2", "i6", .8), ("u2", "i5", .7), ("u2", "i1", .6), ("u2", "i9", .5),
         ("u3", "i2", .9), ("u3", "i4", .8), ("u3", "i6", .7), ("u3", "i8", .6), ("u3", "i1", .5)],
        [("u1", "i5", 1), ("u1", "i7", 2), ("u2", "i7", 1), ("u2", "i1", 1), ("u2", "i2", 2), ("u3", "i1", 3),
         ("u3", "i8", 1), ("u3", "i3", 1)],
        (2, 4), ("long_list",), catalog=("i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9"),
        why="lists of 7, 5 and 5 read at k=2 and 4, the first hit of u1 beyond k, a catalogue of 9 items",
    ),
    Scenario(
        "duplicates_at_k",
        [("u1", "i1", .9), ("u1", "i1", .8), ("u1", "i2", .7), ("u1", "i3", .6),
         ("u2", "i4", .9), ("u2", "i5", .8), ("u2", "i5", .7), ("u2", "i6", .6)],
        [("u1", "i2", 1), ("u1", "i3", 2), ("u2", "i6", 1), ("u2", "i5", .5)],
        (2, 3), ("duplicates",), why="a repeated irrelevant item pushes u1's first hit past k=2 when every row is a position",
    ),
]}
SCENARIOS.update({s.name: s for s in SCENARIOS_POP})  # the popularity metrics' (scenarios_pop.py)

SCENARIOS.update({s.name: s for s in RANK_SCENARIOS})  # the other metrics' (scenarios_rank.py)

#: sample values of the numeric options (the standard default is always kept)
NUMERIC_SAMPLES: dict[str, list[Any]] = {
    "base": [10.0, math.e], "persistence": [0.5, 0.95], "alpha": [0.3], "beta": [0.5], "rmax": [2.0],
    "gmax": [5.0], "cut": [0.5], "refk": [2.0], "maxfpr": [0.5], "t": [],
}

#: option sets outside the one-at-a-time variation (an option that needs another)
EXTRA_OPTIONS: dict[str, list[dict[str, str]]] = {
    "rbp": [{"gain": "rating", "persistence": "0.8"}],
    "err": [{"grade": "rating", "gmax": "5"}],
    "ndcg": [{"gain": "linear", "neg": "zero"}, {"gain": "exp2", "ideal": "uncut"}],
    "map": [{"denominator": "r", "indicator": "no"}, {"denominator": "k", "indicator": "no"}],
    **{m: [{"split": "count", "cut": "2"}] for m in ("aplt", "aclt", "popreo", "poprsp")},
    # ties=average (the default of order=score) where the denominator reads the order: defined only
    # where the top k is settled (novelty), or a position term over a tie group (serendipity)
    "novelty": [{"unknown": "skip", "order": "score"}, {"denominator": "k", "order": "score"}],
    "serendipity": [{"denominator": "k", "order": "score"}],
    "bias_disparity": [{"ugroup": "a"}, {"ugroup": "b", "of": "bs"}],  # a cell of one user group (user_groups)
}

#: options a metric's every plan carries: a required option without a default (bias disparity names one cell)
REQUIRED_OPTIONS: dict[str, dict[str, str]] = {"bias_disparity": {"icat": "g1"}}

#: context options varied on the scenario that makes them matter
CONTEXT_BY_TAG: dict[str, list[dict[str, str]]] = {
    "ties": [{"order": "score", "ties": t} for t in ("input", "item", "item_desc", "optimistic", "average")],
    "no_relevant": [{"empty": "zero"}, {"empty": "error"}],
    "no_recs": [{"norecs": "skip"}, {"norecs": "error"}],
    "duplicates": [{"dup": "first"}, {"dup": "keep"}],
    "truth_duplicates": [{"tdup": "first"}, {"tdup": "keep"}, {"tdup": "max"}],
    "fractional": [{"rel": "all"}, {"rel": "1"}],
    "orderings": [{"order": o} for o in ("score", "rank", "rank_value", "input")],
    "low_scores": [{"hitscore": "positive"}],
}


@dataclass(frozen=True)
class Plan:
    """One case before its expectation."""

    metric: str
    spec: str  # canonical
    k: int | None
    scenario: str
    dialect: str | None = None
    tags: tuple[str, ...] = ()


def _render(options: dict[str, Any]) -> str:
    return ",".join(f"{a}={v}" for a, v in options.items())


def metric_variants(name: str) -> list[dict[str, str]]:
    """The option sets of one metric: the standard definition, then every value of every axis
    one at a time (numeric axes: :data:`NUMERIC_SAMPLES`), then :data:`EXTRA_OPTIONS`."""

    m = get_metric(name)
    out: list[dict[str, str]] = [{}]
    for axis in m.axes.values():
        if axis.free:
            continue
        if axis.numeric:
            values = [axis.render(v) for v in NUMERIC_SAMPLES.get(axis.name, []) if v != axis.default]
        else:
            values = [v for v in axis.values if v != axis.default]
        out.extend({axis.name: v} for v in values)
    out.extend(EXTRA_OPTIONS.get(name, []))
    return out


def _spec(metric: str, options: dict[str, str], k: int | None, dialect: str | None = None) -> str | None:
    """The canonical spec, or None when the options do not resolve (an option that needs another)."""

    text = metric + (f"({_render(options)})" if options else "") + (f"@{k}" if k is not None else "")
    try:
        resolve(text, dialect=dialect_of(dialect))
        return str(parse_spec(text))
    except RecevalError:
        return None


def _ks(metric: Any, scenario: Scenario) -> list[int | None]:
    if not metric.needs_k and not metric.optional_k:
        return [None]
    ks: list[int | None] = list(scenario.ks)
    if metric.optional_k and not metric.k_changes_meaning:
        ks.append(None)
    return ks


def planned(sc: Scenario, metric: str) -> bool:
    """Whether ``metric`` is planned on ``sc`` (a scenario may name the metrics it is for)."""
    return sc.metrics is None or metric in sc.metrics


def plans() -> Iterator[Plan]:
    """Every plan, in a fixed order: per metric, per scenario, per cut-off, per option set;
    then per dialect, per metric it offers, per scenario, per cut-off."""

    seen: set[tuple[str, str, str | None]] = set()

    def emit(metric: Any, options: dict[str, str], sc: Scenario, k: int | None, dialect: str | None,
             tags: tuple[str, ...]) -> Iterator[Plan]:
        opts = {**REQUIRED_OPTIONS.get(metric.name, {}), **options, **{a: v for a, v in sc.extra.items() if a not in options}}
        spec = _spec(metric.name, opts, k, dialect)
        if spec is None or (spec, sc.name, dialect) in seen:
            return
        seen.add((spec, sc.name, dialect))
        yield Plan(metric.name, spec, k, sc.name, dialect, tuple(dict.fromkeys(sc.tags + tags)))

    for m in all_metrics():
        for sc in SCENARIOS.values():
            if not planned(sc, m.name):
                continue
            for k in _ks(m, sc):
                for opts in metric_variants(m.name):
                    yield from emit(m, opts, sc, k, None, ())
                for tag in sc.tags:
                    for ctx in CONTEXT_BY_TAG.get(tag, []):
                        if all(a in m.context for a in ctx):
                            yield from emit(m, ctx, sc, k, None, ())
    for d in all_dialects():
        if d.name == "standard":
            continue
        for entry_name in d.metrics:
            name = entry_name.removesuffix("@k")
            try:
                m = next(x for x in all_metrics() if x.name == name)
            except StopIteration:
                continue
            for sc in SCENARIOS.values():
                if not planned(sc, m.name):
                    continue
                for k in _ks(m, sc):
                    if d.entry_name(name, k) != entry_name:
                        continue
                    yield from emit(m, {}, sc, k, d.label, ("dialect",))


__all__ = ["Scenario", "SCENARIOS", "Plan", "plans", "planned", "metric_variants", "TRAIN", "CATEGORIES"]
