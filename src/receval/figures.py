"""Paper-ready figures of a :class:`~receval.comparison.Comparison` (matplotlib).

- :func:`plot_metric_at_k`: each metric against its cut-off k, a line per run, CI bands;
  the same metric at several k (``ndcg@5``, ``ndcg@10``, ...) is one panel.
- :func:`plot_per_user`: the per-user distribution of one metric per run (box, violin or ECDF).
- :func:`plot_differences`: the mean difference of every paired test with its CI and a zero
  line; significant pairs (adjusted p below the level) drawn filled.

Every figure is sized for a paper column (3.3 in wide by default), with text of 7 pt or more,
one metric (one unit) per panel and labels inside the figure. ``path`` writes PNG, SVG or PDF by
its extension and returns the path; without ``path`` the matplotlib Figure is returned.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .comparison import Comparison, PairTest
from .errors import SpecError
from .outputs import write_output
from .report import fmt_num
from .tables import ci_name, is_significant, significance_level


def tick_label(v: float) -> str:
    """An axis tick: 4 significant digits (:func:`receval.report.fmt_num`), trailing zeros dropped.

    >>> tick_label(0.02), tick_label(0.0001234), tick_label(12340.0)
    ('0.02', '0.0001234', '12340')
    """
    text = fmt_num(v)
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text

#: file extensions :func:`save_figure` writes
FIGURE_FORMATS = (".png", ".svg", ".pdf")

#: the width of one column of a two-column paper (ACM, IEEE), in inches
COLUMN_WIDTH = 3.3

#: font sizes in points: readable when the figure is printed at its own size
STYLE = {
    # user text (run names) is drawn as written: a matplotlibrc with text.usetex on would hand
    # it to LaTeX, where "$" or "_" fail the figure
    "text.usetex": False,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "figure.titlesize": 8,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "grid.linewidth": 0.4,
    "grid.alpha": 0.4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 300,
    "pdf.fonttype": 42,  # TrueType in PDFs: text stays text (journals ask for it)
    "svg.fonttype": "none",
}

_AT_K = re.compile(r"^(?P<name>.+)@(?P<k>\d+)$")


def _mpl() -> Any:
    try:
        import matplotlib
        import matplotlib.figure  # noqa: F401
        import matplotlib.ticker  # noqa: F401
        import matplotlib.transforms  # noqa: F401
    except ImportError:  # pragma: no cover - matplotlib is a dependency of receval
        raise SpecError("figures need matplotlib, a dependency of receval: pip install 'matplotlib>=3.8'") from None
    return matplotlib


@contextmanager
def paper_style() -> Iterator[Any]:
    """matplotlib with receval's paper style in force (fonts >= 7 pt). Figures are made with
    ``matplotlib.figure.Figure``, not pyplot: no backend and no global state are touched."""
    mpl = _mpl()
    with mpl.rc_context(STYLE):
        yield mpl


def _version(mpl: Any) -> tuple[int, int]:
    major, minor = mpl.__version__.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _figure(mpl: Any, width: float, height: float) -> Any:
    return mpl.figure.Figure(figsize=(width, height), layout="constrained")


def save_figure(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` as PNG, SVG or PDF by its extension, at the figure's own size."""
    path = Path(path)
    if path.suffix.lower() not in FIGURE_FORMATS:
        raise SpecError(f"cannot write a figure as {path.suffix or 'no extension'!r}: name the file "
                        f"{', '.join('*' + e for e in FIGURE_FORMATS)}")
    with _mpl().rc_context(STYLE):  # whole or not at all: drawn into a temporary file, renamed into place
        write_output(path, lambda f: fig.savefig(f, format=path.suffix.lower()[1:], dpi=STYLE["savefig.dpi"]), "figure")
    return path


def _finish(fig: Any, path: str | Path | None) -> Any:
    return fig if path is None else save_figure(fig, path)


def _colors(n: int) -> list[Any]:
    cmap = _mpl().colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def metric_groups(metrics: list[str]) -> dict[str, list[tuple[int, str]]]:
    """``{"ndcg": [(5, "ndcg@5"), (10, "ndcg@10")], ...}``: the metrics with an integer cut-off,
    grouped by what precedes ``@``, sorted by k.

    >>> metric_groups(["ndcg@10", "ndcg@5", "map@10", "auc"])
    {'ndcg': [(5, 'ndcg@5'), (10, 'ndcg@10')], 'map': [(10, 'map@10')]}
    """
    out: dict[str, list[tuple[int, str]]] = {}
    for m in metrics:
        if (hit := _AT_K.match(m)) is not None:
            out.setdefault(hit["name"], []).append((int(hit["k"]), m))
    return {name: sorted(ks) for name, ks in out.items()}


def _size(width: float, height: float | None, default_height: float) -> tuple[float, float]:
    if width <= 0 or (height is not None and height <= 0):
        raise SpecError(f"a figure's width and height must be positive inches, got {width} x {height}")
    return width, default_height if height is None else height


def wrap_label(text: str, width: int = 18) -> str:
    r"""``text`` in lines of at most ``width`` characters where it can break (after ``_``,
    ``-``, ``.``, ``/`` or at a space); a word longer than ``width`` is cut.

    >>> wrap_label("a_very_long_run_name_with_underscores")
    'a_very_long_run_\nname_with_\nunderscores'
    """
    pieces = re.findall(r"[^\s_\-./]*(?:[_\-./]|\s+|$)", text)
    lines, cur = [], ""
    for piece in (p for p in pieces if p):
        while len(piece) > width:
            if cur:
                lines.append(cur.rstrip())
                cur = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len((cur + piece).rstrip()) > width and cur:
            lines.append(cur.rstrip())
            cur = piece.lstrip()
        else:
            cur += piece
    if cur.strip():
        lines.append(cur.rstrip())
    return "\n".join(lines) or text


def _suptitle(fig: Any, text: str) -> None:
    """The figure's title line(s), wrapped to the figure's width (a title that mixes several
    interval kinds, e.g. delta-method and normal, is longer than a narrow figure)."""
    import textwrap

    chars = max(20, int(fig.get_figwidth() * 72 / (7 * 0.56)))  # 7 pt text: about 0.56 em a character
    fig.suptitle("\n".join(textwrap.wrap(text, chars, break_on_hyphens=False)), fontsize=7)


def _text(text: object) -> str:
    r"""User text (a run or metric name) as matplotlib shows it literally: every ``$`` escaped
    (``\$``), so a name like ``a$b$`` or ``$_$`` is not read as mathtext (which would typeset
    it, or fail to draw), and a leading ``_`` behind a zero-width space (matplotlib leaves a
    label starting with ``_`` out of the legend). Every name a figure writes passes through here.

    >>> _text("a$b$"), _text("_v2")
    ('a\\$b\\$', '\u200b_v2')
    """
    text = str(text).replace("$", r"\$")
    return "\u200b" + text if text.startswith("_") else text


def _row_height(label: str) -> float:
    """Inches a row of a categorical axis needs for its (wrapped) label at 7 pt."""
    return max(0.22, 0.13 * (label.count("\n") + 1) + 0.05)


def _legend_below(fig: Any, ax: Any, ncol_max: int = 3) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        # as many columns as fit the figure's width (7 pt text: ~0.06 in a character, plus the handle)
        entry = max(len(label) for label in labels) * 0.06 + 0.45
        ncol = max(1, min(ncol_max, len(labels), int(fig.get_figwidth() // entry)))
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False,
                   handlelength=1.6, columnspacing=1.0)


def plot_metric_at_k(cmp: Comparison, path: str | Path | None = None, *, metrics: list[str] | None = None,
                     ci: bool = True, width: float = COLUMN_WIDTH, height: float | None = None) -> Any:
    """Each metric against its cut-off k, a line per run, the CI as a band (when ``ci`` and the
    Comparison has intervals). ``metrics`` the metric names to draw (``["ndcg", "recall"]``;
    default: every metric with a cut-off); one panel per name with several k (its y label
    ``name@k``), stacked; the metrics with a single k share one panel, a dot plot (x: each
    ``name@k``, the CI as an error bar). The runs' markers are set apart along x (a small
    offset per run), so equal values never hide a run."""
    groups = metric_groups(cmp.metrics)
    if metrics is not None:
        unknown = [m for m in metrics if m not in groups]
        if unknown:
            raise SpecError(f"no metric@k for {', '.join(unknown)} in the comparison: choose from "
                            f"{', '.join(groups) or '(none: evaluate e.g. ndcg@[5,10,20])'}")
        groups = {m: groups[m] for m in metrics}
    if not groups:
        raise SpecError("a metric@k figure needs metrics with a cut-off: evaluate e.g. ndcg@[5,10,20]")
    multi = {name: ks for name, ks in groups.items() if len(ks) > 1}
    single = [ks[0][1] for ks in groups.values() if len(ks) == 1]
    n = len(multi) + (1 if single else 0)
    w, h = _size(width, height, 0.55 + 1.75 * n)
    colors = _colors(len(cmp.runs))
    nr = len(cmp.runs)
    with paper_style() as mpl:
        fig = _figure(mpl, w, h)
        axes = fig.subplots(n, 1, squeeze=False)
        panels = list(zip(axes[:, 0], multi.items()))
        for ax, (name, ks) in panels:
            xs = [k for k, _ in ks]
            log = min(xs) > 0 and max(xs) / min(xs) >= 8  # 5 ... 100: log scale keeps the ticks apart
            for i, (color, run) in enumerate(zip(colors, cmp.runs)):
                pts = [(k, cmp.values[(run, m)], cmp.intervals.get((run, m))) for k, m in ks
                       if (run, m) in cmp.values and not math.isnan(cmp.values[(run, m)])]
                if not pts:
                    continue
                off = (i - (nr - 1) / 2) * 0.025  # a run's offset: a share of the axis (log) or of the spacing
                step = min(b - a for a, b in zip(xs, xs[1:]))
                at = [p[0] * (1 + off) if log else p[0] + off * step for p in pts]
                ax.plot(at, [p[1] for p in pts], marker="o", markersize=3.5, color=color, label=_text(run))
                bands = [(x, iv.low, iv.high) for x, (_, _, iv) in zip(at, pts) if iv is not None]
                if ci and bands:
                    ax.fill_between([b[0] for b in bands], [b[1] for b in bands], [b[2] for b in bands],
                                    color=color, alpha=0.2, linewidth=0)
            if log:
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs, [str(k) for k in xs])
            ax.minorticks_off()
            ax.set_ylabel(_text(f"{name}@k"))
            ax.set_xlabel("cut-off k")
            ax.grid(True, axis="y")
            ax.yaxis.set_major_locator(mpl.ticker.MaxNLocator(5))
        if single:  # one dot plot: x the metrics, a dot and an error bar per run, set apart
            ax = axes[-1, 0]
            for i, (color, run) in enumerate(zip(colors, cmp.runs)):
                off = (i - (nr - 1) / 2) * min(0.6 / max(nr, 1), 0.18)
                dots: list[tuple[float, float, Any]] = [
                    (j + off, cmp.values[(run, m)], cmp.intervals.get((run, m))) for j, m in enumerate(single)
                    if (run, m) in cmp.values and not math.isnan(cmp.values[(run, m)])]
                if not dots:
                    continue
                ax.plot([p[0] for p in dots], [p[1] for p in dots], marker="o", markersize=3.5, linestyle="none",
                        color=color, label=_text(run) if not panels else None)
                for x, v, iv in dots:
                    if ci and iv is not None:
                        ax.errorbar([x], [v], yerr=[[v - iv.low], [iv.high - v]], fmt="none", ecolor=color,
                                    elinewidth=1.2, capsize=2.5, alpha=0.8)
            ax.set_xticks(range(len(single)), [_text(m) for m in single])
            ax.set_xlim(-0.6, len(single) - 0.4)
            ax.set_ylabel("value")
            ax.grid(True, axis="y")
            ax.yaxis.set_major_locator(mpl.ticker.MaxNLocator(5))
        _legend_below(fig, axes[0, 0])
        kinds = sorted({(iv.method, iv.level) for iv in cmp.intervals.values()})
        if ci and kinds:
            what = "bars" if not multi else "bands" if not single else "bands and bars"
            _suptitle(fig, _text(f"{what}: " + "; ".join(f"{lv * 100:g}% {ci_name(meth)} CI" for meth, lv in kinds)))
    return _finish(fig, path)


def _user_values(cmp: Comparison, metric: str) -> dict[str, Any]:
    import numpy as np

    if cmp.per_user is None:
        raise SpecError("this comparison kept no per-user values (Spark keeps them in Spark): "
                        "evaluate in memory to plot per-user distributions")
    if metric not in cmp.metrics:
        raise SpecError(f"{metric!r} is not in the comparison: choose one of {', '.join(cmp.metrics)}")
    def column(frame: Any, m: str) -> Any:
        col = frame[m]
        return np.asarray(col.to_numpy() if hasattr(col, "to_numpy") else col, dtype=float)

    frames = {run: cmp.per_user[run] for run in cmp.runs if cmp.per_user.get(run) is not None}
    cols = {run: column(frame, metric) for run, frame in frames.items()}
    # the paired users, as every number of the comparison: a value in every run on every metric
    # (per-user values a comparison keeps are those users already; others are aligned by row)
    if len({len(v) for v in cols.values()}) <= 1:
        keep = np.ones(len(next(iter(cols.values()), [])), dtype=bool)
        for run, frame in frames.items():
            for m in cmp.metrics:
                if m in getattr(frame, "columns", frame):
                    keep &= ~np.isnan(column(frame, m))
        return {run: v[keep] for run, v in cols.items()}
    return {run: v[~np.isnan(v)] for run, v in cols.items()}


def plot_per_user(cmp: Comparison, path: str | Path | None = None, *, metric: str, kind: str = "box",
                  width: float = COLUMN_WIDTH, height: float | None = None) -> Any:
    """The per-user values of ``metric`` for every run: ``kind`` ``"box"`` (the mean as a
    diamond), ``"violin"`` or ``"ecdf"`` (fraction of users at or below each value)."""
    import numpy as np

    if kind not in ("box", "violin", "ecdf"):
        raise SpecError(f"unknown distribution kind {kind!r}: choose box, violin or ecdf")
    values = _user_values(cmp, metric)
    runs = [r for r in cmp.runs if r in values and len(values[r])]
    if not runs:
        raise SpecError(f"no per-user values of {metric} to plot")
    colors = dict(zip(cmp.runs, _colors(len(cmp.runs))))
    labels = [_text(wrap_label(r)) for r in runs]
    default_h = 2.4 if kind == "ecdf" else 0.7 + sum(_row_height(x) for x in labels)
    w, h = _size(width, height, max(1.6, default_h))
    with paper_style() as mpl:
        fig = _figure(mpl, w, h)
        ax = fig.subplots()
        if kind == "ecdf":
            for run in runs:
                v = np.sort(values[run])
                ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=colors[run], label=_text(run))
            ax.set_ylabel("fraction of users")
            ax.set_ylim(0, 1.02)
            ax.grid(True)
            _legend_below(fig, ax)
        else:
            pos = list(range(len(runs), 0, -1))  # first run at the top
            # horizontal: `orientation` from matplotlib 3.10, `vert` before (deprecated since)
            horizontal = {"orientation": "horizontal"} if _version(mpl) >= (3, 10) else {"vert": False}
            data = [values[r] for r in runs]
            if kind == "box":
                parts = ax.boxplot(data, positions=pos, **horizontal, widths=0.6, patch_artist=True,
                                   showfliers=True, flierprops={"markersize": 2, "alpha": 0.4},
                                   medianprops={"color": "black", "linewidth": 1})
                for patch, r in zip(parts["boxes"], runs):
                    patch.set_facecolor(colors[r])
                    patch.set_alpha(0.5)
            else:
                parts = ax.violinplot(data, positions=pos, **horizontal, widths=0.8, showmedians=True)
                for body, r in zip(parts["bodies"], runs):
                    body.set_facecolor(colors[r])
                    body.set_alpha(0.5)
                for key in ("cmedians", "cmins", "cmaxes", "cbars"):
                    parts[key].set_color("0.2")
                    parts[key].set_linewidth(0.8)
            ax.plot([float(np.mean(d)) for d in data], pos, linestyle="none", marker="D", color="black",
                    markersize=3, label="mean")
            ax.set_yticks(pos, labels)
            ax.set_ylim(0.4, len(runs) + 0.6)
            ax.grid(True, axis="x")
        # the users drawn: the paired users of the comparison (its `users`)
        n = max(len(values[r]) for r in runs)
        xlabel = f"{_text(metric)} per user ({n} users" + ("" if kind == "ecdf" else "; diamond: mean") + ")"
        if kind == "ecdf":  # on the panel: the legend below the figure then sits under the label, never on it
            ax.set_xlabel(xlabel)
        else:  # centred on the figure, not the panel: long run names leave the panel narrow
            fig.supxlabel(xlabel, fontsize=STYLE["axes.labelsize"])
        ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(5))
    return _finish(fig, path)


def plot_differences(cmp: Comparison, path: str | Path | None = None, *, metrics: list[str] | None = None,
                     alpha: float | None = None, width: float = COLUMN_WIDTH, height: float | None = None) -> Any:
    """Every paired test's mean difference (a − b) with its CI, one panel per metric, a zero
    line; filled markers for the pairs significant at ``alpha`` (default: the signatures'
    level, else 0.05), hollow otherwise. Against a baseline every difference is run − baseline
    (right of zero: the run has the higher value), as the table reads."""
    if not cmp.pairs:
        raise SpecError("this comparison has no paired tests: compare two or more runs")
    level = significance_level(cmp, alpha)
    chosen = [m for m in cmp.metrics if any(t.metric == m for t in cmp.pairs)]
    if metrics is not None:
        unknown = [m for m in metrics if m not in chosen]
        if unknown:
            raise SpecError(f"no paired tests on {', '.join(unknown)}: choose from {', '.join(chosen)}")
        chosen = list(metrics)
    def oriented(t: PairTest) -> PairTest:  # run − baseline, whichever order the test was stored in
        return t.reversed() if cmp.baseline is not None and t.a == cmp.baseline and t.b != cmp.baseline else t

    per_metric = {m: [oriented(t) for t in cmp.pairs if t.metric == m] for m in chosen}
    labels = {m: [_text(wrap_label(f"{t.a} − {t.b}", 22)) for t in v] for m, v in per_metric.items()}
    rows = {m: sum(_row_height(x) for x in v) for m, v in labels.items()}
    w, h = _size(width, height, 0.35 + 0.5 * len(chosen) + sum(rows.values()))
    with paper_style() as mpl:
        fig = _figure(mpl, w, h)
        axes = fig.subplots(len(chosen), 1, squeeze=False, height_ratios=[0.5 + rows[m] for m in per_metric])
        for ax, (m, tests) in zip(axes[:, 0], per_metric.items()):
            pos = list(range(len(tests), 0, -1))
            for y, t in zip(pos, tests):
                sig = is_significant(t, level)
                if t.ci is not None:
                    ax.plot([t.ci.low, t.ci.high], [y, y], color="0.2", linewidth=1)
                ax.plot([t.diff], [y], marker="o", markersize=4, color="0.1",
                        markerfacecolor="0.1" if sig else "white", linestyle="none")
            ax.axvline(0, color="crimson", linewidth=0.8, linestyle="--")
            ax.set_yticks(pos, labels[m])
            ax.set_ylim(0.4, len(tests) + 0.6)
            ax.set_xlabel(f"difference in {_text(m)}")
            ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(5))
            ax.grid(True, axis="x")
        cis = sorted({(t.ci.method, t.ci.level) for t in cmp.pairs if t.ci is not None})
        note = "filled: adjusted p < " + f"{level:g}"
        if cis:
            note += "; bars: " + "; ".join(f"{lv * 100:g}% {ci_name(meth)} CI" for meth, lv in cis)
        _suptitle(fig, _text(note))
    return _finish(fig, path)


def plot_segments(sc: Any, path: str | Path | None = None, *, metrics: list[str] | None = None, metric: str | None = None,
                  ci: bool = True, width: float = COLUMN_WIDTH, height: float | None = None) -> Any:
    """A :class:`~receval.segments.SegmentedComparison`: one panel per metric, a row per segment
    (all users at the top), each run's value as a dot with its CI as a bar; ``metric`` or
    ``metrics`` the metrics drawn (default: every one)."""
    chosen = list(metrics) if metrics is not None else [metric] if metric is not None else list(sc.overall.metrics)
    unknown = [m for m in chosen if m not in sc.overall.metrics]
    if unknown:
        raise SpecError(f"{', '.join(unknown)} not in the comparison: choose from {', '.join(sc.overall.metrics)}")
    tables = sc.comparisons()
    runs = sc.overall.runs
    labels = [_text(wrap_label(f"{name} (n={c.users})", 24)) for name, c in tables]
    rows = sum(_row_height(x) for x in labels)
    w, h = _size(width, height, 0.55 + len(chosen) * (0.45 + rows))
    colors = _colors(len(runs))
    with paper_style() as mpl:
        fig = _figure(mpl, w, h)
        axes = fig.subplots(len(chosen), 1, squeeze=False)
        step = 0.6 / max(1, len(runs))
        for ax, m in zip(axes[:, 0], chosen):
            pos = list(range(len(tables), 0, -1))
            for j, (color, run) in enumerate(zip(colors, runs)):
                off = 0.3 - step / 2 - j * step
                xs, ys = [], []
                for y, (_, c) in zip(pos, tables):
                    v = c.values.get((run, m))
                    if v is None or math.isnan(v):
                        continue
                    xs.append(v)
                    ys.append(y + off)
                    iv = c.intervals.get((run, m))
                    if ci and iv is not None:
                        ax.plot([iv.low, iv.high], [y + off, y + off], color=color, linewidth=1)
                ax.plot(xs, ys, marker="o", linestyle="none", color=color, label=_text(run))
            ax.set_yticks(pos, labels)
            ax.set_ylim(0.5, len(tables) + 0.5)
            ax.set_xlabel(_text(m))
            ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(5))
            ax.grid(True, axis="x")
        _legend_below(fig, axes[0, 0])
        kinds = sorted({(iv.method, iv.level) for _, c in tables for iv in c.intervals.values()})
        title = f"by segment: {sc.definition}"
        if ci and kinds:
            title += "; bars: " + "; ".join(f"{lv * 100:g}% {ci_name(meth)} CI" for meth, lv in kinds)
        _suptitle(fig, _text(title))
    return _finish(fig, path)


#: the narrowest x range of a spread panel, relative to the largest |value| shown (and at least
#: :data:`SPREAD_MIN_ABS`): dialects that agree (or differ in the 6th digit) are drawn as agreeing,
#: not magnified into a spread of rounding noise
SPREAD_MIN_REL = 0.1
SPREAD_MIN_ABS = 0.01


def spread_limits(values: Sequence[float]) -> tuple[float, float]:
    """The x range of a spread panel: the values with 8% padding, at least
    ``max(SPREAD_MIN_REL * max|v|, SPREAD_MIN_ABS)`` wide, centred on the values.

    >>> lo, hi = spread_limits((0.02, 0.02))   # every dialect agrees: not a ±0.001 zoom
    >>> round(lo, 4), round(hi, 4)
    (0.015, 0.025)
    >>> lo, hi = spread_limits((0.1, 0.5))
    >>> round(lo, 4), round(hi, 4)
    (0.068, 0.532)
    """
    lo, hi = min(values), max(values)
    span = max((hi - lo) * 1.16, SPREAD_MIN_REL * max(abs(lo), abs(hi)), SPREAD_MIN_ABS)
    mid = (lo + hi) / 2
    return mid - span / 2, mid + span / 2


#: how a spread panel marks a cell without a value (a legend under the figure names both)
#: both span the whole row, so neither can be read as a value at some x
SPREAD_ERROR: dict[str, Any] = {"marker": "x", "color": "darkorange", "markersize": 4.5, "markeredgewidth": 1.2,
                                "linestyle": "--", "linewidth": 0.8}
SPREAD_MISSING: dict[str, Any] = {"marker": "None", "color": "0.6", "linestyle": ":", "linewidth": 1.0}


def plot_spread(rep: Any, path: str | Path | None = None, *, width: float = 7.0) -> Any:
    """A :class:`~receval.reproduce.Reproduction` across dialects: one panel per metric (one unit
    per panel), the value under each dialect, dialects in the same rows in every panel (named once,
    on the left), the receval standard in red. A cell without a value is a line across its whole
    row, which no one reads as a value: orange dashes with crosses at the ends where the library
    refused the data (``error``), grey dots where it does not offer the metric; the legend under
    the figure says which is which. A panel where the
    dialects agree keeps a readable range (:func:`spread_limits`)."""
    cols = rep.columns
    errors = getattr(rep, "errors", {}) or {}
    dialects = ["standard", *[d for d in rep.table if d != "standard"]] if "standard" in rep.table else list(rep.table)
    ncol = min(4, len(cols))
    nrow = math.ceil(len(cols) / ncol)
    pos = {d: len(dialects) - i for i, d in enumerate(dialects)}  # the first dialect at the top
    w, h = _size(width, None, 0.75 + nrow * (0.35 + 0.15 * len(dialects)))
    with paper_style() as mpl:
        from matplotlib.lines import Line2D

        fig = _figure(mpl, w, h)
        axes = fig.subplots(nrow, ncol, squeeze=False, sharey=True)
        kinds_seen: set[str] = set()
        for ax, col in zip(axes.flat, cols):
            pts = [(d, v) for d in dialects if (v := rep.table[d].get(col)) is not None and not math.isnan(v)]
            for d, v in pts:
                ax.plot([v], [pos[d]], marker="o", linestyle="none", markersize=3.5,
                        color="crimson" if d == "standard" else "steelblue", zorder=3)
            # the cells without a value, at the left edge (x in axes coordinates, y in rows)
            edge = mpl.transforms.blended_transform_factory(ax.transAxes, ax.transData)
            for d in dialects:
                if any(d == p[0] for p in pts):
                    continue
                kind = "error" if col in errors.get(d, {}) else "missing"
                kinds_seen.add(kind)
                ax.plot([0.0, 1.0], [pos[d], pos[d]], transform=edge, zorder=4,
                        gid=f"spread-{kind}", **(SPREAD_ERROR if kind == "error" else SPREAD_MISSING))
            ax.set_title(_text(col))
            ax.grid(True, axis="both")
            ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(3))
            ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: tick_label(v)))
            if pts:
                ax.set_xlim(*spread_limits([v for _, v in pts]))
            else:
                ax.text(0.5, 0.5, "no dialect has it", transform=ax.transAxes, ha="center", va="center")
                ax.set_xticks([])
        for ax in list(axes.flat)[len(cols):]:
            ax.set_visible(False)
        axes[0, 0].set_yticks([pos[d] for d in dialects], [_text(d) for d in dialects])
        axes[0, 0].set_ylim(0.5, len(dialects) + 0.5)
        handles = [Line2D([], [], marker="o", linestyle="none", markersize=3.5, color="crimson"),
                   Line2D([], [], marker="o", linestyle="none", markersize=3.5, color="steelblue")]
        labels = ["receval standard", "a library's dialect"]
        if "error" in kinds_seen:
            handles.append(Line2D([], [], **SPREAD_ERROR))
            labels.append("error: the library refused this data")
        if "missing" in kinds_seen:
            handles.append(Line2D([], [], **SPREAD_MISSING))
            labels.append("not offered by the library")
        fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(labels)), frameon=False,
                   handlelength=1.2, columnspacing=1.2)
        fig.suptitle("Each metric under each library's dialect")
    return _finish(fig, path)


#: the figures by the name a command line gives them
FIGURES = {"at-k": plot_metric_at_k, "users": plot_per_user, "differences": plot_differences}


def write_figure(cmp: Any, kind: str, path: str | Path, *, metric: str | None = None, **options: Any) -> Path:
    """Draw the figure named ``kind`` (a key of :data:`FIGURES`, or ``segments``: :func:`plot_segments`
    of a :class:`~receval.segments.SegmentedComparison`, whose other figures draw all users) to
    ``path`` (PNG, SVG or PDF).

    ``metric`` the metric to draw: for ``users`` the metric whose per-user values are drawn
    (default: the comparison's first), for ``at-k`` a metric name before ``@`` (``ndcg``) or a
    spec (``ndcg@10``: its name), for ``differences`` a spec (default: every metric)."""
    if kind == "segments":
        if not hasattr(cmp, "segments"):
            raise SpecError("the segments figure needs a comparison by segment: receval runs ... --segments SPEC")
        return plot_segments(cmp, path, metric=metric, **options)
    if hasattr(cmp, "segments"):  # a comparison by segment: the other figures draw all users
        cmp = cmp.overall
    if kind not in FIGURES:
        raise SpecError(f"unknown figure {kind!r}: choose one of {', '.join(FIGURES)}")
    if kind == "users":
        options.setdefault("metric", cmp.metrics[0] if metric is None else metric)
    elif metric is not None:
        hit = _AT_K.match(metric)
        options["metrics"] = [hit["name"] if kind == "at-k" and hit is not None and metric not in metric_groups(cmp.metrics)
                              else metric]
    return FIGURES[kind](cmp, path, **options)  # type: ignore[operator]


def parse_figure(item: str) -> tuple[str, str | None, str]:
    """A command line's ``--figure`` value: ``KIND=FILE`` or ``KIND:METRIC=FILE`` (``users:ndcg@10=u.png``
    draws the per-user values of ndcg@10) as ``(kind, metric or None, file)``.

    >>> parse_figure("users:ndcg(ideal=hits)@10=u.png"), parse_figure("at-k=k.svg")
    (('users', 'ndcg(ideal=hits)@10', 'u.png'), ('at-k', None, 'k.svg'))
    """
    head, eq, path = item.rpartition("=") if ":" in item.partition("=")[0] else item.partition("=")
    kind, colon, metric = head.partition(":")
    if not eq or kind not in (*FIGURES, "segments") or not path.strip() or (colon and not metric.strip()):
        raise SpecError(f"a figure is written KIND=FILE or KIND:METRIC=FILE with KIND one of {', '.join([*FIGURES, 'segments'])} "
                        f"(e.g. users:ndcg@10=users.png); got {item!r}")
    if not path.lower().endswith(FIGURE_FORMATS):
        raise SpecError(f"a figure file ends in .png, .svg or .pdf; got {path!r}")
    return kind, metric.strip() if colon else None, path


__all__ = ["FIGURES", "write_figure", "parse_figure", "plot_spread", "plot_segments", "plot_metric_at_k", "plot_per_user", "plot_differences", "save_figure", "paper_style",
           "metric_groups", "COLUMN_WIDTH", "FIGURE_FORMATS", "STYLE"]
