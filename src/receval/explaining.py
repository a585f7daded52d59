"""``receval explain SPEC`` as text: the formula in plain text, how a dialect differs, every
resolved option and the signature, fitted to the width it is printed at (issue 34)."""

from __future__ import annotations

from . import metrics  # noqa: F401  (the registry, loaded)
from ._version import __version__
from .dialects import Dialect, load_dialect
from .options import CONTRACT, ties_note
from .plaintext import fill, reflow
from .report import resolve_width
from .resolve import resolve
from .signature import make_signature
from .spec import alias_note

MAP_DENOMINATOR_WARNING = (
    "Warning: this MAP divides by min(k,|R|) (receval's default); trec_eval, ranx and RecTools "
    "divide by |R|: write map(denominator=r)@k or use --dialect trec_eval / ranx / rectools to match them."
)


def explain_text(spec: str, dialect: str | None = None, width: int | None | str = "terminal") -> str:
    """``receval explain SPEC``: the formula of ``spec`` in plain text (how ``dialect``
    differs from the standard first), every resolved option and the signature, in lines of at
    most ``width`` columns (``"terminal"``: :func:`receval.report.terminal_width`; None: no
    limit, a paragraph a line). Paragraphs are re-flowed (:func:`receval.plaintext.reflow`),
    an entry's later lines indented under its text; formula lines and the signature are never
    broken (a signature is copied whole). An option the other options leave unread (``neg``
    with ``gain=binary``) is shown as ``–  [not read]`` with what it would decide."""
    w = resolve_width(width)  # type: ignore[arg-type]
    d = dialect if isinstance(dialect, Dialect) or dialect is None else (
        None if dialect == "standard" else load_dialect(dialect))
    r = resolve(spec, dialect=d)
    m = r.metric
    lines = [*fill(f"{r.spec}  —  {m.summary}", w, "", "  "), ""]
    said = alias_note(spec) if isinstance(spec, str) else None
    if said:  # an ir_measures / trec_eval name (P@10), or a receval name written in another tool's case
        lines += [*fill(said, w), ""]
    if d is not None:  # what a reader of --dialect came for first: how the library differs, with its source
        diffs = d.differences(m.name, r.k)
        lines += fill(f"How {d.library} {d.version} differs from the standard definition:", w)
        if not diffs:
            lines.append("  no option differs: the standard definition")
        for name, std, val, meaning in diffs:
            axis = m.axis(name)
            lines += fill(f"{name}: {axis.render(std)} -> {axis.render(val)}  ({meaning})", w, "  ", "    ")
        entry = d.metrics.get(d.entry_name(m.name, r.k))
        if entry is not None:
            if entry.note:
                lines += fill(f"note: {entry.note}", w, "  ", "    ")
            if entry.source:
                lines += fill(f"source: {entry.source}", w, "  ", "    ")
        lines.append("")
    lines += ["Formula (exact LaTeX in docs/metrics.md):", reflow(m.formula(), w, "  "), ""]
    lines.append("Resolved options:")
    for name, axis in m.all_axes().items():
        value = r.options.get(name)
        if name == "t" and value is None:
            continue
        src = "spec" if name in r.spec.opts else ("dialect" if d is not None and name in d.options_for(m.name, r.k) else "default")
        if value is None and axis.default is not None:  # settled away: these options leave it nothing to decide
            text = f"{name} = –  [not read]  not read with these options; it decides {axis.doc}"
        else:
            meaning = (axis.values.get(str(value), "") if axis.values else "") or axis.doc
            text = f"{name} = {axis.render(value)}  [{src}]  {meaning}"
        lines += fill(text, w, "  ", "      ")
    if m.name == "map" and r.options.get("denominator") == "min_k_r":
        lines += ["", *fill(MAP_DENOMINATOR_WARNING, w)]
    note = ties_note(r.options, r.settle)
    lines += ["", "Contract:", *fill(CONTRACT, w, "  ")]
    if note:
        lines += fill(note, w, "  ")
    lines += ["", "Signature:", "  " + make_signature(r, __version__)]
    return "\n".join(lines) + "\n"


__all__ = ["explain_text", "MAP_DENOMINATOR_WARNING"]
