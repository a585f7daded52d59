"""Metric registration, lookup with suggestions, and option resolution.

Each metric is a :class:`Metric`: a name, the axes it reads, a docstring with its exact
formula, and one pure function of the intermediate form (:class:`receval.hits.Hits`) that
returns per-user values for several cut-offs at once (or one value per cut-off for an
aggregate metric). Resolution order for every option: explicit in the spec > keyword given
to :func:`receval.evaluate` > dialect > the metric's standard default.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .errors import SpecError, did_you_mean
from .options import CONTEXT_AXES, Axis
from .plaintext import Documented
from .reduction import KeyedReduction

#: what an aggregate-free metric function returns: per-user values, shape [U, len(ks)]
ComputeFn = Callable[..., np.ndarray]
_Fn = TypeVar("_Fn", bound=Callable[..., Any])

#: how a metric meets ``ties=average`` (its declared ``ties`` trait, see :attr:`Metric.ties`),
#: as the generated reference says it
TIES = {
    "closed": "closed form",
    "topk_set": "defined when no tie group straddles k",
    "settled": "defined when no tie group reaches into the top k",
}


@dataclass
class Metric(Documented):
    """A registered metric: its axes, its formula, its compute function."""

    name: str
    compute: ComputeFn
    axes: dict[str, Axis]
    needs_k: bool = True
    optional_k: bool = False
    k_changes_meaning: bool = False  # with a cut-off the metric is another quantity (auc vs auc@k)
    kind: str = "user"  # "user": averaged per-user values; "global": one value per k
    context: tuple[str, ...] = tuple(CONTEXT_AXES)
    needs: frozenset[str] = frozenset()
    family: str = "ranking"
    resolve_hook: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    check_hook: Callable[[dict[str, Any]], None] | None = None
    #: for ``kind="global"`` on the batched backends (Polars, Spark): ``partial(h, ks, o)``
    #: returns picklable sufficient statistics of one batch of users (users are disjoint
    #: between batches; side inputs are whole), ``combine(parts, ks, o)`` the values, one per
    #: k, exactly as ``compute`` on all users would give them. Without the pair a global
    #: metric runs in one batch on Polars and is refused on Spark.
    partial: Callable[..., Any] | None = None
    combine: Callable[..., np.ndarray] | None = None
    #: a per-user metric whose own option may leave a user out of the mean (NaN per-user
    #: value, e.g. ``pauc(insufficient=exclude)``); for every other metric NaN is a value
    skips: bool = False
    #: how the metric meets ``ties=average`` (a key of :data:`TIES`; None for a metric that
    #: does not read the ``ties`` option): "closed", a closed-form expectation over the orderings
    #: of the ties; "topk_set", reads only which items are in the top k, never their positions,
    #: so its value is the same in every ordering unless a tie group straddles k, which
    #: :meth:`receval.hits.Hits.check_topk_settled` refuses; "settled", no tie-averaged value:
    #: computed only where no tie reaches into the top k (:attr:`receval.resolve.Resolved.settle`)
    ties: str | None = None
    #: the variants (option: value) of a "closed" metric that have no tie-averaged value: they
    #: are "settled" (e.g. ``ndcg(ideal=hits)``, whose ideal reads the order of the ties)
    ties_settled: Mapping[str, Any] = field(default_factory=dict)
    #: the direction of the metric: False for errors, inequality and divergence measures
    higher_is_better: bool = True
    #: (lowest, highest) value under the default options (without ``dup=keep`` and
    #: ``ties=optimistic``, which can put more than k items in the top k); None when unbounded
    bounds: tuple[float, float] | None = None
    #: the variants (option: value) whose per-user values are (precision, recall) pairs, shape
    #: [U, len(ks), 2], averaged apart and combined as the F1 of the means (``f1(aggregate=means)``);
    #: every other per-user metric is averaged as it is
    f1_of_means: Mapping[str, Any] = field(default_factory=dict)
    #: the variants (option: value) whose per-user values are (numerator, denominator) pairs,
    #: shape [U, len(ks), 2], pooled over the averaged users as Σ numerator / Σ denominator (the
    #: ratio of their means: micro-averaged ``precision(average=micro)``); a user scored 0 by a
    #: policy keeps its denominator and adds no numerator
    ratio_of_means: Mapping[str, Any] = field(default_factory=dict)

    def pairs(self, options: Mapping[str, Any]) -> bool:
        """Whether the metric under ``options`` yields per-user pairs (F1 of the means, or a ratio of means)."""
        return self.pair_kind(options) is not None

    def pair_kind(self, options: Mapping[str, Any]) -> str | None:
        """``"f1"`` (:attr:`f1_of_means`), ``"ratio"`` (:attr:`ratio_of_means`) or None: how the
        per-user pairs of the metric under ``options`` are combined (:func:`receval.policy.of_means`)."""
        for kind, variant in (("f1", self.f1_of_means), ("ratio", self.ratio_of_means)):
            if variant and all(options.get(a) == v for a, v in variant.items()):
                return kind
        return None

    def settles(self, options: Mapping[str, Any]) -> bool:
        """Whether ``ties=average`` in ``options`` has no tie-averaged value for this metric (or
        variant), so it is computed only where no tie reaches into the top k."""
        if options.get("ties") != "average" or "ties" not in self.context:
            return False
        return self.ties == "settled" or any(options.get(a) == v for a, v in self.ties_settled.items())

    def ties_label(self) -> str:
        """``ties=average`` for this metric in a few words (the generated reference's table)."""
        if self.ties is None:
            return "does not read `ties`"
        text = TIES[self.ties]
        if self.ties_settled:
            but = ", ".join(f"`{self.name}({a}={v})`" for a, v in self.ties_settled.items())
            text += f"; {but}: {TIES['settled']}"
        return text
    #: a global metric whose partial is keyed rows a distributed backend must not gather
    #: (the stacked AUC): how that backend reduces them (:mod:`receval.reduction`)
    distributed: KeyedReduction | None = None
    #: the side inputs (names of :data:`receval.signature.SIDE_INPUTS`) a value may be computed
    #: from: a set, or ``rule(options, given)`` returning the set (None: none, with these options);
    #: the signature's ``side`` field lists those among the given ones (:func:`receval.signature.side_reads`)
    side: frozenset[str] | Callable[[dict[str, Any], frozenset[str]], set[str] | None] | None = None
    #: option values (option: value) with which the metric also reads the row-level arrays and
    #: the item ids (``needs={"rows", "items"}``), e.g. ``recall(weight=pop)``
    needs_when: Mapping[str, Any] = field(default_factory=dict)

    def needs_for(self, options: Mapping[str, Any]) -> frozenset[str]:
        """What the form must carry for this metric with ``options`` (:attr:`needs`, plus rows
        and items under :attr:`needs_when`)."""
        if any(options.get(a) == v for a, v in self.needs_when.items()):
            return self.needs | {"rows", "items"}
        return self.needs

    def side_reads(self, options: dict[str, Any], given: frozenset[str]) -> set[str] | None:
        """The side inputs this metric with ``options`` reads when ``given`` are passed (None: none)."""
        if self.side is None:
            return None
        return set(self.side) if isinstance(self.side, frozenset) else self.side(options, given)

    def documented(self) -> object:
        return self.compute

    def axis(self, key: str) -> Axis:
        if key in self.axes:
            return self.axes[key]
        if key in self.context:
            return CONTEXT_AXES[key]
        raise SpecError(
            f"metric '{self.name}' has no option `{key}`"
            + _options_hint(key, [*self.axes, *self.context])
        )

    def all_axes(self) -> dict[str, Axis]:
        return {**self.axes, **{c: CONTEXT_AXES[c] for c in self.context}}

    def formula(self) -> str:
        """The formula section of the docstring (between 'Formula' and the next section)."""
        return _section(self.doc, "Formula")


def _options_hint(key: str, choices: list[str]) -> str:
    return did_you_mean(key, choices)


def _section(doc: str, title: str) -> str:
    lines = doc.splitlines()
    out: list[str] = []
    inside = False
    for i, line in enumerate(lines):
        if line.strip() == title and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            inside = True
            continue
        if inside:
            if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"} and line.strip():
                break
            if set(line.strip()) == {"-"} and line.strip():
                continue
            out.append(line)
    return textwrap.dedent("\n".join(out)).strip()


_REGISTRY: dict[str, Metric] = {}


def _settled(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn(h, ks, o)`` preceded by the check that the top-k sets are settled by the scores."""

    @functools.wraps(fn)
    def run(h: Any, ks: list[int], o: dict[str, Any]) -> Any:
        h.check_topk_settled(ks, name)
        return fn(h, ks, o)

    return run


def _from_parts(doc: Callable[..., Any], partial: Callable[..., Any], combine: Callable[..., np.ndarray]) -> ComputeFn:
    """The ``compute`` of a global metric given as ``partial`` and ``combine``: the values of
    one batch holding every user, ``combine([partial(h, ks, o)], ks, o)``; named and
    documented by ``doc``."""

    @functools.wraps(doc)
    def compute(h: Any, ks: list[int], o: dict[str, Any]) -> np.ndarray:
        return combine([partial(h, ks, o)], ks, o)

    return compute


def _check_traits(name: str, context: tuple[str, ...], ties: str | None, bounds: tuple[float, float] | None) -> None:
    if ("ties" in context) != (ties is not None) or ties is not None and ties not in TIES:
        raise ValueError(
            f"metric '{name}': declare ties= one of {', '.join(TIES)} (how it meets ties=average) "
            "exactly when it reads the `ties` option"
        )
    if bounds is not None and not (len(bounds) == 2 and bounds[0] < bounds[1]):
        raise ValueError(f"metric '{name}': bounds must be (lowest, highest) with lowest < highest, got {bounds!r}")


def _check_not_aliased(name: str) -> None:
    """A metric name is never an alias in another case unless the alias is declared in
    :data:`ALIAS_CASES` (so an alias never shadows a registered name silently)."""
    taken = [a for a in ALIASES if a.lower() == name.lower() and a not in ALIAS_CASES]
    taken += [f"{a}_<k>" for a in TREC_EVAL_CUTS if name.lower().startswith(a.lower() + "_")]
    if taken:
        raise ValueError(f"metric '{name}' is the alias {taken[0]} in another case: rename it, or declare the "
                         "alias in ALIAS_CASES with what each spelling means")


def register(
    name: str,
    *,
    axes: list[Axis] | None = None,
    needs_k: bool = True,
    optional_k: bool = False,
    k_changes_meaning: bool = False,
    kind: str = "user",
    context: tuple[str, ...] | None = None,
    needs: set[str] | frozenset[str] = frozenset(),
    family: str = "ranking",
    resolve_hook: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    check_hook: Callable[[dict[str, Any]], None] | None = None,
    partial: Callable[..., Any] | None = None,
    combine: Callable[..., np.ndarray] | None = None,
    skips: bool = False,
    ties: str | None = None,
    ties_settled: Mapping[str, Any] | None = None,
    higher_is_better: bool = True,
    bounds: tuple[float, float] | None = None,
    f1_of_means: Mapping[str, Any] | None = None,
    ratio_of_means: Mapping[str, Any] | None = None,
    distributed: KeyedReduction | None = None,
    side: set[str] | frozenset[str] | Callable[[dict[str, Any], frozenset[str]], set[str] | None] | None = None,
    needs_when: Mapping[str, Any] | None = None,
) -> Callable[[_Fn], _Fn]:
    """Register ``fn`` as metric ``name`` (a decorator), with its declared traits: ``ties`` (a
    key of :data:`TIES`, for a metric reading the ``ties`` option), ``ties_settled``,
    ``higher_is_better``, ``bounds``, ``f1_of_means``, ``ratio_of_means``, ``distributed``, ``side`` and ``needs_when`` (see :class:`Metric`).

    A global metric given as ``partial`` and ``combine`` may decorate its documentation alone
    (a function whose body is its docstring): its ``compute`` is then the one-batch
    ``combine([partial(h, ks, o)], ks, o)``.

    >>> from receval.registry import register, registered
    >>> @register("demo_total", kind="global", context=(), partial=lambda h, ks, o: len(h),
    ...           combine=lambda parts, ks, o: np.full(len(ks), float(sum(parts))), bounds=(0.0, float("inf")))
    ... def demo_total(h, ks, o):
    ...     "Total: how many rows (a demonstration)."
    >>> m = registered().pop("demo_total")
    >>> m.compute([1, 2, 3], [1, 2], {}).tolist(), m.summary
    ([3.0, 3.0], 'Total: how many rows (a demonstration).')
    """
    ctx = tuple(CONTEXT_AXES) if context is None else context
    _check_traits(name, ctx, ties, bounds)
    _check_not_aliased(name)
    topk_set = ties == "topk_set"

    def deco(fn: _Fn) -> _Fn:
        compute: ComputeFn = fn
        if partial is not None and combine is not None and _documents_only(fn):
            compute = _from_parts(fn, partial, combine)
        _REGISTRY[name] = Metric(
            name=name,
            compute=_settled(compute, name) if topk_set else compute,
            axes={a.name: a for a in (axes or [])},
            needs_k=needs_k,
            optional_k=optional_k,
            k_changes_meaning=k_changes_meaning,
            kind=kind,
            context=ctx,
            needs=frozenset(needs),
            family=family,
            resolve_hook=resolve_hook,
            check_hook=check_hook,
            partial=_settled(partial, name) if (topk_set and partial) else partial,
            combine=combine,
            skips=skips,
            ties=ties,
            ties_settled=dict(ties_settled or {}),
            higher_is_better=higher_is_better,
            bounds=bounds,
            f1_of_means=dict(f1_of_means or {}),
            ratio_of_means=dict(ratio_of_means or {}),
            distributed=distributed,
            side=frozenset(side) if isinstance(side, (set, frozenset)) else side,
            needs_when=dict(needs_when or {}),
        )
        return fn

    return deco


def _documentation(h: Any, ks: list[int], o: dict[str, Any]) -> Any:
    """A function whose body is its docstring."""


def _documents_only(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s body is its docstring alone (a global metric's documentation)."""
    code = getattr(fn, "__code__", None)
    return code is not None and bool(fn.__doc__) and code.co_code == _documentation.__code__.co_code


def registered() -> dict[str, Metric]:
    """The registered metrics by name (:mod:`receval.metrics` registers them on import)."""
    return _REGISTRY


# ---- names of the IR ecosystem ---------------------------------------------------------------
#
# ir_measures' and trec_eval's measure names, read as aliases: each resolves to one receval
# metric under the options of the trec_eval dialect (ir_measures' names mean trec_eval's
# definitions), so a value computed under an alias is signed by the resolved spec. The table is
# data; :func:`receval.spec.parse_spec` resolves it (the dialect lives in a higher layer).


#: how trec_eval's definitions (every ir_measures / trec_eval name) differ from receval's standard
#: ones beyond the formula: said in the one-line note an alias announces itself with
TREC_DIFFERS = "ties by item id, users without relevant items count 0"
TREC_OURS = "averages tied orders and skips those users"


@dataclass(frozen=True)
class Alias:
    """A measure name of another tool, as written (the case matters), and what it resolves to.

    ``cut``: "needs" (``P@10``), "optional" (``AP`` / ``AP@10``: without a cut-off the whole
    ranking), "whole" (``recip_rank``: always the whole ranking) or "none" (``Rprec``: the
    metric takes no cut-off). ``params``: the tool's parameter names that translate to a
    receval option (``RBP(p=0.8)``: ``p`` is ``persistence``). ``dialect``: the dialect whose
    options the alias takes (None: receval's standard definition). ``measure`` (``{k}`` the
    cut-off) and ``whole`` (without one): trec_eval's name of the measure; ``differs``: what
    the definition does that receval's standard one does not; ``ours``: what receval's own name
    does instead. These four make the note an alias announces itself with
    (:func:`receval.spec.alias_announcement`).
    """

    name: str
    metric: str
    tool: str
    means: str
    cut: str = "needs"
    dialect: str | None = "trec_eval@0.5.11"
    params: Mapping[str, str] = field(default_factory=dict)
    measure: str = ""
    whole: str = ""
    differs: str = TREC_DIFFERS
    ours: str = TREC_OURS


#: ir_measures' ``rel`` parameter (minimum grade counted relevant) is receval's ``rel``
_REL = {"rel": "rel"}

#: the aliases by name, as written; lookup is case-sensitive (``AP`` is an alias, ``ap`` is not)
ALIASES: dict[str, Alias] = {a.name: a for a in [
    Alias("P", "precision", "ir_measures", "trec_eval's P_k: hits in the top k ÷ k", params=_REL, measure="P_{k}"),
    Alias("R", "recall", "ir_measures", "trec_eval's recall_k: hits in the top k ÷ |R|", params=_REL, measure="recall_{k}"),
    Alias("AP", "map", "ir_measures", "trec_eval's map (map_cut_k with a cut-off): Σ P@i·rel_i ÷ |R|",
          cut="optional", params=_REL, measure="map_cut_{k}", whole="map", differs="÷ |R|, " + TREC_DIFFERS,
          ours="divides by min(k, |R|), averages tied orders and skips those users"),
    Alias("RR", "mrr", "ir_measures", "trec_eval's recip_rank: 1 / rank of the first relevant item (0 past the cut-off)",
          cut="optional", params=_REL, measure="recip_rank cut at {k}", whole="recip_rank"),
    Alias("nDCG", "ndcg", "ir_measures",
          "trec_eval's ndcg_cut_k (ndcg without a cut-off): gain = the graded rating, log2 discount, ideal from every judged grade",
          cut="optional", measure="ndcg_cut_{k}", whole="ndcg", differs="graded gains, rating >= 1 relevant",
          ours="has binary gains"),
    Alias("Success", "hitrate", "ir_measures", "trec_eval's success_k: 1 if a relevant item is in the top k", params=_REL,
          measure="success_{k}"),
    Alias("HR", "hitrate", "recommender papers", "hit rate: 1 if a relevant item is in the top k (receval's hitrate)",
          params=_REL, dialect=None),
    Alias("Rprec", "rprecision", "ir_measures and trec_eval", "trec_eval's Rprec: precision at |R|", cut="none", params=_REL,
          whole="Rprec"),
    Alias("RPrec", "rprecision", "ir_measures", "trec_eval's Rprec: precision at |R|", cut="none", params=_REL, whole="Rprec"),
    Alias("R-Prec", "rprecision", "papers", "trec_eval's Rprec: precision at |R|", cut="none", params=_REL, whole="Rprec"),
    Alias("recip_rank", "mrr", "trec_eval", "trec_eval's recip_rank: 1 / rank of the first relevant item, whole ranking",
          cut="whole", whole="recip_rank"),
]}

#: trec_eval's measures with the cut-off in the name (``P_10``, ``ndcg_cut_10``): name -> alias
TREC_EVAL_CUTS: dict[str, Alias] = {a.name: a for a in [
    Alias("P", "precision", "trec_eval", "trec_eval's P_k: hits in the top k ÷ k", measure="P_{k}"),
    Alias("recall", "recall", "trec_eval", "trec_eval's recall_k: hits in the top k ÷ |R|", measure="recall_{k}"),
    Alias("map_cut", "map", "trec_eval", "trec_eval's map_cut_k: Σ_{i≤k} P@i·rel_i ÷ |R|", measure="map_cut_{k}",
          differs="÷ |R|, " + TREC_DIFFERS, ours="divides by min(k, |R|), averages tied orders and skips those users"),
    Alias("ndcg_cut", "ndcg", "trec_eval", "trec_eval's ndcg_cut_k: gain = the graded rating, log2 discount, ideal cut at k",
          measure="ndcg_cut_{k}", differs="graded gains, rating >= 1 relevant", ours="has binary gains"),
    Alias("success", "hitrate", "trec_eval", "trec_eval's success_k: 1 if a relevant item is in the top k", measure="success_{k}"),
]}

#: names of other tools that are a receval metric's name in another case: receval's names are
#: read in any case, so these stay receval's (never shadowed); ``receval explain`` says what the
#: other tool means and how to write it
CASE_COLLISIONS: dict[str, str] = {
    "NDCG": "ir_measures' NDCG is trec_eval's ndcg_cut (graded gain): write nDCG@k for it",
    "MAP": "ir_measures' MAP is trec_eval's map (÷|R|): write AP@k for it, or map(denominator=r)@k",
    "MRR": "ir_measures' MRR is trec_eval's recip_rank: write RR@k for it",
    "Precision": "ir_measures' Precision is trec_eval's P_k: write P@k for it",
    "Recall": "ir_measures' Recall is trec_eval's recall_k: write R@k for it",
    "ERR": "ir_measures computes ERR@k with gdeval (graded), which receval has no dialect of; receval's graded "
           "ERR is err(grade=rating,gmax=<top grade>)@k",
    "RBP": "ir_measures' parameter p is receval's persistence (RBP(p=0.9) is rbp(persistence=0.9)); ir_measures' RBP "
           "without rel= uses graded relevance, receval's rbp binary gain unless rbp(gain=rating)",
    "Bpref": "ir_measures' Bpref is trec_eval's bpref: write bpref with --dialect trec_eval",
    "BPref": "ir_measures' BPref is trec_eval's bpref: write bpref with --dialect trec_eval",
}

#: aliases that are a receval name in another case, each declared with what it means (the
#: alias is exact-case; every other case is receval's metric)
ALIAS_CASES: dict[str, str] = {
    "nDCG": "receval's ndcg (in any other case: ndcg, NDCG) is the standard binary-gain nDCG",
}

#: measure names of other tools that receval does not offer, with what to write instead
NOT_OFFERED: dict[str, str] = {
    "judged": "receval has no Judged@k (ir_measures: the share of the top k that has a judgment in the qrels): "
              "it measures the qrels' coverage, not the ranking; count it from the inputs",
}

#: ir_measures' parameters of a receval name written in their case (``RBP(p=0.8)``)
COLLISION_PARAMS: dict[str, Mapping[str, str]] = {"RBP": {"p": "persistence"}}

#: the metrics read over each user's whole list when written without a cut-off (``mrr``, ``ndcg``,
#: ``coverage``; the signature says ``@all``), each with the options that reading implies:
#: ``precision`` over the whole list is the hits ÷ the list length. A metric not listed here has
#: no single whole-list meaning and needs its cut-off
WHOLE_LIST: dict[str, Mapping[str, Any]] = {
    "ndcg": {}, "dcg": {}, "map": {}, "recall": {}, "mrr": {}, "hitrate": {}, "precision": {"denominator": "length"},
    "coverage": {}, "novelty": {},
}
#: option values with no whole-list meaning (a division by k past any list): metric -> (option, value)
WHOLE_REFUSED: dict[str, tuple[str, str]] = {"precision": ("denominator", "k"), "map": ("denominator", "k")}

_TREC_CUT_SUFFIX = "_"


def alias_named(name: str) -> tuple[Alias, int | None] | None:
    """The alias ``name`` is (exact case), with the cut-off its name carries (``P_10``: 10).

    >>> alias_named("AP")[0].metric, alias_named("ndcg_cut_10")[0].metric, alias_named("ndcg_cut_10")[1]
    ('map', 'ndcg', 10)
    >>> alias_named("ap") is None, alias_named("map") is None
    (True, True)
    """
    if name in ALIASES:
        return ALIASES[name], None
    base, sep, k = name.rpartition(_TREC_CUT_SUFFIX)
    if sep and base in TREC_EVAL_CUTS and k.isdigit() and not k.startswith("0"):
        return TREC_EVAL_CUTS[base], int(k)
    return None


def possessive(tool: str) -> str:
    """``ir_measures'``, ``trec_eval's``."""
    return tool + ("'" if tool.endswith("s") else "'s")


def alias_hint(word: str) -> str | None:
    """What to suggest for an unknown metric name that is an alias in another case
    (``ap``: ``AP``, or receval's ``map``), or None.

    >>> alias_hint("ap")
    "did you mean 'AP' (ir_measures' name: trec_eval's map (map_cut_k with a cut-off): Σ P@i·rel_i ÷ |R|) or receval's 'map'?"
    """
    low = word.strip().lower()
    if low in NOT_OFFERED:
        return NOT_OFFERED[low]
    for a in ALIASES.values():
        if a.name.lower() == low:
            return f"did you mean '{a.name}' ({possessive(a.tool)} name: {a.means}) or receval's '{a.metric}'?"
    base, sep, k = low.rpartition(_TREC_CUT_SUFFIX)
    for a in TREC_EVAL_CUTS.values():
        if sep and a.name.lower() == base and k.isdigit():
            return f"did you mean '{a.name}_{k}' (trec_eval's name: {a.means}) or receval's '{a.metric}@{k}'?"
    return None
