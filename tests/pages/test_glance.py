"""Issue 34: output a reader takes in at a glance (signatures as fields, compact tables, ...)."""

from __future__ import annotations

import warnings

import pytest

import numpy as np

from glance_data import METRICS, files, frames
from receval import evaluate
from receval.cli import main
from receval.report import fmt_num
from receval.stats import compare
from receval.tables import render_pairs, render_table
from receval.runs import evaluate_runs
from receval.segments import compare_segments
from receval.spec import signature_fields
from receval.stats import parse_stats_signature

STATS = dict(resamples=200, seed=0, ci="percentile")


@pytest.fixture(scope="module")
def runs():
    truth, recs, train = frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = evaluate_runs(recs, truth, METRICS, rel=4)
    return truth, recs, train, r


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    return files(tmp_path_factory.mktemp("glance"))


def _cli(monkeypatch, capsys, cli_files, *extra):
    truth, named, train = cli_files
    monkeypatch.setenv("COLUMNS", "80")
    rc = main(["runs", truth, *named, *(x for m in METRICS for x in ("-m", m)), "--rel", "4", "--resamples", "200",
               "--train", train, *extra])
    out = capsys.readouterr().out
    assert rc == 0
    return out.splitlines()


def test_no_signature_contains_a_space(runs):
    truth, recs, train, r = runs
    sigs = list(evaluate(recs["ease"], truth, METRICS, rel=4).signatures.values())
    c = r.compare(**STATS)
    sigs += list(c.signatures.values())
    for kind in ("activity", "cold-users"):
        sc = compare_segments(r, kind, train=train, **STATS)
        sigs += [s for _, cc in sc.comparisons() for s in cc.signatures.values()]
    assert sigs and not [s for s in sigs if " " in s or "," in s]
    from receval import parse_signature

    for s in sigs:  # every one parses back, segments' too
        assert signature_fields(s) and parse_stats_signature(s).get("users", "truth") == "truth"
        assert parse_signature(s)[0].name in {m.split("@")[0] for m in METRICS}


def test_the_user_set_is_fields_with_a_true_reason(runs):
    truth, recs, train, r = runs
    c = r.compare(**STATS)
    assert c.dropped > 0
    fields = signature_fields(c.signatures["ndcg@10"])
    total = c.users + c.dropped
    assert fields["userset"] == "truth" and fields["paired"] == f"{c.users}/{total}" and fields["dropped"] == "norel"
    # the reason is true: the dropped users are exactly those without an item rated 4 or more
    relevant = set(truth.filter(truth["rating"] >= 4)["user_id"].to_list())
    assert c.dropped == len(set(truth["user_id"].to_list()) - relevant)
    assert parse_stats_signature(c.signatures["ndcg@10"])["dropped"] == "norel"


def test_a_segments_counts_are_its_own(runs):
    truth, recs, train, r = runs
    sc = compare_segments(r, "activity", train=train, **STATS)
    whole = int(signature_fields(sc.overall.signatures["ndcg@10"])["skipped"])
    own = []
    for c in sc.segments.values():
        f = signature_fields(c.signatures["ndcg@10"])
        assert int(f.get("skipped", 0)) == c.dropped and f.get("paired", f"{c.users}/{c.users}") == \
            f"{c.users}/{c.users + c.dropped}"
        own.append(c.dropped)
    assert sum(own) == whole and max(own) < whole


def test_the_tukey_signature_names_the_adjustment_applied(runs):
    c = runs[3].compare(test="tukey", **STATS)
    assert {signature_fields(s)["corr"] for s in c.signatures.values()} == {"tukey"}
    assert parse_stats_signature(c.signatures["ndcg@10"])["correction"] == "tukey"


def test_a_3x5_runs_fits_45_lines_of_80_columns(monkeypatch, capsys, cli_files):
    lines = _cli(monkeypatch, capsys, cli_files)
    assert len(lines) <= 45 and max(len(x) for x in lines) <= 80, (len(lines), max(len(x) for x in lines))
    text = "\n".join(lines)
    assert "*ᵇ" in text and "corr:holm" in text and "W/T/L" not in text  # letters; the pair table on request
    pairs = _cli(monkeypatch, capsys, cli_files, "--pairs")
    text = "\n".join(pairs)
    assert max(len(x) for x in pairs) <= 80 and "W/T/L" in text
    head = next(x for x in pairs if "W/T/L" in x)
    assert "correction" not in head and "test" not in head  # a constant column: said in the note
    assert "test: paired t-test; correction: Holm" in " ".join(text.split())


def test_segments_one_table_per_metric_in_80_lines(monkeypatch, capsys, cli_files):
    lines = _cli(monkeypatch, capsys, cli_files, "--segments", "activity")
    text = "\n".join(lines)
    assert len(lines) <= 80 and max(len(x) for x in lines) <= 80, (len(lines), max(len(x) for x in lines))
    assert sum(1 for x in lines if x.strip() in METRICS) == len(METRICS)  # one table per metric, titled
    assert text.count("Superscript letters") == 1 and text.count("signatures (") == 1  # the notes once


def test_signatures_full_on_request(monkeypatch, capsys, cli_files):
    text = "\n".join(_cli(monkeypatch, capsys, cli_files, "--signatures", "full", "--ci", "none"))
    assert "… =" not in text and text.count("dialect:standard") == len(METRICS)


def test_significant_digits_the_same_in_every_format():
    assert [fmt_num(x) for x in (0.0001234, 0.23814, 0.1, 12.34567)] == ["0.0001234", "0.2381", "0.1000", "12.35"]
    rng = np.random.default_rng(1)
    pu = {"a": {"m@1": rng.random(50) * 1e-3}, "b": {"m@1": rng.random(50) * 1e-4}}
    c = compare(pu, ci="t", progress=False)
    v = fmt_num(c.values[("a", "m@1")])
    assert v != "0.0005" and len(v.lstrip("0.").replace(".", "")) == 4
    for fmt in ("table", "markdown", "latex", "html"):
        assert v in render_table(c, fmt, ci=True, width=None), fmt
        assert fmt_num(c.pairs[0].diff) in render_pairs(c, fmt, width=None), fmt


def test_plural_of_one_comparison():
    pu = {"a": {"m@1": np.array([1.0, 0.0, 1.0])}, "b": {"m@1": np.array([0.0, 0.0, 1.0])}}
    text = render_table(compare(pu, ci="none", progress=False), "markdown")
    assert "over 1 comparison," in text


def test_global_metrics_users_read_all_and_runs_count_the_users_used(runs):
    truth, recs, train, r = runs
    res = evaluate(recs["ease"], truth, ["ndcg@10", "coverage@10"], rel=4)
    table = res.render("table", width=None)
    row = next(x for x in table.splitlines() if "coverage@10" in x)
    assert "all" in row and " 0 " not in row
    assert "all" in res.render("markdown") and "all" in repr(res)
    c = r.compare(ci="none", resamples=200)
    assert f"on {c.users} users" in repr(r) and f"{c.dropped} of {c.users + c.dropped} dropped" in repr(r)


def test_metrics_pattern_filters(capsys):
    assert main(["metrics", "ndcg"]) == 0
    out = capsys.readouterr().out
    heads = [x for x in out.splitlines() if x and not x.startswith(" ") and x.endswith("@k")]
    assert heads and all("ndcg" in h for h in heads)
    assert main(["metrics", "*recall*"]) == 0
    assert "recall@k" in capsys.readouterr().out
    assert main(["metrics", "ndgc"]) != 0
    err = capsys.readouterr().err
    assert "did you mean 'ndcg'" in err and len(err.strip().splitlines()) == 1


def test_evaluate_help_gives_text_and_values_of_every_context_option(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    lines = {x.split()[0]: x for x in out.splitlines() if x.strip().startswith("--")}
    for name, values in {"--order": "auto | score", "--ties": "average", "--dup": "error | first", "--tdup": "max",
                         "--empty": "skip | zero", "--norecs": "zero | skip", "--hitscore": "any | positive"}.items():
        assert values in lines[name] and "(default" in lines[name], lines[name]


def test_runs_says_truth_comes_first(capsys):
    assert main(["runs", "model=a.csv", "truth.csv", "-m", "ndcg@10"]) != 0
    err = capsys.readouterr().err
    assert "pass TRUTH first" in err
    with pytest.raises(SystemExit):
        main(["runs", "--help"])
    assert "TRUTH NAME=FILE" in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")


def test_explain_dialect_leads_with_the_differences(capsys):
    from receval.cli import explain

    text = explain("ndcg@10", "recbole")
    assert text.index("differs from the standard") < text.index("Formula") and "source:" in text.split("Formula")[0]
    neg = next(x for x in explain("ndcg@10").splitlines() if x.strip().startswith("neg ="))
    assert neg.split("]", 1)[1].strip()


def test_warnings_point_at_the_callers_line():
    truth = {"user_id": [1, 2, 3, 4], "item_id": [1, 2, 3, 4]}
    recs = {"user_id": [1, 9, 8, 7], "item_id": [1, 5, 5, 5], "score": [1.0, 1.0, 1.0, 1.0]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(recs, truth, ["ndcg@10"])
    from receval.errors import RecevalWarning

    ours = [w for w in caught if issubclass(w.category, RecevalWarning)]
    assert ours and all(w.filename == __file__ for w in ours), [(w.filename, w.lineno) for w in ours]


def test_latex_pair_table_is_a_float_that_fits(runs, monkeypatch, capsys, cli_files):
    c = runs[3].compare(**STATS)
    tex = render_pairs(c, "latex", label="main-pairs", fit="linewidth")
    assert tex.startswith("\\begin{table}") and "\\label{tab:main-pairs}" in tex and "\\resizebox{\\linewidth}" in tex
    head = next(x for x in tex.splitlines() if x.startswith("metric"))
    assert head.count("&") <= 7 and "correction" not in head  # the constants in the note
    assert "correction: Holm" in tex
    lines = _cli(monkeypatch, capsys, cli_files, "--format", "latex", "--latex-fit", "linewidth", "--label", "main")
    text = "\n".join(lines)
    assert text.count("\\begin{table}") == 2 and "\\label{tab:main-pairs}" in text


def test_single_k_metrics_share_one_panel_and_spread_marks_span_their_row(runs):
    pytest.importorskip("matplotlib")
    from receval.figures import plot_metric_at_k, plot_spread
    from receval.reproduce import Reproduction

    c = runs[3].compare(**STATS)
    fig = plot_metric_at_k(c)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 1  # five metrics of one k each: one dot plot, not five panels
    assert [t.get_text() for t in axes[0].get_xticklabels()] == METRICS
    xs = [x for line in axes[0].get_lines() if line.get_marker() == "o" for x in line.get_xdata()]
    assert len(set(xs)) == len(xs)  # no marker hides another
    rep = Reproduction({"standard": {"map@20": 0.2, "ndcg@20": 0.3}, "elliot@0.3.1": {"ndcg@20": 0.31}}, {}, {},
                       ["map@20", "ndcg@20"])
    fig = plot_spread(rep)
    missing = next(line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == "spread-missing")
    assert list(missing.get_xdata()) == [0.0, 1.0] and missing.get_marker() in ("None", "none", "")


def test_readme_is_for_users_first():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    heads = [x for x in readme.splitlines() if x.startswith("## ")]
    assert heads[:3] == ["## Quickstart", "## Your own data", "## Compare systems"]
    quick = readme.split("## Quickstart")[1].split("\n## ")[0]
    blocks = [b.split("\n", 1)[1].strip() for b in quick.split("```bash")[1:]]
    assert [b.split("```")[0].strip() for b in blocks] == ["pip install -e . && receval reproduce", "bash .ci/run"]
    assert "24.4 minutes" not in readme and "minutes" not in quick
    assert "What `bash .ci/run` does and costs" in (root / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_reproduction_page_numbers_keep_four_significant_digits():
    from receval.page import render_reproduction_page
    from receval.reproduce import Reproduction

    rep = Reproduction({"standard": {"map@20": 0.0001234}, "recbole@1.2.0": {"map@20": 0.25}}, {}, {}, ["map@20"])
    text = render_reproduction_page(rep, figures=False, published=[["recbole", 0.00056789]])
    assert "<td>0.0001234</td>" in text and "<td>0.2500</td>" in text and "<td>0.0005679</td>" in text


def test_evaluate_example_is_the_docs_first_command(capsys):
    assert main(["evaluate", "--example", "-m", "ndcg@10", "--rel", "4"]) == 0
    out = capsys.readouterr().out
    assert "ndcg@10" in out and "rel:4" in out
    assert main(["evaluate", "-m", "ndcg@10"]) == 2 and "--example" in capsys.readouterr().err
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert "receval evaluate --example -m ndcg@10" in doc and "$(python -c" not in doc
