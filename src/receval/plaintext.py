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


_ITEM = re.compile(r"(?:[-*•]|\d+[.)])\s+")


def text_blocks(doc: str) -> list[tuple[str, list[str]]]:
    r"""A docstring's blocks as ``(kind, lines)``, in plain text (:func:`to_text`): ``"text"``
    a paragraph as one line (the source's hard line breaks inside it joined), ``"item"`` a list
    item as one line (its marker first), ``"formula"`` a ``.. math::`` block, one line per
    source line, ``"code"`` an indented or ``::`` literal block or doctest lines, as written.

    >>> text_blocks("A para\nwrapped here.\n\n- one\n  more\n- two\n\n.. math:: x = \\frac{1}{2}\n")
    [('text', ['A para wrapped here.']), ('item', ['- one more']), ('item', ['- two']), ('formula', ['x = 1/2'])]
    """
    out: list[tuple[str, list[str]]] = []
    lines = doc.splitlines()
    i, literal = 0, False
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        if line.lstrip().startswith(".. math::"):  # display math: the rest of the line, then its indented lines
            first = line.lstrip()[len(".. math::"):].strip()
            body, i = ([first] if first else []), i + 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                if lines[i].strip():
                    body.append(lines[i].strip())
                elif body:  # a blank line after the formula's lines ends it
                    break
                i += 1
            out.append(("formula", [" ".join(_latex(x).split()) for x in body]))
            continue
        if literal or line.lstrip().startswith(">>>") or (indent > 0 and not out) or \
                (indent > 0 and out and out[-1][0] not in ("item",)):  # code: as written, up to a blank line
            body = []
            while i < len(lines) and lines[i].strip():
                body.append(lines[i].rstrip())
                i += 1
            out.append(("code", body))
            literal = False
            continue
        kind = "item" if _ITEM.match(line.lstrip()) else "text"
        words = [line.strip()]
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith(".. math::") \
                and not (kind == "item" and _ITEM.match(lines[i].lstrip()) and
                         len(lines[i]) - len(lines[i].lstrip()) <= indent) \
                and not (kind == "text" and _ITEM.match(lines[i].lstrip())):
            words.append(lines[i].strip())
            i += 1
        joined = " ".join(words)
        literal = joined.endswith("::")
        if literal:
            joined = joined[:-1]
        out.append((kind, [" ".join(to_text(joined).split())]))
    return out


def reflow(doc: str, width: int | None, indent: str = "  ") -> str:
    """``doc`` (:func:`text_blocks`) in lines of at most ``width`` columns (None: a paragraph a
    line): paragraphs and list items re-flowed (a list item's later lines under its text),
    formulas and code as written (a formula longer than the width is not broken), blocks
    separated by a blank line, every line starting with ``indent``."""
    out: list[str] = []
    for kind, lines in text_blocks(doc):
        if out:
            out.append("")
        if kind in ("formula", "code"):
            out += [indent + ("  " if kind == "formula" else "") + x for x in lines]
            continue
        hang = indent + " " * (len(_ITEM.match(lines[0]).group(0)) if kind == "item" else 0)  # type: ignore[union-attr]
        out += fill(lines[0], width, indent, hang)
    return "\n".join(out)


def fill(text: str, width: int | None, indent: str = "", hang: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` columns, greedily filled (a line ends only where
    the next word does not fit), the first starting with ``indent``, the others with ``hang``
    (default: ``indent``); None: one line. A word longer than a line is broken.

    >>> fill("one two three four", 10, "  ", "    ")
    ['  one two', '    three', '    four']
    """
    import textwrap

    hang = indent if hang is None else hang
    if width is None:
        return [indent + text]
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang, break_on_hyphens=False) or [indent]
