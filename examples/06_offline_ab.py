"""An offline A/B test: the Open Bandit Dataset's Bernoulli-TS policy estimated from the random policy's log.

The Open Bandit paper's check (Saito et al., NeurIPS 2021 Datasets and Benchmarks): ZOZOTOWN ran
a uniform-random and a Bernoulli Thompson-sampling policy side by side, so the TS policy's click
rate estimated from the random policy's log (10,000 rounds of the small sample obp ships, 80 items,
3 positions) can be compared with the TS policy's own logged click rate (0.0042, the ground truth).
The TS policy's item probabilities and the reward model (a logistic regression, 3-fold
cross-fitted) are obp 0.4.1's, bundled with receval; the last two columns are what obp 0.4.1
estimated on the same arrays.
"""

from receval.data.obd import load_obd, obd_inputs
from receval.ope import evaluate

arrays, obp = load_obd()
log, target, rewards = obd_inputs(arrays)
truth = obp["ground_truth"]
ours = ["naive", "ips", "snips", "dm", "dr", "sndr", "switch_dr(tau=1)", "switch_dr(tau=10)"]
theirs = {"ips": "ipw", "snips": "snipw", "dm": "dm", "dr": "dr", "sndr": "sndr",
          "switch_dr(tau=1)": "switch-dr(tau=1)", "switch_dr(tau=10)": "switch-dr(tau=10)"}
res = evaluate(log, target, ours, rewards=rewards)

print(f"rounds {len(log['reward'])}, items {arrays['action_dist_matrix'].shape[0]}, positions "
      f"{arrays['action_dist_matrix'].shape[1]}; ground truth (TS policy's own click rate) {truth}")
print(f"{'estimator':18} {'estimate':>9} {'95% interval':>19} {'rel. error':>10} {'obp 0.4.1':>9} {'obp rel. error':>14}")
for name in ours:
    e = res.entry(name)
    interval = f"[{e.low:.5f}, {e.high:.5f}]"
    other = obp["estimates"].get(theirs.get(name, ""))
    obp_cols = f"{other:9.6f} {abs(other - truth) / truth:14.4f}" if other is not None else f"{'-':>9} {'-':>14}"
    print(f"{name:18} {e.value:9.6f} {interval:>19} {abs(e.value - truth) / truth:10.4f} {obp_cols}")
print("naive: the random policy's own click rate (no weighting), for comparison")
e = res.entry("ips")
print(f"ips diagnostics: ess {e.diagnostics['ess']:.0f} of {e.rounds} rounds, max weight {e.diagnostics['max_weight']:.2f}, "
      f"mean weight {e.diagnostics['mean_weight']:.4f}")
