"""`receval ope LOG NAME=TARGET ...`: several targets compared as `receval runs` compares systems
(the table with significance letters, the paired differences, markdown / latex / json, --out,
--figure, --report DIR), and the inputs scanned from Parquet batch by batch."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from receval.cli import main
from receval.ope import evaluate

pytestmark = pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A uniform log of 10 items over 400 rounds; target `good` favours the item with the most
    clicks, `bad` one with the fewest, `same` is the logging policy."""
    d = tmp_path_factory.mktemp("ope")
    rng = np.random.default_rng(0)
    n, items = 400, 10
    item = rng.integers(0, items, n)
    reward = (rng.random(n) < np.where(item == 2, 0.6, 0.05)).astype(float)
    pl.DataFrame({"context_id": np.arange(n), "item_id": item, "reward": reward,
                  "propensity": np.full(n, 1 / items)}).write_csv(d / "log.csv")
    ctx, it = np.repeat(np.arange(n), items), np.tile(np.arange(items), n)
    for name, fav, p in (("good", 2, 0.7), ("bad", 5, 0.7), ("same", 0, 0.1)):
        pi = np.where(it == fav, p, (1 - p) / (items - 1))
        pl.DataFrame({"context_id": ctx, "item_id": it, "propensity": pi}).write_csv(d / f"{name}.csv")
    return d


def _run(capsys, *args):
    code = main(["ope", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_table_has_significance_letters_and_the_diagnostics(files, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = _run(capsys, files / "log.csv", f"good={files / 'good.csv'}", f"bad={files / 'bad.csv'}",
                          files / "same.csv", "-e", "ips", "-e", "snips", "--pairs")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("│ good"))
    assert "ᵇᶜ" in row  # good beats bad (b) and same (c) on both estimators
    assert "z test between all pairs of runs, Holm correction over 6 comparisons" in out
    assert "same 400 rounds" in out and "Paired tests" in out and "W/T/L: rounds" in out
    assert "mean_weight" in out and "same" in out  # the diagnostics table, the file named by its stem


def test_json_holds_the_estimates_differences_and_the_comparison(files, capsys):
    code, out, err = _run(capsys, files / "log.csv", f"good={files / 'good.csv'}", f"bad={files / 'bad.csv'}",
                          "-e", "ips", "--format", "json", "--baseline", "bad", "--correction", "bonferroni")
    assert code == 0, err
    doc = json.loads(out)
    api = evaluate(str(files / "log.csv"), {"good": str(files / "good.csv"), "bad": str(files / "bad.csv")}, ["ips"],
                   baseline="bad", correction="bonferroni")
    assert doc["differences"][0]["p_adjusted"] == api.differences[0].p_adjusted
    assert (doc["differences"][0]["a"], doc["differences"][0]["b"]) == ("bad", "good")
    pair = doc["comparison"]["pairs"][0]
    assert pair["test"] == "z" and pair["correction"] == "bonferroni" and pair["significant"] is True
    assert doc["comparison"]["baseline"] == "bad" and doc["comparison"]["users"] == 400


@pytest.mark.parametrize("fmt,marks", [("markdown", ["| good (a) | **0.3758**<sup>b</sup>", "| metric | a | b | mean a-b"]),
                                       ("latex", ["\\begin{table}", "tab:receval-pairs", "\\toprule"])])
def test_markdown_and_latex_have_the_table_and_the_pairs(files, capsys, fmt, marks):
    code, out, err = _run(capsys, files / "log.csv", f"good={files / 'good.csv'}", f"bad={files / 'bad.csv'}",
                          "-e", "ips", "--format", fmt)
    assert code == 0, err
    for m in marks:
        assert m in out


def test_report_figure_and_out_files(files, capsys, tmp_path):
    code, out, err = _run(capsys, files / "log.csv", f"good={files / 'good.csv'}", f"bad={files / 'bad.csv'}",
                          "-e", "ips", "-e", "snips", "--report", tmp_path / "rep", "--figure", f"differences={tmp_path / 'd.png'}",
                          "--figure", f"users:ips={tmp_path / 'u.svg'}", "--out", tmp_path / "t.md")
    assert code == 0, err
    page = (tmp_path / "rep" / "index.html").read_text()
    assert err.strip() == f"receval: report: {tmp_path / 'rep' / 'index.html'}"
    for part in ('<section id="results">', 'data-figure="differences"', '<section id="diagnostics">', "all rounds (400)",
                 "targets: good", "Holm correction"):
        assert part in page
    assert 'data-figure="users"' not in page  # per-round terms only on request
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG" and b"<svg" in (tmp_path / "u.svg").read_bytes()
    assert "| good (a) |" in (tmp_path / "t.md").read_text()
    # the outputs are new unless --force
    code, _, err = _run(capsys, files / "log.csv", f"good={files / 'good.csv'}", f"bad={files / 'bad.csv'}", "-e", "ips",
                        "--report", tmp_path / "rep")
    assert code == 2 and "--force" in err and "\n" not in err.strip()


@pytest.mark.parametrize("args,message", [
    (["--baseline", "good"], "--baseline compares targets: give two or more"),
    (["--report", "r"], "--report compares targets"),
])
def test_comparison_options_need_several_targets(files, capsys, args, message):
    code, _, err = _run(capsys, files / "log.csv", files / "good.csv", "-e", "ips", *args)
    assert code == 2 and message in err and "\n" not in err.strip()


def test_bad_names_are_refused(files, capsys):
    code, _, err = _run(capsys, files / "log.csv", f"x={files / 'good.csv'}", f"x={files / 'bad.csv'}", "-e", "ips")
    assert code == 2 and "give the targets different names" in err
    code, _, err = _run(capsys, files / "log.csv", f"good={files / 'good.csv'}", f"bad={files / 'bad.csv'}", "-e", "ips",
                        "--baseline", "nope")
    assert code == 2 and "name a baseline among the targets (good, bad)" in err


def test_parquet_inputs_are_scanned_never_read_whole(tmp_path, monkeypatch):
    """A Parquet log and target are read batch by batch from a scan (the memory budget of a log
    of 10M rounds): polars' whole-file reader is never called, and the values equal the in-memory ones."""
    log = pl.read_csv(_csv_log(tmp_path))
    target = pl.DataFrame({"context_id": np.repeat(np.arange(50), 3), "item_id": np.tile([0, 1, 2], 50),
                           "propensity": np.tile([0.6, 0.3, 0.1], 50)})
    log.write_parquet(tmp_path / "log.parquet")
    target.write_parquet(tmp_path / "target.parquet")
    want = evaluate(log, target, ["ips", "snips"])

    def refuse(*a, **k):
        raise AssertionError("read whole")

    monkeypatch.setattr(pl, "read_parquet", refuse)
    for b in (1, 3):
        got = evaluate(str(tmp_path / "log.parquet"), str(tmp_path / "target.parquet"), ["ips", "snips"], batches=b)
        assert [(e.value, e.low, e.high, e.diagnostics) for e in got.entries] == \
            [(e.value, e.low, e.high, e.diagnostics) for e in want.entries]


def _csv_log(d):
    rng = np.random.default_rng(1)
    pl.DataFrame({"context_id": np.arange(50), "item_id": rng.integers(0, 3, 50), "reward": rng.integers(0, 2, 50) * 1.0,
                  "propensity": np.full(50, 1 / 3)}).write_csv(d / "l.csv")
    return d / "l.csv"


@pytest.mark.parametrize("targets", [["good.csv"], ["good=good.csv", "bad=bad.csv", "same=same.csv"]])
def test_the_terminal_output_fits_80_columns_with_each_signature_once(files, capsys, monkeypatch, targets):
    """One target or several, every line of the terminal output fits COLUMNS=80 and each
    estimator's signature is printed once (factored under the comparison, whole under one target)."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run(capsys, files / "log.csv", *(files / t if "=" not in t else f"{t.split('=')[0]}={files / t.split('=')[1]}"
                                                     for t in targets), "-e", "ips", "-e", "snips", "-e", "ips(cap=5)",
                         *(["--pairs"] if len(targets) > 1 else []))
    assert code == 0
    assert max(len(x) for x in out.splitlines()) <= 80, max(out.splitlines(), key=len)
    assert out.count("floor:none|tgt:prob") == 3  # each estimator's signature (or its own part) once
