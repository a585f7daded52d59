"""Peer runner: Open Bandit Pipeline (st-tech/zr-obp, PyPI obp 0.4.1): off-policy estimates.

Not a ranking-metric runner: it reads a JSON job instead of recs/truth parquet files.

    <obp env python> obp_ope.py JOB OUT_JSON

JOB is a job file, ``-`` (stdin), or a folder: its ``job.json`` if present, else a built-in
smoke job (one small synthetic case; this is what `receval peers build`'s runner smoke run feeds it).
A job is ``{"cases": [case, ...]}``; each case has a ``name`` and exactly one source:

``synthetic``: ``obp.dataset.SyntheticBanditDataset(n_actions, dim_context, reward_type,
    reward_function=logistic_reward_function (binary) | linear_reward_function (continuous),
    behavior_policy_function=None (uniform, the default) | linear_behavior_policy ("behavior": "linear"),
    random_state).obtain_batch_bandit_feedback(n_rounds)``. The evaluation policy is a function of
    the true expected reward q(x,a): ``"policy": {"kind": "egreedy", "epsilon": e}`` (1-e+e/A on
    argmax_a q, e/A elsewhere) or ``{"kind": "softmax", "beta": b}`` (softmax of b*q). obp 0.4.1's
    synthetic data has no positions; ``len_list`` L > 1 draws position ~ uniform{0..L-1} with
    numpy.random.default_rng(random_state) and, at position k, the policy applied to the k-th
    largest q moved to the front (argmax for k=0). ``ground_truth``: obp's
    ``calc_ground_truth_policy_value(expected_reward, action_dist)`` (position 0 only; L = 1).
``arrays``: the bandit feedback as given: action, reward, pscore (n), position (n, or absent =
    zeros), action_dist (n, A, L) and optionally estimated_rewards_by_reg_model (n, A, L).
``obd``: the Open Bandit Dataset sample shipped in the obp wheel (no download):
    ``OpenBanditDataset(behavior_policy="random", campaign)`` is the log;
    ``BernoulliTS(n_actions, len_list, is_zozotown_prior=True, campaign, random_state)
    .compute_batch_action_dist(n_rounds, n_sim)`` the evaluation policy (as obp's examples);
    ``OpenBanditDataset.calc_on_policy_policy_value_estimate("bts", campaign)`` (the mean reward
    of the whole bts log) the ground truth; relative error = |estimate - truth| / truth.

``slate``: ``obp.dataset.SyntheticSlateBanditDataset(n_unique_action, len_list, dim_context,
    reward_type, reward_structure, click_model, base_reward_function=logistic_reward_function (binary) |
    linear_reward_function (continuous), behavior_policy_function=linear_behavior_policy_logit
    (None with "behavior": "uniform"), random_state).obtain_batch_bandit_feedback(n_rounds)`` and the
    target's ``generate_evaluation_policy_pscore("optimal"|"anti-optimal"|"random", context, action,
    epsilon)``; estimates: sips (SlateStandardIPS: pscore, the joint probability of the slate),
    iips (SlateIndependentIPS: pscore_item_position) and rips (SlateRewardInteractionIPS:
    pscore_cascade), each with its evaluation_policy_* counterpart; arrays: slate_id, action,
    position, reward and the three pscores of both policies.

Estimated rewards (for DM and the DR family), unless given: ``"regression": "logistic"`` (default)
``obp.ope.RegressionModel(n_actions, len_list, action_context, base_model=
LogisticRegression(max_iter=1000, C=100, random_state=rs)).fit_predict(context, action, reward,
position, pscore, n_folds, random_state=rs)`` (for continuous rewards: sklearn Ridge);
``"expected"`` (synthetic only): the true expected reward, tiled over positions.

Estimators (each ``estimate_policy_value`` of the class, numpy inputs, position given):
ipw (InverseProbabilityWeighting), snipw (SelfNormalizedInverseProbabilityWeighting),
dm (DirectMethod), dr (DoublyRobust), sndr (SelfNormalizedDoublyRobust),
``switch-dr(tau=t)`` (SwitchDoublyRobust(tau=t)) for each t of the case's ``switch_tau``
(default [1.0, 10.0]), ``dr-os(lambda=l)`` (DoublyRobustWithShrinkage(lambda_=l)) for each l of
``dr_os_lambda`` (default [1.0, 100.0]). obp 0.4.1's IPW has no clipping (``lambda_``): a case
asking for ``ipw_lambda`` gets a note and no clipped estimate.

Output JSON: {"library", "version", "env", "timings", "notes", "metrics": {} (no ranking metrics),
"cases": {name: {"estimates": {estimator: float}, "ground_truth"?: float, "relative_error"?: {...},
"arrays": {action, position, reward, pscore, action_dist, estimated_rewards_by_reg_model} |
"npz": path}}}. A case with ``"npz": PATH`` writes its arrays there (numpy.savez_compressed) instead
of the JSON; an obd case stores the action_dist as its (A, L) matrix (``action_dist_matrix``: the
policy is context-free, every round has the same distribution) and the estimated rewards as
``q_hat_rows`` (U, A, L) + ``q_hat_index`` (n,): round t's rewards are q_hat_rows[q_hat_index[t]].
"""
import json
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import _common  # noqa: E402  (drops this folder from sys.path, see _common.py)

import numpy as np  # noqa: E402

warnings.simplefilter("ignore")

from obp.dataset import (  # noqa: E402
    OpenBanditDataset,
    SyntheticBanditDataset,
    SyntheticSlateBanditDataset,
    linear_behavior_policy,
    linear_behavior_policy_logit,
    linear_reward_function,
    logistic_reward_function,
)
from obp.ope import (  # noqa: E402
    DirectMethod,
    DoublyRobust,
    DoublyRobustWithShrinkage,
    InverseProbabilityWeighting,
    RegressionModel,
    SelfNormalizedDoublyRobust,
    SelfNormalizedInverseProbabilityWeighting,
    SlateIndependentIPS,
    SlateRewardInteractionIPS,
    SlateStandardIPS,
    SwitchDoublyRobust,
)
from obp.policy import BernoulliTS  # noqa: E402

SMOKE_JOB = {"cases": [{"name": "smoke", "synthetic": {"n_rounds": 200, "n_actions": 4, "random_state": 1}}]}


def read_job(arg: str) -> dict:
    if arg == "-":
        return json.load(sys.stdin)
    p = Path(arg)
    if p.is_dir():
        p = p / "job.json"
        if not p.exists():
            return SMOKE_JOB
    return json.loads(p.read_text())


def policy_dist(q: np.ndarray, policy: dict) -> np.ndarray:
    """(n, A) action probabilities of the evaluation policy from the expected rewards q (n, A)."""
    kind = policy.get("kind", "egreedy")
    n, a = q.shape
    if kind == "egreedy":
        eps = float(policy.get("epsilon", 0.2))
        d = np.full((n, a), eps / a)
        d[np.arange(n), q.argmax(axis=1)] += 1.0 - eps
        return d
    if kind == "softmax":
        z = float(policy.get("beta", 5.0)) * q
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)
    raise SystemExit(f"unknown policy kind {kind!r}: use egreedy or softmax")


def synthetic(c: dict) -> tuple[dict, np.ndarray, np.ndarray | None, dict]:
    rs = int(c.get("random_state", 12345))
    reward_type = c.get("reward_type", "binary")
    ds = SyntheticBanditDataset(
        n_actions=int(c.get("n_actions", 5)), dim_context=int(c.get("dim_context", 3)), reward_type=reward_type,
        reward_function=logistic_reward_function if reward_type == "binary" else linear_reward_function,
        behavior_policy_function=linear_behavior_policy if c.get("behavior") == "linear" else None,
        random_state=rs)
    bf = ds.obtain_batch_bandit_feedback(n_rounds=int(c.get("n_rounds", 1000)))
    q = bf["expected_reward"]
    n, a = q.shape
    L = int(c.get("len_list", 1))
    pol = c.get("policy", {"kind": "egreedy", "epsilon": 0.2})
    extra: dict = {}
    if L == 1:
        position = np.zeros(n, dtype=int)
        action_dist = policy_dist(q, pol)[:, :, None]
        extra["ground_truth"] = float(ds.calc_ground_truth_policy_value(expected_reward=q, action_dist=action_dist))
    else:
        position = np.random.default_rng(rs).integers(0, L, size=n)
        order = np.argsort(-q, axis=1, kind="stable")
        action_dist = np.empty((n, a, L))
        for k in range(L):
            qk = q.copy()
            qk[np.arange(n), order[:, k]] = q.max(axis=1) + 1.0  # the k-th best action becomes the favourite
            action_dist[:, :, k] = policy_dist(qk, pol)
    bf["position"] = position
    q_hat = None
    if c.get("regression") == "expected":
        q_hat = np.repeat(q[:, :, None], L, axis=2)
    return bf, action_dist, q_hat, extra


def regression(bf: dict, L: int, c: dict) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression, Ridge

    rs = int(c.get("random_state", 12345))
    binary = set(np.unique(bf["reward"]).tolist()) <= {0, 1}
    base = LogisticRegression(max_iter=1000, C=100, random_state=rs) if binary else Ridge(random_state=rs)
    model = RegressionModel(n_actions=int(bf["n_actions"]), len_list=L, action_context=bf.get("action_context"),
                            base_model=base)
    return model.fit_predict(context=bf["context"], action=bf["action"], reward=bf["reward"],
                             position=bf["position"], pscore=bf["pscore"], n_folds=int(c.get("n_folds", 2)),
                             random_state=rs)


def estimates(bf: dict, action_dist: np.ndarray, q_hat: np.ndarray, c: dict, notes: list) -> dict:
    common = dict(reward=bf["reward"], action=bf["action"], pscore=bf["pscore"], position=bf["position"],
                  action_dist=action_dist)
    dr_kw = dict(common, estimated_rewards_by_reg_model=q_hat)
    out = {
        "ipw": InverseProbabilityWeighting().estimate_policy_value(**common),
        "snipw": SelfNormalizedInverseProbabilityWeighting().estimate_policy_value(**common),
        "dm": DirectMethod().estimate_policy_value(action_dist=action_dist, estimated_rewards_by_reg_model=q_hat,
                                                   position=bf["position"]),
        "dr": DoublyRobust().estimate_policy_value(**dr_kw),
        "sndr": SelfNormalizedDoublyRobust().estimate_policy_value(**dr_kw),
    }
    for t in c.get("switch_tau", [1.0, 10.0]):
        out[f"switch-dr(tau={t:g})"] = SwitchDoublyRobust(tau=float(t)).estimate_policy_value(**dr_kw)
    for lam in c.get("dr_os_lambda", [1.0, 100.0]):
        out[f"dr-os(lambda={lam:g})"] = DoublyRobustWithShrinkage(lambda_=float(lam)).estimate_policy_value(**dr_kw)
    if c.get("ipw_lambda") is not None:
        notes.append(f"case {c['name']}: obp {version('obp')}'s InverseProbabilityWeighting has no clipping "
                     "(lambda_): no clipped IPW estimate")
    return {k: float(v) for k, v in out.items()}


def obd(c: dict) -> tuple[dict, np.ndarray, dict]:
    campaign = c.get("campaign", "all")
    rs = int(c.get("random_state", 12345))
    ds = OpenBanditDataset(behavior_policy="random", campaign=campaign)
    bf = ds.obtain_batch_bandit_feedback()
    policy = BernoulliTS(n_actions=ds.n_actions, len_list=ds.len_list, is_zozotown_prior=True, campaign=campaign,
                         random_state=rs)
    action_dist = policy.compute_batch_action_dist(n_rounds=bf["n_rounds"], n_sim=int(c.get("n_sim", 100000)))
    truth = float(OpenBanditDataset.calc_on_policy_policy_value_estimate(behavior_policy="bts", campaign=campaign))
    return bf, action_dist, {"ground_truth": truth, "len_list": ds.len_list}


def slate(c: dict) -> dict:
    rs = int(c.get("random_state", 12345))
    ds = SyntheticSlateBanditDataset(
        n_unique_action=int(c.get("n_unique_action", 5)), len_list=int(c.get("len_list", 3)),
        dim_context=int(c.get("dim_context", 2)), reward_type=c.get("reward_type", "binary"),
        reward_structure=c.get("reward_structure", "cascade_additive"), click_model=c.get("click_model"),
        base_reward_function=logistic_reward_function if c.get("reward_type", "binary") == "binary" else linear_reward_function,
        behavior_policy_function=None if c.get("behavior") == "uniform" else linear_behavior_policy_logit,
        random_state=rs)
    bf = ds.obtain_batch_bandit_feedback(n_rounds=int(c.get("n_rounds", 500)), return_pscore_item_position=True)
    e_joint, e_item, e_cascade = ds.generate_evaluation_policy_pscore(
        evaluation_policy_type=c.get("evaluation_policy", "optimal"), context=bf["context"], action=bf["action"],
        epsilon=float(c.get("epsilon", 0.3)))
    base = dict(slate_id=bf["slate_id"], reward=bf["reward"], position=bf["position"])
    est = {
        "sips": SlateStandardIPS(len_list=ds.len_list).estimate_policy_value(
            **base, pscore=bf["pscore"], evaluation_policy_pscore=e_joint),
        "iips": SlateIndependentIPS(len_list=ds.len_list).estimate_policy_value(
            **base, pscore_item_position=bf["pscore_item_position"], evaluation_policy_pscore_item_position=e_item),
        "rips": SlateRewardInteractionIPS(len_list=ds.len_list).estimate_policy_value(
            **base, pscore_cascade=bf["pscore_cascade"], evaluation_policy_pscore_cascade=e_cascade),
    }
    arr = dict(base, action=bf["action"], pscore=bf["pscore"], pscore_item_position=bf["pscore_item_position"],
               pscore_cascade=bf["pscore_cascade"], evaluation_policy_pscore=e_joint,
               evaluation_policy_pscore_item_position=e_item, evaluation_policy_pscore_cascade=e_cascade)
    return {"estimates": {k: float(v) for k, v in est.items()},
            "arrays": {k: np.asarray(v).tolist() for k, v in arr.items()}}


def arrays_of(bf: dict, action_dist: np.ndarray, q_hat: np.ndarray, compact: bool) -> dict:
    arr = {"action": np.asarray(bf["action"]), "position": np.asarray(bf["position"]),
           "reward": np.asarray(bf["reward"]), "pscore": np.asarray(bf["pscore"])}
    if compact:
        if not (action_dist == action_dist[:1]).all():
            raise SystemExit("compact arrays need a context-free action_dist (the same for every round)")
        arr["action_dist_matrix"] = action_dist[0]
        rows, index = np.unique(q_hat, axis=0, return_inverse=True)
        arr["q_hat_rows"], arr["q_hat_index"] = rows, index.reshape(-1)
    else:
        arr["action_dist"] = action_dist
        arr["estimated_rewards_by_reg_model"] = q_hat
    return arr


def run_case(c: dict, notes: list) -> dict:
    extra: dict = {}
    q_hat = None
    if "synthetic" in c:
        bf, action_dist, q_hat, extra = synthetic(dict(c["synthetic"], name=c["name"]))
        opts = dict(c["synthetic"], **c)
    elif "arrays" in c:
        a = c["arrays"]
        action_dist = np.asarray(a["action_dist"], dtype=float)
        n = action_dist.shape[0]
        bf = {"action": np.asarray(a["action"], dtype=int), "reward": np.asarray(a["reward"], dtype=float),
              "pscore": np.asarray(a["pscore"], dtype=float),
              "position": np.asarray(a.get("position") or np.zeros(n), dtype=int)}
        if a.get("estimated_rewards_by_reg_model") is None:
            raise SystemExit(f"case {c['name']}: arrays need estimated_rewards_by_reg_model")
        q_hat = np.asarray(a["estimated_rewards_by_reg_model"], dtype=float)
        opts = c
    elif "slate" in c:
        return slate(c["slate"])
    elif "obd" in c:
        bf, action_dist, extra = obd(c["obd"])
        opts = dict(c["obd"], **c)
    else:
        raise SystemExit(f"case {c.get('name')}: give one of synthetic, arrays, obd, slate")
    L = action_dist.shape[2]
    extra.pop("len_list", None)
    if q_hat is None:
        q_hat = regression(bf, L, opts)
    res: dict = {"estimates": estimates(bf, action_dist, q_hat, opts, notes)}
    res.update(extra)
    if "ground_truth" in extra:
        t = extra["ground_truth"]
        res["relative_error"] = {k: abs(v - t) / t for k, v in res["estimates"].items()}
    arr = arrays_of(bf, action_dist, q_hat, compact="obd" in c)
    if c.get("npz"):
        np.savez_compressed(c["npz"], **arr)
        res["npz"] = str(c["npz"])
    else:
        res["arrays"] = {k: v.tolist() for k, v in arr.items()}
    return res


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: obp_ope.py JOB|-|DIR OUT_JSON")
    job = read_job(sys.argv[1])
    res = _common.Result("obp", version("obp"))
    out = {}
    with res.timed("compute_s"):
        for c in job["cases"]:
            out[c["name"]] = run_case(c, res.doc["notes"])
    res.doc["cases"] = out
    res.write(Path(sys.argv[2]))


if __name__ == "__main__":
    main()
