r"""Plain-text rendering of the LaTeX/reST formulas in metric docstrings (for ``receval explain``).

The docstrings keep the exact LaTeX (the generated docs render it); a terminal gets readable
Unicode instead: fractions as ``a/b`` (parenthesised when a part is not one term), sums as ``Σ_{i=1..k}``, Greek letters, relations.

>>> to_text(r":math:`AP@k = \frac{1}{D} \sum_{i=1}^{k} P@i \cdot w_i`")
'AP@k = 1/D Σ_{i=1..k} P@i · w_i'
>>> to_text(r":math:`\frac{|R \cap L|}{\min(k, |R|)}`, :math:`\frac{1}{\log_2(i+1)}`")
'(|R ∩ L|)/min(k, |R|), 1/log_2(i+1)'
>>> to_text(r"``ideal=cut``: :math:`\min(k,|R|)` items, :math:`\alpha \le 1`")
'ideal=cut: min(k,|R|) items, α ≤ 1'
"""

from __future__ import annotations

import re

_SYMBOLS = {
    r"\cdot": "·", r"\times": "×", r"\le": "≤", r"\ge": "≥", r"\leq": "≤", r"\geq": "≥", r"\ne": "≠",
    r"\in": "∈", r"\notin": "∉", r"\cup": "∪", r"\cap": "∩", r"\bigcup": "∪", r"\infty": "∞",
    r"\mid": "|", r"\exists": "∃", r"\nexists": "∄", r"\Longrightarrow": "⟹", r"\dots": "…", r"\ldots": "…",
    r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\tau": "τ", r"\rho": "ρ", r"\varphi": "φ",
    r"\phi": "φ", r"\ell": "ℓ", r"\hat": "", r"\log": "log", r"\ln": "ln", r"\min": "min",
    r"\max": "max", r"\mathcal": "", r"\mathrm": "", r"\mathbb": "", r"\text": "", r"\operatorname": "",
    r"\left": "", r"\right": "", r"\bigl": "", r"\bigr": "", r"\Bigl": "", r"\Bigr": "",
    r"\big": "", r"\Big": "", r"\sim": "~",
    r"\qquad": "    ", r"\quad": "  ", r"\;": " ", r"\,": " ", r"\!": "", r"\|": "|", r"\{": "{", r"\}": "}",
    r"\tfrac": r"\frac", r"\dfrac": r"\frac",
}


_WRAPPERS = {r"\mathcal", r"\mathrm", r"\mathbb", r"\text", r"\operatorname", r"\hat", r"\mathbf", r"\textrm"}


def _group(text: str, i: int) -> tuple[str, int]:
    """The balanced {...} group starting at text[i] == '{' (or a single character)."""
    if i >= len(text):
        return "", i
    if text[i] != "{":
        return text[i], i + 1
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j], j + 1
    return text[i + 1 :], len(text)


def _latex(text: str) -> str:
    for cmd in sorted(_SYMBOLS, key=len, reverse=True):
        if _SYMBOLS[cmd].startswith("\\"):
            text = text.replace(cmd, _SYMBOLS[cmd])
    out = []
    i = 0
    while i < len(text):
        if text.startswith(r"\frac", i):
            num, j = _group(text, _skip(text, i + 5))
            den, j = _group(text, _skip(text, j))
            out.append(f"{_atom(_latex(num))}/{_atom(_latex(den))}")
            i = j
            if i < len(text) and text[i] not in " ,.;:)}]^_":
                out.append(" ")
        elif text.startswith(r"\binom", i):
            top, j = _group(text, _skip(text, i + 6))
            bot, j = _group(text, _skip(text, j))
            out.append(f"C({_latex(top)}, {_latex(bot)})")
            i = j
        elif text.startswith(r"\sum", i) or text.startswith(r"\prod", i):
            sym = "Σ" if text.startswith(r"\sum", i) else "Π"
            j = i + (4 if sym == "Σ" else 5)
            lo = hi = ""
            for _ in range(2):
                if j < len(text) and text[j] == "_":
                    lo, j = _group(text, j + 1)
                elif j < len(text) and text[j] == "^":
                    hi, j = _group(text, j + 1)
            rng = _latex(lo) + (f"..{_latex(hi)}" if hi else "")
            out.append(f"{sym}_{{{rng}}}" if rng else sym)
            i = j
        elif text.startswith(r"\sqrt", i):
            arg, j = _group(text, _skip(text, i + 5))
            out.append(f"√({_latex(arg)})")
            i = j
        elif text[i] == "\\":
            m = re.match(r"\\[A-Za-z]+|\\.", text[i:])
            cmd = m.group(0) if m else "\\"
            i += len(cmd)
            if cmd in _WRAPPERS:  # \mathrm{Nov} -> Nov, \mathcal P -> P
                arg, i = _group(text, _skip(text, i))
                out.append(_latex(arg))
            else:
                out.append(_SYMBOLS.get(cmd, cmd.lstrip("\\")))
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _atom(text: str) -> str:
    """A fraction's part, parenthesised only when it is not one term: ``1/D``, ``(a+b)/2``."""
    text = text.strip()
    if re.fullmatch(r"[\w@.|'{}]+", text):  # a symbol, a number, |R|
        return text
    call = re.fullmatch(r"(?:min|max|log|ln|exp|cnt|log_\w+)(\(.*\))", text)  # a function call: min(k, |R|), log_2(i+1)
    if call and _balanced(call.group(1)):
        return text
    return f"({text})"


def _balanced(text: str) -> bool:
    """True when ``text`` is one parenthesised group: ``(a)(b)`` is not."""
    depth = 0
    for n, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0 and n < len(text) - 1:
            return False
    return depth == 0


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] == " ":
        i += 1
    return i


def to_text(doc: str) -> str:
    """reST + LaTeX → plain text: math roles and directives rendered, literals unquoted."""
    doc = re.sub(r"\.\. math::\s*", "", doc)
    doc = re.sub(r":math:`([^`]*)`", lambda m: _latex(m.group(1)), doc)
    doc = doc.replace("``", "")
    doc = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\1", doc)  # reST *emphasis*
    lines = []
    for line in doc.splitlines():
        lines.append(_latex(line) if "\\" in line else line)
    return "\n".join(lines)


class Documented:
    """A registered thing documented by one function's docstring: ``doc`` (the docstring,
    dedented) and ``summary`` (its first line, else the thing's ``name``). A subclass says
    which function with :meth:`documented`."""

    name: str

    def documented(self) -> object:
        raise NotImplementedError

    @property
    def doc(self) -> str:
        import inspect

        return inspect.getdoc(self.documented()) or ""

    @property
    def summary(self) -> str:
        return self.doc.splitlines()[0] if self.doc else self.name
