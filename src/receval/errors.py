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
import re
from collections.abc import Iterable
from typing import Any


class RecevalError(ValueError):
    """A mistake in the user's input: the message says what is wrong and how to fix it, in one
    bounded line (:func:`one_line`: echoed user text is cut, line breaks escaped), from the API
    as from the command line."""

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)


class SpecError(RecevalError):
    """A metric string or option that cannot be parsed or resolved."""


class DataError(RecevalError):
    """Input data that cannot be evaluated as given (missing columns, duplicates, NaN, ...)."""


class MetricMissing(SpecError):
    """A dialect (a library at a version) has no metric of that name: :func:`receval.compare.compare`
    leaves its cell empty instead of failing."""


class SignatureError(SpecError):
    """A signature that cannot be read (:func:`receval.spec.signature_spec`): the message
    names it, ``signature 'ndcg@10|…': ...``."""


class TiesRefused(DataError):
    """A tie rule refused on the data: ``counts[k]`` users have ties that change the value
    of ``metric`` at cut-off k (``kind`` "straddle": a tie group across position k, for the
    metrics of the top-k set; "shared": rows sharing a position inside the top k, under
    ``ties=optimistic`` or equal rank values, for the metrics that read the order of the list's
    items (α-nDCG, αβ-nDCG); "inside": a tie group reaching into the top k (k 0: anywhere in
    the list), for the metrics with no tie-averaged value). The message names the smallest such
    k. The batched engines add the counts of their batches (:meth:`plus`), so every engine
    refuses with the same message."""

    def __init__(self, metric: str, counts: dict[int, int], kind: str) -> None:
        self.metric, self.counts, self.kind = metric, dict(counts), kind
        super().__init__(self.text())

    def __reduce__(self):  # picklable (Spark ships a batch's refusal back to the driver)
        return (TiesRefused, (self.metric, self.counts, self.kind))

    def plus(self, other: TiesRefused) -> TiesRefused:
        keys = set(self.counts) | set(other.counts)
        return TiesRefused(self.metric, {k: self.counts.get(k, 0) + other.counts.get(k, 0) for k in keys}, self.kind)

    def text(self) -> str:
        """One line (at most 200 characters) that starts with the fix and gives the counts;
        ``receval explain ties`` says the rest."""
        k = min(k for k, n in self.counts.items() if n)
        n, m = self.counts[k], _cut(self.metric, 30)
        who = f"{n} {'user has' if n == 1 else 'users have'}"
        if self.kind == "straddle":
            return (f"pass ties=item (or item_desc, input, or a cut-off between tie groups): {m}@{k} has no "
                    f"tie-averaged value; {who} ties across position {k} (receval explain ties)")
        if self.kind == "shared":
            return (f"pass ties=item (or item_desc, input) or ranks without repeats: {m}@{k} reads the order of "
                    f"items sharing a position; {who} such items within the top {k} (receval explain ties)")
        where = f"within the top {k}" if k else "in their lists"
        return (f"pass ties=item (or item_desc, input): {m}{'@' + str(k) if k else ''} has no tie-averaged value; "
                f"{who} ties {where} (receval explain ties)")


class OutsideCatalogue(DataError):
    """Recommended items outside the catalogue, for a metric that reads one (issue 31, ruling 3:
    one rule for aplt, aclt, popreo, poprsp, coverage, gini, serendipity). ``ids`` the distinct
    item ids outside it. The batched engines unite the ids of their batches (:meth:`plus`), so
    every engine refuses with the same count and the same examples (the smallest ids)."""

    def __init__(self, metric: str, ids: Iterable[Any]) -> None:
        self.metric, self.ids = metric, sorted(set(ids))
        super().__init__(self.text())

    def __reduce__(self):  # picklable (Spark ships a batch's refusal back to the driver)
        return (OutsideCatalogue, (self.metric, self.ids))

    def plus(self, other: OutsideCatalogue) -> OutsideCatalogue:
        return OutsideCatalogue(self.metric, [*self.ids, *other.ids])

    def text(self) -> str:
        n = len(self.ids)
        eg = ", ".join(_short(i) for i in self.ids[:3])
        return (f"add the items to the catalogue or drop them from the recommendations: {n} recommended "
                f"{'item is' if n == 1 else 'items are'} not in the catalogue of {self.metric}, e.g. {eg}")


def _short(item: object) -> str:
    """An item id for a message: its repr, cut to 16 characters."""
    item = item.item() if hasattr(item, "item") else item
    if isinstance(item, str) and len(item) > 14:
        item = item[:13] + "…"
    text = repr(item)
    return text if len(text) <= 16 else text[:15] + "…"


class RecevalWarning(UserWarning):
    """Something the value depends on that the user should know (e.g. ``ties=input`` on tied
    scores: the value depends on the row order), or inputs that barely overlap. The same fact
    is recorded with its counts in ``Results.info``; the command line prints it on stderr."""


class RecevalNote(UserWarning):
    """What receval decided for the user, said once in one short line: a relevance rule read
    from the data, another vocabulary's name resolved, a tie rule that decided values, users
    left without recommendations. Not a problem: a notebook filters them with
    ``warnings.filterwarnings("ignore", category=receval.RecevalNote)``; the command line prints
    them as ``receval: note: ...`` on stderr."""


def note(message: str, stacklevel: int = 2) -> None:
    """Say one :class:`RecevalNote` (one line), pointing at the first frame outside receval.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     note("rel:>0 read from the data")
    >>> w[0].category.__name__, str(w[0].message)
    ('RecevalNote', 'rel:>0 read from the data')
    """
    import warnings

    warnings.warn(one_line(message), RecevalNote, stacklevel=caller_level(stacklevel))


def caller_level(at_least: int = 2) -> int:
    """The ``stacklevel`` at which a warning points to the first frame outside the receval
    package (the user's line), never less than ``at_least``."""
    import os
    import sys
    from types import FrameType

    here = os.path.dirname(os.path.abspath(__file__))
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return max(at_least, level)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest choice, or a list of choices.

    >>> did_you_mean("ndgc", ["ndcg", "map", "mrr"])
    "; did you mean 'ndcg'?"
    >>> did_you_mean("zzz", ["a", "b"])
    "; choose one of: 'a', 'b'"
    """
    choices = sorted(set(choices))
    close = closest(word, choices)
    if close is not None:
        return f"; did you mean '{close}'?"
    return "; choose one of: " + ", ".join(f"'{c}'" for c in choices)


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice :func:`did_you_mean` suggests for ``word``, or None when none is close.

    >>> closest("ndgc", ["ndcg", "map", "mrr"]), closest("zzz", ["a", "b"])
    ('ndcg', None)
    """
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.5)
    return close[0] if close else None


def unknown(kind: str, word: str, choices: Iterable[str]) -> SpecError:
    """``unknown metric 'ndgc'; did you mean 'ndcg'?``"""
    return SpecError(f"unknown {kind} '{word}'{did_you_mean(word, choices)}")


def bad_param(name: str, requirement: str, got: object) -> SpecError:
    """```k` must be an integer >= 1, got 0``"""
    return SpecError(f"`{name}` must be {requirement}, got {got!r}")


#: echoed user text (a quoted stretch, a word) in a message is cut to this many characters
ECHO_LIMIT = 80
#: ... a path (text with a / or \\) to this many: a file name stays readable
PATH_LIMIT = 300
#: a whole message is cut to this many characters
MESSAGE_LIMIT = 1000
_QUOTED = re.compile(r"""(?<![\w'"`])(['"`])([^'"`]{""" + str(ECHO_LIMIT + 1) + r""",})\1(?!\w)""")
_WORD = re.compile(r"\S{" + str(ECHO_LIMIT + 1) + ",}")


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: its head and tail around an ellipsis."""
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def one_line(message: object, limit: int = ECHO_LIMIT) -> str:
    r"""A message as one bounded line: line breaks and other control characters shown as
    escapes (``\n``), every quoted stretch and every word (a spec, a name) longer than
    ``limit`` characters cut to ``limit`` around an ellipsis (its head and tail stay; a path, to
    :data:`PATH_LIMIT`), and the whole at most :data:`MESSAGE_LIMIT` characters. Every error
    receval raises (:class:`RecevalError`) and every warning the command line prints goes
    through it, so a 100 KB spec is not echoed whole.

    >>> one_line("unknown metric '" + "x" * 200 + "'; did you mean 'ndcg'?")
    "unknown metric 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…xxxxxxxxxxxxxxxxxxxxxxxxx'; did you mean 'ndcg'?"
    >>> one_line("bad" + chr(10) + "line")
    'bad\\nline'
    """
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(message))

    def bound(part: str) -> str:
        return _cut(part, max(limit, PATH_LIMIT) if "/" in part or "\\" in part else limit)

    text = _QUOTED.sub(lambda m: m[1] + bound(m[2]) + m[1], text)
    text = _WORD.sub(lambda m: bound(m[0]), text)
    return _cut(text, MESSAGE_LIMIT)
