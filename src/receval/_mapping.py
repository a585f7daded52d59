"""A read-only mapping over a dict that a method gives (computed on demand).

>>> class Squares(DictView[int, int]):
...     def _items(self) -> dict[int, int]:
...         return {i: i * i for i in range(3)}
>>> s = Squares()
>>> s[2], list(s), len(s), dict(s)
(4, [0, 1, 2], 3, {0: 0, 1: 1, 2: 4})
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class DictView(Mapping[K, V]):
    """A :class:`~collections.abc.Mapping` whose items are those of the dict :meth:`_items`
    returns, asked at each read (a subclass computes it, or keeps it once computed)."""

    def _items(self) -> dict[K, V]:
        raise NotImplementedError

    def __getitem__(self, key: K) -> V:
        return self._items()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())
