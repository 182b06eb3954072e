"""A keystroke repaints the edited lines of the editor, not its whole
viewport, and what is on screen afterwards is what a full repaint draws.

(Qt reports a block restyled with ``setFormats`` as reaching into the next
blocks, which repaints everything; a transparent overlay updated in full on
every ``updateRequest`` did the same. ``benchmarks/bench_latency.py``
measures the keystroke → repaint time.)
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QGuiApplication, QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import QApplication

from tests.app.conftest import is_current, open_model_in, type_text
from tests.app.test_big_paste import big_text
from tokenprism.app.qt import workers


class PaintRegions(QObject):
    """Areas (in pixels) of a widget's paint events."""

    def __init__(self, widget: Any) -> None:
        super().__init__()
        self.areas: list[int] = []
        widget.installEventFilter(self)

    def eventFilter(self, obj: Any, event: Any) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.areas.append(sum(r.width() * r.height() for r in event.region()))
        return False


def on_screen(window: Any) -> QImage:
    """The editor's viewport as the window's backing store holds it (not
    a fresh rendering, as ``grab()`` would make)."""
    vp = window.editor.viewport()
    top_left = vp.mapTo(window, vp.rect().topLeft())
    screen = QGuiApplication.primaryScreen()
    return screen.grabWindow(window.winId(), top_left.x(), top_left.y(), vp.width(), vp.height()).toImage()


def _typing_in_the_middle(qtbot: Any, window: Any, vocab: str, size: int) -> Any:
    """The window's editor with a tokenized text of ``size`` bytes, the
    cursor in its middle, focused, and no caret (it would blink into the
    pictures)."""
    open_model_in(qtbot, window, vocab)
    ed = window.editor
    ed.setCursorWidth(0)
    text = big_text(size)
    ed.setPlainText(text)
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    c = ed.textCursor()
    c.setPosition(len(text) // 2)
    ed.setTextCursor(c)
    ed.setFocus()
    return ed


def test_typing_repaints_only_the_edited_lines(qtbot: Any, window: Any, spm_vocab: str) -> None:
    ed = _typing_in_the_middle(qtbot, window, spm_vocab, 20_000)
    ed.centerCursor()
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    qtbot.wait(100)
    vp = ed.viewport()
    paints = PaintRegions(vp)
    type_text(ed, "q")  # (the first keystroke may show the busy indicator: the window's layout changes)
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    qtbot.wait(60)
    largest: list[int] = []
    for word in ("ab", " x", "日本", "yz", "c", "d"):
        paints.areas.clear()
        type_text(ed, word)
        qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
        qtbot.wait(60)
        assert paints.areas, "nothing repainted"
        largest.append(max(paints.areas))
    # the edited line, the box around the token at the cursor, the line
    # above (a token may hold its line break); and every line below when
    # the edited line got taller (日本 in a fallback font) and moved them
    small = [n for n in largest if n < vp.width() * vp.height() // 3]
    assert len(small) >= len(largest) - 1, (largest, vp.width() * vp.height())
    # what the partial repaints left on screen is what a full repaint draws
    shown = on_screen(window)
    vp.repaint()
    full = on_screen(window)
    assert not full.isNull() and full.width() == vp.width()
    assert len({full.pixel(x, y) for x in range(0, full.width(), 5) for y in range(0, full.height(), 5)}) > 3
    assert shown == full


def test_inline_results_leave_the_same_screen(qtbot: Any, window: Any, spm_vocab: str, monkeypatch: Any) -> None:
    """A short text retokenizes inline, inside the key's own edit (Qt then
    reports the restyled blocks with the edit): the screen still ends up
    as a full repaint draws it. (The budgets are raised so that a slow
    machine, which would send the jobs to the worker, runs them inline too.)"""
    monkeypatch.setattr(workers, "INLINE_BUDGET_MS", 1000.0)
    monkeypatch.setattr(workers, "INLINE_WORST_MS", 1000.0)
    ed = _typing_in_the_middle(qtbot, window, spm_vocab, 4_000)
    vp = ed.viewport()
    paints = PaintRegions(vp)
    type_text(ed, "q")
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    qtbot.wait(60)
    small: list[bool] = []
    for word in ("ab", " x", "日本", "\nyz", "c", "d"):
        paints.areas.clear()
        jobs = window.live.inline_jobs
        type_text(ed, word)
        qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
        qtbot.wait(60)
        assert window.live.inline_jobs > jobs
        if word in ("ab", " x", "c", "d"):  # (the others add a line, or a taller one)
            small.append(bool(paints.areas) and max(paints.areas) < vp.width() * vp.height() // 3)
    # the edit's own report narrowed to the restyled line: before, an
    # inline result widened it and every keystroke repainted everything
    assert all(small), (small, paints.areas)
    shown = on_screen(window)
    ed.viewport().repaint()
    assert shown == on_screen(window)


def table_on_screen(window: Any) -> QImage:
    """The token table's viewport as the window's backing store holds it."""
    vp = window.table.viewport()
    top_left = vp.mapTo(window, vp.rect().topLeft())
    screen = QGuiApplication.primaryScreen()
    return screen.grabWindow(window.winId(), top_left.x(), top_left.y(), vp.width(), vp.height()).toImage()


def _press(widget: Any, key: Qt.Key) -> None:
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, ""))


def test_typing_repaints_only_the_changed_rows_of_the_table(qtbot: Any, window: Any, spm_vocab: str) -> None:
    """Every row after an edit changes (its character span moves) and a new
    word adds rows, but on screen only the rows at the cursor's token
    changed: the table repaints those, and the screen still ends up as a
    full repaint draws it."""
    ed = _typing_in_the_middle(qtbot, window, spm_vocab, 20_000)
    tv = window.table.viewport()
    type_text(ed, "q")
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    qtbot.wait(60)
    paints = PaintRegions(tv)
    largest: list[int] = []
    counts = [len(window.analysis)]
    for word in ("ab", " x", "日本", " yz", ".\n", "c", " d"):
        paints.areas.clear()
        type_text(ed, word)
        qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
        qtbot.wait(60)
        counts.append(len(window.analysis))
        assert paints.areas, "the table did not repaint"
        largest.append(max(paints.areas))
    assert len(set(counts)) > 3, counts  # rows were inserted, not only changed
    assert max(largest) < tv.width() * tv.height() // 3, (largest, tv.width() * tv.height())
    shown = table_on_screen(window)
    tv.repaint()
    full = table_on_screen(window)
    assert len({full.pixel(x, y) for x in range(0, full.width(), 5) for y in range(0, full.height(), 5)}) > 3
    assert shown == full


def _editing_at_the_end(qtbot: Any, window: Any, vocab: str, text: str) -> Any:
    """The window's editor showing ``text``'s tokens, the cursor at its end, focused, no caret."""
    open_model_in(qtbot, window, vocab)
    ed = window.editor
    ed.setCursorWidth(0)
    ed.setPlainText(text)
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    ed.moveCursor(QTextCursor.MoveOperation.End)
    ed.setFocus()
    return ed


@pytest.mark.parametrize("long", [True, False], ids=["table-at-its-end", "short-table"])
def test_rows_removed_at_the_end_of_the_table_leave_nothing_behind(qtbot: Any, window: Any, spm_vocab: str,
                                                                   long: bool) -> None:
    """Deleting at the end of the text takes rows off the end of the table:
    a long table scrolled to its last rows scrolls back, a short one (room
    below its last row) leaves space. The screen matches a full repaint
    after every step."""
    ed = _editing_at_the_end(qtbot, window, spm_vocab, big_text(6_000) if long else "short text with a few words")
    tv = window.table.viewport()
    if long:
        bar = window.table.verticalScrollBar()
        type_text(ed, " one two three four")
        qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
        qtbot.wait(60)
        assert bar.value() == bar.maximum() > 0
    else:
        assert window.table.rowAt(tv.height() - 1) < 0  # room below the last row
    n = len(window.analysis)
    for step in range(14):
        _press(ed, Qt.Key.Key_Backspace)
        qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
        qtbot.wait(30)
        shown = table_on_screen(window)
        tv.repaint()
        assert shown == table_on_screen(window), f"after backspace {step + 1}"
    assert len(window.analysis) <= n - 2  # (rows left the table)
