"""A slow reference for the item-group fairness metrics (receval/metrics/fairness.py): REO, RSP
and bias disparity, under every context option (relevance, ordering and tie rule, duplicates).

Plain Python over each truth user's ranked list from ``reference.prepare``, written from the
formulas of the metrics' docstrings (``receval explain reo@k`` / ``rsp@k`` / ``bias_disparity@k``);
nothing imports receval's formulas. Conventions (each from the docs):

* the users are the truth users (``ugroup`` narrows bias disparity's to a group of user_groups);
* ``L^u_k`` is every row at a position <= k (a repeated item under ``dup=keep`` is a position of
  its own; ``ties=optimistic`` may put more than k rows there);
* REO: ``P_g = Σ_u |L^u_k ∩ R_u ∩ g| / Σ_u |R_u ∩ g|``, the numerator the hit rows in g, the
  denominator the relevant kept truth rows in g (``tdup=keep`` counts a repeated row again);
* RSP: ``P_g = Σ_u |L^u_k ∩ g| / Σ_u |g \\ I^tr_u|`` with ``|g|`` the items item_groups puts in g;
* the value std_g P_g / mean_g P_g (population std; 0 when every P_g is 0); a group with a
  zero denominator is refused;
* bias disparity of the cell (G, C): ``B_X = (N_X(G, C) / N_X(G)) / (|C| / |I_g|)``; N_S over the
  distinct train pairs of the train users of G, N_R over the list positions of the truth users
  of G; ``of=bd`` is ``(B_R - B_S) / B_S``; a zero count in a denominator (B_S = 0 for BD) is refused.
"""

from __future__ import annotations

import math

from .pop import user_relevant
from .ranking import RefError, prepare, split_options

FAIRNESS_DEFAULTS = {
    "reo": {},
    "rsp": {},
    "bias_disparity": {"of": "bd", "ugroup": "*", "icat": "*"},
}


def _groups(item_groups: dict) -> dict:
    out: dict = {}
    for i, g in zip(item_groups["item_id"], item_groups["group"]):
        out.setdefault(g, set()).add(i)
    return out


def _std_over_mean(p: list) -> float:
    mean = sum(p) / len(p)
    if mean == 0:
        return 0.0
    return math.sqrt(sum((x - mean) ** 2 for x in p) / len(p)) / mean


def reference_fairness(recs, truth, metric, k, options=None, *, train=None, item_groups=None, user_groups=None):
    """``(None, value)``: REO, RSP or bias disparity at cut-off k."""
    options = options or {}
    ctx, o = split_options(options, FAIRNESS_DEFAULTS[metric])
    if item_groups is None:
        raise RefError("no item groups")
    users = prepare(recs, truth, ctx, metric)
    groups = _groups(item_groups)
    top = {u: [i for pos, i in data["ranked"] if pos <= k] for u, data in users.items()}
    if metric == "bias_disparity":
        return None, _bias(o, users, top, groups, train, user_groups)
    if len(groups) < 2:
        raise RefError("fewer than two item groups")
    names = sorted(groups)
    p = []
    for g in names:
        members = groups[g]
        if metric == "reo":
            num = sum(1 for u, data in users.items() for j, (pos, i) in enumerate(data["ranked"])
                      if pos <= k and j in data["hit_rows"] and i in members)
            den = sum(1 for u in users for i in user_relevant(truth, u, ctx) if i in members)
        else:
            seen: dict = {}
            if train is not None:
                for tu, ti in zip(train["user_id"], train["item_id"]):
                    seen.setdefault(tu, set()).add(ti)
            num = sum(1 for u in users for i in top[u] if i in members)
            den = sum(len(members - seen.get(u, set())) for u in users)
        if den == 0:
            raise RefError(f"group {g} is empty for these users")
        p.append(num / den)
    return None, _std_over_mean(p)


def _bias(o, users, top, groups, train, user_groups) -> float:
    icat, ugroup = str(o["icat"]).lower(), str(o["ugroup"]).lower()
    if icat == "*":
        raise ValueError("bias_disparity names no cell")  # a spec error, not a data refusal
    cat_of = {i: str(g).lower() for g, items in groups.items() for i in items}
    if icat not in set(cat_of.values()):
        raise RefError("no such item category")
    if ugroup == "*":
        def member(u) -> bool:
            return True
    else:
        if user_groups is None:
            raise RefError("no user groups")
        ug = {u: str(g).lower() for u, g in zip(user_groups["user_id"], user_groups["group"])}
        if ugroup not in set(ug.values()):
            raise RefError("no such user group")

        def member(u) -> bool:
            return ug.get(u) == ugroup
    share = sum(1 for c in cat_of.values() if c == icat) / len(cat_of)
    bs = 0.0
    if o["of"] != "br":
        if train is None:
            raise RefError("no train")
        pairs = {(u, i) for u, i in zip(train["user_id"], train["item_id"]) if member(u)}
        n_all = sum(1 for _, i in pairs if i in cat_of)
        if n_all == 0:
            raise RefError("no categorised train pair of the group")
        bs = sum(1 for _, i in pairs if cat_of.get(i) == icat) / n_all / share
        if o["of"] == "bs":
            return bs
    shown = [i for u in users if member(u) for i in top[u]]
    n_all = sum(1 for i in shown if i in cat_of)
    if n_all == 0:
        raise RefError("no categorised item in the group's lists")
    br = sum(1 for i in shown if cat_of.get(i) == icat) / n_all / share
    if o["of"] == "br":
        return br
    if bs == 0:  # of=bd (B_S computed above)
        raise RefError("B_S = 0")
    return (br - bs) / bs
