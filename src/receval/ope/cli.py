"""``receval ope LOG TARGET... -e ips -e snips [--rewards FILE]``: the command's arguments and runner."""

from __future__ import annotations

import argparse
from pathlib import Path


def build_command(p: argparse.ArgumentParser):
    p.add_argument("log", help="the log: CSV or Parquet with context_id, item_id, reward, propensity, optional position")
    p.add_argument("target", nargs="+", help="target policies: context_id, item_id and propensity (or rank / score); "
                   "several are compared on the same rounds, each named by its file name")
    p.add_argument("-e", "--estimator", action="append", required=True, help="an estimator, e.g. ips or 'ips(cap=10)' (repeatable)")
    p.add_argument("--rewards", metavar="FILE", help="a reward model (context_id, item_id, [position], estimate) for dm, dr, switch_dr, sndr")
    from ..report import command_formats

    p.add_argument("--format", choices=command_formats("ope"), default="table")
    p.add_argument("--ci", choices=("normal", "bootstrap", "none"), default="normal")
    p.add_argument("--level", type=float, default=0.95)
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slate-size", type=int)
    p.add_argument("--batches", type=int, help="align and estimate the log in this many batches of contexts "
                   "(default: one per million rows); the values do not depend on it")
    g = p.add_argument_group("column names")
    for name, default in (("context", "context_id"), ("item", "item_id"), ("reward", "reward"), ("propensity", "propensity"),
                          ("position", "position"), ("rank", "rank"), ("score", "score"), ("estimate", "estimate")):
        g.add_argument(f"--{name}-col", default=default)

    def run(a: argparse.Namespace) -> int:
        from . import evaluate

        from ..errors import DataError

        if len(a.target) == 1:
            target: object = a.target[0]
        else:
            names = [Path(t).stem for t in a.target]
            if len(set(names)) < len(names):
                raise DataError("give the target files different names: they name the targets in the output")
            target = dict(zip(names, a.target))
        res = evaluate(a.log, target, a.estimator, a.rewards, ci=a.ci, level=a.level, resamples=a.resamples, seed=a.seed,
                       slate_size=a.slate_size, context_col=a.context_col, item_col=a.item_col, reward_col=a.reward_col,
                       propensity_col=a.propensity_col, position_col=a.position_col, rank_col=a.rank_col,
                       score_col=a.score_col, estimate_col=a.estimate_col, batches=a.batches)
        print(res.render(a.format), end="")
        return 0

    return run
