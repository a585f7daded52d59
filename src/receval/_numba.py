"""The one loader of receval's numba kernels (:mod:`receval._jit`, :mod:`receval._jit_aspects`).

Both kernel modules are imported lazily, on the first large input: ``import receval`` and small
inputs never load numba. numba caches the compiled kernels in :func:`cache_dir` (beside this
package when its folder is writable, else under the user's cache directory, through
``NUMBA_CACHE_DIR``); when no cache file of a module is there yet, one line on stderr says the
kernels are being compiled (once per install) and another how long it took.

This module imports only the standard library (it sits under :mod:`receval.kernels` and
:mod:`receval.metrics.aspects`, which import it at module level).
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_loaded: dict[str, Any] = {}


def enabled() -> bool:
    """Whether compiled kernels may run: ``RECEVAL_NO_JIT`` unset (or 0) and numba installed."""
    if os.environ.get("RECEVAL_NO_JIT", "0") not in ("", "0"):
        return False
    from importlib.util import find_spec

    return find_spec("numba") is not None


def cache_dir() -> Path:
    """Where numba caches the kernels: ``receval/__pycache__`` when that folder (or, before it
    exists, the package folder) is writable, else ``$XDG_CACHE_HOME/receval/numba``
    (``~/.cache/receval/numba``)."""
    here = Path(__file__).parent
    pycache = here / "__pycache__"
    if os.access(pycache if pycache.exists() else here, os.W_OK):
        return pycache
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "receval" / "numba"


def load(module_name: str, what: str, warm: Callable[[Any], object] | None = None, *,
         expect: str = "10-30 s") -> Any:
    """The kernel module ``receval.<module_name>``, imported (and compiled, the first time on
    this install) on first use, then kept.

    ``warm(module)`` compiles (or loads from the cache) every signature on tiny inputs, so that
    the wait is paid at once, under the message. ``what`` names the kernels in the stderr lines
    (``receval: compiling the <what> (once per install, <expect>; cached in <dir>)`` and
    ``receval: <what> compiled in <s> s``), printed only when no cache file (``<module>.*.nbi``)
    of the module is found. ``NUMBA_CACHE_DIR`` set by the user wins; else it is set to
    :func:`cache_dir` when that is not the package's own ``__pycache__`` (numba's default)."""
    if module_name in _loaded:
        return _loaded[module_name]
    where = cache_dir()
    if "NUMBA_CACHE_DIR" in os.environ:
        where = Path(os.environ["NUMBA_CACHE_DIR"])
    elif where.name != "__pycache__":
        where.mkdir(parents=True, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = str(where)
    cold = not any(where.rglob(f"{module_name}.*.nbi")) if where.exists() else True
    if cold:
        print(f"receval: compiling the {what} (once per install, {expect}; cached in {where})",
              file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    module = importlib.import_module(f"{__package__}.{module_name}")  # cost: numba (large inputs only)
    if warm is not None:
        warm(module)
    if cold:
        print(f"receval: {what} compiled in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    _loaded[module_name] = module
    return module
