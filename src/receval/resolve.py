"""Resolution of a spec: every option it reads, from the spec, the call, the dialect or the default."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from .metrics import get_metric
from .options import BUILD_AXES
from .registry import Metric
from .spec import parse_spec


@dataclass(frozen=True)
class Resolved:
    """A spec with every option it reads resolved, and where the resolution came from."""

    spec: Any  # the user's Spec (canonical key of the result)
    metric: Metric
    k: int | None
    options: dict[str, Any] = field(hash=False)
    dialect: str = "standard"
    #: the result key: the canonical spec, relative to the dialect and call options; another
    #: vocabulary's name as written (``nDCG@10``; :attr:`receval.spec.Spec.label`)
    key: str = ""
    #: where ``order`` came from: "spec", "call", "dialect" or "default" (a dialect's order=score
    #: accepts a rank column when the input has no score: a rank is an order; a dialect's
    #: order=rank_value accepts scores when the input has no rank: ranks from scores descending)
    order_source: str = "default"
    #: ``ties=average`` on a metric (or variant) with no tie-averaged value: computed only where
    #: no tie group reaches into the top k (the order there is settled by the scores), refused
    #: on the data otherwise (:meth:`receval.hits.Hits.check_order_settled`)
    settle: bool = False
    #: ``rel`` was left to the standard dialect's default: decided on the data by
    #: :func:`decide_rel` (``rel:>0`` when the truth has a rating column, ``rel:all`` without)
    rel_auto: bool = False
    #: the axes set by the spec, a call keyword or the dialect (not left at their default): a
    #: choice the user made, which receval never notes (``ties``, ``norecs``)
    chosen: frozenset[str] = frozenset()

    @property
    def per_user(self) -> bool:
        """Whether the metric yields per-user values averaged over users (else one aggregate value)."""
        if self.metric.kind != "global":
            return True
        return self.metric.k_changes_meaning and self.k is not None

    def build_key(self) -> tuple:
        key = tuple((a, self.options.get(a)) for a in BUILD_AXES)
        if self.order_source == "dialect" and self.options.get("order") in ("score", "rank_value"):
            key += (("order_from_dialect", True),)
        return key

    def formula_key(self) -> tuple:
        """Metrics that agree on this key differ only in k and share one computation."""
        return (self.metric.name, self.k is None, tuple(sorted((k, str(v)) for k, v in self.options.items())))


def resolve(spec: Any, *, dialect: Any = None, overrides: dict[str, Any] | None = None) -> Resolved:
    """Fill every axis of ``spec``: explicit > overrides (evaluate keywords) > dialect > default."""
    spec = parse_spec(spec)
    metric = get_metric(spec.name)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    dialect_opts: dict[str, Any] = {}
    dialect_name = "standard"
    k = spec.k
    if dialect is not None:
        dialect_name = dialect.label
        dialect_opts = dialect.options_for(metric.name, k)
    base: dict[str, Any] = dict(dialect_opts)
    for name, axis in metric.all_axes().items():
        if overrides and name in overrides and overrides[name] is not _UNSET:
            base[name] = axis.parse(overrides[name])
        if name in spec.opts:
            values[name], sources[name] = spec.opts[name], "spec"
        elif overrides and name in overrides and overrides[name] is not _UNSET:
            values[name], sources[name] = axis.parse(overrides[name]), "call"
        elif name in dialect_opts:
            values[name], sources[name] = dialect_opts[name], "dialect"
        else:
            values[name], sources[name] = axis.default, "default"
    # a metric whose cut-off is optional (auc / auc@k) may resolve differently with a k
    extra = (k,) if metric.optional_k else ()
    if metric.resolve_hook:
        values = metric.resolve_hook(values, *extra)
    if metric.check_hook:
        metric.check_hook(values, *extra)
    # no tie-averaged value for the metric (or variant): computed where the data settle the
    # order, refused on the data otherwise
    settle = metric.settles(values)
    # the standard dialect's relevance default reads the data (decide_rel); a dialect keeps its library's rule
    rel_auto = sources.get("rel") == "default" and dialect_name == "standard"
    return Resolved(spec=spec, metric=metric, k=k, options=values, dialect=dialect_name, key=spec.label or spec.canonical(base),
                    order_source=sources.get("order", "default"), settle=settle, rel_auto=rel_auto,
                    chosen=frozenset(n for n, src in sources.items() if src != "default"))


#: the standard dialect's relevance threshold when the truth has a rating column and no ``rel``
#: was given: a row is relevant when its rating is > 0 (written ``rel:>0``; trec_eval and
#: ir_measures read qrels so), so a 0 of an implicit 0/1 label is not a hit
REL_POSITIVE = math.nextafter(0.0, math.inf)


def decide_rel(resolved: list[Resolved], has_rating: bool) -> list[Resolved]:
    """The specs whose ``rel`` the standard dialect left to the data, decided: ``rel:>0`` when
    the truth has a rating column, ``rel:all`` (every row relevant) without one. Every engine
    calls it once the truth's columns are known; the signature records the decision.

    >>> from receval.resolve import resolve
    >>> [r.options["rel"] for r in decide_rel([resolve("ndcg@10"), resolve("ndcg(rel=all)@10")], True)]
    [5e-324, None]
    >>> decide_rel([resolve("ndcg@10")], False)[0].options["rel"] is None
    True
    """
    if not has_rating:
        return list(resolved)
    return [replace(r, options={**r.options, "rel": REL_POSITIVE}) if r.rel_auto and "rel" in r.options else r
            for r in resolved]


class _Unset:
    def __repr__(self) -> str:  # pragma: no cover
        return "UNSET"


_UNSET = _Unset()
#: the public name of the "not given" marker of call keywords
UNSET = _UNSET


__all__ = ["Resolved", "resolve", "decide_rel", "REL_POSITIVE", "UNSET"]
