"""One conformance case, and what an implementation under audit is.

This module is the interface between the conformance suite (:mod:`receval.conformance`), the
audit (:mod:`receval.audit`) and the built-in adapters (:mod:`receval.adapters`): all three
read and write these types and nothing else of each other.

A case is small, language-neutral data: recommendations, truth and side inputs as rows with
string ids, one receval spec, and the expected mean and per-user values (or the refusal), with
where the expectation comes from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # polars is imported lazily
    import polars as pl

#: where a case's expectation comes from: ``"arithmetic"`` (small enough to check by hand,
#: the arithmetic is in ``why``), ``"reference"`` (the slow reference implementation agrees),
#: or ``"library:<name>==<version>"`` (that library, run for real, gave the same values)
SOURCES = ("arithmetic", "reference", "library:")


@dataclass(frozen=True)
class Case:
    """One conformance case.

    ``recs`` has columns ``user`` (str), ``item`` (str), ``score`` (float) and ``rank`` (int,
    1-based within a user, the case's list order); ``truth`` has ``user``, ``item``,
    ``rating`` (float); ``side`` maps a side input's name (``train``, ``catalog``,
    ``categories``, ``baseline``, ``item_groups``, ``user_groups``) to its rows.
    ``expected_per_user`` maps every user the value averages over to its value (None = NaN);
    ``refusal`` is the error class name when receval refuses the case (then
    ``expected_mean`` is None).
    """

    id: str
    metric: str
    spec: str
    k: int | None
    recs: pl.DataFrame
    truth: pl.DataFrame
    side: Mapping[str, pl.DataFrame] = field(default_factory=dict)
    expected_mean: float | None = None
    expected_per_user: Mapping[str, float | None] = field(default_factory=dict)
    refusal: str | None = None
    source: str = "reference"
    tags: tuple[str, ...] = ()
    dialect: str | None = None
    why: str = ""


#: what an implementation returns for one case: per-user values (preferred) or one mean
Outcome = Mapping[str, float] | float

#: an implementation under audit: ``impl(recs, truth, k, side)`` with the frames of a
#: :class:`Case` (``recs``: user, item, score, rank; ``truth``: user, item, rating)
Implementation = Callable[["pl.DataFrame", "pl.DataFrame", "int | None", "Mapping[str, pl.DataFrame]"], Outcome]


@runtime_checkable
class BatchImplementation(Protocol):
    """An implementation that runs many cases at once (a library in another process).

    ``evaluate_cases`` returns the outcome of each case it could run, by case id; a case it
    cannot run (an exception in the library) maps to the exception's one-line text.
    """

    def evaluate_cases(self, cases: list[Case]) -> Mapping[str, Outcome | str]: ...
