"""Tables that fit the medium (issue 23): terminal tables within COLUMNS or the terminal's
width, signatures in a short form that reads back whole, LaTeX tables with a label that fit
``\\linewidth`` and carry no whole signature in the tabular."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from rich.cells import cell_len

import receval
from receval import parse_signature
from receval.cli import main
from receval.comparison import Comparison, Interval, PairTest
from receval.errors import SpecError
from receval.examples import example_path
from receval.report import (
    break_signature,
    render,
    resolve_width,
    shared_fields,
    signature_lines,
    terminal_width,
)
from receval.tables import latex_label, render_pairs, render_table, write_table

RECS = str(example_path("recs.csv"))
TRUTH = str(example_path("truth.csv"))
WIDTHS = (80, 100)
SIG_TAIL = "|rel:>0|order:score|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:" + receval.__version__


def _widest(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


@pytest.fixture(scope="module")
def other_runs(tmp_path_factory):
    """Two more runs: the example's lists with other scores (so other rankings)."""
    import polars as pl

    base = tmp_path_factory.mktemp("runs")
    recs = pl.read_csv(RECS)
    rng = np.random.default_rng(1)
    paths = []
    for name in ("b", "c"):
        path = base / f"{name}.csv"
        recs.with_columns(pl.Series("score", rng.random(recs.height))).write_csv(path)
        paths.append(f"{name}={path}")
    return paths


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


# ---- the terminal -------------------------------------------------------------------------------


def test_the_width_comes_from_columns_then_the_terminal_else_no_limit(monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    assert terminal_width() == 90 and resolve_width("terminal") == 90
    monkeypatch.setenv("COLUMNS", "10")
    assert terminal_width() == 40  # never narrower than a table can be laid out
    monkeypatch.delenv("COLUMNS")
    assert terminal_width() is None  # pytest captures stdout: not a terminal, no limit
    assert resolve_width(None) is None and resolve_width(72) == 72
    with pytest.raises(SpecError, match="width"):
        resolve_width(0)


@pytest.mark.parametrize("width", WIDTHS)
def test_evaluate_fits_columns(width, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["evaluate", RECS, TRUTH, "-m", "ndcg@10", "-m", "map(denominator=k)@5", "-m", "recall@20",
                "-m", "mrr@10"], capsys)
    assert _widest(out) <= width
    assert "0.2728" in out and "0.272813" not in out and "data: recs rf1:" in out
    # the signatures, short: each one's own fields and …, the shared fields once
    assert "ndcg@10|gain:binary|ideal:cut|base:2|disc:log|…" in out and "… = rel:>0|" in out


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_fits_columns(width, monkeypatch, capsys, other_runs):
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["runs", TRUTH, f"a={RECS}", *other_runs, "-m", "ndcg@[5,10,20]", "-m", "recall@10",
                "--resamples", "200", "--pairs"], capsys)
    assert _widest(out) <= width
    # the pair table (--pairs): the constant test and correction said once in its note (issue 34)
    for name in ("a (a)", "b (b)", "c (c)", "ndcg@5", "ndcg@20", "recall@10", "p adj.", "W/T/L", "correction: Holm"):
        assert name in out, name
    assert "[0." in out  # the intervals are still there (under the values)


def test_runs_without_a_limit_keeps_one_line_per_run(capsys, other_runs):
    out = _run(["runs", TRUTH, f"a={RECS}", *other_runs, "-m", "ndcg@[5,10,20]", "-m", "recall@10",
                "--resamples", "200"], capsys)
    assert _widest(out) > 100  # piped, no COLUMNS: nothing is wrapped
    row = next(line for line in out.splitlines() if line.startswith("│ a (a)"))
    assert row.count("[0.") == 4  # every interval beside its value
    assert "ndcg@10|gain:binary|ideal:cut|base:2|disc:log" + SIG_TAIL in out  # signatures whole


@pytest.mark.parametrize("width", WIDTHS)
def test_dialects_fits_columns(width, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["dialects"], capsys)
    assert _widest(out) <= width
    assert "recbole" in out and "trec_eval" in out and "precision" in out


@pytest.mark.parametrize("width", WIDTHS)
def test_metrics_fits_columns(width, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["metrics"], capsys)
    assert _widest(out) <= width and "ndcg@k" in out


@pytest.mark.parametrize("width", WIDTHS)
def test_the_reproduce_tables_fit(width, monkeypatch):
    """The renderer `receval reproduce` prints its tables with (the study's shape: 8 dialects,
    8 metric columns, errors and missing cells): at COLUMNS, its default."""
    from receval.reproduce import published_rows
    from receval.study import COLUMNS

    rows = published_rows(COLUMNS)
    rows[1][3] = "error"
    title = "This data: bundled ml-latest-small — 610 test users, k = 20"
    monkeypatch.setenv("COLUMNS", str(width))
    text = render(["dialect", *COLUMNS], rows, "table", title=title)
    assert _widest(text) <= width
    assert text == render(["dialect", *COLUMNS], rows, "table", title=title, width=width)
    for r in rows:
        assert r[0] in text
    assert "error" in text and "auc@20" in text and "ml-latest-small" in text


def test_a_table_too_narrow_for_any_block_is_stacked():
    headers = ["run", "a metric with a very long name indeed@10", "another metric with a long name@20"]
    rows = [["ease", 0.25, 0.5], ["pop", 0.125, 0.0625]]
    text = render(headers, rows, "table", width=40)
    assert _widest(text) <= 40
    assert "ease" in text and "0.2500" in text and "0.06250" in text


def test_pairs_split_into_blocks_repeat_the_metric_and_the_runs():
    cmp = _comparison(["ease", "pop"], ["ndcg@10"])
    text = render_pairs(cmp, "table", width=80)
    assert _widest(text) <= 80
    blocks = [b for b in text.split("\n\n") if b.strip()]
    assert len(blocks) >= 2 and all("ndcg@10" in b and "ease" in b and "pop" in b for b in blocks)


def test_a_file_is_never_laid_out_for_the_terminal(tmp_path, monkeypatch):
    cmp = _comparison(["ease", "pop", "bpr"], [f"ndcg@{k}" for k in (5, 10, 20, 50)])
    monkeypatch.setenv("COLUMNS", "60")
    write_table(cmp, tmp_path / "t.txt", ci=True)
    assert _widest((tmp_path / "t.txt").read_text()) > 60
    assert _widest(render_table(cmp, "table", ci=True)) <= 60


# ---- signatures in a short form -----------------------------------------------------------------


def test_shared_fields_rebuild_every_signature():
    sigs = ["ndcg@10|gain:binary" + SIG_TAIL, "recall@20|den:r" + SIG_TAIL, "map@5|den:k|ind:yes" + SIG_TAIL]
    own, shared = shared_fields(sigs)
    assert own == ["ndcg@10|gain:binary", "recall@20|den:r", "map@5|den:k|ind:yes"]
    assert [o + "|" + shared for o in own] == sigs
    assert shared_fields(sigs[:1]) == (sigs[:1], "")  # one signature: nothing to share


def test_a_broken_signature_reads_back_whole():
    sig = "ndcg@10|gain:binary|ideal:cut|base:2|disc:log" + SIG_TAIL
    lines = break_signature(sig, 40)
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines)
    assert all(line.rstrip().endswith("|") for line in lines[:-1])  # broken after a |, never in a field
    assert parse_signature("\n".join(lines)) == parse_signature(sig)


def test_signature_lines_whole_when_they_fit_short_when_not():
    sigs = ["ndcg@10|gain:binary" + SIG_TAIL, "recall@20|den:r" + SIG_TAIL]
    assert signature_lines(sigs, None) == sigs
    assert signature_lines(sigs, 200) == sigs
    lines = signature_lines(sigs, 60)
    assert all(len(line) <= 60 for line in lines)
    assert "ndcg@10|gain:binary|…" in lines and "recall@20|den:r|…" in lines
    shared = "".join(line.removeprefix("… = ").strip() for line in lines[lines.index("recall@20|den:r|…") + 1:])
    assert "ndcg@10|gain:binary|" + shared == sigs[0]


# ---- LaTeX --------------------------------------------------------------------------------------


def _comparison(runs, metrics, hostile_sig: bool = False) -> Comparison:
    values = {(r, m): 0.1 + 0.1 * i + 0.01 * j for i, r in enumerate(runs) for j, m in enumerate(metrics)}
    intervals = {k: Interval(v - 0.01, v + 0.01, "bca", 0.95) for k, v in values.items()}
    pairs = [PairTest(m, a, b, values[(a, m)] - values[(b, m)], 0.001, 0.004, "t", "holm", 0.8, "cohen_dz", 30, 5, 15,
                      Interval(-0.2, -0.05, "bca", 0.95))
             for m in metrics for i, a in enumerate(runs) for b in runs[i + 1:]]
    sigs = {m: m.split("@")[0] + "|gain:binary|ideal:cut|base:2|disc:log" + SIG_TAIL
            + "|test:t|corr:holm|ci:bca|level:0.95|B:10000|seed:0|userset:truth" for m in metrics}
    sigs = {m: s.replace(s.split("|")[0], m, 1) for m, s in sigs.items()}
    return Comparison(list(runs), list(metrics), values, {m: True for m in metrics}, sigs, 610, intervals, pairs)


def _tabular(tex: str) -> str:
    return tex[tex.index(r"\begin{tabular}"):tex.index(r"\end{tabular}")]


WIDE = _comparison(["ease-l500", "ease-l0.5", "popularity", "bpr_100%_&_more"],
                   [f"ndcg(ideal=hits)@{k}" for k in (5, 10, 20, 50)] + [f"recall@{k}" for k in (5, 10, 20, 50)])


def test_latex_has_a_caption_a_label_and_fits_the_line():
    tex = render_table(WIDE, "latex", ci=True)
    assert r"\begin{table}" in tex and r"\caption{" in tex and r"\label{tab:receval-runs}" in tex
    assert r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{\begin{tabular}" in tex
    assert r"\label{tab:main}" in render_table(WIDE, "latex", label="main")
    assert r"\label{tab:ml-20m-results}" in render_table(WIDE, "latex", title="ML-20M results")
    assert r"\resizebox{\linewidth}{!}{" in render_table(WIDE, "latex", fit="linewidth")
    assert r"\resizebox" not in render_table(WIDE, "latex", fit="none")
    with pytest.raises(SpecError, match="fit"):
        render_table(WIDE, "latex", fit="squeeze")
    with pytest.raises(SpecError, match="label"):
        render_table(WIDE, "latex", label="tab:a b{}")


def test_latex_label_from_the_title():
    assert latex_label(None, "") == "tab:receval"
    assert latex_label(None, "EASE & Pop: 50%") == "tab:ease-pop-50"
    assert latex_label("fig:x") == "fig:x" and latex_label("t1") == "tab:t1"


def test_no_line_of_the_tabular_carries_a_whole_signature():
    tex = render_table(WIDE, "latex", ci=True)
    body = _tabular(tex)
    for sig in WIDE.signatures.values():
        assert sig not in tex.replace(r"\textbar{}\allowbreak{}", "|")  # nowhere whole
        assert "dialect" not in body and "userset" not in body
    # the short form: each column's own fields, and the shared ones once
    assert tex.count("dialect:standard") == 1
    assert r"\dots{} = \texttt{" in tex
    full = render_table(WIDE, "latex", signatures="full")
    assert full.count("dialect:standard") == len(WIDE.metrics)


def test_evaluate_latex_in_a_float_with_label_and_fit(capsys):
    out = _run(["evaluate", RECS, TRUTH, "-m", "ndcg@10", "-m", "recall@20", "--format", "latex", "--label", "eval",
                "--latex-fit", "linewidth"], capsys)
    assert r"\label{tab:eval}" in out and r"\resizebox{\linewidth}{!}{\begin{tabular}" in out
    assert "dialect:standard" not in _tabular(out) and out.count("dialect:standard") == 1


def test_runs_latex_options_from_the_command_line(capsys, other_runs, tmp_path):
    out = _run(["runs", TRUTH, f"a={RECS}", *other_runs, "-m", "ndcg@10", "--resamples", "200", "--format", "latex",
                "--label", "tab:runs", "--out", str(tmp_path / "t.tex")], capsys)
    assert r"\label{tab:runs}" in out and r"\label{tab:runs}" in (tmp_path / "t.tex").read_text()


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (TeX Live)")
@pytest.mark.parametrize("fit", ["shrink", "linewidth", "none"])
def test_latex_compiles_and_fits_the_line(tmp_path, fit):
    (tmp_path / "t.tex").write_text(render_table(WIDE, "latex", ci=True, standalone=True, fit=fit, title="Wide & 50%"),
                                    encoding="utf-8")
    out = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:]
    log = (tmp_path / "t.log").read_text(errors="replace")
    overfull = re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)
    if fit == "none":
        assert overfull  # this table is wider than the line: only the fitted forms fit it
    else:
        assert not overfull, overfull


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (TeX Live)")
def test_evaluate_latex_compiles(tmp_path, capsys):
    out = _run(["evaluate", RECS, TRUTH, "-m", "ndcg@10", "-m", "map(denominator=k)@5", "--format", "latex"], capsys)
    doc = "\n".join([r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{booktabs}",
                     r"\usepackage{graphicx}", r"\begin{document}", out, r"\end{document}"])
    (tmp_path / "e.tex").write_text(doc, encoding="utf-8")
    res = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "e.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:]
    assert "Overfull" not in (tmp_path / "e.log").read_text(errors="replace")


def test_no_line_is_ever_wider_than_the_width():
    """Random tables (text and number columns, long names, titles) at random widths: every
    layout (whole, wrapped, blocks, stacked) stays within the width."""
    import random
    import string

    rng = random.Random(3)
    words = string.ascii_letters + "@_()="
    for _ in range(60):
        n = rng.randint(1, 12)
        headers = ["".join(rng.choices(words, k=rng.randint(1, 30))) for _ in range(n)]
        rows = [[rng.random() if rng.random() < 0.5 else
                 " ".join("".join(rng.choices(string.ascii_letters, k=rng.randint(1, 25))) for _ in range(rng.randint(1, 6)))
                 for _ in range(n)] for _ in range(rng.randint(0, 4))]
        width = rng.randint(40, 160)
        text = render(headers, rows, "table", width=width, title="T " * rng.randint(0, 50), keys=rng.randint(1, 3))
        assert _widest(text) <= width
    for _ in range(20):
        names = list(dict.fromkeys("".join(rng.choices(string.ascii_letters + "_ ", k=rng.randint(1, 40))).strip() or "x"
                                   for _ in range(rng.randint(1, 4))))
        metrics = list(dict.fromkeys(f"{rng.choice(['ndcg', 'recall', 'map(denominator=k)'])}@{rng.randint(1, 99)}"
                                     for _ in range(rng.randint(1, 8))))
        width = rng.randint(40, 140)
        cmp = _comparison(names, metrics)
        assert _widest(render_table(cmp, "table", ci=True, width=width)) <= width
        assert _widest(render_pairs(cmp, "table", width=width)) <= width
