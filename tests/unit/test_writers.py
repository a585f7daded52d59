"""Every writer follows the rules of receval.outputs: an input is never written (compared as
files: a hard link or a symlink to an input is the input), a file is replaced whole or not at
all (written to a temporary file beside it, then renamed into place), two outputs of one
command never share a file, and a failed write (disk full, file too large, not a folder) is a
one-line error naming the path, leaving no temporary file and the previous file intact."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from receval.cli import main
from receval.errors import DataError
from receval.examples import example_path

#: the tests of a change a lead applies in a file this change may not touch (see the report):
#: remove the marker with the change
NEEDS_RESULTS_CHANGE = pytest.mark.xfail(
    strict=True, reason="needs Results to know its inputs and write through receval.outputs (results.py, api.py)")
NEEDS_CLI_CHANGE = pytest.mark.xfail(
    strict=True, reason="needs cli.py: `runs` checks its outputs with check_outputs; main() reports any OSError in one line")


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name)


@pytest.fixture
def inputs(tmp_path):
    """truth.csv and two runs, a.csv and b.csv, in tmp_path (one file system: hard links work)."""
    truth = tmp_path / "truth.csv"
    truth.write_bytes(example_path("truth.csv").read_bytes())
    recs = pl.read_csv(example_path("recs.csv"))
    recs.write_csv(tmp_path / "a.csv")
    recs.with_columns(score=1 - pl.col("score")).write_csv(tmp_path / "b.csv")
    return tmp_path


def runs_argv(d: Path, *extra: str) -> list[str]:
    return ["runs", str(d / "truth.csv"), f"a={d / 'a.csv'}", f"b={d / 'b.csv'}", "-m", "ndcg@[5,10]",
            "--ci", "none", *extra]


def comparison():
    from receval.runs import evaluate_runs

    runs = {"a": pl.read_csv(example_path("recs.csv")),
            "b": pl.read_csv(example_path("recs.csv")).with_columns(score=1 - pl.col("score"))}
    return evaluate_runs(runs, pl.read_csv(example_path("truth.csv")), ["ndcg@[5,10]"]).compare(ci="none")


def reproduction():
    from receval.reproduce import Reproduction

    cols = ["hitrate@20", "precision@20"]
    return Reproduction({"standard": dict(zip(cols, [0.26, 0.0333])), "recbole@0.2.1": dict(zip(cols, [0.26, 0.04]))},
                        {"standard": {c: c + "|v:1" for c in cols}}, {"n_test_users": 9}, cols)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("receval: error: "), err
    return err[0]


# --- never an input: files, not path strings -------------------------------------------------


def test_not_an_input_refuses_a_hard_link(tmp_path):
    from receval.outputs import not_an_input

    (tmp_path / "in.csv").write_text("a\n1\n")
    os.link(tmp_path / "in.csv", tmp_path / "out.csv")
    with pytest.raises(DataError, match="is one of the inputs"):
        not_an_input(tmp_path / "out.csv", [str(tmp_path / "in.csv")])


def test_not_an_input_refuses_a_symlink_either_way(tmp_path):
    from receval.outputs import not_an_input

    (tmp_path / "in.csv").write_text("a\n1\n")
    (tmp_path / "out.csv").symlink_to(tmp_path / "in.csv")
    (tmp_path / "link.csv").symlink_to(tmp_path / "in.csv")
    with pytest.raises(DataError, match="is one of the inputs"):
        not_an_input(tmp_path / "out.csv", [tmp_path / "in.csv"])
    with pytest.raises(DataError, match="is one of the inputs"):  # the input named by a link
        not_an_input(tmp_path / "in.csv", [tmp_path / "link.csv"])
    not_an_input(tmp_path / "other.csv", [tmp_path / "in.csv"])  # a new file is not an input


def test_not_an_input_refuses_a_link_into_an_input_folder(tmp_path):
    from receval.outputs import not_an_input

    data = tmp_path / "ml"
    data.mkdir()
    (data / "ratings.csv").write_text("userId,movieId,rating,timestamp\n")
    report = tmp_path / "report"
    report.mkdir()
    (report / "table.csv").symlink_to(data / "ratings.csv")
    with pytest.raises(DataError, match="is one of the inputs"):
        not_an_input(report / "table.csv", [data])
    os.link(data / "ratings.csv", report / "table.md")
    with pytest.raises(DataError, match="is one of the inputs"):
        not_an_input(report / "table.md", [data])
    (data / "table.tex").write_text("an earlier report written into the data folder")
    not_an_input(data / "table.tex", [data])  # its own entry only: not a file the input holds twice


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_cli_per_user_link_to_an_input_is_refused(inputs, capsys, link):
    out = inputs / "per_user.csv"
    os.link(inputs / "truth.csv", out) if link == "hard" else out.symlink_to(inputs / "truth.csv")
    before = (inputs / "truth.csv").read_bytes()
    rc = main(["evaluate", str(inputs / "a.csv"), str(inputs / "truth.csv"), "-m", "ndcg@10",
               "--per-user", str(out), "--force"])
    assert rc == 2 and "is one of the inputs" in one_line_error(capsys)
    assert (inputs / "truth.csv").read_bytes() == before


@pytest.mark.parametrize("link", ["hard", "symbolic"])
@pytest.mark.parametrize("option", ["--out", "--figure"])
def test_cli_runs_output_linked_to_an_input_is_refused(inputs, capsys, link, option):
    out = inputs / ("table.csv" if option == "--out" else "figure.png")
    os.link(inputs / "a.csv", out) if link == "hard" else out.symlink_to(inputs / "a.csv")
    before = (inputs / "a.csv").read_bytes()
    rc = main(runs_argv(inputs, option, str(out) if option == "--out" else f"at-k={out}", "--force"))
    assert rc == 2 and "is one of the inputs" in one_line_error(capsys)
    assert (inputs / "a.csv").read_bytes() == before


@pytest.mark.parametrize("link", ["same", "hard", "symbolic"])
def test_write_per_user_never_replaces_an_input(inputs, link):
    import receval

    truth = inputs / "truth.csv"
    before = truth.read_bytes()
    res = receval.evaluate(str(inputs / "a.csv"), str(truth), ["ndcg@10"])
    out = truth if link == "same" else inputs / "per_user.csv"
    if link == "hard":
        os.link(truth, out)
    elif link == "symbolic":
        out.symlink_to(truth)
    with pytest.raises(DataError, match="is one of the inputs"):
        res.write_per_user(str(out), overwrite=True)
    assert truth.read_bytes() == before


def test_reproduce_never_writes_through_a_link_in_its_report_folder(tmp_path, capsys):
    """The report folder holds a symlink (table.csv) and a hard link (table.md) to the ratings
    file given as --data: with --force they are refused or replaced, never written through."""
    from receval.data.movielens import bundled_path

    ratings = tmp_path / "ratings.csv"
    ratings.write_bytes(bundled_path("ratings.csv").read_bytes())
    before = ratings.read_bytes()
    out = tmp_path / "report"
    out.mkdir()
    (out / "table.csv").symlink_to(ratings)
    os.link(ratings, out / "table.md")
    rc = main(["reproduce", "--data", str(ratings), "--test-fraction", "0.005", "--out", str(out), "--force"])
    capsys.readouterr()
    assert ratings.read_bytes() == before
    if rc == 0:  # replaced: the links are gone, the report is in their place
        assert not (out / "table.csv").is_symlink() and (out / "table.csv").read_text().startswith("dialect,")
        assert (out / "table.md").read_text().startswith("| dialect") and ratings.stat().st_nlink == 1
    else:  # refused
        assert rc == 2


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_api_writers_replace_a_link_never_the_file_it_names(tmp_path, link):
    """With overwrite (or --force) an existing output is replaced; when it is a link, the link
    is replaced and the file it names is left as it was."""
    from receval.figures import write_figure
    from receval.reproduce import write_report
    from receval.tables import write_table
    from receval.trec import write_qrels, write_run

    cmp = comparison()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")

    def link_at(path: Path) -> Path:
        os.link(precious, path) if link == "hard" else path.symlink_to(precious)
        return path

    write_run({"user_id": [1], "item_id": [2], "score": [0.5]}, link_at(tmp_path / "x.run"), overwrite=True)
    write_qrels({"user_id": [1], "item_id": [2]}, link_at(tmp_path / "x.qrels.gz"), overwrite=True)
    write_table(cmp, link_at(tmp_path / "t.json"))
    write_figure(cmp, "at-k", link_at(tmp_path / "f.svg"))
    (tmp_path / "report").mkdir()
    link_at(tmp_path / "report" / "table.md")
    write_report(reproduction(), tmp_path / "report", overwrite=True)
    assert precious.read_text() == "keep me"
    assert (tmp_path / "x.run").read_text() == "1 Q0 2 1 0.5 receval\n"
    assert "| dialect" in (tmp_path / "report" / "table.md").read_text()  # after the headline
    assert not any(p.is_symlink() for p in tmp_path.rglob("*"))


# --- the TREC writers: an existing file is kept unless overwrite=True -------------------------


def test_trec_writers_refuse_an_existing_file(tmp_path):
    from receval.trec import write_qrels, write_run

    run, qrels = tmp_path / "x.run", tmp_path / "x.qrels"
    run.write_text("precious run")
    qrels.write_text("precious qrels")
    with pytest.raises(DataError, match="already exists.*overwrite=True"):
        write_run({"user_id": [1], "item_id": [2], "score": [0.5]}, run)
    with pytest.raises(DataError, match="already exists.*overwrite=True"):
        write_qrels({"user_id": [1], "item_id": [2], "rating": [1]}, qrels)
    assert run.read_text() == "precious run" and qrels.read_text() == "precious qrels"
    write_run({"user_id": [1], "item_id": [2], "score": [0.5]}, run, overwrite=True)
    write_qrels({"user_id": [1], "item_id": [2], "rating": [1]}, qrels, overwrite=True)
    assert run.read_text() == "1 Q0 2 1 0.5 receval\n" and qrels.read_text() == "1 0 2 1\n"
    with pytest.raises(DataError, match="is a directory"):
        write_run({"user_id": [1], "item_id": [2], "score": [0.5]}, tmp_path, overwrite=True)
    with pytest.raises(DataError, match="does not exist"):
        write_qrels({"user_id": [1], "item_id": [2]}, tmp_path / "no" / "x.qrels")


def test_gzipped_trec_file_keeps_its_name_in_the_header(tmp_path):
    import gzip

    from receval.trec import write_run

    write_run({"user_id": [1], "item_id": [2], "score": [0.5]}, tmp_path / "x.run.gz")
    raw = (tmp_path / "x.run.gz").read_bytes()
    assert raw[3] & 0x08 and raw[10:16] == b"x.run\x00"  # FNAME: the output's name, not the temporary file's
    assert gzip.decompress(raw) == b"1 Q0 2 1 0.5 receval\n"


# --- whole or not at all ----------------------------------------------------------------------


def test_atomic_write_replaces_whole_or_not_at_all(tmp_path):
    from receval.outputs import atomic_write

    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError, match="mid-write"):
        with atomic_write(target, "w") as f:
            f.write("partial")
            raise RuntimeError("mid-write")
    assert not target.exists() and temp_files(tmp_path) == []
    target.write_text("previous")
    os.chmod(target, 0o640)
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(target, "wb") as f:
            f.write(b"partial")
            raise KeyboardInterrupt
    assert target.read_text() == "previous" and temp_files(tmp_path) == []
    with atomic_write(target, "w") as f:
        f.write("new")
        assert Path(f.name).parent == tmp_path and Path(f.name).name.startswith(".out.txt.tmp-")
        assert target.read_text() == "previous"  # nothing at the target until the whole file is written
    assert target.read_text() == "new" and temp_files(tmp_path) == []
    assert target.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its permissions


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG, errno.EDQUOT])
def test_a_failed_write_is_one_line_and_keeps_the_previous_file(tmp_path, monkeypatch, code):
    """Disk full shows at fsync on many file systems: the error names the path and the cause."""
    from receval.tables import write_table

    cmp = comparison()
    target = tmp_path / "t.csv"
    target.write_text("previous")

    def full(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DataError) as info:
        write_table(cmp, target)
    msg = str(info.value)
    assert "\n" not in msg and str(target) in msg and os.strerror(code) in msg
    assert target.read_text() == "previous" and temp_files(tmp_path) == []


def test_a_polars_writer_failing_inside_is_reported_by_its_cause(tmp_path):
    """polars reports a failed parquet write as its own error; the OSError the file raised is the cause."""
    from receval.outputs import atomic_write

    frame = pl.DataFrame({"a": list(range(100_000))})
    target = tmp_path / "p.parquet"
    target.write_text("previous")
    with pytest.raises(DataError, match="p.parquet.*No space left on device"):
        with atomic_write(target, "wb", what="per-user file") as f:
            real = f.raw.write

            def fail(b):
                if f.raw.tell() > 1000:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real(b)

            f.raw.write = fail
            frame.write_parquet(f)
    assert target.read_text() == "previous" and temp_files(tmp_path) == []


def test_a_figure_failing_mid_draw_leaves_no_file(tmp_path):
    """SVG is written while the figure is drawn: a failure leaves no half-written file."""
    from matplotlib.artist import Artist

    from receval.figures import paper_style, save_figure

    class Broken(Artist):
        def draw(self, renderer):
            raise RuntimeError("broken artist")

    with paper_style() as mpl:
        fig = mpl.figure.Figure()
        fig.subplots().plot([1, 2], [3, 4])
        fig.add_artist(Broken())
    for target in (tmp_path / "new.svg", tmp_path / "old.svg"):
        if target.name == "old.svg":
            target.write_text("previous")
        with pytest.raises(RuntimeError, match="broken artist"):
            save_figure(fig, target)
    assert not (tmp_path / "new.svg").exists() and (tmp_path / "old.svg").read_text() == "previous"
    assert temp_files(tmp_path) == []


def test_not_a_folder_is_one_line(inputs, capsys):
    (inputs / "file.txt").write_text("a file, not a folder")
    assert main(runs_argv(inputs, "--out", str(inputs / "file.txt" / "t.csv"))) == 2
    assert "file.txt" in one_line_error(capsys)
    from receval.trec import write_run

    with pytest.raises(DataError, match="file.txt"):
        write_run({"user_id": [1], "item_id": [2], "score": [0.5]}, inputs / "file.txt" / "x.run")
    from receval.outputs import write_output

    with pytest.raises(DataError, match=r"file.txt/x.csv': Not a directory$"):  # unchecked: the write itself
        write_output(inputs / "file.txt" / "x.csv", "x")
    assert (inputs / "file.txt").read_text() == "a file, not a folder"


def test_reproduce_report_folder_under_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "file.txt").write_text("a file, not a folder")
    assert main(["reproduce", "--test-fraction", "0.005", "--out", str(tmp_path / "file.txt" / "report")]) == 2
    assert "file.txt" in one_line_error(capsys)


LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
"""


def run_limited(code: str, cwd: Path, limit: int = 100) -> subprocess.CompletedProcess:
    prog = LIMITED.replace("FSIZE_LIMIT", str(limit)) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", prog], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_file_too_large_on_the_command_line_is_one_line_exit_2(inputs):
    target = inputs / "t.csv"
    target.write_text("previous")
    argv = runs_argv(inputs, "--out", str(target), "--force")
    p = run_limited(f"from receval.cli import main\nsys.exit(main({argv!r}))", inputs)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("receval: error: ") and str(target) in err[0] and "File too large" in err[0]
    assert target.read_text() == "previous" and temp_files(inputs) == []


def test_file_too_large_for_every_writer_keeps_the_previous_file(inputs):
    """The TREC, table, figure and report writers under a 100-byte file-size limit."""
    (inputs / "report").mkdir()
    names = ["x.run", "x.qrels.gz", "t.json", "f.png", "report/table.md"]
    for name in names:
        (inputs / name).write_text("previous")
    code = """
    import polars as pl
    from receval.errors import DataError
    from receval.trec import write_qrels, write_run
    from receval.tables import write_table
    from receval.figures import write_figure
    from receval.reproduce import write_report
    sys.path.insert(0, {tests!r})
    from test_writers import comparison, reproduction

    cmp = comparison()
    recs = pl.read_csv({recs!r})
    for name, write in [
        ("x.run", lambda p: write_run(recs, p, overwrite=True)),
        ("x.qrels.gz", lambda p: write_qrels(pl.read_csv({truth!r}).drop("rating"), p, overwrite=True)),
        ("t.json", lambda p: write_table(cmp, p)),
        ("f.png", lambda p: write_figure(cmp, "at-k", p)),
        ("report/table.md", lambda p: write_report(reproduction(), "report", overwrite=True)),  # table.csv fits
    ]:
        try:
            write(name)
        except DataError as exc:
            print(name, "|", exc)
        else:
            print(name, "| written")
    """.format(tests=str(Path(__file__).parent), recs=str(inputs / "a.csv"), truth=str(inputs / "truth.csv"))
    p = run_limited(code, inputs)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    lines = dict(line.split(" | ", 1) for line in p.stdout.strip().splitlines())
    assert sorted(lines) == sorted(names)
    # the report records each file in its manifest just after writing it: the manifest after
    # table.csv (which fits) is the first file over the limit, before table.md is reached
    named = {"report/table.md": "report/.receval-report.json"}
    for name in names:
        assert f"'{named.get(name, name)}'" in lines[name] and "File too large" in lines[name], lines[name]
        assert (inputs / name).read_text() == "previous"
    assert temp_files(inputs) == [] and temp_files(inputs / "report") == []


# --- the outputs of one command are distinct files --------------------------------------------


def test_check_outputs_refuses_two_outputs_at_one_file(tmp_path):
    from receval.outputs import check_outputs

    (tmp_path / "in.csv").write_text("x")
    (tmp_path / "old.png").write_text("x")
    os.link(tmp_path / "old.png", tmp_path / "hard.svg")
    (tmp_path / "sym.pdf").symlink_to(tmp_path / "old.png")
    check_outputs([tmp_path / "a.png", tmp_path / "b.png"], [tmp_path / "in.csv"])
    for pair in ([tmp_path / "a.png", str(tmp_path / "." / "a.png")],
                 [tmp_path / "old.png", tmp_path / "hard.svg"],
                 [tmp_path / "sym.pdf", tmp_path / "old.png"]):
        with pytest.raises(DataError, match="the same file"):
            check_outputs(pair, [], overwrite=True)
    with pytest.raises(DataError, match="is one of the inputs"):
        check_outputs([tmp_path / "a.png", tmp_path / "in.csv"], [tmp_path / "in.csv"], overwrite=True)
    with pytest.raises(DataError, match="already exists"):
        check_outputs([tmp_path / "old.png"], [])


def test_cli_runs_two_figures_at_one_path_refused(inputs, capsys):
    out = inputs / "f.png"
    assert main(runs_argv(inputs, "--figure", f"at-k={out}", "--figure", f"differences={out}")) == 2
    assert "the same file" in one_line_error(capsys)
    assert not out.exists()
