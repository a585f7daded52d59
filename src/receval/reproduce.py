"""``receval reproduce``: the RecSys'21 consistency study as one command.

MovieLens → global time split → cold users/items removed → relevant test rows (rating ≥ 4.5)
→ EASE (or popularity) → full ranking of unseen train items → every metric of the study under
every library's dialect → the study's Table 2 for this data, beside the study's own numbers,
and a report folder (CSV, Markdown, LaTeX, JSON, PNG, signatures, protocol statistics).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from . import figures
from ._version import __version__
from .compare import compare_results
from .data import load_bundled, load_genres, load_movielens
from .data.movielens import bundled_path
from .data.protocol import prepare_study, recommend
from .errors import DataError, RecevalError
from .outputs import not_an_input, write_output
from .page import PAGE_NAME, write_reproduction_page
from .report import fmt_value, render, terminal_width, wrap_text
from .spec import parse_k
from .study import COLUMNS, PROTOCOL, PUBLISHED, STUDY_DIALECTS, STUDY_VERSIONS

#: beyond-accuracy columns added with --beyond (MovieLens genres as categories)
BEYOND = ["alpha_ndcg@20", "ab_ndcg@20", "entropy@20", "coverage@20"]


@dataclass
class Reproduction:
    """Everything ``receval reproduce`` computed."""

    table: dict[str, dict[str, float | None]]  # dialect -> canonical spec -> value
    signatures: dict[str, dict[str, str]]  # dialect -> spec -> signature
    protocol: dict[str, Any]
    columns: list[str]
    timings: dict[str, float] = field(default_factory=dict)
    errors: dict[str, dict[str, str]] = field(default_factory=dict)  # dialect -> spec -> why it has no value

    def cells(self, missing: str | None = None) -> list[list[Any]]:
        """Rows as shown: the value, ``missing`` (None: "–") where the library does not offer
        the metric, "error" where it refused the data (:data:`LEGEND`)."""
        return [
            [d] + ["error" if c in self.errors.get(d, {}) else _or(self.table[d].get(c), missing) for c in self.columns]
            for d in self.table
        ]

    def not_offered(self) -> dict[str, list[str]]:
        """dialect -> the metrics it does not offer (no value and no error)."""
        out = {d: [c for c in self.columns if self.table[d].get(c) is None and c not in self.errors.get(d, {})]
               for d in self.table}
        return {d: cs for d, cs in out.items() if cs}

    def rows(self, dialects: list[str] | None = None) -> list[list[Any]]:
        return [[d] + [self.table[d].get(c) for c in self.columns] for d in (dialects or list(self.table))]


def run(
    data: str | None = None,
    *,
    k: int = 20,
    threshold: float = 4.5,
    test_fraction: float = 0.2,
    model: str = "ease",
    lambda_: float = 0.5,
    beyond: bool = False,
    progress: Any = None,
) -> Reproduction:
    """Run the study's protocol and evaluate every study metric under every study dialect."""
    from .models import EASE, Popularity  # lazy: cost: scipy (models.ease), and reproduce is imported whenever the command line's parser is built

    timings: dict[str, float] = {}
    step = progress or (lambda name: _Null())

    t0 = time.perf_counter()
    with step("loading ratings"):
        ratings = load_bundled() if data is None else load_movielens(data)
        study = prepare_study(ratings, threshold=threshold, test_fraction=test_fraction)
    if study.test.height == 0:
        top = str(ratings["rating"].max()) if ratings.height else "none"
        raise DataError(
            f"no test users are left: no test rating is >= the threshold {threshold:g} (the highest rating is {top}) "
            "among users and items seen in train; lower --threshold or raise --test-fraction"
        )
    timings["load_and_split_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    with step(f"fitting {model} and ranking every unseen item"):
        mdl = EASE(lambda_=lambda_, binary=True) if model == "ease" else Popularity()
        # scores rounded to 1e-10: items with identical train columns get exactly equal
        # scores (not BLAS noise), so the ranking is reproducible and each dialect's tie
        # rule decides among them
        recs = recommend(study.train, study.test_users, mdl, decimals=10).drop("rank")
    timings["model_and_ranking_s"] = time.perf_counter() - t0

    columns = [c.replace("@20", f"@{k}") for c in COLUMNS]
    extra: dict[str, Any] = {}
    if beyond:
        columns += [c.replace("@20", f"@{k}") for c in BEYOND]
        extra = {"categories": load_genres(data), "train": study.train}
    t0 = time.perf_counter()
    with step("computing every metric under every dialect"):
        res = compare_results(
            recs, study.test, columns, dialects=["standard", *(STUDY_VERSIONS[d] for d in STUDY_DIALECTS)],
            rel=threshold, **extra
        )
    signatures: dict[str, dict[str, str]] = {}
    for (dialect, metric), sig in res.signatures.items():
        signatures.setdefault(dialect, {})[metric] = sig
    errors: dict[str, dict[str, str]] = {}
    for (dialect, metric), why in res.errors.items():
        errors.setdefault(dialect, {})[metric] = why
    timings["metrics_s"] = time.perf_counter() - t0
    table = {row["dialect"]: {c: row.get(c) for c in columns} for row in res.frame.iter_rows(named=True)}
    protocol = dict(
        study.stats,
        model=model,
        lambda_=lambda_ if model == "ease" else None,
        binary_x=True,
        k=k,
        ranking="every train item not in the user's train history (full ranking)",
        score_decimals=10,
        recommendation_rows=int(recs.height),
        data="bundled ml-latest-small" if data is None else str(data),
    )
    return Reproduction(table, signatures, protocol, columns, timings, errors)


#: what a dialect is, in one line (printed with the headline)
DIALECT_LINE = ("A dialect is how one library, at one version, computes a metric, written as receval options: "
                "the same recommendations under each dialect give that library's number, and its signature says so.")


@dataclass(frozen=True)
class Spread:
    """How far one metric's values spread across the dialects that offer it."""

    metric: str
    low: tuple[str, float]  # (dialect, value) of the smallest value
    high: tuple[str, float]  # (dialect, value) of the largest value
    outlier: str  # the dialect farthest from the standard's value (by ratio)
    n: int  # how many dialects have a value

    @property
    def ratio(self) -> float:
        """max / min (inf when the smallest value is 0 and the largest is not; 1 when all agree)."""
        lo, hi = self.low[1], self.high[1]
        if hi == lo:
            return 1.0
        return math.inf if lo <= 0 else hi / lo

    def agrees(self) -> bool:
        return self.ratio < 1 + 1e-9

    def text(self) -> str:
        """``map@20 varies 30x across the dialects (0.00100 neurec@f8d3ab7 .. 0.0299 elliot@0.3.1)``"""
        r = self.ratio
        how = "from 0 up" if math.isinf(r) else (f"{r:.0f}x" if r >= 10 else f"{r:.2g}x")
        return (f"{self.metric} varies {how} across {self.n} dialects "
                f"({fmt_value(self.low[1])} {self.low[0]} .. {fmt_value(self.high[1])} {self.high[0]})")


def spreads(rep: Reproduction) -> list[Spread]:
    """Each metric's spread across the dialects with a value (the standard included), the
    widest first; metrics with fewer than two values are left out."""
    out = []
    for c in rep.columns:
        vals = [(d, float(v)) for d in rep.table if (v := rep.table[d].get(c)) is not None and math.isfinite(float(v))]
        if len(vals) < 2:
            continue
        low, high = min(vals, key=lambda x: x[1]), max(vals, key=lambda x: x[1])
        ref = dict(vals).get("standard", sorted(v for _, v in vals)[len(vals) // 2])

        def far(x: tuple[str, float], ref: float = ref) -> float:
            if x[1] == ref:
                return 0.0
            return math.inf if x[1] <= 0 or ref <= 0 else abs(math.log(x[1] / ref))

        outlier = max((x for x in vals if x[0] != "standard"), key=far, default=high)[0]
        out.append(Spread(c, low, high, outlier, len(vals)))
    return sorted(out, key=lambda s: (-s.ratio, s.metric))


def headline(rep: Reproduction, outliers: int = 3, width: int = 100) -> list[str]:
    """The study's headline on this data: each metric's spread across the dialects (max/min,
    the widest first), what a dialect is, and ``receval explain`` for the largest outliers;
    lines wrapped at ``width`` columns."""
    import textwrap

    out: list[str] = []
    for line in _headline(rep, outliers):
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
    return out


def _headline(rep: Reproduction, outliers: int) -> list[str]:
    sp = spreads(rep)
    n = len(rep.table)
    lines = [f"Headline: the same recommendations scored as {n - ('standard' in rep.table)} libraries "
             "(and receval's standard) score them:"]
    lines += ["  " + s.text() for s in sp if not s.agrees()]
    same = [s.metric for s in sp if s.agrees()]
    if same:
        lines.append(f"  {', '.join(same)}: every dialect that offers {'it' if len(same) == 1 else 'them'} agrees")
    lines.append(DIALECT_LINE)
    worst = [s for s in sp if not s.agrees()][:outliers]
    if worst:
        lines.append("Why the largest outliers differ (each prints the formula and what the library changes):")
        lines += [f"  receval explain {s.metric} --dialect {s.outlier}" for s in worst]
    return lines


#: what the placeholder cells mean, printed under every table and written beside every file
LEGEND = (
    "legend: '–' (CSV: 'not offered') = the library does not offer this metric; "
    "'error' = the library offers it but refused this data (reasons listed under the table and in table.json)"
)

#: below this many test users the printed table carries a caveat
SMALL_SAMPLE = 100

#: the files of a report folder (the only names receval writes there)
REPORT_FILES = ("table.csv", "table.md", "table.tex", "table.json", "protocol.json", "signatures.txt", "spread.png", "index.html")


def _or(v: Any, missing: str | None) -> Any:
    return missing if v is None or (isinstance(v, float) and math.isnan(v)) else v


#: the record of the report files receval wrote in a folder (name -> SHA-256 of what it wrote):
#: a file at a report name is replaced only if it is still exactly what receval wrote there
MANIFEST = ".receval-report.json"


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def own_files(out: Path) -> dict[str, str] | None:
    """The report files receval recorded writing in ``out`` (name -> SHA-256): {} without a
    manifest, None when something else holds its name (a link, a folder, a file that is not
    receval's manifest)."""
    path = Path(out) / MANIFEST
    if not path.is_symlink() and not path.exists():
        return {}
    try:
        if path.is_symlink() or not path.is_file():
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        files = doc["files"]
        if not str(doc.get("written_by", "")).startswith("receval ") or not isinstance(files, dict):
            return None
        return {str(n): str(h) for n, h in files.items() if n in REPORT_FILES}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _foreign(path: Path, recorded: str | None) -> bool:
    """Whether ``path`` holds something receval did not write: a link, a folder, or a file whose
    content is not the one recorded (an edited or planted file). A free name is not foreign."""
    import os
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return not stat.S_ISREG(st.st_mode) or recorded is None or recorded != _sha256(path)


def foreign_files(out: Path) -> list[str]:
    """The report names in ``out`` (and :data:`MANIFEST`) taken by something receval did not
    write there (:func:`_foreign`)."""
    own = own_files(out)
    if own is None:
        return [MANIFEST, *(n for n in REPORT_FILES if _foreign(Path(out) / n, None))]
    return [n for n in REPORT_FILES if _foreign(Path(out) / n, own.get(n))]


def check_report_dir(out: Path, overwrite: bool = False) -> None:
    """Refuse a report folder that is a file, or that holds at a report file name something
    receval did not write there (:func:`foreign_files`; unless ``overwrite``: then those names
    are replaced too, a link replaced, never written through). A report receval wrote is
    replaced; nothing else in the folder is touched."""
    if out.exists() and not out.is_dir():
        raise DataError(f"the report folder '{out}' is a file; choose another --out")
    if out.is_dir() and not overwrite:
        present = foreign_files(out)
        if present:
            shown = ", ".join(present[:2]) + (f" and {len(present) - 2} more" if len(present) > 2 else "")
            raise DataError(
                f"choose another --out, or pass --force to replace them: the report folder '{out}' holds "
                f"{shown} that receval did not write (or that changed since)"
            )


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def published_rows(columns: list[str]) -> list[list[Any]]:
    """The study's own values (ML-20M), for the columns it has."""
    rows = []
    for d in STUDY_DIALECTS:
        values = dict(zip(COLUMNS, PUBLISHED[d]))
        rows.append([d] + [values.get(c) for c in columns])
    return rows


def write_report(rep: Reproduction, out: Path, overwrite: bool = False) -> list[Path]:
    """Write the report folder (:data:`REPORT_FILES`); return the files written.

    A report receval wrote there before is replaced (file by file, each whole or not at all);
    a report name taken by anything else (:func:`foreign_files`) is refused unless
    ``overwrite``. Only the report file names and :data:`MANIFEST` are ever written, nothing
    is deleted."""
    out = Path(out)
    check_report_dir(out, overwrite)
    out.mkdir(parents=True, exist_ok=True)
    headers = ["dialect", *rep.columns]
    files: list[Path] = []
    written = _Written(out, overwrite)
    for fmt, name in (("csv", "table.csv"), ("markdown", "table.md"), ("latex", "table.tex")):
        path = out / name
        text = render(headers, rep.cells("not offered" if fmt == "csv" else None), fmt)
        if fmt == "markdown":
            text = "".join(f"{line}  \n" for line in headline(rep)) + "\n" + text
            text += "\n" + LEGEND + "\n" + "".join(f"\n- error: {d} {c}: {why}" for d, e in rep.errors.items() for c, why in e.items())
        elif fmt == "latex":
            text += "% " + LEGEND + "\n"
        written.add(path, lambda path=path, text=text: write_output(path, text, "report file"))
        files.append(path)
    table_json = {
        "dialects": {d: {c: _num(v) for c, v in vals.items()} for d, vals in rep.table.items()},
        "signatures": rep.signatures,
        "errors": rep.errors,
        "not_offered": rep.not_offered(),
        "headline": headline(rep),
        "spread": {sp.metric: {"ratio": None if math.isinf(sp.ratio) else sp.ratio, "low": list(sp.low),
                               "high": list(sp.high), "outlier": sp.outlier} for sp in spreads(rep)},
        "legend": {"null with an entry in errors": "the library offers the metric but refused this data",
                   "null with an entry in not_offered": "the library does not offer the metric"},
        "protocol": rep.protocol,
        "study": {
            "source": "Darel13712/compare_metrics res.csv / res_auc.csv (MovieLens-20M)",
            "protocol": PROTOCOL,
            "dialects": {d: dict(zip(COLUMNS, PUBLISHED[d])) for d in STUDY_DIALECTS},
        },
        "timings": rep.timings,
        "version": __version__,
    }
    path = out / "table.json"
    written.add(path, lambda: write_output(path, json.dumps(table_json, indent=2), "report file"))
    files.append(path)
    path = out / "protocol.json"
    written.add(path, lambda: write_output(path, json.dumps(rep.protocol, indent=2, default=str), "report file"))
    files.append(path)
    path = out / "signatures.txt"
    lines = [f"{d}\t{c}\t{s}" for d, sigs in rep.signatures.items() for c, s in sigs.items()]
    written.add(path, lambda: write_output(path, "\n".join(lines) + "\n", "report file"))
    files.append(path)
    path = out / "spread.png"
    written.add(path, lambda: plot_spread(rep, path))
    files.append(path)

    path = out / PAGE_NAME
    written.add(path, lambda: write_reproduction_page(rep, out, legend=LEGEND, published=published_rows(rep.columns)))
    files.append(path)
    return files


class _Written:
    """The report files written in one folder: each name checked just before it is written (still
    free, or still what receval wrote there, unless ``overwrite``), and recorded in
    :data:`MANIFEST` (by its SHA-256) just after."""

    def __init__(self, out: Path, overwrite: bool):
        self.out, self.overwrite = out, overwrite
        self.own = own_files(out) or {}  # a foreign manifest was refused (or is replaced under overwrite)

    def add(self, path: Path, write: Any) -> None:
        if path.name not in REPORT_FILES:  # pragma: no cover - a new report file must be named in REPORT_FILES
            raise AssertionError(f"{path.name} is not in REPORT_FILES")
        if not self.overwrite and _foreign(path, self.own.get(path.name)):
            raise DataError(f"choose another --out, or pass --force to replace it: '{path}' appeared while the report "
                            "was computed, and receval did not write it")
        write()
        self.own[path.name] = _sha256(path)
        if not self.overwrite and own_files(self.out) is None:
            raise DataError(f"choose another --out, or pass --force to replace it: '{self.out / MANIFEST}' appeared while "
                            "the report was computed, and receval did not write it")
        doc = {"written_by": f"receval {__version__} reproduce", "files": dict(sorted(self.own.items()))}
        write_output(self.out / MANIFEST, json.dumps(doc, indent=2) + "\n", "report manifest")


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def plot_spread(rep: Reproduction, path: Path, *, width: float = 7.0) -> None:
    """The spread figure (:func:`receval.figures.plot_spread`) written to ``path``."""
    figures.plot_spread(rep, path, width=width)


def build_command(p: argparse.ArgumentParser):
    """``receval reproduce`` (registered by :data:`receval.cli.COMMANDS`): add its arguments to
    ``p`` and return its runner."""
    p.add_argument("--data", help="a MovieLens release (folder or zip) or a ratings file; default: bundled ml-latest-small")
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--threshold", type=float, default=4.5, help="ratings >= this are relevant")
    p.add_argument("--test-fraction", type=float, default=0.2)
    p.add_argument("--model", choices=["ease", "popularity"], default="ease")
    p.add_argument("--lambda", dest="lambda_", type=float, default=0.5, help="EASE regularisation (the study's code: 0.5)")
    p.add_argument("--beyond", action="store_true", help="add α-nDCG, αβ-nDCG, entropy and coverage columns (MovieLens genres)")
    p.add_argument("--out", default="receval-report",
                   help="report folder (a report receval wrote there is replaced; a report file name taken by anything else is refused unless --force)")
    p.add_argument("--force", action="store_true",
                   help="also replace report file names in --out that receval did not write (a link is replaced, never followed; nothing else there is touched)")

    def go(a: argparse.Namespace) -> int:
        from rich.console import Console

        parse_k(a.k)
        if not 0 < a.test_fraction < 1:
            raise RecevalError(f"`test-fraction` must be between 0 and 1, got {a.test_fraction}")
        check_report_dir(Path(a.out), a.force)  # before the work: a report is never overwritten unasked

        data = [a.data] if a.data else [str(bundled_path("ratings.csv")), str(bundled_path("movies.csv"))]
        for name in (*REPORT_FILES, MANIFEST):  # never an input, compared as files (a link to --data is refused)
            not_an_input(Path(a.out) / name, data, "report file")
        console = Console(stderr=True)
        t0 = time.perf_counter()

        def step(name: str):
            return console.status(f"[bold]{name}…")

        try:
            rep = run(a.data, k=a.k, threshold=a.threshold, test_fraction=a.test_fraction, model=a.model,
                      lambda_=a.lambda_, beyond=a.beyond, progress=step)
        except ValueError as exc:  # loaders raise ValueError with a one-line fix (in the API's terms)
            if isinstance(exc, RecevalError):
                raise
            raise RecevalError(cli_message(str(exc), a.data)) from None
        files = write_report(rep, Path(a.out), overwrite=a.force)
        total = time.perf_counter() - t0
        st = rep.protocol

        width = terminal_width()  # COLUMNS, else the terminal's; no limit when piped

        def say(text: str) -> None:  # a line at most the width, its leading spaces kept
            if width is None or len(text) <= width:
                print(text)
                return
            lead = text[: len(text) - len(text.lstrip())]
            lines = wrap_text(text.lstrip(), max(width - len(lead), 20), lead + "  ")
            print("\n".join([lead + lines[0], *lines[1:]]))

        for line in headline(rep):  # the finding first: how far each metric spreads across the dialects
            say(line)
        print()
        print(render(["dialect", *rep.columns], rep.cells(), "table",
                     title=f"This data: {rep.protocol['data']} — {st.get('n_test_users')} test users, k = {a.k}"), end="")
        say(LEGEND)
        for d, errs in rep.errors.items():
            for c, why in errs.items():
                say(f"error: {d} {c}: {why}")
        n_users = st.get("n_test_users") or 0
        if n_users < SMALL_SAMPLE:
            say(f"caveat: only {n_users} test users (fewer than {SMALL_SAMPLE}): the values and the differences "
                  "between dialects are noisy on so small a sample; use more data (--data) for conclusions")
        print(render(["dialect", *COLUMNS], published_rows(COLUMNS), "table",
                     title="The study (MovieLens-20M, companion repository res.csv)"), end="")
        say(f"protocol: {json.dumps({k: st[k] for k in st if k.startswith('n_') or k in ('split_time', 'threshold')}, default=str)}")
        say(f"report: {Path(a.out)}/ ({', '.join(f.name for f in files)}); {total:.1f} s")
        return 0

    return go


#: the fixes the loaders and the split name in the API's terms -> in the command line's (every
#: option named here is one `receval reproduce` has)
_CLI_FIXES = (
    ("; drop them or use random_split", " (a truncated or edited file?); the study splits by time, so every rating "
                                        "needs one: drop those rows, or pass a complete MovieLens release with --data"),
    (" (use load_interactions for other files)", "; pass a MovieLens release (a folder, a zip, or its ratings file) with --data"),
    ("; use a later cutoff or a smaller test_fraction", "; use a smaller --test-fraction"),
    ("; e.g. test_fraction=0.2", "; e.g. --test-fraction 0.2"),
    ("; load them with receval.data.load_movielens", "; pass a MovieLens release with --data"),
)


def cli_message(message: str, data: str | None) -> str:
    """A loader's or the split's message with its fix in ``receval reproduce``'s options.

    >>> cli_message("global_time_split: 1 rows have no timestamp; drop them or use random_split", "r.csv")
    'the ratings in r.csv: 1 rows have no timestamp (a truncated or edited file?); the study splits by time, so every rating needs one: drop those rows, or pass a complete MovieLens release with --data'
    """
    for api, cli in _CLI_FIXES:
        message = message.replace(api, cli)
    for prefix in ("global_time_split: ", "random_split: ", "leave_last_out: "):
        if message.startswith(prefix):
            message = f"the ratings{f' in {data}' if data else ''}: " + message[len(prefix):]
    return message


__all__ = ["run", "headline", "spreads", "Spread", "DIALECT_LINE", "write_report", "check_report_dir", "MANIFEST", "own_files", "foreign_files", "LEGEND", "REPORT_FILES", "published_rows", "Reproduction", "fmt_value"]
