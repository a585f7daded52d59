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


def equal_pairs(metric: str) -> tuple[set[tuple[str, str]], int]:
    """The pairs of option settings of ``metric`` equal on every distinct input of its cases
    (sorted names), and the number of inputs."""
    probes = probes_of(cases(metric))
    settings = option_settings(metric)
    values = ReceValues()
    table: dict[str, list[Any]] = {_key(o): [] for o in settings}
    for p in probes:
        specs = [Candidate(o).spec(metric, p.case.k) for o in settings]
        got = values(p, specs)
        for o, s in zip(settings, specs):
            table[_key(o)].append(got[s])
    same = set()
    for a, b in itertools.combinations(sorted(table), 2):
        if not any(_differ(x, y) for x, y in zip(table[a], table[b])):
            same.add((a, b))
    return same, len(probes)


#: (metric, setting, setting): equal on every input by definition, with the reason
EQUAL_BY_DEFINITION: dict[tuple[str, str, str], str] = {
    ('aclt', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('aclt', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('aplt', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('aplt', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('arp', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('arp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('catdiv', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('catdiv', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('covered', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('dcg', 'neg=zero', 'standard'): 'neg reads graded gains only: binary gains (the standard) are never negative',
    ('dcg', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('efd', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('epc', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('err', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('filled', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('hitrate', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('intersection', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('map', 'indicator=distinct', 'standard'): 'a repeated hit needs dup=keep: the standard refuses repeated recommendations',
    ('miscalibration', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('miscalibration', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('mrr', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('ndcg', 'neg=zero', 'standard'): 'neg reads graded gains only: binary gains (the standard) are never negative',
    ('popreo', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('poprsp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('precision', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('rbp', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('serendipity', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('srecall', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('surprisal', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('surprisal', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('unexpectedness', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('unexpectedness', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
    ('unseen', 'hitscore=positive', 'standard'): 'reads no hit: which recommended relevant items count as hits does not enter',
    ('unseen', 'tdup=keep', 'tdup=max'): 'reads hits, not |R|: keep and max match a hit to the same (highest) truth row',
}

#: pairs the suite does not tell apart yet (work left of issue 35; this list only shrinks): popularity
#: metrics whose train has no repeated (user, item) row (count=users), list metrics read as sets
#: (orderings that give the same top-k set), dup rules under the rank column (rank values kept)
NOT_YET_SEPARATED: set[tuple[str, str, str]] = {
    ('aclt', 'count=users', 'hitscore=positive'),
    ('aclt', 'count=users', 'standard'),
    ('aclt', 'dup=first', 'dup=keep'),
    ('aclt', 'empty=zero', 'rel=all'),
    ('aclt', 'order=input', 'order=rank_value'),
    ('aclt', 'order=input', 'order=score,ties=input'),
    ('aclt', 'order=input', 'order=score,ties=item_desc'),
    ('aclt', 'order=input', 'order=score,ties=optimistic'),
    ('aclt', 'order=rank_value', 'order=score,ties=input'),
    ('aclt', 'order=rank_value', 'order=score,ties=item_desc'),
    ('aclt', 'order=rank_value', 'order=score,ties=optimistic'),
    ('aclt', 'order=score,ties=input', 'order=score,ties=item_desc'),
    ('aclt', 'order=score,ties=input', 'order=score,ties=optimistic'),
    ('aclt', 'order=score,ties=item_desc', 'order=score,ties=optimistic'),
    ('aplt', 'count=users', 'hitscore=positive'),
    ('aplt', 'count=users', 'standard'),
    ('aplt', 'dup=first', 'dup=keep'),
    ('aplt', 'empty=zero', 'rel=all'),
    ('aplt', 'order=input', 'order=rank_value'),
    ('aplt', 'order=input', 'order=score,ties=input'),
    ('aplt', 'order=input', 'order=score,ties=item_desc'),
    ('aplt', 'order=rank_value', 'order=score,ties=input'),
    ('aplt', 'order=rank_value', 'order=score,ties=item_desc'),
    ('aplt', 'order=score,ties=average', 'order=score,ties=optimistic'),
    ('aplt', 'order=score,ties=input', 'order=score,ties=item_desc'),
    ('arp', 'count=users', 'hitscore=positive'),
    ('arp', 'count=users', 'standard'),
    ('catdiv', 'order=score,ties=input', 'order=score,ties=item'),
    ('covered', 'dup=first', 'dup=keep'),
    ('covered', 'order=input', 'order=rank_value'),
    ('covered', 'order=input', 'order=score,ties=average'),
    ('covered', 'order=input', 'order=score,ties=input'),
    ('covered', 'order=input', 'order=score,ties=item'),
    ('covered', 'order=input', 'order=score,ties=item_desc'),
    ('covered', 'order=input', 'order=score,ties=optimistic'),
    ('covered', 'order=rank_value', 'order=score,ties=average'),
    ('covered', 'order=rank_value', 'order=score,ties=input'),
    ('covered', 'order=rank_value', 'order=score,ties=item'),
    ('covered', 'order=rank_value', 'order=score,ties=item_desc'),
    ('covered', 'order=rank_value', 'order=score,ties=optimistic'),
    ('covered', 'order=score,ties=average', 'order=score,ties=input'),
    ('covered', 'order=score,ties=average', 'order=score,ties=item'),
    ('covered', 'order=score,ties=average', 'order=score,ties=item_desc'),
    ('covered', 'order=score,ties=average', 'order=score,ties=optimistic'),
    ('covered', 'order=score,ties=input', 'order=score,ties=item'),
    ('covered', 'order=score,ties=input', 'order=score,ties=item_desc'),
    ('covered', 'order=score,ties=input', 'order=score,ties=optimistic'),
    ('covered', 'order=score,ties=item', 'order=score,ties=item_desc'),
    ('covered', 'order=score,ties=item', 'order=score,ties=optimistic'),
    ('covered', 'order=score,ties=item_desc', 'order=score,ties=optimistic'),
    ('covered', 'rel=1', 'rel=all'),
    ('covered', 'rel=1', 'standard'),
    ('covered', 'rel=all', 'standard'),
    ('filled', 'order=input', 'order=score,ties=average'),
    ('filled', 'order=input', 'order=score,ties=input'),
    ('filled', 'order=input', 'order=score,ties=item'),
    ('filled', 'order=input', 'order=score,ties=item_desc'),
    ('filled', 'order=input', 'order=score,ties=optimistic'),
    ('filled', 'order=score,ties=average', 'order=score,ties=input'),
    ('filled', 'order=score,ties=average', 'order=score,ties=item'),
    ('filled', 'order=score,ties=average', 'order=score,ties=item_desc'),
    ('filled', 'order=score,ties=average', 'order=score,ties=optimistic'),
    ('filled', 'order=score,ties=input', 'order=score,ties=item'),
    ('filled', 'order=score,ties=input', 'order=score,ties=item_desc'),
    ('filled', 'order=score,ties=input', 'order=score,ties=optimistic'),
    ('filled', 'order=score,ties=item', 'order=score,ties=item_desc'),
    ('filled', 'order=score,ties=item', 'order=score,ties=optimistic'),
    ('filled', 'order=score,ties=item_desc', 'order=score,ties=optimistic'),
    ('filled', 'rel=1', 'rel=all'),
    ('filled', 'rel=1', 'standard'),
    ('filled', 'rel=all', 'standard'),
    ('hitrate', 'dup=first', 'dup=keep'),
    ('intersection', 'dup=first', 'dup=keep'),
    ('intersection', 'order=input', 'order=score,ties=input'),
    ('intersection', 'order=input', 'order=score,ties=item'),
    ('intersection', 'order=score,ties=input', 'order=score,ties=item'),
    ('intersection', 'rel=1', 'rel=all'),
    ('intersection', 'rel=1', 'standard'),
    ('intersection', 'rel=all', 'standard'),
    ('miscalibration', 'dup=first', 'dup=keep'),
    ('miscalibration', 'empty=zero', 'rel=all'),
    ('miscalibration', 'order=score,ties=input', 'order=score,ties=item'),
    ('mrr', 'dup=first', 'dup=keep'),
    ('popreo', 'count=users', 'dup=first'),
    ('popreo', 'count=users', 'dup=keep'),
    ('popreo', 'count=users', 'order=input'),
    ('popreo', 'count=users', 'order=rank_value'),
    ('popreo', 'count=users', 'order=score,ties=average'),
    ('popreo', 'count=users', 'order=score,ties=input'),
    ('popreo', 'count=users', 'order=score,ties=item'),
    ('popreo', 'count=users', 'order=score,ties=item_desc'),
    ('popreo', 'count=users', 'order=score,ties=optimistic'),
    ('popreo', 'count=users', 'standard'),
    ('popreo', 'count=users', 'tdup=first'),
    ('popreo', 'count=users', 'tdup=keep'),
    ('popreo', 'count=users', 'tdup=max'),
    ('popreo', 'count=users', 'users=listed'),
    ('popreo', 'dup=first', 'dup=keep'),
    ('popreo', 'dup=first', 'order=input'),
    ('popreo', 'dup=first', 'order=rank_value'),
    ('popreo', 'dup=first', 'order=score,ties=average'),
    ('popreo', 'dup=first', 'order=score,ties=input'),
    ('popreo', 'dup=first', 'order=score,ties=item'),
    ('popreo', 'dup=first', 'order=score,ties=item_desc'),
    ('popreo', 'dup=first', 'order=score,ties=optimistic'),
    ('popreo', 'dup=first', 'standard'),
    ('popreo', 'dup=first', 'tdup=first'),
    ('popreo', 'dup=first', 'tdup=keep'),
    ('popreo', 'dup=first', 'tdup=max'),
    ('popreo', 'dup=first', 'users=listed'),
    ('popreo', 'dup=keep', 'order=input'),
    ('popreo', 'dup=keep', 'order=rank_value'),
    ('popreo', 'dup=keep', 'order=score,ties=average'),
    ('popreo', 'dup=keep', 'order=score,ties=input'),
    ('popreo', 'dup=keep', 'order=score,ties=item'),
    ('popreo', 'dup=keep', 'order=score,ties=item_desc'),
    ('popreo', 'dup=keep', 'order=score,ties=optimistic'),
    ('popreo', 'dup=keep', 'standard'),
    ('popreo', 'dup=keep', 'tdup=first'),
    ('popreo', 'dup=keep', 'tdup=keep'),
    ('popreo', 'dup=keep', 'tdup=max'),
    ('popreo', 'dup=keep', 'users=listed'),
    ('popreo', 'order=input', 'order=rank_value'),
    ('popreo', 'order=input', 'order=score,ties=average'),
    ('popreo', 'order=input', 'order=score,ties=input'),
    ('popreo', 'order=input', 'order=score,ties=item'),
    ('popreo', 'order=input', 'order=score,ties=item_desc'),
    ('popreo', 'order=input', 'order=score,ties=optimistic'),
    ('popreo', 'order=input', 'standard'),
    ('popreo', 'order=input', 'tdup=first'),
    ('popreo', 'order=input', 'tdup=keep'),
    ('popreo', 'order=input', 'tdup=max'),
    ('popreo', 'order=input', 'users=listed'),
    ('popreo', 'order=rank_value', 'order=score,ties=average'),
    ('popreo', 'order=rank_value', 'order=score,ties=input'),
    ('popreo', 'order=rank_value', 'order=score,ties=item'),
    ('popreo', 'order=rank_value', 'order=score,ties=item_desc'),
    ('popreo', 'order=rank_value', 'order=score,ties=optimistic'),
    ('popreo', 'order=rank_value', 'standard'),
    ('popreo', 'order=rank_value', 'tdup=first'),
    ('popreo', 'order=rank_value', 'tdup=keep'),
    ('popreo', 'order=rank_value', 'tdup=max'),
    ('popreo', 'order=rank_value', 'users=listed'),
    ('popreo', 'order=score,ties=average', 'order=score,ties=input'),
    ('popreo', 'order=score,ties=average', 'order=score,ties=item'),
    ('popreo', 'order=score,ties=average', 'order=score,ties=item_desc'),
    ('popreo', 'order=score,ties=average', 'order=score,ties=optimistic'),
    ('popreo', 'order=score,ties=average', 'standard'),
    ('popreo', 'order=score,ties=average', 'tdup=first'),
    ('popreo', 'order=score,ties=average', 'tdup=keep'),
    ('popreo', 'order=score,ties=average', 'tdup=max'),
    ('popreo', 'order=score,ties=average', 'users=listed'),
    ('popreo', 'order=score,ties=input', 'order=score,ties=item'),
    ('popreo', 'order=score,ties=input', 'order=score,ties=item_desc'),
    ('popreo', 'order=score,ties=input', 'order=score,ties=optimistic'),
    ('popreo', 'order=score,ties=input', 'standard'),
    ('popreo', 'order=score,ties=input', 'tdup=first'),
    ('popreo', 'order=score,ties=input', 'tdup=keep'),
    ('popreo', 'order=score,ties=input', 'tdup=max'),
    ('popreo', 'order=score,ties=input', 'users=listed'),
    ('popreo', 'order=score,ties=item', 'order=score,ties=item_desc'),
    ('popreo', 'order=score,ties=item', 'order=score,ties=optimistic'),
    ('popreo', 'order=score,ties=item', 'standard'),
    ('popreo', 'order=score,ties=item', 'tdup=first'),
    ('popreo', 'order=score,ties=item', 'tdup=keep'),
    ('popreo', 'order=score,ties=item', 'tdup=max'),
    ('popreo', 'order=score,ties=item', 'users=listed'),
    ('popreo', 'order=score,ties=item_desc', 'order=score,ties=optimistic'),
    ('popreo', 'order=score,ties=item_desc', 'standard'),
    ('popreo', 'order=score,ties=item_desc', 'tdup=first'),
    ('popreo', 'order=score,ties=item_desc', 'tdup=keep'),
    ('popreo', 'order=score,ties=item_desc', 'tdup=max'),
    ('popreo', 'order=score,ties=item_desc', 'users=listed'),
    ('popreo', 'order=score,ties=optimistic', 'standard'),
    ('popreo', 'order=score,ties=optimistic', 'tdup=first'),
    ('popreo', 'order=score,ties=optimistic', 'tdup=keep'),
    ('popreo', 'order=score,ties=optimistic', 'tdup=max'),
    ('popreo', 'order=score,ties=optimistic', 'users=listed'),
    ('popreo', 'standard', 'tdup=first'),
    ('popreo', 'standard', 'tdup=keep'),
    ('popreo', 'standard', 'tdup=max'),
    ('popreo', 'standard', 'users=listed'),
    ('popreo', 'tdup=first', 'tdup=keep'),
    ('popreo', 'tdup=first', 'tdup=max'),
    ('popreo', 'tdup=first', 'users=listed'),
    ('popreo', 'tdup=keep', 'users=listed'),
    ('popreo', 'tdup=max', 'users=listed'),
    ('poprsp', 'count=users', 'dup=first'),
    ('poprsp', 'count=users', 'dup=keep'),
    ('poprsp', 'count=users', 'order=input'),
    ('poprsp', 'count=users', 'order=rank_value'),
    ('poprsp', 'count=users', 'order=score,ties=input'),
    ('poprsp', 'count=users', 'order=score,ties=item_desc'),
    ('poprsp', 'count=users', 'rel=1'),
    ('poprsp', 'count=users', 'rel=all'),
    ('poprsp', 'count=users', 'standard'),
    ('poprsp', 'count=users', 'tdup=first'),
    ('poprsp', 'count=users', 'tdup=keep'),
    ('poprsp', 'count=users', 'tdup=max'),
    ('poprsp', 'dup=first', 'dup=keep'),
    ('poprsp', 'dup=first', 'order=input'),
    ('poprsp', 'dup=first', 'order=rank_value'),
    ('poprsp', 'dup=first', 'order=score,ties=input'),
    ('poprsp', 'dup=first', 'order=score,ties=item_desc'),
    ('poprsp', 'dup=first', 'rel=1'),
    ('poprsp', 'dup=first', 'rel=all'),
    ('poprsp', 'dup=first', 'standard'),
    ('poprsp', 'dup=first', 'tdup=first'),
    ('poprsp', 'dup=first', 'tdup=keep'),
    ('poprsp', 'dup=first', 'tdup=max'),
    ('poprsp', 'dup=keep', 'order=input'),
    ('poprsp', 'dup=keep', 'order=rank_value'),
    ('poprsp', 'dup=keep', 'order=score,ties=input'),
    ('poprsp', 'dup=keep', 'order=score,ties=item_desc'),
    ('poprsp', 'dup=keep', 'rel=1'),
    ('poprsp', 'dup=keep', 'rel=all'),
    ('poprsp', 'dup=keep', 'standard'),
    ('poprsp', 'dup=keep', 'tdup=first'),
    ('poprsp', 'dup=keep', 'tdup=keep'),
    ('poprsp', 'dup=keep', 'tdup=max'),
    ('poprsp', 'order=input', 'order=rank_value'),
    ('poprsp', 'order=input', 'order=score,ties=input'),
    ('poprsp', 'order=input', 'order=score,ties=item_desc'),
    ('poprsp', 'order=input', 'rel=1'),
    ('poprsp', 'order=input', 'rel=all'),
    ('poprsp', 'order=input', 'standard'),
    ('poprsp', 'order=input', 'tdup=first'),
    ('poprsp', 'order=input', 'tdup=keep'),
    ('poprsp', 'order=input', 'tdup=max'),
    ('poprsp', 'order=rank_value', 'order=score,ties=input'),
    ('poprsp', 'order=rank_value', 'order=score,ties=item_desc'),
    ('poprsp', 'order=rank_value', 'rel=1'),
    ('poprsp', 'order=rank_value', 'rel=all'),
    ('poprsp', 'order=rank_value', 'standard'),
    ('poprsp', 'order=rank_value', 'tdup=first'),
    ('poprsp', 'order=rank_value', 'tdup=keep'),
    ('poprsp', 'order=rank_value', 'tdup=max'),
    ('poprsp', 'order=score,ties=input', 'order=score,ties=item_desc'),
    ('poprsp', 'order=score,ties=input', 'rel=1'),
    ('poprsp', 'order=score,ties=input', 'rel=all'),
    ('poprsp', 'order=score,ties=input', 'standard'),
    ('poprsp', 'order=score,ties=input', 'tdup=first'),
    ('poprsp', 'order=score,ties=input', 'tdup=keep'),
    ('poprsp', 'order=score,ties=input', 'tdup=max'),
    ('poprsp', 'order=score,ties=item_desc', 'rel=1'),
    ('poprsp', 'order=score,ties=item_desc', 'rel=all'),
    ('poprsp', 'order=score,ties=item_desc', 'standard'),
    ('poprsp', 'order=score,ties=item_desc', 'tdup=first'),
    ('poprsp', 'order=score,ties=item_desc', 'tdup=keep'),
    ('poprsp', 'order=score,ties=item_desc', 'tdup=max'),
    ('poprsp', 'rel=1', 'rel=all'),
    ('poprsp', 'rel=1', 'standard'),
    ('poprsp', 'rel=1', 'tdup=first'),
    ('poprsp', 'rel=1', 'tdup=keep'),
    ('poprsp', 'rel=1', 'tdup=max'),
    ('poprsp', 'rel=all', 'standard'),
    ('poprsp', 'rel=all', 'tdup=first'),
    ('poprsp', 'rel=all', 'tdup=keep'),
    ('poprsp', 'rel=all', 'tdup=max'),
    ('poprsp', 'standard', 'tdup=first'),
    ('poprsp', 'standard', 'tdup=keep'),
    ('poprsp', 'standard', 'tdup=max'),
    ('poprsp', 'tdup=first', 'tdup=keep'),
    ('poprsp', 'tdup=first', 'tdup=max'),
    ('rprecision', 'order=score,ties=input', 'order=score,ties=item'),
    ('srecall', 'dup=first', 'dup=keep'),
    ('unexpectedness', 'order=input', 'order=score,ties=input'),
    ('unexpectedness', 'order=input', 'order=score,ties=item'),
    ('unexpectedness', 'order=score,ties=input', 'order=score,ties=item'),
    ('unexpectedness', 'order=score,ties=item_desc', 'order=score,ties=optimistic'),
    ('unseen', 'dup=first', 'dup=keep'),
    ('unseen', 'order=score,ties=input', 'order=score,ties=item'),
}

#: metrics with fewer than 10 distinct inputs: no reference implementation covers them, so the
#: suite holds only their hand-checked arithmetic cases (work left of issue 35; only shrinks)
FEW_INPUTS: dict[str, int] = {
    'ab_ndcg': 0,
    'alpha_ndcg': 1,
    'auc': 1,
    'bias_disparity': 1,
    'coverage': 1,
    'entropy': 1,
    'gauc': 2,
    'gini': 1,
    'ild': 1,
    'lauc': 1,
    'mad': 1,
    'mae': 1,
    'novelty': 1,
    'pap': 1,
    'pauc': 1,
    'reo': 1,
    'rmse': 1,
    'rsp': 1,
}


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
