"""`receval reproduce` on the bundled MovieLens data: the study's pattern must hold.

These are invariants of the definitions, not stored numbers: each assertion can fail if a
dialect or a formula changes.

The study's output states its finding: each metric's spread across the dialects (max/min),
what a dialect is, and `receval explain` for the largest outliers.

`receval reproduce` as a contract (issue 10): settings leaving no test user exit 2 with one
line, a small sample prints a caveat, 'error' and 'not offered' cells are told apart in every
format with a legend, and a report folder is never overwritten or emptied unasked.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os

import pytest

from receval.cli import main
from receval.errors import DataError
from receval.reproduce import DIALECT_LINE, LEGEND, MANIFEST, REPORT_FILES, Reproduction, headline, run, spreads, write_report
from receval.study import STUDY_DIALECTS

pytestmark = pytest.mark.xdist_group("reproduce")


@pytest.fixture(scope="module")
def rep():
    return run()


def _row(rep, name):
    [key] = [d for d in rep.table if d == name or d.startswith(name + "@")]
    return rep.table[key]


def test_every_study_dialect_is_a_row(rep):
    names = {d.split("@")[0] for d in rep.table}
    assert names == {"standard", *STUDY_DIALECTS}


def test_precision_and_recall_agree_where_the_study_found_them_equal(rep):
    # full rankings: every list is longer than k, so ÷k and ÷ℓ coincide
    for metric in ("precision@20", "recall@20"):
        values = {d: v[metric] for d, v in rep.table.items() if v[metric] is not None}
        assert len(values) >= 9
        ref = values["standard"]
        for d, v in values.items():
            assert v == pytest.approx(ref, abs=1e-12), (metric, d)


def test_dlrs_eval_hitrate_is_precision_times_k(rep):
    row = _row(rep, "dlrs_eval")
    assert row["hitrate@20"] == pytest.approx(row["precision@20"] * 20, rel=1e-12)
    assert row["hitrate@20"] > _row(rep, "standard")["hitrate@20"]


def test_daisyrec_mrr_sums_all_hits(rep):
    assert _row(rep, "daisyrec")["mrr@20"] > _row(rep, "standard")["mrr@20"]


def test_five_distinct_map_values_with_their_orderings(rep):
    maps = {d.split("@")[0]: v["map@20"] for d, v in rep.table.items() if v["map@20"] is not None}
    groups = [("recbole", "replay", "dlrs_eval", "standard"), ("ms_recommenders", "beta_recsys", "rs_metrics"),
              ("daisyrec",), ("elliot",), ("neurec",)]
    for g in groups:  # equal inside a group
        for d in g[1:]:
            assert maps[d] == pytest.approx(maps[g[0]], abs=1e-15), d
    distinct = {round(maps[g[0]], 12) for g in groups}
    assert len(distinct) == 5
    std = maps["standard"]
    assert std >= maps["ms_recommenders"]  # ÷min(k,|R|) >= ÷|R|
    assert std >= maps["daisyrec"]  # ÷min(k,|R|) >= ÷k
    assert maps["neurec"] <= std  # ÷Σ min(i,|R|) <= ÷min(k,|R|)


def test_openrec_ndcg_is_unnormalised_dcg(rep):
    std, openrec = _row(rep, "standard")["ndcg@20"], _row(rep, "openrec")["ndcg@20"]
    assert openrec > std


def test_missing_metrics_are_null(rep):
    assert _row(rep, "beta_recsys")["hitrate@20"] is None
    assert _row(rep, "neurec")["hitrate@20"] is None


def test_protocol_statistics(rep):
    p = rep.protocol
    assert p["n_interactions"] == 100836
    assert p["threshold"] == 4.5
    assert p["k"] == 20
    assert p["n_test_users"] > 0 and p["n_test"] >= p["n_test_users"]


def test_cli_writes_the_report(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["reproduce", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dlrs_eval" in printed and "The study" in printed
    for name in ("table.csv", "table.md", "table.tex", "table.json", "protocol.json", "signatures.txt", "spread.png"):
        assert (out / name).stat().st_size > 0, name
    data = json.loads((out / "table.json").read_text())
    assert set(data) >= {"dialects", "signatures", "protocol"}
    assert data["dialects"]["standard"]["precision@20"] > 0
    assert data["dialects"]["beta_recsys@0.3.2"]["hitrate@20"] is None
    sig = data["signatures"]["standard"]["map@20"]
    assert sig.startswith("map@20|") and "dialect:standard" in sig


def test_cli_rejects_a_bad_fraction(capsys):
    assert main(["reproduce", "--test-fraction", "1.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("receval: error:")


def test_beyond_columns(tmp_path):
    rep = run(beyond=True)
    std = rep.table["standard"]
    for c in ("alpha_ndcg@20", "ab_ndcg@20", "entropy@20", "coverage@20"):
        assert std[c] is not None and std[c] >= 0, c
    assert 0 < std["coverage@20"] <= 1


def _rep(table):
    columns = list(next(iter(table.values())))
    return Reproduction(table=table, signatures={}, protocol={}, columns=columns)


TABLE = {
    "standard": {"map@20": 0.02, "ndcg@20": 0.05, "precision@20": 0.03, "auc": None},
    "a@1": {"map@20": 0.001, "ndcg@20": 0.05, "precision@20": 0.03, "auc": 0.7},
    "b@2": {"map@20": 0.03, "ndcg@20": 0.10, "precision@20": 0.03, "auc": None},
    "c@3": {"map@20": None, "ndcg@20": 0.05, "precision@20": 0.03, "auc": None},
}


def test_spreads_are_max_over_min_widest_first():
    sp = spreads(_rep(TABLE))
    assert [s.metric for s in sp] == ["map@20", "ndcg@20", "precision@20"]  # auc: one value, no spread
    assert sp[0].ratio == pytest.approx(30.0) and sp[0].low == ("a@1", 0.001) and sp[0].high == ("b@2", 0.03)
    assert sp[0].outlier == "a@1"  # farthest from the standard by ratio (0.001 vs 0.02), not the largest
    assert sp[1].ratio == pytest.approx(2.0) and sp[1].outlier == "b@2"
    assert sp[2].agrees()


def test_the_headline_text():
    lines = headline(_rep(TABLE))
    text = "\n".join(lines)
    assert lines[0].startswith("Headline:")
    assert "map@20 varies 30x across 3 dialects (0.001000 a@1 .. 0.03000 b@2)" in text  # 4 significant digits
    assert "ndcg@20 varies 2x across 4 dialects" in text
    assert "precision@20: every dialect that offers it agrees" in text
    assert " ".join(DIALECT_LINE.split()) in " ".join(text.split())
    assert "  receval explain map@20 --dialect a@1" in lines and "  receval explain ndcg@20 --dialect b@2" in lines
    assert text.index("map@20 varies") < text.index("ndcg@20 varies")
    assert all(len(line) <= 100 for line in lines)


def test_a_zero_value_is_an_unbounded_spread():
    rep = _rep({"standard": {"m@5": 0.2}, "z@1": {"m@5": 0.0}})
    (sp,) = spreads(rep)
    assert math.isinf(sp.ratio)
    assert "m@5 varies from 0 up across 2 dialects" in "\n".join(headline(rep))


def test_reproduce_prints_the_headline_first(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["reproduce", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    head = printed[: printed.index("This data")]
    assert head.startswith("Headline:")
    assert "map@20 varies" in head and "x across" in head
    assert "A dialect is how one library, at one version, computes a metric" in head
    assert "receval explain map@20 --dialect neurec@f8d3ab7" in head
    data = json.loads((out / "table.json").read_text())
    assert data["headline"][0].startswith("Headline:")
    assert data["spread"]["map@20"]["ratio"] > 10 and data["spread"]["map@20"]["outlier"] == "neurec@f8d3ab7"
    assert (out / "table.md").read_text().startswith("Headline:")
    # the study's pinned versions, whatever an unversioned name means
    assert "recbole@0.2.1" in data["dialects"] and "replay@0.4.0" in data["dialects"]


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
