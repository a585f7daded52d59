"""Evaluate a recommendation list on the bundled example files.

`recs.csv` has (user_id, item_id, score) rows, `truth.csv` (user_id, item_id, rating) rows;
both ship with receval (`receval.examples.example_path`). Every value comes with its
signature: the resolved options that define it.
"""

import receval
from receval.examples import example_path

recs, truth = example_path("recs.csv"), example_path("truth.csv")
res = receval.evaluate(recs, truth, ["ndcg@10", "map@10", "recall@20", "mrr@10"], rel=4.0)

for entry in res.entries:
    print(f"{entry.metric:10} {entry.value:.4f}  users={entry.users}")
print()
print("signature of map@10:")
print(res.signature("map@10"))
print()
print("per-user values (first 3 users):")
print(res.per_user().head(3))
