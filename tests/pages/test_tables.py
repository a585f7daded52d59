"""Tables of a Comparison: every format, escaping, best marking, significance markers.

The Comparisons are built by hand from small numbers (the statistics are tested with
receval.stats); what is tested here is how they are shown.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import subprocess

import pytest

from receval.comparison import Comparison, Interval, PairTest
from receval.errors import SpecError
from receval.comparison import read_json
from receval.tables import (
    FORMATS,
    build,
    latex_escape,
    letters_for,
    render_table,
    significance_level,
    write_table,
)

HOSTILE = "my_run 100% & #1 {x} $y$"


def _sig(metric: str, **extra: str) -> str:
    fields = {"rel": "4.5", "dialect": "standard", "test": "t", "corr": "holm", "alpha": "0.05"} | extra
    return metric + "|" + "|".join(f"{k}:{v}" for k, v in fields.items()) + "|v:0.1.0"


def _pair(metric, a, b, diff, p_adj, p=None):
    return PairTest(metric, a, b, diff, p if p is not None else p_adj / 3, p_adj, "t", "holm", diff / 0.1,
                    "cohen_dz", 5, 1, 4)


def make(ci: bool = True, runs=("ease", "pop", "bpr")) -> Comparison:
    """ndcg@10: ease and bpr tie at 0.4 (both best), pop 0.2; rmse (lower is better): ease best."""
    ease, pop, bpr = runs
    values = {(ease, "ndcg@10"): 0.4, (pop, "ndcg@10"): 0.2, (bpr, "ndcg@10"): 0.4,
              (ease, "rmse"): 0.9, (pop, "rmse"): 1.1, (bpr, "rmse"): 0.95}
    intervals = {k: Interval(v - 0.01, v + 0.02, "bca", 0.95) for k, v in values.items()} if ci else {}
    pairs = [
        _pair("ndcg@10", ease, pop, 0.2, 0.003),     # ease beats pop
        _pair("ndcg@10", ease, bpr, 0.0, 1.0),       # tie: no marker
        _pair("ndcg@10", pop, bpr, -0.2, 0.04),      # bpr beats pop (b is the winner)
        _pair("rmse", ease, pop, -0.2, 0.03),        # lower is better: ease beats pop
        _pair("rmse", ease, bpr, -0.05, 0.08),       # not significant at 0.05
        _pair("rmse", pop, bpr, 0.15, 0.05),         # p_adj == alpha: not significant (p < alpha)
    ]
    return Comparison(list(runs), ["ndcg@10", "rmse"], values, {"ndcg@10": True, "rmse": False},
                      {m: _sig(m) for m in ("ndcg@10", "rmse")}, 15, intervals, pairs)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_every_run_metric_and_signature(fmt):
    text = render_table(make(), fmt, ci=True)
    assert text.strip()
    for name in ("ease", "pop", "bpr", "ndcg@10", "rmse"):
        assert name in text
    assert _sig("ndcg@10") in text or (fmt == "latex" and "dialect:standard" in text)


def test_letters():
    assert letters_for(["x", "y"]) == {"x": "a", "y": "b"}
    many = letters_for([str(i) for i in range(28)])
    assert many["25"] == "z" and many["26"] == "aa" and many["27"] == "ab"


def test_best_marks_ties_and_lower_is_better():
    m = build(make())
    assert {r for r in ("ease", "pop", "bpr") if m.cells[(r, "ndcg@10")].best} == {"ease", "bpr"}
    assert {r for r in ("ease", "pop", "bpr") if m.cells[(r, "rmse")].best} == {"ease"}
    md = render_table(make(ci=False), "markdown")
    assert md.count("**0.4000**") == 2 and "**0.9000**" in md and "**1.1000**" not in md
    tex = render_table(make(ci=False), "latex")
    assert r"\textbf{0.9000}" in tex and r"\textbf{1.1000}" not in tex and tex.count(r"\textbf{0.4000}") == 2


def test_markers_follow_p_adjusted_at_the_level_and_the_direction():
    cmp = make()
    m = build(cmp, alpha=0.05)
    got = {(r, k): m.cells[(r, k)].better_than for r in cmp.runs for k in cmp.metrics}
    # expected from the pairs themselves: p_adjusted < alpha, winner by the metric's direction
    want: dict = {key: () for key in got}
    for t in cmp.pairs:
        if t.p_adjusted < 0.05 and t.diff != 0:
            good = (t.diff > 0) == cmp.higher_is_better[t.metric]
            win, lose = (t.a, t.b) if good else (t.b, t.a)
            want[(win, t.metric)] += (m.letters[lose],)
    assert got == want
    assert got[("ease", "ndcg@10")] == ("b",) and got[("bpr", "ndcg@10")] == ("b",)
    assert got[("ease", "rmse")] == ("b",) and got[("bpr", "rmse")] == ()
    # a looser level adds the markers of p_adjusted = 0.05 and 0.08
    loose = build(cmp, alpha=0.1)
    assert loose.cells[("bpr", "rmse")].better_than == ("b",)
    assert loose.cells[("ease", "rmse")].better_than == ("b", "c")


def test_markers_use_the_adjusted_not_the_raw_p_value():
    cmp = make()
    cmp.pairs = [_pair("ndcg@10", "ease", "pop", 0.2, p_adj=0.2, p=0.01)]
    assert build(cmp).cells[("ease", "ndcg@10")].better_than == ()


def test_level_from_the_signatures_and_its_errors():
    cmp = make()
    assert significance_level(cmp) == 0.05
    cmp.signatures = {m: _sig(m, alpha="0.01") for m in cmp.metrics}
    assert significance_level(cmp) == 0.01
    assert build(cmp).cells[("ease", "ndcg@10")].better_than == ("b",)  # 0.003 < 0.01
    assert build(cmp).cells[("ease", "rmse")].better_than == ()         # 0.03 > 0.01
    cmp.signatures["rmse"] = _sig("rmse", alpha="0.05")
    with pytest.raises(SpecError, match="alpha"):
        significance_level(cmp)
    with pytest.raises(SpecError, match="between 0 and 1"):
        render_table(make(), "markdown", alpha=5)


def test_legend_names_test_correction_level_and_runs():
    text = render_table(make(), "markdown")
    assert "paired t-test between all pairs" in text and "Holm correction over 6 comparisons" in text
    assert "adjusted p &lt; 0.05" in text and "a = ease, b = pop, c = bpr" in text
    cmp = make()
    cmp.baseline = "pop"
    cmp.signatures = {m: _sig(m, test="wilcoxon", corr="bonferroni", alpha="0.01") for m in cmp.metrics}
    text = render_table(cmp, "table")
    assert "Wilcoxon signed-rank test against the baseline pop" in text and "Bonferroni correction" in text
    assert "adjusted p < 0.01" in text
    none = make()
    none.pairs = []
    assert "No paired tests" in render_table(none, "table")


def test_cis_only_on_request():
    assert "[0.3900, 0.4200]" in render_table(make(), "markdown", ci=True)
    assert "[0.3900, 0.4200]" not in render_table(make(), "markdown")
    assert "95% BCa bootstrap confidence interval" in render_table(make(), "markdown", ci=True)


def test_latex_escapes_hostile_names():
    cmp = make(runs=(HOSTILE, "pop", "a\\b~c^d"))
    tex = render_table(cmp, "latex", title="EASE_v2 & 50%")
    assert latex_escape(HOSTILE) in tex
    assert r"my\_run 100\% \& \#1 \{x\} \$y\$" in tex
    assert r"a\textbackslash{}b\textasciitilde{}c\textasciicircum{}d" in tex
    assert r"EASE\_v2 \& 50\%" in tex
    # no unescaped special character outside the commands we write ourselves
    body = re.sub(r"\\[a-zA-Z]+|\\[_%&#${}]|\\\\", "", tex)
    stripped = body.replace("{", "").replace("}", "")
    for ch in "_%#$":
        assert ch not in stripped, ch
    # every row has one & per metric column
    rows = [line for line in tex.splitlines() if line.endswith(r"\\") and "textsuperscript{(" in line]
    assert len(rows) == 3 and all(re.sub(r"\\&", "", line).count("&") == 2 for line in rows)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (TeX Live)")
def test_latex_compiles_with_pdflatex(tmp_path):
    cmp = make(runs=(HOSTILE, "pop", "a\\b~c^d<>|\""))
    (tmp_path / "t.tex").write_text(render_table(cmp, "latex", ci=True, standalone=True, title="A_b & c"),
                                    encoding="utf-8")
    out = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_html_is_self_contained_and_escaped():
    cmp = make(runs=("<script>alert(1)</script>", "pop", "bpr"))
    page = render_table(cmp, "html", ci=True)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "&lt;script&gt;" in page
    for external in ("src=", "href=", "@import", "url(", "http://", "https://", "<link"):
        assert external not in page
    assert '<span class="best">0.4000</span>' in page


def test_markdown_escapes_pipes_and_emphasis():
    cmp = make(runs=("a|b", "x_y*z", "bpr"))
    md = render_table(cmp, "markdown")
    assert r"a\|b (a)" in md and r"x\_y\*z (b)" in md
    # the table keeps its column count
    table_rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert all(len(re.split(r"(?<!\\)\|", line)) == 5 for line in table_rows)


def test_terminal_marks_the_best_with_a_star():
    text = render_table(make(ci=False), "table")
    assert "0.4000*" in text and "0.9000*" in text and "1.1000*" not in text
    assert "* (bold): the best value" in text


def test_csv_round_trips_every_number():
    cmp = make()
    cmp.values[("pop", "rmse")] = 1 / 3  # full precision, not the shown digits
    rows = list(csv.DictReader(io.StringIO(render_table(cmp, "csv", digits=2))))
    assert len(rows) == 6
    for row in rows:
        key = (row["run"], row["metric"])
        assert float(row["value"]) == cmp.values[key]
        assert float(row["ci_low"]) == cmp.intervals[key].low and float(row["ci_high"]) == cmp.intervals[key].high
        assert row["signature"] == cmp.signatures[row["metric"]]
        assert row["best"] == str(int(row["run"] in cmp.best(row["metric"])))


def test_json_round_trips_every_number_and_signature():
    cmp = make()
    cmp.values[("pop", "rmse")] = 1 / 3
    text = render_table(cmp, "json")
    doc = json.loads(text)
    assert doc["signatures"] == cmp.signatures and doc["alpha"] == 0.05 and doc["users"] == 15
    back = read_json(text)
    assert back.values == cmp.values and back.intervals == cmp.intervals and back.pairs == cmp.pairs
    assert back.higher_is_better == cmp.higher_is_better and back.runs == cmp.runs
    entry = next(v for v in doc["values"] if v["run"] == "ease" and v["metric"] == "ndcg@10")
    assert entry["best"] and entry["better_than"] == ["pop"]
    assert [p["significant"] for p in doc["pairs"]] == [True, False, True, True, False, False]


def test_json_writes_nan_as_null():
    cmp = make()
    cmp.values[("pop", "rmse")] = math.nan
    cmp.pairs = [_pair("rmse", "ease", "pop", math.nan, math.nan)]
    doc = json.loads(render_table(cmp, "json"))
    assert next(v for v in doc["values"] if v["run"] == "pop" and v["metric"] == "rmse")["value"] is None
    assert doc["pairs"][0]["p_adjusted"] is None and doc["pairs"][0]["significant"] is False
    assert math.isnan(read_json(json.dumps(doc)).values[("pop", "rmse")])
    assert "–" in render_table(cmp, "markdown")


def test_write_table_by_extension(tmp_path):
    for ext in (".md", ".tex", ".html", ".csv", ".json", ".txt"):
        path = write_table(make(), tmp_path / f"t{ext}")
        assert path.stat().st_size > 100
    with pytest.raises(SpecError, match="cannot tell the table format"):
        write_table(make(), tmp_path / "t.docx")
    with pytest.raises(SpecError, match="unknown table format"):
        render_table(make(), "docx")


@pytest.mark.parametrize("fmt", FORMATS)
def test_pairs_table_every_format(fmt):
    from receval.tables import render_pairs

    text = render_pairs(make(), fmt)
    assert "ndcg@10" in text and "holm" in text.lower() and "cohen" in text.lower()


def test_pairs_table_numbers_and_significance():
    from receval.tables import PAIR_HEADERS, render_pairs

    cmp = make()
    rows = list(csv.DictReader(io.StringIO(render_pairs(cmp, "csv"))))
    assert [float(r["p adjusted"]) for r in rows] == [t.p_adjusted for t in cmp.pairs]
    assert [float(r["mean a-b"]) for r in rows] == [t.diff for t in cmp.pairs]
    assert [r["significant"] for r in rows] == ["yes", "no", "yes", "yes", "no", "no"]
    doc = json.loads(render_pairs(cmp, "json", alpha=0.1))
    assert [d["significant"] for d in doc] == ["yes", "no", "yes", "yes", "yes", "yes"]
    assert set(doc[0]) == {*PAIR_HEADERS, "effect_name"} and doc[0]["effect_name"] == "cohen_dz"
    cmp.pairs = [_pair("ndcg@10", "ease", "pop", 0.2, 1e-9, 1e-10)]
    assert "< 0.0001" in render_pairs(cmp, "markdown")


def test_a_comparison_from_receval_stats_renders_with_its_signature_fields():
    import numpy as np

    from receval.stats import compare

    a = np.array([0.5, 0.7, 0.2, 0.9, 0.4, 0.8, 0.6, 0.7])
    pu = {"a": {"ndcg@10": a}, "b": {"ndcg@10": a - 0.2}, "c": {"ndcg@10": a - np.array([0.1, -0.1] * 4)}}
    cmp = compare(pu, signatures={"ndcg@10": "ndcg@10|rel:1|dialect:standard|v:0.1.0"}, test="wilcoxon",
                  correction="bonferroni", ci="t", resamples=100, seed=3, progress=False)
    text = render_table(cmp, "markdown", ci=True)
    assert "Wilcoxon signed-rank test between all pairs" in text and "Bonferroni correction over 3 comparisons" in text
    assert "100 resamples; seed 3" in text and "user set: truth" in text and "95% t confidence interval" in text
    model = build(cmp)
    for t in cmp.pairs:  # a marker exactly where the adjusted p-value is below 0.05, on the winner
        win = t.a if t.diff > 0 else t.b
        lose = t.b if win == t.a else t.a
        assert (model.letters[lose] in model.cells[(win, t.metric)].better_than) == (t.p_adjusted < 0.05)


def test_tukey_legend_names_its_own_adjustment():
    import numpy as np

    from receval.stats import compare

    a = np.linspace(0, 1, 12)
    pu = {"a": {"m@1": a}, "b": {"m@1": a * 0.5}, "c": {"m@1": a * 0.9}}
    cmp = compare(pu, test="tukey", ci="none", progress=False)
    text = render_table(cmp, "table")
    assert "Tukey's HSD between all pairs of runs, Tukey's family-wise adjustment over 3 comparisons" in text
