"""A slow per-user reference for the popularity metrics (receval/metrics/popularity.py) and the
list-quality metrics (receval/metrics/listquality.py).

Plain Python over each truth user's ranked list from ``reference.prepare``; written from the
docstrings (formulas and the long-tail split of the module docs); nothing imports receval.
``train`` is a column dict (user_id, item_id); the catalogue is ``catalog`` or the train items.
"""

from __future__ import annotations

import math

from .ranking import RefError, policy_values, prepare, split_options

POP_DEFAULTS = {
    "arp": {"count": "rows", "denominator": "length", "scale": "count"},
    "aplt": {"count": "rows", "split": "interactions", "cut": None, "boundary": "level", "denominator": "length"},
    "aclt": {"count": "rows", "split": "interactions", "cut": None, "boundary": "level"},
    "popreo": {"count": "rows", "split": "interactions", "cut": None, "boundary": "level", "users": "truth"},
    "poprsp": {"count": "rows", "split": "interactions", "cut": None, "boundary": "level", "users": "truth"},
    "epc": {"discount": "log", "relevance": "hits"},
    "efd": {"discount": "log", "relevance": "hits"},
    "surprisal": {"denominator": "length"},
    "unexpectedness": {},
    "unseen": {},
    "novelty": {"unknown": "max", "denominator": "length"},
}
GLOBAL = {"popreo", "poprsp"}


def popularity(train: dict, count: str) -> dict:
    pop: dict = {}
    if count == "rows":
        for i in train["item_id"]:
            pop[i] = pop.get(i, 0) + 1
    else:
        seen = set(zip(train["user_id"], train["item_id"]))
        for _, i in seen:
            pop[i] = pop.get(i, 0) + 1
    return pop


def long_tail(catalog: list, pop: dict, split: str, cut: float, boundary: str = "level") -> set:
    """boundary=id: ties in popularity at the cut by item id; level: every item as popular as the
    last one taken goes with it (the head for interactions, the tail for items)."""
    items = sorted(catalog)
    if split == "interactions":
        order = sorted(items, key=lambda i: (-pop.get(i, 0), i))
        total = sum(pop.get(i, 0) for i in items)
        head, acc = [], 0
        for i in order:
            head.append(i)
            acc += pop.get(i, 0)
            if acc >= cut * total:
                break
        if boundary == "level" and head:
            head = [i for i in items if pop.get(i, 0) >= pop.get(head[-1], 0)]
        return set(items) - set(head)
    if split == "items":
        order = sorted(items, key=lambda i: (pop.get(i, 0), i))
        tail = order[: max(int(len(items) * cut), 1)]
        if boundary == "level" and tail:
            tail = [i for i in items if pop.get(i, 0) <= pop.get(tail[-1], 0)]
        return set(tail)
    return {i for i in items if pop.get(i, 0) <= cut}


def _baseline(baseline: dict | None, user) -> list:
    if baseline is None:
        return []
    rows = [j for j in range(len(baseline["user_id"])) if baseline["user_id"][j] == user]
    if "rank" in baseline:
        rows.sort(key=lambda j: baseline["rank"][j])
    elif "score" in baseline:
        rows.sort(key=lambda j: -baseline["score"][j])
    out = []
    for j in rows:
        if baseline["item_id"][j] not in out:
            out.append(baseline["item_id"][j])
    return out


def per_user_pop(metric, k, o, user, ctx) -> float:
    items = [i for pos, i in user["ranked"] if pos <= k]
    ell = len(items)
    den = k if o.get("denominator") == "k" else ell
    pop, n_users = ctx["pop"], ctx["n_train_users"]
    if metric == "arp":
        total = sum(pop.get(i, 0) for i in items)
        if o["scale"] == "share":
            total /= sum(pop.values())
        return 0.0 if den == 0 else total / den
    if metric == "aplt":
        return 0.0 if den == 0 else sum(1 for i in items if i in ctx["tail"]) / den
    if metric == "aclt":
        return float(sum(1 for i in items if i in ctx["tail"]))
    if metric in ("epc", "efd"):
        upop = ctx["upop"]
        num = norm = 0.0
        for j, (pos, i) in enumerate(user["ranked"]):
            if pos > k:
                continue
            d = 1.0 / math.log2(pos + 1) if o["discount"] == "log" else 1.0
            norm += d
            if o["relevance"] == "hits" and j not in user["hit_rows"]:
                continue
            p = upop.get(i, 0)
            nov = 1.0 - p / n_users if metric == "epc" else -math.log2(max(p, 1) / n_users)
            num += d * nov
        return 0.0 if norm == 0 else num / norm
    if metric == "surprisal":
        upop = ctx["upop"]
        w = sum((math.log2(n_users / upop[i]) / math.log2(n_users)) if upop.get(i, 0) > 0 else 1.0 for i in items)
        return 0.0 if den == 0 else w / den
    if metric == "novelty":  # Σ −log2(pop_i / |U_train|) / (ℓ_k, the items counted, or k)
        upop = ctx["upop"]
        known = [-math.log2(upop[i] / n_users) if upop.get(i, 0) > 0 else (math.log2(n_users) if o["unknown"] == "max" else None)
                 for i in items]
        bits = [x for x in known if x is not None]
        d = k if o["denominator"] == "k" else len(bits)
        return 0.0 if d == 0 else sum(bits) / d
    if metric == "unseen":  # 1 − |L_k ∩ T_u| / ℓ_k (RePlay's Novelty)
        seen = {i for tu, i in zip(ctx["train"]["user_id"], ctx["train"]["item_id"]) if tu == user["id"]}
        return 1.0 - sum(1 for i in items if i in seen) / ell
    if metric == "unexpectedness":
        base = ctx["baseline_of"](user["id"])[:k]
        if not items or not base:
            return 0.0
        # |L_k ∩ B_k| counts list positions: a repeated row (dup=keep) is a position in the
        # numerator as in the denominator k, as in every other list metric (issue 31, ruling 2)
        return 1.0 - sum(1 for i in items if i in set(base)) / k
    raise KeyError(metric)


def reference_pop(recs, truth, metric, k, options=None, *, train, catalog=None, baseline=None):
    """``(per_user, mean)`` for a per-user metric, ``(None, value)`` for popreo/poprsp."""
    options = options or {}
    ctx, o = split_options(options, POP_DEFAULTS[metric])
    if o.get("cut") is None and "split" in o:
        o["cut"] = {"interactions": 0.8, "items": 0.1}[o["split"]]
    users = prepare(recs, truth, ctx, metric)
    cat = sorted(set(catalog) if catalog is not None else set(train["item_id"]))
    pop = popularity(train, o.get("count", "users"))
    side = {
        "pop": pop, "upop": popularity(train, "users"), "n_train_users": len(set(train["user_id"])),
        "tail": long_tail(cat, pop, o["split"], o["cut"], o.get("boundary", "level")) if "split" in o else set(),
        # split=count reads no catalogue (aplt, aclt): every item with φ(i) ≤ cut is in the tail
        "count_tail": {i for i in set(recs["item_id"]) | set(cat) if pop.get(i, 0) <= (o.get("cut") or 0)},
        "baseline_of": lambda u: _baseline(baseline, u), "train": train,
    }
    if metric in ("aplt", "aclt") and o["split"] == "count":
        side["tail"] = side["count_tail"]
    # one rule for every metric that reads a catalogue: a recommended item outside it is refused
    if metric in ("popreo", "poprsp") or (metric in ("aplt", "aclt") and o["split"] != "count"):
        for u, data in users.items():
            for pos, i in data["ranked"]:
                if pos <= k and i not in cat:
                    raise RefError("recommended item outside the catalogue")
    if metric == "surprisal" and side["n_train_users"] < 2:
        raise RefError("one train user")
    if metric in GLOBAL:
        tail = side["tail"]
        head = set(cat) - tail
        num = {"H": 0, "T": 0}
        den = {"H": 0, "T": 0}
        train_items = {}
        for u, i in zip(train["user_id"], train["item_id"]):
            train_items.setdefault(u, set()).add(i)
        for u, data in users.items():
            if o["users"] == "listed" and data["length"] == 0:
                continue
            top = [(pos, i) for pos, i in data["ranked"] if pos <= k]
            if metric == "popreo":
                # R_u: the relevant truth items of u (from the truth rows)
                R = user_relevant(truth, u, ctx)
                for g, grp in (("H", head), ("T", tail)):
                    num[g] += sum(1 for j, (_, i) in enumerate(top) if j in data["hit_rows"] and i in grp)
                    den[g] += sum(1 for i in R if i in grp)
            else:
                for g, grp in (("H", head), ("T", tail)):
                    num[g] += sum(1 for _, i in top if i in grp)
                    den[g] += len(grp - train_items.get(u, set()))
        if den["H"] == 0 or den["T"] == 0:
            raise RefError("empty group")
        p = [num["H"] / den["H"], num["T"] / den["T"]]
        mean = sum(p) / 2
        std = math.sqrt(sum((x - mean) ** 2 for x in p) / 2)
        return None, (0.0 if sum(p) == 0 else std / mean)
    return policy_values(users, ctx, lambda u, data: per_user_pop(metric, k, o, dict(data, id=u), side))


def user_relevant(truth, u, ctx) -> list:
    """The relevant truth items of u, one per kept row (tdup=keep counts repeats; tdup=max keeps
    the row of the highest rating; tdup=first the first, its repeats agree: prepare refuses others)."""
    has_rating = "rating" in truth
    rows, seen = [], {}
    for j in range(len(truth["user_id"])):
        if truth["user_id"][j] != u:
            continue
        i = truth["item_id"][j]
        r = float(truth["rating"][j]) if has_rating else 1.0
        if i in seen and ctx["tdup"] in ("first", "max"):
            if ctx["tdup"] == "max" and r > rows[seen[i]][1]:
                rows[seen[i]] = (i, r)
            continue
        seen[i] = len(rows)
        rows.append((i, r))
    return [i for i, r in rows if ctx["rel"] is None or r >= ctx["rel"]]
