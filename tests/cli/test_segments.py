"""Results by user segment: a segment's values are those of its users evaluated alone, every
paired test of the table (all users and every segment) is corrected in one family, the
segmentation is in every signature, every output format and the command line."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import polars as pl
import pytest

from receval.errors import SpecError
from receval.runs import evaluate_runs
from receval.segments import compare_segments, parse_segments, render_segments, segment_frame, segment_users
from receval.stats import adjust

METRICS = ["ndcg@5", "recall@10"]
STATS = dict(ci="percentile", resamples=200, seed=3)


def data(n: int = 48, seed: int = 0):
    rng = np.random.default_rng(seed)
    users = np.arange(n)
    truth = pl.DataFrame({"user_id": np.repeat(users, 2), "item_id": rng.integers(0, 30, 2 * n)}).unique(maintain_order=True)
    train = pl.DataFrame({"user_id": rng.choice(users[: n - 8], 6 * n), "item_id": rng.integers(0, 24, 6 * n)})
    runs = {}
    for name, shift in (("ease", 0), ("pop", 3), ("bpr", 7)):
        runs[name] = pl.DataFrame({
            "user_id": np.repeat(users, 10),
            "item_id": (np.tile(np.arange(10), n) + shift + np.repeat(users, 10)) % 30,
            "score": np.tile(np.arange(10, 0, -1), n).astype(float),
        })
    groups = pl.DataFrame({"user_id": users, "group": np.where(users % 3 == 0, "g-a", "g-b")})
    return runs, truth, train, groups


@pytest.fixture(scope="module")
def setup():
    runs, truth, train, groups = data()
    r = evaluate_runs(runs, truth, METRICS)
    return runs, truth, train, groups, r


@pytest.mark.parametrize("spec", ["groups", "activity:3", "cold-users", "cold-items"])
def test_segment_values_equal_evaluating_its_users_alone(setup, spec):
    runs, truth, train, groups, r = setup
    sc = compare_segments(r, spec, train=train, truth=truth, groups=groups, **STATS)
    assert len(sc.segments) >= 2
    total = 0
    for label, c in sc.segments.items():
        users = r.user_ids[sc.segmentation.users(label)]
        total += len(users)
        keep = pl.col("user_id").is_in(users.tolist())
        alone = evaluate_runs({k: v.filter(keep) for k, v in runs.items()}, truth.filter(keep), METRICS)
        ca = alone.compare(correction="none", **STATS)
        assert c.users == ca.users == len(users) == sc.sizes[label]
        for key, v in ca.values.items():
            assert c.values[key] == pytest.approx(v, rel=1e-12, abs=1e-15)
            assert (c.intervals[key].low, c.intervals[key].high) == pytest.approx((ca.intervals[key].low, ca.intervals[key].high))
        for t in ca.pairs:
            mine = c.pair(t.metric, t.a, t.b)
            assert (mine.diff, mine.wins, mine.ties, mine.losses) == pytest.approx((t.diff, t.wins, t.ties, t.losses))
            assert mine.p == pytest.approx(t.p, nan_ok=True)
    assert total == len(r.user_ids)  # every user in exactly one segment


def test_correction_counts_every_test(setup):
    _, truth, train, groups, r = setup
    sc = compare_segments(r, "activity:3", train=train, correction="holm", **STATS)
    tables = [c for _, c in sc.comparisons()]
    pairs = [t for c in tables for t in c.pairs]
    assert sc.family == len(pairs) == len(tables) * 3 * len(METRICS)  # 3 pairs of runs per metric
    expected = adjust([t.p for t in pairs], "holm")
    assert [t.p_adjusted for t in pairs] == pytest.approx(list(expected))
    # larger than correcting each table alone
    alone = r.compare(correction="holm", **STATS)
    assert all(t.p_adjusted >= a.p_adjusted - 1e-15 for t, a in zip(sc.overall.pairs, alone.pairs))
    assert any(t.p_adjusted > a.p_adjusted for t, a in zip(sc.overall.pairs, alone.pairs) if a.p_adjusted < 1)
    text = render_segments(sc, "table", ci=True)
    assert f"Holm correction over {sc.family} comparisons" in text
    assert f"counts all {sc.family} paired tests" in text
    # bonferroni: p times the whole family
    sb = compare_segments(r, "activity:3", train=train, correction="bonferroni", **STATS)
    t = sb.overall.pairs[0]
    assert t.p_adjusted == pytest.approx(min(1.0, t.p * sb.family))


def test_signatures_carry_the_segmentation(setup):
    _, truth, train, groups, r = setup
    sc = compare_segments(r, "cold-users", train=train, **STATS)
    assert all(s.endswith("|segments:cold-users") for s in sc.overall.signatures.values())
    for label, c in sc.segments.items():
        assert all(s.endswith(f"|segments:cold-users|segment:{'_'.join(label.split())}") for s in c.signatures.values())
    assert "train rf" in sc.note() or "train " in sc.note()


def test_builtin_segmentations():
    ids = np.array([1, 2, 3, 4, 5, 6])
    train = {"user_id": [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5], "item_id": list(range(15))}
    s = segment_users("activity:2", ids, train=train)
    assert s.labels == ["activity 1/2 (0-2 train rows)", "activity 2/2 (3-5 train rows)"]  # counts 1 2 3 4 5 0
    assert s.of_user.tolist() == [0, 0, 1, 1, 1, 0]
    s = segment_users("activity:6", ids, train=train)  # one bucket per count
    assert len(s.labels) == 6 and sorted(s.of_user.tolist()) == list(range(6))
    s = segment_users("cold-users", ids, train=train)
    assert [s.labels[i] for i in s.of_user] == ["warm users"] * 5 + ["cold users (no train rows)"]
    truth = {"user_id": [1, 2, 3, 6], "item_id": [0, 99, 1, 98]}  # 99 and 98 have no train rows
    s = segment_users("cold-items", ids, train=train, truth=truth)
    assert [s.labels[i] for i in s.of_user] == ["users without cold items", "users with cold items", "users without cold items",
                                                "users without cold items", "users without cold items", "users with cold items"]
    s = segment_users({"user_id": [1, 2, 3], "group": ["x", "y", "x"]}, ids)
    assert s.labels == ["x", "y", "(no group)"] and s.of_user.tolist() == [0, 1, 0, 2, 2, 2]
    s = segment_users("cold-users", np.array(["1", "6"]), train=train)  # string ids match the same users
    assert s.of_user.tolist() == [1, 0]
    for bad, match in (("activity:1", "2 to 100"), ("size", "unknown segmentation"), ("cold-users:3", "no parameter")):
        with pytest.raises(SpecError, match=match):
            parse_segments(bad)
    with pytest.raises(SpecError, match="needs the train"):
        segment_users("activity", ids)
    with pytest.raises(SpecError, match="groups="):
        segment_users("groups", ids)


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "csv", "json", "html"])
def test_every_format_shows_every_segment(setup, fmt):
    _, truth, train, groups, r = setup
    sc = compare_segments(r, "groups", groups=groups, **STATS)
    text = render_segments(sc, fmt, ci=True)
    for label in ("g-a", "g-b"):
        assert label in text
    if fmt == "json":
        doc = json.loads(text)
        assert [t["segment"] for t in doc["tables"]] == ["all users", "g-a", "g-b"]
        assert doc["segments"]["family"] == sc.family and doc["segments"]["definition"] == "groups"
        assert doc["tables"][1]["users"] == sc.segments["g-a"].users
        ga = {(v["run"], v["metric"]): v for v in doc["tables"][1]["values"]}
        assert ga[("ease", "ndcg@5")]["value"] == sc.segments["g-a"].values[("ease", "ndcg@5")]
        assert ga[("ease", "ndcg@5")]["ci"]["low"] == sc.segments["g-a"].intervals[("ease", "ndcg@5")].low
    elif fmt == "csv":
        values, tests = text.split("\n\n")
        rows = list(csv.DictReader(io.StringIO(values)))
        assert {row["segment"] for row in rows} == {"all users", "g-a", "g-b"}
        assert len(rows) == 3 * 3 * len(METRICS)
        trows = list(csv.DictReader(io.StringIO(tests)))
        assert len(trows) == sc.family and {row["segment"] for row in trows} == {"all users", "g-a", "g-b"}
    else:
        assert sc.note().split(":")[0] in text


def test_segment_frame(setup):
    _, truth, train, groups, r = setup
    sc = compare_segments(r, "groups", groups=groups, **STATS)
    f = segment_frame(sc)
    assert f.height == 3 * 3 * len(METRICS) and set(f["segment"]) == {"all users", "g-a", "g-b"}


def test_segments_figure(setup, tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from receval.figures import plot_segments, write_figure

    _, truth, train, groups, r = setup
    sc = compare_segments(r, "groups", groups=groups, **STATS)
    fig = plot_segments(sc, metric="recall@10")
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert [t.get_text().split(" (")[0] for t in ax.get_yticklabels()] == ["all users", "g-a", "g-b"]
    dots = {line.get_label(): line for line in ax.get_lines() if line.get_marker() == "o"}
    assert list(dots["ease"].get_xdata()) == pytest.approx([c.values[("ease", "recall@10")] for _, c in sc.comparisons()])
    assert write_figure(sc, "segments", tmp_path / "s.svg").read_bytes().startswith(b"<?xml")
    assert write_figure(sc, "differences", tmp_path / "d.png").stat().st_size > 1000  # the other figures: all users
    with pytest.raises(SpecError, match="--segments"):
        write_figure(r.compare(**STATS), "segments", tmp_path / "x.png")


def _files(tmp_path, n_users: int = 36, seed: int = 1):
    """The runs, truth, train and groups of :func:`data` written as CSV files; the NAME=FILE args."""
    runs, truth, train, groups = data(n_users, seed=seed)
    truth.write_csv(tmp_path / "truth.csv")
    train.write_csv(tmp_path / "train.csv")
    groups.write_csv(tmp_path / "groups.csv")
    named = []
    for name, frame in runs.items():
        frame.write_csv(tmp_path / f"{name}.csv")
        named.append(f"{name}={tmp_path / f'{name}.csv'}")
    return named


def test_command_line(tmp_path, capsys):
    from receval.cli import main

    named = _files(tmp_path)
    base = ["runs", str(tmp_path / "truth.csv"), *named, "-m", "ndcg@5", "--resamples", "200", "--ci", "t"]
    assert main([*base, "--segments", "activity:2", "--train", str(tmp_path / "train.csv"), "--format", "json",
                 "--out", str(tmp_path / "t.csv")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["segments"]["definition"] == "activity:2" and len(doc["tables"]) == 3
    assert "segment" in (tmp_path / "t.csv").read_text().splitlines()[0]
    assert main([*base, "--segments", f"groups={tmp_path / 'groups.csv'}", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "segment g-a" in out and "segments:groups|segment:g-b" in out
    assert main([*base, "--segments", "activity:2"]) == 2
    assert "needs the train" in capsys.readouterr().err
    assert main([*base, "--segments", "groups"]) == 2
    assert "groups=FILE" in capsys.readouterr().err
    assert main([*base, "--figure", f"segments={tmp_path / 's.png'}"]) == 2
    assert "needs --segments" in capsys.readouterr().err
