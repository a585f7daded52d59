"""The invariance harness (tests/contracts/test_invariance.py) across the two paths: every unit
whose specs the compiled kernels form (receval.kernels) is evaluated with the kernels forced on
(``MIN_ROWS`` 0) on its inputs with string ids (the kernels' inputs), and compared with the
numpy path on the original inputs: the same values (1e-12), signatures and refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import invariance_data as D
import test_invariance as TI
from receval import kernels as K

pytest.importorskip("numba")


def _takes(unit: TI.Unit) -> bool:
    """Whether the kernels form every spec of the unit (the others run the numpy path on both sides)."""
    from receval.engine import plan

    try:
        rs = plan(list(unit.specs), unit.dialect_arg)
    except Exception:  # noqa: BLE001 - a unit the plan refuses is not the kernels' concern
        return False
    return all(K.formable(dict(r.build_key()), r.metric.needs_for(r.options)) for r in rs)


UNITS = [u for u in TI.STANDARD_UNITS + TI.VARIANT_UNITS + TI.DIALECT_UNITS if _takes(u)]


def kernel_path(unit: TI.Unit, case: D.Case, seed: int, tmp: Path, base: dict) -> dict:
    """The unit on ``case`` with its ids renamed to strings, the kernels forced on."""
    kind = "monotone_str" if unit.monotone else "str"
    renamed = D.rename(case, *D.id_maps(case, seed, kind), D.category_map(case, seed, monotone=unit.monotone))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(K, "MIN_ROWS", 0)
        return TI.memory(unit, renamed, expect=base)


def test_kernel_units_exist():
    assert len(UNITS) >= 10  # the top-k family under the standard dialect and the dialects that rank by score


@pytest.mark.parametrize("unit", UNITS, ids=str)
def test_invariance_kernel_path(unit: TI.Unit, tmp_path: Path):
    @TI._settings(3)
    @given(data=st.data())
    def run(data):
        case = data.draw(unit.strategy(), label="case")
        seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
        base = TI.base_of(unit, case)
        problems = TI._diff(base, kernel_path(unit, case, seed, tmp_path, base), "kernels forced on, string ids")
        assert not problems, "\n".join(problems) + "\n--- reproducer ---\n" + case.describe()

    run()
