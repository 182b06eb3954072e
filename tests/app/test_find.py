"""Edit ▸ Find (Ctrl+F, F3, Shift+F3) and Go to Token (Ctrl+G): the Qt-free
logic (app/logic/text_find.py) and the bar and dialog (app/qt/qt_find.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog

from tests.app.conftest import open_model_in, type_text, wait_result
from tokenprism.app.qt import qt_find
from tokenprism.app.logic.text_find import (GotoTarget, find_all, indexed, match_at, next_match, parse_goto,
                                      resolve_goto)

# ---- the logic, without Qt ---------------------------------------------------------------


def test_find_all_counts_utf16_and_folds_case() -> None:
    text = "Hi 🙂 hello, HELLO and hellO"
    # the emoji counts two UTF-16 units, as the editor's positions do
    assert find_all(text, "hello") == [(6, 11), (13, 18), (23, 28)]
    assert find_all(text, "hello", case_sensitive=True) == [(6, 11)]
    assert find_all(text, "🙂") == [(3, 5)]
    assert find_all(text, "") == [] and find_all(text, "absent") == []
    assert find_all("a.b axb", ".") == [(1, 2)]  # literal text, not a pattern
    assert find_all("aaaa", "aa") == [(0, 2), (2, 4)]


def test_next_and_previous_wrap_around() -> None:
    m = indexed([(2, 4), (10, 12), (20, 22)])
    assert next_match(m, 0, 0) == (0, False)  # from the cursor
    assert next_match(m, 2, 2) == (0, False)  # a cursor at a match's start finds it
    assert next_match(m, 2, 4) == (1, False)  # a selected match moves on
    assert next_match(m, 20, 22) == (0, True)  # past the last: the first, wrapped
    assert next_match(m, 10, 12, backward=True) == (0, False)
    assert next_match(m, 2, 4, backward=True) == (2, True)
    assert next_match([], 0, 0) == (-1, False)
    assert match_at(m, 10, 12) == 1 and match_at(m, 10, 11) == -1
    plain = [(2, 4), (10, 12)]  # a plain list works too
    assert next_match(plain, 3, 3) == (1, False) and match_at(plain, 2, 4) == 0


def test_goto_queries() -> None:
    for q in ("#12", " 12 ", "token 12", "Token #12", "index 12"):
        assert parse_goto(q) == GotoTarget(False, 12), q
    for q in ("id 450", "ID:450", "id=450", "id450", "id #450"):
        assert parse_goto(q) == GotoTarget(True, 450), q
    for q in ("", "#", "id", "-3", "#1.5", "hello", "id x"):
        with pytest.raises(ValueError, match="#N"):
            parse_goto(q)
    ids = np.array([5, 9, 5, 7, 5], dtype=np.int32)
    assert resolve_goto(GotoTarget(False, 3), ids, 100) == 3
    with pytest.raises(ValueError, match="no token #5.*5 tokens"):
        resolve_goto(GotoTarget(False, 5), ids, 100)
    # an id steps through its tokens after the current one, then wraps
    assert [resolve_goto(GotoTarget(True, 5), ids, 100, after) for after in (-1, 0, 2, 4)] == [0, 2, 4, 0]
    with pytest.raises(ValueError, match="not among"):
        resolve_goto(GotoTarget(True, 8), ids, 100)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        resolve_goto(GotoTarget(True, 100), ids, 100)


# ---- the window ---------------------------------------------------------------------------

TEXT = "Hello world 🙂 hello\nhello again, HELLO"


def _press(widget: Any, key: Any, mods: Any = Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(widget, key, mods)


def _controller(window: Any) -> Any:
    c = window.editor.findChild(qt_find.FindController)
    assert c is not None
    return c


def _selected(window: Any) -> str:
    return str(window.editor.textCursor().selectedText())


def test_find_bar(qtbot: Any, window: Any, test_vocab: str) -> None:
    open_model_in(qtbot, window, test_vocab)
    ed = window.editor
    wait_result(qtbot, window, lambda: ed.setPlainText(TEXT))
    bar = _controller(window).bar
    assert not bar.isVisible()
    # Edit menu lists the commands with their keys
    texts = [a.text() for a in window.edit_menu.actions()]
    assert "&Find…" in texts and "&Go to Token…" in texts
    _press(ed, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible() and bar.edit.hasFocus()
    type_text(bar.edit, "hello")
    # as you type: the first match from the cursor (at the start)
    c = ed.textCursor()
    assert (c.selectionStart(), c.selectionEnd()) == (0, 5) and bar.count.text() == "1 of 4"
    _press(bar.edit, Qt.Key.Key_Return)
    # past the emoji: UTF-16 positions (🙂 counts two)
    assert (ed.textCursor().selectionStart(), _selected(window)) == (15, "hello")
    assert bar.count.text() == "2 of 4"
    _press(bar.edit, Qt.Key.Key_F3)
    _press(bar.edit, Qt.Key.Key_F3)
    assert bar.count.text() == "4 of 4" and _selected(window) == "HELLO"
    _press(bar.edit, Qt.Key.Key_F3)  # wraps round to the first
    assert bar.count.text() == "1 of 4 (wrapped)" and ed.textCursor().selectionStart() == 0
    _press(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # back round to the last
    assert bar.count.text() == "4 of 4 (wrapped)"
    _press(bar.edit, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count.text() == "3 of 4"
    # match case
    bar.case.setChecked(True)
    assert bar.count.text() == "2 of 2" and _selected(window) == "hello" and ed.textCursor().selectionStart() == 21
    bar.case.setChecked(False)
    bar.edit.setFocus()
    QTest.keyClicks(bar.edit, "x")
    assert bar.count.text() == "No matches"
    bar.edit.selectAll()
    type_text(bar.edit, "again")
    assert _selected(window) == "again" and bar.count.text() == "1 of 1", (ed.token_text(), bar.edit.text())
    # the text changes under the bar: counted again
    c = ed.textCursor()
    c.movePosition(c.MoveOperation.End)
    c.insertText(" again")
    assert bar.count.text().endswith("2 matches") or bar.count.text().startswith("1 of 2")
    window.grab().save("/tmp/shots/find_bar.png")
    # Esc closes the bar; the editor has the focus again
    bar.edit.setFocus()
    _press(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible() and ed.hasFocus()
    # F3 from the editor goes on with the last search, bar closed or not
    c = ed.textCursor()
    c.setPosition(0)
    ed.setTextCursor(c)
    _press(ed, Qt.Key.Key_F3)
    assert _selected(window) == "again" and ed.textCursor().selectionStart() == 27
    # Ctrl+F with a selection searches for it
    c = ed.textCursor()
    c.setPosition(6)
    c.setPosition(11, c.MoveMode.KeepAnchor)
    ed.setTextCursor(c)
    _press(ed, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.edit.text() == "world" and bar.count.text() == "1 of 1"


def test_go_to_token(qtbot: Any, window: Any, test_vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    open_model_in(qtbot, window, test_vocab)
    ed = window.editor
    a = wait_result(qtbot, window, lambda: ed.setPlainText(TEXT))
    ctl = _controller(window)
    n = len(a)
    k = n // 2
    first, last = a.token_range(k)
    # Ctrl+G: the dialog (answered here) names a token by its position
    asked: list[str] = []

    def answer(_parent: Any, check: Any, last_query: str) -> str | None:
        asked.append(last_query)
        q = answers.pop(0)
        assert check(q) is None
        return q

    answers = [f"#{k}"]
    monkeypatch.setattr(qt_find, "ask_goto", answer)
    _press(ed, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert asked == [""]
    rows = sorted({i.row() for i in window.table.selectionModel().selectedRows()})
    assert rows == list(range(first, last))
    s, e = a.range16(first, last)
    c = ed.textCursor()
    assert (c.selectionStart(), c.selectionEnd()) == (s, e) and ed.current_tokens == (first, last)
    # by id: the next token with that id after the current one, round again
    tid = int(a.ids[k])
    where = [int(i) for i in np.flatnonzero(a.ids == tid)]
    seen = []
    for _ in range(len(where) + 1):
        assert ctl.go_to(f"id {tid}") is None
        seen.append(ed.current_tokens[0])
    starts = [a.token_range(i)[0] for i in where]
    assert sorted(set(seen)) == sorted(set(starts)) and seen[-1] == seen[0 if len(where) == 1 else -1 - len(where)]
    # the dialog starts with the last query
    answers.append("#0")
    ctl.goto_dialog()
    assert asked[-1] == f"id {tid}" and window.table.selectionModel().isRowSelected(0)
    # wrong queries are said in words, nothing moves
    before = ed.current_tokens
    assert "no token #" in (ctl.go_to(f"#{n}") or "")
    assert "not in the vocabulary" in (ctl.go_to(f"id {len(a.model)}") or "")
    assert "#N" in (ctl.go_to("hello") or "")
    assert ed.current_tokens == before


def test_goto_dialog_keeps_a_wrong_query(qtbot: Any) -> None:
    def check(q: str) -> str | None:
        return None if q == "#1" else "There is no token #9."

    dlg = qt_find.QGotoDialog(None, check, "#9")
    qtbot.addWidget(dlg)
    dlg.show()
    assert dlg.edit.text() == "#9"
    dlg.buttons.button(dlg.buttons.StandardButton.Ok).click()
    assert dlg.isVisible() and dlg.result() != QDialog.DialogCode.Accepted and "no token" in dlg.error.text()
    dlg.edit.setText("#1")
    assert dlg.error.text() == ""
    dlg.buttons.button(dlg.buttons.StandardButton.Ok).click()
    assert dlg.result() == QDialog.DialogCode.Accepted and dlg.query == "#1"


def test_find_keys_are_window_wide(qtbot: Any, window: Any, test_vocab: str) -> None:
    """Ctrl+F and Ctrl+G reach the window from the token table too."""
    open_model_in(qtbot, window, test_vocab)
    ctl = _controller(window)
    for act, key in ((ctl.act_find, "Ctrl+F"), (ctl.act_goto, "Ctrl+G"), (ctl.act_find_next, "F3"),
                     (ctl.act_find_prev, "Shift+F3")):
        assert act.shortcuts() == [QKeySequence(key)]  # (the desktop's FindNext may be Ctrl+G)
        assert act.shortcutContext() == Qt.ShortcutContext.WindowShortcut
    window.table.setFocus()
    _press(window.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert ctl.bar.isVisible() and ctl.bar.edit.hasFocus()


def test_find_in_a_big_text_waits_for_a_pause(qtbot: Any, window: Any, test_vocab: str) -> None:
    """Above BIG_TEXT the search runs once typing pauses, and edits are
    counted again then, not at every keystroke."""
    open_model_in(qtbot, window, test_vocab)
    ed = window.editor
    text = "needle in a haystack. " * (qt_find.BIG_TEXT // 20)
    wait_result(qtbot, window, lambda: ed.setPlainText(text), timeout=60_000)
    c = ed.textCursor()
    c.setPosition(0)
    ed.setTextCursor(c)
    bar = _controller(window).bar
    bar.open_bar()
    type_text(bar.edit, "needle")
    assert bar.count.text() == ""  # not yet: still typing
    total = text.count("needle")
    qtbot.waitUntil(lambda: bar.count.text() == f"1 of {total:,}", timeout=5_000)
    assert _selected(window) == "needle"
    c = ed.textCursor()
    c.movePosition(c.MoveOperation.End)
    c.insertText("needle")
    assert bar.count.text() == f"1 of {total:,}"
    qtbot.waitUntil(lambda: bar.count.text() == f"1 of {total + 1:,}", timeout=5_000)
