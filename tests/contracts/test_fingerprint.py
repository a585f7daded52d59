"""Data fingerprints (receval.fingerprint): the exact definition (a pure-Python reference), order
freedom, independence from column names, column order and file format, and sensitivity to
every change of content (a row, a duplicate, a score)."""

from __future__ import annotations

import hashlib
import json
import math
import struct

import numpy as np
import polars as pl
import pytest

import receval
from receval import fingerprint as fpmod
from receval.cli import main
from receval.fingerprint import fingerprint, fingerprint_columns, fingerprint_frame

M = 2**64 - 1


# ---- the definition, row by row in pure Python ------------------------------------------------------


def _mix_a(h):
    h ^= h >> 33; h = (h * 0xFF51AFD7ED558CCD) & M; h ^= h >> 33; h = (h * 0xC4CEB9FE1A85EC53) & M
    return h ^ (h >> 33)


def _mix_b(h):
    h ^= h >> 30; h = (h * 0xBF58476D1CE4E5B9) & M; h ^= h >> 27; h = (h * 0x94D049BB133111EB) & M
    return h ^ (h >> 31)


def _words(v, typ):
    if typ in ("int", "uint", "i64"):
        return [v & M]
    if typ == "f64":
        v = float(v) + 0.0
        return [0x7FF8000000000000 if math.isnan(v) else struct.unpack("<Q", struct.pack("<d", v))[0]]
    raw = v.encode("utf-8")
    a, b = 0x243F6A8885A308D3, 0x13198A2E03707344
    for w in [len(raw)] + [int.from_bytes(raw[i:i + 8], "little") for i in range(0, len(raw), 8)]:
        a, b = _mix_a(a ^ w), _mix_b(b ^ w)
    return [a, b]


def reference(rows, schema):
    """The module docstring's definition, one row at a time."""
    types = [t.split(":")[1] for t in schema.split(",")]
    sa = sb = 0
    for row in rows:
        a, b = 0x9E3779B97F4A7C15, 0xD1B54A32D192ED03
        for v, t in zip(row, types):
            for w in _words(v, t):
                a, b = _mix_a(a ^ w), _mix_b(b ^ w)
        sa, sb = (sa + a) & M, (sb + b) & M
    h = hashlib.blake2b(digest_size=16)
    h.update(f"rf1\0{schema}\0".encode())
    h.update(len(rows).to_bytes(8, "little") + sa.to_bytes(8, "little") + sb.to_bytes(8, "little"))
    return "rf1:" + h.hexdigest()


STRINGS = ["", "a", "7", "abcdefgh", "abcdefghi", "é" * 9, "日本語のアイテム", "x" * 70, "tab\there", "007"]


def test_vectorised_equals_the_reference_definition():
    rng = np.random.default_rng(1)
    n = 300
    users = [STRINGS[i] for i in rng.integers(0, len(STRINGS), n)]
    items = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    scores = rng.normal(size=n)
    scores[:3] = [-0.0, np.nan, np.inf]
    ranks = rng.integers(1, 50, n)
    rows = list(zip(users, items.tolist(), scores.tolist(), ranks.tolist()))
    got = fingerprint_columns({"user": users, "item": items, "score": scores, "rank": ranks})
    assert got == reference(rows, "user:str,item:int,score:f64,rank:i64")
    big = np.array([2**63 + 5, 3, 2**64 - 1], dtype=np.uint64)
    assert fingerprint_columns({"user": big, "item": ["x", "y", "z"]}) == reference(
        list(zip([2**63 + 5, 3, 2**64 - 1], "xyz")), "user:uint,item:str")
    # labels (categories, groups) are text
    assert fingerprint_columns({"item": [1, 2], "category": ["a", "b"]}) == reference([(1, "a"), (2, "b")], "item:int,category:str")


def test_blocks_and_slices_do_not_change_it(monkeypatch):
    rng = np.random.default_rng(2)
    n = 1000
    cols = {"user": [STRINGS[i] for i in rng.integers(0, len(STRINGS), n)], "item": rng.integers(0, 99, n),
            "score": rng.random(n)}
    want = fingerprint_columns(cols)
    monkeypatch.setattr(fpmod, "_BLOCK", 7)
    monkeypatch.setattr(fpmod, "_SLICE", 61)
    assert fingerprint_columns(cols) == want
    frame = pl.DataFrame({"u": cols["user"], "i": cols["item"], "s": cols["score"]})
    roles = {"user": "u", "item": "i", "score": "s"}
    assert fingerprint_frame(frame.lazy(), roles) == fingerprint_frame(frame, roles) == want


def test_pinned_value():
    # the definition is fixed: the same data has this fingerprint on every machine and version
    fp = fingerprint_columns({"user": [1, 1, 2], "item": [10, 20, 10], "score": [0.9, 0.8, 0.5]})
    assert fp == "rf1:427d28294e2b8e8361bf8ce48cf0e1a1"
    assert fp == reference([(1, 10, 0.9), (1, 20, 0.8), (2, 10, 0.5)], "user:int,item:int,score:f64")


# ---- invariance -------------------------------------------------------------------------------------

RECS = {"user_id": [1, 1, 1, 2, 2, 3, 3, 3], "item_id": [10, 20, 30, 10, 40, 20, 50, 60],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]}
TRUTH = {"user_id": [1, 1, 2, 3, 3], "item_id": [20, 40, 40, 50, 70], "rating": [5.0, 3.0, 4.0, 2.0, 5.0]}
SIDE = {
    "train": {"user_id": [1, 2, 5, 5, 5, 5, 5], "item_id": [10, 10, 20, 30, 40, 50, 60]},
    "catalog": {"item_id": [10, 20, 30, 40, 50, 60, 70]},
    "categories": {"item_id": [10, 20, 30, 40, 50, 60, 70], "category": ["a", "b", "a", "c", "b", "a", "c"]},
}
SPECS = ["precision@2", "ndcg@3", "coverage@2"]


def _fps(recs, truth, **kw):
    return receval.evaluate(recs, truth, SPECS, **kw).fingerprints


def test_results_carry_a_fingerprint_of_every_input_given():
    res = receval.evaluate(RECS, TRUTH, SPECS, **SIDE)
    assert list(res.fingerprints) == ["recs", "truth", "train", "catalog", "categories"]
    assert all(v.startswith("rf1:") and len(v) == 36 for v in res.fingerprints.values())
    assert list(receval.evaluate(RECS, TRUTH, ["precision@2"]).fingerprints) == ["recs", "truth"]
    doc = json.loads(res.to_json())
    assert doc["fingerprints"] == res.fingerprints
    # each is the fingerprint of that input alone
    assert res.fingerprints["recs"] == fingerprint(RECS) and res.fingerprints["truth"] == fingerprint(TRUTH, "truth")
    assert res.fingerprints["train"] == fingerprint(SIDE["train"], "train")


def test_row_order_does_not_change_it():
    perm = np.random.default_rng(3).permutation(len(RECS["user_id"]))
    shuffled = {k: [v[i] for i in perm] for k, v in RECS.items()}
    tperm = [4, 2, 0, 3, 1]
    tshuffled = {k: [v[i] for i in tperm] for k, v in TRUTH.items()}
    train = {k: v[::-1] for k, v in SIDE["train"].items()}
    assert _fps(shuffled, tshuffled, train=train) == _fps(RECS, TRUTH, train=SIDE["train"])


def test_column_order_names_and_other_columns_do_not_change_it():
    renamed = pl.DataFrame(RECS).select(pl.col("score").alias("s"), pl.lit("x").alias("note"),
                                        pl.col("item_id").alias("i"), pl.col("user_id").alias("u"))
    truth = pl.DataFrame(TRUTH).select(pl.col("rating").alias("r"), pl.col("user_id").alias("u"), pl.col("item_id").alias("i"))
    train = pl.DataFrame(SIDE["train"]).rename({"user_id": "u", "item_id": "i"}).with_columns(ts=pl.lit(0))
    got = receval.evaluate(renamed, truth, SPECS, user_col="u", item_col="i", score_col="s", rating_col="r", train=train).fingerprints
    assert got == _fps(RECS, TRUTH, train=SIDE["train"])


def test_csv_and_parquet_with_the_same_content_agree(tmp_path):
    paths = {}
    for name, data in {"recs": RECS, "truth": TRUTH, **SIDE}.items():
        frame = pl.DataFrame(data)
        frame.write_csv(tmp_path / f"{name}.csv")
        frame.write_parquet(tmp_path / f"{name}.parquet")
        paths[name] = (str(tmp_path / f"{name}.csv"), str(tmp_path / f"{name}.parquet"))
    csv = receval.evaluate(paths["recs"][0], paths["truth"][0], SPECS, **{k: paths[k][0] for k in SIDE}).fingerprints
    pq = receval.evaluate(paths["recs"][1], paths["truth"][1], SPECS, **{k: paths[k][1] for k in SIDE}).fingerprints
    mem = _fps(RECS, TRUTH, **SIDE)
    assert csv == pq == mem
    # the polars engine reads them itself (Parquet lazily, in slices): the same fingerprints
    lazy = receval.evaluate(paths["recs"][1], paths["truth"][1], ["precision@2"], engine="polars").fingerprints
    assert lazy == {"recs": mem["recs"], "truth": mem["truth"]}


def test_ids_are_identified_as_given(tmp_path):
    ints = {"user_id": [7, 8], "item_id": [1, 2], "score": [0.5, 0.4]}
    strs = {"user_id": ["7", "8"], "item_id": [1, 2], "score": [0.5, 0.4]}
    assert fingerprint(ints) != fingerprint(strs)  # typed inputs: int 7 is not "7"
    pl.DataFrame(strs).write_parquet(tmp_path / "s.parquet")
    assert fingerprint(str(tmp_path / "s.parquet")) == fingerprint(strs) != fingerprint(ints)
    # a text file has no types: canonical integers are integers (the engine's rule) ...
    (tmp_path / "a.csv").write_text("user_id,item_id,score\n7,1,0.5\n8,2,0.4\n")
    assert fingerprint(str(tmp_path / "a.csv")) == fingerprint(ints)
    # ... and "007" stays text, so it differs from "7"
    (tmp_path / "b.csv").write_text("user_id,item_id,score\n007,1,0.5\n8,2,0.4\n")
    assert fingerprint(str(tmp_path / "b.csv")) == fingerprint({**strs, "user_id": ["007", "8"]})
    assert fingerprint(str(tmp_path / "b.csv")) not in (fingerprint(ints), fingerprint(strs))
    # a score written as an integer is the float the engine reads
    assert fingerprint({**ints, "score": [1, 2]}) == fingerprint({**ints, "score": [1.0, 2.0]})


def test_any_frame_type_gives_the_same_fingerprint():
    want = fingerprint(RECS)
    assert fingerprint(pl.DataFrame(RECS)) == fingerprint(pl.DataFrame(RECS).lazy()) == want
    assert fingerprint(pl.DataFrame(RECS).to_arrow()) == want
    pd = pytest.importorskip("pandas")
    assert fingerprint(pd.DataFrame(RECS)) == want


# ---- sensitivity ------------------------------------------------------------------------------------


def _changed(data, col, i, value):
    out = {k: list(v) for k, v in data.items()}
    out[col][i] = value
    return out


def test_any_change_of_content_changes_it():
    base = fingerprint(RECS)
    assert fingerprint(_changed(RECS, "item_id", 2, 31)) != base  # a row changes
    assert fingerprint(_changed(RECS, "score", 0, np.nextafter(0.9, 1.0))) != base  # a score, by one ulp
    assert fingerprint({k: v + v[:1] for k, v in RECS.items()}) != base  # a row duplicated
    assert fingerprint({k: v[1:] for k, v in RECS.items()}) != base  # a row dropped
    assert fingerprint({**RECS, "rank": list(range(1, 9))}) != base  # a rank column added
    tbase = fingerprint(TRUTH, "truth")
    assert fingerprint(_changed(TRUTH, "rating", 0, 4.0), "truth") != tbase
    assert fingerprint({k: v for k, v in TRUTH.items() if k != "rating"}, "truth") != tbase
    # swapping the scores of two rows is a different multiset of rows
    assert fingerprint(_changed(_changed(RECS, "score", 0, 0.8), "score", 1, 0.9)) != base


def test_a_duplicate_counts():
    one = fingerprint_columns({"user": [1, 2], "item": [1, 1]})
    two = fingerprint_columns({"user": [1, 1, 2], "item": [1, 1, 1]})
    three = fingerprint_columns({"user": [1, 1, 1, 2], "item": [1, 1, 1, 1]})
    assert len({one, two, three}) == 3


def test_negative_zero_and_nan_are_one_value_each():
    a = fingerprint_columns({"user": [1, 2], "item": [1, 1], "score": [0.0, float("nan")]})
    b = fingerprint_columns({"user": [1, 2], "item": [1, 1], "score": [-0.0, -float("nan")]})
    assert a == b


# ---- outputs ----------------------------------------------------------------------------------------


def test_footers_show_a_short_form(capsys, tmp_path):
    pl.DataFrame(RECS).write_csv(tmp_path / "r.csv")
    pl.DataFrame(TRUTH).write_csv(tmp_path / "t.csv")
    args = ["evaluate", str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), "-m", "precision@2"]
    want = receval.evaluate(str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), ["precision@2"]).fingerprints
    short = {k: v[:16] for k, v in want.items()}
    assert main(args + ["--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == f"_Data: recs `{short['recs']}`, truth `{short['truth']}` (content fingerprints; `receval verify` checks them)._"
    assert main(args) == 0
    assert f"data: recs {short['recs']}, truth {short['truth']}" in capsys.readouterr().out
    assert main(args + ["--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["fingerprints"] == want
    assert main(args + ["--format", "csv"]) == 0
    assert "rf1:" not in capsys.readouterr().out  # csv stays one table


# ---- batched engines hash the rows as they evaluate them -----------------------------------------


def _batched_cases(tmp_path):
    """(recs, truth) inputs in every form the Polars backend batches differently."""
    rng = np.random.default_rng(5)
    n_users, k = 40, 6
    users = np.repeat(np.arange(n_users), k)
    items = np.concatenate([rng.permutation(30)[:k] for _ in range(n_users)])  # no duplicate pair
    scores = np.round(rng.random(users.size), 1)  # coarse: ties
    t_users = np.repeat(np.arange(n_users), 3)
    t_items = np.concatenate([rng.permutation(30)[:3] for _ in range(n_users)])
    recs = pl.DataFrame({"user_id": users, "item_id": items, "score": scores})
    truth = pl.DataFrame({"user_id": t_users, "item_id": t_items, "rating": rng.integers(1, 6, size=t_users.size).astype(float)})
    shuffled = recs.sample(fraction=1.0, shuffle=True, seed=1)
    as_text = lambda f: f.with_columns(pl.format("u{}", "user_id").alias("user_id"), pl.format("i{}", "item_id").alias("item_id"))
    big = lambda f: f.with_columns((pl.col("user_id").cast(pl.UInt64) + 2**63).alias("user_id"))  # ids >= 2^63
    padded = lambda f: f.with_columns(pl.col("user_id").cast(pl.String).str.zfill(3))  # "007": text, not 7
    cases = {"sorted frames (id ranges)": (recs.with_columns(rank=pl.int_range(1, k + 1).over("user_id")), truth),
             "shuffled frames (hash filter)": (shuffled, truth.sample(fraction=1.0, shuffle=True, seed=2)),
             "string ids, lazy": (as_text(shuffled).lazy(), as_text(truth).lazy()),
             "uint64 ids": (big(shuffled), big(truth))}
    for name, (r, t) in {"parquet": (as_text(shuffled), as_text(truth)), "parquet uint64": (big(shuffled), big(truth))}.items():
        r.write_parquet(tmp_path / f"{name}-r.parquet")
        t.write_parquet(tmp_path / f"{name}-t.parquet")
        cases[name] = (str(tmp_path / f"{name}-r.parquet"), str(tmp_path / f"{name}-t.parquet"))
    for name, (r, t) in {"csv ints": (shuffled, truth), "csv 007": (padded(shuffled), padded(truth))}.items():
        r.write_csv(tmp_path / f"{name}-r.csv")
        t.write_csv(tmp_path / f"{name}-t.csv")
        cases[name] = (str(tmp_path / f"{name}-r.csv"), str(tmp_path / f"{name}-t.csv"))
    return cases


@pytest.mark.parametrize("n_batches", [1, 3, 7])  # 7 >= SPILL_FROM: files are written in user batches first
def test_batched_fingerprints_equal_those_of_the_inputs(tmp_path, n_batches):
    from receval.backends.polars import evaluate_polars

    for name, (r, t) in _batched_cases(tmp_path).items():
        res = evaluate_polars(r, t, ["ndcg@3", "precision@2"], n_batches=n_batches, fingerprints=True)
        assert isinstance(res.fingerprints, dict), name  # taken in the pass, not read again
        want = {"recs": fingerprint(r, "recs"), "truth": fingerprint(t, "truth")}
        assert res.fingerprints == want, (name, n_batches)


def test_a_file_evaluated_in_batches_is_not_read_again_for_its_fingerprint(tmp_path, monkeypatch):
    r, t = _batched_cases(tmp_path)["parquet"]
    want = receval.evaluate(r, t, ["ndcg@3"]).fingerprints
    monkeypatch.setenv("RECEVAL_MEMORY_BUDGET", "4000")  # the file outgrows the budget: 8 batches, spilled
    import receval.backends.polars as bp  # the batched path reads inputs again only through receval.inputs.input_fingerprints

    monkeypatch.setattr(bp, "input_fingerprints", lambda *a, **k: pytest.fail("the inputs were read again"))
    got = receval.evaluate(r, t, ["ndcg@3"], train=pl.DataFrame({"user_id": ["u1"], "item_id": ["i1"]}))
    assert dict(got.fingerprints) == {**dict(want), "train": fingerprint({"user_id": ["u1"], "item_id": ["i1"]}, "train")}
    assert dict(receval.evaluate(r, t, ["ndcg@3"], engine="polars").fingerprints) == dict(want)


def test_a_batched_input_the_hash_refuses_is_refused_when_read(tmp_path):
    from receval.backends.polars import evaluate_polars

    r = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [0.5, None, 0.3]})
    t = pl.DataFrame({"user_id": [1, 2], "item_id": [1, 1]})
    try:
        res = evaluate_polars(r, t, ["precision@2"], n_batches=2, fingerprints=True)
    except receval.errors.DataError:
        return  # the evaluation refuses it first
    with pytest.raises(receval.errors.DataError, match="missing values"):
        dict(res.fingerprints)
