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
from receval.data import load_bundled
from receval.data.protocol import prepare_study, recommend
from receval.figures import plot_differences, plot_metric_at_k
from receval.models import EASE, Popularity
from receval.runs import evaluate_runs
from receval.tables import render_pairs, render_table

# one truth: ratings >= 4 in a random 20% of the bundled MovieLens ratings; three runs of 20 items
study = prepare_study(load_bundled(), threshold=4.0, split="random", test_fraction=0.2, seed=0)
models = {"ease-l500": EASE(lambda_=500.0), "ease-l0.5": EASE(lambda_=0.5), "popularity": Popularity()}
recs = {name: recommend(study.train, study.test_users, model, 20, decimals=10) for name, model in models.items()}

runs = evaluate_runs(recs, study.test, ["ndcg@[5,10,20]", "recall@[5,10,20]"], rel=4.0)
cmp = runs.compare(test="t", correction="holm", ci="bca", level=0.95, resamples=10_000, seed=0)

print(render_table(cmp, "markdown"))
print(render_pairs(cmp, "markdown"))
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
