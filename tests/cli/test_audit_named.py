"""An audit of a metric named with options (``bias_disparity(icat=g1)``): every candidate keeps
them; a metric whose definition needs one the audit cannot infer is refused with the fix."""

from __future__ import annotations

import pytest

from receval.audit import AuditError, audit

BIAS_FILE = '''
from receval import evaluate
from receval.conformance.suite import side_kwargs


def bias(recs, truth, k, side):
    spec = f"bias_disparity(icat=g1,order=score,ties=item)@{k}"
    cols = dict(user_col="user", item_col="item", rating_col="rating", score_col="score")
    return evaluate(recs, truth, [spec], **cols, **side_kwargs(side))[spec]
'''


def _bias():
    ns: dict = {}
    exec(compile(BIAS_FILE, "bias.py", "exec"), ns)
    return ns["bias"]


def test_a_named_cell_is_kept_by_every_candidate_and_the_combination_is_named():
    report = audit(_bias(), "bias_disparity(icat=g1)")
    assert report.status == "match", str(report)
    assert report.options == {"order": "score", "ties": "item"}
    assert report.definition is not None and "icat=g1" in report.definition
    assert "bias_disparity(order=score,ties=item,icat=g1)" in str(report)


def test_a_cell_the_audit_cannot_infer_is_refused_with_the_fix():
    with pytest.raises(AuditError, match=r"^name it in the metric you audit, e\.g\. 'bias_disparity\(option=value\)': "
                                         r"bias_disparity is one cell: name its item category"):
        audit(_bias(), "bias_disparity")


@pytest.mark.parametrize("metric,fix", [("bias_disparity(cell=g1)", "no option `cell`"),
                                        ("bias_disparity(icat=g1", "name\\(option=value,...\\)"),
                                        ("bias_disparity(icat)", "has no value")])
def test_a_malformed_or_unknown_named_option_is_one_line(metric, fix):
    with pytest.raises(AuditError, match=fix):
        audit(_bias(), metric)


def test_cli_audits_a_named_cell(tmp_path, capsys):
    from receval.cli import main

    f = tmp_path / "bias.py"
    f.write_text(BIAS_FILE)
    assert main(["audit", f"{f}:bias", "-m", "bias_disparity(icat=g1)"]) == 0
    out = capsys.readouterr().out
    assert "MATCH on every case" in out and "order=score" in out and "ties=item" in out
    assert main(["audit", f"{f}:bias", "-m", "bias_disparity"]) == 2
    err = capsys.readouterr().err
    assert "name it in the metric you audit" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def _ild_hamming(recs, truth, k, side):
    from receval import evaluate
    from receval.conformance.suite import side_kwargs

    spec = f"ild(distance=hamming)@{k}"
    cols = dict(user_col="user", item_col="item", rating_col="rating", score_col="score", rank_col="rank")
    return evaluate(recs, truth, [spec], **cols, **side_kwargs(side))[spec]


def test_a_match_outside_the_standard_bounds_is_not_flagged():
    """ild is declared in [0, 1] (the standard distance); ild(distance=hamming) reaches 2: an
    implementation of it matches, and its values are not reported as out of bounds."""
    report = audit(_ild_hamming, "ild")
    assert report.status == "match", str(report)
    assert report.options.get("distance") == "hamming"
    assert report.out_of_bounds, "the suite has an input where hamming ild exceeds 1"
    assert "OUT OF BOUNDS" not in str(report)
