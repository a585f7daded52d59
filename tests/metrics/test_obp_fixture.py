"""The Open Bandit Dataset fixture (tests/fixtures/obp/): obp 0.4.1's estimates recompute from its arrays.

No obp needed: the formulas are obp 0.4.1's (obp/ope/estimators.py), written out with numpy, so the
fixture is self-contained for receval.ope's tests and docs (see tests/fixtures/obp/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "obp"


@pytest.fixture(scope="module")
def obd():
    doc = json.loads((FIX / "obd_all.json").read_text())
    z = np.load(FIX / doc["npz"])
    return doc, {k: z[k] for k in z.files}


def recompute(a: dict, tau: float, lam: float) -> dict[str, float]:
    n = len(a["action"])
    t, act, pos = np.arange(n), a["action"], a["position"]
    pi = a["action_dist_matrix"][:, pos].T  # (n, A): the policy at each round's position
    q = a["q_hat_rows"][a["q_hat_index"], :, pos]  # (n, A): the estimated rewards at that position
    r, p = a["reward"].astype(float), a["pscore"]
    w = pi[t, act] / p
    q_pi = (q * pi).sum(1) / pi.sum(1)  # obp: np.average(q, weights=pi, axis=1)
    res = r - q[t, act]
    return {
        "ipw": float((w * r).mean()),
        "snipw": float((w * r).mean() / w.mean()),
        "dm": float(q_pi.mean()),
        "dr": float((q_pi + w * res).mean()),
        "sndr": float((q_pi + w * res / w.mean()).mean()),
        f"switch-dr(tau={tau:g})": float((q_pi + (w <= tau) * w * res).mean()),
        f"dr-os(lambda={lam:g})": float((q_pi + lam * w / (w**2 + lam) * res).mean()),
    }


def test_obd_fixture_is_the_random_log_and_a_context_free_policy(obd):
    doc, a = obd
    n = 10_000
    assert doc["version"] == "0.4.1" and doc["ground_truth"] == pytest.approx(0.0042)
    assert all(len(a[k]) == n for k in ("action", "position", "reward", "pscore", "q_hat_index"))
    assert a["action_dist_matrix"].shape == (80, 3) and np.allclose(a["action_dist_matrix"].sum(0), 1.0)
    assert np.allclose(a["pscore"], 1 / 80) and set(np.unique(a["position"])) == {0, 1, 2}
    assert set(np.unique(a["reward"])) <= {0, 1}


@pytest.mark.parametrize("tau,lam", [(1.0, 1.0), (10.0, 100.0)])
def test_obd_estimates_recompute_from_the_arrays(obd, tau, lam):
    doc, a = obd
    got = recompute(a, tau, lam)
    for name, value in got.items():
        assert value == pytest.approx(doc["estimates"][name], rel=1e-12, abs=1e-15), name
        rel = abs(doc["estimates"][name] - doc["ground_truth"]) / doc["ground_truth"]
        assert doc["relative_error"][name] == pytest.approx(rel, rel=1e-12), name


def test_receval_ope_reproduces_obps_obd_table(obd):
    """receval.ope on the same arrays (via from_obp) gives obp's numbers of the Open Bandit Dataset table."""
    ope = pytest.importorskip("receval.ope", reason="receval.ope is not importable yet: it is compared with obp's numbers here")
    doc, a = obd
    n = len(a["action"])
    dist = np.broadcast_to(a["action_dist_matrix"], (n, *a["action_dist_matrix"].shape))
    bf = {k: a[k] for k in ("action", "position", "reward", "pscore")}
    log, target, rewards = ope.from_obp(bf, dist, a["q_hat_rows"][a["q_hat_index"]])
    names = {"ipw": "ips", "snipw": "snips", "dm": "dm", "dr": "dr", "sndr": "sndr",
             "switch-dr(tau=1)": "switch_dr(tau=1)", "switch-dr(tau=10)": "switch_dr(tau=10)"}
    got = ope.evaluate(log, target, list(names.values()), rewards=rewards, ci="none")
    for obp_name, spec in names.items():
        assert got.value(spec) == pytest.approx(doc["estimates"][obp_name], rel=1e-10), spec


def test_the_bundled_obd_sample_is_the_fixture():
    """receval.data.obd (the example's data, in the wheel) holds the fixture's arrays and obp's record."""
    from receval.data.obd import load_obd

    arrays, doc = load_obd()
    z = np.load(FIX / "obd_all.npz")
    assert set(arrays) == set(z.files) and all(np.array_equal(arrays[k], z[k]) for k in z.files)
    assert doc == json.loads((FIX / "obd_all.json").read_text())
