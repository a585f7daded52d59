"""The command line, in-process through ``receval.cli.main`` and once as a subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import polars as pl
import pytest

import receval
from receval.cli import main
from receval.examples import example_path
from receval.metrics import all_metrics
from receval.report import fmt_num

RECS = str(example_path("recs.csv"))
TRUTH = str(example_path("truth.csv"))
SPECS = ["ndcg@10", "map(denominator=k)@5", "recall@20", "mrr@10"]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def expected():
    return receval.evaluate(RECS, TRUTH, SPECS)


def metric_args():
    return [a for s in SPECS for a in ("-m", s)]


# ---- evaluate ------------------------------------------------------------------------------


def test_json_shape_and_values(capsys):
    code, out, err = run(["evaluate", RECS, TRUTH, *metric_args(), "--format", "json"], capsys)
    assert code == 0 and err.startswith("receval: note: rel:>0 (the default)") and len(err.splitlines()) == 1  # star ratings, no --rel
    doc = json.loads(out)
    assert set(doc) == {"version", "results", "fingerprints"}
    assert set(doc["fingerprints"]) == {"recs", "truth"} and all(v.startswith("rf1:") for v in doc["fingerprints"].values())
    assert doc["version"] == receval.__version__
    want = expected()
    assert [r["metric"] for r in doc["results"]] == SPECS
    for r in doc["results"]:
        assert set(r) == {"metric", "value", "signature", "users"}
        assert r["value"] == want[r["metric"]]  # full precision survives JSON
        assert r["signature"] == want.signature(r["metric"])
        assert r["users"] == want._entry(r["metric"]).users


def test_table_format(capsys):
    code, out, _ = run(["evaluate", RECS, TRUTH, *metric_args()], capsys)
    assert code == 0
    want = expected()
    for spec in SPECS:
        assert spec in out
        assert f"{spec} = {fmt_num(want[spec])}  {want.signature(spec)}" in out


def test_csv_format(capsys):
    code, out, _ = run(["evaluate", RECS, TRUTH, *metric_args(), "--format", "csv"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    want = expected()
    assert [r["metric"] for r in rows] == SPECS
    for r in rows:
        assert float(r["value"]) == want[r["metric"]]
        assert r["signature"] == want.signature(r["metric"])


def test_markdown_format(capsys):
    code, out, _ = run(["evaluate", RECS, TRUTH, *metric_args(), "--format", "markdown"], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "| metric | value | users | signature |"
    want = expected()
    assert len(lines) == 2 + len(SPECS) + 2  # the table, a blank line, the data fingerprints
    assert lines[-1].startswith("_Data: recs `rf1:") and lines[-2] == ""
    for spec, line in zip(SPECS, lines[2:2 + len(SPECS)]):
        assert line.startswith(f"| {spec} | {fmt_num(want[spec])} |")
        assert want.signature(spec).replace("|", "\\|") in line


def test_latex_format(capsys):
    code, out, _ = run(["evaluate", RECS, TRUTH, *metric_args(), "--format", "latex"], capsys)
    assert code == 0
    # a table float: caption and label, fitted to \linewidth, the signatures short under the tabular
    assert out.startswith("\\begin{table}") and "\\end{tabular}" in out and "\\label{tab:receval}" in out
    assert "\\resizebox{\\ifdim\\width>\\linewidth" in out
    tabular = out[out.index("\\begin{tabular}"):out.index("\\end{tabular}")]
    assert "dialect:standard" not in tabular and "dialect:standard" in out
    assert out.rstrip().splitlines()[-1].startswith("% data: recs rf1:") or out.rstrip().splitlines()[-1].startswith("% data:")
    want = expected()
    for spec in SPECS:
        assert f"{fmt_num(want[spec])}" in out


def test_every_format_is_offered():
    from receval.report import FORMATS

    assert set(FORMATS) == {"table", "json", "markdown", "latex", "csv"}


def test_every_format_choice_is_read_from_the_one_table():
    from receval.cli import build_parser
    from receval.report import TABLE_FORMATS, command_formats

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    offered = {}
    for name, sp in sub.choices.items():
        fmt = next((a for a in sp._actions if a.dest == "format"), None)
        if fmt is not None:
            offered[name] = tuple(fmt.choices)
    assert offered == {name: command_formats(name) for name in offered}
    assert offered["evaluate"] == ("table", "markdown", "latex", "csv", "json", "trec")
    assert offered["runs"] == ("table", "markdown", "latex", "html", "csv", "json")
    # every format is offered by some command, and every command that offers one exists
    assert {c for f in TABLE_FORMATS.values() for c in f.commands} == set(offered)
    assert all(f.commands for f in TABLE_FORMATS.values())


def test_compare_reproduce_and_verify_do_not_import_the_command_line():
    import ast
    from pathlib import Path

    import receval

    for name in ("compare", "reproduce", "verification"):
        tree = ast.parse((Path(receval.__file__).parent / f"{name}.py").read_text(encoding="utf-8"))
        found = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module in ("cli", "receval.cli")]
        assert not found, name


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_per_user_file(tmp_path, capsys, suffix):
    path = tmp_path / f"per_user.{suffix}"
    code, _, _ = run(["evaluate", RECS, TRUTH, *metric_args(), "--per-user", str(path), "--format", "json"], capsys)
    assert code == 0
    frame = pl.read_csv(path) if suffix == "csv" else pl.read_parquet(path)
    want = expected().per_user()
    assert frame.columns == want.columns == ["user_id", *SPECS]
    assert frame["user_id"].to_list() == want["user_id"].to_list()
    for spec in SPECS:
        assert frame[spec].to_list() == pytest.approx(want[spec].to_list(), abs=1e-15)


def test_context_options_and_columns(tmp_path, capsys):
    recs = pl.read_csv(RECS).rename({"item_id": "movie"})
    truth = pl.read_csv(TRUTH).rename({"item_id": "movie"})
    recs.write_csv(tmp_path / "r.csv")
    truth.write_csv(tmp_path / "t.csv")
    code, out, err = run(
        ["evaluate", str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), "-m", "ndcg@10", "--item-col", "movie",
         "--ties", "item", "--norecs", "skip", "--format", "json"],
        capsys,
    )
    assert code == 0, err
    want = receval.evaluate(RECS, TRUTH, ["ndcg@10"], ties="item", norecs="skip")
    doc = json.loads(out)["results"][0]
    assert doc["value"] == want["ndcg@10"] and doc["signature"] == want.signature("ndcg@10")
    assert "|ties:item|" in doc["signature"] and "|norecs:skip|" in doc["signature"]


# ---- user mistakes: one line on stderr, non-zero, no traceback -----------------------------


def _dup_recs(tmp_path):
    frame = pl.read_csv(RECS)
    frame = pl.concat([frame, frame.head(1)])
    frame.write_csv(tmp_path / "dup.csv")
    return str(tmp_path / "dup.csv")


def _missing_col(tmp_path):
    pl.read_csv(RECS).rename({"item_id": "item"}).write_csv(tmp_path / "nocol.csv")
    return str(tmp_path / "nocol.csv")


def _garbage(tmp_path):
    (tmp_path / "garbage.parquet").write_bytes(b"not a parquet file")
    return str(tmp_path / "garbage.parquet")


MISTAKES = {
    "bad spec": (lambda tmp: [RECS, TRUTH, "-m", "ndgc@10"], "unknown metric 'ndgc'; did you mean 'ndcg'?"),
    "bad k": (lambda tmp: [RECS, TRUTH, "-m", "ndcg@0"], "`k` must be an integer >= 1, got 0"),
    "bad option": (lambda tmp: [RECS, TRUTH, "-m", "ndcg(ideal=cutt)@3"], "unknown value 'cutt' for option `ideal`"),
    "bad context value": (lambda tmp: [RECS, TRUTH, "-m", "ndcg@3", "--ties", "itme"], "did you mean 'item'?"),
    "missing column": (lambda tmp: [_missing_col(tmp), TRUTH, "-m", "ndcg@3"], "recommendations are missing column 'item_id' (found: user_id, item, score)"),
    "no such file": (lambda tmp: [str(tmp / "nope.csv"), TRUTH, "-m", "ndcg@3"], "file not found"),
    "unreadable file": (lambda tmp: [_garbage(tmp), TRUTH, "-m", "ndcg@3"], "re-write the recommendations file"),
    "duplicate pairs": (lambda tmp: [_dup_recs(tmp), TRUTH, "-m", "ndcg@3"], "dup='first'"),
    "threshold without rating": (lambda tmp: [RECS, RECS, "-m", "ndcg@3", "--rel", "4"], "needs a rating column"),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_user_mistake_is_one_line(tmp_path, capsys, name):
    make, fragment = MISTAKES[name]
    code, out, err = run(["evaluate", *make(tmp_path)], capsys)
    assert code != 0
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("receval: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in err


def test_explain_bad_spec_is_one_line(capsys):
    code, out, err = run(["explain", "map(denominator=kk)@3"], capsys)
    assert code != 0 and len(err.splitlines()) == 1 and err.startswith("receval: error: ")
    assert "did you mean 'k'?" in err


def test_subprocess_error_and_success(tmp_path):
    """The installed entry point: exit status, one stderr line, no traceback."""
    bad = subprocess.run(
        [sys.executable, "-m", "receval.cli", "evaluate", RECS, TRUTH, "-m", "ndcg@0"],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr == "receval: error: `k` must be an integer >= 1, got 0\n"
    good = subprocess.run(
        [sys.executable, "-m", "receval.cli", "evaluate", RECS, TRUTH, "-m", "ndcg@10", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["results"][0]["value"] == receval.evaluate(RECS, TRUTH, ["ndcg@10"])["ndcg@10"]


# ---- explain / metrics -----------------------------------------------------------------------


def test_explain_prints_formula_options_signature(capsys):
    code, out, err = run(["explain", "map(denominator=k)@20"], capsys)
    assert code == 0 and err == ""
    assert out.startswith("map(denominator=k)@20  —  MAP@k")
    # the formula in plain text (issue: "prints the exact formula (plain text ...)"); LaTeX in the docs
    assert "Formula (exact LaTeX in docs/metrics.md):" in out and "AP@k = 1/D Σ_{i=1..k} P@i · w_i" in out and ")/(" not in out
    assert "\\frac" not in out and ":math:" not in out
    assert "Resolved options:" in out
    assert "  denominator = k  [spec]" in out
    assert "  indicator = yes  [default]" in out
    for ctx in ("rel = all", "order = auto", "ties = average", "dup = error", "tdup = error", "empty = skip", "norecs = zero"):
        assert f"  {ctx}  [default]" in out, ctx
    sig = out.rstrip().splitlines()[-1].strip()
    assert sig == f"map@20|den:k|ind:yes|rel:all|order:auto|ties:average|hitscore:any|dup:error|tdup:error|empty:skip|norecs:zero|dialect:standard|v:{receval.__version__}"
    spec, _, _ = receval.parse_signature(sig)
    assert str(spec) == "map(denominator=k)@20"


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_metrics_lists_every_metric(capsys, fmt):
    code, out, err = run(["metrics", "--format", fmt], capsys)
    assert code == 0 and err == ""
    for m in all_metrics():
        label = m.name + ("@k" if m.needs_k else "")
        if fmt == "table":  # one block per metric, readable at 100 columns
            assert label in out.splitlines(), label
            for name, axis in m.axes.items():
                assert any(line.startswith(f"  {name} ") for line in out.splitlines()), (label, name)
        else:
            assert any(line.split("|")[1].strip() == label for line in out.splitlines() if line.count("|") >= 3), label
    if fmt == "table":
        assert max(len(line) for line in out.splitlines()) <= 100
    for ctx in ("rel", "order", "ties", "dup", "tdup", "empty", "norecs"):
        assert ctx in out


def test_version(capsys):
    assert main(["--version"]) == 0  # the fast path
    assert capsys.readouterr().out.strip() == f"receval {receval.__version__}"
    with pytest.raises(SystemExit) as exc:  # argparse's, when other arguments come along
        main(["--version", "metrics"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"receval {receval.__version__}"


def test_import_and_version_load_no_heavy_module():
    code = ("import sys, receval; from receval.cli import main; main(['--version']); "
            "print(sorted(m for m in ('polars', 'numpy', 'matplotlib', 'scipy', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"


def test_engine_polars_from_the_command_line(capsys):
    from pathlib import Path

    base = str(Path(__file__).resolve().parents[2] / "src" / "receval" / "data" / "examples")
    args = ["evaluate", f"{base}/recs.csv", f"{base}/truth.csv", "-m", "ndcg@10", "-m", "map@5", "--format", "json"]
    code_m, out_m, _ = run(args, capsys)
    code_p, out_p, _ = run(args + ["--engine", "polars"], capsys)
    assert code_m == code_p == 0
    assert json.loads(out_m)["results"] == json.loads(out_p)["results"]


def test_explain_warns_about_the_map_denominator(capsys):
    code, out, _ = run(["explain", "map@20"], capsys)
    assert code == 0 and "trec_eval, ranx and RecTools" in out and "map(denominator=r)" in out
    code, out, _ = run(["explain", "map(denominator=r)@20"], capsys)
    assert code == 0 and "trec_eval, ranx and RecTools" not in out
    code, out, _ = run(["explain", "map@20", "--dialect", "trec_eval"], capsys)
    assert code == 0 and "trec_eval, ranx and RecTools" not in out


def test_a_signature_is_a_spec(capsys, tmp_path):
    sig = ("map@20|den:r|ind:yes|rel:4.5|order:score|ties:input|hitscore:any|dup:error|tdup:error|"
           "empty:skip|norecs:skip|dialect:ms_recommenders|v:0.1.0")
    code, out, _ = run(["explain", sig], capsys)
    # ties:input is not the default (ties=average), so the spec the signature stands for says it
    assert code == 0 and out.startswith("map(denominator=r,norecs=skip,order=score,rel=4.5,ties=input)@20")
    # the signature evaluates to the value it signs, in the CLI and in the API
    spec, dialect, _ = receval.parse_signature(sig)
    want = receval.evaluate(RECS, TRUTH, [str(spec)], dialect=dialect)
    got = receval.evaluate(RECS, TRUTH, [sig])
    assert got.entries[0].value == want.entries[0].value
    code, out, _ = run(["evaluate", RECS, TRUTH, "-m", sig, "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["results"][0]["value"] == want.entries[0].value


def test_python_dash_m_receval_runs_the_command_line():
    """``python -m receval`` is the ``receval`` command (``src/receval/__main__.py``)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "receval", "--version"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("receval ")
    bad = subprocess.run([sys.executable, "-m", "receval", "evaluate"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
