"""receval: offline evaluation of recommender systems in which every number is exactly
defined, says how it was defined (a signature), and can be computed the way another
library computes it (a dialect)."""

from __future__ import annotations

__version__ = "0.1.0"

from .api import evaluate  # noqa: E402
from .errors import DataError, RecevalError, SpecError  # noqa: E402
from .results import Results  # noqa: E402
from .sampled import sampled_evaluate  # noqa: E402
from .signature import parse_signature  # noqa: E402
from .spec import Spec, parse_spec  # noqa: E402

__all__ = [
    "__version__",
    "evaluate",
    "sampled_evaluate",
    "Results",
    "Spec",
    "parse_spec",
    "parse_signature",
    "RecevalError",
    "SpecError",
    "DataError",
]
