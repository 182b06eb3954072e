"""What a fresh process imports on the cold paths: opening one model loads
only the plugin algorithm its file needs, and ``tokenprism --version``
neither numpy nor any plugin. Each case runs in its own interpreter, since
this one has long imported everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
ALGORITHMS = {"spm": "tokenprism.plugins.spm.spm", "bpe": "tokenprism.plugins.bpe.bpe",
              "ugm": "tokenprism.plugins.ugm.ugm", "wpm": "tokenprism.plugins.wpm.wpm"}


def loaded_after(code: str, cache: Path | None = None) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (with
    ``cache`` as TokenPrism's cache folder when given)."""
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    env = None if cache is None else {**os.environ, "TOKENPRISM_CACHE_DIR": str(cache)}
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True,
                         env=env)
    return set(json.loads(res.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("kind", sorted(ALGORITHMS))
def test_open_imports_only_the_needed_algorithm(kind: str, tmp_path: Path) -> None:
    path = RESOURCES / f"demo-{kind}.gguf"
    code = f"from tokenprism.core import open_model\nassert open_model({str(path)!r}).encode('Hello world').token_ids"
    plugins = {k: f"tokenprism.plugins.{k}.plugin" for k in ALGORITHMS}
    # the first process with an empty cache asks every plugin which file
    # types it handles (and keeps the answer in the plugin host's table) ...
    first = loaded_after(code, tmp_path)
    assert set(plugins.values()) <= first
    # ... the next one imports only the plugin this file needs
    mods = loaded_after(code, tmp_path)
    assert {plugins[k] for k in ALGORITHMS if k != kind}.isdisjoint(mods) and plugins[kind] in mods
    # and in both, only that plugin brings its algorithm
    for m in (first, mods):
        assert ALGORITHMS[kind] in m
        assert not {mod for k, mod in ALGORITHMS.items() if k != kind} & m


def test_version_imports_no_numpy_and_no_plugin() -> None:
    mods = loaded_after("import sys\nfrom tokenprism.app.cli import main\n"
                        "sys.argv = ['tokenprism', '--version']\nassert main() == 0")
    assert "numpy" not in mods
    # (the build check locates the compiled modules, importing only their
    # empty parent packages)
    assert not {m for m in mods if m.startswith("tokenprism.plugins.") and m.count(".") > 2}
    assert "tokenprism.core.model" not in mods


@pytest.mark.parametrize("kind", sorted(ALGORITHMS))
def test_tokenize_command_imports_no_numpy(kind: str) -> None:
    """``tokenprism tokenize MODEL TEXT`` on a file of each algorithm: open,
    encode and print without numpy (~65 ms of a ~100 ms command), and
    without ``dataclasses`` (the kernel's types are ``core.record``'s: the
    decorator took 6-8 ms). Checked against the ids of this process, which
    has numpy."""
    from tokenprism.core import open_model
    from tokenprism.core.frozen import NATIVE

    if not NATIVE:
        pytest.skip("the pure-Python build makes the pieces' code points with numpy")
    path = RESOURCES / f"demo-{kind}.gguf"
    text = "Hello world, héllo"
    code = ("import contextlib, io, sys\nfrom tokenprism.app.cli import main\nout = io.StringIO()\n"
            f"with contextlib.redirect_stdout(out):\n    assert main(['tokenize', {str(path)!r}, {text!r}]) == 0\n"
            "sys.stderr.write(out.getvalue())")
    probe = code + "\nimport json\nprint(json.dumps(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    mods = set(json.loads(res.stdout.strip().splitlines()[-1]))
    assert ALGORITHMS[kind] in mods
    assert not {m for m in mods if m == "numpy" or m.startswith("numpy.")}
    assert "dataclasses" not in mods
    printed = json.loads(res.stderr.strip().splitlines()[-1])
    assert printed == list(open_model(path).encode(text).token_ids) and printed


def test_build_kind_locates_without_importing() -> None:
    from tokenprism.core.build_info import HOT_MODULES, build_kind, module_status

    mods = loaded_after("from tokenprism.core.build_info import build_kind\nprint(build_kind())")
    assert not set(HOT_MODULES) & mods
    # and it agrees with importing them
    kinds = set(module_status().values()) - {"missing"}
    assert build_kind() == (kinds.pop() if len(kinds) == 1 else "mixed")


def test_core_names_resolve_lazily() -> None:
    import tokenprism.core as core
    from tokenprism.core.model import open_model

    assert core.open_model is open_model
    assert set(core.__all__) <= set(dir(core))
    with pytest.raises(AttributeError):
        core.no_such_name  # noqa: B018
    mods = loaded_after("import tokenprism.core.errors")
    assert "numpy" not in mods


@pytest.mark.parametrize("kind", sorted(ALGORITHMS))
def test_tokenize_imports_neither_the_explanation_nor_shutil(kind: str, tmp_path: Path) -> None:
    # the explanation's records (22 dataclasses, ~11 ms) load with the first
    # trace, and argparse's formatter is told the terminal's width instead
    # of importing shutil to ask
    path = RESOURCES / f"demo-{kind}.gguf"
    code = ("import contextlib, io, sys\nfrom tokenprism.app.cli import main\n"
            f"sys.argv = ['tokenprism', 'tokenize', {str(path)!r}, 'Hello', '--format', 'ids']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    assert main() == 0")
    loaded_after(code, tmp_path)  # writes the plugin host's table
    mods = loaded_after(code, tmp_path)
    assert ALGORITHMS[kind] in mods
    assert "tokenprism.core.explain" not in mods and "shutil" not in mods


def test_help_is_as_wide_as_the_terminal_says(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from tokenprism.app.cli import build_parser, terminal_columns

    for columns in ("50", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        assert terminal_columns() == int(columns)
        ours = build_parser("tokenize").commands["tokenize"]
        text = ours.format_help()
        # what argparse's own formatter (asking shutil) lays out
        ours.formatter_class = argparse.HelpFormatter
        assert text == ours.format_help() and "--parse-special" in text
    assert len(text.splitlines()) < 20
