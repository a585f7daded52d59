"""The Open Bandit Dataset's small sample (ZOZOTOWN, campaign ``all``), as obp 0.4.1 ships it,
bundled for the offline A/B test example (``examples/06_offline_ab.py``).

``obd/obd_all.npz`` (numpy): the uniform-random policy's log of 10,000 rounds, ``action``
(80 items), ``position`` (0-based, 3 positions), ``reward`` (click), ``pscore`` (1/80);
``action_dist_matrix`` (80, 3): the Bernoulli-TS policy's probability of each item at each
position (obp's ``compute_batch_action_dist(n_sim=100000)``, random_state 12345: the same every
round); ``q_hat_rows`` / ``q_hat_index``: obp's cross-fitted logistic reward model (round *t*'s
estimates are ``q_hat_rows[q_hat_index[t]]``, shape (80, 3)). ``obd/obd_all.json``: what obp
0.4.1 estimated on these arrays, the ground truth (the mean click of the Bernoulli-TS policy's
own log, 0.0042) and obp's relative errors. Made by ``src/receval/adapters/runners/obp_ope.py``
(see tests/fixtures/obp/README.md in the repository).

>>> arrays, obp = load_obd()
>>> arrays["action"].shape, arrays["action_dist_matrix"].shape, obp["ground_truth"]
((10000,), (80, 3), 0.0042)
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np
from ..ope import from_obp


def load_obd() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The bundled arrays (a dict of numpy arrays) and obp's record (estimates, ground truth, relative errors)."""
    root = resources.files("receval.data") / "obd"
    with (root / "obd_all.npz").open("rb") as fh:
        z = np.load(fh)
        arrays = {k: z[k] for k in z.files}
    doc = json.loads((root / "obd_all.json").read_text(encoding="utf-8"))
    return arrays, doc


def obd_inputs(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """``(log, target, rewards)`` for :func:`receval.ope.evaluate`: the random log, the
    Bernoulli-TS policy (its action distribution in every round) and obp's reward model."""
    n = len(arrays["action"])
    dist = np.broadcast_to(arrays["action_dist_matrix"], (n, *arrays["action_dist_matrix"].shape))
    bf = {k: arrays[k] for k in ("action", "position", "reward", "pscore")}
    log, target, rewards = from_obp(bf, dist, arrays["q_hat_rows"][arrays["q_hat_index"]])
    assert rewards is not None
    return log, target, rewards


__all__ = ["load_obd", "obd_inputs"]
