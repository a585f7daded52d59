"""Metric families; importing this package registers every metric."""

from . import ranking  # noqa: F401
from . import rating  # noqa: F401
from . import auc  # noqa: F401
from . import beyond  # noqa: F401
