"""Small worked examples used by the docstrings (doctests) and the quickstart.

The shared example: user 1 is recommended items 10, 20, 30, 40 in that order (scores
0.9, 0.8, 0.7, 0.6) and likes 20, 40 and 50, so |R| = 3 and the hits sit at positions 2 and 4.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

WORKED_RECS = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.7, 0.6]}
WORKED_TRUTH = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 4.0, 3.0]}


def worked(spec: str, digits: int = 6, **kwargs) -> float:
    """Evaluate ``spec`` on the shared worked example, rounded.

    >>> worked("precision@2")
    0.5
    """
    from .api import evaluate

    return round(evaluate(WORKED_RECS, WORKED_TRUTH, [spec], **kwargs).value(spec), digits)


def example_path(name: str) -> Path:
    """Path of a bundled example file (``recs.csv`` or ``truth.csv``)."""
    return Path(str(resources.files("receval") / "data" / "examples" / name))
