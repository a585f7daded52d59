"""Golden values written as arithmetic.

* the worked examples of the seed blog posts in shared/seeds (001: mAP; 003: MRR;
  004: AP@3 tables, MAR, precision/recall), and hand-computed MAE/RMSE cases;
* a hand-worked case for every option value of every ranking metric and for every value of
  every context option (rel, ties, order, dup, tdup, empty, norecs), including users with
  no hits, lists shorter than k, users without recommendations and users without relevant
  items.

Every expected value is a formula over small integers, never a number copied from receval.
"""

from __future__ import annotations

import math

import pytest

import receval
from receval import DataError


def d(i: int) -> float:
    """The binary NDCG discount at 1-based position i: 1 / log2(i + 1)."""
    return 1.0 / math.log2(i + 1)


def ranked(lists: dict, relevant: dict) -> tuple[dict, dict]:
    """recs from {user: [items in rank order]}, truth from {user: {item: rating}}."""
    recs = {"user_id": [], "item_id": [], "score": []}
    for u, items in lists.items():
        for pos, i in enumerate(items):
            recs["user_id"].append(u)
            recs["item_id"].append(i)
            recs["score"].append(100.0 - pos)
    truth = {"user_id": [], "item_id": [], "rating": []}
    for u, rel in relevant.items():
        for i, r in rel.items():
            truth["user_id"].append(u)
            truth["item_id"].append(i)
            truth["rating"].append(float(r))
    return recs, truth


def value(recs, truth, spec, **kw) -> float:
    return receval.evaluate(recs, truth, [spec], **kw)[spec]


def per_user(recs, truth, spec, **kw) -> dict:
    pu = receval.evaluate(recs, truth, [spec], **kw).per_user()
    key = str(receval.parse_spec(spec))
    return dict(zip(pu["user_id"].to_list(), pu[key].to_list()))


def binary_lists(rows: list[list[int]], m: int) -> tuple[dict, dict]:
    """One user per 0/1 row (1 = the item at that position is relevant); |R| = m per user
    (relevant items that were not recommended fill R up to m)."""
    lists, rel = {}, {}
    for u, row in enumerate(rows):
        items = [u * 100 + j for j in range(len(row))]
        lists[u] = items
        rel[u] = {items[j]: 1.0 for j, x in enumerate(row) if x}
        extra = 0
        while len(rel[u]) < m:
            rel[u][u * 100 + 50 + extra] = 1.0
            extra += 1
    return ranked(lists, rel)


# ==========================================================================================
# seed 001: mAP examples (Elliot-style "no indicator": the mean of P@1..P@n)

EX1 = [1, 1, 0, 0, 0, 1, 1, 0, 1, 0]  # P@1..9 = 1, 1, .66, .5, .4, .5, .57, .5, .55 ; 5 relevant
EX2 = [0, 1, 0, 0, 0, 1, 1, 0, 1, 1]  # first wrong, tenth right


def test_seed001_map_example1_is_mean_of_precisions_up_to_9():
    """Seed 001: (1.0 + 1.0 + 0.66 + 0.5 + 0.4 + 0.5 + 0.57 + 0.5 + 0.55) / 9 = 0.63."""
    recs, truth = binary_lists([EX1], m=5)
    v = value(recs, truth, "map(indicator=no,denominator=k)@9")
    assert v == pytest.approx((1 / 1 + 2 / 2 + 2 / 3 + 2 / 4 + 2 / 5 + 3 / 6 + 4 / 7 + 4 / 8 + 5 / 9) / 9, abs=1e-12)
    assert round(v, 2) == 0.63


def test_seed001_map_example1_at_5():
    """Seed 001: mAP@5 of example 1 = (1.0 + 1.0 + 0.66 + 0.5 + 0.4) / 5 = 0.712 (0.66 truncated)."""
    recs, truth = binary_lists([EX1], m=5)
    v = value(recs, truth, "map(indicator=no,denominator=k)@5")
    assert v == pytest.approx((1 + 1 + 2 / 3 + 2 / 4 + 2 / 5) / 5, abs=1e-12)
    assert v == pytest.approx(0.712, abs=0.002)


def test_seed001_map_example2_first_wrong_tenth_right():
    """Seed 001: (0.0 + 0.5 + 0.33 + 0.25 + 0.2 + 0.33 + 0.42 + 0.375 + 0.44 + 0.5) / 10 = 0.3345
    (the post rounds each term; the exact value is 0.3365)."""
    recs, truth = binary_lists([EX2], m=5)
    v = value(recs, truth, "map(indicator=no,denominator=k)@10")
    assert v == pytest.approx((0 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5 + 2 / 6 + 3 / 7 + 3 / 8 + 4 / 9 + 5 / 10) / 10, abs=1e-12)
    assert v == pytest.approx(0.3345, abs=0.003)
    # "only the order differs, yet mAP nearly halves"
    ex1 = value(*binary_lists([EX1], m=5), "map(indicator=no,denominator=k)@10")
    assert ex1 > 1.8 * v


# ==========================================================================================
# seed 003: MRR example


def test_seed003_mrr_three_users():
    """Seed 003: first relevant item at 3, 2 and 1 -> (1/3 + 1/2 + 1) / 3 = 0.61."""
    recs, truth = binary_lists([[0, 0, 1], [0, 1, 0], [1, 0, 0]], m=1)
    v = value(recs, truth, "mrr@3")
    assert v == pytest.approx((1 / 3 + 1 / 2 + 1) / 3, abs=1e-12)
    assert round(v, 2) == 0.61
    assert per_user(recs, truth, "mrr@3") == pytest.approx({0: 1 / 3, 1: 1 / 2, 2: 1.0})


# ==========================================================================================
# seed 004: AP@3 tables with m = 3, MAR, precision / recall


@pytest.mark.parametrize(
    "row, expected, shown",
    [
        ([0, 0, 1], (1 / 3) * (1 / 3), 0.11),
        ([0, 1, 1], (1 / 3) * (1 / 2 + 2 / 3), 0.38),  # the post truncates 0.3889
        ([1, 1, 1], (1 / 3) * (1 + 2 / 2 + 3 / 3), 1.0),
        ([1, 0, 0], (1 / 3) * 1, 0.33),
    ],
)
def test_seed004_ap_at_3_standard(row, expected, shown):
    """Seed 004: AP@K = (1/m) Σ P(i)·rel(i), m = 3; D = min(k, |R|) = |R| = 3 here."""
    recs, truth = binary_lists([row], m=3)
    for spec in ("map@3", "map(denominator=r)@3"):
        v = value(recs, truth, spec)
        assert v == pytest.approx(expected, abs=1e-12)
        assert v == pytest.approx(shown, abs=0.01)


def test_seed004_row_010_is_the_no_indicator_variant():
    """Seed 004's row [0, 1, 0] reads (1/3)[(1/2) + (1/3)] = 0.28: it sums P@2 *and* P@3
    although position 3 is not relevant, i.e. it drops the rel(i) indicator of its own
    formula. Only ``map(indicator=no)`` reproduces 0.28; the standard AP (with the
    indicator) gives (1/3)(1/2) = 0.17. The other rows of that table ([1,0,0] = 0.33) follow
    the formula *with* the indicator, so the post mixes the two definitions."""
    recs, truth = binary_lists([[0, 1, 0]], m=3)
    no_ind = value(recs, truth, "map(indicator=no)@3")
    assert no_ind == pytest.approx((1 / 3) * (1 / 2 + 1 / 3), abs=1e-12)
    assert round(no_ind, 2) == 0.28
    std = value(recs, truth, "map@3")
    assert std == pytest.approx((1 / 3) * (1 / 2), abs=1e-12)
    assert round(std, 2) != 0.28
    # and [1, 0, 0] = 0.33 holds only *with* the indicator
    recs, truth = binary_lists([[1, 0, 0]], m=3)
    assert value(recs, truth, "map(indicator=no)@3") == pytest.approx((1 / 3) * (1 + 1 / 2 + 1 / 3))
    assert round(value(recs, truth, "map(indicator=no)@3"), 2) != 0.33


@pytest.mark.parametrize(
    "row, mean_recall, with_indicator",
    [
        # R@i with m = 3; default MAR = mean of R@1..R@3; the post's substitution = (1/m) Σ R(i) rel(i)
        ([0, 0, 1], (0 + 0 + 1 / 3) / 3, (1 / 3) * (1 / 3)),
        ([0, 1, 1], (0 + 1 / 3 + 2 / 3) / 3, (1 / 3) * (1 / 3 + 2 / 3)),
        ([1, 1, 1], (1 / 3 + 2 / 3 + 3 / 3) / 3, (1 / 3) * (1 / 3 + 2 / 3 + 1)),
        ([1, 0, 0], (1 / 3 + 1 / 3 + 1 / 3) / 3, (1 / 3) * (1 / 3)),
        ([0, 1, 0], (0 + 1 / 3 + 1 / 3) / 3, (1 / 3) * (1 / 3)),
    ],
)
def test_seed004_mar(row, mean_recall, with_indicator):
    """Seed 004: "MAR: put Recall in place of Precision". The default MAR is the mean of
    R@1..R@k (Elliot); the literal substitution into 004's formula is
    ``mar(indicator=yes,denominator=r)``."""
    recs, truth = binary_lists([row], m=3)
    assert value(recs, truth, "mar@3") == pytest.approx(mean_recall, abs=1e-12)
    assert value(recs, truth, "mar(indicator=yes,denominator=r)@3") == pytest.approx(with_indicator, abs=1e-12)


def test_seed004_precision_recall():
    """Seed 004: 5 recommended, 3 relevant, 2 of them recommended: P = 2/5, R = 2/3."""
    recs, truth = binary_lists([[1, 0, 1, 0, 0]], m=3)
    assert value(recs, truth, "precision@5") == pytest.approx(2 / 5)
    assert value(recs, truth, "recall@5") == pytest.approx(2 / 3)


def test_seed004_movie_table_cutoffs():
    """Seed 004: Forrest Gump (hit), Titanic, Seven, The lion king (hit), Truman show, Jaws (hit)."""
    recs, truth = binary_lists([[1, 0, 0, 1, 0, 1]], m=3)
    assert value(recs, truth, "precision@3") == pytest.approx(1 / 3)
    assert value(recs, truth, "precision@6") == pytest.approx(3 / 6)
    assert value(recs, truth, "map@3") == pytest.approx((1 / 1) / 3)
    assert value(recs, truth, "map@6") == pytest.approx((1 / 1 + 2 / 4 + 3 / 6) / 3)


# ==========================================================================================
# MAE / RMSE (seed 003 names them; the numbers here are hand-worked)

PREDS = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [3.5, 2.0, 1.0]}
RATED = {"user_id": [1, 1, 2], "item_id": [1, 2, 1], "rating": [4.0, 3.5, 4.0]}  # errors 0.5, 1.5, 3


def test_mae_rmse_pairs_and_users():
    assert value(PREDS, RATED, "mae") == pytest.approx((0.5 + 1.5 + 3) / 3)
    assert value(PREDS, RATED, "rmse") == pytest.approx(math.sqrt((0.25 + 2.25 + 9) / 3))
    assert value(PREDS, RATED, "mae(average=users)") == pytest.approx(((0.5 + 1.5) / 2 + 3) / 2)
    assert value(PREDS, RATED, "rmse(average=users)") == pytest.approx(math.sqrt(((0.25 + 2.25) / 2 + 9) / 2))


def test_mae_missing_prediction():
    truth = {k: v + [w] for (k, v), w in zip(RATED.items(), [2, 3, 2.0])}  # user 2 item 3: no prediction
    with pytest.raises(DataError, match="missing='skip'"):
        value(PREDS, truth, "mae")
    assert value(PREDS, truth, "mae(missing=skip)") == pytest.approx((0.5 + 1.5 + 3) / 3)
    assert value(PREDS, truth, "rmse(missing=skip)") == pytest.approx(math.sqrt((0.25 + 2.25 + 9) / 3))


# ==========================================================================================
# every option value of every ranking metric, hand-worked
#
# user 1 (the docstrings' worked example): L = [10, 20, 30, 40], R = {20: 5, 40: 4, 50: 3};
#   hits at 2 (rating 5) and 4 (rating 4), |R| = 3, ℓ = 4.
# user 2 (a list shorter than k): L = [60, 70], R = {60: 2, 65: 1.5, 66: 1}; a hit at 1
#   (rating 2), |R| = 3, ℓ = 2.

LISTS = {1: [10, 20, 30, 40], 2: [60, 70]}
REL = {1: {20: 5, 40: 4, 50: 3}, 2: {60: 2, 65: 1.5, 66: 1}}
TWO = ranked(LISTS, REL)

SUM_P_IND = {1: 1 / 2 + 2 / 4, 2: 1 / 1}  # Σ P@i·rel_i at k = 4
SUM_P_ALL = {1: 0 + 1 / 2 + 1 / 3 + 2 / 4, 2: 1 + 1 / 2 + 1 / 3 + 1 / 4}  # Σ_{i<=4} P@i
R1 = [0, 1 / 3, 1 / 3, 2 / 3]  # R@1..4 of user 1
R2 = [1 / 3, 1 / 3, 1 / 3, 1 / 3]

CASES_AT_4 = {
    "precision@4": (2 / 4, 1 / 4),
    "precision(denominator=length)@4": (2 / 4, 1 / 2),
    "precision(denominator=min_k_r)@4": (2 / 3, 1 / 3),
    # pooled: (2 + 1) / (4 + 4) equals the mean here (equal denominators); unequal ones in test_new_options.py
    "precision(average=micro)@4": (2 / 4, 1 / 4),
    "recall@4": (2 / 3, 1 / 3),
    "recall(average=micro)@4": (2 / 3, 1 / 3),  # (2 + 1) / (3 + 3)
    "recall(denominator=min_k_r)@4": (2 / 3, 1 / 3),
    "recall(denominator=listed)@4": (2 / 2, 1 / 1),
    "f1@4": (2 * 2 / (4 + 3), 2 * 1 / (4 + 3)),
    "f1(aggregate=means)@4": (2 * 2 / (4 + 3), 2 * 1 / (4 + 3)),  # per user: 2PR/(P+R) all the same
    "hitrate@4": (1, 1),
    "hitrate(count=hits)@4": (2, 1),
    "mrr@4": (1 / 2, 1),
    "mrr(hits=all)@4": (1 / 2 + 1 / 4, 1),
    "map@4": (SUM_P_IND[1] / 3, SUM_P_IND[2] / 3),
    "map(denominator=r)@4": (SUM_P_IND[1] / 3, SUM_P_IND[2] / 3),
    "map(denominator=k)@4": (SUM_P_IND[1] / 4, SUM_P_IND[2] / 4),
    "map(denominator=length)@4": (SUM_P_IND[1] / 4, SUM_P_IND[2] / 2),
    "map(denominator=min_length_r)@4": (SUM_P_IND[1] / 3, SUM_P_IND[2] / 2),
    "map(denominator=hits)@4": (SUM_P_IND[1] / 2, SUM_P_IND[2] / 1),
    "map(denominator=cumulative_min)@4": (SUM_P_IND[1] / (1 + 2 + 3 + 3), SUM_P_IND[2] / (1 + 2 + 3 + 3)),
    "map(indicator=no)@4": (SUM_P_ALL[1] / 3, SUM_P_ALL[2] / 3),
    "map(indicator=no,denominator=k)@4": (SUM_P_ALL[1] / 4, SUM_P_ALL[2] / 4),
    # distinct positions (no shared rank here): the same as indicator=yes; shared ranks in
    # tests/metrics/test_dialect_deviations.py
    "map(indicator=distinct)@4": (SUM_P_IND[1] / 3, SUM_P_IND[2] / 3),
    "mar@4": (sum(R1) / 4, sum(R2) / 4),
    "mar(indicator=yes)@4": ((1 / 3 + 2 / 3) / 4, (1 / 3) / 4),
    "mar(indicator=yes,denominator=r)@4": ((1 / 3 + 2 / 3) / 3, (1 / 3) / 3),
    "mar(denominator=min_k_r)@4": (sum(R1) / 3, sum(R2) / 3),
    "mar(denominator=length)@4": (sum(R1) / 4, sum(R2) / 2),
    "mar(denominator=min_length_r)@4": (sum(R1) / 3, sum(R2) / 2),
    "mar(denominator=hits)@4": (sum(R1) / 2, sum(R2) / 1),
    "mar(denominator=cumulative_min)@4": (sum(R1) / 9, sum(R2) / 9),
    "ndcg@4": ((d(2) + d(4)) / (d(1) + d(2) + d(3)), d(1) / (d(1) + d(2) + d(3))),
    "ndcg(ideal=uncut)@4": ((d(2) + d(4)) / (d(1) + d(2) + d(3)), d(1) / (d(1) + d(2) + d(3))),
    "ndcg(ideal=k)@4": ((d(2) + d(4)) / (d(1) + d(2) + d(3) + d(4)), d(1) / (d(1) + d(2) + d(3) + d(4))),
    "ndcg(ideal=hits)@4": ((d(2) + d(4)) / (d(1) + d(2)), 1.0),
    "ndcg(ideal=length)@4": ((d(2) + d(4)) / (d(1) + d(2) + d(3) + d(4)), d(1) / (d(1) + d(2))),  # user 2 lists 2
    "ndcg(ideal=listed)@4": ((d(2) + d(4)) / (d(1) + d(2)), 1.0),
    "ndcg(ideal=none)@4": (d(2) + d(4), d(1)),
    "ndcg(gain=linear)@4": ((5 * d(2) + 4 * d(4)) / (5 * d(1) + 4 * d(2) + 3 * d(3)), 2 * d(1) / (2 * d(1) + 1.5 * d(2) + 1 * d(3))),
    "ndcg(gain=exp2)@4": (
        (31 * d(2) + 15 * d(4)) / (31 * d(1) + 15 * d(2) + 7 * d(3)),
        3 * d(1) / (3 * d(1) + (2**1.5 - 1) * d(2) + 1 * d(3)),
    ),
    # shifted with t = 0 (no threshold): 2^(r + 1) - 1
    "ndcg(gain=shifted)@4": (
        (63 * d(2) + 31 * d(4)) / (63 * d(1) + 31 * d(2) + 15 * d(3)),
        7 * d(1) / (7 * d(1) + (2**2.5 - 1) * d(2) + 3 * d(3)),
    ),
    # explicit t = 2: 2^(r - 1) - 1
    "ndcg(gain=shifted,t=2)@4": ((15 * d(2) + 7 * d(4)) / (15 * d(1) + 7 * d(2) + 3 * d(3)), 1 * d(1) / (1 * d(1) + (2**0.5 - 1) * d(2) + 0)),
    # t = 3: 2^(r - 2) - 1 is negative for user 2's ratings 1.5 and 1 (-0.29, -0.5): neg=zero counts
    # them as 0, so user 2's ideal is 0 (rating 2 gains 2^0 - 1 = 0) and its NDCG 0
    "ndcg(gain=shifted,t=3,neg=zero)@4": ((7 * d(2) + 3 * d(4)) / (7 * d(1) + 3 * d(2) + 1 * d(3)), 0.0),
    "ndcg(ideal=none,base=e)@4": (1 / math.log(3) + 1 / math.log(5), 1 / math.log(2)),
    "dcg@4": (d(2) + d(4), d(1)),
    # discount=logmax2: 1/log2(max(i, 2)): positions 1 and 2 weigh 1, position 4 weighs 1/log2 4 = 1/2
    "dcg(discount=logmax2)@4": (1 + 1 / 2, 1),
    "ndcg(discount=logmax2)@4": ((1 + 1 / 2) / (1 + 1 + 1 / math.log2(3)), 1 / (1 + 1 + 1 / math.log2(3))),
    "dcg(gain=linear)@4": (5 * d(2) + 4 * d(4), 2 * d(1)),
    "dcg(gain=exp2)@4": (31 * d(2) + 15 * d(4), 3 * d(1)),
    "dcg(gain=shifted)@4": (63 * d(2) + 31 * d(4), 7 * d(1)),
    "dcg(gain=shifted,t=3,neg=zero)@4": (7 * d(2) + 3 * d(4), 0.0),
    "dcg(base=e)@4": (1 / math.log(3) + 1 / math.log(5), 1 / math.log(2)),
    "dcg(base=10)@4": (1 / math.log10(3) + 1 / math.log10(5), 1 / math.log10(2)),
}


@pytest.mark.parametrize("spec", list(CASES_AT_4))
def test_every_option_value_at_4(spec):
    recs, truth = TWO
    u1, u2 = CASES_AT_4[spec]
    pu = per_user(recs, truth, spec)
    assert pu[1] == pytest.approx(u1, abs=1e-12)
    assert pu[2] == pytest.approx(u2, abs=1e-12)
    if "aggregate=means" not in spec:  # F1 of the means is not the mean of the F1s
        assert value(recs, truth, spec) == pytest.approx((u1 + u2) / 2, abs=1e-12)


def test_every_ranking_option_value_has_a_golden():
    from receval.metrics import get_metric

    for name in ("precision", "recall", "f1", "hitrate", "mrr", "map", "mar", "ndcg", "dcg"):
        for axis_name, axis in get_metric(name).axes.items():
            for v in axis.values:
                if v == axis.default or axis_name == "weight":  # weight=pop reads train: golden and brute force in test_ipw.py
                    continue
                written = [s for s in [*CASES_AT_4, *CASES_AT_2] if s.startswith(name + "(") and f"{axis_name}={v}" in s]
                assert written, f"no golden for {name}({axis_name}={v})"


CASES_AT_2 = {
    # k = 2 separates min(k, |R|) from |R| and cut from uncut ideals
    "map@2": ((1 / 2) / 2, (1 / 1) / 2),
    "map(denominator=r)@2": ((1 / 2) / 3, (1 / 1) / 3),
    "recall(denominator=min_k_r)@2": (1 / 2, 1 / 2),
    "ndcg@2": (d(2) / (d(1) + d(2)), d(1) / (d(1) + d(2))),
    "ndcg(ideal=uncut)@2": (d(2) / (d(1) + d(2) + d(3)), d(1) / (d(1) + d(2) + d(3))),
    "ndcg(ideal=hits)@2": (d(2) / d(1), 1.0),
    "ndcg(ideal=listed)@2": (d(2) / (d(1) + d(2)), 1.0),  # user 1 lists two relevant items
    "mrr(hits=all)@2": (1 / 2, 1.0),
    "hitrate@1": (0.0, 1.0),
}


@pytest.mark.parametrize("spec", list(CASES_AT_2))
def test_cutoff_sensitive_values(spec):
    recs, truth = TWO
    u1, u2 = CASES_AT_2[spec]
    pu = per_user(recs, truth, spec)
    assert (pu[1], pu[2]) == pytest.approx((u1, u2), abs=1e-12)


def test_f1_aggregate_users_and_means():
    recs, truth = TWO
    f1_users = (4 / 7 + 2 / 7) / 2
    assert value(recs, truth, "f1@4") == pytest.approx(f1_users)
    P, R = (2 / 4 + 1 / 4) / 2, (2 / 3 + 1 / 3) / 2
    assert value(recs, truth, "f1(aggregate=means)@4") == pytest.approx(2 * P * R / (P + R))


# ==========================================================================================
# context options


def test_rel_threshold():
    recs, truth = TWO
    # rel=4: user 1 keeps 20 (5) and 40 (4); user 2 has no relevant item (skipped)
    assert per_user(recs, truth, "recall@4", rel=4) == {1: 2 / 2, 2: None}
    assert value(recs, truth, "ndcg@4", rel=4) == pytest.approx((d(2) + d(4)) / (d(1) + d(2)))
    # rel=4.5: only 20; spelled in the spec, also as '>=4.5'
    assert value(recs, truth, "precision(rel=4.5)@4") == pytest.approx(1 / 4)
    assert value(recs, truth, "recall@4", rel=">=4.5") == pytest.approx(1.0)
    # a threshold of 1.5 keeps 60 (2) and 65 (1.5) of user 2: |R| = 2
    assert per_user(recs, truth, "recall@4", rel=1.5)[2] == pytest.approx(1 / 2)
    # the shifted gain's t defaults to the threshold: 2^(r - 4 + 1) - 1 = 3, 1
    assert value(recs, truth, "dcg(gain=shifted)@4", rel=4) == pytest.approx(3 * d(2) + 1 * d(4))


TIED = {"user_id": [1, 1, 1, 1], "item_id": [30, 10, 20, 40], "score": [0.5, 0.9, 0.5, 0.5]}


@pytest.mark.parametrize(
    "ties, pos20",
    [("input", 3), ("item", 2), ("item_desc", 4), ("optimistic", 2)],
)
def test_ties(ties, pos20):
    """10 (0.9) leads; 30, 20, 40 tie at 0.5 (in that input order)."""
    truth = {"user_id": [1], "item_id": [20]}
    assert value(TIED, truth, "mrr@4", ties=ties) == pytest.approx(1 / pos20)
    assert value(TIED, truth, f"mrr(ties={ties})@4") == pytest.approx(1 / pos20)


def test_optimistic_ties_share_a_position():
    truth = {"user_id": [1, 1], "item_id": [20, 40]}
    # 20 and 40 both sit at position 2 = 1 + one strictly greater score
    assert value(TIED, truth, "map@4", ties="optimistic") == pytest.approx((2 / 2) * 2 / 2)
    assert value(TIED, truth, "ndcg@4", ties="optimistic") == pytest.approx(2 * d(2) / (d(1) + d(2)))
    assert value(TIED, truth, "mrr@1", ties="optimistic") == 0.0
    assert value(TIED, truth, "hitrate(count=hits)@2", ties="optimistic") == 2.0
    # with the input rule they sit at 3 and 4
    assert value(TIED, truth, "map@4", ties="input") == pytest.approx((1 / 3 + 2 / 4) / 2)


ORDERED = {"user_id": [1, 1, 1], "item_id": [10, 20, 30], "score": [0.1, 0.9, 0.5], "rank": [1, 3, 2]}
ONE_REL = {"user_id": [1], "item_id": [20]}


@pytest.mark.parametrize(
    "order, cols, expected",
    [
        ("score", ("score", "rank"), 1.0),  # 20 has the best score
        ("rank", ("score", "rank"), 1 / 3),  # 20 has rank 3
        ("input", ("score", "rank"), 1 / 2),  # 20 is the second row
        ("auto", ("score", "rank"), 1 / 3),  # auto: the rank column wins
        ("auto", ("score",), 1.0),  # then the score
        ("input", (), 1 / 2),  # the input order only when asked for
    ],
)
def test_order(order, cols, expected):
    recs = {c: v for c, v in ORDERED.items() if c in ("user_id", "item_id", *cols)}
    assert value(recs, ONE_REL, "mrr@3", order=order) == pytest.approx(expected)


def test_auto_order_never_assumes_the_input_order():
    # neither a score nor a rank column: the order of the rows is not evidence of a ranking
    recs = {c: v for c, v in ORDERED.items() if c in ("user_id", "item_id")}
    with pytest.raises(DataError, match="neither a score column .* order='input'"):
        value(recs, ONE_REL, "mrr@3")


def test_order_needs_its_column():
    recs = {c: v for c, v in ORDERED.items() if c != "rank"}
    with pytest.raises(DataError, match="rank"):
        value(recs, ONE_REL, "mrr@3", order="rank")
    recs = {c: v for c, v in ORDERED.items() if c != "score"}
    with pytest.raises(DataError, match="score"):
        value(recs, ONE_REL, "mrr@3", order="score")


DUP_RECS = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 20, 40], "score": [0.9, 0.8, 0.7, 0.6]}
DUP_TRUTH = {"user_id": [1, 1], "item_id": [20, 40]}


def test_dup_error_first_keep():
    with pytest.raises(DataError, match="dup='first'"):
        value(DUP_RECS, DUP_TRUTH, "precision@4")
    # first: the list becomes 10, 20, 40 -> hits at 2, 3
    assert value(DUP_RECS, DUP_TRUTH, "precision@4", dup="first") == pytest.approx(2 / 4)
    assert value(DUP_RECS, DUP_TRUTH, "precision(denominator=length)@4", dup="first") == pytest.approx(2 / 3)
    assert value(DUP_RECS, DUP_TRUTH, "map@4", dup="first") == pytest.approx((1 / 2 + 2 / 3) / 2)
    # keep: every row is a position and a hit -> hits at 2, 3, 4
    assert value(DUP_RECS, DUP_TRUTH, "precision@4", dup="keep") == pytest.approx(3 / 4)
    assert value(DUP_RECS, DUP_TRUTH, "hitrate(count=hits)@4", dup="keep") == pytest.approx(3)
    assert value(DUP_RECS, DUP_TRUTH, "map@4", dup="keep") == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 2)


def test_dup_first_keeps_the_best_ranked_occurrence():
    recs = {"user_id": [1, 1, 1], "item_id": [20, 10, 20], "score": [0.1, 0.9, 0.8]}
    # ranked: 10 (0.9), 20 (0.8), 20 (0.1) -> 20 at position 2
    assert value(recs, DUP_TRUTH, "mrr@3", dup="first") == pytest.approx(1 / 2)


def test_tdup_error_first_keep():
    recs = {"user_id": [1, 1, 1, 1], "item_id": [10, 20, 30, 40], "score": [0.9, 0.8, 0.7, 0.6]}
    truth = {"user_id": [1, 1, 1], "item_id": [20, 20, 40]}
    with pytest.raises(DataError, match="tdup='first'"):
        value(recs, truth, "recall@4")
    assert value(recs, truth, "recall@4", tdup="first") == pytest.approx(2 / 2)
    assert value(recs, truth, "recall@4", tdup="keep") == pytest.approx(2 / 3)  # |R| counts both rows
    assert value(recs, truth, "ndcg@4", tdup="keep") == pytest.approx((d(2) + d(4)) / (d(1) + d(2) + d(3)))


# user 1: the worked example; user 3: every truth rating below the threshold (no relevant item);
# user 4: relevant items but no recommendation; user 5: recommendations, no hit
CTX_LISTS = {1: [10, 20, 30, 40], 3: [71], 5: [1, 2]}
CTX_REL = {1: {20: 5, 40: 4, 50: 3}, 3: {70: 2}, 4: {80: 5}, 5: {3: 4}}
CTX = ranked(CTX_LISTS, CTX_REL)
U1_AT_4 = {"precision@4": 2 / 4, "recall@4": 2 / 3, "ndcg@4": (d(2) + d(4)) / (d(1) + d(2) + d(3)), "mrr@4": 1 / 2}


@pytest.mark.parametrize("spec", list(U1_AT_4))
def test_empty_and_norecs_policies(spec):
    recs, truth = CTX
    u1 = U1_AT_4[spec]
    res = receval.evaluate(recs, truth, [spec], rel=3)  # defaults: empty=skip, norecs=zero
    assert res[spec] == pytest.approx((u1 + 0 + 0) / 3)  # users 1, 4, 5; user 3 skipped
    assert res._entry(spec).users == 3 and res._entry(spec).skipped == 1
    assert "skipped:1" in res.signature(spec)
    assert per_user(recs, truth, spec, rel=3) == pytest.approx({1: u1, 3: None, 4: 0.0, 5: 0.0})
    assert value(recs, truth, spec, rel=3, empty="zero") == pytest.approx(u1 / 4)
    assert value(recs, truth, spec, rel=3, norecs="skip") == pytest.approx(u1 / 2)
    assert value(recs, truth, spec, rel=3, norecs="skip", empty="zero") == pytest.approx(u1 / 3)
    assert per_user(recs, truth, spec, rel=3, norecs="skip", empty="zero") == pytest.approx({1: u1, 3: 0.0, 4: None, 5: 0.0})
    with pytest.raises(DataError, match="empty='skip'"):
        value(recs, truth, spec, rel=3, empty="error")
    with pytest.raises(DataError, match="norecs='zero'"):
        value(recs, truth, spec, rel=3, norecs="error")
    # without the threshold every user has a relevant item: empty=error is satisfied
    assert value(recs, truth, spec, norecs="skip", empty="error") == pytest.approx(u1 / 3)


def test_every_user_left_out_is_an_error():
    recs, truth = CTX
    with pytest.raises(DataError, match="no user left"):
        value(recs, {"user_id": [3], "item_id": [70], "rating": [2.0]}, "ndcg@4", rel=3)


def test_user_without_hits_scores_zero_everywhere():
    recs, truth = ranked({1: [1, 2, 3]}, {1: {4: 5, 5: 4}})
    for spec in [*CASES_AT_4, *CASES_AT_2]:
        assert value(recs, truth, spec) == 0.0, spec


def test_tdup_keep_matches_a_relevant_row_of_the_pair():
    """Item 20 has two truth rows, 2.0 then 5.0; with rel=3 only the second is relevant. With
    tdup='keep' it counts once in |R|, so recommending it must be a hit (recall 1/1), with the
    relevant row's rating as gain; tdup='first' refuses the pair (its rows disagree on the rating:
    the first would depend on the row order)."""
    recs = {"user_id": [1, 1], "item_id": [20, 30], "score": [0.9, 0.8]}
    truth = {"user_id": [1, 1, 1], "item_id": [20, 20, 40], "rating": [2.0, 5.0, 1.0]}
    assert value(recs, truth, "recall@2", rel=3, tdup="keep") == 1.0
    assert value(recs, truth, "dcg(gain=linear)@2", rel=3, tdup="keep") == pytest.approx(5.0 * d(1))
    assert value(recs, truth, "ndcg@2", rel=3, tdup="keep") == pytest.approx(1.0)
    with pytest.raises(DataError, match="^pass tdup='max'"):
        value(recs, truth, "recall@2", rel=3, tdup="first")
    # without a threshold every row is relevant: the highest rating is the gain, in any row order
    assert value(recs, truth, "dcg(gain=linear)@2", tdup="keep") == pytest.approx(5.0 * d(1))
    assert value(recs, truth, "dcg(gain=linear)@2", tdup="max") == pytest.approx(5.0 * d(1))
