"""Small worked examples used by the docstrings (doctests) and the quickstart.

The shared example: user 1 is recommended items 10, 20, 30, 40 in that order (scores
0.9, 0.8, 0.7, 0.6) and likes 20, 40 and 50, so |R| = 3 and the hits sit at positions 2 and 4.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from .api import evaluate
from .ope import evaluate as ope_evaluate
from .ope.estimators import EXAMPLE_SLATE_TARGET, EXAMPLE_SLATES

WORKED_RECS = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.7, 0.6]}
WORKED_TRUTH = {"user_id": [1, 1, 1], "item_id": [20, 40, 50], "rating": [5.0, 4.0, 3.0]}
#: the same list with items 20 and 30 tied (positions 2-3), for the tie-aware examples
TIED_RECS = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.8, 0.6]}

#: the popularity example (:mod:`receval.metrics.popularity`): users 1-4 saw item 10 in train,
#: user 1 also item 20 (φ(10) = 4, φ(20) = 1, by rows as by users: 10 holds 4/5 of the train
#: interactions); user 1 is recommended 10 then 20 and likes 20
POP_TRAIN = {"user_id": [1, 2, 3, 4, 1], "item_id": [10, 10, 10, 10, 20]}
POP_RECS = {"user_id": [1, 1], "item_id": [10, 20], "score": [2.0, 1.0]}
POP_TRUTH = {"user_id": [1], "item_id": [20]}


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


def popular(spec: str, digits: int = 6, *, recs: dict | None = None, truth: dict | None = None, **side) -> float:
    """Evaluate ``spec`` on the popularity example (or other ``recs`` / ``truth``), with
    ``train=POP_TRAIN`` unless ``side`` names another train, rounded.

    >>> popular("aplt@2")   # the head {10} holds 4/5 ≥ 0.8 of train: the tail is {20}, 1 of 2
    0.5
    """
    side.setdefault("train", POP_TRAIN)
    return round(evaluate(recs or POP_RECS, truth or POP_TRUTH, [spec], **side).value(spec), digits)


def slated(spec: str) -> float:
    """The off-policy estimate ``spec`` on the slate example
    (:data:`receval.ope.estimators.EXAMPLE_SLATES`: the slate a, b, both rewarded, that the
    target ranks as logged).

    >>> slated("iips")   # (1/0.5)*1 + (1/0.5)*1
    4.0
    """
    return ope_evaluate(EXAMPLE_SLATES, EXAMPLE_SLATE_TARGET, [spec]).value(spec)


def example_path(name: str) -> Path:
    """Path of a bundled example file (``recs.csv`` or ``truth.csv``)."""
    return Path(str(resources.files("receval") / "data" / "examples" / name))
