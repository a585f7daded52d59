"""``receval ope LOG TARGET... -e ips -e snips [--rewards FILE]``: the command's arguments and runner.

With one target: every estimate with its interval and diagnostics. With several (``NAME=FILE``,
or a file named by its stem): the targets compared as ``receval runs`` compares systems, on the
shared rounds: the table with significance letters (:func:`receval.tables.render_table` of
:meth:`receval.ope.OpeResults.compare`), the paired differences (:func:`receval.tables.render_pairs`),
then the diagnostics; ``--out``, ``--figure`` and ``--report DIR`` write the same files as there.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import DataError, SpecError
from ..figures import parse_figure, write_figure
from ..outputs import check_outputs, write_output
from ..page import check_page, page_path, render_page
from ..report import LATEX_FITS, command_formats, fmt_num, signature_lines, terminal_width
from ..tables import EXTENSIONS, render_pairs, render_table, write_table
from .core import evaluate


def build_command(p: argparse.ArgumentParser):
    p.add_argument("log", help="the log: CSV or Parquet with context_id, item_id, reward, propensity, optional position")
    p.add_argument("target", nargs="+", metavar="[NAME=]TARGET",
                   help="target policies: context_id, item_id and propensity (or rank / score); several are compared on "
                        "the same rounds, each named NAME (ts=ts.parquet) or by its file name")
    p.add_argument("-e", "--estimator", action="append", required=True, help="an estimator, e.g. ips or 'ips(cap=10)' (repeatable)")
    p.add_argument("--rewards", metavar="FILE", help="a reward model (context_id, item_id, [position], estimate) for dm, dr, switch_dr, sndr")

    p.add_argument("--format", choices=command_formats("ope"), default="table")
    p.add_argument("--ci", choices=("normal", "bootstrap", "none"), default="normal",
                   help="intervals and paired tests: normal (delta method for the self-normalised estimators; z test), "
                        "bootstrap (seeded, paired), none (z test only)")
    p.add_argument("--level", type=float, default=0.95)
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slate-size", type=int)
    p.add_argument("--batches", type=int, help="align and estimate the log in this many batches of contexts "
                   "(default: one per million rows); the values do not depend on it")
    g = p.add_argument_group("comparing several targets")
    g.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"), default="holm",
                   help="multiple-testing correction over every paired difference (default holm)")
    g.add_argument("--baseline", metavar="NAME", help="compare every target with this one (default: all pairs)")
    g.add_argument("--alpha", type=float, default=None, help="significance level of the table's letters (default 0.05)")
    g.add_argument("--pairs", action="store_true", help="the terminal table: also print every paired difference")
    g.add_argument("--signatures", choices=("short", "full"), default="short")
    g.add_argument("--out", metavar="FILE", help="also write the comparison table to FILE (.md .tex .html .csv .json)")
    g.add_argument("--label", metavar="NAME", help="--format latex: the table's \\label (default tab:receval-runs)")
    g.add_argument("--latex-fit", choices=LATEX_FITS, default="shrink")
    g.add_argument("--figure", action="append", default=[], metavar="KIND[:ESTIMATOR]=FILE",
                   help="write a figure: differences (paired differences with CIs) or users (per-round terms); .png .svg .pdf")
    g.add_argument("--report", metavar="DIR", help="write DIR/index.html: one self-contained page (tables, figures, "
                                                   "diagnostics, signatures, protocol)")
    g.add_argument("--force", action="store_true", help="replace existing --out / --figure / --report files")
    c = p.add_argument_group("column names")
    for name, default in (("context", "context_id"), ("item", "item_id"), ("reward", "reward"), ("propensity", "propensity"),
                          ("position", "position"), ("rank", "rank"), ("score", "score"), ("estimate", "estimate")):
        c.add_argument(f"--{name}-col", default=default)

    def run(a: argparse.Namespace) -> int:
        named = _targets(a.target)
        several = len(named) > 1
        compare_outputs = [x for x in ("--out", "--figure", "--report", "--baseline", "--pairs")
                           if getattr(a, x[2:].replace("-", "_"))]
        if compare_outputs and not several:
            raise SpecError(f"{compare_outputs[0]} compares targets: give two or more (NAME=FILE ...)")
        inputs = [a.log, *named.values(), *([a.rewards] if a.rewards else [])]
        figures, report = _check_outputs(a, inputs)
        res = evaluate(a.log, named if several else next(iter(named.values())), a.estimator, a.rewards, ci=a.ci, level=a.level,
                       resamples=a.resamples, seed=a.seed, slate_size=a.slate_size, context_col=a.context_col,
                       item_col=a.item_col, reward_col=a.reward_col, propensity_col=a.propensity_col,
                       position_col=a.position_col, rank_col=a.rank_col, score_col=a.score_col, estimate_col=a.estimate_col,
                       batches=a.batches, correction=a.correction, baseline=a.baseline)
        if not several:
            if a.format == "table":  # the estimates fitted to the terminal, their signatures factored below
                width = terminal_width()
                text = res.render("table", signatures=False, width="terminal")
                text += "\n".join(signature_lines([e.signature for e in res.entries], width)) + "\n"
                print(text, end="")
            else:
                print(res.render(a.format), end="")
            return 0

        cmp = res.compare(per_round=any(kind == "users" for kind, _, _ in figures))
        ci = a.ci != "none"
        latex = {"label": a.label, "fit": a.latex_fit}
        if a.format == "json":
            doc = res.to_dict() | {"comparison": json.loads(render_table(cmp, "json", alpha=a.alpha, ci=ci))}
            text = json.dumps(doc, indent=2)
        elif a.format == "csv":
            text = res.render("csv")
        else:
            text = render_table(cmp, a.format, alpha=a.alpha, ci=ci, signatures=a.signatures, **latex)
            if a.pairs or a.format != "table":
                text += "\n" + render_pairs(cmp, a.format, alpha=a.alpha, label=f"{a.label}-pairs" if a.label else None,
                                            fit=a.latex_fit)
            text += "\n" + res.render(a.format, differences=False, signatures=False, values=False,  # the table above gives them
                                       width="terminal" if a.format == "table" else None).rstrip("\n") + "\n"
        print(text, end="" if text.endswith("\n") else "\n")
        if a.out:
            write_table(cmp, a.out, alpha=a.alpha, ci=ci, **latex)

        for kind, metric, path in figures:
            write_figure(cmp, kind, path, metric=metric)
        if report is not None:
            protocol = {"log": a.log, "targets": named, "estimators": a.estimator, "ci": a.ci, "level": a.level,
                        "correction": a.correction, **({"rewards": a.rewards} if a.rewards else {}),
                        **({"resamples": a.resamples, "seed": a.seed} if a.ci == "bootstrap" else {})}
            report.parent.mkdir(parents=True, exist_ok=True)
            written = write_output(report, page(res, cmp, alpha=a.alpha, ci=ci, protocol=protocol), "report page")
            print(f"receval: report: {written}", file=sys.stderr)  # where the page went, beside the table
        return 0

    return run


def _targets(items: list[str]) -> dict[str, str]:
    """``NAME=FILE`` (or a file, named by its stem) -> ``{name: file}``; a name given twice is refused."""
    named: dict[str, str] = {}
    for item in items:
        name, eq, path = item.partition("=")
        if not eq or Path(item).exists():
            name, path = Path(item).stem, item
        name, path = name.strip(), path.strip()
        if not name or not path:
            raise DataError(f"a target is written NAME=FILE or FILE, got {item!r}")
        if name in named:
            raise DataError(f"give the targets different names: {name!r} names two (write NAME=FILE)")
        named[name] = path
    return named


def _check_outputs(a: argparse.Namespace, inputs: list[Any]) -> tuple[list[tuple[str, str | None, str]], Path | None]:
    """Before any work: the figures' names, the table file's format, the outputs new (or ``--force``) and not inputs."""
    figures = [parse_figure(item) for item in a.figure]
    if a.out and not a.out.lower().endswith(tuple(EXTENSIONS)):
        raise SpecError(f"--out names its format by its extension: one of {', '.join(EXTENSIONS)}; got {a.out!r}")
    check_outputs([a.out, *(p for _, _, p in figures)], inputs, a.force, "output file", "--force")
    report = page_path(a.report) if a.report else None
    if report is not None:
        check_page(report, inputs, a.force)
    return figures, report


def page(res: Any, cmp: Any, *, protocol: dict[str, Any], alpha: float | None = None, ci: bool = True) -> str:
    """The report page of :func:`receval.page.render_page` for the comparison of targets, with a
    section of every estimate's diagnostics before the protocol. Its figure is the paired
    differences' (the per-round terms of a weighted estimator, mostly 0, are drawn only on request:
    ``--figure users:ESTIMATOR=FILE``)."""
    from dataclasses import replace

    e = html.escape
    title = f"receval ope: {', '.join(cmp.runs)} on {len(cmp.metrics)} estimator{'s' * (len(cmp.metrics) != 1)}"
    doc = render_page(replace(cmp, per_user=None), title=title, protocol=protocol, alpha=alpha, ci=ci)
    keys = ["ess", "max_weight", "mean_weight", "clipped", "unsupported"]
    head = "".join(f"<th>{e(h)}</th>" for h in ["target", "estimator", "value", "interval", *keys])
    rows = []
    for x in res.entries:
        iv = "–" if x.low is None else f"[{fmt_num(x.low)}, {fmt_num(x.high)}]"
        cells = [e(x.target), e(x.estimator), fmt_num(x.value), iv, *(fmt_num(x.diagnostics.get(k)) for k in keys)]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    section = ('<section id="diagnostics"><h2>Diagnostics</h2><p class="note">Of the weights each estimator applies: '
               "the effective sample size, the largest weight, the mean raw weight pi/mu (about 1 when the propensities "
               "are right and the log covers the target), the share of rounds whose weight a cap, floor or tau changed, "
               "the target's mass per round on items the log never shows.</p>"
               f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div></section>\n')
    return doc.replace('<section id="protocol">', section + '<section id="protocol">', 1)
