r"""Offline A/B tests: estimate a target policy's online value from a logging policy's log
(off-policy evaluation), with exactly defined estimators, intervals and diagnostics.

>>> from receval.ope import evaluate, ESTIMATORS
>>> sorted(ESTIMATORS)
['dm', 'dr', 'iips', 'ips', 'naive', 'rips', 'sips', 'sndr', 'snips', 'switch_dr']

See :func:`evaluate`, :func:`explain`, :func:`from_obp` and the page "Offline A/B tests".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataError
from .core import CI_METHODS, OpeDifference, OpeEntry, OpeResults, evaluate
from .estimators import ESTIMATORS, EstimatorSpec, parse_estimator, render


def explain(spec: str) -> str:
    """An estimator's definition, resolved options and the fields of its signature.

    >>> print(explain("ips(cap=10)").splitlines()[0])
    ips(cap=10): Inverse propensity scoring: the mean of the weighted rewards.
    """
    s = parse_estimator(spec)
    est = s.estimator
    lines = [f"{s}: {est.summary}", ""]
    doc = est.doc.split("Formula", 1)[-1].split(">>>", 1)[0].strip().lstrip("-").strip()
    lines += [doc, ""]
    if est.options:
        lines.append("options:")
        for o in est.options:
            lines.append(f"  {o.name} = {render(s.opts[o.name])} (default {render(o.default)}): {o.doc}")
    lines.append(f"reads: log{', reward model' if est.rewards else ''}; a term per {'slate' if est.level == 'slate' else 'log row'}")
    if est.references:
        lines.append(f"references: {est.references}")
    head = [str(s)] + ([f"w:{est.weight}"] if est.weight else []) + [f"{k}:{render(v)}" for k, v in s.options]
    lines.append("signature: " + "|".join(head + ["tgt:<prob|rank|score>", "ci:<...>", "level:<...>", "v:<version>"]))
    return "\n".join(lines) + "\n"


def from_obp(bandit_feedback: dict[str, Any], action_dist: np.ndarray,
             estimated_rewards: np.ndarray | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """obp's arrays as receval's ``(log, target, rewards)`` dicts of columns (no obp import).

    ``bandit_feedback``: obp's dict with ``action``, ``reward``, ``pscore`` and optional
    ``position`` (0-based) per round; ``action_dist``: the target's probabilities, shape
    ``(n_rounds, n_actions, len_list)``; ``estimated_rewards``: a reward model of the same shape.
    Round *t* becomes ``context_id`` *t*, action *a* ``item_id`` *a*, obp's position *k*
    ``position`` *k + 1* (no position column when ``len_list`` is 1); the target lists every
    action with a probability > 0. Then ``receval.ope.evaluate(*from_obp(...)[:2], ["ips"])``
    is obp's IPW on the same data.

    >>> import numpy as np
    >>> bf = {"action": np.array([0, 1]), "reward": np.array([1, 0]), "pscore": np.array([0.5, 0.5]), "position": None}
    >>> log, target, _ = from_obp(bf, np.array([[[1.0], [0.0]], [[0.5], [0.5]]]))
    >>> evaluate(log, target, ["ips"]).value("ips")    # (2*1 + 1*0) / 2
    1.0
    """
    dist = np.asarray(action_dist, dtype=np.float64)
    if dist.ndim != 3:
        raise DataError(f"give action_dist of shape (n_rounds, n_actions, len_list), got shape {dist.shape}")
    n, n_actions, len_list = dist.shape
    action = np.asarray(bandit_feedback["action"]).astype(np.int64)
    pos = bandit_feedback.get("position")
    position = np.zeros(n, dtype=np.int64) if pos is None else np.asarray(pos).astype(np.int64)
    log: dict[str, np.ndarray] = {"context_id": np.arange(n, dtype=np.int64), "item_id": action,
                                  "reward": np.asarray(bandit_feedback["reward"], dtype=np.float64),
                                  "propensity": np.asarray(bandit_feedback["pscore"], dtype=np.float64)}
    grid = np.meshgrid(np.arange(n), np.arange(n_actions), np.arange(len_list), indexing="ij")
    t, a, k = (g.ravel() for g in grid)
    p = dist.ravel()
    keep = p > 0
    target: dict[str, np.ndarray] = {"context_id": t[keep], "item_id": a[keep], "propensity": p[keep]}
    if len_list > 1:
        log["position"] = position + 1
        target["position"] = k[keep] + 1
    rewards = None
    if estimated_rewards is not None:
        q = np.asarray(estimated_rewards, dtype=np.float64).ravel()
        rewards = {"context_id": t, "item_id": a, "estimate": q}
        if len_list > 1:
            rewards["position"] = k + 1
    return log, target, rewards


__all__ = ["evaluate", "explain", "from_obp", "ESTIMATORS", "EstimatorSpec", "parse_estimator", "OpeResults", "OpeEntry",
           "OpeDifference", "CI_METHODS"]
