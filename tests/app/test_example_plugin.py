"""The third-party plugin example (examples/tokenprism-byt5) works when
installed as a user would install it: pip builds and installs the package,
its entry point makes ``tokenprism plugins`` list it, the CLI tokenizes its
demo file and the app opens that file and shows the tokens.

pip runs offline (``--no-index``, ``--no-build-isolation``: setuptools
comes from this environment) into a new venv whose site-packages also
reads this environment's (a ``.pth`` file), so TokenPrism and its
dependencies need no second install; the CLI runs on that venv's
interpreter. The in-process window test puts the venv's site-packages on
``sys.path``, which is all entry-point discovery reads.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Venv:
    python: Path
    site: Path


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh venv with the example pip-installed into it."""
    work = tmp_path_factory.mktemp("byt5")
    src = work / "src"
    # a copy, so the build leaves no build/ or .egg-info in the checkout
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    root = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    # this environment's packages (TokenPrism's editable install included:
    # addsitedir runs its .pth finder too) behind the venv's own
    ours = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    (site / "_tokenprism_dev.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in ours) + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", "--no-build-isolation", str(src)],
                   check=True, timeout=180, capture_output=True)
    assert (site / "tokenprism_byt5" / "plugin.py").is_file()
    return Venv(python, site)


@pytest.fixture(scope="module")
def site(venv: Venv) -> Path:
    return venv.site


def cli(venv: Venv | None, *args: str) -> str:
    """``tokenprism ARGS`` in a new interpreter: the venv's, with the example
    installed, or this environment's (None); its standard output."""
    python = str(venv.python) if venv is not None else sys.executable
    done = subprocess.run([python, "-m", "tokenprism.app", *args], cwd=venv.site if venv else None,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def demo_file(venv: Venv) -> Path:
    """The demo vocabulary, written by the example's own script in the venv."""
    path = venv.site.parent / "byt5-demo.gguf"
    subprocess.run([str(venv.python), "-m", "tokenprism_byt5.demo", str(path)], check=True,
                   capture_output=True, timeout=120)
    return path


def test_plugins_lists_the_example_once_installed(venv: Venv) -> None:
    def byt5_lines(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.split()[:1] == ["byt5"]]

    assert byt5_lines(cli(None, "plugins")) == []
    lines = byt5_lines(cli(venv, "plugins"))
    assert len(lines) == 1 and lines[0].split()[1] == "byt5" and "byte" in lines[0]
    assert "FAILED" not in cli(venv, "plugins")


def test_cli_tokenizes_the_demo_file(venv: Venv, demo_file: Path) -> None:
    assert json.loads(cli(venv, "tokenize", str(demo_file), "héllo")) == byt5_ids("héllo") == \
        [107, 198, 172, 111, 111, 114]
    # ByT5 appends </s>, and nothing goes before the text
    assert json.loads(cli(venv, "tokenize", str(demo_file), TEXT, "--add-special")) == byt5_ids(TEXT) + [EOS]
    info = cli(venv, "info", str(demo_file))
    assert "byt5 (BYT5, plugin byt5)" in info and "vocab size:    259" in info
    # the bytes of each character decode back to it
    assert cli(venv, "decode", str(demo_file), *map(str, byt5_ids(TEXT))).splitlines()[-1] == TEXT


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
