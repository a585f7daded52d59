"""Every test renders as if no terminal width were set: a ``COLUMNS`` of the shell or of CI
would make the terminal tables narrower (:func:`receval.report.terminal_width`). The tests
of the narrow layouts set it themselves."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
