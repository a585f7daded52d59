"""`receval reproduce` as a contract (issue 10): settings leaving no test user exit 2 with one
line, a small sample prints a caveat, 'error' and 'not offered' cells are told apart in every
format with a legend, and a report folder is never overwritten or emptied unasked."""

from __future__ import annotations

import json

import pytest

from receval.cli import main
from receval.errors import DataError
from receval.reproduce import LEGEND, REPORT_FILES, run, write_report

pytestmark = pytest.mark.xdist_group("reproduce")

SMALL = ["--test-fraction", "0.005"]  # the bundled data's latest 0.5%: 9 test users


@pytest.fixture(scope="module")
def small():
    return run(test_fraction=0.005)


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


def test_report_never_overwritten_unasked(small, tmp_path):
    write_report(small, tmp_path)
    (tmp_path / "mine.txt").write_text("keep me")
    before = {n: (tmp_path / n).read_bytes() for n in REPORT_FILES}
    with pytest.raises(DataError, match="already holds a report"):
        write_report(small, tmp_path)
    assert {n: (tmp_path / n).read_bytes() for n in REPORT_FILES} == before
    files = write_report(small, tmp_path, overwrite=True)
    assert sorted(f.name for f in files) == sorted(REPORT_FILES)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


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
