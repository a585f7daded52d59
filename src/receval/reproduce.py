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


from . import __version__
from .cli import command
from .report import fmt_value, render
from .study import COLUMNS, PROTOCOL, PUBLISHED, STUDY_DIALECTS

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

    def cells(self) -> list[list[Any]]:
        """Rows as shown: the value, "–" where the library lacks the metric, "error" where it refused the data."""
        return [
            [d] + ["error" if c in self.errors.get(d, {}) else self.table[d].get(c) for c in self.columns]
            for d in self.table
        ]

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
    from .compare import compare_results
    from .data import load_bundled, load_genres, load_movielens
    from .data.protocol import prepare_study, recommend
    from .models import EASE, Popularity

    timings: dict[str, float] = {}
    step = progress or (lambda name: _Null())

    t0 = time.perf_counter()
    with step("loading ratings"):
        ratings = load_bundled() if data is None else load_movielens(data)
        study = prepare_study(ratings, threshold=threshold, test_fraction=test_fraction)
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
            recs, study.test, columns, dialects=["standard", *STUDY_DIALECTS], rel=threshold, **extra
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


def write_report(rep: Reproduction, out: Path) -> list[Path]:
    """Write the report folder; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    headers = ["dialect", *rep.columns]
    rows = rep.rows()
    files = []
    for fmt, name in (("csv", "table.csv"), ("markdown", "table.md"), ("latex", "table.tex")):
        path = out / name
        path.write_text(render(headers, rows, fmt), encoding="utf-8")
        files.append(path)
    table_json = {
        "dialects": {d: {c: _num(v) for c, v in vals.items()} for d, vals in rep.table.items()},
        "signatures": rep.signatures,
        "errors": rep.errors,
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
    path.write_text(json.dumps(table_json, indent=2), encoding="utf-8")
    files.append(path)
    path = out / "protocol.json"
    path.write_text(json.dumps(rep.protocol, indent=2, default=str), encoding="utf-8")
    files.append(path)
    path = out / "signatures.txt"
    lines = [f"{d}\t{c}\t{s}" for d, sigs in rep.signatures.items() for c, s in sigs.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    files.append(path)
    path = out / "spread.png"
    plot_spread(rep, path)
    files.append(path)
    return files


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def plot_spread(rep: Reproduction, path: Path) -> None:
    """One panel per metric: the value under each dialect, the standard one highlighted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = rep.columns
    ncol = 4
    nrow = math.ceil(len(cols) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4 * ncol, 3.2 * nrow), squeeze=False)
    for ax, col in zip(axes.flat, cols):
        pts = [(d, v) for d, vals in rep.table.items() if (v := vals.get(col)) is not None]
        for i, (d, v) in enumerate(sorted(pts, key=lambda p: p[1])):
            ax.scatter([v], [i], color="crimson" if d == "standard" else "steelblue", zorder=3)
            ax.annotate(d, (v, i), textcoords="offset points", xytext=(5, -3), fontsize=7)
        ax.set_title(col, fontsize=10)
        ax.set_yticks([])
        ax.grid(axis="x", alpha=0.3)
        if pts:
            lo, hi = min(v for _, v in pts), max(v for _, v in pts)
            pad = (hi - lo) * 0.35 or abs(hi) * 0.1 or 0.1
            ax.set_xlim(lo - pad * 0.2, hi + pad)
    for ax in list(axes.flat)[len(cols):]:
        ax.axis("off")
    fig.suptitle("Spread of each metric across library dialects (red: receval standard)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@command("reproduce", "run the RecSys'21 study's protocol and print the consistency table")
def _cli(p: argparse.ArgumentParser):
    p.add_argument("--data", help="a MovieLens release (folder or zip) or a ratings file; default: bundled ml-latest-small")
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--threshold", type=float, default=4.5, help="ratings >= this are relevant")
    p.add_argument("--test-fraction", type=float, default=0.2)
    p.add_argument("--model", choices=["ease", "popularity"], default="ease")
    p.add_argument("--lambda", dest="lambda_", type=float, default=0.5, help="EASE regularisation (the study's code: 0.5)")
    p.add_argument("--beyond", action="store_true", help="add α-nDCG, αβ-nDCG, entropy and coverage columns (MovieLens genres)")
    p.add_argument("--out", default="receval-report", help="report folder")

    def go(a: argparse.Namespace) -> int:
        from rich.console import Console

        from .errors import RecevalError
        from .spec import parse_k

        parse_k(a.k)
        if not 0 < a.test_fraction < 1:
            raise RecevalError(f"`test-fraction` must be between 0 and 1, got {a.test_fraction}")
        console = Console(stderr=True)
        t0 = time.perf_counter()

        def step(name: str):
            return console.status(f"[bold]{name}…")

        try:
            rep = run(a.data, k=a.k, threshold=a.threshold, test_fraction=a.test_fraction, model=a.model,
                      lambda_=a.lambda_, beyond=a.beyond, progress=step)
        except ValueError as exc:  # loaders raise ValueError with a one-line fix
            if isinstance(exc, RecevalError):
                raise
            raise RecevalError(str(exc)) from None
        files = write_report(rep, Path(a.out))
        total = time.perf_counter() - t0
        st = rep.protocol
        print(render(["dialect", *rep.columns], rep.cells(), "table",
                     title=f"This data: {rep.protocol['data']} — {st.get('n_test_users')} test users, k = {a.k}"), end="")
        for d, errs in rep.errors.items():
            for c, why in errs.items():
                print(f"error: {d} {c}: {why}")
        print(render(["dialect", *COLUMNS], published_rows(COLUMNS), "table",
                     title="The study (MovieLens-20M, companion repository res.csv)"), end="")
        print(f"protocol: {json.dumps({k: st[k] for k in st if k.startswith('n_') or k in ('split_time', 'threshold')}, default=str)}")
        print(f"report: {Path(a.out)}/ ({', '.join(f.name for f in files)}); {total:.1f} s")
        return 0

    return go


__all__ = ["run", "write_report", "published_rows", "Reproduction", "fmt_value"]
