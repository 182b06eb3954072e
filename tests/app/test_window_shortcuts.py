"""Window-wide shortcuts work from every widget, filter boxes included.

Under the X11 key scheme of Linux desktops a QLineEdit claims Ctrl+E (end
of line), Ctrl+K, Ctrl+U and Ctrl+Shift+A (deselect) for itself through
``ShortcutOverride``, so Ctrl+E (Focus Editor) did nothing in a filter box
and the user typed on into the filter. The offscreen platform of the tests
uses the Windows key scheme, where QLineEdit claims none of them; the boxes
here claim keys as the X11 scheme's do (or, for the worst case, every
chord), with a real ``ShortcutOverride`` answered in ``event()``, after any
event filter, exactly where QLineEdit answers it.
"""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit

from tests.app.conftest import open_model_in, type_text

X11_CLAIMS = ("Ctrl+E", "Ctrl+K", "Ctrl+U", "Ctrl+Shift+A")


class X11LineEdit(QLineEdit):
    """A QLineEdit that claims the keys QLineEdit claims under X11."""

    claims: tuple[str, ...] = X11_CLAIMS

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ShortcutOverride and isinstance(e, QKeyEvent):
            seq = QKeySequence(e.keyCombination()).toString()
            if seq in self.claims or (self.claims == ("*",) and e.modifiers() & Qt.KeyboardModifier.ControlModifier):
                e.accept()
                return True
        return super().event(e)


class GreedyLineEdit(X11LineEdit):
    """A text box that claims every Ctrl chord (the worst case)."""

    claims = ("*",)


class ShortcutCatcher(QObject):
    """Records the actions a shortcut event reaches, without running them
    (some open modal dialogs)."""

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[QAction] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Shortcut and isinstance(watched, QAction):
            self.hits.append(watched)
            return True
        return False


def _listed_keys() -> list[str]:
    """Every key chord in the Keyboard Shortcuts list (Help menu)."""
    from tokenprism.app.qt.qt_menus import SHORTCUTS

    keys: list[str] = []
    for combo, _what in SHORTCUTS:
        for part in re.split(r" / ", combo):
            part = part.strip()
            if part.startswith(("Ctrl", "Alt", "F", "Esc")) and " " not in part:
                keys.append(part)
    return keys


def _window_actions(window, seq: QKeySequence) -> list[QAction]:  # type: ignore[no-untyped-def]
    return [a for a in window.findChildren(QAction) if a.isEnabled()
            and a.shortcutContext() != Qt.ShortcutContext.WidgetShortcut
            and any(s.matches(seq) == QKeySequence.SequenceMatch.ExactMatch for s in a.shortcuts())]


def _press(widget, text: str) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtTest import QTest

    combo = QKeySequence(text)[0]
    QTest.keyClick(widget, combo.key(), combo.keyboardModifiers())


@pytest.fixture
def x11_window(make_window, monkeypatch):  # type: ignore[no-untyped-def]
    from tokenprism.app.qt import qt_models, qt_vocab

    def make(box: type = X11LineEdit):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(qt_vocab, "QLineEdit", box)
        monkeypatch.setattr(qt_models, "QLineEdit", box)
        return make_window()

    return make


def _focus(qtbot, widget) -> None:  # type: ignore[no-untyped-def]
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)


def test_ctrl_e_in_the_vocabulary_filter_focuses_the_editor(x11_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = x11_window()
    window.vocab_dock.show()
    box = window.vocab_browser.filter
    assert isinstance(box, X11LineEdit)
    window.editor.setPlainText("")
    _focus(qtbot, box)
    type_text(box, "ab")
    _press(box, "Ctrl+E")
    qtbot.waitUntil(window.editor.hasFocus)
    type_text(QApplication.focusWidget(), "typed")
    assert box.text() == "ab"
    assert window.editor.toPlainText() == "typed"


def test_models_panel_filter_keeps_window_shortcuts(x11_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QDockWidget

    window = x11_window()
    dock = window.findChild(QDockWidget, "modelsDock")
    dock.show()
    box = dock.widget().filter
    assert isinstance(box, X11LineEdit)
    _focus(qtbot, box)
    _press(box, "Ctrl+E")
    qtbot.waitUntil(window.editor.hasFocus)


def test_ctrl_e_from_a_floating_vocabulary_dock(x11_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = x11_window()
    window.vocab_dock.show()
    window.vocab_dock.setFloating(True)
    qtbot.waitExposed(window.vocab_dock)
    box = window.vocab_browser.filter
    window.vocab_dock.activateWindow()
    _focus(qtbot, box)
    _press(box, "Ctrl+E")
    assert window.shortcut_keeper.last_reclaimed == "Ctrl+E"
    qtbot.waitUntil(window.editor.hasFocus)


@pytest.mark.parametrize("box_class", [QLineEdit, X11LineEdit, GreedyLineEdit])
def test_every_listed_shortcut_works_from_a_filter_box(x11_window, qtbot, spm_vocab, box_class) -> None:  # type: ignore[no-untyped-def]
    window = x11_window(box_class)
    open_model_in(qtbot, window, spm_vocab)
    window.vocab_dock.show()
    box = window.vocab_browser.filter
    catcher = ShortcutCatcher()
    tried = []
    for key in _listed_keys():
        seq = QKeySequence(key)
        acts = _window_actions(window, seq)
        if not acts:
            continue  # nothing to run now (e.g. F5 with nothing cancelled)
        for a in acts:
            a.installEventFilter(catcher)
        catcher.hits.clear()
        _focus(qtbot, box)
        _press(box, key)
        assert set(catcher.hits) & set(acts), f"{key} did not reach {[a.text() for a in acts]}"
        tried.append(key)
    assert {"Ctrl+E", "Ctrl+T", "Ctrl+Shift+K", "Ctrl+Shift+A", "Ctrl+1", "Ctrl+O", "Esc"} <= set(tried)


def test_a_filter_box_keeps_its_own_editing_keys(x11_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Clipboard, undo and select-all keys stay with the box that has the
    focus, even when it claims every chord and a window action has one."""
    window = x11_window(GreedyLineEdit)
    window.vocab_dock.show()
    box = window.vocab_browser.filter
    _focus(qtbot, box)
    type_text(box, "hello")
    _press(box, "Ctrl+A")
    assert box.selectedText() == "hello"
    _press(box, "Ctrl+C")
    assert QApplication.clipboard().text() == "hello"
    _press(box, "Ctrl+X")
    assert box.text() == ""
    _press(box, "Ctrl+V")
    _press(box, "Ctrl+V")
    assert box.text() == "hellohello"
    assert box.hasFocus()
