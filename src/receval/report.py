"""Tables in several formats: terminal (rich), Markdown, LaTeX, HTML, CSV, JSON.

The formats are declared once, in :data:`TABLE_FORMATS`: each format's renderers (:func:`render`
for rows of cells, :func:`receval.tables.render_table` for a comparison of runs), the commands
whose ``--format`` offers it (:func:`command_formats`, read by the command line) and the file
extensions that name it. The escaping of user text (run and metric names, ids, signatures) in
each format is here too: :func:`one_line_cell`, :func:`markdown_cell`, :func:`markdown_text`,
:func:`markdown_code`, :func:`latex_escape`, :func:`latex_cell`, :func:`rich_escape`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple


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
                ("evaluate", "runs", "compare", "metrics", "dialects", "verify"), (".txt",)),
    TableFormat("markdown", "a Markdown table", _BOTH, ("evaluate", "runs", "compare", "metrics", "dialects", "verify"), (".md",)),
    TableFormat("latex", "a booktabs tabular", _BOTH, ("evaluate", "runs", "compare"), (".tex",)),
    TableFormat("html", "one self-contained HTML document", ("comparison",), ("runs",), (".html", ".htm")),
    TableFormat("csv", "comma-separated values, full precision", _BOTH, ("evaluate", "runs", "compare"), (".csv",)),
    TableFormat("json", "every number and signature", _BOTH, ("evaluate", "runs", "compare", "dialects", "verify"), (".json",)),
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


def fmt_value(v: Any, digits: int = 6) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, *, title: str = "", digits: int = 6) -> str:
    """Render a table; numbers with ``digits`` decimals, None as an en dash."""
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
    return _rich([one_line_cell(h) for h in headers], [[one_line_cell(c) for c in r] for r in cells], title)


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


def _rich(headers: Sequence[str], cells: Sequence[Sequence[str]], title: str) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title or None, show_lines=False)
    for i, h in enumerate(headers):
        numeric = i > 0 and all(_numeric_cell(r[i]) for r in cells)
        table.add_column(rich_escape(h), justify="right" if numeric else "left", no_wrap=True)
    for r in cells:
        table.add_row(*(rich_escape(c) for c in r))
    # wide enough for every cell: a narrower console makes rich collapse a no_wrap column to
    # nothing (the metric names vanished from `receval metrics`)
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    console = Console(file=io.StringIO(), width=max(100, sum(w + 3 for w in widths) + 4), force_terminal=False)
    console.print(table)
    return console.file.getvalue()  # type: ignore[attr-defined]
