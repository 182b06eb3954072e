"""Fixtures for the desktop-app tests: isolated settings, test vocabularies
(real reference ones when present, else the bundled demo models, and the
run-time test plugin only as a last resort), a window, and helpers to type
and to wait for tokens."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import tokenprism.app.qt.qt_compat  # noqa: F401  (before any Qt call; see there)
from PySide6.QtCore import QEvent, QSettings, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

from tests.app import apptok
from tests.refdata import VOCAB_DIR
from tokenprism.core import Model, TokenPrismError, open_model

RESULT_TIMEOUT_MS = 20_000


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point every QSettings of the app at a fresh folder (never the user's)."""
    folder = tmp_path_factory.mktemp("qsettings")
    for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))
    yield folder


@pytest.fixture(scope="session")
def test_vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A GGUF handled by the run-time test plugin (kind "TEST")."""
    apptok.register()
    return str(apptok.write_gguf(tmp_path_factory.mktemp("apptok") / "app-test.gguf"))


@pytest.fixture(scope="session")
def other_test_vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A second test model (no BOS) to switch to."""
    apptok.register()
    return str(apptok.write_gguf(tmp_path_factory.mktemp("apptok2") / "other.gguf",
                                 name="other test vocab", add_bos=False))


def real_vocab(name: str) -> str | None:
    """``ggml-vocab-<name>.gguf`` if it exists and an installed plugin opens it."""
    if VOCAB_DIR is None:
        return None
    path = os.path.join(VOCAB_DIR, f"ggml-vocab-{name}.gguf")
    if not os.path.exists(path):
        return None
    try:
        open_model(path)
    except TokenPrismError:
        return None
    return path


def demo_vocab(kind: str) -> str | None:
    """The bundled demo model of tokenizer type ``kind`` if it is there and opens."""
    from tokenprism.core.library.resources import demo_models

    path = demo_models().get(kind)
    if path is None or not os.path.exists(path):
        return None
    try:
        open_model(str(path))
    except TokenPrismError:
        return None
    return str(path)


@pytest.fixture(scope="session")
def spm_vocab(test_vocab: str) -> str:
    """A real SPM model with byte fallback: llama-spm from the reference
    vocabularies, else the bundled SPM demo model; the run-time test vocab
    only when neither opens (no SPM plugin installed)."""
    return real_vocab("llama-spm") or demo_vocab("spm") or test_vocab


@pytest.fixture(scope="session")
def models() -> Callable[[str], Model]:
    cache: dict[str, Model] = {}

    def get(path: str) -> Model:
        if path not in cache:
            cache[path] = open_model(path)
        return cache[path]

    return get


@pytest.fixture
def make_window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """``make_window(restore=False)`` builds a shown window with its own settings file."""
    from tokenprism.app.qt.main_window import TokenPrismWindow
    from tokenprism.app.qt.settings import AppSettings

    made: list[TokenPrismWindow] = []
    ini = str(tmp_path / "tokenprism.ini")

    def make(restore: bool = False) -> TokenPrismWindow:
        w = TokenPrismWindow(AppSettings(QSettings(ini, QSettings.Format.IniFormat)), restore=restore)
        qtbot.addWidget(w)
        if not restore:
            w.resize(1100, 700)
        w.show()
        qtbot.waitExposed(w)
        made.append(w)
        return w

    yield make
    for w in made:
        w.shutdown()


@pytest.fixture
def window(make_window):  # type: ignore[no-untyped-def]
    return make_window()


def wait_result(qtbot, window, action: Callable[[], object], timeout: int = RESULT_TIMEOUT_MS):  # type: ignore[no-untyped-def]
    """Run ``action`` and wait until the window shows tokens of the
    editor's current text; returns the shown analysis."""
    action()
    qtbot.waitUntil(lambda: is_current(window), timeout=timeout)
    return window.analysis


def is_current(window) -> bool:  # type: ignore[no-untyped-def]
    a = window.analysis
    return (a is not None and not window.live.busy and not window.editor.stale
            and a.info is window.model_info and a.generation == window.live.generation
            and a.text == window.editor.token_text())


def open_model_in(qtbot, window, path: str):  # type: ignore[no-untyped-def]
    """Open ``path`` in ``window`` and wait for its first tokens."""
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        window.open_path(path)
    assert window.model_info is not None and window.model_info.path == os.path.abspath(path)
    qtbot.waitUntil(lambda: is_current(window), timeout=RESULT_TIMEOUT_MS)
    return window.analysis


def type_text(widget: QWidget, text: str) -> None:
    """Type ``text`` key by key. ``qtbot.keyClicks`` cannot send non-ASCII
    characters, so each character is one KeyPress/KeyRelease pair with the
    character as the event text."""
    target = widget
    for ch in text:
        if ch == "\n":
            key, t = Qt.Key.Key_Return, "\r"
        elif ch == "\t":
            key, t = Qt.Key.Key_Tab, "\t"
        else:
            key, t = Qt.Key.Key_unknown, ch
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(target, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, t))


def hold_inside(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Make the worker wait at its first progress report from inside the
    text (``0 < done < total``) until the returned event is set. A test
    that cancels sets it after the click or key: the job is then always
    still running when the cancel arrives, however fast tokenizing is or
    however loaded the machine (without it the job could end between the
    first report and the click, and nothing would be left to cancel)."""
    from tokenprism.app.qt import workers

    released = threading.Event()
    real_tokenize = workers.tokenize

    def gated(*args: Any) -> Any:
        *rest, report = args

        def gated_report(done: int, total: int) -> bool:
            if report(done, total) and 0 < done < total and not released.is_set():
                released.wait(30)
            return bool(report(done, total))

        return real_tokenize(*rest, gated_report)

    monkeypatch.setattr(workers, "tokenize", gated)
    return released
