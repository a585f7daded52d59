"""The tiers of tests/conftest.py name tests that exist: a test renamed or merged into another
file keeps its tier only if its name is updated there too (CONTRIBUTING.md, "Tests in tiers")."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("tiers_conftest", TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


def _test_names() -> tuple[set[str], set[str]]:
    files, names = set(), set()
    for path in TESTS.rglob("test_*.py"):
        files.add(path.name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return files, names


def stale(files: set[str], names: set[str], *, sweep_files, sweep_tests, slow_tests) -> list[str]:
    """Each tier entry that names no test file or test function, as the fix."""
    out = [f"SWEEP_FILES names {f}, which is not a test file: give the file's new name" for f in sorted(set(sweep_files) - files)]
    out += [f"SWEEP_TESTS names {n}, which no test defines: give the test's new name" for n in sorted(set(sweep_tests) - names)]
    out += [f"SLOW_TESTS names {n}, which no test defines: give the test's new name"
            for n in sorted({t.split("[")[0] for t in slow_tests} - names)]  # a case id names its test before "["
    return out


def test_every_tier_entry_names_an_existing_test():
    files, names = _test_names()
    got = stale(files, names, sweep_files=conftest.SWEEP_FILES, sweep_tests=conftest.SWEEP_TESTS, slow_tests=conftest.SLOW_TESTS)
    assert not got, "\n".join(got)


def test_a_renamed_test_is_named_with_its_tier():
    # the check can fail: an entry left behind by a rename is told, with the tier it sits in
    got = stale({"test_auc.py"}, {"test_match_oracle"}, sweep_files={"test_auc_at_k.py"}, sweep_tests={"test_match_oracle"},
                slow_tests={"test_old_name"})
    assert got == ["SWEEP_FILES names test_auc_at_k.py, which is not a test file: give the file's new name",
                   "SLOW_TESTS names test_old_name, which no test defines: give the test's new name"]
