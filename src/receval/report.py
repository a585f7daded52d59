"""Tables in several formats: terminal (rich), Markdown, LaTeX, HTML, CSV, JSON.

The formats are declared once, in :data:`TABLE_FORMATS`: each format's renderers (:func:`render`
for rows of cells, :func:`receval.tables.render_table` for a comparison of runs), the commands
whose ``--format`` offers it (:func:`command_formats`, read by the command line) and the file
extensions that name it. The escaping of user text (run and metric names, ids, signatures) in
each format is here too: :func:`one_line_cell`, :func:`markdown_cell`, :func:`markdown_text`,
:func:`markdown_code`, :func:`latex_escape`, :func:`latex_cell`, :func:`rich_escape`.

**Widths.** A terminal table fits the width it is given (:func:`terminal_width`: ``COLUMNS``
when set, else the terminal's width, else no limit: output piped to a file or another program
is never wrapped). A table wider than that is laid out narrower, in this order: long text
columns wrap; the columns are split into blocks that repeat the first (key) columns; at last
each row is stacked as ``header: value`` lines. Signatures under a table are printed whole
when they fit, else in their short form (:func:`signature_lines`): the fields every signature
ends with written once (``…``), each line broken after a ``|``, which
:func:`receval.parse_signature` reads back whole (the spaces around a field are ignored).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from .errors import SpecError

if TYPE_CHECKING:  # pragma: no cover
    from rich.text import Text


class TableFormat(NamedTuple):
    """One output format of a table (a named tuple: no dataclass import for ``receval --version``)."""

    name: str
    doc: str
    #: what writes it: ``"rows"`` :func:`render` (rows of cells), ``"comparison"``
    #: :func:`receval.tables.render_table` and :func:`~receval.tables.render_pairs`; none: the
    #: one command that offers it writes it itself
    renderers: tuple[str, ...]
    #: the commands whose ``--format`` offers it
    commands: tuple[str, ...]
    #: file extensions that name it (``receval runs --out``, the files of ``receval reproduce``)
    extensions: tuple[str, ...] = ()


_BOTH = ("rows", "comparison")

#: every table format, in the order a command lists its choices
TABLE_FORMATS: dict[str, TableFormat] = {f.name: f for f in (
    TableFormat("table", "the terminal: aligned columns (rich)", _BOTH,
                ("evaluate", "runs", "compare", "metrics", "dialects", "verify", "ope"), (".txt",)),
    TableFormat("markdown", "a Markdown table", _BOTH, ("evaluate", "runs", "compare", "metrics", "dialects", "verify", "ope"), (".md",)),
    TableFormat("latex", "a booktabs tabular", _BOTH, ("evaluate", "runs", "compare", "ope"), (".tex",)),
    TableFormat("html", "one self-contained HTML document", ("comparison",), ("runs",), (".html", ".htm")),
    TableFormat("csv", "comma-separated values, full precision", _BOTH, ("evaluate", "runs", "compare", "ope"), (".csv",)),
    TableFormat("json", "every number and signature", _BOTH, ("evaluate", "runs", "compare", "dialects", "verify", "ope"), (".json",)),
    TableFormat("trec", "trec_eval's summary lines: measure, all, value", (), ("evaluate",)),
)}


def formats(renderer: str) -> tuple[str, ...]:
    """The formats ``renderer`` (``"rows"`` or ``"comparison"``) writes.

    >>> formats("rows")
    ('table', 'markdown', 'latex', 'csv', 'json')
    """
    return tuple(name for name, f in TABLE_FORMATS.items() if renderer in f.renderers)


def command_formats(command: str) -> tuple[str, ...]:
    """The ``--format`` choices of ``command``.

    >>> command_formats("verify")
    ('table', 'markdown', 'json')
    """
    return tuple(name for name, f in TABLE_FORMATS.items() if command in f.commands)


def format_extensions(renderer: str) -> dict[str, str]:
    """File extension -> format, for the formats ``renderer`` writes."""
    return {ext: name for name in formats(renderer) for ext in TABLE_FORMATS[name].extensions}


#: the formats :func:`render` writes
FORMATS = formats("rows")

#: how ``render_table(fmt="latex")`` fits the page: ``"shrink"`` scales the table down to
#: ``\linewidth`` only when it is wider, ``"linewidth"`` always to ``\linewidth``, ``"none"``
#: leaves it at its natural width
LATEX_FITS = ("shrink", "linewidth", "none")

#: how a LaTeX table shows the signatures: ``"short"`` each column's own fields and the shared
#: fields once (:func:`receval.report.shared_fields`), ``"full"`` every signature whole
LATEX_SIGNATURES = ("short", "full")


def fmt_value(v: Any, digits: int = 4) -> str:
    """A table cell as printed: a float with ``digits`` significant digits (:func:`fmt_num`,
    the rule of every table), None or NaN an en dash, anything else as its text.

    >>> fmt_value(0.000123456), fmt_value(0.98765), fmt_value(12), fmt_value(None)
    ('0.0001235', '0.9877', '12', '–')
    """
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float) or getattr(getattr(v, "dtype", None), "kind", "") == "f":  # numpy's float32 too
        return fmt_num(float(v), digits)
    return str(v)


def fmt_num(v: float | None, digits: int = 4) -> str:
    """A number with ``digits`` significant digits, the rule of every table and figure label:
    trailing zeros kept (a column reads evenly), never rounded to 0 (``0.0001234`` stays
    ``0.0001234``), whole numbers from ``10**digits`` up; None or NaN an en dash.

    >>> fmt_num(0.23814), fmt_num(0.1), fmt_num(0.00012345), fmt_num(-12.3456), fmt_num(123456.7), fmt_num(0.0)
    ('0.2381', '0.1000', '0.0001234', '-12.35', '123457', '0.000')
    """
    if v is None or v != v:
        return "–"
    v = float(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if abs(v) >= 10 ** digits:
        return f"{v:.0f}"
    return f"{v:#.{max(1, digits)}g}".rstrip(".")


#: a table's width: columns, ``None`` (no limit) or ``"terminal"`` (:func:`terminal_width`, read when rendering)
Width = int | None | Literal["terminal"]


def terminal_width() -> int | None:
    """The width terminal tables fit: ``COLUMNS`` when it is set to a number (even when the
    output is not a terminal: ``COLUMNS=80 receval runs ... > table.txt``), else the width of
    the terminal stdout is, else ``None`` (not a terminal: no limit, nothing is wrapped). A
    width below :data:`MIN_WIDTH` is taken as :data:`MIN_WIDTH`."""
    text = os.environ.get("COLUMNS", "").strip()
    if text.isdigit() and int(text) > 0:
        return max(int(text), MIN_WIDTH)
    stream = sys.stdout
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a closed or exotic stream
        tty = False
    if not tty:
        return None
    return max(shutil.get_terminal_size((100, 24)).columns, MIN_WIDTH)


#: the narrowest width a table is laid out for (a narrower terminal wraps what it must)
MIN_WIDTH = 40


def resolve_width(width: Width) -> int | None:
    """``width`` as columns: ``"terminal"`` read now (:func:`terminal_width`), a number
    checked."""
    if width == "terminal":
        return terminal_width()
    if width is None:
        return None
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise SpecError(f"`width` must be a number of columns (e.g. 80), None (no limit) or 'terminal', got {width!r}")
    return max(width, MIN_WIDTH)


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, *, title: str = "", digits: int = 4,
           width: Width = "terminal", keys: int = 1) -> str:
    """Render a table; numbers with ``digits`` significant digits (:func:`fmt_value`), the same
    in every format but CSV and JSON (full precision), None as an en dash.

    ``width`` (the terminal format only): the columns the table fits (:func:`terminal_width`
    by default; ``None``: no limit); ``keys`` the leading columns that name a row, repeated
    in every block when the columns are split to fit."""
    if fmt == "json":
        return json.dumps([dict(zip(headers, r)) for r in rows], indent=2)
    cells = [[fmt_value(v, digits) for v in r] for r in rows]
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(headers)
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
        return buf.getvalue()
    # user text (run names, paths, ids) in a cell is shown as written, on one line, whatever
    # it holds: a line break or a '|' cannot break a Markdown row, nor '$' a LaTeX one, nor
    # '[bold]' turn into rich markup
    if fmt == "markdown":
        lines = ["| " + " | ".join(markdown_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(markdown_cell(v) for v in c) + " |" for c in cells]
        return "\n".join(lines) + "\n"
    if fmt == "latex":
        lines = [r"\begin{tabular}{l" + "r" * (len(headers) - 1) + "}", r"\toprule"]
        lines.append(" & ".join(latex_cell(h) for h in headers) + r" \\")
        lines.append(r"\midrule")
        lines += [" & ".join(latex_cell(c) for c in r) + r" \\" for r in cells]
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines) + "\n"
    return _rich([one_line_cell(h) for h in headers], [[one_line_cell(c) for c in r] for r in cells], title,
                 resolve_width(width), keys)


#: what a text editor or terminal takes for a line break
LINE_BREAKS = ("\r\n", "\r", "\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def one_line_cell(s: object, sep: str = " ") -> str:
    r"""``s`` with every line break as ``sep`` and other control characters as spaces.

    >>> one_line_cell("a\r\nb\x00c", "<br>")
    'a<br>b c'
    """
    s = str(s)
    for br in LINE_BREAKS:
        s = s.replace(br, "\n")
    return "".join(sep if ch == "\n" else " " if not ch.isprintable() and ch != "\t" else ch for ch in s)


def short_fingerprint(fp: str | None, digits: int = 12) -> str:
    """A fingerprint (:mod:`receval.fingerprint`) cut to its version and ``digits`` hex digits.

    >>> short_fingerprint("rf1:0123456789abcdef0123456789abcdef")
    'rf1:0123456789ab'
    """
    if not fp:
        return "–"
    version, _, digest = fp.partition(":")
    return f"{version}:{digest[:digits]}"


def fingerprint_footer(fingerprints: Mapping[str, str], fmt: str) -> str:
    """The line under a table that names the data: each input's short fingerprint (the JSON
    output carries them whole); empty for csv and json, or without fingerprints.

    >>> fps = {"recs": "rf1:0123456789abcdef0123456789abcdef", "truth": "rf1:fedcba9876543210fedcba9876543210"}
    >>> print(fingerprint_footer(fps, "table"), end="")
    data: recs rf1:0123456789ab, truth rf1:fedcba987654
    >>> print(fingerprint_footer(fps, "markdown"), end="")
    <BLANKLINE>
    _Data: recs `rf1:0123456789ab`, truth `rf1:fedcba987654` (content fingerprints; `receval verify` checks them)._
    """
    if not fingerprints or fmt not in ("table", "markdown", "latex"):
        return ""
    if fmt == "markdown":
        names = ", ".join(f"{k} `{short_fingerprint(v)}`" for k, v in fingerprints.items())
        return f"\n_Data: {names} (content fingerprints; `receval verify` checks them)._\n"
    names = ", ".join(f"{k} {short_fingerprint(v)}" for k, v in fingerprints.items())
    return f"% data: {names}\n" if fmt == "latex" else f"data: {names}\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "\"": r"\textquotedbl{}",
}


def latex_escape(s: str) -> str:
    r"""Every character LaTeX treats specially, as text.

    >>> latex_escape("ease_v2 & 100% {#1} $x^2~")
    'ease\\_v2 \\& 100\\% \\{\\#1\\} \\$x\\textasciicircum{}2\\textasciitilde{}'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(s))


def latex_cell(s: object) -> str:
    """Text that LaTeX shows as written, on one line (a line break in a cell or a caption is
    a paragraph: an error there): :func:`one_line_cell`, then :func:`latex_escape`."""
    return latex_escape(one_line_cell(s))


def markdown_cell(s: object) -> str:
    r"""A cell of a Markdown table as written: on one line (a line break as ``<br>``), ``|``
    escaped; other Markdown is left to the renderer.

    >>> markdown_cell("a|b\nc")
    'a\\|b<br>c'
    """
    return one_line_cell(s, "<br>").replace("|", "\\|")


def markdown_text(s: object) -> str:
    """Text that Markdown shows as written, in one table cell: HTML and Markdown specials
    escaped (``|`` too), a line break as ``<br>``."""
    import html

    s = html.escape(str(s), quote=False)
    s = "".join("\\" + ch if ch in "\\`*_{}[]#+!|~" else ch for ch in s)
    return one_line_cell(s, "<br>")


def markdown_code(s: object) -> str:
    """``s`` as inline code on one line, fenced by more backticks than it holds in a row."""
    s = one_line_cell(s, " ")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def rich_escape(s: object) -> str:
    """Text that rich prints as written (its markup, ``[bold]`` or ``[/x]``, escaped)."""
    from rich.markup import escape

    return escape(str(s))


def _numeric_cell(text: str) -> bool:
    """A number, or a placeholder for one ("–", "error"): such columns are right-aligned."""
    if text in ("–", "error", ""):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _rich(headers: Sequence[str], cells: Sequence[Sequence[str]], title: str, width: int | None, keys: int = 1) -> str:
    n = len(headers)
    right = [i > 0 and all(_numeric_cell(r[i]) for r in cells) for i in range(n)]
    # a text column may wrap in a narrow terminal (a key column last: it names the row)
    wrap = [not right[i] for i in range(n)]
    return fit_table(list(headers), [list(r) for r in cells], width=width, title=title, keys=keys, right=right, wrap=wrap)


# -- fitting a terminal's width ---------------------------------------------------------------

#: the narrowest a wrapping text column is made (a longer word is folded)
_MIN_TEXT = 16


def _cell_width(cell: str | Text) -> int:
    from rich.cells import cell_len

    plain = cell if isinstance(cell, str) else cell.plain
    return max((cell_len(line) for line in plain.split("\n")), default=0)


def _table_width(widths: Sequence[int]) -> int:
    """The width of a rich table (heavy head box, one space of padding) of columns this wide."""
    return sum(w + 3 for w in widths) + 1


def fit_table(headers: Sequence[str | Text], rows: Sequence[Sequence[str | Text]], *, width: int | None, title: str = "",
              keys: int = 1, right: Sequence[bool] | None = None, wrap: Sequence[bool] | None = None) -> str:
    """A rich table of ``rows`` in at most ``width`` columns (None: no limit), as text.

    Laid out as it fits: whole; else with the ``wrap`` columns (text) narrowed and wrapped;
    else in blocks of columns, each repeating the first ``keys`` columns; else each row
    stacked as ``header: value`` lines. ``right``: the columns aligned right (numbers). Cells
    and headers are shown as written (a str is never read as rich markup)."""
    n = len(headers)
    keys = min(max(keys, 1), n)
    right = list(right) if right is not None else [i > 0 for i in range(n)]
    wrap = list(wrap) if wrap is not None else [False] * n
    natural = [max([_cell_width(headers[i])] + [_cell_width(r[i]) for r in rows]) for i in range(n)]
    least = [min(natural[i], max(_MIN_TEXT, _cell_width(headers[i]))) if wrap[i] else natural[i] for i in range(n)]
    if width is None or _table_width(natural) <= width:
        return _rich_block(headers, rows, list(range(n)), natural, None, title, right, wrap)
    if _table_width(least) <= width:
        widths = _share(natural, least, wrap, width, first=range(keys))
        return _rich_block(headers, rows, list(range(n)), widths, width, title, right, wrap)
    key_cols = list(range(keys))
    blocks: list[list[int]] = []
    current: list[int] = []
    for i in range(keys, n):
        if current and _table_width([least[j] for j in key_cols + current + [i]]) > width:
            blocks.append(current)
            current = []
        current.append(i)
    if current:
        blocks.append(current)
    if not blocks or any(_table_width([least[j] for j in key_cols + b]) > width for b in blocks):
        return _stacked(headers, rows, width, title, keys)
    # the title once, above the blocks (left-aligned: the blocks differ in width)
    out = ["\n".join(wrap_text(f"{title} (in {len(blocks)} blocks of columns)", width)) + "\n"] if title else []
    for block in blocks:
        cols = key_cols + block
        sub = [natural[j] for j in cols]
        widths = sub if _table_width(sub) <= width else _share(sub, [least[j] for j in cols], [wrap[j] for j in cols], width,
                                                               first=range(keys))
        out.append(_rich_block(headers, rows, cols, {j: w for j, w in zip(cols, widths)}, width, "", right, wrap))
    return "\n".join(out)  # a blank line between blocks


def _share(natural: Sequence[int], least: Sequence[int], wrap: Sequence[bool], width: int,
           first: Sequence[int] = ()) -> list[int]:
    """Column widths between ``least`` and ``natural`` that fill ``width``: the room left
    goes first to the ``first`` columns (the keys that name a row), then to the other wrapping
    columns a column at a time."""
    widths = list(least)
    room = width - _table_width(widths)
    for i in first:
        more = min(max(room, 0), natural[i] - widths[i])
        widths[i] += more
        room -= more
    while room > 0:
        grow = [i for i in range(len(widths)) if wrap[i] and widths[i] < natural[i]]
        if not grow:
            break
        for i in grow:
            if room <= 0:
                break
            widths[i] += 1
            room -= 1
    return widths


def _rich_block(headers: Sequence[str | Text], rows: Sequence[Sequence[str | Text]], cols: list[int],
                widths: Sequence[int] | Mapping[int, int], width: int | None, title: str, right: Sequence[bool],
                wrap: Sequence[bool]) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    def text(cell: str | Text) -> Text:
        return Text(cell) if isinstance(cell, str) else cell

    def w(j: int) -> int:
        return widths[j] if isinstance(widths, Mapping) else widths[cols.index(j)]

    table = Table(title=Text(title) if title else None)
    for j in cols:
        table.add_column(text(headers[j]), justify="right" if right[j] else "left", no_wrap=not wrap[j],
                         overflow="fold", width=w(j) if wrap[j] else None, min_width=w(j))
    for r in rows:
        table.add_row(*(text(r[j]) for j in cols))
    total = _table_width([w(j) for j in cols])
    # never narrower than the table: a narrower console collapses a no_wrap column to nothing
    console = Console(file=io.StringIO(), width=max(total, width or 0), force_terminal=False, highlight=False)
    console.print(table)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _stacked(headers: Sequence[str | Text], rows: Sequence[Sequence[str | Text]], width: int, title: str, keys: int) -> str:
    """Each row as a block: its key cells on one line, then one ``header: value`` line per
    other column (wrapped to ``width``)."""

    def plain(cell: str | Text) -> str:
        return " ".join((cell if isinstance(cell, str) else cell.plain).split("\n"))

    lines = textwrap.wrap(title, width) if title else []
    for r in rows:
        lines += textwrap.wrap(" ".join(plain(r[j]) for j in range(keys)), width, subsequent_indent="  ",
                               break_on_hyphens=False) or [""]
        for j in range(keys, len(headers)):
            lines += textwrap.wrap(f"{plain(headers[j])}: {plain(r[j])}", width, initial_indent="  ",
                                   subsequent_indent="    ", break_on_hyphens=False, break_long_words=True)
    return "\n".join(lines) + "\n"


def wrap_text(text: str, width: int | None, indent: str = "") -> list[str]:
    """``text`` as lines of at most ``width`` columns (None: one line), later lines indented."""
    if width is None:
        return [text]
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False) or [""]


# -- signatures in a short form ---------------------------------------------------------------

#: stands for the fields every signature of a table ends with (:func:`shared_fields`)
ELLIPSIS = "…"


def shared_fields(signatures: Sequence[str]) -> tuple[list[str], str]:
    """Each signature's own fields, and the fields all of them end with (``""`` when fewer
    than two signatures or fewer than two such fields): own + ``|`` + shared is the signature.

    >>> shared_fields(["ndcg@10|gain:binary|rel:4|v:0.1.0", "recall@10|den:r|rel:4|v:0.1.0"])
    (['ndcg@10|gain:binary', 'recall@10|den:r'], 'rel:4|v:0.1.0')
    """
    from .spec import SIG_SEP  # lazy: cost: numpy and the metric registry (spec), +430 modules on receval --version

    parts = [s.split(SIG_SEP) for s in signatures]
    if len(parts) < 2:
        return list(signatures), ""
    n = 0
    shortest = min(len(p) for p in parts) - 1  # the head (the metric) is never shared
    while n < shortest and len({p[-1 - n] for p in parts}) == 1:
        n += 1
    if n < 2:
        return list(signatures), ""
    return [SIG_SEP.join(p[:-n]) for p in parts], SIG_SEP.join(parts[0][-n:])


def short_signature(own: str, shared: str) -> str:
    """A signature as a table shows it: its own fields, ``|…`` for the shared ones."""
    from .spec import SIG_SEP  # lazy: cost: numpy and the metric registry (spec), +430 modules on receval --version

    return own + SIG_SEP + ELLIPSIS if shared else own


def break_signature(sig: str, width: int | None, indent: str = "  ", first: str = "") -> list[str]:
    """``first + sig`` as lines of at most ``width`` columns, broken after a ``|`` (never inside
    a field, unless a field alone is wider than the line); later lines start with ``indent``.
    The lines read back whole: :func:`receval.parse_signature` ignores the spaces around a field.

    >>> break_signature("ndcg@10|gain:binary|rel:4|v:0.1.0", 24)
    ['ndcg@10|gain:binary|', '  rel:4|v:0.1.0']
    """
    from .spec import SIG_SEP  # lazy: cost: numpy and the metric registry (spec), +430 modules on receval --version

    if width is None or len(first) + len(sig) <= width:
        return [first + sig]
    fields = sig.split(SIG_SEP)
    pieces = [f + SIG_SEP for f in fields[:-1]] + fields[-1:]
    lines: list[str] = []
    line = start = first
    for piece in pieces:
        if line != start and len(line) + len(piece) > width:
            lines.append(line.rstrip())
            line = start = indent
        line += piece
        while len(line) > width:  # a field wider than the line: folded (rare)
            lines.append(line[:width])
            line = indent + line[width:]
    lines.append(line)
    return lines


def signature_lines(signatures: Sequence[str], width: int | None, *, title: str = "") -> list[str]:
    """The signatures under a table: one per line as written when they fit ``width`` (or no
    width); else in the short form (:func:`shared_fields`: each signature's own fields and
    ``…``, then ``… = `` the shared fields) broken after ``|`` to fit, under ``title``."""
    if width is None or all(len(s) <= width for s in signatures):
        return list(signatures)
    own, shared = shared_fields(signatures)
    lines = wrap_text(title, width) if title else []
    if not shared:
        for s in signatures:
            lines += break_signature(s, width)
        return lines
    if not title:
        lines += wrap_text(f"signatures ({ELLIPSIS}: the fields they all end with, written once below):", width)
    for o in own:
        lines += break_signature(short_signature(o, shared), width)
    lines += break_signature(shared, width, indent="    ", first=f"{ELLIPSIS} = ")
    return lines


# -- notebooks: HTML fragments of the results' rich display -----------------------------------

#: the style of the notebook display (scoped to ``.receval``: a notebook's own tables keep theirs)
NOTEBOOK_CSS = (".receval table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
                ".receval caption{text-align:left;font-weight:600;padding-bottom:.3em}"
                ".receval th,.receval td{padding:.2em .6em;text-align:right}"
                ".receval th:first-child,.receval td:first-child,.receval .l{text-align:left}"
                ".receval .best{font-weight:700}.receval .ci{opacity:.7;font-size:.85em}"
                ".receval code{font-size:.85em}.receval .note{font-size:.85em;margin:.3em 0}"
                ".receval pre{font-size:.8em;white-space:pre-wrap;word-break:break-all}")


def html_signature(sig: str, shared: str = "") -> str:
    """A signature in a cell: its short form (:func:`short_signature` when ``shared`` fields
    are given, else cut after its first five fields), the whole signature as the tooltip.

    >>> html_signature("ndcg@10|gain:binary|rel:4|v:0.1.0", "rel:4|v:0.1.0")
    '<code title="ndcg@10|gain:binary|rel:4|v:0.1.0">ndcg@10|gain:binary|…</code>'
    """
    import html

    from .spec import SIG_SEP  # lazy: cost: numpy and the metric registry (spec), +430 modules on receval --version

    if shared and sig.endswith(SIG_SEP + shared):
        short = short_signature(sig[: -len(shared) - 1], shared)
    else:
        fields = sig.split(SIG_SEP)
        short = SIG_SEP.join(fields[:5]) + (SIG_SEP + ELLIPSIS if len(fields) > 5 else "")
    return f'<code title="{html.escape(sig)}">{html.escape(short)}</code>'


def html_fingerprint(fp: str) -> str:
    """A fingerprint in its short form (:func:`short_fingerprint`), the whole one as the tooltip."""
    import html

    return f'<code title="{html.escape(fp)}">{html.escape(short_fingerprint(fp))}</code>'


def html_fingerprints(fingerprints: Mapping[str, str]) -> str:
    """The data line of a display: each input's short fingerprint, the whole one as the tooltip."""
    import html

    if not fingerprints:
        return ""
    names = ", ".join(f"{html.escape(k)} {html_fingerprint(v)}" for k, v in fingerprints.items())
    return f'<p class="note">data: {names} (content fingerprints; <code>receval verify</code> checks them)</p>'


def html_signatures(signatures: Sequence[str]) -> str:
    """Every signature whole, in a closed ``<details>`` element (one per line, to copy)."""
    import html

    if not signatures:
        return ""
    return ("<details><summary>signatures</summary><pre>" + "\n".join(html.escape(s) for s in signatures)
            + "</pre></details>")


def html_display(body: Sequence[str]) -> str:
    """A notebook display: ``body`` (HTML lines) in a ``<div class="receval">`` with its style."""
    return "\n".join(['<div class="receval">', f"<style>{NOTEBOOK_CSS}</style>", *body, "</div>"]) + "\n"


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Plain aligned columns (for a ``repr``): the first left-aligned, the others right-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def latex_label(label: str | None, title: str = "", default: str = "tab:receval") -> str:
    r"""The ``\label`` of a LaTeX table: ``label`` (``tab:`` in front when it has no ``:``),
    else ``tab:`` and the words of ``title``, else ``default``. A label holds letters, digits
    and ``:-_./+`` only.

    >>> latex_label(None, "EASE vs. Pop (ML-20M)")
    'tab:ease-vs-pop-ml-20m'
    >>> latex_label("main"), latex_label("fig:x")
    ('tab:main', 'fig:x')
    """
    if label is None:
        words = re.findall(r"[a-z0-9]+", title.lower())
        return "tab:" + "-".join(words)[:60].strip("-") if words else default
    if not label or not re.fullmatch(r"[A-Za-z0-9:._/+-]+", label):
        raise SpecError(f"a LaTeX label holds letters, digits and :-_./+ only (e.g. tab:main), got {label!r}")
    return label if ":" in label else "tab:" + label


def _latex_sig(sig: str) -> str:
    """A signature in typewriter type, breakable after every field."""
    from .spec import SIG_SEP  # lazy: cost: numpy and the metric registry (spec), +430 modules on receval --version

    return r"\texttt{" + r"\textbar{}\allowbreak{}".join(latex_cell(p) for p in sig.split(SIG_SEP)) + "}"


def latex_signature_notes(signatures: list[str], short: bool = True) -> list[str]:
    r"""The lines under a LaTeX table that give its signatures: whole, one per line
    (``short=False``), or in the short form: each signature's own fields then ``\dots``, and
    the fields all of them end with written once (:func:`receval.report.shared_fields`)."""
    own, shared = shared_fields(signatures) if short else (list(signatures), "")
    if not shared:
        return [_latex_sig(s) + r"\par" for s in signatures]
    lines = [r"Signatures (\dots{}: the fields all of them end with, given last):\par"]
    lines += [_latex_sig(o) + r"\textbar{}\dots{}\par" for o in own]
    lines.append(r"\dots{} = " + _latex_sig(shared) + r"\par")
    return lines


def latex_float(body: list[str], *, caption: str, label: str, fit: str, notes: list[str], standalone: bool,
                placement: str = "t") -> str:
    r"""A ``table`` float around a ``tabular`` (``body``): the caption and label above, the
    tabular fitted to ``\linewidth`` as ``fit`` says (:data:`LATEX_FITS`), ``notes`` in a
    footnote-size paragraph under it; a whole document when ``standalone``."""
    lines = []
    if standalone:
        lines += [r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}",
                  r"\usepackage{booktabs}", r"\usepackage{graphicx}", r"\usepackage[margin=2cm]{geometry}",
                  r"\pagestyle{empty}", r"\begin{document}", r"\null"]
    # a document of one table: here, at the top (a float alone would go to a float page)
    lines += [r"\begin{table}[" + ("!h" if standalone else placement) + "]", r"\centering"]
    lines.append(r"\caption{" + latex_cell(caption) + r"}\label{" + label + "}")
    body = list(body)
    if fit == "shrink":  # scaled down to the line only when wider; a narrow table keeps its size
        body[0] = r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{" + body[0]
    elif fit == "linewidth":
        body[0] = r"\resizebox{\linewidth}{!}{" + body[0]
    if fit != "none":
        body[-1] += "}"
    lines += body
    lines.append(r"\par\smallskip\begin{minipage}{\linewidth}\footnotesize\raggedright")
    lines += notes
    lines += [r"\end{minipage}", r"\end{table}"]
    if standalone:
        lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"
