"""The third-party plugin example (examples/tokenprism-byt5) works when
installed as a user would install it: pip builds and installs the package,
its entry point makes ``tokenprism plugins`` list it, the CLI tokenizes its
demo file and the app opens that file and shows the tokens.

pip runs offline (``--no-index``, ``--no-build-isolation``: setuptools
comes from this environment) into a folder put on ``PYTHONPATH``; that
folder holds the package and its ``.dist-info`` exactly as a venv's
site-packages would, which is all entry-point discovery reads.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.app.conftest import open_model_in, wait_result
from tokenprism.app.logic.analysis import Style
from tokenprism.core import GGUFError, open_model
from tokenprism.core import plugins

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tokenprism-byt5"
TEXT = "Grüße, 世界! 🙂 ok"
PAD, EOS, UNK = 0, 1, 2


def byt5_ids(text: str) -> list[int]:
    """Google's ByT5 ids, independently of the plugin: UTF-8 byte + 3."""
    return [b + 3 for b in text.encode("utf-8")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example pip-installed into a fresh folder."""
    work = tmp_path_factory.mktemp("byt5")
    src = work / "src"
    # a copy, so the build leaves no build/ or .egg-info in the checkout
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(target), str(src)],
                   check=True, timeout=180, capture_output=True)
    assert (target / "tokenprism_byt5" / "plugin.py").is_file()
    return target


def cli(site: Path | None, *args: str) -> str:
    """``tokenprism ARGS`` in a new interpreter, with the example installed
    (``site``) or not (None); its standard output."""
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if site is not None:
        paths.insert(0, str(site))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    done = subprocess.run([sys.executable, "-m", "tokenprism.app", *args], env=env, cwd=site or None,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def demo_file(site: Path) -> Path:
    """The demo vocabulary, written by the example's own script."""
    path = site.parent / "byt5-demo.gguf"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-m", "tokenprism_byt5.demo", str(path)], env=env, check=True,
                   capture_output=True, timeout=120)
    return path


def test_plugins_lists_the_example_once_installed(site: Path) -> None:
    def byt5_lines(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.split()[:1] == ["byt5"]]

    assert byt5_lines(cli(None, "plugins")) == []
    lines = byt5_lines(cli(site, "plugins"))
    assert len(lines) == 1 and lines[0].split()[1] == "byt5" and "byte" in lines[0]
    assert "FAILED" not in cli(site, "plugins")


def test_cli_tokenizes_the_demo_file(site: Path, demo_file: Path) -> None:
    assert json.loads(cli(site, "tokenize", str(demo_file), "héllo")) == byt5_ids("héllo") == \
        [107, 198, 172, 111, 111, 114]
    # ByT5 appends </s>, and nothing goes before the text
    assert json.loads(cli(site, "tokenize", str(demo_file), TEXT, "--add-special")) == byt5_ids(TEXT) + [EOS]
    info = cli(site, "info", str(demo_file))
    assert "byt5 (BYT5, plugin byt5)" in info and "vocab size:    259" in info
    # the bytes of each character decode back to it
    assert cli(site, "decode", str(demo_file), *map(str, byt5_ids(TEXT))).splitlines()[-1] == TEXT


@pytest.fixture
def byt5_plugin(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """This process's plugin host made afresh with the example on
    ``sys.path``: found through its entry point like the built-in plugins
    (the session's host, with the run-time test plugins, comes back after)."""
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setattr(plugins, "_manager", None)
    monkeypatch.setattr(plugins, "_failed", {})
    yield importlib.import_module("tokenprism_byt5.demo")
    for name in [m for m in sys.modules if m == "tokenprism_byt5" or m.startswith("tokenprism_byt5.")]:
        del sys.modules[name]


def test_app_opens_a_byt5_model(byt5_plugin: Any, qtbot: Any, window: Any, tmp_path: Path) -> None:
    path = byt5_plugin.write_demo_gguf(tmp_path / "byt5.gguf")
    assert plugins.failed_plugins() == {}
    open_model_in(qtbot, window, path)
    assert window.model_info.kind == "BYT5"
    a = wait_result(qtbot, window, lambda: window.editor.setPlainText(TEXT))
    assert list(a.ids) == byt5_ids(TEXT)
    # one span per character: a printable ASCII byte is a token of its own,
    # the bytes of any other character one group, drawn as byte fallback
    assert len(a.span_start16) == len(TEXT)
    for k, ch in enumerate(TEXT):
        assert a.span_last[k] - a.span_first[k] == len(ch.encode("utf-8"))
        assert a.span_style[k] == (Style.NORMAL if ch.isascii() else Style.BYTES), ch
    assert a.stats.tokens == len(TEXT.encode("utf-8"))
    assert a.stats.byte_fallback == sum(len(ch.encode("utf-8")) for ch in TEXT if not ch.isascii())
    # pieces read as the file has them
    model = window.model_info.model
    assert [model.display_piece(int(t)) for t in a.ids[:4]] == ["G", "r", "<0xC3>", "<0xBC>"]


def test_a_vocabulary_missing_a_byte_is_refused(byt5_plugin: Any, tmp_path: Path) -> None:
    import gguf

    pieces, types = byt5_plugin.demo_tokens()
    w = gguf.GGUFWriter(str(tmp_path / "short.gguf"), "t5")
    w.add_tokenizer_model("byt5")
    w.add_token_list(pieces[:-1])  # no <0xFF>
    w.add_token_types(types[:-1])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(GGUFError, match="byt5.*<0xFF>"):
        open_model(tmp_path / "short.gguf")
