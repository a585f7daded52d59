"""The metric-string grammar and its canonical form.

Grammar (one small hand-written parser)::

    spec    := name [ "(" option ("," option)* ")" ] [ "@" k ]
    option  := key "=" value

``ndcg@10``, ``map(denominator=k)@20``, ``ndcg(gain=exp2, ideal=uncut)@20``, ``auc``.
The canonical form is lower case, options sorted by name, options equal to the metric's
standard default dropped: it is the key of a result and the head of its signature.

>>> from receval.spec import parse_spec
>>> str(parse_spec("NDCG( ideal=uncut , gain=exp2 )@20"))
'ndcg(gain=exp2,ideal=uncut)@20'
>>> str(parse_spec("map(denominator=min_k_r)@20"))   # the default is dropped
'map@20'
>>> str(parse_spec("map@20|den:r|ind:yes|rel:4.5|order:score|ties:input|hitscore:any|dup:error|"
...                "tdup:error|empty:skip|norecs:skip|dialect:ms_recommenders|v:0.1.0"))
'map(denominator=r,norecs=skip,order=score,rel=4.5)@20'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .errors import SpecError

_SPEC_RE = re.compile(
    r"^\s*(?P<name>[a-z_][a-z0-9_]*)\s*(?:\((?P<opts>[^()]*)\))?\s*(?:@\s*(?P<k>[^@\s]+))?\s*$"
)


@dataclass(frozen=True)
class Spec:
    """A metric with its cut-off and its *explicit* options (values already validated).

    ``options`` holds only what the user (or a dialect) set; :meth:`resolved` fills in the
    rest. Two specs are equal when their canonical strings are.
    """

    name: str
    k: int | None = None
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    @property
    def opts(self) -> dict[str, Any]:
        return dict(self.options)

    def with_options(self, **updates: Any) -> Spec:
        merged = self.opts | updates
        return Spec(self.name, self.k, tuple(sorted(merged.items())))

    def with_k(self, k: int | None) -> Spec:
        return Spec(self.name, k, self.options)

    def __str__(self) -> str:
        return self.canonical()

    def canonical(self, base: dict[str, Any] | None = None) -> str:
        """The canonical string; an option is dropped when it equals what ``base`` (a
        dialect's and the call's options) or, failing that, the standard default gives."""
        from .metrics import get_metric

        metric = get_metric(self.name)
        base = base or {}
        shown = []
        for key, value in sorted(self.options):
            axis = metric.axis(key)
            if value == base.get(key, axis.default):
                continue
            shown.append(f"{key}={axis.render(value)}")
        text = self.name
        if shown:
            text += "(" + ",".join(shown) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text


def parse_k(raw: Any) -> int:
    """Validate a cut-off.

    >>> parse_k("20")
    20
    >>> parse_k(0)
    Traceback (most recent call last):
    ...
    receval.errors.SpecError: `k` must be an integer >= 1, got 0
    """
    # the cut-off is shown as written ("got 0", not "got '0'"), whether it came from a spec
    # string or a Python value
    shown = raw.strip() if isinstance(raw, str) else raw
    try:
        value = int(str(raw))
    except ValueError:
        raise SpecError(f"`k` must be an integer >= 1, got {shown}") from None
    if value < 1 or str(raw).strip() not in (str(value), f"+{value}"):
        raise SpecError(f"`k` must be an integer >= 1, got {shown}")
    return value


_MULTI_K = re.compile(r"@\s*\[([^\]]*)\]\s*$")


def expand_ks(metrics: Any) -> list[Any]:
    """Expand metric strings written at several cut-offs, ``name(...)@[5,10,20]``, into one
    string per cut-off (in the order written); other entries pass through.

    >>> expand_ks(["ndcg@[5, 10,20]", "map(denominator=k)@[1,3]", "mrr"])
    ['ndcg@5', 'ndcg@10', 'ndcg@20', 'map(denominator=k)@1', 'map(denominator=k)@3', 'mrr']
    """
    out: list[Any] = []
    for m in metrics:
        match = _MULTI_K.search(m) if isinstance(m, str) and "|" not in m else None
        if match is None:
            out.append(m)
            continue
        ks = [x.strip() for x in match.group(1).split(",")]
        if not ks or any(not x for x in ks):
            raise SpecError(f"cannot read the cut-offs of '{m}'; write them as name@[5,10,20]")
        for x in ks:
            parse_k(x)
        if len(set(ks)) != len(ks):
            raise SpecError(f"a cut-off is repeated in '{m}'")
        out += [m[: match.start()] + "@" + x for x in ks]
    return out


def parse_spec(text: str | Spec) -> Spec:
    """Parse a metric string into a validated :class:`Spec` (see the module grammar)."""
    if isinstance(text, Spec):
        return _checked(text)
    if not isinstance(text, str):
        raise SpecError(f"a metric must be a string like 'ndcg@10', got {text!r}")
    if "|" in text:  # a signature: its fully explicit spec (every option it records)
        return signature_spec(text)[0]
    match = _SPEC_RE.match(text.lower())
    if not match:
        raise SpecError(
            f"cannot parse metric '{text}'; write it as name@k or name(option=value,...)@k, e.g. 'map(denominator=k)@20'"
        )
    from .metrics import get_metric

    metric = get_metric(match["name"])
    options: dict[str, Any] = {}
    if match["opts"] and match["opts"].strip():
        for part in match["opts"].split(","):
            if "=" not in part:
                raise SpecError(f"option '{part.strip()}' in '{text}' must be written as key=value")
            key, value = (s.strip() for s in part.split("=", 1))
            if key in options:
                raise SpecError(f"option `{key}` is given twice in '{text}'")
            options[key] = metric.axis(key).parse(value)
    k = parse_k(match["k"]) if match["k"] is not None else None
    if metric.needs_k and k is None:
        raise SpecError(f"metric '{metric.name}' needs a cut-off: write '{metric.name}@10'")
    if not metric.needs_k and k is not None and not metric.optional_k:
        raise SpecError(f"metric '{metric.name}' takes no cut-off: write '{metric.name}'")
    return Spec(metric.name, k, tuple(sorted(options.items())))


def _checked(spec: Spec) -> Spec:
    """A :class:`Spec` built in Python, validated as its string would be (so its canonical
    form and signature parse back)."""
    from .metrics import get_metric

    if not isinstance(spec.name, str):
        raise SpecError(f"a metric name must be a string like 'ndcg', got {spec.name!r}")
    metric = get_metric(spec.name)
    options: dict[str, Any] = {}
    try:
        pairs = [(str(key), value) for key, value in spec.options]
    except (TypeError, ValueError):
        raise SpecError(f"Spec options must be (name, value) pairs, got {spec.options!r}") from None
    for key, value in pairs:
        if key in options:
            raise SpecError(f"option `{key}` is given twice in {spec!r}")
        options[key] = metric.axis(key).parse(value)
    k = parse_k(spec.k) if spec.k is not None else None
    if metric.needs_k and k is None:
        raise SpecError(f"metric '{metric.name}' needs a cut-off: write '{metric.name}@10'")
    if not metric.needs_k and k is not None and not metric.optional_k:
        raise SpecError(f"metric '{metric.name}' takes no cut-off: write '{metric.name}'")
    return Spec(metric.name, k, tuple(sorted(options.items())))


#: fields a signature carries that are not metric options: information, and the statistics of a comparison
INFO_FIELDS = ("skipped", "test", "corr", "ci", "level", "B", "seed", "userset")


def signature_spec(text: str) -> tuple[Spec, str, str]:
    """A signature's ``(fully explicit spec, dialect, version)``; :func:`receval.parse_signature`."""
    parts = [p for p in text.strip().split("|") if p]
    if not parts:
        raise SpecError("empty signature")
    head = parts[0]
    name, _, k_text = head.partition("@")
    from .metrics import get_metric

    metric = get_metric(name)
    by_key = {axis.key: (axis_name, axis) for axis_name, axis in metric.all_axes().items()}
    options: dict[str, Any] = {}
    dialect, version = "standard", ""
    for part in parts[1:]:
        key, sep, value = part.partition(":")
        if not sep:
            raise SpecError(f"signature field '{part}' must be key:value")
        if key == "dialect":
            dialect = value
        elif key == "v":
            version = value
        elif key in INFO_FIELDS:
            continue
        elif key in by_key:
            axis_name, axis = by_key[key]
            options[axis_name] = axis.parse(value)
        else:
            raise SpecError(f"signature field '{key}' is not an option of '{metric.name}'")
    k = parse_k(k_text) if k_text else None
    return Spec(metric.name, k, tuple(sorted(options.items()))), dialect, version
