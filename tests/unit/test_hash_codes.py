"""String ids become codes through 64-bit hashes (``receval.encode.hash64``), and no value may
depend on a hash collision: with a deliberately weak hash (2 bits, or a constant) every code and
every value is the same as with the real one."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import receval
from receval import encode as E

SPECS = ["precision@5", "recall@5", "ndcg@5", "map@5", "mrr@5", "hitrate@5", "auc", "coverage@5", "ndcg@20"]


def two_bits(s: pl.Series) -> np.ndarray:
    return s.hash(seed=1).to_numpy() & np.uint64(3)


def constant(s: pl.Series) -> np.ndarray:
    return np.zeros(len(s), dtype=np.uint64)


def data(seed: int = 0, n_users: int = 60):
    rng = np.random.default_rng(seed)
    ru, ri, sc, tu, ti, ra = [], [], [], [], [], []
    for u in range(n_users):
        items = rng.choice(40, size=12, replace=False)
        n = int(rng.integers(1, 12))
        ru += [f"u{u}"] * n
        ri += [f"i{i}" for i in items[:n]]
        sc += list(np.round(rng.random(n), 1))  # coarse scores: ties
        if u % 7:  # some recommended users are not in the truth
            m = int(rng.integers(1, 6))
            tu += [f"u{u}"] * m
            ti += [f"i{i}" for i in rng.choice(items, size=m, replace=False)]
            ra += list(rng.integers(1, 6, m).astype(float))
    tu += ["u999", "u999"]  # a truth user without recommendations, items nobody recommends
    ti += ["i500", "i7"]
    ra += [5.0, 3.0]
    recs = pl.DataFrame({"user_id": ru, "item_id": ri, "score": sc}).sample(fraction=1.0, shuffle=True, seed=seed)
    truth = pl.DataFrame({"user_id": tu, "item_id": ti, "rating": ra}).sample(fraction=1.0, shuffle=True, seed=seed + 1)
    return recs, truth


@pytest.mark.parametrize("weak", [two_bits, constant])
def test_hash_codes_equal_exact_join_codes(monkeypatch, weak):
    rng = np.random.default_rng(3)
    table = pl.Series("k", [f"id{i}" for i in rng.choice(5000, 800, replace=False)]).unique().sort()
    keys = pl.Series("k", [f"id{i}" for i in rng.integers(0, 6000, 20_000)])
    want = E._table_codes(keys, table)
    assert np.array_equal(E._hash_codes(keys, table), want)
    monkeypatch.setattr(E, "hash64", weak)
    monkeypatch.setattr(E, "_HASH_SLICE", 4096)  # several slices
    assert np.array_equal(E._hash_codes(keys, table), want)


def test_hash_codes_key_sharing_a_hash_with_a_table_value_is_absent(monkeypatch):
    """A key outside the table whose hash equals a table value's hash (and no other table value
    has it) is absent: the ids are compared, not only their hashes."""
    table = pl.Series("k", ["a", "b"])
    keys = pl.Series("k", ["a", "x", "b", "y"])

    def fake(s: pl.Series) -> np.ndarray:
        return np.array([{"a": 1, "x": 1, "b": 2, "y": 2}[v] for v in s.to_list()], dtype=np.uint64)

    monkeypatch.setattr(E, "hash64", fake)
    assert E._hash_codes(keys, table).tolist() == [0, -1, 1, -1]


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("weak", [two_bits, constant])
@pytest.mark.parametrize("ties", ["average", "item"])
def test_values_do_not_depend_on_hash_collisions(monkeypatch, weak, ties):
    recs, truth = data()
    specs = SPECS if ties == "item" else [s for s in SPECS if not s.startswith("coverage")]  # coverage: no tie average
    want = receval.evaluate(recs, truth, specs, ties=ties)
    monkeypatch.setattr(E, "hash64", weak)
    got = receval.evaluate(recs, truth, specs, ties=ties)
    assert got.values == want.values
    for a, b in zip(got.entries, want.entries):
        assert a.signature == b.signature
        if a.per_user is not None:
            assert np.array_equal(a.per_user, b.per_user, equal_nan=True)
    assert np.array_equal(got.user_ids, want.user_ids)


def test_duplicate_recommendations_found_under_a_weak_hash(monkeypatch):
    recs, truth = data()
    dup = pl.concat([recs, recs.head(3)])
    monkeypatch.setattr(E, "hash64", two_bits)
    with pytest.raises(receval.errors.DataError, match="duplicate"):
        receval.evaluate(dup, truth, ["precision@5"], dup="error")
    kept = receval.evaluate(dup, truth, ["precision@5"], dup="first")
    monkeypatch.undo()
    assert kept.values == receval.evaluate(dup, truth, ["precision@5"], dup="first").values


def _prefix_hash(s: pl.Series) -> np.ndarray:
    """A hash that only sees an id's length and first 4 bytes (strings) or its value / 256
    (integers): ids alike in those share it, so matches must be confirmed on the ids."""
    if s.dtype.is_integer():
        return (s.to_numpy().astype(np.int64) >> 8).astype(np.uint64)
    return np.array([hash((len(v.encode()), v.encode()[:4])) % 2**63 for v in s.to_list()], dtype=np.uint64)


@pytest.mark.parametrize("hash_fn", ["real", "prefix"])
def test_hash_codes_compare_long_strings_and_look_alikes_exactly(monkeypatch, hash_fn):
    """Ids that only look alike (same length and first bytes, or integers close by) share a
    hash and are told apart on the ids: ids of every length, integers, sliced and multi-chunk
    columns give the exact join's codes."""
    rng = np.random.default_rng(7)
    # table values with distinct (length, first 4 bytes): under the prefix hash no two share one
    table = pl.Series("k", ["", "a", "abcdefghijkl", "abcdXXXXXXXXXXXXXXX", "é" * 6, "日本語のアイテム"]
                      + [f"{i:04d}-id-{i:030d}" for i in range(200)]).unique().sort()
    pool = (table.to_list() + ["abcdefghijkm", "abcdefghijklm", "abcdYYYYYYYYYYYYYYY", "é" * 5 + "e", "x"]
            + [f"{i:04d}-id-{i + 1:030d}" for i in range(200)] + [f"id{i}" for i in range(50)])
    keys = pl.Series("k", [pool[j] for j in rng.integers(0, len(pool), 5_000)])
    chunked = pl.concat([keys.slice(0, 2_000), keys.slice(2_000)], rechunk=False)
    if hash_fn == "prefix":
        monkeypatch.setattr(E, "hash64", _prefix_hash)
    for k in (keys, keys.slice(17, 3_000), chunked):
        assert np.array_equal(E._hash_codes(k, table), E._table_codes(k, table)), k.len()
    ints_t = pl.Series("k", np.arange(300, dtype=np.int64) * 256 + rng.integers(0, 256, 300))
    ints_k = pl.concat([ints_t.sample(2_000, with_replacement=True, seed=1), pl.Series("k", rng.integers(0, 300 * 256, 2_000))])
    assert np.array_equal(E._hash_codes(ints_k, ints_t), E._table_codes(ints_k, ints_t))
