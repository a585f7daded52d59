"""The slow, obviously-correct per-user references the conformance suite is built from.

Plain Python loops written from the formulas in the metrics' docstrings and the option docs,
never from their implementation; nothing here imports receval outside this folder but the
registry's ``get_metric`` (which context options a metric reads; the layering test holds it to that). :mod:`receval.conformance.build` keeps a planned case only where receval
and these references agree.

- :mod:`~receval.conformance.reference.ranking`: the ranking metrics, and the context options
  (``prepare``: relevance, duplicates, order, ties, empty users) the others build on;
- :mod:`~receval.conformance.reference.ir`: rprecision, bpref, rbp, err, ncrr;
- :mod:`~receval.conformance.reference.pop`: the popularity metrics and novelty (over train);
- :mod:`~receval.conformance.reference.auc`: the per-user AUC (gauc), against the list or the catalogue;
- :mod:`~receval.conformance.reference.lists`: the list-quality metrics, serendipity, catdiv,
  srecall, miscalibration;
- :mod:`~receval.conformance.reference.dist`: coverage, entropy, gini (the recommendation distribution);
- :mod:`~receval.conformance.reference.errors`: mae, rmse under the duplicate rules;
- :mod:`~receval.conformance.reference.lists2`: ild, mad, pauc, pap;
- :mod:`~receval.conformance.reference.aspects`: ab_ndcg and alpha_ndcg;
- :mod:`~receval.conformance.reference.fairness`: reo, rsp and bias disparity over item groups;
- :mod:`~receval.conformance.reference.average`: ``ties=average`` by brute force over every
  ordering of the ties (the popularity, novelty, fairness and baseline metrics).
"""
