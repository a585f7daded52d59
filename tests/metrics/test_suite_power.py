"""The conformance suite tells apart every two definitions the audit can name (issue 35).

For every metric, :func:`receval.audit.option_settings` lists the option settings the audit
searches (read from the registry, so a new option or value is covered as soon as it exists);
receval's value of each on every distinct input of the metric's cases is computed, and every
two settings must differ on at least one input (a value against a refusal counts: the audit
ranks a definition that refuses an answered input below one that answers it). Pairs equal on
every input by definition are listed in :data:`EQUAL_BY_DEFINITION` with the reason;
:data:`NOT_YET_SEPARATED` lists the pairs the suite does not separate yet (work left of issue
35), and a pair listed there that the suite now separates fails the test, so the list only
shrinks.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from receval.audit import Candidate, ReceValues, Refused, option_settings, probes_of
from receval.conformance.suite import cases
from receval.metrics import all_metrics

pytestmark = [pytest.mark.xdist_group("conformance")]


def _key(o: dict[str, str]) -> str:
    return ",".join(f"{a}={v}" for a, v in sorted(o.items())) or "standard"


def _differ(a: Any, b: Any) -> bool:
    """Two of receval's outcomes on one input: a value and a refusal, or two values that differ."""
    ra, rb = a is None or isinstance(a, Refused), b is None or isinstance(b, Refused)
    if ra or rb:
        return ra != rb
    (ma, ua), (mb, ub) = a, b

    def ne(x: float | None, y: float | None) -> bool:
        if x is None or y is None:
            return (x is None) != (y is None)
        return not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)

    if ne(ma, mb):
        return True
    ua, ub = ua or {}, ub or {}
    return set(ua) != set(ub) or any(ne(ua[u], ub[u]) for u in ua)


#: options every setting of a metric carries: a required option the audit does not search (bias disparity's
#: item category names one cell, and without it every setting is refused on every input: the suite's bias
#: disparity cases all name icat=g1), so that the settings are compared on their values
PINNED: dict[str, dict[str, str]] = {"bias_disparity": {"icat": "g1"}}


def equal_pairs(metric: str) -> tuple[set[tuple[str, str]], int]:
    """The pairs of option settings of ``metric`` equal on every distinct input of its cases
    (sorted names), and the number of inputs."""
    probes = probes_of(cases(metric))
    settings = option_settings(metric)
    values = ReceValues()
    table: dict[str, list[Any]] = {_key(o): [] for o in settings}
    for p in probes:
        specs = [Candidate({**o, **PINNED.get(metric, {})}).spec(metric, p.case.k) for o in settings]
        got = values(p, specs)
        for o, s in zip(settings, specs):
            table[_key(o)].append(got[s])
    same = set()
    for a, b in itertools.combinations(sorted(table), 2):
        if not any(_differ(x, y) for x, y in zip(table[a], table[b])):
            same.add((a, b))
    return same, len(probes)


#: the reason order=rank_value equals the standard order (rank) on the suite
RANKS = ("the suite's rank columns have neither equal nor skipped ranks: an input with them is one no implementation "
         "that sorts by rank can be named on (order=rank refuses equal ranks)")

#: why covered and filled (the rows a list has at positions <= k) are equal under two settings
LISTLEN_ORD = ("reads only how many rows a list of n rows has at positions <= k: by row order or by score (any tie rule) "
               "that is min(n, k), or more under ties=optimistic when a tie group crosses k, which none of "
               "1[l_k > 0], 1[l_k >= k] and min(l_k / k, 1) tells from k; ties=average keeps the count")
LISTLEN_REL = 'averages every truth user (a user without recommendations scores 0 under norecs=zero): rel enters nowhere'
LISTLEN_RVREL = 'order=rank_value equals the standard order on the suite (see RANKS) and rel enters nowhere'
LISTLEN_RANKS = ("the suite's rank columns have neither equal nor skipped ranks (an input with them is one no "
                 "implementation that sorts by rank can be named on): by rank as by row order or score, a list of n rows "
                 "has min(n, k) rows at positions <= k (more under ties=optimistic, which none of 1[l_k > 0], "
                 "1[l_k >= k] and min(l_k / k, 1) tells from k), and rel enters nowhere")
LISTLEN_DUP = "a repeated row never removes a user's first row: the list has a row at a position <= k under both"
#: why two settings of a popularity metric are equal (each equals the standard definition)
NOHIT_RANKS = ("both equal the standard definition: the metric reads no hit (hitscore does not enter), and order=rank_value "
               "equals the rank order on the suite (see RANKS)")
NOREL = ("reads no relevance: every truth user enters (the metric reads no empty policy), and the value counts list "
         "rows, item groups and train pairs, never which truth rows are relevant")
NOREL_RANKS = "order=rank_value equals the standard order on the suite (see RANKS) and rel enters nowhere (see NOREL)"

#: why the distribution metrics (coverage, entropy, gini) are equal under every relevance threshold
DIST_REL = ("reads the truth only for its users (whose lists are counted) and for tdup's refusal: a rating enters "
            "nowhere, so no threshold changes the value")
DIST_RVREL = "order=rank_value equals the standard order on the suite (see RANKS) and a rating enters nowhere (see DIST_REL)"
NOHIT_RV = ("reads no hit (which recommended relevant items count as hits does not enter), and order=rank_value equals the "
            "standard order on the suite (see RANKS)")
NEG_RV = ("neg reads graded gains only (binary gains, the standard, are never negative), and order=rank_value equals the "
          "standard order on the suite (see RANKS)")

#: why dup=first equals dup=keep for metrics that read only which items lie at positions <= k
RANK_DUP = ("every audit input carries a rank column, so the standard order is the rank's: dup=first keeps a repeated "
            "item's best-ranked row at its rank value and drops the other, so the items at positions <= k are those of "
            "dup=keep, and the metric reads only {}")

#: (metric, setting, setting): equal on every input by definition, with the reason
EQUAL_BY_DEFINITION: dict[tuple[str, str, str], str] = {
    ('covered', 'order=input', 'order=rank_value'): LISTLEN_RANKS,
    ('covered', 'order=input', 'rel=1'): LISTLEN_RANKS,
    ('covered', 'order=input', 'rel=all'): LISTLEN_RANKS,
    ('covered', 'order=input', 'standard'): LISTLEN_RANKS,
    ('covered', 'order=rank_value', 'order=score,ties=average'): LISTLEN_RANKS,
    ('covered', 'order=rank_value', 'order=score,ties=input'): LISTLEN_RANKS,
    ('covered', 'order=rank_value', 'order=score,ties=item'): LISTLEN_RANKS,
    ('covered', 'order=rank_value', 'order=score,ties=item_desc'): LISTLEN_RANKS,
    ('covered', 'order=rank_value', 'order=score,ties=optimistic'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=average', 'rel=1'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=average', 'rel=all'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=average', 'standard'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=input', 'rel=1'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=input', 'rel=all'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=input', 'standard'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=item', 'rel=1'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=item', 'rel=all'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=item', 'standard'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=item_desc', 'rel=1'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=item_desc', 'rel=all'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=item_desc', 'standard'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=optimistic', 'rel=1'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=optimistic', 'rel=all'): LISTLEN_RANKS,
    ('covered', 'order=score,ties=optimistic', 'standard'): LISTLEN_RANKS,
    ('filled', 'order=input', 'order=rank_value'): LISTLEN_RANKS,
    ('filled', 'order=input', 'rel=1'): LISTLEN_RANKS,
    ('filled', 'order=input', 'rel=all'): LISTLEN_RANKS,
    ('filled', 'order=input', 'standard'): LISTLEN_RANKS,
    ('filled', 'order=rank_value', 'order=score,ties=average'): LISTLEN_RANKS,
    ('filled', 'order=rank_value', 'order=score,ties=input'): LISTLEN_RANKS,
    ('filled', 'order=rank_value', 'order=score,ties=item'): LISTLEN_RANKS,
    ('filled', 'order=rank_value', 'order=score,ties=item_desc'): LISTLEN_RANKS,
    ('filled', 'order=rank_value', 'order=score,ties=optimistic'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=average', 'rel=1'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=average', 'rel=all'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=average', 'standard'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=input', 'rel=1'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=input', 'rel=all'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=input', 'standard'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=item', 'rel=1'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=item', 'rel=all'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=item', 'standard'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=item_desc', 'rel=1'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=item_desc', 'rel=all'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=item_desc', 'standard'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=optimistic', 'rel=1'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=optimistic', 'rel=all'): LISTLEN_RANKS,
    ('filled', 'order=score,ties=optimistic', 'standard'): LISTLEN_RANKS,
    ('covered', 'dup=first', 'dup=keep'): LISTLEN_DUP,
    ('covered', 'order=input', 'order=score,ties=average'): LISTLEN_ORD,
    ('covered', 'order=input', 'order=score,ties=input'): LISTLEN_ORD,
    ('covered', 'order=input', 'order=score,ties=item'): LISTLEN_ORD,
    ('covered', 'order=input', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('covered', 'order=input', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('covered', 'order=rank_value', 'rel=1'): LISTLEN_RVREL,
    ('covered', 'order=rank_value', 'rel=all'): LISTLEN_RVREL,
    ('covered', 'order=score,ties=average', 'order=score,ties=input'): LISTLEN_ORD,
    ('covered', 'order=score,ties=average', 'order=score,ties=item'): LISTLEN_ORD,
    ('covered', 'order=score,ties=average', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('covered', 'order=score,ties=average', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('covered', 'order=score,ties=input', 'order=score,ties=item'): LISTLEN_ORD,
    ('covered', 'order=score,ties=input', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('covered', 'order=score,ties=input', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('covered', 'order=score,ties=item', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('covered', 'order=score,ties=item', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('covered', 'order=score,ties=item_desc', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('covered', 'rel=1', 'rel=all'): LISTLEN_REL,
    ('covered', 'rel=1', 'standard'): LISTLEN_REL,
    ('covered', 'rel=all', 'standard'): LISTLEN_REL,
    ('filled', 'order=input', 'order=score,ties=average'): LISTLEN_ORD,
    ('filled', 'order=input', 'order=score,ties=input'): LISTLEN_ORD,
    ('filled', 'order=input', 'order=score,ties=item'): LISTLEN_ORD,
    ('filled', 'order=input', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('filled', 'order=input', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('filled', 'order=rank_value', 'rel=1'): LISTLEN_RVREL,
    ('filled', 'order=rank_value', 'rel=all'): LISTLEN_RVREL,
    ('filled', 'order=score,ties=average', 'order=score,ties=input'): LISTLEN_ORD,
    ('filled', 'order=score,ties=average', 'order=score,ties=item'): LISTLEN_ORD,
    ('filled', 'order=score,ties=average', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('filled', 'order=score,ties=average', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('filled', 'order=score,ties=input', 'order=score,ties=item'): LISTLEN_ORD,
    ('filled', 'order=score,ties=input', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('filled', 'order=score,ties=input', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('filled', 'order=score,ties=item', 'order=score,ties=item_desc'): LISTLEN_ORD,
    ('filled', 'order=score,ties=item', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('filled', 'order=score,ties=item_desc', 'order=score,ties=optimistic'): LISTLEN_ORD,
    ('filled', 'rel=1', 'rel=all'): LISTLEN_REL,
    ('filled', 'rel=1', 'standard'): LISTLEN_REL,
    ('filled', 'rel=all', 'standard'): LISTLEN_REL,
    ('precision', 'average=micro', 'standard'): 'den:k: every averaged user divides by the same k, so the pooled Σ hits / Σ k is the mean of hits / k (micro and macro differ under den:length or den:min_k_r)',
    ('precision', 'average=micro', 'order=rank_value'): 'the same as standard (den:k, see above); order=rank_value equals standard on the suite (no equal or skipped ranks)',
    ('ab_ndcg', 'empty=zero', 'rel=all'): 'a user without a relevant item has no rating > 0, so no ideal candidate (P > 0): DCG* = 0 and the value 0, left in the mean either way',
    ('ab_ndcg', 'order=rank_value', 'standard'): RANKS,
    ('coverage', 'dup=first', 'dup=keep'): RANK_DUP.format("which items are there"),
    ('hitrate', 'dup=first', 'dup=keep'): RANK_DUP.format("whether a hit is there"),
    ('mrr', 'dup=first', 'dup=keep'): RANK_DUP.format("the position of the first hit"),
    ('srecall', 'dup=first', 'dup=keep'): RANK_DUP.format("the categories of the hits there"),
    ('ab_ndcg', 'order=score,ties=average', 'order=score,ties=optimistic'): (
        'both refuse exactly where a tie group starts at a position <= k (average: no tie-averaged value; optimistic: '
        'its rows share that position, whose order the gains read) and give the plain value elsewhere'),
    ('auc', 'noneg=skip', 'nopos=skip'): 'auc@k refuses both (a per-user mean leaves no user out: only auc(form=users) skips) and the stacked auc reads neither',
    ('aclt', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('aclt', 'order=rank_value', 'standard'): RANKS,
    ('aclt', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('alpha_ndcg', 'order=rank_value', 'standard'): RANKS,
    ('aplt', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('aplt', 'order=rank_value', 'standard'): RANKS,
    ('aplt', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('arp', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('arp', 'order=rank_value', 'standard'): RANKS,
    ('arp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('auc', 'order=rank_value', 'standard'): RANKS,
    ('auc', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('bias_disparity', 'order=rank_value', 'standard'): RANKS,
    ('bias_disparity', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('bpref', 'order=rank_value', 'standard'): RANKS,
    ('catdiv', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('catdiv', 'order=rank_value', 'standard'): RANKS,
    ('catdiv', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('coverage', 'order=rank_value', 'standard'): RANKS,
    ('coverage', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('covered', 'order=rank_value', 'standard'): RANKS,
    ('covered', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('dcg', 'neg=zero', 'standard'): 'neg reads graded gains only: binary gains (the standard) are never negative',
    ('dcg', 'order=rank_value', 'standard'): RANKS,
    ('dcg', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('efd', 'order=rank_value', 'standard'): RANKS,
    ('efd', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('entropy', 'order=rank_value', 'standard'): RANKS,
    ('entropy', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('epc', 'order=rank_value', 'standard'): RANKS,
    ('epc', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('err', 'order=rank_value', 'standard'): RANKS,
    ('err', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('f1', 'order=rank_value', 'standard'): RANKS,
    ('filled', 'order=rank_value', 'standard'): RANKS,
    ('filled', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('gauc', 'order=rank_value', 'standard'): RANKS,
    ('gauc', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('gini', 'order=rank_value', 'standard'): RANKS,
    ('gini', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('hitrate', 'order=rank_value', 'standard'): RANKS,
    ('hitrate', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('ild', 'order=rank_value', 'standard'): RANKS,
    ('ild', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('intersection', 'order=rank_value', 'standard'): RANKS,
    ('intersection', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('lauc', 'order=rank_value', 'standard'): RANKS,
    ('mad', 'order=rank_value', 'standard'): RANKS,
    ('map', 'indicator=distinct', 'standard'): 'a repeated hit needs dup=keep: the standard refuses repeated recommendations',
    ('map', 'order=rank_value', 'standard'): RANKS,
    ('mar', 'order=rank_value', 'standard'): RANKS,
    ('miscalibration', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('miscalibration', 'order=rank_value', 'standard'): RANKS,
    ('miscalibration', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('mrr', 'order=rank_value', 'standard'): RANKS,
    ('mrr', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('ncrr', 'order=rank_value', 'standard'): RANKS,
    ('ndcg', 'neg=zero', 'standard'): 'neg reads graded gains only: binary gains (the standard) are never negative',
    ('ndcg', 'order=rank_value', 'standard'): RANKS,
    ('novelty', 'order=rank_value', 'standard'): RANKS,
    ('novelty', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('pap', 'order=rank_value', 'standard'): RANKS,
    ('pauc', 'order=rank_value', 'standard'): RANKS,
    ('popreo', 'order=rank_value', 'standard'): RANKS,
    ('poprsp', 'order=rank_value', 'standard'): RANKS,
    ('poprsp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('precision', 'order=rank_value', 'standard'): RANKS,
    ('precision', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('rbp', 'order=rank_value', 'standard'): RANKS,
    ('rbp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('recall', 'order=rank_value', 'standard'): RANKS,
    ('reo', 'order=rank_value', 'standard'): RANKS,
    ('rprecision', 'order=rank_value', 'standard'): RANKS,
    ('rsp', 'order=rank_value', 'standard'): RANKS,
    ('rsp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('serendipity', 'order=rank_value', 'standard'): RANKS,
    ('serendipity', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('srecall', 'order=rank_value', 'standard'): RANKS,
    ('srecall', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('surprisal', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('surprisal', 'order=rank_value', 'standard'): RANKS,
    ('surprisal', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('unexpectedness', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('unexpectedness', 'order=rank_value', 'standard'): RANKS,
    ('unexpectedness', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('unseen', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('unseen', 'order=rank_value', 'standard'): RANKS,
    ('unseen', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    # issue 35 (powrank): the distribution, list and graded metrics
    ('coverage', 'rel=1', 'rel=all'): DIST_REL,
    ('coverage', 'rel=1', 'standard'): DIST_REL,
    ('coverage', 'rel=all', 'standard'): DIST_REL,
    ('coverage', 'order=rank_value', 'rel=1'): DIST_RVREL,
    ('coverage', 'order=rank_value', 'rel=all'): DIST_RVREL,
    ('entropy', 'rel=1', 'rel=all'): DIST_REL,
    ('entropy', 'rel=1', 'standard'): DIST_REL,
    ('entropy', 'rel=all', 'standard'): DIST_REL,
    ('entropy', 'order=rank_value', 'rel=1'): DIST_RVREL,
    ('entropy', 'order=rank_value', 'rel=all'): DIST_RVREL,
    ('gini', 'rel=1', 'rel=all'): DIST_REL,
    ('gini', 'rel=1', 'standard'): DIST_REL,
    ('gini', 'rel=all', 'standard'): DIST_REL,
    ('gini', 'order=rank_value', 'rel=1'): DIST_RVREL,
    ('gini', 'order=rank_value', 'rel=all'): DIST_RVREL,
    ('catdiv', 'hitscore=positive', 'order=rank_value'): NOHIT_RV,
    ('miscalibration', 'hitscore=positive', 'order=rank_value'): NOHIT_RV,
    ('ild', 'hitscore=positive', 'order=rank_value'): NOHIT_RV,
    ('ild', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('ndcg', 'neg=zero', 'order=rank_value'): NEG_RV,
    ('dcg', 'neg=zero', 'order=rank_value'): NEG_RV,
    ('map', 'indicator=distinct', 'order=rank_value'): ('a repeated hit needs dup=keep: the standard refuses repeated recommendations; and order=rank_value equals the standard order on the suite (see RANKS)'),
    # the popularity metrics (issue 35, scenarios_pop.py): pairs no input can tell apart
    ('novelty', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('aclt', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('aplt', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('arp', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('novelty', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('surprisal', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('unexpectedness', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('unseen', 'hitscore=positive', 'order=rank_value'): NOHIT_RANKS,
    ('bias_disparity', 'order=rank_value', 'rel=1'): NOREL_RANKS,
    ('bias_disparity', 'order=rank_value', 'rel=all'): NOREL_RANKS,
    ('bias_disparity', 'rel=1', 'rel=all'): NOREL,
    ('bias_disparity', 'rel=1', 'standard'): NOREL,
    ('bias_disparity', 'rel=all', 'standard'): NOREL,
    ('poprsp', 'order=rank_value', 'rel=1'): NOREL_RANKS,
    ('poprsp', 'order=rank_value', 'rel=all'): NOREL_RANKS,
    ('poprsp', 'rel=1', 'rel=all'): NOREL,
    ('poprsp', 'rel=1', 'standard'): NOREL,
    ('poprsp', 'rel=all', 'standard'): NOREL,
    ('rsp', 'order=rank_value', 'rel=1'): NOREL_RANKS,
    ('rsp', 'order=rank_value', 'rel=all'): NOREL_RANKS,
    ('rsp', 'rel=1', 'rel=all'): NOREL,
    ('rsp', 'rel=1', 'standard'): NOREL,
    ('rsp', 'rel=all', 'standard'): NOREL,
    ('intersection', 'order=rank_value', 'rel=1'): LISTLEN_RVREL,
    ('intersection', 'order=rank_value', 'rel=all'): LISTLEN_RVREL,
    ('intersection', 'rel=1', 'rel=all'): LISTLEN_REL,
    ('intersection', 'rel=1', 'standard'): LISTLEN_REL,
    ('intersection', 'rel=all', 'standard'): LISTLEN_REL,
}

#: pairs the suite does not tell apart yet (this list only shrinks; 744 when the test was written, none now)
NOT_YET_SEPARATED: set[tuple[str, str, str]] = set()

#: metrics with fewer than 10 distinct inputs: no reference implementation covers them, so the
#: suite holds only their hand-checked arithmetic cases (work left of issue 35; only shrinks)
FEW_INPUTS: dict[str, int] = {}


@pytest.mark.parametrize("metric", [m.name for m in all_metrics()])
def test_the_suite_tells_every_two_option_settings_apart(metric):
    same, n = equal_pairs(metric)
    if metric in FEW_INPUTS:
        assert n == FEW_INPUTS[metric] < 10, f"{metric}: {n} distinct inputs now: update FEW_INPUTS"
        pytest.xfail(f"{metric}: {n} distinct inputs (no reference implementation): issue 35, work left")
    assert n >= 10, f"{metric}: {n} distinct inputs in the suite, fewer than 10"
    left = {(a, b) for a, b in same if (metric, a, b) not in EQUAL_BY_DEFINITION and (metric, a, b) not in NOT_YET_SEPARATED}
    assert not left, f"{metric}: {len(left)} pairs of option settings equal on every input: {sorted(left)[:10]}"
    stale = {(a, b) for m, a, b in NOT_YET_SEPARATED if m == metric} - same
    assert not stale, f"{metric}: now told apart, drop from NOT_YET_SEPARATED: {sorted(stale)}"
    # a pair equal by definition that some input tells apart: the reason is wrong, or a bug
    wrong = {(a, b) for m, a, b in EQUAL_BY_DEFINITION if m == metric} - same
    assert not wrong, f"{metric}: told apart although listed as equal by definition: {sorted(wrong)}"
