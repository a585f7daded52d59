"""sacreBLEU-style signatures: every resolved option that can change a value, in a fixed order.

``ndcg@20|gain:binary|ideal:cut|rel:4.5|order:score|ties:input|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:0.1.0``

The head is the metric with its cut-off; then ``key:value`` for each axis the metric reads
(its own axes in declaration order, then the context axes), the dialect that supplied the
defaults, and the receval version last. Informational fields (``skipped:N``, the number of
truth users without relevant items left out of the mean) are ignored when parsing.
:func:`parse_signature` returns the fully explicit spec, so evaluating it reproduces the value.
"""

from __future__ import annotations

from typing import Any

from .metrics import get_metric
from .resolve import Resolved
from .spec import Spec, signature_spec

def _fields(metric_name: str, options: dict[str, Any]) -> list[tuple[str, str]]:
    metric = get_metric(metric_name)
    out = []
    for name, axis in metric.all_axes().items():
        value = options.get(name, axis.default)
        if value is None and not axis.numeric:
            continue
        if name == "t" and value is None:
            continue
        out.append((axis.key, axis.render(value)))
    return out


def make_signature(r: Resolved, version: str, *, order: str | None = None, skipped: int = 0) -> str:
    options = dict(r.options)
    if order is not None and "order" in options:
        options["order"] = order
    head = r.metric.name + (f"@{r.k}" if r.k is not None else "")
    parts = [head] + [f"{k}:{v}" for k, v in _fields(r.metric.name, options)]
    if skipped:
        parts.append(f"skipped:{skipped}")
    parts += [f"dialect:{r.dialect}", f"v:{version}"]
    return "|".join(parts)


def parse_signature(text: str) -> tuple[Spec, str, str]:
    """Parse a signature into ``(explicit spec, dialect, version)``.

    >>> from receval.signature import parse_signature
    >>> spec, dialect, version = parse_signature(
    ...     "map@20|den:r|ind:yes|rel:4.5|order:score|ties:input|hitscore:any|dup:error|tdup:error|"
    ...     "empty:skip|norecs:skip|dialect:ms_recommenders|v:0.1.0")
    >>> str(spec), dialect
    ('map(denominator=r,norecs=skip,order=score,rel=4.5)@20', 'ms_recommenders')
    """
    return signature_spec(text)
