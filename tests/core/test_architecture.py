"""Rules the architecture relies on, checked rather than hoped for."""

from __future__ import annotations

import os
import subprocess
import sys

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


@pytest.mark.skipif(os.environ.get("TOKENPRISM_EXPECT_COMPILED") != "1",
                    reason="set TOKENPRISM_EXPECT_COMPILED=1 to require the mypyc build (CI does)")
def test_hot_modules_are_compiled() -> None:
    status = module_status()
    pure = [m for m, s in status.items() if s == "pure"]
    assert not pure, f"imported from .py although a compiled build was expected: {pure}"
    assert all(status[m] == "compiled" for m in HOT_MODULES if status[m] != "missing")
