"""The command line: a thin shell over the API.

Every command is registered here, in :data:`COMMANDS` (the order the help lists them): its
help line and its builder, which adds the command's arguments and returns its runner. The
builders of ``compare``, ``reproduce`` and ``verify`` live in their modules and are imported
when the parser is built (never for ``receval --version``); they import nothing from this
module (the shared arguments are :mod:`receval.arguments`).

A user's mistake prints one line (``receval: error: ...``) and exits with status 2; no
traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from typing import TYPE_CHECKING
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .arguments import add_column_args, add_context_args, column_kwargs, context_kwargs
from .errors import ECHO_LIMIT, MESSAGE_LIMIT, PATH_LIMIT, RecevalError, RecevalNote, RecevalWarning, SpecError, closest, one_line  # noqa: F401 (re-exported)
from .report import LATEX_FITS, command_formats, render, terminal_width, wrap_text

if TYPE_CHECKING:
    from .dialects import Dialect

#: a command's builder: adds the command's arguments to its parser and returns its runner
Builder = Callable[[argparse.ArgumentParser], Callable[[argparse.Namespace], int]]


def _evaluate(p: argparse.ArgumentParser):
    p.add_argument("recs", nargs="?", help="recommendations: CSV, Parquet or TREC run (.run/.trec) with user, item and score and/or rank")
    p.add_argument("truth", nargs="?", help="ground truth: CSV, Parquet or TREC qrels (.qrels/.trec) with user, item and optional rating")
    p.add_argument("--example", action="store_true",
                   help="evaluate the two small files receval ships (recs.csv, truth.csv) instead of RECS TRUTH")
    p.add_argument("-m", "--metric", action="append", help="a metric spec, e.g. ndcg@10 (repeatable; required)")
    p.add_argument("--dialect", help="compute as this library does, e.g. recbole, daisyrec@2.3")
    p.add_argument("--format", choices=command_formats("evaluate"), default="table",
                   help="output; trec: trec_eval's layout (metric, all, value)")
    _latex_args(p)
    p.add_argument("--input-format", choices=("auto", "trec"), default="auto",
                   help="auto: by file name (.csv .tsv .parquet .run .qrels .trec), any other name by content (TREC run or qrels); "
                        "trec: RECS is a TREC run, TRUTH a qrels file")
    p.add_argument("--per-user", metavar="FILE",
                   help="write per-user values to this .csv/.tsv/.parquet/.json file (with --engine spark: a directory Spark writes); "
                        "an existing file is kept unless --force")
    p.add_argument("--force", action="store_true", help="replace an existing --per-user output (never an input)")
    p.add_argument("--categories", metavar="FILE", help="item categories (item_id, category) or MovieLens movies.csv")
    p.add_argument("--train", metavar="FILE", help="train interactions (user_id, item_id) for popularity-based metrics")
    p.add_argument("--baseline", metavar="FILE", help="a second run (user_id, item_id, score/rank) for unexpectedness, intersection")
    p.add_argument("--catalog", metavar="FILE", help="the item catalogue (item_id)")
    p.add_argument("--engine", choices=["memory", "polars", "spark"], default="memory")
    p.add_argument("--sep", help="field separator of text inputs: one character (';') or tab, semicolon, pipe (default: ',' for .csv/.txt, tab for .tsv)")
    add_column_args(p)
    add_context_args(p)

    def run(a: argparse.Namespace) -> int:
        from .api import evaluate  # lazy: cost: numpy, polars (receval --version loads neither)

        missing = [n for n, given in (("recs", a.recs or a.example), ("truth", a.truth or a.example), ("-m/--metric", a.metric))
                   if not given]
        if missing:  # as argparse says it, naming every missing argument at once (RECS and TRUTH unless --example)
            raise SpecError(f"evaluate: the following arguments are required: {', '.join(missing)}"
                            + ("" if a.example else " (or --example for the two files receval ships)"))
        if a.example:
            if a.recs or a.truth:
                raise SpecError("leave out RECS and TRUTH with --example (it evaluates the bundled recs.csv and truth.csv)")
            from .examples import example_path  # lazy: cost: numpy, polars (examples imports the API)

            a.recs, a.truth = str(example_path("recs.csv")), str(example_path("truth.csv"))
        elif not (a.recs and a.truth):
            raise SpecError("pass RECS and TRUTH (two files), or --example for the two receval ships")
        recs, truth = a.recs, a.truth
        if a.per_user:  # before any work: the output must be new (or --force), never an input, of a known format
            _check_per_user(a)
        if a.input_format == "trec":
            from .trec import read_qrels, read_run  # lazy: cost: polars

            ids = dict(user_col=a.user_col, item_col=a.item_col)
            tids = dict(user_col=a.truth_user_col or a.user_col, item_col=a.truth_item_col or a.item_col)
            recs, truth = read_run(recs, score_col=a.score_col, **ids), read_qrels(truth, rating_col=a.rating_col, **tids)
        res = evaluate(
            recs, truth, a.metric, dialect=a.dialect, categories=a.categories, train=a.train,
            **({"baseline": a.baseline} if a.baseline else {}), **({"catalog": a.catalog} if a.catalog else {}),
            engine=None if a.engine == "memory" else a.engine, **column_kwargs(a), **context_kwargs(a),
            **({"sep": a.sep} if a.sep else {}),
        )
        if a.per_user:  # on Spark, Spark writes a directory of part files (nothing is collected)
            res.write_per_user(a.per_user, overwrite=a.force)
        # the table fits the terminal (COLUMNS, else its width; no limit when piped); see receval.report
        print(res.render(a.format, label=a.label, fit=a.latex_fit), end="")
        return 0

    return run


def _latex_args(p: argparse.ArgumentParser, default: str = "tab:receval") -> None:
    p.add_argument("--label", metavar="NAME", help=f"--format latex: the table's \\label (default {default}; 'main' is tab:main)")
    p.add_argument("--latex-fit", choices=LATEX_FITS, default="shrink",
                   help="--format latex: shrink (default: scaled down to \\linewidth only when wider), linewidth (always), none")


def _check_per_user(a: argparse.Namespace) -> None:
    from .outputs import check_new_file, not_an_input, per_user_format, spark_mode  # lazy: cost: hashlib, secrets, random (outputs), +15 modules on receval --version

    per_user_format(a.per_user)
    not_an_input(a.per_user, [a.recs, a.truth, a.categories, a.train, a.baseline, a.catalog], "--per-user output")
    if a.engine == "spark":
        spark_mode(a.per_user, a.force)
    else:
        check_new_file(a.per_user, a.force, "--per-user file", "--force")


def _runs(p: argparse.ArgumentParser):
    p.add_argument("truth", metavar="TRUTH", help="first: the ground truth, CSV or Parquet with user, item and optional rating")
    p.add_argument("runs", nargs="+", metavar="NAME=FILE", help="then a named run, e.g. ease=ease.parquet (two or more to compare)")
    p.add_argument("-m", "--metric", action="append", required=True, help="a metric spec, e.g. ndcg@10 or ndcg@[5,10,20] (repeatable)")
    p.add_argument("--dialect", help="compute as this library does, e.g. recbole")
    p.add_argument("--test", choices=("t", "wilcoxon", "permutation", "bootstrap", "tukey"), default="t", help="paired test (default t)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"), default="holm",
                   help="multiple-testing correction across all pairs and metrics (default holm)")
    p.add_argument("--ci", choices=("bca", "percentile", "t", "poisson", "none"), default="bca", help="confidence intervals (default bca)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--resamples", type=int, default=10_000, help="resamples of the bootstrap and permutation methods")
    p.add_argument("--seed", type=int, default=0, help="seed of every resampling method")
    p.add_argument("--baseline", metavar="NAME", help="test every run against this one (default: all pairs)")
    p.add_argument("--alpha", type=float, default=None, help="significance level of the table's markers (default 0.05)")
    p.add_argument("--format", choices=command_formats("runs"), default="table")
    p.add_argument("--pairs", action="store_true",
                   help="the terminal table: also print every paired test (default: significance letters in the main table)")
    p.add_argument("--signatures", choices=("short", "full"), default="short",
                   help="short (default: the fields all columns share written once) or full (every signature whole); JSON keeps them whole")
    p.add_argument("--out", metavar="FILE", help="also write the table to FILE (.md .tex .html .csv .json); an existing file is kept unless --force")
    _latex_args(p, "tab:receval-runs")
    p.add_argument("--figure", action="append", default=[], metavar="KIND[:METRIC]=FILE",
                   help="write a figure: at-k (metric@k curves with CI bands), users (per-user distributions), "
                        "differences (paired differences with CIs); .png .svg .pdf (repeatable); "
                        ":METRIC draws that metric (users:ndcg@10=u.png; default: users the first metric, the others every one)")
    p.add_argument("--force", action="store_true", help="replace existing --out / --figure / --report files")
    p.add_argument("--segments", metavar="SPEC",
                   help="also compare within user segments, every test corrected together: activity[:N] (train-row "
                        "quantiles), cold-users, cold-items (with --train), groups=FILE (user_id, group)")
    p.add_argument("--train", metavar="FILE", help="train interactions (user_id, item_id): for --segments and popularity-based metrics")
    p.add_argument("--report", metavar="DIR", help="write DIR/index.html: one self-contained page (tables, figures, signatures, "
                                                   "protocol, segments; no network needed)")
    p.add_argument("--sep", help="field separator of text inputs")
    add_column_args(p)
    add_context_args(p)

    def run(a: argparse.Namespace) -> int:
        from .runs import evaluate_runs  # lazy: cost: numpy, polars (receval --version loads neither)

        named: dict[str, str] = {}
        if "=" in a.truth and not all("=" in x for x in a.runs):
            raise SpecError(f"pass TRUTH first, then the runs: receval runs TRUTH NAME=FILE ...; got {a.truth!r} first")
        for item in a.runs:
            name, eq, path = item.partition("=")
            if not eq or not name.strip() or not path.strip():
                raise SpecError(f"a run is written NAME=FILE, got {item!r}")
            if name.strip() in named:
                raise SpecError(f"run name {name.strip()!r} is given twice (names are compared without surrounding spaces)")
            named[name.strip()] = path.strip()
        from .figures import parse_figure, write_figure  # lazy: cost: dataclasses, inspect, comparison (figures), +19 modules on receval --version
        from .outputs import check_outputs  # lazy: cost: hashlib, secrets, random (outputs)
        from .resampling import StatsOptions  # lazy: cost: numpy
        from .tables import EXTENSIONS, render_pairs, render_table, write_table  # lazy: cost: numpy, polars (tables reads specs)

        figures = [parse_figure(item) for item in a.figure]  # checked before any work
        if a.out and not a.out.lower().endswith(tuple(EXTENSIONS)):
            raise SpecError(f"--out names its format by its extension: one of {', '.join(EXTENSIONS)}; got {a.out!r}")
        from .page import check_page, page_path  # lazy: cost: html, base64 (page), +7 modules on receval --version
        from .segments import segments_arg  # lazy: cost: numpy, polars (receval --version loads neither)

        segments, groups = segments_arg(a.segments)  # checked before any work
        if any(kind == "segments" for kind, _, _ in figures) and segments is None:
            raise SpecError("the segments figure needs --segments SPEC")
        report = page_path(a.report) if a.report else None
        inputs = [a.truth, *named.values(), *(x for x in (a.train, groups) if x)]
        check_outputs([a.out, *(p for _, _, p in figures)], inputs, a.force, "output file", "--force")
        if report is not None:
            check_page(report, inputs, a.force)
        runs = evaluate_runs(named, a.truth, a.metric, dialect=a.dialect, **column_kwargs(a), **context_kwargs(a),
                             **({"sep": a.sep} if a.sep else {}), **({"train": a.train} if a.train else {}))
        stat = StatsOptions(test=a.test, correction=a.correction, ci=a.ci, level=a.level, resamples=a.resamples,
                            seed=a.seed, baseline=a.baseline)
        latex = {"label": a.label, "fit": a.latex_fit}  # the terminal table fits COLUMNS / the terminal
        if segments is not None:
            from .io import Columns  # lazy: cost: numpy, polars (receval --version loads neither)
            from .segments import compare_segments, render_segments, write_segments  # lazy: cost: numpy, polars (receval --version loads neither)

            cols = Columns(a.user_col, a.item_col, a.score_col, a.rank_col, a.rating_col, sep=a.sep,
                           truth_user=a.truth_user_col, truth_item=a.truth_item_col)
            sc: Any = compare_segments(runs, segments, train=a.train, truth=a.truth, groups=groups, cols=cols, options=stat)
            c = sc.overall
            text = render_segments(sc, a.format, alpha=a.alpha, ci=a.ci != "none", compact=not a.pairs)
        else:
            sc = c = runs.compare(stat)
            text = render_table(c, a.format, alpha=a.alpha, ci=a.ci != "none", signatures=a.signatures, **latex)
            if a.format != "json" and (a.pairs or a.format != "table"):
                pair_label = f"{a.label}-pairs" if a.label else None
                text += "\n" + render_pairs(c, a.format, alpha=a.alpha, label=pair_label, fit=a.latex_fit)
        print(text, end="" if text.endswith("\n") else "\n")
        if a.out:
            if segments is not None:
                write_segments(sc, a.out, alpha=a.alpha, ci=a.ci != "none")
            else:
                write_table(c, a.out, alpha=a.alpha, ci=a.ci != "none", **latex)
        for kind, metric, path in figures:
            write_figure(sc, kind, path, metric=metric)
        if report is not None:
            from .page import write_page  # lazy: cost: html, base64 (page)

            written = write_page(sc, report, alpha=a.alpha, ci=a.ci != "none", overwrite=a.force, inputs=inputs,
                                 protocol={"truth": a.truth, "runs": named, "metrics": a.metric,
                                           "dialect": a.dialect or "standard",
                                           **({"train": a.train} if a.train else {}), **context_kwargs(a)})
            print(f"receval: report: {written}", file=sys.stderr)  # where the page went, beside the table
        return 0

    return run


def _explain(p: argparse.ArgumentParser):
    p.add_argument("spec")
    p.add_argument("--dialect")

    def run(a: argparse.Namespace) -> int:
        print(explain(a.spec, a.dialect), end="")
        return 0

    return run


def explain(spec: str, dialect: str | None = None) -> str:
    """The formula of ``spec`` in plain text with every resolved option and the signature
    (:func:`receval.explaining.explain_text`), or a context option's values (:func:`explain_axis`)."""
    from .metrics import registered  # lazy: cost: numpy, polars (receval --version loads neither)
    from .options import CONTEXT_AXES  # lazy: cost: dataclasses, inspect (options), +18 modules, ~6 ms on receval --version

    if isinstance(spec, str) and spec.strip().lower() in CONTEXT_AXES and spec.strip().lower() not in registered():
        return explain_axis(spec.strip().lower())
    from .explaining import explain_text  # lazy: cost: numpy, polars (receval --version loads neither)

    return explain_text(spec, dialect)


def explain_axis(name: str) -> str:
    """``receval explain ties`` (any context option): what it decides, its values, and for
    ``ties`` the long form of the notes and refusals about ties."""
    from .options import CONTEXT_AXES, TIES_EXPLAINED  # lazy: cost: dataclasses, inspect (options)

    ax = CONTEXT_AXES[name]
    lines = [f"{name}  —  {ax.doc} (a context option: every metric reads it; default {ax.render(ax.default)})", ""]
    if name == "ties":
        lines += [textwrap.fill(TIES_EXPLAINED, 96), ""]
    lines.append("Values:")
    for value, meaning in ax.values.items():
        lines.append(textwrap.fill(meaning, 96, initial_indent=f"  {value}: ", subsequent_indent="      "))
    return "\n".join(lines) + "\n"


def _metrics(p: argparse.ArgumentParser):
    p.add_argument("pattern", nargs="?", metavar="PATTERN",
                   help="only the metrics whose name holds PATTERN, or matches it as a glob (ndcg, *rec*, 'pauc*')")
    p.add_argument("--format", choices=command_formats("metrics"), default="table",
                   help="table: one block per metric, at most 100 columns (or the terminal's width); markdown: one table")

    def run(a: argparse.Namespace) -> int:
        from .options import CONTEXT_AXES  # lazy: cost: dataclasses, inspect (options)

        chosen = matching_metrics(a.pattern)
        if a.format == "table":
            print(metrics_text(min(terminal_width() or 100, 100), pattern=a.pattern), end="")  # a narrower terminal: its width
            return 0
        rows = []
        for m in chosen:
            opts = "; ".join(
                f"{n}={'|'.join(ax.values) if ax.values else ('name' if ax.free else 'number')} (default {ax.render(ax.default)})"
                for n, ax in m.axes.items()
            )
            rows.append([m.name + ("@k" if m.needs_k else ""), m.summary, opts or "–"])
        print(render(["metric", "summary", "options"], rows, a.format), end="")
        ctx = [[n, ax.doc, "|".join(ax.values) if ax.values else "number or all", ax.render(ax.default)] for n, ax in CONTEXT_AXES.items()]
        print(render(["context option", "meaning", "values", "default"], ctx, a.format), end="")
        return 0

    return run


def matching_metrics(pattern: str | None) -> list[Any]:
    """The metrics whose name holds ``pattern`` (any case) or matches it as a glob; all when None.
    None matching is a :class:`~receval.errors.SpecError` naming the closest metric."""
    import fnmatch

    from .metrics import all_metrics  # lazy: cost: numpy, polars (receval --version loads neither)

    every = list(all_metrics())
    if pattern is None:
        return every
    p = pattern.strip().lower()
    chosen = [m for m in every if p in m.name.lower() or fnmatch.fnmatchcase(m.name.lower(), p)]
    if not chosen:
        near = closest(p, [m.name for m in every])
        raise SpecError(f"pass a part of a metric's name (or a glob such as '*rec*'): no metric matches {pattern!r}"
                        + (f"; did you mean '{near}'?" if near else "; `receval metrics` lists them all"))
    return chosen


def metrics_text(width: int = 100, pattern: str | None = None) -> str:
    """Every metric (``pattern``: those :func:`matching_metrics` keeps) as a block (name,
    summary, one wrapped entry per option), then the context options, in at most ``width``
    columns."""
    import textwrap

    from .options import CONTEXT_AXES  # lazy: cost: dataclasses, inspect (options)

    def wrap(text: str, indent: str, first: str | None = None) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first if first is not None else indent,
                             subsequent_indent=indent, break_on_hyphens=False) or [indent.rstrip()]

    def option(name: str, ax, lines: list[str]) -> None:
        default = ax.render(ax.default)
        if ax.values:
            values = " | ".join(v + (" (default)" if v == default else "") for v in ax.values)
        elif ax.free:
            values = f"a group name (default {default})"
        else:
            values = f"a number{' or all' if name == 'rel' else ''} (default {default})"
        lines.extend(wrap(values, " " * 18, f"  {name:<14}  "))
        lines.extend(wrap(ax.doc, " " * 18))

    lines: list[str] = []
    for m in matching_metrics(pattern):
        lines.append(m.name + ("@k" if m.needs_k else ""))
        lines.extend(wrap(m.summary.replace("``", ""), "  "))
        for name, ax in m.axes.items():
            option(name, ax, lines)
        lines.append("")
    lines.append("Context options (every metric reads them; a spec's own option wins):")
    for name, ax in CONTEXT_AXES.items():
        option(name, ax, lines)
    lines.append("")
    lines.extend(wrap("`receval explain SPEC` prints a metric's exact formula with every resolved option.", ""))
    return "\n".join(lines) + "\n"


def _dialects(p: argparse.ArgumentParser):
    p.add_argument("--format", choices=command_formats("dialects"), default="table")

    def run(a: argparse.Namespace) -> int:
        from .dialects import all_dialects  # lazy: cost: numpy, polars (dialects read the registry)

        rows = [
            [d.name, d.version + _version_marks(d), d.library, ", ".join(sorted(d.metrics)) or "all", d.source]
            for d in all_dialects()
        ]
        if a.format == "table":  # the terminal: sources one per line under the table, not as a wide column
            print(render(["dialect", "version", "library", "metrics"], [r[:4] for r in rows], "table"), end="")
            width = terminal_width()  # COLUMNS, else the terminal's; no limit when piped
            for r in rows:
                print("\n".join(wrap_text(f"{r[0]}@{r[1].split()[0]}: {r[4]}", width, "    ")))
            print("\n".join(wrap_text(DIALECT_DEFAULTS, width)))
        else:
            print(render(["dialect", "version", "library", "metrics", "source"], rows, a.format), end="")
        return 0

    return run


#: what a dialect name without a version means, printed under `receval dialects`
DIALECT_DEFAULTS = (
    "default: the version a name without '@version' means (the newest verified one: --dialect recbole is "
    "recbole@1.2.1); study: the version the RecSys'21 study ran, which `receval reproduce` names explicitly"
)


def _version_marks(d: Dialect) -> str:
    marks = [m for m, on in (("default", d.default and d.name != "standard"), ("study", d.study)) if on]
    return f" ({', '.join(marks)})" if marks else ""


# the commands of other modules: imported when the parser is built (compare.py imports polars),
# never for `receval --version`
def _delegated(name: str) -> Builder:
    """The builder of a command another module defines (its ``build_command``), imported only
    when the parser is built: each of those modules loads numpy and polars, ``--version`` neither."""
    def build(p: argparse.ArgumentParser):
        if name == "compare":
            from .compare import build_command  # lazy: cost: numpy, polars
        elif name == "reproduce":
            from .reproduce import build_command  # lazy: cost: numpy, polars
        elif name == "verify":
            from .verification import build_command  # lazy: cost: numpy, polars
        elif name == "ope":
            from .ope.cli import build_command  # lazy: cost: numpy, polars
        elif name == "audit":
            from .audit import build_command  # lazy: cost: numpy, polars
        elif name == "peers":
            from .adapters.peers import build_command  # lazy: cost: numpy, polars
        else:
            raise AssertionError(f"no command {name!r}")
        return build_command(p)
    return build


def _conformance(p: argparse.ArgumentParser):
    p.add_argument("action", choices=("export",), help="export: write the suite (JSON per metric, CSV inputs, index, README)")
    p.add_argument("dir", metavar="DIR", help="a new or empty folder")

    def run(a: argparse.Namespace) -> int:
        from .conformance.suite import export  # lazy: cost: dataclasses, importlib.resources, +31 modules on receval --version

        counts = export(a.dir)
        print(f"wrote {sum(counts.values())} conformance cases of {len(counts)} metrics to {a.dir} (see {a.dir}/README.md)")
        return 0

    return run


#: every command, in the order the help (and docs/reference/cli.md) lists them: name -> (help, builder)
COMMANDS: dict[str, tuple[str, Builder]] = {
    "evaluate": ("evaluate recommendations against a ground truth", _evaluate),
    "runs": ("evaluate several runs on one ground truth and compare them with paired statistics", _runs),
    "explain": ("print a metric's exact formula, resolved options and signature", _explain),
    "metrics": ("list every metric with its options and defaults", _metrics),
    "dialects": ("list the dialects with versions and sources", _dialects),
    "compare": ("evaluate as every library does: a row per dialect, a column per metric", _delegated("compare")),
    "reproduce": ("run the RecSys'21 study's protocol and print the consistency table", _delegated("reproduce")),
    "verify": ("recompute a published JSON result from its signatures and check its data fingerprints", _delegated("verify")),
    "conformance": ("export the conformance suite: cases with their expected values, for any implementation", _conformance),
    "ope": ("offline A/B test: estimate target policies' online value from a logged policy's log (IPS, SNIPS, DR, ...)", _delegated("ope")),
    "audit": ("find which definition of a metric an implementation computes, on the conformance suite", _delegated("audit")),
    "peers": ("build or list the peer envs: the pinned virtual environments the adapters run libraries in", _delegated("peers")),
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="receval", description="Exact, signed, reproducible recommender evaluation.")
    parser.add_argument("--version", action="version", version=f"receval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_, build) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(run=build(sp))
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse with receval's one-line errors: ``receval: error: evaluate: ...`` and exit
    status 2, no usage block (``receval COMMAND --help`` prints it). Subcommand parsers are of
    this class too (argparse makes them of the parent's class)."""

    def error(self, message: str):  # type: ignore[override]
        command = self.prog.partition(" ")[2]
        where = f"{command}: " if command else ""
        print(f"receval: error: {one_line(where + message)} (see 'receval {command + ' ' if command else ''}--help')",
              file=sys.stderr)
        raise SystemExit(2)


def _fail(message: object) -> int:
    print(f"receval: error: {one_line(message)}", file=sys.stderr)
    return 2


def _tolerant_output() -> None:
    """Output that cannot be encoded (``α`` or ``—`` on an ASCII or Latin-1 stdout, e.g.
    ``PYTHONIOENCODING=latin-1``) is written with ``?`` in its place, not a traceback."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
        if not encoding or errors != "strict" or not hasattr(stream, "reconfigure"):
            continue
        try:
            if codecs.lookup(encoding).name.startswith("utf"):
                continue
            stream.reconfigure(errors="replace")
        except (LookupError, ValueError, OSError):  # pragma: no cover - an exotic stream
            continue


def _environment() -> dict[str, str | None]:
    """Environment variables that would crash a dependency, set aside for this run (the
    previous values are returned to be restored):

    - ``POLARS_MAX_THREADS=0``: polars panics ("Worker threads cannot be set to 0"); it is
      ignored with a warning, as polars itself ignores a value that is not a number;
    - ``MPLBACKEND``: any value (``nonsense`` fails matplotlib's import) is replaced by ``agg``
      for this run: the command line only writes figure files, which every backend writes alike.
    """
    saved: dict[str, str | None] = {}
    threads = os.environ.get("POLARS_MAX_THREADS")
    if threads is not None and re.fullmatch(r"\+?[0-9]+", threads) and int(threads) == 0:
        saved["POLARS_MAX_THREADS"] = os.environ.pop("POLARS_MAX_THREADS")
        print(f"receval: warning: POLARS_MAX_THREADS={threads} is not a number of threads; ignored (polars uses every "
              "core; set it to 1 or more to limit them)", file=sys.stderr)
    if "MPLBACKEND" in os.environ and "matplotlib" not in sys.modules:
        saved["MPLBACKEND"] = os.environ["MPLBACKEND"]
        os.environ["MPLBACKEND"] = "agg"
    return saved


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _one_line_warnings(notes: list[str] | None = None) -> None:
    """receval's warnings on stderr as one line each (``receval: warning: ...``), no source line;
    its notes (``receval: note: ...``) into ``notes``, said once the command has succeeded (a
    refused command says only its error)."""
    import warnings

    show = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        if issubclass(category, RecevalNote):
            line = f"receval: note: {one_line(message)}"
            if notes is None:
                print(line, file=sys.stderr)
            elif line not in notes:
                notes.append(line)
        elif issubclass(category, RecevalWarning):
            print(f"receval: warning: {one_line(message)}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if args_in == ["--version"]:  # without loading the commands (and polars): ~0.1 s
        print(f"receval {__version__}")
        return 0
    _tolerant_output()
    saved = _environment()
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version exit 0 as argparse does; a usage error returns 2
            if exc.code in (0, None):
                raise
            return exc.code if isinstance(exc.code, int) else 2
        notes: list[str] = []
        _one_line_warnings(notes)
        try:
            code = int(args.run(args) or 0)
            if code == 0 and notes:
                print("\n".join(notes), file=sys.stderr)
            return code
        except RecevalError as exc:
            return _fail(exc)
        except BrokenPipeError:  # pragma: no cover
            return 0
        except OSError as exc:  # a file that cannot be read or written (not found, permission, not a folder, ...)
            return _fail(exc)
    finally:
        _restore(saved)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["main", "explain", "build_parser", "COMMANDS", "add_column_args", "add_context_args", "column_kwargs", "context_kwargs", "Path"]
