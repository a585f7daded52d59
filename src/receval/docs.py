"""Generate the metric and dialect reference (docs/metrics.md, docs/dialects.md) from the registry.

``python -m receval.docs docs/`` rewrites both files; a test checks that the committed files
equal what this module generates, so the docs cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import sampled
from .cli import build_parser
from .dialects import all_dialects
from .metrics import all_metrics
from .options import CONTEXT_AXES
from .registry import ALIAS_CASES, ALIASES, CASE_COLLISIONS, NOT_OFFERED, TREC_EVAL_CUTS, WHOLE_LIST
from .spec import ALL, parse_spec


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def rst_to_markdown(doc: str) -> str:
    r"""A metric docstring (reST with LaTeX) as Markdown for the docs site: ``.. math::``
    blocks become ``$$ ... $$`` display math, ``:math:`x``` inline ``$x$``, ``Formula`` /
    ``-------`` section titles bold paragraphs, doctest lines a ``pycon`` code block and
    ````literals```` single-backtick code.

    >>> print(rst_to_markdown("Formula\n-------\n.. math:: \\frac{1}{D}\n\nwith :math:`D` and ``k``"))
    **Formula**
    <BLANKLINE>
    $$
    \frac{1}{D}
    $$
    <BLANKLINE>
    with $D$ and `k`
    >>> rst_to_markdown("Examples\n--------\n" + chr(62) * 3 + " 1 + 1\n2").splitlines()[2:]
    ['```pycon', '>>> 1 + 1', '2', '```']
    """
    import re
    import textwrap

    lines = doc.splitlines()
    out: list[str] = []
    i = 0

    def inline(text: str) -> str:
        text = re.sub(r":math:`([^`]*)`", lambda m: f"${m.group(1).strip()}$", text)
        return re.sub(r"``([^`]+)``", r"`\1`", text)

    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"-{3,}|={3,}|~{3,}", nxt.strip()) and len(nxt.strip()) >= len(line.strip()):
            out += [f"**{line.strip()}**", ""]
            i += 2
            continue
        if line.lstrip().startswith(".. math::"):
            first = line.split("::", 1)[1].strip()
            block = [first] if first else []
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                body.append(lines[i])
                i += 1
            block += textwrap.dedent("\n".join(body)).strip("\n").splitlines() if any(b.strip() for b in body) else []
            if out and out[-1] != "":
                out.append("")
            out += ["$$", *block, "$$", ""]
            continue
        if line.lstrip().startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i].strip() if lines[i].lstrip().startswith(("...", ">>>")) else lines[i])
                i += 1
            if out and out[-1] != "":
                out.append("")
            out += ["```pycon", *block, "```", ""]
            continue
        out.append(inline(line))
        i += 1
    while out and out[-1] == "":
        out.pop()
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text)


def _values(ax) -> str:
    """An option's values with their meaning (an old spelling named after it), or its doc."""
    if not ax.values:
        return ax.doc
    old = {v: [a for a, t in ax.aliases.items() if t == v] for v in ax.values}
    return "; ".join(f"`{v}`" + (f" (old spelling {', '.join(f'`{a}`' for a in old[v])})" if old[v] else "") + f": {d}"
                     for v, d in ax.values.items())


def metrics_markdown() -> str:
    out = ["# Metrics", "", "Generated from the registry by `python -m receval.docs docs/`; do not edit by hand.", ""]
    out += ["## Context options (read by every metric unless stated)", ""]
    out += ["| option | default | values |", "|---|---|---|"]
    for name, ax in CONTEXT_AXES.items():
        out.append(f"| `{name}` | `{ax.render(ax.default)}` | {_cell(_values(ax))} |")
    out.append("")
    out += ties_markdown()
    out += aliases_markdown()
    for m in all_metrics():
        out += [f"## `{m.name}" + ("@k" if m.needs_k else "") + "`", "", rst_to_markdown(m.doc), ""]
        if m.axes:
            out += ["| option | signature key | default | values |", "|---|---|---|---|"]
            for name, ax in m.axes.items():
                out.append(f"| `{name}` | `{ax.key}` | `{ax.render(ax.default)}` | {_cell(_values(ax))} |")
            out.append("")
        if m.name in WHOLE_LIST:
            implied = "".join(f" ({key}={value}: over the whole list)" for key, value in WHOLE_LIST[m.name].items())
            out += [f"Written without a cut-off (`{m.name}`), it is read over each user's whole list: "
                    f"`{m.name}@all`{implied}.", ""]
        ctx = ", ".join(f"`{c}`" for c in m.context) or "none"
        out += [f"Context options read: {ctx}.", ""]
    out += ["## Sampled-negative evaluation (`receval.sampled.sampled_evaluate`)", "", sampled.__doc__.strip(), ""]
    return "\n".join(out).rstrip() + "\n"


def aliases_markdown() -> list[str]:
    """The section 'Names of other tools': the ir_measures / trec_eval measure names receval
    reads, and the receval spec each resolves to (:data:`receval.registry.ALIASES`)."""
    out = ["## Names of other tools (ir_measures, trec_eval)", ""]
    out += ["ir_measures' names mean trec_eval's definitions, so each name below resolves to the receval metric "
            "with every option of the `trec_eval` dialect written into the spec (relevance `rel=1`, trec_eval's tie "
            "rule `ties=text_desc`, its user set): the value equals trec_eval's whatever `--dialect` the call names, "
            "and the signature records the resolved spec. The case of a name matters: `AP` is the alias, `ap` is "
            "not a metric. `receval explain P@10` says whose name it is and what it means. ir_measures' `rel` "
            "parameter is receval's `rel` (`P(rel=2)@10`); other options in the parentheses are receval's. "
            f"A name written without a cut-off where trec_eval has none (`AP`, `RR`, `nDCG`, `recip_rank`) is the "
            f"whole ranking, written `@{ALL}`. Each result is keyed by the name as written (`nDCG@10`); its "
            "signature holds the resolved definition, and evaluating the name says in one note what it means.", ""]
    out += ["| name | tool | means | receval spec |", "|---|---|---|---|"]
    examples = {"needs": "@10", "optional": "@10", "whole": "", "none": ""}
    for a in ALIASES.values():
        written = a.name + examples[a.cut]
        out.append(f"| `{written}` | {a.tool} | {_cell(a.means)} | `{parse_spec(written)}` |")
        if a.cut == "optional":
            out.append(f"| `{a.name}` | {a.tool} | the same, whole ranking | `{parse_spec(a.name)}` |")
    for a in TREC_EVAL_CUTS.values():
        written = f"{a.name}_10"
        out.append(f"| `{written}` | {a.tool} | {_cell(a.means)} | `{parse_spec(written)}` |")
    out.append("")
    for name, text in ALIAS_CASES.items():
        out += [f"`{name}` is an alias in this exact case only: {text}.", ""]
    out += ["Names that are a receval metric in another case stay receval's (receval reads its names in any case); "
            "what the other tool means by them:", ""]
    for name, text in CASE_COLLISIONS.items():
        out.append(f"- `{name}`: {text}")
    for name, text in NOT_OFFERED.items():
        out.append(f"- `{name.capitalize()}`: {text}")
    out.append("")
    return out


def ties_markdown() -> list[str]:
    """The section 'Ties by metric': how each metric meets ``ties=average`` and its other
    declared traits, from the registry (:class:`receval.registry.Metric`)."""
    out = ["## Ties by metric", ""]
    out += ["How each metric meets `ties=average` (the default `ties`), its direction and its range under the "
            "default options, as each metric declares them at registration:", ""]
    out += ["| metric | `ties=average` | better | range |", "|---|---|---|---|"]
    for m in all_metrics():
        lo_hi = "—" if m.bounds is None else "[" + ", ".join(_bound(b) for b in m.bounds) + (")" if m.bounds[1] == float("inf") else "]")
        out.append(f"| `{m.name}` | {_cell(m.ties_label())} | {'higher' if m.higher_is_better else 'lower'} | {lo_hi} |")
    out.append("")
    return out


def _bound(b: float) -> str:
    return "∞" if b == float("inf") else "−∞" if b == float("-inf") else f"{b:g}"


def dialects_markdown() -> str:
    out = ["# Dialects", "", "Generated from `src/receval/dialects/*.toml` by `python -m receval.docs docs/`.", "",
           "A dialect is how one library, at one version, computes each metric, written as receval options: the "
           "same recommendations evaluated under it give that library's number, with a signature that says so.", "",
           "A name without a version means the library's *default version*, the newest verified one: "
           "`--dialect recbole` is `recbole@1.2.1`, `--dialect replay` is `replay@0.22.0`. Write the version to pin "
           "another (`--dialect recbole@0.2.1`). The *study version* of each library is the one the RecSys'21 "
           "consistency study ran; `receval reproduce` names those versions explicitly.", ""]
    for d in all_dialects():
        marks = [m for m, on in (("default version", d.default and d.name != "standard"), ("study version", d.study)) if on]
        out += [f"## `{d.label}` — {d.library} {d.version}" + (f" ({', '.join(marks)})" if marks else ""), ""]
        if d.source:
            out.append(f"Source: {d.source}")
        if d.note:
            out.append(f"\n{d.note}")
        if d.context:
            out.append("\nContext: " + ", ".join(f"`{k}={v}`" for k, v in d.context.items()))
        if d.metrics:
            out += ["", "| metric | options | source | note |", "|---|---|---|---|"]
            for name, e in sorted(d.metrics.items()):
                opts = ", ".join(f"`{k}={v}`" for k, v in e.options.items()) or "standard"
                out.append(f"| `{name}` | {opts} | {_cell(e.source)} | {_cell(e.note)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def cli_markdown() -> str:
    """The command line reference: ``receval -h`` and each command's help, at 100 columns."""
    import argparse
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        out = ["# Command line", "", "Generated from the argument parser by `python -m receval.docs docs/`.", ""]
        out += ["```text", parser.format_help().rstrip(), "```", ""]
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, sp in sub.choices.items():
            out += [f"## `receval {name}`", "", "```text", sp.format_help().rstrip(), "```", ""]
            for inner in (a for a in sp._actions if isinstance(a, argparse._SubParsersAction)):
                for action, ssp in inner.choices.items():  # a command's own commands (receval peers build)
                    out += [f"### `receval {name} {action}`", "", "```text", ssp.format_help().rstrip(), "```", ""]
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(out).rstrip() + "\n"


GENERATED = {"metrics.md": metrics_markdown, "dialects.md": dialects_markdown, "reference/cli.md": cli_markdown}


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name, make in GENERATED.items():
        text = make()
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        files.append(path)
    return files


if __name__ == "__main__":  # pragma: no cover
    for p in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs")):
        print(p)
