"""The option axes, declared once and shared by every metric that reads them.

An *axis* is one choice that can change a number: a denominator, a gain, how the ideal
ranking is cut, a tie rule, which users are averaged. Each value is named after the choice it
makes (``ideal=uncut``, not ``divide_by_achievable=False``; ``gini(form=complement)``, not
``form=elliot``) and documented in one line; a library's name says which library computes it,
in the value's documentation, never what it computes. The signature of a value lists every
resolved axis the metric reads, under the axis's short key.

A value renamed keeps its old spelling as an *alias* (:attr:`Axis.aliases`): a spec, a
dialect or a published signature that writes the old spelling parses to the same value, and
the canonical spec and signature write the new name (``entropy(form=recbole)@10`` is
``entropy(form=per_item)@10``).

Two groups exist:

* **context axes** are read while the intermediate form is built or while per-user values are
  averaged (relevance threshold, tie rule, ordering, duplicate policies, user-set policies).
  Every metric reads them, they may be set per metric (``ndcg(ties=item_desc)@10``), as a
  keyword of :func:`receval.evaluate`, or by a dialect.
* **metric axes** belong to the formulas that read them (``map(denominator=k)@20``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .errors import SpecError, did_you_mean


#: when a tie rule decides a value, and what receval says then (the ties axis, ``receval explain ties``)
TIES_REACH = (
    "A tie group reaches into the top k when two or more items of a list ranked by score have equal scores and "
    "the first of them is at a position <= k (k: the largest cut-off of the call's specs that read the tie rule; "
    "a spec without a cut-off: anywhere in the list); for those users the tie rule decides the value. "
    "Results.info['tied_users'] counts them under every rule (the same on every engine and batch split), and "
    "one note says the count when the rule was not chosen (the default); a rule set in the spec, a call keyword "
    "or a dialect (its tie rule is part of the library it reproduces) is a choice and is not noted"
)


@dataclass(frozen=True)
class Axis:
    """One option: its spec name, signature key, allowed values and their meaning."""

    name: str
    key: str
    default: Any
    doc: str
    values: dict[str, str] = field(default_factory=dict)
    numeric: bool = False
    #: a name the data defines (a group of a side input), not one of ``values``: any text
    #: without the spec's separators, compared in lower case as the spec grammar reads it
    free: bool = False
    #: old spelling -> the value of ``values`` it now reads as: a renamed value still parses
    #: (in a spec, a dialect file or a published signature) to the same choice, written under
    #: its new name
    aliases: dict[str, str] = field(default_factory=dict)
    #: an axis added after 0.1 whose default (the behaviour before it) the signature leaves out,
    #: so that every signature written before it still reads the same; any other value is written
    silent: bool = False

    def __post_init__(self) -> None:
        for old, new in self.aliases.items():
            if new not in self.values or old in self.values:
                raise ValueError(f"axis {self.name!r}: alias {old!r} must name a value ({new!r} is not one) and not be one")

    def parse(self, raw: Any) -> Any:
        """Validate and normalise a raw value (a string from a spec, or a Python value)."""
        if self.numeric:
            return _parse_number(self.name, raw)
        if self.free:
            return _parse_name(self.name, raw)
        if isinstance(raw, bool):  # True/False: yes/no where the option has them
            if ("yes" if raw else "no") in self.values:
                return "yes" if raw else "no"
            raise SpecError(
                f"option `{self.name}` takes a name, got {raw!r}; choose one of: {', '.join(repr(v) for v in self.values)}"
            )
        if not isinstance(raw, str):  # ties=3, order=None: validated as the strings they would be written as
            raise SpecError(
                f"option `{self.name}` takes a name, got {type(raw).__name__} {raw!r}"
                f"; choose one of: {', '.join(repr(v) for v in self.values)}"
            )
        text = raw.strip().lower()
        if text in ("true", "yes"):
            text = "yes" if "yes" in self.values else text
        if text in ("false", "no"):
            text = "no" if "no" in self.values else text
        text = self.aliases.get(text, text)
        if text not in self.values:
            raise SpecError(
                f"unknown value '{raw}' for option `{self.name}`{did_you_mean(text, self.values)}"
            )
        return text

    def render(self, value: Any) -> str:
        """The value as written in a spec or a signature."""
        if self.numeric:
            return _render_number(value)
        return str(value)


_NAME_FORBIDDEN = ",()|=@"


def _parse_name(name: str, raw: Any) -> str:
    """A group name as an option value: lower case (the spec grammar lower-cases its text),
    stripped, without the characters that separate a spec or a signature."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise SpecError(f"option `{name}` takes a group name, got {type(raw).__name__} {raw!r}")
    text = str(raw).strip().lower()
    if not text or any(c in text for c in _NAME_FORBIDDEN):
        raise SpecError(
            f"option `{name}` takes a group name without {' '.join(_NAME_FORBIDDEN)}, got {raw!r}; rename the group in the data"
        )
    return text


def _parse_number(name: str, raw: Any) -> Any:
    if raw is None:
        return None
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in ("all", "none", ""):
            return None
        if text.startswith(">="):
            text = text[2:]
        elif text.startswith(">"):  # strict: the next float above, so rating >= it is rating > x exactly
            value = _parse_number(name, text[1:])
            if value is None:
                raise SpecError(f"`{name}` must be a number, got '{raw}'")
            return math.nextafter(value, math.inf)
        if text == "e":
            return math.e
        try:
            value = float(text)
        except ValueError:
            raise SpecError(f"`{name}` must be a number, got '{raw}'") from None
    elif isinstance(raw, bool) or not isinstance(raw, (int, float)) and not hasattr(raw, "__float__"):
        raise SpecError(f"`{name}` must be a number, got {type(raw).__name__} {raw!r}")
    else:
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise SpecError(f"`{name}` must be a number, got {type(raw).__name__} {raw!r}") from None
    if not math.isfinite(value):
        raise SpecError(f"`{name}` must be a finite number, got {raw!r}")
    return value


def _render_number(value: Any) -> str:
    if value is None:
        return "all"
    if value == math.e:
        return "e"
    below = math.nextafter(float(value), -math.inf)
    if below == 0.0 and value > 0 or len(repr(float(value))) > 15 and len(repr(below)) <= 8:  # a strict threshold: '>4'
        return ">" + _render_number(below)
    return repr(float(value)).removesuffix(".0") if float(value).is_integer() else repr(float(value))


# --- context axes: read by every metric ------------------------------------------------------

CONTEXT_AXES: dict[str, Axis] = {
    a.name: a
    for a in [
        Axis(
            "rel", "rel", None,
            ("relevance threshold: a truth row is relevant when its rating >= rel ('>4': strictly above 4); 'all' makes every "
             "truth row relevant. Default (standard dialect): '>0' when the ground truth has a rating column (a rating of 0 "
             "is not relevant; recorded as rel:>0, with a note), 'all' without one; a dialect keeps its library's rule"),
            numeric=True,
        ),
        Axis(
            "order", "order", "auto",
            "what ranks the recommendations of a user",
            {
                "auto": "the rank column if given, else the score column, else the input row order",
                "score": "score descending; ties by the `ties` rule",
                "rank": "the given rank column (1 = best); equal ranks are an error",
                "rank_value": "the given rank column read as the positions themselves: equal ranks share a position and a skipped rank stays empty (RecTools)",
                "input": "the input row order within each user, never re-sorted (rs_metrics)",
            },
        ),
        Axis(
            "ties", "ties", "average",
            "how items with equal scores are ordered (only lists ordered by score have ties)",
            {
                "input": (
                    "stable: the earlier input row ranks first; the value then depends on the row order wherever "
                    "scores tie (the result says for how many users); for dialects of libraries that do this"
                ),
                "item": "the smaller item id ranks first",
                "item_desc": "the larger item id ranks first (RePlay, NeuRec's Python backend)",
                "text_desc": "the larger item id compared as text ranks first ('9' before '10'; trec_eval's docno rule)",
                "optimistic": (
                    "an item's position is 1 + the number of items with a strictly greater score (OpenRec); "
                    "alpha_ndcg and ab_ndcg, whose gains read the order of the list's items, are refused where "
                    "tied items share a position inside the top k"
                ),
                "average": (
                    "the expected value over all orderings of equally scored items (McSherry & Najork, ECIR 2008; "
                    "scikit-learn's ndcg_score): in closed form for most metrics; for the metrics of the top-k set "
                    "(coverage, entropy, gini, fairness, list quality) when no tie group straddles k, and for the other "
                    "metrics and variants when no tie can change the value (no tie group inside the top k), each metric "
                    "as the table 'Ties by metric' of the metric reference says; otherwise the call is refused, with the "
                    "number of users. The default: the value is the same for every row order and every renaming of the ids. "
                    + TIES_REACH
                ),
            },
        ),
        Axis(
            "hitscore", "hitscore", "any",
            "which recommended relevant items count as hits",
            {
                "any": "every recommended relevant item, whatever its score",
                "positive": (
                    "only those with a score > 0: a relevant item scored <= 0 is not a hit (nor a positive row) "
                    "but still counts in |R| and among the listed relevant items (torchmetrics >= 1.8 AP, "
                    "precision, recall, reciprocal rank: PR #3160); needs a score column"
                ),
            },
        ),
        Axis(
            "dup", "dup", "error",
            "duplicate (user, item) rows in the recommendations",
            {
                "error": "refuse the input and say how many and which",
                "first": "keep the best-ranked occurrence, drop the others",
                "keep": "keep every row: each occurrence is a position and a hit (MS Recommenders, rs_metrics)",
            },
        ),
        Axis(
            "tdup", "tdup", "error",
            "duplicate (user, item) rows in the ground truth",
            {
                "error": "refuse the input and say how many and which",
                "first": "keep the first row of each (user, item); refused when its rows disagree on the rating",
                "max": "keep the row of each (user, item) with the highest rating",
                "keep": (
                    "count every row in |R| (RecTools, RePlay's len(R), MS Recommenders); a recommended item "
                    "is matched to its relevant row of highest rating"
                ),
            },
        ),
        Axis(
            "empty", "empty", "skip",
            "a truth user with no relevant item",
            {
                "skip": "left out of the mean (counted in the result as `skipped`)",
                "zero": "scores 0 and is averaged",
                "error": "refuse the input",
            },
        ),
        Axis(
            "norecs", "norecs", "zero",
            "a truth user with relevant items but no recommendations",
            {
                "zero": "scores 0 and is averaged (users = truth users)",
                "skip": "left out of the mean (users = users present in both)",
                "error": "refuse the input",
            },
        ),
    ]
}



#: the promise every value keeps (README, docs, ``receval explain``)
CONTRACT = (
    "One signature, one number: a value is a function of its signature and of the content of its inputs, "
    "taken as sets of rows and up to a renaming of the ids; not of the row order, the spelling or type of the "
    "ids, the engine, the batch split, the file format, or a side input the metric does not read. Where a number "
    "would depend on anything else, that thing is in the signature (a dialect's tie rule, a side input it reads) "
    "or the call is refused with the fix."
)


#: ``receval explain ties``: the long form of every note and refusal about ties
TIES_EXPLAINED = (
    "Recommendation lists ranked by score have ties where items have equal scores (scores rounded to two "
    "decimals, as a CSV export writes them, tie in most lists). Every metric that reads positions then needs a tie "
    "rule. The default, ties=average, takes the expected value over all orderings of the tied items: one value for "
    "every row order and every renaming of the ids. Other libraries break ties by the row order (ties=input), by "
    "item id (ties=item, ties=item_desc) or as text (ties=text_desc), and their numbers differ from receval's "
    "wherever ties reach into the top k; a dialect (--dialect recbole) uses the library's rule. "
    + TIES_REACH + ". "
    "Some metrics have no tie-averaged value: those of the top-k set (coverage, entropy, gini, fairness, list "
    "quality) when a tie group straddles position k (items of the group on both sides of k), and some others and "
    "variants when a tie group reaches into the top k. ties=average is then refused with the number of users; the "
    "fix is a tie rule in the spec (coverage(ties=item)@10) or the call (ties='item'), which is then recorded in the "
    "signature, or for the top-k set a cut-off at a tie-group boundary. Under ties=optimistic (OpenRec) tied "
    "items share one position; alpha_ndcg and ab_ndcg read the order of a list's items, so they are refused "
    "where items share a position inside the top k (the same under equal values of a rank column)."
)


def ties_note(options: dict[str, Any], settle: bool = False) -> str | None:
    """One line on how ``options['ties']`` keeps (or breaks, for a dialect) the contract."""
    ties = options.get("ties")
    if ties in ("input",):
        return ("ties=input: equally scored items keep the input row order, so where scores tie the value depends on "
                "the row order (the result says for how many users)")
    if ties in ("item", "item_desc", "text_desc"):
        return (f"ties={ties}: equally scored items are ordered by their ids, so where scores tie the value depends "
                "on the item ids (the result says for how many users)")
    if ties == "average" and settle:
        return ("ties=average: this metric has no value averaged over the orderings of ties; it is computed where "
                "no tie group reaches into the top k and refused otherwise (naming the number of users)")
    return None


#: context axes that change the intermediate form itself (metrics that differ only in the
#: other axes share one build)
BUILD_AXES = ("rel", "order", "ties", "hitscore", "dup", "tdup")


def context_defaults() -> dict[str, Any]:
    return {name: axis.default for name, axis in CONTEXT_AXES.items()}
