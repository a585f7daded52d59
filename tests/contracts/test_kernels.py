"""The compiled kernels' path (receval.kernels) against the numpy path: the same values (per user
too), signatures, counts and info on random inputs with ties, duplicates, users outside the truth,
look-alike ids sharing a hash; numba never imported for small inputs."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

import receval
from receval import encode as E
from receval import kernels as K

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def _kernels_allowed(monkeypatch):
    """These tests compare the two paths on purpose (each test forces the one it needs): a run of
    the whole suite with the kernels switched off (``RECEVAL_NO_JIT=1``) still runs them."""
    monkeypatch.delenv("RECEVAL_NO_JIT", raising=False)

SPECS = [f"{m}@{k}" for m in ("precision", "recall", "hitrate", "mrr", "map", "ndcg", "dcg", "f1") for k in (3, 10)]
SPECS += ["ndcg", "map", "mrr", "recall"]


def data(seed: int, ties: bool = False, dups: bool = False, n_users: int = 120):
    rng = np.random.default_rng(seed)
    ru, ri, sc, tu, ti, ra = [], [], [], [], [], []
    for u in range(n_users):
        items = rng.choice(60, size=25, replace=False)
        n = int(rng.integers(1, 25))
        ru += [f"u{u}"] * n
        ri += [f"i{i}" for i in items[:n]]
        sc += list(np.round(rng.random(n), 1) if ties else rng.random(n))
        if u % 7:  # some recommended users are not in the truth
            m = int(rng.integers(1, 8))
            tu += [f"u{u}"] * m
            ti += [f"i{i}" for i in rng.choice(items, size=m, replace=False)]
            ra += list(rng.integers(-1, 6, m).astype(float))
    tu += ["u999", "u999"]  # a truth user without recommendations
    ti += ["i500", "i7"]
    ra += [5.0, 3.0]
    if dups:  # a repeated (user, item) of a truth user
        j = ru.index("u1")
        ru, ri, sc = ru + [ru[j]], ri + [ri[j]], sc + [0.123]
    recs = pl.DataFrame({"user_id": ru, "item_id": ri, "score": sc}).sample(fraction=1.0, shuffle=True, seed=seed)
    truth = pl.DataFrame({"user_id": tu, "item_id": ti, "rating": ra}).sample(fraction=1.0, shuffle=True, seed=seed + 1)
    return recs, truth


@pytest.fixture
def counted(monkeypatch):
    """How many build groups the kernels formed (the path was taken)."""
    got = {"formed": 0}
    orig = K.Deferred.form

    def form(self, *a, **kw):
        h = orig(self, *a, **kw)
        got["formed"] += h is not None
        return h

    monkeypatch.setattr(K.Deferred, "form", form)
    return got


def both(monkeypatch, recs, truth, specs, **kw):
    monkeypatch.setattr(K, "MIN_ROWS", 10**15)
    want = receval.evaluate(recs, truth, specs, **kw)
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = receval.evaluate(recs, truth, specs, **kw)
    return want, got


def same(want, got) -> None:
    assert [e.metric for e in want.entries] == [e.metric for e in got.entries]
    for a, b in zip(want.entries, got.entries):
        assert a.signature == b.signature and a.users == b.users and a.skipped == b.skipped
        assert abs(a.value - b.value) <= 1e-12, (a.metric, a.value, b.value)
        if a.per_user is not None:
            pa, pb = np.asarray(a.per_user), np.asarray(b.per_user)
            assert np.array_equal(np.isnan(pa), np.isnan(pb))
            assert np.nanmax(np.abs(pa - pb), initial=0.0) <= 1e-12
    assert want.info == got.info
    assert np.array_equal(np.asarray(want.user_ids), np.asarray(got.user_ids))


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", ["input", "average", "optimistic", "item"])
@pytest.mark.parametrize("tied", [False, True])
def test_kernel_values_equal_numpy_path(monkeypatch, counted, seed, ties, tied):
    recs, truth = data(seed, ties=tied)
    want, got = both(monkeypatch, recs, truth, SPECS, ties=ties)
    same(want, got)
    # the kernels decide every list under the rules that need no item order, tied or not
    assert counted["formed"] == (ties != "item")


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("kw", [{"rel": 3}, {"rel": "all"}, {"dup": "first"}, {"norecs": "skip"}])
def test_kernel_options_and_duplicates(monkeypatch, counted, kw):
    recs, truth = data(5, dups="dup" in kw)
    want, got = both(monkeypatch, recs, truth, SPECS, **kw)
    same(want, got)
    assert counted["formed"] == ("dup" not in kw)  # a duplicate row: the numpy path applies the policy


def test_kernel_duplicate_is_refused_the_same(monkeypatch):
    recs, truth = data(6, dups=True)
    monkeypatch.setattr(K, "MIN_ROWS", 10**15)
    with pytest.raises(receval.errors.DataError) as want:
        receval.evaluate(recs, truth, ["ndcg@10"])
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    with pytest.raises(receval.errors.DataError) as got:
        receval.evaluate(recs, truth, ["ndcg@10"])
    assert str(want.value) == str(got.value)


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
def test_kernel_batched_equals(monkeypatch, counted):
    from receval.backends.polars import evaluate_polars

    recs, truth = data(7, ties=True)
    monkeypatch.setattr(K, "MIN_ROWS", 10**15)
    want = evaluate_polars(recs, truth, SPECS, n_batches=3, overrides={"ties": "input"})
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = evaluate_polars(recs, truth, SPECS, n_batches=3, overrides={"ties": "input"})
    same(want, got)
    assert counted["formed"] == 3


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
def test_look_alike_ids_sharing_a_hash_never_match(monkeypatch, counted):
    """A recommended id whose 64-bit hash equals that of one of the user's truth ids (and of no
    other id of the user) is confirmed on the ids and is no hit."""
    recs = pl.DataFrame({"user_id": ["a", "a", "a", "b", "b"], "item_id": ["x", "y", "z", "x", "w"],
                         "score": [0.9, 0.8, 0.7, 0.9, 0.8]})
    truth = pl.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "q", "w"], "rating": [1.0, 1.0, 1.0]})
    want, _ = both(monkeypatch, recs, truth, SPECS)
    real = E.hash64

    def look_alike(s: pl.Series) -> np.ndarray:  # 'y' hashes as 'q' does: only the ids tell them apart
        return real(s.replace("y", "q"))

    monkeypatch.setattr(E, "hash64", look_alike)
    monkeypatch.setattr(K, "HASH_MASK", np.uint64(0))  # short ids: every id shares the kernels' own hash
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = receval.evaluate(recs, truth, SPECS)
    assert counted["formed"] == 2  # (the first in both())
    same(want, got)
    assert got["hitrate@3"] == 1.0 and got["precision@3"] == pytest.approx((1 / 3 + 1 / 3) / 2)


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("weak", ["two_bits", "constant"])
def test_kernel_weak_hash_same_values(monkeypatch, weak):
    recs, truth = data(8)
    want, _ = both(monkeypatch, recs, truth, SPECS)

    def fake(s: pl.Series) -> np.ndarray:
        return s.hash(seed=1).to_numpy() & np.uint64(3) if weak == "two_bits" else np.zeros(len(s), np.uint64)

    monkeypatch.setattr(E, "hash64", fake)
    monkeypatch.setattr(K, "HASH_MASK", np.uint64(3 if weak == "two_bits" else 0))  # the kernels' own hash of short ids
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    same(want, receval.evaluate(recs, truth, SPECS))


def test_kernel_not_for_rows_metrics_or_ints(monkeypatch, counted):
    recs, truth = data(9)
    want, got = both(monkeypatch, recs, truth, ["auc", "coverage@10", "ndcg@10"], ties="input")
    same(want, got)
    assert counted["formed"] == 0  # one build group, and auc and coverage read its rows
    ints = recs.with_columns(pl.col("item_id").str.slice(1).cast(pl.Int64))
    tints = truth.with_columns(pl.col("item_id").str.slice(1).cast(pl.Int64))
    same(*both(monkeypatch, ints, tints, ["ndcg@10"]))
    assert counted["formed"] == 0  # integer ids: the numpy path


def test_small_inputs_never_import_numba():
    code = ("import sys, warnings, polars as pl, receval; warnings.simplefilter('ignore');"
            "r = pl.DataFrame({'user_id': ['a', 'a', 'b'], 'item_id': ['x', 'y', 'x'], 'score': [0.3, 0.2, 0.1]});"
            "t = pl.DataFrame({'user_id': ['a', 'b'], 'item_id': ['x', 'x']});"
            "receval.evaluate(r, t, ['ndcg@10', 'precision@10']);"
            "assert 'numba' not in sys.modules, 'numba imported'")
    env = {k: v for k, v in os.environ.items() if k not in ("RECEVAL_NO_JIT", "RECEVAL_JIT_MIN_ROWS")}  # the default threshold
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_no_jit_switch(monkeypatch, counted):
    recs, truth = data(10)
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    monkeypatch.setenv("RECEVAL_NO_JIT", "1")
    receval.evaluate(recs, truth, ["ndcg@10"], ties="input")
    assert counted["formed"] == 0
    monkeypatch.delenv("RECEVAL_NO_JIT")
    receval.evaluate(recs, truth, ["ndcg@10"], ties="input")
    assert counted["formed"] == 1


def test_cache_dir_outside_a_read_only_package(monkeypatch, tmp_path):
    monkeypatch.setattr(K.os, "access", lambda *a, **kw: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert K.cache_dir() == tmp_path / "receval" / "numba"


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
def test_items_sharing_a_hash_within_a_user_stay_on_the_kernels(monkeypatch, counted):
    """Short ids are confirmed in the kernel on their Arrow views: two recommended items of one
    user that share a 64-bit hash are two items (no fallback to the numpy path), and a truth
    item's look-alike is no hit; users sharing a hash stay two users."""
    recs = pl.DataFrame({"user_id": ["a", "a", "a", "b", "b", "c"], "item_id": ["x", "y", "q", "x", "w", "q"],
                         "score": [0.9, 0.8, 0.7, 0.9, 0.8, 0.5]})
    truth = pl.DataFrame({"user_id": ["a", "a", "b", "c"], "item_id": ["x", "q", "w", "q"], "rating": [1.0, 1.0, 1.0, 1.0]})
    want, _ = both(monkeypatch, recs, truth, SPECS)
    real = E.hash64

    def look_alike(s: pl.Series) -> np.ndarray:  # 'y' hashes as 'q', user 'c' as user 'b'
        return real(s.replace({"y": "q", "c": "b"}))

    monkeypatch.setattr(E, "hash64", look_alike)
    monkeypatch.setattr(K, "HASH_MASK", np.uint64(0))  # short ids: every id shares the kernels' own hash
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = receval.evaluate(recs, truth, SPECS)
    assert counted["formed"] == 2  # the kernels decided it (not a repeated item for the numpy path)
    same(want, got)
    assert got["hitrate@3"] == 1.0 and got["precision@3"] == pytest.approx((2 / 3 + 1 / 3 + 1 / 3) / 3)


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("which", ["users", "items", "both"])
def test_long_ids_same_values(monkeypatch, counted, which):
    """Ids longer than 12 bytes (not inline in their Arrow views: their bytes in the data
    buffers) are coded and confirmed in the kernels; the values are those of the numpy path."""
    recs, truth = data(11)
    pad = "-a-long-id-prefix-"
    cols = {"users": ["user_id"], "items": ["item_id"], "both": ["user_id", "item_id"]}[which]
    recs = recs.with_columns([(pl.lit(pad) + pl.col(c)).alias(c) for c in cols])
    truth = truth.with_columns([(pl.lit(pad) + pl.col(c)).alias(c) for c in cols])
    views = K._views(recs[cols[0]])
    assert views is not None and _longest(views[0]) > 12  # read as views, the bytes in the data buffers
    want, got = both(monkeypatch, recs, truth, SPECS)
    same(want, got)
    assert counted["formed"] == 1


def _longest(views: np.ndarray) -> int:
    """The bytes of the longest id of Arrow string views (their length words)."""
    return int((views[:, 0] & np.uint64(0xFFFFFFFF)).max())


def _long_look_alikes(width: int = 12, n_users: int = 40, seed: int = 5):
    """Ids of 17 bytes that share their length and first 12 bytes (``user_0000000012345``: the
    part an inline view would hold) and differ only after it, mixed with short ids; rows in
    several chunks. ``width``: the digits (12: 17-byte ids, kept in the user table's slots; 50:
    55-byte ids, kept in one array beside it)."""
    rng = np.random.default_rng(seed)
    ru, ri, sc, tu, ti, ra = [], [], [], [], [], []
    for u in range(n_users):
        uid = f"user_{u:0{width}d}" if u % 3 else f"u{u}"
        items = rng.choice(40, size=12, replace=False)
        ids = [f"item_{i:0{width}d}" if i % 4 else f"i{i}" for i in items]
        ru += [uid] * len(ids)
        ri += ids
        sc += list(rng.random(len(ids)))
        for i in rng.choice(40, size=4, replace=False):
            tu.append(uid)
            ti.append(f"item_{i:0{width}d}" if i % 4 else f"i{i}")
            ra.append(float(rng.integers(0, 4)))
    recs = pl.DataFrame({"user_id": ru, "item_id": ri, "score": sc}).sample(fraction=1.0, shuffle=True, seed=seed)
    truth = pl.DataFrame({"user_id": tu, "item_id": ti, "rating": ra})
    half = recs.height // 2
    recs = pl.concat([recs[:half], recs[half:]], rechunk=False)  # two chunks, each with its own buffers
    truth = pl.concat([truth[: truth.height // 3], truth[truth.height // 3:]], rechunk=False)
    return recs, truth


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("mask", [2**64 - 1, 3, 0])
@pytest.mark.parametrize("width", [12, 50])
def test_long_look_alike_ids_confirmed_on_their_bytes(monkeypatch, counted, mask, width):
    """Long ids are confirmed in the kernels on all their bytes: with every id sharing the
    kernels' hash (mask 0) or two bits of it, look-alike long ids (the same length and first 12
    bytes, ``item_000000000017`` / ``item_000000000018``) are two ids, users too, in columns of
    several chunks; the values are the numpy path's and the kernels decide every group (a shared
    hash is no repeated item)."""
    recs, truth = _long_look_alikes(width)
    assert recs["user_id"].n_chunks() == 2 and recs["item_id"].str.len_bytes().max() == width + 5
    monkeypatch.setattr(K, "MIN_ROWS", 10**15)
    want = receval.evaluate(recs, truth, SPECS)
    monkeypatch.setattr(K, "HASH_MASK", np.uint64(mask))
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = receval.evaluate(recs, truth, SPECS)
    assert counted["formed"] == 1
    same(want, got)


def test_long_id_hash_depends_on_the_bytes_only():
    """The kernels' hash of an id is that of its bytes, whatever its place (chunk, data buffer,
    offset) and its length class; ids that differ after their 12th byte hash apart."""
    ids = ["", "a", "abcdefghijkl", "abcdefghijklm", "user_0000000012345", "user_0000000012346", "x" * 36]
    one = pl.Series(ids)
    other = pl.concat([pl.Series(["zz" * 20, "padding-before-the-ids"]), pl.Series(ids[::-1])], rechunk=True)[2:]

    def hashes(s: pl.Series) -> np.ndarray:
        parts = K._chunk_views(s)
        assert parts is not None
        return K._view_hash(parts)

    h1, h2 = hashes(one), hashes(other)[::-1]
    assert np.array_equal(h1, h2)
    assert len(set(h1.tolist())) == len(ids)
    short = pl.Series(["abcdefghijkl"])  # the hash of a short id is that of its inline view
    out = np.empty(1, np.uint64)
    K._jit().hash_views(K._views(short)[0], out, K.HASH_MASK, K._NO_ADDR, K._NO_ADDR)
    assert out[0] == h1[2]


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("ties", ["input", "average", "optimistic"])
def test_signed_zero_scores_tie(monkeypatch, ties):
    """-0.0 and 0.0 are one score (a tie) on the kernels as on the numpy path."""
    recs, truth = data(12)
    recs = recs.with_columns(pl.when(pl.int_range(pl.len()) % 2 == 0).then(-0.0).otherwise(0.0).alias("score"))
    want, got = both(monkeypatch, recs, truth, SPECS, ties=ties)
    same(want, got)


def _ids_of_every_length(n: int, longest: int, seed: int) -> list[str]:
    """``n`` distinct ids of 1 .. ``longest`` bytes: each length's ids zero-padded numbers, so
    ids of one length share their first bytes and differ in their last ones (look-alikes)."""
    lengths = np.random.default_rng(seed).integers(1, longest + 1, size=n)
    lengths[:2] = longest  # the first two ids of the longest length
    return list(dict.fromkeys(f"{k:0{int(m)}d}"[-int(m):] for k, m in enumerate(lengths)))


@pytest.mark.parametrize("mask", [2**64 - 1, 3])
@pytest.mark.parametrize("longest", [12, 17, 36, 44, 45, 80])
def test_user_table_codes_ids_of_every_length(mask, longest):
    """The kernels' user table (:func:`receval._jit.code_users`, grown from 1,024 slots while
    the truth is read, rows hashed and probed in blocks) codes ids of every length up to
    ``longest`` (whole in their slots up to 44 bytes, in one array beside them beyond) as their
    spelling: one code per distinct id in order of first appearance, and every recommended id
    (read in three chunks, with ids of no truth user, longer ones too) found as its truth id's
    slot, on all its bytes, also when ids share all but two bits of their hash, or all of it."""
    jit = K._jit()
    ids = _ids_of_every_length(3000, longest, longest)
    rng = np.random.default_rng(longest)
    truth_ids = ids[:2000]
    tu = pl.Series([truth_ids[k] for k in rng.integers(0, len(truth_ids), 6000)])
    others = ids[2000:] + ["x" * (longest + 1), "y" * (longest + 9)]
    ru_list = [truth_ids[k] for k in rng.integers(0, len(truth_ids), 5000)] + others
    ru_list = [ru_list[k] for k in rng.permutation(len(ru_list))]
    ru = pl.concat([pl.Series(ru_list[:1700]), pl.Series(ru_list[1700:3100]), pl.Series(ru_list[3100:])], rechunk=False)
    assert ru.n_chunks() == 3
    tv = K._views(tu)
    code, first, table, rep, most, slot_code = jit.code_users(tv[0], np.uint64(mask), tv[1], tv[2])
    assert len(table) >= 4096 and most == longest
    assert (len(rep) > 0) == (longest > 44)
    want_code = {}
    for i in tu.to_list():
        want_code.setdefault(i, len(want_code))
    assert code.tolist() == [want_code[i] for i in tu.to_list()]
    assert tu.gather(first).to_list() == list(want_code)
    parts = K._chunk_views(ru)
    out = np.empty(len(ru), dtype=np.int32)
    at = 0
    for v, addr, end, _ in parts:
        jit.lookup_users(table, rep, most, v, out[at:at + len(v)], np.uint64(mask), addr, end)
        at += len(v)
    got = np.where(out >= 0, slot_code[np.maximum(out, 0)], -1)
    assert got.tolist() == [want_code.get(i, -1) for i in ru.to_list()]


def test_views_only_for_inline_zero_padded_ids():
    """An Arrow view stands for its id only when the id is inline (<= 12 bytes) and zero padded;
    longer ids are read in the data buffers (their views are taken, not inline)."""
    jit = K._jit()
    s = pl.Series(["", "a", "abcd", "abcde", "abcdefghijkl"])
    long = K._views(pl.Series(["abcdefghijklm", "a"]))
    assert K._views(s) is not None and long is not None
    assert jit.padded(long[0]) and _longest(long[0]) == 13 and sum(b.size for b in long[3]) == 13
    v = K._views(pl.Series(["ab", "abcdef"]))[0].copy()
    assert jit.padded(K._ro(v))
    w = v.copy()
    w[0, 0] |= np.uint64(1) << np.uint64(48)  # a byte past "ab"
    x = v.copy()
    x[1, 1] |= np.uint64(1) << np.uint64(40)  # a byte past "abcdef"
    assert not jit.padded(K._ro(w)) and not jit.padded(K._ro(x))


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("dups", [False, True])
@pytest.mark.parametrize("ties", ["average", "input"])
def test_frames_over_the_budget_taken_whole(monkeypatch, counted, dups, ties):
    """Frames larger than the memory budget go to the kernels in one batch; a refusal that
    depends on the data (a repeated item) evaluates them in batches, as the numpy path does."""
    from receval import api

    recs, truth = data(11, ties=True, dups=dups)
    ran: list[int] = []
    orig = api.run_polars
    monkeypatch.setattr(api, "run_polars", lambda *a, **kw: ran.append(kw.get("n_batches", 0)) or orig(*a, **kw))
    kw = {"ties": ties, "dup": "first"} if dups else {"ties": ties}
    monkeypatch.setattr(K, "MIN_ROWS", 10**15)
    want = receval.evaluate(recs, truth, SPECS, **kw)  # the numpy path in one batch
    monkeypatch.setenv("RECEVAL_MEMORY_BUDGET", "64KB")  # the numpy path would take 3 batches
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = receval.evaluate(recs, truth, SPECS, **kw)
    same(want, got)
    assert ran == ([3] if dups else [])  # kernels: one batch (in batches after a refusal)
    assert counted["formed"] == 1 or dups and counted["formed"] < 3  # (the batch of the repeat: numpy)


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
@pytest.mark.parametrize("ties", ["average", "optimistic", "input"])
@pytest.mark.parametrize("long_ids", [False, True])
def test_users_in_parts_same_values(monkeypatch, counted, ties, long_ids):
    """Rows grouped and matched in parts of users (a few rows each) give the values of the
    numpy path; scores held in several chunks are read chunk by chunk."""
    recs, truth = data(12, ties=True)
    if long_ids:
        recs = recs.with_columns(("a-long-item-id-prefix-" + pl.col("item_id")).alias("item_id"))
        truth = truth.with_columns(("a-long-item-id-prefix-" + pl.col("item_id")).alias("item_id"))
    recs = pl.concat([recs.slice(0, 100), recs.slice(100, 333), recs.slice(433)], rechunk=False)
    assert recs.n_chunks() > 1
    monkeypatch.setattr(K, "PART_ROWS", 97)
    want, got = both(monkeypatch, recs, truth, SPECS, ties=ties)
    same(want, got)
    assert counted["formed"] == 1


@pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")
def test_frames_taken_whole_that_the_kernels_refuse_are_batched(monkeypatch, tmp_path, counted):
    """Frames read from a text file are not the kernels' (the ids' types are decided per file):
    taken whole, they are evaluated in batches, never by the numpy path in one batch."""
    from receval import api

    recs, truth = data(13)
    r, t = tmp_path / "recs.csv", tmp_path / "truth.csv"
    recs.write_csv(r)
    truth.write_csv(t)
    monkeypatch.setattr(K, "MIN_ROWS", 10**15)
    want = receval.evaluate(str(r), str(t), SPECS)
    ran: list[int] = []
    orig = api.run_polars
    monkeypatch.setattr(api, "run_polars", lambda *a, **kw: ran.append(kw.get("n_batches", 0)) or orig(*a, **kw))
    monkeypatch.setattr(api, "_file_batches", lambda *a: 1)  # a file read whole, then too large for one batch
    monkeypatch.setattr(api.kernels, "whole", lambda *a: True)
    monkeypatch.setenv("RECEVAL_MEMORY_BUDGET", "64KB")
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    got = receval.evaluate(str(r), str(t), SPECS)
    same(want, got)
    assert ran and ran[0] > 1  # (the batches, their id types decided once, go to the kernels)


def test_rows_scattered_on_two_threads_group_as_on_one():
    """The first radix pass on two threads (each half of the rows from its own places in every
    bucket) gives the records and starts of one pass over all rows, in row order."""
    rng = np.random.default_rng(5)
    n_rows, n_users = 5_000, 300
    codes = rng.integers(-1, n_users, n_rows).astype(np.int32)
    hashes = K._ro(rng.integers(0, 2**63, n_rows).astype(np.uint64))
    scores = K._ro(rng.random(n_rows).view(np.uint64))
    count = K._jit().count_codes(codes, n_users)

    def seg(a, b):
        return (a, b, K._NONE_V, hashes[a:b], False, scores[a:b], K._NO_ADDR, K._NO_ADDR)

    for g0, g1 in ((0, n_users), (17, 250)):
        one = K._radix(codes, count, g0, g1, [[seg(0, 1234), seg(1234, 3000), seg(3000, n_rows)]], [None])
        ahead = K._jit().count_codes(codes[:3000], n_users)
        two = K._radix(codes, count, g0, g1, [[seg(0, 1234), seg(1234, 3000)], [seg(3000, n_rows)]], [None, ahead])
        assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
        rows = one[1][:, 0].astype(np.int64)
        users = codes[rows]
        assert np.all(np.diff(users) >= 0) and np.all((np.diff(rows) > 0) | (np.diff(users) > 0))
        assert len(rows) == int(((codes >= g0) & (codes < g1)).sum())
