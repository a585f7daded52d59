"""Metric families; importing this package registers every metric. Lookup by name:
:func:`get_metric`, :func:`all_metrics`."""

from ..errors import SpecError, unknown
from ..registry import Metric, alias_hint, registered
from . import (
    auc,  # noqa: F401
    beyond,  # noqa: F401
    fairness,  # noqa: F401
    ir,  # noqa: F401
    listquality,  # noqa: F401
    popularity,  # noqa: F401
    ranking,  # noqa: F401
    rating,  # noqa: F401
    serendipity,  # noqa: F401
)


def get_metric(name: str) -> Metric:
    """The metric registered as ``name``; an unknown name fails with a did-you-mean message."""
    key = name.strip().lower()
    reg = registered()
    if key not in reg:  # written with other underscores (hit_rate, r_precision): receval's own metric
        key = {n.replace("_", ""): n for n in reg}.get(key.replace("_", ""), key)
    if key not in reg:
        hint = alias_hint(name)  # 'ap': the alias AP, or receval's map (not 'pap')
        if hint is not None:
            raise SpecError(f"unknown metric '{name.strip()}'; {hint}")
        raise unknown("metric", key, reg)
    return reg[key]


def all_metrics() -> list[Metric]:
    """Every registered metric, by name."""
    reg = registered()
    return [reg[n] for n in sorted(reg)]


__all__ = ["get_metric", "all_metrics"]
