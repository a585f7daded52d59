"""The kernels' path against the numpy path under hypothesis: small random inputs with coarse,
tied (and signed-zero) scores, short, long, UUID-like and mixed-length string ids (look-alikes
that differ only after their 12th byte), every id sharing a hash or a few bits of it, users in parts of a few rows; the same values (1e-12), counts, info and refusals
for every tie rule the kernels take."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import receval
from receval import kernels as K

pytest.importorskip("numba")

from test_kernels import SPECS, same  # noqa: E402  (tests/contracts is importable: tests/conftest.py)

SCORES = [0.0, -0.0, 0.5, 1.0, 2.0, -1.0, 0.25]

#: how ids are spelled: short (inline in their Arrow views), long (in the data buffers; 22 bytes
#: in common, so look-alikes differ only after the 12 bytes a view holds), UUID-like (36 bytes),
#: and mixed lengths around the 12-byte boundary (11-14 bytes sharing their first 10)
LENGTHS = [
    lambda p, k: f"{p}{k}",
    lambda p, k: f"a-long-{p}-id-prefix-xx{k}",
    lambda p, k: f"{k:08x}-0000-4000-8000-{'0' * 11}{p}",
    lambda p, k: p + str(k).zfill(10 + k % 4),
]


@st.composite
def inputs(draw):
    n_users = draw(st.integers(1, 6))
    uid, iid = draw(st.sampled_from(LENGTHS)), draw(st.sampled_from(LENGTHS))
    ru, ri, sc, tu, ti, ra = [], [], [], [], [], []
    for u in range(n_users):
        items = draw(st.lists(st.integers(0, 12), min_size=0, max_size=8, unique=True))
        ru += [uid("u", u)] * len(items)
        ri += [iid("i", i) for i in items]
        sc += [draw(st.sampled_from(SCORES)) for _ in items]
        truth = draw(st.lists(st.integers(0, 12), min_size=0, max_size=5, unique=True))
        tu += [uid("u", u)] * len(truth)
        ti += [iid("i", i) for i in truth]
        ra += [float(draw(st.integers(0, 5))) for _ in truth]
    if not tu:
        tu, ti, ra = [uid("u", 0)], [iid("i", 0)], [1.0]
    recs = pl.DataFrame({"user_id": ru, "item_id": ri, "score": sc}, schema={"user_id": pl.String, "item_id": pl.String,
                                                                           "score": pl.Float64})
    truth = pl.DataFrame({"user_id": tu, "item_id": ti, "rating": ra})
    perm = draw(st.permutations(range(recs.height))) if recs.height else []
    return recs[list(perm)] if recs.height else recs, truth


def run(recs, truth, kw, jit: bool, mask: int, part_rows: int):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(K, "MIN_ROWS", 0 if jit else 10**15)
        mp.setattr(K, "HASH_MASK", np.uint64(mask))
        mp.setattr(K, "PART_ROWS", part_rows)
        try:
            return receval.evaluate(recs, truth, SPECS, **kw)
        except receval.errors.RecevalError as exc:
            return f"{type(exc).__name__}: {exc}"


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=inputs(), ties=st.sampled_from(["input", "average", "optimistic"]),
       rel=st.sampled_from([None, 3, "all"]), mask=st.sampled_from([2**64 - 1, 3, 0]), part_rows=st.integers(1, 40))
def test_kernels_equal_numpy_path_on_random_inputs(data, ties, rel, mask, part_rows):
    recs, truth = data
    kw = {"ties": ties} if rel is None else {"ties": ties, "rel": rel}
    want = run(recs, truth, kw, False, mask, part_rows)
    got = run(recs, truth, kw, True, mask, part_rows)
    if isinstance(want, str) or isinstance(got, str):
        assert want == got
    else:
        same(want, got)
