"""A signature reproduces its value: paste it where a metric goes.

This is what a reader of a paper does with a reported signature (see "How to report a
signature in a paper" in CONTRIBUTING.md).
"""

import receval
from receval.examples import example_path

recs, truth = example_path("recs.csv"), example_path("truth.csv")
res = receval.evaluate(recs, truth, ["ndcg@10"], dialect="recbole", rel=4.0)
sig = res.signature("ndcg@10")
print("reported:  ", f"{res['ndcg@10']:.6f}", sig)

spec, dialect, version = receval.parse_signature(sig)
print("explicit spec:", spec)

again = receval.evaluate(recs, truth, [sig])   # the signature itself is a metric spec
print("recomputed:", f"{again.entries[0].value:.6f}")
assert again.entries[0].value == res["ndcg@10"]
