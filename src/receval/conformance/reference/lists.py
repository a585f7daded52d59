"""A slow per-user reference for the list-quality metrics (filled, unrepeated, covered,
intersection) and serendipity, catdiv, srecall, miscalibration; plain Python from the
docstrings of receval/metrics/{listquality,serendipity}.py; nothing imports receval."""

from __future__ import annotations

import math

from .ranking import RefError, prepare, split_options
from .pop import _baseline, popularity

DEFAULTS = {
    "filled": {"form": "all"},
    "unrepeated": {"form": "all"},
    "covered": {},
    "intersection": {"refk": None},
    "serendipity": {"denominator": "length"},
    "catdiv": {"denominator": "length"},
    "srecall": {},
    "miscalibration": {"alpha": 0.01},
}
NO_RELEVANCE = {"filled", "unrepeated", "covered", "intersection"}


def _cats(categories: dict) -> dict:
    out: dict = {}
    for i, c in zip(categories["item_id"], categories["category"]):
        out.setdefault(i, set()).add(c)
    return out


def per_user(metric, k, o, user, side) -> float:
    top = [(pos, i) for pos, i in user["ranked"] if pos <= k]
    items = [i for _, i in top]
    hit = [j in user["hit_rows"] for j in range(len(top))]  # ranked is in position order: top is its head
    if metric == "filled":
        return float(len(items) >= k) if o["form"] == "all" else min(len(items) / k, 1.0)
    if metric == "unrepeated":
        if not items:
            return 0.0
        return float(len(set(items)) == len(items)) if o["form"] == "all" else len(set(items)) / len(items)
    if metric == "covered":
        return float(len(items) > 0)
    if metric == "intersection":
        ref = side["baseline_of"](user["id"])[: int(o["refk"]) if o["refk"] is not None else k]
        return 0.0 if not items else sum(1 for i in items if i in set(ref)) / len(items)
    if metric == "serendipity":
        n, pi = side["n_catalog"], side["poprank"]
        total = 0.0
        for j, (pos, i) in enumerate(top):
            if hit[j]:
                pu = (n + 1 - pi[i]) / n if i in pi else 0.0
                total += max((n + 1 - pos) / n - pu, 0.0)
        den = k if o["denominator"] == "k" else len(items)
        return 0.0 if den == 0 else total / den
    cats = side["cats"]
    if metric == "catdiv":
        distinct = set().union(*(cats.get(i, set()) for i in items)) if items else set()
        den = k if o["denominator"] == "k" else len(items)
        return 0.0 if den == 0 else len(distinct) / den
    if metric == "srecall":
        found = set()
        for j, (pos, i) in enumerate(top):
            if hit[j]:
                found |= cats.get(i, set())
        allc = set().union(*(cats.get(i, set()) for i in side["relevant_of"](user["id"]))) if side["relevant_of"](user["id"]) else set()
        return 0.0 if not allc else len(found) / len(allc)
    if metric == "miscalibration":
        hist = sorted({i for i in side["history"].get(user["id"], set()) if cats.get(i)}, key=str)
        if not hist:
            return 0.0
        genres = sorted(set().union(*(cats[i] for i in hist)) | set().union(*(cats.get(i, set()) for i in items)) if items else set().union(*(cats[i] for i in hist)))
        p = {g: sum(1 / len(cats[i]) for i in hist if g in cats[i]) / len(hist) for g in genres}
        listed = [i for i in items if cats.get(i)]
        q = {g: (sum(1 / len(cats[i]) for i in listed if g in cats[i]) / len(listed)) if listed else 0.0 for g in genres}
        a = o["alpha"]
        return sum(p[g] * math.log(p[g] / ((1 - a) * q[g] + a * p[g])) for g in genres if p[g] > 0)
    raise KeyError(metric)


def reference_lists(recs, truth, metric, k, options=None, *, train=None, catalog=None, baseline=None, categories=None):
    options = options or {}
    ctx, o = split_options(options, DEFAULTS[metric])
    users = prepare(recs, truth, ctx, metric)
    side = {"baseline_of": lambda u: _baseline(baseline, u)}
    if train is not None:
        rows = popularity(train, "rows")
        counts = sorted(set(rows.values()), reverse=True)
        side["poprank"] = {i: counts.index(c) + 1 for i, c in rows.items()}
        side["history"] = {}
        for u, i in zip(train["user_id"], train["item_id"]):
            side["history"].setdefault(u, set()).add(i)
    universe = set(recs["item_id"]) | set(truth["item_id"]) | (set(train["item_id"]) if train else set()) | (set(categories["item_id"]) if categories else set())
    side["n_catalog"] = len(set(catalog)) if catalog is not None else (len(set(train["item_id"])) if train else len(universe))
    side["cats"] = _cats(categories) if categories else {}
    rel_of = {}
    for u in users:
        rel_of[u] = set()
    has_rating = "rating" in truth
    for j in range(len(truth["user_id"])):
        r = float(truth["rating"][j]) if has_rating else 1.0
        if ctx["rel"] is None or r >= ctx["rel"]:
            rel_of[truth["user_id"][j]].add(truth["item_id"][j])
    side["relevant_of"] = lambda u: rel_of.get(u, set())
    if metric == "serendipity" and (catalog is not None or train is not None):
        cat = set(catalog) if catalog is not None else set(train["item_id"])
        if any(i not in cat for data in users.values() for pos, i in data["ranked"] if pos <= k):
            raise RefError("recommended item outside the catalogue")  # the one rule of every catalogue reader
    if metric == "unrepeated" and ctx["dup"] != "keep":
        raise RefError("needs dup=keep")
    policy_empty = metric not in NO_RELEVANCE
    policy_norecs = metric != "covered"
    for data in users.values():
        if policy_empty and len(data["rel"]) == 0 and ctx["empty"] == "error":
            raise RefError("user without relevant items")
        if policy_norecs and (len(data["rel"]) or not policy_empty) and data["length"] == 0 and ctx["norecs"] == "error":
            if len(data["rel"]):
                raise RefError("user without recommendations")
    out = {}
    for u, data in users.items():
        data = dict(data, id=u)
        no_rel = len(data["rel"]) == 0
        if policy_empty and no_rel and ctx["empty"] == "skip":
            out[u] = None
        elif policy_empty and no_rel:
            out[u] = 0.0
        elif policy_norecs and not no_rel and data["length"] == 0 and ctx["norecs"] == "skip":
            out[u] = None
        elif policy_norecs and not no_rel and data["length"] == 0:
            out[u] = 0.0
        else:
            out[u] = per_user(metric, k, o, data, side)
    included = [v for v in out.values() if v is not None]
    if not included:
        raise RefError("no user left")
    return out, sum(included) / len(included)
