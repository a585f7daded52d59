"""The report page: one self-contained ``index.html`` of a comparison or of a reproduction.

``receval runs ... --report DIR`` and ``receval reproduce --out DIR`` write ``DIR/index.html``:
the tables (values with intervals and significance markers, the paired tests), the figures
(PNG images inlined as ``data:`` URLs), every signature, the protocol and, with ``--segments``,
every segment's table. Nothing is loaded from anywhere: no script, no stylesheet, no font and no
image outside the file (the page opens offline, from a mail attachment or a CI artifact).

Only ``DIR/index.html`` is written (atomically, :func:`receval.outputs.write_output`); an
existing one is kept unless ``overwrite`` (``--force``), and it is never one of the inputs.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from ._version import __version__
from .errors import DataError, RecevalError
from .figures import STYLE, _mpl, metric_groups, plot_differences, plot_metric_at_k, plot_per_user, plot_segments, plot_spread
from .outputs import check_outputs, not_an_input, write_output
from .report import fmt_num, shared_fields, short_signature
from .spec import signature_fields
from .stats import parse_stats_signature
from .tables import html_pairs, render_table

#: the file a report folder gets
PAGE_NAME = "index.html"

_CSS = """:root{color-scheme:light}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;padding:1.5em 2em;max-width:84em;color:#111;background:#fff;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0 .6em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
h3{font-size:1.05em;margin-top:1.4em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.6em 0}
caption{font-weight:600;text-align:left;padding-bottom:.4em}
th,td{padding:.25em .5em;text-align:right;vertical-align:top;white-space:nowrap}th:first-child,td:first-child{text-align:left}
thead th{border-top:2px solid #111;border-bottom:1px solid #111}
tbody tr:last-child td{border-bottom:2px solid #111}
.best{font-weight:700}.ci{color:#555;font-size:.85em}
.legend,.note{font-size:.85em;max-width:60em;color:#333}
.sig,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.8em;word-break:break-all}
figure{margin:1em 0;display:inline-block;vertical-align:top;max-width:100%;overflow-x:auto}figure img{max-width:100%;height:auto;border:1px solid #eee;box-sizing:border-box}
@media (max-width:600px){body{padding:1em}figure{display:block}}
details.sigs{font-size:.85em;margin:.4em 0}details.sigs summary{cursor:pointer;color:#333}
table.protocol td{white-space:normal;text-align:left}table.protocol td:first-child{font-weight:600}
figcaption{font-size:.85em;color:#333}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;font-size:.9em}dt{font-weight:600}dd{margin:0;word-break:break-word}
td.missing{color:#888}td.error{color:#b45309;font-weight:600}tr.standard td{background:#fff5f5}
.scroll{overflow-x:auto}"""


def page_path(folder: Any) -> Path:
    """``folder/index.html``; ``folder`` must not be a file."""
    out = Path(str(folder))
    if out.exists() and not out.is_dir():
        raise DataError(f"the report folder '{out}' is a file; name a folder (receval writes {PAGE_NAME} in it)")
    return out / PAGE_NAME


def check_page(path: Path, inputs: list[Any], overwrite: bool) -> None:
    """Before any work: the page is new (or ``overwrite``) and not an input."""
    not_an_input(path, inputs, "report page")
    if path.parent.is_dir():
        check_outputs([path], inputs, overwrite, "report page", "--force")


# ---- pieces -----------------------------------------------------------------------------------------


def _body(doc: str) -> str:
    """The body of a whole HTML document (the tables' own renderer writes whole documents)."""
    hit = re.search(r"<body>\s*(.*?)\s*</body>", doc, re.S)
    return hit.group(1) if hit else f"<pre>{html.escape(doc)}</pre>"


#: the resolution of the page's figures (pixels per inch of the figure's own size)
DPI = 150


def figure_png(fig: Any, dpi: int = DPI) -> str:
    """A matplotlib figure as a ``data:image/png;base64,...`` URL."""
    buf = io.BytesIO()
    with _mpl().rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def smallest_text_px(fig: Any, dpi: int = DPI) -> float:
    """The height in image pixels of the smallest text a drawn figure shows (its font size in
    points x ``dpi`` / 72): how small the figure's text reads once the page scales the image."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=0.0) * dpi / 72


def _figure(fig: Any, caption: str, name: str) -> str:
    e = html.escape
    src = figure_png(fig)  # drawn: every tick label exists now
    return (f'<figure class="figure" data-text-px="{smallest_text_px(fig):.2f}" data-figure="{e(name)}">'
            f'<img alt="{e(caption)}" src="{src}"><figcaption>{e(caption)}</figcaption></figure>')


def _fields_table(items: dict[str, Any]) -> str:
    """The protocol as a table of fields: one row per field, a mapping (the runs) a row per
    entry (``runs: ease``), a list written with commas; never raw JSON."""
    e = html.escape

    def text(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return ", ".join(str(x) for x in v)
        return str(v)

    rows = []
    for k, v in items.items():
        if isinstance(v, dict):
            rows += [(f"{k}: {sub}", text(x)) for sub, x in v.items()] or [(str(k), "–")]
        else:
            rows.append((str(k), text(v)))
    body = "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in rows)
    return f'<table class="protocol"><thead><tr><th>field</th><th>value</th></tr></thead><tbody>{body}</tbody></table>'


def folded_signatures(sigs: list[str], summary: str) -> str:
    """Signatures folded in a ``<details>`` element: the fields they all end with written once,
    then each one's own fields (as sacreBLEU prints them); each whole as its tooltip."""
    e = html.escape
    own, shared = shared_fields(sigs)
    items = "".join(f'<li><code class="sig" title="{e(s)}">{e(short_signature(o, shared))}</code></li>'
                    for o, s in zip(own, sigs))
    common = f'<p>… = <code class="sig">{e(shared)}</code></p>' if shared else ""
    return f'<details class="sigs"><summary>{e(summary)}</summary><ul>{items}</ul>{common}</details>'


_SIG_P = re.compile(r'<p class="sig">(.*?)</p>\s*', re.S)


def _dl(items: dict[str, Any]) -> str:
    e = html.escape

    def text(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, default=str)

    return "<dl>" + "".join(f"<dt>{e(str(k))}</dt><dd>{e(text(v))}</dd>" for k, v in items.items()) + "</dl>"


def _document(title: str, body: list[str]) -> str:
    e = html.escape
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request
        f"<title>{e(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>", *body, "</body>", "</html>",
    ]) + "\n"


def _comparison_figures(c: Any, sc: Any) -> list[str]:
    out = []
    makers: list[tuple[str, str, Any]] = []
    if metric_groups(c.metrics):
        makers.append(("at-k", "Each metric against its cut-off k, a line per run (band: the CI)", lambda: plot_metric_at_k(c)))
    if c.pairs:
        makers.append(("differences", "Paired differences with their CIs (filled: significant after correction)",
                       lambda: plot_differences(c)))
    if c.per_user is not None and c.metrics:
        m = c.metrics[0]
        makers.append(("users", f"Per-user distribution of {m}", lambda: plot_per_user(c, metric=m)))
    if sc is not None:
        makers.append(("segments", f"Every run's value by segment ({sc.definition}), with its CI", lambda: plot_segments(sc)))
    for name, caption, make in makers:
        try:
            out.append(_figure(make(), caption, name))
        except RecevalError as exc:  # a figure the data cannot give is a note, not a failed page
            out.append(f'<p class="note">No {html.escape(name)} figure: {html.escape(str(exc))}</p>')
    return out


def _tables(c: Any, title: str, alpha: float | None, ci: bool, digits: int) -> list[str]:
    table = _SIG_P.sub("", _body(render_table(c, "html", alpha=alpha, ci=ci, digits=digits, title=title)))
    sigs = [c.signatures[m] for m in c.metrics if m in c.signatures]
    parts = [f'<div class="scroll table-block">{table}</div>',
             folded_signatures(sigs, f"Signatures of this table ({len(sigs)})")]
    if c.pairs:
        parts.append('<details class="pairs"><summary>Paired tests</summary><div class="scroll">'
                     f'{html_pairs(c, alpha=alpha, digits=digits)}</div></details>')
    return parts


def _protocol(c: Any, protocol: dict[str, Any] | None) -> dict[str, Any]:
    stats: dict[str, Any] = {}
    if c.metrics:
        stats = parse_stats_signature(c.signatures.get(c.metrics[0], ""))
        fields = signature_fields(c.signatures.get(c.metrics[0], ""))
        if "userset" in fields:
            stats["users"] = fields["userset"]
    return {**(protocol or {}), "runs compared": ", ".join(c.runs), f"paired {c.unit}": c.users,
            **({"users dropped": c.dropped} if c.dropped else {}), **({"baseline": c.baseline} if c.baseline else {}), **stats}


def render_page(obj: Any, *, title: str | None = None, protocol: dict[str, Any] | None = None, alpha: float | None = None,
                ci: bool = True, digits: int = 4, figures: bool = True) -> str:
    """The report page of a :class:`~receval.comparison.Comparison` or a
    :class:`~receval.segments.SegmentedComparison` (module docs); ``protocol``: what to state
    about the inputs and options (shown as given)."""
    e = html.escape
    sc = obj if hasattr(obj, "segments") and hasattr(obj, "overall") else None
    c = sc.overall if sc is not None else obj
    title = title or f"receval: {', '.join(c.runs)} on {len(c.metrics)} metric{'s' * (len(c.metrics) != 1)}"
    body = [f"<h1>{e(title)}</h1>",
            f'<p class="note">Every number below is reproducible from its signature and the inputs; '
            f"written by receval {e(__version__)}.</p>",
            '<section id="results"><h2>Results</h2>', *_tables(c, f"all {c.unit} ({c.users})", alpha, ci, digits), "</section>"]
    if figures:
        body += ['<section id="figures"><h2>Figures</h2>', *_comparison_figures(c, sc), "</section>"]
    if sc is not None:
        body += ['<section id="segments"><h2>Segments</h2>', f'<p class="note">{e(sc.note())}</p>']
        for label, sub in list(sc.comparisons())[1:]:
            body += [f"<h3>{e(label)}</h3>", *_tables(sub, f"segment {label} ({sub.users} users)", alpha, ci, digits)]
        body.append("</section>")
    body += ['<section id="protocol"><h2>Protocol</h2>', _fields_table(_protocol(c, protocol)), "</section>"]
    sigs = list(c.signatures.values())
    if sc is not None:
        sigs += [s for _, sub in list(sc.comparisons())[1:] for s in sub.signatures.values()]
    body += ['<section id="signatures"><h2>Signatures</h2>',
             '<p class="note">Each value\'s signature reproduces it; the fields all share are written once.</p>',
             folded_signatures(sigs, f"All {len(sigs)} signatures"), "</section>"]
    return _document(title, body)


def write_page(obj: Any, path: Any, *, overwrite: bool = False, inputs: list[Any] | None = None, **options: Any) -> Path:
    """Write :func:`render_page` to ``path`` (``DIR/index.html``: :func:`page_path`), creating its folder."""
    path = Path(str(path))
    check_page(path, list(inputs or []), overwrite)
    text = render_page(obj, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_output(path, text, "report page")


# ---- the reproduction ------------------------------------------------------------------------------


def render_reproduction_page(rep: Any, *, legend: str = "", published: list[list[Any]] | None = None,
                             figures: bool = True) -> str:
    """The page of ``receval reproduce``: the table (a row per dialect, "–" not offered, "error"
    refused, its reason on hover and listed) with its ``legend``, the spread figure, the study's
    own numbers (``published``: rows of dialect and values of ``rep.columns``), the protocol and
    every signature."""
    e = html.escape
    title = "receval reproduce: each metric under each library's dialect"

    def cell(d: str, col: str, v: Any) -> str:
        if col in rep.errors.get(d, {}):
            return f'<td class="error" title="{e(rep.errors[d][col])}">error</td>'
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return '<td class="missing" title="not offered by the library">–</td>'
        return f"<td>{fmt_num(v)}</td>"

    head = "<thead><tr><th>dialect</th>" + "".join(f"<th>{e(c)}</th>" for c in rep.columns) + "</tr></thead>"
    rows = [f'<tr class="{"standard" if d == "standard" else "dialect"}"><td>{e(d)}</td>'
            + "".join(cell(d, c, rep.table[d].get(c)) for c in rep.columns) + "</tr>" for d in rep.table]
    n = rep.protocol.get("n_test_users")
    body = [f"<h1>{e(title)}</h1>",
            '<p class="note">A dialect is how one library (at one version) computes a metric: its definition, '
            f"defaults and edge cases. Written by receval {e(__version__)}.</p>",
            '<section id="results"><h2>This data</h2>',
            f'<div class="scroll table-block"><table><caption>{e(str(rep.protocol.get("data", "")))}'
            f'{e(f" — {n} test users" if n else "")}</caption>{head}<tbody>{"".join(rows)}</tbody></table></div>',
            *([f'<p class="legend">{e(legend)}</p>'] if legend else [])]
    errs = [f"<li>{e(d)} {e(c)}: {e(why)}</li>" for d, es in rep.errors.items() for c, why in es.items()]
    if errs:
        body += ["<ul class=\"legend\">", *errs, "</ul>"]
    body.append("</section>")
    if figures:
        body += ['<section id="figures"><h2>Figures</h2>',
                 _figure(plot_spread(rep), "Each metric under each library's dialect", "spread"), "</section>"]
    if published:
        body += ['<section id="study"><h2>The study (MovieLens-20M)</h2><div class="scroll"><table>',
                 "<thead><tr><th>dialect</th>" + "".join(f"<th>{e(c)}</th>" for c in rep.columns) + "</tr></thead><tbody>",
                 *("<tr>" + f"<td>{e(str(r[0]))}</td>" + "".join('<td class="missing">–</td>' if v is None else f"<td>{fmt_num(v)}</td>"
                                                              for v in r[1:]) + "</tr>" for r in published),
                 "</tbody></table></div>", "</section>"]
    body += ['<section id="protocol"><h2>Protocol</h2>', _dl(rep.protocol), "</section>"]
    sigs = [f'<li>{e(d)} {e(c)}: <code class="sig">{e(s)}</code></li>' for d, ss in rep.signatures.items() for c, s in ss.items()]
    body += ['<section id="signatures"><h2>Signatures</h2><ul>', *sigs, "</ul></section>"]
    return _document(title, body)


def write_reproduction_page(rep: Any, out: Any, **options: Any) -> Path:
    """``out/index.html`` of a reproduction (:func:`render_reproduction_page`; the report folder's
    checks are :func:`receval.reproduce.check_report_dir`'s)."""
    return write_output(Path(str(out)) / PAGE_NAME, render_reproduction_page(rep, **options), "report file")


__all__ = ["PAGE_NAME", "page_path", "check_page", "render_page", "write_page", "figure_png",
           "render_reproduction_page", "write_reproduction_page"]
