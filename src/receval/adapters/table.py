"""The audit table (``docs/audit-table.md``): per library version, each of its metrics and the
receval definition it computes.

    python -m receval.adapters.table docs/audit-table.md           # from the parity-verified specs
    python -m receval.adapters.table docs/audit-table.md --audit   # run receval audit on every adapter

Two sources fill the table. By default, the catalogue of :mod:`receval.adapters`: for each peer
metric the receval spec that the parity tests (``tests/parity/test_parity*.py``) found equal to it,
mean and per user to 1e-9 on generated data, under the library's dialect; this needs no library.
With ``--audit``, :func:`receval.audit.audit` runs each metric of each adapter whose library is
available on the conformance suite and the table shows what it matched (or the closest definition);
metrics it cannot run keep their parity row. Either way the definition is written out in
receval's standard terms: the options (the dialect's and the spec's) that differ from the defaults.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from receval import adapters
from receval.dialects import load_dialect
from receval.metrics import get_metric
from receval.spec import parse_spec

#: the cut-off written in the table for a metric with one
K = "k"


@dataclass(frozen=True)
class Row:
    peer: str
    metric: str
    definition: str  # the receval spec ("" = not compared)
    differs: str  # the options that differ from receval's standard, "a=b, c=d"
    source: str  # "parity", "audit: match", "audit: no match (closest)", "not compared"


def resolved_options(spec: str, dialect: str | None) -> dict[str, str]:
    """The options of ``spec`` under ``dialect`` that differ from receval's defaults."""
    s = parse_spec(spec)
    m = get_metric(s.name)
    opts: dict[str, Any] = {}
    if dialect is not None:
        opts.update(load_dialect(dialect).options_for(s.name, s.k))
    for key, value in s.opts.items():
        opts[key] = m.axis(key).parse(value) if isinstance(value, str) else value
    out = {}
    for key, value in opts.items():
        if value != m.axis(key).default:
            out[key] = str(value)
    return dict(sorted(out.items()))


def _fmt_spec(spec: str, whole: bool) -> str:
    text = spec.replace("{k}", K)
    return text + " (k ≥ every list)" if whole and "{k}" in spec else text


def parity_rows(adapter: Any) -> list[Row]:
    """The table rows from the catalogue's parity-verified specs."""
    rows = []
    for pm in adapter.metrics:
        shown = f"{pm.name}@k" if pm.cut else pm.name
        if pm.cut and pm.whole:
            shown = f"{pm.name}@k, {pm.name}"
        if pm.spec is None:
            rows.append(Row(shown, pm.metric, "", "", "not compared"))
            continue
        differs = resolved_options(pm.spec.format(k=10), adapter.dialect)
        rows.append(Row(shown, pm.metric, _fmt_spec(pm.spec, pm.whole and not pm.cut),
                        ", ".join(f"{a}={v}" for a, v in differs.items()) or "none", "parity"))
    return rows


def audit_rows(adapter: Any) -> list[Row]:
    """The table rows from :func:`receval.audit.audit` on the conformance suite (the parity rows
    where the audit cannot run)."""
    from receval.audit import audit  # lazy: optional: the audit engine (issue 24) may be absent (ImportError); main --audit then keeps the parity rows

    rows = []
    base = {pm.name: r for pm, r in zip(adapter.metrics, parity_rows(adapter))}  # by the peer's own name (it may hold a comma)
    for peer, (metric, impl) in adapter.implementations().items():
        try:
            rep = audit(impl, metric)
        except Exception as exc:  # noqa: BLE001  (no case of the metric, a missing env: keep the parity row)
            r = base[peer]
            rows.append(Row(r.peer, r.metric, r.definition, r.differs, f"{r.source} (audit: {str(exc).splitlines()[0][:80]})"))
            continue
        status = getattr(rep, "status", "?")
        definition = getattr(rep, "definition", None) or ""
        opts = getattr(rep, "options", {}) or {}
        label = "audit: match" if status == "match" else f"audit: {status}" + (" (closest)" if definition else "")
        dialects = getattr(rep, "dialects", []) or []
        if dialects:
            label += f"; dialects {', '.join(dialects)}"
        rows.append(Row(base[peer].peer, metric, definition, ", ".join(f"{a}={v}" for a, v in opts.items()) or "none", label))
    return rows


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(use_audit: bool = False) -> str:
    """The whole page."""
    lines = [
        "# Audit table",
        "",
        "What each metric of each library computes, in receval's terms: per library version, every",
        "metric name the library offers (as its adapter in `receval.adapters` emits it) and the receval",
        "definition it matches. *Definition* is the receval spec, evaluated under the library's dialect;",
        "*differs from the standard* spells that out: every option (of the dialect and of the spec) whose",
        "value is not receval's default, so a row reads without the dialect file. A metric is *compared*",
        "when the parity tests run the real library (in its pinned peer env) on generated data and find",
        "the definition equal to it, mean and per user, to 1e-9 (torchmetrics: float32, 1e-6; MLlib: means",
        "only); *not compared* rows are metrics the adapter runs but no test has pinned down yet: audit",
        "them with `receval audit`.",
        "",
        "In the spirit of the table of the RecSys'21 study (Tamm, Damdinov, Vasilev: *Quality Metrics in",
        "Recommender Systems: Do We Calculate Metrics Consistently?*), one library version per section.",
        "",
        "Regenerate with `python -m receval.adapters.table docs/audit-table.md` (from the parity specs, no",
        "library needed) or with `--audit` (runs `receval audit` on every adapter whose library is",
        "installed). " + ("This page: `--audit`." if use_audit else "This page: the parity specs."),
        "",
    ]
    for name in adapters.names():
        a = adapters.get(name)
        rows = None
        if use_audit:
            try:
                rows = audit_rows(a)
            except ImportError:
                rows = None
        if rows is None:
            rows = parity_rows(a)
        dialect = f"dialect `{a.dialect}`" if a.dialect else "receval's standard definitions (no dialect)"
        where = "in-process (pyspark, local mode)" if a.env == "local" else f"peer env `{a.env}`"
        lines += [f"## {a.library} {a.pinned}", "",
                  f"Adapter `{name}`, {where}; {dialect}.", "",
                  "| metric | receval metric | definition | differs from the standard | evidence |",
                  "|---|---|---|---|---|"]
        for r in rows:
            definition = f"`{_esc(r.definition)}`" if r.definition else "—"
            differs = _esc(r.differs) if r.differs else "—"
            lines.append(f"| `{_esc(r.peer)}` | {r.metric} | {definition} | {differs} | {r.source} |")
        notes = dict.fromkeys(pm.note for pm in a.metrics if pm.note)
        for note in notes:
            which = ", ".join(f"`{pm.name}`" for pm in a.metrics if pm.note == note)
            lines += ["", f"{which}: {note}."]
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m receval.adapters.table", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="the page to write (default: print it)")
    ap.add_argument("--audit", action="store_true", help="run receval audit on every available adapter")
    a = ap.parse_args(argv)
    if a.audit:
        try:
            import receval.audit  # lazy: optional: the audit engine may be absent; the table then keeps the parity rows  # noqa: F401
        except ImportError:
            print("receval.audit is not available: the table is filled from the parity specs", file=sys.stderr)
            a.audit = False
    text = markdown(use_audit=a.audit)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
