"""Verify a published result: one signature, one number, on these very files.

``receval verify RESULTS.json RECS TRUTH [--train FILE ...]`` (or :func:`verify`) reads a JSON
result written by ``receval evaluate --format json`` (or :meth:`receval.Results.to_json`),
evaluates every signature it holds again on the given files (a signature is a fully explicit
spec: :func:`receval.parse_signature`), and checks

* each **value**: the recomputed value equals the published one to 1e-12
  (``math.isclose(published, recomputed, rel_tol=1e-12, abs_tol=1e-12)``; a null, i.e. NaN,
  matches only a NaN);
* each **data fingerprint** (:mod:`receval.fingerprint`): every input the result names
  (recs, truth, and each side input it was computed with) has the same order-free content
  fingerprint. A side input the result names must be given, and one it does not name must not.

A table lists metric, published value, recomputed value, whether the data match, and OK or
MISMATCH; then one row per input. Exit status: 0 when everything matches, 1 on any mismatch,
2 on bad input (a one-line error: an unreadable or foreign JSON, one without fingerprints,
a missing side input).

>>> import json
>>> from receval import evaluate
>>> from receval.examples import WORKED_RECS, WORKED_TRUTH
>>> doc = evaluate(WORKED_RECS, WORKED_TRUTH, ["ndcg@4", "precision@2"]).to_dict()
>>> verify(doc, WORKED_RECS, WORKED_TRUTH).ok
True
>>> doc["results"][1]["value"] = 0.75                      # a published value altered
>>> v = verify(doc, WORKED_RECS, WORKED_TRUTH)
>>> v.ok, [c.ok for c in v.checks], v.data_ok
(False, [True, False], True)
"""

from __future__ import annotations

import argparse
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .api import evaluate
from .arguments import add_column_args, column_kwargs
from .errors import DataError
from .io import COLUMN_KEYWORDS
from .jsonread import load_json
from .report import command_formats, render, short_fingerprint
from .spec import signature_head
from .trec import read_qrels, read_run

if TYPE_CHECKING:  # pragma: no cover
    from .types import Frame, ResultSource

#: relative and absolute tolerance of a value check
TOLERANCE = 1e-12
#: side inputs, in the order a result lists them
SIDE = ("train", "catalog", "categories", "item_groups", "user_groups", "baseline")


@dataclass
class Check:
    """One published value against its recomputation."""

    metric: str
    signature: str
    published: float | None
    recomputed: float | None

    @property
    def ok(self) -> bool:
        p, r = _nan(self.published), _nan(self.recomputed)
        if math.isnan(p) or math.isnan(r):
            return math.isnan(p) and math.isnan(r)
        return math.isclose(p, r, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


@dataclass
class InputCheck:
    """One input's published fingerprint against the fingerprint of the file given."""

    name: str
    published: str
    recomputed: str | None

    @property
    def ok(self) -> bool:
        return self.recomputed is not None and self.published == self.recomputed


@dataclass
class Verification:
    """What :func:`verify` returns: a check per published value and per input."""

    checks: list[Check]
    inputs: list[InputCheck]
    notes: list[str] = field(default_factory=list)

    @property
    def data_ok(self) -> bool:
        return all(c.ok for c in self.inputs)

    @property
    def ok(self) -> bool:
        return self.data_ok and all(c.ok for c in self.checks)

    def rows(self) -> list[list[Any]]:
        """metric, published, recomputed, data, status (values in full precision)."""
        bad = [c.name for c in self.inputs if not c.ok]
        data = "match" if not bad else "MISMATCH (" + ", ".join(bad) + ")"
        return [[c.metric, _text(c.published), _text(c.recomputed), data, "OK" if c.ok and not bad else "MISMATCH"]
                for c in self.checks]

    def summary(self) -> str:
        values = sum(not c.ok for c in self.checks)
        inputs = sum(not c.ok for c in self.inputs)
        if not values and not inputs:
            return f"OK: {len(self.checks)} values and {len(self.inputs)} inputs match"
        return (f"MISMATCH: {values} of {len(self.checks)} values and {inputs} of {len(self.inputs)} inputs differ "
                "from the published result")

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "results": [{"metric": c.metric, "signature": c.signature, "published": _json(c.published),
                         "recomputed": _json(c.recomputed), "ok": c.ok} for c in self.checks],
            "inputs": [{"input": c.name, "published": c.published, "recomputed": c.recomputed, "ok": c.ok}
                       for c in self.inputs],
            "notes": list(self.notes),
        }

    def render(self, fmt: str = "table") -> str:
        """The report in ``fmt``: ``table`` (terminal), ``markdown`` or ``json``."""
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2) + "\n"
        out = render(["metric", "published", "recomputed", "data", "status"], self.rows(), fmt)
        inputs = [[c.name, c.published, c.recomputed or "–", "OK" if c.ok else "MISMATCH"] for c in self.inputs]
        out += ("\n" if fmt == "markdown" else "") + render(["input", "published fingerprint", "recomputed fingerprint", "status"],
                                                             inputs, fmt)
        lines = [f"note: {n}" for n in self.notes] + [self.summary()]
        sep = "\n\n" if fmt == "markdown" else "\n"
        return out + ("\n" if fmt == "markdown" else "") + sep.join(lines) + "\n"


def _nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


def _text(v: float | None) -> str:
    return "–" if v is None or math.isnan(v) else repr(float(v))


def _json(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) else float(v)


# ---- reading a published result -------------------------------------------------------------------


def load_result(source: Any) -> tuple[dict[str, Any], str]:
    """``(document, where)`` of a JSON result: a path, JSON text, a dict, or a :class:`receval.Results`."""
    if hasattr(source, "to_dict") and hasattr(source, "entries"):
        return source.to_dict(), "the results"
    if isinstance(source, dict):
        return source, "the result document"
    if isinstance(source, (str, os.PathLike)):
        text = str(source)
        if isinstance(source, str) and text.lstrip().startswith("{"):
            return _parse(text, "the JSON text"), "the JSON text"
        path = Path(source)
        if not path.is_file():
            raise DataError(f"results file not found: {path}" if not path.exists() else f"the results path {path} is not a file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"cannot read the results file {path}: {exc}") from None
        return _parse(text, str(path)), str(path)
    raise DataError(f"cannot read a result from a {type(source).__name__}; pass a JSON file written by "
                    "receval evaluate --format json, its text, its dict or a Results")


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        doc = load_json(text, where)
    except DataError as exc:
        if " is not JSON (" not in str(exc):
            raise
        raise DataError(f"{exc}".replace("; check that it was written completely", "; pass the output of "
                        "receval evaluate --format json")) from None
    if not isinstance(doc, dict):
        raise DataError(f"{where} is not a receval result (a JSON object with 'results'); pass the output of "
                        "receval evaluate --format json")
    return doc


def _entries(doc: dict[str, Any], where: str) -> list[tuple[str, str, float | None]]:
    results = doc.get("results")
    if not isinstance(results, list) or not results:
        raise DataError(f"{where} holds no 'results' list; pass the output of receval evaluate --format json")
    out = []
    for i, r in enumerate(results, 1):
        sig, value = (r.get("signature"), r.get("value")) if isinstance(r, dict) else (None, None)
        if not isinstance(sig, str) or not sig.strip():
            raise DataError(f"{where}: result {i} has no signature; only results written by receval can be verified")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DataError(f"{where}: result {i} ({signature_head(sig)}) has a value that is not a number: {value!r}")
        out.append((str(r.get("metric") or signature_head(sig)), sig, None if value is None else float(value)))
    return out


def _fingerprints(doc: dict[str, Any], where: str) -> dict[str, str]:
    fps = doc.get("fingerprints")
    if not isinstance(fps, dict) or not fps:
        raise DataError(f"{where} records no data fingerprints (written by an earlier receval, or by the Spark engine), "
                        "so nothing ties its values to data; evaluate again with receval evaluate --format json")
    for name in ("recs", "truth"):
        if not isinstance(fps.get(name), str):
            raise DataError(f"{where} records no fingerprint of the {name}; only results written by receval can be verified")
    return {str(k): str(v) for k, v in fps.items()}


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')} / {name}="


# ---- verifying ------------------------------------------------------------------------------------


#: the keywords of :func:`receval.evaluate` that :func:`verify` takes and passes on
PASSED = (*SIDE, *COLUMN_KEYWORDS, "sep")


def verify(results: ResultSource, recs: Frame, truth: Frame, **inputs: Any) -> Verification:
    """Recompute every value of a published result from its signature on ``recs`` and
    ``truth`` (and the side inputs it was computed with) and check its data fingerprints.

    ``results``: a JSON file written by ``receval evaluate --format json``, its text, its
    dict, or a :class:`receval.Results`. The other arguments are those of
    :func:`receval.evaluate` (the side inputs, the column names and ``sep``). Returns a :class:`Verification` (``.ok``, ``.checks``,
    ``.inputs``, ``.render()``); a result that cannot be verified (no fingerprints, a side
    input missing) raises a :class:`receval.DataError`.
    """
    unknown_kw = sorted(set(inputs) - set(PASSED))
    if unknown_kw:
        raise TypeError(f"verify() got an unexpected keyword argument {unknown_kw[0]!r}")
    doc, where = load_result(results)
    entries = _entries(doc, where)
    published = _fingerprints(doc, where)
    given: dict[str, Any] = {name: inputs.get(name) for name in SIDE}
    for name in SIDE:
        if name in published and given[name] is None:
            raise DataError(f"{where} was computed with {name} ({short_fingerprint(published[name])}): pass it "
                            f"({_flag(name)}) to recompute its values")
        if name not in published and given[name] is not None:
            raise DataError(f"{where} was computed without {name}: drop {_flag(name)} (it could change the values)")
    unknown = sorted(set(published) - {"recs", "truth", *SIDE})
    if unknown:
        raise DataError(f"{where} names an input this receval does not know: {unknown[0]!r}")
    res = evaluate(recs, truth, [sig for _, sig, _ in entries], **{k: v for k, v in inputs.items() if k not in SIDE or v is not None})
    checks = [Check(metric, sig, value, e.value) for (metric, sig, value), e in zip(entries, res.entries)]
    input_checks = [InputCheck(name, published[name], res.fingerprints.get(name))
                    for name in ("recs", "truth", *SIDE) if name in published]
    notes = []
    version = doc.get("version")
    if version is not None and str(version) != __version__:
        notes.append(f"the result was written by receval {version}; recomputed with receval {__version__}")
    return Verification(checks, input_checks, notes)


# ---- the command line -----------------------------------------------------------------------------


def build_command(p: argparse.ArgumentParser):
    """``receval verify`` (registered by :data:`receval.cli.COMMANDS`): add its arguments to
    ``p`` and return its runner."""
    p.add_argument("results", help="a JSON result written by receval evaluate --format json")
    p.add_argument("recs", help="the recommendations it was computed on (CSV, Parquet or TREC run)")
    p.add_argument("truth", help="the ground truth it was computed on (CSV, Parquet or TREC qrels)")
    for name, what in (("train", "train interactions"), ("catalog", "the item catalogue"), ("categories", "item categories"),
                       ("item-groups", "item groups (item_id, group)"), ("user-groups", "user groups (user_id, group)"),
                       ("baseline", "the second run")):
        p.add_argument(f"--{name}", metavar="FILE", help=f"{what}, when the result was computed with it")
    p.add_argument("--format", choices=command_formats("verify"), default="table")
    p.add_argument("--input-format", choices=("auto", "trec"), default="auto",
                   help="as for evaluate: trec reads RECS as a TREC run and TRUTH as a qrels file")
    p.add_argument("--sep", help="field separator of text inputs (as for evaluate)")
    add_column_args(p)

    def run(a: argparse.Namespace) -> int:
        recs, truth = a.recs, a.truth
        if a.input_format == "trec":
            ids = dict(user_col=a.user_col, item_col=a.item_col)
            tids = dict(user_col=a.truth_user_col or a.user_col, item_col=a.truth_item_col or a.item_col)
            recs, truth = read_run(recs, score_col=a.score_col, **ids), read_qrels(truth, rating_col=a.rating_col, **tids)
        v = verify(a.results, recs, truth, train=a.train, catalog=a.catalog, categories=a.categories,
                   item_groups=a.item_groups, user_groups=a.user_groups, baseline=a.baseline, sep=a.sep, **column_kwargs(a))
        print(v.render(a.format), end="")
        return 0 if v.ok else 1

    return run


__all__ = ["verify", "Verification", "Check", "InputCheck", "load_result", "TOLERANCE"]
