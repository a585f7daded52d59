"""Parity of the IR measures (rprecision, bpref, rbp) with trec_eval (pytrec_eval) and ranx.

Runners: src/receval/adapters/runners/pytrec_eval_ir.py and ranx_ir.py (graded qrels, so a relevance
level of 4 leaves ratings 1..3 as judged non-relevant), plus the Rprec that
src/receval/adapters/runners/pytrec_eval.py already emits. Compared exactly as tests/parity/test_parity.py
does (mean and per user, to 1e-9) with the same fixtures.
"""

from __future__ import annotations

import pytest

import test_parity as tp
from test_parity import DISTINCT, M

pytestmark = [pytest.mark.parity, pytest.mark.xdist_group("parity")]

REL4 = (("rel", 4.0),)

PEERS: dict[str, tuple[str, list[M]]] = {
    "pytrec_eval": ("trec_eval@0.5.11", [M("Rprec", "rprecision", DISTINCT)]),
    "pytrec_eval_ir": ("trec_eval@0.5.11", [
        M("Rprec", "rprecision", DISTINCT), M("bpref", "bpref", DISTINCT),
        # at level 4 some truth users have no relevant item; those without a run vanish in
        # pytrec_eval but are scored 0 by the dialect's empty=zero: per-user values only
        M("Rprec(l4)", "rprecision", DISTINCT, mean=False, overrides=REL4),
        M("bpref(l4)", "bpref", DISTINCT, mean=False, overrides=REL4),
    ]),
    "ranx_ir": ("ranx@0.3.21", [
        M("r-precision-l4", "rprecision", DISTINCT, overrides=REL4),
        # ranx divides by min(|R|, N) also when N = 0: those users are NaN (None), left out of
        # the per-user comparison, and the mean is NaN. Its multi-query run returned 0 for some
        # queries (see src/receval/adapters/runners/ranx_ir.py), so the runner also evaluates one query at a time.
        M("bpref-l4(per-query)", "bpref", DISTINCT, mean=False, overrides=REL4),
        *(M(f"rbp.{p}", f"rbp(persistence=0.{p})", DISTINCT) for p in ("5", "8", "95")),
        *(M(f"rbp.{p}-l1", f"rbp(persistence=0.{p},gain=rating)", DISTINCT) for p in ("5", "8", "95")),
        *(M(f"rbp.{p}-l4", f"rbp(persistence=0.{p},gain=rating)", DISTINCT, overrides=REL4) for p in ("5", "8", "95")),
    ]),
}


def _cases():
    for runner, (dialect, metrics) in PEERS.items():
        for m in metrics:
            for kind in m.kinds:
                yield pytest.param(runner, dialect, m, kind, None, id=f"{runner}-{kind}-{m.peer}")


@pytest.mark.parametrize("runner, dialect, m, kind, k", list(_cases()))
def test_parity_ir(runner, dialect, m, kind, k, peer_run, dataset):
    tp.test_parity(runner, dialect, m, kind, k, peer_run, dataset)
