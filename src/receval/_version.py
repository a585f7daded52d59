"""The version of receval: the one place it is written (``pyproject.toml`` reads it from here
for the wheel; ``receval.__version__`` and ``receval --version`` import it)."""

__version__ = "0.2.0"
