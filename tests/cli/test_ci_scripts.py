"""The CI scripts pick the interpreter a user means (issue: the README's test command passes
wherever a user runs it): a venv named by PYTHON=, an activated venv, a venv's bin first on
PATH, or the machine's own Python; and every tool runs from that interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / ".ci"

pytestmark = pytest.mark.skipif(not (CI / "python").exists(), reason="no .ci folder (an installed copy of the tests)")


def _which(env: dict[str, str]) -> str:
    out = subprocess.run(["bash", str(CI / "python")], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("ci") / "venv"
    venv.EnvBuilder(with_pip=False).create(where)
    return where


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV")}
    return env


def test_a_venv_first_on_path(fresh_venv: Path) -> None:
    env = _base_env()
    env["PATH"] = f"{fresh_venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    got = _which(env)
    assert Path(got).parent.parent == fresh_venv or got.startswith(str(fresh_venv)), got


def test_an_activated_venv_wins_over_path(fresh_venv: Path) -> None:
    env = _base_env()
    env["VIRTUAL_ENV"] = str(fresh_venv)  # what `source venv/bin/activate` sets (PATH left as it was)
    assert _which(env).startswith(str(fresh_venv))


def test_a_venv_by_its_full_path(fresh_venv: Path) -> None:
    env = _base_env()
    env["PYTHON"] = str(fresh_venv / "bin" / "python")
    env["VIRTUAL_ENV"] = "/nonexistent"
    assert _which(env).startswith(str(fresh_venv))


def test_the_machine_python_without_a_venv() -> None:
    env = _base_env()
    got = _which(env)
    probe = subprocess.run([got, "-c", "import sys; print(sys.prefix == sys.base_prefix or 'venv')"],
                           capture_output=True, text=True, check=True)
    assert probe.returncode == 0 and Path(got).exists()


def test_a_bad_python_is_refused_in_one_line(tmp_path: Path) -> None:
    env = _base_env()
    env["PYTHON"] = str(tmp_path / "nope" / "python")
    out = subprocess.run(["bash", str(CI / "python")], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "PYTHON=" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_every_tool_runs_from_the_chosen_interpreter() -> None:
    """No bare `ruff`, `mypy`, `mkdocs`, `pytest`, `pip` or `python` command: each is `$py -m ...`,
    so a venv used by its full path never borrows another environment's tools."""
    for script in ("run", "wheel-check"):
        for line in (CI / script).read_text().splitlines():
            code = line.split("#", 1)[0].strip()
            if not code:
                continue
            assert not re.match(r"^(NO_MKDOCS_2_WARNING=1 )?(ruff|mypy|mkdocs|pytest|pip|python3?)\b", code), (script, line)


def test_the_wheel_check_installs_the_declared_dependencies() -> None:
    text = (CI / "wheel-check").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert "--system-site-packages" not in code and "--no-deps \"$wheel\"" not in code
    assert re.search(r'pip install -q "\$wheel"', code)
    assert "reproduce" in code and "--version" in code
    assert '"$bin/receval" peers build --help' in code  # the peer envs are built from the installed wheel too


def test_this_interpreter_is_what_ci_would_pick_here() -> None:
    """Under `bash .ci/run` the suite runs in the interpreter .ci/python chose."""
    if os.environ.get("CI_PYTHON_CHECK") != "1":
        pytest.skip("only meaningful when started by .ci/run (CI_PYTHON_CHECK=1)")
    assert os.path.realpath(_which(dict(os.environ))) == os.path.realpath(sys.executable)
