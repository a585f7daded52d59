"""Imports between receval's own modules sit at module level, where a reader and a tool see
the graph (issue 32). An import of a receval module inside a function stays only with a
trailing ``# lazy: <reason>`` comment, the reason one of

- ``cycle``: a module-level import would close an import cycle;
- ``chain``: it would lift the longest import chain over ``test_layering.MAX_CHAIN``;
- ``cost: <what it loads>``: ``import receval`` or ``receval --version`` would load a heavy
  dependency (polars, pyarrow, numba, scipy, matplotlib, pyspark, rich; numpy) or measurably
  more modules;
- ``optional: <why>``: the code runs on without the module (an ImportError is caught).

``import receval`` and ``receval --version`` load none of the heavy dependencies (checked in
a fresh interpreter below; their times are printed, not asserted).
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import time
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "receval"

#: modules whose in-function imports are converted in a later pass (empty: every module is
#: converted; a module under heavy concurrent work may be listed here for a while)
PENDING: set[str] = set()

#: modules converted although a pattern of ``PENDING`` covers them
CONVERTED: set[str] = set()

#: what a ``# lazy:`` comment may give as its reason
REASONS = ("cycle", "chain", "cost:", "optional:")

#: what ``import receval`` and ``receval --version`` must not load
HEAVY = ("polars", "pyarrow", "numba", "scipy", "matplotlib", "pyspark", "rich", "numpy")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or "receval"


def _matches(name: str, patterns: set[str]) -> bool:
    return any(name == p or (p.endswith(".*") and name.startswith(p[:-1])) for p in patterns)


def _pending(name: str) -> bool:
    return _matches(name, PENDING) and not _matches(name, CONVERTED)


def _internal(node: ast.Import | ast.ImportFrom) -> bool:
    """An import of a receval module (relative, ``from receval... import``, ``import receval...``)."""
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or node.module == "receval" or (node.module or "").startswith("receval.")
    return any(a.name == "receval" or a.name.startswith("receval.") for a in node.names)


def _comments(text: str) -> dict[int, str]:
    """Line number -> the comment on that line."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string
    return out


def _lazy_reason(comments: dict[int, str], node: ast.stmt) -> str | None:
    """The reason of the ``# lazy:`` comment on the statement's lines, or None."""
    for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
        comment = comments.get(line, "")
        if "# lazy:" in comment:
            return comment.split("# lazy:", 1)[1].split("#", 1)[0].strip()
    return None


def unmarked_imports(path: Path, label: str | None = None) -> list[str]:
    """``file:line: statement`` for every import of a receval module inside a function of the
    file at ``path`` without a ``# lazy: <reason>`` comment of a known kind."""
    text = path.read_text(encoding="utf-8")
    comments = _comments(text)
    lines = text.splitlines()
    out: list[str] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function and _internal(child):
                reason = _lazy_reason(comments, child)
                if reason is None or not reason.startswith(REASONS):
                    why = "" if reason is None else f" (reason {reason!r} is none of {', '.join(REASONS)})"
                    out.append(f"{label or path}:{child.lineno}: {lines[child.lineno - 1].strip()}{why}")
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(text), False)
    return out


def _sources() -> dict[str, Path]:
    return {_module_name(p, SRC): p for p in sorted(SRC.rglob("*.py")) if "runners" not in p.relative_to(SRC).parts}


def test_imports_of_receval_modules_are_at_module_level_or_say_why_not():
    found = [f for name, p in _sources().items() if not _pending(name)
             for f in unmarked_imports(p, f"src/receval/{p.relative_to(SRC)}")]
    assert not found, ("imports of receval modules inside functions: move them to the top of the module, or "
                       "end the line with '# lazy: cycle | chain | cost: <what it loads> | optional: <why>'\n"
                       + "\n".join(found))


def test_every_pending_module_exists():
    # a renamed or removed module leaves the list (so that it only shrinks)
    names = set(_sources())
    for p in PENDING | CONVERTED:
        assert p in names or (p.endswith(".*") and any(n.startswith(p[:-1]) for n in names)), p
    # every module is read by the check
    assert not any(_pending(n) for n in names)


def test_the_check_flags_an_unmarked_import_in_a_function(tmp_path):
    bad = tmp_path / "mod.py"
    bad.write_text(
        "from .errors import SpecError\n"              # module level: fine
        "import numpy\n"
        "def f():\n"
        "    import json\n"                              # not a receval module: fine
        "    from .spec import parse_spec\n"             # 5: flagged
        "    from receval.metrics import get_metric\n"   # 6: flagged
        "    import receval.audit\n"                     # 7: flagged
        "    from . import api  # lazy: because\n"       # 8: flagged (no known reason)
        "    from .engine import (form,\n"
        "                         plan)  # lazy: cost: numpy, polars\n"  # a reason on the last line: fine
        "    from .io import read_frame  # lazy: cycle\n"
        "    class C:\n"
        "        def g(self):\n"
        "            from ..x import y\n"                # 14: flagged, nested
        "    return lambda: 1\n",
        encoding="utf-8")
    found = unmarked_imports(bad, "mod.py")
    assert [f.split(":")[1] for f in found] == ["5", "6", "7", "8", "14"], found
    assert "mod.py:5: from .spec import parse_spec" in found[0]
    assert "because" in found[3]


def _fresh(code: str) -> tuple[list[str], float]:
    """Run ``code`` in a fresh interpreter with this checkout's src first on the path: the
    heavy modules it loaded, and the best wall time of three runs (seconds)."""
    env_code = (f"import sys\nsys.path.insert(0, {str(SRC.parent)!r})\n{code}\n"
                f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    best, out = float("inf"), ""
    for _ in range(3):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, check=True).stdout
        best = min(best, time.perf_counter() - t)
    return ast.literal_eval(out.splitlines()[-1]), best


def test_import_receval_and_version_load_no_heavy_dependency():
    # Measured when the imports were moved (2026-11-29, 2 cores at load average 10-17, best of
    # 12 runs of a whole interpreter, before -> after): `import receval` 31 -> 28 ms (65 modules,
    # 3 of receval, both), `receval --version` 39 -> 47 ms (93 -> 94 modules: receval.plaintext,
    # ~1 ms in -X importtime), `python -c pass` 9 -> 13 ms (the noise). Printed here, never
    # asserted: the machine's load decides them.
    loaded, t_import = _fresh("import receval")
    assert loaded == [], f"import receval loads {loaded}"
    loaded, t_version = _fresh("import contextlib, io; from receval.cli import main\n"
                               "with contextlib.redirect_stdout(io.StringIO()): main(['--version'])")
    assert loaded == [], f"receval --version loads {loaded}"
    _, t_bare = _fresh("pass")
    print(f"\npython -c pass {t_bare * 1000:.0f} ms; import receval {t_import * 1000:.0f} ms; "
          f"receval --version {t_version * 1000:.0f} ms (best of 3)")
