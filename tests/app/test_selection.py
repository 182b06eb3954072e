"""Selection linked between the editor, the table and the chips; tooltips."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from tests.app.conftest import open_model_in, wait_result
from tokenprism.app.qt.qt_chips import wrap_rows


def setup_text(qtbot, window, path: str, text: str):  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, path)
    return wait_result(qtbot, window, lambda: window.editor.setPlainText(text))


def move_cursor(window, pos: int) -> None:  # type: ignore[no-untyped-def]
    c = window.editor.textCursor()
    c.setPosition(pos)
    window.editor.setTextCursor(c)


def test_cursor_selects_the_token_in_table_and_chips(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    text = "the quick fox"
    a = setup_text(qtbot, window, test_vocab, text)
    move_cursor(window, text.index("quick") + 2)
    i = a.encoding.token_at(text.index("quick"))
    assert window.table.currentIndex().row() == i
    assert window.table.selected_range() == (i, i + 1)
    assert window.chips.current_tokens == (i, i + 1)
    assert window.editor.current_tokens == (i, i + 1)
    # the cursor right after the last token still names it
    move_cursor(window, len(text))
    assert window.table.selected_range() == (len(a) - 1, len(a))


def test_cursor_on_a_byte_group_selects_all_its_rows(qtbot, window, spm_vocab) -> None:  # type: ignore[no-untyped-def]
    text = "a 🙂 b"
    a = setup_text(qtbot, window, spm_vocab, text)
    move_cursor(window, 2)  # just before the emoji
    first, last = window.table.selected_range()
    assert last - first == 4
    assert all(a.encoding.groups[r] == first for r in range(first, last))


def test_clicking_a_row_selects_its_text(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    text = "hello world and the dog"
    a = setup_text(qtbot, window, test_vocab, text)
    enc = a.encoding
    row = enc.token_at(text.index("the"))
    table = window.table
    rect = table.visualRect(table.model().index(row, 2))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    c = window.editor.textCursor()
    assert c.selectedText() == text[enc.starts[row]:enc.ends[row]]
    assert window.chips.current_tokens == (row, row + 1)
    assert table.currentIndex().row() == row  # no echo back from the editor
    # keyboard: Down moves to the next token and the editor follows
    qtbot.keyClick(table, Qt.Key.Key_Down)
    c = window.editor.textCursor()
    assert c.selectedText() == text[enc.starts[row + 1]:enc.ends[row + 1]]


def test_selecting_a_group_row_selects_the_whole_character(qtbot, window, spm_vocab) -> None:  # type: ignore[no-untyped-def]
    text = "x 🙂 y"
    a = setup_text(qtbot, window, spm_vocab, text)
    k = a.span_at(2)
    first = int(a.span_first[k])
    window.table.selectRow(first + 2)
    assert window.editor.textCursor().selectedText() == "🙂"
    assert window.table.selected_range() == (first, first + 4)


def test_clicking_a_chip_selects_its_text(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    text = "the fox jumps over the lazy dog"
    a = setup_text(qtbot, window, test_vocab, text)
    window.tabs.setCurrentWidget(window.chips)
    chips = window.chips
    qtbot.waitUntil(lambda: chips.row_count > 0)
    i = a.encoding.token_at(text.index("jumps"))
    pt = chips.chip_rect(i).center().toPoint()
    assert chips.index_at(pt) == i
    qtbot.mouseClick(chips.viewport(), Qt.MouseButton.LeftButton, pos=pt)
    assert window.editor.textCursor().selectedText() == text[a.encoding.starts[i]:a.encoding.ends[i]]
    assert window.table.selected_range() == (i, i + 1)
    qtbot.keyClick(chips, Qt.Key.Key_Right)
    assert chips.current_tokens == (i + 1, i + 2)
    assert window.table.selected_range() == (i + 1, i + 2)
    grab = chips.grab()
    assert not grab.isNull()


def test_chip_wrap_rows() -> None:
    widths = np.array([10.0, 10, 10, 10, 50, 10])
    breaks = np.array([False, True, False, False, False, False])
    rows, xs = wrap_rows(widths, breaks, avail=35, gap=2)
    assert rows.tolist() == [0, 2, 4, 5, 6]  # forced break after 1, too wide at 4
    assert xs.tolist() == [0, 12, 0, 12, 0, 0]


def test_editor_tooltip_describes_the_token(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    text = "hello world"
    a = setup_text(qtbot, window, test_vocab, text)
    ed = window.editor
    c = ed.textCursor()
    c.setPosition(text.index("world") + 2)
    pt = ed.cursorRect(c).center()
    i = a.encoding.token_at(text.index("world"))
    assert ed.tokens_at_point(pt) == (i, i + 1)
    ev = QHelpEvent(QEvent.Type.ToolTip, pt, ed.viewport().mapToGlobal(pt))
    QApplication.sendEvent(ed.viewport(), ev)
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    tip = QToolTip.text()
    tid = a.encoding.token_ids[i]
    assert f"<b>id {tid}</b>" in tip and "▁world" in tip and "77 6F 72 6C 64" in tip
    QToolTip.hideText()
    # far below the text there is no token
    assert ed.tokens_at_point(QPoint(5, ed.viewport().height() - 5)) is None


def test_bos_marker_has_a_tooltip(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    window.act_add_special.setChecked(True)
    a = setup_text(qtbot, window, test_vocab, "the fox")
    assert a.encoding.token_ids[0] == 1
    ed = window.editor
    c = ed.textCursor()
    c.movePosition(QTextCursor.MoveOperation.Start)
    r = ed.cursorRect(c)
    assert ed.tokens_at_point(QPoint(r.x(), r.center().y())) == (0, 1)
    # clicking the BOS row puts the cursor at its place
    window.table.selectRow(0)
    assert window.editor.textCursor().position() == 0
    assert window.editor.current_tokens == (0, 1)
