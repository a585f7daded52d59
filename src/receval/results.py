"""Results: values by spec, per-user values, signatures, exports."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import polars as pl

from ._mapping import DictView
from .errors import RecevalError, SpecError
from .outputs import atomic_write, check_new_file, not_an_input, per_user_format, spark_mode
from .report import (LATEX_FITS, LATEX_SIGNATURES, Width, fingerprint_footer, fmt_num, html_display, html_fingerprints,
                     html_signature, html_signatures, latex_cell, latex_float, latex_label, latex_signature_notes, render,
                     resolve_width, shared_fields, signature_lines, text_table, wrap_text)
from .spec import Spec, parse_spec


class LazyFingerprints(DictView[str, str]):
    """The fingerprints of the inputs as read, computed on first access (then kept)."""

    def __init__(self, compute: Callable[[], dict[str, str]]) -> None:
        self._compute: Callable[[], dict[str, str]] | None = compute
        self._value: dict[str, str] = {}

    def _items(self) -> dict[str, str]:
        if self._compute is not None:
            self._value, self._compute = dict(self._compute()), None
        return self._value

    def __repr__(self) -> str:
        return repr(self._items())


@dataclass
class Entry:
    metric: str  # canonical spec as asked
    value: float
    signature: str
    users: int  # users averaged (0 for aggregate metrics)
    skipped: int = 0
    per_user: np.ndarray | None = None  # [U] with NaN for users left out
    dialect: str = "standard"
    asked: str = ""  # the spec as asked, in the standard canonical form


@dataclass
class Results:
    """What :func:`receval.evaluate` returns: values by canonical spec, their signatures,
    per-user values and exports.

    Examples
    --------
    >>> from receval.examples import WORKED_RECS, WORKED_TRUTH
    >>> from receval import evaluate
    >>> res = evaluate(WORKED_RECS, WORKED_TRUTH, ["ndcg@4", "precision@2"])
    >>> res["precision@2"]
    0.5
    >>> res.signature("precision@2").split("|")[:2]
    ['precision@2', 'den:k']
    >>> sorted(res.fingerprints)          # what the values were computed on (receval.fingerprint)
    ['recs', 'truth']
    """

    entries: list[Entry]
    user_ids: np.ndarray
    version: str
    info: dict[str, Any] = field(default_factory=dict)
    #: on Spark: the per-user values as a Spark DataFrame (user, one column per spec), never collected
    spark_per_user: Any = field(default=None, compare=False, repr=False)
    #: writes ``spark_per_user`` to a path (set by the Spark backend)
    spark_writer: Any = field(default=None, compare=False, repr=False)
    #: the inputs given as paths (set by :func:`receval.evaluate`): never written by write_per_user
    inputs: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: input name (``recs``, ``truth``, ``train``, ...) -> its order-free content fingerprint
    #: (:mod:`receval.fingerprint`); empty when the engine records none (Spark). The in-memory
    #: engine hashes the inputs it read on first access (:class:`LazyFingerprints`), so an
    #: evaluation whose fingerprints nobody reads does not pay for them
    fingerprints: Mapping[str, str] = field(default_factory=dict)

    def _entry(self, spec: str | Spec) -> Entry:
        key = spec if isinstance(spec, str) and spec in self.keys() else str(parse_spec(spec))
        for e in self.entries:
            if e.metric == key:
                return e
        for e in self.entries:  # under a dialect the key may differ from the spec as written
            if e.asked == key:
                return e
        raise SpecError(f"no result for '{spec}'; computed: {', '.join(self.keys())}")

    def keys(self) -> list[str]:
        return [e.metric for e in self.entries]

    def __getitem__(self, spec: str | Spec) -> float:
        return self._entry(spec).value

    def value(self, spec: str | Spec) -> float:
        return self._entry(spec).value

    def signature(self, spec: str | Spec) -> str:
        return self._entry(spec).signature

    @property
    def values(self) -> dict[str, float]:
        return {e.metric: e.value for e in self.entries}

    @property
    def signatures(self) -> dict[str, str]:
        return {e.metric: e.signature for e in self.entries}

    def per_user(self) -> pl.DataFrame:
        """One row per truth user, one column per per-user metric (null where left out).

        A Spark evaluation keeps its per-user values in Spark: use ``spark_per_user`` (a Spark
        DataFrame) or :meth:`write_per_user`."""
        if self.spark_per_user is not None:
            raise RecevalError(
                "per-user values of a Spark evaluation stay in Spark: use results.spark_per_user (a Spark DataFrame) "
                "or results.write_per_user(path), or collect them yourself with results.spark_per_user.toPandas()"
            )
        cols: dict[str, Any] = {"user_id": self.user_ids}
        for e in self.entries:
            if e.per_user is not None:
                cols[e.metric] = pl.Series(e.metric, e.per_user, nan_to_null=True)
        return pl.DataFrame(cols)

    def write_per_user(self, path: str, overwrite: bool = False) -> None:
        """Write the per-user values to ``path`` in the format its extension names: .csv,
        .tsv, .parquet/.pq or .json (rows as objects); any other extension is refused.

        An existing file is replaced only with ``overwrite=True``. On Spark, Spark writes them
        (a directory of part files; nothing is collected), and an existing directory is
        replaced only with ``overwrite=True`` and only when it is an earlier Spark output."""
        fmt = per_user_format(path)
        not_an_input(path, self.inputs, "per-user file")  # as files: a hard link or a symlink to an input too
        if self.spark_per_user is not None:
            self.spark_writer(self.spark_per_user, str(path), fmt, spark_mode(path, overwrite))
            return
        check_new_file(path, overwrite, "per-user file")
        frame = self.per_user()
        with atomic_write(path, "wb", what="per-user file") as f:  # whole or not at all
            if fmt == "parquet":
                frame.write_parquet(f)
            elif fmt == "json":
                frame.write_json(f)  # type: ignore[call-overload]  # a binary file object
            else:
                frame.write_csv(f, separator="\t" if fmt == "tsv" else ",")

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: version, results (metric, value, signature, users) and the
        fingerprints of the inputs (``receval verify`` checks a document against its files)."""
        return {
            "version": self.version,
            "results": [
                {"metric": e.metric, "value": _json_float(e.value), "signature": e.signature, "users": e.users}
                for e in self.entries
            ],
            "fingerprints": dict(self.fingerprints),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "metric": [e.metric for e in self.entries],
                "value": [e.value for e in self.entries],
                "users": [e.users for e in self.entries],
                "signature": [e.signature for e in self.entries],
            }
        )

    def render(self, fmt: str = "table", *, width: Width = "terminal", digits: int = 4, title: str = "",
               label: str | None = None, fit: str = "shrink", signatures: str = "short") -> str:
        r"""The results as ``receval evaluate --format FMT`` prints them: ``"table"`` (the
        terminal; ``width`` as in :func:`receval.report.render`, the signatures in their short
        form when they do not fit), ``"markdown"``, ``"latex"``, ``"csv"``, ``"json"``
        (:meth:`to_json`) or ``"trec"`` (trec_eval's summary lines), with the data's short
        fingerprints under the table.

        LaTeX: a ``table`` float (``\usepackage{booktabs,graphicx}``) with a caption
        (``title``), a ``\label`` (``label``, default ``tab:receval``), fitted to
        ``\linewidth`` as ``fit`` says and the signatures in a note under the table (short by
        default), as :func:`receval.tables.render_table` does.

        >>> from receval.examples import WORKED_RECS, WORKED_TRUTH
        >>> from receval import evaluate
        >>> res = evaluate(WORKED_RECS, WORKED_TRUTH, ["precision@2"])
        >>> print(res.render("csv"), end="")  # doctest: +ELLIPSIS
        metric,value,users,signature
        precision@2,0.5,1,precision@2|den:k|...
        """
        if fmt == "json":
            return self.to_json() + "\n"
        if fmt == "trec":  # trec_eval's summary lines: measure, "all", value
            return "".join(f"{e.metric:<22}\tall\t{e.value:.4f}\n" for e in self.entries)
        if fmt == "latex":
            return self._latex(digits, title, label, fit, signatures) + fingerprint_footer(self.fingerprints, fmt)
        if fmt != "table":
            rows = [[e.metric, e.value, e.users if fmt == "csv" else _users(e), e.signature] for e in self.entries]
            return render(["metric", "value", "users", "signature"], rows, fmt, digits=digits) + \
                fingerprint_footer(self.fingerprints, fmt)
        limit = resolve_width(width)
        out = render(["metric", "value", "users"], [[e.metric, e.value, _users(e)] for e in self.entries], "table",
                     digits=digits, width=limit)
        lines = [f"{e.metric} = {_num(e.value, digits)}  {e.signature}" for e in self.entries]
        if limit is not None and any(len(x) > limit for x in lines):
            lines = signature_lines([e.signature for e in self.entries], limit)
        footer = fingerprint_footer(self.fingerprints, fmt).rstrip("\n")
        if footer:
            lines += wrap_text(footer, limit, "  ")
        return out + "".join(x + "\n" for x in lines)

    def _latex(self, digits: int, title: str, label: str | None, fit: str, signatures: str) -> str:
        if fit not in LATEX_FITS:
            raise SpecError(f"unknown LaTeX fit {fit!r}: choose one of {', '.join(LATEX_FITS)}")
        if signatures not in LATEX_SIGNATURES:
            raise SpecError(f"unknown signature form {signatures!r}: choose one of {', '.join(LATEX_SIGNATURES)}")
        body = [r"\begin{tabular}{lrr}", r"\toprule", r"Metric & Value & Users \\", r"\midrule"]
        body += [f"{latex_cell(e.metric)} & {_num(e.value, digits)} & {_users(e)} " + "\\\\" for e in self.entries]
        body += [r"\bottomrule", r"\end{tabular}"]
        notes = latex_signature_notes([e.signature for e in self.entries], signatures == "short")
        return latex_float(body, caption=title or f"receval {self.version}: {len(self.entries)} metrics.",
                           label=latex_label(label, title, "tab:receval"), fit=fit, notes=notes, standalone=False)

    def __repr__(self) -> str:
        """``Results: N metrics (receval V)``, then metric, value and users, one line each
        (``res.signatures`` and ``res.fingerprints`` hold the rest)."""
        n = len(self.entries)
        rows = [[e.metric, _num(e.value, 4), _users(e)] for e in self.entries]
        return "\n".join([f"Results: {n} metric{'s' if n != 1 else ''} (receval {self.version})",
                          *text_table(["metric", "value", "users"], rows)])

    def _repr_html_(self) -> str:
        """The notebook display: metric, value, users and the signature's short form (the whole
        one as the tooltip and in a ``<details>`` element), then the data's fingerprints."""
        import html

        esc = html.escape
        _, shared = shared_fields([e.signature for e in self.entries])
        skipped = any(e.skipped for e in self.entries)
        head = "<tr><th>metric</th><th>value</th><th>users</th>" + ("<th>skipped</th>" if skipped else "") + \
            '<th class="l">signature</th></tr>'
        rows = [f"<tr><td>{esc(e.metric)}</td><td>{_num(e.value, 4)}</td><td>{_users(e)}</td>"
                + (f"<td>{e.skipped}</td>" if skipped else "") + f'<td class="l">{html_signature(e.signature, shared)}</td></tr>'
                for e in self.entries]
        n = len(self.entries)
        caption = f"receval {esc(self.version)}: {n} metric{'s' if n != 1 else ''}"
        body = ["<table>", f"<caption>{caption}</caption>", f"<thead>{head}</thead>", "<tbody>", *rows, "</tbody>",
                "</table>"]
        fps = html_fingerprints(dict(self.fingerprints))
        return html_display(body + ([fps] if fps else []) + [html_signatures([e.signature for e in self.entries])])


def _num(v: float | None, digits: int) -> str:
    """``digits`` significant digits (:func:`receval.report.fmt_num`), the rule of every table."""
    return fmt_num(v, digits)


def _json_float(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)


def _users(e: Entry) -> str:
    """The users column as shown: ``all`` for a global metric (one value over the whole
    data, :attr:`Entry.users` 0), else the users averaged."""
    return "all" if e.users == 0 else str(e.users)
