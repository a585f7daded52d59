"""Results by user segment: every run's values, intervals and paired tests within each segment.

A *segmentation* splits the users of a comparison (the users of the ground truth) into named
segments; :func:`compare_segments` compares the runs on all users and within every segment, and
corrects **every** paired test of the table together (the overall tests and those of every
segment: one family, ``Comparison.family``). A segment's values are the values of its users
alone: the same numbers as evaluating the runs on that segment's users only.

Segmentations (``segments=``; the command line's ``receval runs ... --segments SPEC``):

* ``activity:N`` (``activity`` = ``activity:4``): the users' number of train rows
  (``train=``; a user without train rows has 0) in ``N`` quantile buckets over the evaluated
  users, named ``activity 1/4 (0-3 train rows)``, ...; tied counts stay in one bucket, so a
  bucket may be larger than ``1/N`` of the users (an empty one is left out);
* ``cold-users``: ``cold users`` (no train rows) and ``warm users`` (``train=``);
* ``cold-items``: users with a cold item in their ground truth (an item without train rows)
  and users without (``train=`` and ``truth=``);
* ``groups`` (or a user → group mapping given as ``segments=`` itself): the user groups of
  ``groups=`` (a frame, dict of columns or file with ``user_id`` and ``group``, like the
  ``user_groups=`` side input); users without a group form ``(no group)``.

The definition is part of every signature of the comparison (``segments:activity:4``, and
``segment:<name>`` in a segment's signatures): the overall values do not change, but their
adjusted p-values count the segments' tests, and a segment's values average other users.

>>> import numpy as np
>>> s = segment_users("cold-users", np.array([1, 2, 3]), train={"user_id": [1, 1, 3], "item_id": [5, 6, 5]})
>>> s.definition, s.labels, s.of_user.tolist()
('cold-users', ['cold users (no train rows)', 'warm users'], [1, 0, 1])
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .comparison import Comparison
from .errors import DataError, SpecError, note
from .fingerprint import side_fingerprint
from .inputs import read_truth
from .io import Columns, columns_of
from .outputs import write_output
from .page import render_page
from .report import fit_table, fmt_num, latex_cell, markdown_text, resolve_width, short_fingerprint, signature_lines, wrap_text
from .resampling import StatsOptions
from .side import read_groups, read_train, same_ids, text_ids
from .spec import SIG_SEP, signature_text
from .stats import adjust, compare as stats_compare, paired_users
from .tables import EXTENSIONS, FORMATS, _sup, build, render_pairs, render_table

#: the built-in segmentations (plus ``groups``)
KINDS = ("activity", "cold-users", "cold-items", "groups")


@dataclass(frozen=True)
class Segmentation:
    """The segment of every user: ``labels[of_user[j]]`` is the segment of user ``j`` of
    ``user_ids`` (the comparison's users, in their order); ``definition`` as signatures write it;
    ``source`` the input it was computed from and its fingerprint (``{"train": "rf1:..."}``)."""

    definition: str
    labels: list[str]
    of_user: np.ndarray
    user_ids: np.ndarray
    description: str
    source: dict[str, str] = field(default_factory=dict)

    def users(self, label: str) -> np.ndarray:
        """The mask of the users of segment ``label``."""
        return self.of_user == self.labels.index(label)


def parse_segments(spec: str) -> tuple[str, int | None]:
    """``(kind, buckets)`` of a segmentation spec.

    >>> parse_segments("activity"), parse_segments("activity:5"), parse_segments("cold-users")
    (('activity', 4), ('activity', 5), ('cold-users', None))
    """
    text = str(spec).strip().lower()
    kind, colon, arg = text.partition(":")
    if kind not in KINDS:
        raise SpecError(f"unknown segmentation {spec!r}: choose activity[:N] (train-row quantiles), cold-users, "
                        "cold-items (both need train), or groups (with a user -> group file)")
    if kind != "activity":
        if colon:
            raise SpecError(f"segmentation {kind} takes no parameter; got {spec!r}")
        return kind, None
    try:
        n = int(arg) if colon else 4
    except ValueError:
        n = 0
    if not 2 <= n <= 100:
        raise SpecError(f"activity:N needs a number of buckets from 2 to 100 (e.g. activity:4); got {spec!r}")
    return kind, n


def _ids_frame(ids: Any) -> Any:
    import polars as pl

    return pl.Series("u", np.asarray(ids))


def _lookup(user_ids: np.ndarray, keys: Any, values: Any, default: Any) -> np.ndarray:
    """``values`` of each user of ``user_ids`` by ``keys`` (ids compared as the same type; a
    string and a number id that print alike are the same user)."""
    import polars as pl

    u = _ids_frame(user_ids)
    k = pl.Series("u", np.asarray(keys))
    if u.dtype != k.dtype:
        u, k = u.cast(pl.String), k.cast(pl.String)
    table = pl.DataFrame({"u": k, "v": pl.Series("v", list(values), strict=False)})
    out = pl.DataFrame({"u": u}).join(table, on="u", how="left", maintain_order="left")["v"]
    return np.asarray([default if v is None else v for v in out.to_list()], dtype=object)


def _columns(cols: Any) -> Any:
    return cols if cols is not None else Columns()


def segment_users(segments: Any, user_ids: Any, *, train: Any = None, truth: Any = None, groups: Any = None,
                  cols: Any = None) -> Segmentation:
    """The :class:`Segmentation` of ``user_ids`` by ``segments`` (module docs)."""
    cols = _columns(cols)
    ids = np.asarray(user_ids)
    if not isinstance(segments, str):  # a user -> group mapping given directly
        groups, segments = segments, "groups"
    kind, n = parse_segments(segments)
    if kind == "groups":
        if groups is None:
            raise SpecError("segments='groups' needs the groups: pass groups= (user_id, group), "
                            "or on the command line --segments groups=FILE")
        gids, names = read_groups(groups, cols.user, "user groups", role="user")
        found = _lookup(ids, gids, [str(x) for x in names], None)
        labels = sorted({x for x in found if x is not None})
        missing = sum(x is None for x in found)
        if len(ids) and not labels:
            raise DataError(f"pass groups whose user ids are the runs' users: none of the {len(gids)} users of the groups "
                            f"is among the {len(ids)} users evaluated (e.g. {_example(gids)} / {_example(ids)})")
        if missing:
            note(f"{missing} of the {len(ids)} users evaluated are in no group of the groups given: "
                 "they form the segment '(no group)'")
            labels.append("(no group)")
            found = np.asarray([("(no group)" if x is None else x) for x in found], dtype=object)
        of_user = np.asarray([labels.index(x) for x in found], dtype=np.int64)
        return Segmentation("groups", labels, of_user, ids, "the user groups given (user_id, group)",
                            {"user_groups": side_fingerprint("user_groups", groups, cols)})
    if train is None:
        raise SpecError(f"segments={segments!r} needs the train interactions: pass train= (on the command line --train FILE)")
    tu, ti = read_train(train, cols)
    source = {"train": side_fingerprint("train", train, cols)}
    uniq, counts = np.unique(np.asarray(tu), return_counts=True)
    activity = _lookup(ids, uniq, [int(c) for c in counts], 0).astype(np.int64)
    if kind == "cold-users":
        labels = ["cold users (no train rows)", "warm users"]
        return _drop_empty(Segmentation("cold-users", labels, (activity > 0).astype(np.int64), ids,
                                        "users without / with train rows", source))
    if kind == "cold-items":
        if truth is None:
            raise SpecError("segments='cold-items' needs the ground truth: pass truth=")

        read = read_truth(truth, cols)  # ids read as every side input's (text ids canonical as integers)
        tc = cols.truth()
        frame = text_ids(read.frame, (tc.user, tc.item)) if read.text else read.frame
        got = columns_of(frame, "ground truth", {"user": tc.user, "item": tc.item}, {})
        t_users, t_items = got["user"], got["item"]
        t_items_cmp, warm = same_ids(t_items, np.unique(np.asarray(ti)))
        cold_row = ~np.isin(t_items_cmp, warm)
        cold_users = np.unique(t_users[cold_row]) if cold_row.any() else np.asarray([], dtype=t_users.dtype)
        has_cold = _lookup(ids, cold_users, [True] * len(cold_users), False).astype(bool)
        labels = ["users with cold items", "users without cold items"]
        source["truth"] = "the ground truth"
        return _drop_empty(Segmentation("cold-items", labels, np.where(has_cold, 0, 1).astype(np.int64), ids,
                                        "users with / without a ground-truth item that has no train rows", source))
    assert n is not None
    edges = np.quantile(activity, np.linspace(0, 1, n + 1)[1:-1]) if len(activity) else np.zeros(0)
    bucket = np.searchsorted(edges, activity, side="left")  # ties at an edge stay together, in the lower bucket
    labels = []
    for b in range(n):
        members = activity[bucket == b]
        lo, hi = (int(members.min()), int(members.max())) if len(members) else (0, 0)
        labels.append(f"activity {b + 1}/{n} ({lo}-{hi} train rows)")
    return _drop_empty(Segmentation(f"activity:{n}", labels, bucket.astype(np.int64), ids,
                                    f"the users' train rows in {n} quantile buckets", source))


def _example(ids: Any) -> str:
    a = np.asarray(ids)
    return repr(a[0].item() if hasattr(a[0], "item") else a[0]) if len(a) else "none"


def _drop_empty(s: Segmentation) -> Segmentation:
    used = [i for i in range(len(s.labels)) if np.any(s.of_user == i)]
    remap = np.full(len(s.labels), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return replace(s, labels=[s.labels[i] for i in used], of_user=remap[s.of_user] if len(s.of_user) else s.of_user)


@dataclass
class SegmentedComparison:
    """A comparison on all users (``overall``) and within each segment (``segments[name]``),
    every paired test corrected in one family of ``family`` tests. ``sizes[name]`` the users of
    each segment (before pairing); ``skipped[name]`` why a segment has no comparison (no paired
    user)."""

    overall: Comparison
    segments: dict[str, Comparison]
    segmentation: Segmentation
    family: int
    sizes: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def definition(self) -> str:
        return self.segmentation.definition

    def comparisons(self) -> list[tuple[str, Comparison]]:
        """``[("all users", overall), (segment, comparison), ...]``."""
        return [("all users", self.overall), *self.segments.items()]

    def note(self) -> str:
        """One line: the segmentation, its source and the correction family."""
        src = ", ".join(f"{k} {short_fingerprint(v) if ':' in v else v}" for k, v in self.segmentation.source.items())
        sizes = ", ".join(f"{k}: {v}" for k, v in self.sizes.items())
        corr = {t.correction for _, c in self.comparisons() for t in c.pairs}
        text = (f"Segments {self.definition}: {self.segmentation.description}" + (f" (from {src})" if src else "")
                + f"; users per segment: {sizes}.")
        if corr and corr != {"tukey"}:
            text += (f" The {', '.join(sorted(corr))} correction counts all {self.family} paired tests: "
                     "those on all users and those within every segment.")
        for k, why in self.skipped.items():
            text += f" Segment {k}: {why}."
        return text


def _mark(sig: str, definition: str, label: str | None) -> str:
    parts: list[Any] = [sig, ("segments", definition)]
    if label is not None:
        parts.append(("segment", "_".join(label.replace(SIG_SEP, "/").split())))  # a field: no space
    return signature_text(*parts)


def _own_skipped(entry: Any, mask: np.ndarray) -> str:
    """The entry's signature with a segment's own ``skipped`` count: the users of the segment
    the ``empty`` policy skipped (when every missing value of the entry is such a user; the
    field is left out when the run's count cannot be split by segment)."""
    parts = entry.signature.split(SIG_SEP)
    if not any(p.startswith("skipped:") for p in parts):
        return entry.signature
    missing = np.isnan(np.asarray(entry.per_user, dtype=np.float64))
    own = int(missing[mask].sum()) if int(missing.sum()) == entry.skipped else None
    kept = [p if not p.startswith("skipped:") else f"skipped:{own}" for p in parts
            if not (p.startswith("skipped:") and not own)]
    return SIG_SEP.join(kept)


def compare_segments(runs: Any, segments: Any, *, train: Any = None, truth: Any = None, groups: Any = None,
                     cols: Any = None, options: StatsOptions | None = None, **given: Any) -> SegmentedComparison:
    """Compare :class:`~receval.runs.Runs` on all users and within every segment of ``segments``
    (a spec, e.g. ``"activity:4"``, or a :class:`Segmentation`); the statistics' options are those
    of :meth:`receval.runs.Runs.compare`. Every paired test (all users and every segment) is
    corrected together by ``correction`` (Tukey's HSD adjusts within each table).

    >>> from receval.runs import evaluate_runs
    >>> truth = {"user_id": [1, 2, 3, 4], "item_id": [10, 20, 30, 40]}
    >>> a = {"user_id": [1, 2, 3, 4], "item_id": [10, 20, 31, 40], "score": [1.0] * 4}
    >>> b = {"user_id": [1, 2, 3, 4], "item_id": [11, 20, 30, 41], "score": [1.0] * 4}
    >>> r = evaluate_runs({"a": a, "b": b}, truth, ["hitrate@1"])
    >>> sc = compare_segments(r, "cold-users", train={"user_id": [1, 2], "item_id": [5, 5]}, ci="none")
    >>> list(sc.segments), sc.family
    (['cold users (no train rows)', 'warm users'], 3)
    >>> sc.segments["warm users"].values[("a", "hitrate@1")], sc.segments["warm users"].users
    (1.0, 2)
    """
    stat = StatsOptions.of(options, given, "compare_segments")
    seg = segments if isinstance(segments, Segmentation) else segment_users(
        segments, runs.user_ids, train=train, truth=truth, groups=groups, cols=cols)
    if len(seg.of_user) != len(runs.user_ids) or not np.array_equal(np.asarray(seg.user_ids), np.asarray(runs.user_ids)):
        raise SpecError("the segmentation is of other users than the runs: segment the runs' user_ids")
    overall = runs.compare(stat)
    # the per-user values, aligned by user across runs (read from the entries: whatever shape Runs.per_user returns)
    per_user = {name: {e.metric: np.asarray(e.per_user, dtype=np.float64) for e in res.entries if e.per_user is not None}
                for name, res in runs.results.items()}
    first = next(iter(runs.results.values()))
    hib = dict(overall.higher_is_better)
    out: dict[str, Comparison] = {}
    sizes, skipped = {}, {}
    ids = np.asarray(runs.user_ids)
    why = runs.dropped_why()
    for label in seg.labels:
        mask = seg.users(label)
        sizes[label] = int(mask.sum())
        sub = {r: {m: v[mask] for m, v in by_m.items()} for r, by_m in per_user.items()}
        own = {e.metric: _own_skipped(e, mask) for e in first.entries}
        try:
            c = stats_compare(sub, higher_is_better=hib, signatures=own, users=runs.users, user_ids=ids[mask],
                              progress=False, dropped_why=why, options=stat)
        except DataError as exc:
            skipped[label] = f"not compared ({exc})"
            continue
        keep = np.zeros(len(ids), dtype=bool)

        keep[np.flatnonzero(mask)[paired_users(sub)]] = True
        import polars as pl

        c.per_user = {name: res.per_user().filter(pl.Series(keep)) for name, res in runs.results.items()}
        out[label] = c
    # one family: every paired test of the table (Tukey's HSD is adjusted within its own table)
    tables = [overall, *out.values()]
    flat = [(c, i) for c in tables for i, t in enumerate(c.pairs) if t.test != "tukey"]
    family = len([1 for c, i in flat if not math.isnan(c.pairs[i].p)])
    if flat:
        adjusted = adjust([c.pairs[i].p for c, i in flat], stat.correction)
        for (c, i), p_adj in zip(flat, adjusted):
            c.pairs[i] = replace(c.pairs[i], p_adjusted=float(p_adj))
    for c in tables:
        c.family = family if flat else len(c.pairs)
    overall.signatures = {m: _mark(s, seg.definition, None) for m, s in overall.signatures.items()}
    for label, c in out.items():
        c.signatures = {m: _mark(s, seg.definition, label) for m, s in c.signatures.items()}
    return SegmentedComparison(overall, out, seg, family if flat else sum(len(c.pairs) for c in tables), sizes, skipped)


def segments_arg(spec: str | None) -> tuple[str | None, str | None]:
    """The command line's ``--segments``: ``(spec, groups file)``; ``groups=FILE`` names the groups.

    >>> segments_arg("activity:4"), segments_arg("groups=g.csv"), segments_arg(None)
    (('activity:4', None), ('groups', 'g.csv'), (None, None))
    """
    if spec is None:
        return None, None
    head, eq, path = spec.partition("=")
    if eq:
        if head.strip().lower() != "groups" or not path.strip():
            raise SpecError(f"--segments takes activity[:N], cold-users, cold-items or groups=FILE; got {spec!r}")
        return "groups", path.strip()
    kind, _ = parse_segments(spec)
    if kind == "groups":
        raise SpecError("--segments groups needs its file: --segments groups=FILE (columns user_id, group)")
    return spec.strip().lower(), None


# ---- rendering ------------------------------------------------------------------------------------


def _title(label: str, c: Comparison, sc: SegmentedComparison) -> str:
    return f"{label} ({c.users} users)" if label == "all users" else f"segment {label} ({c.users} users)"


def _with_segment(csv_text: str, label: str, header: bool) -> list[str]:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(csv_text)))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for i, row in enumerate(rows):
        if i == 0:
            if header:
                w.writerow(["segment", *row])
            continue
        w.writerow([label, *row])
    return [buf.getvalue()]


def render_segments(sc: SegmentedComparison, fmt: str = "table", *, alpha: float | None = None, ci: bool = False,
                    digits: int = 4, pairs: bool = True, compact: bool = False, width: Any = "terminal") -> str:
    """Every table of ``sc`` in ``fmt`` (the formats of :func:`receval.tables.render_table`): all
    users first, then each segment, each with its paired tests (``pairs``), and the segmentation
    note. ``compact`` (the terminal format): one segment × run table per metric (values and
    significance letters), then the notes and signatures once (:func:`compact_segments`). ``csv``: one table with a ``segment`` column (then, after a blank line, the paired tests
    with one); ``json``: ``{"segments": {...}, "tables": [{"segment": ..., <the table's JSON>}]}``;
    ``html``: the report page (:func:`receval.page.render_page`)."""
    if fmt not in FORMATS:
        raise SpecError(f"unknown table format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if fmt == "html":
        return render_page(sc, alpha=alpha, ci=ci, digits=digits)
    if fmt == "table" and compact:
        return compact_segments(sc, alpha=alpha, ci=ci, digits=digits, width=width)
    if fmt == "json":
        doc = {"segments": {"definition": sc.definition, "description": sc.segmentation.description,
                            "source": sc.segmentation.source, "sizes": sc.sizes, "skipped": sc.skipped,
                            "family": sc.family, "note": sc.note()},
               "tables": [{"segment": label, **json.loads(render_table(c, "json", alpha=alpha, ci=ci, digits=digits))}
                          for label, c in sc.comparisons()]}
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        values: list[str] = []
        tests: list[str] = []
        for i, (label, c) in enumerate(sc.comparisons()):
            values += _with_segment(render_table(c, "csv", alpha=alpha, ci=ci, digits=digits), label, i == 0)
            if pairs:
                tests += _with_segment(render_pairs(c, "csv", alpha=alpha, digits=digits), label, i == 0)
        return "".join(values) + ("\n" + "".join(tests) if pairs else "")
    parts = []
    for label, c in sc.comparisons():
        text = render_table(c, fmt, alpha=alpha, ci=ci, digits=digits, title=_title(label, c, sc))
        if pairs and c.pairs:
            text += "\n" + render_pairs(c, fmt, alpha=alpha, digits=digits)
        parts.append(text)
    note = sc.note()
    if fmt == "markdown":
        parts.append(markdown_text(note) + "\n")
    elif fmt == "latex":
        parts.append(latex_cell(note) + "\n")
    else:
        parts.append(note + "\n")
    return "\n".join(parts)


def compact_segments(sc: SegmentedComparison, *, alpha: float | None = None, ci: bool = False, digits: int = 4,
                     width: Any = "terminal") -> str:
    """The terminal's segmented comparison at a glance: per metric, one table of segments (rows,
    with their paired users) by runs (columns: the value, ``*`` the best of the row, the letters
    of the runs it is significantly better than); then the legend, the segmentation note and the
    signatures once (a segment's signature is that of all users with its own counts and
    ``|segment:LABEL``; every signature whole in ``--format json``)."""
    from rich.text import Text

    w = resolve_width(width)
    models = [(label, c, build(c, alpha=alpha, ci=False)) for label, c in sc.comparisons()]
    overall = models[0][2]
    runs = overall.runs
    out: list[str] = []
    for m in overall.metrics:
        rows = []
        for label, c, model in models:
            cells: list[Any] = [Text(f"{label} ({c.users})")]
            for r in runs:
                cell = model.cells.get((r, m))
                if cell is None:
                    cells.append(Text("–"))
                    continue
                t = Text(fmt_num(cell.value, digits) + ("*" if cell.best else ""), style="bold" if cell.best else "")
                t.append("".join(_sup(x) for x in cell.better_than))
                cells.append(t)
            rows.append(cells)
        heads = ["segment (users)", *(f"{r} ({overall.letters[r]})" for r in runs)]
        out.append(fit_table(heads, rows, width=w, title=m, keys=1, right=[False] + [True] * len(runs),
                             wrap=[True] + [False] * len(runs)))
    notes = ["* (bold): the best value of the row" + overall.legend[0].removeprefix("Bold: the best value per column"),
             *overall.legend[1:]]
    if ci:
        notes = [x for x in notes if not x.startswith("Brackets:")]
        notes.append("Intervals: in --format csv or json, or --pairs.")
    notes.append(sc.note())
    lines: list[str] = []
    for x in notes:
        lines += wrap_text(x, w)
    lines += wrap_text("A segment's signature: that of all users with its own counts (skipped, paired) and "
                       "|segment:LABEL (every one whole in --format json).", w)
    lines += signature_lines([overall.signatures[m] for m in overall.metrics if m in overall.signatures], w)
    return "\n".join(out) + "\n".join(lines) + "\n"


def write_segments(sc: SegmentedComparison, path: str | Path, *, fmt: str | None = None, **options: Any) -> Path:
    """Write :func:`render_segments` to ``path``; the format follows the extension, as
    :func:`receval.tables.write_table`."""
    path = Path(path)
    fmt = fmt or EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise SpecError(f"cannot tell the table format from {path.name!r}: use one of {', '.join(EXTENSIONS)} or pass fmt=")
    write_output(path, render_segments(sc, fmt, **options), "table")
    return path


def segment_frame(sc: SegmentedComparison) -> Any:
    """A polars frame: ``segment``, ``users``, ``run``, ``metric``, ``value``, ``ci_low``, ``ci_high``."""
    import polars as pl

    rows = []
    for label, c in sc.comparisons():
        for r in c.runs:
            for m in c.metrics:
                iv = c.intervals.get((r, m))
                rows.append({"segment": label, "users": c.users, "run": r, "metric": m, "value": c.values.get((r, m)),
                             "ci_low": None if iv is None else iv.low, "ci_high": None if iv is None else iv.high})
    return pl.DataFrame(rows, schema={"segment": pl.String, "users": pl.Int64, "run": pl.String, "metric": pl.String,
                                      "value": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64})


def is_segmented(obj: Any) -> bool:
    return isinstance(obj, SegmentedComparison)


__all__ = ["KINDS", "Segmentation", "SegmentedComparison", "parse_segments", "segments_arg", "segment_users", "compare_segments",
           "render_segments", "write_segments", "segment_frame"]
