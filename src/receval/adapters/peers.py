"""The peer envs: virtual environments of exactly pinned peer libraries (``receval peers build``).

Each env is one requirements file of this package, ``receval/adapters/envs/<name>.txt``: a
complete, exactly pinned closure, installed with ``pip install --no-deps`` (nothing outside the
file is ever resolved; torch is pinned to its local CPU wheel, never a CUDA build). Two comment
lines steer the build:

- ``# python: X.Y``: build the env with Python X.Y (``$RECEVAL_PEER_PYTHON_X_Y``, else
  ``pythonX.Y`` on PATH, else pyenv's ``X.Y.*``); without one such Python the env is skipped;
- ``# smoke: mod ...``: the modules an env must import to count as built.

Envs live in ``$RECEVAL_PEER_ENVS/<name>`` (default ``~/.cache/receval-peers``). An env is up
to date, and skipped, when ``<env>/.receval-req-hash`` holds sha256(requirements file +
``python=<version>\\n``) and its smoke imports succeed. The opt-in envs (:data:`OPT_IN`, big
downloads) are built only when named or listed in ``$RECEVAL_PEER_ENVS_EXTRA``. After a build,
every runner that ``runners/runners.json`` maps to the env runs once on a tiny fixture (a smoke
test that also warms numba's on-disk cache: ranx compiles its kernels on first use).

>>> "np1" in env_names()
True
>>> smoke_modules(requirements("np1"))
['rectools.metrics', 'pyarrow']
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from receval.adapters import RUNNERS_DIR, env_root, runner_envs
from receval.errors import RecevalError, SpecError

#: the folder of the envs' requirements files (``<name>.txt``)
ENVS_DIR = Path(__file__).resolve().parent / "envs"

#: envs built only when named or listed in ``$RECEVAL_PEER_ENVS_EXTRA`` (spark: a ~450 MB pyspark;
#: obp: ~1.6 GB with torch)
OPT_IN = ("spark", "obp")

#: the pip warning about absent local index folders: noise, left out of pip's stderr
_PIP_NOISE = "is ignored: it is neither a file nor a directory"

_VERSION = "import sys; print(sys.version.split()[0])"


def env_names() -> list[str]:
    """Every peer env: the requirements files of :data:`ENVS_DIR`, sorted."""
    return sorted(p.stem for p in ENVS_DIR.glob("*.txt"))


def requirements(name: str) -> Path:
    """The requirements file of env ``name``."""
    path = ENVS_DIR / f"{name}.txt"
    if not path.is_file():
        raise SpecError(f"name one of the peer envs {', '.join(env_names())}: there is no env '{name}' ({path})")
    return path


def default_names(extra: str | None = None) -> list[str]:
    """The envs built when none is named: every env but the opt-in ones not listed in ``extra``
    (comma or space separated; default ``$RECEVAL_PEER_ENVS_EXTRA``)."""
    wanted = set(re.split(r"[,\s]+", os.environ.get("RECEVAL_PEER_ENVS_EXTRA", "") if extra is None else extra))
    return [n for n in env_names() if n not in OPT_IN or n in wanted]


def _comment(req: Path, key: str) -> str | None:
    """The text of the first ``# key: ...`` line of a requirements file, or None."""
    for line in req.read_text(encoding="utf-8").splitlines():
        m = re.match(rf"^# {key}: *(.*)$", line)
        if m:
            return m.group(1).strip()
    return None


def smoke_modules(req: Path) -> list[str]:
    """The modules of the ``# smoke:`` line (none: nothing to import)."""
    return (_comment(req, "smoke") or "").split()


def python_of(req: Path) -> str | None:
    """The ``X.Y`` of the ``# python:`` line, or None (the default interpreter)."""
    return _comment(req, "python") or None


def requirements_hash(req: Path, version: str) -> str:
    """sha256 of the requirements file followed by ``python=<version>\\n`` (hex): what
    ``<env>/.receval-req-hash`` holds for an env built from ``req`` with that Python."""
    return hashlib.sha256(req.read_bytes() + f"python={version}\n".encode()).hexdigest()


def python_version(python: str | os.PathLike[str]) -> str | None:
    """The full version (``3.11.7``) of an interpreter, or None when it does not run."""
    try:
        out = subprocess.run([str(python), "-c", _VERSION], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def default_python() -> str:
    """The interpreter envs are built with: ``$RECEVAL_PEER_PYTHON``, else ``python3`` on PATH,
    else this one."""
    return os.environ.get("RECEVAL_PEER_PYTHON") or shutil.which("python3") or sys.executable


def find_python(want: str) -> str | None:
    """An interpreter of version ``want`` (``X.Y``): ``$RECEVAL_PEER_PYTHON_X_Y``, ``pythonX.Y``
    on PATH, then pyenv's ``X.Y.*`` (newest first); None when none runs as that version."""
    cands = [os.environ.get(f"RECEVAL_PEER_PYTHON_{want.replace('.', '_')}", ""), f"python{want}"]
    roots = []
    try:
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            roots.append(Path(out.stdout.strip()))
    except OSError:
        pass
    roots.append(Path.home() / ".pyenv")
    for root in roots:
        found = [p for p in (root / "versions").glob(f"{want}.*/bin/python{want}")]
        cands += [str(p) for p in sorted(found, key=lambda p: _version_key(p.parent.parent.name), reverse=True)]
    for cand in cands:
        if cand and (v := python_version(cand)) is not None and ".".join(v.split(".")[:2]) == want:
            return cand
    return None


def _version_key(text: str) -> list[tuple[int, str]]:
    """A sort key ordering ``3.13.10`` after ``3.13.9`` (as ``sort -V``)."""
    return [(int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"[.-]", text)]


def smoke(python: str | os.PathLike[str], req: Path, quiet: bool = False) -> bool:
    """Whether ``python`` imports the smoke modules of ``req``."""
    mods = smoke_modules(req)
    if not mods:
        return True
    code = ("import importlib, warnings\nwarnings.simplefilter('ignore')\n"
            f"for m in {mods!r}: importlib.import_module(m)")
    try:
        out = subprocess.run([str(python), "-c", code], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL if quiet else None, timeout=600)
    except OSError:
        return False
    return out.returncode == 0


#: the tiny fixture of the runner smoke run (the side inputs are those of the *_more runners)
_FIXTURE = """
import json, sys
import pandas as pd
d = sys.argv[1]
pd.DataFrame({"user_id": [1, 1, 1, 2, 2, 3], "item_id": [10, 11, 12, 10, 13, 14],
              "score": [.9, .8, .7, .5, .4, .3], "rank": [1, 2, 3, 1, 2, 1]}).to_parquet(f"{d}/recs.parquet")
pd.DataFrame({"user_id": [1, 1, 2, 4], "item_id": [11, 15, 13, 10],
              "rating": [5.0, 4.0, 3.0, 1.0]}).to_parquet(f"{d}/truth.parquet")
json.dump({"k": [1, 2, 5], "threshold": None}, open(f"{d}/params.json", "w"))
pd.DataFrame({"user_id": [1, 2, 2, 3, 5, 5], "item_id": [10, 11, 12, 10, 13, 16]}).to_parquet(f"{d}/train.parquet")
pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [10, 12, 13, 14], "score": [.9, .8, .7, .6],
              "rank": [1, 2, 1, 1]}).to_parquet(f"{d}/baseline.parquet")
pd.DataFrame({"item_id": [10, 11, 12, 13, 14, 15, 16],
              "category": ["a", "b", "a", "c", "b", "c", "a"]}).to_parquet(f"{d}/categories.parquet")
"""


def warm(name: str, python: str | os.PathLike[str], err: TextIO = sys.stderr) -> bool:
    """Run every runner of env ``name`` once on a tiny fixture; False (and the runner's last
    lines on ``err``) when one fails."""
    runners = [r for r, env in runner_envs().items() if env == name]
    if not runners:
        return True
    with tempfile.TemporaryDirectory(prefix=f"receval-warm-{name}-") as tmp:
        subprocess.run([str(python), "-", tmp], input=_FIXTURE, text=True, check=True, timeout=600)
        for r in runners:
            out = subprocess.run([str(python), str(RUNNERS_DIR / f"{r}.py"), tmp, f"{tmp}/{r}.json"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=3600)
            if out.returncode != 0:
                print(f"receval peers: runner {r} failed:", file=err)
                print("\n".join(out.stderr.strip().splitlines()[-5:]), file=err)
                return False
    return True


def _size(folder: Path) -> str:
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return f"{total / 1e6:.0f} MB"


def build(names: Sequence[str] = (), *, force: bool = False, warm_runners: bool = True, dry_run: bool = False,
          root: Path | None = None, python: str | None = None, out: TextIO = sys.stdout,
          err: TextIO = sys.stderr) -> int:
    """Build or update the peer envs ``names`` (none: :func:`default_names`) under ``root``
    (default :func:`~receval.adapters.env_root`) with ``python`` (default :func:`default_python`).
    An up-to-date env is skipped unless ``force``; ``dry_run`` says what it would build and builds
    nothing; ``warm_runners=False`` skips the runner smoke run. Returns 0, or 1 when an env failed."""
    todo = list(names) or default_names()
    reqs = {n: requirements(n) for n in todo}
    root = env_root() if root is None else root
    base = python or default_python()
    base_version = python_version(base)
    if base_version is None:
        raise SpecError(f"set RECEVAL_PEER_PYTHON to a Python 3.11 interpreter: {base} does not run")
    if not base_version.startswith("3.11."):
        print(f"receval peers: warning: pins were made for Python 3.11, got {base_version}", file=err)
    root.mkdir(parents=True, exist_ok=True)
    status = 0
    for n in todo:
        req, dest = reqs[n], root / n
        interp, version = base, base_version
        if (want := python_of(req)) is not None:
            found = find_python(want)
            if found is None:
                print(f"receval peers: warning: skipping {n}: it needs Python {want}, none found "
                      f"(set RECEVAL_PEER_PYTHON_{want.replace('.', '_')})", file=err)
                continue
            interp, version = found, python_version(found) or ""
        digest = requirements_hash(req, version)
        py = dest / "bin" / "python"
        stamp = dest / ".receval-req-hash"
        if (not force and os.access(py, os.X_OK) and stamp.is_file() and stamp.read_text().strip() == digest
                and smoke(py, req, quiet=True)):
            print(f"receval peers: {n} up to date ({dest})", file=out)
            continue
        if dry_run:
            print(f"receval peers: would build {n} in {dest} with Python {version} ({interp})", file=out)
            continue
        print(f"receval peers: building {n} in {dest}", file=out, flush=True)
        t0 = time.monotonic()
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run([interp, "-m", "venv", str(dest)], check=True)
        pip = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-input", "-q", "-r", str(req)],
                  stderr=subprocess.PIPE, text=True)
        noise = [line for line in (pip.stderr or "").splitlines() if _PIP_NOISE not in line]
        if noise:
            print("\n".join(noise), file=err)
        if pip.returncode != 0:
            print(f"receval peers: pip failed for {n}", file=err)
            status = 1
            continue
        if not smoke(py, req):
            print(f"receval peers: smoke imports failed for {n}", file=err)
            status = 1
            continue
        if warm_runners and not warm(n, py, err):
            print(f"receval peers: runner smoke run failed for {n}", file=err)
            status = 1
            continue
        stamp.write_text(digest + "\n")
        print(f"receval peers: built {n} in {time.monotonic() - t0:.0f} s, size {_size(dest)}", file=out)
    return status


def listing(root: Path | None = None) -> list[dict[str, Any]]:
    """Every peer env: name, opt-in, the Python it asks for, its folder, whether it is built
    (its interpreter exists) and the runners (adapters) it runs."""
    root = env_root() if root is None else root
    by_env: dict[str, list[str]] = {}
    for r, env in runner_envs().items():
        by_env.setdefault(env, []).append(r)
    return [{"name": n, "opt_in": n in OPT_IN, "python": python_of(requirements(n)), "path": str(root / n),
             "built": (root / n / "bin" / "python").exists(), "runners": sorted(by_env.get(n, []))}
            for n in env_names()]


def build_command(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """``receval peers build [ENV ...] [--force] [--print] [--no-warm] [--dry-run]`` and ``receval peers list``."""
    sub = p.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="build or update peer envs (skipped when up to date)",
                       description="Build or update the peer envs (pinned in receval/adapters/envs/<ENV>.txt) under "
                                   "$RECEVAL_PEER_ENVS (default ~/.cache/receval-peers). An env is skipped when its "
                                   "requirements hash is unchanged and its smoke imports succeed. Without ENV: every env "
                                   f"but the opt-in ones ({', '.join(OPT_IN)}) not listed in $RECEVAL_PEER_ENVS_EXTRA.")
    b.add_argument("envs", nargs="*", metavar="ENV", help=f"the envs to build (of {', '.join(env_names())})")
    b.add_argument("--force", action="store_true", help="rebuild even when the requirements hash is unchanged")
    b.add_argument("--print", action="store_true", help="print '<ENV> <its python>' for each env and exit")
    b.add_argument("--no-warm", action="store_true", help="skip the post-build runner smoke run")
    b.add_argument("--dry-run", action="store_true", help="say which envs are up to date and which would be built; build none")
    sub.add_parser("list", help="list the peer envs: opt-in, Python, built or not, the runners each runs",
                   description="List the peer envs: opt-in, Python, built or not, the runners each runs.")

    def run(a: argparse.Namespace) -> int:
        if a.action == "list":
            for e in listing():
                marks = ", ".join(x for x in ("opt-in" if e["opt_in"] else "", f"Python {e['python']}" if e["python"] else "") if x)
                print(f"{e['name']:<6} {'built' if e['built'] else 'absent':<6} {e['path']}"
                      f"{f' ({marks})' if marks else ''}: {', '.join(e['runners']) or 'no runner'}")
            return 0
        names = list(a.envs) or default_names()
        for n in names:
            requirements(n)
        if a.print:
            for n in names:
                print(f"{n} {env_root() / n / 'bin' / 'python'}")
            return 0
        return build(names, force=a.force, warm_runners=not a.no_warm, dry_run=a.dry_run)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m receval.adapters.peers build|list ...``: the ``receval peers`` command without
    the rest of the command line (standard library only: what ``.ci/peer-envs`` runs)."""
    parser = argparse.ArgumentParser(prog="receval peers", description="build or list the peer envs")
    run = build_command(parser)
    try:
        return run(parser.parse_args(argv))
    except RecevalError as exc:
        print(f"receval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["ENVS_DIR", "OPT_IN", "env_names", "requirements", "default_names", "smoke_modules", "python_of",
           "requirements_hash", "python_version", "default_python", "find_python", "smoke", "warm", "build",
           "listing", "build_command", "main"]
