"""A stand-in for ``torch`` in the LensKit peer env (receval/adapters/envs/lk.txt), which has no torch.

LensKit 2026.x needs Python >= 3.12.5, and the only CPU torch on this machine is a wheel for
Python 3.11 (PyPI's Linux torch is a CUDA build of several GB). ``lenskit.data`` imports torch at
module level, for type annotations and tensor conversions; the list metrics receval is compared
with (src/receval/adapters/runners/lenskit.py) work on numpy arrays and never call into torch.

Every attribute of this module is an inert class: it can be named in annotations and unions,
used as a decorator or called (returning itself), and ``isinstance(x, torch.Tensor)`` is False,
as is ``torch.is_tensor(x)``. A code path that really needed torch would compute nothing sensible
and fail loudly further on (the runner's outputs are then compared with receval, which catches it).
Installed by the runner only when ``import torch`` fails.
"""
from __future__ import annotations

import sys
import types


class _Inert(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _inert(name)

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a bare decorator
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __getitem__(cls, item):
        return cls


def _inert(name: str) -> type:
    return _Inert(name, (), {})


def install() -> None:
    """Register the stand-in as ``torch`` in ``sys.modules``."""
    mod = types.ModuleType("torch", "stand-in: see src/receval/adapters/runners/_torch_stub.py")
    mod.__version__ = "0+stub"  # type: ignore[attr-defined]
    mod.is_tensor = lambda x: False  # type: ignore[attr-defined]

    def _getattr(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _inert(name)

    mod.__getattr__ = _getattr  # type: ignore[method-assign]
    sys.modules["torch"] = mod
