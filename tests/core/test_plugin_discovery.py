"""Plugins are found through the ``tokenprism.plugins`` entry-point group,
exactly as a third-party package would register one: a real
``*.dist-info`` folder on ``sys.path``, read by ``importlib.metadata``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tokenprism.app.cli import main
from tokenprism.core import hookspecs, plugins

GOOD_PLUGIN = '''
from tokenprism.core.hookspecs import hookimpl
from tokenprism.core.plugin_types import TokenizerSpec


def _build(vocab):
    raise NotImplementedError


@hookimpl
def tokenprism_tokenizers():
    return [TokenizerSpec("thirdparty", ("klingon-tok",), _build, "a third-party test tokenizer")]
'''


def _install_dist(site: Path) -> None:
    """A minimal installed distribution with two entry points: a working
    plugin module and one whose module cannot be imported."""
    (site / "tp_thirdparty_plugin.py").write_text(GOOD_PLUGIN, "utf-8")
    info = site / "tp_thirdparty-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tp-thirdparty\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(
        f"[{hookspecs.ENTRY_POINT_GROUP}]\n"
        "thirdparty = tp_thirdparty_plugin\n"
        "brokenplug = tp_module_that_does_not_exist_42\n", "utf-8")


@pytest.fixture
def fresh_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    _install_dist(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    # a new manager for this test; the session's one (with the test plugin
    # registered at run time) comes back afterwards
    monkeypatch.setattr(plugins, "_manager", None)
    monkeypatch.setattr(plugins, "_failed", {})
    yield tmp_path
    sys.modules.pop("tp_thirdparty_plugin", None)


def test_third_party_plugin_is_discovered(fresh_manager: Path) -> None:
    specs = {s.name: s for s in plugins.tokenizer_specs()}
    assert "thirdparty" in specs and specs["thirdparty"].model_types == ("klingon-tok",)
    pm = plugins.plugin_manager()
    assert pm.get_plugin("thirdparty") is sys.modules["tp_thirdparty_plugin"]


def test_broken_plugin_is_reported_not_fatal(fresh_manager: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = plugins.failed_plugins()
    assert set(failed) == {"brokenplug"}
    assert failed["brokenplug"].startswith("ModuleNotFoundError") and "tp_module_that_does_not_exist_42" in \
        failed["brokenplug"]
    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[0] == "thirdparty" and "klingon-tok" in line for line in lines)
    assert any(line.split()[:4] == ["brokenplug", "FAILED", "TO", "LOAD:"] for line in lines)


def test_own_tokenizers_come_from_entry_points(fresh_manager: Path) -> None:
    pm = plugins.plugin_manager()
    names = {name for name, _ in pm.list_name_plugin()}
    assert {"spm", "bpe", "ugm", "wpm"} <= names
    for name in ("spm", "bpe", "ugm", "wpm"):
        assert pm.get_plugin(name).__name__ == f"tokenprism.plugins.{name}.plugin"
    specs = {s.name for s in plugins.tokenizer_specs()}
    assert {"spm", "bpe", "ugm", "wpm", "thirdparty"} <= specs
    # nothing but entry points registered them: this manager was built from scratch
    assert "test-chars" not in specs
