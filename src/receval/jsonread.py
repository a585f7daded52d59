"""Bounded JSON reading: every JSON file receval reads (a published result, a comparison table,
conformance cases) goes through :func:`load_json`, which refuses in one line what Python's
reader would crash on or silently bend: nesting deeper than :data:`MAX_DEPTH`, integers beyond
:data:`MAX_INT_DIGITS` digits, and numbers beyond a float's range (``1e999``, read as infinity)
or written as ``NaN`` / ``Infinity``.

>>> load_json('{"a": [1, 2.5]}', "x.json")
{'a': [1, 2.5]}
>>> load_json("[" * 200 + "]" * 200, "x.json")
Traceback (most recent call last):
...
receval.errors.DataError: pass a JSON file nested at most 64 deep: x.json nests 200 deep
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .errors import DataError

#: the deepest nesting of arrays and objects read (receval's own files nest under 10 deep)
MAX_DEPTH = 64
#: the longest integer read (digits); a longer one is refused
MAX_INT_DIGITS = 30
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (brackets inside strings ignored).

    >>> json_depth('{"a": [[1]], "b": "[[[["}')
    3
    """
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub('""', text)):
        if m.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def load_json(text: str, where: str) -> Any:
    """``text`` parsed as JSON, or a one-line :class:`~receval.errors.DataError` naming
    ``where``: not JSON, nested deeper than :data:`MAX_DEPTH`, or a number out of range."""
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise DataError(f"pass a JSON file nested at most {MAX_DEPTH} deep: {where} nests {depth} deep")

    def number(s: str) -> float:
        v = float(s)
        if not math.isfinite(v):
            raise DataError(f"write numbers within a float's range (about 1.8e308): {where} holds {s[:40]!r}")
        return v

    def integer(s: str) -> int:
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise DataError(f"write integers of at most {MAX_INT_DIGITS} digits: {where} holds one of {len(s.lstrip('-'))} digits")
        return int(s)

    def constant(s: str) -> float:
        raise DataError(f"write a missing number as null, not {s}: {where} holds {s}")

    try:
        return json.loads(text, parse_float=number, parse_int=integer, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where} is not JSON ({exc.msg} at line {exc.lineno}); check that it was written completely") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise DataError(f"pass a JSON file nested at most {MAX_DEPTH} deep: {where} nests deeper") from None


__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "json_depth", "load_json"]
