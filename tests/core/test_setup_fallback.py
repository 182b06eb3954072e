"""setup.py: a machine without a working C compiler gets a pure-Python
install instead of a failed one, unless TOKENPRISM_REQUIRE_COMPILED is set.

(The whole path was also checked by hand: ``CC=/bin/false pip install .``
in a fresh venv installs, and ``tokenprism --version`` says pure.)"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
import setuptools
from setuptools import Distribution, Extension
from setuptools.command.build_ext import build_ext

SETUP = Path(__file__).resolve().parents[2] / "setup.py"


@pytest.fixture
def command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("TOKENPRISM_PURE", "1")  # no mypyc run while reading setup.py
    monkeypatch.delenv("TOKENPRISM_REQUIRE_COMPILED", raising=False)
    monkeypatch.setattr(setuptools, "setup", lambda **kw: None)
    ns = runpy.run_path(str(SETUP))
    cls = ns["OptionalBuildExt"]
    # the fallback removes compiled files under ROOT: a scratch tree here,
    # never this checkout's own build (run_path returns a copy of the
    # module's globals: the functions read the dict they were made in)
    monkeypatch.setitem(cls.run.__globals__, "ROOT", tmp_path)
    assert issubclass(cls, build_ext)
    ext = Extension("tokenprism__mypyc", ["missing.c"])
    dist = Distribution({"name": "x", "ext_modules": [ext]})
    cmd = cls(dist)
    cmd.extensions = [ext]
    stale = tmp_path / "tokenprism__mypyc.so"
    stale.write_bytes(b"half built")
    monkeypatch.setattr(cls, "get_outputs", lambda self: [str(stale), str(tmp_path / "never.so")])
    cmd.stale = stale
    cmd.ns = cls.run.__globals__
    return cmd


def _compiler_fails(self: Any) -> None:
    from distutils.errors import CompileError

    raise CompileError("command '/bin/false' failed with exit code 1")


def test_compiler_failure_gives_a_pure_install(command: Any, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(build_ext, "run", _compiler_fails)
    command.run()
    assert command.extensions == [] and command.distribution.ext_modules == []
    assert not command.stale.exists()  # nothing half-built is installed
    err = capsys.readouterr().err
    assert "installing pure Python" in err and "/bin/false" in err and "TOKENPRISM_REQUIRE_COMPILED" in err


@pytest.mark.parametrize("error", ["OSError", "DistutilsPlatformError", "DistutilsExecError"])
def test_each_compiler_error_kind_falls_back(error: str, command: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import distutils.errors

    exc = OSError("no cc") if error == "OSError" else getattr(distutils.errors, error)("no cc")

    def fail(self: Any) -> None:
        raise exc

    monkeypatch.setattr(build_ext, "run", fail)
    command.run()
    assert command.extensions == []


def test_required_compiled_build_fails_loudly(command: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from distutils.errors import CompileError

    monkeypatch.setenv("TOKENPRISM_REQUIRE_COMPILED", "1")
    monkeypatch.setattr(build_ext, "run", _compiler_fails)
    with pytest.raises(CompileError):
        command.run()
    assert command.extensions != []


def test_other_errors_are_not_swallowed(command: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(self: Any) -> None:
        raise ValueError("a bug in the build, not a missing compiler")

    monkeypatch.setattr(build_ext, "run", bug)
    with pytest.raises(ValueError):
        command.run()


def test_a_fallback_removes_an_earlier_builds_files_beside_the_sources(command: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # an editable install copies the compiled shims next to the sources;
    # left there after a failed rebuild, they would run instead of the
    # (newer) sources
    root: Path = command.ns["ROOT"]
    files = [root / "tokenprism__mypyc.cpython-311-x86_64-linux-gnu.so",
             root / "core" / "spans.cpython-311-x86_64-linux-gnu.so",
             root / "plugins" / "bpe" / "bpe.cpython-311-x86_64-linux-gnu.so"]
    kept = [root / "core" / "spans.py", root / "core" / "other.cpython-311-x86_64-linux-gnu.so"]
    for f in files + kept:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"x")
    assert sorted(command.ns["stale_in_tree"](root)) == sorted(files)
    monkeypatch.setattr(build_ext, "run", _compiler_fails)
    command.run()
    assert [f.exists() for f in files] == [False, False, False]
    assert all(f.exists() for f in kept)
