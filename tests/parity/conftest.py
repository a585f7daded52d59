"""Parity fixtures: generated datasets and cached runs of the real peer libraries.

Each peer runner (src/receval/adapters/runners/<lib>.py, shipped with the package) runs once
per dataset kind, as a subprocess in its virtual environment (runners.json beside the runners
names the env, see :mod:`receval.adapters`; `receval peers build` builds
the envs under ${RECEVAL_PEER_ENVS:-$HOME/.cache/receval-peers}). A peer whose env is absent
is skipped, never failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import write  # noqa: E402

from receval.adapters import RUNNERS_DIR, env_root, runner_envs  # noqa: E402  (the adapters' catalogue)

#: runner -> its peer env, as receval.adapters reads it (runners/runners.json beside the runners)
RUNNERS = runner_envs()
SEED = int(os.environ.get("RECEVAL_PARITY_SEED", "20210927"))


def env_python(runner: str) -> Path:
    """The interpreter of the peer env that runs ``runner`` (it may be absent)."""
    return env_root() / RUNNERS[runner] / "bin" / "python"


def absent(runner: str) -> str:
    """The skip message for a runner whose peer env is not built: the command that builds it."""
    return f"peer env '{RUNNERS[runner]}' for {runner} is absent ({env_python(runner)}); build it with `receval peers build {RUNNERS[runner]}`"


@pytest.fixture(scope="session")
def parity_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("parity")


_DATA: dict[str, Path] = {}
_RUNS: dict[tuple[str, str], dict] = {}


@pytest.fixture(scope="session")
def dataset(parity_dir):
    """dataset(kind) -> the folder holding recs.parquet, truth.parquet, params.json."""

    def get(kind: str) -> Path:
        if kind not in _DATA:
            _DATA[kind] = write(parity_dir / kind, seed=SEED, kind=kind)
        return _DATA[kind]

    return get


@pytest.fixture(scope="session")
def peer_run(dataset, parity_dir):
    """peer_run(runner, kind) -> the runner's output JSON (run once, cached); skips if no env."""

    def get(runner: str, kind: str) -> dict:
        py = env_python(runner)
        if not py.exists():
            pytest.skip(absent(runner))
        key = (runner, kind)
        if key not in _RUNS:
            out = parity_dir / kind / f"{runner}.json"
            proc = subprocess.run(
                [str(py), str(RUNNERS_DIR / f"{runner}.py"), str(dataset(kind)), str(out)],
                capture_output=True, text=True, timeout=900,
            )
            if proc.returncode != 0:
                _RUNS[key] = {"error": proc.stderr[-3000:]}
            else:
                _RUNS[key] = json.loads(out.read_text())
        doc = _RUNS[key]
        if "error" in doc:
            pytest.fail(f"runner {runner} failed on '{kind}':\n{doc['error']}")
        return doc

    return get
