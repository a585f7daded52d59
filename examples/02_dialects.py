"""Compute "MAP@10" and "NDCG@10" the way other libraries do (dialects).

The same recommendations give different numbers because the libraries define the metrics
differently; each dialect records those choices and the signature names them.
"""

import receval
from receval.examples import example_path

recs, truth = example_path("recs.csv"), example_path("truth.csv")
for dialect in ["standard", "trec_eval", "recbole", "elliot", "ms_recommenders"]:
    res = receval.evaluate(recs, truth, ["map@10", "ndcg@10"], dialect=dialect, rel=4.0)
    print(f"{dialect:16} map@10={res['map@10']:.4f}  ndcg@10={res['ndcg@10']:.4f}")

# the difference between the standard MAP and trec_eval's is one named option:
res = receval.evaluate(recs, truth, ["map@3", "map(denominator=r)@3"], rel=4.0)
print()
print(f"map@3 divides by min(k,|R|): {res['map@3']:.4f}")
print(f"map(denominator=r)@3 divides by |R| (trec_eval, ranx, RecTools): {res['map(denominator=r)@3']:.4f}")
