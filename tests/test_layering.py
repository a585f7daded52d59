"""The import graph holds the declared layering (README, Architecture): every import of a
receval module by a receval module, at module level or inside a function, goes to a lower
layer or to the same layer without a cycle, and no module imports a private name from
another folder. A new module must be given a layer here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "receval"

#: lowest first; a module may import from its own layer (without a cycle) and any layer below
LAYERS: list[tuple[str, list[str]]] = [
    ("grammar", ["errors", "options", "plaintext"]),
    ("registry and io", ["registry", "io", "outputs", "metrics._exact", "trec", "data.movielens"]),
    ("the form", ["encode", "side", "lists", "hits", "policy"]),
    ("formulas", ["metrics.*", "metrics"]),
    ("specs and dialects", ["spec", "resolve", "dialects", "signature"]),
    ("results", ["results", "comparison"]),
    ("engine", ["engine"]),
    ("backends and facade", ["backends", "backends.*", "api", "stats", "runs", "fingerprint"]),
    ("applications", ["compare", "report", "tables", "figures", "data", "data.*", "models", "models.*", "reproduce", "study",
                      "docs", "examples", "sampled", "cli", "receval", "verification"]),
]


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts) or "receval"] = p
    return out


def _layer(name: str) -> int:
    for i, (_, pats) in enumerate(LAYERS):
        for pat in pats:
            if name == pat or (pat.endswith(".*") and name.startswith(pat[:-1])):
                return i
    raise AssertionError(f"module receval.{name} has no declared layer: add it to LAYERS in tests/test_layering.py")


def _imports(mods: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    for m, p in mods.items():
        pkg = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
        if m == "receval":
            pkg = []
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg[: len(pkg) - (node.level - 1)] + ([node.module] if node.module else [])
                    base_name = ".".join(base) or "receval"
                elif (node.module or "").startswith("receval"):
                    base_name = node.module[len("receval."):] if node.module != "receval" else "receval"
                else:
                    continue
                for a in node.names:
                    full = f"{base_name}.{a.name}" if base_name != "receval" else a.name
                    if full in mods:
                        edges[m].add(full)
                    elif base_name in mods:
                        edges[m].add(base_name)
                        folder = lambda x: x.rsplit(".", 1)[0] if "." in x else ""  # noqa: E731
                        if a.name.startswith("_") and not a.name.startswith("__") and folder(base_name) != folder(m):
                            private.append(f"receval.{m} imports receval.{base_name}.{a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("receval.") and a.name[len("receval."):] in mods:
                        edges[m].add(a.name[len("receval."):])
        edges[m].discard(m)
        edges[m].discard("receval")
    return edges, private


def test_every_import_goes_down_or_sideways_without_a_cycle():
    mods = _modules()
    edges, private = _imports(mods)
    assert not private, private
    upward = [f"receval.{a} ({LAYERS[_layer(a)][0]}) imports receval.{b} ({LAYERS[_layer(b)][0]})"
              for a, bs in edges.items() for b in bs if a != "receval" and _layer(b) > _layer(a)]
    assert not upward, upward
    # no cycle (depth-first search)
    state: dict[str, int] = {}

    def visit(v: str, path: list[str]) -> None:
        state[v] = 1
        for w in edges[v]:
            if state.get(w) == 1:
                pytest.fail("import cycle: " + " -> ".join(path[path.index(w):] + [w]) if w in path else w)
            if w not in state:
                visit(w, path + [w])
        state[v] = 2

    for m in mods:
        if m not in state:
            visit(m, [m])


def test_a_wrong_import_is_caught(tmp_path, monkeypatch):
    # the check can fail: an engine module imported by the form is an upward edge
    mods = _modules()
    edges, _ = _imports(mods)
    edges["hits"].add("engine")
    assert any(_layer(b) > _layer("hits") for b in edges["hits"])


def test_no_metric_module_reads_inputs():
    # side inputs and baseline runs are read once by the form's floor (receval.side), never by a
    # metric module: no receval.metrics.* imports receval.io or receval.data (or a module in it)
    mods = _modules()
    edges, _ = _imports(mods)
    reading = [f"receval.{m} imports receval.{b}" for m, bs in edges.items() if m == "metrics" or m.startswith("metrics.")
               for b in bs if b in ("io", "data") or b.startswith("data.")]
    assert not reading, reading
