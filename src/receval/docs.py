"""Generate the metric and dialect reference (docs/metrics.md, docs/dialects.md) from the registry.

``python -m receval.docs docs/`` rewrites both files; a test checks that the committed files
equal what this module generates, so the docs cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .options import CONTEXT_AXES
from .metrics import all_metrics


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def metrics_markdown() -> str:
    out = ["# Metrics", "", "Generated from the registry by `python -m receval.docs docs/`; do not edit by hand.", ""]
    out += ["## Context options (read by every metric unless stated)", ""]
    out += ["| option | default | values |", "|---|---|---|"]
    for name, ax in CONTEXT_AXES.items():
        vals = "; ".join(f"`{v}`: {d}" for v, d in ax.values.items()) if ax.values else ax.doc
        out.append(f"| `{name}` | `{ax.render(ax.default)}` | {_cell(vals)} |")
    out.append("")
    for m in all_metrics():
        out += [f"## `{m.name}`" + ("`@k`" if m.needs_k else ""), "", m.doc, ""]
        if m.axes:
            out += ["| option | signature key | default | values |", "|---|---|---|---|"]
            for name, ax in m.axes.items():
                vals = "; ".join(f"`{v}`: {d}" for v, d in ax.values.items()) if ax.values else ax.doc
                out.append(f"| `{name}` | `{ax.key}` | `{ax.render(ax.default)}` | {_cell(vals)} |")
            out.append("")
        ctx = ", ".join(f"`{c}`" for c in m.context) or "none"
        out += [f"Context options read: {ctx}.", ""]
    from . import sampled

    out += ["## Sampled-negative evaluation (`receval.sampled.sampled_evaluate`)", "", sampled.__doc__.strip(), ""]
    return "\n".join(out).rstrip() + "\n"


def dialects_markdown() -> str:
    from .dialects import all_dialects

    out = ["# Dialects", "", "Generated from `src/receval/dialects/*.toml` by `python -m receval.docs docs/`.", ""]
    for d in all_dialects():
        out += [f"## `{d.label}` — {d.library} {d.version}" + (" (default version)" if d.default and d.name != "standard" else ""), ""]
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


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name, text in (("metrics.md", metrics_markdown()), ("dialects.md", dialects_markdown())):
        path = folder / name
        path.write_text(text, encoding="utf-8")
        files.append(path)
    return files


if __name__ == "__main__":  # pragma: no cover
    for p in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs")):
        print(p)
