"""The shared types of the adapters: a library's metric, and an adapter read by receval metric."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from receval._mapping import DictView
from receval.errors import RecevalError

if TYPE_CHECKING:
    from receval.conformance.case import BatchImplementation


@dataclass(frozen=True)
class PeerMetric:
    """One metric of a library, as its runner emits it.

    ``name`` is the runner's name without ``@k``; ``metric`` the receval metric it is audited
    against; ``cut`` says the runner emits ``name@k`` (the metric takes a cut-off), ``whole``
    that it emits ``name`` (no cut-off: the whole list); ``spec`` is the receval spec (``{k}``:
    the cut-off) that the parity tests found equal to it under the adapter's ``dialect`` (None:
    not compared); ``means_only``: the library gives only the mean.
    """

    name: str
    metric: str
    spec: str | None = None
    cut: bool = True
    whole: bool = False
    means_only: bool = False
    note: str = ""


class ByMetric(DictView[str, "BatchImplementation"]):
    """An adapter read as ``{receval metric name: implementation}`` (what ``receval audit`` picks
    from by ``--metric``): each receval metric maps to the library's first metric of that name in
    :meth:`implementations` (its plain one, e.g. RecTools ``MAP`` for ``map``, not
    ``MAP(divide_by_k=True)``)."""

    #: the library's metrics and its name (``called``: the name in messages, default ``library``)
    metrics: tuple[PeerMetric, ...]
    library: str
    called: str | None = None

    def metric(self, name: str) -> PeerMetric:
        """The library's metric ``name`` (refused, naming those it has, when it has none)."""
        for m in self.metrics:
            if m.name == name:
                return m
        raise RecevalError(f"{self.called or self.library} has no metric '{name}': it has {', '.join(m.name for m in self.metrics)}")

    def implementations(self) -> dict[str, tuple[str, BatchImplementation]]:
        raise NotImplementedError

    def by_metric(self) -> dict[str, BatchImplementation]:
        out: dict[str, BatchImplementation] = {}
        for _peer, (metric, impl) in self.implementations().items():
            out.setdefault(metric, impl)
        return out

    def _items(self) -> dict[str, BatchImplementation]:
        return self.by_metric()
