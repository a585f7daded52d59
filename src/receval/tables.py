"""Paper-ready tables of a :class:`~receval.comparison.Comparison`: runs x metrics.

Every format shows the same thing: the mean of each run on each metric over the declared user
set, the best value per column in bold (ties: every tied run; the direction of each metric is
``higher_is_better``), significance markers and, on request, confidence intervals. A legend
under the table says what the markers mean (test, correction and level, read from the
signatures) and the footer lists every metric's signature, so the table can be reproduced.

Significance markers follow ranx: every run gets a letter (``a``, ``b``, ...) and a value
carries, as a superscript, the letters of the runs it is significantly better than on that
metric (adjusted p-value below ``alpha`` and the mean difference in the metric's better
direction). With a baseline only the pairs against the baseline are tested, so a run carries
the baseline's letter when it beats it, and the baseline carries the letters of the runs it
beats.

Formats: ``"table"`` (terminal, rich), ``"markdown"``, ``"latex"`` (booktabs), ``"html"`` (one
self-contained document, no external assets), ``"csv"`` (one row per run and metric, full
precision) and ``"json"`` (every number, every paired test and every signature;
:func:`read_json` reads it back). Every user string (run and metric names, titles, signatures)
is escaped for its format where the format writes it, by the escapes of :mod:`receval.report`
(:func:`~receval.report.markdown_text`, :func:`~receval.report.latex_cell`,
:func:`html.escape`, :func:`~receval.report.rich_escape`); a line break in a name stays one
cell. The formats and the file extensions that name them are declared once, in
:data:`receval.report.TABLE_FORMATS`.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import string
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import SpecError
from .report import (
    LATEX_FITS,
    LATEX_SIGNATURES,
    Width,
    break_signature,
    fit_table,
    fmt_num,
    format_extensions,
    formats,
    html_display,
    html_signature,
    html_signatures,
    latex_cell,
    latex_escape,
    latex_float,
    latex_label,
    latex_signature_notes,
    markdown_cell,
    markdown_code,
    markdown_text,
    render,
    resolve_width,
    shared_fields,
    signature_lines,
    wrap_text,
)
from .spec import signature_fields

from .comparison import Comparison, register_html_display
from .outputs import write_output

if TYPE_CHECKING:
    from .comparison import Interval, PairTest

#: the formats of :func:`render_table` and :func:`render_pairs`
FORMATS = formats("comparison")

#: file extension -> format, for :func:`write_table`
EXTENSIONS = format_extensions("comparison")

#: signature keys the statistics may use, by what they hold (first found wins)
_SIG_KEYS = {
    "test": ("test",),
    "correction": ("correction", "corr", "mtc"),
    "alpha": ("alpha",),
    "resamples": ("resamples", "B", "n_resamples"),
    "seed": ("seed",),
    "users": ("userset",),
    "dropped": ("dropped",),
}

#: how the legend says why users were dropped (the signature's ``dropped`` field)
DROPPED_WHY = {"norel": "no relevant item", "novalue": "no value in some run or metric"}

#: how the legend names each test of receval.stats
TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "permutation": "paired randomization test",
              "bootstrap": "paired bootstrap test", "tukey": "Tukey's HSD"}

#: how legends name each interval method
CI_NAMES = {"bca": "BCa bootstrap", "percentile": "percentile bootstrap", "t": "t", "poisson": "Poisson bootstrap"}


def ci_name(method: str) -> str:
    return CI_NAMES.get(method, method)


#: how the legend names each correction
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}

_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))


@dataclass(frozen=True)
class Cell:
    """One rendered cell's content, before formatting."""

    value: float | None
    best: bool
    better_than: tuple[str, ...]  # letters of the runs this value is significantly better than
    ci: Interval | None


@dataclass(frozen=True)
class TableModel:
    """What every format renders: cells, letters, the legend lines and the signatures."""

    runs: list[str]
    metrics: list[str]
    letters: dict[str, str]
    cells: dict[tuple[str, str], Cell]
    alpha: float
    legend: list[str]
    signatures: dict[str, str]


def letters_for(runs: list[str]) -> dict[str, str]:
    """``a``, ``b``, ... ``z``, then ``aa``, ``ab``, ...: one label per run, in run order."""
    abc = string.ascii_lowercase
    out = {}
    for i, r in enumerate(runs):
        label = ""
        n = i
        while True:
            label = abc[n % 26] + label
            n = n // 26 - 1
            if n < 0:
                break
        out[r] = label
    return out


def _stat_field(cmp: Comparison, what: str) -> list[str]:
    """The distinct values of one statistics field across the metrics' signatures."""
    seen: list[str] = []
    for m in cmp.metrics:
        fields = signature_fields(cmp.signatures.get(m, ""))
        for key in _SIG_KEYS[what]:
            if key in fields:
                if fields[key] not in seen:
                    seen.append(fields[key])
                break
    return seen


def significance_level(cmp: Comparison, alpha: float | None = None) -> float:
    """``alpha`` when given, else the ``alpha`` of the signatures, else 0.05."""
    if alpha is not None:
        if not 0 < alpha < 1:
            raise SpecError(f"`alpha` must be between 0 and 1 (e.g. 0.05), got {alpha}")
        return float(alpha)
    found = _stat_field(cmp, "alpha")
    if len(found) > 1:
        raise SpecError(f"the metrics' signatures disagree on alpha ({', '.join(found)}): pass alpha=")
    return float(found[0]) if found else 0.05


def is_significant(t: PairTest, alpha: float) -> bool:
    """The adjusted p-value is below ``alpha`` (NaN, e.g. identical runs, is not)."""
    return not math.isnan(t.p_adjusted) and t.p_adjusted < alpha


def winner(cmp: Comparison, t: PairTest) -> str | None:
    """The run the mean difference favours (``higher_is_better`` of the metric), None on a tie."""
    if t.diff == 0 or math.isnan(t.diff):
        return None
    a_better = (t.diff > 0) == cmp.higher_is_better.get(t.metric, True)
    return t.a if a_better else t.b


def build(cmp: Comparison, *, alpha: float | None = None, ci: bool = False) -> TableModel:
    """The content of the table, shared by every format."""
    level = significance_level(cmp, alpha)
    letters = letters_for(cmp.runs)
    beats: dict[tuple[str, str], list[str]] = {}
    for t in cmp.pairs:
        if t.a not in letters or t.b not in letters or not is_significant(t, level):
            continue
        w = winner(cmp, t)
        if w is not None:
            loser = t.b if w == t.a else t.a
            beats.setdefault((w, t.metric), []).append(loser)
    cells = {}
    for m in cmp.metrics:
        best = set(cmp.best(m))
        for r in cmp.runs:
            v = cmp.values.get((r, m))
            v = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
            losers = sorted(beats.get((r, m), []), key=cmp.runs.index)
            cells[(r, m)] = Cell(v, r in best and v is not None, tuple(letters[x] for x in losers),
                                 cmp.intervals.get((r, m)) if ci else None)
    return TableModel(list(cmp.runs), list(cmp.metrics), letters, cells, level,
                      legend(cmp, level, ci=ci), dict(cmp.signatures))


def legend(cmp: Comparison, alpha: float, *, ci: bool = False) -> list[str]:
    """Plain-text lines explaining the table: best marking, markers, intervals, users."""
    lines = []
    lower = [m for m in cmp.metrics if not cmp.higher_is_better.get(m, True)]
    best = "Bold: the best value per column (every run when tied)"
    best += f"; lower is better for {', '.join(lower)}." if lower else "."
    lines.append(best)
    letters = letters_for(cmp.runs)
    if cmp.pairs:
        tests = _stat_field(cmp, "test") or sorted({t.test for t in cmp.pairs})
        corrections = _stat_field(cmp, "correction") or sorted({t.correction for t in cmp.pairs})
        family = cmp.family or len(cmp.pairs)  # receval.segments: every segment's tests too
        scope = f"against the baseline {cmp.baseline}" if cmp.baseline else "between all pairs of runs"
        runs = ", ".join(f"{letters[r]} = {r}" for r in cmp.runs)
        if any(t.test == "tukey" for t in cmp.pairs):  # the HSD adjusts for its own family
            corrections = sorted({t.correction for t in cmp.pairs})
        corr = ", ".join(CORRECTION_NAMES.get(c, c) for c in corrections)
        corr_text = ("no multiple-testing correction" if corr == "none" else
                     "Tukey's family-wise adjustment" if corr == "tukey" else f"{corr} correction")
        lines.append(
            f"Superscript letters ({runs}): significantly better than that run, "
            f"{', '.join(TEST_NAMES.get(t, t + ' test') for t in tests)} {scope}, {corr_text} over {family} comparison{'' if family == 1 else 's'}, "
            f"adjusted p < {alpha:g}."
        )
        resamples, seeds = _stat_field(cmp, "resamples"), _stat_field(cmp, "seed")
        if resamples or seeds:
            lines.append("Resampling: " + "; ".join(
                x for x in (f"{', '.join(resamples)} resamples" if resamples else "",
                            f"seed {', '.join(seeds)}" if seeds else "") if x) + ".")
    else:
        lines.append("No paired tests: no significance markers.")
    if ci:
        kinds = sorted({(iv.method, iv.level) for iv in cmp.intervals.values()})
        if kinds:
            lines.append("Brackets: " + "; ".join(f"{lv * 100:g}% {ci_name(meth)} confidence interval" for meth, lv in kinds) + ".")
    declared = _stat_field(cmp, "users")
    which = f" (user set: {', '.join(declared)})" if declared else ""
    dropped = getattr(cmp, "dropped", 0)
    if dropped:
        why = ", ".join(DROPPED_WHY.get(w, w) for w in _stat_field(cmp, "dropped"))
        which += f", {dropped} of {cmp.users + dropped} dropped" + (f" ({why})" if why else "")
    lines.append(f"Every run evaluated on the same {cmp.users} {cmp.unit}{which}; signatures below reproduce each column.")
    partial = partial_runs(cmp.with_recs)
    if partial:
        lines.append(partial)
    return lines


def partial_runs(with_recs: dict[str, tuple[int, int]]) -> str | None:
    """The line "Users with recommendations: ..." when some run lacks some truth users (None
    otherwise): those users score 0 there (``norecs=zero``)."""
    if not any(n < total for n, total in with_recs.values()):
        return None
    runs = ", ".join(f"{name} {n} of {total}" for name, (n, total) in with_recs.items())
    return f"Users with recommendations: {runs}; a truth user without any scores 0 there (norecs=zero)."


# -- formats -------------------------------------------------------------------------------


def _num(v: float | None, digits: int) -> str:
    """``digits`` significant digits (:func:`receval.report.fmt_num`), the rule of every format."""
    return fmt_num(v, digits)


def _ci_text(iv: Interval | None, digits: int) -> str:
    return "" if iv is None else f"[{fmt_num(iv.low, digits)}, {fmt_num(iv.high, digits)}]"


def render_table(cmp: Comparison, fmt: str = "table", *, alpha: float | None = None, ci: bool = False,
                 digits: int = 4, title: str = "", standalone: bool = False, width: Width = "terminal",
                 label: str | None = None, fit: str = "shrink", signatures: str = "short") -> str:
    r"""Render ``cmp`` as ``fmt`` (one of :data:`FORMATS`).

    ``alpha`` the significance level of the markers (default: the signatures' ``alpha``, else
    0.05); ``ci`` show each value's confidence interval; ``digits`` decimals shown (CSV and
    JSON keep full precision); ``title`` a caption.

    ``width`` (terminal format): the columns the table fits, ``"terminal"`` (default:
    ``COLUMNS``, else the terminal's width, else no limit; :func:`receval.report.terminal_width`)
    or ``None`` (no limit). A table too wide puts each interval under its value, then splits
    the metrics into blocks that repeat the run column; the legend wraps and the signatures
    take their short form (:func:`receval.report.signature_lines`).

    LaTeX: a ``table`` float with a ``\caption`` (``title``, else a default) and a
    ``\label`` (``label``: ``"tab:main"``; a name without a ``:`` gets ``tab:`` in front;
    default ``tab:`` and the title's words, else ``tab:receval-runs``); ``fit`` one of
    :data:`LATEX_FITS` (default ``"shrink"``: ``\resizebox`` to ``\linewidth`` only when
    wider); ``signatures`` one of :data:`LATEX_SIGNATURES` (default ``"short"``: under the
    table, each column's own fields then ``\dots``, and the fields they all end with once, so no
    line carries a whole 300-character signature). It needs ``\usepackage{booktabs,graphicx}``;
    ``standalone`` gives a whole document that compiles with pdflatex. ``signatures="full"``
    writes every signature whole in the terminal format too (JSON always keeps them whole).
    ``digits``: significant digits (:func:`receval.report.fmt_num`), the same in every format.
    """
    if fmt not in FORMATS:
        raise SpecError(f"unknown table format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if digits < 0:
        raise SpecError(f"`digits` must be 0 or more, got {digits}")
    if fit not in LATEX_FITS:
        raise SpecError(f"unknown LaTeX fit {fit!r}: choose one of {', '.join(LATEX_FITS)}")
    if signatures not in LATEX_SIGNATURES:
        raise SpecError(f"unknown signature form {signatures!r}: choose one of {', '.join(LATEX_SIGNATURES)}")
    model = build(cmp, alpha=alpha, ci=ci)
    if fmt == "json":
        return _json(cmp, model)
    if fmt == "csv":
        return _csv(cmp, model)
    if fmt == "markdown":
        return _markdown(model, digits, title)
    if fmt == "latex":
        return _latex(model, digits, title, standalone, label=latex_label(label, title, "tab:receval-runs"), fit=fit,
                      short=signatures == "short")
    if fmt == "html":
        return _html(model, digits, title)
    return _rich(model, digits, title, resolve_width(width), full=signatures == "full")



def write_table(cmp: Comparison, path: str | Path, *, fmt: str | None = None, **options: Any) -> Path:
    """Write the table to ``path``; the format follows the extension (``.md``, ``.tex``,
    ``.html``, ``.csv``, ``.json``, ``.txt``) unless ``fmt`` is given."""
    path = Path(path)
    if fmt is None:
        fmt = EXTENSIONS.get(path.suffix.lower())
        if fmt is None:
            raise SpecError(f"cannot tell the table format from {path.name!r}: use one of "
                            f"{', '.join(EXTENSIONS)} or pass fmt=")
    options.setdefault("width", None)  # a file is never laid out for the terminal it was written from
    write_output(path, render_table(cmp, fmt, **options), "table")  # whole or not at all
    return path


PAIR_HEADERS = ["metric", "a", "b", "mean a-b", "ci low", "ci high", "p", "p adjusted", "significant",
                "effect", "wins", "ties", "losses", "test", "correction"]


def pair_rows(cmp: Comparison, *, alpha: float | None = None) -> list[list[Any]]:
    """One row per paired test, in the order of :data:`PAIR_HEADERS` (numbers unrounded)."""
    level = significance_level(cmp, alpha)
    return [[t.metric, t.a, t.b, t.diff, t.ci.low if t.ci else None, t.ci.high if t.ci else None, t.p,
             t.p_adjusted, "yes" if is_significant(t, level) else "no", t.effect, t.wins, t.ties, t.losses, t.test,
             t.correction] for t in cmp.pairs]


def render_pairs(cmp: Comparison, fmt: str = "table", *, alpha: float | None = None, digits: int = 4,
                 width: Width = "terminal", label: str | None = None, fit: str = "shrink") -> str:
    """Every paired test as a table: the mean difference a − b with its interval, raw and adjusted
    p-values, whether it is significant at ``alpha``, the effect size (its name in the header),
    win/tie/loss counts, the test and the correction. Same formats as :func:`render_table`;
    ``width`` as there (a terminal table too wide is split into blocks repeating the metric
    and the two runs). The terminal and LaTeX tables are compact (only the columns that vary;
    the constants in a note); LaTeX: a ``table`` float with ``label`` (default
    ``tab:receval-pairs``) fitted as ``fit`` (:data:`LATEX_FITS`)."""
    if fmt not in FORMATS:
        raise SpecError(f"unknown table format {fmt!r}: choose one of {', '.join(FORMATS)}")
    effect = sorted({t.effect_name for t in cmp.pairs})
    headers = [h if h != "effect" else f"effect ({', '.join(effect) or '-'})" for h in PAIR_HEADERS]
    rows = pair_rows(cmp, alpha=alpha)
    if fmt == "json":
        return json.dumps([dict(zip(PAIR_HEADERS, (_jnum(v) if isinstance(v, float) else v for v in r)),
                                effect_name=t.effect_name) for r, t in zip(rows, cmp.pairs)], indent=2, allow_nan=False)
    if fmt == "csv":
        return render(headers, [[repr(v) if isinstance(v, float) else v for v in r] for r in rows], "csv")
    if fmt == "markdown":
        # the names (metric, runs, test, correction) escaped; the numbers as written
        cells = [[_pvalue(v, digits) if i in (6, 7) else markdown_text(v) if isinstance(v, str) else _pair_num(v, digits)
                  for i, v in enumerate(r)] for r in rows]
        head = [markdown_cell(h) for h in headers]
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in headers) + "|"]
                         + ["| " + " | ".join(r) + " |" for r in cells]) + "\n"
    if fmt == "html":
        e = html.escape
        body = "".join("<tr>" + "".join(f"<td>{e(_pvalue(v, digits) if i in (6, 7) else _pair_num(v, digits))}</td>"
                                        for i, v in enumerate(r)) + "</tr>\n" for r in rows)
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>paired tests</title>\n"
                f"<style>{_CSS}</style>\n</head>\n<body>\n<table>\n<thead><tr>"
                + "".join(f"<th>{e(h)}</th>" for h in headers) + "</tr></thead>\n<tbody>\n" + body
                + "</tbody>\n</table>\n</body>\n</html>\n")
    if fmt == "table":
        return _compact_pairs(cmp, rows, digits, width, effect, significance_level(cmp, alpha))
    if fmt == "latex":
        if fit not in LATEX_FITS:
            raise SpecError(f"unknown LaTeX fit {fit!r}: choose one of {', '.join(LATEX_FITS)}")
        return _latex_pairs(cmp, rows, digits, effect, significance_level(cmp, alpha),
                            label=latex_label(label, "", "tab:receval-pairs"), fit=fit)
    # report.render shows user text as written (escaped, on one line) in every format
    small = [[_pvalue(v, digits) if i in (6, 7) else _pair_num(v, digits) for i, v in enumerate(r)] for r in rows]
    return render(headers, small, fmt, digits=digits, width=width, keys=3)


def _pair_num(v: Any, digits: int) -> str:
    return fmt_num(v, digits) if isinstance(v, float) or v is None else str(v)


def _compact_columns(cmp: Comparison, rows: list[list[Any]], digits: int, effect: list[str],
                     alpha: float) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The compact pair table's columns (only those that vary) and its note's parts: the
    interval beside the difference, a star on a significant adjusted p-value, wins/ties/losses
    in one column; a column of one value (the test, the correction) said once in the note."""
    cols: list[tuple[str, list[str]]] = [("metric", [r[0] for r in rows]), ("a", [r[1] for r in rows]),
                                         ("b", [r[2] for r in rows]), ("a−b", [_pair_num(r[3], digits) for r in rows])]
    if any(r[4] is not None for r in rows):
        levels = sorted({t.ci.level for t in cmp.pairs if t.ci is not None})
        head = f"{levels[0] * 100:g}% CI" if len(levels) == 1 else "CI"
        cols.append((head, ["–" if r[4] is None else f"[{_pair_num(r[4], digits)}, {_pair_num(r[5], digits)}]"
                            for r in rows]))
    cols.append(("p adj.", [_pvalue(r[7], digits) + ("*" if r[8] == "yes" else "") for r in rows]))
    cols.append(("d_z" if effect == ["cohen_dz"] else "effect", [_pair_num(r[9], digits) for r in rows]))
    cols.append(("W/T/L", [f"{r[10]}/{r[11]}/{r[12]}" for r in rows]))
    notes = []
    for i, (name, names) in ((13, ("test", TEST_NAMES)), (14, ("correction", CORRECTION_NAMES))):
        values = sorted({r[i] for r in rows})
        if len(values) == 1:
            notes.append(f"{name}: {names.get(values[0], values[0])}")
        else:
            cols.append((name, [r[i] for r in rows]))
    notes.append(f"*: adjusted p < {alpha:g}")
    if any(h == "d_z" for h, _ in cols):
        notes.append("d_z: Cohen's d_z")
    notes.append(f"W/T/L: {cmp.unit} on which a wins/ties/loses against b; the raw p-values in --format csv or json")
    return cols, notes


def _compact_pairs(cmp: Comparison, rows: list[list[Any]], digits: int, width: Width, effect: list[str],
                   alpha: float) -> str:
    """The terminal's pair table (:func:`_compact_columns`) and its note."""
    cols, notes = _compact_columns(cmp, rows, digits, effect, alpha)
    text = render([c for c, _ in cols], [list(x) for x in zip(*(v for _, v in cols))], "table", width=width, keys=3)
    w = resolve_width(width)
    return text + "\n".join(wrap_text("Paired tests; " + "; ".join(notes) + ".", w)) + "\n"


def html_pairs(cmp: Comparison, *, alpha: float | None = None, digits: int = 4) -> str:
    """The report page's pair table: the compact columns (:func:`_compact_columns`: only those
    that vary, the interval beside the difference) as an HTML ``<table>``, the constants in the
    note under it; ``--format html`` keeps every column (:func:`render_pairs`)."""
    e = html.escape
    effect = sorted({t.effect_name for t in cmp.pairs})
    cols, notes = _compact_columns(cmp, pair_rows(cmp, alpha=alpha), digits, effect, significance_level(cmp, alpha))
    head = "".join(f"<th>{e(c)}</th>" for c, _ in cols)
    body = "".join("<tr>" + "".join(f"<td>{e(v)}</td>" for v in row) + "</tr>\n" for row in zip(*(v for _, v in cols)))
    return (f"<table class=\"pairs\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n"
            f'<p class="note">{e("Paired tests; " + "; ".join(notes) + ".")}</p>')


def _latex_pairs(cmp: Comparison, rows: list[list[Any]], digits: int, effect: list[str], alpha: float, *,
                 label: str, fit: str) -> str:
    r"""The pair table as a LaTeX ``table`` float that fits the column (``fit``, as
    :func:`render_table`): the compact columns, the constants in the note under it."""
    cols, notes = _compact_columns(cmp, rows, digits, effect, alpha)
    cols = [("a-b" if c == "a−b" else c, v) for c, v in cols]  # pdflatex: no Unicode minus
    body = render([c for c, _ in cols], [list(x) for x in zip(*(v for _, v in cols))], "latex").splitlines()
    return latex_float(body, caption=f"Paired tests: {len(rows)} comparison{'s' * (len(rows) != 1)}.", label=label,
                       fit=fit, notes=[latex_cell("Paired tests; " + "; ".join(notes) + ".") + r"\par"],
                       standalone=False)


def _pvalue(p: float, digits: int) -> str:
    """A p-value as shown: ``< 0.0001`` below what ``digits`` decimals can show."""
    if math.isnan(p):
        return "–"
    return f"< {10 ** -digits:.{digits}f}" if p < 10 ** -digits else f"{p:.{digits}f}"


def _rich(model: TableModel, digits: int, title: str, width: int | None, full: bool = False) -> str:
    from rich.text import Text

    has_ci = any(c.ci is not None for c in model.cells.values())

    def cell(c: Cell, stacked: bool) -> Text:
        t = Text(_num(c.value, digits) + ("*" if c.best else ""), style="bold" if c.best else "")
        if c.better_than:
            t.append("".join(_sup(x) for x in c.better_than))
        if c.ci is not None:
            t.append(("\n" if stacked else " ") + _ci_text(c.ci, digits), style="dim")
        return t

    def table(stacked: bool, limit: int | None) -> str:
        rows = [[Text(f"{r} ({model.letters[r]})")] + [cell(model.cells[(r, m)], stacked) for m in model.metrics]
                for r in model.runs]
        return fit_table(["run", *model.metrics], rows, width=limit, title=title, keys=1,
                         right=[False] + [True] * len(model.metrics), wrap=[True] + [False] * len(model.metrics))

    text = table(False, None)
    if width is not None and max(_line_width(x) for x in text.splitlines()) > width:
        # narrower: each interval under its value, then blocks of metrics repeating the run column
        text = table(has_ci, width)
    # plain text has no bold: the best value also carries a star
    lines = []
    for line in ["* (bold)" + model.legend[0].removeprefix("Bold"), *model.legend[1:]]:
        lines += wrap_text(line, width)
    sigs = [model.signatures[m] for m in model.metrics if m in model.signatures]
    if full:  # each whole, broken after a '|' to fit
        lines += [x for sig in sigs for x in break_signature(sig, width)]
    else:
        lines += signature_lines(sigs, width)
    return text + "\n".join(lines) + "\n"


def _line_width(line: str) -> int:
    from rich.cells import cell_len

    return cell_len(line)


def _sup(letters: str) -> str:
    """Unicode superscript of a run letter (``q`` has none: shown as ``^q``)."""
    return "".join(_SUPERSCRIPT.get(ch, "^" + ch) for ch in letters)


def _markdown(model: TableModel, digits: int, title: str) -> str:
    lines = []
    if title:
        lines += [f"**{markdown_text(title)}**", ""]
    lines.append("| run | " + " | ".join(markdown_text(m) for m in model.metrics) + " |")
    lines.append("|:---|" + "|".join("---:" for _ in model.metrics) + "|")
    for r in model.runs:
        cells = []
        for m in model.metrics:
            c = model.cells[(r, m)]
            s = _num(c.value, digits)
            if c.best:
                s = f"**{s}**"
            if c.better_than:
                s += "<sup>" + ",".join(c.better_than) + "</sup>"
            if c.ci is not None:
                s += " " + _ci_text(c.ci, digits)
            cells.append(s)
        lines.append(f"| {markdown_text(r)} ({model.letters[r]}) | " + " | ".join(cells) + " |")
    lines.append("")
    lines += [markdown_text(x) + "  " for x in model.legend]
    lines.append("")
    lines += [f"- {markdown_code(model.signatures[m])}" for m in model.metrics if m in model.signatures]
    return "\n".join(lines) + "\n"



def _latex(model: TableModel, digits: int, title: str, standalone: bool, *, label: str = "tab:receval-runs",
           fit: str = "shrink", short: bool = True) -> str:
    lines = [r"\begin{tabular}{l" + "r" * len(model.metrics) + "}"]
    lines.append(r"\toprule")
    lines.append("Run & " + " & ".join(latex_cell(m) for m in model.metrics) + r" \\")
    lines.append(r"\midrule")
    has_ci = any(model.cells[(r, m)].ci is not None for r in model.runs for m in model.metrics)
    for r in model.runs:
        cells = []
        for m in model.metrics:
            c = model.cells[(r, m)]
            s = "--" if c.value is None else fmt_num(c.value, digits)
            if c.best:
                s = r"\textbf{" + s + "}"
            if c.better_than:
                s += r"\textsuperscript{" + ",".join(c.better_than) + "}"
            cells.append(s)
        lines.append(latex_cell(r) + r"\textsuperscript{(" + model.letters[r] + ")} & " + " & ".join(cells) + r" \\")
        if has_ci:  # the intervals on a row of their own: a column stays as narrow as its value
            cis = [r"{\scriptsize " + latex_escape(_ci_text(model.cells[(r, m)].ci, digits)) + "}" for m in model.metrics]
            lines.append(" & " + " & ".join(cis) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = [latex_cell(x) + r"\par" for x in model.legend]
    notes += latex_signature_notes([model.signatures[m] for m in model.metrics if m in model.signatures], short)
    caption = title or f"{len(model.runs)} runs on {len(model.metrics)} metrics; notes below the table."
    return latex_float(lines, caption=caption, label=label, fit=fit, notes=notes, standalone=standalone)


_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#111}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
caption{font-weight:600;text-align:left;padding-bottom:.4em}
th,td{padding:.25em .7em;text-align:right}th:first-child,td:first-child{text-align:left}
thead th{border-top:2px solid #111;border-bottom:1px solid #111}
tbody tr:last-child td{border-bottom:2px solid #111}
.best{font-weight:700}.ci{color:#555;font-size:.85em}
.legend{font-size:.85em;max-width:60em}.sig{font-family:ui-monospace,monospace;font-size:.8em;word-break:break-all}"""


def _html(model: TableModel, digits: int, title: str) -> str:
    e = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{e(title or 'receval comparison')}</title>", f"<style>{_CSS}</style>", "</head>", "<body>"]
    out += html_table(model, digits, title)
    out += ['<div class="legend">']
    out += [f"<p>{e(x)}</p>" for x in model.legend]
    out += [f'<p class="sig">{e(model.signatures[m])}</p>' for m in model.metrics if m in model.signatures]
    out += ["</div>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def html_table(model: TableModel, digits: int, title: str = "", signatures: bool = False) -> list[str]:
    """The ``<table>`` of a comparison as HTML lines, every user string escaped;
    ``signatures``: each metric's header carries its signature as a tooltip."""
    e = html.escape
    out = ["<table>"]
    if title:
        out.append(f"<caption>{e(title)}</caption>")
    heads = "".join(f'<th title="{e(model.signatures[m])}">{e(m)}</th>' if signatures and m in model.signatures
                    else f"<th>{e(m)}</th>" for m in model.metrics)
    out.append("<thead><tr><th>run</th>" + heads + "</tr></thead>")
    out.append("<tbody>")
    for r in model.runs:
        tds = []
        for m in model.metrics:
            c = model.cells[(r, m)]
            s = e(_num(c.value, digits))
            if c.best:
                s = f'<span class="best">{s}</span>'
            if c.better_than:
                s += "<sup>" + ",".join(c.better_than) + "</sup>"
            if c.ci is not None:
                s += f' <span class="ci">{e(_ci_text(c.ci, digits))}</span>'
            tds.append(f"<td>{s}</td>")
        out.append(f"<tr><td>{e(r)} <sup>({model.letters[r]})</sup></td>" + "".join(tds) + "</tr>")
    out += ["</tbody>", "</table>"]
    return out


def _csv(cmp: Comparison, model: TableModel) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "letter", "metric", "value", "ci_low", "ci_high", "ci_method", "ci_level", "best",
                "better_than", "higher_is_better", "signature"])
    for r in model.runs:
        for m in model.metrics:
            c = model.cells[(r, m)]
            iv = cmp.intervals.get((r, m))
            w.writerow([r, model.letters[r], m, "" if c.value is None else repr(c.value),
                        "" if iv is None else repr(iv.low), "" if iv is None else repr(iv.high),
                        "" if iv is None else iv.method, "" if iv is None else repr(iv.level),
                        int(c.best), " ".join(c.better_than), int(cmp.higher_is_better.get(m, True)),
                        cmp.signatures.get(m, "")])
    return buf.getvalue()


def _jnum(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) else float(v)


def _json(cmp: Comparison, model: TableModel) -> str:
    def interval(iv: Interval | None) -> dict[str, Any] | None:
        return None if iv is None else {"low": _jnum(iv.low), "high": _jnum(iv.high), "method": iv.method,
                                        "level": iv.level}

    pairs = []
    for t in cmp.pairs:
        d = asdict(t)
        d.update(diff=_jnum(t.diff), p=_jnum(t.p), p_adjusted=_jnum(t.p_adjusted), effect=_jnum(t.effect),
                 ci=interval(t.ci), significant=is_significant(t, model.alpha))
        pairs.append(d)
    doc = {
        "runs": model.runs,
        "letters": model.letters,
        "metrics": model.metrics,
        "users": cmp.users,
        "baseline": cmp.baseline,
        "alpha": model.alpha,
        "higher_is_better": {m: cmp.higher_is_better.get(m, True) for m in model.metrics},
        "signatures": model.signatures,
        "values": [
            {"run": r, "metric": m, "value": model.cells[(r, m)].value,
             "ci": interval(cmp.intervals.get((r, m))), "best": model.cells[(r, m)].best,
             "better_than": [x for x in cmp.runs if model.letters[x] in model.cells[(r, m)].better_than]}
            for r in model.runs for m in model.metrics
        ],
        "pairs": pairs,
        "legend": model.legend,
    }
    return json.dumps(doc, indent=2, allow_nan=False)


def _f(v: float | None) -> float:
    return math.nan if v is None else float(v)



def comparison_html(cmp: Comparison) -> str:
    """The notebook display: the table of :func:`receval.tables.render_table` (best values
    in bold, significance letters, intervals), its legend, each metric's signature as its
    header's tooltip (and whole in a ``<details>`` element) and the paired tests."""
    import html

    esc = html.escape
    model = build(cmp, ci=bool(cmp.intervals))
    sigs = [cmp.signatures[m] for m in cmp.metrics if m in cmp.signatures]
    _, shared = shared_fields(sigs)
    body = html_table(model, 4, f"{len(cmp.runs)} runs on {cmp.users} paired users", signatures=True)
    body += [f'<p class="note">{esc(x)}</p>' for x in model.legend]
    body.append('<p class="note">signatures: ' + ", ".join(html_signature(s, shared) for s in sigs) + "</p>")
    body.append(html_signatures(sigs))
    if cmp.pairs:
        rows = "".join(
            f"<tr><td>{esc(t.metric)}</td><td>{esc(t.a)}</td><td>{esc(t.b)}</td><td>{_cmp_fmt(t.diff)}</td>"
            f"<td>{'–' if t.ci is None else f'[{_cmp_fmt(t.ci.low)}, {_cmp_fmt(t.ci.high)}]'}</td><td>{_cmp_fmt(t.p_adjusted)}</td>"
            f"<td>{'yes' if is_significant(t, model.alpha) else 'no'}</td><td>{t.wins}/{t.ties}/{t.losses}</td></tr>"
            for t in cmp.pairs)
        body.append(f"<details><summary>paired tests ({len(cmp.pairs)})</summary><table><thead><tr><th>metric</th>"
                    "<th>a</th><th>b</th><th>mean a−b</th><th>interval</th><th>p adjusted</th><th>significant</th>"
                    f"<th>wins/ties/losses</th></tr></thead><tbody>{rows}</tbody></table></details>")
    return html_display(body)


def _cmp_fmt(v: float | None, digits: int = 4) -> str:
    return fmt_num(v, digits)


register_html_display(comparison_html)  # Comparison._repr_html_ draws through it

__all__ = ["FORMATS", "LATEX_FITS", "LATEX_SIGNATURES", "latex_label", "render_table", "write_table", "render_pairs", "html_pairs", "pair_rows", "PAIR_HEADERS", "build", "legend", "partial_runs", "latex_escape",
           "letters_for", "signature_fields", "significance_level", "is_significant", "winner"]
