"""Messages and rendered cells from the API are as bounded and safe as from the command line:
an error echoes at most a bounded piece of the user's text on one line, and every table format
shows user text (run names, paths, ids) as written on one line."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest

import receval
from receval.errors import MESSAGE_LIMIT, RecevalError, SpecError, TiesRefused
from receval.report import render

RECS = pd.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.5, 0.4]})
TRUTH = pd.DataFrame({"user": [1], "item": [1]})


@pytest.mark.parametrize("spec", [
    "x" * 100_000,
    "ndcg(" + "a=b," * 20_000 + ")@5",
    "ndcg@5|" + "z" * 100_000,
    "ndcg(ties=" + "q" * 100_000 + ")@5",
    "ndcg@" + "9" * 100_000,
    "ndcg(ties=ave\nrage)@5",
])
def test_api_spec_errors_are_one_bounded_line(spec):
    with pytest.raises(SpecError) as info:
        receval.evaluate(RECS, TRUTH, [spec])
    msg = str(info.value)
    assert len(msg) <= MESSAGE_LIMIT and "\n" not in msg, msg[:200]
    assert "…" in msg or len(spec) < 100


def test_explain_bounds_its_echo():
    from receval.cli import explain

    with pytest.raises(RecevalError) as info:
        explain("ndcg(k=" + "1" * 50_000 + ")")
    assert len(str(info.value)) <= MESSAGE_LIMIT


def test_bounded_errors_still_pickle_and_short_ones_are_unchanged():
    e = SpecError("unknown metric 'ndgc'; did you mean 'ndcg'?")
    assert str(e) == "unknown metric 'ndgc'; did you mean 'ndcg'?"
    assert str(pickle.loads(pickle.dumps(e))) == str(e)
    t = TiesRefused("entropy", {5: 3}, "straddle")
    assert str(pickle.loads(pickle.dumps(t))) == str(t)


NASTY = "a\nb [bold]x[/bold] $y$ | z\r\nw"


@pytest.mark.parametrize("fmt", ["markdown", "latex", "table"])
def test_render_shows_user_text_as_written_on_one_line(fmt):
    out = render(["run", "value"], [[NASTY, 1.5], ["plain", 2.0]], fmt)
    rows = [line for line in out.splitlines() if "1.5" in line]
    assert len(rows) == 1, out  # the line breaks did not split the row
    row = rows[0]
    if fmt == "markdown":
        assert row.count(" | ") == 1 and "\\|" in row and "<br>" in row
    elif fmt == "latex":
        assert r"\$y\$" in row and r"\textbar{}" in row and row.count(" & ") == 1
    else:
        assert "[bold]x[/bold]" in row  # rich markup shown, not applied
