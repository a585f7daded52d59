"""receval.ope: goldens written by hand from the formulas, a slow reference on random logs,
the contract (row order, id spelling), bad inputs, paired differences, from_obp and the CLI."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest

from receval.cli import main
from receval.errors import DataError, RecevalWarning, SpecError
from receval.ope import evaluate, explain, from_obp, parse_estimator
from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_REWARDS, EXAMPLE_TARGET

import reference_ope as ref

pytestmark = pytest.mark.filterwarnings("ignore::receval.errors.RecevalWarning")

W = [0.8 / 0.5, 0.2 / 0.5, 1.0 / 0.25, 0.5 / 0.75]  # pi/mu of the example's logged items
R = [1.0, 0.0, 0.0, 1.0]
Q = [0.6, 0.3, 0.6, 0.3]  # q of the logged items
V = [0.8 * 0.6 + 0.2 * 0.3, 0.8 * 0.6 + 0.2 * 0.3, 0.6, 0.5 * 0.6 + 0.5 * 0.3]  # sum_a pi q per round

GOLDEN = {
    "naive": 0.5,
    "ips": (1.6 + 2 / 3) / 4,
    "ips(cap=1)": (1 + 2 / 3) / 4,
    "ips(floor=0.5)": (1.6 + 0.8 / 0.5 * 0 + 2 / 3) / 4,  # round 3: mu 0.25 raised to 0.5, w = 2, r = 0
    "snips": (1.6 + 2 / 3) / (1.6 + 0.4 + 4 + 2 / 3),
    "dm": (0.54 + 0.54 + 0.6 + 0.45) / 4,
    "dr": 0.5325 + (1.6 * 0.4 + 0.4 * -0.3 + 4 * -0.6 + 2 / 3 * 0.7) / 4,
    "switch_dr": 0.5325 + (0.4 * -0.3 + 2 / 3 * 0.7) / 4,
    "switch_dr(tau=10)": 0.5325 + (1.6 * 0.4 + 0.4 * -0.3 + 4 * -0.6 + 2 / 3 * 0.7) / 4,
    "sndr": 0.5325 + (1.6 * 0.4 + 0.4 * -0.3 + 4 * -0.6 + 2 / 3 * 0.7) / (1.6 + 0.4 + 4 + 2 / 3),
}


@pytest.mark.parametrize("spec,expected", sorted(GOLDEN.items()))
def test_golden(spec, expected):
    r = evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, [spec], rewards=EXAMPLE_REWARDS)
    assert r.value(spec) == pytest.approx(expected, abs=1e-12)


def test_signature_records_every_option():
    r = evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["ips(cap=10)", "snips", "switch_dr"], rewards=EXAMPLE_REWARDS)
    assert r.entry("ips(cap=10)").signature.startswith("ips(cap=10)|w:pi/mu|cap:10|floor:none|tgt:prob|ci:normal|level:0.95|v:")
    assert "|ci:delta|" in r.entry("snips").signature
    assert r.entry("switch_dr").signature.startswith("switch_dr|w:pi/mu|tau:1|tgt:prob|")
    assert str(parse_estimator("switch_dr(tau=1.0)")) == "switch_dr"
    assert "cap = 10 (default none)" in explain("ips(cap=10)")


def test_terms_and_diagnostics():
    r = evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["ips(cap=2)", "snips"])
    e = r.entry("ips(cap=2)")
    assert e.terms.tolist() == pytest.approx([1.6, 0.0, 0.0, 2 / 3])
    assert e.diagnostics["max_weight"] == 2.0 and e.diagnostics["clipped"] == 0.25
    assert e.diagnostics["mean_weight"] == pytest.approx(sum(W) / 4)
    w = [1.6, 0.4, 2.0, 2 / 3]
    assert e.diagnostics["ess"] == pytest.approx(sum(w) ** 2 / sum(x * x for x in w))
    s = r.entry("snips")
    assert s.terms.mean() == pytest.approx(s.value)
    # delta method: psi_i = (w_i r_i - V w_i) / mean(w)
    wb = sum(W) / 4
    psi = [(wi * ri - s.value * wi) / wb for wi, ri in zip(W, R)]
    m = sum(psi) / 4
    se = math.sqrt(sum((x - m) ** 2 for x in psi) / 3) / 2
    assert s.low == pytest.approx(s.value - 1.959963984540054 * se) and s.high == pytest.approx(s.value + 1.959963984540054 * se)


def _random(seed, positions=False, n=60, items=5):
    rng = np.random.default_rng(seed)
    log, target, rewards = [], [], []
    L = 3 if positions else 1
    for c in range(n):
        k = int(rng.integers(1, L + 1)) if positions else None
        probs = rng.dirichlet(np.ones(items))
        a = int(rng.choice(items, p=probs))
        row = {"context_id": c, "item_id": f"i{a}", "reward": float(rng.integers(0, 2)), "propensity": float(probs[a])}
        if positions:
            row["position"] = k
        log.append(row)
        for p in range(1, L + 1) if positions else [None]:
            tp = rng.dirichlet(np.ones(items)) * (rng.random() < 0.9 or 0.5)
            for j in range(items):
                t = {"context_id": c, "item_id": f"i{j}", "propensity": float(tp[j])}
                q = {"context_id": c, "item_id": f"i{j}", "estimate": float(rng.random())}
                if positions:
                    t["position"] = q["position"] = p
                target.append(t)
                rewards.append(q)
    return log, target, rewards


def _frame(rows):
    return pl.DataFrame(rows)


SPECS = [("naive", {}), ("ips", {}), ("ips(cap=3)", {"cap": 3.0}), ("ips(floor=0.2)", {"floor": 0.2}), ("snips", {}),
         ("snips(cap=2,floor=0.1)", {"cap": 2.0, "floor": 0.1}), ("dm", {}), ("dr", {}), ("dr(cap=5)", {"cap": 5.0}),
         ("switch_dr", {}), ("switch_dr(tau=3)", {"tau": 3.0}), ("sndr", {})]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("positions", [False, True])
def test_matches_the_slow_reference(seed, positions):
    log, target, rewards = _random(seed, positions)
    r = evaluate(_frame(log), _frame(target), [s for s, _ in SPECS], rewards=_frame(rewards))
    for spec, opts in SPECS:
        expected = ref.estimate(spec.split("(")[0], log, target, rewards, **opts)
        assert r.value(spec) == pytest.approx(expected, rel=1e-12, abs=1e-12), spec


def _random_slates(seed, n=40, items=6, L=3):
    rng = np.random.default_rng(seed)
    log, target = [], []
    for c in range(n):
        shown = rng.permutation(items)[:L]
        casc = 1.0
        for k, a in enumerate(shown, start=1):
            mu = float(rng.uniform(0.1, 0.9))
            casc *= mu
            log.append({"context_id": c, "item_id": int(a), "position": k, "reward": float(rng.integers(0, 2)),
                        "propensity": mu, "cascade_propensity": casc})
        for row in log[-L:]:
            row["joint_propensity"] = casc
        for k in range(1, L + 1):
            tp = rng.dirichlet(np.ones(items))
            for j in range(items):
                target.append({"context_id": c, "item_id": j, "position": k, "propensity": float(tp[j])})
    return log, target


@pytest.mark.parametrize("seed", range(3))
def test_slates_match_the_slow_reference(seed):
    log, target = _random_slates(seed)
    r = evaluate(_frame(log), _frame(target), ["iips", "rips", "sips"])
    for name in ("iips", "rips", "sips"):
        assert r.value(name) == pytest.approx(ref.slate_estimate(name, log, target), rel=1e-12), name
    assert "|pislate:product|" in r.entry("rips").signature


def test_slate_target_given_probabilities_are_read():
    log, target = _random_slates(0, n=5)
    t = _frame(target).with_columns(pl.lit(0.5).alias("cascade_propensity"), pl.lit(0.25).alias("joint_propensity"))
    r = evaluate(_frame(log), t, ["rips", "sips"])
    lg = _frame(log)
    assert r.value("rips") == pytest.approx(float((0.5 / lg["cascade_propensity"] * lg["reward"]).sum()) / 5, rel=1e-12)
    assert "|pislate:given|" in r.entry("sips").signature


def test_a_ranking_is_probability_one_at_its_position():
    log, target = _random_slates(1, n=10)
    rank = [{"context_id": c, "item_id": j, "rank": j + 1} for c in range(10) for j in range(6)]
    prob = [{"context_id": c, "item_id": j, "position": j + 1, "propensity": 1.0} for c in range(10) for j in range(3)]
    score = [{"context_id": c, "item_id": j, "score": 10.0 - j} for c in range(10) for j in range(6)]
    est = ["ips", "snips", "iips", "rips", "sips"]
    a = evaluate(_frame(log), _frame(rank), est)
    b = evaluate(_frame(log), _frame(prob), est)
    c = evaluate(_frame(log), _frame(score), est)
    for e in est:
        assert a.value(e) == b.value(e) == c.value(e)
    assert "|tgt:rank|" in a.entry("ips").signature and "|tgt:score|" in c.entry("ips").signature


def _permute_and_rename(frame, seed, rename):
    f = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    if rename:
        f = f.with_columns(pl.format("ctx-{}", pl.col("context_id")).alias("context_id"),
                           pl.format("item/{}", pl.col("item_id")).alias("item_id"))
    return f


@pytest.mark.parametrize("positions", [False, True])
def test_row_order_and_id_spelling_do_not_change_a_value(positions):
    log, target, rewards = _random(7, positions, n=200)
    est = [s for s, _ in SPECS]
    base = evaluate(_frame(log), _frame(target), est, rewards=_frame(rewards))
    for seed in range(3):
        other = evaluate(_permute_and_rename(_frame(log), seed, seed > 0), _permute_and_rename(_frame(target), seed + 5, seed > 0),
                         est, rewards=_permute_and_rename(_frame(rewards), seed + 10, seed > 0))
        for e, o in zip(base.entries, other.entries):
            assert o.value == e.value, e.estimator  # bit-identical: exactly rounded sums
            assert o.low == pytest.approx(e.low, abs=1e-12) and o.high == pytest.approx(e.high, abs=1e-12)


def test_slate_values_do_not_depend_on_row_order():
    log, target = _random_slates(3)
    base = evaluate(_frame(log), _frame(target), ["iips", "rips", "sips"])
    other = evaluate(_permute_and_rename(_frame(log), 1, True), _permute_and_rename(_frame(target), 2, True), ["iips", "rips", "sips"])
    assert [e.value for e in base.entries] == [e.value for e in other.entries]


def test_bootstrap_is_seeded_and_free_of_row_order():
    log, target, _ = _random(2, n=80)
    a = evaluate(_frame(log), _frame(target), ["ips", "snips"], ci="bootstrap", resamples=200, seed=5)
    b = evaluate(_permute_and_rename(_frame(log), 4, False), _permute_and_rename(_frame(target), 3, False), ["ips", "snips"],
                 ci="bootstrap", resamples=200, seed=5)
    assert [(e.low, e.high) for e in a.entries] == [(e.low, e.high) for e in b.entries]
    assert a.entry("ips").low < a.value("ips") < a.entry("ips").high
    assert "|ci:bootstrap|B:200|seed:5|level:0.95|" in a.entry("snips").signature


def test_several_targets_paired_differences():
    log, target, rewards = _random(4, n=100)
    other = _frame(target).with_columns((pl.col("propensity") * 0.5).alias("propensity"))
    r = evaluate(_frame(log), {"A": _frame(target), "B": other}, ["ips", "snips"])
    d = r.differences[0]
    assert (d.estimator, d.a, d.b) == ("ips", "A", "B")
    assert d.value == pytest.approx(r.value("ips", "A") - r.value("ips", "B"))
    ta, tb = r.entry("ips", "A").terms, r.entry("ips", "B").terms
    se = np.std(ta - tb, ddof=1) / math.sqrt(len(ta))
    assert d.high - d.value == pytest.approx(1.959963984540054 * se, rel=1e-9)
    snips = r.differences[1]
    assert snips.value == pytest.approx(0.0, abs=1e-12)  # halving every target probability leaves SNIPS unchanged
    with pytest.raises(SpecError, match="name the target"):
        r.value("ips")


def _warnings(log, target):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        evaluate(log, target, ["ips"])
    return [str(w.message) for w in got if w.category is RecevalWarning]


def test_untrustworthy_weights_warn():
    n = 1000
    tiny = {"context_id": list(range(n)), "item_id": [0] * n, "reward": [1.0] * n, "propensity": [0.5] * (n - 1) + [1e-6]}
    target = {"context_id": list(range(n)), "item_id": [0] * n, "propensity": [1.0] * n}
    assert any("effective sample size" in t for t in _warnings(tiny, target))
    wrong = tiny | {"propensity": [0.25] * n}  # every weight 4: the propensities cannot be right
    assert any("mean weight pi/mu of target 'target' is 4" in t for t in _warnings(wrong, target))
    fine = tiny | {"propensity": [1.0] * n}
    assert _warnings(fine, target) == []
    unseen = target | {"item_id": [1] * n, "propensity": [0.5] * n}
    assert any("never shows" in t for t in _warnings(fine, unseen))


def _bad(log=None, target=None, est=("ips",), **kw):
    with pytest.raises((DataError, SpecError)) as exc:
        evaluate(log or dict(EXAMPLE_LOG), target or dict(EXAMPLE_TARGET), list(est), **kw)
    text = str(exc.value)
    assert "\n" not in text and len(text) <= 200, text
    return text


def test_bad_inputs_are_refused_with_one_line():
    assert _bad(log=EXAMPLE_LOG | {"propensity": [0.5, 0.0, 0.25, 0.75]}).startswith("give every logged round a propensity in (0, 1]")
    assert _bad(log=EXAMPLE_LOG | {"propensity": [0.5, 1.5, 0.25, 0.75]}).startswith("give every logged round a propensity")
    assert _bad(target=EXAMPLE_TARGET | {"propensity": [0.9, 0.2, 0.8, 0.2, 1.0, 0.5, 0.5]}).startswith(
        "give target probabilities that sum to at most 1 per context")
    assert _bad(target={k: v[:4] for k, v in EXAMPLE_TARGET.items()}).startswith("give the target rows for every logged context")
    assert _bad(log=EXAMPLE_LOG | {"reward": ["1", "0", "0", "1"]}).startswith("give numbers in the log column 'reward'")
    assert _bad(log=EXAMPLE_LOG | {"position": [1, 0, 1, 1]}).startswith("number positions from 1")
    pos_target = EXAMPLE_TARGET | {"position": [1, 1, 1, 1, 1, 1, 5]}
    assert _bad(log=EXAMPLE_LOG | {"position": [1, 1, 1, 1]}, target=pos_target).startswith("give target positions within the slate")
    assert _bad(est=["dr"]).startswith("pass rewards=")
    assert _bad(est=["ipw"]) == "unknown estimator 'ipw'; did you mean 'ips'?"
    assert _bad(est=["ips(cap=0)"]).startswith("write cap= as a number > 0")
    assert _bad(est=["rips"]).startswith("give the log a position column")
    assert _bad(target=EXAMPLE_TARGET | {"propensity": [0.8, 0.2, 0.8, 0.2, 1.0, 0.5, -0.5]}).startswith("give target probabilities in [0, 1]")
    rewards = {k: v[1:] for k, v in EXAMPLE_REWARDS.items()}
    assert _bad(est=["dm"], rewards=rewards).startswith("give the reward model an estimate for every logged item")


@pytest.mark.parametrize("batches", [1, 3])
def test_mixed_id_types_meet_as_text(batches):
    """Text context ids in the log, integers in the target: they meet as text, in one batch."""
    log = dict(EXAMPLE_LOG) | {"context_id": ["1", "2", "3", "4"]}
    want = evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["ips"]).value("ips")
    assert evaluate(log, EXAMPLE_TARGET, ["ips"], batches=batches).value("ips") == want


def test_from_obp_is_obps_formulas():
    rng = np.random.default_rng(0)
    n, A, L = 50, 4, 3
    dist = rng.dirichlet(np.ones(A), size=(n, L)).transpose(0, 2, 1)  # (n, A, L), sums to 1 over actions
    q = rng.random((n, A, L))
    action, position = rng.integers(0, A, n), rng.integers(0, L, n)
    pscore, reward = rng.uniform(0.1, 1, n), rng.integers(0, 2, n)
    bf = {"action": action, "position": position, "pscore": pscore, "reward": reward}
    log, target, rewards = from_obp(bf, dist, q)
    r = evaluate(log, target, ["ips", "snips", "dm", "dr", "sndr", "switch_dr(tau=2)"], rewards=rewards)
    idx = np.arange(n)
    iw = dist[idx, action, position] / pscore
    qpi = (q[idx, :, position] * dist[idx, :, position]).sum(axis=1)
    qf = q[idx, action, position]
    assert r.value("ips") == pytest.approx(np.mean(iw * reward), rel=1e-12)
    assert r.value("snips") == pytest.approx(np.mean(iw * reward / iw.mean()), rel=1e-12)
    assert r.value("dm") == pytest.approx(np.mean(qpi), rel=1e-12)
    assert r.value("dr") == pytest.approx(np.mean(qpi + iw * (reward - qf)), rel=1e-12)
    assert r.value("sndr") == pytest.approx(np.mean(qpi + iw * (reward - qf) / iw.mean()), rel=1e-12)
    assert r.value("switch_dr(tau=2)") == pytest.approx(np.mean(qpi + (iw <= 2) * iw * (reward - qf)), rel=1e-12)


def test_cli(tmp_path, capsys):
    log, target = tmp_path / "log.csv", tmp_path / "t.csv"
    pl.DataFrame(EXAMPLE_LOG).write_csv(log)
    pl.DataFrame(EXAMPLE_TARGET).write_csv(target)
    assert main(["ope", str(log), str(target), "-e", "ips", "-e", "ips(cap=1)", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [x["metric"] for x in doc["results"]] == ["ips", "ips(cap=1)"]
    assert doc["results"][0]["value"] == pytest.approx(GOLDEN["ips"]) and doc["results"][1]["signature"].startswith("ips(cap=1)|")
    assert main(["ope", str(log), str(target), "-e", "dr"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("receval: error: pass rewards=") and "\n" not in err
    assert main(["ope", str(log), str(target), "-e", "ips", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| estimator | value |")


def _everything(r):
    return ([(e.estimator, e.target, e.value, e.low, e.high, e.signature, e.rounds, e.diagnostics) for e in r.entries],
            [(d.estimator, d.a, d.b, d.value, d.low, d.high, d.signature, d.p, d.p_adjusted, d.effect, d.wins, d.ties,
              d.losses) for d in r.differences])


@pytest.mark.parametrize("ci", ["normal", "bootstrap"])
@pytest.mark.parametrize("positions", [False, True])
def test_batches_do_not_change_a_value(positions, ci):
    """The log aligned and estimated in batches of contexts: every value, interval and diagnostic
    is the one-batch one exactly (each context wholly in one batch; the sums exactly rounded)."""
    log, target, rewards = _random(5, positions, n=120)
    log = log + [dict(row, reward=1.0 - row["reward"]) for row in log[::3]]  # several rounds in some contexts
    other = _frame(target).with_columns((pl.col("propensity") * 0.7).alias("propensity"))
    specs = [s for s, _ in SPECS]
    kw = dict(rewards=_frame(rewards), ci=ci, resamples=100)
    one = evaluate(_frame(log), {"A": _frame(target), "B": other}, specs, batches=1, **kw)
    for b in (2, 7, 500):
        assert _everything(evaluate(_frame(log), {"A": _frame(target), "B": other}, specs, batches=b, **kw)) == _everything(one)


def test_slate_batches_do_not_change_a_value():
    log, target = _random_slates(1, n=60)
    one = evaluate(_frame(log), _frame(target), ["iips", "rips", "sips", "ips"], batches=1)
    for b in (3, 11):
        assert _everything(evaluate(_frame(log), _frame(target), ["iips", "rips", "sips", "ips"], batches=b)) == _everything(one)


def test_batches_refuse_a_missing_context_once_and_bad_counts():
    log, target, _ = _random(1, n=30)
    t = _frame(target).filter(pl.col("context_id") >= 3)
    for b in (1, 4):
        with pytest.raises(DataError, match="^give the target rows for every logged context: 3 have none"):
            evaluate(_frame(log), t, ["ips"], batches=b)
    with pytest.raises(SpecError, match="batches"):
        evaluate(_frame(log), _frame(target), ["ips"], batches=0)


def test_batched_checks_count_over_every_batch():
    log, target, _ = _random(2, n=40)
    t = _frame(target)
    doubled = pl.concat([t, t.filter(pl.col("context_id") < 5)])
    over = pl.concat([t, pl.DataFrame({"context_id": range(6), "item_id": ["extra"] * 6, "propensity": [0.6] * 6})])
    for b in (1, 3, 9):
        with pytest.raises(DataError, match=r"^give the target one row per context and item: 50 rows repeat one"):
            evaluate(_frame(log), doubled, ["ips"], batches=b)
        with pytest.raises(DataError, match=r"^give target probabilities that sum to at most 1 per context: 6 sum above it"):
            evaluate(_frame(log), over, ["ips"], batches=b)
