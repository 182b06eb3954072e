"""The Normalized tab of a UGM model: what the model sees, with tokens linked
back to the ORIGINAL characters in the editor (the normalizer changes
lengths: ``ﬁ`` → ``fi``, ``①`` → ``1``, ``Ａ`` → ``A``)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from tests.app.conftest import demo_vocab, open_model_in, wait_result

TEXT = "ﬁne ① ＡＢ"


@pytest.fixture
def ugm(qtbot: Any, window: Any) -> Any:
    path = demo_vocab("ugm")
    if path is None:
        pytest.skip("the UGM demo model (or its plugin) is not installed")
    open_model_in(qtbot, window, path)
    window.tabs.setCurrentWidget(window.normalized)  # the normalized text is made while it shows
    return wait_result(qtbot, window, lambda: window.editor.setPlainText(TEXT))


def view_point(view: Any, pos: int) -> QPoint:
    c = view.text.textCursor()
    c.setPosition(pos)
    r = view.text.cursorRect(c)
    return QPoint(r.x() + 3, r.center().y())


def test_tab_shows_the_normalized_text(qtbot: Any, window: Any, ugm: Any) -> None:
    view = window.normalized
    tabs = window.tabs
    assert tabs.isTabVisible(tabs.indexOf(view))
    model = ugm.model
    assert view.text.toPlainText() == model.normalized(TEXT)
    # "ﬁ" (one character) is seen as "fi": the texts differ in length
    assert "fi" in view.text.toPlainText() and "ﬁ" not in view.text.toPlainText()
    assert len(view.text.toPlainText()) != len(TEXT)
    # it follows the editor (computed with the tokens, in the worker)
    wait_result(qtbot, window, lambda: window.editor.setPlainText("①②"))
    assert view.text.toPlainText() == model.normalized("①②")
    # made only while the tab shows: switching to it later tokenizes again with it
    tabs.setCurrentWidget(window.table)
    wait_result(qtbot, window, lambda: window.editor.setPlainText("ＡＢ"))
    assert "normalized" not in window.analysis.extra
    wait_result(qtbot, window, lambda: tabs.setCurrentWidget(view))
    assert view.text.toPlainText() == model.normalized("ＡＢ") == "▁AB"


def test_hover_and_click_find_the_original_characters(qtbot: Any, window: Any, ugm: Any) -> None:
    view = window.normalized
    window.tabs.setCurrentWidget(view)
    qtbot.waitExposed(view.text)
    enc = ugm.encoding
    norm = view.text.toPlainText()
    ed = window.editor
    for original, seen in (("ﬁ", "f"), ("①", "1"), ("Ｂ", "B")):
        at = norm.index(seen, 1)
        rng = view.token_at(at)
        assert rng is not None
        first, last = rng
        # the token's piece in the normalized text holds what the model saw
        n = view.normalized
        assert seen in norm[int(n.tok_start16[first]):int(n.tok_start16[last])]
        # hovering boxes the original character in the editor
        pt = view_point(view, at)
        ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(pt), QPointF(view.text.viewport().mapToGlobal(pt)),
                         Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(view.text.viewport(), ev)
        assert ed.current_tokens == (first, last)
        s16, e16 = ugm.range16(first, last)
        assert original in TEXT[s16:e16]  # (TEXT is all BMP: UTF-16 positions are str indices)
        # clicking it selects those original characters
        qtbot.mouseClick(view.text.viewport(), Qt.MouseButton.LeftButton, pos=pt)
        sel = ed.textCursor().selectedText()
        assert sel == TEXT[min(enc.starts[first:last]):max(enc.ends[first:last])] and original in sel
        assert sorted({i.row() for i in window.table.selectionModel().selectedRows()}) == list(range(first, last))
    # moving the editor cursor selects the token's piece in the normalized view
    c = ed.textCursor()
    c.setPosition(TEXT.index("①"))
    ed.setTextCursor(c)
    assert view.text.textCursor().selectedText() == norm[int(view.normalized.tok_start16[view.token_at(norm.index("1"))[0]]):
                                                         int(view.normalized.tok_start16[view.token_at(norm.index("1"))[1]])]


def test_tab_hidden_for_models_that_do_not_normalize(qtbot: Any, window: Any, ugm: Any) -> None:
    path = demo_vocab("bpe")
    if path is None:
        pytest.skip("the BPE demo model (or its plugin) is not installed")
    tabs = window.tabs
    assert tabs.currentWidget() is window.normalized
    open_model_in(qtbot, window, path)
    assert not window.model_info.model.config.normalizes
    assert not tabs.isTabVisible(tabs.indexOf(window.normalized))
    assert tabs.currentWidget() is not window.normalized
    assert window.normalized.text.toPlainText() == ""
