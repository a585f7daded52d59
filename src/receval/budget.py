"""The memory budget of an evaluation: how many user batches keep one batch within it.

Asked by the in-memory path of :func:`receval.evaluate` (a large frame or file is evaluated in
user batches) and by the Polars backend (:mod:`receval.backends.polars`). The budget changes
how many batches the users are split into, never a value.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

from .errors import DataError
from .resolve import Resolved

#: working memory (bytes) one recommendation row of a batch takes at its peak (encode, sort,
#: the form and the formulas; the truth rows counted in), measured on the realistic shape
#: (string ids, rows shuffled) at 10M-100M rows
ROW_BYTES = 120
#: the smallest budget: below it a batch's fixed costs outweigh the memory saved
MIN_BUDGET = 512 << 20
#: the budget of an input read from files (nothing of it held in memory before the batches)
FILE_BUDGET = 1 << 30
#: the environment variable that sets the budget (bytes, or "1.5GB", "800MB")
BUDGET_ENV = "RECEVAL_MEMORY_BUDGET"
#: global metrics whose ``combine`` adds float sums (equal to the one-batch value to ~1e-15, not
#: bit for bit): an evaluation whose batches the budget chooses computes them in one batch
INEXACT_COMBINE = frozenset({"mad"})


def globals_without_partial(resolved: Sequence[Resolved]) -> list[str]:
    """The global metrics of ``resolved`` without a ``partial``/``combine`` pair: they run in one batch only."""
    return [r.key for r in resolved if not r.per_user and (r.metric.partial is None or r.metric.combine is None)]


def one_batch_only(resolved: Sequence[Resolved]) -> bool:
    """Whether an evaluation must run in one batch to give the one-batch values bit for bit: a
    global metric without ``partial``/``combine``, or one whose combine is not exact."""
    return bool(globals_without_partial(resolved)) or any(
        not r.per_user and r.metric.name in INEXACT_COMBINE for r in resolved)


def parse_bytes(text: str | int | float) -> int:
    """``"1.5GB"``, ``"800MB"``, ``"2G"`` or a number of bytes.

    >>> parse_bytes("1.5GB"), parse_bytes("800m"), parse_bytes(4096)
    (1610612736, 838860800, 4096)
    """
    if isinstance(text, (int, float)):
        return int(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)i?b?\s*", str(text).lower())
    if not m:
        raise DataError(f"{BUDGET_ENV} must be a size such as 2GB, 800MB or a number of bytes, got {text!r}")
    return int(float(m.group(1)) * (1 << (10 * " kmgt".index(m.group(2) or " "))))


def memory_budget(input_bytes: int = 0) -> int:
    """The working memory (bytes) one batch of users may take, beside the inputs.

    ``RECEVAL_MEMORY_BUDGET`` when set; else the size of the input frames held in memory (so
    that the peak stays near twice the inputs at any size; :data:`FILE_BUDGET` for inputs read
    from files), at least :data:`MIN_BUDGET` and at most a quarter of the memory available now. The budget changes how many batches the users
    are split into, never a value (every value is bit-identical for any number of batches), so
    no signature records it.
    """
    env = os.environ.get(BUDGET_ENV)
    if env:
        return max(1, parse_bytes(env))
    budget = max(MIN_BUDGET, int(input_bytes))
    avail = _available()
    return max(MIN_BUDGET, min(budget, avail // 4)) if avail else budget


def _available() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def batches_for(rows: int, budget: int) -> int:
    """How many user batches keep one batch of ``rows`` recommendation rows within ``budget``."""
    return max(1, math.ceil(rows * ROW_BYTES / max(1, budget)))


__all__ = ["ROW_BYTES", "MIN_BUDGET", "FILE_BUDGET", "BUDGET_ENV", "INEXACT_COMBINE", "globals_without_partial", "one_batch_only", "parse_bytes", "memory_budget", "batches_for"]
