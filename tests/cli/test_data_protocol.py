"""Tests of receval.data (loaders, splits, the Tamm et al. protocol) and receval.models."""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from receval.data import (
    bundled_path,
    global_time_split,
    leave_last_out,
    load_bundled,
    load_genres,
    load_interactions,
    load_movielens,
    prepare_study,
    random_split,
    recommend,
)
from receval.data.splits import n_train_target
from receval.models import EASE, Popularity

FIXTURE = Path(__file__).parents[1] / "fixtures" / "protocol" / "tiny_ratings.csv"

SHA256 = {
    "ratings.csv": "aa289ca83157595d0df6aea1be6a4ded676ddc4385472e8313a8ed9805352646",
    "movies.csv": "5a5f32dd9bb3797b8e728a1b98958789d2b13f294a69fdfbc5727f8a9611aa07",
    "README.txt": "63d22ac138e80fae37021797ed8e1b9424b5239dc576a137422adf783ae3f404",
}


@pytest.fixture(scope="module")
def tiny() -> pl.DataFrame:
    return load_movielens(FIXTURE)


@pytest.fixture(scope="module")
def bundled() -> pl.DataFrame:
    return load_bundled()


@pytest.fixture(scope="module")
def bundled_study(bundled):
    study = prepare_study(bundled)
    model = EASE(0.5)
    rec = recommend(study.train, study.test_users, model)
    return study, model, rec


# --------------------------------------------------------------------------- loaders
def test_bundled_bytes_and_counts(bundled):
    for name, digest in SHA256.items():
        raw = bundled_path(name).read_bytes()
        assert hashlib.sha256(raw).hexdigest() == digest, name
    assert b"\r\n" in bundled_path("ratings.csv").read_bytes()  # CRLF kept: byte-identical copy
    assert bundled.schema == pl.Schema(
        {"user_id": pl.Int64, "item_id": pl.Int64, "rating": pl.Float64, "timestamp": pl.Int64}
    )
    assert bundled.height == 100_836
    assert bundled["user_id"].n_unique() == 610
    assert bundled["item_id"].n_unique() == 9_724
    assert bundled.row(0) == (1, 1, 4.0, 964982703)
    assert bundled.row(-1) == (610, 170875, 3.0, 1493846415)
    assert sorted(bundled["rating"].unique().to_list()) == [x / 2 for x in range(1, 11)]


def _write_releases(tmp_path: Path) -> dict[str, Path]:
    dat = tmp_path / "ml-1m"
    dat.mkdir()
    (dat / "ratings.dat").write_text("1::1193::5::978300760\n1::661::3::978302109\n2::1357::4::978298709\n")
    (dat / "movies.dat").write_bytes(
        "1::Toy Story (1995)::Animation|Children's|Comedy\n"
        "2::Caf\u00e9: The Movie (1999)::(no genres listed)\n"
        "3::Heat (1995)::Action|Crime|Thriller\n".encode("latin-1")
    )
    k100 = tmp_path / "ml-100k"
    k100.mkdir()
    (k100 / "u.data").write_text("196\t242\t3\t881250949\n186\t302\t3\t891717742\n")
    flags = ["0"] * 19
    flags[1] = flags[5] = "1"  # Action, Comedy
    unknown = ["1"] + ["0"] * 18
    (k100 / "u.item").write_bytes(
        ("1|Toy|01-Jan-1995||http://x|" + "|".join(flags) + "\n"
         "2|Nothing|01-Jan-1995||http://y|" + "|".join(unknown) + "\n").encode("latin-1")
    )
    zpath = tmp_path / "ml-1m.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.write(dat / "ratings.dat", "ml-1m/ratings.dat")
        zf.write(dat / "movies.dat", "ml-1m/movies.dat")
        zf.writestr("__MACOSX/ml-1m/._ratings.dat", b"junk")
    csvzip = tmp_path / "ml-latest-small.zip"
    with zipfile.ZipFile(csvzip, "w") as zf:
        zf.write(FIXTURE, "ml-latest-small/ratings.csv")
        zf.writestr("ml-latest-small/movies.csv", 'movieId,title,genres\n10,"A, the",Drama|IMAX\n20,B,(no genres listed)\n')
        zf.writestr("ml-latest-small/tags.csv", "userId,movieId,tag,timestamp\n")
    return {"dat": dat, "k100": k100, "zip": zpath, "csvzip": csvzip}


def test_loaders_all_layouts(tmp_path, tiny):
    p = _write_releases(tmp_path)
    expected_dat = [(1, 1193, 5.0, 978300760), (1, 661, 3.0, 978302109), (2, 1357, 4.0, 978298709)]
    assert load_movielens(p["dat"]).rows() == expected_dat
    assert load_movielens(p["dat"] / "ratings.dat").rows() == expected_dat
    assert load_movielens(p["zip"]).rows() == expected_dat
    assert load_movielens(p["k100"]).rows() == [(196, 242, 3.0, 881250949), (186, 302, 3.0, 891717742)]
    z = load_movielens(p["csvzip"])
    assert z.equals(tiny) and z.height == 12
    assert z.schema == load_bundled().schema
    # a folder holding one release folder works; two side by side are refused
    one = tmp_path / "one"
    one.mkdir()
    p["k100"].rename(one / "ml-100k")
    assert load_movielens(one).height == 2
    (one / "ml-1m").mkdir()
    (one / "ml-1m" / "ratings.dat").write_bytes((p["dat"] / "ratings.dat").read_bytes())
    with pytest.raises(ValueError, match="several MovieLens releases"):
        load_movielens(one)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"no ratings.csv, ratings.dat or u.data found .*pass the folder or zip"):
        load_movielens(empty)
    with pytest.raises(ValueError, match="does not exist"):
        load_movielens(tmp_path / "nope")


def test_loader_bad_header(tmp_path):
    f = tmp_path / "ratings.csv"
    f.write_text("user,item,rating,timestamp\n1,2,3,4\n")
    with pytest.raises(ValueError, match="lacks column"):
        load_movielens(f)


def test_load_interactions_csv_parquet(tmp_path):
    f = tmp_path / "log.tsv"
    f.write_text("who\twhat\tstars\twhen\na\tx\t2\t2020-01-01T00:00:00\nb\tx\t5\t2020-01-01T00:00:01\n")
    with pytest.raises(ValueError, match="encode_ids=True"):
        load_interactions(f, user_col="who", item_col="what", rating_col="stars", timestamp_col="when")
    with pytest.raises(ValueError, match="no column 'user_id'"):
        load_interactions(f)
    df = load_interactions(
        f, user_col="who", item_col="what", rating_col="stars", timestamp_col="when", encode_ids=True
    )
    assert df.rows() == [(0, 0, 2.0, 1577836800), (1, 0, 5.0, 1577836801)]
    pq = tmp_path / "log.parquet"
    pl.DataFrame({"u": [3, 4], "i": [7, 8], "t": [10, 20]}).write_parquet(pq)
    out = load_interactions(pq, user_col="u", item_col="i", rating_col=None, timestamp_col="t")
    assert out.rows() == [(3, 7, 1.0, 10), (4, 8, 1.0, 20)]
    assert out.schema == load_bundled().schema


def test_genres(tmp_path):
    g = load_genres()
    assert g.columns == ["item_id", "category"]
    assert g["category"].n_unique() == 19 and "(no genres listed)" not in g["category"].to_list()
    assert load_genres(keep_unlisted=True)["category"].n_unique() == 20
    assert g["item_id"].n_unique() == 9_742 - 34  # 34 movies have "(no genres listed)" -> no row
    assert g.filter(pl.col("item_id") == 1)["category"].to_list() == [
        "Adventure", "Animation", "Children", "Comedy", "Fantasy"
    ]
    p = _write_releases(tmp_path)
    assert load_genres(p["dat"]).rows() == [
        (1, "Animation"), (1, "Children's"), (1, "Comedy"), (3, "Action"), (3, "Crime"), (3, "Thriller")
    ]
    assert load_genres(p["zip"]).height == 6
    assert load_genres(p["k100"]).rows() == [(1, "Action"), (1, "Comedy")]
    assert load_genres(p["k100"], keep_unlisted=True).rows()[-1] == (2, "unknown")
    assert load_genres(p["csvzip"]).rows() == [(10, "Drama"), (10, "IMAX")]


# --------------------------------------------------------------------------- splits
@pytest.mark.parametrize(
    ("fraction", "cutoff", "n_test"),
    [
        (0.25, 800, 3),  # p = floor(9.0) = 9 -> 800; both rows at 800 in test
        (0.3, 700, 4),  # p = floor(8.4) = 8
        (0.5, 600, 6),  # p = 6: the two rows at 600 go to test together
        (0.55, 500, 7),
        (0.7, 300, 10),  # p = floor(3.6) = 3 = second 300 -> both 300s are test (> ceil(8.4))
        (0.8, 300, 10),  # p = floor(2.4) = 2 = first 300 -> same split
        (0.9, 200, 11),
    ],
)
def test_global_time_split_boundaries(tiny, fraction, cutoff, n_test):
    train, test, t = global_time_split(tiny, fraction)
    assert t == cutoff
    assert test.height == n_test and train.height == 12 - n_test
    assert (test["timestamp"] >= t).all() and (train["timestamp"] < t).all()
    assert test.height >= math.ceil(fraction * 12 - 1e-9)
    # rows keep input order
    assert pl.concat([train, test]).sort("timestamp", "user_id", "item_id").equals(
        tiny.sort("timestamp", "user_id", "item_id")
    )


def test_global_time_split_cutoff_and_errors(tiny):
    a = global_time_split(tiny, cutoff=600)
    b = global_time_split(tiny, cutoff="1970-01-01T00:10:00Z")
    c = global_time_split(tiny, None, cutoff=601)
    assert a.cutoff == b.cutoff == 600 and a.test.equals(b.test) and a.test.height == 6
    assert c.test.height == 4
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="test_fraction"):
            global_time_split(tiny, bad)
    with pytest.raises(ValueError, match="integer Unix seconds"):
        global_time_split(tiny.with_columns(pl.from_epoch("timestamp")))
    with pytest.raises(ValueError, match="no timestamp"):
        global_time_split(tiny.with_columns(pl.lit(None, pl.Int64).alias("timestamp")))


def test_global_time_split_matches_naive_reference():
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 60))
        ts = rng.integers(0, 15, n)  # many ties
        df = pl.DataFrame({"user_id": rng.integers(0, 5, n), "item_id": rng.integers(0, 9, n), "timestamp": ts})
        f = float(rng.choice([0.1, 0.2, 0.25, 0.3, 0.5, 0.9]))
        _, test, t = global_time_split(df, f)
        p = int(n * (1 - f) + 1e-9)  # RePlay: row_number == int(n * (1 - f)) + 1
        t_ref = sorted(ts.tolist())[p]
        assert t == t_ref
        assert test.height == sum(1 for x in ts if x >= t_ref)
    assert n_train_target(10, 0.3) == 7 and n_train_target(100836, 0.2) == 80668


def test_leave_last_out_ties():
    df = pl.DataFrame(
        {
            "user_id": [1, 1, 1, 2, 2, 3],
            "item_id": [9, 5, 7, 1, 2, 4],
            "timestamp": [10, 30, 30, 5, 6, 1],
        }
    )
    train, test = leave_last_out(df)
    # user 1: items 5 and 7 share the latest second -> larger item_id (7) is "last"
    assert test.rows() == [(1, 7, 30), (2, 2, 6), (3, 4, 1)]
    assert train.rows() == [(1, 9, 10), (1, 5, 30), (2, 1, 5)]
    _, test2 = leave_last_out(df, n=2)
    assert sorted(test2.rows()) == [(1, 5, 30), (1, 7, 30), (2, 1, 5), (2, 2, 6), (3, 4, 1)]
    # input order does not matter
    _, test3 = leave_last_out(df.reverse())
    assert sorted(test3.rows()) == sorted(test.rows())
    with pytest.raises(ValueError):
        leave_last_out(df, n=0)


def test_random_split_exact_and_seeded(tiny):
    tr1, te1 = random_split(tiny, 0.25, seed=3)
    tr2, te2 = random_split(tiny, 0.25, seed=3)
    assert te1.height == 3 and tr1.height == 9
    assert te1.equals(te2) and tr1.equals(tr2)
    assert pl.concat([tr1, te1]).sort(pl.all()).equals(tiny.sort(pl.all()))
    others = {tuple(random_split(tiny, 0.25, seed=s).test.rows()) for s in range(10)}
    assert len(others) > 1


# --------------------------------------------------------------------------- protocol
def test_prepare_study_tiny(tiny):
    s = prepare_study(tiny, test_fraction=0.5)
    assert s.test.rows() == [(3, 30, 4.5, 800), (2, 20, 5.0, 900)]  # 4.5 is relevant (inclusive)
    assert s.train.height == 6
    assert s.test_all.height == 3  # + (3, 10, 4.0) which is not relevant
    st = s.stats
    assert (st["cutoff_unix"], st["cutoff_iso"]) == (600, "1970-01-01T00:10:00+00:00")
    assert st["n_cold_users"] == 1 and st["n_cold_items"] == 2 and st["n_test_cold_rows"] == 3
    assert st["n_test_irrelevant_rows"] == 1 and st["n_test"] == 2
    assert st["n_test_users"] == 2 and st["n_test_items"] == 2
    assert json.loads(json.dumps(st)) == st
    assert s.test_users.tolist() == [2, 3]
    # no relevance filter
    assert prepare_study(tiny, test_fraction=0.5, threshold=None).test.height == 3
    # other splits
    r = prepare_study(tiny, split="random", test_fraction=0.25, seed=1)
    assert r.stats["cutoff_unix"] is None and r.stats["n_test_split"] == 3
    lo = prepare_study(tiny, split="leave_last_out")
    assert lo.stats["n_test_split"] == 4
    with pytest.raises(ValueError, match="split must be one of"):
        prepare_study(tiny, split="temporal")


def test_recommend_excludes_seen_full_ranking(tiny):
    s = prepare_study(tiny, test_fraction=0.5)
    rec = recommend(s.train, s.test_users, Popularity())
    # train items {10, 20, 30}; user 2 has {10, 30}; user 3 has {20}
    assert rec.rows() == [(2, 20, 2.0, 1), (3, 10, 2.0, 1), (3, 30, 2.0, 2)]  # tie 10 vs 30 -> item_id
    with pytest.raises(ValueError, match="no train interactions"):
        recommend(s.train, [2, 4], Popularity())


def test_recommend_random_models_ordering():
    rng = np.random.default_rng(0)
    n = 400
    df = pl.DataFrame({"user_id": rng.integers(0, 30, n), "item_id": rng.integers(0, 60, n) * 3}).unique()
    users = np.unique(df["user_id"].to_numpy())[::2]
    n_items = df["item_id"].n_unique()
    for model in (EASE(2.0), Popularity()):
        rec = recommend(df, users, model)
        seen = df.join(rec, on=["user_id", "item_id"], how="inner")
        assert seen.height == 0  # seen items never recommended
        per_user = rec.group_by("user_id").agg(pl.len().alias("n"), pl.col("rank").max().alias("r"))
        n_seen = df.group_by("user_id").agg(pl.len().alias("s"))
        chk = per_user.join(n_seen, on="user_id")
        assert (chk["n"] == n_items - chk["s"]).all() and (chk["r"] == chk["n"]).all()
        assert sorted(rec["user_id"].unique().to_list()) == users.tolist()
        # sorted by user, score desc, item asc; rank is the position
        assert rec.equals(rec.sort(["user_id", "score", "item_id"], descending=[False, True, False]))
        pos = rec.select(pl.int_range(1, pl.len() + 1).over("user_id").cast(pl.Int64).alias("rank"))
        assert rec["rank"].equals(pos["rank"])
        top = recommend(df, users, model, k=5, fit=False)
        assert top.equals(rec.filter(pl.col("rank") <= 5))
        assert recommend(df, users, model, max_items=5, fit=False, batch_size=3).equals(top)


def _ease_reference(X: np.ndarray, lam: float) -> np.ndarray:
    P = np.linalg.inv(X.T @ X + lam * np.eye(X.shape[1]))
    B = -P / np.diag(P)[None, :]
    np.fill_diagonal(B, 0.0)
    return X @ B


@pytest.mark.parametrize("shape", [(6, 9), (12, 5)])  # fewer users than items -> dual, more -> primal
@pytest.mark.parametrize("binary", [True, False])
def test_ease_equals_direct_closed_form(shape, binary):
    rng = np.random.default_rng(42 + shape[0])
    m, n = shape
    R = rng.integers(1, 6, (m, n)) * (rng.random((m, n)) < 0.45)
    R[R.sum(1) == 0, 0] = 4  # every user and every item has an interaction
    R[0, R.sum(0) == 0] = 2
    u, i = np.nonzero(R)
    df = pl.DataFrame({"user_id": u * 10 + 1, "item_id": i * 7 + 2, "rating": R[u, i].astype(float)})
    X = (R > 0).astype(float) if binary else R.astype(float)
    ref = _ease_reference(X, 0.7)
    for solver in ("auto", "primal", "dual"):
        model = EASE(0.7, binary=binary, solver=solver).fit(df)
        scores, items = model.score(np.arange(m) * 10 + 1)
        assert items.tolist() == (np.arange(n) * 7 + 2).tolist()
        np.testing.assert_allclose(scores, ref, rtol=0, atol=1e-10)
        P = np.linalg.inv(X.T @ X + 0.7 * np.eye(n))
        Bref = -P / np.diag(P)
        np.fill_diagonal(Bref, 0.0)
        np.testing.assert_allclose(model.B, Bref, rtol=0, atol=1e-10)
    assert EASE(0.7).fit(df).solver_ == ("dual" if m < n else "primal")
    assert not EASE(0.7).fit(df).score([-5])[0].any()  # unknown user -> zeros


def test_ease_rejects_bad_lambda():
    with pytest.raises(ValueError, match="lambda_"):
        EASE(0.0)
    with pytest.raises(ValueError, match="not fitted"):
        EASE().score([1])


# --------------------------------------------------------------------------- bundled study
def test_bundled_study_regression(bundled_study):
    study, model, rec = bundled_study
    st = study.stats
    assert st["cutoff_unix"] == 1458635171 and st["cutoff_iso"] == "2016-03-22T08:26:11+00:00"
    assert (st["n_train"], st["n_test_split"]) == (80668, 20168)
    assert (st["n_train_users"], st["n_train_items"]) == (522, 7867)
    assert (st["n_test"], st["n_test_users"], st["n_test_items"]) == (328, 27, 262)
    assert (study.test["rating"] >= 4.5).all()
    assert study.test.join(study.train, on=["user_id"], how="anti").height == 0
    assert study.test.join(study.train, on=["item_id"], how="anti").height == 0
    assert model.solver_ == "dual"
    n_seen = study.train.filter(pl.col("user_id").is_in(study.test_users.tolist())).group_by("user_id").len()
    lengths = rec.group_by("user_id").len().join(n_seen, on="user_id", suffix="_seen")
    assert (lengths["len"] == 7867 - lengths["len_seen"]).all()
    assert rec.join(study.train, on=["user_id", "item_id"], how="semi").height == 0


def test_bundled_ease_dual_matches_primal(bundled_study):
    """Dual and primal EASE agree on real data (1,000 most popular train items, all users)."""
    study, _, _ = bundled_study
    popular = study.train.group_by("item_id").len().sort(["len", "item_id"], descending=[True, False]).head(1000)
    sub = study.train.join(popular.select("item_id"), on="item_id", how="semi")
    users = np.unique(sub["user_id"].to_numpy())
    assert users.size < 1000  # so "auto" picks the dual form
    dual = EASE(0.5).fit(sub)
    primal = EASE(0.5, solver="primal").fit(sub)
    assert dual.solver_ == "dual"
    sd, items_d = dual.score(users)
    sp_, items_p = primal.score(users)
    assert np.array_equal(items_d, items_p)
    np.testing.assert_allclose(sd, sp_, rtol=0, atol=1e-10)
    a = recommend(sub, users, dual, k=20, fit=False, decimals=10)
    b = recommend(sub, users, primal, k=20, fit=False, decimals=10)
    assert a.select("user_id", "item_id").equals(b.select("user_id", "item_id"))
