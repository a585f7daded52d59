"""TREC run and qrels files in and out (trec_eval's formats), and ranx-style dicts.

The example recommendations are written as a run (`qid Q0 docno rank score tag`) and the
ground truth as qrels (`qid iter docno rel`, grades rounded to integers), then evaluated from
the files under the trec_eval dialect.
"""

import tempfile
from pathlib import Path

import polars as pl

import receval
from receval.examples import example_path
from receval.trec import read_qrels, write_qrels, write_run

folder = Path(tempfile.mkdtemp())
recs = pl.read_csv(example_path("recs.csv"))
truth = pl.read_csv(example_path("truth.csv")).with_columns(pl.col("rating").round().cast(pl.Int64))
write_run(recs, folder / "example.run.gz", tag="example")
write_qrels(truth, folder / "example.qrels")
print((folder / "example.qrels").read_text().splitlines()[0], " <- first qrels line")

# trec_eval counts grades >= its relevance level (-l, 1 by default) as relevant; these grades
# are star ratings, so the level is 4 (trec_eval -l 4), i.e. rel=4
res = receval.evaluate(folder / "example.run.gz", folder / "example.qrels", ["map@10", "ndcg@10", "precision@5"],
                       dialect="trec_eval", rel=4)
for entry in res.entries:
    print(f"{entry.metric:14} {entry.value:.4f}")

# the same from {qid: {docid: score}} dicts (ranx, ir_measures, pytrec_eval)
run = {}
for u, i, s in recs.iter_rows():
    run.setdefault(str(u), {})[str(i)] = s
qrels = {}
for u, i, r in read_qrels(folder / "example.qrels").iter_rows():
    qrels.setdefault(u, {})[i] = r
same = receval.evaluate(run, qrels, ["map@10"], dialect="trec_eval", rel=4)
print(f"map@10 from dicts: {same['map@10']:.4f}")
