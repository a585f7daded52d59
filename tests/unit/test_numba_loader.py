"""receval._numba, the one loader of the numba kernels (kernels.py and metrics.aspects use it):
where the cache goes, when the cold-compile lines are printed, and that a module is loaded once.
No kernel is compiled here: the loader is exercised on a plain receval module."""

from __future__ import annotations

import pytest

from receval import _numba


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(_numba, "_loaded", {})
    return _numba


def test_cache_dir_beside_the_package_or_under_the_user_cache(monkeypatch, tmp_path):
    assert _numba.cache_dir().name == "__pycache__" or _numba.cache_dir().parts[-2:] == ("receval", "numba")
    monkeypatch.setattr(_numba.os, "access", lambda *a, **kw: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _numba.cache_dir() == tmp_path / "receval" / "numba"


def test_cold_load_says_so_once_and_keeps_the_module(fresh, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))  # empty: nothing cached yet
    warmed = []
    mod = fresh.load("plaintext", "test kernels", warmed.append, expect="1-2 s")
    err = capsys.readouterr().err
    assert f"receval: compiling the test kernels (once per install, 1-2 s; cached in {tmp_path})" in err
    assert "receval: test kernels compiled in" in err
    assert warmed == [mod] and mod.__name__ == "receval.plaintext"
    assert fresh.load("plaintext", "test kernels", warmed.append) is mod  # kept: no second warm-up
    assert warmed == [mod] and capsys.readouterr().err == ""


def test_a_cached_module_loads_quietly(fresh, monkeypatch, tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "plaintext.f-1.py311.nbi").write_bytes(b"")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    fresh.load("plaintext", "test kernels")
    assert capsys.readouterr().err == ""


def test_the_user_cache_dir_is_set_when_the_package_is_read_only(fresh, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(_numba.os, "access", lambda *a, **kw: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fresh.load("plaintext", "test kernels")
    assert _numba.os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "receval" / "numba")
    assert (tmp_path / "receval" / "numba").is_dir()
    assert "compiling the test kernels" in capsys.readouterr().err
    monkeypatch.delenv("NUMBA_CACHE_DIR")


def test_no_jit_switches_the_kernels_off(monkeypatch):
    monkeypatch.setenv("RECEVAL_NO_JIT", "1")
    assert not _numba.enabled()
    monkeypatch.setenv("RECEVAL_NO_JIT", "0")
    assert _numba.enabled() == (__import__("importlib.util").util.find_spec("numba") is not None)
