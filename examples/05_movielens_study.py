"""The bundled MovieLens latest-small: split, fit EASE, rank every unseen item, evaluate.

This is the protocol of Tamm et al. (RecSys '21) that `receval reproduce` runs: a global
time split (the latest 20% of ratings are the test), ratings >= 4.5 relevant, cold users and
items dropped, full ranking minus the items a user rated in train, k = 20.
"""

import receval
from receval.data import load_bundled, prepare_study, recommend
from receval.models import EASE, Popularity

ratings = load_bundled()
study = prepare_study(ratings, threshold=4.5, test_fraction=0.2)
print(f"ratings {ratings.height}, train {study.train.height}, relevant test rows {study.test.height}, "
      f"test users {len(study.test_users)}")

metrics = ["ndcg@20", "map@20", "precision@20", "recall@20", "mrr@20"]
for name, model in [("popularity", Popularity()), ("EASE", EASE())]:
    recs = recommend(study.train, study.test_users, model, k=20)
    res = receval.evaluate(recs, study.test, metrics)
    print(f"{name:10} " + "  ".join(f"{m}={res[m]:.4f}" for m in metrics))
