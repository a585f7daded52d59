"""Error types and message templates.

Three kinds of user mistakes, each with one message template (tested verbatim):

- a bad parameter: ``"`k` must be an integer >= 1, got 0"``
- a bad name: ``"unknown metric 'ndgc'; did you mean 'ndcg'?"``
- bad data: ``"recommendations are missing column 'item_id' (found: user, item, score)"``

Every error a user can cause is a :class:`RecevalError` (a ``ValueError``), so the
command line can print its one-line message and exit non-zero without a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class RecevalError(ValueError):
    """A mistake in the user's input: the message says what is wrong and how to fix it."""


class SpecError(RecevalError):
    """A metric string or option that cannot be parsed or resolved."""


class DataError(RecevalError):
    """Input data that cannot be evaluated as given (missing columns, duplicates, NaN, ...)."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest choice, or a list of choices.

    >>> did_you_mean("ndgc", ["ndcg", "map", "mrr"])
    "; did you mean 'ndcg'?"
    >>> did_you_mean("zzz", ["a", "b"])
    "; choose one of: 'a', 'b'"
    """
    choices = sorted(set(choices))
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.5)
    if close:
        return f"; did you mean '{close[0]}'?"
    return "; choose one of: " + ", ".join(f"'{c}'" for c in choices)


def unknown(kind: str, word: str, choices: Iterable[str]) -> SpecError:
    """``unknown metric 'ndgc'; did you mean 'ndcg'?``"""
    return SpecError(f"unknown {kind} '{word}'{did_you_mean(word, choices)}")


def bad_param(name: str, requirement: str, got: object) -> SpecError:
    """```k` must be an integer >= 1, got 0``"""
    return SpecError(f"`{name}` must be {requirement}, got {got!r}")
