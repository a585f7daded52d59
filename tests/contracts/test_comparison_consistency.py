"""One comparison, one user set: the users on which every compared run has a value (the paired
set) are the users of every mean, interval, test, table legend, figure and JSON document, and
their count is stated once. Paired results read in the asked order (``pair(m, a, b)`` is a − b)
and the differences figure with a baseline shows run − baseline, as the table does.

Scores carry no ties (the default tie rule is not relied on)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from receval.cli import main
from receval.figures import plot_differences, plot_per_user
from receval.runs import evaluate_runs
from receval.stats import compare
from receval.tables import render_table

# user 3 has no relevant item (rel 4): every run leaves it out (empty=skip). Under
# pauc(insufficient=exclude)@2 run a also leaves out users 1 and 5 (a relevant item missing from
# a list without 2 negatives): the paired set is users 2, 4 and 6.
TRUTH = {"user_id": [1, 1, 2, 3, 4, 5, 5, 6], "item_id": [10, 11, 20, 30, 40, 50, 51, 60],
         "rating": [5.0, 5.0, 5.0, 2.0, 5.0, 4.0, 5.0, 5.0]}
RUN_A = {"user_id": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6],
         "item_id": [10, 12, 21, 20, 30, 31, 40, 41, 50, 52, 61, 60],
         "score": [0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8]}
RUN_B = {"user_id": [1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 6],
         "item_id": [10, 11, 20, 22, 31, 42, 40, 50, 51, 60, 62],
         "score": [0.9, 0.8, 0.9, 0.8, 0.9, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8]}
METRICS = ["ndcg@2", "pauc(insufficient=exclude)@2"]


def _paired_mask(per_user: dict[str, dict[str, np.ndarray]]) -> np.ndarray:
    """Computed here, independently: the users with a value in every run on every metric."""
    cols = [np.asarray(v, dtype=float) for run in per_user.values() for v in run.values()]
    return ~np.any(np.isnan(np.vstack(cols)), axis=0)


def _figure_texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def _one_user_set(c, n: int, total: int) -> None:
    md = render_table(c, "markdown")
    assert c.users == n
    assert f"the same {n} users" in md and f"{total - n} of {total} dropped" in md
    doc = json.loads(render_table(c, "json"))
    assert doc["users"] == n
    for t in c.pairs:  # every test on the same users
        assert t.wins + t.ties + t.losses == n
    for m in c.metrics:
        texts = _figure_texts(plot_per_user(c, metric=m))
        assert any(f"({n} users" in x for x in texts), texts
        assert not any(f"({total} users" in x for x in texts)


def test_one_user_set_in_means_tests_tables_figures_and_json():
    runs = evaluate_runs({"a": RUN_A, "b": RUN_B}, TRUTH, METRICS, rel=4.0)
    pu = runs.arrays()  # {run: {metric: per-user values}}
    keep = _paired_mask(pu)
    n, total = int(keep.sum()), len(keep)
    assert (n, total) == (3, 6)  # users 2, 4 and 6
    c = runs.compare(ci="t", correction="none")
    for (r, m), v in c.values.items():  # every mean over the paired users only
        assert v == pytest.approx(float(pu[r][m][keep].mean()), rel=1e-12)
    for r in c.runs:  # the per-user values a comparison keeps are those of the paired users
        assert c.per_user[r]["user_id"].to_list() == runs.user_ids[keep].tolist()
    _one_user_set(c, n, total)


def test_one_user_set_on_movielens_like_data():
    """The bundled MovieLens ratings, rel=5: many test users rated nothing 5 and have no value."""
    from receval.data import load_bundled
    from receval.data.protocol import prepare_study, recommend
    from receval.models import Popularity

    study = prepare_study(load_bundled(), threshold=4.0, split="random", test_fraction=0.2, seed=0)
    pop = recommend(study.train, study.test_users, Popularity(), 20, decimals=10).drop("rank")
    # the same 20 items in reverse order: another ranking of the same lists, no tied scores
    rev = pop.with_columns(score=-pl.col("score"))
    runs = evaluate_runs({"pop": pop, "pop_reversed": rev}, study.test, ["ndcg@10", "recall@10"], rel=5.0)
    keep = _paired_mask(runs.arrays())
    n, total = int(keep.sum()), len(keep)
    assert 0 < n < total
    c = runs.compare(ci="t", correction="none", baseline="pop")
    _one_user_set(c, n, total)


def test_stats_compare_drops_users_without_a_value_in_some_run_and_says_so():
    a = np.array([0.5, np.nan, 0.25, 0.75, 1.0, 0.0])
    b = np.array([0.25, 0.5, np.nan, 0.5, 0.5, 0.25])
    keep = ~(np.isnan(a) | np.isnan(b))
    c = compare({"a": {"m": a}, "b": {"m": b}}, test="t", ci="t", correction="none", progress=False)
    assert c.users == 4
    assert c.values[("a", "m")] == pytest.approx(a[keep].mean()) and c.values[("b", "m")] == pytest.approx(b[keep].mean())
    t = c.pair("m", "a", "b")
    assert t.diff == pytest.approx((a[keep] - b[keep]).mean()) and t.wins + t.ties + t.losses == 4
    md = render_table(c, "markdown")
    assert "the same 4 users" in md and "2 of 6 dropped" in md


def test_pair_is_a_minus_b_whatever_order_was_stored():
    a = np.array([0.5, 0.75, 0.25, 1.0, 0.5])
    b = np.array([0.25, 0.25, 0.5, 0.5, 0.0])
    c = compare({"a": {"m": a}, "b": {"m": b}}, test="t", ci="t", correction="none", progress=False)
    ab, ba = c.pair("m", "a", "b"), c.pair("m", "b", "a")
    assert (ab.a, ab.b, ba.a, ba.b) == ("a", "b", "b", "a")
    assert ab.diff == pytest.approx((a - b).mean()) and ba.diff == pytest.approx((b - a).mean())
    assert (ba.wins, ba.ties, ba.losses) == (int((b > a).sum()), int((b == a).sum()), int((b < a).sum()))
    assert ba.effect == pytest.approx(-ab.effect) and ba.p == ab.p and ba.p_adjusted == ab.p_adjusted
    assert (ba.ci.low, ba.ci.high) == pytest.approx((-ab.ci.high, -ab.ci.low))
    with pytest.raises(KeyError):
        c.pair("m", "a", "a")


def _difference_points(fig) -> dict[str, float]:
    """``{label: plotted mean difference}`` of a one-panel differences figure."""
    ax = fig.axes[0]
    labels = {round(tick): lab.get_text().replace("\n", "") for tick, lab in zip(ax.get_yticks(), ax.get_yticklabels())}
    out = {}
    for line in ax.lines:
        if line.get_marker() == "o":
            (x,), (y,) = line.get_xdata(), line.get_ydata()
            out[labels[round(y)]] = float(x)
    return out


def test_differences_figure_with_a_baseline_plots_run_minus_baseline():
    base = np.array([0.25, 0.5, 0.25, 0.0, 0.5])
    better = base + np.array([0.5, 0.25, 0.25, 0.5, 0.25])
    worse = base - np.array([0.25, 0.5, 0.0, 0.0, 0.25])
    pu = {"base": {"m": base}, "better": {"m": better}, "worse": {"m": worse}}
    c = compare(pu, test="t", ci="t", correction="none", baseline="base", progress=False)
    points = _difference_points(plot_differences(c))
    assert points == pytest.approx({"better − base": (better - base).mean(), "worse − base": (worse - base).mean()})
    assert points["better − base"] > 0 > points["worse − base"]  # as the table: better beats the baseline


def _write(tmp_path, name, data) -> str:
    path = tmp_path / f"{name}.csv"
    pl.DataFrame(data).write_csv(path)
    return str(path)


def test_cli_runs_states_one_user_count_and_orients_differences(tmp_path, capsys):
    truth, a, b = _write(tmp_path, "t", TRUTH), _write(tmp_path, "a", RUN_A), _write(tmp_path, "b", RUN_B)
    svg = tmp_path / "d.svg"
    rc = main(["runs", truth, f"a={a}", f"b={b}", "-m", "ndcg@2", "-m", "pauc(insufficient=exclude)@2", "--rel", "4",
               "--ci", "t", "--baseline", "b", "--format", "json", "--figure", f"differences={svg}"])
    out = capsys.readouterr()
    assert rc == 0 and "Traceback" not in out.err
    doc = json.loads(out.out)
    assert doc["users"] == 3 and all(p["wins"] + p["ties"] + p["losses"] == 3 for p in doc["pairs"])
    assert any("the same 3 users" in line and "3 of 6 dropped" in line for line in doc["legend"])
    text = svg.read_text(encoding="utf-8")
    assert "a − b" in text and "b − a" not in text  # run − baseline
