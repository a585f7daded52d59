"""The import graph holds the declared layering (README, Architecture): every import of a
receval module by a receval module, at module level or inside a function, goes to a lower
layer or to the same layer without a cycle, and no module imports a private name from
another folder; a metric family never imports another family (what families share lives in
the shared rooms ``metrics._*``). A new module must be given a layer here."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


SRC = Path(__file__).resolve().parents[2] / "src" / "receval"

#: lowest first; a module may import from its own layer (without a cycle) and any layer below
LAYERS: list[tuple[str, list[str]]] = [
    ("grammar", ["_version", "_mapping", "errors", "options", "plaintext", "jsonread"]),
    ("registry and io", ["reduction", "registry", "partfiles", "io", "outputs", "metrics._exact", "trec", "data.movielens"]),
    ("the form", ["encode", "side", "lists", "hits", "policy", "fingerprint", "_numba", "_jit", "_jit_aspects", "kernels"]),
    ("shared rooms of the metric families", ["metrics._ties", "metrics._common"]),
    ("formulas", ["metrics.*", "metrics"]),
    # the slow references the conformance suite is built from: no formula of receval (see
    # test_the_references_read_no_formula), so they sit just above the registry they ask
    ("independent references", ["conformance.reference", "conformance.reference.*"]),
    ("specs and dialects", ["spec", "resolve", "dialects", "signature"]),
    ("rendering", ["report"]),
    ("results", ["results", "comparison", "tables", "resampling"]),
    ("engine", ["budget", "inputs", "engine"]),
    ("backends and facade", ["types", "backends", "backends.*", "api", "stats", "runs"]),
    ("applications", ["ope", "ope.*", "compare", "figures", "data", "data.*", "models", "models.*", "reproduce", "study",
                      "docs", "explaining", "examples", "sampled", "cli", "__main__", "arguments", "receval", "verification",
                      "conformance", "conformance.*", "audit", "segments", "page", "adapters", "adapters.*"]),
    # (conformance.* holds conformance.build, the suite's builder; adapters.* holds adapters.peers,
    # `receval peers build`)
]

#: public metric modules that register no metric: pure numpy kernels (a documented API) that the
#: families registering alpha-nDCG, ILD, novelty, ... call; a family may import them
METRIC_KERNELS = {"metrics.aspects", "metrics.diversity"}

#: names a metric family may import from another family: none (issue 21 moved the list space
#: into the form and the baseline's ranking into metrics._common)
FAMILY_IMPORT_EXCEPTIONS: set[tuple[str, str]] = set()


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
    raise AssertionError(f"module receval.{name} has no declared layer: add it to LAYERS in tests/unit/test_layering.py")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (every layering test reads them all)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _import_names(mods: dict[str, Path], typing_too: bool = True) -> list[tuple[str, str, str | None]]:
    """Every import of a receval module by a receval module, at module level, inside a
    function or under ``if TYPE_CHECKING:`` (an annotation's import is an edge of the graph a
    reader follows; ``typing_too=False`` leaves those out), including the package facade
    (``from . import __version__`` is an edge to ``receval``): (importer, imported module, the
    name imported from it, or None for the module)."""
    out: list[tuple[str, str, str | None]] = []
    for m, p in mods.items():
        pkg = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
        if m == "receval":
            pkg = []
        tree = _tree(p)
        typing_only = set() if typing_too else {
            id(n) for top in ast.walk(tree) if isinstance(top, ast.If) and _is_type_checking(top.test)
            for stmt in top.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:  # `if TYPE_CHECKING:` imports are for annotations, never run
                continue
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
                        out.append((m, full, None))
                    elif base_name in mods:
                        out.append((m, base_name, a.name))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("receval.") and a.name[len("receval."):] in mods:
                        out.append((m, a.name[len("receval."):], None))
    return out


def _imports(mods: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    folder = lambda x: x.rsplit(".", 1)[0] if "." in x else ""  # noqa: E731
    for m, target, name in _import_names(mods):
        edges[m].add(target)
        if name is not None and name.startswith("_") and not name.startswith("__") and folder(target) != folder(m):
            private.append(f"receval.{m} imports receval.{target}.{name}")
    for m in edges:
        edges[m].discard(m)
    return edges, private


def _public_metric_module(name: str) -> bool:
    """A metric family or kernel: ``metrics.X`` with X not starting with ``_``."""
    return name.startswith("metrics.") and not name.split(".")[1].startswith("_")


def _family_imports(imports: list[tuple[str, str, str | None]]) -> list[str]:
    """The imports of a metric family (or kernel) from another family, less the exceptions."""
    return [f"receval.{m} imports " + (f"receval.{t}.{n}" if n else f"receval.{t}")
            for m, t, n in imports
            if _public_metric_module(m) and _public_metric_module(t) and t != m and t not in METRIC_KERNELS
            and (t, n) not in FAMILY_IMPORT_EXCEPTIONS]


#: the longest chain of imports (in modules) the house may have (issue 32: 23 floors before)
MAX_CHAIN = 19


def _faults(edges: dict[str, set[str]]) -> list[str]:
    """What breaks the layering in an import graph: upward edges and a cycle."""
    out = [f"receval.{a} ({LAYERS[_layer(a)][0]}) imports receval.{b} ({LAYERS[_layer(b)][0]})"
           for a, bs in edges.items() for b in bs if a != "receval" and _layer(b) > _layer(a)]
    cycle = _cycle(edges)
    if cycle:
        out.append("import cycle: " + " -> ".join(cycle))
    return out


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        state[v] = 2
        stack.pop()
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def longest_chain(edges: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports (a list of modules, importer first) of an acyclic graph."""
    memo: dict[str, list[str]] = {}

    def chain(v: str) -> list[str]:
        if v not in memo:
            below = [chain(w) for w in sorted(edges.get(v, ()))]
            memo[v] = [v, *max(below, key=len, default=[])]
        return memo[v]

    return max((chain(m) for m in sorted(edges)), key=len, default=[])


def test_every_import_goes_down_or_sideways_without_a_cycle():
    mods = _modules()
    edges, private = _imports(mods)
    assert not private, private
    assert not _faults(edges), _faults(edges)


def test_the_tower_is_at_most_max_chain_modules_high():
    edges, _ = _imports(_modules())
    assert _cycle(edges) is None
    chain = longest_chain(edges)
    print(f"\nlongest import chain: {len(chain)} modules (at most {MAX_CHAIN}): " + " -> ".join(chain))
    assert len(chain) <= MAX_CHAIN, f"{len(chain)} modules: " + " -> ".join(chain)


def test_a_wrong_import_is_caught(tmp_path, monkeypatch):
    # the check can fail: an engine module imported by the form is an upward edge, the facade
    # imported by the engine is one too (edges to `receval` count), an annotation's import
    # under TYPE_CHECKING is read, and a cycle is named
    mods = _modules()
    edges, _ = _imports(mods)
    assert not _faults(edges)
    assert _faults({**edges, "hits": edges["hits"] | {"engine"}})
    # a reference that reads the engine is no reference
    assert _faults({**edges, "conformance.reference.ranking": {"engine"}})
    assert any("receval.engine" in f and "imports receval.receval" in f for f in _faults({**edges, "engine": edges["engine"] | {"receval"}}))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert longest_chain({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == ["a", "b", "c"]
    bad = tmp_path / "receval"
    bad.mkdir()
    (bad / "hits.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .engine import form\n")
    (bad / "engine.py").write_text("from . import __version__\n")
    (bad / "__init__.py").write_text("")
    fake = {"hits": bad / "hits.py", "engine": bad / "engine.py", "receval": bad / "__init__.py"}
    names = _import_names(fake)
    assert ("hits", "engine", "form") in names and ("engine", "receval", "__version__") in names


def test_a_metric_family_imports_no_other_family():
    mods = _modules()
    found = _family_imports(_import_names(mods))
    assert not found, found
    # every shared room is declared (so the layers keep it below the families), and a kernel
    # registers no metric
    rooms = {m for m in mods if m.startswith("metrics._")}
    declared = {p for _, pats in LAYERS for p in pats}
    assert rooms <= declared, sorted(rooms - declared)
    for k in METRIC_KERNELS:
        assert "register(" not in mods[k].read_text(encoding="utf-8"), f"receval.{k} registers a metric: it is a family"


def test_a_family_import_is_caught():
    # the check can fail: ir reaching into ranking's tie kernels, or fairness importing ndcg
    assert _family_imports([("metrics.ir", "metrics.ranking", "_slot_draws")])
    assert _family_imports([("metrics.fairness", "metrics.ranking", "ndcg")])
    assert _family_imports([("metrics.aspects", "metrics.ranking", None)])
    assert not _family_imports([("metrics.ir", "metrics._ties", "slot_draws"), ("metrics.beyond", "metrics.aspects", None)])


def test_no_metric_module_reads_inputs():
    # side inputs and baseline runs are read once by the form's floor (receval.side), never by a
    # metric module: no receval.metrics.* imports receval.io or receval.data (or a module in it)
    mods = _modules()
    edges, _ = _imports(mods)
    reading = [f"receval.{m} imports receval.{b}" for m, bs in edges.items() if m == "metrics" or m.startswith("metrics.")
               for b in bs if b in ("io", "data") or b.startswith("data.")]
    assert not reading, reading


def _reference_reads(imports: list[tuple[str, str, str | None]]) -> list[str]:
    """What the slow references import of receval outside themselves, less the registry's
    ``get_metric`` (which context options a metric reads): nothing else may be."""
    ref = lambda m: m == "conformance.reference" or m.startswith("conformance.reference.")  # noqa: E731
    return [f"receval.{m} imports receval.{t}" + (f".{n}" if n else "") for m, t, n in imports
            if ref(m) and not ref(t) and (t, n) != ("metrics", "get_metric")]


def test_the_references_read_no_formula():
    found = _reference_reads(_import_names(_modules()))
    assert not found, found
    # the check can fail
    assert _reference_reads([("conformance.reference.pop", "metrics.popularity", None)])
    assert _reference_reads([("conformance.reference.ranking", "metrics", "ndcg")])
