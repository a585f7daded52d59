"""sacreBLEU-style signatures: every resolved option that can change a value, in a fixed order.

``ndcg@20|gain:binary|ideal:cut|rel:4.5|order:score|ties:input|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:0.1.0``

The head is the metric with its cut-off; then ``key:value`` for each axis the metric reads
(its own axes in declaration order, then the context axes), the dialect that supplied the
defaults, and the receval version last. Informational fields (``skipped:N``, the number of
truth users without relevant items left out of the mean; ``side:train+catalog``, the side
inputs a metric's value was computed from, see :func:`side_reads`) are ignored when parsing.
:func:`parse_signature` returns the fully explicit spec, so evaluating it reproduces the value.
"""

from __future__ import annotations

from typing import Any

from .metrics import get_metric
from .registry import registered
from .resolve import Resolved
from .spec import Spec, render_k, signature_spec, signature_text

def _fields(metric_name: str, options: dict[str, Any]) -> list[tuple[str, str]]:
    metric = get_metric(metric_name)
    out = []
    for name, axis in metric.all_axes().items():
        value = options.get(name, axis.default)
        if value is None and not axis.numeric:
            continue
        if name == "t" and value is None:
            continue
        if axis.silent and value == axis.default:
            continue
        out.append((axis.key, axis.render(value)))
    return out


# ---- side inputs ----------------------------------------------------------------------------
#
# A metric that reads a side input of :func:`receval.evaluate` carries ``side:<inputs>``: the
# side inputs its value was computed from, ``+``-joined in SIDE_INPUTS order, or ``side:none``
# when it could have read one and none was given (coverage@20 over the items of the
# recommendations and the truth). A side input the metric does not read never appears, so
# passing it changes neither the value nor the signature; metrics that read none carry no
# ``side`` field. Like ``skipped``, the field is information: parsing ignores it (the side
# inputs are data, not options), and evaluating the parsed spec with other side inputs gives
# another ``side`` field.

#: the side inputs of :func:`receval.evaluate`, in the order a ``side`` field lists them
SIDE_INPUTS = ("categories", "train", "catalog", "baseline", "item_groups", "user_groups")
#: the key of :attr:`Resolved.options` that holds the side inputs given to the call (set by :func:`note_side`)
SIDE_KEY = "_side"


def side_reads(metric_name: str, options: dict[str, Any], given: Any) -> tuple[str, ...] | None:
    """The side inputs among ``given`` (names of :data:`SIDE_INPUTS`) that the value of
    ``metric_name`` with ``options`` is computed from, in :data:`SIDE_INPUTS` order; None when
    the metric (with these options) reads no side input.

    >>> side_reads("coverage", {"denominator": "catalog"}, {"train", "categories"})
    ('train',)
    >>> side_reads("coverage", {"denominator": "catalog"}, set())
    ()
    >>> side_reads("ndcg", {}, {"train"}) is None
    True
    """
    metric = registered().get(metric_name)
    given = frozenset(given)
    reads = metric.side_reads(options, given) if metric is not None else None
    if reads is None:
        return None
    return tuple(name for name in SIDE_INPUTS if name in reads and name in given)


def side_field(r: Resolved) -> str | None:
    """``side:<inputs>`` of a resolved spec marked by :func:`note_side`, else None."""
    given = r.options.get(SIDE_KEY)
    if given is None:
        return None
    reads = side_reads(r.metric.name, r.options, given)
    if reads is None:
        return None
    return signature_text(("side", "+".join(reads) if reads else "none"))


def note_side(resolved: list[Resolved], side: Any) -> list[Resolved]:
    """The resolved specs, each carrying the names of the side inputs given to the call (a
    :class:`receval.side.SideInputs`, or None), so that its signature names those it read."""
    import dataclasses

    given = tuple(n for n in SIDE_INPUTS if side is not None and getattr(side, n, None) is not None)
    return [dataclasses.replace(r, options={**r.options, SIDE_KEY: given}) for r in resolved]


def make_signature(r: Resolved, version: str, *, order: str | None = None, skipped: int = 0) -> str:
    options = dict(r.options)
    if order is not None and "order" in options:
        options["order"] = order
    head = r.metric.name + ("@" + render_k(r.k) if r.k is not None else "")
    parts: list[str | tuple[str, Any]] = [head, *_fields(r.metric.name, options)]
    side = side_field(r)
    if side is not None:
        parts.append(side)
    if skipped:
        parts.append(("skipped", skipped))
    parts += [("dialect", r.dialect), ("v", version)]
    return signature_text(*parts)


def parse_signature(text: str) -> tuple[Spec, str, str]:
    """Parse a signature into ``(explicit spec, dialect, version)``.

    >>> from receval.signature import parse_signature
    >>> spec, dialect, version = parse_signature(
    ...     "map@20|den:r|ind:yes|rel:4.5|order:score|ties:item|hitscore:any|dup:error|tdup:error|"
    ...     "empty:skip|norecs:skip|dialect:ms_recommenders|v:0.1.0")
    >>> str(spec), dialect
    ('map(denominator=r,norecs=skip,order=score,rel=4.5,ties=item)@20', 'ms_recommenders')

    The head is a metric spec and the fields are its options, checked as a spec is checked
    (:func:`receval.spec.signature_spec`): a signature that lost its ``@k`` or repeats a
    field is refused with the fix.

    >>> parse_signature("ndcg|gain:binary|rel:4|dialect:standard|v:0.1.0")
    Traceback (most recent call last):
    ...
    receval.errors.SignatureError: signature 'ndcg|…': metric 'ndcg' needs a cut-off: start the signature with the cut-off it was computed at, e.g. 'ndcg@10|'
    """
    return signature_spec(text)
