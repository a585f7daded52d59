"""receval: offline evaluation of recommender systems in which every number is exactly
defined, says how it was defined (a signature), and can be computed the way another
library computes it (a dialect).

``import receval`` is cheap: the names below are loaded on first use (PEP 562), so neither
polars nor numpy is imported until something is evaluated or parsed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__  # the one place the version is written
from .errors import DataError, RecevalError, RecevalNote, RecevalWarning, SpecError  # noqa: E402  (light: the standard library only)

#: public name -> the module that defines it (imported on first access)
_LAZY = {
    "evaluate": "api",
    "Results": "results",
    "parse_signature": "signature",
    "sampled_evaluate": "sampled",
    "Spec": "spec",
    "parse_spec": "spec",
    "verify": "verification",
}

if TYPE_CHECKING:  # pragma: no cover
    from .api import evaluate
    from .results import Results
    from .sampled import sampled_evaluate
    from .verification import verify
    from .signature import parse_signature
    from .spec import Spec, parse_spec


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'receval' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    "evaluate",
    "sampled_evaluate",
    "Results",
    "Spec",
    "parse_spec",
    "parse_signature",
    "verify",
    "RecevalError",
    "SpecError",
    "DataError",
    "RecevalWarning",
    "RecevalNote",
]
