"""gauc(maxfpr=m): the standardised partial AUC (McClish 1989; scikit-learn / torchmetrics
max_fpr), against a plain ROC walk written from the definition, plus its refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import receval


def _partial(scores: list[float], labels: list[bool], m: float) -> float:
    """ROC vertices at each distinct threshold, trapezoids up to FPR m (interpolated), McClish."""
    P, N = sum(labels), len(labels) - sum(labels)
    pts = [(0.0, 0.0)]
    for t in sorted(set(scores), reverse=True):
        tp = sum(1 for s, y in zip(scores, labels) if s >= t and y)
        fp = sum(1 for s, y in zip(scores, labels) if s >= t and not y)
        pts.append((fp / N, tp / P))
    area = 0.0
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x1 <= m:
            area += (x1 - x0) * (y0 + y1) / 2
        elif x0 < m:
            ym = y0 + (y1 - y0) * (m - x0) / (x1 - x0)
            area += (m - x0) * (y0 + ym) / 2
    lo = m * m / 2
    return 0.5 * (1 + (area - lo) / (m - lo))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.7]), st.booleans()), min_size=2, max_size=9),
                min_size=1, max_size=4),
       st.sampled_from([0.1, 0.25, 0.3, 0.5, 0.9, 1.0]))
def test_matches_roc_walk(users, m):
    recs = {"user_id": [], "item_id": [], "score": []}
    truth = {"user_id": [], "item_id": []}
    want = []
    for u, rows in enumerate(users):
        for i, (s, y) in enumerate(rows):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(s)
            if y:
                truth["user_id"].append(u)
                truth["item_id"].append(i)
        labels = [y for _, y in rows]
        if not any(labels):
            want.append(None)  # no truth row: not a truth user
        elif all(labels):
            want.append(1.0)  # noneg=one (default)
        else:
            want.append(_partial([s for s, _ in rows], labels, m))
    if not truth["user_id"]:
        return
    spec = f"gauc(maxfpr={m})"
    got = receval.evaluate(recs, truth, [spec])
    vals = [w for w in want if w is not None]
    assert got[spec] == pytest.approx(sum(vals) / len(vals), abs=1e-12)
    if m == 1.0:
        assert got[spec] == pytest.approx(receval.evaluate(recs, truth, ["gauc"])["gauc"], abs=1e-12)


def test_refusals_and_signature():
    recs, truth = {"user_id": [1, 1], "item_id": [1, 2], "score": [0.5, 0.4]}, {"user_id": [1], "item_id": [2]}
    assert "maxfpr:0.5" in receval.evaluate(recs, truth, ["gauc(maxfpr=0.5)"]).signature("gauc(maxfpr=0.5)")
    assert "maxfpr:all" in receval.evaluate(recs, truth, ["gauc"]).signature("gauc")
    with pytest.raises(receval.SpecError, match=r"maxfpr must lie in \(0, 1\]"):
        receval.evaluate(recs, truth, ["gauc(maxfpr=0)"])
    with pytest.raises(receval.SpecError, match="tied=order"):
        receval.evaluate(recs, truth, ["gauc(maxfpr=0.5,tied=order)"])
