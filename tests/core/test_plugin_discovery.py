"""Plugins are found through the ``tokenprism.plugins`` entry-point group,
exactly as a third-party package would register one: a real
``*.dist-info`` folder on ``sys.path``, read by ``importlib.metadata``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Iterator

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


# ---- the entry-point table: a fresh process imports only the plugin a file needs

DEMO = Path(__file__).resolve().parents[2] / "resources"

TAKEOVER_PLUGIN = '''
from tokenprism.core.hookspecs import hookimpl
from tokenprism.core.plugin_types import TokenizerSpec
from tokenprism.plugins.spm.plugin import build


@hookimpl
def tokenprism_tokenizers():
    return [TokenizerSpec("takeover", ("llama",), build, "takes over llama files")]
'''

PROBE = '''
import json, sys
sys.path.extend(sys.argv[2:])  # last on sys.path: its plugins register last, and are asked first
from tokenprism.core import open_model
m = open_model(sys.argv[1])
print(json.dumps({"spec": m.spec.name, "ids": m.encode("Hello world").ids,
                  "metadata": "importlib.metadata" in sys.modules,
                  "plugins": sorted(n for n in sys.modules if n.startswith("tokenprism.plugins.")
                                    and n.endswith(".plugin"))}))
'''


def _probe(model: Path, cache: Path, site: Path | None = None) -> dict[str, Any]:
    import json
    import os
    import subprocess

    env = dict(os.environ, TOKENPRISM_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", PROBE, str(model), *([str(site)] if site else [])],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_second_process_imports_only_the_plugin_the_file_needs(tmp_path: Path) -> None:
    first = _probe(DEMO / "demo-wpm.gguf", tmp_path / "cache")
    # no table yet: every entry point is read and loaded, and the table written
    assert first["metadata"] is True and {"tokenprism.plugins.spm.plugin", "tokenprism.plugins.wpm.plugin"} <= \
        set(first["plugins"])
    assert len(list((tmp_path / "cache").glob("plugins-*.txt"))) == 1
    second = _probe(DEMO / "demo-wpm.gguf", tmp_path / "cache")
    assert second["spec"] == first["spec"] == "wpm" and second["ids"] == first["ids"]
    assert second["metadata"] is False and second["plugins"] == ["tokenprism.plugins.wpm.plugin"]
    third = _probe(DEMO / "demo-spm.gguf", tmp_path / "cache")
    assert third["spec"] == "spm" and third["plugins"] == ["tokenprism.plugins.spm.plugin"]


def test_a_newly_installed_plugin_takes_over_in_the_next_process(tmp_path: Path) -> None:
    cache, site = tmp_path / "cache", tmp_path / "site"
    site.mkdir()
    before = _probe(DEMO / "demo-spm.gguf", cache, site)
    assert before["spec"] == "spm"
    # installing a distribution changes its folder: the table is read again
    (site / "tp_takeover_plugin.py").write_text(TAKEOVER_PLUGIN, "utf-8")
    info = site / "tp_takeover-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tp-takeover\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(
        f"[{hookspecs.ENTRY_POINT_GROUP}]\ntakeover = tp_takeover_plugin\n", "utf-8")
    for _ in range(2):  # the rescan, then the table it wrote
        after = _probe(DEMO / "demo-spm.gguf", cache, site)
        assert after["spec"] == "takeover" and after["ids"] == before["ids"]
    assert after["metadata"] is False
    assert after["plugins"] == ["tokenprism.plugins.spm.plugin"]  # imported by the takeover plugin itself


def test_a_stale_table_falls_back_to_every_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKENPRISM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(plugins, "_manager", None)
    monkeypatch.setattr(plugins, "_failed", {})
    # a table for this very sys.path that names the wrong plugin for llama
    # and none for bert
    plugins._write_table([("wpm", "tokenprism.plugins.wpm.plugin", ("llama",))])
    assert plugins._read_table() == [("wpm", "tokenprism.plugins.wpm.plugin", ("llama",))]
    spec = plugins.spec_for_model("llama")
    assert spec is not None and spec.name == "spm"
    assert plugins.spec_for_model("no-such-type") is None
    # the full load wrote the real table back
    rows = {name: types for name, _, types in plugins._read_table() or []}
    assert rows["spm"] == ("llama",) and rows["wpm"] == ("bert",)


def test_without_a_table_the_first_lookup_loads_every_plugin(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKENPRISM_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(plugins, "_manager", None)
    monkeypatch.setattr(plugins, "_complete", None)
    monkeypatch.setattr(plugins, "_failed", {})
    spec = plugins.spec_for_model("bert")
    assert spec is not None and spec.name == "wpm"
    assert plugins._manager is plugins._complete is not None
    assert plugins.spec_for_model("no-such-type") is None
