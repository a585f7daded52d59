"""The conformance suite: small cases with their expected values, for any implementation.

- :mod:`receval.conformance.case`: :class:`Case` and what an implementation under audit is;
- :mod:`receval.conformance.generate`: the scenarios and the plans of the cases;
- :mod:`receval.conformance.arithmetic`: the hand-checked cases;
- :mod:`receval.conformance.suite`: the shipped suite (``suite.json``), :func:`cases`,
  :func:`export` (``receval conformance export DIR``).

:func:`receval.audit.audit` runs an implementation on the suite (docs/audit.md).
"""

from __future__ import annotations

from .case import BatchImplementation, Case, Implementation, Outcome
from .suite import cases, export

__all__ = ["Case", "Implementation", "BatchImplementation", "Outcome", "cases", "export"]
