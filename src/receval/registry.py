"""Metric registration, lookup with suggestions, and option resolution.

Each metric is a :class:`Metric`: a name, the axes it reads, a docstring with its exact
formula, and one pure function of the intermediate form (:class:`receval.hits.Hits`) that
returns per-user values for several cut-offs at once (or one value per cut-off for an
aggregate metric). Resolution order for every option: explicit in the spec > keyword given
to :func:`receval.evaluate` > dialect > the metric's standard default.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .errors import SpecError
from .options import CONTEXT_AXES, Axis
from .reduction import KeyedReduction

#: what an aggregate-free metric function returns: per-user values, shape [U, len(ks)]
ComputeFn = Callable[..., np.ndarray]
_Fn = TypeVar("_Fn", bound=Callable[..., Any])

#: how a metric meets ``ties=average`` (its declared ``ties`` trait, see :attr:`Metric.ties`),
#: as the generated reference says it
TIES = {
    "closed": "closed form",
    "topk_set": "defined when no tie group straddles k",
    "settled": "defined when no tie group reaches into the top k",
}


@dataclass
class Metric:
    """A registered metric: its axes, its formula, its compute function."""

    name: str
    compute: ComputeFn
    axes: dict[str, Axis]
    needs_k: bool = True
    optional_k: bool = False
    k_changes_meaning: bool = False  # with a cut-off the metric is another quantity (auc vs auc@k)
    kind: str = "user"  # "user": averaged per-user values; "global": one value per k
    context: tuple[str, ...] = tuple(CONTEXT_AXES)
    needs: frozenset[str] = frozenset()
    family: str = "ranking"
    resolve_hook: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    check_hook: Callable[[dict[str, Any]], None] | None = None
    #: for ``kind="global"`` on the batched backends (Polars, Spark): ``partial(h, ks, o)``
    #: returns picklable sufficient statistics of one batch of users (users are disjoint
    #: between batches; side inputs are whole), ``combine(parts, ks, o)`` the values, one per
    #: k, exactly as ``compute`` on all users would give them. Without the pair a global
    #: metric runs in one batch on Polars and is refused on Spark.
    partial: Callable[..., Any] | None = None
    combine: Callable[..., np.ndarray] | None = None
    #: a per-user metric whose own option may leave a user out of the mean (NaN per-user
    #: value, e.g. ``pauc(insufficient=exclude)``); for every other metric NaN is a value
    skips: bool = False
    #: how the metric meets ``ties=average`` (a key of :data:`TIES`; None for a metric that
    #: does not read the ``ties`` option): "closed", a closed-form expectation over the orderings
    #: of the ties; "topk_set", reads only which items are in the top k, never their positions,
    #: so its value is the same in every ordering unless a tie group straddles k, which
    #: :meth:`receval.hits.Hits.check_topk_settled` refuses; "settled", no tie-averaged value:
    #: computed only where no tie reaches into the top k (:attr:`receval.resolve.Resolved.settle`)
    ties: str | None = None
    #: the variants (option: value) of a "closed" metric that have no tie-averaged value: they
    #: are "settled" (e.g. ``ndcg(ideal=hits)``, whose ideal reads the order of the ties)
    ties_settled: Mapping[str, Any] = field(default_factory=dict)
    #: the direction of the metric: False for errors, inequality and divergence measures
    higher_is_better: bool = True
    #: (lowest, highest) value under the default options (without ``dup=keep`` and
    #: ``ties=optimistic``, which can put more than k items in the top k); None when unbounded
    bounds: tuple[float, float] | None = None
    #: the variants (option: value) whose per-user values are (precision, recall) pairs, shape
    #: [U, len(ks), 2], averaged apart and combined as the F1 of the means (``f1(aggregate=means)``);
    #: every other per-user metric is averaged as it is
    f1_of_means: Mapping[str, Any] = field(default_factory=dict)

    def pairs(self, options: Mapping[str, Any]) -> bool:
        """Whether the metric under ``options`` yields (precision, recall) pairs (F1 of the means)."""
        return bool(self.f1_of_means) and all(options.get(a) == v for a, v in self.f1_of_means.items())

    def settles(self, options: Mapping[str, Any]) -> bool:
        """Whether ``ties=average`` in ``options`` has no tie-averaged value for this metric (or
        variant), so it is computed only where no tie reaches into the top k."""
        if options.get("ties") != "average" or "ties" not in self.context:
            return False
        return self.ties == "settled" or any(options.get(a) == v for a, v in self.ties_settled.items())

    def ties_label(self) -> str:
        """``ties=average`` for this metric in a few words (the generated reference's table)."""
        if self.ties is None:
            return "does not read `ties`"
        text = TIES[self.ties]
        if self.ties_settled:
            but = ", ".join(f"`{self.name}({a}={v})`" for a, v in self.ties_settled.items())
            text += f"; {but}: {TIES['settled']}"
        return text
    #: a global metric whose partial is keyed rows a distributed backend must not gather
    #: (the stacked AUC): how that backend reduces them (:mod:`receval.reduction`)
    distributed: KeyedReduction | None = None
    #: the side inputs (names of :data:`receval.signature.SIDE_INPUTS`) a value may be computed
    #: from: a set, or ``rule(options, given)`` returning the set (None: none, with these options);
    #: the signature's ``side`` field lists those among the given ones (:func:`receval.signature.side_reads`)
    side: frozenset[str] | Callable[[dict[str, Any], frozenset[str]], set[str] | None] | None = None

    def side_reads(self, options: dict[str, Any], given: frozenset[str]) -> set[str] | None:
        """The side inputs this metric with ``options`` reads when ``given`` are passed (None: none)."""
        if self.side is None:
            return None
        return set(self.side) if isinstance(self.side, frozenset) else self.side(options, given)

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.compute) or ""

    @property
    def summary(self) -> str:
        return self.doc.splitlines()[0] if self.doc else self.name

    def axis(self, key: str) -> Axis:
        if key in self.axes:
            return self.axes[key]
        if key in self.context:
            return CONTEXT_AXES[key]
        raise SpecError(
            f"metric '{self.name}' has no option `{key}`"
            + _options_hint(key, [*self.axes, *self.context])
        )

    def all_axes(self) -> dict[str, Axis]:
        return {**self.axes, **{c: CONTEXT_AXES[c] for c in self.context}}

    def formula(self) -> str:
        """The formula section of the docstring (between 'Formula' and the next section)."""
        return _section(self.doc, "Formula")


def _options_hint(key: str, choices: list[str]) -> str:
    from .errors import did_you_mean

    return did_you_mean(key, choices)


def _section(doc: str, title: str) -> str:
    lines = doc.splitlines()
    out: list[str] = []
    inside = False
    for i, line in enumerate(lines):
        if line.strip() == title and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            inside = True
            continue
        if inside:
            if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"} and line.strip():
                break
            if set(line.strip()) == {"-"} and line.strip():
                continue
            out.append(line)
    return textwrap.dedent("\n".join(out)).strip()


_REGISTRY: dict[str, Metric] = {}


def _settled(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn(h, ks, o)`` preceded by the check that the top-k sets are settled by the scores."""

    @functools.wraps(fn)
    def run(h: Any, ks: list[int], o: dict[str, Any]) -> Any:
        h.check_topk_settled(ks, name)
        return fn(h, ks, o)

    return run


def _from_parts(doc: Callable[..., Any], partial: Callable[..., Any], combine: Callable[..., np.ndarray]) -> ComputeFn:
    """The ``compute`` of a global metric given as ``partial`` and ``combine``: the values of
    one batch holding every user, ``combine([partial(h, ks, o)], ks, o)``; named and
    documented by ``doc``."""

    @functools.wraps(doc)
    def compute(h: Any, ks: list[int], o: dict[str, Any]) -> np.ndarray:
        return combine([partial(h, ks, o)], ks, o)

    return compute


def _check_traits(name: str, context: tuple[str, ...], ties: str | None, bounds: tuple[float, float] | None) -> None:
    if ("ties" in context) != (ties is not None) or ties is not None and ties not in TIES:
        raise ValueError(
            f"metric '{name}': declare ties= one of {', '.join(TIES)} (how it meets ties=average) "
            "exactly when it reads the `ties` option"
        )
    if bounds is not None and not (len(bounds) == 2 and bounds[0] < bounds[1]):
        raise ValueError(f"metric '{name}': bounds must be (lowest, highest) with lowest < highest, got {bounds!r}")


def register(
    name: str,
    *,
    axes: list[Axis] | None = None,
    needs_k: bool = True,
    optional_k: bool = False,
    k_changes_meaning: bool = False,
    kind: str = "user",
    context: tuple[str, ...] | None = None,
    needs: set[str] | frozenset[str] = frozenset(),
    family: str = "ranking",
    resolve_hook: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    check_hook: Callable[[dict[str, Any]], None] | None = None,
    partial: Callable[..., Any] | None = None,
    combine: Callable[..., np.ndarray] | None = None,
    skips: bool = False,
    ties: str | None = None,
    ties_settled: Mapping[str, Any] | None = None,
    higher_is_better: bool = True,
    bounds: tuple[float, float] | None = None,
    f1_of_means: Mapping[str, Any] | None = None,
    distributed: KeyedReduction | None = None,
    side: set[str] | frozenset[str] | Callable[[dict[str, Any], frozenset[str]], set[str] | None] | None = None,
) -> Callable[[_Fn], _Fn]:
    """Register ``fn`` as metric ``name`` (a decorator), with its declared traits: ``ties`` (a
    key of :data:`TIES`, for a metric reading the ``ties`` option), ``ties_settled``,
    ``higher_is_better``, ``bounds``, ``f1_of_means``, ``distributed`` and ``side`` (see :class:`Metric`).

    A global metric given as ``partial`` and ``combine`` may decorate its documentation alone
    (a function whose body is its docstring): its ``compute`` is then the one-batch
    ``combine([partial(h, ks, o)], ks, o)``.

    >>> from receval.registry import register, registered
    >>> @register("demo_total", kind="global", context=(), partial=lambda h, ks, o: len(h),
    ...           combine=lambda parts, ks, o: np.full(len(ks), float(sum(parts))), bounds=(0.0, float("inf")))
    ... def demo_total(h, ks, o):
    ...     "Total: how many rows (a demonstration)."
    >>> m = registered().pop("demo_total")
    >>> m.compute([1, 2, 3], [1, 2], {}).tolist(), m.summary
    ([3.0, 3.0], 'Total: how many rows (a demonstration).')
    """
    ctx = tuple(CONTEXT_AXES) if context is None else context
    _check_traits(name, ctx, ties, bounds)
    topk_set = ties == "topk_set"

    def deco(fn: _Fn) -> _Fn:
        compute: ComputeFn = fn
        if partial is not None and combine is not None and _documents_only(fn):
            compute = _from_parts(fn, partial, combine)
        _REGISTRY[name] = Metric(
            name=name,
            compute=_settled(compute, name) if topk_set else compute,
            axes={a.name: a for a in (axes or [])},
            needs_k=needs_k,
            optional_k=optional_k,
            k_changes_meaning=k_changes_meaning,
            kind=kind,
            context=ctx,
            needs=frozenset(needs),
            family=family,
            resolve_hook=resolve_hook,
            check_hook=check_hook,
            partial=_settled(partial, name) if (topk_set and partial) else partial,
            combine=combine,
            skips=skips,
            ties=ties,
            ties_settled=dict(ties_settled or {}),
            higher_is_better=higher_is_better,
            bounds=bounds,
            f1_of_means=dict(f1_of_means or {}),
            distributed=distributed,
            side=frozenset(side) if isinstance(side, (set, frozenset)) else side,
        )
        return fn

    return deco


def _documentation(h: Any, ks: list[int], o: dict[str, Any]) -> Any:
    """A function whose body is its docstring."""


def _documents_only(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s body is its docstring alone (a global metric's documentation)."""
    code = getattr(fn, "__code__", None)
    return code is not None and bool(fn.__doc__) and code.co_code == _documentation.__code__.co_code


def registered() -> dict[str, Metric]:
    """The registered metrics by name (:mod:`receval.metrics` registers them on import)."""
    return _REGISTRY
