"""The list layer (:mod:`receval.lists`). Its lean paths (issue 37: fewer fresh arrays on the
aspect metrics' path) give what the general paths give: ids united part by part (no
concatenated copy), integer ids coded by a table indexed by the ids themselves, the truth by
user without a sort when it is already by user, and the top-k lists without copies when every
row is inside the cut-off."""

from __future__ import annotations

import numpy as np
import pytest

from receval import evaluate
from receval.lists import ListSpace, _union_ids, encoder, unique_ids


@pytest.mark.parametrize("seed", range(40))
def test_union_of_parts_is_the_unique_ids_of_their_concatenation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtypes = [np.int64, np.int32, np.uint32, np.int16]
    parts = [rng.integers(int(rng.integers(0, 3)) * 100, 400, int(rng.integers(0, 30))).astype(dtypes[int(rng.integers(0, 4))])
             for _ in range(int(rng.integers(1, 4)))]
    if seed % 7 == 0:
        parts.append(np.zeros(0, dtype=np.float64))  # an empty part still takes part in the dtype
    want = unique_ids(np.concatenate(parts))
    got = _union_ids(parts)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


@pytest.mark.parametrize("lo", [0, 7, -5, 2**40])
@pytest.mark.parametrize("dense", [False, True])
def test_integer_codes_are_positions_in_the_sorted_universe(lo: int, dense: bool) -> None:
    """(``dense``: every id of the range present, ids from 0 are their own codes, no table)"""
    rng = np.random.default_rng(lo & 0xFFFF)
    universe = np.arange(lo, lo + 300) if dense else np.unique(rng.integers(lo, lo + 5_000, 300))
    values = rng.choice(universe, 1_000)
    for v in (values, values.astype(np.int32) if lo < 2**31 else values):
        got = encoder(universe)(v)
        assert got.dtype == np.int64
        assert np.array_equal(got, np.searchsorted(universe, values))


def _frames(shuffle: bool, longer: bool):
    rng = np.random.default_rng(3)
    users, k = 60, 8
    n = k + (4 if longer else 0)
    recs = {"user_id": np.repeat(np.arange(users), n), "item_id": rng.integers(0, 50, users * n),
            "score": np.tile(np.arange(n, 0, -1), users).astype(float)}
    # one row per (user, item): the first of each pair
    key = recs["user_id"] * 100 + recs["item_id"]
    _, first = np.unique(key, return_index=True)
    recs = {c: v[np.sort(first)] for c, v in recs.items()}
    t_user = np.repeat(np.arange(users), 6)
    t_item = rng.integers(0, 50, len(t_user))
    _, first = np.unique(t_user * 100 + t_item, return_index=True)
    first = np.sort(first)
    truth = {"user_id": t_user[first], "item_id": t_item[first], "rating": rng.integers(1, 6, len(first)).astype(float)}
    if shuffle:
        order = rng.permutation(len(truth["user_id"]))
        truth = {c: v[order] for c, v in truth.items()}
    cats = {"item_id": np.arange(50), "category": [f"g{i % 5}" for i in range(50)]}
    return recs, truth, cats


@pytest.mark.parametrize("longer", [False, True])
def test_lists_and_truth_order_give_one_value(longer: bool) -> None:
    specs = ["ab_ndcg(rmax=5)@8", "alpha_ndcg@8", "ild@8", "ab_ndcg(rmax=5)@5"]
    got = []
    for shuffle in (False, True):
        recs, truth, cats = _frames(shuffle, longer)
        res = evaluate(recs, truth, specs, rel=4.0, categories=cats)
        got.append([res[s] for s in specs])
    assert got[0] == got[1]


def _grouped(seed: int, tied: bool):
    """Column arrays as the grouped fast matcher takes them: integer ids, truth by user, each
    user's rows together in ranked order (``tied``: coarse scores, ties by ascending item)."""
    rng = np.random.default_rng(seed)
    users = np.sort(rng.choice(1000, 30, replace=False))
    parts = []
    for u in users[rng.random(30) < 0.8]:
        n = int(rng.integers(1, 9))
        items = np.sort(rng.choice(60, n, replace=False))
        score = rng.integers(0, 3, n).astype(float) if tied else rng.permutation(n).astype(float)
        order = np.lexsort((items, -score))
        parts.append((np.full(n, u), items[order], score[order]))
    ru, ri, rs = (np.concatenate([p[j] for p in parts]) for j in range(3))
    tu = np.repeat(users, 5)
    ti = np.concatenate([rng.choice(60, 5, replace=False) for _ in users])
    return {"user": ru, "item": ri, "score": rs}, {"user": tu, "item": ti, "rating": rng.integers(1, 6, len(tu)).astype(float)}


@pytest.mark.parametrize("ties", ["input", "item", "average", "optimistic"])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_ranked_rows_are_each_users_positions_in_order(ties: str, shuffle: bool, seed: int) -> None:
    """A form that says its rows are ranked (``rows_ranked``: what lets the aspect kernel read the
    lists as rows) holds each user's rows together at the positions 1..ℓ; its row users and
    positions made on demand from the row groups (the grouped matcher) are the rows' own."""
    from receval.hits import build

    recs, truth = _grouped(seed, tied=ties != "input")
    if shuffle:  # the general matcher (rows grouped again by its sort)
        order = np.random.default_rng(seed).permutation(len(recs["user"]))
        recs = {c: v[order] for c, v in recs.items()}
    h = build(recs, truth, {"order": "score", "ties": ties, "rel": 3.0}, need_rows=True, need_items=True)
    assert h.rows_ranked == (ties != "optimistic")
    assert (h.row_groups is not None) == (not shuffle and ties != "optimistic")  # (kept by the grouped matcher)
    user, pos = h.row_user, h.row_pos
    # every row of the form is a recommended row of a truth user, at its place in the user's ranking
    codes = np.searchsorted(h.user_ids, recs["user"])
    kept = np.isin(recs["user"], h.user_ids)
    assert np.array_equal(np.sort(user), np.sort(codes[kept]))
    if h.rows_ranked:
        first = np.r_[True, user[1:] != user[:-1]]
        assert len(np.unique(user[first])) == first.sum()  # each user's rows together
        start = np.maximum.accumulate(np.where(first, np.arange(len(user)), 0))
        assert np.array_equal(pos, np.arange(len(user)) - start + 1)
        # the lists as rows read what the dense lists hold
        s = h.lists
        starts, length = s.row_lists()
        items = s.top(int(length.max()))[0]
        for u in range(h.n_users):
            got = s.row_code[starts[u]:starts[u] + length[u]]
            assert np.array_equal(got, items[u][items[u] >= 0])


@pytest.mark.parametrize("kind", ["str", "int", "wide"])
def test_the_form_s_item_codes_give_the_ids_codes(kind: str) -> None:
    """The list layer given the form's item codes and their decoder (``Hits.item_decode``: the
    distinct codes decoded, then coded again) gives the universe and the codes it gives the ids."""
    from dataclasses import replace

    from receval.hits import build

    recs, truth = _grouped(7, tied=False)
    codes = np.unique(np.concatenate([recs["item"], truth["item"]]))
    ids = {"str": np.array([f"i{c:03d}" for c in codes], dtype=object), "int": codes * 3 + 5,
           "wide": codes * 2**40}[kind]
    decode = lambda c: ids[np.searchsorted(codes, c)]  # noqa: E731
    h = build(recs, truth, {"order": "score", "ties": "input", "rel": 3.0}, need_rows=True, need_items=True)
    by_ids = replace(h, row_item=decode(h.row_item), truth_item=decode(h.truth_item))
    by_codes = replace(h, item_decode=decode)
    extra = ids[::3] if kind != "str" else np.array([f"j{c}" for c in range(5)] + list(ids[::3]), dtype=object)
    cats = (extra, np.array([f"g{i % 4}" for i in range(len(extra))], dtype=object))
    a, b = ListSpace(by_ids, cats), ListSpace(by_codes, cats)
    assert np.array_equal(a.universe, b.universe)
    assert np.array_equal(a.row_code, b.row_code) and np.array_equal(a.truth_code, b.truth_code)
    assert (a.aspects != b.aspects).nnz == 0


@pytest.mark.parametrize("case", ["identity", "shifted", "gaps", "wide"])
def test_recoding_the_forms_codes(case: str) -> None:
    from receval.lists import _recoder

    rng = np.random.default_rng(5)
    present = {"identity": np.arange(50), "shifted": np.arange(50), "gaps": np.unique(rng.integers(3, 500, 50)),
               "wide": np.unique(rng.integers(0, 2**40, 50))}[case]
    target = np.arange(len(present)) + (7 if case == "shifted" else 0)
    if case == "gaps":
        target = rng.permutation(len(present))
    a = rng.choice(present, 200)
    got = _recoder(present, target)(a)
    assert got.dtype == np.int64
    assert np.array_equal(got, target[np.searchsorted(present, a)])
