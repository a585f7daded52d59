"""The group metrics (reo, rsp, mad, bias_disparity) declare partial/combine: their sufficient
statistics over disjoint batches of users, asked of the metric itself, combine to the
single-batch value (bit for bit for the count ratios; to 1e-12 for mad's float sums). The
engines' batches for every metric, popreo and poprsp with combined options among them:
test_backends.py."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from receval import evaluate
from receval.engine import SideInputs, encode_inputs, form
from receval.io import Columns
from receval.resolve import resolve

from test_backends import make_data

def _cols(frame, names):
    return {k: frame[v].to_numpy() for k, v in names.items() if v in frame.columns}


@pytest.mark.parametrize("spec", ["reo@5", "rsp@5", "rsp@10", "mad@5", "mad(of=score)@3",
                                  "bias_disparity(icat=a,ugroup=x)@5", "bias_disparity(of=br,icat=c)@10",
                                  "bias_disparity(of=bs,icat=b,ugroup=y)@3"])
def test_group_metrics_partial_combine(spec):
    recs, truth, _, train, _ = make_data()
    rng = np.random.default_rng(3)
    items = np.arange(40)
    item_groups = {"item_id": items.tolist(), "group": rng.choice(["a", "b", "c"], size=40).tolist()}
    users = np.unique(truth["user_id"].to_numpy())
    user_groups = {"user_id": users.tolist(), "group": rng.choice(["x", "y"], size=len(users)).tolist()}
    r = resolve(spec, overrides={"ties": "input"})  # coarse scores: ties straddle k (refused under ties=average)
    m = r.metric
    side = SideInputs(None, train, None, Columns(), item_groups=item_groups, user_groups=user_groups)
    opts = dict(r.build_key())
    rc = {"user": recs["user_id"].to_numpy(), "item": recs["item_id"].to_numpy()}
    tc = {"user": truth["user_id"].to_numpy()}

    def hits_of(mask_r, mask_t):
        enc = encode_inputs(recs.filter(pl.Series(mask_r)), truth.filter(pl.Series(mask_t)), Columns(), exact=True)
        return form(enc, opts, m.needs, side)

    ks = [r.k]
    whole = m.compute(hits_of(np.ones(len(rc["user"]), bool), np.ones(len(tc["user"]), bool)), ks, r.options)
    parts = []
    for b in range(3):
        sel_r, sel_t = (rc["user"] // 3) % 3 == b, (tc["user"] // 3) % 3 == b
        parts.append(m.partial(hits_of(sel_r, sel_t), ks, r.options))
    combined = m.combine(parts, ks, r.options)
    if spec.startswith("mad"):
        assert combined == pytest.approx(whole, abs=1e-12)
    else:
        assert combined.tolist() == whole.tolist()
    assert evaluate(recs, truth, [spec], train=train, item_groups=item_groups, user_groups=user_groups, ties="input")[spec] == whole[0]
