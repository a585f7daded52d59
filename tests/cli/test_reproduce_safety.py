"""`receval reproduce` as a contract (issue 10): settings leaving no test user exit 2 with one
line, a small sample prints a caveat, 'error' and 'not offered' cells are told apart in every
format with a legend, and a report folder is never overwritten or emptied unasked."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from receval.cli import main
from receval.errors import DataError
from receval.reproduce import LEGEND, MANIFEST, REPORT_FILES, run, write_report

pytestmark = pytest.mark.xdist_group("reproduce")

SMALL = ["--test-fraction", "0.005"]  # the bundled data's latest 0.5%: 9 test users


@pytest.fixture(scope="module")
def small():
    return run(test_fraction=0.005)


@pytest.fixture
def quick_figure(monkeypatch):
    """The spread figure as a blank 1x1 inch figure (the folder rules are what is tested; drawing
    the real figure twice per report takes seconds)."""
    import receval.figures as figures

    def blank(rep, path=None, *, width=7.0):
        import matplotlib.figure

        fig = matplotlib.figure.Figure(figsize=(1, 1))
        return figures.save_figure(fig, path) if path is not None else fig

    monkeypatch.setattr(figures, "plot_spread", blank)


def test_no_test_user_left_exits_2_with_one_line(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["reproduce", "--threshold", "6", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("receval: error: no test users are left") and "--threshold" in err[0]
    assert not out.exists()


def test_small_sample_caveat_and_legend(tmp_path, capsys):
    assert main(["reproduce", *SMALL, "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "caveat: only 9 test users" in printed
    assert LEGEND in printed


def test_error_and_not_offered_told_apart_in_every_file(small, tmp_path):
    assert small.errors, "the small sample makes some dialect refuse the stacked AUC"
    (d, metric), = list({(d, c) for d, e in small.errors.items() for c in e})[:1]
    missing = small.not_offered()
    nd, nm = next((d, cs[0]) for d, cs in missing.items())
    write_report(small, tmp_path)
    csv_rows = {line.split(",")[0]: line.split(",") for line in (tmp_path / "table.csv").read_text().splitlines()}
    header = csv_rows["dialect"]
    assert csv_rows[d][header.index(metric)] == "error"
    assert csv_rows[nd][header.index(nm)] == "not offered"
    md = (tmp_path / "table.md").read_text()
    assert "| error |" in md and "| – |" in md and LEGEND in md
    tex = (tmp_path / "table.tex").read_text()
    assert "error" in tex and LEGEND in tex
    doc = json.loads((tmp_path / "table.json").read_text())
    assert metric in doc["errors"][d] and nm in doc["not_offered"][nd]
    assert doc["dialects"][d][metric] is None and doc["dialects"][nd][nm] is None
    assert set(doc["legend"]) == {"null with an entry in errors", "null with an entry in not_offered"}


def test_report_never_overwritten_unasked(small, tmp_path, quick_figure):
    # issue 31: a report receval wrote is replaced by the next run (it was refused before); a
    # report file that changed since, or anything else in the folder, is never replaced unasked
    write_report(small, tmp_path)
    (tmp_path / "mine.txt").write_text("keep me")
    files = write_report(small, tmp_path)  # its own report: replaced, no error
    assert sorted(f.name for f in files) == sorted(REPORT_FILES)
    (tmp_path / "table.md").write_text("my notes")  # edited since receval wrote it: no longer its own
    before = {n: (tmp_path / n).read_bytes() for n in REPORT_FILES}
    with pytest.raises(DataError, match=r"^choose another --out, or pass --force .* holds table.md that receval did not write"):
        write_report(small, tmp_path)
    assert {n: (tmp_path / n).read_bytes() for n in REPORT_FILES} == before
    files = write_report(small, tmp_path, overwrite=True)
    assert sorted(f.name for f in files) == sorted(REPORT_FILES)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_reproduce_twice_in_one_folder(small, tmp_path, monkeypatch, capsys, quick_figure):
    """`receval reproduce` with no --out, run twice in one folder: exit 0 both times, the report
    replaced, a file of the user's in the report folder and beside it untouched."""
    import receval.reproduce as reproduce

    monkeypatch.setattr(reproduce, "run", lambda *a, **kw: small)  # the study computed once (the fixture)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("beside")
    assert main(["reproduce", *SMALL]) == 0
    report = tmp_path / "receval-report"
    (report / "mine.csv").write_text("keep me")
    first = (report / "table.csv").read_bytes()
    assert main(["reproduce", *SMALL]) == 0, capsys.readouterr().err
    assert (report / "table.csv").read_bytes() == first
    assert (report / "mine.csv").read_text() == "keep me" and (tmp_path / "notes.txt").read_text() == "beside"
    assert sorted(p.name for p in report.iterdir()) == sorted([*REPORT_FILES, MANIFEST, "mine.csv"])  # no temporary file left


def test_links_planted_at_report_names_are_refused(small, tmp_path, quick_figure):
    out, victim = tmp_path / "r", tmp_path / "victim.txt"
    write_report(small, out)
    victim.write_text("precious")
    (out / "table.md").unlink()
    (out / "table.md").symlink_to(victim)  # a link where an output goes: refused, neither followed nor replaced
    with pytest.raises(DataError, match="holds table.md that receval did not write"):
        write_report(small, out)
    assert (out / "table.md").is_symlink() and victim.read_text() == "precious"
    (out / "table.md").unlink()
    (out / "table.csv").unlink()
    os.link(victim, out / "table.csv")  # a hard link to a file of the user's: refused too
    with pytest.raises(DataError, match="holds table.csv that receval did not write"):
        write_report(small, out)
    assert victim.read_text() == "precious" and (out / "table.csv").read_text() == "precious"
    (out / "table.csv").unlink()
    manifest = out / MANIFEST
    manifest.unlink()
    manifest.symlink_to(victim)  # the record itself is not receval's: nothing there is taken as its own
    with pytest.raises(DataError, match=MANIFEST):
        write_report(small, out)
    assert manifest.is_symlink() and victim.read_text() == "precious"


def test_a_hard_link_to_an_own_file_keeps_its_content(small, tmp_path, quick_figure):
    """A report file is replaced by a rename, never written through: a hard link the user made
    to it keeps the earlier report."""
    write_report(small, tmp_path / "r")
    kept = tmp_path / "kept.json"
    os.link(tmp_path / "r" / "protocol.json", kept)
    before = kept.read_bytes()
    changed = dataclasses.replace(small, protocol={**small.protocol, "model": "changed"})
    write_report(changed, tmp_path / "r")
    assert kept.read_bytes() == before
    assert json.loads((tmp_path / "r" / "protocol.json").read_text())["model"] == "changed"


def test_a_file_planted_during_the_run_is_not_replaced(small, tmp_path, monkeypatch, quick_figure):
    import receval.reproduce as reproduce

    out = tmp_path / "r"
    original = reproduce.plot_spread

    def plant(rep, path, **kw):  # the folder was checked before the work; a name taken since is refused
        original(rep, path, **kw)
        (out / "index.html").write_text("mine")

    monkeypatch.setattr(reproduce, "plot_spread", plant)
    with pytest.raises(DataError, match="appeared while the report was computed"):
        write_report(small, out)
    assert (out / "index.html").read_text() == "mine"


def test_cli_report_folder_rules(tmp_path, capsys):
    out = tmp_path / "r"
    out.mkdir()
    (out / "table.csv").write_text("precious")
    assert main(["reproduce", *SMALL, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--force" in err[0]
    assert (out / "table.csv").read_text() == "precious"
    assert main(["reproduce", *SMALL, "--out", str(out), "--force"]) == 0
    assert (out / "table.csv").read_text().startswith("dialect,")
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["reproduce", *SMALL, "--out", str(afile)]) == 2
    assert afile.read_text() == "x"
