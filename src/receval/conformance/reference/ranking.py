"""A slow, obviously-correct, per-user reference for receval's ranking metrics.

Independent of receval's code: plain Python loops over an explicitly ranked list per user,
written from the formulas declared in ``receval/metrics/ranking.py`` and the option meanings
in ``receval/options.py`` (not from their implementation). Nothing here imports receval's
formulas: only the registry's list of the context options a metric reads.

Inputs are column dicts (the same dicts handed to ``receval.evaluate``):

* ``recs``: ``user_id``, ``item_id`` and optionally ``score`` and/or ``rank``;
* ``truth``: ``user_id``, ``item_id`` and optionally ``rating``.

Semantics encoded here (each is one line of the option docs):

* the averaged users are the truth users; recommendation rows of other users are ignored;
* ``rel``: a truth row is relevant when ``rating >= rel`` (every row when ``rel`` is None);
  without a rating column every rating is 1 and a threshold is an error;
* ``tdup``: ``first`` keeps the first row of each (user, item) and refuses repeats that disagree
  on the rating, ``max`` keeps the row of the highest rating, ``keep`` counts every row in |R|;
  a recommended item is matched against the kept truth row of its (user, item) that is relevant
  and of the highest rating (so with ``keep`` an item counted in |R| by a later row is still a hit);
* ``order``: ``auto`` = rank column if present, else score, else an error (never the input order); with ``rank``
  the position of a row *is* its rank value;
* ``ties`` (order by score): ``input`` stable, ``item`` smaller id first, ``item_desc`` larger
  id first, ``optimistic`` position = 1 + number of strictly greater scores;
* ``dup``: ``first`` keeps the best-ranked occurrence (positions are recounted for score and
  input order; rank values are kept), ``keep`` keeps every row as a position and a hit;
* an ideal list has k slots: ``ideal=hits`` and ``ideal=listed`` keep at most k gains (this
  matters only when optimistic ties put more than k items at positions <= k);
* ``hitscore=positive``: a relevant item scored <= 0 is no hit, but still "listed";
* ``recall(denominator=listed)`` / ``ndcg(ideal=listed)``: the relevant items anywhere in the list
  (every hit row, so ``dup=keep`` duplicates count) stand in for R;
* ``average=micro`` (precision, recall): a user's value is the pair (hits, denominator); the
  mean is Σ hits / Σ denominators over the users left in, a user scored 0 by a policy adding
  its denominator and no hit (its own value stays hits / denominator);
* ``ndcg(ideal=length)``: min(k, list length) slots, each of the user's best gain;
* ``empty``: users with no relevant item are skipped / scored 0 / an error;
* ``norecs``: users with relevant items but no recommendation rows are scored 0 / skipped /
  an error.
"""

from __future__ import annotations

import math
from collections import defaultdict

from receval.metrics import get_metric

CONTEXT_DEFAULTS = {
    "rel": None,
    "order": "auto",
    "ties": "input",
    "hitscore": "any",
    "dup": "error",
    "tdup": "error",
    "empty": "skip",
    "norecs": "zero",
}

#: every metric's own options with their standard defaults (as documented)
METRIC_DEFAULTS = {
    "precision": {"denominator": "k", "average": "macro"},
    "recall": {"denominator": "r", "average": "macro"},
    "f1": {"aggregate": "users"},
    "hitrate": {"count": "any"},
    "mrr": {"hits": "first"},
    "map": {"denominator": "min_k_r", "indicator": "yes"},
    "mar": {"denominator": "k", "indicator": "no"},
    "ndcg": {"gain": "binary", "ideal": "cut", "base": 2.0, "discount": "log", "t": None, "neg": "error"},
    "dcg": {"gain": "binary", "base": 2.0, "discount": "log", "t": None, "neg": "error"},
}

AP_DENOMINATORS = ["min_k_r", "r", "k", "length", "min_length_r", "hits", "cumulative_min"]

#: every value of every metric option
METRIC_VALUES = {
    "precision": {"denominator": ["k", "length", "min_k_r"], "average": ["macro", "micro"]},
    "recall": {"denominator": ["r", "min_k_r", "listed"], "average": ["macro", "micro"]},
    "f1": {"aggregate": ["users", "means"]},
    "hitrate": {"count": ["any", "hits"]},
    "mrr": {"hits": ["first", "all"]},
    "map": {"denominator": AP_DENOMINATORS, "indicator": ["yes", "no", "distinct"]},
    "mar": {"denominator": AP_DENOMINATORS, "indicator": ["yes", "no"]},
    "ndcg": {"gain": ["binary", "linear", "exp2", "shifted"], "ideal": ["cut", "uncut", "k", "length", "hits", "listed", "none"],
             "discount": ["log", "logmax2"]},
    "dcg": {"gain": ["binary", "linear", "exp2", "shifted"], "base": [2.0, math.e, 10.0], "discount": ["log", "logmax2"]},
}

CONTEXT_VALUES = {
    "order": ["auto", "score", "rank", "rank_value", "input"],
    "ties": ["input", "item", "item_desc", "text_desc", "optimistic"],
    "hitscore": ["any", "positive"],
    "dup": ["error", "first", "keep"],
    "tdup": ["error", "first", "max", "keep"],
    "empty": ["skip", "zero", "error"],
    "norecs": ["zero", "skip", "error"],
}


class RefError(Exception):
    """The reference refuses the input (receval must raise a DataError)."""


# ------------------------------------------------------------------------------------------
# ranked lists


def _rows(cols: dict, names: list[str]) -> list[dict]:
    n = len(cols["user_id"])
    return [{name: (cols[name][i] if name in cols else None) for name in names} for i in range(n)]


def prepare(recs: dict, truth: dict, ctx: dict, metric: str | None = None) -> dict:
    """Per truth user: ranked list [(position, item)] with the rows' scores, relevant ratings,
    matched truth rows. A context option the ``metric`` does not read (receval records it
    only for the metrics that read it) keeps its default."""
    ctx = {**CONTEXT_DEFAULTS, **ctx}
    if metric is not None:
        read = get_metric(metric).context
        ctx = {a: (CONTEXT_DEFAULTS[a] if a in CONTEXT_DEFAULTS and a not in read else v) for a, v in ctx.items()}
    truth_rows = _rows(truth, ["user_id", "item_id", "rating"])
    if not truth_rows:
        raise RefError("empty truth")
    has_rating = "rating" in truth
    if not has_rating and ctx["rel"] is not None and ctx["rel"] > 1:
        raise RefError("threshold without ratings")  # a truth without ratings: every row rated 1

    def rating_of(row):
        return float(row["rating"]) if has_rating else 1.0

    def is_relevant(row):
        return ctx["rel"] is None or rating_of(row) >= ctx["rel"]

    users = sorted({row["user_id"] for row in truth_rows})
    if recs.get("user_id") and not set(recs["user_id"]) & set(users):
        raise RefError("no user in common")  # receval refuses recommendations that meet no truth user
    seen: dict = {}  # (u, i) -> the index in ``kept`` of its first kept row
    first_row = {}  # (u, i) -> the truth row a recommended item is matched against
    kept = []
    for row in truth_rows:
        key = (row["user_id"], row["item_id"])
        if key in seen:
            if ctx["tdup"] == "error":
                raise RefError("truth duplicates")
            if ctx["tdup"] == "first":
                if rating_of(row) != rating_of(kept[seen[key]]):
                    raise RefError("tdup=first: repeats of a pair disagree on the rating")
                continue
            if ctx["tdup"] == "max":
                if rating_of(row) > rating_of(kept[seen[key]]):
                    kept[seen[key]] = first_row[key] = row
                continue
        else:
            seen[key] = len(kept)
        kept.append(row)
        # the kept relevant row of the pair of the highest rating (else its first row): an item
        # counted in |R| by any of its rows is a hit when recommended
        old = first_row.get(key)
        if old is None or (is_relevant(row) and (not is_relevant(old) or rating_of(row) > rating_of(old))):
            first_row[key] = row
    relevant_ratings = {u: [] for u in users}
    for row in kept:
        if is_relevant(row):
            relevant_ratings[row["user_id"]].append(rating_of(row))

    has_score, has_rank = "score" in recs, "rank" in recs
    order = ctx["order"]
    if order == "auto":
        if not (has_rank or has_score):
            raise RefError("no score or rank column: the order is unknown")
        order = "rank" if has_rank else "score"
    if order == "score" and not has_score:
        raise RefError("no score column")
    if order in ("rank", "rank_value") and not has_rank:
        raise RefError("no rank column")
    if ctx["hitscore"] == "positive" and not has_score:
        raise RefError("hitscore=positive without a score column")
    by_user = defaultdict(list)
    for row in _rows(recs, ["user_id", "item_id", "score", "rank"]):
        if row["user_id"] in relevant_ratings:
            by_user[row["user_id"]].append(row)
    if has_score:
        for rows in by_user.values():
            for row in rows:
                if not math.isfinite(row["score"]):
                    raise RefError("non-finite score")

    out = {}
    for u in users:
        rows = list(by_user.get(u, []))
        ranked = _rank(rows, order, ctx["ties"])
        kept_rows = rows
        items = [item for _, item in ranked]
        if len(set(items)) < len(items):
            if ctx["dup"] == "error":
                raise RefError("rec duplicates")
            if ctx["dup"] == "first":
                seen_items = set()
                kept_rows = []
                for row, (pos, item) in zip(_sorted_rows(rows, order, ctx["ties"]), ranked):
                    if item not in seen_items:
                        seen_items.add(item)
                        kept_rows.append(row)
                ranked = _rank(kept_rows, order, ctx["ties"])
        hits, listed, scores, hit_rows = [], [], [], set()
        for j, ((pos, item), rec) in enumerate(zip(ranked, _sorted_rows(kept_rows, order, ctx["ties"]))):
            scores.append(rec["score"])
            row = first_row.get((u, item))
            if row is not None and is_relevant(row):
                listed.append((pos, rating_of(row)))
                if ctx["hitscore"] == "any" or rec["score"] > 0:
                    hits.append((pos, rating_of(row)))
                    hit_rows.add(j)
        # hit_rows: the indices into ``ranked`` of the hits (a position does not name a row:
        # under ties=optimistic several rows share one)
        out[u] = {"ranked": ranked, "scores": scores, "length": len(ranked), "hits": hits, "listed": listed,
                  "rel": relevant_ratings[u], "hit_rows": hit_rows}
    return out


def _sorted_rows(rows: list[dict], order: str, ties: str) -> list[dict]:
    if order == "input":
        return list(rows)
    if order in ("rank", "rank_value"):
        return sorted(rows, key=lambda r: r["rank"])
    if ties in ("input", "optimistic"):
        return sorted(rows, key=lambda r: -r["score"])  # sorted() is stable
    if ties == "item":
        return sorted(rows, key=lambda r: (-r["score"], r["item_id"]))
    # item_desc: larger id first among equal scores; two stable passes avoid negating strings;
    # text_desc: the same with the ids compared as text ("9" before "10")
    key = (lambda r: str(r["item_id"])) if ties == "text_desc" else (lambda r: r["item_id"])
    by_item = sorted(rows, key=key, reverse=True)
    return sorted(by_item, key=lambda r: -r["score"])


def _rank(rows: list[dict], order: str, ties: str) -> list[tuple[int, object]]:
    srt = _sorted_rows(rows, order, ties)
    if order == "rank":
        ranks = [r["rank"] for r in srt]
        if len(set(ranks)) < len(ranks):
            raise RefError("equal ranks")
        return [(int(r["rank"]), r["item_id"]) for r in srt]
    if order == "rank_value":  # the rank values are the positions, shared by equal ranks
        return [(int(r["rank"]), r["item_id"]) for r in srt]
    if order == "score" and ties == "optimistic":
        return [(1 + sum(1 for o in srt if o["score"] > r["score"]), r["item_id"]) for r in srt]
    return [(i + 1, r["item_id"]) for i, r in enumerate(srt)]


# ------------------------------------------------------------------------------------------
# per-user formulas


def _hits_upto(hits, i):
    return sum(1 for pos, _ in hits if pos <= i)


def _gain(rating: float, o: dict) -> float:
    g = o["gain"]
    if g == "binary":
        return 1.0
    if g == "linear":
        out = rating
    elif g == "exp2":
        out = 2.0**rating - 1.0
    else:
        out = 2.0 ** (rating - o["t"] + 1.0) - 1.0
    if out < 0:
        if o.get("neg", "error") == "zero":
            return 0.0
        raise RefError("negative gain")
    return out


def _disc(i: int, base: float, kind: str = "log") -> float:
    """1 / log_base(i + 1) (``log``) or 1 / log_base(max(i, 2)) (``logmax2``) for a 1-based position i."""
    return math.log(base) / math.log(i + 1 if kind == "log" else max(i, 2))


def _div(a: float, b: float) -> float:
    return 0.0 if b == 0 else a / b


def per_user_value(metric: str, k: int, o: dict, user: dict) -> float | tuple[float, float]:
    hits, R, length = user["hits"], len(user["rel"]), user["length"]
    Hk = _hits_upto(hits, k)
    if metric == "precision":
        den = {"k": k, "length": min(k, length), "min_k_r": min(k, R)}[o["denominator"]]
        return (float(Hk), float(den)) if o.get("average") == "micro" else _div(Hk, den)
    if metric == "recall":
        den = {"r": R, "min_k_r": min(k, R), "listed": len(user["listed"])}[o["denominator"]]
        return (float(Hk), float(den)) if o.get("average") == "micro" else _div(Hk, den)
    if metric == "f1":
        p = Hk / k
        r = _div(Hk, R)
        if o["aggregate"] == "means":
            return (p, r)
        return _div(2 * p * r, p + r)
    if metric == "hitrate":
        return float(Hk) if o["count"] == "hits" else float(Hk > 0)
    if metric == "mrr":
        if o["hits"] == "first":
            positions = [pos for pos, _ in hits if pos <= k]
            return 1.0 / min(positions) if positions else 0.0
        return sum(1.0 / pos for pos, _ in hits if pos <= k)
    if metric in ("map", "mar"):
        total = 0.0
        for i in range(1, k + 1):
            Hi = _hits_upto(hits, i)
            at = Hi / i if metric == "map" else _div(Hi, R)
            at_i = sum(1 for pos, _ in hits if pos == i)
            weight = {"yes": at_i, "distinct": min(at_i, 1), "no": 1}[o["indicator"]]
            total += at * weight
        d = o["denominator"]
        if d == "min_k_r":
            den = min(k, R)
        elif d == "r":
            den = R
        elif d == "k":
            den = k
        elif d == "length":
            den = min(k, length)
        elif d == "min_length_r":
            den = min(k, length, R)
        elif d == "hits":
            den = Hk
        else:  # cumulative_min
            den = sum(min(i, R) for i in range(1, k + 1))
        return _div(total, den)
    if metric in ("dcg", "ndcg"):
        o = dict(o)
        if o.get("t") is None:
            o["t"] = 0.0 if o.get("rel") is None else o["rel"]
        base, kind = o.get("base", 2.0), o.get("discount", "log")
        dcg = sum(_gain(r, o) * _disc(pos, base, kind) for pos, r in hits if pos <= k)
        if metric == "dcg":
            return dcg
        ideal = o["ideal"]
        if ideal == "none":
            return dcg
        if ideal == "hits":  # the top-k hits, best first, in the k slots of an ideal list
            gains = sorted((_gain(r, o) for pos, r in hits if pos <= k), reverse=True)[:k]
        elif ideal == "listed":  # the relevant items anywhere in the list, best first, cut at k
            gains = sorted((_gain(r, o) for pos, r in user["listed"]), reverse=True)[:k]
        elif ideal == "k":
            best = max((_gain(r, o) for r in user["rel"]), default=0.0)
            gains = [best] * k
        elif ideal == "length":  # the k slots cut at the list's own length
            best = max((_gain(r, o) for r in user["rel"]), default=0.0)
            gains = [best] * min(k, length)
        else:
            gains = [_gain(r, o) for r in sorted(user["rel"], reverse=True)]
            if ideal == "cut":
                gains = gains[:k]
        idcg = sum(g * _disc(j + 1, base, kind) for j, g in enumerate(gains))
        return _div(dcg, idcg)
    raise KeyError(metric)


def split_options(options: dict, defaults: dict) -> tuple[dict, dict]:
    """``(context, own)``: the context options (:data:`CONTEXT_DEFAULTS` with those of
    ``options``) and the metric's own (``defaults`` with the rest of ``options``)."""
    ctx = {**CONTEXT_DEFAULTS, **{a: v for a, v in options.items() if a in CONTEXT_DEFAULTS}}
    return ctx, {**defaults, **{a: v for a, v in options.items() if a not in CONTEXT_DEFAULTS}}


def metric_options(metric: str, options: dict | None, table: dict, *, average: bool = True) -> tuple[dict, dict]:
    """:func:`split_options` of ``metric``'s options against its defaults in ``table`` (KeyError:
    not this reference's metric); ``average=False``: ``ties=average`` is not covered."""
    if metric not in table:
        raise KeyError(metric)
    ctx, o = split_options(options or {}, table[metric])
    if not average and ctx["order"] == "score" and ctx["ties"] == "average":
        raise NotImplementedError("ties=average")
    return ctx, o


def policy_values(users: dict, ctx: dict, value) -> tuple[dict, float]:
    """``(per_user, mean)`` under the user-set policies: ``empty`` and ``norecs`` refuse, skip
    (None) or score 0; every other user gets ``value(u, data)``."""
    for data in users.values():
        if len(data["rel"]) == 0 and ctx["empty"] == "error":
            raise RefError("user without relevant items")
        if len(data["rel"]) and data["length"] == 0 and ctx["norecs"] == "error":
            raise RefError("user without recommendations")
    per_user: dict = {}
    for u, data in users.items():
        no_rel = len(data["rel"]) == 0
        if no_rel and ctx["empty"] == "skip" or not no_rel and data["length"] == 0 and ctx["norecs"] == "skip":
            per_user[u] = None
        elif no_rel or data["length"] == 0:
            per_user[u] = 0.0
        else:
            per_user[u] = value(u, data)
    included = [v for v in per_user.values() if v is not None]
    if not included:
        raise RefError("no user left")
    return per_user, sum(included) / len(included)


def reference(recs: dict, truth: dict, metric: str, k: int, options: dict | None = None):
    """``(per_user, mean)``: per_user maps every truth user to its value or None (left out)."""
    options = options or {}
    ctx, o = split_options(options, METRIC_DEFAULTS[metric])
    o["rel"] = ctx["rel"]
    users = prepare(recs, truth, ctx, metric)
    micro = metric in ("precision", "recall") and o.get("average") == "micro"
    per_user: dict = {}
    for u, data in users.items():
        no_rel = len(data["rel"]) == 0
        if no_rel and ctx["empty"] == "error":
            raise RefError("user without relevant items")
        if not no_rel and data["length"] == 0 and ctx["norecs"] == "error":
            raise RefError("user without recommendations")
    for u, data in users.items():
        no_rel = len(data["rel"]) == 0
        if no_rel and ctx["empty"] == "skip":
            per_user[u] = None
        elif no_rel and micro:  # no hit; the user's denominator still counts
            per_user[u] = (0.0, per_user_value(metric, k, o, data)[1])  # type: ignore[index]
        elif no_rel:
            per_user[u] = (0.0, 0.0) if (metric == "f1" and o["aggregate"] == "means") else 0.0
        elif data["length"] == 0 and ctx["norecs"] == "skip":
            per_user[u] = None
        else:
            per_user[u] = per_user_value(metric, k, o, data)
    included = [v for v in per_user.values() if v is not None]
    if not included:
        raise RefError("no user left")
    if metric == "f1" and o["aggregate"] == "means":
        P = sum(p for p, _ in included) / len(included)
        Rc = sum(r for _, r in included) / len(included)
        mean = _div(2 * P * Rc, P + Rc)
        per_user = {u: (None if v is None else _div(2 * v[0] * v[1], v[0] + v[1])) for u, v in per_user.items()}
    elif micro:  # pooled: total hits / total denominators
        mean = _div(sum(h for h, _ in included), sum(d for _, d in included))
        per_user = {u: (None if v is None else _div(v[0], v[1])) for u, v in per_user.items()}
    else:
        mean = sum(included) / len(included)
    return per_user, mean
