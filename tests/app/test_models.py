"""Opening models: errors, switching while typing, recent files, restoring
the last session, the empty state, drag and drop, and ``run_gui``."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from tests.app import apptok
from tests.app.conftest import is_current, open_model_in, type_text, wait_result
from tokenprism.app.qt import main_window as mw
from tokenprism.app.qt.settings import AppSettings


def test_corrupt_file_shows_an_error_and_keeps_the_model(qtbot, window, test_vocab, models,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    open_model_in(qtbot, window, test_vocab)
    good = window.model_info
    bad = tmp_path / "broken.gguf"
    data = Path(test_vocab).read_bytes()
    bad.write_bytes(data[:len(data) // 3])  # truncated in the middle of the vocabulary
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10_000)
    msg = window.banner.text
    assert "broken.gguf" in msg and "Still using" in msg
    assert "Traceback" not in msg
    assert window.model_info is good
    # the old model still tokenizes what is typed
    wait_result(qtbot, window, lambda: type_text(window.editor, " fox"))
    assert window.analysis.info is good
    text = window.editor.token_text()
    assert window.analysis.encoding.ids == models(test_vocab).encode(text).ids
    # a good file afterwards clears the message
    open_model_in(qtbot, window, test_vocab)
    assert not window.banner.isVisible()


def test_garbage_missing_and_unsupported_files(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file at all" * 10)
    hostile = tmp_path / "hostile.gguf"  # a key name full of control bytes
    data = Path(apptok.write_gguf(tmp_path / "tmp.gguf")).read_bytes()
    hostile.write_bytes(data.replace(b"tokenizer.ggml.tokens", b"tokenizer\x00\x1b[31m.tokens"))
    unsupported = tmp_path / "unsupported.gguf"
    apptok.write_gguf(unsupported, model_type="no-such-tokenizer")
    for path, words in ((garbage, "garbage.gguf"), (tmp_path / "missing.gguf", "missing.gguf"),
                        (unsupported, "no installed plugin"), (hostile, "hostile.gguf")):
        window.banner.hide()
        window.open_path(str(path))
        qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10_000)
        assert words in window.banner.text
        assert window.banner.text.isprintable()
        assert window.model_info is None
    assert window.stack.currentWidget() is window.empty


def test_switching_models_while_typing_never_mixes(qtbot, window, test_vocab, other_test_vocab,  # type: ignore[no-untyped-def]
                                                   models) -> None:
    open_model_in(qtbot, window, test_vocab)
    seen: list[tuple[str, str]] = []

    def check(_a: object) -> None:
        a = window.analysis
        if a is not None:  # what is on screen belongs to the window's model and its name
            assert a.info is window.model_info
            assert window.stats.model_label.toolTip().startswith(a.info.name)
            seen.append((a.info.path, a.text))
    window.live.resultReady.connect(check)
    window.editor.setFocus()
    for i, word in enumerate(["the ", "quick ", "brown ", "fox ", "jumps "]):
        type_text(window.editor, word)
        window.open_path(other_test_vocab if i % 2 == 0 else test_vocab)
        qtbot.wait(5)
    final = other_test_vocab
    open_model_in(qtbot, window, final)
    text = window.editor.token_text()
    assert window.analysis.encoding.ids == models(final).encode(text).ids
    assert window.analysis.encoding.ids[0] != apptok.BOS  # the other vocab adds no BOS
    assert window.stats.model_label.toolTip().startswith("other test vocab")
    assert seen and all(p for p, _ in seen)


def test_recent_files_and_restore(qtbot, make_window, test_vocab, other_test_vocab) -> None:  # type: ignore[no-untyped-def]
    w = make_window(restore=True)
    open_model_in(qtbot, w, test_vocab)
    open_model_in(qtbot, w, other_test_vocab)
    assert w.settings.recent_files()[:2] == [other_test_vocab, test_vocab]
    w._fill_recent_menu()
    names = [a.text() for a in w.recent_menu.actions()]
    assert any("other.gguf" in n for n in names) and any("app-test.gguf" in n for n in names)
    wait_result(qtbot, w, lambda: w.editor.setPlainText("restored text"))
    w.act_add_special.setChecked(True)
    w.tabs.setCurrentIndex(1)
    w.resize(700, 500)  # inside the 800x600 offscreen screen
    size = (w.width(), w.height())
    w.close()
    w2 = make_window(restore=True)
    assert w2.editor.token_text() == "restored text"
    assert w2.act_add_special.isChecked() and w2.tabs.currentIndex() == 1
    assert (w2.width(), w2.height()) == size == (700, 500)
    w2.start([])
    qtbot.waitUntil(lambda: w2.model_info is not None and is_current(w2), timeout=10_000)
    assert w2.model_info.path == other_test_vocab
    assert w2.analysis.encoding.token_ids[-1] == apptok.EOS  # add special restored


def test_empty_state_without_any_model(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(mw, "demo_model", lambda: None)
    window.start([])
    qtbot.wait(50)
    assert window.model_info is None
    assert window.stack.currentWidget() is window.empty
    assert window.empty.open_button.isVisible()
    assert not window.banner.isVisible()
    window.open_demo()  # asked for explicitly: a friendly note, not an error
    assert window.banner.isVisible() and "No demo model" in window.banner.text


def test_demo_model_opens_when_nothing_else(qtbot, window, test_vocab, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(mw, "demo_model", lambda: Path(test_vocab))
    window.start([])
    qtbot.waitUntil(lambda: window.model_info is not None and is_current(window), timeout=10_000)
    assert window.model_info.path == test_vocab
    assert window.stack.currentWidget() is window.splitter


def test_command_line_path_wins(qtbot, window, test_vocab, other_test_vocab) -> None:  # type: ignore[no-untyped-def]
    window.settings.last_model = test_vocab
    window.start([other_test_vocab, test_vocab])
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=10_000)
    assert window.model_info.path == other_test_vocab


def drop(widget, path: str) -> QDropEvent:  # type: ignore[no-untyped-def]
    """Drag a file onto ``widget`` and drop it (Qt delivers a drop only to
    the widget that accepted the drag)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with warnings.catch_warnings():  # the QPoint constructor is the only one PySide6 offers
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(QPoint(20, 20), *args)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    ev = QDropEvent(QPointF(20, 20), *args)
    QApplication.sendEvent(widget, ev)
    return ev


def test_dropping_a_gguf_opens_it(qtbot, window, test_vocab, other_test_vocab) -> None:  # type: ignore[no-untyped-def]
    drop(window, test_vocab)  # on the window (empty state)
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=10_000)
    assert window.model_info.path == test_vocab
    before = window.editor.token_text()
    drop(window.editor.viewport(), other_test_vocab)  # on the editor: opened, not pasted
    qtbot.waitUntil(lambda: window.model_info.path == other_test_vocab, timeout=10_000)
    assert window.editor.token_text() == before


def test_run_gui_starts_and_quits(qtbot, test_vocab, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    started: list[mw.TokenPrismWindow] = []

    def fake_loop(app: QApplication) -> int:
        # a local loop instead of app.exec(): quitting the application would
        # leave Qt's quit flag set and stop every later test's event loop
        wins = [w for w in app.topLevelWidgets() if isinstance(w, mw.TokenPrismWindow)
                 and w.isVisible() and w not in before]
        assert len(wins) == 1
        started.append(wins[0])
        qtbot.waitUntil(lambda: wins[0].analysis is not None, timeout=10_000)
        return 0

    before = set(QApplication.topLevelWidgets())

    monkeypatch.setattr(mw, "_run_event_loop", fake_loop)
    assert mw.run_gui([test_vocab]) == 0
    w = started[0]
    assert w.model_info is not None and w.model_info.path == test_vocab
    assert not QApplication.windowIcon().isNull()
    w.close()  # saves settings into the redirected location, never the user's
    s = AppSettings()
    assert s.q.format() == QSettings.Format.IniFormat
    assert s.last_model == test_vocab
    w.deleteLater()


def test_a_failing_tokenizer_shows_a_message(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    model = window.model_info.model
    real_encode = model.encode

    def broken(text: str, *args: object, **kwargs: object) -> object:
        if "boom" in text:
            raise RuntimeError("plugin bug")
        return real_encode(text, *args, **kwargs)  # type: ignore[arg-type]
    model.encode = broken
    window.editor.setPlainText("boom")
    qtbot.waitUntil(window.banner.isVisible, timeout=10_000)
    assert "tokenizer failed" in window.banner.text and "plugin bug" in window.banner.text
    # the window keeps working once the text tokenizes again
    wait_result(qtbot, window, lambda: window.editor.setPlainText("the fox"))
    assert window.analysis.text == "the fox"
    assert not window.banner.isVisible()


def test_loading_shows_a_busy_indicator_until_done(qtbot, window, spm_vocab, test_vocab,  # type: ignore[no-untyped-def]
                                                   monkeypatch) -> None:
    """A (deliberately slowed) load shows the busy bar and a "Loading …"
    label while it runs, and both go away when it ends."""
    import threading

    from tokenprism.app.qt import workers

    open_model_in(qtbot, window, test_vocab)
    stats = window.stats
    assert not stats.busy.isVisible()
    release = threading.Event()
    started = threading.Event()
    real_open = workers.open_model

    def slow_open(path: str):  # type: ignore[no-untyped-def]
        started.set()
        assert release.wait(20), "the test never released the load"
        return real_open(path)

    monkeypatch.setattr(workers, "open_model", slow_open)
    window.open_path(spm_vocab)
    qtbot.waitUntil(started.is_set, timeout=10_000)
    qtbot.wait(100)  # the event loop runs while the load waits
    assert window.loader.busy
    assert stats.busy.isVisible() and stats.busy.maximum() == 0  # an indeterminate bar
    assert stats.busy_label.isVisible() and stats.busy_label.text() == f"Loading {os.path.basename(spm_vocab)}…"
    with qtbot.waitSignal(window.loader.loaded, timeout=20_000):
        release.set()
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    assert window.model_info.path == os.path.abspath(spm_vocab)
    assert not window.loader.busy
    assert not stats.busy.isVisible() and stats.busy_label.text() == ""
