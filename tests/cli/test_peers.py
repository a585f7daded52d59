"""`receval peers`: the peer envs built from the pins shipped in the package (issue 32).

The build logic is checked with a fake requirements file and a fake interpreter (a shell script
that logs its calls, answers the version probe, "creates" a venv by copying itself and "installs"
by doing nothing): no network, no real env is touched.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
from pathlib import Path

import pytest

from receval import adapters
from receval.adapters import peers
from receval.cli import main
from receval.errors import RecevalError

ROOT = Path(__file__).resolve().parents[2]

FAKE = """#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
if [ "$1" = "-c" ]; then
  case "$2" in *sys.version*) echo "{version}"; exit 0 ;; esac
  [ -n "${{FAKE_SMOKE_FAILS:-}}" ] && exit 1
  exit 0
fi
if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0; fi
if [ "$1 $2" = "-m pip" ]; then exit 0; fi
exit 3
"""


def _fake_python(where: Path, version: str = "3.11.7") -> Path:
    where.mkdir(parents=True, exist_ok=True)
    py = where / "python"
    py.write_text(FAKE.format(version=version))
    py.chmod(0o755)
    return py


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A pins folder with one env 'fake' (smoke: json), a fake interpreter and an env root."""
    envs = tmp_path / "envs"
    envs.mkdir()
    (envs / "fake.txt").write_text("# receval peer env 'fake'\n# smoke: json csv\nsomething==1.0\n")
    monkeypatch.setattr(peers, "ENVS_DIR", envs)
    log = tmp_path / "calls.log"
    log.write_text("")
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.delenv("FAKE_SMOKE_FAILS", raising=False)
    return {"envs": envs, "req": envs / "fake.txt", "py": _fake_python(tmp_path / "base"), "root": tmp_path / "root",
            "log": log}


def _build(f, *names, **kw) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = peers.build(list(names) or ["fake"], root=f["root"], python=str(f["py"]), out=out, err=err, **kw)
    return code, out.getvalue(), err.getvalue()


def _pip_calls(f) -> list[str]:
    return [line for line in f["log"].read_text().splitlines() if line.startswith("-m pip")]


def test_the_hash_is_the_one_the_shell_script_wrote(tmp_path):
    # `(cat "$req"; echo "python=$pyver") | sha256sum`: envs built by the old .ci/peer-envs stay up to date
    for req in sorted(peers.ENVS_DIR.glob("*.txt")):
        shell = subprocess.run(["bash", "-c", f'(cat "{req}"; echo "python=3.11.7") | sha256sum | cut -d" " -f1'],
                               capture_output=True, text=True, check=True).stdout.strip()
        assert peers.requirements_hash(req, "3.11.7") == shell, req.name
    odd = tmp_path / "no-newline.txt"
    odd.write_bytes(b"a==1")
    assert peers.requirements_hash(odd, "3.13.0") == hashlib.sha256(b"a==1python=3.13.0\n").hexdigest()


def test_build_then_skip_then_rebuild_on_a_change(fake):
    code, out, _ = _build(fake)
    assert code == 0 and "building fake" in out and "built fake" in out
    (pip,) = _pip_calls(fake)
    assert "--no-deps" in pip and pip.endswith(f"-r {fake['req']}")
    stamp = fake["root"] / "fake" / ".receval-req-hash"
    assert stamp.read_text().strip() == peers.requirements_hash(fake["req"], "3.11.7")
    # unchanged: skipped (the smoke imports still run)
    code, out, _ = _build(fake)
    assert code == 0 and "fake up to date" in out and len(_pip_calls(fake)) == 1
    # --force rebuilds
    _build(fake, force=True)
    assert len(_pip_calls(fake)) == 2
    # a changed pin: a dry run says it would build and builds nothing; a build rebuilds
    fake["req"].write_text(fake["req"].read_text() + "other==2.0\n")
    code, out, _ = _build(fake, dry_run=True)
    assert "would build fake" in out and len(_pip_calls(fake)) == 2
    _build(fake)
    assert len(_pip_calls(fake)) == 3
    assert stamp.read_text().strip() == peers.requirements_hash(fake["req"], "3.11.7")


def test_failing_smoke_imports_mean_not_up_to_date(fake, monkeypatch):
    _build(fake)
    monkeypatch.setenv("FAKE_SMOKE_FAILS", "1")
    code, out, err = _build(fake)
    assert code == 1 and "building fake" in out and "smoke imports failed for fake" in err
    assert len(_pip_calls(fake)) == 2


def test_a_python_line_picks_the_interpreter_or_skips(fake, tmp_path, monkeypatch):
    fake["req"].write_text("# python: 3.97\n# smoke: json\nx==1\n")
    monkeypatch.delenv("RECEVAL_PEER_PYTHON_3_97", raising=False)
    code, out, err = _build(fake)
    assert code == 0 and "skipping fake: it needs Python 3.97" in err and "RECEVAL_PEER_PYTHON_3_97" in err
    assert not _pip_calls(fake)
    other = _fake_python(tmp_path / "py397", "3.97.2")
    monkeypatch.setenv("RECEVAL_PEER_PYTHON_3_97", str(other))
    code, out, _ = _build(fake)
    assert code == 0 and "built fake" in out
    assert (fake["root"] / "fake" / ".receval-req-hash").read_text().strip() == peers.requirements_hash(fake["req"], "3.97.2")


def test_an_unknown_env_is_one_line_starting_with_the_fix(fake):
    with pytest.raises(RecevalError) as err:
        _build(fake, "nope")
    assert str(err.value).startswith("name one of the peer envs fake: ") and "\n" not in str(err.value)


def test_opt_in_envs_only_when_named_or_listed(monkeypatch):
    monkeypatch.delenv("RECEVAL_PEER_ENVS_EXTRA", raising=False)
    assert peers.default_names() == [n for n in peers.env_names() if n not in peers.OPT_IN]
    assert "obp" in peers.default_names("obp") and "spark" in peers.default_names("spark, obp")
    assert set(peers.OPT_IN) <= set(peers.env_names())


def test_print_lists_the_envs(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("RECEVAL_PEER_ENVS", str(tmp_path))
    monkeypatch.delenv("RECEVAL_PEER_ENVS_EXTRA", raising=False)
    assert main(["peers", "build", "--print"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{n} {tmp_path / n / 'bin' / 'python'}" for n in ("lk", "np1", "np2")]
    monkeypatch.setenv("RECEVAL_PEER_ENVS_EXTRA", "obp")
    assert main(["peers", "build", "--print"]) == 0
    assert "obp" in [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert main(["peers", "build", "--print", "spark"]) == 0
    assert capsys.readouterr().out.split()[0] == "spark"


def test_help_and_list(capsys, monkeypatch, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["peers", "build", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert all(f in text for f in ("--force", "--print", "--no-warm", "--dry-run", "RECEVAL_PEER_ENVS_EXTRA"))
    monkeypatch.setenv("RECEVAL_PEER_ENVS", str(tmp_path))
    assert main(["peers", "list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == peers.env_names()
    assert "np1    absent" in out and "rectools" in out


def test_every_runner_and_adapter_env_has_its_pins_in_the_package():
    names = set(peers.env_names())
    assert set(adapters.runner_envs().values()) <= names
    assert {adapters.get(n).env for n in adapters.names() if n != "mllib"} <= names
    assert not (ROOT / "tests" / "parity" / "envs").exists()


def test_the_shell_script_is_a_thin_call(tmp_path):
    script = ROOT / ".ci" / "peer-envs"
    if not script.exists():
        pytest.skip("no .ci folder (an installed copy of the tests)")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RECEVAL_PEER_ENVS": str(tmp_path / "envs"),
           "PYTHON": __import__("sys").executable}
    out = subprocess.run(["bash", str(script), "--print", "np1"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"np1 {tmp_path / 'envs' / 'np1' / 'bin' / 'python'}\n"
    assert "receval.adapters.peers build" in script.read_text()
