"""Huge edits go into the editor a slice at a time (``app/qt/qt_slicer.py``):
a paste, a drop, or a huge selection deleted, cut or typed over. The
event loop runs between slices, and the document ends exactly as Qt's own
single edit leaves it, with one undo step that restores the text before
it and a redo that brings it back; then the tokens are those of the whole
new text. The sizes are shrunk by monkeypatching so the tests stay quick;
slices of an odd size end inside "\\r\\n" pairs, surrogate pairs and lines.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest
from PySide6.QtCore import QEvent, QMimeData, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from tests.app.conftest import is_current, open_model_in, type_text
from tokenprism.app.qt import qt_slicer

LINE = "Sliced edits keep the window alive, ça va? 東京 🙂\r\n"
BEFORE = LINE * 300 + "one long line " + "🙂x" * 10_000 + "\n" + LINE * 300
"""Many lines, "\\r\\n" breaks and one 30 K-unit line of surrogate pairs."""


@pytest.fixture
def small_slices(monkeypatch: Any) -> None:
    monkeypatch.setattr(qt_slicer, "SLICED_MIN", 5_000)
    monkeypatch.setattr(qt_slicer, "SLICE", 1_001)


def _select(editor: QPlainTextEdit, start: int, end: int) -> None:
    c = editor.textCursor()
    c.setPosition(start)
    c.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(c)


def _reference(start: int, end: int, action: Callable[[QPlainTextEdit], None]) -> QPlainTextEdit:
    """What Qt's own single edit makes of the same document and selection."""
    ref = QPlainTextEdit()
    ref.setPlainText(BEFORE)
    _select(ref, start, end)
    action(ref)
    return ref


def _run_sliced(qtbot: Any, window: Any, start: int, end: int, action: Callable[[], None]) -> list[float]:
    """Select ``[start, end)`` of ``BEFORE`` in the window's editor, run
    ``action`` from the event loop, wait for the slicer; the heartbeats."""
    editor = window.editor
    editor.setPlainText(BEFORE)
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    _select(editor, start, end)
    editor.setFocus()
    beats: list[float] = []
    heart = QTimer()
    heart.timeout.connect(lambda: beats.append(time.perf_counter()))
    heart.start(1)
    started: list[bool] = []

    def go() -> None:
        action()
        started.append(editor.slicer.busy)
        assert editor.isReadOnly()  # nothing else edits the half-built text

    QTimer.singleShot(0, go)
    qtbot.waitUntil(lambda: bool(started) and not editor.slicer.busy, timeout=30_000)
    heart.stop()
    assert started == [True]
    assert not editor.isReadOnly()
    return beats


def _check_result(qtbot: Any, window: Any, ref: QPlainTextEdit) -> None:
    editor = window.editor
    want = ref.toPlainText()
    assert editor.toPlainText() == want
    assert editor.textCursor().position() == ref.textCursor().position()
    assert editor.document().blockCount() == ref.document().blockCount()
    qtbot.waitUntil(lambda: is_current(window) and window.analysis is not None
                    and window.analysis.text == editor.token_text(), timeout=30_000)
    assert window.analysis.encoding.token_ids == window.model_info.model.encode(editor.token_text()).token_ids
    editor.undo()  # one step back to the text before
    assert editor.toPlainText() == _reference(0, 0, lambda r: None).toPlainText()
    editor.redo()
    assert editor.toPlainText() == want


def _key(editor: QPlainTextEdit, key: Qt.Key, text: str = "",
         mods: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(editor, QKeyEvent(kind, key, mods, text))


def test_huge_paste_over_a_selection(qtbot: Any, window: Any, test_vocab: str, small_slices: None) -> None:
    open_model_in(qtbot, window, test_vocab)
    pasted = "Pasted: 🙂 ünïcode\r\nand lines\n" * 400
    QGuiApplication.clipboard().setText(pasted)
    start, end = 1000, 8_000  # inside a line, removing many: itself a huge removal
    beats = _run_sliced(qtbot, window, start, end, window.editor.paste)
    assert len(beats) >= 3  # the event loop ran between the slices
    _check_result(qtbot, window, _reference(start, end, lambda r: r.paste()))


def test_huge_drop_of_text(qtbot: Any, window: Any, test_vocab: str, small_slices: None) -> None:
    open_model_in(qtbot, window, test_vocab)
    mime = QMimeData()
    mime.setText("dropped text 🙂\n" * 600)
    beats = _run_sliced(qtbot, window, 500, 500, lambda: window.editor.insertFromMimeData(mime))
    assert len(beats) >= 3
    _check_result(qtbot, window, _reference(500, 500, lambda r: r.insertPlainText(mime.text())))


@pytest.mark.parametrize("how", ["delete", "backspace", "cut", "type"])
def test_huge_selection_deleted_cut_or_typed_over(qtbot: Any, window: Any, test_vocab: str, small_slices: None,
                                                  how: str) -> None:
    open_model_in(qtbot, window, test_vocab)
    # from inside the first lines to inside the long line of surrogate pairs
    start, end = 7_777, len(LINE) * 300 + 10_001
    editor = window.editor
    keys: dict[str, Callable[[], None]] = {
        "delete": lambda: _key(editor, Qt.Key.Key_Delete),
        "backspace": lambda: _key(editor, Qt.Key.Key_Backspace),
        "cut": lambda: _key(editor, Qt.Key.Key_X, "\x18", Qt.KeyboardModifier.ControlModifier),
        "type": lambda: type_text(editor, "q"),
    }
    if how == "cut" and QKeySequence(QKeySequence.StandardKey.Cut).toString() != "Ctrl+X":
        pytest.skip("this platform's Cut key is not Ctrl+X")
    plain = _reference(start, end, lambda r: None)  # (held: a cursor does not keep its editor alive)
    selected = plain.textCursor().selection().toPlainText()
    QGuiApplication.clipboard().setText("")
    beats = _run_sliced(qtbot, window, start, end, keys[how])
    assert len(beats) >= 3
    _check_result(qtbot, window, _reference(start, end, lambda r: r.insertPlainText("q" if how == "type" else "")))
    if how == "cut":
        assert QGuiApplication.clipboard().text() == selected


def test_a_file_opened_during_a_huge_paste_replaces_it(qtbot: Any, window: Any, test_vocab: str,
                                                       small_slices: None, tmp_path: Any) -> None:
    open_model_in(qtbot, window, test_vocab)
    editor = window.editor
    QGuiApplication.clipboard().setText("never all in " * 5_000)
    p = tmp_path / "small.txt"
    p.write_text("the file wins\n", encoding="utf-8")
    editor.setPlainText("x")
    editor.document().setModified(False)
    editor.paste()
    assert editor.slicer.busy
    qtbot.wait(5)
    window.text_files.open_path(str(p), confirmed=True)
    assert not editor.slicer.busy and not editor.isReadOnly()
    assert editor.toPlainText() == "the file wins\n"
    qtbot.waitUntil(lambda: is_current(window) and window.analysis is not None
                    and window.analysis.text == "the file wins\n", timeout=20_000)


def test_small_edits_stay_qt_s_own(qtbot: Any, window: Any, test_vocab: str) -> None:
    editor = window.editor
    editor.setPlainText("abc def")
    _select(editor, 1, 5)
    QGuiApplication.clipboard().setText("XY")
    editor.paste()
    assert not editor.slicer.busy and editor.toPlainText() == "aXYef"
    _select(editor, 0, 2)
    _key(editor, Qt.Key.Key_Delete)
    assert not editor.slicer.busy and editor.toPlainText() == "Yef"
