"""Write docs/compare.md's worked example: the code below, run on the bundled MovieLens data,
its real output, and its figures (docs/img/compare-*.png).

    python examples/render_compare.py            # rewrites the example part of docs/compare.md

tests/test_compare_page.py runs the code again and fails when the page's numbers are stale.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "compare.md"
BEGIN, END = "<!-- example: begin (examples/render_compare.py) -->", "<!-- example: end -->"

CODE = '''\
import numpy as np
from scipy import stats

import receval
from receval.comparison import Comparison, Interval, PairTest
from receval.data import load_bundled
from receval.data.protocol import prepare_study, recommend
from receval.figures import plot_differences, plot_metric_at_k
from receval.models import EASE, Popularity
from receval.tables import render_table

# three runs on one truth: ratings >= 4 in a random 20% of the bundled MovieLens ratings
study = prepare_study(load_bundled(), threshold=4.0, split="random", test_fraction=0.2, seed=0)
models = {"ease-l500": EASE(lambda_=500.0), "ease-l0.5": EASE(lambda_=0.5), "popularity": Popularity()}
metrics = ["ndcg@5", "ndcg@10", "ndcg@20", "recall@5", "recall@10", "recall@20"]
per_user, signatures = {}, {}
for name, model in models.items():
    recs = recommend(study.train, study.test_users, model, 20, decimals=10)
    res = receval.evaluate(recs, study.test, metrics, rel=4.0)
    per_user[name], signatures = res.per_user(), res.signatures

# the statistics: means, 95% percentile bootstrap CIs (1000 resamples, seed 0),
# paired t-tests between all pairs with Holm's correction over the table
runs = list(per_user)
x = {(r, m): per_user[r][m].fill_null(0.0).to_numpy() for r in runs for m in metrics}
users = len(x[runs[0], metrics[0]])
boot = np.random.default_rng(0).integers(0, users, size=(1000, users))

def interval(v):
    low, high = np.quantile(v[boot].mean(axis=1), [0.025, 0.975])
    return Interval(float(low), float(high), "percentile", 0.95)

tests = [(m, a, b, stats.ttest_rel(x[a, m], x[b, m]).pvalue)
         for m in metrics for i, a in enumerate(runs) for b in runs[i + 1:]]
# Holm: the i-th smallest of n p-values times (n - i), then a running maximum, capped at 1
order = np.argsort([p for *_, p in tests])
adjusted, running = {}, 0.0
for rank, i in enumerate(order):
    running = max(running, min(1.0, (len(tests) - rank) * tests[i][3]))
    adjusted[i] = running
pairs = []
for i, (m, a, b, p) in enumerate(tests):
    d = x[a, m] - x[b, m]
    pairs.append(PairTest(m, a, b, float(d.mean()), float(p), adjusted[i], "t", "holm",
                          float(d.mean() / d.std(ddof=1)), "cohen_dz",
                          int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), interval(d)))
stat = "test:t|correction:holm|ci:percentile|level:0.95|resamples:1000|seed:0|alpha:0.05"
cmp = Comparison(
    runs, metrics, {k: float(v.mean()) for k, v in x.items()}, dict.fromkeys(metrics, True),
    {m: s.replace("|v:", f"|{stat}|v:") for m, s in signatures.items()}, users,
    {k: interval(v) for k, v in x.items()}, pairs, per_user=per_user,
)

print(render_table(cmp, "markdown"))
plot_metric_at_k(cmp, "docs/img/compare-at-k.png")
plot_differences(cmp, "docs/img/compare-differences.png", metrics=["ndcg@10", "recall@10"])
'''


def run() -> str:
    """Run CODE from the repository root; return what it printed."""
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(CODE, "render_compare", "exec"), {"__name__": "__example__"})
    finally:
        os.chdir(cwd)
    return out.getvalue()


def render(page: str, output: str) -> str:
    """``page`` with the part between the markers replaced by the code and its output."""
    head, rest = page.split(BEGIN)
    _, tail = rest.split(END)
    block = f"{BEGIN}\n\n```python\n{CODE}```\n\nIt prints (Markdown, as pasted here):\n\n{output}\n{END}"
    return head + block + tail


if __name__ == "__main__":
    PAGE.write_text(render(PAGE.read_text(encoding="utf-8"), run()), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} and docs/img/compare-*.png")
