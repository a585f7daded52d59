"""The engine: one plan, one run over a batch of users, one aggregation.

::

    inputs ─► encode (ids → dense codes, checks) ─► one sort ─► build the form ─► formulas ─► aggregate ─► Results

The in-memory backend is one batch; the Polars and Spark backends only supply batches (users
disjoint between batches) and merge what :func:`run_batch` returns. Policies and their
messages live in :mod:`receval.policy`; the input checks in :mod:`receval.encode`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ._version import __version__
from .dialects import Dialect, load_dialect
from .encode import Encoded, gather, rank_order
from .errors import DataError, OutsideCatalogue, RecevalError, SpecError, TiesRefused, note
from .hits import Hits, build
# the input step lives in receval.inputs; re-exported here, where tests and callers import it
from .budget import globals_without_partial
from .inputs import Request, Truth, encode_frames, encode_inputs, exact_items, read_truth
from .io import Columns, is_text_path
from .kernels import Deferred
from .options import CONTEXT_AXES
from .policy import left_out, no_user_left, of_means, pair_per_user, policy_error, user_policy, zero_pairs
from .resolve import UNSET, Resolved, decide_rel, resolve
from .results import Entry, Results
from .side import SideInputs
from .signature import make_signature, note_side
from .spec import spec_list

CONTEXT_KEYS = tuple(CONTEXT_AXES)


def needs_truth_max(resolved: Sequence[Resolved]) -> bool:
    """Whether a metric reads the largest truth rating of the whole input (ab_ndcg's rmax default)."""
    return any(r.metric.name == "ab_ndcg" and r.options.get("rmax") is None for r in resolved)


def dialect_of(dialect: Any):
    """A dialect argument (None, a name, or a :class:`receval.dialects.Dialect`) as an object."""
    if dialect is None or dialect == "standard":
        return None

    if isinstance(dialect, str):
        return load_dialect(dialect)
    if isinstance(dialect, Dialect):
        return dialect
    raise SpecError(f"dialect must be a name such as 'recbole' or 'daisyrec@2.3', got {type(dialect).__name__} {dialect!r}")


def plan_request(req: Request) -> tuple[SideInputs, list[Resolved]]:
    """The side inputs of a request and its specs resolved, the signatures naming the side
    inputs their values read (what every engine starts with)."""
    side = req.side()
    return side, note_side(plan(req.metrics, req.dialect, dict(req.overrides)), side)


def ignored_rows(recs: pl.DataFrame, user: str) -> dict[str, int]:
    """The counts of a batch of users without a truth row (``run_batch(None, ..., ignored=)``):
    its recommendation rows (``recs``, users in column ``user``) are ignored."""
    if not recs.height:
        return {}
    n_users = recs.get_column(user).n_unique()
    return {"rec_rows": recs.height, "ignored_rec_rows": recs.height, "ignored_rec_users": n_users, "users_only_in_recs": n_users}


def plan(metrics: Any, dialect: Any = None, overrides: dict[str, Any] | None = None) -> list[Resolved]:
    """Resolve the metric specs of one call (explicit > call keyword > dialect > default)."""
    metrics = spec_list(metrics)
    ov = {k: UNSET for k in CONTEXT_KEYS}
    ov.update({k: v for k, v in (overrides or {}).items()})
    d = dialect_of(dialect)
    return [resolve(m, dialect=d, overrides=ov) for m in metrics]


def settle_rel(resolved: list[Resolved], truth: Any, rating_col: str) -> tuple[list[Resolved], str | None]:
    """:func:`receval.resolve.decide_rel` on a truth frame (polars, eager or lazy): ``rel:>0``
    when it has the rating column ``rating_col``; with the note on what that decided
    (:func:`rel_message`, counts read from the ratings), for the caller to say once the values
    are computed (a refused call says only its error)."""
    names = truth.collect_schema().names() if isinstance(truth, pl.LazyFrame) else truth.columns
    has_rating = rating_col in names
    if not has_rating or not any(r.rel_auto for r in resolved):
        return decide_rel(resolved, has_rating), None
    y = pl.col(rating_col).cast(pl.Float64, strict=False)
    try:
        got = truth.lazy().select(pl.len().alias("rows"), (y <= 0).sum().alias("nonpositive"),
                                  y.filter(y > 0).n_unique().alias("levels")).collect().row(0)
    except pl.exceptions.PolarsError:  # ratings that are no numbers: refused by encode, which names the column
        return decide_rel(resolved, True), None
    return decide_rel(resolved, True), rel_message(*(int(v or 0) for v in got))


def rel_message(rows: int, nonpositive: int, levels: int) -> str | None:
    """The note on the standard relevance default ``rel:>0`` (a rating column, no ``rel``): how
    many truth rows it leaves out, or that every positive rating level counts; None when the
    ratings are a plain positive label.

    >>> rel_message(10, 4, 1)
    "rel:>0 (the default): 4 of 10 truth rows have a rating <= 0 and are not relevant; rel='all' counts every row"
    >>> rel_message(10, 0, 1) is None
    True
    """
    if nonpositive:
        return (f"rel:>0 (the default): {nonpositive} of {rows} truth rows have a rating <= 0 and are not relevant; "
                "rel='all' counts every row")
    if levels > 1:
        return (f"rel:>0 (the default): all {levels} positive rating levels count as relevant; "
                "set a threshold with rel= (--rel), e.g. rel=4 for ratings >= 4")
    return None


def say(message: str | None) -> None:
    """:func:`receval.errors.note` when there is something to say."""
    if message:
        note(message)


# ---- inputs ------------------------------------------------------------------------------------


# ---- the form ----------------------------------------------------------------------------------


def order_rule(enc: Encoded, opts: dict[str, Any]) -> str:
    """The order a build group ranks by; ``auto`` never falls back to the input order."""
    rule = opts.get("order", "auto")
    if rule == "auto":
        if "rank" in enc.recs:
            return "rank"
        if "score" in enc.recs:
            return "score"
        cols = enc.info.get("columns") or Columns()
        raise DataError(
            f"the recommendations have neither a score column ('{cols.score}') nor a rank column ('{cols.rank}'), "
            f"so the order of each list is unknown; name one with score_col= / rank_col= (--score-col / --rank-col), "
            "or pass order='input' to rank each user's rows in the order given"
        )
    if (rule == "score" and opts.get("order_from_dialect") and "score" not in enc.recs and "rank" in enc.recs
            and opts.get("ties") != "average"):
        return "rank"  # a dialect that sorts by score reads given ranks as that order (recorded as order:rank)
    if rule == "rank_value" and opts.get("order_from_dialect") and "rank" not in enc.recs and "score" in enc.recs:
        # a dialect that reads a rank column (RecTools) given scores only: ranks from the scores,
        # descending, ties by the dialect's tie rule, as its users derive them (recorded as order:score)
        return "score"
    return rule


def _text_ranks(enc: Encoded, item: np.ndarray) -> np.ndarray:
    """Each row's rank among the listed items when their ids are compared as text."""
    uniq, inv = np.unique(item, return_inverse=True)
    text = np.asarray(enc.item_ids(uniq)).astype(str)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(text, kind="stable")] = np.arange(len(uniq))
    return rank[inv.ravel()]


def form(enc: Encoded, opts: dict[str, Any], needs: Iterable[str] = (), side: SideInputs | None = None,
         reach: int | None = None) -> Hits:
    """Sort once and build the intermediate form of one build group (``side``: the call's side
    inputs, which the form carries to the list layer and the metrics; ``reach``: the cut-off
    within which the group's tie rule decides values, :func:`tie_reach`)."""
    needs = set(needs)

    if isinstance(enc, Deferred):  # the kernels form what they can (receval.kernels), else the numpy path
        got = enc.form(opts, needs, side, reach)
        if got is not None:
            return got
        enc = enc.encoded()
    rule = order_rule(enc, opts)
    r = enc.recs
    if rule == "score" and "score" not in r:
        raise DataError("order='score' needs a score column in the recommendations; name it with score_col=")
    if rule in ("rank", "rank_value") and "rank" not in r:
        raise DataError(f"order='{rule}' needs a rank column in the recommendations; name it with rank_col=")
    if rule in ("rank", "rank_value") and len(r["rank"]) and int(r["rank"].min()) < 1:
        raise DataError("ranks must be >= 1 (1 = best); found a rank below 1")
    sorted_user: list[np.ndarray] = []
    ties, tie_item = opts.get("ties", "input"), r["item"]
    if ties == "text_desc":  # trec_eval: tied items by their ids compared as text, descending
        ties, tie_item = "item_desc", _text_ranks(enc, r["item"])
    if rule == "rank_value":  # equal ranks allowed: a stable sort keeps their input order
        perm = np.lexsort((r["rank"], r["user"]))
        perm = None if np.array_equal(perm, np.arange(len(perm))) else perm
    else:
        perm = rank_order(r["user"], r.get("score"), r.get("rank"), rule, ties, tie_item, sorted_user, enc.heads)
    if perm is not None:
        r = gather(r, perm, {"user": sorted_user[0]} if sorted_user else None)
    tied = tied_codes(r, rule, reach)
    h = build(
        r, enc.truth, dict(opts, order=rule),
        need_rows="rows" in needs, need_items="items" in needs, need_truth_rows="truth_rows" in needs,
        ids=(lambda c: enc.user_ids[c], enc.item_ids), dups_checked=enc.dups_checked, side=side,
        heads=enc.heads if perm is None and rule == "score" else None,
    )
    h.user_ids = enc.user_ids[h.user_ids]
    if h.row_item is not None and enc.items_exact:  # the item layer decodes the codes it reads (few: the distinct ones)
        h.item_decode = enc.item_ids
    elif not enc.items_exact:
        h.row_item = h.truth_item = None
    h.info = {**h.info, **{k: v for k, v in enc.info.items() if k != "columns"}}
    h.tied_codes = tied
    return h


#: the tie rules under which a value can depend on the row order (input) or on the item ids
#: (item, item_desc, text_desc); ``average`` and ``optimistic`` depend on neither
ORDER_DEPENDENT_TIES = {"input": "the row order", "item": "the item ids", "item_desc": "the item ids", "text_desc": "the item ids"}


def tie_reach(rs: Sequence[Resolved]) -> int | None:
    """The cut-off within which the tie rule of a build group decides values: the largest k of
    its specs that read ``ties`` (0: the whole list, for a spec without a cut-off); None when
    none reads it."""
    ks = [r.k for r in rs if "ties" in r.metric.context]
    if not ks:
        return None
    return 0 if any(k is None for k in ks) else max(k for k in ks if k is not None)


def tied_codes(r: dict[str, np.ndarray], rule: str, reach: int | None) -> np.ndarray | None:
    """The users (codes) whose list, ranked by score, has a tie group reaching into the top
    ``reach`` (0: anywhere in the list): two or more rows with equal scores, the first of them
    at a position <= ``reach``. Rows grouped by user, ranked (equal scores adjacent). None when
    ``reach`` is None; empty for lists not ordered by score (a rank or the row order: no ties)."""
    if reach is None:
        return None
    if rule != "score" or "score" not in r or len(r["user"]) < 2:
        return np.zeros(0, dtype=np.int64)
    u, sc = r["user"], r["score"]
    eq = (u[1:] == u[:-1]) & (sc[1:] == sc[:-1])
    if reach and eq.any():
        idx = np.arange(len(u))
        start = np.maximum.accumulate(np.where(np.r_[True, u[1:] != u[:-1]], idx, 0))
        eq &= (idx - start)[:-1] < reach  # the pair's first row at a position <= reach
    return np.unique(u[1:][eq]).astype(np.int64) if eq.any() else np.zeros(0, dtype=np.int64)


class TieCount:
    """The users of one batch whose values a tie rule decides, over the build groups of a call:
    ``tied`` under any rule, ``noted`` under a rule the user did not choose (the default); users
    are disjoint between batches, so the counts of batches add."""

    def __init__(self) -> None:
        self.tied: list[np.ndarray] = []
        self.noted: list[np.ndarray] = []

    def add(self, h: Hits, rs: Sequence[Resolved]) -> None:
        if h.tied_codes is None:
            return
        self.tied.append(h.tied_codes)
        if any("ties" in r.metric.context and "ties" not in r.chosen for r in rs):
            self.noted.append(h.tied_codes)

    def into(self, info: dict[str, Any], rs: Sequence[Resolved]) -> None:
        def n(codes: list[np.ndarray]) -> int:
            return int(np.unique(np.concatenate(codes)).size) if codes else 0

        info["tied_users"], info["tied_users_noted"] = n(self.tied), n(self.noted)
        rules = sorted({str(r.options.get("ties")) for r in rs if "ties" in r.metric.context})
        if rules:
            info["tie_rule"] = ",".join(rules)


def warn_ties(info: dict[str, Any], resolved: Sequence[Resolved] = ()) -> None:
    """The notes of one call (once each, pointing at the user's line): a tie rule the user did
    not choose that decided values (``info["tied_users_noted"]``), truth users with relevant
    items but no recommendations scored under a ``norecs`` the user did not set, and truth users
    without a relevant item left out under an ``empty`` the user did not set (a smaller user set)."""
    n, users = int(info.get("tied_users_noted", 0)), int(info.get("users", 0))
    unchosen = [r for r in resolved if "ties" in r.metric.context and "ties" not in r.chosen]
    if n and users and unchosen:
        rule = str(unchosen[0].options.get("ties"))
        ks = [r.k for r in unchosen]
        where = "are in their lists" if any(k is None for k in ks) else f"reach into their top {max(k for k in ks if k is not None)}"
        note(f"ties={rule} decided values for {n} of {users} users ({100 * n / users:.1f}%): tied scores {where}; "
             "ties=item or another rule gives other values (receval explain ties)")
    missing = int(info.get("users_without_recs", 0))
    if missing and any("norecs" in r.metric.context and "norecs" not in r.chosen for r in resolved):
        with_rel = users - int(info.get("users_without_relevant", 0))
        note(f"{missing} of {with_rel} truth users with relevant items have no recommendations; they score 0 "
             "(norecs=zero); norecs=skip leaves them out")
    empty = int(info.get("users_without_relevant", 0))
    if empty and any("empty" in r.metric.context and "empty" not in r.chosen and r.options.get("empty") == "skip"
                     for r in resolved):
        note(f"{empty} of {users} truth users have no relevant item and are left out of the means (empty=skip); "
             "empty=zero counts them as 0")


# ---- one batch ---------------------------------------------------------------------------------


def groups(resolved: Sequence[Resolved]) -> dict[tuple, list[int]]:
    """Indices of the specs by build key (one form each)."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(resolved):
        out[r.build_key()].append(i)
    return out


def formula_groups(resolved: Sequence[Resolved], idxs: Sequence[int]) -> list[list[int]]:
    """Indices by formula key: specs differing only in k share one pass."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for i in idxs:
        out[resolved[i].formula_key()].append(i)
    return list(out.values())


def ks_of(resolved: Sequence[Resolved], idxs: Sequence[int]) -> list[int]:
    return sorted({resolved[i].k if resolved[i].k is not None else 0 for i in idxs})


def k_index(r: Resolved, ks: list[int]) -> int:
    return ks.index(r.k if r.k is not None else 0)


def needs_of(resolved: Sequence[Resolved], idxs: Sequence[int]) -> set[str]:
    return set().union(*(resolved[i].metric.needs_for(resolved[i].options) for i in idxs))


def settled(h: Hits, r: Resolved, ks: list[int]) -> None:
    """``ties=average`` on a metric with no tie-averaged value: refuse unless the scores settle
    the order of every top k (then every ordering of the ties gives the one value)."""
    if r.settle:
        h.check_order_settled(ks, str(r.spec).split("@")[0])


def compute_entries(h: Hits, rs: Sequence[Resolved]) -> dict[int, Entry]:
    """Every resolved spec on one form, aggregated; keyed by ``id()`` of the spec."""
    out: dict[int, Entry] = {}
    for fidx in formula_groups(rs, range(len(rs))):
        r0 = rs[fidx[0]]
        ks = ks_of(rs, fidx)
        settled(h, r0, ks)
        values = r0.metric.compute(h, ks, r0.options)
        for i in fidx:
            out[id(rs[i])] = aggregate(h, rs[i], values, k_index(rs[i], ks))
    return out


def aggregate(h: Any, r: Resolved, values: Any, j: int) -> Entry:
    """One value from per-user values (policies applied; F1 of means for pairs) or a global value."""
    order = h.options.get("order")
    if not r.per_user:  # an aggregate metric: one value per cut-off
        value = float(np.asarray(values)[j])
        sig = make_signature(r, __version__, order=order)
        return Entry(r.key, value, sig, users=0, dialect=r.dialect, asked=str(r.spec))
    v = np.asarray(values)[:, j]
    include, zero, skipped = user_policy(h, r.options, r.metric.context, left_out(v, r.metric.skips))
    pairs = r.metric.pair_kind(r.options)
    v = zero_pairs(pairs, v, zero) if pairs else np.where(zero, 0.0, v)
    n = int(include.sum())
    sig = make_signature(r, __version__, order=order, skipped=skipped)
    if n == 0:
        raise no_user_left(r.spec)
    if pairs:  # (precision, recall) pairs: F1 of the means; (numerator, denominator): their ratio
        value = of_means(pairs, v[include, 0].mean(), v[include, 1].mean())
        pu = pair_per_user(pairs, v)
    else:
        value = float(v[include].mean())
        pu = v
    per_user = np.where(include, pu, np.nan)
    return Entry(r.key, float(value), sig, users=n, skipped=skipped, per_user=per_user, dialect=r.dialect, asked=str(r.spec))


class Each(dict):
    """What :func:`evaluate_each` returns: ``{position in resolved: Entry, or the RecevalError
    that refused it}``, with ``user_ids`` (the users every per-user array is aligned with; None
    when no form was built) and ``info`` (the first form's, with the tie counts of all)."""

    def __init__(self) -> None:
        super().__init__()
        self.user_ids: np.ndarray | None = None
        self.info: dict[str, Any] = {}


def evaluate_each(enc: Encoded, resolved: Sequence[Resolved], side: SideInputs | None = None, *,
                  strict: bool = False) -> Each:
    """Every resolved spec on all users of ``enc`` at once: one form per build group, one pass
    per formula group. A refusal (a :class:`receval.errors.RecevalError` of the form or of a
    formula) is raised when ``strict``; else it is the value of the specs it refuses (a formula
    group that fails is computed again spec by spec, so that only the failing specs carry it).
    ``resolved`` as the caller decided them (the relevance default: :func:`settle_rel`)."""
    out = Each()
    count = TieCount()
    for key, idxs in groups(resolved).items():
        rs = [resolved[i] for i in idxs]
        try:
            h = form(enc, dict(key), needs_of(resolved, idxs), side, tie_reach(rs))
        except RecevalError as exc:
            if strict:
                raise
            out.update(dict.fromkeys(idxs, exc))
            continue
        if out.user_ids is None:
            out.user_ids, out.info = h.user_ids, dict(h.info)
        count.add(h, rs)
        try:
            got: dict[int, Entry | RecevalError] = dict(compute_entries(h, rs))
        except RecevalError:
            if strict:
                raise
            got = {}
            for r in rs:
                try:
                    got.update(compute_entries(h, [r]))
                except RecevalError as exc:
                    got[id(r)] = exc
        out.update({i: got[id(resolved[i])] for i in idxs})
    count.into(out.info, resolved)
    return out


def evaluate_encoded(enc: Encoded, resolved: Sequence[Resolved], side: SideInputs | None = None) -> Results:
    """The in-memory backend: :func:`evaluate_each` (a refusal raised), the notes said, the values as Results."""
    each = evaluate_each(enc, resolved, side, strict=True)
    warn_ties(each.info, resolved)
    return Results([each[i] for i in range(len(resolved))], each.user_ids, __version__, each.info)


@dataclass
class Batch:
    """Raw per-user values of one batch of users (see :func:`run_batch`)."""

    user_ids: np.ndarray
    values: list[np.ndarray | None]  # per spec: [U] or [U, 2] raw per-user values; None for global
    n_rel: list[np.ndarray]
    length: list[np.ndarray]
    order: list[str | None]
    partials: list[Any]  # per spec: partial statistics (global metrics), else None
    whole: list[Any]  # per spec: the global value when computed on all users at once
    info: dict[str, Any] = field(default_factory=dict)
    #: per spec: the ties=average refusal, or the items outside the catalogue, of this batch
    #: (the counts and the items are added over batches)
    refused: dict[int, TiesRefused | OutsideCatalogue] = field(default_factory=dict)


def run_batch(enc: Encoded | None, resolved: Sequence[Resolved], side: SideInputs | None = None,
              whole_globals: bool = False, ignored: dict[str, Any] | None = None) -> Batch:
    """Per-user raw values of one batch of users with the in-memory form and formulas
    (``enc`` None: the batch has no truth user; ``ignored`` then counts its recommendation rows)."""
    n = len(resolved)
    out = Batch(np.zeros(0), [None] * n, [np.zeros(0, np.int64)] * n, [np.zeros(0, np.int64)] * n,
                [None] * n, [None] * n, [None] * n)
    if enc is None:
        out.info = dict(ignored or {})
        return out
    first, count = True, TieCount()
    for key, idxs in groups(resolved).items():
        rs = [resolved[i] for i in idxs]
        h = form(enc, dict(key), needs_of(resolved, idxs), side, tie_reach(rs))
        if first:
            out.user_ids, out.info, first = h.user_ids, dict(h.info), False
        count.add(h, rs)
        for fidx in formula_groups(resolved, idxs):
            r0 = resolved[fidx[0]]
            ks = ks_of(resolved, fidx)
            try:
                _batch_values(h, r0, ks, fidx, resolved, out, whole_globals)
            except (TiesRefused, OutsideCatalogue) as exc:  # judged on all batches together (merge)
                for i in fidx:
                    out.refused[i] = exc
            for i in fidx:
                out.n_rel[i], out.length[i] = h.n_rel, h.length
                out.order[i] = h.options.get("order")
    count.into(out.info, resolved)
    return out


def _batch_values(h: Hits, r0: Resolved, ks: list[int], fidx: list[int], resolved: Sequence[Resolved], out: Batch,
                  whole_globals: bool) -> None:
    """The raw values (or partial statistics) of one formula group on one batch's form."""
    settled(h, r0, ks)
    if not r0.per_user:
        if whole_globals:
            vals = np.asarray(r0.metric.compute(h, ks, r0.options))
            for i in fidx:
                out.whole[i] = vals[k_index(resolved[i], ks)]
        else:
            part = r0.metric.partial(h, ks, r0.options)  # type: ignore[misc]
            for i in fidx:
                out.partials[i] = part
    else:
        vals = np.asarray(r0.metric.compute(h, ks, r0.options))
        for i in fidx:
            out.values[i] = vals[:, k_index(resolved[i], ks)]


def merge_info(infos: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for info in infos:
        for key, v in info.items():
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                out[key] = out.get(key, 0) + int(v)
            else:
                out.setdefault(key, v)
    return out


class MergedUsers:
    """What :func:`aggregate` reads of a form, rebuilt from the batches."""

    def __init__(self, user_ids: np.ndarray, n_rel: np.ndarray, length: np.ndarray, order: str | None):
        self.user_ids, self.n_rel, self.length = user_ids, n_rel, length
        self.options = {"order": order}

    @property
    def n_users(self) -> int:
        return len(self.user_ids)


def merge(batches: Sequence[Batch], resolved: Sequence[Resolved]) -> Results:
    """Exact merge of batches: per-user values in user order through :func:`aggregate`. Each
    batch's per-user values are let go (set to None) as they are merged: memory at 10M users."""
    batches = [b for b in batches if len(b.user_ids)]
    if not batches:
        raise DataError("the ground truth is empty; pass at least one (user, item) row")
    raise_refused([b.refused for b in batches], len(resolved))
    user_ids = np.concatenate([b.user_ids for b in batches])
    perm = np.argsort(user_ids, kind="stable")
    user_ids = user_ids[perm]
    order = next((o for b in batches for o in b.order if o is not None), None)
    entries = []
    merged: dict[tuple[int, ...], np.ndarray] = {}  # the batches' arrays a build group shares, merged once

    def users_order(arrays: list[np.ndarray]) -> np.ndarray:
        key = tuple(id(a) for a in arrays)
        if key not in merged:
            merged[key] = np.concatenate(arrays)[perm]
        return merged[key]

    for i, r in enumerate(resolved):
        order_i = next((b.order[i] for b in batches if b.order[i] is not None), order)
        if not r.per_user:
            if batches[0].whole[i] is None:
                entries.append(combine_partials(r, resolved, [b.partials[i] for b in batches], order_i))
                continue
            stub = MergedUsers(user_ids, np.zeros(0), np.zeros(0), order_i)
            entries.append(aggregate(stub, r, np.asarray([batches[0].whole[i]]), 0))
            continue
        v = np.concatenate([b.values[i] for b in batches])[perm]  # type: ignore[misc]
        for b in batches:  # memory: each batch's values are let go once merged
            b.values[i] = None
        stub = MergedUsers(user_ids, users_order([b.n_rel[i] for b in batches]), users_order([b.length[i] for b in batches]), order_i)
        entries.append(aggregate(stub, r, v[:, None], 0))
        del v, stub
    info = merge_info([b.info for b in batches])
    warn_ties(info, resolved)
    return Results(entries, user_ids, __version__, info)


def raise_refused(refused: Sequence[dict[int, TiesRefused | OutsideCatalogue]], n: int) -> None:
    """Raise the ``ties=average`` refusal (or the items outside the catalogue) of the first spec
    any batch refused, with the counts (the items) of every batch added (each batch judged only
    its own users)."""
    for i in range(n):
        got = [b[i] for b in refused if i in b]
        if got:
            exc = got[0]
            for more in got[1:]:
                if isinstance(exc, TiesRefused) and isinstance(more, TiesRefused):
                    exc = exc.plus(more)
                elif isinstance(exc, OutsideCatalogue) and isinstance(more, OutsideCatalogue):
                    exc = exc.plus(more)
            raise exc


def combine_partials(r: Resolved, resolved: Sequence[Resolved], partials: list[Any], order: str | None) -> Entry:
    """The entry of a global spec from the partial statistics of every batch (``combine``)."""
    ks = sorted({x.k if x.k is not None else 0 for x in resolved if x.formula_key() == r.formula_key()})
    vals = np.asarray(r.metric.combine(partials, ks, r.options))  # type: ignore[misc]
    sig = make_signature(r, __version__, order=order)
    return Entry(r.key, float(vals[k_index(r, ks)]), sig, users=0, dialect=r.dialect, asked=str(r.spec))


@dataclass
class UserSums:
    """What a distributed backend adds up over the users of one per-user spec: the sums of the
    columns :func:`receval.policy.policy_columns` gives each user (None: a sum over no user)."""

    value: float | None  # Σ value over the users counted
    count: int  # the users counted
    a: float | None = None  # Σ precision and Σ recall of (precision, recall) pairs; None otherwise
    b: float | None = None
    skipped: int = 0
    empty: int = 0  # users an ``empty=error`` refuses, and the first of them
    first_empty: Any = None
    norecs: int = 0  # users a ``norecs=error`` refuses, and the first of them
    first_norecs: Any = None


def reduce_user_sums(r: Resolved, sums: UserSums, order: str | None) -> Entry:
    """The entry of a per-user spec from the sums over all users (a distributed backend's
    per-user reduction): the error policies, then the mean (F1 of the means for pairs)."""
    o = r.options
    if "empty" in r.metric.context and o["empty"] == "error" and sums.empty:
        raise policy_error("empty", int(sums.empty), sums.first_empty)
    if "norecs" in r.metric.context and o["norecs"] == "error" and sums.norecs:
        raise policy_error("norecs", int(sums.norecs), sums.first_norecs)
    count, skipped = sums.count, sums.skipped
    sig = make_signature(r, __version__, order=order, skipped=skipped)
    if count == 0:
        raise no_user_left(r.spec)
    if sums.a is not None:  # pairs: F1 of the means, or their ratio (policy.policy_columns)
        value = of_means(r.metric.pair_kind(r.options) or "f1", (sums.a or 0.0) / count, (sums.b or 0.0) / count)
    else:
        value = (sums.value or 0.0) / count
    return Entry(r.key, float(value), sig, users=count, skipped=skipped, dialect=r.dialect, asked=str(r.spec))


def check_globals(resolved: Sequence[Resolved], engine: str) -> None:
    missing = globals_without_partial(resolved)
    if missing:
        raise SpecError(
            f"{', '.join(missing)} cannot run on the {engine} engine yet: the metric declares no partial/combine "
            "pair for batched evaluation; use the in-memory engine"
        )


__all__ = [
    "SideInputs", "Request", "plan_request", "ignored_rows", "Truth", "read_truth", "dialect_of", "is_text_path", "exact_items", "plan", "encode_inputs", "encode_frames", "form", "order_rule", "tie_reach", "tied_codes", "TieCount", "warn_ties",
    "compute_entries", "aggregate", "Each", "evaluate_each", "evaluate_encoded", "Batch", "run_batch", "merge", "merge_info",
    "MergedUsers", "raise_refused", "combine_partials", "UserSums", "reduce_user_sums", "globals_without_partial", "check_globals", "groups", "formula_groups", "ks_of", "k_index",
]
