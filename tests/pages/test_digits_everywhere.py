"""Issue 34: every table receval prints shows 4 significant digits (the runs tables' rule,
:func:`receval.report.fmt_num`), ``receval evaluate``'s own included; CSV and JSON keep full
precision."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace

import numpy as np
import pytest

from receval import evaluate
from receval.cli import main
from receval.examples import WORKED_RECS, WORKED_TRUTH, example_path
from receval.report import fmt_value, render

SMALL, LARGE = 0.000123456, 0.98765


@pytest.fixture(scope="module")
def res():
    r = evaluate(WORKED_RECS, WORKED_TRUTH, ["precision@2", "ndcg@2"])
    return replace(r, entries=[replace(r.entries[0], value=SMALL), replace(r.entries[1], value=LARGE)])


def test_the_cell_rule():
    assert fmt_value(SMALL) == "0.0001235" and fmt_value(LARGE) == "0.9877"
    assert fmt_value(np.float32(0.5)) == "0.5000" and fmt_value(np.float64(LARGE)) == "0.9877"
    assert fmt_value(3) == "3" and fmt_value(float("nan")) == "–"


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_evaluate_tables_use_significant_digits(res, fmt):
    text = res.render(fmt, width=None)
    assert "0.0001235" in text and "0.9877" in text, text
    assert "0.000123" + "456" not in text and "0.987650" not in text and "0.000123 " not in text


def test_evaluate_table_at_a_narrow_width_and_its_displays(res):
    text = res.render("table", width=60)
    assert "0.0001235" in text and "0.9877" in text
    assert "0.0001235" in repr(res) and "0.9877" in res._repr_html_()


def test_csv_and_json_keep_full_precision(res):
    rows = list(csv.DictReader(io.StringIO(res.render("csv"))))
    assert [float(r["value"]) for r in rows] == [SMALL, LARGE]
    assert f'"value": {SMALL}' in res.render("json") and f'"value": {LARGE}' in res.render("json")


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_render_rows_use_significant_digits(fmt):
    text = render(["name", "value"], [["a", SMALL], ["b", LARGE]], fmt, width=None)
    assert "0.0001235" in text and "0.9877" in text
    assert render(["name", "value"], [["a", SMALL]], "csv").splitlines()[1] == f"a,{SMALL}"


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_the_command_line_prints_no_six_decimals(fmt, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    rc = main(["evaluate", str(example_path("recs.csv")), str(example_path("truth.csv")), "-m", "ndcg@10",
               "-m", "precision@10", "-m", "coverage@10", "--format", fmt])
    out = capsys.readouterr().out
    assert rc in (0, None)
    assert not re.search(r"\b\d\.\d{6}\b", out), out
    assert re.search(r"\b0\.\d{4}\b", out)
