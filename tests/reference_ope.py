"""A slow reference of the off-policy estimators: plain Python loops over rows, written from
the formulas of docs/ope.md, never from receval.ope's code. Inputs are lists of dict rows."""

from __future__ import annotations


def _pi(target, c, i, p=None):
    for t in target:
        if t["context_id"] == c and t["item_id"] == i and t.get("position") == p:
            return t["propensity"]
    return 0.0


def _q(rewards, c, i, p=None):
    for r in rewards:
        if r["context_id"] == c and r["item_id"] == i and r.get("position") == p:
            return r["estimate"]
    raise KeyError((c, i, p))


def _qpi(target, rewards, c, p=None):
    total = 0.0
    for t in target:
        if t["context_id"] == c and t.get("position") == p and t["propensity"] > 0:
            total += t["propensity"] * _q(rewards, c, t["item_id"], p)
    return total


def estimate(name, log, target, rewards=None, cap=None, floor=None, tau=1.0):
    n = len(log)
    ws, raws, rs, qs, vs = [], [], [], [], []
    for row in log:
        c, i, p = row["context_id"], row["item_id"], row.get("position")
        pi = _pi(target, c, i, p)
        mu = row["propensity"]
        raw = pi / mu
        w = pi / (max(mu, floor) if floor is not None else mu)
        if cap is not None:
            w = min(w, cap)
        ws.append(w)
        raws.append(raw)
        rs.append(row["reward"])
        if rewards is not None:
            qs.append(_q(rewards, c, i, p))
            vs.append(_qpi(target, rewards, c, p))
    if name == "naive":
        return sum(rs) / n
    if name == "ips":
        return sum(w * r for w, r in zip(ws, rs)) / n
    if name == "snips":
        return sum(w * r for w, r in zip(ws, rs)) / sum(ws)
    if name == "dm":
        return sum(vs) / n
    if name == "dr":
        return sum(v + w * (r - q) for v, w, r, q in zip(vs, ws, rs, qs)) / n
    if name == "switch_dr":
        return sum(v + (w if w <= tau else 0.0) * (r - q) for v, w, r, q in zip(vs, raws, rs, qs)) / n
    if name == "sndr":
        return sum(vs) / n + sum(w * (r - q) for w, r, q in zip(raws, rs, qs)) / sum(raws)
    raise ValueError(name)


def slate_estimate(name, log, target):
    """iips / rips / sips with the target's slate probabilities as products of its per-position ones."""
    slates = {}
    for row in log:
        slates.setdefault(row["context_id"], []).append(row)
    total = 0.0
    for c, rows in slates.items():
        rows = sorted(rows, key=lambda r: r["position"])
        pis = [_pi(target, c, r["item_id"], r["position"]) for r in rows]
        joint = 1.0
        for x in pis:
            joint *= x
        prefix = 1.0
        for r, x in zip(rows, pis):
            prefix *= x
            if name == "iips":
                total += x / r["propensity"] * r["reward"]
            elif name == "rips":
                total += prefix / r["cascade_propensity"] * r["reward"]
            else:
                total += joint / r["joint_propensity"] * r["reward"]
    return total / len(slates)
