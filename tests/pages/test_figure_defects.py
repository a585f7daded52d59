"""The figure defects of issue 23, each checked on the matplotlib artists: the ECDF legend clear of
the x label, an interval on an at-k panel with one k, the named metric of the users figure, a
readable range where every dialect agrees, error and not-offered cells drawn apart (with a legend)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from comparison_data import comparison_from_per_user

from receval.errors import SpecError
from receval.figures import parse_figure, plot_metric_at_k, plot_per_user, plot_spread, write_figure
from receval.reproduce import Reproduction


def _draw(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


def _cmp(metrics=("ndcg@10", "mrr@10"), n=30):
    rng = np.random.default_rng(1)
    users = np.arange(n)
    per_user = {name: pl.DataFrame({"user_id": users, **{m: rng.uniform(0, 1, n) * s + 0.1 * j for j, m in enumerate(metrics)}})
                for name, s in (("ease", 1.0), ("pop", 0.5))}
    return comparison_from_per_user(per_user, {m: f"{m}|rel:1" for m in metrics}, resamples=200)


def test_ecdf_legend_is_clear_of_the_x_label():
    fig = _draw(plot_per_user(_cmp(), metric="ndcg@10", kind="ecdf"))
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    labels = [t for t in [fig.axes[0].xaxis.label, getattr(fig, "_supxlabel", None)] if t is not None and t.get_text()]
    assert labels, "the ECDF has an x label"
    for label in labels:
        assert not legend.overlaps(label.get_window_extent(renderer)), label.get_text()
    assert "ndcg@10 per user" in labels[0].get_text()


def test_one_k_panel_shows_its_interval():
    cmp = _cmp(("ndcg@10",))
    fig = _draw(plot_metric_at_k(cmp))
    ax = fig.axes[0]
    from matplotlib.container import ErrorbarContainer

    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == len(cmp.runs)  # an error bar per run
    seen = []
    for bar, run in zip(bars, cmp.runs):
        iv = cmp.intervals[(run, "ndcg@10")]
        segs = bar.lines[2][0].get_segments()
        (x0, y0), (x1, y1) = segs[0]
        assert x0 == x1 and sorted([y0, y1]) == pytest.approx([iv.low, iv.high])
        seen.append(x0)
    # issue 34: the single-k metrics share one dot-plot panel (x: the metric), the runs set apart
    lo, hi = ax.get_xlim()
    assert len(set(seen)) == len(seen) and all(lo < x < hi for x in seen)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ndcg@10"]
    assert fig._suptitle.get_text().startswith("bars:")
    # several k keep their bands
    fig = _draw(plot_metric_at_k(_cmp(("ndcg@5", "ndcg@10"))))
    assert not fig.axes[0].containers[1:] and len(fig.axes[0].collections) == 2


def test_users_figure_draws_the_named_metric(tmp_path):
    cmp = _cmp()
    import receval.figures as figures

    seen = {}
    real = figures.FIGURES["users"]
    try:
        figures.FIGURES["users"] = lambda c, p, **kw: seen.update(kw) or real(c, None, **kw)
        write_figure(cmp, "users", tmp_path / "u.png", metric="mrr@10")
        assert seen["metric"] == "mrr@10"
        seen.clear()
        write_figure(cmp, "users", tmp_path / "v.png")
        assert seen["metric"] == "ndcg@10"  # no name: the first metric
    finally:
        figures.FIGURES["users"] = real
    fig = _draw(plot_per_user(cmp, metric="mrr@10"))
    means = [line for line in fig.axes[0].get_lines() if line.get_marker() == "D"][0].get_xdata()
    assert list(means) == pytest.approx([cmp.values[(r, "mrr@10")] for r in cmp.runs])
    assert parse_figure("users:mrr@10=u.png") == ("users", "mrr@10", "u.png")
    assert parse_figure("users=u.png") == ("users", None, "u.png")
    with pytest.raises(SpecError, match="KIND:METRIC=FILE"):
        parse_figure("users:=u.png")
    with pytest.raises(SpecError, match=r"\.png, \.svg or \.pdf"):
        parse_figure("users:mrr@10=u.jpg")


def test_users_figure_from_the_command_line(tmp_path, monkeypatch):
    import receval.figures as figures
    from receval.cli import main

    truth = tmp_path / "truth.csv"
    truth.write_text("user_id,item_id\n" + "".join(f"{u},{u % 5}\n" for u in range(12)))
    runs = []
    for name, shift in (("a", 0), ("b", 1)):
        p = tmp_path / f"{name}.csv"
        p.write_text("user_id,item_id,score\n" + "".join(f"{u},{(u + shift + j) % 5},{5 - j}\n" for u in range(12) for j in range(3)))
        runs.append(f"{name}={p}")
    seen = []
    real = figures.write_figure
    monkeypatch.setattr(figures, "write_figure", lambda c, kind, path, **kw: seen.append((kind, kw)) or real(c, kind, path, **kw))
    rc = main(["runs", str(truth), *runs, "-m", "hitrate@3", "-m", "mrr@3", "--resamples", "200", "--ci", "t",
               "--figure", f"users:mrr@3={tmp_path / 'u.svg'}"])
    assert rc == 0 and seen == [("users", {"metric": "mrr@3"})]
    assert "mrr@3 per user" in (tmp_path / "u.svg").read_text()


def _rep(errors=None):
    cols = ["hitrate@20", "map@20"]
    table = {"standard": {"hitrate@20": 0.02, "map@20": 0.0139},
             "recbole@1.2.0": {"hitrate@20": 0.02, "map@20": None},
             "elliot@0.3.1": {"hitrate@20": 0.02, "map@20": None}}
    return Reproduction(table, {}, {}, cols, errors=errors or {})


def test_spread_where_every_dialect_agrees_has_a_readable_range():
    fig = _draw(plot_spread(_rep()))
    lo, hi = fig.axes[0].get_xlim()
    assert hi - lo >= 0.01 - 1e-12 and lo < 0.02 < hi
    # values differing in the 6th digit are not blown up either
    rep = _rep()
    rep.table["recbole@1.2.0"]["hitrate@20"] = 0.0200001
    lo, hi = _draw(plot_spread(rep)).axes[0].get_xlim()
    assert hi - lo >= 0.01 - 1e-12
    # a real spread still fills the panel
    rep.table["recbole@1.2.0"]["hitrate@20"] = 0.5
    lo, hi = _draw(plot_spread(rep)).axes[0].get_xlim()
    assert lo < 0.02 and 0.5 < hi < 0.6


def test_spread_error_and_not_offered_cells_differ_and_have_a_legend():
    fig = _draw(plot_spread(_rep(errors={"recbole@1.2.0": {"map@20": "refuses repeated items"}})))
    ax = fig.axes[1]
    marks = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    err, missing = marks["spread-error"], marks["spread-missing"]
    assert (err.get_marker(), err.get_color()) != (missing.get_marker(), missing.get_color())
    # on the rows of their dialects
    rows = {t.get_text(): y for t, y in zip(fig.axes[0].get_yticklabels(), fig.axes[0].get_yticks())}
    assert err.get_ydata()[0] == rows["recbole@1.2.0"] and missing.get_ydata()[0] == rows["elliot@0.3.1"]
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("error" in t for t in texts) and any("not offered" in t for t in texts)
    handles = fig.legends[0].legend_handles
    by_text = dict(zip(texts, handles))
    e = next(h for t, h in by_text.items() if "error" in t)
    m = next(h for t, h in by_text.items() if "not offered" in t)
    assert (e.get_marker(), e.get_color()) == (err.get_marker(), err.get_color())
    assert (m.get_marker(), m.get_color()) == (missing.get_marker(), missing.get_color())
    # without errors the legend names only what is drawn
    texts = [t.get_text() for t in _draw(plot_spread(_rep())).legends[0].get_texts()]
    assert not any("error" in t for t in texts) and any("not offered" in t for t in texts)


def test_a_long_figure_title_is_wrapped_within_the_figure():
    """A title that names several interval kinds (an OPE comparison mixes delta-method and
    normal intervals) wraps inside the figure instead of running off both edges."""
    import dataclasses

    from receval.figures import plot_differences

    cmp = _cmp(("ndcg@10", "mrr@10", "recall@10"))
    kinds = ["delta-method", "normal", "bca"]
    pairs = [dataclasses.replace(t, ci=dataclasses.replace(t.ci, method=kinds[i % 3])) for i, t in enumerate(cmp.pairs)]
    cmp = dataclasses.replace(cmp, pairs=pairs)
    fig = _draw(plot_differences(cmp))
    title = fig._suptitle
    box, canvas = title.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert "\n" in title.get_text() or box.width <= canvas.width
    assert box.x0 >= canvas.x0 - 1 and box.x1 <= canvas.x1 + 1, (box, canvas)
