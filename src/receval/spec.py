"""The metric-string grammar and its canonical form.

Grammar (one small hand-written parser)::

    spec    := name [ "(" option ("," option)* ")" ] [ "@" k ]
    option  := key "=" value

``ndcg@10``, ``map(denominator=k)@20``, ``ndcg(gain=exp2, ideal=uncut)@20``, ``auc``.
Measure names of ir_measures and trec_eval (``P@10``, ``AP``, ``nDCG@10``, ``P_10``,
``ndcg_cut_10``, ...; :data:`receval.registry.ALIASES`, case-sensitive) resolve to the receval
metric with the trec_eval dialect's options written into the spec (:func:`alias_spec`).
The canonical form is lower case, options sorted by name, options equal to the metric's
standard default dropped: it is the key of a result and the head of its signature.

>>> from receval.spec import parse_spec
>>> str(parse_spec("NDCG( ideal=uncut , gain=exp2 )@20"))
'ndcg(gain=exp2,ideal=uncut)@20'
>>> str(parse_spec("map(denominator=min_k_r)@20"))   # the default is dropped
'map@20'
>>> str(parse_spec("map@20|den:r|ind:yes|rel:4.5|order:score|ties:item|hitscore:any|dup:error|"
...                "tdup:error|empty:skip|norecs:skip|dialect:ms_recommenders|v:0.1.0"))
'map(denominator=r,norecs=skip,order=score,rel=4.5,ties=item)@20'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .dialects import load_dialect
from .errors import SignatureError, SpecError, note
from .metrics import get_metric
from .registry import ALIAS_CASES, CASE_COLLISIONS, COLLISION_PARAMS, TREC_DIFFERS, TREC_OURS, WHOLE_LIST, WHOLE_REFUSED, alias_named, possessive

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
    #: another vocabulary's name as written (``nDCG@10``): the key of its result; None for
    #: receval's own names (keyed by the canonical form). Not part of the spec's identity
    label: str | None = field(default=None, compare=False, repr=False)

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
        metric = get_metric(self.name)
        base = base or {}
        implied = WHOLE_LIST.get(metric.name, {}) if self.k == WHOLE_RANKING else {}
        shown = []
        for key, value in sorted(self.options):
            axis = metric.axis(key)
            if key not in base and key in implied and value == axis.parse(implied[key]):
                continue  # what the whole list means (precision@all: ÷ the list length)
            if value == base.get(key, axis.default):
                continue
            shown.append(f"{key}={axis.render(value)}")
        text = self.name
        if shown:
            text += "(" + ",".join(shown) + ")"
        if self.k is not None:
            text += "@" + render_k(self.k)
        return text


#: the cut-off of a list metric written without one (``mrr``, ``ndcg``, ``AP``): each user's
#: whole list, written ``@all`` in specs and signatures. Past any list, so the value is that of
#: the whole list and the cost that of the lists (a cut-off past the longest list costs nothing)
WHOLE_RANKING = 2**31 - 1
#: how the whole list is written after the ``@``
ALL = "all"


def render_k(k: int) -> str:
    """A cut-off as written in a spec or a signature: ``10``, or ``all`` for the whole list.

    >>> render_k(10), render_k(WHOLE_RANKING)
    ('10', 'all')
    """
    return ALL if k == WHOLE_RANKING else str(k)


def parse_k(raw: Any) -> int:
    """Validate a cut-off.

    >>> parse_k("20"), parse_k("all") == WHOLE_RANKING
    (20, True)
    >>> parse_k(0)
    Traceback (most recent call last):
    ...
    receval.errors.SpecError: `k` must be an integer >= 1, got 0
    """
    # the cut-off is shown as written ("got 0", not "got '0'"), whether it came from a spec
    # string or a Python value
    shown = raw.strip() if isinstance(raw, str) else raw
    if isinstance(raw, str) and raw.strip().lower() == ALL:
        return WHOLE_RANKING
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


def spec_list(metrics: Any) -> list[Any]:
    """The metric specs of one call: one string (or spec) or an iterable of them, each written
    at several cut-offs expanded (:func:`expand_ks`); none is an error.

    >>> spec_list("ndcg@[5,10]")
    ['ndcg@5', 'ndcg@10']
    """
    if metrics is None:
        raise SpecError("no metric given; pass at least one, e.g. 'ndcg@10'")
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        metrics = list(metrics)
    except TypeError:
        raise SpecError(f"metrics must be a metric string or a list of them, got {type(metrics).__name__}") from None
    if not metrics:
        raise SpecError("no metric given; pass at least one, e.g. 'ndcg@10'")
    return expand_ks(metrics)  # name@[5,10,20]: one spec per cut-off


def parse_spec(text: str | Spec) -> Spec:
    """Parse a metric string into a validated :class:`Spec` (see the module grammar).

    A string with ``|`` is a signature (:func:`signature_spec`): its head is parsed by this
    grammar and its fields are options, with the same checks.
    """
    if isinstance(text, Spec):
        return _checked(text)
    if not isinstance(text, str):
        raise SpecError(f"a metric must be a string like 'ndcg@10', got {text!r}")
    if "|" in text:  # a signature: its fully explicit spec (every option it records)
        return signature_spec(text)[0]
    aliased = alias_spec(text)
    if aliased is not None:
        return aliased
    name, options, k = split_spec(text)
    return _build(name, options, k, text)


# ---- names of the IR ecosystem (:data:`receval.registry.ALIASES`) ----------------------------

_ALIAS_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_\-]*)\s*(?:\((?P<opts>[^()]*)\))?\s*(?:@\s*(?P<k>[^@\s]+))?\s*$"
)

def _alias_options(text: str, raw: str | None, params: Any) -> list[tuple[str, str, str]]:
    """The options written in an alias's parentheses, the tool's parameter names translated
    (``p`` -> ``persistence``); other keys are receval's options of the metric."""
    options: list[tuple[str, str, str]] = []
    if raw and raw.strip():
        for part in raw.split(","):
            if "=" not in part:
                raise SpecError(f"option '{part.strip()}' in '{text.strip()}' must be written as key=value")
            key, value = (x.strip() for x in part.split("=", 1))
            options.append((params.get(key, key.lower()), key, value))
    return options


def alias_spec(text: str) -> Spec | None:
    """The spec an ir_measures / trec_eval measure name resolves to, or None when ``text`` is
    not written with one (:data:`receval.registry.ALIASES`; the case of the name matters).

    The spec carries every option of the trec_eval dialect explicitly (ir_measures' names mean
    trec_eval's definitions), so the value and its signature are trec_eval's whatever dialect
    the call names; options written in the parentheses win (``P(rel=2)@10``).

    >>> str(alias_spec("P@10"))
    'precision(empty=zero,norecs=skip,order=score,rel=1,ties=text_desc)@10'
    >>> str(alias_spec("ndcg_cut_10")), alias_spec("ndcg@10")
    ('ndcg(empty=zero,gain=linear,norecs=skip,order=score,rel=1,ties=text_desc)@10', None)
    """
    match = _ALIAS_RE.match(text)
    if not match:
        return None
    name, k_raw = match["name"], match["k"]
    if name in COLLISION_PARAMS:  # a receval name written in another tool's case: its parameters translate
        return _build(name.lower(), _alias_options(text, match["opts"], COLLISION_PARAMS[name]), k_raw, text)
    found = alias_named(name)
    if found is None:
        return None
    alias, name_k = found
    shown = text.strip()
    if name_k is not None and k_raw is not None:
        raise SpecError(f"'{shown}': {name} carries its cut-off ({name_k}); drop the '@{k_raw}'")
    if alias.cut in ("none", "whole") and k_raw is not None:
        raise SpecError(f"'{shown}': {name} takes no cut-off: write '{name}'")
    if alias.cut == "needs" and k_raw is None and name_k is None:
        raise SpecError(f"'{shown}': {name} needs a cut-off: write '{name}@10'")
    k: int | None = name_k if name_k is not None else (parse_k(k_raw) if k_raw is not None else None)
    if k is None and alias.cut in ("optional", "whole"):
        k = WHOLE_RANKING
    written = _alias_options(text, match["opts"], alias.params)
    base: dict[str, Any] = {}
    if alias.dialect is not None:
        base = load_dialect(alias.dialect).options_for(alias.metric, k)
    ours = {key for key, _, _ in written}
    given: list[tuple[str, str, Any]] = [(key, key, value) for key, value in sorted(base.items()) if key not in ours]
    built = _build(alias.metric, given + written, k, text)
    return Spec(built.name, built.k, built.options, label=alias_label(text))


def alias_label(text: str) -> str:
    """Another vocabulary's name as its result is keyed: as written, without spaces.

    >>> alias_label(" nDCG @ 10 ")
    'nDCG@10'
    """
    return re.sub(r"\s+", "", text)


def alias_announcement(text: str) -> str | None:
    """The one line a name of another vocabulary announces itself with when evaluated (what it
    resolves to, and how receval's own name differs), or None for receval's own names.

    >>> alias_announcement("nDCG@10")
    "nDCG@10 is ir_measures' name for trec_eval's ndcg_cut_10 (graded gains, rating >= 1 relevant); receval's ndcg@10 has binary gains"
    >>> alias_announcement("NDCG@10") is None
    True
    """
    if not isinstance(text, str) or "|" in text:
        return None
    match = _ALIAS_RE.match(text)
    found = alias_named(match["name"]) if match else None
    if match is None or found is None:
        return None
    alias, name_k = found
    spec = alias_spec(text)
    assert spec is not None
    label = alias_label(text)
    own = Spec(spec.name, spec.k)
    who = possessive(alias.tool) + " name for"
    if alias.dialect is None:  # another name of receval's own definition
        return f"{label} is {who} receval's {spec.canonical()}"
    k = spec.k
    whole = k is None or k == WHOLE_RANKING
    measure = alias.whole if whole else alias.measure.format(k=k)
    differs, ours = alias.differs, alias.ours
    if whole and "min(k" in ours:  # over the whole list min(k, |R|) is |R|: only trec_eval's conventions differ
        differs, ours = TREC_DIFFERS, TREC_OURS
    if alias.tool == "trec_eval":
        return f"{label} is trec_eval's measure ({differs}); receval's {own} {ours}"
    return f"{label} is {who} trec_eval's {measure} ({differs}); receval's {own} {ours}"


def announce(metrics: Any) -> None:
    """Say once, in one line each (:func:`receval.errors.note`), what every name of another
    vocabulary among the metrics of one call resolves to; receval's own names say nothing."""
    said: set[str] = set()
    for m in spec_list(metrics):
        line = alias_announcement(m) if isinstance(m, str) else None
        if line is not None and line not in said:
            said.add(line)
            note(line)


def alias_note(text: str) -> str | None:
    """One or two lines saying what an alias means (``receval explain P@10``), or what another
    tool means by a receval name written in its case (``NDCG``), or None."""
    if not isinstance(text, str) or "|" in text:
        return None
    match = _ALIAS_RE.match(text)
    if not match:
        return None
    name = match["name"]
    found = alias_named(name)
    if found is not None:
        alias, _ = found
        tools = "ir_measures/trec_eval" if alias.tool.startswith("ir_measures") else alias.tool
        line = f"{text.strip()} is {possessive(tools)} name; it means {alias.means}"
        if alias.dialect is not None:
            base = load_dialect(alias.dialect).options_for(alias.metric, WHOLE_RANKING)

            axis = get_metric(alias.metric).axis
            shown = ", ".join(f"{key}={axis(key).render(value)}" for key, value in sorted(base.items()))
            line += f", with the options of the {alias.dialect} dialect ({shown})"
        if alias.cut == "optional" and match["k"] is None:
            line += f"; without a cut-off it is the whole ranking (written @{ALL})"
        if name in ALIAS_CASES:
            line += f". {ALIAS_CASES[name]}"
        return line + "."
    if name in CASE_COLLISIONS:
        return f"{name} is receval's {name.lower()} (metric names are read in any case); {CASE_COLLISIONS[name]}."
    return None


def split_spec(text: str) -> tuple[str, list[tuple[str, str, str]], str | None]:
    """``(name, [(option, option as written, raw value)], raw k or None)`` of a spec string."""
    match = _SPEC_RE.match(text.lower())
    if not match and text.strip().endswith("@") and _SPEC_RE.match(text.lower().strip()[:-1]):
        bare = text.strip()[:-1].strip()
        metric = get_metric(bare.split("(")[0].strip().lower())
        if not metric.needs_k and not metric.optional_k:
            raise SpecError(f"metric '{text.strip()}' has an '@' without a cut-off, and '{metric.name}' takes none: write '{bare}'")
        raise SpecError(f"metric '{text.strip()}' has an '@' without a cut-off: write the cut-off after it, e.g. '{bare}@10'")
    if not match:
        raise SpecError(
            f"cannot parse metric '{text}'; write it as name@k or name(option=value,...)@k, e.g. 'map(denominator=k)@20'"
        )
    options: list[tuple[str, str, str]] = []
    if match["opts"] and match["opts"].strip():
        for part in match["opts"].split(","):
            if "=" not in part:
                raise SpecError(f"option '{part.strip()}' in '{text}' must be written as key=value")
            key, value = (s.strip() for s in part.split("=", 1))
            options.append((key, key, value))
    return match["name"], options, match["k"]


def _build(name: str, options: list[tuple[str, str, Any]], k_raw: Any, text: str, sig: str | None = None) -> Spec:
    """The checks every spec passes, written as a spec string or as a signature (``sig``, its
    label): each option once, each value valid, a cut-off exactly when the metric takes one."""
    metric = get_metric(name)
    parsed: dict[str, Any] = {}
    written: dict[str, Any] = {}
    for key, shown, raw in options:
        if key in parsed:
            if sig is None:
                raise SpecError(f"option `{key}` is given twice in '{text}'")
            raise SignatureError(
                f"signature '{sig}' gives `{shown}` twice ({written[key]}, {raw}): keep the value it was computed with "
                "(copy the signature whole, as printed)"
            )
        if isinstance(raw, str) and not raw.strip():
            if sig is None:
                raise SpecError(f"option `{key}` in '{text}' has no value: write {key}=<value>, e.g. {key}={metric.axis(key).render(metric.axis(key).default)}")
            raise SignatureError(f"signature '{sig}' has no value for `{shown}`: copy the signature whole, as printed")
        parsed[key] = metric.axis(key).parse(raw)
        written[key] = raw
    k = parse_k(k_raw) if k_raw is not None else None
    if metric.needs_k and k is None and sig is None and metric.name in WHOLE_LIST:
        k = WHOLE_RANKING  # a list metric without a cut-off: each user's whole list (@all)
    if k == WHOLE_RANKING:
        _check_whole(metric, parsed, text)
    if metric.needs_k and k is None:
        if sig is None:
            raise SpecError(f"write '{metric.name}@10': {metric.name} needs a cut-off (it has no single whole-list meaning)")
        raise SignatureError(
            f"signature '{sig}': metric '{metric.name}' needs a cut-off: start the signature with the cut-off "
            f"it was computed at, e.g. '{metric.name}@10|'"
        )
    if not metric.needs_k and k is not None and not metric.optional_k:
        if sig is None:
            raise SpecError(f"metric '{metric.name}' takes no cut-off: write '{metric.name}'")
        raise SignatureError(f"signature '{sig}': metric '{metric.name}' takes no cut-off: start the signature with '{metric.name}|'")
    return Spec(metric.name, k, tuple(sorted(parsed.items())))


def _check_whole(metric: Any, parsed: dict[str, Any], text: str) -> None:
    """A spec over each user's whole list (``@all``): the options that reading implies are
    filled in (:data:`receval.registry.WHOLE_LIST`), a metric or option value with no single
    whole-list meaning is refused with the fix."""
    name = metric.name
    if name not in WHOLE_LIST:
        if metric.optional_k:
            raise SpecError(f"write '{name}' for the whole list: {name} without a cut-off is read over the whole list")
        raise SpecError(f"write '{name}@10': {name} needs a cut-off (it has no single whole-list meaning)")
    for key, value in WHOLE_LIST[name].items():
        parsed.setdefault(key, metric.axis(key).parse(value))
    if name in WHOLE_REFUSED:
        key, bad = WHOLE_REFUSED[name]
        if parsed.get(key, metric.axis(key).default) == metric.axis(key).parse(bad):
            raise SpecError(f"write a cut-off ('{name}({key}={bad})@10') or drop {key}={bad}: over the whole list "
                            f"{name} has no k to divide by")


def _checked(spec: Spec) -> Spec:
    """A :class:`Spec` built in Python, validated as its string would be (so its canonical
    form and signature parse back)."""
    if not isinstance(spec.name, str):
        raise SpecError(f"a metric name must be a string like 'ndcg', got {spec.name!r}")
    try:
        pairs = [(str(key), value) for key, value in spec.options]
    except (TypeError, ValueError):
        raise SpecError(f"Spec options must be (name, value) pairs, got {spec.options!r}") from None
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise SpecError(f"option `{key}` is given twice in {spec!r}")
        seen.add(key)
    return _build(spec.name, [(key, key, value) for key, value in pairs], spec.k, repr(spec))


# ---- the signature grammar -----------------------------------------------------------------
#
#     signature := head ("|" field)*        head := a spec string (``ndcg@10``)
#     field     := key ":" value
#
# The one place a signature is split and joined: :func:`signature_text` writes one (or a run
# of its fields), :func:`signature_head` / :func:`signature_fields` read one as written, and
# :func:`signature_spec` reads one strictly, as a spec.

#: the separator of a signature's fields, and of a field's key and value
SIG_SEP, FIELD_SEP = "|", ":"


def signature_text(*parts: str | tuple[str, Any]) -> str:
    """A signature, or a run of its fields: a ``str`` part as written (a head, or fields
    already joined), a ``(key, value)`` pair as ``key:value``.

    >>> signature_text("ndcg@10", ("gain", "binary"), "dialect:standard", ("v", "0.1.0"))
    'ndcg@10|gain:binary|dialect:standard|v:0.1.0'
    >>> signature_text(("test", "t"), ("B", 1000))
    'test:t|B:1000'
    """
    return SIG_SEP.join(p if isinstance(p, str) else f"{p[0]}{FIELD_SEP}{p[1]}" for p in parts)


def signature_head(signature: str) -> str:
    """The head of a signature as written (its metric and cut-off).

    >>> signature_head("ndcg@10|gain:binary|v:0.1.0")
    'ndcg@10'
    """
    return signature.split(SIG_SEP)[0]


def signature_fields(signature: str) -> dict[str, str]:
    """The ``key:value`` fields of a signature as written, without checks (the head, e.g.
    ``ndcg@10``, is left out; a part without ``:`` is skipped; a later field wins).

    >>> signature_fields("ndcg@10|gain:binary|test:t|B:1000")
    {'gain': 'binary', 'test': 't', 'B': '1000'}
    """
    out = {}
    for part in signature.split(SIG_SEP)[1:]:
        key, sep, value = part.partition(FIELD_SEP)
        if sep:
            out[key] = value
    return out


#: fields a signature carries that are not metric options: information (``skipped``, the side
#: inputs read, ``side``), and the statistics of a comparison
INFO_FIELDS = ("skipped", "side", "test", "corr", "ci", "level", "B", "seed", "userset", "paired", "dropped", "segments",
               "segment")


def signature_spec(text: str) -> tuple[Spec, str, str]:
    """A signature's ``(fully explicit spec, dialect, version)``; :func:`receval.parse_signature`.

    One grammar with :func:`parse_spec`: the head (``ndcg@10``) is a spec string, each
    ``key:value`` field one of its options (under the option's short key), and the spec is
    checked as a spec is: a cut-off exactly when the metric takes one, every field once
    (``dialect``, ``v`` and the informational fields too), no empty field or value. Fields
    are read like a spec, in any case and with spaces around ``|`` and ``:``.
    """
    if not isinstance(text, str):
        raise SpecError(f"a signature must be a string, got {text!r}")
    parts = [p.strip() for p in text.strip().split(SIG_SEP)]
    if not any(parts):
        raise SpecError("empty signature: pass the signature whole, as printed (e.g. 'ndcg@10|gain:binary|...|v:0.1.0')")
    head = parts[0]
    label = (head or "") + "|…"
    try:
        return _signature_spec(parts, label, text)
    except SignatureError:  # names the signature already
        raise
    except SpecError as exc:
        raise SignatureError(f"signature '{label}': {exc}") from None


def _signature_spec(parts: list[str], label: str, text: str) -> tuple[Spec, str, str]:
    if not parts[0]:
        raise SpecError("it has no head: start it with the metric, e.g. 'ndcg@10|'")
    name, options, k = split_spec(parts[0])
    metric = get_metric(name)
    by_key = {axis.key.lower(): axis_name for axis_name, axis in metric.all_axes().items()}
    info = {f.lower() for f in INFO_FIELDS}
    dialect, version = "standard", ""
    seen: dict[str, str] = {}
    for n, part in enumerate(parts[1:], start=2):
        if not part:
            raise SpecError(f"field {n} is an empty field ('||' or a '|' at an end): copy the signature whole, as printed")
        key, sep, value = (s.strip() for s in part.partition(FIELD_SEP))
        key = key.lower()
        if not sep:
            raise SpecError(f"field '{part}' must be key:value (e.g. 'rel:4'): copy the signature whole, as printed")
        if key in by_key:
            options.append((by_key[key], key, value.lower()))
            continue
        if key not in ("dialect", "v") and key not in info:
            raise SpecError(
                f"field '{key}' is not an option of '{metric.name}'; its options are: {', '.join(sorted(by_key))}"
            )
        if key in seen:
            raise SignatureError(f"signature '{label}' gives `{key}` twice ({seen[key]}, {value}): copy the signature whole, as printed")
        if not value:
            raise SignatureError(f"signature '{label}' has no value for `{key}`: copy the signature whole, as printed")
        seen[key] = value
        if key == "dialect":
            dialect = value.lower()
        elif key == "v":
            version = value
    return _build(name, options, k, text, sig=label), dialect, version
