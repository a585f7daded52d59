"""A slow reference for the metrics of the recommendation distribution (coverage, entropy, gini)
under every context option: plain Python over each truth user's ranked list from
``reference.prepare`` (order, ties, dup, tdup, rel), written from the docstrings of
receval/metrics/{beyond,diversity}.py and docs/metrics.md; nothing imports receval's formulas.

Over the truth users' top-k lists L_k(u) (every row at a position <= k; the whole list without a
cut-off; recommendation rows of users outside the truth are not read; relevance enters nowhere):

* coverage = |∪_u L_k(u)| / D, D = |I| (``catalog``), |I| + 1 (``catalog_plus_one``), 1
  (``count``), or the distinct train items with only the recommended train items counted (``train``);
* entropy: cnt(i) the number of lists' rows holding i, p_i = cnt(i) / Σ_j cnt(j);
  ``standard`` H = −Σ p_i log_b p_i (``normalize=catalog``: / log_b |I|; ``recommended``: / log_b of
  the number of distinct recommended items); ``per_item``: −Σ p_i ln p_i / |{i: cnt(i) > 0}|;
  ``length_weighted``: −Σ_i w_i log2 p_i / |U⁺|, w_i = Σ over the rows holding i of 1 / ℓ_u (ℓ_u the
  length of the row's top-k list), U⁺ the users with a non-empty top-k list;
* gini = Σ_j (2j − m − 1) p_(j) / (m − 1) over the m catalogue items (one more with p = 0 under
  ``pad=yes``) sorted by share ascending (``catalog_divisor``: / m; ``complement``: 1 − G).

A value that is not defined (nothing recommended, a logarithm of 1 in a normaliser, m < 2) has no
reference here (``NotImplementedError``: the case is left out).
"""

from __future__ import annotations

import math

from .ranking import prepare, split_options

DIST_DEFAULTS = {
    "coverage": {"denominator": "catalog"},
    "entropy": {"form": "standard", "base": math.e, "normalize": "no"},
    "gini": {"form": "castells", "pad": "no"},
}


def reference_dist(recs, truth, metric, k, options=None, *, train=None, catalog=None):
    """``(None, value)``: the distribution metrics have no per-user values."""
    options = options or {}
    if metric not in DIST_DEFAULTS:
        raise KeyError(metric)
    ctx, o = split_options(options, DIST_DEFAULTS[metric])
    users = prepare(recs, truth, ctx, metric)
    lists = {u: [i for pos, i in data["ranked"] if k is None or pos <= k] for u, data in users.items()}
    cnt: dict = {}
    for items in lists.values():
        for i in items:
            cnt[i] = cnt.get(i, 0) + 1
    if catalog is not None:
        cat = set(catalog)
    else:
        cat = set(recs["item_id"]) | set(truth["item_id"]) | (set(train["item_id"]) if train else set())
    if metric == "coverage":
        shown = set(cnt)
        how = o["denominator"]
        if how == "catalog":
            return None, len(shown) / len(cat)
        if how == "catalog_plus_one":
            return None, len(shown) / (len(cat) + 1)
        if how == "count":
            return None, float(len(shown))
        train_items = set(train["item_id"]) if train else set()
        if not train_items:
            raise NotImplementedError("no train items")
        return None, len(shown & train_items) / len(train_items)
    n = sum(cnt.values())
    if n == 0:
        raise NotImplementedError("nothing recommended")
    p = {i: c / n for i, c in cnt.items()}
    if metric == "entropy":
        form = o["form"]
        if form == "per_item":
            return None, -sum(x * math.log(x) for x in p.values()) / len(p)
        if form == "length_weighted":
            w: dict = {}
            for items in lists.values():
                for i in items:
                    w[i] = w.get(i, 0.0) + 1.0 / len(items)
            nonempty = sum(1 for items in lists.values() if items)
            return None, -sum(w[i] * math.log2(p[i]) for i in w) / nonempty
        base = math.e if o["base"] == "e" else float(o["base"])
        h = -sum(x * math.log(x) / math.log(base) for x in p.values())
        if o["normalize"] == "no":
            return None, h
        m = len(cat) if o["normalize"] == "catalog" else len(p)
        if m < 2:
            raise NotImplementedError("log 1 in the normaliser")
        return None, h / (math.log(m) / math.log(base))
    shares = sorted([cnt.get(i, 0) / n for i in cat] + ([0.0] if o["pad"] == "yes" else []))
    m = len(shares)
    if m < 2:
        raise NotImplementedError("a catalogue of one item")
    s = sum((2 * j - m - 1) * x for j, x in enumerate(shares, 1))
    g = s / m if o["form"] == "catalog_divisor" else s / (m - 1)
    return None, (1.0 - g if o["form"] == "complement" else g)
