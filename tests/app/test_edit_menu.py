"""Edit menu: Undo, Redo, Cut, Copy, Paste and Select All act on the text
editor and are enabled exactly when the editor could do them."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QTextCursor

from tests.app.conftest import type_text


def _texts(menu) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


def test_edit_menu_lists_the_editing_commands_after_file(window) -> None:  # type: ignore[no-untyped-def]
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles.index("Edit") == titles.index("File") + 1
    assert window.edit_menu is window.menus["edit"]
    texts = _texts(window.edit_menu)
    assert texts[:6] == ["Undo", "Redo", "Cut", "Copy", "Paste", "Select All"]
    shortcuts = {a.text().replace("&", ""): a.shortcut().toString() for a in window.edit_menu.actions()}
    assert shortcuts["Undo"] == "Ctrl+Z" and shortcuts["Copy"] == "Ctrl+C" and shortcuts["Select All"] == "Ctrl+A"


def test_edit_actions_follow_the_editor_and_act_on_it(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    ed = window.editor
    ed.setPlainText("")
    ed.document().clearUndoRedoStacks()
    window.edit_menu.aboutToShow.emit()
    assert not window.act_undo.isEnabled() and not window.act_redo.isEnabled()
    assert not window.act_cut.isEnabled() and not window.act_copy.isEnabled()
    assert not window.act_select_all.isEnabled()

    ed.setFocus()
    type_text(ed, "hello world")
    assert window.act_undo.isEnabled() and window.act_select_all.isEnabled()
    assert not window.act_copy.isEnabled()

    window.act_select_all.trigger()
    assert ed.textCursor().selectedText() == "hello world"
    assert window.act_copy.isEnabled() and window.act_cut.isEnabled()
    window.act_copy.trigger()
    assert QGuiApplication.clipboard().text() == "hello world"
    assert window.act_paste.isEnabled()

    c = ed.textCursor()
    c.setPosition(6)
    c.setPosition(11, QTextCursor.MoveMode.KeepAnchor)
    ed.setTextCursor(c)
    window.act_cut.trigger()
    assert ed.toPlainText() == "hello "
    assert QGuiApplication.clipboard().text() == "world"
    assert not window.act_copy.isEnabled()  # the selection went with the cut

    window.act_paste.trigger()
    window.act_paste.trigger()
    assert ed.toPlainText() == "hello worldworld"
    window.act_undo.trigger()
    assert ed.toPlainText() == "hello world"
    assert window.act_redo.isEnabled()
    window.act_redo.trigger()
    assert ed.toPlainText() == "hello worldworld"

    ed.setReadOnly(True)
    window.edit_menu.aboutToShow.emit()
    assert not window.act_paste.isEnabled()
    ed.setReadOnly(False)
    QGuiApplication.clipboard().clear()
    assert not window.act_paste.isEnabled()


def test_edit_menu_from_a_filter_box_acts_on_the_editor(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Picked from the menu while a filter box has the focus, Paste goes to
    the editor (and the editor gets the focus), never into the filter."""
    window.vocab_dock.show()
    box = window.vocab_browser.filter
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    window.editor.setPlainText("abc")
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    QGuiApplication.clipboard().setText("xyz")
    window.act_paste.trigger()
    assert window.editor.toPlainText() == "abcxyz"
    assert box.text() == ""
    assert window.editor.hasFocus()
