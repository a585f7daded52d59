"""Issue 34: ``receval explain`` re-flows the docstrings' paragraphs to the width it prints at.

Exactly: at width W (``COLUMNS``) every line is at most W characters, except a formula line
(a ``.. math::`` line of the docstring, :func:`receval.plaintext.text_blocks`) and the
signature (each copied whole); and no paragraph is ragged: in every paragraph (a block of
the formula text between blank lines, or an entry of the other sections: a line and the
lines indented deeper under it) each line but the last is *full*: the next line's first word
would not have fitted on it (``len(line) + 1 + len(next word) > W``), so a line ends only
where it had to. Without a width (a pipe, no ``COLUMNS``) every paragraph is one line.
"""

from __future__ import annotations

import pytest

from receval.cli import main
from receval.metrics import registered
from receval.plaintext import text_blocks

WIDTHS = [60, 80, 120]
CASES = [("ndcg", "recbole"), ("ndcg@10", None), ("map@20", None), ("recall@10", "dlrs_eval"), ("auc@20", "dlrs_eval")]


def _explain(capsys, monkeypatch, width, spec, dialect):
    if width is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(width))
    assert main(["explain", spec, *(["--dialect", dialect] if dialect else [])]) == 0
    return capsys.readouterr().out.splitlines()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _paragraphs(lines: list[str], exempt: set[str]) -> list[list[str]]:
    """The paragraphs of explain's output (module docs), the exempt lines left out."""
    out: list[list[str]] = []
    formula = False
    for line in lines:
        if not line.strip() or line.strip() in exempt or not line.startswith(" "):
            formula = line.startswith("Formula") if not line.startswith(" ") and line.strip() else formula
            out.append([])  # a blank line, a heading or a formula line ends a paragraph
            continue
        cur = out[-1] if out else []
        same = formula and cur and _indent(line) == _indent(cur[0])
        if cur and (_indent(line) > _indent(cur[0]) or same):
            cur.append(line)
        else:
            out.append([line])
    return [p for p in out if p]


def _exempt(spec: str, lines: list[str]) -> set[str]:
    metric = registered()[spec.split("@")[0]]
    formulas = {x for kind, block in text_blocks(metric.formula()) if kind in ("formula", "code") for x in block}
    return formulas | {lines[lines.index("Signature:") + 1].strip()}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("spec,dialect", CASES)
def test_no_line_over_the_width_and_no_ragged_paragraph(capsys, monkeypatch, width, spec, dialect):
    lines = _explain(capsys, monkeypatch, width, spec, dialect)
    exempt = _exempt(spec, lines)
    long = [x for x in lines if len(x) > width and x.strip() not in exempt]
    assert not long, long
    paragraphs = _paragraphs(lines, exempt)
    assert sum(len(p) > 1 for p in paragraphs) >= 3  # something was wrapped
    for p in paragraphs:
        for line, nxt in zip(p, p[1:]):
            assert len(line) + 1 + len(nxt.split()[0]) > width, (width, line, nxt)


def test_without_a_width_a_paragraph_is_one_line(capsys, monkeypatch):
    lines = _explain(capsys, monkeypatch, None, "ndcg", "recbole")
    text = "\n".join(lines)
    assert "user's min(k,|R|) best gains (cut, default), all |R| gains (uncut), k copies" in text
    paragraphs = _paragraphs(lines, _exempt("ndcg", lines))
    assert paragraphs and all(len(p) == 1 for p in paragraphs)


def test_formula_lines_are_whole_and_a_source_line_break_is_joined(capsys, monkeypatch):
    lines = _explain(capsys, monkeypatch, 60, "ndcg", "recbole")
    assert "    E[DCG@k] = Σ_{hits} g(r) 1/(hi - lo + 1) Σ_{t=lo..min(hi, k)} 1/log_b(t+1)" in lines
    assert "    NDCG@k = DCG@k/IDCG@k" in lines
    # the source breaks "shifted\n:math:`2^{r-t+1}-1`" mid-sentence: re-flowed, the line goes on
    wide = _explain(capsys, monkeypatch, 120, "ndcg", "recbole")
    assert "shifted 2^{r-t+1}-1; non-relevant items gain 0." in next(x for x in wide if x.startswith("  g by gain:"))


def test_an_option_left_unread_says_so_and_what_it_decides(capsys, monkeypatch):
    lines = _explain(capsys, monkeypatch, None, "ndcg@10", None)
    neg = next(x for x in lines if x.strip().startswith("neg ="))
    assert "None" not in neg and "[not read]" in neg and "negative graded gain" in neg
    lines = _explain(capsys, monkeypatch, None, "ndcg(gain=linear)@10", None)
    neg = next(x for x in lines if x.strip().startswith("neg ="))
    assert neg.startswith("  neg = error  [default]  refuse the input")
