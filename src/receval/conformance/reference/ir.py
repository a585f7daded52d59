"""A slow per-user reference for the IR measures (rprecision, bpref, rbp, err, ncrr).

Plain Python loops over each user's ranked list from ``reference.prepare`` (which encodes the
context options), written from the formulas in the docstrings of
``receval/metrics/ir.py``; nothing here imports receval. ``k=None`` reads the whole list.
"""

from __future__ import annotations

from .ranking import RefError, policy_values, prepare, split_options

IR_DEFAULTS = {
    "rprecision": {"r": "truth"},
    "bpref": {},
    "rbp": {"persistence": 0.8, "normalize": "no", "gain": "binary"},
    "err": {"grade": "binary", "gmax": None},
    "ncrr": {},
}

#: every value of every option (numeric ones sampled)
IR_VALUES = {
    "rprecision": {"r": ["truth", "listed"]},
    "bpref": {},
    "rbp": {"persistence": [0.5, 0.8, 0.95], "normalize": ["no", "listed", "cut"], "gain": ["binary"]},
    "err": {"grade": ["binary"]},
    "ncrr": {},
}
#: option sets outside the full product (gain=rating needs normalize=no; grade=rating needs gmax)
IR_EXTRA = [
    ("rbp", {"gain": "rating", "persistence": 0.8}),
    ("rbp", {"gain": "rating", "persistence": 0.5}),
    ("err", {"grade": "rating", "gmax": 5.0}),
    ("err", {"grade": "rating", "gmax": 6.5}),
]


def _nonrel_judged(truth: dict, ctx: dict) -> tuple[dict, dict]:
    """Per user: the set of judged non-relevant items (in the truth, no relevant row) and N,
    the number of kept truth rows below the threshold."""
    has_rating = "rating" in truth
    rel = ctx["rel"]
    seen, kept, best = set(), [], {}
    for i in range(len(truth["user_id"])):
        key = (truth["user_id"][i], truth["item_id"][i])
        rating = float(truth["rating"][i]) if has_rating else 1.0
        if key in seen and ctx["tdup"] == "first":  # (repeats agree: prepare refuses the others)
            continue
        if key in seen and ctx["tdup"] == "max":  # the row of the highest rating
            j = next(x for x, (kk, _) in enumerate(kept) if kk == key)
            if rating > best[key]:
                best[key] = rating
                kept[j] = (key, rel is None or rating >= rel)
            continue
        seen.add(key)
        best[key] = rating
        kept.append((key, rel is None or rating >= rel))
    relevant_keys = {key for key, r in kept if r}
    judged = {}
    n_nonrel = {}
    for key, r in kept:
        u, item = key
        judged.setdefault(u, set())
        n_nonrel.setdefault(u, 0)
        if not r:
            n_nonrel[u] += 1
            if key not in relevant_keys:
                judged[u].add(item)
    return judged, n_nonrel


def per_user_ir(metric: str, k: int | None, o: dict, user: dict, judged: set, n_nonrel: int) -> float:
    hits = user["hits"]  # [(position, rating)] in list order
    R = len(user["rel"])
    cut = (lambda pos: True) if k is None else (lambda pos: pos <= k)
    if metric == "rprecision":
        if o.get("r", "truth") == "listed":  # the relevant items present in the list
            R = len(user["listed"])
        return 0.0 if R == 0 else sum(1 for pos, _ in hits if pos <= R) / R
    if metric == "bpref":
        if R == 0:
            return 0.0
        total = 0.0
        for pos, _ in hits:
            if cut(pos):
                above = sum(1 for p2, i2 in user["ranked"] if p2 < pos and i2 in judged)
                total += 1.0 if above == 0 else 1.0 - min(above, R) / min(R, n_nonrel)
        return total / R
    if metric == "rbp":
        p = o["persistence"]
        s = 0.0
        for pos, rating in hits:
            if cut(pos):
                s += (rating if o["gain"] == "rating" else 1.0) * p ** (pos - 1)
        if o["normalize"] == "no":
            return (1 - p) * s
        depth = float("inf") if k is None else k  # no cut-off: every position
        m = min(R, depth) if o["normalize"] == "cut" else min(R, user["length"], depth)
        ideal = sum(p ** (i - 1) for i in range(1, m + 1))
        return 0.0 if ideal == 0 else s / ideal
    if metric == "err":
        total, reach = 0.0, 1.0
        for pos, rating in hits:
            if o["grade"] == "binary":
                stop = 0.5
            else:
                if rating < 0 or rating > o["gmax"]:
                    raise RefError("grade outside [0, gmax]")
                stop = (2.0**rating - 1.0) / 2.0 ** o["gmax"]
            if cut(pos):
                total += reach * stop / pos
            reach *= 1.0 - stop
        return total
    if metric == "ncrr":
        s = sum(1.0 / pos for pos, _ in hits if cut(pos))
        m = min(R, user["length"] if k is None else k)
        ideal = sum(1.0 / j for j in range(1, m + 1))
        return 0.0 if ideal == 0 else s / ideal
    raise KeyError(metric)


def reference_ir(recs: dict, truth: dict, metric: str, k: int | None, options: dict | None = None):
    """``(per_user, mean)`` as ``reference.reference``: per_user maps every truth user to its value or None."""
    options = options or {}
    ctx, o = split_options(options, IR_DEFAULTS[metric])
    users = prepare(recs, truth, ctx, metric)
    judged, n_nonrel = _nonrel_judged(truth, ctx)
    return policy_values(users, ctx, lambda u, data: per_user_ir(metric, k, o, data, judged.get(u, set()), n_nonrel.get(u, 0)))
