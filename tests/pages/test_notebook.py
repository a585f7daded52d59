"""Notebook-first objects (issue 23): the HTML display and repr of Results, Runs and
Comparison (well-formed, escaped, with the values, signatures, users and fingerprints), the
per-user frames of Runs in the layout of Results, and the typed public signatures."""

from __future__ import annotations

import html
import inspect
from html.parser import HTMLParser

import polars as pl
import pytest

import receval
from receval.comparison import Comparison, Interval, PairTest
from receval.errors import SpecError
from receval.runs import Runs, evaluate_runs
from receval.comparison import read_json
from receval.tables import render_table
from receval.report import fmt_num

HOSTILE = "<script>alert('x')</script> & \"q\""
TRUTH = {"user_id": ["u1", "u1", "u2", "u3"], "item_id": [10, 11, 20, 30]}
RUN_A = {"user_id": ["u1", "u1", "u2", "u3"], "item_id": [10, 12, 20, 31], "score": [0.9, 0.8, 0.7, 0.6]}
RUN_B = {"user_id": ["u1", "u2", "u2"], "item_id": [11, 21, 20], "score": [0.5, 0.9, 0.1]}  # nothing for u3
VOID = {"br", "hr", "img", "input", "meta", "link", "col", "wbr"}


class _Checker(HTMLParser):
    """Every element closed in order; the text and the attributes as a browser reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self.titles: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.titles += [v for k, v in attrs if k == "title" and v is not None]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Checker:
    c = _Checker()
    c.feed(page)
    c.close()
    assert c.stack == [], c.stack
    return c


@pytest.fixture(scope="module")
def runs() -> Runs:
    return evaluate_runs({"a": RUN_A, HOSTILE: RUN_B}, TRUTH, ["ndcg@[1,2]", "hitrate@2"])


def test_results_display_values_users_signatures_and_fingerprints():
    res = receval.evaluate(RUN_A, TRUTH, ["ndcg@2", "recall@2"])
    page = res._repr_html_()
    c = _parse(page)
    text = "".join(c.text)
    for e in res.entries:
        assert e.metric in text and fmt_num(e.value) in text and f">{e.users}<" in page
        assert e.signature in c.titles  # the whole signature as the tooltip
        assert e.signature in text  # and in the <details> element
    assert "script" not in c.tags and "details" in c.tags
    for name, fp in res.fingerprints.items():
        assert fp in c.titles and name in text
    # the short form in the cell: the own fields and …
    assert "ndcg@2|gain:binary|ideal:cut|base:2|disc:log|…" in text
    lines = repr(res).splitlines()
    assert lines[0] == f"Results: 2 metrics (receval {receval.__version__})" and lines[1].split() == ["metric", "value", "users"]
    assert lines[2].split() == ["ndcg@2", fmt_num(res["ndcg@2"]), str(res._entry("ndcg@2").users)]


def test_runs_display_escapes_the_names(runs):
    page = runs._repr_html_()
    c = _parse(page)
    text = "".join(c.text)
    assert "<script>" not in page and html.escape(HOSTILE) in page
    assert HOSTILE in text  # shown as written
    assert "script" not in c.tags
    for name, res in runs.results.items():
        for m, v in res.values.items():
            assert fmt_num(v) in text
        assert res.fingerprints["recs"] in c.titles
    assert "3 users" in text and "user set: truth" in text
    assert all(s in c.titles for s in runs.results["a"].signatures.values())
    r = repr(runs)
    assert r.startswith("Runs: 2 runs x 3 metrics on 3 users") and HOSTILE in r and len(r) < 2000


def test_comparison_display_has_the_table_legend_signatures_and_tests(runs):
    cmp = runs.compare(ci="t", correction="none")
    page = cmp._repr_html_()
    c = _parse(page)
    text = "".join(c.text)
    assert "<script>" not in page and "script" not in c.tags and HOSTILE in text
    for (r, m), v in cmp.values.items():
        assert f"{v:.4f}" in text
    for sig in cmp.signatures.values():
        assert sig in c.titles and sig in text
    assert "paired t-test" in text and "paired tests (3)" in text and "3 paired users" in text
    r = repr(cmp)
    assert r.startswith("Comparison: 2 runs x 3 metrics on 3 paired users; t test") and "*" in r


def test_a_comparison_read_back_from_json_displays():
    values = {("a", "m@1"): 0.5, ("b", "m@1"): 0.25}
    cmp = Comparison(["a", "b"], ["m@1"], values, {"m@1": True}, {"m@1": "m@1|rel:all|v:0.1.0|test:t"}, 10,
                     {k: Interval(v - 0.1, v + 0.1, "t", 0.95) for k, v in values.items()},
                     [PairTest("m@1", "a", "b", 0.25, 0.01, 0.01, "t", "none", 0.7, "cohen_dz", 4, 4, 2)])
    back = read_json(render_table(cmp, "json", ci=True))
    c = _parse(back._repr_html_())
    assert "0.5000" in "".join(c.text) and "[0.4000, 0.6000]" in "".join(c.text)


# ---- per-user frames ----------------------------------------------------------------------------


def test_runs_per_user_is_a_frame_in_the_layout_of_results(runs):
    pu = runs.per_user()
    assert isinstance(pu, pl.DataFrame)
    assert pu.columns == ["run", "user_id", "ndcg@1", "ndcg@2", "hitrate@2"]
    assert pu.height == 2 * 3 and pu["run"].to_list() == ["a"] * 3 + [HOSTILE] * 3
    assert pu["user_id"].to_list() == ["u1", "u2", "u3"] * 2  # string ids as given
    assert pu.filter(pl.col("run") == HOSTILE)["hitrate@2"].to_list() == [1.0, 1.0, 0.0]  # u3: no list, 0
    one = runs.per_user(HOSTILE)
    assert one.equals(runs.results[HOSTILE].per_user()) and "run" not in one.columns
    pdf = pu.to_pandas()
    assert list(pdf.columns) == pu.columns and len(pdf) == 6
    with pytest.raises(SpecError, match="no run 'c'"):
        runs.per_user("c")


def test_runs_arrays_feed_the_statistics(runs):
    arrays = runs.arrays()
    assert list(arrays) == runs.names and list(arrays["a"]) == runs.metrics
    frame = runs.per_user()
    for name in runs.names:
        for m in runs.metrics:
            assert arrays[name][m].tolist() == frame.filter(pl.col("run") == name)[m].to_list()


def test_integer_ids_stay_integers():
    truth = {"user_id": [1, 2], "item_id": [10, 20]}
    r = evaluate_runs({"a": {"user_id": [1, 2], "item_id": [10, 20], "score": [1.0, 1.0]}}, truth, ["hitrate@1"])
    assert r.per_user()["user_id"].dtype.is_integer()


# ---- typed public signatures --------------------------------------------------------------------


@pytest.mark.parametrize("func", ["receval.evaluate", "receval.runs.evaluate_runs", "receval.stats.compare",
                                  "receval.sampled.sampled_evaluate", "receval.verify", "receval.stats.interval"])
def test_public_signatures_name_their_types(func):
    import importlib

    module, _, name = func.rpartition(".")
    f = getattr(importlib.import_module(module), name)
    params = inspect.signature(f).parameters
    loose = [p for p, v in params.items() if v.kind not in (v.VAR_KEYWORD,) and (v.annotation in ("Any", inspect._empty))]
    assert not loose, f"{func}: {loose} typed Any"


def test_the_frame_type_names_every_input_kind():
    from receval import types

    assert inspect.signature(receval.evaluate).parameters["recs"].annotation == "Frame"
    assert inspect.signature(receval.evaluate).parameters["metrics"].annotation == "Metrics"
    for kind in ("pl.DataFrame", "pl.LazyFrame", "pd.DataFrame", "pa.Table", "SparkDataFrame", "Mapping", "str", "PathLike"):
        assert kind in types.Frame, kind
