"""Metric registration, lookup with suggestions, and option resolution.

Each metric is a :class:`Metric`: a name, the axes it reads, a docstring with its exact
formula, and one pure function of the intermediate form (:class:`receval.hits.Hits`) that
returns per-user values for several cut-offs at once (or one value per cut-off for an
aggregate metric). Resolution order for every option: explicit in the spec > keyword given
to :func:`receval.evaluate` > dialect > the metric's standard default.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import SpecError
from .options import CONTEXT_AXES, Axis
from .reduction import KeyedReduction

#: what an aggregate-free metric function returns: per-user values, shape [U, len(ks)]
ComputeFn = Callable[..., np.ndarray]


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
    #: reads only which items are in the top k, never their positions (coverage, novelty, ...):
    #: under ``ties=average`` its value is the same in every ordering of the ties unless a tie
    #: group straddles k, which :meth:`receval.hits.Hits.check_topk_settled` refuses
    topk_set: bool = False
    #: a global metric whose partial is keyed rows a distributed backend must not gather
    #: (the stacked AUC): how that backend reduces them (:mod:`receval.reduction`)
    distributed: KeyedReduction | None = None

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
    import functools

    @functools.wraps(fn)
    def run(h: Any, ks: list[int], o: dict[str, Any]) -> Any:
        h.check_topk_settled(ks, name)
        return fn(h, ks, o)

    return run


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
    topk_set: bool = False,
    distributed: KeyedReduction | None = None,
) -> Callable[[ComputeFn], ComputeFn]:
    """Register ``fn`` as metric ``name`` (a decorator)."""

    def deco(fn: ComputeFn) -> ComputeFn:
        _REGISTRY[name] = Metric(
            name=name,
            compute=_settled(fn, name) if topk_set else fn,
            axes={a.name: a for a in (axes or [])},
            needs_k=needs_k,
            optional_k=optional_k,
            k_changes_meaning=k_changes_meaning,
            kind=kind,
            context=tuple(CONTEXT_AXES) if context is None else context,
            needs=frozenset(needs),
            family=family,
            resolve_hook=resolve_hook,
            check_hook=check_hook,
            partial=_settled(partial, name) if (topk_set and partial) else partial,
            combine=combine,
            skips=skips,
            topk_set=topk_set,
            distributed=distributed,
        )
        return fn

    return deco


def registered() -> dict[str, Metric]:
    """The registered metrics by name (:mod:`receval.metrics` registers them on import)."""
    return _REGISTRY
