"""Figures of a Comparison and the dialect-spread figure: files in every format, the asked size,
text of 7 pt or more inside the figure, tick labels that do not overlap."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from comparison_data import comparison_from_per_user, movielens_comparison

from receval.comparison import Comparison, Interval, PairTest
from receval.errors import SpecError
from receval.figures import STYLE, metric_groups, plot_differences, plot_metric_at_k, plot_per_user
from receval.reproduce import Reproduction, plot_spread

MAGIC = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}


@pytest.fixture(scope="module")
def real() -> Comparison:
    return movielens_comparison()


def small() -> Comparison:
    """Three runs with long, awkward names on hand-made per-user values."""
    rng = np.random.default_rng(0)
    users = np.arange(40)
    base = rng.uniform(0, 1, size=(40, 3))
    per_user = {
        name: pl.DataFrame({"user_id": users, "ndcg@5": base[:, 0] * s, "ndcg@10": base[:, 1] * s,
                            "ndcg@100": base[:, 2] * s, "mrr": base[:, 0] * s})
        for name, s in (("a_very_long_run_name_with_underscores", 1.0), ("pop 100% & #1", 0.9),
                        ("bpr", 0.95))
    }
    sigs = {m: f"{m}|rel:1|dialect:standard|v:0.1.0" for m in ("ndcg@5", "ndcg@10", "ndcg@100", "mrr")}
    return comparison_from_per_user(per_user, sigs, resamples=200)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _check_layout(fig) -> None:
    """Every visible text >= 7 pt and inside the figure; tick labels of an axis do not overlap."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    # tick labels beyond the view limits are kept by matplotlib but never drawn
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick, loc in zip(axis.get_major_ticks(), axis.get_majorticklocs()):
                if not lo - 1e-9 * (hi - lo) <= loc <= hi + 1e-9 * (hi - lo):
                    hidden |= {id(tick.label1), id(tick.label2)}
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or id(t) in hidden:
            continue
        assert t.get_fontsize() >= 7, (t.get_text(), t.get_fontsize())
        ext = t.get_window_extent(renderer)
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1 and ext.y0 >= box.y0 - 1 and ext.y1 <= box.y1 + 1, \
            f"{t.get_text()!r} leaves the figure"
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            labels = [lab for lab in axis.get_ticklabels() if lab.get_visible() and lab.get_text() and id(lab) not in hidden]
            exts = [lab.get_window_extent(renderer) for lab in labels]
            for i in range(len(exts)):
                for j in range(i + 1, len(exts)):
                    assert not exts[i].overlaps(exts[j]), (labels[i].get_text(), labels[j].get_text())


def _draw(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


PLOTS = {
    "at_k": lambda c, p, **kw: plot_metric_at_k(c, p, **kw),
    "box": lambda c, p, **kw: plot_per_user(c, p, metric="ndcg@10", **kw),
    "violin": lambda c, p, **kw: plot_per_user(c, p, metric="ndcg@10", kind="violin", **kw),
    "ecdf": lambda c, p, **kw: plot_per_user(c, p, metric="ndcg@10", kind="ecdf", **kw),
    "diff": lambda c, p, **kw: plot_differences(c, p, metrics=["ndcg@10"], **kw),
}


@pytest.mark.parametrize("ext", [".png", ".svg", ".pdf"])
@pytest.mark.parametrize("kind", list(PLOTS))
def test_every_figure_in_every_format(real, tmp_path, kind, ext):
    path = PLOTS[kind](real, tmp_path / f"f{ext}")
    assert path == tmp_path / f"f{ext}"
    data = path.read_bytes()
    assert len(data) > 2000 and data.startswith(MAGIC[ext])


@pytest.mark.parametrize("kind", list(PLOTS))
def test_png_has_the_asked_size(real, tmp_path, kind):
    path = PLOTS[kind](real, tmp_path / "f.png", width=3.3, height=2.5)
    dpi = STYLE["savefig.dpi"]
    assert _png_size(path) == (round(3.3 * dpi), round(2.5 * dpi))
    path = PLOTS[kind](real, tmp_path / "g.png", width=7.0)
    assert _png_size(path)[0] == round(7.0 * dpi)


@pytest.mark.parametrize("kind", list(PLOTS))
@pytest.mark.parametrize("which", ["real", "small"])
def test_text_is_legible_inside_and_not_overlapping(real, kind, which):
    cmp = real if which == "real" else small()
    fig = _draw(PLOTS[kind](cmp, None))
    _check_layout(fig)


def test_metric_at_k_panels_are_one_metric_each(real):
    fig = _draw(plot_metric_at_k(real))
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_ylabel() for ax in axes] == ["ndcg@k", "recall@k"]  # issue 34: the label says @k
    assert [t.get_text() for t in axes[-1].get_xticklabels()] == ["5", "10", "20"]
    # a line per run through the means, in k order
    lines = {line.get_label(): line for line in axes[0].get_lines()}
    assert list(lines["ease"].get_ydata()) == [real.values[("ease", f"ndcg@{k}")] for k in (5, 10, 20)]
    # the runs set apart along x (issue 34): no run's marker hides under another's
    xs = [tuple(line.get_xdata()) for line in lines.values()]
    assert len(set(xs)) == len(xs)
    # one CI band per run
    assert len(axes[0].collections) == len(real.runs)
    fig = _draw(plot_metric_at_k(real, ci=False, metrics=["recall"]))
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 1 and not fig.axes[0].collections


def test_metric_groups_and_wide_k_ranges():
    assert metric_groups(["mrr", "ndcg@100", "ndcg@5"]) == {"ndcg": [(5, "ndcg@5"), (100, "ndcg@100")]}
    fig = _draw(plot_metric_at_k(small()))
    assert fig.axes[0].get_xscale() == "log"
    _check_layout(fig)


def test_difference_markers_are_filled_when_significant():
    cmp = small()
    m = "ndcg@10"
    tests = [t for t in cmp.pairs if t.metric == m]
    cmp.pairs = [PairTest(t.metric, t.a, t.b, t.diff, t.p, p_adj, t.test, t.correction, t.effect, t.effect_name,
                          t.wins, t.ties, t.losses, t.ci) for t, p_adj in zip(tests, (0.001, 0.5, 0.049))]
    fig = _draw(plot_differences(cmp, None, alpha=0.05))
    ax = fig.axes[0]
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    from matplotlib.colors import to_rgba

    filled = [to_rgba(line.get_markerfacecolor()) != (1.0, 1.0, 1.0, 1.0) for line in markers]
    assert filled == [True, False, True]
    # the zero line and a CI bar per pair
    assert any(list(line.get_xdata()) == [0, 0] for line in ax.get_lines())
    bars = [line for line in ax.get_lines() if line.get_marker() in ("None", "", None) and len(line.get_xdata()) == 2
            and line.get_xdata()[0] != line.get_xdata()[1]]
    assert len(bars) == 3


def test_bad_requests_are_one_line_errors(real, tmp_path):
    with pytest.raises(SpecError, match="name the file"):
        plot_metric_at_k(real, tmp_path / "f.jpg")
    with pytest.raises(SpecError, match="choose from ndcg, recall"):
        plot_metric_at_k(real, metrics=["map"])
    with pytest.raises(SpecError, match="box, violin or ecdf"):
        plot_per_user(real, metric="ndcg@10", kind="bars")
    with pytest.raises(SpecError, match="not in the comparison"):
        plot_per_user(real, metric="map@10")
    nouser = Comparison(["a", "b"], ["ndcg@10"], {("a", "ndcg@10"): 0.1, ("b", "ndcg@10"): 0.2}, {"ndcg@10": True},
                        {}, 3, {("a", "ndcg@10"): Interval(0, 0.2, "t", 0.95)})
    with pytest.raises(SpecError, match="no per-user values"):
        plot_per_user(nouser, metric="ndcg@10")
    with pytest.raises(SpecError, match="no paired tests"):
        plot_differences(nouser)
    with pytest.raises(SpecError, match="positive inches"):
        plot_metric_at_k(real, width=0)
    # a curve through one point is drawn (no interval: no band)
    fig = _draw(plot_metric_at_k(nouser))
    assert len(fig.axes[0].collections) == 1


def _reproduction() -> Reproduction:
    cols = ["hitrate@20", "precision@20", "map@20", "auc"]
    table = {"standard": dict(zip(cols, [0.26, 0.0333, 0.0139, 0.659])),
             "recbole@0.2.1": dict(zip(cols, [0.26, 0.0333, 0.0139, 0.661])),
             "ms_recommenders@2021.2.9": dict(zip(cols, [None, 0.0333, 0.0109, None])),
             "dlrs_eval@f5618c6": dict(zip(cols, [0.667, 0.0333, 0.0139, None])),
             "openrec@0.3.0": dict(zip(cols, [None, None, None, None]))}
    return Reproduction(table, {}, {}, cols)


@pytest.mark.parametrize("ext", [".png", ".svg", ".pdf"])
def test_spread_figure_formats_and_layout(tmp_path, ext):
    path = tmp_path / f"spread{ext}"
    plot_spread(_reproduction(), path)
    assert path.read_bytes().startswith(MAGIC[ext]) and path.stat().st_size > 2000
    if ext == ".png":
        assert _png_size(path)[0] == round(7.0 * STYLE["savefig.dpi"])


def test_spread_figure_layout(monkeypatch):
    import receval.figures as figures

    captured = {}
    monkeypatch.setattr(figures, "save_figure", lambda fig, path: captured.setdefault("fig", fig))
    plot_spread(_reproduction(), Path("unused.png"))
    fig = _draw(captured["fig"])
    _check_layout(fig)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["hitrate@20", "precision@20", "map@20", "auc"]
    # every dialect is a row, named once (shared y axis), the standard first (top)
    names = [t.get_text() for t in axes[0].get_yticklabels()]
    assert names[-1] == "standard" or names[0] == "standard"
    assert set(names) == set(_reproduction().table)


def test_write_figure_by_name(real, tmp_path):
    from receval.figures import FIGURES, write_figure

    for kind in FIGURES:
        path = write_figure(real, kind, tmp_path / f"{kind}.svg")
        assert path.read_bytes().startswith(MAGIC[".svg"])
    with pytest.raises(SpecError, match="choose one of at-k, users, differences"):
        write_figure(real, "pie", tmp_path / "x.png")
