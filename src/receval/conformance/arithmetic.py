"""Hand-checkable conformance cases for the metrics the slow reference does not cover.

Each case is a few rows whose value is worked out in ``why``; ``tests/conformance_build.py``
keeps a case (``source: "arithmetic"``) only where receval gives exactly this arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Arithmetic:
    name: str
    metric: str
    spec: str
    k: int | None
    recs: list[tuple[Any, ...]]  # (user, item, score, rank)
    truth: list[tuple[Any, ...]]  # (user, item, rating)
    mean: float
    per_user: dict[str, float]
    why: str
    side: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    tags: tuple[str, ...] = ("arithmetic",)
    dialect: str | None = None


ARITHMETIC: list[Arithmetic] = []

__all__ = ["Arithmetic", "ARITHMETIC"]
