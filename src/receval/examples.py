"""Small worked examples used by the docstrings (doctests) and the quickstart.

The shared example: user 1 is recommended items 10, 20, 30, 40 in that order (scores
0.9, 0.8, 0.7, 0.6) and likes 20, 40 and 50, so |R| = 3 and the hits sit at positions 2 and 4.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from .api import evaluate

WORKED_RECS = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.7, 0.6]}
WORKED_TRUTH = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 4.0, 3.0]}
#: the same list with items 20 and 30 tied (positions 2-3), for the tie-aware examples
TIED_RECS = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.8, 0.6]}


def worked(spec: str, digits: int = 6, *, recs: dict | None = None, **kwargs) -> float:
    """Evaluate ``spec`` on the shared worked example (or other ``recs``), rounded.

    >>> worked("precision@2")
    0.5
    """
    return round(evaluate(recs or WORKED_RECS, WORKED_TRUTH, [spec], **kwargs).value(spec), digits)


def tied(spec: str, digits: int = 6) -> float:
    """Evaluate ``spec`` on the worked example with items 20 and 30 tied, rounded.

    >>> tied("precision(ties=average)@2")   # (0 + 1/2) / 2
    0.25
    """
    return worked(spec, digits, recs=TIED_RECS)


def example_path(name: str) -> Path:
    """Path of a bundled example file (``recs.csv`` or ``truth.csv``)."""
    return Path(str(resources.files("receval") / "data" / "examples" / name))
