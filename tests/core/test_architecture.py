"""Rules the architecture relies on, checked rather than hoped for."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokenprism.core.build_info import HOT_MODULES, module_status


def test_core_and_plugins_never_import_qt() -> None:
    # a fresh interpreter where any PySide6 import fails loudly
    code = r"""
import sys, importlib, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'PyQt5', 'PyQt6'):
            raise ImportError('Qt imported by ' + name)
sys.meta_path.insert(0, Block())
import tokenprism.core
from tokenprism.core.plugins import tokenizer_specs, failed_plugins
tokenizer_specs()
assert not failed_plugins(), failed_plugins()
import pkgutil, tokenprism.plugins
for m in pkgutil.walk_packages(tokenprism.plugins.__path__, 'tokenprism.plugins.'):
    importlib.import_module(m.name)
print('ok')
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def test_nothing_installs_top_level_core_app_or_plugins(tmp_path: object) -> None:
    # a fresh interpreter outside the repo: only the installed layout counts
    code = ("import importlib.util as u; import tokenprism.core; "
            "print([n for n in ('core', 'app', 'plugins') if u.find_spec(n)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(tmp_path), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def compiled_problems(status: dict[str, str]) -> list[str]:
    """What keeps ``status`` (from ``module_status``) from being a complete
    compiled build: a hot module imported from .py, or one that is missing."""
    return [f"{m}: {s}" for m, s in status.items() if s != "compiled"] + \
        [f"{m}: not checked" for m in HOT_MODULES if m not in status]


def setup_compiled_list() -> list[str]:
    """setup.py's COMPILED list, read without running setup()."""
    tree = ast.parse((Path(__file__).resolve().parents[2] / "setup.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMPILED"
                                                for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(v) for v in value]
    raise AssertionError("setup.py has no COMPILED list")


def test_hot_modules_are_what_setup_compiles() -> None:
    as_modules = ["tokenprism." + m.removesuffix(".py").replace("/", ".") for m in setup_compiled_list()]
    assert as_modules == list(HOT_MODULES)


def test_a_missing_or_pure_module_fails_the_compiled_check() -> None:
    complete = {m: "compiled" for m in HOT_MODULES}
    assert compiled_problems(complete) == []
    for bad in ("missing", "pure"):
        status = dict(complete, **{HOT_MODULES[3]: bad})
        assert compiled_problems(status) == [f"{HOT_MODULES[3]}: {bad}"]
    partial = dict(complete)
    del partial[HOT_MODULES[0]]
    assert compiled_problems(partial) == [f"{HOT_MODULES[0]}: not checked"]


@pytest.mark.skipif(os.environ.get("TOKENPRISM_EXPECT_COMPILED") != "1",
                    reason="set TOKENPRISM_EXPECT_COMPILED=1 to require the mypyc build (CI does)")
def test_hot_modules_are_compiled() -> None:
    problems = compiled_problems(module_status())
    assert not problems, f"a compiled build was expected: {problems}"
