"""Dialects: how a given library (and version) computes each metric, as data.

A dialect is one TOML file per library and version in this folder, named
``<name>@<version>.toml``. Its fields::

    name = "recbole"              # the dialect name users type
    library = "RecBole"
    version = "0.2.1"
    default = true                # the version `recbole` means: the newest verified one
    study = true                  # the version the RecSys'21 study ran (`receval reproduce` pins it)
    source = "RUCAIBox/RecBole: recbole/evaluator/metrics.py"
    note = "one line"

    [context]                     # context options for every metric of this library
    norecs = "skip"

    [metrics.map]                 # one table per metric the library offers
    options = { denominator = "min_k_r" }
    source = "recbole/evaluator/metrics.py:126"
    note = "one line per quirk"

Resolution for every option: explicit in the spec > keyword of ``evaluate`` > dialect >
default. A metric the library does not offer is an error that names the ones it has. Formulas
never ask which dialect is active: a library's bug is a named option value.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import MetricMissing, SpecError, unknown
from ..metrics import get_metric


@dataclass(frozen=True)
class MetricEntry:
    options: dict[str, Any]
    source: str = ""
    note: str = ""
    metric: str | None = None  # the receval metric this library's name maps to (default: same name)


@dataclass(frozen=True)
class Dialect:
    name: str
    library: str
    version: str
    source: str
    note: str
    context: dict[str, Any]
    metrics: dict[str, MetricEntry] = field(default_factory=dict)
    #: the version the unversioned name means (the newest verified version of the library)
    default: bool = False
    #: the version the RecSys'21 study ran (``receval reproduce`` names it explicitly)
    study: bool = False

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}" if self.name != "standard" else "standard"

    def entry_name(self, metric: str, k: int | None = None) -> str:
        """The table of this dialect that defines ``metric`` (at cut-off ``k``).

        A metric whose cut-off is optional may mean something else with one: ``auc`` is the
        AUC over full rankings, ``auc@k`` the AUC inside the top-k list (RePlay ``RocAuc@k``).
        Such a dialect lists ``[metrics."auc@k"]`` separately; for ``auc@k`` the plain ``auc``
        table is not used. Other optional-cut-off metrics fall back to their plain table.
        """
        m = get_metric(metric)
        if k is not None and m.optional_k:
            at_k = f"{metric}@k"
            if at_k in self.metrics or m.k_changes_meaning:
                return at_k
        return metric

    def options_for(self, metric: str, k: int | None = None) -> dict[str, Any]:
        """Parsed options this dialect sets for ``metric`` at cut-off ``k`` (context options included)."""
        name = self.entry_name(metric, k)
        if self.name != "standard" and name not in self.metrics:
            raise MetricMissing(
                f"{self.library} {self.version} has no metric '{name}'; it has: {', '.join(sorted(self.metrics))}"
            )
        m = get_metric(metric)
        out: dict[str, Any] = {}
        raw = dict(self.context)
        if name in self.metrics:
            raw.update(self.metrics[name].options)
        for key, value in raw.items():
            if key in m.axes or key in m.context:
                out[key] = m.axis(key).parse(value) if isinstance(value, str) else value
        return out

    def differences(self, metric: str, k: int | None = None) -> list[tuple[str, Any, Any, str]]:
        """(option, standard default, dialect value, meaning) for each option the dialect changes."""
        m = get_metric(metric)
        out = []
        for key, value in self.options_for(metric, k).items():
            axis = m.axis(key)
            if value != axis.default:
                meaning = axis.values.get(str(value), axis.doc) if axis.values else axis.doc
                out.append((key, axis.default, value, meaning))
        return out


def _parse(data: dict[str, Any]) -> Dialect:
    metrics = {
        name: MetricEntry(
            options=dict(entry.get("options", {})),
            source=entry.get("source", ""),
            note=entry.get("note", ""),
        )
        for name, entry in data.get("metrics", {}).items()
    }
    return Dialect(
        name=data["name"],
        library=data.get("library", data["name"]),
        version=str(data.get("version", "")),
        source=data.get("source", ""),
        note=data.get("note", ""),
        context=dict(data.get("context", {})),
        metrics=metrics,
        default=bool(data.get("default", False)),
        study=bool(data.get("study", False)),
    )


@lru_cache(maxsize=1)
def all_dialects() -> tuple[Dialect, ...]:
    """Every dialect shipped with receval (each library version is one entry)."""
    out = []
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            out.append(_parse(tomllib.loads(entry.read_text(encoding="utf-8"))))
    return tuple(out)


def dialect_names() -> list[str]:
    return sorted({d.name for d in all_dialects()})


def load_dialect(name: str) -> Dialect:
    """``"recbole"`` (its default version: the newest verified one), ``"recbole@0.2.1"`` (a
    version), ``"daisyrec@2.3"`` (the leading dotted components of exactly one shipped version).

    Versions are compared component by component, never as text: ``replay@0.2`` is not
    ``0.22.0`` and ``ms_recommenders@2`` is not ``2021.2.9``. A version equal to a shipped one
    is that one; otherwise the given components must be the leading components of exactly one
    shipped version of the library (``daisyrec@2.3`` is 2.3.0, ``recbole@1.2`` is 1.2.1, the
    only 1.2.x shipped); a version that several shipped ones start with is refused, naming them.

    >>> load_dialect("standard").label, load_dialect("recbole").label, load_dialect("replay").label
    ('standard', 'recbole@1.2.1', 'replay@0.22.0')
    >>> load_dialect("daisyrec@2.3").label
    'daisyrec@2.3.0'
    >>> load_dialect("replay@0.2")
    Traceback (most recent call last):
    ...
    receval.errors.SpecError: dialect 'replay' has no version '0.2'; versions: 0.22.0, 0.4.0 (write one of them, e.g. replay@0.22.0)
    """
    if not isinstance(name, str):
        raise SpecError(f"a dialect must be a name like 'recbole' or 'recbole@1.2.1', got {name!r}")
    text = name.strip().lower()
    base, at, version = (s.strip() for s in text.partition("@"))
    candidates = [d for d in all_dialects() if d.name == base]
    if not candidates:
        raise unknown("dialect", base, dialect_names())
    if not version:
        if at:
            raise SpecError(f"dialect '{name.strip()}' has an '@' without a version: write '{base}' or '{base}@<version>' "
                            f"(versions: {', '.join(d.version for d in candidates)})")
        defaults = [d for d in candidates if d.default] or candidates
        return defaults[0]
    return _match_version(base, version, candidates)


def _match_version(base: str, version: str, candidates: list[Dialect]) -> Dialect:
    """The one dialect of ``candidates`` that ``version`` names (see :func:`load_dialect`)."""
    listed = ", ".join(d.version for d in candidates)
    given = version.split(".")
    exact = [d for d in candidates if d.version.lower().split(".") == given]
    if exact:
        return exact[0]
    starting = [d for d in candidates if all(given) and d.version.lower().split(".")[: len(given)] == given]
    if len(starting) == 1:
        return starting[0]
    if len(starting) > 1:
        names = ", ".join(f"{base}@{d.version}" for d in starting)
        raise SpecError(f"dialect '{base}@{version}' is ambiguous: it could be {names}; write the whole version")
    usual = next((d for d in candidates if d.default), candidates[0])
    raise SpecError(
        f"dialect '{base}' has no version '{version}'; versions: {listed} (write one of them, e.g. {base}@{usual.version})"
    )
